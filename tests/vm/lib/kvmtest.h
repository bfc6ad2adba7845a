/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvmtest - a tiny helper library for in-VM KVM tests.
 *
 * Static test programs use raw KVM ioctls through it: create a VM, add
 * memslots, create vCPUs running a built-in 32-bit guest program ("touch")
 * without guest paging, so that every guest access to a fresh page is a
 * TDP (NPT/EPT) fault on the host, and read binary stats by name.
 * Reporting (KT_EXPECT() and the others) is kt_core.h's.
 */
#ifndef KVMTEST_H
#define KVMTEST_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <linux/kvm.h>

#include "kt_core.h"	/* reporting, /dev/kvm, stats, clock */

/* Guest layout: the touch program lives in its own one-page memslot. */
#define KT_CODE_SLOT	0
#define KT_CODE_GPA	0x0ULL
#define KT_CODE_SIZE	0x1000ULL
/* I/O port the touch program writes its result (eax, 4 bytes) to. */
#define KT_DONE_PORT	0x7e

#define KT_MAX_SLOTS	32
#define KT_PAGE_SIZE	4096ULL

/* Modes of the touch program. */
enum kt_touch_mode {
	KT_TOUCH_WRITE = 0,	/* store the address into each page's dword 0 */
	KT_TOUCH_READ = 1,	/* sum each page's dword 0 (mod 2^32) */
};

/*
 * Guest modes (kt_vm_create_mode()). Every mode runs the same touch
 * program; they differ in what KVM may do when a guest fault finds no
 * host page (see kt_guest.h for the layout of the system page):
 *
 *  - KT_GUEST_PLAIN: no in-kernel irqchip, IF=0: KVM waits for the host
 *    page in the vCPU thread (no async #PF).
 *  - KT_GUEST_IRQCHIP: KVM_CREATE_IRQCHIP, IF=1, a GDT, an IDT and a
 *    stack per vCPU: KVM queues an async #PF and halts the vCPU until the
 *    page is there (no PV in the guest).
 *  - KT_GUEST_PV_APF: irqchip, plus 32-bit paging and a guest that
 *    enables PV async page faults as Linux does (CPUID, the
 *    MSR_KVM_ASYNC_PF_INT vector, MSR_KVM_ASYNC_PF_EN with delivery as
 *    interrupt, a #PF handler that waits for "page ready", ACK).
 */
enum kt_guest_mode {
	KT_GUEST_PLAIN = 0,
	KT_GUEST_IRQCHIP,
	KT_GUEST_PV_APF,
	KT_GUEST_NR_MODES,
};

/* Flags of kt_vm_add_slot() that are not KVM memslot flags. */
#define KT_SLOT_THP	(1ULL << 63)	/* keep THP on library-owned memory */

struct kt_slot {
	bool used;
	bool owned;			/* hva was mmap()ed by the library */
	uint32_t flags;
	uint64_t gpa;
	uint64_t size;
	void *hva;
};

struct kt_vm {
	int kvm_fd;			/* /dev/kvm */
	int fd;				/* VM fd */
	int run_size;			/* KVM_GET_VCPU_MMAP_SIZE */
	struct kt_slot slots[KT_MAX_SLOTS];
	struct kt_stats stats;
	enum kt_guest_mode mode;	/* KT_GUEST_PLAIN unless _create_mode */
	uint64_t code_size;		/* size of memslot KT_CODE_SLOT */
};

struct kt_vcpu {
	struct kt_vm *vm;
	int id;
	int fd;
	struct kvm_run *run;
	struct kt_stats stats;
};

/* ---- /dev/kvm and VMs --------------------------------------------- */

/* SKIP (exit 4) unless /dev/kvm opens and has the right API version. */
void kt_require_kvm(void);

/* Create a VM (type 0) with the touch program in slot KT_CODE_SLOT. */
struct kt_vm *kt_vm_create(void);
/*
 * Create a VM whose vCPUs run in guest mode @mode. KT_GUEST_PLAIN is
 * kt_vm_create(); the other modes create the in-kernel irqchip and use
 * KT_SYS_SIZE bytes at KT_CODE_GPA for the code slot (see kt_guest.h).
 */
