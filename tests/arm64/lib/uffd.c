// SPDX-License-Identifier: GPL-2.0
/*
 * a64 - a userfaultfd restore handler for the arm64 tests (see a64.h):
 * one thread that populates the naturally aligned chunk around each
 * event in one ioctl, UFFDIO_COPY from a snapshot or UFFDIO_CONTINUE.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

#include "a64.h"

/* Fill the chunk of @addr; 0 or -1 with errno. */
static int fill(struct a64_uffd *h, uint64_t addr)
{
	uint64_t off = (addr - (uintptr_t)h->base) & ~(h->chunk - 1);

	if (h->minor) {
		struct uffdio_continue c = {
			.range = { .start = (uintptr_t)h->base + off,
				   .len = h->chunk },
		};

		return ioctl(h->uffd, UFFDIO_CONTINUE, &c);
	} else {
		struct uffdio_copy c = {
			.dst = (uintptr_t)h->base + off,
			.src = (uintptr_t)h->snap + off,
			.len = h->chunk,
		};

		return ioctl(h->uffd, UFFDIO_COPY, &c);
	}
}

static void *handler_fn(void *arg)
{
	struct a64_uffd *h = arg;
	struct pollfd pfd = { .fd = h->uffd, .events = POLLIN };
	struct uffd_msg msg;
	uint64_t t;
	int r;

	while (!h->stop) {
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		if (read(h->uffd, &msg, sizeof(msg)) != sizeof(msg))
			continue;
		if (msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		h->events++;
		t = kt_thread_ns();
		r = fill(h, msg.arg.pagefault.address);
		h->fill_ns += kt_thread_ns() - t;
		if (r && errno != EEXIST)
			h->errors++;
	}
	return NULL;
}

void a64_uffd_start(struct a64_uffd *h, uint64_t len)
{
	struct uffdio_register reg;
	struct uffdio_api api;

	h->uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	A64_ASSERT(h->uffd >= 0, "userfaultfd: %s", strerror(errno));
	api = (struct uffdio_api) {
		.api = UFFD_API,
		.features = h->minor ? UFFD_FEATURE_MINOR_SHMEM : 0,
	};
	A64_ASSERT(!ioctl(h->uffd, UFFDIO_API, &api), "UFFDIO_API: %s",
		   strerror(errno));
	reg = (struct uffdio_register) {
		.range = { .start = (uintptr_t)h->base, .len = len },
		.mode = h->minor ? UFFDIO_REGISTER_MODE_MINOR :
				   UFFDIO_REGISTER_MODE_MISSING,
	};
	A64_ASSERT(!ioctl(h->uffd, UFFDIO_REGISTER, &reg),
		   "UFFDIO_REGISTER: %s", strerror(errno));
	h->stop = 0;
	A64_ASSERT(!pthread_create(&h->thread, NULL, handler_fn, h),
		   "pthread_create");
}

void a64_uffd_stop(struct a64_uffd *h)
{
	h->stop = 1;
	pthread_join(h->thread, NULL);
	close(h->uffd);
}

int a64_prefetch_cap(void)
{
	struct a64_vm *vm = a64_vm_create();
	int cap = a64_vm_check_ext(vm, KVM_CAP_PREFETCH_POLICY);

	a64_vm_free(vm);
	return cap;
}

void a64_require_prefetch(void)
{
	a64_require_kvm();
	A64_REQUIRE(a64_prefetch_cap() > 0,
		    "KVM_CAP_PREFETCH_POLICY: not offered");
}
