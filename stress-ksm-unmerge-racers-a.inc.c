/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racers-a.inc.c: racers vmsplice, gup, uffd-wp and
 * thp.  Included by stress-ksm-unmerge.c just before the racer table.
 *
 *  vmsplice  GUP references on KSM pages held in a pipe across the unmerge
 *  gup       O_DIRECT read-only and write pins of KSM pages (COW breaks)
 *  uffd-wp   unshare of uffd-wp protected KSM pages, with an unmerge watchdog
 *  thp       KSM split of THPs, unmerge racing memory compaction
 */

#include <stdarg.h>
#include <sys/file.h>

/* defined after this fragment in stress-ksm-unmerge.c */
static bool stress_ksm_unmerge_page_is_ksm(stress_ksm_unmerge_ctx_t *ctx, const size_t i);

#if !defined(KPF_BIT_THP)
#define KPF_BIT_THP			(22)
#endif

/* Racers implemented in this file; others may discard or protect pages */
#define KSM_RA_MASK	(STRESS_BIT_ULL(KSM_RACER_IDX_VMSPLICE) |	\
			 STRESS_BIT_ULL(KSM_RACER_IDX_GUP) |		\
			 STRESS_BIT_ULL(KSM_RACER_IDX_UFFD_WP) |	\
			 STRESS_BIT_ULL(KSM_RACER_IDX_THP))

#define KSM_RA_MAX_PAGES		(16)	/* pages per vmsplice / O_DIRECT op */

/* What one page of the region maps right now */
enum {
	KSM_RA_PAGE_ABSENT = 0,		/* not present */
	KSM_RA_PAGE_ANON,		/* present, not a KSM page */
	KSM_RA_PAGE_KSM,		/* KSM page (KPF_KSM) */
	KSM_RA_PAGE_KZERO,		/* zero page placed by KSM */
};

/*
 *  stress_ksm_unmerge_ra_others()
 *	are racers from outside this file running (they may discard,
 *	protect or rewrite pages, so transient zero pages are legitimate)
 */
static inline bool stress_ksm_unmerge_ra_others(const stress_ksm_unmerge_ctx_t *ctx)
{
	return (ctx->racers_mask & ~KSM_RA_MASK) != 0;
}

/*
 *  stress_ksm_unmerge_ra_reason()
 *	set a racer's reason string (why skipped / not reached)
 */
static void stress_ksm_unmerge_ra_reason(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const char *fmt, ...) FORMAT(printf, 3, 4);

static void stress_ksm_unmerge_ra_reason(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(ctx->st->racer[idx].reason, sizeof(ctx->st->racer[idx].reason), fmt, ap);
	va_end(ap);
}

/*
 *  stress_ksm_unmerge_ra_pm_state()
 *	classify one pagemap entry (KSM page, KSM zero page, anon, absent)
 */
static int stress_ksm_unmerge_ra_pm_state(const stress_ksm_unmerge_ctx_t *ctx, const uint64_t e)
{
	if (!(e & PM_PRESENT))
		return KSM_RA_PAGE_ABSENT;
	if ((e & PM_PFN_MASK) == ctx->zero_pfn)
		return KSM_RA_PAGE_KZERO;
	if (stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, e & PM_PFN_MASK) &
	    STRESS_BIT_ULL(KPF_BIT_KSM))
		return KSM_RA_PAGE_KSM;
	return KSM_RA_PAGE_ANON;
}

/*
 *  stress_ksm_unmerge_ra_states()
 *	state of n pages from addr into st[], -1 without pagemap PFNs
 */
static int stress_ksm_unmerge_ra_states(const stress_ksm_unmerge_ctx_t *ctx, const void *addr,
	const size_t n, uint8_t *st)
{
	uint64_t pm[KSM_RA_MAX_PAGES];
	size_t i;

	if (!ctx->have_pfns || n > KSM_RA_MAX_PAGES ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, addr, n, ctx->page_size, pm) < 0) {
		(void)memset(st, KSM_RA_PAGE_ABSENT, n);
		return -1;
	}
	for (i = 0; i < n; i++)
		st[i] = (uint8_t)stress_ksm_unmerge_ra_pm_state(ctx, pm[i]);
	return 0;
}

/*
 *  stress_ksm_unmerge_ra_present()
 *	states of pages first.. (up to n): how many leading pages hold their
 *	pattern bytes (present, and on the zero page only if the pattern is
 *	zero there); touching a hole another racer discarded would map the
 *	zero page (taken for a KSM zero page by the verification) or, for
 *	an O_DIRECT read, expose zeros until the transfer lands
 */
static size_t stress_ksm_unmerge_ra_present(const stress_ksm_unmerge_ctx_t *ctx, const size_t first,
	const size_t n, uint8_t *st)
{
	size_t j;

	if (stress_ksm_unmerge_ra_states(ctx, ctx->region + first * ctx->page_size, n, st) < 0)
		return n;	/* no PFNs: cannot tell, take them all */
	for (j = 0; j < n; j++) {
		if (st[j] == KSM_RA_PAGE_ABSENT)
			break;
		if (st[j] == KSM_RA_PAGE_KZERO &&
		    stress_ksm_unmerge_page_kind(ctx->pattern, first + j) != KSM_KIND_ZERO)
			break;
	}
	return j;
}

/*
 *  stress_ksm_unmerge_ra_is_zero()
 *	is the buffer all zero bytes
 */
static bool stress_ksm_unmerge_ra_is_zero(const uint8_t *buf, const size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i])
			return false;
	return true;
}

/*
 *  stress_ksm_unmerge_ra_pages_check()
 *	pure verifier: buf holds len bytes copied from region pages first..;
 *	returns the index (within buf) of the first page that is not the
 *	pattern, with its byte offset in *off, or -1 if all intact; whole
 *	zero pages pass only if tolerate_zero (another racer discarded them);
 *	scratch is one page used for a partial last page
 */
