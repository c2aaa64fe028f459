// SPDX-License-Identifier: GPL-2.0
/*
 * ksm_fork_zero_pages: a forked child must be charged exactly the KSM-placed
 * zero pages that fork() copied into it.
 *
 * dup_mm() memcpy()s the parent's mm_struct, and with it mm->ksm_zero_pages,
 * before dup_mmap() takes the parent's mmap lock and copies the page tables;
 * ksm_fork() then adds that copy to the global ksm_zero_pages.  Whenever the
 * copied page tables hold a different number of KSM zero pages than that
 * snapshot, the child's /proc/PID/ksm_stat and the global
 * /sys/kernel/mm/ksm/ksm_zero_pages (and general_profit) go wrong for good:
 * the child's exit takes back only what it really maps.  Each test drives one
 * way to get there and checks both sides: the child's own ksm_zero_pages
 * against the KSM zero page PTEs its own pagemap shows, and the global
 * counter against the sum over every live process once the test's
 * processes are gone.
 *
 *   1  plain fork (control)
 *   2  MADV_DONTFORK range (VM_DONTCOPY: the VMA is not copied)
 *   3  MADV_WIPEONFORK range (the VMA is copied, its page tables are not)
 *   4  fork while another thread's MADV_UNMERGEABLE of the range runs
 *   5  fork while another thread write-faults the KSM zero pages
 *   6  fork that fails (ENOMEM) after copying the KSM zero pages
 *   7  fork while ksmd merges more zero pages (the child is undercharged)
 *   8  not fork: UFFDIO_MOVE of KSM zero pages (move_zeropage_pte() maps a
 *      plain zero page at the destination and uncharges nothing)
 *
 * Needs root (pagemap PFNs, /proc/kpageflags, the KSM knobs), CONFIG_KSM and
 * a kernel with ksm_zero_pages; otherwise it skips (exit 4).  Every KSM knob
 * it writes (run, pages_to_scan, sleep_millisecs, use_zero_pages,
 * advisor_mode, smart_scan) is put back on exit, on error and on
 * SIGINT/SIGTERM/SIGHUP.
 * Exit status: 0 all pass, 1 a test failed, 4 everything skipped.
 * Arguments: none (every test), or the numbers of the tests to run (the
 * others print as skipped: "ksm_fork_zero_pages 2" leaks exactly 4096 KSM
 * zero pages into the global counter of a kernel with the bug).
 *
 * Build: gcc -static -O2 -Wall -Wextra -Werror -pthread -o ksm_fork_zero_pages ksm_fork_zero_pages.c
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_MERGEABLE
#define MADV_MERGEABLE		12
#endif
#ifndef MADV_UNMERGEABLE
#define MADV_UNMERGEABLE	13
#endif
#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE		15
#endif
#ifndef MADV_DONTFORK
#define MADV_DONTFORK		10
#endif
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK		18
#endif

/* UFFDIO_MOVE (Linux 6.8), for older headers */
#ifndef UFFD_FEATURE_MOVE
#define UFFD_FEATURE_MOVE	(1 << 16)
struct uffdio_move {
	uint64_t dst;
	uint64_t src;
	uint64_t len;
	uint64_t mode;
	int64_t move;
};
#define UFFDIO_MOVE		_IOWR(UFFDIO, 0x05, struct uffdio_move)
#endif

#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

#define KSM_DIR		"/sys/kernel/mm/ksm/"
#define KPF_ZERO_PAGE	24
#define PM_PRESENT	(1ULL << 63)
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define MIB		(1024UL * 1024UL)
#define NR_TESTS	8
#define TRIES		5	/* tries of a race before it is skipped */
#define WRITE_TRIES	12	/* the write race: a busy machine may starve the writer */
#define MERGE_TIMEOUT_S	120

/* one KSM knob: its saved text, and whether this program changed it */
struct knob {
	const char *name;
	char saved[64];
	bool present;
	bool changed;
};

static struct knob knobs[] = {
	{ .name = "run" },		/* first: stopped first, restarted last */
	{ .name = "advisor_mode" },
	{ .name = "pages_to_scan" },
	{ .name = "sleep_millisecs" },
	{ .name = "use_zero_pages" },
	{ .name = "smart_scan" },
};
#define NR_KNOBS	(sizeof(knobs) / sizeof(knobs[0]))

/* what a child reports to its parent, in a MAP_SHARED page */
struct child_report {
	long charged_before;	/* its /proc/self/ksm_stat ksm_zero_pages */
	long mapped;		/* KSM zero page PTEs in its pagemap */
	long charged_after;	/* ksm_stat again, after the pagemap scan */
	int error;		/* errno of a failed read, 0 if none */
};

static size_t page_size;
static pid_t main_pid;
static volatile sig_atomic_t restoring;
static struct child_report *report;
static int nr_pass, nr_fail, nr_skip;

/* timestamp in seconds (CLOCK_MONOTONIC) */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* write a whole string to a file; 0 or -errno (async-signal-safe) */
static int write_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	return (size_t)n == len ? 0 : -EIO;
}

