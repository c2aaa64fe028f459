/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-klog.c: cmocka tests of the kernel-log watcher fragment:
 * the corpora in tests/data/corpus/klog (keys as LKP names them, event
 * counts, noise), /dev/kmsg record parsing, escapes, continuation
 * records, lost records, facilities, reports, taint letters and taint
 * diffs (with an injected tainted file), and the YAML section.
 *
 * pr_*() and the few core helpers the fragment calls are stubbed here
 * so the log lines can be asserted.
 */
#include "stress-ng.h"
#include "core-builtin.h"
#include <poll.h>
#include <sys/prctl.h>
#include "stress-ksm-unmerge-klog.h"	/* the stressor's kernel-log watcher */

#include <dirent.h>
#include <stdarg.h>
#include <setjmp.h>
#include <time.h>
#include <cmocka.h>

static char test_out[1 << 16];		/* captured pr_* output */
static size_t test_out_len;
static char test_yaml_name[64];
static char test_yaml_body[8192];

/*
 *  test_capture()
 *	append a formatted pr_* line to the capture buffer
 */
static void test_capture(const char *type, const char *fmt, va_list ap)
{
	int n;

	n = snprintf(test_out + test_out_len, sizeof(test_out) - test_out_len, "%s: ", type);
	if (n > 0)
		test_out_len += (size_t)n;
	if (test_out_len >= sizeof(test_out))
		test_out_len = sizeof(test_out) - 1;
	n = vsnprintf(test_out + test_out_len, sizeof(test_out) - test_out_len, fmt, ap);
	if (n > 0)
		test_out_len += (size_t)n;
	if (test_out_len >= sizeof(test_out))
		test_out_len = sizeof(test_out) - 1;
}

#define TEST_PR(fn, type)				\
void fn(const char *fmt, ...)				\
{							\
	va_list ap;					\
							\
	va_start(ap, fmt);				\
	test_capture(type, fmt, ap);			\
	va_end(ap);					\
}

TEST_PR(pr_dbg, "debug")
TEST_PR(pr_inf, "info")
TEST_PR(pr_err, "error")
TEST_PR(pr_fail, "fail")

/* stub: pr_block_begin() */
void pr_block_begin(void)
{
}

/* stub: pr_block_end() */
void pr_block_end(void)
{
}

