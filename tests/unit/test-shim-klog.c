/*
 * tests/unit/test-shim-klog.c: cmocka tests of the --klog-check record
 * classification (stress-ng 0.22 rules) in klog/klog-check.c.
 */
#include "test-shim-common.h"

/*
 *  classify()
 *	classify a copy of rec, return class and kind
 */
static stress_klog_class_t classify(const char *rec, const char **kind,
	char *ts, const char **msg)
{
	static char buf[1024];

	(void)snprintf(buf, sizeof(buf), "%s", rec);
	*kind = "";
	*msg = "";
	return stress_klog_classify(buf, kind, ts, 48, msg);
}

/*
 *  test_levels()
 *	prefix 0..3 error, 4 info, 5..7 and every facility but the kernel's
 *	ignored
 */
static void test_levels(void **state)
{
	static const struct {
		const char *rec;
		stress_klog_class_t cls;
		const char *kind;
	} cases[] = {
		{ "0,1,100,-;boom", STRESS_KLOG_ERROR, "emergency" },
		{ "1,2,100,-;boom", STRESS_KLOG_ERROR, "alert" },
		{ "2,3,100,-;kernel BUG at mm/ksm.c:123!", STRESS_KLOG_ERROR, "critical" },
		{ "3,4,773584114,-;EXT4-fs (loop0): VFS: Can't find ext4 filesystem", STRESS_KLOG_ERROR, "error" },
		{ "4,5,100,-;WARNING: CPU: 1 PID: 2 at mm/ksm.c:99 break_ksm+0x1/0x2", STRESS_KLOG_INFO, "warning" },
		{ "5,6,100,-;notice", STRESS_KLOG_IGNORE, "" },
		{ "6,7,100,-;info", STRESS_KLOG_IGNORE, "" },
		{ "7,8,100,-;debug", STRESS_KLOG_IGNORE, "" },
		{ "11,9,100,-;user space <3> message", STRESS_KLOG_IGNORE, "" },
		/* kernel records only: user space text never fails a run */
		{ "8,21,100,-;watchdog: BUG: soft lockup - CPU#1 stuck for 22s!", STRESS_KLOG_IGNORE, "" },
		{ "11,22,100,-;watchdog: Watchdog detected hard LOCKUP on cpu 1", STRESS_KLOG_IGNORE, "" },
		{ "12,23,100,-;WARNING: CPU: 1 PID: 2 at mm/ksm.c:99 break_ksm+0x1/0x2", STRESS_KLOG_IGNORE, "" },
		{ "9,24,100,-;BUG: Bad page state in process x", STRESS_KLOG_IGNORE, "" },
		{ "27,25,100,-;Out of memory: Killed process 123 (x)", STRESS_KLOG_IGNORE, "" },
		{ "3,10,100,-;INFO: task x blocked for more than 120 seconds.", STRESS_KLOG_INFO, "hung task" },
		{ "0,11,100,-;watchdog: BUG: soft lockup - CPU#1 stuck for 22s!", STRESS_KLOG_ERROR, "soft lockup" },
		{ "0,12,100,-;watchdog: Watchdog detected hard LOCKUP on cpu 1", STRESS_KLOG_ERROR, "hard lockup" },
		{ "3,13,100,-;Out of memory: Killed process 123 (x)", STRESS_KLOG_INFO, "out of memory" },
		{ "6,14,100,-;x invoked oom-killer OOM", STRESS_KLOG_INFO, "out of memory" },
		{ "3,15,100,-;audit: type=1400", STRESS_KLOG_INFO, "audit" },
		{ "3,16,100,-;CPU0: Core temperature above threshold, cpu clock throttled", STRESS_KLOG_INFO, "CPU throttling" },
		{ "3,17,100,-;Buffer I/O error on dev loop0, logical block 0", STRESS_KLOG_IGNORE, "error" },
		{ "3,18,100,-;foo: 5 callbacks suppressed", STRESS_KLOG_IGNORE, "error" },
		{ "4,19,100,-;x86/split lock detection: #AC", STRESS_KLOG_IGNORE, "warning" },
		{ "3,20,100,-;BUG: Bad page state in process x", STRESS_KLOG_ERROR, "error" },
		{ "garbage without separator", STRESS_KLOG_IGNORE, "" },
		{ "x,y,z;bad header", STRESS_KLOG_IGNORE, "" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(cases); i++) {
		const char *kind, *msg;
		char ts[48];
		const stress_klog_class_t cls = classify(cases[i].rec, &kind, ts, &msg);

		if (cls != cases[i].cls)
			fail_msg("'%s': class %d, expected %d", cases[i].rec, cls, cases[i].cls);
		if (cls != STRESS_KLOG_IGNORE)
			assert_string_equal(kind, cases[i].kind);
	}
}

/*
 *  test_format()
 *	time stamp and message extraction, \x0a unescaping
 */
static void test_format(void **state)
{
	const char *kind, *msg;
	char ts[48];

	(void)state;
	assert_int_equal(classify("3,4,773584114,-;line one\\x0aline two\n", &kind, ts, &msg),
		STRESS_KLOG_ERROR);
	assert_string_equal(ts, "[773.584114]");
	assert_string_equal(msg, "line one line two");
	assert_int_equal(classify("2,5,5,c;x", &kind, ts, &msg), STRESS_KLOG_ERROR);
	assert_string_equal(ts, "[0.000005]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
