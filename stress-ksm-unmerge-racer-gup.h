/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racer-gup.h: the gup racer (private header of
 * stress-ksm-unmerge.c, included once, before the racer table).
 */

/* ------------------------------------------------------------------ */
/* gup: O_DIRECT read-only and write pins of KSM pages                */
/* ------------------------------------------------------------------ */

/* its built and not-built entries share these (the name: KSM_UNMERGE_RACER_LIST) */
#define KSM_RACER_GUP_ID						\
	.flags = KSM_RACER_F_HOLDING,				\
	.path = "O_DIRECT GUP-fast pins of KSM pages",	\
	.evidence = "ksm-pages-pinned"

#if defined(O_DIRECT)

#define KSM_GUP_SLOT_OUT	(0)	/* file slot written from the region */
#define KSM_GUP_SLOT_IN		(1)	/* file slot read into the region */
#define KSM_GUP_TMPFS_MAGIC	(0x01021994)	/* statfs f_type of tmpfs */

/* detail[] counters of the gup racer */
#define KSM_GUP_D_ODIRECT	(0)	/* O_DIRECT transfers (GUP-fast pins) */
#define KSM_GUP_D_ODIRECT_KSM	(1)	/* KSM pages COW-broken by O_DIRECT write pins */
#define KSM_GUP_D_LONGTERM	(2)	/* long-term pins (io_uring fixed buffers) */
#define KSM_GUP_D_LONGTERM_KSM	(3)	/* KSM pages COW-broken by them */

typedef struct {
	int fd;				/* O_DIRECT temp file, already unlinked */
	int vmstat_fd;			/* own /proc/vmstat fd (thread-safe reads) */
	uint8_t *buf;			/* page aligned bounce buffer */
	uint8_t *scratch;		/* one page for partial-page checks */
	char dir[PATH_MAX];		/* where the file lives */
	uint64_t ro_unshared;		/* KSM pages unshared by read-only pins */
	uint64_t cow_short;		/* cow_ksm deltas short of the count */
	int ring_fd;			/* io_uring for long-term pins, -1 none */
} stress_ksm_unmerge_gup_t;

static void FORMAT(printf, 1, 2) stress_ksm_unmerge_pr_report(const char *fmt, ...);

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
		if ((before[j] != KSM_ENTRY_KSM && before[j] != KSM_ENTRY_KZERO) ||
		    after[j] != KSM_ENTRY_ANON)
			continue;
		broken++;
		*folios += (before[j] == KSM_ENTRY_KSM);
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
 *  stress_ksm_unmerge_gup_tmpfs()
 *	is fd's file on tmpfs, whose O_DIRECT goes through the page cache and
 *	pins no user page; 1 yes, 0 no, -errno if fstatfs failed
 */
static int stress_ksm_unmerge_gup_tmpfs(const int fd)
{
#if defined(HAVE_SYS_VFS_H)
	struct statfs sfs;

	if (fstatfs(fd, &sfs) < 0)
		return -errno;
	return sfs.f_type == KSM_GUP_TMPFS_MAGIC;
#else
	(void)fd;
	return 0;
#endif
}

/*
 *  stress_ksm_unmerge_gup_create()
 *	an O_DIRECT file in dir that no path names: O_TMPFILE, so a SIGKILL
 *	can never leave it behind; a named file unlinked at once where the
 *	kernel or the file system has no O_TMPFILE; fd or -1 (errno set)
 */
