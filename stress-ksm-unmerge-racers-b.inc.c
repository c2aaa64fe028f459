/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racers-b.inc.c: racers mrelease, fork, mprotect and
 * sparse.  #included by stress-ksm-unmerge.c just before its racer table;
 * uses only that file's helpers, stress-ng API names, libc and Linux.
 */

/* Defined further down in stress-ksm-unmerge.c */
static void stress_ksm_unmerge_lat_add(stress_ksm_unmerge_lat_t *lat, const double ms);

#if !defined(PR_SET_PDEATHSIG)
#define PR_SET_PDEATHSIG		(1)
#endif
#if !defined(MAP_NORESERVE)
#define MAP_NORESERVE			(0)
#endif

#define KSM_MRELEASE_ROUNDS		(4)		/* kill/reap rounds per cycle */
#define KSM_MRELEASE_DELAY_NS		(2000000)	/* max fork-to-kill delay */
#define KSM_MRELEASE_CHILD_SECS		(10)		/* child lifetime bound */
#define KSM_FORK_PAGES			(64)		/* KSM pages a child COWs */
#define KSM_FORK_MIN_PAGES		(4)		/* ... at least, if it can */
#define KSM_FORK_TRIES			(1024)		/* random picks per child */
#define KSM_FORK_REAP_SECS		(3.0)		/* child exit bound */
#define KSM_MPROTECT_TOGGLES		(128)		/* mprotect calls per cycle */
#define KSM_MPROTECT_MAX_PAGES		(32)		/* pages per mprotect */
#define KSM_SPARSE_DEFAULT_BYTES	(16ULL * GB)
#define KSM_SPARSE_STRIDE		(64ULL * MB)	/* one populated page per */

/* Racers implemented in this file */
#define KSM_RB_MASK	(STRESS_BIT_ULL(KSM_RACER_IDX_MRELEASE) |	\
			 STRESS_BIT_ULL(KSM_RACER_IDX_FORK) |		\
			 STRESS_BIT_ULL(KSM_RACER_IDX_MPROTECT) |	\
			 STRESS_BIT_ULL(KSM_RACER_IDX_SPARSE))

/*
 *  stress_ksm_unmerge_b_others()
 *	racers from outside this file run: they may discard pages, which
 *	then read back (or merge) as zero-filled pages until refilled
 */
static inline bool stress_ksm_unmerge_b_others(const stress_ksm_unmerge_ctx_t *ctx)
{
	return (ctx->racers_mask & ~KSM_RB_MASK) != 0;
}

/*
 *  stress_ksm_unmerge_b_is_zero()
 *	pure: is the page all zero bytes
 */
static bool stress_ksm_unmerge_b_is_zero(const uint8_t *page, const size_t len)
{
	const uint64_t *p = (const uint64_t *)page;
	size_t w;

	for (w = 0; w < len / sizeof(uint64_t); w++)
		if (p[w])
			return false;
	return true;
}

/*
 *  stress_ksm_unmerge_b_pattern_bad()
 *	byte offset of the first wrong byte of region page i at page, -1 if it
 *	holds the pattern or is a zero page another racer's discard explains
 */
static ssize_t stress_ksm_unmerge_b_pattern_bad(const stress_ksm_unmerge_ctx_t *ctx,
	const size_t i, const uint8_t *page)
{
	const ssize_t off = stress_ksm_unmerge_page_check(ctx, i, page);

	if (off >= 0 && stress_ksm_unmerge_b_others(ctx) &&
	    stress_ksm_unmerge_b_is_zero(page, ctx->page_size))
		return -1;
	return off;
}

/*
 *  stress_ksm_unmerge_b_now_ns()
 *	CLOCK_MONOTONIC in nanoseconds
 */
static uint64_t stress_ksm_unmerge_b_now_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 *  stress_ksm_unmerge_b_entry_ksm()
 *	pure: does pagemap entry e (kpageflags flags) map a KSM page or KSM zero page
 */
static bool stress_ksm_unmerge_b_entry_ksm(const uint64_t e, const uint64_t flags,
	const uint64_t zero_pfn)
{
	if (!(e & PM_PRESENT))
		return false;
	if (zero_pfn && ((e & PM_PFN_MASK) == zero_pfn))
		return true;
	return !!(flags & STRESS_BIT_ULL(KPF_BIT_KSM));
}

/*
 *  stress_ksm_unmerge_b_page_ksm()
 *	is region page i (pagemap entry e, kpageflags flags) a KSM page; the
 *	shared zero page only counts as a KSM zero page where the pattern puts
 *	zero pages (elsewhere it is a discarded page read back)
 */
static bool stress_ksm_unmerge_b_page_ksm(const stress_ksm_unmerge_ctx_t *ctx, const size_t i,
	const uint64_t e, const uint64_t flags)
{
	if ((e & PM_PRESENT) && ctx->zero_pfn && ((e & PM_PFN_MASK) == ctx->zero_pfn))
		return stress_ksm_unmerge_page_kind(ctx->pattern, i) == KSM_KIND_ZERO;
	return stress_ksm_unmerge_b_entry_ksm(e, flags, ctx->zero_pfn);
}

/*
 *  stress_ksm_unmerge_b_unshared()
 *	pure: page that mapped KSM pfn_before now maps e_after (flags_after):
 *	1 unshared (a new private page), 0 not present or another racer's
 *	zero page (inconclusive), -1 still the same pfn or another KSM page
 */
static int stress_ksm_unmerge_b_unshared(const uint64_t pfn_before, const uint64_t e_after,
	const uint64_t flags_after, const uint64_t zero_pfn)
{
	if (!(e_after & PM_PRESENT))
		return 0;
	if ((e_after & PM_PFN_MASK) == pfn_before)
		return -1;
	/* discarded by another racer and read back: the shared zero page */
	if (zero_pfn && ((e_after & PM_PFN_MASK) == zero_pfn))
		return 0;
	if (stress_ksm_unmerge_b_entry_ksm(e_after, flags_after, zero_pfn))
		return -1;
	return 1;
}

/*
 *  stress_ksm_unmerge_b_lookup()
 *	pagemap entry (via pm_fd) and kpageflags word of the page at addr
 */
static int stress_ksm_unmerge_b_lookup(const stress_ksm_unmerge_ctx_t *ctx, const int pm_fd,
	const void *addr, uint64_t *e, uint64_t *flags)
{
	*e = 0;
	*flags = 0;
	if (stress_ksm_unmerge_pagemap_read(pm_fd, addr, 1, ctx->page_size, e) < 0)
		return -1;
	if ((*e & PM_PRESENT) && (*e & PM_PFN_MASK))
		*flags = stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, *e & PM_PFN_MASK);
	return 0;
}

/*
 *  stress_ksm_unmerge_b_keep_going()
 *	racer thread: false (after a short sleep) once the run is ending; the
 *	thread must still park for a cycle that verifies after the end of the
 *	run, so it loops on racers_stop, not on stress_continue()
 */
static bool stress_ksm_unmerge_b_keep_going(stress_ksm_unmerge_ctx_t *ctx)
{
	if (stress_ksm_unmerge_racer_running(ctx))
		return true;
	(void)shim_nanosleep_uint64(1000000);
	return false;
}

/*
 *  stress_ksm_unmerge_b_vma_flags()
 *	diagnostics: range and VmFlags (with "mg") of the VMA holding addr
 */
static void stress_ksm_unmerge_b_vma_flags(const void *addr, char *out, const size_t len)
{
	const unsigned long a = (unsigned long)(uintptr_t)addr;
	char line[512];
	bool in_vma = false;
	FILE *fp;

	(void)snprintf(out, len, "VMA not found");
	fp = fopen("/proc/self/smaps", "re");
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in_vma = (a >= lo && a < hi);
			if (in_vma)
				(void)snprintf(out, len, "%lx-%lx", lo, hi);
			continue;
		}
		if (in_vma && !strncmp(line, "VmFlags:", 8)) {
			line[strcspn(line, "\n")] = '\0';
			(void)strlcat(out, line + 8, len);
			break;
		}
	}
	(void)fclose(fp);
}

