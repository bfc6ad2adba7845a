// SPDX-License-Identifier: GPL-2.0
/*
 * kvmtest - helper library for in-VM KVM tests; see kvmtest.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kvmtest.h"
#include "kt_guest.h"

bool kt_join_within(pthread_t t, unsigned int secs)
{
	struct timespec ts;

	/* pthread_timedjoin_np() takes a CLOCK_REALTIME deadline. */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	return !pthread_timedjoin_np(t, NULL, &ts);
}

/* ---- /dev/kvm and VMs --------------------------------------------- */

void kt_require_kvm(void)
{
	int fd = kt_kvm_open();

	KT_REQUIRE(fd >= 0, "/dev/kvm unusable: %s", strerror(-fd));
	close(fd);
}

int kt_kvm_check_ext(struct kt_vm *vm, long cap)
{
	int r = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, cap);

	return r < 0 ? -errno : r;
}

int kt_vm_check_ext(struct kt_vm *vm, long cap)
{
	int r = ioctl(vm->fd, KVM_CHECK_EXTENSION, cap);

	return r < 0 ? -errno : r;
}

/*
 * The "touch" guest program, 32-bit code, flat segments, no paging.
 * In:  esi = start, edi = end (exclusive), ecx = stride, ebx = mode.
 * Out: "out KT_DONE_PORT, eax" with eax = sum of dword 0 of each visited
 *      address in read mode (0 in write mode), then back to the top, so a
 *      vCPU re-entered with new registers runs another pass.
 */
static const uint8_t kt_touch_code[] = {
	/* 0x00 top:  */ 0x31, 0xc0,		/* xor  eax, eax          */
	/* 0x02 loop: */ 0x39, 0xfe,		/* cmp  esi, edi          */
	/* 0x04       */ 0x73, 0x0e,		/* jae  done (0x14)       */
	/* 0x06       */ 0x85, 0xdb,		/* test ebx, ebx          */
	/* 0x08       */ 0x75, 0x04,		/* jnz  rd (0x0e)         */
	/* 0x0a       */ 0x89, 0x36,		/* mov  [esi], esi        */
	/* 0x0c       */ 0xeb, 0x02,		/* jmp  next (0x10)       */
	/* 0x0e rd:   */ 0x03, 0x06,		/* add  eax, [esi]        */
	/* 0x10 next: */ 0x01, 0xce,		/* add  esi, ecx          */
	/* 0x12       */ 0xeb, 0xee,		/* jmp  loop (0x02)       */
	/* 0x14 done: */ 0xe7, KT_DONE_PORT,	/* out  KT_DONE_PORT, eax */
	/* 0x16       */ 0xeb, 0xe8,		/* jmp  top (0x00)        */
};

static struct kt_slot *kt_slot_get(struct kt_vm *vm, uint32_t slot)
{
	KT_ASSERT(slot < KT_MAX_SLOTS && vm->slots[slot].used,
		  "memslot %u not in use", slot);
	return &vm->slots[slot];
}

static void kt_slot_commit(struct kt_vm *vm, uint32_t slot, uint32_t flags,
			   uint64_t gpa, uint64_t size, void *hva)
{
	struct kvm_userspace_memory_region r = {
		.slot = slot,
		.flags = flags,
		.guest_phys_addr = gpa,
		.memory_size = size,
		.userspace_addr = (uintptr_t)hva,
	};

	KT_ASSERT(!ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &r),
		  "slot %u gpa 0x%llx size 0x%llx flags 0x%x: %s", slot,
		  (unsigned long long)gpa, (unsigned long long)size, flags,
		  strerror(errno));
}

