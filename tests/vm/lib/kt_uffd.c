// SPDX-License-Identifier: GPL-2.0
/*
 * kt_uffd - userfaultfd handler thread for in-VM KVM tests; see kt_uffd.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "kvmtest.h"
#include "kt_uffd.h"

#define KT_UFFD_PAGE	4096UL

static uint64_t kt_uffd_load(uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void kt_uffd_inc(uint64_t *p)
{
	__atomic_add_fetch(p, 1, __ATOMIC_SEQ_CST);
}

bool kt_uffd_quiesce(struct kt_uffd *u, unsigned int timeout_ms)
{
	uint64_t deadline = kt_now_ns() + timeout_ms * 1000000ULL;

	while (kt_uffd_load(&u->handled) != kt_uffd_load(&u->events)) {
		if (kt_now_ns() > deadline)
			return false;
		usleep(1000);
	}
	return true;
}

uint64_t kt_uffd_events(struct kt_uffd *u)
{
	return kt_uffd_load(&u->events);
}

uint64_t kt_uffd_populated(struct kt_uffd *u)
{
	return kt_uffd_load(&u->populated);
}

uint64_t kt_uffd_eexist(struct kt_uffd *u)
{
	return kt_uffd_load(&u->eexist);
}

uint64_t kt_uffd_errors(struct kt_uffd *u)
{
	return kt_uffd_load(&u->errors);
}

uint64_t kt_uffd_populate_ns(struct kt_uffd *u)
{
	return kt_uffd_load(&u->populate_ns);
}

void kt_uffd_reset_counters(struct kt_uffd *u)
{
	__atomic_store_n(&u->events, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&u->handled, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&u->populated, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&u->eexist, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&u->wakes, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&u->errors, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&u->populate_ns, 0, __ATOMIC_SEQ_CST);
}

void *kt_uffd_base(struct kt_uffd *u)
{
	return u->base;
}

void kt_uffd_gate_close(struct kt_uffd *u)
{
	pthread_mutex_lock(&u->lock);
	u->gate_closed = true;
	pthread_mutex_unlock(&u->lock);
}

void kt_uffd_gate_open(struct kt_uffd *u)
{
	pthread_mutex_lock(&u->lock);
	u->gate_closed = false;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
}

bool kt_uffd_wait_events(struct kt_uffd *u, uint64_t n, unsigned int timeout_ms)
{
	uint64_t deadline = kt_now_ns() + timeout_ms * 1000000ULL;

	while (kt_uffd_events(u) < n) {
		if (kt_now_ns() > deadline)
			return false;
		usleep(1000);
	}
	return true;
}

/*
 * Populate [@addr, @addr + @len) (inside the armed range). Pages that
 * already exist are skipped one by one; returns the number of EEXIST hits.
 * @wake: wake the threads waiting on the populated range, else
 * UFFDIO_*_MODE_DONTWAKE.
 */
static uint64_t kt_uffd_populate(struct kt_uffd *u, char *addr, size_t len,
				 bool wake)
{
	uint64_t hits = 0;
	size_t done = 0;

	while (done < len) {
		char *dst = addr + done;
		size_t rest = len - done;
		int64_t got;
		int r, err;

		if (u->mode == KT_UFFD_MISSING) {
			struct uffdio_copy c = {
				.dst = (uintptr_t)dst,
				.src = (uintptr_t)(u->src + (dst - u->base)),
				.len = rest,
				.mode = wake ? 0 : UFFDIO_COPY_MODE_DONTWAKE,
			};

			r = ioctl(u->uffd, UFFDIO_COPY, &c);
			err = errno;
			got = c.copy;
		} else {
			struct uffdio_continue c = {
				.range = { .start = (uintptr_t)dst, .len = rest },
				.mode = wake ? 0 : UFFDIO_CONTINUE_MODE_DONTWAKE,
			};

			r = ioctl(u->uffd, UFFDIO_CONTINUE, &c);
			err = errno;
			got = c.mapped;
		}
		if (!r) {
			done = len;
			break;
		}
		/* Partial progress is reported in copy/mapped. */
		if (got > 0)
			done += got;
		if (err == EAGAIN)
			continue;
		if (err == EEXIST || got == -EEXIST) {
			hits++;
			done = (done + KT_UFFD_PAGE) & ~(KT_UFFD_PAGE - 1);
			continue;
		}
		kt_uffd_inc(&u->errors);
		kt_info("kt_uffd: populate %p+0x%zx: %s", (void *)dst, rest,
			strerror(err));
		break;
	}
	return hits;
}

