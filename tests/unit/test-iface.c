/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-iface.c: cmocka unit tests of the interface self-test's
 * decision (stress_ksm_unmerge_iface_judge), the page verdict
 * (stress_ksm_unmerge_page_what) and the region scan that feeds it
 * (stress_ksm_unmerge_scan_chunk, stress_ksm_unmerge_scan), the merge check on
 * its counts (stress_ksm_unmerge_verify_merge), the fork-zero
 * check's count of KSM zero PTEs (stress_ksm_unmerge_fork_zero_count), fed what
 * pagemap, kpageflags and the counters said on three real kernels
 * (tests/data/kernel-signals/, recorded by ksm-signal-dump.c there): 6.18
 * booted with pvm_no_zero_page=1 (a read fault maps a private page),
 * Debian 6.12.117 (KPF_KSM on every anonymous page) and Debian 6.1.192
 * (ksm_stat has only ksm_rmap_items; KSM zero pages stay after unmerge).
 */
#include "../../stress-ksm-unmerge.c"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#define T_DUMP_PAGES	(128)		/* 0-63 identical, 64-127 zero-filled */
#define T_PAGE		(4096)
#define T_BASE		(0x40000ULL)	/* page number of a fake region: its pagemap offset */

/* the dumps (builds without -DT_SIGNALS_DIR run from the top directory) */
#if !defined(T_SIGNALS_DIR)
#define T_SIGNALS_DIR	"tests/data/kernel-signals"
#endif

/* one recorded dump: the self-test's observations and every page it listed */
typedef struct {
	stress_ksm_unmerge_obs_t o;
	uint64_t merged[T_DUMP_PAGES], merged_flags[T_DUMP_PAGES];
	uint64_t unmerged[T_DUMP_PAGES], unmerged_flags[T_DUMP_PAGES];
} t_dump_t;

/*
 *  t_page_line()
 *	one "<step> page <i> pagemap <e> ... kpageflags <f> ..." line into the dump
 */
static void t_page_line(t_dump_t *d, const char *step, const unsigned int i, const uint64_t e, const uint64_t f)
{
	if (!strcmp(step, "read-fault") && i < 2) {
		d->o.rf[i] = e;
		d->o.rf_flags[i] = f;
	} else if (!strcmp(step, "written-fresh") && i == 0) {
		d->o.fresh = e;
		d->o.fresh_flags = f;
	} else if (!strcmp(step, "merged") && i < T_DUMP_PAGES) {
		d->merged[i] = e;
		d->merged_flags[i] = f;
	} else if (!strcmp(step, "unmerged") && i < T_DUMP_PAGES) {
		d->unmerged[i] = e;
		d->unmerged_flags[i] = f;
	}
}

/*
 *  t_other_line()
 *	kernel release, the ksm_stat lines, ksm_merging_pages and cow_ksm
 */
static void t_other_line(t_dump_t *d, const char *line)
{
	int major = 0, minor = 0, patchlevel = 0;
	long long v;

	/* as stress_kernel_release_get() reads uname's release */
	if (sscanf(line, "kernel %d.%d.%d", &major, &minor, &patchlevel) >= 1)
		d->o.kver = stress_kernel_release(major, minor, patchlevel);
	if (!strncmp(line, "before-merge ksm_stat: ", 23)) {
		d->o.stat = true;
		d->o.stat_merging |= !strncmp(line + 23, "ksm_merging_pages ", 18);
		d->o.stat_zero |= !strncmp(line + 23, "ksm_zero_pages ", 15);
	}
	if (!strncmp(line, "before-merge ksm_merging_pages: ", 32))
		d->o.merging_pages = true;
	if (sscanf(line, "before-merge ksm_stat: ksm_zero_pages %lld", &v) == 1)
		d->o.zp_stat[0] = v;
	if (sscanf(line, "merged ksm_stat: ksm_zero_pages %lld", &v) == 1)
		d->o.zp_stat[1] = v;
	if (sscanf(line, "unmerged ksm_stat: ksm_zero_pages %lld", &v) == 1)
		d->o.zp_stat[2] = v;
	if (sscanf(line, "merged global ksm_zero_pages %lld", &v) == 1)
		d->o.zp_global[0] = v;
	if (sscanf(line, "unmerged global ksm_zero_pages %lld", &v) == 1)
		d->o.zp_global[1] = v;
	if (sscanf(line, "merged vmstat: cow_ksm %lld", &v) == 1)
		d->o.cow_before = v;
	if (sscanf(line, "unmerged vmstat: cow_ksm %lld", &v) == 1)
		d->o.cow_after = v;
}

/*
 *  t_dump_load()
 *	a recorded dump as the self-test observes: probe pages merged 0, 1 and 64; cow_ksm around the unmerge
 */
static void t_dump_load(const char *name, t_dump_t *d)
{
	char path[PATH_MAX], line[512];
	unsigned int i;
	FILE *fp;

	(void)memset(d, 0, sizeof(*d));
	d->o.cow_before = d->o.cow_after = -1;
	d->o.zp_global[0] = d->o.zp_global[1] = -1;
	d->o.pagemap = d->o.kpageflags = true;
	(void)snprintf(path, sizeof(path), "%s/%s", T_SIGNALS_DIR, name);
	fp = fopen(path, "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long e, f;
		char step[32];

		if (sscanf(line, "%31s page %u pagemap %llx present %*d exclusive %*d pfn %*x kpageflags %llx",
				step, &i, &e, &f) == 4)
			t_page_line(d, step, i, (uint64_t)e, (uint64_t)f);
		else
			t_other_line(d, line);
	}
	(void)fclose(fp);
	d->o.mg[0] = d->merged[0];
	d->o.mg[1] = d->merged[1];
	d->o.mg_flags[0] = d->merged_flags[0];
	d->o.mg_flags[1] = d->merged_flags[1];
	d->o.mg_after[0] = d->unmerged[0];
	d->o.mg_after[1] = d->unmerged[1];
	d->o.merged = stress_ksm_unmerge_pm_pfn(d->merged[0]) &&
		stress_ksm_unmerge_pm_pfn(d->merged[0]) == stress_ksm_unmerge_pm_pfn(d->merged[1]);
	d->o.zp = d->merged[64];
	d->o.zp_flags = d->merged_flags[64];
	d->o.zp_after = d->unmerged[64];
	d->o.zp_after_flags = d->unmerged_flags[64];
	d->o.zp_valid = stress_ksm_unmerge_pm_pfn(d->o.zp) && !(d->o.zp & PM_EXCLUSIVE);
	for (i = 64; i < 128; i++)	/* the dump's probe: 64 zero-filled pages */
		d->o.zp_pages += d->o.zp_valid && (d->merged[i] & PM_PFN_MASK) == (d->o.zp & PM_PFN_MASK);
	for (i = 0; i < 64; i++)
		d->o.ksm_pages += (d->merged[i] & PM_PFN_MASK) == (d->merged[0] & PM_PFN_MASK);
	assert_true(d->o.kver > 0);
	assert_true(d->o.fresh & PM_PRESENT);
	assert_int_equal(d->o.merged, 1);
	assert_int_equal(d->o.ksm_pages, 64);
}

/*
 *  t_sharers()
 *	how many of the dump's pages map the pfn of page i
 */
static size_t t_sharers(const uint64_t *pm, const size_t i)
{
	size_t j, c = 0;

	for (j = 0; j < T_DUMP_PAGES; j++)
		c += (pm[j] & PM_PFN_MASK) == (pm[i] & PM_PFN_MASK);
	return c;
}

/*
 *  t_count()
 *	pages first..last-1 of a step (of pattern kind kind) that page_what() calls what
 */
static size_t t_count(const stress_ksm_unmerge_iface_t *ifc, const uint64_t *pm, const uint64_t *flags,
	const size_t first, const size_t last, const int kind, const int what)
{
	size_t i, c = 0;

	for (i = first; i < last; i++)
		c += stress_ksm_unmerge_page_what(ifc, pm[i], flags[i], t_sharers(pm, i), 0, kind) == what;
	return c;
}

/*
 *  t_line()
 *	the report line of interface i
 */
