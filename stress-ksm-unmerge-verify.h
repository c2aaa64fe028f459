/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-verify.h: page verification of one cycle (private
 * header of stress-ksm-unmerge.c, included once): the region scan (pages
 * grouped by frame, in pfn windows when the region is larger than its
 * bounded buffer), waiting for ksmd to merge, and the
 * checks whose independent signals must agree: verify_merge (the pages
 * really share frames, as the counters say), and after the unmerge
 * verify_unmerge: verify_pfns (no page keeps a KSM frame), verify_data
 * (every byte is what was written), VMA flags kept, ksm_zero_pages and
 * cow_ksm moved as the pages say.  The MADV_(UN)MERGEABLE / prctl
 * switches they check stay in stress-ksm-unmerge.c.
 */

/*
 *  KSM_UNMERGE_RADIX(name, type): defines name##_isort(), insertion sort
 *  of a small run, and name##_digit(), in-place MSD radix sort (American
 *  flag) of n values on the byte at shift and the bytes below it; no
 *  scratch array.  For pfn words (uint64_t) and window offsets (uint32_t).
 */
#define KSM_UNMERGE_RADIX(name, type)						\
static void name##_isort(type *a, const size_t n)				\
{										\
	size_t i, j;								\
										\
	for (i = 1; i < n; i++) {						\
		const type v = a[i];						\
										\
		for (j = i; j > 0 && a[j - 1] > v; j--)				\
			a[j] = a[j - 1];					\
		a[j] = v;							\
	}									\
}										\
										\
static void name##_digit(type *a, const size_t n, const unsigned int shift)	\
{										\
	size_t count[256], next[256], end[256], sum = 0, b;			\
										\
	if (n < 32) {								\
		name##_isort(a, n);						\
		return;								\
	}									\
	(void)shim_memset(count, 0, sizeof(count));				\
	for (b = 0; b < n; b++)							\
		count[(a[b] >> shift) & 0xff]++;				\
	for (b = 0; b < 256; b++) {						\
		next[b] = sum;							\
		sum += count[b];						\
		end[b] = sum;							\
	}									\
	/* cycle each misplaced value into its bucket */			\
	for (b = 0; count[(a[0] >> shift) & 0xff] != n && b < 256; b++) {	\
		while (next[b] < end[b]) {					\
			type v = a[next[b]];					\
			size_t d = (v >> shift) & 0xff;				\
										\
			while (d != b) {					\
				const type t = a[next[d]];			\
										\
				a[next[d]++] = v;				\
				v = t;						\
				d = (v >> shift) & 0xff;			\
			}							\
			a[next[b]++] = v;					\
		}								\
	}									\
	for (b = 0, sum = 0; shift && b < 256; sum += count[b], b++) {		\
		if (count[b] > 1)						\
			name##_digit(a + sum, count[b], shift - 8);		\
	}									\
}

KSM_UNMERGE_RADIX(stress_ksm_unmerge_pfn, uint64_t)
KSM_UNMERGE_RADIX(stress_ksm_unmerge_off, uint32_t)

/*
 *  stress_ksm_unmerge_pfn_sort()
 *	sort n pfns in place, starting at the highest byte max_pfn uses
 */
static void stress_ksm_unmerge_pfn_sort(uint64_t *pfns, const size_t n, const uint64_t max_pfn)
{
	unsigned int shift = 0;

	while (shift < 56 && (max_pfn >> (shift + 8)))
		shift += 8;
	stress_ksm_unmerge_pfn_digit(pfns, n, shift);
}

/*
 *  stress_ksm_unmerge_pm_entry()
 *	failure paths: pagemap entry of region page i (0 if unreadable)
 */
static uint64_t stress_ksm_unmerge_pm_entry(const stress_ksm_unmerge_ctx_t *ctx, const size_t i)
{
	uint64_t e = 0;

	if (stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region + i * ctx->page_size, 1,
			ctx->page_size, &e) < 0)
		return 0;
	return e;
}

/*
 *  stress_ksm_unmerge_pfn_pages()
 *	failure path: the first two region pages mapping pfn (from pagemap)
 */
static void stress_ksm_unmerge_pfn_pages(const stress_ksm_unmerge_ctx_t *ctx, const uint64_t pfn,
	size_t *first, size_t *second)
{
	size_t i, found = 0;

	*first = *second = ctx->npages;
	for (i = 0; i < ctx->npages && found < 2; i++) {
		const uint64_t e = stress_ksm_unmerge_pm_entry(ctx, i);

		if ((e & PM_PRESENT) && (e & PM_PFN_MASK) == pfn) {
			if (found++ == 0)
				*first = i;
			else
				*second = i;
		}
	}
}

/*
 *  The region scan: every group of region pages that map one pfn, in
 *  ascending order of the pagemap word pfn|exclusive (all shared and
 *  non-exclusive pfns first, then the exclusive ones), with how many
 *  region pages map it.  Its scratch is bounded, whatever the region:
 *  ctx->scan_cap words (KSM_UNMERGE_SCAN_CAP) and a histogram.  Pass A
 *  reads pagemap once and keeps every present page's word; when they fit
 *  (every region up to 704 MiB) they are sorted and walked, one pass as
 *  before.  Otherwise the word space is cut into windows, each holding
 *  no more pages than the buffer holds 32-bit offsets (sorted) or no
 *  more distinct words than it holds counters (counted in place: many
 *  pages on few pfns), and pagemap is read once more for the histogram
 *  and once per window (pass A takes the histogram too when it knows
 *  where the machine's pfns end, from kpageflags).  Pages sharing a frame have
 *  the same word, so no group spans two windows.  Every pass also takes
 *  a signature of the whole region (present and swapped pages, a sum of
 *  mixed words); a pass whose signature differs from pass A's means the
 *  pages moved in between (ksmd, compaction, racers), and the scan starts
 *  again, KSM_UNMERGE_SCAN_TRIES times at most, so no page is counted
 *  twice or missed.  The consumer sees each group once, through a
 *  callback; a group of 0 pages tells it the scan starts again.
 */
