/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-stressor.c: cmocka unit tests of the stressor's own logic:
 * method lists, page patterns and their checks, predictions, latency
 * spread, report line shapes, proc field parsing, counter fallbacks, and
 * KSM knob save/restore/repair against a fake sysfs directory.
 */
#include "../../stress-ksm-unmerge.c"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test-env.h"

/*
 *  t_method()
 *	parse a method list, return the mask
 */
static uint64_t t_method(const char *str)
{
	const char *bad = NULL;

	return stress_ksm_unmerge_method_parse(str, &bad);
}

/*
 *  test_method_lists()
 *	valid lists give their bits, every malformed list gives 0
 */
static void test_method_lists(void **state)
{
	(void)state;
	assert_int_equal(t_method("madvise"), KSM_UNMERGE_METHOD_MADVISE);
	assert_int_equal(t_method("prctl"), KSM_UNMERGE_METHOD_PRCTL);
	assert_true(t_method("all") == KSM_UNMERGE_METHOD_ALL);
	assert_int_equal(t_method("vmsplice,prctl"),
		KSM_UNMERGE_METHOD_PRCTL | STRESS_BIT_ULL(KSM_UNMERGE_RACER_SHIFT + KSM_RACER_IDX_VMSPLICE));
	assert_int_equal(t_method("thp"), STRESS_BIT_ULL(KSM_UNMERGE_RACER_SHIFT + KSM_RACER_IDX_THP));
	assert_int_equal(t_method("uffd-wp"), STRESS_BIT_ULL(KSM_UNMERGE_RACER_SHIFT + KSM_RACER_IDX_UFFD_WP));
	assert_int_equal(t_method(""), 0);
	assert_int_equal(t_method("bogus"), 0);
	assert_int_equal(t_method("madvise,bogus"), 0);
	assert_int_equal(t_method("madvise,,prctl"), 0);
	assert_int_equal(t_method(",madvise"), 0);
	assert_int_equal(t_method("madvise,"), 0);
	assert_int_equal(t_method("MADVISE"), 0);
}

/*
 *  t_env()
 *	context for pattern with n filled pages and its merge prediction
 */
static t_env_t *t_env(const int pattern, const size_t n)
{
	t_env_t *e = t_env_new(pattern, n);

	assert_non_null(e);
	stress_ksm_unmerge_expect(&e->ctx);
	return e;
}

/*
 *  test_page_check()
 *	every pattern's pages check clean; a flipped byte is found at its offset
 */
static void test_page_check(void **state)
{
	int pattern;

	(void)state;
	for (pattern = KSM_UNMERGE_PATTERN_SAME; pattern <= KSM_UNMERGE_PATTERN_UNIQUE; pattern++) {
		t_env_t *e = t_env(pattern, 32);
		size_t i;

		for (i = 0; i < 32; i++) {
			uint8_t *page = e->ctx.region + i * T_PAGE;

			assert_int_equal(stress_ksm_unmerge_page_check(&e->ctx, i, page), -1);
			page[1234] ^= 0x40;
			assert_int_equal(stress_ksm_unmerge_page_check(&e->ctx, i, page), 1234);
			page[1234] ^= 0x40;
			page[T_PAGE - 1] ^= 0x01;
			assert_int_equal(stress_ksm_unmerge_page_check(&e->ctx, i, page), T_PAGE - 1);
			page[T_PAGE - 1] ^= 0x01;
		}
		t_env_free(e);
	}
}

/*
 *  test_patterns_distinct()
 *	same: all equal; few: 8 distinct; unique: all distinct; zero: zeros
 */
