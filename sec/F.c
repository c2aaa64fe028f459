/* ---- vmsplice: GUP references on KSM pages held in a pipe ---- */
#if defined(HAVE_VMSPLICE) && defined(SPLICE_F_NONBLOCK) && defined(HAVE_SYS_UIO_H)

typedef struct {
	int fds[2];			/* non-blocking pipe */
	uint8_t *buf;			/* what is read back */
} stress_ksm_unmerge_vmsplice_t;

/*
 *  stress_ksm_unmerge_vmsplice_drain()
 *	read len bytes back out of the pipe; 0 or -errno
 */
static int stress_ksm_unmerge_vmsplice_drain(stress_ksm_unmerge_vmsplice_t *v, const size_t len)
{
	size_t got = 0;
	int spins = 0;

	while (got < len) {
		const ssize_t n = read(v->fds[0], v->buf + got, len - got);

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
 *  stress_ksm_unmerge_vmsplice_op()
 *	vmsplice 1-16 merged pages into the pipe (one begun while merged is
 *	held until the unmerge returned), drain, check every byte
 */
static bool stress_ksm_unmerge_vmsplice_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_vmsplice_t *v = (stress_ksm_unmerge_vmsplice_t *)run->priv;
	struct iovec iov[KSM_OP_PAGES];
	uint8_t st[KSM_OP_PAGES];
	const uint64_t cycle = ctx->cycle;
	const bool merged = (ctx->phase == KSM_PHASE_MERGED);
	size_t first, j, n = stress_ksm_unmerge_random_range(ctx, KSM_OP_PAGES, &first);
	uint64_t ksm = 0;
	bool held = false;
	ssize_t ret;
	int err;

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
		/* EFAULT: another racer made the range PROT_NONE */
		if (ret < 0 && errno != EAGAIN && errno != EINTR &&
		    !(errno == EFAULT && stress_ksm_unmerge_others_run(ctx, NULL)))
			stress_ksm_unmerge_racer_fail(run, "vmsplice of pages %zu..%zu failed, errno=%d (%s)",
				first, first + n - 1, errno, strerror(errno));
		return true;
	}
	if (merged) {
		/* hold the references until this cycle's unmerge returned */
		while (ctx->cycle == cycle && !ctx->racers_stop &&
		       (ctx->phase == KSM_PHASE_MERGED || ctx->phase == KSM_PHASE_UNMERGING))
			(void)shim_nanosleep_uint64(50000);
		held = (ctx->cycle == cycle && ctx->phase == KSM_PHASE_VERIFY);
	} else {
		stress_ksm_unmerge_hold(ctx);
	}
	err = stress_ksm_unmerge_vmsplice_drain(v, (size_t)ret);
	if (err < 0) {
		stress_ksm_unmerge_racer_fail(run, "draining %zd bytes from the pipe failed, errno=%d (%s)",
			ret, -err, strerror(-err));
		return true;
	}
	(void)stress_ksm_unmerge_copy_check(run, first, v->buf, (size_t)ret, "read back from the pipe:");
	run->rs->evidence += ksm;
	run->rs->detail[0] += held;
	run->rs->detail[1] += held ? ksm : 0;
	run->rs->ops++;
	return true;
}

/*
 *  stress_ksm_unmerge_vmsplice_supported()
 *	the kernel has pipes and vmsplice
 */
static int stress_ksm_unmerge_vmsplice_supported(char *reason, const size_t len)
{
	int fds[2], ret;
	char c = 0;
	struct iovec iov = { &c, 1 };

	if (pipe(fds) < 0) {
		(void)snprintf(reason, len, "pipe failed, errno=%d (%s)", errno, strerror(errno));
		return -1;
	}
	ret = (int)vmsplice(fds[1], &iov, 1, SPLICE_F_NONBLOCK);
	if (ret < 0)
		(void)snprintf(reason, len, "vmsplice failed, errno=%d (%s)", errno, strerror(errno));
	(void)close(fds[0]);
	(void)close(fds[1]);
	return ret < 0 ? -1 : 0;
}

/*
 *  stress_ksm_unmerge_vmsplice_stop()
 *	close the pipe, free the buffer
 */
static void stress_ksm_unmerge_vmsplice_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_vmsplice_t *v = (stress_ksm_unmerge_vmsplice_t *)run->priv;

	if (!v)
		return;
	if (v->fds[0] >= 0)
		(void)close(v->fds[0]);
	if (v->fds[1] >= 0)
		(void)close(v->fds[1]);
	if (v->buf)
		(void)munmap(v->buf, KSM_OP_PAGES * ctx->page_size);
	free(v);
	run->priv = NULL;
}

/*
 *  stress_ksm_unmerge_vmsplice_start()
 *	the pipe and a read-back buffer in shared memory (KSM never merges
 *	shmem, so a copy cannot merge with the page it came from)
 */
static int stress_ksm_unmerge_vmsplice_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_vmsplice_t *v = calloc(1, sizeof(*v));

	if (!v)
		return stress_ksm_unmerge_racer_reason(run, "out of memory for the racer state");
	run->priv = v;
	v->fds[0] = v->fds[1] = -1;
	v->buf = mmap(NULL, KSM_OP_PAGES * ctx->page_size, PROT_READ | PROT_WRITE,
		MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (v->buf == MAP_FAILED) {
		v->buf = NULL;
		stress_ksm_unmerge_vmsplice_stop(ctx, run);
		return stress_ksm_unmerge_racer_reason(run, "cannot map the read-back buffer, errno=%d (%s)",
			errno, strerror(errno));
	}
	if (pipe2(v->fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		v->fds[0] = v->fds[1] = -1;
		stress_ksm_unmerge_vmsplice_stop(ctx, run);
		return stress_ksm_unmerge_racer_reason(run, "pipe2 failed, errno=%d (%s)", errno, strerror(errno));
	}
	return 0;
}
#define KSM_VMSPLICE_NOT_BUILT	NULL
#else
#define KSM_VMSPLICE_NOT_BUILT	"vmsplice() or SPLICE_F_NONBLOCK missing (HAVE_VMSPLICE)"
#define stress_ksm_unmerge_vmsplice_supported	NULL
#define stress_ksm_unmerge_vmsplice_start	NULL
#define stress_ksm_unmerge_vmsplice_stop	NULL
#define stress_ksm_unmerge_vmsplice_op		NULL
#endif

/* ---- gup: O_DIRECT (GUP-fast) pins and io_uring long-term pins ---- */
#if defined(O_DIRECT)

#define KSM_GUP_TMPFS_MAGIC	(0x01021994)

typedef struct {
	int fd;				/* O_DIRECT file, unnamed (O_TMPFILE) or unlinked */
	int vmstat_fd;			/* own fd: reads race the main thread's */
	int ring_fd;			/* io_uring for long-term pins, -1 none */
	uint8_t *buf;			/* page aligned bounce buffer */
	uint32_t turn;
	bool dir_made;
} stress_ksm_unmerge_gup_t;

/*
 *  stress_ksm_unmerge_gup_broken()
 *	pure: pages KSM pages (or KSM zero pages) before a write pin and
 *	private after it; KSM folios (what cow_ksm counts) in *folios
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
 *	did an O_DIRECT transfer move all len bytes; a failure unless
 *	another racer explains it (EFAULT on a PROT_NONE range)
 */
static bool stress_ksm_unmerge_gup_io_ok(stress_ksm_unmerge_run_t *run, const char *what,
	const ssize_t ret, const size_t len)
{
	if (ret == (ssize_t)len)
		return true;
	if (ret < 0 && (errno == EINTR || (errno == EFAULT && stress_ksm_unmerge_others_run(run->ctx, NULL))))
		return false;
	stress_ksm_unmerge_racer_fail(run, "O_DIRECT %s of %zu bytes returned %zd, errno=%d (%s)", what, len,
		ret, ret < 0 ? errno : 0, ret < 0 ? strerror(errno) : "short");
	return false;
}

/*
 *  stress_ksm_unmerge_gup_region_check()
 *	after a write pin: pages first..first+n hold the pattern
 */
static void stress_ksm_unmerge_gup_region_check(stress_ksm_unmerge_run_t *run, const size_t first,
	const size_t n, const char *what)
{
	(void)stress_ksm_unmerge_copy_check(run, first, run->ctx->region + first * run->ctx->page_size,
		n * run->ctx->page_size, what);
}

/*
 *  stress_ksm_unmerge_gup_odirect()
 *	O_DIRECT write from merged pages (read-only pins), or O_DIRECT read
 *	of the pattern into them (write pins: KSM pages COW-broken, counted
 *	by cow_ksm, data intact)
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

	if (in) {
		for (j = 0; j < n; j++)
			stress_ksm_unmerge_page_fill(ctx, first + j, g->buf + j * ps);
		if (!stress_ksm_unmerge_gup_io_ok(run, "write of the pattern file", pwrite(g->fd, g->buf, n * ps, slot), n * ps))
			return;
	}
	n = stress_ksm_unmerge_present(ctx, first, n, before);
	if (!n)
		return;
	cow0 = stress_ksm_unmerge_field(g->vmstat_fd, "cow_ksm");
	stress_ksm_unmerge_met(run);
	if (!stress_ksm_unmerge_gup_io_ok(run, in ? "read into the region" : "write from the region",
			in ? pread(g->fd, ctx->region + first * ps, n * ps, slot) :
			pwrite(g->fd, ctx->region + first * ps, n * ps, slot), n * ps))
		return;
	cow1 = stress_ksm_unmerge_field(g->vmstat_fd, "cow_ksm");
	(void)stress_ksm_unmerge_pages_state(ctx, ctx->region + first * ps, n,
		stress_ksm_unmerge_page_kind(ctx->pattern, first), after);
	broken = stress_ksm_unmerge_gup_broken(before, after, n, &folios);
	run->rs->detail[0]++;
	if (in) {
		run->rs->evidence += broken;
		run->rs->detail[1] += broken;
		if (cow0 >= 0 && cow1 >= 0 && (uint64_t)(cow1 - cow0) < folios &&
		    !stress_ksm_unmerge_others_run(ctx, NULL))
			stress_ksm_unmerge_racer_fail(run, "O_DIRECT read broke %" PRIu64 " KSM pages (%zu..%zu) "
				"but cow_ksm grew by only %" PRId64, folios, first, first + n - 1, cow1 - cow0);
		stress_ksm_unmerge_gup_region_check(run, first, n, "region after an O_DIRECT read into it:");
	} else if (stress_ksm_unmerge_gup_io_ok(run, "read back of the file", pread(g->fd, g->buf, n * ps, slot), n * ps)) {
		(void)stress_ksm_unmerge_copy_check(run, first, g->buf, n * ps, "file written from the region:");
	}
	run->rs->ops++;
}

#if defined(HAVE_LINUX_IO_URING_H) && defined(__NR_io_uring_setup) && defined(__NR_io_uring_register)
/*
 *  stress_ksm_unmerge_gup_longterm()
 *	register merged pages as an io_uring fixed buffer (FOLL_WRITE |
 *	FOLL_LONGTERM): KSM pages must be COW-broken when pinned and stay
 *	private while pinned; held while the cycle moves on
 */
static void stress_ksm_unmerge_gup_longterm(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run,
	stress_ksm_unmerge_gup_t *g)
{
	uint8_t before[KSM_OP_PAGES], after[KSM_OP_PAGES];
	size_t first, j, n = stress_ksm_unmerge_random_range(ctx, KSM_OP_PAGES, &first);
	struct iovec iov;
	uint64_t folios;

	n = stress_ksm_unmerge_present(ctx, first, n, before);
	if (!n)
		return;
	iov.iov_base = ctx->region + first * ctx->page_size;
	iov.iov_len = n * ctx->page_size;
	stress_ksm_unmerge_met(run);
	if (syscall(__NR_io_uring_register, g->ring_fd, IORING_REGISTER_BUFFERS, &iov, 1) < 0) {
		if (errno == ENOMEM || errno == EPERM || errno == EOPNOTSUPP) {
			pr_inf("%s: gup racer: long-term pins off from now on, IORING_REGISTER_BUFFERS failed, "
				"errno=%d (%s)\n", ctx->args->name, errno, strerror(errno));
			(void)close(g->ring_fd);
			g->ring_fd = -1;
		} else if (errno != EINTR && !(errno == EFAULT && stress_ksm_unmerge_others_run(ctx, NULL))) {
			stress_ksm_unmerge_racer_fail(run, "IORING_REGISTER_BUFFERS of merged pages failed, errno=%d (%s)",
				errno, strerror(errno));
		}
		return;
	}
	if (stress_ksm_unmerge_pages_state(ctx, iov.iov_base, n, stress_ksm_unmerge_page_kind(ctx->pattern, first),
			after) == 0) {
		const uint64_t broken = stress_ksm_unmerge_gup_broken(before, after, n, &folios);

		run->rs->evidence += broken;
		run->rs->detail[3] += broken;
		for (j = 0; j < n; j++)
			if (stress_ksm_unmerge_is_ksm(after[j])) {
				stress_ksm_unmerge_racer_fail(run, "page %zu is still a KSM page while an io_uring fixed "
					"buffer pins it for write", first + j);
				break;
			}
	}
	stress_ksm_unmerge_hold(ctx);
	if (syscall(__NR_io_uring_register, g->ring_fd, IORING_UNREGISTER_BUFFERS, NULL, 0) < 0)
		stress_ksm_unmerge_racer_fail(run, "IORING_UNREGISTER_BUFFERS failed, errno=%d (%s)", errno, strerror(errno));
	stress_ksm_unmerge_gup_region_check(run, first, n, "region after a long-term pin of it:");
	run->rs->detail[2]++;
	run->rs->ops++;
}

/*
 *  stress_ksm_unmerge_gup_ring()
 *	an io_uring used only to register fixed buffers; -1 without one
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
 *	the first op of each merged phase a write pin, then O_DIRECT reads,
 *	writes and long-term pins in turn
 */
static bool stress_ksm_unmerge_gup_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_gup_t *g = (stress_ksm_unmerge_gup_t *)run->priv;
	const bool first = (ctx->phase == KSM_PHASE_MERGED && run->met != ctx->cycle);
	const uint32_t turn = first ? (uint32_t)(ctx->cycle & 1) * 3 : g->turn++ % 4;

	if (!stress_ksm_unmerge_active(ctx))
		return false;
	if ((turn == 3 || g->fd < 0) && g->ring_fd >= 0)
		stress_ksm_unmerge_gup_longterm(ctx, run, g);
	else if (g->fd >= 0)
		stress_ksm_unmerge_gup_odirect(ctx, run, g, turn != 2);
	else
		return false;
	return true;
}