struct kt_vm *kt_vm_create_mode(enum kt_guest_mode mode);
/* "plain", "irqchip", "pv-apf" (or "?"). */
const char *kt_guest_mode_str(enum kt_guest_mode mode);
/* The mode named @name, or -1. */
int kt_guest_mode_parse(const char *name);
void kt_vm_free(struct kt_vm *vm);

/* KVM_CHECK_EXTENSION; returns the ioctl's value (<0: -errno). */
int kt_kvm_check_ext(struct kt_vm *vm, long cap);	/* on /dev/kvm */
int kt_vm_check_ext(struct kt_vm *vm, long cap);	/* on the VM fd */

/*
 * Add memslot @slot at @gpa of @size bytes. @flags are KVM_MEM_* flags
 * plus KT_SLOT_THP. If @host is NULL the library mmap()s anonymous
 * memory (MADV_NOHUGEPAGE unless KT_SLOT_THP, so that host pages and
 * thus TDP mappings are 4 KiB and faults are countable) and frees it
 * on delete. Returns the host address of the slot's memory.
 */
void *kt_vm_add_slot(struct kt_vm *vm, uint32_t slot, uint64_t gpa,
		     uint64_t size, uint64_t flags, void *host);
void kt_vm_delete_slot(struct kt_vm *vm, uint32_t slot);
void kt_vm_move_slot(struct kt_vm *vm, uint32_t slot, uint64_t new_gpa);
/* Change KVM_MEM_* flags (e.g. toggle KVM_MEM_LOG_DIRTY_PAGES). */
void kt_vm_set_slot_flags(struct kt_vm *vm, uint32_t slot, uint32_t flags);
/* Host address of @gpa, or NULL if no slot covers it. */
void *kt_vm_gpa_to_hva(struct kt_vm *vm, uint64_t gpa);
/*
 * A VM with memslot @slot of @size bytes at @gpa, its host memory filled
 * with @fill, and vCPU 0, which has run once so that its code page is
 * mapped and the slot's first fault is the test's.  The vCPU is in *@vcpu.
 */
struct kt_vm *kt_vm_populated(uint32_t slot, uint64_t gpa, uint64_t size,
			      int fill, struct kt_vcpu **vcpu);
/*
 * The same over @host (kt_vm_add_slot()'s @flags and @host: NULL, the
 * library's memory, left as it is).
 */
struct kt_vm *kt_vm_on(uint32_t slot, uint64_t gpa, uint64_t size,
		       uint64_t flags, void *host, struct kt_vcpu **vcpu);

/* ---- vCPUs --------------------------------------------------------- */

/*
 * Create vCPU @id, mmap its kvm_run and put it in 32-bit protected mode
 * with flat 4 GiB segments, paging off, interrupts off, RIP at the touch
 * program. In the VM's irqchip modes the vCPU also gets the GDT, IDT,
 * stack and data area of kt_guest.h and is made runnable (APs too); in
 * KT_GUEST_PV_APF it has paging on and has enabled PV async page faults
 * (it ran kt_guest.h's init routine) before this returns. Interrupts
 * are on whenever the touch program runs in those modes.
 */
struct kt_vcpu *kt_vcpu_add(struct kt_vm *vm, int id);
void kt_vcpu_free(struct kt_vcpu *vcpu);

/* KVM_RUN once (retrying on EINTR); returns run->exit_reason. */
uint32_t kt_vcpu_run(struct kt_vcpu *vcpu);
/* Name of a KVM_EXIT_* value, for messages. */
const char *kt_exit_reason_str(uint32_t reason);
/* Print everything useful about an unexpected exit as "# " lines. */
void kt_vcpu_dump_exit(struct kt_vcpu *vcpu);

