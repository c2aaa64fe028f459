/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-check-counters.c: cmocka unit tests of the counter checks of
 * stress-ksm-unmerge-check-counters.h (upstream KSM fixes of 2024-2026):
 * each check is fed the value the broken kernel gave and must fail, and
 * the good value and must pass.
 */
#include "test-racer.h"

/*
 *  test_counter_judge()
 *	a counter read as -1 or wrapped to 2^64-1 is below 0; missing is not 0
 */
static void test_counter_judge(void **state)
{
	const char *stat = "ksm_rmap_items 12\nksm_zero_pages 7\nksm_merging_pages 3\n";
	int64_t v;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_counter_judge(stat, "ksm_zero_pages", &v), KSM_COUNTER_OK);
	assert_int_equal(v, 7);
	assert_int_equal(stress_ksm_unmerge_counter_judge(stat, "ksm_merging_pages", &v), KSM_COUNTER_OK);
	assert_int_equal(v, 3);
	assert_int_equal(stress_ksm_unmerge_counter_judge("ksm_rmap_items 1\n", "ksm_zero_pages", &v),
		KSM_COUNTER_MISSING);
	/* the bug of c2dc78b86e08: -1 printed signed, or wrapped printed unsigned */
	assert_int_equal(stress_ksm_unmerge_counter_judge("ksm_zero_pages -1\n", "ksm_zero_pages", &v),
		KSM_COUNTER_NEGATIVE);
	assert_int_equal(v, -1);
	assert_int_equal(stress_ksm_unmerge_counter_judge("ksm_zero_pages 18446744073709551615\n",
		"ksm_zero_pages", &v), KSM_COUNTER_WRAPPED);
	assert_int_equal(v, -1);
	assert_int_equal(stress_ksm_unmerge_counter_judge("9223372036854775808\n", NULL, &v),
		KSM_COUNTER_WRAPPED);
	assert_int_equal(stress_ksm_unmerge_counter_judge("99999999999999999999999\n", NULL, &v),
		KSM_COUNTER_WRAPPED);
	assert_int_equal(stress_ksm_unmerge_counter_judge("0\n", NULL, &v), KSM_COUNTER_OK);
	assert_int_equal(stress_ksm_unmerge_counter_judge("-\n", NULL, &v), KSM_COUNTER_GARBLED);
	assert_int_equal(stress_ksm_unmerge_counter_judge("x\n", NULL, &v), KSM_COUNTER_GARBLED);
	/* a longer field with the same prefix is not the field */
	assert_int_equal(stress_ksm_unmerge_counter_judge("ksm_zero_pages_x -1\nksm_zero_pages 2\n",
		"ksm_zero_pages", &v), KSM_COUNTER_OK);
	assert_int_equal(v, 2);
}

/*
 *  t_file()
 *	fd of a temporary file holding text (unlinked)
 */
static int t_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	int fd;

	(void)snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	return fd;
}

/*
 *  t_zc_run()
 *	zc_check with the given sysfs and ksm_stat texts (NULL: absent)
 */
static int t_zc_run(t_env_t *e, const char *global, const char *stat)
{
	char dir[] = "/tmp/test-racers-c.XXXXXX";
	char path[PATH_MAX];
	const char *saved = stress_ksm_unmerge_sysfs;
	int fd, ret;

	assert_non_null(mkdtemp(dir));
	if (global)
		(void)close(t_file(dir, "ksm_zero_pages", global));
	e->ctx.ksm_stat_fd = stat ? t_file(dir, "ksm_stat", stat) : -1;
	stress_ksm_unmerge_sysfs = dir;
	stress_ksm_unmerge_zc_close();
	stress_ksm_unmerge_zc_global_tried = false;
	ret = stress_ksm_unmerge_zc_check(&e->ctx, "in the test");
	stress_ksm_unmerge_zc_close();
	stress_ksm_unmerge_sysfs = saved;
	fd = e->ctx.ksm_stat_fd;
	if (fd >= 0)
		(void)close(fd);
	e->ctx.ksm_stat_fd = -1;
	(void)snprintf(path, sizeof(path), "%s/ksm_zero_pages", dir);
	(void)unlink(path);
	(void)snprintf(path, sizeof(path), "%s/ksm_stat", dir);
	(void)unlink(path);
	(void)rmdir(dir);
	return ret;
}

/*
 *  test_zc_check()
 *	either counter below 0 fails the cycle; good and absent counters pass
 */
static void test_zc_check(void **state)
{
	t_env_t *e = t_env_new(KSM_UNMERGE_PATTERN_ZERO, T_PAGES);

	(void)state;
	assert_non_null(e);
	assert_int_equal(t_zc_run(e, "0\n", "ksm_rmap_items 0\nksm_zero_pages 0\n"), 0);
	assert_int_equal(t_zc_run(e, "4096\n", "ksm_zero_pages 4096\n"), 0);
	assert_int_equal(t_zc_run(e, NULL, NULL), 0);
	assert_int_equal(t_zc_run(e, NULL, "ksm_rmap_items 3\n"), 0);
	assert_int_equal(t_zc_run(e, "-1\n", "ksm_zero_pages 0\n"), -1);
	assert_int_equal(t_zc_run(e, "0\n", "ksm_zero_pages -1\n"), -1);
	assert_int_equal(t_zc_run(e, "18446744073709551615\n", NULL), -1);
	assert_int_equal(t_zc_run(e, NULL, "ksm_zero_pages 18446744073709551614\n"), -1);
	t_env_free(e);
}

