/*
 *  stress_ksm_unmerge_page_kind()
 *	content class of page i under pattern
 */
static int stress_ksm_unmerge_page_kind(const int pattern, const size_t i)
{
	static const int kinds[] = { KSM_KIND_SAME, KSM_KIND_FEW, KSM_KIND_ZERO, -1, KSM_KIND_UNIQUE };

	return (pattern == KSM_PATTERN_MIXED) ? (int)(i & 3) : kinds[pattern];
}

/*
 *  stress_ksm_unmerge_template()
 *	the page a same (t = 0) or few (t = 1..8) page holds
 */
static const uint8_t *stress_ksm_unmerge_template(const stress_ksm_unmerge_ctx_t *ctx,
	const int kind, const size_t i)
{
	return ctx->templates + ((kind == KSM_KIND_SAME) ? 0 : 1 + (i % KSM_FEW_TEMPLATES)) * ctx->page_size;
}

/*
 *  stress_ksm_unmerge_templates_fill()
 *	the same words in every instance, so pages merge across instances
 */
static void stress_ksm_unmerge_templates_fill(stress_ksm_unmerge_ctx_t *ctx)
{
	const size_t words = ctx->page_size / sizeof(uint64_t);
	size_t t, w;

	for (t = 0; t <= KSM_FEW_TEMPLATES; t++)
		for (w = 0; w < words; w++)
			((uint64_t *)(ctx->templates + t * ctx->page_size))[w] =
				0x6b736d756e6d7267ULL ^ ((t + 1) * 0x9e3779b97f4a7c15ULL) ^ w;
}

/*
 *  stress_ksm_unmerge_unique_word()
 *	word w of unique page i: distinct per instance, page and word
 */
static inline uint64_t stress_ksm_unmerge_unique_word(const stress_ksm_unmerge_ctx_t *ctx,
	const size_t i, const size_t w)
{
	return ctx->seed ^ ((uint64_t)i << 24) ^ (uint64_t)w ^ 0x8000000000000000ULL;
}

/*
 *  stress_ksm_unmerge_page_fill()
 *	write the pattern's bytes of page i into page
 */
static void stress_ksm_unmerge_page_fill(const stress_ksm_unmerge_ctx_t *ctx, const size_t i, uint8_t *page)
{
	const int kind = stress_ksm_unmerge_page_kind(ctx->pattern, i);
	size_t w;

	if (kind == KSM_KIND_ZERO) {
		(void)shim_memset(page, 0, ctx->page_size);
	} else if (kind == KSM_KIND_UNIQUE) {
		for (w = 0; w < ctx->page_size / sizeof(uint64_t); w++)
			((uint64_t *)page)[w] = stress_ksm_unmerge_unique_word(ctx, i, w);
	} else {
		(void)shim_memcpy(page, stress_ksm_unmerge_template(ctx, kind, i), ctx->page_size);
	}
}

/*
 *  stress_ksm_unmerge_page_check()
 *	byte offset of the first wrong byte of page i at page, -1 if intact;
 *	the byte expected there in *want
 */
