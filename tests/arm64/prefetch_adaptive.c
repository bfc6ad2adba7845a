// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_adaptive: the policy module kvm-prefetch-adaptive, built
 * unchanged against the arm64 kernel, loads on arm64 (autoloaded by
 * KVM_SET_PREFETCH_POLICY), drives the stage-2 engine with exact counts,
 * and unloads once no VM uses it.
 *
 * The counts come from the module's rules (kvm-policy/adaptive, v2 of
 * issue 49): a stream's first fault opens nothing; a fault next door or
 * at the end of the last window is a hit, which opens 4 pages, then x4
 * below max/4, x2 up to max (the 512 pages the module declares), and
 * the window is the core's aligned one.  A sequential write pass over
 * 256 populated pages from an aligned start faults at 0 (nothing), 1
 * ([0, 4): 2 mapped), 4 ([0, 16): 11), 16 ([0, 64): 47) and 64 ([0,
 * 256): 191): 5 faults, 4 windows, 251 pages prefetched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "a64.h"

#define DATA_SLOT	1
#define DATA_GPA	0x1000000ULL
#define NR_PAGES	256
#define MODULE		"kvm_prefetch_adaptive"

static bool module_loaded(void)
{
	return access("/sys/module/" MODULE, F_OK) == 0;
}

static int unload(void)
{
	return syscall(__NR_delete_module, MODULE, O_NONBLOCK) ? -errno : 0;
}

int main(void)
{
	uint64_t size = NR_PAGES * A64_PAGE, pf0, w0, m0, pf1, w1, m1, pf2;
	struct kvm_prefetch_policy p;
	struct a64_vcpu *vcpu;
	struct a64_vm *vm;
	uint32_t sum, want;
	int i, r;
	char *mem;

	a64_require_kvm();
	vm = a64_vm_create();
	r = a64_vm_check_ext(vm, KVM_CAP_PREFETCH_POLICY);
	A64_REQUIRE(r > 0, "KVM_CAP_PREFETCH_POLICY is 0");
	r = a64_vm_set_prefetch(vm, "adaptive", 0, KVM_PREFETCH_GUP_NOFAULT);
	A64_ASSERT(!r, "SET adaptive (autoload of kvm-prefetch-adaptive): %s",
		   strerror(-r));
	A64_EXPECT(module_loaded(), "SET adaptive autoloaded %s", MODULE);
	memset(&p, 0, sizeof(p));
	r = ioctl(vm->fd, KVM_GET_PREFETCH_POLICY, &p);
	A64_EXPECT(!r && !strcmp(p.name, "adaptive") && p.nr_pages == 512,
		   "GET: '%s' nr_pages %u (the 512 the module declares)",
		   p.name, p.nr_pages);

	mem = a64_vm_add_slot(vm, DATA_SLOT, DATA_GPA, size, 0, NULL, false);
	for (i = 0; i < NR_PAGES; i++)
		memset(mem + i * A64_PAGE, 0x11, 4);
	vcpu = a64_vcpu_add(vm, 0);
	a64_touch(vcpu, DATA_GPA, DATA_GPA, 0, A64_TOUCH_WRITE);
	pf0 = a64_vcpu_stat_get(vcpu, "pf_taken");
	w0 = a64_vcpu_stat_get(vcpu, "prefetch_windows");
	m0 = a64_vcpu_stat_get(vcpu, "prefetch_mapped");
	a64_touch(vcpu, DATA_GPA, DATA_GPA + size, 0, A64_TOUCH_WRITE);
	pf1 = a64_vcpu_stat_get(vcpu, "pf_taken");
	w1 = a64_vcpu_stat_get(vcpu, "prefetch_windows");
	m1 = a64_vcpu_stat_get(vcpu, "prefetch_mapped");
	/* Faults at 0 (no window: a stream's first), 1, 4, 16 and 64. */
	A64_EXPECT(pf1 - pf0 == 5 && w1 - w0 == 4 && m1 - m0 == 251,
		   "adaptive over %d populated pages: pf_taken %llu, prefetch_windows %llu, prefetch_mapped %llu (want 5, 4, 251)",
		   NR_PAGES, (unsigned long long)(pf1 - pf0),
		   (unsigned long long)(w1 - w0),
		   (unsigned long long)(m1 - m0));
	want = a64_expect_written("adaptive: ", mem, DATA_GPA, NR_PAGES);
	sum = a64_touch(vcpu, DATA_GPA, DATA_GPA + size, 0, A64_TOUCH_READ);
	pf2 = a64_vcpu_stat_get(vcpu, "pf_taken");
	A64_EXPECT(sum == want && pf2 == pf1,
		   "adaptive: read pass sum %#x (want %#x), %llu faults",
		   sum, want, (unsigned long long)(pf2 - pf1));

	r = unload();
	A64_EXPECT(r < 0 && module_loaded(),
		   "%s stays while a VM uses it (delete_module: %s)", MODULE,
		   r ? strerror(-r) : "unloaded");
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
	r = unload();
	A64_EXPECT(!r && !module_loaded(), "%s unloads after the VM (%s)",
		   MODULE, r ? strerror(-r) : "ok");
	return a64_exit();
}
