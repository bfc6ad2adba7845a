# SPDX-License-Identifier: GPL-2.0
#
# make bench: the restore benchmark (issue 7), included by the top-level
# Makefile.  Boots the test VM once in kp.mode=bench; the guest runs
# $(VMDIR)/tests/bench (tests/bench/bench.c) with stock and our modules,
# interleaved; tests/bench/report.py turns the serial log into
# $(BENCH_OUT)/results.{md,csv,png}.  Not part of "make check" (it
# measures); its smoke test tests/vm/restore_smoke.c is.
#
#   make bench [BENCH_RUNS=5] [BENCH_MIB=64] [BENCH_SMALL_MIB=8]
#              [BENCH_SMALL_MAX=16] [BENCH_CHUNKS=4:8:16:64:512:2048]
#              [BENCH_EXTRAS=1] [BENCH_MODES=irqchip:pv-apf:plain]
#              [BENCH_SEC_RUNS=3] [BENCH_ZC=1] [BENCH_QEMU=1]
#
# BENCH_MODES are the guest modes of tests/vm/lib/kvmtest.h; the first
# gets the main table (BENCH_RUNS rounds, plus the extras), the others a
# table each with BENCH_SEC_RUNS rounds, and so does the zero-copy restore
# (MINOR mode, UFFDIO_CONTINUE) in the first mode when BENCH_ZC=1.
#
# Chunks of at most BENCH_SMALL_MAX KiB fault BENCH_SMALL_MIB MiB instead
# of BENCH_MIB, to keep the run under 20 minutes (each 4 KiB chunk costs a
# userfaultfd round trip plus a nested fault, ~0.4 ms under TCG).
# BENCH_QEMU=1 (the default) then runs make qemu-postcopy (tests/qemu/:
# QEMU postcopy per policy, QEMU_PC_* options, about 25 minutes), its
# table in $(RESULTS)/qemu-postcopy.md.
# "make bench-publish" copies the results, and the @@BENCH lines they were
# made from (python3 tests/bench/report.py --log bench-lines.txt remakes
# them), to tests/bench/results/<base>/<mode>/, <mode> the first of
# BENCH_MODES (the main table's guest): the current set of that base and
# guest.  sysfs-docs/benchmark.rst says how to read them.

.PHONY: bench bench-bin bench-deps bench-report bench-publish python3-dep \
	bench-budget

