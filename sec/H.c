/*
 *  stress_ksm_unmerge_region_size()
 *	this instance's share of --ksm-unmerge-bytes, capped so that every
 *	instance's region, its racers' state (a second copy of every page
 *	for mrelease victims) and the verification fit in half of
 *	MemAvailable, or of the room under the cgroup v2 memory.max if smaller
 */
static size_t stress_ksm_unmerge_region_size(stress_args_t *args, const uint64_t use, size_t *total)
{
	const stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	char buf[4096], dir[PATH_MAX], path[PATH_MAX + 32];
	uint64_t avail = sh->mem_avail, fixed = 4 * MB, extra = 0, copies = 1, cap;
	size_t bytes = DEFAULT_KSM_UNMERGE_BYTES, i, per;
	const char *what = "MemAvailable", *p;
	char *slash;

	if (!stress_setting_get("ksm-unmerge-bytes", &bytes)) {
		if (g_opt_flags & OPT_FLAGS_MAXIMIZE)
			bytes = 1 * GB;
		if (g_opt_flags & OPT_FLAGS_MINIMIZE)
			bytes = MIN_KSM_UNMERGE_BYTES * args->instances;
	}
	/* the tightest memory.max of this cgroup v2 and its ancestors */
	if (stress_fs_file_read("/proc/self/cgroup", buf, sizeof(buf)) > 0 && (p = strstr(buf, "0::")) &&
	    (p == buf || p[-1] == '\n')) {
		(void)shim_strscpy(dir, p + 3, sizeof(dir));
		dir[strcspn(dir, "\n")] = '\0';
		for (;;) {
			int64_t max, cur;

			(void)snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", dir);
			max = stress_ksm_unmerge_file_field(path, NULL);
			(void)snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.current", dir);
			cur = stress_ksm_unmerge_file_field(path, NULL);
			if (max >= 0 && (uint64_t)(max > cur ? max - STRESS_MAXIMUM(cur, (int64_t)0) : 0) < avail) {
				avail = (uint64_t)(max > cur ? max - STRESS_MAXIMUM(cur, (int64_t)0) : 0);
				what = "the cgroup's memory.max room";
			}
			slash = strrchr(dir, '/');
			if (!slash || slash == dir)
				break;
			*slash = '\0';
		}
	}
	for (i = 0; i < KSM_RACERS; i++) {
		if (!(use & KSM_RACER_BIT(i)))
			continue;
		fixed += KSM_RACER_BYTES;
		extra += stress_ksm_unmerge_racers[i].page_bytes;
		copies += !!(stress_ksm_unmerge_racers[i].flags & KSM_RF_COPY) && copies == 1;
	}
	fixed *= args->instances;
	cap = (avail / 2 > fixed) ? (avail / 2 - fixed) / (copies * args->page_size + extra) * args->page_size : 0;
	if (avail && bytes > cap) {
		if (stress_instance_zero(args))
			pr_inf("%s: capping %zu bytes to %" PRIu64 " bytes: half of %s (%" PRIu64 " bytes) less the "
				"racers' and verification memory%s\n", args->name, bytes, cap, what, avail,
				copies > 1 ? ", halved for the mrelease victims' copies" : "");
		bytes = (size_t)cap;
	}
	per = STRESS_MAXIMUM((bytes / args->instances) & ~(args->page_size - 1), (size_t)MIN_KSM_UNMERGE_BYTES);
	*total = per * args->instances;
	return per;
}

/*
 *  stress_ksm_unmerge_ctx_free()
 *	release everything the context holds
 */
static void stress_ksm_unmerge_ctx_free(stress_ksm_unmerge_ctx_t *ctx)
{
	int *fds[] = { &ctx->pagemap_fd, &ctx->kpageflags_fd, &ctx->kpagecount_fd, &ctx->ksm_stat_fd,
		&ctx->merging_pages_fd, &ctx->full_scans_fd, &ctx->vmstat_fd, &ctx->zero_pages_fd, &ctx->taint_fd };
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(fds); i++) {
		if (*fds[i] >= 0)
			(void)close(*fds[i]);
		*fds[i] = -1;
	}
	if (ctx->region)
		(void)munmap(ctx->region, ctx->region_size);
	if (ctx->templates)
		(void)munmap(ctx->templates, (KSM_FEW_TEMPLATES + 1) * ctx->page_size);
	free(ctx->pm);
	free(ctx->keys);
	ctx->region = ctx->templates = NULL;
	ctx->pm = ctx->keys = NULL;
}

/*
 *  stress_ksm_unmerge_ctx_init()
 *	map and fill the region (stop checks between 64 MiB), open the
 *	kernel files; EXIT_SUCCESS or a skip code
 */