/* stub: stress_time_now() */
double stress_time_now(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* the runner's continue flag, read by the shim's sleep wrapper */
volatile bool g_stress_continue_flag = true;

/* stub: stress_yaml_extra_add() */
void stress_yaml_extra_add(const char *name, const char *yaml_body)
{
	(void)snprintf(test_yaml_name, sizeof(test_yaml_name), "%s", name);
	(void)snprintf(test_yaml_body, sizeof(test_yaml_body), "%s", yaml_body);
}

/*
 *  test_reset()
 *	fresh shared + watcher state, empty capture
 */
static void test_reset(void)
{
	if (!stress_ksm_unmerge_klog_shm)
		assert_int_equal(stress_ksm_unmerge_klog_shm_init(), 0);
	(void)memset(stress_ksm_unmerge_klog_shm, 0, sizeof(*stress_ksm_unmerge_klog_shm));
	stress_ksm_unmerge_klog_shm->status = STRESS_KSM_UNMERGE_KLOG_STATUS_OK;
	stress_ksm_unmerge_klog_shm->watcher = -1;
	stress_ksm_unmerge_klog_shm->time_start = stress_time_now();
	(void)memset(&stress_ksm_unmerge_klog_state, 0, sizeof(stress_ksm_unmerge_klog_state));
	stress_ksm_unmerge_klog_taint_path = STRESS_KSM_UNMERGE_KLOG_TAINTED;
	test_out_len = 0;
	test_out[0] = '\0';
}

/*
 *  test_feed()
 *	feed one record string (must parse)
 */
static void test_feed(const char *rec)
{
	assert_int_equal(stress_ksm_unmerge_klog_feed(rec, strlen(rec), stress_time_now()), 0);
}

/*
 *  test_has_key()
 *	count of a key in the shared table, 0 if absent
 */
static uint32_t test_has_key(const char *key)
{
	uint32_t i;

	for (i = 0; i < stress_ksm_unmerge_klog_shm->nkeys; i++)
		if (!strcmp(stress_ksm_unmerge_klog_shm->keys[i].key, key))
			return stress_ksm_unmerge_klog_shm->keys[i].count;
	return 0;
}

/*
 *  test_corpus_dir()
 *	find tests/data/corpus/klog from the repo root, tests/ or tests/unit/
 */
static const char *test_corpus_dir(void)
{
	static const char * const dirs[] = {
		"tests/data/corpus/klog", "data/corpus/klog", "../data/corpus/klog",
	};
	const char *env = getenv("KLOG_CORPUS");
	size_t i;

	if (env)
		return env;
	for (i = 0; i < SIZEOF_ARRAY(dirs); i++) {
		struct stat st;

		if (!stat(dirs[i], &st) && S_ISDIR(st.st_mode))
			return dirs[i];
	}
	return NULL;
}

typedef struct {
	char keys[16][STRESS_KSM_UNMERGE_KLOG_KEY_LEN];
	int nkeys;
	int events;
} test_expect_t;

/*
 *  test_corpus_file()
 *	feed one corpus file and check events and the exact key set
 */
static void test_corpus_file(const char *path, int *nsig, int *nnoise)
{
	FILE *fp = fopen(path, "r");
	static char line[16384], rec[16384];
	test_expect_t exp;
	size_t reclen = 0;
	int i;

	assert_non_null(fp);
	(void)memset(&exp, 0, sizeof(exp));
	exp.events = -1;
	test_reset();
	rec[0] = '\0';
	while (fgets(line, sizeof(line), fp)) {
		size_t n = strlen(line);

		if (n && (line[n - 1] == '\n'))
			line[--n] = '\0';
		if (!strncmp(line, "# expected-key: ", 16)) {
			assert_true(exp.nkeys < 16);
			(void)shim_strscpy(exp.keys[exp.nkeys++], line + 16, STRESS_KSM_UNMERGE_KLOG_KEY_LEN);
			continue;
		}
		if (!strncmp(line, "# expected-events: ", 19)) {
			exp.events = atoi(line + 19);
			continue;
		}
		if (line[0] == '#')
			continue;
		if (line[0] == ' ') {		/* " KEY=value" dictionary line of the last record */
			assert_true(reclen + n + 2 < sizeof(rec));
			rec[reclen++] = '\n';
			(void)memcpy(rec + reclen, line, n + 1);
			reclen += n;
			continue;
		}
		if (reclen)
			test_feed(rec);
		(void)memcpy(rec, line, n + 1);
		reclen = n;
	}
	if (reclen)
		test_feed(rec);
	(void)fclose(fp);
	stress_ksm_unmerge_klog_idle(stress_time_now(), true);

	assert_true(exp.events >= 0);
	if ((int)stress_ksm_unmerge_klog_events() != exp.events)
		fail_msg("%s: %u events, expected %d\n%s", path, stress_ksm_unmerge_klog_events(),
			exp.events, test_out);
	for (i = 0; i < exp.nkeys; i++)
		if (!test_has_key(exp.keys[i]))
			fail_msg("%s: key '%s' not found\n%s", path, exp.keys[i], test_out);
	if ((int)stress_ksm_unmerge_klog_shm->nkeys != exp.nkeys) {
		for (i = 0; i < (int)stress_ksm_unmerge_klog_shm->nkeys; i++)
			print_message("  got key %s\n", stress_ksm_unmerge_klog_shm->keys[i].key);
		fail_msg("%s: %u keys, expected %d", path, stress_ksm_unmerge_klog_shm->nkeys, exp.nkeys);
	}
	if (exp.events) {
		char want[256];

		/* the first key is the event's primary key and is reported by name */
		assert_string_equal(stress_ksm_unmerge_klog_shm->keys[0].key, exp.keys[0]);
		(void)snprintf(want, sizeof(want), ": %s\n", exp.keys[0]);
		if (!strstr(test_out, "fail: ksm-unmerge: kernel ") || !strstr(test_out, want))
			fail_msg("%s: no report line for %s\n%s", path, exp.keys[0], test_out);
		(*nsig)++;
	} else {
		assert_int_equal(test_out_len, 0);
		(*nnoise)++;
	}
}

/*
 *  test_corpus()
 *	every corpus file: >= 25 signatures and >= 5 noise files pass
 */
static void test_corpus(void **state)
{
	const char *dir = test_corpus_dir();
	struct dirent **names;
	int n, i, nsig = 0, nnoise = 0;

	(void)state;
	if (!dir)
		fail_msg("corpus directory tests/data/corpus/klog not found (set KLOG_CORPUS)");
	n = scandir(dir, &names, NULL, alphasort);
	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		char path[PATH_MAX];
		const size_t l = strlen(names[i]->d_name);

		if ((l > 4) && !strcmp(names[i]->d_name + l - 4, ".txt")) {
			(void)snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			test_corpus_file(path, &nsig, &nnoise);
		}
		free(names[i]);
	}
	free(names);
	print_message("  corpus: %d signature files, %d noise files\n", nsig, nnoise);
	assert_true(nsig >= 25);
	assert_true(nnoise >= 5);
}

/*
 *  test_record_parse()
 *	header fields, dictionary lines, caller field, malformed headers
 */
