/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racers.c: cmocka unit tests of the verdicts the racers
 * and the kernel checks reach from what they read, fed the values a
 * broken kernel gives: the fork child's inherited KSM counters
 * (4d6fc29f3634), pages a GUP pin broke, THP shapes, the sparse range's
 * layout, walk allowance and size cuts, the KSM zero pages a fork child
 * is charged against those it maps and the global count no live process
 * holds (issue 20), ksm_zero_pages below 0 (c2dc78b86e08), new taint.
 */
#include "../../stress-ksm-unmerge.c"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#define T_PAGE		(4096)

/* stdout redirected into a memfd */
typedef struct {
	int saved, memfd;
} t_capture_t;

/*
 *  t_capture_begin()
 *	send stdout (pr_* lines) to a fresh memfd
 */
static void t_capture_begin(t_capture_t *c)
{
	c->saved = dup(STDOUT_FILENO);
	c->memfd = shim_memfd_create("t-capture", 0);
	assert_true(c->saved >= 0 && c->memfd >= 0);
	assert_int_equal(dup2(c->memfd, STDOUT_FILENO), STDOUT_FILENO);
}

/*
 *  t_capture_end()
 *	put stdout back; what was written, NUL terminated (static buffer)
 */
static const char *t_capture_end(t_capture_t *c)
{
	static char out[8192];
	ssize_t n;

	assert_int_equal(dup2(c->saved, STDOUT_FILENO), STDOUT_FILENO);
	n = pread(c->memfd, out, sizeof(out) - 1, 0);
	assert_true(n >= 0);
	out[n] = '\0';
	(void)close(c->saved);
	(void)close(c->memfd);
	return out;
}

/*
 *  t_fork_sh()
 *	what a fork child read: its ksm_merging_pages and ksm_rmap_items,
 *	pages_scanned before fork() and after its read
 */
static void t_fork_sh(stress_ksm_unmerge_fork_sh_t *sh, const int64_t merging, const int64_t rmap,
	const int64_t scanned0, const int64_t scanned1)
{
	(void)memset((void *)sh, 0, sizeof(*sh));
	sh->parent[0] = 4096;
	sh->parent[1] = 4100;
	sh->child[0] = merging;
	sh->child[1] = rmap;
	sh->verdict[0] = sh->verdict[1] = KSM_COUNTER_OK;
	sh->scanned[0] = scanned0;
	sh->scanned[1] = scanned1;
	sh->fork_ns = 1000000000ULL;
	sh->read_ns = sh->fork_ns + 50000;
}

/*
 *  test_fork_counters()
 *	4d6fc29f3634: a child that starts with its parent's counts is the
 *	bug (1) unless ksmd scanned enough pages meanwhile to have made the
 *	child's rmap items itself, or pages_scanned is missing or went back
 *	(2: cannot tell); zero counts or no read are no bug (0)
 */
