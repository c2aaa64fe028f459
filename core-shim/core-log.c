/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/core-log.c: pr_* logging.  Lines look like stress-ng 0.22:
 * "stress-ng: <type> [<pid>] <msg>", on stdout unless --stderr.
 */
#include "stress-ng.h"

#include <stdarg.h>

#define PR_ABORT_FAILURES	(5)	/* pr_fail calls before giving up */
#define PR_LINE_MAX		(8192)

uint32_t g_pr_log_flags = PR_LOG_FLAGS_ERROR | PR_LOG_FLAGS_INFO;

static unsigned int pr_fail_count;	/* pr_fail calls in this process */
static bool pr_abort_emitted;		/* abort note printed */
static pid_t pr_block_pid = -1;		/* process owning the block buffer */
static char *pr_block_buf;		/* buffered block text */
static size_t pr_block_len;		/* bytes in pr_block_buf */
static int pr_log_fd = -1;		/* --log-file, -1 if none */

/*
 *  pr_fd()
 *	file descriptor log lines go to
 */
int pr_fd(void)
{
	return (g_pr_log_flags & PR_LOG_FLAGS_STDERR) ?
		STDERR_FILENO : STDOUT_FILENO;
}

/*
 *  pr_fail_count_reset()
 *	reset the per-process failure count (new child process)
 */
void pr_fail_count_reset(void)
{
	pr_fail_count = 0;
	pr_abort_emitted = false;
	pr_block_pid = -1;
	pr_block_buf = NULL;
	pr_block_len = 0;
}

/*
 *  pr_write_all()
 *	write all of buf to fd, retrying short writes and EINTR
 */
static void pr_write_all(const int fd, const char *buf, const size_t len)
{
	size_t done = 0;

	while (done < len) {
		const ssize_t ret = write(fd, buf + done, len - done);

		if (ret <= 0) {
			if ((ret < 0) && (errno == EINTR))
				continue;
			break;
		}
		done += (size_t)ret;
	}
}

/*
 *  pr_write_fd()
 *	write buf to stdout (or stderr) and to the --log-file, if any
 */
static void pr_write_fd(const char *buf, const size_t len)
{
	if (pr_log_fd >= 0)
		pr_write_all(pr_log_fd, buf, len);
	pr_write_all(pr_fd(), buf, len);
}

/*
 *  pr_log_file_open()
 *	--log-file: messages also go to filename (appended, so instances
 *	share it); returns -1 with errno set if it cannot be opened
 */
int pr_log_file_open(const char *filename)
{
	const int fd = open(filename, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
		S_IRUSR | S_IWUSR);

	if (fd < 0)
		return -1;
	if (pr_log_fd >= 0)
		(void)close(pr_log_fd);
	pr_log_fd = fd;
	return 0;
}

/*
 *  pr_emit()
 *	emit a formatted line, into the block buffer when one is open
 */
static void pr_emit(const char *buf, const size_t len)
{
	if ((pr_block_pid == getpid()) && (pr_block_pid != -1)) {
		char *new_buf = realloc(pr_block_buf, pr_block_len + len + 1);

		if (new_buf) {
			pr_block_buf = new_buf;
			(void)memcpy(pr_block_buf + pr_block_len, buf, len);
			pr_block_len += len;
			pr_block_buf[pr_block_len] = '\0';
			return;
		}
	}
	pr_write_fd(buf, len);
}

/*
 *  pr_type_str()
 *	the 6 character type tag for a log flag
 */
static const char *pr_type_str(const uint32_t flag)
{
	switch (flag) {
	case PR_LOG_FLAGS_ERROR:
		return "error:";
	case PR_LOG_FLAGS_DEBUG:
		return "debug:";
	case PR_LOG_FLAGS_INFO:
		return "info: ";
	case PR_LOG_FLAGS_FAIL:
		return "fail: ";
	case PR_LOG_FLAGS_WARN:
		return "warn: ";
	case PR_LOG_FLAGS_METRICS:
		return "metrc:";
	default:
		return "";
	}
}

static void pr_msg(const uint32_t flag, const char *fmt, va_list ap)
	FORMAT(printf, 2, 0);

/*
 *  pr_msg()
 *	format and emit one message of the given type
 */
