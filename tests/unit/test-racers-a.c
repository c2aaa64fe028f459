/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racers-a.c: cmocka unit tests of the verifiers of the
 * vmsplice, gup, uffd-wp and thp racers (stress-ksm-unmerge.c):
 * each is fed good input, then a corrupted buffer or a wrong count, and
 * must tell them apart.
 */
#include "../../stress-ksm-unmerge.c"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test-env.h"

/*
 *  t_setup()
 *	environment with the "mixed" pattern (same, few, zero, unique pages)
 */
static int t_setup(void **state)
{
	t_env_t *e = t_env_new(KSM_UNMERGE_PATTERN_MIXED, T_PAGES);

	*state = e;
	return e ? 0 : -1;
}

/*
 *  test_pages_check()
 *	vmsplice/gup data verifier: intact copy passes, any flipped byte in
 *	any page is found with its page and offset, also in a partial page
 */
static void test_pages_check(void **state)
{
	t_env_t *e = *state;
	stress_ksm_unmerge_ctx_t *ctx = &e->ctx;
	uint8_t buf[4 * T_PAGE];
	ssize_t off;

	(void)memcpy(buf, ctx->region + 5 * T_PAGE, sizeof(buf));
	assert_int_equal(stress_ksm_unmerge_ra_pages_check(ctx, 5, buf, sizeof(buf), false, e->scratch, &off), -1);
	/* the same bytes checked as the wrong pages must fail */
	assert_int_equal(stress_ksm_unmerge_ra_pages_check(ctx, 4, buf, sizeof(buf), false, e->scratch, &off), 0);

	buf[2 * T_PAGE + 100] ^= 0x01;
	assert_int_equal(stress_ksm_unmerge_ra_pages_check(ctx, 5, buf, sizeof(buf), false, e->scratch, &off), 2);
	/* page 7 is a unique page: checked word by word */
	assert_true(off <= 100 && off + 8 > 100);
	buf[2 * T_PAGE + 100] ^= 0x01;

	/* partial last page: only its first bytes count */
	buf[3 * T_PAGE + 10] ^= 0x80;
	assert_int_equal(stress_ksm_unmerge_ra_pages_check(ctx, 5, buf, 3 * T_PAGE + 10, false, e->scratch, &off), -1);
	assert_int_equal(stress_ksm_unmerge_ra_pages_check(ctx, 5, buf, 3 * T_PAGE + 11, false, e->scratch, &off), 3);
	assert_int_equal(off, 10);
}

/*
 *  test_pages_check_zero()
 *	a zeroed page (discarded by another racer) passes only when tolerated
 */
static void test_pages_check_zero(void **state)
{
	t_env_t *e = *state;
	stress_ksm_unmerge_ctx_t *ctx = &e->ctx;
	uint8_t buf[2 * T_PAGE];
	ssize_t off;

	(void)memcpy(buf, ctx->region, sizeof(buf));
	(void)memset(buf + T_PAGE, 0, T_PAGE);	/* page 1 is a "few" page */
	assert_int_equal(stress_ksm_unmerge_ra_pages_check(ctx, 0, buf, sizeof(buf), false, e->scratch, &off), 1);
	assert_int_equal(stress_ksm_unmerge_ra_pages_check(ctx, 0, buf, sizeof(buf), true, e->scratch, &off), -1);
	/* a half zeroed page is corruption even when zero pages are tolerated */
	(void)memcpy(buf + T_PAGE, ctx->region + T_PAGE, T_PAGE / 2);
	assert_int_equal(stress_ksm_unmerge_ra_pages_check(ctx, 0, buf, sizeof(buf), true, e->scratch, &off), 1);
	assert_int_equal(off, T_PAGE / 2);
}

/*
 *  test_gup_broken()
 *	only KSM pages (or KSM zero pages) that became present anon pages
 *	count as COW-broken; KSM folios are counted apart
 */
static void test_gup_broken(void **state)
{
	static const uint8_t before[6] = {
		KSM_RA_PAGE_KSM, KSM_RA_PAGE_KSM, KSM_RA_PAGE_KZERO,
		KSM_RA_PAGE_ANON, KSM_RA_PAGE_KSM, KSM_RA_PAGE_ABSENT,
	};
	static const uint8_t after[6] = {
		KSM_RA_PAGE_ANON, KSM_RA_PAGE_KSM, KSM_RA_PAGE_ANON,
		KSM_RA_PAGE_ANON, KSM_RA_PAGE_ABSENT, KSM_RA_PAGE_ANON,
	};
	uint64_t folios;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_gup_broken(before, after, 6, &folios), 2);
	assert_int_equal(folios, 1);
	assert_int_equal(stress_ksm_unmerge_gup_broken(before, before, 6, &folios), 0);
	assert_int_equal(folios, 0);
}

