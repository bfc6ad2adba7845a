// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_policy_fd - KVM_SET/GET_PREFETCH_POLICY obey KVM's owner rule.
 *
 * kvm_vm_ioctl() takes VM ioctls only from the process that created the
 * VM (kvm->mm == current->mm); the prefetch ioctls are no exception.  A
 * child creates a VM (auto, nr_pages 8, gup nofault) and waits; then
 * every other holder of its VM fd gets EIO from GET and SET, and the
 * VM's policy stays as it was:
 *  - the parent, with a copy taken by pidfd_getfd() (as an operator's
 *    tool with ptrace rights could);
 *  - the parent, with a copy received over a unix socket (SCM_RIGHTS);
 *  - a fork child of the VMM, with the fd it inherited;
 *  - the other VM ioctls (KVM_CHECK_EXTENSION, KVM_CREATE_VCPU,
 *    KVM_GET_STATS_FD) from the copy, as before.
 * Another thread of the VMM is the VMM: its SET works and the debugfs
 * line follows.  After the VMM has exited, the copy keeps the VM (GET and
 * SET still EIO), and closing it destroys the VM.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kvmtest.h"
#include "kt_sys.h"

/* What the VMM child reports: its VM fd, then the results of its tests. */
struct pfd_report {
	int vmfd;
	int fork_get;		/* GET from a fork child: 0 or -errno */
	int fork_set;		/* SET from a fork child */
	int thread_set;		/* SET from another thread of the VMM */
};

static int pfd_vmfd;

static void *pfd_thread(void *arg)
{
	*(int *)arg = ktsys_set_policy(pfd_vmfd, "none", 4,
				       KVM_PREFETCH_GUP_FAST_ONLY);
	return NULL;
}

/* Send @fd over unix socket @sock. */
static void pfd_send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'f';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sock, &msg, 0) != 1)
		_exit(124);
}

static int pfd_recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * The VMM: a VM with policy auto 8 nofault; a fork child tries GET and
 * SET on the inherited fd; the fd goes over @sock; then, when the parent
 * says so on @crd, another thread sets none 4 fast.  Reports on @wfd.
 */
/* No unix sockets here: @sock of child_vmm() is a pipe. */
static bool pfd_nosock;

static void child_vmm(int wfd, int crd, int sock)
{
	struct kt_vm *vm = kt_vm_create();
	struct pfd_report rep = { .vmfd = vm->fd };
	int res[2], pipefd[2], st;
	pthread_t t;
	pid_t pid;
	char c;

	KT_ASSERT(!ktsys_set_policy(vm->fd, "auto", 8,
				    KVM_PREFETCH_GUP_NOFAULT),
		  "child: KVM_SET_PREFETCH_POLICY auto 8 nofault");
	pfd_vmfd = vm->fd;

	if (pipe(pipefd))
		_exit(125);
	pid = fork();
	if (!pid) {
		struct kvm_prefetch_policy p;

		res[0] = ktsys_get_policy(vm->fd, &p);
		res[1] = ktsys_set_policy(vm->fd, "none", 4,
					  KVM_PREFETCH_GUP_FAST_ONLY);
		_exit(write(pipefd[1], res, sizeof(res)) == sizeof(res) ?
		      0 : 1);
	}
	if (pid < 0 || read(pipefd[0], res, sizeof(res)) != sizeof(res) ||
	    waitpid(pid, &st, 0) != pid)
		_exit(125);
	rep.fork_get = res[0];
	rep.fork_set = res[1];

	if (pfd_nosock) {
		if (write(sock, "r", 1) != 1)
			_exit(125);
	} else {
		pfd_send_fd(sock, vm->fd);
	}
	if (read(crd, &c, 1) != 1)
		_exit(125);
	if (pthread_create(&t, NULL, pfd_thread, &rep.thread_set) ||
	    pthread_join(t, NULL))
		_exit(125);
	if (write(wfd, &rep, sizeof(rep)) != sizeof(rep))
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
		       const char *name, const char *from)
{
	int r = ioctl(fd, ioctl_nr, arg);

	KT_EXPECT(r < 0 && errno == EIO,
		  "%s from %s: %d, errno %s (want EIO)", name, from, r,
		  r < 0 ? strerror(errno) : "none");
	if (r >= 0 && ioctl_nr != KVM_CHECK_EXTENSION &&
	    ioctl_nr != KVM_SET_PREFETCH_POLICY &&
	    ioctl_nr != KVM_GET_PREFETCH_POLICY)
		close(r);
}

/* GET and SET (a valid and an invalid one) on @fd all fail with EIO. */
static void expect_policy_eio(int fd, const char *from)
{
	struct kvm_prefetch_policy p;

	memset(&p, 0, sizeof(p));
	expect_eio(fd, KVM_GET_PREFETCH_POLICY, (unsigned long)&p,
		   "KVM_GET_PREFETCH_POLICY", from);
	ktsys_policy_fill(&p, "none", 4, KVM_PREFETCH_GUP_FAST_ONLY);
	expect_eio(fd, KVM_SET_PREFETCH_POLICY, (unsigned long)&p,
		   "KVM_SET_PREFETCH_POLICY none", from);
	ktsys_policy_fill(&p, "nosuch", 4, 0);
	expect_eio(fd, KVM_SET_PREFETCH_POLICY, (unsigned long)&p,
		   "KVM_SET_PREFETCH_POLICY of an unknown policy", from);
}

