
/* ---- sparse: the unmerge walk over a huge, mostly empty range ---- */

typedef struct {
	uint8_t *base;			/* NULL once unmapped */
	size_t size, stride, populated;
	bool mergeable;
	double probe_ns, last_ns;	/* walk ns per page: a 1 GiB probe, the last walk */
} stress_ksm_unmerge_sparse_t;

/*
 *  stress_ksm_unmerge_sparse_layout()
 *	pure: bytes between populated pages of a size-byte range: 64 MiB, or
 *	more for at most 1024 pages, or half a small range; their count in *n
 */
static size_t stress_ksm_unmerge_sparse_layout(const size_t size, const size_t page_size, size_t *n)
{
	size_t stride = 64 * MB;

	if (size < 2 * stride)
		stride = (size / 2) & ~(page_size - 1);
	else if (size / stride > 1024)
		stride = ((size + 1023) / 1024 + page_size - 1) & ~(page_size - 1);
	*n = size / stride;
	return stride;
}

/*
 *  stress_ksm_unmerge_sparse_allow()
 *	pure: secs a walk of pages may take beyond the hang bound: 4 times its
 *	prediction at the slower of the probe's and the last walk's ns per page
 */
static double stress_ksm_unmerge_sparse_allow(const size_t pages, const double probe_ns, const double last_ns)
{
	const double ns = STRESS_MAXIMUM(probe_ns, last_ns);

	return 4.0 * (double)pages * (ns > 0.0 ? ns : 250.0) / 1.0E9;
}

/*
 *  stress_ksm_unmerge_sparse_phase()
 *	merging: the range mergeable; unmerging: its timed MADV_UNMERGEABLE
 *	(the hang bound extended by the predicted walk), retried after a
 *	handled signal; then its populated pages intact and private
 */
static void stress_ksm_unmerge_sparse_phase(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_sparse_t *s = (stress_ksm_unmerge_sparse_t *)run->priv;
	const size_t pages = s->size / ctx->page_size;
	uint64_t t0, spent = 0, ksm = 0;
	size_t k;
	int ret, err;

	if (!s->base || (phase != KSM_PHASE_MERGING && phase != KSM_PHASE_UNMERGING) ||
	    s->mergeable == (phase == KSM_PHASE_MERGING))
		return;
	if (phase == KSM_PHASE_MERGING) {
		s->mergeable = true;
		if (madvise(s->base, s->size, MADV_MERGEABLE) < 0)
			stress_ksm_unmerge_racer_fail(run, "MADV_MERGEABLE of %zu bytes failed, errno=%d (%s)", s->size,
				errno, strerror(errno));
		return;
	}
	for (k = 0; k < s->populated; k++)
		ksm += stress_ksm_unmerge_ksm_count(ctx, s->base + k * s->stride, 1);
	ctx->st->hang_allow = stress_ksm_unmerge_sparse_allow(pages, s->probe_ns, s->last_ns);
	do {
		t0 = stress_ksm_unmerge_now_ns();
		ret = madvise(s->base, s->size, MADV_UNMERGEABLE);
		err = errno;
		spent += stress_ksm_unmerge_now_ns() - t0;
		ctx->st->hang_allow += (double)spent / 1.0E9;
	} while (ret < 0 && err == EINTR && stress_continue(ctx->args));
	ctx->st->hang_allow = (double)spent / 1.0E9;
	if (ret < 0 && err == EINTR) {
		pr_inf("%s: sparse racer: the end of the run interrupted the unmerge of %zu bytes after %.3f s "
			"(EINTR); not counted\n", ctx->args->name, s->size, (double)spent / 1.0E9);
		(void)munmap(s->base, s->size);	/* a prctl unmerge must not walk it again */
		s->base = NULL;
		return;
	}
	if (ret < 0) {
		stress_ksm_unmerge_racer_fail(run, "MADV_UNMERGEABLE of %zu bytes failed, errno=%d (%s)", s->size,
			err, strerror(err));
		return;
	}
	s->mergeable = false;
	s->last_ns = (double)spent / (double)pages;
	run->rs->evidence += ksm;
	run->rs->ops += pages;
	run->rs->detail[0] += pages;
	run->rs->detail[1] += s->populated;
	run->rs->op_ns += spent;
	for (k = 0; k < s->populated; k++) {
		if (stress_ksm_unmerge_same_check(ctx, s->base + k * s->stride, 1) >= 0 ||
		    stress_ksm_unmerge_ksm_count(ctx, s->base + k * s->stride, 1)) {
			stress_ksm_unmerge_racer_fail(run, "populated page %zu (offset %zu) lost its data or is still a "
				"KSM page after MADV_UNMERGEABLE", k, k * s->stride);
			break;
		}
	}
}