/*
 *  stress_ksm_unmerge_b_child_init()
 *	racer child: die with the forking thread, be the OOM killer's first pick
 */
static int stress_ksm_unmerge_b_child_init(stress_ksm_unmerge_ctx_t *ctx, const pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return -1;
	if (getppid() != parent) {
		errno = ESRCH;
		return -1;
	}
	stress_set_oom_adjustment(ctx->args, true);
	return 0;
}

/*
 *  stress_ksm_unmerge_b_child_rw()
 *	racer child: make its own copy of the region writable (mprotect racer)
 */
static int stress_ksm_unmerge_b_child_rw(stress_ksm_unmerge_ctx_t *ctx)
{
	return mprotect(ctx->region, ctx->region_size, PROT_READ | PROT_WRITE);
}

/*
 *  stress_ksm_unmerge_b_reap()
 *	wait for child pid up to secs (0: no bound), then SIGKILL it;
 *	returns 1 if it had to be killed, 0 reaped, -1 waitpid error
 */
static int stress_ksm_unmerge_b_reap(const pid_t pid, const double secs, int *status)
{
	const double deadline = stress_time_now() + secs;
	pid_t ret;

	*status = 0;
	if (secs <= 0.0)
		return (shim_waitpid(pid, status, 0) == pid) ? 0 : -1;
	for (;;) {
		ret = waitpid(pid, status, WNOHANG);
		if (ret == pid)
			return 0;
		if ((ret < 0) && (errno != EINTR))
			return -1;
		if (stress_time_now() > deadline)
			break;
		(void)shim_nanosleep_uint64(500000);
	}
	(void)shim_kill(pid, SIGKILL);
	return (shim_waitpid(pid, status, 0) == pid) ? 1 : -1;
}

/* ---------------------------------------------------------------------
 *  mrelease: a forked child holding the merged region (break_ksm in the
 *  child, or COW writes) is SIGKILLed through a pidfd and reaped at once
 *  with process_mrelease, racing __oom_reap_task_mm with exit_mmap.
 * --------------------------------------------------------------------- */

enum {
	KSM_MRELEASE_REAPED = 0,	/* process_mrelease returned 0 */
	KSM_MRELEASE_GONE,		/* ESRCH: victim already past exit_mm() */
	KSM_MRELEASE_FAIL,		/* anything else */
};

/* mrelease racer state (racer thread only) */
typedef struct {
	uint64_t cycle;			/* cycle the rounds are counted for */
	uint32_t rounds;		/* rounds done in that cycle */
	pid_t pid;			/* live child, 0 if none */
} stress_ksm_unmerge_mrelease_t;

/*
 *  stress_ksm_unmerge_mrelease_judge()
 *	pure: classify a process_mrelease return (ret, errno err)
 */
static int stress_ksm_unmerge_mrelease_judge(const int ret, const int err)
{
	if (ret == 0)
		return KSM_MRELEASE_REAPED;
	if (ret < 0 && err == ESRCH)
		return KSM_MRELEASE_GONE;
	return KSM_MRELEASE_FAIL;
}

/*
 *  stress_ksm_unmerge_mrelease_status_ok()
 *	pure: a victim must die by our SIGKILL (or exit 0 after its bound)
 */
static bool stress_ksm_unmerge_mrelease_status_ok(const int status)
{
	if (WIFSIGNALED(status))
		return WTERMSIG(status) == SIGKILL;
	return WIFEXITED(status) && (WEXITSTATUS(status) == 0);
}

/*
 *  stress_ksm_unmerge_mrelease_child()
 *	victim: unmerge its copy (mode 0) or COW-write every page (mode 1),
 *	then wait to be killed; exit status is the errno of a failed call
 */
static void NORETURN stress_ksm_unmerge_mrelease_child(stress_ksm_unmerge_ctx_t *ctx,
	const pid_t parent, const int mode)
{
	size_t i;

	if (stress_ksm_unmerge_b_child_init(ctx, parent) < 0)
		_exit(errno ? errno : 1);
	if (mode == 0) {
		if (madvise(ctx->region, ctx->region_size, MADV_UNMERGEABLE) < 0)
			_exit(errno ? errno : 1);
	} else {
		if (stress_ksm_unmerge_b_child_rw(ctx) < 0)
			_exit(errno ? errno : 1);
		for (i = 0; i < ctx->npages; i++) {
			volatile uint8_t *p = ctx->region + i * ctx->page_size;

			*p = *p;	/* same byte: COW without changing data */
		}
	}
	for (i = 0; i < KSM_MRELEASE_CHILD_SECS * 100; i++)
		(void)shim_nanosleep_uint64(10000000);
	_exit(0);
}

/*
 *  stress_ksm_unmerge_mrelease_fail()
 *	count a racer failure and say why
 */
static void stress_ksm_unmerge_mrelease_fail(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const char *what, const int err)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);

	rs->failures++;
	pr_fail("%s: mrelease racer: %s, errno=%d (%s)\n", ctx->args->name, what, err, strerror(err));
}

/*
 *  stress_ksm_unmerge_mrelease_status()
 *	check how the victim ended
 */
static void stress_ksm_unmerge_mrelease_status(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const int status)
{
	if (stress_ksm_unmerge_mrelease_status_ok(status))
		return;
	if (WIFEXITED(status))
		stress_ksm_unmerge_mrelease_fail(ctx, idx, "victim's setup, MADV_UNMERGEABLE "
			"or mprotect failed (exit status is its errno)", WEXITSTATUS(status));
	else
		stress_ksm_unmerge_mrelease_fail(ctx, idx, "victim died by an unexpected signal",
			WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/*
 *  stress_ksm_unmerge_mrelease_kill()
 *	SIGKILL the victim via its pidfd, process_mrelease at once, reap;
 *	latency: kill to mrelease return (0) or to waitpid return (ESRCH)
 */
static void stress_ksm_unmerge_mrelease_kill(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const int pidfd, const pid_t pid)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	uint64_t t0, t1, t2;
	int ret, err, status, verdict;

	t0 = stress_ksm_unmerge_b_now_ns();
	if (shim_pidfd_send_signal(pidfd, SIGKILL, NULL, 0) < 0) {
		err = errno;
		(void)shim_kill(pid, SIGKILL);
		(void)stress_ksm_unmerge_b_reap(pid, 0.0, &status);
		stress_ksm_unmerge_mrelease_fail(ctx, idx, "pidfd_send_signal SIGKILL failed", err);
		return;
	}
	ret = shim_process_mrelease(pidfd, 0);
	err = errno;
	t1 = stress_ksm_unmerge_b_now_ns();
	if (stress_ksm_unmerge_b_reap(pid, 0.0, &status) < 0) {
		stress_ksm_unmerge_mrelease_fail(ctx, idx, "waitpid on the victim failed", errno);
		return;
	}
	t2 = stress_ksm_unmerge_b_now_ns();
	rs->ops++;
	verdict = stress_ksm_unmerge_mrelease_judge(ret, err);
	if (verdict == KSM_MRELEASE_REAPED) {
		rs->evidence++;
		stress_ksm_unmerge_lat_add(&ctx->st->mrelease_lat, (double)(t1 - t0) / 1.0E6);
	} else if (verdict == KSM_MRELEASE_GONE) {
		rs->aux++;
		stress_ksm_unmerge_lat_add(&ctx->st->mrelease_lat, (double)(t2 - t0) / 1.0E6);
	} else if (!(err == EINTR && !stress_ksm_unmerge_racer_running(ctx))) {
		stress_ksm_unmerge_mrelease_fail(ctx, idx, "process_mrelease on a SIGKILLed victim "
			"failed (expected 0 or ESRCH)", err);
	}
	stress_ksm_unmerge_mrelease_status(ctx, idx, status);
}

/*
 *  stress_ksm_unmerge_mrelease_round()
 *	fork a victim sharing the merged pages, wait 0-2 ms, kill and reap it
 */
static void stress_ksm_unmerge_mrelease_round(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_mrelease_t *m)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const pid_t parent = getpid();
	int pidfd, status, err;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "fork failed, errno=%d (%s)",
			errno, strerror(errno));
		(void)shim_nanosleep_uint64(10000000);
		return;
	}
	if (pid == 0)
		stress_ksm_unmerge_mrelease_child(ctx, parent, (int)(m->rounds & 1));
	m->pid = pid;
	pidfd = shim_pidfd_open(pid, 0);
	if (pidfd < 0) {
		err = errno;
		(void)shim_kill(pid, SIGKILL);
		(void)stress_ksm_unmerge_b_reap(pid, 0.0, &status);
		m->pid = 0;
		stress_ksm_unmerge_mrelease_fail(ctx, idx, "pidfd_open of the victim failed", err);
		return;
	}
	(void)shim_nanosleep_uint64(stress_mwc32modn(KSM_MRELEASE_DELAY_NS + 1));
	stress_ksm_unmerge_mrelease_kill(ctx, idx, pidfd, pid);
	(void)close(pidfd);
	m->pid = 0;
}

