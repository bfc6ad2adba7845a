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
 *  - "set --pid" changes the policy of a VM that runs in another process
 *    (a child whose guest keeps faulting fresh pages): none, then auto
 *    with a window of 16, then another GUP mode, each time keeping the
 *    fields not given; prefetch_mapped stays flat under none and grows
 *    by 15 pages a guest fault under auto 16, and the guest runs on.  It
 *    is refused with its own exit code as nobody (8), for a process
 *    without a VM or no process (9), a bad --fd (9), several VMs without
 *    --fd (10), an unknown policy (7) and bad values (2), and --fd picks
 *    one of several VMs;
 *  - the exit codes for not root (3), debugfs not mounted (6), stock
 *    kvm.ko loaded (5) and kvm not loaded (4), also for "set".
 *
 * The command under test is /usr/sbin/kvm-prefetch when that exists (the
 * package's, in the install test), otherwise its source compiled into
 * this program.  Ends with "kvm-reload ours" and the conffile as found.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
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
#define KPC_MAX_ARGS	12

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

/*
 * The precision and coverage of the VM's debugfs prefetch_usage line, as
 * "vms" shows them ("-" without the file or the field).
 */
static void kpc_usage(const char *dir, char *precision, char *coverage)
{
	char line[512];
	const char *p;

	kpc_vm_stat(dir, "prefetch_usage", line, sizeof(line));
	strcpy(precision, "-");
	strcpy(coverage, "-");
	p = strstr(line, " precision=");
	if (p)
		sscanf(p, " precision=%15s", precision);
	p = strstr(line, " coverage=");
	if (p)
		sscanf(p, " coverage=%15s", coverage);
}

static void kpc_test_vms(void)
{
	char dir[256], want[320], win[32], mapped[32], faults[32], comm[32];
	char precision[16], coverage[16];
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

	kpc_usage(dir, precision, coverage);
	KT_EXPECT(!strcmp(precision, "100.0%"),
		  "the guest used every page a window mapped: precision %s",
		  precision);

	kpc_expect(0, KPC("vms"), "vms with a VM");
	kpc_param("/proc/self/comm", comm, sizeof(comm));
	snprintf(want, sizeof(want),
		 "%-16s %7d %-15s %-15s %8u %-7s %12s %12s %12s %9s %9s\n",
		 strrchr(dir, '/') + 1, (int)getpid(), comm, "auto", 16,
		 "nofault", win, mapped, faults, precision, coverage);
	line = strchr(kpc_out, '\n');
	KT_EXPECT(line && !strcmp(line + 1, want),
		  "vms prints the VM's line '%.*s', got '%s'",
		  (int)strlen(want) - 1, want, line ? line + 1 : "");

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

/* ---- set --pid -------------------------------------------------------- */

/*
 * A VMM of our own in a child process: one VM whose guest writes every
 * page of a memslot, again and again, with the pages zapped (host
 * MADV_DONTNEED, then populated again) between passes so that each pass
 * faults them all afresh; or VMs without a vCPU.  Each VM starts with
 * policy auto, nr_pages 8, gup fast, so that whatever the default, what
 * "set" keeps and changes shows.
 *
 * As a VMM is, it is threaded: the guest runs on a vCPU thread while the
 * main thread sits in read(2) on a control pipe, which "set --pid" stops
 * in the middle of; each message must arrive whole, in order.  SIGUSR1's
 * handler blocks in a read(2) of its own (so that "set" can find the
 * thread inside a handler); SIGRTMIN's counts (queued signals: none may
 * be lost while "set" holds the thread).  With KPC_VMM_SINGLE the only
 * thread runs the vCPU, and "set" has to stop it in KVM_RUN.
 */
#define KPC_VMM_COMM	"kpc-vmm"
#define KPC_VMM_GPA	0x400000ULL		/* 16-page aligned */
#define KPC_VMM_PAGES	256ULL
#define KPC_VMM_SIZE	(KPC_VMM_PAGES * KT_PAGE_SIZE)
#define KPC_VMM_MAX	2
#define KPC_START	"auto nr_pages=8 gup=fast"
#define KPC_WAIT_S	120

enum kpc_vmm_kind {
	KPC_VMM_IDLE, KPC_VMM_THREADED, KPC_VMM_SINGLE,
	KPC_VMM_SECCOMP_KILL,		/* idle, its filter kills on the ioctl */
	KPC_VMM_SECCOMP_ERRNO,		/* idle, its filter fails it: EPERM */
};

/*
 * A seccomp filter as Firecracker's would be for an ioctl it does not
 * know: KVM_GET/SET_PREFETCH_POLICY get @action, all else is allowed.
 */
static void kpc_vmm_seccomp(unsigned int action)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			 (unsigned int)KVM_SET_PREFETCH_POLICY, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			 (unsigned int)KVM_GET_PREFETCH_POLICY, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = 7, .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		_exit(122);
}

/* A message on the control pipe, and the main thread's answer. */
struct kpc_msg {
	uint32_t seq;
	char tag;			/* 'P'ing, 'Q'uery */
	char data[59];
};

struct kpc_reply {
	uint32_t seq;
	char tag;			/* 'P', 'Q', 'h' (in the handler), 'H' */
	char hbyte;			/* what the handler's read returned */
	int32_t got;			/* what the main thread's read returned */
	uint32_t rt_count;		/* SIGRTMIN handled */
	uint32_t usr1_count;		/* SIGUSR1 handled */
	uint32_t bad;			/* messages that came wrong */
};

struct kpc_vmm {
	pid_t pid;
	int nr_vms;
	int fd[KPC_VMM_MAX];		/* the VM fds, in the child */
	char dir[KPC_VMM_MAX][64];	/* their debugfs directories */
	int ctl, rep, hnd;		/* write, read, write end */
	uint32_t seq;
};

static volatile sig_atomic_t kpc_vmm_stop;
static volatile uint32_t kpc_vmm_rt, kpc_vmm_usr1;
static int kpc_vmm_rep = -1, kpc_vmm_hnd = -1;

static void kpc_vmm_on_term(int sig)
{
	kpc_vmm_stop = 1;
}

static void kpc_vmm_on_rt(int sig)
{
	kpc_vmm_rt++;
}

/* Says 'h', blocks in read() until the test sends a byte, says 'H'. */
static void kpc_vmm_on_usr1(int sig)
{
	struct kpc_reply r = { .tag = 'h' };
	int saved = errno;

	if (write(kpc_vmm_rep, &r, sizeof(r)) != sizeof(r))
		_exit(121);
	r.tag = 'H';
	r.got = read(kpc_vmm_hnd, &r.hbyte, 1);
	kpc_vmm_usr1++;
	r.usr1_count = kpc_vmm_usr1;
	if (write(kpc_vmm_rep, &r, sizeof(r)) != sizeof(r))
		_exit(121);
	errno = saved;
}

/* Pages whose dword 0 is not their gpa, or whose rest is not the fill. */
static uint64_t kpc_vmm_check(const char *mem)
{
	uint64_t i, bad = 0;

	for (i = 0; i < KPC_VMM_PAGES; i++) {
		const uint32_t *p = (const uint32_t *)(mem + i * KT_PAGE_SIZE);

		if (p[0] != KPC_VMM_GPA + i * KT_PAGE_SIZE ||
		    p[KT_PAGE_SIZE / 4 - 1] != 0xaaaaaaaaU)
			bad++;
	}
	return bad;
}

struct kpc_guest {
	struct kt_vcpu *vcpu;
	char *mem;
	uint64_t passes, bad;
};

/* The guest's workload, until SIGTERM. */
static void *kpc_vmm_guest(void *arg)
{
	struct kpc_guest *g = arg;

	while (!kpc_vmm_stop) {
		kt_touch(g->vcpu, KPC_VMM_GPA, KPC_VMM_GPA + KPC_VMM_SIZE, 0,
			 KT_TOUCH_WRITE);
		g->bad += kpc_vmm_check(g->mem);
		g->passes++;
		madvise(g->mem, KPC_VMM_SIZE, MADV_DONTNEED);
		memset(g->mem, 0xaa, KPC_VMM_SIZE);
	}
	return NULL;
}

/* The vCPU thread: the main thread takes the process's signals. */
static void *kpc_vmm_vcpu_thread(void *arg)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGRTMIN);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	return kpc_vmm_guest(arg);
}