void *kt_vm_add_slot(struct kt_vm *vm, uint32_t slot, uint64_t gpa,
		     uint64_t size, uint64_t flags, void *host)
{
	struct kt_slot *s;
	void *hva = host;

	KT_ASSERT(slot < KT_MAX_SLOTS && !vm->slots[slot].used,
		  "memslot %u out of range or in use", slot);
	KT_ASSERT(size && !(size % KT_PAGE_SIZE) && !(gpa % KT_PAGE_SIZE),
		  "gpa 0x%llx size 0x%llx not page aligned",
		  (unsigned long long)gpa, (unsigned long long)size);
	if (!hva) {
		hva = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		KT_ASSERT(hva != MAP_FAILED, "mmap %llu bytes: %s",
			  (unsigned long long)size, strerror(errno));
		/*
		 * The guest kernel defaults to THP "always": a huge host page
		 * lets KVM map 2 MiB at once and the fault counts go wrong.
		 */
		if (!(flags & KT_SLOT_THP))
			KT_ASSERT(!madvise(hva, size, MADV_NOHUGEPAGE),
				  "madvise: %s", strerror(errno));
	}
	kt_slot_commit(vm, slot, (uint32_t)flags, gpa, size, hva);

	s = &vm->slots[slot];
	s->used = true;
	s->owned = !host;
	s->flags = (uint32_t)flags;
	s->gpa = gpa;
	s->size = size;
	s->hva = hva;
	return hva;
}

void kt_vm_delete_slot(struct kt_vm *vm, uint32_t slot)
{
	struct kt_slot *s = kt_slot_get(vm, slot);

	kt_slot_commit(vm, slot, 0, s->gpa, 0, s->hva);
	if (s->owned)
		munmap(s->hva, s->size);
	memset(s, 0, sizeof(*s));
}

void kt_vm_move_slot(struct kt_vm *vm, uint32_t slot, uint64_t new_gpa)
{
	struct kt_slot *s = kt_slot_get(vm, slot);

	kt_slot_commit(vm, slot, s->flags, new_gpa, s->size, s->hva);
	s->gpa = new_gpa;
}

void kt_vm_set_slot_flags(struct kt_vm *vm, uint32_t slot, uint32_t flags)
{
	struct kt_slot *s = kt_slot_get(vm, slot);

	kt_slot_commit(vm, slot, flags, s->gpa, s->size, s->hva);
	s->flags = flags;
}

void *kt_vm_gpa_to_hva(struct kt_vm *vm, uint64_t gpa)
{
	int i;

	for (i = 0; i < KT_MAX_SLOTS; i++) {
		struct kt_slot *s = &vm->slots[i];

		if (s->used && gpa >= s->gpa && gpa - s->gpa < s->size)
			return (char *)s->hva + (gpa - s->gpa);
	}
	return NULL;
}

struct kt_vm *kt_vm_create_mode(enum kt_guest_mode mode)
{
	struct kt_vm *vm;
	void *code;
	int fd;

	KT_ASSERT(mode >= KT_GUEST_PLAIN && mode < KT_GUEST_NR_MODES,
		  "guest mode %d", mode);
	vm = calloc(1, sizeof(*vm));
	KT_ASSERT(vm, "out of memory");
	kt_stats_init(&vm->stats);
	vm->mode = mode;
	vm->code_size = mode == KT_GUEST_PLAIN ? KT_CODE_SIZE : KT_SYS_SIZE;

	fd = kt_kvm_open();
	KT_ASSERT(fd >= 0, "open /dev/kvm: %s", strerror(-fd));
	vm->kvm_fd = fd;