/*
 *  stress_ksm_unmerge_sparse_stop()
 *	unmap the range
 */
static void stress_ksm_unmerge_sparse_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_sparse_t *s = (stress_ksm_unmerge_sparse_t *)run->priv;

	(void)ctx;
	if (s->base)
		(void)munmap(s->base, s->size);
}

/*
 *  stress_ksm_unmerge_sparse_start()
 *	probe the walk (ns per page over 1 GiB), reserve the range
 *	(MAP_NORESERVE; a quarter of the commit room under
 *	vm.overcommit_memory=2, which charges it in full; halved on ENOMEM),
 *	MADV_DONTFORK (where KPF_KSM lies a page three ptes map reads as a
 *	KSM page), one page per stride populated with the same page
 */
static int stress_ksm_unmerge_sparse_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_sparse_t *s = (stress_ksm_unmerge_sparse_t *)run->priv;
	const size_t ps = ctx->page_size;
	const int64_t hung = stress_ksm_unmerge_file_field("/proc/sys/kernel/hung_task_timeout_secs", NULL);
	size_t want = DEFAULT_KSM_UNMERGE_SPARSE, k;
	uint8_t *p = stress_ksm_unmerge_map(GB, MAP_NORESERVE, "ksm-unmerge-probe");
	double walk;

	if (p) {
		(void)shim_memset(p + GB / 2, 0x5a, ps);
		if (madvise(p, GB, MADV_MERGEABLE) == 0) {
			const uint64_t t0 = stress_ksm_unmerge_now_ns();

			if (madvise(p, GB, MADV_UNMERGEABLE) == 0)
				s->probe_ns = (double)(stress_ksm_unmerge_now_ns() - t0) / (double)(GB / ps);
		}
		(void)munmap(p, GB);
	}
	(void)stress_setting_get("ksm-unmerge-sparse", &want);
	s->size = want & ~(ps - 1);
	if (stress_ksm_unmerge_file_field("/proc/sys/vm/overcommit_memory", NULL) == 2) {
		const int64_t room = stress_ksm_unmerge_file_field("/proc/meminfo", "CommitLimit") -
			stress_ksm_unmerge_file_field("/proc/meminfo", "Committed_AS");

		s->size = STRESS_MINIMUM(s->size, (size_t)((uint64_t)STRESS_MAXIMUM(room, (int64_t)0) * KB / 4 /
			ctx->args->instances) & ~(ps - 1));
	}
	for (s->size = STRESS_MAXIMUM(s->size, 2 * ps), k = 0;
	     !(s->base = stress_ksm_unmerge_map(s->size, MAP_NORESERVE, "ksm-unmerge-sparse")) && errno == ENOMEM &&
	     k < 12 && s->size / 2 >= 2 * ps; k++)
		s->size = (s->size / 2) & ~(ps - 1);
	if (!s->base || madvise(s->base, s->size, MADV_DONTFORK) < 0)
		return stress_ksm_unmerge_racer_reason(run, "cannot reserve %zu bytes of address space (mmap, "
			"MADV_DONTFORK), errno=%d (%s)", s->size, errno, strerror(errno));
	s->stride = stress_ksm_unmerge_sparse_layout(s->size, ps, &s->populated);
	for (k = 0; k < s->populated; k++)
		stress_ksm_unmerge_same_fill(ctx, s->base + k * s->stride, 1);
	walk = (double)(s->size / ps) * (s->probe_ns > 0.0 ? s->probe_ns : 250.0) / 1.0E9;
	if (stress_instance_zero(ctx->args) && (s->size < want || walk >= 1.0))
		pr_inf("%s: sparse racer: %zu bytes (%zu asked: the commit room, RLIMIT_AS or the address space cut "
			"it), %zu populated pages; one unmerge is predicted to take %.1f s (%.1f ns per page)%s\n",
			ctx->args->name, s->size, want, s->populated, walk, s->probe_ns, (hung > 0 && walk > (double)hung) ?
			"; it holds the mmap lock past kernel.hung_task_timeout_secs: ksmd, blocked on it, will be "
			"reported as a hung task (a kernel warning)" : "");
	return 0;
}

/* ---- thp: KSM split of THPs, unmerge racing compaction ---- */
#if defined(MADV_HUGEPAGE) && defined(HAVE_SYS_FILE_H)

#define KSM_THP_MAX		(4)		/* PMD-sized chunks at most */

