
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
	bool tid;			/* faults carry the faulting thread id */
	pid_t main_tid;			/* the thread that unmerges */
	bool snap_valid;
	uint8_t *snap;			/* per page: KSM and protected at unmerge start */
	volatile uint32_t *touched;	/* per page: the cycle it was unprotected in */
	uint64_t *pm;
} stress_ksm_unmerge_uffd_t;

/*
 *  stress_ksm_unmerge_uffd_open()
 *	a userfaultfd with feature (USER_MODE_ONLY on EPERM), fault thread
 *	ids where offered; -1 with the reason
 */
static int stress_ksm_unmerge_uffd_open(const uint64_t feature, char *reason, const size_t len, bool *tid)
{
	const uint64_t want[] = { feature | UFFD_FEATURE_THREAD_ID, feature };
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(want); i++) {
		struct uffdio_api api = { .api = UFFD_API, .features = want[i] };
		int fd = shim_userfaultfd(O_CLOEXEC | O_NONBLOCK);

		if (fd < 0 && errno == EPERM)
			fd = shim_userfaultfd(O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
		if (fd < 0) {
			(void)snprintf(reason, len, "userfaultfd denied or missing, errno=%d (%s)", errno, strerror(errno));
			return -1;
		}
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
 *	write-protect (on) or unprotect and wake n pages from first; a fail line if refused
 */
static void stress_ksm_unmerge_uffd_wp(stress_ksm_unmerge_run_t *run, const size_t first, const size_t n, const bool on)
{
	const stress_ksm_unmerge_uffd_t *u = (const stress_ksm_unmerge_uffd_t *)run->priv;
	struct uffdio_writeprotect wp = {
		.range = { (uintptr_t)(run->ctx->region + first * run->ctx->page_size), n * run->ctx->page_size },
		.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	if (ioctl(u->uffd, UFFDIO_WRITEPROTECT, &wp) < 0 && errno != ENOENT && errno != EAGAIN)
		stress_ksm_unmerge_racer_fail(run, "UFFDIO_WRITEPROTECT %s of pages %zu..%zu failed, errno=%d (%s)",
			on ? "on" : "off", first, first + n - 1, errno, strerror(errno));
}

/*
 *  stress_ksm_unmerge_uffd_events()
 *	resolve every pending WP fault (unprotect and wake), waiting up to ms;
 *	the unmerge itself must never raise one (it unshares, it does not write)
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
			stress_ksm_unmerge_racer_fail(run, "unexpected uffd message: event %#x, flags %#llx, address %#llx",
				(unsigned int)msg.event, (unsigned long long)msg.arg.pagefault.flags, (unsigned long long)a);
			continue;
		}
		if (u->tid && (pid_t)msg.arg.pagefault.feat.ptid == u->main_tid && ctx->phase == KSM_PHASE_UNMERGING)
			stress_ksm_unmerge_racer_fail(run, "the unmerge itself raised a WP fault at page %zu (break_ksm "
				"must unshare, not write)", i);
		u->touched[i] = (uint32_t)ctx->cycle;
		stress_ksm_unmerge_uffd_wp(run, i, 1, false);
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
	const bool active = stress_ksm_unmerge_active(ctx);
	const bool on = (ctx->phase != KSM_PHASE_UNMERGING) || stress_mwc1();
	size_t first, j, n;

	stress_ksm_unmerge_uffd_events(ctx, run, active ? 0 : 1);
	if (!active)
		return true;
	n = stress_ksm_unmerge_random_range(ctx, 64, &first);
	for (j = 0; !on && j < n; j++)
		u->touched[first + j] = (uint32_t)ctx->cycle;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	stress_ksm_unmerge_uffd_wp(run, first, n, on);
	run->rs->ops++;
	(void)shim_nanosleep_uint64(20000);
	return true;
}

/*
 *  stress_ksm_unmerge_uffd_park()
 *	before parking: the whole region unprotected, pending faults served
 */
static void stress_ksm_unmerge_uffd_park(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_uffd_wp(run, 0, ctx->npages, false);
	stress_ksm_unmerge_uffd_events(ctx, run, 0);
}

/*
 *  stress_ksm_unmerge_uffd_phase()
 *	merged: protect a random half; unmerging: note the pages KSM and
 *	protected; verify: those not unprotected since kept the WP bit and
 *	are no longer KSM pages (the evidence)
 */
static void stress_ksm_unmerge_uffd_phase(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)run->priv;
	const uint32_t cycle = (uint32_t)ctx->cycle;
	uint64_t lost = 0, kept = 0, still = 0;
	size_t i, first_lost = 0;

	if (phase == KSM_PHASE_MERGED)
		stress_ksm_unmerge_uffd_wp(run, stress_mwc32modn((uint32_t)(ctx->npages / 2 + 1)), (ctx->npages + 1) / 2, true);
	if ((phase != KSM_PHASE_UNMERGING && (phase != KSM_PHASE_VERIFY || !u->snap_valid)) || !ctx->have_pfns ||
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
	if (lost && !stress_ksm_unmerge_others_run(ctx, NULL))
		stress_ksm_unmerge_racer_fail(run, "%" PRIu64 " KSM pages lost their uffd-wp bit across the unmerge "
			"(first: page %zu, pagemap %#" PRIx64 ")", lost, first_lost, u->pm[first_lost]);
}

/*
 *  stress_ksm_unmerge_uffd_stop()
 *	unregister, close, free
 */
static void stress_ksm_unmerge_uffd_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)run->priv;
	struct uffdio_range range = { (uintptr_t)ctx->region, ctx->region_size };

	if (u->uffd >= 0) {
		(void)ioctl(u->uffd, UFFDIO_UNREGISTER, &range);
		(void)close(u->uffd);
	}
	free(u->snap);
	free((void *)u->touched);
	free(u->pm);
}

/*
 *  stress_ksm_unmerge_uffd_start()
 *	the region registered in WP mode (its VmFlags gain "uw": new baseline)
 */
static int stress_ksm_unmerge_uffd_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)run->priv;
	struct uffdio_register reg = { .range = { (uintptr_t)ctx->region, ctx->region_size }, .mode = UFFDIO_REGISTER_MODE_WP };

	u->main_tid = (pid_t)shim_gettid();
	u->snap = calloc(ctx->npages, 1);
	u->touched = calloc(ctx->npages, sizeof(uint32_t));
	u->pm = calloc(ctx->npages, sizeof(uint64_t));
	u->uffd = stress_ksm_unmerge_uffd_open(UFFD_FEATURE_PAGEFAULT_FLAG_WP, run->rs->reason, sizeof(run->rs->reason),
		&u->tid);
	if (u->uffd < 0)
		return -2;	/* not a failure: the kernel lacks it */
	if (!u->snap || !u->touched || !u->pm || ioctl(u->uffd, UFFDIO_REGISTER, &reg) < 0 ||
	    !(reg.ioctls & (1ULL << _UFFDIO_WRITEPROTECT)))
		return stress_ksm_unmerge_racer_reason(run, "memory, or UFFDIO_REGISTER MODE_WP with WRITEPROTECT, "
			"failed, errno=%d (%s)", errno, strerror(errno));
	if (stress_ksm_unmerge_vmflags(ctx->region, ctx->vmflags, sizeof(ctx->vmflags), true) < 0)
		ctx->vmflags[0] = '\0';
	return 0;
}
#define KSM_UFFD_BUILT		(1)
#define KSM_UFFD_WP_NOT_BUILT	NULL
#else
#define KSM_UFFD_WP_NOT_BUILT	"userfaultfd write-protect missing (HAVE_LINUX_USERFAULTFD_H)"
#define stress_ksm_unmerge_uffd_start		NULL
#define stress_ksm_unmerge_uffd_stop		NULL
#define stress_ksm_unmerge_uffd_op		NULL
#define stress_ksm_unmerge_uffd_park		NULL
#define stress_ksm_unmerge_uffd_phase		NULL
#endif

