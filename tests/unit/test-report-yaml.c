/*
 * Unit tests of ksm-report's YAML reader (libyaml) on the fixture sets in
 * tests/data/fixtures/report (regenerate them with gen-fixtures.py there).
 */
#include "../../tools/ksm-report.c"

#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

#ifndef KR_FIXTURES
#define KR_FIXTURES "tests/data/fixtures/report"
#endif

/*
 *  load()
 *	load a fixture set into a fresh side, returning kr_load_side's result
 */
static int load(const char *name, kr_side_t *side)
{
	static char path[PATH_MAX];

	memset(side, 0, sizeof(*side));
	snprintf(path, sizeof(path), "%s/%s", KR_FIXTURES, name);
	return kr_load_side(path, side);
}

/*
 *  perf()
 *	a stat of a run that must exist
 */
static double perf(const kr_run_t *run, const char *key)
{
	const double *v = kr_run_perf(run, key);

	if (!v)
		fail_msg("stat %s missing in %s", key, run->source);
	return *v;
}

/* a stress-ng 0.22 document with our two sections gives every key */
static void test_base_keys(void **state)
{
	kr_side_t side;
	const kr_run_t *r;

	(void)state;
	assert_int_equal(load("base", &side), 0);
	assert_int_equal(side.n_runs, 5);
	assert_int_equal(side.bad_files, 0);
	r = &side.runs[0];
	assert_string_equal(r->stressor, "ksm-unmerge");
	assert_non_null(strstr(r->source, "run-1.yaml"));
	assert_float_equal(perf(r, "stress-ng.ksm-unmerge.ops_per_sec"), 1000.0, 1e-9);
	assert_float_equal(perf(r, "stress-ng.ksm-unmerge.ops"), 10010.0, 1e-9);
	assert_float_equal(perf(r, "stress-ng.ksm-unmerge.MB_per_sec_unmerge_rate"), 2400.0, 1e-9);
	assert_float_equal(perf(r, "stress-ng.ksm-unmerge.uffd-wp_ops_per_sec"), 80.25, 1e-9);
	assert_float_equal(perf(r, "stress-ng.ksm-unmerge.nanosecs_per_sparse_page"), 410.0, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.latency.unmerge-millisecs.p95"), 20.0, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.latency.mrelease-millisecs.p99"), 3.1, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.racer.vmsplice.evidence"), 456.0, 1e-9);
	/* no per-instance, usr/sys-rate, time or samples keys leak in */
	assert_null(kr_run_perf(r, "ksm-unmerge.latency.unmerge-millisecs.samples"));
	assert_null(kr_run_perf(r, "stress-ng.ksm-unmerge.wall-clock-time"));
	assert_null(kr_run_perf(r, "stress-ng.ksm-unmerge.instances"));
	assert_int_equal(r->n_fails, 0);
	assert_true(r->klog_present);
	assert_true(r->klog_checked);
	/* run-1 has block latencies, run-2 flow ones: same values */
	assert_float_equal(perf(&side.runs[1], "ksm-unmerge.latency.unmerge-millisecs.p95"), 22.0, 1e-9);
	assert_float_equal(perf(&side.runs[1], "ksm-unmerge.latency.unmerge-millisecs.p50"), 20.1, 1e-9);
	kr_side_free(&side);
}

/* kernel-log keys become dmesg.* function stats in the runs that show them */
static void test_klog_keys(void **state)
{
	kr_side_t side;

	(void)state;
	assert_int_equal(load("regress5", &side), 0);
	assert_int_equal(side.n_runs, 5);
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(kr_run_has_fail(&side.runs[i], "dmesg.WARNING:at_mm/ksm.c:#break_ksm"),
				 i == 1 || i == 3);
	kr_side_free(&side);
}

/* plain stress-ng 0.22 YAML: no kernel-log/ksm-unmerge sections, still fine */
static void test_plain_022(void **state)
{
	kr_side_t side;

	(void)state;
	assert_int_equal(load("plain022", &side), 0);
	assert_int_equal(side.n_runs, 3);
	assert_false(side.runs[0].klog_present);
	assert_null(kr_run_perf(&side.runs[0], "ksm-unmerge.latency.unmerge-millisecs.p95"));
	assert_float_equal(perf(&side.runs[2], "stress-ng.ksm-unmerge.ops_per_sec"), 999.0, 1e-9);
	kr_side_free(&side);
}

