# SPDX-License-Identifier: GPL-2.0
#
# arm64: the same policies on the stage-2 MMU, tested under QEMU's
# emulated EL2 (-M virt,virtualization=on -cpu max).  KVM is built into
# the arm64 kernel, so the hook series (arch/arm64/<base>/series) goes
# into a whole cross-built kernel (scripts/arm64-kernel.sh).
#
#   make arm64-deps     the cross toolchain, QEMU and the source (as root)
#   make arm64-kernel   extract, patch, overlay, cross-build Image
#   make arm64-policy-modules  kvm-policy/adaptive against that build
#   make arm64-vm-test  boot Image under QEMU's EL2, run tests/arm64/*.c;
#                       the log is build/arm64/vm-test.txt
#   make check-arm64    all of the above and the static layer (cocci and
#                       checkpatch on the arm64 tree and hook series,
#                       scripts/arm64-static.sh), judged: exit 1 on any
#                       FAIL, a splat, a hang, a timeout or no summary line;
#                       the run's record is build/arm64/last-run.txt
#   make arm64-record   copy that record into the tracked
#                       tests/arm64/last-run.txt (a full run of a committed
#                       tree only; commit it yourself)
#
# The test VM: 2 vCPUs on Debian 13's QEMU with multi-threaded TCG
# (KP_OUTER=current|7.2, KP_TCG=multi|single, KP_SMP; tests/arm64/run-vm.sh).
# ARM64_PLANT="name...": build the kernel with tests/arm64/plants/<name>.patch
# (the next run without it rebuilds the files it touched); ARM64_TESTS=a,b:
# run only those programs in the VM.  Not part of `make check`, 9 minutes
# cold on a clean clone: tests/arm64/README.md gives the times.

.PHONY: arm64-deps arm64-kernel arm64-policy-modules arm64-vm-test check-arm64 \
	arm64-record

# KERNEL=7.3: Debian 13 backports' linux-source-7.3, from the kernel set
# that make deps KERNEL=7.3 unpacks (scripts/trixie-root.sh, $(BUILD)),
# or ARM64_SRC_TARBALL and ARM64_SRC_VERSION given; its own build
# directory, build/arm64-7.3, and config fragment.  Debian 12's gcc-12
# cross compiler builds it: the flags it lacks (-fmin-function-alignment)
# are tested for, and allnoconfig asks for nothing else gcc-12 lacks.
ARM64_COMMON_PKGS := gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
	qemu-system-arm bc flex bison libssl-dev cpio gzip make rsync \
	coccinelle git
ifeq ($(KERNEL),7.3)
ARM64_BASE := 7.3
ARM64_OUT := $(TOP)/build/arm64-7.3
ARM64_SRC_PKG := linux-source-7.3
ARM64_DEB_PKGS := $(ARM64_COMMON_PKGS)
ARM64_SRC_TARBALL ?= $(SRC_TARBALL)
ARM64_SRC_VERSION ?= $(SRC_VERSION)
ARM64_CONFIG := $(TOP)/arch/arm64/7.3/kvm-virt.config
ARM64_TRACKED := tests/arm64/last-run-7.3.txt
else
ARM64_BASE := 6.1
ARM64_OUT := $(TOP)/build/arm64
ARM64_SRC_PKG := linux-source-$(ARM64_BASE)
ARM64_DEB_PKGS := $(ARM64_COMMON_PKGS) $(ARM64_SRC_PKG)
ARM64_SRC_TARBALL := /usr/src/$(ARM64_SRC_PKG).tar.xz
ARM64_SRC_VERSION = $(shell dpkg-query -W -f='$${Version}' $(ARM64_SRC_PKG) 2>/dev/null)
ARM64_CONFIG := $(TOP)/arch/arm64/kvm-virt.config
ARM64_TRACKED := tests/arm64/last-run.txt
endif
ARM64_PLANT ?=
ARM64_TESTS ?=
ARM64_RECORD := $(ARM64_OUT)/last-run.txt

# The test VM's outer emulator is make deps' build/qemu-current (the same
# packages, so that a tree with both fetches it once).
arm64-deps:
	@scripts/deps.sh $(ARM64_DEB_PKGS)
	@[ "$(ARM64_BASE)" = 6.1 ] || [ -f "$(ARM64_SRC_TARBALL)" ] || \
		scripts/trixie-root.sh $(ARM64_BASE) $(BUILD)
	@scripts/qemu-current.sh $(TOP)/build/qemu-current qemu-system-x86 qemu-system-arm