static ssize_t stress_ksm_unmerge_ra_pages_check(const stress_ksm_unmerge_ctx_t *ctx,
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
		if (tolerate_zero && stress_ksm_unmerge_ra_is_zero(page, plen)) {
			*off = -1;
			continue;
		}
		return (ssize_t)j;
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_ra_expected()
 *	expected byte at offset off of region page i
 */
static uint8_t stress_ksm_unmerge_ra_expected(const stress_ksm_unmerge_ctx_t *ctx,
	const size_t i, const ssize_t off, uint8_t *scratch)
{
	stress_ksm_unmerge_page_fill(ctx, i, scratch);
	return scratch[off];
}

/*
 *  stress_ksm_unmerge_ra_range()
 *	random range of 1..max pages inside the region: first page, count
 */
static size_t stress_ksm_unmerge_ra_range(const stress_ksm_unmerge_ctx_t *ctx, const size_t max,
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
 *  stress_ksm_unmerge_ra_running()
 *	racer thread loop condition: run until racers_stop, not until the
 *	end of the run: a cycle that is past its merge when the run ends
 *	still verifies, and its quiesce needs every thread to park
 */
static inline bool stress_ksm_unmerge_ra_running(const stress_ksm_unmerge_ctx_t *ctx)
{
	return !ctx->racers_stop;
}

/*
 *  stress_ksm_unmerge_ra_phase_active()
 *	racers act only while merged or being unmerged, never while merging,
 *	and start nothing new once the run is ending
 */
static inline bool stress_ksm_unmerge_ra_phase_active(const stress_ksm_unmerge_ctx_t *ctx)
{
	const int phase = ctx->phase;

	return !ctx->quiesce && (phase == KSM_PHASE_MERGED || phase == KSM_PHASE_UNMERGING) &&
		stress_continue(ctx->args);
}

/* ------------------------------------------------------------------ */
/* vmsplice: GUP references on KSM pages held in a pipe               */
/* ------------------------------------------------------------------ */

#if defined(HAVE_VMSPLICE) && defined(SPLICE_F_NONBLOCK)

typedef struct {
	int pipefd[2];			/* non-blocking pipe */
	uint8_t *buf;			/* drain buffer, KSM_RA_MAX_PAGES pages */
	uint8_t *scratch;		/* one page for partial-page checks */
} stress_ksm_unmerge_vmsplice_t;

/*
 *  stress_ksm_unmerge_vmsplice_hold()
 *	keep the pages in the pipe for up to 1 ms or until the phase moves
 *	on, so a drain often happens while the unmerge copies them
 */
static void stress_ksm_unmerge_vmsplice_hold(stress_ksm_unmerge_ctx_t *ctx)
{
	const int phase = ctx->phase;
	const uint32_t steps = stress_mwc32modn(20);
	uint32_t s;

	for (s = 0; s < steps && ctx->phase == phase && !ctx->quiesce; s++)
		(void)shim_nanosleep_uint64(50000);
}

/*
 *  stress_ksm_unmerge_vmsplice_drain()
 *	read len bytes back out of the pipe; 0 or -errno
 */
static int stress_ksm_unmerge_vmsplice_drain(stress_ksm_unmerge_vmsplice_t *v, const size_t len)
{
	size_t got = 0;
	int spins = 0;

	while (got < len) {
		const ssize_t n = read(v->pipefd[0], v->buf + got, len - got);

		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0)
			return -EPIPE;
		if ((errno != EAGAIN && errno != EINTR) || ++spins > 10000)
			return -errno;
		(void)shim_nanosleep_uint64(10000);
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_vmsplice_splice()
 *	vmsplice pages first..first+n-1 into the pipe; bytes or -1 (errno)
 */
static ssize_t stress_ksm_unmerge_vmsplice_splice(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_vmsplice_t *v, const size_t first, const size_t n)
{
	struct iovec iov[KSM_RA_MAX_PAGES];
	size_t j;

	for (j = 0; j < n; j++) {
		iov[j].iov_base = ctx->region + (first + j) * ctx->page_size;
		iov[j].iov_len = ctx->page_size;
	}
	return vmsplice(v->pipefd[1], iov, n, SPLICE_F_NONBLOCK);
}

/*
 *  stress_ksm_unmerge_vmsplice_one()
 *	one op: count KSM pages, vmsplice them, hold, drain, check every byte
 */
static void stress_ksm_unmerge_vmsplice_one(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_vmsplice_t *v)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	uint8_t st[KSM_RA_MAX_PAGES];
	bool was_ksm[KSM_RA_MAX_PAGES];
	size_t first, j, covered, n = stress_ksm_unmerge_ra_range(ctx, KSM_RA_MAX_PAGES, &first);
	ssize_t ret, bad, off;
	int err;

	n = stress_ksm_unmerge_ra_present(ctx, first, n, st);
	if (!n)
		return;
	for (j = 0; j < n; j++)
		was_ksm[j] = stress_ksm_unmerge_page_is_ksm(ctx, first + j);
	ret = stress_ksm_unmerge_vmsplice_splice(ctx, v, first, n);
	if (ret <= 0) {
		/* EFAULT: another racer made the range PROT_NONE */
		if (ret == 0 || errno == EAGAIN || errno == EINTR ||
		    (errno == EFAULT && stress_ksm_unmerge_ra_others(ctx)))
			return;
		pr_fail("%s: vmsplice racer: vmsplice of pages %zu..%zu failed, errno=%d (%s)\n",
			ctx->args->name, first, first + n - 1, errno, strerror(errno));
		rs->failures++;
		return;
	}
	stress_ksm_unmerge_vmsplice_hold(ctx);
	err = stress_ksm_unmerge_vmsplice_drain(v, (size_t)ret);
	if (err < 0) {
		pr_fail("%s: vmsplice racer: draining %zd bytes from the pipe failed, errno=%d (%s)\n",
			ctx->args->name, ret, -err, strerror(-err));
		rs->failures++;
		return;
	}
	bad = stress_ksm_unmerge_ra_pages_check(ctx, first, v->buf, (size_t)ret,
		stress_ksm_unmerge_ra_others(ctx), v->scratch, &off);
	if (bad >= 0) {
		pr_fail("%s: vmsplice racer: page %zu read back from the pipe: byte %zd is 0x%02x, "
			"expected 0x%02x (was KSM when spliced: %s)\n", ctx->args->name,
			first + (size_t)bad, off, v->buf[(size_t)bad * ctx->page_size + (size_t)off],
			stress_ksm_unmerge_ra_expected(ctx, first + (size_t)bad, off, v->scratch),
			was_ksm[bad] ? "yes" : "no");
		rs->failures++;
	}
	covered = ((size_t)ret + ctx->page_size - 1) / ctx->page_size;
	for (j = 0; j < covered && j < n; j++)
		rs->evidence += was_ksm[j];
	rs->aux += covered;
	rs->ops++;
}

/*
 *  stress_ksm_unmerge_vmsplice_thread()
 *	racer: vmsplice merged pages into a pipe and read them back, while
 *	merged and while being unmerged; the pipe is empty whenever it parks
 */
static void *stress_ksm_unmerge_vmsplice_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_VMSPLICE;
	stress_ksm_unmerge_vmsplice_t *v = (stress_ksm_unmerge_vmsplice_t *)ctx->run[idx].priv;

	while (stress_ksm_unmerge_ra_running(ctx)) {
		if (ctx->quiesce) {
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (stress_ksm_unmerge_ra_phase_active(ctx)) {
			stress_ksm_unmerge_vmsplice_one(ctx, idx, v);
			continue;
		}
		(void)shim_nanosleep_uint64(100000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_vmsplice_supported()
 *	vmsplice needs pipes and the syscall
 */
static int stress_ksm_unmerge_vmsplice_supported(char *reason, const size_t len)
{
	int fds[2];
	char c = 0;
	struct iovec iov = { &c, 1 };

	if (pipe(fds) < 0) {
		(void)snprintf(reason, len, "pipe failed, errno=%d (%s)", errno, strerror(errno));
		return -1;
	}
	if (vmsplice(fds[1], &iov, 1, SPLICE_F_NONBLOCK) < 0) {
		(void)snprintf(reason, len, "vmsplice failed, errno=%d (%s)", errno, strerror(errno));
		(void)close(fds[0]);
		(void)close(fds[1]);
		return -1;
	}
	(void)close(fds[0]);
	(void)close(fds[1]);
	return 0;
}

/*
 *  stress_ksm_unmerge_vmsplice_free()
 *	close the pipe, free the buffers
 */
static void stress_ksm_unmerge_vmsplice_free(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_vmsplice_t *v = (stress_ksm_unmerge_vmsplice_t *)ctx->run[idx].priv;

	if (!v)
		return;
	if (v->pipefd[0] >= 0)
		(void)close(v->pipefd[0]);
	if (v->pipefd[1] >= 0)
		(void)close(v->pipefd[1]);
	free(v->buf);
	free(v->scratch);
	free(v);
	ctx->run[idx].priv = NULL;
}

/*
 *  stress_ksm_unmerge_vmsplice_start()
 *	pipe, drain buffer and thread
 */
static int stress_ksm_unmerge_vmsplice_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_vmsplice_t *v = calloc(1, sizeof(*v));

	if (!v) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "out of memory for the racer state");
		return -1;
	}
	v->pipefd[0] = v->pipefd[1] = -1;
	ctx->run[idx].priv = v;
	v->buf = malloc(KSM_RA_MAX_PAGES * ctx->page_size);
	v->scratch = malloc(ctx->page_size);
	if (!v->buf || !v->scratch) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "out of memory for the drain buffer");
		stress_ksm_unmerge_vmsplice_free(ctx, idx);
		return -1;
	}
	if (pipe2(v->pipefd, O_CLOEXEC | O_NONBLOCK) < 0) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "pipe2 failed, errno=%d (%s)", errno, strerror(errno));
		v->pipefd[0] = v->pipefd[1] = -1;
		stress_ksm_unmerge_vmsplice_free(ctx, idx);
		return -1;
	}
	/* a page in the pipe blocks its merge (and others against it) */
	ctx->racers_disturb_counts = true;
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_vmsplice_thread) < 0) {
		stress_ksm_unmerge_vmsplice_free(ctx, idx);
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_vmsplice_stop()
 *	join the thread (the pipe is drained by then), close the pipe
 */
static void stress_ksm_unmerge_vmsplice_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	stress_ksm_unmerge_vmsplice_free(ctx, idx);
}

