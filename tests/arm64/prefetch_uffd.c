// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_uffd: a restore through userfaultfd, the case prefetch is for.
 * A 4 MiB memslot of anonymous memory (4 KiB host pages) starts empty and
 * registered with userfaultfd (missing faults); a handler thread answers
 * each event by copying the whole naturally aligned chunk around it
 * (UFFDIO_COPY from a snapshot buffer), as a VMM restoring a snapshot in
 * chunks would.  The guest reads every page once.
 *
 * Under none, every 4 KiB page takes a stage-2 fault (the first of each
 * chunk also a userfaultfd event).  Under auto with nr_pages the chunk's
 * pages (nofault), the fault that brought the chunk in opens the aligned
 * window that is the chunk, whose other pages the host now has: 1.00
 * guest fault and one event per chunk, and chunk - 1 pages prefetched.
 * The guest reads the snapshot's contents; a write pass after it takes
 * no fault (the pages are mapped writable).  Chunks of 64 KiB, 512 KiB
 * and 2 MiB; then windows of two 64 KiB chunks (nofault and fast): the
 * window's second chunk is not there yet, and prefetch never faults a
 * host page in, so still one fault and one event per chunk.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "a64.h"

#define DATA_SLOT	1
#define DATA_GPA	0x1000000ULL
#define SLOT_SIZE	(4ULL << 20)
#define NR_PAGES	(SLOT_SIZE / A64_PAGE)
#define NOFAULT		KVM_PREFETCH_GUP_NOFAULT
#define FAST		KVM_PREFETCH_GUP_FAST_ONLY

static uint64_t run(const char *policy, uint64_t chunk, uint32_t window,
		    uint32_t gup)
{
	uint64_t chunk_pages = chunk / A64_PAGE, nr_chunks = NR_PAGES / chunk_pages;
	uint64_t want_pf, want_mapped, pf0, m0, pf1, m1, pf2, t0, t1;
	struct a64_vcpu *vcpu;
	struct a64_uffd h;
	struct a64_vm *vm;
	uint32_t sum, want = 0;
	bool prefetch = !strcmp(policy, "auto");
	int i;

	memset(&h, 0, sizeof(h));
	h.chunk = chunk;
	h.snap = mmap(NULL, SLOT_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	h.base = mmap(NULL, SLOT_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	A64_ASSERT(h.snap != MAP_FAILED && h.base != MAP_FAILED, "mmap");
	madvise(h.base, SLOT_SIZE, MADV_NOHUGEPAGE);
	for (i = 0; i < (int)NR_PAGES; i++) {
		uint32_t v = 0x3c000000u | i;

		memcpy(h.snap + i * A64_PAGE, &v, 4);
		want += v;
	}
	a64_uffd_start(&h, SLOT_SIZE);

	vm = a64_vm_with_policy(policy, window, gup);
	a64_vm_add_slot(vm, DATA_SLOT, DATA_GPA, SLOT_SIZE, 0, h.base, false);
	vcpu = a64_vcpu_ready(vm, DATA_GPA);
	pf0 = a64_vcpu_stat_get(vcpu, "pf_taken");
	m0 = a64_vcpu_stat_get(vcpu, "prefetch_mapped");
	t0 = a64_now_ns();
	sum = a64_touch(vcpu, DATA_GPA, DATA_GPA + SLOT_SIZE, 0, A64_TOUCH_READ);
	t1 = a64_now_ns();
	pf1 = a64_vcpu_stat_get(vcpu, "pf_taken");
	m1 = a64_vcpu_stat_get(vcpu, "prefetch_mapped");
	a64_touch(vcpu, DATA_GPA, DATA_GPA + SLOT_SIZE, 0, A64_TOUCH_WRITE);
	pf2 = a64_vcpu_stat_get(vcpu, "pf_taken");

	want_pf = prefetch ? nr_chunks : NR_PAGES;
	want_mapped = prefetch ? NR_PAGES - nr_chunks : 0;
	a64_info("restore, %s-%u %s, %llu KiB chunks: %.2f guest faults per chunk, %d userfaultfd events, %llu pages prefetched",
		 policy, window, gup == KVM_PREFETCH_GUP_FAST_ONLY ? "fast" : "nofault",
		 (unsigned long long)(chunk >> 10),
		 (double)(pf1 - pf0) / nr_chunks, h.events,
		 (unsigned long long)(m1 - m0));
	A64_EXPECT(pf1 - pf0 == want_pf && m1 - m0 == want_mapped &&
		   h.events == (int)nr_chunks && !h.errors,
		   "restore %s-%u %s, %llu KiB chunks: pf_taken %llu, prefetch_mapped %llu, %d events, %d errors (want %llu, %llu, %llu, 0)",
		   policy, window,
		   gup == KVM_PREFETCH_GUP_FAST_ONLY ? "fast" : "nofault",
		   (unsigned long long)(chunk >> 10),
		   (unsigned long long)(pf1 - pf0),
		   (unsigned long long)(m1 - m0), h.events, h.errors,
		   (unsigned long long)want_pf,
		   (unsigned long long)want_mapped,
		   (unsigned long long)nr_chunks);
	A64_EXPECT(sum == want && pf2 == pf1,
		   "restore %s-%u: the guest reads the snapshot (sum %#x, want %#x), a write pass after it takes %llu faults",
		   policy, window, sum, want,
		   (unsigned long long)(pf2 - pf1));

	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
	a64_uffd_stop(&h);
	munmap(h.base, SLOT_SIZE);
	munmap(h.snap, SLOT_SIZE);
	return t1 - t0;
}

int main(void)
{
	static const uint64_t chunks[] = { 64 << 10, 512 << 10, 2 << 20 };
	unsigned int i;
	int cap;

	a64_require_kvm();
	cap = a64_prefetch_cap();
	A64_REQUIRE(cap > 0, "KVM_CAP_PREFETCH_POLICY is 0");
	for (i = 0; i < ARRAY_SIZE(chunks); i++) {
		uint32_t pages = chunks[i] / A64_PAGE;
		uint64_t none = run("none", chunks[i], pages, NOFAULT);
		uint64_t with = run("auto", chunks[i], pages, NOFAULT);

		a64_info("restore time, %llu KiB chunks (copy, TCG, one run): none %.2f ms, auto %.2f ms (%+.0f%%)",
			 (unsigned long long)(chunks[i] >> 10), none / 1e6,
			 with / 1e6, 100.0 * ((double)with - none) / none);
	}
	/*
	 * Windows of two chunks: the second chunk is not there yet when the
	 * first's window is mapped, and prefetch never faults a page in (no
	 * userfaultfd event of its own): still one fault per chunk, in
	 * either GUP mode.
	 */
	run("auto", 64 << 10, 32, NOFAULT);
	run("auto", 64 << 10, 32, FAST);
	return a64_exit();
}