/*
 *  stress_ksm_unmerge_mrelease_thread()
 *	racer: a few kill/reap rounds per cycle while merged and unmerging
 */
static void *stress_ksm_unmerge_mrelease_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_MRELEASE;
	stress_ksm_unmerge_mrelease_t *m = (stress_ksm_unmerge_mrelease_t *)ctx->run[idx].priv;

	while (!ctx->racers_stop) {
		const int phase = ctx->phase;

		if (ctx->quiesce) {
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (!stress_ksm_unmerge_b_keep_going(ctx))
			continue;
		if (m->cycle != ctx->cycle) {
			m->cycle = ctx->cycle;
			m->rounds = 0;
		}
		if ((phase == KSM_PHASE_MERGED || phase == KSM_PHASE_UNMERGING) &&
		    (m->rounds < KSM_MRELEASE_ROUNDS)) {
			stress_ksm_unmerge_mrelease_round(ctx, idx, m);
			m->rounds++;
			continue;
		}
		(void)shim_nanosleep_uint64(100000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_mrelease_supported()
 *	needs pidfd_open and process_mrelease (Linux 5.15)
 */
static int stress_ksm_unmerge_mrelease_supported(char *reason, const size_t len)
{
	int fd;

	fd = shim_pidfd_open(getpid(), 0);
	if (fd < 0) {
		(void)snprintf(reason, len, "pidfd_open failed, errno=%d (%s)%s", errno, strerror(errno),
			errno == ENOSYS ? ", needs Linux 5.3" : "");
		return -1;
	}
	(void)close(fd);
	if ((shim_process_mrelease(-1, 0) < 0) && (errno == ENOSYS)) {
		(void)snprintf(reason, len, "process_mrelease not implemented (ENOSYS), needs Linux 5.15");
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_mrelease_start()
 *	state and thread
 */
static int stress_ksm_unmerge_mrelease_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_mrelease_t *m = calloc(1, sizeof(*m));

	if (!m) {
		(void)snprintf(ctx->st->racer[idx].reason, sizeof(ctx->st->racer[idx].reason),
			"out of memory for racer state");
		return -1;
	}
	ctx->run[idx].priv = m;
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_mrelease_thread) < 0) {
		free(m);
		ctx->run[idx].priv = NULL;
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_mrelease_stop()
 *	join the thread; kill and reap a victim it left (it never should)
 */
static void stress_ksm_unmerge_mrelease_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_mrelease_t *m = (stress_ksm_unmerge_mrelease_t *)ctx->run[idx].priv;
	int status;

	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	if (m && m->pid > 0) {
		(void)shim_kill(m->pid, SIGKILL);
		(void)stress_ksm_unmerge_b_reap(m->pid, 0.0, &status);
	}
	free(m);
	ctx->run[idx].priv = NULL;
}

#define KSM_RACER_MRELEASE { "mrelease", "process_mrelease vs exit_mmap of KSM memory", \
	"mrelease-reaps", stress_ksm_unmerge_mrelease_supported, \
	stress_ksm_unmerge_mrelease_start, stress_ksm_unmerge_mrelease_stop, NULL, NULL }

/* ---------------------------------------------------------------------
 *  fork: a child forked at MERGED writes to pages that are KSM pages in
 *  its own pagemap (COW of KSM pages, cow_ksm) while the parent goes on
 *  to unmerge the same pages; reaped at VERIFY, parent copy checked.
 * --------------------------------------------------------------------- */

enum {
	KSM_FORK_OK = 0,
	KSM_FORK_FAIL_SETUP,		/* prctl/getppid/mprotect/pagemap open */
	KSM_FORK_FAIL_PAGEMAP,		/* pagemap read */
	KSM_FORK_FAIL_SHARED,		/* KSM page held wrong data before the write */
	KSM_FORK_FAIL_NOCOW,		/* write to a KSM page did not get a private page */
	KSM_FORK_FAIL_WRITE,		/* the child's write did not read back */
	KSM_FORK_FAIL_NEIGHBOUR,	/* a neighbouring KSM page changed */
};

/* Shared between the parent and its fork child */
typedef struct {
	volatile uint32_t n;		/* KSM pages COWed and verified */
	volatile uint32_t tried;	/* KSM pages the child wrote */
	volatile int fail;		/* KSM_FORK_FAIL_*, first failure */
	volatile int err;		/* its errno */
	volatile uint64_t page;		/* its page index */
	volatile int64_t off;		/* its byte offset */
	volatile uint64_t pfn[2];	/* pfn before/after for NOCOW */
	volatile uint64_t pages[KSM_FORK_PAGES];	/* pages COWed */
} stress_ksm_unmerge_fork_shared_t;

/* fork racer state (main thread only) */
typedef struct {
	pid_t pid;			/* live child, 0 if none */
	stress_ksm_unmerge_fork_shared_t *sh;
} stress_ksm_unmerge_fork_t;

static const char * const stress_ksm_unmerge_fork_fail_names[] = {
	"ok",
	"child setup failed",
	"child pagemap read failed",
	"KSM page held wrong data before the child's write",
	"child's write to a KSM page did not get a private copy",
	"child's write did not read back",
	"neighbouring KSM page changed by the child's write",
};

/*
 *  stress_ksm_unmerge_fork_word()
 *	word w the fork child writes into page i
 */
static inline uint64_t stress_ksm_unmerge_fork_word(const size_t i, const size_t w)
{
	return 0xf04b636f77000000ULL ^ ((uint64_t)i << 20) ^ (uint64_t)w;
}

/*
 *  stress_ksm_unmerge_fork_fill()
 *	child: write the child pattern into page i
 */
static void stress_ksm_unmerge_fork_fill(uint8_t *page, const size_t page_size, const size_t i)
{
	uint64_t *p = (uint64_t *)page;
	size_t w;

	for (w = 0; w < page_size / sizeof(uint64_t); w++)
		p[w] = stress_ksm_unmerge_fork_word(i, w);
}

/*
 *  stress_ksm_unmerge_fork_written_check()
 *	pure: byte offset of the first wrong word of the child's page i, -1 if intact
 */
static ssize_t stress_ksm_unmerge_fork_written_check(const uint8_t *page, const size_t page_size,
	const size_t i)
{
	const uint64_t *p = (const uint64_t *)page;
	size_t w;

	for (w = 0; w < page_size / sizeof(uint64_t); w++)
		if (p[w] != stress_ksm_unmerge_fork_word(i, w))
			return (ssize_t)(w * sizeof(uint64_t));
	return -1;
}

/*
 *  stress_ksm_unmerge_fork_parent_check()
 *	pure: the parent's copies of the pages the child COWed still hold the
 *	pattern; index into pages[] of the first bad one (*off its byte), -1 if all good
 */
static ssize_t stress_ksm_unmerge_fork_parent_check(const stress_ksm_unmerge_ctx_t *ctx,
	const volatile uint64_t *pages, const size_t n, ssize_t *off)
{
	size_t k;

	*off = -1;
	for (k = 0; k < n; k++) {
		const size_t i = (size_t)pages[k];

		if (i >= ctx->npages) {
			*off = 0;
			return (ssize_t)k;
		}
		*off = stress_ksm_unmerge_page_check(ctx, i, ctx->region + i * ctx->page_size);
		if (*off >= 0)
			return (ssize_t)k;
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_fork_child_fail()
 *	child: record the first failure for the parent to report
 */
static int stress_ksm_unmerge_fork_child_fail(stress_ksm_unmerge_fork_shared_t *sh, const int fail,
	const int err, const size_t i, const ssize_t off)
{
	if (sh->fail == KSM_FORK_OK) {
		sh->err = err;
		sh->page = i;
		sh->off = off;
		sh->fail = fail;
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_fork_neighbours()
 *	child: pages next to i that are KSM pages in the child hold the pattern
 */
static int stress_ksm_unmerge_fork_neighbours(stress_ksm_unmerge_ctx_t *ctx, const int pm_fd,
	stress_ksm_unmerge_fork_shared_t *sh, const size_t i)
{
	const size_t js[2] = { i - 1, i + 1 };
	size_t k;

	for (k = 0; k < 2; k++) {
		const size_t j = js[k];
		const uint8_t *page = ctx->region + j * ctx->page_size;
		uint64_t e, flags;
		ssize_t off;

		if (j >= ctx->npages)	/* i - 1 wraps for i = 0 */
			continue;
		if (stress_ksm_unmerge_b_lookup(ctx, pm_fd, page, &e, &flags) < 0)
			return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_PAGEMAP, errno, j, -1);
		if (!stress_ksm_unmerge_b_page_ksm(ctx, j, e, flags))
			continue;
		off = stress_ksm_unmerge_b_pattern_bad(ctx, j, page);
		if (off >= 0)
			return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_NEIGHBOUR, 0, j, off);
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_fork_cow_one()
 *	child: if page i is a KSM page here, check it, write it (COW), check the
 *	new private copy, the write and the neighbours; 1 COWed, 0 skipped, -1 failed
 */
static int stress_ksm_unmerge_fork_cow_one(stress_ksm_unmerge_ctx_t *ctx, const int pm_fd,
	stress_ksm_unmerge_fork_shared_t *sh, const size_t i)
{
	uint8_t *page = ctx->region + i * ctx->page_size;
	uint64_t e0, f0, e1, f1;
	ssize_t off;

	if (stress_ksm_unmerge_b_lookup(ctx, pm_fd, page, &e0, &f0) < 0)
		return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_PAGEMAP, errno, i, -1);
	if (!stress_ksm_unmerge_b_page_ksm(ctx, i, e0, f0))
		return 0;
	if (stress_ksm_unmerge_page_check(ctx, i, page) >= 0) {
		off = stress_ksm_unmerge_b_pattern_bad(ctx, i, page);
		if (off >= 0)
			return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_SHARED, 0, i, off);
		return 0;	/* zero-filled by another racer's discard: not ours to COW */
	}
	sh->tried++;
	stress_ksm_unmerge_fork_fill(page, ctx->page_size, i);
	if (stress_ksm_unmerge_b_lookup(ctx, pm_fd, page, &e1, &f1) < 0)
		return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_PAGEMAP, errno, i, -1);
	if (stress_ksm_unmerge_b_unshared(e0 & PM_PFN_MASK, e1, f1, ctx->zero_pfn) <= 0) {
		sh->pfn[0] = e0 & PM_PFN_MASK;
		sh->pfn[1] = e1 & PM_PFN_MASK;
		return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_NOCOW, 0, i, -1);
	}
	off = stress_ksm_unmerge_fork_written_check(page, ctx->page_size, i);
	if (off >= 0)
		return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_WRITE, 0, i, off);
	if (stress_ksm_unmerge_fork_neighbours(ctx, pm_fd, sh, i) < 0)
		return -1;
	sh->pages[sh->n] = i;
	sh->n++;
	return 1;
}

/*
 *  stress_ksm_unmerge_fork_child()
 *	child: COW up to KSM_FORK_PAGES random KSM pages while the parent unmerges
 */
static void NORETURN stress_ksm_unmerge_fork_child(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_fork_shared_t *sh, const pid_t parent)
{
	int pm_fd, tries;

	if ((stress_ksm_unmerge_b_child_init(ctx, parent) < 0) ||
	    (stress_ksm_unmerge_b_child_rw(ctx) < 0)) {
		(void)stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_SETUP, errno, 0, -1);
		_exit(EXIT_FAILURE);
	}
	pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pm_fd < 0) {
		(void)stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_SETUP, errno, 0, -1);
		_exit(EXIT_FAILURE);
	}
	stress_mwc_reseed();
	for (tries = 0; (tries < KSM_FORK_TRIES) && (sh->n < KSM_FORK_PAGES); tries++) {
		const int phase = ctx->st->phase;
		size_t i;

		if ((sh->n >= KSM_FORK_MIN_PAGES) &&
		    ((phase == KSM_PHASE_VERIFY) || (phase == KSM_PHASE_IDLE)))
			break;
		if (!stress_continue(ctx->args))
			break;
		i = stress_mwc32modn((uint32_t)ctx->npages);
		if (stress_ksm_unmerge_fork_cow_one(ctx, pm_fd, sh, i) < 0)
			break;
		(void)shim_nanosleep_uint64(stress_mwc32modn(100000));
	}
	(void)close(pm_fd);
	_exit(sh->fail == KSM_FORK_OK ? EXIT_SUCCESS : EXIT_FAILURE);
}