/*
 *  test_gup_pinned_shared()
 *	while a long-term write pin holds pages, a KSM page or KSM zero page
 *	among them is found; private and absent pages are not
 */
static void test_gup_pinned_shared(void **state)
{
#if defined(KSM_GUP_LONGTERM)
	static const uint8_t ok[4] = {
		KSM_RA_PAGE_ANON, KSM_RA_PAGE_ANON, KSM_RA_PAGE_ABSENT, KSM_RA_PAGE_ANON,
	};
	static const uint8_t ksm[4] = {
		KSM_RA_PAGE_ANON, KSM_RA_PAGE_ANON, KSM_RA_PAGE_KSM, KSM_RA_PAGE_ANON,
	};
	static const uint8_t kzero[4] = {
		KSM_RA_PAGE_KZERO, KSM_RA_PAGE_ANON, KSM_RA_PAGE_ANON, KSM_RA_PAGE_ANON,
	};

	(void)state;
	assert_int_equal(stress_ksm_unmerge_gup_pinned_shared(ok, 4), -1);
	assert_int_equal(stress_ksm_unmerge_gup_pinned_shared(ksm, 4), 2);
	assert_int_equal(stress_ksm_unmerge_gup_pinned_shared(kzero, 4), 0);
	assert_int_equal(stress_ksm_unmerge_gup_pinned_shared(ksm, 2), -1);
#else
	(void)state;
	skip();		/* built without io_uring headers */
#endif
}

/*
 *  test_gup_cow_check()
 *	a cow_ksm delta short of the broken KSM folios fails
 */
static void test_gup_cow_check(void **state)
{
	(void)state;
	assert_int_equal(stress_ksm_unmerge_gup_cow_check(5, 5), 0);
	assert_int_equal(stress_ksm_unmerge_gup_cow_check(9, 5), 0);
	assert_int_equal(stress_ksm_unmerge_gup_cow_check(4, 5), -1);
	assert_int_equal(stress_ksm_unmerge_gup_cow_check(0, 1), -1);
	assert_int_equal(stress_ksm_unmerge_gup_cow_check(-1, 5), 0);	/* no counter */
}

/*
 *  t_msg()
 *	a uffd message
 */
static struct uffd_msg t_msg(const uint8_t event, const uint64_t flags, const uint64_t addr)
{
	struct uffd_msg m;

	(void)memset(&m, 0, sizeof(m));
	m.event = event;
	m.arg.pagefault.flags = flags;
	m.arg.pagefault.address = addr;
	return m;
}

/*
 *  test_uffd_msg_check()
 *	only WP page faults inside the region are accepted
 */
static void test_uffd_msg_check(void **state)
{
	const uintptr_t start = 0x100000;
	const size_t len = T_PAGES * T_PAGE;
	struct uffd_msg m;
	char why[128];

	(void)state;
	m = t_msg(UFFD_EVENT_PAGEFAULT, UFFD_PAGEFAULT_FLAG_WP | UFFD_PAGEFAULT_FLAG_WRITE, start + T_PAGE);
	assert_int_equal(stress_ksm_unmerge_uffd_msg_check(&m, start, len, why, sizeof(why)), 0);
	m = t_msg(UFFD_EVENT_PAGEFAULT, UFFD_PAGEFAULT_FLAG_WRITE, start + T_PAGE);
	assert_int_equal(stress_ksm_unmerge_uffd_msg_check(&m, start, len, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "missing-page"));
	m = t_msg(UFFD_EVENT_PAGEFAULT, UFFD_PAGEFAULT_FLAG_WP, start + len);
	assert_int_equal(stress_ksm_unmerge_uffd_msg_check(&m, start, len, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "outside"));
	m = t_msg(UFFD_EVENT_PAGEFAULT, UFFD_PAGEFAULT_FLAG_WP, start - 1);
	assert_int_equal(stress_ksm_unmerge_uffd_msg_check(&m, start, len, why, sizeof(why)), -1);
	m = t_msg(UFFD_EVENT_REMOVE, 0, start);
	assert_int_equal(stress_ksm_unmerge_uffd_msg_check(&m, start, len, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "unexpected uffd event"));
}

/*
 *  test_uffd_wp_check()
 *	pages KSM + protected at unmerge start must keep PM_UFFD_WP unless
 *	the racer unprotected them in this cycle; a lost bit is counted
 */
