/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racer-mremap.h: the mremap racer (private header of
 * stress-ksm-unmerge.c, included once, before the racer table).
 *
 * The racer has its own mergeable range next to the region (the same
 * page as the "same" pattern, so it merges with the region and across
 * instances), made mergeable with the region and unmerged in the
 * unmerging phase.  A thread moves random parts of it (1-16 pages) with
 * mremap(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP) into a reserved
 * scratch range and back, in the merged phase and while the range and the
 * region unmerge.  Moving a mergeable range unmerges it first
 * (prep_move_vma); in 2026 mm.git had mremap-moved KSM folios whose rmap
 * was wrong (not swappable).  DONTUNMAP keeps the source mapped (empty),
 * so neither range ever has a hole another thread's mmap could take, and
 * the unmerge of the range never meets a gap.
 *
 * Checked: the data of every moved page at its new address and again after
 * the move back; once every racer parked, a last MADV_UNMERGEABLE of the
 * range (a part moved back after the unmerging phase's one brings its
 * VM_MERGEABLE with it, so ksmd may legitimately merge it again) must leave
 * no KSM page in it, data intact.  Evidence: pages that were KSM pages
 * (kpageflags) right before a move and arrived intact.
 */

#if !defined(MREMAP_MAYMOVE)
#define MREMAP_MAYMOVE			(1)
#endif
#if !defined(MREMAP_FIXED)
#define MREMAP_FIXED			(2)
#endif
#if !defined(MREMAP_DONTUNMAP)
#define MREMAP_DONTUNMAP		(4)
#endif

#define KSM_MREMAP_MAX_PAGES		(16)	/* pages per move */
#define KSM_MREMAP_MIN_PAGES		(16)	/* the range, at least */
#define KSM_MREMAP_MAX_RANGE		(1024)	/* the range, at most */
#define KSM_MREMAP_FLAGS		(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP)

/* mremap racer state */
typedef struct {
	uint8_t *range;			/* the racer's mergeable range */
	uint8_t *scratch;		/* reserved target of the moves */
	size_t npages;			/* pages of each */
	size_t size;
	bool broken;			/* a move back failed: stop moving */
	uint64_t still_ksm;		/* moved KSM pages still KSM at the new address */
} stress_ksm_unmerge_mremap_t;

#define KSM_MREMAP_D_CUT	(0)	/* moves cut at a VMA's end (EFAULT before 6.17) */

/*
 *  stress_ksm_unmerge_mremap_move()
 *	move n pages from src to dst, keeping src mapped; 0 or -1 (errno)
 */
static int stress_ksm_unmerge_mremap_move(uint8_t *src, uint8_t *dst, const size_t len)
{
	void *p = mremap(src, len, len, KSM_MREMAP_FLAGS, dst);

	if (p == MAP_FAILED)
		return -1;
	if (p != dst) {
		errno = EFAULT;
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_mremap_vma_end()
 *	end of the VMA holding addr (/proc/self/maps), 0 if not found
 */
static uintptr_t stress_ksm_unmerge_mremap_vma_end(const void *addr)
{
	const uintptr_t a = (uintptr_t)addr;
	unsigned long start, end;
	char line[512];
	uintptr_t ret = 0;
	FILE *fp = fopen("/proc/self/maps", "re");

	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%lx-%lx", &start, &end) == 2 && a >= start && a < end) {
			ret = (uintptr_t)end;
			break;
		}
	}
	(void)fclose(fp);
	return ret;
}

/*
 *  stress_ksm_unmerge_mremap_out()
 *	move *n pages at off out to the scratch range; before 6.17 mremap()
 *	refuses (EFAULT) a range over more than one VMA, and the moves back
 *	can leave the range in pieces the kernel did not merge: then the move
 *	is cut at the VMA's end (counted), not failed
 */
static int stress_ksm_unmerge_mremap_out(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_mremap_t *m,
	const size_t off, size_t *n)
{
	uintptr_t end;

	if (stress_ksm_unmerge_mremap_move(m->range + off, m->scratch + off, *n * ctx->page_size) == 0)
		return 0;
	if (errno != EFAULT)
		return -1;
	end = stress_ksm_unmerge_mremap_vma_end(m->range + off);
	if (!end || end >= (uintptr_t)(m->range + off + *n * ctx->page_size)) {
		errno = EFAULT;
		return -1;
	}
	*n = (end - (uintptr_t)(m->range + off)) / ctx->page_size;
	stress_ksm_unmerge_racer_stats(ctx, KSM_RACER_IDX_MREMAP)->detail[KSM_MREMAP_D_CUT]++;
	return stress_ksm_unmerge_mremap_move(m->range + off, m->scratch + off, *n * ctx->page_size);
}

