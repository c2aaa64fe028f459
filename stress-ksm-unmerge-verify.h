/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-verify.h: page verification of one cycle (private
 * header of stress-ksm-unmerge.c, included once): the region scan (pfns
 * sorted, pages grouped by frame), waiting for ksmd to merge, and the
 * checks whose independent signals must agree: verify_merge (the pages
 * really share frames, as the counters say), and after the unmerge
 * verify_unmerge: verify_pfns (no page keeps a KSM frame), verify_data
 * (every byte is what was written), VMA flags kept, ksm_zero_pages and
 * cow_ksm moved as the pages say.  The MADV_(UN)MERGEABLE / prctl
 * switches they check stay in stress-ksm-unmerge.c.
 */

/*
 *  stress_ksm_unmerge_pfn_isort()
 *	insertion sort of a small run of pfns
 */
static void stress_ksm_unmerge_pfn_isort(uint64_t *pfns, const size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		const uint64_t v = pfns[i];

		for (j = i; j > 0 && pfns[j - 1] > v; j--)
			pfns[j] = pfns[j - 1];
		pfns[j] = v;
	}
}

/*
 *  stress_ksm_unmerge_pfn_sort_digit()
 *	in-place MSD radix sort (American flag) of n pfns on the byte at
 *	shift and the bytes below it; no scratch array, so the scan's memory
 *	is 8 bytes per page
 */
static void stress_ksm_unmerge_pfn_sort_digit(uint64_t *pfns, const size_t n, const unsigned int shift)
{
	size_t count[256], next[256], end[256], sum = 0, b;

	if (n < 32) {
		stress_ksm_unmerge_pfn_isort(pfns, n);
		return;
	}
	(void)shim_memset(count, 0, sizeof(count));
	for (b = 0; b < n; b++)
		count[(pfns[b] >> shift) & 0xff]++;
	for (b = 0; b < 256; b++) {
		next[b] = sum;
		sum += count[b];
		end[b] = sum;
	}
	if (count[(pfns[0] >> shift) & 0xff] != n) {
		/* cycle each misplaced pfn into its bucket */
		for (b = 0; b < 256; b++) {
			while (next[b] < end[b]) {
				uint64_t v = pfns[next[b]];
				size_t d = (v >> shift) & 0xff;

				while (d != b) {
					const uint64_t t = pfns[next[d]];

					pfns[next[d]++] = v;
					v = t;
					d = (v >> shift) & 0xff;
				}
				pfns[next[b]++] = v;
			}
		}
	}
	if (!shift)
		return;
	for (b = 0, sum = 0; b < 256; sum += count[b], b++) {
		if (count[b] > 1)
			stress_ksm_unmerge_pfn_sort_digit(pfns + sum, count[b], shift - 8);
	}
}

/*
 *  stress_ksm_unmerge_pfn_sort()
 *	sort n pfns in place, starting at the highest byte max_pfn uses
 */
static void stress_ksm_unmerge_pfn_sort(uint64_t *pfns, const size_t n, const uint64_t max_pfn)
{
	unsigned int shift = 0;

	while (shift < 56 && (max_pfn >> (shift + 8)))
		shift += 8;
	stress_ksm_unmerge_pfn_sort_digit(pfns, n, shift);
}

/*
 *  stress_ksm_unmerge_pm_entry()
 *	failure paths: pagemap entry of region page i (0 if unreadable)
 */
static uint64_t stress_ksm_unmerge_pm_entry(const stress_ksm_unmerge_ctx_t *ctx, const size_t i)
{
	uint64_t e = 0;

	if (stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region + i * ctx->page_size, 1,
			ctx->page_size, &e) < 0)
		return 0;
	return e;
}

/*
 *  stress_ksm_unmerge_pfn_pages()
 *	failure path: the first two region pages mapping pfn (from pagemap)
 */
static void stress_ksm_unmerge_pfn_pages(const stress_ksm_unmerge_ctx_t *ctx, const uint64_t pfn,
	size_t *first, size_t *second)
{
	size_t i, found = 0;

	*first = *second = ctx->npages;
	for (i = 0; i < ctx->npages && found < 2; i++) {
		const uint64_t e = stress_ksm_unmerge_pm_entry(ctx, i);

		if ((e & PM_PRESENT) && (e & PM_PFN_MASK) == pfn) {
			if (found++ == 0)
				*first = i;
			else
				*second = i;
		}
	}
}

