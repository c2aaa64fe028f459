/*
 * Unit tests of ksm-report's readers: the YAML metrics: section (libyaml),
 * the stressor's text output (totals, racer, latency and kernel-log lines)
 * and the racer table of build/ksm-racers (a stub here), on the fixture
 * sets in tests/data/fixtures/report (regenerate them with gen-fixtures.py
 * there) and on hand-written lines.
 */
#include "../../tools/user/ksm-report.c"

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
	/* an older stressor's racer rate its text output does not name keeps its YAML key */
	assert_float_equal(perf(r, "stress-ng.ksm-unmerge.uffdwp-ops-per-sec"), 80.25, 1e-9);
	assert_float_equal(perf(r, "stress-ng.ksm-unmerge.nanosecs_per_sparse_page"), 410.0, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.latency.unmerge-millisecs.p95"), 20.0, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.latency.mrelease-millisecs.p99"), 3.1, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.racer.vmsplice.evidence"), 456.0, 1e-9);
	/* no per-instance, usr/sys-rate, time or samples keys leak in */
	assert_null(kr_run_perf(r, "ksm-unmerge.latency.unmerge-millisecs.samples"));
	assert_null(kr_run_perf(r, "stress-ng.ksm-unmerge.wall-clock-time"));
	assert_null(kr_run_perf(r, "stress-ng.ksm-unmerge.instances"));
	assert_int_equal(r->n_fails, 0);
	assert_true(r->text_present);
	/* text lines: totals, racer details, the " -" guard of a latency line */
	assert_float_equal(perf(r, "ksm-unmerge.cycles"), 120.0, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.cow-ksm-delta"), 3932160.0, 1e-9);
	assert_null(kr_run_perf(r, "ksm-unmerge.failures"));
	assert_float_equal(perf(r, "ksm-unmerge.racer.vmsplice.ops"), 1234.0, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.racer.vmsplice.splices-held-over-unmerge"), 120.0, 1e-9);
	assert_null(kr_run_perf(r, "ksm-unmerge.racer.vmsplice.ksm-pages-spliced"));
	assert_float_equal(perf(r, "ksm-unmerge.latency.mrelease-millisecs.stdev"), 0.4, 1e-9);
	assert_float_equal(perf(&side.runs[1], "ksm-unmerge.latency.unmerge-millisecs.p95"), 22.0, 1e-9);
	assert_float_equal(perf(&side.runs[1], "ksm-unmerge.latency.unmerge-millisecs.p50"), 20.1, 1e-9);
	kr_side_free(&side);
}

/* kernel-log lines become dmesg.* function stats in the runs that show
 * them: run 2 has stress-ng's -K line, run 4 the standalone key lines */
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

/* plain stress-ng 0.22 YAML without its text output: metrics only */
static void test_plain_022(void **state)
{
	kr_side_t side;

	(void)state;
	assert_int_equal(load("plain022", &side), 0);
	assert_int_equal(side.n_runs, 3);
	assert_false(side.runs[0].text_present);
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
static void test_stream(void **state)
{
	kr_side_t side;

	(void)state;
	assert_int_equal(load("stream.yaml", &side), 0);
	assert_int_equal(side.n_runs, 4);
	assert_non_null(strstr(side.runs[3].source, "stream.yaml#4"));
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

/* flow-style metrics, a zero misc metric (.fail), the exit code from the
 * .env file, and every kind of text line: a learnt description, racers
 * NOT reached and skipped, totals with failures, an unknown latency,
 * stress-ng's -K lines (a splat: dmesg.*, an error: kmsg.*, an ordinary
 * warning: nothing), lost records, --log-brief lines and lines that look
 * close but are not report lines */
static void test_text_lines(void **state)
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
		"ksm-unmerge: { cycles: 99 }\n"
		"...\n");
	write_file(p2, "release=6.18.0\nexit_code=2\n");
	write_file(p3,
		"stress-ng: metrc: [1] ksm-unmerge          7.50 Widgets per sec! (harmonic mean of 1 instance)\n"
		"stress-ng: info:  [1] ksm-unmerge: totals: cycles=31,failures=2,merge-timeouts=0,bogus,=4,a b=1\n"
		"stress-ng: info:  [1] ksm-unmerge: racer gup NOT reached: ops=5 ksm-pages-pinned=0,"
		"odirect-pins=4,longterm-pins=1 (path never met a KSM page)\n"
		"stress-ng: info:  [2] ksm-unmerge: racer thp skipped: no THP (never)\n"
		"stress-ng: info:  [1] ksm-unmerge: racer signal reached: ops=9 unmerges-interrupted=3,"
		"merged-phase-timeouts=1 -\n"
		"ksm-unmerge: unmerge millisecs per cycle: p50=1.5 p95=9.5 p99=x samples=4\n"
		"stress-ng: info:  [1] ksm-unmerge: fork settle microsecs: p50=2 samples=1\n"
		"stress-ng: info:  [1] ksm-unmerge: unmerge rate: p50=3\n"
		"stress-ng: error: [5] klog-check: error: [1.000001] 'EXT4-fs (loop0): VFS: Can't find ext4 filesystem'\n"
		"stress-ng: info:  [5] klog-check: warning: [2.5] 'Oops: general protection fault, probably for "
		"non-canonical address 0xdead000000000100: 0000 [#1] PREEMPT SMP NOPTI'\n"
		"stress-ng: info:  [5] klog-check: warning: [3.0] 'ext4: some ordinary warning'\n"
		"stress-ng: info:  [5] klog-check: detected 1 kernel error messages\n"
		"stress-ng: info:  [1] ksm-unmerge: kernel warnings: 3\n"
		"stress-ng: info:  [1] ksm-unmerge: kernel-log: 3 records lost (overwritten before read)\n"
		"stress-ng: info:  [1] ksm-unmerge: racer a quick brown fox\n");
	memset(&side, 0, sizeof(side));
	assert_int_equal(kr_load_side(dir, &side), 0);
	assert_int_equal(side.n_runs, 1);
	r = &side.runs[0];
	assert_true(r->text_present);
	assert_true(kr_run_has_fail(r, "stress-ng.ksm-unmerge.fail"));
	assert_true(kr_run_has_fail(r, "stress-ng.ksm-unmerge.pages_merged_per_cycle.fail"));
	assert_true(kr_run_has_fail(r, "last_state.test.stress-ng.exit_code.2"));
	assert_null(kr_run_perf(r, "stress-ng.ksm-unmerge.ops_per_sec"));
	assert_float_equal(perf(r, "stress-ng.ksm-unmerge.Widgets_per_sec!"), 7.5, 1e-9);
	/* totals: the text's, not a YAML section's; failures a function stat */
	assert_float_equal(perf(r, "ksm-unmerge.cycles"), 31.0, 1e-9);
	assert_true(kr_run_has_fail(r, "ksm-unmerge.failures"));
	assert_false(kr_run_has_fail(r, "ksm-unmerge.merge-timeouts"));
	assert_null(kr_run_perf(r, "ksm-unmerge.failures"));
	assert_null(kr_run_perf(r, "ksm-unmerge.a b"));
	/* racers */
	assert_true(kr_run_has_fail(r, "ksm-unmerge.racer.gup.not_reached"));
	assert_float_equal(perf(r, "ksm-unmerge.racer.gup.ops"), 5.0, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.racer.gup.evidence"), 0.0, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.racer.gup.odirect-pins"), 4.0, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.racer.gup.longterm-pins"), 1.0, 1e-9);
	assert_true(kr_run_has_fail(r, "ksm-unmerge.racer.thp.skipped"));
	assert_false(kr_run_has_fail(r, "ksm-unmerge.racer.thp.not_reached"));
	assert_null(kr_run_perf(r, "ksm-unmerge.racer.thp.ops"));
	assert_float_equal(perf(r, "ksm-unmerge.racer.signal.evidence"), 3.0, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.racer.signal.merged-phase-timeouts"), 1.0, 1e-9);
	assert_false(kr_run_has_fail(r, "ksm-unmerge.racer.signal.not_reached"));
	assert_null(kr_run_perf(r, "ksm-unmerge.racer.a.ops"));
	/* latencies: --log-brief line, a bad value skipped, no samples */
	assert_float_equal(perf(r, "ksm-unmerge.latency.unmerge-millisecs.p95"), 9.5, 1e-9);
	assert_float_equal(perf(r, "ksm-unmerge.latency.unmerge-millisecs.p50"), 1.5, 1e-9);
	assert_null(kr_run_perf(r, "ksm-unmerge.latency.unmerge-millisecs.p99"));
	assert_null(kr_run_perf(r, "ksm-unmerge.latency.unmerge-millisecs.samples"));
	assert_float_equal(perf(r, "ksm-unmerge.latency.fork-microsecs.p50"), 2.0, 1e-9);
	/* kernel log: -K error and splat lines, standalone key lines */
	assert_true(kr_run_has_fail(r, "kmsg.EXT#-fs(loop#):VFS:Can't_find_ext#filesystem"));
	assert_true(kr_run_has_fail(r,
		"dmesg.Oops:general_protection_fault,probably_for_non-canonical_address#:#[##]PREEMPT_SMP_NOPTI"));
	assert_int_equal(r->n_fails, 8);
	assert_int_equal(r->lost_records, 3);
	kr_side_free(&side);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(p2), 0);
	assert_int_equal(unlink(p3), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* lines that name their key (the standalone watcher's, the core's -K)
 * win over keys derived from messages of the same output, which could
 * differ from lkp-tests' exact ones; without them the derived ones count */
static void test_klog_named_keys(void **state)
{
	char path[] = "/tmp/kr-klog-XXXXXX";
	const int fd = mkstemp(path);
	kr_run_t run;
	FILE *fp;

	(void)state;
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	assert_non_null(fp);
	fprintf(fp,
		"stress-ng: info:  [5] klog-check: warning: [2.5] 'WARNING: CPU: 1 PID: 9 at mm/ksm.c:3012 break_ksm+0x1a2/0x1c0'\n"
		"stress-ng: info:  [5] klog-check: warning: [2.6] 'general protection fault, probably for non-canonical address 0xdead: 0000 [#1] SMP'\n"
		"stress-ng: error: [5] klog-check: kernel oops: Oops:general_protection_fault,probably_for_non-canonical_address\n"
		"stress-ng: info:  [5] klog-check:   first line: general protection fault, probably for ...\n"
		"stress-ng: info:  [5] klog-check:   also: RIP:break_ksm\n"
		"stress-ng: info:  [5] klog-check: kernel cmdline: 'BOOT_IMAGE=/vmlinuz'\n"
		"stress-ng: info:  [5] klog-check: kernel-log key: WARNING:at_mm/ksm.c:#break_ksm (count 1)\n"
		"stress-ng: info:  [5] klog-check: kernel-log key: RIP:break_ksm (count 2)\n"
		"stress-ng: info:  [5] klog-check: 4 kernel log records lost (overwritten before they were read)\n");
	assert_int_equal(fclose(fp), 0);
	memset(&run, 0, sizeof(run));
	kr_apply_text(path, &run);
	assert_true(kr_run_has_fail(&run, "dmesg.WARNING:at_mm/ksm.c:#break_ksm"));
	assert_true(kr_run_has_fail(&run, "dmesg.Oops:general_protection_fault,probably_for_non-canonical_address"));
	assert_true(kr_run_has_fail(&run, "dmesg.RIP:break_ksm"));
	assert_int_equal(run.n_fails, 3);
	assert_int_equal(run.lost_records, 4);
	kr_run_free(&run);

	/* only the message lines: the keys derived from them */
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "stress-ng: info:  [5] klog-check: warning: [2.6] 'general protection fault, "
		"probably for non-canonical address 0xdead: 0000 [#1] SMP'\n");
	assert_int_equal(fclose(fp), 0);
	memset(&run, 0, sizeof(run));
	kr_apply_text(path, &run);
	assert_int_equal(run.n_fails, 1);
	assert_string_equal(run.fails[0],
		"dmesg.general_protection_fault,probably_for_non-canonical_address#:#[##]SMP");
	kr_run_free(&run);
	assert_int_equal(unlink(path), 0);
}

/* lkp-tests' dmesg ids of the splats in reference/lkp.md section 6 */
static void test_lkp_error_id(void **state)
{
	static const char *const cases[][2] = {
		{ "WARNING: CPU: 3 PID: 1234 at mm/ksm.c:2950 break_ksm+0x1a2/0x1c0",
		  "WARNING:at_mm/ksm.c:#break_ksm" },
		{ "RIP: 0010:break_ksm+0x1a2/0x1c0", "RIP:break_ksm" },
		{ "BUG: Bad rss-counter state mm:000000000fb13173 type:MM_ANONPAGES val:-1",
		  "BUG:Bad_rss-counter_state_mm:#type:MM_ANONPAGES_val" },
		{ "BUG: Bad page state in process stress-ng-ksm-u  pfn:1a2b3c",
		  "BUG:Bad_page_state_in_process" },
		{ "BUG: KASAN: use-after-free in remove_rmap_item_from_tree+0x3c/0x1d0",
		  "BUG:KASAN:use-after-free_in_remove_rmap_item_from_tree" },
		{ "INFO: task khugepaged:77 blocked for more than 122 seconds.",
		  "INFO:task_blocked_for_more_than#seconds" },
		{ "BUG: soft lockup - CPU#5 stuck for 26s! [ksmd:88]",
		  "BUG:soft_lockup-CPU##stuck_for#s![ksmd:#]" },
		{ "kernel BUG at mm/ksm.c:1234!", "kernel_BUG_at_mm/ksm.c" },
		{ "Oops: invalid opcode: 0000 [#1] PREEMPT SMP NOPTI",
		  "Oops:invalid_opcode:#[##]PREEMPT_SMP_NOPTI" },
		{ "RIP: 0010:try_to_merge_one_page+0x3f0/0x400", "RIP:try_to_merge_one_page" },
	};
	char id[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		kr_lkp_error_id(cases[i][0], id, sizeof(id));
		if (strcmp(id, cases[i][1]))
			fail_msg("'%s' -> '%s', expected '%s'", cases[i][0], id, cases[i][1]);
	}
}

/* the racer table (stub build/ksm-racers) for the fail table's legend; it
 * names no metric (the stressor has no racer rates); without the tool no
 * racer is found */
static void test_racers_table(void **state)
{
	const kr_racer_t *r;

	(void)state;
	kr_racers_free();
	r = kr_racer_find("uffd-minor");
	assert_non_null(r);
	assert_int_equal(kr_n_racers, 13);
	assert_string_equal(r->evidence, "ksm-pages-unmerged");
	assert_non_null(strstr(r->built, "not built: "));
	assert_non_null(strstr(r->description, "minor faults"));
	assert_null(kr_racer_find("nosuchracer"));
	assert_null(kr_desc_of_key("uffdminor-ops-per-sec"));

	kr_racers_free();
	assert_int_equal(setenv("KSM_REPORT_RACERS", "/nonexistent/ksm-racers", 1), 0);
	assert_null(kr_racer_find("gup"));
	kr_racers_free();
	assert_int_equal(setenv("KSM_REPORT_RACERS", KR_FIXTURES "/ksm-racers", 1), 0);
	assert_non_null(kr_racer_find("gup"));
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
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_text_lines),
		cmocka_unit_test(test_klog_named_keys),
		cmocka_unit_test(test_lkp_error_id),
		cmocka_unit_test(test_racers_table),
		cmocka_unit_test(test_compare_build),
	};

	/* the stub racer table: build/ksm-racers comes with the stressor */
	if (setenv("KSM_REPORT_RACERS", KR_FIXTURES "/ksm-racers", 1) < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
