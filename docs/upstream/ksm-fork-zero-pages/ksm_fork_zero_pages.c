// SPDX-License-Identifier: GPL-2.0
/*
 * ksm_fork_zero_pages: the ways a forked child is charged the wrong number of
 * KSM zero pages that a deterministic selftest cannot drive.
 *
 * The deterministic cases (plain fork, MADV_DONTFORK, MADV_WIPEONFORK,
 * UFFDIO_MOVE) are in the series' ksm_functional_tests patches.  What stays
 * here are the timing races, which need many tries and luck, and the failed
 * fork, which needs a VMA larger than RAM + swap and the global counter:
 *
 *   1  fork while another thread's MADV_UNMERGEABLE of the range runs
 *      (dup_mmap() waits for the mmap lock after dup_mm() copied the count)
 *   2  fork while another thread write-faults the KSM zero pages (they hold
 *      only the per-VMA lock until dup_mmap() write-locks that VMA)
 *   3  fork while ksmd merges more zero pages (the child is undercharged)
 *   4  fork that fails (ENOMEM in dup_mmap()) after copying KSM zero pages
 *
 * In 1-3 the child compares its own /proc/self/ksm_stat ksm_zero_pages with
 * the KSM zero pages its own pagemap shows in the range; a race that did not
 * happen is skipped, not passed.  A failed fork leaves no child to read, so 4
 * compares the global /sys/kernel/mm/ksm/ksm_zero_pages with the sum over
 * every live process's ksm_stat, before and after: run it where nothing else
 * merges or unmerges zero pages meanwhile (the tools/kernels/ksm-qemu guests).  It is
 * not kselftest material for that reason.
 *
 * Needs root (pagemap PFNs, the KSM knobs) and ksm_zero_pages in ksm_stat;
 * otherwise it skips.  The zero page is told by its PFN, learned from the
 * merged range: one zero page (x86), not the coloured ones of s390 or MIPS.
 * Every KSM knob it writes is put back at exit and on SIGINT/SIGTERM/SIGHUP.
 * Built against the kernel's selftests (kselftest.h, vm_util.h):
 *
 *   gcc -static -O2 -Wall -pthread -I $LINUX/tools/testing/selftests/mm \
 *       ksm_fork_zero_pages.c $LINUX/tools/testing/selftests/mm/vm_util.c
 *
 * Exit status (kselftest): 0 pass, 1 fail, 4 skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>

#include "../kselftest.h"
#include "vm_util.h"

#define KSM_DIR		"/sys/kernel/mm/ksm/"
#define MiB		(1024UL * 1024UL)
#define TRIES		5	/* tries of a race before it is skipped */
#define WRITE_TRIES	12	/* a busy machine may starve the writer */
#define MERGE_TIMEOUT_S	120

/* the KSM knobs written here: saved at start, put back at exit */
static struct {
	const char *name;
	char saved[64];
	bool present, changed;
} knobs[] = {
	{ .name = "run" },	/* first: stopped first, restarted last */
	{ .name = "advisor_mode" },
	{ .name = "pages_to_scan" },
	{ .name = "sleep_millisecs" },
	{ .name = "use_zero_pages" },
	{ .name = "smart_scan" },
};
#define NR_KNOBS	(sizeof(knobs) / sizeof(knobs[0]))

/* what a child reports to its parent, in a MAP_SHARED page */
struct child_report {
	long charged;		/* its own ksm_stat ksm_zero_pages */
	long mapped;		/* KSM zero pages its pagemap shows in the range */
	long charged_after;	/* ksm_stat again: no verdict if it moved */
};

static size_t pagesize;
static pid_t main_pid;
static volatile sig_atomic_t restoring;
static struct child_report *report;
static unsigned long zero_pfn = -1ul;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Write a string to a file; 0 or -1 (async-signal-safe). */
static int write_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd, ret;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ret = write(fd, text, len) == (ssize_t)len ? 0 : -1;
	close(fd);
	return ret;
}