static void kt_uffd_handle(struct kt_uffd *u, uint64_t addr)
{
	size_t off = (addr - (uintptr_t)u->base) & ~(u->chunk - 1);
	size_t len = u->chunk;
	size_t fault, head;
	uint64_t hits, t0;

	if (addr < (uintptr_t)u->base || addr >= (uintptr_t)u->base + u->size) {
		kt_uffd_inc(&u->errors);
		kt_info("kt_uffd: event at 0x%llx outside the armed range",
			(unsigned long long)addr);
		return;
	}
	if (off + len > u->size)
		len = u->size - off;

	pthread_mutex_lock(&u->lock);
	while (u->gate_closed)
		pthread_cond_wait(&u->cond, &u->lock);
	pthread_mutex_unlock(&u->lock);

	/*
	 * The faulting page goes in last. The faulting thread checks its
	 * page once more before it sleeps (handle_userfault()'s must_wait)
	 * and does not sleep if the page is there. Populated in address
	 * order, the pages after the faulting page (all the others, for
	 * a guest that runs through memory in order) come in after it:
	 * the thread could run on while they are still missing, and a
	 * prefetch window over the chunk would come up short (fast and
	 * nofault GUP cannot pin them) at random. First the part
	 * after the faulting page without waking anybody, then the rest,
	 * which ends with the faulting page and wakes the waiters on it.
	 * Waiters on the part after it, if any, are woken when their own
	 * events find the chunk populated (EEXIST, UFFDIO_WAKE below).
	 */
	fault = (addr & ~(uint64_t)(KT_UFFD_PAGE - 1)) - (uintptr_t)u->base;
	head = fault + KT_UFFD_PAGE - off;
	t0 = kt_thread_ns();
	hits = 0;
	if (head < len)
		hits = kt_uffd_populate(u, u->base + off + head, len - head,
					false);
	hits += kt_uffd_populate(u, u->base + off, head, true);
	if (hits) {
		struct uffdio_range r = {
			.start = (uintptr_t)u->base + off,
			.len = len,
		};

		__atomic_add_fetch(&u->eexist, hits, __ATOMIC_SEQ_CST);
		if (ioctl(u->uffd, UFFDIO_WAKE, &r)) {
			kt_uffd_inc(&u->errors);
			kt_info("kt_uffd: UFFDIO_WAKE: %s", strerror(errno));
		} else {
			kt_uffd_inc(&u->wakes);
		}
	}
	__atomic_add_fetch(&u->populate_ns, kt_thread_ns() - t0,
			   __ATOMIC_SEQ_CST);
	if (hits * KT_UFFD_PAGE < len)
		kt_uffd_inc(&u->populated);
	/* Last: kt_uffd_quiesce() waits for handled == events. */
	kt_uffd_inc(&u->handled);
}

static void *kt_uffd_thread(void *arg)
{
	struct kt_uffd *u = arg;
	uint64_t t0 = kt_thread_ns();

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = u->uffd, .events = POLLIN },
			{ .fd = u->stop_fd, .events = POLLIN },
		};
		struct uffd_msg msg;
		ssize_t n;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			kt_uffd_inc(&u->errors);
			break;
		}
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN)) {
			if (p[0].revents & (POLLERR | POLLHUP)) {
				kt_uffd_inc(&u->errors);
				break;
			}
			continue;
		}
		n = read(u->uffd, &msg, sizeof(msg));
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n != sizeof(msg)) {
			kt_uffd_inc(&u->errors);
			kt_info("kt_uffd: read: %zd (%s)", n, strerror(errno));
			break;
		}
		if (msg.event != UFFD_EVENT_PAGEFAULT) {
			kt_uffd_inc(&u->errors);
			kt_info("kt_uffd: unexpected event %u", msg.event);
			continue;
		}
		__atomic_store_n(&u->last_addr, msg.arg.pagefault.address,
				 __ATOMIC_SEQ_CST);
		kt_uffd_inc(&u->events);
		kt_uffd_handle(u, msg.arg.pagefault.address);
	}
	u->thread_ns = kt_thread_ns() - t0;
	return NULL;
}

static struct kt_uffd *kt_uffd_new(enum kt_uffd_mode mode, void *base,
				   size_t size, const void *src, size_t chunk)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	struct kt_uffd *u;
	int fd;

	KT_ASSERT(chunk && !(chunk % KT_UFFD_PAGE), "chunk 0x%zx", chunk);
	KT_ASSERT(!((uintptr_t)base % KT_UFFD_PAGE) && size &&
		  !(size % KT_UFFD_PAGE), "range %p+0x%zx", base, size);

	u = calloc(1, sizeof(*u));
	KT_ASSERT(u, "out of memory");
	u->mode = mode;
	u->base = base;
	u->size = size;
	u->src = src;
	u->chunk = chunk;
	u->memfd = -1;
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->cond, NULL);

	fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	KT_REQUIRE(fd >= 0, "userfaultfd: %s", strerror(errno));
	u->uffd = fd;

	if (mode == KT_UFFD_MINOR)
		api.features = UFFD_FEATURE_MINOR_SHMEM;
	if (ioctl(fd, UFFDIO_API, &api)) {
		KT_REQUIRE(mode != KT_UFFD_MINOR,
			   "UFFDIO_API with UFFD_FEATURE_MINOR_SHMEM: %s",
			   strerror(errno));
		KT_ASSERT(0, "UFFDIO_API: %s", strerror(errno));
	}

	KT_ASSERT(!madvise(base, size, MADV_NOHUGEPAGE), "madvise: %s",
		  strerror(errno));

	reg.range.start = (uintptr_t)base;
	reg.range.len = size;
	reg.mode = mode == KT_UFFD_MINOR ? UFFDIO_REGISTER_MODE_MINOR :
					   UFFDIO_REGISTER_MODE_MISSING;
	KT_ASSERT(!ioctl(fd, UFFDIO_REGISTER, &reg), "UFFDIO_REGISTER: %s",
		  strerror(errno));
	KT_ASSERT(reg.ioctls & (1ULL << (mode == KT_UFFD_MINOR ?
					 _UFFDIO_CONTINUE : _UFFDIO_COPY)),
		  "populate ioctl not offered (ioctls 0x%llx)",
		  (unsigned long long)reg.ioctls);

	u->stop_fd = eventfd(0, EFD_CLOEXEC);
	KT_ASSERT(u->stop_fd >= 0, "eventfd: %s", strerror(errno));
	KT_ASSERT(!pthread_create(&u->thread, NULL, kt_uffd_thread, u),
		  "pthread_create");
	u->running = true;
	return u;
}

