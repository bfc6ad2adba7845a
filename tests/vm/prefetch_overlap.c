// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_overlap - 4 vCPUs fault the same and overlapping ranges while
 * prefetch runs, the policy changes and host mappings are zapped.
 *
 * Guest memory is a shared memfd whose contents the host never changes:
 * MADV_DONTNEED on it only unmaps (the pages stay in the page cache), so
 * KVM's mappings are invalidated through the mmu_notifier over and over
 * while every guest read must still return exactly the memfd's contents.
 * vCPU i reads [i * quarter, i * quarter + half) of the slot: each range
 * overlaps its neighbours'.  A switcher thread changes the policy (none,
 * manual, async, auto with windows 2..512, both GUP modes) and a zapper
 * thread unmaps random ranges, for 15 seconds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define SLOT		1
#define GPA		0x1000000ULL
#define SIZE		(4ULL << 20)
#define PAGES		(SIZE / KT_PAGE_SIZE)
#define NR_VCPUS	4
#define SECONDS		15

static struct kt_vm *vm;
static char *mem;
static atomic_bool stop;
static atomic_ulong passes, bad_passes, zaps, switches;

/* What a read pass over [from, to) must return: the sum of dword 0s. */
static uint32_t expected_sum(uint64_t from, uint64_t to)
{
	uint32_t sum = 0;
	uint64_t off;

	for (off = from; off < to; off += KT_PAGE_SIZE)
		sum += *(uint32_t *)(mem + off);
	return sum;
}

static void *vcpu_thread(void *arg)
{
	struct kt_vcpu *vcpu = arg;
	uint64_t from = vcpu->id * (SIZE / 4), to = from + SIZE / 2;
	uint32_t want, got;

	if (to > SIZE)
		to = SIZE;
	want = expected_sum(from, to);
	while (!stop) {
		got = kt_touch(vcpu, GPA + from, GPA + to, 0, KT_TOUCH_READ);
		passes++;
		if (got != want && bad_passes++ < 5)
			kt_info("vcpu %d: sum 0x%x, want 0x%x", vcpu->id, got, want);
	}
	return NULL;
}

static void *zap_thread(void *arg)
{
	unsigned int seed = 1;

	while (!stop) {
		uint64_t first = rand_r(&seed) % PAGES;
		uint64_t n = 1 + rand_r(&seed) % 64;

		if (first + n > PAGES)
			n = PAGES - first;
		madvise(mem + first * KT_PAGE_SIZE, n * KT_PAGE_SIZE,
			MADV_DONTNEED);
		zaps++;
		usleep(500);
	}
	return NULL;
}

static void *switch_thread(void *arg)
{
	static const char *const names[] = { "none", "manual", "async", "auto" };
	unsigned int seed = 2;

	while (!stop) {
		const char *name = names[rand_r(&seed) % 4];
		uint32_t nr = 2 << (rand_r(&seed) % 9);	/* 2..512 */
		uint32_t gup = 1 + rand_r(&seed) % 2;

		if (ktsys_set_policy(vm->fd, name, nr, gup))
			bad_passes++;
		switches++;
		usleep(2000);
	}
	return NULL;
}

int main(void)
{
	pthread_t vt[NR_VCPUS], zt, st;
	struct kt_vcpu *vcpus[NR_VCPUS];
	uint64_t off, total_mapped = 0;
	int fd, i;

	kt_require_kvm();
	ktsys_require_prefetch();

	fd = memfd_create("overlap", 0);
	KT_ASSERT(fd >= 0 && !ftruncate(fd, SIZE), "memfd: %s", strerror(errno));
	mem = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	KT_ASSERT(mem != MAP_FAILED, "mmap: %s", strerror(errno));
	for (off = 0; off < SIZE; off += KT_PAGE_SIZE)
		*(uint32_t *)(mem + off) = (uint32_t)(off * 2654435761u);

	vm = kt_vm_create();
	kt_vm_add_slot(vm, SLOT, GPA, SIZE, 0, mem);
	KT_ASSERT(!ktsys_set_policy(vm->fd, "auto", 512, 0), "SET auto 512");
	for (i = 0; i < NR_VCPUS; i++)
		vcpus[i] = kt_vcpu_add(vm, i);

	for (i = 0; i < NR_VCPUS; i++)
		pthread_create(&vt[i], NULL, vcpu_thread, vcpus[i]);
	pthread_create(&zt, NULL, zap_thread, NULL);
	pthread_create(&st, NULL, switch_thread, NULL);
	sleep(SECONDS);
	stop = true;
	for (i = 0; i < NR_VCPUS; i++)
		pthread_join(vt[i], NULL);
	pthread_join(zt, NULL);
	pthread_join(st, NULL);

	kt_info("%lu read passes, %lu zaps, %lu policy switches",
		(unsigned long)passes, (unsigned long)zaps,
		(unsigned long)switches);
	KT_EXPECT(passes >= NR_VCPUS && zaps > 0 && switches > 0,
		  "vCPUs, zapper and switcher all ran");
	KT_EXPECT(bad_passes == 0,
		  "every read pass saw the memfd's contents (%lu bad)",
		  (unsigned long)bad_passes);
	for (i = 0; i < NR_VCPUS; i++) {
		uint64_t m = kt_vcpu_stat_get(vcpus[i], "prefetch_mapped");

		total_mapped += m;
		kt_info("vcpu %d: pf_taken %llu prefetch_mapped %llu", i,
			(unsigned long long)kt_vcpu_stat_get(vcpus[i], "pf_taken"),
			(unsigned long long)m);
		kt_vcpu_free(vcpus[i]);
	}
	KT_EXPECT(total_mapped > 0, "prefetch mapped pages meanwhile (%llu)",
		  (unsigned long long)total_mapped);
	kt_vm_free(vm);
	munmap(mem, SIZE);
	close(fd);
	return kt_exit();
}
