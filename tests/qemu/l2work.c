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
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static uint64_t pattern(uint64_t seed, uint64_t i)
{
	uint64_t x = seed ^ (i * 0x9e3779b97f4a7c15ull);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return x;
}

int main(int argc, char **argv)
{
	uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 0) : 64;
	int passes = argc > 2 ? atoi(argv[2]) : 3;
	uint64_t n = mib << 17, i, sum = 0;
	uint64_t *buf;
	int p;

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
	}
	printf("@@L2WORK ok mib=%llu passes=%d sum=%llx\n",
	       (unsigned long long)mib, passes, (unsigned long long)sum);
	return 0;
}
