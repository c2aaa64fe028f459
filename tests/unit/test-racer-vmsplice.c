/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racer-vmsplice.c: cmocka unit tests of the vmsplice racer's data
 * verifier (also the gup racer's): an intact copy passes, a flipped byte
 * or a wrongly zeroed page is found.
 */
#include "test-racer.h"

/*
 *  test_pages_check()
 *	vmsplice/gup data verifier: intact copy passes, any flipped byte in
 *	any page is found with its page and offset, also in a partial page
 */
static void test_pages_check(void **state)
{
	t_env_t *e = *state;
	stress_ksm_unmerge_ctx_t *ctx = &e->ctx;
	uint8_t buf[4 * T_PAGE];
	ssize_t off;

	(void)memcpy(buf, ctx->region + 5 * T_PAGE, sizeof(buf));
	assert_int_equal(stress_ksm_unmerge_copied_pages_check(ctx, 5, buf, sizeof(buf), false, e->scratch, &off), -1);
	/* the same bytes checked as the wrong pages must fail */
	assert_int_equal(stress_ksm_unmerge_copied_pages_check(ctx, 4, buf, sizeof(buf), false, e->scratch, &off), 0);

	buf[2 * T_PAGE + 100] ^= 0x01;
	assert_int_equal(stress_ksm_unmerge_copied_pages_check(ctx, 5, buf, sizeof(buf), false, e->scratch, &off), 2);
	/* page 7 is a unique page: checked word by word */
	assert_true(off <= 100 && off + 8 > 100);
	buf[2 * T_PAGE + 100] ^= 0x01;

	/* partial last page: only its first bytes count */
	buf[3 * T_PAGE + 10] ^= 0x80;
	assert_int_equal(stress_ksm_unmerge_copied_pages_check(ctx, 5, buf, 3 * T_PAGE + 10, false, e->scratch, &off), -1);
	assert_int_equal(stress_ksm_unmerge_copied_pages_check(ctx, 5, buf, 3 * T_PAGE + 11, false, e->scratch, &off), 3);
	assert_int_equal(off, 10);
}

/*
 *  test_pages_check_zero()
 *	a zeroed page (discarded by another racer) passes only when tolerated
 */
static void test_pages_check_zero(void **state)
{
	t_env_t *e = *state;
	stress_ksm_unmerge_ctx_t *ctx = &e->ctx;
	uint8_t buf[2 * T_PAGE];
	ssize_t off;

	(void)memcpy(buf, ctx->region, sizeof(buf));
	(void)memset(buf + T_PAGE, 0, T_PAGE);	/* page 1 is a "few" page */
	assert_int_equal(stress_ksm_unmerge_copied_pages_check(ctx, 0, buf, sizeof(buf), false, e->scratch, &off), 1);
	assert_int_equal(stress_ksm_unmerge_copied_pages_check(ctx, 0, buf, sizeof(buf), true, e->scratch, &off), -1);
	/* a half zeroed page is corruption even when zero pages are tolerated */
	(void)memcpy(buf + T_PAGE, ctx->region + T_PAGE, T_PAGE / 2);
	assert_int_equal(stress_ksm_unmerge_copied_pages_check(ctx, 0, buf, sizeof(buf), true, e->scratch, &off), 1);
	assert_int_equal(off, T_PAGE / 2);
}

/*
 *  test_racer_table()
 *	the vmsplice racer is built, with a single-token evidence name
 */
static void test_racer_table(void **state)
{
	(void)state;
	t_racer_built(KSM_RACER_IDX_VMSPLICE);
}

/*
 *  main()
 *	run the vmsplice tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pages_check, t_setup_mixed, t_teardown),
		cmocka_unit_test_setup_teardown(test_pages_check_zero, t_setup_mixed, t_teardown),
		cmocka_unit_test(test_racer_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
