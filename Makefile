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
#   make patches   our change as a format-patch series against Debian's source
#   make clean
#
# The recipes that are more than a few lines are scripts in scripts/;
# scripts/layout.sh says where each of our files lives in the kernel tree.

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DELETE_ON_ERROR:
.PHONY: all deps modules unit vm-test check demo patches clean static \
	tests-vm initramfs versions overlay uapi policy-modules

TOP	:= $(CURDIR)
BUILD	:= $(TOP)/build
PRISTINE := $(BUILD)/pristine
STAGE	:= $(BUILD)/stage
TREE	:= $(BUILD)/kvm
VMDIR	?= $(BUILD)/vm
# NOBUILD=1: use the modules already built (parallel test runs with their
# own VMDIR must not rebuild the shared tree).  TESTS="a b": run only these
# in-VM test programs.
MODULES_DEP := $(if $(NOBUILD),,modules)
TESTS ?=

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
	scripts/subarch.include

DEB_PKGS := linux-source-6.1 linux-image-amd64 linux-headers-amd64 \
	qemu-system-x86 busybox-static coccinelle sparse cpio gcc make bc \
	flex bison libelf-dev libssl-dev xz-utils patch rsync kmod \
	linux-libc-dev libc6-dev gnuplot-nox git

# Versions are derived from what apt installed, never hard-coded.  These
# are recursive so that they are evaluated after "deps" ran.
ABI = $(shell dpkg-query -W -f='$${Depends}' linux-image-amd64 2>/dev/null | \
	sed -n 's/.*linux-image-\([0-9][^ ,]*\).*/\1/p')
SRC_VERSION = $(shell dpkg-query -W -f='$${Version}' linux-source-6.1 2>/dev/null)
IMG_VERSION = $(shell dpkg-query -W -f='$${Version}' linux-image-$(ABI) 2>/dev/null)
HDR_VERSION = $(shell dpkg-query -W -f='$${Version}' linux-headers-$(ABI) 2>/dev/null)
KHEADERS = /usr/src/linux-headers-$(ABI)
KIMAGE = /boot/vmlinuz-$(ABI)
KMODDIR = /lib/modules/$(ABI)
SRC_TARBALL = /usr/src/linux-source-6.1.tar.xz

PATCHES := $(shell sed -e 's/\#.*//' -e '/^[[:space:]]*$$/d' arch/x86/series)

all: modules

deps:
	@missing=""; \
	for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
			grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing:$$missing"; \
		if [ "$$(id -u)" != 0 ]; then \
			echo "deps: missing packages and not root" >&2; exit 1; \
		fi; \
		apt-get update -qq; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $$missing >/dev/null; \
	fi

versions: deps
	@[ -n "$(ABI)" ] || { echo "cannot derive the kernel ABI name from linux-image-amd64" >&2; exit 1; }
	@if [ "$(SRC_VERSION)" != "$(IMG_VERSION)" ] || \
	    [ "$(SRC_VERSION)" != "$(HDR_VERSION)" ]; then \
		echo "version mismatch: linux-source-6.1 $(SRC_VERSION)," \
		     "linux-image-$(ABI) $(IMG_VERSION)," \
		     "linux-headers-$(ABI) $(HDR_VERSION)" >&2; \
		echo "install matching versions (apt-get install linux-source-6.1 linux-image-amd64 linux-headers-amd64)" >&2; \
		exit 1; \
	fi
	@echo "kernel: ABI $(ABI), Debian version $(SRC_VERSION)"

# Pristine extraction, redone only when the source package or the list of
# extracted paths changes.
SRC_PATHS_ID := $(shell echo $(SRC_PATHS) | md5sum | cut -c1-8)
$(BUILD)/.pristine-%:
	rm -rf $(PRISTINE) $(BUILD)/.pristine-*
	mkdir -p $(PRISTINE)
	tar -xJf $(SRC_TARBALL) -C $(PRISTINE) --strip-components=1 \
		$(addprefix linux-source-6.1/,$(SRC_PATHS))
	touch $@

