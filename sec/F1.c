/* ---- vmsplice: GUP references on KSM pages held in a pipe ---- */
#if defined(HAVE_VMSPLICE) && defined(SPLICE_F_NONBLOCK) && defined(HAVE_SYS_UIO_H)

typedef struct {
	int fds[2];			/* non-blocking pipe */
	uint8_t *buf;			/* read back; shared memory never merges with the region */
} stress_ksm_unmerge_vmsplice_t;

/*
 *  stress_ksm_unmerge_vmsplice_op()
 *	vmsplice 1-16 merged pages into the pipe (one begun while merged is
 *	held until the unmerge returned), read them back, check every byte
 */
static bool stress_ksm_unmerge_vmsplice_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_vmsplice_t *v = (stress_ksm_unmerge_vmsplice_t *)run->priv;
	struct iovec iov[KSM_OP_PAGES];
	uint8_t st[KSM_OP_PAGES];
	const uint64_t cycle = ctx->cycle;
	const bool merged = (ctx->phase == KSM_PHASE_MERGED);
	size_t first, j, got = 0, n = stress_ksm_unmerge_random_range(ctx, KSM_OP_PAGES, &first);
	uint64_t ksm = 0;
	bool held = false;
	ssize_t ret;
	int spins = 0;

	if (!stress_ksm_unmerge_active(ctx))
		return false;
	n = stress_ksm_unmerge_present(ctx, first, n, st);
	for (j = 0; j < n; j++) {
		iov[j].iov_base = ctx->region + (first + j) * ctx->page_size;
		iov[j].iov_len = ctx->page_size;
		ksm += stress_ksm_unmerge_is_ksm(st[j]);
	}
	stress_ksm_unmerge_met(run);
	ret = n ? vmsplice(v->fds[1], iov, n, SPLICE_F_NONBLOCK) : 0;
	if (ret <= 0) {
		if (ret < 0 && errno != EAGAIN && errno != EINTR)
			stress_ksm_unmerge_racer_fail(run, "vmsplice of pages %zu..%zu failed, errno=%d (%s)",
				first, first + n - 1, errno, strerror(errno));
		return true;
	}
	/* a splice begun while merged holds its references over the unmerge */
	while (merged && ctx->cycle == cycle && !ctx->racers_stop &&
	       (ctx->phase == KSM_PHASE_MERGED || ctx->phase == KSM_PHASE_UNMERGING))
		(void)shim_nanosleep_uint64(50000);
	held = merged && ctx->cycle == cycle && ctx->phase == KSM_PHASE_VERIFY;
	if (!merged)
		stress_ksm_unmerge_hold(ctx);
	while (got < (size_t)ret) {
		const ssize_t r = read(v->fds[0], v->buf + got, (size_t)ret - got);

		if (r > 0) {
			got += (size_t)r;
		} else if (r == 0 || (errno != EAGAIN && errno != EINTR) || ++spins > 10000) {
			stress_ksm_unmerge_racer_fail(run, "reading %zd bytes back from the pipe failed, errno=%d (%s)",
				ret, errno, strerror(errno));
			return true;
		} else {
			(void)shim_nanosleep_uint64(10000);
		}
	}
	(void)stress_ksm_unmerge_copy_check(run, first, v->buf, (size_t)ret, "read back from the pipe:");
	run->rs->evidence += ksm;
	run->rs->detail[0] += held;
	run->rs->detail[1] += held ? ksm : 0;
	run->rs->ops++;
	return true;
}

/*
 *  stress_ksm_unmerge_vmsplice_stop()
 *	close the pipe, unmap the buffer
 */
static void stress_ksm_unmerge_vmsplice_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_vmsplice_t *v = (stress_ksm_unmerge_vmsplice_t *)run->priv;

	if (v->fds[0] >= 0)
		(void)close(v->fds[0]);
	if (v->fds[1] >= 0)
		(void)close(v->fds[1]);
	if (v->buf)
		(void)munmap(v->buf, KSM_OP_PAGES * ctx->page_size);
}

/*
 *  stress_ksm_unmerge_vmsplice_start()
 *	the pipe (a vmsplice into it proves the syscall) and the buffer
 */