/*
 *  stress_ksm_unmerge_gup_file()
 *	an O_DIRECT file in stress-ng's temp dir (--temp-path) where a 4K
 *	aligned write works and that is not tmpfs (no pin there); unnamed
 *	(O_TMPFILE) where it can be, so a SIGKILL leaves nothing; -errno
 */
static int stress_ksm_unmerge_gup_file(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_gup_t *g, char *dir)
{
	char path[PATH_MAX];
	int fd = -1, ret;
#if defined(HAVE_SYS_VFS_H)
	struct statfs sfs;
#endif

	ret = stress_fs_temp_dir_make_args(ctx->args);
	if (ret < 0 && ret != -EEXIST)
		return ret;
	g->dir_made = true;
	(void)stress_fs_temp_dir_args(ctx->args, dir, PATH_MAX);
#if defined(O_TMPFILE)
	fd = open(dir, O_TMPFILE | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
#endif
	if (fd < 0) {
		(void)stress_fs_temp_filename_args(ctx->args, path, sizeof(path), stress_mwc32());
		fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
		if (fd >= 0)
			(void)shim_unlink(path);
	}
	if (fd < 0)
		return -errno;
#if defined(HAVE_SYS_VFS_H)
	if (fstatfs(fd, &sfs) == 0 && sfs.f_type == KSM_GUP_TMPFS_MAGIC) {
		(void)close(fd);
		return -EXDEV;
	}
#endif
	(void)shim_memset(g->buf, 0x5a, ctx->page_size);
	if (pwrite(fd, g->buf, ctx->page_size, 0) != (ssize_t)ctx->page_size) {
		ret = errno ? -errno : -EIO;
		(void)close(fd);
		return ret;
	}
	g->fd = fd;
	return 0;
}

/*
 *  stress_ksm_unmerge_gup_stop()
 *	close and free; remove the temp dir
 */
static void stress_ksm_unmerge_gup_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_gup_t *g = (stress_ksm_unmerge_gup_t *)run->priv;

	if (!g)
		return;
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
	free(g);
	run->priv = NULL;
}

/*
 *  stress_ksm_unmerge_gup_start()
 *	bounce buffer, O_DIRECT file, io_uring; either half may be off (said once)
 */
static int stress_ksm_unmerge_gup_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_gup_t *g = calloc(1, sizeof(*g));
	char dir[PATH_MAX];
	int ret;

	if (!g)
		return stress_ksm_unmerge_racer_reason(run, "out of memory for the racer state");
	run->priv = g;
	g->fd = g->vmstat_fd = -1;
	g->buf = mmap(NULL, 2 * KSM_OP_PAGES * ctx->page_size, PROT_READ | PROT_WRITE,
		MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g->buf == MAP_FAILED) {
		g->buf = NULL;
		g->ring_fd = -1;
		stress_ksm_unmerge_gup_stop(ctx, run);
		return stress_ksm_unmerge_racer_reason(run, "cannot map the bounce buffer, errno=%d (%s)",
			errno, strerror(errno));
	}
	g->ring_fd = stress_ksm_unmerge_gup_ring();
	dir[0] = '\0';
	ret = stress_ksm_unmerge_gup_file(ctx, g, dir);
	if (ret < 0 && g->ring_fd < 0) {
		stress_ksm_unmerge_gup_stop(ctx, run);
		return stress_ksm_unmerge_racer_reason(run, "no io_uring for long-term pins and no O_DIRECT file "
			"in %s: %s", dir[0] ? dir : stress_fs_temp_path_get(),
			ret == -EXDEV ? "tmpfs takes no pin, use --temp-path" : strerror(-ret));
	}
	if (stress_instance_zero(ctx->args) && (ret < 0 || g->ring_fd < 0))
		pr_inf("%s: gup racer: %s\n", ctx->args->name, ret < 0 ? (ret == -EXDEV ?
			"O_DIRECT half off: the temp dir is on tmpfs, which takes no pin (use --temp-path)" :
			"O_DIRECT half off: no O_DIRECT file in the temp dir") :
			"long-term pins off: io_uring_setup failed");
	g->vmstat_fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
	return 0;
}
#define KSM_GUP_NOT_BUILT	NULL
#else
#define KSM_GUP_NOT_BUILT	"O_DIRECT missing"
#define stress_ksm_unmerge_gup_start	NULL
#define stress_ksm_unmerge_gup_stop	NULL
#define stress_ksm_unmerge_gup_op	NULL
#endif

/* ---- uffd-wp: unshare of uffd-wp protected KSM pages ---- */
#if defined(HAVE_LINUX_USERFAULTFD_H) && defined(UFFDIO_WRITEPROTECT) &&	\
    defined(UFFD_FEATURE_PAGEFAULT_FLAG_WP) && defined(UFFDIO_REGISTER_MODE_WP) && defined(HAVE_POLL_H)

#if !defined(UFFD_USER_MODE_ONLY)
#define UFFD_USER_MODE_ONLY	(1)
#endif
#if !defined(UFFD_FEATURE_THREAD_ID)
#define UFFD_FEATURE_THREAD_ID	(1 << 8)
#endif

typedef struct {
	int uffd;
	bool thread_id;			/* faults carry the faulting tid */
	pid_t main_tid;			/* the thread that unmerges */
	uint8_t *snap;			/* per page: KSM and protected at unmerge start */
	volatile uint32_t *touched;	/* per page: cycle it was unprotected in */
	uint64_t *pm;			/* pagemap of the region (main thread hooks) */
	bool snap_valid;
} stress_ksm_unmerge_uffd_t;

/*
 *  stress_ksm_unmerge_uffd_open()
 *	a userfaultfd with the WP feature (USER_MODE_ONLY on EPERM); -1 with the reason
 */
static int stress_ksm_unmerge_uffd_open(const uint64_t feature, char *reason, const size_t len, bool *tid)
{
	const uint64_t want[] = { feature | UFFD_FEATURE_THREAD_ID, feature };
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(want); i++) {
		struct uffdio_api api;
		int fd = shim_userfaultfd(O_CLOEXEC | O_NONBLOCK);

		if (fd < 0 && errno == EPERM)
			fd = shim_userfaultfd(O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
		if (fd < 0) {
			(void)snprintf(reason, len, "userfaultfd denied or missing, errno=%d (%s)", errno, strerror(errno));
			return -1;
		}
		(void)shim_memset(&api, 0, sizeof(api));
		api.api = UFFD_API;
		api.features = want[i];
		if (ioctl(fd, UFFDIO_API, &api) == 0 && (api.features & feature)) {
			*tid = !!(want[i] & UFFD_FEATURE_THREAD_ID);
			return fd;
		}
		(void)snprintf(reason, len, "UFFDIO_API without feature %#" PRIx64 ", errno=%d (%s)", feature,
			errno, strerror(errno));
		(void)close(fd);
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_uffd_wp()
 *	write-protect (on) or unprotect and wake pages first..first+n-1
 */
static int stress_ksm_unmerge_uffd_wp(const stress_ksm_unmerge_ctx_t *ctx, const int uffd, const size_t first,
	const size_t n, const bool on)
{
	struct uffdio_writeprotect wp;

	wp.range.start = (uintptr_t)(ctx->region + first * ctx->page_size);
	wp.range.len = n * ctx->page_size;
	wp.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0;
	if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) == 0 || errno == ENOENT || errno == EAGAIN)
		return 0;
	return -1;
}

/*
 *  stress_ksm_unmerge_uffd_events()
 *	resolve every pending WP fault (unprotect and wake), waiting up to ms
 */
static void stress_ksm_unmerge_uffd_events(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int ms)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)run->priv;
	struct pollfd pfd = { u->uffd, POLLIN, 0 };
	struct uffd_msg msg;

	if (poll(&pfd, 1, ms) <= 0)
		return;
	while (read(u->uffd, &msg, sizeof(msg)) == (ssize_t)sizeof(msg)) {
		const uintptr_t a = (uintptr_t)msg.arg.pagefault.address;
		const size_t i = (size_t)((a - (uintptr_t)ctx->region) / ctx->page_size);

		if (msg.event != UFFD_EVENT_PAGEFAULT || !(msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP) ||
		    a < (uintptr_t)ctx->region || i >= ctx->npages) {
			stress_ksm_unmerge_racer_fail(run, "unexpected uffd message: event %#x, flags %#llx, "
				"address %#llx (a WP fault in the region expected)", (unsigned int)msg.event,
				(unsigned long long)msg.arg.pagefault.flags, (unsigned long long)a);
			continue;
		}
		if (u->thread_id && (pid_t)msg.arg.pagefault.feat.ptid == u->main_tid && ctx->phase == KSM_PHASE_UNMERGING)
			stress_ksm_unmerge_racer_fail(run, "the unmerge itself raised a WP fault at page %zu "
				"(break_ksm must unshare, not write)", i);
		u->touched[i] = (uint32_t)ctx->cycle;
		if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, i, 1, false) < 0)
			stress_ksm_unmerge_racer_fail(run, "UFFDIO_WRITEPROTECT off at faulting page %zu failed, "
				"errno=%d (%s)", i, errno, strerror(errno));
	}
}

/*
 *  stress_ksm_unmerge_uffd_op()
 *	serve WP faults; while merged or unmerging protect a random range,
 *	and while unmerging also unprotect one (marked touched first)
 */
static bool stress_ksm_unmerge_uffd_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)run->priv;
	size_t first, j, n;
	bool on;

	stress_ksm_unmerge_uffd_events(ctx, run, stress_ksm_unmerge_active(ctx) ? 0 : 1);
	if (!stress_ksm_unmerge_active(ctx))
		return true;
	n = stress_ksm_unmerge_random_range(ctx, 64, &first);
	on = (ctx->phase != KSM_PHASE_UNMERGING) || stress_mwc1();
	if (!on) {
		for (j = 0; j < n; j++)
			u->touched[first + j] = (uint32_t)ctx->cycle;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, first, n, on) < 0)
		stress_ksm_unmerge_racer_fail(run, "UFFDIO_WRITEPROTECT %s pages %zu..%zu failed, errno=%d (%s)",
			on ? "on" : "off", first, first + n - 1, errno, strerror(errno));
	run->rs->ops++;
	(void)shim_nanosleep_uint64(20000);
	return true;
}

/*
 *  stress_ksm_unmerge_uffd_park()
 *	before parking: unprotect the whole region and serve what is pending
 */
static void stress_ksm_unmerge_uffd_park(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)run->priv;

	if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, 0, ctx->npages, false) < 0)
		stress_ksm_unmerge_racer_fail(run, "UFFDIO_WRITEPROTECT off for the region failed, errno=%d (%s)",
			errno, strerror(errno));
	stress_ksm_unmerge_uffd_events(ctx, run, 0);
}

/*
 *  stress_ksm_unmerge_uffd_phase()
 *	merged: protect a random half; unmerging: which pages are KSM and
 *	protected; verify: those not unprotected since kept the WP bit and
 *	are no longer KSM pages (the evidence)
 */
static void stress_ksm_unmerge_uffd_phase(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)run->priv;
	const uint32_t cycle = (uint32_t)ctx->cycle;
	uint64_t lost = 0, kept = 0, still = 0;
	size_t i, first_lost = 0;

	if (phase == KSM_PHASE_MERGED) {
		const size_t n = (ctx->npages + 1) / 2;
		const size_t first = stress_mwc32modn((uint32_t)(ctx->npages - n + 1));

		if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, first, n, true) < 0)
			stress_ksm_unmerge_racer_fail(run, "UFFDIO_WRITEPROTECT on pages %zu..%zu failed, errno=%d (%s)",
				first, first + n - 1, errno, strerror(errno));
		return;
	}
	if ((phase != KSM_PHASE_UNMERGING && phase != KSM_PHASE_VERIFY) ||
	    (phase == KSM_PHASE_VERIFY && !u->snap_valid) || !ctx->have_pfns ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region, ctx->npages, ctx->page_size, u->pm) < 0)
		return;
	for (i = 0; i < ctx->npages; i++) {
		const int what = (u->pm[i] & PM_UFFD_WP) ? stress_ksm_unmerge_page_state(ctx, u->pm[i], 0,
			stress_ksm_unmerge_page_kind(ctx->pattern, i)) : KSM_PAGE_ABSENT;

		if (phase == KSM_PHASE_UNMERGING) {
			u->snap[i] = stress_ksm_unmerge_is_ksm(what);
			run->rs->detail[0] += u->snap[i];
		} else if (u->snap[i] && u->touched[i] != cycle && !(u->pm[i] & PM_UFFD_WP)) {
			first_lost = lost++ ? first_lost : i;
		} else if (u->snap[i] && u->touched[i] != cycle) {
			kept++;
			run->rs->evidence += (what == KSM_PAGE_PRIVATE);
			still += stress_ksm_unmerge_is_ksm(what);
		}
	}
	u->snap_valid = (phase == KSM_PHASE_UNMERGING);
	run->rs->detail[1] += kept;
	run->rs->detail[2] += still;
	/* another racer may have discarded them */
	if (lost && !stress_ksm_unmerge_others_run(ctx, NULL))
		stress_ksm_unmerge_racer_fail(run, "%" PRIu64 " KSM pages lost their uffd-wp bit across the unmerge "
			"(first: page %zu, pagemap %#" PRIx64 ")", lost, first_lost, u->pm[first_lost]);
}

/*
 *  stress_ksm_unmerge_uffd_supported()
 *	userfaultfd allowed, with UFFD_FEATURE_PAGEFAULT_FLAG_WP
 */
static int stress_ksm_unmerge_uffd_supported(char *reason, const size_t len)
{
	bool tid;
	const int fd = stress_ksm_unmerge_uffd_open(UFFD_FEATURE_PAGEFAULT_FLAG_WP, reason, len, &tid);

	if (fd >= 0)
		(void)close(fd);
	return fd < 0 ? -1 : 0;
}

/*
 *  stress_ksm_unmerge_uffd_stop()
 *	unregister, close, free
 */
static void stress_ksm_unmerge_uffd_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)run->priv;
	struct uffdio_range range = { (uintptr_t)ctx->region, ctx->region_size };

	if (!u)
		return;
	if (u->uffd >= 0) {
		(void)ioctl(u->uffd, UFFDIO_UNREGISTER, &range);
		(void)close(u->uffd);
	}
	free(u->snap);
	free((void *)u->touched);
	free(u->pm);
	free(u);
	run->priv = NULL;
}