static void pr_msg(const uint32_t flag, const char *fmt, va_list ap)
{
	char buf[PR_LINE_MAX];
	const int saved_errno = errno;
	size_t n = 0;
	int ret;

	if (!(flag & (PR_LOG_FLAGS_FAIL | PR_LOG_FLAGS_WARN)) &&
	    !(g_pr_log_flags & flag))
		return;

	if (!(g_pr_log_flags & PR_LOG_FLAGS_BRIEF)) {
		ret = snprintf(buf, sizeof(buf), "%s: %s [%" PRIdMAX "] ",
			STRESS_SHIM_PROG_NAME, pr_type_str(flag),
			(intmax_t)getpid());
		n = (ret > 0) ? (size_t)ret : 0;
	}
	ret = vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	if (ret > 0)
		n += (size_t)ret;
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	pr_emit(buf, n);

	if (flag & PR_LOG_FLAGS_FAIL) {
		pr_fail_count++;
		if ((pr_fail_count >= PR_ABORT_FAILURES) && !pr_abort_emitted) {
			pr_abort_emitted = true;
			stress_continue_set_flag(false);
			ret = snprintf(buf, sizeof(buf),
				"%s: %s [%" PRIdMAX "] info: %d failures "
				"reached, aborting stress process\n",
				STRESS_SHIM_PROG_NAME, pr_type_str(flag),
				(intmax_t)getpid(), PR_ABORT_FAILURES);
			if (ret > 0)
				pr_emit(buf, (size_t)ret < sizeof(buf) ?
					(size_t)ret : sizeof(buf) - 1);
		}
	}
	errno = saved_errno;
}

/*
 *  PR_FUNC()
 *	define a printf-like pr_* function for a flag
 */
#define PR_FUNC(func, flag, skippable)				\
void func(const char *fmt, ...)					\
{								\
	va_list ap;						\
								\
	if ((skippable) &&					\
	    (g_pr_log_flags & PR_LOG_FLAGS_SKIP_SILENT))	\
		return;						\
	va_start(ap, fmt);					\
	pr_msg(flag, fmt, ap);					\
	va_end(ap);						\
}

/* pr_dbg(): debug messages, shown with -v */
PR_FUNC(pr_dbg, PR_LOG_FLAGS_DEBUG, false)
/* pr_dbg_skip(): debug skip messages, silenced by --skip-silent */
PR_FUNC(pr_dbg_skip, PR_LOG_FLAGS_DEBUG, true)
/* pr_inf(): info messages */
PR_FUNC(pr_inf, PR_LOG_FLAGS_INFO, false)
/* pr_inf_skip(): info skip messages, silenced by --skip-silent */
PR_FUNC(pr_inf_skip, PR_LOG_FLAGS_INFO, true)
/* pr_err(): error messages */
PR_FUNC(pr_err, PR_LOG_FLAGS_ERROR, false)
/* pr_err_skip(): error skip messages, silenced by --skip-silent */
PR_FUNC(pr_err_skip, PR_LOG_FLAGS_ERROR, true)
/* pr_fail(): verification failures, always shown */
PR_FUNC(pr_fail, PR_LOG_FLAGS_FAIL, false)
/* pr_warn(): warnings, always shown */
PR_FUNC(pr_warn, PR_LOG_FLAGS_WARN, false)
/* pr_warn_skip(): warning skip messages, silenced by --skip-silent */
PR_FUNC(pr_warn_skip, PR_LOG_FLAGS_WARN, true)
/* pr_metrics(): metrics table lines */
PR_FUNC(pr_metrics, PR_LOG_FLAGS_METRICS, false)

/*
 *  pr_tidy()
 *	tidy-up messages: info after SIGINT, debug otherwise
 */
void pr_tidy(const char *fmt, ...)
{
	va_list ap;
	const uint32_t flag = (g_shared && g_shared->caught_sigint) ?
		PR_LOG_FLAGS_INFO : PR_LOG_FLAGS_DEBUG;

	va_start(ap, fmt);
	pr_msg(flag, fmt, ap);
	va_end(ap);
}

/*
 *  pr_fail_check()
 *	turn EXIT_SUCCESS into EXIT_FAILURE once the abort limit was hit
 */
void pr_fail_check(int *const rc)
{
	if (pr_abort_emitted && (*rc == EXIT_SUCCESS))
		*rc = EXIT_FAILURE;
}

/*
 *  pr_block_begin()
 *	start buffering log lines so a block is written in one go
 */
void pr_block_begin(void)
{
	pr_block_pid = getpid();
	pr_block_buf = NULL;
	pr_block_len = 0;
}

/*
 *  pr_block_end()
 *	write out and free the buffered block
 */
void pr_block_end(void)
{
	if ((pr_block_pid == getpid()) && pr_block_buf)
		pr_write_fd(pr_block_buf, pr_block_len);
	free(pr_block_buf);
	pr_block_buf = NULL;
	pr_block_len = 0;
	pr_block_pid = -1;
}
