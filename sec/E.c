/*
 *  Racers.  Each races one kernel path against the cycle on the same
 *  memory: a thread doing one op at a time (op), hooks the main thread
 *  runs at each phase (phase), a restore once every racer parked
 *  (restore).  While the cycle verifies every racer is parked, so what
 *  is checked is what the kernel left, not what a racer is writing.
 */

/*
 *  stress_ksm_unmerge_racer_fail()
 *	count a failure of a racer and say what the kernel did wrong
 */
static void FORMAT(printf, 2, 3) stress_ksm_unmerge_racer_fail(stress_ksm_unmerge_run_t *run, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* the first is a fail line; repeats are counted, so one bug cannot end the run */
	if (!run->rs->failures++)
		pr_fail("%s: %s racer: %s\n", run->ctx->args->name, run->r->name, buf);
	else
		pr_dbg("%s: %s racer: again: %s\n", run->ctx->args->name, run->r->name, buf);
}

/*
 *  stress_ksm_unmerge_racer_reason()
 *	set why a racer is skipped or not reached; -1 for start()'s return
 */
static int FORMAT(printf, 2, 3) stress_ksm_unmerge_racer_reason(stress_ksm_unmerge_run_t *run, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(run->rs->reason, sizeof(run->rs->reason), fmt, ap);
	va_end(ap);
	return -1;
}

/*
 *  stress_ksm_unmerge_others_run()
 *	does a racer other than self discard or protect region pages, so a
 *	zero page or EFAULT is legitimate
 */
static bool stress_ksm_unmerge_others_run(const stress_ksm_unmerge_ctx_t *ctx, const stress_ksm_unmerge_racer_t *self)
{
	size_t i;

	for (i = 0; i < KSM_RACERS; i++)
		if ((ctx->racers & STRESS_BIT_ULL(i)) && (stress_ksm_unmerge_racers[i].flags & KSM_RF_LAYOUT) &&
		    &stress_ksm_unmerge_racers[i] != self)
			return true;
	return false;
}

/*
 *  stress_ksm_unmerge_active()
 *	racer thread: act now (merged or unmerging, not parking, run going)
 */
static inline bool stress_ksm_unmerge_active(const stress_ksm_unmerge_ctx_t *ctx)
{
	return !ctx->quiesce && stress_continue(ctx->args) &&
		(ctx->phase == KSM_PHASE_MERGED || ctx->phase == KSM_PHASE_UNMERGING);
}

/*
 *  stress_ksm_unmerge_met()
 *	racer thread: it begins an op on this cycle's merged pages (the
 *	merged phase waits for that, so the op races the unmerge)
 */
static inline void stress_ksm_unmerge_met(stress_ksm_unmerge_run_t *run)
{
	if (run->ctx->phase == KSM_PHASE_MERGED)
		run->met = run->ctx->cycle;
}

/*
 *  stress_ksm_unmerge_hold()
 *	keep a splice or pin up to 1 ms or until the phase moves on
 */
static void stress_ksm_unmerge_hold(const stress_ksm_unmerge_ctx_t *ctx)
{
	const int phase = ctx->phase;
	const uint32_t steps = stress_mwc32modn(20);
	uint32_t s;

	for (s = 0; s < steps && ctx->phase == phase && !ctx->quiesce; s++)
		(void)shim_nanosleep_uint64(50000);
}

/*
 *  stress_ksm_unmerge_random_range()
 *	1..max random pages inside the part of the region racers may touch
 */
static size_t stress_ksm_unmerge_random_range(const stress_ksm_unmerge_ctx_t *ctx, const size_t max, size_t *first)
{
	const size_t npages = ctx->touch_npages;
	const size_t n = STRESS_MINIMUM(1 + (size_t)stress_mwc32modn((uint32_t)max), npages);

	*first = stress_mwc32modn((uint32_t)(npages - n + 1));
	return n;
}

/*
 *  stress_ksm_unmerge_present()
 *	how many leading pages of first..first+n hold their pattern's bytes
 *	(present, and the zero page only where the pattern has zeros): a
 *	hole another racer made would read as zeros; states into st[]
 */