/*
 *  stress_ksm_unmerge_uffd_start()
 *	the region registered in WP mode (its VmFlags gain "uw")
 */
static int stress_ksm_unmerge_uffd_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_uffd_t *u = calloc(1, sizeof(*u));
	struct uffdio_register reg;

	if (!u)
		return stress_ksm_unmerge_racer_reason(run, "out of memory for the racer state");
	run->priv = u;
	u->main_tid = (pid_t)shim_gettid();
	u->snap = calloc(ctx->npages, 1);
	u->touched = calloc(ctx->npages, sizeof(uint32_t));
	u->pm = calloc(ctx->npages, sizeof(uint64_t));
	u->uffd = stress_ksm_unmerge_uffd_open(UFFD_FEATURE_PAGEFAULT_FLAG_WP, run->rs->reason,
		sizeof(run->rs->reason), &u->thread_id);
	if (!u->snap || !u->touched || !u->pm || u->uffd < 0) {
		if (u->uffd >= 0)
			(void)stress_ksm_unmerge_racer_reason(run, "out of memory for the page maps");
		stress_ksm_unmerge_uffd_stop(ctx, run);
		return -1;
	}
	(void)shim_memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)ctx->region;
	reg.range.len = ctx->region_size;
	reg.mode = UFFDIO_REGISTER_MODE_WP;
	if (ioctl(u->uffd, UFFDIO_REGISTER, &reg) < 0 || !(reg.ioctls & (1ULL << _UFFDIO_WRITEPROTECT))) {
		(void)stress_ksm_unmerge_racer_reason(run, "UFFDIO_REGISTER MODE_WP failed or without "
			"WRITEPROTECT, errno=%d (%s)", errno, strerror(errno));
		stress_ksm_unmerge_uffd_stop(ctx, run);
		return -1;
	}
	if (stress_ksm_unmerge_vmflags(ctx->region, ctx->vmflags, sizeof(ctx->vmflags), true) < 0)
		ctx->vmflags[0] = '\0';
	return 0;
}
#define KSM_UFFD_WP_NOT_BUILT	NULL
#else
#define KSM_UFFD_WP_NOT_BUILT	"userfaultfd write-protect missing (HAVE_LINUX_USERFAULTFD_H)"
#define stress_ksm_unmerge_uffd_supported	NULL
#define stress_ksm_unmerge_uffd_start		NULL
#define stress_ksm_unmerge_uffd_stop		NULL
#define stress_ksm_unmerge_uffd_op		NULL
#define stress_ksm_unmerge_uffd_park		NULL
#define stress_ksm_unmerge_uffd_phase		NULL
#endif

/* ---- mrelease: process_mrelease against exit_mmap of KSM memory ---- */

typedef struct {
	uint64_t cycle;			/* the cycle rounds are counted for */
	uint32_t rounds;
	uint64_t victims;		/* picks each victim's mode */
} stress_ksm_unmerge_mrelease_t;

/*
 *  stress_ksm_unmerge_mrelease_victim()
 *	child: unmerge its copy (mode 0), COW-write every page (mode 1) or keep
 *	the KSM pages mapped (mode 2), then wait to be killed; exit status:
 *	the errno of a failed call
 */
static void NORETURN stress_ksm_unmerge_mrelease_victim(stress_ksm_unmerge_ctx_t *ctx, const pid_t parent,
	const int mode)
{
	size_t i;

	if (stress_ksm_unmerge_child_init(ctx, parent) < 0)
		_exit(errno ? errno : 1);
	if (mode == 0 && madvise(ctx->region, ctx->region_size, MADV_UNMERGEABLE) < 0)
		_exit(errno ? errno : 1);
	if (mode == 1) {
		if (mprotect(ctx->region, ctx->region_size, PROT_READ | PROT_WRITE) < 0)
			_exit(errno ? errno : 1);
		for (i = 0; i < ctx->npages; i++) {
			volatile uint8_t *p = ctx->region + i * ctx->page_size;

			*p = *p;
		}
	}
	(void)sleep(10);
	_exit(0);
}

/*
 *  stress_ksm_unmerge_mrelease_op()
 *	4 rounds a cycle while merged or unmerging: fork a victim sharing the
 *	KSM pages, probe its KSM pages, SIGKILL it through a pidfd and
 *	process_mrelease it at once (0 and ESRCH both legitimate), reap it
 */
static bool stress_ksm_unmerge_mrelease_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mrelease_t *m = (stress_ksm_unmerge_mrelease_t *)run->priv;
	const pid_t parent = getpid();
	uint64_t pm[64], t0, t1;
	size_t j, n = STRESS_MINIMUM(ctx->npages, SIZEOF_ARRAY(pm)), first;
	int pidfd, pm_fd, status, ret, err;
	uint64_t ksm = 0;
	pid_t pid;

	if (m->cycle != ctx->cycle) {
		m->cycle = ctx->cycle;
		m->rounds = 0;
	}
	if (!stress_ksm_unmerge_active(ctx) || m->rounds >= 4)
		return false;
	m->rounds++;
	pid = fork();
	if (pid < 0) {
		(void)stress_ksm_unmerge_racer_reason(run, "fork failed, errno=%d (%s)", errno, strerror(errno));
		return false;
	}
	if (pid == 0)
		stress_ksm_unmerge_mrelease_victim(ctx, parent, (int)(m->victims % 3));
	m->victims++;
	stress_ksm_unmerge_met(run);
	pidfd = shim_pidfd_open(pid, 0);
	pm_fd = -1;
	if (pidfd >= 0) {
		char path[64];

		(void)snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
		pm_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (pidfd < 0 || pm_fd < 0) {
		err = errno;
		(void)shim_kill(pid, SIGKILL);
		(void)stress_ksm_unmerge_reap(pid, 0.0, &status);
		if (pidfd >= 0)
			(void)close(pidfd);
		stress_ksm_unmerge_racer_fail(run, "%s failed, errno=%d (%s)", pidfd < 0 ? "pidfd_open of the victim" :
			"open of the victim's pagemap", err, strerror(err));
		return true;
	}
	(void)shim_nanosleep_uint64(stress_mwc32modn(2000001));
	first = stress_mwc32modn((uint32_t)(ctx->npages - n + 1));
	if (stress_ksm_unmerge_pagemap_read(pm_fd, ctx->region + first * ctx->page_size, n, ctx->page_size, pm) == 0)
		for (j = 0; j < n; j++)
			ksm += stress_ksm_unmerge_is_ksm(stress_ksm_unmerge_page_state(ctx, pm[j], 0,
				stress_ksm_unmerge_page_kind(ctx->pattern, first + j)));
	t0 = stress_ksm_unmerge_now_ns();
	ret = shim_pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
	err = errno;
	if (ret == 0) {
		ret = shim_process_mrelease(pidfd, 0);
		err = errno;
	} else {
		(void)shim_kill(pid, SIGKILL);
		stress_ksm_unmerge_racer_fail(run, "pidfd_send_signal SIGKILL failed, errno=%d (%s)", err, strerror(err));
	}
	t1 = stress_ksm_unmerge_now_ns();
	if (stress_ksm_unmerge_reap(pid, 0.0, &status) < 0)
		stress_ksm_unmerge_racer_fail(run, "waitpid on the victim failed, errno=%d (%s)", errno, strerror(errno));
	else if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) && !(WIFEXITED(status) && !WEXITSTATUS(status)))
		stress_ksm_unmerge_racer_fail(run, "victim ended with wait status %#x (exit status: errno of its "
			"MADV_UNMERGEABLE or mprotect)", status);
	(void)close(pm_fd);
	(void)close(pidfd);
	run->rs->ops++;
	run->rs->evidence += (ksm > 0);
	run->rs->detail[2] += ksm;
	if (ret == 0) {
		run->rs->detail[0]++;
		stress_ksm_unmerge_lat_add(&ctx->st->mrelease_lat, (double)(t1 - t0) / 1.0E6);
	} else if (err == ESRCH) {
		/* the victim was already past exit_mm(): the reap is the latency */
		run->rs->detail[1]++;
		stress_ksm_unmerge_lat_add(&ctx->st->mrelease_lat, (double)(stress_ksm_unmerge_now_ns() - t0) / 1.0E6);
	} else if (!(err == EINTR && !stress_continue(ctx->args))) {
		stress_ksm_unmerge_racer_fail(run, "process_mrelease on a SIGKILLed victim failed (expected 0 or "
			"ESRCH), errno=%d (%s)", err, strerror(err));
	}
	return true;
}

/*
 *  stress_ksm_unmerge_mrelease_supported()
 *	pidfd_open (5.3) and process_mrelease (5.15)
 */
static int stress_ksm_unmerge_mrelease_supported(char *reason, const size_t len)
{
	const int fd = shim_pidfd_open(getpid(), 0);

	if (fd < 0) {
		(void)snprintf(reason, len, "pidfd_open failed, errno=%d (%s)", errno, strerror(errno));
		return -1;
	}
	(void)close(fd);
	if (shim_process_mrelease(-1, 0) < 0 && errno == ENOSYS) {
		(void)snprintf(reason, len, "process_mrelease not implemented (ENOSYS), needs Linux 5.15");
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_priv_start()
 *	start(): zeroed private state of the racer's size
 */
static int stress_ksm_unmerge_priv_start(stress_ksm_unmerge_run_t *run, const size_t size)
{
	run->priv = calloc(1, size);
	return run->priv ? 0 : stress_ksm_unmerge_racer_reason(run, "out of memory for the racer state");
}

/*
 *  stress_ksm_unmerge_mrelease_start()
 *	its round counter
 */
static int stress_ksm_unmerge_mrelease_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	(void)ctx;
	return stress_ksm_unmerge_priv_start(run, sizeof(stress_ksm_unmerge_mrelease_t));
}

/*
 *  stress_ksm_unmerge_priv_stop()
 *	stop(): free the racer's private state
 */
static void stress_ksm_unmerge_priv_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	(void)ctx;
	free(run->priv);
	run->priv = NULL;
}

/* ---- fork: COW of KSM pages in forked children ---- */

#define KSM_FORK_PAGES		(64)	/* KSM pages a child COWs at most */

/* shared between the worker and its fork child */
typedef struct {
	volatile uint32_t n;		/* KSM pages COWed and verified */
	volatile int fail;		/* 0, or the first failure (index into the names below) */
	volatile int err;
	volatile uint64_t page, pfn[2];
	volatile int64_t off;
	volatile uint64_t pages[KSM_FORK_PAGES];
	volatile int64_t parent[2];	/* the parent's ksm_merging_pages, ksm_rmap_items before fork() */
	volatile int64_t child[2];	/* the child's, first thing after fork() */
	volatile int verdict[2];	/* KSM_COUNTER_* of the child's */
	volatile int64_t scanned[2];	/* pages_scanned before fork() and after the child's read */
	volatile uint64_t fork_ns, read_ns;
} stress_ksm_unmerge_fork_sh_t;

typedef struct {
	pid_t pid;
	stress_ksm_unmerge_fork_sh_t *sh;
} stress_ksm_unmerge_fork_t;

