/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/lib/dummy-stressor.c: a fake "ksm-unmerge" stressor for testing the
 * core-shim runner.  It touches nothing on the system.  Behaviour comes
 * from environment variables:
 *   DUMMY_MODE      ok (default) | fail | skip | noresource | notimpl |
 *                   notready | early | kill | segv | hang
 *   DUMMY_SLEEP_US  microseconds per bogo op (default 1000)
 *   DUMMY_METRICS   1: set harmonic/geometric/total/maximum metrics and
 *                   one metric that is always 0.0
 *   DUMMY_TRACE     file to append "init N", "deinit" and "run I" lines to
 *   DUMMY_INSTANCE  with kill/segv/fail: only this instance misbehaves
 *   DUMMY_KMSG      a line instance 0 writes to /dev/kmsg as its last act
 *                   (the kernel-log check must still catch it)
 */
#include "stress-ng.h"

static const stress_help_t help[] = {
	{ NULL,	"ksm-unmerge N",	"start N dummy ksm-unmerge workers" },
	{ NULL,	"ksm-unmerge-bytes N",	"dummy size option (total)" },
	{ NULL,	"ksm-unmerge-hang-timeout T", "dummy time option" },
	{ NULL,	"ksm-unmerge-method M",	"dummy method: all, madvise, prctl" },
	{ NULL,	"ksm-unmerge-ops N",	"stop after N bogo dummy operations" },
	{ NULL,	"ksm-unmerge-pattern P", "dummy pattern: zero, random, same" },
	{ NULL,	"ksm-unmerge-thp",	"dummy bool option" },
	{ NULL,	NULL,			NULL }
};

/*
 *  stress_dummy_method()
 *	method names for --ksm-unmerge-method
 */
static const char *stress_dummy_method(const size_t i)
{
	static const char * const methods[] = { "all", "madvise", "prctl" };

	return (i < SIZEOF_ARRAY(methods)) ? methods[i] : NULL;
}

/*
 *  stress_dummy_pattern()
 *	callback for --ksm-unmerge-pattern, longjmps on unknown names
 */
static void stress_dummy_pattern(const char *opt_name, const char *opt_arg,
	stress_type_id_t *type_id, void *value)
{
	static const char * const patterns[] = { "zero", "random", "same" };
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(patterns); i++) {
		if (opt_arg && !strcmp(opt_arg, patterns[i])) {
			*type_id = TYPE_ID_SIZE_T;
			*(size_t *)value = i;
			return;
		}
	}
	(void)fprintf(stderr, "option --%s: invalid value '%s': pattern must be "
		"one of: zero random same\n", opt_name, opt_arg ? opt_arg : "");
	longjmp(g_error_env, 1);
}

/* option types the real stressor no longer has, on ids of the dummy's own */
#define OPT_ksm_unmerge_hang_timeout	((stress_op_t)(OPT_SHIM_MAX + 1))
#define OPT_ksm_unmerge_thp		((stress_op_t)(OPT_SHIM_MAX + 2))

static const stress_opt_t opts[] = {
	{ OPT_ksm_unmerge_bytes, "ksm-unmerge-bytes", TYPE_ID_SIZE_T_BYTES_VM,
	  4 * KB, MAX_MEM_LIMIT, NULL },
	{ OPT_ksm_unmerge_hang_timeout, "ksm-unmerge-hang-timeout",
	  TYPE_ID_UINT32_TIME, 1, 3600, NULL },
	{ OPT_ksm_unmerge_method, "ksm-unmerge-method", TYPE_ID_SIZE_T_METHOD,
	  0, 0, (void *)stress_dummy_method },
	{ OPT_ksm_unmerge_pattern, "ksm-unmerge-pattern", TYPE_ID_CALLBACK,
	  0, 0, (void *)stress_dummy_pattern },
	{ OPT_ksm_unmerge_thp, "ksm-unmerge-thp", TYPE_ID_BOOL, 0, 1, NULL },
	END_OPT,
};

/*
 *  stress_dummy_trace()
 *	append a line to $DUMMY_TRACE
 */
static void stress_dummy_trace(const char *fmt, const long int val)
{
	const char *path = getenv("DUMMY_TRACE");
	FILE *fp;

	if (!path)
		return;
	fp = fopen(path, "a");
	if (!fp)
		return;
	(void)fprintf(fp, fmt, val);
	(void)fclose(fp);
}

/*
 *  stress_dummy_mode()
 *	the DUMMY_MODE value, "ok" by default
 */
static const char *stress_dummy_mode(void)
{
	const char *mode = getenv("DUMMY_MODE");

	return mode ? mode : "ok";
}

/*
 *  stress_dummy_supported()
 *	DUMMY_MODE=skip makes the stressor unsupported
 */
static int stress_dummy_supported(const char *name)
{
	if (!strcmp(stress_dummy_mode(), "skip")) {
		pr_inf_skip("%s stressor will be skipped, dummy says so\n", name);
		return -1;
	}
	return 0;
}

/*
 *  stress_dummy_init()
 *	record the init call
 */
