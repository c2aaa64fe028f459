/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racer-fork.h: the fork racer (private header of
 * stress-ksm-unmerge.c, included once, before the racer table).
 */

/* ---------------------------------------------------------------------
 *  fork: a child forked at MERGED writes to pages that are KSM pages in
 *  its own pagemap (COW of KSM pages, cow_ksm) while the parent goes on
 *  to unmerge the same pages; reaped at VERIFY, parent copy checked.
 * --------------------------------------------------------------------- */

enum {
	KSM_FORK_OK = 0,
	KSM_FORK_FAIL_SETUP,		/* prctl/getppid/mprotect/pagemap open */
	KSM_FORK_FAIL_PAGEMAP,		/* pagemap read */
	KSM_FORK_FAIL_SHARED,		/* KSM page held wrong data before the write */
	KSM_FORK_FAIL_NOCOW,		/* write to a KSM page did not get a private page */
	KSM_FORK_FAIL_WRITE,		/* the child's write did not read back */
	KSM_FORK_FAIL_NEIGHBOUR,	/* a neighbouring KSM page changed */
};

/* Shared between the parent and its fork child */
typedef struct {
	volatile uint32_t n;		/* KSM pages COWed and verified */
	volatile uint32_t tried;	/* KSM pages the child wrote */
	volatile int fail;		/* KSM_FORK_FAIL_*, first failure */
	volatile int err;		/* its errno */
	volatile uint64_t page;		/* its page index */
	volatile int64_t off;		/* its byte offset */
	volatile uint64_t pfn[2];	/* pfn before/after for NOCOW */
	volatile uint64_t pages[KSM_FORK_PAGES];	/* pages COWed */
	stress_ksm_unmerge_forkc_t fc;	/* KSM counters around the fork */
} stress_ksm_unmerge_fork_shared_t;

/* fork racer state (main thread only) */
typedef struct {
	pid_t pid;			/* live child, 0 if none */
	stress_ksm_unmerge_fork_shared_t *sh;
} stress_ksm_unmerge_fork_t;

static const char * const stress_ksm_unmerge_fork_fail_names[] = {
	"ok",
	"child setup failed",
	"child pagemap read failed",
	"KSM page held wrong data before the child's write",
	"child's write to a KSM page did not get a private copy",
	"child's write did not read back",
	"neighbouring KSM page changed by the child's write",
};

/*
 *  stress_ksm_unmerge_fork_word()
 *	word w the fork child writes into page i
 */
static inline uint64_t stress_ksm_unmerge_fork_word(const size_t i, const size_t w)
{
	return 0xf04b636f77000000ULL ^ ((uint64_t)i << 20) ^ (uint64_t)w;
}

/*
 *  stress_ksm_unmerge_fork_fill()
 *	child: write the child pattern into page i
 */
static void stress_ksm_unmerge_fork_fill(uint8_t *page, const size_t page_size, const size_t i)
{
	uint64_t *p = (uint64_t *)page;
	size_t w;

	for (w = 0; w < page_size / sizeof(uint64_t); w++)
		p[w] = stress_ksm_unmerge_fork_word(i, w);
}

/*
 *  stress_ksm_unmerge_fork_written_check()
 *	pure: byte offset of the first wrong word of the child's page i, -1 if intact
 */
static ssize_t stress_ksm_unmerge_fork_written_check(const uint8_t *page, const size_t page_size,
	const size_t i)
{
	const uint64_t *p = (const uint64_t *)page;
	size_t w;

	for (w = 0; w < page_size / sizeof(uint64_t); w++)
		if (p[w] != stress_ksm_unmerge_fork_word(i, w))
			return (ssize_t)(w * sizeof(uint64_t));
	return -1;
}

/*
 *  stress_ksm_unmerge_fork_parent_check()
 *	pure: the parent's copies of the pages the child COWed still hold the
 *	pattern; index into pages[] of the first bad one (*off its byte), -1 if all good
 */
