// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-prefetch - the operator's view of kvm-prefetch's KVM.
 *
 *   kvm-prefetch [status]	is the loaded kvm.ko ours, its policies, defaults
 *   kvm-prefetch set-default	change the defaults of new VMs (--persist:
 *				also in /etc/modprobe.d/kvm-prefetch.conf)
 *   kvm-prefetch vms		one line per VM: its process, policy and
 *				the policy's effect
 *   kvm-prefetch set --pid	change the policy of a running VM: the
 *				VMM issues the ioctl itself, made to by
 *				ptrace (x86-64)
 *
 * Everything comes from kvm.ko's parameters in /sys/module/kvm/, each
 * VM's debugfs directory and /proc; see kvm-prefetch(8).  Each kind of
 * failure an operator can fix has its own exit code (enum kp_exit).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/kvm.h>
#include <linux/kvm_prefetch.h>
#include <linux/seccomp.h>

#define KP_MODULE_DIR	"/sys/module/kvm"
#define KP_PARAM_DIR	KP_MODULE_DIR "/parameters/"
#define KP_CONF		"/etc/modprobe.d/kvm-prefetch.conf"
#define KP_LINE_MAX	512

#ifndef KP_VERSION
#define KP_VERSION	"unknown"
#endif

enum kp_exit {
	KP_EXIT_OK		= 0,
	KP_EXIT_ERROR		= 1,	/* anything else; the message says */
	KP_EXIT_USAGE		= 2,	/* bad command line or value */
	KP_EXIT_NOT_ROOT	= 3,
	KP_EXIT_NO_KVM		= 4,	/* kvm.ko is not loaded */
	KP_EXIT_STOCK_KVM	= 5,	/* kvm.ko has no prefetch framework */
	KP_EXIT_NO_DEBUGFS	= 6,
	KP_EXIT_UNKNOWN_POLICY	= 7,
	KP_EXIT_NO_PTRACE	= 8,	/* set: no ptrace rights over the VMM */
	KP_EXIT_NO_VM		= 9,	/* set: no such process, or no VM there */
	KP_EXIT_MANY_VMS	= 10,	/* set: several VMs and no --fd */
	KP_EXIT_NO_BPF		= 11,	/* bpf: no BPF policy type or loader */
};

/* The three defaults of new VMs, as kvm.ko's parameters name them. */
enum kp_param { KP_POLICY, KP_NR_PAGES, KP_GUP, KP_NR_PARAMS };

static const char *const kp_param_names[KP_NR_PARAMS] = {
	[KP_POLICY]	= "prefetch_policy",
	[KP_NR_PAGES]	= "prefetch_nr_pages",
	[KP_GUP]	= "prefetch_gup",
};

/* Short names, as "status" and the debugfs line print them. */
static const char *const kp_param_short[KP_NR_PARAMS] = {
	[KP_POLICY]	= "policy",
	[KP_NR_PAGES]	= "nr_pages",
	[KP_GUP]	= "gup",
};

/* Room for one parameter's value, as sysfs or the conffile give it. */
#define KP_VALUE_MAX	(KVM_PREFETCH_POLICY_NAME_MAX + 16)

static const char *kp_prog = "kvm-prefetch";

static int kp_err(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print "kvm-prefetch: <message>" on stderr; return @code. */
static int kp_err(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", kp_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

/* ---- files ---------------------------------------------------------- */

/* Read the first line of @path, without its newline; 0 or -errno. */
static int kp_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		ret = ferror(f) ? -EIO : -ENODATA;
	fclose(f);
	if (!ret)
		buf[strcspn(buf, "\n")] = '\0';
	return ret;
}

/* One write(2) of @val to @path; 0 or -errno (the kernel's error). */
static int kp_write(const char *path, const char *val)
{
	ssize_t len = strlen(val), n;
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return n;
	return n == len ? 0 : -EIO;
}

static int kp_param_read(enum kp_param p, char *buf, size_t len)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), KP_PARAM_DIR "%s", kp_param_names[p]);
	return kp_read_line(path, buf, len);
}

/* ---- what is loaded ------------------------------------------------- */

/*
 * KP_EXIT_OK if the loaded kvm.ko is ours, otherwise the exit code that
 * says why not, with its message printed.
 */
static int kp_check_kvm(void)
{
	if (access(KP_MODULE_DIR, F_OK))
		return kp_err(KP_EXIT_NO_KVM,
			      "kvm is not loaded (modprobe kvm_amd or kvm_intel first)");
	if (access(KP_PARAM_DIR "prefetch_available", F_OK))
		return kp_err(KP_EXIT_STOCK_KVM,
			      "the loaded kvm.ko has no prefetch policies: it is not kvm-prefetch's (stock module loaded? see modinfo -n kvm)");
	return KP_EXIT_OK;
}

static int kp_check_root(const char *what)
{
	if (geteuid() == 0)
		return KP_EXIT_OK;
	return kp_err(KP_EXIT_NOT_ROOT, "%s needs root", what);
}

/*
 * Find where debugfs is mounted (normally /sys/kernel/debug) and put its
 * kvm directory in @dir; KP_EXIT_NO_DEBUGFS with a message if it is not.
 */
static int kp_debugfs_kvm(char *dir, size_t len)
{
	char line[KP_LINE_MAX], mnt[256], type[64];
	FILE *f = fopen("/proc/mounts", "r");
	bool found = false;

	if (f) {
		while (!found && fgets(line, sizeof(line), f))
			found = sscanf(line, "%*s %255s %63s", mnt, type) == 2 &&
				!strcmp(type, "debugfs");
		fclose(f);
	}
	if (!found)
		return kp_err(KP_EXIT_NO_DEBUGFS,
			      "debugfs is not mounted (mount -t debugfs none /sys/kernel/debug)");
	snprintf(dir, len, "%s/kvm", mnt);
	return KP_EXIT_OK;
}

/* ---- the persistent defaults ---------------------------------------- */

/*
 * Split @line (modified) into @words (at most @max), their number in
 * @nwords.  Return: true if it is an "options kvm ..." line.
 */
static bool kp_conf_split(char *line, char **words, int max, int *nwords)
{
	char *save, *w;
	int n = 0;

	for (w = strtok_r(line, " \t\n", &save); w && n < max;
	     w = strtok_r(NULL, " \t\n", &save))
		words[n++] = w;
	*nwords = n;
	return n >= 2 && !strcmp(words[0], "options") &&
	       !strcmp(words[1], "kvm");
}

/* The parameter that @word sets ("prefetch_gup=fast"), or -1. */
static int kp_conf_param(const char *word)
{
	int p;

	for (p = 0; p < KP_NR_PARAMS; p++) {
		size_t l = strlen(kp_param_names[p]);

		if (!strncmp(word, kp_param_names[p], l) && word[l] == '=')
			return p;
	}
	return -1;
}

/*
 * The values the conffile sets, in @vals (empty string: not set).
 * Returns 0, or -errno if the file cannot be read.
 */
static int kp_conf_read(char vals[KP_NR_PARAMS][KP_VALUE_MAX])
{
	char line[KP_LINE_MAX], *words[32];
	FILE *f = fopen(KP_CONF, "r");
	int i, n, p;

	for (p = 0; p < KP_NR_PARAMS; p++)
		vals[p][0] = '\0';
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!kp_conf_split(line, words, 32, &n))
			continue;
		for (i = 2; i < n; i++) {
			p = kp_conf_param(words[i]);
			if (p >= 0)
				snprintf(vals[p], sizeof(vals[p]), "%s",
					 strchr(words[i], '=') + 1);
		}
	}
	fclose(f);
	return 0;
}

