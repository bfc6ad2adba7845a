// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_usage - every prefetched page accounted for: the VM stats
 * prefetch_used, prefetch_unused, prefetch_avoided and prefetch_untouched
 * and the debugfs file prefetch_usage, on a deterministic pattern, with
 * each engine.
 *
 * 8 MiB of populated 4 KiB host pages; policy auto, window 16.  The guest
 *  1. reads page 0 of each 16-page block: 128 guest faults, 128 windows
 *     of 15 pages: 1,920 pages prefetched, none used yet (untouched);
 *  2. writes page 1 and reads page 2 of each block: no fault; 256 pages
 *     used, 256 faults avoided, 1,664 untouched;
 *  3. (a second run) the guest reads page 4 of each block of the first
 *     half, then the host ages the first half's SPTEs (MADV_PAGEOUT:
 *     reclaim's reference check clears their Accessed bits): page 4 is
 *     counted used by aging, or never, since the next read of the stats
 *     finds its SPTE no longer accessed; then the guest reads page 3
 *     there: 64 more used;
 *  4. the memslot is deleted: its SPTEs are zapped, every page still
 *     untouched is counted unused.
 * The counts are exact at each step, precision = used / (used + unused)
 * and coverage = avoided / (avoided + guest faults) are checked in the
 * debugfs line, and a VM with none counts nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define ENGINE_PATH	"/sys/module/kvm/parameters/prefetch_engine"
#define SLOT		1
#define GPA		0x40000000ULL
#define SIZE		(8ULL << 20)
#define PAGES		(SIZE / KT_PAGE_SIZE)
#define NR		16			/* the window */
#define BLOCKS		(PAGES / NR)

static const char *const engines[] = { "fault", "batch" };

struct usage {
	uint64_t used, unused, avoided, untouched;
};

static struct usage usage_read(struct kt_vm *vm)
{
	struct usage u;

	KT_ASSERT(!kt_vm_stat(vm, "prefetch_used", &u.used) &&
		  !kt_vm_stat(vm, "prefetch_unused", &u.unused) &&
		  !kt_vm_stat(vm, "prefetch_avoided", &u.avoided) &&
		  !kt_vm_stat(vm, "prefetch_untouched", &u.untouched),
		  "read the VM's prefetch usage stats");
	return u;
}

static void usage_expect(const char *what, const struct usage *u,
			 uint64_t used, uint64_t unused, uint64_t avoided,
			 uint64_t untouched)
{
	kt_info("%s: used %llu unused %llu avoided %llu untouched %llu",
		what, (unsigned long long)u->used,
		(unsigned long long)u->unused,
		(unsigned long long)u->avoided,
		(unsigned long long)u->untouched);
	KT_EXPECT(u->used == used && u->unused == unused &&
		  u->avoided == avoided && u->untouched == untouched,
		  "%s: used %llu unused %llu avoided %llu untouched %llu",
		  what, (unsigned long long)used, (unsigned long long)unused,
		  (unsigned long long)avoided,
		  (unsigned long long)untouched);
}

/*
 * Age the SPTEs of [@mem, @mem + @size): MADV_PAGEOUT sends the pages to
 * reclaim, whose reference check clears the Accessed bits of the SPTEs
 * mapping them (the MMU notifier's clear_flush_young).  The test VM has
 * no swap, so the pages stay, and so do the SPTEs.
 */
static int age(char *mem, uint64_t size)
{
	return madvise(mem, size, MADV_PAGEOUT) ? -errno : 0;
}

/* The debugfs line's field @key as text, or "" if it has none. */
static void debugfs_field(const char *line, const char *key, char *out,
			  size_t len)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	if (!p && !strncmp(line, pat + 1, strlen(pat + 1)))
		p = line - 1;
	out[0] = 0;
	if (p)
		sscanf(p + strlen(pat), "%31s", out);
	(void)len;
}

