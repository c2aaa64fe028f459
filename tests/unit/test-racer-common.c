/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racer-common.c: cmocka unit tests of the helpers every racer's
 * verifier uses (stress-ksm-unmerge.c): is this page unshared, is it a
 * KSM page, is a zero-filled page explained, the named report counters.
 */
#include "test-racer.h"

/*
 *  test_unshared()
 *	a page counts as unshared only with a new, present, non-KSM pfn
 */
static void test_unshared(void **state)
{
	(void)state;
	assert_int_equal(stress_ksm_unmerge_unshared_verdict(0x500, t_entry(0x600), 0, T_ZERO_PFN), 1);
	/* same pfn, not KSM: the private copy landed in the frame compaction freed */
	assert_int_equal(stress_ksm_unmerge_unshared_verdict(0x500, t_entry(0x500), 0, T_ZERO_PFN), 1);
	/* same pfn and still KSM: never unshared */
	assert_int_equal(stress_ksm_unmerge_unshared_verdict(0x500, t_entry(0x500), T_KSM_FLAG, T_ZERO_PFN), -1);
	/* a new pfn that is still a KSM page */
	assert_int_equal(stress_ksm_unmerge_unshared_verdict(0x500, t_entry(0x600), T_KSM_FLAG, T_ZERO_PFN), -1);
	/* the shared zero page after the unmerge: discarded and read back, inconclusive */
	assert_int_equal(stress_ksm_unmerge_unshared_verdict(0x500, t_entry(T_ZERO_PFN), 0, T_ZERO_PFN), 0);
	/* a KSM zero page that is still the zero page */
	assert_int_equal(stress_ksm_unmerge_unshared_verdict(T_ZERO_PFN, t_entry(T_ZERO_PFN), 0, T_ZERO_PFN), -1);
	/* discarded by someone else: neither */
	assert_int_equal(stress_ksm_unmerge_unshared_verdict(0x500, 0x600, 0, T_ZERO_PFN), 0);
	assert_true(stress_ksm_unmerge_entry_is_ksm(t_entry(0x700), T_KSM_FLAG, T_ZERO_PFN));
	assert_false(stress_ksm_unmerge_entry_is_ksm(0x700, T_KSM_FLAG, T_ZERO_PFN));
}

/*
 *  test_page_ksm()
 *	the zero page is a KSM zero page only where the pattern puts zeros
 */
static void test_page_ksm(void **state)
{
	t_env_t *e = *state;

	assert_false(stress_ksm_unmerge_region_page_is_ksm(&e->ctx, 3, t_entry(T_ZERO_PFN), 0));
	assert_true(stress_ksm_unmerge_region_page_is_ksm(&e->ctx, 3, t_entry(0x800), T_KSM_FLAG));
	assert_false(stress_ksm_unmerge_region_page_is_ksm(&e->ctx, 3, t_entry(0x800), 0));
	e->ctx.pattern = KSM_UNMERGE_PATTERN_ZERO;
	assert_true(stress_ksm_unmerge_region_page_is_ksm(&e->ctx, 3, t_entry(T_ZERO_PFN), 0));
	e->ctx.pattern = KSM_UNMERGE_PATTERN_MIXED;	/* page 2 of 4 is the zero kind */
	assert_true(stress_ksm_unmerge_region_page_is_ksm(&e->ctx, 2, t_entry(T_ZERO_PFN), 0));
	assert_false(stress_ksm_unmerge_region_page_is_ksm(&e->ctx, 3, t_entry(T_ZERO_PFN), 0));
	e->ctx.pattern = KSM_UNMERGE_PATTERN_SAME;
}

/*
 *  test_pattern_bad()
 *	a zero-filled KSM page is explained only by another file's racer
 */
static void test_pattern_bad(void **state)
{
	t_env_t *e = *state;
	uint8_t *page = e->ctx.region + 4 * T_PAGE;

	assert_int_equal(stress_ksm_unmerge_pattern_bad_offset(&e->ctx, 4, page), -1);
	(void)memset(page, 0, T_PAGE);
	/* only this file's racers: a zero page is corruption */
	e->ctx.racers_mask = STRESS_BIT_ULL(KSM_RACER_IDX_FORK) | STRESS_BIT_ULL(KSM_RACER_IDX_MPROTECT);
	assert_int_equal(stress_ksm_unmerge_pattern_bad_offset(&e->ctx, 4, page), 0);
	/* dontneed discards pages: a whole zero page is legitimate */
	e->ctx.racers_mask |= STRESS_BIT_ULL(KSM_RACER_IDX_DONTNEED);
	assert_int_equal(stress_ksm_unmerge_pattern_bad_offset(&e->ctx, 4, page), -1);
	/* but not a partly zeroed page */
	stress_ksm_unmerge_page_fill(&e->ctx, 4, page);
	(void)memset(page + 64, 0, 64);
	assert_int_equal(stress_ksm_unmerge_pattern_bad_offset(&e->ctx, 4, page), 64);
}

/*
 *  test_racer_details()
 *	the named counters follow the evidence in the report line and form
 *	a YAML flow mapping body; a racer without them prints nothing
 */