/*
 *  stress_ksm_unmerge_fork_spawn()
 *	MERGED hook: fork the child that COWs KSM pages
 */
static void stress_ksm_unmerge_fork_spawn(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_fork_t *f)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const pid_t parent = getpid();
	pid_t pid;

	if (f->pid > 0)
		return;
	(void)memset((void *)f->sh, 0, sizeof(*f->sh));
	pid = fork();
	if (pid < 0) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "fork failed, errno=%d (%s)",
			errno, strerror(errno));
		return;
	}
	if (pid == 0)
		stress_ksm_unmerge_fork_child(ctx, f->sh, parent);
	f->pid = pid;
}

/*
 *  stress_ksm_unmerge_fork_report()
 *	parent: report a failure the child recorded
 */
static void stress_ksm_unmerge_fork_report(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const stress_ksm_unmerge_fork_shared_t *sh)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const int fail = sh->fail;
	const char *what = (fail > 0 && (size_t)fail < SIZEOF_ARRAY(stress_ksm_unmerge_fork_fail_names)) ?
		stress_ksm_unmerge_fork_fail_names[fail] : "unknown failure";

	rs->failures++;
	if (fail == KSM_FORK_FAIL_NOCOW)
		pr_fail("%s: fork racer: %s: page %" PRIu64 " pfn %#" PRIx64 " -> %#" PRIx64 "\n",
			ctx->args->name, what, sh->page, sh->pfn[0], sh->pfn[1]);
	else if (sh->off >= 0)
		pr_fail("%s: fork racer: %s: page %" PRIu64 " byte %" PRId64 " (pattern %s)\n",
			ctx->args->name, what, sh->page, sh->off, stress_ksm_unmerge_patterns[ctx->pattern]);
	else
		pr_fail("%s: fork racer: %s, page %" PRIu64 ", errno=%d (%s)\n",
			ctx->args->name, what, sh->page, sh->err, strerror(sh->err));
}

