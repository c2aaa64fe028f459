/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/core-klog.c: stress-ng 0.22 style --klog-check.  A forked
 * reader follows /dev/kmsg from its end; records with syslog prefix
 * 0..3 and soft/hard lockups are errors that fail the run, prefix 4,
 * OOM, hung task, audit and throttling are info only.  Silently off
 * when /dev/kmsg cannot be opened.
 */
#include "stress-ng.h"
#include "core-killpid.h"

#include <sched.h>

static const char klog_name[] = "klog-check";
static pid_t klog_pid = -1;
static volatile sig_atomic_t klog_drain;

/* substrings that make a record neither an error nor worth an info line */
static const char * const klog_exceptions[] = {
	"audit: backlog",
	"x86/split lock detection",
	"detected capacity change from",
	"umip_printk",
	"expecting 0xbadc0de (pid=",
	"callbacks suppressed",
	"kmod_concurrent_max",
	"hrtimer: interrupt took",
	"no longer affine to",
	"AppArmor DFA ",
	"apparmor: aa_kernel_interface_replace_policy",
	"apparmor=\"STATUS\"",
	"Invalid logical block size (256)",
	"Invalid logical block size (4000)",
	"Invalid logical block size (65535)",
	"Buffer I/O error on dev loop",
	"over core_pipe_limit, skipping core dump",
};

/*
 *  stress_klog_excepted()
 *	true if the record matches one of the exception substrings
 */
static bool stress_klog_excepted(const char *str)
{
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(klog_exceptions); i++) {
		if (strstr(str, klog_exceptions[i]))
			return true;
	}
	return false;
}

/*
 *  stress_klog_unescape_nl()
 *	turn the "\x0a" escapes of multi-line records into spaces
 */
static void stress_klog_unescape_nl(char *buf)
{
	char *ptr;

	while ((ptr = strstr(buf, "\\x0a")) != NULL) {
		*ptr = ' ';
		(void)memmove(ptr + 1, ptr + 4, strlen(ptr + 4) + 1);
	}
}

/*
 *  stress_klog_classify()
 *	classify one /dev/kmsg record "prefix,seq,usecs,...;message"
 *	(modified in place); sets the kind text, "[sec.usec]" time
 *	stamp and message pointer
 */
stress_klog_class_t stress_klog_classify(char *record, const char **kind,
	char *ts, const size_t ts_len, const char **msg)
{
	int prefix, seq;
	uint64_t usecs;
	char *ptr;
	bool lockup = false;

	ptr = strchr(record, '\n');
	if (ptr)
		*ptr = '\0';
	ptr = strchr(record, ';');
	if (!ptr || (sscanf(record, "%d,%d,%" SCNu64, &prefix, &seq, &usecs) != 3))
		return STRESS_KLOG_IGNORE;
	*msg = ptr + 1;
	(void)snprintf(ts, ts_len, "[%" PRIu64 ".%6.6" PRIu64 "]",
		usecs / 1000000, usecs % 1000000);
	stress_klog_unescape_nl(record);

	if (strstr(record, "audit:")) {
		*kind = "audit";
	} else if ((strstr(record, "CPU") || strstr(record, "cpu")) &&
		   (strstr(record, "throttle") || strstr(record, "throttling"))) {
		*kind = "CPU throttling";
	} else if (strstr(record, "blocked for more than")) {
		*kind = "hung task";
	} else if (strstr(record, "watchdog") && strstr(record, "hard LOCKUP")) {
		*kind = "hard lockup";
		lockup = true;
	} else if (strstr(record, "soft lockup") && strstr(record, "stuck")) {
		*kind = "soft lockup";
		lockup = true;
	} else if (strstr(record, "Out of memory") ||
		   ((prefix > 3) && strstr(record, "OOM"))) {
		*kind = "out of memory";
	} else {
		static const char * const levels[] = {
			"emergency", "alert", "critical", "error", "warning",
		};

		if ((prefix < 0) || (prefix > 4))
			return STRESS_KLOG_IGNORE;
		*kind = levels[prefix];
		if (prefix <= 3)
			return stress_klog_excepted(record) ?
				STRESS_KLOG_IGNORE : STRESS_KLOG_ERROR;
	}
	if (lockup)
		return STRESS_KLOG_ERROR;
	return stress_klog_excepted(record) ? STRESS_KLOG_IGNORE : STRESS_KLOG_INFO;
}

/*
 *  stress_klog_cmdline_log()
 *	log the kernel command line once, before the first report
 */
static void stress_klog_cmdline_log(void)
{
	static bool done;
	char buf[4096];
	char *nl;

	if (done)
		return;
	done = true;
	if (stress_fs_file_read("/proc/cmdline", buf, sizeof(buf)) < 0)
		return;
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	pr_inf("%s: kernel cmdline: '%s'\n", klog_name, buf);
}

