# SPDX-License-Identifier: GPL-2.0
#
# kvm-prefetch: build Debian 12's KVM with our hooks, boot it in QEMU, test.
#
#   make deps      install the Debian packages we need (as root)
#   make modules   extract, patch, overlay and build kvm.ko & co. out of tree
#   make unit      userspace unit tests
#   make vm-test   boot the modules in a QEMU (TCG, nested SVM) guest, run tests
#   make selftests KVM's own selftests in the guest, stock modules vs ours
#   make check     all of the above plus static checks (README's test command)
#   make demo      a short, readable tour (README's main command)
#   make cost      instruction counts of the fault path (tests/cost/cost.mk)
#   make patches   our change as a format-patch series against Debian's source
#   make check-debug  the series in a full debug kernel (lockdep, KASAN, ...)
#   make clean
#
# The recipes that are more than a few lines are scripts in scripts/;
# scripts/layout.sh says where each of our files lives in the kernel tree.

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DELETE_ON_ERROR:
.PHONY: all deps modules unit vm-test check demo patches clean static \
	tests-vm initramfs versions check-versions check-bisect kernel-deps deps-test overlay uapi policy-modules check-debug \
	bpf-info

TOP	:= $(CURDIR)

# KERNEL=6.1 (the default, Debian 12's own kernel), KERNEL=6.12 (from
# Debian 12's security suite) or KERNEL=7.3 (from Debian 13's backports
# suite, x86 only): the base whose source, image and headers we build
# and test against.  Each base has its hook series and its own files in
# arch/x86/<base>/ and its own build directory; 6.1's is build/.
KERNEL	?= 6.1
ifeq ($(KERNEL),6.1)
BUILD	:= $(TOP)/build
IMG_PKG	:= linux-image-amd64
else ifeq ($(KERNEL),6.12)
BUILD	:= $(TOP)/build/6.12
IMG_PKG	:= linux-image-6.12-amd64
# 6.12's <asm/kvm.h> includes <linux/bits.h>, which Debian 12's
# linux-libc-dev (6.1) does not have: the test programs get 6.12's.  It
# is kept out of the kernel tree, where it would hide the kernel's own
# <linux/bits.h> from the module build.
BASE_UAPI_HDRS := linux/bits.h
else ifeq ($(KERNEL),7.3)
BUILD	:= $(TOP)/build/7.3
# Debian 12 cannot build modules for 7.3 (gcc-14 flags, glibc 2.38 host
# tools, pahole 1.26): its kernel set and a Debian 13 build root are
# unpacked into $(BUILD) (scripts/trixie-root.sh), and kbuild runs in
# that root (scripts/in-root.sh), at the same paths.  The image
# metapackage is the newest linux-image-7.3.*-amd64 of the archive.
IMG_PKG	:= linux-image-$(KERNEL).*-amd64
IN_ROOT	:= $(TOP)/scripts/in-root.sh $(BUILD)/root
# As on 6.12 (<asm/kvm.h> includes <linux/bits.h>).
BASE_UAPI_HDRS := linux/bits.h
# 7.3's KVM selftests also build the cgroup and vfio selftests'
# libraries; the latter include headers of drivers (symlinks in tools/).
BASE_SRC_PATHS := tools/testing/selftests/cgroup/lib \
	tools/testing/selftests/clone3 tools/testing/selftests/vfio/lib \
	include/linux/pci_ids.h drivers/dma/idxd/registers.h \
	drivers/dma/ioat/hw.h drivers/dma/ioat/registers.h \
	$(addprefix drivers/net/ethernet/intel/igb/,e1000_regs.h e1000_82575.h e1000_defines.h)
