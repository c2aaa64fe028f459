/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racer-uffd-wp.h: the uffd-wp racer (private header of
 * stress-ksm-unmerge.c, included once, before the racer table).
 */

/* ------------------------------------------------------------------ */
/* uffd-wp: unshare of write-protected KSM pages, unmerge watchdog    */
/* ------------------------------------------------------------------ */

/* its built and not-built entries share these (the name: KSM_UNMERGE_RACER_LIST) */
#define KSM_RACER_UFFD_WP_ID						\
	.flags = KSM_RACER_F_HOLDING,					\
	.path = "unshare of uffd-wp protected KSM pages",	\
	.evidence = "wp-pages-unshared"

#if defined(HAVE_LINUX_USERFAULTFD_H) &&	\
    defined(UFFDIO_WRITEPROTECT) &&		\
    defined(UFFD_FEATURE_PAGEFAULT_FLAG_WP) &&	\
    defined(UFFDIO_REGISTER_MODE_WP)

#if !defined(UFFD_USER_MODE_ONLY)
#define UFFD_USER_MODE_ONLY		(1)
#endif
#if !defined(UFFD_FEATURE_THREAD_ID)
#define UFFD_FEATURE_THREAD_ID		(1 << 8)
#endif

#define KSM_UFFD_HANG_SECS		(10.0)	/* an unmerge call longer than this is checked for a hang */
#define KSM_UFFD_MAX_RANGE		(64)	/* pages per WRITEPROTECT toggle */

typedef struct {
	int uffd;
	bool thread_id;			/* faults carry the faulting tid */
	pid_t main_tid;			/* the instance thread that unmerges */
	uint8_t *snap;			/* per page: KSM + uffd-wp at unmerge start */
	volatile uint32_t *touched;	/* per page: cycle it was unprotected in */
	uint64_t *pm;			/* pagemap scratch (main thread hooks) */
	bool snap_valid;		/* snap taken this cycle */
	pthread_t watchdog;
	bool watchdog_running;
	uint64_t faults;		/* WP faults resolved */
	uint64_t lost;			/* WP bits lost, tolerated with other racers */
} stress_ksm_unmerge_uffd_t;

/*
 *  stress_ksm_unmerge_uffd_open()
 *	userfaultfd with the WP feature (USER_MODE_ONLY on EPERM); fd or -1
 */
