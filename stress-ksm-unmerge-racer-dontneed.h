/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racer-dontneed.h: the dontneed racer (private header of
 * stress-ksm-unmerge.c, included once, before the racer table).
 */

/* dontneed racer: pages it discarded this cycle, refilled before verification */
typedef struct {
	uint8_t *holes;			/* one byte per page: discarded */
	uint32_t ranges;		/* ranges discarded this cycle */
} stress_ksm_unmerge_dontneed_t;


/*
 *  stress_ksm_unmerge_dontneed_refill()
 *	restore hook: rewrite the pattern into every page the racer discarded;
 *	runs in the main thread after all racers parked, so after the mprotect
 *	racer made every page writable again
 */
static void stress_ksm_unmerge_dontneed_refill(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_dontneed_t *d = (stress_ksm_unmerge_dontneed_t *)ctx->run[idx].priv;
	size_t i;

	if (!d)
		return;

	for (i = 0; i < ctx->npages; i++) {
		if (!d->holes[i])
			continue;
		stress_ksm_unmerge_page_fill(ctx, i, ctx->region + i * ctx->page_size);
		d->holes[i] = 0;
	}
	d->ranges = 0;
}

/*
 *  stress_ksm_unmerge_dontneed_one()
 *	discard one random range of 1..16 pages; count those that were KSM pages
 */
static void stress_ksm_unmerge_dontneed_one(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_dontneed_t *d)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const size_t n = 1 + stress_mwc32modn(16);
	const size_t first = stress_mwc32modn((uint32_t)(ctx->npages > n ? ctx->npages - n : 1));
	uint64_t was_ksm = 0;
	size_t i;

	for (i = first; i < first + n && i < ctx->npages; i++)
		was_ksm += stress_ksm_unmerge_page_is_ksm(ctx, i);
	if (madvise(ctx->region + first * ctx->page_size, n * ctx->page_size, MADV_DONTNEED) < 0) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "madvise MADV_DONTNEED failed, errno=%d (%s)",
			errno, strerror(errno));
		rs->failures++;
		return;
	}
	for (i = first; i < first + n && i < ctx->npages; i++)
		d->holes[i] = 1;
	d->ranges++;
	rs->ops++;
	rs->evidence += was_ksm;
}

/*
 *  stress_ksm_unmerge_dontneed_thread()
 *	racer: MADV_DONTNEED holes in merged memory, before and during unmerge
 */
static void *stress_ksm_unmerge_dontneed_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_DONTNEED;
	stress_ksm_unmerge_dontneed_t *d = (stress_ksm_unmerge_dontneed_t *)ctx->run[idx].priv;

	while (!ctx->racers_stop) {
		const int phase = ctx->phase;

		if (ctx->quiesce) {
			/* holes are refilled by restore() once every racer parked */
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (!stress_ksm_unmerge_racer_running(ctx)) {
			/* run ending: no new holes, but park for a cycle still verifying */
			(void)shim_nanosleep_uint64(1000000);
			continue;
		}
		if ((phase == KSM_PHASE_MERGED || phase == KSM_PHASE_UNMERGING) && d->ranges < 64) {
			stress_ksm_unmerge_dontneed_one(ctx, idx, d);
			continue;
		}
		(void)shim_nanosleep_uint64(200000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_dontneed_start()
 *	hole map and thread
 */
static int stress_ksm_unmerge_dontneed_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_dontneed_t *d = calloc(1, sizeof(*d));

	if (!d || !(d->holes = calloc(ctx->npages, 1))) {
		free(d);
		(void)snprintf(ctx->st->racer[idx].reason, sizeof(ctx->st->racer[idx].reason),
			"out of memory for the hole map");
		return -1;
	}
	ctx->run[idx].priv = d;
	ctx->racers_disturb_counts = true;
	ctx->racers_disturb_layout = true;
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_dontneed_thread) < 0) {
		free(d->holes);
		free(d);
		ctx->run[idx].priv = NULL;
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_dontneed_stop()
 *	join the thread, free the hole map
 */
static void stress_ksm_unmerge_dontneed_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_dontneed_t *d = (stress_ksm_unmerge_dontneed_t *)ctx->run[idx].priv;

	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	if (d) {
		free(d->holes);
		free(d);
	}
	ctx->run[idx].priv = NULL;
}

#define KSM_RACER_DONTNEED                                      \
	.path = "unmerge over MADV_DONTNEED holes",             \
	.evidence = "ksm-pages-discarded",                      \
	.page_bytes = 1,		/* hole map */          \
	.supported = stress_ksm_unmerge_racer_supported_always, \
	.start = stress_ksm_unmerge_dontneed_start,             \
	.stop = stress_ksm_unmerge_dontneed_stop,               \
	.restore = stress_ksm_unmerge_dontneed_refill,