typedef struct {
	uint8_t *map, *thp;		/* mapping with alignment slack, PMD aligned region */
	size_t map_size, size, npages, pmd, chunks;
	uint64_t *pm, *flags;
	bool was_thp[KSM_THP_MAX];	/* THP-mapped before merging */
	volatile uint64_t unmerged;	/* cycle whose unmerge the thread did */
	uint64_t compacted;		/* cycle compaction ran in */
	int verify_fd, compact_fd;	/* compact_memory: locked shared while verifying, exclusive compacting */
	uint64_t thps;
} stress_ksm_unmerge_thp_t;

/*
 *  stress_ksm_unmerge_thp_kind()
 *	pure: a chunk of per pages is small pages (0), one PMD-sized THP
 *	(1: a head and per-1 tails on consecutive pfns) or mTHPs (2)
 */
static int stress_ksm_unmerge_thp_kind(const uint64_t *pm, const uint64_t *flags, const size_t per)
{
	size_t i;

	if (!(pm[0] & PM_PRESENT) || !(flags[0] & KPF_THP))
		return 0;
	for (i = 1; (flags[0] & KPF_HEAD) && i < per; i++)
		if (!(pm[i] & PM_PRESENT) || (pm[i] & PM_PFN_MASK) != (pm[0] & PM_PFN_MASK) + i || !(flags[i] & KPF_TAIL))
			break;
	return (flags[0] & KPF_HEAD) && i == per ? 1 : 2;
}

/*
 *  stress_ksm_unmerge_thp_ksm()
 *	KSM pages (what, per page) in chunk c of the THP region, -1 unread
 */
static int64_t stress_ksm_unmerge_thp_ksm(const stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_thp_t *t, const size_t c)
{
	const size_t per = t->pmd / ctx->page_size;
	int64_t ksm = 0;
	size_t i;

	if (!ctx->have_pfns || stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, t->thp + c * t->pmd, per,
			ctx->page_size, t->pm) < 0)
		return -1;
	for (i = 0; i < per; i++) {
		t->flags[i] = stress_ksm_unmerge_kpf(ctx->kpageflags_fd, stress_ksm_unmerge_pm_pfn(t->pm[i]));
		ksm += stress_ksm_unmerge_is_ksm(stress_ksm_unmerge_page_what(ctx->iface, t->pm[i], t->flags[i], 0, 0, -1));
	}
	return ksm;
}

/*
 *  stress_ksm_unmerge_thp_phase()
 *	merging: fresh THPs of the same page, which chunks really are THPs,
 *	then mergeable; merged: the THPs KSM split and merged (evidence); no
 *	compaction by any instance while this one verifies (migration
 *	entries and reused pfns would read as lost or shared pages)
 */
static void stress_ksm_unmerge_thp_phase(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)run->priv;
	const size_t per = t->pmd / ctx->page_size;
	size_t c;

	for (c = 0; c < t->chunks && phase == KSM_PHASE_MERGING; c++) {
		int kind = 0;

		(void)madvise(t->thp + c * t->pmd, t->pmd, MADV_DONTNEED);
		stress_ksm_unmerge_same_fill(ctx, t->thp + c * t->pmd, per);
		if (stress_ksm_unmerge_thp_ksm(ctx, t, c) >= 0)
			kind = stress_ksm_unmerge_thp_kind(t->pm, t->flags, per);
		t->was_thp[c] = (kind != 0);
		t->thps += t->was_thp[c];
		run->rs->detail[0] += (kind == 1);
		run->rs->detail[1] += (kind == 2);
	}
	if (phase == KSM_PHASE_MERGING && madvise(t->thp, t->size, MADV_MERGEABLE) < 0)
		stress_ksm_unmerge_racer_fail(run, "MADV_MERGEABLE on the THP region failed, errno=%d (%s)", errno, strerror(errno));
	for (c = 0; c < t->chunks && phase == KSM_PHASE_MERGED; c++)
		run->rs->evidence += (t->was_thp[c] && stress_ksm_unmerge_thp_ksm(ctx, t, c) > 0);
	while (t->verify_fd >= 0 && flock(t->verify_fd, (phase == KSM_PHASE_MERGED || phase == KSM_PHASE_VERIFY) ?
	       LOCK_SH : LOCK_UN) < 0 && errno == EINTR)
		;
}

/*
 *  stress_ksm_unmerge_thp_op()
 *	while the main unmerge runs, once a cycle: compact memory as root
 *	(unless an instance verifies) so break_ksm() meets migration
 *	entries, and unmerge the THP region
 */
