/*
 *  stress_ksm_unmerge_ending()
 *	stopped, or so close to the timeout that freeing the region would
 *	end after it (gigabytes take seconds to unmap)
 */
static bool stress_ksm_unmerge_ending(const stress_ksm_unmerge_ctx_t *ctx)
{
	return !stress_continue(ctx->args) || (ctx->teardown_secs > 0.0 &&
		stress_time_now() + ctx->teardown_secs >= ctx->args->time_end);
}

/*
 *  stress_ksm_unmerge_stop_seen()
 *	the run is ending: note the step that gave up (its cycle is not counted)
 */
static bool stress_ksm_unmerge_stop_seen(stress_ksm_unmerge_ctx_t *ctx, const char *step)
{
	if (!stress_ksm_unmerge_ending(ctx))
		return false;
	if (!ctx->stopped) {
		ctx->stopped = true;
		(void)shim_strscpy(ctx->st->stop_step, step, sizeof(ctx->st->stop_step));
	}
	return true;
}

/*
 *  stress_ksm_unmerge_counters()
 *	this process's merging pages and KSM zero pages, -1 when unknown;
 *	field by field: 6.1's ksm_stat has only ksm_rmap_items
 */
static void stress_ksm_unmerge_counters(const stress_ksm_unmerge_ctx_t *ctx, int64_t *merging, int64_t *zero)
{
	*merging = stress_ksm_unmerge_field(ctx->ksm_stat_fd, "ksm_merging_pages");
	*zero = stress_ksm_unmerge_field(ctx->ksm_stat_fd, "ksm_zero_pages");
	if (*merging < 0)
		*merging = stress_ksm_unmerge_field(ctx->merging_pages_fd, NULL);
}

typedef void (*stress_ksm_unmerge_page_fn)(stress_ksm_unmerge_ctx_t *ctx, void *arg, const size_t i,
	const uint64_t e, const int what, const size_t sharers, const uint64_t flags);

/*
 *  stress_ksm_unmerge_key_cmp()
 *	qsort: order (pfn << 12 | chunk index) keys
 */