static int stress_ksm_unmerge_vmsplice_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_vmsplice_t *v = (stress_ksm_unmerge_vmsplice_t *)run->priv;
	struct iovec iov = { ctx->templates, 1 };
	char c;

	v->fds[0] = v->fds[1] = -1;
	v->buf = stress_ksm_unmerge_shared_map(KSM_OP_PAGES * ctx->page_size);
	if (!v->buf || pipe2(v->fds, O_CLOEXEC | O_NONBLOCK) < 0 || vmsplice(v->fds[1], &iov, 1, SPLICE_F_NONBLOCK) != 1 ||
	    read(v->fds[0], &c, 1) != 1)
		return stress_ksm_unmerge_racer_reason(run, "mmap, pipe2 or vmsplice failed, errno=%d (%s)",
			errno, strerror(errno));
	return 0;
}
#define KSM_VMSPLICE_NOT_BUILT	NULL
#else
#define KSM_VMSPLICE_NOT_BUILT	"vmsplice() or SPLICE_F_NONBLOCK missing (HAVE_VMSPLICE)"
#define stress_ksm_unmerge_vmsplice_start	NULL
#define stress_ksm_unmerge_vmsplice_stop	NULL
#define stress_ksm_unmerge_vmsplice_op		NULL
#endif

/* ---- gup: O_DIRECT (GUP-fast) pins and io_uring long-term pins ---- */
#if defined(O_DIRECT)

typedef struct {
	int fd;				/* O_DIRECT file, unnamed (O_TMPFILE) or unlinked */
	int vmstat_fd;			/* its own: reads race the main thread's */
	int ring_fd;			/* io_uring for long-term pins, -1 none */
	uint8_t *buf;			/* bounce buffer */
	uint32_t turn;
	bool dir_made;
} stress_ksm_unmerge_gup_t;

/*
 *  stress_ksm_unmerge_gup_broken()
 *	pure: pages KSM pages (or KSM zero pages) before a write pin and
 *	private after it; the KSM folios among them (cow_ksm counts those)
 */
static uint64_t stress_ksm_unmerge_gup_broken(const uint8_t *before, const uint8_t *after, const size_t n,
	uint64_t *folios)
{
	uint64_t broken = 0;
	size_t j;

	*folios = 0;
	for (j = 0; j < n; j++) {
		if (!stress_ksm_unmerge_is_ksm(before[j]) || after[j] != KSM_PAGE_PRIVATE)
			continue;
		broken++;
		*folios += (before[j] == KSM_PAGE_KSM);
	}
	return broken;
}

/*
 *  stress_ksm_unmerge_gup_io_ok()
 *	an O_DIRECT transfer moved all len bytes, else a failure (not EINTR)
 */
static bool stress_ksm_unmerge_gup_io_ok(stress_ksm_unmerge_run_t *run, const char *what, const ssize_t ret,
	const size_t len)
{
	if (ret == (ssize_t)len)
		return true;
	if (ret >= 0 || errno != EINTR)
		stress_ksm_unmerge_racer_fail(run, "O_DIRECT %s of %zu bytes returned %zd, errno=%d (%s)", what, len,
			ret, ret < 0 ? errno : 0, ret < 0 ? strerror(errno) : "short");
	return false;
}

/*
 *  stress_ksm_unmerge_gup_odirect()
 *	O_DIRECT write from merged pages (read-only pins), or O_DIRECT read
 *	of their pattern into them (write pins: KSM pages COW-broken, cow_ksm
 *	counts them, data intact)
 */
static void stress_ksm_unmerge_gup_odirect(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run,
	stress_ksm_unmerge_gup_t *g, const bool in)
{
	const size_t ps = ctx->page_size;
	const off_t slot = (off_t)(in ? KSM_OP_PAGES * ps : 0);
	uint8_t before[KSM_OP_PAGES], after[KSM_OP_PAGES];
	size_t first, j, n = stress_ksm_unmerge_random_range(ctx, KSM_OP_PAGES, &first);
	uint64_t folios, broken;
	int64_t cow0, cow1;

	for (j = 0; in && j < n; j++)
		stress_ksm_unmerge_page_fill(ctx, first + j, g->buf + j * ps);
	if (in && !stress_ksm_unmerge_gup_io_ok(run, "write of the pattern", pwrite(g->fd, g->buf, n * ps, slot), n * ps))
		return;
	n = stress_ksm_unmerge_present(ctx, first, n, before);
	if (!n)
		return;
	cow0 = stress_ksm_unmerge_field(g->vmstat_fd, "cow_ksm");
	stress_ksm_unmerge_met(run);
	if (!stress_ksm_unmerge_gup_io_ok(run, in ? "read into the region" : "write from the region", in ?
			pread(g->fd, ctx->region + first * ps, n * ps, slot) :
			pwrite(g->fd, ctx->region + first * ps, n * ps, slot), n * ps))
		return;
	cow1 = stress_ksm_unmerge_field(g->vmstat_fd, "cow_ksm");
	(void)stress_ksm_unmerge_pages_state(ctx, ctx->region + first * ps, n,
		stress_ksm_unmerge_page_kind(ctx->pattern, first), after);
	broken = stress_ksm_unmerge_gup_broken(before, after, n, &folios);
	run->rs->detail[0]++;
	run->rs->ops++;
	if (!in) {
		if (stress_ksm_unmerge_gup_io_ok(run, "read back", pread(g->fd, g->buf, n * ps, slot), n * ps))
			(void)stress_ksm_unmerge_copy_check(run, first, g->buf, n * ps, "file written from the region:");
		return;
	}
	run->rs->evidence += broken;
	run->rs->detail[1] += broken;
	if (cow0 >= 0 && cow1 >= 0 && (uint64_t)(cow1 - cow0) < folios)
		stress_ksm_unmerge_racer_fail(run, "O_DIRECT read broke %" PRIu64 " KSM pages (%zu..%zu) but cow_ksm "
			"grew by only %" PRId64, folios, first, first + n - 1, cow1 - cow0);
	(void)stress_ksm_unmerge_copy_check(run, first, ctx->region + first * ps, n * ps,
		"region after an O_DIRECT read into it:");
}

