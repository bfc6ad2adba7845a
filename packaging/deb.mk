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
.PHONY: deb-test
deb-test: deb tests-vm
	@mkdir -p $(RESULTS)
	packaging/install-test.sh $(BUILD)/deb $(ABI) $(KIMAGE) $(BUILD)/deb-test \
		$(VMDIR)/tests | tee $(RESULTS)/deb-test.txt
