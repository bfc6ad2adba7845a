/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kt_core - what the x86 (kvmtest.h) and arm64 (tests/arm64/lib/a64.h)
 * in-VM test libraries share: reporting, sysfs files, /dev/kvm, binary
 * stats and the clock.  tests/vm's build links kt_core.c with the other lib/ files;
 * tests/arm64/lib/core.c includes it for the arm64 build.
 *
 * Reporting: each check prints exactly one line "PASS: ...", "FAIL: ..."
 * or "SKIP: ..." on stdout; informational lines start with "# ".
 * kt_exit() turns the counts into the exit status (0, 1 or 4).
 */
#ifndef KT_CORE_H
#define KT_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <linux/kvm.h>

/* Exit status of a test program. */
#define KT_EXIT_PASS	0	/* at least one PASS and no FAIL */
#define KT_EXIT_FAIL	1	/* any FAIL, or nothing reported at all */
#define KT_EXIT_SKIP	4	/* only SKIPs */

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- reporting ---------------------------------------------------- */

void kt_pass(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kt_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kt_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Exit status for the counts so far: KT_EXIT_PASS, _FAIL or _SKIP. */
int kt_exit(void);
/* Number of FAIL lines printed so far. */
int kt_failures(void);

/*
 * KT_ASSERT: on failure print FAIL with file:line and end the program
 * with kt_exit() (which is then 1). For checks after which the test
 * cannot sensibly go on, and for errors inside the library.
 */
#define KT_ASSERT(cond, fmt, ...)					\
	do {								\
		if (!(cond)) {						\
			kt_fail("%s:%d: %s: " fmt, __FILE__, __LINE__,	\
				#cond, ##__VA_ARGS__);			\
			exit(kt_exit());				\
		}							\
	} while (0)

/*
 * KT_EXPECT: print PASS or FAIL (with file:line) and go on.
 * Evaluates to the truth value of @cond.
 */
#define KT_EXPECT(cond, fmt, ...)					\
	({								\
		bool __ok = (cond);					\
		if (__ok)						\
			kt_pass(fmt, ##__VA_ARGS__);			\
		else							\
			kt_fail("%s:%d: " fmt, __FILE__, __LINE__,	\
				##__VA_ARGS__);				\
		__ok;							\
	})

/* KT_REQUIRE: print SKIP and end the program if @cond does not hold. */
#define KT_REQUIRE(cond, fmt, ...)					\
	do {								\
		if (!(cond)) {						\
			kt_skip(fmt, ##__VA_ARGS__);			\
			exit(kt_exit());				\
		}							\
	} while (0)

/* ---- sysfs / procfs files (kt_sys.h's names) ------------------------ */

/*
 * Read the whole file (up to @len - 1 bytes) into @buf, NUL-terminated.
 * Returns the number of bytes read or -errno.
 */
int ktsys_read(const char *path, char *buf, size_t len);
/* Like ktsys_read() but strips one trailing newline; 0 or -errno. */
int ktsys_read_line(const char *path, char *buf, size_t len);
/* Read a decimal number; 0 or -errno (-EINVAL if not a number). */
int ktsys_read_long(const char *path, long *val);
/*
 * One write(2) of strlen(@val) bytes to @path (opened O_WRONLY).
 * Returns 0 if all was written, -errno on error (-EIO on a short write).
 */
int ktsys_write(const char *path, const char *val);

/* ---- /dev/kvm, stats, clock ---------------------------------------- */

/* Open /dev/kvm; returns the fd or -errno. Checks KVM_GET_API_VERSION. */
int kt_kvm_open(void);

/* The binary stats (KVM_GET_STATS_FD) of a VM or a vCPU. */
struct kt_stats {
	int fd;				/* -1 until first use */
	struct kvm_stats_header hdr;
	char *descs;			/* hdr.num_desc descriptors */
	size_t desc_size;		/* sizeof(desc) + hdr.name_size */
};

/* Set @st up unopened (it opens on the first read). */
void kt_stats_init(struct kt_stats *st);
/*
 * First u64 of stat @name of @owner_fd (the VM or vCPU fd): 0, -ENOENT
 * (no such stat) or -errno.
 */
int kt_stats_read(struct kt_stats *st, int owner_fd, const char *name,
		  uint64_t *val);
/* The same for vCPU @id's stats; a failure ends the program. */
uint64_t kt_stats_vcpu_get(struct kt_stats *st, int vcpu_fd, int id,
			   const char *name);
/* Close the stats fd, if open, and free the descriptors. */
void kt_stats_free(struct kt_stats *st);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t kt_now_ns(void);
/* The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), ns. */
uint64_t kt_thread_ns(void);

#endif /* KT_CORE_H */
