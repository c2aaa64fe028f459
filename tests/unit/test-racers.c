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
 * (4d6fc29f3634), pages a GUP pin broke, the gup racer's pins in turn, a
 * read-only pin that kept a KSM page (gup_must_unshare()), a KSM page a pipe
 * held over the unmerge, KSM pages mremap moved without unmerging them
 * (1ff829957316), THP shapes and a THP chunk's KSM pages, the sparse
 * range's layout and walk allowance, the KSM zero pages a fork child is charged against those it
 * maps and the global count no live process holds (issue 20).  (The
 * checks that read fixed kernel paths are in test-knobs.c.)
 */
#include "../../stress-ksm-unmerge.c"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#define T_PAGE		(4096)

/*
 *  t_fork_sh()
 *	what a fork child read: its two counters, pages_scanned before fork() and after its read
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
	sh->fork_t = 1000.0;
	sh->read_t = sh->fork_t + 50.0E-6;
}

/*
 *  test_fork_counters()
 *	4d6fc29f3634: the parent's counts in the child are the bug unless ksmd could have made them
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
	sh.read_t = 0.0;				/* the child never read */
	assert_int_equal(stress_ksm_unmerge_fork_counters_verdict(&sh), 0);
}

/*
 *  test_gup_broken()
 *	pages a write pin broke (KSM or KSM zero before, private after); KSM pages alone are folios
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
 *  test_gup_kind()
 *	every pin in its turn; a pin the racer lacks gives the next turn's
 *	that it has (tmpfs: long-term and process_vm_readv only); none: -1
 */
static void test_gup_kind(void **state)
{
	const unsigned int odirect = STRESS_BIT_U(KSM_GUP_ODIRECT_IN) | STRESS_BIT_U(KSM_GUP_ODIRECT_OUT);
	const unsigned int ring = STRESS_BIT_U(KSM_GUP_LONGTERM), readv = STRESS_BIT_U(KSM_GUP_READV);
	int count[4] = { 0, 0, 0, 0 };
	uint32_t turn;

	(void)state;
	for (turn = 0; turn < 6; turn++)
		count[stress_ksm_unmerge_gup_kind(odirect | ring | readv, turn)]++;
	assert_int_equal(count[KSM_GUP_ODIRECT_IN], 2);
	assert_int_equal(count[KSM_GUP_ODIRECT_OUT], 1);
	assert_int_equal(count[KSM_GUP_LONGTERM], 1);
	assert_int_equal(count[KSM_GUP_READV], 2);
	/* tmpfs: no O_DIRECT; half the pins process_vm_readv, half long-term */
	(void)memset(count, 0, sizeof(count));
	for (turn = 0; turn < 6; turn++)
		count[stress_ksm_unmerge_gup_kind(ring | readv, turn)]++;
	assert_int_equal(count[KSM_GUP_READV], 3);
	assert_int_equal(count[KSM_GUP_LONGTERM], 3);
	/* no process_vm_readv (CONFIG_CROSS_MEMORY_ATTACH off): O_DIRECT writes are the read-only pins */
	assert_int_equal(stress_ksm_unmerge_gup_kind(odirect | ring, 1), KSM_GUP_ODIRECT_OUT);
	assert_int_equal(stress_ksm_unmerge_gup_kind(readv, 4), KSM_GUP_READV);
	assert_int_equal(stress_ksm_unmerge_gup_kind(ring, 5), KSM_GUP_LONGTERM);
	assert_int_equal(stress_ksm_unmerge_gup_kind(0, 3), -1);
}

/*
 *  test_ro_kept()
 *	a read-only pin that kept a KSM page: the same frame, a KSM page and not
 *	exclusive after each of 3 pins, ksmd past at most one full scan (it
 *	cannot have merged the page back after each); anything less, no verdict
 */
