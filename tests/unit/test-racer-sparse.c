/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racer-sparse.c: cmocka unit tests of the sparse racer: populated
 * sparse pages judged, the default sparse size, the layout up to 32 TiB, the
 * RLIMIT_AS fit, the walk's hang allowance, and the ksmd metric: parsing
 * of recorded /proc/PID/stat and schedstat lines and its arithmetic.
 */
#include "test-racer.h"

#define TB	(1024ULL * GB)

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
 *  test_sparse_layout()
 *	one page per 64 MiB up to 1024 pages, then the stride grows
 */
static void test_sparse_layout(void **state)
{
	size_t pop;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_sparse_layout(16ULL * GB, T_PAGE, &pop), 64 * MB);
	assert_int_equal(pop, 256);
	assert_int_equal(stress_ksm_unmerge_sparse_layout(64ULL * GB, T_PAGE, &pop), 64 * MB);
	assert_int_equal(pop, 1024);
	assert_int_equal(stress_ksm_unmerge_sparse_layout(1ULL * TB, T_PAGE, &pop), 1ULL * GB);
	assert_int_equal(pop, 1024);
	assert_int_equal(stress_ksm_unmerge_sparse_layout(32ULL * TB, T_PAGE, &pop), 32ULL * GB);
	assert_int_equal(pop, 1024);
	/* not a multiple: the stride is rounded up to a page, never more than 1024 pages */
	assert_int_equal(stress_ksm_unmerge_sparse_layout(100ULL * GB + T_PAGE, T_PAGE, &pop), 100ULL * MB + T_PAGE);
	assert_true(pop <= 1024 && pop >= 1023);
	/* 64 KiB pages: 4 MiB is 64 of them */
	assert_int_equal(stress_ksm_unmerge_sparse_layout(32ULL * TB, 64 * KB, &pop), 512ULL * GB);
	assert_int_equal(pop, 64);
	/* under two strides: two pages, half the range apart */
	assert_int_equal(stress_ksm_unmerge_sparse_layout(64 * MB, T_PAGE, &pop), 32 * MB);
	assert_int_equal(pop, 2);
	assert_int_equal(stress_ksm_unmerge_sparse_layout(2 * T_PAGE, T_PAGE, &pop), T_PAGE);
	assert_int_equal(pop, 2);
}

/*
 *  test_sparse_as_fit()
 *	RLIMIT_AS: half of what the limit leaves above VmSize, page aligned
 */
static void test_sparse_as_fit(void **state)
{
	(void)state;
	assert_int_equal(stress_ksm_unmerge_sparse_as_fit(16ULL * GB, 8ULL * GB, 2ULL * GB, T_PAGE), 3ULL * GB);
	assert_int_equal(stress_ksm_unmerge_sparse_as_fit(1ULL * GB, 8ULL * GB, 2ULL * GB, T_PAGE), 1ULL * GB);
	assert_int_equal(stress_ksm_unmerge_sparse_as_fit(16ULL * GB, 8ULL * GB + 3 * T_PAGE, 0, T_PAGE),
		4ULL * GB + T_PAGE);
	/* nothing left: the two-page minimum (mmap then fails and says so) */
	assert_int_equal(stress_ksm_unmerge_sparse_as_fit(16ULL * GB, 1ULL * GB, 2ULL * GB, T_PAGE), 2 * T_PAGE);
}

/*
 *  test_sparse_allow()
 *	hang allowance: 4 times the predicted walk at the slower ns per page
 */
