/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racer-common.h: helpers shared by the racers of the
 * stress-ksm-unmerge-racer-*.h headers (private header of
 * stress-ksm-unmerge.c, included once, before them).
 */

/*
 *  Racers vmsplice, gup, uffd-wp and thp:
 *  vmsplice  GUP references on KSM pages held in a pipe across the unmerge
 *  gup       O_DIRECT read-only and write pins of KSM pages (COW breaks)
 *  uffd-wp   unshare of uffd-wp protected KSM pages, with an unmerge watchdog
 *  thp       KSM split of THPs, unmerge racing memory compaction
 */
#if !defined(KPF_BIT_THP)
#define KPF_BIT_THP			(22)
#endif
#if !defined(KPF_BIT_COMPOUND_HEAD)
#define KPF_BIT_COMPOUND_HEAD		(15)
#endif
#if !defined(KPF_BIT_COMPOUND_TAIL)
#define KPF_BIT_COMPOUND_TAIL		(16)
#endif

#define KSM_RACER_OP_MAX_PAGES		(16)	/* pages per vmsplice / O_DIRECT op */

/* What one pagemap entry maps: the racers' one answer to "is this a KSM page" */
enum {
	KSM_ENTRY_ABSENT = 0,		/* not present */
	KSM_ENTRY_ANON,		/* present, not a KSM page */
	KSM_ENTRY_KSM,		/* KSM page (KPF_KSM) */
	KSM_ENTRY_KZERO,		/* zero page placed by KSM */
};

/*
 *  stress_ksm_unmerge_others_run()
 *	do racers outside the group mine (a KSM_RACER_F_* flag of the racer
 *	table) run: they may discard, protect or rewrite pages, so transient
 *	zero pages are legitimate
 */
static inline bool stress_ksm_unmerge_others_run(const stress_ksm_unmerge_ctx_t *ctx, const unsigned int mine)
{
	size_t i;

	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		if ((ctx->racers_mask & STRESS_BIT_ULL(i)) && !(stress_ksm_unmerge_racers[i].flags & mine))
			return true;
	}
	return false;
}

/*
 *  stress_ksm_unmerge_racer_reason()
 *	set a racer's reason string (why skipped / not reached)
 */
static void stress_ksm_unmerge_racer_reason(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const char *fmt, ...) FORMAT(printf, 3, 4);

static void stress_ksm_unmerge_racer_reason(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(ctx->st->racer[idx].reason, sizeof(ctx->st->racer[idx].reason), fmt, ap);
	va_end(ap);
}

/*
 *  stress_ksm_unmerge_racer_buffers()
 *	KSM_RACER_OP_MAX_PAGES + 1 pages (the last is a scratch page) for a racer's
 *	copies of region pages, in shared anonymous memory: KSM never merges
 *	shmem, so under prctl's merge-any a copy of a unique page cannot merge
 *	with the region page it came from; NULL on failure
 */