/* The main thread's loop: answer each whole message, until SIGTERM. */
static uint32_t kpc_vmm_serve(int crd)
{
	uint32_t seq = 0, bad = 0;

	while (!kpc_vmm_stop) {
		struct kpc_reply r = { 0 };
		struct kpc_msg m;
		char want[sizeof(m.data)];
		ssize_t n = read(crd, &m, sizeof(m));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		snprintf(want, sizeof(want), "message %u", seq);
		if (n != sizeof(m) || m.seq != seq || strcmp(m.data, want))
			bad++;
		seq = m.seq + 1;
		r.seq = m.seq;
		r.tag = m.tag;
		r.got = n;
		r.rt_count = kpc_vmm_rt;
		r.usr1_count = kpc_vmm_usr1;
		r.bad = bad;
		if (write(kpc_vmm_rep, &r, sizeof(r)) != sizeof(r))
			_exit(121);
	}
	return bad;
}

/* The child: never returns. */
static void kpc_vmm_child(int nr_vms, enum kpc_vmm_kind kind, int wfd,
			  int crd)
{
	struct sigaction sa = { .sa_handler = kpc_vmm_on_term };
	struct kpc_guest g = { 0 };
	struct kt_vm *vm[KPC_VMM_MAX];
	int fds[KPC_VMM_MAX], i;
	uint32_t bad_msgs = 0;
	pthread_t t;

	prctl(PR_SET_NAME, KPC_VMM_COMM);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = kpc_vmm_on_rt;
	sigaction(SIGRTMIN, &sa, NULL);
	sa.sa_handler = kpc_vmm_on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	for (i = 0; i < nr_vms; i++) {
		vm[i] = kt_vm_create();
		KT_ASSERT(!ktsys_set_policy(vm[i]->fd, "auto", 8,
					    KVM_PREFETCH_GUP_FAST_ONLY),
			  "vmm: KVM_SET_PREFETCH_POLICY auto 8 fast");
		fds[i] = vm[i]->fd;
	}
	if (kind == KPC_VMM_THREADED || kind == KPC_VMM_SINGLE) {
		g.mem = kt_vm_add_slot(vm[0], KPC_SLOT, KPC_VMM_GPA,
				       KPC_VMM_SIZE, 0, NULL);
		memset(g.mem, 0xaa, KPC_VMM_SIZE);
		g.vcpu = kt_vcpu_add(vm[0], 0);
	}
	if (write(wfd, fds, sizeof(fds)) != sizeof(fds))
		_exit(125);
	close(wfd);
	switch (kind) {
	case KPC_VMM_SECCOMP_KILL:
	case KPC_VMM_SECCOMP_ERRNO:
		kpc_vmm_seccomp(kind == KPC_VMM_SECCOMP_KILL ?
				SECCOMP_RET_KILL_PROCESS :
				SECCOMP_RET_ERRNO | EPERM);
		/* fall through */
	case KPC_VMM_IDLE:
		while (!kpc_vmm_stop)
			pause();
		break;
	case KPC_VMM_SINGLE:
		kpc_vmm_guest(&g);
		break;
	case KPC_VMM_THREADED:
		if (pthread_create(&t, NULL, kpc_vmm_vcpu_thread, &g))
			_exit(125);
		bad_msgs = kpc_vmm_serve(crd);
		kpc_vmm_stop = 1;
		pthread_join(t, NULL);
		break;
	}
	kt_info("vmm %d: %llu passes over %llu pages, %llu pages wrong, %u messages wrong",
		(int)getpid(), (unsigned long long)g.passes, KPC_VMM_PAGES,
		(unsigned long long)g.bad, bad_msgs);
	fflush(stdout);
	_exit(g.bad || bad_msgs || (g.vcpu && !g.passes) ? 1 : 0);
}

