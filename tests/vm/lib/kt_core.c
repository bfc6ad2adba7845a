// SPDX-License-Identifier: GPL-2.0
/*
 * kt_core - reporting, /dev/kvm, binary stats and the clock of the x86
 * and arm64 in-VM test libraries (see kt_core.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "kt_core.h"

/* ---- reporting ---------------------------------------------------- */

static int kt_npass, kt_nfail, kt_nskip;

static void kt_report(const char *tag, int *count, const char *fmt,
		      va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (count)
		__atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
	/* One printf per line, so lines from threads do not interleave. */
	printf("%s%s\n", tag, buf);
	fflush(stdout);
}

/* kt_pass(), kt_fail(), kt_skip() and kt_info(): see kt_core.h. */
#define KT_DEFINE_REPORT(fn, tag, count)				\
	void fn(const char *fmt, ...)					\
	{								\
		va_list ap;						\
									\
		va_start(ap, fmt);					\
		kt_report(tag, count, fmt, ap);				\
		va_end(ap);						\
	}

KT_DEFINE_REPORT(kt_pass, "PASS: ", &kt_npass)
KT_DEFINE_REPORT(kt_fail, "FAIL: ", &kt_nfail)
KT_DEFINE_REPORT(kt_skip, "SKIP: ", &kt_nskip)
KT_DEFINE_REPORT(kt_info, "# ", NULL)

int kt_failures(void)
{
	return __atomic_load_n(&kt_nfail, __ATOMIC_RELAXED);
}

int kt_exit(void)
{
	int pass = __atomic_load_n(&kt_npass, __ATOMIC_RELAXED);
	int skip = __atomic_load_n(&kt_nskip, __ATOMIC_RELAXED);

	if (kt_failures())
		return KT_EXIT_FAIL;
	if (pass)
		return KT_EXIT_PASS;
	if (skip)
		return KT_EXIT_SKIP;
	/* Nothing was checked: that is a broken test, not a pass. */
	kt_fail("no PASS, FAIL or SKIP reported");
	return KT_EXIT_FAIL;
}

/* ---- sysfs / procfs files ------------------------------------------ */

int ktsys_read(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;
	int fd;

	if (!len)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0) {
			n = -errno;
			close(fd);
			buf[got] = '\0';
			return n;
		}
		if (!n)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return got;
}

int ktsys_read_line(const char *path, char *buf, size_t len)
{
	int n = ktsys_read(path, buf, len);

	if (n < 0)
		return n;
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

int ktsys_read_long(const char *path, long *val)
{
	char buf[64], *end;
	int r = ktsys_read_line(path, buf, sizeof(buf));

	if (r)
		return r;
	errno = 0;
	*val = strtol(buf, &end, 10);
	if (errno || end == buf || *end)
		return -EINVAL;
	return 0;
}

int ktsys_write(const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	return (size_t)n == len ? 0 : -EIO;
}

/* ---- /dev/kvm, stats, clock ---------------------------------------- */

int kt_kvm_open(void)
{
	int fd, ver;

	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ver = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (ver != KVM_API_VERSION) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* ---- binary stats (KVM_GET_STATS_FD) ------------------------------- */

/*
 * The stats fd is a read-only file: a header at offset 0, then the id
 * string, num_desc descriptors of sizeof(struct kvm_stats_desc) +
 * name_size bytes each at desc_offset, and the data block at data_offset.
 * Header and descriptors never change for the fd's life; data is read
 * fresh with pread() at data_offset + desc->offset on every call.
 */
static int kt_stats_open(struct kt_stats *st, int owner_fd)
{
	size_t len;
	ssize_t n;
	int fd;

	fd = ioctl(owner_fd, KVM_GET_STATS_FD, 0);
	if (fd < 0)
		return -errno;

	n = pread(fd, &st->hdr, sizeof(st->hdr), 0);
	if (n != sizeof(st->hdr))
		goto err_close;

	st->desc_size = sizeof(struct kvm_stats_desc) + st->hdr.name_size;
	len = st->desc_size * st->hdr.num_desc;
	st->descs = malloc(len ? len : 1);
	if (!st->descs)
		goto err_close;
	n = pread(fd, st->descs, len, st->hdr.desc_offset);
	if (n < 0 || (size_t)n != len)
		goto err_free;

	st->fd = fd;
	return 0;

err_free:
	free(st->descs);
	st->descs = NULL;
err_close:
	close(fd);
	return -EIO;
}

int kt_stats_read(struct kt_stats *st, int owner_fd, const char *name,
		  uint64_t *val)
{
	struct kvm_stats_desc *d;
	uint32_t i;
	int r;

	if (st->fd < 0) {
		r = kt_stats_open(st, owner_fd);
		if (r)
			return r;
	}

	for (i = 0; i < st->hdr.num_desc; i++) {
		d = (struct kvm_stats_desc *)(st->descs + i * st->desc_size);
		/* Names are NUL-terminated within name_size bytes. */
		if (strncmp(d->name, name, st->hdr.name_size))
			continue;
		if (!d->size)
			return -EINVAL;
		if (pread(st->fd, val, sizeof(*val),
			  st->hdr.data_offset + d->offset) != sizeof(*val))
			return -EIO;
		return 0;
	}
	return -ENOENT;
}

uint64_t kt_stats_vcpu_get(struct kt_stats *st, int vcpu_fd, int id,
			   const char *name)
{
	uint64_t val = 0;
	int r = kt_stats_read(st, vcpu_fd, name, &val);

	KT_ASSERT(!r, "vcpu %d stat %s: %s", id, name, strerror(-r));
	return val;
}

void kt_stats_init(struct kt_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->fd = -1;
}

void kt_stats_free(struct kt_stats *st)
{
	if (st->fd >= 0)
		close(st->fd);
	free(st->descs);
	kt_stats_init(st);
}

static uint64_t kt_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t kt_now_ns(void)
{
	return kt_clock_ns(CLOCK_MONOTONIC);
}

uint64_t kt_thread_ns(void)
{
	return kt_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}
