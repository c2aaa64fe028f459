/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racer-thp.c: cmocka unit tests of the thp racer: subpage data,
 * the split count and the THP kind of a chunk.
 */
#include "test-racer.h"

/*
 *  test_thp_data_check()
 *	every THP subpage must hold the template; a flipped byte is found
 */
static void test_thp_data_check(void **state)
{
	t_env_t *e = *state;
	const uint8_t *tmpl = stress_ksm_unmerge_thp_template(&e->ctx);
	uint8_t *buf = malloc(8 * T_PAGE);
	size_t i, off;

	(void)state;
	assert_non_null(buf);
	for (i = 0; i < 8; i++)
		(void)memcpy(buf + i * T_PAGE, tmpl, T_PAGE);
	assert_int_equal(stress_ksm_unmerge_thp_data_check(buf, 8, tmpl, T_PAGE, &off), -1);
	assert_false(stress_ksm_unmerge_all_zero(tmpl, T_PAGE));	/* zero pages would be remapped */
	buf[6 * T_PAGE + 4095] ^= 0xff;
	assert_int_equal(stress_ksm_unmerge_thp_data_check(buf, 8, tmpl, T_PAGE, &off), 6);
	assert_int_equal(off, 4095);
	(void)memset(buf + T_PAGE, 0, T_PAGE);
	assert_int_equal(stress_ksm_unmerge_thp_data_check(buf, 8, tmpl, T_PAGE, &off), 1);
	assert_int_equal(off, 0);
	free(buf);
}

/*
 *  test_thp_split_count()
 *	a THP counts as split + merged only if it was THP-mapped before and
 *	at least one subpage is now a KSM page
 */
static void test_thp_split_count(void **state)
{
	const size_t per = 8, chunks = 3;
	uint8_t st[24];
	const uint8_t was_thp[3] = { 1, 1, 0 };
	uint64_t pages;

	(void)state;
	(void)memset(st, KSM_ENTRY_ANON, sizeof(st));
	assert_int_equal(stress_ksm_unmerge_thp_split_count(st, was_thp, chunks, per, &pages), 0);
	assert_int_equal(pages, 0);
	st[3] = KSM_ENTRY_KSM;		/* chunk 0 */
	st[16] = KSM_ENTRY_KSM;		/* chunk 2: was not a THP */
	st[17] = KSM_ENTRY_KSM;
	assert_int_equal(stress_ksm_unmerge_thp_split_count(st, was_thp, chunks, per, &pages), 1);
	assert_int_equal(pages, 3);
	st[8] = KSM_ENTRY_KZERO;		/* chunk 1: a zero page is not a KSM page of the THP */
	assert_int_equal(stress_ksm_unmerge_thp_split_count(st, was_thp, chunks, per, &pages), 1);
	st[15] = KSM_ENTRY_KSM;
	assert_int_equal(stress_ksm_unmerge_thp_split_count(st, was_thp, chunks, per, &pages), 2);
	assert_int_equal(pages, 4);
}

/*
 *  test_thp_kind()
 *	a chunk is one PMD-sized THP only if a compound head is followed by
 *	tails on consecutive pfns; any break makes it mTHPs, no THP flag none
 */
static void test_thp_kind(void **state)
{
	const uint64_t thp = STRESS_BIT_ULL(KPF_BIT_THP);
	uint64_t pm[8], fl[8];
	size_t i;

	(void)state;
	for (i = 0; i < 8; i++) {
		pm[i] = PM_PRESENT | (0x1000 + i);
		fl[i] = thp | STRESS_BIT_ULL(i ? KPF_BIT_COMPOUND_TAIL : KPF_BIT_COMPOUND_HEAD);
	}
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), KSM_THP_KIND_PMD);
	/* two 4-page folios on consecutive pfns: a head in the middle */
	fl[4] = thp | STRESS_BIT_ULL(KPF_BIT_COMPOUND_HEAD);
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), KSM_THP_KIND_MTHP);
	fl[4] = thp | STRESS_BIT_ULL(KPF_BIT_COMPOUND_TAIL);
	/* a pfn out of sequence */
	pm[6] = PM_PRESENT | 0x2000;
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), KSM_THP_KIND_MTHP);
	pm[6] = PM_PRESENT | (0x1000 + 6);
	/* small pages, or not present */
	fl[0] = 0;
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), KSM_THP_KIND_NONE);
	fl[0] = thp | STRESS_BIT_ULL(KPF_BIT_COMPOUND_HEAD);
	pm[0] = 0;
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), KSM_THP_KIND_NONE);
}

/*
 *  test_racer_table()
 *	the thp racer is built, with a single-token evidence name
 */
static void test_racer_table(void **state)
{
	(void)state;
	t_racer_built(KSM_RACER_IDX_THP);
}

/*
 *  main()
 *	run the thp tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_thp_data_check, t_setup_mixed, t_teardown),
		cmocka_unit_test(test_thp_split_count),
		cmocka_unit_test(test_thp_kind),
		cmocka_unit_test(test_racer_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