#define KSM_RACER_VMSPLICE { "vmsplice", "GUP refs from vmsplice on KSM pages", \
	"ksm-pages-spliced", stress_ksm_unmerge_vmsplice_supported, \
	stress_ksm_unmerge_vmsplice_start, stress_ksm_unmerge_vmsplice_stop, NULL, NULL }

#endif

/* ------------------------------------------------------------------ */
/* gup: O_DIRECT read-only and write pins of KSM pages                */
/* ------------------------------------------------------------------ */

#if defined(O_DIRECT)

#define KSM_GUP_SLOT_OUT	(0)	/* file slot written from the region */
#define KSM_GUP_SLOT_IN		(1)	/* file slot read into the region */

typedef struct {
	int fd;				/* O_DIRECT temp file, already unlinked */
	int vmstat_fd;			/* own /proc/vmstat fd (thread-safe reads) */
	uint8_t *buf;			/* page aligned bounce buffer */
	uint8_t *scratch;		/* one page for partial-page checks */
	char dir[PATH_MAX];		/* where the file lives */
	uint64_t ro_unshared;		/* KSM pages unshared by read-only pins */
	uint64_t cow_short;		/* cow_ksm deltas short of the count */
} stress_ksm_unmerge_gup_t;

/*
 *  stress_ksm_unmerge_gup_cow_ksm()
 *	global cow_ksm from this racer's own vmstat fd, -1 if unknown
 */
static int64_t stress_ksm_unmerge_gup_cow_ksm(const int fd)
{
	char buf[16384];

	if (stress_ksm_unmerge_fd_read(fd, buf, sizeof(buf)) <= 0)
		return -1;
	return stress_ksm_unmerge_field(buf, "cow_ksm");
}

/*
 *  stress_ksm_unmerge_gup_broken()
 *	pure: pages that were KSM pages (or KSM zero pages) before a write
 *	pin and are present, non-KSM pages after it; KSM folios in *folios
 */
static uint64_t stress_ksm_unmerge_gup_broken(const uint8_t *before, const uint8_t *after,
	const size_t n, uint64_t *folios)
{
	uint64_t broken = 0;
	size_t j;

	*folios = 0;
	for (j = 0; j < n; j++) {
		if ((before[j] != KSM_RA_PAGE_KSM && before[j] != KSM_RA_PAGE_KZERO) ||
		    after[j] != KSM_RA_PAGE_ANON)
			continue;
		broken++;
		*folios += (before[j] == KSM_RA_PAGE_KSM);
	}
	return broken;
}

/*
 *  stress_ksm_unmerge_gup_cow_check()
 *	pure: a cow_ksm delta must cover every KSM folio a write pin broke
 *	(zero pages are not counted by the kernel); -1 if it does not
 */
static int stress_ksm_unmerge_gup_cow_check(const int64_t cow_delta, const uint64_t folios)
{
	if (cow_delta < 0)
		return 0;	/* counter unavailable */
	return ((uint64_t)cow_delta >= folios) ? 0 : -1;
}

/*
 *  stress_ksm_unmerge_gup_try_dir()
 *	create an unlinked O_DIRECT file in dir and prove a 4K aligned
 *	write works there; fd or -errno
 */
static int stress_ksm_unmerge_gup_try_dir(const char *dir, uint8_t *buf, const size_t ps)
{
	char path[PATH_MAX];
	int fd, err;

	(void)snprintf(path, sizeof(path), "%s/stress-ksm-unmerge-gup-%d-%d.tmp",
		dir, (int)getpid(), shim_gettid());
	fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	(void)shim_unlink(path);
	(void)memset(buf, 0x5a, ps);
	if (pwrite(fd, buf, ps, 0) != (ssize_t)ps) {
		err = errno ? errno : EIO;
		(void)close(fd);
		return -err;
	}
	return fd;
}

/*
 *  stress_ksm_unmerge_gup_file()
 *	pick --temp-path, /var/tmp or /tmp: the first where O_DIRECT works
 */
static int stress_ksm_unmerge_gup_file(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_gup_t *g)
{
	const char *dirs[] = { stress_fs_temp_path_get(), "/var/tmp", "/tmp" };
	char tried[64] = "";
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(dirs); i++) {
		int fd;

		if (!dirs[i])
			continue;
		fd = stress_ksm_unmerge_gup_try_dir(dirs[i], g->buf, ctx->page_size);
		if (fd >= 0) {
			g->fd = fd;
			(void)strlcpy(g->dir, dirs[i], sizeof(g->dir));
			return 0;
		}
		if (!tried[0])
			(void)snprintf(tried, sizeof(tried), "%s: errno=%d (%s)", dirs[i], -fd, strerror(-fd));
	}
	stress_ksm_unmerge_ra_reason(ctx, idx, "no temp dir supports O_DIRECT (%s)", tried);
	return -1;
}

/*
 *  stress_ksm_unmerge_gup_io_ok()
 *	did an O_DIRECT transfer move all len bytes; a failure is counted
 *	unless another racer explains it (EFAULT on a PROT_NONE range)
 */
static bool stress_ksm_unmerge_gup_io_ok(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const char *what, const ssize_t ret, const size_t len)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);

	if (ret == (ssize_t)len)
		return true;
	if (ret < 0 && (errno == EINTR || (errno == EFAULT && stress_ksm_unmerge_ra_others(ctx))))
		return false;
	pr_fail("%s: gup racer: O_DIRECT %s of %zu bytes returned %zd, errno=%d (%s)\n",
		ctx->args->name, what, len, ret, ret < 0 ? errno : 0, ret < 0 ? strerror(errno) : "short");
	rs->failures++;
	return false;
}

