// SPDX-License-Identifier: GPL-2.0
/*
 * kvm_prefetch_cmd - the operator command kvm-prefetch(8).
 *
 * Runs the command the way an operator would and checks its output,
 * its exit code and what it changed in kvm.ko's parameters:
 *  - --help; "status" (also without arguments) prints the registered
 *    policies and the live defaults; when /etc/modprobe.d/kvm-prefetch.conf
 *    exists (the packaged install test) the defaults kvm.ko loaded with
 *    are the ones it sets, and a packaged kvm.ko reports its version;
 *  - set-default changes each default; bad values are refused before the
 *    kernel sees them (exit 2), an unknown policy with exit 7 and no
 *    change, a module policy is autoloaded;
 *  - --persist writes the running defaults into the conffile, one line
 *    each, keeping comments and other options;
 *  - "vms" prints one line per VM with its debugfs name, the pid and comm
 *    of its process, policy and the VM's prefetch_windows,
 *    prefetch_mapped and pf_taken;
 *  - the exit codes for not root (3), debugfs not mounted (6), stock
 *    kvm.ko loaded (5) and kvm not loaded (4).
 *
 * The command under test is /usr/sbin/kvm-prefetch when that exists (the
 * package's, in the install test), otherwise its source compiled into
 * this program.  Ends with "kvm-reload ours" and the conffile as found.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kvmtest.h"
#include "kt_sys.h"

/* The command's own source, its main() renamed. */
#define main kpc_tool_main
#include "../../packaging/kvm-prefetch/kvm-prefetch.c"
#undef main

#define KPC_INSTALLED	"/usr/sbin/kvm-prefetch"
#define KPC_OUT		"/tmp/kpc.out"
#define KPC_ERR		"/tmp/kpc.err"
#define KPC_CONF_SAVE	"/etc/kpc.conf.saved"	/* rename(2) within one fs */
#define KPC_DEBUGFS	"/sys/kernel/debug"
#define KPC_NOBODY	65534
#define KPC_MAX_ARGS	8

static bool kpc_installed;
static char kpc_out[8192], kpc_err[8192];

/*
 * Run "kvm-prefetch @args..." (NULL-terminated) as root, or as nobody if
 * @as_nobody; its stdout and stderr go to kpc_out and kpc_err.
 * Return: its exit status, -1 if it did not exit normally.
 */