static ssize_t stress_ksm_unmerge_fork_parent_check(const stress_ksm_unmerge_ctx_t *ctx,
	const volatile uint64_t *pages, const size_t n, ssize_t *off)
{
	size_t k;

	*off = -1;
	for (k = 0; k < n; k++) {
		const size_t i = (size_t)pages[k];

		if (i >= ctx->npages) {
			*off = 0;
			return (ssize_t)k;
		}
		*off = stress_ksm_unmerge_page_check(ctx, i, ctx->region + i * ctx->page_size);
		if (*off >= 0)
			return (ssize_t)k;
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_fork_child_fail()
 *	child: record the first failure for the parent to report
 */
static int stress_ksm_unmerge_fork_child_fail(stress_ksm_unmerge_fork_shared_t *sh, const int fail,
	const int err, const size_t i, const ssize_t off)
{
	if (sh->fail == KSM_FORK_OK) {
		sh->err = err;
		sh->page = i;
		sh->off = off;
		sh->fail = fail;
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_fork_neighbours()
 *	child: pages next to i that are KSM pages in the child hold the pattern
 */
static int stress_ksm_unmerge_fork_neighbours(stress_ksm_unmerge_ctx_t *ctx, const int pm_fd,
	stress_ksm_unmerge_fork_shared_t *sh, const size_t i)
{
	const size_t js[2] = { i - 1, i + 1 };
	size_t k;

	for (k = 0; k < 2; k++) {
		const size_t j = js[k];
		const uint8_t *page = ctx->region + j * ctx->page_size;
		uint64_t e, flags;
		ssize_t off;

		if (j >= ctx->npages)	/* i - 1 wraps for i = 0 */
			continue;
		if (stress_ksm_unmerge_page_lookup(ctx, pm_fd, page, &e, &flags) < 0)
			return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_PAGEMAP, errno, j, -1);
		if (!stress_ksm_unmerge_region_page_is_ksm(ctx, j, e, flags))
			continue;
		off = stress_ksm_unmerge_pattern_bad_offset(ctx, j, page);
		if (off >= 0)
			return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_NEIGHBOUR, 0, j, off);
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_fork_cow_one()
 *	child: if page i is a KSM page here, check it, write it (COW), check the
 *	new private copy, the write and the neighbours; 1 COWed, 0 skipped, -1 failed
 */
static int stress_ksm_unmerge_fork_cow_one(stress_ksm_unmerge_ctx_t *ctx, const int pm_fd,
	stress_ksm_unmerge_fork_shared_t *sh, const size_t i)
{
	uint8_t *page = ctx->region + i * ctx->page_size;
	uint64_t e0, f0, e1, f1;
	ssize_t off;

	if (stress_ksm_unmerge_page_lookup(ctx, pm_fd, page, &e0, &f0) < 0)
		return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_PAGEMAP, errno, i, -1);
	if (!stress_ksm_unmerge_region_page_is_ksm(ctx, i, e0, f0))
		return 0;
	if (stress_ksm_unmerge_page_check(ctx, i, page) >= 0) {
		off = stress_ksm_unmerge_pattern_bad_offset(ctx, i, page);
		if (off >= 0)
			return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_SHARED, 0, i, off);
		return 0;	/* zero-filled by another racer's discard: not ours to COW */
	}
	sh->tried++;
	stress_ksm_unmerge_fork_fill(page, ctx->page_size, i);
	if (stress_ksm_unmerge_page_lookup(ctx, pm_fd, page, &e1, &f1) < 0)
		return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_PAGEMAP, errno, i, -1);
	if (stress_ksm_unmerge_unshared_verdict(e0 & PM_PFN_MASK, e1, f1, ctx->zero_pfn) <= 0) {
		sh->pfn[0] = e0 & PM_PFN_MASK;
		sh->pfn[1] = e1 & PM_PFN_MASK;
		return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_NOCOW, 0, i, -1);
	}
	off = stress_ksm_unmerge_fork_written_check(page, ctx->page_size, i);
	if (off >= 0)
		return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_WRITE, 0, i, off);
	if (stress_ksm_unmerge_fork_neighbours(ctx, pm_fd, sh, i) < 0)
		return -1;
	sh->pages[sh->n] = i;
	sh->n++;
	return 1;
}

/*
 *  stress_ksm_unmerge_fork_child()
 *	child: COW up to KSM_FORK_PAGES random KSM pages while the parent unmerges
 */
