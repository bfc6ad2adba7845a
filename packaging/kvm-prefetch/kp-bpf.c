// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-prefetch bpf: load, unload and list prefetch policies written in
 * BPF (a struct_ops map of kvm.ko's type kvm_prefetch_ops).  Included by
 * kvm-prefetch.c when it is built with libbpf 1.4 or later (KP_HAVE_LIBBPF:
 * libbpf learned struct_ops types of modules in 1.4; Debian 12 has 1.1).
 *
 * "load FILE" opens and loads the object (the verifier's log goes to
 * stderr if a program is refused), creates the link of each struct_ops
 * map (which registers its policy) and pins it as
 * /sys/fs/bpf/kvm-prefetch/<policy>, so that the policy outlives this
 * process.  "unload NAME" removes the pin: the link goes, the policy is
 * unregistered, and VMs that use it keep it until they switch away or
 * close.
 */
#include <sys/mount.h>
#include <sys/vfs.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define KP_BPFFS	"/sys/fs/bpf"
#define KP_BPF_DIR	KP_BPFFS "/kvm-prefetch"
#define KP_BPF_BTF	"/sys/kernel/btf/kvm"
#define KP_BPFFS_MAGIC	0xcafe4a11

static int kp_bpf_check(void)
{
	int ret = kp_check_root("bpf");

	if (ret)
		return ret;
	ret = kp_check_kvm();
	if (ret)
		return ret;
	if (access(KP_BPF_BTF, F_OK))
		return kp_err(KP_EXIT_NO_BPF,
			      "kvm.ko has no BTF (%s), so no BPF policy type: BPF policies need kvm-prefetch's kvm.ko on Linux 6.9 or later, built with BTF",
			      KP_BPF_BTF);
	return KP_EXIT_OK;
}

static int kp_bpffs(void)
{
	struct statfs sfs;

	if (!statfs(KP_BPFFS, &sfs) && sfs.f_type == KP_BPFFS_MAGIC)
		goto dir;
	if (mount("bpf", KP_BPFFS, "bpf", 0, NULL))
		return kp_err(KP_EXIT_ERROR, "mounting bpffs on %s: %s",
			      KP_BPFFS, strerror(errno));
dir:
	if (mkdir(KP_BPF_DIR, 0700) && errno != EEXIST)
		return kp_err(KP_EXIT_ERROR, "mkdir %s: %s", KP_BPF_DIR,
			      strerror(errno));
	return KP_EXIT_OK;
}

/* Is @name a word of the space-separated list @list? */
static bool kp_word_in(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
		p += n;
	}
	return false;
}

/* The first policy of @after that @before does not list, into @name. */
static bool kp_new_policy(const char *before, char *after, char *name,
			  size_t len)
{
	char *save = NULL, *w;

	for (w = strtok_r(after, " ", &save); w;
	     w = strtok_r(NULL, " ", &save)) {
		if (!kp_word_in(before, w)) {
			snprintf(name, len, "%s", w);
			return true;
		}
	}
	return false;
}

