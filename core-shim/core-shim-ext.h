/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/core-shim-ext.h: shim-only extensions.  The first section is
 * the one extension a stressor may use in the standalone build
 * (guard it with STRESS_KSM_STANDALONE); the rest is the interface
 * between the core-shim/core-*.c files and their unit tests, not part
 * of the stress-ng API.
 */
#ifndef CORE_SHIM_EXT_H
#define CORE_SHIM_EXT_H

#include <getopt.h>

/*
 *  Extension: add an extra top-level YAML section.  name is the key
 *  (e.g. "kernel-log"), yaml_body the already indented lines that
 *  follow "name:\n".  Emitted after metrics: and before the final "...".
 *  Adding a name again replaces the body queued under it.
 */
extern void stress_yaml_extra_add(const char *name, const char *yaml_body);

/* ---------------- shim internals below ---------------- */

#define STRESS_SHIM_PROG_NAME		"stress-ng"
#define STRESS_SHIM_VERSION		"0.22.00"
#define STRESS_SHIM_INSTANCES_MAX	(4096)
#define STRESS_SHIM_METRICS_MAX		(1024)
#define STRESS_SHIM_DESC_LEN		(64)
#define STRESS_SHIM_YAML_KEY_LEN	(40)
#define STRESS_SHIM_TIMEOUT_DEFAULT	(60ULL * 60ULL * 24ULL)
#define STRESS_SHIM_KILL_GRACE		(2.0)	/* secs SIGALRM -> SIGKILL */
#define STRESS_SHIM_HANG_GRACE		(30.0)	/* secs past timeout -> SIGKILL */

/* core-log.c: log flag bits, same bits as stress-ng core-log.h */
#define PR_LOG_FLAGS_ERROR	 STRESS_BIT_U(0)
#define PR_LOG_FLAGS_INFO	 STRESS_BIT_U(1)
#define PR_LOG_FLAGS_DEBUG	 STRESS_BIT_U(2)
#define PR_LOG_FLAGS_FAIL	 STRESS_BIT_U(3)
#define PR_LOG_FLAGS_WARN	 STRESS_BIT_U(4)
#define PR_LOG_FLAGS_METRICS	 STRESS_BIT_U(5)
#define PR_LOG_FLAGS_STDERR	 STRESS_BIT_U(7)
#define PR_LOG_FLAGS_BRIEF	 STRESS_BIT_U(8)
#define PR_LOG_FLAGS_SKIP_SILENT STRESS_BIT_U(10)
#define PR_LOG_FLAGS_ALL	 (PR_LOG_FLAGS_ERROR | PR_LOG_FLAGS_INFO | \
				  PR_LOG_FLAGS_DEBUG | PR_LOG_FLAGS_FAIL | \
				  PR_LOG_FLAGS_WARN  | PR_LOG_FLAGS_METRICS)

extern uint32_t g_pr_log_flags;
extern int pr_fd(void);
extern int pr_log_file_open(const char *filename);
extern void pr_fail_count_reset(void);

/* Per-instance state, lives in shared memory (core-metrics.c) */
typedef struct stress_stats {
	stress_args_t args;		/* the stressor's args */
	pid_t pid;			/* instance pid, 0 = not started */
	bool started;			/* fork succeeded */
	bool completed;			/* stressor() returned */
	bool reaped;			/* parent waited for it */
	bool signalled;			/* parent sent a stop signal */
	bool ops_set;			/* --<name>-ops given */
	int wait_status;		/* waitpid status */
	int rc;				/* mapped exit status */
	uint64_t ops_share;		/* this instance's share of the ops */
	double fork_time;		/* time just before fork() */
	double start;			/* stressor start time */
	double duration;		/* stressor run time */
	double utime;			/* user time, secs */
	double stime;			/* system time, secs */
	long int maxrss;		/* max RSS in KB */
	double *metrics_values;		/* this instance's metric values */
} stress_stats_t;

typedef struct {
	char description[STRESS_SHIM_DESC_LEN];
	int mean_type;
} stress_metric_desc_t;

/* Shared memory header: one per run */
typedef struct {
	volatile int lock;		/* metrics description lock */
	uint32_t instances;		/* number of instances */
	size_t max_metrics_items;	/* metric slots */
	size_t num_metrics_items;	/* slots in use */
	volatile bool overflow;		/* a metric did not fit */
	volatile bool caught_sigint;	/* SIGINT/SIGTERM stop */
	volatile uint64_t klog_errors;	/* --klog-check error count */
	stress_metric_desc_t *desc;	/* [max_metrics_items] */
	stress_stats_t *stats;		/* [instances] */
	size_t size;			/* mapping size */
} stress_shared_t;

extern stress_shared_t *g_shared;

