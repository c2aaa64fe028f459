/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * klog/klog-check.c: the kernel-log check, the standalone build's
 * always-on kernel warning check and its -K/--klog-check (the API of
 * stress-ng's core-klog.c: stress_klog_start(), stress_klog_stop(),
 * declared in core-shim/core-shim-ext.h).  It is a part of this
 * project's product, not a stand-in: stress-ng's own core-klog.c is 289
 * lines and does far less.  A forked reader follows /dev/kmsg from the
 * start of the run to its end.
 *
 * Always (the standalone build's default): kernel splats of the 0-day/
 * LKP categories fail the run (exit 2) - WARNING, BUG (all), kernel BUG
 * at, Oops, general protection fault, soft/hard/workqueue lockups, RCU
 * stalls, KASAN/KFENCE/UBSAN, lockdep, list corruption, refcount_t, bad
 * page state/map, rss-counter, panic, and a B, D, W or L kernel taint
 * bit set during the run with no such record (other taints are said, not
 * failed).  Each splat is grouped (first line, RIP, call trace), named
 * by its LKP dmesg key and printed once as an error line plus info
 * lines; the processes of the run are listed with their state and wchan.
 * A hung task report is grouped and keyed the same way but printed as
 * info, not failed: stress-ng's core treats it so (a task blocked for
 * two minutes on a loaded machine is no proof of a kernel bug), and the
 * stress-ng core patch (tools/integrate/stress-ng-patches) keeps that rule.
 *
 * With -K/--klog-check, in addition, stress-ng's own rule: any other
 * record with syslog level 0..3 is an error, level 4, OOM, hung task,
 * audit and throttling records are info lines (stress-ng 0.22
 * core-klog.c semantics).  The verdict "klog-check: detected N kernel
 * error messages" follows the final run line, as in stress-ng.
 *
 * Records: only facility 0 (kernel) records are looked at, by both
 * rules.  User space cannot write a facility 0 record: a write to
 * /dev/kmsg is stored as LOG_USER or the facility it names (measured on
 * 6.18: "<4>" gives prefix 12), so a process writing "BUG: ..." or a
 * whole fake splat to /dev/kmsg fails nothing.  The tests that inject
 * splats present their records as kernel ones with an LD_PRELOAD library
 * (tests/lib/fakeproc.c, FAKEPROC=kmsg-kernel).
 *
 * There is no off switch (stress-ng has no option to turn -K off): a
 * user without read access to /dev/kmsg gets one info line and the run
 * goes on unchecked.
 */
#include "stress-ng.h"
#include "core-builtin.h"
#include "core-killpid.h"

#include <sched.h>
#if defined(HAVE_POLL_H)
#include <poll.h>
#endif
#if defined(HAVE_REGEX_H)
#include <regex.h>
#endif

#define STRESS_KLOG_NAME	"klog-check"
#define STRESS_KLOG_KMSG	"/dev/kmsg"
#define STRESS_KLOG_TAINTED	"/proc/sys/kernel/tainted"
/* taints that fail the run: bad page (B), oops (D), warning (W), soft lockup (L) */
#define STRESS_KLOG_TAINT_FAIL	((1U << 5) | (1U << 7) | (1U << 9) | (1U << 14))
#define STRESS_KLOG_REC_MAX	(8192 + 64)	/* CONSOLE_EXT_LOG_MAX + slack */
#define STRESS_KLOG_LINE_MAX	(1024)	/* longest logical line kept */
#define STRESS_KLOG_KEY_LEN	(160)
#define STRESS_KLOG_KEYS_MAX	(48)	/* distinct keys per run */
#define STRESS_KLOG_EVENT_KEYS	(8)	/* keys per splat */
#define STRESS_KLOG_TRACE_MAX	(20)	/* call trace lines kept */
#define STRESS_KLOG_TRACE_LEN	(112)
#define STRESS_KLOG_FUNC_LEN	(96)
#define STRESS_KLOG_COMM_LEN	(32)
#define STRESS_KLOG_SPLAT_RECS	(80)	/* records before a splat is closed */
#define STRESS_KLOG_IDLE	(1.0)	/* seconds before a splat is closed */
#define STRESS_KLOG_AFTER	(40)	/* lines after a splat a panic belongs to it */
#define STRESS_KLOG_CAUSE_AGE	(8)	/* header lines from a dump's message to "Call Trace:" */
#define STRESS_KLOG_POLL_MS	(50)
#define STRESS_KLOG_STOP_WAIT	(3.0)	/* seconds for the final drain */
#define STRESS_KLOG_PROCS_MAX	(16)	/* instances listed per event */
#define STRESS_KLOG_FAC_KERN	(0)
#define STRESS_KLOG_SPLAT_LEVEL	(4)	/* splats are logged at warning or more severe */

/* event kinds returned by stress_klog_lkp_classify() */
#define STRESS_KLOG_NOISE	(0)
#define STRESS_KLOG_WARNING	(1)
#define STRESS_KLOG_BUG		(2)
#define STRESS_KLOG_OOPS	(3)
#define STRESS_KLOG_LOCKUP	(4)
#define STRESS_KLOG_RCU_STALL	(5)
#define STRESS_KLOG_HUNG_TASK	(6)
#define STRESS_KLOG_CORRUPTION	(7)
#define STRESS_KLOG_SANITIZER	(8)
#define STRESS_KLOG_LOCKDEP	(9)
#define STRESS_KLOG_PANIC	(10)
#define STRESS_KLOG_TAINT	(11)
#define STRESS_KLOG_RIP		(12)	/* secondary key only */
#define STRESS_KLOG_STACK_DUMP	(13)	/* a "Call Trace:" no splat head or known report began */

/* kernel-log status in the YAML kernel-log section */
#define STRESS_KLOG_STATUS_OFF		(0)	/* not started */
#define STRESS_KLOG_STATUS_OK		(1)	/* watched the whole run */
#define STRESS_KLOG_STATUS_UNAVAIL	(2)	/* /dev/kmsg not readable */
#define STRESS_KLOG_STATUS_INCOMPLETE	(3)	/* the reader stopped early */

/* splat grouping phases */
#define STRESS_KLOG_PH_NONE	(0)
#define STRESS_KLOG_PH_HEADER	(1)	/* before "Call Trace:" */
#define STRESS_KLOG_PH_TRACE	(2)	/* collecting trace entries */
#define STRESS_KLOG_PH_TAIL	(3)	/* trace done, reported */

typedef struct {
	char key[STRESS_KLOG_KEY_LEN];
	uint32_t count;
	int kind;
} stress_klog_key_t;

/* shared (MAP_SHARED) state: the reader writes, the parent reads at stop */
typedef struct {
	uint32_t events;		/* distinct splat (and taint) events */
	uint32_t lost;			/* records overwritten before read */
	uint32_t records;		/* records read */
	uint32_t stop;			/* parent asks the reader to stop */
	uint32_t reader_done;		/* the reader finished its final drain */
	uint32_t taint_valid;		/* taint_start was read */
	uint32_t taint_start;
	uint32_t taint_reported;	/* taint bits already reported */
	uint32_t nkeys;
	uint32_t keys_dropped;
	int status;			/* STRESS_KLOG_STATUS_* */
	double time_start;		/* when the reader started */
	stress_klog_key_t keys[STRESS_KLOG_KEYS_MAX];
} stress_klog_shared_t;

/* reader-local state: the splat being assembled, continuation look-ahead */
typedef struct {
	int phase;
	int kind;
	bool reported;
	uint32_t nrecs;
	uint32_t ntrace;
	uint32_t nkeys;
	double t_first;
	double t_last;
	uint64_t usec;
	pid_t pid;			/* "PID: n" of the splat, 0 if none */
	char key[STRESS_KLOG_KEY_LEN];
	char guess[STRESS_KLOG_KEY_LEN];	/* a stack dump's key from an unreliable entry */
	char first[STRESS_KLOG_LINE_MAX];
	char rip[STRESS_KLOG_FUNC_LEN];
	char trace[STRESS_KLOG_TRACE_MAX][STRESS_KLOG_TRACE_LEN];
	char keys[STRESS_KLOG_EVENT_KEYS][STRESS_KLOG_KEY_LEN];
	/* one record look-ahead so 'c'/'+' continuation records can be joined */
	bool pend_valid;
	int pend_fac;
	int pend_pri;
	uint64_t pend_usec;
	size_t pend_len;
	char pend[STRESS_KLOG_REC_MAX];
	bool seq_valid;
	uint64_t seq_next;
	uint32_t after;		/* lines since the last splat closed */
	int closed_kind;	/* kind of the splat that closed last */
	/* the kernel line a bare stack dump follows: dump_stack() callers print one first */
	char cause[STRESS_KLOG_LINE_MAX];
	uint64_t cause_usec;
	uint32_t cause_age;	/* dump header lines (CPU:, Hardware name:, ...) since it */
	bool cause_benign;	/* it introduces a report that is no kernel failure (OOM, sysrq) */
	pid_t cause_pid;	/* "PID: n" of the CPU: line after it */
} stress_klog_state_t;

/* a bounded output string (always NUL terminated, truncates silently) */
typedef struct {
	char *buf;
	size_t len;
	size_t cap;
} stress_klog_str_t;

static stress_klog_shared_t *stress_klog_shm;
static stress_klog_state_t stress_klog_state;
static const char *stress_klog_taint_path = STRESS_KLOG_TAINTED;
static pid_t stress_klog_pid = -1;
static bool stress_klog_cmdline_done;	/* kernel command line logged */

/* kernel taint letters, bit 0..19 (kernel/panic.c taint_flags[]) */
static const char stress_klog_taint_chars[] = "PFSRMBUDAWCIOELKXTNJ";

static const char * const stress_klog_kind_names[] = {
	"noise", "warning", "BUG", "oops", "lockup", "RCU stall", "hung task",
	"memory corruption", "sanitizer report", "lockdep report", "panic",
	"taint", "RIP", "stack dump",
};

/*
 *  stress_klog_kind_name()
 *	human readable name of an event kind
 */
static const char *stress_klog_kind_name(const int kind)
{
	if ((kind < 0) || ((size_t)kind >= SIZEOF_ARRAY(stress_klog_kind_names)))
		return "event";
	return stress_klog_kind_names[kind];
}

/*
 *  stress_klog_isword()
 *	Ruby regex \w: [A-Za-z0-9_]
 */
static inline bool stress_klog_isword(const int c)
{
	return ((c >= 'a') && (c <= 'z')) || ((c >= 'A') && (c <= 'Z')) ||
	       ((c >= '0') && (c <= '9')) || (c == '_');
}

/*
 *  stress_klog_isdigit()
 *	ASCII decimal digit
 */
static inline bool stress_klog_isdigit(const int c)
{
	return (c >= '0') && (c <= '9');
}

/*
 *  stress_klog_ishex()
 *	lower case hex digit [0-9a-f]
 */
static inline bool stress_klog_ishex(const int c)
{
	return stress_klog_isdigit(c) || ((c >= 'a') && (c <= 'f'));
}

/*
 *  stress_klog_isalpha()
 *	ASCII letter
 */
static inline bool stress_klog_isalpha(const int c)
{
	return ((c >= 'a') && (c <= 'z')) || ((c >= 'A') && (c <= 'Z'));
}

/*
 *  stress_klog_put()
 *	append n bytes to an output buffer, truncating silently
 */
static void stress_klog_put(stress_klog_str_t *o, const char *s, const size_t n)
{
	size_t i;

	for (i = 0; (i < n) && (o->len + 1 < o->cap); i++)
		o->buf[o->len++] = s[i];
	o->buf[o->len] = '\0';
}

