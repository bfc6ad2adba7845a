// SPDX-License-Identifier: GPL-2.0
/*
 * bench - the restore benchmark (issue 7), run inside the test VM by
 * "make bench" (kp.mode=bench).
 *
 * Workload, as in the upstream review thread: a guest writes one dword
 * into every 4 KiB page of M MiB, linearly, while a userfaultfd handler
 * thread populates chunks of C bytes on demand with UFFDIO_COPY from a
 * source buffer (see tests/vm/lib/kt_bench.h). For every chunk size and
 * every configuration:
 *
 *   stock       Debian's kvm.ko/kvm-amd.ko (the baseline)
 *   none        ours, policy none
 *   auto-8      ours, auto, nr_pages 8
 *   auto-C      ours, auto, nr_pages C/4KiB (gup nofault)
 *   auto-C-fast ours, auto, nr_pages C/4KiB, gup fast
 *   auto-512    ours, auto, nr_pages 512
 *   async-C     ours, async, nr_pages C/4KiB
 *   manual-C    ours, manual, nr_pages C/4KiB (nothing to do here)
 *   adaptive    ours, adaptive, nr_pages 0: untuned, its own default
 *               window (512); every further registered policy, nr_pages 512
 *
 * and each run also times a second pass over the then populated and
 * mapped memory (the limit). One table per guest mode (modes=, see
 * kvmtest.h): the first (irqchip by default: in-kernel irqchip and
 * interrupts on, as VMMs run guests, so the first fault of a chunk goes
 * through async #PF) is the main table; pv-apf and plain get tables of
 * their own with sec_runs rounds, and so does the zero-copy restore in
 * the main mode (zc=1): the memory is a shared memfd whose page cache
 * holds the snapshot, the handler registers MINOR mode and maps the
 * chunk with UFFDIO_CONTINUE, nothing is copied.
 *
 * Extras, in the main mode: the same pass over memory populated up front
 * (no userfaultfd: the cost of a guest fault and of prefetch per page,
 * gup nofault vs fast), 4 vCPUs on disjoint quarters against 1 vCPU
 * (policies none and auto-C, 64 KiB chunks, M MiB), and random access:
 * the guest writes N distinct pages of small_mib MiB (populated up front)
 * in a random order seeded with the round, under none, auto-8 and
 * adaptive (how much each maps that is never touched).
 *
 * Except for the multi-vCPU variant, the vCPU thread and the handler
 * thread are pinned to one CPU (pin=N, -1: not pinned): a cross-CPU
 * wakeup of the handler costs milliseconds when the TCG-emulated CPUs of
 * the test VM compete for the host's cores, and would swamp everything.
 *
 * Runs are interleaved: in each of the R rounds, for each table and chunk
 * size, the stock case and all of ours run back to back (stock first in
 * odd rounds, ours first in even ones; the modules are swapped in
 * between), so that drift of the host hits both alike. Every run verifies
 * every page; a wrong page is a FAIL line, not a number.
 *
 * Output: one "@@BENCH key=value ..." line per run (parsed on the host by
 * tests/bench/report.py), "# " progress lines, FAIL lines on errors and
 * one PASS line at the end if every run was right.
 *
 * Arguments (key=value): runs=5 mib=64 small_mib=8 small_max=16 (chunks
 * of at most small_max KiB use small_mib MiB, to fit the time budget)
 * chunks=4:8:16:64:512:2048 (KiB) extras=1 (populated, random access and
 * multi-vCPU) multi_vcpus=4 random=512 (0: no random-access runs)
 * stock=1 pin=0 modes=irqchip:pv-apf:plain sec_runs=3 zc=1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "kvmtest.h"
#include "kt_sys.h"
#include "kt_bench.h"

#define MAX_CHUNKS	16
#define MAX_CFGS	24

enum kind { K_UFFD, K_POPULATED, K_MULTI, K_RANDOM };
static const char * const kind_names[] = {
	"uffd", "populated", "multi", "random"
};

struct cfg {
	char id[32];		/* stable label, e.g. auto-C-fast */
	const char *policy;	/* NULL: stock modules */
	int nr;			/* -1: C/4KiB */
	uint32_t gup;
	bool broken;		/* setting the policy failed: skip it */
};

