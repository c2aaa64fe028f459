/*
 * core-shim/core-killpid.h: process kill helpers (stress-ng core-killpid.h)
 */
#ifndef CORE_KILLPID_H
#define CORE_KILLPID_H

#include "stress-ng.h"

extern int stress_kill_pid(const pid_t pid);
extern pid_t stress_kill_pid_wait(const pid_t pid, int *status);
extern int stress_kill_and_wait(stress_args_t *args, const pid_t pid,
	const int signum, const bool set_stress_force_killed_bogo);

#endif