/* ---- mrelease: process_mrelease against exit_mmap of KSM memory ---- */

typedef struct {
	uint64_t cycle;			/* the cycle rounds are counted in */
	uint32_t rounds;
	uint64_t victims;		/* picks each victim's mode */
} stress_ksm_unmerge_mrelease_t;

/*
 *  stress_ksm_unmerge_mrelease_victim()
 *	child: unmerge its copy (mode 0), COW-write every page (1) or keep the
 *	KSM pages mapped (2), then wait to be killed; exit status: an errno
 */
static void NORETURN stress_ksm_unmerge_mrelease_victim(stress_ksm_unmerge_ctx_t *ctx, const pid_t parent, const int mode)
{
	size_t i;

	if (stress_ksm_unmerge_child_init(ctx, parent) < 0 ||
	    (mode == 0 && madvise(ctx->region, ctx->region_size, MADV_UNMERGEABLE) < 0) ||
	    (mode == 1 && mprotect(ctx->region, ctx->region_size, PROT_READ | PROT_WRITE) < 0))
		_exit(errno ? errno : 1);
	for (i = 0; mode == 1 && i < ctx->npages; i++)
		ctx->region[i * ctx->page_size] = *(volatile uint8_t *)(ctx->region + i * ctx->page_size);
	(void)sleep(10);
	_exit(0);
}

