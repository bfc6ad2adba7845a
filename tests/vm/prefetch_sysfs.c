// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_sysfs - the kvm.ko prefetch defaults in sysfs.
 *
 * /sys/module/kvm/parameters/prefetch_{policy,nr_pages,gup,available}:
 *  - prefetch_available lists exactly the built-in policies, one line;
 *  - after a fresh "kvm-reload ours" the defaults are none / 8 / nofault:
 *    prefetch is opt-in, kvm.ko without parameters behaves as stock;
 *  - every malformed or out-of-range write fails with the documented errno
 *    (unknown well-formed name: ENOENT, anything else: EINVAL) and leaves
 *    the value unchanged; valid writes round-trip, bounds included;
 *  - a VM takes the defaults at creation (KVM_GET_PREFETCH_POLICY and its
 *    debugfs line); changing a default never changes an existing VM;
 *  - "kvm-reload ours prefetch_policy=bogus" loads, falls back to none and
 *    logs exactly one warning naming both "bogus" and "none".
 * Ends with "kvm-reload ours" (default parameters).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "kvmtest.h"
#include "kt_sys.h"

struct bad_write {
	const char *path;
	const char *val;
	int err;		/* expected errno */
	const char *why;
};

static const struct bad_write bad_writes[] = {
	{ KTSYS_P_POLICY, "bogus", ENOENT, "unregistered name" },
	{ KTSYS_P_POLICY, "bogus\n", ENOENT, "unregistered name + newline" },
	{ KTSYS_P_POLICY, "abcdefghijklmno", ENOENT, "unregistered 15-char name" },
	{ KTSYS_P_POLICY, "my-pol_9", ENOENT, "unregistered name with - _ digit" },
	{ KTSYS_P_POLICY, "\n", EINVAL, "empty name (newline only)" },
	{ KTSYS_P_POLICY, "abcdefghijklmnop", EINVAL, "16-char name" },
	{ KTSYS_P_POLICY, "abcdefghijklmnopqrstuvwxyz", EINVAL, "26-char name" },
	{ KTSYS_P_POLICY, "AUTO", EINVAL, "uppercase" },
	{ KTSYS_P_POLICY, "Auto", EINVAL, "mixed case" },
	{ KTSYS_P_POLICY, "a b", EINVAL, "embedded space" },
	{ KTSYS_P_POLICY, "au.to", EINVAL, "dot" },
	{ KTSYS_P_POLICY, "auto!", EINVAL, "punctuation" },
	{ KTSYS_P_NR_PAGES, "262145", EINVAL, "max + 1" },
	{ KTSYS_P_NR_PAGES, "1000000", EINVAL, "far above max" },
	{ KTSYS_P_NR_PAGES, "-1", EINVAL, "negative" },
	{ KTSYS_P_NR_PAGES, "abc", EINVAL, "not a number" },
	{ KTSYS_P_NR_PAGES, "8x", EINVAL, "trailing garbage" },
	{ KTSYS_P_NR_PAGES, "\n", EINVAL, "empty (newline only)" },
	{ KTSYS_P_GUP, "slow", EINVAL, "unknown mode" },
	{ KTSYS_P_GUP, "FAST", EINVAL, "uppercase mode" },
	{ KTSYS_P_GUP, "\n", EINVAL, "empty (newline only)" },
};

/*
 * Valid writes, in this order; each must read back as written, without
 * its trailing newline.
 */
static const struct good_writes {
	const char *path;
	const char *vals[6];	/* NULL-terminated */
} good_writes[] = {
	{ KTSYS_P_POLICY, { "none", "manual\n", "async", "auto\n" } },
	{ KTSYS_P_NR_PAGES, { "0", "1\n", "262144", "512\n", "8" } },
	{ KTSYS_P_GUP, { "fast", "nofault\n", "fast\n", "nofault" } },
};

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Printable form of a written value (newlines as \n). */
static const char *show(const char *val)
{
	static char buf[128];
	size_t i, o = 0;

	for (i = 0; val[i] && o < sizeof(buf) - 3; i++) {
		if (val[i] == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = val[i];
		}
	}
	buf[o] = '\0';
	return buf;
}

static bool expect_file(const char *path, const char *want)
{
	char buf[256];
	int r = ktsys_read_line(path, buf, sizeof(buf));

	if (r) {
		kt_fail("read %s: %s", path, strerror(-r));
		return false;
	}
	return KT_EXPECT(!strcmp(buf, want), "%s reads \"%s\" (want \"%s\")",
			 base(path), buf, want);
}

/* The three defaults read back as @policy, @nr_pages and @gup. */
static void expect_defaults(const char *policy, const char *nr_pages,
			    const char *gup)
{
	expect_file(KTSYS_P_POLICY, policy);
	expect_file(KTSYS_P_NR_PAGES, nr_pages);
	expect_file(KTSYS_P_GUP, gup);
}