	vm->run_size = ioctl(fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	KT_ASSERT(vm->run_size >= (int)sizeof(struct kvm_run),
		  "KVM_GET_VCPU_MMAP_SIZE: %d", vm->run_size);

	vm->fd = ioctl(fd, KVM_CREATE_VM, 0);
	KT_ASSERT(vm->fd >= 0, "KVM_CREATE_VM: %s", strerror(errno));

	/* PIC, IOAPIC and a local APIC per vCPU, as VMMs create them. */
	if (mode != KT_GUEST_PLAIN)
		KT_ASSERT(!ioctl(vm->fd, KVM_CREATE_IRQCHIP, 0),
			  "KVM_CREATE_IRQCHIP: %s", strerror(errno));

	code = kt_vm_add_slot(vm, KT_CODE_SLOT, KT_CODE_GPA, vm->code_size, 0,
			      NULL);
	memcpy(code, kt_touch_code, sizeof(kt_touch_code));
	if (mode != KT_GUEST_PLAIN)
		kt_guest_vm_setup(vm);
	return vm;
}

struct kt_vm *kt_vm_create(void)
{
	return kt_vm_create_mode(KT_GUEST_PLAIN);
}

static const char * const kt_guest_mode_names[KT_GUEST_NR_MODES] = {
	[KT_GUEST_PLAIN] = "plain",
	[KT_GUEST_IRQCHIP] = "irqchip",
	[KT_GUEST_PV_APF] = "pv-apf",
};

const char *kt_guest_mode_str(enum kt_guest_mode mode)
{
	if (mode < KT_GUEST_PLAIN || mode >= KT_GUEST_NR_MODES)
		return "?";
	return kt_guest_mode_names[mode];
}

int kt_guest_mode_parse(const char *name)
{
	int i;

	for (i = 0; i < KT_GUEST_NR_MODES; i++)
		if (!strcmp(name, kt_guest_mode_names[i]))
			return i;
	return -1;
}

void kt_vm_free(struct kt_vm *vm)
{
	int i;

	for (i = 0; i < KT_MAX_SLOTS; i++)
		if (vm->slots[i].used)
			kt_vm_delete_slot(vm, i);
	kt_stats_free(&vm->stats);
	close(vm->fd);
	close(vm->kvm_fd);
	free(vm);
}

/* ---- vCPUs --------------------------------------------------------- */

static void kt_seg_flat(struct kvm_segment *seg, uint16_t sel, uint8_t type)
{
	memset(seg, 0, sizeof(*seg));
	seg->base = 0;
	seg->limit = 0xffffffff;
	seg->selector = sel;
	seg->type = type;
	seg->present = 1;
	seg->dpl = 0;
	seg->db = 1;		/* 32-bit */
	seg->s = 1;		/* code/data, not system */
	seg->l = 0;
	seg->g = 1;		/* limit in 4 KiB units */
}

static void kt_vcpu_setup_pm32(struct kt_vcpu *vcpu)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	KT_ASSERT(!ioctl(vcpu->fd, KVM_GET_SREGS, &sregs),
		  "KVM_GET_SREGS: %s", strerror(errno));

	/* Selectors are cosmetic: no GDT in guest memory is ever read. */
	kt_seg_flat(&sregs.cs, 0x08, 0xb);	/* code, exec/read, accessed */
	kt_seg_flat(&sregs.ds, 0x10, 0x3);	/* data, read/write, accessed */
	sregs.es = sregs.ds;
	sregs.fs = sregs.ds;
	sregs.gs = sregs.ds;
	sregs.ss = sregs.ds;

	memset(&sregs.tr, 0, sizeof(sregs.tr));
	sregs.tr.selector = 0x18;
	sregs.tr.limit = 0x67;
	sregs.tr.type = 0xb;			/* busy 32-bit TSS */
	sregs.tr.present = 1;

	memset(&sregs.ldt, 0, sizeof(sregs.ldt));
	sregs.ldt.type = 0x2;
	sregs.ldt.present = 1;
	sregs.ldt.unusable = 1;

	/* No IDT: any exception becomes a triple fault (KVM_EXIT_SHUTDOWN). */
	sregs.gdt.base = 0;
	sregs.gdt.limit = 0;
	sregs.idt.base = 0;
	sregs.idt.limit = 0;

	sregs.cr0 = 0x11;			/* PE | ET; PG, CD, NW clear */
	sregs.cr3 = 0;
	sregs.cr4 = 0;
	sregs.efer = 0;
	memset(sregs.interrupt_bitmap, 0, sizeof(sregs.interrupt_bitmap));

	KT_ASSERT(!ioctl(vcpu->fd, KVM_SET_SREGS, &sregs),
		  "KVM_SET_SREGS: %s", strerror(errno));

	memset(&regs, 0, sizeof(regs));
	regs.rflags = 0x2;			/* reserved bit 1; IF clear */
	regs.rip = KT_CODE_GPA;
	KT_ASSERT(!ioctl(vcpu->fd, KVM_SET_REGS, &regs),
		  "KVM_SET_REGS: %s", strerror(errno));
}

struct kt_vcpu *kt_vcpu_add(struct kt_vm *vm, int id)
{
	struct kt_vcpu *vcpu;

