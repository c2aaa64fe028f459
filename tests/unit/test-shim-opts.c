/*
 * tests/unit/test-shim-opts.c: cmocka tests of core-shim/core-opts.c: sizes,
 * times, numbers, instance count, ops split, stress_parse_opt() on the
 * dummy stressor's option table and whole command lines.  Every bad
 * input must give exactly one stderr line naming option and value.
 */
#include "test-shim-common.h"

static test_capture_t cap;
static volatile uint64_t sink;	/* keeps results of calls that must fail */

/*
 *  check_error_line()
 *	the captured stderr is one line mentioning opt and value
 */
static void check_error_line(const char *out, const char *opt,
	const char *value, const char *what)
{
	if (test_count_lines(out) != 1)
		fail_msg("%s: expected 1 stderr line, got: '%s'", what, out);
	if (opt && !strstr(out, opt))
		fail_msg("%s: '%s' not named in: %s", what, opt, out);
	if (value && !strstr(out, value))
		fail_msg("%s: value '%s' not named in: %s", what, value, out);
}

/* EXPECT_BAD(): expr must longjmp(g_error_env) after one stderr line */
#define EXPECT_BAD(expr, opt, value) do {				\
	char *out_;							\
	test_capture_begin(&cap, STDERR_FILENO);			\
	if (setjmp(g_error_env) == 0) {					\
		expr;							\
		out_ = test_capture_end(&cap);				\
		free(out_);						\
		fail_msg("no error for %s", #expr);			\
	}								\
	out_ = test_capture_end(&cap);					\
	check_error_line(out_, opt, value, #expr);			\
	free(out_);							\
} while (0)

/* EXPECT_OK(): expr must not longjmp */
#define EXPECT_OK(expr) do {						\
	if (setjmp(g_error_env) != 0)					\
		fail_msg("unexpected parse error for %s", #expr);	\
	expr;								\
} while (0)

/*
 *  reset_globals()
 *	fresh option state between tests
 */
static int reset_globals(void **state)
{
	(void)state;
	g_opt_flags = 0;
	g_opt_timeout = TIMEOUT_NOT_SET;
	g_pr_log_flags = PR_LOG_FLAGS_ERROR | PR_LOG_FLAGS_INFO;
	stress_settings_free();
	stress_shim_parse_context_set(NULL, NULL);
	return 0;
}

/*
 *  test_sizes_good()
 *	byte sizes with and without suffixes
 */
static void test_sizes_good(void **state)
{
	uint64_t v = 0;

	(void)state;
	EXPECT_OK(v = stress_get_uint64_byte("4096"));
	assert_int_equal(v, 4096);
	EXPECT_OK(v = stress_get_uint64_byte("4k"));
	assert_int_equal(v, 4096);
	EXPECT_OK(v = stress_get_uint64_byte("4K"));
	assert_int_equal(v, 4096);
	EXPECT_OK(v = stress_get_uint64_byte("3m"));
	assert_int_equal(v, 3 * MB);
	EXPECT_OK(v = stress_get_uint64_byte("2G"));
	assert_int_equal(v, 2 * GB);
	EXPECT_OK(v = stress_get_uint64_byte("1t"));
	assert_int_equal(v, 1ULL << 40);
	EXPECT_OK(v = stress_get_uint64_byte("7b"));
	assert_int_equal(v, 7);
	EXPECT_OK(v = stress_get_uint64_byte("0"));
	assert_int_equal(v, 0);
}

/*
 *  test_sizes_bad()
 *	every malformed size class
 */
static void test_sizes_bad(void **state)
{
	static const char * const bad[] = {
		"", "-1", "5x", "12Q", "1.5g", "k", "99999999999999999999",
		"99999999T", " 5", "5 ", "+5", "0x10", "4kk", "m4", "-0",
	};
	volatile size_t i;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(bad); i++) {
		stress_shim_parse_context_set("ksm-unmerge-bytes", bad[i]);
		EXPECT_BAD(sink = (uint64_t)stress_get_uint64_byte(bad[i]), "--ksm-unmerge-bytes",
			*bad[i] ? bad[i] : "''");
	}
}

