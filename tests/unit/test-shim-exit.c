/*
 * tests/unit/test-shim-exit.c: cmocka tests of the exit code rules in
 * core-shim/core-helper.c: run exit code precedence 2 > 3 > 7 > 0,
 * errno to exit status, exit status text.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_errno_map),
		cmocka_unit_test(test_status_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