	vcpu = calloc(1, sizeof(*vcpu));
	KT_ASSERT(vcpu, "out of memory");
	vcpu->vm = vm;
	vcpu->id = id;
	kt_stats_init(&vcpu->stats);

	vcpu->fd = ioctl(vm->fd, KVM_CREATE_VCPU, id);
	KT_ASSERT(vcpu->fd >= 0, "KVM_CREATE_VCPU %d: %s", id,
		  strerror(errno));
	vcpu->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, vcpu->fd, 0);
	KT_ASSERT(vcpu->run != MAP_FAILED, "mmap kvm_run: %s",
		  strerror(errno));

	kt_vcpu_setup_pm32(vcpu);
	if (vm->mode != KT_GUEST_PLAIN)
		kt_guest_vcpu_setup(vcpu);
	return vcpu;
}

void kt_vcpu_free(struct kt_vcpu *vcpu)
{
	kt_stats_free(&vcpu->stats);
	munmap(vcpu->run, vcpu->vm->run_size);
	close(vcpu->fd);
	free(vcpu);
}

uint32_t kt_vcpu_run(struct kt_vcpu *vcpu)
{
	int r;

	do {
		r = ioctl(vcpu->fd, KVM_RUN, 0);
	} while (r < 0 && (errno == EINTR || errno == EAGAIN));
	KT_ASSERT(r == 0, "KVM_RUN vcpu %d: %s", vcpu->id, strerror(errno));
	return vcpu->run->exit_reason;
}

const char *kt_exit_reason_str(uint32_t reason)
{
	static const char * const names[] = {
		[KVM_EXIT_UNKNOWN] = "UNKNOWN",
		[KVM_EXIT_EXCEPTION] = "EXCEPTION",
		[KVM_EXIT_IO] = "IO",
		[KVM_EXIT_HYPERCALL] = "HYPERCALL",
		[KVM_EXIT_DEBUG] = "DEBUG",
		[KVM_EXIT_HLT] = "HLT",
		[KVM_EXIT_MMIO] = "MMIO",
		[KVM_EXIT_IRQ_WINDOW_OPEN] = "IRQ_WINDOW_OPEN",
		[KVM_EXIT_SHUTDOWN] = "SHUTDOWN",
		[KVM_EXIT_FAIL_ENTRY] = "FAIL_ENTRY",
		[KVM_EXIT_INTR] = "INTR",
		[KVM_EXIT_SET_TPR] = "SET_TPR",
		[KVM_EXIT_TPR_ACCESS] = "TPR_ACCESS",
		[KVM_EXIT_INTERNAL_ERROR] = "INTERNAL_ERROR",
		[KVM_EXIT_SYSTEM_EVENT] = "SYSTEM_EVENT",
		[KVM_EXIT_X86_RDMSR] = "X86_RDMSR",
		[KVM_EXIT_X86_WRMSR] = "X86_WRMSR",
		[KVM_EXIT_DIRTY_RING_FULL] = "DIRTY_RING_FULL",
		[KVM_EXIT_X86_BUS_LOCK] = "X86_BUS_LOCK",
	};

	if (reason < ARRAY_SIZE(names) && names[reason])
		return names[reason];
	return "?";
}

void kt_vcpu_dump_exit(struct kt_vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	struct kvm_regs regs;
	unsigned int i;

	kt_info("vcpu %d exit_reason %u (%s)", vcpu->id, run->exit_reason,
		kt_exit_reason_str(run->exit_reason));
	switch (run->exit_reason) {
	case KVM_EXIT_FAIL_ENTRY:
		kt_info("hardware_entry_failure_reason 0x%llx cpu %u",
			(unsigned long long)
			run->fail_entry.hardware_entry_failure_reason,
			run->fail_entry.cpu);
		break;
	case KVM_EXIT_INTERNAL_ERROR:
		kt_info("internal error suberror %u ndata %u",
			run->internal.suberror, run->internal.ndata);
		for (i = 0; i < run->internal.ndata && i < 16; i++)
			kt_info("  data[%u] 0x%llx", i,
				(unsigned long long)run->internal.data[i]);
		break;
	case KVM_EXIT_IO:
		kt_info("io %s port 0x%x size %u count %u",
			run->io.direction == KVM_EXIT_IO_OUT ? "out" : "in",
			run->io.port, run->io.size, run->io.count);
		break;
	case KVM_EXIT_MMIO:
		kt_info("mmio %s gpa 0x%llx len %u",
			run->mmio.is_write ? "write" : "read",
			(unsigned long long)run->mmio.phys_addr, run->mmio.len);
		break;
	case KVM_EXIT_SYSTEM_EVENT:
		kt_info("system event type %u", run->system_event.type);
		break;
	}
	if (!ioctl(vcpu->fd, KVM_GET_REGS, &regs))
		kt_info("rip 0x%llx rax 0x%llx rbx 0x%llx rcx 0x%llx rsi 0x%llx rdi 0x%llx",
			(unsigned long long)regs.rip,
			(unsigned long long)regs.rax,
			(unsigned long long)regs.rbx,
			(unsigned long long)regs.rcx,
			(unsigned long long)regs.rsi,
			(unsigned long long)regs.rdi);
}

