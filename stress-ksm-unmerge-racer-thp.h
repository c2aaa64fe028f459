/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racer-thp.h: the thp racer (private header of
 * stress-ksm-unmerge.c, included once, before the racer table).
 */

/* ------------------------------------------------------------------ */
/* thp: KSM split of THPs, unmerge racing memory compaction            */
/* ------------------------------------------------------------------ */

/* its built and not-built entries share these (the name: KSM_UNMERGE_RACER_LIST) */
#define KSM_RACER_THP_ID						\
	.flags = KSM_RACER_F_HOLDING,				\
	.path = "KSM split of THPs, unmerge vs compaction",	\
	.evidence = "thps-split"

#if defined(MADV_HUGEPAGE)

#define KSM_THP_CHUNKS		(4)		/* most THPs in the racer's region */
#define KSM_THP_MAX_BYTES	(32 * MB)	/* largest THP region */
#define KSM_THP_ENABLED		"/sys/kernel/mm/transparent_hugepage/enabled"
#define KSM_THP_PMD_SIZE	"/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"

/* what a chunk of the THP region was faulted as */
enum {
	KSM_THP_KIND_NONE = 0,		/* small pages */
	KSM_THP_KIND_PMD,		/* one PMD-sized THP */
	KSM_THP_KIND_MTHP,		/* large folios smaller than a PMD (mTHP) */
};

/* detail[] counters of the thp racer */
#define KSM_THP_D_PMD		(0)	/* chunks faulted as PMD-sized THPs */
#define KSM_THP_D_MTHP		(1)	/* chunks faulted as mTHPs */
#define KSM_THP_D_ANON_HUGE	(2)	/* PMD mappings seen in smaps AnonHugePages */
#define KSM_THP_COMPACT		"/proc/sys/vm/compact_memory"

typedef struct {
	uint8_t *map;			/* mapping with alignment slack */
	size_t map_size;
	uint8_t *thp;			/* PMD aligned THP region */
	size_t size;
	size_t npages;
	size_t pmd_size;		/* hpage_pmd_size */
	size_t chunks;			/* PMD-sized chunks in the region */
	uint64_t *pm;			/* pagemap scratch */
	uint64_t *flags;		/* kpageflags scratch */
	uint8_t was_thp[KSM_THP_CHUNKS];	/* THP-mapped before merging */
	volatile uint64_t unmerged;	/* cycle whose unmerge the thread did */
	volatile uint64_t compacted;	/* cycle compaction ran in */
	int busy;			/* compaction in progress (atomic) */
	bool can_compact;		/* root and compact_memory writable */
	int verify_fd;			/* compact_memory fd: LOCK_SH while verifying */
	int compact_fd;			/* compact_memory fd: LOCK_EX while compacting */
	pthread_t compactor;
	bool compactor_running;
	uint64_t thps;			/* THPs faulted before merging */
	uint64_t compactions;		/* compactions started during unmerge */
} stress_ksm_unmerge_thp_t;

/*
 *  stress_ksm_unmerge_thp_template()
 *	the non-zero page every THP subpage holds (the "same" template)
 */
static inline const uint8_t *stress_ksm_unmerge_thp_template(const stress_ksm_unmerge_ctx_t *ctx)
{
	return ctx->templates;
}

/*
 *  stress_ksm_unmerge_thp_data_check()
 *	pure: first page of buf (npages pages) that differs from tmpl, with
 *	its byte offset in *off; -1 if all pages hold tmpl
 */
