/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-iface.c: cmocka unit tests of the interface self-test
 * (stress_ksm_unmerge_iface_judge) and the page verdict
 * (stress_ksm_unmerge_page_what), fed what pagemap, kpageflags and the
 * counters said on three real kernels (tests/data/kernel-signals/,
 * recorded by ksm-signal-dump.c there): 6.18 booted with
 * pvm_no_zero_page=1 (a read fault maps a private page), Debian
 * 6.12.117 (KPF_KSM on every anonymous page) and Debian 6.1.192
 * (ksm_stat has only ksm_rmap_items).  Also the field-by-field counter
 * fallback and the advisor_mode knob's reading.
 */
#include "../../stress-ksm-unmerge.c"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#define T_DUMP_PAGES	(128)

/* the dumps beside this file (builds that do not pass -DT_SIGNALS_DIR run from the top directory) */
#if !defined(T_SIGNALS_DIR)
#define T_SIGNALS_DIR	"tests/data/kernel-signals"
#endif

/* One recorded dump: the self-test's observations and every page it listed */
typedef struct {
	stress_ksm_unmerge_iface_obs_t o;
	uint64_t merged[T_DUMP_PAGES], merged_flags[T_DUMP_PAGES];
	uint64_t unmerged[T_DUMP_PAGES], unmerged_flags[T_DUMP_PAGES];
} t_dump_t;

/*
 *  t_page_line()
 *	parse "<step> page <i> pagemap <e> ... kpageflags <f> ..." into the dump
 */
static void t_page_line(t_dump_t *d, const char *step, const unsigned int i,
	const uint64_t e, const uint64_t f)
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
 *	kernel version, ksm_stat lines, ksm_merging_pages and cow_ksm
 */
static void t_other_line(t_dump_t *d, const char *line)
{
	long long v;
	int major, minor;

	if (sscanf(line, "kernel %d.%d", &major, &minor) == 2)
		d->o.kver = major * 100 + minor;
	if (!strncmp(line, "before-merge ksm_stat: ", 23)) {
		d->o.stat = true;
		d->o.stat_merging |= !strncmp(line + 23, "ksm_merging_pages ", 18);
		d->o.stat_zero |= !strncmp(line + 23, "ksm_zero_pages ", 15);
	}
	if (!strncmp(line, "before-merge ksm_merging_pages: ", 32))
		d->o.merging_pages = true;
	if (sscanf(line, "merged vmstat: cow_ksm %lld", &v) == 1)
		d->o.cow_before = v;
	if (sscanf(line, "unmerged vmstat: cow_ksm %lld", &v) == 1)
		d->o.cow_after = v;
}

/*
 *  t_dump_load()
 *	read a recorded dump into observations as the self-test gathers them:
 *	merged pages 0 and 1 (identical) and 64 (zero-filled) are the probe's
 *	pages; cow_ksm around the unmerge of pages 0-63
 */
