// SPDX-License-Identifier: GPL-2.0
/*
 * cost - the guest side of "make cost": instruction counts of KVM's fault
 * path, run inside the test VM (kp.mode=cost) under QEMU with the meter
 * plugin (tests/cost/meter.c).
 *
 * Workload: one vCPU writes one dword into every 4 KiB page of a memslot
 * whose host memory is populated up front (no userfaultfd, no host page
 * fault: what is left is KVM's own work per guest fault and per prefetched
 * page).  For every configuration
 *
 *	stock		Debian's kvm.ko/kvm-amd.ko
 *	none		ours, policy none
 *	auto-8		ours, auto, nr_pages 8 (gup nofault)
 *	auto-512	ours, auto, nr_pages 512 (gup nofault)
 *	bpf-auto-8	ours, bpf_auto (kvm-policy/bpf/auto.bpf.c, loaded with
 *	bpf-auto-512	kvm-prefetch bpf load; 6.12 base), nr_pages 8 or 512
 *	adaptive-512	ours, the adaptive module, nr_pages 512
 *	bpf-adaptive-512 ours, bpf_adaptive (kvm-policy/bpf/adaptive.bpf.c:
 *			the module's logic as BPF; 6.12 base), nr_pages 512
 *	record-none	ours, none, while the VM records its first touches
 *	record-auto-8	(KVM_PREFETCH_RECORD_START before the pass; issue 50)
 *	replay-1	ours, replay, nr_pages 2048, with an order of every
 *			third page of the pass in runs of 1 page (the most
 *			windows per page)
 *	replay-64	the same, every page in runs of 64 pages
 *	cold-<cfg>	<cfg> (stock, none, auto-8, auto-512, adaptive) on cold
 *			memory: a fresh anonymous mapping the host has not
 *			populated, so that every guest fault also faults the
 *			host page in (through GUP) and every window finds the
 *			next host page absent: a window that maps nothing
 *			(issue 49, item 4)
 *
 * and for two sizes (pages=2048:4096 by default), the pass is one KVM_RUN
 * between two marks that the plugin sees: it snapshots its counters on
 * each.  The host (tests/cost/report.py) takes the difference of the two
 * sizes, which cancels what a run costs once (the KVM_RUN, the root, the
 * upper page tables), and divides by the difference in guest faults and in
 * prefetched pages.
 *
 * Output, parsed by report.py:
 *	@@COSTMOD name=<module> base=<hex> size=<bytes>	after each module swap
 *		and after a policy module is autoloaded (kvm and kvm_amd;
 *		the policy modules kvm_prefetch_* count with them, as
 *		@@COSTOTHER; other modules as @@COSTOTHER: the module
 *		area's code outside every module is BPF's JIT images and
 *		trampolines, which report.py adds to kvm's)
 *	@@COST cfg=<id> pages=<n> s0=<snapshot> s1=<snapshot> pf=<n>
 *		windows=<n> mapped=<n> ok=<0|1>
 *	@@COSTSYM <address> <name> <module>	with syms=1, after @@COSTMOD:
 *		text symbols for tests/cost/profile.py: the modules' after
 *		every swap, the core kernel's (module "vmlinux") once
 * and a FAIL line if a page is wrong afterwards.  Arguments (key=value):
 * pages=2048:4096, cfgs=stock:none:auto-8:auto-512, syms=0|1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kvmtest.h"
#include "kt_sys.h"
#include "kt_bench.h"

#define DATA_SLOT	1
#define DATA_GPA	0x400000ULL	/* 2 MiB aligned: whole windows */
#define MAX_SIZES	4

struct cfg {
	const char *id;
	const char *policy;	/* NULL: stock modules */
	uint32_t nr_pages;
	bool cold;		/* the host has not populated the memory */
	bool record;		/* the VM records its first touches */
	uint32_t replay_run;	/* replay an order in runs of this many pages */
};

