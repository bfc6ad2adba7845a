// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM prefetch policies written in BPF: a struct_ops type over struct
 * kvm_prefetch_ops (Linux 6.9+ lets a module register one).
 *
 * A BPF object that fills in a "struct kvm_prefetch_ops" in its
 * .struct_ops.link section (window, and optionally init, release, name,
 * default_nr_pages) becomes, when its link is created, a policy in the
 * same registry as the built-in and module policies: a VM selects it with
 * KVM_SET_PREFETCH_POLICY, the kvm.prefetch_policy default can name it.
 * The core sees the struct_ops map's copy of the ops table, whose function
 * pointers are the BPF trampolines, and whose owner is BPF_MODULE_OWNER.
 *
 * Lifetime: detaching the link unregisters the policy (no new VM can pick
 * it) but a VM that uses it keeps it: every VM holds a reference on the
 * struct_ops map, which keeps the programs and trampolines, until it
 * switches away or is destroyed.  A map also pins kvm.ko (the BPF core
 * holds the module of the type's BTF), so kvm.ko cannot go while one
 * lives.
 *
 * What a program may do: read its arguments (BTF pointers), write only
 * the start and nr_pages of the struct kvm_prefetch_window it is given,
 * call the base helpers.  The engine clips the window as for any policy.
 * The type follows struct kvm_prefetch_ops and is no stable ABI; the
 * ioctl and the parameters are.
 *
 * Holding the map: the BPF core's bpf_struct_ops_get() would do it but
 * is not exported to modules in 6.12.  The map is reached from the ops
 * table by an offset read from the kernel's BTF (struct
 * bpf_struct_ops_map ends with the value, whose data ends it), checked
 * on every use against the map's type and value type, and referenced
 * with the exported bpf_map_inc_not_zero().
 */
#define pr_fmt(fmt) "kvm-prefetch: " fmt

#include <linux/bpf.h>
#include <linux/bpf_verifier.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>

#include "prefetch_internal.h"

enum {
	KP_BTF_WINDOW,
	KP_BTF_ST_MAP,
	KP_BTF_ST_VALUE,
	KP_BTF_MAP,
	KP_BTF_VALUE,
};

/* Filled in at build time by resolve_btfids (kvm.ko's and the kernel's BTF). */
BTF_ID_LIST(kp_bpf_ids)
BTF_ID(struct, kvm_prefetch_window)
BTF_ID(struct, bpf_struct_ops_map)
BTF_ID(struct, bpf_struct_ops_value)
BTF_ID(struct, bpf_map)
BTF_ID(struct, bpf_struct_ops_kvm_prefetch_ops)

/* kvm.ko's BTF, from the type's init; the ops table's offset in its map. */
static const struct btf *kp_bpf_btf;
static u32 kp_bpf_kdata_off;

/* The type id and byte offset of struct @id's first or last member. */
static int kp_bpf_member(const struct btf *btf, u32 id, bool last,
			 u32 *type, u32 *off)
{
	const struct btf_type *t = id ? btf_type_by_id(btf, id) : NULL;
	const struct btf_member *m;

	if (!t || !btf_type_is_struct(t) || !btf_type_vlen(t))
		return -ENOENT;
	m = btf_members(t) + (last ? btf_type_vlen(t) - 1 : 0);
	*type = m->type;
	*off = __btf_member_bit_offset(t, m) / 8;
	return 0;
}