static void test_record_parse(void **state)
{
	static const char * const bad[] = {
		"", ";msg", "4;msg", "4,1;msg", "4,1,2;msg", "4,1,2,;msg", "a,1,2,-;msg",
		"4,x,2,-;msg", "4,1,2x,-;msg", "4,1,2,-x;msg", "4,1,2,-", "4,,2,-;msg",
		"1024,1,2,-;msg", "-4,1,2,-;msg", "4,99999999999999999999,2,-;msg",
		"4 ,1,2,-;msg",
	};
	const char *rec = "12,345,449457362,-;klog-probe: prefix4\n SUBSYSTEM=pci\n DEVICE=+pci:0000:00:00.0\n";
	const char *msg;
	size_t msglen, i;
	uint64_t seq, usec;
	int level, fac;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_klog_record_parse(rec, strlen(rec), &level, &seq, &usec,
		&fac, &msg, &msglen), 0);
	assert_int_equal(level, 4);
	assert_int_equal(fac, 1);
	assert_int_equal(seq, 345);
	assert_int_equal(usec, 449457362);
	assert_int_equal(msglen, strlen("klog-probe: prefix4"));
	assert_memory_equal(msg, "klog-probe: prefix4", msglen);

	rec = "6,7,8,c,caller=T123;hello";
	assert_int_equal(stress_ksm_unmerge_klog_record_parse(rec, strlen(rec), &level, &seq, &usec,
		&fac, &msg, &msglen), 0);
	assert_int_equal(stress_ksm_unmerge_klog_record_flag(rec, strlen(rec)), 'c');
	assert_int_equal(stress_ksm_unmerge_klog_record_flag("4,1,2,+;x", 9), '+');
	assert_int_equal(stress_ksm_unmerge_klog_record_flag("4,1,2,-,caller=C1;x", 19), '-');
	assert_int_equal(level, 6);
	assert_int_equal(fac, 0);
	assert_int_equal(msglen, 5);

	/* no trailing newline, empty message, only the length given counts */
	rec = "3,1,2,-;";
	assert_int_equal(stress_ksm_unmerge_klog_record_parse(rec, strlen(rec), &level, NULL, NULL,
		NULL, &msg, &msglen), 0);
	assert_int_equal(msglen, 0);
	assert_int_equal(stress_ksm_unmerge_klog_record_parse("3,1,2,-;abc", 5, NULL, NULL, NULL,
		NULL, NULL, NULL), -1);
	assert_int_equal(stress_ksm_unmerge_klog_record_parse(NULL, 0, NULL, NULL, NULL,
		NULL, NULL, NULL), -1);

	for (i = 0; i < SIZEOF_ARRAY(bad); i++) {
		if (stress_ksm_unmerge_klog_record_parse(bad[i], strlen(bad[i]), &level, &seq, &usec,
				&fac, &msg, &msglen) != -1)
			fail_msg("malformed header accepted: '%s'", bad[i]);
	}
}

/*
 *  test_unescape()
 *	\xNN decoding, control chars, broken escapes, truncation
 */
static void test_unescape(void **state)
{
	char out[64];
	size_t n;

	(void)state;
	n = stress_ksm_unmerge_klog_unescape("a\\x0ab\\x09c\\x5cd", 16, out, sizeof(out));
	assert_string_equal(out, "a\nb c\\d");
	assert_int_equal(n, 7);
	n = stress_ksm_unmerge_klog_unescape("x\\x4", 4, out, sizeof(out));
	assert_string_equal(out, "x\\x4");
	n = stress_ksm_unmerge_klog_unescape("\\xzz\\x7f\\x00!", 13, out, sizeof(out));
	assert_string_equal(out, "\\xzz  !");
	n = stress_ksm_unmerge_klog_unescape("abcdef", 6, out, 4);
	assert_string_equal(out, "abc");
	assert_int_equal(n, 3);
	assert_int_equal(stress_ksm_unmerge_klog_unescape("abc", 3, out, 0), 0);
}

/*
 *  test_escaped_newline()
 *	a record holding a WARN and its RIP line separated by \x0a
 */
static void test_escaped_newline(void **state)
{
	(void)state;
	test_reset();
	test_feed("4,1,100,-;WARNING: CPU: 0 PID: 1 at mm/ksm.c:10 break_ksm+0x1/0x2\\x0aRIP: 0010:break_ksm+0x1/0x2");
	stress_ksm_unmerge_klog_idle(stress_time_now(), true);
	assert_int_equal(stress_ksm_unmerge_klog_events(), 1);
	assert_int_equal(test_has_key("WARNING:at_mm/ksm.c:#break_ksm"), 1);
	assert_int_equal(test_has_key("RIP:break_ksm"), 1);
	assert_non_null(strstr(test_out, "function at RIP: break_ksm\n"));
}

/*
 *  test_continuation()
 *	legacy '+' and 6.x 'c' fragments join the previous record
 */
static void test_continuation(void **state)
{
	(void)state;
	test_reset();
	test_feed("4,1,100,-;BUG: Bad rss-counter ");
	test_feed("4,2,101,+;state mm:00000000deadbeef ");
	test_feed("4,3,102,c;type:MM_ANONPAGES val:-1");
	test_feed("6,4,103,-;unrelated");
	stress_ksm_unmerge_klog_idle(stress_time_now(), true);
	assert_int_equal(stress_ksm_unmerge_klog_events(), 1);
	assert_int_equal(test_has_key("BUG:Bad_rss-counter_state_mm:#type:MM_ANONPAGES_val"), 1);

	/* a fragment from another facility does not join */
	test_reset();
	test_feed("4,1,100,-;BUG: Bad rss-counter");
	test_feed("28,2,101,c; state mm:00000000deadbeef type:MM_ANONPAGES val:-1");
	stress_ksm_unmerge_klog_idle(stress_time_now(), true);
	assert_int_equal(test_has_key("BUG:Bad_rss-counter"), 1);
}