static ssize_t stress_ksm_unmerge_thp_data_check(const uint8_t *buf, const size_t npages,
	const uint8_t *tmpl, const size_t page_size, size_t *off)
{
	size_t i, b;

	*off = 0;
	for (i = 0; i < npages; i++) {
		const uint8_t *p = buf + i * page_size;

		if (!memcmp(p, tmpl, page_size))
			continue;
		for (b = 0; b < page_size && p[b] == tmpl[b]; b++)
			;
		*off = b;
		return (ssize_t)i;
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_thp_split_count()
 *	pure: from per-subpage states of chunks that were THPs, count THPs
 *	whose subpages became KSM pages (split + merged); KSM subpages in *pages
 */
static uint64_t stress_ksm_unmerge_thp_split_count(const uint8_t *state, const uint8_t *was_thp,
	const size_t chunks, const size_t per_chunk, uint64_t *pages)
{
	uint64_t split = 0;
	size_t c, i;

	*pages = 0;
	for (c = 0; c < chunks; c++) {
		uint64_t k = 0;

		for (i = 0; i < per_chunk; i++)
			k += (state[c * per_chunk + i] == KSM_ENTRY_KSM);
		*pages += k;
		split += (was_thp[c] && k > 0);
	}
	return split;
}

/*
 *  stress_ksm_unmerge_thp_kind()
 *	pure: a chunk of per subpages (pagemap pm, kpageflags flags) is small
 *	pages, one PMD-sized THP (a compound head followed by per-1 tails on
 *	consecutive pfns) or smaller large folios, mTHPs
 */
static int stress_ksm_unmerge_thp_kind(const uint64_t *pm, const uint64_t *flags, const size_t per)
{
	size_t i;

	if (!(pm[0] & PM_PRESENT) || !(flags[0] & STRESS_BIT_ULL(KPF_BIT_THP)))
		return KSM_THP_KIND_NONE;
	if (!(flags[0] & STRESS_BIT_ULL(KPF_BIT_COMPOUND_HEAD)))
		return KSM_THP_KIND_MTHP;
	for (i = 1; i < per; i++) {
		if (!(pm[i] & PM_PRESENT) ||
		    ((pm[i] & PM_PFN_MASK) != (pm[0] & PM_PFN_MASK) + i) ||
		    !(flags[i] & STRESS_BIT_ULL(KPF_BIT_COMPOUND_TAIL)))
			return KSM_THP_KIND_MTHP;
	}
	return KSM_THP_KIND_PMD;
}

/*
 *  stress_ksm_unmerge_thp_chunk_flags()
 *	kpageflags of a chunk's per subpages: one read when the pfns are
 *	consecutive, else one per present page (0 for absent pages)
 */
static void stress_ksm_unmerge_thp_chunk_flags(const stress_ksm_unmerge_ctx_t *ctx, const uint64_t *pm,
	const size_t per, uint64_t *flags)
{
	const uint64_t pfn0 = pm[0] & PM_PFN_MASK;
	const ssize_t len = (ssize_t)(per * sizeof(*flags));
	size_t i;

	for (i = 1; i < per; i++)
		if (!(pm[i] & PM_PRESENT) || (pm[i] & PM_PFN_MASK) != pfn0 + i)
			break;
	if ((pm[0] & PM_PRESENT) && i == per &&
	    pread(ctx->kpageflags_fd, flags, (size_t)len, (off_t)(pfn0 * sizeof(*flags))) == len)
		return;
	for (i = 0; i < per; i++)
		flags[i] = (pm[i] & PM_PRESENT) ?
			stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, pm[i] & PM_PFN_MASK) : 0;
}

/*
 *  stress_ksm_unmerge_thp_anon_huge_kb()
 *	AnonHugePages (PMD-mapped THPs, kB) of the VMA holding addr in
 *	/proc/self/smaps, -1 if not found
 */
static int64_t stress_ksm_unmerge_thp_anon_huge_kb(const void *addr)
{
	const unsigned long a = (unsigned long)(uintptr_t)addr;
	char line[512];
	bool in_vma = false;
	int64_t kb = -1;
	FILE *fp = fopen("/proc/self/smaps", "re");

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long lo, hi;
		long long v;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			if (in_vma)
				break;
			in_vma = (a >= lo && a < hi);
		} else if (in_vma && sscanf(line, "AnonHugePages: %lld kB", &v) == 1) {
			kb = (int64_t)v;
			break;
		}
	}
	(void)fclose(fp);
	return kb;
}

/*
 *  stress_ksm_unmerge_thp_refault()
 *	MERGING hook: fresh THPs with the template content, record which
 *	chunks really are THP-mapped (KPF_THP), then make them mergeable
 */