/* Read a small file, NUL-terminated; 0 or -1. */
static int read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* "ksm_zero_pages N" of a ksm_stat file, or -1. */
static long ksm_stat_zero_pages(const char *path)
{
	char buf[1024], *p;

	if (read_file(path, buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "ksm_zero_pages ");
	return p ? strtol(p + strlen("ksm_zero_pages "), NULL, 10) : -1;
}

/* This process's own count: a fresh open, so that a child reads its own. */
static long my_ksm_zero_pages(void)
{
	return ksm_stat_zero_pages("/proc/self/ksm_stat");
}

static long global_ksm_zero_pages(void)
{
	char buf[64];

	if (read_file(KSM_DIR "ksm_zero_pages", buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

/* The global counter minus the sum over every live process's ksm_stat. */
static long unexplained_ksm_zero_pages(void)
{
	char path[300];
	struct dirent *de;
	long sum = 0, v;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir)
		ksft_exit_fail_msg("opendir(/proc): %s\n", strerror(errno));
	while ((de = readdir(dir))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ksm_stat", de->d_name);
		v = ksm_stat_zero_pages(path);
		if (v > 0)
			sum += v;
	}
	closedir(dir);
	return global_ksm_zero_pages() - sum;
}

/* Put back every knob changed here (async-signal-safe, main process only). */
static void knobs_restore(void)
{
	char path[128];
	size_t i;

	if (getpid() != main_pid || restoring)
		return;
	restoring = 1;
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

static void on_signal(int sig)
{
	knobs_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Save every knob there is, and restore them at exit and on a signal. */
static void knobs_save(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
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
			*strchrnul(knobs[i].saved, ']') = '\0';
		}
		knobs[i].present = true;
	}
	atexit(knobs_restore);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static void knob_set(const char *name, const char *val)
{
	char path[128];
	size_t i;

	for (i = 0; i < NR_KNOBS && strcmp(knobs[i].name, name); i++)
		;
	if (i == NR_KNOBS || !knobs[i].present)
		return;
	snprintf(path, sizeof(path), KSM_DIR "%s", name);
	knobs[i].changed = true;
	if (write_file(path, val))
		ksft_exit_fail_msg("writing %s to %s: %s\n", val, path, strerror(errno));
}

/*
 * The KSM zero pages mapped in [start, start + npages pages), by PFN; read
 * 512 pagemap entries at a time, which keeps the ksmd race's children short.
 */
static long range_ksm_zero_pages(const char *start, size_t npages)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t ent[512];
	size_t i, n, done;
	long count = 0;

	if (fd < 0)
		return -1;
	for (done = 0; done < npages; done += n) {
		n = npages - done < 512 ? npages - done : 512;
		if (pread(fd, ent, n * sizeof(ent[0]),
			  ((uintptr_t)start / pagesize + done) * sizeof(ent[0])) !=
		    (ssize_t)(n * sizeof(ent[0]))) {
			count = -1;
			break;
		}
		for (i = 0; i < n; i++)
			if (PAGEMAP_PRESENT(ent[i]) && PAGEMAP_PFN(ent[i]) == zero_pfn)
				count++;
	}
	close(fd);
	return count;
}

/* The child's side: report its charge and what it maps, then exit. */
static void __attribute__((noreturn))
child_report_and_exit(struct child_report *r, const char *start, size_t npages)
{
	r->charged = my_ksm_zero_pages();
	r->mapped = range_ksm_zero_pages(start, npages);
	r->charged_after = my_ksm_zero_pages();
	_exit(r->charged < 0 || r->mapped < 0 ? 1 : 0);
}

static pid_t fork_reporter(struct child_report *r, const char *start, size_t npages)
{
	pid_t pid = fork();

	if (!pid)
		child_report_and_exit(r, start, npages);
	return pid;
}

/* Wait for a child; false unless it exited 0. */
static bool reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return false;
	return WIFEXITED(status) && !WEXITSTATUS(status);
}

/* Private anonymous memory, no THP, every page written (at addr if set). */
static char *range_map(char *addr, size_t npages, bool mergeable)
{
	size_t len = npages * pagesize;
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

/*
 * A fresh range of npages KSM zero pages (at addr if set): ksmd runs until
 * this process is charged for all of them, then stops.  NULL on failure.
 */
static char *zero_range(char *addr, size_t npages)
{
	double deadline = now() + MERGE_TIMEOUT_S;
	char *p = range_map(addr, npages, true);

	if (!p)
		return NULL;
	knob_set("run", "1");
	while (my_ksm_zero_pages() < (long)npages && now() < deadline)
		usleep(1000);
	knob_set("run", "0");
	if (my_ksm_zero_pages() != (long)npages) {
		ksft_print_msg("ksmd merged %ld of %zu zero pages\n", my_ksm_zero_pages(), npages);
		munmap(p, npages * pagesize);
		return NULL;
	}
	return p;
}

/* Learn the zero page's PFN from one page that KSM merged; false if none. */
static bool learn_zero_pfn(void)
{
	char *p = zero_range(NULL, 1);
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (p && fd >= 0)
		zero_pfn = pagemap_get_pfn(fd, p);
	if (fd >= 0)
		close(fd);
	if (p)
		munmap(p, pagesize);
	return zero_pfn != -1ul && zero_pfn;
}

/* A child's verdict: charged for exactly what it maps (told if verbose). */
static bool child_ok(const char *what, const struct child_report *r, bool verbose)
{
	if (verbose || r->charged != r->mapped)
		ksft_print_msg("%s: child's ksm_zero_pages %ld (then %ld), maps %ld\n",
			       what, r->charged, r->charged_after, r->mapped);
	if (r->charged > r->mapped)
		ksft_print_msg("%s: the child is charged %ld KSM zero pages it does not map\n",
			       what, r->charged - r->mapped);
	else if (r->charged < r->mapped)
		ksft_print_msg("%s: the child maps %ld KSM zero pages it is not charged for\n",
			       what, r->mapped - r->charged);
	return r->charged == r->mapped;
}

/* A racing thread: what it is given, and when it ran. */
struct racer {
	char *start;
	size_t npages;
	atomic_int go, started;
	atomic_long done;	/* pages the writer has written */
	double t_start, t_end;
	int err;
};

static void racer_start(struct racer *r)
{
	atomic_store(&r->go, 1);
	while (!atomic_load(&r->started))
		;
}

static void racer_wait_go(struct racer *r)
{
	while (!atomic_load(&r->go))
		;
	r->t_start = now();
	atomic_store(&r->started, 1);
}

static void *unmerge_racer(void *arg)
{
	struct racer *r = arg;

	racer_wait_go(r);
	r->err = madvise(r->start, r->npages * pagesize, MADV_UNMERGEABLE) ? errno : 0;
	r->t_end = now();
	return NULL;
}

static void *write_racer(void *arg)
{
	struct racer *r = arg;
	size_t i;

	racer_wait_go(r);
	for (i = 0; i < r->npages; i++) {
		((volatile char *)r->start)[i * pagesize] = 1;
		atomic_store_explicit(&r->done, i + 1, memory_order_relaxed);
	}
	r->t_end = now();
	return NULL;
}

/*
 * 1: fork 200 us after another thread started MADV_UNMERGEABLE of the range.
 * The race ran if fork() was entered before the unmerge returned and the
 * child maps none of the pages (its page tables were copied after it).
 */
static void test_unmerge_race(void)
{
	const size_t npages = 64 * MiB / pagesize;
	const char *what = "fork during MADV_UNMERGEABLE";
	bool ok = true, hit = false;
	struct racer r;
	pthread_t th;
	double t_fork;
	int try;
	pid_t pid;
	char *p;

	for (try = 1; try <= TRIES && ok && !hit; try++) {
		p = zero_range(NULL, npages);
		if (!p) {
			ksft_test_result_fail("%s: setup failed\n", what);
			return;
		}
		memset(&r, 0, sizeof(r));
		r.start = p;
		r.npages = npages;
		if (pthread_create(&th, NULL, unmerge_racer, &r))
			ksft_exit_fail_msg("pthread_create failed\n");
		racer_start(&r);
		usleep(200);	/* let the unmerge take the mmap lock */
		t_fork = now();
		pid = fork_reporter(report, p, npages);
		pthread_join(th, NULL);
		ok = pid > 0 && reap(pid) && !r.err;
		munmap(p, npages * pagesize);
		if (!ok) {
			ksft_test_result_fail("%s: fork or unmerge failed\n", what);
			return;
		}
		hit = report->mapped == 0 && t_fork < r.t_end;
		ksft_print_msg("try %d: unmerge took %.1f ms, fork() came %.1f ms before its end\n",
			       try, (r.t_end - r.t_start) * 1e3, (r.t_end - t_fork) * 1e3);
		ok = child_ok(what, report, true);
	}
	if (ok && !hit)
		ksft_test_result_skip("%s: the fork never landed inside the unmerge\n", what);
	else
		ksft_test_result(ok, "%s: the child is charged only what it maps\n", what);
}

/*
 * 2: fork while another thread writes to each KSM zero page in turn; 2048
 * small VMAs below the range (every other one read-only, so that they do
 * not merge) make dup_mmap() take a while before it reaches the range.  The
 * race ran if the writer wrote 1/16 of the pages between fork() and the copy.
 */
static void test_write_race(void)
{
	const size_t zpages = 16 * MiB / pagesize, spages = 8 * MiB / pagesize;
	const char *what = "fork during write faults";
	bool ok = true, hit = false;
	long at_fork, at_copy;
	char *z, *slow;
	struct racer r;
	pthread_t th;
	size_t i;
	int try;
	pid_t pid;

	for (try = 1; try <= WRITE_TRIES && ok && !hit; try++) {
		z = zero_range(NULL, zpages);
		slow = range_map(NULL, spages, false);
		if (!z || !slow) {
			ksft_test_result_fail("%s: setup failed\n", what);
			return;
		}
		for (i = 0; i < spages; i += 4)
			mprotect(slow + i * pagesize, 2 * pagesize, PROT_READ);
		if (slow > z) {
			munmap(slow, spages * pagesize);
			munmap(z, zpages * pagesize);
			ksft_test_result_skip("%s: the small VMAs are not below the range\n", what);
			return;
		}
		memset(&r, 0, sizeof(r));
		r.start = z;
		r.npages = zpages;
		if (pthread_create(&th, NULL, write_racer, &r))
			ksft_exit_fail_msg("pthread_create failed\n");
		racer_start(&r);
		at_fork = atomic_load(&r.done);
		pid = fork_reporter(report, z, zpages);
		pthread_join(th, NULL);
		ok = pid > 0 && reap(pid);
		munmap(slow, spages * pagesize);
		munmap(z, zpages * pagesize);
		if (!ok) {
			ksft_test_result_fail("%s: fork failed\n", what);
			return;
		}
		at_copy = zpages - report->mapped;
		hit = report->mapped > 0 && at_copy - at_fork >= (long)zpages / 16;
		ksft_print_msg("try %d: %ld of %zu pages written at fork(), %ld at the copy\n",
			       try, at_fork, zpages, at_copy);
		ok = child_ok(what, report, true);
	}
	if (ok && !hit)
		ksft_test_result_skip("%s: the writer never went on while fork() ran\n", what);
	else
		ksft_test_result(ok, "%s: the child is charged only what it maps\n", what);
}

/*
 * 3: children forked back to back (8 in flight, each checks itself) while
 * ksmd merges a fresh range: only a merge between dup_mm()'s copy of the
 * count and dup_mmap()'s mmap lock shows, so it takes numbers.  A child
 * whose count moved while it looked (ksmd merged it too) gives no verdict.
 */
static void test_merge_race(void)
{
	enum { INFLIGHT = 8 };
	const size_t npages = 64 * MiB / pagesize;
	const char *what = "fork during ksmd merging";
	long before[INFLIGHT], forks = 0, judged = 0, during = 0;
	pid_t pids[INFLIGHT] = { 0 };
	double t_end = now() + 10;
	bool ok = true;
	int rounds, i;
	char *p;

	for (rounds = 0; ok && now() < t_end && during < 50; rounds++) {
		p = range_map(NULL, npages, true);
		if (!p) {
			ksft_test_result_fail("%s: setup failed\n", what);
			return;
		}
		knob_set("run", "1");
		for (i = 0; ; i = (i + 1) % INFLIGHT) {
			struct child_report *r = &report[1 + i];

			if (pids[i]) {
				if (!reap(pids[i]))
					ksft_exit_fail_msg("%s: a child failed\n", what);
				pids[i] = 0;
				forks++;
				if (r->charged == r->charged_after) {
					judged++;
					during += r->mapped > before[i];
					if (!child_ok(what, r, false))
						ok = false;
				}
			}
			if (!ok || now() >= t_end || during >= 50)
				break;
			before[i] = my_ksm_zero_pages();
			if (before[i] >= (long)npages)
				break;
			pids[i] = fork_reporter(r, p, npages);
			if (pids[i] < 0)
				ksft_exit_fail_msg("%s: fork failed\n", what);
		}
		for (i = 0; i < INFLIGHT; i++)
			if (pids[i] && !reap(pids[i]))
				ksft_exit_fail_msg("%s: a child failed\n", what);
		memset(pids, 0, sizeof(pids));
		knob_set("run", "0");
		munmap(p, npages * pagesize);
	}
	ksft_print_msg("%s: %d rounds, %ld forks, %ld judged, %ld copied a fresh merge\n",
		       what, rounds, forks, judged, during);
	if (ok && !during)
		ksft_test_result_skip("%s: no fork copied a page ksmd had just merged\n", what);
	else
		ksft_test_result(ok, "%s: the child is charged every KSM zero page it maps\n",
				 what);
}

/*
 * 4: the range lies below a private writable VMA larger than RAM + swap
 * (grown with mremap(), each half within what overcommit_memory=0 lets one
 * mmap() charge): dup_mmap() copies the range, then
 * security_vm_enough_memory_mm() refuses the big VMA and fork() fails with
 * ENOMEM.  exit_mmap() of the half-built child uncharges the global counter
 * for what was copied: it must have been charged.
 */
static void test_failed_fork(void)
{
	const size_t npages = 16 * MiB / pagesize, zlen = npages * pagesize;
	const char *what = "failed fork";
	long before, after;
	size_t huge_len;
	struct sysinfo si;
	char buf[32], *base, *huge;
	pid_t pid;
	int err;

	if (read_file("/proc/sys/vm/overcommit_memory", buf, sizeof(buf)) || sysinfo(&si) ||
	    strtol(buf, NULL, 10)) {
		ksft_test_result_skip("%s: needs vm.overcommit_memory=0\n", what);
		return;
	}
	huge_len = (si.totalram + si.totalswap) * (size_t)si.mem_unit / pagesize * pagesize;
	base = mmap(NULL, zlen + pagesize + 2 * huge_len, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		ksft_test_result_skip("%s: no address space for the big VMA\n", what);
		return;
	}
	munmap(base + zlen + pagesize + huge_len, huge_len);
	huge = mmap(base + zlen + pagesize, huge_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (huge == MAP_FAILED || mremap(huge, huge_len, 2 * huge_len, 0) != huge) {
		munmap(base, zlen + pagesize + 2 * huge_len);
		ksft_test_result_skip("%s: cannot grow a VMA beyond RAM + swap\n", what);
		return;
	}
	if (!zero_range(base, npages)) {
		munmap(base, zlen + pagesize + 2 * huge_len);
		ksft_test_result_fail("%s: setup failed\n", what);
		return;
	}
	before = unexplained_ksm_zero_pages();
	pid = fork();
	if (!pid)
		_exit(0);
	err = errno;
	after = unexplained_ksm_zero_pages();
	munmap(base, zlen + pagesize + 2 * huge_len);
	if (pid > 0) {
		reap(pid);
		ksft_test_result_skip("%s: fork() succeeded\n", what);
		return;
	}
	ksft_print_msg("%s: fork(): %s; global count minus the processes' sum: %ld, then %ld\n",
		       what, strerror(err), before, after);
	ksft_test_result(err == ENOMEM && after == before,
			 "%s (ENOMEM in dup_mmap()): the global counter loses nothing\n", what);
}

int main(void)
{
	ksft_print_header();
	pagesize = psize();
	main_pid = getpid();
	if (geteuid())
		ksft_exit_skip("needs root (pagemap PFNs, the KSM knobs)\n");
	if (access(KSM_DIR "use_zero_pages", W_OK))
		ksft_exit_skip("no writable " KSM_DIR "use_zero_pages (CONFIG_KSM)\n");
	if (my_ksm_zero_pages() < 0 || global_ksm_zero_pages() < 0)
		ksft_exit_skip("the kernel does not count KSM zero pages: nothing to check\n");
	report = mmap(NULL, pagesize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (report == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	knobs_save();
	knob_set("run", "0");
	if (strcmp(knobs[1].saved, "none"))
		knob_set("advisor_mode", "none");
	knob_set("use_zero_pages", "1");
	knob_set("pages_to_scan", "4096");
	knob_set("sleep_millisecs", "0");
	knob_set("smart_scan", "0");	/* it would skip pages that did not merge */
	if (!learn_zero_pfn())
		ksft_exit_skip("ksmd put no zero page (or pagemap hides PFNs)\n");

	ksft_set_plan(4);
	test_unmerge_race();
	test_write_race();
	test_merge_race();
	test_failed_fork();
	knobs_restore();
	ksft_finished();
}