/*
 *  stress_ksm_unmerge_fork_reap()
 *	VERIFY hook: bounded wait for the child, count its COWs, report failures
 */
static void stress_ksm_unmerge_fork_reap(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_fork_t *f)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	int status, ret;

	if (f->pid <= 0)
		return;
	ret = stress_ksm_unmerge_b_reap(f->pid, KSM_FORK_REAP_SECS, &status);
	f->pid = 0;
	rs->ops++;
	rs->evidence += f->sh->n;
	if (f->sh->fail != KSM_FORK_OK) {
		stress_ksm_unmerge_fork_report(ctx, idx, f->sh);
	} else if (ret < 0) {
		rs->failures++;
		pr_fail("%s: fork racer: waitpid on the child failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
	} else if (ret > 0 && stress_continue(ctx->args)) {
		rs->failures++;
		pr_fail("%s: fork racer: child did not exit within %.0f s after %" PRIu32
			" COW writes, killed\n", ctx->args->name, KSM_FORK_REAP_SECS, f->sh->tried);
	} else if (ret == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0) &&
		   !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && !stress_continue(ctx->args))) {
		rs->failures++;
		pr_fail("%s: fork racer: child ended with wait status %#x\n", ctx->args->name, status);
	}
}

/*
 *  stress_ksm_unmerge_fork_check()
 *	IDLE hook, racers parked: the parent's copies of COWed pages are intact
 */
static void stress_ksm_unmerge_fork_check(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_fork_t *f)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const size_t n = f->sh->n < KSM_FORK_PAGES ? f->sh->n : KSM_FORK_PAGES;
	ssize_t k, off;

	if (ctx->quiesce != ctx->cycle)
		goto done;	/* racers not parked (error path): data may be in flux */
	k = stress_ksm_unmerge_fork_parent_check(ctx, f->sh->pages, n, &off);
	if (k >= 0) {
		const size_t i = (size_t)f->sh->pages[k];

		rs->failures++;
		pr_fail("%s: fork racer: parent page %zu changed by the child's COW write: "
			"byte %zd is 0x%02x (pattern %s)\n", ctx->args->name, i, off,
			i < ctx->npages ? ctx->region[i * ctx->page_size + (size_t)off] : 0,
			stress_ksm_unmerge_patterns[ctx->pattern]);
	}
done:
	f->sh->n = 0;
}

/*
 *  stress_ksm_unmerge_fork_cycle()
 *	fork at MERGED, reap at VERIFY, check the parent's pages at IDLE
 */
static void stress_ksm_unmerge_fork_cycle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const int phase)
{
	stress_ksm_unmerge_fork_t *f = (stress_ksm_unmerge_fork_t *)ctx->run[idx].priv;

	if (!f)
		return;
	switch (phase) {
	case KSM_PHASE_MERGED:
		stress_ksm_unmerge_fork_spawn(ctx, idx, f);
		break;
	case KSM_PHASE_VERIFY:
		stress_ksm_unmerge_fork_reap(ctx, idx, f);
		break;
	case KSM_PHASE_IDLE:
		stress_ksm_unmerge_fork_reap(ctx, idx, f);
		stress_ksm_unmerge_fork_check(ctx, idx, f);
		break;
	default:
		break;
	}
}

/*
 *  stress_ksm_unmerge_fork_supported()
 *	fork and pagemap are always there
 */
static int stress_ksm_unmerge_fork_supported(char *reason, const size_t len)
{
	(void)reason;
	(void)len;
	return 0;
}

/*
 *  stress_ksm_unmerge_fork_start()
 *	state and the page list shared with the child
 */
static int stress_ksm_unmerge_fork_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	stress_ksm_unmerge_fork_t *f;

	if (!ctx->have_pfns) {
		(void)snprintf(rs->reason, sizeof(rs->reason),
			"pagemap PFNs not readable (needs CAP_SYS_ADMIN): child cannot see KSM pages");
		return -1;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "out of memory for racer state");
		return -1;
	}
	f->sh = mmap(NULL, sizeof(*f->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (f->sh == MAP_FAILED) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "mmap of shared page list failed, "
			"errno=%d (%s)", errno, strerror(errno));
		free(f);
		return -1;
	}
	ctx->run[idx].priv = f;
	return 0;
}

/*
 *  stress_ksm_unmerge_fork_stop()
 *	kill and reap a child still running, unmap, free
 */
static void stress_ksm_unmerge_fork_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_fork_t *f = (stress_ksm_unmerge_fork_t *)ctx->run[idx].priv;
	int status;

	if (!f)
		return;
	if (f->pid > 0) {
		(void)shim_kill(f->pid, SIGKILL);
		(void)stress_ksm_unmerge_b_reap(f->pid, 0.0, &status);
		f->pid = 0;
	}
	(void)munmap((void *)f->sh, sizeof(*f->sh));
	free(f);
	ctx->run[idx].priv = NULL;
}

#define KSM_RACER_FORK { "fork", "COW of KSM pages in forked children", \
	"ksm-cow-writes", stress_ksm_unmerge_fork_supported, \
	stress_ksm_unmerge_fork_start, stress_ksm_unmerge_fork_stop, stress_ksm_unmerge_fork_cycle, NULL }

/* ---------------------------------------------------------------------
 *  mprotect: a thread toggles PROT_NONE / PROT_READ / PROT_READ|WRITE on
 *  ranges of the region while it merges and unmerges (VMAs split and
 *  merge); KSM pages that are protected when the unmerge starts must be
 *  unshared by it.  Protections are restored in the VERIFY hook, before
 *  any racer parks (and writes).
 * --------------------------------------------------------------------- */

enum {
	KSM_PROT_RW = 0,
	KSM_PROT_READ,
	KSM_PROT_NONE,
};

/* mprotect racer state, shared by its thread and the hooks under lock */
typedef struct {
	pthread_mutex_t lock;
	uint8_t *prot;			/* per page: KSM_PROT_* */
	uint64_t *snap;			/* per page: KSM pfn protected at unmerge start, 0 none */
	uint64_t *pm;			/* pagemap scratch */
	size_t *list;			/* snapshot page indexes */
	uint64_t *flags;		/* their kpageflags after the unmerge */
	uint8_t *mg;			/* per snapshot page: VMA was VM_MERGEABLE */
	size_t nsnap;			/* snapshot pages */
	size_t nprot;			/* pages not RW */
	uint32_t toggles;		/* mprotect calls this cycle */
	bool frozen;			/* VERIFY..MERGING: no toggling */
} stress_ksm_unmerge_mprotect_t;

static const int stress_ksm_unmerge_prots[] = {
	PROT_READ | PROT_WRITE, PROT_READ, PROT_NONE,
};

/*
 *  stress_ksm_unmerge_mprotect_tally()
 *	pure: for n snapshot pages (KSM pfns before, entries and kpageflags after)
 *	count the unshared ones; index of the first still shared in *bad (-1 none)
 */
static uint64_t stress_ksm_unmerge_mprotect_tally(const uint64_t *pfn_before, const uint64_t *after,
	const uint64_t *flags_after, const size_t n, const uint64_t zero_pfn, ssize_t *bad)
{
	uint64_t unshared = 0;
	size_t k;

	*bad = -1;
	for (k = 0; k < n; k++) {
		const int v = stress_ksm_unmerge_b_unshared(pfn_before[k], after[k], flags_after[k], zero_pfn);

		if (v > 0)
			unshared++;
		else if (v < 0 && *bad < 0)
			*bad = (ssize_t)k;
	}
	return unshared;
}

/*
 *  stress_ksm_unmerge_mprotect_window()
 *	first page of the part of the region the racer protects: the last
 *	quarter, so racers that read or write region pages directly (and
 *	would fault on PROT_NONE) can be kept out of it
 */
static size_t stress_ksm_unmerge_mprotect_window(const stress_ksm_unmerge_ctx_t *ctx)
{
	const size_t quarter = ctx->npages / 4;

	return ctx->npages - (quarter ? quarter : 1);
}

