/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/fuzz/fuzz-opts.c: libFuzzer target for the command line parser
 * (core-shim/core-opts.c stress_shim_opts_parse() with the real
 * stressor's option table, callbacks and method lists).  The input is
 * the argument list after argv[0], elements separated by NUL or
 * newline.  Only the parse runs, as main() does it before any
 * supported()/init(): nothing in the system is touched.
 *
 * Invariants (a violation aborts, so libFuzzer records the input):
 *  - bad input: exactly one stderr line, then longjmp(g_error_env)
 *  - accepted input: no stderr output, 1..4096 instances, ops 1..1e8
 *    when given, timeout <= UINT32_MAX seconds when given
 *  - -h: usage printed, help flag set, no stderr output
 *  - no sanitizer report, no leak (settings freed after every input)
 *
 *   make fuzz-opts FUZZ_OPTS_TIME=20      (see docs/hygiene.md)
 */
#include "stress-ng.h"

#include <sys/mman.h>
#include <sanitizer/common_interface_defs.h>

#define FUZZ_ARGS_MAX	(64)		/* argv elements taken from an input */
#define FUZZ_ERR_MAX	(4096)		/* stderr bytes kept per input */

static int fuzz_err_fd = -1;		/* memfd that collects stderr */
static int fuzz_null_fd = -1;		/* /dev/null for stdout */
static int fuzz_stdout_fd = -1;		/* the real stdout */
static int fuzz_stderr_fd = -1;		/* the real stderr */

/*
 *  fuzz_die()
 *	report a broken invariant on the real stderr and abort
 */
static void NORETURN fuzz_die(const char *what, const char *err)
{
	dprintf(fuzz_stderr_fd, "fuzz-opts: invariant broken: %s\n"
		"fuzz-opts: parser stderr was: '%s'\n", what, err);
	abort();
}

/*
 *  LLVMFuzzerInitialize()
 *	open the stderr capture memfd and /dev/null, keep the real fds
 */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_stdout_fd = dup(STDOUT_FILENO);
	fuzz_stderr_fd = dup(STDERR_FILENO);
	fuzz_err_fd = memfd_create("fuzz-opts-stderr", MFD_CLOEXEC);
	fuzz_null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if ((fuzz_stdout_fd < 0) || (fuzz_stderr_fd < 0) ||
	    (fuzz_err_fd < 0) || (fuzz_null_fd < 0)) {
		(void)fprintf(stderr, "fuzz-opts: cannot set up fds, errno=%d (%s)\n",
			errno, strerror(errno));
		exit(1);
	}
	/* sanitizer reports must not land in the capture file */
	__sanitizer_set_report_fd((void *)(intptr_t)fuzz_stderr_fd);
	return 0;
}

/*
 *  fuzz_argv_build()
 *	split data on NUL and newline into separately allocated strings
 *	(so ASan sees any read past an argument); returns argc
 */
static int fuzz_argv_build(const uint8_t *data, const size_t size, char **argv)
{
	int argc = 0;
	size_t start = 0, i;

	argv[argc++] = strdup("stress-ksm-unmerge");
	for (i = 0; i <= size && argc < FUZZ_ARGS_MAX; i++) {
		char *arg;

		if ((i < size) && (data[i] != '\0') && (data[i] != '\n'))
			continue;
		if ((i == size) && (start == size) && (argc > 1))
			break;		/* trailing separator: no empty last arg */
		arg = malloc(i - start + 1);
		if (!arg)
			abort();
		(void)memcpy(arg, data + start, i - start);
		arg[i - start] = '\0';
		argv[argc++] = arg;
		start = i + 1;
	}
	argv[argc] = NULL;
	return argc;
}

/*
 *  fuzz_state_reset()
 *	fresh global option state, as at program start
 */