/*
 *  stress_ksm_unmerge_gup_report_bad()
 *	report a page whose bytes are not the pattern
 */
static void stress_ksm_unmerge_gup_report_bad(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_gup_t *g, const char *where, const size_t page, const uint8_t *p,
	const ssize_t off)
{
	pr_fail("%s: gup racer: %s page %zu byte %zd is 0x%02x, expected 0x%02x\n",
		ctx->args->name, where, page, off, p[off],
		stress_ksm_unmerge_ra_expected(ctx, page, off, g->scratch));
	stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
}

/*
 *  stress_ksm_unmerge_gup_out()
 *	O_DIRECT write from merged pages (read-only pins), read the file
 *	back and check it holds the pattern
 */
static void stress_ksm_unmerge_gup_out(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_gup_t *g)
{
	const size_t ps = ctx->page_size;
	const off_t slot = (off_t)(KSM_GUP_SLOT_OUT * KSM_RA_MAX_PAGES * ps);
	uint8_t before[KSM_RA_MAX_PAGES], after[KSM_RA_MAX_PAGES];
	uint64_t folios;
	size_t first, n = stress_ksm_unmerge_ra_range(ctx, KSM_RA_MAX_PAGES, &first);
	ssize_t bad, off;

	n = stress_ksm_unmerge_ra_present(ctx, first, n, before);
	if (!n)
		return;
	if (!stress_ksm_unmerge_gup_io_ok(ctx, idx, "write from the region",
			pwrite(g->fd, ctx->region + first * ps, n * ps, slot), n * ps))
		return;
	(void)stress_ksm_unmerge_ra_states(ctx, ctx->region + first * ps, n, after);
	g->ro_unshared += stress_ksm_unmerge_gup_broken(before, after, n, &folios);
	if (!stress_ksm_unmerge_gup_io_ok(ctx, idx, "read back of the file",
			pread(g->fd, g->buf, n * ps, slot), n * ps))
		return;
	bad = stress_ksm_unmerge_ra_pages_check(ctx, first, g->buf, n * ps,
		stress_ksm_unmerge_ra_others(ctx), g->scratch, &off);
	if (bad >= 0)
		stress_ksm_unmerge_gup_report_bad(ctx, idx, g, "file written from region",
			first + (size_t)bad, g->buf + (size_t)bad * ps, off);
	stress_ksm_unmerge_racer_stats(ctx, idx)->ops++;
}

/*
 *  stress_ksm_unmerge_gup_in_prepare()
 *	write the pattern bytes of pages first.. into the file's in-slot
 */
static bool stress_ksm_unmerge_gup_in_prepare(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_gup_t *g, const size_t first, const size_t n, const off_t slot)
{
	size_t j;

	for (j = 0; j < n; j++)
		stress_ksm_unmerge_page_fill(ctx, first + j, g->buf + j * ctx->page_size);
	return stress_ksm_unmerge_gup_io_ok(ctx, idx, "write of the pattern file",
		pwrite(g->fd, g->buf, n * ctx->page_size, slot), n * ctx->page_size);
}

/*
 *  stress_ksm_unmerge_gup_in()
 *	O_DIRECT read of the pattern into merged pages (write pins): the
 *	KSM pages must be COW-broken, cow_ksm must count them, data intact
 */
static void stress_ksm_unmerge_gup_in(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_gup_t *g)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const size_t ps = ctx->page_size;
	const off_t slot = (off_t)(KSM_GUP_SLOT_IN * KSM_RA_MAX_PAGES * ps);
	uint8_t before[KSM_RA_MAX_PAGES], after[KSM_RA_MAX_PAGES];
	uint64_t broken, folios;
	int64_t cow0, cow1;
	size_t first, j, n = stress_ksm_unmerge_ra_range(ctx, KSM_RA_MAX_PAGES, &first);
	ssize_t off;

	if (!stress_ksm_unmerge_gup_in_prepare(ctx, idx, g, first, n, slot))
		return;
	n = stress_ksm_unmerge_ra_present(ctx, first, n, before);
	if (!n)
		return;
	cow0 = stress_ksm_unmerge_gup_cow_ksm(g->vmstat_fd);
	if (!stress_ksm_unmerge_gup_io_ok(ctx, idx, "read into the region",
			pread(g->fd, ctx->region + first * ps, n * ps, slot), n * ps))
		return;
	cow1 = stress_ksm_unmerge_gup_cow_ksm(g->vmstat_fd);
	(void)stress_ksm_unmerge_ra_states(ctx, ctx->region + first * ps, n, after);
	broken = stress_ksm_unmerge_gup_broken(before, after, n, &folios);
	rs->evidence += broken;
	if (stress_ksm_unmerge_gup_cow_check((cow0 >= 0 && cow1 >= 0) ? cow1 - cow0 : -1, folios) < 0) {
		g->cow_short++;
		if (!stress_ksm_unmerge_ra_others(ctx)) {
			pr_fail("%s: gup racer: O_DIRECT read broke %" PRIu64 " KSM pages (%zu..%zu) "
				"but cow_ksm grew by only %" PRId64 "\n", ctx->args->name,
				folios, first, first + n - 1, cow1 - cow0);
			rs->failures++;
		}
	}
	for (j = 0; j < n; j++) {
		const uint8_t *p = ctx->region + (first + j) * ps;

		off = stress_ksm_unmerge_page_check(ctx, first + j, p);
		if (off >= 0 && !(stress_ksm_unmerge_ra_others(ctx) && stress_ksm_unmerge_ra_is_zero(p, ps))) {
			stress_ksm_unmerge_gup_report_bad(ctx, idx, g, "region after O_DIRECT read into",
				first + j, p, off);
			break;
		}
	}
	rs->ops++;
}

/*
 *  stress_ksm_unmerge_gup_thread()
 *	racer: O_DIRECT writes from and reads into merged pages while merged
 *	and while being unmerged; every transfer completes before it parks
 */