/*
 * Set the registers for one pass of a guest loop at @rip that follows
 * the touch program's convention: esi = @start, edi = @end, ecx =
 * @stride, ebx = @mode, edx = @value (the touch program ignores it);
 * all other registers 0, interrupts off.
 */
void kt_vcpu_setup_loop(struct kt_vcpu *vcpu, uint64_t rip, uint32_t start,
			uint32_t end, uint32_t stride, uint32_t mode,
			uint32_t value);
/*
 * True if the last exit was one 4-byte OUT to @port; its value then
 * goes to *@val (unless @val is NULL).
 */
bool kt_vcpu_out32(struct kt_vcpu *vcpu, uint16_t port, uint32_t *val);

/*
 * Set the touch program's registers for one pass over [@start, @end)
 * every @stride bytes (0 means KT_PAGE_SIZE) in @mode.
 */
void kt_touch_setup(struct kt_vcpu *vcpu, uint32_t start, uint32_t end,
		    uint32_t stride, enum kt_touch_mode mode);
/*
 * Run until the touch program reports on KT_DONE_PORT and return its
 * result (read checksum; 0 for writes). Any other exit is a FAIL that
 * ends the program.
 */
uint32_t kt_vcpu_run_done(struct kt_vcpu *vcpu);
/* kt_touch_setup() + kt_vcpu_run_done(). */
uint32_t kt_touch(struct kt_vcpu *vcpu, uint32_t start, uint32_t end,
		  uint32_t stride, enum kt_touch_mode mode);

/* ---- binary stats (KVM_GET_STATS_FD) ------------------------------- */

/*
 * Read the first u64 of stat @name into @val. Returns 0, -ENOENT if the
 * kernel has no such stat (so tests of new stats can SKIP), or -errno.
 */
int kt_vcpu_stat(struct kt_vcpu *vcpu, const char *name, uint64_t *val);
int kt_vm_stat(struct kt_vm *vm, const char *name, uint64_t *val);
/* Like kt_vcpu_stat() but a missing or unreadable stat is a FAIL. */
uint64_t kt_vcpu_stat_get(struct kt_vcpu *vcpu, const char *name);

/* A vCPU's guest faults and prefetch counters, its VM's leaves. */
struct kt_counts {
	uint64_t pf, windows, mapped;	/* pf_taken, prefetch_windows, _mapped */
	uint64_t p4k, p2m;		/* the VM's pages_4k, pages_2m */
};

/* The counts now; a failure ends the program. */
struct kt_counts kt_counts_read(struct kt_vm *vm, struct kt_vcpu *vcpu);
/*
 * An information line: the printf-style @fmt, then what each count
 * grew by from @a to @b.
 */
void kt_counts_info(const struct kt_counts *a, const struct kt_counts *b,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- misc ---------------------------------------------------------- */

/* pthread_join() @t if it ends within @secs s; true if it did. */
bool kt_join_within(pthread_t t, unsigned int secs);
/*
 * @size bytes of populated private anonymous memory, 4 KiB host pages
 * (MADV_NOHUGEPAGE), whose page i holds (uint32_t)(@gpa + i * 4K) in its
 * first dword: what the touch program's read sums at guest address
 * @gpa + i * 4K.  A failure is a FAIL that ends the program.
 */
char *kt_populated(uint64_t size, uint64_t gpa);
/*
 * @size bytes of private anonymous memory, 2 MiB aligned, MADV_HUGEPAGE
 * (THPs where the host has them), every byte @fill; munmap(mem, @size)
 * frees it.  A failure is a FAIL that ends the program.
 */
char *kt_thp_memory(uint64_t size, int fill);

/*
 * A child process that holds this process's private pages, shared
 * (copy-on-write, read-only in the host), from kt_share_begin() until
 * kt_share_end(), which lets it go and checks (KT_EXPECT) that it ended.
 */
struct kt_sharer {
	pid_t pid;
	int fd;		/* the pipe's write end: closed, the child exits */
};
void kt_share_begin(struct kt_sharer *s);
void kt_share_end(struct kt_sharer *s);

#endif /* KVMTEST_H */
