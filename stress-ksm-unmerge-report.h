/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-report.h: what the run tells the user (private
 * header of stress-ksm-unmerge.c, included once): totals over instances,
 * latency spread, the end-of-run summary and racer lines, the monitor
 * process (progress lines, soak log, hang check, RSS growth), the evidence
 * document written on a hang or failure, the soak summary and the
 * standalone build's YAML section.
 */

/* Spread of a latency sample set */
typedef struct {
	uint64_t n;
	double p50, p95, p99, mean, stdev;
} stress_ksm_unmerge_spread_t;

/*
 *  stress_ksm_unmerge_double_cmp()
 *	qsort comparator for doubles
 */
static int stress_ksm_unmerge_double_cmp(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 *  stress_ksm_unmerge_spread()
 *	p50/p95/p99 (nearest rank), mean and population stdev of v[0..n-1]; sorts v
 */
static void stress_ksm_unmerge_spread(double *v, const size_t n, stress_ksm_unmerge_spread_t *s)
{
	double sum = 0.0, sq = 0.0;
	size_t i;

	(void)memset(s, 0, sizeof(*s));
	if (!n)
		return;
	qsort(v, n, sizeof(*v), stress_ksm_unmerge_double_cmp);
	for (i = 0; i < n; i++)
		sum += v[i];
	s->n = n;
	s->mean = sum / (double)n;
	for (i = 0; i < n; i++)
		sq += (v[i] - s->mean) * (v[i] - s->mean);
	s->stdev = sqrt(sq / (double)n);
	s->p50 = v[(size_t)ceil(0.50 * (double)n) - 1];
	s->p95 = v[(size_t)ceil(0.95 * (double)n) - 1];
	s->p99 = v[(size_t)ceil(0.99 * (double)n) - 1];
}

/*
 *  stress_ksm_unmerge_lat_spread()
 *	spread of one latency ring (at offset off in the instance) over all instances
 */
static void stress_ksm_unmerge_lat_spread(const stress_ksm_unmerge_shared_t *sh,
	const size_t off, stress_ksm_unmerge_spread_t *s)
{
	size_t n = 0, i;
	double *v;

	(void)memset(s, 0, sizeof(*s));
	for (i = 0; i < sh->instances; i++)
		n += ((const stress_ksm_unmerge_lat_t *)((const char *)&sh->inst[i] + off))->count;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return;
	for (n = 0, i = 0; i < sh->instances; i++) {
		const stress_ksm_unmerge_lat_t *lat =
			(const stress_ksm_unmerge_lat_t *)((const char *)&sh->inst[i] + off);

		(void)memcpy(v + n, lat->ms, lat->count * sizeof(*v));
		n += lat->count;
	}
	stress_ksm_unmerge_spread(v, n, s);
	free(v);
}

/*
 *  stress_ksm_unmerge_racer_total()
 *	one racer's figures summed over instances
 */
static void stress_ksm_unmerge_racer_total(const stress_ksm_unmerge_shared_t *sh, const size_t idx,
	stress_ksm_unmerge_racer_stats_t *t)
{
	uint32_t i, j;

	(void)memset(t, 0, sizeof(*t));
	for (i = 0; i < sh->instances; i++) {
		const stress_ksm_unmerge_racer_stats_t *r = &sh->inst[i].racer[idx];

		t->ops += r->ops;
		t->evidence += r->evidence;
		t->failures += r->failures;
		t->op_ns += r->op_ns;
		t->ksmd_waits_timed_out += r->ksmd_waits_timed_out;
		t->meet_timeouts += r->meet_timeouts;
		for (j = 0; j < KSM_RACER_DETAILS; j++)
			t->detail[j] += r->detail[j];
		t->active |= r->active;
		t->skipped |= r->skipped;
		if (!t->reason[0] && r->reason[0])
			(void)strlcpy(t->reason, r->reason, sizeof(t->reason));
	}
}

/*
 *  stress_ksm_unmerge_fields()
 *	number of whitespace separated fields in str
 */
static int stress_ksm_unmerge_fields(const char *str)
{
	bool in_field = false;
	int fields = 0;

	for (; *str; str++) {
		const bool space = (*str == ' ' || *str == '\t' || *str == '\n');

		if (!space && !in_field)
			fields++;
		in_field = !space;
	}
	return fields;
}

/*
 *  stress_ksm_unmerge_pr_report()
 *	pr_inf a report line, kept out of the 10 and 12 field shapes that
 *	LKP's stress-ng parser takes for metrics rows
 */
static void FORMAT(printf, 1, 2) stress_ksm_unmerge_pr_report(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int fields;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* 3 fields of prefix ("stress-ng: info:  [pid]") and "ksm-unmerge:" */
	fields = 4 + stress_ksm_unmerge_fields(buf);
	if (fields == 10 || fields == 12)
		pr_inf("ksm-unmerge: %s -\n", buf);
	else
		pr_inf("ksm-unmerge: %s\n", buf);
}

/*
 *  stress_ksm_unmerge_racer_details_str()
 *	racer idx's named counters: ",name=N,..." for its report line or,
 *	yaml set, "name: N, ..." for its YAML entry; "" if it has none
 */
static void stress_ksm_unmerge_racer_details_str(const size_t idx, const stress_ksm_unmerge_racer_stats_t *t,
	char *buf, const size_t len, const bool yaml)
{
	size_t j, off = 0;

	buf[0] = '\0';
	for (j = 0; j < KSM_RACER_DETAILS && off < len; j++) {
		const char *name = stress_ksm_unmerge_racers[idx].details[j];

		if (!name)
			continue;
		if (yaml)
			off += (size_t)snprintf(buf + off, len - off, "%s%s: %" PRIu64,
				off ? ", " : "", name, t->detail[j]);
		else
			off += (size_t)snprintf(buf + off, len - off, ",%s=%" PRIu64, name, t->detail[j]);
	}
}

/*
 *  stress_ksm_unmerge_totals()
 *	instance figures summed over all instances
 */
static void stress_ksm_unmerge_totals(const stress_ksm_unmerge_shared_t *sh,
	stress_ksm_unmerge_instance_t *t)
{
	uint32_t i;

	(void)memset(t, 0, offsetof(stress_ksm_unmerge_instance_t, unmerge_lat));
	for (i = 0; i < sh->instances; i++) {
		const stress_ksm_unmerge_instance_t *st = &sh->inst[i];

		t->cycles += st->cycles;
		t->merge_timeouts += st->merge_timeouts;
		t->partial_merges += st->partial_merges;
		t->pages_merged += st->pages_merged;
		t->pages_zero += st->pages_zero;
		t->pages_unmerged += st->pages_unmerged;
		t->cow_ksm += st->cow_ksm;
		t->failures += st->failures;
		t->method_cycles[0] += st->method_cycles[0];
		t->method_cycles[1] += st->method_cycles[1];
	}
}

/*
 *  stress_ksm_unmerge_report()
 *	parent: totals, per racer reached/NOT reached lines, latency spreads
 */
static void stress_ksm_unmerge_report(const stress_ksm_unmerge_shared_t *sh)
{
	stress_ksm_unmerge_spread_t s;
	stress_ksm_unmerge_instance_t *t;
	size_t i;

	t = calloc(1, sizeof(*t));
	if (t) {
		stress_ksm_unmerge_totals(sh, t);
		stress_ksm_unmerge_pr_report("totals: cycles=%" PRIu64 ",madvise-cycles=%" PRIu64
			",prctl-cycles=%" PRIu64 ",pages-merged=%" PRIu64 ",zero-pages=%" PRIu64
			",pages-unmerged=%" PRIu64 ",cow-ksm-delta=%" PRIu64 ",merge-timeouts=%" PRIu64
			",partial-merges=%" PRIu64 ",failures=%" PRIu64,
			t->cycles, t->method_cycles[0], t->method_cycles[1], t->pages_merged,
			t->pages_zero, t->pages_unmerged, t->cow_ksm, t->merge_timeouts,
			t->partial_merges, t->failures);
		free(t);
	}

	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		stress_ksm_unmerge_racer_stats_t t;
		char details[192];

		if (!(sh->methods & STRESS_BIT_ULL(KSM_UNMERGE_RACER_SHIFT + i)))
			continue;
		stress_ksm_unmerge_racer_total(sh, i, &t);
		stress_ksm_unmerge_racer_details_str(i, &t, details, sizeof(details), false);
		if (t.active && t.evidence && t.meet_timeouts)
			stress_ksm_unmerge_pr_report("racer %s reached: ops=%" PRIu64 " %s=%" PRIu64
				",merged-phase-timeouts=%" PRIu64 "%s", stress_ksm_unmerge_racer_name(i), t.ops,
				stress_ksm_unmerge_racers[i].evidence, t.evidence, t.meet_timeouts, details);
		else if (t.active && t.evidence)
			stress_ksm_unmerge_pr_report("racer %s reached: ops=%" PRIu64 " %s=%" PRIu64 "%s",
				stress_ksm_unmerge_racer_name(i), t.ops,
				stress_ksm_unmerge_racers[i].evidence, t.evidence, details);
		else if (t.active)
			stress_ksm_unmerge_pr_report("racer %s NOT reached: ops=%" PRIu64 " %s=0%s (%s)",
				stress_ksm_unmerge_racer_name(i), t.ops,
				stress_ksm_unmerge_racers[i].evidence, details,
				t.reason[0] ? t.reason : "path never met a KSM page");
		else
			stress_ksm_unmerge_pr_report("racer %s skipped: %s", stress_ksm_unmerge_racer_name(i),
				t.reason[0] ? t.reason : "not started");
	}
	stress_ksm_unmerge_lat_spread(sh, offsetof(stress_ksm_unmerge_instance_t, unmerge_lat), &s);
	if (s.n)
		stress_ksm_unmerge_pr_report("unmerge millisecs per cycle: p50=%.3f p95=%.3f p99=%.3f "
			"mean=%.3f stdev=%.3f samples=%" PRIu64,
			s.p50, s.p95, s.p99, s.mean, s.stdev, s.n);
	stress_ksm_unmerge_lat_spread(sh, offsetof(stress_ksm_unmerge_instance_t, mrelease_lat), &s);
	if (s.n)
		stress_ksm_unmerge_pr_report("mrelease kill-to-reaped millisecs: p50=%.3f p95=%.3f p99=%.3f "
			"mean=%.3f stdev=%.3f samples=%" PRIu64,
			s.p50, s.p95, s.p99, s.mean, s.stdev, s.n);
}

