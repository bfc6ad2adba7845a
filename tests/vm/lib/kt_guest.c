// SPDX-License-Identifier: GPL-2.0
/*
 * kt_guest - irqchip and pv-apf guest modes of kvmtest; see kt_guest.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <asm/kvm_para.h>

#include "kvmtest.h"
#include "kt_guest.h"

#define KT_STR_(x)	#x
#define KT_STR(x)	KT_STR_(x)

#define KT_LAPIC_SVR	0xfee000f0
#define KT_LAPIC_EOI	0xfee000b0
/* What the guest writes to MSR_KVM_ASYNC_PF_EN, ORed to its area's gpa. */
#define KT_APF_EN_BITS	(KVM_ASYNC_PF_ENABLED | KVM_ASYNC_PF_SEND_ALWAYS | \
			 KVM_ASYNC_PF_DELIVERY_AS_INT)

/*
 * The handlers, 32-bit code assembled into .rodata and copied to
 * KT_HANDLERS_OFF of the system page. Only relative jumps and absolute
 * constants: the bytes run at any address. FS is the vCPU's data area.
 */
asm(
"	.pushsection .rodata\n"
"	.code32\n"
"	.globl kt_gx_start, kt_gx_init, kt_gx_pf, kt_gx_ready, kt_gx_end\n"
"kt_gx_start:\n"

/*
 * pv-apf init, run once per vCPU by kt_guest_vcpu_setup(): local APIC
 * on, the "page ready" vector, then async #PF on, like Linux's
 * kvm_guest_cpu_init(). Reports 0 on the done port.
 */
"kt_gx_init:\n"
"	movl $(0x100 | " KT_STR(KT_SPURIOUS_VECTOR) "), " KT_STR(KT_LAPIC_SVR) "\n"
"	movl $" KT_STR(MSR_KVM_ASYNC_PF_INT) ", %ecx\n"
"	movl $" KT_STR(KT_APF_VECTOR) ", %eax\n"
"	xorl %edx, %edx\n"
"	wrmsr\n"
"	movl %fs:" KT_STR(KT_AREA_SELF) ", %eax\n"
"	orl $" KT_STR(KT_APF_EN_BITS) ", %eax\n"
"	movl $" KT_STR(MSR_KVM_ASYNC_PF_EN) ", %ecx\n"
"	xorl %edx, %edx\n"
"	wrmsr\n"
"	xorl %eax, %eax\n"
"	outl %eax, $" KT_STR(KT_DONE_PORT) "\n"
"1:	hlt\n"
"	jmp 1b\n"

/*
 * #PF (error code on the stack). Reason "page not present": the token
 * is in CR2; wait, interrupts on, until the "page ready" handler has
 * seen the same token, then return to retry the access.
 */
"kt_gx_pf:\n"
"	pushl %eax\n"
"	movl %cr2, %eax\n"
"	cmpl $" KT_STR(KVM_PV_REASON_PAGE_NOT_PRESENT) ", %fs:" KT_STR(KT_AREA_FLAGS) "\n"
"	jne 9f\n"
"	movl $0, %fs:" KT_STR(KT_AREA_FLAGS) "\n"
"	incl %fs:" KT_STR(KT_AREA_NOT_PRESENT) "\n"
"1:	cmpl %eax, %fs:" KT_STR(KT_AREA_READY_TOKEN) "\n"
"	je 2f\n"
"	sti\n"
"kt_gx_pf_hlt:\n"
"	hlt\n"
"	cli\n"
"	jmp 1b\n"
"2:	movl $0, %fs:" KT_STR(KT_AREA_READY_TOKEN) "\n"
"	popl %eax\n"
"	addl $4, %esp\n"
"	iret\n"
"9:	outl %eax, $" KT_STR(KT_BADPF_PORT) "\n"
"	jmp 9b\n"

/*
 * "Page ready": take the token and free the slot for the next one, EOI,
 * then MSR_KVM_ASYNC_PF_ACK so that KVM sends the next. Token ~0 is the
 * broadcast KVM sends when async #PF is enabled: counted, not waited for.
 * Token 0 (the slot is empty: the interrupt came a second time) is
 * counted as spurious and must not replace the token just seen.
 */
"kt_gx_ready:\n"
"	pushl %eax\n"
"	pushl %ecx\n"
"	pushl %edx\n"
"	movl %fs:" KT_STR(KT_AREA_TOKEN) ", %eax\n"
"	movl $0, %fs:" KT_STR(KT_AREA_TOKEN) "\n"
"	testl %eax, %eax\n"
"	jz 4f\n"
"	cmpl $-1, %eax\n"
"	je 1f\n"
"	movl %eax, %fs:" KT_STR(KT_AREA_READY_TOKEN) "\n"
"	incl %fs:" KT_STR(KT_AREA_READY) "\n"
"	jmp 2f\n"
"4:	incl %fs:" KT_STR(KT_AREA_SPURIOUS) "\n"
"	jmp 2f\n"
"1:	incl %fs:" KT_STR(KT_AREA_WAKE_ALL) "\n"
/*
 * Interrupted right before the #PF handler's hlt (in the sti shadow,
 * where no interrupt should come but one did under QEMU's TCG): return
 * past the hlt, or the vCPU would sleep with its token already seen.
 */
"2:	movl 12(%esp), %eax\n"
"	subl $kt_gx_pf_hlt - kt_gx_start + " KT_STR(KT_HANDLERS_OFF) ", %eax\n"
"	jnz 3f\n"
"	incl 12(%esp)\n"
"	incl %fs:" KT_STR(KT_AREA_EARLY) "\n"
"3:	movl $0, " KT_STR(KT_LAPIC_EOI) "\n"
"	movl $" KT_STR(MSR_KVM_ASYNC_PF_ACK) ", %ecx\n"
"	movl $1, %eax\n"
"	xorl %edx, %edx\n"
"	wrmsr\n"
"	popl %edx\n"
"	popl %ecx\n"
"	popl %eax\n"
"	iret\n"
"kt_gx_end:\n"
"	.code64\n"
"	.popsection\n");