static ssize_t stress_ksm_unmerge_page_check(const stress_ksm_unmerge_ctx_t *ctx, const size_t i,
	const uint8_t *page, uint8_t *want)
{
	const int kind = stress_ksm_unmerge_page_kind(ctx->pattern, i);
	size_t w, b;

	if (kind == KSM_KIND_SAME || kind == KSM_KIND_FEW) {
		const uint8_t *t = stress_ksm_unmerge_template(ctx, kind, i);

		if (!shim_memcmp(page, t, ctx->page_size))
			return -1;
		for (b = 0; page[b] == t[b]; b++)
			;
		*want = t[b];
		return (ssize_t)b;
	}
	for (w = 0; w < ctx->page_size / sizeof(uint64_t); w++) {
		const uint64_t x = (kind == KSM_KIND_ZERO) ? 0 : stress_ksm_unmerge_unique_word(ctx, i, w);
		const uint8_t *p = page + w * sizeof(x);

		if (!shim_memcmp(p, &x, sizeof(x)))
			continue;
		for (b = 0; p[b] == ((const uint8_t *)&x)[b]; b++)
			;
		*want = ((const uint8_t *)&x)[b];
		return (ssize_t)(w * sizeof(x) + b);
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_all_zero()
 *	pure: are len bytes at buf all zero
 */
static bool stress_ksm_unmerge_all_zero(const uint8_t *buf, const size_t len)
{
	return len == 0 || (buf[0] == 0 && !shim_memcmp(buf, buf + 1, len - 1));
}

/*
 *  stress_ksm_unmerge_expect()
 *	predict the KSM pages and KSM zero pages ksmd must make of the region
 */
static void stress_ksm_unmerge_expect(stress_ksm_unmerge_ctx_t *ctx)
{
	size_t i;

	ctx->expect_merged = ctx->expect_zero = 0;
	for (i = 0; i < ctx->npages; i++) {
		const int kind = stress_ksm_unmerge_page_kind(ctx->pattern, i);

		ctx->expect_merged += (kind == KSM_KIND_SAME || kind == KSM_KIND_FEW);
		ctx->expect_zero += (kind == KSM_KIND_ZERO);
	}
}

/*
 *  stress_ksm_unmerge_kver()
 *	pure: "6.18.44-..." -> 618, 0 if unparsable
 */
static int stress_ksm_unmerge_kver(const char *release)
{
	int major = 0, minor = 0;

	return (sscanf(release, "%d.%d", &major, &minor) == 2) ? major * 100 + minor : 0;
}

/*
 *  stress_ksm_unmerge_iface_set()
 *	record one interface's verdict: trusted or not (why), and what is used
 */
static void FORMAT(printf, 4, 5) stress_ksm_unmerge_iface_set(stress_ksm_unmerge_iface_t *ifc,
	const int i, const char *why, const char *fmt, ...)
{
	va_list ap;

	ifc->trusted[i] = !why;
	(void)snprintf(ifc->why[i], sizeof(ifc->why[i]), "%s", why ? why : "");
	va_start(ap, fmt);
	(void)vsnprintf(ifc->use[i], sizeof(ifc->use[i]), fmt, ap);
	va_end(ap);
}

/*
 *  stress_ksm_unmerge_iface_zero()
 *	pure: the zero page from the read faults and KPF_ZERO_PAGE; a read
 *	fault counts only if it gives one shared, non-exclusive pfn
 */
static void stress_ksm_unmerge_iface_zero(const stress_ksm_unmerge_obs_t *o, stress_ksm_unmerge_iface_t *ifc)
{
	const uint64_t rf = stress_ksm_unmerge_pm_pfn(o->rf[0]);
	const bool rf_shared = ifc->pfns && rf && rf == stress_ksm_unmerge_pm_pfn(o->rf[1]) &&
		!(o->rf[0] & PM_EXCLUSIVE);
	const bool zp_shared = ifc->pfns && o->zp_valid && stress_ksm_unmerge_pm_pfn(o->zp) &&
		!(o->zp & PM_EXCLUSIVE);
	/* KPF_ZERO_PAGE lies if a private page shows it or the zero page lacks it */
	const bool lies = (o->fresh_flags & KPF_ZERO_PAGE) || (!rf_shared && (o->rf_flags[0] & KPF_ZERO_PAGE)) ||
		(o->merged == 1 && (o->mg_flags[0] & KPF_ZERO_PAGE)) ||
		(rf_shared && !(o->rf_flags[0] & KPF_ZERO_PAGE)) || (zp_shared && !(o->zp_flags & KPF_ZERO_PAGE));
	char why[160] = "";

	ifc->kpf_zero = ifc->pfns && o->kpageflags && !lies;
	ifc->zero_pfn = rf_shared ? rf : (zp_shared && (!o->kpageflags || (o->zp_flags & KPF_ZERO_PAGE))) ?
		stress_ksm_unmerge_pm_pfn(o->zp) : 0;
	if (!ifc->pfns)
		(void)snprintf(why, sizeof(why), "PFNs hidden: the zero page cannot be seen");
	else if (!rf_shared)
		(void)snprintf(why, sizeof(why), "a read fault maps a private exclusive page (pfn %#" PRIx64
			"), not the shared zero page: pvm_no_zero_page=1?", rf);
	else if (o->kpageflags && !ifc->kpf_zero)
		(void)snprintf(why, sizeof(why), "KPF_ZERO_PAGE is not set on the shared zero page "
			"or is set on a private page");
	if (!ifc->kpf_zero && !ifc->zero_pfn)
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_ZERO_PAGE, why[0] ? why : "no zero page found",
			"no zero-page verdicts (KSM zero pages are not told apart)");
	else
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_ZERO_PAGE, why[0] ? why : NULL,
			"%s (zero page pfn %#" PRIx64 ")", ifc->kpf_zero ? "KPF_ZERO_PAGE per page" :
			"the probed shared zero page pfn", ifc->zero_pfn);
}