static void t_dump_load(const char *name, t_dump_t *d)
{
	char path[PATH_MAX], line[512];
	FILE *fp;
	unsigned int i;

	(void)memset(d, 0, sizeof(*d));
	d->o.cow_before = d->o.cow_after = -1;
	d->o.pagemap = d->o.kpageflags = true;
	(void)snprintf(path, sizeof(path), "%s/%s", T_SIGNALS_DIR, name);
	fp = fopen(path, "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp)) {
		char step[32];
		unsigned long long e, f;

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
	d->o.merged = stress_ksm_unmerge_pm_pfn(d->merged[0]) &&
		stress_ksm_unmerge_pm_pfn(d->merged[0]) == stress_ksm_unmerge_pm_pfn(d->merged[1]);
	d->o.zp = d->merged[64];
	d->o.zp_flags = d->merged_flags[64];
	d->o.zp_valid = stress_ksm_unmerge_pm_pfn(d->o.zp) && !(d->o.zp & PM_EXCLUSIVE);
	for (i = 0; i < 64; i++)
		d->o.ksm_pages += (d->merged[i] & PM_PFN_MASK) == (d->merged[0] & PM_PFN_MASK);
	assert_true(d->o.kver > 0);
	assert_true(d->o.fresh & PM_PRESENT);
}

/*
 *  t_sharers()
 *	how many of the n pages map the pfn of page i
 */
static size_t t_sharers(const uint64_t *pm, const size_t n, const size_t i)
{
	size_t j, c = 0;

	for (j = 0; j < n; j++)
		c += (pm[j] & PM_PFN_MASK) == (pm[i] & PM_PFN_MASK);
	return c;
}

/*
 *  t_count()
 *	pages first..last-1 of a step the verdict puts in class what
 */
static size_t t_count(const stress_ksm_unmerge_iface_t *ifc, const uint64_t *pm, const uint64_t *flags,
	const size_t first, const size_t last, const int what)
{
	size_t i, c = 0;

	for (i = first; i < last; i++)
		c += stress_ksm_unmerge_page_what(ifc, pm[i], flags[i], t_sharers(pm, T_DUMP_PAGES, i), 0) == what;
	return c;
}

/*
 *  t_judge()
 *	load a recorded dump and judge its interfaces
 */
static void t_judge(const char *name, t_dump_t *d, stress_ksm_unmerge_iface_t *ifc)
{
	t_dump_load(name, d);
	stress_ksm_unmerge_iface_judge(&d->o, ifc);
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
 *  test_pvm_no_zero_page()
 *	6.18 booted with pvm_no_zero_page=1: the read fault's private page is
 *	never taken for the zero page; KPF_ZERO_PAGE finds the KSM zero page;
 *	the KSM page's frame, reused for page 64's private copy, is private
 */
static void test_pvm_no_zero_page(void **state)
{
	stress_ksm_unmerge_iface_t ifc;
	t_dump_t d;

	(void)state;
	t_judge("host-6.18.txt", &d, &ifc);
	assert_false(ifc.trusted[KSM_IFACE_ZERO_PAGE]);
	assert_false(ifc.read_fault_zero);
	assert_true(ifc.kpf_zero);
	assert_int_equal(ifc.zero_pfn, 0x3b32);
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_ZERO_PAGE),
		"ksm-unmerge: interface zero-page: unreliable (a read fault maps a private exclusive page"));
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_ZERO_PAGE), "; using KPF_ZERO_PAGE per page"));
	assert_true(ifc.kpf_ksm && ifc.pfns && ifc.excl && ifc.cow_ksm && ifc.zero_unshare);
	assert_true(ifc.trusted[KSM_IFACE_KPF_KSM] && ifc.trusted[KSM_IFACE_PFNS] &&
		ifc.trusted[KSM_IFACE_KSM_STAT] && ifc.trusted[KSM_IFACE_COW_KSM]);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.o.rf[0], d.o.rf_flags[0], 1, 0), KSM_PAGE_PRIVATE);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.o.rf[1], d.o.rf_flags[1], 1, 0), KSM_PAGE_PRIVATE);
	assert_int_equal(t_count(&ifc, d.merged, d.merged_flags, 0, 64, KSM_PAGE_KSM), 64);
	assert_int_equal(t_count(&ifc, d.merged, d.merged_flags, 64, 128, KSM_PAGE_ZERO), 64);
	assert_int_equal(t_count(&ifc, d.unmerged, d.unmerged_flags, 0, 128, KSM_PAGE_PRIVATE), 128);
	/* page 64's private copy sits in the frame the KSM page had */
	assert_int_equal(d.unmerged[64] & PM_PFN_MASK, d.merged[0] & PM_PFN_MASK);
}

/*
 *  test_kpf_ksm_bug()
 *	Debian 6.12.117: KPF_KSM on every anonymous page is found by the
 *	fresh page; pfn sharing and the exclusive bit judge instead, and no
 *	unmerged page is called a KSM page (KPF_KSM alone would call all 128)
 */
