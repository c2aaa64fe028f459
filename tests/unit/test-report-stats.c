/*
 * Unit tests of ksm-report's LKP statistics and table formatting.
 * Expected values are hand-computed (see each test's comment).
 */
#include "../../tools/user/ksm-report.c"

#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

/*
 *  mkrow()
 *	a row with copies of the given samples, computed
 */
static kr_row_t mkrow(const char *key, const double *b, size_t nb, const double *n, size_t nn)
{
	kr_row_t row;

	memset(&row, 0, sizeof(row));
	row.key = key;
	row.base.v = kr_xmalloc(nb * sizeof(double));
	memcpy(row.base.v, b, nb * sizeof(double));
	row.base.n = nb;
	row.new.v = kr_xmalloc(nn * sizeof(double));
	memcpy(row.new.v, n, nn * sizeof(double));
	row.new.n = nn;
	kr_row_compute(&row);
	return row;
}

/*
 *  freerow()
 *	release a row made by mkrow()
 */
static void freerow(kr_row_t *row)
{
	free(row->base.v);
	free(row->new.v);
}

#define OPS "stress-ng.ksm-unmerge.ops_per_sec"

/* LKP::Stats.normalize keeps / - %, folds runs of separators into one '_' */
static void test_normalize(void **state)
{
	char *s;

	(void)state;
	s = kr_lkp_normalize("MB per sec unmerge rate");
	assert_string_equal(s, "MB_per_sec_unmerge_rate");
	free(s);
	s = kr_lkp_normalize("  uffd-wp ops  per sec ");
	assert_string_equal(s, "uffd-wp_ops_per_sec");
	free(s);
	s = kr_lkp_normalize("nanosecs per MADV_UNMERGEABLE call (x) [y]: 50%/z");
	assert_string_equal(s, "nanosecs_per_MADV_UNMERGEABLE_call_x_y_50%/z");
	free(s);
}

/* every known description yamlifies to its table key, as stress-ng does */
static void test_yamlify_known(void **state)
{
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(kr_known_desc) / sizeof(kr_known_desc[0]); i++) {
		kr_yamlify(kr_known_desc[i].description, buf, sizeof(buf));
		assert_string_equal(buf, kr_known_desc[i].yaml_key);
	}
	kr_yamlify("MB per sec vm-splice rate", buf, sizeof(buf));
	assert_string_equal(buf, "mb-per-sec-vmsplice-rate");
	kr_yamlify("100% of a very long description that will be cut here", buf, sizeof(buf));
	assert_int_equal(strlen(buf), 39);
	assert_string_equal(buf, "100percent-of-a-very-long-description-t");
}

/* known YAML keys (today's and older stressors') map back to LKP keys;
 * unknown ones, such as an older stressor's racer rates, are used as is */
static void test_misc_stat_key(void **state)
{
	char *k;

	(void)state;
	k = kr_misc_stat_key("ksm-unmerge", "quiet-cputime-unmerge-mb-per-sec");
	assert_string_equal(k, "stress-ng.ksm-unmerge.quiet_CPU-time_unmerge_MB_per_sec");
	free(k);
	k = kr_misc_stat_key("ksm-unmerge", "unmerge-mb-per-sec");
	assert_string_equal(k, "stress-ng.ksm-unmerge.unmerge_MB_per_sec");
	free(k);
	k = kr_misc_stat_key("ksm-unmerge", "uffdwp-ops-per-sec");
	assert_string_equal(k, "stress-ng.ksm-unmerge.uffdwp-ops-per-sec");
	free(k);
	k = kr_misc_stat_key("ksm-unmerge", "mb-per-sec-unmerge-rate");
	assert_string_equal(k, "stress-ng.ksm-unmerge.MB_per_sec_unmerge_rate");
	free(k);
	k = kr_misc_stat_key("ksm-unmerge", "widgets-per-fortnight");
	assert_string_equal(k, "stress-ng.ksm-unmerge.widgets-per-fortnight");
	free(k);
}