/* read a small file into buf (NUL-terminated, trailing newline cut) */
static int read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

/* read a KSM sysfs counter as a signed long; 0 or -errno */
static int ksm_read(const char *name, long *val)
{
	char path[128], buf[64], *end;
	int ret;

	snprintf(path, sizeof(path), KSM_DIR "%s", name);
	ret = read_file(path, buf, sizeof(buf));
	if (ret)
		return ret;
	errno = 0;
	*val = strtol(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

/* restore every knob this program changed (async-signal-safe) */
static void knobs_restore(void)
{
	char path[128];
	size_t i;

	if (getpid() != main_pid || restoring)
		return;
	restoring = 1;
	/* stop ksmd before the others change, restart it (if it ran) last */
	if (knobs[0].changed)
		write_file(KSM_DIR "run", "0");
	for (i = NR_KNOBS; i-- > 0;) {
		if (!knobs[i].changed)
			continue;
		strcpy(path, KSM_DIR);
		strcat(path, knobs[i].name);
		write_file(path, knobs[i].saved);
	}
}

/* set one knob, saving it first; 0 or -errno */
static int knob_set(const char *name, const char *val)
{
	char path[128];
	size_t i;

	for (i = 0; i < NR_KNOBS; i++)
		if (!strcmp(knobs[i].name, name))
			break;
	if (i == NR_KNOBS || !knobs[i].present)
		return -ENOENT;
	snprintf(path, sizeof(path), KSM_DIR "%s", name);
	knobs[i].changed = true;
	return write_file(path, val);
}

/* set a knob or die with a message */
static void knob_must_set(const char *name, const char *val)
{
	int ret = knob_set(name, val);

	if (ret) {
		printf("Bail out! cannot write %s to " KSM_DIR "%s: %s\n",
		       val, name, strerror(-ret));
		exit(KSFT_FAIL);
	}
}

/* SIGINT/SIGTERM/SIGHUP: restore the knobs, then die of the signal */
static void on_signal(int sig)
{
	knobs_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* save every knob present and install the restore paths */
static void knobs_save(void)
{
	struct sigaction sa;
	char path[128], *p;
	size_t i;

	for (i = 0; i < NR_KNOBS; i++) {
		snprintf(path, sizeof(path), KSM_DIR "%s", knobs[i].name);
		if (read_file(path, knobs[i].saved, sizeof(knobs[i].saved)))
			continue;
		/* advisor_mode reads "[none] scan-time": keep the chosen one */
		p = strchr(knobs[i].saved, '[');
		if (p) {
			memmove(knobs[i].saved, p + 1, strlen(p));
			p = strchr(knobs[i].saved, ']');
			if (p)
				*p = '\0';
		}
		knobs[i].present = true;
	}
	atexit(knobs_restore);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* parse "ksm_zero_pages N" out of a ksm_stat file; 0 or -errno */
static int ksm_stat_zero_pages(const char *path, long *val)
{
	char buf[1024], *p;
	int ret;

	ret = read_file(path, buf, sizeof(buf));
	if (ret)
		return ret;
	p = strstr(buf, "ksm_zero_pages ");
	if (!p)
		return -ENOENT;
	*val = strtol(p + strlen("ksm_zero_pages "), NULL, 10);
	return 0;
}

/* this process's own ksm_zero_pages (a fresh open: a child reads its own) */
static long self_zero_pages(void)
{
	long v = 0;

	if (ksm_stat_zero_pages("/proc/self/ksm_stat", &v))
		return -1;
	return v;
}

/* sum of ksm_zero_pages over every live process's ksm_stat */
static long all_processes_zero_pages(void)
{
	char path[300];
	struct dirent *de;
	long sum = 0, v;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ksm_stat", de->d_name);
		if (!ksm_stat_zero_pages(path, &v))
			sum += v;
	}
	closedir(dir);
	return sum;
}

/* global counter and per-process sum, read together at one moment */
struct accounting {
	long global;
	long processes;
};

/* read the global ksm_zero_pages and the sum over live processes */
static void accounting_read(struct accounting *a)
{
	a->global = 0;
	ksm_read("ksm_zero_pages", &a->global);
	a->processes = all_processes_zero_pages();
}

/*
 * what the global counter gained between a and b that no live process's
 * counter explains (0 on a correct kernel)
 */
static long accounting_unexplained(const struct accounting *a,
				   const struct accounting *b)
{
	return (b->global - a->global) - (b->processes - a->processes);
}

/* the zero page's pfn once seen (children inherit it), -1 until then */
static uint64_t zero_pfn = (uint64_t)-1;

/* true if pfn is a zero page, by /proc/kpageflags KPF_ZERO_PAGE */
static bool pfn_is_zero_page(int kpf_fd, uint64_t pfn)
{
	uint64_t flags;

	if (pfn == zero_pfn)
		return true;
	if (pread(kpf_fd, &flags, sizeof(flags), (off_t)(pfn * sizeof(flags))) !=
	    (ssize_t)sizeof(flags))
		return false;
	if (!(flags & (1ULL << KPF_ZERO_PAGE)))
		return false;
	zero_pfn = pfn;
	return true;
}

/*
 * KSM zero pages this process maps in [start, start + npages pages):
 * present PTEs on a zero page.  Every page of the test ranges was written
 * before it was merged, so any zero page found there was put by KSM (a read
 * fault never touched them).  -1 on error.
 */
static long count_ksm_zero_ptes(const char *start, size_t npages)
{
	uint64_t entries[512];
	int pm_fd, kpf_fd;
	long count = 0;
	size_t i, done;

	pm_fd = open("/proc/self/pagemap", O_RDONLY);
	if (pm_fd < 0)
		return -1;
	kpf_fd = open("/proc/kpageflags", O_RDONLY);
	if (kpf_fd < 0) {
		close(pm_fd);
		return -1;
	}
	for (done = 0; done < npages; done += i) {
		size_t n = npages - done < 512 ? npages - done : 512;
		off_t off = (off_t)(((uintptr_t)start / page_size + done) *
				    sizeof(uint64_t));
		ssize_t got = pread(pm_fd, entries, n * sizeof(uint64_t), off);

		if (got != (ssize_t)(n * sizeof(uint64_t))) {
			count = -1;
			break;
		}
		for (i = 0; i < n; i++) {
			if (!(entries[i] & PM_PRESENT))
				continue;
			if (pfn_is_zero_page(kpf_fd, entries[i] & PM_PFN_MASK))
				count++;
		}
	}
	close(kpf_fd);
	close(pm_fd);
	return count;
}

/* the child's side: report its charge and what it maps in slot r, then exit */
static void child_report_and_exit(struct child_report *r, const char *start,
				  size_t npages)
{
	r->error = 0;
	r->charged_before = self_zero_pages();
	r->mapped = count_ksm_zero_ptes(start, npages);
	r->charged_after = self_zero_pages();
	if (r->charged_before < 0 || r->mapped < 0 || r->charged_after < 0)
		r->error = errno ? errno : EIO;
	_exit(0);
}

/* wait for child pid; false (with a diagnostic) unless it exited 0 */
static bool reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid) {
		printf("# waitpid(%d) failed: %s\n", pid, strerror(errno));
		return false;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("# child %d ended with status 0x%x\n", pid, status);
		return false;
	}
	return true;
}

/* print one TAP result line and count it */
static void tap(int n, bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		nr_pass++;
	else
		nr_fail++;
}

/* print one TAP skip line and count it */
static void tap_skip(int n, const char *what, const char *why)
{
	printf("ok %d - %s # SKIP %s\n", n, what, why);
	fflush(stdout);
	nr_skip++;
}

/*
 * map npages of private anonymous memory (at addr exactly, unless NULL),
 * no THP, every page written
 */
static char *region_map_at(char *addr, size_t npages, bool mergeable)
{
	size_t len = npages * page_size;
	char *p;

	p = mmap(addr, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | (addr ? MAP_FIXED : 0), -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE);
	memset(p, 0, len);
	if (mergeable && madvise(p, len, MADV_MERGEABLE)) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

/* map npages of private anonymous memory anywhere (see region_map_at()) */
static char *region_map(size_t npages, bool mergeable)
{
	return region_map_at(NULL, npages, mergeable);
}

/* run ksmd until this process has want KSM zero pages; false on timeout */
static bool ksm_merge_until(long want)
{
	double deadline = now() + MERGE_TIMEOUT_S;
	long have = -1;

	knob_must_set("run", "1");
	while (now() < deadline) {
		have = self_zero_pages();
		if (have >= want)
			break;
		usleep(1000);
	}
	knob_must_set("run", "0");
	have = self_zero_pages();
	if (have != want) {
		printf("# ksmd merged %ld of %ld zero pages in %d s\n",
		       have, want, MERGE_TIMEOUT_S);
		return false;
	}
	return true;
}

/*
 * a fresh region of npages KSM zero pages (at addr, unless NULL); NULL
 * (with a diagnostic) on failure
 */
static char *zero_region_at(char *addr, size_t npages)
{
	char *p = region_map_at(addr, npages, true);

	if (!p) {
		printf("# mmap/madvise of %zu MiB failed: %s\n",
		       npages * page_size / MIB, strerror(errno));
		return NULL;
	}
	if (!ksm_merge_until((long)npages)) {
		munmap(p, npages * page_size);
		return NULL;
	}
	/* every page is a KSM zero page now: learn the zero pfn for the children */
	if (count_ksm_zero_ptes(p, 1) != 1) {
		printf("# the first merged page is not on a KPF_ZERO_PAGE pfn\n");
		munmap(p, npages * page_size);
		return NULL;
	}
	return p;
}

/* a fresh region of npages KSM zero pages anywhere (see zero_region_at()) */
static char *zero_region(size_t npages)
{
	return zero_region_at(NULL, npages);
}

/*
 * the verdict on one child: its charge must equal what it maps, and the
 * global counter must be back where the live processes say it should be
 */
static bool judge(const char *what, bool child, long unexplained)
{
	bool ok = true;

	if (child)
		printf("# %s: child's ksm_stat ksm_zero_pages %ld (then %ld), KSM zero PTEs in its pagemap %ld\n",
		       what, report->charged_before, report->charged_after, report->mapped);
	printf("# %s: global ksm_zero_pages changed by %+ld more than the live processes' sum\n",
	       what, unexplained);
	if (!child)
		goto global;
	if (report->error) {
		printf("# %s: the child could not read its counters: %s\n",
		       what, strerror(report->error));
		return false;
	}
	if (report->charged_before > report->mapped) {
		printf("# %s: the child is charged %ld KSM zero pages it does not map (the parent's count at the memcpy in dup_mm())\n",
		       what, report->charged_before - report->mapped);
		ok = false;
	} else if (report->charged_before < report->mapped) {
		printf("# %s: the child maps %ld KSM zero pages it was never charged for\n",
		       what, report->mapped - report->charged_before);
		ok = false;
	}
global:
	if (unexplained) {
		printf("# %s: global ksm_zero_pages is off by %+ld after every process of the test exited\n",
		       what, unexplained);
		ok = false;
	}
	return ok;
}

/* fork a child that reports on [start, npages); -1 on failure */
static pid_t fork_reporter(const char *start, size_t npages)
{
	pid_t pid = fork();

	if (pid == 0)
		child_report_and_exit(report, start, npages);
	return pid;
}

/* test 1: a plain fork after the merge (the control) */
static void test_plain(int n)
{
	const size_t npages = 16 * MIB / page_size;
	struct accounting a, b;
	const char *what = "plain fork";
	bool ok;
	char *p;
	pid_t pid;

	accounting_read(&a);
	p = zero_region(npages);
	if (!p) {
		tap(n, false, "%s: setup failed", what);
		return;
	}
	pid = fork_reporter(p, npages);
	ok = pid > 0 && reap(pid);
	munmap(p, npages * page_size);
	accounting_read(&b);
	ok = ok && judge(what, true, accounting_unexplained(&a, &b));
	ok = ok && report->mapped == (long)npages;
	tap(n, ok, "%s: the child is charged the %zu KSM zero pages it maps", what, npages);
}

/* tests 2 and 3: a range the child does not get (DONTFORK) or gets empty (WIPEONFORK) */
static void test_advice(int n, int advice, const char *what)
{
	const size_t npages = 16 * MIB / page_size;
	struct accounting a, b;
	bool ok;
	char *p;
	pid_t pid;

	accounting_read(&a);
	p = zero_region(npages);
	if (!p) {
		tap(n, false, "%s: setup failed", what);
		return;
	}
	if (madvise(p, npages * page_size, advice)) {
		int err = errno;

		munmap(p, npages * page_size);
		if (err == EINVAL) {
			tap_skip(n, what, "the kernel rejects this madvise advice");
			return;
		}
		tap(n, false, "%s: madvise failed: %s", what, strerror(err));
		return;
	}
	pid = fork_reporter(p, npages);
	ok = pid > 0 && reap(pid);
	munmap(p, npages * page_size);
	accounting_read(&b);
	ok = ok && judge(what, true, accounting_unexplained(&a, &b));
	tap(n, ok, "%s: the child is charged only the KSM zero pages fork() copied", what);
}

/* a racing thread: what it is given and when it ran */
struct racer {
	char *start;
	size_t npages;
	atomic_int go;		/* set by the main thread */
	atomic_int started;	/* set by the racer right before its work */
	atomic_long done;	/* pages the write racer has written */
	double t_start, t_end;
	int err;
};

/* racer of test 4: MADV_UNMERGEABLE of the whole range */
static void *unmerge_racer(void *arg)
{
	struct racer *r = arg;

	while (!atomic_load(&r->go))
		;
	r->t_start = now();
	atomic_store(&r->started, 1);
	r->err = madvise(r->start, r->npages * page_size, MADV_UNMERGEABLE) ? errno : 0;
	r->t_end = now();
	return NULL;
}

/* racer of test 5: write every page of the range, in order */
static void *write_racer(void *arg)
{
	struct racer *r = arg;
	size_t i;

	while (!atomic_load(&r->go))
		;
	r->t_start = now();
	atomic_store(&r->started, 1);
	for (i = 0; i < r->npages; i++) {
		((volatile char *)r->start)[i * page_size] = 1;
		atomic_store_explicit(&r->done, (long)i + 1, memory_order_relaxed);
	}
	r->t_end = now();
	return NULL;
}

/* test 4: fork while another thread unmerges the range */
static void test_unmerge_race(int n)
{
	const size_t npages = 64 * MIB / page_size;
	const char *what = "fork during MADV_UNMERGEABLE";
	struct accounting a, b;
	struct racer r;
	pthread_t th;
	double t_fork;
	bool ok = false, hit = false;
	int try;
	char *p;
	pid_t pid;

	for (try = 1; try <= TRIES && !hit; try++) {
		accounting_read(&a);
		p = zero_region(npages);
		if (!p) {
			tap(n, false, "%s: setup failed", what);
			return;
		}
		memset(&r, 0, sizeof(r));
		r.start = p;
		r.npages = npages;
		if (pthread_create(&th, NULL, unmerge_racer, &r)) {
			munmap(p, npages * page_size);
			tap(n, false, "%s: pthread_create failed", what);
			return;
		}
		atomic_store(&r.go, 1);
		while (!atomic_load(&r.started))
			;
		/* let the unmerge take the mmap lock (it holds it for all of it) */
		usleep(200);
		t_fork = now();
		pid = fork_reporter(p, npages);
		pthread_join(th, NULL);
		ok = pid > 0 && reap(pid) && !r.err;
		munmap(p, npages * page_size);
		accounting_read(&b);
		if (!ok) {
			printf("# try %d: fork or unmerge failed (%s)\n", try, strerror(r.err));
			break;
		}
		/* the race was run if the child's page tables were copied after the unmerge */
		hit = report->mapped == 0 && t_fork < r.t_end;
		printf("# try %d: unmerge took %.1f ms, fork() entered %.1f ms before it returned, child maps %ld\n",
		       try, (r.t_end - r.t_start) * 1e3, (r.t_end - t_fork) * 1e3, report->mapped);
		ok = judge(what, true, accounting_unexplained(&a, &b));
		if (!ok)
			break;
	}
	if (ok && !hit) {
		tap_skip(n, what, "the fork never landed inside the unmerge");
		return;
	}
	tap(n, ok, "%s of the range by another thread: the child is charged only what it maps", what);
}

/*
 * many small populated VMAs (every other one read-only, so that they do not
 * merge): dup_mmap() takes some milliseconds over them; NULL on failure
 */
static char *slow_vmas_map(size_t npages)
{
	char *p = region_map(npages, false);
	size_t i;

	if (!p)
		return NULL;
	for (i = 0; i < npages; i += 4)
		if (mprotect(p + i * page_size, 2 * page_size, PROT_READ)) {
			munmap(p, npages * page_size);
			return NULL;
		}
	return p;
}

/*
 * test 5: fork while another thread write-faults the KSM zero pages.  The
 * faults take only the per-VMA lock: they go on while dup_mmap() copies the
 * 2048 small VMAs below the KSM range, until it write-locks that range.
 */
static void test_write_race(int n)
{
	const size_t zpages = 16 * MIB / page_size;
	const size_t spages = 8 * MIB / page_size;
	/* pages written between fork() and the copy that show the window was there */
	const long evidence = (long)zpages / 16;
	const char *what = "fork during write faults";
	struct accounting a, b;
	struct racer r;
	pthread_t th;
	bool ok = false, hit = false;
	long at_fork, at_copy;
	int try;
	char *z, *slow;
	pid_t pid;

	for (try = 1; try <= WRITE_TRIES && !hit; try++) {
		accounting_read(&a);
		z = zero_region(zpages);
		if (!z) {
			tap(n, false, "%s: setup failed", what);
			return;
		}
		/* below the KSM range, so that dup_mmap() copies them first */
		slow = slow_vmas_map(spages);
		if (!slow || slow > z) {
			printf("# the small VMAs are not below the KSM range (%p, %p)\n",
			       (void *)slow, (void *)z);
			if (slow)
				munmap(slow, spages * page_size);
			munmap(z, zpages * page_size);
			tap_skip(n, what, "cannot place the small VMAs below the KSM zero pages");
			return;
		}
		memset(&r, 0, sizeof(r));
		r.start = z;
		r.npages = zpages;
		if (pthread_create(&th, NULL, write_racer, &r)) {
			munmap(slow, spages * page_size);
			munmap(z, zpages * page_size);
			tap(n, false, "%s: pthread_create failed", what);
			return;
		}
		atomic_store(&r.go, 1);
		while (!atomic_load(&r.started))
			;
		at_fork = atomic_load(&r.done);
		pid = fork_reporter(z, zpages);
		pthread_join(th, NULL);
		ok = pid > 0 && reap(pid);
		munmap(slow, spages * page_size);
		munmap(z, zpages * page_size);
		accounting_read(&b);
		if (!ok)
			break;
		/* the race was run if the writer went on between fork() and the copy */
		at_copy = (long)zpages - report->mapped;
		hit = report->mapped > 0 && at_copy - at_fork >= evidence;
		printf("# try %d: the writer had written %ld pages when fork() was called, %ld when the range was copied (of %zu, in %.1f ms)\n",
		       try, at_fork, at_copy, zpages, (r.t_end - r.t_start) * 1e3);
		ok = judge(what, true, accounting_unexplained(&a, &b));
		if (!ok)
			break;
	}
	if (ok && !hit) {
		tap_skip(n, what, "the writer never went on while fork() ran");
		return;
	}
	tap(n, ok, "%s to the KSM zero pages by another thread: the child is charged only what it maps", what);
}

/*
 * test 6: fork() fails after dup_mmap() copied the KSM zero pages: a
 * private writable VMA above them is larger than RAM + swap, so
 * security_vm_enough_memory_mm() refuses the child's copy of it (ENOMEM).
 * The half-built child is torn down, its copied KSM zero pages are
 * uncharged from the global counter, to which ksm_fork() never added them.
 */
static void test_failed_fork(int n)
{
	const size_t npages = 16 * MIB / page_size;
	const size_t zlen = npages * page_size;
	const char *what = "failed fork";
	struct accounting a, b, mid;
	struct sysinfo si;
	size_t huge_len;
	char buf[32];
	char *p, *huge, *base;
	bool ok;
	pid_t pid;
	int err;

	if (read_file("/proc/sys/vm/overcommit_memory", buf, sizeof(buf)) ||
	    sysinfo(&si)) {
		tap_skip(n, what, "cannot read overcommit_memory or sysinfo");
		return;
	}
	if (strtol(buf, NULL, 10) != 0) {
		tap_skip(n, what, "vm.overcommit_memory is not 0: no VMA larger than RAM + swap to make fork() fail");
		return;
	}
	/* exactly RAM + swap: the most one mmap() may charge with overcommit 0 */
	huge_len = (size_t)(((uint64_t)si.totalram + si.totalswap) * si.mem_unit);
	huge_len = huge_len / page_size * page_size;
	/*
	 * Address space for [KSM range][guard page][huge VMA, grown to twice
	 * RAM + swap], in that order: dup_mmap() copies the KSM range first.
	 */
	base = mmap(NULL, zlen + page_size + 2 * huge_len, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		tap_skip(n, what, "no address space for a VMA twice the size of RAM + swap");
		return;
	}
	munmap(base + zlen + page_size + huge_len, huge_len);
	huge = mmap(base + zlen + page_size, huge_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (huge == MAP_FAILED ||
	    mremap(huge, huge_len, 2 * huge_len, 0) != huge) {
		munmap(base, zlen + page_size + 2 * huge_len);
		tap_skip(n, what, "cannot grow a private writable VMA beyond RAM + swap");
		return;
	}
	accounting_read(&a);
	p = zero_region_at(base, npages);
	if (!p) {
		munmap(base, zlen + page_size + 2 * huge_len);
		tap(n, false, "%s: setup failed", what);
		return;
	}
	accounting_read(&mid);
	pid = fork();
	if (pid == 0)
		_exit(0);
	err = errno;
	if (pid > 0) {
		reap(pid);
		munmap(base, zlen + page_size + 2 * huge_len);
		tap_skip(n, what, "fork() succeeded with a VMA larger than RAM + swap");
		return;
	}
	accounting_read(&b);
	printf("# %s: fork() failed with %s, as meant; global ksm_zero_pages %ld before it, %ld after it (the parent still maps %ld)\n",
	       what, strerror(err), mid.global, b.global, self_zero_pages());
	munmap(base, zlen + page_size + 2 * huge_len);
	accounting_read(&b);
	/* no child: judge only the global counter */
	ok = judge(what, false, accounting_unexplained(&a, &b));
	tap(n, ok, "%s (ENOMEM in dup_mmap()): the global counter loses nothing", what);
}

/* a test 7 child not yet reaped: its pid and the parent's count before fork() */
struct inflight {
	pid_t pid;
	long before;
};

/* test 7's tally */
struct merge_race {
	long forks, during, verdicts, worst;
	bool failed, broken;
};

/* reap the test 7 child in slot i and judge what it reported */
static void merge_race_reap(struct merge_race *m, struct inflight *in, int i)
{
	const struct child_report *r = &report[1 + i];

	if (!reap(in[i].pid))
		m->broken = true;
	in[i].pid = 0;
	m->forks++;
	if (r->error || r->charged_before != r->charged_after)
		return;		/* ksmd merged in the child meanwhile: no verdict */
	m->verdicts++;
	if (r->mapped > in[i].before)
		m->during++;	/* ksmd merged between the parent's read and the copy */
	if (r->charged_before != r->mapped && !m->failed) {
		m->failed = true;
		m->worst = r->charged_before - r->mapped;
		report[0] = *r;
	}
}

/*
 * test 7: fork while ksmd merges: the child may map pages it is not charged
 * for.  Each round maps a fresh range of zero-filled pages and forks children
 * back to back (up to 8 at a time, each checks itself and exits) while ksmd
 * merges them: its first pass records checksums, its second merges.  Only a
 * merge that lands between dup_mm()'s memcpy() and dup_mmap()'s mmap lock
 * shows, so this is a matter of numbers.
 */
static void test_merge_race(int n)
{
	enum { INFLIGHT = 8 };
	const size_t npages = 64 * MIB / page_size;
	const char *what = "fork during ksmd merging";
	const double budget = 10.0;
	const long enough = 50;
	struct inflight in[INFLIGHT];
	struct merge_race m;
	struct accounting a, b;
	double t_end;
	int round, i;
	char *p;
	pid_t pid;

	memset(&m, 0, sizeof(m));
	memset(in, 0, sizeof(in));
	accounting_read(&a);
	t_end = now() + budget;
	for (round = 0; !m.failed && !m.broken && now() < t_end && m.during < enough; round++) {
		p = region_map(npages, true);
		if (!p) {
			tap(n, false, "%s: setup failed: %s", what, strerror(errno));
			return;
		}
		knob_must_set("run", "1");
		for (i = 0; !m.failed && !m.broken && now() < t_end && m.during < enough;
		     i = (i + 1) % INFLIGHT) {
			if (in[i].pid)
				merge_race_reap(&m, in, i);
			in[i].before = self_zero_pages();
			if (in[i].before >= (long)npages)
				break;
			pid = fork();
			if (pid == 0)
				child_report_and_exit(&report[1 + i], p, npages);
			if (pid < 0) {
				m.broken = true;
				break;
			}
			in[i].pid = pid;
		}
		for (i = 0; i < INFLIGHT; i++)
			if (in[i].pid)
				merge_race_reap(&m, in, i);
		knob_must_set("run", "0");
		munmap(p, npages * page_size);
	}
	accounting_read(&b);
	printf("# %s: %d rounds, %ld forks, %ld judged, %ld of them copied pages ksmd merged after the parent's last read\n",
	       what, round, m.forks, m.verdicts, m.during);
	if (m.broken) {
		tap(n, false, "%s: fork or a child failed", what);
		return;
	}
	if (m.failed) {
		judge(what, true, accounting_unexplained(&a, &b));
		printf("# %s: the child is %s %ld: ksmd merged them between dup_mm()'s memcpy and the copy\n",
		       what, m.worst < 0 ? "short" : "over", m.worst < 0 ? -m.worst : m.worst);
		tap(n, false, "%s: the child is charged every KSM zero page it maps", what);
		return;
	}
	if (accounting_unexplained(&a, &b)) {
		judge(what, false, accounting_unexplained(&a, &b));
		tap(n, false, "%s: the child is charged every KSM zero page it maps", what);
		return;
	}
	if (!m.during) {
		tap_skip(n, what, "no fork copied a page ksmd had just merged");
		return;
	}
	tap(n, true, "%s: the child is charged every KSM zero page it maps", what);
}

/*
 * test 8 (not fork): UFFDIO_MOVE of KSM zero pages.  The destination gets
 * a plain zero page, and nothing uncharges the KSM zero page the source
 * lost: the mover's own counter (and the global one) keeps them for good.
 */
static void test_uffd_move(int n)
{
	const size_t npages = 16 * MIB / page_size;
	const size_t len = npages * page_size;
	const char *what = "UFFDIO_MOVE";
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_MOVE };
	struct uffdio_register reg;
	struct uffdio_move mv;
	struct accounting a, b;
	long self_before, self_moved, self_after;
	bool ok = true;
	char *src, *dst;
	int uffd;

	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0) {
		tap_skip(n, what, "no userfaultfd (CONFIG_USERFAULTFD)");
		return;
	}
	if (ioctl(uffd, UFFDIO_API, &api)) {
		close(uffd);
		tap_skip(n, what, "no UFFDIO_MOVE (UFFD_FEATURE_MOVE, Linux 6.8)");
		return;
	}
	accounting_read(&a);
	self_before = self_zero_pages();
	dst = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	src = zero_region(npages);
	if (dst == MAP_FAILED || !src) {
		if (dst != MAP_FAILED)
			munmap(dst, len);
		if (src)
			munmap(src, len);
		close(uffd);
		tap(n, false, "%s: setup failed", what);
		return;
	}
	madvise(dst, len, MADV_NOHUGEPAGE);
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)dst;
	reg.range.len = len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	memset(&mv, 0, sizeof(mv));
	mv.dst = (uintptr_t)dst;
	mv.src = (uintptr_t)src;
	mv.len = len;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) || ioctl(uffd, UFFDIO_MOVE, &mv)) {
		printf("# %s: register/move failed after %lld bytes: %s\n",
		       what, (long long)mv.move, strerror(errno));
		ok = false;
	}
	self_moved = self_zero_pages();
	munmap(src, len);
	munmap(dst, len);
	close(uffd);
	self_after = self_zero_pages();
	accounting_read(&b);
	printf("# %s: own ksm_zero_pages %ld before, %ld once the %zu KSM zero pages were moved, %ld once both ranges are unmapped\n",
	       what, self_before, self_moved, npages, self_after);
	printf("# %s: global ksm_zero_pages changed by %+ld over the test\n",
	       what, b.global - a.global);
	if (self_after != self_before) {
		printf("# %s: this process is charged %+ld KSM zero pages it does not map\n",
		       what, self_after - self_before);
		ok = false;
	}
	if (accounting_unexplained(&a, &b)) {
		printf("# %s: global ksm_zero_pages changed by %+ld more than the live processes' sum\n",
		       what, accounting_unexplained(&a, &b));
		ok = false;
	}
	tap(n, ok, "%s of KSM zero pages (no fork): the mover is not charged for zero pages it no longer maps", what);
}