static const char *t_line(const stress_ksm_unmerge_iface_t *ifc, const int i)
{
	static char buf[512];

	stress_ksm_unmerge_iface_line(ifc, i, buf, sizeof(buf));
	return buf;
}

/*
 *  t_no_ksm_after_unmerge()
 *	no page of the unmerged step is called a KSM page, under any kind
 */
static void t_no_ksm_after_unmerge(const stress_ksm_unmerge_iface_t *ifc, const t_dump_t *d)
{
	int kind;

	for (kind = -1; kind <= KSM_KIND_UNIQUE; kind++)
		assert_int_equal(t_count(ifc, d->unmerged, d->unmerged_flags, 0, T_DUMP_PAGES, kind, KSM_PAGE_KSM), 0);
}

/*
 *  t_merged_step()
 *	merged: pages 0-63 KSM pages, 64-127 KSM zero pages where the pattern has zeros, holes elsewhere
 */
static void t_merged_step(const stress_ksm_unmerge_iface_t *ifc, const t_dump_t *d)
{
	assert_int_equal(t_count(ifc, d->merged, d->merged_flags, 0, 64, KSM_KIND_SAME, KSM_PAGE_KSM), 64);
	assert_int_equal(t_count(ifc, d->merged, d->merged_flags, 64, 128, KSM_KIND_ZERO, KSM_PAGE_KZERO), 64);
	assert_int_equal(t_count(ifc, d->merged, d->merged_flags, 64, 128, KSM_KIND_SAME, KSM_PAGE_HOLE), 64);
	assert_int_equal(t_count(ifc, d->merged, d->merged_flags, 64, 128, KSM_KIND_UNIQUE, KSM_PAGE_HOLE), 64);
	assert_int_equal(t_count(ifc, d->merged, d->merged_flags, 64, 128, -1, KSM_PAGE_HOLE), 64);
}

/*
 *  test_pvm_no_zero_page()
 *	6.18 with pvm_no_zero_page=1: the zero page by KPF_ZERO_PAGE, a read fault's page is private
 */
static void test_pvm_no_zero_page(void **state)
{
	stress_ksm_unmerge_iface_t ifc;
	t_dump_t d;
	int kind;

	(void)state;
	t_dump_load("host-6.18.txt", &d);
	stress_ksm_unmerge_iface_judge(&d.o, &ifc);
	assert_int_equal(d.o.kver, stress_kernel_release(6, 18, 44));
	assert_true(ifc.tested && ifc.pfns && ifc.kpageflags && ifc.excl && ifc.zero_unshare);
	assert_true(ifc.kpf_zero && ifc.kpf_ksm && ifc.stat_merging && ifc.stat_zero && ifc.cow_ksm);
	assert_true(ifc.zero_pfn == 0x3b32);
	assert_string_equal(t_line(&ifc, KSM_IFACE_ZERO_PAGE), "ksm-unmerge: interface zero-page: unreliable "
		"(a read fault maps a private exclusive page (pfn 0x171535), not the shared zero page: "
		"pvm_no_zero_page=1?); using KPF_ZERO_PAGE per page (zero page pfn 0x3b32) instead");
	assert_string_equal(t_line(&ifc, KSM_IFACE_KPF_KSM), "ksm-unmerge: interface kpageflags-ksm: trusted: "
		"KPF_KSM (clear on a fresh page, set on a merged one)");
	assert_string_equal(t_line(&ifc, KSM_IFACE_PFNS), "ksm-unmerge: interface pfns: trusted: "
		"pagemap PFNs and exclusive bit 56");
	assert_string_equal(t_line(&ifc, KSM_IFACE_KSM_STAT), "ksm-unmerge: interface ksm_stat: trusted: "
		"ksm_stat for merging pages, ksm_stat for KSM zero pages");
	assert_string_equal(t_line(&ifc, KSM_IFACE_COW_KSM), "ksm-unmerge: interface cow_ksm: trusted: "
		"cow_ksm (grew by 64 for 64 unshared KSM pages)");
	for (kind = -1; kind <= KSM_KIND_UNIQUE; kind++) {
		assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.o.rf[0], d.o.rf_flags[0], 1, 0, kind),
			KSM_PAGE_PRIVATE);
		assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.o.rf[1], d.o.rf_flags[1], 1, 0, kind),
			KSM_PAGE_PRIVATE);
	}
	t_merged_step(&ifc, &d);
	t_no_ksm_after_unmerge(&ifc, &d);
	assert_int_equal(t_count(&ifc, d.unmerged, d.unmerged_flags, 0, 128, KSM_KIND_ZERO, KSM_PAGE_PRIVATE), 128);
	/* page 64's private copy sits in the frame the KSM page had */
	assert_true((d.unmerged[64] & PM_PFN_MASK) == (d.merged[0] & PM_PFN_MASK));
}

/*
 *  test_kpf_ksm_bug()
 *	Debian 6.12.117: KPF_KSM lies; sharing, bit 56 and kpagecount find no KSM page after unmerge
 */
static void test_kpf_ksm_bug(void **state)
{
	stress_ksm_unmerge_iface_t ifc;
	size_t i, flagged = 0;
	t_dump_t d;

	(void)state;
	t_dump_load("debian-6.12.117.txt", &d);
	stress_ksm_unmerge_iface_judge(&d.o, &ifc);
	assert_int_equal(d.o.kver, stress_kernel_release(6, 12, 117));
	assert_false(ifc.kpf_ksm);
	assert_string_equal(t_line(&ifc, KSM_IFACE_KPF_KSM), "ksm-unmerge: interface kpageflags-ksm: unreliable "
		"(KPF_KSM set on a fresh anonymous page KSM never saw (kpageflags 0x400205848): the 6.10-6.12 "
		"stable_page_flags() bug); using pfn sharing within the region, the pagemap exclusive bit 56 and "
		"kpagecount (weaker: a KSM page mapped by at most two ptes looks private) instead");
	assert_string_equal(t_line(&ifc, KSM_IFACE_ZERO_PAGE), "ksm-unmerge: interface zero-page: trusted: "
		"KPF_ZERO_PAGE per page (zero page pfn 0x1db38)");
	assert_true(ifc.zero_pfn == 0x1db38 && ifc.kpf_zero && ifc.excl && ifc.zero_unshare);
	assert_true(ifc.trusted[KSM_IFACE_PFNS] && ifc.trusted[KSM_IFACE_KSM_STAT] && ifc.trusted[KSM_IFACE_COW_KSM]);
	for (i = 0; i < T_DUMP_PAGES; i++)
		flagged += !!(d.unmerged_flags[i] & KPF_KSM);
	assert_int_equal(flagged, 128);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.o.fresh, d.o.fresh_flags, 1, 0, KSM_KIND_SAME),
		KSM_PAGE_PRIVATE);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.o.rf[0], d.o.rf_flags[0], 2, 0, KSM_KIND_SAME),
		KSM_PAGE_HOLE);
	t_merged_step(&ifc, &d);
	t_no_ksm_after_unmerge(&ifc, &d);
	/* a KSM page alone in the region, not exclusive: a KSM page only if more than two ptes map it */
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.merged[0], d.merged_flags[0], 1, 64, 0), KSM_PAGE_KSM);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.merged[0], d.merged_flags[0], 1, 3, 0), KSM_PAGE_KSM);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.merged[0], d.merged_flags[0], 1, 0, 0), KSM_PAGE_KSM);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.merged[0], d.merged_flags[0], 1, 2, 0), KSM_PAGE_PRIVATE);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.merged[0], d.merged_flags[0], 1, 1, 0), KSM_PAGE_PRIVATE);
	/* an exclusive page is private whatever KPF_KSM and kpagecount say, unless its pfn is shared */
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.unmerged[3], d.unmerged_flags[3], 1, 64, 0),
		KSM_PAGE_PRIVATE);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.unmerged[3], d.unmerged_flags[3], 2, 0, 0), KSM_PAGE_KSM);
	/* without the exclusive bit a page alone is private */
	ifc.excl = false;
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.merged[0], d.merged_flags[0], 1, 64, 0), KSM_PAGE_PRIVATE);
}

/*
 *  test_ksm_stat_61()
 *	Debian 6.1.192: ksm_stat without its two fields; KSM zero pages kept after unmerge by design
 */
