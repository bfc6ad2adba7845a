// SPDX-License-Identifier: GPL-2.0-only
///
/// A prefetch fault (origin KVM_PREFETCH_AUTO) never waits for I/O and
/// never faults a host page in, so it must not reach a pfn lookup that
/// can: __gfn_to_pfn_memslot() without atomic, gfn_to_pfn*(),
/// gfn_to_page(), hva_to_pfn*(), get_user_pages*() or pin_user_pages*()
/// without FOLL_NOFAULT (FOLL_NOWAIT still faults pages in, e.g. from
/// zswap), fixup_user_fault() or handle_mm_fault().
///
/// The AUTO path is kvm_mmu_prefetch_faultin_pfn() and
/// kvm_prefetch_gfn_to_pfn(), and every function they call, directly or
/// not, that is defined in a file defining one of them.  A function that
/// diverts AUTO faults to kvm_mmu_prefetch_faultin_pfn() (kvm_faultin_pfn())
/// must not reach such a lookup before the test for KVM_PREFETCH_AUTO.
///
// Confidence: High
// Comments: the AUTO path may span files; report and org modes report at
//  the end of the run, context mode marks the calls on the path as far as
//  the files seen so far show it.
// Options: --no-includes

virtual context
virtual org
virtual report

@initialize:python@
@@
ROOTS = ("kvm_mmu_prefetch_faultin_pfn", "kvm_prefetch_gfn_to_pfn")
calls = {}		# function -> functions it calls
lookups = []		# (position, function, callee)
harmless = set()	# GUP calls with FOLL_NOFAULT
modes = set()

def key(p):
    return (p.file, p.line, p.column)

def auto_path():
    """Functions reachable from ROOTS, each with the chain that reaches it."""
    chain = dict((r, [r]) for r in ROOTS)
    todo = list(ROOTS)
    while todo:
        fn = todo.pop(0)
        for callee in sorted(calls.get(fn, ())):
            if callee not in chain:
                chain[callee] = chain[fn] + [callee]
                todo.append(callee)
    return chain

def lookup_msg(callee, chain):
    return ("WARNING: %s() can wait or fault a page in, on the AUTO "
            "prefetch path (%s)" % (callee, " -> ".join(chain)))

def warn(p, msg):
    if "org" in modes:
        coccilib.org.print_todo(p, msg)
    else:
        coccilib.report.print_report(p, msg)

@script:python depends on org@
@@
modes.add("org")

@root_engine@
@@

kvm_mmu_prefetch_faultin_pfn(...) { ... }

@root_resolver@
@@

kvm_prefetch_gfn_to_pfn(...) { ... }

@path_calls depends on root_engine || root_resolver@
identifier fn, callee;
@@

fn(...)
{
	<... callee(...) ...>
}

@script:python@
fn << path_calls.fn;
callee << path_calls.callee;
@@

calls.setdefault(fn, set()).add(callee)

// Functions that divert AUTO faults to kvm_mmu_prefetch_faultin_pfn()
// (kvm_faultin_pfn()): they test for KVM_PREFETCH_AUTO, then do the
// waiting lookup for the other origins.
@divert@
identifier fn;
@@

fn(...)
{
	<+... kvm_mmu_prefetch_faultin_pfn(...) ...+>
}

// FOLL_NOFAULT makes get/pin_user_pages*() harmless.
@nofault depends on root_engine || root_resolver || divert@
identifier gup =~ "^(get|pin)_user_pages(_fast|_remote|_unlocked)?$";
expression F;
position p;
@@

gup@p(..., F, ...)

@script:python@
p << nofault.p;
F << nofault.F;
@@

if "FOLL_NOFAULT" in F:
    harmless.add(key(p[0]))

// Lookups that may wait or fault.  The first branch is the harmless form
// of __gfn_to_pfn_memslot().
@lookup depends on root_engine || root_resolver@
symbol true;
identifier fn;
identifier bad =~ "^(__gfn_to_pfn_memslot|(kvm_vcpu_)?gfn_to_(pfn|page).*|hva_to_pfn.*|(get|pin)_user_pages(_fast|_remote|_unlocked)?|fixup_user_fault|handle_mm_fault)$";
expression E1, E2;
position p;
@@

fn(...)
{
	<...
(
	__gfn_to_pfn_memslot(E1, E2, true, ...)
|
	bad@p(...)
)
	...>
}

@script:python@
fn << lookup.fn;
bad << lookup.bad;
p << lookup.p;
@@

for pos in p:
    if key(pos) not in harmless:
        lookups.append((pos, fn, bad))

@script:python on_path depends on context@
p << lookup.p;
fn << lookup.fn;
bad << lookup.bad;
@@

if fn not in auto_path() or key(p[0]) in harmless:
    cocci.include_match(False)

@depends on context@
identifier lookup.bad;
position lookup.p;
@@

* bad@p(...)

// A waiting lookup on a path that has not tested for KVM_PREFETCH_AUTO.
@early depends on divert@
symbol true;
identifier divert.fn;
identifier bad =~ "^(__gfn_to_pfn_memslot|(kvm_vcpu_)?gfn_to_(pfn|page).*|hva_to_pfn.*|(get|pin)_user_pages(_fast|_remote|_unlocked)?|fixup_user_fault|handle_mm_fault)$";
expression E, E1, E2;
position p;
@@

fn(...)
{
	... when exists
	    when != E == KVM_PREFETCH_AUTO
	    when != E != KVM_PREFETCH_AUTO
	    when != KVM_PREFETCH_AUTO == E
	    when != KVM_PREFETCH_AUTO != E
(
	__gfn_to_pfn_memslot(E1, E2, true, ...)
|
	bad@p(...)
)
	... when any
}

@depends on context@
identifier early.bad;
position early.p;
@@

* bad@p(...)

@script:python depends on org || report@
p << early.p;
fn << divert.fn;
bad << early.bad;
@@

if key(p[0]) not in harmless:
    warn(p[0], "WARNING: %s() can wait or fault a page in, and %s() "
         "reaches it before diverting KVM_PREFETCH_AUTO faults" % (bad, fn))

@finalize:python depends on org || report@
@@

chain = auto_path()
for p, fn, callee in lookups:
    if fn in chain:
        warn(p, lookup_msg(callee, chain[fn]))