/* The debugfs file's ratio: per mille, truncated, as "13.3%"; "-" for 0/0. */
static void ratio_str(uint64_t num, uint64_t den, char *buf, size_t len)
{
	uint64_t pm = den ? num * 1000 / den : 0;

	if (!den)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%llu.%llu%%", (unsigned long long)(pm / 10),
			 (unsigned long long)(pm % 10));
}

/*
 * The debugfs line agrees with the stats: precision = used / (used +
 * unused), coverage = avoided / (avoided + the vCPU's pf_fixed).
 */
static void check_debugfs(struct kt_vm *vm, struct kt_vcpu *vcpu,
			  const struct usage *u)
{
	char dir[256], path[300], line[512], v[32], want[32];
	uint64_t faults = kt_vcpu_stat_get(vcpu, "pf_fixed");
	int r = ktsys_vm_debugfs_dir(vm->fd, dir, sizeof(dir));

	if (r) {
		kt_skip("no debugfs directory for the VM (%d)", r);
		return;
	}
	snprintf(path, sizeof(path), "%s/prefetch_usage", dir);
	r = ktsys_read_line(path, line, sizeof(line));
	KT_ASSERT(!r, "read %s (%d)", path, r);
	kt_info("debugfs: %s", line);
	debugfs_field(line, "faults", v, sizeof(v));
	KT_EXPECT(strtoull(v, NULL, 10) == faults,
		  "debugfs: faults=%llu (%s)", (unsigned long long)faults, v);
	debugfs_field(line, "used", v, sizeof(v));
	KT_EXPECT(strtoull(v, NULL, 10) == u->used,
		  "debugfs: used=%llu (%s)", (unsigned long long)u->used, v);
	ratio_str(u->used, u->used + u->unused, want, sizeof(want));
	debugfs_field(line, "precision", v, sizeof(v));
	KT_EXPECT(!strcmp(v, want), "debugfs: precision=%s (%s)", want, v);
	ratio_str(u->avoided, u->avoided + faults, want, sizeof(want));
	debugfs_field(line, "coverage", v, sizeof(v));
	KT_EXPECT(!strcmp(v, want), "debugfs: coverage=%s (%s)", want, v);
}

