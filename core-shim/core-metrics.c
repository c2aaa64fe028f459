/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/core-metrics.c: the shared per-instance stats and metrics
 * table, the stress-ng 0.22 metrics text (brief 10 field / full 12
 * field rows, miscellaneous metrics), summary lines, the --times block
 * and the YAML writer.
 */
#include "stress-ng.h"

#include <ctype.h>
#include <gnu/libc-version.h>
#include <math.h>
#include <pwd.h>
#include <sched.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <time.h>

#define STRINGIFY(x)	#x
#define XSTRINGIFY(x)	STRINGIFY(x)

typedef struct stress_yaml_extra {
	struct stress_yaml_extra *next;
	char *name;
	char *body;
} stress_yaml_extra_t;

stress_shared_t *g_shared;
static stress_yaml_extra_t *yaml_extras_head;
static stress_yaml_extra_t *yaml_extras_tail;

/*
 *  stress_align_up()
 *	round n up to a multiple of 64
 */
static inline size_t stress_align_up(const size_t n)
{
	return (n + 63) & ~(size_t)63;
}

/*
 *  stress_shared_alloc()
 *	map the shared header, metric descriptions, per-instance stats
 *	and metric values in one MAP_SHARED region
 */
stress_shared_t *stress_shared_alloc(const uint32_t instances,
	const size_t max_metrics_items)
{
	const size_t items = max_metrics_items ?
		(max_metrics_items > STRESS_SHIM_METRICS_MAX ?
		 STRESS_SHIM_METRICS_MAX : max_metrics_items) :
		STRESS_METRICS_ITEMS_DEFAULT_SIZE;
	const size_t sz_hdr = stress_align_up(sizeof(stress_shared_t));
	const size_t sz_desc = stress_align_up(items * sizeof(stress_metric_desc_t));
	const size_t sz_stats = stress_align_up((size_t)instances * sizeof(stress_stats_t));
	const size_t sz_vals = stress_align_up((size_t)instances * items * sizeof(double));
	const size_t size = sz_hdr + sz_desc + sz_stats + sz_vals;
	uint8_t *ptr;
	uint32_t i;

	ptr = mmap(NULL, size, PROT_READ | PROT_WRITE,
		MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ptr == MAP_FAILED) {
		pr_err("cannot mmap %zu bytes of shared memory, errno=%d (%s)\n",
			size, errno, strerror(errno));
		return NULL;
	}
	g_shared = (stress_shared_t *)ptr;
	g_shared->size = size;
	g_shared->instances = instances;
	g_shared->max_metrics_items = items;
	g_shared->desc = (stress_metric_desc_t *)(ptr + sz_hdr);
	g_shared->stats = (stress_stats_t *)(ptr + sz_hdr + sz_desc);
	for (i = 0; i < instances; i++) {
		stress_stats_t *s = &g_shared->stats[i];

		s->metrics_values = (double *)(ptr + sz_hdr + sz_desc + sz_stats) +
			((size_t)i * items);
		s->args.stats = s;
	}
	return g_shared;
}

/*
 *  stress_shared_free()
 *	unmap the shared region
 */
void stress_shared_free(void)
{
	if (g_shared) {
		(void)munmap((void *)g_shared, g_shared->size);
		g_shared = NULL;
	}
}

/*
 *  stress_metrics_lock()
 *	spin on the shared description lock
 */
static void stress_metrics_lock(void)
{
	while (__atomic_exchange_n(&g_shared->lock, 1, __ATOMIC_ACQUIRE))
		(void)sched_yield();
}

/*
 *  stress_metrics_unlock()
 *	release the shared description lock
 */
static void stress_metrics_unlock(void)
{
	__atomic_store_n(&g_shared->lock, 0, __ATOMIC_RELEASE);
}

/*
 *  stress_metrics_find()
 *	slot index for (description, mean_type), allocating a new one;
 *	-1 when the table is full
 */