/*
 *  stress_ksm_unmerge_iface_kpf_ksm()
 *	pure: KPF_KSM clear on a page KSM never saw, set on one it merged
 */
static void stress_ksm_unmerge_iface_kpf_ksm(const stress_ksm_unmerge_obs_t *o, stress_ksm_unmerge_iface_t *ifc)
{
	const char *instead = ifc->excl ?
		"pfn sharing within the region, the pagemap exclusive bit 56 and kpagecount "
		"(weaker: a KSM page mapped by at most two ptes looks private)" :
		"pfn sharing within the region (weaker: a KSM page shared with another process only "
		"looks private)";
	char why[160];

	ifc->kpf_ksm = false;
	if (!ifc->pfns) {
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, "PFNs hidden", "per-process counters only");
	} else if (!o->kpageflags) {
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, "/proc/kpageflags not readable", "%s", instead);
	} else if (o->fresh_flags & KPF_KSM) {
		(void)snprintf(why, sizeof(why), "KPF_KSM set on a fresh anonymous page KSM never saw "
			"(kpageflags %#" PRIx64 "): the 6.10-6.12 stable_page_flags() bug", o->fresh_flags);
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, why, "%s", instead);
	} else if (o->merged == 1 && !(o->mg_flags[0] & KPF_KSM)) {
		(void)snprintf(why, sizeof(why), "a page the probe merged (pfn %#" PRIx64 ", shared) lacks KPF_KSM",
			stress_ksm_unmerge_pm_pfn(o->mg[0]));
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, why, "%s", instead);
	} else {
		ifc->kpf_ksm = true;
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, NULL, "KPF_KSM%s", o->merged == 1 ?
			" (clear on a fresh page, set on a merged one)" :
			" (clear on a fresh page; the probe merge did not complete)");
	}
}

/*
 *  stress_ksm_unmerge_iface_counters()
 *	pure: ksm_stat fields (fallback field by field) and cow_ksm
 */
static void stress_ksm_unmerge_iface_counters(const stress_ksm_unmerge_obs_t *o, stress_ksm_unmerge_iface_t *ifc)
{
	const int64_t delta = (o->cow_before >= 0 && o->cow_after >= 0) ? o->cow_after - o->cow_before : -1;
	char why[160] = "";

	ifc->stat_merging = o->stat && o->stat_merging;
	ifc->stat_zero = o->stat && o->stat_zero;
	ifc->merging_pages = o->merging_pages;
	if (!o->stat)
		(void)snprintf(why, sizeof(why), "/proc/self/ksm_stat missing (before 6.1)");
	else if (!o->stat_merging || !o->stat_zero)
		(void)snprintf(why, sizeof(why), "ksm_stat lacks %s%s%s", o->stat_merging ? "" : "ksm_merging_pages",
			(!o->stat_merging && !o->stat_zero) ? " and " : "", o->stat_zero ? "" : "ksm_zero_pages");
	stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KSM_STAT, why[0] ? why : NULL,
		"%s for merging pages, %s for KSM zero pages", o->stat_merging ? "ksm_stat" :
		o->merging_pages ? "/proc/self/ksm_merging_pages" : ifc->pfns ? "pagemap" : "nothing",
		o->stat_zero ? "ksm_stat" : ifc->pfns ? "pagemap" : "nothing");
	ifc->cow_ksm = delta >= 0 && !(o->merged == 1 && o->ksm_pages && (uint64_t)delta < o->ksm_pages);
	if (delta < 0)
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_COW_KSM, "no cow_ksm in /proc/vmstat",
			"pagemap checks only (the cow_ksm check is off)");
	else if (!ifc->cow_ksm)
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_COW_KSM, "cow_ksm grew less than the pages the probe "
			"unshared", "pagemap checks only (the cow_ksm check is off): %" PRId64 " < %" PRIu64,
			delta, o->ksm_pages);
	else
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_COW_KSM, NULL, "cow_ksm (grew by %" PRId64
			" for %" PRIu64 " unshared KSM pages)", delta, o->merged == 1 ? o->ksm_pages : 0);
}

/*
 *  stress_ksm_unmerge_iface_judge()
 *	pure: which signals the verdicts may use, from the self-test's observations
 */