static void test_kpf_ksm_bug(void **state)
{
	stress_ksm_unmerge_iface_t ifc;
	t_dump_t d;
	size_t i, flagged = 0;

	(void)state;
	t_judge("debian-6.12.117.txt", &d, &ifc);
	assert_false(ifc.kpf_ksm);
	assert_false(ifc.trusted[KSM_IFACE_KPF_KSM]);
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_KPF_KSM),
		"ksm-unmerge: interface kpageflags-ksm: unreliable (KPF_KSM set on a fresh anonymous page"));
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_KPF_KSM), "; using pfn sharing within the region"));
	assert_true(ifc.trusted[KSM_IFACE_ZERO_PAGE] && ifc.read_fault_zero && ifc.kpf_zero);
	assert_int_equal(ifc.zero_pfn, 0x1db38);
	assert_true(ifc.trusted[KSM_IFACE_KSM_STAT] && ifc.trusted[KSM_IFACE_COW_KSM] &&
		ifc.trusted[KSM_IFACE_PFNS]);
	for (i = 0; i < T_DUMP_PAGES; i++)
		flagged += !!(d.unmerged_flags[i] & STRESS_BIT_ULL(KPF_BIT_KSM));
	assert_int_equal(flagged, 128);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.o.fresh, d.o.fresh_flags, 1, 0), KSM_PAGE_PRIVATE);
	assert_int_equal(t_count(&ifc, d.merged, d.merged_flags, 0, 64, KSM_PAGE_KSM), 64);
	assert_int_equal(t_count(&ifc, d.merged, d.merged_flags, 64, 128, KSM_PAGE_ZERO), 64);
	assert_int_equal(t_count(&ifc, d.unmerged, d.unmerged_flags, 0, 128, KSM_PAGE_PRIVATE), 128);
	/* a page alone in the region, not exclusive: KSM only if more than two ptes map it */
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.merged[0], d.merged_flags[0], 1, 64), KSM_PAGE_KSM);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, d.merged[0], d.merged_flags[0], 1, 2), KSM_PAGE_PRIVATE);
}

/*
 *  test_ksm_stat_61()
 *	Debian 6.1.192: ksm_stat has only ksm_rmap_items (merging pages from
 *	ksm_merging_pages, zero pages from pagemap); KSM zero pages stay
 *	mapped after unmerge by design there
 */
static void test_ksm_stat_61(void **state)
{
	stress_ksm_unmerge_iface_t ifc;
	t_dump_t d;

	(void)state;
	t_judge("debian-6.1.192.txt", &d, &ifc);
	assert_false(ifc.trusted[KSM_IFACE_KSM_STAT]);
	assert_false(ifc.stat_merging || ifc.stat_zero);
	assert_true(ifc.merging_pages);
	assert_string_equal(t_line(&ifc, KSM_IFACE_KSM_STAT),
		"ksm-unmerge: interface ksm_stat: unreliable (ksm_stat lacks ksm_merging_pages and "
		"ksm_zero_pages); using /proc/self/ksm_merging_pages for merging pages, pagemap for KSM "
		"zero pages instead");
	assert_false(ifc.zero_unshare);
	assert_true(ifc.trusted[KSM_IFACE_ZERO_PAGE] && ifc.trusted[KSM_IFACE_KPF_KSM] &&
		ifc.trusted[KSM_IFACE_COW_KSM] && ifc.trusted[KSM_IFACE_PFNS]);
	assert_int_equal(ifc.zero_pfn, 0x1ef10);
	assert_int_equal(t_count(&ifc, d.unmerged, d.unmerged_flags, 0, 64, KSM_PAGE_PRIVATE), 64);
	assert_int_equal(t_count(&ifc, d.unmerged, d.unmerged_flags, 64, 128, KSM_PAGE_ZERO), 64);
}

/*
 *  test_iface_broken()
 *	what the recorded kernels do not show: PFNs hidden, no cow_ksm, a
 *	cow_ksm that does not move, a merged page without KPF_KSM, no
 *	ksm_stat; and a swapped-out or absent page is neither
 */