static ssize_t stress_metrics_find(const char *description, const int mean_type)
{
	size_t i;
	ssize_t idx = -1;

	stress_metrics_lock();
	for (i = 0; i < g_shared->num_metrics_items; i++) {
		if ((g_shared->desc[i].mean_type == mean_type) &&
		    !strcmp(g_shared->desc[i].description, description)) {
			idx = (ssize_t)i;
			goto unlock;
		}
	}
	if (i >= g_shared->max_metrics_items) {
		g_shared->overflow = true;
		goto unlock;
	}
	(void)shim_strscpy(g_shared->desc[i].description, description,
		sizeof(g_shared->desc[i].description));
	g_shared->desc[i].mean_type = mean_type;
	g_shared->num_metrics_items++;
	idx = (ssize_t)i;
unlock:
	stress_metrics_unlock();
	return idx;
}

/*
 *  stress_metrics_set()
 *	set this instance's value of a metric
 */
void stress_metrics_set(stress_args_t *args, const char *description,
	const double value, const int mean_type)
{
	stress_stats_t *stats;
	ssize_t idx;

	if (!args || !description || !g_shared)
		return;
	stats = args->stats;
	if (!stats || !stats->metrics_values)
		return;
	idx = stress_metrics_find(description, mean_type);
	if (idx >= 0)
		stats->metrics_values[idx] = value;
}

/*
 *  stress_metrics_totals_get()
 *	sum up the instances the way stress-ng's metrics dump does
 */
void stress_metrics_totals_get(const stress_stats_t *stats, const uint32_t n,
	stress_metrics_totals_t *t)
{
	double r_sum = 0.0;
	uint32_t i;

	(void)memset(t, 0, sizeof(*t));
	for (i = 0; i < n; i++) {
		const stress_stats_t *s = &stats[i];

		if (s->duration > 0.0) {
			t->completed++;
			r_sum += s->duration;
		}
		t->run_ok |= s->args.bogo.count.run_ok;
		t->c_total += s->args.bogo.count.counter;
		t->u_time += s->utime;
		t->s_time += s->stime;
		if (s->maxrss > t->maxrss)
			t->maxrss = s->maxrss;
	}
	t->r_total = t->completed ? r_sum / (double)t->completed : 0.0;
	t->bogo_rate_r_time = (t->r_total > 0.0) ?
		(double)t->c_total / t->r_total : 0.0;
	t->bogo_rate = ((t->u_time + t->s_time) > 0.0) ?
		(double)t->c_total / (t->u_time + t->s_time) : 0.0;
	t->cpu_usage = (t->r_total > 0.0) ?
		100.0 * (t->u_time + t->s_time) / t->r_total : 0.0;
	t->cpu_usage = t->completed ? t->cpu_usage / (double)t->completed : 0.0;
}

/*
 *  stress_metrics_header_format()
 *	the two metrics table header lines (without the log prefix)
 */
void stress_metrics_header_format(char *line1, char *line2, const size_t len,
	const bool brief)
{
	if (brief) {
		(void)snprintf(line1, len, "%-13s %9.9s %9.9s %9.9s %9.9s %12s %14s\n",
			"stressor", "bogo ops", "real time", "usr time",
			"sys time", "bogo ops/s", "bogo ops/s");
		(void)snprintf(line2, len, "%-13s %9.9s %9.9s %9.9s %9.9s %12s %14s\n",
			"", "", "(secs) ", "(secs) ", "(secs) ", "(real time)",
			"(usr+sys time)");
	} else {
		(void)snprintf(line1, len, "%-13s %9.9s %9.9s %9.9s %9.9s %12s %14s %12.12s %13.13s\n",
			"stressor", "bogo ops", "real time", "usr time",
			"sys time", "bogo ops/s", "bogo ops/s", "CPU used per",
			"RSS Max");
		(void)snprintf(line2, len, "%-13s %9.9s %9.9s %9.9s %9.9s %12s %14s %12.12s %13.13s\n",
			"", "", "(secs) ", "(secs) ", "(secs) ", "(real time)",
			"(usr+sys time)", "instance (%)", "(KB)");
	}
}

/*
 *  stress_metrics_row_format()
 *	one metrics table row: 7 fields brief, 9 fields full
 */
