/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-stressor.c: cmocka unit tests of stress-ksm-unmerge.c's
 * own logic: the method, pattern and option names (and their parse by the
 * shim), what each method runs, the page patterns and their checks, the
 * merge prediction, the counter parser and its file reader, the kernel
 * version, VmFlags words, and the end-of-run report (pr_inf output
 * captured from stdout): lines kept out of the 10 and 12 field shapes
 * LKP's parser takes for metrics rows, racer lines, latency spreads.
 */
#include "../../stress-ksm-unmerge.c"

#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/utsname.h>
#include <setjmp.h>
#include <cmocka.h>

#define T_PAGE		(4096)
#define T_OUT_MAX	(65536)

/* stdout or stderr redirected into a memfd */
typedef struct {
	int fd, saved, memfd;
} t_capture_t;

/*
 *  t_capture_begin()
 *	send fd's output to a fresh memfd
 */
static void t_capture_begin(t_capture_t *c, const int fd)
{
	(void)fflush(NULL);
	c->fd = fd;
	c->saved = dup(fd);
	c->memfd = shim_memfd_create("t-capture", 0);
	assert_true(c->saved >= 0 && c->memfd >= 0);
	assert_int_equal(dup2(c->memfd, fd), fd);
}

/*
 *  t_capture_end()
 *	put fd back; what was written to it, NUL terminated (static buffer)
 */
static const char *t_capture_end(t_capture_t *c)
{
	static char out[T_OUT_MAX];
	ssize_t n;

	(void)fflush(NULL);
	assert_int_equal(dup2(c->saved, c->fd), c->fd);
	n = pread(c->memfd, out, sizeof(out) - 1, 0);
	assert_true(n >= 0);
	out[n] = '\0';
	(void)close(c->saved);
	(void)close(c->memfd);
	return out;
}

/*
 *  t_fields()
 *	whitespace separated fields of a line (as LKP's parser splits it)
 */
static int t_fields(const char *line, const size_t len)
{
	int n = 0;
	size_t i;

	for (i = 0; i < len; i++)
		n += !isspace((unsigned char)line[i]) && (i == 0 || isspace((unsigned char)line[i - 1]));
	return n;
}

/*
 *  t_ctx()
 *	a context holding n pages of pattern, filled as the stressor fills them
 */
static stress_ksm_unmerge_ctx_t *t_ctx(const int pattern, const size_t n, const uint64_t seed)
{
	stress_ksm_unmerge_ctx_t *ctx = calloc(1, sizeof(*ctx));
	size_t i;

	assert_non_null(ctx);
	ctx->page_size = T_PAGE;
	ctx->npages = n;
	ctx->pattern = pattern;
	ctx->seed = seed;
	ctx->templates = calloc(KSM_FEW_TEMPLATES + 1, T_PAGE);
	ctx->region = calloc(n, T_PAGE);
	assert_non_null(ctx->templates);
	assert_non_null(ctx->region);
	stress_ksm_unmerge_templates_fill(ctx);
	for (i = 0; i < n; i++)
		stress_ksm_unmerge_page_fill(ctx, i, ctx->region + i * T_PAGE);
	stress_ksm_unmerge_expect(ctx);
	return ctx;
}

/*
 *  t_ctx_free()
 *	release a t_ctx()
 */
static void t_ctx_free(stress_ksm_unmerge_ctx_t *ctx)
{
	free(ctx->templates);
	free(ctx->region);
	free(ctx);
}

/*
 *  test_names()
 *	methods (all, madvise, prctl, the racer table in order), patterns, unique names, 22-column help
 */
static void test_names(void **state)
{
	static const char * const fixed[] = { "all", "madvise", "prctl" };
	size_t i, j;

	(void)state;
	for (i = 0; i < 3; i++)
		assert_string_equal(stress_ksm_unmerge_method(i), fixed[i]);
	for (i = 0; i < KSM_RACERS; i++) {
		const stress_ksm_unmerge_racer_t *r = &stress_ksm_unmerge_racers[i];

		assert_non_null(r->name);
		assert_non_null(r->evidence);
		assert_non_null(r->desc);
		assert_ptr_equal(stress_ksm_unmerge_method(3 + i), r->name);
	}
	assert_null(stress_ksm_unmerge_method(3 + KSM_RACERS));
	assert_null(stress_ksm_unmerge_method(1000));
	for (i = 0; stress_ksm_unmerge_method(i); i++)
		for (j = i + 1; stress_ksm_unmerge_method(j); j++)
			assert_string_not_equal(stress_ksm_unmerge_method(i), stress_ksm_unmerge_method(j));
	assert_string_equal(stress_ksm_unmerge_method(3 + KSM_RACERS - 1), "fork-zero");

	assert_string_equal(stress_ksm_unmerge_pattern(KSM_PATTERN_SAME), "same");
	assert_string_equal(stress_ksm_unmerge_pattern(KSM_PATTERN_FEW), "few");
	assert_string_equal(stress_ksm_unmerge_pattern(KSM_PATTERN_ZERO), "zero");
	assert_string_equal(stress_ksm_unmerge_pattern(KSM_PATTERN_MIXED), "mixed");
	assert_string_equal(stress_ksm_unmerge_pattern(KSM_PATTERN_UNIQUE), "unique");
	assert_null(stress_ksm_unmerge_pattern(KSM_PATTERN_UNIQUE + 1));

	/* "--%-22s": a longer option runs into its description */
	for (i = 0; help[i].opt_l; i++)
		assert_true(strlen(help[i].opt_l) < 22);
	/* every option has a help row */
	for (i = 0; opts[i].opt_name; i++) {
		for (j = 0; help[j].opt_l; j++)
			if (!strncmp(help[j].opt_l, opts[i].opt_name, strlen(opts[i].opt_name)) &&
			    help[j].opt_l[strlen(opts[i].opt_name)] == ' ')
				break;
		assert_non_null(help[j].opt_l);
	}
}

/*
 *  t_parse()
 *	the setting's index after the shim parses "--opt value", or -1 (its stderr line in *err)
 */