/*
 *  stress_ksm_unmerge_mremap_one()
 *	move 1..16 random pages out and back, checking their data each way
 */
static void stress_ksm_unmerge_mremap_one(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_mremap_t *m)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, KSM_RACER_IDX_MREMAP);
	size_t n = 1 + stress_mwc32modn(KSM_MREMAP_MAX_PAGES);
	const size_t first = stress_mwc32modn((uint32_t)(m->npages - n + 1));
	const size_t off = first * ctx->page_size;
	uint64_t was_ksm;
	ssize_t bad;

	stress_ksm_unmerge_racer_merged_op_begins(ctx, KSM_RACER_IDX_MREMAP);
	was_ksm = stress_ksm_unmerge_ksm_page_count(ctx, m->range + off, n);
	if (stress_ksm_unmerge_mremap_out(ctx, m, off, &n) < 0) {
		stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_MREMAP, "moving %zu pages (%zu KSM) out failed, errno=%d (%s)",
			n, (size_t)was_ksm, errno, strerror(errno));
		return;
	}
	bad = stress_ksm_unmerge_first_bad_page(m->scratch + off, n, ctx->templates, ctx->page_size);
	if (bad >= 0)
		stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_MREMAP, "page %zu of the range lost its data when moved "
			"(%" PRIu64 " of the %zu moved pages were KSM pages)", first + (size_t)bad, was_ksm, n);
	else
		rs->evidence += was_ksm;
	m->still_ksm += stress_ksm_unmerge_ksm_page_count(ctx, m->scratch + off, n);
	if (stress_ksm_unmerge_mremap_move(m->scratch + off, m->range + off, n * ctx->page_size) < 0) {
		m->broken = true;
		stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_MREMAP, "moving %zu pages back failed, errno=%d (%s)",
			n, errno, strerror(errno));
		return;
	}
	bad = stress_ksm_unmerge_first_bad_page(m->range + off, n, ctx->templates, ctx->page_size);
	if (bad >= 0)
		stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_MREMAP, "page %zu of the range lost its data when moved back",
			first + (size_t)bad);
	rs->ops++;
}

/*
 *  stress_ksm_unmerge_mremap_thread()
 *	racer: moves in the merged and unmerging phases
 */
static void *stress_ksm_unmerge_mremap_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_MREMAP;
	stress_ksm_unmerge_mremap_t *m = (stress_ksm_unmerge_mremap_t *)ctx->run[idx].priv;

	while (!ctx->racers_stop) {
		const int phase = ctx->phase;

		if (!stress_ksm_unmerge_racer_may_act(ctx, idx))
			continue;
		if (!m->broken && (phase == KSM_PHASE_MERGED || phase == KSM_PHASE_UNMERGING)) {
			stress_ksm_unmerge_mremap_one(ctx, m);
			(void)shim_nanosleep_uint64(stress_mwc32modn(50000));
			continue;
		}
		(void)shim_nanosleep_uint64(200000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_mremap_final()
 *	IDLE, every racer parked: a last unmerge of the range leaves no KSM
 *	page and the data intact
 */
static void stress_ksm_unmerge_mremap_final(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_mremap_t *m)
{
	uint64_t ksm;
	ssize_t bad;

	if (m->broken || ctx->quiesce != ctx->cycle)
		return;
	if (madvise(m->range, m->size, MADV_UNMERGEABLE) < 0) {
		if (errno != EINTR || stress_continue(ctx->args))
			stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_MREMAP, "MADV_UNMERGEABLE of the range failed, errno=%d (%s)",
				errno, strerror(errno));
		return;
	}
	ksm = stress_ksm_unmerge_ksm_page_count(ctx, m->range, m->npages);
	if (ksm)
		stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_MREMAP, "%" PRIu64 " pages of the range are still KSM pages "
			"after MADV_UNMERGEABLE with no move running", ksm);
	bad = stress_ksm_unmerge_first_bad_page(m->range, m->npages, ctx->templates, ctx->page_size);
	if (bad >= 0)
		stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_MREMAP, "page %zd of the range lost its data after the "
			"moves and the unmerge", bad);
}

/*
 *  stress_ksm_unmerge_mremap_cycle()
 *	MERGING: range mergeable; UNMERGING: unmerge it while moves run;
 *	IDLE: the final check
 */
