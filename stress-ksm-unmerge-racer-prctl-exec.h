/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racer-prctl-exec.h: the prctl-exec racer (private
 * header of stress-ksm-unmerge.c, included once, before the racer table).
 *
 * "mm/ksm: fix exec/fork inheritance support for prctl" (xu xin, 2025):
 * PR_SET_MEMORY_MERGE is inherited across fork and kept across exec, and
 * the VMAs the new program maps must be mergeable.  A thread forks a child
 * that sets PR_SET_MEMORY_MERGE 1 and execs the running binary (the
 * path /proc/self/exe links to, or that link itself) with STRESS_KSM_UNMERGE_EXEC_HELPER=<fd> in its
 * environment.  A constructor in this file sees that variable before
 * main() runs, in the standalone binary and in stress-ng alike, and turns
 * the process into the helper: it reports PR_GET_MEMORY_MERGE, maps 64
 * identical pages without any madvise, reads their smaps VmFlags (must
 * hold "mg": merge-any marks new VMAs mergeable) and waits
 * (2 s at most) for ksmd to merge them; it writes one report line to the fd and exits.
 * The racer fails the run when merge-any was lost across exec or the new
 * VMA is not mergeable (kernel state, read right after exec); a helper
 * ksmd did not merge in time is only not counted.  Evidence: helpers
 * whose own pages ksmd merged after the exec.
 */

#define KSM_EXEC_HELPER_ENV		"STRESS_KSM_UNMERGE_EXEC_HELPER"
#define KSM_EXEC_HELPER_PAGES		(64)
#define KSM_EXEC_HELPER_WAIT_SECS	(2.0)
#define KSM_EXEC_REPORT_SECS		(10.0)	/* the racer's wait for a report */

/* One helper's report */
typedef struct {
	int get;			/* PR_GET_MEMORY_MERGE after exec */
	int mg;				/* its new VMA's VmFlags hold "mg": 1, 0, -1 unknown */
	long long merging;		/* ksm_merging_pages it saw (-1 unknown) */
} stress_ksm_unmerge_exec_report_t;

/*
 *  stress_ksm_unmerge_exec_parse()
 *	pure: parse "get=G mg=M merging=N"; 0 or -1
 */
static int stress_ksm_unmerge_exec_parse(const char *line, stress_ksm_unmerge_exec_report_t *r)
{
	return (sscanf(line, "get=%d mg=%d merging=%lld", &r->get, &r->mg, &r->merging) == 3) ? 0 : -1;
}

/*
 *  stress_ksm_unmerge_exec_judge()
 *	pure: 0 merge-any kept and the new VMA mergeable, 1 merge-any lost
 *	across exec, 2 the new VMA not mergeable
 */
static int stress_ksm_unmerge_exec_judge(const stress_ksm_unmerge_exec_report_t *r)
{
	if (r->get != 1)
		return 1;
	if (r->mg == 0)
		return 2;
	return 0;
}

/*
 *  stress_ksm_unmerge_exec_helper_mg()
 *	helper: 1 if the VMA at addr has "mg" in its VmFlags, 0 not, -1 unknown
 */
static int stress_ksm_unmerge_exec_helper_mg(const void *addr)
{
	char flags[320];

	stress_ksm_unmerge_vma_flags(addr, flags, sizeof(flags));
	if (!strchr(flags, '-'))
		return -1;	/* "VMA not found" or smaps unreadable */
	return strstr(flags, " mg") ? 1 : 0;
}

/*
 *  stress_ksm_unmerge_exec_helper_merging()
 *	helper: its ksm_merging_pages, -1 unknown
 */