/*
 *  test_times_good()
 *	times with all suffixes
 */
static void test_times_good(void **state)
{
	static const struct {
		const char *str;
		uint64_t secs;
	} good[] = {
		{ "60", 60 }, { "0", 0 }, { "10s", 10 }, { "2m", 120 },
		{ "2M", 120 }, { "1h", 3600 }, { "1d", 86400 },
		{ "1w", 604800 }, { "1y", 31536000 },
	};
	volatile size_t i;
	uint64_t v = 0;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(good); i++) {
		EXPECT_OK(v = stress_get_uint64_time(good[i].str));
		assert_int_equal(v, good[i].secs);
	}
}

/*
 *  test_times_bad()
 *	malformed times
 */
static void test_times_bad(void **state)
{
	static const char * const bad[] = {
		"5x", "12Q", "-1", "99999999T", "1.5", "m", "", "1hh",
		"999999999999999999999", "999999999999999y", "5 s",
	};
	volatile size_t i;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(bad); i++) {
		stress_shim_parse_context_set("timeout", bad[i]);
		EXPECT_BAD(sink = (uint64_t)stress_get_uint64_time(bad[i]), "--timeout",
			*bad[i] ? bad[i] : "''");
	}
}

/*
 *  test_numbers()
 *	uint64 and int64 limits
 */
static void test_numbers(void **state)
{
	uint64_t u = 0;
	int64_t s = 0;

	(void)state;
	stress_shim_parse_context_set("n", "");
	EXPECT_OK(u = stress_get_uint64("18446744073709551615"));
	assert_true(u == UINT64_MAX);
	EXPECT_BAD(sink = (uint64_t)stress_get_uint64("18446744073709551616"), "--n", "18446744073709551616");
	EXPECT_BAD(sink = (uint64_t)stress_get_uint64("12a"), "--n", "12a");
	EXPECT_BAD(sink = (uint64_t)stress_get_uint64("-3"), "--n", "-3");
	EXPECT_OK(s = stress_get_int64("-9223372036854775808"));
	assert_true(s == INT64_MIN);
	EXPECT_OK(s = stress_get_int64("-5"));
	assert_int_equal(s, -5);
	EXPECT_BAD(sink = (uint64_t)stress_get_int64("9223372036854775808"), "--n", "9223372036854775808");
	EXPECT_BAD(sink = (uint64_t)stress_get_int64("--5"), "--n", "--5");
	EXPECT_BAD(stress_check_range("n", 11, 1, 10), "--n", NULL);
	EXPECT_OK(stress_check_range("n", 10, 1, 10));
}

/*
 *  test_instances()
 *	instance count: 0 = online CPUs, percentages, limits
 */
static void test_instances(void **state)
{
	static const char * const bad[] = {
		"-1", "4097", "abc", "", "1.5", "99999999999999999999999",
		"2x", "101%", " 1",
	};
	const int32_t cpus = stress_cpus_online_get();
	int32_t n = 0;
	volatile size_t i;

	(void)state;
	EXPECT_OK(n = stress_shim_instances_parse("ksm-unmerge", "0"));
	assert_int_equal(n, cpus);
	EXPECT_OK(n = stress_shim_instances_parse("ksm-unmerge", "1"));
	assert_int_equal(n, 1);
	EXPECT_OK(n = stress_shim_instances_parse("ksm-unmerge", "4096"));
	assert_int_equal(n, 4096);
	EXPECT_OK(n = stress_shim_instances_parse("ksm-unmerge", "100%"));
	assert_int_equal(n, cpus);
	EXPECT_OK(n = stress_shim_instances_parse("ksm-unmerge", "1%"));
	assert_int_equal(n, 1);
	for (i = 0; i < SIZEOF_ARRAY(bad); i++)
		EXPECT_BAD(sink = (uint64_t)stress_shim_instances_parse("ksm-unmerge", bad[i]),
			"--ksm-unmerge", *bad[i] ? bad[i] : "''");
}