static void test_ksm_stat_61(void **state)
{
	stress_ksm_unmerge_iface_t ifc;
	t_dump_t d;

	(void)state;
	t_dump_load("debian-6.1.192.txt", &d);
	stress_ksm_unmerge_iface_judge(&d.o, &ifc);
	assert_int_equal(d.o.kver, stress_kernel_release(6, 1, 0));
	assert_false(ifc.stat_merging || ifc.stat_zero || ifc.zero_unshare);
	assert_true(ifc.merging_pages);
	assert_string_equal(t_line(&ifc, KSM_IFACE_KSM_STAT), "ksm-unmerge: interface ksm_stat: unreliable "
		"(ksm_stat lacks ksm_merging_pages and ksm_zero_pages); using /proc/self/ksm_merging_pages for "
		"merging pages, pagemap for KSM zero pages instead");
	assert_true(ifc.trusted[KSM_IFACE_ZERO_PAGE] && ifc.trusted[KSM_IFACE_KPF_KSM] &&
		ifc.trusted[KSM_IFACE_COW_KSM] && ifc.trusted[KSM_IFACE_PFNS]);
	assert_true(ifc.zero_pfn == 0x1ef10 && ifc.kpf_zero && ifc.kpf_ksm);
	t_merged_step(&ifc, &d);
	t_no_ksm_after_unmerge(&ifc, &d);
	assert_int_equal(t_count(&ifc, d.unmerged, d.unmerged_flags, 0, 64, KSM_KIND_SAME, KSM_PAGE_PRIVATE), 64);
	assert_int_equal(t_count(&ifc, d.unmerged, d.unmerged_flags, 64, 128, KSM_KIND_ZERO, KSM_PAGE_KZERO), 64);
}

/*
 *  t_judge_ok()
 *	a recorded kernel: the probe unmerge left nothing, no kernel failure, no disagreement
 */
static void t_judge_ok(const char *name)
{
	stress_ksm_unmerge_iface_t ifc;
	t_dump_t d;

	t_dump_load(name, &d);
	stress_ksm_unmerge_iface_judge(&d.o, &ifc);
	assert_false(ifc.zero_kept);
	assert_string_equal(ifc.broken, "");
	assert_string_equal(ifc.disagree, "");
}

/*
 *  test_kernel_broken()
 *	interface unreliable or kernel broken: a probe unmerge that left its
 *	KSM zero page, seen by two signals, is a kernel failure
 *	(issue 30's M2: KSM zero pages no longer unshared); one signal alone is
 *	said, and a counter that disagrees with the pages is the interface's
 */
static void test_kernel_broken(void **state)
{
	stress_ksm_unmerge_iface_t ifc;
	t_dump_t d, d2;

	(void)state;
	t_judge_ok("host-6.18.txt");
	t_judge_ok("debian-6.12.117.txt");
	t_judge_ok("debian-6.1.192.txt");	/* KSM zero pages stay mapped before 6.4, by design */

	/* M2 on 6.18: the zero page still mapped and ksm_stat still charging it */
	t_dump_load("host-6.18.txt", &d);
	d2 = d;
	d2.o.zp_after = d.merged[64];
	d2.o.zp_after_flags = d.merged_flags[64];
	d2.o.zp_stat[2] = d.o.zp_stat[1];
	d2.o.zp_global[1] = d2.o.zp_global[0];
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_true(ifc.zero_kept);
	assert_string_equal(ifc.broken, "the self-test's probe KSM zero page is still mapped (pfn 0x3b32) and "
		"still charged (ksm_stat's ksm_zero_pages +64 after its unmerge) after MADV_UNMERGEABLE: the "
		"kernel no longer unshares KSM zero pages (6.4+)");
	/* and cow_ksm not counting the copies too: one fail line says both */
	d2.o.cow_after = d2.o.cow_before;
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_non_null(strstr(ifc.broken, "(6.4+); the self-test's probe unmerge copied 2 KSM pages"));
	d2.o.cow_after = d.o.cow_after;
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	/* the counter agrees with the pages: trusted, so fork-zero still runs */
	assert_true(ifc.stat_zero && ifc.trusted[KSM_IFACE_KSM_STAT]);
	assert_true(ifc.trusted[KSM_IFACE_COW_KSM]);

	/* the same on 6.12 (the zero page found by a read fault), and by the global count without ksm_stat's */
	t_dump_load("debian-6.12.117.txt", &d);
	d2 = d;
	d2.o.zp_after = d.merged[64];
	d2.o.zp_after_flags = d.merged_flags[64];
	d2.o.stat_zero = false;
	d2.o.zp_global[1] = d.o.zp_global[0];
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_true(ifc.zero_kept);
	assert_non_null(strstr(ifc.broken, "(pfn 0x1db38) and still charged (the global ksm_zero_pages +0 after"));

	/* one signal: mapped, but both counters dropped: said, no failure */
	d2 = d;
	d2.o.zp_after = d.merged[64];
	d2.o.zp_after_flags = d.merged_flags[64];
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_false(ifc.zero_kept);
	assert_string_equal(ifc.broken, "");
	assert_string_equal(ifc.disagree, "after the self-test's probe unmerge its zero-filled page still maps "
		"the zero page but no counter says it is still charged; not counted as a kernel failure");

	/* the other signal: charged, but the page is private: the counter is the unreliable one */
	d2 = d;
	d2.o.zp_stat[2] = d.o.zp_stat[1];
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_false(ifc.zero_kept || ifc.stat_zero);
	assert_string_equal(ifc.broken, "");
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_KSM_STAT), "unreliable (ksm_stat's ksm_zero_pages moved +64 "
		"for 64 probe KSM zero page(s), +64 after their unmerge)"));

	/* 6.1: KSM zero pages stay mapped and charged after the unmerge by design */
	t_dump_load("debian-6.1.192.txt", &d);
	assert_true(stress_ksm_unmerge_pm_pfn(d.o.zp_after) == stress_ksm_unmerge_pm_pfn(d.o.zp));
	stress_ksm_unmerge_iface_judge(&d.o, &ifc);
	assert_false(ifc.zero_kept);

	/* without PFNs nothing is judged */
	t_dump_load("host-6.18.txt", &d);
	d2 = d;
	d2.o.zp_after = d.merged[64];
	d2.o.zp_stat[2] = d.o.zp_stat[1];
	d2.o.fresh &= ~PM_PFN_MASK;
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_false(ifc.zero_kept);
	assert_string_equal(ifc.broken, "");
}

/*
 *  test_iface_broken()
 *	what no recorded kernel shows: no pagemap, PFNs or kpageflags, lying flags, cow_ksm, ksm_stat
 */