static int stress_ksm_unmerge_uffd_open(char *reason, const size_t len, bool *thread_id)
{
	static const uint64_t features[] = {
		UFFD_FEATURE_PAGEFAULT_FLAG_WP | UFFD_FEATURE_THREAD_ID,
		UFFD_FEATURE_PAGEFAULT_FLAG_WP,
	};
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(features); i++) {
		struct uffdio_api api;
		int fd = shim_userfaultfd(O_CLOEXEC | O_NONBLOCK);

		if (fd < 0 && errno == EPERM)
			fd = shim_userfaultfd(O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
		if (fd < 0) {
			(void)snprintf(reason, len, "userfaultfd denied or missing, errno=%d (%s)",
				errno, strerror(errno));
			return -1;
		}
		(void)memset(&api, 0, sizeof(api));
		api.api = UFFD_API;
		api.features = features[i];
		if (ioctl(fd, UFFDIO_API, &api) == 0 &&
		    (api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP)) {
			*thread_id = !!(features[i] & UFFD_FEATURE_THREAD_ID);
			return fd;
		}
		(void)snprintf(reason, len, "UFFDIO_API without UFFD_FEATURE_PAGEFAULT_FLAG_WP, "
			"errno=%d (%s)", errno, strerror(errno));
		(void)close(fd);
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_uffd_wp()
 *	write-protect (on) or unprotect and wake (off) pages first..first+n-1
 */
static int stress_ksm_unmerge_uffd_wp(stress_ksm_unmerge_ctx_t *ctx, const int uffd,
	const size_t first, const size_t n, const bool on)
{
	struct uffdio_writeprotect wp;

	wp.range.start = (uintptr_t)(ctx->region + first * ctx->page_size);
	wp.range.len = n * ctx->page_size;
	wp.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0;
	return ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
}

/*
 *  stress_ksm_unmerge_uffd_msg_check()
 *	pure: is a uffd message one we may see (a WP page fault inside
 *	[start, start+len)); 0 if so, -1 with a description otherwise
 */
static int stress_ksm_unmerge_uffd_msg_check(const struct uffd_msg *msg, const uintptr_t start,
	const size_t len, char *why, const size_t why_len)
{
	if (msg->event != UFFD_EVENT_PAGEFAULT) {
		(void)snprintf(why, why_len, "unexpected uffd event 0x%x", (unsigned int)msg->event);
		return -1;
	}
	if (!(msg->arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP)) {
		(void)snprintf(why, why_len, "missing-page fault (flags 0x%llx) at 0x%llx, expected WP only",
			(unsigned long long)msg->arg.pagefault.flags,
			(unsigned long long)msg->arg.pagefault.address);
		return -1;
	}
	if (msg->arg.pagefault.address < start || msg->arg.pagefault.address >= start + len) {
		(void)snprintf(why, why_len, "WP fault at 0x%llx outside the region",
			(unsigned long long)msg->arg.pagefault.address);
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_uffd_fault()
 *	resolve one WP fault: mark the page touched, unprotect and wake
 */
static void stress_ksm_unmerge_uffd_fault(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u, const struct uffd_msg *msg)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const size_t i = (size_t)((msg->arg.pagefault.address - (uintptr_t)ctx->region) / ctx->page_size);

	if (u->thread_id && (pid_t)msg->arg.pagefault.feat.ptid == u->main_tid &&
	    ctx->phase == KSM_PHASE_UNMERGING) {
		pr_fail("%s: uffd-wp racer: the unmerge itself raised a WP fault at page %zu "
			"(break_ksm must unshare, not write)\n", ctx->args->name, i);
		rs->failures++;
	}
	u->touched[i] = (uint32_t)ctx->cycle;
	if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, i, 1, false) < 0 && errno != ENOENT) {
		pr_fail("%s: uffd-wp racer: UFFDIO_WRITEPROTECT off at faulting page %zu failed, "
			"errno=%d (%s)\n", ctx->args->name, i, errno, strerror(errno));
		rs->failures++;
	}
	u->faults++;
}

/*
 *  stress_ksm_unmerge_uffd_events()
 *	read and handle every pending uffd message, waiting up to ms
 */
static void stress_ksm_unmerge_uffd_events(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u, const int ms)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	struct pollfd pfd = { u->uffd, POLLIN, 0 };
	struct uffd_msg msg;
	char why[128];

	if (poll(&pfd, 1, ms) <= 0)
		return;
	while (read(u->uffd, &msg, sizeof(msg)) == (ssize_t)sizeof(msg)) {
		if (stress_ksm_unmerge_uffd_msg_check(&msg, (uintptr_t)ctx->region,
				ctx->region_size, why, sizeof(why)) < 0) {
			pr_fail("%s: uffd-wp racer: %s\n", ctx->args->name, why);
			rs->failures++;
			continue;
		}
		stress_ksm_unmerge_uffd_fault(ctx, idx, u, &msg);
	}
}

/*
 *  stress_ksm_unmerge_uffd_toggle()
 *	one op: protect a random range; while unmerging also unprotect
 *	(marked touched first so the WP-survival check leaves it out)
 */
static void stress_ksm_unmerge_uffd_toggle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	size_t first, j;
	const size_t n = stress_ksm_unmerge_random_range(ctx, KSM_UFFD_MAX_RANGE, &first);
	const bool on = (ctx->phase != KSM_PHASE_UNMERGING) || stress_mwc32modn(2);

	if (!on) {
		for (j = 0; j < n; j++)
			u->touched[first + j] = (uint32_t)ctx->cycle;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, first, n, on) < 0 && errno != ENOENT &&
	    errno != EAGAIN) {
		pr_fail("%s: uffd-wp racer: UFFDIO_WRITEPROTECT %s pages %zu..%zu failed, errno=%d (%s)\n",
			ctx->args->name, on ? "on" : "off", first, first + n - 1, errno, strerror(errno));
		rs->failures++;
		return;
	}
	rs->ops++;
}

/*
 *  stress_ksm_unmerge_uffd_release()
 *	unprotect (and wake) the whole region
 */
static void stress_ksm_unmerge_uffd_release(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u)
{
	if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, 0, ctx->npages, false) < 0 &&
	    errno != ENOENT && errno != EAGAIN) {
		pr_fail("%s: uffd-wp racer: UFFDIO_WRITEPROTECT off for the region failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
	}
}