static unsigned int runs = 5, mib = 64, small_mib = 8, small_max = 16;
static unsigned int multi_vcpus = 4;
static unsigned int random_touches = 512;	/* of small_mib MiB */
static int pin = 0;		/* CPU for single-vCPU runs, -1: none */
static bool extras = true, with_stock = true;
static uint64_t chunks[MAX_CHUNKS];
/* Guest modes; the first gets the main table (and the extras). */
static enum kt_guest_mode modes[KT_GUEST_NR_MODES] = { KT_GUEST_IRQCHIP,
	KT_GUEST_PV_APF, KT_GUEST_PLAIN };
static unsigned int nr_modes = 3;
static unsigned int sec_runs = 3;	/* rounds of every other table */
static bool zero_copy = true;		/* the MINOR-mode table */

/* One table: a guest mode and a restore method, for @runs rounds. */
struct table {
	enum kt_guest_mode mode;
	bool minor;
	unsigned int runs;
};
static unsigned int nr_chunks;

static struct cfg cfgs[MAX_CFGS];
static unsigned int nr_cfgs;
static unsigned int nr_runs, nr_bad;
static bool in_child;

static struct cfg *cfg_add(const char *id, const char *policy, int nr,
			   uint32_t gup)
{
	struct cfg *c;

	KT_ASSERT(nr_cfgs < MAX_CFGS, "too many configurations");
	c = &cfgs[nr_cfgs++];
	snprintf(c->id, sizeof(c->id), "%s", id);
	c->policy = policy;
	c->nr = nr;
	c->gup = gup;
	return c;
}

static struct cfg *cfg_find(const char *id)
{
	unsigned int i;

	for (i = 0; i < nr_cfgs; i++)
		if (!strcmp(cfgs[i].id, id))
			return &cfgs[i];
	return NULL;
}