/* skip everything (exit 4) with one reason */
static void skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	exit(KSFT_SKIP);
}

/* what the kernel and the caller must provide, or skip */
static void check_prerequisites(void)
{
	uint64_t flags;
	long v;
	void *p;
	int fd;

	if (geteuid())
		skip_all("needs root (pagemap PFNs, /proc/kpageflags, KSM knobs)");
	if (access(KSM_DIR "run", W_OK))
		skip_all("no writable " KSM_DIR "run (CONFIG_KSM)");
	if (ksm_read("ksm_zero_pages", &v))
		skip_all("the kernel has no " KSM_DIR "ksm_zero_pages counter: nothing to check");
	if (ksm_stat_zero_pages("/proc/self/ksm_stat", &v))
		skip_all("the kernel has no ksm_zero_pages in /proc/PID/ksm_stat: nothing to check");
	if (access(KSM_DIR "use_zero_pages", W_OK))
		skip_all("no " KSM_DIR "use_zero_pages");
	fd = open("/proc/kpageflags", O_RDONLY);
	if (fd < 0 || pread(fd, &flags, sizeof(flags), 0) != (ssize_t)sizeof(flags))
		skip_all("no readable /proc/kpageflags (CONFIG_PROC_PAGE_MONITOR)");
	close(fd);
	p = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || madvise(p, page_size, MADV_MERGEABLE))
		skip_all("MADV_MERGEABLE fails");
	munmap(p, page_size);
}

