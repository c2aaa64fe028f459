/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * This program is distributed in the hope that it will be useful,
 * but WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
 * GNU General Public License for more details.
 *
 * unmerge-ref: the reference measurement for the ksm-unmerge benchmark.
 *
 * Default mode: fill N MiB of private anonymous memory (MADV_NOHUGEPAGE)
 * with identical pages, let ksmd merge all of them (a sleeping waiter
 * polls /proc/self/ksm_stat every 2 ms), then time exactly one
 * MADV_UNMERGEABLE with CLOCK_MONOTONIC and print MiB/s.  This is the
 * figure the kernel selftest "ksm_tests -D" reports.  Each repeat runs in
 * a fresh child process so its per-mm KSM counters start from zero.
 *
 * --sparse mode: a large MAP_NORESERVE range with one populated page per
 * stride, MADV_MERGEABLE, then one timed MADV_UNMERGEABLE; prints the
 * cost per unpopulated page (break_ksm() walks every address on 6.18).
 *
 * KSM knobs are global: the ones changed are saved first and restored
 * at exit and on SIGINT, SIGTERM and SIGHUP.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>

#define REF_KSM_SYSFS		"/sys/kernel/mm/ksm"
#define REF_MIB			(1024UL * 1024UL)
#define REF_POLL_NS		(2000000L)	/* sleeping waiter: 2 ms */
#define REF_MAX_REPEATS		(1000)
#define REF_FILL_BYTE		(0x5a)

/* One KSM knob: what we set it to and what it was */
typedef struct {
	const char *name;		/* file under REF_KSM_SYSFS */
	const char *value;		/* value for the measurement */
	bool optional;			/* absent on some kernels */
	bool saved;			/* old value was read */
	char old[32];			/* old value, newline stripped */
} ref_knob_t;

/*
 * The knobs the stressor sets for the default pattern "same", in its
 * order; run goes last so ksmd starts with everything else in place.
 */
static ref_knob_t ref_knobs[] = {
	{ "use_zero_pages",	"0",	 false, false, "" },
	{ "pages_to_scan",	"10000", false, false, "" },
	{ "sleep_millisecs",	"0",	 false, false, "" },
	{ "smart_scan",		"0",	 true,	false, "" },
	{ "run",		"1",	 false, false, "" },
};

#define REF_KNOBS	(sizeof(ref_knobs) / sizeof(ref_knobs[0]))

/* Result of one repeat, sent from the child to the parent */
typedef struct {
	int err;			/* 0 ok, else errno of the failing step */
	char what[96];			/* failing step */
	uint64_t pages;			/* pages in the region */
	uint64_t merged;		/* ksm_merging_pages before the unmerge */
	int64_t cow_ksm;		/* /proc/vmstat cow_ksm delta, -1 unknown */
	double merge_secs;		/* MADV_MERGEABLE to fully merged */
	double unmerge_secs;		/* the timed MADV_UNMERGEABLE */
	double unmerge_cpu_secs;	/* the thread's CPU time in it (no run-queue wait) */
} ref_result_t;

static volatile pid_t ref_child;	/* current child, for the signal path */
static volatile sig_atomic_t ref_knobs_set;	/* knobs changed, restore due */

/*
 *  ref_now()
 *	CLOCK_MONOTONIC in seconds
 */
static double ref_now(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1.0E-9;
}

/*
 *  ref_knob_write()
 *	write a KSM knob (async-signal-safe); 0 or -errno
 */
static int ref_knob_write(const char *name, const char *value)
{
	char path[128];
	size_t n = 0, len;
	int fd, ret = 0;

	/* no snprintf: this runs from the signal handler too */
	len = strlen(REF_KSM_SYSFS);
	(void)memcpy(path, REF_KSM_SYSFS, len);
	n = len;
	path[n++] = '/';
	len = strlen(name);
	if (n + len >= sizeof(path))
		return -ENAMETOOLONG;
	(void)memcpy(path + n, name, len);
	path[n + len] = '\0';

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		ret = -errno;
	(void)close(fd);
	return ret;
}

