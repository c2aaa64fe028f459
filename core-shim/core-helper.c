/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/core-helper.c: process and time helpers: time now,
 * process title states, cpus online, exit status map, size strings.
 */
#include "stress-ng.h"
#include "core-out-of-memory.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <time.h>
#include <sys/utsname.h>

volatile bool g_stress_continue_flag = true;

static stress_args_t *shim_current_args;	/* this process's instance */

/*
 *  stress_time_now()
 *	monotonic time in seconds as a double
 */
double stress_time_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return -1.0;
	return (double)ts.tv_sec + ((double)ts.tv_nsec / 1000000000.0);
}

/*
 *  stress_kernel_release()
 *	a kernel release as one number in base 100: 6.4.0 -> 60400
 */
int stress_kernel_release(const int major, const int minor, const int patchlevel)
{
	return (major * 10000) + (minor * 100) + patchlevel;
}

/*
 *  stress_kernel_release_get()
 *	the running kernel's release in base 100 (uname), -1 on failure
 */
int stress_kernel_release_get(void)
{
	struct utsname buf;
	int major = 0, minor = 0, patchlevel = 0;

	if (uname(&buf) < 0)
		return -1;
	if (sscanf(buf.release, "%d.%d.%d\n", &major, &minor, &patchlevel) < 1)
		return -1;
	return stress_kernel_release(major, minor, patchlevel);
}

/*
 *  stress_shim_proc_title_set()
 *	set the process title "stress-ng-<name> [<state>]" and comm
 */
void stress_shim_proc_title_set(const char *name, const char *state)
{
	char comm[64];

	if (!name)
		return;
	if (state)
		setproctitle("-%s-%s [%s]", STRESS_SHIM_PROG_NAME, name, state);
	else
		setproctitle("-%s-%s", STRESS_SHIM_PROG_NAME, name);
	(void)snprintf(comm, sizeof(comm), "%s-%s", STRESS_SHIM_PROG_NAME, name);
	(void)prctl(PR_SET_NAME, comm, 0, 0, 0);
}

/*
 *  stress_proc_state_set()
 *	set the process title from a STRESS_STATE_* value
 */
void stress_proc_state_set(const char *name, const int state)
{
	static const char * const states[] = {
		"start", "init", "run", "syncwait", "deinit",
		"stop", "exit", "wait", "zombie",
	};

	if ((state < 0) || (state >= (int)SIZEOF_ARRAY(states)))
		return;
	stress_shim_proc_title_set(name, states[state]);
}

/*
 *  stress_parent_died_alarm()
 *	get SIGALRM when the parent dies
 */
void stress_parent_died_alarm(void)
{
	(void)prctl(PR_SET_PDEATHSIG, SIGALRM, 0, 0, 0);
}

/*
 *  stress_sync_start_wait()
 *	no --sync-start in the shim: nothing to wait for
 */
void stress_sync_start_wait(stress_args_t *args)
{
	(void)args;
}

/*
 *  stress_cpus_online_get()
 *	number of online CPUs, at least 1
 */
int32_t stress_cpus_online_get(void)
{
	const long int n = sysconf(_SC_NPROCESSORS_ONLN);

	return (n < 1) ? 1 : (n > INT32_MAX ? INT32_MAX : (int32_t)n);
}

/*
 *  stress_cpus_configured_get()
 *	number of configured CPUs, at least 1
 */
int32_t stress_cpus_configured_get(void)
{
	const long int n = sysconf(_SC_NPROCESSORS_CONF);

	return (n < 1) ? 1 : (n > INT32_MAX ? INT32_MAX : (int32_t)n);
}

/*
 *  stress_exit_status()
 *	map an errno to a stressor exit status
 */
int stress_exit_status(const int err)
{
	switch (err) {
	case ENOMEM:
	case ENOSPC:
		return EXIT_NO_RESOURCE;
	case ENOSYS:
		return EXIT_NOT_IMPLEMENTED;
	default:
		return EXIT_FAILURE;
	}
}

/*
 *  stress_exit_status_to_string()
 *	text for a stressor exit status
 */
const char *stress_exit_status_to_string(const int status)
{
	switch (status) {
	case EXIT_SUCCESS:
		return "success";
	case EXIT_FAILURE:
		return "stress-ng core failure ";
	case EXIT_NOT_SUCCESS:
		return "stressor failed";
	case EXIT_NO_RESOURCE:
		return "no resources";
	case EXIT_NOT_IMPLEMENTED:
		return "not implemented";
	case EXIT_SIGNALED:
		return "killed by signal";
	case EXIT_BY_SYS_EXIT:
		return "stressor terminated using _exit()";
	case EXIT_METRICS_UNTRUSTWORTHY:
		return "metrics may be untrustworthy";
	default:
		return "unknown";
	}
}

/*
 *  stress_run_exit_code()
 *	run exit code: failure 2 > no resource 3 > untrustworthy 7 > 0
 */
int stress_run_exit_code(const bool success, const bool resource_success,
	const bool metrics_success)
{
	if (!success)
		return EXIT_NOT_SUCCESS;
	if (!resource_success)
		return EXIT_NO_RESOURCE;
	if (!metrics_success)
		return EXIT_METRICS_UNTRUSTWORTHY;
	return EXIT_SUCCESS;
}