extern const uint8_t kt_gx_start[], kt_gx_init[], kt_gx_pf[], kt_gx_ready[],
	kt_gx_end[];

/* Guest physical address of a handler symbol once copied. */
static uint32_t kt_gx_gpa(const uint8_t *sym)
{
	return KT_CODE_GPA + KT_HANDLERS_OFF + (uint32_t)(sym - kt_gx_start);
}

static void kt_idt_gate(uint8_t *sys, unsigned int vec, uint32_t handler)
{
	uint32_t *g = (uint32_t *)(sys + KT_IDT_OFF + vec * 8);

	/* 32-bit interrupt gate, DPL 0, present, selector 0x08. */
	g[0] = (0x08u << 16) | (handler & 0xffff);
	g[1] = (handler & 0xffff0000u) | 0x8e00;
}

uint64_t kt_guest_area_gpa(int id)
{
	return KT_CODE_GPA + KT_AREA_OFF + (uint64_t)id * KT_AREA_SIZE;
}

void kt_guest_vm_setup(struct kt_vm *vm)
{
	uint8_t *sys = kt_vm_gpa_to_hva(vm, KT_CODE_GPA);
	uint64_t *gdt = (uint64_t *)(sys + KT_GDT_OFF);
	uint32_t *pd = (uint32_t *)(sys + KT_PD_OFF);
	size_t len = kt_gx_end - kt_gx_start;
	unsigned int i;

	KT_ASSERT(sys && vm->code_size >= KT_SYS_SIZE, "no system page");
	KT_ASSERT(len <= KT_HANDLERS_MAX, "handlers %zu bytes", len);
	memcpy(sys + KT_HANDLERS_OFF, kt_gx_start, len);

	gdt[0] = 0;
	gdt[1] = 0x00cf9b000000ffffULL;		/* flat code, 32-bit */
	gdt[2] = 0x00cf93000000ffffULL;		/* flat data */

	memset(sys + KT_IDT_OFF, 0, KT_IDT_VECTORS * 8);
	kt_idt_gate(sys, 14, kt_gx_gpa(kt_gx_pf));
	kt_idt_gate(sys, KT_APF_VECTOR, kt_gx_gpa(kt_gx_ready));

	for (i = 0; i < KT_GUEST_MAX_VCPUS; i++) {
		uint8_t *area = sys + KT_AREA_OFF + i * KT_AREA_SIZE;

		memset(area, 0, KT_AREA_SIZE);
		*(uint32_t *)(area + KT_AREA_SELF) = kt_guest_area_gpa(i);
	}

	/* 4 MiB pages, present, writable, supervisor: 4 GiB one to one. */
	for (i = 0; i < 1024; i++)
		pd[i] = (i << 22) | 0x83;
}

/* The KVM leaf as a VMM offering async #PF sets it, on top of the rest. */
static void kt_guest_set_cpuid(struct kt_vcpu *vcpu)
{
	const uint32_t want = (1u << KVM_FEATURE_ASYNC_PF) |
			      (1u << KVM_FEATURE_ASYNC_PF_INT);
	struct kvm_cpuid2 *cpuid;
	bool found = false;
	unsigned int i;
	int nent = 256;

	cpuid = calloc(1, sizeof(*cpuid) + nent * sizeof(cpuid->entries[0]));
	KT_ASSERT(cpuid, "out of memory");
	cpuid->nent = nent;
	KT_ASSERT(!ioctl(vcpu->vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, cpuid),
		  "KVM_GET_SUPPORTED_CPUID: %s", strerror(errno));
	for (i = 0; i < cpuid->nent; i++) {
		struct kvm_cpuid_entry2 *e = &cpuid->entries[i];

		if (e->function != KVM_CPUID_FEATURES)
			continue;
		KT_ASSERT((e->eax & want) == want,
			  "KVM does not offer ASYNC_PF and ASYNC_PF_INT (0x%x)",
			  e->eax);
		e->eax = want;
		found = true;
	}
	KT_ASSERT(found, "no KVM_CPUID_FEATURES leaf");
	KT_ASSERT(!ioctl(vcpu->fd, KVM_SET_CPUID2, cpuid),
		  "KVM_SET_CPUID2: %s", strerror(errno));
	free(cpuid);
}