static void test_ro_kept(void **state)
{
	const uint64_t ksm = PM_PRESENT | 0x1234, excl = PM_PRESENT | PM_EXCLUSIVE | 0x1234;
	const uint64_t kept[KSM_RO_PINS] = { ksm, ksm, ksm };
	const uint8_t ksm3[KSM_RO_PINS] = { KSM_PAGE_KSM, KSM_PAGE_KSM, KSM_PAGE_KSM };
	const uint8_t unshared[KSM_RO_PINS] = { KSM_PAGE_KSM, KSM_PAGE_PRIVATE, KSM_PAGE_KSM };
	uint64_t e[KSM_RO_PINS];

	(void)state;
	assert_int_equal(stress_ksm_unmerge_ro_kept(ksm, ksm3, kept, KSM_RO_PINS, true, 0), 1);
	assert_int_equal(stress_ksm_unmerge_ro_kept(ksm, ksm3, kept, KSM_RO_PINS, true, 1), 1);
	/* ksmd ended two scans: it may have merged the page back after each pin */
	assert_int_equal(stress_ksm_unmerge_ro_kept(ksm, ksm3, kept, KSM_RO_PINS, true, 2), -1);
	assert_int_equal(stress_ksm_unmerge_ro_kept(ksm, ksm3, kept, KSM_RO_PINS, true, -1), -1);
	/* one pin left a private page: the kernel unshares */
	assert_int_equal(stress_ksm_unmerge_ro_kept(ksm, unshared, kept, KSM_RO_PINS, true, 0), 0);
	/* too few pins, bit 56 not trusted, an exclusive frame, a new frame: no verdict */
	assert_int_equal(stress_ksm_unmerge_ro_kept(ksm, ksm3, kept, 2, true, 0), -1);
	assert_int_equal(stress_ksm_unmerge_ro_kept(ksm, ksm3, kept, KSM_RO_PINS, false, 0), -1);
	(void)memcpy(e, kept, sizeof(e));
	e[2] = excl;
	assert_int_equal(stress_ksm_unmerge_ro_kept(ksm, ksm3, e, KSM_RO_PINS, true, 0), -1);
	e[2] = PM_PRESENT | 0x4321;
	assert_int_equal(stress_ksm_unmerge_ro_kept(ksm, ksm3, e, KSM_RO_PINS, true, 0), -1);
}

/*
 *  test_held_kept()
 *	a KSM page a pipe holds over the unmerge: a new frame after it is a
 *	copy; the same frame, a KSM page or not exclusive, the unmerge left it
 */
static void test_held_kept(void **state)
{
	const uint64_t ksm = PM_PRESENT | 0x1234, copy = PM_PRESENT | PM_EXCLUSIVE | 0x4321;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_held_kept(KSM_PAGE_KSM, ksm, KSM_PAGE_PRIVATE, copy, true), 0);
	assert_int_equal(stress_ksm_unmerge_held_kept(KSM_PAGE_KSM, ksm, KSM_PAGE_KSM, ksm, true), 1);
	/* KPF_KSM not trusted: the frame not exclusive is the second signal */
	assert_int_equal(stress_ksm_unmerge_held_kept(KSM_PAGE_KSM, ksm, KSM_PAGE_PRIVATE, ksm, true), 1);
	assert_int_equal(stress_ksm_unmerge_held_kept(KSM_PAGE_KSM, ksm, KSM_PAGE_PRIVATE, ksm, false), -1);
	/* the same pfn but exclusive and private: one signal, no verdict */
	assert_int_equal(stress_ksm_unmerge_held_kept(KSM_PAGE_KSM, ksm, KSM_PAGE_PRIVATE,
		ksm | PM_EXCLUSIVE, true), -1);
	/* not a KSM page when spliced (a KSM zero page, a private page), no PFNs, not present */
	assert_int_equal(stress_ksm_unmerge_held_kept(KSM_PAGE_KZERO, ksm, KSM_PAGE_KSM, ksm, true), -1);
	assert_int_equal(stress_ksm_unmerge_held_kept(KSM_PAGE_PRIVATE, ksm, KSM_PAGE_KSM, ksm, true), -1);
	assert_int_equal(stress_ksm_unmerge_held_kept(KSM_PAGE_KSM, PM_PRESENT, KSM_PAGE_KSM, ksm, true), -1);
	assert_int_equal(stress_ksm_unmerge_held_kept(KSM_PAGE_KSM, ksm, KSM_PAGE_ABSENT, 0, true), -1);
}