static void NORETURN stress_ksm_unmerge_fork_child(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_fork_shared_t *sh, const pid_t parent)
{
	int pm_fd, tries;

	stress_ksm_unmerge_forkc_child(&sh->fc);
	if ((stress_ksm_unmerge_racer_child_init(ctx, parent) < 0) ||
	    (stress_ksm_unmerge_racer_child_rw(ctx) < 0)) {
		(void)stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_SETUP, errno, 0, -1);
		_exit(EXIT_FAILURE);
	}
	pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pm_fd < 0) {
		(void)stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_SETUP, errno, 0, -1);
		_exit(EXIT_FAILURE);
	}
	stress_mwc_reseed();
	for (tries = 0; (tries < KSM_FORK_TRIES) && (sh->n < KSM_FORK_PAGES); tries++) {
		const int phase = ctx->st->phase;
		size_t i;

		if ((sh->n >= KSM_FORK_MIN_PAGES) &&
		    ((phase == KSM_PHASE_VERIFY) || (phase == KSM_PHASE_IDLE)))
			break;
		if (!stress_continue(ctx->args))
			break;
		i = stress_mwc32modn((uint32_t)ctx->npages);
		if (stress_ksm_unmerge_fork_cow_one(ctx, pm_fd, sh, i) < 0)
			break;
		(void)shim_nanosleep_uint64(stress_mwc32modn(100000));
	}
	(void)close(pm_fd);
	_exit(sh->fail == KSM_FORK_OK ? EXIT_SUCCESS : EXIT_FAILURE);
}

/*
 *  stress_ksm_unmerge_fork_spawn()
 *	MERGED hook: fork the child that COWs KSM pages
 */
static void stress_ksm_unmerge_fork_spawn(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_fork_t *f)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const pid_t parent = getpid();
	pid_t pid;

	if (f->pid > 0)
		return;
	(void)memset((void *)f->sh, 0, sizeof(*f->sh));
	stress_ksm_unmerge_forkc_before(ctx, &f->sh->fc);
	pid = fork();
	if (pid < 0) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "fork failed, errno=%d (%s)",
			errno, strerror(errno));
		return;
	}
	if (pid == 0)
		stress_ksm_unmerge_fork_child(ctx, f->sh, parent);
	f->pid = pid;
}

/*
 *  stress_ksm_unmerge_fork_report()
 *	parent: report a failure the child recorded
 */
static void stress_ksm_unmerge_fork_report(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const stress_ksm_unmerge_fork_shared_t *sh)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const int fail = sh->fail;
	const char *what = (fail > 0 && (size_t)fail < SIZEOF_ARRAY(stress_ksm_unmerge_fork_fail_names)) ?
		stress_ksm_unmerge_fork_fail_names[fail] : "unknown failure";

	rs->failures++;
	if (fail == KSM_FORK_FAIL_NOCOW)
		pr_fail("%s: fork racer: %s: page %" PRIu64 " pfn %#" PRIx64 " -> %#" PRIx64 "\n",
			ctx->args->name, what, sh->page, sh->pfn[0], sh->pfn[1]);
	else if (sh->off >= 0)
		pr_fail("%s: fork racer: %s: page %" PRIu64 " byte %" PRId64 " (pattern %s)\n",
			ctx->args->name, what, sh->page, sh->off, stress_ksm_unmerge_patterns[ctx->pattern]);
	else
		pr_fail("%s: fork racer: %s, page %" PRIu64 ", errno=%d (%s)\n",
			ctx->args->name, what, sh->page, sh->err, strerror(sh->err));
}

/*
 *  stress_ksm_unmerge_fork_reap()
 *	VERIFY hook: bounded wait for the child, count its COWs, report failures
 */
static void stress_ksm_unmerge_fork_reap(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_fork_t *f)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	int status, ret;

	if (f->pid <= 0)
		return;
	ret = stress_ksm_unmerge_child_reap(f->pid, KSM_FORK_REAP_SECS, &status);
	f->pid = 0;
	rs->ops++;
	rs->evidence += f->sh->n;
	if (stress_ksm_unmerge_forkc_judge(ctx, &f->sh->fc) < 0)
		rs->failures++;
	if (f->sh->fail != KSM_FORK_OK) {
		stress_ksm_unmerge_fork_report(ctx, idx, f->sh);
	} else if (ret < 0) {
		rs->failures++;
		pr_fail("%s: fork racer: waitpid on the child failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
	} else if (ret > 0 && stress_continue(ctx->args)) {
		rs->failures++;
		pr_fail("%s: fork racer: child did not exit within %.0f s after %" PRIu32
			" COW writes, killed\n", ctx->args->name, KSM_FORK_REAP_SECS, f->sh->tried);
	} else if (ret == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0) &&
		   !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && !stress_continue(ctx->args))) {
		rs->failures++;
		pr_fail("%s: fork racer: child ended with wait status %#x\n", ctx->args->name, status);
	}
}

