// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_init_race - a policy module whose init fails after registering.
 *
 * kvm-prefetch-testpol.ko init_fail_ms=3000: its init registers "testpol",
 * sleeps 3 s, unregisters and fails, so the module is freed.  Meanwhile a
 * VMM running as nobody (/dev/kvm made 0666; without CAP_SYS_MODULE it
 * never autoloads, which would load the module again) calls
 * KVM_SET_PREFETCH_POLICY "testpol" on its VM in a loop:
 *  - prefetch_available lists testpol while init sleeps (the race window
 *    exists);
 *  - every SET fails ENOENT (the documented errno: the policy is not
 *    available until its module is live), none succeeds: a VM that got the
 *    policy would keep pointers into the freed module;
 *  - the VM then switches to none and is freed (on the unfixed code this
 *    releases the freed module's policy: an oops, which the harness also
 *    reports as a kernel log splat; KASAN, in make check-debug, would
 *    name the use after free);
 *  - insmod fails, the module is not loaded, testpol is no longer listed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define NOBODY		65534
#define INIT_SLEEP_MS	3000

static bool listed(void)
{
	char buf[512];

	if (ktsys_read(KTSYS_P_AVAILABLE, buf, sizeof(buf)) < 0)
		return false;
	return strstr(buf, "testpol") != NULL;
}

static bool module_loaded(void)
{
	char buf[16384];

	if (ktsys_read("/proc/modules", buf, sizeof(buf)) < 0)
		return false;
	return strstr(buf, "kvm_prefetch_testpol ") != NULL;
}

/*
 * The racing VMM: SET testpol until the parent closes @stop_fd's other
 * end, then switch to none and free the VM.  Exits with its verdict.
 */
static void racer(int stop_fd, int ready_fd)
{
	long ok = 0, enoent = 0, other = 0, tries = 0;
	struct kt_vm *vm;
	char c;
	int r;

	KT_ASSERT(!setgroups(0, NULL) && !setgid(NOBODY) && !setuid(NOBODY),
		  "drop to nobody: %s", strerror(errno));
	vm = kt_vm_create();
	KT_ASSERT(write(ready_fd, "r", 1) == 1, "signal ready");
	close(ready_fd);

	while (read(stop_fd, &c, 1) < 0 && errno == EAGAIN) {
		r = ktsys_set_policy(vm->fd, "testpol", 4, 0);
		tries++;
		if (!r) {
			if (!ok++)
				kt_info("SET testpol succeeded (try %ld)", tries);
		} else if (r == -ENOENT) {
			enoent++;
		} else {
			if (!other++)
				kt_info("SET testpol: %s (try %ld)", strerror(-r),
					tries);
		}
	}
	kt_info("SET testpol %ld times: %ld succeeded, %ld ENOENT, %ld other",
		tries, ok, enoent, other);
	KT_EXPECT(tries > 0 && enoent == tries,
		  "every SET of testpol while its init ran failed ENOENT (%ld of %ld; %ld succeeded, %ld other errors)",
		  enoent, tries, ok, other);
	r = ktsys_set_policy(vm->fd, "none", 0, 0);
	KT_EXPECT(!r, "SET none afterwards (%s)", r ? strerror(-r) : "ok");
	kt_vm_free(vm);
	fflush(stdout);
	_exit(kt_exit());
}

int main(void)
{
	int stop[2], ready[2], st, ins_st, seen = 0;
	char path[256], arg[64], c;
	struct utsname u;
	pid_t pid, ins;
	struct stat sb;
	uint64_t t0;

	kt_require_kvm();
	ktsys_require_prefetch();
	KT_ASSERT(!uname(&u), "uname");
	snprintf(path, sizeof(path),
		 "/lib/modules/%s/extra/kvm-prefetch-testpol.ko", u.release);
	KT_REQUIRE(!access(path, R_OK), "no %s", path);
	if (module_loaded())
		KT_ASSERT(!system("rmmod kvm_prefetch_testpol"),
			  "rmmod kvm_prefetch_testpol");

	KT_ASSERT(!stat("/dev/kvm", &sb), "stat /dev/kvm: %s", strerror(errno));
	KT_ASSERT(!chmod("/dev/kvm", 0666), "chmod /dev/kvm: %s",
		  strerror(errno));
	KT_ASSERT(!pipe2(stop, O_NONBLOCK) && !pipe(ready), "pipe: %s",
		  strerror(errno));

	fflush(stdout);
	pid = fork();
	KT_ASSERT(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		close(stop[1]);
		close(ready[0]);
		racer(stop[0], ready[1]);
	}
	close(stop[0]);
	close(ready[1]);
	KT_EXPECT(read(ready[0], &c, 1) == 1, "the racing VMM is ready");

	snprintf(arg, sizeof(arg), "init_fail_ms=%d", INIT_SLEEP_MS);
	fflush(stdout);
	ins = fork();
	KT_ASSERT(ins >= 0, "fork: %s", strerror(errno));
	if (!ins) {
		execl("/bin/insmod", "insmod", path, arg, (char *)NULL);
		_exit(127);
	}
	/* The window: testpol listed while its module's init sleeps. */
	t0 = kt_now_ns();
	while (waitpid(ins, &ins_st, WNOHANG) == 0) {
		if (listed())
			seen++;
		usleep(100000);
		KT_ASSERT(kt_now_ns() - t0 < 60ULL * 1000000000ULL,
			  "insmod did not return within 60 s");
	}
	/* Let the racer try again once the module is gone. */
	usleep(200000);
	close(stop[1]);
	KT_ASSERT(waitpid(pid, &st, 0) == pid, "waitpid: %s", strerror(errno));
	chmod("/dev/kvm", sb.st_mode & 07777);

	KT_EXPECT(seen > 0,
		  "prefetch_available listed testpol while its init ran (%d polls)",
		  seen);
	KT_EXPECT(WIFEXITED(ins_st) && WEXITSTATUS(ins_st) != 0,
		  "insmod %s fails (status 0x%x)", arg, ins_st);
	KT_EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == KT_EXIT_PASS,
		  "the racing VMM passed (status 0x%x)", st);
	KT_EXPECT(!module_loaded(), "kvm_prefetch_testpol is not loaded");
	KT_EXPECT(!listed(), "testpol is no longer listed");
	return kt_exit();
}