static void stress_ksm_unmerge_mremap_cycle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const int phase)
{
	stress_ksm_unmerge_mremap_t *m = (stress_ksm_unmerge_mremap_t *)ctx->run[idx].priv;
	const int advice = (phase == KSM_PHASE_MERGING) ? MADV_MERGEABLE : MADV_UNMERGEABLE;

	if (!m || m->broken)
		return;
	if (phase == KSM_PHASE_IDLE) {
		stress_ksm_unmerge_mremap_final(ctx, m);
		return;
	}
	if (phase != KSM_PHASE_MERGING && phase != KSM_PHASE_UNMERGING)
		return;
	if (madvise(m->range, m->size, advice) < 0 && (errno != EINTR || stress_continue(ctx->args)))
		stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_MREMAP, "%s of the range failed, errno=%d (%s)",
			advice == MADV_MERGEABLE ? "MADV_MERGEABLE" : "MADV_UNMERGEABLE",
			errno, strerror(errno));
}

/*
 *  stress_ksm_unmerge_mremap_free()
 *	unmap both ranges, free the state
 */
static void stress_ksm_unmerge_mremap_free(stress_ksm_unmerge_mremap_t *m)
{
	if (!m)
		return;
	if (m->range)
		(void)munmap(m->range, m->size);
	if (m->scratch)
		(void)munmap(m->scratch, m->size);
	free(m);
}

/*
 *  stress_ksm_unmerge_mremap_map()
 *	the range (filled with the "same" page) and the scratch reservation;
 *	one test move checks the kernel has MREMAP_DONTUNMAP for it
 */
static int stress_ksm_unmerge_mremap_map(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_mremap_t *m,
	char *reason, const size_t len)
{
	size_t k;

	m->range = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	m->scratch = mmap(NULL, m->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m->range == MAP_FAILED || m->scratch == MAP_FAILED) {
		(void)snprintf(reason, len, "mmap of 2 x %zu bytes failed, errno=%d (%s)",
			m->size, errno, strerror(errno));
		return -1;
	}
#if defined(MADV_NOHUGEPAGE)
	(void)madvise(m->range, m->size, MADV_NOHUGEPAGE);
#endif
	stress_memory_anon_name_set(m->range, m->size, "ksm-unmerge-mremap");
	for (k = 0; k < m->npages; k++)
		(void)shim_memcpy(m->range + k * ctx->page_size, ctx->templates, ctx->page_size);
	if (stress_ksm_unmerge_mremap_move(m->range, m->scratch, ctx->page_size) < 0 ||
	    stress_ksm_unmerge_mremap_move(m->scratch, m->range, ctx->page_size) < 0) {
		(void)snprintf(reason, len, "mremap(MREMAP_DONTUNMAP) failed, errno=%d (%s) "
			"(needs Linux 5.7)", errno, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_mremap_start()
 *	map the ranges, start the thread (the merged phase waits for its first move)
 */
static int stress_ksm_unmerge_mremap_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	stress_ksm_unmerge_mremap_t *m = stress_ksm_unmerge_racer_alloc(ctx, idx, sizeof(*m), true);

	if (!m)
		return -1;
	m->npages = ctx->npages / 4;
	if (m->npages < KSM_MREMAP_MIN_PAGES)
		m->npages = KSM_MREMAP_MIN_PAGES;
	if (m->npages > KSM_MREMAP_MAX_RANGE)
		m->npages = KSM_MREMAP_MAX_RANGE;
	m->size = m->npages * ctx->page_size;
	if (stress_ksm_unmerge_mremap_map(ctx, m, rs->reason, sizeof(rs->reason)) < 0) {
		stress_ksm_unmerge_mremap_free(m);
		return -1;
	}
	ctx->run[idx].priv = m;
	ctx->run[idx].merged_phase_waits = true;
	/* its pages merge too and count in this mm's ksm_merging_pages */
	ctx->racers_disturb_counts = true;
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_mremap_thread) < 0) {
		stress_ksm_unmerge_mremap_free(m);
		ctx->run[idx].priv = NULL;
		ctx->run[idx].merged_phase_waits = false;
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_mremap_stop()
 *	join the thread, unmap
 */
static void stress_ksm_unmerge_mremap_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_mremap_t *m = (stress_ksm_unmerge_mremap_t *)ctx->run[idx].priv;

	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	if (m)
		pr_dbg("%s: mremap racer: %" PRIu64 " moved KSM pages were still KSM pages at the "
			"new address\n", ctx->args->name, m->still_ksm);
	stress_ksm_unmerge_mremap_free(m);
	ctx->run[idx].priv = NULL;
}

#define KSM_RACER_MREMAP                                               \
	.path = "mremap moves of merged ranges, merged and unmerging", \
	.evidence = "ksm-pages-moved",                                 \
	.details = { "moves-cut-at-vma-end" },                         \
	.supported = stress_ksm_unmerge_racer_supported_always,        \
	.start = stress_ksm_unmerge_mremap_start,                      \
	.stop = stress_ksm_unmerge_mremap_stop,                        \
	.cycle = stress_ksm_unmerge_mremap_cycle,
