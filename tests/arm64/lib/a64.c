// SPDX-License-Identifier: GPL-2.0
/*
 * a64 - VMs, memslots, vCPUs and stats for the arm64 in-VM tests
 * (see a64.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "a64.h"

extern const char a64_guest_touch[], a64_guest_touch_end[];

void a64_require_kvm(void)
{
	int fd = kt_kvm_open();

	A64_REQUIRE(fd >= 0, "/dev/kvm unusable: %s", strerror(-fd));
	close(fd);
}

struct a64_vm *a64_vm_create(void)
{
	struct a64_vm *vm = calloc(1, sizeof(*vm));
	size_t len = a64_guest_touch_end - a64_guest_touch;
	void *code;

	A64_ASSERT(vm, "calloc");
	kt_stats_init(&vm->stats);
	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	A64_ASSERT(vm->kvm_fd >= 0, "/dev/kvm: %s", strerror(errno));
	vm->fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	A64_ASSERT(vm->fd >= 0, "KVM_CREATE_VM: %s", strerror(errno));
	vm->run_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	A64_ASSERT(vm->run_size > 0, "KVM_GET_VCPU_MMAP_SIZE: %s",
		   strerror(errno));
	code = a64_vm_add_slot(vm, A64_CODE_SLOT, A64_CODE_GPA, A64_PAGE, 0,
			       NULL, false);
	memcpy(code, a64_guest_touch, len);
	return vm;
}

void a64_vm_free(struct a64_vm *vm)
{
	int i;

	close(vm->fd);
	close(vm->kvm_fd);
	for (i = 0; i < A64_MAX_SLOTS; i++)
		if (vm->slots[i].used && vm->slots[i].owned)
			munmap(vm->slots[i].hva, vm->slots[i].size);
	kt_stats_free(&vm->stats);
	free(vm);
}

int a64_vm_check_ext(struct a64_vm *vm, long cap)
{
	int r = ioctl(vm->fd, KVM_CHECK_EXTENSION, cap);

	return r < 0 ? -errno : r;
}

static void set_slot(struct a64_vm *vm, uint32_t slot)
{
	struct a64_slot *s = &vm->slots[slot];
	struct kvm_userspace_memory_region r = {
		.slot = slot, .flags = s->flags, .guest_phys_addr = s->gpa,
		.memory_size = s->size, .userspace_addr = (uintptr_t)s->hva,
	};

	A64_ASSERT(!ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &r),
		   "KVM_SET_USER_MEMORY_REGION slot %u: %s", slot,
		   strerror(errno));
}

void *a64_vm_add_slot(struct a64_vm *vm, uint32_t slot, uint64_t gpa,
		      uint64_t size, uint32_t flags, void *host, bool thp)
{
	struct a64_slot *s;

	A64_ASSERT(slot < A64_MAX_SLOTS && !vm->slots[slot].used,
		   "slot %u", slot);
	s = &vm->slots[slot];
	if (!host) {
		host = mmap(NULL, size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		A64_ASSERT(host != MAP_FAILED, "mmap %llu: %s",
			   (unsigned long long)size, strerror(errno));
		madvise(host, size, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
		s->owned = true;
	}
	s->used = true;
	s->flags = flags;
	s->gpa = gpa;
	s->size = size;
	s->hva = host;
	set_slot(vm, slot);
	return host;
}

void a64_vm_set_slot_flags(struct a64_vm *vm, uint32_t slot, uint32_t flags)
{
	vm->slots[slot].flags = flags;
	set_slot(vm, slot);
}

void a64_vm_delete_slot(struct a64_vm *vm, uint32_t slot)
{
	struct a64_slot *s = &vm->slots[slot];
	struct kvm_userspace_memory_region r = {
		.slot = slot, .guest_phys_addr = s->gpa,
	};

	A64_ASSERT(!ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &r),
		   "deleting memslot %u: %s", slot, strerror(errno));
	if (s->owned)
		munmap(s->hva, s->size);
	memset(s, 0, sizeof(*s));
}

#define CORE_REG(name)	(KVM_REG_ARM64 | KVM_REG_SIZE_U64 | \
			 KVM_REG_ARM_CORE | KVM_REG_ARM_CORE_REG(name))

static void set_reg(struct a64_vcpu *vcpu, uint64_t id, uint64_t val)
{
	struct kvm_one_reg reg = { .id = id, .addr = (uintptr_t)&val };

	A64_ASSERT(!ioctl(vcpu->fd, KVM_SET_ONE_REG, &reg),
		   "KVM_SET_ONE_REG %#llx: %s", (unsigned long long)id,
		   strerror(errno));
}

struct a64_vcpu *a64_vcpu_add(struct a64_vm *vm, int id)
{
	struct a64_vcpu *vcpu = calloc(1, sizeof(*vcpu));
	struct kvm_vcpu_init init;

	A64_ASSERT(vcpu, "calloc");
	vcpu->vm = vm;
	vcpu->id = id;
	kt_stats_init(&vcpu->stats);
	vcpu->fd = ioctl(vm->fd, KVM_CREATE_VCPU, id);
	A64_ASSERT(vcpu->fd >= 0, "KVM_CREATE_VCPU: %s", strerror(errno));
	vcpu->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, vcpu->fd, 0);
	A64_ASSERT(vcpu->run != MAP_FAILED, "mmap kvm_run: %s",
		   strerror(errno));
	memset(&init, 0, sizeof(init));
	A64_ASSERT(!ioctl(vm->fd, KVM_ARM_PREFERRED_TARGET, &init),
		   "KVM_ARM_PREFERRED_TARGET: %s", strerror(errno));
	A64_ASSERT(!ioctl(vcpu->fd, KVM_ARM_VCPU_INIT, &init),
		   "KVM_ARM_VCPU_INIT: %s", strerror(errno));
	return vcpu;
}

void a64_vcpu_free(struct a64_vcpu *vcpu)
{
	munmap(vcpu->run, vcpu->vm->run_size);
	close(vcpu->fd);
	kt_stats_free(&vcpu->stats);
	free(vcpu);
}

int a64_touch_run(struct a64_vcpu *vcpu, uint64_t start, uint64_t end,
		  uint64_t stride, enum a64_touch_mode mode, uint32_t *val)
{
	struct kvm_run *run = vcpu->run;

	set_reg(vcpu, CORE_REG(regs.regs[0]), start);
	set_reg(vcpu, CORE_REG(regs.regs[1]), end);
	set_reg(vcpu, CORE_REG(regs.regs[2]), stride ? stride : A64_PAGE);
	set_reg(vcpu, CORE_REG(regs.regs[3]), mode);
	set_reg(vcpu, CORE_REG(regs.regs[6]), A64_DONE_GPA);
	set_reg(vcpu, CORE_REG(regs.pc), A64_CODE_GPA);
	for (;;) {
		if (ioctl(vcpu->fd, KVM_RUN, 0) < 0) {
			A64_ASSERT(errno == EINTR, "KVM_RUN: %s",
				   strerror(errno));
			continue;
		}
		if (run->exit_reason == KVM_EXIT_MMIO &&
		    run->mmio.phys_addr == A64_DONE_GPA && run->mmio.is_write &&
		    run->mmio.len == 4)
			break;
		return run->exit_reason ? (int)run->exit_reason : -1;
	}
	memcpy(val, run->mmio.data, 4);
	return 0;
}

uint32_t a64_touch(struct a64_vcpu *vcpu, uint64_t start, uint64_t end,
		   uint64_t stride, enum a64_touch_mode mode)
{
	struct kvm_run *run = vcpu->run;
	uint32_t val = 0;
	int r;

	r = a64_touch_run(vcpu, start, end, stride, mode, &val);
	A64_ASSERT(!r, "unexpected exit %u (mmio %#llx)", run->exit_reason,
		   (unsigned long long)run->mmio.phys_addr);
	return val;
}

int a64_vcpu_stat(struct a64_vcpu *vcpu, const char *name, uint64_t *val)
{
	return kt_stats_read(&vcpu->stats, vcpu->fd, name, val);
}

uint64_t a64_vcpu_stat_get(struct a64_vcpu *vcpu, const char *name)
{
	return kt_stats_vcpu_get(&vcpu->stats, vcpu->fd, vcpu->id, name);
}

int64_t a64_vcpu_faults(struct a64_vcpu *vcpu)
{
	uint64_t v;

	return a64_vcpu_stat(vcpu, "pf_taken", &v) ? -1 : (int64_t)v;
}

struct a64_counts a64_vcpu_counts(struct a64_vcpu *vcpu)
{
	return (struct a64_counts) {
		.pf	= a64_vcpu_stat_get(vcpu, "pf_taken"),
		.win	= a64_vcpu_stat_get(vcpu, "prefetch_windows"),
		.mapped	= a64_vcpu_stat_get(vcpu, "prefetch_mapped"),
	};
}

int a64_pages_wrong(const char *mem, uint64_t gpa, uint64_t n)
{
	uint64_t i;
	uint32_t v;
	int bad = 0;

	for (i = 0; i < n; i++) {
		memcpy(&v, mem + i * A64_PAGE, 4);
		bad += v != (uint32_t)(gpa + i * A64_PAGE);
	}
	return bad;
}

uint32_t a64_pages_sum(uint64_t gpa, uint64_t n)
{
	uint32_t sum = 0;
	uint64_t i;

	for (i = 0; i < n; i++)
		sum += (uint32_t)(gpa + i * A64_PAGE);
	return sum;
}

uint32_t a64_expect_written(const char *what, const char *mem, uint64_t gpa,
			    uint64_t n)
{
	int bad = a64_pages_wrong(mem, gpa, n);

	A64_EXPECT(!bad, "%sthe host reads what the guest wrote (%d pages wrong)",
		   what, bad);
	return a64_pages_sum(gpa, n);
}

int a64_pre_fault(struct a64_vcpu *vcpu, uint64_t gpa, uint64_t size,
		  uint64_t flags, uint64_t *left)
{
	struct kvm_pre_fault_memory r = {
		.gpa = gpa, .size = size, .flags = flags,
	};
	int ret = ioctl(vcpu->fd, KVM_PRE_FAULT_MEMORY, &r);

	if (left)
		*left = r.size;
	return ret ? -errno : 0;
}

struct a64_vm *a64_vm_with_policy(const char *name, uint32_t nr_pages,
				  uint32_t gup)
{
	struct a64_vm *vm = a64_vm_create();
	int r = a64_vm_set_prefetch(vm, name, nr_pages, gup);

	A64_ASSERT(!r, "KVM_SET_PREFETCH_POLICY %s-%u: %s", name, nr_pages,
		   strerror(-r));
	return vm;
}

struct a64_vcpu *a64_vcpu_ready(struct a64_vm *vm, uint64_t gpa)
{
	struct a64_vcpu *vcpu = a64_vcpu_add(vm, 0);

	a64_touch(vcpu, gpa, gpa, 0, A64_TOUCH_WRITE);
	return vcpu;
}

int a64_vm_set_prefetch(struct a64_vm *vm, const char *name,
			uint32_t nr_pages, uint32_t gup)
{
	struct kvm_prefetch_policy p;

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", name);
	p.nr_pages = nr_pages;
	p.gup = gup;
	return ioctl(vm->fd, KVM_SET_PREFETCH_POLICY, &p) ? -errno : 0;
}
