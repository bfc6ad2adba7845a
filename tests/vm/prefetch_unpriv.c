// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_unpriv - an unprivileged VMM that names an unknown policy.
 *
 * KVM_SET_PREFETCH_POLICY autoloads module "kvm-prefetch-<name>" for an
 * unregistered name only when the caller has CAP_SYS_MODULE, and checks
 * that without an audit record: a VMM's typo must not log a capability
 * denial each time.
 *  - /dev/kvm is made 0666 and a child drops to nobody (65534, no
 *    capabilities): its SET of an unknown name fails ENOENT (as
 *    documented), no modprobe runs, and a SET of a built-in works;
 *  - a kprobe on security_capable() records every CAP_SYS_MODULE check
 *    meanwhile: there must be at least one, and each must carry
 *    CAP_OPT_NOAUDIT (an audited check, capable(), has opts 0);
 *  - the busybox test VM runs no audit daemon and no LSM policy that
 *    would log a denial, so the kernel log is only checked for lines
 *    naming "audit", "apparmor" or "denied" (there must be none);
 *  - as root, the same SET still tries the autoload (the modprobe helper,
 *    a logging script here, sees "kvm-prefetch-<name>") and fails ENOENT.
 * The /dev/kvm mode, the modprobe path and the kprobe are restored.
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
#include <sys/wait.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define NOBODY		65534
#define CAP_SYS_MODULE	16
#define CAP_OPT_NOAUDIT	2	/* BIT(1), <linux/security.h> */
#define MODPROBE_PATH	"/proc/sys/kernel/modprobe"
#define HELPER		"/tmp/kp-modprobe.sh"
#define HELPER_LOG	"/tmp/kp-modprobe.log"
#define KPROBE		"kp_capable"

#define EVENT		"kprobes/" KPROBE

/*
 * x86-64: security_capable(cred, ns, cap, opts) has cap in %dx and opts
 * in %cx at entry.  Only CAP_SYS_MODULE checks are recorded.
 */
static bool kprobe_add(void)
{
	int r;

	r = ktsys_kprobe_add(EVENT,
			     "security_capable cap=%dx:s32 opts=%cx:x32",
			     "cap == 16");
	if (r)
		return false;
	r = ktsys_trace_begin(EVENT);
	if (r) {
		kt_info("setting up the kprobe event: %s", strerror(-r));
		ktsys_kprobe_del(EVENT);
		return false;
	}
	return true;
}

static void kprobe_disable(void)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/events/" EVENT "/enable",
		 ktsys_tracefs());
	ktsys_write(path, "0");
}

/* Count the recorded checks, and those without CAP_OPT_NOAUDIT. */
static void kprobe_count(int *checks, int *audited)
{
	char path[160], line[512], *o;
	FILE *f;

	*checks = *audited = 0;
	kprobe_disable();
	snprintf(path, sizeof(path), "%s/trace", ktsys_tracefs());
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strstr(line, KPROBE ":"))
			continue;
		kt_info("trace: %.*s", (int)strcspn(line, "\n"), line);
		o = strstr(line, "opts=");
		(*checks)++;
		if (!o || !(strtoul(o + 5, NULL, 0) & CAP_OPT_NOAUDIT))
			(*audited)++;
	}
	fclose(f);
}

static void kprobe_remove(void)
{
	kprobe_disable();
	ktsys_kprobe_del(EVENT);
}

/* A modprobe helper that only logs what the kernel asked for. */
static void helper_install(char *saved, size_t len)
{
	FILE *f = fopen(HELPER, "w");

	KT_ASSERT(f, "create %s: %s", HELPER, strerror(errno));
	fprintf(f, "#!/bin/sh\necho \"$*\" >> %s\nexit 1\n", HELPER_LOG);
	fclose(f);
	KT_ASSERT(!chmod(HELPER, 0755), "chmod %s", HELPER);
	unlink(HELPER_LOG);
	KT_ASSERT(!ktsys_read_line(MODPROBE_PATH, saved, len), "read %s",
		  MODPROBE_PATH);
	KT_ASSERT(!ktsys_write(MODPROBE_PATH, HELPER), "write %s",
		  MODPROBE_PATH);
}

/* Did the helper see a request for module "kvm-prefetch-@name"? */
static bool helper_asked_for(const char *name)
{
	char log[1024] = "", want[64];

	ktsys_read(HELPER_LOG, log, sizeof(log));
	snprintf(want, sizeof(want), "kvm-prefetch-%s", name);
	return strstr(log, want) != NULL;
}

