/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racer-mrelease.c: cmocka unit tests of the mrelease racer: the
 * process_mrelease() result and the victim's exit status.
 */
#include "test-racer.h"

/*
 *  test_mrelease_judge()
 *	0 reaps, ESRCH is legitimate, EINVAL and anything else fail
 */
static void test_mrelease_judge(void **state)
{
	(void)state;
	assert_int_equal(stress_ksm_unmerge_mrelease_judge(0, 0), KSM_MRELEASE_REAPED);
	assert_int_equal(stress_ksm_unmerge_mrelease_judge(-1, ESRCH), KSM_MRELEASE_GONE);
	assert_int_equal(stress_ksm_unmerge_mrelease_judge(-1, EINVAL), KSM_MRELEASE_FAIL);
	assert_int_equal(stress_ksm_unmerge_mrelease_judge(-1, EAGAIN), KSM_MRELEASE_FAIL);
	assert_int_equal(stress_ksm_unmerge_mrelease_judge(-1, EBADF), KSM_MRELEASE_FAIL);
	assert_int_equal(stress_ksm_unmerge_mrelease_judge(1, 0), KSM_MRELEASE_FAIL);
}

/*
 *  test_mrelease_status()
 *	the victim must die by SIGKILL; an exit with an errno is a failure
 */
static void test_mrelease_status(void **state)
{
	(void)state;
	assert_true(stress_ksm_unmerge_mrelease_status_ok(SIGKILL));		/* killed */
	assert_true(stress_ksm_unmerge_mrelease_status_ok(0));			/* exit 0 */
	assert_false(stress_ksm_unmerge_mrelease_status_ok(SIGSEGV));		/* crashed */
	assert_false(stress_ksm_unmerge_mrelease_status_ok(EINVAL << 8));	/* madvise failed */
}

/*
 *  test_racer_table()
 *	the table holds this racer with its evidence name
 */
static void test_racer_table(void **state)
{
	(void)state;
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_MRELEASE].evidence, "ksm-victims-killed");
	assert_ptr_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_MRELEASE].start, stress_ksm_unmerge_mrelease_start);
}

/*
 *  main()
 *	run the mrelease tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mrelease_judge),
		cmocka_unit_test(test_mrelease_status),
		cmocka_unit_test(test_racer_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