static int kp_bpf_load(const char *file)
{
	char before[KP_LINE_MAX], after[KP_LINE_MAX];
	char name[KVM_PREFETCH_POLICY_NAME_MAX], pin[PATH_MAX];
	struct bpf_object *obj;
	struct bpf_link *link;
	struct bpf_map *map;
	int ret, loaded = 0;

	ret = kp_bpf_check();
	if (ret)
		return ret;
	ret = kp_bpffs();
	if (ret)
		return ret;

	obj = bpf_object__open_file(file, NULL);
	if (!obj)
		return kp_err(KP_EXIT_ERROR, "%s: cannot open: %s", file,
			      strerror(errno));
	ret = bpf_object__load(obj);
	if (ret) {
		ret = kp_err(KP_EXIT_ERROR,
			     "%s: the kernel refused it (%s); the verifier's log is above",
			     file, strerror(-ret));
		goto out;
	}

	bpf_object__for_each_map(map, obj) {
		if (bpf_map__type(map) != BPF_MAP_TYPE_STRUCT_OPS)
			continue;
		if (kp_read_line(KP_PARAM_DIR "prefetch_available", before,
				 sizeof(before))) {
			ret = kp_err(KP_EXIT_ERROR, "cannot read prefetch_available");
			goto out;
		}
		link = bpf_map__attach_struct_ops(map);
		if (!link) {
			ret = kp_err(errno == EEXIST ? KP_EXIT_USAGE : KP_EXIT_ERROR,
				     "%s: registering %s: %s", file,
				     bpf_map__name(map),
				     errno == EEXIST ?
				     "a policy of that name is registered" :
				     strerror(errno));
			goto out;
		}
		if (kp_read_line(KP_PARAM_DIR "prefetch_available", after,
				 sizeof(after)) ||
		    !kp_new_policy(before, after, name, sizeof(name))) {
			bpf_link__destroy(link);
			ret = kp_err(KP_EXIT_ERROR,
				     "%s: %s registered no new policy", file,
				     bpf_map__name(map));
			goto out;
		}
		snprintf(pin, sizeof(pin), KP_BPF_DIR "/%s", name);
		ret = bpf_link__pin(link, pin);
		if (ret) {
			bpf_link__destroy(link);
			ret = kp_err(KP_EXIT_ERROR, "pinning %s: %s", pin,
				     strerror(-ret));
			goto out;
		}
		printf("loaded policy %s from %s (link pinned at %s)\n", name,
		       file, pin);
		bpf_link__disconnect(link);
		bpf_link__destroy(link);
		loaded++;
	}
	ret = loaded ? KP_EXIT_OK :
		kp_err(KP_EXIT_ERROR, "%s: no kvm_prefetch_ops struct_ops map",
		       file);
out:
	bpf_object__close(obj);
	return ret;
}

static int kp_bpf_unload(const char *name)
{
	char pin[PATH_MAX], avail[KP_LINE_MAX];
	int ret, i;

	ret = kp_bpf_check();
	if (ret)
		return ret;
	if (strlen(name) >= KVM_PREFETCH_POLICY_NAME_MAX || strchr(name, '/') ||
	    name[0] == '.' || !name[0])
		return kp_err(KP_EXIT_USAGE, "bad policy name '%s'", name);
	snprintf(pin, sizeof(pin), KP_BPF_DIR "/%s", name);
	if (unlink(pin))
		return kp_err(errno == ENOENT ? KP_EXIT_UNKNOWN_POLICY :
			      KP_EXIT_ERROR, "no BPF policy %s loaded (%s: %s)",
			      name, pin, strerror(errno));
	/* The link is freed from a workqueue: wait for its unregistration. */
	for (i = 0; i < 200; i++) {
		if (kp_read_line(KP_PARAM_DIR "prefetch_available", avail,
				 sizeof(avail)) || !kp_word_in(avail, name)) {
			printf("unloaded policy %s (VMs that use it keep it)\n",
			       name);
			return KP_EXIT_OK;
		}
		usleep(10000);
	}
	return kp_err(KP_EXIT_ERROR, "%s is still registered 2 s after its link was unpinned",
		      name);
}

static int kp_bpf_list(void)
{
	struct dirent *de;
	DIR *d = opendir(KP_BPF_DIR);

	if (!d)
		return errno == ENOENT ? KP_EXIT_OK :
			kp_err(KP_EXIT_ERROR, "%s: %s", KP_BPF_DIR, strerror(errno));
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			printf("%s\n", de->d_name);
	closedir(d);
	return KP_EXIT_OK;
}

static int kp_bpf(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "load"))
		return kp_bpf_load(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "unload"))
		return kp_bpf_unload(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "list"))
		return kp_bpf_list();
	return kp_err(KP_EXIT_USAGE, "usage: bpf load FILE | bpf unload NAME | bpf list");
}