/*
 *  stress_klog_word_boundary()
 *	Ruby's \b, which POSIX ERE lacks: is offset i (0 <= i <= strlen(s))
 *	between a word and a non-word char (string ends count as non-word)
 */
static inline bool stress_klog_word_boundary(const char *s, const size_t i)
{
	const bool before = (i > 0) && stress_klog_isword((unsigned char)s[i - 1]);

	return before != stress_klog_isword((unsigned char)s[i]);
}

/*
 *  The LKP key normaliser: intel/lkp-tests lib/dmesg.rb generate_error_id()
 *  with common_error_id() inlined, one row per gsub/remove/tr there, in the
 *  same order, so each row can be checked against LKP's line by line.
 *
 *  It runs after the known heads below have picked the part of the line
 *  that names the bug.  LKP's rules are Ruby regexes; these are POSIX EREs,
 *  compiled once, matched byte by byte in the C locale (stress-ng calls
 *  setlocale() only in its perf report, in the parent, after the fork).
 *  ERE has no \d, \w, \W or \b:  \d is [0-9], \w is [a-zA-Z0-9_], \W is
 *  [^a-zA-Z0-9_], and a \b at the start or end of a rule is the row's
 *  BOUND_START / BOUND_END flag, checked on each match by
 *  stress_klog_word_boundary() (a match that fails it is
 *  retried one byte further on, as Ruby's scan would).  Every rule with a
 *  trailing \b ends in a class of word chars only, so POSIX leftmost-longest
 *  and Ruby's backtracking pick the same matches.
 *
 *  Not applied (never seen in a ksm-unmerge run): LKP's removal of build
 *  paths (/c/kernel-tests/src/..., /lkp/.../linux/, ...) and its
 *  LINUX_DEVICE_NAMES_RE (etc/linux-device-names, ~1000 driver names);
 *  the register_blkdev() names below are kept.
 */
#define STRESS_KLOG_BOUND_START	(1)	/* Ruby \b before the match */
#define STRESS_KLOG_BOUND_END	(2)	/* Ruby \b after the match */
#define STRESS_KLOG_BOUND_BOTH	(3)

typedef struct {
	const char *regex;	/* POSIX extended regex */
	const char *replace;	/* replacement, "\1" is group 1 */
	int bound;		/* STRESS_KLOG_BOUND_* */
} stress_klog_rule_t;

static const stress_klog_rule_t stress_klog_rules[] = {
	/* generate_error_id() */
	{ " \\]$",				"",	0 },	/* [ INFO: ... ] */
	{ "\\.(isra|constprop|part)\\.[0-9]+",	"",	0 },
	{ "(bcache|blkext|btt|dasd|drbd|fd|hd|jsfd|lloop|loop|md|mdp|mmc|nbd|nd_blk|"
	  "nfhd|nullb|nvme|pmem|ramdisk|scm|sd|simdisk|sr|ubd|ubiblock|virtblk|"
	  "xsysace|zram)[0-9]+",		"\\1#",	STRESS_KLOG_BOUND_START },
	{ "[0-9a-f]{8}",			"#",	STRESS_KLOG_BOUND_BOTH },
	{ "[0-9a-f]{16}",			"#",	STRESS_KLOG_BOUND_BOTH },
	{ "(=)[0-9a-f]+",			"\\1#",	STRESS_KLOG_BOUND_END },
	{ "[+/]0x[0-9a-f]+",			"",	STRESS_KLOG_BOUND_END },
	{ "[+/][0-9a-f]+",			"",	STRESS_KLOG_BOUND_END },
	{ " \\(Tainted:.+\\)",			"",	0 },
	/* common_error_id() */
	{ "[3-9]\\.[0-9]+[-a-z0-9.]+",		"#",	STRESS_KLOG_BOUND_START },
	{ "[1-9][0-9]-[A-Z][a-z]+-[0-9]{4}",	"#",	STRESS_KLOG_BOUND_BOTH },
	{ "0x[0-9a-f]+",			"#",	STRESS_KLOG_BOUND_BOTH },
	{ "[a-f0-9]{40}",			"#",	STRESS_KLOG_BOUND_BOTH },
	{ "[0-9][0-9.]*",			"#",	STRESS_KLOG_BOUND_START },
	{ "#x",					"0x",	STRESS_KLOG_BOUND_END },
	{ "[\\\"$]",				"~",	0 },
	{ "[ \t]",				" ",	0 },
	{ "  +",				" ",	0 },
	{ "([^a-zA-Z0-9]) ",			"\\1",	0 },
	{ " ([^a-zA-Z])",			"\\1",	0 },
	{ "^ ",					"",	0 },
	{ "  _",				"_",	0 },
	{ " ",					"_",	0 },	/* tr(' ', '_') */
	{ "[-_.,;:#!*[(]+$",			"",	0 },
	/* back in generate_error_id() */
	{ "([a-z]:)[0-9]+",			"\\1",	STRESS_KLOG_BOUND_END },
	{ "#:\\[<#>\\]\\[<#>\\]",		"",	0 },
	{ "RIP:#:",				"RIP:",	0 },
	{ "[^/a-zA-Z0-9_][a-zA-Z0-9_][0-9]+[^a-zA-Z0-9_]", "#", 0 },
	{ "[^a-zA-Z0-9_][a-zA-Z0-9_][0-9]+[^/a-zA-Z0-9_]", "#", 0 },
};

/*
 *  The LKP known heads: lib/dmesg.rb handle_simple_patterns(),
 *  handle_composite_patterns() and handle_complex_patterns(), the patterns
 *  a ksm-unmerge splat can match, in LKP's order.  The first row that
 *  matches anywhere in the line (LKP's case/when) makes the new line: its
 *  replacement, "\1" "\2" being groups and "\0" the whole match, of the
 *  row's match, or of the match of its select regex (WARNING: LKP takes
 *  the first "at .*" of the line); a "sub" row replaces just the match and
 *  keeps the rest (LKP's line.sub).  LKP's "(BUG: unable to handle kernel)
 *  NULL pointer dereference" and "... paging request" rows give the same
 *  key as the plain row.  POSIX leftmost-longest and Ruby's greedy
 *  backtracking select the same groups in these rows (the KASAN/KFENCE
 *  class cannot cross the '+'; ".*" is greedy in both).
 */
typedef struct {
	const char *regex;	/* POSIX extended regex the line must match */
	const char *select;	/* NULL, or the regex whose match is replaced */
	const char *replace;	/* the new line, "\0" "\1" "\2" are groups */
	bool sub;		/* replace only the match, keep the rest */
} stress_klog_head_t;

static const stress_klog_head_t stress_klog_heads[] = {
	/* handle_simple_patterns() */
	{ "(INFO: rcu[_a-z]* self-detected stall on CPU)",	NULL, "\\1", false },
	{ "(INFO: rcu[_a-z]* detected stalls on CPUs/tasks:)",	NULL, "\\1", false },
	{ "(related general protection fault:)",		NULL, "\\1", false },
	{ "(BUG: using __this_cpu_read\\(\\) in preemptible)",	NULL, "\\1", false },
	{ "(BUG: unable to handle kernel)",			NULL, "\\1", false },
	{ "(BUG: workqueue leaked lock or atomic:)",		NULL, "\\1", false },
	{ "(BUG: scheduling while atomic:)",			NULL, "\\1", false },
	{ "(BUG: Bad page map in process)",			NULL, "\\1", false },
	{ "(BUG: Bad page state in process)",			NULL, "\\1", false },
	{ "(BUG: Bad page cache in process)",			NULL, "\\1", false },
	{ "(BUG: soft lockup - CPU#[0-9]+ stuck for [0-9]+s!.*)", NULL, "\\1", false },
	{ "(BUG: workqueue lockup - pool)",			NULL, "\\1", false },
	{ "(rcu_sched kthread starved) for [0-9]+ jiffies",	NULL, "\\1", false },
	{ "([A-Z]+[ a-zA-Z]*): [a-f0-9]{4} \\[#[0-9]+\\] ",	NULL, "\\1", false },
	{ "(BUG: KASAN: [-a-z_ ]+ in [a-z_]+)\\+",		NULL, "\\1", false },
	{ "(BUG: KFENCE: [-a-z_ ]+ in [a-z_]+)\\+",		NULL, "\\1", false },
	/* handle_composite_patterns() */
	{ "(BUG: ).* (still has locks held)",			NULL, "\\1\\2", false },
	{ "(INFO: task ).* (blocked for more than [0-9]+ seconds)", NULL, "\\1\\2", false },
	/* handle_complex_patterns() */
	{ "WARNING:.* at .* ([a-zA-Z.0-9_]+\\+0x)",		"(at .*)", "WARNING: \\1", false },
	{ "(UBSAN: .+)",					NULL, "\\1", false },
	{ "(BUG: using smp_processor_id\\(\\) in preemptible)",	NULL, "\\1", false },
	{ "BUG: Bad rss-counter state mm:([0-9a-f]+|\\(_*ptrval_*\\)) ", NULL,
	  "BUG: Bad rss-counter state mm:# ", true },
	{ "(.*) \\]---(.*)",					NULL, "\\1\\2", false },
};

#if defined(HAVE_REGEX_H) && defined(HAVE_REGEXEC)
#define STRESS_KLOG_GROUPS	(3)	/* whole match, \1, \2 */
#define STRESS_KLOG_NRULES	SIZEOF_ARRAY(stress_klog_rules)
#define STRESS_KLOG_NHEADS	SIZEOF_ARRAY(stress_klog_heads)
#define STRESS_KLOG_NRE	(STRESS_KLOG_NRULES + 2 * STRESS_KLOG_NHEADS)

/* compiled: the rules, then the heads, then the heads' select regexes */
static regex_t stress_klog_re[STRESS_KLOG_NRE];
static int stress_klog_re_state;	/* 0 not compiled, 1 ready, -1 failed */

/*
 *  stress_klog_re_pattern()
 *	the pattern of compiled regex i (NULL: a head without select)
 */
static const char *stress_klog_re_pattern(const size_t i)
{
	const size_t nr = STRESS_KLOG_NRULES, nh = STRESS_KLOG_NHEADS;

	if (i < nr)
		return stress_klog_rules[i].regex;
	if (i < nr + nh)
		return stress_klog_heads[i - nr].regex;
	return stress_klog_heads[i - nr - nh].select;
}

/*
 *  stress_klog_re_free()
 *	regfree() the first n compiled regexes
 */
static void stress_klog_re_free(const size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (stress_klog_re_pattern(i))
			regfree(&stress_klog_re[i]);
}

/*
 *  stress_klog_rules_compile()
 *	regcomp() the rule and head tables once; 1 ready, -1 failed (said once)
 */
static int stress_klog_rules_compile(void)
{
	size_t i;

	if (stress_klog_re_state)
		return stress_klog_re_state;
	for (i = 0; i < STRESS_KLOG_NRE; i++) {
		const char *pattern = stress_klog_re_pattern(i);
		const int ret = pattern ? regcomp(&stress_klog_re[i], pattern, REG_EXTENDED) : 0;

		if (ret) {
			char err[128];

			(void)regerror(ret, &stress_klog_re[i], err, sizeof(err));
			pr_inf("%s: kernel-log: cannot compile key rule '%s': %s; keys are "
				"not LKP-normalised\n", STRESS_KLOG_NAME, pattern, err);
			stress_klog_re_free(i);
			stress_klog_re_state = -1;
			return -1;
		}
	}
	stress_klog_re_state = 1;
	return 1;
}