static void *stress_ksm_unmerge_gup_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_GUP;
	stress_ksm_unmerge_gup_t *g = (stress_ksm_unmerge_gup_t *)ctx->run[idx].priv;
	uint32_t n = 0;

	while (stress_ksm_unmerge_ra_running(ctx)) {
		if (ctx->quiesce) {
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (stress_ksm_unmerge_ra_phase_active(ctx)) {
			/* write pins (the evidence) twice as often as read-only pins */
			if ((n++ % 3) == 2)
				stress_ksm_unmerge_gup_out(ctx, idx, g);
			else
				stress_ksm_unmerge_gup_in(ctx, idx, g);
			continue;
		}
		(void)shim_nanosleep_uint64(100000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_gup_supported()
 *	O_DIRECT exists; the temp dir is probed in start()
 */
static int stress_ksm_unmerge_gup_supported(char *reason, const size_t len)
{
	(void)reason;
	(void)len;
	return 0;
}

/*
 *  stress_ksm_unmerge_gup_free()
 *	close the file and counters, free the buffers
 */
static void stress_ksm_unmerge_gup_free(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_gup_t *g = (stress_ksm_unmerge_gup_t *)ctx->run[idx].priv;

	if (!g)
		return;
	if (g->fd >= 0)
		(void)close(g->fd);
	if (g->vmstat_fd >= 0)
		(void)close(g->vmstat_fd);
	if (g->buf)
		(void)munmap(g->buf, KSM_RA_MAX_PAGES * ctx->page_size);
	free(g->scratch);
	free(g);
	ctx->run[idx].priv = NULL;
}

/*
 *  stress_ksm_unmerge_gup_start()
 *	bounce buffer, unlinked O_DIRECT file, thread
 */
static int stress_ksm_unmerge_gup_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_gup_t *g = calloc(1, sizeof(*g));

	if (!g) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "out of memory for the racer state");
		return -1;
	}
	g->fd = g->vmstat_fd = -1;
	ctx->run[idx].priv = g;
	g->buf = mmap(NULL, KSM_RA_MAX_PAGES * ctx->page_size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	g->scratch = malloc(ctx->page_size);
	if (g->buf == MAP_FAILED || !g->scratch) {
		if (g->buf == MAP_FAILED)
			g->buf = NULL;
		stress_ksm_unmerge_ra_reason(ctx, idx, "cannot allocate the bounce buffer, errno=%d (%s)",
			errno, strerror(errno));
		stress_ksm_unmerge_gup_free(ctx, idx);
		return -1;
	}
	if (stress_ksm_unmerge_gup_file(ctx, idx, g) < 0) {
		stress_ksm_unmerge_gup_free(ctx, idx);
		return -1;
	}
	g->vmstat_fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
	/* pins break merges and the reads write pages */
	ctx->racers_disturb_counts = true;
	ctx->racers_disturb_layout = true;
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_gup_thread) < 0) {
		stress_ksm_unmerge_gup_free(ctx, idx);
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_gup_stop()
 *	join the thread, close the (already unlinked) file
 */
static void stress_ksm_unmerge_gup_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_gup_t *g = (stress_ksm_unmerge_gup_t *)ctx->run[idx].priv;

	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	if (g) {
		pr_dbg("%s: gup racer: O_DIRECT file in %s; %" PRIu64 " KSM pages unshared by "
			"read-only pins, %" PRIu64 " cow_ksm deltas short\n", ctx->args->name,
			g->dir, g->ro_unshared, g->cow_short);
		stress_ksm_unmerge_racer_stats(ctx, idx)->aux += g->ro_unshared;
	}
	stress_ksm_unmerge_gup_free(ctx, idx);
}

#define KSM_RACER_GUP { "gup", "O_DIRECT GUP-fast pins of KSM pages", \
	"ksm-pages-pinned", stress_ksm_unmerge_gup_supported, \
	stress_ksm_unmerge_gup_start, stress_ksm_unmerge_gup_stop, NULL, NULL }

#endif

/* ------------------------------------------------------------------ */
/* uffd-wp: unshare of write-protected KSM pages, unmerge watchdog    */
/* ------------------------------------------------------------------ */

#if defined(HAVE_LINUX_USERFAULTFD_H) &&	\
    defined(UFFDIO_WRITEPROTECT) &&		\
    defined(UFFD_FEATURE_PAGEFAULT_FLAG_WP) &&	\
    defined(UFFDIO_REGISTER_MODE_WP)

#if !defined(UFFD_USER_MODE_ONLY)
#define UFFD_USER_MODE_ONLY		(1)
#endif
#if !defined(UFFD_FEATURE_THREAD_ID)
#define UFFD_FEATURE_THREAD_ID		(1 << 8)
#endif

#define KSM_UFFD_HANG_SECS		(10.0)	/* an unmerge longer than this hangs */
#define KSM_UFFD_MAX_RANGE		(64)	/* pages per WRITEPROTECT toggle */

typedef struct {
	int uffd;
	bool thread_id;			/* faults carry the faulting tid */
	pid_t main_tid;			/* the instance thread that unmerges */
	uint8_t *snap;			/* per page: KSM + uffd-wp at unmerge start */
	volatile uint32_t *touched;	/* per page: cycle it was unprotected in */
	uint64_t *pm;			/* pagemap scratch (main thread hooks) */
	bool snap_valid;		/* snap taken this cycle */
	pthread_t watchdog;
	bool watchdog_running;
	uint64_t faults;		/* WP faults resolved */
	uint64_t lost;			/* WP bits lost, tolerated with other racers */
} stress_ksm_unmerge_uffd_t;

/*
 *  stress_ksm_unmerge_uffd_open()
 *	userfaultfd with the WP feature (USER_MODE_ONLY on EPERM); fd or -1
 */
static int stress_ksm_unmerge_uffd_open(char *reason, const size_t len, bool *thread_id)
{
	static const uint64_t features[] = {
		UFFD_FEATURE_PAGEFAULT_FLAG_WP | UFFD_FEATURE_THREAD_ID,
		UFFD_FEATURE_PAGEFAULT_FLAG_WP,
	};
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(features); i++) {
		struct uffdio_api api;
		int fd = shim_userfaultfd(O_CLOEXEC | O_NONBLOCK);

		if (fd < 0 && errno == EPERM)
			fd = shim_userfaultfd(O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
		if (fd < 0) {
			(void)snprintf(reason, len, "userfaultfd denied or missing, errno=%d (%s)",
				errno, strerror(errno));
			return -1;
		}
		(void)memset(&api, 0, sizeof(api));
		api.api = UFFD_API;
		api.features = features[i];
		if (ioctl(fd, UFFDIO_API, &api) == 0 &&
		    (api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP)) {
			*thread_id = !!(features[i] & UFFD_FEATURE_THREAD_ID);
			return fd;
		}
		(void)snprintf(reason, len, "UFFDIO_API without UFFD_FEATURE_PAGEFAULT_FLAG_WP, "
			"errno=%d (%s)", errno, strerror(errno));
		(void)close(fd);
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_uffd_wp()
 *	write-protect (on) or unprotect and wake (off) pages first..first+n-1
 */
static int stress_ksm_unmerge_uffd_wp(stress_ksm_unmerge_ctx_t *ctx, const int uffd,
	const size_t first, const size_t n, const bool on)
{
	struct uffdio_writeprotect wp;

	wp.range.start = (uintptr_t)(ctx->region + first * ctx->page_size);
	wp.range.len = n * ctx->page_size;
	wp.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0;
	return ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
}

/*
 *  stress_ksm_unmerge_uffd_msg_check()
 *	pure: is a uffd message one we may see (a WP page fault inside
 *	[start, start+len)); 0 if so, -1 with a description otherwise
 */
static int stress_ksm_unmerge_uffd_msg_check(const struct uffd_msg *msg, const uintptr_t start,
	const size_t len, char *why, const size_t why_len)
{
	if (msg->event != UFFD_EVENT_PAGEFAULT) {
		(void)snprintf(why, why_len, "unexpected uffd event 0x%x", (unsigned int)msg->event);
		return -1;
	}
	if (!(msg->arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP)) {
		(void)snprintf(why, why_len, "missing-page fault (flags 0x%llx) at 0x%llx, expected WP only",
			(unsigned long long)msg->arg.pagefault.flags,
			(unsigned long long)msg->arg.pagefault.address);
		return -1;
	}
	if (msg->arg.pagefault.address < start || msg->arg.pagefault.address >= start + len) {
		(void)snprintf(why, why_len, "WP fault at 0x%llx outside the region",
			(unsigned long long)msg->arg.pagefault.address);
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_uffd_fault()
 *	resolve one WP fault: mark the page touched, unprotect and wake
 */
static void stress_ksm_unmerge_uffd_fault(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u, const struct uffd_msg *msg)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const size_t i = (size_t)((msg->arg.pagefault.address - (uintptr_t)ctx->region) / ctx->page_size);

	if (u->thread_id && (pid_t)msg->arg.pagefault.feat.ptid == u->main_tid &&
	    ctx->phase == KSM_PHASE_UNMERGING) {
		pr_fail("%s: uffd-wp racer: the unmerge itself raised a WP fault at page %zu "
			"(break_ksm must unshare, not write)\n", ctx->args->name, i);
		rs->failures++;
	}
	u->touched[i] = (uint32_t)ctx->cycle;
	if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, i, 1, false) < 0 && errno != ENOENT) {
		pr_fail("%s: uffd-wp racer: UFFDIO_WRITEPROTECT off at faulting page %zu failed, "
			"errno=%d (%s)\n", ctx->args->name, i, errno, strerror(errno));
		rs->failures++;
	}
	u->faults++;
}

/*
 *  stress_ksm_unmerge_uffd_events()
 *	read and handle every pending uffd message, waiting up to ms
 */
static void stress_ksm_unmerge_uffd_events(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u, const int ms)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	struct pollfd pfd = { u->uffd, POLLIN, 0 };
	struct uffd_msg msg;
	char why[128];

	if (poll(&pfd, 1, ms) <= 0)
		return;
	while (read(u->uffd, &msg, sizeof(msg)) == (ssize_t)sizeof(msg)) {
		if (stress_ksm_unmerge_uffd_msg_check(&msg, (uintptr_t)ctx->region,
				ctx->region_size, why, sizeof(why)) < 0) {
			pr_fail("%s: uffd-wp racer: %s\n", ctx->args->name, why);
			rs->failures++;
			continue;
		}
		stress_ksm_unmerge_uffd_fault(ctx, idx, u, &msg);
	}
}