int stress_metrics_row_format(char *buf, const size_t len, const char *name,
	const stress_metrics_totals_t *t, const bool brief)
{
	if (brief)
		return snprintf(buf, len, "%-13s %9" PRIu64 " %9.2f %9.2f %9.2f %12.2f %14.2f\n",
			name, t->c_total, t->r_total, t->u_time, t->s_time,
			t->bogo_rate_r_time, t->bogo_rate);
	return snprintf(buf, len, "%-13s %9" PRIu64 " %9.2f %9.2f %9.2f %12.2f %14.2f %12.2f %13ld\n",
		name, t->c_total, t->r_total, t->u_time, t->s_time,
		t->bogo_rate_r_time, t->bogo_rate, t->cpu_usage, t->maxrss);
}

/*
 *  stress_metric_mean()
 *	combine instance values: geometric/harmonic mean over non-zero
 *	values, total/maximum of positive values; 0.0 if none count
 */
double stress_metric_mean(const double *values, const uint32_t n,
	const int mean_type)
{
	double acc = 0.0;
	uint32_t i, used = 0;

	for (i = 0; i < n; i++) {
		const double v = values[i];

		switch (mean_type) {
		case STRESS_METRIC_GEOMETRIC_MEAN:
			if (v != 0.0) {
				acc += log(fabs(v));
				used++;
			}
			break;
		case STRESS_METRIC_HARMONIC_MEAN:
			if (v != 0.0) {
				acc += 1.0 / v;
				used++;
			}
			break;
		case STRESS_METRIC_TOTAL:
			if (v > 0.0)
				acc += v;
			break;
		case STRESS_METRIC_MAXIMUM:
			if (v > acc)
				acc = v;
			break;
		default:
			return 0.0;
		}
	}
	if (mean_type == STRESS_METRIC_GEOMETRIC_MEAN)
		return used ? exp(acc / (double)used) : 0.0;
	if (mean_type == STRESS_METRIC_HARMONIC_MEAN)
		return (acc > 0.0) ? (double)used / acc : 0.0;
	return acc;
}

/*
 *  stress_metric_mean_name()
 *	text for a mean type as used in the misc metrics rows
 */
const char *stress_metric_mean_name(const int mean_type)
{
	switch (mean_type) {
	case STRESS_METRIC_GEOMETRIC_MEAN:
		return "geometric mean";
	case STRESS_METRIC_HARMONIC_MEAN:
		return "harmonic mean";
	case STRESS_METRIC_TOTAL:
		return "total";
	case STRESS_METRIC_MAXIMUM:
		return "maximum";
	default:
		return "unknown";
	}
}

/*
 *  stress_metrics_misc_format()
 *	one miscellaneous metrics row
 */
int stress_metrics_misc_format(char *buf, const size_t len, const char *name,
	const double value, const char *description, const int mean_type,
	const uint32_t instances)
{
	return snprintf(buf, len, "%-13s %13.2f %s (%s of %" PRIu32 " instance%s)\n",
		name, value, description, stress_metric_mean_name(mean_type),
		instances, (instances > 1) ? "s" : "");
}

/*
 *  stress_description_yamlify()
 *	metric description to YAML key: lower case letters and digits,
 *	space -> '-', '%' -> "percent", the rest dropped, at most 39 chars
 */
char *stress_description_yamlify(const char *description, char *buf,
	const size_t len)
{
	const size_t max = (len < STRESS_SHIM_YAML_KEY_LEN ? len : STRESS_SHIM_YAML_KEY_LEN) - 1;
	size_t n = 0;
	const char *src;

	for (src = description; *src && (n < max); src++) {
		const unsigned char ch = (unsigned char)*src;

		if (isalpha(ch)) {
			buf[n++] = (char)tolower(ch);
		} else if (isdigit(ch)) {
			buf[n++] = (char)ch;
		} else if (ch == ' ') {
			buf[n++] = '-';
		} else if (ch == '%') {
			static const char pc[] = "percent";
			size_t i;

			for (i = 0; pc[i] && (n < max); i++)
				buf[n++] = pc[i];
		}
	}
	buf[n] = '\0';
	return buf;
}

