/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-iface.h: the kernel interfaces a verdict reads and
 * their start-of-run self-test (private header of stress-ksm-unmerge.c,
 * included once): proc/sysfs readers (ksm_stat, pagemap, kpageflags), the
 * self-test that proves each of them on pages of known state
 * (stress_ksm_unmerge_iface_*), and the central page verdict
 * (stress_ksm_unmerge_page_what / stress_ksm_unmerge_what) that every
 * check and racer uses to ask "is this page KSM, zero or private".
 */

/*
 *  stress_ksm_unmerge_fd_read()
 *	pread a whole small proc/sysfs file into buf, NUL terminated
 */
static ssize_t stress_ksm_unmerge_fd_read(const int fd, char *buf, const size_t len)
{
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, len - 1, 0);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/*
 *  stress_ksm_unmerge_field()
 *	value of "name N" in a proc text buffer, -1 if missing
 */
static int64_t stress_ksm_unmerge_field(const char *buf, const char *name)
{
	const size_t len = strlen(name);
	const char *p = buf;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == buf || p[-1] == '\n') && (p[len] == ' ' || p[len] == ':' || p[len] == '\t'))
			return (int64_t)strtoll(p + len + 1, NULL, 10);
		p += len;
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_counters()
 *	this process's merging pages and KSM zero pages (-1 when unknown)
 */
static int stress_ksm_unmerge_counters(stress_ksm_unmerge_ctx_t *ctx,
	int64_t *merging, int64_t *zero)
{
	char buf[512];

	*merging = -1;
	*zero = -1;
	if (stress_ksm_unmerge_fd_read(ctx->ksm_stat_fd, buf, sizeof(buf)) > 0) {
		*merging = stress_ksm_unmerge_field(buf, "ksm_merging_pages");
		*zero = stress_ksm_unmerge_field(buf, "ksm_zero_pages");
	}
	/* field by field: 6.1's ksm_stat has only ksm_rmap_items */
	if (*merging < 0 && stress_ksm_unmerge_fd_read(ctx->merging_pages_fd, buf, sizeof(buf)) > 0)
		*merging = (int64_t)strtoll(buf, NULL, 10);
	return (*merging >= 0 || *zero >= 0) ? 0 : -1;
}

/*
 *  stress_ksm_unmerge_full_scans()
 *	ksmd's full scan count (not monotonic: run=2 resets it)
 */
