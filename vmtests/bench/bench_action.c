// The action script of the VM bench's fixed-cost control (vmtests/bench/guest.sh, kind "floor"):
// does nothing. Linked statically, as gpuwatch's own action script is: a dynamically linked
// no-op (/bin/true, which the control ran before) spent 45-51 ms per run in the dynamic loader
// under TCG against 5-8 ms for a static one, so the control counted as the floor of any design
// 40 ms per action that a static action script does not pay. Not part of gpuwatch.
int main(void)
{
	return 0;
}