static void stress_ksm_unmerge_iface_judge(const stress_ksm_unmerge_obs_t *o, stress_ksm_unmerge_iface_t *ifc)
{
	(void)shim_memset(ifc, 0, sizeof(*ifc));
	ifc->tested = true;
	ifc->pfns = o->pagemap && stress_ksm_unmerge_pm_pfn(o->fresh);
	ifc->kpageflags = ifc->pfns && o->kpageflags;
	ifc->excl = ifc->pfns && (o->fresh & PM_EXCLUSIVE);
	ifc->zero_unshare = o->kver >= 604;
	if (ifc->pfns)
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_PFNS, NULL, "pagemap PFNs%s",
			ifc->excl ? " and exclusive bit 56" : " (no exclusive bit 56)");
	else
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_PFNS, o->pagemap ? "pagemap hides PFNs "
			"(no CAP_SYS_ADMIN)" : "/proc/self/pagemap not readable",
			"per-process counters and data checks (no per-page verdicts)");
	stress_ksm_unmerge_iface_zero(o, ifc);
	stress_ksm_unmerge_iface_kpf_ksm(o, ifc);
	stress_ksm_unmerge_iface_counters(o, ifc);
}

/*
 *  stress_ksm_unmerge_page_what()
 *	pure, the one answer to "what is this page": pagemap entry e, its
 *	kpageflags (0 unread), region pages on its pfn (sharers, 0 unknown),
 *	its kpagecount (0 unknown) and the pattern's kind of the page (-1: a
 *	page no pattern put zeros in), from the self-tested signals only.
 *	Where KPF_KSM lies, a page alone and not exclusive is a KSM page
 *	only if more than two ptes map it (a fork child's COW share looks
 *	the same)
 */
static int stress_ksm_unmerge_page_what(const stress_ksm_unmerge_iface_t *ifc, const uint64_t e,
	const uint64_t flags, const size_t sharers, const uint64_t mapcount, const int kind)
{
	const uint64_t pfn = e & PM_PFN_MASK;

	if (!(e & PM_PRESENT))
		return (e & PM_SWAP) ? KSM_PAGE_SWAPPED : KSM_PAGE_ABSENT;
	if (!ifc->pfns || !pfn)
		return KSM_PAGE_PRIVATE;
	if ((ifc->zero_pfn && pfn == ifc->zero_pfn) || (ifc->kpf_zero && (flags & KPF_ZERO_PAGE)))
		return (kind == KSM_KIND_ZERO) ? KSM_PAGE_KZERO : KSM_PAGE_HOLE;
	if (ifc->kpf_ksm)
		return (flags & KPF_KSM) ? KSM_PAGE_KSM : KSM_PAGE_PRIVATE;
	if (sharers > 1)
		return KSM_PAGE_KSM;
	if (ifc->excl && !(e & PM_EXCLUSIVE))
		return (mapcount == 0 || mapcount > 2) ? KSM_PAGE_KSM : KSM_PAGE_PRIVATE;
	return KSM_PAGE_PRIVATE;
}

/*
 *  stress_ksm_unmerge_page_state()
 *	page_what() of pagemap entry e now: kpageflags read, and kpagecount
 *	where KPF_KSM lies and the page is not exclusive
 */
static int stress_ksm_unmerge_page_state(const stress_ksm_unmerge_ctx_t *ctx, const uint64_t e,
	const size_t sharers, const int kind)
{
	const uint64_t pfn = stress_ksm_unmerge_pm_pfn(e);
	const uint64_t flags = pfn ? stress_ksm_unmerge_kpf(ctx->kpageflags_fd, pfn) : 0;
	const uint64_t count = (pfn && !ctx->iface->kpf_ksm && sharers <= 1 && !(e & PM_EXCLUSIVE)) ?
		stress_ksm_unmerge_kpf(ctx->kpagecount_fd, pfn) : 0;

	return stress_ksm_unmerge_page_what(ctx->iface, e, flags, sharers, count, kind);
}

/*
 *  stress_ksm_unmerge_is_ksm()
 *	pure: a KSM page or a KSM zero page
 */
static inline bool stress_ksm_unmerge_is_ksm(const int what)
{
	return what == KSM_PAGE_KSM || what == KSM_PAGE_KZERO;
}

/*
 *  stress_ksm_unmerge_pages_state()
 *	states of n pages at addr (pages whose pattern kind is kind, -1 for
 *	racer ranges of the same page) into st[]; -1 without PFNs
 */
