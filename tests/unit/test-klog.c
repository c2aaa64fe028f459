/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-klog.c: cmocka tests of the standalone core's kernel-log
 * check (klog/klog-check.c): the corpora in tests/data/corpus/klog
 * (keys as LKP names them, event counts, noise), /dev/kmsg record parsing,
 * escapes, continuation records, lost records, facilities, the report
 * lines (with the run's instances from the shim's shared state), the
 * stress-ng -K level rule beside the splats, taint letters and diffs
 * (with an injected tainted file), the summary, verdict and YAML section,
 * and the reader process on the real /dev/kmsg (start, final drain, a
 * reader that dies, no permission).
 *
 * klog-check.c is included so its static state can be looked at; the rest
 * is the real shim (libshim.a with the dummy stressor), so the log lines
 * asserted are the ones a run prints.
 */
#include "test-shim-common.h"
#include "core-killpid.h"
#include "klog/klog-check.c"		/* the kernel-log check, statics included */

#include <dirent.h>
#include <pthread.h>
#include <time.h>

static char *test_out;			/* captured output of the last capture */
static test_capture_t test_cap;
static bool test_capturing;

/*
 *  test_out_begin()
 *	start capturing stdout (pr_* lines), dropping the last capture
 */
static void test_out_begin(void)
{
	if (test_capturing)
		return;
	free(test_out);
	test_out = NULL;
	test_capture_begin(&test_cap, STDOUT_FILENO);
	test_capturing = true;
}

/*
 *  test_out_end()
 *	stop capturing; the text is in test_out
 */
static const char *test_out_end(void)
{
	if (test_capturing) {
		test_out = test_capture_end(&test_cap);
		test_capturing = false;
	}
	return test_out ? test_out : "";
}

/*
 *  test_count()
 *	occurrences of needle in hay
 */
static int test_count(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)) != NULL; hay++)
		n++;
	return n;
}

/*
 *  test_reset()
 *	fresh shared + reader state, no -K, capture started
 */
static void test_reset(void)
{
	(void)test_out_end();
	if (!stress_klog_shm)
		assert_int_equal(stress_klog_shm_init(), 0);
	(void)memset(stress_klog_shm, 0, sizeof(*stress_klog_shm));
	stress_klog_shm->status = STRESS_KLOG_STATUS_OK;
	stress_klog_shm->time_start = stress_time_now();
	(void)memset(&stress_klog_state, 0, sizeof(stress_klog_state));
	stress_klog_taint_path = STRESS_KLOG_TAINTED;
	g_shared->klog_errors = 0;
	g_opt_flags &= ~OPT_FLAGS_KLOG_CHECK;
	test_out_begin();
}

/*
 *  test_feed()
 *	feed one record string (must parse)
 */
static void test_feed(const char *rec)
{
	assert_int_equal(stress_klog_feed(rec, strlen(rec), stress_time_now()), 0);
}

/*
 *  test_has_key()
 *	count of a key in the shared table, 0 if absent
 */
static uint32_t test_has_key(const char *key)
{
	uint32_t i;

	for (i = 0; i < stress_klog_shm->nkeys; i++)
		if (!strcmp(stress_klog_shm->keys[i].key, key))
			return stress_klog_shm->keys[i].count;
	return 0;
}

/*
 *  test_events()
 *	splat events counted so far
 */
static uint32_t test_events(void)
{
	return stress_klog_shm->events;
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
	char keys[16][STRESS_KLOG_KEY_LEN];
	int nkeys;
	int events;
} test_expect_t;

/*
 *  test_corpus_feed()
 *	feed one corpus file's records (with or without -K); its expectations
 */