else
$(error KERNEL=$(KERNEL): the supported bases are 6.1, 6.12 and 7.3)
endif
SRC_PKG	:= linux-source-$(KERNEL)
# scripts/layout.sh picks the base's series and files from this.
export KP_BASE := $(KERNEL)
PRISTINE := $(BUILD)/pristine
STAGE	:= $(BUILD)/stage
TREE	:= $(BUILD)/kvm
VMDIR	?= $(BUILD)/vm
# NOBUILD=1: use the modules already built (parallel test runs with their
# own VMDIR must not rebuild the shared tree).  TESTS="a b": run only these
# in-VM test programs.
MODULES_DEP := $(if $(NOBUILD),,modules)
TESTS ?=
# TEST_TIMEOUT: seconds after which a hung in-VM test program is killed,
# with its stacks printed (tests/vm/init); the longest, prefetch_fuzz,
# takes 60-180 s.
TEST_TIMEOUT ?= 600
# VM_RETRY=1 (make check sets it): a test VM killed by run-vm.sh's
# watchdog (stall or timeout) with no test failed boots once more.
VM_RETRY ?=
# ENGINE=fault|batch: the prefetch engine our kvm.ko runs with in the test
# VM (kvm.prefetch_engine; unset: the module's default, batch).
ENGINE ?=

# The kernel tree pieces we extract: the KVM code, the headers whose
# layout we change and the scripts our static checks use.
SRC_PATHS := arch/x86/kvm virt/kvm \
	include/linux/kvm_host.h include/linux/kvm_types.h \
	include/uapi/linux/kvm.h \
	arch/x86/include/asm/kvm_host.h arch/x86/include/uapi/asm/kvm.h \
	scripts/checkpatch.pl scripts/spelling.txt \
	scripts/const_structs.checkpatch \
	tools/testing/selftests/kvm tools/testing/selftests/lib.mk \
	tools/testing/selftests/kselftest.h tools/include tools/arch/x86/include \
	tools/lib tools/scripts tools/build \
	tools/testing/selftests/kselftest_harness.h tools/testing/selftests/rseq \
	scripts/subarch.include scripts/bpf_doc.py $(BASE_SRC_PATHS)

# The kernel set itself (image, headers, source of one version) is not
# in this list: scripts/kernel-set.sh installs it ("kernel-deps").
DEB_PKGS := qemu-system-x86 busybox-static coccinelle sparse cpio gcc make bc \
	flex bison libelf-dev libssl-dev xz-utils patch rsync kmod \
	linux-libc-dev libc6-dev gnuplot-nox git clang zlib1g-dev python3

# Versions are derived from what apt installed, never hard-coded.  These
# are recursive so that they are evaluated after "deps" ran.
ifeq ($(IN_ROOT),)
ABI = $(shell dpkg-query -W -f='$${Depends}' $(IMG_PKG) 2>/dev/null | \
	sed -n 's/.*linux-image-\([0-9][^ ,]*\).*/\1/p')
SRC_VERSION = $(shell dpkg-query -W -f='$${Version}' $(SRC_PKG) 2>/dev/null)
IMG_VERSION = $(shell dpkg-query -W -f='$${Version}' linux-image-$(ABI) 2>/dev/null)
HDR_VERSION = $(shell dpkg-query -W -f='$${Version}' linux-headers-$(ABI) 2>/dev/null)
KHEADERS = /usr/src/linux-headers-$(ABI)
KIMAGE = /boot/vmlinuz-$(ABI)
KMODDIR = /lib/modules/$(ABI)
SRC_TARBALL = /usr/src/$(SRC_PKG).tar.xz
else
# From what scripts/trixie-root.sh unpacked ($(BUILD)/kernel-set).
# KHEADERS is the path inside the root, KHEADERS_DIR the same outside.
kset = $(shell sed -n 's/^$(1): //p' $(BUILD)/kernel-set 2>/dev/null)
ABI = $(call kset,abi)
SRC_VERSION = $(call kset,src_version)
IMG_VERSION = $(call kset,img_version)
HDR_VERSION = $(call kset,hdr_version)
KHEADERS = $(call kset,kheaders)
KIMAGE = $(call kset,kimage)
KMODDIR = $(call kset,kmoddir)
SRC_TARBALL = $(call kset,src_tarball)
endif
KHEADERS_DIR = $(if $(IN_ROOT),$(BUILD)/root)$(KHEADERS)

all: modules