/*
 *  The monitor: a process forked by the parent's init, independent of the
 *  instances, so a stuck instance cannot silence it.  It prints progress
 *  lines, appends the soak log, watches for stuck steps (hangs) and, with
 *  --ksm-unmerge-stop-on-warn, stops the run at the first warning or hang.
 */

/*
 *  stress_ksm_unmerge_proc_text()
 *	first len-1 bytes of /proc/<pid>/<name>, newlines turned into "; "
 */
static void stress_ksm_unmerge_proc_text(const pid_t pid, const char *name, char *buf, const size_t len)
{
	char path[64];
	ssize_t n;
	char *p;

	(void)snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	n = stress_fs_file_read(path, buf, len - 1);
	if (n <= 0) {
		(void)snprintf(buf, len, "unreadable (%s)", strerror(n < 0 ? errno : ENODATA));
		return;
	}
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	for (p = buf; *p; p++)
		if (*p == '\n')
			*p = '|';
}

/*
 *  stress_ksm_unmerge_status_kb()
 *	a KiB field of /proc/pid/status ("VmRSS:", "VmHWM:"), 0 if unknown
 */
static uint64_t stress_ksm_unmerge_status_kb(const pid_t pid, const char *field)
{
	char path[64], buf[2048];
	const char *p;
	ssize_t n;

	(void)snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	n = stress_fs_file_read(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, field);
	return p ? strtoull(p + strlen(field), NULL, 10) : 0;
}

