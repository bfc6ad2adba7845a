# SPDX-License-Identifier: GPL-2.0
#
# make cost: instruction counts of KVM's fault path, included by the
# top-level Makefile.  Boots the test VM COST_RUNS times in kp.mode=cost
# under QEMU with the meter plugin (tests/cost/meter.c, built against the
# installed QEMU's qemu-plugin.h, which "make deps" fetches); the guest
# runs $(VMDIR)/tests/cost (tests/cost/cost.c) with stock and our modules;
# tests/cost/report.py turns the plugin's snapshots and the console log
# into $(COST_OUT)/results.{md,csv}.  Not part of "make check" (it
# measures).  The outer emulator stays Debian 12's QEMU 7.2, single-
# threaded, whose plugin API the meter is built against and on which
# every published count was taken; its lost wake-ups are healed
# (KP_HEAL=1, tests/vm/run-vm.sh): a heal delays a boot, it changes no
# count.
#
#   make cost [COST_RUNS=2] [COST_PAGES=2048:4096]
#             [COST_CFGS=stock:none:auto-8:auto-512] [ENGINE=batch|fault]
#             [COST_PROF=1]
#
# COST_PROF=1 also counts per 16 bytes of text and prints, with
# tests/cost/profile.py, the instructions per function of boot 1.
#
# "make cost-publish" copies the results to tests/cost/results/<base>/<engine>/
# (<engine> batch unless ENGINE=fault): the current set of that base and
# engine.  sysfs-docs/benchmark.rst says how to read them.

.PHONY: cost cost-bin cost-deps cost-report cost-publish

COST_OUT	?= $(BUILD)/cost
COST_RUNS	?= 2
COST_PAGES	?= 2048:4096
COST_CFGS	?= stock:none:auto-8:auto-512
COST_TIMEOUT	?= 1200
QEMU_PLUGIN_HDR	:= $(TOP)/build/qemu-plugin
COST_PLUGIN	:= $(COST_OUT)/meter.so
COST_BIN	:= $(VMDIR)/tests/cost

$(COST_BIN): tests/cost/cost.c $(VM_LIB_SRCS) $(VM_LIB_HDRS)
	@mkdir -p $(dir $@)
	gcc $(CFLAGS_TEST) -o $@ $< $(VM_LIB_SRCS)

$(COST_PLUGIN): tests/cost/meter.c $(QEMU_PLUGIN_HDR)/qemu-plugin.h
	@mkdir -p $(dir $@)
	gcc -shared -fPIC -O2 -Wall -Wextra -Wno-unused-parameter \
		-I$(QEMU_PLUGIN_HDR) -o $@ $<

cost-bin: $(MODULES_DEP)
	@$(MAKE) --no-print-directory $(COST_BIN)

# The initramfs of a cost run must contain the cost program.
ifneq ($(filter cost,$(MAKECMDGOALS)),)
initramfs: cost-bin
endif

cost-deps: python3-dep

cost: cost-deps initramfs
	@$(MAKE) --no-print-directory $(COST_PLUGIN)
	@rc=0; for i in $$(seq 1 $(COST_RUNS)); do \
		echo "cost: boot $$i of $(COST_RUNS)"; \
		KP_OUTER=7.2 KP_TCG=single KP_HEAL=1 tests/vm/run-vm.sh --kernel $(KIMAGE) \
			--initrd $(VMDIR)/initramfs.cpio.gz --mode cost --quiet \
			--log $(COST_OUT)/cost-$$i.log --timeout $(COST_TIMEOUT) \
			--plugin $(COST_PLUGIN),out=$(COST_OUT)/meter-$$i.txt$(if $(COST_PROF),$(comma)prof=$(COST_OUT)/prof-$$i.txt) \
			--append "kp.cost=pages=$(COST_PAGES),cfgs=$(COST_CFGS)$(if $(COST_PROF),$(comma)syms=1)" \
			--append "nohz_full=$$(( $${KP_SMP:-2} - 1 ))" \
			$(if $(ENGINE),--append "kp.engine=$(ENGINE)") \
			|| rc=$$?; \
	done; \
	$(MAKE) --no-print-directory cost-report || rc=1; \
	$(if $(COST_PROF),python3 tests/cost/profile.py --dir $(COST_OUT) | tee $(COST_OUT)/profile.txt;) \
	exit $$rc

# Re-make the table and CSV from existing logs.
cost-report:
	python3 tests/cost/report.py --dir $(COST_OUT) --runs $(COST_RUNS) \
		--abi "$(ABI)" --qemu "$$(qemu-system-x86_64 --version | head -n1)"

# One current set per base and engine; the older one is in git.
COST_PUB := tests/cost/results/$(KERNEL)/$(or $(ENGINE),batch)
cost-publish:
	@mkdir -p $(COST_PUB)
	cp $(COST_OUT)/results.md $(COST_OUT)/results.csv $(COST_OUT)/raw.csv \
		$(wildcard $(COST_OUT)/profile.txt) $(COST_PUB)/
	for i in $$(seq 1 $(COST_RUNS)); do \
		grep -a '@@COST' $(COST_OUT)/cost-$$i.log | grep -av '@@COSTSYM' | tr -d '\r' \
			> $(COST_PUB)/cost-lines-$$i.txt; \
	done