static uint8_t *stress_ksm_unmerge_racer_buffers(const stress_ksm_unmerge_ctx_t *ctx)
{
	void *p = mmap(NULL, (KSM_RACER_OP_MAX_PAGES + 1) * ctx->page_size, PROT_READ | PROT_WRITE,
		MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return (p == MAP_FAILED) ? NULL : (uint8_t *)p;
}

/*
 *  stress_ksm_unmerge_racer_buffers_free()
 *	unmap stress_ksm_unmerge_racer_buffers()
 */
static void stress_ksm_unmerge_racer_buffers_free(const stress_ksm_unmerge_ctx_t *ctx, uint8_t *buf)
{
	if (buf)
		(void)munmap(buf, (KSM_RACER_OP_MAX_PAGES + 1) * ctx->page_size);
}

/*
 *  stress_ksm_unmerge_all_zero()
 *	pure: are the len bytes at buf all zero
 */
static bool stress_ksm_unmerge_all_zero(const uint8_t *buf, const size_t len)
{
	const size_t words = len / sizeof(uint64_t);
	size_t i;

	for (i = 0; i < words; i++) {
		uint64_t w;

		(void)shim_memcpy(&w, buf + i * sizeof(w), sizeof(w));
		if (w)
			return false;
	}
	for (i = words * sizeof(uint64_t); i < len; i++)
		if (buf[i])
			return false;
	return true;
}

/*
 *  stress_ksm_unmerge_entry_state()
 *	pure: what pagemap entry e (kpageflags flags) maps, from the central
 *	page verdict: KSM page, KSM zero page, other page, absent
 */
static int stress_ksm_unmerge_entry_state(const uint64_t zero_pfn, const uint64_t e, const uint64_t flags)
{
	int what;

	if (!(e & PM_PRESENT))
		return KSM_ENTRY_ABSENT;
	what = stress_ksm_unmerge_what(zero_pfn, e, flags, 1);
	if (what == KSM_PAGE_ZERO)
		return KSM_ENTRY_KZERO;
	if (what == KSM_PAGE_KSM)
		return KSM_ENTRY_KSM;
	return KSM_ENTRY_ANON;
}

/*
 *  stress_ksm_unmerge_entry_read_state()
 *	entry_state() of pagemap entry e, its kpageflags read now
 */
static int stress_ksm_unmerge_entry_read_state(const stress_ksm_unmerge_ctx_t *ctx, const uint64_t e)
{
	if (!(e & PM_PRESENT))
		return KSM_ENTRY_ABSENT;
	return stress_ksm_unmerge_entry_state(ctx->zero_pfn, e,
		stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, e & PM_PFN_MASK));
}

/*
 *  stress_ksm_unmerge_page_is_ksm()
 *	is page i of the region a KSM page right now (the KSM zero page
 *	counts when KSM places zero pages)
 */
static bool stress_ksm_unmerge_page_is_ksm(stress_ksm_unmerge_ctx_t *ctx, const size_t i)
{
	uint64_t e = 0;
	int st;

	if (!ctx->have_pfns ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region + i * ctx->page_size,
			1, ctx->page_size, &e) < 0)
		return false;
	st = stress_ksm_unmerge_entry_read_state(ctx, e);
	if (st == KSM_ENTRY_KZERO)
		return ctx->ksm_zero;
	return st == KSM_ENTRY_KSM;
}

/*
 *  stress_ksm_unmerge_entry_states()
 *	state of n pages from addr into st[], -1 without pagemap PFNs
 */
static int stress_ksm_unmerge_entry_states(const stress_ksm_unmerge_ctx_t *ctx, const void *addr,
	const size_t n, uint8_t *st)
{
	uint64_t pm[KSM_RACER_OP_MAX_PAGES];
	size_t i;

	if (!ctx->have_pfns || n > KSM_RACER_OP_MAX_PAGES ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, addr, n, ctx->page_size, pm) < 0) {
		(void)memset(st, KSM_ENTRY_ABSENT, n);
		return -1;
	}
	for (i = 0; i < n; i++)
		st[i] = (uint8_t)stress_ksm_unmerge_entry_read_state(ctx, pm[i]);
	return 0;
}

/*
 *  stress_ksm_unmerge_pattern_pages_present()
 *	states of pages first.. (up to n): how many leading pages hold their
 *	pattern bytes (present, and on the zero page only if the pattern is
 *	zero there); touching a hole another racer discarded would map the
 *	zero page (taken for a KSM zero page by the verification) or, for
 *	an O_DIRECT read, expose zeros until the transfer lands
 */
static size_t stress_ksm_unmerge_pattern_pages_present(const stress_ksm_unmerge_ctx_t *ctx, const size_t first,
	const size_t n, uint8_t *st)
{
	size_t j;

	if (stress_ksm_unmerge_entry_states(ctx, ctx->region + first * ctx->page_size, n, st) < 0)
		return n;	/* no PFNs: cannot tell, take them all */
	for (j = 0; j < n; j++) {
		if (st[j] == KSM_ENTRY_ABSENT)
			break;
		if (st[j] == KSM_ENTRY_KZERO &&
		    stress_ksm_unmerge_page_kind(ctx->pattern, first + j) != KSM_KIND_ZERO)
			break;
	}
	return j;
}