/*
 *  ref_knob_read()
 *	read a KSM knob into buf without the newline; 0 or -errno
 */
static int ref_knob_read(const char *name, char *buf, const size_t len)
{
	char path[128];
	ssize_t n;
	int fd;

	(void)snprintf(path, sizeof(path), "%s/%s", REF_KSM_SYSFS, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		const int err = errno;

		(void)close(fd);
		return -err;
	}
	(void)close(fd);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 *  ref_knobs_restore()
 *	write every saved knob back, run first (async-signal-safe); failures
 */
static int ref_knobs_restore(void)
{
	int failures = 0;
	size_t i;

	/* reverse order: run first, so a stopped ksmd stops before the rest */
	for (i = REF_KNOBS; i-- > 0; ) {
		if (!ref_knobs[i].saved)
			continue;
		if (ref_knob_write(ref_knobs[i].name, ref_knobs[i].old) < 0)
			failures++;
	}
	ref_knobs_set = 0;
	return failures;
}

/*
 *  ref_knobs_setup()
 *	save the knobs, then set the stressor's fast-scan values; 0 or -1
 */
static int ref_knobs_setup(void)
{
	size_t i;
	int ret;

	for (i = 0; i < REF_KNOBS; i++) {
		ret = ref_knob_read(ref_knobs[i].name, ref_knobs[i].old, sizeof(ref_knobs[i].old));
		if (ret == -ENOENT && ref_knobs[i].optional)
			continue;
		if (ret < 0) {
			(void)fprintf(stderr, "unmerge-ref: cannot read %s/%s, errno=%d (%s)\n",
				REF_KSM_SYSFS, ref_knobs[i].name, -ret, strerror(-ret));
			return -1;
		}
		ref_knobs[i].saved = true;
	}
	ref_knobs_set = 1;
	for (i = 0; i < REF_KNOBS; i++) {
		if (!ref_knobs[i].saved)
			continue;
		ret = ref_knob_write(ref_knobs[i].name, ref_knobs[i].value);
		if (ret < 0) {
			(void)fprintf(stderr, "unmerge-ref: cannot set %s/%s=%s, errno=%d (%s)\n",
				REF_KSM_SYSFS, ref_knobs[i].name, ref_knobs[i].value,
				-ret, strerror(-ret));
			return -1;
		}
	}
	return 0;
}

/*
 *  ref_signal()
 *	SIGINT/SIGTERM/SIGHUP: kill the child, restore the knobs, exit
 */
static void ref_signal(int sig)
{
	const pid_t pid = ref_child;

	if (pid > 0)
		(void)kill(pid, SIGKILL);
	if (ref_knobs_set)
		(void)ref_knobs_restore();
	_exit(128 + sig);
}

/*
 *  ref_signals()
 *	install the restoring handler; 0 or -1
 */
static int ref_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;
	size_t i;

	(void)memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ref_signal;
	(void)sigfillset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (sigaction(sigs[i], &sa, NULL) < 0) {
			(void)fprintf(stderr, "unmerge-ref: sigaction %d failed, errno=%d (%s)\n",
				sigs[i], errno, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/*
 *  ref_field()
 *	value of "name N" in a /proc text buffer, -1 if absent
 */
static int64_t ref_field(const char *buf, const char *name)
{
	const size_t len = strlen(name);
	const char *p = buf;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == buf || p[-1] == '\n') && (p[len] == ' ' || p[len] == ':'))
			return strtoll(p + len + 1, NULL, 10);
		p += len;
	}
	return -1;
}

/*
 *  ref_file_field()
 *	read a /proc file through an open fd and return one field, -1 on error
 */
static int64_t ref_file_field(const int fd, const char *name)
{
	char buf[8192];
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return ref_field(buf, name);
}

/*
 *  ref_cow_ksm()
 *	global /proc/vmstat cow_ksm, -1 if unknown
 */