/* mean, population stddev and LKP's upper median sorted[n/2] */
static void test_summarise(void **state)
{
	double v[] = { 2400, 2600, 2200, 2500, 2300 };
	double e[] = { 4, 1, 3, 2 };
	kr_samples_t s = { .v = v, .n = 5 };
	kr_samples_t t = { .v = e, .n = 4 };

	(void)state;
	kr_samples_summarise(&s);
	assert_float_equal(s.mean, 2400.0, 1e-9);
	/* sqrt((0 + 200^2 + 200^2 + 100^2 + 100^2) / 5) = sqrt(20000) */
	assert_float_equal(s.stddev, 141.4213562, 1e-6);
	assert_float_equal(s.median, 2400.0, 1e-9);
	assert_float_equal(s.min, 2200.0, 1e-9);
	assert_float_equal(s.max, 2600.0, 1e-9);
	kr_samples_summarise(&t);
	assert_float_equal(t.median, 3.0, 1e-9);	/* sorted 1 2 3 4, index 2 */
}

/* 5% regression, tight runs, 5 vs 5: significant regression of a KPI */
static void test_regress5_flagged(void **state)
{
	const double b[] = { 1000, 1001, 999, 1000.5, 999.5 };
	const double n[] = { 950, 951, 949, 950.5, 949.5 };
	kr_row_t row = mkrow(OPS, b, 5, n, 5);

	(void)state;
	assert_float_equal(row.change, -5.0, 1e-9);
	assert_float_equal(row.ratio, 1000.0 / 950.0, 1e-9);
	assert_true(row.significant);
	assert_true(row.regression);
	assert_int_equal(row.direction, 1);
	freerow(&row);
}

/* -0.8%, separated but median ratio 1.008 <= 1.01: not significant */
static void test_shift08_not_flagged(void **state)
{
	const double b[] = { 1000, 1001, 999, 1000.5, 999.5 };
	const double n[] = { 992, 993, 991, 992.5, 991.5 };
	kr_row_t row = mkrow(OPS, b, 5, n, 5);

	(void)state;
	assert_true(kr_lkp_changed(&row.base, &row.new));
	assert_float_equal(row.change, -0.8, 1e-9);
	assert_false(row.significant);
	freerow(&row);
}

/* -14.7% mean shift with overlapping ranges: not significant */
static void test_overlap_not_flagged(void **state)
{
	const double b[] = { 1000, 1001, 999, 1000.5, 999.5 };
	const double n[] = { 1004, 600, 950, 700, 1010 };
	kr_row_t row = mkrow(OPS, b, 5, n, 5);

	(void)state;
	assert_false(kr_lkp_changed(&row.base, &row.new));
	assert_false(row.significant);
	freerow(&row);
}

/* 2 vs 2 runs: skipped; 3 vs 2: reported (LKP: one side needs 3) */
static void test_run_counts(void **state)
{
	const double b[] = { 1000, 1001, 999 };
	const double n[] = { 900, 901 };
	kr_row_t row22 = mkrow(OPS, b, 2, n, 2);
	kr_row_t row32 = mkrow(OPS, b, 3, n, 2);

	(void)state;
	assert_true(kr_lkp_changed(&row22.base, &row22.new));
	assert_false(row22.significant);
	assert_true(row32.significant);
	assert_true(row32.regression);
	freerow(&row22);
	freerow(&row32);
}

/* latency going up is a regression (lower is better), down an improvement */
static void test_latency_direction(void **state)
{
	const double b[] = { 20, 22, 18, 21, 19 };
	const double n[] = { 30, 33, 27, 31.5, 28.5 };
	kr_row_t up = mkrow("ksm-unmerge.latency.unmerge-millisecs.p95", b, 5, n, 5);
	kr_row_t down = mkrow("ksm-unmerge.latency.unmerge-millisecs.p95", n, 5, b, 5);

	(void)state;
	assert_int_equal(up.direction, -1);
	assert_true(up.significant);
	assert_true(up.regression);
	assert_true(down.significant);
	assert_false(down.regression);
	assert_int_equal(kr_stat_direction("stress-ng.ksm-unmerge.ops"), 0);
	assert_int_equal(kr_stat_direction("stress-ng.ksm-unmerge.nanosecs_per_sparse_page"), -1);
	/* every unmerge rate is higher-is-better: the names end in _per_sec */
	assert_int_equal(kr_stat_direction("stress-ng.ksm-unmerge.quiet_CPU-time_unmerge_MB_per_sec"), 1);
	assert_int_equal(kr_stat_direction("stress-ng.ksm-unmerge.quiet_unmerge_MB_per_sec"), 1);
	assert_int_equal(kr_stat_direction("stress-ng.ksm-unmerge.unmerge_MB_per_sec"), 1);
	assert_int_equal(kr_stat_direction("stress-ng.ksm-unmerge.MB_per_sec_unmerge_rate"), 1);
	freerow(&up);
	freerow(&down);
}