static const char * const stress_ksm_unmerge_fork_fails[] = {
	"ok", "child setup failed", "child pagemap read failed",
	"a KSM page held wrong data before the child's write",
	"the child's write to a KSM page did not get a private copy",
	"the child's write did not read back", "a neighbouring KSM page changed by the child's write",
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
 *  stress_ksm_unmerge_fork_counters_verdict()
 *	pure: did the child start with its parent's ksm_merging_pages and
 *	ksm_rmap_items (4d6fc29f3634): 1 yes, 0 no, 2 cannot tell (ksmd
 *	scanned enough pages in between to have made the rmap items itself,
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
 *  stress_ksm_unmerge_fork_child_fail()
 *	child: record the first failure for the parent to report; -1
 */
static int stress_ksm_unmerge_fork_child_fail(stress_ksm_unmerge_fork_sh_t *sh, const int fail, const size_t i,
	const int64_t off)
{
	if (!sh->fail) {
		sh->err = errno;
		sh->page = i;
		sh->off = off;
		sh->fail = fail;
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_fork_cow()
 *	child: if page i is a KSM page here, check it, write it (COW), check
 *	the private copy, the write and the neighbours; 1 COWed, 0 skipped, -1 failed
 */
static int stress_ksm_unmerge_fork_cow(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_fork_sh_t *sh,
	const int pm_fd, const size_t i)
{
	uint8_t *page = ctx->region + i * ctx->page_size;
	const int kind = stress_ksm_unmerge_page_kind(ctx->pattern, i);
	uint64_t e0, e1;
	uint8_t want;
	size_t w, k;
	ssize_t off;

	if (stress_ksm_unmerge_pagemap_read(pm_fd, page, 1, ctx->page_size, &e0) < 0)
		return stress_ksm_unmerge_fork_child_fail(sh, 2, i, -1);
	if (!stress_ksm_unmerge_is_ksm(stress_ksm_unmerge_page_state(ctx, e0, 0, kind)))
		return 0;
	off = stress_ksm_unmerge_page_check(ctx, i, page, &want);
	if (off >= 0)
		return stress_ksm_unmerge_all_zero(page, ctx->page_size) &&
			stress_ksm_unmerge_others_run(ctx, NULL) ? 0 : stress_ksm_unmerge_fork_child_fail(sh, 3, i, off);
	for (w = 0; w < ctx->page_size / sizeof(uint64_t); w++)
		((uint64_t *)page)[w] = stress_ksm_unmerge_fork_word(i, w);
	if (stress_ksm_unmerge_pagemap_read(pm_fd, page, 1, ctx->page_size, &e1) < 0)
		return stress_ksm_unmerge_fork_child_fail(sh, 2, i, -1);
	if (stress_ksm_unmerge_page_state(ctx, e1, 0, KSM_KIND_UNIQUE) != KSM_PAGE_PRIVATE) {
		sh->pfn[0] = e0 & PM_PFN_MASK;
		sh->pfn[1] = e1 & PM_PFN_MASK;
		return stress_ksm_unmerge_fork_child_fail(sh, 4, i, -1);
	}
	for (w = 0; w < ctx->page_size / sizeof(uint64_t); w++)
		if (((uint64_t *)page)[w] != stress_ksm_unmerge_fork_word(i, w))
			return stress_ksm_unmerge_fork_child_fail(sh, 5, i, (int64_t)(w * sizeof(uint64_t)));
	for (k = i - 1; k <= i + 1; k += 2) {
		if (k >= ctx->npages || stress_ksm_unmerge_pagemap_read(pm_fd, ctx->region + k * ctx->page_size, 1,
				ctx->page_size, &e1) < 0 ||
		    !stress_ksm_unmerge_is_ksm(stress_ksm_unmerge_page_state(ctx, e1, 0,
				stress_ksm_unmerge_page_kind(ctx->pattern, k))))
			continue;
		off = stress_ksm_unmerge_page_check(ctx, k, ctx->region + k * ctx->page_size, &want);
		if (off >= 0 && !(stress_ksm_unmerge_others_run(ctx, NULL) &&
				stress_ksm_unmerge_all_zero(ctx->region + k * ctx->page_size, ctx->page_size)))
			return stress_ksm_unmerge_fork_child_fail(sh, 6, k, off);
	}
	sh->pages[sh->n++] = i;
	return 1;
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
	if (stress_ksm_unmerge_child_init(ctx, parent) < 0 ||
	    mprotect(ctx->region, ctx->region_size, PROT_READ | PROT_WRITE) < 0 ||
	    (pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)) < 0) {
		(void)stress_ksm_unmerge_fork_child_fail(sh, 1, 0, -1);
		_exit(EXIT_FAILURE);
	}
	stress_mwc_reseed();
	for (tries = 0; tries < 1024 && sh->n < KSM_FORK_PAGES && stress_continue(ctx->args); tries++) {
		if (sh->n >= 4 && (ctx->st->phase == KSM_PHASE_VERIFY || ctx->st->phase == KSM_PHASE_IDLE))
			break;
		if (stress_ksm_unmerge_fork_cow(ctx, sh, pm_fd, stress_mwc32modn((uint32_t)ctx->npages)) < 0)
			break;
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
		stress_ksm_unmerge_racer_fail(run, "the child's ksm_stat read ksm_merging_pages %" PRId64
			", ksm_rmap_items %" PRId64 " %.3f ms after fork() (the parent's were %" PRId64 " and %"
			PRId64 "; ksmd scanned %" PRId64 " pages meanwhile): the kernel copied the parent's KSM "
			"counters into the child (expected 0; upstream fix 4d6fc29f3634 \"mm/ksm: fix incorrect "
			"KSM counter handling in mm_struct during fork\")", sh->child[0], sh->child[1],
			(double)(sh->read_ns - sh->fork_ns) / 1.0E6, sh->parent[0], sh->parent[1],
			sh->scanned[1] - sh->scanned[0]);
	if (sh->fail == 4)
		stress_ksm_unmerge_racer_fail(run, "%s: page %" PRIu64 " pfn %#" PRIx64 " -> %#" PRIx64,
			stress_ksm_unmerge_fork_fails[4], sh->page, sh->pfn[0], sh->pfn[1]);
	else if (sh->fail)
		stress_ksm_unmerge_racer_fail(run, "%s: page %" PRIu64 " byte %" PRId64 ", errno=%d (%s)",
			stress_ksm_unmerge_fork_fails[sh->fail % SIZEOF_ARRAY(stress_ksm_unmerge_fork_fails)],
			sh->page, sh->off, sh->err, strerror(sh->err));
	else if (ret < 0)
		stress_ksm_unmerge_racer_fail(run, "waitpid on the child failed, errno=%d (%s)", errno, strerror(errno));
	else if (ret > 0 && stress_continue(ctx->args))
		stress_ksm_unmerge_racer_fail(run, "child did not exit within 3 s, killed");
	else if (ret == 0 && !(WIFEXITED(status) && !WEXITSTATUS(status)) &&
		 !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && !stress_continue(ctx->args)))
		stress_ksm_unmerge_racer_fail(run, "child ended with wait status %#x", status);
}

/*
 *  stress_ksm_unmerge_fork_phase()
 *	merged: fork the child (counters read right before); verify: reap
 *	it; idle, racers parked: the parent's copies of the COWed pages intact
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
		sh->scanned[0] = (access(KSM_SYSFS "/pages_scanned", R_OK) == 0) ?
			(int64_t)stress_ksm_unmerge_knob_u64("pages_scanned") : -1;
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
			stress_ksm_unmerge_racer_fail(run, "parent page %zu changed by the child's COW write: byte %zd "
				"(pattern %s)", i, off, stress_ksm_unmerge_patterns[ctx->pattern]);
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
	stress_ksm_unmerge_fork_t *f;

	(void)ctx;
	if (stress_ksm_unmerge_priv_start(run, sizeof(*f)) < 0)
		return -1;
	f = (stress_ksm_unmerge_fork_t *)run->priv;
	f->sh = mmap(NULL, sizeof(*f->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (f->sh != MAP_FAILED)
		return 0;
	stress_ksm_unmerge_priv_stop(ctx, run);
	return stress_ksm_unmerge_racer_reason(run, "mmap of the shared state failed, errno=%d (%s)",
		errno, strerror(errno));
}

/*
 *  stress_ksm_unmerge_fork_stop()
 *	kill and reap a child still running, unmap, free
 */
static void stress_ksm_unmerge_fork_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_fork_t *f = (stress_ksm_unmerge_fork_t *)run->priv;
	int status;

	if (f->pid > 0) {
		(void)shim_kill(f->pid, SIGKILL);
		(void)stress_ksm_unmerge_reap(f->pid, 0.0, &status);
	}
	(void)munmap((void *)f->sh, sizeof(*f->sh));
	stress_ksm_unmerge_priv_stop(ctx, run);
}

/* ---- mprotect: unmerge of PROT_NONE / read-only KSM pages ---- */

enum { KSM_PROT_RW = 0, KSM_PROT_READ, KSM_PROT_NONE };

typedef struct {
	pthread_mutex_t lock;		/* the thread's toggles vs the hooks */
	size_t first, n;		/* the window it protects: the last quarter */
	uint8_t *prot;			/* per window page: KSM_PROT_* */
	uint64_t *snap;			/* per window page: KSM pfn protected at unmerge start, 0 none */
	uint64_t *pm;			/* window pagemap */
	size_t nprot;			/* pages not RW */
	uint32_t toggles;		/* this cycle */
	bool frozen;			/* verify .. merging: no toggling */
} stress_ksm_unmerge_mprotect_t;

/*
 *  stress_ksm_unmerge_mprotect_rw()
 *	(lock held) the window back to PROT_READ | PROT_WRITE
 */
static int stress_ksm_unmerge_mprotect_rw(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_mprotect_t *mp)
{
	if (!mp->nprot)
		return 0;
	if (mprotect(ctx->region + mp->first * ctx->page_size, mp->n * ctx->page_size, PROT_READ | PROT_WRITE) < 0)
		return -1;
	(void)shim_memset(mp->prot, KSM_PROT_RW, mp->n);
	mp->nprot = 0;
	return 0;
}

/*
 *  stress_ksm_unmerge_mprotect_op()
 *	while merging, merged or unmerging (128 a cycle): 1-32 random window
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
	if (mp->frozen || i < first + n) {
		(void)pthread_mutex_unlock(&mp->lock);
		return false;
	}
	if (mprotect(ctx->region + (mp->first + first) * ctx->page_size, n * ctx->page_size, prots[p]) < 0) {
		if (errno == ENOMEM)	/* too many VMAs: start over */
			(void)stress_ksm_unmerge_mprotect_rw(ctx, mp);
		else
			stress_ksm_unmerge_racer_fail(run, "mprotect of pages %zu..%zu failed, errno=%d (%s)",
				mp->first + first, mp->first + first + n - 1, errno, strerror(errno));
	} else {
		for (i = first; i < first + n; i++) {
			mp->nprot += (p != KSM_PROT_RW) - (mp->prot[i] != KSM_PROT_RW);
			mp->prot[i] = p;
		}
		mp->toggles++;
		run->rs->ops++;
	}
	(void)pthread_mutex_unlock(&mp->lock);
	(void)shim_nanosleep_uint64(50000);
	return true;
}

/*
 *  stress_ksm_unmerge_mprotect_park()
 *	before parking, and when the run ends: everything RW again
 */
static void stress_ksm_unmerge_mprotect_park(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)run->priv;

	(void)pthread_mutex_lock(&mp->lock);
	if (stress_ksm_unmerge_mprotect_rw(ctx, mp) < 0)
		stress_ksm_unmerge_racer_fail(run, "restoring PROT_READ|PROT_WRITE failed, errno=%d (%s)",
			errno, strerror(errno));
	(void)pthread_mutex_unlock(&mp->lock);
}

/*
 *  stress_ksm_unmerge_mprotect_phase()
 *	merging: toggles on; unmerging: which KSM pages are protected now;
 *	verify: each must be unshared by the unmerge (evidence), then RW
 */
static void stress_ksm_unmerge_mprotect_phase(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)run->priv;
	uint8_t *region = ctx->region + mp->first * ctx->page_size;
	size_t i;

	(void)pthread_mutex_lock(&mp->lock);
	if (phase == KSM_PHASE_MERGING) {
		mp->frozen = false;
		mp->toggles = 0;
	} else if (phase == KSM_PHASE_UNMERGING && mp->nprot &&
		   stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, region, mp->n, ctx->page_size, mp->pm) == 0) {
		for (i = 0; i < mp->n; i++)
			if (mp->prot[i] != KSM_PROT_RW && stress_ksm_unmerge_is_ksm(stress_ksm_unmerge_page_state(ctx,
					mp->pm[i], 0, stress_ksm_unmerge_page_kind(ctx->pattern, mp->first + i))))
				mp->snap[i] = mp->pm[i] & PM_PFN_MASK;
	} else if (phase == KSM_PHASE_VERIFY || phase == KSM_PHASE_IDLE) {
		mp->frozen = true;
		if (phase == KSM_PHASE_VERIFY &&
		    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, region, mp->n, ctx->page_size, mp->pm) == 0) {
			for (i = 0; i < mp->n; i++) {
				int what;

				if (!mp->snap[i])
					continue;
				what = stress_ksm_unmerge_page_state(ctx, mp->pm[i], 0,
					stress_ksm_unmerge_page_kind(ctx->pattern, mp->first + i));
				run->rs->evidence += (what == KSM_PAGE_PRIVATE);
				/* a discarded page read back: pagemap cannot tell it from a KSM zero page */
				if (!stress_ksm_unmerge_is_ksm(what) || (what == KSM_PAGE_KZERO &&
				    stress_ksm_unmerge_others_run(ctx, run->r)))
					continue;
				stress_ksm_unmerge_racer_fail(run, "page %zu was a KSM page (pfn %#" PRIx64 ") under %s "
					"at the start of the unmerge and still maps a KSM page after it (pfn %#" PRIx64
					", kpageflags %#" PRIx64 "); cycle %" PRIu64 ", racers %s", mp->first + i,
					mp->snap[i], mp->prot[i] == KSM_PROT_NONE ? "PROT_NONE" : "PROT_READ",
					(uint64_t)(mp->pm[i] & PM_PFN_MASK), stress_ksm_unmerge_kpf(ctx->kpageflags_fd,
					mp->pm[i] & PM_PFN_MASK), ctx->cycle, ctx->racers_str);
				break;
			}
		}
		(void)shim_memset(mp->snap, 0, mp->n * sizeof(*mp->snap));
		if (stress_ksm_unmerge_mprotect_rw(ctx, mp) < 0)
			stress_ksm_unmerge_racer_fail(run, "restoring PROT_READ|PROT_WRITE failed, errno=%d (%s)",
				errno, strerror(errno));
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

	if (mp->prot && mp->snap && mp->pm)
		(void)pthread_mutex_destroy(&mp->lock);
	free(mp->prot);
	free(mp->snap);
	free(mp->pm);
	stress_ksm_unmerge_priv_stop(ctx, run);
}

/*
 *  stress_ksm_unmerge_mprotect_start()
 *	the window (other racers that touch pages stay out of it) and its maps
 */
static int stress_ksm_unmerge_mprotect_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mprotect_t *mp;

	if (stress_ksm_unmerge_priv_start(run, sizeof(*mp)) < 0)
		return -1;
	mp = (stress_ksm_unmerge_mprotect_t *)run->priv;
	mp->n = STRESS_MAXIMUM(ctx->npages / 4, (size_t)1);
	mp->first = ctx->npages - mp->n;
	mp->frozen = true;
	mp->prot = calloc(mp->n, 1);
	mp->snap = calloc(mp->n, sizeof(*mp->snap));
	mp->pm = calloc(mp->n, sizeof(*mp->pm));
	if (!mp->prot || !mp->snap || !mp->pm) {
		stress_ksm_unmerge_mprotect_stop(ctx, run);
		return stress_ksm_unmerge_racer_reason(run, "out of memory for the protection map");
	}
	(void)pthread_mutex_init(&mp->lock, NULL);
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
 *	discard 1-16 random pages while merged or unmerging; count those that were KSM pages
 */
static bool stress_ksm_unmerge_dontneed_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_dontneed_t *d = (stress_ksm_unmerge_dontneed_t *)run->priv;
	uint8_t st[KSM_OP_PAGES];
	size_t first, j, n;

	if (d->cycle != ctx->cycle) {
		d->cycle = ctx->cycle;
		d->ranges = 0;
	}
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
 *	every racer parked (the mprotect racer made pages RW): refill the holes
 */
static void stress_ksm_unmerge_dontneed_restore(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_dontneed_t *d = (stress_ksm_unmerge_dontneed_t *)run->priv;
	size_t i;

	for (i = 0; i < ctx->npages; i++) {
		if (!d->holes[i])
			continue;
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
	stress_ksm_unmerge_dontneed_t *d;

	if (stress_ksm_unmerge_priv_start(run, sizeof(*d)) < 0)
		return -1;
	d = (stress_ksm_unmerge_dontneed_t *)run->priv;
	d->holes = calloc(ctx->npages, 1);
	if (d->holes)
		return 0;
	stress_ksm_unmerge_priv_stop(ctx, run);
	return stress_ksm_unmerge_racer_reason(run, "out of memory for the hole map");
}

/*
 *  stress_ksm_unmerge_dontneed_stop()
 *	free the hole map
 */
static void stress_ksm_unmerge_dontneed_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	free(((stress_ksm_unmerge_dontneed_t *)run->priv)->holes);
	stress_ksm_unmerge_priv_stop(ctx, run);
}

/* ---- sparse: the unmerge walk over a huge, mostly empty range ---- */

#define KSM_SPARSE_STRIDE	(64ULL * MB)	/* one populated page per */
#define KSM_SPARSE_POPULATED	(1024)		/* populated pages at most */