static void test_fork_counters(void **state)
{
	stress_ksm_unmerge_fork_sh_t sh;

	(void)state;
	t_fork_sh(&sh, 0, 0, 1000, 1000);	/* fixed kernel */
	assert_int_equal(stress_ksm_unmerge_fork_counters_verdict(&sh), 0);
	t_fork_sh(&sh, 4096, 4100, 1000, 1000);	/* the parent's counts, ksmd idle */
	assert_int_equal(stress_ksm_unmerge_fork_counters_verdict(&sh), 1);
	t_fork_sh(&sh, 0, 16, 1000, 1000);	/* only rmap items copied */
	assert_int_equal(stress_ksm_unmerge_fork_counters_verdict(&sh), 1);
	t_fork_sh(&sh, 4096, 0, 1000, 1000);	/* only merging pages */
	assert_int_equal(stress_ksm_unmerge_fork_counters_verdict(&sh), 2);
	t_fork_sh(&sh, 4096, 4100, 1000, 5100);	/* ksmd scanned as many pages as the child has items */
	assert_int_equal(stress_ksm_unmerge_fork_counters_verdict(&sh), 2);
	t_fork_sh(&sh, 4096, 4100, 1000, 5099);	/* ... one page short of them */
	assert_int_equal(stress_ksm_unmerge_fork_counters_verdict(&sh), 1);
	t_fork_sh(&sh, 10, 12, 1000, 1100);	/* ksmd's partial scan of the child */
	assert_int_equal(stress_ksm_unmerge_fork_counters_verdict(&sh), 2);
	t_fork_sh(&sh, 4096, 4100, -1, 0);	/* no pages_scanned (before 6.7) */
	assert_int_equal(stress_ksm_unmerge_fork_counters_verdict(&sh), 2);
	t_fork_sh(&sh, 4096, 4100, 1000, 10);	/* run=2 reset the count */
	assert_int_equal(stress_ksm_unmerge_fork_counters_verdict(&sh), 2);
	t_fork_sh(&sh, 4096, 4100, 1000, 1000);
	sh.verdict[1] = KSM_COUNTER_MISSING;	/* rmap items unreadable */
	assert_int_equal(stress_ksm_unmerge_fork_counters_verdict(&sh), 2);
	sh.verdict[0] = KSM_COUNTER_GARBLED;
	assert_int_equal(stress_ksm_unmerge_fork_counters_verdict(&sh), 0);
	t_fork_sh(&sh, -1, -1, 1000, 1000);
	sh.verdict[0] = sh.verdict[1] = KSM_COUNTER_NEGATIVE;
	assert_int_equal(stress_ksm_unmerge_fork_counters_verdict(&sh), 0);
	t_fork_sh(&sh, 4096, 4100, 1000, 1000);
	sh.read_ns = 0;				/* the child never read */
	assert_int_equal(stress_ksm_unmerge_fork_counters_verdict(&sh), 0);
}

/*
 *  test_gup_broken()
 *	pages a write pin broke: KSM pages or KSM zero pages before, private
 *	after; only KSM pages count as folios (what cow_ksm counts)
 */
static void test_gup_broken(void **state)
{
	const uint8_t before[] = { KSM_PAGE_KSM, KSM_PAGE_KSM, KSM_PAGE_KZERO, KSM_PAGE_PRIVATE, KSM_PAGE_KSM,
		KSM_PAGE_HOLE, KSM_PAGE_KZERO, KSM_PAGE_KSM, KSM_PAGE_ABSENT };
	const uint8_t after[] = { KSM_PAGE_PRIVATE, KSM_PAGE_KSM, KSM_PAGE_PRIVATE, KSM_PAGE_PRIVATE, KSM_PAGE_ABSENT,
		KSM_PAGE_PRIVATE, KSM_PAGE_KZERO, KSM_PAGE_PRIVATE, KSM_PAGE_PRIVATE };
	uint64_t folios = 99;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_gup_broken(before, after, SIZEOF_ARRAY(before), &folios), 3);
	assert_int_equal(folios, 2);
	assert_int_equal(stress_ksm_unmerge_gup_broken(before, before, SIZEOF_ARRAY(before), &folios), 0);
	assert_int_equal(folios, 0);
	assert_int_equal(stress_ksm_unmerge_gup_broken(before, after, 0, &folios), 0);
}

/*
 *  test_thp_kind()
 *	a chunk is one PMD THP only with a head and tails on consecutive
 *	pfns; other THP shapes are mTHPs; small or absent pages are neither
 */
static void test_thp_kind(void **state)
{
	uint64_t pm[8], fl[8];
	size_t i;

	(void)state;
	for (i = 0; i < 8; i++) {
		pm[i] = PM_PRESENT | (0x1000 + i);
		fl[i] = KPF_THP | KPF_ANON | (i ? KPF_TAIL : KPF_HEAD);
	}
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), 1);
	fl[4] = KPF_THP | KPF_HEAD;		/* two 4-page folios on consecutive pfns */
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), 2);
	fl[4] = KPF_THP | KPF_TAIL;
	pm[6] = PM_PRESENT | 0x2000;		/* a pfn out of sequence */
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), 2);
	pm[6] = PM_PRESENT | (0x1000 + 6);
	pm[7] = 0;				/* a tail not present */
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), 2);
	pm[7] = PM_PRESENT | (0x1000 + 7);
	fl[0] = KPF_THP | KPF_TAIL;		/* starts in the middle of a folio */
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), 2);
	fl[0] = KPF_ANON;			/* small pages */
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), 0);
	fl[0] = KPF_THP | KPF_HEAD;
	pm[0] = 0;				/* not present */
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), 0);
	pm[0] = PM_PRESENT | 0x1000;
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), 1);
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 1), 1);
}