/*
 *  test_ops_share()
 *	per-instance ops shares sum exactly to the total
 */
static void test_ops_share(void **state)
{
	static const uint64_t totals[] = { 1, 2, 3, 7, 100, 101, 99999, 100000000 };
	static const uint32_t ninst[] = { 1, 2, 3, 4, 7, 64, 4096 };
	size_t i, j;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(totals); i++) {
		for (j = 0; j < SIZEOF_ARRAY(ninst); j++) {
			uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
			uint32_t k;

			for (k = 0; k < ninst[j]; k++) {
				const uint64_t s = stress_shim_ops_share(totals[i], ninst[j], k);

				sum += s;
				lo = s < lo ? s : lo;
				hi = s > hi ? s : hi;
			}
			assert_int_equal(sum, totals[i]);
			assert_true(hi - lo <= 1);
		}
	}
	assert_int_equal(stress_shim_ops_share(100, 2, 0), 50);
	assert_int_equal(stress_shim_ops_share(100, 3, 0), 34);
	assert_int_equal(stress_shim_ops_share(100, 3, 2), 33);
}

/*
 *  opt_find()
 *	the dummy stressor's option table entry by name
 */
static NOINLINE const stress_opt_t *opt_find(const char *name)
{
	const stress_opt_t *o;

	for (o = stress_ksm_unmerge_info.opts; o->opt_name; o++) {
		if (!strcmp(o->opt_name, name))
			return o;
	}
	fail_msg("no option %s", name);
	return NULL;
}

/*
 *  test_parse_opt_table()
 *	stress_parse_opt() on size, VM %, method, callback, bool, time
 */
static void test_parse_opt_table(void **state)
{
	const stress_opt_t *bytes = opt_find("ksm-unmerge-bytes");
	const stress_opt_t *method = opt_find("ksm-unmerge-method");
	const stress_opt_t *pattern = opt_find("ksm-unmerge-pattern");
	const stress_opt_t *thp = opt_find("ksm-unmerge-thp");
	const stress_opt_t *hang = opt_find("ksm-unmerge-hang-timeout");
	size_t sz = 0;
	uint32_t u32 = 0;
	bool b = false;
	int ret = -1;

	(void)state;
	EXPECT_OK(ret = stress_parse_opt("ksm-unmerge", bytes->opt_name, "1m", bytes));
	assert_int_equal(ret, 0);
	assert_true(stress_setting_get("ksm-unmerge-bytes", &sz));
	assert_int_equal(sz, MB);
	EXPECT_BAD(sink = (uint64_t)stress_parse_opt("ksm-unmerge", bytes->opt_name, "1k", bytes),
		"--ksm-unmerge-bytes", "1k");
	EXPECT_BAD(sink = (uint64_t)stress_parse_opt("ksm-unmerge", bytes->opt_name, "1e", bytes),
		"--ksm-unmerge-bytes", "1e");

	EXPECT_OK(ret = stress_parse_opt("ksm-unmerge", method->opt_name, "prctl", method));
	assert_true(stress_setting_get("ksm-unmerge-method", &sz));
	assert_int_equal(sz, 2);
	EXPECT_BAD(sink = (uint64_t)stress_parse_opt("ksm-unmerge", method->opt_name, "nope", method),
		"--ksm-unmerge-method", "nope");
	EXPECT_BAD(sink = (uint64_t)stress_parse_opt("ksm-unmerge", method->opt_name, "", method),
		"--ksm-unmerge-method", NULL);

	EXPECT_OK(ret = stress_parse_opt("ksm-unmerge", pattern->opt_name, "same", pattern));
	assert_true(stress_setting_get("ksm-unmerge-pattern", &sz));
	assert_int_equal(sz, 2);
	EXPECT_BAD(sink = (uint64_t)stress_parse_opt("ksm-unmerge", pattern->opt_name, "bogus", pattern),
		"--ksm-unmerge-pattern", "bogus");

	assert_false(stress_setting_get("ksm-unmerge-thp", &b));
	EXPECT_OK(ret = stress_parse_opt("ksm-unmerge", thp->opt_name, NULL, thp));
	assert_true(stress_setting_get("ksm-unmerge-thp", &b));
	assert_true(b);

	EXPECT_OK(ret = stress_parse_opt("ksm-unmerge", hang->opt_name, "2m", hang));
	assert_true(stress_setting_get("ksm-unmerge-hang-timeout", &u32));
	assert_int_equal(u32, 120);
	EXPECT_BAD(sink = (uint64_t)stress_parse_opt("ksm-unmerge", hang->opt_name, "2h", hang),
		"--ksm-unmerge-hang-timeout", "2h");
}