# qemu-plugin.h of the installed QEMU, for the instruction meter of
# "make cost" (from Debian's qemu source package; see the script).
# The test VM's outer emulator: Debian 13's current QEMU, unpacked into
# build/qemu-current beside Debian 12's QEMU 7.2 (scripts/qemu-current.sh;
# tests/vm/run-vm.sh, KP_OUTER=current|7.2, says how it is chosen).
deps: kernel-deps
	@scripts/deps.sh $(DEB_PKGS)
	@scripts/qemu-plugin-header.sh $(TOP)/build/qemu-plugin
	@scripts/qemu-current.sh $(TOP)/build/qemu-current qemu-system-x86 qemu-system-arm

# The base's image, its headers and linux-source-$(KERNEL), all of the
# version of the image $(IMG_PKG) boots, even while the archive serves a
# newer source (scripts/kernel-set.sh; tests/deps/ tests it).
kernel-deps:
	@$(if $(IN_ROOT),scripts/trixie-root.sh $(KERNEL) $(BUILD),scripts/kernel-set.sh $(KERNEL) $(IMG_PKG))

versions: deps
	@$(MAKE) --no-print-directory check-versions

# kernel-deps against fake archives (skewed, incomplete, not root).
deps-test:
	@mkdir -p $(RESULTS)
	tests/deps/run.sh $(BUILD)/deps-test | tee $(RESULTS)/deps-test.txt

check-versions:
	@[ -n "$(ABI)" ] || { echo "cannot derive the kernel ABI name from $(IMG_PKG)" >&2; exit 1; }
	@if [ "$(SRC_VERSION)" != "$(IMG_VERSION)" ] || \
	    [ "$(SRC_VERSION)" != "$(HDR_VERSION)" ]; then \
		echo "version mismatch: $(SRC_PKG) $(SRC_VERSION)," \
		     "linux-image-$(ABI) $(IMG_VERSION)," \
		     "linux-headers-$(ABI) $(HDR_VERSION)" >&2; \
		echo "make kernel-deps installs the set (as root)$(if $(IN_ROOT),;" \
		     "TRIXIE_ROOT_REFRESH=1 fetches it again),$(if $(IN_ROOT),, or:" \
		     "apt-get install --allow-downgrades $(SRC_PKG)=$(IMG_VERSION)" \
		     "linux-headers-$(ABI)=$(IMG_VERSION))" >&2; \
		exit 1; \
	fi
	@echo "kernel: ABI $(ABI), Debian version $(SRC_VERSION)"

# Pristine extraction, redone only when the source package or the list of
# extracted paths changes.
SRC_PATHS_ID := $(shell echo $(SRC_PATHS) $(BASE_UAPI_HDRS) | md5sum | cut -c1-8)
UAPI_BASE := $(BUILD)/uapi-base
$(BUILD)/.pristine-%:
	rm -rf $(PRISTINE) $(UAPI_BASE) $(BUILD)/.pristine-*
	mkdir -p $(PRISTINE)
	tar -xJf $(SRC_TARBALL) -C $(PRISTINE) --strip-components=1 \
		$(addprefix $(SRC_PKG)/,$(SRC_PATHS))
	$(if $(BASE_UAPI_HDRS),mkdir -p $(UAPI_BASE) && \
		tar -xJf $(SRC_TARBALL) -C $(UAPI_BASE) --strip-components=3 \
		$(addprefix $(SRC_PKG)/include/uapi/,$(BASE_UAPI_HDRS)))
	touch $@

# The stage is rebuilt from scratch every time (a few seconds): pristine
# copy, hook patches, our files.  Only files whose contents changed are
# then synced into the build tree, so kbuild recompiles only what changed.
modules: versions $(BUILD)/.pristine-$(SRC_VERSION)-$(SRC_PATHS_ID)
	rm -rf $(STAGE)
	cp -a $(PRISTINE) $(STAGE)
	@scripts/apply-series.sh $(STAGE)
	@$(MAKE) --no-print-directory overlay
	scripts/write-kbuild.sh arch/x86/Kbuild.oot $(STAGE)/arch/x86/kvm/Makefile \
		> $(STAGE)/arch/x86/kvm/Kbuild
	mkdir -p $(TREE)
	rsync -rc $(STAGE)/ $(TREE)/
	$(IN_ROOT) $(MAKE) -C $(KHEADERS) M=$(TREE)/arch/x86/kvm -j$(shell nproc) modules
	@mkdir -p $(BUILD)/modules
	@for m in kvm kvm-amd kvm-intel; do \
		cmp -s $(TREE)/arch/x86/kvm/$$m.ko $(BUILD)/modules/$$m.ko || \
			cp $(TREE)/arch/x86/kvm/$$m.ko $(BUILD)/modules/; \
	done
	@$(MAKE) --no-print-directory policy-modules uapi
	@ls -l $(BUILD)/modules
	@$(MAKE) --no-print-directory bpf-info

