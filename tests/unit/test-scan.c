/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-scan.c: cmocka unit tests of the region scan's bounded
 * scratch (stress-ksm-unmerge-verify.h).  Synthetic pagemaps (a memfd read
 * where /proc/self/pagemap would be, a memfd of kpageflags) are scanned
 * with buffers small enough to force one pass, two windows and many, and
 * the groups, their order and what the consumers count must be those of
 * the single sorted array the scan used before (the oracle here: every
 * present word, qsorted, runs of one pfn).
 */
#include "../../stress-ksm-unmerge.c"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#define T_PAGE		(4096)
#define T_BASE		(0x40000ULL)	/* page number of the fake region: pagemap offset */
#define T_KPF_PFNS	(1U << 16)	/* pfns with kpageflags in the fake file */
#define T_MAX_PAGES	(6000)
#define T_ZPFN		(0x777ULL)	/* the fake zero page */

typedef struct {
	uint64_t word;
	size_t n;
} t_group_t;

/* A context scanning a synthetic pagemap */
typedef struct {
	stress_args_t args;
	stress_ksm_unmerge_instance_t st;
	stress_ksm_unmerge_ctx_t ctx;
	stress_ksm_unmerge_iface_t ifc;
	uint64_t pm[T_MAX_PAGES];	/* the entries */
	t_group_t got[T_MAX_PAGES], want[T_MAX_PAGES];
	size_t ngot, nwant, resets;
	int move;			/* record: rewrite page 0 at the first n groups */
} t_scan_t;

/*
 *  t_setup()
 *	cmocka setup: a context with fake pagemap and kpageflags files
 */
static int t_setup(void **state)
{
	t_scan_t *t = calloc(1, sizeof(*t));
	uint64_t *kpf = calloc(T_KPF_PFNS, sizeof(uint64_t));
	size_t p;

	assert_non_null(t);
	assert_non_null(kpf);
	t->args.name = "ksm-unmerge";
	t->args.page_size = T_PAGE;
	t->args.bogo.max_ops = NEVER_END_OPS;
	t->ctx.args = &t->args;
	t->ctx.st = &t->st;
	t->ctx.page_size = T_PAGE;
	t->ctx.region = (uint8_t *)(uintptr_t)(T_BASE * T_PAGE);	/* never touched */
	t->ctx.have_pfns = true;
	t->ctx.zero_pfn = T_ZPFN;
	t->ctx.verify = true;
	t->ctx.pagemap = calloc(KSM_UNMERGE_PM_CHUNK, sizeof(uint64_t));
	t->ctx.pfns = calloc(KSM_UNMERGE_SCAN_BUCKETS + T_MAX_PAGES + 1, sizeof(uint64_t));
	t->ctx.pagemap_fd = memfd_create("t-pagemap", MFD_CLOEXEC);
	t->ctx.kpageflags_fd = memfd_create("t-kpageflags", MFD_CLOEXEC);
	assert_true(t->ctx.pagemap_fd >= 0 && t->ctx.kpageflags_fd >= 0);
	/* every fifth pfn flagged KSM, every seventh anon: both signals have a say */
	for (p = 0; p < T_KPF_PFNS; p++)
		kpf[p] = (p % 5 ? 0 : STRESS_BIT_ULL(KPF_BIT_KSM)) | (p % 7 ? 0 : KPF_ANON);
	assert_int_equal(pwrite(t->ctx.kpageflags_fd, kpf, T_KPF_PFNS * sizeof(uint64_t), 0),
		(ssize_t)(T_KPF_PFNS * sizeof(uint64_t)));
	free(kpf);
	t->ifc = (stress_ksm_unmerge_iface_t){ .tested = true, .pfns = true, .kpageflags = true,
		.kpf_ksm = true, .excl = true, .zero_unshare = true, .zero_pfn = T_ZPFN };
	stress_ksm_unmerge_iface_cur = &t->ifc;
	t->ctx.iface = &t->ifc;
	*state = t;
	return 0;
}

