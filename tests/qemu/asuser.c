// SPDX-License-Identifier: GPL-2.0
/*
 * asuser - run a command as another uid and gid, with no supplementary
 * groups (the test VM's busybox setpriv cannot change ids, and its su
 * needs a passwd file).
 *
 *   asuser UID GID COMMAND [ARGS]...
 */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uid_t uid;
	gid_t gid;

	if (argc < 4) {
		fprintf(stderr, "usage: asuser UID GID COMMAND [ARGS]...\n");
		return 125;
	}
	uid = strtoul(argv[1], NULL, 0);
	gid = strtoul(argv[2], NULL, 0);
	if (setgroups(0, NULL) || setgid(gid) || setuid(uid)) {
		perror("asuser");
		return 125;
	}
	if (getuid() != uid || geteuid() != uid) {
		fprintf(stderr, "asuser: still uid %d\n", (int)geteuid());
		return 125;
	}
	execvp(argv[3], argv + 3);
	perror(argv[3]);
	return 127;
}