static void test_iface_broken(void **state)
{
	stress_ksm_unmerge_iface_t ifc;
	t_dump_t d, d2;

	(void)state;
	t_dump_load("host-6.18.txt", &d);
	d2 = d;
	d2.o.cow_before = d2.o.cow_after;
	d2.o.mg_flags[0] &= ~KPF_KSM;
	d2.o.stat = d2.o.stat_merging = d2.o.stat_zero = false;
	d2.o.merging_pages = false;
	d2.o.kver = stress_kernel_release(6, 3, 0);
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_false(ifc.kpf_ksm || ifc.zero_unshare || ifc.trusted[KSM_IFACE_KSM_STAT]);
	/* cow_ksm still: the probe's pages copied (new frames of their own), not counted: the kernel's failure */
	assert_true(ifc.cow_ksm && ifc.trusted[KSM_IFACE_COW_KSM]);
	assert_string_equal(ifc.broken, "the self-test's probe unmerge copied 2 KSM pages (pfn 0x171512 mapped twice; "
		"now 0x16c4f4 and 0x16c3f9, present) but /proc/vmstat cow_ksm grew by 0: the kernel no longer counts "
		"the copy of a KSM page (do_wp_page, 6.1+)");
	assert_string_equal(t_line(&ifc, KSM_IFACE_COW_KSM), "ksm-unmerge: interface cow_ksm: trusted: cow_ksm (grew "
		"by 0 for 2 copied KSM pages: a kernel failure)");
	/* one copied, one still on the KSM frame (or swapped out): the one copy is owed */
	d2.o.mg_after[1] = d.merged[1];
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_non_null(strstr(ifc.broken, "probe unmerge copied 1 KSM pages"));
	d2.o.cow_after = d2.o.cow_before + 1;
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_string_equal(ifc.broken, "");
	assert_true(ifc.cow_ksm && ifc.trusted[KSM_IFACE_COW_KSM]);
	/* nothing provably copied, the counter did not grow: swapped out (no swap-in yet) or still shared */
	d2.o.cow_after = d2.o.cow_before;
	d2.o.mg_after[0] = PM_SWAP | 0x1234;
	d2.o.mg_after[1] = PM_SWAP | 0x1235;
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_string_equal(ifc.broken, "");
	assert_false(ifc.cow_ksm || ifc.trusted[KSM_IFACE_COW_KSM]);
	assert_string_equal(t_line(&ifc, KSM_IFACE_COW_KSM), "ksm-unmerge: interface cow_ksm: unreliable (cow_ksm "
		"grew less than the probe's KSM pages, which its unmerge did not provably copy (swapped out or still "
		"shared)); using pagemap checks only (the cow_ksm check is off): 0 < 64 instead");
	d2.o.mg_after[0] = d2.o.mg_after[1] = d.merged[0];
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_false(ifc.cow_ksm || ifc.broken[0]);
	/* both copies on one frame: not two copies */
	d2.o.mg_after[0] = d2.o.mg_after[1] = d.unmerged[0];
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_false(ifc.cow_ksm || ifc.broken[0]);
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_KPF_KSM), "unreliable (a page the probe merged (pfn "
		"0x171512, shared) lacks KPF_KSM); using pfn sharing within the region, the pagemap exclusive bit 56"));
	assert_string_equal(t_line(&ifc, KSM_IFACE_KSM_STAT), "ksm-unmerge: interface ksm_stat: unreliable "
		"(/proc/self/ksm_stat missing (before 6.1)); using pagemap for merging pages, pagemap for KSM zero "
		"pages instead");

	/* ksm_stat without ksm_zero_pages; no cow_ksm; the probe merge did not complete */
	d2 = d;
	d2.o.stat_zero = false;
	d2.o.cow_before = -1;
	d2.o.merged = 0;
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_true(ifc.stat_merging && !ifc.stat_zero && !ifc.cow_ksm && ifc.kpf_ksm);
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_KSM_STAT), "(ksm_stat lacks ksm_zero_pages); using ksm_stat "
		"for merging pages, pagemap for KSM zero pages instead"));
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_COW_KSM), "unreliable (no cow_ksm in /proc/vmstat)"));
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_KPF_KSM), "trusted: KPF_KSM (clear on a fresh page; the "
		"probe merge did not complete)"));

	/* ksm_stat's ksm_zero_pages must count the probe's KSM zero pages and drop with their unmerge */
	assert_true(d.o.zp_pages == 64 && d.o.zp_stat[1] == 64 && d.o.zp_stat[2] == 0);
	d2 = d;
	d2.o.zp_stat[1] = 63;
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_true(ifc.stat_merging && !ifc.stat_zero && !ifc.trusted[KSM_IFACE_KSM_STAT]);
	assert_string_equal(t_line(&ifc, KSM_IFACE_KSM_STAT), "ksm-unmerge: interface ksm_stat: unreliable "
		"(ksm_stat's ksm_zero_pages moved +63 for 64 probe KSM zero page(s), +0 after their unmerge); using "
		"ksm_stat for merging pages, pagemap for KSM zero pages instead");
	d2 = d;
	d2.o.zp_stat[2] = 64;		/* kept after the unmerge */
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_false(ifc.stat_zero);
	d2 = d;
	d2.o.zp_pages = 0;		/* no KSM zero page merged: the counter is untested */
	d2.o.zp_stat[1] = 0;
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_false(ifc.stat_zero);

	/* no zero page seen (pvm, no KSM zero page): KPF_ZERO_PAGE, never caught lying, per page */
	d2 = d;
	d2.o.zp_valid = false;
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_true(ifc.kpf_zero && !ifc.zero_pfn && !ifc.trusted[KSM_IFACE_ZERO_PAGE]);
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_ZERO_PAGE), "using KPF_ZERO_PAGE per page (zero page pfn 0)"));
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.merged[64], d.merged_flags[64], 64, 0, KSM_KIND_ZERO),
		KSM_PAGE_KZERO);
	/* ... and without kpageflags either: no zero-page verdicts, a shared zero page looks a KSM page */
	d2.o.kpageflags = false;
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_false(ifc.kpf_zero || ifc.zero_pfn || ifc.trusted[KSM_IFACE_ZERO_PAGE]);
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_ZERO_PAGE), "(a read fault maps a private exclusive page "
		"(pfn 0x171535), not the shared zero page: pvm_no_zero_page=1?); using no zero-page verdicts (KSM "
		"zero pages are not told apart) instead"));
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.merged[64], 0, 64, 0, KSM_KIND_ZERO), KSM_PAGE_KSM);

	/* KPF_ZERO_PAGE on a private page: the probed zero page's pfn only */
	t_dump_load("debian-6.12.117.txt", &d2);
	d2.o.fresh_flags |= KPF_ZERO_PAGE;
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_true(!ifc.kpf_zero && ifc.zero_pfn == 0x1db38);
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_ZERO_PAGE), "unreliable (KPF_ZERO_PAGE is not set on the "
		"shared zero page or is set on a private page); using the probed shared zero page pfn (zero page "
		"pfn 0x1db38) instead"));
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d2.o.fresh, KPF_ZERO_PAGE, 1, 0, KSM_KIND_ZERO),
		KSM_PAGE_PRIVATE);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d2.merged[100], 0, 64, 0, KSM_KIND_ZERO), KSM_PAGE_KZERO);

	/* two read faults on different frames, neither exclusive: no shared zero page seen */
	t_dump_load("debian-6.12.117.txt", &d2);
	d2.o.rf[1] = (d2.o.fresh & ~PM_EXCLUSIVE);
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_false(ifc.trusted[KSM_IFACE_ZERO_PAGE] || ifc.kpf_zero);	/* KPF_ZERO_PAGE on an unshared page */
	assert_true(ifc.zero_pfn == 0x1db38);				/* the KSM zero page's */
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_ZERO_PAGE), "(a read fault maps a private exclusive page "
		"(pfn 0x1db38), not the shared zero page: pvm_no_zero_page=1?)"));

	/* /proc/kpageflags unreadable (its words read as 0) */
	d2.o.rf[1] = d2.o.rf[0];
	d2.o.fresh_flags |= KPF_ZERO_PAGE;
	d2.o.kpageflags = false;
	d2.o.rf_flags[0] = d2.o.rf_flags[1] = d2.o.fresh_flags = d2.o.mg_flags[0] = d2.o.mg_flags[1] = d2.o.zp_flags = 0;
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_true(!ifc.kpageflags && !ifc.kpf_zero && !ifc.kpf_ksm && ifc.zero_pfn == 0x1db38);
	assert_true(ifc.trusted[KSM_IFACE_ZERO_PAGE]);
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_KPF_KSM), "unreliable (/proc/kpageflags not readable)"));

	/* no CAP_SYS_ADMIN: pagemap shows no PFNs; no per-page verdicts */
	d2 = d;
	d2.o.fresh &= ~PM_PFN_MASK;
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_false(ifc.pfns || ifc.kpageflags || ifc.excl || ifc.kpf_ksm || ifc.kpf_zero || ifc.zero_pfn);
	assert_string_equal(t_line(&ifc, KSM_IFACE_PFNS), "ksm-unmerge: interface pfns: unreliable (pagemap hides "
		"PFNs (no CAP_SYS_ADMIN)); using per-process counters and data checks (no per-page verdicts) instead");
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_KPF_KSM), "unreliable (PFNs hidden)"));
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.merged[0], d.merged_flags[0], 64, 0, 0), KSM_PAGE_PRIVATE);
	d2.o.pagemap = false;
	stress_ksm_unmerge_iface_judge(&d2.o, &ifc);
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_PFNS), "unreliable (/proc/self/pagemap not readable)"));
}

/*
 *  test_page_what()
 *	absent, swapped, hidden pfns; zero page by pfn or flag, KSM zero page by kind; trusted KPF_KSM
 */
