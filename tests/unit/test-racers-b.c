/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racers-b.c: cmocka unit tests of the verifiers of the
 * mrelease, fork, mprotect and sparse racers
 * (stress-ksm-unmerge.c): each is fed good input and then a
 * corrupted buffer or a wrong count, and must tell them apart.
 */
#include "../../stress-ksm-unmerge.c"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#define T_ZERO_PFN	(0x1000ULL)
#define T_KSM_FLAG	STRESS_BIT_ULL(KPF_BIT_KSM)

#include "test-env.h"

/*
 *  t_setup()
 *	environment with the "same" pattern and a known zero page pfn
 */
static int t_setup(void **state)
{
	t_env_t *e = t_env_new(KSM_UNMERGE_PATTERN_SAME, T_PAGES);

	if (e)
		e->ctx.zero_pfn = T_ZERO_PFN;
	*state = e;
	return e ? 0 : -1;
}

/*
 *  t_entry()
 *	a present pagemap entry for pfn
 */
static uint64_t t_entry(const uint64_t pfn)
{
	return PM_PRESENT | pfn;
}

/*
 *  test_unshared()
 *	a page counts as unshared only with a new, present, non-KSM pfn
 */
static void test_unshared(void **state)
{
	(void)state;
	assert_int_equal(stress_ksm_unmerge_b_unshared(0x500, t_entry(0x600), 0, T_ZERO_PFN), 1);
	/* same pfn, not KSM: the private copy landed in the frame compaction freed */
	assert_int_equal(stress_ksm_unmerge_b_unshared(0x500, t_entry(0x500), 0, T_ZERO_PFN), 1);
	/* same pfn and still KSM: never unshared */
	assert_int_equal(stress_ksm_unmerge_b_unshared(0x500, t_entry(0x500), T_KSM_FLAG, T_ZERO_PFN), -1);
	/* a new pfn that is still a KSM page */
	assert_int_equal(stress_ksm_unmerge_b_unshared(0x500, t_entry(0x600), T_KSM_FLAG, T_ZERO_PFN), -1);
	/* the shared zero page after the unmerge: discarded and read back, inconclusive */
	assert_int_equal(stress_ksm_unmerge_b_unshared(0x500, t_entry(T_ZERO_PFN), 0, T_ZERO_PFN), 0);
	/* a KSM zero page that is still the zero page */
	assert_int_equal(stress_ksm_unmerge_b_unshared(T_ZERO_PFN, t_entry(T_ZERO_PFN), 0, T_ZERO_PFN), -1);
	/* discarded by someone else: neither */
	assert_int_equal(stress_ksm_unmerge_b_unshared(0x500, 0x600, 0, T_ZERO_PFN), 0);
	assert_true(stress_ksm_unmerge_b_entry_ksm(t_entry(0x700), T_KSM_FLAG, T_ZERO_PFN));
	assert_false(stress_ksm_unmerge_b_entry_ksm(0x700, T_KSM_FLAG, T_ZERO_PFN));
}

/*
 *  test_page_ksm()
 *	the zero page is a KSM zero page only where the pattern puts zeros
 */
static void test_page_ksm(void **state)
{
	t_env_t *e = *state;

	assert_false(stress_ksm_unmerge_b_page_ksm(&e->ctx, 3, t_entry(T_ZERO_PFN), 0));
	assert_true(stress_ksm_unmerge_b_page_ksm(&e->ctx, 3, t_entry(0x800), T_KSM_FLAG));
	assert_false(stress_ksm_unmerge_b_page_ksm(&e->ctx, 3, t_entry(0x800), 0));
	e->ctx.pattern = KSM_UNMERGE_PATTERN_ZERO;
	assert_true(stress_ksm_unmerge_b_page_ksm(&e->ctx, 3, t_entry(T_ZERO_PFN), 0));
	e->ctx.pattern = KSM_UNMERGE_PATTERN_MIXED;	/* page 2 of 4 is the zero kind */
	assert_true(stress_ksm_unmerge_b_page_ksm(&e->ctx, 2, t_entry(T_ZERO_PFN), 0));
	assert_false(stress_ksm_unmerge_b_page_ksm(&e->ctx, 3, t_entry(T_ZERO_PFN), 0));
	e->ctx.pattern = KSM_UNMERGE_PATTERN_SAME;
}

/*
 *  test_mrelease_judge()
 *	0 reaps, ESRCH is legitimate, EINVAL and anything else fail
 */
static void test_mrelease_judge(void **state)
{
	(void)state;
	assert_int_equal(stress_ksm_unmerge_mrelease_judge(0, 0), KSM_MRELEASE_REAPED);
	assert_int_equal(stress_ksm_unmerge_mrelease_judge(-1, ESRCH), KSM_MRELEASE_GONE);
	assert_int_equal(stress_ksm_unmerge_mrelease_judge(-1, EINVAL), KSM_MRELEASE_FAIL);
	assert_int_equal(stress_ksm_unmerge_mrelease_judge(-1, EAGAIN), KSM_MRELEASE_FAIL);
	assert_int_equal(stress_ksm_unmerge_mrelease_judge(-1, EBADF), KSM_MRELEASE_FAIL);
	assert_int_equal(stress_ksm_unmerge_mrelease_judge(1, 0), KSM_MRELEASE_FAIL);
}