/*
 *  stress_metrics_values_get()
 *	gather metric slot idx across all instances into vals
 */
static void stress_metrics_values_get(const size_t idx, double *vals)
{
	uint32_t i;

	for (i = 0; i < g_shared->instances; i++)
		vals[i] = g_shared->stats[i].metrics_values[idx];
}

/*
 *  stress_metrics_yaml_dump()
 *	the metrics: YAML section with per-instance entries
 */
static void stress_metrics_yaml_dump(FILE *yaml, const char *name,
	const stress_metrics_totals_t *t)
{
	char key[STRESS_SHIM_YAML_KEY_LEN];
	size_t k;
	uint32_t i;

	(void)fprintf(yaml, "metrics:\n");
	(void)fprintf(yaml, "    - stressor: %s\n", name);
	(void)fprintf(yaml, "      bogo-ops: %" PRIu64 "\n", t->c_total);
	(void)fprintf(yaml, "      bogo-ops-per-second-usr-sys-time: %f\n", t->bogo_rate);
	(void)fprintf(yaml, "      bogo-ops-per-second-real-time: %f\n", t->bogo_rate_r_time);
	(void)fprintf(yaml, "      wall-clock-time: %f\n", t->r_total);
	(void)fprintf(yaml, "      user-time: %f\n", t->u_time);
	(void)fprintf(yaml, "      system-time: %f\n", t->s_time);
	(void)fprintf(yaml, "      cpu-usage-per-instance: %f\n", t->cpu_usage);
	(void)fprintf(yaml, "      max-rss: %ld\n", t->maxrss);
	for (k = 0; k < g_shared->num_metrics_items; k++) {
		double sum = 0.0;

		for (i = 0; i < g_shared->instances; i++)
			sum += g_shared->stats[i].metrics_values[k];
		(void)fprintf(yaml, "      %s: %f\n",
			stress_description_yamlify(g_shared->desc[k].description,
				key, sizeof(key)),
			t->completed ? sum / (double)t->completed : 0.0);
	}
	(void)fprintf(yaml, "      instances:\n");
	for (i = 0; i < g_shared->instances; i++) {
		const stress_stats_t *s = &g_shared->stats[i];
		const double us = s->utime + s->stime;
		const uint64_t c = s->args.bogo.count.counter;

		(void)fprintf(yaml, "          - instance: %" PRIu32 "\n", i);
		(void)fprintf(yaml, "            bogo-ops: %" PRIu64 "\n", c);
		(void)fprintf(yaml, "            bogo-ops-per-second-usr-sys-time: %f\n",
			us > 0.0 ? (double)c / us : 0.0);
		(void)fprintf(yaml, "            bogo-ops-per-second-real-time: %f\n",
			s->duration > 0.0 ? (double)c / s->duration : 0.0);
		(void)fprintf(yaml, "            wall-clock-time: %f\n", s->duration);
		(void)fprintf(yaml, "            user-time: %f\n", s->utime);
		(void)fprintf(yaml, "            system-time: %f\n", s->stime);
		(void)fprintf(yaml, "            cpu-usage: %f\n",
			s->duration > 0.0 ? 100.0 * us / s->duration : 0.0);
		(void)fprintf(yaml, "            max-rss: %ld\n", s->maxrss);
		for (k = 0; k < g_shared->num_metrics_items; k++)
			(void)fprintf(yaml, "            %s: %f\n",
				stress_description_yamlify(g_shared->desc[k].description,
					key, sizeof(key)),
				s->metrics_values[k]);
	}
	(void)fprintf(yaml, "\n");
}

/*
 *  stress_metrics_misc_dump()
 *	the "miscellaneous metrics:" block (--metrics only); rows whose
 *	combined value is 0 are not printed
 */
