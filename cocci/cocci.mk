# SPDX-License-Identifier: GPL-2.0
#
# Static checks, included by the top-level Makefile (after its variables):
#
#   make cocci        the semantic patches of cocci/ over the patched tree,
#                     the policy modules and the fixtures in cocci/tests/
#   make sparse       sparse (C=2) over copies of the patched and the
#                     unpatched KVM build: no warning in our files, none
#                     that the unpatched build does not have
#   make checkpatch   checkpatch.pl over the "make patches" series and
#                     over our own files
#   make policy-build the policy module of cocci/tests/policy_build, built
#                     like kvm-policy/adaptive: with KVM-internal calls it
#                     must not compile or link, with the policy API only
#                     it must build
#
# Each writes its output to $(RESULTS)/<target>.txt too, ending with
# "<target>: N passed, N failed".  With NOBUILD=1 they use the tree (and
# patch series) already built.

.PHONY: cocci sparse checkpatch policy-build

# Policy modules are built outside the KVM tree: check them from here.
COCCI_EXTRA_FILES = $(abspath $(shell scripts/layout.sh policy-sources))

cocci: deps $(MODULES_DEP)
	@mkdir -p $(RESULTS)
	@cocci/run-cocci.sh $(TREE) $(COCCI_EXTRA_FILES) | tee $(RESULTS)/cocci.txt

# Copies in $(BUILD)/sparse-patched and $(BUILD)/sparse-pristine keep
# their objects between runs, so only the first run compiles everything.
sparse: deps $(MODULES_DEP)
	@mkdir -p $(RESULTS)
	@IN_ROOT="$(IN_ROOT)" KHEADERS_DIR="$(KHEADERS_DIR)" cocci/run-sparse.sh $(KHEADERS) $(TREE) $(PRISTINE) \
		$(TOP)/arch/x86/Kbuild.oot $(BUILD) | tee $(RESULTS)/sparse.txt

# checkpatch message types we do not fix, and why:
#  MISSING_SIGN_OFF   Signed-off-by certifies the Developer's Certificate
#                     of Origin for a person; "make patches" produces the
#                     series for review, and whoever submits it signs it.
#  FILE_PATH_CHANGES  "added file(s), does MAINTAINERS need updating?":
#                     MAINTAINERS is not part of the extracted source; the
#                     entry belongs to an upstream submission.
#  UNKNOWN_COMMIT_ID  a backport's "commit <sha> upstream." names an
#                     upstream commit, which checkpatch looks up in the
#                     git repository it runs in: this one, which has no
#                     kernel history.
#  ALLOC_WITH_SIZEOF  (7.3's checkpatch) "prefer kzalloc_obj()": the files
#                     are shared with 6.1 and 6.12, which have no
#                     kzalloc_obj(); the 7.3 series would switch when it
#                     goes upstream alone.
CHECKPATCH_IGNORE := MISSING_SIGN_OFF,FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID$(if $(filter 7.3,$(KERNEL)),$(comma)ALLOC_WITH_SIZEOF)
CHECKPATCH_FILES = $(shell find kvm-policy include arch -type f \
	\( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)

checkpatch: deps $(if $(NOBUILD),,patches)
	@mkdir -p $(RESULTS)
	@CHECKPATCH_IGNORE=$(CHECKPATCH_IGNORE) cocci/run-checkpatch.sh $(PRISTINE)/scripts/checkpatch.pl \
		$(BUILD)/patches $(CHECKPATCH_FILES) | tee $(RESULTS)/checkpatch.txt

policy-build: deps $(MODULES_DEP)
	@mkdir -p $(RESULTS)
	@IN_ROOT="$(IN_ROOT)" cocci/run-policy-build.sh $(KHEADERS) $(TREE) $(BUILD)/policy-build | \
		tee $(RESULTS)/policy-build.txt
