
/* ---- fork: COW of KSM pages in forked children ---- */

#define KSM_FORK_PAGES		(64)	/* KSM pages a child COWs at most */

/* shared between the worker and its fork child */
typedef struct {
	volatile uint32_t n;		/* KSM pages COWed and verified */
	volatile int fail, err;		/* 0, or the first failure (stress_ksm_unmerge_fork_fails) */
	volatile uint64_t page, pfn[2];
	volatile int64_t off;
	volatile uint64_t pages[KSM_FORK_PAGES];
	volatile int64_t parent[2];	/* the parent's ksm_merging_pages, ksm_rmap_items before fork() */
	volatile int64_t child[2];	/* the child's, first thing after fork() */
	volatile int verdict[2];	/* KSM_COUNTER_* of the child's */
	volatile int64_t scanned[2];	/* pages_scanned before fork(), after the child's read */
	volatile uint64_t fork_ns, read_ns;
} stress_ksm_unmerge_fork_sh_t;

typedef struct {
	pid_t pid;
	stress_ksm_unmerge_fork_sh_t *sh;
} stress_ksm_unmerge_fork_t;

static const char * const stress_ksm_unmerge_fork_fails[] = {
	"ok", "child setup failed", "child pagemap read failed", "a KSM page held wrong data before the child's write",
	"the child's write to a KSM page did not get a private copy", "the child's write did not read back",
	"a neighbouring KSM page changed by the child's write",
};

/*
 *  stress_ksm_unmerge_fork_counters_verdict()
 *	pure: did the child start with its parent's ksm_merging_pages and
 *	ksm_rmap_items (fixed by 4d6fc29f3634): 1 yes, 0 no, 2 cannot tell
 *	(ksmd scanned enough pages meanwhile to make the rmap items itself,
 *	or no pages_scanned before 6.7)
 */
static int stress_ksm_unmerge_fork_counters_verdict(const stress_ksm_unmerge_fork_sh_t *sh)
{
	if (!sh->read_ns || ((sh->verdict[0] != KSM_COUNTER_OK || sh->child[0] <= 0) &&
	    (sh->verdict[1] != KSM_COUNTER_OK || sh->child[1] <= 0)))
		return 0;
	/* ksmd makes at most one rmap item per page it scans */
	if (sh->scanned[0] < 0 || sh->scanned[1] < sh->scanned[0] || sh->verdict[1] != KSM_COUNTER_OK ||
	    sh->child[1] <= sh->scanned[1] - sh->scanned[0])
		return 2;
	return 1;
}

/*
 *  stress_ksm_unmerge_fork_cow()
 *	child: if page i is a KSM page here, check it, write it (COW), check
 *	the private copy, the write and the neighbours; 0 or the failure
 */
