/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racer-signal.h: the signal racer (private header of
 * stress-ksm-unmerge.c, included once, before the racer table).
 *
 * A thread sends a handled signal (installed without SA_RESTART) to the
 * instance's main thread, over and over, while it is inside the timed
 * unmerge.  The unmerge walk checks for pending signals between pages and
 * gives up with -ERESTARTSYS (6.18: per page in unmerge_ksm_pages(); after
 * "ksm: perform a range-walk to jump over holes in break_ksm": per PMD),
 * which reaches user space as EINTR from MADV_UNMERGEABLE or
 * PR_SET_MEMORY_MERGE 0.  The stressor retries until the call succeeds;
 * the cycle's usual verification then requires the final state to be
 * complete (no KSM page or KSM zero page left, data intact, VmFlags kept).
 * Kernel-side evidence: unmerge calls that returned EINTR (the kernel
 * really stopped early), not signals sent.
 */

#define KSM_SIGNAL_MAX_PER_CYCLE	(256)		/* signals per timed unmerge */
#define KSM_SIGNAL_GAP_NS		(100000)	/* max gap between signals */

/* signal racer state */
typedef struct {
	pthread_t target;		/* the instance's main thread: it unmerges */
	pthread_mutex_t lock;		/* window changes vs sending */
	volatile bool window;		/* the main thread is inside the timed unmerge */
	volatile uint32_t sent;		/* signals sent in this window */
	int signo;
	struct sigaction old;		/* handler to put back */
} stress_ksm_unmerge_signal_t;

static volatile sig_atomic_t stress_ksm_unmerge_signal_caught;

/*
 *  stress_ksm_unmerge_signal_handler()
 *	count the signal; returning interrupts the unmerge (no SA_RESTART)
 */
static void stress_ksm_unmerge_signal_handler(int sig)
{
	(void)sig;
	stress_ksm_unmerge_signal_caught = 1;
}

/*
 *  stress_ksm_unmerge_signal_send()
 *	send one signal if the main thread is in the unmerge; true if sent
 */
static bool stress_ksm_unmerge_signal_send(stress_ksm_unmerge_signal_t *s)
{
	bool sent = false;

	(void)pthread_mutex_lock(&s->lock);
	if (s->window && s->sent < KSM_SIGNAL_MAX_PER_CYCLE &&
	    pthread_kill(s->target, s->signo) == 0) {
		s->sent++;
		sent = true;
	}
	(void)pthread_mutex_unlock(&s->lock);
	return sent;
}

/*
 *  stress_ksm_unmerge_signal_thread()
 *	racer: signal the unmerging main thread every 10..110 us
 */
static void *stress_ksm_unmerge_signal_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_SIGNAL;
	stress_ksm_unmerge_signal_t *s = (stress_ksm_unmerge_signal_t *)ctx->run[idx].priv;
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);

	while (!ctx->racers_stop) {
		if (!stress_ksm_unmerge_racer_may_act(ctx, idx))
			continue;
		if (stress_ksm_unmerge_signal_send(s))
			rs->ops++;
		(void)shim_nanosleep_uint64(10000 + stress_mwc32modn(KSM_SIGNAL_GAP_NS));
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_signal_off()
 *	the timed unmerge (merging off); with the signal racer running, inside
 *	the signal window and retried while the kernel returns EINTR; one call
 *	of the timed unmerge: [off, off + len) of the region (madvise) or prctl
 */
static int stress_ksm_unmerge_signal_off(stress_ksm_unmerge_ctx_t *ctx, const uint64_t sw,
	const size_t off, const size_t len)
{
	const size_t idx = KSM_RACER_IDX_SIGNAL;
	stress_ksm_unmerge_signal_t *s = (ctx->racers_mask & STRESS_BIT_ULL(idx)) ?
		(stress_ksm_unmerge_signal_t *)ctx->run[idx].priv : NULL;
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	int ret, err, tries;

	if (!s)
		return stress_ksm_unmerge_switch_off_range(ctx, sw, off, len);
	s->sent = 0;
	s->window = true;
	/* each try is bounded: the thread stops after KSM_SIGNAL_MAX_PER_CYCLE */
	for (tries = 0; ; tries++) {
		ret = stress_ksm_unmerge_switch_off_range(ctx, sw, off, len);
		err = errno;
		if (ret == 0 || err != EINTR)
			break;
		rs->evidence++;
		if (!stress_continue(ctx->args) || tries > KSM_SIGNAL_MAX_PER_CYCLE)
			break;
	}
	(void)pthread_mutex_lock(&s->lock);
	s->window = false;
	(void)pthread_mutex_unlock(&s->lock);
	if (ret < 0 && err == EINTR && stress_continue(ctx->args))
		pr_fail("%s: signal racer: %s unmerge still returned EINTR after %d retries "
			"and %" PRIu32 " signals\n", ctx->args->name, stress_ksm_unmerge_switch_name(sw),
			tries, s->sent);
	errno = err;
	return ret;
}

/*
 *  stress_ksm_unmerge_signal_start()
 *	handler without SA_RESTART, lock, thread
 */
static int stress_ksm_unmerge_signal_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	stress_ksm_unmerge_signal_t *s = stress_ksm_unmerge_racer_alloc(ctx, idx, sizeof(*s), false);
	struct sigaction sa;

	if (!s)
		return -1;
	s->target = pthread_self();
	s->signo = SIGRTMIN + 3;
	(void)memset(&sa, 0, sizeof(sa));
	sa.sa_handler = stress_ksm_unmerge_signal_handler;
	(void)sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: an interrupted unmerge returns EINTR */
	if (sigaction(s->signo, &sa, &s->old) < 0) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "sigaction of signal %d failed, "
			"errno=%d (%s)", s->signo, errno, strerror(errno));
		free(s);
		return -1;
	}
	(void)pthread_mutex_init(&s->lock, NULL);
	ctx->run[idx].priv = s;
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_signal_thread) < 0) {
		(void)sigaction(s->signo, &s->old, NULL);
		(void)pthread_mutex_destroy(&s->lock);
		free(s);
		ctx->run[idx].priv = NULL;
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_signal_stop()
 *	join the thread, put the old handler back
 */
static void stress_ksm_unmerge_signal_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_signal_t *s = (stress_ksm_unmerge_signal_t *)ctx->run[idx].priv;

	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	if (!s)
		return;
	(void)sigaction(s->signo, &s->old, NULL);
	(void)pthread_mutex_destroy(&s->lock);
	free(s);
	ctx->run[idx].priv = NULL;
}

#define KSM_RACER_SIGNAL                                                  \
	.path = "signals interrupting the unmerge walk (EINTR, retried)", \
	.evidence = "unmerges-interrupted",                               \
	.supported = stress_ksm_unmerge_racer_supported_always,           \
	.start = stress_ksm_unmerge_signal_start,                         \
	.stop = stress_ksm_unmerge_signal_stop,