/*
 *  stress_ksm_unmerge_copied_pages_check()
 *	pure verifier: buf holds len bytes copied from region pages first..;
 *	returns the index (within buf) of the first page that is not the
 *	pattern, with its byte offset in *off, or -1 if all intact; whole
 *	zero pages pass only if tolerate_zero (another racer discarded them);
 *	scratch is one page used for a partial last page
 */
static ssize_t stress_ksm_unmerge_copied_pages_check(const stress_ksm_unmerge_ctx_t *ctx,
	const size_t first, const uint8_t *buf, const size_t len, const bool tolerate_zero,
	uint8_t *scratch, ssize_t *off)
{
	const size_t ps = ctx->page_size;
	size_t j;

	*off = -1;
	for (j = 0; j * ps < len; j++) {
		const uint8_t *page = buf + j * ps;
		const size_t plen = (len - j * ps < ps) ? len - j * ps : ps;
		size_t b;

		if (plen == ps) {
			*off = stress_ksm_unmerge_page_check(ctx, first + j, page);
		} else {
			stress_ksm_unmerge_page_fill(ctx, first + j, scratch);
			for (b = 0; b < plen && page[b] == scratch[b]; b++)
				;
			*off = (b < plen) ? (ssize_t)b : -1;
		}
		if (*off < 0)
			continue;
		if (tolerate_zero && stress_ksm_unmerge_all_zero(page, plen)) {
			*off = -1;
			continue;
		}
		return (ssize_t)j;
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_expected_byte()
 *	expected byte at offset off of region page i
 */
static uint8_t stress_ksm_unmerge_expected_byte(const stress_ksm_unmerge_ctx_t *ctx,
	const size_t i, const ssize_t off, uint8_t *scratch)
{
	stress_ksm_unmerge_page_fill(ctx, i, scratch);
	return scratch[off];
}

/*
 *  stress_ksm_unmerge_random_range()
 *	random range of 1..max pages inside the region: first page, count
 */
static size_t stress_ksm_unmerge_random_range(const stress_ksm_unmerge_ctx_t *ctx, const size_t max,
	size_t *first)
{
	/* keep out of pages another racer may make PROT_NONE (mprotect) */
	const size_t npages = ctx->racers_touch_npages ? ctx->racers_touch_npages : ctx->npages;
	size_t n = 1 + stress_mwc32modn((uint32_t)max);

	if (n > npages)
		n = npages;
	*first = stress_mwc32modn((uint32_t)(npages - n + 1));
	return n;
}

/*
 *  stress_ksm_unmerge_racer_hold()
 *	keep a splice or pin for up to 1 ms or until the phase moves on, so
 *	its release often happens while the unmerge runs
 */
static void stress_ksm_unmerge_racer_hold(stress_ksm_unmerge_ctx_t *ctx)
{
	const int phase = ctx->phase;
	const uint32_t steps = stress_mwc32modn(20);
	uint32_t s;

	for (s = 0; s < steps && ctx->phase == phase && !ctx->quiesce; s++)
		(void)shim_nanosleep_uint64(50000);
}

/*
 *  stress_ksm_unmerge_racer_until_stop()
 *	racer thread loop condition: run until racers_stop, not until the
 *	end of the run: a cycle that is past its merge when the run ends
 *	still verifies, and its quiesce needs every thread to park
 */
static inline bool stress_ksm_unmerge_racer_until_stop(const stress_ksm_unmerge_ctx_t *ctx)
{
	return !ctx->racers_stop;
}

/*
 *  stress_ksm_unmerge_racer_phase_active()
 *	racers act only while merged or being unmerged, never while merging,
 *	and start nothing new once the run is ending
 */
static inline bool stress_ksm_unmerge_racer_phase_active(const stress_ksm_unmerge_ctx_t *ctx)
{
	const int phase = ctx->phase;

	return !ctx->quiesce && (phase == KSM_PHASE_MERGED || phase == KSM_PHASE_UNMERGING) &&
		stress_continue(ctx->args);
}

/*
 *  Racers mrelease, fork, mprotect and sparse
 */
static void stress_ksm_unmerge_lat_add(stress_ksm_unmerge_lat_t *lat, const double ms);

#if !defined(PR_SET_PDEATHSIG)
#define PR_SET_PDEATHSIG		(1)
#endif
#if !defined(MAP_NORESERVE)
#define MAP_NORESERVE			(0)
#endif

#define KSM_MRELEASE_ROUNDS		(4)		/* kill/reap rounds per cycle */
#define KSM_MRELEASE_DELAY_NS		(2000000)	/* max fork-to-kill delay */
#define KSM_MRELEASE_CHILD_SECS		(10)		/* child lifetime bound */
#define KSM_MRELEASE_MODES		(3)		/* unmerge, COW-write, keep */
#define KSM_MRELEASE_PROBE_PAGES	(64)		/* victim pages probed before the kill */
#define KSM_FORK_PAGES			(64)		/* KSM pages a child COWs */
#define KSM_FORK_MIN_PAGES		(4)		/* ... at least, if it can */
#define KSM_FORK_TRIES			(1024)		/* random picks per child */
#define KSM_FORK_REAP_SECS		(3.0)		/* child exit bound */
#define KSM_MPROTECT_TOGGLES		(128)		/* mprotect calls per cycle */
#define KSM_MPROTECT_MAX_PAGES		(32)		/* pages per mprotect */
#define KSM_SPARSE_DEFAULT_BYTES	(16ULL * GB)
#define KSM_SPARSE_STRIDE		(64ULL * MB)	/* one populated page per */

/*
 *  stress_ksm_unmerge_pattern_bad_offset()
 *	byte offset of the first wrong byte of region page i at page, -1 if it
 *	holds the pattern or is a zero page another racer's discard explains
 */
static ssize_t stress_ksm_unmerge_pattern_bad_offset(const stress_ksm_unmerge_ctx_t *ctx,
	const size_t i, const uint8_t *page)
{
	const ssize_t off = stress_ksm_unmerge_page_check(ctx, i, page);

	if (off >= 0 && stress_ksm_unmerge_others_run(ctx, KSM_RACER_F_MM) &&
	    stress_ksm_unmerge_all_zero(page, ctx->page_size))
		return -1;
	return off;
}

/*
 *  stress_ksm_unmerge_now_ns()
 *	CLOCK_MONOTONIC in nanoseconds
 */
static uint64_t stress_ksm_unmerge_now_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 *  stress_ksm_unmerge_entry_is_ksm()
 *	pure: does pagemap entry e (kpageflags flags) map a KSM page or KSM zero page
 */
static bool stress_ksm_unmerge_entry_is_ksm(const uint64_t e, const uint64_t flags,
	const uint64_t zero_pfn)
{
	return stress_ksm_unmerge_entry_state(zero_pfn, e, flags) >= KSM_ENTRY_KSM;
}

/*
 *  stress_ksm_unmerge_region_page_is_ksm()
 *	is region page i (pagemap entry e, kpageflags flags) a KSM page; the
 *	shared zero page only counts as a KSM zero page where the pattern puts
 *	zero pages (elsewhere it is a discarded page read back)
 */
static bool stress_ksm_unmerge_region_page_is_ksm(const stress_ksm_unmerge_ctx_t *ctx, const size_t i,
	const uint64_t e, const uint64_t flags)
{
	const int st = stress_ksm_unmerge_entry_state(ctx->zero_pfn, e, flags);

	if (st == KSM_ENTRY_KZERO)
		return stress_ksm_unmerge_page_kind(ctx->pattern, i) == KSM_KIND_ZERO;
	return st == KSM_ENTRY_KSM;
}

/*
 *  stress_ksm_unmerge_unshared_verdict()
 *	pure: page that mapped KSM pfn_before now maps e_after (flags_after):
 *	1 unshared (a private page), 0 not present or another racer's zero
 *	page (inconclusive), -1 still a KSM page or still the KSM zero page.
 *	Decided by the page flags, not the pfn: when compaction migrated the
 *	KSM page during the unmerge, the private copy can be allocated in the
 *	frame the KSM page left (measured: 41 times in 13 M checks)
 */
static int stress_ksm_unmerge_unshared_verdict(const uint64_t pfn_before, const uint64_t e_after,
	const uint64_t flags_after, const uint64_t zero_pfn)
{
	if (!(e_after & PM_PRESENT))
		return 0;
	/* the zero page: still KSM's, or a discarded page read back */
	if (zero_pfn && ((e_after & PM_PFN_MASK) == zero_pfn))
		return (pfn_before == zero_pfn) ? -1 : 0;
	if (stress_ksm_unmerge_entry_is_ksm(e_after, flags_after, zero_pfn))
		return -1;
	return 1;
}

/*
 *  stress_ksm_unmerge_page_lookup()
 *	pagemap entry (via pm_fd) and kpageflags word of the page at addr
 */
static int stress_ksm_unmerge_page_lookup(const stress_ksm_unmerge_ctx_t *ctx, const int pm_fd,
	const void *addr, uint64_t *e, uint64_t *flags)
{
	*e = 0;
	*flags = 0;
	if (stress_ksm_unmerge_pagemap_read(pm_fd, addr, 1, ctx->page_size, e) < 0)
		return -1;
	if ((*e & PM_PRESENT) && (*e & PM_PFN_MASK))
		*flags = stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, *e & PM_PFN_MASK);
	return 0;
}

/*
 *  stress_ksm_unmerge_racer_keep_going()
 *	racer thread: false (after a short sleep) once the run is ending; the
 *	thread must still park for a cycle that verifies after the end of the
 *	run, so it loops on racers_stop, not on stress_continue()
 */
static bool stress_ksm_unmerge_racer_keep_going(stress_ksm_unmerge_ctx_t *ctx)
{
	if (stress_ksm_unmerge_racer_running(ctx))
		return true;
	(void)shim_nanosleep_uint64(1000000);
	return false;
}

/*
 *  stress_ksm_unmerge_vma_flags()
 *	diagnostics: range and VmFlags (with "mg") of the VMA holding addr
 */
static void stress_ksm_unmerge_vma_flags(const void *addr, char *out, const size_t len)
{
	const unsigned long a = (unsigned long)(uintptr_t)addr;
	char line[512];
	bool in_vma = false;
	FILE *fp;

	(void)snprintf(out, len, "VMA not found");
	fp = fopen("/proc/self/smaps", "re");
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in_vma = (a >= lo && a < hi);
			if (in_vma)
				(void)snprintf(out, len, "%lx-%lx", lo, hi);
			continue;
		}
		if (in_vma && !strncmp(line, "VmFlags:", 8)) {
			line[strcspn(line, "\n")] = '\0';
			(void)strlcat(out, line + 8, len);
			break;
		}
	}
	(void)fclose(fp);
}

