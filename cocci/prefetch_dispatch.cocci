// SPDX-License-Identifier: GPL-2.0-only
///
/// Prefetch has one way in and one way out:
///  - the engine, kvm_mmu_prefetch(), is called only from
///    kvm_mmu_do_page_fault(), under a check that the fault returned
///    RET_PF_FIXED, and from one place only;
///  - a policy's ->window(), ->init() and ->release() callbacks (struct
///    kvm_prefetch_ops) are called only by the policy core,
///    virt/kvm/prefetch.c and virt/kvm/prefetch_vm.c;
///  - KVM_PREFETCH_AUTO, the origin of prefetch faults, is produced only by
///    the engine, arch/x86/kvm/mmu/prefetch.c (and its base's header
///    prefetch_fault.h; on 7.3, where kvm_mmu_do_page_fault() is static to
///    mmu.c, by the engine's entry there, kvm_mmu_prefetch_fault()):
///    elsewhere it may only be compared against (==, !=, a case label,
///    BIT()).
///
// Confidence: High
// Comments: the callback check needs the type of the ops pointer, from
//  <linux/kvm_prefetch.h> found with -I (include/ of the tree).
// Options: --include-headers-for-types --recursive-includes

virtual context
virtual org
virtual report

@initialize:python@
@@
# Tree paths: run-cocci.sh runs the rules over the patched tree, where
# scripts/layout.sh has put kvm-policy/ at virt/kvm/.
CORE = ("virt/kvm/prefetch.c", "virt/kvm/prefetch_vm.c")
ENGINE = ("arch/x86/kvm/mmu/prefetch.c", "arch/x86/kvm/mmu/prefetch_fault.h")
# The engine's entry into the fault path, where that path is static.
ENGINE_ENTRY = ("arch/x86/kvm/mmu/mmu.c", "kvm_mmu_prefetch_fault")

def in_engine(p):
    return in_files(p, ENGINE) or \
        (in_files(p, ENGINE_ENTRY[:1]) and
         p[0].current_element == ENGINE_ENTRY[1])
dispatch_sites = []

def in_files(p, paths):
    f = "/" + p[0].file
    return any(f.endswith("/" + path) for path in paths)

def warn(p, msg):
    for pos in p:
        if "org" in modes:
            coccilib.org.print_todo(pos, msg)
        else:
            coccilib.report.print_report(pos, msg)

modes = set()

@script:python depends on org@
@@
modes.add("org")

// ---- the engine's entry point ----------------------------------------

@dispatch@
expression R, E;
statement S;
position p;
@@

kvm_mmu_do_page_fault(...)
{
	<...
(
	if (<+... R == RET_PF_FIXED ...+>) {
		...
		kvm_mmu_prefetch@p(...);
		...
	}
|
	if (R != RET_PF_FIXED)
		S
	... when != R = E
	kvm_mmu_prefetch@p(...);
)
	...>
}

@script:python depends on org || report@
p << dispatch.p;
@@

for pos in p:
    dispatch_sites.append(pos)
    if len(dispatch_sites) > 1:
        warn([pos], "WARNING: second dispatch site of kvm_mmu_prefetch() "
               "(first: %s:%s)" % (dispatch_sites[0].file,
                                   dispatch_sites[0].line))

@engine_call@
position p != dispatch.p;
@@

kvm_mmu_prefetch@p(...)

@depends on context@
position engine_call.p;
@@

* kvm_mmu_prefetch@p(...)

@script:python depends on org || report@
p << engine_call.p;
@@

warn(p, "WARNING: kvm_mmu_prefetch() called outside kvm_mmu_do_page_fault() "
       "or without a RET_PF_FIXED check")

// ---- policy callbacks ---------------------------------------------------

// The callbacks are named literally: spatch then parses only files that
// mention one of them.  The struct's name is matched through a
// metavariable: written out, it would be a token that a file has to
// contain to be parsed at all, and a call through st->ops in a file that
// never names the struct would go unseen.
@callback@
identifier ops_t =~ "^kvm_prefetch_ops$";
struct ops_t *ops;
position p : script:python() { not in_files(p, CORE) };
@@

(
ops->window@p(...)
|
ops->init@p(...)
|
ops->release@p(...)
)

@depends on context@
identifier callback.ops_t;
struct ops_t *ops;
position callback.p;
@@

(
* ops->window@p(...)
|
* ops->init@p(...)
|
* ops->release@p(...)
)

@script:python depends on org || report@
p << callback.p;
@@

warn(p, "WARNING: kvm_prefetch_ops callback (->window/->init/->release) "
       "called outside the policy core (virt/kvm/prefetch.c, prefetch_vm.c)")

// ---- the AUTO origin ---------------------------------------------------

@auto_cmp@
expression E;
position p;
@@

(
E == KVM_PREFETCH_AUTO@p
|
KVM_PREFETCH_AUTO@p == E
|
E != KVM_PREFETCH_AUTO@p
|
KVM_PREFETCH_AUTO@p != E
|
BIT(KVM_PREFETCH_AUTO@p)
|
BIT_ULL(KVM_PREFETCH_AUTO@p)
)

@auto_case@
expression E;
position p;
@@

switch (E) {
case KVM_PREFETCH_AUTO@p:
	...
}

@auto_use@
position p != {auto_cmp.p, auto_case.p};
position p1 : script:python() { not in_engine(p1) };
@@

KVM_PREFETCH_AUTO@p@p1

@depends on context@
position auto_use.p;
@@

* KVM_PREFETCH_AUTO@p

@script:python depends on org || report@
p << auto_use.p;
@@

warn(p, "WARNING: KVM_PREFETCH_AUTO produced outside the prefetch engine "
       "(arch/x86/kvm/mmu/prefetch.c)")
