/*
 * tests/unit/test-shim-metrics.c: cmocka tests of core-shim/core-metrics.c:
 * metrics table rows (10/12 fields with the log prefix, number
 * formats), misc metric rows, mean computations, the shared metrics
 * table, summary lines and duration/size strings.
 */
#include "test-shim-common.h"

#define PREFIX	"stress-ng: metrc: [12345] "

static test_capture_t cap;

/*
 *  totals_example()
 *	a fixed set of totals
 */
static void totals_example(stress_metrics_totals_t *t)
{
	(void)memset(t, 0, sizeof(*t));
	t->c_total = 123456;
	t->r_total = 60.004;
	t->u_time = 1.5;
	t->s_time = 100.25;
	t->bogo_rate_r_time = 2057.5963;
	t->bogo_rate = 1213.33;
	t->cpu_usage = 84.7891;
	t->maxrss = 524288;
	t->completed = 2;
	t->run_ok = true;
}

/*
 *  test_header_lines()
 *	header lines are byte-identical to stress-ng 0.22
 */
static void test_header_lines(void **state)
{
	char l1[256], l2[256];

	(void)state;
	stress_metrics_header_format(l1, l2, sizeof(l1), true);
	assert_string_equal(l1, "stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s\n");
	assert_string_equal(l2, "                          (secs)    (secs)    (secs)   (real time) (usr+sys time)\n");
	stress_metrics_header_format(l1, l2, sizeof(l1), false);
	assert_string_equal(l1, "stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s CPU used per       RSS Max\n");
	assert_string_equal(l2, "                          (secs)    (secs)    (secs)   (real time) (usr+sys time) instance (%)          (KB)\n");
}

/*
 *  test_rows()
 *	brief rows split into 10 fields and full rows into 12 with the
 *	log prefix, with fixed number formats
 */
static void test_rows(void **state)
{
	stress_metrics_totals_t t;
	char row[512], line[600];

	(void)state;
	totals_example(&t);
	(void)stress_metrics_row_format(row, sizeof(row), "ksm-unmerge", &t, true);
	assert_string_equal(row, "ksm-unmerge      123456     60.00      1.50    100.25      2057.60        1213.33\n");
	(void)snprintf(line, sizeof(line), PREFIX "%s", row);
	assert_int_equal(test_count_fields(line), 10);

	(void)stress_metrics_row_format(row, sizeof(row), "ksm-unmerge", &t, false);
	assert_string_equal(row, "ksm-unmerge      123456     60.00      1.50    100.25      2057.60        1213.33        84.79        524288\n");
	(void)snprintf(line, sizeof(line), PREFIX "%s", row);
	assert_int_equal(test_count_fields(line), 12);

	/* huge values must stay one field each */
	t.c_total = UINT64_MAX;
	t.bogo_rate_r_time = 1e15;
	t.bogo_rate = 1e16;
	(void)stress_metrics_row_format(row, sizeof(row), "ksm-unmerge", &t, false);
	(void)snprintf(line, sizeof(line), PREFIX "%s", row);
	assert_int_equal(test_count_fields(line), 12);
	(void)memset(&t, 0, sizeof(t));
	(void)stress_metrics_row_format(row, sizeof(row), "ksm-unmerge", &t, true);
	assert_string_equal(row, "ksm-unmerge           0      0.00      0.00      0.00         0.00           0.00\n");
}

/*
 *  test_misc_rows()
 *	misc metric rows and their mean type wording
 */
static void test_misc_rows(void **state)
{
	char row[256];

	(void)state;
	(void)stress_metrics_misc_format(row, sizeof(row), "ksm-unmerge", 1333.333,
		"nanosecs per dummy op", STRESS_METRIC_HARMONIC_MEAN, 2);
	assert_string_equal(row, "ksm-unmerge         1333.33 nanosecs per dummy op (harmonic mean of 2 instances)\n");
	(void)stress_metrics_misc_format(row, sizeof(row), "ksm-unmerge", 5.0,
		"pages unmerged per sec", STRESS_METRIC_GEOMETRIC_MEAN, 1);
	assert_string_equal(row, "ksm-unmerge            5.00 pages unmerged per sec (geometric mean of 1 instance)\n");
	(void)stress_metrics_misc_format(row, sizeof(row), "ksm-unmerge", 1e10,
		"pages", STRESS_METRIC_TOTAL, 4);
	assert_string_equal(row, "ksm-unmerge   10000000000.00 pages (total of 4 instances)\n");
	(void)stress_metrics_misc_format(row, sizeof(row), "ksm-unmerge", 7.0,
		"max", STRESS_METRIC_MAXIMUM, 3);
	assert_string_equal(row, "ksm-unmerge            7.00 max (maximum of 3 instances)\n");
}

/*
 *  test_means()
 *	mean computations across instances
 */