/*
 *  test_lost_records()
 *	sequence gaps (after EPIPE) are counted as lost records
 */
static void test_lost_records(void **state)
{
	char yaml[1024];

	(void)state;
	test_reset();
	test_feed("6,10,1,-;a");
	test_feed("6,11,2,-;b");
	test_feed("6,16,3,-;c");
	test_feed("6,17,4,-;d");
	assert_int_equal(stress_ksm_unmerge_klog_shm->lost, 4);
	assert_int_equal(stress_ksm_unmerge_klog_shm->records, 4);
	(void)stress_ksm_unmerge_klog_yaml(yaml, sizeof(yaml));
	assert_non_null(strstr(yaml, "    lost-records: 4\n"));
	assert_int_equal(stress_ksm_unmerge_klog_feed("garbage", 7, 0.0), -1);
}

/*
 *  test_facilities()
 *	kernel and LOG_USER are watched, daemon and up are not
 */
static void test_facilities(void **state)
{
	static const int facs[] = { 2, 3, 4, 10, 16, 23 };
	char rec[256];
	size_t i;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(facs); i++) {
		test_reset();
		(void)snprintf(rec, sizeof(rec), "%d,1,1,-;kernel BUG at mm/ksm.c:1!", facs[i] * 8 + 2);
		test_feed(rec);
		stress_ksm_unmerge_klog_idle(stress_time_now(), true);
		assert_int_equal(stress_ksm_unmerge_klog_events(), 0);
	}
	test_reset();
	test_feed("10,1,1,-;kernel BUG at mm/ksm.c:1!");
	stress_ksm_unmerge_klog_idle(stress_time_now(), true);
	assert_int_equal(stress_ksm_unmerge_klog_events(), 1);
	assert_non_null(strstr(test_out, "(injected from user space, facility 1)"));
	test_reset();
	test_feed("2,1,1,-;kernel BUG at mm/ksm.c:1!");
	stress_ksm_unmerge_klog_idle(stress_time_now(), true);
	assert_int_equal(stress_ksm_unmerge_klog_events(), 1);
	assert_null(strstr(test_out, "injected"));
}

/*
 *  test_classify()
 *	kinds, keys, noise, leading blanks, NULL/short key buffers
 */
static void test_classify(void **state)
{
	static const struct {
		const char *msg;
		int kind;
		const char *key;
	} cases[] = {
		{ "WARNING: CPU: 3 PID: 1234 at mm/ksm.c:2950 break_ksm+0x1a2/0x1c0",
		  STRESS_KSM_UNMERGE_KLOG_WARNING, "WARNING:at_mm/ksm.c:#break_ksm" },
		{ "  BUG: soft lockup - CPU#5 stuck for 26s! [ksmd:88]",
		  STRESS_KSM_UNMERGE_KLOG_LOCKUP, "BUG:soft_lockup-CPU##stuck_for#s![ksmd:#]" },
		{ "WARNING: mm/ksm.c:3012 at break_ksm+0x1a2/0x1c0, CPU#1: stress/42",
		  STRESS_KSM_UNMERGE_KLOG_WARNING, "WARNING:mm/ksm.c:#at_break_ksm,CPU##:stress" },
		{ "Kernel panic - not syncing: Out of memory and no killable processes...",
		  STRESS_KSM_UNMERGE_KLOG_PANIC, "Kernel_panic-not_syncing:Out_of_memory_and_no_killable_processes" },
		{ "BUG: workqueue lockup - pool cpus=1 node=0 flags=0x0 nice=0 stuck for 31s!",
		  STRESS_KSM_UNMERGE_KLOG_LOCKUP, "BUG:workqueue_lockup-pool" },
		{ "KASAN: null-ptr-deref in range [0x0000000000000008-0x000000000000000f]",
		  STRESS_KSM_UNMERGE_KLOG_SANITIZER, "KASAN:null-ptr-deref_in_range[#-#]" },
		{ "Unable to handle kernel paging request at virtual address dead000000000108",
		  STRESS_KSM_UNMERGE_KLOG_OOPS, "Unable_to_handle_kernel_paging_request_at_virtual_address" },
		{ "Out of memory: Killed process 4242 (stress-ng)", STRESS_KSM_UNMERGE_KLOG_NOISE, "" },
		{ "stress-ng invoked oom-killer: gfp_mask=0x140dca", STRESS_KSM_UNMERGE_KLOG_NOISE, "" },
		{ "oom-kill:constraint=CONSTRAINT_NONE", STRESS_KSM_UNMERGE_KLOG_NOISE, "" },
		{ "audit: type=1400 audit(1.2:3): BUG: x", STRESS_KSM_UNMERGE_KLOG_NOISE, "" },
		{ "WARNING: disk is full", STRESS_KSM_UNMERGE_KLOG_NOISE, "" },
		{ "the BUG: here is mid-line", STRESS_KSM_UNMERGE_KLOG_NOISE, "" },
		{ "", STRESS_KSM_UNMERGE_KLOG_NOISE, "" },
	};
	char key[STRESS_KSM_UNMERGE_KLOG_KEY_LEN], tiny[8];
	size_t i;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(cases); i++) {
		const int kind = stress_ksm_unmerge_klog_classify(cases[i].msg, key, sizeof(key));

		if ((kind != cases[i].kind) || strcmp(key, cases[i].key))
			fail_msg("'%s': kind %d key '%s', expected %d '%s'", cases[i].msg,
				kind, key, cases[i].kind, cases[i].key);
	}
	assert_int_equal(stress_ksm_unmerge_klog_classify(NULL, key, sizeof(key)), 0);
	assert_int_equal(stress_ksm_unmerge_klog_classify("kernel BUG at mm/ksm.c:1!", NULL, 0),
		STRESS_KSM_UNMERGE_KLOG_BUG);
	assert_int_equal(stress_ksm_unmerge_klog_classify("kernel BUG at mm/ksm.c:1!", tiny, sizeof(tiny)),
		STRESS_KSM_UNMERGE_KLOG_BUG);
	assert_string_equal(tiny, "kernel_");
}