static int stress_ksm_unmerge_ctx_init(stress_ksm_unmerge_ctx_t *ctx, stress_args_t *args)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	size_t total, i;

	ctx->args = args;
	ctx->t_start = stress_time_now();
	ctx->page_size = args->page_size;
	ctx->st = &sh->inst[args->instance];
	ctx->iface = &sh->iface;
	ctx->pattern = (int)sh->pattern;
	ctx->use = stress_ksm_unmerge_use(sh->method);
	ctx->verify = !!(g_opt_flags & OPT_FLAGS_VERIFY);
	ctx->seed = ((uint64_t)getpid() << 32) ^ ((uint64_t)args->instance << 48) ^ stress_mwc64();
	ctx->main_thread = pthread_self();
	ctx->region_size = stress_ksm_unmerge_region_size(args, ctx->use, &total);
	ctx->npages = ctx->touch_npages = ctx->region_size / ctx->page_size;
	ctx->teardown_secs = (ctx->region_size > GB) ? (double)ctx->region_size / KSM_TEARDOWN_RATE : 0.0;
	for (i = 0; i < KSM_RACERS; i++) {
		ctx->run[i].r = &stress_ksm_unmerge_racers[i];
		ctx->run[i].rs = &ctx->st->racer[i];
		ctx->run[i].ctx = ctx;
	}
	ctx->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ctx->kpageflags_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	ctx->kpagecount_fd = sh->iface.kpf_ksm ? -1 : open("/proc/kpagecount", O_RDONLY | O_CLOEXEC);
	ctx->ksm_stat_fd = open("/proc/self/ksm_stat", O_RDONLY | O_CLOEXEC);
	ctx->merging_pages_fd = open("/proc/self/ksm_merging_pages", O_RDONLY | O_CLOEXEC);
	ctx->full_scans_fd = open(KSM_SYSFS "/full_scans", O_RDONLY | O_CLOEXEC);
	ctx->vmstat_fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
	ctx->zero_pages_fd = open(KSM_SYSFS "/ksm_zero_pages", O_RDONLY | O_CLOEXEC);
	ctx->taint_fd = open("/proc/sys/kernel/tainted", O_RDONLY | O_CLOEXEC);
	if (ctx->full_scans_fd < 0) {
		pr_inf_skip("%s: cannot open %s/full_scans, errno=%d (%s), skipping stressor\n", args->name,
			KSM_SYSFS, errno, strerror(errno));
		return EXIT_NO_RESOURCE;
	}
	ctx->region = stress_ksm_unmerge_map(ctx->region_size, 0, "ksm-unmerge-region");
	/* shared memory: under prctl's merge-any the templates never merge with the region */
	ctx->templates = mmap(NULL, (KSM_FEW_TEMPLATES + 1) * ctx->page_size, PROT_READ | PROT_WRITE,
		MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ctx->pm = calloc(KSM_CHUNK, sizeof(*ctx->pm));
	ctx->keys = calloc(KSM_CHUNK, sizeof(*ctx->keys));
	if (ctx->templates == MAP_FAILED)
		ctx->templates = NULL;
	if (!ctx->region || !ctx->templates || !ctx->pm || !ctx->keys) {
		pr_inf_skip("%s: cannot map a region of %zu bytes and its scratch%s, errno=%d (%s), skipping "
			"stressor\n", args->name, ctx->region_size, stress_memory_free_get(), errno, strerror(errno));
		return EXIT_NO_RESOURCE;
	}
	stress_ksm_unmerge_templates_fill(ctx);
	for (i = 0; i < ctx->npages; i++) {
		if (!(i & 16383) && stress_ksm_unmerge_stop_seen(ctx, "region fill"))
			break;
		stress_ksm_unmerge_page_fill(ctx, i, ctx->region + i * ctx->page_size);
	}
	ctx->filled = i;
	stress_ksm_unmerge_expect(ctx);
	ctx->have_pfns = sh->iface.pfns && stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region, 1,
		ctx->page_size, ctx->pm) == 0 && stress_ksm_unmerge_pm_pfn(ctx->pm[0]);
	ctx->by_pages = ctx->have_pfns && (!(sh->iface.stat_merging || sh->iface.merging_pages) ||
		(ctx->expect_zero && !sh->iface.stat_zero));
	if (ctx->verify && !ctx->have_pfns) {
		if (stress_instance_zero(args))
			pr_inf_skip("%s: --verify cannot keep its promise: the page checks need pagemap PFNs "
				"(CAP_SYS_ADMIN); skipping stressor\n", args->name);
		return EXIT_NOT_IMPLEMENTED;
	}
	if (!ctx->have_pfns && ctx->ksm_stat_fd < 0 && ctx->merging_pages_fd < 0) {
		pr_inf_skip("%s: no way to observe merging (no ksm_stat, ksm_merging_pages or pagemap PFNs), "
			"skipping stressor\n", args->name);
		return EXIT_NOT_IMPLEMENTED;
	}
	if (!ctx->have_pfns && stress_instance_zero(args))
		pr_inf("%s: pagemap PFNs not readable: verifying with per-process counters only\n", args->name);
	if (stress_ksm_unmerge_vmflags(ctx->region, ctx->vmflags, sizeof(ctx->vmflags), true) < 0)
		ctx->vmflags[0] = '\0';
	if (stress_instance_zero(args))
		stress_memory_usage_get(args, ctx->region_size, total);
	return EXIT_SUCCESS;
}