/*
 *  t_teardown_scan()
 *	cmocka teardown
 */
static int t_teardown_scan(void **state)
{
	t_scan_t *t = *state;

	stress_ksm_unmerge_iface_cur = NULL;
	(void)close(t->ctx.pagemap_fd);
	(void)close(t->ctx.kpageflags_fd);
	free(t->ctx.pagemap);
	free(t->ctx.pfns);
	free(t);
	return 0;
}

/*
 *  t_write()
 *	the fake pagemap holds t->pm[0..n)
 */
static void t_write(t_scan_t *t, const size_t n)
{
	t->ctx.npages = n;
	t->ctx.region_size = n * T_PAGE;
	assert_int_equal(pwrite(t->ctx.pagemap_fd, t->pm, n * sizeof(uint64_t),
		(off_t)(T_BASE * sizeof(uint64_t))), (ssize_t)(n * sizeof(uint64_t)));
}

/*
 *  t_u64_cmp()
 *	qsort order of words
 */
static int t_u64_cmp(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 *  t_u32_cmp()
 *	qsort order of offsets
 */
static int t_u32_cmp(const void *a, const void *b)
{
	const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/*
 *  t_oracle()
 *	the scan as it was: every present word in one array, sorted, runs of
 *	equal pfn (the first word names the run); swapped pages counted
 */
static size_t t_oracle(t_scan_t *t, const size_t n)
{
	uint64_t *w = calloc(n + 1, sizeof(uint64_t));
	size_t i, j, m = 0, swapped = 0;

	assert_non_null(w);
	for (i = 0; i < n; i++) {
		if (t->pm[i] & PM_PRESENT)
			w[m++] = (t->pm[i] & PM_PFN_MASK) | (t->pm[i] & PM_EXCLUSIVE);
		else
			swapped += !!(t->pm[i] & PM_SWAP);
	}
	qsort(w, m, sizeof(*w), t_u64_cmp);
	t->nwant = 0;
	for (i = 0; i < m; i = j) {
		for (j = i + 1; j < m && (w[j] & PM_PFN_MASK) == (w[i] & PM_PFN_MASK); j++)
			;
		t->want[t->nwant++] = (t_group_t){ w[i], j - i };
	}
	free(w);
	return swapped;
}

/*
 *  t_record()
 *	consumer: record the groups (forget them when the scan starts again);
 *	t->move > 0: page 0 of the fake region moves at each of the first
 *	t->move groups handed over
 */
static int t_record(stress_ksm_unmerge_ctx_t *ctx, void *arg, const uint64_t word, const size_t n)
{
	t_scan_t *t = (t_scan_t *)arg;

	(void)ctx;
	if (!n) {
		t->ngot = 0;
		t->resets++;
		return 0;
	}
	assert_true(t->ngot < T_MAX_PAGES);
	t->got[t->ngot++] = (t_group_t){ word, n };
	if (t->move > 0) {
		t->move--;
		t->pm[0] = PM_PRESENT | PM_EXCLUSIVE | (0x100000ULL + (uint64_t)t->move);
		t_write(t, t->ctx.npages);
	}
	return 0;
}

/*
 *  t_got_want()
 *	the groups recorded are the oracle's, in its order
 */
static void t_got_want(const t_scan_t *t)
{
	size_t i;

	assert_int_equal(t->ngot, t->nwant);
	for (i = 0; i < t->nwant; i++) {
		assert_int_equal(t->got[i].word, t->want[i].word);
		assert_int_equal(t->got[i].n, t->want[i].n);
	}
}

/*
 *  t_same_groups()
 *	scan with a buffer of cap words: the oracle's groups in its order;
 *	returns the pagemap passes it took
 */
static size_t t_same_groups(t_scan_t *t, const size_t cap, const size_t swapped)
{
	t->ctx.scan_cap = cap;
	t->ngot = 0;
	t->resets = 0;
	assert_int_equal(stress_ksm_unmerge_region_groups(&t->ctx, t_record, t), 0);
	assert_int_equal(t->resets, 0);
	t_got_want(t);
	assert_int_equal(t->ctx.scan_swapped, swapped);
	return t->ctx.scan_passes;
}

/*
 *  t_same_counts()
 *	region_scan's counts and verify_pfns' suspects (singles sampled and
 *	not) with a buffer of cap words are those of the oracle's groups
 */
static void t_same_counts(t_scan_t *t, const size_t cap)
{
	stress_ksm_unmerge_pfns_t want, got;
	stress_ksm_unmerge_count_t c = { .sample = false };
	uint64_t ksm, zero;
	size_t i, present;
	int verify;

	for (i = 0; i < t->nwant; i++)
		assert_int_equal(stress_ksm_unmerge_count_group(&t->ctx, &c, t->want[i].word, t->want[i].n), 0);
	t->ctx.scan_cap = cap;
	assert_int_equal(stress_ksm_unmerge_region_scan(&t->ctx, false, &ksm, &zero, &present), 0);
	assert_int_equal(ksm, c.ksm);
	assert_int_equal(zero, c.zero);
	assert_int_equal(present, c.present);
	for (verify = 0; verify < 2; verify++) {
		t->ctx.verify = verify;
		(void)memset(&want, 0, sizeof(want));
		(void)memset(&got, 0x5a, sizeof(got));	/* the scan's restart clears it */
		(void)stress_ksm_unmerge_pfns_group(&t->ctx, &got, 0, 0);
		for (i = 0; i < t->nwant; i++)
			(void)stress_ksm_unmerge_pfns_group(&t->ctx, &want, t->want[i].word, t->want[i].n);
		assert_int_equal(stress_ksm_unmerge_region_groups(&t->ctx, stress_ksm_unmerge_pfns_group, &got), 0);
		assert_int_equal(got.nsus, want.nsus);
		for (i = 0; i < want.nsus; i++) {
			assert_int_equal(got.sus[i].pfn, want.sus[i].pfn);
			assert_int_equal(got.sus[i].sharers, want.sus[i].sharers);
			assert_int_equal(got.sus[i].kpf, want.sus[i].kpf);
			assert_int_equal(got.sus[i].mapping, want.sus[i].mapping);
		}
		assert_int_equal(got.distinct, want.distinct);
		assert_int_equal(got.zero, want.zero);
		assert_int_equal(got.zero_pfn, want.zero_pfn);
		assert_int_equal(got.total, want.total);
		assert_int_equal(got.kpf_pages, want.kpf_pages);
	}
	t->ctx.verify = true;
}

/*
 *  t_check()
 *	pagemap pm[0..n): at every buffer size the oracle's groups and counts;
 *	one pass when the present pages fit, more when not; the passes at
 *	the smallest buffer returned
 */
static size_t t_check(t_scan_t *t, const size_t n)
{
	const size_t caps[] = { n + 1, n, n / 2 + 1, n / 3, 97, 16, 3, 1 };
	size_t present = 0, i, passes = 0, swapped;

	t_write(t, n);
	swapped = t_oracle(t, n);
	for (i = 0; i < n; i++)
		present += !!(t->pm[i] & PM_PRESENT);
	for (i = 0; i < SIZEOF_ARRAY(caps); i++) {
		if (!caps[i])
			continue;
		passes = t_same_groups(t, caps[i], swapped);
		if (present <= caps[i])
			assert_int_equal(passes, 1);
		else
			assert_true(passes >= 2);	/* pass A (and its histogram), a window */
		t_same_counts(t, caps[i]);
	}
	return passes;
}

/*
 *  t_rand64()
 *	64 random bits
 */
static uint64_t t_rand64(unsigned int *seed)
{
	return ((uint64_t)rand_r(seed) << 42) ^ ((uint64_t)rand_r(seed) << 21) ^ (uint64_t)rand_r(seed);
}

/*
 *  test_scan_random()
 *	random pagemaps: few or many pfns, many duplicates, exclusive bits,
 *	the zero page, swapped and absent pages, pfns up to the largest
 */
static void test_scan_random(void **state)
{
	t_scan_t *t = *state;
	unsigned int seed = 1234;
	int round;

	for (round = 0; round < 30; round++) {
		const size_t n = 1 + (size_t)rand_r(&seed) % (T_MAX_PAGES / 2);
		const unsigned int bits = 1 + (unsigned int)rand_r(&seed) % 55;
		const uint64_t mask = (1ULL << bits) - 1;
		size_t i;

		for (i = 0; i < n; i++) {
			const unsigned int r = (unsigned int)rand_r(&seed) % 100;
			uint64_t pfn = t_rand64(&seed) & mask;

			if (r < 30 && i)
				pfn = t->pm[rand_r(&seed) % i] & PM_PFN_MASK;	/* shared */
			else if (r < 35)
				pfn = T_ZPFN;
			else if (r < 38)
				pfn = PM_PFN_MASK - (uint64_t)(rand_r(&seed) % 3);
			t->pm[i] = PM_PRESENT | pfn | ((rand_r(&seed) & 1) ? PM_EXCLUSIVE : 0);
			if (r >= 90 && r < 95)
				t->pm[i] = PM_SWAP | (t_rand64(&seed) & PM_PFN_MASK);
			else if (r >= 95)
				t->pm[i] = 0;
		}
		(void)t_check(t, n);
	}
}

/*
 *  test_scan_shapes()
 *	one pfn for every page; all distinct; a run of pfns; the pfn both
 *	shared and exclusive where the two halves meet (one group); only
 *	the largest pfns; the last pfns the machine has; nothing present
 */
static void test_scan_shapes(void **state)
{
	t_scan_t *t = *state;
	const size_t n = 5000;
	size_t i;

	for (i = 0; i < n; i++)
		t->pm[i] = PM_PRESENT | 0x4242;		/* every page on one KSM page */
	(void)t_check(t, n);
	for (i = 0; i < n; i++)
		t->pm[i] = PM_PRESENT | T_ZPFN;		/* every page on the zero page */
	(void)t_check(t, n);
	for (i = 0; i < n; i++)
		t->pm[i] = PM_PRESENT | PM_EXCLUSIVE | ((i * 7919) % 1000003);	/* all distinct */
	assert_true(t_check(t, n) > n / 2);	/* a buffer of 1: one window per pfn or so */
	for (i = 0; i < n; i++)
		t->pm[i] = PM_PRESENT | PM_EXCLUSIVE | (n - i);	/* a run, descending */
	(void)t_check(t, n);
	/* 30 shared and exclusive: the largest shared pfn is the smallest exclusive one */
	t->pm[0] = PM_PRESENT | 10;
	t->pm[1] = PM_PRESENT | PM_EXCLUSIVE | 50;
	t->pm[2] = PM_PRESENT | 30;
	t->pm[3] = PM_PRESENT | PM_EXCLUSIVE | 30;
	t->pm[4] = PM_PRESENT | 20;
	t->pm[5] = PM_PRESENT | PM_EXCLUSIVE | 30;
	t->pm[6] = PM_PRESENT | PM_EXCLUSIVE | 40;
	(void)t_check(t, 7);
	assert_int_equal(t->nwant, 5);
	assert_int_equal(t->want[2].word, 30);
	assert_int_equal(t->want[2].n, 3);
	for (i = 0; i < n; i++)
		t->pm[i] = PM_PRESENT | (PM_PFN_MASK - (i % 3)) | ((i & 4) ? PM_EXCLUSIVE : 0);
	(void)t_check(t, n);
	for (i = 0; i < n; i++)	/* the last pfns kpageflags has: the histogram's last buckets */
		t->pm[i] = PM_PRESENT | (T_KPF_PFNS - 1 - (i % 37)) | ((i & 8) ? PM_EXCLUSIVE : 0);
	(void)t_check(t, n);
	for (i = 0; i < n; i++)
		t->pm[i] = (i & 1) ? PM_SWAP : 0;
	(void)t_check(t, n);
}

/*
 *  test_scan_sizes()
 *	a pagemap the buffer holds in one pass, in two windows and in many:
 *	passes counted, with pass A taking the histogram (pfns below the end
 *	kpageflags gives) or a histogram pass (pfns past it); the real
 *	buffer holds every default region
 */
static void test_scan_sizes(void **state)
{
	t_scan_t *t = *state;
	const size_t n = 4096;
	size_t i, hist;

	assert_int_equal(stress_ksm_unmerge_pfn_end(t->ctx.kpageflags_fd), T_KPF_PFNS);
	assert_int_equal(stress_ksm_unmerge_pfn_end(-1), 0);
	for (hist = 0; hist < 2; hist++) {
		for (i = 0; i < n; i++)
			t->pm[i] = PM_PRESENT | PM_EXCLUSIVE | ((hist ? T_KPF_PFNS : 0x1000) + i);
		t_write(t, n);
		(void)t_oracle(t, n);
		assert_int_equal(t_same_groups(t, n, 0), 1);
		assert_int_equal(t_same_groups(t, n / 2, 0), 2 + hist);	/* A, a window of offsets */
		assert_int_equal(t_same_groups(t, n / 3, 0), 3 + hist);	/* A, 2 windows */
		i = t_same_groups(t, 64, 0);
		assert_true(i >= 1 + hist + n / 128 && i <= 1 + hist + 2 * n / 128);
	}
	assert_int_equal(stress_ksm_unmerge_scan_buf_words(8192, KSM_UNMERGE_SCAN_CAP), 8192);
	assert_int_equal(stress_ksm_unmerge_scan_buf_words(0, KSM_UNMERGE_SCAN_CAP), 1);
	assert_int_equal(stress_ksm_unmerge_scan_buf_words(1 << 21, KSM_UNMERGE_SCAN_CAP),
		KSM_UNMERGE_SCAN_CAP + KSM_UNMERGE_SCAN_BUCKETS);
	assert_true(KSM_UNMERGE_SCAN_BYTES <= 3 * MB / 2);
	assert_true((size_t)DEFAULT_KSM_UNMERGE_BYTES / T_PAGE <= KSM_UNMERGE_SCAN_CAP);
}

/*
 *  test_scan_moved()
 *	a page that moves between two passes: the scan starts again and sees
 *	it once; a region that never stops moving is not scanned (-1); the
 *	end of the run stops a scan
 */
static void test_scan_moved(void **state)
{
	t_scan_t *t = *state;
	const size_t n = 3000;
	size_t i, swapped;

	for (i = 0; i < n; i++)
		t->pm[i] = PM_PRESENT | (i % 500) | ((i % 500) > 250 ? PM_EXCLUSIVE : 0);
	t_write(t, n);
	t->ctx.scan_cap = 256;
	t->move = 1;		/* page 0 moves once, after the first window */
	t->ngot = t->resets = 0;
	assert_int_equal(stress_ksm_unmerge_region_groups(&t->ctx, t_record, t), 0);
	assert_int_equal(t->resets, 1);
	swapped = t_oracle(t, n);	/* the pagemap as it is now */
	t->move = 0;
	t_got_want(t);
	(void)t_same_groups(t, 256, swapped);
	t->move = 1000000;	/* moves all the time */
	t->resets = 0;
	assert_int_equal(stress_ksm_unmerge_region_groups(&t->ctx, t_record, t), -1);
	assert_int_equal(t->resets, KSM_UNMERGE_SCAN_TRIES - 1);
	t->move = 0;
	t->args.bogo.max_ops = 0;	/* the run is ending */
	assert_int_equal(stress_ksm_unmerge_region_groups(&t->ctx, t_record, t), -1);
	assert_true(t->ctx.stopped);
	assert_string_equal(t->st.stop_step, "page scan");
	t->args.bogo.max_ops = NEVER_END_OPS;
	t->ctx.stopped = false;
}

/*
 *  test_scan_verify_pfns()
 *	verify_pfns on a scan in windows: distinct private pages pass, a page
 *	left on the KSM zero page fails (6.4+)
 */
static void test_scan_verify_pfns(void **state)
{
	t_scan_t *t = *state;
	const size_t n = 2000;
	size_t i;

	for (i = 0; i < n; i++)
		t->pm[i] = PM_PRESENT | PM_EXCLUSIVE | (0x20001 + 5 * i);	/* no KPF_KSM there */
	t_write(t, n);
	t->ctx.scan_cap = 64;
	t->ctx.ksm_zero = true;
	assert_int_equal(stress_ksm_unmerge_verify_pfns(&t->ctx, 0, 0), 0);
	assert_true(t->ctx.scan_passes >= 1 + n / 128);
	t->pm[1234] = PM_PRESENT | T_ZPFN;
	t_write(t, n);
	assert_int_equal(stress_ksm_unmerge_verify_pfns(&t->ctx, 0, 0), -1);
	t->ctx.ksm_zero = false;
	assert_int_equal(stress_ksm_unmerge_verify_pfns(&t->ctx, 0, 0), 0);
}

/*
 *  test_off_sort()
 *	the in-place radix sort of window offsets agrees with qsort
 */
static void test_off_sort(void **state)
{
	uint32_t a[3000], b[3000];
	unsigned int seed = 7;
	size_t round;

	(void)state;
	for (round = 0; round < 200; round++) {
		const size_t n = 1 + (size_t)(rand_r(&seed) % 3000);
		const uint32_t mask = (uint32_t)((1ULL << (1 + rand_r(&seed) % 32)) - 1);
		uint32_t max = 0;
		unsigned int shift = 0;
		size_t i;

		for (i = 0; i < n; i++) {
			a[i] = ((uint32_t)rand_r(&seed) << 16 ^ (uint32_t)rand_r(&seed)) & mask;
			if (i && (rand_r(&seed) & 3) == 0)
				a[i] = a[i - 1];
			max = a[i] > max ? a[i] : max;
			b[i] = a[i];
		}
		while (shift < 24 && (max >> (shift + 8)))
			shift += 8;
		stress_ksm_unmerge_off_digit(a, n, shift);
		qsort(b, n, sizeof(*b), t_u32_cmp);
		assert_memory_equal(a, b, n * sizeof(*a));
	}
}

/*
 *  test_scan_keys()
 *	a word and its key map to each other, in the same order
 */
static void test_scan_keys(void **state)
{
	const uint64_t m1 = 1000;
	const uint64_t words[] = { 0, 1, 999, PM_EXCLUSIVE | 0, PM_EXCLUSIVE | 1, PM_EXCLUSIVE | 999 };
	size_t i;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(words); i++) {
		const uint64_t k = stress_ksm_unmerge_scan_key(words[i], m1);

		assert_int_equal(stress_ksm_unmerge_scan_word(k, m1), words[i]);
		assert_true(k < 2 * m1);
		if (i)
			assert_true(k > stress_ksm_unmerge_scan_key(words[i - 1], m1));
	}
	assert_int_equal(stress_ksm_unmerge_scan_key(PM_EXCLUSIVE | PM_PFN_MASK, PM_PFN_MASK + 1),
		2 * (PM_PFN_MASK + 1) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_keys),
		cmocka_unit_test(test_off_sort),
		cmocka_unit_test_setup_teardown(test_scan_shapes, t_setup, t_teardown_scan),
		cmocka_unit_test_setup_teardown(test_scan_random, t_setup, t_teardown_scan),
		cmocka_unit_test_setup_teardown(test_scan_sizes, t_setup, t_teardown_scan),
		cmocka_unit_test_setup_teardown(test_scan_moved, t_setup, t_teardown_scan),
		cmocka_unit_test_setup_teardown(test_scan_verify_pfns, t_setup, t_teardown_scan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