static void test_patterns_distinct(void **state)
{
	t_env_t *e;
	size_t i, j;
	static const uint8_t zero[T_PAGE];

	(void)state;
	e = t_env(KSM_UNMERGE_PATTERN_SAME, 16);
	for (i = 1; i < 16; i++)
		assert_memory_equal(e->ctx.region, e->ctx.region + i * T_PAGE, T_PAGE);
	t_env_free(e);

	e = t_env(KSM_UNMERGE_PATTERN_FEW, 32);
	for (i = 0; i < 32; i++)
		for (j = 0; j < 32; j++)
			assert_int_equal(!memcmp(e->ctx.region + i * T_PAGE, e->ctx.region + j * T_PAGE, T_PAGE),
				(i % KSM_UNMERGE_FEW_TEMPLATES) == (j % KSM_UNMERGE_FEW_TEMPLATES));
	t_env_free(e);

	e = t_env(KSM_UNMERGE_PATTERN_UNIQUE, 32);
	for (i = 0; i < 32; i++) {
		assert_memory_not_equal(e->ctx.region + i * T_PAGE, zero, T_PAGE);
		for (j = i + 1; j < 32; j++)
			assert_memory_not_equal(e->ctx.region + i * T_PAGE, e->ctx.region + j * T_PAGE, T_PAGE);
	}
	t_env_free(e);

	e = t_env(KSM_UNMERGE_PATTERN_ZERO, 8);
	for (i = 0; i < 8; i++)
		assert_memory_equal(e->ctx.region + i * T_PAGE, zero, T_PAGE);
	t_env_free(e);
}

/*
 *  test_expect()
 *	the merge prediction of each pattern
 */