static void fuzz_state_reset(void)
{
	static char *dummy_argv[] = { "x", NULL };

	g_opt_flags = 0;
	g_opt_timeout = TIMEOUT_NOT_SET;
	g_pr_log_flags = PR_LOG_FLAGS_ERROR | PR_LOG_FLAGS_INFO;
	stress_settings_free();
	stress_shim_parse_context_set(NULL, NULL);
	/* optind = 0 makes glibc forget a half parsed "-abc" of the last input */
	optind = 0;
	opterr = 0;
	(void)getopt(1, dummy_argv, "");
	if (stress_ksm_unmerge_info.default_set)
		stress_ksm_unmerge_info.default_set();
}

/*
 *  fuzz_redirect()
 *	point stdout at /dev/null and stderr at the empty capture memfd
 */
static void fuzz_redirect(void)
{
	if ((ftruncate(fuzz_err_fd, 0) < 0) ||
	    (lseek(fuzz_err_fd, 0, SEEK_SET) < 0) ||
	    (dup2(fuzz_err_fd, STDERR_FILENO) < 0) ||
	    (dup2(fuzz_null_fd, STDOUT_FILENO) < 0))
		abort();
}

/*
 *  fuzz_restore()
 *	flush, put the real stdout/stderr back, return the captured stderr
 */
static size_t fuzz_restore(char *err, const size_t len)
{
	ssize_t n;

	(void)fflush(stdout);
	(void)fflush(stderr);
	if ((dup2(fuzz_stdout_fd, STDOUT_FILENO) < 0) ||
	    (dup2(fuzz_stderr_fd, STDERR_FILENO) < 0))
		abort();
	n = pread(fuzz_err_fd, err, len - 1, 0);
	if (n < 0)
		abort();
	err[n] = '\0';
	return (size_t)n;
}

/*
 *  fuzz_check()
 *	the invariants for one parse outcome (ret: -1 longjmp, 0 run, 1 help)
 */
static void fuzz_check(const int ret, const stress_shim_config_t *cfg,
	const char *err, const size_t err_len)
{
	const char *nl = memchr(err, '\n', err_len);

	if (ret < 0) {
		if (!nl || (nl != err + err_len - 1) || (err_len < 2))
			fuzz_die("bad input must print exactly one stderr line", err);
		return;
	}
	if (err_len)
		fuzz_die("accepted input printed to stderr", err);
	if (ret == 1) {
		if (!cfg->help)
			fuzz_die("parse returned 1 without help", err);
		return;
	}
	if ((cfg->instances < 1) || (cfg->instances > STRESS_SHIM_INSTANCES_MAX))
		fuzz_die("accepted instance count out of range", err);
	if (cfg->ops_set && ((cfg->ops < 1) || (cfg->ops > 100000000ULL)))
		fuzz_die("accepted ops count out of range", err);
	if (cfg->timeout_set && (g_opt_timeout > UINT32_MAX))
		fuzz_die("accepted timeout out of range", err);
	if (!cfg->timeout_set && (g_opt_timeout != TIMEOUT_NOT_SET))
		fuzz_die("timeout set without --timeout", err);
}

/*
 *  LLVMFuzzerTestOneInput()
 *	parse one argument list and check the outcome
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[FUZZ_ARGS_MAX + 1];
	static char err[FUZZ_ERR_MAX];
	stress_shim_config_t cfg;
	volatile int ret = -1;
	size_t err_len;
	int argc, i;

	argc = fuzz_argv_build(data, size, argv);
	fuzz_state_reset();
	(void)memset(&cfg, 0, sizeof(cfg));
	fuzz_redirect();
	if (setjmp(g_error_env) == 0)
		ret = stress_shim_opts_parse(argc, argv, &stress_ksm_unmerge_info,
			"ksm-unmerge", &cfg);
	err_len = fuzz_restore(err, sizeof(err));
	fuzz_check(ret, &cfg, err, err_len);

	stress_settings_free();
	for (i = 0; i < argc; i++)
		free(argv[i]);
	return 0;
}