static long long stress_ksm_unmerge_exec_helper_merging(void)
{
	char buf[512];
	ssize_t n;
	const char *p;
	int fd = open("/proc/self/ksm_stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fd = open("/proc/self/ksm_merging_pages", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = stress_ksm_unmerge_fd_read(fd, buf, sizeof(buf));
	(void)close(fd);
	if (n <= 0)
		return -1;
	p = strstr(buf, "ksm_merging_pages ");
	return strtoll(p ? p + strlen("ksm_merging_pages ") : buf, NULL, 10);
}

/*
 *  stress_ksm_unmerge_exec_helper()
 *	the process is the exec'd helper: report and exit, never returns
 */
static void NORETURN stress_ksm_unmerge_exec_helper(const int fd)
{
	const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	const int get = prctl(PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL);
	struct timespec t0, now, nap = { 0, 2000000 };
	long long merging = -1;
	char line[96];
	uint8_t *p;
	int mg = -1, len;

	p = mmap(NULL, KSM_EXEC_HELPER_PAGES * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		(void)memset(p, 0x6b, KSM_EXEC_HELPER_PAGES * ps);
		mg = stress_ksm_unmerge_exec_helper_mg(p);
		(void)clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			merging = stress_ksm_unmerge_exec_helper_merging();
			(void)clock_gettime(CLOCK_MONOTONIC, &now);
			if (get != 1 || mg != 1 || merging > 0 || merging < 0 ||
			    (double)(now.tv_sec - t0.tv_sec) > KSM_EXEC_HELPER_WAIT_SECS)
				break;
			(void)nanosleep(&nap, NULL);
		}
	}
	len = snprintf(line, sizeof(line), "get=%d mg=%d merging=%lld\n", get, mg, merging);
	if (write(fd, line, (size_t)len) != len)
		_exit(2);
	_exit(0);
}

#if defined(__GNUC__)
/*
 *  stress_ksm_unmerge_exec_ctor()
 *	before main(): become the helper when exec'd as one
 */
static void __attribute__((constructor)) stress_ksm_unmerge_exec_ctor(void)
{
	const char *v = getenv(KSM_EXEC_HELPER_ENV);
	char *end;
	long fd;

	if (!v || !*v)
		return;
	fd = strtol(v, &end, 10);
	if (*end || fd < 3 || fd > 1023)
		_exit(3);
	stress_ksm_unmerge_exec_helper((int)fd);
}
#define KSM_EXEC_HELPER_BUILT	(1)
#endif

/*
 *  stress_ksm_unmerge_exec_child()
 *	forked child: merge-any on, exec the binary as the helper (env0 built
 *	before the fork: only async-signal-safe calls here); an instance
 *	SIGKILLed before PR_SET_PDEATHSIG took effect is seen in getppid()
 */
static void NORETURN stress_ksm_unmerge_exec_child(const int wfd, const char *exe, char *env0,
	const pid_t parent)
{
	char *argv[] = { "stress-ksm-unmerge-exec-helper", NULL };
	char *envp[] = { env0, NULL };

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(6);
	if (fcntl(wfd, F_SETFD, 0) < 0 || prctl(PR_SET_MEMORY_MERGE, 1UL, 0UL, 0UL, 0UL) < 0)
		_exit(4);
	(void)execve(exe, argv, envp);
	_exit(5);
}

/*
 *  stress_ksm_unmerge_exec_read()
 *	read the helper's report line, bounded; 0 or -1
 */
static int stress_ksm_unmerge_exec_read(const int rfd, char *buf, const size_t len)
{
	struct pollfd pfd = { .fd = rfd, .events = POLLIN, .revents = 0 };
	size_t off = 0;

	while (off < len - 1) {
		ssize_t n;

		if (poll(&pfd, 1, (int)(KSM_EXEC_REPORT_SECS * 1000)) <= 0)
			return -1;
		n = read(rfd, buf + off, len - 1 - off);
		if (n <= 0)
			break;
		off += (size_t)n;
		if (memchr(buf, '\n', off))
			break;
	}
	buf[off] = '\0';
	return off ? 0 : -1;
}

/*
 *  stress_ksm_unmerge_exec_report()
 *	judge one helper's report, count evidence
 */
static void stress_ksm_unmerge_exec_report(stress_ksm_unmerge_ctx_t *ctx, const char *line)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, KSM_RACER_IDX_PRCTL_EXEC);
	stress_ksm_unmerge_exec_report_t r;

	if (stress_ksm_unmerge_exec_parse(line, &r) < 0) {
		rs->failures++;
		pr_fail("%s: prctl-exec racer: helper report unreadable: '%.60s'\n", ctx->args->name, line);
		return;
	}
	switch (stress_ksm_unmerge_exec_judge(&r)) {
	case 1:
		rs->failures++;
		pr_fail("%s: prctl-exec racer: PR_GET_MEMORY_MERGE reads %d after exec, expected 1: "
			"merge-any set before exec was lost (xu xin's \"mm/ksm: fix exec/fork inheritance "
			"support for prctl\")\n", ctx->args->name, r.get);
		return;
	case 2:
		rs->failures++;
		pr_fail("%s: prctl-exec racer: with merge-any on after exec, the helper's new anonymous "
			"VMA is not mergeable (no \"mg\" in VmFlags): merge-any not applied to new VMAs "
			"after exec\n", ctx->args->name);
		return;
	default:
		break;
	}
	if (r.merging > 0)
		rs->evidence++;
	else
		rs->ksmd_waits_timed_out++;
}