/*
 *  stress_ksm_unmerge_mprotect_restore()
 *	(lock held) everything back to PROT_READ|PROT_WRITE
 */
static int stress_ksm_unmerge_mprotect_restore(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_mprotect_t *mp)
{
	if (!mp->nprot)
		return 0;
	if (mprotect(ctx->region, ctx->region_size, PROT_READ | PROT_WRITE) < 0)
		return -1;
	(void)memset(mp->prot, KSM_PROT_RW, ctx->npages);
	mp->nprot = 0;
	return 0;
}

/*
 *  stress_ksm_unmerge_mprotect_one()
 *	(thread) one mprotect of 1..32 random pages to a random protection;
 *	pages in the unmerge snapshot are left alone
 */
static void stress_ksm_unmerge_mprotect_one(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_mprotect_t *mp)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const size_t wfirst = stress_ksm_unmerge_mprotect_window(ctx);
	const size_t wsize = ctx->npages - wfirst;
	const size_t n = 1 + stress_mwc32modn((uint32_t)(wsize < KSM_MPROTECT_MAX_PAGES ? wsize : KSM_MPROTECT_MAX_PAGES));
	const size_t first = wfirst + stress_mwc32modn((uint32_t)(wsize - n + 1));
	const size_t end = first + n;
	const uint8_t p = (uint8_t)stress_mwc32modn(SIZEOF_ARRAY(stress_ksm_unmerge_prots));
	size_t i;

	(void)pthread_mutex_lock(&mp->lock);
	if (mp->frozen)
		goto unlock;
	for (i = first; i < end; i++)
		if (mp->snap[i])
			goto unlock;
	if (mprotect(ctx->region + first * ctx->page_size, (end - first) * ctx->page_size,
			stress_ksm_unmerge_prots[p]) < 0) {
		const int err = errno;

		if (err == ENOMEM) {	/* too many VMAs: start over */
			(void)stress_ksm_unmerge_mprotect_restore(ctx, mp);
			goto unlock;
		}
		rs->failures++;
		pr_fail("%s: mprotect racer: mprotect of pages %zu..%zu failed, errno=%d (%s)\n",
			ctx->args->name, first, end - 1, err, strerror(err));
		goto unlock;
	}
	for (i = first; i < end; i++) {
		if (mp->prot[i] != KSM_PROT_RW)
			mp->nprot--;
		if (p != KSM_PROT_RW)
			mp->nprot++;
		mp->prot[i] = p;
	}
	mp->toggles++;
	rs->ops++;
unlock:
	(void)pthread_mutex_unlock(&mp->lock);
}

/*
 *  stress_ksm_unmerge_mprotect_end()
 *	(thread) the run is ending: drop the snapshot, restore RW, stop toggling
 */
static void stress_ksm_unmerge_mprotect_end(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_mprotect_t *mp)
{
	size_t k;

	(void)pthread_mutex_lock(&mp->lock);
	mp->frozen = true;
	for (k = 0; k < mp->nsnap; k++)
		mp->snap[mp->list[k]] = 0;
	mp->nsnap = 0;
	(void)stress_ksm_unmerge_mprotect_restore(ctx, mp);
	(void)pthread_mutex_unlock(&mp->lock);
	(void)shim_nanosleep_uint64(1000000);
}

/*
 *  stress_ksm_unmerge_mprotect_thread()
 *	racer: toggle protections while merging, merged and unmerging
 */
static void *stress_ksm_unmerge_mprotect_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_MPROTECT;
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)ctx->run[idx].priv;

	while (!ctx->racers_stop) {
		const int phase = ctx->phase;

		if (ctx->quiesce) {
			(void)pthread_mutex_lock(&mp->lock);
			(void)stress_ksm_unmerge_mprotect_restore(ctx, mp);
			(void)pthread_mutex_unlock(&mp->lock);
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (!stress_ksm_unmerge_racer_running(ctx)) {
			stress_ksm_unmerge_mprotect_end(ctx, mp);
			continue;
		}
		if ((phase == KSM_PHASE_MERGING || phase == KSM_PHASE_MERGED ||
		     phase == KSM_PHASE_UNMERGING) && !mp->frozen && mp->toggles < KSM_MPROTECT_TOGGLES) {
			stress_ksm_unmerge_mprotect_one(ctx, idx, mp);
			(void)shim_nanosleep_uint64(50000);
			continue;
		}
		(void)shim_nanosleep_uint64(200000);
	}
	(void)pthread_mutex_lock(&mp->lock);
	if (stress_ksm_unmerge_mprotect_restore(ctx, mp) < 0)
		pr_fail("%s: mprotect racer: restoring PROT_READ|PROT_WRITE failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
	(void)pthread_mutex_unlock(&mp->lock);
	return NULL;
}

/*
 *  stress_ksm_unmerge_mprotect_snap_mg()
 *	diagnostics for a failure: was each snapshot page's VMA VM_MERGEABLE
 *	("mg" in smaps VmFlags) when the unmerge started (1 yes, 0 no, 2 unknown)
 */
static void stress_ksm_unmerge_mprotect_snap_mg(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_mprotect_t *mp)
{
	unsigned long lo = 0, hi = 0;
	char line[512];
	size_t k = 0;
	FILE *fp;

	(void)memset(mp->mg, 2, mp->nsnap);
	fp = fopen("/proc/self/smaps", "re");
	if (!fp)
		return;
	while (k < mp->nsnap && fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			continue;
		if (strncmp(line, "VmFlags:", 8))
			continue;
		for (; k < mp->nsnap; k++) {
			const unsigned long a = (unsigned long)(uintptr_t)(ctx->region + mp->list[k] * ctx->page_size);

			if (a >= hi)
				break;
			if (a >= lo)
				mp->mg[k] = strstr(line, " mg") ? 1 : 0;
		}
	}
	(void)fclose(fp);
}

/*
 *  stress_ksm_unmerge_mprotect_snapshot()
 *	UNMERGING hook (lock held): KSM pages that are PROT_NONE/PROT_READ now
 */
static void stress_ksm_unmerge_mprotect_snapshot(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_mprotect_t *mp)
{
	size_t i;

	mp->nsnap = 0;
	if (!mp->nprot || stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region,
			ctx->npages, ctx->page_size, mp->pm) < 0)
		return;
	for (i = 0; i < ctx->npages; i++) {
		const uint64_t e = mp->pm[i];
		uint64_t flags = 0;

		if (mp->prot[i] == KSM_PROT_RW || !(e & PM_PRESENT))
			continue;
		if ((e & PM_PFN_MASK) != ctx->zero_pfn)
			flags = stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, e & PM_PFN_MASK);
		if (!stress_ksm_unmerge_b_page_ksm(ctx, i, e, flags))
			continue;
		mp->snap[i] = e & PM_PFN_MASK;
		mp->list[mp->nsnap++] = i;
	}
	if (mp->nsnap)
		stress_ksm_unmerge_mprotect_snap_mg(ctx, mp);
}

/*
 *  stress_ksm_unmerge_mprotect_evidence()
 *	VERIFY hook (lock held): snapshot pages unshared by the unmerge
 */