/* Soak log documents not yet in the file (monitor process) */
typedef struct {
	int fd;				/* the log, -1 if none */
	char *buf;			/* unwritten documents, oldest first */
	size_t len;			/* bytes of them */
	uint32_t docs;			/* intervals among them */
} stress_ksm_unmerge_log_t;

#define KSM_UNMERGE_LOG_BACKLOG		(1 * MB)	/* unwritten documents kept for retries */

/*
 *  stress_ksm_unmerge_log_open()
 *	open the soak log for appending, -1 if none or on error
 */
static int stress_ksm_unmerge_log_open(const stress_ksm_unmerge_shared_t *sh)
{
	int fd;

	if (!sh->log_path[0])
		return -1;
	fd = open(sh->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		pr_err("ksm-unmerge: cannot open soak log %s, errno=%d (%s); every interval "
			"is lost and the run fails\n", sh->log_path, errno, strerror(errno));
	return fd;
}

/*
 *  stress_ksm_unmerge_log_flush()
 *	write and fsync every unwritten document; a failed attempt is cut
 *	off the file again (no half document) and kept for the next retry
 */
static bool stress_ksm_unmerge_log_flush(stress_ksm_unmerge_shared_t *sh, stress_ksm_unmerge_log_t *lg)
{
	off_t end;
	ssize_t n;
	int err;

	if (!lg->docs)
		return true;
	if (lg->fd < 0) {
		err = EBADF;
	} else {
		end = lseek(lg->fd, 0, SEEK_END);
		n = write(lg->fd, lg->buf, lg->len);
		/* special files (/dev/null) cannot be synced: EINVAL */
		if (n == (ssize_t)lg->len && (fsync(lg->fd) == 0 || errno == EINVAL)) {
			if (sh->log_errno)
				pr_inf("ksm-unmerge: soak log %s: %" PRIu32 " delayed interval(s) written\n",
					sh->log_path, lg->docs);
			sh->log_written += lg->docs;
			sh->log_pending = 0;
			sh->log_errno = 0;
			lg->docs = 0;
			lg->len = 0;
			return true;
		}
		err = (n >= 0 && n < (ssize_t)lg->len) ? ENOSPC : errno;
		/* cut the half document off; if that fails, the reader sees it */
		if (n > 0 && end >= 0 && ftruncate(lg->fd, end) < 0)
			pr_err("ksm-unmerge: soak log %s: cutting a half-written document "
				"off failed, errno=%d (%s)\n", sh->log_path, errno, strerror(errno));
	}
	if (sh->log_errno != err || sh->log_pending != lg->docs)
		pr_err("ksm-unmerge: soak log %s: %" PRIu32 " interval(s) not written, errno=%d (%s); "
			"retrying at the next interval\n", sh->log_path, lg->docs, err, strerror(err));
	sh->log_errno = err;
	sh->log_pending = lg->docs;
	return false;
}

/*
 *  stress_ksm_unmerge_log_write()
 *	queue one document behind the unwritten ones and try to write them all
 */
static void stress_ksm_unmerge_log_write(stress_ksm_unmerge_shared_t *sh, stress_ksm_unmerge_log_t *lg,
	const char *doc, const size_t len)
{
	if (!sh->log_path[0] || !lg->buf)
		return;
	if (lg->len + len > KSM_UNMERGE_LOG_BACKLOG) {
		/* retries failed for too long: the oldest intervals are lost */
		sh->log_lost += lg->docs;
		lg->docs = 0;
		lg->len = 0;
	}
	if (len > KSM_UNMERGE_LOG_BACKLOG) {
		sh->log_lost++;
		return;
	}
	(void)memcpy(lg->buf + lg->len, doc, len);
	lg->len += len;
	lg->docs++;
	(void)stress_ksm_unmerge_log_flush(sh, lg);
}

/*
 *  stress_ksm_unmerge_racers_reached()
 *	racers with evidence and racers started, over all instances
 */
static void stress_ksm_unmerge_racers_reached(const stress_ksm_unmerge_shared_t *sh,
	uint32_t *reached, uint32_t *active)
{
	size_t i;

	*reached = 0;
	*active = 0;
	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		stress_ksm_unmerge_racer_stats_t t;

		stress_ksm_unmerge_racer_total(sh, i, &t);
		*active += t.active;
		*reached += (t.active && t.evidence);
	}
}

