// SPDX-License-Identifier: GPL-2.0
/*
 * kt_sys - system-side helpers for the in-VM prefetch tests; see kt_sys.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kvmtest.h"
#include "kt_sys.h"

/* ---- module swaps ---------------------------------------------------- */

/*
 * Shared with the guard's parent: 1 while the modules or their
 * parameters may differ from a plain "kvm-reload ours".
 */
static volatile int *ktsys_dirty;

static int ktsys_system(const char *cmd)
{
	int st;

	fflush(stdout);
	fflush(stderr);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

int ktsys_reload(const char *args)
{
	char cmd[256];
	int r;

	if (ktsys_dirty)
		*ktsys_dirty = 1;
	snprintf(cmd, sizeof(cmd), "kvm-reload %s", args);
	r = ktsys_system(cmd);
	kt_info("kvm-reload %s -> %d", args, r);
	return r;
}

int ktsys_restore(void)
{
	int r = ktsys_reload("ours");

	if (!r && ktsys_dirty)
		*ktsys_dirty = 0;
	return r;
}

/*
 * The other live processes of this process's session (tests/vm/init runs
 * each test program in a session of its own): up to @max pids in @pids.
 */
static int ktsys_session_pids(pid_t *pids, int max)
{
	pid_t self = getpid(), sid = getsid(0);
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir("/proc");

	if (!dir)
		return 0;
	while (n < max && (d = readdir(dir))) {
		char path[64], buf[512], *p, state;
		long pid = strtol(d->d_name, &p, 10);
		int ppid, pgrp, session;
		ssize_t len;
		int fd;

		if (*p || pid <= 0 || pid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = 0;
		p = strrchr(buf, ')');
		if (p && sscanf(p + 1, " %c %d %d %d", &state, &ppid, &pgrp,
				&session) == 4 &&
		    session == sid && state != 'Z')
			pids[n++] = pid;
	}
	closedir(dir);
	return n;
}

/*
 * Print /proc/@pid/task/@tid/@file, each line after @prefix; with
 * @only, only the lines that start with one of its words.
 */
static void ktsys_print_task(long pid, long tid, const char *file,
			     const char *prefix, const char *const *only)
{
	char path[96], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/%s", pid, tid, file);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *const *w = only;

		while (w && *w && strncmp(line, *w, strlen(*w)))
			w++;
		if (!w || *w)
			printf("%s%s", prefix, line);
	}
	fclose(f);
}

/*
 * A test that ran out of time: where every process of its session is
 * (each thread's name, state, syscall and kernel stack), then kill them
 * all and wait until they are gone, so that no VMM it started keeps
 * kvm.ko loaded for the tests after it.  Only when the test leads a
 * session of its own (tests/vm/init with kp.test_timeout=); else only
 * @child, the test's process.
 */
static void ktsys_guard_kill_all(pid_t child)
{
	static const char *const status[] = { "Name:", "State:", NULL };
	pid_t pids[64];
	int n, i, round;

	if (getsid(0) != getpid()) {
		kt_info("guard: not a session of its own: killing the test's process only");
		kill(child, SIGKILL);
		return;
	}
	n = ktsys_session_pids(pids, 64);
	for (i = 0; i < n; i++) {
		char dirpath[64], prefix[64];
		struct dirent *d;
		DIR *dir;

		snprintf(dirpath, sizeof(dirpath), "/proc/%d/task", (int)pids[i]);
		dir = opendir(dirpath);
		while (dir && (d = readdir(dir))) {
			long tid = strtol(d->d_name, NULL, 10);

			if (tid <= 0)
				continue;
			snprintf(prefix, sizeof(prefix),
				 "# guard: pid %d thread %ld: ", (int)pids[i], tid);
			ktsys_print_task(pids[i], tid, "status", prefix, status);
			ktsys_print_task(pids[i], tid, "syscall", prefix, NULL);
			ktsys_print_task(pids[i], tid, "stack", prefix, NULL);
		}
		if (dir)
			closedir(dir);
	}
	fflush(stdout);
	for (round = 0; round < 20 && n; round++) {
		for (i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		/* Children of ours are reaped here, the others by init. */
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		usleep(250000);
		n = ktsys_session_pids(pids, 64);
	}
	if (n)
		kt_fail("guard: %d process(es) of the test still there after SIGKILL",
			n);
	else
		kt_info("guard: every process of the test is gone");
}

void ktsys_guard(int timeout_s)
{
	uint64_t deadline;
	pid_t pid, w;
	int st = 0, rc, r;

	ktsys_dirty = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ktsys_dirty == MAP_FAILED) {
		ktsys_dirty = NULL;
		kt_fail("ktsys_guard: mmap: %s", strerror(errno));
		exit(KT_EXIT_FAIL);
	}
	/* Changing the defaults through sysfs also needs a restore. */
	*ktsys_dirty = 1;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		kt_fail("ktsys_guard: fork: %s", strerror(errno));
		exit(KT_EXIT_FAIL);
	}
	if (!pid)
		return;		/* the child runs the test */

	/* kp.guard_timeout=N (experiments): a shorter limit for every test. */
	timeout_s = (int)ktsys_cmdline_ulong("kp.guard_timeout", timeout_s);
	deadline = kt_now_ns() + (uint64_t)timeout_s * 1000000000ULL;
	for (;;) {
		w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			kt_fail("ktsys_guard: waitpid: %s", strerror(errno));
			exit(KT_EXIT_FAIL);
		}
		if (kt_now_ns() > deadline) {
			kt_fail("test did not finish within %d s, killing it",
				timeout_s);
			ktsys_guard_kill_all(pid);
			waitpid(pid, &st, 0);
			st = -1;
			break;
		}
		usleep(20000);
	}

	if (st == -1) {
		rc = KT_EXIT_FAIL;
	} else if (WIFSIGNALED(st)) {
		kt_fail("test killed by signal %d (%s)", WTERMSIG(st),
			strsignal(WTERMSIG(st)));
		rc = KT_EXIT_FAIL;
	} else {
		rc = WEXITSTATUS(st);
	}

	if (*ktsys_dirty) {
		kt_info("guard: restoring the default modules");
		r = ktsys_system("kvm-reload ours");
		if (r) {
			kt_fail("guard: kvm-reload ours -> %d", r);
			rc = KT_EXIT_FAIL;
		}
	}
	exit(rc);
}

