// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_dirty - prefetch skips memslots with dirty logging.
 *
 * A 2 MiB memslot with KVM_MEM_LOG_DIRTY_PAGES over already-populated
 * host memory, policy auto with nr_pages 16:
 *
 *  1. The guest writes every 4th page of the first half. Each write is a
 *     guest fault (pf_taken == pages written), prefetch maps nothing
 *     (prefetch_mapped unchanged) and KVM_GET_DIRTY_LOG reports exactly
 *     the written pages: a prefetched page would be mapped writable and
 *     so marked dirty (6.1's make_spte marks every writable SPTE in a
 *     logged slot dirty).
 *  2. The guest reads every page of the first half: only the 3 in 4 not
 *     yet mapped fault, prefetch still maps nothing, and the dirty log
 *     then holds exactly the pages those read faults mapped (writable,
 *     hence dirty; the pages written in 1 were write-protected by the
 *     first KVM_GET_DIRTY_LOG and are not touched by reads).
 *  3. Dirty logging off (flags 0): the guest writes every page of the
 *     untouched second half and prefetch works again: one guest fault
 *     per aligned 16-page window, 15 pages prefetched per window.
 *
 * Host memory is checked page by page after each pass.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kvmtest.h"

#define DATA_SLOT	1
#define DATA_GPA	0x400000ULL
#define DATA_SIZE	(2ULL << 20)
#define DATA_PAGES	(DATA_SIZE / KT_PAGE_SIZE)	/* 512 */
#define HALF_PAGES	(DATA_PAGES / 2)		/* 256 */
#define NR_PAGES	16
#define WRITE_EVERY	4

static uint64_t bitmap[DATA_PAGES / 64];

static uint32_t fill_word(uint64_t page, uint64_t word)
{
	return 0xd1e70000u ^ (uint32_t)(page << 10) ^ (uint32_t)word;
}

/* 0 on success; the log of DATA_SLOT into bitmap[]. */
static void get_dirty_log(struct kt_vm *vm)
{
	struct kvm_dirty_log log;

	memset(&log, 0, sizeof(log));
	memset(bitmap, 0, sizeof(bitmap));
	log.slot = DATA_SLOT;
	log.dirty_bitmap = bitmap;
	KT_ASSERT(!ioctl(vm->fd, KVM_GET_DIRTY_LOG, &log),
		  "KVM_GET_DIRTY_LOG: %s", strerror(errno));
}

static bool test_bit_(uint64_t i)
{
	return bitmap[i / 64] & (1ULL << (i % 64));
}

/*
 * Compare bitmap[] with @want(i) for every page; print the first
 * mismatches, return how many pages differ.
 */
static uint64_t diff_bitmap(bool (*want)(uint64_t))
{
	uint64_t i, bad = 0;

	for (i = 0; i < DATA_PAGES; i++) {
		if (test_bit_(i) == want(i))
			continue;
		if (bad++ < 4)
			kt_info("dirty bit of page %llu is %d, want %d",
				(unsigned long long)i, test_bit_(i), want(i));
	}
	return bad;
}

static bool want_written(uint64_t i)
{
	return i < HALF_PAGES && !(i % WRITE_EVERY);
}

static bool want_read_mapped(uint64_t i)
{
	return i < HALF_PAGES && (i % WRITE_EVERY);
}

static uint64_t popcount_bitmap(void)
{
	uint64_t i, n = 0;

	for (i = 0; i < DATA_PAGES / 64; i++)
		n += __builtin_popcountll(bitmap[i]);
	return n;
}

/* Host memory: dword 0 is gpa if @written(i), else 0; the rest the fill. */
static uint64_t check_memory(char *mem, bool (*written)(uint64_t))
{
	uint64_t i, j, bad = 0;

	for (i = 0; i < DATA_PAGES; i++) {
		uint32_t *p = (uint32_t *)(mem + i * KT_PAGE_SIZE);
		uint32_t want0 = written(i) ?
			(uint32_t)(DATA_GPA + i * KT_PAGE_SIZE) : 0;
		bool ok = p[0] == want0;

		for (j = 1; ok && j < KT_PAGE_SIZE / 4; j++)
			ok = p[j] == fill_word(i, j);
		if (!ok && bad++ < 4)
			kt_info("page %llu: dword0 0x%x want 0x%x",
				(unsigned long long)i, p[0], want0);
	}
	return bad;
}

static bool written_phase1(uint64_t i)
{
	return want_written(i);
}

static bool written_phase3(uint64_t i)
{
	return want_written(i) || i >= HALF_PAGES;
}