/*
 *  t_move()
 *	a move of 4 pages that were KSM pages on pfn 0x1234 (not exclusive), found on the
 *	same frame after it, still KSM pages, cow_ksm +dcow over the move
 */
static void t_move(stress_ksm_unmerge_move_t *mv, const int64_t dcow)
{
	size_t j;

	(void)memset((void *)mv, 0, sizeof(*mv));
	mv->n = 4;
	for (j = 0; j < mv->n; j++) {
		mv->st0[j] = mv->st1[j] = KSM_PAGE_KSM;
		mv->pm0[j] = mv->pm1[j] = PM_PRESENT | 0x1234;
	}
	mv->cow0 = 1000;
	mv->cow1 = 1000 + dcow;
}

/*
 *  test_move_kept()
 *	mremap unmerges what it moves (1ff829957316): KSM pages kept in their frame are the
 *	kernel's failure only when fewer unshares than kept pages were counted (ksmd may merge
 *	a copy back into the same KSM page right after the move); copies are counted
 */
static void test_move_kept(void **state)
{
	stress_ksm_unmerge_move_t mv;
	size_t j;

	(void)state;
	t_move(&mv, 0);			/* the KSM pages moved as they were */
	assert_int_equal(stress_ksm_unmerge_move_kept(&mv), 4);
	assert_int_equal(mv.at, 0);
	t_move(&mv, 3);			/* 3 unshares cannot explain 4 pages back in the frame */
	assert_int_equal(stress_ksm_unmerge_move_kept(&mv), 4);
	t_move(&mv, 4);			/* 4 unshares: each copy may have been merged back */
	assert_int_equal(stress_ksm_unmerge_move_kept(&mv), 0);
	assert_int_equal(mv.kept, 4);
	t_move(&mv, 0);			/* cow_ksm not read (not trusted): no verdict */
	mv.cow0 = mv.cow1 = -1;
	assert_int_equal(stress_ksm_unmerge_move_kept(&mv), 0);
	t_move(&mv, 4);			/* a correct kernel: new frames, private */
	for (j = 0; j < mv.n; j++) {
		mv.pm1[j] = PM_PRESENT | PM_EXCLUSIVE | (0x2000 + j);
		mv.st1[j] = KSM_PAGE_PRIVATE;
	}
	assert_int_equal(stress_ksm_unmerge_move_kept(&mv), 0);
	assert_int_equal(mv.copied, 4);
	assert_int_equal(mv.kept, 0);
	t_move(&mv, 0);			/* pages not judged: */
	mv.st0[0] = KSM_PAGE_KZERO;	/* a KSM zero page (its unshare counts no cow_ksm) */
	mv.st0[1] = KSM_PAGE_PRIVATE;	/* not a KSM page before the move */
	mv.pm0[2] |= PM_EXCLUSIVE;	/* exclusive when read: a private frame, reused since */
	mv.st1[3] = KSM_PAGE_PRIVATE;	/* not a KSM page after it */
	assert_int_equal(stress_ksm_unmerge_move_kept(&mv), 0);
	assert_int_equal(mv.kept, 0);
	assert_int_equal(mv.ksm, 3);	/* KSM zero pages are counted as moved, not judged */
	t_move(&mv, 0);
	mv.pm1[1] = 0;			/* not present after the move: no verdict on it */
	mv.pm0[2] = PM_SWAP;
	assert_int_equal(stress_ksm_unmerge_move_kept(&mv), 2);
	assert_int_equal(mv.at, 0);
	assert_int_equal(mv.copied, 0);
}