static void stress_ksm_unmerge_thp_refault(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const uint8_t *tmpl = stress_ksm_unmerge_thp_template(ctx);
	size_t i, c;

	if (madvise(t->thp, t->size, MADV_DONTNEED) < 0)
		pr_dbg("%s: thp racer: MADV_DONTNEED failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
	for (i = 0; i < t->npages; i++)
		(void)shim_memcpy(t->thp + i * ctx->page_size, tmpl, ctx->page_size);
	(void)memset(t->was_thp, 0, sizeof(t->was_thp));
	if (ctx->have_pfns &&
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, t->thp, t->npages, ctx->page_size, t->pm) == 0) {
		const size_t per = t->pmd_size / ctx->page_size;
		int64_t kb;

		for (c = 0; c < t->chunks; c++) {
			int kind;

			stress_ksm_unmerge_thp_chunk_flags(ctx, t->pm + c * per, per, t->flags + c * per);
			kind = stress_ksm_unmerge_thp_kind(t->pm + c * per, t->flags + c * per, per);
			t->was_thp[c] = (kind != KSM_THP_KIND_NONE);
			t->thps += t->was_thp[c];
			rs->detail[KSM_THP_D_PMD] += (kind == KSM_THP_KIND_PMD);
			rs->detail[KSM_THP_D_MTHP] += (kind == KSM_THP_KIND_MTHP);
		}
		kb = stress_ksm_unmerge_thp_anon_huge_kb(t->thp);
		if (kb > 0)
			rs->detail[KSM_THP_D_ANON_HUGE] += (uint64_t)kb / (t->pmd_size / 1024);
	}
	if (madvise(t->thp, t->size, MADV_MERGEABLE) < 0) {
		pr_fail("%s: thp racer: MADV_MERGEABLE on the THP region failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
	}
}

/*
 *  stress_ksm_unmerge_thp_merged()
 *	MERGED hook: count THPs that KSM split and merged (evidence)
 */
static void stress_ksm_unmerge_thp_merged(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	uint8_t *state;
	uint64_t pages;
	size_t i;

	if (!ctx->have_pfns ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, t->thp, t->npages, ctx->page_size, t->pm) < 0)
		return;
	state = malloc(t->npages);
	if (!state)
		return;
	for (i = 0; i < t->npages; i++)
		state[i] = (uint8_t)stress_ksm_unmerge_entry_read_state(ctx, t->pm[i]);
	rs->evidence += stress_ksm_unmerge_thp_split_count(state, t->was_thp, t->chunks,
		t->pmd_size / ctx->page_size, &pages);
	free(state);
}

/*
 *  stress_ksm_unmerge_thp_verify_lock()
 *	share-lock compact_memory while the cycle verifies: compaction turns
 *	PTEs into migration entries (not present in pagemap) and reuses
 *	pfns, which the verification would report as lost or shared pages
 */
static void stress_ksm_unmerge_thp_verify_lock(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_thp_t *t, const bool lock)
{
	if (t->verify_fd < 0)
		return;
	while (flock(t->verify_fd, lock ? LOCK_SH : LOCK_UN) < 0) {
		if (errno != EINTR) {
			pr_dbg("%s: thp racer: flock %s failed, errno=%d (%s)\n", ctx->args->name,
				KSM_THP_COMPACT, errno, strerror(errno));
			return;
		}
	}
}

/*
 *  stress_ksm_unmerge_thp_cycle()
 *	hooks: fresh THPs when merging starts, split evidence once merged
 */
static void stress_ksm_unmerge_thp_cycle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const int phase)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)ctx->run[idx].priv;

	if (!t)
		return;
	if (phase == KSM_PHASE_MERGING)
		stress_ksm_unmerge_thp_refault(ctx, idx, t);
	else if (phase == KSM_PHASE_MERGED)
		stress_ksm_unmerge_thp_merged(ctx, idx, t);
	/* no compaction (any instance's) while this instance verifies */
	stress_ksm_unmerge_thp_verify_lock(ctx, t,
		phase == KSM_PHASE_MERGED || phase == KSM_PHASE_VERIFY);
}

/*
 *  stress_ksm_unmerge_thp_unmerge()
 *	unmerge the THP region (a no-op after a prctl unmerge did it)
 */
