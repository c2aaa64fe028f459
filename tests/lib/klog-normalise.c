/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/lib/klog-normalise.c: the kernel-log check's LKP key normaliser
 * (klog/klog-check.c) run
 * over a fixed line set, for the equivalence test (tests/it/klog/normalise.sh)
 * and its speed.  The line set is every message of tests/data/corpus/klog plus
 * seeded mutations of them (digits, hex words, punctuation, spaces, tabs,
 * splices), 300,731 lines in all, always the same.  For each line it prints
 * "<error id>\t<key>": the generate_error_id() normalisation of the whole
 * line, then the full key (known-pattern selection + normalisation).
 *
 *   klog-normalise DIR                 print the outputs
 *   klog-normalise --time R DIR        time R passes, print the median CPU
 *                                      seconds of one pass (normalising only)
 */
#include "klog-stubs.h"		/* klog-check.c with silent core stubs */

#include <dirent.h>
#include <stdarg.h>
#include <time.h>

#define NORM_LINES	(300731)	/* corpus lines + mutations */

/* stub: stress_time_now() */
double stress_time_now(void)
{
	return 0.0;
}

static char **norm_lines;
static size_t norm_n;
static uint64_t norm_rnd = 0x9e3779b97f4a7c15ULL;

/*
 *  norm_rand()
 *	xorshift64: the same sequence on every machine
 */
static uint64_t norm_rand(const uint64_t range)
{
	norm_rnd ^= norm_rnd << 13;
	norm_rnd ^= norm_rnd >> 7;
	norm_rnd ^= norm_rnd << 17;
	return norm_rnd % range;
}

/*
 *  norm_add()
 *	append a copy of s to the line set
 */
static void norm_add(const char *s)
{
	if (norm_n >= NORM_LINES)
		return;
	norm_lines[norm_n] = strdup(s);
	if (!norm_lines[norm_n]) {
		(void)fprintf(stderr, "klog-normalise: out of memory\n");
		exit(2);
	}
	norm_n++;
}

/*
 *  norm_load()
 *	every record message (text after ';') of the corpus files in dir
 */
static void norm_load(const char *dir)
{
	struct dirent **names;
	int i, n = scandir(dir, &names, NULL, alphasort);

	if (n < 0) {
		(void)fprintf(stderr, "klog-normalise: %s: %s\n", dir, strerror(errno));
		exit(2);
	}
	for (i = 0; i < n; i++) {
		char path[PATH_MAX], line[4096];
		FILE *fp;

		if (!strstr(names[i]->d_name, ".txt"))
			continue;
		(void)snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		fp = fopen(path, "r");
		while (fp && fgets(line, sizeof(line), fp)) {
			const char *msg = strchr(line, ';');

			line[strcspn(line, "\n")] = '\0';
			if ((line[0] != '#') && (line[0] != ' ') && msg)
				norm_add(msg + 1);
		}
		if (fp)
			(void)fclose(fp);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/*
 *  norm_mutate()
 *	one seeded edit of line into out: replace, insert, delete or splice
 */
static void norm_mutate(const char *line, const char *other, char *out, const size_t len)
{
	static const char alphabet[] = "0123456789abcdefx#=+/.-_:;,!*[]()<> \t\\\"$"
		"ABCDEFGHIJKLMNOPQRSTUVWXYZghijklmnopqrstuvwyz";
	const size_t n = strlen(line), at = n ? (size_t)norm_rand(n) : 0;
	const char c = alphabet[norm_rand(sizeof(alphabet) - 1)];

	switch (norm_rand(5)) {
	case 0:	/* replace one byte */
		(void)snprintf(out, len, "%s", line);
		if (n)
			out[at] = c;
		break;
	case 1:	/* insert one byte */
		(void)snprintf(out, len, "%.*s%c%s", (int)at, line, c, line + at);
		break;
	case 2:	/* delete a short run */
		(void)snprintf(out, len, "%.*s%s", (int)at, line,
			line + at + ((at < n) ? norm_rand(n - at) % 8 + 1 : 0));
		break;
	case 3:	/* splice: head of this line, tail of another */
		(void)snprintf(out, len, "%.*s%s", (int)at, line,
			other + (strlen(other) ? norm_rand(strlen(other)) : 0));
		break;
	default:	/* a number or hex word at a random place */
		(void)snprintf(out, len, "%.*s%s%" PRIx64 "%s", (int)at, line,
			norm_rand(2) ? "0x" : " ", norm_rand(1ULL << (4 * (1 + norm_rand(16)))), line + at);
		break;
	}
}

/*
 *  norm_build()
 *	the corpus lines, then mutations (1 to 3 edits) until NORM_LINES
 */
static void norm_build(const char *dir)
{
	size_t base;

	norm_lines = calloc(NORM_LINES, sizeof(*norm_lines));
	if (!norm_lines)
		exit(2);
	norm_load(dir);
	base = norm_n;
	if (!base) {
		(void)fprintf(stderr, "klog-normalise: no corpus lines in %s\n", dir);
		exit(2);
	}
	while (norm_n < NORM_LINES) {
		char a[2048], b[2048];
		const char *src = norm_lines[norm_rand(base)];
		const char *other = norm_lines[norm_rand(base)];
		uint64_t k, edits = 1 + norm_rand(3);

		(void)snprintf(a, sizeof(a), "%s", src);
		for (k = 0; k < edits; k++) {
			norm_mutate(a, other, b, sizeof(b));
			(void)snprintf(a, sizeof(a), "%s", b);
		}
		norm_add(a);
	}
}

/*
 *  norm_pass()
 *	normalise every line; print "<error id>\t<key>" when out is set
 */
static void norm_pass(FILE *out)
{
	size_t i;

	for (i = 0; i < norm_n; i++) {
		char id[STRESS_KLOG_LINE_MAX], key[STRESS_KLOG_KEY_LEN];

		(void)snprintf(id, sizeof(id), "%s", norm_lines[i]);
		stress_klog_error_id(id, sizeof(id));
		stress_klog_make_key(norm_lines[i], key, sizeof(key));
		if (out)
			(void)fprintf(out, "%s\t%s\n", id, key);
	}
}

/*
 *  norm_cmp()
 *	qsort order of doubles
 */
static int norm_cmp(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 *  norm_time()
 *	median CPU seconds of one pass over the line set, of r passes
 */
static double norm_time(const int r)
{
	double t[101];
	int i;

	for (i = 0; i < r; i++) {
		struct timespec a, b;

		(void)clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
		norm_pass(NULL);
		(void)clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
		t[i] = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	}
	qsort(t, (size_t)r, sizeof(t[0]), norm_cmp);
	return t[r / 2];
}

int main(int argc, char **argv)
{
	int r = 0;

	if ((argc == 4) && !strcmp(argv[1], "--time")) {
		r = atoi(argv[2]);
		if ((r < 1) || (r > 101)) {
			(void)fprintf(stderr, "klog-normalise: --time %s: 1..101 passes\n", argv[2]);
			return 1;
		}
		argv += 2;
		argc -= 2;
	}
	if (argc != 2) {
		(void)fprintf(stderr, "usage: klog-normalise [--time R] DIR\n");
		return 1;
	}
	norm_build(argv[1]);
	if (r) {
		const double t = norm_time(r);

		(void)printf("%zu lines, median of %d passes: %.3f s per pass, %.2f us per line\n",
			norm_n, r, t, t * 1e6 / (double)norm_n);
		return 0;
	}
	norm_pass(stdout);
	return 0;
}
