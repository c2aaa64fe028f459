/*
 *  stress_ksm_unmerge_report_line()
 *	pr_inf a report line, kept out of the 10 and 12 field shapes that
 *	LKP's stress-ng parser takes for metrics rows
 */
static void FORMAT(printf, 1, 2) stress_ksm_unmerge_report_line(const char *fmt, ...)
{
	char buf[512];
	const char *p;
	int fields = 4;		/* "stress-ng: info:  [pid] ksm-unmerge:" */
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (p = buf; *p; p++)
		fields += (*p != ' ' && (p == buf || p[-1] == ' '));
	pr_inf("ksm-unmerge: %s%s\n", buf, (fields == 10 || fields == 12) ? " -" : "");
}

/*
 *  stress_ksm_unmerge_double_cmp()
 *	qsort: order doubles
 */
static int stress_ksm_unmerge_double_cmp(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 *  stress_ksm_unmerge_spread()
 *	report p50/p95/p99 (nearest rank), mean and stdev of one latency
 *	ring over every instance
 */
static void stress_ksm_unmerge_spread(const stress_ksm_unmerge_shared_t *sh, const size_t off, const char *what)
{
	double *v, sum = 0.0, sq = 0.0, mean;
	size_t n = 0, i;

	for (i = 0; i < sh->instances; i++)
		n += ((const stress_ksm_unmerge_lat_t *)((const char *)&sh->inst[i] + off))->count;
	if (!n || !(v = calloc(n, sizeof(*v))))
		return;
	for (n = 0, i = 0; i < sh->instances; i++) {
		const stress_ksm_unmerge_lat_t *lat = (const stress_ksm_unmerge_lat_t *)((const char *)&sh->inst[i] + off);

		(void)shim_memcpy(v + n, lat->ms, lat->count * sizeof(*v));
		n += lat->count;
	}
	qsort(v, n, sizeof(*v), stress_ksm_unmerge_double_cmp);
	for (i = 0; i < n; i++)
		sum += v[i];
	mean = sum / (double)n;
	for (i = 0; i < n; i++)
		sq += (v[i] - mean) * (v[i] - mean);
	stress_ksm_unmerge_report_line("%s: p50=%.3f p95=%.3f p99=%.3f mean=%.3f stdev=%.3f samples=%zu", what,
		v[(size_t)ceil(0.50 * (double)n) - 1], v[(size_t)ceil(0.95 * (double)n) - 1],
		v[(size_t)ceil(0.99 * (double)n) - 1], mean, sqrt(sq / (double)n), n);
	free(v);
}

/*
 *  stress_ksm_unmerge_report()
 *	parent, after the run: totals, one line per requested racer (reached
 *	with its evidence and counters, NOT reached, or skipped and why),
 *	the latency spreads
 */
static void stress_ksm_unmerge_report(const stress_ksm_unmerge_shared_t *sh)
{
	const uint64_t use = stress_ksm_unmerge_use(sh->method);
	stress_ksm_unmerge_instance_t t;
	size_t i, j, k;

	(void)shim_memset(&t, 0, offsetof(stress_ksm_unmerge_instance_t, stop_step));
	for (i = 0; i < sh->instances; i++) {
		const stress_ksm_unmerge_instance_t *st = &sh->inst[i];

		t.cycles += st->cycles;
		t.merge_timeouts += st->merge_timeouts;
		t.partial_merges += st->partial_merges;
		t.failures += st->failures;
		t.pages_merged += st->pages_merged;
		t.pages_zero += st->pages_zero;
		t.pages_unmerged += st->pages_unmerged;
		t.cow_ksm += st->cow_ksm;
		t.method_cycles[0] += st->method_cycles[0];
		t.method_cycles[1] += st->method_cycles[1];
		t.quiet_cycles += st->quiet_cycles;
	}
	stress_ksm_unmerge_report_line("totals: cycles=%" PRIu64 ",madvise-cycles=%" PRIu64 ",prctl-cycles=%" PRIu64
		",quiet-cycles=%" PRIu64 ",pages-merged=%" PRIu64 ",zero-pages=%" PRIu64 ",pages-unmerged=%" PRIu64
		",cow-ksm-delta=%" PRIu64 ",merge-timeouts=%" PRIu64 ",partial-merges=%" PRIu64 ",failures=%" PRIu64,
		t.cycles, t.method_cycles[0], t.method_cycles[1], t.quiet_cycles, t.pages_merged, t.pages_zero,
		t.pages_unmerged, t.cow_ksm, t.merge_timeouts, t.partial_merges, t.failures);
	for (k = 0; k < KSM_RACERS; k++) {
		const stress_ksm_unmerge_racer_t *r = &stress_ksm_unmerge_racers[k];
		stress_ksm_unmerge_racer_stats_t rt;
		char details[256] = "";
		size_t off = 0;

		if (!(use & KSM_RACER_BIT(k)))
			continue;
		(void)shim_memset(&rt, 0, sizeof(rt));
		for (i = 0; i < sh->instances; i++) {
			const stress_ksm_unmerge_racer_stats_t *rs = &sh->inst[i].racer[k];

			rt.ops += rs->ops;
			rt.evidence += rs->evidence;
			rt.meet_timeouts += rs->meet_timeouts;
			for (j = 0; j < KSM_DETAILS; j++)
				rt.detail[j] += rs->detail[j];
			rt.active |= rs->active;
			if (!rt.reason[0])
				(void)shim_strscpy(rt.reason, rs->reason, sizeof(rt.reason));
		}
		if (rt.meet_timeouts)
			off += (size_t)snprintf(details, sizeof(details), ",merged-phase-timeouts=%" PRIu64, rt.meet_timeouts);
		for (j = 0; j < KSM_DETAILS && r->details[j] && off < sizeof(details); j++)
			off += (size_t)snprintf(details + off, sizeof(details) - off, ",%s=%" PRIu64, r->details[j], rt.detail[j]);
		if (rt.active && rt.evidence)
			stress_ksm_unmerge_report_line("racer %s reached: ops=%" PRIu64 " %s=%" PRIu64 "%s", r->name,
				rt.ops, r->evidence, rt.evidence, details);
		else if (rt.active)
			stress_ksm_unmerge_report_line("racer %s NOT reached: ops=%" PRIu64 " %s=0%s (%s)", r->name,
				rt.ops, r->evidence, details, rt.reason[0] ? rt.reason : "its path never met a KSM page");
		else
			stress_ksm_unmerge_report_line("racer %s skipped: %s", r->name, rt.reason[0] ? rt.reason : "not started");
	}
	stress_ksm_unmerge_spread(sh, offsetof(stress_ksm_unmerge_instance_t, unmerge_lat), "unmerge millisecs per cycle");
	stress_ksm_unmerge_spread(sh, offsetof(stress_ksm_unmerge_instance_t, mrelease_lat),
		"mrelease kill-to-reaped millisecs");
}

/*
 *  stress_ksm_unmerge_init()
 *	parent, before the instances: shared state, the run lock, the knobs
 *	saved (state file) and set, the interface self-test, the baselines
 *	of the kernel checks (taint, KSM zero pages no process holds)
 */
static void stress_ksm_unmerge_init(const uint32_t instances)
{
	stress_ksm_unmerge_shared_t *sh;
	int ret;

	stress_ksm_unmerge_shared_size = sizeof(*sh) + (size_t)instances * sizeof(stress_ksm_unmerge_instance_t);
	sh = mmap(NULL, stress_ksm_unmerge_shared_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		pr_err("ksm-unmerge: cannot mmap %zu bytes of shared state, errno=%d (%s)\n",
			stress_ksm_unmerge_shared_size, errno, strerror(errno));
		return;
	}
	stress_ksm_unmerge_shared = sh;
	sh->instances = sh->running = instances;
	(void)stress_setting_get("ksm-unmerge-pattern", &sh->pattern);
	(void)stress_setting_get("ksm-unmerge-method", &sh->method);
	sh->mem_avail = (uint64_t)STRESS_MAXIMUM(stress_ksm_unmerge_file_field("/proc/meminfo", "MemAvailable"),
		(int64_t)0) * KB;
	ret = stress_ksm_unmerge_lock();
	if (ret < 0) {
		(void)snprintf(sh->knob_error, sizeof(sh->knob_error), (ret == -EAGAIN || ret == -EACCES) ?
			"another stress-ksm-unmerge run owns the KSM knobs (%s.lock is locked)" :
			"cannot create the run lock %s.lock", KSM_STATE_FILE);
		return;
	}
	stress_ksm_unmerge_state_repair();
	stress_ksm_unmerge_knobs_save(&sh->saved);
	ret = stress_ksm_unmerge_state_write(&sh->saved);
	if (ret < 0)
		pr_warn("ksm-unmerge: cannot write state file %s, errno=%d (%s); a SIGKILLed run will not be "
			"repaired\n", KSM_STATE_FILE, -ret, strerror(-ret));
	if (stress_ksm_unmerge_knobs_set(sh->knob_error, sizeof(sh->knob_error)) < 0) {
		(void)stress_ksm_unmerge_knobs_restore(&sh->saved);
		return;
	}
	sh->knobs_ok = true;
	stress_ksm_unmerge_iface_selftest(&sh->iface);
	sh->taint = (uint64_t)STRESS_MAXIMUM(stress_ksm_unmerge_file_field("/proc/sys/kernel/tainted", NULL), (int64_t)0);
	sh->zero_leak0 = stress_ksm_unmerge_zero_leak();
}

/*
 *  stress_ksm_unmerge_deinit()
 *	parent, after the instances: the report, ksmd's last scan, the knobs restored
 */
static void stress_ksm_unmerge_deinit(void)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;

	if (!sh)
		return;
	if (sh->knobs_ok)
		stress_ksm_unmerge_report(sh);
	if (stress_ksm_unmerge_lock_fd >= 0) {
		if (sh->knobs_ok)
			stress_ksm_unmerge_ksmd_drain(&sh->saved);
		if (stress_ksm_unmerge_knobs_restore(&sh->saved) == 0)
			(void)shim_unlink(KSM_STATE_FILE);
		(void)close(stress_ksm_unmerge_lock_fd);
		stress_ksm_unmerge_lock_fd = -1;
	}
	(void)munmap((void *)sh, stress_ksm_unmerge_shared_size);
	stress_ksm_unmerge_shared = NULL;
}