/*
 *  stress_ksm_unmerge_uffd_thread()
 *	racer: toggle uffd-wp on the merged region and resolve WP faults;
 *	the region is fully unprotected whenever it parks or exits
 */
static void *stress_ksm_unmerge_uffd_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_UFFD_WP;
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)ctx->run[idx].priv;

	while (stress_ksm_unmerge_racer_until_stop(ctx)) {
		stress_ksm_unmerge_uffd_events(ctx, idx, u, 0);
		if (ctx->quiesce) {
			stress_ksm_unmerge_uffd_release(ctx, idx, u);
			stress_ksm_unmerge_uffd_events(ctx, idx, u, 0);
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (stress_ksm_unmerge_racer_phase_active(ctx)) {
			stress_ksm_unmerge_uffd_toggle(ctx, idx, u);
			(void)shim_nanosleep_uint64(20000);
			continue;
		}
		stress_ksm_unmerge_uffd_events(ctx, idx, u, 1);
	}
	/* other racers may sit in a WP fault: unprotect wakes them */
	stress_ksm_unmerge_uffd_release(ctx, idx, u);
	stress_ksm_unmerge_uffd_events(ctx, idx, u, 0);
	return NULL;
}

/*
 *  stress_ksm_unmerge_uffd_stack()
 *	kernel stack of the main thread into buf; false if unreadable
 */
static bool stress_ksm_unmerge_uffd_stack(const stress_ksm_unmerge_uffd_t *u, char *buf, const size_t len)
{
	char path[64];
	ssize_t n;

	(void)snprintf(path, sizeof(path), "/proc/self/task/%d/stack", (int)u->main_tid);
	n = stress_fs_file_read(path, buf, len - 1);
	if (n < 0) {
		(void)snprintf(buf, len, "(%s not readable, errno=%d)\n", path, errno);
		return false;
	}
	buf[n] = '\0';
	return true;
}

/*
 *  stress_ksm_unmerge_uffd_stuck()
 *	an unmerge call running past the bound is a hang only on the kernel's
 *	word: over one more second its thread stays in the KSM unmerge path
 *	(kernel stack) and no KSM page anywhere is unshared (cow_ksm); a slow
 *	unmerge that progresses (an emulated CPU, a busy machine) is not one;
 *	cow_ksm is read with pread on the shared fd, safe beside other threads
 */
static bool stress_ksm_unmerge_uffd_stuck(stress_ksm_unmerge_ctx_t *ctx, const stress_ksm_unmerge_uffd_t *u,
	const uint64_t call, char *stack, const size_t len)
{
	const int64_t cow0 = stress_ksm_unmerge_cow_ksm(ctx);
	bool readable;

	(void)shim_nanosleep_uint64(1000000000ULL);
	if (ctx->unmerge_call != call || !ctx->in_unmerge_call)
		return false;
	if (cow0 >= 0 && stress_ksm_unmerge_cow_ksm(ctx) != cow0)
		return false;
	readable = stress_ksm_unmerge_uffd_stack(u, stack, len);
	return !readable || strstr(stack, "ksm") != NULL;
}

/*
 *  stress_ksm_unmerge_uffd_watchdog()
 *	thread: an unmerge call longer than the bound that the kernel shows
 *	stuck (no progress, still in the unmerge path) is a hang
 */
