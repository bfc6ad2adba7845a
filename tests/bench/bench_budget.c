// SPDX-License-Identifier: GPL-2.0
/*
 * bench_budget - what one exit costs the rest of the VM when a window is
 * large: the prefetch engine's per-exit budget (at most 16384 leaf SPTEs
 * per exit; past 512, it stops for a pending request or the scheduler),
 * measured, not asserted.  Run by "make bench-budget" (and by "make
 * bench", as every program named bench*).
 *
 * A guest reads budget_mib= MiB (default 1024) of populated 4 KiB host pages,
 * one dword per page, linearly, with one vCPU, under
 *   stock       Debian's modules
 *   auto-8      ours, auto, nr_pages 8
 *   auto-262144 ours, auto, nr_pages 262144 (1 GiB, the largest window)
 *   holes-262144 ours, auto, nr_pages 262144, over memory that a first,
 *               untimed pass mapped whole but for one hole every 32768
 *               pages (the host page zapped with MADV_DONTNEED and written
 *               again): the guest reads the holes only, so each fault
 *               opens a 1 GiB window that is mapped but for the holes
 *               (what KSM, a balloon or the zap after dirty logging
 *               leave).  The budget is charged for pages examined, mapped
 *               or not: each such exit examines at most 16384 pages
 * budget_rounds= times (default 3; "make bench-budget" passes kp.budget=MIB,ROUNDS
 * on the test VM's command line), interleaved.  kp.budget_arms=a,b runs
 * only the arms named.  Meanwhile a second thread
 * toggles dirty logging on a separate 4 KiB memslot every 2 ms, a
 * memslot update that must wait for the vCPU to leave its kvm->srcu
 * section (synchronize_srcu()) and so for the exit that maps a window.
 *
 * Per run it prints one line "@@BUDGET arm=... round=... key=value":
 * the pass's time, the guest faults, the pages prefetched, the worst
 * exit-to-entry gap of the vCPU and its 99th percentile (from the kvm_exit
 * and kvm_entry trace events' timestamps, so including the tracing's own
 * cost, alike for every arm), and the latency of the memslot updates:
 * count, median, 99th percentile and maximum.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kvmtest.h"
#include "kt_bench.h"
#include "kt_sys.h"

#define SLOT		1
#define GPA		0x40000000ULL
#define TOGGLE_SLOT	2
#define TOGGLE_GPA	0x3ff00000ULL
#define TOGGLE_US	2000
#define MAX_UPDATES	100000

enum arm { STOCK, AUTO_8, AUTO_1G, HOLES_1G, NR_ARMS };
static const char *const arm_names[] = { "stock", "auto-8", "auto-262144",
					 "holes-262144" };

/* One hole every HOLE_STEP pages of the holes arm, from page HOLE_FIRST. */
#define HOLE_FIRST	100
#define HOLE_STEP	32768

struct toggler {
	struct kt_vm *vm;
	void *mem;
	volatile int stop;
	unsigned int n;
	double *us;
};

static const char *tdir = "/sys/kernel/tracing";

static void tpath(char *buf, size_t len, const char *file)
{
	snprintf(buf, len, "%s/%s", tdir, file);
}

static double now_us(void)
{
	return kt_now_ns() / 1000.0;
}