/*
 *  stress_klog_rules_free()
 *	regfree() the compiled rule and head tables
 */
static void stress_klog_rules_free(void)
{
	if (stress_klog_re_state != 1)
		return;
	stress_klog_re_free(STRESS_KLOG_NRE);
	stress_klog_re_state = 0;
}

/*
 *  stress_klog_replace()
 *	append a replacement to o, "\0", "\1", "\2" being the match and groups
 *	of the match in s
 */
static void stress_klog_replace(stress_klog_str_t *o, const char *replace,
	const char *s, const regmatch_t *m)
{
	const char *p;

	for (p = replace; *p; p++) {
		const int g = (p[0] == '\\') ? p[1] - '0' : -1;

		if ((g >= 0) && (g < STRESS_KLOG_GROUPS)) {
			if (m[g].rm_so >= 0)
				stress_klog_put(o, s + m[g].rm_so,
					(size_t)(m[g].rm_eo - m[g].rm_so));
			p++;
			continue;
		}
		stress_klog_put(o, p, 1);
	}
}

/*
 *  stress_klog_known_head()
 *	LKP handle_known_patterns(): the first head row matching buf
 *	(capacity cap) rewrites it; false if none matches
 */
static bool stress_klog_known_head(char *buf, const size_t cap)
{
	const size_t nr = STRESS_KLOG_NRULES, nh = STRESS_KLOG_NHEADS;
	char out[STRESS_KLOG_LINE_MAX];
	stress_klog_str_t o = { out, 0, (cap < sizeof(out)) ? cap : sizeof(out) };
	regmatch_t m[STRESS_KLOG_GROUPS];
	size_t i;

	if (stress_klog_rules_compile() < 0)
		return false;
	for (i = 0; i < nh; i++) {
		const stress_klog_head_t *h = &stress_klog_heads[i];

		/* test without groups first: glibc finds a plain match much faster */
		if (regexec(&stress_klog_re[nr + i], buf, 0, NULL, 0))
			continue;
		if (regexec(&stress_klog_re[h->select ? nr + nh + i : nr + i], buf,
			    SIZEOF_ARRAY(m), m, 0))
			continue;
		out[0] = '\0';
		if (h->sub)
			stress_klog_put(&o, buf, (size_t)m[0].rm_so);
		stress_klog_replace(&o, h->replace, buf, m);
		if (h->sub)
			stress_klog_put(&o, buf + m[0].rm_eo, strlen(buf + m[0].rm_eo));
		(void)shim_memcpy(buf, out, o.len + 1);
		return true;
	}
	return false;
}

/*
 *  stress_klog_rule_apply()
 *	Ruby gsub of one rule over the NUL terminated buf (capacity cap):
 *	every non-overlapping match, left to right, that passes its \b flags
 */
static void stress_klog_rule_apply(char *buf, const size_t cap, const regex_t *re,
	const stress_klog_rule_t *rule)
{
	char out[STRESS_KLOG_LINE_MAX];
	stress_klog_str_t o = { out, 0, (cap < sizeof(out)) ? cap : sizeof(out) };
	const size_t n = strlen(buf);
	/* ask for groups only when the replacement uses them (faster) */
	const size_t ngroups = strchr(rule->replace, '\\') ? STRESS_KLOG_GROUPS : 1;
	size_t p = 0;
	regmatch_t m[STRESS_KLOG_GROUPS];

	out[0] = '\0';
	while ((p < n) && !regexec(re, buf + p, ngroups, m, p ? REG_NOTBOL : 0)) {
		const size_t s = p + (size_t)m[0].rm_so, e = p + (size_t)m[0].rm_eo;

		if (s >= n)
			break;
		if ((e == s) ||
		    ((rule->bound & STRESS_KLOG_BOUND_START) &&
		     !stress_klog_word_boundary(buf, s)) ||
		    ((rule->bound & STRESS_KLOG_BOUND_END) &&
		     !stress_klog_word_boundary(buf, e))) {
			/* no match here: keep one byte, look again after it */
			stress_klog_put(&o, buf + p, s + 1 - p);
			p = s + 1;
			continue;
		}
		stress_klog_put(&o, buf + p, s - p);
		stress_klog_replace(&o, rule->replace, buf + p, m);
		p = e;
	}
	if (p < n)
		stress_klog_put(&o, buf + p, n - p);
	(void)shim_memcpy(buf, out, o.len + 1);
}

/*
 *  stress_klog_error_id()
 *	LKP generate_error_id(): normalise a (pre-selected) line into a key by
 *	the rule table; if the rules cannot be compiled, spaces become '_' only
 */
static void stress_klog_error_id(char *buf, const size_t cap)
{
	size_t i;

	if (stress_klog_rules_compile() < 0) {
		for (i = 0; buf[i]; i++)
			buf[i] = (buf[i] == ' ') ? '_' : buf[i];
		return;
	}
	for (i = 0; i < SIZEOF_ARRAY(stress_klog_rules); i++)
		stress_klog_rule_apply(buf, cap, &stress_klog_re[i],
			&stress_klog_rules[i]);
}
#else
/*
 *  stress_klog_rules_compile()
 *	no regex.h: there is nothing to compile, keys are not LKP-normalised
 */
static int stress_klog_rules_compile(void)
{
	return -1;
}

/*
 *  stress_klog_known_head()
 *	no regex.h: no head is selected
 */
static bool stress_klog_known_head(char *buf, const size_t cap)
{
	(void)buf;
	(void)cap;
	(void)stress_klog_heads;
	return false;
}

/*
 *  stress_klog_rules_free()
 *	no regex.h: nothing was compiled
 */
static void stress_klog_rules_free(void)
{
}

/*
 *  stress_klog_error_id()
 *	no regex.h: keys are the selected line with spaces as '_', not
 *	LKP-normalised (detection and event kinds do not depend on keys)
 */
static void stress_klog_error_id(char *buf, const size_t cap)
{
	size_t i;

	(void)cap;
	(void)stress_klog_rules;
	for (i = 0; buf[i]; i++)
		buf[i] = (buf[i] == ' ') ? '_' : buf[i];
}
#endif

/*
 *  stress_klog_copy()
 *	copy n bytes of src into buf (capacity cap) as a string
 */
static void stress_klog_copy(char *buf, const size_t cap, const char *src, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	(void)memmove(buf, src, n);
	buf[n] = '\0';
}

/*
 *  stress_klog_oops_cut()
 *	LKP selects "[a-zA-Z0-9_ #]+: [0-9a-f]{4} \[#[0-9]+\]" up to the ']'
 *	(e.g. "general protection fault: 0000 [#1]") unless "Oops: .*" matched
 */
static void stress_klog_oops_cut(char *buf)
{
	char *p = buf;
	int k;

	if (!strncmp(buf, "Oops: ", 6))
		return;
	while (stress_klog_isword((unsigned char)*p) || (*p == ' ') || (*p == '#'))
		p++;
	if ((p == buf) || strncmp(p, ": ", 2))
		return;
	for (k = 2; k < 6; k++)
		if (!stress_klog_ishex((unsigned char)p[k]))
			return;
	if (strncmp(p + 6, " [#", 3) || !stress_klog_isdigit((unsigned char)p[9]))
		return;
	for (p += 9; stress_klog_isdigit((unsigned char)*p); p++)
		;
	if (*p == ']')
		p[1] = '\0';
}

/*
 *  stress_klog_make_key()
 *	LKP analyze_error_id(): line -> key without the "dmesg." prefix
 */
static void stress_klog_make_key(const char *line, char *key, const size_t keylen)
{
	char buf[STRESS_KLOG_LINE_MAX];
	const char *p = line;

	/* preprocess_line(): drop everything before the first letter */
	while (*p && !stress_klog_isalpha((unsigned char)*p))
		p++;
	stress_klog_copy(buf, sizeof(buf), p, strlen(p));
	stress_klog_oops_cut(buf);

	(void)stress_klog_known_head(buf, sizeof(buf));

	stress_klog_error_id(buf, sizeof(buf));
	stress_klog_copy(key, keylen, buf, strlen(buf));
}

/*
 *  stress_klog_after_prefix()
 *	text after a leading "<subsystem>: " ([a-zA-Z0-9_ -]+: ), else NULL
 */
static const char *stress_klog_after_prefix(const char *line)
{
	const char *p;

	/* e.g. "watchdog: ", "NMI watchdog: ", "rcu: " */
	for (p = line; stress_klog_isword((unsigned char)*p) || (*p == ' ') || (*p == '-'); p++)
		;
	if ((p == line) || (p[0] != ':') || (p[1] != ' '))
		return NULL;
	return p + 2;
}

/*
 *  stress_klog_starts_with()
 *	does line (or the text after its prefix, if any) start with pat
 */
static bool stress_klog_starts_with(const char *line, const char *after, const char *pat)
{
	const size_t l = strlen(pat);

	return !strncmp(line, pat, l) || (after && !strncmp(after, pat, l));
}

/*
 *  stress_klog_noise()
 *	lines that look alarming but are not kernel failures
 */
static bool stress_klog_noise(const char *line)
{
	static const char * const noise[] = {
		"invoked oom-killer",
		"Out of memory",
		"oom-kill:",
		"oom_reaper:",
		"callbacks suppressed",
		"Memory cgroup out of memory",
	};
	size_t i;

	if (!strncmp(line, "audit:", 6) || !strncmp(line, "audit(", 6) ||
	    !strncmp(line, "type=", 5))
		return true;
	for (i = 0; i < SIZEOF_ARRAY(noise); i++)
		if (strstr(line, noise[i]))
			return true;
	return false;
}

/*
 *  stress_klog_kind()
 *	failure kind of one logical line (leading blanks stripped), 0 if none
 */
static int stress_klog_kind(const char *line)
{
	static const struct {
		const char *pat;
		bool head;	/* anchored (after an optional prefix) */
		int kind;
	} sigs[] = {
		{ "possible circular locking dependency detected", false, STRESS_KLOG_LOCKDEP },
		{ "possible recursive locking detected", false, STRESS_KLOG_LOCKDEP },
		{ "inconsistent lock state", false, STRESS_KLOG_LOCKDEP },
		{ "suspicious RCU usage", false, STRESS_KLOG_LOCKDEP },
		{ "WARNING: CPU: ", true, STRESS_KLOG_WARNING },
		{ "WARNING: at ", true, STRESS_KLOG_WARNING },
		{ "kernel BUG at ", true, STRESS_KLOG_BUG },
		{ "Kernel BUG at ", true, STRESS_KLOG_BUG },
		{ "BUG: soft lockup", true, STRESS_KLOG_LOCKUP },
		{ "BUG: workqueue lockup", true, STRESS_KLOG_LOCKUP },
		{ "BUG: KASAN: ", true, STRESS_KLOG_SANITIZER },
		{ "BUG: KFENCE: ", true, STRESS_KLOG_SANITIZER },
		{ "BUG: Bad ", true, STRESS_KLOG_CORRUPTION },
		{ "BUG: ", true, STRESS_KLOG_BUG },
		{ "Oops: ", true, STRESS_KLOG_OOPS },
		{ "general protection fault", true, STRESS_KLOG_OOPS },
		{ "Unable to handle kernel ", true, STRESS_KLOG_OOPS },
		{ "KASAN: ", true, STRESS_KLOG_SANITIZER },
		{ "KFENCE: ", true, STRESS_KLOG_SANITIZER },
		{ "UBSAN: ", true, STRESS_KLOG_SANITIZER },
		{ "Watchdog detected hard LOCKUP", true, STRESS_KLOG_LOCKUP },
		{ "list_add corruption", true, STRESS_KLOG_CORRUPTION },
		{ "list_del corruption", true, STRESS_KLOG_CORRUPTION },
		{ "refcount_t: ", true, STRESS_KLOG_CORRUPTION },
		{ "page dumped because", true, STRESS_KLOG_CORRUPTION },
		{ "Huh VM_FAULT_OOM leaked out", true, STRESS_KLOG_WARNING },
		{ "Kernel panic - not syncing", true, STRESS_KLOG_PANIC },
	};
	const char *after = stress_klog_after_prefix(line);
	size_t i;

	if (stress_klog_starts_with(line, after, "Kernel panic - not syncing"))
		return STRESS_KLOG_PANIC;
	if (stress_klog_noise(line))
		return STRESS_KLOG_NOISE;
	for (i = 0; i < SIZEOF_ARRAY(sigs); i++) {
		const bool hit = sigs[i].head ?
			stress_klog_starts_with(line, after, sigs[i].pat) :
			(strstr(line, sigs[i].pat) != NULL);

		if (hit)
			return sigs[i].kind;
	}
	/* "WARNING: <file>:<line> at <func>+0x..." (newer WARN format) */
	if (stress_klog_starts_with(line, after, "WARNING: ") && strstr(line, " at ") &&
	    strstr(line, "+0x"))
		return STRESS_KLOG_WARNING;
	/* rcu: INFO: rcu_preempt detected stalls / self-detected stall */
	if (stress_klog_starts_with(line, after, "INFO: rcu") && strstr(line, "detected stall"))
		return STRESS_KLOG_RCU_STALL;
	if (stress_klog_starts_with(line, after, "INFO: task ") && strstr(line, " blocked for more than "))
		return STRESS_KLOG_HUNG_TASK;
	return STRESS_KLOG_NOISE;
}