static void test_page_what(void **state)
{
	stress_ksm_unmerge_iface_t ifc = { .tested = true, .pfns = true, .kpageflags = true, .kpf_zero = true,
		.kpf_ksm = true, .excl = true, .zero_pfn = 0x777 };
	const uint64_t p = PM_PRESENT;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, 0, 0, 0, 0, 0), KSM_PAGE_ABSENT);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, PM_SWAP | 0x1234, 0, 0, 0, 0), KSM_PAGE_SWAPPED);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, p, KPF_KSM, 2, 0, 0), KSM_PAGE_PRIVATE);	/* pfn hidden */
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, p | 0x777, 0, 1, 0, KSM_KIND_ZERO), KSM_PAGE_KZERO);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, p | 0x777, 0, 1, 0, KSM_KIND_FEW), KSM_PAGE_HOLE);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, p | 0x888, KPF_ZERO_PAGE, 1, 0, KSM_KIND_ZERO),
		KSM_PAGE_KZERO);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, p | 0x888, KPF_ZERO_PAGE, 1, 0, -1), KSM_PAGE_HOLE);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, p | 0x999, KPF_KSM, 1, 0, 0), KSM_PAGE_KSM);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, p | 0x999, 0, 64, 0, 0), KSM_PAGE_PRIVATE);
	ifc.kpf_zero = false;	/* KPF_ZERO_PAGE lies: the pfn alone */
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, p | 0x888, KPF_ZERO_PAGE, 1, 0, KSM_KIND_ZERO),
		KSM_PAGE_PRIVATE);
	ifc.pfns = false;
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, p | 0x777, 0, 1, 0, KSM_KIND_ZERO), KSM_PAGE_PRIVATE);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, PM_SWAP, 0, 0, 0, 0), KSM_PAGE_SWAPPED);
}

/* what scan_chunk handed one page to its consumer */
typedef struct {
	int what, calls;
	size_t sharers;
	uint64_t flags;
} t_seen_t;

/* a hand-made worker context for the scan */
typedef struct {
	stress_args_t args;
	stress_ksm_unmerge_instance_t st;
	stress_ksm_unmerge_iface_t ifc;
	stress_ksm_unmerge_ctx_t ctx;
	t_seen_t seen[2 * KSM_CHUNK];
	size_t base;			/* page index of seen[0] */
} t_scan_t;

/*
 *  t_scan_new()
 *	a hand-made context: scratch, no kernel files, a 6.12-like interface (zero page pfn 0x777)
 */
static t_scan_t *t_scan_new(const int pattern)
{
	t_scan_t *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	t->args.name = "ksm-unmerge";
	t->args.page_size = T_PAGE;
	t->args.bogo.max_ops = NEVER_END_OPS;
	t->ifc = (stress_ksm_unmerge_iface_t){ .tested = true, .pfns = true, .kpageflags = true,
		.kpf_zero = true, .excl = true, .zero_unshare = true, .zero_pfn = 0x777 };
	t->ctx.args = &t->args;
	t->ctx.st = &t->st;
	t->ctx.iface = &t->ifc;
	t->ctx.page_size = T_PAGE;
	t->ctx.pattern = pattern;
	t->ctx.have_pfns = true;
	t->ctx.pagemap_fd = t->ctx.kpageflags_fd = t->ctx.kpagecount_fd = -1;
	t->ctx.pm = calloc(KSM_CHUNK, sizeof(uint64_t));
	t->ctx.keys = calloc(KSM_CHUNK, sizeof(uint64_t));
	assert_non_null(t->ctx.pm);
	assert_non_null(t->ctx.keys);
	return t;
}

/*
 *  t_scan_free()
 *	release a t_scan_new()
 */
static void t_scan_free(t_scan_t *t)
{
	if (t->ctx.kpageflags_fd >= 0)
		(void)close(t->ctx.kpageflags_fd);
	if (t->ctx.pagemap_fd >= 0)
		(void)close(t->ctx.pagemap_fd);
	free(t->ctx.pm);
	free(t->ctx.keys);
	free(t);
}

/*
 *  t_seen()
 *	scan consumer: record what each page was judged
 */
static void t_seen(stress_ksm_unmerge_ctx_t *ctx, void *arg, const size_t i, const uint64_t e, const int what,
	const size_t sharers, const uint64_t flags)
{
	t_scan_t *t = (t_scan_t *)arg;

	(void)ctx;
	(void)e;
	assert_true(i >= t->base && i - t->base < SIZEOF_ARRAY(t->seen));
	t->seen[i - t->base].what = what;
	t->seen[i - t->base].sharers = sharers;
	t->seen[i - t->base].flags = flags;
	t->seen[i - t->base].calls++;
}

/*
 *  t_chunk()
 *	scan_chunk() of the n words in ctx.pm as pages i0..; every page judged exactly once
 */
static void t_chunk(t_scan_t *t, const size_t i0, const size_t n, const bool sample)
{
	size_t distinct = 0, j;

	(void)memset(t->seen, 0, sizeof(t->seen));
	t->base = i0;
	stress_ksm_unmerge_scan_chunk(&t->ctx, i0, n, sample, &distinct, t_seen, t);
	for (j = 0; j < n; j++)
		assert_int_equal(t->seen[j].calls, 1);
}

/*
 *  t_kpf_file()
 *	a sparse fake /proc/kpageflags: flags[k] at pfns[k]
 */
static int t_kpf_file(const uint64_t *pfns, const uint64_t *flags, const size_t n)
{
	const int fd = shim_memfd_create("t-kpageflags", 0);
	size_t k;

	assert_true(fd >= 0);
	for (k = 0; k < n; k++)
		assert_int_equal(pwrite(fd, &flags[k], sizeof(flags[k]), (off_t)(pfns[k] * sizeof(uint64_t))),
			(ssize_t)sizeof(uint64_t));
	return fd;
}

/*
 *  test_scan_chunk()
 *	grouping by pfn wherever pages sit: sharers, the zero page, lone non-exclusive pages, i0
 */
static void test_scan_chunk(void **state)
{
	t_scan_t *t = t_scan_new(KSM_PATTERN_MIXED);
	const uint64_t p = PM_PRESENT, x = PM_PRESENT | PM_EXCLUSIVE;
	const uint64_t pm[] = {
		p | 0xa0, x | 0xb0, p | 0xa0, 0, p | 0x777, PM_SWAP | 0x5, p | 0xa0, p | 0x777,	/* 0-7 */
		p | 0xc0, x | 0xd0, x | 0xd0, x | (1ULL << 50), p | 0x777, x | 0xe0,		/* 8-13 */
	};
	size_t j;

	(void)state;
	(void)memcpy(t->ctx.pm, pm, sizeof(pm));
	t_chunk(t, 2, SIZEOF_ARRAY(pm), false);
	for (j = 0; j < SIZEOF_ARRAY(pm); j++)
		assert_true(t->seen[j].flags == 0);	/* no kpageflags file */
	assert_int_equal(t->seen[0].what, KSM_PAGE_KSM);
	assert_int_equal(t->seen[0].sharers, 3);
	assert_int_equal(t->seen[2].sharers, 3);
	assert_int_equal(t->seen[6].what, KSM_PAGE_KSM);
	assert_int_equal(t->seen[1].what, KSM_PAGE_PRIVATE);
	assert_int_equal(t->seen[1].sharers, 1);
	assert_int_equal(t->seen[3].what, KSM_PAGE_ABSENT);
	assert_int_equal(t->seen[3].sharers, 0);
	assert_int_equal(t->seen[5].what, KSM_PAGE_SWAPPED);
	/* the zero page: pages 6, 9 and 14 (i0 = 2) have zero, few and zero kinds */
	assert_int_equal(t->seen[4].what, KSM_PAGE_KZERO);
	assert_int_equal(t->seen[4].sharers, 3);
	assert_int_equal(t->seen[7].what, KSM_PAGE_HOLE);
	assert_int_equal(t->seen[12].what, KSM_PAGE_KZERO);
	assert_int_equal(t->seen[8].what, KSM_PAGE_KSM);	/* alone, not exclusive, kpagecount unknown */
	assert_int_equal(t->seen[8].sharers, 1);
	assert_int_equal(t->seen[9].what, KSM_PAGE_KSM);	/* exclusive, but two ptes on one pfn */
	assert_int_equal(t->seen[10].sharers, 2);
	assert_int_equal(t->seen[11].what, KSM_PAGE_PRIVATE);	/* pfn beyond 2^50: judged alone */
	assert_int_equal(t->seen[11].sharers, 0);
	assert_int_equal(t->seen[13].what, KSM_PAGE_PRIVATE);

	/* a whole chunk on one pfn (indices up to 4095 kept beside the pfn) */
	for (j = 0; j < KSM_CHUNK; j++)
		t->ctx.pm[j] = p | 0xfffff;
	t_chunk(t, KSM_CHUNK, KSM_CHUNK, false);
	for (j = 0; j < KSM_CHUNK; j++) {
		assert_int_equal(t->seen[j].what, KSM_PAGE_KSM);
		assert_int_equal(t->seen[j].sharers, KSM_CHUNK);
	}
	t_scan_free(t);
}