static int stress_ksm_unmerge_fork_cow(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_fork_sh_t *sh,
	const int pm_fd, const size_t i)
{
	uint8_t *page = ctx->region + i * ctx->page_size;
	uint64_t e0, e1, *w = (uint64_t *)page;
	uint8_t want;
	size_t k;

	sh->page = i;
	sh->off = -1;
	if (stress_ksm_unmerge_pagemap_read(pm_fd, page, 1, ctx->page_size, &e0) < 0)
		return 2;
	if (!stress_ksm_unmerge_is_ksm(stress_ksm_unmerge_page_state(ctx, e0, 0, stress_ksm_unmerge_page_kind(ctx->pattern, i))))
		return 0;
	sh->off = stress_ksm_unmerge_page_check(ctx, i, page, &want);
	if (sh->off >= 0)
		return (stress_ksm_unmerge_all_zero(page, ctx->page_size) && stress_ksm_unmerge_others_run(ctx, NULL)) ? 0 : 3;
	for (k = 0; k < ctx->page_size / sizeof(*w); k++)
		w[k] = 0xf04b636f77000000ULL ^ ((uint64_t)i << 20) ^ k;
	if (stress_ksm_unmerge_pagemap_read(pm_fd, page, 1, ctx->page_size, &e1) < 0)
		return 2;
	sh->pfn[0] = e0 & PM_PFN_MASK;
	sh->pfn[1] = e1 & PM_PFN_MASK;
	if (stress_ksm_unmerge_page_state(ctx, e1, 0, KSM_KIND_UNIQUE) != KSM_PAGE_PRIVATE)
		return 4;
	for (k = 0; k < ctx->page_size / sizeof(*w); k++) {
		if (w[k] != (0xf04b636f77000000ULL ^ ((uint64_t)i << 20) ^ k)) {
			sh->off = (int64_t)(k * sizeof(*w));
			return 5;
		}
	}
	for (k = i - 1; k <= i + 1; k += 2) {
		if (k >= ctx->npages || stress_ksm_unmerge_pagemap_read(pm_fd, ctx->region + k * ctx->page_size, 1,
				ctx->page_size, &e1) < 0 || !stress_ksm_unmerge_is_ksm(stress_ksm_unmerge_page_state(ctx, e1,
				0, stress_ksm_unmerge_page_kind(ctx->pattern, k))))
			continue;
		sh->off = stress_ksm_unmerge_page_check(ctx, k, ctx->region + k * ctx->page_size, &want);
		sh->page = k;
		if (sh->off >= 0 && !(stress_ksm_unmerge_others_run(ctx, NULL) &&
		    stress_ksm_unmerge_all_zero(ctx->region + k * ctx->page_size, ctx->page_size)))
			return 6;
	}
	sh->pages[sh->n++] = i;
	return 0;
}

/*
 *  stress_ksm_unmerge_fork_child()
 *	child: read its own KSM counters first, then COW up to 64 random KSM
 *	pages while the parent unmerges them
 */
static void NORETURN stress_ksm_unmerge_fork_child(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_fork_sh_t *sh,
	const pid_t parent)
{
	const int fd = open("/proc/self/ksm_stat", O_RDONLY | O_CLOEXEC);
	char buf[1024];
	int pm_fd, tries;

	if (stress_ksm_unmerge_fd_read(fd, buf, sizeof(buf)) > 0) {
		sh->scanned[1] = (int64_t)stress_ksm_unmerge_knob_u64("pages_scanned");
		sh->read_ns = stress_ksm_unmerge_now_ns();
		sh->verdict[0] = stress_ksm_unmerge_counter(buf, "ksm_merging_pages", (int64_t *)&sh->child[0]);
		sh->verdict[1] = stress_ksm_unmerge_counter(buf, "ksm_rmap_items", (int64_t *)&sh->child[1]);
	}
	if (stress_ksm_unmerge_child_init(ctx, parent) < 0 || mprotect(ctx->region, ctx->region_size,
			PROT_READ | PROT_WRITE) < 0 || (pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)) < 0) {
		sh->err = errno;
		sh->fail = 1;
		_exit(EXIT_FAILURE);
	}
	stress_mwc_reseed();
	for (tries = 0; tries < 1024 && sh->n < KSM_FORK_PAGES && stress_continue(ctx->args) && !sh->fail; tries++) {
		if (sh->n >= 4 && (ctx->st->phase == KSM_PHASE_VERIFY || ctx->st->phase == KSM_PHASE_IDLE))
			break;
		sh->err = 0;
		sh->fail = stress_ksm_unmerge_fork_cow(ctx, sh, pm_fd, stress_mwc32modn((uint32_t)ctx->npages));
		if (sh->fail == 2)
			sh->err = errno;
		(void)shim_nanosleep_uint64(stress_mwc32modn(100000));
	}
	_exit(sh->fail ? EXIT_FAILURE : EXIT_SUCCESS);
}

/*
 *  stress_ksm_unmerge_fork_reap()
 *	reap the child (3 s at most), count its COWs, report what it recorded
 */
