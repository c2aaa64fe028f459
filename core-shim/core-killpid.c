/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/core-killpid.c: process killing helpers; a SIGKILL goes
 * through pidfd_open -> kill -> process_mrelease like stress-ng.
 */
#include "stress-ng.h"
#include "core-killpid.h"

#include <sched.h>

/*
 *  stress_kill_pid()
 *	SIGKILL pid and release its memory early with process_mrelease
 */
int stress_kill_pid(const pid_t pid)
{
	const int pidfd = shim_pidfd_open(pid, 0);
	const int ret = shim_kill(pid, SIGKILL);

	if (pidfd >= 0) {
		const int saved_errno = errno;

		if (ret == 0)
			(void)shim_process_mrelease(pidfd, 0);
		(void)close(pidfd);
		errno = saved_errno;
	}
	return ret;
}

/*
 *  stress_kill_pid_wait()
 *	SIGKILL pid (stress_kill_pid) and reap it; status, when not NULL,
 *	gets its wait status; returns waitpid's return
 */
pid_t stress_kill_pid_wait(const pid_t pid, int *status)
{
	int tmp_status = 0;

	(void)stress_kill_pid(pid);
	return shim_waitpid(pid, status ? status : &tmp_status, 0);
}

/*
 *  stress_kill_sig()
 *	send signum, via stress_kill_pid for SIGKILL
 */
static int stress_kill_sig(const pid_t pid, const int signum)
{
	return (signum == SIGKILL) ? stress_kill_pid(pid) : shim_kill(pid, signum);
}

/*
 *  stress_wait_until_reaped()
 *	wait for pid; once stopping, resend signum and escalate to
 *	SIGKILL; returns the child's exit status or EXIT_SUCCESS
 */
static int stress_wait_until_reaped(stress_args_t *args, const pid_t pid,
	const int signum, const bool set_stress_force_killed_bogo)
{
	int count = 0;

	for (;;) {
		int wstatus = 0;
		pid_t ret;

		errno = 0;
		ret = waitpid(pid, &wstatus, 0);
		if (ret == pid) {
			if (WIFEXITED(wstatus))
				return WEXITSTATUS(wstatus);
			return EXIT_SUCCESS;
		}
		if ((ret < 0) && (errno != EINTR))
			break;
		if ((shim_kill(pid, 0) < 0) && (errno == ESRCH))
			break;
		count++;
		if (!stress_continue_flag()) {
			(void)stress_kill_sig(pid, signum);
			if (count > 120) {
				if (set_stress_force_killed_bogo)
					stress_force_killed_bogo(args);
				(void)stress_kill_pid(pid);
			}
			if (count > 600) {
				pr_dbg("%s: cannot kill PID %" PRIdMAX
					" after 10 minutes, giving up\n",
					args->name, (intmax_t)pid);
				break;
			}
		}
		(void)sched_yield();
		if (count > 10)
			(void)sleep(1);
	}
	return EXIT_SUCCESS;
}

/*
 *  stress_kill_and_wait()
 *	send signum to pid and reap it; refuses pid <= 1 and ourself
 */
int stress_kill_and_wait(stress_args_t *args, const pid_t pid,
	const int signum, const bool set_stress_force_killed_bogo)
{
	if ((pid <= 1) || (pid == getpid())) {
		pr_inf("%s: warning, attempt to kill PID %" PRIdMAX " ignored\n",
			args->name, (intmax_t)pid);
		return EXIT_SUCCESS;
	}
	if (signum == SIGKILL && set_stress_force_killed_bogo)
		stress_force_killed_bogo(args);
	(void)stress_kill_sig(pid, signum);
	return stress_wait_until_reaped(args, pid, signum,
		set_stress_force_killed_bogo);
}