static void run(const char *engine, bool aging)
{
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	struct usage u;
	int r;
	uint64_t pf0, pf, windows, mapped;
	uint64_t used, unused, untouched;
	char what[64];
	char *mem;

	ktsys_set_engine(engine);
	vm = kt_vm_populated(SLOT, GPA, SIZE, 0, &vcpu);
	mem = kt_vm_gpa_to_hva(vm, GPA);
	KT_ASSERT(!ktsys_set_policy(vm->fd, "auto", NR,
				    KVM_PREFETCH_GUP_NOFAULT), "SET auto");
	pf0 = kt_vcpu_stat_get(vcpu, "pf_fixed");
	u = usage_read(vm);
	snprintf(what, sizeof(what), "%s: before", engine);
	usage_expect(what, &u, 0, 0, 0, 0);

	kt_touch(vcpu, GPA, GPA + SIZE, NR * KT_PAGE_SIZE, KT_TOUCH_READ);
	pf = kt_vcpu_stat_get(vcpu, "pf_fixed") - pf0;
	windows = kt_vcpu_stat_get(vcpu, "prefetch_windows");
	mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	KT_EXPECT(pf == BLOCKS && windows == BLOCKS &&
		  mapped == BLOCKS * (NR - 1),
		  "%s: %llu faults, %llu windows, %llu pages prefetched",
		  engine, (unsigned long long)pf,
		  (unsigned long long)windows, (unsigned long long)mapped);
	u = usage_read(vm);
	snprintf(what, sizeof(what), "%s: after the faults", engine);
	usage_expect(what, &u, 0, 0, 0, mapped);

	kt_touch(vcpu, GPA + KT_PAGE_SIZE, GPA + SIZE, NR * KT_PAGE_SIZE,
		 KT_TOUCH_WRITE);
	kt_touch(vcpu, GPA + 2 * KT_PAGE_SIZE, GPA + SIZE, NR * KT_PAGE_SIZE,
		 KT_TOUCH_READ);
	KT_EXPECT(kt_vcpu_stat_get(vcpu, "pf_fixed") - pf0 == BLOCKS,
		  "%s: pages 1 and 2 of each block take no fault", engine);
	used = 2 * BLOCKS;
	untouched = mapped - used;
	u = usage_read(vm);
	snprintf(what, sizeof(what), "%s: pages 1 and 2 used", engine);
	usage_expect(what, &u, used, 0, used, untouched);
	/* A second read harvests nothing new. */
	u = usage_read(vm);
	snprintf(what, sizeof(what), "%s: read again", engine);
	usage_expect(what, &u, used, 0, used, untouched);

	if (aging) {
		/*
		 * Use page 4 of the first half before aging, without a
		 * read of the stats in between: only the aging hook can
		 * count it, as aging clears the Accessed bit.
		 */
		kt_touch(vcpu, GPA + 4 * KT_PAGE_SIZE, GPA + SIZE / 2,
			 NR * KT_PAGE_SIZE, KT_TOUCH_READ);
		r = age(mem, SIZE / 2);
		KT_ASSERT(!r, "MADV_PAGEOUT of the first half: %s",
			  strerror(-r));
		used += BLOCKS / 2;
		untouched -= BLOCKS / 2;
		u = usage_read(vm);
		snprintf(what, sizeof(what), "%s: page 4 used, then aged",
			 engine);
		usage_expect(what, &u, used, 0, used, untouched);
		/* Page 3 of the first half, after aging. */
		kt_touch(vcpu, GPA + 3 * KT_PAGE_SIZE, GPA + SIZE / 2,
			 NR * KT_PAGE_SIZE, KT_TOUCH_READ);
		used += BLOCKS / 2;
		untouched -= BLOCKS / 2;
		u = usage_read(vm);
		snprintf(what, sizeof(what), "%s: page 3 used after aging",
			 engine);
		usage_expect(what, &u, used, 0, used, untouched);
	}
	if (!aging)
		check_debugfs(vm, vcpu, &u);

	kt_vm_delete_slot(vm, SLOT);
	unused = untouched;
	u = usage_read(vm);
	snprintf(what, sizeof(what), "%s: memslot deleted", engine);
	usage_expect(what, &u, used, unused, used, 0);
	if (!aging)
		check_debugfs(vm, vcpu, &u);
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

/* A VM with none counts nothing, and the stats exist at 0. */
static void run_none(void)
{
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	struct usage u;

	vm = kt_vm_populated(SLOT, GPA, SIZE, 0, &vcpu);
	KT_ASSERT(!ktsys_set_policy(vm->fd, "none", 0, 0), "SET none");
	kt_touch(vcpu, GPA, GPA + SIZE, NR * KT_PAGE_SIZE, KT_TOUCH_READ);
	kt_vm_delete_slot(vm, SLOT);
	u = usage_read(vm);
	usage_expect("none", &u, 0, 0, 0, 0);
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

int main(void)
{
	char engine[32] = "";
	uint64_t v;
	int e;

	kt_require_kvm();
	ktsys_require_prefetch();
	{
		struct kt_vcpu *vcpu;
		struct kt_vm *vm = kt_vm_populated(SLOT, GPA, 1 << 20, 0, &vcpu);
		int r = kt_vm_stat(vm, "prefetch_used", &v);

		kt_vcpu_free(vcpu);
		kt_vm_free(vm);
		if (r == -ENOENT) {
			kt_skip("this kernel's KVM has no prefetch usage stats");
			return kt_exit();
		}
	}
	KT_REQUIRE(!ktsys_read_line(ENGINE_PATH, engine, sizeof(engine)),
		   "no %s", ENGINE_PATH);
	run_none();
	for (e = 0; e < 2; e++) {
		run(engines[e], false);
		run(engines[e], true);
	}
	KT_ASSERT(!ktsys_write(ENGINE_PATH, engine), "restore prefetch_engine");
	return kt_exit();
}