static void stress_ksm_unmerge_fork_reap(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run,
	stress_ksm_unmerge_fork_t *f)
{
	const stress_ksm_unmerge_fork_sh_t *sh = f->sh;
	int status;
	const int ret = stress_ksm_unmerge_reap(f->pid, 3.0, &status);

	f->pid = 0;
	run->rs->ops++;
	run->rs->evidence += sh->n;
	if (stress_ksm_unmerge_fork_counters_verdict(sh) == 1)
		stress_ksm_unmerge_racer_fail(run, "the child's ksm_stat read ksm_merging_pages %" PRId64 ", ksm_rmap_items "
			"%" PRId64 " %.3f ms after fork() (the parent's: %" PRId64 ", %" PRId64 "; ksmd scanned %" PRId64
			" pages meanwhile): the parent's KSM counters were copied into the child (expected 0; "
			"fixed by 4d6fc29f3634)", sh->child[0], sh->child[1], (double)(sh->read_ns - sh->fork_ns) / 1.0E6,
			sh->parent[0], sh->parent[1], sh->scanned[1] - sh->scanned[0]);
	if (sh->fail > 0 && (size_t)sh->fail < SIZEOF_ARRAY(stress_ksm_unmerge_fork_fails))
		stress_ksm_unmerge_racer_fail(run, "%s: page %" PRIu64 ", byte %" PRId64 ", pfn %#" PRIx64 " -> %#" PRIx64
			", errno=%d (%s)", stress_ksm_unmerge_fork_fails[sh->fail], sh->page, sh->off, sh->pfn[0],
			sh->pfn[1], sh->err, strerror(sh->err));
	else if (ret > 0 && stress_continue(ctx->args))
		stress_ksm_unmerge_racer_fail(run, "child did not exit within 3 s, killed");
	else if (ret < 0 || (ret == 0 && !(WIFEXITED(status) && !WEXITSTATUS(status)) &&
		 !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && !stress_continue(ctx->args))))
		stress_ksm_unmerge_racer_fail(run, "waitpid on the child failed or it ended with status %#x", status);
}

/*
 *  stress_ksm_unmerge_fork_phase()
 *	merged: fork the child (the parent's counters read right before);
 *	verify: reap it; idle, racers parked: the parent's copies of the
 *	pages the child COWed intact
 */
static void stress_ksm_unmerge_fork_phase(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_fork_t *f = (stress_ksm_unmerge_fork_t *)run->priv;
	stress_ksm_unmerge_fork_sh_t *sh = f->sh;
	const pid_t parent = getpid();
	uint8_t want;
	ssize_t off;
	size_t k;

	if (phase == KSM_PHASE_MERGED && !f->pid) {
		(void)shim_memset((void *)sh, 0, sizeof(*sh));
		sh->parent[0] = stress_ksm_unmerge_field(ctx->ksm_stat_fd, "ksm_merging_pages");
		sh->parent[1] = stress_ksm_unmerge_field(ctx->ksm_stat_fd, "ksm_rmap_items");
		sh->scanned[0] = stress_ksm_unmerge_file_field(KSM_SYSFS "/pages_scanned", NULL);
		sh->fork_ns = stress_ksm_unmerge_now_ns();
		f->pid = fork();
		if (f->pid == 0)
			stress_ksm_unmerge_fork_child(ctx, sh, parent);
		if (f->pid < 0) {
			(void)stress_ksm_unmerge_racer_reason(run, "fork failed, errno=%d (%s)", errno, strerror(errno));
			f->pid = 0;
		}
	} else if ((phase == KSM_PHASE_VERIFY || phase == KSM_PHASE_IDLE) && f->pid > 0) {
		stress_ksm_unmerge_fork_reap(ctx, run, f);
	}
	if (phase != KSM_PHASE_IDLE || ctx->quiesce != ctx->cycle)
		return;
	for (k = 0; k < STRESS_MINIMUM(sh->n, (uint32_t)KSM_FORK_PAGES); k++) {
		const size_t i = (size_t)sh->pages[k];

		off = (i < ctx->npages) ? stress_ksm_unmerge_page_check(ctx, i, ctx->region + i * ctx->page_size, &want) : 0;
		if (off >= 0) {
			stress_ksm_unmerge_racer_fail(run, "parent page %zu changed by the child's COW write: byte %zd", i, off);
			break;
		}
	}
	sh->n = 0;
}