/*
 * Rewrite the conffile so that it sets @vals: the first "options kvm"
 * line that sets any of them becomes one line per parameter, later
 * settings of them are dropped, everything else (comments, other
 * options) is kept.  Without such a line they are appended.  Written to
 * a temporary file and renamed, so a reader sees the old or new file.
 */
static int kp_conf_write(char vals[KP_NR_PARAMS][KP_VALUE_MAX])
{
	char line[KP_LINE_MAX], copy[KP_LINE_MAX], tmp[PATH_MAX];
	char *words[32];
	bool done = false;
	FILE *in, *out;
	int fd, i, n, p;

	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", KP_CONF);
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	fchmod(fd, 0644);
	out = fdopen(fd, "w");
	if (!out) {
		close(fd);
		unlink(tmp);
		return -ENOMEM;
	}
	in = fopen(KP_CONF, "r");
	if (!in)
		fputs("# Defaults of new VMs for kvm-prefetch's kvm.ko, written by kvm-prefetch set-default --persist.\n",
		      out);
	while (in && fgets(line, sizeof(line), in)) {
		bool sets = false, others = false;

		snprintf(copy, sizeof(copy), "%s", line);
		if (!kp_conf_split(copy, words, 32, &n)) {
			fputs(line, out);
			continue;
		}
		for (i = 2; i < n; i++) {
			if (kp_conf_param(words[i]) >= 0)
				sets = true;
			else
				others = true;
		}
		if (!sets) {
			fputs(line, out);
			continue;
		}
		if (others) {
			fputs("options kvm", out);
			for (i = 2; i < n; i++)
				if (kp_conf_param(words[i]) < 0)
					fprintf(out, " %s", words[i]);
			fputc('\n', out);
		}
		for (p = 0; !done && p < KP_NR_PARAMS; p++)
			fprintf(out, "options kvm %s=%s\n", kp_param_names[p],
				vals[p]);
		done = true;
	}
	for (p = 0; !done && p < KP_NR_PARAMS; p++)
		fprintf(out, "options kvm %s=%s\n", kp_param_names[p], vals[p]);
	if (in)
		fclose(in);
	if (fclose(out) || rename(tmp, KP_CONF)) {
		int err = -errno;

		unlink(tmp);
		return err;
	}
	return 0;
}

/* ---- status --------------------------------------------------------- */

static int kp_status(void)
{
	char conf[KP_NR_PARAMS][KP_VALUE_MAX];
	char buf[KP_LINE_MAX], ver[128], src[128];
	int p, ret;

	ret = kp_check_kvm();
	if (ret)
		return ret;

	/* Only the packaged build (DKMS) stamps a version into kvm.ko. */
	if (kp_read_line(KP_MODULE_DIR "/srcversion", src, sizeof(src)))
		src[0] = '\0';
	if (!kp_read_line(KP_MODULE_DIR "/version", ver, sizeof(ver)))
		printf("kvm:         kvm-prefetch's, version %s%s%s\n", ver,
		       src[0] ? ", srcversion " : "", src);
	else
		printf("kvm:         kvm-prefetch's, no version (not built by the package)\n");

	if (kp_read_line(KP_PARAM_DIR "prefetch_available", buf, sizeof(buf)))
		return kp_err(KP_EXIT_ERROR, "cannot read prefetch_available");
	printf("policies:    %s\n", buf);

	printf("defaults:   ");
	for (p = 0; p < KP_NR_PARAMS; p++) {
		if (kp_param_read(p, buf, sizeof(buf)))
			snprintf(buf, sizeof(buf), "?");
		printf(" %s=%s", kp_param_short[p], buf);
	}
	printf("\n");

	printf("persistent: ");
	if (kp_conf_read(conf)) {
		printf(" none (no %s)\n", KP_CONF);
		return KP_EXIT_OK;
	}
	for (p = 0; p < KP_NR_PARAMS; p++)
		if (conf[p][0])
			printf(" %s=%s", kp_param_short[p], conf[p]);
	printf(" (%s)\n", KP_CONF);
	return KP_EXIT_OK;
}

/* ---- set-default ---------------------------------------------------- */

static bool kp_policy_name_ok(const char *name)
{
	size_t len = strlen(name);

	if (!len || len >= KVM_PREFETCH_POLICY_NAME_MAX)
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == len;
}

/* Check a value given for @p before the kernel sees it. */
static int kp_validate(enum kp_param p, const char *val)
{
	unsigned long n;
	char *end;

	switch (p) {
	case KP_POLICY:
		if (kp_policy_name_ok(val))
			return KP_EXIT_OK;
		return kp_err(KP_EXIT_USAGE,
			      "invalid policy name '%s': 1 to %d characters of a-z, 0-9, _ and -",
			      val, KVM_PREFETCH_POLICY_NAME_MAX - 1);
	case KP_NR_PAGES:
		errno = 0;
		n = strtoul(val, &end, 10);
		if (*val >= '0' && *val <= '9' && !*end && !errno &&
		    n <= KVM_PREFETCH_MAX_PAGES)
			return KP_EXIT_OK;
		return kp_err(KP_EXIT_USAGE,
			      "invalid --nr-pages '%s': a number of 4 KiB pages from 0 to %d",
			      val, KVM_PREFETCH_MAX_PAGES);
	case KP_GUP:
		if (!strcmp(val, "nofault") || !strcmp(val, "fast"))
			return KP_EXIT_OK;
		return kp_err(KP_EXIT_USAGE,
			      "invalid --gup '%s': nofault or fast", val);
	default:
		return KP_EXIT_USAGE;
	}
}

/* Set @p to @val in the running kvm.ko; explain what the kernel said. */
static int kp_set_param(enum kp_param p, const char *val)
{
	char path[PATH_MAX], avail[KP_LINE_MAX];
	int err;

	snprintf(path, sizeof(path), KP_PARAM_DIR "%s", kp_param_names[p]);
	err = kp_write(path, val);
	switch (-err) {
	case 0:
		return KP_EXIT_OK;
	case EACCES:
	case EPERM:
		return kp_err(KP_EXIT_NOT_ROOT, "%s: %s (needs root)", path,
			      strerror(-err));
	case ENOENT:
		if (p != KP_POLICY)
			break;
		if (kp_read_line(KP_PARAM_DIR "prefetch_available", avail,
				 sizeof(avail)))
			avail[0] = '\0';
		return kp_err(KP_EXIT_UNKNOWN_POLICY,
			      "unknown policy '%s': none is registered under that name and no module kvm-prefetch-%s could be loaded (registered: %s)",
			      val, val, avail);
	case EBUSY:
		if (p != KP_POLICY)
			break;
		return kp_err(KP_EXIT_ERROR,
			      "policy '%s' is being unloaded (its module is going away); try again",
			      val);
	case EINVAL:
		return kp_err(KP_EXIT_USAGE, "kvm.ko rejected %s=%s as invalid",
			      kp_param_names[p], val);
	}
	return kp_err(KP_EXIT_ERROR, "writing %s to %s: %s", val, path,
		      strerror(-err));
}