/* Our configurations: the fixed list plus every registered policy. */
static void cfgs_init(void)
{
	const uint32_t nofault = KVM_PREFETCH_GUP_NOFAULT;
	const uint32_t fast = KVM_PREFETCH_GUP_FAST_ONLY;
	char avail[256], *tok, *save, id[32];

	cfg_add("none", "none", 0, 0);
	cfg_add("auto-8", "auto", 8, nofault);
	cfg_add("auto-C", "auto", -1, nofault);
	cfg_add("auto-C-fast", "auto", -1, fast);
	cfg_add("auto-512", "auto", 512, nofault);
	cfg_add("async-C", "async", -1, nofault);
	cfg_add("manual-C", "manual", -1, nofault);
	cfg_add("adaptive", "adaptive", 0, nofault);

	if (ktsys_read_line(KTSYS_P_AVAILABLE, avail, sizeof(avail))) {
		kt_fail("cannot read %s: our modules are not loaded",
			KTSYS_P_AVAILABLE);
		return;
	}
	kt_info("registered policies: %s (+ adaptive, autoloaded)", avail);
	for (tok = strtok_r(avail, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		if (!strcmp(tok, "none") || !strcmp(tok, "manual") ||
		    !strcmp(tok, "async") || !strcmp(tok, "auto") ||
		    !strcmp(tok, "adaptive"))
			continue;
		snprintf(id, sizeof(id), "%s-512", tok);
		cfg_add(id, strdup(tok), 512, nofault);
	}
}

static const char *gup_name(uint32_t gup)
{
	return gup == KVM_PREFETCH_GUP_FAST_ONLY ? "fast" :
	       gup == KVM_PREFETCH_GUP_NOFAULT ? "nofault" : "default";
}

static void print_u64_or_dash(const char *key, bool have, uint64_t v)
{
	if (have)
		printf(" %s=%llu", key, (unsigned long long)v);
	else
		printf(" %s=-", key);
}

/*
 * One run of @c (NULL: stock) and its @@BENCH line; @also is a second
 * label that gets the same numbers (a configuration that is identical to
 * @c at this chunk size) or NULL.
 */
static void run_one(const char *src, const struct table *t, enum kind kind,
		    struct cfg *c, const char *also, uint64_t chunk,
		    unsigned int m, unsigned int vcpus, unsigned int round)
{
	struct ktb_config kc = {
		.policy = c->policy,
		.nr_pages = c->nr < 0 ? chunk / KT_PAGE_SIZE : (uint32_t)c->nr,
		.gup = c->gup,
		.vcpus = vcpus,
		.populated = kind == K_POPULATED,
		.pin = kind != K_MULTI && pin >= 0,
		.cpu = pin,
		.mode = t->mode,
		.minor = t->minor && kind != K_POPULATED && kind != K_RANDOM,
	};
	const char *label;
	struct ktb_result r;
	int ret, pass;

	if (c->broken)
		return;
	/*
	 * The multi-vCPU runs go in a child process: an unexpected vCPU
	 * exit in a worker thread ends the process (library assert); it is
	 * a FAIL of that run, and the benchmark goes on.
	 */
	if (kind == K_MULTI && !in_child) {
		pid_t pid;
		int st;

		fflush(stdout);
		pid = fork();
		KT_ASSERT(pid >= 0, "fork: %s", strerror(errno));
		if (!pid) {
			in_child = true;
			run_one(src, t, kind, c, also, chunk, m, vcpus,
				round);
			fflush(stdout);
			_exit(nr_bad ? 1 : 0);
		}
		KT_ASSERT(waitpid(pid, &st, 0) == pid, "waitpid: %s",
			  strerror(errno));
		nr_runs++;
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			nr_bad++;
			kt_info("%s %s chunk %llu KiB vcpus %u round %u: run failed (see above)",
				kind_names[kind], c->id,
				(unsigned long long)(chunk >> 10), vcpus, round);
		}
		return;
	}
	if (kind == K_RANDOM)
		ret = ktb_run_random(src, (uint64_t)m << 20, random_touches,
				     round, &kc, &r);
	else
		ret = ktb_run(src, (uint64_t)m << 20, chunk, &kc, &r);
	if (ret) {
		kt_fail("%s: KVM_SET_PREFETCH_POLICY %s nr %u gup %s: %s; skipping it",
			c->id, c->policy, kc.nr_pages, gup_name(c->gup),
			strerror(-ret));
		c->broken = true;
		return;
	}
	nr_runs++;
	if (!r.ok) {
		nr_bad++;
		kt_fail("%s %s chunk %llu KiB vcpus %u round %u: %s", kind_names[kind],
			c->id, (unsigned long long)(chunk >> 10), vcpus, round,
			r.err);
	}
	for (pass = 0; pass < (also ? 2 : 1); pass++) {
		label = pass ? also : c->id;
		printf("@@BENCH kind=%s cfg=%s mods=%s policy=%s nr=%u gup=%s chunk=%llu mib=%u vcpus=%u run=%u",
		       kind_names[kind], label, c->policy ? "ours" : "stock",
		       c->policy ? c->policy : "-",
		       c->policy ? kc.nr_pages : 0,
		       c->policy ? gup_name(c->gup) : "-",
		       (unsigned long long)(kind == K_POPULATED ||
					    kind == K_RANDOM ? 0 : chunk),
		       m, vcpus, round);
		printf(" mode=%s restore=%s", kt_guest_mode_str(t->mode),
		       kc.minor ? "zc" : "copy");
		printf(" ms=%.3f limit_ms=%.3f copy_ms=%.3f pages=%llu chunks=%llu events=%llu dup=%llu pf=%llu pf2=%llu",
		       r.ms, r.limit_ms, r.copy_ms, (unsigned long long)r.pages,
		       (unsigned long long)r.chunks,
		       (unsigned long long)r.events,
		       (unsigned long long)r.dup, (unsigned long long)r.pf,
		       (unsigned long long)r.pf2);
		print_u64_or_dash("windows", r.have_prefetch, r.windows);
		print_u64_or_dash("mapped", r.have_prefetch, r.mapped);
		print_u64_or_dash("used", r.have_usage, r.used);
		print_u64_or_dash("unused", r.have_usage, r.unused);
		print_u64_or_dash("untouched", r.have_usage, r.untouched);
		print_u64_or_dash("avoided", r.have_usage, r.avoided);
		printf(" halt_wakeup=%llu apf_np=%llu",
		       (unsigned long long)r.halt_wakeup,
		       (unsigned long long)r.apf_not_present);
		printf(" ok=%d\n", r.ok);
	}
	fflush(stdout);
}

