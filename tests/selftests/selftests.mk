# SPDX-License-Identifier: GPL-2.0
#
# make selftests: KVM's own selftests as a regression suite.
#
# Builds the x86_64 KVM selftests (tools/testing/selftests/kvm of the
# base's Debian linux-source, extracted into $(PRISTINE)) statically against our
# patched uAPI headers, boots the test VM once and runs every selftest
# with Debian's stock kvm.ko/kvm-amd.ko, then with ours (tests/vm/init,
# kp.mode=selftests).  tests/selftests/compare.sh fails if a test that
# passes on stock does not pass on ours.  Tests that cannot pass under TCG
# even on stock, or take too long there, are listed with the reason in
# <base>/tcg-known-failures.txt and not run (the report still lists them).
#
# Included from the top-level Makefile (BUILD, PRISTINE, KIMAGE, ...).
#   VMDIR=dir             its own VM directory (default build/vm-selftests)
#   TESTS="a b"           run only these selftests
#   SELFTESTS_TIMEOUT=s   per-test timeout in the guest (default 120 s:
#                         dirty_log_test needs ~56 s even on a quiet host;
#                         <base>/timeouts.txt gives runs a longer one)

.PHONY: selftests selftests-build

ST_SRC ?= $(PRISTINE)
ST_KVM := $(ST_SRC)/tools/testing/selftests/kvm
ST_OUT := $(BUILD)/selftests
ST_VMDIR := $(if $(filter command line environment,$(origin VMDIR)),$(VMDIR),$(BUILD)/vm-selftests)
ST_BASE := tests/selftests/$(KERNEL)
ST_KNOWN := $(ST_BASE)/tcg-known-failures.txt
ST_ARGS := tests/selftests/args.txt
# More runs for one base only (tests/selftests/<base>/args.txt, optional).
# Runs that need longer than SELFTESTS_TIMEOUT, for one base
# (tests/selftests/<base>/timeouts.txt, optional): "<run> <seconds>"; a
# run gets the longer of the two.
ST_TIMEOUTS := $(wildcard $(ST_BASE)/timeouts.txt)
ST_MAX_TIMEOUT = $(shell { echo $(SELFTESTS_TIMEOUT); $(if $(ST_TIMEOUTS),sed -e '/^\#/d' -e '/^[[:space:]]*$$/d' $(ST_TIMEOUTS) | awk '{ print $$2 }';) } | sort -n | tail -n1)
SELFTESTS_TIMEOUT ?= 120
# Upper bound for the whole guest run (both passes), and the console
# silence after which run-vm.sh calls the guest wedged (a test prints
# nothing until it ends or hits SELFTESTS_TIMEOUT).
# 7.3 runs ~100 selftests per pass, twice 6.12's time: 45 min (2 x 22)
# on a 2-core host shared with kernel builds and other test VMs.
ST_VM_TIMEOUT ?= $(if $(filter 7.3,$(KERNEL)),3600,1200)
ST_STALL ?= $(shell echo $$(( $(ST_MAX_TIMEOUT) + 60 )))
# The selftests' own make does not track header dependencies: rebuild
# the objects from scratch when one of these changes.
ST_HDRS := $(BUILD)/uapi/linux/kvm.h $(BUILD)/uapi/linux/kvm_prefetch.h \
	$(BUILD)/uapi/asm/kvm.h $(ST_BASE)/compat.h