static void test_expect(void **state)
{
	static const struct {
		int pattern;
		uint64_t merged, zero;
	} cases[] = {
		{ KSM_UNMERGE_PATTERN_SAME,   64, 0 },
		{ KSM_UNMERGE_PATTERN_FEW,    64, 0 },
		{ KSM_UNMERGE_PATTERN_ZERO,   0, 64 },
		{ KSM_UNMERGE_PATTERN_MIXED,  32, 16 },
		{ KSM_UNMERGE_PATTERN_UNIQUE, 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(cases); i++) {
		t_env_t *e = t_env(cases[i].pattern, 64);

		assert_int_equal(e->ctx.expect_merged, cases[i].merged);
		assert_int_equal(e->ctx.expect_zero, cases[i].zero);
		t_env_free(e);
	}
	assert_true(stress_ksm_unmerge_pattern_zero(KSM_UNMERGE_PATTERN_ZERO));
	assert_true(stress_ksm_unmerge_pattern_zero(KSM_UNMERGE_PATTERN_MIXED));
	assert_false(stress_ksm_unmerge_pattern_zero(KSM_UNMERGE_PATTERN_SAME));
}

/*
 *  test_data_verify()
 *	the unmerge data check passes on intact data and fails on one bad page
 */
static void test_data_verify(void **state)
{
	t_env_t *e = t_env(KSM_UNMERGE_PATTERN_MIXED, 64);

	(void)state;
	e->ctx.verify = true;
	assert_int_equal(stress_ksm_unmerge_verify_data(&e->ctx), 0);
	e->ctx.region[37 * T_PAGE + 100] ^= 1;
	assert_int_equal(stress_ksm_unmerge_verify_data(&e->ctx), -1);
	t_env_free(e);
}

/*
 *  test_spread()
 *	nearest-rank percentiles, mean and population stdev
 */
static void test_spread(void **state)
{
	double v[100];
	stress_ksm_unmerge_spread_t s;
	size_t i;

	(void)state;
	for (i = 0; i < 100; i++)
		v[i] = (double)(100 - i);	/* unsorted on purpose */
	stress_ksm_unmerge_spread(v, 100, &s);
	assert_int_equal(s.n, 100);
	assert_true(s.p50 == 50.0);
	assert_true(s.p95 == 95.0);
	assert_true(s.p99 == 99.0);
	assert_true(fabs(s.mean - 50.5) < 1e-9);
	assert_true(fabs(s.stdev - 28.8660700477) < 1e-6);
	v[0] = 7.0;
	stress_ksm_unmerge_spread(v, 1, &s);
	assert_true(s.p50 == 7.0 && s.p99 == 7.0 && s.stdev == 0.0);
	stress_ksm_unmerge_spread(v, 0, &s);
	assert_int_equal(s.n, 0);
}

/*
 *  test_fields()
 *	field counting used to keep report lines out of LKP's row shapes
 */
static void test_fields(void **state)
{
	(void)state;
	assert_int_equal(stress_ksm_unmerge_fields(""), 0);
	assert_int_equal(stress_ksm_unmerge_fields("a"), 1);
	assert_int_equal(stress_ksm_unmerge_fields("  a  b\tc\n"), 3);
	assert_int_equal(stress_ksm_unmerge_fields("racer vmsplice reached: ops=1 ksm-pages-spliced=2"), 5);
}

/*
 *  test_proc_field()
 *	"name N" lookup in proc text: exact names only
 */
static void test_proc_field(void **state)
{
	const char *buf = "ksm_rmap_items 5\nksm_zero_pages 7\nksm_merging_pages 9\n"
		"ksm_process_profit 100\nksm_merge_any: no\n";

	(void)state;
	assert_int_equal(stress_ksm_unmerge_field(buf, "ksm_zero_pages"), 7);
	assert_int_equal(stress_ksm_unmerge_field(buf, "ksm_merging_pages"), 9);
	assert_int_equal(stress_ksm_unmerge_field(buf, "ksm_rmap_items"), 5);
	assert_int_equal(stress_ksm_unmerge_field(buf, "ksm_merging"), -1);
	assert_int_equal(stress_ksm_unmerge_field(buf, "zero_pages"), -1);
	assert_int_equal(stress_ksm_unmerge_field("nr_free 1\ncow_ksm 42\n", "cow_ksm"), 42);
	assert_int_equal(stress_ksm_unmerge_field("xcow_ksm 1\n", "cow_ksm"), -1);
}

/*
 *  test_counter_source()
 *	fallbacks for kernels without ksm_stat or its ksm_zero_pages line
 */
static void test_counter_source(void **state)
{
	(void)state;
	/* stat, stat has zero, merging_pages, pfns, need zero */
	assert_int_equal(stress_ksm_unmerge_counter_source(true, true, true, true, true), KSM_COUNTERS_KSM_STAT);
	assert_int_equal(stress_ksm_unmerge_counter_source(true, false, true, true, false), KSM_COUNTERS_KSM_STAT);
	assert_int_equal(stress_ksm_unmerge_counter_source(true, false, true, true, true), KSM_COUNTERS_PAGEMAP);
	assert_int_equal(stress_ksm_unmerge_counter_source(false, false, true, true, false), KSM_COUNTERS_MERGING_PAGES);
	assert_int_equal(stress_ksm_unmerge_counter_source(false, false, true, true, true), KSM_COUNTERS_PAGEMAP);
	assert_int_equal(stress_ksm_unmerge_counter_source(false, false, false, true, false), KSM_COUNTERS_PAGEMAP);
	assert_int_equal(stress_ksm_unmerge_counter_source(false, false, true, false, true), KSM_COUNTERS_MERGING_PAGES);
	assert_int_equal(stress_ksm_unmerge_counter_source(false, false, false, false, false), KSM_COUNTERS_NONE);
}

static char t_dir[PATH_MAX];
static char t_state[PATH_MAX + 16];

/*
 *  t_write()
 *	write a fake knob file
 */
static void t_write(const char *knob, const char *value)
{
	char path[PATH_MAX + 64];
	FILE *fp;

	(void)snprintf(path, sizeof(path), "%s/%s", t_dir, knob);
	fp = fopen(path, "w");
	assert_non_null(fp);
	(void)fputs(value, fp);
	(void)fclose(fp);
}

/*
 *  t_read()
 *	read a fake knob back
 */
static const char *t_read(const char *knob)
{
	static char buf[64];

	assert_int_equal(stress_ksm_unmerge_knob_read(knob, buf, sizeof(buf)), 0);
	return buf;
}

/*
 *  t_knobs_setup()
 *	a fake KSM sysfs directory and state file
 */
static int t_knobs_setup(void **state)
{
	(void)state;
	(void)snprintf(t_dir, sizeof(t_dir), "/tmp/test-stressor.XXXXXX");
	if (!mkdtemp(t_dir))
		return -1;
	(void)snprintf(t_state, sizeof(t_state), "%s/state", t_dir);
	stress_ksm_unmerge_sysfs = t_dir;
	stress_ksm_unmerge_state_file = t_state;
	t_write("run", "0\n");
	t_write("pages_to_scan", "100\n");
	t_write("sleep_millisecs", "20\n");
	t_write("use_zero_pages", "0\n");
	t_write("max_page_sharing", "256\n");
	t_write("merge_across_nodes", "1\n");
	/* smart_scan missing: an older kernel */
	return 0;
}

/*
 *  t_knobs_teardown()
 *	remove the fake directory
 */
static int t_knobs_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	(void)snprintf(cmd, sizeof(cmd), "rm -rf %s", t_dir);
	return system(cmd) == 0 ? 0 : -1;
}