/*
 *  stress_ksm_unmerge_mrelease_op()
 *	4 rounds a cycle while merged or unmerging: fork a victim sharing the
 *	KSM pages, count its KSM pages, SIGKILL it through a pidfd and
 *	process_mrelease it at once (0 and ESRCH both legitimate), reap it
 */
static bool stress_ksm_unmerge_mrelease_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mrelease_t *m = (stress_ksm_unmerge_mrelease_t *)run->priv;
	const pid_t parent = getpid();
	uint64_t pm[64], t0, t1, ksm = 0;
	const size_t n = STRESS_MINIMUM(ctx->npages, SIZEOF_ARRAY(pm));
	const size_t first = stress_mwc32modn((uint32_t)(ctx->npages - n + 1));
	int pidfd, pm_fd = -1, status, ret, err;
	char path[64];
	size_t j;
	pid_t pid;

	if (m->cycle != ctx->cycle) {
		m->cycle = ctx->cycle;
		m->rounds = 0;
	}
	if (!stress_ksm_unmerge_active(ctx) || m->rounds++ >= 4)
		return false;
	pid = fork();
	if (pid < 0)
		return stress_ksm_unmerge_racer_reason(run, "fork failed, errno=%d (%s)", errno, strerror(errno)) < 0;
	if (pid == 0)
		stress_ksm_unmerge_mrelease_victim(ctx, parent, (int)(m->victims % 3));
	m->victims++;
	stress_ksm_unmerge_met(run);
	(void)snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	pidfd = shim_pidfd_open(pid, 0);
	if (pidfd >= 0)
		pm_fd = open(path, O_RDONLY | O_CLOEXEC);
	(void)shim_nanosleep_uint64(stress_mwc32modn(2000001));
	if (pm_fd >= 0 && stress_ksm_unmerge_pagemap_read(pm_fd, ctx->region + first * ctx->page_size, n, ctx->page_size, pm) == 0)
		for (j = 0; j < n; j++)
			ksm += stress_ksm_unmerge_is_ksm(stress_ksm_unmerge_page_state(ctx, pm[j], 0,
				stress_ksm_unmerge_page_kind(ctx->pattern, first + j)));
	t0 = stress_ksm_unmerge_now_ns();
	ret = (pidfd >= 0 && pm_fd >= 0) ? shim_pidfd_send_signal(pidfd, SIGKILL, NULL, 0) : -1;
	ret = (ret == 0) ? shim_process_mrelease(pidfd, 0) : (shim_kill(pid, SIGKILL), -2);
	err = errno;
	t1 = stress_ksm_unmerge_now_ns();
	if (stress_ksm_unmerge_reap(pid, 0.0, &status) < 0 ||
	    (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) && !(WIFEXITED(status) && !WEXITSTATUS(status))))
		stress_ksm_unmerge_racer_fail(run, "victim ended with wait status %#x (exit status: the errno of its "
			"madvise or mprotect)", status);
	if (pm_fd >= 0)
		(void)close(pm_fd);
	if (pidfd >= 0)
		(void)close(pidfd);
	if (ret == -2) {
		stress_ksm_unmerge_racer_fail(run, "pidfd_open, opening its pagemap or pidfd_send_signal of the victim "
			"failed, errno=%d (%s)", err, strerror(err));
		return true;
	}
	run->rs->ops++;
	run->rs->evidence += (ksm > 0);
	run->rs->detail[2] += ksm;
	if (ret == 0 || err == ESRCH) {
		/* ESRCH: the victim was past exit_mm(), its reap is the latency */
		run->rs->detail[ret == 0 ? 0 : 1]++;
		stress_ksm_unmerge_lat_add(&ctx->st->mrelease_lat, (double)((ret == 0 ? t1 : stress_ksm_unmerge_now_ns()) - t0) / 1.0E6);
	} else if (!(err == EINTR && !stress_continue(ctx->args))) {
		stress_ksm_unmerge_racer_fail(run, "process_mrelease on a SIGKILLed victim failed (expected 0 or ESRCH), "
			"errno=%d (%s)", err, strerror(err));
	}
	return true;
}

/*
 *  stress_ksm_unmerge_mrelease_supported()
 *	pidfd_open (5.3) and process_mrelease (5.15) must exist
 */
static int stress_ksm_unmerge_mrelease_supported(char *reason, const size_t len)
{
	const int fd = shim_pidfd_open(getpid(), 0);

	if (fd >= 0)
		(void)close(fd);
	if (fd >= 0 && (shim_process_mrelease(-1, 0) == 0 || errno != ENOSYS))
		return 0;
	(void)snprintf(reason, len, "pidfd_open or process_mrelease not implemented, errno=%d (%s) (needs 5.15)",
		errno, strerror(errno));
	return -1;
}
