# SPDX-License-Identifier: GPL-2.0
#
# The QEMU rig (included from the top-level Makefile): Debian's
# qemu-system-x86_64 inside the test VM boots Debian's kernel as a guest
# on KVM, stock or ours, and runs a memory workload (tests/qemu/).
#
#   make qemu-test [QEMU_RUNS=N] [QEMU_ARMS=stock,none,auto-8,...]
#                  [QEMU_WORK=64:3] [QEMU_BOOT=quiet|verbose] [QEMU_KERNEL=bzimage|pvh]
#                  [QEMU_L2="word:word"] [QEMU_CPU=host] [QEMU_THP=never]
#                  [QEMU_PAR=1] [QEMU_SMP=1] [QEMU_TESTS=qemu_guests]
#                  [QEMU_PLANT=...] [QEMU_APPEND="kp.x.y=z ..."] [QEMU_L1=7.2|current]
#   make qemu-check   a bounded run, a layer of "make check" (6.1): one
#                     boot per built-in policy and the lifecycle test
#                     (qemu_life)
# QEMU_ARMS: stock, or <policy>[-<nr_pages>][-<engine>][-<gup>] on our
# modules (auto-8-fault, auto-8-fast, adaptive), each with @7.2 or
# @current for an L1 other than QEMU_L1's (qemu_guests only).  QEMU_L1:
# the L1 VMM in the test VM, Debian 12's QEMU 7.2 (the default) or
# "current", Debian 13's own QEMU 10.0 (build/qemu-l1, fetched by
# qemu-rig), for every driver (qemu-test, qemu-postcopy).  QEMU_WORK: the guest's
# "l2work <MiB> <passes>".  QEMU_PLANT: planted bugs, for checking the
# checks only (sum, stall for qemu_guests; sum, stall, serial, hold,
# auto, none, early for qemu_life: tests/qemu/README.rst).

# The rig's test VM boots with the kernel's default, idle vCPUs without
# a tick (KP_NOHZ=1 to run-vm.sh), unlike make vm-test's (nohz=off,
# tests/vm/run-vm.sh, "A test's guard" in sysfs-docs/testing.rst): its
# nested guests passed every qemu-check run without nohz=off, and one of
# the first two with it had an auto-8 guest's QEMU go away after the
# guest reached userspace (cause not known).  QEMU_NOHZ= (empty) boots
# it with nohz=off.
QEMU_NOHZ ?= 1

# The test VM runs with one vCPU.  With two, QEMU 7.2's single-threaded
# TCG switches vCPUs round-robin with an exit request every 100 ms, and a
# VMRUN that injected an interrupt (EVENTINJ) leaves cs->exception_index
# set to its vector: the next exit request makes the CPU loop deliver that
# vector a second time, ignoring the guest's IF.  The guest then takes
# its own interrupt again inside the handler and spins forever on the
# handler's lock (handle_edge_irq(), desc->lock) or the timekeeping
# seqcount: the guest stalls seen with stock KVM as with ours.  One vCPU
# makes no round-robin kicks (tests/qemu/README.rst).
# On the current outer QEMU (11.1.3, multi-threaded TCG, 2026-12-06) two
# vCPUs showed no double delivery (QEMU_SMP=2, two test-VM boots: 13
# qemu_guests boots, stock 7 and auto-8 6 on both L1s, all ok, no guest
# stall).  run-vm.sh's watchdog saw a vCPU halted with the local timer's
# vector 236 pending 5 times in them, under its first rule (pending for a
# second); every one was taken (4 after a key press, the fifth while the
# state was dumped): slow wake-ups, which the watchdog now counts and
# fails only after 60 s ("The outer emulator", sysfs-docs/testing.rst).
# With the double delivery gone, the test VM gets two vCPUs, on
# multi-threaded TCG (the measured configuration; run-vm.sh's default is
# single-threaded, whose round-robin kicks were the double delivery's
# trigger on 7.2).
QEMU_SMP ?= 2
QEMU_TCG ?= multi
QEMU_RIG := $(BUILD)/qemu-rig
QEMU_L1 ?= 7.2
QEMU_RUNS ?= 1
QEMU_ARMS ?= stock,none,manual,async,auto-8,auto-8-fault
QEMU_L2 ?=
QEMU_CPU ?=
QEMU_THP ?=
QEMU_PAR ?=
QEMU_WORK ?=
QEMU_BOOT ?=
QEMU_KERNEL ?=
QEMU_TESTS ?= qemu_guests
QEMU_PLANT ?=
# More words for the test VM's command line (kp.life.arms=auto-8, ...).
QEMU_APPEND ?=
QEMU_TIMEOUT ?= 3000
# The test VM prints a line per guest (a minute at most): silent for
# this long, it has wedged (tests/qemu/README.rst) and is killed.
QEMU_STALL ?= 150