static void stress_metrics_misc_dump(const char *name, const uint32_t completed)
{
	double *vals;
	size_t k;
	bool header = false;

	if (!g_shared->num_metrics_items)
		return;
	vals = calloc(g_shared->instances, sizeof(*vals));
	if (!vals) {
		pr_err("cannot allocate metrics buffer, errno=%d (%s)\n",
			errno, strerror(errno));
		return;
	}
	for (k = 0; k < g_shared->num_metrics_items; k++) {
		const stress_metric_desc_t *d = &g_shared->desc[k];
		char buf[256];
		double value;

		stress_metrics_values_get(k, vals);
		value = stress_metric_mean(vals, g_shared->instances, d->mean_type);
		if (value == 0.0)
			continue;
		if (!header) {
			pr_metrics("miscellaneous metrics:\n");
			if (g_shared->overflow)
				pr_metrics("note: only reporting first %zu metrics\n",
					g_shared->max_metrics_items);
			header = true;
		}
		(void)stress_metrics_misc_format(buf, sizeof(buf), name, value,
			d->description, d->mean_type, completed);
		pr_metrics("%s", buf);
	}
	free(vals);
}

/*
 *  stress_metrics_dump()
 *	metrics table (if --metrics/--metrics-brief) and YAML metrics
 */
void stress_metrics_dump(FILE *yaml, const char *name)
{
	stress_metrics_totals_t t;
	const bool brief = !!(g_opt_flags & OPT_FLAGS_METRICS_BRIEF);
	const bool text = !!(g_opt_flags & OPT_FLAGS_METRICS);
	char l1[256], l2[256];

	if (!g_shared)
		return;
	stress_metrics_totals_get(g_shared->stats, g_shared->instances, &t);
	if (text) {
		pr_block_begin();
		stress_metrics_header_format(l1, l2, sizeof(l1), brief);
		pr_metrics("%s", l1);
		pr_metrics("%s", l2);
		if (!brief || t.c_total || t.run_ok) {
			(void)stress_metrics_row_format(l1, sizeof(l1), name, &t, brief);
			pr_metrics("%s", l1);
		}
		if (!brief)
			stress_metrics_misc_dump(name, t.completed);
		pr_block_end();
	}
	if (yaml)
		stress_metrics_yaml_dump(yaml, name, &t);
}

/*
 *  stress_times_dump()
 *	the --times block and its YAML section
 */
void stress_times_dump(FILE *yaml, const double duration)
{
	struct tms buf;
	double load[3];
	const long int ticks = sysconf(_SC_CLK_TCK);
	const double total_cpu = (double)stress_cpus_configured_get() * duration;
	double u, s, tt, u_pc, s_pc, t_pc;
	int have_load;

	if (!(g_opt_flags & OPT_FLAGS_TIMES))
		return;
	if ((times(&buf) == (clock_t)-1) || (ticks <= 0)) {
		pr_err("cannot get run time information, errno=%d (%s)\n",
			errno, strerror(errno));
		return;
	}
	have_load = (getloadavg(load, 3) == 3);
	u = (double)buf.tms_cutime / (double)ticks;
	s = (double)buf.tms_cstime / (double)ticks;
	tt = u + s;
	u_pc = (total_cpu > 0.0) ? 100.0 * u / total_cpu : 0.0;
	s_pc = (total_cpu > 0.0) ? 100.0 * s / total_cpu : 0.0;
	t_pc = (total_cpu > 0.0) ? 100.0 * tt / total_cpu : 0.0;

	pr_inf("for a %.2fs run time:\n", duration);
	pr_inf("  %8.2fs available CPU time\n", total_cpu);
	pr_inf("  %8.2fs user time   (%6.2f%%)\n", u, u_pc);
	pr_inf("  %8.2fs system time (%6.2f%%)\n", s, s_pc);
	pr_inf("  %8.2fs total time  (%6.2f%%)\n", tt, t_pc);
	if (have_load)
		pr_inf("load average: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
	if (!yaml)
		return;
	(void)fprintf(yaml, "times:\n");
	(void)fprintf(yaml, "      run-time: %f\n", duration);
	(void)fprintf(yaml, "      available-cpu-time: %f\n", total_cpu);
	(void)fprintf(yaml, "      user-time: %f\n", u);
	(void)fprintf(yaml, "      system-time: %f\n", s);
	(void)fprintf(yaml, "      total-time: %f\n", tt);
	(void)fprintf(yaml, "      user-time-percent: %f\n", u_pc);
	(void)fprintf(yaml, "      system-time-percent: %f\n", s_pc);
	(void)fprintf(yaml, "      total-time-percent: %f\n", t_pc);
	if (have_load) {
		(void)fprintf(yaml, "      load-average-1-minute: %f\n", load[0]);
		(void)fprintf(yaml, "      load-average-5-minute: %f\n", load[1]);
		(void)fprintf(yaml, "      load-average-15-minute: %f\n", load[2]);
	}
	(void)fprintf(yaml, "\n");
}

/*
 *  stress_exit_status_summary()
 *	skipped:/passed:/failed:/metrics untrustworthy: lines
 */
void stress_exit_status_summary(const char *name,
	const stress_status_counts_t *counts)
{
	const struct {
		const char *label;
		uint32_t n;
	} rows[] = {
		{ "skipped", counts->skipped },
		{ "passed", counts->passed },
		{ "failed", counts->failed },
		{ "metrics untrustworthy", counts->bad_metrics },
	};
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(rows); i++) {
		if (rows[i].n)
			pr_inf("%s: %" PRIu32 ": %s (%" PRIu32 ")\n",
				rows[i].label, rows[i].n, name, rows[i].n);
		else
			pr_inf("%s: 0\n", rows[i].label);
	}
}