/*
 *  stress_ksm_unmerge_mib_per_sec()
 *	MiB/s of unmerging over all instances so far, 0 if none
 */
static double stress_ksm_unmerge_mib_per_sec(const stress_ksm_unmerge_shared_t *sh)
{
	double secs = 0.0, pages = 0.0;
	uint32_t i;

	for (i = 0; i < sh->instances; i++) {
		secs += sh->inst[i].unmerge_secs;
		pages += (double)sh->inst[i].pages_unmerged;
	}
	return secs > 0.0 ? pages * (double)getpagesize() / (double)MB / secs : 0.0;
}

/*
 *  stress_ksm_unmerge_stop_latency()
 *	timed runs whose instances all returned: secs from the timeout to the
 *	last return (negative: big regions are freed ahead of it); false if none
 */
static bool stress_ksm_unmerge_stop_latency(const stress_ksm_unmerge_shared_t *sh, double *lat)
{
	double last = 0.0;
	uint32_t i;

	for (i = 0; i < sh->instances; i++) {
		if (sh->inst[i].pid > 0 && sh->inst[i].stopped_at <= 0.0)
			return false;
		if (sh->inst[i].stopped_at > last)
			last = sh->inst[i].stopped_at;
	}
	if (sh->end_time <= 0.0 || last <= 0.0 || last < sh->end_time - 2.0)
		return false;	/* no timeout, nothing ran, or stopped early by a signal */
	*lat = last - sh->end_time;
	return true;
}

/*
 *  stress_ksm_unmerge_progress_doc()
 *	one soak log document: run figures now; final marks the last one
 */
static size_t stress_ksm_unmerge_progress_doc(const stress_ksm_unmerge_shared_t *sh, char *buf,
	const size_t len, const bool final)
{
	stress_ksm_unmerge_instance_t *t = calloc(1, sizeof(*t));
	const double now = stress_time_now();
	size_t off = 0, i;
	uint32_t reached, active;
	double lat;

	if (!t)
		return 0;
	stress_ksm_unmerge_totals(sh, t);
	stress_ksm_unmerge_racers_reached(sh, &reached, &active);
	off += (size_t)snprintf(buf + off, len - off,
		"---\nstressor: ksm-unmerge\nepoch-secs: %.3f\nelapsed-secs: %.3f\n"
		"remaining-secs: %.0f\nfinal: %s\ncycles: %" PRIu64 "\npages-merged: %" PRIu64 "\n"
		"pages-unmerged: %" PRIu64 "\nunmerge-mb-per-sec: %.3f\nmerge-timeouts: %" PRIu64 "\n"
		"failures: %" PRIu64 "\nhangs: %" PRIu64 "\nkernel-warnings: %" PRIu32 "\n"
		"racers-reached: %" PRIu32 "\nracers-active: %" PRIu32 "\nintervals-elapsed: %" PRIu32 "\n"
		"intervals-logged: %" PRIu32 "\nintervals-lost: %" PRIu32 "\nrss-growth-max-kb: %" PRIu64 "\n",
		now, now - sh->start_time, sh->end_time > now ? sh->end_time - now : 0.0,
		final ? "true" : "false", t->cycles, t->pages_merged, t->pages_unmerged,
		stress_ksm_unmerge_mib_per_sec(sh), t->merge_timeouts, t->failures, t->hangs,
		stress_ksm_unmerge_klog_events(), reached, active, sh->log_elapsed,
		sh->log_written, sh->log_lost, sh->rss_growth_kb);
	if (stress_ksm_unmerge_stop_latency(sh, &lat))
		off += (size_t)snprintf(buf + off, len - off, "stop-latency-secs: %.3f\n", lat);
	off += (size_t)snprintf(buf + off, len - off, "instances:\n");
	for (i = 0; i < sh->instances && off < len; i++) {
		const stress_ksm_unmerge_instance_t *st = &sh->inst[i];

		off += (size_t)snprintf(buf + off, len - off,
			"    - instance: %zu\n      pid: %d\n      cycles: %" PRIu64 "\n"
			"      phase: %s\n      rss-kb: %" PRIu64 "\n", i, (int)st->pid, st->cycles,
			stress_ksm_unmerge_phase_names[st->phase],
			st->pid > 0 ? stress_ksm_unmerge_status_kb(st->pid, "VmRSS:") : 0);
	}
	free(t);
	return off < len ? off : len - 1;
}