BENCH_OUT	?= $(BUILD)/bench
BENCH_RUNS	?= 5
BENCH_SEC_RUNS	?= 3
BENCH_MODES	?= irqchip:pv-apf:plain
BENCH_ZC	?= 1
BENCH_MIB	?= 64
BENCH_SMALL_MIB	?= 8
BENCH_SMALL_MAX	?= 16
BENCH_CHUNKS	?= 4:8:16:64:512:2048
BENCH_EXTRAS	?= 1
BENCH_TIMEOUT	?= 3600
BENCH_QEMU	?= 1
BENCH_ARGS	= runs=$(BENCH_RUNS),mib=$(BENCH_MIB),small_mib=$(BENCH_SMALL_MIB),small_max=$(BENCH_SMALL_MAX),chunks=$(BENCH_CHUNKS),extras=$(BENCH_EXTRAS),modes=$(BENCH_MODES),sec_runs=$(BENCH_SEC_RUNS),zc=$(BENCH_ZC)
BENCH_LOG	= $(VMDIR)/bench.log
BENCH_SRCS	:= $(wildcard tests/bench/*.c)
BENCH_BINS	:= $(patsubst tests/bench/%.c,$(VMDIR)/tests/%,$(BENCH_SRCS))

# The guest programs: static, like tests/vm's (names start with "bench",
# which the test mode skips).
$(BENCH_BINS): $(VMDIR)/tests/%: tests/bench/%.c $(VM_LIB_SRCS) $(VM_LIB_HDRS)
	@mkdir -p $(dir $@)
	gcc $(CFLAGS_TEST) -o $@ $< $(VM_LIB_SRCS)

bench-bin: $(MODULES_DEP)
	@$(MAKE) --no-print-directory $(BENCH_BINS)

# The initramfs of a bench run must contain the bench programs.
ifneq ($(filter bench bench-budget bench-gmem bench-replay,$(MAKECMDGOALS)),)
initramfs: bench-bin
endif
# make demo ends with bench_replay's short record-and-replay table.
ifneq ($(filter demo,$(MAKECMDGOALS)),)
initramfs: $(VMDIR)/tests/bench_replay
endif

# The reports of make bench and make cost are Python scripts.
python3-dep: deps
	@command -v python3 >/dev/null || { \
		[ "$$(id -u)" = 0 ] || { echo "$@: python3 missing and not root" >&2; exit 1; }; \
		apt-get update -qq; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends python3 >/dev/null; }

bench-deps: python3-dep
	@command -v gnuplot >/dev/null || { echo "bench: gnuplot missing (make deps)" >&2; exit 1; }

bench: bench-deps initramfs
	@mkdir -p $(BENCH_OUT)
	@start=$$(date +%s); rc=0; \
	tests/vm/run-vm.sh --kernel $(KIMAGE) --initrd $(VMDIR)/initramfs.cpio.gz \
		--mode bench --log $(BENCH_LOG) --quiet --timeout $(BENCH_TIMEOUT) \
		--append "kp.bench=$(BENCH_ARGS)" || rc=$$?; \
	echo "$$(( $$(date +%s) - start ))" > $(BENCH_OUT)/vm-seconds; \
	$(MAKE) --no-print-directory bench-report || rc=1; \
	if [ "$(BENCH_QEMU)" = 1 ]; then \
		$(MAKE) --no-print-directory NOBUILD=1 qemu-postcopy || rc=1; \
	fi; \
	exit $$rc

# Re-make the table, CSV and plot from an existing log, and keep the
# @@BENCH lines they come from beside them, so that what is published is
# one run's results and that run's lines.
bench-report:
	@mkdir -p $(BENCH_OUT)
	grep -a '@@BENCH' $(BENCH_LOG) | tr -d '\r' > $(BENCH_OUT)/bench-lines.txt
	python3 tests/bench/report.py --log $(BENCH_LOG) --out $(BENCH_OUT) \
		--abi "$(ABI)" --qemu "$$(qemu-system-x86_64 --version | head -n1)" \
		--vm-seconds "$$(cat $(BENCH_OUT)/vm-seconds 2>/dev/null)"

# One current set per base and main guest mode; the older one is in git.
BENCH_PUB := tests/bench/results/$(KERNEL)/$(firstword $(subst :, ,$(BENCH_MODES)))
bench-publish:
	@mkdir -p $(BENCH_PUB)
	rm -f $(BENCH_PUB)/results*.png
	cp $(BENCH_OUT)/results.md $(BENCH_OUT)/results.csv \
		$(BENCH_OUT)/results*.png $(BENCH_OUT)/bench-lines.txt $(BENCH_PUB)/

# The per-exit budget (tests/bench/bench_budget.c): exit-to-entry gaps and
# memslot update latency with windows of 8 and 262144 pages against stock,
# over BUDGET_MIB of populated memory; the @@BUDGET lines go to
# $(BENCH_OUT)/budget.txt.
BUDGET_MIB	?= 1024
BUDGET_ROUNDS	?= 3
# BUDGET_ARMS=holes-262144,auto-262144: only these arms (default: all).
BUDGET_ARMS	?=
bench-budget: initramfs
	@mkdir -p $(BENCH_OUT)
	KP_MEM=3G tests/vm/run-vm.sh --kernel $(KIMAGE) \
		--initrd $(VMDIR)/initramfs.cpio.gz --mode test \
		--log $(VMDIR)/bench-budget.log --timeout $(BENCH_TIMEOUT) \
		--append "kp.tests=bench_budget kp.budget=$(BUDGET_MIB),$(BUDGET_ROUNDS) $(if $(BUDGET_ARMS),kp.budget_arms=$(BUDGET_ARMS))" | \
		tee $(BENCH_OUT)/budget.txt

# The guest_memfd row (tests/bench/bench_gmem.c, the 7.3 base): a
# chunked restore into a guest_memfd through its mmap under none, auto
# with window = chunk and KVM_PRE_FAULT_MEMORY per chunk, and the floor;
# the run's output goes to $(BENCH_OUT)/gmem.txt, its table to
# $(BENCH_OUT)/gmem.md; "make bench-gmem-publish" copies both to
# tests/bench/results/<base>/gmem/.
.PHONY: bench-gmem bench-gmem-publish
bench-gmem: initramfs
	@mkdir -p $(BENCH_OUT)
	tests/vm/run-vm.sh --kernel $(KIMAGE) \
		--initrd $(VMDIR)/initramfs.cpio.gz --mode test \
		--log $(VMDIR)/bench-gmem.log --timeout $(BENCH_TIMEOUT) \
		--append "kp.tests=bench_gmem" | tee $(BENCH_OUT)/gmem.txt
	@grep -a '^|' $(BENCH_OUT)/gmem.txt | tr -d '\r' > $(BENCH_OUT)/gmem.md

bench-gmem-publish:
	@mkdir -p tests/bench/results/$(KERNEL)/gmem
	cp $(BENCH_OUT)/gmem.txt $(BENCH_OUT)/gmem.md tests/bench/results/$(KERNEL)/gmem/

# The scale benchmark (issue 32, tests/bench/bench_scale.c): vCPUs,
# clones of one snapshot, memory size and access patterns (issue 49:
# nine patterns x BENCH_SCALE_PAT_CHUNKS, none / auto nr=C/4K /
# adaptive; the older random dimension runs with
# BENCH_SCALE_DIMS=...:random), in one
# boot of the test VM with KP_MEM=$(BENCH_SCALE_KP_MEM) (the 2 GiB
# restore needs its source and its guest memory).  Its @@SCALE lines go
# to $(BENCH_OUT)/scale/scale-lines.txt, tests/bench/scale-report.py
# makes $(BENCH_OUT)/scale/results.md (and results-scale.png with
# gnuplot) of them; "make bench-scale-publish"
# copies both to tests/bench/results/<base>/scale/.  The defaults take
# about 22 minutes under TCG on a loaded 2-core host (vcpus, clones and
# mem about 12, patterns about 10: 581 s on 2026-12-07); larger runs, e.g.
#   make bench-scale BENCH_SCALE_ROUNDS=5 BENCH_SCALE_VC_MIB=256 \
#        BENCH_SCALE_MEM=64:256:1024:2048:4096 BENCH_SCALE_KP_MEM=10G
# (each BENCH_SCALE_* option is a kp.scale= key of bench_scale.c; one
# dimension alone: BENCH_SCALE_DIMS=clones).
.PHONY: bench-scale bench-scale-report bench-scale-publish
BENCH_SCALE_DIMS	?= vcpus:clones:mem:patterns
BENCH_SCALE_ROUNDS	?= 3
BENCH_SCALE_VC_MIB	?= 64
BENCH_SCALE_VC_VCPUS	?= 1:2:4:8
BENCH_SCALE_VC_CHUNKS	?= 512:2048
BENCH_SCALE_VC_ZC	?= 1
BENCH_SCALE_CL_MIB	?= 64
BENCH_SCALE_CL_N	?= 1:2:4:8
BENCH_SCALE_CL_CHUNK	?= 512
BENCH_SCALE_MEM		?= 64:256:1024:2048
BENCH_SCALE_MEM_CHUNK	?= 2048
BENCH_SCALE_MEM_ROUNDS	?= 3
BENCH_SCALE_RND_MIB	?= 64
BENCH_SCALE_RND_CHUNK	?= 512
BENCH_SCALE_RND_ROUNDS	?= 5
BENCH_SCALE_PAT_MIB	?= 32
BENCH_SCALE_PAT_CHUNKS	?= 4:64:512:2048
BENCH_SCALE_PAT_ROUNDS	?= 5
BENCH_SCALE_PAT_AUTO512	?= 0
BENCH_SCALE_PAT_NAMES	?= seq:rand:seq-sparse:rand-sparse:stride2:stride8:stride64:reverse:hotset
BENCH_SCALE_KP_MEM	?= 6G
BENCH_SCALE_TIMEOUT	?= 3000
BENCH_SCALE_ARGS = dims=$(BENCH_SCALE_DIMS),rounds=$(BENCH_SCALE_ROUNDS),vc_mib=$(BENCH_SCALE_VC_MIB),vc_vcpus=$(BENCH_SCALE_VC_VCPUS),vc_chunks=$(BENCH_SCALE_VC_CHUNKS),vc_zc=$(BENCH_SCALE_VC_ZC),cl_mib=$(BENCH_SCALE_CL_MIB),cl_n=$(BENCH_SCALE_CL_N),cl_chunk=$(BENCH_SCALE_CL_CHUNK),mem_sizes=$(BENCH_SCALE_MEM),mem_chunk=$(BENCH_SCALE_MEM_CHUNK),mem_rounds=$(BENCH_SCALE_MEM_ROUNDS),rnd_mib=$(BENCH_SCALE_RND_MIB),rnd_chunk=$(BENCH_SCALE_RND_CHUNK),rnd_rounds=$(BENCH_SCALE_RND_ROUNDS),pat_mib=$(BENCH_SCALE_PAT_MIB),pat_chunks=$(BENCH_SCALE_PAT_CHUNKS),pat_rounds=$(BENCH_SCALE_PAT_ROUNDS),pat_auto512=$(BENCH_SCALE_PAT_AUTO512),pat_names=$(BENCH_SCALE_PAT_NAMES)
BENCH_SCALE_OUT	= $(BENCH_OUT)/scale
BENCH_SCALE_LOG	= $(VMDIR)/bench-scale.log

ifneq ($(filter bench-scale,$(MAKECMDGOALS)),)
initramfs: bench-bin
endif

bench-scale: python3-dep initramfs
	@mkdir -p $(BENCH_SCALE_OUT)
	@start=$$(date +%s); rc=0; \
	echo "make bench-scale $(BENCH_SCALE_ARGS) KP_MEM=$(BENCH_SCALE_KP_MEM)" > $(BENCH_SCALE_OUT)/command; \
	date -u '+%Y-%m-%d %H:%M UTC' > $(BENCH_SCALE_OUT)/date; \
	KP_MEM=$(BENCH_SCALE_KP_MEM) tests/vm/run-vm.sh --kernel $(KIMAGE) \
		--initrd $(VMDIR)/initramfs.cpio.gz --mode test \
		--log $(BENCH_SCALE_LOG) --timeout $(BENCH_SCALE_TIMEOUT) \
		--append "kp.tests=bench_scale kp.scale=$(BENCH_SCALE_ARGS)" || rc=$$?; \
	echo "$$(( $$(date +%s) - start ))" > $(BENCH_SCALE_OUT)/vm-seconds; \
	$(MAKE) --no-print-directory bench-scale-report || rc=1; \
	exit $$rc

bench-scale-report:
	@mkdir -p $(BENCH_SCALE_OUT)
	grep -a '@@SCALE' $(BENCH_SCALE_LOG) | tr -d '\r' > $(BENCH_SCALE_OUT)/scale-lines.txt
	python3 tests/bench/scale-report.py --lines $(BENCH_SCALE_OUT)/scale-lines.txt \
		--out $(BENCH_SCALE_OUT)/results.md --abi "$(ABI)" \
		--command "$$(cat $(BENCH_SCALE_OUT)/command 2>/dev/null)" \
		--date "$$(cat $(BENCH_SCALE_OUT)/date 2>/dev/null)" \
		--vm-seconds "$$(cat $(BENCH_SCALE_OUT)/vm-seconds 2>/dev/null)"

# BENCH_SCALE_PUB_AS=patterns publishes a run of some dimensions beside
# the full set: patterns.md and patterns-lines.txt.
BENCH_SCALE_PUB_AS	?=
bench-scale-publish:
	@mkdir -p tests/bench/results/$(KERNEL)/scale
ifeq ($(BENCH_SCALE_PUB_AS),)
	cp $(BENCH_SCALE_OUT)/results.md $(BENCH_SCALE_OUT)/scale-lines.txt \
		$(wildcard $(BENCH_SCALE_OUT)/results-scale.*) \
		tests/bench/results/$(KERNEL)/scale/
else
	cp $(BENCH_SCALE_OUT)/results.md \
		tests/bench/results/$(KERNEL)/scale/$(BENCH_SCALE_PUB_AS).md
	cp $(BENCH_SCALE_OUT)/scale-lines.txt \
		tests/bench/results/$(KERNEL)/scale/$(BENCH_SCALE_PUB_AS)-lines.txt
endif

# Record and replay (issue 50, tests/bench/bench_replay.c): a REAP-like
# workload (a seeded half of REPLAY_MIB MiB's pages, in short runs at
# random places) restored through userfaultfd, copy and zero-copy, at
# REPLAY_CHUNK KiB chunks, under none, auto-C, KVM_PRE_FAULT_MEMORY in
# the recorded order, the replay policy with the recorded order (also
# on a 10%-changed workload) and the floor, in one boot of the test VM.
# Its @@REPLAY lines go to $(BENCH_OUT)/replay/replay-lines.txt,
# tests/bench/replay-report.py makes $(BENCH_OUT)/replay/results.md of
# them; "make bench-replay-publish" copies both to
# tests/bench/results/<base>/replay/.  The defaults take a few minutes.
.PHONY: bench-replay bench-replay-report bench-replay-publish
REPLAY_MIB	?= 64
REPLAY_CHUNK	?= 64
REPLAY_ROUNDS	?= 5
REPLAY_SEED	?= 1
REPLAY_FRAC	?= 50
REPLAY_CHANGED	?= 10
REPLAY_MODES	?= copy:zc
REPLAY_ARMS	?= none:auto-C:prefault:replay:replay-changed:prefault-changed:floor:floor-mapped
REPLAY_PIN	?= 0
# REPLAY_LOOP_CPU=1: the populate loop in a thread of its own on CPU 1
# (default -1: the handler thread runs it between faults).
REPLAY_LOOP_CPU	?= -1
# REPLAY_NICE: the handler thread's nice value (default -10, as a VMM
# gives its restore thread: the vCPU it wakes does not preempt it).
REPLAY_NICE	?= -10
# REPLAY_REST=1 (the default): after the order, the populate loop goes on
# with the rest of memory, in address order (0: it stops).
REPLAY_REST	?= 1
REPLAY_TIMEOUT	?= 1500
REPLAY_ARGS = mib=$(REPLAY_MIB),chunk=$(REPLAY_CHUNK),rounds=$(REPLAY_ROUNDS),seed=$(REPLAY_SEED),frac=$(REPLAY_FRAC),changed=$(REPLAY_CHANGED),modes=$(REPLAY_MODES),arms=$(REPLAY_ARMS),pin=$(REPLAY_PIN),loop_cpu=$(REPLAY_LOOP_CPU),handler_nice=$(REPLAY_NICE),rest=$(REPLAY_REST)
REPLAY_OUT	= $(BENCH_OUT)/replay
REPLAY_LOG	= $(VMDIR)/bench-replay.log

bench-replay: python3-dep initramfs
	@mkdir -p $(REPLAY_OUT)
	@start=$$(date +%s); rc=0; \
	echo "make bench-replay $(REPLAY_ARGS)" > $(REPLAY_OUT)/command; \
	date -u '+%Y-%m-%d %H:%M UTC' > $(REPLAY_OUT)/date; \
	git log -1 --format=%h > $(REPLAY_OUT)/commit 2>/dev/null; \
	tests/vm/run-vm.sh --kernel $(KIMAGE) \
		--initrd $(VMDIR)/initramfs.cpio.gz --mode test \
		--log $(REPLAY_LOG) --timeout $(REPLAY_TIMEOUT) \
		--append "kp.tests=bench_replay kp.replay=$(REPLAY_ARGS)" || rc=$$?; \
	echo "$$(( $$(date +%s) - start ))" > $(REPLAY_OUT)/vm-seconds; \
	$(MAKE) --no-print-directory bench-replay-report || rc=1; \
	exit $$rc

bench-replay-report:
	@mkdir -p $(REPLAY_OUT)
	grep -a '@@REPLAY' $(REPLAY_LOG) | tr -d '\r' > $(REPLAY_OUT)/replay-lines.txt
	python3 tests/bench/replay-report.py --lines $(REPLAY_OUT)/replay-lines.txt \
		--out $(REPLAY_OUT)/results.md --abi "$(ABI)" \
		--command "$$(cat $(REPLAY_OUT)/command 2>/dev/null)" \
		--date "$$(cat $(REPLAY_OUT)/date 2>/dev/null)" \
		--commit "$$(cat $(REPLAY_OUT)/commit 2>/dev/null)" \
		--vm-seconds "$$(cat $(REPLAY_OUT)/vm-seconds 2>/dev/null)"

# REPLAY_PUB_AS=split publishes a variant beside the main set:
# split.md and split-lines.txt.
REPLAY_PUB_AS	?=
bench-replay-publish:
	@mkdir -p tests/bench/results/$(KERNEL)/replay
ifeq ($(REPLAY_PUB_AS),)
	cp $(REPLAY_OUT)/results.md $(REPLAY_OUT)/replay-lines.txt \
		tests/bench/results/$(KERNEL)/replay/
else
	cp $(REPLAY_OUT)/results.md \
		tests/bench/results/$(KERNEL)/replay/$(REPLAY_PUB_AS).md
	cp $(REPLAY_OUT)/replay-lines.txt \
		tests/bench/results/$(KERNEL)/replay/$(REPLAY_PUB_AS)-lines.txt
endif