static bool stress_ksm_unmerge_thp_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)run->priv;
	const uint64_t cycle = ctx->cycle;

	if (ctx->phase != KSM_PHASE_UNMERGING || t->unmerged == cycle)
		return false;
	if (t->compact_fd >= 0 && t->compacted != cycle && flock(t->compact_fd, LOCK_EX | LOCK_NB) == 0) {
		if (write(t->compact_fd, "1", 1) != 1)
			pr_dbg("%s: thp racer: compact_memory write failed, errno=%d (%s)\n", ctx->args->name,
				errno, strerror(errno));
		(void)flock(t->compact_fd, LOCK_UN);
		t->compacted = cycle;
	}
	t->unmerged = cycle;
	if (madvise(t->thp, t->size, MADV_UNMERGEABLE) < 0)
		stress_ksm_unmerge_racer_fail(run, "MADV_UNMERGEABLE on the THP region failed, errno=%d (%s)",
			errno, strerror(errno));
	run->rs->ops++;
	return true;
}

/*
 *  stress_ksm_unmerge_thp_park()
 *	before parking: unmerged (if the main unmerge was too quick), every
 *	page holds the same page and none is still a KSM page
 */
static void stress_ksm_unmerge_thp_park(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)run->priv;
	const ssize_t bad = stress_ksm_unmerge_same_check(ctx, t->thp, t->npages);
	size_t c;

	if (t->unmerged != ctx->cycle && madvise(t->thp, t->size, MADV_UNMERGEABLE) < 0 && stress_continue(ctx->args))
		stress_ksm_unmerge_racer_fail(run, "MADV_UNMERGEABLE on the THP region failed, errno=%d (%s)", errno, strerror(errno));
	t->unmerged = ctx->cycle;
	if (bad >= 0)
		stress_ksm_unmerge_racer_fail(run, "THP region page %zd lost its data after unmerge", bad);
	for (c = 0; c < t->chunks && bad < 0; c++)
		if (stress_ksm_unmerge_thp_ksm(ctx, t, c) > 0) {
			stress_ksm_unmerge_racer_fail(run, "THP region chunk %zu still has KSM pages after unmerge", c);
			break;
		}
}

/*
 *  stress_ksm_unmerge_thp_stop()
 *	unmap, close
 */
static void stress_ksm_unmerge_thp_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)run->priv;

	(void)ctx;
	if (!t->thps && !run->rs->reason[0])
		(void)stress_ksm_unmerge_racer_reason(run, "no THP could be faulted (KPF_THP never set)");
	if (t->verify_fd >= 0)
		(void)close(t->verify_fd);
	if (t->compact_fd >= 0)
		(void)close(t->compact_fd);
	if (t->map)
		(void)munmap(t->map, t->map_size);
	free(t->pm);
	free(t->flags);
}

/*
 *  stress_ksm_unmerge_thp_start()
 *	up to 4 PMD-sized chunks (hpage_pmd_size, not assumed), PMD aligned,
 *	MADV_HUGEPAGE; compact_memory as root; THP must not be [never]
 */
