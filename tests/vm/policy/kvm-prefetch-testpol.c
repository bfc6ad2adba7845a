// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvm-prefetch-testpol: a policy for the in-VM tests of module lifecycle,
 * autoload and the engine's window walk.  After every guest fault it asks
 * for the window that starts "offset" pages from the faulting page and is
 * "pages" long (by default the VM's nr_pages - 1 pages that follow the
 * fault, not the aligned window around it), so a test can tell it apart
 * from the built-ins by what gets mapped, or place a window above, below
 * or around the fault.  It counts the VMs using it in a parameter, so
 * tests can check init/release balance.
 *
 * init_tgid is the thread group of the last init(): the process that
 * selected the policy, whose memory cgroup the state is charged to.
 *
 * With init_fail_ms=N its init registers the policy, sleeps N ms,
 * unregisters it and fails: the window in which the policy is listed but
 * its module is still coming, for the registry's race test.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kvm_prefetch.h>
#include <linux/module.h>
#include <linux/sched.h>

static atomic_t testpol_users = ATOMIC_INIT(0);

static int testpol_users_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&testpol_users));
}

static const struct kernel_param_ops testpol_users_ops = {
	.get = testpol_users_get,
};
module_param_cb(users, &testpol_users_ops, NULL, 0444);
MODULE_PARM_DESC(users, "VMs whose state this policy holds");

static int testpol_offset = 1;
module_param_named(offset, testpol_offset, int, 0644);
MODULE_PARM_DESC(offset, "Window start, in pages from the faulting page");

static unsigned int testpol_pages;
module_param_named(pages, testpol_pages, uint, 0644);
MODULE_PARM_DESC(pages, "Window length in pages (0: the VM's nr_pages - 1)");

static unsigned int init_fail_ms;
module_param(init_fail_ms, uint, 0444);
MODULE_PARM_DESC(init_fail_ms,
		 "If set, init registers, sleeps this long, unregisters and fails");

static bool testpol_window(const struct kvm_prefetch_state *st,
			   const struct kvm_prefetch_fault *f,
			   struct kvm_prefetch_window *w)
{
	s64 offset = READ_ONCE(testpol_offset);
	u32 pages = READ_ONCE(testpol_pages);

	if (f->origin != KVM_PREFETCH_GUEST_FAULT)
		return false;
	if (!pages)
		pages = st->nr_pages ? st->nr_pages - 1 : 0;
	/* No window that would start below gfn 0. */
	if (!pages || (offset < 0 && f->gfn < (u64)-offset))
		return false;
	w->start = f->gfn + offset;
	w->nr_pages = pages;
	return true;
}

static int init_tgid;
module_param(init_tgid, int, 0444);
MODULE_PARM_DESC(init_tgid, "Thread group that ran the last init()");

static int testpol_init(struct kvm_prefetch_state *st)
{
	WRITE_ONCE(init_tgid, task_tgid_nr(current));
	atomic_inc(&testpol_users);
	return 0;
}

static void testpol_release(struct kvm_prefetch_state *st)
{
	atomic_dec(&testpol_users);
}

static struct kvm_prefetch_ops testpol_ops = {
	.window		= testpol_window,
	.init		= testpol_init,
	.release	= testpol_release,
	.name		= "testpol",
	.owner		= THIS_MODULE,
};

static int __init testpol_module_init(void)
{
	int ret = kvm_prefetch_register(&testpol_ops);

	if (ret || !init_fail_ms)
		return ret;
	/* Registered, module still coming: VMs race to select it. */
	msleep(init_fail_ms);
	kvm_prefetch_unregister(&testpol_ops);
	pr_info("init fails on request after %u ms\n", init_fail_ms);
	return -EAGAIN;
}

static void __exit testpol_module_exit(void)
{
	kvm_prefetch_unregister(&testpol_ops);
}

module_init(testpol_module_init);
module_exit(testpol_module_exit);

MODULE_DESCRIPTION("KVM prefetch policy for the project's lifecycle tests");
MODULE_LICENSE("GPL");
MODULE_ALIAS("kvm-prefetch-testpol");
