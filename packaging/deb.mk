# SPDX-License-Identifier: GPL-2.0
#
# Packaging for a Debian host (included from the top-level Makefile).

# The command's in-VM test compiles the command's source into itself.
$(VMDIR)/tests/kvm_prefetch_cmd: packaging/kvm-prefetch/kvm-prefetch.c