static void kpc_vmm_start(struct kpc_vmm *v, int nr_vms,
			  enum kpc_vmm_kind kind)
{
	int pipefd[2], ctl[2], rep[2], hnd[2], i;

	memset(v, 0, sizeof(*v));
	v->nr_vms = nr_vms;
	KT_ASSERT(!pipe(pipefd) && !pipe(ctl) && !pipe(rep) && !pipe(hnd),
		  "pipe");
	fflush(stdout);
	v->pid = fork();
	KT_ASSERT(v->pid >= 0, "fork");
	if (!v->pid) {
		close(pipefd[0]);
		close(ctl[1]);
		close(rep[0]);
		close(hnd[1]);
		kpc_vmm_rep = rep[1];
		kpc_vmm_hnd = hnd[0];
		kpc_vmm_child(nr_vms, kind, pipefd[1], ctl[0]);
	}
	close(pipefd[1]);
	close(ctl[0]);
	close(rep[1]);
	close(hnd[0]);
	v->ctl = ctl[1];
	v->rep = rep[0];
	v->hnd = hnd[1];
	KT_ASSERT(read(pipefd[0], v->fd, sizeof(v->fd)) == sizeof(v->fd),
		  "the VMM child started");
	close(pipefd[0]);
	for (i = 0; i < nr_vms; i++)
		snprintf(v->dir[i], sizeof(v->dir[i]), "%d-%d", (int)v->pid,
			 v->fd[i]);
}

/* Stop the VMM; true if it exited 0 (its guest ran, its pages right). */
static bool kpc_vmm_stop_wait(struct kpc_vmm *v)
{
	int st, i;
	pid_t w = 0;

	/*
	 * EOF ends the main thread's read() loop (and a SIGUSR1 handler's
	 * read()), SIGTERM its pause().  A SIGTERM can land after the loop
	 * checked kpc_vmm_stop and before the syscall it guards: the restart
	 * of a syscall that set --pid interrupted goes back to the syscall
	 * instruction, not to the check.  So one SIGTERM a second, for at
	 * most 30 s; a VMM still there then is killed and fails the check.
	 */
	close(v->ctl);
	close(v->hnd);
	for (i = 0; i < 300 && !w; i++) {
		if (i % 10 == 0)
			kill(v->pid, SIGTERM);
		usleep(100000);
		w = waitpid(v->pid, &st, WNOHANG);
	}
	if (!w) {
		kt_info("vmm %d: still there 30 s after SIGTERM: killed",
			(int)v->pid);
		kill(v->pid, SIGKILL);
		waitpid(v->pid, &st, 0);
	} else if (i > 10) {
		kt_info("vmm %d: exited after SIGTERM number %d", (int)v->pid,
			(i - 1) / 10 + 1);
	}
	close(v->rep);
	return w == v->pid && WIFEXITED(st) && !WEXITSTATUS(st);
}