/* core-metrics.c */
typedef struct {
	uint64_t c_total;		/* bogo ops, all instances */
	double r_total;			/* mean wall clock time */
	double u_time;			/* user time, all instances */
	double s_time;			/* system time, all instances */
	double bogo_rate_r_time;	/* ops per real second */
	double bogo_rate;		/* ops per usr+sys second */
	double cpu_usage;		/* % CPU per instance */
	long int maxrss;		/* max RSS KB */
	uint32_t completed;		/* completed instances */
	bool run_ok;			/* any instance ran OK */
} stress_metrics_totals_t;

typedef struct {
	uint32_t skipped;
	uint32_t passed;
	uint32_t failed;
	uint32_t bad_metrics;
} stress_status_counts_t;

/* verdict of a run, built up as instances are reaped */
typedef struct {
	bool success;			/* no failures */
	bool resource_success;		/* no instance lacked resources */
	bool metrics_success;		/* metrics trustworthy */
	stress_status_counts_t counts;
} stress_shim_result_t;

extern stress_shared_t *stress_shared_alloc(const uint32_t instances,
	const size_t max_metrics_items);
extern void stress_shared_free(void);
extern void stress_metrics_totals_get(const stress_stats_t *stats,
	const uint32_t n, stress_metrics_totals_t *t);
extern void stress_metrics_header_format(char *line1, char *line2,
	const size_t len, const bool brief);
extern int stress_metrics_row_format(char *buf, const size_t len,
	const char *name, const stress_metrics_totals_t *t, const bool brief);
extern double stress_metric_mean(const double *values, const uint32_t n,
	const int mean_type);
extern const char *stress_metric_mean_name(const int mean_type);
extern int stress_metrics_misc_format(char *buf, const size_t len,
	const char *name, const double value, const char *description,
	const int mean_type, const uint32_t instances);
extern char *stress_description_yamlify(const char *description, char *buf,
	const size_t len);
extern void stress_metrics_dump(FILE *yaml, const char *name);
extern void stress_times_dump(FILE *yaml, const double duration);
extern void stress_exit_status_summary(const char *name,
	const stress_status_counts_t *counts);
extern FILE *stress_yaml_open(const char *filename);
extern void stress_yaml_close(FILE *yaml);
extern void stress_yaml_extras_free(void);

/* core-helper.c */
extern int stress_run_exit_code(const bool success, const bool resource_success,
	const bool metrics_success);
extern const char *stress_exit_status_to_string(const int status);
extern int stress_shim_wait_status(const char *name, const pid_t pid,
	const int status, stress_shim_result_t *res);
extern const char *stress_time_duration_to_str(const double duration,
	const bool int_secs, const bool report_secs);
extern int32_t stress_cpus_configured_get(void);
extern const char *stress_signal_str(const int signum);
extern void stress_shim_args_set(stress_args_t *args);
extern void stress_shim_proc_title_set(const char *name, const char *state);

/* core-opts.c */
typedef struct {
	int32_t instances;		/* --<name> N, -1 = not given */
	uint64_t ops;			/* --<name>-ops N */
	bool ops_set;
	bool timeout_set;
	bool help;			/* -h given, usage printed */
	const char *yaml_filename;	/* -Y FILE */
	uint32_t status;		/* --status S, 0 = no status lines */
	const char *log_filename;	/* -L/--log-file F */
} stress_shim_config_t;

extern int stress_shim_opts_parse(int argc, char **argv,
	const stressor_info_t *info, const char *name,
	stress_shim_config_t *cfg);
extern int32_t stress_shim_instances_parse(const char *opt, const char *str);
extern uint64_t stress_shim_ops_share(const uint64_t ops,
	const uint32_t instances, const uint32_t instance);
extern void stress_shim_usage(const stressor_info_t *info, const char *name);
extern void stress_shim_parse_context_set(const char *opt_name,
	const char *value);
extern void NORETURN stress_shim_parse_error(const char *fmt, ...)
	FORMAT(printf, 1, 2);

/* klog/klog-check.c: the kernel-log check (stress-ng's core-klog.c API) */
typedef enum {
	STRESS_KLOG_IGNORE = 0,
	STRESS_KLOG_INFO,
	STRESS_KLOG_ERROR,
} stress_klog_class_t;

extern stress_klog_class_t stress_klog_classify(char *record,
	const char **kind, char *ts, const size_t ts_len, const char **msg);
extern void stress_klog_start(void);
extern bool stress_klog_reaped(const pid_t pid);
extern void stress_klog_stop(bool *success);

/* core-memory.c */
extern uint64_t stress_memory_phys_size_get(void);
extern uint64_t stress_memory_available_get(void);

/* core-setting.c */
extern bool stress_setting_is_set(const char *name);

#endif
