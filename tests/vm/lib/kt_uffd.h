/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kt_uffd - a userfaultfd handler thread for in-VM KVM tests.
 *
 * A range of host memory (a memslot's backing) is armed with userfaultfd.
 * A handler thread resolves each fault by populating the whole aligned
 * chunk of @chunk bytes around the faulting address from a source buffer,
 * the way a snapshot-restoring VMM does, with the faulting page last so
 * that the faulting thread never runs on with half a chunk (see
 * kt_uffd_handle()):
 *
 *  - KT_UFFD_MISSING: private anonymous memory, UFFDIO_COPY from @src
 *    (a separate buffer of the same size).
 *  - KT_UFFD_MINOR: a shared memfd mapping whose page cache is already
 *    filled through a second mapping; UFFDIO_CONTINUE maps the chunk.
 *    kt_uffd_create_minor() sets up both mappings.
 *
 * Duplicate events for a chunk that is already populated do occur; an
 * UFFDIO_COPY/CONTINUE that fails with EEXIST is followed by UFFDIO_WAKE
 * on the chunk, or the faulting thread would sleep forever.
 *
 * The armed range gets MADV_NOHUGEPAGE (THP can zero-fill an armed range
 * without an event). Counters are updated atomically and may be read at
 * any time with the kt_uffd_*() accessors.
 */
#ifndef KT_UFFD_H
#define KT_UFFD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kt_uffd_mode {
	KT_UFFD_MISSING,
	KT_UFFD_MINOR,
};

struct kt_uffd {
	enum kt_uffd_mode mode;
	int uffd;
	int stop_fd;		/* eventfd that ends the handler thread */
	char *base;		/* armed range */
	size_t size;
	const char *src;	/* MISSING: source buffer; MINOR: NULL */
	size_t chunk;		/* bytes populated per event, page multiple */
	pthread_t thread;
	bool running;
	int memfd;		/* MINOR only, else -1 */
	char *alloc;		/* mmap()ed by kt_uffd_create_minor / _alloc */
	size_t alloc_size;

	/* Gate: while closed, the handler waits before populating. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool gate_closed;

	/* Counters (atomics). */
	uint64_t events;	/* page-fault messages read */
	uint64_t handled;	/* events fully handled (counters updated) */
	uint64_t populated;	/* chunks populated by this handler */
	uint64_t eexist;	/* populate attempts that hit EEXIST */
	uint64_t wakes;		/* UFFDIO_WAKE issued after EEXIST */
	uint64_t errors;	/* unexpected ioctl failures */
	uint64_t populate_ns;	/* handler CPU time populating (COPY etc.) */
	uint64_t thread_ns;	/* handler thread's CPU time, once stopped */
	uint64_t last_addr;	/* address of the last event */
};

/*
 * Arm [@base, @base + @size) (page aligned, private anonymous, not yet
 * populated) in MISSING mode and start the handler; each event populates
 * its @chunk-aligned chunk (offsets relative to @base) from @src, which
 * must stay valid. @chunk must be a multiple of 4 KiB. Failures end the
 * program with a FAIL (SKIP if userfaultfd is not available).
 */
struct kt_uffd *kt_uffd_create(void *base, size_t size, const void *src,
			       size_t chunk);
/*
 * Allocate @size bytes of private anonymous memory aligned to @align
 * (a power of two >= 4 KiB) for a MISSING-mode range; freed by
 * kt_uffd_destroy(). Use with kt_uffd_create() through kt_uffd_base().
 */
struct kt_uffd *kt_uffd_create_alloc(size_t size, size_t align,
				     const void *src, size_t chunk);
/*
 * MINOR mode: create a memfd of @size bytes, fill it from @src through a
 * second mapping, map it shared at an @align-aligned address and arm that
 * mapping (UFFD_FEATURE_MINOR_SHMEM). SKIP if the kernel lacks it.
 */
struct kt_uffd *kt_uffd_create_minor(size_t size, size_t align,
				     const void *src, size_t chunk);
/*
 * A memfd of @size bytes whose page cache holds a copy of @src, for
 * kt_uffd_create_minor_memfd(); SKIP if there is no memfd_create().
 */
int kt_uffd_memfd(const void *src, size_t size);
/*
 * @size bytes of an mmap() of @prot, @flags (MAP_FIXED added) and @fd at
 * an @align-aligned address; the whole reservation, to munmap(), in
 * *@alloc and *@alloc_size.
 */
char *kt_uffd_map_aligned(size_t size, size_t align, int prot, int flags,
			  int fd, size_t *alloc_size, char **alloc);
/*
 * MINOR mode on a memfd the caller filled (several clones of one
 * snapshot: one call each): map @memfd's first @size bytes shared at an
 * @align-aligned address and arm that mapping.  The memfd stays the
 * caller's.  SKIP if the kernel lacks UFFD_FEATURE_MINOR_SHMEM.
 */
struct kt_uffd *kt_uffd_create_minor_memfd(int memfd, size_t size,
					   size_t align, size_t chunk);
/*
 * Stop the handler thread (no event may be in flight); the counters stay
 * and kt_uffd_thread_ns() gives the thread's whole CPU time.
 */
void kt_uffd_stop(struct kt_uffd *u);
uint64_t kt_uffd_thread_ns(struct kt_uffd *u);
/* Stop the handler, unregister, close; frees memory it allocated. */
void kt_uffd_destroy(struct kt_uffd *u);

/* The armed range (for KVM_SET_USER_MEMORY_REGION). */
void *kt_uffd_base(struct kt_uffd *u);

/* Close/open the gate (see struct kt_uffd). */
void kt_uffd_gate_close(struct kt_uffd *u);
void kt_uffd_gate_open(struct kt_uffd *u);
/*
 * Wait until at least @n events were read, up to @timeout_ms.
 * Returns true if they were.
 */
bool kt_uffd_wait_events(struct kt_uffd *u, uint64_t n, unsigned int timeout_ms);

/*
 * The faulting thread is woken before the handler updates its counters:
 * wait (up to @timeout_ms) until every event read so far is fully
 * handled, before reading the counters. Returns true if it is.
 */
bool kt_uffd_quiesce(struct kt_uffd *u, unsigned int timeout_ms);

uint64_t kt_uffd_events(struct kt_uffd *u);
uint64_t kt_uffd_populated(struct kt_uffd *u);
uint64_t kt_uffd_eexist(struct kt_uffd *u);
uint64_t kt_uffd_errors(struct kt_uffd *u);
/*
 * CPU time (CLOCK_THREAD_CPUTIME_ID, ns) the handler thread spent in
 * UFFDIO_COPY/CONTINUE and UFFDIO_WAKE: its own work, not the time it
 * sat preempted by the vCPU thread it woke.
 */
uint64_t kt_uffd_populate_ns(struct kt_uffd *u);
/* Reset all counters to 0 (no event may be in flight). */
void kt_uffd_reset_counters(struct kt_uffd *u);

#endif /* KT_UFFD_H */
