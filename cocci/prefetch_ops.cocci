// SPDX-License-Identifier: GPL-2.0-only
///
/// A prefetch policy is a struct kvm_prefetch_ops that names itself, says
/// which module owns it and has the required callbacks: every initialized
/// struct kvm_prefetch_ops sets .name, .owner = THIS_MODULE and .window.
///
/// A policy that is registered is unregistered on the way out: for each
/// kvm_prefetch_register(X), the same file calls kvm_prefetch_unregister(X)
/// in its module's exit path, that is in a function marked __exit or
/// passed to module_exit(), or in a function those call (followed through
/// the files that register or unregister policies; this is how kvm.ko's
/// built-in policies are unregistered, from kvm_x86_exit()).  Where KVM is
/// built into the kernel and never unloads (arm64: CONFIG_KVM is bool and
/// arm_init() has no module_exit()), run-cocci.sh passes -D builtin: the
/// core's own registrations of the built-in policies (virt/kvm/prefetch.c)
/// then have no exit path to be paired in; policy modules still do.
///
/// Policies of BPF struct_ops maps (virt/kvm/prefetch_bpf.c) come and go
/// with their map's link: a kvm_prefetch_register(X) in the .reg callback
/// of a struct bpf_struct_ops is paired by kvm_prefetch_unregister(X) in
/// its .unreg callback instead.  The type's .cfi_stubs table is no policy
/// (it only gives the callbacks' prototypes) and needs .window only.
///
// Confidence: High
// Comments: the exit-path check looks at all files of one spatch run
//  together and reports at the end of the run (report and org modes).
// Options: --no-includes

virtual context
virtual org
virtual report
virtual builtin

@initialize:python@
@@
import re

REQUIRED = (".name", ".owner = THIS_MODULE", ".window")
STUB_REQUIRED = (".window",)
fields = {}		# ops initializer position -> fields it sets
stubs = set()		# (file, ops tables given as .cfi_stubs of a bpf_struct_ops)
bpf_reg = set()		# (file, .reg callbacks of a struct bpf_struct_ops)
bpf_unreg = set()	# (file, .unreg callbacks)
registered = []		# (position, file, argument)
unregistered = []	# (file, function, argument)
exit_fns = set()	# __exit and module_exit() functions
calls = {}		# function -> functions it calls
modes = set()

def key(p):
    return (p.file, p.line, p.column)

def norm(e):
    return re.sub(r"\s+", "", e)

def warn(p, msg):
    if "org" in modes:
        coccilib.org.print_todo(p, msg)
    else:
        coccilib.report.print_report(p, msg)

@script:python depends on org@
@@
modes.add("org")

@script:python depends on builtin@
@@
modes.add("builtin")

// ---- the ops table ----------------------------------------------------

@ops@
identifier x;
position p;
@@

struct kvm_prefetch_ops x@p = { ... };

@has_name@
identifier x;
expression E;
position p;
@@

struct kvm_prefetch_ops x@p = { ..., .name = E, ... };

@script:python@
p << has_name.p;
@@

fields.setdefault(key(p[0]), set()).add(".name")

@has_owner@
identifier x;
position p;
@@

struct kvm_prefetch_ops x@p = { ..., .owner = THIS_MODULE, ... };

@script:python@
p << has_owner.p;
@@

fields.setdefault(key(p[0]), set()).add(".owner = THIS_MODULE")

@has_window@
identifier x;
expression E;
position p;
@@

struct kvm_prefetch_ops x@p = { ..., .window = E, ... };

@script:python@
p << has_window.p;
@@

fields.setdefault(key(p[0]), set()).add(".window")

// A BPF struct_ops type: its callbacks and its stubs.
@bpf_stubs@
identifier s, x;
position q;
@@

struct bpf_struct_ops s@q = { ..., .cfi_stubs = &x, ... };

@script:python@
x << bpf_stubs.x;
p << bpf_stubs.q;
@@

stubs.add((p[0].file, x))

@bpf_reg_cb@
identifier s, fn;
position q;
@@

struct bpf_struct_ops s@q = { ..., .reg = fn, ... };

@script:python@
fn << bpf_reg_cb.fn;
p << bpf_reg_cb.q;
@@

