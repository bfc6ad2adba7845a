// SPDX-License-Identifier: GPL-2.0-only
///
/// Every path into the MMU fault handler says where the fault comes from:
/// the enum kvm_prefetch_type argument of kvm_mmu_do_page_fault() (and of
/// any other function that takes one) is a KVM_PREFETCH_* enumerator or a
/// value of that enum type, never a bool or integer literal, a comparison
/// or another integer expression.  The patch mode turns false into
/// KVM_PREFETCH_GUEST_FAULT and, in kvm_arch_async_page_ready(), true
/// into KVM_PREFETCH_ASYNC; any other true is ambiguous and only
/// reported.
///
/// The functions that take the enum are listed in ORIGIN_ARGS below (name
/// and argument index) and matched by name, so that only files calling
/// them are parsed.  A definition or prototype that takes the enum and is
/// not listed there is reported too, so the list cannot fall behind.
///
// Confidence: High
// Comments: type information for "a value of that enum type" comes from
//  the headers found with -I; an expression whose type is unknown is
//  reported.
// Options: --include-headers-for-types --recursive-includes

virtual patch
virtual context
virtual org
virtual report

@initialize:python@
@@
# Functions with an enum kvm_prefetch_type parameter: name -> index.
ORIGIN_ARGS = {"kvm_mmu_do_page_fault": 3}
modes = set()

def warn(p, msg):
    if "org" in modes:
        coccilib.org.print_todo(p, msg)
    else:
        coccilib.report.print_report(p, msg)

def origin_msg(fn, arg):
    return ("WARNING: %s() origin argument \"%s\" is not a KVM_PREFETCH_* "
            "enumerator or an enum kvm_prefetch_type value" % (fn, arg))

def sig_msg(fn, n):
    n = int(n)
    if fn in ORIGIN_ARGS:
        return ("WARNING: %s() takes enum kvm_prefetch_type as argument %d, "
                "prefetch_origin.cocci expects %d" %
                (fn, n + 1, ORIGIN_ARGS[fn] + 1))
    return ("WARNING: %s() takes enum kvm_prefetch_type (argument %d) but "
            "is not checked: add it to ORIGIN_ARGS and the call rule of "
            "prefetch_origin.cocci" % (fn, n + 1))

@script:python depends on org@
@@

modes.add("org")

@fix_async depends on patch@
symbol true;
expression E1, E2, E3;
@@

kvm_arch_async_page_ready(...)
{
	<...
	kvm_mmu_do_page_fault(E1, E2, E3,
-			      true
+			      KVM_PREFETCH_ASYNC
			      , ...)
	...>
}

@fix_none depends on patch@
symbol false;
expression E1, E2, E3;
@@

kvm_mmu_do_page_fault(E1, E2, E3,
-		      false
+		      KVM_PREFETCH_GUEST_FAULT
		      , ...)

// The finder.  One disjunction per function of ORIGIN_ARGS, named
// literally (a metavariable would defeat spatch's token prefilter and
// make it parse every file).  The first two branches accept an enumerator
// (the four of enum kvm_prefetch_type, which are fixed: a new origin is a
// new rule for the fault path, and should come here too) or a value of the
// enum type.
@r depends on !patch@
expression list[3] es;
identifier C =~ "^KVM_PREFETCH_(GUEST_FAULT|MANUAL|ASYNC|AUTO)$";
enum kvm_prefetch_type V;
expression E;
position p;
@@

(
kvm_mmu_do_page_fault(es, C, ...)
|
kvm_mmu_do_page_fault(es, V, ...)
|
kvm_mmu_do_page_fault@p(es, E, ...)
)

@depends on context@
expression list[3] es;
expression E;
position r.p;
@@

* kvm_mmu_do_page_fault@p(es, E, ...)

@script:python depends on org || report@
p << r.p;
E << r.E;
@@

warn(p[0], origin_msg("kvm_mmu_do_page_fault", E))

// Functions that take the enum, to keep ORIGIN_ARGS complete: their
// definitions, then prototypes (with or without a parameter name).
@sig depends on !patch@
identifier f, t;
type T;
parameter list[n] ps;
parameter list qs;
position p;
@@

T f@p(ps, enum kvm_prefetch_type t, qs) { ... }

@proto depends on !patch@
identifier f, t;
type T;
parameter list[n] ps;
parameter list qs;
position p;
@@

(
T f@p(ps, enum kvm_prefetch_type t, qs);
|
T f@p(ps, enum kvm_prefetch_type, qs);
)

@script:python depends on org || report@
p << sig.p;
f << sig.f;
n << sig.n;
@@

if ORIGIN_ARGS.get(f) != int(n):
    warn(p[0], sig_msg(f, n))

@script:python depends on org || report@
p << proto.p;
f << proto.f;
n << proto.n;
@@

if ORIGIN_ARGS.get(f) != int(n):
    warn(p[0], sig_msg(f, n))