/*
 *  test_scan_sample()
 *	kpageflags read per shared pfn and for the zero page; singles all, or one in eight sampled
 */
static void test_scan_sample(void **state)
{
	t_scan_t *t = t_scan_new(KSM_PATTERN_SAME);
	uint64_t pfns[18], flags[18];
	size_t j, read = 0;

	(void)state;
	t->ifc.kpf_ksm = true;
	for (j = 0; j < 16; j++) {
		pfns[j] = 0x100 + j;	/* 16 single private pages */
		flags[j] = KPF_ANON;
		t->ctx.pm[j] = PM_PRESENT | PM_EXCLUSIVE | pfns[j];
	}
	pfns[16] = 0x200;		/* a KSM page under pages 16-19 */
	flags[16] = KPF_KSM | KPF_ANON;
	pfns[17] = 0x777;		/* the zero page under page 20 */
	flags[17] = KPF_ZERO_PAGE;
	for (j = 16; j < 20; j++)
		t->ctx.pm[j] = PM_PRESENT | 0x200;
	t->ctx.pm[20] = PM_PRESENT | 0x777;
	t->ctx.kpageflags_fd = t_kpf_file(pfns, flags, 18);
	t_chunk(t, 0, 21, false);
	for (j = 0; j < 16; j++) {
		assert_true(t->seen[j].flags == KPF_ANON);
		assert_int_equal(t->seen[j].what, KSM_PAGE_PRIVATE);
	}
	for (j = 16; j < 20; j++) {
		assert_true(t->seen[j].flags == (KPF_KSM | KPF_ANON));
		assert_int_equal(t->seen[j].what, KSM_PAGE_KSM);
	}
	assert_true(t->seen[20].flags == KPF_ZERO_PAGE);
	assert_int_equal(t->seen[20].what, KSM_PAGE_HOLE);

	t->ctx.cycle = 5;
	t_chunk(t, 0, 21, true);
	for (j = 0; j < 16; j++)
		read += (t->seen[j].flags != 0);
	assert_int_equal(read, 2);
	for (j = 16; j < 20; j++)
		assert_int_equal(t->seen[j].what, KSM_PAGE_KSM);
	assert_true(t->seen[20].flags == KPF_ZERO_PAGE);
	/* KPF_KSM trusted: a single KSM page is one by its flags */
	t->ctx.pm[0] = PM_PRESENT | 0x200;
	t_chunk(t, 0, 21, false);
	assert_int_equal(t->seen[0].sharers, 5);
	t->ctx.pm[0] = PM_PRESENT | PM_EXCLUSIVE | 0x200;
	t->ctx.pm[16] = t->ctx.pm[17] = t->ctx.pm[18] = t->ctx.pm[19] = PM_PRESENT | 0x100;
	t_chunk(t, 0, 21, false);
	assert_int_equal(t->seen[0].what, KSM_PAGE_KSM);
	assert_int_equal(t->seen[0].sharers, 1);
	assert_int_equal(t->seen[16].what, KSM_PAGE_PRIVATE);	/* shared, but KPF_KSM clear */
	assert_int_equal(t->seen[16].sharers, 4);
	t_scan_free(t);
}

/*
 *  t_dump_scan()
 *	KSM pages and KSM zero pages scan_chunk() finds in a recorded step (pattern zero)
 */
static void t_dump_scan(const char *name, const bool merged, size_t *ksm, size_t *kzero)
{
	t_scan_t *t = t_scan_new(KSM_PATTERN_ZERO);
	uint64_t pfns[T_DUMP_PAGES];
	t_dump_t d;
	size_t j;

	t_dump_load(name, &d);
	stress_ksm_unmerge_iface_judge(&d.o, &t->ifc);
	(void)memcpy(t->ctx.pm, merged ? d.merged : d.unmerged, sizeof(d.merged));
	for (j = 0; j < T_DUMP_PAGES; j++)
		pfns[j] = t->ctx.pm[j] & PM_PFN_MASK;
	t->ctx.kpageflags_fd = t_kpf_file(pfns, merged ? d.merged_flags : d.unmerged_flags, T_DUMP_PAGES);
	t_chunk(t, 0, T_DUMP_PAGES, false);
	*ksm = *kzero = 0;
	for (j = 0; j < T_DUMP_PAGES; j++) {
		*ksm += t->seen[j].what == KSM_PAGE_KSM;
		*kzero += t->seen[j].what == KSM_PAGE_KZERO;
	}
	t_scan_free(t);
}

/*
 *  test_scan_dumps()
 *	each recorded kernel: 64 + 64 merged; after unmerge no KSM page (KSM zero pages on 6.1 only)
 */
static void test_scan_dumps(void **state)
{
	static const char * const names[] = { "host-6.18.txt", "debian-6.12.117.txt", "debian-6.1.192.txt" };
	size_t i, ksm, kzero;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(names); i++) {
		t_dump_scan(names[i], true, &ksm, &kzero);
		assert_int_equal(ksm, 64);
		assert_int_equal(kzero, 64);
		t_dump_scan(names[i], false, &ksm, &kzero);
		assert_int_equal(ksm, 0);
		assert_int_equal(kzero, i == 2 ? 64 : 0);
	}
}

/*
 *  test_region_count()
 *	the whole-region count over three chunks of a fake pagemap file, kinds by each page's index
 */
static void test_region_count(void **state)
{
	t_scan_t *t = t_scan_new(KSM_PATTERN_MIXED);
	const size_t n = 2 * KSM_CHUNK + 100;
	uint64_t *pm = calloc(n, sizeof(uint64_t));
	size_t i, want_ksm = 0, want_zero = 0, want_present = 0;

	(void)state;
	assert_non_null(pm);
	for (i = 0; i < n; i++) {
		const int kind = stress_ksm_unmerge_page_kind(KSM_PATTERN_MIXED, i);

		if (i % 97 == 0) {
			pm[i] = 0;					/* discarded */
		} else if (kind == KSM_KIND_ZERO) {
			pm[i] = PM_PRESENT | 0x777;			/* a KSM zero page */
			want_zero++;
		} else if (kind == KSM_KIND_UNIQUE) {
			pm[i] = PM_PRESENT | PM_EXCLUSIVE | (0x100000 + i);	/* private */
			want_present++;
		} else {
			pm[i] = PM_PRESENT | (0x1000 + i % 7);		/* 7 KSM pages */
			want_ksm++;
			want_present++;
		}
	}
	t->ctx.pagemap_fd = shim_memfd_create("t-pagemap", 0);
	assert_true(t->ctx.pagemap_fd >= 0);
	assert_int_equal(pwrite(t->ctx.pagemap_fd, pm, n * sizeof(uint64_t), (off_t)(T_BASE * sizeof(uint64_t))),
		(ssize_t)(n * sizeof(uint64_t)));
	t->ctx.region = (uint8_t *)(uintptr_t)(T_BASE * T_PAGE);	/* never touched */
	t->ctx.npages = n;
	t->ctx.cycle = 3;
	assert_int_equal(stress_ksm_unmerge_region_count(&t->ctx), 0);
	assert_int_equal(t->ctx.last.cycle, 3);
	assert_int_equal(t->ctx.last.ksm, want_ksm);
	assert_int_equal(t->ctx.last.zero, want_zero);
	assert_int_equal(t->ctx.last.present, want_present);
	assert_int_equal(t->ctx.last.swapped, 0);
	/* no PFNs, or the pagemap cannot be read: nothing counted */
	t->ctx.npages = n + 1;	/* the file ends at page n */
	assert_int_equal(stress_ksm_unmerge_region_count(&t->ctx), -1);
	assert_int_equal(t->ctx.last.ksm, 0);
	t->ctx.have_pfns = false;
	assert_int_equal(stress_ksm_unmerge_scan(&t->ctx, false, t_seen, t), -1);
	free(pm);
	t_scan_free(t);
}

