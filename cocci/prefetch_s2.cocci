// SPDX-License-Identifier: GPL-2.0-only
///
/// arm64's stage-2 prefetch has one way in, and maps only under the
/// mmu_notifier retry check:
///  - the engine, kvm_arm_prefetch(), is called only from
///    user_mem_abort() (6.1; on 7.3 from kvm_s2_fault_map(), the part of
///    it that maps), from one place, under a test of
///    kvm_prefetch_may_open(), and never while that function holds
///    mmu_lock (the engine takes it itself, and its GUP may take
///    mmap_lock, which nests outside mmu_lock);
///  - in the engine, arch/arm64/kvm/prefetch.c, no kvm_pgtable_stage2_map()
///    (or its per-base wrapper prefetch_s2_map()) is reached on any path that has not taken mmu_lock for write, that
///    dropped it since, or that took it without an mmu_invalidate_retry()
///    test after: a page mapped behind the back of an invalidation that
///    has begun would outlive the host's unmapping of it.
///
// Confidence: High
// Comments: path-sensitive (exists): one path that breaks the order is a
//  report, even where another path keeps it.
// Options: --no-includes

virtual context
virtual org
virtual report

@initialize:python@
@@
# Tree paths, as scripts/arm64-kernel.sh lays our files out in the tree.
ENGINE = ("arch/arm64/kvm/prefetch.c",)
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
identifier F = {user_mem_abort, kvm_s2_fault_map};
expression K, C;
position p;
@@

F(...)
{
	<...
	if (kvm_prefetch_may_open(K) && C)
		kvm_arm_prefetch@p(...);
	...>
}

@script:python depends on org || report@
p << dispatch.p;
@@

for pos in p:
    dispatch_sites.append(pos)
    if len(dispatch_sites) > 1:
        warn([pos], "WARNING: second dispatch site of kvm_arm_prefetch() "
               "(first: %s:%s)" % (dispatch_sites[0].file,
                                   dispatch_sites[0].line))

@engine_call@
position p != dispatch.p;
@@

kvm_arm_prefetch@p(...)

@depends on context@
position engine_call.p;
@@

* kvm_arm_prefetch@p(...)

@script:python depends on org || report@
p << engine_call.p;
@@

warn(p, "WARNING: kvm_arm_prefetch() called outside user_mem_abort() or "
       "without a kvm_prefetch_may_open() test")

@locked_call exists@
expression L;
position p;
@@

(
write_lock(&L->mmu_lock);
|
read_lock(&L->mmu_lock);
|
kvm_fault_lock(L);
)
... when != write_unlock(&L->mmu_lock)
    when != read_unlock(&L->mmu_lock)
    when != kvm_fault_unlock(L)
kvm_arm_prefetch@p(...)

@script:python depends on org || report@
p << locked_call.p;
@@

warn(p, "WARNING: kvm_arm_prefetch() called with mmu_lock held")

// ---- the engine's mappings ---------------------------------------------

@map_unlocked exists@
identifier F;
position p : script:python() { in_files(p, ENGINE) };
@@

F(...)
{
	... when != write_lock(...)
(
	kvm_pgtable_stage2_map@p(...)
|
	prefetch_s2_map@p(...)
)
	...
}

@script:python depends on org || report@
p << map_unlocked.p;
@@

warn(p, "WARNING: kvm_pgtable_stage2_map() in the prefetch engine on a "
       "path that did not take mmu_lock for write")

@map_dropped exists@
expression L;
position p : script:python() { in_files(p, ENGINE) };
@@

write_unlock(&L->mmu_lock);
... when != write_lock(...)
(
kvm_pgtable_stage2_map@p(...)
|
prefetch_s2_map@p(...)
)

@script:python depends on org || report@
p << map_dropped.p;
@@

warn(p, "WARNING: kvm_pgtable_stage2_map() in the prefetch engine after "
       "mmu_lock was dropped")

@map_unchecked exists@
expression L;
position p : script:python() { in_files(p, ENGINE) };
@@

write_lock(&L->mmu_lock);
... when != mmu_invalidate_retry(...)
(
kvm_pgtable_stage2_map@p(...)
|
prefetch_s2_map@p(...)
)

@script:python depends on org || report@
p << map_unchecked.p;
@@

warn(p, "WARNING: kvm_pgtable_stage2_map() in the prefetch engine without "
       "an mmu_invalidate_retry() test after taking mmu_lock")