/*
 *  stress_yaml_quote()
 *	write a single quoted YAML scalar ('' escapes ')
 */
static void stress_yaml_quote(FILE *yaml, const char *key, const char *val)
{
	const char *p;

	(void)fprintf(yaml, "      %s: '", key);
	for (p = val; *p; p++) {
		if (*p == '\'')
			(void)fputc('\'', yaml);
		if ((unsigned char)*p >= ' ')
			(void)fputc(*p, yaml);
	}
	(void)fprintf(yaml, "'\n");
}

/*
 *  stress_yaml_system_info()
 *	build-info: and system-info: sections
 */
static void stress_yaml_system_info(FILE *yaml)
{
	struct utsname uts;
	struct sysinfo si;
	struct tm tm;
	const time_t t = time(NULL);
	const struct passwd *pw = getpwuid(getuid());
	char host[256] = "unknown";
	char buf[64];
	const char *compiler = "gcc " __VERSION__;

	(void)fprintf(yaml, "build-info:\n");
	stress_yaml_quote(yaml, "compiler", compiler);
	stress_yaml_quote(yaml, "stdc-version", XSTRINGIFY(__STDC_VERSION__));
	stress_yaml_quote(yaml, "stdc-hosted", XSTRINGIFY(__STDC_HOSTED__));
	(void)fprintf(yaml, "\nsystem-info:\n");
	stress_yaml_quote(yaml, "stress-ng-version", STRESS_SHIM_VERSION);
	stress_yaml_quote(yaml, "run-by", pw ? pw->pw_name : "unknown");
	if (localtime_r(&t, &tm)) {
		(void)snprintf(buf, sizeof(buf), "%4.4d:%2.2d:%2.2d",
			tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
		stress_yaml_quote(yaml, "date-yyyy-mm-dd", buf);
		(void)snprintf(buf, sizeof(buf), "%2.2d:%2.2d:%2.2d",
			tm.tm_hour, tm.tm_min, tm.tm_sec);
		stress_yaml_quote(yaml, "time-hh-mm-ss", buf);
		(void)fprintf(yaml, "      epoch-secs: %ld\n", (long int)t);
	}
	(void)gethostname(host, sizeof(host) - 1);
	stress_yaml_quote(yaml, "hostname", host);
	if (uname(&uts) == 0) {
		stress_yaml_quote(yaml, "sysname", uts.sysname);
		stress_yaml_quote(yaml, "nodename", uts.nodename);
		stress_yaml_quote(yaml, "release", uts.release);
		stress_yaml_quote(yaml, "version", uts.version);
		stress_yaml_quote(yaml, "machine", uts.machine);
	}
	stress_yaml_quote(yaml, "compiler", compiler);
	(void)snprintf(buf, sizeof(buf), "glibc %s", gnu_get_libc_version());
	stress_yaml_quote(yaml, "libc", buf);
	if (sysinfo(&si) == 0) {
		(void)fprintf(yaml, "      uptime: %ld\n", (long int)si.uptime);
		(void)fprintf(yaml, "      totalram: %lu\n", si.totalram);
		(void)fprintf(yaml, "      freeram: %lu\n", si.freeram);
		(void)fprintf(yaml, "      sharedram: %lu\n", si.sharedram);
		(void)fprintf(yaml, "      bufferram: %lu\n", si.bufferram);
		(void)fprintf(yaml, "      totalswap: %lu\n", si.totalswap);
		(void)fprintf(yaml, "      freeswap: %lu\n", si.freeswap);
	}
	(void)fprintf(yaml, "      pagesize: %zu\n", stress_memory_page_size_get());
	(void)fprintf(yaml, "      cpus: %" PRId32 "\n", stress_cpus_configured_get());
	(void)fprintf(yaml, "      cpus-online: %" PRId32 "\n", stress_cpus_online_get());
	(void)fprintf(yaml, "      ticks-per-second: %ld\n", sysconf(_SC_CLK_TCK));
	(void)fprintf(yaml, "\n");
}

/*
 *  stress_yaml_open()
 *	create the YAML file and write the header sections; NULL if no
 *	file was asked for or it cannot be created (error printed)
 */
FILE *stress_yaml_open(const char *filename)
{
	FILE *yaml;

	if (!filename)
		return NULL;
	yaml = fopen(filename, "w");
	if (!yaml) {
		pr_err("cannot output YAML data to '%s', errno=%d (%s)\n",
			filename, errno, strerror(errno));
		return NULL;
	}
	(void)fprintf(yaml, "---\n");
	stress_yaml_system_info(yaml);
	return yaml;
}

/*
 *  stress_yaml_extra_add()
 *	queue an extra top-level section for the YAML file; a section of
 *	a name already queued replaces that one's body (no duplicate keys)
 */
void stress_yaml_extra_add(const char *name, const char *yaml_body)
{
	stress_yaml_extra_t *e;

	if (!name || !*name)
		return;
	for (e = yaml_extras_head; e; e = e->next) {
		char *body;

		if (strcmp(e->name, name))
			continue;
		body = strdup(yaml_body ? yaml_body : "");
		if (!body)
			goto nomem;
		free(e->body);
		e->body = body;
		return;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		goto nomem;
	e->name = strdup(name);
	e->body = strdup(yaml_body ? yaml_body : "");
	if (!e->name || !e->body) {
		free(e->name);
		free(e->body);
		free(e);
		goto nomem;
	}
	if (yaml_extras_tail)
		yaml_extras_tail->next = e;
	else
		yaml_extras_head = e;
	yaml_extras_tail = e;
	return;
nomem:
	pr_err("cannot queue YAML section '%s', errno=%d (%s)\n",
		name, errno, strerror(errno));
}

/*
 *  stress_yaml_extras_free()
 *	drop the queued extra sections
 */
void stress_yaml_extras_free(void)
{
	stress_yaml_extra_t *e = yaml_extras_head;

	while (e) {
		stress_yaml_extra_t *next = e->next;

		free(e->name);
		free(e->body);
		free(e);
		e = next;
	}
	yaml_extras_head = NULL;
	yaml_extras_tail = NULL;
}

/*
 *  stress_yaml_close()
 *	write the extra sections and the end marker, close the file
 */
void stress_yaml_close(FILE *yaml)
{
	const stress_yaml_extra_t *e;

	if (yaml) {
		for (e = yaml_extras_head; e; e = e->next) {
			const size_t len = strlen(e->body);

			(void)fprintf(yaml, "%s:\n%s%s\n", e->name, e->body,
				(len && (e->body[len - 1] != '\n')) ? "\n" : "");
		}
		(void)fprintf(yaml, "...\n");
		if (fclose(yaml) == EOF)
			pr_err("cannot write YAML file, errno=%d (%s)\n",
				errno, strerror(errno));
	}
	stress_yaml_extras_free();
}