static void test_racer_details(void **state)
{
	stress_ksm_unmerge_racer_stats_t t;
	char buf[192];

	(void)state;
	(void)memset(&t, 0, sizeof(t));
	t.detail[0] = 3;
	t.detail[3] = 7;
	stress_ksm_unmerge_racer_details_str(KSM_RACER_IDX_GUP, &t, buf, sizeof(buf), false);
	assert_string_equal(buf, ",odirect-pins=3,odirect-ksm-pages=0,longterm-pins=0,longterm-ksm-pages=7");
	stress_ksm_unmerge_racer_details_str(KSM_RACER_IDX_GUP, &t, buf, sizeof(buf), true);
	assert_string_equal(buf, "odirect-pins: 3, odirect-ksm-pages: 0, longterm-pins: 0, longterm-ksm-pages: 7");
	stress_ksm_unmerge_racer_details_str(KSM_RACER_IDX_DONTNEED, &t, buf, sizeof(buf), false);
	assert_string_equal(buf, "");
}

/*
 *  test_method_help_row()
 *	the --ksm-unmerge-method help row (generated from the racer list, for
 *	LKP's key parser) lists exactly the racer table's racers, in table order
 */
static void test_method_help_row(void **state)
{
	char want[512];
	const char *row = NULL;
	size_t i;

	(void)state;
	(void)strlcpy(want, "[ all | madvise | prctl", sizeof(want));
	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		(void)strlcat(want, " | ", sizeof(want));
		(void)strlcat(want, stress_ksm_unmerge_racers[i].name, sizeof(want));
	}
	(void)strlcat(want, " ] ", sizeof(want));
	for (i = 0; help[i].opt_l; i++)
		if (!strcmp(help[i].opt_l, "ksm-unmerge-method M"))
			row = help[i].description;
	assert_non_null(row);
	assert_memory_equal(row, want, strlen(want));
}

/*
 *  test_racer_entries()
 *	every table entry is complete, and a racer built is not marked otherwise
 */
static void test_racer_entries(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		const stress_ksm_unmerge_racer_t *r = &stress_ksm_unmerge_racers[i];

		assert_non_null(r->name);
		assert_non_null(r->path);
		assert_non_null(r->evidence);
		assert_int_equal(stress_ksm_unmerge_method_bit(r->name),
			STRESS_BIT_ULL(KSM_UNMERGE_RACER_SHIFT + i));
		if (!r->not_built) {
			assert_non_null(r->supported);
			assert_non_null(r->start);
		}
	}
}

/*
 *  test_racer_groups()
 *	the groups of the table entries' flags: a racer's transient zero page
 *	is explained only while a racer outside its group runs
 */
static void test_racer_groups(void **state)
{
	t_env_t *e = *state;

	/* the page-holding racers among themselves */
	e->ctx.racers_mask = STRESS_BIT_ULL(KSM_RACER_IDX_VMSPLICE) | STRESS_BIT_ULL(KSM_RACER_IDX_GUP) |
		STRESS_BIT_ULL(KSM_RACER_IDX_UFFD_WP) | STRESS_BIT_ULL(KSM_RACER_IDX_THP);
	assert_false(stress_ksm_unmerge_others_run(&e->ctx, KSM_RACER_F_HOLDING));
	assert_true(stress_ksm_unmerge_others_run(&e->ctx, KSM_RACER_F_MM));
	e->ctx.racers_mask |= STRESS_BIT_ULL(KSM_RACER_IDX_SIGNAL);
	assert_true(stress_ksm_unmerge_others_run(&e->ctx, KSM_RACER_F_HOLDING));
	/* the process and VMA racers among themselves */
	e->ctx.racers_mask = STRESS_BIT_ULL(KSM_RACER_IDX_MRELEASE) | STRESS_BIT_ULL(KSM_RACER_IDX_FORK) |
		STRESS_BIT_ULL(KSM_RACER_IDX_MPROTECT) | STRESS_BIT_ULL(KSM_RACER_IDX_SPARSE);
	assert_false(stress_ksm_unmerge_others_run(&e->ctx, KSM_RACER_F_MM));
	assert_true(stress_ksm_unmerge_others_run(&e->ctx, KSM_RACER_F_HOLDING));
	/* no racer: nobody else */
	e->ctx.racers_mask = 0;
	assert_false(stress_ksm_unmerge_others_run(&e->ctx, KSM_RACER_F_MM));
	assert_false(stress_ksm_unmerge_others_run(&e->ctx, KSM_RACER_F_HOLDING));
}

/*
 *  main()
 *	run the common tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unshared),
		cmocka_unit_test_setup_teardown(test_page_ksm, t_setup_same, t_teardown),
		cmocka_unit_test_setup_teardown(test_pattern_bad, t_setup_same, t_teardown),
		cmocka_unit_test(test_racer_details),
		cmocka_unit_test(test_method_help_row),
		cmocka_unit_test(test_racer_entries),
		cmocka_unit_test_setup_teardown(test_racer_groups, t_setup_same, t_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