static uint64_t stress_ksm_unmerge_full_scans(stress_ksm_unmerge_ctx_t *ctx)
{
	char buf[64];

	if (stress_ksm_unmerge_fd_read(ctx->full_scans_fd, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

/*
 *  stress_ksm_unmerge_cow_ksm()
 *	global /proc/vmstat cow_ksm, -1 when the kernel lacks it
 */
static int64_t stress_ksm_unmerge_cow_ksm(stress_ksm_unmerge_ctx_t *ctx)
{
	char buf[16384];

	if (stress_ksm_unmerge_fd_read(ctx->vmstat_fd, buf, sizeof(buf)) <= 0)
		return -1;
	return stress_ksm_unmerge_field(buf, "cow_ksm");
}

/*
 *  stress_ksm_unmerge_pagemap_read()
 *	pagemap entries for npages pages from addr into out
 */
static int stress_ksm_unmerge_pagemap_read(const int fd, const void *addr,
	const size_t npages, const size_t page_size, uint64_t *out)
{
	size_t done = 0;
	const off_t base = (off_t)(((uintptr_t)addr / page_size) * sizeof(uint64_t));

	while (done < npages * sizeof(uint64_t)) {
		const ssize_t n = pread(fd, (uint8_t *)out + done,
			npages * sizeof(uint64_t) - done, base + (off_t)done);

		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/*
 *  Interface self-test.  Every kernel signal a verdict uses is tested once
 *  per run, in init(), on memory the stressor maps for it: which page is
 *  the zero page, whether KPF_KSM tells KSM pages from private ones,
 *  which ksm_stat fields exist, whether pagemap shows PFNs, whether
 *  cow_ksm counts unshared KSM pages.  stress_ksm_unmerge_iface_probe()
 *  gathers the raw words, stress_ksm_unmerge_iface_judge() (pure, fed
 *  the recorded dumps of other kernels by the unit tests) decides, and
 *  stress_ksm_unmerge_page_what() answers "what is this page" from the
 *  signals found trustworthy.
 */
#define KPF_ANON			STRESS_BIT_ULL(12)
#define KSM_IFACE_PROBE_SECS		(3.0)

static bool stress_ksm_unmerge_fake_kpf_ksm;	/* test only: KPF_KSM on every anon page */
static bool stress_ksm_unmerge_fake_no_zero;	/* test only: read faults map private pages */

/*
 *  stress_ksm_unmerge_kpageflags()
 *	/proc/kpageflags word of pfn, 0 on error
 */

static uint64_t stress_ksm_unmerge_kpageflags(const int fd, const uint64_t pfn)
{
	uint64_t flags = 0;

	if (pread(fd, &flags, sizeof(flags), (off_t)(pfn * sizeof(flags))) != sizeof(flags))
		return 0;
	if (stress_ksm_unmerge_fake_kpf_ksm && (flags & KPF_ANON))
		flags |= STRESS_BIT_ULL(KPF_BIT_KSM);	/* test only: the 6.12 kpageflags bug */
	return flags;
}

/*
 *  stress_ksm_unmerge_kver()
 *	pure: "6.18.44-..." -> 618, 0 if unparsable
 */
static int stress_ksm_unmerge_kver(const char *release)
{
	int major = 0, minor = 0;

	if (sscanf(release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major * 100 + minor;
}

/*
 *  stress_ksm_unmerge_pm_pfn()
 *	pure: pfn of a present pagemap entry, 0 if not present
 */
static inline uint64_t stress_ksm_unmerge_pm_pfn(const uint64_t e)
{
	return (e & PM_PRESENT) ? (e & PM_PFN_MASK) : 0;
}

/*
 *  stress_ksm_unmerge_iface_set()
 *	record one interface's verdict: trusted or not, why, and what is used
 */
static void FORMAT(printf, 4, 5) stress_ksm_unmerge_iface_set(stress_ksm_unmerge_iface_t *ifc,
	const int i, const char *why, const char *fmt, ...)
{
	va_list ap;

	ifc->trusted[i] = (why == NULL);
	(void)snprintf(ifc->why[i], sizeof(ifc->why[i]), "%s", why ? why : "");
	va_start(ap, fmt);
	(void)vsnprintf(ifc->use[i], sizeof(ifc->use[i]), fmt, ap);
	va_end(ap);
}

/*
 *  stress_ksm_unmerge_iface_zero()
 *	pure: the zero page from the read-fault probe and KPF_ZERO_PAGE; a
 *	read fault counts only if it yields one shared, non-exclusive pfn
 */
static void stress_ksm_unmerge_iface_zero(const stress_ksm_unmerge_iface_obs_t *o,
	stress_ksm_unmerge_iface_t *ifc)
{
	const uint64_t zbit = STRESS_BIT_ULL(KPF_BIT_ZERO_PAGE);
	const uint64_t rf = stress_ksm_unmerge_pm_pfn(o->rf[0]);
	const bool rf_shared = ifc->pfns && rf && rf == stress_ksm_unmerge_pm_pfn(o->rf[1]) &&
		!(o->rf[0] & PM_EXCLUSIVE);
	const bool zp_shared = ifc->pfns && o->zp_valid && stress_ksm_unmerge_pm_pfn(o->zp) &&
		!(o->zp & PM_EXCLUSIVE);
	char why[160];
	bool lies;

	/* KPF_ZERO_PAGE lies if a private page shows it or the zero page lacks it */
	lies = (o->fresh_flags & zbit) || (!rf_shared && (o->rf_flags[0] & zbit)) ||
		(o->merged == 1 && (o->mg_flags[0] & zbit)) ||
		(rf_shared && !(o->rf_flags[0] & zbit)) || (zp_shared && !(o->zp_flags & zbit));
	ifc->kpf_zero = ifc->pfns && o->kpageflags && !lies;
	ifc->read_fault_zero = rf_shared;
	ifc->zero_pfn = 0;
	if (rf_shared)
		ifc->zero_pfn = rf;
	else if (zp_shared && (!o->kpageflags || (o->zp_flags & zbit)))
		ifc->zero_pfn = stress_ksm_unmerge_pm_pfn(o->zp);

	if (!ifc->pfns)
		(void)snprintf(why, sizeof(why), "PFNs hidden: the zero page cannot be seen");
	else if (!rf_shared)
		(void)snprintf(why, sizeof(why), "a read fault maps a private exclusive page (pfn %#" PRIx64
			"), not the shared zero page: pvm_no_zero_page=1?", rf);
	else if (o->kpageflags && !ifc->kpf_zero)
		(void)snprintf(why, sizeof(why), "KPF_ZERO_PAGE is not set on the shared zero page "
			"or is set on a private page");
	else
		why[0] = '\0';

	if (ifc->kpf_zero && ifc->zero_pfn)
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_ZERO_PAGE, why[0] ? why : NULL,
			"KPF_ZERO_PAGE per page (zero page pfn %#" PRIx64 ")", ifc->zero_pfn);
	else if (ifc->kpf_zero)
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_ZERO_PAGE, why[0] ? why : NULL,
			"KPF_ZERO_PAGE per page");
	else if (ifc->zero_pfn)
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_ZERO_PAGE, why[0] ? why : NULL,
			"the probed shared zero page pfn %#" PRIx64, ifc->zero_pfn);
	else
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_ZERO_PAGE, why[0] ? why : "no zero page found",
			"no zero-page verdicts (KSM zero pages are not told apart)");
}

/*
 *  stress_ksm_unmerge_iface_kpf_ksm()
 *	pure: KPF_KSM must be clear on a page KSM never saw and set on a
 *	page the probe merged
 */
static void stress_ksm_unmerge_iface_kpf_ksm(const stress_ksm_unmerge_iface_obs_t *o,
	stress_ksm_unmerge_iface_t *ifc)
{
	const uint64_t kbit = STRESS_BIT_ULL(KPF_BIT_KSM);
	const char *instead = ifc->excl ?
		"pfn sharing within the region, the pagemap exclusive bit 56 and kpagecount "
		"(weaker: a KSM page mapped by at most two ptes looks private)" :
		"pfn sharing within the region (weaker: a KSM page shared with another process only "
		"looks private)";
	char why[160];

	ifc->kpf_ksm = false;
	if (!ifc->pfns) {
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, "PFNs hidden",
			"per-process counters only");
		return;
	}
	if (!o->kpageflags) {
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, "/proc/kpageflags not readable",
			"%s", instead);
		return;
	}
	if (o->fresh_flags & kbit) {
		(void)snprintf(why, sizeof(why), "KPF_KSM set on a fresh anonymous page KSM never saw "
			"(kpageflags %#" PRIx64 "): the 6.10-6.12 stable_page_flags() bug", o->fresh_flags);
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, why, "%s", instead);
		return;
	}
	if (o->merged == 1 && !(o->mg_flags[0] & kbit)) {
		(void)snprintf(why, sizeof(why), "a page the probe merged (pfn %#" PRIx64
			", shared) lacks KPF_KSM", stress_ksm_unmerge_pm_pfn(o->mg[0]));
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, why, "%s", instead);
		return;
	}
	ifc->kpf_ksm = true;
	stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, NULL, "KPF_KSM%s",
		o->merged == 1 ? " (clear on a fresh page, set on a merged one)" :
		" (clear on a fresh page; the probe merge did not complete)");
}