/* test 2 */
static void test_dontfork(int n)
{
	test_advice(n, MADV_DONTFORK, "MADV_DONTFORK");
}

/* test 3 */
static void test_wipeonfork(int n)
{
	test_advice(n, MADV_WIPEONFORK, "MADV_WIPEONFORK");
}

static void (*const tests[NR_TESTS])(int) = {
	test_plain, test_dontfork, test_wipeonfork, test_unmerge_race,
	test_write_race, test_failed_fork, test_merge_race, test_uffd_move,
};

static const char *const test_names[NR_TESTS] = {
	"plain fork", "MADV_DONTFORK", "MADV_WIPEONFORK",
	"fork during MADV_UNMERGEABLE", "fork during write faults",
	"failed fork", "fork during ksmd merging", "UFFDIO_MOVE",
};

/*
 * the tests to run: all, or those named on the command line (1-8); false
 * (with a message) on bad input
 */
static bool pick_tests(int argc, char **argv, bool *run)
{
	int i, t;

	for (t = 0; t < NR_TESTS; t++)
		run[t] = argc < 2;
	for (i = 1; i < argc; i++) {
		char *end;
		long v = strtol(argv[i], &end, 10);

		if (*end || end == argv[i] || v < 1 || v > NR_TESTS) {
			fprintf(stderr, "usage: %s [TEST...]: TEST is 1 to %d, not '%s'\n",
				argv[0], NR_TESTS, argv[i]);
			return false;
		}
		run[v - 1] = true;
	}
	return true;
}