static void stress_ksm_unmerge_thp_unmerge(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
	if (t->unmerged == ctx->cycle)
		return;
	t->unmerged = ctx->cycle;
	if (madvise(t->thp, t->size, MADV_UNMERGEABLE) < 0) {
		pr_fail("%s: thp racer: MADV_UNMERGEABLE on the THP region failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
		return;
	}
	stress_ksm_unmerge_racer_stats(ctx, idx)->ops++;
}

/*
 *  stress_ksm_unmerge_thp_verify()
 *	after unmerge: every page of the THP region holds the template and
 *	none is still a KSM page
 */
static void stress_ksm_unmerge_thp_verify(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const uint8_t *tmpl = stress_ksm_unmerge_thp_template(ctx);
	size_t off, i;
	const ssize_t bad = stress_ksm_unmerge_thp_data_check(t->thp, t->npages, tmpl, ctx->page_size, &off);

	if (bad >= 0) {
		pr_fail("%s: thp racer: THP region page %zd byte %zu is 0x%02x after unmerge, expected 0x%02x\n",
			ctx->args->name, bad, off, t->thp[(size_t)bad * ctx->page_size + off], tmpl[off]);
		rs->failures++;
		return;
	}
	if (!ctx->have_pfns ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, t->thp, t->npages, ctx->page_size, t->pm) < 0)
		return;
	for (i = 0; i < t->npages; i++) {
		const int st = stress_ksm_unmerge_entry_read_state(ctx, t->pm[i]);

		if (st == KSM_ENTRY_KSM || st == KSM_ENTRY_KZERO) {
			pr_fail("%s: thp racer: THP region page %zu is still a KSM page after unmerge "
				"(pagemap %#" PRIx64 ")\n", ctx->args->name, i, t->pm[i]);
			rs->failures++;
			return;
		}
	}
}

/*
 *  stress_ksm_unmerge_thp_settle()
 *	before parking: wait (bounded) for compaction, unmerge, verify
 */
static void stress_ksm_unmerge_thp_settle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
	const double deadline = stress_time_now() + 4.0;

	while (__atomic_load_n(&t->busy, __ATOMIC_SEQ_CST) && stress_time_now() < deadline)
		(void)shim_nanosleep_uint64(1000000);
	stress_ksm_unmerge_thp_unmerge(ctx, idx, t);
	stress_ksm_unmerge_thp_verify(ctx, idx, t);
}

/*
 *  stress_ksm_unmerge_thp_thread()
 *	racer: unmerge the THP region while the main unmerge runs; verify
 *	it before parking
 */
