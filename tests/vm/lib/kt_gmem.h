/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kt_gmem - a VM whose memslot only guest_memfd backs (Linux 6.18 and
 * later, the 7.3 base): a guest_memfd created with GUEST_MEMFD_FLAG_MMAP |
 * GUEST_MEMFD_FLAG_INIT_SHARED, mmap()ed by the test as a VMM would, and
 * bound to one memslot with KVM_MEM_GUEST_MEMFD.  There is no
 * userfaultfd on guest_memfd: a restore writes a chunk through the mmap
 * before the guest touches it.
 */
#ifndef KT_GMEM_H
#define KT_GMEM_H

#include <stdbool.h>
#include <stdint.h>

#include "kvmtest.h"

struct kt_gmem {
	struct kt_vm *vm;
	struct kt_vcpu *vcpu;
	int fd;			/* the guest_memfd */
	char *mem;		/* its mmap */
	uint64_t gpa, size;
};

/*
 * Does this base's uAPI and KVM have an mmap()able, shared guest_memfd
 * for a default VM?  If not, *@why says why.
 */
bool kt_gmem_supported(const char **why);
/*
 * A VM with the touch program, memslot @slot of @size bytes at @gpa in a
 * guest_memfd, vCPU 0 (its code page mapped) and the prefetch policy
 * @policy with @nr_pages (nofault GUP).  Failures end the program.
 */
void kt_gmem_vm_create(struct kt_gmem *g, uint32_t slot, uint64_t gpa,
		       uint64_t size, const char *policy, uint32_t nr_pages);
void kt_gmem_vm_free(struct kt_gmem *g);

#endif /* KT_GMEM_H */
