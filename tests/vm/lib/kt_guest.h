/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kt_guest - the guest side of kvmtest's irqchip and pv-apf modes.
 *
 * In KT_GUEST_IRQCHIP and KT_GUEST_PV_APF the code memslot is
 * KT_SYS_SIZE bytes at KT_CODE_GPA (0):
 *
 *	0x0000	the touch program (as in every mode)
 *	0x0100	interrupt and exception handlers, the pv-apf init routine
 *	0x0300	GDT: null, flat 32-bit code (0x08), flat data (0x10)
 *	0x0400	IDT: KT_IDT_VECTORS 32-bit interrupt gates; only #PF and
 *		KT_APF_VECTOR are present, anything else ends in a triple
 *		fault (KVM_EXIT_SHUTDOWN) as in the plain guest
 *	0x0600	one KT_AREA_SIZE data area per vCPU (FS base): the
 *		struct kvm_vcpu_pv_apf_data that KVM writes, then the
 *		guest's own counters (struct kt_apf_counts)
 *	0x0a00	one KT_STACK_SIZE stack per vCPU, growing down from 0x1000
 *	0x1000	pv-apf: a page directory of 4 MiB pages mapping 4 GiB 1:1
 *
 * Up to KT_GUEST_MAX_VCPUS vCPUs per VM.
 *
 * pv-apf: KVM delivers async page faults only while the guest has paging
 * on (kvm_can_deliver_async_pf()), so this guest runs with 32-bit PSE
 * paging. The vCPU first runs an init routine that does what Linux's
 * kvm_guest_cpu_init() does: it software-enables its local APIC, writes
 * KT_APF_VECTOR to MSR_KVM_ASYNC_PF_INT and its data area | ENABLED |
 * SEND_ALWAYS | DELIVERY_AS_INT to MSR_KVM_ASYNC_PF_EN. Its #PF handler
 * takes a fault whose reason is "page not present", counts it, and waits
 * with sti; hlt until the "page ready" interrupt brings the same token
 * (CR2); the interrupt handler reads the token, frees the slot, sends
 * EOI and writes MSR_KVM_ASYNC_PF_ACK. Under QEMU's TCG (nested SVM) the
 * "page ready" interrupt was seen delivered in the sti shadow, before
 * the wait's hlt, leaving the vCPU halted with its token already taken;
 * the interrupt handler then returns past that hlt (counted as "early").
 * It was also seen taken twice for one token; the second time, with the
 * slot already empty, is counted as "spurious" and otherwise ignored. A #PF with any other reason is
 * reported on port KT_BADPF_PORT (eax = CR2), which kt_vcpu_run_done()
 * fails on.
 *
 * All symbols start with kt_guest_ / KT_.
 */
#ifndef KT_GUEST_H
#define KT_GUEST_H

#include <stdint.h>

#include "kvmtest.h"

#define KT_SYS_SIZE		0x2000ULL
#define KT_HANDLERS_OFF		0x100
#define KT_HANDLERS_MAX		0x200
#define KT_GDT_OFF		0x300
#define KT_IDT_OFF		0x400
#define KT_IDT_VECTORS		0x30
#define KT_AREA_OFF		0x600
#define KT_AREA_SIZE		0x80
#define KT_STACK_TOP		0x1000
#define KT_STACK_SIZE		0xc0
#define KT_PD_OFF		0x1000
#define KT_GUEST_MAX_VCPUS	8

#define KT_APF_VECTOR		0x20	/* "page ready" interrupt */
#define KT_SPURIOUS_VECTOR	0x2f	/* local APIC SVR */
#define KT_BADPF_PORT		0x7f	/* unexpected #PF, eax = CR2 */

/* Offsets in a vCPU's data area (KVM's part first). */
#define KT_AREA_FLAGS		0x00	/* kvm_vcpu_pv_apf_data.flags */
#define KT_AREA_TOKEN		0x04	/* kvm_vcpu_pv_apf_data.token */
#define KT_AREA_NOT_PRESENT	0x48
#define KT_AREA_READY		0x4c
#define KT_AREA_WAKE_ALL	0x50
#define KT_AREA_READY_TOKEN	0x54
#define KT_AREA_EARLY		0x58
#define KT_AREA_SPURIOUS	0x5c
#define KT_AREA_SELF		0x7c	/* the area's own gpa */

/* The guest's pv-apf counters of one vCPU (monotonic since creation). */
struct kt_apf_counts {
	uint32_t not_present;	/* #PF with reason "page not present" */
	uint32_t ready;		/* "page ready" interrupts for a token */
	uint32_t wake_all;	/* "page ready" with the broadcast token */
	uint32_t early;		/* "page ready" taken before the wait's hlt */
	uint32_t spurious;	/* "page ready" interrupts with no token */
};

/* Called by kvmtest.c: write the system page(s) of a new VM. */
void kt_guest_vm_setup(struct kt_vm *vm);
/* Called by kvmtest.c: irqchip/pv-apf setup of a new vCPU. */
void kt_guest_vcpu_setup(struct kt_vcpu *vcpu);
/* Called by kvmtest.c: rflags and rsp for the touch program. */
void kt_guest_touch_regs(struct kt_vcpu *vcpu, struct kvm_regs *regs);

/* Guest physical address of vCPU @id's data area. */
uint64_t kt_guest_area_gpa(int id);
/* Read the guest's pv-apf counters of @vcpu (zeroes in other modes). */
void kt_guest_apf_counts(struct kt_vcpu *vcpu, struct kt_apf_counts *c);
/* MSR_KVM_ASYNC_PF_EN of @vcpu through KVM_GET_MSRS; 0 or -errno. */
int kt_guest_apf_msr(struct kt_vcpu *vcpu, uint64_t *val);

#endif /* KT_GUEST_H */