static size_t stress_ksm_unmerge_present(const stress_ksm_unmerge_ctx_t *ctx, const size_t first,
	const size_t n, uint8_t *st)
{
	size_t j;

	if (stress_ksm_unmerge_pages_state(ctx, ctx->region + first * ctx->page_size, n,
			stress_ksm_unmerge_page_kind(ctx->pattern, first), st) < 0)
		return n;	/* no PFNs: cannot tell, take them all */
	for (j = 0; j < n; j++)
		if (st[j] == KSM_PAGE_ABSENT || st[j] == KSM_PAGE_SWAPPED || st[j] == KSM_PAGE_HOLE ||
		    (st[j] == KSM_PAGE_KZERO && stress_ksm_unmerge_page_kind(ctx->pattern, first + j) != KSM_KIND_ZERO))
			break;
	return j;
}

/*
 *  stress_ksm_unmerge_copy_check()
 *	len bytes copied from region pages first.. hold the pattern; whole
 *	zero pages pass if another racer explains them (discards); a fail
 *	line and -1 otherwise
 */
static int stress_ksm_unmerge_copy_check(stress_ksm_unmerge_run_t *run, const size_t first,
	const uint8_t *buf, const size_t len, const char *what)
{
	const stress_ksm_unmerge_ctx_t *ctx = run->ctx;
	const size_t ps = ctx->page_size;
	const bool others = stress_ksm_unmerge_others_run(ctx, NULL);
	size_t j;

	for (j = 0; j * ps < len; j++) {
		const size_t plen = STRESS_MINIMUM(len - j * ps, ps);
		uint8_t want = 0;
		ssize_t off = stress_ksm_unmerge_page_check(ctx, first + j, buf + j * ps, &want);

		if (off < 0 || (size_t)off >= plen || (others && stress_ksm_unmerge_all_zero(buf + j * ps, plen)))
			continue;
		stress_ksm_unmerge_racer_fail(run, "%s page %zu: byte %zd is 0x%02x, expected 0x%02x",
			what, first + j, off, buf[j * ps + (size_t)off], want);
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_same_check()
 *	first of n pages at p not holding the same page, -1 if all do
 */
static ssize_t stress_ksm_unmerge_same_check(const stress_ksm_unmerge_ctx_t *ctx, const uint8_t *p, const size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (shim_memcmp(p + k * ctx->page_size, ctx->templates, ctx->page_size))
			return (ssize_t)k;
	return -1;
}

/*
 *  stress_ksm_unmerge_child_init()
 *	racer child: die with the forking thread, be the OOM killer's first pick
 */
static int stress_ksm_unmerge_child_init(stress_ksm_unmerge_ctx_t *ctx, const pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return -1;
	if (getppid() != parent) {
		errno = ESRCH;
		return -1;
	}
	stress_set_oom_adjustment(ctx->args, true);
	return 0;
}

/*
 *  stress_ksm_unmerge_reap()
 *	wait for child pid up to secs (0: no bound), then SIGKILL it;
 *	1 if it had to be killed, 0 reaped, -1 waitpid error
 */
static int stress_ksm_unmerge_reap(const pid_t pid, const double secs, int *status)
{
	const double deadline = stress_time_now() + secs;
	pid_t ret;

	*status = 0;
	while (secs > 0.0) {
		ret = waitpid(pid, status, WNOHANG);
		if (ret == pid)
			return 0;
		if ((ret < 0 && errno != EINTR) || stress_time_now() > deadline)
			break;
		(void)shim_nanosleep_uint64(500000);
	}
	if (secs > 0.0)
		(void)shim_kill(pid, SIGKILL);
	return (shim_waitpid(pid, status, 0) == pid) ? (secs > 0.0) : -1;
}

/*
 *  stress_ksm_unmerge_map()
 *	private anonymous mapping of size bytes, NOHUGEPAGE, named; NULL on failure
 */
static uint8_t *stress_ksm_unmerge_map(const size_t size, const int flags, const char *name)
{
	uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
#if defined(MADV_NOHUGEPAGE)
	(void)madvise(p, size, MADV_NOHUGEPAGE);
#endif
	stress_memory_anon_name_set(p, size, name);
	return p;
}

/*
 *  stress_ksm_unmerge_shared_map()
 *	shared anonymous memory (KSM never merges it: a copy there cannot
 *	merge with the page it came from), NULL on failure
 */
static void *stress_ksm_unmerge_shared_map(const size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return (p == MAP_FAILED) ? NULL : p;
}

/*
 *  stress_ksm_unmerge_same_fill()
 *	fill n pages at p with the same page (racer ranges merge with the region)
 */
static void stress_ksm_unmerge_same_fill(const stress_ksm_unmerge_ctx_t *ctx, uint8_t *p, const size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		(void)shim_memcpy(p + k * ctx->page_size, ctx->templates, ctx->page_size);
}

/*
 *  stress_ksm_unmerge_racer_thread()
 *	a racer's thread: one op at a time while the cycle allows, park when
 *	asked (its park hook first leaves the region as the cycle expects)
 */
static void *stress_ksm_unmerge_racer_thread(void *arg)
{
	stress_ksm_unmerge_run_t *run = (stress_ksm_unmerge_run_t *)arg;
	stress_ksm_unmerge_ctx_t *ctx = run->ctx;

	while (!ctx->racers_stop) {
		const uint64_t q = ctx->quiesce;

		if (q) {
			if (run->parked != q && run->r->park)
				run->r->park(ctx, run);
			run->parked = q;
		} else if (stress_continue(ctx->args) && run->r->op(ctx, run)) {
			continue;
		}
		(void)shim_nanosleep_uint64(100000);
	}
	if (run->r->park)
		run->r->park(ctx, run);
	run->thread_done = true;
	return NULL;
}

/*
 *  stress_ksm_unmerge_racer_end()
 *	undo a racer's start: its stop hook, its state freed
 */
static void stress_ksm_unmerge_racer_end(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	if (run->r->stop && run->priv)
		run->r->stop(ctx, run);
	free(run->priv);
	run->priv = NULL;
}

/*
 *  stress_ksm_unmerge_racers_start()
 *	start every requested racer: its zeroed state, start (-2: the kernel
 *	lacks its interface, a skip; -1: start failed), its thread
 */
static void stress_ksm_unmerge_racers_start(stress_ksm_unmerge_ctx_t *ctx)
{
	size_t i;

	for (i = 0; i < KSM_RACERS; i++) {
		stress_ksm_unmerge_run_t *run = &ctx->run[i];
		const stress_ksm_unmerge_racer_t *r = run->r;
		char why[sizeof(run->rs->reason) + 16];
		int ret = -2;

		if (!(ctx->use & KSM_RACER_BIT(i)))
			continue;
		if (r->not_built)
			(void)stress_ksm_unmerge_racer_reason(run, "not built: %s", r->not_built);
		else if ((r->flags & KSM_RF_PFNS) && !ctx->have_pfns)
			(void)stress_ksm_unmerge_racer_reason(run, "pagemap PFNs not readable (needs CAP_SYS_ADMIN): "
				"its evidence cannot be seen");
		else if (!r->supported || r->supported(run->rs->reason, sizeof(run->rs->reason)) == 0)
			ret = (r->priv_size && !(run->priv = calloc(1, r->priv_size))) ? -1 :
				(r->start ? r->start(ctx, run) : 0);
		if (ret == 0 && r->op) {
			ret = pthread_create(&run->thread, NULL, stress_ksm_unmerge_racer_thread, run);
			run->thread_running = !ret;
			errno = ret;
			ret = ret ? stress_ksm_unmerge_racer_reason(run, "pthread_create failed, errno=%d (%s)", errno,
				strerror(errno)) : 0;
		}
		if (ret == 0) {
			run->rs->active = true;
			ctx->racers |= STRESS_BIT_ULL(i);
			(void)shim_strlcat(ctx->racers_str, ctx->racers_str[0] ? "," : "", sizeof(ctx->racers_str));
			(void)shim_strlcat(ctx->racers_str, r->name, sizeof(ctx->racers_str));
			ctx->disturb_counts |= !!(r->flags & KSM_RF_PARTIAL);
			ctx->disturb_layout |= !!(r->flags & KSM_RF_LAYOUT);
			continue;
		}
		stress_ksm_unmerge_racer_end(ctx, run);
		if (ret == -1) {
			(void)snprintf(why, sizeof(why), "start failed%s%s", run->rs->reason[0] ? ": " : "", run->rs->reason);
			(void)shim_strscpy(run->rs->reason, why, sizeof(run->rs->reason));
		}
		run->rs->skipped = true;
		if (stress_instance_zero(ctx->args))
			pr_inf_skip("%s: racer %s skipped: %s\n", ctx->args->name, r->name, run->rs->reason);
	}
}

/*
 *  stress_ksm_unmerge_racers_stop()
 *	stop every running racer: join its thread, end it
 */
static void stress_ksm_unmerge_racers_stop(stress_ksm_unmerge_ctx_t *ctx)
{
	size_t i;

	ctx->racers_stop = true;
	ctx->quiesce = 0;
	for (i = 0; i < KSM_RACERS; i++) {
		if (!(ctx->racers & STRESS_BIT_ULL(i)))
			continue;
		if (ctx->run[i].thread_running)
			(void)pthread_join(ctx->run[i].thread, NULL);
		ctx->run[i].thread_running = false;
		stress_ksm_unmerge_racer_end(ctx, &ctx->run[i]);
	}
	ctx->racers = 0;
}

/*
 *  stress_ksm_unmerge_racers_meet()
 *	merged phase: wait (sleeping, 50 ms at most) until every racer that
 *	needs merged pages began an op on them, so a slow racer thread still
 *	races the unmerge; merged phases that gave up are counted
 */
static void stress_ksm_unmerge_racers_meet(stress_ksm_unmerge_ctx_t *ctx)
{
	const double deadline = stress_time_now() + 0.05;
	size_t i;

	for (i = 0; i < KSM_RACERS; i++) {
		stress_ksm_unmerge_run_t *run = &ctx->run[i];

		if (!(ctx->racers & STRESS_BIT_ULL(i)) || !(run->r->flags & KSM_RF_WAIT) || !run->thread_running)
			continue;
		while (run->met != ctx->cycle && !run->thread_done && stress_continue(ctx->args)) {
			if (stress_time_now() > deadline) {
				run->rs->meet_timeouts++;
				break;
			}
			(void)shim_nanosleep_uint64(20000);
		}
	}
}

/*
 *  stress_ksm_unmerge_racers_quiesce()
 *	park every racer thread, then their restore hooks; false (a fail
 *	line) if one did not park within 5 s
 */
static bool stress_ksm_unmerge_racers_quiesce(stress_ksm_unmerge_ctx_t *ctx)
{
	const double deadline = stress_time_now() + 5.0;
	size_t i;

	ctx->quiesce = ctx->cycle;
	for (i = 0; i < KSM_RACERS; i++) {
		stress_ksm_unmerge_run_t *run = &ctx->run[i];

		if (!(ctx->racers & STRESS_BIT_ULL(i)) || !run->thread_running)
			continue;
		while (run->parked != ctx->cycle && !run->thread_done) {
			if (stress_time_now() > deadline) {
				pr_fail("%s: racer %s did not park within 5 s (stuck in the kernel?)\n",
					ctx->args->name, run->r->name);
				return false;
			}
			(void)shim_nanosleep_uint64(50000);
		}
	}
	for (i = 0; i < KSM_RACERS; i++)
		if ((ctx->racers & STRESS_BIT_ULL(i)) && ctx->run[i].r->restore && !ctx->quiet)
			ctx->run[i].r->restore(ctx, &ctx->run[i]);
	return true;
}

/*
 *  stress_ksm_unmerge_phase_set()
 *	enter a cycle phase: the racers' phase hooks run (not in quiet cycles)
 */
static void stress_ksm_unmerge_phase_set(stress_ksm_unmerge_ctx_t *ctx, const int phase)
{
	size_t i;

	ctx->phase = phase;
	ctx->st->phase = phase;
	ctx->st->phase_since = stress_time_now();
	ctx->st->hang_allow = 0.0;
	for (i = 0; i < KSM_RACERS && !ctx->quiet; i++)
		if ((ctx->racers & STRESS_BIT_ULL(i)) && ctx->run[i].r->phase)
			ctx->run[i].r->phase(ctx, &ctx->run[i], phase);
	if (phase == KSM_PHASE_IDLE)
		ctx->quiesce = 0;
}

/*
 *  stress_ksm_unmerge_lat_add()
 *	keep one latency sample (a ring of the latest)
 */
static void stress_ksm_unmerge_lat_add(stress_ksm_unmerge_lat_t *lat, const double ms)
{
	lat->ms[lat->total % KSM_LAT_SAMPLES] = ms;
	lat->total++;
	if (lat->count < KSM_LAT_SAMPLES)
		lat->count++;
}