#define KSM_UNMERGE_SCAN_CAP		(180224)	/* words held at once: 1.375 MiB */
#define KSM_UNMERGE_SCAN_BUCKETS	(4096)		/* histogram cutting the windows */
#define KSM_UNMERGE_SCAN_SUB		(256)		/* finer histograms (on the stack) */
#define KSM_UNMERGE_SCAN_OFF_KEYS	(1ULL << 32)	/* widest window kept as 32-bit offsets */
#define KSM_UNMERGE_SCAN_TRIES		(3)		/* scans of a region that keeps moving */
/* the scan's scratch per instance: buffer, histogram, pagemap chunk */
#define KSM_UNMERGE_SCAN_BYTES		((KSM_UNMERGE_SCAN_CAP + KSM_UNMERGE_SCAN_BUCKETS + \
					  KSM_UNMERGE_PM_CHUNK) * sizeof(uint64_t))

enum {
	KSM_SCAN_FIRST,			/* pass A: keep words while they fit */
	KSM_SCAN_HIST,			/* histogram of keys */
	KSM_SCAN_SORT,			/* window: keep its words, sort them */
	KSM_SCAN_COUNT,			/* window: count each key in place */
};

typedef int (*stress_ksm_unmerge_group_fn)(stress_ksm_unmerge_ctx_t *ctx, void *arg,
	const uint64_t word, const size_t n);

/* What one pass saw of the whole region: the same in every pass if nothing moved */
typedef struct {
	size_t present;
	size_t swapped;
	uint64_t sum;			/* sum of the mixed words of present pages */
} stress_ksm_unmerge_scan_sig_t;

/* One scan of the region */
typedef struct {
	stress_ksm_unmerge_ctx_t *ctx;
	stress_ksm_unmerge_group_fn fn;	/* the consumer */
	void *arg;
	uint64_t *hist;			/* histogram pass: its buckets */
	unsigned int shift;		/* 2^shift keys per bucket */
	uint64_t m1;			/* largest present pfn + 1: exclusive keys start here */
	uint64_t end;			/* the machine's pfns end here (0 unknown) */
	bool end_hist;			/* pass A's histogram, keys offset by end, holds all */
	uint64_t lo, hi;		/* histogram or window pass: keys [lo, hi) */
	uint64_t max_word;		/* pass A: largest word kept */
	size_t n;			/* words (FIRST) or offsets (SORT) kept */
	bool over;			/* more than the buffer holds */
	stress_ksm_unmerge_scan_sig_t sig, sig0;	/* this pass, pass A */
	uint64_t pend_word;		/* group held back: the next may share its pfn */
	size_t pend_n;
	size_t groups;
	double first_secs;		/* time of pass A */
} stress_ksm_unmerge_scan_t;

/*
 *  stress_ksm_unmerge_scan_mix()
 *	pure: a 64-bit mix of a pagemap word (murmur3's finaliser)
 */
static inline uint64_t stress_ksm_unmerge_scan_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/*
 *  stress_ksm_unmerge_scan_key()
 *	pure: key of a word, keys in word order: pfn, or m1 + pfn if exclusive
 */
static inline uint64_t stress_ksm_unmerge_scan_key(const uint64_t word, const uint64_t m1)
{
	return (word & PM_PFN_MASK) + ((word & PM_EXCLUSIVE) ? m1 : 0);
}

/*
 *  stress_ksm_unmerge_scan_word()
 *	pure: the word of a key
 */
static inline uint64_t stress_ksm_unmerge_scan_word(const uint64_t key, const uint64_t m1)
{
	return (key >= m1) ? ((key - m1) | PM_EXCLUSIVE) : key;
}

/*
 *  stress_ksm_unmerge_scan_end_hist()
 *	pass A, past the buffer: count a word in the histogram of keys
 *	offset by the machine's pfn end (no histogram pass then); a pfn
 *	beyond it (memory added since) spoils that histogram
 */
static inline void stress_ksm_unmerge_scan_end_hist(stress_ksm_unmerge_scan_t *s, const uint64_t word)
{
	if (!s->end_hist)
		return;
	if ((word & PM_PFN_MASK) >= s->end)
		s->end_hist = false;
	else
		s->hist[stress_ksm_unmerge_scan_key(word, s->end) >> s->shift]++;
}

/*
 *  stress_ksm_unmerge_scan_entry()
 *	one present page's word in the current pass
 */
static inline void stress_ksm_unmerge_scan_entry(stress_ksm_unmerge_scan_t *s, const int mode,
	const uint64_t word)
{
	uint64_t *buf = s->ctx->pfns;
	uint64_t key;
	size_t i;

	if (mode == KSM_SCAN_FIRST) {
		if ((word & PM_PFN_MASK) >= s->m1)
			s->m1 = (word & PM_PFN_MASK) + 1;
		if (s->n < s->ctx->scan_cap) {
			/* fits so far: no signature needed, as no other pass follows */
			buf[s->n++] = word;
			if (word > s->max_word)
				s->max_word = word;
			return;
		}
		if (!s->over) {
			s->over = true;
			s->end_hist = s->end > 0;
			(void)shim_memset(s->hist, 0, KSM_UNMERGE_SCAN_BUCKETS * sizeof(*s->hist));
			for (i = 0; i < s->n; i++) {
				s->sig.sum += stress_ksm_unmerge_scan_mix(buf[i]);
				stress_ksm_unmerge_scan_end_hist(s, buf[i]);
			}
		}
		s->sig.sum += stress_ksm_unmerge_scan_mix(word);
		stress_ksm_unmerge_scan_end_hist(s, word);
		return;
	}
	s->sig.sum += stress_ksm_unmerge_scan_mix(word);
	if ((word & PM_PFN_MASK) >= s->m1)
		return;		/* not there in pass A: the signature differs */
	key = stress_ksm_unmerge_scan_key(word, s->m1);
	if (mode == KSM_SCAN_HIST) {
		if (key >= s->lo && key < s->hi)
			s->hist[(key - s->lo) >> s->shift]++;
	} else if (key >= s->lo && key < s->hi) {
		if (mode == KSM_SCAN_COUNT)
			buf[key - s->lo]++;
		else if (s->n < 2 * s->ctx->scan_cap)
			((uint32_t *)buf)[s->n++] = (uint32_t)(key - s->lo);
		else
			s->over = true;
	}
}

/*
 *  stress_ksm_unmerge_scan_moved()
 *	pure: did this pass see the region other than pass A did
 */
static inline bool stress_ksm_unmerge_scan_moved(const stress_ksm_unmerge_scan_t *s)
{
	return s->sig.present != s->sig0.present || s->sig.swapped != s->sig0.swapped ||
	       s->sig.sum != s->sig0.sum;
}

/*
 *  stress_ksm_unmerge_scan_pass()
 *	read the region's pagemap once (in chunks, stop checks between them),
 *	each present page's word to the pass's mode; its signature in s->sig
 */