static int64_t ref_cow_ksm(void)
{
	int64_t v;
	int fd;

	fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	v = ref_file_field(fd, "cow_ksm");
	(void)close(fd);
	return v;
}

/*
 *  ref_fail()
 *	record the failing step and errno in the result
 */
static void ref_fail(ref_result_t *r, const char *what, const int err)
{
	r->err = err ? err : EIO;
	(void)snprintf(r->what, sizeof(r->what), "%s", what);
}

/*
 *  ref_merge_wait()
 *	sleeping waiter: poll ksm_stat every 2 ms until all pages merged;
 *	0 merged, -1 timeout or error (recorded in r)
 */
static int ref_merge_wait(ref_result_t *r, const double timeout)
{
	const struct timespec nap = { 0, REF_POLL_NS };
	const double t0 = ref_now();
	int fd;

	fd = open("/proc/self/ksm_stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ref_fail(r, "open /proc/self/ksm_stat", errno);
		return -1;
	}
	for (;;) {
		const int64_t m = ref_file_field(fd, "ksm_merging_pages");

		if (m < 0) {
			ref_fail(r, "read ksm_merging_pages from /proc/self/ksm_stat", errno);
			break;
		}
		r->merged = (uint64_t)m;
		if (r->merged >= r->pages) {
			r->merge_secs = ref_now() - t0;
			(void)close(fd);
			return 0;
		}
		if (ref_now() - t0 > timeout) {
			ref_fail(r, "merge timeout (ksmd did not merge every page)", ETIMEDOUT);
			break;
		}
		(void)nanosleep(&nap, NULL);
	}
	(void)close(fd);
	return -1;
}

/*
 *  ref_unmerge_once()
 *	child: fill, merge, wait, time one MADV_UNMERGEABLE; result in r
 */
static void ref_unmerge_once(const size_t bytes, const double timeout, ref_result_t *r)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct timespec a, b, ca, cb;
	int64_t cow0, cow1;
	uint8_t *buf;

	r->pages = bytes / page;
	buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		ref_fail(r, "mmap region", errno);
		return;
	}
	if (madvise(buf, bytes, MADV_NOHUGEPAGE) < 0) {
		ref_fail(r, "madvise MADV_NOHUGEPAGE", errno);
		return;
	}
	(void)memset(buf, REF_FILL_BYTE, bytes);
	if (madvise(buf, bytes, MADV_MERGEABLE) < 0) {
		ref_fail(r, "madvise MADV_MERGEABLE", errno);
		return;
	}
	if (ref_merge_wait(r, timeout) < 0)
		return;

	cow0 = ref_cow_ksm();
	(void)clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ca);
	(void)clock_gettime(CLOCK_MONOTONIC, &a);
	if (madvise(buf, bytes, MADV_UNMERGEABLE) < 0) {
		ref_fail(r, "madvise MADV_UNMERGEABLE", errno);
		return;
	}
	(void)clock_gettime(CLOCK_MONOTONIC, &b);
	(void)clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cb);
	cow1 = ref_cow_ksm();
	r->unmerge_secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1.0E-9;
	r->unmerge_cpu_secs = (double)(cb.tv_sec - ca.tv_sec) + (double)(cb.tv_nsec - ca.tv_nsec) * 1.0E-9;
	r->cow_ksm = (cow0 >= 0 && cow1 >= cow0) ? cow1 - cow0 : -1;
	(void)munmap(buf, bytes);
}

/*
 *  ref_run_child()
 *	one repeat in a fresh process; 0 with *r filled, -1 on error
 */