/*
 *  t_verify_merge()
 *	verify_merge() on a merge wait's scan of this cycle that found ksm and zero pages
 */
static int t_verify_merge(t_scan_t *t, const uint64_t ksm, const uint64_t zero, const int waited)
{
	uint64_t k = 0, z = 0;
	int ret;

	t->ctx.cycle = 7;
	t->ctx.last.cycle = 7;
	t->ctx.last.ksm = ksm;
	t->ctx.last.zero = zero;
	t->ctx.last.present = t->ctx.npages - zero;
	t->ctx.last.swapped = 0;
	ret = stress_ksm_unmerge_verify_merge(&t->ctx, waited, &k, &z);
	assert_true(k == ksm && z == zero);
	return ret;
}

/*
 *  test_verify_merge()
 *	the merge check: the prediction passes, more than the pattern allows or a short merge fails
 */
static void test_verify_merge(void **state)
{
	t_scan_t *t = t_scan_new(KSM_PATTERN_MIXED);
	uint64_t km, kz, k, z;

	(void)state;
	t->ctx.npages = 64;
	stress_ksm_unmerge_expect(&t->ctx);
	km = t->ctx.expect_merged;
	kz = t->ctx.expect_zero;
	assert_true(km == 32 && kz == 16);
	t->ifc.kpf_ksm = true;				/* the region's count is exact */
	assert_int_equal(t_verify_merge(t, km, kz, 1), 0);
	assert_int_equal(t_verify_merge(t, km + 1, kz, 1), -1);	/* more than the pattern can merge */
	assert_int_equal(t_verify_merge(t, km, kz + 1, 1), -1);
	assert_int_equal(t_verify_merge(t, km - 1, kz + 1, 0), -1);	/* a non-zero page became a zero page */
	assert_int_equal(t_verify_merge(t, km + 2, kz - 2, 1), 0);	/* zero pages merged as KSM pages */
	assert_int_equal(t_verify_merge(t, km + 3, kz - 2, 1), -1);
	assert_int_equal(t_verify_merge(t, km - 1, kz, 1), -1);	/* ksmd said complete, it is not */
	assert_int_equal(t_verify_merge(t, km, kz - 1, 1), -1);
	assert_int_equal(t_verify_merge(t, km, kz - 1, 0), 0);	/* the wait timed out: partial */
	t->ifc.kpf_ksm = false;		/* the fallback misses a KSM page mapped once: a lower bound */
	assert_int_equal(t_verify_merge(t, km - 3, kz, 1), 0);
	assert_int_equal(t_verify_merge(t, km + 1, kz, 1), -1);	/* but more is still too many */
	t->ifc.kpf_ksm = true;
	t->ctx.disturb_counts = true;			/* a racer blocks merges */
	assert_int_equal(t_verify_merge(t, km - 5, kz, 1), 0);
	assert_int_equal(t_verify_merge(t, km + 1, kz, 1), -1);
	t->ctx.disturb_counts = false;
	assert_int_equal(t_verify_merge(t, km, kz, 1), 0);
	t->ctx.last.present -= 3;			/* pages lost from the region */
	assert_int_equal(stress_ksm_unmerge_verify_merge(&t->ctx, 1, &k, &z), -1);
	t->ctx.disturb_layout = true;			/* a racer discards pages */
	assert_int_equal(stress_ksm_unmerge_verify_merge(&t->ctx, 1, &k, &z), 0);
	t->ctx.last.cycle = 6;				/* no scan this cycle, no PFNs: counters only */
	t->ctx.have_pfns = false;
	assert_int_equal(stress_ksm_unmerge_verify_merge(&t->ctx, 1, &k, &z), 0);
	t_scan_free(t);
}

/*
 *  t_pm_set()
 *	one entry of the fake pagemap file t_scan's region reads
 */
static void t_pm_set(t_scan_t *t, const size_t page, const uint64_t e)
{
	assert_int_equal(pwrite(t->ctx.pagemap_fd, &e, sizeof(e),
		(off_t)((T_BASE + page) * sizeof(uint64_t))), (ssize_t)sizeof(e));
}

/*
 *  test_verify_merge_recount()
 *	a merge count short of what ksmd reported is taken again from the region: a page that was
 *	migrating counts once it lands; one swapped out or migrating is not counted against it
 */
static void test_verify_merge_recount(void **state)
{
	t_scan_t *t = t_scan_new(KSM_PATTERN_MIXED);
	uint64_t pm[64], pfns[7], flags[7], k = 0, z = 0;
	size_t i, ksm_page = 0;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(pfns); i++) {
		pfns[i] = 0x1000 + i;
		flags[i] = KPF_KSM | KPF_ANON;
	}
	for (i = 0; i < SIZEOF_ARRAY(pm); i++) {
		const int kind = stress_ksm_unmerge_page_kind(KSM_PATTERN_MIXED, i);

		if (kind == KSM_KIND_ZERO) {
			pm[i] = PM_PRESENT | 0x777;
		} else if (kind == KSM_KIND_UNIQUE) {
			pm[i] = PM_PRESENT | PM_EXCLUSIVE | (0x100000 + i);
		} else {
			pm[i] = PM_PRESENT | (0x1000 + i % 7);
			ksm_page = i;
		}
	}
	t->ctx.pagemap_fd = shim_memfd_create("t-pagemap", 0);
	assert_true(t->ctx.pagemap_fd >= 0);
	assert_int_equal(pwrite(t->ctx.pagemap_fd, pm, sizeof(pm), (off_t)(T_BASE * sizeof(uint64_t))),
		(ssize_t)sizeof(pm));
	t->ctx.kpageflags_fd = t_kpf_file(pfns, flags, SIZEOF_ARRAY(pfns));
	t->ctx.region = (uint8_t *)(uintptr_t)(T_BASE * T_PAGE);
	t->ctx.npages = SIZEOF_ARRAY(pm);
	t->ifc.kpf_ksm = true;
	stress_ksm_unmerge_expect(&t->ctx);
	/* the wait's count was one short (a page in flight read as its old frame); all there now */
	t->ctx.cycle = t->ctx.last.cycle = 7;
	t->ctx.last.ksm = t->ctx.expect_merged - 1;
	t->ctx.last.zero = t->ctx.expect_zero;
	t->ctx.last.present = t->ctx.npages - t->ctx.expect_zero;
	t->ctx.last.swapped = 0;
	assert_int_equal(stress_ksm_unmerge_verify_merge(&t->ctx, 1, &k, &z), 0);
	assert_true(k == t->ctx.expect_merged && z == t->ctx.expect_zero);
	/* a KSM page that stays swapped out (or migrating) may be one: not counted against */
	t_pm_set(t, ksm_page, PM_SWAP | 0x5);
	assert_int_equal(stress_ksm_unmerge_region_count(&t->ctx), 0);
	assert_int_equal(stress_ksm_unmerge_verify_merge(&t->ctx, 1, &k, &z), 0);
	assert_true(k == t->ctx.expect_merged - 1 && t->ctx.last.swapped == 1);
	/* one a write made private is short, whatever the recounts see */
	t_pm_set(t, ksm_page, PM_PRESENT | PM_EXCLUSIVE | 0x200000);
	assert_int_equal(stress_ksm_unmerge_region_count(&t->ctx), 0);
	assert_int_equal(stress_ksm_unmerge_verify_merge(&t->ctx, 1, &k, &z), -1);
	assert_true(k == t->ctx.expect_merged - 1 && t->ctx.last.swapped == 0);
	t_scan_free(t);
}

/*
 *  test_fork_zero_count()
 *	KSM zero PTEs in a range of a fake pagemap, by pfn or KPF_ZERO_PAGE, over 256-entry reads
 */