static ssize_t t_parse(const char *opt, const char *value, const char **err)
{
	const char *argv[] = { "stress-ksm-unmerge", "--ksm-unmerge", "1", opt, value, NULL };
	stress_shim_config_t cfg;
	t_capture_t cap;
	size_t index = 0;
	volatile ssize_t ret = -1;

	stress_settings_free();
	stress_shim_parse_context_set(NULL, NULL);
	optind = 0;
	(void)memset(&cfg, 0, sizeof(cfg));
	t_capture_begin(&cap, STDERR_FILENO);
	if (setjmp(g_error_env) == 0 &&
	    stress_shim_opts_parse(5, (char **)argv, &stress_ksm_unmerge_info, "ksm-unmerge", &cfg) == 0 &&
	    stress_setting_get(opt + 2, &index))
		ret = (ssize_t)index;
	*err = t_capture_end(&cap);
	stress_settings_free();
	return ret;
}

/*
 *  test_method_parse()
 *	every method and pattern name parses to its index; a bad one is refused listing every choice
 */
static void test_method_parse(void **state)
{
	const char *name, *err;
	size_t i;

	(void)state;
	for (i = 0; (name = stress_ksm_unmerge_method(i)) != NULL; i++) {
		assert_int_equal(t_parse("--ksm-unmerge-method", name, &err), (ssize_t)i);
		assert_string_equal(err, "");
	}
	for (i = 0; (name = stress_ksm_unmerge_pattern(i)) != NULL; i++)
		assert_int_equal(t_parse("--ksm-unmerge-pattern", name, &err), (ssize_t)i);
	assert_int_equal(t_parse("--ksm-unmerge-method", "fork_zero", &err), -1);
	assert_non_null(strstr(err, "all madvise prctl vmsplice gup"));
	assert_non_null(strstr(err, " fork-zero"));
	assert_int_equal(t_parse("--ksm-unmerge-pattern", "zeros", &err), -1);
	assert_non_null(strstr(err, "same few zero mixed unique"));
}

/*
 *  test_use()
 *	all: switches and racers; madvise or prctl: that switch alone; a racer: it with both switches
 */
static void test_use(void **state)
{
	size_t i;

	(void)state;
	assert_int_equal(__builtin_popcountll(stress_ksm_unmerge_use(0)), 2 + KSM_RACERS);
	assert_true((stress_ksm_unmerge_use(0) & KSM_SW_BOTH) == KSM_SW_BOTH);
	for (i = 0; i < KSM_RACERS; i++)
		assert_true(stress_ksm_unmerge_use(0) & KSM_RACER_BIT(i));
	assert_true(stress_ksm_unmerge_use(1) == KSM_SW_MADVISE);
	assert_true(stress_ksm_unmerge_use(2) == KSM_SW_PRCTL);
	for (i = 0; i < KSM_RACERS; i++)
		assert_true(stress_ksm_unmerge_use(3 + i) == (KSM_SW_BOTH | KSM_RACER_BIT(i)));
}

/*
 *  test_page_kind()
 *	each pattern's page kinds (mixed in turn); templates distinct, non-zero, the same per instance
 */
static void test_page_kind(void **state)
{
	stress_ksm_unmerge_ctx_t *a = t_ctx(KSM_PATTERN_FEW, 1, 1), *b = t_ctx(KSM_PATTERN_FEW, 1, 2);
	static const uint8_t zero[T_PAGE];
	size_t i, t, u;

	(void)state;
	for (i = 0; i < 64; i++) {
		assert_int_equal(stress_ksm_unmerge_page_kind(KSM_PATTERN_SAME, i), KSM_KIND_SAME);
		assert_int_equal(stress_ksm_unmerge_page_kind(KSM_PATTERN_FEW, i), KSM_KIND_FEW);
		assert_int_equal(stress_ksm_unmerge_page_kind(KSM_PATTERN_ZERO, i), KSM_KIND_ZERO);
		assert_int_equal(stress_ksm_unmerge_page_kind(KSM_PATTERN_UNIQUE, i), KSM_KIND_UNIQUE);
		assert_int_equal(stress_ksm_unmerge_page_kind(KSM_PATTERN_MIXED, i),
			(int)(i % 4) == 0 ? KSM_KIND_SAME : (int)(i % 4) == 1 ? KSM_KIND_FEW :
			(int)(i % 4) == 2 ? KSM_KIND_ZERO : KSM_KIND_UNIQUE);
		assert_ptr_equal(stress_ksm_unmerge_template(a, KSM_KIND_SAME, i), a->templates);
		assert_ptr_equal(stress_ksm_unmerge_template(a, KSM_KIND_FEW, i),
			a->templates + (1 + i % KSM_FEW_TEMPLATES) * T_PAGE);
	}
	/* nine distinct non-zero templates, the same in every instance */
	for (t = 0; t <= KSM_FEW_TEMPLATES; t++) {
		assert_memory_not_equal(a->templates + t * T_PAGE, zero, T_PAGE);
		assert_memory_equal(a->templates + t * T_PAGE, b->templates + t * T_PAGE, T_PAGE);
		for (u = t + 1; u <= KSM_FEW_TEMPLATES; u++)
			assert_memory_not_equal(a->templates + t * T_PAGE, a->templates + u * T_PAGE, T_PAGE);
	}
	t_ctx_free(a);
	t_ctx_free(b);
}

/*
 *  test_page_fill_check()
 *	filled pages check clean; a flipped byte is found with the byte expected; which pages are equal
 */