/*
 *  test_report()
 *	report lines: first line, RIP, <= 20 trace lines, "?" skipped, contexts
 */
static void test_report(void **state)
{
	char rec[256];
	int i;
	uint64_t seq = 1;
	const char *p;
	int ntrace = 0;

	(void)state;
	test_reset();
	stress_ksm_unmerge_klog_context_set(0, "unmerge-madvise", "ksmd,mrelease");
	stress_ksm_unmerge_klog_context_set(3, "merge-wait", NULL);
	stress_ksm_unmerge_klog_context_set(STRESS_KSM_UNMERGE_KLOG_SLOTS, "ignored", "ignored");
	test_feed("4,1,5000000,-;WARNING: CPU: 1 PID: 42 at mm/ksm.c:3012 break_ksm+0x1a2/0x1c0");
	test_feed("4,2,5000001,-;RIP: 0010:break_ksm+0x1a2/0x1c0");
	test_feed("4,3,5000002,-;Call Trace:");
	test_feed("4,4,5000003,-; <TASK>");
	test_feed("4,5,5000004,-; ? show_regs+0x6d/0x80");
	for (i = 0; i < 30; i++) {
		(void)snprintf(rec, sizeof(rec), "4,%d,5000010,-; func_%02d+0x10/0x20", 6 + i, i);
		test_feed(rec);
		seq++;
	}
	test_feed("4,40,5000100,-; </TASK>");
	/* the report is printed when the trace ends, before the end marker */
	test_feed("4,41,5000101,-;Modules linked in:");
	stress_ksm_unmerge_klog_idle(stress_time_now(), false);
	assert_non_null(strstr(test_out, "fail: ksm-unmerge: kernel warning: WARNING:at_mm/ksm.c:#break_ksm\n"));
	assert_non_null(strstr(test_out, "first line: WARNING: CPU: 1 PID: 42 at mm/ksm.c:3012 break_ksm+0x1a2/0x1c0\n"));
	assert_non_null(strstr(test_out, "kernel time 5.000000)"));
	assert_non_null(strstr(test_out, "into the run"));
	assert_non_null(strstr(test_out, "function at RIP: break_ksm\n"));
	assert_non_null(strstr(test_out, "call trace: func_00+0x10/0x20\n"));
	assert_non_null(strstr(test_out, "call trace: func_19+0x10/0x20\n"));
	assert_null(strstr(test_out, "func_20"));
	assert_null(strstr(test_out, "show_regs"));
	assert_non_null(strstr(test_out, "instance 0: phase unmerge-madvise, racers ksmd,mrelease\n"));
	assert_non_null(strstr(test_out, "instance 3: phase merge-wait, racers -\n"));
	assert_null(strstr(test_out, "ignored"));
	for (p = test_out; (p = strstr(p, "call trace: ")) != NULL; p++)
		ntrace++;
	assert_int_equal(ntrace, STRESS_KSM_UNMERGE_KLOG_TRACE_MAX);
	/* reported once, even after the end marker */
	test_out_len = 0;
	test_out[0] = '\0';
	test_feed("4,42,5000102,-;---[ end trace 0000000000000000 ]---");
	stress_ksm_unmerge_klog_idle(stress_time_now(), true);
	assert_int_equal(test_out_len, 0);
	assert_int_equal(stress_ksm_unmerge_klog_events(), 1);
}

/*
 *  test_report_limit()
 *	at most 4 pr_fail lines from the watcher (stress-ng aborts at 5)
 */
