// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_uffd - prefetch on memory populated on demand by userfaultfd.
 *
 * The guest reads 4 MiB of a memslot whose host memory is armed with
 * userfaultfd (MISSING mode, private anonymous memory); a handler thread
 * populates the whole aligned chunk of C bytes around each faulting
 * address with UFFDIO_COPY from a source buffer, as a VMM restoring a
 * snapshot does. For C in 4K, 16K, 64K, 512K, 2M:
 *
 *  - policy auto, nr_pages = C / 4K: the first guest fault of a chunk
 *    raises the one userfaultfd event of that chunk; prefetch then maps
 *    the other C / 4K - 1 pages (already populated by the handler), so
 *    events == chunks, pf_taken == chunks and prefetch_mapped ==
 *    pages - chunks, exactly. Prefetch must never raise an event itself.
 *  - policy none: pf_taken == pages, events == chunks, prefetch_mapped 0.
 *
 * Then windows that do not match the chunk: larger windows reach pages
 * the handler has not populated yet, which prefetch must skip without
 * raising an event (GUP modes nofault and fast); smaller windows take
 * one guest fault per window. In general pf_taken == pages / min(nr, C
 * / 4K), prefetch_mapped == pages - pf_taken, prefetch_windows ==
 * pf_taken, events == chunks. MINOR mode (shared memfd whose page cache
 * is full, UFFDIO_CONTINUE) repeats some of the cases.
 *
 * First, with host threads only: a thread waiting on the part of a chunk
 * after the faulting page, which the handler populates without a wake,
 * is woken through its own event.
 *
 * Every case checks the guest's read checksum against the source, then
 * a guest write pass over the same pages (no new faults: everything was
 * mapped writable) and every byte of host memory page by page.
 *
 * On a kernel without KVM_CAP_PREFETCH_POLICY the policy-none cases run
 * with the kernel's own behaviour (no prefetch) and auto is skipped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "kvmtest.h"
#include "kt_sys.h"
#include "kt_uffd.h"

#define DATA_SLOT	1
#define DATA_GPA	0x400000ULL		/* 4 MiB, 2 MiB aligned */
#define DATA_SIZE	(4ULL << 20)		/* M */
#define DATA_PAGES	(DATA_SIZE / KT_PAGE_SIZE)
#define HOST_ALIGN	(2ULL << 20)		/* hva aligned like the gpa */

static bool have_policy;
static char *src;

/* Dword 0 of source page @i: distinct, never 0, not the page's gpa. */
static uint32_t src_tag(uint64_t i)
{
	return 0x9e3779b9u * (uint32_t)(i + 1) | 1;
}