static unsigned int mib_for(uint64_t chunk)
{
	return chunk <= (uint64_t)small_max << 10 ? small_mib : mib;
}

/* The effective (policy, nr, gup) of @c at @chunk, for duplicates. */
static bool cfg_same(const struct cfg *a, const struct cfg *b,
		     uint64_t chunk)
{
	uint32_t na = a->nr < 0 ? chunk / KT_PAGE_SIZE : (uint32_t)a->nr;
	uint32_t nb = b->nr < 0 ? chunk / KT_PAGE_SIZE : (uint32_t)b->nr;

	return a->policy && b->policy && !strcmp(a->policy, b->policy) &&
	       na == nb && a->gup == b->gup;
}

/* All of our uffd cases at one chunk size; identical ones run once. */
static void run_ours_chunk(const char *src, const struct table *t,
			   uint64_t chunk, unsigned int round)
{
	bool done[MAX_CFGS] = { false };
	unsigned int i, j;

	for (i = 0; i < nr_cfgs; i++) {
		const char *also = NULL;

		if (done[i])
			continue;
		for (j = i + 1; j < nr_cfgs; j++) {
			if (!done[j] && cfg_same(&cfgs[i], &cfgs[j], chunk)) {
				also = cfgs[j].id;
				done[j] = true;
				break;
			}
		}
		run_one(src, t, K_UFFD, &cfgs[i], also, chunk, mib_for(chunk),
			1, round);
	}
}

/* The numeric key=value arguments: each into its variable (one of u, i, b). */
static const struct num_arg {
	const char *key;
	unsigned int *u;
	int *i;
	bool *b;
} num_args[] = {
	{ "runs", .u = &runs },
	{ "mib", .u = &mib },
	{ "small_mib", .u = &small_mib },
	{ "small_max", .u = &small_max },
	{ "multi_vcpus", .u = &multi_vcpus },
	{ "random", .u = &random_touches },
	{ "sec_runs", .u = &sec_runs },
	{ "pin", .i = &pin },
	{ "extras", .b = &extras },
	{ "stock", .b = &with_stock },
	{ "zc", .b = &zero_copy },
};

static void parse_args(int argc, char **argv)
{
	static const unsigned int def_chunks[] = { 4, 8, 16, 64, 512, 2048 };
	const struct num_arg *k;
	unsigned int i;
	char *s, *tok, *save;

	for (i = 0; i < sizeof(def_chunks) / sizeof(def_chunks[0]); i++)
		chunks[nr_chunks++] = (uint64_t)def_chunks[i] << 10;

	for (i = 1; i < (unsigned int)argc; i++) {
		char *a = argv[i], *v = strchr(a, '=');

		KT_ASSERT(v, "argument '%s' is not key=value", a);
		*v++ = 0;
		for (k = num_args; k < num_args + ARRAY_SIZE(num_args); k++)
			if (!strcmp(a, k->key))
				break;
		if (k < num_args + ARRAY_SIZE(num_args)) {
			if (k->u)
				*k->u = atoi(v);
			else if (k->i)
				*k->i = atoi(v);
			else
				*k->b = atoi(v);
		} else if (!strcmp(a, "modes")) {
			nr_modes = 0;
			for (tok = strtok_r(v, ":", &save); tok;
			     tok = strtok_r(NULL, ":", &save)) {
				int md = kt_guest_mode_parse(tok);

				KT_ASSERT(md >= 0 && nr_modes < KT_GUEST_NR_MODES,
					  "modes: '%s'", tok);
				modes[nr_modes++] = md;
			}
		} else if (!strcmp(a, "chunks")) {
			nr_chunks = 0;
			s = v;
			for (tok = strtok_r(s, ":", &save); tok;
			     tok = strtok_r(NULL, ":", &save)) {
				KT_ASSERT(nr_chunks < MAX_CHUNKS, "too many chunks");
				chunks[nr_chunks++] = strtoull(tok, NULL, 0) << 10;
			}
		} else {
			KT_ASSERT(0, "unknown argument '%s'", a);
		}
	}
	KT_ASSERT(nr_modes >= 1, "no guest mode");
	KT_ASSERT(runs >= 1 && mib >= 1 && small_mib >= 1 && mib <= 1024 &&
		  small_mib <= 1024 && multi_vcpus >= 1 &&
		  random_touches <= (small_mib << 20) / KT_PAGE_SIZE &&
		  multi_vcpus <= KTB_MAX_VCPUS, "bad arguments");
	for (i = 0; i < nr_chunks; i++)
		KT_ASSERT(chunks[i] >= KT_PAGE_SIZE &&
			  !(chunks[i] & (chunks[i] - 1)) &&
			  chunks[i] <= ((uint64_t)mib_for(chunks[i]) << 20) /
				       multi_vcpus,
			  "chunk %llu KiB: not a power of two or too big",
			  (unsigned long long)(chunks[i] >> 10));
}