/*
 *  stress_ksm_unmerge_fork_check()
 *	IDLE hook, racers parked: the parent's copies of COWed pages are intact
 */
static void stress_ksm_unmerge_fork_check(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_fork_t *f)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const size_t n = f->sh->n < KSM_FORK_PAGES ? f->sh->n : KSM_FORK_PAGES;
	ssize_t k, off;

	if (ctx->quiesce != ctx->cycle)
		goto done;	/* racers not parked (error path): data may be in flux */
	k = stress_ksm_unmerge_fork_parent_check(ctx, f->sh->pages, n, &off);
	if (k >= 0) {
		const size_t i = (size_t)f->sh->pages[k];

		rs->failures++;
		pr_fail("%s: fork racer: parent page %zu changed by the child's COW write: "
			"byte %zd is 0x%02x (pattern %s)\n", ctx->args->name, i, off,
			i < ctx->npages ? ctx->region[i * ctx->page_size + (size_t)off] : 0,
			stress_ksm_unmerge_patterns[ctx->pattern]);
	}
done:
	f->sh->n = 0;
}

/*
 *  stress_ksm_unmerge_fork_cycle()
 *	fork at MERGED, reap at VERIFY, check the parent's pages at IDLE
 */
static void stress_ksm_unmerge_fork_cycle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const int phase)
{
	stress_ksm_unmerge_fork_t *f = (stress_ksm_unmerge_fork_t *)ctx->run[idx].priv;

	if (!f)
		return;
	switch (phase) {
	case KSM_PHASE_MERGED:
		stress_ksm_unmerge_fork_spawn(ctx, idx, f);
		break;
	case KSM_PHASE_VERIFY:
		stress_ksm_unmerge_fork_reap(ctx, idx, f);
		break;
	case KSM_PHASE_IDLE:
		stress_ksm_unmerge_fork_reap(ctx, idx, f);
		stress_ksm_unmerge_fork_check(ctx, idx, f);
		break;
	default:
		break;
	}
}

/*
 *  stress_ksm_unmerge_fork_start()
 *	state and the page list shared with the child
 */
static int stress_ksm_unmerge_fork_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	stress_ksm_unmerge_fork_t *f;

	if (stress_ksm_unmerge_racer_need_pfns(ctx, idx, "child cannot see KSM pages") < 0)
		return -1;
	f = calloc(1, sizeof(*f));
	if (!f) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "out of memory for racer state");
		return -1;
	}
	f->sh = mmap(NULL, sizeof(*f->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (f->sh == MAP_FAILED) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "mmap of shared page list failed, "
			"errno=%d (%s)", errno, strerror(errno));
		free(f);
		return -1;
	}
	ctx->run[idx].priv = f;
	return 0;
}

/*
 *  stress_ksm_unmerge_fork_stop()
 *	kill and reap a child still running, unmap, free
 */
static void stress_ksm_unmerge_fork_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_fork_t *f = (stress_ksm_unmerge_fork_t *)ctx->run[idx].priv;
	int status;

	if (!f)
		return;
	if (f->pid > 0) {
		(void)shim_kill(f->pid, SIGKILL);
		(void)stress_ksm_unmerge_child_reap(f->pid, 0.0, &status);
		f->pid = 0;
	}
	(void)munmap((void *)f->sh, sizeof(*f->sh));
	free(f);
	ctx->run[idx].priv = NULL;
}

#define KSM_RACER_FORK                                          \
	.flags = KSM_RACER_F_MM,                                \
	.path = "COW of KSM pages in forked children",          \
	.evidence = "ksm-cow-writes",                           \
	.supported = stress_ksm_unmerge_racer_supported_always, \
	.start = stress_ksm_unmerge_fork_start,                 \
	.stop = stress_ksm_unmerge_fork_stop,                   \
	.cycle = stress_ksm_unmerge_fork_cycle,