/*
 *  test_thp_kind()
 *	a PMD THP only with a head and tails on consecutive pfns; other THPs mTHPs; else small
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
	assert_int_equal(stress_ksm_unmerge_thp_kind(pm, fl, 1), 2);
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
 *  test_thp_count()
 *	KSM pages of a THP chunk counted on the same-page slots only: its zero-filled slots map
 *	the shared zero page after a split, which the fallback signals would call a KSM page
 */
static void test_thp_count(void **state)
{
	stress_ksm_unmerge_iface_t ifc;
	uint64_t pm[16], fl[16], zero = 99;
	size_t i;

	(void)state;
	(void)memset(&ifc, 0, sizeof(ifc));
	ifc.pfns = ifc.excl = true;		/* 6.10-6.12: KPF_KSM not trusted, no zero page */
	for (i = 0; i < 16; i++) {
		pm[i] = PM_PRESENT | PM_EXCLUSIVE | (0x1000 + i);
		fl[i] = KPF_ANON;
	}
	assert_true(stress_ksm_unmerge_thp_zero_slot(7) && stress_ksm_unmerge_thp_zero_slot(15));
	assert_false(stress_ksm_unmerge_thp_zero_slot(0) || stress_ksm_unmerge_thp_zero_slot(8));
	assert_int_equal(stress_ksm_unmerge_thp_count(&ifc, pm, fl, 16, &zero), 0);
	assert_int_equal(zero, 0);
	pm[7] = pm[15] = PM_PRESENT | 0x42;	/* the zero page, shared: not exclusive */
	fl[7] = fl[15] = KPF_ZERO_PAGE;
	assert_int_equal(stress_ksm_unmerge_thp_count(&ifc, pm, fl, 16, &zero), 0);
	assert_int_equal(zero, 0);		/* not told apart */
	ifc.kpf_zero = true;
	assert_int_equal(stress_ksm_unmerge_thp_count(&ifc, pm, fl, 16, &zero), 0);
	assert_int_equal(zero, 2);
	pm[3] = PM_PRESENT | 0x2000;		/* a same-page slot KSM (not exclusive) counts */
	assert_int_equal(stress_ksm_unmerge_thp_count(&ifc, pm, fl, 16, &zero), 1);
	ifc.kpf_ksm = true;
	fl[3] = KPF_ANON;
	assert_int_equal(stress_ksm_unmerge_thp_count(&ifc, pm, fl, 16, &zero), 0);
	fl[3] = KPF_KSM;
	assert_int_equal(stress_ksm_unmerge_thp_count(&ifc, pm, fl, 16, &zero), 1);
}

/*
 *  test_sparse_layout()
 *	a populated page each 64 MiB, at most 1024 of them, two in a small range, page aligned
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
		assert_true(n >= 2 && n <= 1024);
		assert_true((uint64_t)stride * n <= sizes[i]);
	}
}

/*
 *  test_sparse_allow()
 *	four times the walk predicted at the slower rate, 250 ns a page when none was measured
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
 *  test_zap_judge()
 *	the concurrent-zap check: a count left behind only where the zapped range and all VMAs agree
 */
static void test_zap_judge(void **state)
{
	/* ksm_stat, KSM zero PTEs in the zapped halves, in all VMAs; a constant offset of 128 */
	const int64_t before[3] = { 15000, 14800, 14872 };
	const int64_t ok[3] = { 200, 0, 72 }, lost[3] = { 257, 0, 72 }, gained[3] = { 190, 0, 72 };
	/* ksmd merged 5 elsewhere meanwhile, a zero page gone elsewhere, both */
	const int64_t elsewhere[3] = { 205, 0, 77 }, hole[3] = { 200, 0, 71 }, both[3] = { 205, 0, 76 };

	(void)state;
	assert_int_equal(stress_ksm_unmerge_zap_judge(before, ok), 0);
	/* m18: 57 decrements lost */
	assert_int_equal(stress_ksm_unmerge_zap_judge(before, lost), 57);
	assert_int_equal(stress_ksm_unmerge_zap_judge(before, gained), -10);
	/* one measure alone moved: no verdict */
	assert_int_equal(stress_ksm_unmerge_zap_judge(before, elsewhere), 0);
	assert_int_equal(stress_ksm_unmerge_zap_judge(before, hole), 0);
	/* both moved the same way: the smaller one */
	assert_int_equal(stress_ksm_unmerge_zap_judge(before, both), 1);
}