static const stress_exercises_t exercises[] = {
	STRESS_EX_FEATURE("ksm"),
	STRESS_EX_SYSCALL("madvise"),
	STRESS_EX_SYSCALL("prctl"),
	STRESS_EX_SYSCALL("vmsplice"),
	STRESS_EX_SYSCALL("userfaultfd"),
	STRESS_EX_SYSCALL("process_mrelease"),
	STRESS_EX_SYSCALL("pidfd_open"),
	STRESS_EX_SYSCALL("mremap"),
	STRESS_EX_SYSCALL("mprotect"),
	STRESS_EX_SYSCALL("ptrace"),
	STRESS_EX_LIBRARY("pthread"),
	STRESS_EX_END
};

const stressor_info_t stress_ksm_unmerge_info = {
	.stressor = stress_ksm_unmerge,
	.supported = stress_ksm_unmerge_supported,
	.init = stress_ksm_unmerge_init,
	.deinit = stress_ksm_unmerge_deinit,
	.opts = opts,
	.help = help,
	.exercises = exercises,
	.classifier = CLASS_VM | CLASS_OS,
	.verify = VERIFY_ALWAYS,
	.max_metrics_items = 32,
};

#else

/*
 *  stress_ksm_unmerge_method()
 *	no methods in a build without KSM
 */
static const char *stress_ksm_unmerge_method(const size_t i)
{
	(void)i;
	return NULL;
}

static const stress_exercises_t exercises[] = {
	STRESS_EX_FEATURE("ksm"),
	STRESS_EX_END
};

const stressor_info_t stress_ksm_unmerge_info = {
	.stressor = stress_unimplemented,
	.opts = opts,
	.help = help,
	.exercises = exercises,
	.classifier = CLASS_VM | CLASS_OS,
	.verify = VERIFY_ALWAYS,
	.unimplemented_reason = "built without MADV_MERGEABLE, prctl or pthread support"
};

#endif