static void *stress_ksm_unmerge_uffd_watchdog(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)ctx->run[KSM_RACER_IDX_UFFD_WP].priv;
	uint64_t seen = 0, reported = 0;
	double t0 = 0.0;
	char stack[2048];

	while (stress_ksm_unmerge_racer_until_stop(ctx)) {
		const uint64_t call = ctx->unmerge_call;
		const double now = stress_time_now();

		if (!ctx->in_unmerge_call || call != seen) {
			seen = call;
			t0 = now;
		} else if (reported != call && now - t0 > KSM_UFFD_HANG_SECS) {
			if (stress_ksm_unmerge_uffd_stuck(ctx, u, call, stack, sizeof(stack))) {
				reported = call;
				pr_fail("%s: uffd-wp racer: unmerge call of cycle %" PRIu64 " stuck for %.1f s "
					"(hang: bound %.0f s, no KSM page unshared in the last second, thread "
					"in the unmerge path); kernel stack of tid %d:\n%s", ctx->args->name,
					ctx->cycle, stress_time_now() - t0, KSM_UFFD_HANG_SECS,
					(int)u->main_tid, stack);
				stress_ksm_unmerge_racer_stats(ctx, KSM_RACER_IDX_UFFD_WP)->failures++;
			} else {
				pr_dbg("%s: uffd-wp racer: unmerge call still running after %.1f s but "
					"progressing\n", ctx->args->name, now - t0);
				t0 = stress_time_now();
			}
		}
		(void)shim_nanosleep_uint64(10000000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_uffd_snap_build()
 *	pure: from pagemap entries and page states, mark pages that are KSM
 *	and uffd-wp protected; returns how many
 */
static uint64_t stress_ksm_unmerge_uffd_snap_build(const uint64_t *pm, const uint8_t *state,
	const size_t npages, uint8_t *snap)
{
	uint64_t count = 0;
	size_t i;

	for (i = 0; i < npages; i++) {
		snap[i] = (pm[i] & PM_UFFD_WP) &&
			(state[i] == KSM_ENTRY_KSM || state[i] == KSM_ENTRY_KZERO);
		count += snap[i];
	}
	return count;
}

/*
 *  stress_ksm_unmerge_uffd_wp_check()
 *	pure: pages protected + KSM at unmerge start and not unprotected in
 *	this cycle must still carry PM_UFFD_WP; kept/lost counted, first
 *	lost page in *first_lost (npages if none)
 */
static void stress_ksm_unmerge_uffd_wp_check(const uint8_t *snap, const volatile uint32_t *touched,
	const uint32_t cycle, const uint64_t *pm, const size_t npages,
	uint64_t *kept, uint64_t *lost, size_t *first_lost)
{
	size_t i;

	*kept = 0;
	*lost = 0;
	*first_lost = npages;
	for (i = 0; i < npages; i++) {
		if (!snap[i] || touched[i] == cycle)
			continue;
		if (pm[i] & PM_UFFD_WP) {
			(*kept)++;
			continue;
		}
		if (!*lost)
			*first_lost = i;
		(*lost)++;
	}
}

/*
 *  stress_ksm_unmerge_uffd_unshared()
 *	after the unmerge: of the pages KSM + protected at its start (and not
 *	unprotected since), those that kept PM_UFFD_WP and are no longer KSM
 *	pages (the evidence); the others that kept the bit in *still_ksm
 */
static uint64_t stress_ksm_unmerge_uffd_unshared(const stress_ksm_unmerge_ctx_t *ctx,
	const stress_ksm_unmerge_uffd_t *u, uint64_t *still_ksm)
{
	const uint32_t cycle = (uint32_t)ctx->cycle;
	uint64_t unshared = 0;
	size_t i;

	*still_ksm = 0;
	for (i = 0; i < ctx->npages; i++) {
		int st;

		if (!u->snap[i] || u->touched[i] == cycle || !(u->pm[i] & PM_UFFD_WP))
			continue;
		st = stress_ksm_unmerge_entry_read_state(ctx, u->pm[i]);
		unshared += (st == KSM_ENTRY_ANON);
		*still_ksm += (st == KSM_ENTRY_KSM || st == KSM_ENTRY_KZERO);
	}
	return unshared;
}

/*
 *  stress_ksm_unmerge_uffd_snapshot()
 *	UNMERGING hook: record pages that are KSM and uffd-wp protected
 */
static void stress_ksm_unmerge_uffd_snapshot(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_uffd_t *u)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, KSM_RACER_IDX_UFFD_WP);
	size_t i;

	u->snap_valid = false;
	if (!ctx->have_pfns ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region, ctx->npages,
			ctx->page_size, u->pm) < 0)
		return;
	/* reuse snap as the page-state array, then overwrite it with the result */
	for (i = 0; i < ctx->npages; i++)
		u->snap[i] = (u->pm[i] & PM_UFFD_WP) ?
			(uint8_t)stress_ksm_unmerge_entry_read_state(ctx, u->pm[i]) : KSM_ENTRY_ABSENT;
	rs->detail[0] += stress_ksm_unmerge_uffd_snap_build(u->pm, u->snap, ctx->npages, u->snap);
	u->snap_valid = true;
}