static void stress_ksm_unmerge_mprotect_evidence(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_mprotect_t *mp)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	uint64_t *after = mp->pm, *before = mp->pm + ctx->npages;
	ssize_t bad;
	size_t k;

	if (!mp->nsnap)
		return;
	if (stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region, ctx->npages,
			ctx->page_size, after) < 0) {
		rs->failures++;
		pr_fail("%s: mprotect racer: pagemap read failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		return;
	}
	for (k = 0; k < mp->nsnap; k++) {
		const size_t i = mp->list[k];

		before[k] = mp->snap[i];
		after[k] = after[i];	/* compact in place: list is ascending, k <= i */
		/* a KSM zero page, or a discarded one read back: pagemap cannot tell */
		if (before[k] == ctx->zero_pfn && (after[k] & PM_PFN_MASK) == ctx->zero_pfn &&
		    stress_ksm_unmerge_b_others(ctx))
			after[k] = 0;
		mp->flags[k] = ((after[k] & PM_PRESENT) && (after[k] & PM_PFN_MASK) != ctx->zero_pfn) ?
			stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, after[k] & PM_PFN_MASK) : 0;
	}
	rs->evidence += stress_ksm_unmerge_mprotect_tally(before, after, mp->flags, mp->nsnap,
		ctx->zero_pfn, &bad);
	if (bad >= 0) {
		char vma[320];

		stress_ksm_unmerge_b_vma_flags(ctx->region + mp->list[bad] * ctx->page_size, vma, sizeof(vma));
		rs->failures++;
		pr_fail("%s: mprotect racer: page %zu was a KSM page (pfn %#" PRIx64 ") under %s at "
			"the start of the unmerge and maps pfn %#" PRIx64 " (KSM) after it; cycle %" PRIu64
			", racers %s, VMA %s, VMA %s VM_MERGEABLE when the unmerge started\n",
			ctx->args->name, mp->list[bad], before[bad],
			mp->prot[mp->list[bad]] == KSM_PROT_NONE ? "PROT_NONE" : "PROT_READ",
			(uint64_t)(after[bad] & PM_PFN_MASK), ctx->cycle, ctx->racers_str, vma,
			mp->mg[bad] == 1 ? "was" : (mp->mg[bad] == 0 ? "was NOT" : "unknown if"));
	}
}

/*
 *  stress_ksm_unmerge_mprotect_cycle()
 *	MERGING: unfreeze; UNMERGING: snapshot; VERIFY: evidence, restore, freeze
 */
static void stress_ksm_unmerge_mprotect_cycle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const int phase)
{
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)ctx->run[idx].priv;
	size_t k;

	if (!mp || (phase != KSM_PHASE_MERGING && phase != KSM_PHASE_UNMERGING &&
		    phase != KSM_PHASE_VERIFY && phase != KSM_PHASE_IDLE))
		return;
	(void)pthread_mutex_lock(&mp->lock);
	switch (phase) {
	case KSM_PHASE_MERGING:
		mp->frozen = false;
		mp->toggles = 0;
		break;
	case KSM_PHASE_UNMERGING:
		stress_ksm_unmerge_mprotect_snapshot(ctx, mp);
		break;
	default:	/* VERIFY, or IDLE on an error path */
		mp->frozen = true;
		if (phase == KSM_PHASE_VERIFY)
			stress_ksm_unmerge_mprotect_evidence(ctx, idx, mp);
		for (k = 0; k < mp->nsnap; k++)
			mp->snap[mp->list[k]] = 0;
		mp->nsnap = 0;
		if (stress_ksm_unmerge_mprotect_restore(ctx, mp) < 0) {
			stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
			pr_fail("%s: mprotect racer: restoring PROT_READ|PROT_WRITE failed, errno=%d (%s)\n",
				ctx->args->name, errno, strerror(errno));
		}
		break;
	}
	(void)pthread_mutex_unlock(&mp->lock);
}

/*
 *  stress_ksm_unmerge_mprotect_supported()
 *	mprotect is always there
 */
static int stress_ksm_unmerge_mprotect_supported(char *reason, const size_t len)
{
	(void)reason;
	(void)len;
	return 0;
}

/*
 *  stress_ksm_unmerge_mprotect_free()
 *	free the racer state
 */
static void stress_ksm_unmerge_mprotect_free(stress_ksm_unmerge_mprotect_t *mp)
{
	if (!mp)
		return;
	free(mp->prot);
	free(mp->snap);
	free(mp->pm);
	free(mp->list);
	free(mp->flags);
	free(mp->mg);
	free(mp);
}

/*
 *  stress_ksm_unmerge_mprotect_start()
 *	maps and thread; VMAs will split
 */
static int stress_ksm_unmerge_mprotect_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	stress_ksm_unmerge_mprotect_t *mp;

	if (!ctx->have_pfns) {
		(void)snprintf(rs->reason, sizeof(rs->reason),
			"pagemap PFNs not readable (needs CAP_SYS_ADMIN): no evidence possible");
		return -1;
	}
	mp = calloc(1, sizeof(*mp));
	if (!mp || !(mp->prot = calloc(ctx->npages, 1)) ||
	    !(mp->snap = calloc(ctx->npages, sizeof(*mp->snap))) ||
	    !(mp->pm = calloc(2 * ctx->npages, sizeof(*mp->pm))) ||
	    !(mp->list = calloc(ctx->npages, sizeof(*mp->list))) ||
	    !(mp->flags = calloc(ctx->npages, sizeof(*mp->flags))) ||
	    !(mp->mg = calloc(ctx->npages, 1))) {
		stress_ksm_unmerge_mprotect_free(mp);
		(void)snprintf(rs->reason, sizeof(rs->reason), "out of memory for the protection map");
		return -1;
	}
	(void)pthread_mutex_init(&mp->lock, NULL);
	mp->frozen = true;
	ctx->run[idx].priv = mp;
	ctx->racers_disturb_layout = true;
	ctx->racers_touch_npages = stress_ksm_unmerge_mprotect_window(ctx);
	/* a PTE changed under ksmd fails its pte_same() check: merges slip a pass */
	ctx->racers_disturb_counts = true;
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_mprotect_thread) < 0) {
		(void)pthread_mutex_destroy(&mp->lock);
		stress_ksm_unmerge_mprotect_free(mp);
		ctx->run[idx].priv = NULL;
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_mprotect_stop()
 *	join the thread (it restores protections), free
 */
static void stress_ksm_unmerge_mprotect_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)ctx->run[idx].priv;

	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	if (mp) {
		(void)pthread_mutex_destroy(&mp->lock);
		stress_ksm_unmerge_mprotect_free(mp);
	}
	ctx->run[idx].priv = NULL;
}

#define KSM_RACER_MPROTECT { "mprotect", "unmerge of PROT_NONE / read-only KSM pages", \
	"ksm-pages-protected", stress_ksm_unmerge_mprotect_supported, \
	stress_ksm_unmerge_mprotect_start, stress_ksm_unmerge_mprotect_stop, \
	stress_ksm_unmerge_mprotect_cycle, NULL }

/* ---------------------------------------------------------------------
 *  sparse: a huge MAP_NORESERVE range with one populated page per 64 MiB
 *  is made mergeable with the region and unmerged (timed) right before
 *  it: break_ksm's per-page walk over holes (no range walk in 6.18).
 * --------------------------------------------------------------------- */

/* sparse racer state (main thread only) */
typedef struct {
	uint8_t *base;			/* the sparse range */
	size_t size;			/* its bytes */
	size_t stride;			/* bytes between populated pages */
	size_t populated;		/* populated pages */
	bool mergeable;			/* MADV_MERGEABLE is on */
	uint64_t *entries;		/* pagemap of the populated pages */
	uint64_t *flags;		/* their kpageflags */
} stress_ksm_unmerge_sparse_t;

/*
 *  stress_ksm_unmerge_sparse_judge()
 *	pure: populated page k holds tmpl and is a private (non-KSM) page;
 *	index of the first bad page (-1 all good), *why: 1 data, 2 still KSM
 */