static void test_uffd_wp_check(void **state)
{
	uint64_t pm[T_PAGES], after[T_PAGES];
	uint8_t st[T_PAGES], snap[T_PAGES];
	uint32_t touched[T_PAGES];
	uint64_t kept, lost;
	size_t i, first_lost;

	(void)state;
	for (i = 0; i < T_PAGES; i++) {
		pm[i] = PM_PRESENT | (0x500 + i) | ((i & 1) ? 0 : PM_UFFD_WP);
		st[i] = (i < 12) ? KSM_RA_PAGE_KSM : KSM_RA_PAGE_ANON;
		touched[i] = 0;
	}
	/* even pages below 12 are KSM and protected: 0,2,4,6,8,10 */
	assert_int_equal(stress_ksm_unmerge_uffd_snap_build(pm, st, T_PAGES, snap), 6);

	/* unshared: new pfns, WP bits kept */
	for (i = 0; i < T_PAGES; i++)
		after[i] = (pm[i] & ~PM_PFN_MASK) | (0x900 + i);
	stress_ksm_unmerge_uffd_wp_check(snap, touched, 7, after, T_PAGES, &kept, &lost, &first_lost);
	assert_int_equal(kept, 6);
	assert_int_equal(lost, 0);
	assert_int_equal(first_lost, T_PAGES);

	/* page 4 lost its bit: found */
	after[4] &= ~PM_UFFD_WP;
	stress_ksm_unmerge_uffd_wp_check(snap, touched, 7, after, T_PAGES, &kept, &lost, &first_lost);
	assert_int_equal(kept, 5);
	assert_int_equal(lost, 1);
	assert_int_equal(first_lost, 4);

	/* ...but not if the racer unprotected it in this cycle */
	touched[4] = 7;
	stress_ksm_unmerge_uffd_wp_check(snap, touched, 7, after, T_PAGES, &kept, &lost, &first_lost);
	assert_int_equal(lost, 0);
	/* an unprotect in an earlier cycle does not excuse it */
	touched[4] = 6;
	stress_ksm_unmerge_uffd_wp_check(snap, touched, 7, after, T_PAGES, &kept, &lost, &first_lost);
	assert_int_equal(lost, 1);
}

/*
 *  test_uffd_hang_report()
 *	the watchdog's report counts a failure for the uffd-wp racer
 */
static void test_uffd_hang_report(void **state)
{
	t_env_t *e = *state;
	stress_ksm_unmerge_uffd_t u;

	(void)memset(&u, 0, sizeof(u));
	u.main_tid = (pid_t)shim_gettid();
	assert_int_equal(e->st.racer[KSM_RACER_IDX_UFFD_WP].failures, 0);
	stress_ksm_unmerge_uffd_hang_report(&e->ctx, &u, 12.5);
	assert_int_equal(e->st.racer[KSM_RACER_IDX_UFFD_WP].failures, 1);
}

/*
 *  test_thp_data_check()
 *	every THP subpage must hold the template; a flipped byte is found
 */
static void test_thp_data_check(void **state)
{
	t_env_t *e = *state;
	const uint8_t *tmpl = stress_ksm_unmerge_thp_template(&e->ctx);
	uint8_t *buf = malloc(8 * T_PAGE);
	size_t i, off;

	(void)state;
	assert_non_null(buf);
	for (i = 0; i < 8; i++)
		(void)memcpy(buf + i * T_PAGE, tmpl, T_PAGE);
	assert_int_equal(stress_ksm_unmerge_thp_data_check(buf, 8, tmpl, T_PAGE, &off), -1);
	assert_false(stress_ksm_unmerge_ra_is_zero(tmpl, T_PAGE));	/* zero pages would be remapped */
	buf[6 * T_PAGE + 4095] ^= 0xff;
	assert_int_equal(stress_ksm_unmerge_thp_data_check(buf, 8, tmpl, T_PAGE, &off), 6);
	assert_int_equal(off, 4095);
	(void)memset(buf + T_PAGE, 0, T_PAGE);
	assert_int_equal(stress_ksm_unmerge_thp_data_check(buf, 8, tmpl, T_PAGE, &off), 1);
	assert_int_equal(off, 0);
	free(buf);
}

/*
 *  test_thp_split_count()
 *	a THP counts as split + merged only if it was THP-mapped before and
 *	at least one subpage is now a KSM page
 */
static void test_thp_split_count(void **state)
{
	const size_t per = 8, chunks = 3;
	uint8_t st[24];
	const uint8_t was_thp[3] = { 1, 1, 0 };
	uint64_t pages;

	(void)state;
	(void)memset(st, KSM_RA_PAGE_ANON, sizeof(st));
	assert_int_equal(stress_ksm_unmerge_thp_split_count(st, was_thp, chunks, per, &pages), 0);
	assert_int_equal(pages, 0);
	st[3] = KSM_RA_PAGE_KSM;		/* chunk 0 */
	st[16] = KSM_RA_PAGE_KSM;		/* chunk 2: was not a THP */
	st[17] = KSM_RA_PAGE_KSM;
	assert_int_equal(stress_ksm_unmerge_thp_split_count(st, was_thp, chunks, per, &pages), 1);
	assert_int_equal(pages, 3);
	st[8] = KSM_RA_PAGE_KZERO;		/* chunk 1: a zero page is not a KSM page of the THP */
	assert_int_equal(stress_ksm_unmerge_thp_split_count(st, was_thp, chunks, per, &pages), 1);
	st[15] = KSM_RA_PAGE_KSM;
	assert_int_equal(stress_ksm_unmerge_thp_split_count(st, was_thp, chunks, per, &pages), 2);
	assert_int_equal(pages, 4);
}