# The stage is rebuilt from scratch every time (a few seconds): pristine
# copy, hook patches, our files.  Only files whose contents changed are
# then synced into the build tree, so kbuild recompiles only what changed.
modules: versions $(BUILD)/.pristine-$(SRC_VERSION)-$(SRC_PATHS_ID)
	rm -rf $(STAGE)
	cp -a $(PRISTINE) $(STAGE)
	@for p in $(PATCHES); do \
		if ! out=$$(patch -p1 -d $(STAGE) --forward --batch \
				--no-backup-if-mismatch -r - < arch/x86/$$p 2>&1); then \
			echo "$$out" >&2; \
			echo "ERROR: patch arch/x86/$$p does not apply:" >&2; \
			echo "$$out" | awk '/^patching file / { f = $$3 } \
				/FAILED|can.t find file|malformed/ { print "  file: " f ": " $$0 }' >&2; \
			exit 1; \
		fi; \
	done
	@$(MAKE) --no-print-directory overlay
	{ cat arch/x86/Kbuild.oot; \
	  sed -e 's|$$(srctree)/arch/x86/kvm|$$(src)|g' \
	      -e 's|$$(srctree)/virt/kvm|$$(KVM_TREE)/virt/kvm|g' \
	      $(STAGE)/arch/x86/kvm/Makefile; } > $(STAGE)/arch/x86/kvm/Kbuild
	mkdir -p $(TREE)
	rsync -rc $(STAGE)/ $(TREE)/
	$(MAKE) -C $(KHEADERS) M=$(TREE)/arch/x86/kvm -j$(shell nproc) modules
	@mkdir -p $(BUILD)/modules
	@for m in kvm kvm-amd kvm-intel; do \
		cmp -s $(TREE)/arch/x86/kvm/$$m.ko $(BUILD)/modules/$$m.ko || \
			cp $(TREE)/arch/x86/kvm/$$m.ko $(BUILD)/modules/; \
	done
	@$(MAKE) --no-print-directory policy-modules uapi
	@ls -l $(BUILD)/modules

