// SPDX-License-Identifier: GPL-2.0
/*
 * bench_gmem - the restore benchmark's guest_memfd row (make bench-gmem,
 * the 7.3 base).
 *
 * Guest memory in a guest_memfd (kt_gmem.h).  guest_memfd has no
 * userfaultfd, so the restore is chunk by chunk: the "VMM" writes chunk c
 * of a source buffer through the guest_memfd's mmap, then the guest reads
 * every page of the chunk (one KVM_RUN of the touch program per chunk,
 * the same in every arm).  Arms, per chunk size:
 *
 *   none      policy none: one guest fault per page;
 *   auto-C    policy auto, window = chunk: the first page's fault maps
 *             the rest of the chunk from the file;
 *   prefault  policy none, and the VMM calls KVM_PRE_FAULT_MEMORY over
 *             the chunk after writing it, before the guest reads it
 *             (upstream's ABI, what a VMM can do without us);
 *   floor     everything written and pre-faulted before the timed pass:
 *             the pass alone.
 *
 * Time: wall clock of the whole restore (writes, prefaults, guest reads),
 * median of BG_ROUNDS rounds, arms interleaved within each round.  Every
 * chunk's contents are checked by the guest's checksum.  Guest faults and
 * prefetched pages are counted exactly (pf_taken, prefetch_mapped).
 * Output: one "@@GMEM" line per run, then a markdown table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kvmtest.h"
#include "kt_gmem.h"
#include "kt_sys.h"

#define SLOT		1
#define GPA		0x10000000ULL
#define SIZE		(32ULL << 20)
#define BG_ROUNDS	5

enum arm { ARM_NONE, ARM_AUTO, ARM_PREFAULT, ARM_FLOOR, ARM_NR };
static const char *const arm_names[ARM_NR] = {
	"none", "auto-C", "prefault", "floor",
};
static const uint64_t chunk_kib[] = { 4, 16, 64, 512, 2048 };
#define NR_CHUNKS	ARRAY_SIZE(chunk_kib)

struct bg_run {
	double ms;
	uint64_t pf, mapped;
	bool ok;
};

static struct bg_run runs[NR_CHUNKS][ARM_NR][BG_ROUNDS];
static char *src;

static uint32_t chunk_sum(uint64_t off, uint64_t len)
{
	uint32_t sum = 0;
	uint64_t i;

	for (i = 0; i < len; i += KT_PAGE_SIZE)
		sum += *(uint32_t *)(src + off + i);
	return sum;
}

static int pre_fault(struct kt_gmem *g, uint64_t off, uint64_t len)
{
	struct kvm_pre_fault_memory r = { .gpa = g->gpa + off, .size = len };
	int ret;

	do {
		ret = ioctl(g->vcpu->fd, KVM_PRE_FAULT_MEMORY, &r) ? -errno : 0;
	} while (ret == -EINTR || (ret == -EAGAIN && r.size));
	return ret ? ret : (r.size ? -EIO : 0);
}

static struct bg_run run_one(uint64_t chunk, enum arm arm)
{
	struct kt_counts a, b;
	struct bg_run r = { .ok = true };
	struct kt_gmem g;
	uint64_t off;
	double t0;

	kt_gmem_vm_create(&g, SLOT, GPA, SIZE,
			  arm == ARM_AUTO ? "auto" : "none",
			  arm == ARM_AUTO ? chunk / KT_PAGE_SIZE : 1);
	if (arm == ARM_FLOOR) {
		memcpy(g.mem, src, SIZE);
		KT_ASSERT(!pre_fault(&g, 0, SIZE), "floor: KVM_PRE_FAULT_MEMORY");
	}
	a = kt_counts_read(g.vm, g.vcpu);
	t0 = kt_now_ns() / 1e6;
	for (off = 0; off < SIZE; off += chunk) {
		if (arm != ARM_FLOOR)
			memcpy(g.mem + off, src + off, chunk);
		if (arm == ARM_PREFAULT && pre_fault(&g, off, chunk))
			r.ok = false;
		if (kt_touch(g.vcpu, GPA + off, GPA + off + chunk, 0,
			     KT_TOUCH_READ) != chunk_sum(off, chunk))
			r.ok = false;
	}
	r.ms = kt_now_ns() / 1e6 - t0;
	b = kt_counts_read(g.vm, g.vcpu);
	r.pf = b.pf - a.pf;
	r.mapped = b.mapped - a.mapped;
	kt_gmem_vm_free(&g);
	printf("@@GMEM chunk_kib=%llu arm=%s ms=%.1f pf=%llu mapped=%llu ok=%d\n",
	       (unsigned long long)(chunk >> 10), arm_names[arm], r.ms,
	       (unsigned long long)r.pf, (unsigned long long)r.mapped, r.ok);
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_ms(const struct bg_run *r)
{
	double ms[BG_ROUNDS];
	int i;

	for (i = 0; i < BG_ROUNDS; i++)
		ms[i] = r[i].ms;
	qsort(ms, BG_ROUNDS, sizeof(ms[0]), cmp_double);
	return ms[BG_ROUNDS / 2];
}

int main(void)
{
	const char *why;
	uint64_t i, c;
	int round, arm;

	kt_require_kvm();
	ktsys_require_prefetch();
	ktsys_guard(1800);
	KT_REQUIRE(kt_gmem_supported(&why), "%s", why);
	src = malloc(SIZE);
	KT_ASSERT(src, "malloc");
	for (i = 0; i < SIZE; i += KT_PAGE_SIZE)
		*(uint32_t *)(src + i) = 0x5a000000u + (uint32_t)(i >> 12);

	for (round = 0; round < BG_ROUNDS; round++)
		for (c = 0; c < NR_CHUNKS; c++)
			for (arm = 0; arm < ARM_NR; arm++)
				runs[c][arm][round] =
					run_one(chunk_kib[c] << 10, arm);

	printf("\n| chunk | arm | median ms | vs none | faults/chunk | prefetched pages |\n");
	printf("|---|---|---|---|---|---|\n");
	for (c = 0; c < NR_CHUNKS; c++) {
		double none = median_ms(runs[c][ARM_NONE]);
		uint64_t chunks = SIZE / (chunk_kib[c] << 10);

		for (arm = 0; arm < ARM_NR; arm++) {
			const struct bg_run *r = runs[c][arm];
			bool ok = true;

			for (round = 0; round < BG_ROUNDS; round++)
				ok &= r[round].ok;
			KT_EXPECT(ok, "%llu KiB %s: every chunk's contents right in %d rounds",
				  (unsigned long long)chunk_kib[c],
				  arm_names[arm], BG_ROUNDS);
			printf("| %llu KiB | %s | %.1f | %+.0f%% | %.2f | %llu |\n",
			       (unsigned long long)chunk_kib[c],
			       arm_names[arm], median_ms(r),
			       (median_ms(r) / none - 1) * 100,
			       (double)r[0].pf / chunks,
			       (unsigned long long)r[0].mapped);
		}
		KT_EXPECT(runs[c][ARM_AUTO][0].pf == chunks,
			  "%llu KiB auto-C: %llu guest faults, want %llu (1.00 per chunk)",
			  (unsigned long long)chunk_kib[c],
			  (unsigned long long)runs[c][ARM_AUTO][0].pf,
			  (unsigned long long)chunks);
	}
	free(src);
	return kt_exit();
}