static int kpc_run(bool as_nobody, const char *const *args)
{
	char *argv[KPC_MAX_ARGS + 2] = { "kvm-prefetch" };
	int i, st;
	pid_t pid;

	for (i = 0; args[i] && i < KPC_MAX_ARGS; i++)
		argv[i + 1] = (char *)args[i];
	fflush(stdout);
	pid = fork();
	if (!pid) {
		if (!freopen(KPC_OUT, "w", stdout) ||
		    !freopen(KPC_ERR, "w", stderr))
			_exit(126);
		if (as_nobody && (setgid(KPC_NOBODY) || setuid(KPC_NOBODY)))
			_exit(126);
		if (kpc_installed) {
			execv(KPC_INSTALLED, argv);
			_exit(127);
		}
		exit(kpc_tool_main(i + 1, argv));
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	if (ktsys_read(KPC_OUT, kpc_out, sizeof(kpc_out)) < 0)
		kpc_out[0] = '\0';
	if (ktsys_read(KPC_ERR, kpc_err, sizeof(kpc_err)) < 0)
		kpc_err[0] = '\0';
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define KPC(...)	((const char *const []){ __VA_ARGS__, NULL })

/* Run as root and expect exit code @want; show what it said if not. */
static bool kpc_expect(int want, const char *const *args, const char *what)
{
	int rc = kpc_run(false, args);

	if (KT_EXPECT(rc == want, "%s: exit %d, want %d", what, rc, want))
		return true;
	kt_info("stdout: %s", kpc_out);
	kt_info("stderr: %s", kpc_err);
	return false;
}

static void kpc_param(const char *path, char *buf, size_t len)
{
	if (ktsys_read_line(path, buf, len))
		snprintf(buf, len, "?");
}

/* The live defaults as "status" prints them. */
static void kpc_defaults_line(char *buf, size_t len)
{
	char pol[32], nr[32], gup[32];

	kpc_param(KTSYS_P_POLICY, pol, sizeof(pol));
	kpc_param(KTSYS_P_NR_PAGES, nr, sizeof(nr));
	kpc_param(KTSYS_P_GUP, gup, sizeof(gup));
	snprintf(buf, len, "defaults:    policy=%s nr_pages=%s gup=%s",
		 pol, nr, gup);
}

/* ---- help and status --------------------------------------------- */

/*
 * With the conffile present when kvm.ko loaded, every value it sets must
 * be the live one (prefetch_policy only if it names a built-in: a policy
 * module cannot be a load-time default).
 */
static void kpc_check_conf_applied(void)
{
	char vals[KP_NR_PARAMS][KP_VALUE_MAX], live[64], avail[256];
	static const char *const paths[KP_NR_PARAMS] = {
		KTSYS_P_POLICY, KTSYS_P_NR_PAGES, KTSYS_P_GUP,
	};
	int p;

	if (kp_conf_read(vals))
		return;
	kpc_param(KTSYS_P_AVAILABLE, avail, sizeof(avail));
	for (p = 0; p < KP_NR_PARAMS; p++) {
		if (!vals[p][0])
			continue;
		if (p == KP_POLICY && strcmp(vals[p], "none") &&
		    strcmp(vals[p], "manual") && strcmp(vals[p], "async") &&
		    strcmp(vals[p], "auto"))
			continue;
		kpc_param(paths[p], live, sizeof(live));
		KT_EXPECT(!strcmp(live, vals[p]),
			  KP_CONF " sets %s=%s at load: live value %s",
			  kp_param_names[p], vals[p], live);
	}
}

static void kpc_test_status(void)
{
	char want[256], avail[256], ver[64];

	kpc_expect(0, KPC("--help"), "--help");
	KT_EXPECT(strstr(kpc_out, "set-default") && strstr(kpc_out, "vms") &&
		  strstr(kpc_out, "Exit codes"),
		  "--help names the commands and the exit codes");

	kpc_check_conf_applied();

	kpc_param(KTSYS_P_AVAILABLE, avail, sizeof(avail));
	kpc_defaults_line(want, sizeof(want));
	kpc_expect(0, KPC("status"), "status");
	KT_EXPECT(strstr(kpc_out, avail) && strstr(kpc_out, want),
		  "status shows the policies '%s' and '%s'", avail, want);
	if (!ktsys_read_line("/sys/module/kvm/version", ver, sizeof(ver)))
		KT_EXPECT(strstr(kpc_out, ver),
			  "status shows kvm.ko's version %s", ver);
	KT_EXPECT(kpc_run(false, (const char *const []){ NULL }) == 0 &&
		  strstr(kpc_out, want), "no command prints the status");
}

/* ---- set-default ------------------------------------------------- */

static const char *const *const kpc_bad_usage[] = {
	KPC("frobnicate"),
	KPC("status", "extra"),
	KPC("set-default"),
	KPC("set-default", "--gup", "slow"),
	KPC("set-default", "--nr-pages", "262145"),
	KPC("set-default", "--nr-pages", "-1"),
	KPC("set-default", "--nr-pages", "8x"),
	KPC("set-default", "--policy", "Auto"),
	KPC("set-default", "--policy", "abcdefghijklmnop"),
	KPC("set-default", "--bogus"),
};

struct kpc_set {
	const char *opt;
	const char *val;
	const char *param;	/* sysfs file that must read back val */
};

static const struct kpc_set kpc_sets[] = {
	{ "--nr-pages", "16", KTSYS_P_NR_PAGES },
	{ "--nr-pages", "262144", KTSYS_P_NR_PAGES },
	{ "--nr-pages", "0", KTSYS_P_NR_PAGES },
	{ "--gup", "fast", KTSYS_P_GUP },
	{ "--gup", "nofault", KTSYS_P_GUP },
	{ "--policy", "none", KTSYS_P_POLICY },
	{ "--policy", "adaptive", KTSYS_P_POLICY },	/* autoloaded */
	{ "--policy", "auto", KTSYS_P_POLICY },
};

static void kpc_test_set_default(void)
{
	char before[256], after[256], val[64];
	size_t i;

	kpc_defaults_line(before, sizeof(before));
	for (i = 0; i < ARRAY_SIZE(kpc_bad_usage); i++) {
		char what[128];

		snprintf(what, sizeof(what), "usage error '%s %s %s'",
			 kpc_bad_usage[i][0],
			 kpc_bad_usage[i][1] ? kpc_bad_usage[i][1] : "",
			 kpc_bad_usage[i][1] && kpc_bad_usage[i][2] ?
			 kpc_bad_usage[i][2] : "");
		if (kpc_expect(2, kpc_bad_usage[i], what))
			KT_EXPECT(kpc_err[0], "%s says why", what);
	}
	kpc_defaults_line(after, sizeof(after));
	KT_EXPECT(!strcmp(before, after), "usage errors change nothing (%s)",
		  after);

	for (i = 0; i < ARRAY_SIZE(kpc_sets); i++) {
		const struct kpc_set *s = &kpc_sets[i];
		char what[128];

		snprintf(what, sizeof(what), "set-default %s %s", s->opt,
			 s->val);
		kpc_expect(0, KPC("set-default", s->opt, s->val), what);
		kpc_param(s->param, val, sizeof(val));
		KT_EXPECT(!strcmp(val, s->val), "%s: kvm.ko has %s", what, val);
	}
	kpc_expect(0, KPC("status"), "status after adaptive was loaded");
	KT_EXPECT(strstr(kpc_out, "adaptive") != NULL,
		  "status lists the autoloaded adaptive policy");

	kpc_expect(0, KPC("set-default", "--policy", "none", "--nr-pages", "4",
			  "--gup", "fast"), "set-default with all three");
	kpc_defaults_line(before, sizeof(before));
	KT_EXPECT(!strcmp(before,
			  "defaults:    policy=none nr_pages=4 gup=fast"),
		  "all three set at once: %s", before);

	if (kpc_expect(7, KPC("set-default", "--policy", "nosuch",
			      "--nr-pages", "9"), "unknown policy"))
		KT_EXPECT(strstr(kpc_err, "unknown policy 'nosuch'") &&
			  strstr(kpc_err, "kvm-prefetch-nosuch"),
			  "the unknown policy is named: %s", kpc_err);
	kpc_defaults_line(after, sizeof(after));
	KT_EXPECT(!strcmp(before, after),
		  "an unknown policy changes nothing (%s)", after);
}

/* ---- --persist ------------------------------------------------------ */

/* Occurrences of @needle in @hay. */
static int kpc_count(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* Replace @path's contents with @text; 0 or -1. */
static int kpc_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) ? -1 : 0;
}

static void kpc_test_persist(void)
{
	static const char start[] =
		"# a comment to keep\n"
		"options kvm prefetch_gup=fast halt_poll_ns=0\n"
		"options kvm_amd npt=1\n"
		"options kvm prefetch_nr_pages=99\n";
	char conf[4096];
	bool had = !access(KP_CONF, F_OK);

	if (had)
		KT_ASSERT(!rename(KP_CONF, KPC_CONF_SAVE), "save %s", KP_CONF);
	mkdir("/etc", 0755);
	mkdir("/etc/modprobe.d", 0755);

	kpc_expect(0, KPC("set-default", "--nr-pages", "32", "--gup",
			  "nofault", "--persist"), "--persist, no file yet");
	KT_EXPECT(ktsys_read(KP_CONF, conf, sizeof(conf)) > 0 &&
		  strstr(conf, "\noptions kvm prefetch_policy=none\n") &&
		  strstr(conf, "\noptions kvm prefetch_nr_pages=32\n") &&
		  strstr(conf, "\noptions kvm prefetch_gup=nofault\n"),
		  "a new conffile sets the three live values: %s", conf);

	KT_ASSERT(kpc_write_file(KP_CONF, start) == 0, "write %s", KP_CONF);
	kpc_expect(0, KPC("set-default", "--policy", "auto", "--persist"),
		   "--persist into an existing file");
	ktsys_read(KP_CONF, conf, sizeof(conf));
	KT_EXPECT(strstr(conf, "# a comment to keep\n") &&
		  strstr(conf, "options kvm halt_poll_ns=0\n") &&
		  strstr(conf, "options kvm_amd npt=1\n") &&
		  kpc_count(conf, "prefetch_policy=") == 1 &&
		  kpc_count(conf, "prefetch_nr_pages=") == 1 &&
		  kpc_count(conf, "prefetch_gup=") == 1 &&
		  strstr(conf, "options kvm prefetch_policy=auto\n") &&
		  strstr(conf, "options kvm prefetch_nr_pages=32\n") &&
		  strstr(conf, "options kvm prefetch_gup=nofault\n"),
		  "--persist keeps the rest and sets each default once: %s",
		  conf);
	kpc_expect(0, KPC("status"), "status with a conffile");
	KT_EXPECT(strstr(kpc_out, "persistent:  policy=auto nr_pages=32 gup=nofault"),
		  "status shows the persistent defaults: %s", kpc_out);

	unlink(KP_CONF);
	if (had)
		KT_ASSERT(!rename(KPC_CONF_SAVE, KP_CONF), "restore %s",
			  KP_CONF);
}

/* ---- vms ------------------------------------------------------------- */

#define KPC_SLOT	1
#define KPC_GPA		0x100000ULL
#define KPC_SIZE	(1ULL << 20)

/* The VM's debugfs counter @stat, as text. */
static void kpc_vm_stat(const char *dir, const char *stat, char *buf,
			size_t len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, stat);
	if (ktsys_read_line(path, buf, len))
		snprintf(buf, len, "?");
}