static int stress_ksm_unmerge_key_cmp(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 *  stress_ksm_unmerge_scan_chunk()
 *	pages i0..i0+n of the region (pagemap in ctx->pm) grouped by pfn:
 *	kpageflags read once per group (singles sampled if asked), each page
 *	judged and handed to fn; sharers are the chunk's pages on its pfn
 */
static void stress_ksm_unmerge_scan_chunk(stress_ksm_unmerge_ctx_t *ctx, const size_t i0, const size_t n,
	const bool sample, size_t *distinct, stress_ksm_unmerge_page_fn fn, void *arg)
{
	size_t j, m = 0, a, b, k;

	for (j = 0; j < n; j++) {
		const uint64_t pfn = stress_ksm_unmerge_pm_pfn(ctx->pm[j]);

		if (pfn && pfn < (1ULL << 50))
			ctx->keys[m++] = (pfn << 12) | j;
		else
			fn(ctx, arg, i0 + j, ctx->pm[j], stress_ksm_unmerge_page_what(ctx->iface, ctx->pm[j], 0, 0, 0,
				stress_ksm_unmerge_page_kind(ctx->pattern, i0 + j)), 0, 0);
	}
	qsort(ctx->keys, m, sizeof(*ctx->keys), stress_ksm_unmerge_key_cmp);
	for (a = 0; a < m; a = b) {
		const uint64_t pfn = ctx->keys[a] >> 12;
		const uint64_t e = ctx->pm[ctx->keys[a] & 4095];
		uint64_t flags = 0, count = 0;

		for (b = a + 1; b < m && (ctx->keys[b] >> 12) == pfn; b++)
			;
		if (b - a > 1 || !sample || ((*distinct)++ & 7) == (ctx->cycle & 7) || pfn == ctx->iface->zero_pfn)
			flags = stress_ksm_unmerge_kpf(ctx->kpageflags_fd, pfn);
		if (!ctx->iface->kpf_ksm && b - a == 1 && !(e & PM_EXCLUSIVE))
			count = stress_ksm_unmerge_kpf(ctx->kpagecount_fd, pfn);
		for (k = a; k < b; k++) {
			const size_t i = i0 + (ctx->keys[k] & 4095);

			fn(ctx, arg, i, ctx->pm[ctx->keys[k] & 4095], stress_ksm_unmerge_page_what(ctx->iface,
				ctx->pm[ctx->keys[k] & 4095], flags, b - a, count,
				stress_ksm_unmerge_page_kind(ctx->pattern, i)), b - a, flags);
		}
	}
}

/*
 *  stress_ksm_unmerge_scan()
 *	judge every region page (fn gets each); scratch bounded by the
 *	chunk, whatever the region; -1 without PFNs or at the end of the run
 */
static int stress_ksm_unmerge_scan(stress_ksm_unmerge_ctx_t *ctx, const bool sample,
	stress_ksm_unmerge_page_fn fn, void *arg)
{
	size_t i, distinct = 0;

	if (!ctx->have_pfns)
		return -1;
	for (i = 0; i < ctx->npages; i += KSM_CHUNK) {
		const size_t n = STRESS_MINIMUM((size_t)KSM_CHUNK, ctx->npages - i);

		if (stress_ksm_unmerge_stop_seen(ctx, "page scan") ||
		    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region + i * ctx->page_size, n,
				ctx->page_size, ctx->pm) < 0)
			return -1;
		stress_ksm_unmerge_scan_chunk(ctx, i, n, sample, &distinct, fn, arg);
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_count_page()
 *	scan consumer: count KSM pages, KSM zero pages, present and swapped
 */
static void stress_ksm_unmerge_count_page(stress_ksm_unmerge_ctx_t *ctx, void *arg, const size_t i,
	const uint64_t e, const int what, const size_t sharers, const uint64_t flags)
{
	(void)arg;
	(void)i;
	(void)e;
	(void)sharers;
	(void)flags;
	ctx->last.ksm += (what == KSM_PAGE_KSM);
	ctx->last.zero += (what == KSM_PAGE_KZERO);
	ctx->last.present += (what == KSM_PAGE_KSM || what == KSM_PAGE_PRIVATE || what == KSM_PAGE_HOLE);
	ctx->last.swapped += (what == KSM_PAGE_SWAPPED);
}

/*
 *  stress_ksm_unmerge_region_count()
 *	count the region's KSM pages and KSM zero pages into ctx->last
 */
static int stress_ksm_unmerge_region_count(stress_ksm_unmerge_ctx_t *ctx)
{
	(void)shim_memset(&ctx->last, 0, sizeof(ctx->last));
	if (stress_ksm_unmerge_scan(ctx, false, stress_ksm_unmerge_count_page, NULL) < 0) {
		(void)shim_memset(&ctx->last, 0, sizeof(ctx->last));
		return -1;
	}
	ctx->last.cycle = ctx->cycle;
	return 0;
}

/*
 *  stress_ksm_unmerge_merged_now()
 *	pages merged now: from the per-process counters, or from the region
 *	where they cannot count the prediction (6.1 has no ksm_zero_pages)
 */
static uint64_t stress_ksm_unmerge_merged_now(stress_ksm_unmerge_ctx_t *ctx, int64_t *merging, int64_t *zero)
{
	if (ctx->by_pages) {
		(void)stress_ksm_unmerge_region_count(ctx);
		*merging = (int64_t)ctx->last.ksm;
		*zero = (int64_t)ctx->last.zero;
	} else {
		stress_ksm_unmerge_counters(ctx, merging, zero);
	}
	return (uint64_t)(*merging > 0 ? *merging : 0) + (uint64_t)(*zero > 0 ? *zero : 0);
}

/*
 *  stress_ksm_unmerge_merge_wait()
 *	sleeping wait (a busy poll from the merged mm slows ksmd through TLB
 *	shootdowns) for ksmd to merge the prediction; 1 merged, 0 partial or
 *	timed out, -1 stopped by the end of the run
 */
static int stress_ksm_unmerge_merge_wait(stress_ksm_unmerge_ctx_t *ctx, const double bound,
	int64_t *merging, int64_t *zero)
{
	const double t0 = stress_time_now();
	const uint64_t want = ctx->expect_merged + ctx->expect_zero;
	uint64_t scans0 = stress_ksm_unmerge_field(ctx->full_scans_fd, NULL), last_scans = scans0;
	uint64_t last_total = 0, stable = 0, stale, sleep_ns = 500000;
	int64_t m0, z0;

	ctx->wait_timed_out = false;
	/* counts left from the last unmerge drain lazily: need fresh full scans */
	stress_ksm_unmerge_counters(ctx, &m0, &z0);
	stale = (m0 > 0 && !ctx->by_pages) ? 2 : 0;
	for (;;) {
		const uint64_t scans = (uint64_t)stress_ksm_unmerge_field(ctx->full_scans_fd, NULL);
		uint64_t total;

		if (stress_ksm_unmerge_ending(ctx))
			return -1;
		if (scans < scans0)
			scans0 = scans;		/* run=2 by someone else reset the count */
		ctx->last.cycle = 0;
		total = stress_ksm_unmerge_merged_now(ctx, merging, zero);
		if (scans - scans0 >= stale) {
			/* the counters also count the racers' ranges: the region must hold it */
			if (want && total >= want && (!ctx->have_pfns || (ctx->last.cycle == ctx->cycle ?
			    ctx->last.ksm + ctx->last.zero : (stress_ksm_unmerge_region_count(ctx) < 0 ? want :
			    ctx->last.ksm + ctx->last.zero)) >= want))
				return 1;
			if (scans != last_scans) {
				stable = (total == last_total) ? stable + 1 : 0;
				last_total = total;
				last_scans = scans;
			}
			/* nothing more will merge: unique or pinned pages */
			if (scans - scans0 >= 3 && (stable >= 2 || !want))
				return want ? 0 : 1;
		}
		if (stress_time_now() - t0 > bound) {
			ctx->wait_timed_out = true;
			return 0;
		}
		(void)shim_nanosleep_uint64(sleep_ns);
		if (sleep_ns < 4000000)
			sleep_ns += sleep_ns / 2;
	}
}

/*
 *  stress_ksm_unmerge_verify_merge()
 *	the region holds the predicted KSM pages and KSM zero pages, no more
 */
static int stress_ksm_unmerge_verify_merge(stress_ksm_unmerge_ctx_t *ctx, const int waited,
	uint64_t *ksm, uint64_t *zero)
{
	const char *name = ctx->args->name;

	if (ctx->last.cycle != ctx->cycle && stress_ksm_unmerge_region_count(ctx) < 0)
		return 0;	/* no PFNs (not root): counters only */
	*ksm = ctx->last.ksm;
	*zero = ctx->last.zero;
	if (!ctx->disturb_layout && ctx->last.present + ctx->last.zero + ctx->last.swapped != ctx->npages) {
		pr_fail("%s: %zu of %zu pages present or swapped out after merge, expected all\n", name,
			ctx->last.present + (size_t)ctx->last.zero + ctx->last.swapped, ctx->npages);
		return -1;
	}
	/* a zero-filled page ksmd could not swap for the zero page merges as a KSM page */
	if (*zero > ctx->expect_zero || *ksm + *zero > ctx->expect_merged + ctx->expect_zero) {
		pr_fail("%s: %" PRIu64 " KSM pages and %" PRIu64 " KSM zero pages merged, pattern %s allows "
			"at most %" PRIu64 " in all, %" PRIu64 " of them zero pages\n", name, *ksm, *zero,
			stress_ksm_unmerge_patterns[ctx->pattern], ctx->expect_merged + ctx->expect_zero,
			ctx->expect_zero);
		return -1;
	}
	if (waited > 0 && !ctx->disturb_counts &&
	    (*ksm < ctx->expect_merged || *ksm + *zero < ctx->expect_merged + ctx->expect_zero)) {
		pr_fail("%s: ksmd reported the merge complete but the region has %" PRIu64 " KSM pages and %"
			PRIu64 " KSM zero pages, expected %" PRIu64 " and %" PRIu64 "\n", name, *ksm, *zero,
			ctx->expect_merged, ctx->expect_zero);
		return -1;
	}
	return 0;
}

/* a page that may still be a KSM page after the unmerge, and its signals */
typedef struct {
	size_t page;
	uint64_t pfn;
	size_t sharers;
	bool kpf;			/* A: KPF_KSM set (trusted) */
	bool mapping;			/* B: pfn shared in the region, or not exclusive */
} stress_ksm_unmerge_suspect_t;

/* what verify_pfns gathers */
typedef struct {
	stress_ksm_unmerge_suspect_t sus[KSM_SUSPECTS];
	size_t nsus, zero_page;
	uint64_t zero, total, kpf_pages;
} stress_ksm_unmerge_pfns_t;

/*
 *  stress_ksm_unmerge_pfns_page()
 *	scan consumer after the unmerge: KSM zero pages left, and suspects
 *	(KPF_KSM set, or the pfn shared or not exclusive); the first kept
 */
static void stress_ksm_unmerge_pfns_page(stress_ksm_unmerge_ctx_t *ctx, void *arg, const size_t i,
	const uint64_t e, const int what, const size_t sharers, const uint64_t flags)
{
	stress_ksm_unmerge_pfns_t *p = (stress_ksm_unmerge_pfns_t *)arg;
	const bool kpf = ctx->iface->kpf_ksm && (flags & KPF_KSM);
	const bool mapping = sharers > 1 || (ctx->iface->excl && !(e & PM_EXCLUSIVE));

	p->kpf_pages += !!(flags & KPF_KSM);
	if (what == KSM_PAGE_KZERO) {
		p->zero_page = p->zero ? p->zero_page : i;
		p->zero++;
	} else if ((kpf || mapping) && what != KSM_PAGE_HOLE) {
		if (p->nsus < KSM_SUSPECTS)
			p->sus[p->nsus++] = (stress_ksm_unmerge_suspect_t){ i, e & PM_PFN_MASK, sharers, kpf, mapping };
		p->total++;
	}
}

/*
 *  stress_ksm_unmerge_cow_probe()
 *	C: does a write (an atomic OR of 0: data unchanged) move page i to a
 *	new frame, as a write to a KSM page must; never on a uffd-wp page
 */
static bool stress_ksm_unmerge_cow_probe(stress_ksm_unmerge_ctx_t *ctx, const size_t i)
{
	uint8_t *page = ctx->region + i * ctx->page_size;
	uint64_t e0 = 0, e1 = 0;

	if (stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, page, 1, ctx->page_size, &e0) < 0 ||
	    !(e0 & PM_PRESENT) || (e0 & PM_UFFD_WP))
		return false;
	(void)__atomic_fetch_or((uint64_t *)page, 0, __ATOMIC_SEQ_CST);
	if (stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, page, 1, ctx->page_size, &e1) < 0)
		return false;
	return stress_ksm_unmerge_pm_pfn(e1) && stress_ksm_unmerge_pm_pfn(e1) != (e0 & PM_PFN_MASK);
}