static int ref_run_child(const size_t bytes, const double timeout, ref_result_t *r)
{
	sigset_t block, old;
	int fds[2], status = 0;
	ssize_t n;
	pid_t pid;

	(void)memset(r, 0, sizeof(*r));
	(void)sigemptyset(&block);
	(void)sigaddset(&block, SIGINT);
	(void)sigaddset(&block, SIGTERM);
	(void)sigaddset(&block, SIGHUP);
	if (pipe(fds) < 0) {
		(void)fprintf(stderr, "unmerge-ref: pipe failed, errno=%d (%s)\n", errno, strerror(errno));
		return -1;
	}
	/* no signal between fork and ref_child being set: the child must die too */
	(void)sigprocmask(SIG_BLOCK, &block, &old);
	pid = fork();
	if (pid < 0) {
		(void)fprintf(stderr, "unmerge-ref: fork failed, errno=%d (%s)\n", errno, strerror(errno));
		(void)sigprocmask(SIG_SETMASK, &old, NULL);
		(void)close(fds[0]);
		(void)close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		(void)signal(SIGINT, SIG_DFL);
		(void)signal(SIGTERM, SIG_DFL);
		(void)signal(SIGHUP, SIG_DFL);
		(void)sigprocmask(SIG_SETMASK, &old, NULL);
		(void)close(fds[0]);
		ref_unmerge_once(bytes, timeout, r);
		n = write(fds[1], r, sizeof(*r));
		_exit(n == (ssize_t)sizeof(*r) ? 0 : 1);
	}
	ref_child = pid;
	(void)sigprocmask(SIG_SETMASK, &old, NULL);
	(void)close(fds[1]);
	do {
		n = read(fds[0], r, sizeof(*r));
	} while (n < 0 && errno == EINTR);
	(void)close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	ref_child = 0;
	if (n != (ssize_t)sizeof(*r)) {
		(void)fprintf(stderr, "unmerge-ref: child %d gave no result (status %#x)\n",
			(int)pid, status);
		return -1;
	}
	if (r->err) {
		(void)fprintf(stderr, "unmerge-ref: %s failed, errno=%d (%s)\n",
			r->what, r->err, strerror(r->err));
		return -1;
	}
	return 0;
}

/*
 *  ref_double_cmp()
 *	qsort comparator for doubles
 */