/* LKP ratio caps at 5 and treats a zero median as the cap */
static void test_ratio_cap(void **state)
{
	kr_samples_t a = { .median = 100 }, b = { .median = 1 }, z = { .median = 0 };

	(void)state;
	assert_float_equal(kr_lkp_ratio(&a, &b), 5.0, 1e-12);
	assert_float_equal(kr_lkp_ratio(&z, &a), 5.0, 1e-12);
}

/* value column formats: %.2f < 1000, integer, %.4g > 1e8 (LKP show_perf_change) */
static void test_fmt_value(void **state)
{
	char buf[64];

	(void)state;
	kr_fmt_value(buf, sizeof(buf), 950.0);
	assert_string_equal(buf, "    950.00");
	kr_fmt_value(buf, sizeof(buf), 2400.9);
	assert_string_equal(buf, "      2400");
	kr_fmt_value(buf, sizeof(buf), 1.183e10);
	assert_string_equal(buf, " 1.183e+10");
	kr_fmt_change(buf, sizeof(buf), -5.0);
	assert_string_equal(buf, "      -5.0% ");
	kr_fmt_change(buf, sizeof(buf), 2158.6);
	assert_string_equal(buf, "   +2158.6% ");
}

/* ± column: population stddev in % of the mean, truncated, only above 2% */
static void test_fmt_stddev(void **state)
{
	/* lkp.md's noisy case: mean 100.25, stddev 10.615 -> 10.59% -> "± 10%" */
	double v[] = { 100.25 - 10.615, 100.25 + 10.615 };
	double tight[] = { 1000, 1001, 999, 1000.5, 999.5 };
	kr_samples_t s = { .v = v, .n = 2 }, t = { .v = tight, .n = 5 };
	char buf[32];

	(void)state;
	kr_samples_summarise(&s);
	kr_fmt_stddev(buf, sizeof(buf), &s);
	assert_string_equal(buf, " \u00b1 10%");
	kr_samples_summarise(&t);
	kr_fmt_stddev(buf, sizeof(buf), &t);
	assert_string_equal(buf, "      ");
}

/* whole rows, hand-computed: MB rate 2400 ±5.89% -> 2280 ±5.89%, -5.0%, overlapping */
static void test_format_rows(void **state)
{
	const double b[] = { 2400, 2600, 2200, 2500, 2300 };
	const double n[] = { 2280, 2470, 2090, 2375, 2185 };
	const double ob[] = { 1000, 1001, 999, 1000.5, 999.5 };
	const double on[] = { 950, 951, 949, 950.5, 949.5 };
	kr_row_t mb = mkrow("stress-ng.ksm-unmerge.MB_per_sec_unmerge_rate", b, 5, n, 5);
	kr_row_t ops = mkrow(OPS, ob, 5, on, 5);
	char line[512];

	(void)state;
	kr_format_row(line, sizeof(line), &mb);
	assert_string_equal(line, "      2400 \u00b1  5%      -5.0%       2280 \u00b1  5%  "
			    "stress-ng.ksm-unmerge.MB_per_sec_unmerge_rate");
	kr_format_row(line, sizeof(line), &ops);
	assert_string_equal(line, "      1000            -5.0%     950.00        "
			    "stress-ng.ksm-unmerge.ops_per_sec  * regression");
	freerow(&mb);
	freerow(&ops);
}