static const struct cfg all_cfgs[] = {
	{ "stock", NULL, 0 },
	{ "none", "none", 0 },
	{ "auto-8", "auto", 8 },
	{ "auto-512", "auto", 512 },
	{ "bpf-auto-8", "bpf_auto", 8 },
	{ "bpf-auto-512", "bpf_auto", 512 },
	{ "adaptive-512", "adaptive", 512 },
	{ "bpf-adaptive-512", "bpf_adaptive", 512 },
	{ "record-none", "none", 0, false, true },
	{ "record-auto-8", "auto", 8, false, true },
	{ "replay-1", "replay", 2048, false, false, 1 },
	{ "replay-64", "replay", 2048, false, false, 64 },
	{ "cold-stock", NULL, 0, true },
	{ "cold-none", "none", 0, true },
	{ "cold-auto-8", "auto", 8, true },
	{ "cold-auto-512", "auto", 512, true },
	{ "cold-adaptive", "adaptive", 512, true },
};

static uint64_t sizes[MAX_SIZES] = { 2048, 4096 };
static unsigned int nr_sizes = 2;
static char cfg_list[256] = "stock:none:auto-8:auto-512";
static unsigned int nr_marks;
static char bpf_loaded[64];	/* the BPF policy loaded, if any */
static bool want_syms, core_syms_printed;

/*
 * The mark: "nopl 0x4b50c057(%rax)", which nothing else executes; the
 * plugin snapshots its counters before it runs.  Returns the snapshot's
 * number (they count from 0 in execution order).
 */
static __attribute__((noinline)) unsigned int mark(void)
{
	asm volatile(".byte 0x0f, 0x1f, 0x80, 0x57, 0xc0, 0x50, 0x4b"
		     ::: "memory");
	return nr_marks++;
}

/* Where kvm.ko and kvm-amd.ko are now (from /proc/modules). */
static void print_modules(void)
{
	char line[512], name[64], state[32], deps[256];
	unsigned long long size, base;
	int refs, found = 0;
	FILE *f = fopen("/proc/modules", "r");

	KT_ASSERT(f, "/proc/modules: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %llu %d %255s %31s %llx", name, &size,
			   &refs, deps, state, &base) != 6)
			continue;
		KT_ASSERT(base, "/proc/modules hides the address of %s", name);
		if (strcmp(name, "kvm") && strcmp(name, "kvm_amd")) {
			printf("@@COSTOTHER name=%s base=0x%llx size=%llu\n",
			       name, base, size);
			continue;
		}
		printf("@@COSTMOD name=%s base=0x%llx size=%llu\n", name, base,
		       size);
		found++;
	}
	fclose(f);
	KT_ASSERT(found == 2, "kvm and kvm_amd not both in /proc/modules");
	if (!want_syms)
		return;
	f = fopen("/proc/kallsyms", "r");
	KT_ASSERT(f, "/proc/kallsyms: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char type, sym[256], mod[64];

		int n = sscanf(line, "%llx %c %255s [%63[^]]]", &base, &type,
			       sym, mod);

		if (n < 3 || (type != 't' && type != 'T'))
			continue;
		/* The core kernel's once, the modules' after every swap. */
		if (n == 3 && !core_syms_printed)
			printf("@@COSTSYM %llx %s vmlinux\n", base, sym);
		else if (n == 4 && (!strcmp(mod, "kvm") ||
				    !strcmp(mod, "kvm_amd")))
			printf("@@COSTSYM %llx %s %s\n", base, sym, mod);
	}
	fclose(f);
	core_syms_printed = true;
}

/*
 * The pages of the pass, in order, in runs of c->replay_run pages: every
 * page, or for runs of one page every third page (an order may hold at
 * most about half as many runs as the VM has pages).
 */