/*
 *  test_knobs_save_set_restore()
 *	set changes the knobs the stressor needs; restore brings back the saved
 */
static void test_knobs_save_set_restore(void **state)
{
	stress_ksm_unmerge_knobs_t saved;
	char err[128] = "";

	(void)state;
	stress_ksm_unmerge_knobs_save(&saved);
	assert_string_equal(saved.value[0], "0");
	assert_string_equal(saved.value[6], "");	/* smart_scan absent */
	assert_int_equal(stress_ksm_unmerge_knobs_set(KSM_UNMERGE_PATTERN_ZERO, err, sizeof(err)), 0);
	assert_string_equal(t_read("run"), "1");
	assert_string_equal(t_read("use_zero_pages"), "1");
	assert_string_equal(t_read("sleep_millisecs"), "0");
	assert_string_equal(t_read("pages_to_scan"), "10000");
	assert_int_equal(stress_ksm_unmerge_knobs_restore(&saved), 0);
	assert_string_equal(t_read("run"), "0");
	assert_string_equal(t_read("use_zero_pages"), "0");
	assert_string_equal(t_read("sleep_millisecs"), "20");
	assert_string_equal(t_read("pages_to_scan"), "100");
	assert_int_equal(access(t_dir, F_OK), 0);
}

/*
 *  test_state_repair()
 *	a state file left by a killed run is applied, then removed; a corrupt
 *	one is removed without touching the knobs
 */
static void test_state_repair(void **state)
{
	stress_ksm_unmerge_knobs_t saved, back;
	char err[128] = "";
	pid_t pid;

	(void)state;
	stress_ksm_unmerge_knobs_save(&saved);
	assert_int_equal(stress_ksm_unmerge_state_write(&saved), 0);
	assert_int_equal(stress_ksm_unmerge_state_read(t_state, &back, &pid), 0);
	assert_int_equal(pid, getpid());
	assert_memory_equal(&saved, &back, sizeof(saved));

	/* the "killed" run changed the knobs */
	assert_int_equal(stress_ksm_unmerge_knobs_set(KSM_UNMERGE_PATTERN_SAME, err, sizeof(err)), 0);
	assert_string_equal(t_read("run"), "1");
	stress_ksm_unmerge_state_repair();
	assert_string_equal(t_read("run"), "0");
	assert_string_equal(t_read("pages_to_scan"), "100");
	assert_int_not_equal(access(t_state, F_OK), 0);

	/* corrupt: ignored and removed, knobs untouched */
	t_write("state", "garbage\n");
	t_write("run", "1\n");
	stress_ksm_unmerge_state_repair();
	assert_string_equal(t_read("run"), "1");
	assert_int_not_equal(access(t_state, F_OK), 0);
	t_write("run", "0\n");
}

/*
 *  t_scan_end()
 *	thread: ksmd ends a full scan 50 ms from now
 */
static void *t_scan_end(void *arg)
{
	(void)arg;
	(void)shim_nanosleep_uint64(50000000);
	t_write("full_scans", "8\n");
	return NULL;
}