static void kp_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [status]\n"
		"       %s set-default [--policy P] [--nr-pages N] [--gup nofault|fast] [--persist]\n"
		"       %s vms\n"
		"       %s set --pid PID [--fd N] POLICY [--nr-pages N] [--gup nofault|fast]\n"
		"       %s bpf load FILE | bpf unload NAME | bpf list\n"
		"       %s --help | --version\n"
		"\n"
		"  status       whether the loaded kvm.ko is kvm-prefetch's, its version,\n"
		"               the registered policies, the defaults of new VMs and\n"
		"               those " KP_CONF " sets\n"
		"  set-default  change the defaults of new VMs in the running kvm.ko\n"
		"               (needs root); --persist also writes them to\n"
		"               " KP_CONF " for the next load\n"
		"  vms          one line per VM: its debugfs name, the pid and comm of\n"
		"               its process, policy, nr_pages, gup, prefetch windows,\n"
		"               pages mapped, guest faults, and the precision and\n"
		"               coverage of prefetch (root)\n"
		"  set          change the policy of a running VM of process PID (its\n"
		"               only VM, or the one on its fd N); --nr-pages and --gup\n"
		"               not given keep the VM's values.  Needs the ptrace\n"
		"               rights of a debugger over PID\n"
		"  bpf          load a policy written in BPF (an object with a\n"
		"               kvm_prefetch_ops struct_ops map; Linux 6.9+), unload\n"
		"               it (VMs that use it keep it) or list those loaded\n"
		"\n"
		"Exit codes: 0 ok, 1 other error, 2 usage or invalid value, 3 not root,\n"
		"4 kvm not loaded, 5 stock kvm loaded, 6 debugfs not mounted,\n"
		"7 unknown policy, 8 no ptrace rights over PID, 9 no such process or\n"
		"VM, 10 several VMs and no --fd, 11 no BPF policies here.\n"
		"See kvm-prefetch(8).\n",
		kp_prog, kp_prog, kp_prog, kp_prog, kp_prog, kp_prog);
}

/*
 * A subcommand's options: --@name with an argument (into *@arg) or, with
 * @arg NULL, a flag (*@flag set).  --help is every subcommand's.
 */
struct kp_opt {
	const char *name;
	const char **arg;
	bool *flag;
};

#define KP_MAX_OPTS	8

/*
 * getopt_long() over @opts (@n of them, at most KP_MAX_OPTS): -1 when
 * all parsed (optind at the first operand), else the exit code (--help:
 * the usage on stdout, KP_EXIT_OK; an unknown option: KP_EXIT_USAGE).
 */
static int kp_getopt(int argc, char **argv, const struct kp_opt *opts, int n)
{
	struct option lo[KP_MAX_OPTS + 2] = { { NULL, 0, NULL, 0 } };
	int c, i;

	for (i = 0; i < n; i++)
		lo[i] = (struct option){ opts[i].name,
			opts[i].arg ? required_argument : no_argument, NULL, i };
	lo[n] = (struct option){ "help", no_argument, NULL, 'h' };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c >= 0 && c < n && opts[c].arg) {
			*opts[c].arg = optarg;
		} else if (c >= 0 && c < n) {
			*opts[c].flag = true;
		} else if (c == 'h') {
			kp_usage(stdout);
			return KP_EXIT_OK;
		} else {
			kp_usage(stderr);
			return KP_EXIT_USAGE;
		}
	}
	return -1;
}

static int kp_set_default(int argc, char **argv)
{
	char conf[KP_NR_PARAMS][KP_VALUE_MAX];
	const char *vals[KP_NR_PARAMS] = { NULL };
	bool persist = false, any = false;
	const struct kp_opt opts[] = {
		{ "policy", &vals[KP_POLICY], NULL },
		{ "nr-pages", &vals[KP_NR_PAGES], NULL },
		{ "gup", &vals[KP_GUP], NULL },
		{ "persist", NULL, &persist },
	};
	int p, ret;

	ret = kp_getopt(argc, argv, opts, sizeof(opts) / sizeof(opts[0]));
	if (ret >= 0)
		return ret;
	if (optind != argc)
		return kp_err(KP_EXIT_USAGE, "set-default: unexpected '%s'",
			      argv[optind]);
	for (p = 0; p < KP_NR_PARAMS; p++) {
		if (!vals[p])
			continue;
		any = true;
		ret = kp_validate(p, vals[p]);
		if (ret)
			return ret;
	}
	if (!any && !persist)
		return kp_err(KP_EXIT_USAGE,
			      "set-default: give --policy, --nr-pages, --gup or --persist");

	ret = kp_check_root("set-default");
	if (!ret)
		ret = kp_check_kvm();
	if (ret)
		return ret;

	/* The policy first: it is the one the kernel may refuse. */
	for (p = 0; p < KP_NR_PARAMS; p++) {
		if (!vals[p])
			continue;
		ret = kp_set_param(p, vals[p]);
		if (ret)
			return ret;
	}
	if (!persist)
		return KP_EXIT_OK;

	/* Persist what the kernel now uses, all three. */
	for (p = 0; p < KP_NR_PARAMS; p++)
		if (kp_param_read(p, conf[p], sizeof(conf[p])))
			return kp_err(KP_EXIT_ERROR, "cannot read %s",
				      kp_param_names[p]);
	ret = kp_conf_write(conf);
	if (ret)
		return kp_err(KP_EXIT_ERROR, "writing %s: %s", KP_CONF,
			      strerror(-ret));
	printf("%s: policy=%s nr_pages=%s gup=%s\n", KP_CONF, conf[KP_POLICY],
	       conf[KP_NR_PAGES], conf[KP_GUP]);
	return KP_EXIT_OK;
}

/* ---- vms ------------------------------------------------------------ */

/* A debugfs VM directory is "<pid>-<vm fd>". */
static bool kp_is_vm_dir(const char *name)
{
	size_t pid = strspn(name, "0123456789");

	return pid && name[pid] == '-' && name[pid + 1] &&
	       strspn(name + pid + 1, "0123456789") == strlen(name + pid + 1);
}

/*
 * Read the first line of <@kvmdir>/<@vm>/<@file> into @buf, or put
 * "-" there if it cannot be read (the VM may be gone already).
 * Return: 0 if read.
 */
static int kp_vm_file(const char *kvmdir, const char *vm, const char *file,
		      char *buf, size_t len)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s/%s", kvmdir, vm, file);

	if (n > 0 && (size_t)n < sizeof(path) &&
	    !kp_read_line(path, buf, len))
		return 0;
	snprintf(buf, len, "-");
	return -1;
}

/* The number after @field (e.g. "Tgid:") in the status file @path, or -1. */
static long kp_status_field(const char *path, const char *field)
{
	char line[KP_LINE_MAX];
	size_t n = strlen(field);
	long val = -1;
	FILE *f = fopen(path, "r");

	while (f && val < 0 && fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) || sscanf(line + n, "%ld", &val) != 1)
			val = -1;
	if (f)
		fclose(f);
	return val;
}

/*
 * The process that created VM @vm ("<pid>-<fd>"): its pid in @pid and
 * its comm in @comm, or "-" where it is gone.  The pid of the name is
 * the creating thread's, which need not be the process's own: the
 * process is that thread's Tgid.
 */