/*
 *  stress_klog_lkp_classify()
 *	pure: event kind (> 0) of a message and its LKP key, 0 for noise
 */
static int stress_klog_lkp_classify(const char *msg, char *key, size_t keylen)
{
	const char *p = msg;
	int kind;

	if (key && keylen)
		key[0] = '\0';
	if (!msg)
		return STRESS_KLOG_NOISE;
	while ((*p == ' ') || (*p == '\t'))
		p++;
	kind = stress_klog_kind(p);
	if ((kind != STRESS_KLOG_NOISE) && key && keylen)
		stress_klog_make_key(p, key, keylen);
	return kind;
}

/*
 *  stress_klog_header_field()
 *	parse a decimal u64 field ending in term; -1 on error
 */
static int stress_klog_header_field(const char **pp, const char *end, const char term, uint64_t *val)
{
	const char *p = *pp;
	uint64_t v = 0;

	if ((p >= end) || !stress_klog_isdigit((unsigned char)*p))
		return -1;
	while ((p < end) && stress_klog_isdigit((unsigned char)*p)) {
		const uint64_t d = (uint64_t)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = (v * 10) + d;
		p++;
	}
	if ((p >= end) || (*p != term))
		return -1;
	*pp = p + 1;
	*val = v;
	return 0;
}

/*
 *  stress_klog_record_parse()
 *	pure: "pri,seq,usec,flags[,..];message\n[ KEY=value\n...]", 0 or -1
 */
static int stress_klog_record_parse(const char *rec, size_t len, int *level,
	uint64_t *seq, uint64_t *usec, int *facility, const char **msg, size_t *msglen)
{
	const char *p = rec, *end, *semi, *nl;
	uint64_t pri, s, u;

	if (!rec)
		return -1;
	end = rec + len;
	semi = memchr(rec, ';', len);
	if (!semi)
		return -1;
	if ((stress_klog_header_field(&p, semi, ',', &pri) < 0) || (pri > 1023))
		return -1;
	if (stress_klog_header_field(&p, semi, ',', &s) < 0)
		return -1;
	if (stress_klog_header_field(&p, semi, ',', &u) < 0)
		return -1;
	/* flags: one char, then optional ",key=value" fields (caller=) */
	if ((p >= semi) || ((p + 1 < semi) && (p[1] != ',')))
		return -1;
	nl = memchr(semi + 1, '\n', (size_t)(end - (semi + 1)));
	if (level)
		*level = (int)(pri & 7);
	if (facility)
		*facility = (int)(pri >> 3);
	if (seq)
		*seq = s;
	if (usec)
		*usec = u;
	if (msg)
		*msg = semi + 1;
	if (msglen)
		*msglen = (size_t)((nl ? nl : end) - (semi + 1));
	return 0;
}

/*
 *  stress_klog_record_flag()
 *	flags char of a well-formed record ('-', 'c' or legacy '+')
 */
static char stress_klog_record_flag(const char *rec, const size_t len)
{
	size_t i, commas = 0;

	for (i = 0; (i < len) && (rec[i] != ';'); i++) {
		if ((rec[i] == ',') && (++commas == 3))
			return ((i + 1 < len) && (rec[i + 1] != ';')) ? rec[i + 1] : '-';
	}
	return '-';
}

/*
 *  stress_klog_hexval()
 *	value of a hex digit (either case), -1 if not one
 */
static int stress_klog_hexval(const int c)
{
	if ((c >= '0') && (c <= '9'))
		return c - '0';
	if ((c >= 'a') && (c <= 'f'))
		return c - 'a' + 10;
	if ((c >= 'A') && (c <= 'F'))
		return c - 'A' + 10;
	return -1;
}

/*
 *  stress_klog_unescape()
 *	decode \xNN escapes; keep '\n', other control chars become ' '
 */
static size_t stress_klog_unescape(const char *in, const size_t inlen, char *out, const size_t outlen)
{
	size_t i = 0, o = 0;

	if (!outlen)
		return 0;
	while ((i < inlen) && (o + 1 < outlen)) {
		int c = (unsigned char)in[i];

		if ((c == '\\') && (i + 3 < inlen) && (in[i + 1] == 'x') &&
		    (stress_klog_hexval((unsigned char)in[i + 2]) >= 0) &&
		    (stress_klog_hexval((unsigned char)in[i + 3]) >= 0)) {
			c = (stress_klog_hexval((unsigned char)in[i + 2]) << 4) |
			    stress_klog_hexval((unsigned char)in[i + 3]);
			i += 4;
		} else {
			i++;
		}
		if (((c < ' ') && (c != '\n')) || (c == 0x7f))
			c = ' ';
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return o;
}


/*
 *  stress-ng's own -K rule (core-klog.c of stress-ng 0.22): substrings
 *  that make a record neither an error nor worth an info line
 */
static const char * const stress_klog_exceptions[] = {
	"audit: backlog",
	"x86/split lock detection",
	"detected capacity change from",
	"umip_printk",
	"expecting 0xbadc0de (pid=",
	"callbacks suppressed",
	"kmod_concurrent_max",
	"hrtimer: interrupt took",
	"no longer affine to",
	"AppArmor DFA ",
	"apparmor: aa_kernel_interface_replace_policy",
	"apparmor=\"STATUS\"",
	"Invalid logical block size (256)",
	"Invalid logical block size (4000)",
	"Invalid logical block size (65535)",
	"Buffer I/O error on dev loop",
	"over core_pipe_limit, skipping core dump",
};

/*
 *  stress_klog_excepted()
 *	true if the record matches one of the exception substrings
 */
static bool stress_klog_excepted(const char *str)
{
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(stress_klog_exceptions); i++) {
		if (strstr(str, stress_klog_exceptions[i]))
			return true;
	}
	return false;
}

/*
 *  stress_klog_unescape_nl()
 *	turn the "\x0a" escapes of multi-line records into spaces
 */
static void stress_klog_unescape_nl(char *buf)
{
	char *ptr;

	while ((ptr = strstr(buf, "\\x0a")) != NULL) {
		*ptr = ' ';
		(void)memmove(ptr + 1, ptr + 4, strlen(ptr + 4) + 1);
	}
}

/*
 *  stress_klog_level_rule()
 *	stress-ng's classification of one record's text by its syslog
 *	prefix (facility * 8 + level) and substrings; sets the kind text
 */
static stress_klog_class_t stress_klog_level_rule(const int prefix,
	const char *text, const char **kind)
{
	bool lockup = false;

	/* kernel records only (facility 0), as the stress-ng core patch has it */
	if ((prefix < 0) || ((prefix >> 3) != STRESS_KLOG_FAC_KERN))
		return STRESS_KLOG_IGNORE;
	if (strstr(text, "audit:")) {
		*kind = "audit";
	} else if ((strstr(text, "CPU") || strstr(text, "cpu")) &&
		   (strstr(text, "throttle") || strstr(text, "throttling"))) {
		*kind = "CPU throttling";
	} else if (strstr(text, "blocked for more than")) {
		*kind = "hung task";
	} else if (strstr(text, "watchdog") && strstr(text, "hard LOCKUP")) {
		*kind = "hard lockup";
		lockup = true;
	} else if (strstr(text, "soft lockup") && strstr(text, "stuck")) {
		*kind = "soft lockup";
		lockup = true;
	} else if (strstr(text, "Out of memory") ||
		   ((prefix > 3) && strstr(text, "OOM"))) {
		*kind = "out of memory";
	} else {
		static const char * const levels[] = {
			"emergency", "alert", "critical", "error", "warning",
		};

		if (prefix > 4)
			return STRESS_KLOG_IGNORE;
		*kind = levels[prefix];
		if (prefix <= 3)
			return stress_klog_excepted(text) ?
				STRESS_KLOG_IGNORE : STRESS_KLOG_ERROR;
	}
	if (lockup)
		return STRESS_KLOG_ERROR;
	return stress_klog_excepted(text) ? STRESS_KLOG_IGNORE : STRESS_KLOG_INFO;
}

/*
 *  stress_klog_classify()
 *	stress-ng's -K classification of one /dev/kmsg record
 *	"prefix,seq,usecs,...;message" (modified in place); sets the kind
 *	text, "[sec.usec]" time stamp and message pointer
 */
stress_klog_class_t stress_klog_classify(char *record, const char **kind,
	char *ts, const size_t ts_len, const char **msg)
{
	int prefix, seq;
	uint64_t usecs;
	char *ptr;

	ptr = strchr(record, '\n');
	if (ptr)
		*ptr = '\0';
	ptr = strchr(record, ';');
	if (!ptr || (sscanf(record, "%d,%d,%" SCNu64, &prefix, &seq, &usecs) != 3))
		return STRESS_KLOG_IGNORE;
	*msg = ptr + 1;
	(void)snprintf(ts, ts_len, "[%" PRIu64 ".%6.6" PRIu64 "]",
		usecs / 1000000, usecs % 1000000);
	stress_klog_unescape_nl(record);
	return stress_klog_level_rule(prefix, *msg, kind);
}

/*
 *  stress_klog_cmdline_log()
 *	log the kernel command line once, before the first report
 */
static void stress_klog_cmdline_log(void)
{
	char buf[4096];
	char *nl;
	ssize_t n;

	if (stress_klog_cmdline_done)
		return;
	stress_klog_cmdline_done = true;
	n = stress_fs_file_read("/proc/cmdline", buf, sizeof(buf) - 1);
	if (n < 0)
		return;
	buf[n] = '\0';
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	pr_inf("%s: kernel cmdline: '%s'\n", STRESS_KLOG_NAME, buf);
}

/*
 *  stress_klog_level_line()
 *	-K: report a record no splat took by stress-ng's rule; counts errors
 */