static void load_order(struct kt_vm *vm, const struct cfg *c, uint64_t pages)
{
	uint64_t step = c->replay_run == 1 ? 3 : c->replay_run, i;
	uint64_t nr = pages / step;
	struct kvm_prefetch_order *o = calloc(1, sizeof(*o) + nr * 8);
	struct kvm_prefetch_order_op op = {
		.op = KVM_PREFETCH_REPLAY_LOAD, .addr = (uintptr_t)o,
		.size = sizeof(*o) + nr * 8,
	};

	KT_ASSERT(o, "calloc");
	o->magic = KVM_PREFETCH_ORDER_MAGIC;
	o->version = KVM_PREFETCH_ORDER_VERSION;
	o->nr_runs = nr;
	o->nr_pages = nr * c->replay_run;
	for (i = 0; i < nr; i++)
		o->runs[i] = KVM_PREFETCH_RUN((DATA_GPA >> 12) + i * step,
					      c->replay_run);
	KT_ASSERT(!ioctl(vm->fd, KVM_PREFETCH_ORDER, &op),
		  "%s: REPLAY_LOAD: %s", c->id, strerror(errno));
	free(o);
}

static void run(const struct cfg *c, uint64_t pages)
{
	uint64_t size = pages * KT_PAGE_SIZE, pf0, pf1, i, bad = 0;
	uint64_t w0 = 0, w1 = 0, m0 = 0, m1 = 0;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	unsigned int s0, s1;
	char *mem;
	bool have;
	int r;

	vm = kt_vm_create();
	/* Library memory: anonymous, MADV_NOHUGEPAGE, not populated. */
	mem = kt_vm_add_slot(vm, DATA_SLOT, DATA_GPA, size, 0, NULL);
	if (!c->cold)
		memset(mem, 0x5a, size);
	if (c->policy) {
		r = ktsys_set_policy(vm->fd, c->policy, c->nr_pages,
				     KVM_PREFETCH_GUP_NOFAULT);
		KT_ASSERT(!r, "%s: KVM_SET_PREFETCH_POLICY: %s", c->id,
			  strerror(-r));
		/* A policy module (adaptive) is autoloaded now: list it. */
		if (!strcmp(c->policy, "adaptive"))
			print_modules();
	}
	if (c->record) {
		struct kvm_prefetch_order_op op = {
			.op = KVM_PREFETCH_RECORD_START,
		};

		KT_ASSERT(!ioctl(vm->fd, KVM_PREFETCH_ORDER, &op),
			  "%s: RECORD_START: %s", c->id, strerror(errno));
	}
	vcpu = kt_vcpu_add(vm, 0);
	/* An empty pass: the code page and the first entry, not measured. */
	kt_touch(vcpu, DATA_GPA, DATA_GPA, 0, KT_TOUCH_WRITE);
	/* After it, whose fault would replay the order unmeasured. */
	if (c->replay_run)
		load_order(vm, c, pages);

	have = !kt_vcpu_stat(vcpu, "prefetch_windows", &w0);
	pf0 = kt_vcpu_stat_get(vcpu, "pf_taken");
	if (have)
		m0 = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	s0 = mark();
	kt_touch(vcpu, DATA_GPA, DATA_GPA + size, 0, KT_TOUCH_WRITE);
	s1 = mark();
	pf1 = kt_vcpu_stat_get(vcpu, "pf_taken");
	if (have) {
		w1 = kt_vcpu_stat_get(vcpu, "prefetch_windows");
		m1 = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	}

	for (i = 0; i < pages; i++) {
		const uint32_t *p = (const uint32_t *)(mem + i * KT_PAGE_SIZE);

		if (p[0] != DATA_GPA + i * KT_PAGE_SIZE ||
		    p[1] != (c->cold ? 0 : 0x5a5a5a5a))
			bad++;
	}
	if (bad)
		kt_fail("%s, %llu pages: %llu pages with wrong contents",
			c->id, (unsigned long long)pages,
			(unsigned long long)bad);
	printf("@@COST cfg=%s pages=%llu s0=%u s1=%u pf=%llu windows=%llu mapped=%llu ok=%d\n",
	       c->id, (unsigned long long)pages, s0, s1,
	       (unsigned long long)(pf1 - pf0), (unsigned long long)(w1 - w0),
	       (unsigned long long)(m1 - m0), !bad);
	fflush(stdout);
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

static void parse_args(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		char *v = strchr(argv[i], '=');

		KT_ASSERT(v, "argument %s: want key=value", argv[i]);
		*v++ = '\0';
		if (!strcmp(argv[i], "pages")) {
			char *tok, *save;

			nr_sizes = 0;
			for (tok = strtok_r(v, ":", &save); tok;
			     tok = strtok_r(NULL, ":", &save)) {
				KT_ASSERT(nr_sizes < MAX_SIZES, "too many sizes");
				sizes[nr_sizes] = strtoull(tok, NULL, 0);
				KT_ASSERT(sizes[nr_sizes] &&
					  sizes[nr_sizes] % 512 == 0,
					  "pages=%s: want multiples of 512",
					  tok);
				nr_sizes++;
			}
		} else if (!strcmp(argv[i], "syms")) {
			want_syms = !strcmp(v, "1");
		} else if (!strcmp(argv[i], "cfgs")) {
			snprintf(cfg_list, sizeof(cfg_list), "%s", v);
		} else {
			KT_ASSERT(0, "unknown argument %s", argv[i]);
		}
	}
}

