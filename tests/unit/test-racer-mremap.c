/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racer-mremap.c: cmocka unit tests of the mremap racer: a moved page
 * that lost data is found.
 */
#include "test-racer.h"

/*
 *  test_mremap_bad()
 *	a moved page that lost one byte is found, intact pages are not
 */
static void test_mremap_bad(void **state)
{
	t_env_t *e = t_env_new(KSM_UNMERGE_PATTERN_SAME, T_PAGES);
	uint8_t *buf;
	size_t k;

	(void)state;
	assert_non_null(e);
	buf = calloc(4, T_PAGE);
	assert_non_null(buf);
	for (k = 0; k < 4; k++)
		(void)memcpy(buf + k * T_PAGE, e->ctx.templates, T_PAGE);
	assert_int_equal(stress_ksm_unmerge_first_bad_page(buf, 4, e->ctx.templates, T_PAGE), -1);
	buf[2 * T_PAGE + 100] ^= 1;
	assert_int_equal(stress_ksm_unmerge_first_bad_page(buf, 4, e->ctx.templates, T_PAGE), 2);
	/* a page that came back empty (zero-filled) */
	(void)memset(buf, 0, T_PAGE);
	assert_int_equal(stress_ksm_unmerge_first_bad_page(buf, 4, e->ctx.templates, T_PAGE), 0);
	free(buf);
	t_env_free(e);
}

/*
 *  test_racer_table()
 *	the table holds this racer with its evidence name
 */
static void test_racer_table(void **state)
{
	(void)state;
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_MREMAP].name, "mremap");
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_MREMAP].evidence, "ksm-pages-moved");
	assert_ptr_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_MREMAP].cycle, stress_ksm_unmerge_mremap_cycle);
}

/*
 *  main()
 *	run the mremap tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mremap_bad),
		cmocka_unit_test(test_racer_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