static void stress_klog_level_line(const int prefix, const uint64_t usec, char *text)
{
	const char *kind = "";
	char ts[48], *p;

	for (p = text; *p; p++)
		if (*p == '\n')
			*p = ' ';
	switch (stress_klog_level_rule(prefix, text, &kind)) {
	case STRESS_KLOG_ERROR:
		stress_klog_cmdline_log();
		(void)snprintf(ts, sizeof(ts), "[%" PRIu64 ".%6.6" PRIu64 "]",
			usec / 1000000, usec % 1000000);
		pr_err("%s: %s: %s '%s'\n", STRESS_KLOG_NAME, kind, ts, text);
		if (g_shared)
			__atomic_add_fetch(&g_shared->klog_errors, 1, __ATOMIC_SEQ_CST);
		break;
	case STRESS_KLOG_INFO:
		stress_klog_cmdline_log();
		(void)snprintf(ts, sizeof(ts), "[%" PRIu64 ".%6.6" PRIu64 "]",
			usec / 1000000, usec % 1000000);
		pr_inf("%s: %s: %s '%s'\n", STRESS_KLOG_NAME, kind, ts, text);
		break;
	default:
		break;
	}
}
/*
 *  stress_klog_key_add()
 *	count one key in the shared table (reader / parent only)
 */
static void stress_klog_key_add(const char *key, const int kind)
{
	stress_klog_shared_t *shm = stress_klog_shm;
	uint32_t i;

	if (!shm || !key || !*key)
		return;
	for (i = 0; i < shm->nkeys; i++) {
		if (!strcmp(shm->keys[i].key, key)) {
			shm->keys[i].count++;
			return;
		}
	}
	if (shm->nkeys >= STRESS_KLOG_KEYS_MAX) {
		shm->keys_dropped++;
		return;
	}
	(void)shim_strscpy(shm->keys[shm->nkeys].key, key, sizeof(shm->keys[0].key));
	shm->keys[shm->nkeys].kind = kind;
	shm->keys[shm->nkeys].count = 1;
	__atomic_add_fetch(&shm->nkeys, 1, __ATOMIC_SEQ_CST);
}

/*
 *  stress_klog_event_key()
 *	add a key to the current splat once, and to the table
 */
static void stress_klog_event_key(const char *key, const int kind)
{
	stress_klog_state_t *st = &stress_klog_state;
	uint32_t i;

	if (!*key)
		return;
	for (i = 0; i < st->nkeys; i++)
		if (!strcmp(st->keys[i], key))
			return;
	if (st->nkeys < STRESS_KLOG_EVENT_KEYS)
		(void)shim_strscpy(st->keys[st->nkeys++], key, sizeof(st->keys[0]));
	stress_klog_key_add(key, kind);
}


/*
 *  stress_klog_proc_stat()
 *	comm, state letter and parent of a process or thread from
 *	/proc/PID/stat; false if it is gone
 */
static bool stress_klog_proc_stat(const pid_t pid, char *comm, const size_t comm_len,
	char *state, pid_t *ppid)
{
	char path[64], buf[512], *open_p, *close_p;
	ssize_t n;
	int pp = 0;

	(void)snprintf(path, sizeof(path), "/proc/%" PRIdMAX "/stat", (intmax_t)pid);
	n = stress_fs_file_read(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');
	if (!open_p || !close_p || (close_p < open_p) || (close_p[1] != ' ') || !close_p[2])
		return false;
	stress_klog_copy(comm, comm_len, open_p + 1, (size_t)(close_p - open_p - 1));
	*state = close_p[2];
	if (sscanf(close_p + 3, " %d", &pp) != 1)
		pp = 0;
	*ppid = (pid_t)pp;
	return true;
}

/*
 *  stress_klog_proc_tgid()
 *	thread group id of a task from /proc/PID/status, 0 if unknown
 */
static pid_t stress_klog_proc_tgid(const pid_t pid)
{
	char path[64], buf[1024];
	const char *p;
	ssize_t n;
	int tgid;

	(void)snprintf(path, sizeof(path), "/proc/%" PRIdMAX "/status", (intmax_t)pid);
	n = stress_fs_file_read(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, "\nTgid:");
	if (!p || (sscanf(p + 6, "%d", &tgid) != 1))
		return 0;
	return (pid_t)tgid;
}

/*
 *  stress_klog_proc_wchan()
 *	where a task sleeps in the kernel ("-" when running or unknown)
 */
static void stress_klog_proc_wchan(const pid_t pid, char *wchan, const size_t len)
{
	char path[64];
	ssize_t n;

	(void)snprintf(path, sizeof(path), "/proc/%" PRIdMAX "/wchan", (intmax_t)pid);
	n = stress_fs_file_read(path, wchan, len - 1);
	if (n <= 0) {
		(void)shim_strscpy(wchan, "-", len);
		return;
	}
	wchan[n] = '\0';
	wchan[strcspn(wchan, "\n")] = '\0';
	if (!wchan[0] || !strcmp(wchan, "0"))
		(void)shim_strscpy(wchan, "-", len);
}

/*
 *  stress_klog_instance_of()
 *	the index of the instance with this pid, -1 if none
 */
static int stress_klog_instance_of(const pid_t pid)
{
	uint32_t i;

	if (!g_shared || !g_shared->stats || (pid <= 0))
		return -1;
	for (i = 0; i < g_shared->instances; i++) {
		const stress_stats_t *s = &g_shared->stats[i];

		if (s->started && (s->pid == pid))
			return (int)i;
	}
	return -1;
}

/*
 *  stress_klog_splat_pid()
 *	say which process of the run, if any, the splat's "PID: n" is
 */
static void stress_klog_splat_pid(const pid_t pid)
{
	char comm[STRESS_KLOG_COMM_LEN], state;
	pid_t ppid = 0;
	int self, thread, child;

	if (pid <= 0)
		return;
	self = stress_klog_instance_of(pid);
	if (!stress_klog_proc_stat(pid, comm, sizeof(comm), &state, &ppid)) {
		if (self >= 0)
			pr_inf("%s:   pid %" PRIdMAX " in the log: instance %d (exited)\n",
				STRESS_KLOG_NAME, (intmax_t)pid, self);
		else
			pr_inf("%s:   pid %" PRIdMAX " in the log: exited before the report\n",
				STRESS_KLOG_NAME, (intmax_t)pid);
		return;
	}
	thread = stress_klog_instance_of(stress_klog_proc_tgid(pid));
	child = stress_klog_instance_of(ppid);
	if (self >= 0)
		pr_inf("%s:   pid %" PRIdMAX " (%s) in the log: instance %d\n",
			STRESS_KLOG_NAME, (intmax_t)pid, comm, self);
	else if (thread >= 0)
		pr_inf("%s:   pid %" PRIdMAX " (%s) in the log: a thread of instance %d\n",
			STRESS_KLOG_NAME, (intmax_t)pid, comm, thread);
	else if (child >= 0)
		pr_inf("%s:   pid %" PRIdMAX " (%s) in the log: a child of instance %d\n",
			STRESS_KLOG_NAME, (intmax_t)pid, comm, child);
	else
		pr_inf("%s:   pid %" PRIdMAX " (%s) in the log: not a process of this run\n",
			STRESS_KLOG_NAME, (intmax_t)pid, comm);
}

/*
 *  stress_klog_instances_report()
 *	state and wchan of the run's live instances, at report time
 */
static void stress_klog_instances_report(void)
{
	uint32_t i, n = 0;

	if (!g_shared || !g_shared->stats)
		return;
	for (i = 0; i < g_shared->instances; i++) {
		const stress_stats_t *s = &g_shared->stats[i];
		const pid_t pid = s->pid;
		char comm[STRESS_KLOG_COMM_LEN], wchan[64], state;
		pid_t ppid;

		if (!s->started || s->reaped || (pid <= 0))
			continue;
		if (n++ >= STRESS_KLOG_PROCS_MAX) {
			pr_inf("%s:   (further instances not listed)\n", STRESS_KLOG_NAME);
			return;
		}
		if (!stress_klog_proc_stat(pid, comm, sizeof(comm), &state, &ppid)) {
			pr_inf("%s:   instance %" PRIu32 " [%" PRIdMAX "]: exited\n",
				STRESS_KLOG_NAME, i, (intmax_t)pid);
			continue;
		}
		stress_klog_proc_wchan(pid, wchan, sizeof(wchan));
		pr_inf("%s:   instance %" PRIu32 " [%" PRIdMAX "]: state %c, wchan %s\n",
			STRESS_KLOG_NAME, i, (intmax_t)pid, state, wchan);
	}
}

static void stress_klog_dump_key(void);

/*
 *  stress_klog_failure()
 *	pure: does an event of this kind fail the run?  A hung task does
 *	not: stress-ng's core logs it as info (a task blocked for minutes
 *	under heavy load is no proof of a kernel bug)
 */
static bool stress_klog_failure(const int kind)
{
	return kind != STRESS_KLOG_HUNG_TASK;
}

/*
 *  stress_klog_report()
 *	print the splat once: an error line with its key, then first line,
 *	time, RIP, call trace, other keys and the run's processes
 */
static void stress_klog_report(void)
{
	stress_klog_state_t *st = &stress_klog_state;
	const char *name = STRESS_KLOG_NAME;
	const double t0 = stress_klog_shm ? stress_klog_shm->time_start : st->t_first;
	uint32_t i;

	if (st->reported || (st->phase == STRESS_KLOG_PH_NONE))
		return;
	if (st->kind == STRESS_KLOG_STACK_DUMP)
		stress_klog_dump_key();
	st->reported = true;
	stress_klog_cmdline_log();
	pr_block_begin();
	if (stress_klog_failure(st->kind))
		pr_err("%s: kernel %s: %s\n", name, stress_klog_kind_name(st->kind), st->key);
	else
		pr_inf("%s: kernel %s (not a failure): %s\n", name,
			stress_klog_kind_name(st->kind), st->key);
	pr_inf("%s:   first line: %s\n", name, st->first);
	pr_inf("%s:   time: %.3fs into the run (kernel time %" PRIu64 ".%06" PRIu64 ")\n",
		name, st->t_first - t0, st->usec / 1000000, st->usec % 1000000);
	if (st->rip[0])
		pr_inf("%s:   function at RIP: %s\n", name, st->rip);
	for (i = 0; i < st->ntrace; i++)
		pr_inf("%s:   call trace: %s\n", name, st->trace[i]);
	for (i = 1; i < st->nkeys; i++)
		pr_inf("%s:   also: %s\n", name, st->keys[i]);
	stress_klog_splat_pid(st->pid);
	stress_klog_instances_report();
	pr_block_end();
}
/*
 *  stress_klog_pid_of()
 *	the task a splat line names: "PID: n" (WARNING, the CPU/Comm line
 *	of a BUG or oops) or "task comm:n blocked" (hung task); 0 if none
 */
static pid_t stress_klog_pid_of(const char *line)
{
	const char *p = strstr(line, "PID: ");
	const char *q;
	char *end;
	long int v;

	if (p) {
		p += 5;
	} else if ((p = strstr(line, "INFO: task ")) != NULL) {
		q = strstr(p, " blocked for more than");
		if (!q)
			return 0;
		while ((q > p) && (q[-1] != ':'))
			q--;
		p = q;
	} else {
		return 0;
	}
	if (!stress_klog_isdigit((unsigned char)*p))
		return 0;
	errno = 0;
	v = strtol(p, &end, 10);
	if ((errno != 0) || (v <= 0) || (v > INT_MAX))
		return 0;
	return (pid_t)v;
}

/*
 *  stress_klog_splat_close()
 *	finish the current splat (report if not yet done)
 */
static void stress_klog_splat_close(void)
{
	stress_klog_state_t *st = &stress_klog_state;

	stress_klog_report();
	st->phase = STRESS_KLOG_PH_NONE;
	st->after = 0;
	st->closed_kind = st->kind;
}

/*
 *  stress_klog_splat_open()
 *	start a new splat: count the event, remember the first line
 */
static void stress_klog_splat_open(const char *line, const char *key, const int kind,
	const uint64_t usec, const double now)
{
	stress_klog_state_t *st = &stress_klog_state;

	if (st->phase != STRESS_KLOG_PH_NONE)
		stress_klog_splat_close();
	st->phase = STRESS_KLOG_PH_HEADER;
	st->kind = kind;
	st->reported = false;
	st->nrecs = 0;
	st->ntrace = 0;
	st->nkeys = 0;
	st->t_first = now;
	st->t_last = now;
	st->usec = usec;
	st->rip[0] = '\0';
	st->pid = stress_klog_pid_of(line);
	st->cause[0] = '\0';	/* what follows the splat is no cause it saw */
	st->guess[0] = '\0';
	(void)shim_strscpy(st->key, key, sizeof(st->key));
	(void)shim_strscpy(st->first, line, sizeof(st->first));
	if (stress_klog_failure(kind)) {
		if (stress_klog_shm)
			__atomic_add_fetch(&stress_klog_shm->events, 1, __ATOMIC_SEQ_CST);
		if (g_shared)
			__atomic_add_fetch(&g_shared->klog_errors, 1, __ATOMIC_SEQ_CST);
	}
	stress_klog_event_key(key, kind);
}
/*
 *  stress_klog_trace_entry()
 *	is the line a call trace entry or marker ("func+0x1/0x2", "<TASK>")
 */
static bool stress_klog_trace_entry(const char *p)
{
	const char *q;

	if (*p == '<')
		return strchr(p, '>') != NULL;
	if ((p[0] == '?') && (p[1] == ' '))
		p += 2;
	if ((p[0] == '[') && (p[1] == '<'))		/* [<ffffffff81234567>] func+0x */
		return strstr(p, "+0x") != NULL;
	for (q = p; stress_klog_isword((unsigned char)*q) || (*q == '.') || (*q == '$'); q++)
		;
	return (q > p) && !strncmp(q, "+0x", 3);
}

/*
 *  stress_klog_rip_func()
 *	"RIP: 0010:func+0x1/0x2" -> func (also "pc : func+0x", "EIP: func+0x")
 */
static bool stress_klog_rip_func(const char *p, char *func, const size_t len)
{
	const char *q;

	if (!strncmp(p, "RIP: ", 5) || !strncmp(p, "EIP: ", 5))
		p += 5;
	else if (!strncmp(p, "pc : ", 5))
		p += 5;
	else
		return false;
	q = strchr(p, ':');
	if (q && (q - p == 4))
		p = q + 1;
	for (q = p; stress_klog_isword((unsigned char)*q) || (*q == '.'); q++)
		;
	if ((q == p) || strncmp(q, "+0x", 3))
		return false;
	stress_klog_copy(func, len, p, (size_t)(q - p));
	return true;
}

/*
 *  stress_klog_dump_name()
 *	name a stack dump by a function of its trace past the dump_stack()
 *	machinery, as LKP names call traces ("calltrace:func"), into out;
 *	false for machinery or no function
 */
static bool stress_klog_dump_name(const char *entry, char *out, const size_t len)
{
	static const char * const machinery[] = {
		"dump_stack", "dump_stack_lvl", "__dump_stack", "show_stack",
		"show_trace_log_lvl", "dump_backtrace", "show_regs",
	};
	const char *p = entry, *q;
	size_t i, n;

	if ((p[0] == '?') && (p[1] == ' '))
		p += 2;
	q = ((p[0] == '[') && (p[1] == '<')) ? strstr(p, "] ") : NULL;	/* [<ffffffff8123>] */
	if (q)
		p = q + 2;
	for (q = p; stress_klog_isword((unsigned char)*q); q++)
		;
	n = (size_t)(q - p);	/* up to ".cold", ".isra.0", "+0x" */
	for (i = 0; (n > 0) && (i < SIZEOF_ARRAY(machinery)); i++)
		if ((strlen(machinery[i]) == n) && !strncmp(p, machinery[i], n))
			return false;
	if (!n)
		return false;
	(void)snprintf(out, len, "calltrace:%.*s", (int)n, p);
	return true;
}

/*
 *  stress_klog_dump_key()
 *	the stack dump's key once its trace is read: the first reliable
 *	function, else the first unreliable one ("? func": a kernel without
 *	an exact unwinder prints only those), else calltrace:unknown
 */
static void stress_klog_dump_key(void)
{
	stress_klog_state_t *st = &stress_klog_state;

	if (st->key[0])
		return;
	(void)shim_strscpy(st->key, st->guess[0] ? st->guess : "calltrace:unknown",
		sizeof(st->key));
	stress_klog_event_key(st->key, st->kind);
}

/*
 *  stress_klog_splat_line()
 *	feed a non-head line to the open splat (RIP, trace, end marker); false
 *	when the line ended a stack dump's trace and belongs to what follows
 */
static bool stress_klog_splat_line(const char *p)
{
	stress_klog_state_t *st = &stress_klog_state;
	char func[STRESS_KLOG_FUNC_LEN];
	const bool dump = (st->kind == STRESS_KLOG_STACK_DUMP);

	if (!strncmp(p, "---[ end trace", 14) || !strncmp(p, "---[ end Kernel panic", 21)) {
		stress_klog_splat_close();
		return true;
	}
	if (st->phase == STRESS_KLOG_PH_TRACE) {
		if (stress_klog_trace_entry(p)) {
			if (!strncmp(p, "</TASK>", 7)) {
				st->phase = STRESS_KLOG_PH_TAIL;
				stress_klog_report();
				if (dump)	/* the next dump is an event of its own */
					stress_klog_splat_close();
			} else if ((*p != '<') && ((*p != '?') || dump)) {
				/* a dump's unreliable entries may be all its trace has */
				if (st->ntrace < STRESS_KLOG_TRACE_MAX)
					(void)shim_strscpy(st->trace[st->ntrace++], p,
						sizeof(st->trace[0]));
				if (dump && (*p != '?') && !st->key[0] &&
				    stress_klog_dump_name(p, st->key, sizeof(st->key)))
					stress_klog_event_key(st->key, st->kind);
				else if (dump && (*p == '?') && !st->guess[0])
					(void)stress_klog_dump_name(p, st->guess,
						sizeof(st->guess));
			}
			return true;
		}
		st->phase = STRESS_KLOG_PH_TAIL;
		stress_klog_report();
		if (dump) {
			stress_klog_splat_close();
			return false;
		}
	}
	if (st->phase == STRESS_KLOG_PH_HEADER) {
		if (!st->pid)
			st->pid = stress_klog_pid_of(p);
		if (!strncmp(p, "Call Trace:", 11) || !strncmp(p, "Call trace:", 11)) {
			st->phase = STRESS_KLOG_PH_TRACE;
			return true;
		}
		if (!st->rip[0] && stress_klog_rip_func(p, func, sizeof(func))) {
			char key[STRESS_KLOG_KEY_LEN];

			(void)shim_strscpy(st->rip, func, sizeof(st->rip));
			if (!strncmp(p, "RIP: ", 5)) {
				stress_klog_make_key(p, key, sizeof(key));
				stress_klog_event_key(key, STRESS_KLOG_RIP);
			}
		}
	}
	return true;
}

/*
 *  stress_klog_regs_line()
 *	a register dump line of an oops: "RIP: ...", "RSP: ...", "R13: ...",
 *	"FS:  ...", "CR2: ...", "Code: ..."
 */
static bool stress_klog_regs_line(const char *p)
{
	const char *q = p;

	if (!((*q >= 'A') && (*q <= 'Z')))
		return false;
	for (q++; ((*q >= 'A') && (*q <= 'Z')) || stress_klog_isdigit((unsigned char)*q) ||
		  ((*q >= 'a') && (*q <= 'z')); q++)
		;
	return ((q - p) >= 2) && ((q - p) <= 4) && (q[0] == ':') && (q[1] == ' ');
}

/*
 *  stress_klog_dump_header()
 *	a line dump_stack() or show_regs() prints between the message of a
 *	stack dump and its "Call Trace:" (task and machine, taint, registers)
 */
static bool stress_klog_dump_header(const char *p)
{
	static const char * const heads[] = {
		"Hardware name: ", "Tainted: ", "Workqueue: ", "Sched_ext: ", "Modules linked in:",
	};
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(heads); i++)
		if (!strncmp(p, heads[i], strlen(heads[i])))
			return true;
	return stress_klog_regs_line(p);	/* "CPU: ", "RIP: ", "Code: ", ... */
}