/*
 *  stress_ksm_unmerge_switch()
 *	merging on or off with madvise (of [off, off + len)) or prctl (the
 *	whole mm, explicit zero arguments)
 */
static int stress_ksm_unmerge_switch(stress_ksm_unmerge_ctx_t *ctx, const uint64_t sw, const size_t off,
	const size_t len, const bool on)
{
	if (sw == KSM_SW_PRCTL)
		return prctl(PR_SET_MEMORY_MERGE, on ? 1UL : 0UL, 0UL, 0UL, 0UL);
	return madvise(ctx->region + off, len, on ? MADV_MERGEABLE : MADV_UNMERGEABLE);
}

/*
 *  stress_ksm_unmerge_off()
 *	one unmerge call (switch off), for the signal racer's retry loop
 */
static int stress_ksm_unmerge_off(stress_ksm_unmerge_ctx_t *ctx, const uint64_t sw, const size_t off, const size_t len)
{
	return stress_ksm_unmerge_switch(ctx, sw, off, len, false);
}

/*
 *  stress_ksm_unmerge_timed_off()
 *	the measured unmerge, only the calls timed (CLOCK_MONOTONIC) into *dt:
 *	madvise in 128 MiB calls with a stop check between them, prctl (the
 *	whole mm) in one call the stop signal interrupts (EINTR)
 */
static int stress_ksm_unmerge_timed_off(stress_ksm_unmerge_ctx_t *ctx, const uint64_t sw, double *dt)
{
	stress_ksm_unmerge_run_t *sig = NULL;
	size_t off, i;
	int ret = 0;

	for (i = 0; i < KSM_RACERS && !ctx->quiet; i++)
		if ((ctx->racers & STRESS_BIT_ULL(i)) && ctx->run[i].r->op == stress_ksm_unmerge_signal_op)
			sig = &ctx->run[i];
	*dt = 0.0;
	ctx->st->unmerge_cycles++;
	for (off = 0; off < ctx->region_size && ret == 0; off += KSM_CALL_BYTES) {
		const size_t len = (sw == KSM_SW_PRCTL) ? ctx->region_size : STRESS_MINIMUM(KSM_CALL_BYTES, ctx->region_size - off);
		uint64_t t0, t1;

		if (off && stress_ksm_unmerge_stop_seen(ctx, "unmerge")) {
			errno = EINTR;
			return -1;
		}
		ctx->st->in_call = true;
		t0 = stress_ksm_unmerge_now_ns();
		ret = sig ? stress_ksm_unmerge_signal_call(ctx, sig, stress_ksm_unmerge_off, sw, off, len) :
			stress_ksm_unmerge_off(ctx, sw, off, len);
		t1 = stress_ksm_unmerge_now_ns();
		ctx->st->in_call = false;
		*dt += (double)(t1 - t0) / 1.0E9;
		ctx->st->unmerge_calls++;
		if (sw == KSM_SW_PRCTL)
			break;
	}
	return ret;
}

/*
 *  stress_ksm_unmerge_account()
 *	add one cycle's merged, unmerged and cow_ksm figures to the instance's
 */
static void stress_ksm_unmerge_account(stress_ksm_unmerge_ctx_t *ctx, const uint64_t ksm, const uint64_t kzero,
	const double dt, const int64_t cow)
{
	stress_ksm_unmerge_instance_t *st = ctx->st;

	st->pages_merged += ksm + kzero;
	st->pages_zero += kzero;
	st->cow_ksm += (cow > 0) ? (uint64_t)cow : 0;
	if (!(ksm + kzero))
		return;
	st->pages_unmerged += ksm + kzero;
	st->unmerge_secs += dt;
	stress_ksm_unmerge_lat_add(&st->unmerge_lat, dt * 1000.0);
	if (ctx->quiet && ksm + kzero >= ctx->expect_merged + ctx->expect_zero) {
		st->quiet_cycles++;
		st->quiet_pages += ksm + kzero;
		st->quiet_secs += dt;
	}
}

/*
 *  stress_ksm_unmerge_merge()
 *	merge on, wait for ksmd, verify the merge; 0 ok, 1 stopped, -1 failed;
 *	merged pages in *ksm, *kzero, *empty when nothing of the region merged
 */