/*
 *  stress_ksm_unmerge_racer_child_init()
 *	racer child: die with the forking thread, be the OOM killer's first pick
 */
static int stress_ksm_unmerge_racer_child_init(stress_ksm_unmerge_ctx_t *ctx, const pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return -1;
	if (getppid() != parent) {
		errno = ESRCH;
		return -1;
	}
	stress_set_oom_adjustment(ctx->args, true);
	return 0;
}

/*
 *  stress_ksm_unmerge_racer_need_pfns()
 *	start(): -1 with the reason when pagemap hides PFNs (not root): the
 *	racer's evidence (what why names) cannot be seen
 */
static int stress_ksm_unmerge_racer_need_pfns(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const char *why)
{
	if (ctx->have_pfns)
		return 0;
	(void)snprintf(ctx->st->racer[idx].reason, sizeof(ctx->st->racer[idx].reason),
		"pagemap PFNs not readable (needs CAP_SYS_ADMIN): %s", why);
	return -1;
}

/*
 *  stress_ksm_unmerge_racer_child_rw()
 *	racer child: make its own copy of the region writable (mprotect racer)
 */
static int stress_ksm_unmerge_racer_child_rw(stress_ksm_unmerge_ctx_t *ctx)
{
	return mprotect(ctx->region, ctx->region_size, PROT_READ | PROT_WRITE);
}

