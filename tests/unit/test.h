/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny test framework for the unit tests: TEST(name) functions and the
 * rows of TEST_TABLE()s run in source order, each printing
 * "PASS: <suite>/<name>" or "FAIL: <suite>/<name>: <file>:<line>: <what>".
 * An ASSERT_*() that fails ends its test.  After each test the shim must
 * be clean (no lock held, no reference or allocation leaked, no kernel
 * rule broken, see shim_unclean()).  main() exits non-zero if any test
 * failed; the last line, "DONE: <suite>: N tests", tells the Makefile it
 * did not crash.
 *
 * Include after the shim and the kernel files under test.
 */
#ifndef __UNIT_TEST_H
#define __UNIT_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test_case {
	const char *name;
	void (*fn)(void);
	void (*fn_row)(const void *row);	/* instead, for table rows */
	const void *row;
	int line;
};

#define TEST_MAX	128

static struct test_case test_cases[TEST_MAX];
static int test_nr;
static const char *test_current;
static int test_failed;
static jmp_buf test_jmp;

static inline void test_register(struct test_case t)
{
	if (test_nr == TEST_MAX) {
		fprintf(stderr, "too many tests, raise TEST_MAX\n");
		exit(2);
	}
	test_cases[test_nr++] = t;
}

#define TEST(tname)							\
	static void test_##tname(void);					\
	__attribute__((constructor)) static void test_reg_##tname(void)	\
	{								\
		test_register((struct test_case){			\
			.name = #tname, .fn = test_##tname,		\
			.line = __LINE__ });				\
	}								\
	static void test_##tname(void)

/*
 * A table of cases: TEST_TABLE(fn, table) runs fn(&table[i]) as a test of
 * its own for each row, named by the row's .name.
 */
#define TEST_TABLE(fn, table)						\
	static void fn(const typeof((table)[0]) *row);			\
	static void fn##_row(const void *row) { fn(row); }		\
	__attribute__((constructor)) static void test_reg_##fn(void)	\
	{								\
		size_t i;						\
									\
		for (i = 0; i < ARRAY_SIZE(table); i++)			\
			test_register((struct test_case){		\
				.name = (table)[i].name, .fn_row = fn##_row, \
				.row = &(table)[i], .line = __LINE__ }); \
	}								\
	static void fn(const typeof((table)[0]) *row)

/* The suite name: test_foo.c -> foo */
static inline const char *test_suite(void)
{
	static char suite[64];
	const char *base = strrchr(__BASE_FILE__, '/');

	base = base ? base + 1 : __BASE_FILE__;
	if (!strncmp(base, "test_", 5))
		base += 5;
	snprintf(suite, sizeof(suite), "%.*s", (int)strcspn(base, "."), base);
	return suite;
}

__attribute__((format(printf, 3, 4), noreturn))
static inline void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (!test_failed) {
		printf("FAIL: %s/%s: %s:%d: ", test_suite(), test_current,
		       file, line);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
		fflush(stdout);
	}
	test_failed = 1;
	longjmp(test_jmp, 1);
}

#define ASSERT_TRUE(x) do {						\
	if (!(x))							\
		test_fail(__FILE__, __LINE__, "ASSERT_TRUE(%s)", #x);	\
} while (0)

#define ASSERT_FALSE(x) do {						\
	if (x)								\
		test_fail(__FILE__, __LINE__, "ASSERT_FALSE(%s)", #x);	\
} while (0)

/* @a @op @b as integers; the message shows both in decimal and hex. */
#define ASSERT_INT(what, a, op, b) do {					\
	long long __a = (long long)(a), __b = (long long)(b);		\
	if (!(__a op __b))						\
		test_fail(__FILE__, __LINE__,				\
			  what "(%s, %s): %lld (%#llx), %lld (%#llx)",	\
			  #a, #b, __a, (unsigned long long)__a, __b,	\
			  (unsigned long long)__b);			\
} while (0)
#define ASSERT_EQ(a, b)		ASSERT_INT("ASSERT_EQ", a, ==, b)
#define ASSERT_NE(a, b)		ASSERT_INT("ASSERT_NE", a, !=, b)