/*
 *  stress_ksm_unmerge_progress_line()
 *	the periodic status line
 */
static void stress_ksm_unmerge_progress_line(const stress_ksm_unmerge_shared_t *sh)
{
	stress_ksm_unmerge_instance_t *t = calloc(1, sizeof(*t));
	const double now = stress_time_now();
	uint32_t reached, active;

	if (!t)
		return;
	stress_ksm_unmerge_totals(sh, t);
	stress_ksm_unmerge_racers_reached(sh, &reached, &active);
	stress_ksm_unmerge_pr_report("progress: elapsed=%.0fs,remaining=%.0fs,cycles=%" PRIu64
		",unmerge-mb-per-sec=%.1f,pages-merged=%" PRIu64 ",racers-reached=%" PRIu32 "/%" PRIu32
		",kernel-warnings=%" PRIu32 ",failures=%" PRIu64 ",hangs=%" PRIu64,
		now - sh->start_time, sh->end_time > now ? sh->end_time - now : 0.0, t->cycles,
		stress_ksm_unmerge_mib_per_sec(sh), t->pages_merged, reached, active,
		stress_ksm_unmerge_klog_events(), t->failures, t->hangs);
	free(t);
}

/*
 *  stress_ksm_unmerge_kernel_log_tail()
 *	the last lines of the kernel log ring (klogctl) as a YAML list
 */
static size_t stress_ksm_unmerge_kernel_log_tail(char *buf, const size_t len, const int lines)
{
	const int size = klogctl(10, NULL, 0);	/* SYSLOG_ACTION_SIZE_BUFFER */
	char *log, *p, *end;
	size_t off;
	int n, seen = 0;

	off = (size_t)snprintf(buf, len, "kernel-log-tail:\n");
	if (size <= 0 || !(log = malloc((size_t)size + 1)))
		return off + (size_t)snprintf(buf + off, len - off, "    - 'unavailable'\n");
	n = klogctl(3, log, size);		/* SYSLOG_ACTION_READ_ALL */
	if (n < 0) {
		off += (size_t)snprintf(buf + off, len - off, "    - 'klogctl failed: %s'\n", strerror(errno));
		free(log);
		return off;
	}
	log[n] = '\0';
	for (p = log + n; p > log && seen <= lines; p--)
		seen += (p[-1] == '\n');
	for (; *p && off < len; p = end + (*end != '\0')) {
		end = strchrnul(p, '\n');
		off += (size_t)snprintf(buf + off, len - off, "    - '");
		for (; p < end && off + 2 < len; p++) {
			if (*p == '\'')
				buf[off++] = '\'';
			buf[off++] = (*p >= ' ' && *p < 0x7f) ? *p : '?';
		}
		off += (size_t)snprintf(buf + off, len - off, "'\n");
	}
	free(log);
	return off < len ? off : len - 1;
}

/*
 *  stress_ksm_unmerge_evidence_doc()
 *	soak log document with the evidence of a warning or hang: knobs,
 *	each instance's wchan and kernel stack, the recent kernel log
 */
static size_t stress_ksm_unmerge_evidence_doc(const stress_ksm_unmerge_shared_t *sh, char *buf,
	const size_t len, const char *why)
{
	char text[4096];
	size_t off, i;

	off = (size_t)snprintf(buf, len, "---\nstressor: ksm-unmerge\nevidence: '%s'\n"
		"epoch-secs: %.3f\nknobs:\n", why, stress_time_now());
	for (i = 0; i < KSM_KNOBS && off < len; i++) {
		if (stress_ksm_unmerge_knob_read(stress_ksm_unmerge_knob_names[i], text, sizeof(text)) < 0)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "    %s: '%s'\n",
			stress_ksm_unmerge_knob_names[i], text);
	}
	off += (size_t)snprintf(buf + off, len - off, "instances:\n");
	for (i = 0; i < sh->instances && off < len; i++) {
		const pid_t pid = sh->inst[i].pid;
		char wchan[128];

		if (pid <= 0)
			continue;
		stress_ksm_unmerge_proc_text(pid, "wchan", wchan, sizeof(wchan));
		stress_ksm_unmerge_proc_text(pid, "stack", text, sizeof(text));
		off += (size_t)snprintf(buf + off, len - off,
			"    - instance: %zu\n      pid: %d\n      phase: %s\n      wchan: '%s'\n"
			"      stack: '%s'\n", i, (int)pid,
			stress_ksm_unmerge_phase_names[sh->inst[i].phase], wchan, text);
	}
	if (off < len)
		off += stress_ksm_unmerge_kernel_log_tail(buf + off, len - off, 40);
	return off < len ? off : len - 1;
}