/*
 *  stress_ksm_unmerge_child_reap()
 *	wait for child pid up to secs (0: no bound), then SIGKILL it;
 *	returns 1 if it had to be killed, 0 reaped, -1 waitpid error
 */
static int stress_ksm_unmerge_child_reap(const pid_t pid, const double secs, int *status)
{
	const double deadline = stress_time_now() + secs;
	pid_t ret;

	*status = 0;
	if (secs <= 0.0)
		return (shim_waitpid(pid, status, 0) == pid) ? 0 : -1;
	for (;;) {
		ret = waitpid(pid, status, WNOHANG);
		if (ret == pid)
			return 0;
		if ((ret < 0) && (errno != EINTR))
			return -1;
		if (stress_time_now() > deadline)
			break;
		(void)shim_nanosleep_uint64(500000);
	}
	(void)shim_kill(pid, SIGKILL);
	return (shim_waitpid(pid, status, 0) == pid) ? 1 : -1;
}


/*
 *  stress_ksm_unmerge_racer_alloc()
 *	zeroed racer state of size bytes, NULL with the reason set; need_pfns:
 *	the racer judges KSM pages from pagemap PFNs (root)
 */
static void *stress_ksm_unmerge_racer_alloc(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const size_t size, const bool need_pfns)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	void *p;

	if (need_pfns && !ctx->have_pfns) {
		(void)snprintf(rs->reason, sizeof(rs->reason),
			"pagemap PFNs not readable (needs CAP_SYS_ADMIN): cannot see KSM pages");
		return NULL;
	}
	p = calloc(1, size);
	if (!p)
		(void)snprintf(rs->reason, sizeof(rs->reason), "out of memory for racer state");
	return p;
}