/*
 *  stress_shim_wait_status()
 *	classify a reaped instance as stress-ng's stress_wait_status() does:
 *	SIGALRM and SIGKILL (the OOM killer's or anyone's) leave the exit
 *	status at 0, a pass; any other signal fails the run.  Returns the
 *	instance's exit status as the summary counts it.
 */
int stress_shim_wait_status(const char *name, const pid_t pid,
	const int status, stress_shim_result_t *res)
{
	int wexit = WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_SUCCESS;

	if (WIFSIGNALED(status)) {
		const int sig = WTERMSIG(status);

		if (sig != SIGALRM)
			pr_dbg("%s: [%" PRIdMAX "] terminated on %s\n",
				name, (intmax_t)pid, stress_signal_str(sig));
		if (stress_process_oomed(pid)) {
			pr_dbg("%s: [%" PRIdMAX "] killed by the OOM killer\n",
				name, (intmax_t)pid);
		} else if (sig == SIGKILL) {
			pr_dbg("%s: [%" PRIdMAX "] possibly killed by the OOM killer\n",
				name, (intmax_t)pid);
		} else if (sig != SIGALRM) {
			res->success = false;
			wexit = EXIT_SIGNALED;
		}
	}
	switch (wexit) {
	case EXIT_SUCCESS:
		res->counts.passed++;
		break;
	case EXIT_NO_RESOURCE:
		res->counts.skipped++;
		pr_warn_skip("%s: [%" PRIdMAX "] aborted early, no system resources\n",
			name, (intmax_t)pid);
		res->resource_success = false;
		break;
	case EXIT_NOT_IMPLEMENTED:
		res->counts.skipped++;
		break;
	case EXIT_SIGNALED:
		res->counts.failed++;
		res->success = false;
		break;
	case EXIT_BY_SYS_EXIT:
		res->counts.failed++;
		pr_dbg("%s: [%" PRIdMAX "] aborted via exit() which was not expected\n",
			name, (intmax_t)pid);
		break;
	case EXIT_METRICS_UNTRUSTWORTHY:
		res->counts.bad_metrics++;
		res->metrics_success = false;
		break;
	case EXIT_FAILURE:
		wexit = EXIT_NOT_SUCCESS;
		/* fall through */
	default:
		res->counts.failed++;
		pr_err("%s: [%" PRIdMAX "] terminated with an error, exit status=%d (%s)\n",
			name, (intmax_t)pid, wexit, stress_exit_status_to_string(wexit));
		res->success = false;
		break;
	}
	pr_dbg("%s: [%" PRIdMAX "] terminated (%s)\n", name, (intmax_t)pid,
		stress_exit_status_to_string(wexit));
	return wexit;
}

/*
 *  stress_uint64_to_str()
 *	human readable size, e.g. 1.5G; no_zero drops a zero fraction
 */
char *stress_uint64_to_str(char *str, const size_t len, const uint64_t val,
	const int precision, const bool no_zero)
{
	static const char suffixes[] = "EPTGMK";
	static const unsigned int shifts[] = { 60, 50, 40, 30, 20, 10 };
	uint64_t scale = 1;
	const char *suffix = "";
	char sfx[2] = { 0, 0 };
	int prec = precision;
	size_t i;

	if (!str || !len)
		return str;
	for (i = 0; i < SIZEOF_ARRAY(shifts); i++) {
		const uint64_t unit = 1ULL << shifts[i];
		const uint64_t scaled = val / unit;

		if ((scaled >= 1) && (scaled < 1024)) {
			scale = unit;
			sfx[0] = suffixes[i];
			sfx[1] = '\0';
			suffix = sfx;
			break;
		}
	}
	if (no_zero && ((val % scale) == 0))
		prec = 0;
	(void)snprintf(str, len, "%.*f%s", prec, (double)val / (double)scale, suffix);
	return str;
}

/*
 *  stress_const_optdup()
 *	strdup an option string, NULL on failure
 */
char *stress_const_optdup(const char *opt)
{
	char *str;

	if (!opt)
		return NULL;
	str = strdup(opt);
	if (!str)
		(void)fprintf(stderr, "out of memory duplicating option '%s'\n", opt);
	return str;
}

/*
 *  stress_unimplemented()
 *	stressor body for builds without the needed features
 */
int stress_unimplemented(stress_args_t *args)
{
	if (stress_instance_zero(args))
		pr_inf_skip("%s: this stressor is not implemented on this system\n",
			args->name);
	return EXIT_NOT_IMPLEMENTED;
}

/*
 *  stress_capabilities_check()
 *	true if we are root (SHIM_CAP_IS_ROOT) or hold the capability
 */
