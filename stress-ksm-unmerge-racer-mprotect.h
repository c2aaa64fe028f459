/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racer-mprotect.h: the mprotect racer (private header of
 * stress-ksm-unmerge.c, included once, before the racer table).
 */

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
		const int v = stress_ksm_unmerge_unshared_verdict(pfn_before[k], after[k], flags_after[k], zero_pfn);

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
 *  stress_ksm_unmerge_mprotect_snap_mergeable()
 *	diagnostics for a failure: was each snapshot page's VMA VM_MERGEABLE
 *	("mg" in smaps VmFlags) when the unmerge started (1 yes, 0 no, 2 unknown)
 */
static void stress_ksm_unmerge_mprotect_snap_mergeable(stress_ksm_unmerge_ctx_t *ctx,
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
		if (!stress_ksm_unmerge_region_page_is_ksm(ctx, i, e, flags))
			continue;
		mp->snap[i] = e & PM_PFN_MASK;
		mp->list[mp->nsnap++] = i;
	}
	if (mp->nsnap)
		stress_ksm_unmerge_mprotect_snap_mergeable(ctx, mp);
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
		    stress_ksm_unmerge_others_run(ctx, KSM_RACER_F_MM))
			after[k] = 0;
		mp->flags[k] = ((after[k] & PM_PRESENT) && (after[k] & PM_PFN_MASK) != ctx->zero_pfn) ?
			stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, after[k] & PM_PFN_MASK) : 0;
	}
	rs->evidence += stress_ksm_unmerge_mprotect_tally(before, after, mp->flags, mp->nsnap,
		ctx->zero_pfn, &bad);
	if (bad >= 0) {
		char vma[320];

		stress_ksm_unmerge_vma_flags(ctx->region + mp->list[bad] * ctx->page_size, vma, sizeof(vma));
		rs->failures++;
		pr_fail("%s: mprotect racer: page %zu was a KSM page (pfn %#" PRIx64 ") under %s at "
			"the start of the unmerge and still maps a KSM page after it (pfn %#" PRIx64
			", kpageflags %#" PRIx64 "); cycle %" PRIu64
			", racers %s, VMA %s, VMA %s VM_MERGEABLE when the unmerge started\n",
			ctx->args->name, mp->list[bad], before[bad],
			mp->prot[mp->list[bad]] == KSM_PROT_NONE ? "PROT_NONE" : "PROT_READ",
			(uint64_t)(after[bad] & PM_PFN_MASK), mp->flags[bad], ctx->cycle, ctx->racers_str, vma,
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

	if (stress_ksm_unmerge_racer_need_pfns(ctx, idx, "no evidence possible") < 0)
		return -1;
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

#define KSM_RACER_MPROTECT                                                             \
	.flags = KSM_RACER_F_MM,                                                       \
	.path = "unmerge of PROT_NONE / read-only KSM pages",                          \
	.evidence = "ksm-pages-protected",                                             \
	.page_bytes = 2 + 5 * sizeof(uint64_t),	/* protection and snapshot per page */ \
	.supported = stress_ksm_unmerge_racer_supported_always,                        \
	.start = stress_ksm_unmerge_mprotect_start,                                    \
	.stop = stress_ksm_unmerge_mprotect_stop,                                      \
	.cycle = stress_ksm_unmerge_mprotect_cycle,