static void test_iface_broken(void **state)
{
	stress_ksm_unmerge_iface_t ifc;
	t_dump_t d;

	(void)state;
	t_dump_load("host-6.18.txt", &d);
	d.o.cow_before = d.o.cow_after;
	d.o.mg_flags[0] &= ~STRESS_BIT_ULL(KPF_BIT_KSM);
	d.o.stat = d.o.stat_merging = d.o.stat_zero = false;
	stress_ksm_unmerge_iface_judge(&d.o, &ifc);
	assert_false(ifc.cow_ksm || ifc.kpf_ksm || ifc.trusted[KSM_IFACE_KSM_STAT]);
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_COW_KSM), "unreliable (cow_ksm grew by 0 while the probe "
		"unshared 64 KSM pages)"));
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_KPF_KSM), "lacks KPF_KSM"));
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_KSM_STAT), "ksm_stat missing"));
	d.o.cow_before = -1;
	d.o.fresh &= ~PM_PFN_MASK;	/* no CAP_SYS_ADMIN: pfns read as 0 */
	stress_ksm_unmerge_iface_judge(&d.o, &ifc);
	assert_false(ifc.pfns || ifc.kpf_ksm || ifc.kpf_zero || ifc.zero_pfn);
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_PFNS), "unreliable (pagemap hides PFNs"));
	assert_non_null(strstr(t_line(&ifc, KSM_IFACE_COW_KSM), "no cow_ksm in /proc/vmstat"));
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, PM_SWAP | 0x1234, 0, 0, 0), KSM_PAGE_SWAPPED);
	assert_int_equal(stress_ksm_unmerge_page_what(&ifc, 0, 0, 0, 0), KSM_PAGE_ABSENT);
	assert_int_equal(stress_ksm_unmerge_kver("6.18.44-fc-v782"), 618);
	assert_int_equal(stress_ksm_unmerge_kver("garbage"), 0);
}

/*
 *  t_file()
 *	a temporary file holding text, opened read-only
 */
static int t_file(const char *text)
{
	char path[] = "/tmp/test-iface.XXXXXX";
	const int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	(void)unlink(path);
	return fd;
}

/*
 *  test_counters_fallback()
 *	6.1's ksm_stat shape: merging pages from ksm_merging_pages, zero
 *	pages unknown; the full shape reads both from ksm_stat
 */
static void test_counters_fallback(void **state)
{
	stress_ksm_unmerge_ctx_t ctx;
	int64_t merging, zero;
	char buf[64];

	(void)state;
	(void)memset(&ctx, 0, sizeof(ctx));
	ctx.ksm_stat_fd = t_file("ksm_rmap_items 64\n");
	ctx.merging_pages_fd = t_file("61\n");
	assert_int_equal(stress_ksm_unmerge_counters(&ctx, &merging, &zero), 0);
	assert_int_equal(merging, 61);
	assert_int_equal(zero, -1);
	(void)close(ctx.ksm_stat_fd);
	ctx.ksm_stat_fd = t_file("ksm_rmap_items 64\nksm_zero_pages 3\nksm_merging_pages 60\n");
	assert_int_equal(stress_ksm_unmerge_counters(&ctx, &merging, &zero), 0);
	assert_int_equal(merging, 60);
	assert_int_equal(zero, 3);
	(void)close(ctx.ksm_stat_fd);
	(void)close(ctx.merging_pages_fd);
	ctx.ksm_stat_fd = ctx.merging_pages_fd = -1;
	assert_int_equal(stress_ksm_unmerge_counters(&ctx, &merging, &zero), -1);

	(void)strcpy(buf, "[none] scan-time");
	stress_ksm_unmerge_knob_selected(buf);
	assert_string_equal(buf, "none");
	(void)strcpy(buf, "none [scan-time]");
	stress_ksm_unmerge_knob_selected(buf);
	assert_string_equal(buf, "scan-time");
	(void)strcpy(buf, "100");
	stress_ksm_unmerge_knob_selected(buf);
	assert_string_equal(buf, "100");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pvm_no_zero_page),
		cmocka_unit_test(test_kpf_ksm_bug),
		cmocka_unit_test(test_ksm_stat_61),
		cmocka_unit_test(test_iface_broken),
		cmocka_unit_test(test_counters_fallback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