static void check_mode(const char *path, mode_t want)
{
	struct stat sb;

	if (stat(path, &sb)) {
		kt_fail("stat %s: %s", path, strerror(errno));
		return;
	}
	KT_EXPECT((sb.st_mode & 07777) == want, "%s mode %04o (want %04o)",
		  base(path), sb.st_mode & 07777, want);
}

static void check_available(void)
{
	/* replay: where KVM records and replays (x86), see prefetch_replay. */
	static const char * const builtins[] = { "none", "manual", "async",
						 "auto", "replay" };
	char buf[512], copy[512], *tok, *save;
	bool seen[5] = { false };
	int n, i, ntok = 0, dup = 0, unknown = 0, r;

	n = ktsys_read(KTSYS_P_AVAILABLE, buf, sizeof(buf));
	KT_ASSERT(n > 0, "read %s: %d", KTSYS_P_AVAILABLE, n);
	kt_info("prefetch_available: \"%s\"", show(buf));
	KT_EXPECT(buf[n - 1] == '\n' && !strchr(buf, '\n')[1] &&
		  !strstr(buf, "  ") && buf[0] != ' ' &&
		  (n < 2 || buf[n - 2] != ' '),
		  "prefetch_available is one line of single-space-separated names");

	snprintf(copy, sizeof(copy), "%s", buf);
	for (tok = strtok_r(copy, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save)) {
		ntok++;
		for (i = 0; i < 5; i++)
			if (!strcmp(tok, builtins[i]))
				break;
		if (i == 5) {
			unknown++;
			kt_info("unexpected policy \"%s\"", tok);
		} else if (seen[i]) {
			dup++;
		} else {
			seen[i] = true;
		}
	}
	KT_EXPECT(ntok == 4 + seen[4] && !dup && !unknown && seen[0] &&
		  seen[1] && seen[2] && seen[3],
		  "prefetch_available lists exactly none manual async auto%s (%d names, %d dup, %d unknown)",
		  seen[4] ? " replay" : "", ntok, dup, unknown);

	r = ktsys_write(KTSYS_P_AVAILABLE, "none");
	kt_info("writing prefetch_available: %s", r ? strerror(-r) : "ok");
	KT_EXPECT(r < 0, "prefetch_available is not writable");
	n = ktsys_read(KTSYS_P_AVAILABLE, copy, sizeof(copy));
	KT_EXPECT(n > 0 && !strcmp(copy, buf),
		  "prefetch_available unchanged after the write attempt");
}

static void check_bad_writes(void)
{
	char before[256], after[256];
	size_t i;
	int r;

	for (i = 0; i < ARRAY_SIZE(bad_writes); i++) {
		const struct bad_write *b = &bad_writes[i];

		KT_ASSERT(!ktsys_read_line(b->path, before, sizeof(before)),
			  "read %s", b->path);
		r = ktsys_write(b->path, b->val);
		KT_EXPECT(r == -b->err,
			  "%s <- \"%s\" (%s) fails with %s (got %s)",
			  base(b->path), show(b->val), b->why,
			  strerror(b->err), r ? strerror(-r) : "success");
		KT_ASSERT(!ktsys_read_line(b->path, after, sizeof(after)),
			  "read %s", b->path);
		KT_EXPECT(!strcmp(before, after),
			  "%s unchanged after \"%s\" (\"%s\" -> \"%s\")",
			  base(b->path), show(b->val), before, after);
	}
}

static void check_good_writes(void)
{
	const struct good_writes *g;
	char want[32];
	size_t i, j;
	int r;

	for (i = 0; i < ARRAY_SIZE(good_writes); i++) {
		g = &good_writes[i];
		for (j = 0; g->vals[j]; j++) {
			r = ktsys_write(g->path, g->vals[j]);
			if (!KT_EXPECT(!r, "%s <- \"%s\" succeeds (%s)",
				       base(g->path), show(g->vals[j]),
				       r ? strerror(-r) : "ok"))
				continue;
			snprintf(want, sizeof(want), "%.*s",
				 (int)strcspn(g->vals[j], "\n"), g->vals[j]);
			expect_file(g->path, want);
		}
	}
}

/* GET and debugfs of @vm against the expected effective values. */
static void check_vm_policy(struct kt_vm *vm, const char *tag,
			    const char *name, uint32_t nr, uint32_t gup)
{
	struct kvm_prefetch_policy want, got;
	char want_s[128], got_s[128], dbg[256];
	int r;

	ktsys_policy_fill(&want, name, nr, gup);
	memset(&got, 0xff, sizeof(got));
	r = ktsys_get_policy(vm->fd, &got);
	if (!KT_EXPECT(!r, "%s: KVM_GET_PREFETCH_POLICY (%s)", tag,
		       r ? strerror(-r) : "ok"))
		return;
	ktsys_policy_str(&want, want_s, sizeof(want_s));
	ktsys_policy_str(&got, got_s, sizeof(got_s));
	KT_EXPECT(ktsys_policy_eq(&got, &want), "%s: GET gives \"%s\" (want \"%s\")",
		  tag, got_s, want_s);

	r = ktsys_vm_debugfs_policy(vm->fd, dbg, sizeof(dbg));
	if (!KT_EXPECT(!r, "%s: read debugfs prefetch_policy (%s)", tag,
		       r ? strerror(-r) : "ok"))
		return;
	KT_EXPECT(!strcmp(dbg, want_s), "%s: debugfs \"%s\" (want \"%s\")",
		  tag, dbg, want_s);
}