/*
 *  test_sparse_layout()
 *	one populated page each 64 MiB; wider spacing for at most 1024 of
 *	them; two in a small range; strides page aligned, inside the range
 */
static void test_sparse_layout(void **state)
{
	const uint64_t sizes[] = { 1 * MB, 1 * MB + 1, 100 * MB, 128 * MB, 128 * MB - T_PAGE, 16 * GB,
		64 * GB, 64 * GB + T_PAGE, 128 * GB, 1000 * GB + 12345, MAX_48 };
	size_t i, n, stride;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_sparse_layout(16 * GB, T_PAGE, &n), 64 * MB);
	assert_int_equal(n, 256);
	assert_int_equal(stress_ksm_unmerge_sparse_layout(1 * MB, T_PAGE, &n), 512 * KB);
	assert_int_equal(n, 2);
	assert_int_equal(stress_ksm_unmerge_sparse_layout(128 * MB - T_PAGE, T_PAGE, &n), 64 * MB - T_PAGE);
	assert_int_equal(n, 2);
	assert_int_equal(stress_ksm_unmerge_sparse_layout(64 * GB, T_PAGE, &n), 64 * MB);
	assert_int_equal(n, 1024);
	assert_int_equal(stress_ksm_unmerge_sparse_layout(64 * GB + T_PAGE, T_PAGE, &n), 64 * MB);
	assert_int_equal(n, 1024);
	assert_int_equal(stress_ksm_unmerge_sparse_layout(128 * GB, T_PAGE, &n), 128 * MB);
	assert_int_equal(n, 1024);
	for (i = 0; i < SIZEOF_ARRAY(sizes); i++) {
		stride = stress_ksm_unmerge_sparse_layout((size_t)sizes[i], T_PAGE, &n);
		assert_int_equal(stride % T_PAGE, 0);
		assert_true(stride >= 64 * MB || sizes[i] < 128 * MB);
		assert_true(n >= 2 && n <= KSM_SPARSE_POPULATED);
		assert_true((uint64_t)stride * n <= sizes[i]);
	}
}

/*
 *  test_sparse_allow()
 *	four times the predicted walk, at the slower of the two rates (250
 *	ns a page when neither was measured)
 */
static void test_sparse_allow(void **state)
{
	(void)state;
	assert_true(fabs(stress_ksm_unmerge_sparse_allow(4194304, 10.0, 0.0) - 0.16777216) < 1e-9);
	assert_true(fabs(stress_ksm_unmerge_sparse_allow(4194304, 10.0, 40.0) - 0.67108864) < 1e-9);
	assert_true(fabs(stress_ksm_unmerge_sparse_allow(4194304, 40.0, 10.0) - 0.67108864) < 1e-9);
	assert_true(fabs(stress_ksm_unmerge_sparse_allow(1000000, 0.0, 0.0) - 1.0) < 1e-9);
	assert_true(stress_ksm_unmerge_sparse_allow(0, 10.0, 10.0) == 0.0);
}

/*
 *  t_handler()
 *	a signal handler that does nothing
 */
static void t_handler(int sig)
{
	(void)sig;
}

/*
 *  test_sparse_fit()
 *	the range is cut to about 1 s of walk when a stop signal restarts
 *	system calls, and to half of what RLIMIT_AS leaves (in a child)
 */
