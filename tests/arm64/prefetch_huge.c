// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_huge: the arm64 engine maps a 2 MiB block where the host maps
 * one (a THP), as the fault path does, and 4 KiB pages where it cannot.
 *
 * Each case is a fresh VM with an 8 MiB data memslot (4 blocks), its
 * host memory populated by the host, and auto with windows of 1024
 * pages: blocks 0-1 and blocks 2-3.  The guest writes the first page of
 * block 0, then that of block 3: two faults, two windows; the engine maps
 * block 1 (forward of the first fault) and block 2 (backward of the
 * second).  Each window maps one block at most, so the per-exit budget,
 * which may end a window once 512 pages are mapped, never cuts these
 * short.  A write pass over the slot then takes no fault.

 * How a block is seen from outside: with dirty logging turned on, the
 * slot's stage-2 entries are write-protected as they are, blocks as
 * blocks.  The guest then writes the first page of a block and reads its
 * other 511.  A 4 KiB write fault of a dirty-logged slot that lands in a
 * block mapping replaces the block with a table holding that one page
 * (6.1's kvm_pgtable_stage2_map(): the rest "will be mapped lazily"), so
 * the reads fault 511 times: 512 faults for a block.  Where the slot was
 * mapped by pages, the write relaxes one page's permissions and the reads
 * find their pages: 1 fault.
 *
 *  - control, none: the fault path maps each block it faults in as a
 *    block (the probe gives 512 for each of the 4 blocks);
 *  - auto-1024 on THPs, slot aligned: 1024 pages prefetched; blocks 1
 *    and 2, like the faults' blocks 0 and 3, probe 512;
 *  - auto-1024 on THPs, but the slot's host address 4 KiB past a 2 MiB
 *    boundary (guest and host blocks not congruent): pages only, each
 *    block probes 1;
 *  - auto-1024 on 4 KiB host pages (MADV_NOHUGEPAGE): pages only, 1;
 *  - none, the slot pre-faulted with KVM_PRE_FAULT_MEMORY instead of
 *    faulted in: no guest fault, and each block probes 512 (the pre-fault
 *    goes through the fault path, which maps THPs as blocks).
 * In the last two a window maps up to 1023 pages and may stop after 512:
 * they check that each maps at least 512, and that the prefetched pages
 * and the faults add up to the slot's 2048.

 * The test turns THP on ("madvise": tests/arm64/init.c leaves it at
 * "never") and off again; the THP cases are skipped if the host did not
 * get huge pages for the memory (AnonHugePages of /proc/self/smaps).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "a64.h"

#define DATA_SLOT	1
#define DATA_GPA	0x2000000ULL
#define BLOCK		0x200000ULL
#define NR_BLOCKS	4
#define SLOT_SIZE	(NR_BLOCKS * BLOCK)
#define BLOCK_PAGES	((uint64_t)(BLOCK / A64_PAGE))
#define SLOT_PAGES	((uint64_t)(SLOT_SIZE / A64_PAGE))
#define WINDOW		(2 * BLOCK_PAGES)
#define THP_PATH	"/sys/kernel/mm/transparent_hugepage/enabled"

enum backing { THP, THP_SKEWED, SMALL };

static const char *const backing_name[] = {
	[THP] = "THP", [THP_SKEWED] = "THP, host 4 KiB off a block",
	[SMALL] = "4 KiB host pages",
};

/* kB of AnonHugePages of the mapping holding @addr, or -1. */
static long anon_huge_kb(const void *addr)
{
	char line[256];
	unsigned long lo, hi, a = (unsigned long)addr;
	bool in = false;
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/*
 * Host memory for the slot: 2 MiB-aligned (THP_SKEWED: 4 KiB past it),
 * huge pages asked for or refused, every page written by the host.
 */
static char *host_memory(enum backing b, void **map, size_t *map_len)
{
	char *base, *mem;
	uint64_t i;

	*map_len = SLOT_SIZE + 2 * BLOCK;
	*map = mmap(NULL, *map_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	A64_ASSERT(*map != MAP_FAILED, "mmap: %s", strerror(errno));
	base = (char *)(((uintptr_t)*map + BLOCK - 1) & ~(BLOCK - 1));
	madvise(*map, *map_len, b == SMALL ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
	mem = base + (b == THP_SKEWED ? A64_PAGE : 0);
	/* The blocks around the slot too, so that THP_SKEWED's are huge. */
	for (i = 0; i < SLOT_SIZE + BLOCK; i += A64_PAGE)
		base[i] = 1;
	for (i = 0; i < SLOT_PAGES; i++)
		memcpy(mem + i * A64_PAGE, &(uint32_t){ 0xa5000000u | (uint32_t)i }, 4);
	return mem;
}

/* The probe: faults of a write to a block's first page and reads of the rest. */
static uint64_t probe(struct a64_vcpu *vcpu, int block)
{
	uint64_t gpa = DATA_GPA + block * BLOCK;
	uint64_t pf0 = a64_vcpu_stat_get(vcpu, "pf_taken");

	a64_touch(vcpu, gpa, gpa + A64_PAGE, 0, A64_TOUCH_WRITE);
	a64_touch(vcpu, gpa + A64_PAGE, gpa + BLOCK, 0, A64_TOUCH_READ);
	return a64_vcpu_stat_get(vcpu, "pf_taken") - pf0;
}

static void run_case(const char *policy, uint32_t nr_pages, enum backing b,
		     bool prefault)
{
	bool prefetch = strcmp(policy, "none");
	uint64_t pf0, w0, m0, pf1, w1, m1, pf2, m2, want;
	struct a64_vcpu *vcpu;
	struct a64_vm *vm;
	size_t map_len;
	char name[96];
	void *map;
	char *mem;
	long kb;
	int i, r;

	snprintf(name, sizeof(name), "%s-%u, %s%s", policy, nr_pages,
		 backing_name[b], prefault ? ", pre-faulted" : "");
	mem = host_memory(b, &map, &map_len);
	kb = anon_huge_kb(mem);
	if (b != SMALL && kb < (long)((SLOT_SIZE - BLOCK) >> 10)) {
		a64_skip("%s: the host got %ld kB of huge pages for %llu kB",
			 name, kb, (unsigned long long)(SLOT_SIZE >> 10));
		munmap(map, map_len);
		return;
	}
	vm = a64_vm_create();
	r = a64_vm_set_prefetch(vm, policy, nr_pages, KVM_PREFETCH_GUP_NOFAULT);
	if (!A64_EXPECT(!r, "%s: KVM_SET_PREFETCH_POLICY: %s", name,
			r ? strerror(-r) : "ok"))
		goto out;
	a64_vm_add_slot(vm, DATA_SLOT, DATA_GPA, SLOT_SIZE, 0, mem, false);
	vcpu = a64_vcpu_add(vm, 0);
	/* The code page's own fault (and its window) first. */
	a64_touch(vcpu, DATA_GPA, DATA_GPA, 0, A64_TOUCH_WRITE);
	pf0 = a64_vcpu_stat_get(vcpu, "pf_taken");
	w0 = a64_vcpu_stat_get(vcpu, "prefetch_windows");
	m0 = a64_vcpu_stat_get(vcpu, "prefetch_mapped");

	if (prefault) {
		/* KVM_PRE_FAULT_MEMORY over the slot: no guest fault. */
		uint64_t left;

		r = a64_pre_fault(vcpu, DATA_GPA, SLOT_SIZE, 0, &left);
		pf1 = a64_vcpu_stat_get(vcpu, "pf_taken");
		A64_EXPECT(!r && !left && pf1 == pf0,
			   "%s: KVM_PRE_FAULT_MEMORY of the slot: %s, %" PRIu64 " bytes left, %" PRIu64 " guest faults",
			   name, r ? strerror(-r) : "ok", left, pf1 - pf0);
	} else if (!prefetch) {
		/* One fault per block: each maps its whole block. */
		a64_touch(vcpu, DATA_GPA, DATA_GPA + SLOT_SIZE, BLOCK,
			  A64_TOUCH_WRITE);
		pf1 = a64_vcpu_stat_get(vcpu, "pf_taken");
		A64_EXPECT(pf1 - pf0 == NR_BLOCKS,
			   "%s: one fault per block (%" PRIu64 " for %d)", name,
			   pf1 - pf0, NR_BLOCKS);
	} else {
		/* The first page of block 0, then of block 3. */
		a64_touch(vcpu, DATA_GPA, DATA_GPA + A64_PAGE, 0, A64_TOUCH_WRITE);
		a64_touch(vcpu, DATA_GPA + 3 * BLOCK, DATA_GPA + 3 * BLOCK + A64_PAGE,
			  0, A64_TOUCH_WRITE);
		pf1 = a64_vcpu_stat_get(vcpu, "pf_taken");
		A64_EXPECT(pf1 - pf0 == 2, "%s: the two first writes take 2 faults (%" PRIu64 ")",
			   name, pf1 - pf0);
	}
	w1 = a64_vcpu_stat_get(vcpu, "prefetch_windows");
	m1 = a64_vcpu_stat_get(vcpu, "prefetch_mapped");
	a64_info("%s: pf_taken %" PRIu64 ", prefetch_windows %" PRIu64
		 ", prefetch_mapped %" PRIu64, name, pf1 - pf0, w1 - w0, m1 - m0);
	if (!prefetch)
		A64_EXPECT(w1 == w0 && m1 == m0, "%s: no window (%" PRIu64 ", %" PRIu64 ")",
			   name, w1 - w0, m1 - m0);
	else if (b == THP)
		/* Blocks 1 and 2, one per window. */
		A64_EXPECT(w1 - w0 == 2 && m1 - m0 == 2 * BLOCK_PAGES,
			   "%s: prefetch_windows %" PRIu64 ", prefetch_mapped %" PRIu64
			   " (want 2, %" PRIu64 ")", name, w1 - w0, m1 - m0,
			   2 * BLOCK_PAGES);
	else
		/* Pages: up to 1023 a window, never fewer than 512 each. */
		A64_EXPECT(w1 - w0 == 2 && m1 - m0 >= 2 * BLOCK_PAGES &&
			   m1 - m0 <= 2 * (WINDOW - 1),
			   "%s: prefetch_windows %" PRIu64 ", prefetch_mapped %" PRIu64
			   " (want 2, %" PRIu64 "..%" PRIu64 ")", name, w1 - w0,
			   m1 - m0, 2 * BLOCK_PAGES, 2 * (WINDOW - 1));

	a64_touch(vcpu, DATA_GPA, DATA_GPA + SLOT_SIZE, 0, A64_TOUCH_WRITE);
	pf2 = a64_vcpu_stat_get(vcpu, "pf_taken");
	m2 = a64_vcpu_stat_get(vcpu, "prefetch_mapped");
	if (b == THP)
		A64_EXPECT(pf2 == pf1, "%s: a write pass over the slot then takes 0 faults (%" PRIu64 ")",
			   name, pf2 - pf1);
	else
		A64_EXPECT((m2 - m0) + (pf2 - pf0) == SLOT_PAGES,
			   "%s: after a write pass, prefetched %" PRIu64 " + faults %" PRIu64
			   " == %" PRIu64 " pages", name, m2 - m0, pf2 - pf0, SLOT_PAGES);
	for (r = 0, i = 0; i < (int)SLOT_PAGES; i++) {
		uint32_t v;

		memcpy(&v, mem + i * A64_PAGE, 4);
		r += v != (uint32_t)(DATA_GPA + i * A64_PAGE);
	}
	A64_EXPECT(!r, "%s: the host reads what the guest wrote (%d pages wrong)",
		   name, r);

	/* The probe, block by block: 0 and 3 are the faults' (the control). */
	a64_vm_set_slot_flags(vm, DATA_SLOT, KVM_MEM_LOG_DIRTY_PAGES);
	want = b == THP ? BLOCK_PAGES : 1;
	for (i = 0; i < NR_BLOCKS; i++) {
		uint64_t n = probe(vcpu, i);

		A64_EXPECT(n == want,
			   "%s: block %d (%s) is mapped %s: the probe takes %" PRIu64
			   " faults, want %" PRIu64, name, i,
			   prefault ? "pre-faulted" :
			   prefetch && (i == 1 || i == 2) ? "prefetched" : "faulted in",
			   want == 1 ? "by 4 KiB pages" : "as one block", n, want);
	}
	a64_vcpu_free(vcpu);
out:
	a64_vm_free(vm);
	munmap(map, map_len);
}

static void thp_set(const char *mode)
{
	int fd = open(THP_PATH, O_WRONLY);

	A64_ASSERT(fd >= 0 && write(fd, mode, strlen(mode)) == (ssize_t)strlen(mode),
		   "%s <- %s: %s", THP_PATH, mode, strerror(errno));
	close(fd);
}

int main(void)
{
	a64_require_prefetch();
	thp_set("madvise");
	run_case("none", 0, THP, false);
	run_case("auto", WINDOW, THP, false);
	run_case("auto", WINDOW, THP_SKEWED, false);
	run_case("auto", WINDOW, SMALL, false);
	run_case("none", 0, THP, true);
	thp_set("never");
	return a64_exit();
}