static int kp_bpf_init(struct btf *btf)
{
	u32 type, off, value_off, data_off;

	/* struct bpf_struct_ops_map { struct bpf_map map; ... value; } */
	if (kp_bpf_member(btf, kp_bpf_ids[KP_BTF_ST_MAP], false, &type, &off) ||
	    type != kp_bpf_ids[KP_BTF_MAP] || off)
		goto layout;
	if (kp_bpf_member(btf, kp_bpf_ids[KP_BTF_ST_MAP], true, &type,
			  &value_off) || type != kp_bpf_ids[KP_BTF_ST_VALUE])
		goto layout;
	/* struct bpf_struct_ops_value { ...; char data[]; } */
	if (kp_bpf_member(btf, kp_bpf_ids[KP_BTF_ST_VALUE], true, &type,
			  &data_off))
		goto layout;
	kp_bpf_kdata_off = value_off + data_off;
	kp_bpf_btf = btf;
	return 0;

layout:
	pr_warn("BPF policies unavailable: unexpected struct_ops map layout\n");
	return -EOPNOTSUPP;
}

/* The struct_ops map that holds @ops, or NULL if it is not one of ours. */
static struct bpf_map *kp_bpf_map(const struct kvm_prefetch_ops *ops)
{
	struct bpf_map *map;

	if (!kp_bpf_kdata_off)
		return NULL;
	map = (struct bpf_map *)((const char *)ops - kp_bpf_kdata_off);
	if (map->map_type != BPF_MAP_TYPE_STRUCT_OPS ||
	    map->btf_vmlinux_value_type_id != kp_bpf_ids[KP_BTF_VALUE]) {
		pr_warn_once("policy %.*s: not in a kvm_prefetch_ops map\n",
			     (int)sizeof(ops->name), ops->name);
		return NULL;
	}
	return map;
}

/**
 * kvm_prefetch_is_bpf() - is @ops a policy of a BPF struct_ops map?
 * @ops: a registered policy
 */
bool kvm_prefetch_is_bpf(const struct kvm_prefetch_ops *ops)
{
	return ops->owner == BPF_MODULE_OWNER;
}

/**
 * kvm_prefetch_bpf_get() - reference the map of a BPF policy
 * @ops: a BPF policy found in the registry (rcu_read_lock() held)
 *
 * Return: false if the map is going away.
 */
bool kvm_prefetch_bpf_get(const struct kvm_prefetch_ops *ops)
{
	struct bpf_map *map = kp_bpf_map(ops);

	return map && !IS_ERR(bpf_map_inc_not_zero(map));
}

/**
 * kvm_prefetch_bpf_put() - drop a reference from kvm_prefetch_bpf_get()
 * @ops: the BPF policy
 */
void kvm_prefetch_bpf_put(const struct kvm_prefetch_ops *ops)
{
	struct bpf_map *map = kp_bpf_map(ops);

	if (map)
		bpf_map_put(map);
}

/* ---- the struct_ops type ------------------------------------------ */

static bool kp_bpf_is_valid_access(int off, int size,
				   enum bpf_access_type type,
				   const struct bpf_prog *prog,
				   struct bpf_insn_access_aux *info)
{
	return bpf_tracing_btf_ctx_access(off, size, type, prog, info);
}

/*
 * Writes through BTF pointers: only the window's start and nr_pages, and
 * only through the window the hook was given (a trusted argument), not a
 * pointer the program found elsewhere.
 */
static int kp_bpf_struct_access(struct bpf_verifier_log *log,
				const struct bpf_reg_state *reg, int off,
				int size)
{
	if (!(reg->type & PTR_TRUSTED)) {
		bpf_log(log, "kvm_prefetch_ops: only the window argument is writable\n");
		return -EACCES;
	}
	if (reg->btf != kp_bpf_btf ||
	    reg->btf_id != kp_bpf_ids[KP_BTF_WINDOW]) {
		bpf_log(log, "kvm_prefetch_ops: only struct kvm_prefetch_window is writable\n");
		return -EACCES;
	}
	if (off < 0 ||
	    off + size > offsetofend(struct kvm_prefetch_window, nr_pages)) {
		bpf_log(log, "kvm_prefetch_ops: write at %d size %d is outside the window\n",
			off, size);
		return -EACCES;
	}
	return 0;
}