static void test_sparse_allow(void **state)
{
	const size_t pages = (size_t)(32ULL * TB / T_PAGE);

	(void)state;
	/* 32 TiB at 57 ns per page: 8.2 min predicted, 32.6 min allowed */
	assert_true(fabs(stress_ksm_unmerge_sparse_allow(pages, 57.0, 0.0) - 4.0 * 8589934592.0 * 57.0 / 1.0E9) < 1.0E-3);
	assert_true(fabs(stress_ksm_unmerge_sparse_allow(pages, 57.0, 114.0) -
		2.0 * stress_ksm_unmerge_sparse_allow(pages, 57.0, 0.0)) < 1.0E-3);
	assert_true(fabs(stress_ksm_unmerge_sparse_allow(pages, 114.0, 57.0) -
		stress_ksm_unmerge_sparse_allow(pages, 0.0, 114.0)) < 1.0E-3);
	/* no figure yet: the fallback ns per page, never 0 */
	assert_true(fabs(stress_ksm_unmerge_sparse_allow(1000000, 0.0, 0.0) -
		4.0 * 1.0E6 * KSM_SPARSE_PROBE_FALLBACK_NS / 1.0E9) < 1.0E-9);
}

/*
 *  t_handler()
 *	a handler that does nothing
 */
static void t_handler(int sig)
{
	(void)sig;
}

/*
 *  test_sparse_restarts()
 *	a stop signal handled with SA_RESTART is found; default, ignored and
 *	handlers without it are not
 */
static void test_sparse_restarts(void **state)
{
	struct sigaction sa, old[3];
	static const int sigs[] = { SIGALRM, SIGINT, SIGTERM };
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++)
		assert_int_equal(sigaction(sigs[i], NULL, &old[i]), 0);
	(void)memset(&sa, 0, sizeof(sa));
	(void)sigemptyset(&sa.sa_mask);
	sa.sa_handler = t_handler;
	for (i = 0; i < 3; i++)
		assert_int_equal(sigaction(sigs[i], &sa, NULL), 0);
	assert_int_equal(stress_ksm_unmerge_sparse_restarts(), 0);
	sa.sa_flags = SA_RESTART;
	assert_int_equal(sigaction(SIGTERM, &sa, NULL), 0);
	assert_int_equal(stress_ksm_unmerge_sparse_restarts(), SIGTERM);
	sa.sa_handler = SIG_IGN;
	assert_int_equal(sigaction(SIGTERM, &sa, NULL), 0);
	assert_int_equal(stress_ksm_unmerge_sparse_restarts(), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(sigaction(sigs[i], &old[i], NULL), 0);
}

/*
 *  test_ksmd_stat_parse()
 *	/proc/PID/stat of ksmd recorded on 6.18, a comm with spaces and ')', junk
 */
static void test_ksmd_stat_parse(void **state)
{
	static const char ksmd[] = "36 (ksmd) D 2 0 0 0 -1 2097216 8100 0 0 0 0 255615 0 0 25 5 1 0 26 0 0 "
		"18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
	static const char odd[] = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 120 0 0 0 7 3 0 0 20 0 1 0 9\n";
	char comm[32];
	unsigned long flags;
	uint64_t ticks;
	long ppid;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_ksmd_stat_parse(ksmd, comm, sizeof(comm), &ppid, &flags, &ticks), 0);
	assert_string_equal(comm, "ksmd");
	assert_int_equal(ppid, 2);
	assert_true(flags & 0x00200000UL);	/* PF_KTHREAD */
	assert_int_equal(ticks, 255615);
	assert_int_equal(stress_ksm_unmerge_ksmd_stat_parse(odd, comm, sizeof(comm), &ppid, &flags, &ticks), 0);
	assert_string_equal(comm, "a) b (c)");
	assert_int_equal(ppid, 1);
	assert_false(flags & 0x00200000UL);
	assert_int_equal(ticks, 10);
	/* comm cut to the buffer */
	assert_int_equal(stress_ksm_unmerge_ksmd_stat_parse(ksmd, comm, 3, &ppid, &flags, &ticks), 0);
	assert_string_equal(comm, "ks");
	assert_int_equal(stress_ksm_unmerge_ksmd_stat_parse("36 ksmd D 2", comm, sizeof(comm), &ppid, &flags, &ticks), -1);
	assert_int_equal(stress_ksm_unmerge_ksmd_stat_parse("36 (ksmd) D 2 0 0", comm, sizeof(comm), &ppid, &flags, &ticks), -1);
	assert_int_equal(stress_ksm_unmerge_ksmd_stat_parse("", comm, sizeof(comm), &ppid, &flags, &ticks), -1);
}