static void fill_src(void)
{
	uint64_t i, j;

	src = mmap(NULL, DATA_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	KT_ASSERT(src != MAP_FAILED, "mmap: %s", strerror(errno));
	for (i = 0; i < DATA_PAGES; i++) {
		uint32_t *p = (uint32_t *)(src + i * KT_PAGE_SIZE);

		p[0] = src_tag(i);
		for (j = 1; j < KT_PAGE_SIZE / 4; j++)
			p[j] = (uint32_t)(i * 0x10001 + j * 0x3b);
	}
}

/* One case (see run_case()) and what its read pass must give. */
struct uffd_case {
	char what[80];		/* the case, for messages */
	uint64_t chunks;	/* chunks of the slot: events, populated */
	uint64_t step;		/* pages per guest fault */
	uint64_t want_pf;	/* guest faults of the read pass */
	bool prefetch;		/* policy auto with a window > 1 */
	struct kt_vm *vm;
	struct kt_vcpu *vcpu;
	struct kt_uffd *u;
	char *mem;		/* the armed host memory of the slot */
	uint64_t pf;		/* pf_taken after the read pass */
};

/*
 * A fresh VM with @policy (NULL: leave the kernel's default), the data
 * slot on memory armed with a handler of @chunk bytes in @mode, and a
 * vCPU that has run once (so the code page is mapped).
 */
static void case_setup(struct uffd_case *c, enum kt_uffd_mode mode,
		       uint64_t chunk, const char *policy, uint32_t nr,
		       uint32_t gup)
{
	uint64_t chunk_pages = chunk / KT_PAGE_SIZE;
	int r;

	snprintf(c->what, sizeof(c->what), "%s %lluK %s nr %u%s",
		 mode == KT_UFFD_MINOR ? "minor" : "missing",
		 (unsigned long long)(chunk >> 10), policy ? policy : "stock",
		 nr, gup == KVM_PREFETCH_GUP_FAST_ONLY ? " gup fast" : "");
	c->chunks = DATA_SIZE / chunk;
	c->prefetch = policy && (!strcmp(policy, "auto") ||
				 !strcmp(policy, "bpf_auto")) && nr > 1;

	/*
	 * The guest faults at the first page of every step-page block: at a
	 * chunk start (one event, the handler populates the chunk) or, if
	 * the window is smaller than a chunk, at a window start of a chunk
	 * already populated. Prefetch maps the rest of each window that is
	 * populated; pages of later chunks are not, and must be skipped
	 * without an event.
	 */
	c->step = !c->prefetch ? 1 : nr < chunk_pages ? nr : chunk_pages;
	c->want_pf = DATA_PAGES / c->step;

	c->vm = kt_vm_create();
	if (policy) {
		r = ktsys_set_policy(c->vm->fd, policy, nr, gup);
		KT_ASSERT(!r, "KVM_SET_PREFETCH_POLICY %s nr %u gup %u: %s",
			  policy, nr, gup, strerror(-r));
	}
	if (mode == KT_UFFD_MINOR)
		c->u = kt_uffd_create_minor(DATA_SIZE, HOST_ALIGN, src, chunk);
	else
		c->u = kt_uffd_create_alloc(DATA_SIZE, HOST_ALIGN, src, chunk);
	c->mem = kt_uffd_base(c->u);
	kt_vm_add_slot(c->vm, DATA_SLOT, DATA_GPA, DATA_SIZE, 0, c->mem);
	c->vcpu = kt_vcpu_add(c->vm, 0);

	/* Fault the code page in first: an empty pass. */
	kt_touch(c->vcpu, DATA_GPA, DATA_GPA, 0, KT_TOUCH_READ);
	KT_ASSERT(kt_uffd_events(c->u) == 0, "events before the pass: %llu",
		  (unsigned long long)kt_uffd_events(c->u));
}

/*
 * The guest reads every page once: one event per chunk, want_pf guest
 * faults, the rest mapped by prefetch, one window per guest fault.
 */
static void check_read_pass(struct uffd_case *c)
{
	uint64_t pf0, m0 = 0, m1 = 0, w0 = 0, w1 = 0, t0, t1, i;
	uint32_t sum, want_sum = 0;
	struct kt_uffd *u = c->u;
	const char *what = c->what;
	bool have_stats;

	have_stats = !kt_vcpu_stat(c->vcpu, "prefetch_mapped", &m0) &&
		     !kt_vcpu_stat(c->vcpu, "prefetch_windows", &w0);
	pf0 = kt_vcpu_stat_get(c->vcpu, "pf_taken");

	t0 = kt_now_ns();
	sum = kt_touch(c->vcpu, DATA_GPA, DATA_GPA + DATA_SIZE, 0,
		       KT_TOUCH_READ);
	t1 = kt_now_ns();

	c->pf = kt_vcpu_stat_get(c->vcpu, "pf_taken");
	KT_EXPECT(kt_uffd_quiesce(u, 5000), "%s: handler idle after the pass", what);
	if (have_stats) {
		m1 = kt_vcpu_stat_get(c->vcpu, "prefetch_mapped");
		w1 = kt_vcpu_stat_get(c->vcpu, "prefetch_windows");
	}
	for (i = 0; i < DATA_PAGES; i++)
		want_sum += src_tag(i);

	kt_info("%-30s: events %4llu (dup %llu) pf_taken %4llu prefetch_mapped %4llu windows %4llu  %6.1f ms",
		what, (unsigned long long)kt_uffd_events(u),
		(unsigned long long)kt_uffd_eexist(u),
		(unsigned long long)(c->pf - pf0),
		(unsigned long long)(m1 - m0),
		(unsigned long long)(w1 - w0), (t1 - t0) / 1e6);

	KT_EXPECT(sum == want_sum, "%s: guest read checksum 0x%x, want 0x%x",
		  what, sum, want_sum);
	KT_EXPECT(kt_uffd_events(u) == c->chunks &&
		  kt_uffd_populated(u) == c->chunks,
		  "%s: %llu userfaultfd events, %llu chunks populated, want %llu each",
		  what, (unsigned long long)kt_uffd_events(u),
		  (unsigned long long)kt_uffd_populated(u),
		  (unsigned long long)c->chunks);
	KT_EXPECT(!kt_uffd_errors(u), "%s: handler errors %llu", what,
		  (unsigned long long)kt_uffd_errors(u));
	KT_EXPECT(c->pf - pf0 == c->want_pf,
		  "%s: pf_taken +%llu, want %llu (one per %llu pages)", what,
		  (unsigned long long)(c->pf - pf0),
		  (unsigned long long)c->want_pf, (unsigned long long)c->step);
	if (have_stats) {
		KT_EXPECT(m1 - m0 == DATA_PAGES - c->want_pf,
			  "%s: prefetch_mapped +%llu, want %llu", what,
			  (unsigned long long)(m1 - m0),
			  (unsigned long long)(DATA_PAGES - c->want_pf));
		if (c->prefetch)
			KT_EXPECT(w1 - w0 == c->want_pf,
				  "%s: prefetch_windows +%llu, want %llu (one per guest fault)",
				  what, (unsigned long long)(w1 - w0),
				  (unsigned long long)c->want_pf);
	}
}

/* Write pass: all pages are mapped (writable): no fault, no event. */
static void check_write_pass(struct uffd_case *c)
{
	uint64_t pf2;

	kt_touch(c->vcpu, DATA_GPA, DATA_GPA + DATA_SIZE, 0, KT_TOUCH_WRITE);
	pf2 = kt_vcpu_stat_get(c->vcpu, "pf_taken");
	kt_uffd_quiesce(c->u, 5000);
	KT_EXPECT(pf2 == c->pf && kt_uffd_events(c->u) == c->chunks,
		  "%s: write pass took %llu faults and %llu new events, want 0",
		  c->what, (unsigned long long)(pf2 - c->pf),
		  (unsigned long long)(kt_uffd_events(c->u) - c->chunks));
}

/* Host view: dword 0 is what the guest wrote, the rest the source. */
static void check_host_memory(struct uffd_case *c)
{
	uint64_t bad = 0, i;

	for (i = 0; i < DATA_PAGES; i++) {
		char *p = c->mem + i * KT_PAGE_SIZE, *s = src + i * KT_PAGE_SIZE;

		if (*(uint32_t *)p != (uint32_t)(DATA_GPA + i * KT_PAGE_SIZE) ||
		    memcmp(p + 4, s + 4, KT_PAGE_SIZE - 4)) {
			if (!bad++)
				kt_info("page %llu (gpa 0x%llx): dword0 0x%x",
					(unsigned long long)i,
					(unsigned long long)(DATA_GPA + i * KT_PAGE_SIZE),
					*(uint32_t *)p);
		}
	}
	KT_EXPECT(!bad, "%s: host memory of all %llu pages right (%llu wrong)",
		  c->what, (unsigned long long)DATA_PAGES,
		  (unsigned long long)bad);
}

/*
 * One case: a fresh VM, the data slot armed with a handler of @chunk
 * bytes, policy @policy (NULL: leave the kernel's default, used only
 * when the kernel has no policies) with window @nr and GUP mode @gup.
 */
static void run_case(enum kt_uffd_mode mode, uint64_t chunk,
		     const char *policy, uint32_t nr, uint32_t gup)
{
	struct uffd_case c;

	memset(&c, 0, sizeof(c));
	case_setup(&c, mode, chunk, policy, nr, gup);
	check_read_pass(&c);
	check_write_pass(&c);
	check_host_memory(&c);

	kt_vcpu_free(c.vcpu);
	kt_vm_free(c.vm);
	kt_uffd_destroy(c.u);
}

struct waiter {
	const volatile uint32_t *addr;
	uint32_t val;
	pid_t tid;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	__atomic_store_n(&w->tid, syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	w->val = *w->addr;
	return NULL;
}

/* Is thread @tid asleep in handle_userfault()? */
static bool in_userfault(pid_t tid)
{
	char path[64], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return !strcmp(buf, "handle_userfault");
}

/*
 * The handler (kt_uffd) populates the part of a chunk after the faulting
 * page without waking anybody: a second thread waiting on that part must
 * be woken through its own event (EEXIST, UFFDIO_WAKE). Host threads
 * only, no KVM: thread A faults on page 0 of a 64 KiB chunk while the
 * gate holds the handler, thread B on page 5; then the gate opens. Both
 * must finish, with the source's values, after one populate and two
 * events.
 */
static void test_tail_waiter(enum kt_uffd_mode mode)
{
	const char *what = mode == KT_UFFD_MINOR ? "minor" : "missing";
	const size_t chunk = 64 << 10, size = 2 * chunk;
	struct waiter a = { 0 }, b = { 0 };
	pthread_t ta, tb;
	struct kt_uffd *u;
	unsigned int i;
	char *base;
	bool ok_a, ok_b;

	u = mode == KT_UFFD_MINOR ?
		kt_uffd_create_minor(size, chunk, src, chunk) :
		kt_uffd_create_alloc(size, chunk, src, chunk);
	base = kt_uffd_base(u);
	a.addr = (const volatile uint32_t *)base;
	b.addr = (const volatile uint32_t *)(base + 5 * KT_PAGE_SIZE);

	kt_uffd_gate_close(u);
	KT_ASSERT(!pthread_create(&ta, NULL, waiter_fn, &a), "pthread_create");
	KT_ASSERT(kt_uffd_wait_events(u, 1, 10000),
		  "tail waiter %s: no event for thread A", what);
	KT_ASSERT(!pthread_create(&tb, NULL, waiter_fn, &b), "pthread_create");
	for (i = 0; i < 1000; i++) {
		pid_t tid = __atomic_load_n(&b.tid, __ATOMIC_SEQ_CST);

		if (tid && in_userfault(tid))
			break;
		usleep(10000);
	}
	KT_ASSERT(i < 1000, "tail waiter %s: thread B not waiting in handle_userfault after 10 s",
		  what);
	kt_uffd_gate_open(u);

	ok_a = kt_join_within(ta, 10);
	ok_b = kt_join_within(tb, 10);
	KT_EXPECT(ok_a && ok_b,
		  "tail waiter %s: thread on the faulting page %s, thread on the chunk's tail %s",
		  what, ok_a ? "woken" : "still waiting after 10 s",
		  ok_b ? "woken" : "still waiting after 10 s");
	if (!ok_a || !ok_b) {
		/* Let them go, so that the program can end. */
		struct uffdio_range r = { (uintptr_t)base, size };

		ioctl(u->uffd, UFFDIO_WAKE, &r);
		if (!ok_a)
			pthread_join(ta, NULL);
		if (!ok_b)
			pthread_join(tb, NULL);
	}
	KT_EXPECT(a.val == *(uint32_t *)src &&
		  b.val == *(uint32_t *)(src + 5 * KT_PAGE_SIZE),
		  "tail waiter %s: values read 0x%x 0x%x, want the source's",
		  what, a.val, b.val);
	KT_EXPECT(kt_uffd_quiesce(u, 10000) && kt_uffd_events(u) == 2 &&
		  kt_uffd_populated(u) == 1 &&
		  kt_uffd_eexist(u) == chunk / KT_PAGE_SIZE &&
		  !kt_uffd_errors(u),
		  "tail waiter %s: %llu events, %llu chunks populated, %llu EEXIST, %llu errors; want 2, 1, %llu, 0",
		  what, (unsigned long long)kt_uffd_events(u),
		  (unsigned long long)kt_uffd_populated(u),
		  (unsigned long long)kt_uffd_eexist(u),
		  (unsigned long long)kt_uffd_errors(u),
		  (unsigned long long)(chunk / KT_PAGE_SIZE));
	kt_uffd_destroy(u);
}

/*
 * The BPF port of auto (kvm-policy/bpf/auto.bpf.c, 6.12 base only) must
 * restore as auto does: one guest fault per chunk.
 */
static void test_bpf_auto(void)
{
	static const uint64_t bchunks[] = { 64 << 10, 512 << 10, 2 << 20 };
	unsigned int i;

	if (access("/bpf/auto.bpf.o", F_OK) ||
	    access("/bin/kvm-prefetch", X_OK)) {
		kt_info("no BPF policies on this base: bpf_auto cases not run");
		return;
	}
	if (system("kvm-prefetch bpf load /bpf/auto.bpf.o >/dev/null")) {
		kt_fail("kvm-prefetch bpf load /bpf/auto.bpf.o");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(bchunks); i++)
		run_case(KT_UFFD_MISSING, bchunks[i], "bpf_auto",
			 bchunks[i] / KT_PAGE_SIZE, KVM_PREFETCH_GUP_NOFAULT);
	run_case(KT_UFFD_MINOR, 512 << 10, "bpf_auto", 128,
		 KVM_PREFETCH_GUP_NOFAULT);
	KT_EXPECT(system("kvm-prefetch bpf unload bpf_auto >/dev/null") == 0,
		  "kvm-prefetch bpf unload bpf_auto");
}

int main(void)
{
	static const uint64_t chunks[] = {
		4 << 10, 16 << 10, 64 << 10, 512 << 10, 2 << 20,
	};
	const uint32_t nofault = KVM_PREFETCH_GUP_NOFAULT;
	const uint32_t fast = KVM_PREFETCH_GUP_FAST_ONLY;
	struct kt_vm *vm;
	unsigned int i;
	int cap;

	kt_require_kvm();
	fill_src();

	vm = kt_vm_create();
	cap = kt_vm_check_ext(vm, KVM_CAP_PREFETCH_POLICY);
	have_policy = cap > 0;
	kt_vm_free(vm);
	kt_info("KVM_CAP_PREFETCH_POLICY = %d; memslot %llu KiB, %llu pages",
		cap, (unsigned long long)(DATA_SIZE >> 10),
		(unsigned long long)DATA_PAGES);

	test_tail_waiter(KT_UFFD_MISSING);
	test_tail_waiter(KT_UFFD_MINOR);

	for (i = 0; i < ARRAY_SIZE(chunks); i++) {
		uint32_t nr = chunks[i] / KT_PAGE_SIZE;

		if (have_policy) {
			run_case(KT_UFFD_MISSING, chunks[i], "auto", nr, nofault);
			run_case(KT_UFFD_MISSING, chunks[i], "none", nr, nofault);
		} else {
			run_case(KT_UFFD_MISSING, chunks[i], NULL, nr, nofault);
		}
	}
	if (!have_policy) {
		run_case(KT_UFFD_MINOR, 64 << 10, NULL, 16, nofault);
		kt_skip("no KVM_CAP_PREFETCH_POLICY: policy auto cases not run");
		goto out;
	}
	/*
	 * Windows larger than the chunk reach pages the handler has not
	 * populated yet: prefetch must skip them without an event (with
	 * either GUP mode). Windows smaller than the chunk: one guest fault
	 * per window.
	 */
	run_case(KT_UFFD_MISSING, 64 << 10, "auto", 64, nofault);
	run_case(KT_UFFD_MISSING, 16 << 10, "auto", 512, nofault);
	run_case(KT_UFFD_MISSING, 64 << 10, "auto", 64, fast);
	run_case(KT_UFFD_MISSING, 64 << 10, "auto", 16, fast);
	run_case(KT_UFFD_MISSING, 512 << 10, "auto", 32, nofault);
	/* MINOR mode: shared memfd, page cache full, UFFDIO_CONTINUE. */
	run_case(KT_UFFD_MINOR, 64 << 10, "auto", 16, nofault);
	run_case(KT_UFFD_MINOR, 64 << 10, "auto", 64, nofault);
	run_case(KT_UFFD_MINOR, 64 << 10, "none", 16, nofault);
	test_bpf_auto();
out:
	munmap(src, DATA_SIZE);
	return kt_exit();
}
