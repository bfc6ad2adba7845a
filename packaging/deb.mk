# SPDX-License-Identifier: GPL-2.0
#
# Packaging for a Debian host (included from the top-level Makefile).

# The command's in-VM test compiles the command's source into itself.
$(VMDIR)/tests/kvm_prefetch_cmd: packaging/kvm-prefetch/kvm-prefetch.c

# What "make deb" needs, installed by "make deps" with the rest.
DEB_PKGS += dkms dh-dkms debhelper lintian

# The packages, in $(BUILD)/deb.  DKMS extracts from linux-source the
# kernel paths that "make modules" does (not the tools and scripts the
# static checks use).
DEB_SRC_PATHS = $(filter-out tools/% scripts/%,$(SRC_PATHS))

.PHONY: deb
deb: deps
	packaging/make-deb.sh $(BUILD)/deb $(DEB_SRC_PATHS)

# Install the packages on this machine, boot the test VM on the modules
# DKMS built, purge (packaging/install-test.sh).  Needs root; changes
# /lib/modules/$(ABI)/updates/dkms and /etc/modprobe.d while it runs.
# Every supported base whose image is installed gets its DKMS build and
# its VM boot: 6.1 (this base) and 6.12 when "make deps KERNEL=6.12" ran.
DEB_TEST_ABI_612 = $(shell dpkg-query -W -f='$${Depends}' linux-image-6.12-amd64 2>/dev/null | \
	sed -n 's/.*linux-image-\([0-9][^ ,]*\).*/\1/p')
DEB_TEST_KERNELS = $(ABI)=$(KIMAGE) \
	$(if $(DEB_TEST_ABI_612),$(DEB_TEST_ABI_612)=/boot/vmlinuz-$(DEB_TEST_ABI_612))
.PHONY: deb-test
deb-test: deb tests-vm
	@[ "$(KERNEL)" = 6.1 ] || { echo "deb-test: run it with KERNEL=6.1; it covers 6.12 too" >&2; exit 1; }
	@mkdir -p $(RESULTS)
	$(if $(DEB_TEST_ABI_612),,@echo "deb-test: no 6.12 image installed (make deps KERNEL=6.12): testing 6.1 only")
	packaging/install-test.sh $(BUILD)/deb $(BUILD)/deb-test $(VMDIR)/tests \
		$(DEB_TEST_KERNELS) | tee $(RESULTS)/deb-test.txt

# The packages on Debian 13 with the 7.3 backports kernel, which this
# machine's compiler cannot build for: a debootstrapped trixie chroot
# gets the kernel set, dkms and the .debs, and DKMS builds for 7.3
# there (packaging/dkms-trixie-test.sh).  Needs root; not part of make
# check (a cold run downloads about 400 MB).
TRIXIE_CHROOT ?= $(TOP)/build/trixie-chroot
.PHONY: deb-trixie-test
deb-trixie-test: deb
	@mkdir -p $(RESULTS)
	packaging/dkms-trixie-test.sh $(BUILD)/deb $(TRIXIE_CHROOT) | tee $(RESULTS)/deb-trixie-test.txt