int main(int argc, char **argv)
{
	const char *mods = NULL;
	char *tok, *save;
	cpu_set_t cpus;
	unsigned int i, s;

	parse_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/*
	 * One CPU, the last: the same code paths in every run, and (with
	 * nohz_full=<that CPU> on the command line, which make cost gives)
	 * no timer tick while the vCPU runs, whose interrupts would make VM
	 * exits that differ from boot to boot.
	 */
	CPU_ZERO(&cpus);
	CPU_SET(sysconf(_SC_NPROCESSORS_ONLN) - 1, &cpus);
	KT_ASSERT(!sched_setaffinity(0, sizeof(cpus), &cpus),
		  "sched_setaffinity: %s", strerror(errno));

	for (tok = strtok_r(cfg_list, ":", &save); tok;
	     tok = strtok_r(NULL, ":", &save)) {
		const struct cfg *c = NULL;

		for (i = 0; i < ARRAY_SIZE(all_cfgs); i++)
			if (!strcmp(all_cfgs[i].id, tok))
				c = &all_cfgs[i];
		KT_ASSERT(c, "unknown configuration %s", tok);
		if (!mods || strcmp(mods, c->policy ? "ours" : "stock")) {
			mods = c->policy ? "ours" : "stock";
			KT_ASSERT(!ktb_swap_modules(mods), "kvm-reload %s",
				  mods);
			print_modules();
		}
		if (c->policy && !strncmp(c->policy, "bpf_", 4) &&
		    strcmp(c->policy, bpf_loaded)) {
			char cmd[128];

			if (bpf_loaded[0]) {
				snprintf(cmd, sizeof(cmd),
					 "kvm-prefetch bpf unload %s", bpf_loaded);
				KT_ASSERT(!system(cmd), "%s", cmd);
			}
			/* bpf_<name> comes from /bpf/<name>.bpf.o. */
			snprintf(cmd, sizeof(cmd),
				 "kvm-prefetch bpf load /bpf/%s.bpf.o",
				 c->policy + 4);
			KT_ASSERT(!system(cmd), "%s", cmd);
			snprintf(bpf_loaded, sizeof(bpf_loaded), "%s", c->policy);
		}
		for (s = 0; s < nr_sizes; s++)
			run(c, sizes[s]);
	}
	if (bpf_loaded[0]) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "kvm-prefetch bpf unload %s",
			 bpf_loaded);
		KT_ASSERT(!system(cmd), "%s", cmd);
	}
	if (mods && strcmp(mods, "ours"))
		KT_ASSERT(!ktb_swap_modules("ours"), "kvm-reload ours");
	if (!kt_failures())
		kt_pass("cost: every page right in every run (%u marks)",
			nr_marks);
	return kt_exit();
}