typedef struct {
	uint8_t *base;			/* NULL once unmapped */
	size_t size, stride, populated;
	bool mergeable;
	double probe_ns, last_ns;	/* walk ns per page: a 1 GiB probe, the last walk */
} stress_ksm_unmerge_sparse_t;

/*
 *  stress_ksm_unmerge_sparse_layout()
 *	pure: bytes between populated pages of a size-byte range (64 MiB, or
 *	more for at most 1024 pages, or half a small range); their count in *n
 */
static size_t stress_ksm_unmerge_sparse_layout(const size_t size, const size_t page_size, size_t *n)
{
	size_t stride = (size_t)KSM_SPARSE_STRIDE;

	if (size < 2 * stride)
		stride = (size / 2) & ~(page_size - 1);
	else if (size / stride > KSM_SPARSE_POPULATED)
		stride = ((size + KSM_SPARSE_POPULATED - 1) / KSM_SPARSE_POPULATED + page_size - 1) & ~(page_size - 1);
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
 *  stress_ksm_unmerge_sparse_walk()
 *	ns per page of a timed MADV_UNMERGEABLE over a mergeable range; 0 if it failed
 */
static double stress_ksm_unmerge_sparse_walk(uint8_t *p, const size_t bytes, const size_t page_size)
{
	uint64_t t0, t1;
	int ret;

	if (madvise(p, bytes, MADV_MERGEABLE) < 0)
		return 0.0;
	t0 = stress_ksm_unmerge_now_ns();
	ret = madvise(p, bytes, MADV_UNMERGEABLE);
	t1 = stress_ksm_unmerge_now_ns();
	return ret < 0 ? 0.0 : (double)(t1 - t0) / (double)(bytes / page_size);
}

/*
 *  stress_ksm_unmerge_sparse_fit()
 *	the range's size: the option cut to a quarter of the commit room under
 *	vm.overcommit_memory=2 (which charges it in full), half of what
 *	RLIMIT_AS leaves, and a walk of about 1 s where a stop signal has
 *	SA_RESTART (the stop could not interrupt it); each cut said once
 */
static size_t stress_ksm_unmerge_sparse_fit(stress_ksm_unmerge_ctx_t *ctx, size_t size, const double ns)
{
	static const int sigs[] = { SIGALRM, SIGINT, SIGTERM };
	const size_t ps = ctx->page_size;
	struct rlimit rl;
	struct sigaction sa;
	size_t fit, i;

	if (stress_ksm_unmerge_file_field("/proc/sys/vm/overcommit_memory", NULL) == 2) {
		const int64_t l = stress_ksm_unmerge_file_field("/proc/meminfo", "CommitLimit");
		const int64_t u = stress_ksm_unmerge_file_field("/proc/meminfo", "Committed_AS");

		fit = (size_t)((uint64_t)(l > u ? l - u : 0) * KB / 4 / ctx->args->instances) & ~(ps - 1);
		if (fit < size && stress_instance_zero(ctx->args))
			pr_inf("%s: sparse racer: vm.overcommit_memory=2 charges the whole range: %zu bytes per "
				"instance, a quarter of CommitLimit - Committed_AS\n", ctx->args->name, fit);
		size = STRESS_MINIMUM(size, fit);
	}
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		const uint64_t vm = (uint64_t)STRESS_MAXIMUM(stress_ksm_unmerge_file_field("/proc/self/status",
			"VmSize"), (int64_t)0) * KB;

		fit = (size_t)(((uint64_t)rl.rlim_cur > vm ? ((uint64_t)rl.rlim_cur - vm) / 2 : 0) & ~((uint64_t)ps - 1));
		if (fit < size && stress_instance_zero(ctx->args))
			pr_inf("%s: sparse racer: RLIMIT_AS is %" PRIu64 " bytes: the range is cut to %zu bytes\n",
				ctx->args->name, (uint64_t)rl.rlim_cur, fit);
		size = STRESS_MINIMUM(size, fit);
	}
	for (i = 0; i < SIZEOF_ARRAY(sigs); i++) {
		if (sigaction(sigs[i], NULL, &sa) < 0 || !(sa.sa_flags & SA_RESTART) ||
		    sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN)
			continue;
		fit = (size_t)(1.0E9 / (ns > 0.0 ? ns : 250.0)) * ps;
		if (fit < size && stress_instance_zero(ctx->args))
			pr_inf("%s: sparse racer: signal %d restarts system calls (SA_RESTART), so the stop "
				"could not interrupt a walk: the range is cut to %zu bytes (about 1 s)\n",
				ctx->args->name, sigs[i], fit);
		size = STRESS_MINIMUM(size, fit);
	}
	return STRESS_MAXIMUM(size, 2 * ps);
}

/*
 *  stress_ksm_unmerge_sparse_phase()
 *	merging: the range mergeable; unmerging: its timed MADV_UNMERGEABLE
 *	(the hang bound extended by the predicted walk), retried after a
 *	handled signal; its populated pages then intact and private
 */
static void stress_ksm_unmerge_sparse_phase(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_sparse_t *s = (stress_ksm_unmerge_sparse_t *)run->priv;
	const size_t pages = s->size / ctx->page_size;
	uint64_t t0, spent = 0, ksm = 0;
	size_t k;
	int ret, err;

	if (!s->base || (phase == KSM_PHASE_MERGING && s->mergeable) || (phase == KSM_PHASE_UNMERGING && !s->mergeable))
		return;
	if (phase == KSM_PHASE_MERGING) {
		if (madvise(s->base, s->size, MADV_MERGEABLE) < 0)
			stress_ksm_unmerge_racer_fail(run, "MADV_MERGEABLE of %zu bytes failed, errno=%d (%s)",
				s->size, errno, strerror(errno));
		s->mergeable = true;
		return;
	}
	if (phase != KSM_PHASE_UNMERGING)
		return;
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
		(void)munmap(s->base, s->size);	/* so a prctl unmerge does not walk it again */
		s->base = NULL;
		return;
	}
	if (ret < 0) {
		stress_ksm_unmerge_racer_fail(run, "MADV_UNMERGEABLE of %zu bytes failed, errno=%d (%s)",
			s->size, err, strerror(err));
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
		if (stress_ksm_unmerge_same_check(ctx, s->base + k * s->stride, 1) >= 0) {
			stress_ksm_unmerge_racer_fail(run, "populated page %zu (offset %zu) lost its data after unmerge",
				k, k * s->stride);
			break;
		}
		if (stress_ksm_unmerge_ksm_count(ctx, s->base + k * s->stride, 1)) {
			stress_ksm_unmerge_racer_fail(run, "populated page %zu (offset %zu) is still a KSM page "
				"after MADV_UNMERGEABLE", k, k * s->stride);
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

	if (s->base)
		(void)munmap(s->base, s->size);
	stress_ksm_unmerge_priv_stop(ctx, run);
}

/*
 *  stress_ksm_unmerge_sparse_start()
 *	probe the walk, size and reserve the range (MAP_NORESERVE, halved on
 *	ENOMEM), MADV_DONTFORK (children must not share its pages: where
 *	KPF_KSM lies a page mapped by three ptes reads as a KSM page),
 *	populate one page per stride with the same page
 */
static int stress_ksm_unmerge_sparse_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	const size_t ps = ctx->page_size;
	stress_ksm_unmerge_sparse_t *s;
	size_t want = DEFAULT_KSM_UNMERGE_SPARSE, k;
	const int64_t hung = stress_ksm_unmerge_file_field("/proc/sys/kernel/hung_task_timeout_secs", NULL);
	uint8_t *p;
	double walk;

	if (stress_ksm_unmerge_priv_start(run, sizeof(*s)) < 0)
		return -1;
	s = (stress_ksm_unmerge_sparse_t *)run->priv;
	p = stress_ksm_unmerge_map(GB, MAP_NORESERVE, "ksm-unmerge-probe");
	if (p) {
		(void)shim_memset(p + GB / 2, 0x5a, ps);
		s->probe_ns = stress_ksm_unmerge_sparse_walk(p, GB, ps);
		(void)munmap(p, GB);
	}
	(void)stress_setting_get("ksm-unmerge-sparse", &want);
	s->size = stress_ksm_unmerge_sparse_fit(ctx, want & ~(ps - 1), s->probe_ns);
	for (k = 0; !(s->base = stress_ksm_unmerge_map(s->size, MAP_NORESERVE, "ksm-unmerge-sparse")); k++) {
		if (errno != ENOMEM || k >= 8 || s->size / 2 < 2 * ps)
			break;
		s->size = (s->size / 2) & ~(ps - 1);
	}
	if (!s->base || madvise(s->base, s->size, MADV_DONTFORK) < 0) {
		(void)stress_ksm_unmerge_racer_reason(run, "cannot reserve %zu bytes of address space (mmap, "
			"MADV_DONTFORK), errno=%d (%s)", s->size, errno, strerror(errno));
		stress_ksm_unmerge_sparse_stop(ctx, run);
		return -1;
	}
	if (s->size < want && stress_instance_zero(ctx->args))
		pr_inf("%s: sparse racer: %zu bytes of address space (%zu asked)\n", ctx->args->name, s->size, want);
	s->stride = stress_ksm_unmerge_sparse_layout(s->size, ps, &s->populated);
	for (k = 0; k < s->populated; k++)
		stress_ksm_unmerge_same_fill(ctx, s->base + k * s->stride, 1);
	walk = (double)(s->size / ps) * (s->probe_ns > 0.0 ? s->probe_ns : 250.0) / 1.0E9;
	if (walk >= 1.0 && stress_instance_zero(ctx->args)) {
		pr_inf("%s: sparse racer: %zu bytes, %zu populated pages; one unmerge is predicted to take "
			"%.1f s (%.1f ns per page), allowed %.0f s beyond the hang bound\n", ctx->args->name,
			s->size, s->populated, walk, s->probe_ns, stress_ksm_unmerge_sparse_allow(s->size / ps,
			s->probe_ns, 0.0));
		if (hung > 0 && walk > (double)hung)
			pr_inf("%s: sparse racer: the walk holds the mmap write lock past "
				"kernel.hung_task_timeout_secs: ksmd, blocked on it, will be reported as a hung "
				"task (a kernel warning)\n", ctx->args->name);
	}
	return 0;
}

/* ---- thp: KSM split of THPs, unmerge racing compaction ---- */
#if defined(MADV_HUGEPAGE) && defined(HAVE_SYS_FILE_H)

#define KSM_THP_MAX		(4)		/* PMD-sized chunks at most */
#define KSM_THP_COMPACT		"/proc/sys/vm/compact_memory"

typedef struct {
	uint8_t *map, *thp;		/* mapping with alignment slack, PMD aligned region */
	size_t map_size, size, npages, pmd, chunks;
	uint64_t *pm, *flags;
	bool was_thp[KSM_THP_MAX];	/* THP-mapped before merging */
	volatile uint64_t unmerged;	/* cycle whose unmerge the thread did */
	uint64_t compacted;		/* cycle compaction ran in */
	int verify_fd, compact_fd;	/* compact_memory, locked shared while verifying */
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
	if (!(flags[0] & KPF_HEAD))
		return 2;
	for (i = 1; i < per; i++)
		if (!(pm[i] & PM_PRESENT) || (pm[i] & PM_PFN_MASK) != (pm[0] & PM_PFN_MASK) + i || !(flags[i] & KPF_TAIL))
			return 2;
	return 1;
}

/*
 *  stress_ksm_unmerge_thp_read()
 *	pagemap and kpageflags of the THP region; -1 on error
 */
static int stress_ksm_unmerge_thp_read(const stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_thp_t *t)
{
	size_t i;

	if (!ctx->have_pfns || stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, t->thp, t->npages, ctx->page_size, t->pm) < 0)
		return -1;
	for (i = 0; i < t->npages; i++)
		t->flags[i] = stress_ksm_unmerge_kpf(ctx->kpageflags_fd, stress_ksm_unmerge_pm_pfn(t->pm[i]));
	return 0;
}

/*
 *  stress_ksm_unmerge_thp_phase()
 *	merging: fresh THPs of the same page, which chunks really are THPs,
 *	then mergeable; merged: THPs KSM split and merged (evidence); no
 *	compaction by any instance while this one verifies (migration
 *	entries and reused pfns would read as lost or shared pages)
 */
static void stress_ksm_unmerge_thp_phase(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)run->priv;
	const size_t per = t->pmd / ctx->page_size;
	size_t c, i;

	if (phase == KSM_PHASE_MERGING) {
		(void)madvise(t->thp, t->size, MADV_DONTNEED);
		stress_ksm_unmerge_same_fill(ctx, t->thp, t->npages);
		for (c = 0; c < t->chunks; c++) {
			const int kind = (stress_ksm_unmerge_thp_read(ctx, t) < 0) ? 0 :
				stress_ksm_unmerge_thp_kind(t->pm + c * per, t->flags + c * per, per);

			t->was_thp[c] = (kind != 0);
			t->thps += t->was_thp[c];
			run->rs->detail[0] += (kind == 1);
			run->rs->detail[1] += (kind == 2);
		}
		if (madvise(t->thp, t->size, MADV_MERGEABLE) < 0)
			stress_ksm_unmerge_racer_fail(run, "MADV_MERGEABLE on the THP region failed, errno=%d (%s)",
				errno, strerror(errno));
	} else if (phase == KSM_PHASE_MERGED && stress_ksm_unmerge_thp_read(ctx, t) == 0) {
		for (c = 0; c < t->chunks; c++) {
			uint64_t ksm = 0;

			for (i = c * per; i < (c + 1) * per; i++)
				ksm += stress_ksm_unmerge_page_what(ctx->iface, t->pm[i], t->flags[i], 0, 0, -1) == KSM_PAGE_KSM;
			run->rs->evidence += (t->was_thp[c] && ksm);
		}
	}
	if (t->verify_fd >= 0)
		while (flock(t->verify_fd, (phase == KSM_PHASE_MERGED || phase == KSM_PHASE_VERIFY) ? LOCK_SH : LOCK_UN) < 0 &&
		       errno == EINTR)
			;
}

/*
 *  stress_ksm_unmerge_thp_unmerge()
 *	the thread unmerges the THP region while the main unmerge runs, once
 *	a cycle; as root it compacts memory once a cycle meanwhile (unless
 *	some instance verifies), so break_ksm() meets migration entries
 */
