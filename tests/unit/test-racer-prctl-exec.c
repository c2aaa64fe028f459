/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racer-prctl-exec.c: cmocka unit tests of the prctl-exec racer: merge-any
 * lost across exec or a new VMA left unmergeable fails.
 */
#include "test-racer.h"

/*
 *  test_exec_judge()
 *	merge-any lost across exec, or a new VMA left unmergeable, fails
 */
static void test_exec_judge(void **state)
{
	stress_ksm_unmerge_exec_report_t r;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_exec_parse("get=1 mg=1 merging=63\n", &r), 0);
	assert_int_equal(r.get, 1);
	assert_int_equal(r.merging, 63);
	assert_int_equal(stress_ksm_unmerge_exec_judge(&r), 0);
	/* the broken kernels: merge-any dropped by exec */
	assert_int_equal(stress_ksm_unmerge_exec_parse("get=0 mg=0 merging=0\n", &r), 0);
	assert_int_equal(stress_ksm_unmerge_exec_judge(&r), 1);
	/* merge-any kept, but the new program's VMA not marked mergeable */
	assert_int_equal(stress_ksm_unmerge_exec_parse("get=1 mg=0 merging=0\n", &r), 0);
	assert_int_equal(stress_ksm_unmerge_exec_judge(&r), 2);
	/* smaps unreadable: only the prctl state is judged */
	assert_int_equal(stress_ksm_unmerge_exec_parse("get=1 mg=-1 merging=-1\n", &r), 0);
	assert_int_equal(stress_ksm_unmerge_exec_judge(&r), 0);
	assert_int_equal(stress_ksm_unmerge_exec_parse("garbage", &r), -1);
}

/*
 *  test_racer_table()
 *	the table holds this racer with its evidence name
 */
static void test_racer_table(void **state)
{
	(void)state;
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_PRCTL_EXEC].name, "prctl-exec");
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_PRCTL_EXEC].evidence, "helpers-merged");
}

/*
 *  main()
 *	run the prctl-exec tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_judge),
		cmocka_unit_test(test_racer_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