static int stress_ksm_unmerge_merge(stress_ksm_unmerge_ctx_t *ctx, const uint64_t sw, const double bound,
	uint64_t *ksm, uint64_t *kzero, bool *empty)
{
	const char *name = ctx->args->name;
	stress_ksm_unmerge_instance_t *st = ctx->st;
	const double t0 = stress_time_now();
	int64_t merging = 0, zero = 0;
	int waited, rc = 0;

	stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_MERGING);
	if (stress_ksm_unmerge_switch(ctx, sw, 0, ctx->region_size, true) < 0) {
		if (errno == EINTR && !stress_continue(ctx->args))
			return 1;
		pr_fail("%s: %s merge on failed, errno=%d (%s)\n", name, sw == KSM_SW_PRCTL ? "prctl" : "madvise",
			errno, strerror(errno));
		return -1;
	}
	if (sw == KSM_SW_PRCTL && !st->method_cycles[1] && prctl(PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL) != 1) {
		pr_fail("%s: PR_GET_MEMORY_MERGE does not read 1 after PR_SET_MEMORY_MERGE 1, errno=%d (%s)\n",
			name, errno, strerror(errno));
		rc = -1;
	}
	waited = stress_ksm_unmerge_merge_wait(ctx, bound, &merging, &zero);
	st->merge_wait_secs += stress_time_now() - t0;
	if (waited < 0) {
		(void)stress_ksm_unmerge_stop_seen(ctx, "merge wait");
		return 1;
	}
	stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_MERGED);
	if (stress_ksm_unmerge_verify_merge(ctx, waited, ksm, kzero) < 0 ||
	    stress_ksm_unmerge_zero_check(ctx, "after the merge") < 0)
		rc = -1;
	if (ctx->stopped && !rc)
		return 1;
	if (!ctx->have_pfns) {
		*ksm = merging > 0 ? (uint64_t)merging : 0;
		*kzero = zero > 0 ? (uint64_t)zero : 0;
	}
	*empty = !(*ksm + *kzero) && ctx->expect_merged + ctx->expect_zero;
	if (waited == 0 || *empty) {
		st->merge_timeouts += *empty;
		st->partial_merges += !*empty;
		pr_dbg("%s: cycle %" PRIu64 ": merge incomplete after %.2f s: %" PRIu64 " KSM + %" PRIu64 " zero "
			"pages of %" PRIu64 "\n", name, ctx->cycle, stress_time_now() - t0, *ksm, *kzero,
			ctx->expect_merged + ctx->expect_zero);
		/* on a quiet kernel ksmd finishing its passes short of the prediction is a failure */
		if (ctx->verify && !ctx->disturb_counts && !ctx->wait_timed_out && !*empty) {
			pr_fail("%s: partial merge on a quiet kernel: ksmd finished its passes with %" PRIu64 " KSM + %"
				PRIu64 " zero pages of %" PRIu64 " + %" PRIu64 " predicted (counters: merging %" PRId64
				", zero %" PRId64 ")\n", name, *ksm, *kzero, ctx->expect_merged, ctx->expect_zero,
				merging, zero);
			rc = -1;
		}
	}
	return rc;
}

/*
 *  stress_ksm_unmerge_cycle()
 *	one bogo op: merge, verify merged, racers meet the merged pages, timed
 *	unmerge, racers park, verify unmerged; every 4th cycle holds the
 *	racers off (madvise only: a figure of break_ksm() they do not
 *	disturb); 0 verified, 1 stopped by the end of the run, -1 failed
 */