static bool stress_ksm_unmerge_thp_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)run->priv;
	const uint64_t cycle = ctx->cycle;

	if (ctx->phase != KSM_PHASE_UNMERGING || (t->unmerged == cycle && (t->compact_fd < 0 || t->compacted == cycle)))
		return false;
	if (t->compact_fd >= 0 && t->compacted != cycle && flock(t->compact_fd, LOCK_EX | LOCK_NB) == 0) {
		if (write(t->compact_fd, "1", 1) != 1) {
			(void)close(t->compact_fd);
			t->compact_fd = -1;
		}
		(void)flock(t->compact_fd, LOCK_UN);
		t->compacted = cycle;
	}
	if (t->unmerged != cycle) {
		t->unmerged = cycle;
		if (madvise(t->thp, t->size, MADV_UNMERGEABLE) < 0)
			stress_ksm_unmerge_racer_fail(run, "MADV_UNMERGEABLE on the THP region failed, errno=%d (%s)",
				errno, strerror(errno));
		run->rs->ops++;
	}
	return true;
}

/*
 *  stress_ksm_unmerge_thp_park()
 *	before parking: unmerge (if the main unmerge was too quick), then
 *	every page holds the same page and none is still a KSM page
 */
static void stress_ksm_unmerge_thp_park(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)run->priv;
	const ssize_t bad = stress_ksm_unmerge_same_check(ctx, t->thp, t->npages);
	size_t i;

	if (t->unmerged != ctx->cycle && madvise(t->thp, t->size, MADV_UNMERGEABLE) < 0 && stress_continue(ctx->args))
		stress_ksm_unmerge_racer_fail(run, "MADV_UNMERGEABLE on the THP region failed, errno=%d (%s)",
			errno, strerror(errno));
	t->unmerged = ctx->cycle;
	if (bad >= 0) {
		stress_ksm_unmerge_racer_fail(run, "THP region page %zd lost its data after unmerge", bad);
		return;
	}
	if (stress_ksm_unmerge_thp_read(ctx, t) < 0)
		return;
	for (i = 0; i < t->npages; i++)
		if (stress_ksm_unmerge_is_ksm(stress_ksm_unmerge_page_what(ctx->iface, t->pm[i], t->flags[i], 0, 0, -1))) {
			stress_ksm_unmerge_racer_fail(run, "THP region page %zu is still a KSM page after unmerge "
				"(pagemap %#" PRIx64 ", kpageflags %#" PRIx64 ")", i, t->pm[i], t->flags[i]);
			return;
		}
}

/*
 *  stress_ksm_unmerge_thp_supported()
 *	transparent huge pages built in and not disabled
 */
static int stress_ksm_unmerge_thp_supported(char *reason, const size_t len)
{
	char buf[128];
	const ssize_t n = stress_fs_file_read("/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof(buf));

	if (n > 0 && !strstr(buf, "[never]"))
		return 0;
	(void)snprintf(reason, len, "transparent huge pages %s", n > 0 ? "disabled ([never])" : "not built in");
	return -1;
}

/*
 *  stress_ksm_unmerge_thp_stop()
 *	unmap, close, free
 */
static void stress_ksm_unmerge_thp_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)run->priv;

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
	stress_ksm_unmerge_priv_stop(ctx, run);
}

/*
 *  stress_ksm_unmerge_thp_start()
 *	up to 4 PMD-sized chunks (hpage_pmd_size, not assumed), PMD aligned,
 *	MADV_HUGEPAGE; compact_memory as root
 */
static int stress_ksm_unmerge_thp_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	const int64_t pmd = stress_ksm_unmerge_file_field("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", NULL);
	stress_ksm_unmerge_thp_t *t;

	if (pmd < 2 * (int64_t)ctx->page_size || (pmd & (pmd - 1)) || pmd > 32 * (int64_t)MB)
		return stress_ksm_unmerge_racer_reason(run, "hpage_pmd_size unreadable or unusable (%" PRId64 ")", pmd);
	if (stress_ksm_unmerge_priv_start(run, sizeof(*t)) < 0)
		return -1;
	t = (stress_ksm_unmerge_thp_t *)run->priv;
	t->verify_fd = t->compact_fd = -1;
	t->pmd = (size_t)pmd;
	t->chunks = STRESS_MAXIMUM(STRESS_MINIMUM((size_t)(8 * MB) / t->pmd, (size_t)KSM_THP_MAX), (size_t)1);
	t->size = t->chunks * t->pmd;
	t->npages = t->size / ctx->page_size;
	t->map_size = t->size + t->pmd;
	t->map = mmap(NULL, t->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	t->pm = calloc(t->npages, sizeof(uint64_t));
	t->flags = calloc(t->npages, sizeof(uint64_t));
	if (t->map == MAP_FAILED)
		t->map = NULL;
	t->thp = t->map ? (uint8_t *)(((uintptr_t)t->map + t->pmd - 1) & ~((uintptr_t)t->pmd - 1)) : NULL;
	if (!t->map || !t->pm || !t->flags || madvise(t->thp, t->size, MADV_HUGEPAGE) < 0) {
		(void)stress_ksm_unmerge_racer_reason(run, "mmap, MADV_HUGEPAGE or memory for %zu bytes failed, "
			"errno=%d (%s)", t->map_size, errno, strerror(errno));
		stress_ksm_unmerge_thp_stop(ctx, run);
		return -1;
	}
	stress_memory_anon_name_set(t->thp, t->size, "ksm-unmerge-thp");
	if (geteuid() == 0) {
		t->verify_fd = open(KSM_THP_COMPACT, O_WRONLY | O_CLOEXEC);
		t->compact_fd = open(KSM_THP_COMPACT, O_WRONLY | O_CLOEXEC);
	}
	return 0;
}
#define KSM_THP_NOT_BUILT	NULL
#else
#define KSM_THP_NOT_BUILT	"MADV_HUGEPAGE missing"
#define stress_ksm_unmerge_thp_supported	NULL
#define stress_ksm_unmerge_thp_start		NULL
#define stress_ksm_unmerge_thp_stop		NULL
#define stress_ksm_unmerge_thp_op		NULL
#define stress_ksm_unmerge_thp_park		NULL
#define stress_ksm_unmerge_thp_phase		NULL
#endif

/* ---- signal: signals interrupting the unmerge walk (EINTR, retried) ---- */

typedef struct {
	pthread_mutex_t lock;		/* the window vs sending */
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
 *	one timed unmerge call with the signal racer on: inside its window
 *	and retried while the kernel returns EINTR (the evidence); the
 *	cycle's verification then requires the final state to be complete
 */
static int stress_ksm_unmerge_signal_call(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run,
	int (*call)(stress_ksm_unmerge_ctx_t *ctx, const uint64_t sw, const size_t off, const size_t len),
	const uint64_t sw, const size_t off, const size_t len)
{
	stress_ksm_unmerge_signal_t *s = (stress_ksm_unmerge_signal_t *)run->priv;
	int ret, err, tries;

	s->sent = 0;
	s->window = true;
	for (tries = 0; ; tries++) {
		ret = call(ctx, sw, off, len);
		err = errno;
		if (ret == 0 || err != EINTR || !stress_continue(ctx->args) || tries > 256)
			break;
		run->rs->evidence++;
	}
	(void)pthread_mutex_lock(&s->lock);
	s->window = false;
	(void)pthread_mutex_unlock(&s->lock);
	if (ret < 0 && err == EINTR && stress_continue(ctx->args))
		stress_ksm_unmerge_racer_fail(run, "the unmerge still returned EINTR after %d retries and %" PRIu32
			" signals", tries, s->sent);
	errno = err;
	return ret;
}

/*
 *  stress_ksm_unmerge_signal_start()
 *	a handler without SA_RESTART (stress-ng's handler setup)
 */
static int stress_ksm_unmerge_signal_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_signal_t *s;

	if (stress_ksm_unmerge_priv_start(run, sizeof(*s)) < 0)
		return -1;
	s = (stress_ksm_unmerge_signal_t *)run->priv;
	if (stress_signal_handler(ctx->args->name, SIGRTMIN + 3, stress_ksm_unmerge_signal_handler, &s->old) < 0) {
		stress_ksm_unmerge_priv_stop(ctx, run);
		return stress_ksm_unmerge_racer_reason(run, "sigaction of signal %d failed, errno=%d (%s)",
			SIGRTMIN + 3, errno, strerror(errno));
	}
	(void)pthread_mutex_init(&s->lock, NULL);
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
	(void)pthread_mutex_destroy(&s->lock);
	stress_ksm_unmerge_priv_stop(ctx, run);
}

/* ---- mremap: moves of merged ranges while merged and unmerging ---- */

#if !defined(MREMAP_MAYMOVE)
#define MREMAP_MAYMOVE		(1)
#endif
#if !defined(MREMAP_FIXED)
#define MREMAP_FIXED		(2)
#endif
#if !defined(MREMAP_DONTUNMAP)
#define MREMAP_DONTUNMAP	(4)
#endif

typedef struct {
	uint8_t *range, *scratch;	/* its mergeable range, the moves' reserved target */
	size_t npages, size;
	bool broken;			/* a move back failed: no more moves */
} stress_ksm_unmerge_mremap_t;

/*
 *  stress_ksm_unmerge_mremap_move()
 *	move len bytes from src to dst, src kept mapped (empty); 0 or -1
 */
static int stress_ksm_unmerge_mremap_move(uint8_t *src, uint8_t *dst, const size_t len)
{
	void *p = mremap(src, len, len, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, dst);

	if (p == dst)
		return 0;
	if (p != MAP_FAILED)
		errno = EFAULT;
	return -1;
}

/*
 *  stress_ksm_unmerge_mremap_op()
 *	move 1-16 random pages of the range out and back (moving a mergeable
 *	range unmerges it first), their data checked each way; before 6.17 a
 *	move over two VMAs (the moves back can leave pieces) fails with
 *	EFAULT: then it is cut at the VMA's end (counted)
 */
static bool stress_ksm_unmerge_mremap_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mremap_t *m = (stress_ksm_unmerge_mremap_t *)run->priv;
	size_t n = 1 + stress_mwc32modn(16), first, off;
	char vma[320];
	uint64_t ksm;

	if (m->broken || !stress_ksm_unmerge_active(ctx))
		return false;
	first = stress_mwc32modn((uint32_t)(m->npages - n + 1));
	off = first * ctx->page_size;
	stress_ksm_unmerge_met(run);
	ksm = stress_ksm_unmerge_ksm_count(ctx, m->range + off, n);
	if (stress_ksm_unmerge_mremap_move(m->range + off, m->scratch + off, n * ctx->page_size) < 0) {
		unsigned long lo = 0, hi = 0;

		/* cut at the VMA's end */
		if (errno == EFAULT && stress_ksm_unmerge_vmflags(m->range + off, vma, sizeof(vma), false) == 0 &&
		    sscanf(vma, "%lx-%lx", &lo, &hi) == 2 && hi < (uintptr_t)(m->range + off + n * ctx->page_size)) {
			n = (hi - (uintptr_t)(m->range + off)) / ctx->page_size;
			run->rs->detail[0]++;
		}
		if (!hi || stress_ksm_unmerge_mremap_move(m->range + off, m->scratch + off, n * ctx->page_size) < 0) {
			stress_ksm_unmerge_racer_fail(run, "moving %zu pages (%" PRIu64 " KSM) out failed, errno=%d (%s)",
				n, ksm, errno, strerror(errno));
			return true;
		}
	}
	if (stress_ksm_unmerge_same_check(ctx, m->scratch + off, n) >= 0)
		stress_ksm_unmerge_racer_fail(run, "pages %zu..%zu of the range lost their data when moved "
			"(%" PRIu64 " of them KSM pages)", first, first + n - 1, ksm);
	else
		run->rs->evidence += ksm;
	if (stress_ksm_unmerge_mremap_move(m->scratch + off, m->range + off, n * ctx->page_size) < 0) {
		m->broken = true;
		stress_ksm_unmerge_racer_fail(run, "moving %zu pages back failed, errno=%d (%s)", n, errno, strerror(errno));
		return true;
	}
	if (stress_ksm_unmerge_same_check(ctx, m->range + off, n) >= 0)
		stress_ksm_unmerge_racer_fail(run, "pages %zu..%zu of the range lost their data when moved back",
			first, first + n - 1);
	run->rs->ops++;
	(void)shim_nanosleep_uint64(stress_mwc32modn(50000));
	return true;
}

/*
 *  stress_ksm_unmerge_mremap_phase()
 *	merging: the range mergeable; unmerging: unmerged while moves run;
 *	idle, every racer parked: a last unmerge leaves no KSM page (a part
 *	moved back later brought VM_MERGEABLE with it) and the data intact
 */
static void stress_ksm_unmerge_mremap_phase(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_mremap_t *m = (stress_ksm_unmerge_mremap_t *)run->priv;
	const bool final = (phase == KSM_PHASE_IDLE && ctx->quiesce == ctx->cycle);
	uint64_t ksm;

	if (m->broken || (phase != KSM_PHASE_MERGING && phase != KSM_PHASE_UNMERGING && !final))
		return;
	if (madvise(m->range, m->size, phase == KSM_PHASE_MERGING ? MADV_MERGEABLE : MADV_UNMERGEABLE) < 0) {
		if (errno != EINTR || stress_continue(ctx->args))
			stress_ksm_unmerge_racer_fail(run, "madvise of the range failed, errno=%d (%s)", errno, strerror(errno));
		return;
	}
	if (!final)
		return;
	ksm = stress_ksm_unmerge_ksm_count(ctx, m->range, m->npages);
	if (ksm)
		stress_ksm_unmerge_racer_fail(run, "%" PRIu64 " pages of the range are still KSM pages after "
			"MADV_UNMERGEABLE with no move running", ksm);
	if (stress_ksm_unmerge_same_check(ctx, m->range, m->npages) >= 0)
		stress_ksm_unmerge_racer_fail(run, "the range lost data after the moves and the unmerge");
}

/*
 *  stress_ksm_unmerge_mremap_stop()
 *	unmap both ranges
 */
static void stress_ksm_unmerge_mremap_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mremap_t *m = (stress_ksm_unmerge_mremap_t *)run->priv;

	if (m->range)
		(void)munmap(m->range, m->size);
	if (m->scratch && m->scratch != MAP_FAILED)
		(void)munmap(m->scratch, m->size);
	stress_ksm_unmerge_priv_stop(ctx, run);
}

/*
 *  stress_ksm_unmerge_mremap_start()
 *	its range (a quarter of the region, 16-1024 pages of the same page,
 *	so it merges with the region) and the reserved target; one test move
 *	proves MREMAP_DONTUNMAP (5.7)
 */