static void *toggle(void *arg)
{
	struct toggler *t = arg;
	struct kvm_userspace_memory_region r = {
		.slot = TOGGLE_SLOT, .guest_phys_addr = TOGGLE_GPA,
		.memory_size = KT_PAGE_SIZE,
		.userspace_addr = (uintptr_t)t->mem,
	};
	double t0;

	while (!t->stop && t->n < MAX_UPDATES) {
		r.flags ^= KVM_MEM_LOG_DIRTY_PAGES;
		t0 = now_us();
		if (ioctl(t->vm->fd, KVM_SET_USER_MEMORY_REGION, &r))
			break;
		t->us[t->n++] = now_us() - t0;
		usleep(TOGGLE_US);
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, unsigned int n, double p)
{
	if (!n)
		return 0;
	return v[(unsigned int)((n - 1) * p)];
}

/* Timestamp (us) of the trace line @l whose event name starts at @ev. */
static double stamp(const char *l, const char *ev)
{
	const char *p = ev - 2;		/* before ": " */

	while (p > l && *p != ' ')
		p--;
	return atof(p) * 1e6;
}

/*
 * The gaps between each kvm_exit and the next kvm_entry in the trace
 * buffer, sorted into @gaps (at most @max); returns how many.
 */
static unsigned int exit_gaps(double *gaps, unsigned int max)
{
	char path[256], *line = NULL, *ev;
	unsigned int n = 0;
	double exit_at = -1;
	size_t len = 0;
	FILE *f;

	tpath(path, sizeof(path), "trace");
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (getline(&line, &len, f) > 0 && n < max) {
		if ((ev = strstr(line, ": kvm_exit:")))
			exit_at = stamp(line, ev + 2);
		else if ((ev = strstr(line, ": kvm_entry:")) && exit_at >= 0) {
			gaps[n++] = stamp(line, ev + 2) - exit_at;
			exit_at = -1;
		}
	}
	free(line);
	fclose(f);
	qsort(gaps, n, sizeof(*gaps), cmp_double);
	return n;
}

static void trace_events(const char *val)
{
	char path[256];

	tpath(path, sizeof(path), "events/kvm/kvm_exit/enable");
	KT_ASSERT(!ktsys_write(path, val), "%s", path);
	tpath(path, sizeof(path), "events/kvm/kvm_entry/enable");
	KT_ASSERT(!ktsys_write(path, val), "%s", path);
}

static void run(enum arm arm, int round, char *mem, uint64_t size,
		double *gaps, unsigned int max_gaps, double *upd)
{
	struct toggler t = { .us = upd };
	uint64_t pf0, pf, mapped = 0;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	char path[256];
	unsigned int ng;
	pthread_t thr;
	double t0, ms;
	int fd;

	vm = kt_vm_create();
	kt_vm_add_slot(vm, SLOT, GPA, size, 0, mem);
	t.mem = mmap(NULL, KT_PAGE_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	KT_ASSERT(t.mem != MAP_FAILED, "mmap");
	t.vm = vm;
	vcpu = kt_vcpu_add(vm, 0);
	kt_touch(vcpu, 0, 0, 0, KT_TOUCH_WRITE);
	if (arm != STOCK)
		KT_ASSERT(!ktsys_set_policy(vm->fd, "auto",
					    arm == AUTO_8 ? 8 : 262144,
					    KVM_PREFETCH_GUP_NOFAULT),
			  "SET auto");
	if (arm == HOLES_1G) {
		uint64_t off;

		/* Map it all, untimed; then one hole every HOLE_STEP pages. */
		kt_touch(vcpu, GPA, GPA + size, 0, KT_TOUCH_READ);
		for (off = HOLE_FIRST * KT_PAGE_SIZE; off < size;
		     off += HOLE_STEP * KT_PAGE_SIZE) {
			KT_ASSERT(!madvise(mem + off, KT_PAGE_SIZE, MADV_DONTNEED),
				  "MADV_DONTNEED");
			*(uint32_t *)(mem + off) = (uint32_t)(GPA + off);
		}
	}
	{
		struct kvm_userspace_memory_region r = {
			.slot = TOGGLE_SLOT, .guest_phys_addr = TOGGLE_GPA,
			.memory_size = KT_PAGE_SIZE,
			.userspace_addr = (uintptr_t)t.mem,
		};

		KT_ASSERT(!ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &r),
			  "toggle slot");
	}

	/* Empty the trace buffer, then trace the pass. */
	tpath(path, sizeof(path), "trace");
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd >= 0)
		close(fd);
	trace_events("1");
	pf0 = kt_vcpu_stat_get(vcpu, "pf_taken");
	KT_ASSERT(!pthread_create(&thr, NULL, toggle, &t), "thread");
	t0 = now_us();
	if (arm == HOLES_1G)
		kt_touch(vcpu, GPA + HOLE_FIRST * KT_PAGE_SIZE, GPA + size,
			 HOLE_STEP * KT_PAGE_SIZE, KT_TOUCH_READ);
	else
		kt_touch(vcpu, GPA, GPA + size, 0, KT_TOUCH_READ);
	ms = (now_us() - t0) / 1000;
	t.stop = 1;
	pthread_join(thr, NULL);
	trace_events("0");
	pf = kt_vcpu_stat_get(vcpu, "pf_taken") - pf0;
	if (arm != STOCK)
		mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	ng = exit_gaps(gaps, max_gaps);
	qsort(upd, t.n, sizeof(*upd), cmp_double);
	printf("@@BUDGET arm=%s round=%d mib=%llu ms=%.1f pf=%llu mapped=%llu exits=%u gap_max_us=%.0f gap_p99_us=%.0f upd=%u upd_med_us=%.0f upd_p99_us=%.0f upd_max_us=%.0f\n",
	       arm_names[arm], round, (unsigned long long)(size >> 20), ms,
	       (unsigned long long)pf, (unsigned long long)mapped, ng,
	       ng ? gaps[ng - 1] : 0, pct(gaps, ng, 0.99), t.n,
	       pct(upd, t.n, 0.5), pct(upd, t.n, 0.99),
	       t.n ? upd[t.n - 1] : 0);
	fflush(stdout);
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	munmap(t.mem, KT_PAGE_SIZE);
}