.PHONY: qemu-rig qemu-test qemu-postcopy qemu-check
# The second L1 (QEMU_L1=current): Debian 13's own QEMU (trixie, 10.0),
# not the backports' one the outer emulator runs; fetched once.
QEMU_L1_DIR := $(TOP)/build/qemu-l1
qemu-rig: $(MODULES_DEP)
	QEMU_CURRENT_SUITE=trixie scripts/qemu-current.sh $(QEMU_L1_DIR) qemu-system-x86
	BUILD=$(BUILD) KMODDIR=$(KMODDIR) KIMAGE=$(KIMAGE) RIG=$(QEMU_RIG) L1DIR=$(QEMU_L1_DIR) \
		tests/qemu/mkrig.sh

qemu-test: qemu-rig
	@mkdir -p $(RESULTS)
	KP_MEM=3G KP_SMP=$(QEMU_SMP) KP_TCG=$(QEMU_TCG) KP_NOHZ=$(QEMU_NOHZ) tests/vm/run-vm.sh --kernel $(KIMAGE) \
		--initrd $(QEMU_RIG)/initramfs.cpio.gz --mode test \
		--log $(QEMU_RIG)/test.log --timeout $(QEMU_TIMEOUT) --stall $(QEMU_STALL) \
		--append "kp.tests=$(QEMU_TESTS) kp.qemu.runs=$(QEMU_RUNS) kp.qemu.arms=$(QEMU_ARMS)" \
		--append "kp.qemu.l1=$(QEMU_L1)" \
		$(if $(QEMU_WORK),--append "kp.qemu.work=$(QEMU_WORK)") \
		$(if $(QEMU_BOOT),--append "kp.qemu.boot=$(QEMU_BOOT)") \
		$(if $(QEMU_KERNEL),--append "kp.qemu.kernel=$(QEMU_KERNEL) kp.life.kernel=$(QEMU_KERNEL)") \
		$(if $(QEMU_PLANT),--append "kp.qemu.plant=$(QEMU_PLANT) kp.life.plant=$(QEMU_PLANT)") \
		$(if $(QEMU_L2),--append "kp.qemu.l2=$(QEMU_L2)") \
		$(if $(QEMU_APPEND),--append "$(QEMU_APPEND)") \
		$(if $(QEMU_CPU),--append "kp.qemu.cpu=$(QEMU_CPU)") \
		$(if $(QEMU_THP),--append "kp.qemu.thp=$(QEMU_THP)") \
		$(if $(QEMU_PAR),--append "kp.qemu.par=$(QEMU_PAR)") | \
		tee $(RESULTS)/qemu-test.txt

# A bounded run (6.1, a layer of make check): one guest per built-in policy and
# engine with a small workload, then the lifecycle test (5 guests in
# sequence and 2 at once on stock and on auto-8, a policy switched while
# a guest runs).  It builds the rig itself (qemu-rig: modules first).
# (stock and auto-8 boot in qemu_life, 7 times each, on QEMU 7.2; here
# once each on the second L1, Debian 13's QEMU 10.0: two boots more.)
QEMU_CHECK_ARMS := none,manual,async,auto-8-fault,stock@current,auto-8@current
QEMU_CHECK_WORK := 16:1
# The guests' kernel uncompressed at its PVH entry: half a run's time.
QEMU_CHECK_KERNEL := pvh
qemu-check: qemu-rig
	@mkdir -p $(RESULTS)
	KP_MEM=3G KP_SMP=$(QEMU_SMP) KP_TCG=$(QEMU_TCG) KP_NOHZ=$(QEMU_NOHZ) tests/vm/run-vm.sh --kernel $(KIMAGE) \
		--initrd $(QEMU_RIG)/initramfs.cpio.gz --mode test \
		--log $(QEMU_RIG)/check.log --timeout 1500 --stall $(QEMU_STALL) --retry-wedged \
		--append "kp.tests=qemu_guests,qemu_life kp.qemu.runs=1 kp.qemu.arms=$(QEMU_CHECK_ARMS)" \
		--append "kp.qemu.work=$(QEMU_CHECK_WORK) kp.life.work=$(QEMU_CHECK_WORK)" \
		--append "kp.qemu.kernel=$(QEMU_CHECK_KERNEL) kp.life.kernel=$(QEMU_CHECK_KERNEL)" \
		$(if $(QEMU_PLANT),--append "kp.qemu.plant=$(QEMU_PLANT) kp.life.plant=$(QEMU_PLANT)") | \
		tee $(RESULTS)/qemu-check.txt

