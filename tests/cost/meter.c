// SPDX-License-Identifier: GPL-2.0
/*
 * meter - a QEMU TCG plugin that counts the instructions the guest kernel
 * executes, for "make cost" (tests/cost/cost.mk).
 *
 * Two counts, both over every vCPU (run QEMU with -accel tcg,thread=single,
 * so that the inline adds never race):
 *
 *  - core: instructions at [CORE_START, MOD_START), the kernel image's
 *    text when the guest boots with nokaslr;
 *  - modules: instructions in the module area [MOD_START, MOD_END), one
 *    counter per 4 KiB page ("bin").  Module memory is page-granular, so
 *    a module's range from the guest's /proc/modules is a whole number of
 *    bins and the host can sum exactly the bins of kvm.ko and kvm-amd.ko.
 *
 * Phases are marked by the guest program itself: a long NOP with a magic
 * displacement (COST_MARK_BYTES, see tests/cost/cost.c) at a user-space
 * address.  Each execution of it appends a snapshot of the cumulative
 * counts to the output file, numbered from 0 in execution order:
 *
 *	S <n> core=<count>
 *	B <bin address, hex> <count>	(for every bin that is not zero)
 *	E <n>
 *
 * Arguments: out=<file> (required); prof=<file> (optional) adds a profile:
 * one more counter per 16 bytes of the core kernel's text and of the first
 * PROF_MOD_SIZE bytes of the module area, written at each snapshot as
 *
 *	P <n>
 *	F <address, hex> <count>	(for every 16 bytes that are not zero)
 *
 * which tests/cost/profile.py turns into instructions per function.
 *
 * Built with gcc -shared -fPIC against qemu-plugin.h of the installed QEMU
 * (QEMU_PLUGIN_VERSION 1 needs no glib).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define CORE_START	0xffffffff80000000ULL
#define MOD_START	0xffffffffc0000000ULL
#define MOD_END		0xffffffffff000000ULL
#define BIN_SHIFT	12
#define NR_BINS		((MOD_END - MOD_START) >> BIN_SHIFT)
#define USER_END	0x0000800000000000ULL

/* nopl 0x4b50c057(%rax): 0f 1f 80 and the displacement, little endian. */
static const uint8_t mark_bytes[] = {
	0x0f, 0x1f, 0x80, 0x57, 0xc0, 0x50, 0x4b,
};

/* The profile's ranges: the core text with nokaslr, the modules' start. */
#define PROF_SHIFT	4
#define PROF_CORE_START	0xffffffff81000000ULL
#define PROF_CORE_SIZE	(64ULL << 20)
#define PROF_MOD_SIZE	(256ULL << 20)

static uint64_t core_count;
static uint64_t *prof_core, *prof_mod;
static FILE *prof;
static uint64_t bins[NR_BINS];
static uint64_t nr_snaps;
static FILE *out;

/* The profile's non-zero counters of [start, start + size). */
static void prof_dump(const uint64_t *ctr, uint64_t start, uint64_t size)
{
	uint64_t i;

	for (i = 0; i < (size >> PROF_SHIFT); i++)
		if (ctr[i])
			fprintf(prof, "F %" PRIx64 " %" PRIu64 "\n",
				start + (i << PROF_SHIFT), ctr[i]);
}

static void snapshot(unsigned int vcpu_index, void *udata)
{
	uint64_t i;

	fprintf(out, "S %" PRIu64 " core=%" PRIu64 "\n", nr_snaps, core_count);
	for (i = 0; i < NR_BINS; i++)
		if (bins[i])
			fprintf(out, "B %" PRIx64 " %" PRIu64 "\n",
				(uint64_t)(MOD_START + (i << BIN_SHIFT)),
				bins[i]);
	fprintf(out, "E %" PRIu64 "\n", nr_snaps);
	fflush(out);
	if (prof) {
		fprintf(prof, "P %" PRIu64 "\n", nr_snaps);
		prof_dump(prof_core, PROF_CORE_START, PROF_CORE_SIZE);
		prof_dump(prof_mod, MOD_START, PROF_MOD_SIZE);
		fflush(prof);
	}
	nr_snaps++;
}

static bool is_mark(struct qemu_plugin_insn *insn, uint64_t vaddr)
{
	return vaddr < USER_END &&
	       qemu_plugin_insn_size(insn) == sizeof(mark_bytes) &&
	       !memcmp(qemu_plugin_insn_data(insn), mark_bytes,
		       sizeof(mark_bytes));
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);
		uint64_t *ctr = NULL;

		if (va >= MOD_START && va < MOD_END)
			ctr = &bins[(va - MOD_START) >> BIN_SHIFT];
		else if (va >= CORE_START && va < MOD_START)
			ctr = &core_count;
		else if (is_mark(insn, va))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, snapshot,
						QEMU_PLUGIN_CB_NO_REGS, NULL);
		if (ctr)
			qemu_plugin_register_vcpu_insn_exec_inline(insn,
						QEMU_PLUGIN_INLINE_ADD_U64,
						ctr, 1);
		ctr = NULL;
		if (prof && va >= MOD_START && va < MOD_START + PROF_MOD_SIZE)
			ctr = &prof_mod[(va - MOD_START) >> PROF_SHIFT];
		else if (prof && va >= PROF_CORE_START &&
			 va < PROF_CORE_START + PROF_CORE_SIZE)
			ctr = &prof_core[(va - PROF_CORE_START) >> PROF_SHIFT];
		if (ctr)
			qemu_plugin_register_vcpu_insn_exec_inline(insn,
						QEMU_PLUGIN_INLINE_ADD_U64,
						ctr, 1);
	}
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	fprintf(out, "X snapshots=%" PRIu64 "\n", nr_snaps);
	fclose(out);
	if (prof)
		fclose(prof);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL, *prof_path = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		else if (!strncmp(argv[i], "prof=", 5))
			prof_path = argv[i] + 5;
	}
	if (!path) {
		fprintf(stderr, "meter: missing argument out=<file>\n");
		return -1;
	}
	out = fopen(path, "w");
	if (!out) {
		fprintf(stderr, "meter: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (prof_path) {
		prof_core = calloc(PROF_CORE_SIZE >> PROF_SHIFT, sizeof(uint64_t));
		prof_mod = calloc(PROF_MOD_SIZE >> PROF_SHIFT, sizeof(uint64_t));
		prof = fopen(prof_path, "w");
		if (!prof_core || !prof_mod || !prof) {
			fprintf(stderr, "meter: %s: %s\n", prof_path,
				strerror(errno));
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