static void test_report_limit(void **state)
{
	char rec[128];
	const char *p;
	int i, fails = 0;

	(void)state;
	test_reset();
	for (i = 0; i < 7; i++) {
		(void)snprintf(rec, sizeof(rec), "1,%d,%d,-;BUG: Bad rss-counter state mm:00000000deadbeef type:MM_ANONPAGES val:-%d",
			i + 1, i + 1, i + 1);
		test_feed(rec);
	}
	stress_ksm_unmerge_klog_idle(stress_time_now(), true);
	assert_int_equal(stress_ksm_unmerge_klog_events(), 7);
	assert_int_equal(test_has_key("BUG:Bad_rss-counter_state_mm:#type:MM_ANONPAGES_val"), 7);
	for (p = test_out; (p = strstr(p, "fail: ")) != NULL; p++)
		fails++;
	assert_int_equal(fails, STRESS_KSM_UNMERGE_KLOG_PR_FAIL_MAX);
}

/*
 *  test_idle_close()
 *	a splat without an end marker is reported after the idle time
 */
static void test_idle_close(void **state)
{
	const double now = stress_time_now();

	(void)state;
	test_reset();
	assert_int_equal(stress_ksm_unmerge_klog_feed("0,1,1,-;watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [ksmd:88]",
		68, now), 0);
	stress_ksm_unmerge_klog_idle(now + 0.1, false);
	assert_int_equal(stress_ksm_unmerge_klog_events(), 1);
	assert_null(strstr(test_out, "fail: "));
	stress_ksm_unmerge_klog_idle(now + STRESS_KSM_UNMERGE_KLOG_IDLE + 0.1, false);
	assert_non_null(strstr(test_out, "fail: ksm-unmerge: kernel lockup: BUG:soft_lockup-CPU##stuck_for#s![ksmd:#]\n"));
}

/*
 *  test_taint_letters()
 *	kernel taint letters by bit position
 */
static void test_taint_letters(void **state)
{
	static const struct {
		uint32_t bits;
		const char *letters;
	} cases[] = {
		{ 0, "" }, { 1U << 0, "P" }, { 1U << 1, "F" }, { 1U << 2, "S" }, { 1U << 3, "R" },
		{ 1U << 4, "M" }, { 1U << 5, "B" }, { 1U << 6, "U" }, { 1U << 7, "D" }, { 1U << 8, "A" },
		{ 1U << 9, "W" }, { 1U << 10, "C" }, { 1U << 11, "I" }, { 1U << 12, "O" }, { 1U << 13, "E" },
		{ 1U << 14, "L" }, { 1U << 15, "K" }, { 1U << 16, "X" }, { 1U << 17, "T" }, { 1U << 18, "N" },
		{ 1U << 19, "J" }, { 1U << 25, "#25" }, { 0x2a0, "BDW" }, { 0x4201, "PWL" },
	};
	char buf[64], small[3];
	size_t i;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(cases); i++) {
		stress_ksm_unmerge_klog_taint_letters(cases[i].bits, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].letters);
	}
	stress_ksm_unmerge_klog_taint_letters(0x2a0, small, sizeof(small));
	assert_string_equal(small, "BD");
}

/*
 *  test_taint_write()
 *	write a value into the injected tainted file
 */
static void test_taint_write(const char *path, const char *val)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_true(fputs(val, fp) >= 0);
	assert_int_equal(fclose(fp), 0);
}

/*
 *  test_taint_diff()
 *	new taint bits are reported once; an event only if the log had none
 */
static void test_taint_diff(void **state)
{
	char path[] = "/tmp/test-klog-taint-XXXXXX";
	uint32_t t;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	(void)close(fd);
	test_reset();
	stress_ksm_unmerge_klog_taint_path = path;

	test_taint_write(path, "4097\n");		/* P + O at the start */
	assert_int_equal(stress_ksm_unmerge_klog_taint_read(&t), 0);
	assert_int_equal(t, 4097);
	stress_ksm_unmerge_klog_shm->taint_start = t;
	stress_ksm_unmerge_klog_taint_check(t);
	assert_int_equal(stress_ksm_unmerge_klog_events(), 0);
	assert_int_equal(test_out_len, 0);

	test_taint_write(path, "4609\n");		/* + W (512) */
	assert_int_equal(stress_ksm_unmerge_klog_taint_read(&t), 0);
	stress_ksm_unmerge_klog_taint_check(t);
	assert_int_equal(stress_ksm_unmerge_klog_events(), 1);
	assert_int_equal(test_has_key("taint:W"), 1);
	assert_non_null(strstr(test_out, "fail: ksm-unmerge: kernel taint: W (0x200) set during the run, no log record seen\n"));
	stress_ksm_unmerge_klog_taint_check(t);		/* not twice */
	assert_int_equal(stress_ksm_unmerge_klog_events(), 1);
	assert_int_equal(test_has_key("taint:W"), 1);

	test_taint_write(path, "4737\n");		/* + D (128): reported, no new event */
	assert_int_equal(stress_ksm_unmerge_klog_taint_read(&t), 0);
	stress_ksm_unmerge_klog_taint_check(t);
	assert_int_equal(stress_ksm_unmerge_klog_events(), 1);
	assert_int_equal(test_has_key("taint:D"), 1);
	assert_non_null(strstr(test_out, "info: ksm-unmerge: kernel taint: D (0x80) set during the run\n"));

	/* a WARN seen in the log explains the W taint: one event, not two */
	test_reset();
	stress_ksm_unmerge_klog_taint_path = path;
	stress_ksm_unmerge_klog_shm->taint_start = 0;
	test_feed("4,1,1,-;WARNING: CPU: 0 PID: 1 at mm/ksm.c:1 break_ksm+0x1/0x2");
	stress_ksm_unmerge_klog_idle(stress_time_now(), true);
	stress_ksm_unmerge_klog_taint_check(512);
	assert_int_equal(stress_ksm_unmerge_klog_events(), 1);
	assert_int_equal(test_has_key("taint:W"), 1);

	test_taint_write(path, "junk\n");
	assert_int_equal(stress_ksm_unmerge_klog_taint_read(&t), -1);
	assert_int_equal(shim_unlink(path), 0);
	assert_int_equal(stress_ksm_unmerge_klog_taint_read(&t), -1);
	/* the real file parses */
	stress_ksm_unmerge_klog_taint_path = STRESS_KSM_UNMERGE_KLOG_TAINTED;
	assert_int_equal(stress_ksm_unmerge_klog_taint_read(&t), 0);
}

