/*
 * tests/unit/test-shim-common.h: helpers shared by the test-shim-*.c cmocka
 * tests: capture a file descriptor into a temp file and read it back.
 */
#ifndef TEST_SHIM_COMMON_H
#define TEST_SHIM_COMMON_H

#include "stress-ng.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

typedef struct {
	int target;		/* fd being captured */
	int saved;		/* dup of the original */
	FILE *tmp;		/* capture file */
} test_capture_t;

/*
 *  test_capture_begin()
 *	redirect fd into a temp file
 */
static inline void test_capture_begin(test_capture_t *c, const int fd)
{
	(void)fflush(stdout);
	(void)fflush(stderr);
	c->target = fd;
	c->tmp = tmpfile();
	assert_non_null(c->tmp);
	c->saved = dup(fd);
	assert_true(c->saved >= 0);
	assert_true(dup2(fileno(c->tmp), fd) >= 0);
}

/*
 *  test_capture_end()
 *	restore fd and return the captured text (malloc'd)
 */
static inline char *test_capture_end(test_capture_t *c)
{
	long int len;
	char *buf;

	(void)fflush(stdout);
	(void)fflush(stderr);
	assert_true(dup2(c->saved, c->target) >= 0);
	(void)close(c->saved);
	len = ftell(c->tmp);
	if (len < 0)
		len = lseek(fileno(c->tmp), 0, SEEK_END);
	buf = calloc(1, (size_t)len + 1);
	assert_non_null(buf);
	(void)lseek(fileno(c->tmp), 0, SEEK_SET);
	if (len > 0)
		assert_int_equal(read(fileno(c->tmp), buf, (size_t)len), len);
	(void)fclose(c->tmp);
	return buf;
}

/*
 *  test_count_lines()
 *	number of newline characters in str
 */
static inline int test_count_lines(const char *str)
{
	int n = 0;

	for (; *str; str++)
		n += (*str == '\n');
	return n;
}

/*
 *  test_count_fields()
 *	number of whitespace separated fields in str
 */
static inline int test_count_fields(const char *str)
{
	int n = 0;
	bool in = false;

	for (; *str; str++) {
		const bool ws = (*str == ' ') || (*str == '\t') || (*str == '\n');

		if (!ws && !in)
			n++;
		in = !ws;
	}
	return n;
}

#endif