void kt_vcpu_setup_loop(struct kt_vcpu *vcpu, uint64_t rip, uint32_t start,
			uint32_t end, uint32_t stride, uint32_t mode,
			uint32_t value)
{
	struct kvm_regs regs;

	memset(&regs, 0, sizeof(regs));
	regs.rip = rip;
	regs.rflags = 0x2;
	regs.rsi = start;
	regs.rdi = end;
	regs.rcx = stride;
	regs.rdx = value;
	regs.rbx = mode;
	kt_guest_touch_regs(vcpu, &regs);
	KT_ASSERT(!ioctl(vcpu->fd, KVM_SET_REGS, &regs),
		  "KVM_SET_REGS: %s", strerror(errno));
}

bool kt_vcpu_out32(struct kt_vcpu *vcpu, uint16_t port, uint32_t *val)
{
	struct kvm_run *run = vcpu->run;

	if (run->exit_reason != KVM_EXIT_IO || run->io.port != port ||
	    run->io.direction != KVM_EXIT_IO_OUT || run->io.size != 4 ||
	    run->io.count != 1)
		return false;
	if (val)
		*val = *(uint32_t *)((char *)run + run->io.data_offset);
	return true;
}

void kt_touch_setup(struct kt_vcpu *vcpu, uint32_t start, uint32_t end,
		    uint32_t stride, enum kt_touch_mode mode)
{
	if (!stride)
		stride = KT_PAGE_SIZE;
	/* The loop must neither wrap around 4 GiB nor start in the code. */
	KT_ASSERT(end <= UINT32_MAX - stride, "end 0x%x too high", end);
	KT_ASSERT(start >= KT_CODE_GPA + vcpu->vm->code_size || start >= end,
		  "range 0x%x-0x%x overlaps the code page", start, end);
	kt_vcpu_setup_loop(vcpu, KT_CODE_GPA, start, end, stride, mode, 0);
}

uint32_t kt_vcpu_run_done(struct kt_vcpu *vcpu)
{
	uint32_t reason = kt_vcpu_run(vcpu), val;

	if (kt_vcpu_out32(vcpu, KT_DONE_PORT, &val))
		return val;

	kt_vcpu_dump_exit(vcpu);
	kt_fail("vcpu %d: unexpected exit %u (%s), wanted IO out port 0x%x",
		vcpu->id, reason, kt_exit_reason_str(reason), KT_DONE_PORT);
	exit(kt_exit());
}

uint32_t kt_touch(struct kt_vcpu *vcpu, uint32_t start, uint32_t end,
		  uint32_t stride, enum kt_touch_mode mode)
{
	kt_touch_setup(vcpu, start, end, stride, mode);
	return kt_vcpu_run_done(vcpu);
}

/* ---- binary stats ---------------------------------------------- */

int kt_vcpu_stat(struct kt_vcpu *vcpu, const char *name, uint64_t *val)
{
	return kt_stats_read(&vcpu->stats, vcpu->fd, name, val);
}

int kt_vm_stat(struct kt_vm *vm, const char *name, uint64_t *val)
{
	return kt_stats_read(&vm->stats, vm->fd, name, val);
}