struct kt_uffd *kt_uffd_create(void *base, size_t size, const void *src,
			       size_t chunk)
{
	return kt_uffd_new(KT_UFFD_MISSING, base, size, src, chunk);
}

/* @size bytes of @flags mapping at an @align-aligned address. */
char *kt_uffd_map_aligned(size_t size, size_t align, int prot,
				 int flags, int fd, size_t *alloc_size,
				 char **alloc)
{
	size_t len = size + align;
	char *p, *a;

	p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_NORESERVE, -1, 0);
	KT_ASSERT(p != MAP_FAILED, "mmap: %s", strerror(errno));
	a = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	/* Replace the aligned part with the real mapping. */
	KT_ASSERT(mmap(a, size, prot, flags | MAP_FIXED, fd, 0) == a,
		  "mmap fixed: %s", strerror(errno));
	*alloc = p;
	*alloc_size = len;
	return a;
}

/* kt_uffd_new() over @size bytes of @flags mapping at an @align boundary. */
static struct kt_uffd *kt_uffd_new_mapped(enum kt_uffd_mode mode, size_t size,
					  size_t align, int flags, int fd,
					  const void *src, size_t chunk)
{
	size_t alloc_size;
	char *alloc, *base;
	struct kt_uffd *u;

	if (align < KT_UFFD_PAGE)
		align = KT_UFFD_PAGE;
	base = kt_uffd_map_aligned(size, align, PROT_READ | PROT_WRITE, flags,
				   fd, &alloc_size, &alloc);
	u = kt_uffd_new(mode, base, size, src, chunk);
	u->alloc = alloc;
	u->alloc_size = alloc_size;
	return u;
}

struct kt_uffd *kt_uffd_create_alloc(size_t size, size_t align,
				     const void *src, size_t chunk)
{
	return kt_uffd_new_mapped(KT_UFFD_MISSING, size, align,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				  -1, src, chunk);
}

int kt_uffd_memfd(const void *src, size_t size)
{
	int fd = memfd_create("kt_uffd", MFD_CLOEXEC);
	char *fill;

	KT_REQUIRE(fd >= 0, "memfd_create: %s", strerror(errno));
	KT_ASSERT(!ftruncate(fd, size), "ftruncate: %s", strerror(errno));
	/* Fill the page cache through a second, unarmed mapping. */
	fill = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	KT_ASSERT(fill != MAP_FAILED, "mmap memfd: %s", strerror(errno));
	memcpy(fill, src, size);
	munmap(fill, size);
	return fd;
}

struct kt_uffd *kt_uffd_create_minor(size_t size, size_t align,
				     const void *src, size_t chunk)
{
	struct kt_uffd *u;
	int fd = kt_uffd_memfd(src, size);

	u = kt_uffd_create_minor_memfd(fd, size, align, chunk);
	u->memfd = fd;
	return u;
}

struct kt_uffd *kt_uffd_create_minor_memfd(int memfd, size_t size,
					   size_t align, size_t chunk)
{
	return kt_uffd_new_mapped(KT_UFFD_MINOR, size, align, MAP_SHARED,
				  memfd, NULL, chunk);
}

void kt_uffd_stop(struct kt_uffd *u)
{
	uint64_t one = 1;

	kt_uffd_gate_open(u);
	if (!u->running)
		return;
	KT_ASSERT(write(u->stop_fd, &one, sizeof(one)) == sizeof(one),
		  "eventfd write: %s", strerror(errno));
	pthread_join(u->thread, NULL);
	u->running = false;
}

uint64_t kt_uffd_thread_ns(struct kt_uffd *u)
{
	return u->thread_ns;
}

void kt_uffd_destroy(struct kt_uffd *u)
{
	struct uffdio_range r;

	if (!u)
		return;
	r.start = (uintptr_t)u->base;
	r.len = u->size;
	kt_uffd_stop(u);
	/* The range may be unmapped already; that is fine. */
	ioctl(u->uffd, UFFDIO_UNREGISTER, &r);
	close(u->uffd);
	close(u->stop_fd);
	if (u->alloc)
		munmap(u->alloc, u->alloc_size);
	if (u->memfd >= 0)
		close(u->memfd);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->cond);
	free(u);
}
