/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racer-mrelease.h: the mrelease racer (private header of
 * stress-ksm-unmerge.c, included once, before the racer table).
 */

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
	uint64_t victims;		/* victims forked, picks the victim's mode */
	pid_t pid;			/* live child, 0 if none */
} stress_ksm_unmerge_mrelease_t;

/*
 *  stress_ksm_unmerge_mrelease_pagemap()
 *	open the victim's /proc/PID/pagemap, -1 on error
 */
static int stress_ksm_unmerge_mrelease_pagemap(const pid_t pid)
{
	char path[64];

	(void)snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

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
 *	victim: unmerge its copy (mode 0), COW-write every page (mode 1) or
 *	keep the KSM pages it inherited mapped (mode 2), then wait to be
 *	killed; exit status is the errno of a failed call
 */
static void NORETURN stress_ksm_unmerge_mrelease_child(stress_ksm_unmerge_ctx_t *ctx,
	const pid_t parent, const int mode)
{
	size_t i;

	if (stress_ksm_unmerge_racer_child_init(ctx, parent) < 0)
		_exit(errno ? errno : 1);
	if (mode == 0) {
		if (madvise(ctx->region, ctx->region_size, MADV_UNMERGEABLE) < 0)
			_exit(errno ? errno : 1);
	} else if (mode == 1) {
		if (stress_ksm_unmerge_racer_child_rw(ctx) < 0)
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
 *  stress_ksm_unmerge_mrelease_victim_ksm()
 *	KSM pages the victim maps right now in a random window of its copy of
 *	the region (its pagemap, pm_fd, and kpageflags); -1 if unreadable
 */
static ssize_t stress_ksm_unmerge_mrelease_victim_ksm(stress_ksm_unmerge_ctx_t *ctx, const int pm_fd)
{
	uint64_t pm[KSM_MRELEASE_PROBE_PAGES];
	const size_t n = ctx->npages < KSM_MRELEASE_PROBE_PAGES ? ctx->npages : KSM_MRELEASE_PROBE_PAGES;
	const size_t first = stress_mwc32modn((uint32_t)(ctx->npages - n + 1));
	ssize_t ksm = 0;
	size_t j;

	if (stress_ksm_unmerge_pagemap_read(pm_fd, ctx->region + first * ctx->page_size, n,
			ctx->page_size, pm) < 0)
		return -1;
	for (j = 0; j < n; j++) {
		const uint64_t flags = ((pm[j] & PM_PRESENT) && (pm[j] & PM_PFN_MASK)) ?
			stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, pm[j] & PM_PFN_MASK) : 0;

		ksm += stress_ksm_unmerge_region_page_is_ksm(ctx, first + j, pm[j], flags);
	}
	return ksm;
}

/*
 *  stress_ksm_unmerge_mrelease_kill()
 *	probe the victim's KSM pages, SIGKILL it via its pidfd,
 *	process_mrelease at once, reap; evidence only if the probe saw KSM
 *	pages; latency: kill to mrelease return (0) or to waitpid return (ESRCH)
 */
static void stress_ksm_unmerge_mrelease_kill(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const int pidfd, const pid_t pid, const int pm_fd)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	uint64_t t0, t1, t2;
	int ret, err, status, verdict;
	const ssize_t ksm = stress_ksm_unmerge_mrelease_victim_ksm(ctx, pm_fd);

	t0 = stress_ksm_unmerge_now_ns();
	if (shim_pidfd_send_signal(pidfd, SIGKILL, NULL, 0) < 0) {
		err = errno;
		(void)shim_kill(pid, SIGKILL);
		(void)stress_ksm_unmerge_child_reap(pid, 0.0, &status);
		stress_ksm_unmerge_mrelease_fail(ctx, idx, "pidfd_send_signal SIGKILL failed", err);
		return;
	}
	ret = shim_process_mrelease(pidfd, 0);
	err = errno;
	t1 = stress_ksm_unmerge_now_ns();
	if (stress_ksm_unmerge_child_reap(pid, 0.0, &status) < 0) {
		stress_ksm_unmerge_mrelease_fail(ctx, idx, "waitpid on the victim failed", errno);
		return;
	}
	t2 = stress_ksm_unmerge_now_ns();
	rs->ops++;
	if (ksm > 0) {
		rs->evidence++;
		rs->detail[2] += (uint64_t)ksm;
	}
	verdict = stress_ksm_unmerge_mrelease_judge(ret, err);
	if (verdict == KSM_MRELEASE_REAPED) {
		rs->detail[0]++;
		stress_ksm_unmerge_lat_add(&ctx->st->mrelease_lat, (double)(t1 - t0) / 1.0E6);
	} else if (verdict == KSM_MRELEASE_GONE) {
		rs->detail[1]++;
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
	int pidfd, pm_fd, status, err;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "fork failed, errno=%d (%s)",
			errno, strerror(errno));
		(void)shim_nanosleep_uint64(10000000);
		return;
	}
	if (pid == 0)
		stress_ksm_unmerge_mrelease_child(ctx, parent, (int)(m->victims % KSM_MRELEASE_MODES));
	m->victims++;
	m->pid = pid;
	/* a victim forked while merged maps the KSM pages: the unmerge may start */
	stress_ksm_unmerge_racer_merged_op_begins(ctx, idx);
	pidfd = shim_pidfd_open(pid, 0);
	pm_fd = (pidfd < 0) ? -1 : stress_ksm_unmerge_mrelease_pagemap(pid);
	if (pidfd < 0 || pm_fd < 0) {
		err = errno;
		(void)shim_kill(pid, SIGKILL);
		(void)stress_ksm_unmerge_child_reap(pid, 0.0, &status);
		m->pid = 0;
		if (pidfd >= 0)
			(void)close(pidfd);
		stress_ksm_unmerge_mrelease_fail(ctx, idx, pidfd < 0 ? "pidfd_open of the victim failed" :
			"open of the victim's /proc/PID/pagemap failed", err);
		return;
	}
	(void)shim_nanosleep_uint64(stress_mwc32modn(KSM_MRELEASE_DELAY_NS + 1));
	stress_ksm_unmerge_mrelease_kill(ctx, idx, pidfd, pid, pm_fd);
	(void)close(pm_fd);
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
		if (!stress_ksm_unmerge_racer_keep_going(ctx))
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
	stress_ksm_unmerge_mrelease_t *m;

	if (stress_ksm_unmerge_racer_need_pfns(ctx, idx, "victims' KSM pages not visible") < 0)
		return -1;
	m = calloc(1, sizeof(*m));
	if (!m) {
		(void)snprintf(ctx->st->racer[idx].reason, sizeof(ctx->st->racer[idx].reason),
			"out of memory for racer state");
		return -1;
	}
	ctx->run[idx].priv = m;
	ctx->run[idx].merged_phase_waits = true;
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
		(void)stress_ksm_unmerge_child_reap(m->pid, 0.0, &status);
	}
	free(m);
	ctx->run[idx].priv = NULL;
}

#define KSM_RACER_MRELEASE                                                     \
	.flags = KSM_RACER_F_MM,                                               \
	.path = "process_mrelease vs exit_mmap of KSM memory",                 \
	.evidence = "ksm-victims-killed",                                      \
	.details = { "mrelease-reaps", "mrelease-esrch", "victim-ksm-pages" }, \
	.page_copy = true,		/* the victims' copies */              \
	.supported = stress_ksm_unmerge_mrelease_supported,                    \
	.start = stress_ksm_unmerge_mrelease_start,                            \
	.stop = stress_ksm_unmerge_mrelease_stop,
