// SPDX-License-Identifier: GPL-2.0
/*
 * /init of the arm64 test VM, a static binary (no busybox for arm64 on
 * the build host).  Mounts what the tests need, runs the test programs
 * of /tests and reports in tests/vm/init's line protocol, which
 * tests/arm64/run-vm.sh parses:
 *   @@BEGIN <test>, PASS: / FAIL: / SKIP: lines, @@END <test> rc=<n>,
 *   dmesg: <kernel log line>, @@DONE.
 * A kernel log splat after a program is a FAIL of that program.
 *
 * The same binary is /sbin/modprobe (what request_module() runs, for
 * policy autoload), insmod and rmmod, chosen by argv[0]: modules live in
 * /lib/modules/extra/<name>.ko.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MODDIR	"/lib/modules/extra"

/* What a kernel log line must not say (tests/vm/init's SPLAT). */
static const char *const splat[] = {
	"WARNING:", "BUG:", "Oops", "Call trace", "Call Trace",
	"kernel BUG", "Kernel panic", "INFO: rcu", "self-detected stall",
	"circular locking", "recursive locking", "lockdep", "UBSAN",
	"KASAN", "refcount_t:", "list_add corruption",
	"list_del corruption", "suspicious RCU usage",
	"inconsistent lock state", "bad unlock balance",
	"sleeping function called from invalid context",
	"scheduling while atomic", "Unable to handle kernel",
	"Internal error:",
};

static int load_module(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = syscall(SYS_finit_module, fd, params ? params : "", 0);
	r = r ? -errno : 0;
	close(fd);
	return r;
}

/* modprobe [-q] [--] name [params...]: load MODDIR/<name>.ko. */
static int modprobe(int argc, char **argv)
{
	char path[256], params[512] = "", *name = NULL;
	int i, r;

	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-' && !name)
			continue;
		if (!name) {
			name = argv[i];
			continue;
		}
		strncat(params, argv[i], sizeof(params) - strlen(params) - 2);
		strcat(params, " ");
	}
	if (!name)
		return 1;
	snprintf(path, sizeof(path), MODDIR "/%s.ko", name);
	for (i = strlen(MODDIR) + 1; path[i]; i++)
		if (path[i] == '_')
			path[i] = '-';
	r = load_module(path, params);
	if (r && r != -EEXIST) {
		fprintf(stderr, "modprobe %s: %s\n", name, strerror(-r));
		return 1;
	}
	return 0;
}

static int splat_in(const char *line)
{
	size_t i;

	for (i = 0; i < sizeof(splat) / sizeof(splat[0]); i++)
		if (strstr(line, splat[i]))
			return 1;
	return 0;
}

/* Print the kernel log since the last call; a splat is a FAIL of @what. */
static void check_dmesg(const char *what)
{
	static char buf[1 << 17];
	int n = klogctl(4 /* SYSLOG_ACTION_READ_CLEAR */, buf, sizeof(buf) - 1);
	int bad = 0;
	char *line, *save;

	if (n <= 0)
		return;
	buf[n] = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		printf("dmesg: %s\n", line);
		bad |= splat_in(line);
	}
	if (bad)
		printf("FAIL: kernel log splat after %s\n", what);
	fflush(stdout);
}

static void run_test(const char *name)
{
	char path[256];
	int status = 0;
	pid_t pid;

	snprintf(path, sizeof(path), "/tests/%s", name);
	printf("@@BEGIN %s\n", name);
	fflush(stdout);
	pid = fork();
	if (!pid) {
		execl(path, name, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	printf("@@END %s rc=%d\n", name,
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	fflush(stdout);
	check_dmesg(name);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The value of kp.<key>= on the kernel command line, or "". */
static void cmdline_arg(const char *key, char *val, size_t size)
{
	char buf[1024] = "", *p;
	FILE *f = fopen("/proc/cmdline", "r");
	size_t n;

	val[0] = 0;
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	p = strstr(buf, key);
	if (!p)
		return;
	p += strlen(key);
	n = strcspn(p, " \n");
	if (n >= size)
		n = size - 1;
	memcpy(val, p, n);
	val[n] = 0;
}

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);

	if (fd >= 0) {
		if (write(fd, s, strlen(s)) < 0)
			perror(path);
		close(fd);
	}
}

static void run_all(void)
{
	char only[512], *names[256], *t, *save;
	struct dirent *de;
	int n = 0, i;
	DIR *d;

	cmdline_arg("kp.tests=", only, sizeof(only));
	if (only[0]) {
		for (t = strtok_r(only, ",", &save); t && n < 256;
		     t = strtok_r(NULL, ",", &save))
			names[n++] = strdup(t);
	} else {
		d = opendir("/tests");
		while (d && (de = readdir(d)) && n < 256)
			if (de->d_name[0] != '.')
				names[n++] = strdup(de->d_name);
		if (d)
			closedir(d);
		qsort(names, n, sizeof(names[0]), cmp_names);
	}
	for (i = 0; i < n; i++)
		run_test(names[i]);
}

int main(int argc, char **argv)
{
	const char *me = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1
					       : argv[0];

	if (!strcmp(me, "modprobe"))
		return modprobe(argc, argv);
	if (!strcmp(me, "insmod"))
		return argc < 2 ? 1 : !!load_module(argv[1],
						     argc > 2 ? argv[2] : "");
	if (!strcmp(me, "rmmod"))
		return argc < 2 ? 1 :
		       !!syscall(SYS_delete_module, argv[1], O_NONBLOCK);

	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("tmpfs", "/tmp", "tmpfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	/* As tests/vm/init: 4 KiB host pages unless a test asks for THP. */
	write_file("/sys/kernel/mm/transparent_hugepage/enabled", "never");
	setenv("PATH", "/sbin:/tests", 1);

	printf("@@MODULES kvm arm64 prefetch_policy=");
	fflush(stdout);
	{
		char buf[64] = "";
		int fd = open("/sys/module/kvm/parameters/prefetch_policy",
			      O_RDONLY);

		if (fd >= 0) {
			ssize_t n = read(fd, buf, sizeof(buf) - 1);

			buf[n > 0 ? n - 1 : 0] = 0;
			close(fd);
		}
		printf("%s kvm=%s\n", buf[0] ? buf : "-",
		       access("/dev/kvm", F_OK) ? "absent" : "present");
	}
	check_dmesg("boot");
	run_all();
	printf("@@DONE\n");
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
