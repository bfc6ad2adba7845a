// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_gmem - prefetch over guest_memfd memory (Linux 7.3 base).
 *
 * A non-CoCo VM whose memslot only guest_memfd backs: a guest_memfd
 * created with GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED,
 * mmap()ed by the "VMM", bound to memslot 1 with KVM_MEM_GUEST_MEMFD.
 * There is no userfaultfd on guest_memfd, so the restore is the VMM
 * writing a chunk through the mmap before the guest reads it (as a
 * handler would have, on the guest's request).  Checked, with exact
 * counts:
 *
 *  1. restore, policy none: every page of every chunk is one guest fault
 *     (the control);
 *  2. restore, policy auto (nr_pages = chunk): 1.00 guest fault per
 *     chunk, the window mapping the other pages from the file; every
 *     page's contents right;
 *  3. a window never allocates: with only the first page of a chunk in
 *     the file, the guest's fault there maps nothing else, and mincore()
 *     on the mmap shows the other pages still absent from the file;
 *  4. KVM_PRE_FAULT_MEMORY over a populated chunk: the guest then takes
 *     no fault there;
 *  5. a hole punched (fallocate) over a chunk the guest has mapped,
 *     prefetched pages included: the guest then reads zeros, never the
 *     old contents.
 *
 * SKIP where the base's uAPI or KVM has no mmap()able guest_memfd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvmtest.h"
#include "kt_gmem.h"
#include "kt_sys.h"

#define SLOT	1
#define GPA	0x10000000ULL
#define SIZE	(2ULL << 20)
#define CHUNK	(64ULL << 10)
#define PAGES_PER_CHUNK	(CHUNK / KT_PAGE_SIZE)

static uint32_t pattern(uint64_t off)
{
	return 0x5a000000u + (uint32_t)(off / KT_PAGE_SIZE);
}

static void gmem_vm_create(struct kt_gmem *g, const char *policy)
{
	kt_gmem_vm_create(g, SLOT, GPA, SIZE, policy, PAGES_PER_CHUNK);
}

/* The VMM writes chunk @c's pages (all, or the first @n) through the mmap. */
static void populate(struct kt_gmem *g, uint64_t c, uint64_t n)
{
	uint64_t i, off;

	for (i = 0; i < n; i++) {
		off = c * CHUNK + i * KT_PAGE_SIZE;
		*(uint32_t *)(g->mem + off) = pattern(off);
	}
}

/* The guest's sum of chunk @c's first dwords, as the touch program sums. */
static uint32_t chunk_sum(uint64_t c)
{
	uint32_t sum = 0;
	uint64_t i;

	for (i = 0; i < PAGES_PER_CHUNK; i++)
		sum += pattern(c * CHUNK + i * KT_PAGE_SIZE);
	return sum;
}

static uint32_t guest_read_chunk(struct kt_gmem *g, uint64_t c)
{
	return kt_touch(g->vcpu, GPA + c * CHUNK, GPA + (c + 1) * CHUNK, 0,
			KT_TOUCH_READ);
}

/* Items 1 and 2: the restore, chunk by chunk. */
static void restore(const char *policy)
{
	const uint64_t chunks = SIZE / CHUNK, pages = SIZE / KT_PAGE_SIZE;
	bool prefetch = !strcmp(policy, "auto");
	struct kt_counts a, b;
	struct kt_gmem g;
	uint64_t c, bad = 0;

	gmem_vm_create(&g, policy);
	a = kt_counts_read(g.vm, g.vcpu);
	for (c = 0; c < chunks; c++) {
		populate(&g, c, PAGES_PER_CHUNK);
		if (guest_read_chunk(&g, c) != chunk_sum(c))
			bad++;
	}
	b = kt_counts_read(g.vm, g.vcpu);
	kt_counts_info(&a, &b, "restore %s: %llu chunks of %llu KiB",
		       policy, (unsigned long long)chunks,
		       (unsigned long long)(CHUNK >> 10));
	KT_EXPECT(!bad, "restore %s: the guest read every chunk's contents (%llu wrong)",
		  policy, (unsigned long long)bad);
	if (prefetch) {
		KT_EXPECT(b.pf - a.pf == chunks,
			  "restore auto: pf_taken %llu, want %llu (1.00 per chunk)",
			  (unsigned long long)(b.pf - a.pf),
			  (unsigned long long)chunks);
		KT_EXPECT(b.windows - a.windows == chunks &&
			  b.mapped - a.mapped == pages - chunks,
			  "restore auto: prefetch_windows %llu mapped %llu, want %llu and %llu",
			  (unsigned long long)(b.windows - a.windows),
			  (unsigned long long)(b.mapped - a.mapped),
			  (unsigned long long)chunks,
			  (unsigned long long)(pages - chunks));
	} else {
		KT_EXPECT(b.pf - a.pf == pages && b.mapped == a.mapped,
			  "restore none: pf_taken %llu (want %llu), prefetch_mapped %llu (want 0)",
			  (unsigned long long)(b.pf - a.pf),
			  (unsigned long long)pages,
			  (unsigned long long)(b.mapped - a.mapped));
	}
	kt_gmem_vm_free(&g);
}

/* Pages of chunk @c that the file has (mincore() on the mmap). */
static uint64_t resident(struct kt_gmem *g, uint64_t c)
{
	unsigned char vec[PAGES_PER_CHUNK];
	uint64_t i, n = 0;

	KT_ASSERT(!mincore(g->mem + c * CHUNK, CHUNK, vec), "mincore: %s",
		  strerror(errno));
	for (i = 0; i < PAGES_PER_CHUNK; i++)
		n += vec[i] & 1;
	return n;
}

/* Item 3: a window maps what the file has and allocates nothing. */
static void no_allocation(void)
{
	struct kt_counts a, b;
	struct kt_gmem g;

	gmem_vm_create(&g, "auto");
	populate(&g, 3, 1);
	KT_ASSERT(resident(&g, 3) == 1, "one page of chunk 3 in the file");
	a = kt_counts_read(g.vm, g.vcpu);
	kt_touch(g.vcpu, GPA + 3 * CHUNK, GPA + 3 * CHUNK + KT_PAGE_SIZE, 0,
		 KT_TOUCH_READ);
	b = kt_counts_read(g.vm, g.vcpu);
	kt_counts_info(&a, &b, "one page of a chunk in the file");
	KT_EXPECT(b.pf - a.pf == 1 && b.mapped == a.mapped,
		  "window over absent pages: pf_taken %llu (want 1), mapped %llu (want 0)",
		  (unsigned long long)(b.pf - a.pf),
		  (unsigned long long)(b.mapped - a.mapped));
	KT_EXPECT(resident(&g, 3) == 1,
		  "window over absent pages: %llu of %llu pages in the file (want 1: nothing allocated)",
		  (unsigned long long)resident(&g, 3),
		  (unsigned long long)PAGES_PER_CHUNK);
	kt_gmem_vm_free(&g);
}

/* Item 4: KVM_PRE_FAULT_MEMORY over guest_memfd. */
static void pre_fault(void)
{
	struct kvm_pre_fault_memory r = {
		.gpa = GPA + 5 * CHUNK, .size = CHUNK,
	};
	struct kt_counts a, b;
	struct kt_gmem g;
	int ret;

	gmem_vm_create(&g, "none");
	populate(&g, 5, PAGES_PER_CHUNK);
	do {
		ret = ioctl(g.vcpu->fd, KVM_PRE_FAULT_MEMORY, &r) ? -errno : 0;
	} while (ret == -EINTR || (ret == -EAGAIN && r.size));
	KT_EXPECT(!ret && !r.size,
		  "KVM_PRE_FAULT_MEMORY over a populated guest_memfd chunk: %s, %llu bytes left",
		  strerror(-ret), (unsigned long long)r.size);
	a = kt_counts_read(g.vm, g.vcpu);
	KT_EXPECT(guest_read_chunk(&g, 5) == chunk_sum(5),
		  "pre-faulted chunk: contents right");
	b = kt_counts_read(g.vm, g.vcpu);
	KT_EXPECT(b.pf == a.pf, "pre-faulted chunk: pf_taken %llu, want 0",
		  (unsigned long long)(b.pf - a.pf));
	kt_gmem_vm_free(&g);
}

/* Item 5: a hole punched under prefetched mappings. */
static void hole_punch(void)
{
	struct kt_counts a, b;
	struct kt_gmem g;
	uint32_t sum;

	gmem_vm_create(&g, "auto");
	populate(&g, 7, PAGES_PER_CHUNK);
	a = kt_counts_read(g.vm, g.vcpu);
	KT_ASSERT(guest_read_chunk(&g, 7) == chunk_sum(7), "chunk 7 read");
	b = kt_counts_read(g.vm, g.vcpu);
	KT_ASSERT(b.pf - a.pf == 1 && b.mapped - a.mapped == PAGES_PER_CHUNK - 1,
		  "chunk 7 mapped by one fault and its window");
	KT_ASSERT(!fallocate(g.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			     7 * CHUNK, CHUNK),
		  "fallocate(PUNCH_HOLE): %s", strerror(errno));
	sum = guest_read_chunk(&g, 7);
	KT_EXPECT(sum == 0,
		  "after the hole punch the guest reads zeros (sum %#x, old contents %#x)",
		  sum, chunk_sum(7));
	kt_gmem_vm_free(&g);
}

int main(void)
{
	const char *why;

	kt_require_kvm();
	ktsys_require_prefetch();
	ktsys_guard(120);
	KT_REQUIRE(kt_gmem_supported(&why), "%s", why);

	restore("none");
	restore("auto");
	no_allocation();
	pre_fault();
	hole_punch();
	return kt_exit();
}