/* fail:runs row as LKP prints it: base :5, new 2:5, 40% */
static void test_format_fail_row(void **state)
{
	kr_fail_row_t f = { .key = "dmesg.WARNING:at_mm/ksm.c:#break_ksm",
			    .f_base = 0, .f_new = 2, .reproduction = 40.0 };
	kr_fail_row_t g = { .key = "dmesg.RIP:break_ksm", .f_base = 1, .f_new = 0,
			    .reproduction = -25.0 };
	char line[256];

	(void)state;
	kr_format_fail_row(line, sizeof(line), &f, 5, 5);
	assert_string_equal(line, "           :5           40%           2:5     "
			    "dmesg.WARNING:at_mm/ksm.c:#break_ksm");
	kr_format_fail_row(line, sizeof(line), &g, 4, 4);
	assert_string_equal(line, "          1:4          -25%            :4     dmesg.RIP:break_ksm");
}

/*
 *  test_nice_ticks()
 *	axis ticks: a 1/2/5 x 10^k step, ends on multiples of it, covering
 *	the range with at most 5 intervals
 */
static void test_nice_ticks(void **state)
{
	static const double ranges[][2] = {
		{ 16.2, 33.1 }, { 949.5, 1000.8 }, { 583680.0, 614400.0 },
		{ 0.0012, 0.0019 }, { 42.0, 42.0 }, { -3.5, 7.25 },
	};
	double first, last, step, m;
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		kr_nice_ticks(ranges[i][0], ranges[i][1], 5, &first, &last, &step);
		m = step / pow(10.0, floor(log10(step) + 1e-9));
		assert_true(fabs(m - 1.0) < 1e-9 || fabs(m - 2.0) < 1e-9 || fabs(m - 5.0) < 1e-9);
		assert_true(first <= ranges[i][0] + step * 1e-6 && last >= ranges[i][1] - step * 1e-6);
		assert_true(fabs(first / step - round(first / step)) < 1e-6);
		assert_true((last - first) / step <= 5.0 + 1e-9);
	}
	kr_nice_ticks(16.2, 33.1, 5, &first, &last, &step);
	assert_true(first == 15.0 && last == 35.0 && step == 5.0);
	kr_fmt_tick(buf, sizeof(buf), 25.0, 5.0, 35.0);
	assert_string_equal(buf, "25");
	kr_fmt_tick(buf, sizeof(buf), 590000.0, 10000.0, 620000.0);
	assert_string_equal(buf, "590k");
	kr_fmt_tick(buf, sizeof(buf), 9800.0, 200.0, 10200.0);
	assert_string_equal(buf, "9.8k");
	kr_fmt_tick(buf, sizeof(buf), 0.0015, 0.0002, 0.002);
	assert_string_equal(buf, "0.0015");
	kr_fmt_tick(buf, sizeof(buf), 1.2e6, 2e5, 1.4e6);
	assert_string_equal(buf, "1.2M");
}

/* number parsing rejects junk, inf and nan */
static void test_number(void **state)
{
	double v;

	(void)state;
	assert_true(kr_number("2.4005e+03", &v));
	assert_float_equal(v, 2400.5, 1e-9);
	assert_false(kr_number("12abc", &v));
	assert_false(kr_number("", &v));
	assert_false(kr_number("inf", &v));
	assert_false(kr_number("nan", &v));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_yamlify_known),
		cmocka_unit_test(test_misc_stat_key),
		cmocka_unit_test(test_summarise),
		cmocka_unit_test(test_regress5_flagged),
		cmocka_unit_test(test_shift08_not_flagged),
		cmocka_unit_test(test_overlap_not_flagged),
		cmocka_unit_test(test_run_counts),
		cmocka_unit_test(test_latency_direction),
		cmocka_unit_test(test_ratio_cap),
		cmocka_unit_test(test_fmt_value),
		cmocka_unit_test(test_fmt_stddev),
		cmocka_unit_test(test_format_rows),
		cmocka_unit_test(test_format_fail_row),
		cmocka_unit_test(test_number),
		cmocka_unit_test(test_nice_ticks),
	};

	/* the stub racer table: build/ksm-racers comes with the stressor */
	if (setenv("KSM_REPORT_RACERS", KR_FIXTURES "/ksm-racers", 1) < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