static void test_means(void **state)
{
	const double h[] = { 1000.0, 2000.0 };
	const double hz[] = { 0.0, 1000.0, 0.0 };
	const double g[] = { 100.0, 200.0 };
	const double big[] = { 1e300, 1e300, 1e300 };
	const double tot[] = { 1.0, 2.0, -3.0, 0.0 };
	const double mx[] = { 1.0, 5.0, 3.0 };
	const double zero[] = { 0.0, 0.0 };

	(void)state;
	assert_float_equal(stress_metric_mean(h, 2, STRESS_METRIC_HARMONIC_MEAN), 1333.3333, 0.001);
	assert_float_equal(stress_metric_mean(hz, 3, STRESS_METRIC_HARMONIC_MEAN), 1000.0, 1e-9);
	assert_float_equal(stress_metric_mean(g, 2, STRESS_METRIC_GEOMETRIC_MEAN), 141.4213562, 1e-6);
	assert_float_equal(stress_metric_mean(big, 3, STRESS_METRIC_GEOMETRIC_MEAN) / 1e300, 1.0, 1e-9);
	assert_float_equal(stress_metric_mean(tot, 4, STRESS_METRIC_TOTAL), 3.0, 1e-12);
	assert_float_equal(stress_metric_mean(mx, 3, STRESS_METRIC_MAXIMUM), 5.0, 1e-12);
	assert_float_equal(stress_metric_mean(zero, 2, STRESS_METRIC_HARMONIC_MEAN), 0.0, 0.0);
	assert_float_equal(stress_metric_mean(zero, 2, STRESS_METRIC_GEOMETRIC_MEAN), 0.0, 0.0);
	assert_float_equal(stress_metric_mean(h, 2, 99), 0.0, 0.0);
	assert_string_equal(stress_metric_mean_name(STRESS_METRIC_GEOMETRIC_MEAN), "geometric mean");
}

/*
 *  test_totals()
 *	instance stats summed like stress-ng
 */
static void test_totals(void **state)
{
	stress_stats_t s[3];
	stress_metrics_totals_t t;

	(void)state;
	(void)memset(s, 0, sizeof(s));
	s[0].args.bogo.count.counter = 100;
	s[0].duration = 10.0;
	s[0].utime = 1.0;
	s[0].stime = 4.0;
	s[0].maxrss = 2000;
	s[0].args.bogo.count.run_ok = true;
	s[1].args.bogo.count.counter = 300;
	s[1].duration = 12.0;
	s[1].utime = 2.0;
	s[1].stime = 3.0;
	s[1].maxrss = 3000;
	/* s[2] never ran: no duration */
	stress_metrics_totals_get(s, 3, &t);
	assert_int_equal(t.c_total, 400);
	assert_int_equal(t.completed, 2);
	assert_float_equal(t.r_total, 11.0, 1e-12);
	assert_float_equal(t.u_time, 3.0, 1e-12);
	assert_float_equal(t.s_time, 7.0, 1e-12);
	assert_float_equal(t.bogo_rate_r_time, 400.0 / 11.0, 1e-9);
	assert_float_equal(t.bogo_rate, 40.0, 1e-9);
	assert_float_equal(t.cpu_usage, 100.0 * 10.0 / 11.0 / 2.0, 1e-9);
	assert_int_equal(t.maxrss, 3000);
	assert_true(t.run_ok);
}

/*
 *  test_metrics_table()
 *	stress_metrics_set slots, overflow, and the printed misc block
 *	skips zero values and is hidden with --metrics-brief
 */
static void test_metrics_table(void **state)
{
	char *out;
	int i;

	(void)state;
	assert_non_null(stress_shared_alloc(2, 0));
	assert_int_equal(g_shared->max_metrics_items, STRESS_METRICS_ITEMS_DEFAULT_SIZE);
	stress_metrics_set(&g_shared->stats[0].args, "nanosecs per op", 1000.0, STRESS_METRIC_HARMONIC_MEAN);
	stress_metrics_set(&g_shared->stats[1].args, "nanosecs per op", 3000.0, STRESS_METRIC_HARMONIC_MEAN);
	stress_metrics_set(&g_shared->stats[1].args, "nanosecs per op", 2000.0, STRESS_METRIC_HARMONIC_MEAN);
	stress_metrics_set(&g_shared->stats[0].args, "always zero", 0.0, STRESS_METRIC_TOTAL);
	stress_metrics_set(&g_shared->stats[0].args, "nanosecs per op", 5.0, STRESS_METRIC_TOTAL);
	assert_int_equal(g_shared->num_metrics_items, 3);
	assert_float_equal(g_shared->stats[1].metrics_values[0], 2000.0, 0.0);
	for (i = 0; i < 10; i++) {
		char desc[32];

		(void)snprintf(desc, sizeof(desc), "extra %d", i);
		stress_metrics_set(&g_shared->stats[0].args, desc, 1.0, STRESS_METRIC_TOTAL);
	}
	assert_int_equal(g_shared->num_metrics_items, 8);
	assert_true(g_shared->overflow);
	g_shared->stats[0].duration = 1.0;
	g_shared->stats[1].duration = 1.0;

	g_opt_flags = OPT_FLAGS_METRICS;
	g_pr_log_flags = PR_LOG_FLAGS_INFO | PR_LOG_FLAGS_METRICS;
	test_capture_begin(&cap, STDOUT_FILENO);
	stress_metrics_dump(NULL, "ksm-unmerge");
	out = test_capture_end(&cap);
	assert_non_null(strstr(out, "] miscellaneous metrics:\n"));
	assert_non_null(strstr(out, "] note: only reporting first 8 metrics\n"));
	assert_non_null(strstr(out, "] ksm-unmerge         1333.33 nanosecs per op (harmonic mean of 2 instances)\n"));
	assert_non_null(strstr(out, "] ksm-unmerge            5.00 nanosecs per op (total of 2 instances)\n"));
	assert_null(strstr(out, "always zero"));
	free(out);

	/* brief: no misc block; a row with 0 ops that did not run OK is omitted */
	g_opt_flags = OPT_FLAGS_METRICS | OPT_FLAGS_METRICS_BRIEF;
	test_capture_begin(&cap, STDOUT_FILENO);
	stress_metrics_dump(NULL, "ksm-unmerge");
	out = test_capture_end(&cap);
	assert_null(strstr(out, "miscellaneous"));
	assert_int_equal(test_count_lines(out), 2);
	free(out);
	g_shared->stats[0].args.bogo.count.counter = 5;
	test_capture_begin(&cap, STDOUT_FILENO);
	stress_metrics_dump(NULL, "ksm-unmerge");
	out = test_capture_end(&cap);
	assert_int_equal(test_count_lines(out), 3);
	assert_non_null(strstr(out, "] ksm-unmerge           5 "));
	free(out);
	stress_shared_free();
	g_opt_flags = 0;
}