/*
 *  parse_argv()
 *	run stress_shim_opts_parse on a NULL terminated argv
 */
static NOINLINE int parse_argv(const char *const *argv, stress_shim_config_t *cfg)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return stress_shim_opts_parse(argc, (char **)argv,
		&stress_ksm_unmerge_info, "ksm-unmerge", cfg);
}

/*
 *  free_phys()
 *	stress-ng's base of "N%" for *_BYTES_VM: free physical memory,
 *	sysconf(_SC_AVPHYS_PAGES) pages (not MemAvailable)
 */
static uint64_t free_phys(void)
{
	return (uint64_t)sysconf(_SC_AVPHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
}

/*
 *  assert_share()
 *	v is pct% of the free memory read just before (lo) and after (hi)
 *	the parse, with 1% slack for memory freed or taken meanwhile
 */
static void assert_share(const uint64_t v, const double pct, uint64_t lo, uint64_t hi)
{
	const double min = (double)(lo < hi ? lo : hi) * pct / 100.0 * 0.99;
	const double max = (double)(lo < hi ? hi : lo) * pct / 100.0 * 1.01;

	if (((double)v < min) || ((double)v > max))
		fail_msg("%.1f%% gave %" PRIu64 " bytes, expected %.0f .. %.0f (free memory "
			"%" PRIu64 " .. %" PRIu64 ", MemAvailable %" PRIu64 ")", pct, v,
			min, max, lo, hi, stress_memory_available_get());
}

/*
 *  test_bytes_vm_percent()
 *	"N%" of a *_BYTES_VM option is stress-ng's: N% of free physical
 *	memory, the total for all instances (the stressor divides it), over
 *	100% allowed; malformed percentages are one error line
 */
static void test_bytes_vm_percent(void **state)
{
	static const char *argv[] = {
		"x", "--ksm-unmerge", "4", "--ksm-unmerge-bytes", "50%", NULL,
	};
	static const char * const bad[] = { "%", "x%", "5%%", "-5%", "1.%", "5 %", ".5%" };
	const stress_opt_t *bytes = opt_find("ksm-unmerge-bytes");
	stress_shim_config_t cfg;
	uint64_t lo, hi;
	size_t sz = 0;
	int ret = -1;
	volatile size_t i;

	(void)state;
	lo = free_phys();
	EXPECT_OK(ret = stress_parse_opt("ksm-unmerge", bytes->opt_name, "50%", bytes));
	hi = free_phys();
	assert_int_equal(ret, 0);
	assert_true(stress_setting_get("ksm-unmerge-bytes", &sz));
	assert_share(sz, 50.0, lo, hi);

	lo = free_phys();
	EXPECT_OK(ret = stress_parse_opt("ksm-unmerge", bytes->opt_name, "12.5%", bytes));
	hi = free_phys();
	assert_true(stress_setting_get("ksm-unmerge-bytes", &sz));
	assert_share(sz, 12.5, lo, hi);

	/* stress-ng takes more than 100%; the option's max still applies */
	lo = free_phys();
	EXPECT_OK(ret = stress_parse_opt("ksm-unmerge", bytes->opt_name, "200%", bytes));
	hi = free_phys();
	assert_true(stress_setting_get("ksm-unmerge-bytes", &sz));
	assert_share(sz, 200.0, lo, hi);

	/* with 4 instances the setting is still the total, not a quarter */
	reset_globals(NULL);
	lo = free_phys();
	EXPECT_OK(ret = parse_argv(argv, &cfg));
	hi = free_phys();
	assert_int_equal(cfg.instances, 4);
	assert_true(stress_setting_get("ksm-unmerge-bytes", &sz));
	assert_share(sz, 50.0, lo, hi);

	for (i = 0; i < SIZEOF_ARRAY(bad); i++)
		EXPECT_BAD(sink = (uint64_t)stress_parse_opt("ksm-unmerge", bytes->opt_name,
			bad[i], bytes), "--ksm-unmerge-bytes", bad[i]);
}

/*
 *  test_cmdline_0day()
 *	the lkp/0-day command line parses with the right flags
 */
static void test_cmdline_0day(void **state)
{
	static const char *argv[] = {
		"stress-ksm-unmerge", "--timeout", "60", "--times", "--verify",
		"--metrics", "--no-rand-seed", "--ksm-unmerge-method", "all",
		"--ksm-unmerge", "2", NULL,
	};
	stress_shim_config_t cfg;
	size_t method = 99;
	int ret = -1;

	(void)state;
	EXPECT_OK(ret = parse_argv(argv, &cfg));
	assert_int_equal(ret, 0);
	assert_int_equal(cfg.instances, 2);
	assert_true(cfg.timeout_set);
	assert_int_equal(g_opt_timeout, 60);
	assert_true(g_opt_flags & OPT_FLAGS_TIMES);
	assert_true(g_opt_flags & OPT_FLAGS_VERIFY);
	assert_true(g_opt_flags & OPT_FLAGS_METRICS);
	assert_false(g_opt_flags & OPT_FLAGS_METRICS_BRIEF);
	assert_true(g_opt_flags & OPT_FLAGS_NO_RAND_SEED);
	assert_true(stress_setting_get("ksm-unmerge-method", &method));
	assert_int_equal(method, 0);
	assert_false(cfg.ops_set);
}

/*
 *  test_cmdline_misc()
 *	short options, ops, yaml, quiet, brief
 */
static void test_cmdline_misc(void **state)
{
	static const char *argv[] = {
		"x", "-t", "5m", "-Y", "/tmp/out.yaml", "--metrics-brief", "-K",
		"--ksm-unmerge-ops", "100", "--ksm-unmerge", "0", "-q",
		"--ksm-unmerge-thp", "--skip-silent", "--log-brief", NULL,
	};
	stress_shim_config_t cfg;
	int ret = -1;

	(void)state;
	EXPECT_OK(ret = parse_argv(argv, &cfg));
	assert_int_equal(ret, 0);
	assert_int_equal(g_opt_timeout, 300);
	assert_string_equal(cfg.yaml_filename, "/tmp/out.yaml");
	assert_true(g_opt_flags & OPT_FLAGS_METRICS_BRIEF);
	assert_true(g_opt_flags & OPT_FLAGS_METRICS);
	assert_true(g_opt_flags & OPT_FLAGS_KLOG_CHECK);
	assert_true(g_opt_flags & OPT_FLAGS_SKIP_SILENT);
	assert_true(cfg.ops_set);
	assert_int_equal(cfg.ops, 100);
	assert_int_equal(cfg.instances, stress_cpus_online_get());
	assert_false(g_pr_log_flags & (PR_LOG_FLAGS_INFO | PR_LOG_FLAGS_METRICS));
	assert_true(g_pr_log_flags & PR_LOG_FLAGS_BRIEF);
}

/*
 *  test_cmdline_bad()
 *	whole bad command lines: one stderr line each
 */
static void test_cmdline_bad(void **state)
{
	static const struct {
		const char *argv[6];
		const char *opt;
		const char *value;
	} bad[] = {
		{ { "x", "--ksm-unmerge", "1", "--bogus", NULL }, "--bogus", NULL },
		{ { "x", "--ksm-unmerge", NULL }, "--ksm-unmerge", NULL },
		{ { "x", "--ksm-unmerge", "1", "-t", NULL }, "-t", NULL },
		{ { "x", "--ksm-unmerge", "1", "-t", "5x", NULL }, "--timeout", "5x" },
		{ { "x", "--ksm-unmerge", "-1", NULL }, "--ksm-unmerge", "-1" },
		{ { "x", "--ksm-unmerge", "1", "extra", NULL }, "extra", NULL },
		{ { "x", "--timeout", "5", NULL }, "--ksm-unmerge", NULL },
		{ { "x", "--ksm-unmerge", "1", "--metrics=3", NULL }, "--metrics", NULL },
		{ { "x", "--ksm-unmerge", "1", "--ksm-unmerge-ops", "0", NULL },
		  "--ksm-unmerge-ops", "0" },
		{ { "x", "--ksm-unmerge", "1", "--temp-path", "/nonexistent", NULL },
		  "--temp-path", "/nonexistent" },
		{ { "x", "--ksm-unmerge", "1", "-Y", "", NULL }, "--yaml", NULL },
		{ { "x", "--ksm-unmerge", "1", "-x", NULL }, "-x", NULL },
		{ { "x", "--ksm-unmerge", "1", "--tim", "5", NULL }, "--tim", NULL },
	};
	volatile size_t i;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(bad); i++) {
		stress_shim_config_t cfg;

		reset_globals(NULL);
		EXPECT_BAD(sink = (uint64_t)parse_argv(bad[i].argv, &cfg), bad[i].opt, bad[i].value);
	}
}