static void test_fork_zero_count(void **state)
{
	t_scan_t *t = t_scan_new(KSM_PATTERN_SAME);
	const size_t n = 600;
	uint64_t pm[600], zpfn = 0x777, zflags = KPF_ZERO_PAGE;
	const uintptr_t base = (uintptr_t)(T_BASE * T_PAGE);
	size_t i;

	(void)state;
	for (i = 0; i < n; i++)
		pm[i] = (i % 3 == 0) ? PM_PRESENT | 0x777 : (i % 7 == 0) ? 0 : PM_PRESENT | PM_EXCLUSIVE | (0x1000 + i);
	pm[n - 1] = PM_SWAP | 0x5;
	t->ctx.pagemap_fd = shim_memfd_create("t-pagemap", 0);
	assert_true(t->ctx.pagemap_fd >= 0);
	assert_int_equal(pwrite(t->ctx.pagemap_fd, pm, sizeof(pm), (off_t)(T_BASE * sizeof(uint64_t))), (ssize_t)sizeof(pm));
	t->ctx.kpageflags_fd = t_kpf_file(&zpfn, &zflags, 1);
	assert_int_equal(stress_ksm_unmerge_fork_zero_count(&t->ctx, t->ctx.pagemap_fd, base, n), 200);
	assert_int_equal(stress_ksm_unmerge_fork_zero_count(&t->ctx, t->ctx.pagemap_fd, base + T_PAGE, 5), 1);
	assert_int_equal(stress_ksm_unmerge_fork_zero_count(&t->ctx, t->ctx.pagemap_fd, base + 256 * T_PAGE, 258), 86);
	assert_int_equal(stress_ksm_unmerge_fork_zero_count(&t->ctx, t->ctx.pagemap_fd, base, 0), 0);
	t->ifc.zero_pfn = 0;		/* no shared zero page seen: KPF_ZERO_PAGE per page */
	assert_int_equal(stress_ksm_unmerge_fork_zero_count(&t->ctx, t->ctx.pagemap_fd, base, n), 200);
	assert_int_equal(stress_ksm_unmerge_fork_zero_count(&t->ctx, t->ctx.pagemap_fd, base, n + 1), -1);
	t_scan_free(t);
}

/*
 *  test_verify_cow()
 *	the cycles' cow_ksm check: the firm KSM pages before the unmerge, less every page not a private copy
 *	now, are owed to cow_ksm; short of them is a failure, unless something besides the kernel explains it
 */
static void test_verify_cow(void **state)
{
	t_scan_t *t = t_scan_new(KSM_PATTERN_MIXED);

	(void)state;
	t->ifc.cow_ksm = true;
	t->ctx.npages = 64;
	t->ctx.cycle = 9;
	t->ctx.last.cycle = 9;
	t->ctx.last.firm = 32;
	t->ctx.last.cow = 1000;
	t->ctx.last.swapin = -1;
	assert_int_equal(stress_ksm_unmerge_verify_cow(&t->ctx, 64, 1032, -1), 0);	/* counted */
	assert_int_equal(stress_ksm_unmerge_verify_cow(&t->ctx, 64, 1040, -1), 0);	/* others' copies too */
	assert_int_equal(stress_ksm_unmerge_verify_cow(&t->ctx, 64, 1031, -1), -1);	/* one uncounted */
	assert_int_equal(stress_ksm_unmerge_verify_cow(&t->ctx, 64, 1000, -1), -1);	/* m23: none counted */
	/* 16 region pages not private copies now (swapped out, discarded, KSM): 16 firm ones owed only */
	assert_int_equal(stress_ksm_unmerge_verify_cow(&t->ctx, 48, 1016, -1), 0);
	assert_int_equal(stress_ksm_unmerge_verify_cow(&t->ctx, 48, 1015, -1), -1);
	assert_int_equal(stress_ksm_unmerge_verify_cow(&t->ctx, 32, 1000, -1), 0);	/* nothing owed */
	/* what else explains it: a swap-in, a layout racer, no counter, an unknown zero page, an old scan */
	t->ctx.last.swapin = 5;
	assert_int_equal(stress_ksm_unmerge_verify_cow(&t->ctx, 64, 1000, 6), 0);
	assert_int_equal(stress_ksm_unmerge_verify_cow(&t->ctx, 64, 1000, 5), -1);
	t->ctx.disturb_layout = true;
	assert_int_equal(stress_ksm_unmerge_verify_cow(&t->ctx, 64, 1000, 5), 0);
	t->ctx.disturb_layout = false;
	assert_int_equal(stress_ksm_unmerge_verify_cow(&t->ctx, 64, -1, 5), 0);
	t->ifc.cow_ksm = false;
	assert_int_equal(stress_ksm_unmerge_verify_cow(&t->ctx, 64, 1000, 5), 0);
	t->ifc.cow_ksm = true;
	t->ifc.zero_pfn = 0;
	t->ifc.kpf_zero = false;
	assert_int_equal(stress_ksm_unmerge_verify_cow(&t->ctx, 64, 1000, 5), 0);
	t->ifc.kpf_zero = true;
	assert_int_equal(stress_ksm_unmerge_verify_cow(&t->ctx, 64, 1000, 5), -1);
	t->ctx.last.cycle = 8;
	assert_int_equal(stress_ksm_unmerge_verify_cow(&t->ctx, 64, 1000, 5), 0);
	t_scan_free(t);
}

/*
 *  test_firm_count()
 *	the merge scan's firm KSM pages: a frame shared in the region, or KPF_KSM where trusted; never the zero page
 */
static void test_firm_count(void **state)
{
	t_scan_t *t = t_scan_new(KSM_PATTERN_MIXED);
	const uint64_t p = PM_PRESENT, x = PM_PRESENT | PM_EXCLUSIVE;
	const uint64_t pm[] = { p | 0xa0, p | 0xa0, p | 0xb0, x | 0xc0, p | 0x777, p | 0x777, PM_SWAP | 5, 0 };
	uint64_t pfns[2] = { 0xb0, 0xc0 }, flags[2] = { KPF_KSM | KPF_ANON, KPF_ANON };

	(void)state;
	t->ctx.pagemap_fd = shim_memfd_create("t-pagemap", 0);
	assert_true(t->ctx.pagemap_fd >= 0);
	assert_int_equal(pwrite(t->ctx.pagemap_fd, pm, sizeof(pm), (off_t)(T_BASE * sizeof(uint64_t))),
		(ssize_t)sizeof(pm));
	t->ctx.kpageflags_fd = t_kpf_file(pfns, flags, 2);
	t->ctx.region = (uint8_t *)(uintptr_t)(T_BASE * T_PAGE);
	t->ctx.npages = SIZEOF_ARRAY(pm);
	assert_int_equal(stress_ksm_unmerge_region_count(&t->ctx), 0);
	/* KPF_KSM not trusted: pages 0 and 1 only (page 2, alone and not exclusive, is a KSM page, not firm) */
	assert_int_equal(t->ctx.last.firm, 2);
	assert_int_equal(t->ctx.last.ksm, 3);
	t->ifc.kpf_ksm = true;
	assert_int_equal(stress_ksm_unmerge_region_count(&t->ctx), 0);
	assert_int_equal(t->ctx.last.firm, 1);	/* 0xa0 lacks KPF_KSM in the fake file: not a KSM page */
	assert_int_equal(t->ctx.last.ksm, 1);
	t_scan_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pvm_no_zero_page),
		cmocka_unit_test(test_kpf_ksm_bug),
		cmocka_unit_test(test_ksm_stat_61),
		cmocka_unit_test(test_iface_broken),
		cmocka_unit_test(test_kernel_broken),
		cmocka_unit_test(test_page_what),
		cmocka_unit_test(test_scan_chunk),
		cmocka_unit_test(test_scan_sample),
		cmocka_unit_test(test_scan_dumps),
		cmocka_unit_test(test_region_count),
		cmocka_unit_test(test_verify_merge),
		cmocka_unit_test(test_verify_merge_recount),
		cmocka_unit_test(test_fork_zero_count),
		cmocka_unit_test(test_verify_cow),
		cmocka_unit_test(test_firm_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