/*
 *  test_summary()
 *	skipped/passed/failed/metrics untrustworthy lines
 */
static void test_summary(void **state)
{
	const stress_status_counts_t c = { 0, 3, 1, 0 };
	char *out;

	(void)state;
	g_pr_log_flags = PR_LOG_FLAGS_INFO | PR_LOG_FLAGS_BRIEF;
	test_capture_begin(&cap, STDOUT_FILENO);
	stress_exit_status_summary("ksm-unmerge", &c);
	out = test_capture_end(&cap);
	assert_string_equal(out, "skipped: 0\npassed: 3: ksm-unmerge (3)\n"
		"failed: 1: ksm-unmerge (1)\nmetrics untrustworthy: 0\n");
	free(out);
	g_pr_log_flags = PR_LOG_FLAGS_INFO | PR_LOG_FLAGS_ERROR;
}

/*
 *  test_log_prefix()
 *	pr_* line prefixes as stress-ng 0.22
 */
static void test_log_prefix(void **state)
{
	char *out;
	char expect[512];
	const int pid = (int)getpid();

	(void)state;
	g_pr_log_flags = PR_LOG_FLAGS_ALL;
	test_capture_begin(&cap, STDOUT_FILENO);
	pr_inf("a\n");
	pr_fail("b\n");
	pr_err("c\n");
	pr_warn("d\n");
	pr_metrics("e\n");
	pr_dbg("f\n");
	out = test_capture_end(&cap);
	(void)snprintf(expect, sizeof(expect),
		"stress-ng: info:  [%d] a\nstress-ng: fail:  [%d] b\n"
		"stress-ng: error: [%d] c\nstress-ng: warn:  [%d] d\n"
		"stress-ng: metrc: [%d] e\nstress-ng: debug: [%d] f\n",
		pid, pid, pid, pid, pid, pid);
	assert_string_equal(out, expect);
	free(out);
	g_pr_log_flags = PR_LOG_FLAGS_INFO | PR_LOG_FLAGS_ERROR;
	test_capture_begin(&cap, STDOUT_FILENO);
	pr_dbg("hidden\n");
	pr_metrics("hidden\n");
	pr_warn("shown\n");
	out = test_capture_end(&cap);
	assert_int_equal(test_count_lines(out), 1);
	free(out);
}

/*
 *  test_strings()
 *	duration and size strings
 */
static void test_strings(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(stress_time_duration_to_str(60.0, false, false), "1 min");
	assert_string_equal(stress_time_duration_to_str(5.0, false, false), "5 secs");
	assert_string_equal(stress_time_duration_to_str(86400.0, false, false), "1 day");
	assert_string_equal(stress_time_duration_to_str(3661.0, false, false), "1 hour 1 min 1 sec");
	assert_string_equal(stress_time_duration_to_str(5.004, true, false), "5.00 secs");
	assert_string_equal(stress_time_duration_to_str(0.2, true, false), "0 secs");
	assert_string_equal(stress_time_duration_to_str(0.75, true, true), "0.75 sec");
	assert_string_equal(stress_uint64_to_str(buf, sizeof(buf), 64 * KB, 2, true), "64K");
	assert_string_equal(stress_uint64_to_str(buf, sizeof(buf), 3 * GB / 2, 1, false), "1.5G");
	assert_string_equal(stress_uint64_to_str(buf, sizeof(buf), 100, 0, true), "100");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_lines),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_misc_rows),
		cmocka_unit_test(test_means),
		cmocka_unit_test(test_totals),
		cmocka_unit_test(test_metrics_table),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_log_prefix),
		cmocka_unit_test(test_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