/*
 *  stress_ksm_unmerge_uffd_toggle()
 *	one op: protect a random range; while unmerging also unprotect
 *	(marked touched first so the WP-survival check leaves it out)
 */
static void stress_ksm_unmerge_uffd_toggle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	size_t first, j;
	const size_t n = stress_ksm_unmerge_ra_range(ctx, KSM_UFFD_MAX_RANGE, &first);
	const bool on = (ctx->phase != KSM_PHASE_UNMERGING) || stress_mwc32modn(2);

	if (!on) {
		for (j = 0; j < n; j++)
			u->touched[first + j] = (uint32_t)ctx->cycle;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, first, n, on) < 0 && errno != ENOENT &&
	    errno != EAGAIN) {
		pr_fail("%s: uffd-wp racer: UFFDIO_WRITEPROTECT %s pages %zu..%zu failed, errno=%d (%s)\n",
			ctx->args->name, on ? "on" : "off", first, first + n - 1, errno, strerror(errno));
		rs->failures++;
		return;
	}
	rs->ops++;
}

/*
 *  stress_ksm_unmerge_uffd_release()
 *	unprotect (and wake) the whole region
 */
static void stress_ksm_unmerge_uffd_release(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u)
{
	if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, 0, ctx->npages, false) < 0 &&
	    errno != ENOENT && errno != EAGAIN) {
		pr_fail("%s: uffd-wp racer: UFFDIO_WRITEPROTECT off for the region failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
	}
}

/*
 *  stress_ksm_unmerge_uffd_thread()
 *	racer: toggle uffd-wp on the merged region and resolve WP faults;
 *	the region is fully unprotected whenever it parks or exits
 */
static void *stress_ksm_unmerge_uffd_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_UFFD_WP;
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)ctx->run[idx].priv;

	while (stress_ksm_unmerge_ra_running(ctx)) {
		stress_ksm_unmerge_uffd_events(ctx, idx, u, 0);
		if (ctx->quiesce) {
			stress_ksm_unmerge_uffd_release(ctx, idx, u);
			stress_ksm_unmerge_uffd_events(ctx, idx, u, 0);
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (stress_ksm_unmerge_ra_phase_active(ctx)) {
			stress_ksm_unmerge_uffd_toggle(ctx, idx, u);
			(void)shim_nanosleep_uint64(20000);
			continue;
		}
		stress_ksm_unmerge_uffd_events(ctx, idx, u, 1);
	}
	/* other racers may sit in a WP fault: unprotect wakes them */
	stress_ksm_unmerge_uffd_release(ctx, idx, u);
	stress_ksm_unmerge_uffd_events(ctx, idx, u, 0);
	return NULL;
}

/*
 *  stress_ksm_unmerge_uffd_hang_report()
 *	report an unmerge that is taking too long, with its kernel stack
 */
static void stress_ksm_unmerge_uffd_hang_report(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_uffd_t *u, const double secs)
{
	char path[64], stack[2048];
	ssize_t n;

	(void)snprintf(path, sizeof(path), "/proc/self/task/%d/stack", (int)u->main_tid);
	n = stress_fs_file_read(path, stack, sizeof(stack) - 1);
	if (n < 0)
		(void)snprintf(stack, sizeof(stack), "(%s not readable, errno=%d)\n", path, errno);
	else
		stack[n] = '\0';
	pr_fail("%s: uffd-wp racer: unmerge of cycle %" PRIu64 " still running after %.1f s "
		"(hang, bound %.0f s); kernel stack of tid %d:\n%s", ctx->args->name, ctx->cycle,
		secs, KSM_UFFD_HANG_SECS, (int)u->main_tid, stack);
	stress_ksm_unmerge_racer_stats(ctx, KSM_RACER_IDX_UFFD_WP)->failures++;
}

/*
 *  stress_ksm_unmerge_uffd_watchdog()
 *	thread: an unmerge phase that lasts longer than the bound is a hang
 */