/* The next reply of @v's main thread (at most KPC_WAIT_S s). */
static bool kpc_vmm_reply(struct kpc_vmm *v, struct kpc_reply *r)
{
	struct pollfd p = { .fd = v->rep, .events = POLLIN };

	return poll(&p, 1, KPC_WAIT_S * 1000) == 1 &&
	       read(v->rep, r, sizeof(*r)) == sizeof(*r);
}

/* Send @v's main thread message @tag; its answer in *@r. */
static bool kpc_vmm_ask(struct kpc_vmm *v, char tag, struct kpc_reply *r)
{
	struct kpc_msg m = { .seq = v->seq, .tag = tag };

	snprintf(m.data, sizeof(m.data), "message %u", v->seq);
	v->seq++;
	return write(v->ctl, &m, sizeof(m)) == sizeof(m) &&
	       kpc_vmm_reply(v, r) && r->seq == m.seq && r->tag == tag &&
	       r->got == sizeof(m) && !r->bad;
}

/*
 * Thread @tid of @v is asleep in syscall @nr (as /proc says); waits up
 * to 10 s for it to get there.
 */
static bool kpc_vmm_in_syscall(const struct kpc_vmm *v, pid_t tid, long nr)
{
	char path[96], line[256];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)v->pid,
		 (int)tid);
	for (i = 0; i < 1000; i++) {
		if (!ktsys_read_line(path, line, sizeof(line)) &&
		    strtol(line, NULL, 10) == nr)
			return true;
		usleep(10000);
	}
	return false;
}

/* A counter of VM @i of @v, from its debugfs directory; -1 if unread. */
static long kpc_vmm_stat(const struct kpc_vmm *v, int i, const char *stat)
{
	char path[256];
	long val;

	snprintf(path, sizeof(path), KPC_DEBUGFS "/kvm/%s/%s", v->dir[i],
		 stat);
	return ktsys_read_long(path, &val) ? -1 : val;
}

static void kpc_vmm_policy(const struct kpc_vmm *v, int i, char *buf,
			   size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), KPC_DEBUGFS "/kvm/%s/prefetch_policy",
		 v->dir[i]);
	kpc_param(path, buf, len);
}

/*
 * Wait until the guest of @v took @faults more faults than at *@pf (at
 * most KPC_WAIT_S s); then *@pf and *@mapped are the counters.
 * Return: true if it did.
 */
static bool kpc_vmm_wait(const struct kpc_vmm *v, long faults, long *pf,
			 long *mapped)
{
	long start = *pf;
	uint64_t end = kt_now_ns() + KPC_WAIT_S * 1000000000ULL;

	do {
		*mapped = kpc_vmm_stat(v, 0, "prefetch_mapped");
		*pf = kpc_vmm_stat(v, 0, "pf_taken");
		if (*pf >= start + faults)
			return true;
		usleep(20000);
	} while (kt_now_ns() < end);
	return false;
}

/* "set" as root must give @want; the VM's policy must then read @pol. */
static void kpc_expect_set(int want, const char *const *args,
			   const struct kpc_vmm *v, int i, const char *pol,
			   const char *msg, const char *what)
{
	char got[64];

	if (kpc_expect(want, args, what) && msg)
		KT_EXPECT(strstr(want ? kpc_err : kpc_out, msg),
			  "%s: says '%s': %s", what, msg,
			  want ? kpc_err : kpc_out);
	kpc_vmm_policy(v, i, got, sizeof(got));
	KT_EXPECT(!strcmp(got, pol), "%s: the VM's policy is '%s' (want '%s')",
		  what, got, pol);
}

/* The VMM's main thread still answers, each message whole. */
static void kpc_vmm_alive(struct kpc_vmm *v, const char *what)
{
	struct kpc_reply r = { 0 };

	KT_EXPECT(kpc_vmm_ask(v, 'P', &r),
		  "%s: the VMM's main thread answers (read %d bytes, %u wrong)",
		  what, r.got, r.bad);
}

/*
 * The switches of a running guest: the policy changes, the counters
 * follow, the fields not given keep their values.
 */