/* malformed, empty and metrics-less files are skipped, good ones kept */
static void test_mixed_skips_bad(void **state)
{
	kr_side_t side;

	(void)state;
	assert_int_equal(load("mixed", &side), 0);
	assert_int_equal(side.n_runs, 3);
	assert_int_equal(side.good_files, 3);
	assert_int_equal(side.bad_files, 3);
	kr_side_free(&side);

	memset(&side, 0, sizeof(side));
	assert_int_equal(kr_load_file(KR_FIXTURES "/mixed/run-4.yaml", &side), -1);
	assert_int_equal(kr_load_file(KR_FIXTURES "/mixed/run-5.yaml", &side), -1);
	assert_int_equal(kr_load_file(KR_FIXTURES "/mixed/run-6.yaml", &side), -1);
	assert_int_equal(side.n_runs, 0);
	assert_int_equal(side.bad_files, 3);
	kr_side_free(&side);
}

/* missing path and empty directory are errors */
static void test_missing_and_empty(void **state)
{
	char tmpl[] = "/tmp/kr-empty-XXXXXX";
	kr_side_t side;

	(void)state;
	memset(&side, 0, sizeof(side));
	assert_int_equal(kr_load_side("/nonexistent/ksm-report/dir", &side), -1);
	assert_non_null(mkdtemp(tmpl));
	memset(&side, 0, sizeof(side));
	assert_int_equal(kr_load_side(tmpl, &side), -1);
	assert_int_equal(rmdir(tmpl), 0);
}

/* a multi-document stream is one run per document */
static void test_soak_stream(void **state)
{
	kr_side_t side;

	(void)state;
	assert_int_equal(load("soak.yaml", &side), 0);
	assert_int_equal(side.n_runs, 4);
	assert_non_null(strstr(side.runs[3].source, "soak.yaml#4"));
	assert_float_equal(perf(&side.runs[3], "stress-ng.ksm-unmerge.ops_per_sec"), 1000.5, 1e-9);
	kr_side_free(&side);
}

/*
 *  write_file()
 *	create a small file with the given text
 */
static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_true(fputs(text, fp) >= 0);
	assert_int_equal(fclose(fp), 0);
}

/* tolerant reader: flow mappings everywhere, racers as a mapping, scalar
 * key list, zero misc metric -> .fail, exit code from the .env file, and
 * descriptions learnt from the text log next to the YAML */