static void *stress_ksm_unmerge_uffd_watchdog(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)ctx->run[KSM_RACER_IDX_UFFD_WP].priv;
	uint64_t seen = 0, reported = 0;
	double t0 = 0.0;

	while (stress_ksm_unmerge_ra_running(ctx)) {
		if (ctx->phase == KSM_PHASE_UNMERGING) {
			const uint64_t cycle = ctx->cycle;
			const double now = stress_time_now();

			if (cycle != seen) {
				seen = cycle;
				t0 = now;
			} else if (reported != cycle && now - t0 > KSM_UFFD_HANG_SECS) {
				reported = cycle;
				stress_ksm_unmerge_uffd_hang_report(ctx, u, now - t0);
			}
		}
		(void)shim_nanosleep_uint64(10000000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_uffd_snap_build()
 *	pure: from pagemap entries and page states, mark pages that are KSM
 *	and uffd-wp protected; returns how many
 */
static uint64_t stress_ksm_unmerge_uffd_snap_build(const uint64_t *pm, const uint8_t *state,
	const size_t npages, uint8_t *snap)
{
	uint64_t count = 0;
	size_t i;

	for (i = 0; i < npages; i++) {
		snap[i] = (pm[i] & PM_UFFD_WP) &&
			(state[i] == KSM_RA_PAGE_KSM || state[i] == KSM_RA_PAGE_KZERO);
		count += snap[i];
	}
	return count;
}

/*
 *  stress_ksm_unmerge_uffd_wp_check()
 *	pure: pages protected + KSM at unmerge start and not unprotected in
 *	this cycle must still carry PM_UFFD_WP; kept/lost counted, first
 *	lost page in *first_lost (npages if none)
 */
static void stress_ksm_unmerge_uffd_wp_check(const uint8_t *snap, const volatile uint32_t *touched,
	const uint32_t cycle, const uint64_t *pm, const size_t npages,
	uint64_t *kept, uint64_t *lost, size_t *first_lost)
{
	size_t i;

	*kept = 0;
	*lost = 0;
	*first_lost = npages;
	for (i = 0; i < npages; i++) {
		if (!snap[i] || touched[i] == cycle)
			continue;
		if (pm[i] & PM_UFFD_WP) {
			(*kept)++;
			continue;
		}
		if (!*lost)
			*first_lost = i;
		(*lost)++;
	}
}

/*
 *  stress_ksm_unmerge_uffd_snapshot()
 *	UNMERGING hook: record pages that are KSM and uffd-wp protected
 */
static void stress_ksm_unmerge_uffd_snapshot(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_uffd_t *u)
{
	size_t i;

	u->snap_valid = false;
	if (!ctx->have_pfns ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region, ctx->npages,
			ctx->page_size, u->pm) < 0)
		return;
	/* reuse snap as the page-state array, then overwrite it with the result */
	for (i = 0; i < ctx->npages; i++)
		u->snap[i] = (u->pm[i] & PM_UFFD_WP) ?
			(uint8_t)stress_ksm_unmerge_ra_pm_state(ctx, u->pm[i]) : KSM_RA_PAGE_ABSENT;
	(void)stress_ksm_unmerge_uffd_snap_build(u->pm, u->snap, ctx->npages, u->snap);
	u->snap_valid = true;
}

/*
 *  stress_ksm_unmerge_uffd_after()
 *	VERIFY hook: the WP bits recorded at unmerge start survived unsharing
 */
static void stress_ksm_unmerge_uffd_after(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	uint64_t kept, lost;
	size_t first_lost;

	if (!u->snap_valid ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region, ctx->npages,
			ctx->page_size, u->pm) < 0)
		return;
	u->snap_valid = false;
	stress_ksm_unmerge_uffd_wp_check(u->snap, u->touched, (uint32_t)ctx->cycle, u->pm,
		ctx->npages, &kept, &lost, &first_lost);
	rs->evidence += kept;
	if (!lost)
		return;
	u->lost += lost;
	if (stress_ksm_unmerge_ra_others(ctx))
		return;		/* another racer may have discarded them */
	pr_fail("%s: uffd-wp racer: %" PRIu64 " KSM pages lost their uffd-wp bit across the "
		"unmerge (first: page %zu, pagemap %#" PRIx64 ")\n", ctx->args->name, lost,
		first_lost, u->pm[first_lost]);
	rs->failures++;
}

/*
 *  stress_ksm_unmerge_uffd_protect_half()
 *	MERGED hook: write-protect a random half of the merged region at once
 */
static void stress_ksm_unmerge_uffd_protect_half(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u)
{
	const size_t n = (ctx->npages + 1) / 2;
	const size_t first = stress_mwc32modn((uint32_t)(ctx->npages - n + 1));

	if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, first, n, true) < 0 && errno != ENOENT) {
		pr_fail("%s: uffd-wp racer: UFFDIO_WRITEPROTECT on pages %zu..%zu failed, errno=%d (%s)\n",
			ctx->args->name, first, first + n - 1, errno, strerror(errno));
		stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
		return;
	}
	stress_ksm_unmerge_racer_stats(ctx, idx)->ops++;
}

/*
 *  stress_ksm_unmerge_uffd_cycle()
 *	hooks: protect half once merged, snapshot at unmerge start,
 *	WP-survival check right after it
 */
static void stress_ksm_unmerge_uffd_cycle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const int phase)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)ctx->run[idx].priv;

	if (!u)
		return;
	if (phase == KSM_PHASE_MERGED)
		stress_ksm_unmerge_uffd_protect_half(ctx, idx, u);
	else if (phase == KSM_PHASE_UNMERGING)
		stress_ksm_unmerge_uffd_snapshot(ctx, u);
	else if (phase == KSM_PHASE_VERIFY)
		stress_ksm_unmerge_uffd_after(ctx, idx, u);
}

/*
 *  stress_ksm_unmerge_uffd_supported()
 *	userfaultfd allowed and UFFD_FEATURE_PAGEFAULT_FLAG_WP present
 */
static int stress_ksm_unmerge_uffd_supported(char *reason, const size_t len)
{
	bool thread_id;
	const int fd = stress_ksm_unmerge_uffd_open(reason, len, &thread_id);

	if (fd < 0)
		return -1;
	(void)close(fd);
	return 0;
}

/*
 *  stress_ksm_unmerge_uffd_free()
 *	unregister, close and free
 */
static void stress_ksm_unmerge_uffd_free(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)ctx->run[idx].priv;

	if (!u)
		return;
	if (u->uffd >= 0) {
		struct uffdio_range range = { (uintptr_t)ctx->region, ctx->region_size };

		if (ioctl(u->uffd, UFFDIO_UNREGISTER, &range) < 0)
			pr_dbg("%s: uffd-wp racer: UFFDIO_UNREGISTER failed, errno=%d (%s)\n",
				ctx->args->name, errno, strerror(errno));
		(void)close(u->uffd);
	}
	free(u->snap);
	free((void *)u->touched);
	free(u->pm);
	free(u);
	ctx->run[idx].priv = NULL;
}

/*
 *  stress_ksm_unmerge_uffd_register()
 *	register the region in WP mode; WRITEPROTECT must be offered
 */
static int stress_ksm_unmerge_uffd_register(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u)
{
	struct uffdio_register reg;

	(void)memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)ctx->region;
	reg.range.len = ctx->region_size;
	reg.mode = UFFDIO_REGISTER_MODE_WP;
	if (ioctl(u->uffd, UFFDIO_REGISTER, &reg) < 0) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "UFFDIO_REGISTER MODE_WP failed, errno=%d (%s)",
			errno, strerror(errno));
		return -1;
	}
	if (!(reg.ioctls & (1ULL << _UFFDIO_WRITEPROTECT))) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "UFFDIO_WRITEPROTECT not offered for anonymous memory");
		return -1;
	}
	/* registration adds the "uw" VMA flag: re-baseline the VmFlags check */
	if (stress_ksm_unmerge_vmflags(ctx->region, ctx->vmflags_before, sizeof(ctx->vmflags_before)) < 0)
		ctx->vmflags_before[0] = '\0';
	return 0;
}

/*
 *  stress_ksm_unmerge_uffd_start()
 *	uffd registered in WP mode, toggle/handler thread, watchdog thread
 */