/* Chunk sizes of the multi-vCPU variant (those of the matrix only). */
static bool multi_chunk(uint64_t chunk)
{
	return chunk == 64 << 10;
}

/*
 * The multi-vCPU variant: @c with multi_vcpus vCPUs on disjoint parts
 * and, as its reference, with one vCPU; both unpinned (the threads go
 * where the scheduler puts them), so that they compare.
 */
static void run_multi(const char *src, const struct table *t, struct cfg *c,
		      uint64_t chunk, unsigned int round)
{
	run_one(src, t, K_MULTI, c, NULL, chunk, mib, 1, round);
	run_one(src, t, K_MULTI, c, NULL, chunk, mib, multi_vcpus, round);
}

/* Load @which ("stock" or "ours") unless it is what is loaded. */
static void use_modules(const char *which)
{
	static const char *loaded;

	if (loaded && !strcmp(loaded, which))
		return;
	KT_ASSERT(!ktb_swap_modules(which), "kvm-reload %s", which);
	loaded = which;
}

/*
 * ktsys_guard()'s restore cannot unload kvm.ko while a policy module
 * (autoloaded by adaptive) pins it: an outer parent unloads policy
 * modules and restores our modules if the benchmark failed.
 */
static void outer_guard(void)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	KT_ASSERT(pid >= 0, "fork: %s", strerror(errno));
	if (!pid)
		return;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) == KT_EXIT_FAIL) {
		if (ktb_swap_modules("ours"))
			kt_fail("bench: could not restore our modules");
	}
	exit(WIFEXITED(st) ? WEXITSTATUS(st) : KT_EXIT_FAIL);
}

static unsigned int min_u(unsigned int a, unsigned int b)
{
	return a < b ? a : b;
}

/* One round of table @t: per chunk size, stock and ours back to back. */
static void run_round(const char *src, const struct table *t,
		      unsigned int round)
{
	static struct cfg stock = { .id = "stock" };
	unsigned int i, part;

	for (i = 0; i < nr_chunks; i++) {
		/* Stock first in odd rounds, ours first in even. */
		bool stock_first = round % 2;

		for (part = 0; part < 2; part++) {
			if (part == !stock_first) {
				if (!with_stock)
					continue;
				use_modules("stock");
				run_one(src, t, K_UFFD, &stock, NULL, chunks[i],
					mib_for(chunks[i]), 1, round);
			} else {
				use_modules("ours");
				run_ours_chunk(src, t, chunks[i], round);
			}
		}
	}
}