static void kp_vm_owner(const char *vm, char *pid, size_t plen, char *comm,
			size_t clen)
{
	char path[PATH_MAX];
	long tid = strtol(vm, NULL, 10), tgid;

	snprintf(path, sizeof(path), "/proc/%ld/status", tid);
	tgid = kp_status_field(path, "Tgid:");
	snprintf(pid, plen, "-");
	snprintf(comm, clen, "-");
	if (tgid <= 0)
		return;
	snprintf(pid, plen, "%ld", tgid);
	snprintf(path, sizeof(path), "/proc/%ld/comm", tgid);
	if (kp_read_line(path, comm, clen))
		snprintf(comm, clen, "-");
}

/*
 * The value of " @key=" in @line (the VM's prefetch_usage line) into
 * @buf, or "-" if it has none.
 */
static void kp_usage_field(const char *line, const char *key, char *buf,
			   size_t len)
{
	size_t n = strlen(key);
	const char *p = line;

	snprintf(buf, len, "-");
	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[n] == '=') {
			snprintf(buf, len, "%.*s", (int)strcspn(p + n + 1, " \n"),
				 p + n + 1);
			return;
		}
		p += n;
	}
}

static void kp_vm_line(const char *kvmdir, const char *vm)
{
	char policy[KVM_PREFETCH_POLICY_NAME_MAX] = "-", gup[16] = "-";
	char line[KP_LINE_MAX], win[32], mapped[32], faults[32];
	char pid[24], comm[32], precision[16], coverage[16];
	unsigned int nr = 0;

	/* "auto nr_pages=8 gup=nofault" */
	if (!kp_vm_file(kvmdir, vm, "prefetch_policy", line, sizeof(line)) &&
	    sscanf(line, "%15s nr_pages=%u gup=%15s", policy, &nr, gup) != 3) {
		snprintf(policy, sizeof(policy), "?");
		snprintf(gup, sizeof(gup), "?");
	}
	/* VM-wide sums of the vCPU counters. */
	kp_vm_file(kvmdir, vm, "prefetch_windows", win, sizeof(win));
	kp_vm_file(kvmdir, vm, "prefetch_mapped", mapped, sizeof(mapped));
	kp_vm_file(kvmdir, vm, "pf_taken", faults, sizeof(faults));
	/* "used=... precision=13.3% coverage=66.4%", where KVM has it. */
	kp_vm_file(kvmdir, vm, "prefetch_usage", line, sizeof(line));
	kp_usage_field(line, "precision", precision, sizeof(precision));
	kp_usage_field(line, "coverage", coverage, sizeof(coverage));
	kp_vm_owner(vm, pid, sizeof(pid), comm, sizeof(comm));
	printf("%-16s %7s %-15s %-15s %8u %-7s %12s %12s %12s %9s %9s\n", vm,
	       pid, comm, policy, nr, gup, win, mapped, faults, precision,
	       coverage);
}

static int kp_vms(void)
{
	char kvmdir[PATH_MAX];
	struct dirent **list;
	int i, n, ret;

	ret = kp_check_root("vms (debugfs)");
	if (!ret)
		ret = kp_check_kvm();
	if (!ret)
		ret = kp_debugfs_kvm(kvmdir, sizeof(kvmdir));
	if (ret)
		return ret;

	n = scandir(kvmdir, &list, NULL, alphasort);
	if (n < 0)
		return kp_err(KP_EXIT_ERROR, "%s: %s", kvmdir, strerror(errno));
	printf("%-16s %7s %-15s %-15s %8s %-7s %12s %12s %12s %9s %9s\n", "VM",
	       "PID", "COMM", "POLICY", "NR_PAGES", "GUP", "WINDOWS", "MAPPED",
	       "GUEST_FAULTS", "PRECISION", "COVERAGE");
	for (i = 0; i < n; i++) {
		if (kp_is_vm_dir(list[i]->d_name))
			kp_vm_line(kvmdir, list[i]->d_name);
		free(list[i]);
	}
	free(list);
	return KP_EXIT_OK;
}

/* ---- set --pid ------------------------------------------------------ */

/* What /proc/<pid>/fd/<fd> links to for a VM fd. */
#define KP_VM_LINK	"anon_inode:kvm-vm"
#define KP_MAX_VM_FDS	16

/* A pid or fd number from the command line: -1 if it is not one. */
static long kp_number(const char *s, long max)
{
	unsigned long n;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoul(s, &end, 10);
	return *end || errno || n > (unsigned long)max ? -1 : (long)n;
}

/* Where /proc/@pid/fd/@fd links to in @buf; 0 or -errno. */
static int kp_fd_link(long pid, long fd, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%ld/fd/%ld", pid, fd);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int kp_no_ptrace(long pid, int err)
{
	return kp_err(KP_EXIT_NO_PTRACE,
		      "no right to ptrace process %ld (%s): set --pid makes the VMM issue the ioctl itself, which needs the ptrace rights of a debugger over it (root, or its user where kernel.yama.ptrace_scope allows)",
		      pid, strerror(err));
}

/* @fd of process @pid if it is a VM fd, or the negated exit code. */
static long kp_given_vm_fd(long pid, long fd)
{
	char link[64];
	int err = kp_fd_link(pid, fd, link, sizeof(link));

	if (err == -EACCES || err == -EPERM)
		return -kp_no_ptrace(pid, -err);
	if (err)
		return -kp_err(KP_EXIT_NO_VM, "process %ld has no fd %ld (%s)",
			       pid, fd, strerror(-err));
	if (strcmp(link, KP_VM_LINK))
		return -kp_err(KP_EXIT_NO_VM,
			       "fd %ld of process %ld is not a KVM VM but %s",
			       fd, pid, link);
	return fd;
}

/* The VM fds of process @pid in @fds (up to @max); their number or -errno. */
static int kp_scan_vm_fds(long pid, long *fds, int max)
{
	char path[64], link[64];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		long f = kp_number(d->d_name, INT_MAX);

		if (f < 0 || kp_fd_link(pid, f, link, sizeof(link)) ||
		    strcmp(link, KP_VM_LINK))
			continue;
		if (n < max)
			fds[n] = f;
		n++;
	}
	closedir(dir);
	return n;
}

/*
 * The VM fd of process @pid: @fd if that is one (>= 0), otherwise its
 * only VM fd.  Return: the fd, or the negated exit code, message printed.
 */
static long kp_find_vm_fd(long pid, long fd)
{
	char path[64], list[KP_LINE_MAX];
	long fds[KP_MAX_VM_FDS];
	int n, i, len = 0;

	snprintf(path, sizeof(path), "/proc/%ld", pid);
	if (access(path, F_OK))
		return -kp_err(KP_EXIT_NO_VM, "no process %ld", pid);
	if (fd >= 0)
		return kp_given_vm_fd(pid, fd);

	n = kp_scan_vm_fds(pid, fds, KP_MAX_VM_FDS);
	if (n == -ENOENT)
		return -kp_err(KP_EXIT_NO_VM, "no process %ld", pid);
	if (n == -EACCES || n == -EPERM)
		return -kp_no_ptrace(pid, -n);
	if (n < 0)
		return -kp_err(KP_EXIT_ERROR, "/proc/%ld/fd: %s", pid,
			       strerror(-n));
	if (!n)
		return -kp_err(KP_EXIT_NO_VM,
			       "process %ld has no KVM VM open (no fd is " KP_VM_LINK ")",
			       pid);
	if (n == 1)
		return fds[0];
	list[0] = '\0';
	for (i = 0; i < n && i < KP_MAX_VM_FDS; i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%ld",
				i ? ", " : "", fds[i]);
	return -kp_err(KP_EXIT_MANY_VMS,
		       "process %ld has %d VMs, on fds %s%s: choose one with --fd",
		       pid, n, list, n > KP_MAX_VM_FDS ? " ..." : "");
}