int main(void)
{
	uint64_t pf0, pf1, pf2, pf3, m0, m1, m2, m3, w0, w1, w2, w3, i, j, bad;
	struct kvm_prefetch_policy pol;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	uint32_t half_end = DATA_GPA + HALF_PAGES * KT_PAGE_SIZE;
	uint32_t end = DATA_GPA + DATA_SIZE;
	uint64_t nwritten = HALF_PAGES / WRITE_EVERY;
	uint64_t nread = HALF_PAGES - nwritten;
	uint64_t windows = HALF_PAGES / NR_PAGES;
	char *mem;

	kt_require_kvm();
	vm = kt_vm_create();
	KT_REQUIRE(kt_vm_check_ext(vm, KVM_CAP_PREFETCH_POLICY) > 0,
		   "no KVM_CAP_PREFETCH_POLICY");

	memset(&pol, 0, sizeof(pol));
	strcpy(pol.name, "auto");
	pol.nr_pages = NR_PAGES;
	pol.gup = KVM_PREFETCH_GUP_NOFAULT;
	KT_ASSERT(!ioctl(vm->fd, KVM_SET_PREFETCH_POLICY, &pol),
		  "KVM_SET_PREFETCH_POLICY: %s", strerror(errno));

	mem = kt_vm_add_slot(vm, DATA_SLOT, DATA_GPA, DATA_SIZE,
			     KVM_MEM_LOG_DIRTY_PAGES, NULL);
	/* Populate all host memory before the guest runs. */
	for (i = 0; i < DATA_PAGES; i++) {
		uint32_t *p = (uint32_t *)(mem + i * KT_PAGE_SIZE);

		p[0] = 0;
		for (j = 1; j < KT_PAGE_SIZE / 4; j++)
			p[j] = fill_word(i, j);
	}
	vcpu = kt_vcpu_add(vm, 0);
	kt_touch(vcpu, DATA_GPA, DATA_GPA, 0, KT_TOUCH_READ);

	get_dirty_log(vm);
	KT_EXPECT(popcount_bitmap() == 0,
		  "dirty log empty before the guest touched the slot (%llu bits)",
		  (unsigned long long)popcount_bitmap());

	pf0 = kt_vcpu_stat_get(vcpu, "pf_taken");
	m0 = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	w0 = kt_vcpu_stat_get(vcpu, "prefetch_windows");

	/* 1: write every 4th page of the first half, logging on. */
	kt_touch(vcpu, DATA_GPA, half_end, WRITE_EVERY * KT_PAGE_SIZE,
		 KT_TOUCH_WRITE);
	pf1 = kt_vcpu_stat_get(vcpu, "pf_taken");
	m1 = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	w1 = kt_vcpu_stat_get(vcpu, "prefetch_windows");
	get_dirty_log(vm);
	kt_info("logging, write every %dth of %llu pages: pf_taken +%llu prefetch_mapped +%llu windows +%llu dirty bits %llu",
		WRITE_EVERY, (unsigned long long)HALF_PAGES,
		(unsigned long long)(pf1 - pf0),
		(unsigned long long)(m1 - m0), (unsigned long long)(w1 - w0),
		(unsigned long long)popcount_bitmap());
	KT_EXPECT(pf1 - pf0 == nwritten, "logging: pf_taken +%llu, want %llu (pages written)",
		  (unsigned long long)(pf1 - pf0), (unsigned long long)nwritten);
	KT_EXPECT(m1 == m0, "logging: prefetch_mapped +%llu, want 0",
		  (unsigned long long)(m1 - m0));
	bad = diff_bitmap(want_written);
	KT_EXPECT(!bad, "logging: dirty log is exactly the %llu written pages (%llu bits wrong)",
		  (unsigned long long)nwritten, (unsigned long long)bad);
	bad = check_memory(mem, written_phase1);
	KT_EXPECT(!bad, "logging: host memory of %llu pages right after the writes (%llu wrong)",
		  (unsigned long long)DATA_PAGES, (unsigned long long)bad);

	/* 2: read every page of the first half, logging still on. */
	kt_touch(vcpu, DATA_GPA, half_end, 0, KT_TOUCH_READ);
	pf2 = kt_vcpu_stat_get(vcpu, "pf_taken");
	m2 = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	w2 = kt_vcpu_stat_get(vcpu, "prefetch_windows");
	get_dirty_log(vm);
	kt_info("logging, read all %llu pages: pf_taken +%llu prefetch_mapped +%llu windows +%llu dirty bits %llu",
		(unsigned long long)HALF_PAGES,
		(unsigned long long)(pf2 - pf1),
		(unsigned long long)(m2 - m1), (unsigned long long)(w2 - w1),
		(unsigned long long)popcount_bitmap());
	KT_EXPECT(pf2 - pf1 == nread, "logging: read pass pf_taken +%llu, want %llu (pages not yet mapped)",
		  (unsigned long long)(pf2 - pf1), (unsigned long long)nread);
	KT_EXPECT(m2 == m1, "logging: read pass prefetch_mapped +%llu, want 0",
		  (unsigned long long)(m2 - m1));
	bad = diff_bitmap(want_read_mapped);
	KT_EXPECT(!bad, "logging: dirty log after the read pass is exactly the %llu pages read faults mapped (%llu bits wrong)",
		  (unsigned long long)nread, (unsigned long long)bad);

	/* 3: logging off; the second half has never been touched. */
	kt_vm_set_slot_flags(vm, DATA_SLOT, 0);
	kt_touch(vcpu, half_end, end, 0, KT_TOUCH_WRITE);
	pf3 = kt_vcpu_stat_get(vcpu, "pf_taken");
	m3 = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	w3 = kt_vcpu_stat_get(vcpu, "prefetch_windows");
	kt_info("logging off, write all %llu pages of the 2nd half: pf_taken +%llu prefetch_mapped +%llu windows +%llu",
		(unsigned long long)HALF_PAGES,
		(unsigned long long)(pf3 - pf2),
		(unsigned long long)(m3 - m2), (unsigned long long)(w3 - w2));
	KT_EXPECT(pf3 - pf2 == windows, "logging off: pf_taken +%llu, want %llu (one per %d-page window)",
		  (unsigned long long)(pf3 - pf2), (unsigned long long)windows,
		  NR_PAGES);
	KT_EXPECT(m3 - m2 == HALF_PAGES - windows, "logging off: prefetch_mapped +%llu, want %llu",
		  (unsigned long long)(m3 - m2),
		  (unsigned long long)(HALF_PAGES - windows));
	KT_EXPECT(w3 - w2 == windows, "logging off: prefetch_windows +%llu, want %llu",
		  (unsigned long long)(w3 - w2), (unsigned long long)windows);
	bad = check_memory(mem, written_phase3);
	KT_EXPECT(!bad, "logging off: host memory of %llu pages right (%llu wrong)",
		  (unsigned long long)DATA_PAGES, (unsigned long long)bad);

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	return kt_exit();
}