static void test_tolerant_layouts(void **state)
{
	char dir[] = "/tmp/kr-yaml-XXXXXX", path[PATH_MAX], p2[PATH_MAX], p3[PATH_MAX];
	kr_side_t side;
	const kr_run_t *r;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/run-1.yaml", dir);
	snprintf(p2, sizeof(p2), "%s/run-1.env", dir);
	snprintf(p3, sizeof(p3), "%s/run-1.txt", dir);
	write_file(path,
		"---\n"
		"metrics: [ { stressor: ksm-unmerge, bogo-ops: 0, bogo-ops-per-second-real-time: 0,\n"
		"  pages-merged-per-cycle: 0, widgets-per-sec: 7.5 } ]\n"
		"kernel-log: { status: unavailable, warnings: 2, lost-records: 3,\n"
		"  keys: [ 'RIP:break_ksm', 'kmsg.foo' ] }\n"
		"ksm-unmerge:\n"
		"  pattern: same\n"
		"  cycles: 31\n"
		"  failures: 2\n"
		"  merge-timeouts: 0\n"
		"  latencies: [ { name: unmerge-millisecs, p95: 9.5 } ]\n"
		"  racers: { gup: { ops: 5, reached: false, details: { odirect-pins: 4, longterm-pins: 1 } },\n"
		"    thp: { ops: 0, reached: false, skipped: true } }\n"
		"...\n");
	write_file(p2, "release=6.18.0\nexit_code=2\n");
	write_file(p3, "stress-ng: metrc: [1] ksm-unmerge          7.50 Widgets per sec! "
		   "(harmonic mean of 1 instance)\n");
	memset(&side, 0, sizeof(side));
	assert_int_equal(kr_load_side(dir, &side), 0);
	assert_int_equal(side.n_runs, 1);
	r = &side.runs[0];
	assert_true(kr_run_has_fail(r, "stress-ng.ksm-unmerge.fail"));
	assert_true(kr_run_has_fail(r, "stress-ng.ksm-unmerge.pages_merged_per_cycle.fail"));
	assert_true(kr_run_has_fail(r, "dmesg.RIP:break_ksm"));
	assert_true(kr_run_has_fail(r, "kmsg.foo"));
	assert_true(kr_run_has_fail(r, "ksm-unmerge.racer.gup.not_reached"));
	assert_true(kr_run_has_fail(r, "ksm-unmerge.racer.thp.skipped"));
	assert_false(kr_run_has_fail(r, "ksm-unmerge.racer.thp.not_reached"));
	assert_true(kr_run_has_fail(r, "last_state.test.stress-ng.exit_code.2"));
	assert_null(kr_run_perf(r, "stress-ng.ksm-unmerge.ops_per_sec"));
	assert_float_equal(perf(r, "stress-ng.ksm-unmerge.Widgets_per_sec!"), 7.5, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.latency.unmerge-millisecs.p95"), 9.5, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.racer.gup.ops"), 5.0, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.racer.gup.odirect-pins"), 4.0, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.racer.gup.longterm-pins"), 1.0, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.cycles"), 31.0, 1e-9);
	assert_true(kr_run_has_fail(r, "ksm-unmerge.failures"));
	assert_false(kr_run_has_fail(r, "ksm-unmerge.merge-timeouts"));
	assert_null(kr_run_perf(r, "ksm-unmerge.failures"));
	assert_null(kr_run_perf(r, "ksm-unmerge.pattern"));
	assert_false(r->klog_checked);
	assert_int_equal(r->lost_records, 3);
	kr_side_free(&side);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(p2), 0);
	assert_int_equal(unlink(p3), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* compare of base vs regress5 builds the expected rows and fail row */
static void test_compare_build(void **state)
{
	kr_side_t b, n;
	kr_compare_t cmp;
	const kr_row_t *ops;

	(void)state;
	assert_int_equal(load("base", &b), 0);
	assert_int_equal(load("regress5", &n), 0);
	kr_compare_build(&b, &n, &cmp);
	ops = &cmp.rows[0];
	assert_string_equal(ops->key, "stress-ng.ksm-unmerge.ops_per_sec");
	assert_true(ops->significant && ops->regression);
	assert_float_equal(ops->change, -5.0, 1e-6);
	/* then by |%change|: the +55.2% p50 latency comes next */
	assert_string_equal(cmp.rows[1].key, "ksm-unmerge.latency.unmerge-millisecs.p50");
	assert_int_equal(cmp.n_fails, 1);
	assert_string_equal(cmp.fails[0].key, "dmesg.WARNING:at_mm/ksm.c:#break_ksm");
	assert_int_equal(cmp.fails[0].f_base, 0);
	assert_int_equal(cmp.fails[0].f_new, 2);
	assert_float_equal(cmp.fails[0].reproduction, 40.0, 1e-9);
	for (size_t i = 0; i < cmp.n_rows; i++)
		if (!strcmp(cmp.rows[i].key, "stress-ng.ksm-unmerge.MB_per_sec_unmerge_rate"))
			assert_false(cmp.rows[i].significant);
	kr_compare_free(&cmp);
	kr_side_free(&b);
	kr_side_free(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_keys),
		cmocka_unit_test(test_klog_keys),
		cmocka_unit_test(test_plain_022),
		cmocka_unit_test(test_mixed_skips_bad),
		cmocka_unit_test(test_missing_and_empty),
		cmocka_unit_test(test_soak_stream),
		cmocka_unit_test(test_tolerant_layouts),
		cmocka_unit_test(test_compare_build),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