static void *stress_ksm_unmerge_thp_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_THP;
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)ctx->run[idx].priv;

	while (stress_ksm_unmerge_racer_until_stop(ctx)) {
		if (ctx->quiesce) {
			if (ctx->run[idx].quiesced != ctx->quiesce)
				stress_ksm_unmerge_thp_settle(ctx, idx, t);
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (ctx->phase == KSM_PHASE_UNMERGING)
			stress_ksm_unmerge_thp_unmerge(ctx, idx, t);
		(void)shim_nanosleep_uint64(100000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_thp_compact()
 *	write 1 to compact_memory; false if not permitted
 */
static bool stress_ksm_unmerge_thp_compact(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_thp_t *t)
{
	if (write(t->compact_fd, "1", 1) != 1) {
		pr_dbg("%s: thp racer: cannot write %s, errno=%d (%s); no compaction\n",
			ctx->args->name, KSM_THP_COMPACT, errno, strerror(errno));
		return false;
	}
	return true;
}

/*
 *  stress_ksm_unmerge_thp_compact_locked()
 *	compact unless some instance is verifying (then try again later);
 *	true if this cycle is done with
 */
static bool stress_ksm_unmerge_thp_compact_locked(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_thp_t *t)
{
	if (flock(t->compact_fd, LOCK_EX | LOCK_NB) < 0)
		return errno != EWOULDBLOCK && errno != EINTR;
	t->can_compact = stress_ksm_unmerge_thp_compact(ctx, t);
	t->compactions += t->can_compact;
	(void)flock(t->compact_fd, LOCK_UN);
	return true;
}

/*
 *  stress_ksm_unmerge_thp_compactor()
 *	thread (root only): compact memory once per cycle while unmerging,
 *	so break_ksm meets migration entries; never while verifying
 */
static void *stress_ksm_unmerge_thp_compactor(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)ctx->run[KSM_RACER_IDX_THP].priv;

	while (stress_ksm_unmerge_racer_until_stop(ctx) && t->can_compact) {
		if (ctx->phase == KSM_PHASE_UNMERGING && t->compacted != ctx->cycle && !ctx->quiesce) {
			const uint64_t cycle = ctx->cycle;

			__atomic_store_n(&t->busy, 1, __ATOMIC_SEQ_CST);
			if (ctx->phase == KSM_PHASE_UNMERGING && !ctx->quiesce &&
			    stress_ksm_unmerge_thp_compact_locked(ctx, t))
				t->compacted = cycle;
			__atomic_store_n(&t->busy, 0, __ATOMIC_SEQ_CST);
		}
		(void)shim_nanosleep_uint64(50000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_thp_supported()
 *	THP must be built in and not disabled
 */
static int stress_ksm_unmerge_thp_supported(char *reason, const size_t len)
{
	char buf[128];
	const ssize_t n = stress_fs_file_read(KSM_THP_ENABLED, buf, sizeof(buf) - 1);

	if (n <= 0) {
		(void)snprintf(reason, len, "no transparent huge pages (%s missing)", KSM_THP_ENABLED);
		return -1;
	}
	buf[n] = '\0';
	if (strstr(buf, "[never]")) {
		(void)snprintf(reason, len, "transparent huge pages disabled (%s is [never])", KSM_THP_ENABLED);
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_thp_free()
 *	unmap the region, free the state
 */
static void stress_ksm_unmerge_thp_free(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)ctx->run[idx].priv;

	if (!t)
		return;
	if (t->verify_fd >= 0)
		(void)close(t->verify_fd);
	if (t->compact_fd >= 0)
		(void)close(t->compact_fd);
	if (t->map)
		(void)munmap(t->map, t->map_size);
	free(t->pm);
	free(t->flags);
	free(t);
	ctx->run[idx].priv = NULL;
}

/*
 *  stress_ksm_unmerge_thp_pmd_size()
 *	the PMD size from hpage_pmd_size (not assumed) and how many PMD-sized
 *	chunks fit KSM_THP_MAX_BYTES (at most KSM_THP_CHUNKS)
 */
static int stress_ksm_unmerge_thp_pmd_size(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
	char buf[32];
	const ssize_t n = stress_fs_file_read(KSM_THP_PMD_SIZE, buf, sizeof(buf) - 1);
	unsigned long long v;

	if (n <= 0) {
		stress_ksm_unmerge_racer_reason(ctx, idx, "cannot read %s, errno=%d (%s)", KSM_THP_PMD_SIZE,
			n < 0 ? errno : ENODATA, strerror(n < 0 ? errno : ENODATA));
		return -1;
	}
	buf[n] = '\0';
	if (sscanf(buf, "%llu", &v) != 1 || v < 2 * ctx->page_size || (v & (v - 1)) ||
	    v > KSM_THP_MAX_BYTES) {
		stress_ksm_unmerge_racer_reason(ctx, idx, "PMD size '%.20s' from hpage_pmd_size unusable "
			"(power of 2, at most %u MiB)", buf, (unsigned int)(KSM_THP_MAX_BYTES / MB));
		return -1;
	}
	t->pmd_size = (size_t)v;
	t->chunks = KSM_THP_MAX_BYTES / 4 / t->pmd_size;
	t->chunks = t->chunks < 1 ? 1 : (t->chunks > KSM_THP_CHUNKS ? KSM_THP_CHUNKS : t->chunks);
	return 0;
}

/*
 *  stress_ksm_unmerge_thp_map()
 *	map up to KSM_THP_CHUNKS PMD-sized chunks, PMD aligned, with MADV_HUGEPAGE
 */
static int stress_ksm_unmerge_thp_map(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
	if (stress_ksm_unmerge_thp_pmd_size(ctx, idx, t) < 0)
		return -1;
	t->size = t->chunks * t->pmd_size;
	t->npages = t->size / ctx->page_size;
	t->map_size = t->size + t->pmd_size;
	t->map = mmap(NULL, t->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->map == MAP_FAILED) {
		t->map = NULL;
		stress_ksm_unmerge_racer_reason(ctx, idx, "mmap of %zu bytes failed, errno=%d (%s)",
			t->map_size, errno, strerror(errno));
		return -1;
	}
	t->thp = (uint8_t *)(((uintptr_t)t->map + t->pmd_size - 1) & ~((uintptr_t)t->pmd_size - 1));
	if (madvise(t->thp, t->size, MADV_HUGEPAGE) < 0) {
		stress_ksm_unmerge_racer_reason(ctx, idx, "MADV_HUGEPAGE failed, errno=%d (%s)",
			errno, strerror(errno));
		return -1;
	}
	stress_memory_anon_name_set(t->thp, t->size, "ksm-unmerge-thp");
	t->pm = calloc(t->npages, sizeof(uint64_t));
	t->flags = calloc(t->npages, sizeof(uint64_t));
	if (!t->pm || !t->flags) {
		stress_ksm_unmerge_racer_reason(ctx, idx, "out of memory for the pagemap buffer");
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_thp_start()
 *	THP region, racer thread, compactor thread when root
 */
static int stress_ksm_unmerge_thp_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_thp_t *t = calloc(1, sizeof(*t));

	if (!t) {
		stress_ksm_unmerge_racer_reason(ctx, idx, "out of memory for the racer state");
		return -1;
	}
	ctx->run[idx].priv = t;
	t->verify_fd = t->compact_fd = -1;
	if (stress_ksm_unmerge_thp_map(ctx, idx, t) < 0) {
		stress_ksm_unmerge_thp_free(ctx, idx);
		return -1;
	}
	/* its pages count in this process's ksm_merging_pages */
	ctx->racers_disturb_counts = true;
	if (geteuid() == 0) {
		t->verify_fd = open(KSM_THP_COMPACT, O_WRONLY | O_CLOEXEC);
		t->compact_fd = open(KSM_THP_COMPACT, O_WRONLY | O_CLOEXEC);
	}
	t->can_compact = (t->verify_fd >= 0) && (t->compact_fd >= 0);
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_thp_thread) < 0) {
		stress_ksm_unmerge_thp_free(ctx, idx);
		return -1;
	}
	if (t->can_compact)
		t->compactor_running = stress_ksm_unmerge_racer_helper_start(ctx, idx, "compaction",
			&t->compactor, stress_ksm_unmerge_thp_compactor);
	return 0;
}

/*
 *  stress_ksm_unmerge_thp_stop()
 *	join both threads, unmap the region
 */
static void stress_ksm_unmerge_thp_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)ctx->run[idx].priv;

	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	if (!t)
		return;
	stress_ksm_unmerge_racer_helper_join(t->compactor, &t->compactor_running);
	if (!t->thps && !ctx->st->racer[idx].reason[0])
		stress_ksm_unmerge_racer_reason(ctx, idx, "no THP could be faulted (KPF_THP never set)");
	pr_dbg("%s: thp racer: %" PRIu64 " THPs faulted before merging, %" PRIu64
		" compactions during unmerge\n", ctx->args->name, t->thps, t->compactions);
	stress_ksm_unmerge_thp_free(ctx, idx);
}

#define KSM_RACER_THP                                                  \
	KSM_RACER_THP_ID,							\
	.details = { "pmd-thps", "mthps", "pmd-mapped-in-smaps" },     \
	.fixed_bytes = KSM_THP_MAX_BYTES / 4 + 2 * MB,	/* its THPs */ \
	.supported = stress_ksm_unmerge_thp_supported,                 \
	.start = stress_ksm_unmerge_thp_start,                         \
	.stop = stress_ksm_unmerge_thp_stop,                           \
	.cycle = stress_ksm_unmerge_thp_cycle,

#else

/* feature guard off: the racer is listed, and reports "not built" */
#define KSM_RACER_THP						\
	KSM_RACER_THP_ID,							\
	.not_built = "MADV_HUGEPAGE missing",

#endif