/*
 *  test_ksmd_drain()
 *	the end-of-run wait for ksmd: none when ksmd stays on or no rmap_item
 *	is left; else until full_scans moves, within its bound
 */
static void test_ksmd_drain(void **state)
{
	stress_ksm_unmerge_knobs_t saved;
	pthread_t thread;
	double t0;

	(void)state;
	t_write("full_scans", "7\n");
	t_write("pages_shared", "3\n");
	t_write("pages_sharing", "500\n");
	t_write("pages_unshared", "0\n");
	t_write("pages_volatile", "0\n");
	stress_ksm_unmerge_knobs_save(&saved);
	assert_string_equal(stress_ksm_unmerge_knob_saved(&saved, "run"), "0");
	assert_string_equal(stress_ksm_unmerge_knob_saved(&saved, "smart_scan"), "");
	assert_int_equal(stress_ksm_unmerge_rmap_items(), 503);

	/* ksmd was on before the run: it stays on and frees them itself */
	t_write("run", "1\n");
	stress_ksm_unmerge_knobs_save(&saved);
	t0 = stress_time_now();
	stress_ksm_unmerge_ksmd_drain(&saved);
	assert_true(stress_time_now() - t0 < 0.5);

	/* nothing left to free */
	t_write("run", "0\n");
	stress_ksm_unmerge_knobs_save(&saved);
	t_write("pages_shared", "0\n");
	t_write("pages_sharing", "0\n");
	t0 = stress_time_now();
	stress_ksm_unmerge_ksmd_drain(&saved);
	assert_true(stress_time_now() - t0 < 0.5);

	/* rmap_items left: wait for the end of a full scan */
	t_write("pages_unshared", "9\n");
	assert_int_equal(pthread_create(&thread, NULL, t_scan_end, NULL), 0);
	t0 = stress_time_now();
	stress_ksm_unmerge_ksmd_drain(&saved);
	assert_true(stress_time_now() - t0 >= 0.04);
	assert_true(stress_time_now() - t0 < KSM_UNMERGE_DRAIN_SECS);
	assert_int_equal(pthread_join(thread, NULL), 0);

	/* a scan that never ends: the wait is bounded */
	t0 = stress_time_now();
	stress_ksm_unmerge_ksmd_drain(&saved);
	assert_true(stress_time_now() - t0 >= KSM_UNMERGE_DRAIN_SECS - 0.01);
	assert_true(stress_time_now() - t0 < KSM_UNMERGE_DRAIN_SECS + 1.0);
}

/*
 *  t_u64_cmp()
 *	qsort reference comparator
 */