static ssize_t stress_ksm_unmerge_sparse_judge(const stress_ksm_unmerge_sparse_t *s,
	const uint8_t *tmpl, const size_t page_size, const uint64_t zero_pfn, int *why)
{
	size_t k;

	*why = 0;
	for (k = 0; k < s->populated; k++) {
		if (shim_memcmp(s->base + k * s->stride, tmpl, page_size)) {
			*why = 1;
			return (ssize_t)k;
		}
		if (stress_ksm_unmerge_b_entry_ksm(s->entries[k], s->flags[k], zero_pfn)) {
			*why = 2;
			return (ssize_t)k;
		}
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_sparse_lookup()
 *	pagemap entries and kpageflags of the populated pages
 */
static int stress_ksm_unmerge_sparse_lookup(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_sparse_t *s)
{
	size_t k;

	for (k = 0; k < s->populated; k++) {
		if (stress_ksm_unmerge_b_lookup(ctx, ctx->pagemap_fd, s->base + k * s->stride,
				&s->entries[k], &s->flags[k]) < 0)
			return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_sparse_verify()
 *	after the sparse unmerge: populated pages intact and unshared
 */
static void stress_ksm_unmerge_sparse_verify(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_sparse_t *s)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	ssize_t k;
	int why;

	if (ctx->have_pfns && stress_ksm_unmerge_sparse_lookup(ctx, s) < 0) {
		rs->failures++;
		pr_fail("%s: sparse racer: pagemap read failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		return;
	}
	if (!ctx->have_pfns) {
		(void)memset(s->entries, 0, s->populated * sizeof(*s->entries));
		(void)memset(s->flags, 0, s->populated * sizeof(*s->flags));
	}
	k = stress_ksm_unmerge_sparse_judge(s, ctx->templates, ctx->page_size, ctx->zero_pfn, &why);
	if (k < 0)
		return;
	rs->failures++;
	if (why == 1)
		pr_fail("%s: sparse racer: populated page %zd (offset %zu) lost its data after unmerge\n",
			ctx->args->name, k, (size_t)k * s->stride);
	else
		pr_fail("%s: sparse racer: populated page %zd (offset %zu) is still a KSM page "
			"(pfn %#" PRIx64 ") after MADV_UNMERGEABLE\n", ctx->args->name, k,
			(size_t)k * s->stride, (uint64_t)(s->entries[k] & PM_PFN_MASK));
}

/*
 *  stress_ksm_unmerge_sparse_unmerge()
 *	UNMERGING hook: the timed MADV_UNMERGEABLE of the sparse range
 */
static void stress_ksm_unmerge_sparse_unmerge(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_sparse_t *s)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	uint64_t t0, t1;
	int ret, err;

	if (!s->mergeable)
		return;
	t0 = stress_ksm_unmerge_b_now_ns();
	ret = madvise(s->base, s->size, MADV_UNMERGEABLE);
	err = errno;
	t1 = stress_ksm_unmerge_b_now_ns();
	if (ret < 0) {
		if (err == EINTR && !stress_continue(ctx->args))
			return;		/* end of the run: left for stop() */
		rs->failures++;
		pr_fail("%s: sparse racer: MADV_UNMERGEABLE of %zu bytes failed, errno=%d (%s)\n",
			ctx->args->name, s->size, err, strerror(err));
		return;
	}
	s->mergeable = false;
	rs->ops += s->size / ctx->page_size;
	rs->evidence += s->size / ctx->page_size;
	rs->aux += t1 - t0;
	stress_ksm_unmerge_sparse_verify(ctx, idx, s);
}

/*
 *  stress_ksm_unmerge_sparse_cycle()
 *	MERGING: sparse range mergeable; UNMERGING: timed unmerge of it
 */
static void stress_ksm_unmerge_sparse_cycle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const int phase)
{
	stress_ksm_unmerge_sparse_t *s = (stress_ksm_unmerge_sparse_t *)ctx->run[idx].priv;

	if (!s)
		return;
	if (phase == KSM_PHASE_MERGING) {
		if (madvise(s->base, s->size, MADV_MERGEABLE) < 0) {
			stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
			pr_fail("%s: sparse racer: MADV_MERGEABLE of %zu bytes failed, errno=%d (%s)\n",
				ctx->args->name, s->size, errno, strerror(errno));
			return;
		}
		s->mergeable = true;
	} else if (phase == KSM_PHASE_UNMERGING) {
		stress_ksm_unmerge_sparse_unmerge(ctx, idx, s);
	}
}

/*
 *  stress_ksm_unmerge_sparse_supported()
 *	anonymous MAP_NORESERVE mappings are always there
 */
static int stress_ksm_unmerge_sparse_supported(char *reason, const size_t len)
{
	(void)reason;
	(void)len;
	return 0;
}

/*
 *  stress_ksm_unmerge_sparse_free()
 *	unmap the range, free the state
 */
static void stress_ksm_unmerge_sparse_free(stress_ksm_unmerge_sparse_t *s)
{
	if (!s)
		return;
	if (s->base)
		(void)munmap(s->base, s->size);
	free(s->entries);
	free(s->flags);
	free(s);
}

/*
 *  stress_ksm_unmerge_sparse_bytes()
 *	--ksm-unmerge-sparse-bytes (default 16G), page aligned, at least 2 strides
 */
static size_t stress_ksm_unmerge_sparse_bytes(const size_t page_size)
{
	size_t bytes = (size_t)KSM_SPARSE_DEFAULT_BYTES;

	if (!stress_setting_get("ksm-unmerge-sparse-bytes", &bytes))
		bytes = (size_t)KSM_SPARSE_DEFAULT_BYTES;
	bytes &= ~(page_size - 1);
	return bytes < 2 * page_size ? 2 * page_size : bytes;
}

/*
 *  stress_ksm_unmerge_sparse_map()
 *	reserve the range, populate one page per stride with the "same" template
 */
static int stress_ksm_unmerge_sparse_map(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_sparse_t *s)
{
	size_t k;

	s->size = stress_ksm_unmerge_sparse_bytes(ctx->page_size);
	s->stride = (s->size >= 2 * KSM_SPARSE_STRIDE) ? (size_t)KSM_SPARSE_STRIDE :
		(s->size / 2) & ~(ctx->page_size - 1);
	s->populated = s->size / s->stride;
	s->entries = calloc(s->populated, sizeof(*s->entries));
	s->flags = calloc(s->populated, sizeof(*s->flags));
	if (!s->entries || !s->flags) {
		errno = ENOMEM;
		return -1;
	}
	s->base = mmap(NULL, s->size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s->base == MAP_FAILED) {
		s->base = NULL;
		return -1;
	}
#if defined(MADV_NOHUGEPAGE)
	(void)madvise(s->base, s->size, MADV_NOHUGEPAGE);
#endif
	stress_memory_anon_name_set(s->base, s->size, "ksm-unmerge-sparse");
	for (k = 0; k < s->populated; k++)
		(void)shim_memcpy(s->base + k * s->stride, ctx->templates, ctx->page_size);
	return 0;
}

/*
 *  stress_ksm_unmerge_sparse_start()
 *	map the sparse range
 */
static int stress_ksm_unmerge_sparse_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	stress_ksm_unmerge_sparse_t *s = calloc(1, sizeof(*s));

	if (!s) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "out of memory for racer state");
		return -1;
	}
	if (stress_ksm_unmerge_sparse_map(ctx, s) < 0) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "cannot reserve %zu bytes of sparse "
			"address space, errno=%d (%s)", s->size, errno, strerror(errno));
		stress_ksm_unmerge_sparse_free(s);
		return -1;
	}
	ctx->run[idx].priv = s;
	/* its populated pages merge too and count in this mm's ksm_merging_pages */
	ctx->racers_disturb_counts = true;
	return 0;
}

/*
 *  stress_ksm_unmerge_sparse_stop()
 *	unmap the sparse range
 */
static void stress_ksm_unmerge_sparse_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_sparse_free((stress_ksm_unmerge_sparse_t *)ctx->run[idx].priv);
	ctx->run[idx].priv = NULL;
}

#define KSM_RACER_SPARSE { "sparse", "unmerge walk over unpopulated ranges", \
	"sparse-pages-walked", stress_ksm_unmerge_sparse_supported, \
	stress_ksm_unmerge_sparse_start, stress_ksm_unmerge_sparse_stop, \
	stress_ksm_unmerge_sparse_cycle, NULL }