/*
 *  stress_ksm_unmerge_iface_counters()
 *	pure: ksm_stat fields (fallback field by field) and cow_ksm
 */
static void stress_ksm_unmerge_iface_counters(const stress_ksm_unmerge_iface_obs_t *o,
	stress_ksm_unmerge_iface_t *ifc)
{
	const int64_t delta = (o->cow_before >= 0 && o->cow_after >= 0) ? o->cow_after - o->cow_before : -1;
	const char *merging = o->stat_merging ? "ksm_stat" : o->merging_pages ?
		"/proc/self/ksm_merging_pages" : ifc->pfns ? "pagemap" : "nothing";
	const char *zero = o->stat_zero ? "ksm_stat" : ifc->pfns ? "pagemap" : "nothing";
	char why[160];

	ifc->stat_merging = o->stat && o->stat_merging;
	ifc->stat_zero = o->stat && o->stat_zero;
	ifc->merging_pages = o->merging_pages;
	if (!o->stat)
		(void)snprintf(why, sizeof(why), "/proc/self/ksm_stat missing (before 6.1)");
	else if (!o->stat_merging || !o->stat_zero)
		(void)snprintf(why, sizeof(why), "ksm_stat lacks %s%s%s", o->stat_merging ? "" : "ksm_merging_pages",
			(!o->stat_merging && !o->stat_zero) ? " and " : "", o->stat_zero ? "" : "ksm_zero_pages");
	else
		why[0] = '\0';
	stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KSM_STAT, why[0] ? why : NULL,
		"%s for merging pages, %s for KSM zero pages", merging, zero);

	ifc->cow_ksm = false;
	if (delta < 0) {
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_COW_KSM, "no cow_ksm in /proc/vmstat",
			"pagemap checks only (the cow_ksm check is off)");
	} else if (o->merged == 1 && o->ksm_pages && (uint64_t)delta < o->ksm_pages) {
		(void)snprintf(why, sizeof(why), "cow_ksm grew by %" PRId64 " while the probe unshared %"
			PRIu64 " KSM pages", delta, o->ksm_pages);
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_COW_KSM, why,
			"pagemap checks only (the cow_ksm check is off)");
	} else {
		ifc->cow_ksm = true;
		if (o->merged == 1)
			stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_COW_KSM, NULL, "cow_ksm (grew by %" PRId64
				" for %" PRIu64 " unshared KSM pages)", delta, o->ksm_pages);
		else
			stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_COW_KSM, NULL,
				"cow_ksm (present; the probe merge did not complete)");
	}
}