/*
 *  stress_klog_dump_benign()
 *	pure: a message whose stack dump belongs to a report that is no
 *	kernel failure: the OOM killer, an allocation failure, a sysrq
 *	request, the NMI backtraces of other CPUs and the task dumps of
 *	sysrq (the hung task and RCU stall reports are events of their
 *	own), an MSR access a hypervisor refused
 */
static bool stress_klog_dump_benign(const char *p)
{
	static const char * const heads[] = {
		"task:", "sysrq: ", "NMI backtrace for cpu", "unchecked MSR access error",
	};
	const char *after = stress_klog_after_prefix(p);
	size_t i;

	if (stress_klog_noise(p) || strstr(p, "page allocation failure") ||
	    strstr(p, "vmalloc error: "))
		return true;
	for (i = 0; i < SIZEOF_ARRAY(heads); i++)
		if (stress_klog_starts_with(p, after, heads[i]))
			return true;
	return false;
}

/*
 *  stress_klog_dump_line()
 *	a kernel line outside any splat: a "Call Trace:" opens a stack dump
 *	event unless its message introduces a benign report or it belongs
 *	to the splat that just closed; any other line may be the message of
 *	the next dump.  True if the line opened an event or belongs to one
 */
static bool stress_klog_dump_line(const char *p, const int level, const uint64_t usec,
	const double now)
{
	stress_klog_state_t *st = &stress_klog_state;
	const bool recent = st->cause[0] && (st->cause_age <= STRESS_KLOG_CAUSE_AGE);
	const pid_t pid = recent ? st->cause_pid : 0;
	char first[STRESS_KLOG_LINE_MAX];

	if (strncmp(p, "Call Trace:", 11) && strncmp(p, "Call trace:", 11)) {
		if (stress_klog_dump_header(p)) {
			st->cause_age++;
			if (!st->cause_pid)
				st->cause_pid = stress_klog_pid_of(p);
			return false;
		}
		(void)shim_strscpy(st->cause, p, sizeof(st->cause));
		st->cause_usec = usec;
		st->cause_age = 0;
		st->cause_pid = 0;
		st->cause_benign = stress_klog_dump_benign(p);
		return false;
	}
	/* a sysrq or debug dump, or a task's name leading a message */
	if ((recent && st->cause_benign) || (level > STRESS_KLOG_SPLAT_LEVEL))
		return false;
	/* the NMI backtraces or task dumps that follow a lockup, hung task or stall */
	if (st->nkeys && (st->after < STRESS_KLOG_AFTER) &&
	    (st->closed_kind != STRESS_KLOG_STACK_DUMP))
		return true;
	(void)shim_strscpy(first, recent ? st->cause : p, sizeof(first));
	stress_klog_splat_open(first, "", STRESS_KLOG_STACK_DUMP,
		recent ? st->cause_usec : usec, now);
	if (pid)
		st->pid = pid;
	st->phase = STRESS_KLOG_PH_TRACE;
	return true;
}