/* ---- prefetch feature ------------------------------------------------ */

bool ktsys_prefetch_present(void)
{
	return !access(KTSYS_P_AVAILABLE, F_OK);
}

void ktsys_require_prefetch(void)
{
	KT_REQUIRE(ktsys_prefetch_present(),
		   "kvm.ko has no prefetch framework (%s missing)",
		   KTSYS_P_AVAILABLE);
}

void ktsys_start_ours(int timeout_s)
{
	int r;

	ktsys_guard(timeout_s);
	kt_require_kvm();
	r = ktsys_reload("ours");
	KT_ASSERT(r == 0, "kvm-reload ours: status %d", r);
	ktsys_require_prefetch();
}

int ktsys_set_defaults(const char *policy, const char *nr_pages,
		       const char *gup)
{
	int r;

	r = ktsys_write(KTSYS_P_POLICY, policy);
	if (!r)
		r = ktsys_write(KTSYS_P_NR_PAGES, nr_pages);
	if (!r)
		r = ktsys_write(KTSYS_P_GUP, gup);
	return r;
}

/* ---- per-VM policy ioctls -------------------------------------------- */

void ktsys_policy_fill(struct kvm_prefetch_policy *p, const char *name,
		       uint32_t nr_pages, uint32_t gup)
{
	size_t n = strlen(name);

	memset(p, 0, sizeof(*p));
	if (n > sizeof(p->name))
		n = sizeof(p->name);
	memcpy(p->name, name, n);
	p->nr_pages = nr_pages;
	p->gup = gup;
}

int ktsys_get_policy(int vmfd, struct kvm_prefetch_policy *p)
{
	return ioctl(vmfd, KVM_GET_PREFETCH_POLICY, p) ? -errno : 0;
}