#if defined(HAVE_LINUX_IO_URING_H) && defined(__NR_io_uring_setup) && defined(__NR_io_uring_register)
/*
 *  stress_ksm_unmerge_gup_longterm()
 *	merged pages registered as an io_uring fixed buffer (FOLL_WRITE |
 *	FOLL_LONGTERM): KSM pages COW-broken when pinned and private while
 *	pinned; held while the cycle moves on
 */
static void stress_ksm_unmerge_gup_longterm(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run,
	stress_ksm_unmerge_gup_t *g)
{
	uint8_t before[KSM_OP_PAGES], after[KSM_OP_PAGES];
	size_t first, j, n = stress_ksm_unmerge_random_range(ctx, KSM_OP_PAGES, &first);
	struct iovec iov = { ctx->region + first * ctx->page_size, 0 };
	uint64_t folios;

	n = stress_ksm_unmerge_present(ctx, first, n, before);
	iov.iov_len = n * ctx->page_size;
	stress_ksm_unmerge_met(run);
	if (!n)
		return;
	if (syscall(__NR_io_uring_register, g->ring_fd, IORING_REGISTER_BUFFERS, &iov, 1) < 0) {
		if (errno == ENOMEM || errno == EPERM || errno == EOPNOTSUPP) {
			pr_inf("%s: gup racer: long-term pins off from now on, IORING_REGISTER_BUFFERS failed, "
				"errno=%d (%s)\n", ctx->args->name, errno, strerror(errno));
			(void)close(g->ring_fd);
			g->ring_fd = -1;
		} else if (errno != EINTR) {
			stress_ksm_unmerge_racer_fail(run, "IORING_REGISTER_BUFFERS of merged pages failed, errno=%d (%s)",
				errno, strerror(errno));
		}
		return;
	}
	if (stress_ksm_unmerge_pages_state(ctx, iov.iov_base, n, stress_ksm_unmerge_page_kind(ctx->pattern, first),
			after) == 0) {
		const uint64_t broken = stress_ksm_unmerge_gup_broken(before, after, n, &folios);

		run->rs->detail[3] += broken;
		run->rs->evidence += broken;
		for (j = 0; j < n && !stress_ksm_unmerge_is_ksm(after[j]); j++)
			;
		if (j < n)
			stress_ksm_unmerge_racer_fail(run, "page %zu is still a KSM page while an io_uring fixed buffer "
				"pins it for write", first + j);
	}
	stress_ksm_unmerge_hold(ctx);
	if (syscall(__NR_io_uring_register, g->ring_fd, IORING_UNREGISTER_BUFFERS, NULL, 0) < 0)
		stress_ksm_unmerge_racer_fail(run, "IORING_UNREGISTER_BUFFERS failed, errno=%d (%s)", errno, strerror(errno));
	(void)stress_ksm_unmerge_copy_check(run, first, iov.iov_base, iov.iov_len, "region after a long-term pin:");
	run->rs->detail[2]++;
	run->rs->ops++;
}

/*
 *  stress_ksm_unmerge_gup_ring()
 *	an io_uring used only to register fixed buffers, -1 without one
 */
static int stress_ksm_unmerge_gup_ring(void)
{
	struct io_uring_params p;

	(void)shim_memset(&p, 0, sizeof(p));
	return (int)syscall(__NR_io_uring_setup, 1, &p);
}
#else
#define stress_ksm_unmerge_gup_longterm(ctx, run, g)	do { } while (0)
#define stress_ksm_unmerge_gup_ring()			(-1)
#endif

/*
 *  stress_ksm_unmerge_gup_op()
 *	the first op of a merged phase a write pin, then O_DIRECT reads,
 *	writes and long-term pins in turn
 */