/*
 *  stress_ksm_unmerge_threads_report()
 *	wchan and kernel stack of every racer thread of a stuck instance
 */
static void stress_ksm_unmerge_threads_report(const pid_t pid)
{
	char path[64], wchan[128], stack[2048];
	struct dirent *d;
	DIR *dir;

	(void)snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir)) != NULL) {
		char name[64];
		const long tid = strtol(d->d_name, NULL, 10);

		if (tid <= 0 || tid == pid)
			continue;
		(void)snprintf(name, sizeof(name), "task/%ld/wchan", tid);
		stress_ksm_unmerge_proc_text(pid, name, wchan, sizeof(wchan));
		(void)snprintf(name, sizeof(name), "task/%ld/stack", tid);
		stress_ksm_unmerge_proc_text(pid, name, stack, sizeof(stack));
		pr_inf("ksm-unmerge: thread %ld of pid %d: wchan %s, kernel stack: %s\n",
			tid, (int)pid, wchan, stack);
	}
	(void)closedir(dir);
}

/*
 *  stress_ksm_unmerge_hang_check()
 *	report instances stuck in one step longer than the bound; true if any
 */
static bool stress_ksm_unmerge_hang_check(stress_ksm_unmerge_shared_t *sh)
{
	const double now = stress_time_now();
	bool hung = false;
	uint32_t i;

	for (i = 0; i < sh->instances; i++) {
		stress_ksm_unmerge_instance_t *st = &sh->inst[i];
		const double allow = st->hang_allow;	/* read before phase_since: it is reset after */
		char wchan[128], stack[2048];

		/* merge waits and checks are bounded in user space; kernel steps are not */
		if (st->pid <= 0 || st->hang_reported ||
		    (st->phase != KSM_PHASE_UNMERGING && st->phase != KSM_PHASE_VERIFY) ||
		    now - st->phase_since - allow < (double)sh->hang_timeout)
			continue;
		st->hang_reported = true;
		st->hangs++;
		hung = true;
		stress_ksm_unmerge_proc_text(st->pid, "wchan", wchan, sizeof(wchan));
		stress_ksm_unmerge_proc_text(st->pid, "stack", stack, sizeof(stack));
		pr_fail("ksm-unmerge: instance %" PRIu32 " (pid %d) stuck in phase %s for %.0f s "
			"(bound %" PRIu32 " s%s): wchan %s, kernel stack: %s\n", i, (int)st->pid,
			stress_ksm_unmerge_phase_names[st->phase], now - st->phase_since,
			sh->hang_timeout, allow > 0.0 ? " plus the sparse walk's allowance" : "", wchan, stack);
		stress_ksm_unmerge_threads_report(st->pid);
	}
	return hung;
}

/*
 *  stress_ksm_unmerge_stop_run()
 *	ask every instance to stop, as stress-ng's own timeout does
 */
static void stress_ksm_unmerge_stop_run(stress_ksm_unmerge_shared_t *sh)
{
	uint32_t i;

	sh->stopping = true;
	for (i = 0; i < sh->instances; i++)
		if (sh->inst[i].pid > 0)
			(void)kill(sh->inst[i].pid, SIGALRM);
}

static volatile bool stress_ksm_unmerge_monitor_done;

/*
 *  stress_ksm_unmerge_monitor_sig()
 *	SIGTERM from deinit: write the final document and leave
 */
static void stress_ksm_unmerge_monitor_sig(int sig)
{
	(void)sig;
	stress_ksm_unmerge_monitor_done = true;
}

/*
 *  stress_ksm_unmerge_rss_growth()
 *	largest growth of an instance's peak RSS (VmHWM) since the previous
 *	interval, counted from the first interval after its first verified
 *	cycle (the region fill is not growth)
 */
static void stress_ksm_unmerge_rss_growth(stress_ksm_unmerge_shared_t *sh, uint64_t *prev)
{
	uint32_t i;

	for (i = 0; i < sh->instances; i++) {
		const stress_ksm_unmerge_instance_t *st = &sh->inst[i];
		const uint64_t kb = (st->pid > 0 && st->cycles) ? stress_ksm_unmerge_status_kb(st->pid, "VmHWM:") : 0;

		if (kb && prev[i] && kb > prev[i] && kb - prev[i] > sh->rss_growth_kb)
			sh->rss_growth_kb = kb - prev[i];
		prev[i] = kb;
	}
}

