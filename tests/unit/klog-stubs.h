/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/klog-stubs.h: silent stubs of the stress-ng core output functions
 * the kernel-log watcher calls (pr_*, pr_block_*, stress_yaml_extra_add),
 * for the programs that include stress-ksm-unmerge-klog.h and do not look
 * at its output (tests/unit/fuzz-klog.c, tests/unit/klog-normalise.c).
 */
#ifndef TESTS_KLOG_STUBS_H
#define TESTS_KLOG_STUBS_H

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

/* stub: pr_fail() */
void pr_fail(const char *fmt, ...)
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

#endif
