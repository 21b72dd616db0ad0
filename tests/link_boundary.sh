#!/bin/sh
# The link boundary between the daemon and the CRIU side (issue 14): the CRIU plugin and the
# action script link the manifest library (gw::manifest), the system helpers and the control
# client, and nothing of the daemon's model, decoder, hook planning or control server. This
# reads their symbol tables: any such symbol fails the test, and so does a binary whose table
# shows no gw::manifest symbol at all (stripped: the check would prove nothing).
#   usage: link_boundary.sh BINARY...
set -u
forbidden='gw::Model[:( ]|gw::ModelOps|gw::drm::|gw::control::Registration|gw::HookPlan|gw::plan_hooks|gw::BackgroundJob'
rc=0
for bin in "$@"; do
	if [ ! -f "$bin" ]; then
		echo "FAIL $bin: not built"
		rc=1
		continue
	fi
	syms=$(nm -C "$bin" 2>/dev/null)
	ours=$(printf '%s\n' "$syms" | grep -c 'gw::manifest::')
	bad=$(printf '%s\n' "$syms" | grep -E "$forbidden")
	if [ "$ours" -eq 0 ]; then
		echo "FAIL $bin: no gw::manifest symbol in its table (stripped?): nothing proven"
		rc=1
	elif [ -n "$bad" ]; then
		echo "FAIL $bin: links daemon internals:"
		printf '%s\n' "$bad" | head -n 20
		rc=1
	else
		echo "ok $bin: $ours gw::manifest symbols, none of the model, decoder, hooks or control server"
	fi
done
exit $rc
