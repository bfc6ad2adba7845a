// SPDX-License-Identifier: GPL-2.0
/*
 * The workload of the Linux guest that Debian's QEMU boots inside the
 * test VM (tests/qemu/): fill a buffer with a seeded pattern, read every
 * word back, rewrite with the next seed, several passes; print one line
 * that the rig checks.  A guest page mapped to the wrong host page, or a
 * stale mapping, shows as a word that does not match.
 *
 *   l2work <MiB> <passes>
 *   @@L2WORK ok mib=64 passes=3 sum=<hex>      or
 *   @@L2WORK bad pass=<n> offset=<byte offset> got=<hex> want=<hex>
 *
 * Two modes for tests that run across an event (a postcopy switchover, a
 * policy change), each printing one line per pass with the sum of the
 * words it read back, which the rig compares with "l2work expect":
 *
 *   l2work loop <MiB> <passes>   (0: forever)
 *	pass p reads the whole region back against the pattern of pass
 *	p - 1 (written before, maybe on another host), then rewrites it
 *	with seed p:
 *	@@L2PASS n=<p> seed=<p - 1> mib=<MiB> sum=<hex> up=<guest uptime>
 *   l2work grow <MiB> <steps> [gate]
 *	each step maps <MiB> fresh and never unmaps it, writes seed k and
 *	reads it back: the guest keeps touching guest pages it never
 *	touched (host faults all along); at the end every step is read
 *	again and "@@L2WORK ok" printed:
 *	@@L2PASS n=<k> seed=<k> mib=<MiB> sum=<hex> up=<guest uptime>
 *	With "gate", each step first reads one byte from the console (the
 *	serial port, put in raw mode): the rig lets the guest take exactly
 *	the steps it counts, so a fast guest cannot run past a policy
 *	switch the rig has not made yet.  "@@L2GATE steps=<n>" says the
 *	console is ready (a byte sent earlier could be lost when the
 *	guest's serial driver starts up and clears its FIFO).
 *   l2work expect <MiB> <seed>
 *	prints the sum a pass of <MiB> with <seed> must report (the rig
 *	runs it in the test VM).
 *   l2work sum <MiB> <passes>
 *	prints the sum "l2work <MiB> <passes>" must report.
 *   l2work spin
 *	spins forever, printing nothing and touching no new page: a
 *	stalled guest, planted to check the rig's stall detector.
 *
 * "l2work <MiB> <passes>" also prints "@@L2PROG pass=<n> up=<s>" after
 * each pass: output that tells the rig the guest still runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

static uint64_t pattern(uint64_t seed, uint64_t i)
{
	uint64_t x = seed ^ (i * 0x9e3779b97f4a7c15ull);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return x;
}

static double uptime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t *map_mib(uint64_t mib)
{
	uint64_t *buf = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (buf == MAP_FAILED) {
		printf("@@L2WORK bad mmap of %llu MiB failed\n",
		       (unsigned long long)mib);
		exit(1);
	}
	return buf;
}

static void fill(uint64_t *buf, uint64_t n, uint64_t seed)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		buf[i] = pattern(seed, i);
}

/* Sum of the words read back; exits on the first word that is wrong. */
static uint64_t check(const uint64_t *buf, uint64_t n, uint64_t seed,
		      unsigned long pass)
{
	uint64_t i, sum = 0;

	for (i = 0; i < n; i++) {
		uint64_t v = buf[i];

		if (v != pattern(seed, i)) {
			printf("@@L2WORK bad pass=%lu offset=%llu got=%llx want=%llx\n",
			       pass, (unsigned long long)(i * 8),
			       (unsigned long long)v,
			       (unsigned long long)pattern(seed, i));
			exit(1);
		}
		sum += v;
	}
	return sum;
}

static void pass_line(unsigned long n, uint64_t seed, uint64_t mib,
		      uint64_t sum)
{
	printf("@@L2PASS n=%lu seed=%llu mib=%llu sum=%llx up=%.2f\n", n,
	       (unsigned long long)seed, (unsigned long long)mib,
	       (unsigned long long)sum, uptime());
	fflush(stdout);
}