static void expect_line(const char *dir, const char *want, const char *what)
{
	char line[64];

	vm_debugfs_policy(dir, line, sizeof(line));
	KT_EXPECT(!strcmp(line, want), "%s: the VM's policy is '%s' (want '%s')",
		  what, line, want);
}

int main(void)
{
	int pipefd[2], cpipe[2], sv[2], pidfd, fd, rfd, st, cfd = -1;
	struct pfd_report rep;
	struct stat sb;
	char dir[256];
	pid_t pid;

	ktsys_start_ours(120);

	KT_ASSERT(!pipe(pipefd) && !pipe(cpipe), "pipe");
	/*
	 * A kernel without networking (the debug kernel's) has no sockets:
	 * a pipe then only says when the child would have sent its fd.
	 */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		kt_skip("socketpair: %s: no SCM_RIGHTS receiver", strerror(errno));
		KT_ASSERT(!pipe(sv), "pipe");
		pfd_nosock = true;
	}
	fflush(stdout);
	pid = fork();
	KT_ASSERT(pid >= 0, "fork");
	if (!pid) {
		close(pipefd[0]);
		close(cpipe[1]);
		close(sv[0]);
		child_vmm(pipefd[1], cpipe[0], sv[1]);
	}
	close(pipefd[1]);
	close(cpipe[0]);
	close(sv[1]);

	if (pfd_nosock) {
		char c;

		KT_ASSERT(read(sv[0], &c, 1) == 1, "the child's VM is set up");
		rfd = -1;
	} else {
		rfd = pfd_recv_fd(sv[0]);
		KT_ASSERT(rfd >= 0, "a VM fd received over SCM_RIGHTS");
	}

	pidfd = syscall(SYS_pidfd_open, pid, 0);
	KT_ASSERT(pidfd >= 0, "pidfd_open: %s", strerror(errno));
	/* The received fd is the child's VM fd: find its number there. */
	for (fd = -1, st = 3; fd < 0 && st < 64; st++) {
		char path[64], link[64];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, st);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0 && (link[n] = '\0', !strcmp(link, "anon_inode:kvm-vm"))) {
			cfd = st;
			fd = syscall(SYS_pidfd_getfd, pidfd, st, 0);
		}
	}
	KT_ASSERT(fd >= 0, "pidfd_getfd of the child's VM fd: %s",
		  strerror(errno));
	close(pidfd);

	snprintf(dir, sizeof(dir), KTSYS_DEBUGFS_KVM "/%d-%d", (int)pid, cfd);
	expect_policy_eio(fd, "a pidfd_getfd() copy");
	if (rfd >= 0)
		expect_policy_eio(rfd, "an SCM_RIGHTS receiver");
	expect_eio(fd, KVM_CHECK_EXTENSION, KVM_CAP_USER_MEMORY,
		   "KVM_CHECK_EXTENSION", "a pidfd_getfd() copy");
	expect_eio(fd, KVM_CREATE_VCPU, 0, "KVM_CREATE_VCPU",
		   "a pidfd_getfd() copy");
	expect_eio(fd, KVM_GET_STATS_FD, 0, "KVM_GET_STATS_FD",
		   "a pidfd_getfd() copy");
	expect_line(dir, "auto nr_pages=8 gup=nofault",
		    "after the refused SETs of the copies");

	/* Now the VMM's own thread sets none 4 fast, and reports. */
	KT_ASSERT(write(cpipe[1], "g", 1) == 1, "tell the child");
	KT_ASSERT(read(pipefd[0], &rep, sizeof(rep)) == sizeof(rep),
		  "the child reports");
	KT_EXPECT(rep.vmfd == cfd, "the child's VM is on fd %d (%d)", cfd,
		  rep.vmfd);
	KT_EXPECT(rep.fork_get == -EIO,
		  "KVM_GET_PREFETCH_POLICY from a fork child of the VMM: %s (want EIO)",
		  strerror(-rep.fork_get));
	KT_EXPECT(rep.fork_set == -EIO,
		  "KVM_SET_PREFETCH_POLICY from a fork child of the VMM: %s (want EIO)",
		  strerror(-rep.fork_set));
	KT_EXPECT(rep.thread_set == 0,
		  "KVM_SET_PREFETCH_POLICY from another thread of the VMM: %s",
		  strerror(-rep.thread_set));
	expect_line(dir, "none nr_pages=4 gup=fast",
		    "after the VMM's thread set it (and nobody else)");

	expect_policy_eio(fd, "a pidfd_getfd() copy, after the VMM's SET");
	expect_line(dir, "none nr_pages=4 gup=fast", "after the refused SETs");

	kill(pid, SIGKILL);
	KT_ASSERT(waitpid(pid, &st, 0) == pid, "the child exited");
	if (rfd >= 0)
		close(rfd);
	expect_policy_eio(fd, "a pidfd_getfd() copy, the VMM gone");
	KT_EXPECT(!stat(dir, &sb), "the taken fd keeps the VM (%s)", dir);
	expect_line(dir, "none nr_pages=4 gup=fast", "the VMM gone");
	close(fd);
	KT_EXPECT(stat(dir, &sb) && errno == ENOENT,
		  "closing the last fd destroys the VM (%s gone)", dir);

	KT_EXPECT(ktsys_restore() == 0, "kvm-reload ours");
	return kt_exit();
}