int ktsys_set_policy_ptr(int vmfd, const void *arg)
{
	return ioctl(vmfd, KVM_SET_PREFETCH_POLICY, arg) ? -errno : 0;
}

int ktsys_set_policy(int vmfd, const char *name, uint32_t nr_pages,
		     uint32_t gup)
{
	struct kvm_prefetch_policy p;

	ktsys_policy_fill(&p, name, nr_pages, gup);
	return ktsys_set_policy_ptr(vmfd, &p);
}

const char *ktsys_gup_str(uint32_t gup)
{
	switch (gup) {
	case KVM_PREFETCH_GUP_DEFAULT:
		return "default";
	case KVM_PREFETCH_GUP_NOFAULT:
		return "nofault";
	case KVM_PREFETCH_GUP_FAST_ONLY:
		return "fast";
	}
	return "?";
}

void ktsys_policy_str(const struct kvm_prefetch_policy *p, char *buf,
		      size_t len)
{
	snprintf(buf, len, "%.*s nr_pages=%u gup=%s",
		 (int)sizeof(p->name), p->name, p->nr_pages,
		 ktsys_gup_str(p->gup));
}

bool ktsys_policy_eq(const struct kvm_prefetch_policy *a,
		     const struct kvm_prefetch_policy *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* ---- debugfs --------------------------------------------------------- */

int ktsys_vm_debugfs_dir(int vmfd, char *buf, size_t len)
{
	struct stat sb;

	snprintf(buf, len, "%s/%d-%d", KTSYS_DEBUGFS_KVM, (int)getpid(),
		 vmfd);
	if (stat(buf, &sb))
		return -errno;
	return S_ISDIR(sb.st_mode) ? 0 : -ENOTDIR;
}

int ktsys_vm_debugfs_policy(int vmfd, char *buf, size_t len)
{
	char dir[256], path[300];
	int r = ktsys_vm_debugfs_dir(vmfd, dir, sizeof(dir));

	if (r)
		return r;
	snprintf(path, sizeof(path), "%s/prefetch_policy", dir);
	return ktsys_read_line(path, buf, len);
}

/* ---- kernel log ------------------------------------------------------- */

int ktsys_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (lseek(fd, 0, SEEK_END) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

int ktsys_kmsg_next(int fd, char *buf, size_t len)
{
	char rec[8192], *semi, *nl;
	unsigned int prio;
	ssize_t n;

	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n >= 0)
			break;
		if (errno == EPIPE)	/* records were overwritten; go on */
			continue;
		return errno == EAGAIN ? -EAGAIN : -errno;
	}
	rec[n] = '\0';
	if (sscanf(rec, "%u,", &prio) != 1)
		return -EIO;
	semi = strchr(rec, ';');
	if (!semi)
		return -EIO;
	nl = strchr(semi + 1, '\n');
	if (nl)
		*nl = '\0';
	snprintf(buf, len, "%s", semi + 1);
	return prio & 7;
}

/* ---- trace events ---------------------------------------------------- */

const char *ktsys_tracefs(void)
{
	static const char * const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[128];
	unsigned int i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/trace", dirs[i]);
		if (!access(path, W_OK))
			return dirs[i];
	}
	return NULL;
}

/* open(2) tracefs' file @name; fd, -ENOENT without tracefs, or -errno. */
static int ktsys_tracefs_open(const char *name, int flags)
{
	const char *dir = ktsys_tracefs();
	char path[256];
	int fd;

	if (!dir)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, flags);
	return fd < 0 ? -errno : fd;
}

/* One write of @val to tracefs' file @name; 0 or -errno. */
static int ktsys_tracefs_write(const char *name, const char *val, int flags)
{
	int fd = ktsys_tracefs_open(name, O_WRONLY | flags);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : n < (ssize_t)strlen(val) ? -EIO : 0;
	close(fd);
	return n;
}

static int ktsys_trace_enable(const char *event, const char *val)
{
	char name[192];

	snprintf(name, sizeof(name), "events/%s/enable", event);
	return ktsys_tracefs_write(name, val, 0);
}