/*
 *  test_help()
 *	-h prints the global options and the stressor's help rows
 */
static void test_help(void **state)
{
	static const char *argv[] = { "x", "-h", NULL };
	stress_shim_config_t cfg;
	char *out;
	int ret = -1;

	(void)state;
	test_capture_begin(&cap, STDOUT_FILENO);
	EXPECT_OK(ret = parse_argv(argv, &cfg));
	out = test_capture_end(&cap);
	assert_int_equal(ret, 1);
	assert_non_null(strstr(out, "--timeout T"));
	assert_non_null(strstr(out, "--metrics-brief"));
	assert_non_null(strstr(out, "--klog-check"));
	assert_non_null(strstr(out, "--ksm-unmerge-method M"));
	assert_non_null(strstr(out, "--ksm-unmerge-ops N"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_sizes_good, reset_globals),
		cmocka_unit_test_setup(test_sizes_bad, reset_globals),
		cmocka_unit_test_setup(test_times_good, reset_globals),
		cmocka_unit_test_setup(test_times_bad, reset_globals),
		cmocka_unit_test_setup(test_numbers, reset_globals),
		cmocka_unit_test_setup(test_instances, reset_globals),
		cmocka_unit_test_setup(test_ops_share, reset_globals),
		cmocka_unit_test_setup(test_parse_opt_table, reset_globals),
		cmocka_unit_test_setup(test_bytes_vm_percent, reset_globals),
		cmocka_unit_test_setup(test_cmdline_0day, reset_globals),
		cmocka_unit_test_setup(test_cmdline_misc, reset_globals),
		cmocka_unit_test_setup(test_cmdline_bad, reset_globals),
		cmocka_unit_test_setup(test_help, reset_globals),
	};

	return cmocka_run_group_tests(tests, NULL, reset_globals);
}