/*
 *  test_fork_zero_judge()
 *	a child charged beyond what it maps: the excess split by cause; none on correct or unread values
 */
static void test_fork_zero_judge(void **state)
{
	int64_t uncopied, unmerging;

	(void)state;
	/* 6.18: 256 MiB of KSM zero pages unmerged during the fork, the child maps none */
	assert_int_equal(stress_ksm_unmerge_fork_zero_judge(65536, 0, 0, &uncopied, &unmerging), 65536);
	assert_int_equal(uncopied, 0);
	assert_int_equal(unmerging, 65536);
	/* the parent's DONTFORK and WIPEONFORK pages charged to the child */
	assert_int_equal(stress_ksm_unmerge_fork_zero_judge(128, 0, 128, &uncopied, &unmerging), 128);
	assert_int_equal(uncopied, 128);
	assert_int_equal(unmerging, 0);
	/* both: the uncopied pages first, the rest unmerged during the fork */
	assert_int_equal(stress_ksm_unmerge_fork_zero_judge(4224, 50, 128, &uncopied, &unmerging), 4174);
	assert_int_equal(uncopied, 128);
	assert_int_equal(unmerging, 4046);
	/* more uncopied pages than the excess: the excess is theirs */
	assert_int_equal(stress_ksm_unmerge_fork_zero_judge(100, 60, 128, &uncopied, &unmerging), 40);
	assert_int_equal(uncopied, 40);
	assert_int_equal(unmerging, 0);
	/* uncopied unknown: all of it unmerged during the fork */
	assert_int_equal(stress_ksm_unmerge_fork_zero_judge(100, 60, -1, &uncopied, &unmerging), 40);
	assert_int_equal(uncopied, 0);
	assert_int_equal(unmerging, 40);
	/* correct: charged what it maps (or less: pages unmerged after the charge) */
	assert_int_equal(stress_ksm_unmerge_fork_zero_judge(4096, 4096, 128, &uncopied, &unmerging), 0);
	assert_int_equal(uncopied + unmerging, 0);
	assert_int_equal(stress_ksm_unmerge_fork_zero_judge(0, 0, 128, &uncopied, &unmerging), 0);
	assert_int_equal(stress_ksm_unmerge_fork_zero_judge(10, 4096, 0, &uncopied, &unmerging), 0);
	assert_int_equal(uncopied + unmerging, 0);
	/* the child could not read one side: nothing judged */
	assert_int_equal(stress_ksm_unmerge_fork_zero_judge(-1, 0, 128, &uncopied, &unmerging), 0);
	assert_int_equal(stress_ksm_unmerge_fork_zero_judge(65536, -1, 0, &uncopied, &unmerging), 0);
	assert_int_equal(uncopied + unmerging, 0);
}

/*
 *  test_fork_zero_probe_judge()
 *	the known bug's start probe: a child charged for the KSM zero page fork did not copy
 */
