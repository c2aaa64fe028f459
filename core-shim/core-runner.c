/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/core-runner.c: main() of the standalone stressor: parse,
 * supported(), init(), fork N instances (args and counters in shared
 * memory), timeout and SIGINT/SIGTERM handling, wait, report, deinit()
 * and the stress-ng exit code.
 */
#include "stress-ng.h"
#include "core-killpid.h"
#include "core-out-of-memory.h"

#include <math.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#define STRESSOR_NAME	"ksm-unmerge"

static const stressor_info_t *const info = &stress_ksm_unmerge_info;
static pid_t main_pid;
static volatile sig_atomic_t stop_requested;	/* SIGINT/SIGTERM seen */
static stress_mapped_t mapped;			/* ready made pages */

/*
 *  stress_instances_signal()
 *	send signum to every started, unreaped instance (signal safe)
 */
static void stress_instances_signal(const int signum)
{
	uint32_t i;

	if (!g_shared)
		return;
	for (i = 0; i < g_shared->instances; i++) {
		stress_stats_t *s = &g_shared->stats[i];

		if (s->started && !s->reaped && (s->pid > 1)) {
			if (signum == SIGKILL)
				(void)stress_kill_pid(s->pid);
			else
				(void)kill(s->pid, signum);
			s->signalled = true;
		}
	}
}

/*
 *  stress_parent_stop_handler()
 *	SIGINT/SIGTERM in the parent: stop all instances via SIGALRM
 */
static void stress_parent_stop_handler(int signum)
{
	const int saved_errno = errno;

	(void)signum;
	stop_requested = 1;
	g_stress_continue_flag = false;
	if (g_shared) {
		g_shared->caught_sigint = true;
		stress_bogo_max_ops_zero();
		stress_instances_signal(SIGALRM);
	}
	errno = saved_errno;
}

/*
 *  stress_parent_alarm_handler()
 *	SIGALRM in the parent only interrupts wait4()
 */
static void stress_parent_alarm_handler(int signum)
{
	(void)signum;
}

/*
 *  stress_child_stop_handler()
 *	SIGALRM/SIGINT/SIGTERM in an instance: stop it, re-arm alarm(1)
 *	until the stressor returns
 */
static void stress_child_stop_handler(int signum)
{
	const int saved_errno = errno;

	(void)signum;
	stress_continue_set_flag(false);
	(void)alarm(1);
	errno = saved_errno;
}

/*
 *  stress_handler_set()
 *	install handler for signum without SA_RESTART
 */
