// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_uapi: the framework is built into arm64's KVM with the same
 * uAPI and defaults as on x86: the kvm.prefetch_* parameters with their
 * defaults, the built-in policies, KVM_GET_PREFETCH_POLICY.  With the
 * arm64 engine KVM_CAP_PREFETCH_POLICY gives the largest window
 * (KVM_PREFETCH_MAX_PAGES) and KVM_SET_PREFETCH_POLICY takes a policy,
 * which GET then reports.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "a64.h"

static void param(const char *name, char *buf, size_t size)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/kvm/parameters/%s", name);
	buf[0] = 0;
	f = fopen(path, "r");
	if (f) {
		if (!fgets(buf, size, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
}

int main(void)
{
	struct kvm_prefetch_policy p;
	struct a64_vm *vm;
	char buf[256];
	int r;

	a64_require_kvm();
	param("prefetch_policy", buf, sizeof(buf));
	A64_EXPECT(!strcmp(buf, "none"), "prefetch_policy default '%s' is none",
		   buf);
	param("prefetch_nr_pages", buf, sizeof(buf));
	A64_EXPECT(!strcmp(buf, "8"), "prefetch_nr_pages default '%s' is 8",
		   buf);
	param("prefetch_gup", buf, sizeof(buf));
	A64_EXPECT(!strcmp(buf, "nofault"), "prefetch_gup default '%s'", buf);
	param("prefetch_available", buf, sizeof(buf));
	A64_EXPECT(strstr(buf, "none") && strstr(buf, "manual") &&
		   strstr(buf, "async") && strstr(buf, "auto"),
		   "prefetch_available '%s' has the built-ins", buf);

	vm = a64_vm_create();
	memset(&p, 0, sizeof(p));
	r = ioctl(vm->fd, KVM_GET_PREFETCH_POLICY, &p);
	A64_EXPECT(!r && !strcmp(p.name, "none"),
		   "KVM_GET_PREFETCH_POLICY: r=%d '%s' nr_pages=%u", r ? -errno : 0,
		   p.name, p.nr_pages);
	r = a64_vm_check_ext(vm, KVM_CAP_PREFETCH_POLICY);
	A64_EXPECT(r == KVM_PREFETCH_MAX_PAGES,
		   "KVM_CAP_PREFETCH_POLICY %d == %d with the engine", r,
		   KVM_PREFETCH_MAX_PAGES);
	r = a64_vm_set_prefetch(vm, "auto", 16, KVM_PREFETCH_GUP_FAST_ONLY);
	A64_EXPECT(!r, "KVM_SET_PREFETCH_POLICY auto-16 fast: %s",
		   r ? strerror(-r) : "ok");
	memset(&p, 0, sizeof(p));
	r = ioctl(vm->fd, KVM_GET_PREFETCH_POLICY, &p);
	A64_EXPECT(!r && !strcmp(p.name, "auto") && p.nr_pages == 16 &&
		   p.gup == KVM_PREFETCH_GUP_FAST_ONLY,
		   "KVM_GET_PREFETCH_POLICY after SET: r=%d '%s' nr_pages=%u gup=%u",
		   r ? -errno : 0, p.name, p.nr_pages, p.gup);
	r = a64_vm_set_prefetch(vm, "no-such", 8, KVM_PREFETCH_GUP_NOFAULT);
	A64_EXPECT(r == -ENOENT, "KVM_SET_PREFETCH_POLICY of an unknown policy: %s",
		   r ? strerror(-r) : "accepted");
	a64_vm_free(vm);
	return a64_exit();
}