/*
 *  stress_ksm_unmerge_monitor_final()
 *	last document: final: true only when every interval before it is in the file
 */
static void stress_ksm_unmerge_monitor_final(stress_ksm_unmerge_shared_t *sh,
	stress_ksm_unmerge_log_t *lg, char *doc, const size_t len)
{
	const bool all = stress_ksm_unmerge_log_flush(sh, lg) && !sh->log_lost;

	stress_ksm_unmerge_log_write(sh, lg, doc, stress_ksm_unmerge_progress_doc(sh, doc, len, all));
	if (sh->log_path[0] && (lg->docs || sh->log_lost))
		pr_err("ksm-unmerge: soak log %s: %" PRIu32 " of %" PRIu32 " intervals%s are not in "
			"the file\n", sh->log_path, sh->log_elapsed - STRESS_MINIMUM(sh->log_written, sh->log_elapsed),
			sh->log_elapsed, lg->docs ? " and the final document" : "");
}

/*
 *  stress_ksm_unmerge_monitor()
 *	monitor process main loop
 */
static void NORETURN stress_ksm_unmerge_monitor(stress_ksm_unmerge_shared_t *sh)
{
	const size_t len = 65536;
	char *doc = malloc(len);
	uint64_t *rss = calloc(sh->instances, sizeof(*rss));
	stress_ksm_unmerge_log_t lg = { stress_ksm_unmerge_log_open(sh), malloc(KSM_UNMERGE_LOG_BACKLOG), 0, 0 };
	double next = sh->start_time + (sh->progress ? sh->progress : 60);
	bool evidence_kept = false;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	(void)signal(SIGTERM, stress_ksm_unmerge_monitor_sig);
	(void)signal(SIGINT, SIG_IGN);
	(void)signal(SIGALRM, SIG_IGN);
	while (!stress_ksm_unmerge_monitor_done && doc && rss) {
		const bool hung = stress_ksm_unmerge_hang_check(sh);
		const bool warned = stress_ksm_unmerge_klog_events() > 0;
		const uint32_t req = sh->log_sync_req;

		if ((hung || warned) && sh->stop_on_warn && !evidence_kept) {
			stress_ksm_unmerge_log_write(sh, &lg, doc, stress_ksm_unmerge_evidence_doc(sh, doc, len,
				hung ? "hang" : "kernel warning"));
			evidence_kept = true;
			pr_inf("ksm-unmerge: stopping the run at the first %s (--ksm-unmerge-stop-on-warn)\n",
				hung ? "hang" : "kernel warning");
			stress_ksm_unmerge_stop_run(sh);
		}
		if (stress_time_now() >= next) {
			if (sh->progress)
				stress_ksm_unmerge_progress_line(sh);
			stress_ksm_unmerge_rss_growth(sh, rss);
			sh->log_elapsed++;
			stress_ksm_unmerge_log_write(sh, &lg, doc, stress_ksm_unmerge_progress_doc(sh, doc, len, false));
			next += sh->progress ? sh->progress : 60;
		}
		if (req != sh->log_sync_done) {
			(void)stress_ksm_unmerge_log_flush(sh, &lg);
			sh->log_sync_done = req;
		}
		(void)shim_nanosleep_uint64(250000000);
	}
	if (doc)
		stress_ksm_unmerge_monitor_final(sh, &lg, doc, len);
	if (lg.fd >= 0)
		(void)close(lg.fd);
	free(lg.buf);
	free(rss);
	free(doc);
	_exit(0);
}

/*
 *  stress_ksm_unmerge_monitor_start()
 *	parent: fork the monitor
 */
static void stress_ksm_unmerge_monitor_start(stress_ksm_unmerge_shared_t *sh)
{
	const pid_t pid = fork();

	if (pid < 0) {
		pr_err("ksm-unmerge: cannot fork the monitor, errno=%d (%s); no progress, "
			"soak log or hang watchdog\n", errno, strerror(errno));
		return;
	}
	if (pid == 0)
		stress_ksm_unmerge_monitor(sh);
	sh->monitor_pid = pid;
}

/*
 *  stress_ksm_unmerge_monitor_stop()
 *	parent: final log document, then reap the monitor
 */
static void stress_ksm_unmerge_monitor_stop(stress_ksm_unmerge_shared_t *sh)
{
	int status;

	if (sh->monitor_pid <= 0)
		return;
	(void)kill(sh->monitor_pid, SIGTERM);
	if (shim_waitpid(sh->monitor_pid, &status, 0) < 0)
		pr_dbg("ksm-unmerge: waitpid on monitor %d failed, errno=%d (%s)\n",
			(int)sh->monitor_pid, errno, strerror(errno));
	sh->monitor_pid = 0;
}

#if defined(STRESS_KSM_STANDALONE)
/*
 *  stress_ksm_unmerge_yaml_spread()
 *	append one latency spread as a YAML flow mapping
 */