/*
 *  stress_ksm_unmerge_region_collect()
 *	pagemap of the region: present pages' pfns (with the exclusive bit)
 *	sorted into ctx->pfns, ctx->scan_n of them; swapped-out pages counted
 */
static int stress_ksm_unmerge_region_collect(stress_ksm_unmerge_ctx_t *ctx)
{
	size_t i, n = 0;
	uint64_t max_pfn = 0;

	ctx->scan_n = 0;
	ctx->scan_swapped = 0;
	if (!ctx->have_pfns)
		return -1;
	for (i = 0; i < ctx->npages; i++) {
		uint64_t e;

		/* pagemap in chunks: the scan's scratch does not grow with the region */
		if (!(i % KSM_UNMERGE_PM_CHUNK) && stress_ksm_unmerge_stop_seen(ctx, "page scan"))
			return -1;
		if (!(i % KSM_UNMERGE_PM_CHUNK) &&
		    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region + i * ctx->page_size,
				STRESS_MINIMUM(KSM_UNMERGE_PM_CHUNK, ctx->npages - i), ctx->page_size,
				ctx->pagemap) < 0)
			return -1;
		e = ctx->pagemap[i % KSM_UNMERGE_PM_CHUNK];
		if (!(e & PM_PRESENT)) {
			ctx->scan_swapped += !!(e & PM_SWAP);
			continue;
		}
		/* a shared pfn is never exclusive, so the bit does not split its group */
		ctx->pfns[n] = (e & PM_PFN_MASK) | (e & PM_EXCLUSIVE);
		if (ctx->pfns[n] > max_pfn)
			max_pfn = ctx->pfns[n];
		n++;
	}
	/* radix, not qsort: qsort was 2/3 of the stressor's user time */
	if (n > 1)
		stress_ksm_unmerge_pfn_sort(ctx->pfns, n, max_pfn);
	ctx->scan_n = n;
	return 0;
}

/*
 *  stress_ksm_unmerge_group_what()
 *	what the region pages of sorted group pfns[i..j) are; kpageflags read
 *	once per group (singles sampled if asked: then judged without it)
 */
static int stress_ksm_unmerge_group_what(stress_ksm_unmerge_ctx_t *ctx, const size_t i,
	const size_t j, const bool sample, size_t *distinct, uint64_t *flags)
{
	const uint64_t v = ctx->pfns[i];
	const uint64_t pfn = v & PM_PFN_MASK;

	*flags = 0;
	/* shared pfns are always checked; singles sampled unless verifying */
	if ((j - i > 1) || !sample || (((*distinct)++ & 7) == (ctx->cycle & 7)) ||
	    (ctx->zero_pfn && pfn == ctx->zero_pfn))
		*flags = stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, pfn);
	return stress_ksm_unmerge_what(ctx->zero_pfn, PM_PRESENT | v, *flags, j - i);
}

/*
 *  stress_ksm_unmerge_group_end()
 *	end of the run of equal pfns starting at i
 */
static inline size_t stress_ksm_unmerge_group_end(const stress_ksm_unmerge_ctx_t *ctx, const size_t i)
{
	const uint64_t pfn = ctx->pfns[i] & PM_PFN_MASK;
	size_t j = i + 1;

	while (j < ctx->scan_n && (ctx->pfns[j] & PM_PFN_MASK) == pfn)
		j++;
	return j;
}

/*
 *  stress_ksm_unmerge_region_scan()
 *	count KSM pages and KSM zero pages in the region (stress_ksm_unmerge_what:
 *	the self-tested signals), reading kpageflags once per distinct pfn
 *	(singles sampled if asked); *present counts present pages that are
 *	not the zero page
 */