/*
 *  stress_ksm_unmerge_fork_start()
 *	the state shared with the children
 */
static int stress_ksm_unmerge_fork_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_fork_t *f = (stress_ksm_unmerge_fork_t *)run->priv;

	(void)ctx;
	f->sh = stress_ksm_unmerge_shared_map(sizeof(*f->sh));
	return f->sh ? 0 : stress_ksm_unmerge_racer_reason(run, "mmap of the shared state failed, errno=%d (%s)",
		errno, strerror(errno));
}

/*
 *  stress_ksm_unmerge_fork_stop()
 *	kill and reap a child still running, unmap
 */
static void stress_ksm_unmerge_fork_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_fork_t *f = (stress_ksm_unmerge_fork_t *)run->priv;
	int status;

	(void)ctx;
	if (f->pid > 0) {
		(void)shim_kill(f->pid, SIGKILL);
		(void)stress_ksm_unmerge_reap(f->pid, 0.0, &status);
	}
	if (f->sh)
		(void)munmap((void *)f->sh, sizeof(*f->sh));
}

/* ---- mprotect: unmerge of PROT_NONE / read-only KSM pages ---- */

typedef struct {
	pthread_mutex_t lock;		/* the thread's toggles vs the hooks */
	bool lock_made, frozen;		/* frozen from verify to merging */
	size_t first, n;		/* the window it protects: the region's last quarter */
	uint8_t *prot;			/* per window page: 0 RW, 1 READ, 2 NONE */
	uint64_t *snap;			/* per window page: KSM pfn protected at unmerge start, 0 none */
	uint64_t *pm;
	size_t nprot;			/* pages not RW */
	uint32_t toggles;		/* this cycle */
} stress_ksm_unmerge_mprotect_t;

/*
 *  stress_ksm_unmerge_mprotect_rw()
 *	(lock held) the window back to PROT_READ | PROT_WRITE; a fail line if refused
 */
static void stress_ksm_unmerge_mprotect_rw(stress_ksm_unmerge_run_t *run, stress_ksm_unmerge_mprotect_t *mp)
{
	if (!mp->nprot)
		return;
	if (mprotect(run->ctx->region + mp->first * run->ctx->page_size, mp->n * run->ctx->page_size,
			PROT_READ | PROT_WRITE) < 0) {
		stress_ksm_unmerge_racer_fail(run, "restoring PROT_READ|PROT_WRITE failed, errno=%d (%s)", errno, strerror(errno));
		return;
	}
	(void)shim_memset(mp->prot, 0, mp->n);
	mp->nprot = 0;
}

/*
 *  stress_ksm_unmerge_mprotect_op()
 *	while merging, merged or unmerging, 128 a cycle: 1-32 random window
 *	pages to a random protection, never pages in the unmerge snapshot
 */
static bool stress_ksm_unmerge_mprotect_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	static const int prots[] = { PROT_READ | PROT_WRITE, PROT_READ, PROT_NONE };
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)run->priv;
	const size_t n = 1 + stress_mwc32modn((uint32_t)STRESS_MINIMUM(mp->n, (size_t)32));
	const size_t first = stress_mwc32modn((uint32_t)(mp->n - n + 1));
	const uint8_t p = (uint8_t)stress_mwc32modn(3);
	size_t i;

	if (mp->frozen || mp->toggles >= 128 || ctx->phase == KSM_PHASE_IDLE || ctx->phase == KSM_PHASE_VERIFY)
		return false;
	(void)pthread_mutex_lock(&mp->lock);
	for (i = first; i < first + n && !mp->snap[i]; i++)
		;
	if (!mp->frozen && i == first + n) {
		if (mprotect(ctx->region + (mp->first + first) * ctx->page_size, n * ctx->page_size, prots[p]) == 0) {
			for (i = first; i < first + n; i++) {
				mp->nprot += (p != 0) - (mp->prot[i] != 0);
				mp->prot[i] = p;
			}
			mp->toggles++;
			run->rs->ops++;
		} else if (errno == ENOMEM) {	/* too many VMAs: start over */
			stress_ksm_unmerge_mprotect_rw(run, mp);
		} else {
			stress_ksm_unmerge_racer_fail(run, "mprotect of pages %zu..%zu failed, errno=%d (%s)",
				mp->first + first, mp->first + first + n - 1, errno, strerror(errno));
		}
	}
	(void)pthread_mutex_unlock(&mp->lock);
	(void)shim_nanosleep_uint64(50000);
	return true;
}