static int t_u64_cmp(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 *  test_pfn_sort()
 *	the in-place radix sort of pfns agrees with qsort, duplicates and all
 */
static void test_pfn_sort(void **state)
{
	uint64_t a[3000], b[3000];
	unsigned int seed = 42;
	size_t round;

	(void)state;
	for (round = 0; round < 200; round++) {
		const size_t n = 1 + (size_t)(rand_r(&seed) % 3000);
		const unsigned int bits = 1 + (unsigned int)(rand_r(&seed) % 64);
		const uint64_t mask = (bits == 64) ? ~0ULL : ((1ULL << bits) - 1);
		uint64_t max = 0;
		size_t i;

		for (i = 0; i < n; i++) {
			a[i] = (((uint64_t)rand_r(&seed) << 42) ^ ((uint64_t)rand_r(&seed) << 21) ^
				(uint64_t)rand_r(&seed)) & mask;
			if (round % 50 == 7)
				a[i] = 0x12345;	/* every page on one KSM page */
			if (i && (rand_r(&seed) & 3) == 0)
				a[i] = a[i - 1];	/* shared pfns */
			if (a[i] > max)
				max = a[i];
			b[i] = a[i];
		}
		stress_ksm_unmerge_pfn_sort(a, n, max);
		qsort(b, n, sizeof(*b), t_u64_cmp);
		assert_memory_equal(a, b, n * sizeof(*a));
	}
}

/*
 *  t_map_shared_page()
 *	map page 0 of fd at addr (MAP_FIXED | MAP_SHARED) and write it
 */
static void t_map_shared_page(uint8_t *addr, const int fd)
{
	void *p = mmap(addr, T_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);

	assert_true(p == (void *)addr);
	addr[0] = 0x5a;
}

/*
 *  test_stop_cuts_check()
 *	at the end of the run the data check gives up at once: not a failure,
 *	the step is named and the cycle is marked stopped
 */
static void test_stop_cuts_check(void **state)
{
	t_env_t *e = t_env(KSM_UNMERGE_PATTERN_SAME, 64);

	(void)state;
	e->ctx.verify = true;
	e->ctx.region[37 * T_PAGE + 100] ^= 1;
	e->args.bogo.max_ops = 0;		/* stopped */
	assert_int_equal(stress_ksm_unmerge_verify_data(&e->ctx), 0);
	assert_true(e->ctx.stopped);
	assert_string_equal(e->st.stop_step, "data check");
	e->args.bogo.max_ops = NEVER_END_OPS;
	e->ctx.stopped = false;
	assert_int_equal(stress_ksm_unmerge_verify_data(&e->ctx), -1);
	t_env_free(e);
}

/*
 *  test_cap()
 *	the region cap leaves room for each instance's page-scan scratch, each racer's
 *	per-page state and fixed memory, and the mrelease victims' copies
 */
static void test_cap(void **state)
{
	stress_args_t args = { .name = "ksm-unmerge", .page_size = T_PAGE, .instances = 2 };
	const uint64_t limit = 1ULL << 30;
	const uint64_t mrelease = STRESS_BIT_ULL(KSM_UNMERGE_RACER_SHIFT + KSM_RACER_IDX_MRELEASE);
	uint64_t plain, racers, copies;

	(void)state;
	plain = stress_ksm_unmerge_cap(limit, &args, KSM_UNMERGE_METHOD_MADVISE);
	assert_int_equal(plain, (limit - 2 * KSM_UNMERGE_SCAN_BYTES) / T_PAGE * T_PAGE);
	copies = stress_ksm_unmerge_cap(limit, &args, KSM_UNMERGE_METHOD_MADVISE | mrelease);
	assert_true(copies <= plain / 2 && copies + 4 * MB + T_PAGE >= plain / 2);	/* less its 4 MB */
	racers = stress_ksm_unmerge_cap(limit, &args, KSM_UNMERGE_METHOD_ALL);
	assert_true(2 * racers + 2 * (KSM_UNMERGE_RACERS * 4 * MB) <= limit);
	assert_true(racers < copies);
	assert_int_equal(racers % T_PAGE, 0);
	assert_int_equal(stress_ksm_unmerge_cap(2 * KSM_UNMERGE_RACERS * 4 * MB, &args, KSM_UNMERGE_METHOD_ALL), 0);
}

/*
 *  t_read_fault_pfn()
 *	pfn of a read-faulted page of fresh anonymous memory (the zero page
 *	here, a private page under pvm_no_zero_page=1), 0 if hidden
 */
static uint64_t t_read_fault_pfn(const int pagemap_fd)
{
	volatile uint8_t *p = mmap(NULL, T_PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t e = 0;

	assert_true(p != MAP_FAILED);
	(void)p[0];
	if (stress_ksm_unmerge_pagemap_read(pagemap_fd, (void *)p, 1, T_PAGE, &e) < 0)
		e = 0;
	(void)munmap((void *)p, T_PAGE);
	return ((e & PM_PRESENT) && !(e & PM_EXCLUSIVE)) ? (e & PM_PFN_MASK) : 0;
}

/*
 *  test_verify_pfns()
 *	the after-unmerge checks on the real pagemap: distinct private pages
 *	pass; a KSM zero page fails (6.4+); two pages on one shmem page are
 *	suspects, but a write does not move them (not KSM): a disagreement,
 *	not a failure; a suspect with two agreeing signals fails; needs root
 */
static void test_verify_pfns(void **state)
{
	stress_args_t args = { .name = "ksm-unmerge", .page_size = T_PAGE,
		.bogo.max_ops = NEVER_END_OPS };
	stress_ksm_unmerge_iface_t ifc = { .tested = true, .pfns = true, .kpageflags = true,
		.kpf_ksm = true, .excl = true, .zero_unshare = true };
	stress_ksm_unmerge_instance_t st;
	stress_ksm_unmerge_ctx_t ctx;
	stress_ksm_unmerge_suspect_t sus;
	size_t first, second;
	uint8_t *r;
	int memfd;

	(void)state;
	(void)memset(&st, 0, sizeof(st));
	(void)memset(&ctx, 0, sizeof(ctx));
	ctx.args = &args;
	ctx.st = &st;
	ctx.page_size = T_PAGE;
	ctx.npages = 4;
	ctx.region_size = ctx.npages * T_PAGE;
	ctx.verify = true;
	ctx.pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	ctx.kpageflags_fd = open("/proc/kpageflags", O_RDONLY);
	if (ctx.pagemap_fd < 0 || ctx.kpageflags_fd < 0)
		skip();		/* needs root and CONFIG_PROC_PAGE_MONITOR */
	ctx.zero_pfn = ifc.zero_pfn = t_read_fault_pfn(ctx.pagemap_fd);
	if (!ctx.zero_pfn)
		skip();		/* pfns hidden (not root), or no shared zero page (pvm_no_zero_page=1) */
	stress_ksm_unmerge_iface_cur = &ifc;
	ctx.iface = &ifc;
	ctx.have_pfns = true;
	ctx.pagemap = calloc(KSM_UNMERGE_PM_CHUNK, sizeof(uint64_t));
	ctx.pfns = stress_ksm_unmerge_scan_alloc(&ctx);
	assert_non_null(ctx.pagemap);
	assert_non_null(ctx.pfns);
	r = mmap(NULL, ctx.region_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(r != MAP_FAILED);
	ctx.region = r;
	(void)memset(r, 1, ctx.region_size);
	assert_int_equal(stress_ksm_unmerge_verify_pfns(&ctx, 0, 0), 0);

	/* page 3 on the zero page: a KSM zero page when use_zero_pages is on */
	assert_int_equal(madvise(r + 3 * T_PAGE, T_PAGE, MADV_DONTNEED), 0);
	assert_int_equal(*(volatile uint8_t *)(r + 3 * T_PAGE), 0);
	ctx.ksm_zero = true;
	assert_int_equal(stress_ksm_unmerge_verify_pfns(&ctx, 0, 0), -1);
	ifc.zero_unshare = false;	/* before 6.4 they stay mapped by design */
	assert_int_equal(stress_ksm_unmerge_verify_pfns(&ctx, 0, 0), 0);
	ifc.zero_unshare = true;
	ctx.ksm_zero = false;
	assert_int_equal(stress_ksm_unmerge_verify_pfns(&ctx, 0, 0), 0);

	/* pages 1 and 2 map the same shmem page: shared, but a write keeps it */
	memfd = memfd_create("test-verify-pfns", MFD_CLOEXEC);
	assert_true(memfd >= 0);
	assert_int_equal(ftruncate(memfd, T_PAGE), 0);
	t_map_shared_page(r + 1 * T_PAGE, memfd);
	t_map_shared_page(r + 2 * T_PAGE, memfd);
	assert_int_equal(stress_ksm_unmerge_verify_pfns(&ctx, 0, 0), 0);
	stress_ksm_unmerge_pfn_pages(&ctx, stress_ksm_unmerge_pm_entry(&ctx, 1) & PM_PFN_MASK,
		&first, &second);
	assert_int_equal(first, 1);
	assert_int_equal(second, 2);

	/* two agreeing signals (KPF_KSM and sharing) fail; one alone does not */
	sus = (stress_ksm_unmerge_suspect_t){ stress_ksm_unmerge_pm_entry(&ctx, 1) & PM_PFN_MASK, 2, true, true };
	assert_int_equal(stress_ksm_unmerge_suspects_judge(&ctx, &sus, 1, 2, 2, 2, 2), -1);
	sus.kpf = false;
	assert_int_equal(stress_ksm_unmerge_suspects_judge(&ctx, &sus, 1, 2, 0, 2, 2), 0);
	sus = (stress_ksm_unmerge_suspect_t){ stress_ksm_unmerge_pm_entry(&ctx, 0) & PM_PFN_MASK, 1, true, false };
	assert_int_equal(stress_ksm_unmerge_suspects_judge(&ctx, &sus, 1, 1, 1, 1, 1), 0);
	assert_int_equal(r[0], 1);	/* the write probe left the data alone */

	stress_ksm_unmerge_iface_cur = NULL;
	(void)close(memfd);
	(void)munmap(r, ctx.region_size);
	(void)close(ctx.pagemap_fd);
	(void)close(ctx.kpageflags_fd);
	free(ctx.pagemap);
	free(ctx.pfns);
}

/*
 *  t_verify_merge()
 *	verify_merge() on a merge-wait scan that found ksm and zero pages
 */
static int t_verify_merge(t_env_t *e, const uint64_t ksm, const uint64_t zero, const int waited)
{
	uint64_t k, z;

	e->ctx.cycle = 7;
	e->ctx.last_scan.cycle = 7;
	e->ctx.last_scan.ksm = ksm;
	e->ctx.last_scan.zero = zero;
	e->ctx.last_scan.present = e->ctx.npages - zero;
	return stress_ksm_unmerge_verify_merge(&e->ctx, waited, &k, &z);
}

/*
 *  test_verify_merge_bounds()
 *	the merge check: exactly the prediction passes; more than the pattern
 *	can merge fails; zero-kind pages merged as ordinary KSM pages (their
 *	swap for the zero page failed) pass; a short merge reported complete
 *	fails
 */
static void test_verify_merge_bounds(void **state)
{
	t_env_t *e = t_env(KSM_UNMERGE_PATTERN_MIXED, 64);
	uint64_t km, kz;

	(void)state;
	e->ctx.ksm_zero = true;
	stress_ksm_unmerge_expect(&e->ctx);
	km = e->ctx.expect_merged;
	kz = e->ctx.expect_zero;
	assert_true(km > 2 && kz > 2);
	assert_int_equal(t_verify_merge(e, km, kz, 1), 0);
	assert_int_equal(t_verify_merge(e, km + 1, kz, 1), -1);
	assert_int_equal(t_verify_merge(e, km, kz + 1, 1), -1);
	assert_int_equal(t_verify_merge(e, km + 2, kz - 2, 1), 0);
	assert_int_equal(t_verify_merge(e, km + 3, kz - 2, 1), -1);
	assert_int_equal(t_verify_merge(e, km - 1, kz, 1), -1);
	assert_int_equal(t_verify_merge(e, km, kz - 1, 1), -1);
	assert_int_equal(t_verify_merge(e, km, kz - 1, 0), 0);	/* merge wait timed out */
	t_env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_method_lists),
		cmocka_unit_test(test_page_check),
		cmocka_unit_test(test_patterns_distinct),
		cmocka_unit_test(test_expect),
		cmocka_unit_test(test_data_verify),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_proc_field),
		cmocka_unit_test(test_counter_source),
		cmocka_unit_test(test_pfn_sort),
		cmocka_unit_test(test_verify_pfns),
		cmocka_unit_test(test_stop_cuts_check),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_verify_merge_bounds),
		cmocka_unit_test_setup_teardown(test_knobs_save_set_restore, t_knobs_setup, t_knobs_teardown),
		cmocka_unit_test_setup_teardown(test_state_repair, t_knobs_setup, t_knobs_teardown),
		cmocka_unit_test_setup_teardown(test_ksmd_drain, t_knobs_setup, t_knobs_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