# Postcopy live migration between two QEMUs in the test VM, per arm, and
# "kvm-prefetch set --pid" on a running QEMU guest (tests/qemu/README.rst).
#   make qemu-postcopy [QEMU_PC_RUNS=3] [QEMU_PC_ARMS=stock,none,...]
#                      [QEMU_PC_MIB=128] [QEMU_PC_MEM=256] [QEMU_PC_BW=0]
#                      [QEMU_PC_PRECOPY=1] [QEMU_PC_CLI=1] [QEMU_PC_PLANT=...]
# QEMU_PC_PLANT: planted bugs that the checks must catch (sum, policy for
# the postcopy runs; auto, nobody, sum for the CLI test): never in a
# real run.
QEMU_PC_RUNS ?= 3
QEMU_PC_ARMS ?= stock,none,async,auto-8,auto-512,adaptive
QEMU_PC_MIB ?= 128
QEMU_PC_MEM ?= 256
QEMU_PC_BW ?= 0
QEMU_PC_PRECOPY ?= 1
QEMU_PC_CLI ?= 1
QEMU_PC_PLANT ?=
QEMU_PC_TIMEOUT ?= 5400
# The drivers print nothing while a migration runs: on a loaded machine
# (load 15 on 2 cores, 2026-12-06) one run was silent for over 300 s,
# run-vm.sh's default, with the test VM running.
QEMU_PC_STALL ?= 900
QEMU_PC_TESTS := qemu_postcopy$(if $(filter 1,$(QEMU_PC_CLI)),$(comma)qemu_cli)

QEMU_PC_LOG := $(BUILD)/qemu-postcopy.log
# (The top Makefile's shell runs with -e and pipefail.)
qemu-postcopy: qemu-rig
	@mkdir -p $(RESULTS)
	rc=0; KP_MEM=3G KP_SMP=$(QEMU_SMP) KP_TCG=$(QEMU_TCG) KP_NOHZ=$(QEMU_NOHZ) tests/vm/run-vm.sh --kernel $(KIMAGE) \
		--initrd $(QEMU_RIG)/initramfs.cpio.gz --mode test \
		--log $(QEMU_PC_LOG) --timeout $(QEMU_PC_TIMEOUT) --stall $(QEMU_PC_STALL) \
		--append "kp.tests=$(QEMU_PC_TESTS) kp.pc.runs=$(QEMU_PC_RUNS) kp.pc.arms=$(QEMU_PC_ARMS)" \
		--append "kp.pc.mib=$(QEMU_PC_MIB) kp.pc.mem=$(QEMU_PC_MEM) kp.pc.bw=$(QEMU_PC_BW) kp.pc.precopy=$(QEMU_PC_PRECOPY)" \
		--append "kp.qemu.l1=$(QEMU_L1)" \
		$(if $(QEMU_PC_PLANT),--append "kp.pc.plant=$(QEMU_PC_PLANT) kp.cli.plant=$(QEMU_PC_PLANT)") | \
		tee $(RESULTS)/qemu-postcopy.txt || rc=$$?; \
	python3 tests/qemu/pc-report.py $(QEMU_PC_LOG).clean \
		--command "make qemu-postcopy$(if $(filter-out 7.2,$(QEMU_L1)), QEMU_L1=$(QEMU_L1)) QEMU_PC_RUNS=$(QEMU_PC_RUNS) QEMU_PC_ARMS=$(QEMU_PC_ARMS) QEMU_PC_MIB=$(QEMU_PC_MIB) QEMU_PC_MEM=$(QEMU_PC_MEM) QEMU_PC_BW=$(QEMU_PC_BW) QEMU_PC_PRECOPY=$(QEMU_PC_PRECOPY)$(if $(QEMU_PC_PLANT), QEMU_PC_PLANT=$(QEMU_PC_PLANT))" \
		> $(RESULTS)/qemu-postcopy.md || rc=1; \
	echo "qemu-postcopy: table in $(RESULTS)/qemu-postcopy.md"; \
	exit $$rc
