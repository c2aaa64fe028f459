/*
 * tests/unit/test-soak.c: cmocka tests of tools/user/ksm-soak.c's pure parts:
 * kernel-log kinds, /dev/kmsg records, the innermost KSM stack frame, the
 * hang rule, stress-ng time values and the binary's -t/--timeout.
 */
#pragma GCC diagnostic ignored "-Wunused-function"
#define main ks_soak_main
#include "../../tools/user/ksm-soak.c"
#undef main

#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

/* the kinds that fail a run, and lines that look close but do not */
static void test_klog_kind(void **state)
{
	static const struct {
		const char *msg;
		const char *kind;
	} cases[] = {
		{ "WARNING: CPU: 3 PID: 1234 at mm/ksm.c:2950 break_ksm+0x1a2/0x1c0", "warning" },
		{ "  WARNING: at mm/ksm.c:1 f+0x0/0x1", "warning" },
		{ "BUG: Bad rss-counter state mm:00000000 type:MM_ANONPAGES val:-1", "BUG" },
		{ "kernel BUG at mm/ksm.c:1234!", "BUG" },
		{ "watchdog: BUG: soft lockup - CPU#5 stuck for 26s! [ksmd:88]", "lockup" },
		{ "Watchdog detected hard LOCKUP on cpu 1", "lockup" },
		{ "Oops: invalid opcode: 0000 [#1] PREEMPT SMP NOPTI", "oops" },
		{ "general protection fault, probably for non-canonical address", "oops" },
		{ "INFO: task khugepaged:77 blocked for more than 122 seconds.", "hung task" },
		{ "rcu: INFO: rcu_preempt self-detected stall on CPU", "RCU stall" },
		{ "Kernel panic - not syncing: Fatal exception", "panic" },
		{ "list_del corruption. next->prev should be ffff", "list corruption" },
		{ "------------[ cut here ]------------", NULL },
		{ "RIP: 0010:break_ksm+0x1a2/0x1c0", NULL },
		{ "systemd[1]: Started session 3 (WARNING: not a splat)", NULL },
		{ "INFO: task blocked", NULL },
		{ "", NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *kind = ks_klog_kind(cases[i].msg);

		if (!cases[i].kind && kind)
			fail_msg("'%s' is a %s", cases[i].msg, kind);
		if (cases[i].kind && (!kind || strcmp(kind, cases[i].kind)))
			fail_msg("'%s': %s, expected %s", cases[i].msg, kind ? kind : "nothing",
				cases[i].kind);
	}
}

/* /dev/kmsg records: level from the priority, time, first line only */
static void test_kmsg_parse(void **state)
{
	ks_rec_t rec;

	(void)state;
	assert_true(ks_kmsg_parse("4,1234,5678901,-;WARNING: at x\n SUBSYSTEM=foo\n", &rec));
	assert_int_equal(rec.level, 4);
	assert_int_equal(rec.usec, 5678901);
	assert_string_equal(rec.msg, "WARNING: at x");
	assert_true(ks_kmsg_parse("12,7,100,c;user record", &rec));	/* facility 1 */
	assert_int_equal(rec.level, 4);
	assert_string_equal(rec.msg, "user record");
	assert_false(ks_kmsg_parse("no header", &rec));
	assert_false(ks_kmsg_parse("4,x,1;msg", &rec));
}

/* the innermost frame whose function names KSM */
static void test_ksm_frame(void **state)
{
	char func[64];

	(void)state;
	assert_true(ks_ksm_frame("[<0>] break_ksm+0x78/0x1f0\n[<0>] unmerge_ksm_pages+0x77/0xc0\n"
		"[<0>] ksm_madvise+0x48/0xc0\n", func, sizeof(func)));
	assert_string_equal(func, "break_ksm");
	assert_true(ks_ksm_frame("[<0>] folio_wait_bit_common+0x1/0x2\n[<0>] unmerge_ksm_pages+0x77/0xc0\n",
		func, sizeof(func)));
	assert_string_equal(func, "unmerge_ksm_pages");
	assert_false(ks_ksm_frame("[<0>] do_wait+0x53/0x120\n[<0>] kernel_wait4+0xe3/0x190\n",
		func, sizeof(func)));
	assert_false(ks_ksm_frame("", func, sizeof(func)));
}

/* a hang: same function for the bound while cow_ksm stays; once */
static void test_hang_step(void **state)
{
	ks_task_t t;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_false(ks_hang_step(&t, "break_ksm", 100, 10.0, 5.0));
	assert_false(ks_hang_step(&t, "break_ksm", 100, 14.0, 5.0));
	assert_false(ks_hang_step(&t, NULL, 999, 14.5, 5.0));	/* on a CPU: no news */
	assert_true(ks_hang_step(&t, "break_ksm", 100, 15.0, 5.0));
	assert_false(ks_hang_step(&t, "break_ksm", 100, 30.0, 5.0));	/* said once */
	/* cow_ksm moved: the unmerge makes progress, the clock restarts */
	assert_false(ks_hang_step(&t, "break_ksm", 101, 31.0, 5.0));
	assert_false(ks_hang_step(&t, "break_ksm", 101, 35.0, 5.0));
	/* another function: restarts too */
	assert_false(ks_hang_step(&t, "unmerge_ksm_pages", 101, 36.0, 5.0));
	assert_false(ks_hang_step(&t, "unmerge_ksm_pages", 101, 40.0, 5.0));
	assert_true(ks_hang_step(&t, "unmerge_ksm_pages", 101, 41.0, 5.0));
	assert_true(t.seen);
}

/* stress-ng's time syntax and the binary's -t forms */
static void test_timeout(void **state)
{
	static char *a1[] = { "x", "--ksm-unmerge", "1", "-t", "60m", NULL };
	static char *a2[] = { "x", "--timeout=2h", "--times", NULL };
	static char *a3[] = { "x", "-t5", "--timeout", "7", NULL };
	static char *a4[] = { "x", "--times", "--time", "5", NULL };
	static char *a5[] = { "x", "-t", NULL };

	(void)state;
	assert_true(ks_secs_parse("90") == 90.0);
	assert_true(ks_secs_parse("2m") == 120.0);
	assert_true(ks_secs_parse("1d") == 86400.0);
	assert_true(ks_secs_parse("1y") == 31536000.0);
	assert_true(ks_secs_parse("5x") < 0.0);
	assert_true(ks_secs_parse("-5") < 0.0);
	assert_true(ks_secs_parse("") < 0.0);
	assert_true(ks_secs_parse("1mm") < 0.0);
	assert_true(ks_timeout_find(a1) == 3600.0);
	assert_true(ks_timeout_find(a2) == 7200.0);
	assert_true(ks_timeout_find(a3) == 7.0);
	assert_true(ks_timeout_find(a4) == 0.0);
	assert_true(ks_timeout_find(a5) == 0.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_klog_kind),
		cmocka_unit_test(test_kmsg_parse),
		cmocka_unit_test(test_ksm_frame),
		cmocka_unit_test(test_hang_step),
		cmocka_unit_test(test_timeout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
