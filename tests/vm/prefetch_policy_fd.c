// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_policy_fd - KVM_SET/GET_PREFETCH_POLICY from another process.
 *
 * A child creates a VM (auto, nr_pages 8, gup nofault) and waits; the
 * parent takes a copy of its VM fd with pidfd_getfd(), as an operator's
 * tool does with a running VMM, and on that copy:
 *  - GET reports the child's policy, SET changes it (the VM's debugfs
 *    line follows), and a bad SET fails with the ioctl's own errno
 *    (EINVAL, ENOENT), not EIO;
 *  - every other VM ioctl still fails with EIO: KVM_CHECK_EXTENSION,
 *    KVM_CREATE_VCPU, KVM_GET_STATS_FD (the caller is not the VM's own
 *    process);
 *  - after the child has exited, the copy keeps the VM: GET and SET
 *    still work, and closing it destroys the VM (its debugfs directory
 *    goes away).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kvmtest.h"
#include "kt_sys.h"

/* The child: a VM with policy auto 8 nofault; its fd to @wfd; waits. */
static void child_vmm(int wfd)
{
	struct kt_vm *vm = kt_vm_create();

	KT_ASSERT(!ktsys_set_policy(vm->fd, "auto", 8,
				    KVM_PREFETCH_GUP_NOFAULT),
		  "child: KVM_SET_PREFETCH_POLICY auto 8 nofault");
	if (write(wfd, &vm->fd, sizeof(vm->fd)) != sizeof(vm->fd))
		_exit(125);
	for (;;)
		pause();
}

/* The debugfs line of the child's VM, "?" if it cannot be read. */
static void vm_debugfs_policy(const char *dir, char *buf, size_t len)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/prefetch_policy", dir);
	if (ktsys_read_line(path, buf, len))
		snprintf(buf, len, "?");
}

/* @ioctl on @fd fails with EIO. */
static void expect_eio(int fd, unsigned long ioctl_nr, unsigned long arg,
		       const char *name)
{
	int r = ioctl(fd, ioctl_nr, arg);

	KT_EXPECT(r < 0 && errno == EIO,
		  "%s on the taken fd: %d, errno %s (want EIO)", name, r,
		  r < 0 ? strerror(errno) : "none");
	if (r >= 0 && ioctl_nr != KVM_CHECK_EXTENSION)
		close(r);
}

static void expect_set(int fd, const char *name, uint32_t nr, uint32_t gup,
		       int want, const char *what)
{
	int r = ktsys_set_policy(fd, name, nr, gup);

	KT_EXPECT(r == want, "%s: SET %s %u %s from the other process: %s (want %s)",
		  what, name, nr, ktsys_gup_str(gup), strerror(-r),
		  strerror(-want));
}

static void expect_get(int fd, const char *want, const char *what)
{
	struct kvm_prefetch_policy p;
	char got[64] = "?";
	int r = ktsys_get_policy(fd, &p);

	if (!r)
		ktsys_policy_str(&p, got, sizeof(got));
	KT_EXPECT(!r && !strcmp(got, want),
		  "%s: GET from the other process: %s '%s' (want '%s')", what,
		  strerror(-r), got, want);
}

int main(void)
{
	char dir[256], line[64];
	int pipefd[2], vmfd, pidfd, fd, st;
	struct stat sb;
	pid_t pid;

	ktsys_start_ours(120);

	KT_ASSERT(!pipe(pipefd), "pipe");
	fflush(stdout);
	pid = fork();
	KT_ASSERT(pid >= 0, "fork");
	if (!pid) {
		close(pipefd[0]);
		child_vmm(pipefd[1]);
	}
	close(pipefd[1]);
	KT_ASSERT(read(pipefd[0], &vmfd, sizeof(vmfd)) == sizeof(vmfd),
		  "the child created its VM");
	snprintf(dir, sizeof(dir), KTSYS_DEBUGFS_KVM "/%d-%d", (int)pid, vmfd);

	pidfd = syscall(SYS_pidfd_open, pid, 0);
	KT_ASSERT(pidfd >= 0, "pidfd_open: %s", strerror(errno));
	fd = syscall(SYS_pidfd_getfd, pidfd, vmfd, 0);
	KT_ASSERT(fd >= 0, "pidfd_getfd: %s", strerror(errno));
	close(pidfd);

	expect_get(fd, "auto nr_pages=8 gup=nofault", "child running");
	expect_set(fd, "none", 4, KVM_PREFETCH_GUP_FAST_ONLY, 0,
		   "child running");
	vm_debugfs_policy(dir, line, sizeof(line));
	KT_EXPECT(!strcmp(line, "none nr_pages=4 gup=fast"),
		  "the VM's debugfs line follows: '%s'", line);
	expect_get(fd, "none nr_pages=4 gup=fast", "after SET");
	expect_set(fd, "nosuch", 4, 0, -ENOENT, "unknown policy");
	expect_set(fd, "none", KVM_PREFETCH_MAX_PAGES + 1, 0, -EINVAL,
		   "window too large");
	expect_get(fd, "none nr_pages=4 gup=fast", "after the bad SETs");

	expect_eio(fd, KVM_CHECK_EXTENSION, KVM_CAP_USER_MEMORY,
		   "KVM_CHECK_EXTENSION");
	expect_eio(fd, KVM_CREATE_VCPU, 0, "KVM_CREATE_VCPU");
	expect_eio(fd, KVM_GET_STATS_FD, 0, "KVM_GET_STATS_FD");

	kill(pid, SIGKILL);
	KT_ASSERT(waitpid(pid, &st, 0) == pid, "the child exited");
	expect_get(fd, "none nr_pages=4 gup=fast", "child gone");
	expect_set(fd, "auto", 16, KVM_PREFETCH_GUP_NOFAULT, 0, "child gone");
	expect_get(fd, "auto nr_pages=16 gup=nofault", "child gone, after SET");
	KT_EXPECT(!stat(dir, &sb), "the taken fd keeps the VM (%s)", dir);
	close(fd);
	KT_EXPECT(stat(dir, &sb) && errno == ENOENT,
		  "closing the last fd destroys the VM (%s gone)", dir);

	KT_EXPECT(ktsys_restore() == 0, "kvm-reload ours");
	return kt_exit();
}
