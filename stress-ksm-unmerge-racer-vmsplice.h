/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racer-vmsplice.h: the vmsplice racer (private header of
 * stress-ksm-unmerge.c, included once, before the racer table).
 */

/* ------------------------------------------------------------------ */
/* vmsplice: GUP references on KSM pages held in a pipe               */
/* ------------------------------------------------------------------ */

/* its built and not-built entries share these (the name: KSM_UNMERGE_RACER_LIST) */
#define KSM_RACER_VMSPLICE_ID						\
	.flags = KSM_RACER_F_HOLDING,					\
	.path = "GUP refs from vmsplice on KSM pages",	\
	.evidence = "ksm-pages-spliced"

#if defined(HAVE_VMSPLICE) && defined(SPLICE_F_NONBLOCK)

/*
 *  stress_ksm_unmerge_vmsplice_hold_over_unmerge()
 *	keep a splice begun in the merged phase of cycle until that cycle's
 *	unmerge returned, so break_ksm() meets its references; true if the
 *	unmerge returned (phase VERIFY) while it was held
 */
static bool stress_ksm_unmerge_vmsplice_hold_over_unmerge(const stress_ksm_unmerge_ctx_t *ctx, const uint64_t cycle)
{
	while (ctx->cycle == cycle && !ctx->racers_stop &&
	       (ctx->phase == KSM_PHASE_MERGED || ctx->phase == KSM_PHASE_UNMERGING))
		(void)shim_nanosleep_uint64(50000);
	return ctx->cycle == cycle && ctx->phase == KSM_PHASE_VERIFY;
}

typedef struct {
	int pipefd[2];			/* non-blocking pipe */
	uint8_t *buf;			/* drain buffer, KSM_RACER_OP_MAX_PAGES pages */
	uint8_t *scratch;		/* one page for partial-page checks */
} stress_ksm_unmerge_vmsplice_t;

/*
 *  stress_ksm_unmerge_vmsplice_drain()
 *	read len bytes back out of the pipe; 0 or -errno
 */
static int stress_ksm_unmerge_vmsplice_drain(stress_ksm_unmerge_vmsplice_t *v, const size_t len)
{
	size_t got = 0;
	int spins = 0;

	while (got < len) {
		const ssize_t n = read(v->pipefd[0], v->buf + got, len - got);

		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0)
			return -EPIPE;
		if ((errno != EAGAIN && errno != EINTR) || ++spins > 10000)
			return -errno;
		(void)shim_nanosleep_uint64(10000);
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_vmsplice_splice()
 *	vmsplice pages first..first+n-1 into the pipe; bytes or -1 (errno)
 */
static ssize_t stress_ksm_unmerge_vmsplice_splice(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_vmsplice_t *v, const size_t first, const size_t n)
{
	struct iovec iov[KSM_RACER_OP_MAX_PAGES];
	size_t j;

	for (j = 0; j < n; j++) {
		iov[j].iov_base = ctx->region + (first + j) * ctx->page_size;
		iov[j].iov_len = ctx->page_size;
	}
	return vmsplice(v->pipefd[1], iov, n, SPLICE_F_NONBLOCK);
}

/*
 *  stress_ksm_unmerge_vmsplice_one()
 *	one op: count KSM pages, vmsplice them, hold, drain, check every byte
 */
static void stress_ksm_unmerge_vmsplice_one(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_vmsplice_t *v)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	uint8_t st[KSM_RACER_OP_MAX_PAGES];
	bool was_ksm[KSM_RACER_OP_MAX_PAGES];
	size_t first, j, covered, n = stress_ksm_unmerge_random_range(ctx, KSM_RACER_OP_MAX_PAGES, &first);
	ssize_t ret, bad, off;
	int err;
	const uint64_t cycle = ctx->cycle;
	const bool merged = (ctx->phase == KSM_PHASE_MERGED);
	bool held = false;

	n = stress_ksm_unmerge_pattern_pages_present(ctx, first, n, st);
	if (!n)
		return;
	for (j = 0; j < n; j++)
		was_ksm[j] = stress_ksm_unmerge_page_is_ksm(ctx, first + j);
	stress_ksm_unmerge_racer_merged_op_begins(ctx, idx);
	ret = stress_ksm_unmerge_vmsplice_splice(ctx, v, first, n);
	if (ret <= 0) {
		/* EFAULT: another racer made the range PROT_NONE */
		if (ret == 0 || errno == EAGAIN || errno == EINTR ||
		    (errno == EFAULT && stress_ksm_unmerge_others_run(ctx, KSM_RACER_F_HOLDING)))
			return;
		pr_fail("%s: vmsplice racer: vmsplice of pages %zu..%zu failed, errno=%d (%s)\n",
			ctx->args->name, first, first + n - 1, errno, strerror(errno));
		rs->failures++;
		return;
	}
	if (merged)
		held = stress_ksm_unmerge_vmsplice_hold_over_unmerge(ctx, cycle);
	else
		stress_ksm_unmerge_racer_hold(ctx);
	err = stress_ksm_unmerge_vmsplice_drain(v, (size_t)ret);
	if (err < 0) {
		pr_fail("%s: vmsplice racer: draining %zd bytes from the pipe failed, errno=%d (%s)\n",
			ctx->args->name, ret, -err, strerror(-err));
		rs->failures++;
		return;
	}
	bad = stress_ksm_unmerge_copied_pages_check(ctx, first, v->buf, (size_t)ret,
		stress_ksm_unmerge_others_run(ctx, KSM_RACER_F_HOLDING), v->scratch, &off);
	if (bad >= 0) {
		pr_fail("%s: vmsplice racer: page %zu read back from the pipe: byte %zd is 0x%02x, "
			"expected 0x%02x (was KSM when spliced: %s)\n", ctx->args->name,
			first + (size_t)bad, off, v->buf[(size_t)bad * ctx->page_size + (size_t)off],
			stress_ksm_unmerge_expected_byte(ctx, first + (size_t)bad, off, v->scratch),
			was_ksm[bad] ? "yes" : "no");
		rs->failures++;
	}
	covered = ((size_t)ret + ctx->page_size - 1) / ctx->page_size;
	for (j = 0; j < covered && j < n; j++) {
		rs->evidence += was_ksm[j];
		if (held)
			rs->detail[1] += was_ksm[j];
	}
	rs->detail[0] += held;
	rs->ops++;
}