static int stress_ksm_unmerge_cycle(stress_ksm_unmerge_ctx_t *ctx, uint64_t sw, const double bound)
{
	stress_ksm_unmerge_instance_t *st = ctx->st;
	uint64_t ksm = 0, kzero = 0;
	int64_t cow0, cow1;
	double dt = 0.0;
	bool empty = false;
	int rc, ret;

	ctx->cycle++;
	ctx->quiet = ctx->racers && !(ctx->cycle % KSM_QUIET_EVERY);
	if (ctx->quiet) {
		sw = KSM_SW_MADVISE;
		if (!stress_ksm_unmerge_racers_quiesce(ctx))
			return -1;
	}
	rc = stress_ksm_unmerge_merge(ctx, sw, bound, &ksm, &kzero, &empty);
	if (rc > 0)
		return 1;
	if (ksm + kzero && !ctx->quiet)
		stress_ksm_unmerge_racers_meet(ctx);
	cow0 = stress_ksm_unmerge_field(ctx->vmstat_fd, "cow_ksm");
	stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_UNMERGING);
	ret = stress_ksm_unmerge_timed_off(ctx, sw, &dt);
	cow1 = stress_ksm_unmerge_field(ctx->vmstat_fd, "cow_ksm");
	if (ret < 0) {
		const int err = errno;

		stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_IDLE);
		if (err == EINTR && stress_ksm_unmerge_stop_seen(ctx, "unmerge"))
			return 1;
		pr_fail("%s: %s unmerge failed, errno=%d (%s)\n", ctx->args->name,
			sw == KSM_SW_PRCTL ? "prctl" : "madvise", err, strerror(err));
		return -1;
	}
	if (sw == KSM_SW_PRCTL && !st->method_cycles[1] && prctl(PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL) != 0) {
		pr_fail("%s: PR_GET_MEMORY_MERGE does not read 0 after PR_SET_MEMORY_MERGE 0\n", ctx->args->name);
		rc = -1;
	}
	stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_VERIFY);
	if (!stress_ksm_unmerge_racers_quiesce(ctx))
		rc = -1;
	if (!ctx->stopped && stress_ksm_unmerge_verify_unmerge(ctx, ksm, (cow0 >= 0 && cow1 >= 0) ? cow1 - cow0 : -1) < 0)
		rc = -1;
	if (stress_ksm_unmerge_zero_check(ctx, "after the unmerge") < 0 || stress_ksm_unmerge_taint_check(ctx) < 0)
		rc = -1;
	stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_IDLE);
	stress_ksm_unmerge_account(ctx, ksm, kzero, dt, (cow0 >= 0 && cow1 >= 0) ? cow1 - cow0 : 0);
	if (rc < 0) {
		st->failures++;
		return -1;
	}
	if (ctx->stopped || empty)
		return ctx->stopped ? 1 : 0;	/* cut short, or nothing unmerged: not a bogo op */
	st->cycles++;
	st->method_cycles[sw == KSM_SW_PRCTL]++;
	stress_bogo_inc(ctx->args);
	return 0;
}

/*
 *  stress_ksm_unmerge_metrics()
 *	this instance's metrics; none whose value is legitimately 0
 */
static void stress_ksm_unmerge_metrics(stress_ksm_unmerge_ctx_t *ctx, const double secs)
{
	stress_args_t *args = ctx->args;
	const stress_ksm_unmerge_instance_t *st = ctx->st;
	const double mib = (double)ctx->page_size / (double)MB;
	char desc[64];
	size_t i;

	if (st->pages_unmerged && st->unmerge_secs > 0.0) {
		stress_metrics_set(args, "MB per sec unmerge rate", (double)st->pages_unmerged * mib / st->unmerge_secs,
			STRESS_METRIC_HARMONIC_MEAN);
		stress_metrics_set(args, "pages unmerged per sec", (double)st->pages_unmerged / st->unmerge_secs,
			STRESS_METRIC_HARMONIC_MEAN);
	}
	if (st->quiet_pages && st->quiet_secs > 0.0)
		stress_metrics_set(args, "MB per sec quiet unmerge rate", (double)st->quiet_pages * mib / st->quiet_secs,
			STRESS_METRIC_HARMONIC_MEAN);
	if (st->unmerge_cycles && st->unmerge_calls > st->unmerge_cycles)
		stress_metrics_set(args, "unmerge calls per cycle", (double)st->unmerge_calls / (double)st->unmerge_cycles,
			STRESS_METRIC_GEOMETRIC_MEAN);
	if (st->cycles) {
		stress_metrics_set(args, "merge wait millisecs per cycle", st->merge_wait_secs * 1000.0 / (double)st->cycles,
			STRESS_METRIC_GEOMETRIC_MEAN);
		if (st->pages_merged)
			stress_metrics_set(args, "pages merged per cycle", (double)st->pages_merged / (double)st->cycles,
				STRESS_METRIC_GEOMETRIC_MEAN);
	}
	for (i = 0; i < KSM_RACERS; i++) {
		const stress_ksm_unmerge_racer_stats_t *rs = &st->racer[i];

		if (!rs->active || !rs->ops || secs <= 0.0)
			continue;
		if (rs->op_ns)
			stress_metrics_set(args, "nanosecs per sparse page", (double)rs->op_ns / (double)rs->ops,
				STRESS_METRIC_HARMONIC_MEAN);
		(void)snprintf(desc, sizeof(desc), "%s ops per sec", stress_ksm_unmerge_racers[i].name);
		stress_metrics_set(args, desc, (double)rs->ops / secs, STRESS_METRIC_HARMONIC_MEAN);
	}
}

/*
 *  stress_ksm_unmerge_outcome()
 *	end of the worker: racer failures and reach, degenerate runs; the exit code
 */