/*
 *  stress_ksm_unmerge_mprotect_park()
 *	before parking: everything RW again
 */
static void stress_ksm_unmerge_mprotect_park(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)run->priv;

	(void)ctx;
	(void)pthread_mutex_lock(&mp->lock);
	stress_ksm_unmerge_mprotect_rw(run, mp);
	(void)pthread_mutex_unlock(&mp->lock);
}

/*
 *  stress_ksm_unmerge_mprotect_phase()
 *	merging: toggles on; unmerging: note the KSM pages protected now;
 *	verify: each must be unshared by the unmerge (evidence), then RW
 */
static void stress_ksm_unmerge_mprotect_phase(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)run->priv;
	uint8_t *window = ctx->region + mp->first * ctx->page_size;
	const bool read = (phase == KSM_PHASE_UNMERGING && mp->nprot) || phase == KSM_PHASE_VERIFY;
	size_t i;

	(void)pthread_mutex_lock(&mp->lock);
	if (phase == KSM_PHASE_MERGING || phase == KSM_PHASE_VERIFY || phase == KSM_PHASE_IDLE)
		mp->frozen = (phase != KSM_PHASE_MERGING);
	if (phase == KSM_PHASE_MERGING)
		mp->toggles = 0;
	if (read && stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, window, mp->n, ctx->page_size, mp->pm) == 0) {
		for (i = 0; i < mp->n; i++) {
			const int what = stress_ksm_unmerge_page_state(ctx, mp->pm[i], 0,
				stress_ksm_unmerge_page_kind(ctx->pattern, mp->first + i));

			if (phase == KSM_PHASE_UNMERGING) {
				mp->snap[i] = (mp->prot[i] && stress_ksm_unmerge_is_ksm(what)) ? mp->pm[i] & PM_PFN_MASK : 0;
				continue;
			}
			if (!mp->snap[i])
				continue;
			run->rs->evidence += (what == KSM_PAGE_PRIVATE);
			/* a discarded page read back: pagemap cannot tell it from a KSM zero page */
			if (stress_ksm_unmerge_is_ksm(what) && !(what == KSM_PAGE_KZERO && stress_ksm_unmerge_others_run(ctx, run->r)))
				stress_ksm_unmerge_racer_fail(run, "page %zu was a KSM page (pfn %#" PRIx64 ") under %s at the "
					"start of the unmerge and still maps a KSM page after it (pfn %#" PRIx64 "); cycle %"
					PRIu64 ", racers %s", mp->first + i, mp->snap[i], mp->prot[i] == 2 ? "PROT_NONE" :
					"PROT_READ", (uint64_t)(mp->pm[i] & PM_PFN_MASK), ctx->cycle, ctx->racers_str);
		}
	}
	if (phase == KSM_PHASE_VERIFY || phase == KSM_PHASE_IDLE) {
		(void)shim_memset(mp->snap, 0, mp->n * sizeof(*mp->snap));
		stress_ksm_unmerge_mprotect_rw(run, mp);
	}
	(void)pthread_mutex_unlock(&mp->lock);
}

/*
 *  stress_ksm_unmerge_mprotect_stop()
 *	free the maps
 */
static void stress_ksm_unmerge_mprotect_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)run->priv;

	(void)ctx;
	if (mp->lock_made)
		(void)pthread_mutex_destroy(&mp->lock);
	free(mp->prot);
	free(mp->snap);
	free(mp->pm);
}