/*
 *  stress_ksm_unmerge_disagree()
 *	the kernel's signals disagree: said once per run with the numbers, not a failure
 */
static void FORMAT(printf, 2, 3) stress_ksm_unmerge_disagree(stress_ksm_unmerge_ctx_t *ctx, const char *fmt, ...)
{
	char buf[384];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!__atomic_exchange_n(&stress_ksm_unmerge_shared->disagree_reported, true, __ATOMIC_SEQ_CST))
		pr_inf("%s: signals disagree (cycle %" PRIu64 "): %s; not counted as an unmerge failure\n",
			ctx->args->name, ctx->cycle, buf);
	else
		pr_dbg("%s: signals disagree (cycle %" PRIu64 "): %s\n", ctx->args->name, ctx->cycle, buf);
}

/*
 *  stress_ksm_unmerge_verify_pfns()
 *	after the unmerge: no KSM zero page (6.4+) and no KSM page, a page
 *	judged still a KSM page only when two signals agree: A KPF_KSM, B
 *	its pfn shared or not exclusive, C a write moves it (B with C alone
 *	only where KPF_KSM cannot be asked)
 */
static int stress_ksm_unmerge_verify_pfns(stress_ksm_unmerge_ctx_t *ctx, const uint64_t ksm_before,
	const int64_t cow_delta)
{
	stress_ksm_unmerge_pfns_t p;
	int64_t merging, zero;
	size_t k;

	(void)shim_memset(&p, 0, sizeof(p));
	if (stress_ksm_unmerge_scan(ctx, !ctx->verify, stress_ksm_unmerge_pfns_page, &p) < 0)
		return 0;
	if (p.zero && ctx->iface->zero_unshare) {
		pr_fail("%s: page %zu still maps the KSM zero page after unmerge (%" PRIu64 " such pages)\n",
			ctx->args->name, p.zero_page, p.zero);
		return -1;
	}
	for (k = 0; k < p.nsus; k++) {
		const stress_ksm_unmerge_suspect_t *s = &p.sus[k];
		const bool moved = !(s->kpf && s->mapping) && stress_ksm_unmerge_cow_probe(ctx, s->page);

		if ((s->kpf && s->mapping) || (moved && (s->kpf || s->sharers > 1 || !ctx->iface->kpf_ksm))) {
			pr_fail("%s: page %zu is still a KSM page after unmerge: pfn %#" PRIx64 " mapped by %zu "
				"region page(s)%s, KPF_KSM %s%s (%" PRIu64 " such pages)\n", ctx->args->name,
				s->page, s->pfn, s->sharers, s->mapping ? " and not exclusive" : "",
				s->kpf ? "set" : "clear or not trusted", moved ?
				"; a write moved it to a new frame" : "", p.total);
			return -1;
		}
	}
	if (p.nsus) {
		stress_ksm_unmerge_counters(ctx, &merging, &zero);
		stress_ksm_unmerge_disagree(ctx, "kpageflags says %" PRIu64 " KSM pages, %" PRIu64 " pages are "
			"flagged by one signal only, ksm_merging_pages says %" PRId64 " (drains lazily), cow_ksm "
			"moved by %" PRId64 " for %" PRIu64 " merged, and a write kept page %zu in its frame",
			p.kpf_pages, p.total, merging, cow_delta, ksm_before, p.sus[0].page);
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_verify_data()
 *	every page (a rotating 1/16 without --verify) holds its bytes
 */
static int stress_ksm_unmerge_verify_data(stress_ksm_unmerge_ctx_t *ctx)
{
	const size_t step = ctx->verify ? 1 : 16;
	size_t i;

	for (i = (size_t)(ctx->cycle % step); i < ctx->npages; i += step) {
		const uint8_t *page = ctx->region + i * ctx->page_size;
		uint8_t want = 0;
		ssize_t off;

		if (!(i & 16383) && stress_ksm_unmerge_stop_seen(ctx, "data check"))
			return 0;
		off = stress_ksm_unmerge_page_check(ctx, i, page, &want);
		if (off >= 0) {
			pr_fail("%s: data corrupted after unmerge: page %zu byte %zd is 0x%02x, expected "
				"0x%02x (pattern %s)\n", ctx->args->name, i, off, page[off], want,
				stress_ksm_unmerge_patterns[ctx->pattern]);
			return -1;
		}
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_verify_unmerge()
 *	pages unshared (two signals), data intact, VMA flags kept, and the
 *	counters (ksm_zero_pages, cow_ksm) agree with the pages
 */
static int stress_ksm_unmerge_verify_unmerge(stress_ksm_unmerge_ctx_t *ctx, const uint64_t ksm_before,
	const int64_t cow_delta)
{
	const char *name = ctx->args->name;
	int64_t merging, zero;
	char vmflags[256];

	if (stress_ksm_unmerge_verify_pfns(ctx, ksm_before, cow_delta) < 0 ||
	    stress_ksm_unmerge_verify_data(ctx) < 0)
		return -1;
	stress_ksm_unmerge_counters(ctx, &merging, &zero);
	/* the pages were judged above: a counter alone is a disagreement */
	if (zero > 0 && ctx->iface->zero_unshare && ctx->expect_zero && !ctx->disturb_counts) {
		if (!ctx->have_pfns) {
			pr_fail("%s: ksm_zero_pages is %" PRId64 " right after unmerge, expected 0\n", name, zero);
			return -1;
		}
		stress_ksm_unmerge_disagree(ctx, "ksm_zero_pages is %" PRId64 " right after unmerge, "
			"but no region page maps the zero page", zero);
	}
	if (!ctx->disturb_layout && ctx->vmflags[0] && (ctx->verify || !(ctx->cycle & 7)) &&
	    stress_ksm_unmerge_vmflags(ctx->region, vmflags, sizeof(vmflags), true) == 0 &&
	    strcmp(vmflags, ctx->vmflags)) {
		pr_fail("%s: VMA flags changed by merge/unmerge: before '%s', after '%s'\n", name,
			ctx->vmflags, vmflags);
		return -1;
	}
	if (!ctx->disturb_layout && cow_delta >= 0 && (uint64_t)cow_delta < ksm_before && ctx->iface->cow_ksm) {
		if (!ctx->have_pfns) {
			pr_fail("%s: cow_ksm grew by %" PRId64 " during unmerge of %" PRIu64 " KSM pages\n",
				name, cow_delta, ksm_before);
			return -1;
		}
		stress_ksm_unmerge_disagree(ctx, "cow_ksm grew by %" PRId64 " during the unmerge of %" PRIu64
			" KSM pages, but every region page is private", cow_delta, ksm_before);
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_zero_check()
 *	global and per-process ksm_zero_pages never below 0 (c2dc78b86e08);
 *	-1 after a fail line naming the counter
 */
static int stress_ksm_unmerge_zero_check(stress_ksm_unmerge_ctx_t *ctx, const char *where)
{
	static const char * const which[] = { "global (sysfs)", "per-process (ksm_stat)" };
	const int fds[] = { ctx->zero_pages_fd, ctx->ksm_stat_fd };
	char buf[1024];
	int64_t v;
	int i, verdict, rc = 0;

	for (i = 0; i < 2; i++) {
		if (stress_ksm_unmerge_fd_read(fds[i], buf, sizeof(buf)) <= 0)
			continue;
		verdict = stress_ksm_unmerge_counter(buf, i ? "ksm_zero_pages" : NULL, &v);
		if (verdict != KSM_COUNTER_NEGATIVE && verdict != KSM_COUNTER_WRAPPED)
			continue;
		pr_fail("%s: %s ksm_zero_pages reads %" PRId64 " %s: %s; the kernel lost count of KSM zero "
			"pages (decremented more than incremented; upstream fix c2dc78b86e08 \"mm/ksm: fix "
			"ksm_zero_pages accounting\")\n", ctx->args->name, which[i], v, where,
			stress_ksm_unmerge_counter_verdicts[verdict]);
		rc = -1;
	}
	return rc;
}

/*
 *  stress_ksm_unmerge_taint_check()
 *	no new die, warn, bad page or soft lockup taint since the run began:
 *	a kernel warning seen without reading the kernel log
 */
static int stress_ksm_unmerge_taint_check(stress_ksm_unmerge_ctx_t *ctx)
{
	static const uint64_t bad = STRESS_BIT_ULL(5) | STRESS_BIT_ULL(7) | STRESS_BIT_ULL(9) | STRESS_BIT_ULL(14);
	const int64_t now = stress_ksm_unmerge_field(ctx->taint_fd, NULL);
	const uint64_t fresh = (now > 0) ? ((uint64_t)now & ~stress_ksm_unmerge_shared->taint & bad) : 0;

	if (!fresh)
		return 0;
	pr_fail("%s: the kernel became tainted during the run: /proc/sys/kernel/tainted %#" PRIx64
		", new flags %#" PRIx64 "%s%s%s%s (see the kernel log)\n", ctx->args->name, (uint64_t)now, fresh,
		(fresh & STRESS_BIT_ULL(5)) ? " B: bad page" : "", (fresh & STRESS_BIT_ULL(7)) ? " D: oops" : "",
		(fresh & STRESS_BIT_ULL(9)) ? " W: warning" : "", (fresh & STRESS_BIT_ULL(14)) ? " L: soft lockup" : "");
	__atomic_fetch_or(&stress_ksm_unmerge_shared->taint, fresh, __ATOMIC_SEQ_CST);
	return -1;
}