bpf_reg.add((p[0].file, fn))

@bpf_unreg_cb@
identifier s, fn;
position q;
@@

struct bpf_struct_ops s@q = { ..., .unreg = fn, ... };

@script:python@
fn << bpf_unreg_cb.fn;
p << bpf_unreg_cb.q;
@@

bpf_unreg.add((p[0].file, fn))

@script:python incomplete@
p << ops.p;
x << ops.x;
missing;
@@

req = STUB_REQUIRED if (p[0].file, x) in stubs else REQUIRED
miss = [f for f in req if f not in fields.get(key(p[0]), set())]
if miss:
    coccinelle.missing = ", ".join(miss)
else:
    cocci.include_match(False)

@depends on context@
identifier ops.x;
position ops.p;
@@

* struct kvm_prefetch_ops x@p = { ... };

@script:python depends on org || report@
p << ops.p;
x << ops.x;
missing << incomplete.missing;
@@

warn(p[0], "WARNING: struct kvm_prefetch_ops %s does not set %s" %
     (x, missing))

// ---- register and unregister ------------------------------------------

@register_call@
identifier fn;
expression E;
position p;
@@

fn(...)
{
	<+...
	kvm_prefetch_register@p(E)
	...+>
}

@script:python depends on org || report@
rfn << register_call.fn;
p << register_call.p;
E << register_call.E;
@@

registered.append((p[0], p[0].file, rfn, norm(E)))

@release_call@
identifier fn;
expression E;
position p;
@@

fn(...)
{
	<+...
	kvm_prefetch_unregister@p(E)
	...+>
}

@script:python depends on org || report@
fn << release_call.fn;
E << release_call.E;
p << release_call.p;
@@

unregistered.append((p[0].file, fn, norm(E)))

// The module's exit path: __exit functions, module_exit() functions and
// what they call.
@exit_attr@
attribute name __exit;
identifier fn;
@@

void __exit fn(...) { ... }

@exit_decl@
declarer name module_exit;
identifier fn;
@@

module_exit(fn);

@script:python depends on org || report@
fn << exit_attr.fn;
@@

exit_fns.add(fn)

@script:python depends on org || report@
fn << exit_decl.fn;
@@

exit_fns.add(fn)

@exit_calls@
identifier fn, callee;
@@

void __exit fn(...)
{
	<... callee(...) ...>
}

@script:python depends on org || report@
fn << exit_calls.fn;
callee << exit_calls.callee;
@@

calls.setdefault(fn, set()).add(callee)

@module_exit_calls@
identifier exit_decl.fn, callee;
@@

fn(...)
{
	<... callee(...) ...>
}

@script:python depends on org || report@
fn << exit_decl.fn;
callee << module_exit_calls.callee;
@@

calls.setdefault(fn, set()).add(callee)

// Calls in files that register or unregister policies, to follow the exit
// path from a module's exit function into its helpers.
@policy_calls depends on register_call || release_call@
identifier fn, callee;
@@

fn(...)
{
	<... callee(...) ...>
}

@script:python depends on org || report@
fn << policy_calls.fn;
callee << policy_calls.callee;
@@

calls.setdefault(fn, set()).add(callee)

@finalize:python depends on org || report@
@@

on_exit_path = set(exit_fns)
todo = list(exit_fns)
while todo:
    for callee in calls.get(todo.pop(), ()):
        if callee not in on_exit_path:
            on_exit_path.add(callee)
            todo.append(callee)

BUILTIN_CORE = ("virt/kvm/prefetch.c",)

for p, f, fn, e in registered:
    if "builtin" in modes and any(("/" + f).endswith("/" + c)
                                  for c in BUILTIN_CORE):
        continue
    if (f, fn) in bpf_reg and any(uf == f and ue == e and (uf, ufn) in bpf_unreg
                                  for uf, ufn, ue in unregistered):
        continue
    if not any(uf == f and ue == e and ufn in on_exit_path
               for uf, ufn, ue in unregistered):
        warn(p, "WARNING: kvm_prefetch_register(%s) without "
             "kvm_prefetch_unregister(%s) in the module's exit path" % (e, e))