/*
 *  stress_ksm_unmerge_exec_one()
 *	fork, exec the helper, judge its report, reap it
 */
static void stress_ksm_unmerge_exec_one(stress_ksm_unmerge_ctx_t *ctx)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, KSM_RACER_IDX_PRCTL_EXEC);
	char line[128], env0[64], exe[PATH_MAX];
	int fds[2], status;
	pid_t pid, parent;
	/* the binary's path (valgrind answers this readlink with its client) */
	const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0 || (size_t)n >= sizeof(exe) - 1)
		(void)shim_strscpy(exe, "/proc/self/exe", sizeof(exe));
	else
		exe[n] = '\0';
	if (strstr(exe, " (deleted)"))
		(void)shim_strscpy(exe, "/proc/self/exe", sizeof(exe));

	if (pipe2(fds, O_CLOEXEC) < 0) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "pipe2 failed, errno=%d (%s)", errno, strerror(errno));
		return;
	}
	(void)snprintf(env0, sizeof(env0), "%s=%d", KSM_EXEC_HELPER_ENV, fds[1]);
	parent = getpid();
	pid = fork();
	if (pid == 0) {
		(void)close(fds[0]);
		stress_ksm_unmerge_exec_child(fds[1], exe, env0, parent);
	}
	(void)close(fds[1]);
	if (pid < 0) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "fork failed, errno=%d (%s)", errno, strerror(errno));
		(void)close(fds[0]);
		return;
	}
	if (stress_ksm_unmerge_exec_read(fds[0], line, sizeof(line)) == 0)
		stress_ksm_unmerge_exec_report(ctx, line);
	(void)close(fds[0]);
	if (stress_ksm_unmerge_child_reap(pid, 1.0, &status) == 0 && WIFEXITED(status) &&
	    WEXITSTATUS(status) != 0 && stress_continue(ctx->args)) {
		rs->failures++;
		pr_fail("%s: prctl-exec racer: the child could not become the helper (exit %d: "
			"4 prctl, 5 exec of /proc/self/exe)\n", ctx->args->name, WEXITSTATUS(status));
	}
	rs->ops++;
}

/*
 *  stress_ksm_unmerge_exec_thread()
 *	racer: one helper at a time, while the cycle merges and unmerges
 */
static void *stress_ksm_unmerge_exec_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_PRCTL_EXEC;

	while (!ctx->racers_stop) {
		if (!stress_ksm_unmerge_racer_may_act(ctx, idx))
			continue;
		stress_ksm_unmerge_exec_one(ctx);
		(void)shim_nanosleep_uint64(20000000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_exec_supported()
 *	the helper mode is compiled in and the kernel has PR_GET_MEMORY_MERGE
 */
static int stress_ksm_unmerge_exec_supported(char *reason, const size_t len)
{
#if defined(KSM_EXEC_HELPER_BUILT)
	if (prctl(PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL) < 0) {
		(void)snprintf(reason, len, "PR_GET_MEMORY_MERGE failed, errno=%d (%s) (needs Linux 6.4)",
			errno, strerror(errno));
		return -1;
	}
	return 0;
#else
	(void)snprintf(reason, len, "built without constructor support for the exec helper");
	return -1;
#endif
}

/*
 *  stress_ksm_unmerge_exec_start()
 *	the thread
 */
static int stress_ksm_unmerge_exec_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	return stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_exec_thread);
}

/*
 *  stress_ksm_unmerge_exec_stop()
 *	join the thread (a running helper is reaped by it)
 */
static void stress_ksm_unmerge_exec_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	pr_dbg("%s: prctl-exec racer: %" PRIu64 " helpers not merged by ksmd within %.0f s\n",
		ctx->args->name, stress_ksm_unmerge_racer_stats(ctx, idx)->ksmd_waits_timed_out, KSM_EXEC_HELPER_WAIT_SECS);
}

#define KSM_RACER_PRCTL_EXEC                                \
	.path = "PR_SET_MEMORY_MERGE across fork and exec", \
	.evidence = "helpers-merged",                       \
	.supported = stress_ksm_unmerge_exec_supported,     \
	.start = stress_ksm_unmerge_exec_start,             \
	.stop = stress_ksm_unmerge_exec_stop,