static int ref_double_cmp(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 *  ref_summary()
 *	print median, min, max, mean and population %stddev of n rates
 */
static void ref_summary(const char *key, const char *what, double *v, const size_t n)
{
	double mean = 0.0, var = 0.0, median;
	size_t i;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		mean += v[i];
	mean /= (double)n;
	for (i = 0; i < n; i++)
		var += (v[i] - mean) * (v[i] - mean);
	var /= (double)n;
	qsort(v, n, sizeof(*v), ref_double_cmp);
	median = (n & 1) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
	(void)printf("unmerge-ref: summary %s runs=%zu median-%s=%.2f min=%.2f max=%.2f "
		"mean=%.2f stddev-pct=%.2f\n", key, n, what, median, v[0], v[n - 1],
		mean, mean > 0.0 ? 100.0 * sqrt(var) / mean : 0.0);
}

/*
 *  ref_unmerge_mode()
 *	default mode: repeats of the merged-region unmerge; exit status
 */
static int ref_unmerge_mode(const size_t mib, const int repeats, const double timeout)
{
	double *rates, *merge_ms, secs = 0.0, cpu_secs = 0.0;
	ref_result_t r;
	int i, failures;

	rates = calloc((size_t)repeats, sizeof(*rates));
	merge_ms = calloc((size_t)repeats, sizeof(*merge_ms));
	if (!rates || !merge_ms) {
		free(rates);
		free(merge_ms);
		(void)fprintf(stderr, "unmerge-ref: out of memory\n");
		return EXIT_FAILURE;
	}
	if (ref_signals() < 0 || ref_knobs_setup() < 0) {
		(void)ref_knobs_restore();
		free(rates);
		free(merge_ms);
		return EXIT_FAILURE;
	}
	for (i = 0; i < repeats; i++) {
		if (ref_run_child(mib * REF_MIB, timeout, &r) < 0)
			break;
		rates[i] = ((double)mib) / r.unmerge_secs;
		merge_ms[i] = r.merge_secs * 1000.0;
		secs += r.unmerge_secs;
		cpu_secs += r.unmerge_cpu_secs;
		(void)printf("unmerge-ref: run=%d size-mib=%zu pages=%" PRIu64 " merged=%" PRIu64
			" cow-ksm-delta=%" PRId64 " merge-ms=%.3f unmerge-ms=%.3f unmerge-cpu-ms=%.3f"
			" mib-per-sec=%.2f\n", i + 1, mib, r.pages, r.merged, r.cow_ksm,
			r.merge_secs * 1000.0, r.unmerge_secs * 1000.0, r.unmerge_cpu_secs * 1000.0, rates[i]);
		(void)fflush(stdout);
	}
	failures = ref_knobs_restore();
	if (failures)
		(void)fprintf(stderr, "unmerge-ref: %d KSM knob(s) could not be restored\n", failures);
	{
		char key[32];

		(void)snprintf(key, sizeof(key), "size-mib=%zu", mib);
		ref_summary(key, "mib-per-sec", rates, (size_t)i);
		ref_summary(key, "merge-ms", merge_ms, (size_t)i);
	}
	/* the stressor's figure: all MiB unmerged over all time inside the call */
	if (i > 0 && secs > 0.0)
		(void)printf("unmerge-ref: aggregate size-mib=%zu runs=%d mib-per-sec=%.2f"
			" mib-per-cpu-sec=%.2f\n", mib, i, (double)mib * (double)i / secs,
			cpu_secs > 0.0 ? (double)mib * (double)i / cpu_secs : 0.0);
	free(rates);
	free(merge_ms);
	return (i == repeats && !failures) ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 *  ref_sparse_once()
 *	time MADV_UNMERGEABLE of a sparse range; ns per unpopulated page or -1
 */
static double ref_sparse_once(const size_t bytes, const size_t stride, size_t *populated)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct timespec a, b;
	uint8_t *base;
	size_t off, n = 0;
	double ns;

	base = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		(void)fprintf(stderr, "unmerge-ref: mmap of %zu byte sparse range failed, "
			"errno=%d (%s)\n", bytes, errno, strerror(errno));
		return -1.0;
	}
	if (madvise(base, bytes, MADV_NOHUGEPAGE) < 0) {
		(void)fprintf(stderr, "unmerge-ref: madvise MADV_NOHUGEPAGE failed, errno=%d (%s)\n",
			errno, strerror(errno));
		(void)munmap(base, bytes);
		return -1.0;
	}
	for (off = 0; off < bytes; off += stride, n++)
		(void)memset(base + off, (int)(n & 0xff) | 1, page);
	if (madvise(base, bytes, MADV_MERGEABLE) < 0) {
		(void)fprintf(stderr, "unmerge-ref: madvise MADV_MERGEABLE failed, errno=%d (%s)\n",
			errno, strerror(errno));
		(void)munmap(base, bytes);
		return -1.0;
	}
	(void)clock_gettime(CLOCK_MONOTONIC, &a);
	if (madvise(base, bytes, MADV_UNMERGEABLE) < 0) {
		(void)fprintf(stderr, "unmerge-ref: madvise MADV_UNMERGEABLE failed, errno=%d (%s)\n",
			errno, strerror(errno));
		(void)munmap(base, bytes);
		return -1.0;
	}
	(void)clock_gettime(CLOCK_MONOTONIC, &b);
	(void)munmap(base, bytes);
	ns = (double)(b.tv_sec - a.tv_sec) * 1.0E9 + (double)(b.tv_nsec - a.tv_nsec);
	*populated = n;
	return ns / (double)(bytes / page - n);
}

/*
 *  ref_sparse_mode()
 *	--sparse: repeats of the sparse unmerge walk; knobs untouched
 */