static void kpc_test_set_switch(struct kpc_vmm *v, const char *pid)
{
	const long n = KPC_VMM_PAGES, w = 16;
	long pf = 0, mapped, pf0, mapped0;
	char nr[32], pol[64];

	KT_ASSERT(kpc_vmm_wait(v, 2 * n / 8, &pf, &mapped),
		  "the VMM's guest runs (pf_taken %ld)", pf);

	kpc_expect_set(0, KPC("set", "--pid", pid, "none"), v, 0,
		       "none nr_pages=8 gup=fast",
		       "none nr_pages=8 gup=fast (was " KPC_START ")",
		       "set --pid none");
	kpc_vmm_alive(v, "set --pid none");
	/* A window that began before the switch may still be mapping. */
	kpc_vmm_wait(v, n, &pf, &mapped);
	pf0 = pf;
	mapped0 = mapped;
	KT_EXPECT(kpc_vmm_wait(v, 3 * n, &pf, &mapped) && mapped == mapped0,
		  "under none the guest takes %ld faults and prefetch_mapped stays at %ld (now %ld)",
		  pf - pf0, mapped0, mapped);

	kpc_expect_set(0, KPC("set", "--pid", pid, "auto", "--nr-pages", "16"),
		       v, 0, "auto nr_pages=16 gup=fast",
		       "auto nr_pages=16 gup=fast (was none nr_pages=8 gup=fast)",
		       "set --pid auto --nr-pages 16");
	kpc_vmm_alive(v, "set --pid auto --nr-pages 16");
	kpc_vmm_wait(v, 2 * n / w, &pf, &mapped);
	pf0 = pf;
	mapped0 = mapped;
	/* Four passes' faults hold three whole passes of n - n/w pages. */
	KT_EXPECT(kpc_vmm_wait(v, 4 * n / w, &pf, &mapped) &&
		  mapped - mapped0 >= 3 * (n - n / w) &&
		  mapped - mapped0 >= 12 * (pf - pf0),
		  "under auto 16 prefetch_mapped grows by %ld over %ld guest faults (want >= %ld, 15 a fault)",
		  mapped - mapped0, pf - pf0, 3 * (n - n / w));

	kpc_expect_set(0, KPC("set", "--pid", pid, "auto", "--gup",
			      "nofault"), v, 0, "auto nr_pages=16 gup=nofault",
		       NULL, "set --pid auto --gup nofault");
	kpc_vmm_alive(v, "set --pid auto --gup nofault");
	/* 0 is the default window, prefetch_nr_pages (0 reads back as 1). */
	kpc_param(KTSYS_P_NR_PAGES, nr, sizeof(nr));
	snprintf(pol, sizeof(pol), "none nr_pages=%s gup=nofault",
		 strcmp(nr, "0") ? nr : "1");
	kpc_expect_set(0, KPC("set", "--pid", pid, "--nr-pages", "0",
			      "none"), v, 0, pol, NULL,
		       "set --pid --nr-pages 0 none");
	kpc_expect_set(0, KPC("set", "--pid", pid, "--fd",
			      strrchr(v->dir[0], '-') + 1, "auto",
			      "--nr-pages", "16", "--gup", "fast"), v, 0,
		       "auto nr_pages=16 gup=fast", NULL,
		       "set --pid --fd with all fields");
	kpc_vmm_alive(v, "set --pid --fd with all fields");
	pf0 = pf;
	KT_EXPECT(kpc_vmm_wait(v, n / w, &pf, &mapped),
		  "the guest runs on after the switches (%ld more faults)",
		  pf - pf0);
}

/* What "set" refuses, each time leaving the VM's policy as it was. */
static void kpc_test_set_refused(struct kpc_vmm *v, const char *pid)
{
	char self[24], gone[24], got[64], pol[64];
	pid_t dead;
	int rc;

	kpc_vmm_policy(v, 0, pol, sizeof(pol));

	kpc_expect_set(7, KPC("set", "--pid", pid, "nosuch"), v, 0, pol,
		       "unknown policy 'nosuch' (ENOENT)",
		       "set --pid an unknown policy");
	kpc_expect_set(2, KPC("set", "--pid", pid, "auto", "--nr-pages",
			      "262145"), v, 0, pol, "--nr-pages",
		       "set --pid --nr-pages 262145");
	kpc_expect_set(2, KPC("set", "--pid", pid, "auto", "--gup", "slow"),
		       v, 0, pol, "--gup", "set --pid --gup slow");
	kpc_expect_set(2, KPC("set", "--pid", pid, "Auto"), v, 0, pol,
		       "invalid policy name", "set --pid a bad policy name");
	kpc_expect_set(2, KPC("set", "none"), v, 0, pol, "--pid",
		       "set without --pid");
	kpc_expect_set(2, KPC("set", "--pid", pid), v, 0, pol, "policy",
		       "set --pid without a policy");
	kpc_expect_set(2, KPC("set", "--pid", "12x", "none"), v, 0, pol,
		       "--pid", "set --pid 12x");
	kpc_expect_set(2, KPC("set", "--pid", pid, "--fd", "-1", "none"), v,
		       0, pol, "--fd", "set --fd -1");
	kpc_expect_set(9, KPC("set", "--pid", pid, "--fd", "0", "none"), v,
		       0, pol, "is not a KVM VM", "set --fd 0 (not a VM)");
	kpc_expect_set(9, KPC("set", "--pid", pid, "--fd", "999", "none"), v,
		       0, pol, "has no fd 999", "set --fd 999 (not open)");

	rc = kpc_run(true, KPC("set", "--pid", pid, "none"));
	KT_EXPECT(rc == 8 && strstr(kpc_err, "ptrace"),
		  "set --pid as nobody: exit %d (want 8): %s", rc, kpc_err);
	rc = kpc_run(true, KPC("set", "--pid", pid, "--fd",
			       strrchr(v->dir[0], '-') + 1, "none"));
	KT_EXPECT(rc == 8 && strstr(kpc_err, "ptrace"),
		  "set --pid --fd as nobody: exit %d (want 8): %s", rc,
		  kpc_err);
	kpc_vmm_policy(v, 0, got, sizeof(got));
	KT_EXPECT(!strcmp(got, pol), "nobody changed nothing: '%s'", got);

	snprintf(self, sizeof(self), "%d", (int)getpid());
	kpc_expect_set(9, KPC("set", "--pid", self, "none"), v, 0, pol,
		       "has no KVM VM", "set --pid of a process without a VM");
	fflush(stdout);
	dead = fork();
	if (!dead)
		_exit(0);
	waitpid(dead, NULL, 0);
	snprintf(gone, sizeof(gone), "%d", (int)dead);
	kpc_expect_set(9, KPC("set", "--pid", gone, "none"), v, 0, pol,
		       "no process", "set --pid of a process that is gone");
}