/*
 * The VMM issues the ioctls itself: KVM takes VM ioctls only from the
 * process that created the VM (kvm->mm == current->mm), and the policy's
 * per-VM state belongs to that process (its memory cgroup).  Like a
 * debugger's "call" command, set --pid stops one thread of the VMM with
 * PTRACE_SEIZE + PTRACE_INTERRUPT, saves its registers, points it at a
 * syscall instruction with the ioctl's number and arguments, lets it run
 * exactly that syscall (PTRACE_SYSCALL: stops at entry and exit), reads
 * the result, puts back the registers and the stack bytes it used, and
 * detaches.  No code is written: the syscall instruction is the one the
 * thread stopped behind, or one in the vDSO.  The thread's interrupted
 * syscall restarts as after any ptrace stop; its signals are blocked
 * while it is ours, so that they stay pending, siginfo and all.  A
 * seccomp filter that would kill or trap the VMM for the ioctl is met
 * by a refusal instead.  x86-64 only.
 */
#if defined(__x86_64__)
#define KP_HAVE_INJECT	1
#define KP_MAX_SIGS	8
#define KP_REDZONE	128

struct kp_tracee {
	pid_t pid, tid;
	int mem;			/* /proc/<pid>/mem */
	bool stopped;			/* in a ptrace stop, ours to drive */
	struct user_regs_struct saved;	/* as the thread stopped */
	bool have_regs;			/* saved is read: put it back */
	unsigned long sysinsn;		/* address of a "syscall" */
	unsigned long scratch;		/* stack room for the argument */
	unsigned char scratch_saved[sizeof(struct kvm_prefetch_policy)];
	bool scratch_used;
	unsigned long long sigmask;	/* its signal mask, as it stopped */
	bool masked;			/* all blocked while it is ours */
	int nr_sigs;			/* unblockable signals it dequeued */
	siginfo_t sigs[KP_MAX_SIGS];
};

/*
 * How good thread @tid of @pid is to stop, from /proc/<pid>/task/<tid>/
 * syscall: 2 asleep in a syscall that is not KVM_RUN (surely no vCPU at
 * work), 1 on a CPU ("running": maybe a vCPU in guest mode), 0 asleep in
 * KVM_RUN (a vCPU whose guest halted).
 */
static int kp_thread_score(long pid, long tid)
{
	char path[96], line[KP_LINE_MAX];
	unsigned long nr, fd, cmd;

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/syscall", pid, tid);
	if (kp_read_line(path, line, sizeof(line)) ||
	    !strncmp(line, "running", 7))
		return 1;
	if (sscanf(line, "%lu %lx %lx", &nr, &fd, &cmd) == 3 &&
	    nr == SYS_ioctl && cmd == KVM_RUN)
		return 0;
	return 2;
}

/*
 * The thread of @pid to make issue the ioctl: the main thread unless
 * another one is surely not running a vCPU while it may be.  If every
 * thread may run a vCPU, the main thread: if it is in KVM_RUN, that
 * returns EINTR (KVM_EXIT_INTR) once, as on any signal that kicks a vCPU.
 */
static long kp_pick_thread(long pid)
{
	int best = kp_thread_score(pid, pid), score;
	long tid = pid;
	char path[64];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	dir = opendir(path);
	while (dir && best < 2 && (d = readdir(dir))) {
		long t = kp_number(d->d_name, INT_MAX);

		if (t <= 0 || t == pid)
			continue;
		score = kp_thread_score(pid, t);
		if (score > best) {
			best = score;
			tid = t;
		}
	}
	if (dir)
		closedir(dir);
	return tid;
}

/* Remember signal-delivery-stop's signal of @t, to send it again later. */
static void kp_keep_signal(struct kp_tracee *t, int sig)
{
	siginfo_t si;
	int i;

	memset(&si, 0, sizeof(si));
	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si)) {
		si.si_signo = sig;
		si.si_code = SI_KERNEL;
	}
	/* A standard signal already kept would have merged with this one. */
	for (i = 0; i < t->nr_sigs; i++)
		if (t->sigs[i].si_signo == sig && sig < SIGRTMIN)
			return;
	if (t->nr_sigs < KP_MAX_SIGS)
		t->sigs[t->nr_sigs++] = si;
}

/*
 * Resume @t with @req (PTRACE_CONT or PTRACE_SYSCALL) until it stops in
 * a way @want accepts: @want 0 is any ptrace-event stop (our interrupt),
 * SIGTRAP | 0x80 a syscall stop.  A signal-delivery-stop on the way is
 * resumed with its signal if @deliver (the thread takes it as without
 * us), otherwise kept (kp_keep_signal()) and suppressed; other event
 * stops (group stop) are resumed.  Return: 0, or -ESRCH if the thread
 * is gone.
 */
static int kp_wait_stop(struct kp_tracee *t, int want, int req, bool resume,
			bool deliver)
{
	int st, sig = 0;

	for (;;) {
		if (resume && ptrace(req, t->tid, 0, sig))
			return -errno;
		resume = true;
		sig = 0;
		if (waitpid(t->tid, &st, __WALL) != t->tid)
			return -errno;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			t->stopped = false;
			return -ESRCH;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (want == 0 && st >> 16 == PTRACE_EVENT_STOP)
			return 0;
		if (want && WSTOPSIG(st) == want)
			return 0;
		if (st >> 16 || WSTOPSIG(st) == (SIGTRAP | 0x80))
			continue;
		if (deliver)
			sig = WSTOPSIG(st);
		else
			kp_keep_signal(t, WSTOPSIG(st));
	}
}