/*
 *  t_forkc()
 *	counters around a fork: parent's, child's, read delay in ns; ksmd
 *	scanned no page between the fork and the read
 */
static void t_forkc(stress_ksm_unmerge_forkc_t *fc, const int64_t pm, const int64_t pr,
	const int64_t cm, const int64_t cr, const int64_t cz, const uint64_t delay_ns)
{
	(void)memset((void *)fc, 0, sizeof(*fc));
	fc->parent[0] = pm;
	fc->parent[1] = pr;
	fc->parent[2] = 0;
	fc->child[0] = cm;
	fc->child[1] = cr;
	fc->child[2] = cz;
	fc->child_verdict[0] = fc->child_verdict[1] = KSM_COUNTER_OK;
	fc->child_verdict[2] = cz < 0 ? KSM_COUNTER_NEGATIVE : KSM_COUNTER_OK;
	fc->fork_ns = 1000000000ULL;
	fc->read_ns = fc->fork_ns + delay_ns;
	fc->child_read = true;
	fc->scanned_before = 1000;
	fc->scanned_after = 1000;	/* ksmd scanned nothing meanwhile */
}

/*
 *  test_forkc_verdict()
 *	a child holding more rmap items than ksmd scanned pages since the
 *	fork fails; zero counts, or counts ksmd's own scan explains, do not
 */
static void test_forkc_verdict(void **state)
{
	stress_ksm_unmerge_forkc_t fc;
	char why[192];
	t_env_t *e = t_env_new(KSM_UNMERGE_PATTERN_SAME, T_PAGES);

	(void)state;
	assert_non_null(e);
	/* fixed kernel: 0 and 0, zero pages inherited */
	t_forkc(&fc, 4096, 4100, 0, 0, 32, 50000);
	assert_int_equal(stress_ksm_unmerge_forkc_verdict(&fc, why, sizeof(why)), 0);
	assert_int_equal(stress_ksm_unmerge_forkc_judge(&e->ctx, &fc), 0);
	/* the bug of 4d6fc29f3634: the parent's counts, 50 us after fork */
	t_forkc(&fc, 4096, 4100, 4096, 4100, 0, 50000);
	assert_int_equal(stress_ksm_unmerge_forkc_verdict(&fc, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "ksm_merging_pages 4096"));
	assert_int_equal(stress_ksm_unmerge_forkc_judge(&e->ctx, &fc), -1);
	/* only rmap items copied (merging pages 0 in the parent too) */
	t_forkc(&fc, 0, 16, 0, 16, 0, 1000);
	assert_int_equal(stress_ksm_unmerge_forkc_verdict(&fc, why, sizeof(why)), 1);
	/* ksmd scanned enough pages to have made the child's items: inconclusive */
	t_forkc(&fc, 4096, 4100, 4096, 4100, 0, 1636000);
	fc.scanned_after = fc.scanned_before + 4100;
	assert_int_equal(stress_ksm_unmerge_forkc_verdict(&fc, why, sizeof(why)), 2);
	assert_int_equal(stress_ksm_unmerge_forkc_judge(&e->ctx, &fc), 0);
	/* ... but one page short of them: copied, however late the read */
	fc.scanned_after = fc.scanned_before + 4099;
	fc.read_ns = fc.fork_ns + 30000000;
	assert_int_equal(stress_ksm_unmerge_forkc_verdict(&fc, why, sizeof(why)), 1);
	/* ksmd's partial scan of the child */
	t_forkc(&fc, 4096, 4100, 10, 12, 0, 1000);
	fc.scanned_after = fc.scanned_before + 100;
	assert_int_equal(stress_ksm_unmerge_forkc_verdict(&fc, why, sizeof(why)), 2);
	/* no pages_scanned (before 6.7): a copy cannot be told from a scan */
	t_forkc(&fc, 4096, 4100, 4096, 4100, 0, 1000);
	fc.scanned_before = fc.scanned_after = -1;
	assert_int_equal(stress_ksm_unmerge_forkc_verdict(&fc, why, sizeof(why)), 2);
	/* the child's zero pages below 0 */
	t_forkc(&fc, 4096, 4100, 0, 0, -1, 1000);
	assert_int_equal(stress_ksm_unmerge_forkc_verdict(&fc, why, sizeof(why)), 3);
	assert_int_equal(stress_ksm_unmerge_forkc_judge(&e->ctx, &fc), -1);
	/* the child could not read: nothing to judge */
	fc.child_read = false;
	assert_int_equal(stress_ksm_unmerge_forkc_verdict(&fc, why, sizeof(why)), 0);
	t_env_free(e);
}

/*
 *  main()
 *	run the counter check tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_judge),
		cmocka_unit_test(test_zc_check),
		cmocka_unit_test(test_forkc_verdict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