/*
 *  stress_ksm_unmerge_iface_judge()
 *	pure: which signals the verdicts may use, from the self-test's observations
 */
static void stress_ksm_unmerge_iface_judge(const stress_ksm_unmerge_iface_obs_t *o,
	stress_ksm_unmerge_iface_t *ifc)
{
	const uint64_t fresh = stress_ksm_unmerge_pm_pfn(o->fresh);

	(void)memset(ifc, 0, sizeof(*ifc));
	ifc->tested = true;
	ifc->pfns = o->pagemap && fresh;
	ifc->kpageflags = ifc->pfns && o->kpageflags;
	ifc->excl = ifc->pfns && (o->fresh & PM_EXCLUSIVE);
	ifc->zero_unshare = o->kver >= 604;
	if (ifc->pfns)
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_PFNS, NULL, "pagemap PFNs%s",
			ifc->excl ? " and exclusive bit 56" : " (no exclusive bit 56)");
	else
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_PFNS, o->pagemap ?
			"pagemap hides PFNs (no CAP_SYS_ADMIN)" : "/proc/self/pagemap not readable",
			"per-process counters and data checks (no per-page verdicts)");
	stress_ksm_unmerge_iface_zero(o, ifc);
	stress_ksm_unmerge_iface_kpf_ksm(o, ifc);
	stress_ksm_unmerge_iface_counters(o, ifc);
}