static void test_corpus_feed(const char *path, const bool klog_check, test_expect_t *exp)
{
	FILE *fp = fopen(path, "r");
	static char line[16384], rec[16384];
	size_t reclen = 0;

	assert_non_null(fp);
	(void)memset(exp, 0, sizeof(*exp));
	exp->events = -1;
	test_reset();
	if (klog_check)
		g_opt_flags |= OPT_FLAGS_KLOG_CHECK;
	rec[0] = '\0';
	while (fgets(line, sizeof(line), fp)) {
		size_t n = strlen(line);

		if (n && (line[n - 1] == '\n'))
			line[--n] = '\0';
		if (!strncmp(line, "# expected-key: ", 16)) {
			assert_true(exp->nkeys < 16);
			(void)shim_strscpy(exp->keys[exp->nkeys++], line + 16, STRESS_KLOG_KEY_LEN);
			continue;
		}
		if (!strncmp(line, "# expected-events: ", 19)) {
			exp->events = atoi(line + 19);
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
	stress_klog_idle(stress_time_now(), true);
	(void)test_out_end();
	assert_true(exp->events >= 0);
}

/*
 *  test_corpus_file()
 *	feed one corpus file and check events, errors and the exact key set;
 *	a splat file again under -K: still one error per event
 */
static void test_corpus_file(const char *path, int *nsig, int *nnoise)
{
	test_expect_t exp;
	int i;

	test_corpus_feed(path, false, &exp);
	if ((int)test_events() != exp.events)
		fail_msg("%s: %u events, expected %d\n%s", path, test_events(), exp.events, test_out);
	if (g_shared->klog_errors != (uint64_t)exp.events)
		fail_msg("%s: %" PRIu64 " errors counted, expected %d", path,
			(uint64_t)g_shared->klog_errors, exp.events);
	for (i = 0; i < exp.nkeys; i++)
		if (!test_has_key(exp.keys[i]))
			fail_msg("%s: key '%s' not found\n%s", path, exp.keys[i], test_out);
	if ((int)stress_klog_shm->nkeys != exp.nkeys) {
		for (i = 0; i < (int)stress_klog_shm->nkeys; i++)
			print_message("  got key %s\n", stress_klog_shm->keys[i].key);
		fail_msg("%s: %u keys, expected %d", path, stress_klog_shm->nkeys, exp.nkeys);
	}
	if (exp.events) {
		char want[256];

		/* the first key is the event's primary key and is reported by name */
		assert_string_equal(stress_klog_shm->keys[0].key, exp.keys[0]);
		(void)snprintf(want, sizeof(want), ": %s\n", exp.keys[0]);
		if (!strstr(test_out, "] klog-check: kernel ") || !strstr(test_out, want))
			fail_msg("%s: no report line for %s\n%s", path, exp.keys[0], test_out);
		if (test_count(test_out, "stress-ng: error: [") != exp.events)
			fail_msg("%s: %d error lines for %d events\n%s", path,
				test_count(test_out, "stress-ng: error: ["), exp.events, test_out);
		/* -K adds stress-ng's level rule: no splat line is counted twice */
		test_corpus_feed(path, true, &exp);
		if ((g_shared->klog_errors != (uint64_t)exp.events) || ((int)test_events() != exp.events))
			fail_msg("%s: with -K %" PRIu64 " errors, %u events, expected %d\n%s", path,
				(uint64_t)g_shared->klog_errors, test_events(), exp.events, test_out);
		(*nsig)++;
	} else if (exp.nkeys) {
		char want[256];

		/* an info-only report (hung task): keyed and said, no error */
		(void)snprintf(want, sizeof(want), " (not a failure): %s\n", exp.keys[0]);
		if (!strstr(test_out, "] klog-check: kernel ") || !strstr(test_out, want) ||
		    strstr(test_out, "stress-ng: error: ["))
			fail_msg("%s: not one info line for %s and no error\n%s", path,
				exp.keys[0], test_out);
		test_corpus_feed(path, true, &exp);
		if (g_shared->klog_errors || test_events())
			fail_msg("%s: with -K %" PRIu64 " errors, %u events, expected none\n%s",
				path, (uint64_t)g_shared->klog_errors, test_events(), test_out);
	} else {
		if (test_out[0])
			fail_msg("%s: noise file printed:\n%s", path, test_out);
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
	assert_int_equal(stress_klog_record_parse(rec, strlen(rec), &level, &seq, &usec,
		&fac, &msg, &msglen), 0);
	assert_int_equal(level, 4);
	assert_int_equal(fac, 1);
	assert_int_equal(seq, 345);
	assert_int_equal(usec, 449457362);
	assert_int_equal(msglen, strlen("klog-probe: prefix4"));
	assert_memory_equal(msg, "klog-probe: prefix4", msglen);

	rec = "6,7,8,c,caller=T123;hello";
	assert_int_equal(stress_klog_record_parse(rec, strlen(rec), &level, &seq, &usec,
		&fac, &msg, &msglen), 0);
	assert_int_equal(stress_klog_record_flag(rec, strlen(rec)), 'c');
	assert_int_equal(stress_klog_record_flag("4,1,2,+;x", 9), '+');
	assert_int_equal(stress_klog_record_flag("4,1,2,-,caller=C1;x", 19), '-');
	assert_int_equal(level, 6);
	assert_int_equal(fac, 0);
	assert_int_equal(msglen, 5);

	/* no trailing newline, empty message, only the length given counts */
	rec = "3,1,2,-;";
	assert_int_equal(stress_klog_record_parse(rec, strlen(rec), &level, NULL, NULL,
		NULL, &msg, &msglen), 0);
	assert_int_equal(msglen, 0);
	assert_int_equal(stress_klog_record_parse("3,1,2,-;abc", 5, NULL, NULL, NULL,
		NULL, NULL, NULL), -1);
	assert_int_equal(stress_klog_record_parse(NULL, 0, NULL, NULL, NULL,
		NULL, NULL, NULL), -1);

	for (i = 0; i < SIZEOF_ARRAY(bad); i++) {
		if (stress_klog_record_parse(bad[i], strlen(bad[i]), &level, &seq, &usec,
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
	n = stress_klog_unescape("a\\x0ab\\x09c\\x5cd", 16, out, sizeof(out));
	assert_string_equal(out, "a\nb c\\d");
	assert_int_equal(n, 7);
	n = stress_klog_unescape("x\\x4", 4, out, sizeof(out));
	assert_string_equal(out, "x\\x4");
	n = stress_klog_unescape("\\xzz\\x7f\\x00!", 13, out, sizeof(out));
	assert_string_equal(out, "\\xzz  !");
	n = stress_klog_unescape("abcdef", 6, out, 4);
	assert_string_equal(out, "abc");
	assert_int_equal(n, 3);
	assert_int_equal(stress_klog_unescape("abc", 3, out, 0), 0);
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
	stress_klog_idle(stress_time_now(), true);
	test_out_end();
	assert_int_equal(test_events(), 1);
	assert_int_equal(test_has_key("WARNING:at_mm/ksm.c:#break_ksm"), 1);
	assert_int_equal(test_has_key("RIP:break_ksm"), 1);
	assert_non_null(strstr(test_out, "] klog-check:   function at RIP: break_ksm\n"));
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
	stress_klog_idle(stress_time_now(), true);
	assert_int_equal(test_events(), 1);
	assert_int_equal(test_has_key("BUG:Bad_rss-counter_state_mm:#type:MM_ANONPAGES_val"), 1);

	/* a fragment from another facility does not join */
	test_reset();
	test_feed("4,1,100,-;BUG: Bad rss-counter");
	test_feed("28,2,101,c; state mm:00000000deadbeef type:MM_ANONPAGES val:-1");
	stress_klog_idle(stress_time_now(), true);
	assert_int_equal(test_has_key("BUG:Bad_rss-counter"), 1);
}

/*
 *  test_lost_records()
 *	sequence gaps (after EPIPE) are counted as lost records and said
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
	assert_int_equal(stress_klog_shm->lost, 4);
	assert_int_equal(stress_klog_shm->records, 4);
	(void)stress_klog_yaml(yaml, sizeof(yaml));
	assert_non_null(strstr(yaml, "    lost-records: 4\n"));
	assert_int_equal(stress_klog_feed("garbage", 7, 0.0), -1);
	stress_klog_summary(stress_klog_shm);
	test_out_end();
	assert_non_null(strstr(test_out, "] klog-check: 4 kernel log records lost (overwritten before they were read)\n"));
	stress_yaml_extras_free();
}

/*
 *  test_facilities()
 *	only kernel records (facility 0) are watched: LOG_USER (what a write
 *	to /dev/kmsg gives), daemons and up fail nothing, with or without -K
 */
static void test_facilities(void **state)
{
	static const int facs[] = { 1, 2, 3, 4, 10, 16, 23 };
	static const char * const msgs[] = {
		"kernel BUG at mm/ksm.c:1!",
		"BUG: Bad rss-counter state mm:000000000fb13173 type:MM_ANONPAGES val:-1",
		"watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [ksmd:88]",
		"watchdog: Watchdog detected hard LOCKUP on cpu 1",
		"WARNING: CPU: 0 PID: 1 at mm/ksm.c:3012 break_ksm+0x1a2/0x1c0",
	};
	char rec[256];
	size_t i, j;
	int k;

	(void)state;
	for (k = 0; k < 2; k++) {
		for (i = 0; i < SIZEOF_ARRAY(facs); i++) {
			for (j = 0; j < SIZEOF_ARRAY(msgs); j++) {
				test_reset();
				if (k)
					g_opt_flags |= OPT_FLAGS_KLOG_CHECK;
				(void)snprintf(rec, sizeof(rec), "%d,1,1,-;%s",
					facs[i] * 8 + 1, msgs[j]);
				test_feed(rec);
				stress_klog_idle(stress_time_now(), true);
				test_out_end();
				if (test_events() || g_shared->klog_errors || test_out[0])
					fail_msg("'%s'%s: %u events, %" PRIu64 " errors\n%s", rec,
						k ? " -K" : "", test_events(),
						(uint64_t)g_shared->klog_errors, test_out);
			}
		}
	}
	/* a kernel record less severe than a warning starts no splat or dump */
	for (k = 0; k < 2; k++) {
		static const char * const low[] = {
			"6,1,1,-;BUG: x[4242]: segfault at 0 ip 0000000000401126 sp 00007ffd0 error 6",
			"6,2,2,-;Call Trace:[4243]: segfault at 0 ip 0000000000401126 sp 00007ffd0 error 6",
			"5,3,3,-;WARNING: CPU: 0 PID: 1 at mm/ksm.c:3012 break_ksm+0x1a2/0x1c0",
			"7,4,4,-;Oops: nothing",
		};

		test_reset();
		if (k)
			g_opt_flags |= OPT_FLAGS_KLOG_CHECK;
		for (i = 0; i < SIZEOF_ARRAY(low); i++)
			test_feed(low[i]);
		stress_klog_idle(stress_time_now(), true);
		test_out_end();
		if (test_events() || g_shared->klog_errors || test_out[0])
			fail_msg("level > 4%s: %u events\n%s", k ? " -K" : "", test_events(), test_out);
	}
	test_reset();
	test_feed("2,1,1,-;kernel BUG at mm/ksm.c:1!");
	stress_klog_idle(stress_time_now(), true);
	test_out_end();
	assert_int_equal(test_events(), 1);
	assert_null(strstr(test_out, "injected"));
}

/*
 *  test_dump_feed()
 *	one bare stack dump: message (NULL: none), n dump header lines,
 *	"Call Trace:", two functions, </TASK>; of facility fac
 */
static void test_dump_feed(const int fac, const char *msg, const int n)
{
	char rec[256];
	int i;

	if (msg) {
		(void)snprintf(rec, sizeof(rec), "%d,1,7000000,-;%s", fac * 8 + 4, msg);
		test_feed(rec);
	}
	for (i = 0; i < n; i++) {
		(void)snprintf(rec, sizeof(rec), "%d,2,7000001,-;%s", fac * 8 + 4, i ? "Hardware name: QEMU" :
			"CPU: 1 UID: 0 PID: 4242 Comm: stress-ksm-unme Not tainted 6.12.118 #1");
		test_feed(rec);
	}
	(void)snprintf(rec, sizeof(rec), "%d,3,7000002,-;Call Trace:", fac * 8 + 4);
	test_feed(rec);
	(void)snprintf(rec, sizeof(rec), "%d,4,7000003,-; <TASK>", fac * 8 + 4);
	test_feed(rec);
	(void)snprintf(rec, sizeof(rec), "%d,5,7000004,-; dump_stack_lvl+0x5d/0x80", fac * 8 + 4);
	test_feed(rec);
	(void)snprintf(rec, sizeof(rec), "%d,6,7000005,-; handle_userfault+0x3c5/0x4a0", fac * 8 + 4);
	test_feed(rec);
	(void)snprintf(rec, sizeof(rec), "%d,7,7000006,-; </TASK>", fac * 8 + 4);
	test_feed(rec);
}

/*
 *  test_stack_dump()
 *	a "Call Trace:" outside any splat is a kernel event of its own, named
 *	by the message before it; not from user space, not after a benign
 *	message, not right after another splat it belongs to
 */
static void test_stack_dump(void **state)
{
	static const char * const benign[] = {
		"bash invoked oom-killer: gfp_mask=0x140dca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0",
		"kworker/0:1: page allocation failure: order:4, mode:0x40dc0(GFP_KERNEL), nodemask=(null)",
		"task:systemd         state:S stack:0     pid:1     tgid:1     ppid:0      flags:0x00000002",
		"sysrq: Show Regs",
		"NMI backtrace for cpu 1",
		"unchecked MSR access error: WRMSR to 0x10 (tried to write 0x0000000000000000)",
	};
	size_t i;

	(void)state;
	/* the message, the PID of its CPU: line, the first function past dump_stack() */
	test_reset();
	test_dump_feed(0, "FAULT_FLAG_ALLOW_RETRY missing 81", 2);
	stress_klog_idle(stress_time_now(), true);
	test_out_end();
	assert_int_equal(test_events(), 1);
	assert_int_equal(g_shared->klog_errors, 1);
	assert_non_null(strstr(test_out, "] klog-check: kernel stack dump: calltrace:handle_userfault\n"));
	assert_non_null(strstr(test_out, "] klog-check:   first line: FAULT_FLAG_ALLOW_RETRY missing 81\n"));
	assert_non_null(strstr(test_out, "] klog-check:   call trace: handle_userfault+0x3c5/0x4a0\n"));
	assert_non_null(strstr(test_out, "] klog-check:   pid 4242 "));
	assert_int_equal(test_has_key("calltrace:handle_userfault"), 1);

	/* a message too far above the trace is not its message; still an event */
	test_reset();
	test_dump_feed(0, "FAULT_FLAG_ALLOW_RETRY missing 81", STRESS_KLOG_CAUSE_AGE + 1);
	stress_klog_idle(stress_time_now(), true);
	test_out_end();
	assert_int_equal(test_events(), 1);
	assert_non_null(strstr(test_out, "] klog-check:   first line: Call Trace:\n"));

	/* user space writing a stack dump to /dev/kmsg fails nothing */
	test_reset();
	test_dump_feed(1, "FAULT_FLAG_ALLOW_RETRY missing 81", 2);
	stress_klog_idle(stress_time_now(), true);
	test_out_end();
	assert_int_equal(test_events(), 0);
	assert_int_equal(g_shared->klog_errors, 0);
	assert_string_equal(test_out, "");

	/* reports that are no failure */
	for (i = 0; i < SIZEOF_ARRAY(benign); i++) {
		test_reset();
		test_dump_feed(0, benign[i], i == 2 ? 0 : 2);
		stress_klog_idle(stress_time_now(), true);
		test_out_end();
		if (test_events())
			fail_msg("'%s': %u events\n%s", benign[i], test_events(), test_out);
	}

	/* after a benign report, a message of its own makes the next dump an event */
	test_reset();
	test_dump_feed(0, benign[0], 2);
	test_dump_feed(0, "FAULT_FLAG_ALLOW_RETRY missing 81", 2);
	stress_klog_idle(stress_time_now(), true);
	assert_int_equal(test_events(), 1);

	/* the task dumps that follow a hung task report belong to it */
	test_reset();
	test_feed("3,1,1,-;INFO: task khugepaged:77 blocked for more than 122 seconds.");
	test_feed("4,2,2,-;Call Trace:");
	test_feed("4,3,3,-; schedule+0x27/0xf0");
	test_feed("4,4,4,-; </TASK>");
	stress_klog_idle(stress_time_now(), true);
	test_dump_feed(0, "rcu: Stack dump where RCU GP kthread last ran:", 2);
	stress_klog_idle(stress_time_now(), true);
	test_out_end();
	assert_int_equal(test_events(), 0);
	assert_int_equal(test_has_key("INFO:task_blocked_for_more_than#seconds"), 1);
	assert_int_equal(test_has_key("calltrace:handle_userfault"), 0);

	/* each dump is an event: the first one's close does not swallow the next */
	test_reset();
	test_dump_feed(0, "FAULT_FLAG_ALLOW_RETRY missing 81", 2);
	test_dump_feed(0, "FAULT_FLAG_ALLOW_RETRY missing 81", 2);
	stress_klog_idle(stress_time_now(), true);
	assert_int_equal(test_events(), 2);
	assert_int_equal(test_has_key("calltrace:handle_userfault"), 2);
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
		  STRESS_KLOG_WARNING, "WARNING:at_mm/ksm.c:#break_ksm" },
		{ "  BUG: soft lockup - CPU#5 stuck for 26s! [ksmd:88]",
		  STRESS_KLOG_LOCKUP, "BUG:soft_lockup-CPU##stuck_for#s![ksmd:#]" },
		{ "WARNING: mm/ksm.c:3012 at break_ksm+0x1a2/0x1c0, CPU#1: stress/42",
		  STRESS_KLOG_WARNING, "WARNING:mm/ksm.c:#at_break_ksm,CPU##:stress" },
		{ "Kernel panic - not syncing: Out of memory and no killable processes...",
		  STRESS_KLOG_PANIC, "Kernel_panic-not_syncing:Out_of_memory_and_no_killable_processes" },
		{ "BUG: workqueue lockup - pool cpus=1 node=0 flags=0x0 nice=0 stuck for 31s!",
		  STRESS_KLOG_LOCKUP, "BUG:workqueue_lockup-pool" },
		{ "KASAN: null-ptr-deref in range [0x0000000000000008-0x000000000000000f]",
		  STRESS_KLOG_SANITIZER, "KASAN:null-ptr-deref_in_range[#-#]" },
		{ "Unable to handle kernel paging request at virtual address dead000000000108",
		  STRESS_KLOG_OOPS, "Unable_to_handle_kernel_paging_request_at_virtual_address" },
		{ "Out of memory: Killed process 4242 (stress-ng)", STRESS_KLOG_NOISE, "" },
		{ "stress-ng invoked oom-killer: gfp_mask=0x140dca", STRESS_KLOG_NOISE, "" },
		{ "oom-kill:constraint=CONSTRAINT_NONE", STRESS_KLOG_NOISE, "" },
		{ "audit: type=1400 audit(1.2:3): BUG: x", STRESS_KLOG_NOISE, "" },
		{ "WARNING: disk is full", STRESS_KLOG_NOISE, "" },
		{ "the BUG: here is mid-line", STRESS_KLOG_NOISE, "" },
		{ "", STRESS_KLOG_NOISE, "" },
	};
	char key[STRESS_KLOG_KEY_LEN], tiny[8];
	size_t i;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(cases); i++) {
		const int kind = stress_klog_lkp_classify(cases[i].msg, key, sizeof(key));

		if ((kind != cases[i].kind) || strcmp(key, cases[i].key))
			fail_msg("'%s': kind %d key '%s', expected %d '%s'", cases[i].msg,
				kind, key, cases[i].kind, cases[i].key);
	}
	assert_int_equal(stress_klog_lkp_classify(NULL, key, sizeof(key)), 0);
	assert_int_equal(stress_klog_lkp_classify("kernel BUG at mm/ksm.c:1!", NULL, 0),
		STRESS_KLOG_BUG);
	assert_int_equal(stress_klog_lkp_classify("kernel BUG at mm/ksm.c:1!", tiny, sizeof(tiny)),
		STRESS_KLOG_BUG);
	assert_string_equal(tiny, "kernel_");
}

/*
 *  test_comm()
 *	this process's comm (test-klog, or valgrind's name under valgrind)
 */
static const char *test_comm(void)
{
	static char comm[32];

	if (stress_fs_file_read("/proc/self/comm", comm, sizeof(comm)) < 0)
		return "?";
	comm[strcspn(comm, "\n")] = '\0';
	return comm;
}

/*
 *  test_thread_tid()
 *	thread body: publish its tid, sleep until cancelled
 */
static void *test_thread_tid(void *arg)
{
	*(volatile pid_t *)arg = (pid_t)syscall(SYS_gettid);
	for (;;)
		(void)pause();
	return NULL;
}

/*
 *  test_report()
 *	report lines: error line with key, first line, time, RIP, <= 20 trace
 *	lines, "?" skipped, the pid of the splat and the run's instances
 */
static void test_report(void **state)
{
	char rec[256];
	int i, status;
	pid_t child;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		for (;;)
			(void)pause();
	}
	/* instance 0 is this process, instance 1 a sleeping child */
	g_shared->stats[0].pid = getpid();
	g_shared->stats[0].started = true;
	g_shared->stats[1].pid = child;
	g_shared->stats[1].started = true;
	(void)usleep(20000);
	test_reset();
	(void)snprintf(rec, sizeof(rec), "4,1,5000000,-;WARNING: CPU: 1 PID: %d at mm/ksm.c:3012 break_ksm+0x1a2/0x1c0", (int)child);
	test_feed(rec);
	test_feed("4,2,5000001,-;RIP: 0010:break_ksm+0x1a2/0x1c0");
	test_feed("4,3,5000002,-;Call Trace:");
	test_feed("4,4,5000003,-; <TASK>");
	test_feed("4,5,5000004,-; ? show_regs+0x6d/0x80");
	for (i = 0; i < 30; i++) {
		(void)snprintf(rec, sizeof(rec), "4,%d,5000010,-; func_%02d+0x10/0x20", 6 + i, i);
		test_feed(rec);
	}
	test_feed("4,40,5000100,-; </TASK>");
	/* the report is printed when the trace ends, before the end marker */
	test_feed("4,41,5000101,-;Modules linked in:");
	stress_klog_idle(stress_time_now(), false);
	test_out_end();
	assert_int_equal(kill(child, SIGKILL), 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_non_null(strstr(test_out, "error: ["));
	assert_non_null(strstr(test_out, "] klog-check: kernel warning: WARNING:at_mm/ksm.c:#break_ksm\n"));
	(void)snprintf(rec, sizeof(rec), "] klog-check:   first line: WARNING: CPU: 1 PID: %d at mm/ksm.c:3012 break_ksm+0x1a2/0x1c0\n", (int)child);
	assert_non_null(strstr(test_out, rec));
	assert_non_null(strstr(test_out, "s into the run (kernel time 5.000000)\n"));
	assert_non_null(strstr(test_out, "] klog-check:   function at RIP: break_ksm\n"));
	assert_non_null(strstr(test_out, "] klog-check:   call trace: func_00+0x10/0x20\n"));
	assert_non_null(strstr(test_out, "] klog-check:   call trace: func_19+0x10/0x20\n"));
	assert_null(strstr(test_out, "func_20"));
	assert_null(strstr(test_out, "show_regs"));
	assert_non_null(strstr(test_out, "] klog-check:   also: RIP:break_ksm\n"));
	assert_int_equal(test_count(test_out, "call trace: "), STRESS_KLOG_TRACE_MAX);
	(void)snprintf(rec, sizeof(rec), "] klog-check:   pid %d (%s) in the log: instance 1\n", (int)child, test_comm());
	assert_non_null(strstr(test_out, rec));
	(void)snprintf(rec, sizeof(rec), "] klog-check:   instance 0 [%d]: state R, wchan -\n", (int)getpid());
	assert_non_null(strstr(test_out, rec));
	(void)snprintf(rec, sizeof(rec), "] klog-check:   instance 1 [%d]: state S, wchan ", (int)child);
	assert_non_null(strstr(test_out, rec));
	assert_int_equal(g_shared->klog_errors, 1);

	/* reported once, even after the end marker */
	test_reset();
	stress_klog_state.phase = STRESS_KLOG_PH_TAIL;
	stress_klog_state.reported = true;
	test_feed("4,42,5000102,-;---[ end trace 0000000000000000 ]---");
	stress_klog_idle(stress_time_now(), true);
	test_out_end();
	assert_string_equal(test_out, "");
	(void)memset(g_shared->stats, 0, 2 * sizeof(*g_shared->stats));
}

/*
 *  test_report_pids()
 *	the splat's pid: a thread or child of an instance, a stranger, gone
 */
static void test_report_pids(void **state)
{
	volatile pid_t tid = 0;
	pthread_t th;
	pid_t child;
	char want[160];
	int i, status;

	(void)state;
	g_shared->stats[0].pid = getpid();
	g_shared->stats[0].started = true;
	assert_int_equal(pthread_create(&th, NULL, test_thread_tid, (void *)&tid), 0);
	for (i = 0; (i < 500) && !tid; i++)
		(void)usleep(1000);
	assert_true(tid > 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		for (;;)
			(void)pause();
	}
	test_reset();
	stress_klog_splat_pid(tid);
	stress_klog_splat_pid(child);
	stress_klog_splat_pid(1);
	stress_klog_splat_pid(0);	/* none in the splat: no line */
	test_out_end();
	(void)snprintf(want, sizeof(want), "klog-check:   pid %d (%s) in the log: a thread of instance 0\n", (int)tid, test_comm());
	assert_non_null(strstr(test_out, want));
	(void)snprintf(want, sizeof(want), "klog-check:   pid %d (%s) in the log: a child of instance 0\n", (int)child, test_comm());
	assert_non_null(strstr(test_out, want));
	assert_non_null(strstr(test_out, "klog-check:   pid 1 ("));
	assert_non_null(strstr(test_out, ") in the log: not a process of this run\n"));
	assert_int_equal(test_count_lines(test_out), 3);
	assert_int_equal(kill(child, SIGKILL), 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	test_reset();
	stress_klog_splat_pid(child);
	test_out_end();
	(void)snprintf(want, sizeof(want), "klog-check:   pid %d in the log: exited before the report\n", (int)child);
	assert_non_null(strstr(test_out, want));
	assert_int_equal(pthread_cancel(th), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	(void)memset(g_shared->stats, 0, sizeof(*g_shared->stats));

	/* where the pid is found: WARNING, the CPU/Comm line, a hung task */
	assert_int_equal(stress_klog_pid_of("WARNING: CPU: 3 PID: 1234 at mm/ksm.c:1 f+0x1/0x2"), 1234);
	assert_int_equal(stress_klog_pid_of("CPU: 1 UID: 0 PID: 42 Comm: ksmd Not tainted 6.18"), 42);
	assert_int_equal(stress_klog_pid_of("INFO: task khugepaged:77 blocked for more than 122 seconds."), 77);
	assert_int_equal(stress_klog_pid_of("INFO: task a:b:78 blocked for more than 1 seconds."), 78);
	assert_int_equal(stress_klog_pid_of("INFO: task x blocked for more than 1 seconds."), 0);
	assert_int_equal(stress_klog_pid_of("PID: -3"), 0);
	assert_int_equal(stress_klog_pid_of("PID: 99999999999999999999"), 0);
	assert_int_equal(stress_klog_pid_of("kernel BUG at mm/ksm.c:1!"), 0);
}

/*
 *  test_every_event()
 *	each event is an error line and an error; keys counted per event
 */
static void test_every_event(void **state)
{
	char rec[160];
	int i;

	(void)state;
	test_reset();
	stress_klog_cmdline_done = false;
	for (i = 0; i < 7; i++) {
		(void)snprintf(rec, sizeof(rec), "1,%d,%d,-;BUG: Bad rss-counter state mm:00000000deadbeef type:MM_ANONPAGES val:-%d",
			i + 1, i + 1, i + 1);
		test_feed(rec);
	}
	stress_klog_idle(stress_time_now(), true);
	test_out_end();
	assert_int_equal(test_events(), 7);
	assert_int_equal(g_shared->klog_errors, 7);
	assert_int_equal(test_has_key("BUG:Bad_rss-counter_state_mm:#type:MM_ANONPAGES_val"), 7);
	assert_int_equal(test_count(test_out, "stress-ng: error: ["), 7);
	assert_int_equal(test_count(test_out, "klog-check: kernel memory corruption: BUG:Bad_rss-counter_state_mm:#type:MM_ANONPAGES_val\n"), 7);
	/* the kernel command line once, before the first report */
	assert_int_equal(test_count(test_out, "klog-check: kernel cmdline: '"), 1);
	assert_true(strstr(test_out, "kernel cmdline") < strstr(test_out, "error: ["));
}

/*
 *  test_hung_task()
 *	a hung task is keyed and said as info, not failed (stress-ng's core
 *	rule), also under -K; a failure inside or after its report still
 *	fails the run
 */
static void test_hung_task(void **state)
{
	int k;

	(void)state;
	for (k = 0; k < 2; k++) {
		test_reset();
		if (k)
			g_opt_flags |= OPT_FLAGS_KLOG_CHECK;
		test_feed("3,1,1,-;INFO: task khugepaged:77 blocked for more than 122 seconds.");
		test_feed("4,2,2,-;Call Trace:");
		test_feed("4,3,3,-; schedule+0x27/0xf0");
		test_feed("4,4,4,-; </TASK>");
		stress_klog_idle(stress_time_now(), true);
		test_out_end();
		assert_int_equal(test_events(), 0);
		assert_int_equal(g_shared->klog_errors, 0);
		assert_int_equal(test_has_key("INFO:task_blocked_for_more_than#seconds"), 1);
		assert_non_null(strstr(test_out, "stress-ng: info:  ["));
		assert_non_null(strstr(test_out, "] klog-check: kernel hung task (not a failure): "
			"INFO:task_blocked_for_more_than#seconds\n"));
		assert_null(strstr(test_out, "stress-ng: error:"));
	}

	/* a WARNING before the hung task's trace ended is an event of its own */
	test_reset();
	test_feed("3,1,1,-;INFO: task khugepaged:77 blocked for more than 122 seconds.");
	test_feed("4,2,2,-;WARNING: CPU: 0 PID: 1 at mm/ksm.c:3012 break_ksm+0x1a2/0x1c0");
	test_feed("4,3,3,-;Call Trace:");
	test_feed("4,4,4,-; break_ksm+0x1a2/0x1c0");
	test_feed("4,5,5,-; </TASK>");
	stress_klog_idle(stress_time_now(), true);
	test_out_end();
	assert_int_equal(test_events(), 1);
	assert_int_equal(g_shared->klog_errors, 1);
	assert_non_null(strstr(test_out, "] klog-check: kernel warning: WARNING:at_mm/ksm.c:#break_ksm\n"));

	/* so is a panic right after a hung task report */
	test_reset();
	test_feed("3,1,1,-;INFO: task khugepaged:77 blocked for more than 122 seconds.");
	test_feed("4,2,2,-;Call Trace:");
	test_feed("4,3,3,-; schedule+0x27/0xf0");
	test_feed("4,4,4,-; </TASK>");
	stress_klog_idle(stress_time_now(), true);
	test_feed("0,5,5,-;Kernel panic - not syncing: hung_task: blocked tasks");
	stress_klog_idle(stress_time_now(), true);
	assert_int_equal(test_events(), 1);
	assert_int_equal(g_shared->klog_errors, 1);
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
	assert_int_equal(stress_klog_feed("0,1,1,-;watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [ksmd:88]",
		68, now), 0);
	stress_klog_idle(now + 0.1, false);
	assert_int_equal(test_events(), 1);
	test_out_end();
	assert_null(strstr(test_out, "error: "));
	test_out_begin();
	stress_klog_idle(now + STRESS_KLOG_IDLE + 0.1, false);
	test_out_end();
	assert_non_null(strstr(test_out, "] klog-check: kernel lockup: BUG:soft_lockup-CPU##stuck_for#s![ksmd:#]\n"));
}

/*
 *  test_level_rule()
 *	-K: stress-ng's rule for records no splat took; off without -K
 */
static void test_level_rule(void **state)
{
	(void)state;
	/* without -K a kernel error record that is no splat is not looked at */
	test_reset();
	test_feed("3,1,773584114,-;EXT4-fs (loop0): VFS: Can't find ext4 filesystem");
	test_feed("4,2,773584115,-;some driver: a warning");
	stress_klog_idle(stress_time_now(), true);
	test_out_end();
	assert_int_equal(g_shared->klog_errors, 0);
	assert_string_equal(test_out, "");

	/* with -K: stress-ng's error and info lines */
	test_reset();
	g_opt_flags |= OPT_FLAGS_KLOG_CHECK;
	test_feed("3,1,773584114,-;EXT4-fs (loop0): VFS: Can't find ext4 filesystem");
	test_feed("4,2,773584115,-;some driver: a warning\\x0asecond line");
	test_feed("3,3,773584116,-;Buffer I/O error on dev loop0, logical block 0");
	test_feed("11,4,773584117,-;user space <3> record");
	test_feed("6,5,773584118,-;an info record");
	stress_klog_idle(stress_time_now(), true);
	test_out_end();
	assert_int_equal(g_shared->klog_errors, 1);
	assert_int_equal(test_events(), 0);
	assert_non_null(strstr(test_out, "] klog-check: error: [773.584114] 'EXT4-fs (loop0): VFS: Can't find ext4 filesystem'\n"));
	assert_non_null(strstr(test_out, "] klog-check: warning: [773.584115] 'some driver: a warning second line'\n"));
	assert_null(strstr(test_out, "Buffer I/O"));
	assert_null(strstr(test_out, "user space"));
	assert_null(strstr(test_out, "an info record"));

	/* with -K a splat is one error: its lines are not level-rule lines */
	test_reset();
	g_opt_flags |= OPT_FLAGS_KLOG_CHECK;
	test_feed("4,1,100,-;------------[ cut here ]------------");
	test_feed("4,2,101,-;WARNING: CPU: 0 PID: 1 at mm/ksm.c:10 break_ksm+0x1/0x2");
	test_feed("4,3,102,-;Modules linked in:");
	test_feed("4,4,103,-;RIP: 0010:break_ksm+0x1/0x2");
	test_feed("4,5,104,-;Call Trace:");
	test_feed("4,6,105,-; <TASK>");
	test_feed("4,7,106,-; unmerge_ksm_pages+0x5c/0xa0");
	test_feed("4,8,107,-; </TASK>");
	test_feed("4,9,108,-;---[ end trace 0000000000000000 ]---");
	test_feed("3,10,109,-;later: an unrelated error");
	stress_klog_idle(stress_time_now(), true);
	test_out_end();
	assert_int_equal(test_events(), 1);
	assert_int_equal(g_shared->klog_errors, 2);
	assert_int_equal(test_count(test_out, "stress-ng: error: ["), 2);
	assert_int_equal(test_count(test_out, "klog-check: warning: "), 0);
	assert_non_null(strstr(test_out, "] klog-check: error: [0.000109] 'later: an unrelated error'\n"));

	/* the registers x86 prints again after an oops's end marker are its own */
	test_reset();
	g_opt_flags |= OPT_FLAGS_KLOG_CHECK;
	test_feed("2,1,100,-;kernel BUG at mm/ksm.c:774!");
	test_feed("4,2,101,-;Oops: invalid opcode: 0000 [#1] PREEMPT SMP NOPTI");
	test_feed("4,3,102,-;RIP: 0010:remove_rmap_item_from_tree+0x1c5/0x1d0");
	test_feed("4,4,103,-;---[ end trace 0000000000000000 ]---");
	test_feed("4,5,104,-;RIP: 0010:remove_rmap_item_from_tree+0x1c5/0x1d0");
	test_feed("4,6,105,-;RSP: 0018:ffffc90000c3fd18 EFLAGS: 00010246");
	test_feed("4,7,106,-;R13: 00007f3a1c200000 R14: ffff88810d0f3b40 R15: 0000000000000001");
	test_feed("4,8,107,-;FS:  00007f3a1c5ff6c0(0000) GS:ffff8885e2d00000(0000) knlGS:0000000000000000");
	test_feed("4,9,108,-;Code: 0f 0b 48 89 df e8");
	test_feed("4,10,109,-;some driver: a warning");
	stress_klog_idle(stress_time_now(), true);
	test_out_end();
	assert_int_equal(test_events(), 1);
	assert_int_equal(g_shared->klog_errors, 1);
	assert_int_equal(test_count(test_out, "klog-check: warning: "), 1);
	assert_non_null(strstr(test_out, "klog-check: warning: [0.000109] 'some driver: a warning'\n"));
	g_opt_flags &= ~OPT_FLAGS_KLOG_CHECK;
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
		stress_klog_taint_letters(cases[i].bits, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].letters);
	}
	stress_klog_taint_letters(0x2a0, small, sizeof(small));
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
 *	new taint bits are reported once; an error only for B, D, W or L and only if the log had none
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
	stress_klog_taint_path = path;

	test_taint_write(path, "4097\n");		/* P + O at the start */
	assert_int_equal(stress_klog_taint_read(&t), 0);
	assert_int_equal(t, 4097);
	stress_klog_shm->taint_start = t;
	stress_klog_shm->taint_valid = 1;
	stress_klog_taint_check(t);
	assert_int_equal(test_events(), 0);

	test_taint_write(path, "4161\n");		/* + U (64): said, not an event */
	assert_int_equal(stress_klog_taint_read(&t), 0);
	stress_klog_taint_check(t);
	assert_int_equal(test_events(), 0);
	assert_int_equal(test_has_key("taint:U"), 0);

	test_taint_write(path, "4673\n");		/* + W (512) */
	assert_int_equal(stress_klog_taint_read(&t), 0);
	stress_klog_taint_check(t);
	assert_int_equal(test_events(), 1);
	assert_int_equal(g_shared->klog_errors, 1);
	assert_int_equal(test_has_key("taint:W"), 1);
	stress_klog_taint_check(t);		/* not twice */
	assert_int_equal(test_events(), 1);
	assert_int_equal(test_has_key("taint:W"), 1);

	test_taint_write(path, "4801\n");		/* + D (128): reported, no new error */
	assert_int_equal(stress_klog_taint_read(&t), 0);
	stress_klog_taint_check(t);
	assert_int_equal(test_events(), 1);
	assert_int_equal(g_shared->klog_errors, 1);
	assert_int_equal(test_has_key("taint:D"), 1);
	test_out_end();
	assert_non_null(strstr(test_out, "] klog-check: kernel taint: U (0x40) set during the run, not a failure\n"));
	assert_non_null(strstr(test_out, "error: ["));
	assert_non_null(strstr(test_out, "] klog-check: kernel taint: W (0x200) set during the run, no log record seen\n"));
	assert_non_null(strstr(test_out, "info:  ["));
	assert_non_null(strstr(test_out, "] klog-check: kernel taint: D (0x80) set during the run\n"));

	/* a WARN seen in the log explains the W taint: one error, not two */
	test_reset();
	stress_klog_taint_path = path;
	stress_klog_shm->taint_start = 0;
	stress_klog_shm->taint_valid = 1;
	test_feed("4,1,1,-;WARNING: CPU: 0 PID: 1 at mm/ksm.c:1 break_ksm+0x1/0x2");
	stress_klog_idle(stress_time_now(), true);
	stress_klog_taint_check(512);
	assert_int_equal(test_events(), 1);
	assert_int_equal(g_shared->klog_errors, 1);
	assert_int_equal(test_has_key("taint:W"), 1);

	/* a start mask that could not be read compares with nothing */
	test_reset();
	stress_klog_taint_path = path;
	stress_klog_shm->taint_valid = 0;
	stress_klog_taint_check(512);
	assert_int_equal(test_events(), 0);
	assert_int_equal(test_has_key("taint:W"), 0);

	test_taint_write(path, "junk\n");
	assert_int_equal(stress_klog_taint_read(&t), -1);
	assert_int_equal(shim_unlink(path), 0);
	assert_int_equal(stress_klog_taint_read(&t), -1);
	/* the real file parses */
	stress_klog_taint_path = STRESS_KLOG_TAINTED;
	assert_int_equal(stress_klog_taint_read(&t), 0);
}

/*
 *  test_yaml()
 *	YAML body layout, quoting, status names
 */
static void test_yaml(void **state)
{
	char yaml[2048];
	const char *want =
		"    status: ok\n"
		"    warnings: 1\n"
		"    errors: 1\n"
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
	stress_klog_idle(stress_time_now(), true);
	(void)stress_klog_yaml(yaml, sizeof(yaml));
	assert_string_equal(yaml, want);

	stress_klog_key_add("it's", STRESS_KLOG_BUG);
	(void)stress_klog_yaml(yaml, sizeof(yaml));
	assert_non_null(strstr(yaml, "        - key: 'it''s'\n"));

	test_reset();
	stress_klog_shm->status = STRESS_KLOG_STATUS_UNAVAIL;
	(void)stress_klog_yaml(yaml, sizeof(yaml));
	assert_string_equal(yaml, "    status: unavailable\n    warnings: 0\n    errors: 0\n    lost-records: 0\n");
	stress_klog_shm->status = STRESS_KLOG_STATUS_INCOMPLETE;
	(void)stress_klog_yaml(yaml, sizeof(yaml));
	assert_string_equal(yaml, "    status: incomplete\n    warnings: 0\n    errors: 0\n    lost-records: 0\n");
	stress_klog_shm->status = STRESS_KLOG_STATUS_OFF;
	(void)stress_klog_yaml(yaml, sizeof(yaml));
	assert_string_equal(yaml, "    status: off\n    warnings: 0\n    errors: 0\n    lost-records: 0\n");
	assert_int_equal(stress_klog_yaml(yaml, 0), 0);
	(void)stress_klog_yaml(yaml, 20);
	assert_int_equal(strlen(yaml), 19);
}

/*
 *  test_stop_summary()
 *	stop() without a reader: keys, the verdict, success cleared, YAML
 */
static void test_stop_summary(void **state)
{
	char path[] = "/tmp/test-klog-yaml-XXXXXX";
	bool success = true;
	char *yaml;
	FILE *fp;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	(void)close(fd);
	test_reset();
	stress_klog_shm->status = STRESS_KLOG_STATUS_OK;
	stress_klog_shm->reader_done = 1;
	test_feed("2,1,1,-;kernel BUG at mm/ksm.c:1234!");
	stress_klog_idle(stress_time_now(), true);
	stress_klog_taint_path = "/nonexistent/tainted";
	stress_klog_stop(&success);
	test_out_end();
	assert_false(success);
	assert_null(stress_klog_shm);
	assert_int_equal(g_shared->klog_errors, 0);
	assert_non_null(strstr(test_out, "] klog-check: kernel BUG: kernel_BUG_at_mm/ksm.c\n"));
	assert_non_null(strstr(test_out, "] klog-check: kernel-log key: kernel_BUG_at_mm/ksm.c (count 1)\n"));
	/* the verdict is the last line, in stress-ng's words */
	assert_non_null(strstr(test_out, "] klog-check: detected 1 kernel error messages\n"));
	assert_string_equal(strrchr(test_out, ']'), "] klog-check: detected 1 kernel error messages\n");
	/* the YAML section goes to the file with the extras */
	fp = stress_yaml_open(path);
	assert_non_null(fp);
	stress_yaml_close(fp);
	fp = fopen(path, "r");
	assert_non_null(fp);
	yaml = calloc(1, 65536);
	assert_non_null(yaml);
	assert_true(fread(yaml, 1, 65535, fp) > 0);
	(void)fclose(fp);
	assert_non_null(strstr(yaml, "kernel-log:\n    status: ok\n    warnings: 1\n    errors: 1\n"));
	assert_non_null(strstr(yaml, "        - key: 'kernel_BUG_at_mm/ksm.c'\n"));
	free(yaml);
	(void)shim_unlink(path);

	/* nothing seen: no verdict, success kept */
	test_reset();
	stress_klog_shm->reader_done = 1;
	stress_klog_taint_path = "/nonexistent/tainted";
	success = true;
	stress_klog_stop(&success);
	test_out_end();
	stress_yaml_extras_free();
	assert_true(success);
	assert_null(strstr(test_out, "detected"));
	assert_null(strstr(test_out, "error"));

	/* a reader that did not finish: said, the check is incomplete */
	test_reset();
	stress_klog_taint_path = "/nonexistent/tainted";
	success = true;
	stress_klog_stop(&success);
	test_out_end();
	stress_yaml_extras_free();
	assert_true(success);
	assert_non_null(strstr(test_out, "] klog-check: the kernel log reader stopped before the end of the run, "
		"the kernel log was not checked to the end\n"));
}

/*
 *  test_kmsg_readable()
 *	skip unless /dev/kmsg can be read here
 */
static void test_kmsg_readable(void)
{
	const int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd < 0) {
		print_message("  skipped: cannot open /dev/kmsg, errno=%d (%s)\n", errno, strerror(errno));
		skip();
	}
	(void)close(fd);
}

/*
 *  test_reader_live()
 *	the real reader on /dev/kmsg (root): start, final drain, stop, no
 *	error (injection is tested by tests/it/klog/inject.sh under the lock)
 */
static void test_reader_live(void **state)
{
	bool success = true;

	(void)state;
	test_kmsg_readable();
	test_reset();
	(void)munmap((void *)stress_klog_shm, sizeof(*stress_klog_shm));
	stress_klog_shm = NULL;
	stress_klog_start();
	assert_non_null(stress_klog_shm);
	assert_true(stress_klog_pid > 0);
	assert_int_equal(stress_klog_shm->status, STRESS_KLOG_STATUS_OK);
	assert_true(stress_klog_shm->taint_valid);
	/* the records before the run were read past: a baseline sequence */
	assert_true(stress_klog_state.seq_valid);
	assert_true(stress_klog_state.seq_next > 0);
	(void)usleep(200000);
	assert_int_equal(kill(stress_klog_pid, 0), 0);	/* still reading */
	stress_klog_stop(&success);
	test_out_end();
	stress_yaml_extras_free();
	assert_int_equal(stress_klog_pid, -1);
	assert_null(stress_klog_shm);
	assert_true(success);
	assert_null(strstr(test_out, "error:"));
	assert_null(strstr(test_out, "not checked"));
}

/*
 *  test_reader_dies()
 *	a reader killed during the run: reaped by the runner's wait, the
 *	stop says the log was not checked to the end
 */
static void test_reader_dies(void **state)
{
	bool success = true;
	int status;
	pid_t pid;

	(void)state;
	test_kmsg_readable();
	test_reset();
	(void)munmap((void *)stress_klog_shm, sizeof(*stress_klog_shm));
	stress_klog_shm = NULL;
	stress_klog_start();
	assert_true(stress_klog_pid > 0);
	pid = stress_klog_pid;
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(stress_klog_reaped(pid));
	assert_false(stress_klog_reaped(pid));
	stress_klog_stop(&success);
	test_out_end();
	stress_yaml_extras_free();
	assert_true(success);
	assert_non_null(strstr(test_out, "the kernel log reader stopped before the end of the run"));
}

/*
 *  test_start_unprivileged()
 *	without permission for /dev/kmsg: one line, run goes on unchecked
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
	(void)munmap((void *)stress_klog_shm, sizeof(*stress_klog_shm));
	stress_klog_shm = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char yaml[256];
		bool success = true;
		int rc = 0;

		if ((geteuid() == 0) && ((setgid(65534) < 0) || (setuid(65534) < 0)))
			_exit(10);
		fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
		if (fd >= 0)
			_exit(11);	/* dmesg_restrict=0: cannot test here */
		stress_klog_start();
		if (stress_klog_pid != -1)
			rc |= 1;
		(void)stress_klog_yaml(yaml, sizeof(yaml));
		if (strncmp(yaml, "    status: unavailable\n", 24))
			rc |= 8;
		stress_klog_stop(&success);
		if (!success)
			rc |= 16;
		_exit(rc);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	test_out_end();
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 11) {
		print_message("  skipped: /dev/kmsg readable by uid 65534 (dmesg_restrict=0)\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(strstr(test_out, "info:  ["));
	assert_non_null(strstr(test_out, "] klog-check: cannot open /dev/kmsg, errno="));
	assert_non_null(strstr(test_out, "), the kernel log is not checked\n"));
	assert_int_equal(test_count_lines(test_out), 1);	/* exactly one line */
}

/*
 *  test_teardown()
 *	stop capturing after a test, passed or failed
 */
static int test_teardown(void **state)
{
	(void)state;
	(void)test_out_end();
	return 0;
}

/*
 *  test_group_setup()
 *	the shim's shared state for two instances
 */
static int test_group_setup(void **state)
{
	(void)state;
	return stress_shared_alloc(2, 8) ? 0 : -1;
}

/*
 *  main()
 *	run the klog tests
 */
int main(int argc, char **argv, char **envp)
{
#define T(f)	cmocka_unit_test_teardown(f, test_teardown)
	const struct CMUnitTest tests[] = {
		T(test_corpus),
		T(test_record_parse),
		T(test_unescape),
		T(test_escaped_newline),
		T(test_continuation),
		T(test_lost_records),
		T(test_facilities),
		T(test_hung_task),
		T(test_classify),
		T(test_stack_dump),
		T(test_report),
		T(test_report_pids),
		T(test_every_event),
		T(test_idle_close),
		T(test_level_rule),
		T(test_taint_letters),
		T(test_taint_diff),
		T(test_yaml),
		T(test_stop_summary),
		T(test_reader_live),
		T(test_reader_dies),
		T(test_start_unprivileged),
	};
#undef T

	(void)argc;
	setproctitle_init(argc, argv, envp);	/* the reader sets its title */
	return cmocka_run_group_tests(tests, test_group_setup, NULL);
}
