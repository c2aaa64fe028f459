/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/core-out-of-memory.c: OOM killer helpers.
 */
#include "stress-ng.h"
#include "core-out-of-memory.h"

/*
 *  stress_process_oomed()
 *	true if the kernel log says pid was killed by the OOM killer
 */
bool stress_process_oomed(const pid_t pid)
{
	char buf[4096];
	bool oomed = false;
	const int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd < 0)
		return false;
	for (;;) {
		const ssize_t n = read(fd, buf, sizeof(buf) - 1);
		const char *ptr;
		intmax_t oom_pid;

		if (n < 0) {
			if (errno == EPIPE)	/* record overwritten, go on */
				continue;
			break;
		}
		buf[n] = '\0';
		ptr = strstr(buf, "process");
		if (!ptr || (!strstr(buf, "Out of memory") && !strstr(buf, "oom_reaper")))
			continue;
		if ((sscanf(ptr + 7, "%10" SCNdMAX, &oom_pid) == 1) &&
		    (oom_pid == (intmax_t)pid)) {
			oomed = true;
			break;
		}
	}
	(void)close(fd);
	return oomed;
}

/*
 *  stress_set_oom_adjustment()
 *	killable: oom_score_adj 1000; else -1000 as root (0 otherwise).
 *	Failures are only reported at debug level, like stress-ng.
 */
void stress_set_oom_adjustment(stress_args_t *args, const bool killable)
{
	const char *str = killable ? "1000" : ((geteuid() == 0) ? "-1000" : "0");
	const ssize_t ret = stress_fs_file_write("/proc/self/oom_score_adj",
		str, strlen(str));

	if ((ret < 0) && (ret != -EACCES) && (!args || stress_instance_zero(args)))
		pr_dbg("%s: can't set oom_score_adj, errno=%d (%s)\n",
			args ? args->name : "main", (int)-ret, strerror((int)-ret));
}
