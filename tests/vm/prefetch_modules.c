// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_modules - policies from loadable modules.
 *
 * Selecting a policy by name that no module has registered yet autoloads
 * "kvm-prefetch-<name>"; a VM using it pins the module (rmmod fails) until
 * the VM is closed or switches away; the policy's per-VM init/release are
 * balanced; a default that names a module policy does not pin it, and
 * unloading it resets the default to none; kvm.ko unloads cleanly after.
 * Uses tests/vm/policy/kvm-prefetch-testpol.ko (window: the nr_pages - 1
 * pages after the fault) and kvm-policy/adaptive.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define DATA_SLOT	1
#define DATA_GPA	0x100000ULL
#define DATA_PAGES	256ULL
#define DATA_SIZE	(DATA_PAGES * KT_PAGE_SIZE)

static bool module_loaded(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return access(path, F_OK) == 0;
}

static int rmmod(const char *name)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rmmod %s 2>/dev/null", name);
	return system(cmd);
}

static long testpol_users(void)
{
	long v = -1;

	ktsys_read_long("/sys/module/kvm_prefetch_testpol/parameters/users",
			&v);
	return v;
}

/* A VM with the data slot, populated, and a vCPU that has run once. */
static struct kt_vm *populated_vm(struct kt_vcpu **vcpu)
{
	return kt_vm_populated(DATA_SLOT, DATA_GPA, DATA_SIZE, 0x5a, vcpu);
}

static void check_contents(struct kt_vm *vm)
{
	uint64_t gpa, bad = 0;

	for (gpa = DATA_GPA; gpa < DATA_GPA + DATA_SIZE; gpa += KT_PAGE_SIZE)
		if (*(uint32_t *)kt_vm_gpa_to_hva(vm, gpa) != (uint32_t)gpa)
			bad++;
	KT_EXPECT(bad == 0, "all %llu pages hold their pattern (%llu wrong)",
		  (unsigned long long)DATA_PAGES, (unsigned long long)bad);
}

static void test_autoload_and_pin(void)
{
	struct kvm_prefetch_policy p;
	struct kt_vcpu *vcpu;
	uint64_t pf0, pf, mapped;
	struct kt_vm *vm;
	int r;

	rmmod("kvm_prefetch_testpol");
	KT_ASSERT(!module_loaded("kvm_prefetch_testpol"),
		  "testpol is not loaded at the start");

	vm = populated_vm(&vcpu);
	r = ktsys_set_policy(vm->fd, "testpol", 4, KVM_PREFETCH_GUP_NOFAULT);
	KT_ASSERT(r == 0, "SET testpol autoloads the module (%d)", r);
	KT_EXPECT(module_loaded("kvm_prefetch_testpol"),
		  "kvm_prefetch_testpol is loaded");
	KT_EXPECT(testpol_users() == 1, "testpol init ran once (users %ld)",
		  testpol_users());
	KT_EXPECT(ktsys_get_policy(vm->fd, &p) == 0 &&
		  !strcmp(p.name, "testpol") && p.nr_pages == 4,
		  "GET reports testpol nr_pages=4 (%s %u)", p.name, p.nr_pages);

	/* Its window is the 3 pages after each fault: 1 fault in 4. */
	pf0 = kt_vcpu_stat_get(vcpu, "pf_taken");
	mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	kt_touch(vcpu, DATA_GPA, DATA_GPA + DATA_SIZE, 0, KT_TOUCH_WRITE);
	pf = kt_vcpu_stat_get(vcpu, "pf_taken") - pf0;
	mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped") - mapped;
	kt_info("testpol nr 4: pf_taken %llu prefetch_mapped %llu",
		(unsigned long long)pf, (unsigned long long)mapped);
	KT_EXPECT(pf == DATA_PAGES / 4, "pf_taken %llu, want %llu",
		  (unsigned long long)pf, (unsigned long long)DATA_PAGES / 4);
	KT_EXPECT(mapped == DATA_PAGES - DATA_PAGES / 4,
		  "prefetch_mapped %llu, want %llu", (unsigned long long)mapped,
		  (unsigned long long)(DATA_PAGES - DATA_PAGES / 4));
	check_contents(vm);

	KT_EXPECT(rmmod("kvm_prefetch_testpol") != 0 &&
		  module_loaded("kvm_prefetch_testpol"),
		  "rmmod testpol fails while a VM uses it");

	/* Switching away drops the VM's reference (after a grace period). */
	r = ktsys_set_policy(vm->fd, "auto", 8, 0);
	KT_EXPECT(r == 0, "SET auto (%d)", r);
	KT_EXPECT(testpol_users() == 0, "testpol release ran (users %ld)",
		  testpol_users());
	KT_EXPECT(rmmod("kvm_prefetch_testpol") == 0 &&
		  !module_loaded("kvm_prefetch_testpol"),
		  "rmmod testpol succeeds once the VM switched away");

	/* Autoload again; this time closing the VM releases it. */
	r = ktsys_set_policy(vm->fd, "testpol", 4, 0);
	KT_EXPECT(r == 0, "SET testpol autoloads it again (%d)", r);
	KT_EXPECT(rmmod("kvm_prefetch_testpol") != 0,
		  "rmmod testpol fails again while the VM lives");
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	KT_EXPECT(testpol_users() == 0, "VM close released testpol (users %ld)",
		  testpol_users());
	KT_EXPECT(rmmod("kvm_prefetch_testpol") == 0,
		  "rmmod testpol succeeds after the VM is closed");
}