static int stress_handler_set(const int signum, void (*handler)(int))
{
	struct sigaction sa;

	(void)memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	(void)sigemptyset(&sa.sa_mask);
	if (sigaction(signum, &sa, NULL) < 0) {
		pr_err("sigaction on signal %d failed, errno=%d (%s)\n",
			signum, errno, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 *  stress_signals_block()
 *	block all signals
 */
static void stress_signals_block(void)
{
	sigset_t set;

	(void)sigfillset(&set);
	(void)sigprocmask(SIG_SETMASK, &set, NULL);
}

/*
 *  stress_rusage_fill()
 *	copy a rusage into an instance's stats
 */
static void stress_rusage_fill(stress_stats_t *stats, const struct rusage *ru)
{
	stats->utime = (double)ru->ru_utime.tv_sec +
		(double)ru->ru_utime.tv_usec / 1000000.0;
	stats->stime = (double)ru->ru_stime.tv_sec +
		(double)ru->ru_stime.tv_usec / 1000000.0;
	stats->maxrss = ru->ru_maxrss;
}

/*
 *  stress_child_rusage_get()
 *	instance's own plus reaped children's usage, stored in shared memory
 */
static void stress_child_rusage_get(stress_stats_t *stats)
{
	struct rusage self, children;

	if ((getrusage(RUSAGE_SELF, &self) < 0) ||
	    (getrusage(RUSAGE_CHILDREN, &children) < 0))
		return;
	stress_rusage_fill(stats, &self);
	stats->utime += (double)children.ru_utime.tv_sec +
		(double)children.ru_utime.tv_usec / 1000000.0;
	stats->stime += (double)children.ru_stime.tv_sec +
		(double)children.ru_stime.tv_usec / 1000000.0;
	if (children.ru_maxrss > stats->maxrss)
		stats->maxrss = children.ru_maxrss;
}

/*
 *  stress_child_setup()
 *	instance prologue: signals, parent death, limits, args
 */
static void stress_child_setup(stress_stats_t *stats, const uint32_t instance,
	const uint32_t instances)
{
	stress_args_t *args = &stats->args;
	struct rlimit rlim;

	pr_fail_count_reset();
	stress_shim_args_set(args);
	g_stress_continue_flag = true;
	stress_proc_state_set(STRESSOR_NAME, STRESS_STATE_START);
	(void)stress_handler_set(SIGALRM, stress_child_stop_handler);
	(void)stress_handler_set(SIGINT, stress_child_stop_handler);
	(void)stress_handler_set(SIGTERM, stress_child_stop_handler);
	(void)signal(SIGCHLD, SIG_DFL);
	stress_parent_died_alarm();
	if (getppid() != main_pid)		/* parent already gone */
		stress_continue_set_flag(false);
	stress_proc_state_set(STRESSOR_NAME, STRESS_STATE_INIT);
	stress_mwc_reseed();
	if (info->limit_set && (getrlimit(RLIMIT_NPROC, &rlim) == 0))
		info->limit_set((uint64_t)rlim.rlim_cur / instances);
	(void)umask(0077);

	args->bogo.max_ops = stats->ops_set ? stats->ops_share : NEVER_END_OPS;
	args->bogo.possibly_oom_killed = false;
	args->name = STRESSOR_NAME;
	args->instance = instance;
	args->instances = instances;
	args->pid = getpid();
	args->page_size = stress_memory_page_size_get();
	args->time_end = g_opt_timeout ?
		stress_time_now() + (double)g_opt_timeout : DBL_MAX;
	args->mapped = &mapped;
	args->stats = stats;
	args->info = info;
	stress_set_oom_adjustment(args, false);
	pr_dbg("%s: [%" PRIdMAX "] started (instance %" PRIu32 " on CPU %d)\n",
		STRESSOR_NAME, (intmax_t)args->pid, instance, sched_getcpu());
}

/*
 *  stress_child_run()
 *	run one instance; returns its exit status
 */
static int stress_child_run(stress_stats_t *stats, const uint32_t instance,
	const uint32_t instances)
{
	stress_args_t *args = &stats->args;
	int rc = EXIT_SUCCESS;
	double finish, run_duration;

	stress_child_setup(stats, instance, instances);
	stats->start = stress_time_now();
	if (g_opt_timeout)
		(void)alarm((unsigned int)g_opt_timeout);
	if (stress_continue_flag())
		rc = info->stressor(args);
	stress_signals_block();
	(void)alarm(0);
	pr_fail_check(&rc);
	finish = stress_time_now();
	stats->completed = true;
	args->bogo.count.run_ok = (rc == EXIT_SUCCESS);
	stress_proc_state_set(STRESSOR_NAME, STRESS_STATE_STOP);
	if (!args->bogo.count.counter_ready && !args->bogo.count.force_killed) {
		pr_warn("%s: WARNING: bogo-ops counter in non-ready state, "
			"metrics are untrustworthy (process may have been "
			"terminated prematurely)\n", STRESSOR_NAME);
		rc = EXIT_METRICS_UNTRUSTWORTHY;
	}
	stats->duration = finish - stats->start;
	stress_child_rusage_get(stats);
	pr_dbg("%s: [%" PRIdMAX "] exited (instance %" PRIu32 " on CPU %d)\n",
		STRESSOR_NAME, (intmax_t)args->pid, instance, sched_getcpu());

	run_duration = (finish - stats->fork_time) + 0.5;
	if (args->bogo.count.run_ok && !g_shared->caught_sigint &&
	    (run_duration < (double)g_opt_timeout) &&
	    !(stats->ops_set && (args->bogo.count.counter >= stats->ops_share)))
		pr_warn("%s: WARNING: finished prematurely after just %s\n",
			STRESSOR_NAME, stress_time_duration_to_str(run_duration, true, true));
	stress_proc_state_set(STRESSOR_NAME, STRESS_STATE_EXIT);
	return rc;
}

/*
 *  stress_wait_status()
 *	classify a reaped instance like stress-ng's stress_wait_status()
 *	(a SIGKILLed instance passes: the stressor must fail itself)
 */
static void stress_wait_status(stress_stats_t *stats, stress_shim_result_t *res)
{
	stats->rc = stress_shim_wait_status(STRESSOR_NAME, stats->pid,
		stats->wait_status, res);
}

/*
 *  stress_stats_by_pid()
 *	the unreaped instance with this pid, NULL if none
 */
static stress_stats_t *stress_stats_by_pid(const pid_t pid)
{
	uint32_t i;

	for (i = 0; i < g_shared->instances; i++) {
		stress_stats_t *s = &g_shared->stats[i];

		if (s->started && !s->reaped && (s->pid == pid))
			return s;
	}
	return NULL;
}

/*
 *  stress_instances_fork()
 *	fork the instances; returns how many were started
 */
static uint32_t stress_instances_fork(const stress_shim_config_t *cfg,
	const uint32_t instances)
{
	uint32_t i, started = 0;
	int retries = 0;

	for (i = 0; (i < instances) && !stop_requested; i++) {
		stress_stats_t *stats = &g_shared->stats[i];
		pid_t pid;

		stats->args.bogo.count.counter = 0;
		stats->args.bogo.count.counter_ready = true;
		stats->ops_set = cfg->ops_set;
		stats->ops_share = stress_shim_ops_share(cfg->ops, instances, i);
		stats->args.bogo.max_ops = cfg->ops_set ? stats->ops_share : NEVER_END_OPS;
again:
		stats->fork_time = stress_time_now();
		pid = fork();
		if (pid < 0) {
			if ((errno == EAGAIN) && (retries++ < 50)) {
				(void)shim_usleep(100000);
				goto again;
			}
			pr_err("cannot fork, errno=%d (%s)\n", errno, strerror(errno));
			break;
		}
		if (pid == 0)
			_exit(stress_child_run(stats, i, instances));
		stats->pid = pid;
		stats->started = true;
		started++;
	}
	return started;
}

/*
 *  stress_alarm_next()
 *	arm the parent alarm for the nearest deadline (0 = none)
 */
static void stress_alarm_next(const double now, const double d1, const double d2)
{
	double d = 0.0;

	if (d1 > 0.0)
		d = d1;
	if ((d2 > 0.0) && ((d == 0.0) || (d2 < d)))
		d = d2;
	if (d == 0.0) {
		(void)alarm(0);
		return;
	}
	d = ceil(d - now);
	(void)alarm((d < 1.0) ? 1U : (unsigned int)d);
}

/*
 *  stress_status_log()
 *	--status: stress-ng's "status: N run, N exit, N reap, N fail,
 *	N SIGALRM, <run time>" line; exit and reap are one event here
 */
static void stress_status_log(const uint32_t started, const uint32_t remaining,
	const uint32_t alarmed, const stress_shim_result_t *res, const double time_start)
{
	pr_inf("status: %" PRIu32 " run, %" PRIu32 " exit, %" PRIu32 " reap, %" PRIu32
		" fail, %" PRIu32 " SIGALRM, %s\n", started, started - remaining,
		started - remaining, res->counts.failed, alarmed,
		stress_time_duration_to_str(round(stress_time_now() - time_start), false, true));
}

/*
 *  stress_instances_wait()
 *	reap all instances; after a stop request or a hang past the
 *	timeout escalate SIGALRM -> SIGKILL after STRESS_SHIM_KILL_GRACE;
 *	a status line every status seconds (0 = none)
 */
static void stress_instances_wait(const uint32_t started, const double time_start,
	const uint32_t status_secs, stress_shim_result_t *res)
{
	double kill_deadline = 0.0;
	const double hang_deadline = g_opt_timeout ?
		time_start + (double)g_opt_timeout + STRESS_SHIM_HANG_GRACE : 0.0;
	double status_next = status_secs ? time_start + (double)status_secs : 0.0;
	uint32_t remaining = started, alarmed = 0;
	bool stop_seen = false;

	while (remaining > 0) {
		struct rusage ru;
		int status = 0;
		pid_t pid;
		double now = stress_time_now();

		if ((status_next > 0.0) && (now >= status_next)) {
			stress_status_log(started, remaining, alarmed, res, time_start);
			while (status_next <= now)
				status_next += (double)status_secs;
		}
		stress_alarm_next(now, kill_deadline > 0.0 ? kill_deadline : hang_deadline,
			status_next);
		pid = wait4(-1, &status, 0, &ru);
		now = stress_time_now();
		if (pid > 0) {
			stress_stats_t *stats = stress_stats_by_pid(pid);

			if (!stats) {
				(void)stress_klog_reaped(pid);
				continue;
			}
			stats->reaped = true;
			stats->wait_status = status;
			stress_rusage_fill(stats, &ru);
			if (!stats->completed && (stats->start > 0.0))
				stats->duration = now - stats->start;
			stress_wait_status(stats, res);
			remaining--;
			continue;
		}
		if (errno == ECHILD)
			break;
		if (errno != EINTR) {
			pr_err("wait4 failed, errno=%d (%s)\n", errno, strerror(errno));
			break;
		}
		if (stop_requested && !stop_seen) {
			stop_seen = true;
			pr_inf("stopping %" PRIu32 " stressors\n", remaining);
			kill_deadline = now + STRESS_SHIM_KILL_GRACE;
		} else if ((kill_deadline > 0.0) && (now >= kill_deadline)) {
			pr_inf("%" PRIu32 " stressor%s still running, sending SIGKILL\n",
				remaining, remaining == 1 ? "" : "s");
			stress_instances_signal(SIGKILL);
			kill_deadline = now + 3600.0;
		} else if ((hang_deadline > 0.0) && (kill_deadline == 0.0) &&
			   (now >= hang_deadline)) {
			pr_warn("%s: %" PRIu32 " instance%s still running %.0f secs "
				"after the timeout, stopping them\n", STRESSOR_NAME,
				remaining, remaining == 1 ? "" : "s", STRESS_SHIM_HANG_GRACE);
			stress_bogo_max_ops_zero();
			stress_instances_signal(SIGALRM);
			alarmed += remaining;
			kill_deadline = now + STRESS_SHIM_KILL_GRACE;
		}
	}
	(void)alarm(0);
}

/*
 *  stress_unsupported()
 *	true (message printed) if the stressor cannot run here
 */
static bool stress_unsupported(void)
{
	struct utsname u;

	if (info->stressor == stress_unimplemented) {
		if (uname(&u) < 0)
			(void)memset(&u, 0, sizeof(u));
		pr_inf_skip("%s stressor will be skipped, it is not implemented "
			"on this system: %s %s %s gcc %s%s%s%s\n", STRESSOR_NAME,
			u.machine, u.sysname, u.release, __VERSION__,
			info->unimplemented_reason ? " (" : "",
			info->unimplemented_reason ? info->unimplemented_reason : "",
			info->unimplemented_reason ? ")" : "");
		return true;
	}
	return info->supported && (info->supported(STRESSOR_NAME) < 0);
}

/*
 *  stress_timeout_log()
 *	"setting to a 5 secs run per stressor" or "defaulting to ..."
 */
static void stress_timeout_log(const stress_shim_config_t *cfg)
{
	if (!cfg->timeout_set)
		g_opt_timeout = STRESS_SHIM_TIMEOUT_DEFAULT;
	pr_inf("%s to a %s run per stressor\n",
		cfg->timeout_set ? "setting" : "defaulting",
		g_opt_timeout ? stress_time_duration_to_str((double)g_opt_timeout,
			false, false) : "infinite");
}

/*
 *  stress_mapped_pages_alloc()
 *	the page_none/page_ro/page_wo pages of args->mapped
 */
static void stress_mapped_pages_alloc(void)
{
	const size_t sz = stress_memory_page_size_get();
	const int prot[] = { PROT_NONE, PROT_READ, PROT_WRITE };
	void **pages[] = { &mapped.page_none, &mapped.page_ro, &mapped.page_wo };
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(pages); i++) {
		void *p = mmap(NULL, sz, prot[i], MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		*pages[i] = (p == MAP_FAILED) ? NULL : p;
	}
}

/*
 *  stress_report()
 *	metrics, times, summary lines and the final "run completed" line
 */
static FILE *stress_report(const stress_shim_config_t *cfg,
	stress_shim_result_t *res, const double duration)
{
	FILE *yaml = stress_yaml_open(cfg->yaml_filename);

	if (g_shared && ((g_opt_flags & OPT_FLAGS_METRICS) || yaml))
		stress_metrics_dump(yaml, STRESSOR_NAME);
	stress_times_dump(yaml, duration);
	stress_exit_status_summary(STRESSOR_NAME, &res->counts);
	pr_inf("%s run completed in %s\n",
		res->success ? "successful" : "unsuccessful",
		stress_time_duration_to_str(duration, true, false));
	return yaml;
}

/*
 *  stress_run()
 *	everything after option parsing; returns the exit code
 */
static int stress_run(const stress_shim_config_t *cfg)
{
	stress_shim_result_t res = { true, true, true, { 0, 0, 0, 0 } };
	const uint32_t instances = (uint32_t)cfg->instances;
	double time_start, duration = 0.0;
	uint32_t started;
	FILE *yaml;

	if (stress_unsupported()) {
		stress_timeout_log(cfg);
		pr_inf("dispatching hogs:\n");
		res.counts.skipped = instances;
		yaml = stress_report(cfg, &res, 0.0);
		stress_yaml_close(yaml);
		return EXIT_SUCCESS;
	}
	stress_timeout_log(cfg);
	if (!stress_shared_alloc(instances, info->max_metrics_items))
		return EXIT_FAILURE;
	stress_mapped_pages_alloc();
	pr_inf("dispatching hogs: %" PRIu32 " %s\n", instances, STRESSOR_NAME);
	if ((stress_handler_set(SIGINT, stress_parent_stop_handler) < 0) ||
	    (stress_handler_set(SIGTERM, stress_parent_stop_handler) < 0) ||
	    (stress_handler_set(SIGALRM, stress_parent_alarm_handler) < 0)) {
		stress_shared_free();
		return EXIT_FAILURE;
	}
	if (info->init)
		info->init(instances);
	stress_klog_start();
	stress_set_oom_adjustment(NULL, false);

	time_start = stress_time_now();
	started = stress_instances_fork(cfg, instances);
	stress_instances_wait(started, time_start, cfg->status, &res);
	duration = stress_time_now() - time_start;
	if (started < instances)
		res.success = res.success && stop_requested;

	yaml = stress_report(cfg, &res, duration);
	stress_klog_stop(&res.success);
	if (info->deinit)
		info->deinit();
	stress_yaml_close(yaml);
	stress_shared_free();
	return stress_run_exit_code(res.success, res.resource_success,
		res.metrics_success);
}

/*
 *  main()
 *	standalone stress-ng style runner for the ksm-unmerge stressor
 */
int main(int argc, char **argv, char **envp)
{
	stress_shim_config_t cfg;
	int ret;

	main_pid = getpid();
	setproctitle_init(argc, argv, envp);
	if (setjmp(g_error_env) == 1) {
		stress_settings_free();
		return EXIT_FAILURE;
	}
	if (info->default_set)
		info->default_set();
	if (stress_shim_opts_parse(argc, argv, info, STRESSOR_NAME, &cfg) == 1) {
		stress_settings_free();
		return EXIT_SUCCESS;
	}
	/* the parse only checks input; the log file is created for a run */
	if (cfg.log_filename && (pr_log_file_open(cfg.log_filename) < 0)) {
		(void)fprintf(stderr, "%s: error: option --log-file: invalid value '%.128s': "
			"cannot open, errno=%d (%s)\n", program_invocation_short_name,
			cfg.log_filename, errno, strerror(errno));
		stress_settings_free();
		return EXIT_FAILURE;
	}
	ret = stress_run(&cfg);
	stress_settings_free();
	return ret;
}