static void test_page_fill_check(void **state)
{
	static const uint8_t zero[T_PAGE];
	const size_t n = 32, offs[] = { 0, 7, 1234, T_PAGE - 1 };
	stress_ksm_unmerge_ctx_t *other = t_ctx(KSM_PATTERN_UNIQUE, n, 0x5555);
	int pattern;

	(void)state;
	for (pattern = KSM_PATTERN_SAME; pattern <= KSM_PATTERN_UNIQUE; pattern++) {
		stress_ksm_unmerge_ctx_t *ctx = t_ctx(pattern, n, 0x1234567890abcdefULL);
		size_t i, j, k;

		for (i = 0; i < n; i++) {
			uint8_t *page = ctx->region + i * T_PAGE;
			const int kind = stress_ksm_unmerge_page_kind(pattern, i);
			uint8_t want = 0, was;

			assert_int_equal(stress_ksm_unmerge_page_check(ctx, i, page, &want), -1);
			for (k = 0; k < SIZEOF_ARRAY(offs); k++) {
				was = page[offs[k]];
				page[offs[k]] ^= 0x40;
				assert_int_equal(stress_ksm_unmerge_page_check(ctx, i, page, &want), (ssize_t)offs[k]);
				assert_int_equal(want, was);
				page[offs[k]] = was;
			}
			assert_int_equal(stress_ksm_unmerge_all_zero(page, T_PAGE), kind == KSM_KIND_ZERO);
			if (kind == KSM_KIND_UNIQUE)
				assert_memory_not_equal(page, other->region + i * T_PAGE, T_PAGE);
			for (j = 0; j < n; j++) {
				const int kj = stress_ksm_unmerge_page_kind(pattern, j);
				const bool same = kind == kj && kind != KSM_KIND_UNIQUE &&
					(kind != KSM_KIND_FEW || i % KSM_FEW_TEMPLATES == j % KSM_FEW_TEMPLATES);

				assert_int_equal(!memcmp(page, ctx->region + j * T_PAGE, T_PAGE), i == j || same);
			}
		}
		t_ctx_free(ctx);
	}
	assert_memory_not_equal(other->region, zero, T_PAGE);
	t_ctx_free(other);
}

/*
 *  test_expect()
 *	the KSM pages and KSM zero pages each pattern must merge into
 */
static void test_expect(void **state)
{
	static const struct {
		int pattern;
		size_t n;
		uint64_t merged, zero;
	} cases[] = {
		{ KSM_PATTERN_SAME,   64, 64, 0 },
		{ KSM_PATTERN_FEW,    64, 64, 0 },
		{ KSM_PATTERN_ZERO,   64, 0, 64 },
		{ KSM_PATTERN_MIXED,  64, 32, 16 },
		{ KSM_PATTERN_MIXED,  7, 4, 2 },
		{ KSM_PATTERN_UNIQUE, 64, 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(cases); i++) {
		stress_ksm_unmerge_ctx_t *ctx = t_ctx(cases[i].pattern, cases[i].n, 1);

		assert_int_equal(ctx->expect_merged, cases[i].merged);
		assert_int_equal(ctx->expect_zero, cases[i].zero);
		t_ctx_free(ctx);
	}
}

/*
 *  test_verify_data()
 *	the data check: intact pages pass, one changed byte fails naming page, byte and pattern
 */
static void test_verify_data(void **state)
{
	stress_ksm_unmerge_ctx_t *ctx = t_ctx(KSM_PATTERN_MIXED, 64, 9);
	stress_args_t args = { .name = "ksm-unmerge", .page_size = T_PAGE, .bogo.max_ops = NEVER_END_OPS };
	stress_ksm_unmerge_instance_t st;
	t_capture_t cap;
	const char *out;
	int ret;

	(void)state;
	(void)memset(&st, 0, sizeof(st));
	ctx->args = &args;
	ctx->st = &st;
	ctx->verify = true;
	assert_int_equal(stress_ksm_unmerge_verify_data(ctx), 0);
	ctx->region[38 * T_PAGE + 100] ^= 1;
	t_capture_begin(&cap, STDOUT_FILENO);
	ret = stress_ksm_unmerge_verify_data(ctx);
	out = t_capture_end(&cap);
	assert_int_equal(ret, -1);
	assert_non_null(strstr(out, "fail: "));
	assert_non_null(strstr(out, "data corrupted after unmerge: page 38 byte 100 is 0x01, expected 0x00 "
		"(pattern mixed)"));
	t_ctx_free(ctx);
}

/*
 *  test_counter()
 *	ok, missing, negative, wrapped (2^63+), garbled; the name only at a line's start; bare numbers
 */
static void test_counter(void **state)
{
	const char *stat = "ksm_rmap_items 12\nksm_zero_pages 7\nksm_merging_pages 3\nksm_merge_any: no\n";
	int64_t v;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_counter(stat, "ksm_rmap_items", &v), KSM_COUNTER_OK);
	assert_int_equal(v, 12);
	assert_int_equal(stress_ksm_unmerge_counter(stat, "ksm_zero_pages", &v), KSM_COUNTER_OK);
	assert_int_equal(v, 7);
	assert_int_equal(stress_ksm_unmerge_counter(stat, "ksm_merging_pages", &v), KSM_COUNTER_OK);
	assert_int_equal(v, 3);
	assert_int_equal(stress_ksm_unmerge_counter(stat, "ksm_merge_any", &v), KSM_COUNTER_GARBLED);
	assert_int_equal(stress_ksm_unmerge_counter("ksm_rmap_items 1\n", "ksm_zero_pages", &v), KSM_COUNTER_MISSING);
	assert_int_equal(v, -1);
	assert_int_equal(stress_ksm_unmerge_counter("", "ksm_zero_pages", &v), KSM_COUNTER_MISSING);
	/* c2dc78b86e08's bug: below 0, printed signed or wrapped unsigned */
	assert_int_equal(stress_ksm_unmerge_counter("ksm_zero_pages -1\n", "ksm_zero_pages", &v), KSM_COUNTER_NEGATIVE);
	assert_int_equal(v, -1);
	assert_int_equal(stress_ksm_unmerge_counter("-24\n", NULL, &v), KSM_COUNTER_NEGATIVE);
	assert_int_equal(v, -24);
	assert_int_equal(stress_ksm_unmerge_counter("-\n", NULL, &v), KSM_COUNTER_GARBLED);
	assert_int_equal(stress_ksm_unmerge_counter("ksm_zero_pages 18446744073709551615\n", "ksm_zero_pages", &v),
		KSM_COUNTER_WRAPPED);
	assert_int_equal(v, -1);
	assert_int_equal(stress_ksm_unmerge_counter("18446744073709551592\n", NULL, &v), KSM_COUNTER_WRAPPED);
	assert_int_equal(v, -24);
	assert_int_equal(stress_ksm_unmerge_counter("9223372036854775808\n", NULL, &v), KSM_COUNTER_WRAPPED);
	assert_int_equal(stress_ksm_unmerge_counter("99999999999999999999999\n", NULL, &v), KSM_COUNTER_WRAPPED);
	assert_int_equal(stress_ksm_unmerge_counter("9223372036854775807\n", NULL, &v), KSM_COUNTER_OK);
	assert_true(v == INT64_MAX);
	assert_int_equal(stress_ksm_unmerge_counter("0\n", NULL, &v), KSM_COUNTER_OK);
	assert_int_equal(v, 0);
	assert_int_equal(stress_ksm_unmerge_counter(" \t42\n", NULL, &v), KSM_COUNTER_OK);
	assert_int_equal(v, 42);
	assert_int_equal(stress_ksm_unmerge_counter("x\n", NULL, &v), KSM_COUNTER_GARBLED);
	assert_int_equal(stress_ksm_unmerge_counter("", NULL, &v), KSM_COUNTER_GARBLED);
	assert_int_equal(stress_ksm_unmerge_counter("ksm_zero_pages \nksm_merging_pages 3\n", "ksm_zero_pages", &v),
		KSM_COUNTER_GARBLED);
	/* the name at a line's start, followed by a space, tab or colon */
	assert_int_equal(stress_ksm_unmerge_counter("ksm_zero_pages_x -1\nksm_zero_pages 2\n", "ksm_zero_pages", &v),
		KSM_COUNTER_OK);
	assert_int_equal(v, 2);
	assert_int_equal(stress_ksm_unmerge_counter("xcow_ksm 1\ncow_ksm 42\n", "cow_ksm", &v), KSM_COUNTER_OK);
	assert_int_equal(v, 42);
	assert_int_equal(stress_ksm_unmerge_counter("nr_free 1 cow_ksm 5\n", "cow_ksm", &v), KSM_COUNTER_MISSING);
	assert_int_equal(stress_ksm_unmerge_counter("xcow_ksm 1\n", "cow_ksm", &v), KSM_COUNTER_MISSING);
	assert_int_equal(stress_ksm_unmerge_counter("MemAvailable:   123 kB\n", "MemAvailable", &v), KSM_COUNTER_OK);
	assert_int_equal(v, 123);
	assert_int_equal(stress_ksm_unmerge_counter("ksm_zero_pages\t9\n", "ksm_zero_pages", &v), KSM_COUNTER_OK);
	assert_int_equal(v, 9);
	assert_int_equal(SIZEOF_ARRAY(stress_ksm_unmerge_counter_verdicts), KSM_COUNTER_GARBLED + 1);
}