/*
 *  stress_ksm_unmerge_mprotect_start()
 *	the window (racers that touch pages stay below it) and its maps
 */
static int stress_ksm_unmerge_mprotect_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)run->priv;

	mp->n = STRESS_MAXIMUM(ctx->npages / 4, (size_t)1);
	mp->first = ctx->npages - mp->n;
	mp->frozen = true;
	mp->prot = calloc(mp->n, 1);
	mp->snap = calloc(mp->n, sizeof(*mp->snap));
	mp->pm = calloc(mp->n, sizeof(*mp->pm));
	if (!mp->prot || !mp->snap || !mp->pm)
		return stress_ksm_unmerge_racer_reason(run, "out of memory for the protection map");
	mp->lock_made = pthread_mutex_init(&mp->lock, NULL) == 0;
	ctx->touch_npages = STRESS_MAXIMUM(mp->first, (size_t)1);
	return 0;
}

/* ---- dontneed: unmerge over MADV_DONTNEED holes ---- */

typedef struct {
	uint8_t *holes;			/* per page: discarded this cycle */
	uint64_t cycle;
	uint32_t ranges;		/* ranges discarded this cycle, 64 at most */
} stress_ksm_unmerge_dontneed_t;

/*
 *  stress_ksm_unmerge_dontneed_op()
 *	discard 1-16 random pages while merged or unmerging; count the KSM pages
 */
static bool stress_ksm_unmerge_dontneed_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_dontneed_t *d = (stress_ksm_unmerge_dontneed_t *)run->priv;
	uint8_t st[KSM_OP_PAGES];
	size_t first, j, n;

	d->ranges = (d->cycle != ctx->cycle) ? 0 : d->ranges;
	d->cycle = ctx->cycle;
	if (!stress_ksm_unmerge_active(ctx) || d->ranges >= 64)
		return false;
	n = stress_ksm_unmerge_random_range(ctx, KSM_OP_PAGES, &first);
	(void)stress_ksm_unmerge_pages_state(ctx, ctx->region + first * ctx->page_size, n,
		stress_ksm_unmerge_page_kind(ctx->pattern, first), st);
	if (madvise(ctx->region + first * ctx->page_size, n * ctx->page_size, MADV_DONTNEED) < 0) {
		stress_ksm_unmerge_racer_fail(run, "MADV_DONTNEED of pages %zu..%zu failed, errno=%d (%s)",
			first, first + n - 1, errno, strerror(errno));
		return true;
	}
	for (j = 0; j < n; j++) {
		d->holes[first + j] = 1;
		run->rs->evidence += stress_ksm_unmerge_is_ksm(st[j]);
	}
	d->ranges++;
	run->rs->ops++;
	return true;
}

/*
 *  stress_ksm_unmerge_dontneed_restore()
 *	every racer parked (the window is RW again): refill the holes
 */
static void stress_ksm_unmerge_dontneed_restore(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_dontneed_t *d = (stress_ksm_unmerge_dontneed_t *)run->priv;
	size_t i;

	for (i = 0; i < ctx->npages; i++) {
		if (d->holes[i])
			stress_ksm_unmerge_page_fill(ctx, i, ctx->region + i * ctx->page_size);
		d->holes[i] = 0;
	}
}

/*
 *  stress_ksm_unmerge_dontneed_start()
 *	the hole map
 */
static int stress_ksm_unmerge_dontneed_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_dontneed_t *d = (stress_ksm_unmerge_dontneed_t *)run->priv;

	d->holes = calloc(ctx->npages, 1);
	return d->holes ? 0 : stress_ksm_unmerge_racer_reason(run, "out of memory for the hole map");
}

/*
 *  stress_ksm_unmerge_dontneed_stop()
 *	free the hole map
 */
static void stress_ksm_unmerge_dontneed_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	(void)ctx;
	free(((stress_ksm_unmerge_dontneed_t *)run->priv)->holes);
}