static int kp_mem_rw(struct kp_tracee *t, bool write, unsigned long addr,
		     void *buf, size_t len)
{
	ssize_t n = write ? pwrite(t->mem, buf, len, addr) :
			    pread(t->mem, buf, len, addr);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/*
 * A "syscall" instruction (0f 05) the thread can run: the one it stopped
 * behind if it stopped in a syscall, otherwise the first in the vDSO.
 */
static int kp_find_syscall(struct kp_tracee *t)
{
	unsigned char insn[2], *buf;
	unsigned long lo, hi;
	char path[64], line[KP_LINE_MAX];
	int ret = -ENOENT;
	FILE *f;

	if ((long)t->saved.orig_rax >= 0 &&
	    !kp_mem_rw(t, false, t->saved.rip - 2, insn, 2) &&
	    insn[0] == 0x0f && insn[1] == 0x05) {
		t->sysinsn = t->saved.rip - 2;
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", t->pid);
	f = fopen(path, "r");
	while (f && ret && fgets(line, sizeof(line), f)) {
		unsigned long i;

		if (!strstr(line, "[vdso]") ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2 || hi - lo > 65536)
			continue;
		buf = malloc(hi - lo);
		if (buf && !kp_mem_rw(t, false, lo, buf, hi - lo)) {
			for (i = 0; ret && i + 1 < hi - lo; i++)
				if (buf[i] == 0x0f && buf[i + 1] == 0x05) {
					t->sysinsn = lo + i;
					ret = 0;
				}
		}
		free(buf);
	}
	if (f)
		fclose(f);
	return ret;
}

/* *@a = *@a <@op> @v for classic BPF's ALU @op; false for no such op. */
static bool kp_cbpf_alu(unsigned int op, unsigned int *a, unsigned int v)
{
	static const unsigned int ops[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV,
		BPF_MOD, BPF_OR, BPF_AND, BPF_XOR, BPF_LSH, BPF_RSH, BPF_NEG };
	const unsigned int r[] = {
		*a + v, *a - v, *a * v, v ? *a / v : 0, v ? *a % v : 0,
		*a | v, *a & v, *a ^ v, v < 32 ? *a << v : 0,
		v < 32 ? *a >> v : 0, -*a,
	};
	unsigned int n;

	for (n = 0; n < sizeof(ops) / sizeof(ops[0]); n++)
		if (op == ops[n]) {
			*a = r[n];
			return true;
		}
	return false;
}

/* Classic BPF's conditional jump @op on @a and @v: 1, 0, or -1 (no such op). */
static int kp_cbpf_cond(unsigned int op, unsigned int a, unsigned int v)
{
	switch (op) {
	case BPF_JEQ:
		return a == v;
	case BPF_JGT:
		return a > v;
	case BPF_JGE:
		return a >= v;
	case BPF_JSET:
		return !!(a & v);
	default:
		return -1;
	}
}

/*
 * Run classic BPF program @f (a seccomp filter) on @d.  Return: its
 * SECCOMP_RET_* value; an instruction seccomp would not have accepted
 * counts as SECCOMP_RET_KILL_PROCESS.
 */
static unsigned int kp_cbpf_run(const struct sock_filter *f, int len,
				const struct seccomp_data *d)
{
	unsigned int a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 }, k, v;
	int pc, r;

	for (pc = 0; pc >= 0 && pc < len; pc++) {
		const struct sock_filter *i = &f[pc];

		k = i->k;
		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
		case BPF_LDX:
			if (BPF_MODE(i->code) == BPF_ABS) {
				if (k % 4 || k > sizeof(*d) - 4)
					return SECCOMP_RET_KILL_PROCESS;
				memcpy(&v, (const char *)d + k, 4);
			} else if (BPF_MODE(i->code) == BPF_LEN) {
				v = sizeof(*d);
			} else if (BPF_MODE(i->code) == BPF_IMM) {
				v = k;
			} else if (BPF_MODE(i->code) == BPF_MEM) {
				v = mem[k % BPF_MEMWORDS];
			} else {
				return SECCOMP_RET_KILL_PROCESS;
			}
			if (BPF_CLASS(i->code) == BPF_LD)
				a = v;
			else
				x = v;
			break;
		case BPF_ST:
			mem[k % BPF_MEMWORDS] = a;
			break;
		case BPF_STX:
			mem[k % BPF_MEMWORDS] = x;
			break;
		case BPF_ALU:
			if (!kp_cbpf_alu(BPF_OP(i->code), &a,
					 BPF_SRC(i->code) == BPF_X ? x : k))
				return SECCOMP_RET_KILL_PROCESS;
			break;
		case BPF_JMP:
			if (BPF_OP(i->code) == BPF_JA) {
				pc += k;
				break;
			}
			r = kp_cbpf_cond(BPF_OP(i->code), a,
					 BPF_SRC(i->code) == BPF_X ? x : k);
			if (r < 0)
				return SECCOMP_RET_KILL_PROCESS;
			pc += r ? i->jt : i->jf;
			break;
		case BPF_RET:
			return BPF_RVAL(i->code) == BPF_A ? a : k;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		}
	}
	return SECCOMP_RET_KILL_PROCESS;
}

/*
 * What @t's seccomp filters answer to ioctl(@fd, @cmd, scratch) from the
 * syscall instruction we use: the action of highest precedence over all
 * filters, as the kernel takes it.  Return: 0 with it in *@action, or
 * -errno if the filters cannot be read (PTRACE_SECCOMP_GET_FILTER needs
 * CAP_SYS_ADMIN).
 */
static int kp_seccomp_action(struct kp_tracee *t, long fd, unsigned long cmd,
			     unsigned int *action)
{
	struct seccomp_data d = {
		.nr = SYS_ioctl,
		.arch = AUDIT_ARCH_X86_64,
		.instruction_pointer = t->sysinsn + 2,
		.args = { fd, cmd, t->scratch, t->saved.r10, t->saved.r8,
			  t->saved.r9 },
	};
	struct sock_filter *f;
	unsigned int ret;
	unsigned long i;
	long n;

	*action = SECCOMP_RET_ALLOW;
	for (i = 0; ; i++) {
		n = ptrace(PTRACE_SECCOMP_GET_FILTER, t->tid, i, NULL);
		if (n < 0 && errno == ENOENT && i)
			return 0;
		if (n <= 0)
			return -errno;
		f = calloc(n, sizeof(*f));
		if (!f)
			return -ENOMEM;
		if (ptrace(PTRACE_SECCOMP_GET_FILTER, t->tid, i, f) != n) {
			free(f);
			return -EIO;
		}
		ret = kp_cbpf_run(f, n, &d) & SECCOMP_RET_ACTION_FULL;
		free(f);
		if ((int)ret < (int)*action)
			*action = ret;
	}
}

/* "Seccomp:" of /proc/<pid>/task/<tid>/status: 0 none, 1 strict, 2 filter. */
static int kp_seccomp_mode(struct kp_tracee *t)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", t->pid,
		 t->tid);
	return (int)kp_status_field(path, "Seccomp:");
}

/*
 * Would the VMM survive the ioctls?  A seccomp filter that kills or
 * traps on them (Firecracker's, Cloud Hypervisor's: ioctls they do not
 * know) must not be met.  Return: 0, or the exit code, message printed.
 */
static int kp_seccomp_check(struct kp_tracee *t, long fd)
{
	static const unsigned long cmds[] = {
		KVM_GET_PREFETCH_POLICY, KVM_SET_PREFETCH_POLICY,
	};
	unsigned int action;
	int mode = kp_seccomp_mode(t), err, i;

	if (mode == 0)
		return 0;
	if (mode == 1)
		return kp_err(KP_EXIT_ERROR,
			      "thread %d of process %d runs in seccomp strict mode: it cannot issue the ioctl",
			      t->tid, t->pid);
	for (i = 0; i < 2; i++) {
		err = kp_seccomp_action(t, fd, cmds[i], &action);
		if (err)
			return kp_err(KP_EXIT_ERROR,
				      "process %d has a seccomp filter that cannot be read (%s; it needs CAP_SYS_ADMIN): not making it issue an ioctl that the filter might punish",
				      t->pid, strerror(-err));
		if (action == SECCOMP_RET_KILL_PROCESS ||
		    action == SECCOMP_RET_KILL_THREAD ||
		    action == SECCOMP_RET_TRAP)
			return kp_err(KP_EXIT_ERROR,
				      "the seccomp filter of process %d would %s it for KVM_%s_PREFETCH_POLICY: not issuing it there",
				      t->pid, action == SECCOMP_RET_TRAP ?
				      "send SIGSYS to" : "kill",
				      i ? "SET" : "GET");
	}
	return 0;
}

/*
 * Seize thread @tid of process @pid and stop it.  Return: 0, or the
 * negated exit code, message printed.
 */