# Policy modules are built like a third party's: against the headers
# package plus <linux/kvm_prefetch.h>, linked to kvm.ko's exports only.
POLICY_DIRS := kvm-policy/adaptive tests/vm/policy
policy-modules:
	@for d in $(POLICY_DIRS); do \
		b=$(BUILD)/policy/$$(echo $$d | tr / -); mkdir -p $$b; \
		rsync -rc $$d/ $$b/; \
		$(MAKE) -C $(KHEADERS) M=$$b KVM_PREFETCH_INCLUDE=$(TREE)/include \
			KBUILD_EXTRA_SYMBOLS=$(TREE)/arch/x86/kvm/Module.symvers \
			modules; \
		for m in $$b/*.ko; do \
			cmp -s $$m $(BUILD)/modules/$$(basename $$m) || \
				cp $$m $(BUILD)/modules/; \
		done; \
	done

# The patched uAPI headers as userspace sees them (headers_install), for
# the test programs: what a VMM built against our kernel would include.
UAPI_HDRS := linux/kvm.h linux/kvm_prefetch.h asm/kvm.h
uapi:
	@mkdir -p $(BUILD)/uapi/linux $(BUILD)/uapi/asm
	@cd $(KHEADERS) && for h in $(UAPI_HDRS); do \
		case $$h in asm/*) src=$(TREE)/arch/x86/include/uapi/$$h ;; \
		*) src=$(TREE)/include/uapi/$$h ;; esac; \
		sh scripts/headers_install.sh $$src $(BUILD)/uapi/$$h.new; \
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
	@$(MAKE) --no-print-directory $(VM_TEST_BINS)

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
		--mode test --log $(VMDIR)/test.log --retry-wedged \
		$(if $(TESTS),--append "kp.tests=$(subst $(space),$(comma),$(strip $(TESTS)))") | \
		tee $(RESULTS)/vm-test.txt

demo: initramfs
	tests/vm/run-vm.sh --kernel $(KIMAGE) --initrd $(VMDIR)/initramfs.cpio.gz \
		--mode demo --log $(VMDIR)/demo.log --quiet

include tests/bench/bench.mk

static: modules cocci policy-build sparse checkpatch

# Every layer ends its output with "N passed, N failed[, N skipped]";
# the last line of "make check" adds them up.
check: deps
	@rm -rf $(RESULTS)
	@$(MAKE) --no-print-directory modules unit static vm-test selftests
	@for f in $(RESULTS)/*.txt; do \
		printf '%-10s %s\n' "$$(basename $$f .txt):" "$$(tail -n1 $$f)"; \
	done
	@cat $(RESULTS)/*.txt | \
	awk '/^([a-z-]+: )?[0-9]+ passed, [0-9]+ failed/ { \
		sub(/^[a-z-]+: /, ""); p += $$1; f += $$3; s += $$5 } \
		END { printf "%d passed, %d failed, %d skipped\n", p, f, s; exit (f != 0) }'

# ---------------------------------------------------------------- patches

# Our change as a mail-ready series against Debian's pristine source.  The
# new files come first (nothing builds them yet), then the hook patches,
# so every step of the series builds.  Upstream homes: kvm-policy/ ->
# virt/kvm/, sysfs-docs/ -> Documentation/.
GIT_ID := -c user.name="kvm-prefetch dev" -c user.email=dev@kvm-prefetch.invalid
PG := $(BUILD)/patches-git
patches: modules
	rm -rf $(PG) $(BUILD)/patches
	mkdir -p $(PG) $(BUILD)/patches
	cp -a $(PRISTINE)/. $(PG)/
	cd $(PG) && git init -q && git add -A && \
		git $(GIT_ID) commit -qm "Debian linux-source-6.1 $(SRC_VERSION)"
	mkdir -p $(PG)/include/linux $(PG)/include/uapi/linux
	cp include/linux/kvm_prefetch.h $(PG)/include/linux/
	cp include/uapi/linux/kvm_prefetch.h $(PG)/include/uapi/linux/
	cd $(PG) && git add -A && git $(GIT_ID) commit -q \
		-m "KVM: add the prefetch policy API headers" \
		-m "$$(echo '<linux/kvm_prefetch.h>: fault origins, the ops table a prefetch policy registers and the per-VM state it sees.  <uapi/linux/kvm_prefetch.h>: KVM_SET/GET_PREFETCH_POLICY, KVM_CAP_PREFETCH_POLICY and the KVM_PRE_FAULT_MEMORY ABI (upstream'\''s numbers).' | fmt -w 72)"
	cp kvm-policy/*.[ch] $(PG)/virt/kvm/
	mkdir -p $(PG)/include/kvm
	cp include/kvm/prefetch.h $(PG)/include/kvm/
	cd $(PG) && git add -A && git $(GIT_ID) commit -q \
		-m "KVM: prefetch policy registry, per-VM state and KVM_PRE_FAULT_MEMORY" \
		-m "$$(echo 'An RCU list of policies registered by name, the built-ins none, manual, async and auto, the kvm.ko parameters that hold the defaults of new VMs, each VM'\''s RCU-published state and its ioctls, the no-fault GUP resolver prefetch uses, and the generic KVM_PRE_FAULT_MEMORY loop.' | fmt -w 72)"
	mkdir -p $(PG)/arch/x86/kvm/mmu
	cp arch/x86/kvm/mmu/*.c $(PG)/arch/x86/kvm/mmu/
	cd $(PG) && git add -A && git $(GIT_ID) commit -q \
		-m "KVM: x86/mmu: add the prefetch engine" \
		-m "$$(echo 'After a fixed direct TDP fault, ask the VM'\''s policy for a window, clip it to the memslot and the max GFN, skip mapped gfns with a lockless walk and map the rest with KVM_PREFETCH_AUTO faults through kvm_mmu_do_page_fault().  Also the x86 part of KVM_PRE_FAULT_MEMORY.' | fmt -w 72)"
	@set -e; for p in $(PATCHES); do \
		git -C $(PG) $(GIT_ID) am -q $(TOP)/arch/x86/$$p; \
	done
	mkdir -p $(PG)/virt/kvm/adaptive
	cp kvm-policy/adaptive/* $(PG)/virt/kvm/adaptive/
	cd $(PG) && git add -A && git $(GIT_ID) commit -q \
		-m "KVM: add the adaptive prefetch policy module" \
		-m "$$(echo 'A policy module using only <linux/kvm_prefetch.h>: a per-vCPU window that ramps up while faults are sequential, shrinks to the host'\''s chunk size and restarts small on random access.  Built out of tree (Kbuild), autoloaded as kvm-prefetch-adaptive.' | fmt -w 72)"
	mkdir -p $(PG)/Documentation/ABI/testing $(PG)/Documentation/virt/kvm
	cp sysfs-docs/ABI/* $(PG)/Documentation/ABI/testing/
	cp sysfs-docs/*.rst $(PG)/Documentation/virt/kvm/
	cd $(PG) && git add -A && git $(GIT_ID) commit -q \
		-m "Documentation: KVM prefetch policies" \
		-m "$$(echo 'ABI entries for the kvm.ko prefetch parameters, the ioctls and capabilities, a guide for VMM authors and one for policy writers.' | fmt -w 72)"
	git -C $(PG) $(GIT_ID) format-patch -q --no-signature -o $(BUILD)/patches \
		--cover-letter HEAD~$$(( $$(git -C $(PG) rev-list --count HEAD) - 1 ))
	sed -i -e 's/\*\*\* SUBJECT HERE \*\*\*/KVM: x86: pluggable prefetch policies for the TDP MMU/' \
		-e '/\*\*\* BLURB HERE \*\*\*/{r sysfs-docs/cover-letter.txt' -e 'd}' \
		$(BUILD)/patches/0000-cover-letter.patch
	@ls $(BUILD)/patches

clean:
	rm -rf $(BUILD)
	@$(MAKE) --no-print-directory -C tests/unit clean BUILD=$(BUILD)/unit 2>/dev/null || true

include cocci/cocci.mk
include tests/selftests/selftests.mk