/*
 *  test_ksmd_schedstat_parse()
 *	/proc/PID/schedstat of ksmd recorded on 6.18: its first field; junk
 */
static void test_ksmd_schedstat_parse(void **state)
{
	uint64_t ns = 0;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_ksmd_schedstat_parse("2556153972813 1389056332216 5918865\n", &ns), 0);
	assert_int_equal(ns, 2556153972813ULL);
	assert_int_equal(stress_ksm_unmerge_ksmd_schedstat_parse("2556153972813\n", &ns), -1);
	assert_int_equal(stress_ksm_unmerge_ksmd_schedstat_parse("", &ns), -1);
}

/*
 *  test_ksmd_per_gib()
 *	ksmd ns per full scan the range adds, per GiB; no figure when unsure
 */
static void test_ksmd_per_gib(void **state)
{
	stress_ksm_unmerge_ksmd_window_t off = { 200000000, 100000, 0.25, 2 }, on = { 250000000, 500, 0.25, 2 };
	double off_ns, on_ns, ns_gib;
	char why[160];

	(void)state;
	/* 2 us per scan without, 500 us with: 498 us over 16 GiB */
	assert_int_equal(stress_ksm_unmerge_ksmd_per_gib(&off, &on, 16ULL * GB, &off_ns, &on_ns, &ns_gib,
		why, sizeof(why)), 0);
	assert_true(fabs(off_ns - 2000.0) < 1.0E-6);
	assert_true(fabs(on_ns - 500000.0) < 1.0E-6);
	assert_true(fabs(ns_gib - 498000.0 / 16.0) < 1.0E-6);
	/* a kernel that walks the holes: 13 ms per GiB per scan at 32 TiB */
	on.scans = 1;
	on.cpu_ns = 13000000ULL * 32768ULL;
	assert_int_equal(stress_ksm_unmerge_ksmd_per_gib(&off, &on, 32ULL * TB, &off_ns, &on_ns, &ns_gib,
		why, sizeof(why)), 0);
	assert_true(fabs(ns_gib - (13000000.0 * 32768.0 - 2000.0) / 32768.0) < 1.0E-3);
	/* no scan in a window, CPU that did not move, no difference: no figure */
	on.scans = 0;
	assert_int_equal(stress_ksm_unmerge_ksmd_per_gib(&off, &on, 16ULL * GB, &off_ns, &on_ns, &ns_gib,
		why, sizeof(why)), -1);
	assert_non_null(strstr(why, "with the range"));
	assert_true(ns_gib == 0.0);
	on.scans = 10;
	on.cpu_ns = 0;
	assert_int_equal(stress_ksm_unmerge_ksmd_per_gib(&off, &on, 16ULL * GB, &off_ns, &on_ns, &ns_gib,
		why, sizeof(why)), -1);
	assert_non_null(strstr(why, "did not move"));
	on.cpu_ns = 10000;
	assert_int_equal(stress_ksm_unmerge_ksmd_per_gib(&off, &on, 16ULL * GB, &off_ns, &on_ns, &ns_gib,
		why, sizeof(why)), -1);
	assert_non_null(strstr(why, "no more ksmd CPU"));
	off.scans = 0;
	assert_int_equal(stress_ksm_unmerge_ksmd_per_gib(&off, &on, 16ULL * GB, &off_ns, &on_ns, &ns_gib,
		why, sizeof(why)), -1);
	assert_non_null(strstr(why, "without the range"));
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
	/* the memory cap counts its populated pages and their page tables */
	assert_int_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_SPARSE].fixed_bytes, 16 * MB);
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
		cmocka_unit_test(test_sparse_layout),
		cmocka_unit_test(test_sparse_as_fit),
		cmocka_unit_test(test_sparse_allow),
		cmocka_unit_test(test_sparse_restarts),
		cmocka_unit_test(test_ksmd_stat_parse),
		cmocka_unit_test(test_ksmd_schedstat_parse),
		cmocka_unit_test(test_ksmd_per_gib),
		cmocka_unit_test(test_racer_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