bool stress_capabilities_check(const int capability)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	unsigned int idx;

	if (capability == SHIM_CAP_IS_ROOT)
		return geteuid() == 0;
	if (capability < 0)
		return false;
	(void)memset(&hdr, 0, sizeof(hdr));
	(void)memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	hdr.pid = 0;
	if (syscall(SYS_capget, &hdr, data) < 0)
		return geteuid() == 0;
	idx = (unsigned int)capability / 32;
	if (idx >= _LINUX_CAPABILITY_U32S_3)
		return false;
	return !!(data[idx].effective & (1U << ((unsigned int)capability % 32)));
}

/*
 *  stress_time_unit()
 *	append one time unit ("1 min", "2.50 secs") to the string
 */
static void stress_time_unit(char **ptr, size_t *len, bool *emitted,
	double *dur, const double unit, const char *name,
	const bool always, const bool as_double)
{
	const unsigned long int val = (unsigned long int)(*dur / unit);
	int ret;

	if (always || (val > 0)) {
		if (*emitted) {
			ret = snprintf(*ptr, *len, " ");
			if ((ret > 0) && ((size_t)ret < *len)) {
				*ptr += ret;
				*len -= (size_t)ret;
			}
		}
		if (as_double)
			ret = snprintf(*ptr, *len, "%.2f %s%s", *dur, name,
				(val > 1) ? "s" : "");
		else
			ret = snprintf(*ptr, *len, "%lu %s%s", val, name,
				(val > 1) ? "s" : "");
		if ((ret > 0) && ((size_t)ret < *len)) {
			*ptr += ret;
			*len -= (size_t)ret;
		}
		*emitted = true;
	}
	*dur -= unit * (double)val;
}

/*
 *  stress_time_duration_to_str()
 *	duration as "1 hour 2 mins 3.00 secs" like stress-ng; int_secs
 *	prints the seconds part with 2 decimals, report_secs always does
 */
const char *stress_time_duration_to_str(const double duration,
	const bool int_secs, const bool report_secs)
{
	static char str[128];
	char *ptr = str;
	size_t len = sizeof(str);
	double dur = duration;
	bool emitted = false;

	*str = '\0';
	stress_time_unit(&ptr, &len, &emitted, &dur, 31536000.0, "year", false, false);
	stress_time_unit(&ptr, &len, &emitted, &dur, 86400.0, "day", false, false);
	stress_time_unit(&ptr, &len, &emitted, &dur, 3600.0, "hour", false, false);
	stress_time_unit(&ptr, &len, &emitted, &dur, 60.0, "min", false, false);
	stress_time_unit(&ptr, &len, &emitted, &dur, 1.0, "sec", report_secs, int_secs);
	if (!*str)
		(void)snprintf(str, sizeof(str), "0 secs");
	return str;
}

/*
 *  stress_signal_str()
 *	"signal 9 'SIGKILL'" style signal description
 */
const char *stress_signal_str(const int signum)
{
	static char buf[40];
	const char *abbrev = sigabbrev_np(signum);

	if (abbrev)
		(void)snprintf(buf, sizeof(buf), "signal %d 'SIG%s'", signum, abbrev);
	else
		(void)snprintf(buf, sizeof(buf), "signal %d", signum);
	return buf;
}

/*
 *  stress_shim_args_set()
 *	remember this process's instance args for stress_bogo_max_ops_zero
 */
void stress_shim_args_set(stress_args_t *args)
{
	shim_current_args = args;
}

/*
 *  stress_bogo_max_ops_zero()
 *	stop: zero max_ops of this process's instance, or of all
 *	instances when called in the parent
 */
void stress_bogo_max_ops_zero(void)
{
	uint32_t i;

	if (shim_current_args) {
		stress_bogo_stop(shim_current_args);
		return;
	}
	if (!g_shared || !g_shared->stats)
		return;
	for (i = 0; i < g_shared->instances; i++)
		stress_bogo_stop(&g_shared->stats[i].args);
}

/*
 *  stress_signal_handler()
 *	install handler for signum (no SA_RESTART, as stress-ng), the old
 *	action in orig_action; -1 after a fail line
 */
int stress_signal_handler(const char *name, const int signum, void (*handler)(int), struct sigaction *orig_action)
{
	struct sigaction sa;

	(void)memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	(void)sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NOCLDSTOP;
	if (sigaction(signum, &sa, orig_action) == 0)
		return 0;
	pr_fail("%s: sigaction %s failed, errno=%d (%s)\n", name, stress_signal_str(signum), errno, strerror(errno));
	return -1;
}

/*
 *  stress_signal_restore()
 *	put back the action stress_signal_handler() saved; -1 after a fail line
 */
int stress_signal_restore(const char *name, const int signum, struct sigaction *orig_action)
{
	if (sigaction(signum, orig_action, NULL) == 0)
		return 0;
	pr_fail("%s: sigaction %s restore, errno=%d (%s)\n", name, stress_signal_str(signum), errno, strerror(errno));
	return -1;
}

/*
 *  stress_proc_self_exe_get()
 *	the path of the running executable, NULL if unknown
 */
char *stress_proc_self_exe_get(char *path, const size_t path_len)
{
	const ssize_t n = readlink("/proc/self/exe", path, path_len - 1);

	if (n <= 0 || (size_t)n >= path_len - 1)
		return NULL;
	path[n] = '\0';
	return path;
}