/*
 *  stress_ksm_unmerge_page_what()
 *	pure, the one answer to "what is this page": pagemap entry e, its
 *	kpageflags word (0 if not read), how many region pages map its pfn
 *	(0 or 1 if unknown) and its kpagecount (0 unknown), judged from the
 *	self-tested signals only.  Where KPF_KSM lies, a page alone in the
 *	region and not exclusive is a KSM page only if more than two ptes map
 *	it: a fork child's copy-on-write share (fork and mrelease racers)
 *	looks the same
 */
static int stress_ksm_unmerge_page_what(const stress_ksm_unmerge_iface_t *ifc, const uint64_t e,
	const uint64_t flags, const size_t sharers, const uint64_t mapcount)
{
	const uint64_t pfn = e & PM_PFN_MASK;

	if (!(e & PM_PRESENT))
		return (e & PM_SWAP) ? KSM_PAGE_SWAPPED : KSM_PAGE_ABSENT;
	if (!ifc->pfns || !pfn)
		return KSM_PAGE_PRIVATE;	/* nothing to judge by: callers check have_pfns */
	if ((ifc->zero_pfn && pfn == ifc->zero_pfn) ||
	    (ifc->kpf_zero && (flags & STRESS_BIT_ULL(KPF_BIT_ZERO_PAGE))))
		return KSM_PAGE_ZERO;
	if (ifc->kpf_ksm)
		return (flags & STRESS_BIT_ULL(KPF_BIT_KSM)) ? KSM_PAGE_KSM : KSM_PAGE_PRIVATE;
	if (sharers > 1)
		return KSM_PAGE_KSM;
	if (ifc->excl && !(e & PM_EXCLUSIVE))
		return (mapcount == 0 || mapcount > 2) ? KSM_PAGE_KSM : KSM_PAGE_PRIVATE;
	return KSM_PAGE_PRIVATE;
}

/* Before the self-test (unit tests of racer verifiers): KPF_KSM and PFNs trusted */
static const stress_ksm_unmerge_iface_t stress_ksm_unmerge_iface_default = {
	.tested = false, .pfns = true, .kpageflags = true, .kpf_ksm = true,
};
static const stress_ksm_unmerge_iface_t *stress_ksm_unmerge_iface_cur;	/* this process's */
static int stress_ksm_unmerge_kpagecount_fd = -1;	/* /proc/kpagecount, where KPF_KSM lies */

/*
 *  stress_ksm_unmerge_what()
 *	page_what() with this process's self-tested signals, and a known
 *	zero page pfn (zero_pfn, 0 none) also taken for the zero page
 */
static int stress_ksm_unmerge_what(const uint64_t zero_pfn, const uint64_t e, const uint64_t flags,
	const size_t sharers)
{
	const stress_ksm_unmerge_iface_t *ifc = stress_ksm_unmerge_iface_cur ?
		stress_ksm_unmerge_iface_cur : &stress_ksm_unmerge_iface_default;

	uint64_t count = 0;

	if (zero_pfn && (e & PM_PRESENT) && (e & PM_PFN_MASK) == zero_pfn)
		return KSM_PAGE_ZERO;
	if (!ifc->kpf_ksm && sharers <= 1 && (e & PM_PRESENT) && !(e & PM_EXCLUSIVE) &&
	    stress_ksm_unmerge_kpagecount_fd >= 0 &&
	    pread(stress_ksm_unmerge_kpagecount_fd, &count, sizeof(count),
		  (off_t)((e & PM_PFN_MASK) * sizeof(count))) != sizeof(count))
		count = 0;
	return stress_ksm_unmerge_page_what(ifc, e, flags, sharers, count);
}