/*
 *  stress_ksm_unmerge_uffd_after()
 *	VERIFY hook: the WP bits recorded at unmerge start survived unsharing
 */
static void stress_ksm_unmerge_uffd_after(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	uint64_t kept, lost, still_ksm;
	size_t first_lost;

	if (!u->snap_valid ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region, ctx->npages,
			ctx->page_size, u->pm) < 0)
		return;
	u->snap_valid = false;
	stress_ksm_unmerge_uffd_wp_check(u->snap, u->touched, (uint32_t)ctx->cycle, u->pm,
		ctx->npages, &kept, &lost, &first_lost);
	rs->evidence += stress_ksm_unmerge_uffd_unshared(ctx, u, &still_ksm);
	rs->detail[1] += kept;
	rs->detail[2] += still_ksm;
	if (!lost)
		return;
	u->lost += lost;
	if (stress_ksm_unmerge_others_run(ctx, KSM_RACER_F_HOLDING))
		return;		/* another racer may have discarded them */
	pr_fail("%s: uffd-wp racer: %" PRIu64 " KSM pages lost their uffd-wp bit across the "
		"unmerge (first: page %zu, pagemap %#" PRIx64 ")\n", ctx->args->name, lost,
		first_lost, u->pm[first_lost]);
	rs->failures++;
}

/*
 *  stress_ksm_unmerge_uffd_protect_half()
 *	MERGED hook: write-protect a random half of the merged region at once
 */
static void stress_ksm_unmerge_uffd_protect_half(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u)
{
	const size_t n = (ctx->npages + 1) / 2;
	const size_t first = stress_mwc32modn((uint32_t)(ctx->npages - n + 1));

	if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, first, n, true) < 0 && errno != ENOENT) {
		pr_fail("%s: uffd-wp racer: UFFDIO_WRITEPROTECT on pages %zu..%zu failed, errno=%d (%s)\n",
			ctx->args->name, first, first + n - 1, errno, strerror(errno));
		stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
		return;
	}
	stress_ksm_unmerge_racer_stats(ctx, idx)->ops++;
}

/*
 *  stress_ksm_unmerge_uffd_cycle()
 *	hooks: protect half once merged, snapshot at unmerge start,
 *	WP-survival check right after it
 */
static void stress_ksm_unmerge_uffd_cycle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const int phase)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)ctx->run[idx].priv;

	if (!u)
		return;
	if (phase == KSM_PHASE_MERGED)
		stress_ksm_unmerge_uffd_protect_half(ctx, idx, u);
	else if (phase == KSM_PHASE_UNMERGING)
		stress_ksm_unmerge_uffd_snapshot(ctx, u);
	else if (phase == KSM_PHASE_VERIFY)
		stress_ksm_unmerge_uffd_after(ctx, idx, u);
}

/*
 *  stress_ksm_unmerge_uffd_supported()
 *	userfaultfd allowed and UFFD_FEATURE_PAGEFAULT_FLAG_WP present
 */
static int stress_ksm_unmerge_uffd_supported(char *reason, const size_t len)
{
	bool thread_id;
	const int fd = stress_ksm_unmerge_uffd_open(reason, len, &thread_id);

	if (fd < 0)
		return -1;
	(void)close(fd);
	return 0;
}

/*
 *  stress_ksm_unmerge_uffd_free()
 *	unregister, close and free
 */
static void stress_ksm_unmerge_uffd_free(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)ctx->run[idx].priv;

	if (!u)
		return;
	if (u->uffd >= 0) {
		struct uffdio_range range = { (uintptr_t)ctx->region, ctx->region_size };

		if (ioctl(u->uffd, UFFDIO_UNREGISTER, &range) < 0)
			pr_dbg("%s: uffd-wp racer: UFFDIO_UNREGISTER failed, errno=%d (%s)\n",
				ctx->args->name, errno, strerror(errno));
		(void)close(u->uffd);
	}
	free(u->snap);
	free((void *)u->touched);
	free(u->pm);
	free(u);
	ctx->run[idx].priv = NULL;
}

/*
 *  stress_ksm_unmerge_uffd_register()
 *	register the region in WP mode; WRITEPROTECT must be offered
 */