/*
 *  test_mrelease_status()
 *	the victim must die by SIGKILL; an exit with an errno is a failure
 */
static void test_mrelease_status(void **state)
{
	(void)state;
	assert_true(stress_ksm_unmerge_mrelease_status_ok(SIGKILL));		/* killed */
	assert_true(stress_ksm_unmerge_mrelease_status_ok(0));			/* exit 0 */
	assert_false(stress_ksm_unmerge_mrelease_status_ok(SIGSEGV));		/* crashed */
	assert_false(stress_ksm_unmerge_mrelease_status_ok(EINVAL << 8));	/* madvise failed */
}

/*
 *  test_fork_written()
 *	the child's own write reads back; a flipped byte is found
 */
static void test_fork_written(void **state)
{
	uint8_t *page = malloc(T_PAGE);

	(void)state;
	assert_non_null(page);
	stress_ksm_unmerge_fork_fill(page, T_PAGE, 5);
	assert_int_equal(stress_ksm_unmerge_fork_written_check(page, T_PAGE, 5), -1);
	/* right data for another page index */
	assert_int_equal(stress_ksm_unmerge_fork_written_check(page, T_PAGE, 6), 0);
	page[1000] ^= 0x40;
	assert_int_equal(stress_ksm_unmerge_fork_written_check(page, T_PAGE, 5), 1000 & ~7);
	free(page);
}

/*
 *  test_fork_parent()
 *	the parent's pages behind the child's COW writes must be intact
 */
static void test_fork_parent(void **state)
{
	t_env_t *e = *state;
	uint64_t pages[3] = { 1, 7, 12 };
	ssize_t off;

	assert_int_equal(stress_ksm_unmerge_fork_parent_check(&e->ctx, pages, 3, &off), -1);
	/* the child's write leaked into the parent's page 7 */
	stress_ksm_unmerge_fork_fill(e->ctx.region + 7 * T_PAGE, T_PAGE, 7);
	assert_int_equal(stress_ksm_unmerge_fork_parent_check(&e->ctx, pages, 3, &off), 1);
	assert_true(off >= 0);
	stress_ksm_unmerge_page_fill(&e->ctx, 7, e->ctx.region + 7 * T_PAGE);
	/* one flipped byte in page 12 */
	e->ctx.region[12 * T_PAGE + 333] ^= 1;
	assert_int_equal(stress_ksm_unmerge_fork_parent_check(&e->ctx, pages, 3, &off), 2);
	assert_int_equal(off, 333);
	e->ctx.region[12 * T_PAGE + 333] ^= 1;
	/* a page index the child could not have written */
	pages[0] = T_PAGES;
	assert_int_equal(stress_ksm_unmerge_fork_parent_check(&e->ctx, pages, 3, &off), 0);
}

/*
 *  test_pattern_bad()
 *	a zero-filled KSM page is explained only by another file's racer
 */
static void test_pattern_bad(void **state)
{
	t_env_t *e = *state;
	uint8_t *page = e->ctx.region + 4 * T_PAGE;

	assert_int_equal(stress_ksm_unmerge_b_pattern_bad(&e->ctx, 4, page), -1);
	(void)memset(page, 0, T_PAGE);
	/* only this file's racers: a zero page is corruption */
	e->ctx.racers_mask = STRESS_BIT_ULL(KSM_RACER_IDX_FORK) | STRESS_BIT_ULL(KSM_RACER_IDX_MPROTECT);
	assert_int_equal(stress_ksm_unmerge_b_pattern_bad(&e->ctx, 4, page), 0);
	/* dontneed discards pages: a whole zero page is legitimate */
	e->ctx.racers_mask |= STRESS_BIT_ULL(KSM_RACER_IDX_DONTNEED);
	assert_int_equal(stress_ksm_unmerge_b_pattern_bad(&e->ctx, 4, page), -1);
	/* but not a partly zeroed page */
	stress_ksm_unmerge_page_fill(&e->ctx, 4, page);
	(void)memset(page + 64, 0, 64);
	assert_int_equal(stress_ksm_unmerge_b_pattern_bad(&e->ctx, 4, page), 64);
}

/*
 *  test_mprotect_tally()
 *	protected KSM pages: unshared ones counted, a still shared one reported
 */
