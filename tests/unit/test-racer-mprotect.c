/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racer-mprotect.c: cmocka unit tests of the mprotect racer: the tally
 * of protected KSM pages.
 */
#include "test-racer.h"

/*
 *  test_mprotect_tally()
 *	protected KSM pages: unshared ones counted, a still shared one reported
 */
static void test_mprotect_tally(void **state)
{
	const uint64_t before[4] = { 0x100, 0x100, 0x200, 0x300 };
	uint64_t after[4] = { t_entry(0x901), t_entry(0x902), t_entry(0x903), t_entry(0x904) };
	uint64_t flags[4] = { 0, 0, 0, 0 };
	ssize_t bad;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_mprotect_tally(before, after, flags, 4, T_ZERO_PFN, &bad), 4);
	assert_int_equal(bad, -1);
	/* page 2's private copy reuses the KSM page's old frame: still unshared */
	after[2] = t_entry(0x200);
	assert_int_equal(stress_ksm_unmerge_mprotect_tally(before, after, flags, 4, T_ZERO_PFN, &bad), 4);
	assert_int_equal(bad, -1);
	/* page 2 kept its KSM page through the unmerge */
	flags[2] = T_KSM_FLAG;
	assert_int_equal(stress_ksm_unmerge_mprotect_tally(before, after, flags, 4, T_ZERO_PFN, &bad), 3);
	assert_int_equal(bad, 2);
	/* page 1 moved to another KSM page, page 3 to the zero page (inconclusive) */
	after[2] = t_entry(0x903);
	flags[2] = 0;
	flags[1] = T_KSM_FLAG;
	after[3] = t_entry(T_ZERO_PFN);
	assert_int_equal(stress_ksm_unmerge_mprotect_tally(before, after, flags, 4, T_ZERO_PFN, &bad), 2);
	assert_int_equal(bad, 1);
	/* page 0 discarded: not evidence, not a failure */
	after[0] = 0;
	flags[1] = 0;
	after[3] = t_entry(0x904);
	assert_int_equal(stress_ksm_unmerge_mprotect_tally(before, after, flags, 4, T_ZERO_PFN, &bad), 3);
	assert_int_equal(bad, -1);
}

/*
 *  test_racer_table()
 *	the table holds this racer with its evidence name
 */
static void test_racer_table(void **state)
{
	(void)state;
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_MPROTECT].evidence, "ksm-pages-protected");
	assert_ptr_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_MPROTECT].start, stress_ksm_unmerge_mprotect_start);
}

/*
 *  main()
 *	run the mprotect tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mprotect_tally),
		cmocka_unit_test(test_racer_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