void kt_guest_touch_regs(struct kt_vcpu *vcpu, struct kvm_regs *regs)
{
	if (vcpu->vm->mode == KT_GUEST_PLAIN)
		return;
	regs->rflags |= 0x200;			/* IF */
	regs->rsp = KT_CODE_GPA + KT_STACK_TOP - vcpu->id * KT_STACK_SIZE;
}

void kt_guest_vcpu_setup(struct kt_vcpu *vcpu)
{
	struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_RUNNABLE };
	bool pv = vcpu->vm->mode == KT_GUEST_PV_APF;
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	uint32_t r;

	KT_ASSERT(vcpu->id >= 0 && vcpu->id < KT_GUEST_MAX_VCPUS,
		  "vcpu id %d: irqchip modes have %d vCPUs at most", vcpu->id,
		  KT_GUEST_MAX_VCPUS);
	/* CR4.PSE is reserved unless CPUID has PSE: CPUID first. */
	if (pv)
		kt_guest_set_cpuid(vcpu);

	KT_ASSERT(!ioctl(vcpu->fd, KVM_GET_SREGS, &sregs),
		  "KVM_GET_SREGS: %s", strerror(errno));
	sregs.gdt.base = KT_CODE_GPA + KT_GDT_OFF;
	sregs.gdt.limit = 3 * 8 - 1;
	sregs.idt.base = KT_CODE_GPA + KT_IDT_OFF;
	sregs.idt.limit = KT_IDT_VECTORS * 8 - 1;
	sregs.fs.base = kt_guest_area_gpa(vcpu->id);
	if (pv) {
		sregs.cr3 = KT_CODE_GPA + KT_PD_OFF;
		sregs.cr4 = 0x10;			/* PSE */
		sregs.cr0 |= 0x80000000u;		/* PG */
	}
	KT_ASSERT(!ioctl(vcpu->fd, KVM_SET_SREGS, &sregs),
		  "KVM_SET_SREGS: %s", strerror(errno));

	/* With an in-kernel LAPIC, APs would wait for INIT/SIPI. */
	KT_ASSERT(!ioctl(vcpu->fd, KVM_SET_MP_STATE, &mp),
		  "KVM_SET_MP_STATE: %s", strerror(errno));

	if (!pv)
		return;
	memset(&regs, 0, sizeof(regs));
	regs.rip = kt_gx_gpa(kt_gx_init);
	regs.rflags = 0x2;
	regs.rsp = KT_CODE_GPA + KT_STACK_TOP - vcpu->id * KT_STACK_SIZE;
	KT_ASSERT(!ioctl(vcpu->fd, KVM_SET_REGS, &regs),
		  "KVM_SET_REGS: %s", strerror(errno));
	r = kt_vcpu_run_done(vcpu);
	KT_ASSERT(r == 0, "pv-apf init reported 0x%x", r);
}

void kt_guest_apf_counts(struct kt_vcpu *vcpu, struct kt_apf_counts *c)
{
	const uint8_t *area;

	memset(c, 0, sizeof(*c));
	if (vcpu->vm->mode == KT_GUEST_PLAIN)
		return;
	area = kt_vm_gpa_to_hva(vcpu->vm, kt_guest_area_gpa(vcpu->id));
	KT_ASSERT(area, "no data area");
	c->not_present = __atomic_load_n((const uint32_t *)
					 (area + KT_AREA_NOT_PRESENT),
					 __ATOMIC_RELAXED);
	c->ready = __atomic_load_n((const uint32_t *)(area + KT_AREA_READY),
				   __ATOMIC_RELAXED);
	c->wake_all = __atomic_load_n((const uint32_t *)
				      (area + KT_AREA_WAKE_ALL),
				      __ATOMIC_RELAXED);
	c->early = __atomic_load_n((const uint32_t *)(area + KT_AREA_EARLY),
				   __ATOMIC_RELAXED);
	c->spurious = __atomic_load_n((const uint32_t *)
				      (area + KT_AREA_SPURIOUS),
				      __ATOMIC_RELAXED);
}

int kt_guest_apf_msr(struct kt_vcpu *vcpu, uint64_t *val)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m;

	memset(&m, 0, sizeof(m));
	m.hdr.nmsrs = 1;
	m.e.index = MSR_KVM_ASYNC_PF_EN;
	if (ioctl(vcpu->fd, KVM_GET_MSRS, &m) != 1)
		return -EIO;
	*val = m.e.data;
	return 0;
}
