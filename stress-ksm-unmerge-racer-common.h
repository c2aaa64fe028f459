/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racer-common.h: helpers shared by the racers of the
 * stress-ksm-unmerge-racer-*.h headers (private header of
 * stress-ksm-unmerge.c, included once, before them).
 */

/*
 *  stress_ksm_unmerge_c_alloc()
 *	zeroed racer state of size bytes, NULL with the reason set; need_pfns:
 *	the racer judges KSM pages from pagemap PFNs (root)
 */
static void *stress_ksm_unmerge_c_alloc(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const size_t size, const bool need_pfns)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	void *p;

	if (need_pfns && !ctx->have_pfns) {
		(void)snprintf(rs->reason, sizeof(rs->reason),
			"pagemap PFNs not readable (needs CAP_SYS_ADMIN): cannot see KSM pages");
		return NULL;
	}
	p = calloc(1, size);
	if (!p)
		(void)snprintf(rs->reason, sizeof(rs->reason), "out of memory for racer state");
	return p;
}

/*
 *  stress_ksm_unmerge_c_fail()
 *	count a failure of racer idx and say what the kernel did wrong
 */
static void stress_ksm_unmerge_c_fail(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const char *fmt, ...)
	FORMAT(printf, 3, 4);

static void stress_ksm_unmerge_c_fail(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const char *fmt, ...)
{
	char buf[384];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
	pr_fail("%s: %s racer: %s\n", ctx->args->name, stress_ksm_unmerge_racer_names[idx], buf);
}

/*
 *  stress_ksm_unmerge_c_may_act()
 *	racer thread loop: park while the cycle verifies, idle once the run
 *	ends (still parking); true when the racer may act now
 */
static bool stress_ksm_unmerge_c_may_act(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	if (ctx->quiesce) {
		(void)stress_ksm_unmerge_racer_park(ctx, idx);
		return false;
	}
	return stress_ksm_unmerge_b_keep_going(ctx);
}

/*
 *  stress_ksm_unmerge_c_bad()
 *	pure: first of n pages at p that does not hold tmpl, -1 if all do
 */
static ssize_t stress_ksm_unmerge_c_bad(const uint8_t *p, const size_t n, const uint8_t *tmpl,
	const size_t page_size)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (shim_memcmp(p + k * page_size, tmpl, page_size))
			return (ssize_t)k;
	return -1;
}

/*
 *  stress_ksm_unmerge_c_ksm_count()
 *	KSM pages among n pages at p (pagemap and kpageflags)
 */
static uint64_t stress_ksm_unmerge_c_ksm_count(const stress_ksm_unmerge_ctx_t *ctx,
	const uint8_t *p, const size_t n)
{
	uint64_t count = 0;
	size_t k;

	for (k = 0; k < n; k++) {
		uint64_t e, flags;

		if (stress_ksm_unmerge_b_lookup(ctx, ctx->pagemap_fd, p + k * ctx->page_size, &e, &flags) == 0 &&
		    stress_ksm_unmerge_b_entry_ksm(e, flags, 0))
			count++;
	}
	return count;
}