/*
 *  test_yaml()
 *	YAML body layout and quoting
 */
static void test_yaml(void **state)
{
	char yaml[2048];
	const char *want =
		"    status: ok\n"
		"    warnings: 1\n"
		"    lost-records: 0\n"
		"    keys:\n"
		"        - key: 'WARNING:at_mm/ksm.c:#break_ksm'\n"
		"          count: 1\n"
		"        - key: 'RIP:break_ksm'\n"
		"          count: 1\n";

	(void)state;
	test_reset();
	test_feed("4,1,1,-;WARNING: CPU: 0 PID: 1 at mm/ksm.c:3012 break_ksm+0x1a2/0x1c0");
	test_feed("4,2,2,-;RIP: 0010:break_ksm+0x1a2/0x1c0");
	stress_ksm_unmerge_klog_idle(stress_time_now(), true);
	(void)stress_ksm_unmerge_klog_yaml(yaml, sizeof(yaml));
	assert_string_equal(yaml, want);

	stress_ksm_unmerge_klog_key_add("it's", STRESS_KSM_UNMERGE_KLOG_BUG);
	(void)stress_ksm_unmerge_klog_yaml(yaml, sizeof(yaml));
	assert_non_null(strstr(yaml, "        - key: 'it''s'\n"));

	test_reset();
	stress_ksm_unmerge_klog_shm->status = STRESS_KSM_UNMERGE_KLOG_STATUS_UNAVAIL;
	(void)stress_ksm_unmerge_klog_yaml(yaml, sizeof(yaml));
	assert_string_equal(yaml, "    status: unavailable\n    warnings: 0\n    lost-records: 0\n");
	stress_ksm_unmerge_klog_shm->status = STRESS_KSM_UNMERGE_KLOG_STATUS_OFF;
	(void)stress_ksm_unmerge_klog_yaml(yaml, sizeof(yaml));
	assert_string_equal(yaml, "    status: off\n    warnings: 0\n    lost-records: 0\n");
	assert_int_equal(stress_ksm_unmerge_klog_yaml(yaml, 0), 0);
	(void)stress_ksm_unmerge_klog_yaml(yaml, 20);
	assert_int_equal(strlen(yaml), 19);
}

/*
 *  test_stop_summary()
 *	stop() without a watcher: summary lines and the YAML section
 */
static void test_stop_summary(void **state)
{
	(void)state;
	test_reset();
	test_feed("2,1,1,-;kernel BUG at mm/ksm.c:1234!");
	stress_ksm_unmerge_klog_idle(stress_time_now(), true);
	stress_ksm_unmerge_klog_taint_path = "/nonexistent/tainted";
	test_out_len = 0;
	stress_ksm_unmerge_klog_stop();
	assert_non_null(strstr(test_out, "fail: ksm-unmerge: kernel warnings: 1\n"));
	assert_non_null(strstr(test_out, "info: ksm-unmerge: kernel-log key: kernel_BUG_at_mm/ksm.c (count 1)\n"));
	assert_string_equal(test_yaml_name, "kernel-log");
	assert_non_null(strstr(test_yaml_body, "- key: 'kernel_BUG_at_mm/ksm.c'\n"));

	test_reset();
	test_out_len = 0;
	stress_ksm_unmerge_klog_stop();
	assert_non_null(strstr(test_out, "info: ksm-unmerge: kernel warnings: 0\n"));
}

/*
 *  test_bump_drains()
 *	child process: finish n drains after 50 ms, like the watcher would
 */
static void test_bump_drains(const int n)
{
	const pid_t pid = fork();
	int i;

	assert_true(pid >= 0);
	if (pid)
		return;
	for (i = 0; i < n; i++) {
		(void)usleep(50000);
		__atomic_add_fetch(&stress_ksm_unmerge_klog_shm->drain_gen, 1, __ATOMIC_SEQ_CST);
	}
	_exit(0);
}

/*
 *  test_sync_no_watcher()
 *	sync() is immediate when the check is off; times out without a watcher
 */
