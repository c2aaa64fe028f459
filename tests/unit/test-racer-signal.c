/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racer-signal.c: cmocka unit tests of the signal racer: signals
 * only inside the unmerge window.
 */
#include "test-racer.h"

/*
 *  test_signal_window()
 *	signals go out only while the main thread is inside the unmerge, and
 *	at most KSM_SIGNAL_MAX_PER_CYCLE per unmerge
 */
static void test_signal_window(void **state)
{
	stress_ksm_unmerge_signal_t s;
	struct sigaction sa, old;
	uint32_t i;

	(void)state;
	(void)memset(&s, 0, sizeof(s));
	(void)memset(&sa, 0, sizeof(sa));
	sa.sa_handler = stress_ksm_unmerge_signal_handler;
	s.target = pthread_self();
	s.signo = SIGRTMIN + 3;
	assert_int_equal(sigaction(s.signo, &sa, &old), 0);
	(void)pthread_mutex_init(&s.lock, NULL);
	assert_false(stress_ksm_unmerge_signal_send(&s));
	s.window = true;
	stress_ksm_unmerge_signal_caught = 0;
	assert_true(stress_ksm_unmerge_signal_send(&s));
	assert_int_equal(stress_ksm_unmerge_signal_caught, 1);
	for (i = 1; i < KSM_SIGNAL_MAX_PER_CYCLE; i++)
		assert_true(stress_ksm_unmerge_signal_send(&s));
	assert_false(stress_ksm_unmerge_signal_send(&s));
	(void)pthread_mutex_destroy(&s.lock);
	(void)sigaction(s.signo, &old, NULL);
}

/*
 *  test_racer_table()
 *	the table holds this racer with its evidence name
 */
static void test_racer_table(void **state)
{
	(void)state;
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_SIGNAL].name, "signal");
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_SIGNAL].evidence, "unmerges-interrupted");
	assert_ptr_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_SIGNAL].start, stress_ksm_unmerge_signal_start);
	assert_true(stress_ksm_unmerge_method_bit("signal") != 0);
}

/*
 *  main()
 *	run the signal tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signal_window),
		cmocka_unit_test(test_racer_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