#define ASSERT_PTR(what, a, op, b) do {					\
	const void *__a = (a), *__b = (b);				\
	if (!(__a op __b))						\
		test_fail(__FILE__, __LINE__, what "(%s, %s): %p, %p",	\
			  #a, #b, __a, __b);				\
} while (0)
#define ASSERT_PTR_EQ(a, b)	ASSERT_PTR("ASSERT_PTR_EQ", a, ==, b)
#define ASSERT_PTR_NE(a, b)	ASSERT_PTR("ASSERT_PTR_NE", a, !=, b)

#define ASSERT_STREQ(a, b) do {						\
	const char *__a = (a), *__b = (b);				\
	if (!__a || !__b || strcmp(__a, __b))				\
		test_fail(__FILE__, __LINE__,				\
			  "ASSERT_STREQ(%s, %s): \"%s\" != \"%s\"",	\
			  #a, #b, __a ? __a : "(null)", __b ? __b : "(null)"); \
} while (0)

/* An ERR_PTR() of -@err. */
#define ASSERT_ERR_PTR(p, err) do {					\
	const void *__p = (p);						\
	if (!IS_ERR(__p) || PTR_ERR(__p) != -(err))			\
		test_fail(__FILE__, __LINE__,				\
			  "ASSERT_ERR_PTR(%s, %s): got %p (%ld)", #p, #err, \
			  __p, IS_ERR(__p) ? PTR_ERR(__p) : 0L);	\
} while (0)

/* @s with non-printable bytes as \xNN, in one of two static buffers. */
static inline const char *test_escape(const char *s)
{
	static char bufs[2][128];
	static int which;
	char *out = bufs[which ^= 1];
	size_t n = 0;

	for (; *s && n + 5 < sizeof(bufs[0]); s++) {
		unsigned char c = *s;

		if (c >= 0x20 && c < 0x7f)
			out[n++] = c;
		else
			n += snprintf(out + n, 5, "\\x%02x", c);
	}
	out[n] = '\0';
	return out;
}

/* Per-program hooks around each test; NULL for none. */
static inline int test_run_all(void (*setup)(void), void (*teardown)(void))
{
	char why[1200];
	volatile int failures = 0;
	int i, j;

	/* Constructors may run in any order: sort by line. */
	for (i = 1; i < test_nr; i++)
		for (j = i; j > 0 && test_cases[j - 1].line > test_cases[j].line; j--) {
			struct test_case t = test_cases[j];

			test_cases[j] = test_cases[j - 1];
			test_cases[j - 1] = t;
		}

	for (i = 0; i < test_nr; i++) {
		volatile int phase = 0;

		test_current = test_cases[i].name;
		test_failed = 0;
		shim_reset();
		if (!setjmp(test_jmp)) {
			if (setup)
				setup();
			phase = 1;
			if (test_cases[i].fn)
				test_cases[i].fn();
			else
				test_cases[i].fn_row(test_cases[i].row);
		}
		/* Clean up even after a failure, so the next test starts clean. */
		if (!setjmp(test_jmp) && phase < 2) {
			phase = 2;
			if (teardown)
				teardown();
		}
		if (!test_failed && !setjmp(test_jmp)) {
			const char *msg = shim_unclean(why, sizeof(why));

			if (msg)
				test_fail("(after test)", 0, "%s", msg);
		}
		if (!test_failed)
			printf("PASS: %s/%s\n", test_suite(), test_current);
		else
			failures++;
		fflush(stdout);
	}
	/* The Makefile counts a program without this line as crashed. */
	printf("DONE: %s: %d tests\n", test_suite(), test_nr);
	fflush(stdout);		/* LeakSanitizer exits without flushing */
	return failures ? 1 : 0;
}

#endif /* __UNIT_TEST_H */