static void kpc_test_vms(void)
{
	char dir[256], want[256], win[32], mapped[32], faults[32], comm[32];
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	char *line, *mem;

	kpc_expect(0, KPC("vms"), "vms without VMs");
	KT_EXPECT(kpc_count(kpc_out, "\n") == 1 &&
		  strstr(kpc_out, "GUEST_FAULTS"),
		  "vms without VMs prints the header only: %s", kpc_out);

	vm = kt_vm_create();
	mem = kt_vm_add_slot(vm, KPC_SLOT, KPC_GPA, KPC_SIZE, 0, NULL);
	/* Host-populated: gup=nofault prefetches present pages only. */
	memset(mem, 0xaa, KPC_SIZE);
	vcpu = kt_vcpu_add(vm, 0);
	KT_ASSERT(!ktsys_set_policy(vm->fd, "auto", 16,
				    KVM_PREFETCH_GUP_NOFAULT),
		  "KVM_SET_PREFETCH_POLICY auto 16");
	kt_touch(vcpu, KPC_GPA, KPC_GPA + KPC_SIZE, 0, KT_TOUCH_WRITE);
	KT_ASSERT(!ktsys_vm_debugfs_dir(vm->fd, dir, sizeof(dir)),
		  "the VM's debugfs directory");
	kpc_vm_stat(dir, "prefetch_windows", win, sizeof(win));
	kpc_vm_stat(dir, "prefetch_mapped", mapped, sizeof(mapped));
	kpc_vm_stat(dir, "pf_taken", faults, sizeof(faults));
	KT_EXPECT(strcmp(win, "0") && strcmp(mapped, "0"),
		  "the guest's writes were prefetched (windows %s, mapped %s)",
		  win, mapped);

	kpc_expect(0, KPC("vms"), "vms with a VM");
	kpc_param("/proc/self/comm", comm, sizeof(comm));
	snprintf(want, sizeof(want),
		 "%-16s %7d %-15s %-15s %8u %-7s %12s %12s %12s\n",
		 strrchr(dir, '/') + 1, (int)getpid(), comm, "auto", 16,
		 "nofault", win, mapped, faults);
	line = strchr(kpc_out, '\n');
	KT_EXPECT(line && !strcmp(line + 1, want),
		  "vms prints the VM's line '%.*s', got '%s'",
		  (int)strlen(want) - 1, want, line ? line + 1 : "");

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

/* ---- the exit codes ------------------------------------------------- */

static void kpc_test_exit_codes(void)
{
	int rc;

	rc = kpc_run(true, KPC("set-default", "--nr-pages", "8"));
	KT_EXPECT(rc == 3 && strstr(kpc_err, "root"),
		  "set-default as nobody: exit %d (want 3): %s", rc, kpc_err);
	rc = kpc_run(true, KPC("vms"));
	KT_EXPECT(rc == 3, "vms as nobody: exit %d (want 3)", rc);
	rc = kpc_run(true, KPC("status"));
	KT_EXPECT(rc == 0, "status as nobody: exit %d (want 0)", rc);

	KT_ASSERT(!umount(KPC_DEBUGFS), "umount debugfs: %s", strerror(errno));
	if (kpc_expect(6, KPC("vms"), "vms without debugfs"))
		KT_EXPECT(strstr(kpc_err, "debugfs"), "and says so: %s",
			  kpc_err);
	KT_ASSERT(!mount("debugfs", KPC_DEBUGFS, "debugfs", 0, NULL),
		  "mount debugfs again: %s", strerror(errno));

	KT_ASSERT(ktsys_reload("stock") == 0, "kvm-reload stock");
	kpc_expect(5, KPC("status"), "status on stock kvm.ko");
	kpc_expect(5, KPC("vms"), "vms on stock kvm.ko");
	if (kpc_expect(5, KPC("set-default", "--nr-pages", "8"),
		       "set-default on stock kvm.ko"))
		KT_EXPECT(strstr(kpc_err, "stock"), "and says so: %s", kpc_err);

	KT_ASSERT(system("rmmod kvm_amd && rmmod kvm") == 0, "rmmod kvm");
	if (kpc_expect(4, KPC("status"), "status without kvm.ko"))
		KT_EXPECT(strstr(kpc_err, "not loaded"), "and says so: %s",
			  kpc_err);
	kpc_expect(4, KPC("vms"), "vms without kvm.ko");
	kpc_expect(4, KPC("set-default", "--gup", "fast"),
		   "set-default without kvm.ko");
}

int main(void)
{
	ktsys_start_ours(300);
	kpc_installed = !access(KPC_INSTALLED, X_OK);
	kt_info("testing %s", kpc_installed ? KPC_INSTALLED :
		"the command's source built into this test");

	kpc_test_status();
	kpc_test_set_default();
	kpc_test_persist();
	kpc_test_vms();
	kpc_test_exit_codes();

	KT_EXPECT(ktsys_restore() == 0, "kvm-reload ours");
	return kt_exit();
}