/* kp.budget_arms=a,b in @cmdline: only those arms; else all of them. */
static void arms_wanted(const char *cmdline, bool *want)
{
	const char *p = strstr(cmdline, "kp.budget_arms=");
	char list[256], *w, *save = NULL;
	int a;

	for (a = 0; a < NR_ARMS; a++)
		want[a] = !p;
	if (!p)
		return;
	snprintf(list, sizeof(list), "%s", p + strlen("kp.budget_arms="));
	list[strcspn(list, " \n")] = '\0';
	for (w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save))
		for (a = 0; a < NR_ARMS; a++)
			if (!strcmp(w, arm_names[a]))
				want[a] = true;
}

int main(int argc, char **argv)
{
	unsigned int rounds = 3, max_gaps = 2 * 262144 + 1024;
	uint64_t mib = 1024, size;
	char *mem, *arg, line[1024] = "";
	double *gaps, *upd;
	int i, round, a;
	bool want[NR_ARMS];

	/* make bench-budget: kp.budget=MIB,ROUNDS on the command line. */
	if (ktsys_read("/proc/cmdline", line, sizeof(line)) > 0 &&
	    (arg = strstr(line, "kp.budget=")))
		sscanf(arg, "kp.budget=%llu,%u", (unsigned long long *)&mib,
		       &rounds);
	arms_wanted(line, want);
	for (i = 1; i < argc; i++) {
		sscanf(argv[i], "budget_mib=%llu", (unsigned long long *)&mib);
		sscanf(argv[i], "budget_rounds=%u", &rounds);
	}
	char path[256];

	kt_require_kvm();
	size = mib << 20;
	if (access("/sys/kernel/tracing/trace", W_OK))
		tdir = "/sys/kernel/debug/tracing";
	tpath(path, sizeof(path), "buffer_size_kb");
	KT_ASSERT(!ktsys_write(path, "65536"), "%s", path);
	gaps = calloc(max_gaps, sizeof(*gaps));
	upd = calloc(MAX_UPDATES, sizeof(*upd));
	KT_ASSERT(gaps && upd, "calloc");
	mem = kt_populated(size, GPA);
	kt_info("bench_budget: %llu MiB populated, %u rounds",
		(unsigned long long)mib, rounds);
	for (round = 1; round <= (int)rounds; round++) {
		if (want[STOCK]) {
			KT_ASSERT(!ktb_swap_modules("stock"), "stock modules");
			run(STOCK, round, mem, size, gaps, max_gaps, upd);
		}
		KT_ASSERT(!ktb_swap_modules("ours"), "our modules");
		for (a = AUTO_8; a < NR_ARMS; a++)
			if (want[a])
				run(a, round, mem, size, gaps, max_gaps, upd);
	}
	ktsys_write(path, "1408");
	kt_pass("bench_budget: %u rounds", rounds);
	return kt_exit();
}
