// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_mmap_busy - speculative GUP never waits for mmap_lock.
 *
 * The guest reads one page in 8 of host pages that only a slow GUP gets
 * (anonymous memory shared with a child after fork: every PTE is
 * write-protected, so fast GUP for a writable memslot refuses them), with
 * policy auto, window 8, gup nofault: each window's prefetch needs
 * mmap_lock.  Alone, every window is prefetched and prefetch_mmap_busy
 * stays 0.  Then a thread of the VMM flips the protection of another
 * populated region in a loop (mprotect() holds mmap_lock for writing
 * while it changes every PTE): the engine gives up the pages whose GUP
 * finds the lock taken instead of queueing the vCPU behind the writer,
 * and counts each slow GUP given up in prefetch_mmap_busy, which must
 * move; the guest still
 * reads the host's contents.  With a blocking mmap_read_lock() the
 * counter could not move.  Both engines.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define ENGINE_PATH	"/sys/module/kvm/parameters/prefetch_engine"
#define SLOT		1
#define GPA		0x40000000ULL
#define HALF		(16ULL << 20)
#define SIZE		(2 * HALF)
#define STRIDE		(8 * KT_PAGE_SIZE)
#define WRITER_SIZE	(64ULL << 20)

static const char *const engines[] = { "fault", "batch" };

static atomic_int writer_stop;
static atomic_long writer_flips;


/* What the guest's read of every STRIDE bytes of [from, to) sums to. */
static uint32_t sum(const char *mem, uint64_t from, uint64_t to)
{
	uint32_t s = 0;

	for (; from < to; from += STRIDE)
		s += *(const uint32_t *)(mem + from);
	return s;
}

/* The VMM's other work: mprotect() of a populated region, in a loop. */
static void *writer(void *arg)
{
	char *region = arg;

	while (!atomic_load(&writer_stop)) {
		mprotect(region, WRITER_SIZE, PROT_READ);
		mprotect(region, WRITER_SIZE, PROT_READ | PROT_WRITE);
		atomic_fetch_add(&writer_flips, 1);
	}
	return NULL;
}

struct counts {
	uint64_t pf, mapped, busy;
};

static struct counts counts(struct kt_vcpu *vcpu)
{
	return (struct counts){
		kt_vcpu_stat_get(vcpu, "pf_taken"),
		kt_vcpu_stat_get(vcpu, "prefetch_mapped"),
		kt_vcpu_stat_get(vcpu, "prefetch_mmap_busy"),
	};
}

static void run(const char *engine, char *mem)
{
	const uint64_t windows = HALF / STRIDE;
	struct kt_vcpu *vcpu;
	struct counts a, b, c;
	char *region = kt_populated(WRITER_SIZE, GPA);
	struct kt_vm *vm;
	pthread_t t;
	uint32_t got;

	ktsys_set_engine(engine);
	vm = kt_vm_on(SLOT, GPA, SIZE, 0, mem, &vcpu);
	KT_ASSERT(!ktsys_set_policy(vm->fd, "auto", 8,
				    KVM_PREFETCH_GUP_NOFAULT),
		  "SET auto 8 nofault");

	/* Alone: every window prefetched, nothing given up. */
	a = counts(vcpu);
	got = kt_touch(vcpu, GPA, GPA + HALF, STRIDE, KT_TOUCH_READ);
	b = counts(vcpu);
	KT_EXPECT(got == sum(mem, 0, HALF),
		  "%s: the guest reads the host's pages (sum 0x%x, want 0x%x)",
		  engine, got, sum(mem, 0, HALF));
	KT_EXPECT(b.pf - a.pf == windows && b.mapped - a.mapped == 7 * windows &&
		  b.busy == a.busy,
		  "%s: mmap_lock free: %llu windows, %llu faults, %llu pages prefetched, %llu given up (want %llu, %llu, 0)",
		  engine, (unsigned long long)windows,
		  (unsigned long long)(b.pf - a.pf),
		  (unsigned long long)(b.mapped - a.mapped),
		  (unsigned long long)(b.busy - a.busy),
		  (unsigned long long)windows,
		  (unsigned long long)(7 * windows));

	/* A writer holds mmap_lock on and off: pages are given up, not waited for. */
	atomic_store(&writer_stop, 0);
	atomic_store(&writer_flips, 0);
	KT_ASSERT(!pthread_create(&t, NULL, writer, region), "pthread_create");
	while (atomic_load(&writer_flips) < 2)
		usleep(1000);
	got = kt_touch(vcpu, GPA + HALF, GPA + SIZE, STRIDE, KT_TOUCH_READ);
	atomic_store(&writer_stop, 1);
	KT_ASSERT(kt_join_within(t, 60), "the mprotect() thread ends");
	c = counts(vcpu);
	KT_EXPECT(got == sum(mem, HALF, SIZE),
		  "%s: with mmap_lock contended the guest still reads the host's pages (sum 0x%x, want 0x%x)",
		  engine, got, sum(mem, HALF, SIZE));
	KT_EXPECT(c.busy > b.busy && c.pf - b.pf >= windows,
		  "%s: mmap_lock contended (%ld mprotect pairs): %llu slow GUPs given up without waiting, %llu pages prefetched, %llu faults",
		  engine, atomic_load(&writer_flips),
		  (unsigned long long)(c.busy - b.busy),
		  (unsigned long long)(c.mapped - b.mapped),
		  (unsigned long long)(c.pf - b.pf));

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	munmap(region, WRITER_SIZE);
}

int main(void)
{
	char saved[16] = "";
	struct kt_sharer sh;
	unsigned int e;
	char *mem;

	kt_require_kvm();
	ktsys_read_line(ENGINE_PATH, saved, sizeof(saved));
	for (e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		mem = kt_populated(SIZE, GPA);
		kt_share_begin(&sh);
		run(engines[e], mem);
		kt_share_end(&sh);
		munmap(mem, SIZE);
	}
	if (saved[0])
		ktsys_write(ENGINE_PATH, saved);
	return kt_exit();
}
