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
#include "kt_sys.h"

#define DATA_SLOT	1
#define DATA_GPA	0x400000ULL
#define DATA_SIZE	(2ULL << 20)
#define DATA_PAGES	(DATA_SIZE / KT_PAGE_SIZE)	/* 512 */
#define HALF_PAGES	(DATA_PAGES / 2)		/* 256 */
#define NR_PAGES	16
#define WRITE_EVERY	4

static uint64_t bitmap[DATA_PAGES / 64];
static struct kt_vm *vm;
static struct kt_vcpu *vcpu;
static char *mem;

/* The vCPU's counters a phase compares, and their change in the phase. */
struct counters {
	uint64_t pf, mapped, windows;
};

static uint32_t fill_word(uint64_t page, uint64_t word)
{
	return 0xd1e70000u ^ (uint32_t)(page << 10) ^ (uint32_t)word;
}

/* The log of DATA_SLOT into bitmap[]. */
static void get_dirty_log(void)
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
static uint64_t check_memory(bool (*written)(uint64_t))
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

static void read_counters(struct counters *c)
{
	c->pf = kt_vcpu_stat_get(vcpu, "pf_taken");
	c->mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	c->windows = kt_vcpu_stat_get(vcpu, "prefetch_windows");
}

/*
 * After a guest pass: the change of the counters since *@last (which is
 * updated), logged as @what; with @log, also the slot's dirty log.
 */
static struct counters pass_delta(struct counters *last, const char *what,
				  bool log)
{
	struct counters now, d;
	char bits[32] = "";

	read_counters(&now);
	d.pf = now.pf - last->pf;
	d.mapped = now.mapped - last->mapped;
	d.windows = now.windows - last->windows;
	*last = now;
	if (log) {
		get_dirty_log();
		snprintf(bits, sizeof(bits), " dirty bits %llu",
			 (unsigned long long)popcount_bitmap());
	}
	kt_info("%s: pf_taken +%llu prefetch_mapped +%llu windows +%llu%s",
		what, (unsigned long long)d.pf, (unsigned long long)d.mapped,
		(unsigned long long)d.windows, bits);
	return d;
}

/*
 * A VM with policy auto / NR_PAGES, the logged slot over populated host
 * memory and a vCPU that has run once; the dirty log starts empty.
 */
static void setup(void)
{
	uint64_t i, j;
	int r;

	vm = kt_vm_create();
	KT_REQUIRE(kt_vm_check_ext(vm, KVM_CAP_PREFETCH_POLICY) > 0,
		   "no KVM_CAP_PREFETCH_POLICY");
	r = ktsys_set_policy(vm->fd, "auto", NR_PAGES,
			     KVM_PREFETCH_GUP_NOFAULT);
	KT_ASSERT(!r, "KVM_SET_PREFETCH_POLICY: %s", strerror(-r));

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

	get_dirty_log();
	KT_EXPECT(popcount_bitmap() == 0,
		  "dirty log empty before the guest touched the slot (%llu bits)",
		  (unsigned long long)popcount_bitmap());
}

/*
 * A guest pass over the first half with logging on, every @stride
 * bytes in @mode: each guest fault maps one page, prefetch maps none,
 * and the dirty log holds exactly the pages @mapped says the faults
 * mapped (writable, hence dirty).
 */
static void check_logged_pass(struct counters *last, const char *what,
			      uint32_t stride, enum kt_touch_mode mode,
			      bool (*mapped)(uint64_t))
{
	uint64_t want = 0, bad, i;
	struct counters d;

	for (i = 0; i < DATA_PAGES; i++)
		want += mapped(i);
	kt_touch(vcpu, DATA_GPA, DATA_GPA + HALF_PAGES * KT_PAGE_SIZE, stride,
		 mode);
	d = pass_delta(last, what, true);
	KT_EXPECT(d.pf == want, "%s: pf_taken +%llu, want %llu (pages mapped)",
		  what, (unsigned long long)d.pf, (unsigned long long)want);
	KT_EXPECT(!d.mapped, "%s: prefetch_mapped +%llu, want 0", what,
		  (unsigned long long)d.mapped);
	bad = diff_bitmap(mapped);
	KT_EXPECT(!bad, "%s: dirty log is exactly the %llu pages mapped (%llu bits wrong)",
		  what, (unsigned long long)want, (unsigned long long)bad);
}

/* 1: write every 4th page of the first half, logging on. */
static void check_logged_writes(struct counters *last)
{
	char what[96];
	uint64_t bad;

	snprintf(what, sizeof(what), "logging, write every %dth of %llu pages",
		 WRITE_EVERY, (unsigned long long)HALF_PAGES);
	check_logged_pass(last, what, WRITE_EVERY * KT_PAGE_SIZE,
			  KT_TOUCH_WRITE, want_written);
	bad = check_memory(written_phase1);
	KT_EXPECT(!bad, "logging: host memory of %llu pages right after the writes (%llu wrong)",
		  (unsigned long long)DATA_PAGES, (unsigned long long)bad);
}

/* 2: read every page of the first half, logging still on. */
static void check_logged_reads(struct counters *last)
{
	char what[96];

	snprintf(what, sizeof(what), "logging, read all %llu pages",
		 (unsigned long long)HALF_PAGES);
	check_logged_pass(last, what, 0, KT_TOUCH_READ, want_read_mapped);
}

/* 3: logging off; the second half has never been touched. */
static void check_unlogged_writes(struct counters *last)
{
	uint64_t windows = HALF_PAGES / NR_PAGES, bad;
	char what[96];
	struct counters d;

	kt_vm_set_slot_flags(vm, DATA_SLOT, 0);
	kt_touch(vcpu, DATA_GPA + HALF_PAGES * KT_PAGE_SIZE,
		 DATA_GPA + DATA_SIZE, 0, KT_TOUCH_WRITE);
	snprintf(what, sizeof(what),
		 "logging off, write all %llu pages of the 2nd half",
		 (unsigned long long)HALF_PAGES);
	d = pass_delta(last, what, false);
	KT_EXPECT(d.pf == windows, "logging off: pf_taken +%llu, want %llu (one per %d-page window)",
		  (unsigned long long)d.pf, (unsigned long long)windows,
		  NR_PAGES);
	KT_EXPECT(d.mapped == HALF_PAGES - windows, "logging off: prefetch_mapped +%llu, want %llu",
		  (unsigned long long)d.mapped,
		  (unsigned long long)(HALF_PAGES - windows));
	KT_EXPECT(d.windows == windows, "logging off: prefetch_windows +%llu, want %llu",
		  (unsigned long long)d.windows, (unsigned long long)windows);
	bad = check_memory(written_phase3);
	KT_EXPECT(!bad, "logging off: host memory of %llu pages right (%llu wrong)",
		  (unsigned long long)DATA_PAGES, (unsigned long long)bad);
}

int main(void)
{
	struct counters last;

	kt_require_kvm();
	setup();
	read_counters(&last);

	check_logged_writes(&last);
	check_logged_reads(&last);
	check_unlogged_writes(&last);

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	return kt_exit();
}
