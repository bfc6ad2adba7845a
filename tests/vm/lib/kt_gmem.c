// SPDX-License-Identifier: GPL-2.0
/*
 * kt_gmem - a VM whose memory is in a guest_memfd (kt_gmem.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kt_gmem.h"
#include "kt_sys.h"

#if defined(GUEST_MEMFD_FLAG_MMAP) && defined(GUEST_MEMFD_FLAG_INIT_SHARED)

bool kt_gmem_supported(const char **why)
{
	const int want = GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED;
	struct kt_vm *vm = kt_vm_create();
	int flags = kt_vm_check_ext(vm, KVM_CAP_GUEST_MEMFD_FLAGS);

	kt_vm_free(vm);
	*why = "KVM has no mmap()able shared guest_memfd for a default VM";
	return flags > 0 && (flags & want) == want;
}

void kt_gmem_vm_create(struct kt_gmem *g, uint32_t slot, uint64_t gpa,
		       uint64_t size, const char *policy, uint32_t nr_pages)
{
	struct kvm_create_guest_memfd c = {
		.size = size,
		.flags = GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED,
	};
	struct kvm_userspace_memory_region2 r = {
		.slot = slot,
		.flags = KVM_MEM_GUEST_MEMFD,
		.guest_phys_addr = gpa,
		.memory_size = size,
	};
	int ret;

	g->gpa = gpa;
	g->size = size;
	g->vm = kt_vm_create();
	g->fd = ioctl(g->vm->fd, KVM_CREATE_GUEST_MEMFD, &c);
	KT_ASSERT(g->fd >= 0, "KVM_CREATE_GUEST_MEMFD: %s", strerror(errno));
	g->mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);
	KT_ASSERT(g->mem != MAP_FAILED, "mmap of the guest_memfd: %s",
		  strerror(errno));
	r.userspace_addr = (uintptr_t)g->mem;
	r.guest_memfd = g->fd;
	KT_ASSERT(!ioctl(g->vm->fd, KVM_SET_USER_MEMORY_REGION2, &r),
		  "KVM_SET_USER_MEMORY_REGION2 (guest_memfd): %s",
		  strerror(errno));
	g->vcpu = kt_vcpu_add(g->vm, 0);
	/* Map the code page, so that the first fault counted is the test's. */
	kt_touch(g->vcpu, gpa, gpa, 0, KT_TOUCH_READ);
	ret = ktsys_set_policy(g->vm->fd, policy, nr_pages,
			       KVM_PREFETCH_GUP_NOFAULT);
	KT_ASSERT(!ret, "KVM_SET_PREFETCH_POLICY %s: %s", policy,
		  strerror(-ret));
}

void kt_gmem_vm_free(struct kt_gmem *g)
{
	kt_vcpu_free(g->vcpu);
	kt_vm_free(g->vm);
	munmap(g->mem, g->size);
	close(g->fd);
}

#else

bool kt_gmem_supported(const char **why)
{
	*why = "this base's uAPI has no GUEST_MEMFD_FLAG_MMAP (Linux 6.18 and later)";
	return false;
}

void kt_gmem_vm_create(struct kt_gmem *g, uint32_t slot, uint64_t gpa,
		       uint64_t size, const char *policy, uint32_t nr_pages)
{
	KT_ASSERT(0, "no guest_memfd with mmap on this base");
}

void kt_gmem_vm_free(struct kt_gmem *g)
{
}

#endif