int main(int argc, char **argv)
{
	bool run[NR_TESTS];
	int t;
	long g;

	if (!pick_tests(argc, argv, run))
		return KSFT_FAIL;
	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	main_pid = getpid();
	printf("TAP version 13\n");
	check_prerequisites();
	report = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (report == MAP_FAILED) {
		printf("Bail out! mmap of the report page failed: %s\n", strerror(errno));
		return KSFT_FAIL;
	}
	knobs_save();
	knob_must_set("run", "0");
	if (knobs[1].present && strcmp(knobs[1].saved, "none"))
		knob_must_set("advisor_mode", "none");
	knob_must_set("use_zero_pages", "1");
	knob_must_set("pages_to_scan", "4096");
	knob_must_set("sleep_millisecs", "0");
	/* smart scan would skip pages that did not merge for a while (6.7+) */
	if (knobs[5].present)
		knob_must_set("smart_scan", "0");
	ksm_read("ksm_zero_pages", &g);
	printf("# global ksm_zero_pages %ld at start, %ld held by live processes\n",
	       g, all_processes_zero_pages());
	printf("1..%d\n", NR_TESTS);
	for (t = 0; t < NR_TESTS; t++) {
		if (run[t])
			tests[t](t + 1);
		else
			tap_skip(t + 1, test_names[t], "not selected on the command line");
	}
	ksm_read("ksm_zero_pages", &g);
	printf("# global ksm_zero_pages %ld at the end, %ld held by live processes\n",
	       g, all_processes_zero_pages());
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       nr_pass, nr_fail, nr_skip);
	knobs_restore();
	if (nr_fail)
		return KSFT_FAIL;
	return nr_pass ? KSFT_PASS : KSFT_SKIP;
}
