/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racer-gup.c: cmocka unit tests of the gup racer's verifiers: pages
 * broken while pinned, KSM pages under a long-term pin, the cow_ksm count.
 */
#include "test-racer.h"

/*
 *  test_gup_broken()
 *	only KSM pages (or KSM zero pages) that became present anon pages
 *	count as COW-broken; KSM folios are counted apart
 */
static void test_gup_broken(void **state)
{
	static const uint8_t before[6] = {
		KSM_ENTRY_KSM, KSM_ENTRY_KSM, KSM_ENTRY_KZERO,
		KSM_ENTRY_ANON, KSM_ENTRY_KSM, KSM_ENTRY_ABSENT,
	};
	static const uint8_t after[6] = {
		KSM_ENTRY_ANON, KSM_ENTRY_KSM, KSM_ENTRY_ANON,
		KSM_ENTRY_ANON, KSM_ENTRY_ABSENT, KSM_ENTRY_ANON,
	};
	uint64_t folios;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_gup_broken(before, after, 6, &folios), 2);
	assert_int_equal(folios, 1);
	assert_int_equal(stress_ksm_unmerge_gup_broken(before, before, 6, &folios), 0);
	assert_int_equal(folios, 0);
}

/*
 *  test_gup_pinned_shared()
 *	while a long-term write pin holds pages, a KSM page or KSM zero page
 *	among them is found; private and absent pages are not
 */
static void test_gup_pinned_shared(void **state)
{
#if defined(KSM_GUP_LONGTERM)
	static const uint8_t ok[4] = {
		KSM_ENTRY_ANON, KSM_ENTRY_ANON, KSM_ENTRY_ABSENT, KSM_ENTRY_ANON,
	};
	static const uint8_t ksm[4] = {
		KSM_ENTRY_ANON, KSM_ENTRY_ANON, KSM_ENTRY_KSM, KSM_ENTRY_ANON,
	};
	static const uint8_t kzero[4] = {
		KSM_ENTRY_KZERO, KSM_ENTRY_ANON, KSM_ENTRY_ANON, KSM_ENTRY_ANON,
	};

	(void)state;
	assert_int_equal(stress_ksm_unmerge_gup_pinned_shared(ok, 4), -1);
	assert_int_equal(stress_ksm_unmerge_gup_pinned_shared(ksm, 4), 2);
	assert_int_equal(stress_ksm_unmerge_gup_pinned_shared(kzero, 4), 0);
	assert_int_equal(stress_ksm_unmerge_gup_pinned_shared(ksm, 2), -1);
#else
	(void)state;
	skip();		/* built without io_uring headers */
#endif
}

/*
 *  test_gup_cow_check()
 *	a cow_ksm delta short of the broken KSM folios fails
 */
static void test_gup_cow_check(void **state)
{
	(void)state;
	assert_int_equal(stress_ksm_unmerge_gup_cow_check(5, 5), 0);
	assert_int_equal(stress_ksm_unmerge_gup_cow_check(9, 5), 0);
	assert_int_equal(stress_ksm_unmerge_gup_cow_check(4, 5), -1);
	assert_int_equal(stress_ksm_unmerge_gup_cow_check(0, 1), -1);
	assert_int_equal(stress_ksm_unmerge_gup_cow_check(-1, 5), 0);	/* no counter */
}

/*
 *  test_racer_table()
 *	the gup racer is built, with a single-token evidence name
 */
static void test_racer_table(void **state)
{
	(void)state;
	t_racer_built(KSM_RACER_IDX_GUP);
}

/*
 *  main()
 *	run the gup tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gup_broken),
		cmocka_unit_test(test_gup_pinned_shared),
		cmocka_unit_test(test_gup_cow_check),
		cmocka_unit_test(test_racer_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