/*
 *  stress_klog_logical_line()
 *	process one logical kernel-log line; true if it was a splat's line.
 *	A splat head logged less severe than level 4 is no head (a task
 *	named "BUG: x" that segfaults is logged at level 6, its name first)
 */
static bool stress_klog_logical_line(const char *line, const int facility, const int level,
	const uint64_t usec, const double now)
{
	stress_klog_state_t *st = &stress_klog_state;
	char key[STRESS_KLOG_KEY_LEN];
	const char *p = line;
	int kind;

	if (facility != STRESS_KLOG_FAC_KERN)
		return false;
	while ((*p == ' ') || (*p == '\t'))
		p++;
	if (!*p)
		return st->phase != STRESS_KLOG_PH_NONE;
	kind = stress_klog_lkp_classify(p, key, sizeof(key));
	if (level > STRESS_KLOG_SPLAT_LEVEL) {
		kind = STRESS_KLOG_NOISE;
		key[0] = '\0';
	}
	if (st->phase == STRESS_KLOG_PH_NONE) {
		/* the panic following an oops belongs to that oops */
		if ((kind == STRESS_KLOG_PANIC) && st->nkeys &&
		    (st->after < STRESS_KLOG_AFTER) && stress_klog_failure(st->closed_kind)) {
			stress_klog_event_key(key, kind);
			return true;
		}
		/* so do the registers x86 prints again after its end marker */
		if ((kind == STRESS_KLOG_NOISE) && st->nkeys &&
		    (st->after < STRESS_KLOG_AFTER) && stress_klog_regs_line(p)) {
			st->after++;
			return true;
		}
		st->after++;
	} else {
		st->nrecs++;
		st->t_last = now;
		if (kind != STRESS_KLOG_NOISE) {
			/*
			 * Same splat: a different head before the trace ended
			 * (BUG + Oops, refcount_t + WARNING) or a panic after
			 * it; the same head again or another WARN is a new one
			 */
			const bool again = !strcmp(key, st->key) ||
				((kind == STRESS_KLOG_WARNING) &&
				 (st->kind == STRESS_KLOG_WARNING));

			/* a failure never hides in a report that is none (hung task) */
			if ((((st->phase != STRESS_KLOG_PH_TAIL) && !again) ||
			     (kind == STRESS_KLOG_PANIC)) &&
			    (stress_klog_failure(st->kind) || !stress_klog_failure(kind))) {
				stress_klog_event_key(key, kind);
				return true;
			}
		} else {
			if (stress_klog_splat_line(p)) {
				if ((st->phase != STRESS_KLOG_PH_NONE) &&
				    (st->nrecs > STRESS_KLOG_SPLAT_RECS))
					stress_klog_splat_close();
				return true;
			}
			/* it ended a stack dump's trace: the line is the next one's business */
		}
	}
	if (kind == STRESS_KLOG_NOISE)
		return stress_klog_dump_line(p, level, usec, now);
	stress_klog_splat_open(p, key, kind, usec, now);
	return true;
}

/*
 *  stress_klog_delimiter()
 *	a line that opens or closes a splat ("[ cut here ]", "---[ end ...",
 *	the "====" rule around KASAN, UBSAN, KFENCE and lockdep reports)
 */
static bool stress_klog_delimiter(const char *line)
{
	size_t n;

	while ((*line == ' ') || (*line == '\t'))
		line++;
	if (strstr(line, "[ cut here ]") || !strncmp(line, "---[ end ", 9))
		return true;
	n = strspn(line, "=");
	return (n >= 10) && (line[n] == '\0');
}

/*
 *  stress_klog_flush_pending()
 *	process the look-ahead kernel record, one logical line per '\n'; with
 *	-K a record that is no part of a splat goes to stress-ng's level rule
 */
static void stress_klog_flush_pending(const double now)
{
	stress_klog_state_t *st = &stress_klog_state;
	char *line, *nl;
	bool splat = false;

	if (!st->pend_valid)
		return;
	st->pend_valid = false;
	/* user space records (any facility but 0) are never the kernel's */
	if (st->pend_fac != STRESS_KLOG_FAC_KERN)
		return;
	st->pend[st->pend_len] = '\0';
	for (line = st->pend; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (stress_klog_logical_line(line, st->pend_fac, st->pend_pri & 7,
				st->pend_usec, now) ||
		    stress_klog_delimiter(line))
			splat = true;
		if (nl)
			*nl++ = '\n';
	}
	if (!splat && (g_opt_flags & OPT_FLAGS_KLOG_CHECK))
		stress_klog_level_line(st->pend_pri, st->pend_usec, st->pend);
}

/*
 *  stress_klog_feed()
 *	process one raw /dev/kmsg record; -1 if malformed
 */
static int stress_klog_feed(const char *rec, const size_t len, const double now)
{
	stress_klog_state_t *st = &stress_klog_state;
	stress_klog_shared_t *shm = stress_klog_shm;
	const char *msg;
	size_t msglen;
	uint64_t seq, usec;
	int level, facility;
	char flag;
	bool cont;

	if (stress_klog_record_parse(rec, len, &level, &seq, &usec,
			&facility, &msg, &msglen) < 0)
		return -1;
	flag = stress_klog_record_flag(rec, len);
	if (shm) {
		shm->records++;
		if (st->seq_valid && (seq > st->seq_next))
			shm->lost += (uint32_t)(seq - st->seq_next);
	}
	st->seq_valid = true;
	st->seq_next = seq + 1;

	/* 'c' (LOG_CONT fragment, 6.x) and '+' (legacy) continue the last record */
	cont = ((flag == 'c') || (flag == '+')) && st->pend_valid &&
	       (st->pend_fac == facility);
	if (!cont) {
		stress_klog_flush_pending(now);
		st->pend_len = 0;
		st->pend_fac = facility;
		st->pend_pri = (facility * 8) + level;
		st->pend_usec = usec;
	}
	st->pend_len += stress_klog_unescape(msg, msglen, st->pend + st->pend_len,
		sizeof(st->pend) - st->pend_len);
	st->pend_valid = true;
	return 0;
}

/*
 *  stress_klog_idle()
 *	end of a drain: flush look-ahead, close a quiet splat (or all if final)
 */
static void stress_klog_idle(const double now, const bool final)
{
	stress_klog_state_t *st = &stress_klog_state;

	stress_klog_flush_pending(now);
	if ((st->phase != STRESS_KLOG_PH_NONE) &&
	    (final || (now - st->t_last >= STRESS_KLOG_IDLE)))
		stress_klog_splat_close();
}

/*
 *  stress_klog_taint_letters()
 *	letters of the set taint bits, e.g. 0x200 -> "W"; unknown bits as #N
 */
static void stress_klog_taint_letters(const uint32_t bits, char *buf, const size_t len)
{
	size_t o = 0;
	uint32_t i;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; i < 32; i++) {
		char tmp[8];
		size_t l;

		if (!(bits & (1U << i)))
			continue;
		if (i < sizeof(stress_klog_taint_chars) - 1) {
			tmp[0] = stress_klog_taint_chars[i];
			tmp[1] = '\0';
		} else {
			(void)snprintf(tmp, sizeof(tmp), "#%" PRIu32, i);
		}
		l = strlen(tmp);
		if (o + l + 1 > len)
			break;
		(void)shim_memcpy(buf + o, tmp, l + 1);
		o += l;
	}
}

/*
 *  stress_klog_taint_read()
 *	read the taint mask from the (injectable) tainted file; -1 on error
 */