/*
 * window() runs in the vCPU's fault path under rcu_read_lock(): no
 * bpf_loop(), whose callback may run 2^23 times.  What remains is
 * bounded by the verifier (straight code and bounded loops, at most a
 * million instructions processed); open-coded iterators (bpf_iter_num,
 * common kfuncs) are not refused and may loop 2^23 times too: a policy
 * that uses them stalls its own VM's faults, not the host.
 */
static const struct bpf_func_proto *
kp_bpf_func_proto(enum bpf_func_id func_id, const struct bpf_prog *prog)
{
	if (func_id == BPF_FUNC_loop)
		return NULL;
	return bpf_base_func_proto(func_id, prog);
}

static const struct bpf_verifier_ops kp_bpf_verifier_ops = {
	.get_func_proto		= kp_bpf_func_proto,
	.is_valid_access	= kp_bpf_is_valid_access,
	.btf_struct_access	= kp_bpf_struct_access,
};

/* window() runs under rcu_read_lock() in the fault path. */
static int kp_bpf_check_member(const struct btf_type *t,
			       const struct btf_member *member,
			       const struct bpf_prog *prog)
{
	if (prog->sleepable)
		return -EINVAL;
	return 0;
}

static int kp_bpf_init_member(const struct btf_type *t,
			      const struct btf_member *member, void *kdata,
			      const void *udata)
{
	const struct kvm_prefetch_ops *uops = udata;
	struct kvm_prefetch_ops *ops = kdata;

	switch (__btf_member_bit_offset(t, member) / 8) {
	case offsetof(struct kvm_prefetch_ops, name):
		if (!kvm_prefetch_name_valid(uops->name, sizeof(uops->name)))
			return -EINVAL;
		strscpy(ops->name, uops->name, sizeof(ops->name));
		return 1;
	case offsetof(struct kvm_prefetch_ops, default_nr_pages):
		ops->default_nr_pages = uops->default_nr_pages;
		return 1;
	}
	return 0;
}

static int kp_bpf_validate(void *kdata)
{
	return kvm_prefetch_validate(kdata);
}

static int kp_bpf_reg(void *kdata, struct bpf_link *link)
{
	if (!kp_bpf_map(kdata))
		return -EOPNOTSUPP;
	return kvm_prefetch_register(kdata);
}

static void kp_bpf_unreg(void *kdata, struct bpf_link *link)
{
	kvm_prefetch_unregister(kdata);
}

static bool kp_bpf_stub_window(const struct kvm_prefetch_state *st,
			       const struct kvm_prefetch_fault *f,
			       struct kvm_prefetch_window *w)
{
	return false;
}

static int kp_bpf_stub_init(struct kvm_prefetch_state *st)
{
	return 0;
}

static void kp_bpf_stub_release(struct kvm_prefetch_state *st)
{
}

static struct kvm_prefetch_ops kp_bpf_cfi_stubs = {
	.window		= kp_bpf_stub_window,
	.init		= kp_bpf_stub_init,
	.release	= kp_bpf_stub_release,
};

static struct bpf_struct_ops kp_bpf_ops = {
	.verifier_ops	= &kp_bpf_verifier_ops,
	.init		= kp_bpf_init,
	.check_member	= kp_bpf_check_member,
	.init_member	= kp_bpf_init_member,
	.validate	= kp_bpf_validate,
	.reg		= kp_bpf_reg,
	.unreg		= kp_bpf_unreg,
	.cfi_stubs	= &kp_bpf_cfi_stubs,
	.name		= "kvm_prefetch_ops",
	.owner		= THIS_MODULE,
};

/**
 * kvm_prefetch_bpf_init() - register the struct_ops type (kvm.ko init)
 *
 * A kernel without BTF for kvm.ko cannot have the type: kvm.ko loads
 * without BPF policies and says so.
 */
void kvm_prefetch_bpf_init(void)
{
	int ret = register_bpf_struct_ops(&kp_bpf_ops, kvm_prefetch_ops);

	if (ret)
		pr_notice("BPF policies unavailable (struct_ops type: %d)\n",
			  ret);
}
