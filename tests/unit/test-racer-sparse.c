/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racer-sparse.c: cmocka unit tests of the sparse racer: populated
 * sparse pages judged, the default sparse size.
 */
#include "test-racer.h"

/*
 *  test_sparse_judge()
 *	populated sparse pages: template data and not KSM after the unmerge
 */
static void test_sparse_judge(void **state)
{
	t_env_t *e = *state;
	stress_ksm_unmerge_sparse_t s;
	uint64_t entries[4], flags[4] = { 0, 0, 0, 0 };
	size_t k;
	int why;

	(void)memset(&s, 0, sizeof(s));
	s.stride = 4 * T_PAGE;
	s.populated = 4;
	s.size = s.populated * s.stride;
	s.base = calloc(1, s.size);
	s.entries = entries;
	s.flags = flags;
	assert_non_null(s.base);
	for (k = 0; k < s.populated; k++) {
		(void)memcpy(s.base + k * s.stride, e->ctx.templates, T_PAGE);
		entries[k] = t_entry(0x2000 + k);
	}
	assert_int_equal(stress_ksm_unmerge_sparse_judge(&s, e->ctx.templates, T_PAGE, T_ZERO_PFN, &why), -1);
	/* still a KSM page */
	flags[1] = T_KSM_FLAG;
	assert_int_equal(stress_ksm_unmerge_sparse_judge(&s, e->ctx.templates, T_PAGE, T_ZERO_PFN, &why), 1);
	assert_int_equal(why, 2);
	flags[1] = 0;
	/* still the KSM zero page */
	entries[3] = t_entry(T_ZERO_PFN);
	assert_int_equal(stress_ksm_unmerge_sparse_judge(&s, e->ctx.templates, T_PAGE, T_ZERO_PFN, &why), 3);
	assert_int_equal(why, 2);
	entries[3] = t_entry(0x2003);
	/* data lost in page 2 */
	s.base[2 * s.stride + T_PAGE - 1] ^= 0x80;
	assert_int_equal(stress_ksm_unmerge_sparse_judge(&s, e->ctx.templates, T_PAGE, T_ZERO_PFN, &why), 2);
	assert_int_equal(why, 1);
	free(s.base);
}

/*
 *  test_sparse_bytes()
 *	default sparse size is 16 GiB, page aligned
 */
static void test_sparse_bytes(void **state)
{
	(void)state;
	assert_int_equal(stress_ksm_unmerge_sparse_bytes(T_PAGE), (size_t)(16ULL * GB));
}

/*
 *  test_racer_table()
 *	the table holds this racer with its evidence name
 */
static void test_racer_table(void **state)
{
	(void)state;
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_SPARSE].evidence, "sparse-ksm-pages");
	assert_ptr_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_SPARSE].cycle, stress_ksm_unmerge_sparse_cycle);
}

/*
 *  main()
 *	run the sparse tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sparse_judge, t_setup_same, t_teardown),
		cmocka_unit_test(test_sparse_bytes),
		cmocka_unit_test(test_racer_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