/*
 *  stress_ksm_unmerge_iface_line()
 *	pure: the report line of interface i (other tools grep the unreliable form)
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
 *  stress_ksm_unmerge_iface_report()
 *	one line per interface found unreliable; -v: the whole table
 */
static void stress_ksm_unmerge_iface_report(const stress_ksm_unmerge_iface_t *ifc)
{
	char line[512];
	int i;

	for (i = 0; i < KSM_IFACES; i++) {
		stress_ksm_unmerge_iface_line(ifc, i, line, sizeof(line));
		if (ifc->trusted[i])
			pr_dbg("%s\n", line);
		else
			pr_inf("%s\n", line);
	}
	if (!ifc->zero_unshare)
		pr_dbg("ksm-unmerge: kernel before 6.4: KSM zero pages stay mapped after unmerge "
			"by design, not checked\n");
}

static int stress_ksm_unmerge_open(const char *path);
static int stress_ksm_unmerge_open_proc(const char *root, const char *name);

/*
 *  stress_ksm_unmerge_iface_entry()
 *	pagemap entry and kpageflags word of the page at addr (0s on error)
 */
static void stress_ksm_unmerge_iface_entry(const int pm_fd, const int kpf_fd, const void *addr,
	const size_t page_size, uint64_t *e, uint64_t *flags)
{
	*e = 0;
	*flags = 0;
	if (pm_fd < 0 || stress_ksm_unmerge_pagemap_read(pm_fd, addr, 1, page_size, e) < 0) {
		*e = 0;
		return;
	}
	if (kpf_fd >= 0 && stress_ksm_unmerge_pm_pfn(*e))
		*flags = stress_ksm_unmerge_kpageflags(kpf_fd, *e & PM_PFN_MASK);
}

/*
 *  stress_ksm_unmerge_iface_files()
 *	the self-test's file observations: kernel version, ksm_stat lines,
 *	ksm_merging_pages (under the --ksm-unmerge-proc root)
 */
static void stress_ksm_unmerge_iface_files(const char *proc_root, stress_ksm_unmerge_iface_obs_t *o)
{
	struct utsname u;
	char buf[1024];
	int fd;

	o->kver = (uname(&u) == 0) ? stress_ksm_unmerge_kver(u.release) : 0;
	fd = stress_ksm_unmerge_open_proc(proc_root, "self/ksm_stat");
	o->stat = fd >= 0;
	if (stress_ksm_unmerge_fd_read(fd, buf, sizeof(buf)) > 0) {
		o->stat_merging = stress_ksm_unmerge_field(buf, "ksm_merging_pages") >= 0;
		o->stat_zero = stress_ksm_unmerge_field(buf, "ksm_zero_pages") >= 0;
	}
	if (fd >= 0)
		(void)close(fd);
	fd = stress_ksm_unmerge_open_proc(proc_root, "self/ksm_merging_pages");
	o->merging_pages = fd >= 0;
	if (fd >= 0)
		(void)close(fd);
}

/*
 *  stress_ksm_unmerge_iface_cow()
 *	global cow_ksm, -1 when /proc/vmstat lacks it
 */
static int64_t stress_ksm_unmerge_iface_cow(void)
{
	char buf[16384];
	const int fd = stress_ksm_unmerge_open("/proc/vmstat");
	int64_t v = -1;

	if (stress_ksm_unmerge_fd_read(fd, buf, sizeof(buf)) > 0)
		v = stress_ksm_unmerge_field(buf, "cow_ksm");
	if (fd >= 0)
		(void)close(fd);
	return v;
}

/*
 *  stress_ksm_unmerge_iface_merge()
 *	the probe merge: pages 0 and 1 identical, page 2 zero-filled, with
 *	use_zero_pages=1 for the duration; waits for ksmd, then unmerges and
 *	reads how cow_ksm moved
 */
