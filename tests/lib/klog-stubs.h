/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/lib/klog-stubs.h: klog/klog-check.c compiled into a program
 * of its own with silent stubs of the few core functions it calls (pr_*,
 * YAML, clock, /proc reads, process helpers), for the programs that run
 * its parser, classifier and LKP key normaliser without the rest of the
 * shim and do not look at its output (tests/fuzz/fuzz-klog.c,
 * tests/lib/klog-normalise.c).  The program defines stress_time_now().
 */
#ifndef TESTS_KLOG_STUBS_H
#define TESTS_KLOG_STUBS_H

#include "stress-ng.h"
#include "core-killpid.h"
#include "klog/klog-check.c"		/* the kernel-log check, statics included */

uint64_t g_opt_flags;
stress_shared_t *g_shared;
volatile bool g_stress_continue_flag = true;

/* stub: pr_dbg() */
void pr_dbg(const char *fmt, ...)
{
	(void)fmt;
}

/* stub: pr_inf() */
void pr_inf(const char *fmt, ...)
{
	(void)fmt;
}

/* stub: pr_err() */
void pr_err(const char *fmt, ...)
{
	(void)fmt;
}

/* stub: pr_block_begin() */
void pr_block_begin(void)
{
}

/* stub: pr_block_end() */
void pr_block_end(void)
{
}

/* stub: stress_yaml_extra_add() */
void stress_yaml_extra_add(const char *name, const char *yaml_body)
{
	(void)name;
	(void)yaml_body;
}

/* stub: stress_fs_file_read(), nothing to read */
ssize_t stress_fs_file_read(const char *path, char *buf, const size_t buf_len)
{
	(void)path;
	(void)buf;
	(void)buf_len;
	errno = ENOENT;
	return -1;
}

/* stub: stress_parent_died_alarm() */
void stress_parent_died_alarm(void)
{
}

/* stub: stress_shim_proc_title_set() */
void stress_shim_proc_title_set(const char *name, const char *state)
{
	(void)name;
	(void)state;
}

/* stub: stress_kill_pid() */
int stress_kill_pid(const pid_t pid)
{
	return kill(pid, SIGKILL);
}

/* stub: shim_usleep() */
int shim_usleep(uint64_t usec)
{
	(void)usec;
	return 0;
}

/* stub: shim_waitpid() */
pid_t shim_waitpid(pid_t pid, int *wstatus, int options)
{
	return waitpid(pid, wstatus, options);
}

/* stub: shim_strscpy() */
ssize_t shim_strscpy(char *dst, const char *src, size_t len)
{
	size_t n = strlen(src);

	if (!len)
		return -E2BIG;
	if (n >= len) {
		(void)memcpy(dst, src, len - 1);
		dst[len - 1] = '\0';
		return -E2BIG;
	}
	(void)memcpy(dst, src, n + 1);
	return (ssize_t)n;
}

#endif