/* Populated memory, random access and multi-vCPU, in @t's guest mode. */
static void run_extras(const char *src, const struct table *t,
		       unsigned int round)
{
	static struct cfg pop_fast = {
		.id = "auto-512-fast", .policy = "auto", .nr = 512,
		.gup = KVM_PREFETCH_GUP_FAST_ONLY,
	};
	unsigned int i;

	run_one(src, t, K_POPULATED, cfg_find("none"), NULL, 0, mib, 1, round);
	run_one(src, t, K_POPULATED, cfg_find("auto-512"), NULL, 0, mib, 1,
		round);
	run_one(src, t, K_POPULATED, &pop_fast, NULL, 0, mib, 1, round);
	/* Random access (seeded with the round). */
	if (random_touches) {
		run_one(src, t, K_RANDOM, cfg_find("none"), NULL, 0, small_mib,
			1, round);
		run_one(src, t, K_RANDOM, cfg_find("auto-8"), NULL, 0,
			small_mib, 1, round);
		run_one(src, t, K_RANDOM, cfg_find("adaptive"), NULL, 0,
			small_mib, 1, round);
	}
	for (i = 0; i < nr_chunks; i++) {
		if (!multi_chunk(chunks[i]))
			continue;
		run_multi(src, t, cfg_find("none"), chunks[i], round);
		run_multi(src, t, cfg_find("auto-C"), chunks[i], round);
	}
}

int main(int argc, char **argv)
{
	struct table tables[KT_GUEST_NR_MODES + 1];
	unsigned int round, i, ti, nr_tables = 0;
	uint64_t big = 0, t_start, t0;
	char *src;

	parse_args(argc, argv);
	kt_require_kvm();
	outer_guard();
	/* Restores "kvm-reload ours" whatever happens. */
	ktsys_guard(3600);
	t_start = kt_now_ns();

	if (ktb_swap_modules("ours")) {
		kt_fail("kvm-reload ours failed");
		return kt_exit();
	}
	cfgs_init();

	for (i = 0; i < nr_chunks; i++)
		if (((uint64_t)mib_for(chunks[i]) << 20) > big)
			big = (uint64_t)mib_for(chunks[i]) << 20;
	src = ktb_src_alloc(big);

	printf("@@BENCHCFG runs=%u sec_runs=%u zc=%d mib=%u small_mib=%u small_max=%u multi_vcpus=%u random=%u extras=%d pin=%d modes=",
	       runs, min_u(sec_runs, runs), zero_copy, mib, small_mib,
	       small_max, multi_vcpus, random_touches, extras, pin);
	for (i = 0; i < nr_modes; i++)
		printf("%s%s", i ? ":" : "", kt_guest_mode_str(modes[i]));
	printf(" chunks=");
	for (i = 0; i < nr_chunks; i++)
		printf("%s%llu", i ? ":" : "",
		       (unsigned long long)(chunks[i] >> 10));
	printf("\n");
	kt_info("bench: %u rounds; %u MiB (%u MiB for chunks <= %u KiB); %u configurations of ours + stock",
		runs, mib, small_mib, small_max, nr_cfgs);

	/* The main table, the zero-copy table, the other guest modes. */
	tables[nr_tables++] = (struct table){ modes[0], false, runs };
	if (zero_copy)
		tables[nr_tables++] = (struct table){ modes[0], true,
						      min_u(sec_runs, runs) };
	for (i = 1; i < nr_modes; i++)
		tables[nr_tables++] = (struct table){ modes[i], false,
						      min_u(sec_runs, runs) };

	for (round = 1; round <= runs; round++) {
		t0 = kt_now_ns();
		for (ti = 0; ti < nr_tables; ti++) {
			const struct table *t = &tables[ti];

			if (round > t->runs)
				continue;
			run_round(src, t, round);
		}
		use_modules("ours");
		if (extras)
			run_extras(src, &tables[0], round);
		kt_info("round %u/%u done in %.1f s (%.0f s so far)",
			round, runs, (kt_now_ns() - t0) / 1e9,
			(kt_now_ns() - t_start) / 1e9);
	}

	if (ktb_swap_modules("ours") || ktsys_restore())
		kt_fail("kvm-reload ours (restore) failed");
	ktb_src_free(src, big);
	if (!nr_bad && nr_runs)
		kt_pass("bench: %u runs, every page of every run verified",
			nr_runs);
	kt_info("bench: %.0f s in the guest", (kt_now_ns() - t_start) / 1e9);
	return kt_exit();
}