/* Two VMs in one process: "set" needs --fd, and --fd picks one. */
static void kpc_test_set_two(void)
{
	char pid[24], fd1[24], want[128], got[64];
	struct kpc_vmm v;

	kpc_vmm_start(&v, 2, KPC_VMM_IDLE);
	snprintf(pid, sizeof(pid), "%d", (int)v.pid);
	snprintf(fd1, sizeof(fd1), "%d", v.fd[1]);
	snprintf(want, sizeof(want), "has 2 VMs, on fds %d, %d: choose one with --fd",
		 v.fd[0], v.fd[1]);
	kpc_expect_set(10, KPC("set", "--pid", pid, "none"), &v, 0, KPC_START,
		       want, "set --pid of two VMs without --fd");
	kpc_expect_set(0, KPC("set", "--pid", pid, "--fd", fd1, "none"), &v,
		       1, "none nr_pages=8 gup=fast", NULL,
		       "set --pid --fd of the second VM");
	kpc_vmm_policy(&v, 0, got, sizeof(got));
	KT_EXPECT(!strcmp(got, KPC_START),
		  "and the first VM keeps its policy: '%s'", got);
	KT_EXPECT(kpc_vmm_stop_wait(&v), "the two-VM child exits");
}

/* A kprobe event on kvm_prefetch_vm_ioctl() that counts thread @tid's calls. */
#define KPC_KPROBE	"kprobes/kpc_vm_ioctl"

static bool kpc_kprobe_begin(pid_t tid)
{
	char filter[64];

	snprintf(filter, sizeof(filter), "common_pid == %d", (int)tid);
	if (ktsys_kprobe_add(KPC_KPROBE, "kvm_prefetch_vm_ioctl", filter))
		return false;
	if (!ktsys_trace_begin(KPC_KPROBE))
		return true;
	ktsys_kprobe_del(KPC_KPROBE);
	return false;
}

static long kpc_kprobe_end(void)
{
	long n = ktsys_trace_end(KPC_KPROBE);

	ktsys_kprobe_del(KPC_KPROBE);
	return n;
}

/*
 * "set" stops the VMM's main thread inside SIGUSR1's handler, itself
 * asleep in read(2): the handler's read and then the main thread's own
 * must each return what was sent.
 */
static void kpc_test_set_in_handler(struct kpc_vmm *v, const char *pid)
{
	struct kpc_reply r;
	char z = 'z';

	KT_ASSERT(!kill(v->pid, SIGUSR1), "SIGUSR1 to the VMM");
	KT_ASSERT(kpc_vmm_reply(v, &r) && r.tag == 'h',
		  "the VMM's main thread is in its SIGUSR1 handler");
	KT_EXPECT(kpc_vmm_in_syscall(v, v->pid, SYS_read),
		  "the handler sleeps in read(2)");
	kpc_expect_set(0, KPC("set", "--pid", pid, "auto", "--nr-pages", "8"),
		       v, 0, "auto nr_pages=8 gup=fast", NULL,
		       "set --pid with the VMM in a signal handler");
	KT_ASSERT(write(v->hnd, &z, 1) == 1, "wake the handler");
	KT_EXPECT(kpc_vmm_reply(v, &r) && r.tag == 'H' && r.got == 1 &&
		  r.hbyte == 'z' && r.usr1_count == 1,
		  "the handler's read(2) returned %d '%c' after set (want 1 'z'), handler ran %u time(s)",
		  r.got, r.hbyte, r.usr1_count);
	kpc_vmm_alive(v, "set --pid in a signal handler");
}

/*
 * Queued signals sent to the VMM while "set" holds its main thread are
 * all handled: none is lost.
 */