static int stress_ksm_unmerge_outcome(stress_ksm_unmerge_ctx_t *ctx, int rc)
{
	const char *name = ctx->args->name;
	const stress_ksm_unmerge_instance_t *st = ctx->st;
	const uint64_t want = ctx->expect_merged + ctx->expect_zero;
	size_t i;

	for (i = 0; i < KSM_RACERS; i++) {
		const stress_ksm_unmerge_racer_stats_t *rs = &st->racer[i];

		if (!rs->active)
			continue;
		if (rs->failures) {
			rc = EXIT_FAILURE;
		} else if (!rs->evidence && ctx->verify && st->cycles && st->cycles < KSM_JUDGE_CYCLES) {
			pr_inf("%s: racer %s not reached in %" PRIu64 " verified cycle(s): too short a run to judge\n",
				name, stress_ksm_unmerge_racers[i].name, st->cycles);
		} else if (!rs->evidence && ctx->verify && st->cycles) {
			pr_fail("%s: racer %s ran %" PRIu64 " ops but never reached its path (%s): degenerate run\n",
				name, stress_ksm_unmerge_racers[i].name, rs->ops, rs->reason[0] ? rs->reason : "no evidence");
			rc = EXIT_FAILURE;
		}
	}
	if (rc != EXIT_SUCCESS)
		return rc;
	if (want && !st->pages_merged && (st->merge_timeouts || st->partial_merges)) {
		pr_fail("%s: nothing merged in %" PRIu64 " merge waits (ksmd run=%" PRIu64 ", %zu pages per instance): "
			"no throughput reported\n", name, st->merge_timeouts + st->partial_merges,
			stress_ksm_unmerge_knob_u64("run"), ctx->npages);
		return EXIT_FAILURE;
	}
	if (!st->cycles && want) {
		pr_inf_skip("%s: no merge/unmerge cycle verified: the run ended during the %s, %.1f s after the start "
			"(%zu of %zu pages filled; a %zu MB region needs longer: raise --timeout or lower "
			"--ksm-unmerge-bytes)\n", name, st->stop_step[0] ? st->stop_step : "first cycle",
			stress_time_now() - ctx->t_start, ctx->filled, ctx->npages, (size_t)(ctx->region_size / MB));
		return EXIT_NO_RESOURCE;
	}
	if (!want && st->pages_merged) {
		pr_fail("%s: control pattern unique merged %" PRIu64 " pages, expected none\n", name, st->pages_merged);
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

/*
 *  stress_ksm_unmerge_worker()
 *	the worker: verified cycles until the end of the run, racers around
 *	them; returns the instance's exit code
 */
static int stress_ksm_unmerge_worker(stress_args_t *args)
{
	stress_ksm_unmerge_ctx_t ctx;
	uint64_t sw;
	double bound, t0;
	int rc;

	(void)shim_memset(&ctx, 0, sizeof(ctx));
	rc = stress_ksm_unmerge_ctx_init(&ctx, args);
	sw = ctx.use & KSM_SW_BOTH;
	if (rc == EXIT_SUCCESS && (sw & KSM_SW_PRCTL) && prctl(PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL) < 0) {
		if (stress_instance_zero(args))
			pr_inf_skip("%s: method prctl skipped: PR_GET_MEMORY_MERGE failed, errno=%d (%s) (needs Linux "
				"6.4)\n", args->name, errno, strerror(errno));
		sw &= ~KSM_SW_PRCTL;
		rc = sw ? EXIT_SUCCESS : EXIT_NOT_IMPLEMENTED;
	}
	if (rc != EXIT_SUCCESS) {
		stress_ksm_unmerge_ctx_free(&ctx);
		return rc;
	}
	/* merging needs two ksmd passes over every instance's pages */
	bound = 10.0 + (double)(ctx.region_size * args->instances) / (32.0 * MB);
	stress_ksm_unmerge_racers_start(&ctx);
	t0 = stress_time_now();
	while (!stress_ksm_unmerge_ending(&ctx)) {
		const int ret = stress_ksm_unmerge_cycle(&ctx, sw == KSM_SW_BOTH ?
			((ctx.cycle & 1) ? KSM_SW_PRCTL : KSM_SW_MADVISE) : sw, bound);

		if (ret > 0)
			break;
		if (ret < 0) {
			rc = EXIT_FAILURE;
			if (ctx.st->failures >= KSM_MAX_FAILURES) {
				pr_inf("%s: %d failures reached, aborting stress process\n", args->name, KSM_MAX_FAILURES);
				break;
			}
		}
	}
	stress_ksm_unmerge_racers_stop(&ctx);
	stress_ksm_unmerge_phase_set(&ctx, KSM_PHASE_IDLE);
	if (stress_ksm_unmerge_zero_check(&ctx, "after the racers' children exited") < 0)
		rc = EXIT_FAILURE;
	stress_ksm_unmerge_metrics(&ctx, stress_time_now() - t0);
	rc = stress_ksm_unmerge_outcome(&ctx, rc);
	stress_ksm_unmerge_ctx_free(&ctx);
	/* a big region was freed ahead of the timeout: end with the run, not before */
	while (ctx.teardown_secs > 0.0 && stress_continue(args) && stress_time_now() < args->time_end - 0.2)
		(void)shim_nanosleep_uint64(50000000);
	return rc;
}

/*
 *  stress_ksm_unmerge_stacks()
 *	a worker stuck in the kernel: its wchan and every thread's kernel stack
 */
static void stress_ksm_unmerge_stacks(const char *name, const pid_t pid, const char *why)
{
	char path[64], wchan[128], stack[2048], *p;
	struct dirent *d;
	DIR *dir;

	(void)snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
	if (stress_fs_file_read(path, wchan, sizeof(wchan)) <= 0)
		(void)shim_strscpy(wchan, "?", sizeof(wchan));
	pr_fail("%s: worker %d %s; wchan %s, kernel stacks follow\n", name, (int)pid, why, wchan);
	(void)snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	while (dir && (d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		(void)snprintf(path, sizeof(path), "/proc/%d/task/%.16s/stack", (int)pid, d->d_name);
		if (stress_fs_file_read(path, stack, sizeof(stack)) <= 0)
			continue;
		for (p = stack; (p = strchr(p, '\n')) != NULL; )
			*p = (p[1] ? ' ' : '\0');
		pr_inf("%s: worker %d thread %s: %s\n", name, (int)pid, d->d_name, stack);
	}
	if (dir)
		(void)closedir(dir);
}

/*
 *  stress_ksm_unmerge_supervise()
 *	the instance process: pass the stop signal on, report a kernel step
 *	(unmerge or verification) stuck past the hang bound with its stacks,
 *	kill a worker that does not stop; a worker killed from outside fails
 *	the run, one the OOM killer took is a skip
 */
static int stress_ksm_unmerge_supervise(stress_args_t *args, const pid_t pid)
{
	const stress_ksm_unmerge_instance_t *st = &stress_ksm_unmerge_shared->inst[args->instance];
	double stop_at = 0.0;
	bool hung = false, killed = false;
	int status = 0;

	for (;;) {
		const pid_t ret = waitpid(pid, &status, WNOHANG);
		const double now = stress_time_now();

		if (ret == pid)
			break;
		if (ret < 0 && errno != EINTR) {
			pr_fail("%s: waitpid on worker %d failed, errno=%d (%s)\n", args->name, (int)pid, errno, strerror(errno));
			(void)stress_kill_pid(pid);
			return EXIT_FAILURE;
		}
		if (!stress_continue(args) && stop_at == 0.0) {
			stop_at = now;
			(void)shim_kill(pid, SIGALRM);
		}
		if (!hung && (st->phase == KSM_PHASE_UNMERGING || st->phase == KSM_PHASE_VERIFY) &&
		    now - st->phase_since - st->hang_allow > KSM_HANG_SECS) {
			hung = true;
			stress_ksm_unmerge_stacks(args->name, pid, st->phase == KSM_PHASE_UNMERGING ?
				"stuck in the unmerge for longer than the hang bound" :
				"stuck in the verification (racers parking) for longer than the hang bound");
		}
		if (stop_at > 0.0 && !killed && now - stop_at > KSM_STOP_SECS + st->hang_allow) {
			stress_ksm_unmerge_stacks(args->name, pid, "did not stop within 10 secs of the stop request "
				"and is killed");
			(void)stress_kill_pid(pid);
			killed = true;
		}
		(void)shim_nanosleep_uint64(20000000);
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && !killed && stress_process_oomed(pid)) {
		pr_inf_skip("%s: worker %d killed by the OOM killer after %" PRIu64 " bogo ops, skipping stressor\n",
			args->name, (int)pid, stress_bogo_get(args));
		return EXIT_NO_RESOURCE;
	}
	if (WIFSIGNALED(status) && !killed)
		pr_fail("%s: worker %d killed by signal %d from outside the run\n", args->name, (int)pid,
			WTERMSIG(status));
	if (WIFSIGNALED(status) || hung)
		return EXIT_FAILURE;
	return WEXITSTATUS(status);
}

/*
 *  stress_ksm_unmerge_zero_leak()
 *	global ksm_zero_pages less what every live process holds (ksm_stat):
 *	KSM zero pages counted for no live process; -1 unknown
 */
static int64_t stress_ksm_unmerge_zero_leak(void)
{
	int tries;

	for (tries = 0; tries < 20; tries++) {
		const int64_t g0 = stress_ksm_unmerge_file_field(KSM_SYSFS "/ksm_zero_pages", NULL);
		int64_t held = 0, g1;
		struct dirent *d;
		DIR *dir = opendir("/proc");

		if (g0 < 0 || !dir) {
			if (dir)
				(void)closedir(dir);
			return -1;
		}
		while ((d = readdir(dir)) != NULL) {
			char path[64];

			if (d->d_name[0] < '1' || d->d_name[0] > '9')
				continue;
			(void)snprintf(path, sizeof(path), "/proc/%.16s/ksm_stat", d->d_name);
			held += STRESS_MAXIMUM(stress_ksm_unmerge_file_field(path, "ksm_zero_pages"), (int64_t)0);
		}
		(void)closedir(dir);
		g1 = stress_ksm_unmerge_file_field(KSM_SYSFS "/ksm_zero_pages", NULL);
		if (g0 == g1)
			return g0 - held;
		(void)shim_nanosleep_uint64(10000000);
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_leak_judge()
 *	pure: KSM zero pages counted for no live process, now against the
 *	run's start (base, -1 unknown): the least of the readings (an exit
 *	in flight settles), 0 when there is nothing to report
 */
static int64_t stress_ksm_unmerge_leak_judge(const int64_t base, const int64_t *now, const size_t n)
{
	int64_t leak = INT64_MAX;
	size_t i;

	for (i = 0; i < n; i++)
		if (now[i] >= 0)
			leak = STRESS_MINIMUM(leak, now[i] - base);
	return (base < 0 || leak == INT64_MAX || leak < 0) ? 0 : leak;
}

/*
 *  stress_ksm_unmerge_zero_leak_check()
 *	the last instance to finish: no KSM zero page counted for no live
 *	process beyond those the run found (exits settle within 2 s)
 */
static int stress_ksm_unmerge_zero_leak_check(stress_args_t *args)
{
	const stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	const double deadline = stress_time_now() + 2.0;
	int64_t now[16], leak = 0;
	size_t n = 0;

	if (sh->zero_leak0 < 0)
		return EXIT_SUCCESS;
	do {
		now[n++] = stress_ksm_unmerge_zero_leak();
		leak = stress_ksm_unmerge_leak_judge(sh->zero_leak0, now, n);
		if (!leak)
			return EXIT_SUCCESS;
		(void)shim_nanosleep_uint64(200000000);
	} while (stress_time_now() < deadline && n < SIZEOF_ARRAY(now));
	pr_fail("%s: KSM zero pages charged at fork: the global ksm_zero_pages counts %" PRId64 " more KSM zero "
		"pages for no live process than when the run began (%" PRId64 " then): children forked while "
		"their parent unmerged KSM zero pages, or held them in MADV_DONTFORK/WIPEONFORK VMAs, were "
		"charged pages they never mapped, and the count stayed when they exited (ksm_zero_pages and "
		"general_profit only grow)\n", args->name, leak, sh->zero_leak0);
	return EXIT_FAILURE;
}

/*
 *  stress_ksm_unmerge()
 *	stress KSM unmerging: the instance supervises a worker that runs the
 *	verified merge/unmerge cycles with the racers
 */
static int stress_ksm_unmerge(stress_args_t *args)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	char path[PATH_MAX];
	pid_t pid;
	int rc, leak;

	if (!sh || !sh->knobs_ok) {
		pr_inf_skip("%s: %s, skipping stressor\n", args->name, sh && sh->knob_error[0] ? sh->knob_error :
			"the KSM knobs could not be set up");
		return EXIT_NO_RESOURCE;
	}
	stress_proc_state_set(args->name, STRESS_STATE_SYNC_WAIT);
	stress_sync_start_wait(args);
	stress_proc_state_set(args->name, STRESS_STATE_RUN);
	pid = fork();
	if (pid == 0) {
		stress_parent_died_alarm();
		stress_set_oom_adjustment(args, true);
		_exit(stress_ksm_unmerge_worker(args));
	}
	if (pid < 0) {
		pr_inf_skip("%s: fork of the worker failed, errno=%d (%s), skipping stressor\n", args->name,
			errno, strerror(errno));
		rc = EXIT_NO_RESOURCE;
	} else {
		rc = stress_ksm_unmerge_supervise(args, pid);
	}
	/* a killed worker's O_DIRECT temp dir */
	if (stress_fs_temp_dir_args(args, path, sizeof(path)) >= 0)
		(void)rmdir(path);
	if (__atomic_sub_fetch(&sh->running, 1, __ATOMIC_SEQ_CST) == 0) {
		leak = stress_ksm_unmerge_zero_leak_check(args);
		rc = (leak != EXIT_SUCCESS && rc != EXIT_FAILURE) ? leak : rc;
	}
	stress_proc_state_set(args->name, STRESS_STATE_DEINIT);
	return rc;
}