static int kp_attach(struct kp_tracee *t, long pid, long tid)
{
	unsigned long long all = ~0ULL;
	char path[64];
	int err;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->mem = -1;
	if (ptrace(PTRACE_SEIZE, tid, 0, PTRACE_O_TRACESYSGOOD)) {
		err = errno;
		if (err == EPERM || err == EACCES)
			return -kp_no_ptrace(pid, err);
		if (err == ESRCH)
			return -kp_err(KP_EXIT_NO_VM, "process %ld has exited",
				       pid);
		return -kp_err(KP_EXIT_ERROR, "ptrace(PTRACE_SEIZE, %ld): %s",
			       tid, strerror(err));
	}
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) ||
	    kp_wait_stop(t, 0, PTRACE_CONT, false, true))
		return -kp_err(KP_EXIT_NO_VM, "process %ld has exited", pid);
	t->stopped = true;
	if (ptrace(PTRACE_GETREGS, tid, 0, &t->saved))
		return -kp_err(KP_EXIT_ERROR, "PTRACE_GETREGS of %ld: %s", tid,
			       strerror(errno));
	t->have_regs = true;
	/*
	 * Signals stay pending while it is ours, with their siginfo.  The
	 * mask read is the thread's own, not a temporary one of ppoll() or
	 * sigsuspend(); setting one clears their TIF_RESTORE_SIGMASK, and
	 * the restarted syscall sets its temporary mask again.
	 */
	if (ptrace(PTRACE_GETSIGMASK, tid, sizeof(t->sigmask), &t->sigmask))
		return -kp_err(KP_EXIT_ERROR, "PTRACE_GETSIGMASK of %ld: %s",
			       tid, strerror(errno));
	t->masked = true;
	if (ptrace(PTRACE_SETSIGMASK, tid, sizeof(all), &all))
		return -kp_err(KP_EXIT_ERROR, "PTRACE_SETSIGMASK of %ld: %s",
			       tid, strerror(errno));
	if (t->saved.cs != 0x33)
		return -kp_err(KP_EXIT_ERROR,
			       "process %ld is not a 64-bit x86 process", pid);
	snprintf(path, sizeof(path), "/proc/%ld/mem", pid);
	t->mem = open(path, O_RDWR | O_CLOEXEC);
	if (t->mem < 0)
		return -kp_err(KP_EXIT_ERROR, "%s: %s", path, strerror(errno));
	if (kp_find_syscall(t))
		return -kp_err(KP_EXIT_ERROR,
			       "no syscall instruction found in process %ld",
			       pid);
	/* Below the red zone, 16-byte aligned, saved to be put back. */
	t->scratch = (t->saved.rsp - KP_REDZONE -
		      sizeof(struct kvm_prefetch_policy)) & ~15UL;
	err = kp_mem_rw(t, false, t->scratch, t->scratch_saved,
			sizeof(t->scratch_saved));
	if (err)
		return -kp_err(KP_EXIT_ERROR, "reading the stack of %ld: %s",
			       tid, strerror(-err));
	t->scratch_used = true;
	return 0;
}

/*
 * Make @t run syscall @nr(@a0, @a1, @a2).  orig_rax -1: the kernel must
 * not take the registers for an interrupted syscall to restart.
 * Return: 0 with the syscall's return value in *@ret, or -errno.
 */
static int kp_inject(struct kp_tracee *t, long nr, unsigned long a0,
		     unsigned long a1, unsigned long a2, long *ret)
{
	struct user_regs_struct r = t->saved;
	int err;

	r.rip = t->sysinsn;
	r.rax = nr;
	r.orig_rax = -1;
	r.rdi = a0;
	r.rsi = a1;
	r.rdx = a2;
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &r))
		return -errno;
	/* Syscall-entry stop, then syscall-exit stop. */
	err = kp_wait_stop(t, SIGTRAP | 0x80, PTRACE_SYSCALL, true, false);
	if (!err)
		err = kp_wait_stop(t, SIGTRAP | 0x80, PTRACE_SYSCALL, true,
				   false);
	if (!err && ptrace(PTRACE_GETREGS, t->tid, 0, &r))
		err = -errno;
	if (err)
		return err;
	if (r.rip != t->sysinsn + 2)
		return -EFAULT;
	*ret = (long)r.rax;
	return 0;
}

/*
 * Put back what @t's stack, registers and signal mask were and detach;
 * then send it again the signals it could not block (SIGSTOP) and
 * dequeued while it was ours.
 */
static void kp_detach(struct kp_tracee *t)
{
	int i;

	if (t->stopped) {
		if (t->scratch_used)
			kp_mem_rw(t, true, t->scratch, t->scratch_saved,
				  sizeof(t->scratch_saved));
		if (t->have_regs)
			ptrace(PTRACE_SETREGS, t->tid, 0, &t->saved);
		if (t->masked)
			ptrace(PTRACE_SETSIGMASK, t->tid, sizeof(t->sigmask),
			       &t->sigmask);
		ptrace(PTRACE_DETACH, t->tid, 0, 0);
	}
	if (t->mem >= 0)
		close(t->mem);
	for (i = 0; t->stopped && i < t->nr_sigs; i++) {
		siginfo_t *si = &t->sigs[i];

		/* The kernel takes a siginfo only of these from another process. */
		if (si->si_code < 0 && si->si_code != SI_TKILL &&
		    !syscall(SYS_rt_tgsigqueueinfo, t->pid, t->tid,
			     si->si_signo, si))
			continue;
		syscall(SYS_tgkill, t->pid, t->tid, si->si_signo);
	}
}
#endif /* __x86_64__ */

#ifdef KP_HAVE_INJECT
/* "auto nr_pages=8 gup=nofault", as debugfs prints a VM's policy. */
static void kp_policy_str(const struct kvm_prefetch_policy *p, char *buf,
			  size_t len)
{
	const char *gup = p->gup == KVM_PREFETCH_GUP_NOFAULT ? "nofault" :
			  p->gup == KVM_PREFETCH_GUP_FAST_ONLY ? "fast" : "?";

	snprintf(buf, len, "%.*s nr_pages=%u gup=%s",
		 KVM_PREFETCH_POLICY_NAME_MAX - 1, p->name, p->nr_pages, gup);
}

/* Explain why kvm.ko refused KVM_GET/SET_PREFETCH_POLICY @p with @err. */
static int kp_set_refused(const struct kvm_prefetch_policy *p, int err)
{
	char avail[KP_LINE_MAX];

	switch (err) {
	case ENOENT:
		if (kp_read_line(KP_PARAM_DIR "prefetch_available", avail,
				 sizeof(avail)))
			avail[0] = '\0';
		return kp_err(KP_EXIT_UNKNOWN_POLICY,
			      "unknown policy '%s' (ENOENT): none is registered under that name and no module kvm-prefetch-%s could be loaded (registered: %s)",
			      p->name, p->name, avail);
	case EINVAL:
		return kp_err(KP_EXIT_USAGE,
			      "kvm.ko rejected policy %s nr_pages=%u gup=%u as invalid (EINVAL)",
			      p->name, p->nr_pages, p->gup);
	case EBUSY:
		return kp_err(KP_EXIT_ERROR,
			      "policy '%s' is being unloaded (EBUSY: its module is going away); try again",
			      p->name);
	case EOPNOTSUPP:
		return kp_err(KP_EXIT_ERROR,
			      "the VM cannot prefetch (EOPNOTSUPP): kvm.ko runs without TDP (npt=0 or ept=0)");
	case EIO:
		return kp_err(KP_EXIT_ERROR,
			      "kvm.ko refused the VM's ioctl (EIO): the VM is dead, or the fd is not the VMM's own VM (inherited or received from another process)");
	}
	return kp_err(KP_EXIT_ERROR, "KVM_SET_PREFETCH_POLICY %s: %s",
		      p->name, strerror(err));
}

