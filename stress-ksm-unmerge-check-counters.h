/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-check-counters.h: checks of the KSM counters inside
 * the cycle (private header of stress-ksm-unmerge.c, included once):
 *
 * - ksm_zero_pages, global (sysfs) and per process (ksm_stat), never reads
 *   negative or wrapped ("mm/ksm: fix ksm_zero_pages accounting",
 *   c2dc78b86e08: unlocked increments in ksmd raced decrements at zap, and
 *   the counter read -1; on kernels that print it unsigned it wraps);
 * - a forked child starts with ksm_merging_pages and ksm_rmap_items 0
 *   (4d6fc29f3634 "mm/ksm: fix incorrect KSM counter handling in mm_struct
 *   during fork": they were copied from the parent).  Its ksm_zero_pages
 *   is kept by that fix (the child maps the same zero-page PTEs, and the
 *   fix adds them to the global count), so it is only held to the
 *   never-negative rule.
 */

/* What one KSM counter, read as text, says */
enum {
	KSM_COUNTER_OK = 0,
	KSM_COUNTER_MISSING,		/* the kernel has no such field */
	KSM_COUNTER_NEGATIVE,		/* printed signed and below 0 */
	KSM_COUNTER_WRAPPED,		/* printed unsigned, 2^63 or more */
	KSM_COUNTER_GARBLED,		/* no number */
};

static const char * const stress_ksm_unmerge_counter_verdicts[] = {
	"ok", "missing", "negative", "wrapped below 0 (2^63 or more)", "not a number",
};


/* Counters around one fork, in memory shared with the child */
typedef struct {
	volatile uint64_t fork_ns;		/* parent: CLOCK_MONOTONIC right before fork() */
	volatile int64_t parent[3];		/* parent's merging, rmap_items, zero pages then */
	volatile uint64_t read_ns;		/* child: after its first read */
	volatile int64_t child[3];		/* child's first read */
	volatile int child_verdict[3];		/* KSM_COUNTER_* of each */
	volatile bool child_read;		/* the child read its ksm_stat */
	volatile int64_t scanned_before;	/* parent: global pages_scanned before fork(), -1 none */
	volatile int64_t scanned_after;		/* child: pages_scanned after its read, -1 none */
} stress_ksm_unmerge_forkc_t;

static const char * const stress_ksm_unmerge_forkc_fields[3] = {
	"ksm_merging_pages", "ksm_rmap_items", "ksm_zero_pages",
};

static int stress_ksm_unmerge_zc_global_fd = -1;	/* sysfs ksm_zero_pages, per instance */
static bool stress_ksm_unmerge_zc_global_tried;

/*
 *  stress_ksm_unmerge_counter_judge()
 *	pure: value of counter name in buf ("name N" lines of ksm_stat; name
 *	NULL: buf is the number, as in sysfs) and what it says (KSM_COUNTER_*)
 */
static int stress_ksm_unmerge_counter_judge(const char *buf, const char *name, int64_t *val)
{
	const char *p = buf;
	char *end;
	uint64_t v;

	*val = 0;
	if (name) {
		const size_t len = strlen(name);

		for (p = strstr(buf, name); p; p = strstr(p + len, name))
			if ((p == buf || p[-1] == '\n') && (p[len] == ' ' || p[len] == ':' || p[len] == '\t'))
				break;
		if (!p)
			return KSM_COUNTER_MISSING;
		p += len + 1;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '-') {
		*val = (int64_t)strtoll(p, &end, 10);
		return (end == p) ? KSM_COUNTER_GARBLED : KSM_COUNTER_NEGATIVE;
	}
	errno = 0;
	v = strtoull(p, &end, 10);
	if (end == p)
		return KSM_COUNTER_GARBLED;
	if (errno == ERANGE || v >= (1ULL << 63)) {
		*val = (int64_t)v;	/* the negative value it wrapped from */
		return KSM_COUNTER_WRAPPED;
	}
	*val = (int64_t)v;
	return KSM_COUNTER_OK;
}

/*
 *  stress_ksm_unmerge_zc_fail()
 *	fail line for a ksm_zero_pages counter that went below 0
 */
static void stress_ksm_unmerge_zc_fail(stress_ksm_unmerge_ctx_t *ctx, const char *which,
	const char *buf, const int verdict, const char *where)
{
	char text[32];

	(void)shim_strscpy(text, buf, sizeof(text));
	text[strcspn(text, "\n")] = '\0';
	pr_fail("%s: %s ksm_zero_pages reads '%s' %s: %s; the kernel lost count of "
		"KSM zero pages (decremented more than incremented; upstream fix "
		"c2dc78b86e08 \"mm/ksm: fix ksm_zero_pages accounting\")\n", ctx->args->name,
		which, text, where, stress_ksm_unmerge_counter_verdicts[verdict]);
}

/*
 *  stress_ksm_unmerge_zc_read_global()
 *	text of sysfs ksm_zero_pages (6.10+) into buf; -1 where the kernel has none
 */
static int stress_ksm_unmerge_zc_read_global(char *buf, const size_t len)
{
	char path[PATH_MAX];

	if (!stress_ksm_unmerge_zc_global_tried) {
		stress_ksm_unmerge_zc_global_tried = true;
		(void)snprintf(path, sizeof(path), "%s/ksm_zero_pages", KSM_SYSFS);
		stress_ksm_unmerge_zc_global_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	return (stress_ksm_unmerge_fd_read(stress_ksm_unmerge_zc_global_fd, buf, len) > 0) ? 0 : -1;
}

/*
 *  stress_ksm_unmerge_zc_close()
 *	close the sysfs counter (end of the run)
 */
static void stress_ksm_unmerge_zc_close(void)
{
	if (stress_ksm_unmerge_zc_global_fd >= 0)
		(void)close(stress_ksm_unmerge_zc_global_fd);
	stress_ksm_unmerge_zc_global_fd = -1;
}

/*
 *  stress_ksm_unmerge_zc_check()
 *	global and per-process ksm_zero_pages are not below 0 (where the
 *	kernel has them); -1 after a fail line naming the counter
 */
static int stress_ksm_unmerge_zc_check(stress_ksm_unmerge_ctx_t *ctx, const char *where)
{
	char buf[512];
	int64_t v;
	int verdict, rc = 0;

	if (stress_ksm_unmerge_zc_read_global(buf, sizeof(buf)) == 0) {
		verdict = stress_ksm_unmerge_counter_judge(buf, NULL, &v);
		if (verdict == KSM_COUNTER_NEGATIVE || verdict == KSM_COUNTER_WRAPPED) {
			stress_ksm_unmerge_zc_fail(ctx, "global (sysfs)", buf, verdict, where);
			rc = -1;
		}
	}
	if (stress_ksm_unmerge_fd_read(ctx->ksm_stat_fd, buf, sizeof(buf)) > 0) {
		const char *p = strstr(buf, "ksm_zero_pages");

		verdict = stress_ksm_unmerge_counter_judge(buf, "ksm_zero_pages", &v);
		if (verdict == KSM_COUNTER_NEGATIVE || verdict == KSM_COUNTER_WRAPPED) {
			stress_ksm_unmerge_zc_fail(ctx, "per-process (ksm_stat)",
				p ? p + strlen("ksm_zero_pages") + 1 : buf, verdict, where);
			rc = -1;
		}
	}
	return rc;
}

/*
 *  stress_ksm_unmerge_forkc_scanned()
 *	global pages_scanned (6.7+): pages ksmd has scanned so far, -1 if absent
 */
static int64_t stress_ksm_unmerge_forkc_scanned(void)
{
	char buf[32];

	if (stress_ksm_unmerge_knob_read("pages_scanned", buf, sizeof(buf)) < 0)
		return -1;
	return (int64_t)strtoll(buf, NULL, 10);
}

/*
 *  stress_ksm_unmerge_forkc_before()
 *	parent, right before fork(): its own counters and the time
 */
static void stress_ksm_unmerge_forkc_before(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_forkc_t *fc)
{
	char buf[512];
	size_t k;
	struct timespec ts;

	(void)memset((void *)fc, 0, sizeof(*fc));
	for (k = 0; k < 3; k++)
		fc->parent[k] = -1;
	if (stress_ksm_unmerge_fd_read(ctx->ksm_stat_fd, buf, sizeof(buf)) > 0) {
		for (k = 0; k < 3; k++) {
			int64_t v;

			if (stress_ksm_unmerge_counter_judge(buf, stress_ksm_unmerge_forkc_fields[k], &v) ==
			    KSM_COUNTER_OK)
				fc->parent[k] = v;
		}
	}
	fc->scanned_before = stress_ksm_unmerge_forkc_scanned();
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	fc->fork_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 *  stress_ksm_unmerge_forkc_child()
 *	child, first thing after fork(): read its own ksm_stat (a fresh open:
 *	the parent's fd shows the parent)
 */
static void stress_ksm_unmerge_forkc_child(stress_ksm_unmerge_forkc_t *fc)
{
	const stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	char path[PATH_MAX + 32], buf[512];
	struct timespec ts;
	ssize_t n;
	size_t k;
	int fd;

	(void)snprintf(path, sizeof(path), "%s/self/ksm_stat",
		(sh && sh->proc_root[0]) ? sh->proc_root : "/proc");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = stress_ksm_unmerge_fd_read(fd, buf, sizeof(buf));
	fc->scanned_after = stress_ksm_unmerge_forkc_scanned();
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	(void)close(fd);
	if (n <= 0)
		return;
	fc->read_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	for (k = 0; k < 3; k++) {
		int64_t v;

		fc->child_verdict[k] = stress_ksm_unmerge_counter_judge(buf, stress_ksm_unmerge_forkc_fields[k], &v);
		fc->child[k] = v;
	}
	fc->child_read = true;
}

/*
 *  stress_ksm_unmerge_forkc_verdict()
 *	pure: did the child inherit its parent's KSM counters; 1 yes (why
 *	says which), 0 no, 2 inconclusive (ksmd scanned enough pages between
 *	the fork and the read to have made the child's rmap items itself, or
 *	pages_scanned is missing), 3 the child's ksm_zero_pages is below 0
 */
static int stress_ksm_unmerge_forkc_verdict(const stress_ksm_unmerge_forkc_t *fc, char *why, const size_t len)
{
	size_t k;

	why[0] = '\0';
	if (!fc->child_read)
		return 0;
	if (fc->child_verdict[2] == KSM_COUNTER_NEGATIVE || fc->child_verdict[2] == KSM_COUNTER_WRAPPED) {
		(void)snprintf(why, len, "ksm_zero_pages %" PRId64 " (%s)", fc->child[2],
			stress_ksm_unmerge_counter_verdicts[fc->child_verdict[2]]);
		return 3;
	}
	/* merging pages and rmap items: 0, unless ksmd reached the child first */
	for (k = 0; k < 2; k++)
		if (fc->child_verdict[k] == KSM_COUNTER_OK && fc->child[k] > 0)
			break;
	if (k == 2)
		return 0;
	/*
	 * ksmd makes at most one rmap item per page it scans: a child holding
	 * more rmap items than ksmd scanned pages between the fork and its
	 * read got them from its parent. Without pages_scanned (before 6.7)
	 * ksmd's own scan of the child cannot be told from a copy.
	 */
	if (fc->scanned_before < 0 || fc->scanned_after < fc->scanned_before ||
	    fc->child_verdict[1] != KSM_COUNTER_OK ||
	    fc->child[1] <= fc->scanned_after - fc->scanned_before)
		return 2;
	(void)snprintf(why, len, "ksm_merging_pages %" PRId64 ", ksm_rmap_items %" PRId64
		" (the parent's were %" PRId64 " and %" PRId64 "; ksmd scanned %" PRId64
		" pages meanwhile)", fc->child[0], fc->child[1], fc->parent[0], fc->parent[1],
		fc->scanned_after - fc->scanned_before);
	return 1;
}

/*
 *  stress_ksm_unmerge_forkc_judge()
 *	parent, after the child ended: fail line if it inherited the counters
 *	or its ksm_zero_pages went below 0; -1 then
 */
static int stress_ksm_unmerge_forkc_judge(stress_ksm_unmerge_ctx_t *ctx, const stress_ksm_unmerge_forkc_t *fc)
{
	char why[192];
	const int v = stress_ksm_unmerge_forkc_verdict(fc, why, sizeof(why));

	if (v == 1) {
		pr_fail("%s: fork racer: the child's ksm_stat read %s %.3f ms after fork(), "
			"before ksmd could scan it: the kernel copied the parent's KSM counters into "
			"the child (expected 0; upstream fix 4d6fc29f3634 \"mm/ksm: fix incorrect KSM "
			"counter handling in mm_struct during fork\")\n", ctx->args->name, why,
			(double)(fc->read_ns - fc->fork_ns) / 1.0E6);
		return -1;
	}
	if (v == 3) {
		pr_fail("%s: fork racer: the child's %s right after fork(): the kernel lost "
			"count of the KSM zero pages the child inherited\n", ctx->args->name, why);
		return -1;
	}
	return 0;
}
