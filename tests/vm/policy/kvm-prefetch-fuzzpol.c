// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvm-prefetch-fuzzpol: a hostile policy for tests/vm/prefetch_fuzz.c.
 * Every answer is the test's, drawn from its seeded generator and written
 * into the parameters before the guest runs:
 *
 *	init_ret	what init() returns (any int)
 *	init_scribble	if set, init() also changes st->nr_pages
 *	ret, start, pages
 *			the answers of window() calls 0, 1, 2, ... (modulo the
 *			number given): ret 0 returns false, 1 writes the window
 *			[start, start + pages) and returns true, 2 returns true
 *			without writing the window
 *	calls		window() calls so far (write 0 to start over)
 *	bad_prefill	window() calls that found their window other than
 *			{ the faulting gfn, 0 } (the core's pre-fill)
 *	users		VMs whose state this policy holds
 *
 * No answer is checked here: that is the engine's job, and the test's
 * reference model says what the engine must do with each.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kvm_prefetch.h>
#include <linux/module.h>

#define FUZZPOL_MAX_ANSWERS	16

static int init_ret;
module_param(init_ret, int, 0644);
MODULE_PARM_DESC(init_ret, "What init() returns");

static bool init_scribble;
module_param(init_scribble, bool, 0644);
MODULE_PARM_DESC(init_scribble, "init() also changes st->nr_pages");

static int answer_ret[FUZZPOL_MAX_ANSWERS];
static unsigned long long answer_start[FUZZPOL_MAX_ANSWERS];
static unsigned int answer_pages[FUZZPOL_MAX_ANSWERS];
static unsigned int nr_ret, nr_start, nr_pages;
module_param_array_named(ret, answer_ret, int, &nr_ret, 0644);
MODULE_PARM_DESC(ret, "window() answers: 0 false, 1 the window, 2 true without writing it");
module_param_array_named(start, answer_start, ullong, &nr_start, 0644);
MODULE_PARM_DESC(start, "window() answers: first gfn");
module_param_array_named(pages, answer_pages, uint, &nr_pages, 0644);
MODULE_PARM_DESC(pages, "window() answers: length in pages");

static atomic_t fuzzpol_calls = ATOMIC_INIT(0);
static atomic_t fuzzpol_bad_prefill = ATOMIC_INIT(0);
static atomic_t fuzzpol_users = ATOMIC_INIT(0);

static int fuzzpol_calls_set(const char *val, const struct kernel_param *kp)
{
	atomic_set(&fuzzpol_calls, 0);
	return 0;
}

static int fuzzpol_calls_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&fuzzpol_calls));
}

static const struct kernel_param_ops fuzzpol_calls_ops = {
	.set = fuzzpol_calls_set,
	.get = fuzzpol_calls_get,
};
module_param_cb(calls, &fuzzpol_calls_ops, NULL, 0644);
MODULE_PARM_DESC(calls, "window() calls so far (write to reset)");

static int fuzzpol_bad_prefill_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&fuzzpol_bad_prefill));
}

static const struct kernel_param_ops fuzzpol_bad_prefill_ops = {
	.get = fuzzpol_bad_prefill_get,
};
module_param_cb(bad_prefill, &fuzzpol_bad_prefill_ops, NULL, 0444);
MODULE_PARM_DESC(bad_prefill, "window() calls whose window was not pre-filled");

static int fuzzpol_users_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&fuzzpol_users));
}

static const struct kernel_param_ops fuzzpol_users_ops = {
	.get = fuzzpol_users_get,
};
module_param_cb(users, &fuzzpol_users_ops, NULL, 0444);
MODULE_PARM_DESC(users, "VMs whose state this policy holds");

static bool fuzzpol_window(const struct kvm_prefetch_state *st,
			   const struct kvm_prefetch_fault *f,
			   struct kvm_prefetch_window *w)
{
	unsigned int n = min3(READ_ONCE(nr_ret), READ_ONCE(nr_start),
			      READ_ONCE(nr_pages));
	unsigned int i;

	if (w->start != f->gfn || w->nr_pages)
		atomic_inc(&fuzzpol_bad_prefill);
	if (!n)
		return false;
	i = (unsigned int)atomic_inc_return(&fuzzpol_calls) - 1;
	i %= n;
	if (READ_ONCE(answer_ret[i]) == 1) {
		w->start = READ_ONCE(answer_start[i]);
		w->nr_pages = READ_ONCE(answer_pages[i]);
	}
	return READ_ONCE(answer_ret[i]) != 0;
}

static int fuzzpol_init(struct kvm_prefetch_state *st)
{
	int ret = READ_ONCE(init_ret);

	if (READ_ONCE(init_scribble))
		st->nr_pages ^= 1;
	if (!ret)
		atomic_inc(&fuzzpol_users);
	return ret;
}

static void fuzzpol_release(struct kvm_prefetch_state *st)
{
	atomic_dec(&fuzzpol_users);
}

static struct kvm_prefetch_ops fuzzpol_ops = {
	.window		= fuzzpol_window,
	.init		= fuzzpol_init,
	.release	= fuzzpol_release,
	.name		= "fuzzpol",
	.owner		= THIS_MODULE,
};

static int __init fuzzpol_module_init(void)
{
	return kvm_prefetch_register(&fuzzpol_ops);
}

static void __exit fuzzpol_module_exit(void)
{
	kvm_prefetch_unregister(&fuzzpol_ops);
}

module_init(fuzzpol_module_init);
module_exit(fuzzpol_module_exit);

MODULE_DESCRIPTION("KVM prefetch policy whose answers a fuzzer chooses");
MODULE_LICENSE("GPL");
MODULE_ALIAS("kvm-prefetch-fuzzpol");