/*
 *  stress_ksm_unmerge_racer_fail()
 *	count a failure of racer idx and say what the kernel did wrong
 */
static void stress_ksm_unmerge_racer_fail(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const char *fmt, ...)
	FORMAT(printf, 3, 4);

static void stress_ksm_unmerge_racer_fail(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const char *fmt, ...)
{
	char buf[384];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
	pr_fail("%s: %s racer: %s\n", ctx->args->name, stress_ksm_unmerge_racer_name(idx), buf);
}

/*
 *  stress_ksm_unmerge_racer_may_act()
 *	racer thread loop: park while the cycle verifies, idle once the run
 *	ends (still parking); true when the racer may act now
 */
static bool stress_ksm_unmerge_racer_may_act(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	if (ctx->quiesce) {
		(void)stress_ksm_unmerge_racer_park(ctx, idx);
		return false;
	}
	return stress_ksm_unmerge_racer_keep_going(ctx);
}

/*
 *  stress_ksm_unmerge_first_bad_page()
 *	pure: first of n pages at p that does not hold tmpl, -1 if all do
 */
static ssize_t stress_ksm_unmerge_first_bad_page(const uint8_t *p, const size_t n, const uint8_t *tmpl,
	const size_t page_size)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (shim_memcmp(p + k * page_size, tmpl, page_size))
			return (ssize_t)k;
	return -1;
}

/*
 *  stress_ksm_unmerge_ksm_page_count()
 *	KSM pages among n pages at p (pagemap and kpageflags)
 */
static uint64_t stress_ksm_unmerge_ksm_page_count(const stress_ksm_unmerge_ctx_t *ctx,
	const uint8_t *p, const size_t n)
{
	uint64_t count = 0;
	size_t k;

	for (k = 0; k < n; k++) {
		uint64_t e, flags;

		if (stress_ksm_unmerge_page_lookup(ctx, ctx->pagemap_fd, p + k * ctx->page_size, &e, &flags) == 0 &&
		    stress_ksm_unmerge_entry_is_ksm(e, flags, 0))
			count++;
	}
	return count;
}