/*
 *  test_thp_kind()
 *	a chunk is one PMD-sized THP only if a compound head is followed by
 *	tails on consecutive pfns; any break makes it mTHPs, no THP flag none
 */
static void test_thp_kind(void **state)
{
	const uint64_t thp = STRESS_BIT_ULL(KPF_BIT_THP);
	uint64_t pm[8], fl[8];
	size_t i;

	(void)state;
	for (i = 0; i < 8; i++) {
		pm[i] = PM_PRESENT | (0x1000 + i);
		fl[i] = thp | STRESS_BIT_ULL(i ? KPF_BIT_COMPOUND_TAIL : KPF_BIT_COMPOUND_HEAD);
	}
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), KSM_THP_KIND_PMD);
	/* two 4-page folios on consecutive pfns: a head in the middle */
	fl[4] = thp | STRESS_BIT_ULL(KPF_BIT_COMPOUND_HEAD);
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), KSM_THP_KIND_MTHP);
	fl[4] = thp | STRESS_BIT_ULL(KPF_BIT_COMPOUND_TAIL);
	/* a pfn out of sequence */
	pm[6] = PM_PRESENT | 0x2000;
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), KSM_THP_KIND_MTHP);
	pm[6] = PM_PRESENT | (0x1000 + 6);
	/* small pages, or not present */
	fl[0] = 0;
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), KSM_THP_KIND_NONE);
	fl[0] = thp | STRESS_BIT_ULL(KPF_BIT_COMPOUND_HEAD);
	pm[0] = 0;
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 8), KSM_THP_KIND_NONE);
}

/*
 *  test_racer_details()
 *	the named counters follow the evidence in the report line and form
 *	a YAML flow mapping body; a racer without them prints nothing
 */
static void test_racer_details(void **state)
{
	stress_ksm_unmerge_racer_stats_t t;
	char buf[192];

	(void)state;
	(void)memset(&t, 0, sizeof(t));
	t.detail[0] = 3;
	t.detail[3] = 7;
	stress_ksm_unmerge_racer_details_str(KSM_RACER_IDX_GUP, &t, buf, sizeof(buf), false);
	assert_string_equal(buf, ",odirect-pins=3,odirect-ksm-pages=0,longterm-pins=0,longterm-ksm-pages=7");
	stress_ksm_unmerge_racer_details_str(KSM_RACER_IDX_GUP, &t, buf, sizeof(buf), true);
	assert_string_equal(buf, "odirect-pins: 3, odirect-ksm-pages: 0, longterm-pins: 0, longterm-ksm-pages: 7");
	stress_ksm_unmerge_racer_details_str(KSM_RACER_IDX_DONTNEED, &t, buf, sizeof(buf), false);
	assert_string_equal(buf, "");
}

/*
 *  test_racer_table()
 *	the four racers are built, with single-token evidence names
 */
static void test_racer_table(void **state)
{
	static const size_t idx[] = {
		KSM_RACER_IDX_VMSPLICE, KSM_RACER_IDX_GUP, KSM_RACER_IDX_UFFD_WP, KSM_RACER_IDX_THP,
	};
	size_t i;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(idx); i++) {
		const stress_ksm_unmerge_racer_t *r = &stress_ksm_unmerge_racers[idx[i]];

		assert_string_equal(r->name, stress_ksm_unmerge_racer_names[idx[i]]);
		assert_non_null(r->start);
		assert_non_null(r->stop);
		assert_null(strpbrk(r->evidence, " =\t"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pages_check, t_setup, t_teardown),
		cmocka_unit_test_setup_teardown(test_pages_check_zero, t_setup, t_teardown),
		cmocka_unit_test(test_gup_broken),
		cmocka_unit_test(test_gup_pinned_shared),
		cmocka_unit_test(test_gup_cow_check),
		cmocka_unit_test(test_uffd_msg_check),
		cmocka_unit_test(test_uffd_wp_check),
		cmocka_unit_test_setup_teardown(test_uffd_hang_report, t_setup, t_teardown),
		cmocka_unit_test_setup_teardown(test_thp_data_check, t_setup, t_teardown),
		cmocka_unit_test(test_thp_split_count),
		cmocka_unit_test(test_thp_kind),
		cmocka_unit_test(test_racer_details),
		cmocka_unit_test(test_racer_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