int ktsys_trace_begin(const char *event)
{
	/* Opening "trace" for writing with O_TRUNC empties the buffer. */
	int fd = ktsys_tracefs_open("trace", O_WRONLY | O_TRUNC);

	if (fd < 0)
		return fd;
	close(fd);
	ktsys_tracefs_write("tracing_on", "1", 0);
	return ktsys_trace_enable(event, "1");
}

long ktsys_trace_end(const char *event)
{
	const char *name = strrchr(event, '/');
	char tag[96], buf[8192];
	size_t have = 0, tlen;
	long count = 0;
	ssize_t n;
	int fd, r;

	r = ktsys_trace_enable(event, "0");
	if (r)
		return r;
	snprintf(tag, sizeof(tag), " %s:", name ? name + 1 : event);
	tlen = strlen(tag);
	fd = ktsys_tracefs_open("trace", O_RDONLY);
	if (fd < 0)
		return fd;
	/* Count tags; keep a tail so that a tag split by reads counts. */
	while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		char *p = buf;

		have += n;
		buf[have] = 0;
		while ((p = strstr(p, tag))) {
			count++;
			p += tlen;
		}
		/* tlen - 1 bytes cannot hold a whole, counted tag. */
		if (have > tlen - 1) {
			memmove(buf, buf + have - (tlen - 1), tlen - 1);
			have = tlen - 1;
		}
	}
	close(fd);
	return n < 0 ? -errno : count;
}

long ktsys_trace_lines(const char *event,
		       void (*fn)(const char *line, void *arg), void *arg)
{
	char line[512];
	long count = 0;
	FILE *f;
	int fd, r;

	r = ktsys_trace_enable(event, "0");
	if (r)
		return r;
	fd = ktsys_tracefs_open("trace", O_RDONLY);
	if (fd < 0)
		return fd;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		fn(line, arg);
		count++;
	}
	fclose(f);
	return count;
}

bool ktsys_spte_parse(const char *line, struct ktsys_spte_change *c,
		      long *lost)
{
	unsigned long long gfn, old, new;
	const char *p;
	int as, level;

	if (strstr(line, "LOST"))
		(*lost)++;
	p = strstr(line, "kvm_tdp_mmu_spte_changed: ");
	if (!p || sscanf(p, "kvm_tdp_mmu_spte_changed: as id %d gfn %llx level %d old_spte %llx new_spte %llx",
			 &as, &gfn, &level, &old, &new) != 5)
		return false;
	if (as || level < 1 || level > 2)
		return false;
	c->gfn = gfn;
	c->level = level;
	c->old_spte = old;
	c->new_spte = new;
	return true;
}

bool ktsys_spte_apply(const struct ktsys_spte_change *c, uint64_t gfn0,
		      uint64_t n, uint64_t *spte, uint8_t *level)
{
	uint64_t i, np = c->level == 1 ? 1 : KTSYS_BLOCK_PAGES, base;
	bool leaf = (c->new_spte & KTSYS_SPTE_PRESENT) &&
		    (c->level == 1 || (c->new_spte & KTSYS_SPTE_LARGE));

	if (c->gfn + np <= gfn0 || c->gfn >= gfn0 + n)
		return false;
	base = (c->gfn - gfn0) & ~(np - 1);
	for (i = base; i < base + np && i < n; i++) {
		/* A leaf at this level replaces what covered the pages. */
		if (leaf) {
			spte[i] = c->new_spte;
			level[i] = c->level;
		} else if (level[i] == c->level) {
			/* The leaf went (zapped, or a table now). */
			spte[i] = 0;
			level[i] = 0;
		}
	}
	return true;
}

/* Append @line to tracefs' kprobe_events (a write would clear them all). */
static int ktsys_kprobe_write(const char *line)
{
	return ktsys_tracefs_write("kprobe_events", line, O_APPEND);
}

