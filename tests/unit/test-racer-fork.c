/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racer-fork.c: cmocka unit tests of the fork racer: the child's COW
 * writes read back, the parent's pages behind them stay intact.
 */
#include "test-racer.h"

/*
 *  test_fork_written()
 *	the child's own write reads back; a flipped byte is found
 */
static void test_fork_written(void **state)
{
	uint8_t *page = malloc(T_PAGE);

	(void)state;
	assert_non_null(page);
	stress_ksm_unmerge_fork_fill(page, T_PAGE, 5);
	assert_int_equal(stress_ksm_unmerge_fork_written_check(page, T_PAGE, 5), -1);
	/* right data for another page index */
	assert_int_equal(stress_ksm_unmerge_fork_written_check(page, T_PAGE, 6), 0);
	page[1000] ^= 0x40;
	assert_int_equal(stress_ksm_unmerge_fork_written_check(page, T_PAGE, 5), 1000 & ~7);
	free(page);
}

/*
 *  test_fork_parent()
 *	the parent's pages behind the child's COW writes must be intact
 */
static void test_fork_parent(void **state)
{
	t_env_t *e = *state;
	uint64_t pages[3] = { 1, 7, 12 };
	ssize_t off;

	assert_int_equal(stress_ksm_unmerge_fork_parent_check(&e->ctx, pages, 3, &off), -1);
	/* the child's write leaked into the parent's page 7 */
	stress_ksm_unmerge_fork_fill(e->ctx.region + 7 * T_PAGE, T_PAGE, 7);
	assert_int_equal(stress_ksm_unmerge_fork_parent_check(&e->ctx, pages, 3, &off), 1);
	assert_true(off >= 0);
	stress_ksm_unmerge_page_fill(&e->ctx, 7, e->ctx.region + 7 * T_PAGE);
	/* one flipped byte in page 12 */
	e->ctx.region[12 * T_PAGE + 333] ^= 1;
	assert_int_equal(stress_ksm_unmerge_fork_parent_check(&e->ctx, pages, 3, &off), 2);
	assert_int_equal(off, 333);
	e->ctx.region[12 * T_PAGE + 333] ^= 1;
	/* a page index the child could not have written */
	pages[0] = T_PAGES;
	assert_int_equal(stress_ksm_unmerge_fork_parent_check(&e->ctx, pages, 3, &off), 0);
}

/*
 *  test_racer_table()
 *	the table holds this racer with its evidence name
 */
static void test_racer_table(void **state)
{
	(void)state;
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_FORK].evidence, "ksm-cow-writes");
	assert_ptr_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_FORK].cycle, stress_ksm_unmerge_fork_cycle);
}

/*
 *  main()
 *	run the fork tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_written),
		cmocka_unit_test_setup_teardown(test_fork_parent, t_setup_same, t_teardown),
		cmocka_unit_test(test_racer_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