/*
 *  stress_klog_drain_handler()
 *	SIGUSR1: read what is left, then exit
 */
static void stress_klog_drain_handler(int signum)
{
	(void)signum;
	klog_drain = 1;
}

/*
 *  stress_klog_record_handle()
 *	report one record and count errors in shared memory
 */
static void stress_klog_record_handle(char *record)
{
	const char *kind = "";
	const char *msg = "";
	char ts[48];

	switch (stress_klog_classify(record, &kind, ts, sizeof(ts), &msg)) {
	case STRESS_KLOG_ERROR:
		stress_klog_cmdline_log();
		pr_err("%s: %s: %s '%s'\n", klog_name, kind, ts, msg);
		__atomic_add_fetch(&g_shared->klog_errors, 1, __ATOMIC_SEQ_CST);
		break;
	case STRESS_KLOG_INFO:
		stress_klog_cmdline_log();
		pr_inf("%s: %s: %s '%s'\n", klog_name, kind, ts, msg);
		break;
	default:
		break;
	}
}

/*
 *  stress_klog_reader()
 *	child body: follow /dev/kmsg until told to drain
 */
static void NORETURN stress_klog_reader(const int fd)
{
	struct sigaction sa;
	struct sched_param param;
	char buf[8192];

	stress_parent_died_alarm();
	stress_shim_proc_title_set("klog", "monitoring");
	(void)signal(SIGINT, SIG_IGN);
	(void)signal(SIGTERM, SIG_DFL);
	(void)signal(SIGALRM, SIG_DFL);
	(void)memset(&sa, 0, sizeof(sa));
	sa.sa_handler = stress_klog_drain_handler;
	(void)sigaction(SIGUSR1, &sa, NULL);	/* no SA_RESTART: break read */
	(void)memset(&param, 0, sizeof(param));
	param.sched_priority = sched_get_priority_min(SCHED_RR);
	(void)sched_setscheduler(0, SCHED_RR, &param);

	for (;;) {
		const ssize_t n = read(fd, buf, sizeof(buf) - 1);

		if (n > 0) {
			buf[n] = '\0';
			stress_klog_record_handle(buf);
			continue;
		}
		if ((n < 0) && (errno == EPIPE))	/* overwritten, go on */
			continue;
		if ((n < 0) && (errno == EINTR) && klog_drain) {
			(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
			continue;
		}
		if ((n < 0) && (errno == EINTR))
			continue;
		break;		/* EAGAIN after drain, or a real error */
	}
	(void)close(fd);
	_exit(EXIT_SUCCESS);
}

/*
 *  stress_klog_start()
 *	fork the kernel log reader if --klog-check
 */
void stress_klog_start(void)
{
	int fd;

	if (!(g_opt_flags & OPT_FLAGS_KLOG_CHECK) || !g_shared)
		return;
	g_shared->klog_errors = 0;
	fd = open("/dev/kmsg", O_RDONLY);
	if (fd < 0)
		return;
	if (lseek(fd, 0, SEEK_END) < 0) {
		(void)close(fd);
		return;
	}
	klog_drain = 0;
	klog_pid = fork();
	if (klog_pid == 0)
		stress_klog_reader(fd);
	if (klog_pid < 0)
		pr_dbg("%s: fork failed, errno=%d (%s), not checking kernel log\n",
			klog_name, errno, strerror(errno));
	(void)close(fd);
}

/*
 *  stress_klog_reaped()
 *	true if pid is the klog reader (reaped by someone else's wait)
 */
bool stress_klog_reaped(const pid_t pid)
{
	if ((klog_pid > 0) && (pid == klog_pid)) {
		klog_pid = -1;
		return true;
	}
	return false;
}

/*
 *  stress_klog_stop()
 *	drain and stop the reader; print the verdict and clear *success
 *	if any kernel errors were seen
 */
void stress_klog_stop(bool *success)
{
	int status;
	int i;

	if (!(g_opt_flags & OPT_FLAGS_KLOG_CHECK) || !g_shared)
		return;
	if (klog_pid > 0) {
		(void)kill(klog_pid, SIGUSR1);
		for (i = 0; i < 100; i++) {	/* up to 1 s to drain */
			if (waitpid(klog_pid, &status, WNOHANG) == klog_pid)
				break;
			(void)shim_usleep(10000);
		}
		if (i == 100) {
			(void)stress_kill_pid(klog_pid);
			(void)waitpid(klog_pid, &status, 0);
		}
		klog_pid = -1;
	}
	if (g_shared->klog_errors) {
		pr_inf("%s: detected %" PRIu64 " kernel error messages\n",
			klog_name, (uint64_t)g_shared->klog_errors);
		*success = false;
	}
	g_shared->klog_errors = 0;
}