static int stress_klog_taint_read(uint32_t *val)
{
	char buf[32];
	ssize_t n;
	int fd;
	unsigned long v;
	char *end;

	fd = open(stress_klog_taint_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	errno = 0;
	v = strtoul(buf, &end, 10);
	if ((errno != 0) || (end == buf))
		return -1;
	*val = (uint32_t)v;
	return 0;
}

/*
 *  stress_klog_taint_check()
 *	report taint bits that appeared since the start (once each)
 */
static void stress_klog_taint_check(const uint32_t now_bits)
{
	stress_klog_shared_t *shm = stress_klog_shm;
	uint32_t bits;
	char letters[64], key[STRESS_KLOG_KEY_LEN];

	if (!shm || !shm->taint_valid)
		return;
	bits = now_bits & ~shm->taint_start & ~shm->taint_reported;
	if (!bits)
		return;
	shm->taint_reported |= bits;
	stress_klog_taint_letters(bits, letters, sizeof(letters));
	if (!(bits & STRESS_KLOG_TAINT_FAIL)) {
		/* a user, module or other taint says nothing about this kernel's health */
		pr_inf("%s: kernel taint: %s (0x%" PRIx32 ") set during the run, not a failure\n",
			STRESS_KLOG_NAME, letters, bits);
		return;
	}
	(void)snprintf(key, sizeof(key), "taint:%s", letters);
	stress_klog_key_add(key, STRESS_KLOG_TAINT);
	/* a new taint only counts as an event when the log showed nothing */
	if (__atomic_load_n(&shm->events, __ATOMIC_SEQ_CST) == 0) {
		__atomic_add_fetch(&shm->events, 1, __ATOMIC_SEQ_CST);
		if (g_shared)
			__atomic_add_fetch(&g_shared->klog_errors, 1, __ATOMIC_SEQ_CST);
		stress_klog_cmdline_log();
		pr_err("%s: kernel taint: %s (0x%" PRIx32 ") set during the run, no log record seen\n",
			STRESS_KLOG_NAME, letters, bits);
	} else {
		pr_inf("%s: kernel taint: %s (0x%" PRIx32 ") set during the run\n",
			STRESS_KLOG_NAME, letters, bits);
	}
}

/*
 *  stress_klog_drain()
 *	read every available record; false when the fd is unusable
 */
static bool stress_klog_drain(const int fd)
{
	static char rec[STRESS_KLOG_REC_MAX];

	for (;;) {
		const ssize_t n = read(fd, rec, sizeof(rec) - 1);

		if (n > 0) {
			rec[n] = '\0';
			(void)stress_klog_feed(rec, (size_t)n, stress_time_now());
			continue;
		}
		if (n == 0)
			return true;
		if (errno == EAGAIN)
			return true;
		if (errno == EINTR)
			continue;
		if (errno == EPIPE)	/* overwritten: the seq gap is counted as lost */
			continue;
		pr_err("%s: kernel-log: read of %s failed, errno=%d (%s)\n",
			STRESS_KLOG_NAME, STRESS_KLOG_KMSG, errno, strerror(errno));
		return false;
	}
}

/*
 *  stress_klog_yaml_quote()
 *	append a single-quoted YAML scalar
 */
static void stress_klog_yaml_quote(stress_klog_str_t *o, const char *s)
{
	stress_klog_put(o, "'", 1);
	for (; *s; s++) {
		if (*s == '\'')
			stress_klog_put(o, "''", 2);
		else
			stress_klog_put(o, s, 1);
	}
	stress_klog_put(o, "'", 1);
}

/*
 *  stress_klog_yaml()
 *	YAML body of the kernel-log section (indented 4, no header line)
 */
static size_t stress_klog_yaml(char *buf, const size_t len)
{
	static const char * const status[] = { "off", "ok", "unavailable", "incomplete" };
	stress_klog_shared_t *shm = stress_klog_shm;
	stress_klog_str_t o;
	char tmp[128];
	int st = shm ? shm->status : STRESS_KLOG_STATUS_OFF;
	uint32_t i;

	if (!len)
		return 0;
	o.buf = buf;
	o.len = 0;
	o.cap = len;
	buf[0] = '\0';
	if ((st < 0) || ((size_t)st >= SIZEOF_ARRAY(status)))
		st = STRESS_KLOG_STATUS_UNAVAIL;
	(void)snprintf(tmp, sizeof(tmp), "    status: %s\n    warnings: %" PRIu32 "\n"
		"    errors: %" PRIu64 "\n    lost-records: %" PRIu32 "\n", status[st],
		shm ? shm->events : 0, g_shared ? (uint64_t)g_shared->klog_errors : 0,
		shm ? shm->lost : 0);
	stress_klog_put(&o, tmp, strlen(tmp));
	if (!shm || !shm->nkeys)
		return o.len;
	stress_klog_put(&o, "    keys:\n", 10);
	for (i = 0; i < shm->nkeys; i++) {
		stress_klog_put(&o, "        - key: ", 15);
		stress_klog_yaml_quote(&o, shm->keys[i].key);
		(void)snprintf(tmp, sizeof(tmp), "\n          count: %" PRIu32 "\n", shm->keys[i].count);
		stress_klog_put(&o, tmp, strlen(tmp));
	}
	return o.len;
}

/*
 *  stress_klog_reader()
 *	child body: follow /dev/kmsg until the parent asks for the final
 *	drain (or is gone), then exit
 */
static void NORETURN stress_klog_reader(const int fd, const pid_t parent)
{
	stress_klog_shared_t *shm = stress_klog_shm;
	struct sched_param param;
	uint32_t taint = shm->taint_start;
	bool ok = true;

	stress_parent_died_alarm();
	stress_shim_proc_title_set("klog", "monitoring");
	(void)signal(SIGINT, SIG_IGN);		/* the parent stops the run */
	(void)signal(SIGTERM, SIG_DFL);
	(void)signal(SIGALRM, SIG_DFL);		/* parent death */
	(void)signal(SIGPIPE, SIG_IGN);
	(void)shim_memset(&param, 0, sizeof(param));
	param.sched_priority = sched_get_priority_min(SCHED_RR);
	(void)sched_setscheduler(0, SCHED_RR, &param);
	/* the key rules are compiled once, before the first record */
	(void)stress_klog_rules_compile();

	while (ok) {
		const bool stopping = __atomic_load_n(&shm->stop, __ATOMIC_SEQ_CST) != 0;
		/*
		 * Taint is read before the drain: the records of a WARN or
		 * oops that set it are then already readable and explain it
		 */
		const bool check_taint = stress_klog_taint_read(&taint) == 0;

		ok = stress_klog_drain(fd);
		stress_klog_idle(stress_time_now(), stopping || !ok);
		if (check_taint)
			stress_klog_taint_check(taint);
		if (stopping || (getppid() != parent))
			break;
#if defined(HAVE_POLL_H)
		{
			struct pollfd pfd;

			pfd.fd = fd;
			pfd.events = POLLIN;
			pfd.revents = 0;
			(void)poll(&pfd, 1, STRESS_KLOG_POLL_MS);
		}
#else
		(void)shim_usleep(STRESS_KLOG_POLL_MS * 1000);
#endif
	}
	if (!ok)
		shm->status = STRESS_KLOG_STATUS_INCOMPLETE;
	__atomic_store_n(&shm->reader_done, 1, __ATOMIC_SEQ_CST);
	stress_klog_rules_free();
	(void)close(fd);
	_exit(ok ? EXIT_SUCCESS : EXIT_FAILURE);
}

/*
 *  stress_klog_shm_init()
 *	map the shared state (idempotent); -1 on failure
 */
static int stress_klog_shm_init(void)
{
	void *p;

	if (stress_klog_shm)
		return 0;
	p = mmap(NULL, sizeof(*stress_klog_shm), PROT_READ | PROT_WRITE,
		MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	stress_klog_shm = (stress_klog_shared_t *)p;
	stress_klog_shm->status = STRESS_KLOG_STATUS_OFF;
	stress_klog_shm->time_start = stress_time_now();
	(void)shim_memset(&stress_klog_state, 0, sizeof(stress_klog_state));
	return 0;
}

/*
 *  stress_klog_skip_to_end()
 *	read past every record logged so far, keeping the sequence number
 *	of the last one, so records overwritten before the reader's first
 *	read of the run are counted as lost too; -1 if the log cannot be read
 */
static int stress_klog_skip_to_end(const int fd)
{
	static char rec[STRESS_KLOG_REC_MAX];
	stress_klog_state_t *st = &stress_klog_state;
	uint32_t i;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	/* a bound, should the log grow as fast as it is read */
	for (i = 0; i < (1U << 20); i++) {
		const ssize_t n = read(fd, rec, sizeof(rec) - 1);
		uint64_t seq;

		if (n > 0) {
			if (stress_klog_record_parse(rec, (size_t)n, NULL, &seq,
					NULL, NULL, NULL, NULL) == 0) {
				st->seq_valid = true;
				st->seq_next = seq + 1;
			}
			continue;
		}
		if ((n < 0) && ((errno == EPIPE) || (errno == EINTR)))
			continue;
		if ((n < 0) && (errno != EAGAIN))
			return -1;
		return 0;
	}
	return (lseek(fd, 0, SEEK_END) < 0) ? -1 : 0;
}

/*
 *  stress_klog_start()
 *	record the taint mask, fork the kernel-log reader; says in one
 *	line why the kernel log is not checked if it cannot be
 */
void stress_klog_start(void)
{
	stress_klog_shared_t *shm;
	const pid_t parent = getpid();
	uint32_t taint = 0;
	pid_t pid;
	int fd;

	if (!g_shared)
		return;
	g_shared->klog_errors = 0;
	if (stress_klog_shm_init() < 0) {
		pr_inf("%s: cannot mmap %zu bytes of shared state, errno=%d (%s), "
			"the kernel log is not checked\n", STRESS_KLOG_NAME,
			sizeof(*stress_klog_shm), errno, strerror(errno));
		return;
	}
	shm = stress_klog_shm;
	shm->status = STRESS_KLOG_STATUS_UNAVAIL;
	if (stress_klog_taint_read(&taint) < 0)
		pr_dbg("%s: cannot read %s, errno=%d (%s)\n", STRESS_KLOG_NAME,
			stress_klog_taint_path, errno, strerror(errno));
	else
		shm->taint_valid = 1;
	shm->taint_start = taint;

	fd = open(STRESS_KLOG_KMSG, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		pr_inf("%s: cannot open %s, errno=%d (%s), the kernel log is not checked\n",
			STRESS_KLOG_NAME, STRESS_KLOG_KMSG, errno, strerror(errno));
		return;
	}
	/* only records logged from now on */
	if (stress_klog_skip_to_end(fd) < 0) {
		pr_inf("%s: cannot read %s, errno=%d (%s), the kernel log is not checked\n",
			STRESS_KLOG_NAME, STRESS_KLOG_KMSG, errno, strerror(errno));
		(void)close(fd);
		return;
	}
	shm->time_start = stress_time_now();
	(void)fflush(stdout);
	(void)fflush(stderr);
	pid = fork();
	if (pid < 0) {
		pr_inf("%s: fork failed, errno=%d (%s), the kernel log is not checked\n",
			STRESS_KLOG_NAME, errno, strerror(errno));
		(void)close(fd);
		return;
	}
	if (pid == 0)
		stress_klog_reader(fd, parent);
	(void)close(fd);
	stress_klog_pid = pid;
	shm->status = STRESS_KLOG_STATUS_OK;
	pr_dbg("%s: kernel log reader started, pid %" PRIdMAX ", taint 0x%" PRIx32 "%s\n",
		STRESS_KLOG_NAME, (intmax_t)pid, taint,
		(g_opt_flags & OPT_FLAGS_KLOG_CHECK) ? ", stress-ng -K rules on" : "");
}

/*
 *  stress_klog_reaped()
 *	true if pid is the kernel-log reader (reaped by the runner's wait)
 */
bool stress_klog_reaped(const pid_t pid)
{
	if ((stress_klog_pid > 0) && (pid == stress_klog_pid)) {
		stress_klog_pid = -1;
		return true;
	}
	return false;
}

/*
 *  stress_klog_reap()
 *	ask the reader for its final drain and wait for it; kill it after
 *	STRESS_KLOG_STOP_WAIT seconds
 */
static void stress_klog_reap(stress_klog_shared_t *shm)
{
	const double t_end = stress_time_now() + STRESS_KLOG_STOP_WAIT;
	int status;

	__atomic_store_n(&shm->stop, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		const pid_t ret = shim_waitpid(stress_klog_pid, &status, WNOHANG);

		if ((ret == stress_klog_pid) || ((ret < 0) && (errno != EINTR)))
			break;
		if (stress_time_now() >= t_end) {
			pr_err("%s: kernel log reader [%" PRIdMAX "] did not finish "
				"within %.0f secs, killing it\n", STRESS_KLOG_NAME,
				(intmax_t)stress_klog_pid, STRESS_KLOG_STOP_WAIT);
			(void)stress_kill_pid(stress_klog_pid);
			(void)shim_waitpid(stress_klog_pid, &status, 0);
			break;
		}
		(void)shim_usleep(10000);
	}
	stress_klog_pid = -1;
}

/*
 *  stress_klog_summary()
 *	the keys seen, lost records and the YAML kernel-log section
 */
static void stress_klog_summary(stress_klog_shared_t *shm)
{
	static char body[8192];
	uint32_t i;

	for (i = 0; i < shm->nkeys; i++)
		pr_inf("%s: kernel-log key: %s (count %" PRIu32 ")\n",
			STRESS_KLOG_NAME, shm->keys[i].key, shm->keys[i].count);
	if (shm->keys_dropped)
		pr_inf("%s: %" PRIu32 " further kernel-log keys not listed\n",
			STRESS_KLOG_NAME, shm->keys_dropped);
	if (shm->lost)
		pr_inf("%s: %" PRIu32 " kernel log records lost (overwritten before "
			"they were read)\n", STRESS_KLOG_NAME, shm->lost);
	(void)stress_klog_yaml(body, sizeof(body));
	stress_yaml_extra_add("kernel-log", body);
}

/*
 *  stress_klog_stop()
 *	after the instances ended: the reader reads every record logged up
 *	to now, then the keys, lost records and the verdict; clears *success
 *	if any kernel error was seen
 */
void stress_klog_stop(bool *success)
{
	stress_klog_shared_t *shm = stress_klog_shm;
	uint32_t taint;

	if (!shm || !g_shared)
		return;
	if (stress_klog_pid > 0)
		stress_klog_reap(shm);
	if ((shm->status == STRESS_KLOG_STATUS_OK) &&
	    !__atomic_load_n(&shm->reader_done, __ATOMIC_SEQ_CST))
		shm->status = STRESS_KLOG_STATUS_INCOMPLETE;
	if (shm->status == STRESS_KLOG_STATUS_INCOMPLETE)
		pr_err("%s: the kernel log reader stopped before the end of the run, "
			"the kernel log was not checked to the end\n", STRESS_KLOG_NAME);
	/* a taint bit set during the run counts even without /dev/kmsg */
	if (stress_klog_taint_read(&taint) == 0)
		stress_klog_taint_check(taint);
	stress_klog_summary(shm);
	if (g_shared->klog_errors) {
		pr_inf("%s: detected %" PRIu64 " kernel error messages\n",
			STRESS_KLOG_NAME, (uint64_t)g_shared->klog_errors);
		*success = false;
	}
	g_shared->klog_errors = 0;
	(void)munmap((void *)shm, sizeof(*shm));
	stress_klog_shm = NULL;
}