static void kpc_test_set_signals(struct kpc_vmm *v, const char *pid)
{
	const int sets = 6;
	int pipefd[2], sent = 0, i, st;
	uint64_t end;
	struct kpc_reply r = { 0 };
	pid_t sender;

	KT_ASSERT(!pipe(pipefd), "pipe");
	fflush(stdout);
	sender = fork();
	KT_ASSERT(sender >= 0, "fork");
	if (!sender) {
		union sigval val = { .sival_int = 0 };
		uint64_t stop = kt_now_ns() + 4000000000ULL;

		close(pipefd[0]);
		while (kt_now_ns() < stop) {
			if (!sigqueue(v->pid, SIGRTMIN, val))
				sent++;
			usleep(300);
		}
		_exit(write(pipefd[1], &sent, sizeof(sent)) == sizeof(sent) ?
		      0 : 1);
	}
	close(pipefd[1]);
	for (i = 0; i < sets; i++)
		kpc_expect_set(0, KPC("set", "--pid", pid,
				      i & 1 ? "auto" : "none"), v, 0,
			       i & 1 ? "auto nr_pages=8 gup=fast" :
				       "none nr_pages=8 gup=fast", NULL,
			       "set --pid while SIGRTMIN arrives");
	KT_ASSERT(read(pipefd[0], &sent, sizeof(sent)) == sizeof(sent) &&
		  waitpid(sender, &st, 0) == sender, "the sender finished");
	close(pipefd[0]);
	end = kt_now_ns() + 10000000000ULL;
	do {
		if (!kpc_vmm_ask(v, 'Q', &r))
			break;
	} while ((int)r.rt_count < sent && kt_now_ns() < end &&
		 !usleep(10000));
	KT_EXPECT(sent > 100 && (int)r.rt_count == sent,
		  "the VMM handled %u of the %d SIGRTMIN sent during %d sets",
		  r.rt_count, sent, sets);
}

/* A VMM whose only thread runs the vCPU: "set" stops it in KVM_RUN. */
static void kpc_test_set_single(void)
{
	const long n = KPC_VMM_PAGES;
	long pf = 0, mapped, pf0;
	char pid[24], path[64], line[256] = "";
	struct kpc_vmm v;

	kpc_vmm_start(&v, 1, KPC_VMM_SINGLE);
	snprintf(pid, sizeof(pid), "%d", (int)v.pid);
	KT_ASSERT(kpc_vmm_wait(&v, n / 8, &pf, &mapped),
		  "the one-thread VMM's guest runs (pf_taken %ld)", pf);
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)v.pid);
	KT_EXPECT(!ktsys_read_line(path, line, sizeof(line)) &&
		  (!strncmp(line, "running", 7) ||
		   strtol(line, NULL, 10) == SYS_ioctl),
		  "its only thread runs the guest, or sleeps in KVM_RUN: '%s'",
		  line);
	kpc_expect_set(0, KPC("set", "--pid", pid, "none"), &v, 0,
		       "none nr_pages=8 gup=fast", NULL,
		       "set --pid of a VMM whose only thread is in KVM_RUN");
	pf0 = pf;
	KT_EXPECT(kpc_vmm_wait(&v, n, &pf, &mapped),
		  "its guest runs on (%ld more faults)", pf - pf0);
	kpc_expect_set(0, KPC("set", "--pid", pid, "auto", "--nr-pages", "16"),
		       &v, 0, "auto nr_pages=16 gup=fast", NULL,
		       "set --pid of it again");
	pf0 = pf;
	KT_EXPECT(kpc_vmm_wait(&v, n / 16, &pf, &mapped),
		  "its guest runs on (%ld more faults)", pf - pf0);
	KT_EXPECT(kpc_vmm_stop_wait(&v),
		  "the one-thread VMM's guest ran until stopped, every page right");
}

/*
 * A VMM whose seccomp filter would kill it for the ioctl: "set" refuses
 * (exit 1) and the VMM lives on with its policy; one whose filter fails
 * the ioctl: "set" reports EPERM.
 */
static void kpc_test_set_seccomp(void)
{
	static const struct {
		enum kpc_vmm_kind kind;
		const char *msg, *what;
	} c[] = {
		{ KPC_VMM_SECCOMP_KILL, "seccomp filter",
		  "a VMM whose seccomp filter kills on the ioctl" },
		{ KPC_VMM_SECCOMP_ERRNO, "Operation not permitted",
		  "a VMM whose seccomp filter fails the ioctl with EPERM" },
	};
	char pid[24];
	struct kpc_vmm v;
	pid_t probe;
	int i, st;

	/* A kernel without CONFIG_SECCOMP_FILTER (no NET) has no filters. */
	probe = fork();
	KT_ASSERT(probe >= 0, "fork");
	if (!probe) {
		struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K,
						    SECCOMP_RET_ALLOW);
		struct sock_fprog prog = { .len = 1, .filter = &allow };

		_exit(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog));
	}
	if (waitpid(probe, &st, 0) != probe || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		kt_skip("no seccomp filters in this kernel: VMMs with a filter not tried");
		return;
	}
	for (i = 0; i < 2; i++) {
		kpc_vmm_start(&v, 1, c[i].kind);
		snprintf(pid, sizeof(pid), "%d", (int)v.pid);
		/* The filter is in place once the thread sleeps in pause(). */
		KT_EXPECT(kpc_vmm_in_syscall(&v, v.pid, SYS_pause),
			  "%s: it waits in pause()", c[i].what);
		kpc_expect_set(1, KPC("set", "--pid", pid, "none"), &v, 0,
			       KPC_START, c[i].msg, c[i].what);
		KT_EXPECT(waitpid(v.pid, NULL, WNOHANG) == 0,
			  "%s: it is still running", c[i].what);
		KT_EXPECT(kpc_vmm_stop_wait(&v), "%s: it exits 0", c[i].what);
	}
}