static int stress_ksm_unmerge_pages_state(const stress_ksm_unmerge_ctx_t *ctx, const void *addr,
	const size_t n, const int kind, uint8_t *st)
{
	uint64_t pm[KSM_OP_PAGES];
	size_t j;

	if (!ctx->have_pfns || n > KSM_OP_PAGES ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, addr, n, ctx->page_size, pm) < 0) {
		(void)shim_memset(st, KSM_PAGE_ABSENT, n);
		return -1;
	}
	for (j = 0; j < n; j++)
		st[j] = (uint8_t)stress_ksm_unmerge_page_state(ctx, pm[j], 0, kind);
	return 0;
}

/*
 *  stress_ksm_unmerge_ksm_count()
 *	KSM pages among n pages at addr holding the same page (racer ranges)
 */
static uint64_t stress_ksm_unmerge_ksm_count(const stress_ksm_unmerge_ctx_t *ctx, const uint8_t *addr,
	const size_t n)
{
	uint8_t st[KSM_OP_PAGES];
	uint64_t count = 0;
	size_t k, j, m;

	for (k = 0; k < n; k += m) {
		m = STRESS_MINIMUM(n - k, (size_t)KSM_OP_PAGES);
		if (stress_ksm_unmerge_pages_state(ctx, addr + k * ctx->page_size, m, -1, st) < 0)
			return 0;
		for (j = 0; j < m; j++)
			count += stress_ksm_unmerge_is_ksm(st[j]);
	}
	return count;
}

/*
 *  stress_ksm_unmerge_iface_entry()
 *	self-test: pagemap entry and kpageflags of the page at addr (0s on error)
 */
static void stress_ksm_unmerge_iface_entry(const int pm_fd, const int kpf_fd, const void *addr,
	const size_t ps, uint64_t *e, uint64_t *flags)
{
	*e = *flags = 0;
	if (pm_fd < 0 || stress_ksm_unmerge_pagemap_read(pm_fd, addr, 1, ps, e) < 0)
		*e = 0;
	else
		*flags = stress_ksm_unmerge_kpf(kpf_fd, stress_ksm_unmerge_pm_pfn(*e));
}

/*
 *  stress_ksm_unmerge_iface_merge()
 *	the probe merge: pages 0 and 1 identical, page 2 zero-filled; wait
 *	up to 3 s for ksmd, then unmerge and read how cow_ksm moved
 */
static void stress_ksm_unmerge_iface_merge(const int pm_fd, const int kpf_fd, const int vm_fd,
	const size_t ps, stress_ksm_unmerge_obs_t *o)
{
	const double t0 = stress_time_now();
	const uint64_t salt = stress_mwc64() | 1;
	uint8_t *p = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t w;

	o->merged = -1;
	if (p == MAP_FAILED)
		return;
	for (w = 0; w < ps / sizeof(uint64_t); w++)
		((uint64_t *)p)[w] = ((uint64_t *)(p + ps))[w] = salt * (w + 1);
	(void)shim_memset(p + 2 * ps, 0, ps);
	if (madvise(p, 3 * ps, MADV_MERGEABLE) == 0) {
		o->merged = 0;
		while (stress_time_now() - t0 < 3.0) {
			stress_ksm_unmerge_iface_entry(pm_fd, kpf_fd, p, ps, &o->mg[0], &o->mg_flags[0]);
			stress_ksm_unmerge_iface_entry(pm_fd, kpf_fd, p + ps, ps, &o->mg[1], &o->mg_flags[1]);
			stress_ksm_unmerge_iface_entry(pm_fd, kpf_fd, p + 2 * ps, ps, &o->zp, &o->zp_flags);
			o->merged = stress_ksm_unmerge_pm_pfn(o->mg[0]) &&
				stress_ksm_unmerge_pm_pfn(o->mg[0]) == stress_ksm_unmerge_pm_pfn(o->mg[1]);
			o->zp_valid = stress_ksm_unmerge_pm_pfn(o->zp) && !(o->zp & PM_EXCLUSIVE);
			if (o->merged && o->zp_valid)
				break;
			(void)shim_nanosleep_uint64(5000000);
		}
		o->ksm_pages = o->merged ? 2 : 0;
		o->cow_before = stress_ksm_unmerge_field(vm_fd, "cow_ksm");
		(void)madvise(p, 3 * ps, MADV_UNMERGEABLE);
		o->cow_after = stress_ksm_unmerge_field(vm_fd, "cow_ksm");
	}
	(void)munmap(p, 3 * ps);
}