static int stress_ksm_unmerge_mremap_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mremap_t *m;

	if (stress_ksm_unmerge_priv_start(run, sizeof(*m)) < 0)
		return -1;
	m = (stress_ksm_unmerge_mremap_t *)run->priv;
	m->npages = STRESS_MINIMUM(STRESS_MAXIMUM(ctx->npages / 4, (size_t)16), (size_t)1024);
	m->size = m->npages * ctx->page_size;
	m->range = stress_ksm_unmerge_map(m->size, 0, "ksm-unmerge-mremap");
	m->scratch = mmap(NULL, m->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!m->range || m->scratch == MAP_FAILED) {
		(void)stress_ksm_unmerge_racer_reason(run, "mmap of 2 x %zu bytes failed, errno=%d (%s)",
			m->size, errno, strerror(errno));
		stress_ksm_unmerge_mremap_stop(ctx, run);
		return -1;
	}
	stress_ksm_unmerge_same_fill(ctx, m->range, m->npages);
	if (stress_ksm_unmerge_mremap_move(m->range, m->scratch, ctx->page_size) < 0 ||
	    stress_ksm_unmerge_mremap_move(m->scratch, m->range, ctx->page_size) < 0) {
		(void)stress_ksm_unmerge_racer_reason(run, "mremap(MREMAP_DONTUNMAP) failed, errno=%d (%s) "
			"(needs Linux 5.7)", errno, strerror(errno));
		stress_ksm_unmerge_mremap_stop(ctx, run);
		return -1;
	}
	return 0;
}

/* ---- uffd-minor: MADV_UNMERGEABLE of a uffd-minor VMA (flags above bit 31) ---- */
#if defined(HAVE_LINUX_USERFAULTFD_H) && defined(UFFDIO_REGISTER_MODE_MINOR) &&	\
    defined(UFFD_FEATURE_MINOR_SHMEM) && defined(HAVE_MEMFD_CREATE)

#define KSM_MINOR_PAGES		(64)

typedef struct {
	int uffd, memfd;
	uint8_t *range;			/* MAP_PRIVATE of a memfd: shmem allows minor mode, KSM merges its copies */
	size_t size;
	bool registered;
} stress_ksm_unmerge_minor_t;

/*
 *  stress_ksm_unmerge_minor_unregister()
 *	drop the minor registration (where the broken kernel warned)
 */
static void stress_ksm_unmerge_minor_unregister(stress_ksm_unmerge_run_t *run, stress_ksm_unmerge_minor_t *m)
{
	struct uffdio_range r = { (uintptr_t)m->range, m->size };

	if (m->registered && ioctl(m->uffd, UFFDIO_UNREGISTER, &r) < 0)
		stress_ksm_unmerge_racer_fail(run, "UFFDIO_UNREGISTER failed, errno=%d (%s)", errno, strerror(errno));
	m->registered = false;
}

/*
 *  stress_ksm_unmerge_minor_phase()
 *	merging: the range mergeable, then registered for minor faults;
 *	unmerging: MADV_UNMERGEABLE of it must keep its VmFlags but "mg"
 *	("ui", VM_UFFD_MINOR, bit 41, was cleared with a 32-bit mask before
 *	f04aad36a07c), leave no KSM page and keep the data; idle: unregistered
 */
static void stress_ksm_unmerge_minor_phase(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_minor_t *m = (stress_ksm_unmerge_minor_t *)run->priv;
	struct uffdio_register reg;
	char before[256], after[256];
	uint64_t ksm0, ksm1;

	if (phase == KSM_PHASE_MERGING) {
		(void)shim_memset(&reg, 0, sizeof(reg));
		reg.range.start = (uintptr_t)m->range;
		reg.range.len = m->size;
		reg.mode = UFFDIO_REGISTER_MODE_MINOR;
		if (madvise(m->range, m->size, MADV_MERGEABLE) < 0 || ioctl(m->uffd, UFFDIO_REGISTER, &reg) < 0)
			stress_ksm_unmerge_racer_fail(run, "MADV_MERGEABLE or UFFDIO_REGISTER (minor) failed, "
				"errno=%d (%s)", errno, strerror(errno));
		else
			m->registered = true;
	} else if (phase == KSM_PHASE_UNMERGING && m->registered) {
		if (stress_ksm_unmerge_vmflags(m->range, before, sizeof(before), true) < 0 ||
		    !stress_ksm_unmerge_has_flag(before, "ui")) {
			stress_ksm_unmerge_racer_fail(run, "the registered range has no \"ui\" in its VmFlags ('%s')", before);
		} else if (ksm0 = stress_ksm_unmerge_ksm_count(ctx, m->range, KSM_MINOR_PAGES),
			   madvise(m->range, m->size, MADV_UNMERGEABLE) < 0) {
			if (errno != EINTR || stress_continue(ctx->args))
				stress_ksm_unmerge_racer_fail(run, "MADV_UNMERGEABLE of the minor-registered range "
					"failed, errno=%d (%s)", errno, strerror(errno));
		} else {
			if (stress_ksm_unmerge_vmflags(m->range, after, sizeof(after), true) == 0 && strcmp(before, after))
				stress_ksm_unmerge_racer_fail(run, "MADV_UNMERGEABLE changed the VMA's flags beyond \"mg\": "
					"before '%s', after '%s'%s", before, after, stress_ksm_unmerge_has_flag(after, "ui") ? "" :
					" (VM_UFFD_MINOR, bit 41, lost: VM_MERGEABLE cleared with a 32-bit mask, "
					"fixed by f04aad36a07c)");
			ksm1 = stress_ksm_unmerge_ksm_count(ctx, m->range, KSM_MINOR_PAGES);
			if (ksm1)
				stress_ksm_unmerge_racer_fail(run, "%" PRIu64 " pages are still KSM pages after "
					"MADV_UNMERGEABLE", ksm1);
			else
				run->rs->evidence += ksm0;
			if (stress_ksm_unmerge_same_check(ctx, m->range, KSM_MINOR_PAGES) >= 0)
				stress_ksm_unmerge_racer_fail(run, "the range lost data in the unmerge");
			run->rs->ops++;
		}
		stress_ksm_unmerge_minor_unregister(run, m);
	} else if (phase == KSM_PHASE_IDLE) {
		stress_ksm_unmerge_minor_unregister(run, m);
	}
}

/*
 *  stress_ksm_unmerge_minor_supported()
 *	userfaultfd with minor faults on shmem (5.14)
 */
static int stress_ksm_unmerge_minor_supported(char *reason, const size_t len)
{
	bool tid;
	const int fd = stress_ksm_unmerge_uffd_open(UFFD_FEATURE_MINOR_SHMEM, reason, len, &tid);

	if (fd >= 0)
		(void)close(fd);
	return fd < 0 ? -1 : 0;
}

/*
 *  stress_ksm_unmerge_minor_stop()
 *	unregister, unmap, close
 */
static void stress_ksm_unmerge_minor_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_minor_t *m = (stress_ksm_unmerge_minor_t *)run->priv;

	stress_ksm_unmerge_minor_unregister(run, m);
	if (m->range && m->range != MAP_FAILED)
		(void)munmap(m->range, m->size);
	if (m->memfd >= 0)
		(void)close(m->memfd);
	if (m->uffd >= 0)
		(void)close(m->uffd);
	stress_ksm_unmerge_priv_stop(ctx, run);
}

/*
 *  stress_ksm_unmerge_minor_start()
 *	a memfd, its private mapping written with the same page, a userfaultfd
 */
static int stress_ksm_unmerge_minor_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_minor_t *m;
	bool tid;

	if (stress_ksm_unmerge_priv_start(run, sizeof(*m)) < 0)
		return -1;
	m = (stress_ksm_unmerge_minor_t *)run->priv;
	m->size = KSM_MINOR_PAGES * ctx->page_size;
	m->uffd = stress_ksm_unmerge_uffd_open(UFFD_FEATURE_MINOR_SHMEM, run->rs->reason, sizeof(run->rs->reason), &tid);
	m->memfd = shim_memfd_create("ksm-unmerge-minor", MFD_CLOEXEC);
	if (m->uffd < 0 || m->memfd < 0 || ftruncate(m->memfd, (off_t)m->size) < 0 ||
	    (m->range = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, m->memfd, 0)) == MAP_FAILED) {
		if (m->uffd >= 0)
			(void)stress_ksm_unmerge_racer_reason(run, "memfd of %zu bytes or its private mmap failed, "
				"errno=%d (%s)", m->size, errno, strerror(errno));
		stress_ksm_unmerge_minor_stop(ctx, run);
		return -1;
	}
	stress_ksm_unmerge_same_fill(ctx, m->range, KSM_MINOR_PAGES);
	return 0;
}
#define KSM_UFFD_MINOR_NOT_BUILT	NULL
#else
#define KSM_UFFD_MINOR_NOT_BUILT	"userfaultfd minor mode or memfd_create missing (HAVE_LINUX_USERFAULTFD_H)"
#define stress_ksm_unmerge_minor_supported	NULL
#define stress_ksm_unmerge_minor_start		NULL
#define stress_ksm_unmerge_minor_stop		NULL
#define stress_ksm_unmerge_minor_phase		NULL
#endif

/* ---- prctl-exec: PR_SET_MEMORY_MERGE across fork and exec ---- */
#if defined(HAVE_PTRACE)

/*
 *  stress_ksm_unmerge_exec_vmas()
 *	of the stopped, just exec'd process pid: the private writable VMAs
 *	exec mapped (not its stack) and how many carry "mg"; -1 if unreadable
 */
static int stress_ksm_unmerge_exec_vmas(const pid_t pid, size_t *vmas, size_t *mg, char *first, const size_t len)
{
	char path[64], line[512], range[64] = "", word[64], perms[8];
	bool wanted = false;
	FILE *fp;

	*vmas = *mg = 0;
	first[0] = '\0';
	(void)snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	fp = fopen(path, "re");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%63s %7s", word, perms) == 2 && strchr(word, '-') && strlen(perms) == 4) {
			/* the stack exec makes itself is never merge-any's (not an mmap) */
			wanted = perms[1] == 'w' && perms[3] == 'p' && !strstr(line, "[stack]");
			(void)shim_strscpy(range, line, sizeof(range));
			range[strcspn(range, "\n")] = '\0';
			continue;
		}
		if (!wanted || strncmp(line, "VmFlags:", 8))
			continue;
		(*vmas)++;
		if (stress_ksm_unmerge_has_flag(line + 8, "mg"))
			(*mg)++;
		else if (!first[0])
			(void)snprintf(first, len, "%s", range);
	}
	(void)fclose(fp);
	return 0;
}

/*
 *  stress_ksm_unmerge_exec_op()
 *	a child sets merge-any and execs the running binary under ptrace; in
 *	its exec stop the new mm must still be merge-any (ksm_stat, where the
 *	kernel has the field) and the private writable VMAs exec mapped must
 *	be mergeable ("mg"); ksmd scanning the new mm before they existed
 *	cleared merge-any until xu xin's "mm/ksm: fix exec/fork inheritance
 *	support for prctl"; then it is killed
 */
static bool stress_ksm_unmerge_exec_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	static char *const argv[] = { "stress-ng", "--exec-exit", NULL };
	static char *const envp[] = { NULL };
	const pid_t parent = getpid();
	char path[64], exe[PATH_MAX], first[128], buf[1024];
	size_t vmas, mg;
	int status;
	int64_t any = -1;
	pid_t pid;

	if (!stress_ksm_unmerge_active(ctx) || !stress_proc_self_exe_get(exe, sizeof(exe)))
		return false;
	pid = fork();
	if (pid < 0)
		return stress_ksm_unmerge_racer_reason(run, "fork failed, errno=%d (%s)", errno, strerror(errno)) < 0;
	if (pid == 0) {
		if (stress_ksm_unmerge_child_init(ctx, parent) < 0 || ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0 ||
		    prctl(PR_SET_MEMORY_MERGE, 1UL, 0UL, 0UL, 0UL) < 0)
			_exit(4);
		(void)execve(exe, argv, envp);
		_exit(5);
	}
	if (shim_waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		if (WIFEXITED(status) && stress_continue(ctx->args))
			stress_ksm_unmerge_racer_fail(run, "the child could not be traced, set merge-any or exec %s "
				"(exit %d: 4 ptrace/prctl, 5 execve)", exe, WEXITSTATUS(status));
		(void)stress_ksm_unmerge_reap(pid, 0.01, &status);
		return true;
	}
	(void)snprintf(path, sizeof(path), "/proc/%d/ksm_stat", (int)pid);
	if (stress_fs_file_read(path, buf, sizeof(buf)) > 0 && strstr(buf, "ksm_merge_any"))
		any = strstr(buf, "ksm_merge_any: yes") ? 1 : 0;
	if (stress_ksm_unmerge_exec_vmas(pid, &vmas, &mg, first, sizeof(first)) == 0) {
		run->rs->ops++;
		if (any == 0)
			stress_ksm_unmerge_racer_fail(run, "ksm_stat of the exec'd child says ksm_merge_any: no: "
				"merge-any set before exec was lost (xu xin's \"mm/ksm: fix exec/fork inheritance "
				"support for prctl\")");
		else if (mg < vmas)
			stress_ksm_unmerge_racer_fail(run, "with merge-any on, %zu of the %zu private writable VMAs "
				"the exec made are not mergeable (no \"mg\", first %s): merge-any not applied to new "
				"VMAs after exec", vmas - mg, vmas, first);
		else
			run->rs->evidence += (vmas > 0);
	}
	(void)stress_ksm_unmerge_reap(pid, 0.01, &status);
	(void)shim_nanosleep_uint64(20000000);
	return true;
}

/*
 *  stress_ksm_unmerge_exec_supported()
 *	PR_GET_MEMORY_MERGE (6.4)
 */
static int stress_ksm_unmerge_exec_supported(char *reason, const size_t len)
{
	if (prctl(PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL) >= 0)
		return 0;
	(void)snprintf(reason, len, "PR_GET_MEMORY_MERGE failed, errno=%d (%s) (needs Linux 6.4)", errno, strerror(errno));
	return -1;
}
#define KSM_PRCTL_EXEC_NOT_BUILT	NULL
#else
#define KSM_PRCTL_EXEC_NOT_BUILT	"ptrace missing (HAVE_PTRACE)"
#define stress_ksm_unmerge_exec_supported	NULL
#define stress_ksm_unmerge_exec_op		NULL
#endif