/*
 * The policy's init() runs in the VMM, so its per-VM state is charged to
 * the VMM's memory cgroup: testpol records the thread group of its init().
 */
static void kpc_test_set_charged(struct kpc_vmm *v, const char *pid)
{
	long tgid = -1;
	int rc;

	/* The package's modules (deb-test) come without the test policy. */
	rc = kpc_run(false, KPC("set", "--pid", pid, "testpol", "--nr-pages",
				"8"));
	if (rc == 7) {
		kt_skip("no testpol policy module here: where init() runs is not checked");
		return;
	}
	KT_EXPECT(rc == 0, "set --pid testpol: exit %d, want 0 (%s)", rc,
		  kpc_err);
	ktsys_read_long("/sys/module/kvm_prefetch_testpol/parameters/init_tgid",
			&tgid);
	KT_EXPECT(tgid == v->pid,
		  "testpol's init() ran in the VMM (thread group %ld, VMM %d, this tool %d)",
		  tgid, (int)v->pid, (int)getpid());
	kpc_expect(0, KPC("set", "--pid", pid, "auto", "--nr-pages", "8"),
		   "set --pid auto 8 again");
}

static void kpc_test_set_pid(void)
{
	char pid[24], line[128];
	struct kpc_vmm v;
	bool probe;
	long calls;

	kpc_vmm_start(&v, 1, KPC_VMM_THREADED);
	snprintf(pid, sizeof(pid), "%d", (int)v.pid);

	kpc_expect(0, KPC("vms"), "vms with another process's VM");
	snprintf(line, sizeof(line), "\n%-16s %7d %-15s %-15s %8u ", v.dir[0],
		 (int)v.pid, KPC_VMM_COMM, "auto", 8);
	KT_EXPECT(strstr(kpc_out, line),
		  "vms names the VM's process, pid %d and comm %s: %s",
		  (int)v.pid, KPC_VMM_COMM, kpc_out);

	kpc_vmm_alive(&v, "before set");
	KT_EXPECT(kpc_vmm_in_syscall(&v, v.pid, SYS_read),
		  "the VMM's main thread sleeps in read(2)");
	/* Five switches: each a GET, a SET and a GET by the VMM's main thread. */
	probe = kpc_kprobe_begin(v.pid);
	kpc_test_set_switch(&v, pid);
	if (probe) {
		calls = kpc_kprobe_end();
		KT_EXPECT(calls == 15,
			  "kvm_prefetch_vm_ioctl() ran %ld times in the VMM's main thread (want 15: the VMM set up the policy's state)",
			  calls);
	} else {
		kt_info("no kprobe on kvm_prefetch_vm_ioctl: not counting");
	}
	kpc_test_set_charged(&v, pid);
	kpc_test_set_in_handler(&v, pid);
	kpc_test_set_signals(&v, pid);
	kpc_test_set_refused(&v, pid);
	kpc_vmm_alive(&v, "after the refused sets");
	KT_EXPECT(kpc_vmm_stop_wait(&v),
		  "the guest ran until stopped, every page right, every message whole");
	kpc_test_set_single();
	kpc_test_set_two();
	kpc_test_set_seccomp();
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
	kpc_expect(5, KPC("set", "--pid", "1", "none"), "set on stock kvm.ko");

	KT_ASSERT(system("rmmod kvm_amd && rmmod kvm") == 0, "rmmod kvm");
	if (kpc_expect(4, KPC("status"), "status without kvm.ko"))
		KT_EXPECT(strstr(kpc_err, "not loaded"), "and says so: %s",
			  kpc_err);
	kpc_expect(4, KPC("vms"), "vms without kvm.ko");
	kpc_expect(4, KPC("set-default", "--gup", "fast"),
		   "set-default without kvm.ko");
	kpc_expect(4, KPC("set", "--pid", "1", "none"), "set without kvm.ko");
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
	kpc_test_set_pid();
	kpc_test_exit_codes();

	KT_EXPECT(ktsys_restore() == 0, "kvm-reload ours");
	return kt_exit();
}