static size_t stress_ksm_unmerge_yaml_spread(char *buf, const size_t len, const char *name,
	const stress_ksm_unmerge_spread_t *s)
{
	return (size_t)snprintf(buf, len, "        %s: { samples: %" PRIu64 ", p50: %.6f, p95: %.6f, "
		"p99: %.6f, mean: %.6f, stdev: %.6f }\n", name, s->n, s->p50, s->p95, s->p99, s->mean, s->stdev);
}

/*
 *  stress_ksm_unmerge_yaml()
 *	standalone build: the ksm-unmerge YAML section (totals, latencies, racers)
 */
static void stress_ksm_unmerge_yaml(const stress_ksm_unmerge_shared_t *sh)
{
	const size_t len = 16384;
	char *buf = malloc(len);
	stress_ksm_unmerge_instance_t *t = calloc(1, sizeof(*t));
	stress_ksm_unmerge_spread_t s;
	size_t off = 0, i;

	if (!buf || !t)
		goto out;
	stress_ksm_unmerge_totals(sh, t);
	off += (size_t)snprintf(buf + off, len - off,
		"    pattern: %s\n    cycles: %" PRIu64 "\n    madvise-cycles: %" PRIu64 "\n"
		"    prctl-cycles: %" PRIu64 "\n    pages-merged: %" PRIu64 "\n    zero-pages: %" PRIu64 "\n"
		"    pages-unmerged: %" PRIu64 "\n    cow-ksm-delta: %" PRIu64 "\n"
		"    merge-timeouts: %" PRIu64 "\n    partial-merges: %" PRIu64 "\n    failures: %" PRIu64 "\n"
		"    latencies:\n",
		stress_ksm_unmerge_patterns[sh->pattern], t->cycles, t->method_cycles[0], t->method_cycles[1],
		t->pages_merged, t->pages_zero, t->pages_unmerged, t->cow_ksm, t->merge_timeouts,
		t->partial_merges, t->failures);
	stress_ksm_unmerge_lat_spread(sh, offsetof(stress_ksm_unmerge_instance_t, unmerge_lat), &s);
	off += stress_ksm_unmerge_yaml_spread(buf + off, len - off, "unmerge-millisecs", &s);
	stress_ksm_unmerge_lat_spread(sh, offsetof(stress_ksm_unmerge_instance_t, mrelease_lat), &s);
	if (s.n)
		off += stress_ksm_unmerge_yaml_spread(buf + off, len - off, "mrelease-millisecs", &s);
	off += (size_t)snprintf(buf + off, len - off, "    racers:\n");
	for (i = 0; i < KSM_UNMERGE_RACERS && off < len; i++) {
		stress_ksm_unmerge_racer_stats_t r;
		char details[192];

		if (!(sh->methods & STRESS_BIT_ULL(KSM_UNMERGE_RACER_SHIFT + i)))
			continue;
		stress_ksm_unmerge_racer_total(sh, i, &r);
		off += (size_t)snprintf(buf + off, len - off,
			"        - racer: %s\n          ops: %" PRIu64 "\n          evidence: %" PRIu64 "\n"
			"          evidence-counts: %s\n          failures: %" PRIu64 "\n"
			"          reached: %s\n          skipped: %s\n",
			stress_ksm_unmerge_racer_name(i), r.ops, r.evidence,
			stress_ksm_unmerge_racers[i].evidence, r.failures,
			(r.active && r.evidence) ? "true" : "false", r.skipped ? "true" : "false");
		stress_ksm_unmerge_racer_details_str(i, &r, details, sizeof(details), true);
		if (details[0] && off < len)
			off += (size_t)snprintf(buf + off, len - off, "          details: { %s }\n", details);
	}
	if (off < len)
		stress_yaml_extra_add("ksm-unmerge", buf);
out:
	free(t);
	free(buf);
}
#endif

/*
 *  stress_ksm_unmerge_soak_report()
 *	soak figures: intervals logged / elapsed, largest RSS growth between
 *	two intervals, stop latency
 */
static void stress_ksm_unmerge_soak_report(const stress_ksm_unmerge_shared_t *sh)
{
	char lat_str[48] = "";
	double lat;

	if (!sh->log_path[0] && !sh->progress)
		return;
	if (stress_ksm_unmerge_stop_latency(sh, &lat))
		(void)snprintf(lat_str, sizeof(lat_str), ",stop-latency-secs=%.3f", lat);
	stress_ksm_unmerge_pr_report("soak: intervals-logged=%" PRIu32 "/%" PRIu32 ",intervals-lost=%" PRIu32
		",rss-growth-max-kb=%" PRIu64 "%s", STRESS_MINIMUM(sh->log_written, sh->log_elapsed),
		sh->log_elapsed, sh->log_elapsed - STRESS_MINIMUM(sh->log_written, sh->log_elapsed),
		sh->rss_growth_kb, lat_str);
}