static void test_fork_zero_probe_judge(void **state)
{
	(void)state;
	/* 6.10..6.18: charged both, maps the one fork copied */
	assert_int_equal(stress_ksm_unmerge_fork_zero_probe_judge(2, 2, 1, 1), 1);
	assert_int_equal(stress_ksm_unmerge_fork_zero_probe_judge(3, 3, 2, 2), 1);
	/* a fixed kernel: charged what it maps */
	assert_int_equal(stress_ksm_unmerge_fork_zero_probe_judge(2, 1, 1, 1), 0);
	/* undercharged is not this probe's verdict */
	assert_int_equal(stress_ksm_unmerge_fork_zero_probe_judge(2, 0, 1, 1), 0);
	/* no verdict: not both merged before fork(), unreadable, or the count moved meanwhile */
	assert_int_equal(stress_ksm_unmerge_fork_zero_probe_judge(1, 1, 1, 1), -1);
	assert_int_equal(stress_ksm_unmerge_fork_zero_probe_judge(-1, 2, 1, 1), -1);
	assert_int_equal(stress_ksm_unmerge_fork_zero_probe_judge(2, -1, 1, 1), -1);
	assert_int_equal(stress_ksm_unmerge_fork_zero_probe_judge(2, 2, -1, -1), -1);
	assert_int_equal(stress_ksm_unmerge_fork_zero_probe_judge(2, 2, 1, 2), -1);
}

/*
 *  test_leak_judge()
 *	zero pages no live process holds beyond the start: the least reading; 0 when unknown or fewer
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
 *  test_rmap_judge()
 *	rmap_items no live process has: a leak only when the last three readings
 *	(two full scans apart) agree on 64 or more above the start's excess
 */
static void test_rmap_judge(void **state)
{
	const int64_t leaked[] = { 8204, 8204, 8204 };
	const int64_t settled[] = { 8204, 8204, 0 };
	const int64_t moving[] = { 8204, 8200, 8200 };
	const int64_t late[] = { 900, 8200, 8200, 8200 };
	const int64_t small[] = { 63, 63, 63 };
	const int64_t edge[] = { 64, 64, 64 };
	const int64_t unread[] = { -1, -1, -1 };

	(void)state;
	assert_int_equal(stress_ksm_unmerge_rmap_judge(0, leaked, 1), 0);
	assert_int_equal(stress_ksm_unmerge_rmap_judge(0, leaked, 2), 0);
	assert_int_equal(stress_ksm_unmerge_rmap_judge(0, leaked, 3), 8204);
	assert_int_equal(stress_ksm_unmerge_rmap_judge(0, settled, 3), 0);
	assert_int_equal(stress_ksm_unmerge_rmap_judge(0, moving, 3), 0);
	assert_int_equal(stress_ksm_unmerge_rmap_judge(0, late, 3), 0);
	assert_int_equal(stress_ksm_unmerge_rmap_judge(0, late, 4), 8200);
	assert_int_equal(stress_ksm_unmerge_rmap_judge(0, small, 3), 0);
	assert_int_equal(stress_ksm_unmerge_rmap_judge(0, edge, 3), 64);
	assert_int_equal(stress_ksm_unmerge_rmap_judge(0, unread, 3), 0);
	/* an excess the run found at its start is not its leak; 64 more is */
	assert_int_equal(stress_ksm_unmerge_rmap_judge(8204, leaked, 3), 0);
	assert_int_equal(stress_ksm_unmerge_rmap_judge(8141, leaked, 3), 0);
	assert_int_equal(stress_ksm_unmerge_rmap_judge(8140, leaked, 3), 64);
	/* unknown (-1) or below 0 (a vfork child counted twice): from 0 */
	assert_int_equal(stress_ksm_unmerge_rmap_judge(-1, edge, 3), 64);
	assert_int_equal(stress_ksm_unmerge_rmap_judge(-300, edge, 3), 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_counters),
		cmocka_unit_test(test_gup_broken),
		cmocka_unit_test(test_gup_kind),
		cmocka_unit_test(test_ro_kept),
		cmocka_unit_test(test_held_kept),
		cmocka_unit_test(test_move_kept),
		cmocka_unit_test(test_thp_kind),
		cmocka_unit_test(test_thp_count),
		cmocka_unit_test(test_sparse_layout),
		cmocka_unit_test(test_sparse_allow),
		cmocka_unit_test(test_zap_judge),
		cmocka_unit_test(test_fork_zero_judge),
		cmocka_unit_test(test_fork_zero_probe_judge),
		cmocka_unit_test(test_leak_judge),
		cmocka_unit_test(test_rmap_judge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
