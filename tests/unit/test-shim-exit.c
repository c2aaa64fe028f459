/*
 * tests/unit/test-shim-exit.c: cmocka tests of the exit code rules in
 * core-shim/core-helper.c: run exit code precedence 2 > 3 > 7 > 0,
 * errno to exit status, exit status text, and the verdict on a reaped
 * instance (stress-ng's stress_wait_status(): SIGKILL passes).
 */
#include "test-shim-common.h"

/*
 *  test_precedence()
 *	every combination of the three run verdicts
 */
static void test_precedence(void **state)
{
	int s, r, m;

	(void)state;
	for (s = 0; s < 2; s++) {
		for (r = 0; r < 2; r++) {
			for (m = 0; m < 2; m++) {
				const int rc = stress_run_exit_code(s, r, m);
				int expect = EXIT_SUCCESS;

				if (!s)
					expect = EXIT_NOT_SUCCESS;
				else if (!r)
					expect = EXIT_NO_RESOURCE;
				else if (!m)
					expect = EXIT_METRICS_UNTRUSTWORTHY;
				assert_int_equal(rc, expect);
			}
		}
	}
	assert_int_equal(stress_run_exit_code(false, false, false), 2);
	assert_int_equal(stress_run_exit_code(true, false, false), 3);
	assert_int_equal(stress_run_exit_code(true, true, false), 7);
	assert_int_equal(stress_run_exit_code(true, true, true), 0);
}

/*
 *  test_errno_map()
 *	stress_exit_status() errno mapping
 */
static void test_errno_map(void **state)
{
	(void)state;
	assert_int_equal(stress_exit_status(ENOMEM), EXIT_NO_RESOURCE);
	assert_int_equal(stress_exit_status(ENOSPC), EXIT_NO_RESOURCE);
	assert_int_equal(stress_exit_status(ENOSYS), EXIT_NOT_IMPLEMENTED);
	assert_int_equal(stress_exit_status(EINVAL), EXIT_FAILURE);
	assert_int_equal(stress_exit_status(0), EXIT_FAILURE);
}

/*
 *  test_status_text()
 *	exit status descriptions used in "terminated with an error" lines
 */
static void test_status_text(void **state)
{
	(void)state;
	assert_string_equal(stress_exit_status_to_string(EXIT_NOT_SUCCESS), "stressor failed");
	assert_string_equal(stress_exit_status_to_string(EXIT_NO_RESOURCE), "no resources");
	assert_string_equal(stress_exit_status_to_string(EXIT_SIGNALED), "killed by signal");
	assert_string_equal(stress_exit_status_to_string(EXIT_METRICS_UNTRUSTWORTHY),
		"metrics may be untrustworthy");
	assert_string_equal(stress_exit_status_to_string(42), "unknown");
	assert_string_equal(stress_signal_str(SIGKILL), "signal 9 'SIGKILL'");
}

/*
 *  has_line()
 *	true if out has a "<type>: [pid] <msg>" log line ending in msg
 */