static int stress_ksm_unmerge_uffd_register(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u)
{
	struct uffdio_register reg;

	(void)memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)ctx->region;
	reg.range.len = ctx->region_size;
	reg.mode = UFFDIO_REGISTER_MODE_WP;
	if (ioctl(u->uffd, UFFDIO_REGISTER, &reg) < 0) {
		stress_ksm_unmerge_racer_reason(ctx, idx, "UFFDIO_REGISTER MODE_WP failed, errno=%d (%s)",
			errno, strerror(errno));
		return -1;
	}
	if (!(reg.ioctls & (1ULL << _UFFDIO_WRITEPROTECT))) {
		stress_ksm_unmerge_racer_reason(ctx, idx, "UFFDIO_WRITEPROTECT not offered for anonymous memory");
		return -1;
	}
	/* registration adds the "uw" VMA flag: re-baseline the VmFlags check */
	if (stress_ksm_unmerge_vmflags(ctx->region, ctx->vmflags_before, sizeof(ctx->vmflags_before)) < 0)
		ctx->vmflags_before[0] = '\0';
	return 0;
}

/*
 *  stress_ksm_unmerge_uffd_start()
 *	uffd registered in WP mode, toggle/handler thread, watchdog thread
 */
static int stress_ksm_unmerge_uffd_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_uffd_t *u = calloc(1, sizeof(*u));

	if (!u) {
		stress_ksm_unmerge_racer_reason(ctx, idx, "out of memory for the racer state");
		return -1;
	}
	ctx->run[idx].priv = u;
	u->main_tid = (pid_t)shim_gettid();
	u->snap = calloc(ctx->npages, 1);
	u->touched = calloc(ctx->npages, sizeof(uint32_t));
	u->pm = calloc(ctx->npages, sizeof(uint64_t));
	u->uffd = stress_ksm_unmerge_uffd_open(ctx->st->racer[idx].reason,
		sizeof(ctx->st->racer[idx].reason), &u->thread_id);
	if (!u->snap || !u->touched || !u->pm || u->uffd < 0 ||
	    stress_ksm_unmerge_uffd_register(ctx, idx, u) < 0) {
		if (!u->snap || !u->touched || !u->pm)
			stress_ksm_unmerge_racer_reason(ctx, idx, "out of memory for the page maps");
		stress_ksm_unmerge_uffd_free(ctx, idx);
		return -1;
	}
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_uffd_thread) < 0) {
		stress_ksm_unmerge_uffd_free(ctx, idx);
		return -1;
	}
	u->watchdog_running = stress_ksm_unmerge_racer_helper_start(ctx, idx, "unmerge watchdog",
		&u->watchdog, stress_ksm_unmerge_uffd_watchdog);
	return 0;
}

/*
 *  stress_ksm_unmerge_uffd_stop()
 *	join both threads (the region is unprotected by then), unregister, close
 */
static void stress_ksm_unmerge_uffd_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)ctx->run[idx].priv;

	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	if (!u)
		return;
	stress_ksm_unmerge_racer_helper_join(u->watchdog, &u->watchdog_running);
	pr_dbg("%s: uffd-wp racer: %" PRIu64 " WP faults resolved, %" PRIu64 " WP bits lost "
		"(tolerated with other racers), thread ids %s\n", ctx->args->name, u->faults,
		u->lost, u->thread_id ? "yes" : "no");
	stress_ksm_unmerge_uffd_free(ctx, idx);
}

#define KSM_RACER_UFFD_WP                                                                             \
	KSM_RACER_UFFD_WP_ID,							\
	.details = { "wp-ksm-pages-at-unmerge", "wp-bits-kept", "wp-kept-still-ksm" },                \
	.page_bytes = 1 + sizeof(uint32_t) + sizeof(uint64_t),	/* state and fault record per page */ \
	.supported = stress_ksm_unmerge_uffd_supported,                                               \
	.start = stress_ksm_unmerge_uffd_start,                                                       \
	.stop = stress_ksm_unmerge_uffd_stop,                                                         \
	.cycle = stress_ksm_unmerge_uffd_cycle,

#else

/* feature guard off: the racer is listed, and reports "not built" */
#define KSM_RACER_UFFD_WP						\
	KSM_RACER_UFFD_WP_ID,							\
	.not_built = "userfaultfd write-protect missing (HAVE_LINUX_USERFAULTFD_H)",

#endif
