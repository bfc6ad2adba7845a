// SPDX-License-Identifier: GPL-2.0
/*
 * adaptive_default - adaptive without tuning (issue 13).
 *
 * A VMM that selects adaptive with nr_pages 0, and a VM that starts with
 * adaptive as the kvm.prefetch_policy default, get adaptive's declared
 * window (512 pages), not kvm.prefetch_nr_pages (8). Then a userfaultfd
 * restore of 16 MiB takes, for every chunk size, one guest fault per
 * chunk plus a fixed ramp while adaptive's window grows (4, 16, 64, 256,
 * 512 pages; v2 of issue 49, which opens no window on a stream's first
 * fault):
 *
 *	chunk	chunks	guest faults	ramp
 *	64 KiB	256	258		+2
 *	512 KiB	32	36		+4
 *	2 MiB	8	13		+5
 *
 * (the same ramp as the unit tests' simulation of the stream logic).
 * Capped at 8 pages, as adaptive was before issue 13, it would take
 * two faults per 64 KiB chunk and many more for larger ones.
 *
 * Asserted for each run: GET reports nr_pages 512, pf_taken == chunks +
 * ramp, prefetch_mapped == pages - pf_taken, userfaultfd events ==
 * chunks, every page's contents.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "kvmtest.h"
#include "kt_sys.h"
#include "kt_bench.h"

#define SIZE		(16ULL << 20)
#define DECLARED	512	/* adaptive's default_nr_pages */

static const struct {
	uint64_t chunk;
	uint64_t ramp;
} cases[] = {
	{ 64ULL << 10, 2 },
	{ 512ULL << 10, 4 },
	{ 2ULL << 20, 5 },
};

static char *src;

static void check_run(const char *how, uint64_t chunk, uint64_t ramp,
		      const struct ktb_config *cfg)
{
	const uint64_t pages = SIZE / KT_PAGE_SIZE, chunks = SIZE / chunk;
	struct ktb_result r;
	int ret;

	ret = ktb_run(src, SIZE, chunk, cfg, &r);
	KT_ASSERT(!ret, "%s: KVM_SET_PREFETCH_POLICY: %s", how, strerror(-ret));
	kt_info("%s, %llu KiB chunks: pf_taken %llu for %llu chunks, windows %llu, mapped %llu, %.1f ms",
		how, (unsigned long long)(chunk >> 10),
		(unsigned long long)r.pf, (unsigned long long)chunks,
		(unsigned long long)r.windows, (unsigned long long)r.mapped,
		r.ms);
	KT_EXPECT(r.ok, "%s, %llu KiB: contents of all %llu pages verified%s%s",
		  how, (unsigned long long)(chunk >> 10),
		  (unsigned long long)pages, r.ok ? "" : ": ", r.err);
	KT_EXPECT(r.events == chunks,
		  "%s, %llu KiB: userfaultfd events %llu, want %llu",
		  how, (unsigned long long)(chunk >> 10),
		  (unsigned long long)r.events, (unsigned long long)chunks);
	KT_EXPECT(r.pf == chunks + ramp,
		  "%s, %llu KiB: pf_taken %llu, want %llu chunks + %llu ramp",
		  how, (unsigned long long)(chunk >> 10),
		  (unsigned long long)r.pf, (unsigned long long)chunks,
		  (unsigned long long)ramp);
	KT_EXPECT(r.have_prefetch && r.mapped == pages - r.pf,
		  "%s, %llu KiB: prefetch_mapped %llu, want pages - pf_taken = %llu",
		  how, (unsigned long long)(chunk >> 10),
		  (unsigned long long)r.mapped,
		  (unsigned long long)(pages - r.pf));
}

/* GET on a fresh VM with @cfg reports adaptive's declared window. */
static void check_window(const char *how, const struct ktb_config *cfg)
{
	struct kvm_prefetch_policy p;
	struct kt_vm *vm = kt_vm_create();

	if (cfg->policy)
		KT_ASSERT(!ktsys_set_policy(vm->fd, cfg->policy, cfg->nr_pages,
					    cfg->gup),
			  "%s: KVM_SET_PREFETCH_POLICY", how);
	KT_ASSERT(!ktsys_get_policy(vm->fd, &p), "%s: GET", how);
	KT_EXPECT(!strcmp(p.name, "adaptive") && p.nr_pages == DECLARED,
		  "%s: GET says %s nr_pages=%u, want adaptive nr_pages=%d",
		  how, p.name, p.nr_pages, DECLARED);
	kt_vm_free(vm);
}

int main(void)
{
	struct ktb_config selected = {
		.policy = "adaptive", .nr_pages = 0,
		.gup = KVM_PREFETCH_GUP_NOFAULT,
	};
	struct ktb_config inherited = { .policy = NULL };
	unsigned int i;

	ktsys_start_ours(600);
	src = ktb_src_alloc(SIZE);

	/* The sysfs window stays 8 throughout: adaptive must not use it. */
	KT_ASSERT(!ktsys_set_defaults("auto", "8", "nofault"),
		  "defaults auto/8/nofault");
	check_window("adaptive selected with nr_pages 0", &selected);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_run("adaptive selected with nr_pages 0", cases[i].chunk,
			  cases[i].ramp, &selected);

	KT_ASSERT(!ktsys_set_defaults("adaptive", "8", "nofault"),
		  "defaults adaptive/8/nofault");
	check_window("new VM under the sysfs default adaptive", &inherited);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_run("new VM under the sysfs default adaptive",
			  cases[i].chunk, cases[i].ramp, &inherited);

	KT_EXPECT(!ktsys_set_defaults("none", "8", "nofault"),
		  "defaults back to none/8/nofault");
	ktb_src_free(src, SIZE);
	return kt_exit();
}