/* VMs created one after another, each under other sysfs defaults. */
static const struct vm_under_defaults {
	const char *policy, *nr_pages, *gup;	/* the sysfs defaults */
	uint32_t nr, gup_mode;			/* what the VM must report */
} vm_defaults[] = {
	{ "auto", "8", "nofault", 8, KVM_PREFETCH_GUP_NOFAULT },
	{ "async", "64", "fast", 64, KVM_PREFETCH_GUP_FAST_ONLY },
	/* An effective window of 0 is reported as 1. */
	{ "none", "0", "nofault", 1, KVM_PREFETCH_GUP_NOFAULT },
};

/*
 * Each VM takes the defaults in force at its creation and keeps them
 * when they change later: after every creation, the new VM and all
 * earlier ones are checked.
 */
static void check_vm_defaults(void)
{
	static const char * const changes[] = { "the default changed",
						"two default changes" };
	struct kt_vm *vms[ARRAY_SIZE(vm_defaults)];
	char tag[96];
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(vm_defaults); i++) {
		const struct vm_under_defaults *d = &vm_defaults[i];

		KT_ASSERT(!ktsys_set_defaults(d->policy, d->nr_pages, d->gup),
			  "set defaults %s/%s/%s", d->policy, d->nr_pages,
			  d->gup);
		vms[i] = kt_vm_create();
		snprintf(tag, sizeof(tag), "VM %c (created under %s/%s/%s)",
			 (int)('A' + i), d->policy, d->nr_pages, d->gup);
		check_vm_policy(vms[i], tag, d->policy, d->nr, d->gup_mode);
		for (j = 0; j < i; j++) {
			d = &vm_defaults[j];
			snprintf(tag, sizeof(tag), "VM %c after %s",
				 (int)('A' + j), changes[i - j - 1]);
			check_vm_policy(vms[j], tag, d->policy, d->nr,
					d->gup_mode);
		}
	}
	for (i = ARRAY_SIZE(vm_defaults); i-- > 0;)
		kt_vm_free(vms[i]);
}

static void check_bogus_param(void)
{
	char msg[1024];
	int fd, lvl, r, nbogus = 0, nboth = 0, both_lvl = -1;
	struct kt_vm *vm;

	fd = ktsys_kmsg_open();
	KT_ASSERT(fd >= 0, "open /dev/kmsg: %s", strerror(-fd));
	r = ktsys_reload("ours prefetch_policy=bogus");
	KT_EXPECT(r == 0, "kvm-reload ours prefetch_policy=bogus loads (status %d)",
		  r);
	if (r) {
		close(fd);
		return;
	}
	while ((lvl = ktsys_kmsg_next(fd, msg, sizeof(msg))) >= 0) {
		if (!strstr(msg, "bogus"))
			continue;
		kt_info("kernel log <%d>: %s", lvl, msg);
		nbogus++;
		if (strstr(msg, "using none")) {
			nboth++;
			both_lvl = lvl;
		}
	}
	close(fd);
	KT_EXPECT(lvl == -EAGAIN, "read the kernel log to its end (%d)", lvl);
	KT_EXPECT(nbogus == 1 && nboth == 1,
		  "exactly one kernel log line names \"bogus\" (%d) and it names \"none\" (%d)",
		  nbogus, nboth);
	KT_EXPECT(both_lvl == 4, "that line is a warning (level %d, want 4)",
		  both_lvl);
	expect_defaults("none", "8", "nofault");

	vm = kt_vm_create();
	check_vm_policy(vm, "VM after prefetch_policy=bogus load", "none", 8,
			KVM_PREFETCH_GUP_NOFAULT);
	kt_vm_free(vm);
}

int main(void)
{
	int r;

	ktsys_start_ours(120);

	/* Fresh module: the documented defaults. */
	expect_defaults("none", "8", "nofault");
	check_mode(KTSYS_P_POLICY, 0644);
	check_mode(KTSYS_P_NR_PAGES, 0644);
	check_mode(KTSYS_P_GUP, 0644);
	check_mode(KTSYS_P_AVAILABLE, 0444);
	check_available();

	/*
	 * Bad writes against non-default values, so that an error path
	 * that resets to the default is caught too.
	 */
	KT_ASSERT(!ktsys_set_defaults("manual", "16", "fast"),
		  "set defaults manual/16/fast");
	expect_defaults("manual", "16", "fast");
	check_bad_writes();
	check_good_writes();

	check_vm_defaults();
	check_bogus_param();

	r = ktsys_restore();
	KT_EXPECT(r == 0, "kvm-reload ours at the end (status %d)", r);
	if (!r)
		expect_defaults("none", "8", "nofault");
	return kt_exit();
}