uint64_t kt_vcpu_stat_get(struct kt_vcpu *vcpu, const char *name)
{
	return kt_stats_vcpu_get(&vcpu->stats, vcpu->fd, vcpu->id, name);
}

struct kt_counts kt_counts_read(struct kt_vm *vm, struct kt_vcpu *vcpu)
{
	struct kt_counts c;

	c.pf = kt_vcpu_stat_get(vcpu, "pf_taken");
	c.windows = kt_vcpu_stat_get(vcpu, "prefetch_windows");
	c.mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	KT_ASSERT(!kt_vm_stat(vm, "pages_4k", &c.p4k), "VM stat pages_4k");
	KT_ASSERT(!kt_vm_stat(vm, "pages_2m", &c.p2m), "VM stat pages_2m");
	return c;
}

void kt_counts_info(const struct kt_counts *a, const struct kt_counts *b,
		    const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	kt_info("%s: pf_taken +%llu prefetch_windows +%llu prefetch_mapped +%llu pages_4k +%llu pages_2m +%llu",
		what, (unsigned long long)(b->pf - a->pf),
		(unsigned long long)(b->windows - a->windows),
		(unsigned long long)(b->mapped - a->mapped),
		(unsigned long long)(b->p4k - a->p4k),
		(unsigned long long)(b->p2m - a->p2m));
}

char *kt_populated(uint64_t size, uint64_t gpa)
{
	char *mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t off;

	KT_ASSERT(mem != MAP_FAILED, "mmap: %s", strerror(errno));
	madvise(mem, size, MADV_NOHUGEPAGE);
	for (off = 0; off < size; off += KT_PAGE_SIZE)
		*(uint32_t *)(mem + off) = (uint32_t)(gpa + off);
	return mem;
}

char *kt_thp_memory(uint64_t size, int fill)
{
	const uintptr_t huge = 2UL << 20;
	char *p = mmap(NULL, size + huge, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *mem;

	KT_ASSERT(p != MAP_FAILED, "mmap: %s", strerror(errno));
	mem = (char *)(((uintptr_t)p + huge - 1) & ~(huge - 1));
	/* Only the aligned part stays: munmap(mem, size) frees it all. */
	if (mem > p)
		munmap(p, mem - p);
	if (mem < p + huge)
		munmap(mem + size, p + huge - mem);
	KT_ASSERT(!madvise(mem, size, MADV_HUGEPAGE), "MADV_HUGEPAGE: %s",
		  strerror(errno));
	memset(mem, fill, size);
	return mem;
}

void kt_share_begin(struct kt_sharer *s)
{
	int pfd[2];
	char c;

	KT_ASSERT(!pipe(pfd), "pipe: %s", strerror(errno));
	s->pid = fork();
	KT_ASSERT(s->pid >= 0, "fork: %s", strerror(errno));
	if (!s->pid) {
		/* Hold the pages, shared, until the parent closes the pipe. */
		close(pfd[1]);
		_exit(read(pfd[0], &c, 1) < 0);
	}
	close(pfd[0]);
	s->fd = pfd[1];
}

void kt_share_end(struct kt_sharer *s)
{
	int status;

	close(s->fd);
	KT_EXPECT(waitpid(s->pid, &status, 0) == s->pid && WIFEXITED(status) &&
		  !WEXITSTATUS(status), "the child that shared the pages is gone");
}

struct kt_vm *kt_vm_on(uint32_t slot, uint64_t gpa, uint64_t size,
		       uint64_t flags, void *host, struct kt_vcpu **vcpu)
{
	struct kt_vm *vm = kt_vm_create();

	kt_vm_add_slot(vm, slot, gpa, size, flags, host);
	*vcpu = kt_vcpu_add(vm, 0);
	kt_touch(*vcpu, gpa, gpa, 0, KT_TOUCH_WRITE);
	return vm;
}

struct kt_vm *kt_vm_populated(uint32_t slot, uint64_t gpa, uint64_t size,
			      int fill, struct kt_vcpu **vcpu)
{
	struct kt_vm *vm = kt_vm_on(slot, gpa, size, 0, NULL, vcpu);

	memset(kt_vm_gpa_to_hva(vm, gpa), fill, size);
	return vm;
}