static int stress_ksm_unmerge_thp_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)run->priv;
	const int64_t pmd = stress_ksm_unmerge_file_field("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", NULL);
	char buf[128];

	t->verify_fd = t->compact_fd = -1;
	if (stress_fs_file_read("/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof(buf)) <= 0 ||
	    strstr(buf, "[never]") || pmd < 2 * (int64_t)ctx->page_size || (pmd & (pmd - 1)) || pmd > 32 * (int64_t)MB) {
		(void)stress_ksm_unmerge_racer_reason(run, "transparent huge pages not built in, [never], or an "
			"unusable hpage_pmd_size (%" PRId64 ")", pmd);
		return -2;
	}
	t->pmd = (size_t)pmd;
	t->chunks = STRESS_MAXIMUM(STRESS_MINIMUM((size_t)(8 * MB) / t->pmd, (size_t)KSM_THP_MAX), (size_t)1);
	t->size = t->chunks * t->pmd;
	t->npages = t->size / ctx->page_size;
	t->map_size = t->size + t->pmd;
	t->map = mmap(NULL, t->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	t->map = (t->map == MAP_FAILED) ? NULL : t->map;
	t->thp = t->map ? (uint8_t *)(((uintptr_t)t->map + t->pmd - 1) & ~((uintptr_t)t->pmd - 1)) : NULL;
	t->pm = calloc(t->pmd / ctx->page_size, sizeof(uint64_t));
	t->flags = calloc(t->pmd / ctx->page_size, sizeof(uint64_t));
	if (!t->map || !t->pm || !t->flags || madvise(t->thp, t->size, MADV_HUGEPAGE) < 0)
		return stress_ksm_unmerge_racer_reason(run, "mmap, MADV_HUGEPAGE or memory for %zu bytes failed, "
			"errno=%d (%s)", t->map_size, errno, strerror(errno));
	stress_memory_anon_name_set(t->thp, t->size, "ksm-unmerge-thp");
	if (geteuid() == 0) {
		t->verify_fd = open("/proc/sys/vm/compact_memory", O_WRONLY | O_CLOEXEC);
		t->compact_fd = open("/proc/sys/vm/compact_memory", O_WRONLY | O_CLOEXEC);
	}
	return 0;
}
#define KSM_THP_NOT_BUILT	NULL
#else
#define KSM_THP_NOT_BUILT	"MADV_HUGEPAGE missing"
#define stress_ksm_unmerge_thp_start		NULL
#define stress_ksm_unmerge_thp_stop		NULL
#define stress_ksm_unmerge_thp_op		NULL
#define stress_ksm_unmerge_thp_park		NULL
#define stress_ksm_unmerge_thp_phase		NULL
#endif

/* ---- signal: signals interrupting the unmerge walk (EINTR, retried) ---- */

typedef struct {
	pthread_mutex_t lock;		/* the window vs sending */
	bool lock_made;
	volatile bool window;		/* the main thread is inside the timed unmerge */
	volatile uint32_t sent;		/* signals sent in this window, 256 at most */
	struct sigaction old;
} stress_ksm_unmerge_signal_t;

/*
 *  stress_ksm_unmerge_signal_handler()
 *	returning interrupts the unmerge (installed without SA_RESTART)
 */
static void stress_ksm_unmerge_signal_handler(int sig)
{
	(void)sig;
}

/*
 *  stress_ksm_unmerge_signal_op()
 *	signal the main thread every 10-110 us while it is in the unmerge
 */
static bool stress_ksm_unmerge_signal_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_signal_t *s = (stress_ksm_unmerge_signal_t *)run->priv;

	(void)pthread_mutex_lock(&s->lock);
	if (s->window && s->sent < 256 && pthread_kill(ctx->main_thread, SIGRTMIN + 3) == 0) {
		s->sent++;
		run->rs->ops++;
	}
	(void)pthread_mutex_unlock(&s->lock);
	(void)shim_nanosleep_uint64(10000 + stress_mwc32modn(100000));
	return true;
}

/*
 *  stress_ksm_unmerge_signal_call()
 *	one timed unmerge call inside the signal window, retried while the
 *	kernel returns EINTR (the evidence); the cycle's verification then
 *	requires the final state to be complete
 */
static int stress_ksm_unmerge_signal_call(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run,
	int (*call)(stress_ksm_unmerge_ctx_t *ctx, const uint64_t sw, const size_t off, const size_t len),
	const uint64_t sw, const size_t off, const size_t len)
{
	stress_ksm_unmerge_signal_t *s = (stress_ksm_unmerge_signal_t *)run->priv;
	int ret, err, tries = 0;

	s->sent = 0;
	s->window = true;
	while ((ret = call(ctx, sw, off, len)) < 0 && (err = errno) == EINTR && stress_continue(ctx->args) && tries++ < 256)
		run->rs->evidence++;
	err = errno;
	(void)pthread_mutex_lock(&s->lock);
	s->window = false;
	(void)pthread_mutex_unlock(&s->lock);
	if (ret < 0 && err == EINTR && stress_continue(ctx->args))
		stress_ksm_unmerge_racer_fail(run, "the unmerge still returned EINTR after %d retries", tries);
	errno = err;
	return ret;
}

/*
 *  stress_ksm_unmerge_signal_start()
 *	a handler without SA_RESTART (stress-ng's)
 */
static int stress_ksm_unmerge_signal_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_signal_t *s = (stress_ksm_unmerge_signal_t *)run->priv;

	if (stress_signal_handler(ctx->args->name, SIGRTMIN + 3, stress_ksm_unmerge_signal_handler, &s->old) < 0)
		return stress_ksm_unmerge_racer_reason(run, "sigaction of signal %d failed", SIGRTMIN + 3);
	s->lock_made = pthread_mutex_init(&s->lock, NULL) == 0;
	return 0;
}

/*
 *  stress_ksm_unmerge_signal_stop()
 *	the old handler back
 */
static void stress_ksm_unmerge_signal_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_signal_t *s = (stress_ksm_unmerge_signal_t *)run->priv;

	(void)stress_signal_restore(ctx->args->name, SIGRTMIN + 3, &s->old);
	if (s->lock_made)
		(void)pthread_mutex_destroy(&s->lock);
}
