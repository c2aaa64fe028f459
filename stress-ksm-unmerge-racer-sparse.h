/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racer-sparse.h: the sparse racer (private header of
 * stress-ksm-unmerge.c, included once, before the racer table).
 */

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
		if (stress_ksm_unmerge_entry_is_ksm(s->entries[k], s->flags[k], zero_pfn)) {
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
		if (stress_ksm_unmerge_page_lookup(ctx, ctx->pagemap_fd, s->base + k * s->stride,
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

	if (stress_ksm_unmerge_sparse_lookup(ctx, s) < 0) {
		rs->failures++;
		pr_fail("%s: sparse racer: pagemap read failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		return;
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
 *  stress_ksm_unmerge_sparse_ksm_before()
 *	before the timed unmerge: count the populated pages that are KSM
 *	pages (the evidence: the walk met KSM pages, not just holes)
 */
static int stress_ksm_unmerge_sparse_ksm_before(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_sparse_t *s)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	size_t k;

	if (stress_ksm_unmerge_sparse_lookup(ctx, s) < 0) {
		rs->failures++;
		pr_fail("%s: sparse racer: pagemap read before the unmerge failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		return -1;
	}
	for (k = 0; k < s->populated; k++)
		rs->evidence += stress_ksm_unmerge_entry_is_ksm(s->entries[k], s->flags[k], ctx->zero_pfn);
	rs->detail[1] += s->populated;
	return 0;
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
	if (stress_ksm_unmerge_sparse_ksm_before(ctx, idx, s) < 0)
		return;
	t0 = stress_ksm_unmerge_now_ns();
	ret = madvise(s->base, s->size, MADV_UNMERGEABLE);
	err = errno;
	t1 = stress_ksm_unmerge_now_ns();
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
	rs->detail[0] += s->size / ctx->page_size;
	rs->op_ns += t1 - t0;
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
 *  stress_ksm_unmerge_commit_room()
 *	CommitLimit - Committed_AS in bytes when vm.overcommit_memory is 2
 *	(strict: MAP_NORESERVE is ignored, a private writable map is charged
 *	in full); false in the heuristic and always-overcommit modes
 */
static bool stress_ksm_unmerge_commit_room(uint64_t *room)
{
	char buf[4096];
	const char *lim, *used;
	uint64_t limit, committed;
	ssize_t n;

	n = stress_fs_file_read("/proc/sys/vm/overcommit_memory", buf, sizeof(buf) - 1);
	if (n <= 0 || buf[0] != '2')
		return false;
	n = stress_fs_file_read("/proc/meminfo", buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	lim = strstr(buf, "CommitLimit:");
	used = strstr(buf, "Committed_AS:");
	if (!lim || !used)
		return false;
	limit = strtoull(lim + 12, NULL, 10) * KB;
	committed = strtoull(used + 13, NULL, 10) * KB;
	*room = (limit > committed) ? limit - committed : 0;
	return true;
}

/*
 *  stress_ksm_unmerge_sparse_fit()
 *	under strict overcommit shrink the sparse range to a quarter of the
 *	commit room left, shared by the instances, and say so
 */
static void stress_ksm_unmerge_sparse_fit(stress_ksm_unmerge_ctx_t *ctx, size_t *size)
{
	uint64_t room, fit;

	if (!stress_ksm_unmerge_commit_room(&room))
		return;
	fit = (room / 4 / ctx->args->instances) & ~((uint64_t)ctx->page_size - 1);
	if (fit < 2 * ctx->page_size)
		fit = 2 * ctx->page_size;
	if (*size <= fit)
		return;
	if (stress_instance_zero(ctx->args))
		pr_inf("%s: sparse racer: vm.overcommit_memory=2 charges the whole range (MAP_NORESERVE "
			"is ignored): shrinking it from %zu to %" PRIu64 " bytes per instance, a quarter "
			"of CommitLimit - Committed_AS (%" PRIu64 " bytes)\n", ctx->args->name, *size, fit, room);
	*size = (size_t)fit;
}

/*
 *  stress_ksm_unmerge_sparse_map()
 *	reserve the range, populate one page per stride with the "same" template
 */
static int stress_ksm_unmerge_sparse_map(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_sparse_t *s)
{
	size_t k;

	s->size = stress_ksm_unmerge_sparse_bytes(ctx->page_size);
	stress_ksm_unmerge_sparse_fit(ctx, &s->size);
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
	stress_ksm_unmerge_sparse_t *s;

	if (stress_ksm_unmerge_racer_need_pfns(ctx, idx, "no evidence possible") < 0)
		return -1;
	s = calloc(1, sizeof(*s));
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

#define KSM_RACER_SPARSE                                                 \
	.flags = KSM_RACER_F_MM,                                         \
	.path = "unmerge walk over unpopulated ranges",                  \
	.evidence = "sparse-ksm-pages",                                  \
	.details = { "sparse-pages-walked", "populated-pages-checked" }, \
	.op_ns_metric = "nanosecs per sparse page",                      \
	.supported = stress_ksm_unmerge_racer_supported_always,          \
	.start = stress_ksm_unmerge_sparse_start,                        \
	.stop = stress_ksm_unmerge_sparse_stop,                          \
	.cycle = stress_ksm_unmerge_sparse_cycle,