static bool stress_ksm_unmerge_gup_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_gup_t *g = (stress_ksm_unmerge_gup_t *)run->priv;
	const uint32_t turn = (ctx->phase == KSM_PHASE_MERGED && run->met != ctx->cycle) ?
		(uint32_t)(ctx->cycle & 1) * 3 : g->turn++ % 4;

	if (!stress_ksm_unmerge_active(ctx))
		return false;
	if ((turn == 3 || g->fd < 0) && g->ring_fd >= 0)
		stress_ksm_unmerge_gup_longterm(ctx, run, g);
	else if (g->fd >= 0)
		stress_ksm_unmerge_gup_odirect(ctx, run, g, turn != 2);
	return g->fd >= 0 || g->ring_fd >= 0;
}

/*
 *  stress_ksm_unmerge_gup_file()
 *	an O_DIRECT file in stress-ng's temp dir (--temp-path) where a 4K
 *	write works, not on tmpfs (no pin there); unnamed (O_TMPFILE) where
 *	it can be, so a SIGKILL leaves nothing; 0 or -errno
 */
static int stress_ksm_unmerge_gup_file(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_gup_t *g)
{
	char path[PATH_MAX];
	int fd = -1;
#if defined(HAVE_SYS_VFS_H)
	struct statfs sfs;
#endif

	if (access(stress_fs_temp_path_get(), W_OK) < 0 || stress_fs_temp_dir_make_args(ctx->args) < 0)
		return -errno;
	g->dir_made = true;
	(void)stress_fs_temp_dir_args(ctx->args, path, sizeof(path));
#if defined(O_TMPFILE)
	fd = open(path, O_TMPFILE | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
#endif
	if (fd < 0) {
		(void)stress_fs_temp_filename_args(ctx->args, path, sizeof(path), stress_mwc32());
		fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
		(void)shim_unlink(path);
	}
	g->fd = fd;
	if (fd < 0)
		return -errno;
#if defined(HAVE_SYS_VFS_H)
	if (fstatfs(fd, &sfs) == 0 && sfs.f_type == 0x01021994)	/* TMPFS_MAGIC */
		return -EXDEV;
#endif
	return (pwrite(fd, g->buf, ctx->page_size, 0) == (ssize_t)ctx->page_size) ? 0 : -(errno ? errno : EIO);
}

/*
 *  stress_ksm_unmerge_gup_stop()
 *	close and unmap; remove the temp dir
 */
static void stress_ksm_unmerge_gup_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_gup_t *g = (stress_ksm_unmerge_gup_t *)run->priv;

	if (g->fd >= 0)
		(void)close(g->fd);
	if (g->vmstat_fd >= 0)
		(void)close(g->vmstat_fd);
	if (g->ring_fd >= 0)
		(void)close(g->ring_fd);
	if (g->buf)
		(void)munmap(g->buf, 2 * KSM_OP_PAGES * ctx->page_size);
	if (g->dir_made)
		(void)stress_fs_temp_dir_rm_args(ctx->args);
}

/*
 *  stress_ksm_unmerge_gup_start()
 *	bounce buffer, O_DIRECT file, io_uring; one half off is said once
 */
static int stress_ksm_unmerge_gup_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_gup_t *g = (stress_ksm_unmerge_gup_t *)run->priv;
	int ret = -ENOMEM;

	g->ring_fd = stress_ksm_unmerge_gup_ring();
	g->vmstat_fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
	g->buf = stress_ksm_unmerge_shared_map(2 * KSM_OP_PAGES * ctx->page_size);
	g->fd = -1;
	if (g->buf) {
		(void)shim_memset(g->buf, 0x5a, ctx->page_size);
		ret = stress_ksm_unmerge_gup_file(ctx, g);
	}
	if (ret < 0 && g->fd >= 0) {
		(void)close(g->fd);
		g->fd = -1;
	}
	if (ret < 0 && g->ring_fd < 0)
		return stress_ksm_unmerge_racer_reason(run, "no io_uring for long-term pins and no O_DIRECT file in %s: %s",
			stress_fs_temp_path_get(), ret == -EXDEV ? "tmpfs takes no pin, use --temp-path" : strerror(-ret));
	if (stress_instance_zero(ctx->args) && (ret < 0 || g->ring_fd < 0))
		pr_inf("%s: gup racer: %s\n", ctx->args->name, ret == -EXDEV ? "O_DIRECT half off: the temp path "
			"is on tmpfs, which takes no pin (use --temp-path)" : ret < 0 ? "O_DIRECT half off: no O_DIRECT "
			"file in the temp path" : "long-term pins off: io_uring_setup failed");
	return 0;
}
#define KSM_GUP_NOT_BUILT	NULL
#else
#define KSM_GUP_NOT_BUILT	"O_DIRECT missing"
#define stress_ksm_unmerge_gup_start	NULL
#define stress_ksm_unmerge_gup_stop	NULL
#define stress_ksm_unmerge_gup_op	NULL
#endif