static int stress_ksm_unmerge_region_scan(stress_ksm_unmerge_ctx_t *ctx,
	const bool sample, uint64_t *ksm, uint64_t *zero, size_t *present)
{
	size_t i, distinct = 0, groups = 0;

	*ksm = 0;
	*zero = 0;
	*present = 0;
	if (stress_ksm_unmerge_region_collect(ctx) < 0)
		return -1;
	for (i = 0; i < ctx->scan_n; ) {
		const size_t j = stress_ksm_unmerge_group_end(ctx, i);
		uint64_t flags;

		if (!(++groups & 4095) && stress_ksm_unmerge_stop_seen(ctx, "page scan"))
			return -1;
		switch (stress_ksm_unmerge_group_what(ctx, i, j, sample, &distinct, &flags)) {
		case KSM_PAGE_ZERO:
			/* without use_zero_pages it is a read-faulted hole, not KSM's */
			if (ctx->ksm_zero)
				*zero += j - i;
			break;
		case KSM_PAGE_KSM:
			*ksm += j - i;
			*present += j - i;
			break;
		default:
			*present += j - i;
			break;
		}
		i = j;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_phase_set()
 *	enter a cycle phase; racers see it and may act on it
 */
static void stress_ksm_unmerge_phase_set(stress_ksm_unmerge_ctx_t *ctx, const int phase);

/*
 *  stress_ksm_unmerge_counter_source()
 *	best source of merged-page counts: per-process counters that cover the
 *	pattern's pages, else pagemap (root), else whatever counter there is
 */
static int stress_ksm_unmerge_counter_source(const bool ksm_stat, const bool stat_has_zero,
	const bool merging_pages, const bool pfns, const bool need_zero)
{
	if (ksm_stat && (stat_has_zero || !need_zero))
		return KSM_COUNTERS_KSM_STAT;
	if (merging_pages && !need_zero)
		return KSM_COUNTERS_MERGING_PAGES;
	if (pfns)
		return KSM_COUNTERS_PAGEMAP;
	if (ksm_stat)
		return KSM_COUNTERS_KSM_STAT;
	return merging_pages ? KSM_COUNTERS_MERGING_PAGES : KSM_COUNTERS_NONE;
}

/*
 *  stress_ksm_unmerge_merged_now()
 *	pages of this process merged now (KSM pages in *merging, KSM zero pages in *zero)
 */
static uint64_t stress_ksm_unmerge_merged_now(stress_ksm_unmerge_ctx_t *ctx,
	int64_t *merging, int64_t *zero)
{
	if (ctx->counters == KSM_COUNTERS_PAGEMAP) {
		if (stress_ksm_unmerge_region_scan(ctx, false, &ctx->last_scan.ksm, &ctx->last_scan.zero,
				&ctx->last_scan.present) < 0) {
			ctx->last_scan.ksm = ctx->last_scan.zero = 0;
			ctx->last_scan.cycle = 0;
		} else {
			ctx->last_scan.cycle = ctx->cycle;
		}
		*merging = (int64_t)ctx->last_scan.ksm;
		*zero = (int64_t)ctx->last_scan.zero;
	} else {
		(void)stress_ksm_unmerge_counters(ctx, merging, zero);
	}
	return (uint64_t)(*merging > 0 ? *merging : 0) + (uint64_t)(*zero > 0 ? *zero : 0);
}

/*
 *  stress_ksm_unmerge_region_merged()
 *	counters say enough is merged: check the region itself holds it (the
 *	counters also count other mergeable memory under prctl or the
 *	sparse and thp racers)
 */
static bool stress_ksm_unmerge_region_merged(stress_ksm_unmerge_ctx_t *ctx, const uint64_t want)
{
	if (!ctx->have_pfns || ctx->counters == KSM_COUNTERS_PAGEMAP)
		return true;
	if (stress_ksm_unmerge_region_scan(ctx, false, &ctx->last_scan.ksm, &ctx->last_scan.zero,
			&ctx->last_scan.present) < 0)
		return true;
	ctx->last_scan.cycle = ctx->cycle;
	return ctx->last_scan.ksm + ctx->last_scan.zero >= want;
}

/*
 *  stress_ksm_unmerge_merge_wait()
 *	sleeping wait for ksmd to merge the prediction; 1 merged, 0 partial
 *	or timeout, -1 stopped by the end of the run
 */
static int stress_ksm_unmerge_merge_wait(stress_ksm_unmerge_ctx_t *ctx, const double bound,
	int64_t *merging, int64_t *zero)
{
	const double t0 = stress_time_now();
	const uint64_t want = ctx->expect_merged + ctx->expect_zero;
	uint64_t scans0 = stress_ksm_unmerge_full_scans(ctx);
	uint64_t stale_scans, last_total = 0, stable_scans = 0, last_scans = scans0;
	uint64_t sleep_ns = 500000;
	int64_t m0, z0;

	ctx->wait_timed_out = false;
	/* counts left from the last unmerge drain lazily: need a fresh full pass */
	(void)stress_ksm_unmerge_counters(ctx, &m0, &z0);
	stale_scans = (m0 > 0 && ctx->counters != KSM_COUNTERS_PAGEMAP) ? 2 : 0;
	for (;;) {
		uint64_t scans = stress_ksm_unmerge_full_scans(ctx), total;
		const double now = stress_time_now();

		if (stress_ksm_unmerge_ending(ctx))
			return -1;
		if (scans < scans0)
			scans0 = scans;		/* run=2 by someone else reset the count */
		ctx->last_scan.cycle = 0;	/* only a scan that ends the wait is kept */
		total = stress_ksm_unmerge_merged_now(ctx, merging, zero);
		if (scans - scans0 >= stale_scans) {
			if (want && total >= want && stress_ksm_unmerge_region_merged(ctx, want))
				return 1;
			if (scans != last_scans) {
				stable_scans = (total == last_total) ? stable_scans + 1 : 0;
				last_total = total;
				last_scans = scans;
			}
			/* nothing more will merge: unique pages or pinned pages */
			if (scans - scans0 >= 3 && (stable_scans >= 2 || !want))
				return want ? 0 : 1;
		}
		if (now - t0 > bound) {
			ctx->wait_timed_out = true;
			return 0;
		}
		(void)shim_nanosleep_uint64(sleep_ns);
		if (sleep_ns < 4000000)
			sleep_ns += sleep_ns / 2;
	}
}

/*
 *  stress_ksm_unmerge_fail()
 *	report a verification failure and count it
 */
static void stress_ksm_unmerge_fail(stress_ksm_unmerge_ctx_t *ctx)
{
	ctx->st->failures++;
}

/*
 *  stress_ksm_unmerge_verify_merge()
 *	the region really holds the predicted KSM pages and zero pages
 */
static int stress_ksm_unmerge_verify_merge(stress_ksm_unmerge_ctx_t *ctx,
	const int waited, uint64_t *ksm, uint64_t *zero)
{
	stress_args_t *args = ctx->args;
	size_t present;

	if (ctx->last_scan.cycle == ctx->cycle) {
		/* the scan that ended the merge wait: no need to read it all again */
		*ksm = ctx->last_scan.ksm;
		*zero = ctx->last_scan.zero;
		present = ctx->last_scan.present;
	} else if (stress_ksm_unmerge_region_scan(ctx, false, ksm, zero, &present) < 0) {
		return 0;	/* no PFNs (not root): counters only */
	}
	/* swapped-out pages (pagemap bit 62) are not missing */
	if (!ctx->racers_disturb_layout && present + *zero + ctx->scan_swapped != ctx->npages) {
		pr_fail("%s: %zu of %zu pages present or swapped out after merge, expected all\n",
			args->name, present + (size_t)*zero + ctx->scan_swapped, ctx->npages);
		return -1;
	}
	/*
	 * A zero-filled page that ksmd could not swap for the zero page (a
	 * raised refcount: migration, a pin) goes on to merge as an ordinary
	 * KSM page (mm/ksm.c, cmp_and_merge_page), so the zero-kind pages
	 * bound only the sum, not the KSM pages alone
	 */
	if (*zero > ctx->expect_zero || *ksm + *zero > ctx->expect_merged + ctx->expect_zero) {
		pr_fail("%s: %" PRIu64 " KSM pages and %" PRIu64 " KSM zero pages merged, "
			"pattern %s allows at most %" PRIu64 " in all, %" PRIu64 " of them zero pages\n",
			args->name, *ksm, *zero, stress_ksm_unmerge_patterns[ctx->pattern],
			ctx->expect_merged + ctx->expect_zero, ctx->expect_zero);
		return -1;
	}
	if (*ksm > ctx->expect_merged)
		pr_dbg("%s: cycle %" PRIu64 ": %" PRIu64 " zero-filled pages merged as ordinary KSM "
			"pages, not onto the zero page\n", args->name, ctx->cycle, *ksm - ctx->expect_merged);
	if (waited > 0 && !ctx->racers_disturb_counts &&
	    (*ksm < ctx->expect_merged || *ksm + *zero < ctx->expect_merged + ctx->expect_zero)) {
		pr_fail("%s: ksmd reported the merge complete but the region has %" PRIu64
			" KSM pages and %" PRIu64 " KSM zero pages, expected %" PRIu64 " and %" PRIu64 "\n",
			args->name, *ksm, *zero, ctx->expect_merged, ctx->expect_zero);
		return -1;
	}
	return 0;
}

/* A page that may still be a KSM page after the unmerge, and the signals saying so */
typedef struct {
	uint64_t pfn;
	size_t sharers;			/* region pages on it */
	bool kpf;			/* A: KPF_KSM set (trusted) */
	bool mapping;			/* B: pfn shared in the region, or not exclusive */
} stress_ksm_unmerge_suspect_t;

#define KSM_UNMERGE_SUSPECTS	(4)	/* suspects confirmed by a write, per cycle */

/*
 *  stress_ksm_unmerge_cow_probe()
 *	C: does a write (an atomic OR of 0: data unchanged) move region page
 *	i to a new frame, as a write to a KSM page must; 0 if it stayed or
 *	cannot be written (uffd-wp armed), 1 moved; *after its new pfn
 */
static int stress_ksm_unmerge_cow_probe(stress_ksm_unmerge_ctx_t *ctx, const size_t i, uint64_t *after)
{
	const uint64_t e0 = stress_ksm_unmerge_pm_entry(ctx, i);
	uint64_t e1;

	*after = 0;
	if (!(e0 & PM_PRESENT) || (e0 & PM_UFFD_WP))
		return 0;
	(void)__atomic_fetch_or((uint64_t *)(ctx->region + i * ctx->page_size), 0, __ATOMIC_SEQ_CST);
	e1 = stress_ksm_unmerge_pm_entry(ctx, i);
	*after = stress_ksm_unmerge_pm_pfn(e1);
	return *after && *after != (e0 & PM_PFN_MASK);
}

/*
 *  stress_ksm_unmerge_disagree()
 *	kernel signals disagree: say so once per run, with the numbers; not a failure
 */
static void FORMAT(printf, 2, 3) stress_ksm_unmerge_disagree(stress_ksm_unmerge_ctx_t *ctx, const char *fmt, ...)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	char buf[384];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (sh && !__atomic_exchange_n(&sh->disagree_reported, true, __ATOMIC_SEQ_CST))
		pr_inf("%s: signals disagree (cycle %" PRIu64 "): %s; not counted as an unmerge failure\n",
			ctx->args->name, ctx->cycle, buf);
	else
		pr_dbg("%s: signals disagree (cycle %" PRIu64 "): %s\n", ctx->args->name, ctx->cycle, buf);
}

/*
 *  stress_ksm_unmerge_suspects_judge()
 *	a suspect is still a KSM page only if two of its signals agree
 *	(A: KPF_KSM, B: pfn sharing or exclusive bit, C: a write moves it;
 *	B by the exclusive bit alone with C only where KPF_KSM lies)
 */
static int stress_ksm_unmerge_suspects_judge(stress_ksm_unmerge_ctx_t *ctx,
	const stress_ksm_unmerge_suspect_t *sus, const size_t nsus, const uint64_t total,
	const uint64_t kpf_pages, const uint64_t ksm_before, const int64_t cow_delta)
{
	size_t k, first = ctx->npages, second;
	int64_t merging = -1, zero = -1;
	uint64_t after = 0;

	for (k = 0; k < nsus && k < KSM_UNMERGE_SUSPECTS; k++) {
		const stress_ksm_unmerge_suspect_t *s = &sus[k];
		int moved;

		stress_ksm_unmerge_pfn_pages(ctx, s->pfn, &first, &second);
		if (first >= ctx->npages)
			continue;	/* gone since the scan */
		moved = (s->kpf && s->mapping) ? 1 : stress_ksm_unmerge_cow_probe(ctx, first, &after);
		/*
		 * a write also moves a page a fork child shares (not exclusive):
		 * that with C alone counts only where KPF_KSM cannot be asked
		 */
		if ((s->kpf && s->mapping) ||
		    (moved && (s->kpf || s->sharers > 1 || !stress_ksm_unmerge_iface_cur ||
			       !stress_ksm_unmerge_iface_cur->kpf_ksm))) {
			pr_fail("%s: page %zu is still a KSM page after unmerge: pfn %#" PRIx64 " mapped by %zu "
				"region page(s)%s, KPF_KSM %s%s (%" PRIu64 " such pages)\n", ctx->args->name,
				first, s->pfn, s->sharers, s->mapping ? " and not exclusive" : "",
				s->kpf ? "set" : "clear or not trusted",
				(moved && !(s->kpf && s->mapping)) ? "; a write moved it to a new frame" : "", total);
			if (s->sharers > 1)
				pr_fail("%s: page %zu still shares pfn %#" PRIx64 " with page %zu after unmerge\n",
					ctx->args->name, second, s->pfn, first);
			return -1;
		}
	}
	(void)stress_ksm_unmerge_counters(ctx, &merging, &zero);
	stress_ksm_unmerge_disagree(ctx, "kpageflags says %" PRIu64 " KSM pages, %" PRIu64 " pages are "
		"flagged by one signal only, ksm_merging_pages says %" PRId64 " (drains lazily), cow_ksm moved "
		"by %" PRId64 " for %" PRIu64 " merged, and a write kept page %zu in its frame",
		kpf_pages, total, merging, cow_delta, ksm_before, first);
	return 0;
}

/*
 *  stress_ksm_unmerge_verify_pfns()
 *	after unmerge: no KSM page (by two agreeing signals, see
 *	suspects_judge) and, where unmerge unshares them (6.4+), no KSM zero page
 */
static int stress_ksm_unmerge_verify_pfns(stress_ksm_unmerge_ctx_t *ctx, const uint64_t ksm_before,
	const int64_t cow_delta)
{
	const stress_ksm_unmerge_iface_t *ifc = stress_ksm_unmerge_iface_cur ?
		stress_ksm_unmerge_iface_cur : &stress_ksm_unmerge_iface_default;
	stress_ksm_unmerge_suspect_t sus[KSM_UNMERGE_SUSPECTS];
	uint64_t zero = 0, total = 0, kpf_pages = 0, zero_pfn = 0;
	size_t i, nsus = 0, distinct = 0;

	if (stress_ksm_unmerge_region_collect(ctx) < 0)
		return 0;
	for (i = 0; i < ctx->scan_n; ) {
		const size_t j = stress_ksm_unmerge_group_end(ctx, i);
		uint64_t flags;
		const int what = stress_ksm_unmerge_group_what(ctx, i, j, !ctx->verify, &distinct, &flags);
		const bool kpf = ifc->kpf_ksm && (flags & STRESS_BIT_ULL(KPF_BIT_KSM));
		const bool mapping = (j - i > 1) || (ifc->excl && !(ctx->pfns[i] & PM_EXCLUSIVE));

		if (what == KSM_PAGE_ZERO) {
			if (ctx->ksm_zero) {
				zero += j - i;
				zero_pfn = ctx->pfns[i] & PM_PFN_MASK;
			}
		} else if (kpf || mapping) {
			if (nsus < KSM_UNMERGE_SUSPECTS)
				sus[nsus++] = (stress_ksm_unmerge_suspect_t){ ctx->pfns[i] & PM_PFN_MASK, j - i, kpf, mapping };
			total += j - i;
		}
		kpf_pages += (flags & STRESS_BIT_ULL(KPF_BIT_KSM)) ? j - i : 0;
		i = j;
	}
	if (zero && ifc->zero_unshare) {
		size_t first, second;

		stress_ksm_unmerge_pfn_pages(ctx, zero_pfn, &first, &second);
		pr_fail("%s: page %zu still maps the KSM zero page after unmerge (%" PRIu64 " such pages)\n",
			ctx->args->name, first, zero);
		return -1;
	}
	if (zero)
		pr_dbg("%s: %" PRIu64 " KSM zero pages still mapped after unmerge: kept by design before 6.4\n",
			ctx->args->name, zero);
	if (!nsus)
		return 0;
	return stress_ksm_unmerge_suspects_judge(ctx, sus, nsus, total, kpf_pages, ksm_before, cow_delta);
}

/*
 *  stress_ksm_unmerge_verify_data()
 *	every page (or a rotating 1/16 without --verify) holds its bytes
 */
static int stress_ksm_unmerge_verify_data(stress_ksm_unmerge_ctx_t *ctx)
{
	const size_t step = ctx->verify ? 1 : 16;
	size_t i;

	for (i = (size_t)(ctx->cycle % step); i < ctx->npages; i += step) {
		const uint8_t *page = ctx->region + i * ctx->page_size;
		ssize_t off;

		if (!(i & (KSM_UNMERGE_FILL_PAGES - 1)) && stress_ksm_unmerge_stop_seen(ctx, "data check"))
			return 0;
		off = stress_ksm_unmerge_page_check(ctx, i, page);
		if (off >= 0) {
			pr_fail("%s: data corrupted after unmerge: page %zu byte %zd is 0x%02x "
				"(pattern %s)\n", ctx->args->name, i, off, page[off],
				stress_ksm_unmerge_patterns[ctx->pattern]);
			return -1;
		}
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_verify_unmerge()
 *	pages really unshared, data intact, VMA flags kept, cow_ksm counted
 */
static int stress_ksm_unmerge_verify_unmerge(stress_ksm_unmerge_ctx_t *ctx,
	const uint64_t ksm_before, const int64_t cow_delta)
{
	stress_args_t *args = ctx->args;
	int64_t merging, zero;
	char vmflags[256];

	if (stress_ksm_unmerge_verify_pfns(ctx, ksm_before, cow_delta) < 0)
		return -1;
	if (stress_ksm_unmerge_verify_data(ctx) < 0)
		return -1;
	if ((stress_ksm_unmerge_counters(ctx, &merging, &zero) == 0) && (zero > 0) && ctx->ksm_zero &&
	    ctx->iface && ctx->iface->zero_unshare) {
		/* the region's pages were checked above: a count alone is not a failure */
		if (ctx->have_pfns) {
			stress_ksm_unmerge_disagree(ctx, "ksm_zero_pages is %" PRId64 " right after unmerge, "
				"but no region page maps the zero page", zero);
		} else {
			pr_fail("%s: ksm_zero_pages is %" PRId64 " right after unmerge, expected 0\n",
				args->name, zero);
			return -1;
		}
	}
	if (!ctx->racers_disturb_layout && ctx->vmflags_before[0] &&
	    (ctx->verify || (ctx->cycle & 7) == 0) &&
	    (stress_ksm_unmerge_vmflags(ctx->region, vmflags, sizeof(vmflags)) == 0) &&
	    strcmp(vmflags, ctx->vmflags_before)) {
		pr_fail("%s: VMA flags changed by merge/unmerge: before '%s', after '%s'\n",
			args->name, ctx->vmflags_before, vmflags);
		return -1;
	}
	if (!ctx->racers_disturb_layout && cow_delta >= 0 && (uint64_t)cow_delta < ksm_before &&
	    ctx->iface && ctx->iface->cow_ksm) {
		/* pages verified private above: a short count is a disagreement, not a failure */
		if (ctx->have_pfns) {
			stress_ksm_unmerge_disagree(ctx, "cow_ksm grew by %" PRId64 " during the unmerge of %"
				PRIu64 " KSM pages, but every region page is private", cow_delta, ksm_before);
		} else {
			pr_fail("%s: cow_ksm grew by %" PRId64 " during unmerge of %" PRIu64 " KSM pages\n",
				args->name, cow_delta, ksm_before);
			return -1;
		}
	}
	return 0;
}