static int stress_ksm_unmerge_uffd_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_uffd_t *u = calloc(1, sizeof(*u));
	int ret;

	if (!u) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "out of memory for the racer state");
		return -1;
	}
	ctx->run[idx].priv = u;
	u->main_tid = (pid_t)shim_gettid();
	u->snap = calloc(ctx->npages, 1);
	u->touched = calloc(ctx->npages, sizeof(uint32_t));
	u->pm = calloc(ctx->npages, sizeof(uint64_t));
	u->uffd = stress_ksm_unmerge_uffd_open(ctx->st->racer[idx].reason,
		sizeof(ctx->st->racer[idx].reason), &u->thread_id);
	if (!u->snap || !u->touched || !u->pm || u->uffd < 0 ||
	    stress_ksm_unmerge_uffd_register(ctx, idx, u) < 0) {
		if (!u->snap || !u->touched || !u->pm)
			stress_ksm_unmerge_ra_reason(ctx, idx, "out of memory for the page maps");
		stress_ksm_unmerge_uffd_free(ctx, idx);
		return -1;
	}
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_uffd_thread) < 0) {
		stress_ksm_unmerge_uffd_free(ctx, idx);
		return -1;
	}
	ret = pthread_create(&u->watchdog, NULL, stress_ksm_unmerge_uffd_watchdog, ctx);
	if (ret)
		pr_inf("%s: uffd-wp racer: no unmerge watchdog, pthread_create failed, errno=%d (%s)\n",
			ctx->args->name, ret, strerror(ret));
	u->watchdog_running = !ret;
	return 0;
}

/*
 *  stress_ksm_unmerge_uffd_stop()
 *	join both threads (the region is unprotected by then), unregister, close
 */
static void stress_ksm_unmerge_uffd_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)ctx->run[idx].priv;

	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	if (!u)
		return;
	if (u->watchdog_running)
		(void)pthread_join(u->watchdog, NULL);
	u->watchdog_running = false;
	stress_ksm_unmerge_racer_stats(ctx, idx)->aux += u->faults;
	pr_dbg("%s: uffd-wp racer: %" PRIu64 " WP faults resolved, %" PRIu64 " WP bits lost "
		"(tolerated with other racers), thread ids %s\n", ctx->args->name, u->faults,
		u->lost, u->thread_id ? "yes" : "no");
	stress_ksm_unmerge_uffd_free(ctx, idx);
}

#define KSM_RACER_UFFD_WP { "uffd-wp", "unshare of uffd-wp protected KSM pages", \
	"wp-pages-unshared", stress_ksm_unmerge_uffd_supported, \
	stress_ksm_unmerge_uffd_start, stress_ksm_unmerge_uffd_stop, \
	stress_ksm_unmerge_uffd_cycle, NULL }

#endif

/* ------------------------------------------------------------------ */
/* thp: KSM split of THPs, unmerge racing memory compaction            */
/* ------------------------------------------------------------------ */

#if defined(MADV_HUGEPAGE)

#define KSM_THP_SIZE		(2 * MB)	/* PMD size on x86-64 and arm64 (4K) */
#define KSM_THP_CHUNKS		(4)		/* THPs in the racer's region */
#define KSM_THP_ENABLED		"/sys/kernel/mm/transparent_hugepage/enabled"
#define KSM_THP_COMPACT		"/proc/sys/vm/compact_memory"

typedef struct {
	uint8_t *map;			/* mapping with alignment slack */
	size_t map_size;
	uint8_t *thp;			/* 2 MiB aligned THP region */
	size_t size;
	size_t npages;
	uint64_t *pm;			/* pagemap scratch */
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
			k += (state[c * per_chunk + i] == KSM_RA_PAGE_KSM);
		*pages += k;
		split += (was_thp[c] && k > 0);
	}
	return split;
}

/*
 *  stress_ksm_unmerge_thp_refault()
 *	MERGING hook: fresh THPs with the template content, record which
 *	chunks really are THP-mapped (KPF_THP), then make them mergeable
 */
static void stress_ksm_unmerge_thp_refault(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
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
		const size_t per = KSM_THP_SIZE / ctx->page_size;

		for (c = 0; c < KSM_THP_CHUNKS; c++) {
			const uint64_t e = t->pm[c * per];

			t->was_thp[c] = (e & PM_PRESENT) &&
				(stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, e & PM_PFN_MASK) &
				 STRESS_BIT_ULL(KPF_BIT_THP));
			t->thps += t->was_thp[c];
		}
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
		state[i] = (uint8_t)stress_ksm_unmerge_ra_pm_state(ctx, t->pm[i]);
	rs->evidence += stress_ksm_unmerge_thp_split_count(state, t->was_thp, KSM_THP_CHUNKS,
		KSM_THP_SIZE / ctx->page_size, &pages);
	rs->aux += pages;
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
		const int st = stress_ksm_unmerge_ra_pm_state(ctx, t->pm[i]);

		if (st == KSM_RA_PAGE_KSM || st == KSM_RA_PAGE_KZERO) {
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

	while (stress_ksm_unmerge_ra_running(ctx)) {
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

	while (stress_ksm_unmerge_ra_running(ctx) && t->can_compact) {
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
	free(t);
	ctx->run[idx].priv = NULL;
}

/*
 *  stress_ksm_unmerge_thp_map()
 *	map KSM_THP_CHUNKS THPs 2 MiB aligned with MADV_HUGEPAGE
 */
static int stress_ksm_unmerge_thp_map(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
	t->size = KSM_THP_CHUNKS * KSM_THP_SIZE;
	t->npages = t->size / ctx->page_size;
	t->map_size = t->size + KSM_THP_SIZE;
	t->map = mmap(NULL, t->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->map == MAP_FAILED) {
		t->map = NULL;
		stress_ksm_unmerge_ra_reason(ctx, idx, "mmap of %zu bytes failed, errno=%d (%s)",
			t->map_size, errno, strerror(errno));
		return -1;
	}
	t->thp = (uint8_t *)(((uintptr_t)t->map + KSM_THP_SIZE - 1) & ~((uintptr_t)KSM_THP_SIZE - 1));
	if (madvise(t->thp, t->size, MADV_HUGEPAGE) < 0) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "MADV_HUGEPAGE failed, errno=%d (%s)",
			errno, strerror(errno));
		return -1;
	}
	stress_memory_anon_name_set(t->thp, t->size, "ksm-unmerge-thp");
	t->pm = calloc(t->npages, sizeof(uint64_t));
	if (!t->pm) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "out of memory for the pagemap buffer");
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
	int ret;

	if (!t) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "out of memory for the racer state");
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
	if (t->can_compact) {
		ret = pthread_create(&t->compactor, NULL, stress_ksm_unmerge_thp_compactor, ctx);
		if (ret)
			pr_inf("%s: thp racer: no compaction, pthread_create failed, errno=%d (%s)\n",
				ctx->args->name, ret, strerror(ret));
		t->compactor_running = !ret;
	}
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
	if (t->compactor_running)
		(void)pthread_join(t->compactor, NULL);
	t->compactor_running = false;
	if (!t->thps && !ctx->st->racer[idx].reason[0])
		stress_ksm_unmerge_ra_reason(ctx, idx, "no THP could be faulted (KPF_THP never set)");
	pr_dbg("%s: thp racer: %" PRIu64 " THPs faulted before merging, %" PRIu64
		" compactions during unmerge\n", ctx->args->name, t->thps, t->compactions);
	stress_ksm_unmerge_thp_free(ctx, idx);
}

#define KSM_RACER_THP { "thp", "KSM split of THPs, unmerge vs compaction", \
	"thps-split", stress_ksm_unmerge_thp_supported, \
	stress_ksm_unmerge_thp_start, stress_ksm_unmerge_thp_stop, \
	stress_ksm_unmerge_thp_cycle, NULL }

#endif