int ktsys_kprobe_add(const char *event, const char *symbol,
		     const char *filter)
{
	char line[256], path[256];
	int r;

	snprintf(line, sizeof(line), "p:%s %s\n", event, symbol);
	r = ktsys_kprobe_write(line);
	if (r) {
		char log[1024] = "";

		/* The kernel says why in error_log. */
		snprintf(path, sizeof(path), "%s/error_log", ktsys_tracefs());
		if (ktsys_tracefs())
			ktsys_read(path, log, sizeof(log));
		kt_info("kprobe %s: %s; error_log: %s", event, strerror(-r),
			log);
		return r == -EINVAL ? -ENOENT : r;
	}
	if (!filter)
		return 0;
	snprintf(path, sizeof(path), "%s/events/%s/filter", ktsys_tracefs(),
		 event);
	r = ktsys_write(path, filter);
	if (r)
		ktsys_kprobe_del(event);
	return r;
}

int ktsys_kprobe_del(const char *event)
{
	char line[256];

	snprintf(line, sizeof(line), "-:%s\n", event);
	return ktsys_kprobe_write(line);
}

/* ---- the random tests' plumbing ------------------------------------- */

#define KTSYS_THP	"/sys/kernel/mm/transparent_hugepage/enabled"

unsigned long ktsys_cmdline_ulong(const char *key, unsigned long def)
{
	char line[4096], *p;
	size_t len = strlen(key);

	if (ktsys_read("/proc/cmdline", line, sizeof(line)) <= 0)
		return def;
	for (p = strstr(line, key); p; p = strstr(p + 1, key))
		if ((p == line || p[-1] == ' ') && p[len] == '=')
			return strtoul(p + len + 1, NULL, 0);
	return def;
}

void ktsys_pagemap(const void *mem, uint64_t n, uint64_t *out)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	ssize_t r;

	KT_ASSERT(fd >= 0, "pagemap: %s", strerror(errno));
	r = pread(fd, out, n * sizeof(*out),
		  (uintptr_t)mem / KT_PAGE_SIZE * sizeof(*out));
	close(fd);
	KT_ASSERT(r == (ssize_t)(n * sizeof(*out)), "pagemap read: %zd", r);
}

void ktsys_start_random(int timeout_s, const char *name, char *engine,
			size_t len, unsigned long *seed, unsigned long *cases)
{
	char key[64];

	ktsys_start_ours(timeout_s);
	kt_require_kvm();
	if (!ktsys_tracefs()) {
		kt_skip("no tracefs");
		exit(kt_exit());
	}
	ktsys_pin_cpu0();
	KT_ASSERT(!ktsys_read_line(KTSYS_P_ENGINE, engine, len),
		  "read prefetch_engine");
	snprintf(key, sizeof(key), "kp.%s.seed", name);
	*seed = ktsys_cmdline_ulong(key, *seed);
	snprintf(key, sizeof(key), "kp.%s.cases", name);
	*cases = ktsys_cmdline_ulong(key, *cases);
}

void ktsys_default_for_new_vms(const char *policy)
{
	struct kvm_prefetch_policy p = { .name = "" };
	struct kt_vm *vm;
	int r = ktsys_write(KTSYS_P_POLICY, policy);

	KT_ASSERT(r == 0, "prefetch_policy=%s (%d)", policy, r);
	vm = kt_vm_create();
	KT_EXPECT(ktsys_get_policy(vm->fd, &p) == 0 && !strcmp(p.name, policy),
		  "a new VM starts with the default %s (%s)", policy, p.name);
	kt_vm_free(vm);
}

void ktsys_set_engine(const char *engine)
{
	int r = ktsys_write(KTSYS_P_ENGINE, engine);

	KT_ASSERT(!r, "prefetch_engine=%s (%d)", engine, r);
}

void ktsys_pin_cpu0(void)
{
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	KT_ASSERT(!sched_setaffinity(0, sizeof(cpus), &cpus),
		  "sched_setaffinity: %s", strerror(errno));
}

bool ktsys_thp_madvise(char *was, size_t len)
{
	char mode[64], *b, *e;

	if (ktsys_read_line(KTSYS_THP, mode, sizeof(mode)) ||
	    !(b = strchr(mode, '[')) || !(e = strchr(b, ']')))
		return false;
	*e = '\0';
	snprintf(was, len, "%s", b + 1);
	return !ktsys_write(KTSYS_THP, "madvise");
}

void ktsys_thp_restore(const char *was)
{
	ktsys_write(KTSYS_THP, was);
}