# Policy modules are built like a third party's: against the headers
# package plus <linux/kvm_prefetch.h>, linked to kvm.ko's exports only.
# Kbuild does not relink them when kvm.ko's Module.symvers changes (an
# export's CRC covers the types it takes, struct kvm among them): a copy
# of the symvers they were built with tells, and touching their sources
# rebuilds them.
POLICY_DIRS := kvm-policy/adaptive tests/vm/policy
KVM_SYMVERS = $(TREE)/arch/x86/kvm/Module.symvers
policy-modules:
	@for d in $(POLICY_DIRS); do \
		b=$(BUILD)/policy/$$(echo $$d | tr / -); mkdir -p $$b; \
		rsync -rc $$d/ $$b/; \
		cmp -s $(KVM_SYMVERS) $$b/kvm.symvers || touch $$b/*.c; \
		$(IN_ROOT) $(MAKE) -C $(KHEADERS) M=$$b KVM_PREFETCH_INCLUDE=$(TREE)/include \
			KBUILD_EXTRA_SYMBOLS=$(KVM_SYMVERS) \
			modules; \
		cp $(KVM_SYMVERS) $$b/kvm.symvers; \
		for m in $$b/*.ko; do \
			cmp -s $$m $(BUILD)/modules/$$(basename $$m) || \
				cp $$m $(BUILD)/modules/; \
		done; \
	done

# The patched uAPI headers as userspace sees them (headers_install), for
# the test programs: what a VMM built against our kernel would include.
UAPI_HDRS := linux/kvm.h linux/kvm_prefetch.h asm/kvm.h $(BASE_UAPI_HDRS)
uapi:
	@mkdir -p $(BUILD)/uapi/linux $(BUILD)/uapi/asm
	@cd $(KHEADERS_DIR) && for h in $(UAPI_HDRS); do \
		case $$h in asm/*) src=$(TREE)/arch/x86/include/uapi/$$h ;; \
		*) src=$(TREE)/include/uapi/$$h ;; esac; \
		[ -e $$src ] || src=$(UAPI_BASE)/$$h; \
		$(IN_ROOT) sh scripts/headers_install.sh $$src $(BUILD)/uapi/$$h.new; \
		cmp -s $(BUILD)/uapi/$$h.new $(BUILD)/uapi/$$h && \
			rm $(BUILD)/uapi/$$h.new || mv $(BUILD)/uapi/$$h.new $(BUILD)/uapi/$$h; \
	done

# Our own files, where they live upstream (scripts/layout.sh).
overlay:
	@scripts/layout.sh overlay $(STAGE)

# ---------------------------------------------------------------- tests

# Test programs see the patched uapi headers, as a VMM built against our
# kernel would (the stage holds them right after "make modules").
CFLAGS_TEST := -O2 -g -Wall -Wextra -Wno-unused-parameter -static -pthread \
	-I$(TOP)/tests/vm/lib -I$(BUILD)/uapi
VM_TEST_SRCS := $(wildcard tests/vm/*.c)
VM_TEST_BINS := $(patsubst tests/vm/%.c,$(VMDIR)/tests/%,$(VM_TEST_SRCS))
VM_LIB_SRCS := $(wildcard tests/vm/lib/*.c)
VM_LIB_HDRS := $(wildcard tests/vm/lib/*.h) $(addprefix $(BUILD)/uapi/,$(UAPI_HDRS))

$(VMDIR)/tests/%: tests/vm/%.c $(VM_LIB_SRCS) $(VM_LIB_HDRS)
	@mkdir -p $(dir $@)
	gcc $(CFLAGS_TEST) -o $@ $< $(VM_LIB_SRCS)

tests-vm: $(MODULES_DEP)
	@$(MAKE) --no-print-directory $(VM_TEST_BINS) $(BPF_BINS)

# ---- BPF policies (sysfs-docs/writing-a-policy.rst)
# A module may register a struct_ops type since Linux 6.9, so only the
# 6.12 base has them (arch/x86/6.12/kvm-policy/prefetch_bpf.c).  The
# loader needs libbpf 1.4 or later for a module's type; Debian 12 has
# 1.1, so libbpf is built from the base's own source (tools/lib/bpf).
# The test VM gets the objects in /bpf and the loader as
# /bin/kvm-prefetch (the operator command with "bpf").
LIBBPF := $(BUILD)/libbpf
BPF_SRCS := $(wildcard kvm-policy/bpf/*.bpf.c tests/vm/bpf/*.bpf.c)
BPF_CFLAGS := -O2 -g -Wall -Werror -target bpf -I$(LIBBPF)/root/usr/include \
	-I$(TOP)/kvm-policy/bpf -I/usr/include/$(shell gcc -print-multiarch)
ifneq ($(wildcard arch/x86/$(KERNEL)/kvm-policy/prefetch_bpf.c),)
BPF_BINS := $(patsubst %.bpf.c,$(VMDIR)/bpf/%.bpf.o,$(notdir $(BPF_SRCS))) \
	$(VMDIR)/bin/kvm-prefetch
else
BPF_BINS :=
endif

$(LIBBPF)/libbpf.a: $(BUILD)/.pristine-$(SRC_VERSION)-$(SRC_PATHS_ID)
	rm -rf $(LIBBPF) && mkdir -p $(LIBBPF)/src/scripts
	cp -a $(PRISTINE)/tools $(LIBBPF)/src/
	cp $(PRISTINE)/scripts/bpf_doc.py $(LIBBPF)/src/scripts/
	$(MAKE) -C $(LIBBPF)/src/tools/lib/bpf OUTPUT=$(LIBBPF)/ \
		DESTDIR=$(LIBBPF)/root prefix=/usr install_headers $@ > $(LIBBPF)/build.log 2>&1 || \
		{ cat $(LIBBPF)/build.log; exit 1; }

$(VMDIR)/bpf/%.bpf.o: kvm-policy/bpf/%.bpf.c kvm-policy/bpf/kvm_prefetch.bpf.h $(LIBBPF)/libbpf.a
	@mkdir -p $(dir $@)
	clang $(BPF_CFLAGS) -c $< -o $@

# bpf_adaptive builds the module's stream logic from its header.
$(VMDIR)/bpf/adaptive.bpf.o: kvm-policy/adaptive/adaptive_logic.h

$(VMDIR)/bpf/%.bpf.o: tests/vm/bpf/%.bpf.c kvm-policy/bpf/kvm_prefetch.bpf.h $(LIBBPF)/libbpf.a
	@mkdir -p $(dir $@)
	clang $(BPF_CFLAGS) -c $< -o $@

$(VMDIR)/bin/kvm-prefetch: packaging/kvm-prefetch/kvm-prefetch.c packaging/kvm-prefetch/kp-bpf.c \
		$(LIBBPF)/libbpf.a $(VM_LIB_HDRS)
	@mkdir -p $(dir $@)
	gcc -O2 -g -Wall -Wextra -Wno-unused-parameter -static -I$(BUILD)/uapi \
		-DKP_HAVE_LIBBPF -DKP_VERSION='"vm-test"' -I$(LIBBPF)/root/usr/include \
		-o $@ $< $(LIBBPF)/libbpf.a -lelf -lz

# What the base can do, said plainly.  On 7.3 kvm.ko's module BTF holds
# several copies of struct kvm (its vmlinux BTF has it with KVM-private
# members incomplete, which BTF dedup cannot complete), so a struct_ops
# type of kvm.ko cannot register (sysfs-docs/testing.rst).
BPF_WHY = $(if $(filter 7.3,$(KERNEL)),kvm.ko's module BTF has several copies of struct kvm and the struct_ops type would not register (sysfs-docs/testing.rst),they need Linux 6.9 or later (a module registering a struct_ops type); build with KERNEL=6.12)
bpf-info:
	@if [ -n "$(BPF_BINS)" ]; then \
		echo "BPF policies: built for $(KERNEL) (struct_ops type kvm_prefetch_ops in kvm.ko)"; \
	else \
		echo "BPF policies: not on the $(KERNEL) base: $(BPF_WHY)"; \
	fi

RESULTS ?= $(BUILD)/results
comma := ,
space := $(subst ,, )

# The unit tests' shim takes kernel helpers from the extracted tools/include.
unit: versions $(BUILD)/.pristine-$(SRC_VERSION)-$(SRC_PATHS_ID)
	@mkdir -p $(RESULTS)
	@$(MAKE) --no-print-directory -C tests/unit BUILD=$(BUILD)/unit \
		KERNEL_TOOLS=$(PRISTINE)/tools | tee $(RESULTS)/unit.txt

initramfs: $(MODULES_DEP) tests-vm
	KMODDIR=$(KMODDIR) BUILD=$(BUILD) VMDIR=$(VMDIR) tests/vm/mkinitramfs.sh

vm-test: initramfs
	@mkdir -p $(RESULTS)
	tests/vm/run-vm.sh --kernel $(KIMAGE) --initrd $(VMDIR)/initramfs.cpio.gz \
		--mode test --log $(VMDIR)/test.log \
		--append "kp.test_timeout=$(TEST_TIMEOUT)" $(if $(VM_RETRY),--retry-wedged) \
		$(if $(TESTS),--append "kp.tests=$(subst $(space),$(comma),$(strip $(TESTS)))") \
		$(if $(ENGINE),--append "kp.engine=$(ENGINE)") | \
		tee $(RESULTS)/vm-test.txt

# The race tests on multi-threaded TCG, the test VM's two vCPUs really
# running at the same time.  Not in "make check": there nested guests go
# wrong on Debian's stock modules too (sysfs-docs/testing.rst, "The outer
# emulator"); CONTROL=none|stock runs prefetch_churn's controls.
VM_RACE_TESTS := prefetch_churn prefetch_init_race prefetch_apf_race \
	prefetch_overlap prefetch_policy_ioctl
.PHONY: vm-race
vm-race: initramfs
	@mkdir -p $(RESULTS)
	KP_TCG=multi tests/vm/run-vm.sh --kernel $(KIMAGE) \
		--initrd $(VMDIR)/initramfs.cpio.gz --mode test \
		--log $(VMDIR)/race.log \
		--append "kp.tests=$(subst $(space),$(comma),$(strip $(VM_RACE_TESTS)))" \
		$(if $(ENGINE),--append "kp.engine=$(ENGINE)") \
		$(if $(CONTROL),--append "kp.churn.$(CONTROL)=1") | \
		tee $(RESULTS)/vm-race.txt

demo: initramfs
	tests/vm/run-vm.sh --kernel $(KIMAGE) --initrd $(VMDIR)/initramfs.cpio.gz \
		--mode demo --log $(VMDIR)/demo.log --quiet

include tests/bench/bench.mk
include tests/cost/cost.mk

static: modules cocci policy-build sparse checkpatch

# Every layer ends its output with "N passed, N failed[, N skipped]";
# the last line of "make check" adds them up.  Both bases: 6.1 (with the
# unit tests, which do not depend on the base, and the Debian packages,
# which are built for both), then 6.12.  scripts/check.sh runs the test
# VMs in one stream and the builds and static checks in another, times
# each layer, and prints the summary (each layer labelled with its base).
check:
	@scripts/check.sh

# ---------------------------------------------------------------- debug

# make check-debug: the `make patches` series applied with git am to the
# whole of Debian's tree, built as a debug kernel (lockdep, PROVE_RCU,
# KASAN, KFENCE, DEBUG_ATOMIC_SLEEP, DEBUG_LIST, kmemleak), booted twice
# in the test VM: the in-VM tests, then KVM's selftests (stock modules,
# then ours) (scripts/check-debug.sh, tests/debug/).  The kernel is
# cached by the hash of tree and config.  PLANT="<name>..." applies
# tests/debug/plants/<name>.patch on top; TESTS="a b" runs a subset
# (in-VM programs and/or selftests).  A full run without PLANT or TESTS
# refreshes tests/debug/last-run.txt.  The debug kernel is slower: a
# selftest gets DEBUG_ST_TIMEOUT s (SELFTESTS_TIMEOUT on the command line
# wins), the selftests boot DEBUG_ST_VM_TIMEOUT s (or ST_VM_TIMEOUT).
# 6.1 only.  Not part of `make check` (sysfs-docs/testing.rst says why).
DEBUG_VMDIR := $(BUILD)/debug/vm
PLANT ?=
DEBUG_ST_TIMEOUT ?= 600
DEBUG_ST_VM_TIMEOUT ?= 10800
override_from = $(if $(filter command line environment,$(origin $(1))),$($(1)),$(2))
check-debug: patches selftests-build
	@[ "$(KERNEL)" = 6.1 ] || { echo "check-debug: KERNEL=6.1 only" >&2; exit 1; }
	@$(MAKE) --no-print-directory NOBUILD=1 VMDIR=$(DEBUG_VMDIR) tests-vm
	@mkdir -p $(RESULTS)
	@TOP=$(TOP) BUILD=$(BUILD) SRC_PKG=$(SRC_PKG) SRC_VERSION=$(SRC_VERSION) \
		SRC_TARBALL=$(SRC_TARBALL) PRISTINE=$(PRISTINE) \
		VMDIR=$(DEBUG_VMDIR) PLANT="$(PLANT)" TESTS="$(TESTS)" \
		ST_BIN=$(ST_OUT)/bin ST_KNOWN=$(TOP)/$(ST_KNOWN) \
		SELFTESTS_TIMEOUT=$(call override_from,SELFTESTS_TIMEOUT,$(DEBUG_ST_TIMEOUT)) \
		ST_VM_TIMEOUT=$(call override_from,ST_VM_TIMEOUT,$(DEBUG_ST_VM_TIMEOUT)) \
		RECORD=$(if $(TESTS)$(PLANT),,$(TOP)/tests/debug/last-run.txt) \
		scripts/check-debug.sh | tee $(RESULTS)/check-debug.txt

# ---------------------------------------------------------------- patches

# Our change as a mail-ready series against Debian's pristine source
# (scripts/make-patches.sh says how it is cut).
PG := $(BUILD)/patches-git
patches: modules
	scripts/make-patches.sh $(PRISTINE) $(PG) $(BUILD)/patches $(SRC_VERSION)

# Every prefix of that series builds, without a compiler warning: each
# step checked out into one tree and built incrementally
# (scripts/patches-bisect.sh).  The tree is kept, so a second run
# recompiles only what the series changed since.  A base with a build
# root (7.3) builds each step in it, as "make modules" does ($(IN_ROOT)).
patches-bisect: $(if $(NOBUILD),,patches)
	@mkdir -p $(RESULTS)
	@IN_ROOT="$(IN_ROOT)" scripts/patches-bisect.sh $(PG) $(BUILD)/bisect $(KHEADERS) \
		$(TOP)/arch/x86/Kbuild.oot | tee $(RESULTS)/patches-bisect.txt

# patches-bisect of every base: make check runs it for 7.3, the primary
# series; the backports' (6.1, 6.12) take 13 minutes more on 2 cores.
check-bisect:
	@for k in 6.1 6.12 7.3; do \
		$(MAKE) --no-print-directory KERNEL=$$k modules patches-bisect || exit 1; \
	done

clean:
	rm -rf $(BUILD)
	@$(MAKE) --no-print-directory -C tests/unit clean BUILD=$(BUILD)/unit 2>/dev/null || true

include cocci/cocci.mk
include tests/selftests/selftests.mk
include packaging/deb.mk
include tests/qemu/qemu.mk
include tests/arm64/arm64.mk