static bool has_line(const char *out, const char *type, const char *msg)
{
	const char *line = out;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		const size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const size_t mlen = strlen(msg);
		const char *t = strstr(line, type);

		if (t && (t < line + len) && (len >= mlen) &&
		    !strncmp(line + len - mlen, msg, mlen))
			return true;
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

/*
 *  wait_verdict()
 *	classify one wait status at log flags; the captured log in *out
 */
static int wait_verdict(const int status, const uint32_t log_flags,
	stress_shim_result_t *res, char **out)
{
	test_capture_t cap;
	int rc;

	*res = (stress_shim_result_t){ true, true, true, { 0, 0, 0, 0 } };
	g_pr_log_flags = log_flags;
	test_capture_begin(&cap, STDOUT_FILENO);
	rc = stress_shim_wait_status("ksm-unmerge", 4242, status, res);
	*out = test_capture_end(&cap);
	return rc;
}

/*
 *  test_wait_killed()
 *	SIGKILL (nobody's OOM record for the pid): passed, said at debug
 *	level only, as stress-ng does; SIGALRM: passed, nothing said
 */
static void test_wait_killed(void **state)
{
	stress_shim_result_t res;
	char *out;

	(void)state;
	assert_int_equal(wait_verdict(SIGKILL, PR_LOG_FLAGS_ALL, &res, &out), EXIT_SUCCESS);
	assert_true(res.success && res.resource_success && res.metrics_success);
	assert_int_equal(res.counts.passed, 1);
	assert_int_equal(res.counts.failed + res.counts.skipped + res.counts.bad_metrics, 0);
	assert_true(has_line(out, "debug:", "ksm-unmerge: [4242] possibly killed by the OOM killer"));
	assert_true(has_line(out, "debug:", "ksm-unmerge: [4242] terminated on signal 9 'SIGKILL'"));
	free(out);

	assert_int_equal(wait_verdict(SIGKILL, PR_LOG_FLAGS_ERROR | PR_LOG_FLAGS_INFO |
		PR_LOG_FLAGS_WARN | PR_LOG_FLAGS_FAIL, &res, &out), EXIT_SUCCESS);
	assert_int_equal(res.counts.passed, 1);
	assert_string_equal(out, "");
	free(out);

	assert_int_equal(wait_verdict(SIGALRM, PR_LOG_FLAGS_ALL, &res, &out), EXIT_SUCCESS);
	assert_true(res.success);
	assert_int_equal(res.counts.passed, 1);
	assert_null(strstr(out, "terminated on"));
	assert_null(strstr(out, "OOM"));
	free(out);
}

/*
 *  test_wait_signalled()
 *	any other signal fails the run (EXIT_SIGNALED)
 */
static void test_wait_signalled(void **state)
{
	static const int sigs[] = { SIGSEGV, SIGTERM, SIGBUS, SIGABRT };
	stress_shim_result_t res;
	size_t i;
	char *out;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(sigs); i++) {
		assert_int_equal(wait_verdict(sigs[i], PR_LOG_FLAGS_ALL, &res, &out), EXIT_SIGNALED);
		assert_false(res.success);
		assert_int_equal(res.counts.failed, 1);
		assert_int_equal(res.counts.passed, 0);
		assert_non_null(strstr(out, "terminated on signal"));
		free(out);
	}
}

/*
 *  test_wait_exited()
 *	exit statuses: 0 pass, 1 -> 2 failed with an error line, 3 skipped
 *	(no resource), 4 skipped, 6 failed (run still successful, as in
 *	stress-ng), 7 untrustworthy
 */
static void test_wait_exited(void **state)
{
	const uint32_t flags = PR_LOG_FLAGS_ERROR | PR_LOG_FLAGS_INFO | PR_LOG_FLAGS_WARN;
	stress_shim_result_t res;
	char *out;

	(void)state;
	assert_int_equal(wait_verdict(EXIT_SUCCESS << 8, flags, &res, &out), EXIT_SUCCESS);
	assert_true(res.success && (res.counts.passed == 1));
	assert_string_equal(out, "");
	free(out);

	assert_int_equal(wait_verdict(EXIT_FAILURE << 8, flags, &res, &out), EXIT_NOT_SUCCESS);
	assert_false(res.success);
	assert_int_equal(res.counts.failed, 1);
	assert_true(has_line(out, "error:",
		"ksm-unmerge: [4242] terminated with an error, exit status=2 (stressor failed)"));
	free(out);

	assert_int_equal(wait_verdict(EXIT_NO_RESOURCE << 8, flags, &res, &out), EXIT_NO_RESOURCE);
	assert_true(res.success);
	assert_false(res.resource_success);
	assert_int_equal(res.counts.skipped, 1);
	assert_true(has_line(out, "warn:", "ksm-unmerge: [4242] aborted early, no system resources"));
	free(out);

	assert_int_equal(wait_verdict(EXIT_NOT_IMPLEMENTED << 8, flags, &res, &out), EXIT_NOT_IMPLEMENTED);
	assert_true(res.success && res.resource_success && res.metrics_success);
	assert_int_equal(res.counts.skipped, 1);
	free(out);

	assert_int_equal(wait_verdict(EXIT_BY_SYS_EXIT << 8, flags, &res, &out), EXIT_BY_SYS_EXIT);
	assert_true(res.success);
	assert_int_equal(res.counts.failed, 1);
	free(out);

	assert_int_equal(wait_verdict(EXIT_METRICS_UNTRUSTWORTHY << 8, flags, &res, &out),
		EXIT_METRICS_UNTRUSTWORTHY);
	assert_true(res.success);
	assert_false(res.metrics_success);
	assert_int_equal(res.counts.bad_metrics, 1);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_errno_map),
		cmocka_unit_test(test_status_text),
		cmocka_unit_test(test_wait_killed),
		cmocka_unit_test(test_wait_signalled),
		cmocka_unit_test(test_wait_exited),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