static void test_sync_no_watcher(void **state)
{
	double t;

	(void)state;
	test_reset();
	stress_ksm_unmerge_klog_shm->status = STRESS_KSM_UNMERGE_KLOG_STATUS_UNAVAIL;
	assert_true(stress_ksm_unmerge_klog_sync(1.0));
	stress_ksm_unmerge_klog_shm->status = STRESS_KSM_UNMERGE_KLOG_STATUS_OK;
	t = stress_time_now();
	assert_false(stress_ksm_unmerge_klog_sync(0.2));
	assert_true(stress_time_now() - t >= 0.2);
	assert_true(stress_time_now() - t < 1.0);
	/* one drain completed after the call is not enough, two are */
	test_bump_drains(1);
	assert_false(stress_ksm_unmerge_klog_sync(0.4));
	(void)waitpid(-1, NULL, 0);
	t = stress_time_now();
	test_bump_drains(2);
	assert_true(stress_ksm_unmerge_klog_sync(2.0));
	assert_true(stress_time_now() - t >= 0.05);
	(void)waitpid(-1, NULL, 0);
	/* a watcher that has exited does not make sync() wait */
	stress_ksm_unmerge_klog_shm->watcher_done = 1;
	assert_true(stress_ksm_unmerge_klog_sync(2.0));
}

/*
 *  test_watcher_live()
 *	real watcher on /dev/kmsg (root): start, sync, stop, no events
 *	(injection is tested by tests/it/klog/inject.sh under the lock)
 */
static void test_watcher_live(void **state)
{
	int fd;

	(void)state;
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		print_message("  skipped: cannot open /dev/kmsg, errno=%d (%s)\n", errno, strerror(errno));
		skip();
	}
	(void)close(fd);
	test_reset();
	stress_ksm_unmerge_klog_shm->status = STRESS_KSM_UNMERGE_KLOG_STATUS_OFF;
	assert_int_equal(stress_ksm_unmerge_klog_start(), 0);
	assert_true(stress_ksm_unmerge_klog_shm->watcher > 0);
	assert_int_equal(stress_ksm_unmerge_klog_shm->status, STRESS_KSM_UNMERGE_KLOG_STATUS_OK);
	assert_true(stress_ksm_unmerge_klog_sync(5.0));
	assert_true(stress_ksm_unmerge_klog_sync(5.0));
	stress_ksm_unmerge_klog_stop();
	assert_int_equal(stress_ksm_unmerge_klog_shm->watcher, -1);
	assert_int_equal(stress_ksm_unmerge_klog_shm->watcher_done, 1);
	assert_non_null(strstr(test_out, "kernel warnings: "));
}

/*
 *  test_start_unprivileged()
 *	without permission for /dev/kmsg: one "check off" line, status unavailable
 */
static void test_start_unprivileged(void **state)
{
	pid_t pid;
	int status, fd;

	(void)state;
	if (geteuid() != 0) {
		fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
		if (fd >= 0) {
			(void)close(fd);
			print_message("  skipped: /dev/kmsg readable without root here\n");
			skip();
		}
	}
	test_reset();
	stress_ksm_unmerge_klog_shm->status = STRESS_KSM_UNMERGE_KLOG_STATUS_OFF;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char yaml[256];
		int rc = 0;

		if ((geteuid() == 0) && ((setgid(65534) < 0) || (setuid(65534) < 0)))
			_exit(10);
		fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
		if (fd >= 0)
			_exit(11);	/* dmesg_restrict=0: cannot test here */
		if (stress_ksm_unmerge_klog_start() != -1)
			rc |= 1;
		if (!strstr(test_out, "info: ksm-unmerge: kernel-log check off: cannot open /dev/kmsg: errno="))
			rc |= 2;
		if (strchr(test_out, '\n') != strrchr(test_out, '\n'))
			rc |= 4;	/* exactly one line */
		(void)stress_ksm_unmerge_klog_yaml(yaml, sizeof(yaml));
		if (strncmp(yaml, "    status: unavailable\n", 24))
			rc |= 8;
		if (!stress_ksm_unmerge_klog_sync(0.1) || stress_ksm_unmerge_klog_events())
			rc |= 16;
		_exit(rc);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 11) {
		print_message("  skipped: /dev/kmsg readable by uid 65534 (dmesg_restrict=0)\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 *  main()
 *	run the klog tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_record_parse),
		cmocka_unit_test(test_unescape),
		cmocka_unit_test(test_escaped_newline),
		cmocka_unit_test(test_continuation),
		cmocka_unit_test(test_lost_records),
		cmocka_unit_test(test_facilities),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_report_limit),
		cmocka_unit_test(test_idle_close),
		cmocka_unit_test(test_taint_letters),
		cmocka_unit_test(test_taint_diff),
		cmocka_unit_test(test_yaml),
		cmocka_unit_test(test_stop_summary),
		cmocka_unit_test(test_sync_no_watcher),
		cmocka_unit_test(test_watcher_live),
		cmocka_unit_test(test_start_unprivileged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