/*
 *  stress_ksm_unmerge_vmsplice_thread()
 *	racer: vmsplice merged pages into a pipe and read them back, while
 *	merged and while being unmerged; the pipe is empty whenever it parks
 */
static void *stress_ksm_unmerge_vmsplice_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_VMSPLICE;
	stress_ksm_unmerge_vmsplice_t *v = (stress_ksm_unmerge_vmsplice_t *)ctx->run[idx].priv;

	while (stress_ksm_unmerge_racer_until_stop(ctx)) {
		if (ctx->quiesce) {
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (stress_ksm_unmerge_racer_phase_active(ctx)) {
			stress_ksm_unmerge_vmsplice_one(ctx, idx, v);
			continue;
		}
		(void)shim_nanosleep_uint64(100000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_vmsplice_supported()
 *	vmsplice needs pipes and the syscall
 */
static int stress_ksm_unmerge_vmsplice_supported(char *reason, const size_t len)
{
	int fds[2];
	char c = 0;
	struct iovec iov = { &c, 1 };

	if (pipe(fds) < 0) {
		(void)snprintf(reason, len, "pipe failed, errno=%d (%s)", errno, strerror(errno));
		return -1;
	}
	if (vmsplice(fds[1], &iov, 1, SPLICE_F_NONBLOCK) < 0) {
		(void)snprintf(reason, len, "vmsplice failed, errno=%d (%s)", errno, strerror(errno));
		(void)close(fds[0]);
		(void)close(fds[1]);
		return -1;
	}
	(void)close(fds[0]);
	(void)close(fds[1]);
	return 0;
}

/*
 *  stress_ksm_unmerge_vmsplice_free()
 *	close the pipe, free the buffers
 */
static void stress_ksm_unmerge_vmsplice_free(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_vmsplice_t *v = (stress_ksm_unmerge_vmsplice_t *)ctx->run[idx].priv;

	if (!v)
		return;
	if (v->pipefd[0] >= 0)
		(void)close(v->pipefd[0]);
	if (v->pipefd[1] >= 0)
		(void)close(v->pipefd[1]);
	stress_ksm_unmerge_racer_buffers_free(ctx, v->buf);
	free(v);
	ctx->run[idx].priv = NULL;
}

/*
 *  stress_ksm_unmerge_vmsplice_start()
 *	pipe, drain buffer and thread
 */
static int stress_ksm_unmerge_vmsplice_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_vmsplice_t *v = calloc(1, sizeof(*v));

	if (!v) {
		stress_ksm_unmerge_racer_reason(ctx, idx, "out of memory for the racer state");
		return -1;
	}
	v->pipefd[0] = v->pipefd[1] = -1;
	ctx->run[idx].priv = v;
	v->buf = stress_ksm_unmerge_racer_buffers(ctx);
	v->scratch = v->buf ? v->buf + KSM_RACER_OP_MAX_PAGES * ctx->page_size : NULL;
	if (!v->buf) {
		stress_ksm_unmerge_racer_reason(ctx, idx, "cannot map the drain buffer, errno=%d (%s)",
			errno, strerror(errno));
		stress_ksm_unmerge_vmsplice_free(ctx, idx);
		return -1;
	}
	if (pipe2(v->pipefd, O_CLOEXEC | O_NONBLOCK) < 0) {
		stress_ksm_unmerge_racer_reason(ctx, idx, "pipe2 failed, errno=%d (%s)", errno, strerror(errno));
		v->pipefd[0] = v->pipefd[1] = -1;
		stress_ksm_unmerge_vmsplice_free(ctx, idx);
		return -1;
	}
	/* a page in the pipe blocks its merge (and others against it) */
	ctx->racers_disturb_counts = true;
	ctx->run[idx].merged_phase_waits = true;
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_vmsplice_thread) < 0) {
		stress_ksm_unmerge_vmsplice_free(ctx, idx);
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_vmsplice_stop()
 *	join the thread (the pipe is drained by then), close the pipe
 */
static void stress_ksm_unmerge_vmsplice_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	stress_ksm_unmerge_vmsplice_free(ctx, idx);
}

#define KSM_RACER_VMSPLICE                                                         \
	KSM_RACER_VMSPLICE_ID,							\
	.details = { "splices-held-over-unmerge", "ksm-pages-held-over-unmerge" }, \
	.supported = stress_ksm_unmerge_vmsplice_supported,                        \
	.start = stress_ksm_unmerge_vmsplice_start,                                \
	.stop = stress_ksm_unmerge_vmsplice_stop,

#else

/* feature guard off: the racer is listed, and reports "not built" */
#define KSM_RACER_VMSPLICE						\
	KSM_RACER_VMSPLICE_ID,							\
	.not_built = "vmsplice() or SPLICE_F_NONBLOCK missing (HAVE_VMSPLICE)",

#endif