arm64-kernel: arm64-deps
	@OUT=$(ARM64_OUT) SRC_PKG=$(ARM64_SRC_PKG) \
		SRC_VERSION="$(ARM64_SRC_VERSION)" \
		SRC_TARBALL="$(ARM64_SRC_TARBALL)" \
		CONFIG_FRAGMENT=$(ARM64_CONFIG) \
		KP_BASE=$(ARM64_BASE) JOBS=2 ARM64_PLANT="$(ARM64_PLANT)" \
		scripts/arm64-kernel.sh

# Policy modules, unchanged, as external modules of the arm64 build (KVM
# is built in: its exports are vmlinux's).  Copied first, as for x86, so
# the build leaves no objects in kvm-policy/.
# tests/vm/policy holds the hostile policy of prefetch_fuzz, fuzzpol.
ARM64_POLICY_DIRS := kvm-policy/adaptive tests/vm/policy
ARM64_MODULES = $(ARM64_OUT)/policy/adaptive/kvm-prefetch-adaptive.ko \
	$(ARM64_OUT)/policy/policy/kvm-prefetch-fuzzpol.ko

arm64-policy-modules: arm64-kernel
	@for d in $(ARM64_POLICY_DIRS); do \
		b=$(ARM64_OUT)/policy/$$(basename $$d); mkdir -p $$b; \
		rsync -rc $$d/ $$b/; \
		nice -n 10 $(MAKE) -s -C $(ARM64_OUT)/linux O=$(ARM64_OUT)/obj \
			ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- M=$$b \
			KVM_PREFETCH_INCLUDE=$(ARM64_OUT)/linux/include modules || exit 1; \
	done

arm64-vm-test: arm64-kernel arm64-policy-modules
	@MODULES="$(ARM64_MODULES)" UAPI=$(ARM64_OUT)/uapi/include tests/arm64/run-vm.sh $(ARM64_OUT)/Image $(ARM64_OUT)/vm \
		$(if $(ARM64_TESTS),kp.tests=$(ARM64_TESTS)) | \
		tee $(ARM64_OUT)/vm-test.txt

# The record (build/arm64/last-run.txt) is written whatever the result;
# the exit status is the verdict.
check-arm64: arm64-kernel arm64-policy-modules
	@MODULES="$(ARM64_MODULES)" UAPI=$(ARM64_OUT)/uapi/include \
		ARM64_OUT=$(ARM64_OUT) CHECKPATCH_IGNORE=$(CHECKPATCH_IGNORE) \
		ARM64_PLANT="$(ARM64_PLANT)" ARM64_TRACKED=$(ARM64_TRACKED) \
		scripts/arm64-check.sh $(ARM64_OUT)/Image $(ARM64_OUT)/vm \
		$(ARM64_RECORD) $(if $(ARM64_TESTS),kp.tests=$(ARM64_TESTS))

# The tracked record: the last check-arm64 run, if it ran every test on
# an unplanted kernel built from committed files (its header says so).
arm64-record:
	@f=$(ARM64_RECORD); [ -e $$f ] || { echo "arm64-record: no $$f (make check-arm64 first)" >&2; exit 1; }; \
	if grep -q '^# plant:\|^# tests:\|+changes' $$f; then \
		echo "arm64-record: $$f is of a planted, partial or uncommitted run:" >&2; \
		head -n 3 $$f >&2; exit 1; fi; \
	cp $$f $(TOP)/$(ARM64_TRACKED); \
	echo "arm64-record: $(ARM64_TRACKED) <- $$f ($$(tail -n 1 $$f))"

# The restore benchmark (tests/arm64/bench/bench_restore.c): the bench
# programs only (BENCH=1), in their own VM directory.  ARM64_BENCH_ROUNDS
# rounds (default 5).  The log is build/arm64/bench/run.txt; the results
# are tests/bench/results/arm64/results.md, written from it by hand.
ARM64_BENCH_ROUNDS ?= 5
.PHONY: arm64-bench
arm64-bench: arm64-kernel
	@mkdir -p $(ARM64_OUT)/bench
	@BENCH=1 UAPI=$(ARM64_OUT)/uapi/include tests/arm64/run-vm.sh \
		$(ARM64_OUT)/Image $(ARM64_OUT)/bench/vm \
		kp.tests=bench_restore kp.rounds=$(ARM64_BENCH_ROUNDS) | \
		tee $(ARM64_OUT)/bench/run.txt; \
		tail -n 1 $(ARM64_OUT)/bench/run.txt | grep -q ' 0 failed'