/*
 *  stress_ksm_unmerge_iface_probe()
 *	gather the self-test's observations on memory mapped for it
 */
static void stress_ksm_unmerge_iface_probe(stress_ksm_unmerge_obs_t *o)
{
	const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	const int pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	const int kpf_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	const int vm_fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
	const int stat_fd = open("/proc/self/ksm_stat", O_RDONLY | O_CLOEXEC);
	volatile uint8_t *rf = mmap(NULL, 2 * ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *fresh = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char buf[1024];
	int64_t v;
#if defined(HAVE_SYS_UTSNAME_H)
	struct utsname u;

	o->kver = (uname(&u) == 0) ? stress_ksm_unmerge_kver(u.release) : 0;
#endif
	o->cow_before = o->cow_after = -1;
	o->pagemap = pm_fd >= 0;
	o->kpageflags = kpf_fd >= 0;
	o->stat = stat_fd >= 0;
	if (stress_ksm_unmerge_fd_read(stat_fd, buf, sizeof(buf)) > 0) {
		o->stat_merging = stress_ksm_unmerge_counter(buf, "ksm_merging_pages", &v) != KSM_COUNTER_MISSING;
		o->stat_zero = stress_ksm_unmerge_counter(buf, "ksm_zero_pages", &v) != KSM_COUNTER_MISSING;
	}
	o->merging_pages = access("/proc/self/ksm_merging_pages", R_OK) == 0;
	if (rf != MAP_FAILED) {
		(void)rf[0];
		(void)rf[ps];
		stress_ksm_unmerge_iface_entry(pm_fd, kpf_fd, (void *)rf, ps, &o->rf[0], &o->rf_flags[0]);
		stress_ksm_unmerge_iface_entry(pm_fd, kpf_fd, (void *)(rf + ps), ps, &o->rf[1], &o->rf_flags[1]);
		(void)munmap((void *)rf, 2 * ps);
	}
	if (fresh != MAP_FAILED) {
		fresh[0] = 1;
		stress_ksm_unmerge_iface_entry(pm_fd, kpf_fd, fresh, ps, &o->fresh, &o->fresh_flags);
		(void)munmap(fresh, ps);
	}
	stress_ksm_unmerge_iface_merge(pm_fd, kpf_fd, vm_fd, ps, o);
	if (pm_fd >= 0)
		(void)close(pm_fd);
	if (kpf_fd >= 0)
		(void)close(kpf_fd);
	if (vm_fd >= 0)
		(void)close(vm_fd);
	if (stat_fd >= 0)
		(void)close(stat_fd);
}

/*
 *  stress_ksm_unmerge_iface_line()
 *	pure: the report line of interface i (tests grep the unreliable form)
 */
static void stress_ksm_unmerge_iface_line(const stress_ksm_unmerge_iface_t *ifc, const int i,
	char *buf, const size_t len)
{
	if (ifc->trusted[i])
		(void)snprintf(buf, len, "ksm-unmerge: interface %s: trusted: %s",
			stress_ksm_unmerge_iface_names[i], ifc->use[i]);
	else
		(void)snprintf(buf, len, "ksm-unmerge: interface %s: unreliable (%s); using %s instead",
			stress_ksm_unmerge_iface_names[i], ifc->why[i], ifc->use[i]);
}

/*
 *  stress_ksm_unmerge_iface_selftest()
 *	init(), knobs set: probe, judge, one line per unreliable interface
 *	(-v: all of them); the verdict is shared with the instances
 */
static void stress_ksm_unmerge_iface_selftest(stress_ksm_unmerge_iface_t *ifc)
{
	stress_ksm_unmerge_obs_t o;
	char line[512];
	int i;

	(void)shim_memset(&o, 0, sizeof(o));
	stress_ksm_unmerge_iface_probe(&o);
	stress_ksm_unmerge_iface_judge(&o, ifc);
	for (i = 0; i < KSM_IFACES; i++) {
		stress_ksm_unmerge_iface_line(ifc, i, line, sizeof(line));
		if (ifc->trusted[i])
			pr_dbg("%s\n", line);
		else
			pr_inf("%s\n", line);
	}
	if (!ifc->zero_unshare)
		pr_dbg("ksm-unmerge: kernel before 6.4: KSM zero pages stay mapped after unmerge by design, "
			"not checked\n");
}

