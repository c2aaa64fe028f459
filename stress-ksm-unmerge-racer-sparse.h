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
 *  sparse: a huge MAP_NORESERVE range (16 GiB by default, up to 32 TiB and
 *  beyond where the address space allows) with at most 1024 populated
 *  pages (one per 64 MiB, the stride growing with the size) is made
 *  mergeable with the region and unmerged (timed) right before it:
 *  break_ksm's per-page walk over holes (no range walk in 6.18).  At start
 *  a 1 GiB probe measures the walk's ns per page (the hang bound of a long
 *  walk follows it) and instance 0 measures ksmd's CPU per full scan with
 *  and without the range mergeable (ksmd's scan of its holes, f5548c318d65).
 * --------------------------------------------------------------------- */

#define KSM_SPARSE_POPULATED_BYTES	(4ULL * MB)	/* populated pages at most: 1024 of 4 KiB */
#define KSM_SPARSE_FIXED_BYTES		(16ULL * MB)	/* memory cap: those, their page tables, arrays */
#define KSM_SPARSE_PROBE_BYTES		(1ULL * GB)	/* range of the ns-per-page probe */
#define KSM_SPARSE_PROBE_FALLBACK_NS	(250.0)		/* ns per page assumed when the probe fails */
#define KSM_SPARSE_HANG_FACTOR		(4.0)		/* a walk may take this times its prediction */
#define KSM_SPARSE_RESTART_SECS		(1.0)		/* walk bound if a stop signal has SA_RESTART */
#define KSM_SPARSE_MAP_HALVINGS		(8)		/* mmap ENOMEM retries at half the size */
#define KSM_SPARSE_KSMD_SKIP		(2)		/* full scans let go by after a switch */
#define KSM_SPARSE_KSMD_SCANS		(2)		/* full scans measured, at least */
#define KSM_SPARSE_KSMD_MIN_SECS	(0.25)		/* a ksmd window lasts at least */
#define KSM_SPARSE_KSMD_MAX_SECS	(4.0)		/* and at most (skip + measure) */
#define KSM_SPARSE_KSMD_MIN_RUN		(10.0)		/* secs a run needs for the ksmd windows */
#define KSM_SPARSE_KSMD_METRIC		"ksmd scan nanosecs per sparse GiB"

/* sparse racer state (main thread only) */
typedef struct {
	uint8_t *base;			/* the sparse range, NULL once unmapped */
	size_t size;			/* its bytes */
	size_t stride;			/* bytes between populated pages */
	size_t populated;		/* populated pages */
	bool mergeable;			/* MADV_MERGEABLE is on */
	uint64_t *entries;		/* pagemap of the populated pages */
	uint64_t *flags;		/* their kpageflags */
	double probe_ns;		/* walk ns per page, from the start probe, 0 unknown */
	double last_ns;			/* walk ns per page of the last completed unmerge */
} stress_ksm_unmerge_sparse_t;

/* ksmd's CPU time and full scans over one measuring window */
typedef struct {
	uint64_t cpu_ns;		/* ksmd CPU time spent in the window */
	uint64_t scans;			/* full scans it completed in the window */
	double secs;			/* wall time of the window */
	uint64_t skipped;		/* full scans let go by before it (all, if it never began) */
} stress_ksm_unmerge_ksmd_window_t;

/* where ksmd's CPU time is read */
typedef struct {
	pid_t pid;			/* ksmd's pid */
	bool schedstat;			/* /proc/PID/schedstat (ns), else stat (ticks) */
	uint64_t tick_ns;		/* ns per clock tick for stat */
} stress_ksm_unmerge_ksmd_t;

/* the ksmd metric of this instance, 0 absent (set at start, printed at the end) */
static double stress_ksm_unmerge_sparse_ksmd_ns_gib;

static uint64_t stress_ksm_unmerge_status_kb(const pid_t pid, const char *field);

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
 *	pages (the evidence, once the walk completed: it met KSM pages, not
 *	just holes) into *ksm
 */
static int stress_ksm_unmerge_sparse_ksm_before(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_sparse_t *s, uint64_t *ksm)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	size_t k;

	*ksm = 0;
	if (stress_ksm_unmerge_sparse_lookup(ctx, s) < 0) {
		rs->failures++;
		pr_fail("%s: sparse racer: pagemap read before the unmerge failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		return -1;
	}
	for (k = 0; k < s->populated; k++)
		*ksm += stress_ksm_unmerge_entry_is_ksm(s->entries[k], s->flags[k], ctx->zero_pfn);
	rs->detail[1] += s->populated;
	return 0;
}

/*
 *  stress_ksm_unmerge_sparse_allow()
 *	pure: seconds a walk of pages may take before the monitor calls it a
 *	hang (beyond the hang bound): KSM_SPARSE_HANG_FACTOR times its
 *	prediction at the slower of the probe's and the last walk's ns per page
 */
static double stress_ksm_unmerge_sparse_allow(const size_t pages, const double probe_ns, const double last_ns)
{
	const double ns = (probe_ns > last_ns) ? probe_ns : last_ns;

	return KSM_SPARSE_HANG_FACTOR * (double)pages * (ns > 0.0 ? ns : KSM_SPARSE_PROBE_FALLBACK_NS) / 1.0E9;
}

/*
 *  stress_ksm_unmerge_sparse_stopped()
 *	the end of the run interrupted the walk (EINTR): say after how long and
 *	unmap the range now, so a prctl unmerge of the cycle does not walk it
 */
static void stress_ksm_unmerge_sparse_stopped(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_sparse_t *s,
	const uint64_t ns)
{
	pr_inf("%s: sparse racer: the end of the run interrupted the unmerge of %zu bytes after "
		"%.3f s (EINTR); not counted\n", ctx->args->name, s->size, (double)ns / 1.0E9);
	(void)munmap(s->base, s->size);
	s->base = NULL;
	s->mergeable = false;
}

/*
 *  stress_ksm_unmerge_sparse_unmerge()
 *	UNMERGING hook: the timed MADV_UNMERGEABLE of the sparse range, retried
 *	when a handled signal interrupts it; the monitor's hang bound is
 *	extended by the walk's predicted length while it runs
 */
static void stress_ksm_unmerge_sparse_unmerge(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_sparse_t *s)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const size_t pages = s->size / ctx->page_size;
	const double allow = stress_ksm_unmerge_sparse_allow(pages, s->probe_ns, s->last_ns);
	uint64_t t0, t1, ksm, spent = 0;
	int ret, err;

	if (!s->mergeable || !s->base)
		return;
	if (stress_ksm_unmerge_sparse_ksm_before(ctx, idx, s, &ksm) < 0)
		return;
	ctx->st->hang_allow = allow;
	for (;;) {
		t0 = stress_ksm_unmerge_now_ns();
		ret = madvise(s->base, s->size, MADV_UNMERGEABLE);
		err = errno;
		t1 = stress_ksm_unmerge_now_ns();
		if (ret == 0 || err != EINTR || !stress_continue(ctx->args))
			break;
		/* a handled signal stopped it: again, from the start of the range */
		spent += t1 - t0;
		ctx->st->hang_allow = allow + (double)spent / 1.0E9;
	}
	/* the walk is over: only its own length is excused */
	ctx->st->hang_allow = (double)(spent + t1 - t0) / 1.0E9;
	if (ret < 0) {
		if (err == EINTR) {
			stress_ksm_unmerge_sparse_stopped(ctx, s, spent + t1 - t0);
			return;		/* end of the run */
		}
		rs->failures++;
		pr_fail("%s: sparse racer: MADV_UNMERGEABLE of %zu bytes failed, errno=%d (%s)\n",
			ctx->args->name, s->size, err, strerror(err));
		return;
	}
	s->mergeable = false;
	s->last_ns = (double)(t1 - t0) / (double)pages;
	rs->evidence += ksm;
	rs->ops += pages;
	rs->detail[0] += pages;
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

	if (!s || !s->base)
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
 *  stress_ksm_unmerge_sparse_layout()
 *	pure: bytes between populated pages of a size-byte range: 64 MiB, or
 *	more so that at most KSM_SPARSE_POPULATED_BYTES are populated, or half
 *	the range when it is under two strides; *populated gets their count
 */
static size_t stress_ksm_unmerge_sparse_layout(const size_t size, const size_t page_size, size_t *populated)
{
	const size_t max_pages = (size_t)KSM_SPARSE_POPULATED_BYTES / page_size;
	size_t stride = (size_t)KSM_SPARSE_STRIDE;

	if (size < 2 * stride) {
		stride = (size / 2) & ~(page_size - 1);
	} else if (size / stride > max_pages) {
		stride = (size + max_pages - 1) / max_pages;
		stride = (stride + page_size - 1) & ~(page_size - 1);
	}
	*populated = size / stride;
	return stride;
}

/*
 *  stress_ksm_unmerge_sparse_as_fit()
 *	pure: the largest page-aligned size up to size that takes at most half
 *	of the address space RLIMIT_AS (limit bytes) leaves above vm_size
 *	(the process's VmSize), at least 2 pages
 */
static size_t stress_ksm_unmerge_sparse_as_fit(const size_t size, const uint64_t limit,
	const uint64_t vm_size, const size_t page_size)
{
	uint64_t fit = (limit > vm_size) ? (limit - vm_size) / 2 : 0;

	fit &= ~((uint64_t)page_size - 1);
	if (fit < 2 * page_size)
		fit = 2 * page_size;
	return (fit < (uint64_t)size) ? (size_t)fit : size;
}

/*
 *  stress_ksm_unmerge_sparse_rlimit()
 *	under an RLIMIT_AS shrink the range to half of what it leaves, and say so
 */
static void stress_ksm_unmerge_sparse_rlimit(stress_ksm_unmerge_ctx_t *ctx, size_t *size)
{
	struct rlimit rl;
	uint64_t vm_size;
	size_t fit;

	if (getrlimit(RLIMIT_AS, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return;
	vm_size = stress_ksm_unmerge_status_kb(getpid(), "VmSize:") * KB;
	fit = stress_ksm_unmerge_sparse_as_fit(*size, (uint64_t)rl.rlim_cur, vm_size, ctx->page_size);
	if (fit >= *size)
		return;
	if (stress_instance_zero(ctx->args))
		pr_inf("%s: sparse racer: RLIMIT_AS is %" PRIu64 " bytes and the process maps %" PRIu64
			": shrinking the range from %zu to %zu bytes, half of what is left\n",
			ctx->args->name, (uint64_t)rl.rlim_cur, vm_size, *size, fit);
	*size = fit;
}

/*
 *  stress_ksm_unmerge_sparse_probe()
 *	ns per page of MADV_UNMERGEABLE over a mergeable KSM_SPARSE_PROBE_BYTES
 *	range with one populated page (the walk over holes); 0 if it failed
 */
static double stress_ksm_unmerge_sparse_probe(const size_t page_size)
{
	const size_t bytes = (size_t)KSM_SPARSE_PROBE_BYTES;
	uint8_t *p;
	uint64_t t0, t1;
	int ret;

	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return 0.0;
#if defined(MADV_NOHUGEPAGE)
	(void)madvise(p, bytes, MADV_NOHUGEPAGE);
#endif
	(void)shim_memset(p + bytes / 2, 0x5a, page_size);
	if (madvise(p, bytes, MADV_MERGEABLE) < 0) {
		(void)munmap(p, bytes);
		return 0.0;
	}
	t0 = stress_ksm_unmerge_now_ns();
	ret = madvise(p, bytes, MADV_UNMERGEABLE);
	t1 = stress_ksm_unmerge_now_ns();
	(void)munmap(p, bytes);
	return (ret < 0) ? 0.0 : (double)(t1 - t0) / (double)(bytes / page_size);
}

/*
 *  stress_ksm_unmerge_sparse_restarts()
 *	the first stop signal (SIGALRM, SIGINT, SIGTERM) whose handler has
 *	SA_RESTART, 0 none: the kernel would restart an interrupted walk from
 *	the start instead of returning EINTR, so the stop would wait for it
 */
static int stress_ksm_unmerge_sparse_restarts(void)
{
	static const int sigs[] = { SIGALRM, SIGINT, SIGTERM };
	struct sigaction sa;
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(sigs); i++) {
		if (sigaction(sigs[i], NULL, &sa) == 0 && (sa.sa_flags & SA_RESTART) &&
		    sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)
			return sigs[i];
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_sparse_size()
 *	the range's size: the option, cut to fit the commit limit, RLIMIT_AS
 *	and, where a stop signal restarts system calls, a walk of about 1 s;
 *	the probe's ns per page into s->probe_ns
 */
static void stress_ksm_unmerge_sparse_size(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_sparse_t *s)
{
	const int sig = stress_ksm_unmerge_sparse_restarts();
	const double ns = (s->probe_ns > 0.0) ? s->probe_ns : KSM_SPARSE_PROBE_FALLBACK_NS;
	size_t fit;

	s->size = stress_ksm_unmerge_sparse_bytes(ctx->page_size);
	stress_ksm_unmerge_sparse_fit(ctx, &s->size);
	stress_ksm_unmerge_sparse_rlimit(ctx, &s->size);
	if (!sig)
		return;
	fit = (size_t)(KSM_SPARSE_RESTART_SECS * 1.0E9 / ns) * ctx->page_size;
	if (fit < 2 * ctx->page_size)
		fit = 2 * ctx->page_size;
	if (fit >= s->size)
		return;
	if (stress_instance_zero(ctx->args))
		pr_inf("%s: sparse racer: the handler of signal %d restarts system calls (SA_RESTART), so "
			"the stop could not interrupt the walk: shrinking the range from %zu to %zu bytes, "
			"about %.0f s of walk at %.1f ns per page\n", ctx->args->name, sig, s->size, fit,
			KSM_SPARSE_RESTART_SECS, ns);
	s->size = fit;
}

/*
 *  stress_ksm_unmerge_sparse_reserve()
 *	mmap the range, at half the size after each ENOMEM (the address space:
 *	47 bits of user space on x86-64 is 128 TiB, less what is mapped)
 */
static int stress_ksm_unmerge_sparse_reserve(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_sparse_t *s)
{
	const size_t want = s->size;
	int i;

	for (i = 0; ; i++) {
		s->base = mmap(NULL, s->size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (s->base != MAP_FAILED)
			break;
		s->base = NULL;
		if (errno != ENOMEM || i >= KSM_SPARSE_MAP_HALVINGS || s->size / 2 < 2 * ctx->page_size)
			return -1;
		s->size = (s->size / 2) & ~(ctx->page_size - 1);
	}
	if (s->size < want)
		pr_inf("%s: sparse racer: no room for %zu bytes of address space (mmap: ENOMEM; the user "
			"address space, e.g. 128 TiB on x86-64 with 4-level page tables, less what is mapped): "
			"using %zu bytes\n", ctx->args->name, want, s->size);
	return 0;
}

/*
 *  stress_ksm_unmerge_sparse_map()
 *	reserve the range, populate one page per stride with the "same" template
 */
static int stress_ksm_unmerge_sparse_map(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_sparse_t *s)
{
	size_t k;

	stress_ksm_unmerge_sparse_size(ctx, s);
	if (stress_ksm_unmerge_sparse_reserve(ctx, s) < 0)
		return -1;
	s->stride = stress_ksm_unmerge_sparse_layout(s->size, ctx->page_size, &s->populated);
	s->entries = calloc(s->populated, sizeof(*s->entries));
	s->flags = calloc(s->populated, sizeof(*s->flags));
	if (!s->entries || !s->flags) {
		errno = ENOMEM;
		return -1;
	}
#if defined(MADV_NOHUGEPAGE)
	(void)madvise(s->base, s->size, MADV_NOHUGEPAGE);
#endif
#if defined(MADV_DONTFORK)
	/*
	 * fork and mrelease children must not share the populated pages:
	 * where KPF_KSM lies (6.10-6.12) a page mapped by more than two ptes
	 * reads as a KSM page, and two live children make a private page so
	 */
	if (madvise(s->base, s->size, MADV_DONTFORK) < 0)
		return -1;	/* the racer is skipped with errno in its reason */
#endif
	stress_memory_anon_name_set(s->base, s->size, "ksm-unmerge-sparse");
	for (k = 0; k < s->populated; k++)
		(void)shim_memcpy(s->base + k * s->stride, ctx->templates, ctx->page_size);
	return 0;
}

/*
 *  stress_ksm_unmerge_ksmd_stat_parse()
 *	pure: from a /proc/PID/stat line, the command name (into comm), the
 *	parent pid, the task flags and utime + stime in clock ticks; 0 ok
 */
static int stress_ksm_unmerge_ksmd_stat_parse(const char *buf, char *comm, const size_t len,
	long *ppid, unsigned long *flags, uint64_t *ticks)
{
	const char *open = strchr(buf, '(');
	const char *close = strrchr(buf, ')');
	unsigned long long ut, st;
	size_t n;
	char state;

	if (!open || !close || close < open || !len)
		return -1;
	n = STRESS_MINIMUM((size_t)(close - open - 1), len - 1);
	(void)memcpy(comm, open + 1, n);
	comm[n] = '\0';
	/* after "(comm)": state ppid pgrp session tty tpgid flags 4 fault counts utime stime */
	if (sscanf(close + 1, " %c %ld %*d %*d %*d %*d %lu %*u %*u %*u %*u %llu %llu",
		   &state, ppid, flags, &ut, &st) != 5)
		return -1;
	*ticks = (uint64_t)(ut + st);
	return 0;
}

/*
 *  stress_ksm_unmerge_ksmd_schedstat_parse()
 *	pure: CPU time in ns, the first of /proc/PID/schedstat's three fields; 0 ok
 */
static int stress_ksm_unmerge_ksmd_schedstat_parse(const char *buf, uint64_t *ns)
{
	unsigned long long run, wait, slices;

	if (sscanf(buf, "%llu %llu %llu", &run, &wait, &slices) != 3)
		return -1;
	*ns = (uint64_t)run;
	return 0;
}

/*
 *  stress_ksm_unmerge_ksmd_pid()
 *	the pid of the kernel thread "ksmd" (child of kthreadd, PF_KTHREAD), 0 none
 */
static pid_t stress_ksm_unmerge_ksmd_pid(void)
{
	DIR *dir = opendir("/proc");
	const struct dirent *d;
	pid_t pid = 0;

	if (!dir)
		return 0;
	while (!pid && (d = readdir(dir)) != NULL) {
		char path[300], buf[1024], comm[32];
		unsigned long flags;
		uint64_t ticks;
		long ppid;
		ssize_t n;

		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		(void)snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		n = stress_fs_file_read(path, buf, sizeof(buf) - 1);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		if (stress_ksm_unmerge_ksmd_stat_parse(buf, comm, sizeof(comm), &ppid, &flags, &ticks) == 0 &&
		    !strcmp(comm, "ksmd") && ppid == 2 && (flags & 0x00200000UL))	/* PF_KTHREAD */
			pid = (pid_t)atoi(d->d_name);
	}
	(void)closedir(dir);
	return pid;
}

/*
 *  stress_ksm_unmerge_ksmd_cpu()
 *	ksmd's CPU time so far in ns (schedstat, or stat's ticks); 0 ok
 */
static int stress_ksm_unmerge_ksmd_cpu(const stress_ksm_unmerge_ksmd_t *k, uint64_t *ns)
{
	char path[64], buf[1024], comm[32];
	unsigned long flags;
	uint64_t ticks;
	long ppid;
	ssize_t n;

	(void)snprintf(path, sizeof(path), "/proc/%d/%s", (int)k->pid, k->schedstat ? "schedstat" : "stat");
	n = stress_fs_file_read(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (k->schedstat)
		return stress_ksm_unmerge_ksmd_schedstat_parse(buf, ns);
	if (stress_ksm_unmerge_ksmd_stat_parse(buf, comm, sizeof(comm), &ppid, &flags, &ticks) < 0 ||
	    strcmp(comm, "ksmd"))
		return -1;
	*ns = ticks * k->tick_ns;
	return 0;
}

/*
 *  stress_ksm_unmerge_ksmd_selftest()
 *	find ksmd and a CPU time of it that reads; 0 ok, else why in why
 */
static int stress_ksm_unmerge_ksmd_selftest(stress_ksm_unmerge_ksmd_t *k, char *why, const size_t len)
{
	const long tck = sysconf(_SC_CLK_TCK);
	uint64_t ns;

	k->pid = stress_ksm_unmerge_ksmd_pid();
	if (!k->pid) {
		(void)snprintf(why, len, "no kernel thread ksmd found in /proc");
		return -1;
	}
	k->tick_ns = (tck > 0) ? 1000000000ULL / (uint64_t)tck : 0;
	k->schedstat = true;
	if (stress_ksm_unmerge_ksmd_cpu(k, &ns) == 0)
		return 0;
	k->schedstat = false;
	if (k->tick_ns && stress_ksm_unmerge_ksmd_cpu(k, &ns) == 0)
		return 0;
	(void)snprintf(why, len, "neither /proc/%d/schedstat nor /proc/%d/stat of ksmd reads",
		(int)k->pid, (int)k->pid);
	return -1;
}

/*
 *  stress_ksm_unmerge_ksmd_window()
 *	let KSM_SPARSE_KSMD_SKIP full scans go by, then measure ksmd's CPU
 *	over the next full scans (at least KSM_SPARSE_KSMD_SCANS and
 *	KSM_SPARSE_KSMD_MIN_SECS), ending on a scan's end; 0 measured, 1 out
 *	of time (w: what was measured, or, if it never began, CPU and secs
 *	since the start), -1 an interface failed (why)
 */
static int stress_ksm_unmerge_ksmd_window(stress_ksm_unmerge_ctx_t *ctx, const stress_ksm_unmerge_ksmd_t *k,
	stress_ksm_unmerge_ksmd_window_t *w, char *why, const size_t len)
{
	const double t_start = stress_time_now();
	uint64_t fs, last = stress_ksm_unmerge_full_scans(ctx), fs0 = 0, cpu0 = 0, cpu;
	double t0 = t_start, now;
	bool measuring = false;

	(void)memset(w, 0, sizeof(*w));
	if (stress_ksm_unmerge_ksmd_cpu(k, &cpu0) < 0)
		goto cpu_fail;
	while ((now = stress_time_now()) < t_start + KSM_SPARSE_KSMD_MAX_SECS && stress_continue(ctx->args)) {
		(void)shim_nanosleep_uint64(1000000);
		fs = stress_ksm_unmerge_full_scans(ctx);
		if (fs == last)
			continue;
		if (fs < last) {
			(void)snprintf(why, len, "full_scans went back from %" PRIu64 " to %" PRIu64
				" (run=2 written meanwhile?)", last, fs);
			return -1;
		}
		if (stress_ksm_unmerge_ksmd_cpu(k, &cpu) < 0)
			goto cpu_fail;
		if (!measuring) {
			w->skipped += fs - last;
			last = fs;
			if (w->skipped >= KSM_SPARSE_KSMD_SKIP) {
				measuring = true;
				fs0 = fs;
				cpu0 = cpu;
				t0 = stress_time_now();
			}
			continue;
		}
		last = fs;
		w->scans = fs - fs0;
		w->cpu_ns = cpu - cpu0;
		w->secs = stress_time_now() - t0;
		if (w->scans >= KSM_SPARSE_KSMD_SCANS && w->secs >= KSM_SPARSE_KSMD_MIN_SECS)
			return 0;
	}
	if (!w->scans && stress_ksm_unmerge_ksmd_cpu(k, &cpu) == 0) {
		w->cpu_ns = cpu - cpu0;		/* since the start, or since measuring began */
		w->secs = now - t0;
	}
	return 1;
cpu_fail:
	(void)snprintf(why, len, "ksmd's CPU time stopped reading (pid %d)", (int)k->pid);
	return -1;
}

/*
 *  stress_ksm_unmerge_ksmd_per_gib()
 *	pure: ksmd CPU ns per full scan that a bytes-long VMA adds (window on,
 *	it mergeable, less window off, it not), per GiB of it, into *ns_gib;
 *	the two per-scan figures into off_ns, on_ns; 0 ok, -1 no figure (why)
 */
static int stress_ksm_unmerge_ksmd_per_gib(const stress_ksm_unmerge_ksmd_window_t *off,
	const stress_ksm_unmerge_ksmd_window_t *on, const size_t bytes,
	double *off_ns, double *on_ns, double *ns_gib, char *why, const size_t len)
{
	*off_ns = off->scans ? (double)off->cpu_ns / (double)off->scans : 0.0;
	*on_ns = on->scans ? (double)on->cpu_ns / (double)on->scans : 0.0;
	*ns_gib = 0.0;
	if (!off->scans || !on->scans || !bytes) {
		(void)snprintf(why, len, "no full scan measured %s the range mergeable",
			off->scans ? "with" : "without");
		return -1;
	}
	if (!off->cpu_ns || !on->cpu_ns) {
		(void)snprintf(why, len, "ksmd's CPU time did not move while it completed full scans");
		return -1;
	}
	if (*on_ns <= *off_ns) {
		(void)snprintf(why, len, "a full scan with the range mergeable took no more ksmd CPU "
			"than one without (%.0f <= %.0f ns): below what this measures", *on_ns, *off_ns);
		return -1;
	}
	*ns_gib = (*on_ns - *off_ns) / ((double)bytes / (double)GB);
	return 0;
}

/*
 *  stress_ksm_unmerge_ksmd_anchor()
 *	map one page of unique content and make it mergeable, so ksmd keeps
 *	completing full scans while the sparse range is not mergeable
 */
static uint8_t *stress_ksm_unmerge_ksmd_anchor(stress_ksm_unmerge_ctx_t *ctx)
{
	uint8_t *p = mmap(NULL, ctx->page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t pid = getpid();

	if (p == MAP_FAILED)
		return NULL;
	(void)shim_memset(p, 0xa5, ctx->page_size);
	(void)shim_memcpy(p, &pid, sizeof(pid));
	(void)shim_memcpy(p + sizeof(pid), &ctx->seed, sizeof(ctx->seed));
	if (madvise(p, ctx->page_size, MADV_MERGEABLE) < 0) {
		(void)munmap(p, ctx->page_size);
		return NULL;
	}
	return p;
}

/*
 *  stress_ksm_unmerge_ksmd_none()
 *	the line saying why the ksmd metric is absent
 */
static void stress_ksm_unmerge_ksmd_none(const stress_ksm_unmerge_ctx_t *ctx, const char *why)
{
	pr_inf("%s: sparse racer: no " KSM_SPARSE_KSMD_METRIC " metric: %s\n", ctx->args->name, why);
}

/*
 *  stress_ksm_unmerge_ksmd_report()
 *	the ksmd figure from the two windows: the metric, or why it is absent
 */
static void stress_ksm_unmerge_ksmd_report(stress_ksm_unmerge_ctx_t *ctx, const stress_ksm_unmerge_sparse_t *s,
	const stress_ksm_unmerge_ksmd_t *k, const stress_ksm_unmerge_ksmd_window_t *off,
	const stress_ksm_unmerge_ksmd_window_t *on, const int ret_on)
{
	double off_ns, on_ns, ns_gib;
	char why[160];

	if (ret_on > 0 && !on->scans) {
		/* a hint at the kernel only where ksmd was busy most of the window */
		const bool busy = (double)on->cpu_ns > 0.5E9 * on->secs;

		pr_inf("%s: sparse racer: no " KSM_SPARSE_KSMD_METRIC " metric: in %.1f s with the "
			"%zu-byte range mergeable ksmd used %.3f s of CPU and completed %" PRIu64 " full "
			"scan%s before the one measured, and not that one (%s)\n", ctx->args->name,
			on->secs, s->size, (double)on->cpu_ns / 1.0E9, on->skipped,
			on->skipped == 1 ? "" : "s", busy ?
			"a kernel without f5548c318d65 walks every hole of the range in each full scan" :
			"ksmd had the CPU less than half the time: a busy or slow machine, no figure");
		return;
	}
	if (stress_ksm_unmerge_ksmd_per_gib(off, on, s->size, &off_ns, &on_ns, &ns_gib, why, sizeof(why)) < 0) {
		stress_ksm_unmerge_ksmd_none(ctx, why);
		return;
	}
	stress_ksm_unmerge_sparse_ksmd_ns_gib = ns_gib;
	pr_inf("%s: sparse racer: ksmd CPU per full scan: %.1f us with the %zu-byte range mergeable "
		"(%" PRIu64 " scans), %.1f us without (%" PRIu64 " scans), %s: %.1f ns per sparse GiB\n",
		ctx->args->name, on_ns / 1000.0, s->size, on->scans, off_ns / 1000.0, off->scans,
		k->schedstat ? "schedstat" : "stat ticks", ns_gib);
}

/*
 *  stress_ksm_unmerge_sparse_ksmd()
 *	instance 0, at start: ksmd's CPU per full scan without, then with the
 *	sparse range mergeable (it stays mergeable for the first cycle)
 */
static void stress_ksm_unmerge_sparse_ksmd(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_sparse_t *s)
{
	stress_ksm_unmerge_ksmd_window_t off, on;
	stress_ksm_unmerge_ksmd_t k;
	uint8_t *anchor;
	char why[160];
	int ret;

	if (stress_ksm_unmerge_ksmd_selftest(&k, why, sizeof(why)) < 0) {
		stress_ksm_unmerge_ksmd_none(ctx, why);
		return;
	}
	anchor = stress_ksm_unmerge_ksmd_anchor(ctx);
	if (!anchor) {
		pr_inf("%s: sparse racer: no " KSM_SPARSE_KSMD_METRIC " metric: no mergeable anchor page, "
			"errno=%d (%s)\n", ctx->args->name, errno, strerror(errno));
		return;
	}
	ret = stress_ksm_unmerge_ksmd_window(ctx, &k, &off, why, sizeof(why));
	if (ret == 0 && madvise(s->base, s->size, MADV_MERGEABLE) < 0) {
		pr_inf("%s: sparse racer: no " KSM_SPARSE_KSMD_METRIC " metric: MADV_MERGEABLE of the "
			"range failed, errno=%d (%s)\n", ctx->args->name, errno, strerror(errno));
	} else if (ret == 0) {
		s->mergeable = true;
		ret = stress_ksm_unmerge_ksmd_window(ctx, &k, &on, why, sizeof(why));
		if (ret >= 0 && stress_continue(ctx->args))
			stress_ksm_unmerge_ksmd_report(ctx, s, &k, &off, &on, ret);
		else if (ret < 0)
			stress_ksm_unmerge_ksmd_none(ctx, why);
	} else if (ret < 0) {
		stress_ksm_unmerge_ksmd_none(ctx, why);
	} else if (ret > 0 && stress_continue(ctx->args)) {
		pr_inf("%s: sparse racer: no " KSM_SPARSE_KSMD_METRIC " metric: ksmd finished no full "
			"scan in %.1f s without the range\n", ctx->args->name, KSM_SPARSE_KSMD_MAX_SECS);
	}
	(void)munmap(anchor, ctx->page_size);
}

/*
 *  stress_ksm_unmerge_sparse_metrics()
 *	at the end: the ksmd metric, where instance 0 measured it
 */
static void stress_ksm_unmerge_sparse_metrics(stress_ksm_unmerge_ctx_t *ctx)
{
	/* set only where this process started the racer (racers_mask is cleared by now) */
	if (stress_ksm_unmerge_sparse_ksmd_ns_gib > 0.0)
		stress_metrics_set(ctx->args, KSM_SPARSE_KSMD_METRIC, stress_ksm_unmerge_sparse_ksmd_ns_gib,
			STRESS_METRIC_HARMONIC_MEAN);
}

/*
 *  stress_ksm_unmerge_sparse_hung_task()
 *	a walk that holds the mmap write lock past kernel.hung_task_timeout_secs
 *	makes ksmd (blocked on it) a hung task the kernel reports, a real kernel
 *	warning that fails the run: say so before it happens
 */
static void stress_ksm_unmerge_sparse_hung_task(stress_ksm_unmerge_ctx_t *ctx, const double walk)
{
	char buf[32];
	ssize_t n;
	unsigned long secs;

	n = stress_fs_file_read("/proc/sys/kernel/hung_task_timeout_secs", buf, sizeof(buf) - 1);
	if (n <= 0)
		return;
	buf[n] = '\0';
	secs = strtoul(buf, NULL, 10);
	if (!secs || walk <= (double)secs)
		return;
	pr_inf("%s: sparse racer: the walk holds the mmap write lock for about %.0f s, past "
		"kernel.hung_task_timeout_secs (%lu s): ksmd, blocked on that lock, will be reported "
		"as a hung task (a kernel warning: the run fails); 6.19's range walk takes seconds\n",
		ctx->args->name, walk, secs);
}

/*
 *  stress_ksm_unmerge_sparse_predict()
 *	instance 0: the range's layout and one walk's predicted length and
 *	hang allowance, as an info line where that matters (a walk over 1 s)
 */
static void stress_ksm_unmerge_sparse_predict(stress_ksm_unmerge_ctx_t *ctx, const stress_ksm_unmerge_sparse_t *s)
{
	const stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	const size_t pages = s->size / ctx->page_size;
	const double ns = (s->probe_ns > 0.0) ? s->probe_ns : KSM_SPARSE_PROBE_FALLBACK_NS;
	const double walk = (double)pages * ns / 1.0E9;
	const double left = ctx->args->time_end - stress_time_now();

	if (!stress_instance_zero(ctx->args))
		return;
	if (s->probe_ns <= 0.0)
		pr_inf("%s: sparse racer: the walk probe failed; its hang allowance assumes %.0f ns per "
			"page\n", ctx->args->name, KSM_SPARSE_PROBE_FALLBACK_NS);
	if (walk < 1.0) {
		pr_dbg("%s: sparse racer: %zu bytes, %zu populated pages, one walk predicted %.3f s "
			"(%.1f ns per page)\n", ctx->args->name, s->size, s->populated, walk, ns);
		return;
	}
	pr_inf("%s: sparse racer: %zu bytes, %zu populated pages (one per %zu bytes); one unmerge is "
		"predicted to take %.1f s (probe: %.1f ns per page), and is allowed %.0f s beyond the "
		"hang bound (%" PRIu32 " s)%s\n", ctx->args->name, s->size, s->populated, s->stride,
		walk, ns, stress_ksm_unmerge_sparse_allow(pages, s->probe_ns, 0.0), sh ? sh->hang_timeout : 0,
		(ctx->args->time_end > 0.0 && walk > left) ? "; longer than the run has left: the stop "
		"interrupts it (EINTR) and it is not counted" : "");
	stress_ksm_unmerge_sparse_hung_task(ctx, walk);
}

/*
 *  stress_ksm_unmerge_sparse_start()
 *	probe the walk, map the sparse range, instance 0: the ksmd metric
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
	s->probe_ns = stress_ksm_unmerge_sparse_probe(ctx->page_size);
	if (stress_ksm_unmerge_sparse_map(ctx, s) < 0) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "cannot reserve %zu bytes of sparse "
			"address space (mmap, MADV_DONTFORK), errno=%d (%s)", s->size, errno, strerror(errno));
		stress_ksm_unmerge_sparse_free(s);
		return -1;
	}
	ctx->run[idx].priv = s;
	/* its populated pages merge too and count in this mm's ksm_merging_pages */
	ctx->racers_disturb_counts = true;
	stress_ksm_unmerge_sparse_predict(ctx, s);
	if (!stress_instance_zero(ctx->args))
		return 0;
	/* up to 2 x 4 s before the first cycle: not in short runs */
	if (ctx->args->time_end > 0.0 && ctx->args->time_end - stress_time_now() < KSM_SPARSE_KSMD_MIN_RUN)
		pr_inf("%s: sparse racer: no " KSM_SPARSE_KSMD_METRIC " metric: the run is shorter than "
			"%.0f s\n", ctx->args->name, KSM_SPARSE_KSMD_MIN_RUN);
	else
		stress_ksm_unmerge_sparse_ksmd(ctx, s);
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
	.fixed_bytes = KSM_SPARSE_FIXED_BYTES,                           \
	.supported = stress_ksm_unmerge_racer_supported_always,          \
	.start = stress_ksm_unmerge_sparse_start,                        \
	.stop = stress_ksm_unmerge_sparse_stop,                          \
	.cycle = stress_ksm_unmerge_sparse_cycle,