static void test_adaptive_autoload(void)
{
	struct kvm_prefetch_policy p;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	uint64_t pf0, pf;
	int r;

	rmmod("kvm_prefetch_adaptive");
	vm = populated_vm(&vcpu);
	r = ktsys_set_policy(vm->fd, "adaptive", 512, 0);
	KT_ASSERT(r == 0, "SET adaptive autoloads kvm-prefetch-adaptive (%d)",
		  r);
	KT_EXPECT(module_loaded("kvm_prefetch_adaptive"),
		  "kvm_prefetch_adaptive is loaded");
	KT_EXPECT(ktsys_get_policy(vm->fd, &p) == 0 &&
		  !strcmp(p.name, "adaptive"), "GET reports adaptive (%s)",
		  p.name);

	pf0 = kt_vcpu_stat_get(vcpu, "pf_taken");
	kt_touch(vcpu, DATA_GPA, DATA_GPA + DATA_SIZE, 0, KT_TOUCH_WRITE);
	pf = kt_vcpu_stat_get(vcpu, "pf_taken") - pf0;
	kt_info("adaptive over %llu populated pages: pf_taken %llu",
		(unsigned long long)DATA_PAGES, (unsigned long long)pf);
	/* Ramp 4, 16, 64, 256 windows: a handful of faults, not 256. */
	KT_EXPECT(pf >= 1 && pf <= 8, "adaptive ramps up: pf_taken %llu in 1..8",
		  (unsigned long long)pf);
	check_contents(vm);

	KT_EXPECT(rmmod("kvm_prefetch_adaptive") != 0,
		  "rmmod adaptive fails while the VM lives");
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	KT_EXPECT(rmmod("kvm_prefetch_adaptive") == 0,
		  "rmmod adaptive succeeds after the VM is closed");
}

static void test_default_does_not_pin(void)
{
	char buf[64];

	/* Setting the default autoloads the module. */
	ktsys_default_for_new_vms("testpol");

	KT_EXPECT(rmmod("kvm_prefetch_testpol") == 0,
		  "rmmod testpol succeeds while it is only the default");
	KT_EXPECT(ktsys_read_line(KTSYS_P_POLICY, buf, sizeof(buf)) == 0 &&
		  !strcmp(buf, "none"),
		  "the default fell back to none (%s)", buf);
}

int main(void)
{
	int r;

	kt_require_kvm();
	ktsys_require_prefetch();
	ktsys_guard(120);

	test_autoload_and_pin();
	test_adaptive_autoload();
	test_default_does_not_pin();

	/* kvm.ko unloads with every VM and policy module gone. */
	r = ktsys_restore();
	KT_EXPECT(r == 0, "kvm.ko and kvm-amd.ko unload and reload (%d)", r);
	return kt_exit();
}
