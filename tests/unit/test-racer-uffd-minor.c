/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racer-uffd-minor.c: cmocka unit tests of the uffd-minor racer: the
 * VMA flags a 32-bit VM_MERGEABLE mask leaves fail the check.
 */
#include "test-racer.h"

/*
 *  test_minor_flags()
 *	the flags a 32-bit VM_MERGEABLE mask left (no "ui") fail the check
 */
static void test_minor_flags(void **state)
{
	(void)state;
	assert_true(stress_ksm_unmerge_minor_has_ui("rd wr mr mw me ac ui "));
	assert_true(stress_ksm_unmerge_minor_has_ui("ui rd"));
	assert_false(stress_ksm_unmerge_minor_has_ui("rd wr mr mw me ac "));
	assert_false(stress_ksm_unmerge_minor_has_ui("rd uio wr"));
	assert_int_equal(stress_ksm_unmerge_minor_flags_judge("rd wr mr mw me ac ui ",
		"rd wr mr mw me ac ui "), 0);
	/* what the broken kernel left: bits above 31 gone */
	assert_int_equal(stress_ksm_unmerge_minor_flags_judge("rd wr mr mw me ac ui ",
		"rd wr mr mw me ac "), 2);
	assert_int_equal(stress_ksm_unmerge_minor_flags_judge("rd wr mr mw me ac ui ",
		"rd mr mw me ac ui "), 1);
}

/*
 *  test_racer_table()
 *	the table holds this racer with its evidence name
 */
static void test_racer_table(void **state)
{
	(void)state;
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_UFFD_MINOR].name, "uffd-minor");
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_UFFD_MINOR].evidence, "ksm-pages-unmerged");
}

/*
 *  main()
 *	run the uffd-minor tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minor_flags),
		cmocka_unit_test(test_racer_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
