/* SPDX-License-Identifier: MIT */
/*
 * A denying device policy for the VM scenario criu_devdeny: attaches bpf/devdeny.bpf.c (a
 * cgroup device program, the kind container runtimes install: every access to the character
 * devices of MAJOR refused, open and mknod alike; everything else allowed) to a cgroup v2
 * directory as a bpf link, prints "attached" once the policy is in force, and holds it until
 * stdin reaches EOF or it is killed; the kernel then detaches it.
 *
 *   gw_devdeny CGROUP_DIR MAJOR
 *
 * Exit: 0 after EOF on stdin, 1 on an error (one line on stderr).
 */
#include "devdeny.skel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: gw_devdeny CGROUP_DIR MAJOR\n");
		return 1;
	}
	char *end;
	long major = strtol(argv[2], &end, 10);
	if (*end || end == argv[2] || major < 0 || major > 4095) {
		fprintf(stderr, "gw_devdeny: bad major '%s'\n", argv[2]);
		return 1;
	}
	int cg = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0) {
		fprintf(stderr, "gw_devdeny: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	struct devdeny_bpf *skel = devdeny_bpf__open();
	if (!skel) {
		fprintf(stderr, "gw_devdeny: cannot open the program: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->deny_major = (__u32)major;
	int err = devdeny_bpf__load(skel);
	if (err) {
		fprintf(stderr, "gw_devdeny: cannot load the program: %s\n", strerror(-err));
		return 1;
	}
	struct bpf_link *link = bpf_program__attach_cgroup(skel->progs.deny_one_major, cg);
	if (!link) {
		fprintf(stderr, "gw_devdeny: cannot attach to %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	char c;
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	bpf_link__destroy(link);
	devdeny_bpf__destroy(skel);
	return 0;
}
