/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racer-uffd-wp.c: cmocka unit tests of the uffd-wp racer: the
 * message check, the write-protect bit check and the watchdog's hang rule.
 */
#include "test-racer.h"

/*
 *  t_msg()
 *	a uffd message
 */
static struct uffd_msg t_msg(const uint8_t event, const uint64_t flags, const uint64_t addr)
{
	struct uffd_msg m;

	(void)memset(&m, 0, sizeof(m));
	m.event = event;
	m.arg.pagefault.flags = flags;
	m.arg.pagefault.address = addr;
	return m;
}

/*
 *  test_uffd_msg_check()
 *	only WP page faults inside the region are accepted
 */
static void test_uffd_msg_check(void **state)
{
	const uintptr_t start = 0x100000;
	const size_t len = T_PAGES * T_PAGE;
	struct uffd_msg m;
	char why[128];

	(void)state;
	m = t_msg(UFFD_EVENT_PAGEFAULT, UFFD_PAGEFAULT_FLAG_WP | UFFD_PAGEFAULT_FLAG_WRITE, start + T_PAGE);
	assert_int_equal(stress_ksm_unmerge_uffd_msg_check(&m, start, len, why, sizeof(why)), 0);
	m = t_msg(UFFD_EVENT_PAGEFAULT, UFFD_PAGEFAULT_FLAG_WRITE, start + T_PAGE);
	assert_int_equal(stress_ksm_unmerge_uffd_msg_check(&m, start, len, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "missing-page"));
	m = t_msg(UFFD_EVENT_PAGEFAULT, UFFD_PAGEFAULT_FLAG_WP, start + len);
	assert_int_equal(stress_ksm_unmerge_uffd_msg_check(&m, start, len, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "outside"));
	m = t_msg(UFFD_EVENT_PAGEFAULT, UFFD_PAGEFAULT_FLAG_WP, start - 1);
	assert_int_equal(stress_ksm_unmerge_uffd_msg_check(&m, start, len, why, sizeof(why)), -1);
	m = t_msg(UFFD_EVENT_REMOVE, 0, start);
	assert_int_equal(stress_ksm_unmerge_uffd_msg_check(&m, start, len, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "unexpected uffd event"));
}

/*
 *  test_uffd_wp_check()
 *	pages KSM + protected at unmerge start must keep PM_UFFD_WP unless
 *	the racer unprotected them in this cycle; a lost bit is counted
 */
static void test_uffd_wp_check(void **state)
{
	uint64_t pm[T_PAGES], after[T_PAGES];
	uint8_t st[T_PAGES], snap[T_PAGES];
	uint32_t touched[T_PAGES];
	uint64_t kept, lost;
	size_t i, first_lost;

	(void)state;
	for (i = 0; i < T_PAGES; i++) {
		pm[i] = PM_PRESENT | (0x500 + i) | ((i & 1) ? 0 : PM_UFFD_WP);
		st[i] = (i < 12) ? KSM_ENTRY_KSM : KSM_ENTRY_ANON;
		touched[i] = 0;
	}
	/* even pages below 12 are KSM and protected: 0,2,4,6,8,10 */
	assert_int_equal(stress_ksm_unmerge_uffd_snap_build(pm, st, T_PAGES, snap), 6);

	/* unshared: new pfns, WP bits kept */
	for (i = 0; i < T_PAGES; i++)
		after[i] = (pm[i] & ~PM_PFN_MASK) | (0x900 + i);
	stress_ksm_unmerge_uffd_wp_check(snap, touched, 7, after, T_PAGES, &kept, &lost, &first_lost);
	assert_int_equal(kept, 6);
	assert_int_equal(lost, 0);
	assert_int_equal(first_lost, T_PAGES);

	/* page 4 lost its bit: found */
	after[4] &= ~PM_UFFD_WP;
	stress_ksm_unmerge_uffd_wp_check(snap, touched, 7, after, T_PAGES, &kept, &lost, &first_lost);
	assert_int_equal(kept, 5);
	assert_int_equal(lost, 1);
	assert_int_equal(first_lost, 4);

	/* ...but not if the racer unprotected it in this cycle */
	touched[4] = 7;
	stress_ksm_unmerge_uffd_wp_check(snap, touched, 7, after, T_PAGES, &kept, &lost, &first_lost);
	assert_int_equal(lost, 0);
	/* an unprotect in an earlier cycle does not excuse it */
	touched[4] = 6;
	stress_ksm_unmerge_uffd_wp_check(snap, touched, 7, after, T_PAGES, &kept, &lost, &first_lost);
	assert_int_equal(lost, 1);
}

/*
 *  test_uffd_not_stuck()
 *	the watchdog's hang needs the kernel's word: an unmerge call that has
 *	ended, or a thread not in the unmerge path, is no hang
 */
static void test_uffd_not_stuck(void **state)
{
	t_env_t *e = *state;
	stress_ksm_unmerge_uffd_t u;
	char stack[2048];

	(void)memset(&u, 0, sizeof(u));
	u.main_tid = (pid_t)shim_gettid();
	e->ctx.unmerge_call = 5;
	e->ctx.in_unmerge_call = false;
	assert_false(stress_ksm_unmerge_uffd_stuck(&e->ctx, &u, 5, stack, sizeof(stack)));
	e->ctx.in_unmerge_call = true;
	assert_false(stress_ksm_unmerge_uffd_stuck(&e->ctx, &u, 4, stack, sizeof(stack)));
	/* this thread reads its own stack (root): not in break_ksm() */
	if (stress_ksm_unmerge_uffd_stuck(&e->ctx, &u, 5, stack, sizeof(stack)))
		assert_non_null(strstr(stack, "not readable"));
	assert_int_equal(e->st.racer[KSM_RACER_IDX_UFFD_WP].failures, 0);
}

/*
 *  test_racer_table()
 *	the uffd-wp racer is built, with a single-token evidence name
 */
static void test_racer_table(void **state)
{
	(void)state;
	t_racer_built(KSM_RACER_IDX_UFFD_WP);
}

/*
 *  main()
 *	run the uffd-wp tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uffd_msg_check),
		cmocka_unit_test(test_uffd_wp_check),
		cmocka_unit_test_setup_teardown(test_uffd_not_stuck, t_setup_mixed, t_teardown),
		cmocka_unit_test(test_racer_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