/*
 *  t_memfd()
 *	a memfd holding text, and its path (a proc or sysfs file's stand-in)
 */
static int t_memfd(const char *text, char *path, const size_t len)
{
	const int fd = shim_memfd_create("t-file", 0);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	(void)snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/*
 *  test_field()
 *	a counter read from a file, -1 for a missing file or field or a value that is not a count
 */
static void test_field(void **state)
{
	char path[64];
	int fd;

	(void)state;
	fd = t_memfd("nr_free_pages 5\ncow_ksm 74768066\n", path, sizeof(path));
	assert_int_equal(stress_ksm_unmerge_field(path, "cow_ksm"), 74768066);
	assert_int_equal(stress_ksm_unmerge_field(path, "nr_free_pages"), 5);
	assert_int_equal(stress_ksm_unmerge_field(path, "ksm_zero_pages"), -1);
	(void)close(fd);
	fd = t_memfd("18446744073709551615\n", path, sizeof(path));
	assert_int_equal(stress_ksm_unmerge_field(path, NULL), -1);
	(void)close(fd);
	fd = t_memfd("-3\n", path, sizeof(path));
	assert_int_equal(stress_ksm_unmerge_field(path, NULL), -1);
	(void)close(fd);
	fd = t_memfd("", path, sizeof(path));
	assert_int_equal(stress_ksm_unmerge_field(path, NULL), -1);
	(void)close(fd);
	fd = t_memfd("0\n", path, sizeof(path));
	assert_int_equal(stress_ksm_unmerge_field(path, NULL), 0);
	(void)close(fd);
	assert_int_equal(stress_ksm_unmerge_field("/nonexistent/ksm_zero_pages", NULL), -1);
}

/*
 *  test_kver_flags()
 *	the running kernel's release as the core numbers it (6.4.0 -> 60400);
 *	VmFlags words matched whole
 */
static void test_kver_flags(void **state)
{
	struct utsname u;
	int major = 0, minor = 0, patchlevel = 0;

	(void)state;
	assert_int_equal(stress_kernel_release(6, 4, 0), 60400);
	assert_int_equal(stress_kernel_release(6, 18, 44), 61844);
	assert_int_equal(uname(&u), 0);
	assert_true(sscanf(u.release, "%d.%d.%d", &major, &minor, &patchlevel) >= 2);
	assert_int_equal(stress_kernel_release_get(),
		stress_kernel_release(major, minor, patchlevel));

	assert_true(stress_ksm_unmerge_has_flag("rd wr mr mw me ac sd mg", "mg"));
	assert_true(stress_ksm_unmerge_has_flag("mg rd wr", "mg"));
	assert_true(stress_ksm_unmerge_has_flag(" rd mg\n", "mg"));
	assert_true(stress_ksm_unmerge_has_flag("rd ui mg", "ui"));
	assert_false(stress_ksm_unmerge_has_flag("rd wr mr mw me ac sd", "mg"));
	assert_false(stress_ksm_unmerge_has_flag("rd mgx wr", "mg"));
	assert_false(stress_ksm_unmerge_has_flag("rd xmg wr", "mg"));
	assert_false(stress_ksm_unmerge_has_flag("rmg", "mg"));
	assert_false(stress_ksm_unmerge_has_flag("", "mg"));
	assert_true(stress_ksm_unmerge_has_flag("xmg mg", "mg"));
}

/*
 *  t_report_line()
 *	the line report_line() prints for text
 */
static const char *t_report_line(const char *text)
{
	t_capture_t cap;

	t_capture_begin(&cap, STDOUT_FILENO);
	stress_ksm_unmerge_report_line("%s", text);
	return t_capture_end(&cap);
}

/*
 *  test_report_line()
 *	no report line splits into 10 or 12 fields (" -" is added); others print unchanged
 */
static void test_report_line(void **state)
{
	char text[256] = "", want[320];
	size_t words;

	(void)state;
	for (words = 0; words <= 20; words++) {
		const char *out;
		int fields;

		if (words)
			(void)shim_strlcat(text, words == 1 ? "w1" : " wN", sizeof(text));
		out = t_report_line(text);
		fields = t_fields(out, strlen(out));
		assert_true(fields != 10 && fields != 12);
		assert_non_null(strstr(out, "stress-ng: info:  ["));
		(void)snprintf(want, sizeof(want), "] ksm-unmerge: %s%s\n", text,
			(words == 6 || words == 8) ? " -" : "");
		assert_non_null(strstr(out, want));
		assert_int_equal(strlen(strstr(out, want)), strlen(want));
	}
	/* runs of spaces are one separator, as for LKP */
	assert_non_null(strstr(t_report_line("a  b c   d e f"), "ksm-unmerge: a  b c   d e f -\n"));
	assert_non_null(strstr(t_report_line(" a b c d e f"), "ksm-unmerge:  a b c d e f -\n"));
}

/*
 *  test_lkp_lines()
 *	deinit's other line after the metrics table, a knob it cannot restore,
 *	never splits into LKP's 10 or 12 fields, whatever the errno's text
 */
static void test_lkp_lines(void **state)
{
	static const char * const values[] = { "0", "10000", "[none] scan-time", "a b c d e f g h" };
	char line[512], full[600];
	size_t k, v;
	int err, padded = 0;

	(void)state;
	for (k = 0; k < KSM_KNOBS; k++) {
		for (v = 0; v < SIZEOF_ARRAY(values); v++) {
			for (err = 1; err < 134; err++) {
				int fields;

				(void)snprintf(line, sizeof(line), "cannot restore %s/%s to %s, errno=%d (%s)", KSM_SYSFS,
					stress_ksm_unmerge_knob_names[k], values[v], err, strerror(err));
				(void)snprintf(full, sizeof(full), "stress-ng: error: [1] ksm-unmerge: %s%s", line,
					stress_ksm_unmerge_lkp_pad(line));
				fields = t_fields(full, strlen(full));
				assert_true(fields != 10 && fields != 12);
				padded += !!*stress_ksm_unmerge_lkp_pad(line);
			}
		}
	}
	assert_true(padded > 0);	/* some of them would have been a metrics row */
}

/*
 *  t_shared()
 *	a shared state of n instances after a run of method (all zero)
 */
static stress_ksm_unmerge_shared_t *t_shared(const uint32_t n, const size_t method)
{
	stress_ksm_unmerge_shared_t *sh = calloc(1, sizeof(*sh) + n * sizeof(stress_ksm_unmerge_instance_t));

	assert_non_null(sh);
	sh->instances = n;
	sh->method = method;
	return sh;
}

/*
 *  t_report()
 *	report()'s output for sh; no line of it has 10 or 12 fields
 */
static const char *t_report(const stress_ksm_unmerge_shared_t *sh)
{
	const char *out, *p, *nl;
	t_capture_t cap;

	t_capture_begin(&cap, STDOUT_FILENO);
	stress_ksm_unmerge_report(sh);
	out = t_capture_end(&cap);
	for (p = out; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		const int fields = t_fields(p, (size_t)(nl - p));

		if (fields == 10 || fields == 12)
			fail_msg("a report line LKP would parse as a metrics row: %.*s", (int)(nl - p), p);
	}
	assert_string_equal(p, "");
	return out;
}

/*
 *  test_report()
 *	totals over instances; each racer of the method reached, NOT reached or skipped, with why
 */
static void test_report(void **state)
{
	stress_ksm_unmerge_shared_t *sh = t_shared(2, 0);
	stress_ksm_unmerge_racer_stats_t *vs0 = &sh->inst[0].racer[0], *vs1 = &sh->inst[1].racer[0];
	const size_t fork_zero = KSM_RACERS - 1;
	const char *out;

	(void)state;
	sh->inst[0].cycles = 5;
	sh->inst[1].cycles = 7;
	sh->inst[0].failures = 1;
	sh->inst[1].pages_zero = 4096;
	vs0->active = vs1->active = true;
	vs0->ops = 3;
	vs1->ops = 4;
	vs1->evidence = 9;
	vs0->detail[KSM_D_VMSPLICE_HELD_KSM] = 2;
	vs1->meet_timeouts = 1;
	sh->inst[0].racer[1].active = true;
	sh->inst[0].racer[1].ops = 6;
	(void)shim_strscpy(sh->inst[1].racer[2].reason, "no uffd here", sizeof(sh->inst[1].racer[2].reason));
	sh->inst[1].racer[3].active = true;	/* started, never ran an op */
	sh->inst[0].racer[fork_zero].active = true;
	sh->inst[0].racer[fork_zero].ops = 3;
	sh->inst[0].racer[fork_zero].evidence = 3;
	sh->inst[0].racer[fork_zero].detail[KSM_D_FORK_ZERO_UNMERGING] = 1;
	sh->inst[0].racer[fork_zero].failures = 2;
	out = t_report(sh);
	assert_non_null(strstr(out, "ksm-unmerge: totals: cycles=12,"));
	assert_non_null(strstr(out, ",zero-pages=4096,"));
	assert_non_null(strstr(out, ",failures=1,racer-failures=2\n"));
	assert_non_null(strstr(out, "ksm-unmerge: racer vmsplice reached: ops=7 ksm-pages-spliced=9,"
		"merged-phase-timeouts=1,splices-held-over-unmerge=0,ksm-pages-held-over-unmerge=2,"
		"held-pages-copied=0,instances-reached=1,instances-running=2\n"));
	assert_non_null(strstr(out, "ksm-unmerge: racer gup NOT reached: ops=6 ksm-pages-pinned=0,odirect-pins=0,"
		"odirect-ksm-pages=0,longterm-pins=0,longterm-ksm-pages=0,readv-pins=0,readv-ksm-pages=0,"
		"instances-reached=0,instances-running=1 (its path never met a KSM page)\n"));
	assert_non_null(strstr(out, "ksm-unmerge: racer uffd-wp skipped: no uffd here -\n"));
	assert_non_null(strstr(out, "ksm-unmerge: racer mrelease NOT reached: ops=0 ksm-victims-killed=0,"
		"mrelease-reaps=0,mrelease-esrch=0,victim-ksm-pages=0,instances-reached=0,instances-running=1 "
		"(its path never met a KSM page)\n"));
	assert_non_null(strstr(out, "ksm-unmerge: racer sparse skipped: not started\n"));
	assert_non_null(strstr(out, "ksm-unmerge: racer fork-zero reached: ops=3 zero-page-forks=3,failures=2,"
		"forks-during-unmerge=0,overcharged-uncopied=0,overcharged-unmerging=1,undercharged=0,"
		"zap-rounds=0,zero-zaps-reached=0,zap-counts-lost=0,instances-reached=1,instances-running=1\n"));
	assert_non_null(strstr(out, "ksm-unmerge: merge waits: merged=0,partial=0,starved=0,slow=0,stuck=0\n"));
	assert_non_null(strstr(out, ",verified-cycles-min=5,verified-cycles-mean=6.0,worker-rss-kb-mean=0,"
		"worker-rss-kb-max=0,ksm-managed-bytes=0\n"));
	assert_null(strstr(out, "ksm-unmerge: ksmd:"));	/* ksmd not known */
	assert_null(strstr(out, "millisecs"));	/* no samples, no spread */
	free(sh);

	/* one racer's method: that racer alone */
	sh = t_shared(1, 3 + fork_zero);
	out = t_report(sh);
	assert_non_null(strstr(out, "racer fork-zero skipped"));
	assert_null(strstr(out, "racer vmsplice"));
	free(sh);
	sh = t_shared(1, 1);
	assert_null(strstr(t_report(sh), "racer "));
	free(sh);
}

/*
 *  test_bugs()
 *	known kernel bugs: which runs fail on them, a hit named once, the report's line per bug
 */
static void test_bugs(void **state)
{
	const size_t fork_zero = 3 + KSM_RACERS - 1;
	stress_ksm_unmerge_shared_t *sh = t_shared(1, 0);
	stress_ksm_unmerge_bug_state_t *b = &sh->bug[KSM_BUG_FORK_ZERO];
	const char *out;

	(void)state;
	assert_string_equal(stress_ksm_unmerge_bugs[KSM_BUG_FORK_ZERO].racer, "fork-zero");
	assert_false(stress_ksm_unmerge_bug_fails(0, KSM_BUG_FORK_ZERO));
	assert_false(stress_ksm_unmerge_bug_fails(1, KSM_BUG_FORK_ZERO));
	assert_false(stress_ksm_unmerge_bug_fails(3, KSM_BUG_FORK_ZERO));
	assert_true(stress_ksm_unmerge_bug_fails(fork_zero, KSM_BUG_FORK_ZERO));
	/* runs whose racers fork probe the bug: all, mrelease, fork, prctl-exec, fork-zero */
	assert_true(stress_ksm_unmerge_forks(stress_ksm_unmerge_use(0)));
	assert_false(stress_ksm_unmerge_forks(stress_ksm_unmerge_use(1)));
	assert_false(stress_ksm_unmerge_forks(stress_ksm_unmerge_use(3)));
	assert_true(stress_ksm_unmerge_forks(stress_ksm_unmerge_use(3 + 3)));
	assert_true(stress_ksm_unmerge_forks(stress_ksm_unmerge_use(fork_zero)));

	/* the default job: a hit is named, the first one kept, the racer steps aside */
	stress_ksm_unmerge_shared = sh;
	assert_false(stress_ksm_unmerge_bug_aside(KSM_BUG_FORK_ZERO));
	assert_true(stress_ksm_unmerge_bug_hit(KSM_BUG_FORK_ZERO, "a child was charged %d", 3));
	assert_true(stress_ksm_unmerge_bug_hit(KSM_BUG_FORK_ZERO, "a child was charged %d", 4));
	assert_int_equal(b->hits, 2);
	assert_string_equal(b->first, "a child was charged 3");
	assert_true(stress_ksm_unmerge_bug_aside(KSM_BUG_FORK_ZERO));
	b->left = 6;
	out = t_report(sh);
	assert_non_null(strstr(out, "ksm-unmerge: known kernel bug ksm-fork-zero-pages: 2 matching verdict(s), "
		"first: a child was charged 3; KSM zero pages the run left charged to no process: 6; written up in "
		"docs/upstream/ksm-fork-zero-pages (kernels: 6.10 and later"));
	assert_non_null(strstr(out, "; not a failure of this run (racer fork-zero alone, --ksm-unmerge-method "
		"fork-zero, fails on it)\n"));

	/* the racer alone: its verdicts fail, it never steps aside */
	sh->method = fork_zero;
	assert_false(stress_ksm_unmerge_bug_hit(KSM_BUG_FORK_ZERO, "a child was charged %d", 5));
	assert_int_equal(b->hits, 2);
	assert_false(stress_ksm_unmerge_bug_aside(KSM_BUG_FORK_ZERO));
	out = t_report(sh);
	assert_non_null(strstr(out, "known kernel bug ksm-fork-zero-pages: seen (a child was charged 3); "));
	assert_non_null(strstr(out, "; racer fork-zero alone fails on it\n"));

	/* a kernel where the probe did not see it; one that was not probed says nothing */
	(void)memset(b, 0, sizeof(*b));
	sh->method = 0;
	b->probe = KSM_PROBE_CLEAR;
	b->left = 0;
	(void)shim_strscpy(b->first, "start probe: charged 1, maps 1", sizeof(b->first));
	assert_non_null(strstr(t_report(sh), "ksm-unmerge: known kernel bug ksm-fork-zero-pages: not seen (start probe: "
		"charged 1, maps 1); KSM zero pages the run left charged to no process: 0\n"));
	b->probe = KSM_PROBE_NONE;
	assert_null(strstr(t_report(sh), "known kernel bug"));
	stress_ksm_unmerge_shared = NULL;
	free(sh);
}

/*
 *  t_wait()
 *	stress_ksm_unmerge_wait_judge() of a wait with these figures
 */
static int t_wait(const double wall, const double cpu, const int64_t scanned, const int64_t scans,
	const uint64_t got, const uint64_t want, const bool stable)
{
	stress_ksm_unmerge_wait_t w;

	(void)memset(&w, 0, sizeof(w));
	w.wall = wall;
	w.cpu = cpu;
	w.runnable = (cpu < 0.0) ? -1.0 : wall - cpu;
	w.scanned = scanned;
	w.scans = scans;
	w.got = got;
	w.want = want;
	w.stable = stable;
	return stress_ksm_unmerge_wait_judge(&w);
}

/*
 *  test_wait_judge()
 *	merge waits fed ksmd's counters: merged, partial, starved, slow and (only
 *	with CPU and no progress) stuck
 */
static void test_wait_judge(void **state)
{
	(void)state;
	assert_int_equal(t_wait(0.2, 0.1, 5000, 3, 2048, 2048, false), KSM_WAIT_MERGED);
	assert_int_equal(t_wait(0.2, 0.1, 5000, 3, 0, 0, true), KSM_WAIT_MERGED);	/* unique: nothing to merge */
	assert_int_equal(t_wait(0.3, 0.2, 9000, 4, 2000, 2048, true), KSM_WAIT_PARTIAL);
	assert_int_equal(t_wait(0.3, 0.2, 9000, KSM_WAIT_SCANS, 2000, 2048, false), KSM_WAIT_PARTIAL);
	/* cut by the deadline: the CPU ksmd got decides */
	assert_int_equal(t_wait(20.0, 0.3, 700, 0, 0, 2048, false), KSM_WAIT_STARVED);
	assert_int_equal(t_wait(20.0, 0.0, 0, 0, 0, 2048, false), KSM_WAIT_STARVED);	/* blocked: no CPU */
	assert_int_equal(t_wait(20.0, KSM_STARVED_SHARE * 20.0 - 0.01, 9000, 1, 10, 2048, false),
		KSM_WAIT_STARVED);
	assert_int_equal(t_wait(20.0, KSM_STARVED_SHARE * 20.0, 9000, 1, 10, 2048, false), KSM_WAIT_SLOW);
	assert_int_equal(t_wait(12.0, 12.0, 90000, 2, 1024, 2048, false), KSM_WAIT_SLOW);
	/* CPU and no page scanned, no pass ended: stuck; a page scanned or a pass ended is not */
	assert_int_equal(t_wait(12.0, 11.0, 0, 0, 0, 2048, false), KSM_WAIT_STUCK);
	assert_int_equal(t_wait(12.0, KSM_STUCK_CPU, 0, 0, 0, 2048, false), KSM_WAIT_STUCK);
	assert_int_equal(t_wait(60.0, KSM_STUCK_CPU, 0, 0, 0, 2048, false), KSM_WAIT_STUCK);
	assert_int_equal(t_wait(12.0, KSM_STUCK_CPU - 0.01, 0, 0, 0, 2048, false), KSM_WAIT_SLOW);
	assert_int_equal(t_wait(12.0, 11.0, 1, 0, 0, 2048, false), KSM_WAIT_SLOW);
	assert_int_equal(t_wait(12.0, 11.0, 0, 1, 0, 2048, false), KSM_WAIT_SLOW);
	/* ksmd not visible (a PID namespace): progress decides, never stuck */
	assert_int_equal(t_wait(12.0, -1.0, 0, 0, 0, 2048, false), KSM_WAIT_STARVED);
	assert_int_equal(t_wait(12.0, -1.0, 500, 0, 0, 2048, false), KSM_WAIT_SLOW);
	assert_string_equal(stress_ksm_unmerge_wait_names[KSM_WAIT_STUCK], "stuck");
	assert_int_equal(SIZEOF_ARRAY(stress_ksm_unmerge_wait_names), KSM_WAITS);
}

/*
 *  test_share()
 *	a racer's memory at width: a share each while every instance gets a unit,
 *	then one unit in as many instances as the budget has units, spread and rotated
 */
static void test_share(void **state)
{
	uint32_t n, i, slot;

	(void)state;
	assert_int_equal(stress_ksm_unmerge_share(8, 4, 1, 0, 0), 4);
	assert_int_equal(stress_ksm_unmerge_share(8, 4, 2, 1, 8), 4);
	assert_int_equal(stress_ksm_unmerge_share(8, 4, 4, 3, 8), 2);
	assert_int_equal(stress_ksm_unmerge_share(8, 4, 8, 5, 8), 1);
	assert_int_equal(stress_ksm_unmerge_share(8, 4, 0, 0, 8), 0);
	assert_int_equal(stress_ksm_unmerge_share(8, 0, 2, 0, 8), 0);
	assert_int_equal(stress_ksm_unmerge_share(0, 4, 2, 0, 8), 0);
	for (n = 9; n <= 224; n++) {
		for (slot = 0; slot < 3; slot++) {
			size_t got = 0, moved = 0;

			for (i = 0; i < n; i++) {
				const size_t u = stress_ksm_unmerge_share(8, 4, n, i, slot);

				assert_true(u <= 1);
				got += u;
				moved += (u != stress_ksm_unmerge_share(8, 4, n, i, slot + 1));
			}
			assert_int_equal(got, 8);	/* the budget, whatever the width */
			assert_true(moved > 0);		/* another racer's units land elsewhere */
		}
	}
}

/*
 *  test_report_width()
 *	the width's lines: merge waits by how they ended and their spread, the
 *	fewest verified cycles, RSS and KSM-managed bytes; a racer the budget left
 *	out of some instances says how many
 */
static void test_report_width(void **state)
{
	stress_ksm_unmerge_shared_t *sh = t_shared(3, 0);
	const size_t thp = 8;
	const char *out;
	size_t i;

	(void)state;
	assert_string_equal(stress_ksm_unmerge_racers[thp].name, "thp");
	for (i = 0; i < 3; i++) {
		sh->inst[i].cycles = 4 + i;
		sh->inst[i].rss_kb = 1000 * (i + 1);
		sh->inst[i].rmap_max = 256;
		sh->inst[i].waits[KSM_WAIT_MERGED] = 4 + i;
		sh->inst[i].waits[KSM_WAIT_STARVED] = i;
		stress_ksm_unmerge_lat_add(&sh->inst[i].merge_lat, 100.0 * (double)(i + 1));
	}
	sh->inst[2].waits[KSM_WAIT_STUCK] = 1;
	sh->inst[0].racer[thp].left_out = true;
	(void)shim_strscpy(sh->inst[0].racer[thp].reason, "left out", sizeof(sh->inst[0].racer[thp].reason));
	sh->inst[1].racer[thp].active = sh->inst[2].racer[thp].active = true;
	sh->inst[2].racer[thp].evidence = 2;
	out = t_report(sh);
	assert_non_null(strstr(out, "ksm-unmerge: merge waits: merged=15,partial=0,starved=3,slow=0,stuck=1\n"));
	assert_non_null(strstr(out, "ksm-unmerge: merge wait millisecs per cycle: p50=200.000 p95=300.000 "));
	assert_non_null(strstr(out, ",verified-cycles-min=4,verified-cycles-mean=5.0,worker-rss-kb-mean=2000,"
		"worker-rss-kb-max=3000,ksm-managed-bytes=3145728\n"));
	assert_non_null(strstr(out, "instances-reached=1,instances-running=2,instances-left-out=1\n"));
	/* left out everywhere it did not run: it is not a skip and its reason is not "not reached"'s */
	sh->inst[2].racer[thp].evidence = 0;
	(void)shim_strscpy(sh->inst[2].racer[thp].reason, "no THP", sizeof(sh->inst[2].racer[thp].reason));
	assert_non_null(strstr(t_report(sh), "instances-reached=0,instances-running=2,instances-left-out=1 "
		"(no THP) -\n"));	/* 12 fields: padded for LKP */
	free(sh);
}

/*
 *  test_report_spread()
 *	nearest-rank p50/p95/p99, mean and stdev over every instance's ring of the latest 4096
 */
static void test_report_spread(void **state)
{
	stress_ksm_unmerge_shared_t *sh = t_shared(2, 1);
	const char *out;
	size_t i;

	(void)state;
	for (i = 1; i <= 60; i++)
		stress_ksm_unmerge_lat_add(&sh->inst[i & 1].unmerge_lat, (double)(61 - i));
	for (i = 61; i <= 100; i++)
		stress_ksm_unmerge_lat_add(&sh->inst[0].unmerge_lat, (double)i);
	out = t_report(sh);
	assert_non_null(strstr(out, "ksm-unmerge: unmerge millisecs per cycle: p50=50.000 p95=95.000 p99=99.000 "
		"mean=50.500 stdev=28.866 samples=100\n"));
	assert_null(strstr(out, "mrelease"));
	free(sh);

	/* 5000 samples: the ring keeps 905..5000 */
	sh = t_shared(1, 1);
	for (i = 1; i <= 5000; i++)
		stress_ksm_unmerge_lat_add(&sh->inst[0].mrelease_lat, (double)i);
	assert_int_equal(sh->inst[0].mrelease_lat.count, KSM_LAT_SAMPLES);
	assert_non_null(strstr(t_report(sh), "ksm-unmerge: mrelease kill-to-reaped millisecs: p50=2952.000 "
		"p95=4796.000 p99=4960.000 mean=2952.500 stdev=1182.413 samples=4096\n"));
	free(sh);
}

/* the stop deadline's CPU clock: utime + stime after the command, whatever the command holds */
static void test_stat_ticks(void **state)
{
	(void)state;
	assert_int_equal(stress_ksm_unmerge_stat_ticks(
		"1768 (stress-ng) S 1766 76 76 0 -1 4194624 20 0 0 0 150 2345 0 0 20 0 5"), 2495);
	assert_int_equal(stress_ksm_unmerge_stat_ticks(
		"1768 (a) b) c) R 1 2 3 4 5 6 7 8 9 10 11 12 13"), 23);
	assert_int_equal(stress_ksm_unmerge_stat_ticks("1768 (stress-ng) S 1766 76"), -1);
	assert_int_equal(stress_ksm_unmerge_stat_ticks("garbage"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_method_parse),
		cmocka_unit_test(test_use),
		cmocka_unit_test(test_page_kind),
		cmocka_unit_test(test_page_fill_check),
		cmocka_unit_test(test_expect),
		cmocka_unit_test(test_verify_data),
		cmocka_unit_test(test_counter),
		cmocka_unit_test(test_field),
		cmocka_unit_test(test_kver_flags),
		cmocka_unit_test(test_report_line),
		cmocka_unit_test(test_lkp_lines),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_bugs),
		cmocka_unit_test(test_report_spread),
		cmocka_unit_test(test_wait_judge),
		cmocka_unit_test(test_share),
		cmocka_unit_test(test_report_width),
		cmocka_unit_test(test_stat_ticks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