static int stress_ksm_unmerge_gup_create(const char *dir)
{
	char path[PATH_MAX];
	int fd;

#if defined(O_TMPFILE)
	fd = open(dir, O_TMPFILE | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
#endif
	(void)snprintf(path, sizeof(path), "%s/stress-ksm-unmerge-gup-%d-%d.tmp",
		dir, (int)getpid(), shim_gettid());
	fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
	if (fd >= 0)
		(void)shim_unlink(path);
	return fd;
}

/*
 *  stress_ksm_unmerge_gup_try_dir()
 *	create an unnamed O_DIRECT file in dir (not on tmpfs: -EXDEV) and
 *	prove a 4K aligned write works there; fd or -errno
 */
static int stress_ksm_unmerge_gup_try_dir(const char *dir, uint8_t *buf, const size_t ps)
{
	int fd, err;

	fd = stress_ksm_unmerge_gup_create(dir);
	if (fd < 0)
		return -errno;
	err = stress_ksm_unmerge_gup_tmpfs(fd);
	if (err != 0) {
		(void)close(fd);
		return err < 0 ? err : -EXDEV;
	}
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
 *	pick --temp-path, the cwd, /var/tmp or /tmp: the first not on tmpfs
 *	where O_DIRECT works; instance 0 says where (and what it refused);
 *	-1 (the O_DIRECT half is off) if none, the refusals in tried
 */
static int stress_ksm_unmerge_gup_file(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_gup_t *g,
	char *tried, const size_t len)
{
	const char *dirs[] = { stress_fs_temp_path_get(), ".", "/var/tmp", "/tmp" };
	char path[PATH_MAX];
	size_t i, off = 0;

	tried[0] = '\0';
	for (i = 0; i < SIZEOF_ARRAY(dirs); i++) {
		int fd;

		if (!dirs[i] || (i == 1 && !strcmp(dirs[0], ".")))
			continue;
		fd = stress_ksm_unmerge_gup_try_dir(dirs[i], g->buf, ctx->page_size);
		if (fd >= 0) {
			g->fd = fd;
			(void)strlcpy(g->dir, dirs[i], sizeof(g->dir));
			if (stress_instance_zero(ctx->args))
				stress_ksm_unmerge_pr_report("gup racer: its O_DIRECT file is in %s%s%s%s",
					realpath(dirs[i], path) ? path : dirs[i],
					tried[0] ? " (refused " : "", tried, tried[0] ? ")" : "");
			return 0;
		}
		if (off < len)
			off += (size_t)snprintf(tried + off, len - off, "%s%s: %s", off ? ", " : "", dirs[i],
				fd == -EXDEV ? "tmpfs, no pin" : strerror(-fd));
	}
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
	if (ret < 0 && (errno == EINTR || (errno == EFAULT && stress_ksm_unmerge_others_run(ctx, KSM_RACER_F_HOLDING))))
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
		stress_ksm_unmerge_expected_byte(ctx, page, off, g->scratch));
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
	const off_t slot = (off_t)(KSM_GUP_SLOT_OUT * KSM_RACER_OP_MAX_PAGES * ps);
	uint8_t before[KSM_RACER_OP_MAX_PAGES], after[KSM_RACER_OP_MAX_PAGES];
	uint64_t folios;
	size_t first, n = stress_ksm_unmerge_random_range(ctx, KSM_RACER_OP_MAX_PAGES, &first);
	ssize_t bad, off;

	n = stress_ksm_unmerge_pattern_pages_present(ctx, first, n, before);
	if (!n)
		return;
	if (!stress_ksm_unmerge_gup_io_ok(ctx, idx, "write from the region",
			pwrite(g->fd, ctx->region + first * ps, n * ps, slot), n * ps))
		return;
	(void)stress_ksm_unmerge_entry_states(ctx, ctx->region + first * ps, n, after);
	g->ro_unshared += stress_ksm_unmerge_gup_broken(before, after, n, &folios);
	if (!stress_ksm_unmerge_gup_io_ok(ctx, idx, "read back of the file",
			pread(g->fd, g->buf, n * ps, slot), n * ps))
		return;
	bad = stress_ksm_unmerge_copied_pages_check(ctx, first, g->buf, n * ps,
		stress_ksm_unmerge_others_run(ctx, KSM_RACER_F_HOLDING), g->scratch, &off);
	if (bad >= 0)
		stress_ksm_unmerge_gup_report_bad(ctx, idx, g, "file written from region",
			first + (size_t)bad, g->buf + (size_t)bad * ps, off);
	stress_ksm_unmerge_racer_stats(ctx, idx)->ops++;
	stress_ksm_unmerge_racer_stats(ctx, idx)->detail[KSM_GUP_D_ODIRECT]++;
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
	const off_t slot = (off_t)(KSM_GUP_SLOT_IN * KSM_RACER_OP_MAX_PAGES * ps);
	uint8_t before[KSM_RACER_OP_MAX_PAGES], after[KSM_RACER_OP_MAX_PAGES];
	uint64_t broken, folios;
	int64_t cow0, cow1;
	size_t first, j, n = stress_ksm_unmerge_random_range(ctx, KSM_RACER_OP_MAX_PAGES, &first);
	ssize_t off;

	if (!stress_ksm_unmerge_gup_in_prepare(ctx, idx, g, first, n, slot))
		return;
	n = stress_ksm_unmerge_pattern_pages_present(ctx, first, n, before);
	if (!n)
		return;
	cow0 = stress_ksm_unmerge_gup_cow_ksm(g->vmstat_fd);
	stress_ksm_unmerge_racer_merged_op_begins(ctx, idx);
	if (!stress_ksm_unmerge_gup_io_ok(ctx, idx, "read into the region",
			pread(g->fd, ctx->region + first * ps, n * ps, slot), n * ps))
		return;
	cow1 = stress_ksm_unmerge_gup_cow_ksm(g->vmstat_fd);
	(void)stress_ksm_unmerge_entry_states(ctx, ctx->region + first * ps, n, after);
	broken = stress_ksm_unmerge_gup_broken(before, after, n, &folios);
	rs->evidence += broken;
	rs->detail[KSM_GUP_D_ODIRECT_KSM] += broken;
	if (stress_ksm_unmerge_gup_cow_check((cow0 >= 0 && cow1 >= 0) ? cow1 - cow0 : -1, folios) < 0) {
		g->cow_short++;
		if (!stress_ksm_unmerge_others_run(ctx, KSM_RACER_F_HOLDING)) {
			pr_fail("%s: gup racer: O_DIRECT read broke %" PRIu64 " KSM pages (%zu..%zu) "
				"but cow_ksm grew by only %" PRId64 "\n", ctx->args->name,
				folios, first, first + n - 1, cow1 - cow0);
			rs->failures++;
		}
	}
	for (j = 0; j < n; j++) {
		const uint8_t *p = ctx->region + (first + j) * ps;

		off = stress_ksm_unmerge_page_check(ctx, first + j, p);
		if (off >= 0 && !(stress_ksm_unmerge_others_run(ctx, KSM_RACER_F_HOLDING) && stress_ksm_unmerge_all_zero(p, ps))) {
			stress_ksm_unmerge_gup_report_bad(ctx, idx, g, "region after O_DIRECT read into",
				first + j, p, off);
			break;
		}
	}
	rs->ops++;
	rs->detail[KSM_GUP_D_ODIRECT]++;
}

/* IORING_(UN)REGISTER_BUFFERS are enum values, there since 5.1's header */
#if defined(HAVE_LINUX_IO_URING_H) &&		\
    defined(__NR_io_uring_setup) &&		\
    defined(__NR_io_uring_register)
#define KSM_GUP_LONGTERM

/*
 *  stress_ksm_unmerge_gup_pinned_shared()
 *	pure: index of the first page still a KSM page (or KSM zero page)
 *	while a write pin holds it, -1 if none: a pinned page may be neither
 */
static ssize_t stress_ksm_unmerge_gup_pinned_shared(const uint8_t *st, const size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		if (st[j] == KSM_ENTRY_KSM || st[j] == KSM_ENTRY_KZERO)
			return (ssize_t)j;
	return -1;
}

/*
 *  stress_ksm_unmerge_gup_ring_open()
 *	an io_uring used only to register fixed buffers; -1 without io_uring
 */
static int stress_ksm_unmerge_gup_ring_open(stress_ksm_unmerge_ctx_t *ctx)
{
	struct io_uring_params p;
	int fd;

	(void)shim_memset(&p, 0, sizeof(p));
	fd = (int)syscall(__NR_io_uring_setup, 1, &p);
	if (fd < 0 && stress_instance_zero(ctx->args))
		pr_inf("%s: gup racer: long-term pins off, io_uring_setup failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
	return fd;
}

/*
 *  stress_ksm_unmerge_gup_longterm_refused()
 *	register refused: a limit (no long-term pins from now on), another
 *	racer's PROT_NONE range, or a failure
 */
static void stress_ksm_unmerge_gup_longterm_refused(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_gup_t *g, const int err)
{
	if (err == EINTR || (err == EFAULT && stress_ksm_unmerge_others_run(ctx, KSM_RACER_F_HOLDING)))
		return;
	if (err == ENOMEM || err == EPERM || err == EOPNOTSUPP) {
		pr_inf("%s: gup racer: long-term pins off from now on, IORING_REGISTER_BUFFERS "
			"failed, errno=%d (%s)\n", ctx->args->name, err, strerror(err));
		(void)close(g->ring_fd);
		g->ring_fd = -1;
		if (g->fd < 0)
			stress_ksm_unmerge_racer_reason(ctx, idx, "O_DIRECT half off and long-term "
				"pins refused, errno=%d (%s)", err, strerror(err));
		return;
	}
	pr_fail("%s: gup racer: IORING_REGISTER_BUFFERS of merged pages failed, errno=%d (%s)\n",
		ctx->args->name, err, strerror(err));
	stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
}

/*
 *  stress_ksm_unmerge_gup_longterm()
 *	register merged pages as an io_uring fixed buffer, a FOLL_WRITE |
 *	FOLL_LONGTERM pin: KSM pages must be COW-broken when pinned and stay
 *	private while pinned; hold it while the cycle moves on, unregister,
 *	check the data
 */
static void stress_ksm_unmerge_gup_longterm(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_gup_t *g)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const size_t ps = ctx->page_size;
	uint8_t before[KSM_RACER_OP_MAX_PAGES], after[KSM_RACER_OP_MAX_PAGES];
	size_t first, j, n = stress_ksm_unmerge_random_range(ctx, KSM_RACER_OP_MAX_PAGES, &first);
	struct iovec iov;
	uint64_t folios, broken;
	ssize_t shared, off;

	n = stress_ksm_unmerge_pattern_pages_present(ctx, first, n, before);
	if (!n)
		return;
	iov.iov_base = ctx->region + first * ps;
	iov.iov_len = n * ps;
	stress_ksm_unmerge_racer_merged_op_begins(ctx, idx);
	if (syscall(__NR_io_uring_register, g->ring_fd, IORING_REGISTER_BUFFERS, &iov, 1) < 0) {
		stress_ksm_unmerge_gup_longterm_refused(ctx, idx, g, errno);
		return;
	}
	if (stress_ksm_unmerge_entry_states(ctx, iov.iov_base, n, after) == 0) {
		broken = stress_ksm_unmerge_gup_broken(before, after, n, &folios);
		rs->evidence += broken;
		rs->detail[KSM_GUP_D_LONGTERM_KSM] += broken;
		shared = stress_ksm_unmerge_gup_pinned_shared(after, n);
		if (shared >= 0) {
			pr_fail("%s: gup racer: page %zu is still a shared KSM page while an io_uring "
				"fixed buffer pins it for write\n", ctx->args->name, first + (size_t)shared);
			rs->failures++;
		}
	}
	stress_ksm_unmerge_racer_hold(ctx);
	if (syscall(__NR_io_uring_register, g->ring_fd, IORING_UNREGISTER_BUFFERS, NULL, 0) < 0) {
		pr_fail("%s: gup racer: IORING_UNREGISTER_BUFFERS failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		rs->failures++;
	}
	for (j = 0; j < n; j++) {
		const uint8_t *p = ctx->region + (first + j) * ps;

		off = stress_ksm_unmerge_page_check(ctx, first + j, p);
		if (off >= 0 && !(stress_ksm_unmerge_others_run(ctx, KSM_RACER_F_HOLDING) && stress_ksm_unmerge_all_zero(p, ps))) {
			stress_ksm_unmerge_gup_report_bad(ctx, idx, g, "region after a long-term pin of",
				first + j, p, off);
			break;
		}
	}
	rs->detail[KSM_GUP_D_LONGTERM]++;
	rs->ops++;
}
#endif

/*
 *  stress_ksm_unmerge_gup_op()
 *	one op: the first of each merged phase a write pin (O_DIRECT read,
 *	or on odd cycles a long-term pin), then O_DIRECT reads, O_DIRECT
 *	writes and long-term pins in turn
 */
static void stress_ksm_unmerge_gup_op(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_gup_t *g, uint32_t *n)
{
	const bool merged = stress_ksm_unmerge_racer_wants_merged(ctx, idx);
	const uint32_t turn = merged ? (uint32_t)(ctx->cycle & 1) * 3 : (*n)++ % 4;

#if defined(KSM_GUP_LONGTERM)
	if ((turn == 3 || g->fd < 0) && g->ring_fd >= 0) {
		stress_ksm_unmerge_gup_longterm(ctx, idx, g);
		return;
	}
#endif
	if (g->fd < 0) {
		(void)shim_nanosleep_uint64(1000000);	/* both halves off */
		return;
	}
	if (turn == 2)
		stress_ksm_unmerge_gup_out(ctx, idx, g);
	else
		stress_ksm_unmerge_gup_in(ctx, idx, g);
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

	while (stress_ksm_unmerge_racer_until_stop(ctx)) {
		if (ctx->quiesce) {
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (stress_ksm_unmerge_racer_phase_active(ctx)) {
			stress_ksm_unmerge_gup_op(ctx, idx, g, &n);
			continue;
		}
		(void)shim_nanosleep_uint64(100000);
	}
	return NULL;
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
	if (g->ring_fd >= 0)
		(void)close(g->ring_fd);
	stress_ksm_unmerge_racer_buffers_free(ctx, g->buf);
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
	char tried[256];

	if (!g) {
		stress_ksm_unmerge_racer_reason(ctx, idx, "out of memory for the racer state");
		return -1;
	}
	g->fd = g->vmstat_fd = g->ring_fd = -1;
	ctx->run[idx].priv = g;
	g->buf = stress_ksm_unmerge_racer_buffers(ctx);
	g->scratch = g->buf ? g->buf + KSM_RACER_OP_MAX_PAGES * ctx->page_size : NULL;
	if (!g->buf) {
		stress_ksm_unmerge_racer_reason(ctx, idx, "cannot allocate the bounce buffer, errno=%d (%s)",
			errno, strerror(errno));
		stress_ksm_unmerge_gup_free(ctx, idx);
		return -1;
	}
#if defined(KSM_GUP_LONGTERM)
	g->ring_fd = stress_ksm_unmerge_gup_ring_open(ctx);
#endif
	if (stress_ksm_unmerge_gup_file(ctx, g, tried, sizeof(tried)) < 0) {
		if (g->ring_fd < 0) {
			stress_ksm_unmerge_racer_reason(ctx, idx, "no long-term pins and no O_DIRECT dir (%s)",
				tried);
			stress_ksm_unmerge_gup_free(ctx, idx);
			return -1;
		}
		if (stress_instance_zero(ctx->args))
			stress_ksm_unmerge_pr_report("gup racer: the O_DIRECT half is off, no directory "
				"for its file (%s); long-term pins only", tried);
	}
	g->vmstat_fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
	ctx->run[idx].merged_phase_waits = true;
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
			g->fd >= 0 ? g->dir : "(none)", g->ro_unshared, g->cow_short);
	}
	stress_ksm_unmerge_gup_free(ctx, idx);
}

#define KSM_RACER_GUP                                                                              \
	KSM_RACER_GUP_ID,							\
	.details = { "odirect-pins", "odirect-ksm-pages", "longterm-pins", "longterm-ksm-pages" }, \
	.supported = stress_ksm_unmerge_racer_supported_always,                                    \
	.start = stress_ksm_unmerge_gup_start,                                                     \
	.stop = stress_ksm_unmerge_gup_stop,

#else

/* feature guard off: the racer is listed, and reports "not built" */
#define KSM_RACER_GUP						\
	KSM_RACER_GUP_ID,							\
	.not_built = "O_DIRECT missing",

#endif