/* The unprivileged VMM; exits with its own verdict. */
static void child(void)
{
	struct kt_vm *vm;
	int r;

	KT_ASSERT(!setgroups(0, NULL) && !setgid(NOBODY) && !setuid(NOBODY),
		  "drop to nobody: %s", strerror(errno));
	KT_EXPECT(geteuid() == NOBODY, "running as uid %u", geteuid());

	vm = kt_vm_create();
	r = ktsys_set_policy(vm->fd, "nosuchpol", 8, 0);
	KT_EXPECT(r == -ENOENT,
		  "as nobody: SET of the unknown policy nosuchpol fails ENOENT (got %s)",
		  r ? strerror(-r) : "success");
	r = ktsys_set_policy(vm->fd, "none", 8, 0);
	KT_EXPECT(!r, "as nobody: SET of the built-in none works (%s)",
		  r ? strerror(-r) : "ok");
	kt_vm_free(vm);
	fflush(stdout);
	/* Not exit(): the parent's atexit() restore is not the child's. */
	_exit(kt_exit());
}

/* Kernel log lines since @fd was opened that would be audit noise. */
static int audit_lines(int fd)
{
	char msg[1024];
	int n = 0;

	while (ktsys_kmsg_next(fd, msg, sizeof(msg)) >= 0) {
		if (strstr(msg, "audit") || strstr(msg, "apparmor") ||
		    strstr(msg, "denied")) {
			kt_info("kernel log: %s", msg);
			n++;
		}
	}
	return n;
}

static char saved_modprobe[256];
static mode_t saved_kvm_mode;
static bool probed;

/* Also after a failed assertion: the next tests get the VM as it was. */
static void restore(void)
{
	if (probed)
		kprobe_remove();
	probed = false;
	if (saved_kvm_mode)
		chmod("/dev/kvm", saved_kvm_mode);
	saved_kvm_mode = 0;
	if (saved_modprobe[0])
		ktsys_write(MODPROBE_PATH, saved_modprobe);
	saved_modprobe[0] = '\0';
	unlink(HELPER);
	unlink(HELPER_LOG);
}

int main(void)
{
	int checks, audited, kmsg, st, r;
	struct stat sb;
	struct kt_vm *vm;
	pid_t pid;

	kt_require_kvm();
	ktsys_require_prefetch();

	KT_ASSERT(!stat("/dev/kvm", &sb), "stat /dev/kvm: %s", strerror(errno));
	atexit(restore);
	saved_kvm_mode = sb.st_mode & 07777;
	helper_install(saved_modprobe, sizeof(saved_modprobe));
	KT_ASSERT(!chmod("/dev/kvm", 0666), "chmod /dev/kvm: %s",
		  strerror(errno));
	kmsg = ktsys_kmsg_open();
	probed = kprobe_add();
	if (!probed)
		kt_info("no kprobe on security_capable(): the audit flag is not checked");

	fflush(stdout);
	pid = fork();
	KT_ASSERT(pid >= 0, "fork: %s", strerror(errno));
	if (!pid)
		child();
	KT_ASSERT(waitpid(pid, &st, 0) == pid, "waitpid: %s", strerror(errno));
	KT_EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == KT_EXIT_PASS,
		  "the unprivileged child passed (status 0x%x)", st);

	KT_EXPECT(!helper_asked_for("nosuchpol"),
		  "no modprobe for an unprivileged caller");
	if (probed) {
		kprobe_count(&checks, &audited);
		KT_EXPECT(checks >= 1,
			  "the CAP_SYS_MODULE check ran (%d recorded)", checks);
		KT_EXPECT(!audited,
			  "no CAP_SYS_MODULE check without CAP_OPT_NOAUDIT (%d of %d audited)",
			  audited, checks);
		kprobe_remove();
		probed = false;
	} else {
		kt_skip("kprobe events unavailable: audit flag not checked");
	}
	if (kmsg >= 0) {
		KT_EXPECT(!audit_lines(kmsg),
			  "no audit, apparmor or denied line in the kernel log");
		close(kmsg);
	}

	/* Root still autoloads: the check is not simply gone. */
	vm = kt_vm_create();
	r = ktsys_set_policy(vm->fd, "nosuchroot", 8, 0);
	KT_EXPECT(r == -ENOENT,
		  "as root: SET of the unknown policy nosuchroot fails ENOENT (got %s)",
		  r ? strerror(-r) : "success");
	KT_EXPECT(helper_asked_for("nosuchroot"),
		  "as root: modprobe was asked for kvm-prefetch-nosuchroot");
	kt_vm_free(vm);

	r = ktsys_write(MODPROBE_PATH, saved_modprobe);
	KT_EXPECT(!r, "modprobe path back to %s", saved_modprobe);
	restore();
	return kt_exit();
}