static void test_sparse_fit(void **state)
{
	stress_args_t args = { .name = "ksm-unmerge", .page_size = T_PAGE, .instances = 1 };
	stress_ksm_unmerge_ctx_t *ctx = calloc(1, sizeof(*ctx));
	struct sigaction sa, old;
	struct rlimit rl;
	int status, fds[2];
	size_t got = 0;
	pid_t pid;

	(void)state;
	assert_non_null(ctx);
	ctx->args = &args;
	ctx->page_size = T_PAGE;
	if (stress_ksm_unmerge_file_field("/proc/sys/vm/overcommit_memory", NULL) == 2 ||
	    (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)) {
		free(ctx);
		skip();		/* the machine cuts the range already */
	}
	assert_int_equal(stress_ksm_unmerge_sparse_fit(ctx, 16 * GB, 10.0), 16 * GB);
	assert_int_equal(stress_ksm_unmerge_sparse_fit(ctx, T_PAGE, 10.0), 2 * T_PAGE);
	(void)memset(&sa, 0, sizeof(sa));
	sa.sa_handler = t_handler;
	sa.sa_flags = SA_RESTART;
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	assert_int_equal(stress_ksm_unmerge_sparse_fit(ctx, 16 * GB, 10.0), 16 * GB);	/* 1 s walks 400 GB */
	assert_int_equal(stress_ksm_unmerge_sparse_fit(ctx, 16 * GB, 1000.0), 1000000ULL * T_PAGE);
	assert_int_equal(stress_ksm_unmerge_sparse_fit(ctx, 16 * GB, 0.0), 4000000ULL * T_PAGE);	/* 250 ns */
	sa.sa_flags = 0;	/* the stop interrupts the walk: no cut */
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	assert_int_equal(stress_ksm_unmerge_sparse_fit(ctx, 16 * GB, 1000.0), 16 * GB);
	sa.sa_flags = SA_RESTART;	/* the default action or ignored: no handler restarts it */
	sa.sa_handler = SIG_DFL;
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	assert_int_equal(stress_ksm_unmerge_sparse_fit(ctx, 16 * GB, 1000.0), 16 * GB);
	sa.sa_handler = SIG_IGN;
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	assert_int_equal(stress_ksm_unmerge_sparse_fit(ctx, 16 * GB, 1000.0), 16 * GB);
	assert_int_equal(sigaction(SIGALRM, &old, NULL), 0);

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const uint64_t vm = (uint64_t)stress_ksm_unmerge_file_field("/proc/self/status", "VmSize") * KB;
		size_t fit;

		rl.rlim_cur = rl.rlim_max = vm + 2 * GB;
		fit = setrlimit(RLIMIT_AS, &rl) == 0 ? stress_ksm_unmerge_sparse_fit(ctx, 16 * GB, 10.0) : 0;
		_exit(write(fds[1], &fit, sizeof(fit)) == (ssize_t)sizeof(fit) ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(read(fds[0], &got, sizeof(got)), sizeof(got));
	(void)close(fds[0]);
	(void)close(fds[1]);
	/* half the room, less what the child's read of VmSize allocated */
	assert_true(got <= 1 * GB && got > 1 * GB - 64 * MB);
	assert_int_equal(got % T_PAGE, 0);
	free(ctx);
}

/*
 *  test_fz_judge()
 *	a fork child charged more KSM zero pages than it maps: the excess,
 *	split into pages its parent held in VMAs fork() does not copy and
 *	pages unmerged while fork() ran; none on correct or unknown values
 */
static void test_fz_judge(void **state)
{
	int64_t uncopied, unmerging;

	(void)state;
	/* 6.18: 256 MiB of KSM zero pages unmerged during the fork, the child maps none */
	assert_int_equal(stress_ksm_unmerge_fz_judge(65536, 0, 0, &uncopied, &unmerging), 65536);
	assert_int_equal(uncopied, 0);
	assert_int_equal(unmerging, 65536);
	/* the parent's DONTFORK and WIPEONFORK pages charged to the child */
	assert_int_equal(stress_ksm_unmerge_fz_judge(128, 0, 128, &uncopied, &unmerging), 128);
	assert_int_equal(uncopied, 128);
	assert_int_equal(unmerging, 0);
	/* both: the uncopied pages first, the rest unmerged during the fork */
	assert_int_equal(stress_ksm_unmerge_fz_judge(4224, 50, 128, &uncopied, &unmerging), 4174);
	assert_int_equal(uncopied, 128);
	assert_int_equal(unmerging, 4046);
	/* more uncopied pages than the excess: the excess is theirs */
	assert_int_equal(stress_ksm_unmerge_fz_judge(100, 60, 128, &uncopied, &unmerging), 40);
	assert_int_equal(uncopied, 40);
	assert_int_equal(unmerging, 0);
	/* uncopied unknown: all of it unmerged during the fork */
	assert_int_equal(stress_ksm_unmerge_fz_judge(100, 60, -1, &uncopied, &unmerging), 40);
	assert_int_equal(uncopied, 0);
	assert_int_equal(unmerging, 40);
	/* correct: charged what it maps (or less: pages unmerged after the charge) */
	assert_int_equal(stress_ksm_unmerge_fz_judge(4096, 4096, 128, &uncopied, &unmerging), 0);
	assert_int_equal(uncopied + unmerging, 0);
	assert_int_equal(stress_ksm_unmerge_fz_judge(0, 0, 128, &uncopied, &unmerging), 0);
	assert_int_equal(stress_ksm_unmerge_fz_judge(10, 4096, 0, &uncopied, &unmerging), 0);
	assert_int_equal(uncopied + unmerging, 0);
	/* the child could not read one side: nothing judged */
	assert_int_equal(stress_ksm_unmerge_fz_judge(-1, 0, 128, &uncopied, &unmerging), 0);
	assert_int_equal(stress_ksm_unmerge_fz_judge(65536, -1, 0, &uncopied, &unmerging), 0);
	assert_int_equal(uncopied + unmerging, 0);
}

/*
 *  test_leak_judge()
 *	KSM zero pages counted for no live process beyond the run's start:
 *	the least reading (exits in flight settle), 0 when the start is
 *	unknown, nothing was read, or fewer than at the start
 */
static void test_leak_judge(void **state)
{
	const int64_t leaked[] = { 24 + 121659, 24 + 121659 };
	const int64_t settling[] = { 65560, 4120, 24 };
	const int64_t partly[] = { 70000, 65560, 65560 };
	const int64_t unread[] = { -1, 24 + 16384, -1 };
	const int64_t none[] = { -1, -1 };
	const int64_t fewer[] = { 10 };

	(void)state;
	assert_int_equal(stress_ksm_unmerge_leak_judge(24, leaked, 2), 121659);
	assert_int_equal(stress_ksm_unmerge_leak_judge(24, leaked, 1), 121659);
	assert_int_equal(stress_ksm_unmerge_leak_judge(24, settling, 3), 0);
	assert_int_equal(stress_ksm_unmerge_leak_judge(24, settling, 2), 4096);
	assert_int_equal(stress_ksm_unmerge_leak_judge(24, partly, 3), 65536);
	assert_int_equal(stress_ksm_unmerge_leak_judge(24, unread, 3), 16384);
	assert_int_equal(stress_ksm_unmerge_leak_judge(0, none, 2), 0);
	assert_int_equal(stress_ksm_unmerge_leak_judge(0, none, 0), 0);
	assert_int_equal(stress_ksm_unmerge_leak_judge(-1, leaked, 2), 0);
	assert_int_equal(stress_ksm_unmerge_leak_judge(24, fewer, 1), 0);
	assert_int_equal(stress_ksm_unmerge_leak_judge(0, fewer, 1), 10);
}

/*
 *  t_memfd()
 *	a memfd holding text (a sysfs or proc file's stand-in), or -1
 */
static int t_memfd(const char *text)
{
	int fd;

	if (!text)
		return -1;
	fd = shim_memfd_create("t-file", 0);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	return fd;
}

/*
 *  t_zero_check()
 *	zero_check() on the global and per-process counters given (NULL:
 *	the file is missing); its fail lines in *out
 */
static int t_zero_check(const char *global, const char *stat, const char **out)
{
	stress_args_t args = { .name = "ksm-unmerge" };
	stress_ksm_unmerge_ctx_t ctx;
	t_capture_t cap;
	int ret;

	(void)memset(&ctx, 0, sizeof(ctx));
	ctx.args = &args;
	ctx.zero_pages_fd = t_memfd(global);
	ctx.ksm_stat_fd = t_memfd(stat);
	t_capture_begin(&cap);
	ret = stress_ksm_unmerge_zero_check(&ctx, "after the unmerge");
	*out = t_capture_end(&cap);
	if (ctx.zero_pages_fd >= 0)
		(void)close(ctx.zero_pages_fd);
	if (ctx.ksm_stat_fd >= 0)
		(void)close(ctx.ksm_stat_fd);
	return ret;
}

/*
 *  test_zero_check()
 *	global and per-process ksm_zero_pages below 0, printed signed or
 *	wrapped, fail naming the counter and c2dc78b86e08; counts >= 0,
 *	missing files and 6.1's ksm_stat pass
 */
static void test_zero_check(void **state)
{
	const char *out;

	(void)state;
	assert_int_equal(t_zero_check("0\n", "ksm_rmap_items 0\nksm_zero_pages 0\n", &out), 0);
	assert_int_equal(t_zero_check("4096\n", "ksm_zero_pages 4096\n", &out), 0);
	assert_int_equal(t_zero_check(NULL, NULL, &out), 0);
	assert_int_equal(t_zero_check(NULL, "ksm_rmap_items 3\n", &out), 0);
	assert_string_equal(out, "");
	assert_int_equal(t_zero_check("-1\n", "ksm_zero_pages 0\n", &out), -1);
	assert_non_null(strstr(out, "ksm-unmerge: global (sysfs) ksm_zero_pages reads -1 after the unmerge: "
		"negative; the kernel lost count of KSM zero pages"));
	assert_non_null(strstr(out, "c2dc78b86e08"));
	assert_int_equal(t_zero_check("0\n", "ksm_zero_pages -3\n", &out), -1);
	assert_non_null(strstr(out, "per-process (ksm_stat) ksm_zero_pages reads -3 after the unmerge: negative"));
	assert_int_equal(t_zero_check("18446744073709551615\n", NULL, &out), -1);
	assert_non_null(strstr(out, "global (sysfs) ksm_zero_pages reads -1 after the unmerge: wrapped below 0"));
	assert_int_equal(t_zero_check("18446744073709551614\n", "ksm_zero_pages 18446744073709551614\n", &out), -1);
	assert_non_null(strstr(out, "global (sysfs)"));
	assert_non_null(strstr(out, "per-process (ksm_stat) ksm_zero_pages reads -2"));
}

/*
 *  test_taint_check()
 *	a new B, D, W or L taint fails once, naming the flags; other or
 *	earlier taints pass
 */
static void test_taint_check(void **state)
{
	stress_ksm_unmerge_shared_t sh;
	stress_args_t args = { .name = "ksm-unmerge" };
	stress_ksm_unmerge_ctx_t ctx;
	t_capture_t cap;
	const char *out;

	(void)state;
	(void)memset(&sh, 0, sizeof(sh));
	(void)memset(&ctx, 0, sizeof(ctx));
	ctx.args = &args;
	stress_ksm_unmerge_shared = &sh;
	sh.taint = STRESS_BIT_ULL(12);				/* O: out-of-tree module, before the run */
	ctx.taint_fd = t_memfd("12288\n");			/* O and E (unsigned module) */
	assert_int_equal(stress_ksm_unmerge_taint_check(&ctx), 0);
	(void)close(ctx.taint_fd);
	sh.taint |= STRESS_BIT_ULL(9);
	ctx.taint_fd = t_memfd("4608\n");			/* O and W, W before the run */
	assert_int_equal(stress_ksm_unmerge_taint_check(&ctx), 0);
	(void)close(ctx.taint_fd);
	sh.taint = STRESS_BIT_ULL(12);
	ctx.taint_fd = t_memfd("21120\n");			/* O, W, D, L */
	t_capture_begin(&cap);
	assert_int_equal(stress_ksm_unmerge_taint_check(&ctx), -1);
	out = t_capture_end(&cap);
	assert_non_null(strstr(out, "ksm-unmerge: the kernel became tainted during the run: /proc/sys/kernel/tainted "
		"0x5280, new flags 0x4280 D: oops W: warning L: soft lockup (see the kernel log)"));
	assert_int_equal(stress_ksm_unmerge_taint_check(&ctx), 0);	/* said once */
	(void)close(ctx.taint_fd);
	ctx.taint_fd = -1;
	assert_int_equal(stress_ksm_unmerge_taint_check(&ctx), 0);
	stress_ksm_unmerge_shared = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_counters),
		cmocka_unit_test(test_gup_broken),
		cmocka_unit_test(test_thp_kind),
		cmocka_unit_test(test_sparse_layout),
		cmocka_unit_test(test_sparse_allow),
		cmocka_unit_test(test_sparse_fit),
		cmocka_unit_test(test_fz_judge),
		cmocka_unit_test(test_leak_judge),
		cmocka_unit_test(test_zero_check),
		cmocka_unit_test(test_taint_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
