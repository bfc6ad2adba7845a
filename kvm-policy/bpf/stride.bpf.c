// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_stride - prefetch for streams only.  Each vCPU's guest faults are
 * watched for a constant stride (the same distance, up to the VM's
 * nr_pages, between three faults in a row, forward or backward).  Once
 * one is seen, each fault in the stream opens a window of nr_pages pages
 * just past the fault's own mapping, in the stream's direction, and the
 * stream is expected to go on at its last page inside that window.
 * Faults that follow no stride open nothing: unlike auto, a random
 * access pattern maps no page it did not touch.  KVM_PRE_FAULT_MEMORY
 * and async #PF completions get auto's aligned window.
 *
 *	kvm-prefetch bpf load stride.bpf.o	# registers "bpf_stride"
 *
 * With every page present and a stream of stride d over pages of 4 KiB,
 * the first three faults find the stride; then each fault is followed by
 * floor(nr_pages / d) prefetched pages of the stream.
 */
#include "kvm_prefetch.bpf.h"

char _license[] SEC("license") = "GPL";

/* Up to this many vCPUs of a VM have a stream each (vcpu_idx below). */
#define KP_STRIDE_VCPUS	64

struct kp_stream_key {
	__u64 kvm;
	__u32 vcpu;
	__u32 pad;
};

struct kp_stream {
	__u64 last;	/* where the stream is expected to be */
	__s64 delta;	/* its stride in pages, 0 before the second fault */
	__u32 hits;	/* faults in a row that kept the stride */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct kp_stream_key);
	__type(value, struct kp_stream);
} kp_streams SEC(".maps");

SEC("struct_ops/window")
bool BPF_PROG(bpf_stride_window, const struct kvm_prefetch_state *st,
	      const struct kvm_prefetch_fault *f, struct kvm_prefetch_window *w)
{
	struct kp_stream_key key = {};
	struct kp_stream *s, fresh = {};
	__u64 gfn = f->gfn, mstart, mend, start, len;
	__u32 nr = st->nr_pages;
	__s64 d;

	if (f->origin == KVM_PREFETCH_MANUAL || f->origin == KVM_PREFETCH_ASYNC)
		return kp_aligned_window(gfn, f->mapped_pages, nr, w);
	if (f->origin != KVM_PREFETCH_GUEST_FAULT || f->vcpu_idx >= KP_STRIDE_VCPUS)
		return false;
	if (nr > KVM_PREFETCH_MAX_PAGES)
		nr = KVM_PREFETCH_MAX_PAGES;
	if (nr <= 1)
		return false;

	key.kvm = (__u64)st->kvm;
	key.vcpu = f->vcpu_idx;
	s = bpf_map_lookup_elem(&kp_streams, &key);
	if (!s) {
		fresh.last = gfn;
		bpf_map_update_elem(&kp_streams, &key, &fresh, BPF_ANY);
		return false;
	}

	d = (__s64)(gfn - s->last);
	if (d && d == s->delta && d <= nr && -d <= nr)
		s->hits++;
	else
		s->hits = 0;
	s->delta = d;
	s->last = gfn;
	if (!s->hits)
		return false;

	mstart = gfn & ~((__u64)f->mapped_pages - 1);
	mend = mstart + f->mapped_pages;
	if (d > 0) {
		start = mend;
		len = nr;
		/* The stream's last page in [gfn, start + len). */
		s->last = gfn + (start + len - 1 - gfn) / d * d;
	} else {
		len = mstart < nr ? mstart : nr;
		if (!len)
			return false;
		start = mstart - len;
		s->last = gfn - (gfn - start) / -d * -d;
	}
	w->start = start;
	w->nr_pages = len;
	return true;
}

/* A new VM may reuse a gone one's address: forget its streams. */
SEC("struct_ops/init")
int BPF_PROG(bpf_stride_init, struct kvm_prefetch_state *st)
{
	struct kp_stream_key key = {};
	__u32 i;

	key.kvm = (__u64)st->kvm;
	for (i = 0; i < KP_STRIDE_VCPUS; i++) {
		key.vcpu = i;
		bpf_map_delete_elem(&kp_streams, &key);
	}
	return 0;
}

SEC(".struct_ops.link")
struct kvm_prefetch_ops bpf_stride = {
	.window	= (void *)bpf_stride_window,
	.init	= (void *)bpf_stride_init,
	.default_nr_pages = 32,
	.name	= "bpf_stride",
};