static void test_mprotect_tally(void **state)
{
	const uint64_t before[4] = { 0x100, 0x100, 0x200, 0x300 };
	uint64_t after[4] = { t_entry(0x901), t_entry(0x902), t_entry(0x903), t_entry(0x904) };
	uint64_t flags[4] = { 0, 0, 0, 0 };
	ssize_t bad;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_mprotect_tally(before, after, flags, 4, T_ZERO_PFN, &bad), 4);
	assert_int_equal(bad, -1);
	/* page 2's private copy reuses the KSM page's old frame: still unshared */
	after[2] = t_entry(0x200);
	assert_int_equal(stress_ksm_unmerge_mprotect_tally(before, after, flags, 4, T_ZERO_PFN, &bad), 4);
	assert_int_equal(bad, -1);
	/* page 2 kept its KSM page through the unmerge */
	flags[2] = T_KSM_FLAG;
	assert_int_equal(stress_ksm_unmerge_mprotect_tally(before, after, flags, 4, T_ZERO_PFN, &bad), 3);
	assert_int_equal(bad, 2);
	/* page 1 moved to another KSM page, page 3 to the zero page (inconclusive) */
	after[2] = t_entry(0x903);
	flags[2] = 0;
	flags[1] = T_KSM_FLAG;
	after[3] = t_entry(T_ZERO_PFN);
	assert_int_equal(stress_ksm_unmerge_mprotect_tally(before, after, flags, 4, T_ZERO_PFN, &bad), 2);
	assert_int_equal(bad, 1);
	/* page 0 discarded: not evidence, not a failure */
	after[0] = 0;
	flags[1] = 0;
	after[3] = t_entry(0x904);
	assert_int_equal(stress_ksm_unmerge_mprotect_tally(before, after, flags, 4, T_ZERO_PFN, &bad), 3);
	assert_int_equal(bad, -1);
}

/*
 *  test_sparse_judge()
 *	populated sparse pages: template data and not KSM after the unmerge
 */
static void test_sparse_judge(void **state)
{
	t_env_t *e = *state;
	stress_ksm_unmerge_sparse_t s;
	uint64_t entries[4], flags[4] = { 0, 0, 0, 0 };
	size_t k;
	int why;

	(void)memset(&s, 0, sizeof(s));
	s.stride = 4 * T_PAGE;
	s.populated = 4;
	s.size = s.populated * s.stride;
	s.base = calloc(1, s.size);
	s.entries = entries;
	s.flags = flags;
	assert_non_null(s.base);
	for (k = 0; k < s.populated; k++) {
		(void)memcpy(s.base + k * s.stride, e->ctx.templates, T_PAGE);
		entries[k] = t_entry(0x2000 + k);
	}
	assert_int_equal(stress_ksm_unmerge_sparse_judge(&s, e->ctx.templates, T_PAGE, T_ZERO_PFN, &why), -1);
	/* still a KSM page */
	flags[1] = T_KSM_FLAG;
	assert_int_equal(stress_ksm_unmerge_sparse_judge(&s, e->ctx.templates, T_PAGE, T_ZERO_PFN, &why), 1);
	assert_int_equal(why, 2);
	flags[1] = 0;
	/* still the KSM zero page */
	entries[3] = t_entry(T_ZERO_PFN);
	assert_int_equal(stress_ksm_unmerge_sparse_judge(&s, e->ctx.templates, T_PAGE, T_ZERO_PFN, &why), 3);
	assert_int_equal(why, 2);
	entries[3] = t_entry(0x2003);
	/* data lost in page 2 */
	s.base[2 * s.stride + T_PAGE - 1] ^= 0x80;
	assert_int_equal(stress_ksm_unmerge_sparse_judge(&s, e->ctx.templates, T_PAGE, T_ZERO_PFN, &why), 2);
	assert_int_equal(why, 1);
	free(s.base);
}

/*
 *  test_sparse_bytes()
 *	default sparse size is 16 GiB, page aligned
 */
static void test_sparse_bytes(void **state)
{
	(void)state;
	assert_int_equal(stress_ksm_unmerge_sparse_bytes(T_PAGE), (size_t)(16ULL * GB));
}

/*
 *  test_racer_table()
 *	the table picks up this file's racers with their evidence names
 */
static void test_racer_table(void **state)
{
	(void)state;
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_MRELEASE].evidence, "ksm-victims-killed");
	assert_ptr_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_MRELEASE].start, stress_ksm_unmerge_mrelease_start);
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_FORK].evidence, "ksm-cow-writes");
	assert_ptr_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_FORK].cycle, stress_ksm_unmerge_fork_cycle);
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_MPROTECT].evidence, "ksm-pages-protected");
	assert_ptr_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_MPROTECT].start, stress_ksm_unmerge_mprotect_start);
	assert_string_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_SPARSE].evidence, "sparse-ksm-pages");
	assert_ptr_equal(stress_ksm_unmerge_racers[KSM_RACER_IDX_SPARSE].cycle, stress_ksm_unmerge_sparse_cycle);
}

/*
 *  main()
 *	run the racer verifier tests
 */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unshared),
		cmocka_unit_test_setup_teardown(test_page_ksm, t_setup, t_teardown),
		cmocka_unit_test(test_mrelease_judge),
		cmocka_unit_test(test_mrelease_status),
		cmocka_unit_test(test_fork_written),
		cmocka_unit_test_setup_teardown(test_fork_parent, t_setup, t_teardown),
		cmocka_unit_test_setup_teardown(test_pattern_bad, t_setup, t_teardown),
		cmocka_unit_test(test_mprotect_tally),
		cmocka_unit_test_setup_teardown(test_sparse_judge, t_setup, t_teardown),
		cmocka_unit_test(test_sparse_bytes),
		cmocka_unit_test(test_racer_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