/*
 * ioctl(@vmfd, @cmd, @p) in @t.  Return: 0 with the ioctl's 0 or errno in
 * *@ioerr, or -errno if it could not be made (-ESRCH: the VMM is gone).
 */
static int kp_remote_ioctl(struct kp_tracee *t, long vmfd, unsigned long cmd,
			   struct kvm_prefetch_policy *p, int *ioerr)
{
	long ret = 0;
	int err = kp_mem_rw(t, true, t->scratch, p, sizeof(*p));

	if (!err)
		err = kp_inject(t, SYS_ioctl, vmfd, cmd, t->scratch, &ret);
	if (!err && cmd == KVM_GET_PREFETCH_POLICY && !ret)
		err = kp_mem_rw(t, false, t->scratch, p, sizeof(*p));
	*ioerr = ret < 0 && ret >= -4095 ? -ret : 0;
	return err;
}

/*
 * Set the policy of VM fd @fd of process @pid to @name, by that process;
 * a NULL @nr or @gup keeps the VM's value, as KVM_GET_PREFETCH_POLICY
 * reports it (which SET takes back unchanged).
 */
static int kp_set_vm(long pid, long fd, const char *name, const char *nr,
		     const char *gup)
{
	struct kvm_prefetch_policy old, p, cur;
	char was[64], now[64], link[64];
	int ret, err, ioerr = 0;
	struct kp_tracee t;
	sigset_t all, mask;

	memset(&p, 0, sizeof(p));
	memset(&old, 0, sizeof(old));
	snprintf(p.name, sizeof(p.name), "%s", name);
	/* Not stopped or killed half-way by the terminal. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &mask);
	ret = -kp_attach(&t, pid, kp_pick_thread(pid));
	/* The fd may have been closed and reused since it was looked at. */
	if (!ret && (kp_fd_link(pid, fd, link, sizeof(link)) ||
		     strcmp(link, KP_VM_LINK)))
		ret = kp_err(KP_EXIT_NO_VM,
			     "fd %ld of process %ld is no longer a KVM VM",
			     fd, pid);
	if (!ret)
		ret = kp_seccomp_check(&t, fd);
	if (ret) {
		kp_detach(&t);
		sigprocmask(SIG_SETMASK, &mask, NULL);
		return ret;
	}
	err = kp_remote_ioctl(&t, fd, KVM_GET_PREFETCH_POLICY, &old, &ioerr);
	if (!err && !ioerr) {
		p.nr_pages = nr ? strtoul(nr, NULL, 10) : old.nr_pages;
		p.gup = !gup ? old.gup : !strcmp(gup, "fast") ?
			KVM_PREFETCH_GUP_FAST_ONLY : KVM_PREFETCH_GUP_NOFAULT;
		err = kp_remote_ioctl(&t, fd, KVM_SET_PREFETCH_POLICY, &p,
				      &ioerr);
	}
	snprintf(now, sizeof(now), "?");
	if (!err && !ioerr) {
		int e2;

		memset(&cur, 0, sizeof(cur));
		if (!kp_remote_ioctl(&t, fd, KVM_GET_PREFETCH_POLICY, &cur,
				     &e2) && !e2)
			kp_policy_str(&cur, now, sizeof(now));
	}
	kp_detach(&t);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	if (err == -ESRCH)
		return kp_err(KP_EXIT_NO_VM, "process %ld exited", pid);
	if (err)
		return kp_err(KP_EXIT_ERROR,
			      "making process %ld (thread %d) issue the ioctl: %s",
			      pid, t.tid, strerror(-err));
	if (ioerr)
		return kp_set_refused(&p, ioerr);
	kp_policy_str(&old, was, sizeof(was));
	printf("process %ld fd %ld: %s (was %s)\n", pid, fd, now, was);
	return KP_EXIT_OK;
}
#else
static int kp_set_vm(long pid, long fd, const char *name, const char *nr,
		     const char *gup)
{
	return kp_err(KP_EXIT_ERROR,
		      "set --pid is implemented for x86-64 only (it makes the VMM issue the ioctl by ptrace)");
}
#endif

static int kp_set(int argc, char **argv)
{
	const char *pid_arg = NULL, *fd_arg = NULL, *nr = NULL, *gup = NULL;
	const struct kp_opt opts[] = {
		{ "pid", &pid_arg, NULL },
		{ "fd", &fd_arg, NULL },
		{ "nr-pages", &nr, NULL },
		{ "gup", &gup, NULL },
	};
	long pid, fd = -1;
	int ret;

	ret = kp_getopt(argc, argv, opts, sizeof(opts) / sizeof(opts[0]));
	if (ret >= 0)
		return ret;
	if (!pid_arg)
		return kp_err(KP_EXIT_USAGE, "set: give the VMM's --pid");
	if (optind == argc)
		return kp_err(KP_EXIT_USAGE, "set: give a policy");
	if (optind + 1 != argc)
		return kp_err(KP_EXIT_USAGE, "set: unexpected '%s'",
			      argv[optind + 1]);
	pid = kp_number(pid_arg, INT_MAX);
	if (pid <= 0)
		return kp_err(KP_EXIT_USAGE, "invalid --pid '%s'", pid_arg);
	if (fd_arg) {
		fd = kp_number(fd_arg, INT_MAX);
		if (fd < 0)
			return kp_err(KP_EXIT_USAGE, "invalid --fd '%s'",
				      fd_arg);
	}
	ret = kp_validate(KP_POLICY, argv[optind]);
	if (!ret && nr)
		ret = kp_validate(KP_NR_PAGES, nr);
	if (!ret && gup)
		ret = kp_validate(KP_GUP, gup);
	if (!ret)
		ret = kp_check_kvm();
	if (ret)
		return ret;

	fd = kp_find_vm_fd(pid, fd);
	if (fd < 0)
		return -fd;
	return kp_set_vm(pid, fd, argv[optind], nr, gup);
}

/* ---- bpf ------------------------------------------------------------ */

#ifdef KP_HAVE_LIBBPF
#include "kp-bpf.c"
#else
static int kp_bpf(int argc, char **argv)
{
	return kp_err(KP_EXIT_NO_BPF,
		      "bpf: this kvm-prefetch was built without a BPF loader (it needs libbpf 1.4 or later, and BPF policies need Linux 6.9 or later)");
}
#endif

/* ---- main ----------------------------------------------------------- */

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "status";

	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") ||
	    !strcmp(cmd, "help")) {
		kp_usage(stdout);
		return KP_EXIT_OK;
	}
	if (!strcmp(cmd, "--version")) {
		printf("kvm-prefetch %s\n", KP_VERSION);
		return KP_EXIT_OK;
	}
	if (!strcmp(cmd, "set-default"))
		return kp_set_default(argc - 1, argv + 1);
	if (!strcmp(cmd, "set"))
		return kp_set(argc - 1, argv + 1);
	if (!strcmp(cmd, "bpf"))
		return kp_bpf(argc - 1, argv + 1);
	if (argc > 2)
		return kp_err(KP_EXIT_USAGE, "%s: unexpected '%s' (see --help)",
			      cmd, argv[2]);
	if (!strcmp(cmd, "status"))
		return kp_status();
	if (!strcmp(cmd, "vms"))
		return kp_vms();
	kp_usage(stderr);
	return kp_err(KP_EXIT_USAGE, "unknown command '%s'", cmd);
}