static int stress_ksm_unmerge_scan_pass(stress_ksm_unmerge_scan_t *s, const int mode)
{
	stress_ksm_unmerge_ctx_t *ctx = s->ctx;
	size_t i, k;

	(void)shim_memset(&s->sig, 0, sizeof(s->sig));
	s->n = 0;
	s->over = false;
	ctx->scan_passes++;
	for (i = 0; i < ctx->npages; i += KSM_UNMERGE_PM_CHUNK) {
		const size_t n = STRESS_MINIMUM(KSM_UNMERGE_PM_CHUNK, ctx->npages - i);

		if (stress_ksm_unmerge_stop_seen(ctx, "page scan"))
			return -1;
		if (stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region + i * ctx->page_size,
				n, ctx->page_size, ctx->pagemap) < 0)
			return -1;
		for (k = 0; k < n; k++) {
			const uint64_t e = ctx->pagemap[k];

			if (!(e & PM_PRESENT)) {
				s->sig.swapped += !!(e & PM_SWAP);
				continue;
			}
			s->sig.present++;
			/* a shared pfn is never exclusive, so the bit does not split its group */
			stress_ksm_unmerge_scan_entry(s, mode, (e & PM_PFN_MASK) | (e & PM_EXCLUSIVE));
		}
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_scan_flush()
 *	hand the held-back group to the consumer (stop checks every 4096 groups)
 */
static int stress_ksm_unmerge_scan_flush(stress_ksm_unmerge_scan_t *s)
{
	const size_t n = s->pend_n;

	if (!n)
		return 0;
	s->pend_n = 0;
	if (!(++s->groups & 4095) && stress_ksm_unmerge_stop_seen(s->ctx, "page scan"))
		return -1;
	return s->fn(s->ctx, s->arg, s->pend_word, n);
}

/*
 *  stress_ksm_unmerge_scan_emit()
 *	n pages on word, in ascending word order; a pfn seen both shared and
 *	exclusive (it moved mid-scan) is one group where its two words meet,
 *	as in one sorted array
 */
static int stress_ksm_unmerge_scan_emit(stress_ksm_unmerge_scan_t *s, const uint64_t word, const size_t n)
{
	if (s->pend_n && (s->pend_word & PM_PFN_MASK) == (word & PM_PFN_MASK)) {
		s->pend_n += n;
		return 0;
	}
	if (stress_ksm_unmerge_scan_flush(s) < 0)
		return -1;
	s->pend_word = word;
	s->pend_n = n;
	return 0;
}

/*
 *  stress_ksm_unmerge_scan_sorted()
 *	pass A: sort the n words kept and emit their runs
 */
static int stress_ksm_unmerge_scan_sorted(stress_ksm_unmerge_scan_t *s, const uint64_t max_word)
{
	uint64_t *buf = s->ctx->pfns;
	size_t i, j;

	/* radix, not qsort: qsort was 2/3 of the stressor's user time */
	if (s->n > 1)
		stress_ksm_unmerge_pfn_sort(buf, s->n, max_word);
	for (i = 0; i < s->n; i = j) {
		for (j = i + 1; j < s->n && buf[j] == buf[i]; j++)
			;
		if (stress_ksm_unmerge_scan_emit(s, buf[i], j - i) < 0)
			return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_scan_offsets()
 *	window pass: sort the n offsets kept (keys less lo, 32 bits: twice as
 *	many as words) and emit their runs
 */
static int stress_ksm_unmerge_scan_offsets(stress_ksm_unmerge_scan_t *s)
{
	uint32_t *off = (uint32_t *)s->ctx->pfns;
	const uint64_t max = s->hi - 1 - s->lo;
	unsigned int shift = 0;
	size_t i, j;

	while (shift < 24 && (max >> (shift + 8)))
		shift += 8;
	if (s->n > 1)
		stress_ksm_unmerge_off_digit(off, s->n, shift);
	for (i = 0; i < s->n; i = j) {
		for (j = i + 1; j < s->n && off[j] == off[i]; j++)
			;
		if (stress_ksm_unmerge_scan_emit(s, stress_ksm_unmerge_scan_word(s->lo + off[i], s->m1), j - i) < 0)
			return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_scan_window()
 *	one window pass over keys [lo, hi): kept as offsets and sorted
 *	(hi - lo <= 2^32), or counted in place (hi - lo <= scan_cap); 1 if
 *	the region moved since pass A
 */
static int stress_ksm_unmerge_scan_window(stress_ksm_unmerge_scan_t *s, const uint64_t lo,
	const uint64_t hi, const bool count)
{
	uint64_t *buf = s->ctx->pfns;
	uint64_t k;

	s->lo = lo;
	s->hi = hi;
	if (count)
		(void)shim_memset(buf, 0, (size_t)(hi - lo) * sizeof(*buf));
	if (stress_ksm_unmerge_scan_pass(s, count ? KSM_SCAN_COUNT : KSM_SCAN_SORT) < 0)
		return -1;
	if (s->over || stress_ksm_unmerge_scan_moved(s))
		return 1;
	if (!count)
		return stress_ksm_unmerge_scan_offsets(s);
	for (k = lo; k < hi; k++) {
		if (buf[k - lo] && stress_ksm_unmerge_scan_emit(s, stress_ksm_unmerge_scan_word(k, s->m1),
				(size_t)buf[k - lo]) < 0)
			return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_scan_hist()
 *	histogram pass: keys [lo, hi) counted in buckets of 2^shift keys;
 *	1 if the region moved
 */
static int stress_ksm_unmerge_scan_hist(stress_ksm_unmerge_scan_t *s, const uint64_t lo,
	const uint64_t hi, uint64_t *hist, const size_t nb, const unsigned int shift)
{
	s->lo = lo;
	s->hi = hi;
	s->hist = hist;
	s->shift = shift;
	(void)shim_memset(hist, 0, nb * sizeof(*hist));
	if (stress_ksm_unmerge_scan_pass(s, KSM_SCAN_HIST) < 0)
		return -1;
	return stress_ksm_unmerge_scan_moved(s) ? 1 : 0;
}

/*
 *  stress_ksm_unmerge_scan_shift()
 *	pure: the least shift that puts keys [lo, hi) in nb buckets
 */
static unsigned int stress_ksm_unmerge_scan_shift(const uint64_t lo, const uint64_t hi, const size_t nb)
{
	unsigned int shift = 0;

	while (((hi - lo - 1) >> shift) >= nb)
		shift++;
	return shift;
}

static int stress_ksm_unmerge_scan_plan(stress_ksm_unmerge_scan_t *s, const uint64_t lo,
	const uint64_t hi, uint64_t *hist, const size_t nb);

/*
 *  stress_ksm_unmerge_scan_cut()
 *	keys [lo, hi) in key order from their histogram (buckets of 2^shift
 *	keys): windows of buckets added while their pages fit the buffer as
 *	offsets (kept and sorted; 2^32 keys at most) or their keys fit it as
 *	counters (counted in place); a bucket that fits neither is planned
 *	again, finer (keys are below 2^56: 7 levels at most); 1 if the
 *	region moved
 */
static int stress_ksm_unmerge_scan_cut(stress_ksm_unmerge_scan_t *s, const uint64_t lo,
	const uint64_t hi, const uint64_t *hist, const size_t nb, const unsigned int shift)
{
	const uint64_t cap = s->ctx->scan_cap, width = 1ULL << shift;
	size_t b0, b1;
	int ret = 0;

	for (b0 = 0; !ret && b0 < nb && lo + b0 * width < hi; b0 = b1) {
		uint64_t wlo, sum = 0;

		if (!hist[b0]) {
			b1 = b0 + 1;	/* nothing there: no pass */
			continue;
		}
		wlo = lo + b0 * width;
		for (b1 = b0; b1 < nb && lo + b1 * width < hi &&
		     ((sum + hist[b1] <= 2 * cap && (b1 + 1 - b0) * width <= KSM_UNMERGE_SCAN_OFF_KEYS) ||
		      (b1 + 1 - b0) * width <= cap); b1++)
			sum += hist[b1];
		if (b1 == b0) {
			/* more pages and more keys than the buffer holds: finer */
			uint64_t sub[KSM_UNMERGE_SCAN_SUB];

			b1 = b0 + 1;
			ret = stress_ksm_unmerge_scan_plan(s, wlo, STRESS_MINIMUM(wlo + width, hi), sub,
				KSM_UNMERGE_SCAN_SUB);
		} else {
			ret = stress_ksm_unmerge_scan_window(s, wlo, STRESS_MINIMUM(lo + b1 * width, hi),
				sum > 2 * cap);
		}
	}
	return ret;
}

/*
 *  stress_ksm_unmerge_scan_plan()
 *	keys [lo, hi) in key order: a histogram pass, then the windows cut
 *	from it; 1 if the region moved
 */
static int stress_ksm_unmerge_scan_plan(stress_ksm_unmerge_scan_t *s, const uint64_t lo,
	const uint64_t hi, uint64_t *hist, const size_t nb)
{
	const unsigned int shift = stress_ksm_unmerge_scan_shift(lo, hi, nb);
	const int ret = stress_ksm_unmerge_scan_hist(s, lo, hi, hist, nb, shift);

	return ret ? ret : stress_ksm_unmerge_scan_cut(s, lo, hi, hist, nb, shift);
}

/*
 *  stress_ksm_unmerge_pfn_end()
 *	where the machine's pfns end (kpageflags reads nothing past it), 0
 *	if unknown
 */
static uint64_t stress_ksm_unmerge_pfn_end(const int kpageflags_fd)
{
	uint64_t lo = 0, hi = PM_PFN_MASK + 1, flags;

	if (kpageflags_fd < 0 || pread(kpageflags_fd, &flags, sizeof(flags), 0) != sizeof(flags))
		return 0;
	/* pfn lo reads, pfn hi does not */
	while (hi - lo > 1) {
		const uint64_t mid = lo + (hi - lo) / 2;

		if (pread(kpageflags_fd, &flags, sizeof(flags), (off_t)(mid * sizeof(flags))) == sizeof(flags))
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/*
 *  stress_ksm_unmerge_scan_try()
 *	one scan: pass A, then its words or the windows; 1 if the region moved
 */
static int stress_ksm_unmerge_scan_try(stress_ksm_unmerge_scan_t *s)
{
	int ret;

	s->m1 = 0;
	s->end_hist = false;
	s->max_word = 0;
	s->pend_n = 0;
	s->groups = 0;
	s->hist = s->ctx->pfns + s->ctx->scan_cap;
	/* past the buffer, pass A also takes the histogram, over all the machine's pfns */
	s->end = (s->ctx->npages > s->ctx->scan_cap) ? stress_ksm_unmerge_pfn_end(s->ctx->kpageflags_fd) : 0;
	s->shift = s->end ? stress_ksm_unmerge_scan_shift(0, 2 * s->end, KSM_UNMERGE_SCAN_BUCKETS) : 0;
	s->first_secs = stress_time_now();
	if (stress_ksm_unmerge_scan_pass(s, KSM_SCAN_FIRST) < 0)
		return -1;
	s->first_secs = stress_time_now() - s->first_secs;
	s->sig0 = s->sig;
	s->ctx->scan_swapped = s->sig.swapped;
	if (!s->over) {
		ret = stress_ksm_unmerge_scan_sorted(s, s->max_word);
	} else if (s->end_hist) {
		s->m1 = s->end;
		ret = stress_ksm_unmerge_scan_cut(s, 0, 2 * s->end, s->hist, KSM_UNMERGE_SCAN_BUCKETS, s->shift);
	} else {
		ret = stress_ksm_unmerge_scan_plan(s, 0, 2 * s->m1, s->hist, KSM_UNMERGE_SCAN_BUCKETS);
	}
	if (ret)
		return ret;
	return stress_ksm_unmerge_scan_flush(s);
}

/*
 *  stress_ksm_unmerge_region_groups()
 *	hand every group of region pages sharing a pfn to fn, in ascending
 *	word order (see above); -1 without PFNs, at the end of the run or if
 *	the region kept moving
 */
static int stress_ksm_unmerge_region_groups(stress_ksm_unmerge_ctx_t *ctx,
	const stress_ksm_unmerge_group_fn fn, void *arg)
{
	stress_ksm_unmerge_scan_t s;
	const double t0 = stress_time_now();
	int tries, ret = 1;

	ctx->scan_swapped = 0;
	ctx->scan_passes = 0;
	if (!ctx->have_pfns || !ctx->scan_cap)
		return -1;
	(void)shim_memset(&s, 0, sizeof(s));
	s.ctx = ctx;
	s.fn = fn;
	s.arg = arg;
	for (tries = 0; tries < KSM_UNMERGE_SCAN_TRIES && ret > 0; tries++) {
		/* a group of 0 pages: the consumer forgets what it has seen */
		if (tries && fn(ctx, arg, 0, 0) < 0)
			return -1;
		ret = stress_ksm_unmerge_scan_try(&s);
	}
	if (ret > 0) {
		/* a skipped pfn check is said: the first at info level, the rest with -v */
		static uint64_t skipped;

		skipped++;
		if (skipped == 1)
			pr_inf("%s: cycle %" PRIu64 ": the region's pages kept moving during %d page scans "
				"of %zu passes each: not checked by pfn this time (later ones only with -v)\n",
				ctx->args->name, ctx->cycle, KSM_UNMERGE_SCAN_TRIES,
				ctx->scan_passes / KSM_UNMERGE_SCAN_TRIES);
		else
			pr_dbg("%s: cycle %" PRIu64 ": the region's pages kept moving: not checked by pfn "
				"this time (%" PRIu64 " such cycles so far)\n", ctx->args->name, ctx->cycle, skipped);
	} else if (!ret && ctx->scan_passes > 1)
		pr_dbg("%s: cycle %" PRIu64 ": page scan in %zu pagemap passes (%d tries), %.1f ms, "
			"pass A %.1f ms\n", ctx->args->name, ctx->cycle, ctx->scan_passes, tries,
			(stress_time_now() - t0) * 1000.0, s.first_secs * 1000.0);
	return ret ? -1 : 0;
}

/*
 *  stress_ksm_unmerge_scan_buf_words()
 *	pure: words to allocate for the scan of npages: the buffer (no more
 *	than the region) and, if it can overflow, the histogram
 */
static size_t stress_ksm_unmerge_scan_buf_words(const size_t npages, const size_t cap)
{
	return (npages <= cap) ? (npages ? npages : 1) : cap + KSM_UNMERGE_SCAN_BUCKETS;
}

/*
 *  stress_ksm_unmerge_scan_alloc()
 *	the scan's buffer for ctx's region (NULL if out of memory)
 */
static uint64_t *stress_ksm_unmerge_scan_alloc(stress_ksm_unmerge_ctx_t *ctx)
{
	ctx->scan_cap = KSM_UNMERGE_SCAN_CAP;
	return calloc(stress_ksm_unmerge_scan_buf_words(ctx->npages, ctx->scan_cap), sizeof(uint64_t));
}

/*
 *  stress_ksm_unmerge_group_what()
 *	what the n region pages on word are; kpageflags read once per group
 *	(singles sampled if asked: then judged without it)
 */
static int stress_ksm_unmerge_group_what(stress_ksm_unmerge_ctx_t *ctx, const uint64_t word,
	const size_t n, const bool sample, size_t *distinct, uint64_t *flags)
{
	const uint64_t pfn = word & PM_PFN_MASK;

	*flags = 0;
	/* shared pfns are always checked; singles sampled unless verifying */
	if ((n > 1) || !sample || (((*distinct)++ & 7) == (ctx->cycle & 7)) ||
	    (ctx->zero_pfn && pfn == ctx->zero_pfn))
		*flags = stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, pfn);
	return stress_ksm_unmerge_what(ctx->zero_pfn, PM_PRESENT | word, *flags, n);
}

/* What region_scan counts */
typedef struct {
	bool sample;			/* sample the singles' kpageflags */
	size_t distinct;
	uint64_t ksm, zero;
	size_t present;
} stress_ksm_unmerge_count_t;

/*
 *  stress_ksm_unmerge_count_group()
 *	region_scan's consumer: count one group
 */
static int stress_ksm_unmerge_count_group(stress_ksm_unmerge_ctx_t *ctx, void *arg,
	const uint64_t word, const size_t n)
{
	stress_ksm_unmerge_count_t *c = (stress_ksm_unmerge_count_t *)arg;
	uint64_t flags;

	if (!n) {
		*c = (stress_ksm_unmerge_count_t){ .sample = c->sample };
		return 0;
	}
	switch (stress_ksm_unmerge_group_what(ctx, word, n, c->sample, &c->distinct, &flags)) {
	case KSM_PAGE_ZERO:
		/* without use_zero_pages it is a read-faulted hole, not KSM's */
		if (ctx->ksm_zero)
			c->zero += n;
		break;
	case KSM_PAGE_KSM:
		c->ksm += n;
		c->present += n;
		break;
	default:
		c->present += n;
		break;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_region_scan()
 *	count KSM pages and KSM zero pages in the region (stress_ksm_unmerge_what:
 *	the self-tested signals), reading kpageflags once per distinct pfn
 *	(singles sampled if asked); *present counts present pages that are
 *	not the zero page
 */
static int stress_ksm_unmerge_region_scan(stress_ksm_unmerge_ctx_t *ctx,
	const bool sample, uint64_t *ksm, uint64_t *zero, size_t *present)
{
	stress_ksm_unmerge_count_t c = { .sample = sample };
	const int ret = stress_ksm_unmerge_region_groups(ctx, stress_ksm_unmerge_count_group, &c);

	*ksm = ret ? 0 : c.ksm;
	*zero = ret ? 0 : c.zero;
	*present = ret ? 0 : c.present;
	return ret;
}

/*
 *  stress_ksm_unmerge_phase_set()
 *	enter a cycle phase; racers see it and may act on it
 */
static void stress_ksm_unmerge_phase_set(stress_ksm_unmerge_ctx_t *ctx, const int phase);

/*
 *  stress_ksm_unmerge_counter_source()
 *	best source of merged-page counts: per-process counters that cover the
 *	pattern's pages, else pagemap (root), else whatever counter there is
 */
static int stress_ksm_unmerge_counter_source(const bool ksm_stat, const bool stat_has_zero,
	const bool merging_pages, const bool pfns, const bool need_zero)
{
	if (ksm_stat && (stat_has_zero || !need_zero))
		return KSM_COUNTERS_KSM_STAT;
	if (merging_pages && !need_zero)
		return KSM_COUNTERS_MERGING_PAGES;
	if (pfns)
		return KSM_COUNTERS_PAGEMAP;
	if (ksm_stat)
		return KSM_COUNTERS_KSM_STAT;
	return merging_pages ? KSM_COUNTERS_MERGING_PAGES : KSM_COUNTERS_NONE;
}

/*
 *  stress_ksm_unmerge_merged_now()
 *	pages of this process merged now (KSM pages in *merging, KSM zero pages in *zero)
 */
static uint64_t stress_ksm_unmerge_merged_now(stress_ksm_unmerge_ctx_t *ctx,
	int64_t *merging, int64_t *zero)
{
	if (ctx->counters == KSM_COUNTERS_PAGEMAP) {
		if (stress_ksm_unmerge_region_scan(ctx, false, &ctx->last_scan.ksm, &ctx->last_scan.zero,
				&ctx->last_scan.present) < 0) {
			ctx->last_scan.ksm = ctx->last_scan.zero = 0;
			ctx->last_scan.cycle = 0;
		} else {
			ctx->last_scan.cycle = ctx->cycle;
		}
		*merging = (int64_t)ctx->last_scan.ksm;
		*zero = (int64_t)ctx->last_scan.zero;
	} else {
		(void)stress_ksm_unmerge_counters(ctx, merging, zero);
	}
	return (uint64_t)(*merging > 0 ? *merging : 0) + (uint64_t)(*zero > 0 ? *zero : 0);
}

/*
 *  stress_ksm_unmerge_region_merged()
 *	counters say enough is merged: check the region itself holds it (the
 *	counters also count other mergeable memory under prctl or the
 *	sparse and thp racers)
 */
static bool stress_ksm_unmerge_region_merged(stress_ksm_unmerge_ctx_t *ctx, const uint64_t want)
{
	if (!ctx->have_pfns || ctx->counters == KSM_COUNTERS_PAGEMAP)
		return true;
	if (stress_ksm_unmerge_region_scan(ctx, false, &ctx->last_scan.ksm, &ctx->last_scan.zero,
			&ctx->last_scan.present) < 0)
		return true;
	ctx->last_scan.cycle = ctx->cycle;
	return ctx->last_scan.ksm + ctx->last_scan.zero >= want;
}

/*
 *  stress_ksm_unmerge_merge_wait()
 *	sleeping wait for ksmd to merge the prediction; 1 merged, 0 partial
 *	or timeout, -1 stopped by the end of the run
 */
static int stress_ksm_unmerge_merge_wait(stress_ksm_unmerge_ctx_t *ctx, const double bound,
	int64_t *merging, int64_t *zero)
{
	const double t0 = stress_time_now();
	const uint64_t want = ctx->expect_merged + ctx->expect_zero;
	uint64_t scans0 = stress_ksm_unmerge_full_scans(ctx);
	uint64_t stale_scans, last_total = 0, stable_scans = 0, last_scans = scans0;
	uint64_t sleep_ns = 500000;
	int64_t m0, z0;

	ctx->wait_timed_out = false;
	/* counts left from the last unmerge drain lazily: need a fresh full pass */
	(void)stress_ksm_unmerge_counters(ctx, &m0, &z0);
	stale_scans = (m0 > 0 && ctx->counters != KSM_COUNTERS_PAGEMAP) ? 2 : 0;
	for (;;) {
		uint64_t scans = stress_ksm_unmerge_full_scans(ctx), total;
		const double now = stress_time_now();

		if (stress_ksm_unmerge_ending(ctx))
			return -1;
		if (scans < scans0)
			scans0 = scans;		/* run=2 by someone else reset the count */
		ctx->last_scan.cycle = 0;	/* only a scan that ends the wait is kept */
		total = stress_ksm_unmerge_merged_now(ctx, merging, zero);
		/* a page scan the merging pages kept moving under counts nothing */
		if (scans - scans0 >= stale_scans &&
		    (ctx->counters != KSM_COUNTERS_PAGEMAP || ctx->last_scan.cycle)) {
			if (want && total >= want && stress_ksm_unmerge_region_merged(ctx, want))
				return 1;
			if (scans != last_scans) {
				stable_scans = (total == last_total) ? stable_scans + 1 : 0;
				last_total = total;
				last_scans = scans;
			}
			/* nothing more will merge: unique pages or pinned pages */
			if (scans - scans0 >= 3 && (stable_scans >= 2 || !want))
				return want ? 0 : 1;
		}
		if (now - t0 > bound) {
			ctx->wait_timed_out = true;
			return 0;
		}
		(void)shim_nanosleep_uint64(sleep_ns);
		if (sleep_ns < 4000000)
			sleep_ns += sleep_ns / 2;
	}
}

/*
 *  stress_ksm_unmerge_fail()
 *	report a verification failure and count it
 */
static void stress_ksm_unmerge_fail(stress_ksm_unmerge_ctx_t *ctx)
{
	ctx->st->failures++;
}

/*
 *  stress_ksm_unmerge_verify_merge()
 *	the region really holds the predicted KSM pages and zero pages
 */
static int stress_ksm_unmerge_verify_merge(stress_ksm_unmerge_ctx_t *ctx,
	const int waited, uint64_t *ksm, uint64_t *zero)
{
	stress_args_t *args = ctx->args;
	size_t present;

	if (ctx->last_scan.cycle == ctx->cycle) {
		/* the scan that ended the merge wait: no need to read it all again */
		*ksm = ctx->last_scan.ksm;
		*zero = ctx->last_scan.zero;
		present = ctx->last_scan.present;
	} else if (stress_ksm_unmerge_region_scan(ctx, false, ksm, zero, &present) < 0) {
		return 0;	/* no PFNs (not root): counters only */
	}
	/* swapped-out pages (pagemap bit 62) are not missing */
	if (!ctx->racers_disturb_layout && present + *zero + ctx->scan_swapped != ctx->npages) {
		pr_fail("%s: %zu of %zu pages present or swapped out after merge, expected all\n",
			args->name, present + (size_t)*zero + ctx->scan_swapped, ctx->npages);
		return -1;
	}
	/*
	 * A zero-filled page that ksmd could not swap for the zero page (a
	 * raised refcount: migration, a pin) goes on to merge as an ordinary
	 * KSM page (mm/ksm.c, cmp_and_merge_page), so the zero-kind pages
	 * bound only the sum, not the KSM pages alone
	 */
	if (*zero > ctx->expect_zero || *ksm + *zero > ctx->expect_merged + ctx->expect_zero) {
		pr_fail("%s: %" PRIu64 " KSM pages and %" PRIu64 " KSM zero pages merged, "
			"pattern %s allows at most %" PRIu64 " in all, %" PRIu64 " of them zero pages\n",
			args->name, *ksm, *zero, stress_ksm_unmerge_patterns[ctx->pattern],
			ctx->expect_merged + ctx->expect_zero, ctx->expect_zero);
		return -1;
	}
	if (*ksm > ctx->expect_merged)
		pr_dbg("%s: cycle %" PRIu64 ": %" PRIu64 " zero-filled pages merged as ordinary KSM "
			"pages, not onto the zero page\n", args->name, ctx->cycle, *ksm - ctx->expect_merged);
	if (waited > 0 && !ctx->racers_disturb_counts &&
	    (*ksm < ctx->expect_merged || *ksm + *zero < ctx->expect_merged + ctx->expect_zero)) {
		pr_fail("%s: ksmd reported the merge complete but the region has %" PRIu64
			" KSM pages and %" PRIu64 " KSM zero pages, expected %" PRIu64 " and %" PRIu64 "\n",
			args->name, *ksm, *zero, ctx->expect_merged, ctx->expect_zero);
		return -1;
	}
	return 0;
}

/* A page that may still be a KSM page after the unmerge, and the signals saying so */
typedef struct {
	uint64_t pfn;
	size_t sharers;			/* region pages on it */
	bool kpf;			/* A: KPF_KSM set (trusted) */
	bool mapping;			/* B: pfn shared in the region, or not exclusive */
} stress_ksm_unmerge_suspect_t;

#define KSM_UNMERGE_SUSPECTS	(4)	/* suspects confirmed by a write, per cycle */

/*
 *  stress_ksm_unmerge_cow_probe()
 *	C: does a write (an atomic OR of 0: data unchanged) move region page
 *	i to a new frame, as a write to a KSM page must; 0 if it stayed or
 *	cannot be written (uffd-wp armed), 1 moved; *after its new pfn
 */
static int stress_ksm_unmerge_cow_probe(stress_ksm_unmerge_ctx_t *ctx, const size_t i, uint64_t *after)
{
	const uint64_t e0 = stress_ksm_unmerge_pm_entry(ctx, i);
	uint64_t e1;

	*after = 0;
	if (!(e0 & PM_PRESENT) || (e0 & PM_UFFD_WP))
		return 0;
	(void)__atomic_fetch_or((uint64_t *)(ctx->region + i * ctx->page_size), 0, __ATOMIC_SEQ_CST);
	e1 = stress_ksm_unmerge_pm_entry(ctx, i);
	*after = stress_ksm_unmerge_pm_pfn(e1);
	return *after && *after != (e0 & PM_PFN_MASK);
}

/*
 *  stress_ksm_unmerge_disagree()
 *	kernel signals disagree: say so once per run, with the numbers; not a failure
 */
static void FORMAT(printf, 2, 3) stress_ksm_unmerge_disagree(stress_ksm_unmerge_ctx_t *ctx, const char *fmt, ...)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	char buf[384];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (sh && !__atomic_exchange_n(&sh->disagree_reported, true, __ATOMIC_SEQ_CST))
		pr_inf("%s: signals disagree (cycle %" PRIu64 "): %s; not counted as an unmerge failure\n",
			ctx->args->name, ctx->cycle, buf);
	else
		pr_dbg("%s: signals disagree (cycle %" PRIu64 "): %s\n", ctx->args->name, ctx->cycle, buf);
}

/*
 *  stress_ksm_unmerge_suspects_judge()
 *	a suspect is still a KSM page only if two of its signals agree
 *	(A: KPF_KSM, B: pfn sharing or exclusive bit, C: a write moves it;
 *	B by the exclusive bit alone with C only where KPF_KSM lies)
 */
static int stress_ksm_unmerge_suspects_judge(stress_ksm_unmerge_ctx_t *ctx,
	const stress_ksm_unmerge_suspect_t *sus, const size_t nsus, const uint64_t total,
	const uint64_t kpf_pages, const uint64_t ksm_before, const int64_t cow_delta)
{
	size_t k, first = ctx->npages, second;
	int64_t merging = -1, zero = -1;
	uint64_t after = 0;

	for (k = 0; k < nsus && k < KSM_UNMERGE_SUSPECTS; k++) {
		const stress_ksm_unmerge_suspect_t *s = &sus[k];
		int moved;

		stress_ksm_unmerge_pfn_pages(ctx, s->pfn, &first, &second);
		if (first >= ctx->npages)
			continue;	/* gone since the scan */
		moved = (s->kpf && s->mapping) ? 1 : stress_ksm_unmerge_cow_probe(ctx, first, &after);
		/*
		 * a write also moves a page a fork child shares (not exclusive):
		 * that with C alone counts only where KPF_KSM cannot be asked
		 */
		if ((s->kpf && s->mapping) ||
		    (moved && (s->kpf || s->sharers > 1 || !stress_ksm_unmerge_iface_cur ||
			       !stress_ksm_unmerge_iface_cur->kpf_ksm))) {
			pr_fail("%s: page %zu is still a KSM page after unmerge: pfn %#" PRIx64 " mapped by %zu "
				"region page(s)%s, KPF_KSM %s%s (%" PRIu64 " such pages)\n", ctx->args->name,
				first, s->pfn, s->sharers, s->mapping ? " and not exclusive" : "",
				s->kpf ? "set" : "clear or not trusted",
				(moved && !(s->kpf && s->mapping)) ? "; a write moved it to a new frame" : "", total);
			if (s->sharers > 1)
				pr_fail("%s: page %zu still shares pfn %#" PRIx64 " with page %zu after unmerge\n",
					ctx->args->name, second, s->pfn, first);
			return -1;
		}
	}
	(void)stress_ksm_unmerge_counters(ctx, &merging, &zero);
	stress_ksm_unmerge_disagree(ctx, "kpageflags says %" PRIu64 " KSM pages, %" PRIu64 " pages are "
		"flagged by one signal only, ksm_merging_pages says %" PRId64 " (drains lazily), cow_ksm moved "
		"by %" PRId64 " for %" PRIu64 " merged, and a write kept page %zu in its frame",
		kpf_pages, total, merging, cow_delta, ksm_before, first);
	return 0;
}

/* What verify_pfns gathers from the groups */
typedef struct {
	stress_ksm_unmerge_suspect_t sus[KSM_UNMERGE_SUSPECTS];
	size_t nsus, distinct;
	uint64_t zero, total, kpf_pages, zero_pfn;
} stress_ksm_unmerge_pfns_t;

/*
 *  stress_ksm_unmerge_pfns_group()
 *	verify_pfns' consumer: a KSM zero page, or a suspect (KPF_KSM, or
 *	the pfn shared or not exclusive), counted; the first few kept
 */
static int stress_ksm_unmerge_pfns_group(stress_ksm_unmerge_ctx_t *ctx, void *arg,
	const uint64_t word, const size_t n)
{
	const stress_ksm_unmerge_iface_t *ifc = stress_ksm_unmerge_iface_cur ?
		stress_ksm_unmerge_iface_cur : &stress_ksm_unmerge_iface_default;
	stress_ksm_unmerge_pfns_t *p = (stress_ksm_unmerge_pfns_t *)arg;
	uint64_t flags;
	int what;
	bool kpf, mapping;

	if (!n) {
		(void)shim_memset(p, 0, sizeof(*p));
		return 0;
	}
	what = stress_ksm_unmerge_group_what(ctx, word, n, !ctx->verify, &p->distinct, &flags);
	kpf = ifc->kpf_ksm && (flags & STRESS_BIT_ULL(KPF_BIT_KSM));
	mapping = (n > 1) || (ifc->excl && !(word & PM_EXCLUSIVE));
	if (what == KSM_PAGE_ZERO) {
		if (ctx->ksm_zero) {
			p->zero += n;
			p->zero_pfn = word & PM_PFN_MASK;
		}
	} else if (kpf || mapping) {
		if (p->nsus < KSM_UNMERGE_SUSPECTS)
			p->sus[p->nsus++] = (stress_ksm_unmerge_suspect_t){ word & PM_PFN_MASK, n, kpf, mapping };
		p->total += n;
	}
	p->kpf_pages += (flags & STRESS_BIT_ULL(KPF_BIT_KSM)) ? n : 0;
	return 0;
}

/*
 *  stress_ksm_unmerge_verify_pfns()
 *	after unmerge: no KSM page (by two agreeing signals, see
 *	suspects_judge) and, where unmerge unshares them (6.4+), no KSM zero page
 */
static int stress_ksm_unmerge_verify_pfns(stress_ksm_unmerge_ctx_t *ctx, const uint64_t ksm_before,
	const int64_t cow_delta)
{
	const stress_ksm_unmerge_iface_t *ifc = stress_ksm_unmerge_iface_cur ?
		stress_ksm_unmerge_iface_cur : &stress_ksm_unmerge_iface_default;
	stress_ksm_unmerge_pfns_t p;

	(void)shim_memset(&p, 0, sizeof(p));
	if (stress_ksm_unmerge_region_groups(ctx, stress_ksm_unmerge_pfns_group, &p) < 0)
		return 0;
	if (p.zero && ifc->zero_unshare) {
		size_t first, second;

		stress_ksm_unmerge_pfn_pages(ctx, p.zero_pfn, &first, &second);
		pr_fail("%s: page %zu still maps the KSM zero page after unmerge (%" PRIu64 " such pages)\n",
			ctx->args->name, first, p.zero);
		return -1;
	}
	if (p.zero)
		pr_dbg("%s: %" PRIu64 " KSM zero pages still mapped after unmerge: kept by design before 6.4\n",
			ctx->args->name, p.zero);
	if (!p.nsus)
		return 0;
	return stress_ksm_unmerge_suspects_judge(ctx, p.sus, p.nsus, p.total, p.kpf_pages, ksm_before, cow_delta);
}

/*
 *  stress_ksm_unmerge_verify_data()
 *	every page (or a rotating 1/16 without --verify) holds its bytes
 */
static int stress_ksm_unmerge_verify_data(stress_ksm_unmerge_ctx_t *ctx)
{
	const size_t step = ctx->verify ? 1 : 16;
	size_t i;

	for (i = (size_t)(ctx->cycle % step); i < ctx->npages; i += step) {
		const uint8_t *page = ctx->region + i * ctx->page_size;
		ssize_t off;

		if (!(i & (KSM_UNMERGE_FILL_PAGES - 1)) && stress_ksm_unmerge_stop_seen(ctx, "data check"))
			return 0;
		off = stress_ksm_unmerge_page_check(ctx, i, page);
		if (off >= 0) {
			pr_fail("%s: data corrupted after unmerge: page %zu byte %zd is 0x%02x "
				"(pattern %s)\n", ctx->args->name, i, off, page[off],
				stress_ksm_unmerge_patterns[ctx->pattern]);
			return -1;
		}
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_verify_unmerge()
 *	pages really unshared, data intact, VMA flags kept, cow_ksm counted
 */
static int stress_ksm_unmerge_verify_unmerge(stress_ksm_unmerge_ctx_t *ctx,
	const uint64_t ksm_before, const int64_t cow_delta)
{
	stress_args_t *args = ctx->args;
	int64_t merging, zero;
	char vmflags[256];

	if (stress_ksm_unmerge_verify_pfns(ctx, ksm_before, cow_delta) < 0)
		return -1;
	if (stress_ksm_unmerge_verify_data(ctx) < 0)
		return -1;
	if ((stress_ksm_unmerge_counters(ctx, &merging, &zero) == 0) && (zero > 0) && ctx->ksm_zero &&
	    ctx->iface && ctx->iface->zero_unshare) {
		/* the region's pages were checked above: a count alone is not a failure */
		if (ctx->have_pfns) {
			stress_ksm_unmerge_disagree(ctx, "ksm_zero_pages is %" PRId64 " right after unmerge, "
				"but no region page maps the zero page", zero);
		} else {
			pr_fail("%s: ksm_zero_pages is %" PRId64 " right after unmerge, expected 0\n",
				args->name, zero);
			return -1;
		}
	}
	if (!ctx->racers_disturb_layout && ctx->vmflags_before[0] &&
	    (ctx->verify || (ctx->cycle & 7) == 0) &&
	    (stress_ksm_unmerge_vmflags(ctx->region, vmflags, sizeof(vmflags)) == 0) &&
	    strcmp(vmflags, ctx->vmflags_before)) {
		pr_fail("%s: VMA flags changed by merge/unmerge: before '%s', after '%s'\n",
			args->name, ctx->vmflags_before, vmflags);
		return -1;
	}
	if (!ctx->racers_disturb_layout && cow_delta >= 0 && (uint64_t)cow_delta < ksm_before &&
	    ctx->iface && ctx->iface->cow_ksm) {
		/* pages verified private above: a short count is a disagreement, not a failure */
		if (ctx->have_pfns) {
			stress_ksm_unmerge_disagree(ctx, "cow_ksm grew by %" PRId64 " during the unmerge of %"
				PRIu64 " KSM pages, but every region page is private", cow_delta, ksm_before);
		} else {
			pr_fail("%s: cow_ksm grew by %" PRId64 " during unmerge of %" PRIu64 " KSM pages\n",
				args->name, cow_delta, ksm_before);
			return -1;
		}
	}
	return 0;
}