static int ref_sparse_mode(const size_t gib, const size_t stride_mib, const int repeats)
{
	const size_t bytes = gib * 1024 * REF_MIB, stride = stride_mib * REF_MIB;
	double *ns;
	size_t populated = 0;
	int i;

	ns = calloc((size_t)repeats, sizeof(*ns));
	if (!ns) {
		(void)fprintf(stderr, "unmerge-ref: out of memory\n");
		return EXIT_FAILURE;
	}
	for (i = 0; i < repeats; i++) {
		ns[i] = ref_sparse_once(bytes, stride, &populated);
		if (ns[i] < 0.0)
			break;
		(void)printf("unmerge-ref: sparse run=%d size-gib=%zu stride-mib=%zu populated=%zu "
			"ns-per-hole-page=%.2f\n", i + 1, gib, stride_mib, populated, ns[i]);
		(void)fflush(stdout);
	}
	{
		char key[48];

		(void)snprintf(key, sizeof(key), "sparse size-gib=%zu", gib);
		ref_summary(key, "ns-per-hole-page", ns, (size_t)i);
	}
	free(ns);
	return (i == repeats) ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 *  ref_usage()
 *	print the options
 */
static void ref_usage(FILE *fp)
{
	(void)fprintf(fp,
		"usage: unmerge-ref [-s MiB] [-r N] [-t secs]\n"
		"       unmerge-ref --sparse [--sparse-gib G] [--stride-mib M] [-r N]\n"
		"  -s, --size MiB       region to merge and unmerge (default 64)\n"
		"  -r, --repeats N      measurements, each in a fresh process (default 1)\n"
		"  -t, --timeout secs   merge wait limit per repeat (default 120)\n"
		"  -S, --sparse         time the unmerge walk of a sparse range instead\n"
		"      --sparse-gib G   sparse range size (default 16)\n"
		"      --stride-mib M   one populated page per M MiB (default 64)\n"
		"Run as root; changes /sys/kernel/mm/ksm knobs for the duration "
		"(not in --sparse mode).\n");
}

/*
 *  ref_number()
 *	parse a positive integer option or exit
 */
static size_t ref_number(const char *opt, const char *arg, const size_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || v == 0 || v > max) {
		(void)fprintf(stderr, "unmerge-ref: invalid %s '%s' (1..%zu)\n", opt, arg, max);
		exit(EXIT_FAILURE);
	}
	return (size_t)v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "size",	required_argument, NULL, 's' },
		{ "repeats",	required_argument, NULL, 'r' },
		{ "timeout",	required_argument, NULL, 't' },
		{ "sparse",	no_argument,	   NULL, 'S' },
		{ "sparse-gib",	required_argument, NULL, 'G' },
		{ "stride-mib",	required_argument, NULL, 'M' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL,		0,		   NULL, 0 },
	};
	size_t mib = 64, gib = 16, stride = 64;
	int repeats = 1, c;
	double timeout = 120.0;
	bool sparse = false;

	while ((c = getopt_long(argc, argv, "s:r:t:Sh", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			mib = ref_number("size", optarg, 1UL << 20);
			break;
		case 'r':
			repeats = (int)ref_number("repeats", optarg, REF_MAX_REPEATS);
			break;
		case 't':
			timeout = (double)ref_number("timeout", optarg, 86400);
			break;
		case 'S':
			sparse = true;
			break;
		case 'G':
			gib = ref_number("sparse-gib", optarg, 1UL << 16);
			break;
		case 'M':
			stride = ref_number("stride-mib", optarg, 1UL << 20);
			break;
		case 'h':
			ref_usage(stdout);
			return EXIT_SUCCESS;
		default:
			ref_usage(stderr);
			return EXIT_FAILURE;
		}
	}
	if (optind < argc) {
		(void)fprintf(stderr, "unmerge-ref: unexpected argument '%s'\n", argv[optind]);
		ref_usage(stderr);
		return EXIT_FAILURE;
	}
	if (sparse) {
		if (stride > gib * 1024 / 2) {
			(void)fprintf(stderr, "unmerge-ref: stride %zu MiB leaves fewer than 2 "
				"populated pages in %zu GiB\n", stride, gib);
			return EXIT_FAILURE;
		}
		return ref_sparse_mode(gib, stride, repeats);
	}
	return ref_unmerge_mode(mib, repeats, timeout);
}