static int loop(uint64_t mib, unsigned long passes)
{
	uint64_t n = mib << 17, *buf = map_mib(mib);
	unsigned long p;

	madvise(buf, mib << 20, MADV_NOHUGEPAGE);
	for (p = 1; !passes || p <= passes; p++) {
		if (p > 1)
			pass_line(p, p - 1, mib, check(buf, n, p - 1, p));
		fill(buf, n, p);
	}
	printf("@@L2WORK ok mib=%llu passes=%lu\n", (unsigned long long)mib,
	       passes);
	return 0;
}

/* The console in raw mode, no echo: one byte the rig sends is one step. */
static int gate_open(void)
{
	struct termios t;

	if (tcgetattr(0, &t))
		return -1;
	t.c_lflag &= ~(ICANON | ECHO | ECHONL | ISIG | IEXTEN);
	t.c_iflag &= ~(ICRNL | INLCR | IGNCR | IXON);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	return tcsetattr(0, TCSANOW, &t);
}

static int gate_wait(void)
{
	char c;

	return read(0, &c, 1) == 1 ? 0 : -1;
}

static int grow(uint64_t mib, unsigned long steps, int gated)
{
	uint64_t n = mib << 17, **bufs = calloc(steps + 1, sizeof(*bufs));
	unsigned long k;

	if (gated && gate_open()) {
		printf("@@L2WORK bad the console cannot be put in raw mode\n");
		return 1;
	}
	if (gated)
		printf("@@L2GATE steps=%lu\n", steps);
	for (k = 1; k <= steps; k++) {
		if (gated && gate_wait()) {
			printf("@@L2WORK bad no byte from the console before step %lu\n", k);
			return 1;
		}
		bufs[k] = map_mib(mib);
		fill(bufs[k], n, k);
		pass_line(k, k, mib, check(bufs[k], n, k, k));
	}
	for (k = 1; k <= steps; k++)
		check(bufs[k], n, k, k);
	printf("@@L2WORK ok mib=%llu steps=%lu\n", (unsigned long long)mib,
	       steps);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 0) : 64;
	int passes = argc > 2 ? atoi(argv[2]) : 3;
	uint64_t n = mib << 17, i, sum = 0;
	uint64_t *buf;
	int p;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "loop"))
		return loop(strtoull(argv[2], NULL, 0), strtoul(argv[3], NULL, 0));
	if ((argc == 4 || (argc == 5 && !strcmp(argv[4], "gate"))) &&
	    !strcmp(argv[1], "grow"))
		return grow(strtoull(argv[2], NULL, 0), strtoul(argv[3], NULL, 0),
			    argc == 5);
	if (argc == 2 && !strcmp(argv[1], "spin"))
		for (;;)
			__asm__ volatile("pause");
	if (argc == 4 && !strcmp(argv[1], "sum")) {
		mib = strtoull(argv[2], NULL, 0);
		n = mib << 17;
		for (p = 0; p < atoi(argv[3]); p++)
			for (i = 0; i < n; i++)
				sum += pattern(p + 1, i);
		printf("%llx\n", (unsigned long long)sum);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "expect")) {
		mib = strtoull(argv[2], NULL, 0);
		n = mib << 17;
		for (i = 0; i < n; i++)
			sum += pattern(strtoull(argv[3], NULL, 0), i);
		printf("%llx\n", (unsigned long long)sum);
		return 0;
	}

	buf = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		printf("@@L2WORK bad mmap of %llu MiB failed\n",
		       (unsigned long long)mib);
		return 1;
	}
	for (p = 0; p < passes; p++) {
		for (i = 0; i < n; i++)
			buf[i] = pattern(p + 1, i);
		for (i = 0; i < n; i++) {
			if (buf[i] != pattern(p + 1, i)) {
				printf("@@L2WORK bad pass=%d offset=%llu got=%llx want=%llx\n",
				       p, (unsigned long long)(i * 8),
				       (unsigned long long)buf[i],
				       (unsigned long long)pattern(p + 1, i));
				return 1;
			}
			sum += buf[i];
		}
		printf("@@L2PROG pass=%d up=%.2f\n", p + 1, uptime());
	}
	printf("@@L2WORK ok mib=%llu passes=%d sum=%llx\n",
	       (unsigned long long)mib, passes, (unsigned long long)sum);
	return 0;
}