static void stress_dummy_init(const uint32_t instances)
{
	stress_dummy_trace("init %ld\n", (long int)instances);
}

/*
 *  stress_dummy_deinit()
 *	record the deinit call and add an extra YAML section
 */
static void stress_dummy_deinit(void)
{
	stress_dummy_trace("deinit %ld\n", 1L);
	stress_yaml_extra_add("dummy-extra",
		"      deinit-called: true\n      note: 'from the dummy stressor'\n");
}

/*
 *  stress_dummy_metrics()
 *	publish the test metrics for this instance
 */
static void stress_dummy_metrics(stress_args_t *args)
{
	const double i = (double)args->instance;

	stress_metrics_set(args, "nanosecs per dummy op", 1000.0 * (i + 1.0),
		STRESS_METRIC_HARMONIC_MEAN);
	stress_metrics_set(args, "dummy ops per sec", 100.0 * (i + 1.0),
		STRESS_METRIC_GEOMETRIC_MEAN);
	stress_metrics_set(args, "dummy ops counted", (double)stress_bogo_get(args),
		STRESS_METRIC_TOTAL);
	stress_metrics_set(args, "dummy % maximum", 10.0 * (i + 1.0),
		STRESS_METRIC_MAXIMUM);
	stress_metrics_set(args, "dummy always zero", 0.0,
		STRESS_METRIC_HARMONIC_MEAN);
}

/*
 *  stress_dummy_misbehaves()
 *	true if this instance is the one DUMMY_INSTANCE picks (default all)
 */
static bool stress_dummy_misbehaves(stress_args_t *args)
{
	const char *inst = getenv("DUMMY_INSTANCE");

	return !inst || ((uint32_t)atoi(inst) == args->instance);
}

/*
 *  stress_dummy_kmsg()
 *	write $DUMMY_KMSG to /dev/kmsg, if set
 */
static void stress_dummy_kmsg(void)
{
	const char *env = getenv("DUMMY_KMSG");
	char line[1024];
	int fd;

	if (!env)
		return;
	/* one write, with its newline: the kernel keeps a record without one
	 * open (unreadable) until the next record arrives */
	(void)snprintf(line, sizeof(line), "%s\n", env);
	fd = open("/dev/kmsg", O_WRONLY);
	if (fd < 0) {
		pr_inf("dummy: cannot open /dev/kmsg, errno=%d (%s)\n", errno, strerror(errno));
		return;
	}
	if (write(fd, line, strlen(line)) < 0)
		pr_inf("dummy: write to /dev/kmsg failed, errno=%d (%s)\n", errno, strerror(errno));
	(void)close(fd);
}

/*
 *  stress_dummy()
 *	the fake stressor loop
 */
static int stress_dummy(stress_args_t *args)
{
	const char *mode = stress_dummy_mode();
	const char *sleep_env = getenv("DUMMY_SLEEP_US");
	const uint64_t sleep_us = sleep_env ? (uint64_t)atoll(sleep_env) : 1000;
	const bool bad = stress_dummy_misbehaves(args);

	stress_dummy_trace("run %ld\n", (long int)args->instance);
	stress_proc_state_set(args->name, STRESS_STATE_SYNC_WAIT);
	stress_sync_start_wait(args);
	stress_proc_state_set(args->name, STRESS_STATE_RUN);

	if (bad && !strcmp(mode, "fail")) {
		pr_fail("%s: forced failure for testing\n", args->name);
		return EXIT_FAILURE;
	}
	if (!strcmp(mode, "noresource")) {
		pr_inf_skip("%s: no dummy resources%s, skipping stressor\n",
			args->name, stress_memory_free_get());
		return EXIT_NO_RESOURCE;
	}
	if (!strcmp(mode, "notimpl"))
		return EXIT_NOT_IMPLEMENTED;
	if (!strcmp(mode, "hang")) {
		(void)signal(SIGALRM, SIG_IGN);
		for (;;)
			(void)pause();
	}
	while (stress_continue(args)) {
		(void)shim_usleep(sleep_us);
		stress_bogo_inc(args);
		if (getenv("DUMMY_METRICS"))
			stress_dummy_metrics(args);
		if (bad && (stress_bogo_get(args) == 3)) {
			if (!strcmp(mode, "kill"))
				(void)raise(SIGKILL);
			if (!strcmp(mode, "segv"))
				(void)raise(SIGSEGV);
			if (!strcmp(mode, "early"))
				return EXIT_SUCCESS;
		}
	}
	if (!strcmp(mode, "notready"))
		args->bogo.count.counter_ready = false;
	if (stress_instance_zero(args))
		stress_dummy_kmsg();
	stress_proc_state_set(args->name, STRESS_STATE_DEINIT);
	return EXIT_SUCCESS;
}

const stressor_info_t stress_ksm_unmerge_info = {
	.stressor = stress_dummy,
	.supported = stress_dummy_supported,
	.init = stress_dummy_init,
	.deinit = stress_dummy_deinit,
	.opts = opts,
	.help = help,
	.classifier = CLASS_VM | CLASS_OS,
	.verify = VERIFY_NONE,
};