# Our uAPI headers come first (-isystem), the rest from linux-libc-dev:
# existing ioctls must keep their ABI, so stock and ours run the same
# binaries.  The base's compat.h papers over build breaks in Debian's tree.
# MAKEFLAGS is dropped so that our command-line variables (TESTS, VMDIR,
# ...) do not leak into the selftests' make.  7.3's need a newer uAPI
# (<linux/iommufd.h>, ...) and libc than Debian 12's: they build in the
# base's Debian 13 root ($(IN_ROOT), empty for the other bases).
selftests-build: $(MODULES_DEP)
	@for f in scripts/subarch.include tools/testing/selftests/kselftest_harness.h \
			tools/testing/selftests/rseq/rseq.c; do \
		[ -e $(ST_SRC)/$$f ] && continue; \
		echo "selftests: $(ST_SRC)/$$f missing; it is in SRC_PATHS, re-extract:" \
			"rm $(BUILD)/.pristine-* && make modules" >&2; \
		exit 1; \
	done
	@mkdir -p $(ST_OUT)/obj
	@for h in $(ST_HDRS); do \
		[ $$h -nt $(ST_OUT)/obj/.headers ] && rm -rf $(ST_OUT)/obj || true; \
	done
	@mkdir -p $(ST_OUT)/obj && touch $(ST_OUT)/obj/.headers
	@echo "selftests: building the KVM selftests in $(ST_OUT)"
	@$(IN_ROOT) env -u MAKEFLAGS -u MAKEOVERRIDES -u MFLAGS $(MAKE) -s --no-print-directory \
		-C $(ST_KVM) -j$$(nproc) OUTPUT=$(ST_OUT)/obj \
		EXTRA_CFLAGS="-include $(TOP)/$(ST_BASE)/compat.h" \
		KHDR_INCLUDES="-isystem $(BUILD)/uapi" LDFLAGS="-pthread -static" all
	@# bin/: what the guest runs, one file per run; <run>.args holds
	@# the arguments from args.txt.
	@rm -rf $(ST_OUT)/bin && mkdir -p $(ST_OUT)/bin
	@known=" $$(sed -e 's/[[:space:]].*//' -e '/^#/d' -e '/^$$/d' $(ST_KNOWN) | tr '\n' ' ') "; \
	for f in $$(cd $(ST_OUT)/obj && find . -type f -perm -u+x | LC_ALL=C sort); do \
		t=$$(basename $$f); \
		case $$known in *" $$t "*) continue ;; esac; \
		strip -o $(ST_OUT)/bin/$$t $(ST_OUT)/obj/$$f; \
	done; \
	cat $(ST_ARGS) $(wildcard $(ST_BASE)/args.txt) | \
	sed -e '/^#/d' -e '/^[[:space:]]*$$/d' | \
	while read -r run t args; do \
		case $$known in *" $$run "*) continue ;; esac; \
		[ -e $(ST_OUT)/bin/$$t ] || \
			{ echo "selftests: $(ST_ARGS): no selftest $$t" >&2; exit 1; }; \
		[ $$run = $$t ] || cp $(ST_OUT)/bin/$$t $(ST_OUT)/bin/$$run; \
		echo "$$args" > $(ST_OUT)/bin/$$run.args; \
	done; \
	cat /dev/null $(ST_TIMEOUTS) | sed -e '/^#/d' -e '/^[[:space:]]*$$/d' | \
	while read -r run secs; do \
		case $$known in *" $$run "*) continue ;; esac; \
		[ -e $(ST_OUT)/bin/$$run ] || \
			{ echo "selftests: $(ST_TIMEOUTS): no run $$run" >&2; exit 1; }; \
		echo "$$secs" > $(ST_OUT)/bin/$$run.timeout; \
	done; \
	echo "selftests: $$(ls $(ST_OUT)/bin | grep -vc -e '\.args$$' -e '\.timeout$$') runs," \
		"$$(echo $$known | wc -w) not run (tcg-known-failures.txt)"

selftests: selftests-build
	@mkdir -p $(RESULTS)
	@KMODDIR=$(KMODDIR) BUILD=$(BUILD) VMDIR=$(ST_VMDIR) \
		SELFTESTS_BIN=$(ST_OUT)/bin tests/vm/mkinitramfs.sh
	@# run-vm.sh's own count line is dropped: compare.sh's verdict covers
	@# the same failures (FAIL: lines, no @@DONE) and is the one summed.
	@{ rc=0; log=$(ST_VMDIR)/selftests.log; \
	   tests/vm/run-vm.sh --kernel $(KIMAGE) \
		--initrd $(ST_VMDIR)/initramfs.cpio.gz --mode selftests \
		--log $$log --quiet --timeout $(ST_VM_TIMEOUT) \
		--stall $(ST_STALL) \
		--append "kp.st_timeout=$(SELFTESTS_TIMEOUT)$(if $(TESTS), kp.tests=$(subst $(space),$(comma),$(strip $(TESTS))))" | \
		awk '!/^[0-9]+ passed, [0-9]+ failed/' || rc=1; \
	   echo; \
	   tests/selftests/compare.sh --known $(ST_KNOWN) $$log || rc=1; \
	   exit $$rc; } | tee $(RESULTS)/selftests.txt