static void stress_ksm_unmerge_iface_merge(const int pm_fd, const int kpf_fd, const size_t ps,
	stress_ksm_unmerge_iface_obs_t *o)
{
	uint8_t *p;
	char zero_was[32];
	size_t w;
	const double t0 = stress_time_now();
	const uint64_t salt = stress_mwc64() | 1;

	o->merged = -1;
	p = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	for (w = 0; w < ps / sizeof(uint64_t); w++)
		((uint64_t *)p)[w] = ((uint64_t *)(p + ps))[w] = salt * (w + 1);
	(void)shim_memset(p + 2 * ps, 0, ps);
	if (stress_ksm_unmerge_knob_read("use_zero_pages", zero_was, sizeof(zero_was)) < 0)
		zero_was[0] = '\0';
	(void)stress_ksm_unmerge_knob_write("use_zero_pages", "1");
	if (madvise(p, 3 * ps, MADV_MERGEABLE) == 0) {
		o->merged = 0;
		while (stress_time_now() - t0 < KSM_IFACE_PROBE_SECS) {
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
		o->cow_before = stress_ksm_unmerge_iface_cow();
		(void)madvise(p, 3 * ps, MADV_UNMERGEABLE);
		o->cow_after = stress_ksm_unmerge_iface_cow();
	}
	if (zero_was[0])
		(void)stress_ksm_unmerge_knob_write("use_zero_pages", zero_was);
	(void)munmap(p, 3 * ps);
}

/*
 *  stress_ksm_unmerge_iface_probe()
 *	gather the self-test's observations on memory mapped for it
 */
static void stress_ksm_unmerge_iface_probe(const char *proc_root, stress_ksm_unmerge_iface_obs_t *o)
{
	const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	const int pm_fd = stress_ksm_unmerge_open("/proc/self/pagemap");
	const int kpf_fd = stress_ksm_unmerge_open("/proc/kpageflags");
	volatile uint8_t *rf;
	uint8_t *fresh;

	(void)memset(o, 0, sizeof(*o));
	o->cow_before = o->cow_after = -1;
	o->pagemap = pm_fd >= 0;
	o->kpageflags = kpf_fd >= 0;
	stress_ksm_unmerge_iface_files(proc_root, o);
	rf = mmap(NULL, 2 * ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fresh = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
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
	stress_ksm_unmerge_iface_merge(pm_fd, kpf_fd, ps, o);
	if (stress_ksm_unmerge_fake_no_zero) {
		/* test only: what a pvm_no_zero_page=1 kernel shows for the read faults */
		o->rf[0] = o->fresh;
		o->rf_flags[0] = o->fresh_flags;
		o->rf[1] = o->fresh + 1;
		o->rf_flags[1] = o->fresh_flags;
	}
	if (pm_fd >= 0)
		(void)close(pm_fd);
	if (kpf_fd >= 0)
		(void)close(kpf_fd);
}

/*
 *  stress_ksm_unmerge_iface_selftest()
 *	init(), knobs set: probe, judge, print; the verdict is shared with instances
 */
static void stress_ksm_unmerge_iface_selftest(stress_ksm_unmerge_shared_t *sh)
{
	stress_ksm_unmerge_iface_obs_t o;
	const char *fake = getenv("STRESS_KSM_UNMERGE_FAKE");

	if (fake) {
		stress_ksm_unmerge_fake_kpf_ksm = strstr(fake, "kpf-ksm-all") != NULL;
		stress_ksm_unmerge_fake_no_zero = strstr(fake, "no-zero-page") != NULL;
		pr_inf("ksm-unmerge: STRESS_KSM_UNMERGE_FAKE=%s: faking a kernel's interface behaviour (tests only)\n",
			fake);
	}
	stress_ksm_unmerge_iface_probe(sh->proc_root, &o);
	stress_ksm_unmerge_iface_judge(&o, &sh->iface);
	stress_ksm_unmerge_iface_report(&sh->iface);
}