/* ---- fork-zero: a forked child charged KSM zero pages it does not map ---- */

/* what a fork-zero child saw, shared with the worker */
typedef struct {
	volatile int64_t uncopied;	/* the parent's KSM zero pages in DONTFORK/WIPEONFORK VMAs at fork() */
	volatile int64_t charged;	/* its ksm_stat ksm_zero_pages, first thing */
	volatile int64_t mapped;	/* KSM zero PTEs in all its VMAs (pagemap) */
	volatile int err;		/* errno of a failed read, 0 none */
} stress_ksm_unmerge_fz_sh_t;

typedef struct {
	uint8_t *zero, *dontfork, *wipe;	/* zero-filled ranges: unmerged during the fork, not copied, copied empty */
	size_t nzero, nother;
	stress_ksm_unmerge_fz_sh_t *sh;
	volatile uint64_t go;		/* cycle whose zero range unmerge starts now */
	volatile uint64_t done;		/* last cycle the thread forked in */
	volatile uint64_t unmerge_ns[2];	/* the zero range's unmerge: start, end */
} stress_ksm_unmerge_fz_t;

/*
 *  stress_ksm_unmerge_fz_mapped()
 *	child: KSM zero PTEs in every VMA of its own address space (merge-any
 *	makes every VMA mergeable), -1 if pagemap cannot be read
 */
static int64_t stress_ksm_unmerge_fz_mapped(const stress_ksm_unmerge_ctx_t *ctx, const int pm_fd)
{
	char line[512];
	uint64_t pm[KSM_OP_PAGES * 16];
	int64_t n = 0;
	FILE *fp = fopen("/proc/self/maps", "re");

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long lo, hi, a;

		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || strstr(line, "[vsyscall]"))
			continue;
		for (a = lo; a < hi; a += SIZEOF_ARRAY(pm) * ctx->page_size) {
			const size_t k = STRESS_MINIMUM(SIZEOF_ARRAY(pm), (hi - a) / ctx->page_size);
			size_t j;

			if (stress_ksm_unmerge_pagemap_read(pm_fd, (void *)a, k, ctx->page_size, pm) < 0)
				break;
			for (j = 0; j < k; j++)
				n += (stress_ksm_unmerge_page_what(ctx->iface, pm[j], (pm[j] & PM_PRESENT) && !ctx->iface->zero_pfn ?
					stress_ksm_unmerge_kpf(ctx->kpageflags_fd, pm[j] & PM_PFN_MASK) : 0, 0, 0,
					KSM_KIND_ZERO) == KSM_PAGE_KZERO);
		}
	}
	(void)fclose(fp);
	return n;
}

/*
 *  stress_ksm_unmerge_fz_child()
 *	child: the KSM zero pages the kernel charged it, then those it maps
 */
static void NORETURN stress_ksm_unmerge_fz_child(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_fz_sh_t *sh,
	const pid_t parent)
{
	const int fd = open("/proc/self/ksm_stat", O_RDONLY | O_CLOEXEC);
	const int pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	sh->charged = stress_ksm_unmerge_field(fd, "ksm_zero_pages");
	sh->err = (fd < 0 || pm_fd < 0) ? errno : 0;
	if (stress_ksm_unmerge_child_init(ctx, parent) == 0 && pm_fd >= 0)
		sh->mapped = stress_ksm_unmerge_fz_mapped(ctx, pm_fd);
	_exit(0);
}

/*
 *  stress_ksm_unmerge_fz_uncopied()
 *	the KSM zero pages of the ranges fork() does not copy (DONTFORK) or
 *	copies empty (WIPEONFORK), from this process's pagemap
 */
static int64_t stress_ksm_unmerge_fz_uncopied(const stress_ksm_unmerge_ctx_t *ctx, const stress_ksm_unmerge_fz_t *z)
{
	uint8_t *ranges[2] = { z->dontfork, z->wipe };
	uint8_t st[KSM_OP_PAGES];
	int64_t n = 0;
	size_t r, k, j;

	for (r = 0; r < 2; r++)
		for (k = 0; ranges[r] && k < z->nother; k += KSM_OP_PAGES)
			if (stress_ksm_unmerge_pages_state(ctx, ranges[r] + k * ctx->page_size,
					STRESS_MINIMUM(z->nother - k, (size_t)KSM_OP_PAGES), KSM_KIND_ZERO, st) == 0)
				for (j = 0; j < STRESS_MINIMUM(z->nother - k, (size_t)KSM_OP_PAGES); j++)
					n += (st[j] == KSM_PAGE_KZERO);
	return n;
}

/*
 *  stress_ksm_unmerge_fz_judge()
 *	pure: a child charged charged KSM zero pages that maps mapped, its
 *	parent holding uncopied in VMAs fork() does not copy: the excess
 *	(0 if none) split into *uncopied_part and *unmerging_part
 */
static int64_t stress_ksm_unmerge_fz_judge(const int64_t charged, const int64_t mapped, const int64_t uncopied,
	int64_t *uncopied_part, int64_t *unmerging_part)
{
	const int64_t excess = (charged >= 0 && mapped >= 0 && charged > mapped) ? charged - mapped : 0;

	*uncopied_part = STRESS_MINIMUM(excess, STRESS_MAXIMUM(uncopied, (int64_t)0));
	*unmerging_part = excess - *uncopied_part;
	return excess;
}

/*
 *  stress_ksm_unmerge_fz_op()
 *	once a cycle, 0-100 us into the main thread's unmerge of the zero
 *	range: fork a child and hold what it was charged against what it
 *	maps; the excess is split between the ranges not copied and the pages
 *	unmerged while fork() copied the mm
 */
static bool stress_ksm_unmerge_fz_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_fz_t *z = (stress_ksm_unmerge_fz_t *)run->priv;
	stress_ksm_unmerge_fz_sh_t *sh = z->sh;
	const uint64_t cycle = z->go;
	const pid_t parent = getpid();
	int64_t before, excess, uncopied, unmerging;
	uint64_t t0, t1;
	bool overlap;
	int status;
	pid_t pid;

	if (!cycle || cycle == z->done || cycle != ctx->cycle)
		return false;
	z->done = cycle;
	(void)shim_nanosleep_uint64(stress_mwc32modn(100000));
	(void)shim_memset((void *)sh, 0, sizeof(*sh));
	sh->charged = sh->mapped = -1;
	sh->uncopied = stress_ksm_unmerge_fz_uncopied(ctx, z);
	before = stress_ksm_unmerge_field(ctx->ksm_stat_fd, "ksm_zero_pages");
	t0 = stress_ksm_unmerge_now_ns();
	pid = fork();
	if (pid == 0)
		stress_ksm_unmerge_fz_child(ctx, sh, parent);
	t1 = stress_ksm_unmerge_now_ns();
	if (pid < 0)
		return stress_ksm_unmerge_racer_reason(run, "fork failed, errno=%d (%s)", errno, strerror(errno)) < 0;
	if (stress_ksm_unmerge_reap(pid, 3.0, &status) != 0 || !WIFEXITED(status)) {
		if (stress_continue(ctx->args))
			stress_ksm_unmerge_racer_fail(run, "the child did not end within 3 s (wait status %#x)", status);
		return true;
	}
	overlap = (t0 < z->unmerge_ns[1] || !z->unmerge_ns[1]) && t1 > z->unmerge_ns[0];
	excess = stress_ksm_unmerge_fz_judge(sh->charged, sh->mapped, sh->uncopied, &uncopied, &unmerging);
	run->rs->ops++;
	run->rs->evidence += (before > 0);
	run->rs->detail[0] += overlap;
	if (sh->charged < 0 || sh->mapped < 0) {
		stress_ksm_unmerge_racer_fail(run, "the child could not read its ksm_stat or pagemap, errno=%d (%s)",
			sh->err, strerror(sh->err));
	} else if (excess > 0) {
		run->rs->detail[1] += (uncopied > 0);
		run->rs->detail[2] += (unmerging > 0);
		stress_ksm_unmerge_racer_fail(run, "KSM zero pages charged at fork: the kernel charged a forked child "
			"%" PRId64 " KSM zero pages (its ksm_stat) while it maps %" PRId64 " (its pagemap); of the "
			"%" PRId64 " too many, %" PRId64 " sat in VMAs fork() does not copy (MADV_DONTFORK, "
			"MADV_WIPEONFORK) and %" PRId64 " were unmerged while fork() ran (%s); dup_mm() copies the "
			"parent's count (%" PRId64 ") before dup_mmap() takes the mmap lock and copies the page "
			"tables, so the child is charged what it never maps, and the global ksm_zero_pages keeps it "
			"after the child exits", sh->charged, sh->mapped, excess, uncopied, unmerging, overlap ? "this fork overlapped the unmerge "
			"of a zero range" : "no unmerge of ours overlapped it", before);
	}
	return true;
}

/*
 *  stress_ksm_unmerge_fz_ranges()
 *	madvise every zero range; -1 on failure (a fail line)
 */
static int stress_ksm_unmerge_fz_ranges(stress_ksm_unmerge_run_t *run, const int advice, const bool main_range)
{
	stress_ksm_unmerge_fz_t *z = (stress_ksm_unmerge_fz_t *)run->priv;
	const size_t ps = run->ctx->page_size;

	if ((main_range && madvise(z->zero, z->nzero * ps, advice) < 0) ||
	    madvise(z->dontfork, z->nother * ps, advice) < 0 || (z->wipe && madvise(z->wipe, z->nother * ps, advice) < 0)) {
		if (errno != EINTR || stress_continue(run->ctx->args))
			stress_ksm_unmerge_racer_fail(run, "madvise %d of a zero range failed, errno=%d (%s)",
				advice, errno, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_fz_phase()
 *	merging: the zero ranges mergeable (ksmd makes KSM zero pages of
 *	them); unmerging: the main one unmerged while the thread forks;
 *	verify: the others unmerged once the child is done
 */
static void stress_ksm_unmerge_fz_phase(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_fz_t *z = (stress_ksm_unmerge_fz_t *)run->priv;
	const double deadline = stress_time_now() + 3.0;

	if (phase == KSM_PHASE_MERGING) {
		(void)stress_ksm_unmerge_fz_ranges(run, MADV_MERGEABLE, true);
	} else if (phase == KSM_PHASE_UNMERGING) {
		z->unmerge_ns[0] = stress_ksm_unmerge_now_ns();
		z->unmerge_ns[1] = 0;
		z->go = ctx->cycle;
		if (madvise(z->zero, z->nzero * ctx->page_size, MADV_UNMERGEABLE) < 0 && stress_continue(ctx->args))
			stress_ksm_unmerge_racer_fail(run, "MADV_UNMERGEABLE of the zero range failed, errno=%d (%s)",
				errno, strerror(errno));
		z->unmerge_ns[1] = stress_ksm_unmerge_now_ns();
	} else if (phase == KSM_PHASE_VERIFY) {
		while (z->go == ctx->cycle && z->done != ctx->cycle && stress_time_now() < deadline && !ctx->racers_stop)
			(void)shim_nanosleep_uint64(100000);
		(void)stress_ksm_unmerge_fz_ranges(run, MADV_UNMERGEABLE, false);
	}
}

/*
 *  stress_ksm_unmerge_fz_supported()
 *	the kernel counts KSM zero pages per process (6.10)
 */
static int stress_ksm_unmerge_fz_supported(char *reason, const size_t len)
{
	if (stress_ksm_unmerge_file_field("/proc/self/ksm_stat", "ksm_zero_pages") >= 0)
		return 0;
	(void)snprintf(reason, len, "no ksm_zero_pages in /proc/self/ksm_stat (per-process KSM zero pages "
		"are counted since 6.10): nothing to check");
	return -1;
}

/*
 *  stress_ksm_unmerge_fz_stop()
 *	unmap the ranges and the shared page
 */
static void stress_ksm_unmerge_fz_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_fz_t *z = (stress_ksm_unmerge_fz_t *)run->priv;

	if (z->zero)
		(void)munmap(z->zero, z->nzero * ctx->page_size);
	if (z->dontfork)
		(void)munmap(z->dontfork, z->nother * ctx->page_size);
	if (z->wipe)
		(void)munmap(z->wipe, z->nother * ctx->page_size);
	if (z->sh && z->sh != MAP_FAILED)
		(void)munmap((void *)z->sh, sizeof(*z->sh));
	stress_ksm_unmerge_priv_stop(ctx, run);
}

/*
 *  stress_ksm_unmerge_fz_start()
 *	three zero-filled ranges (written, so ksmd sees zero-filled pages):
 *	an eighth of the region (64-4096 pages), and 64 pages each with
 *	MADV_DONTFORK and MADV_WIPEONFORK
 */
static int stress_ksm_unmerge_fz_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	const size_t ps = ctx->page_size;
	stress_ksm_unmerge_fz_t *z;

	if (stress_ksm_unmerge_priv_start(run, sizeof(*z)) < 0)
		return -1;
	z = (stress_ksm_unmerge_fz_t *)run->priv;
	z->nzero = STRESS_MINIMUM(STRESS_MAXIMUM(ctx->npages / 8, (size_t)64), (size_t)4096);
	z->nother = 64;
	z->zero = stress_ksm_unmerge_map(z->nzero * ps, 0, "ksm-unmerge-zero");
	z->dontfork = stress_ksm_unmerge_map(z->nother * ps, 0, "ksm-unmerge-zero-dontfork");
	z->sh = mmap(NULL, sizeof(*z->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
#if defined(MADV_WIPEONFORK)
	z->wipe = stress_ksm_unmerge_map(z->nother * ps, 0, "ksm-unmerge-zero-wipeonfork");
	if (z->wipe && madvise(z->wipe, z->nother * ps, MADV_WIPEONFORK) < 0) {
		(void)munmap(z->wipe, z->nother * ps);
		z->wipe = NULL;
	}
#endif
	if (!z->zero || !z->dontfork || z->sh == MAP_FAILED || madvise(z->dontfork, z->nother * ps, MADV_DONTFORK) < 0) {
		(void)stress_ksm_unmerge_racer_reason(run, "mmap or MADV_DONTFORK of the zero ranges failed, "
			"errno=%d (%s)", errno, strerror(errno));
		stress_ksm_unmerge_fz_stop(ctx, run);
		return -1;
	}
	(void)shim_memset(z->zero, 0, z->nzero * ps);
	(void)shim_memset(z->dontfork, 0, z->nother * ps);
	if (z->wipe)
		(void)shim_memset(z->wipe, 0, z->nother * ps);
	return 0;
}

