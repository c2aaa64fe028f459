/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-env.h: a context with a small pattern-filled region, as the
 * stressor fills it, for the unit tests that #include stress-ksm-unmerge.c
 * (test-stressor.c and the racer verifier tests).  Include it after
 * stress-ksm-unmerge.c.
 */
#ifndef TEST_ENV_H
#define TEST_ENV_H

#define T_PAGE		(4096)
#define T_PAGES		(16)	/* the racer tests' region */

/* A small region filled with a pattern, as the stressor fills it */
typedef struct {
	stress_args_t args;
	stress_ksm_unmerge_instance_t st;
	stress_ksm_unmerge_ctx_t ctx;
	uint8_t scratch[T_PAGE];
} t_env_t;

/*
 *  t_env_new()
 *	context with templates and n pages of the given pattern (no pagemap)
 */
static t_env_t *t_env_new(const int pattern, const size_t n)
{
	t_env_t *e = calloc(1, sizeof(*e));
	size_t i;

	if (!e)
		return NULL;
	e->args.name = "ksm-unmerge";
	e->args.page_size = T_PAGE;
	e->args.bogo.max_ops = NEVER_END_OPS;	/* a running instance: stop checks pass */
	e->ctx.args = &e->args;
	e->ctx.st = &e->st;
	e->ctx.page_size = T_PAGE;
	e->ctx.npages = n;
	e->ctx.region_size = n * T_PAGE;
	e->ctx.pattern = pattern;
	e->ctx.seed = 0x1234567890abcdefULL;
	e->ctx.pagemap_fd = e->ctx.kpageflags_fd = -1;
	e->ctx.templates = calloc(KSM_UNMERGE_FEW_TEMPLATES + 1, T_PAGE);
	e->ctx.region = calloc(n, T_PAGE);
	if (!e->ctx.templates || !e->ctx.region) {
		free(e->ctx.templates);
		free(e->ctx.region);
		free(e);
		return NULL;
	}
	stress_ksm_unmerge_templates_fill(&e->ctx);
	for (i = 0; i < n; i++)
		stress_ksm_unmerge_page_fill(&e->ctx, i, e->ctx.region + i * T_PAGE);
	return e;
}

/*
 *  t_env_free()
 *	release a t_env_new()
 */
static void t_env_free(t_env_t *e)
{
	free(e->ctx.templates);
	free(e->ctx.region);
	free(e);
}

/*
 *  t_teardown()
 *	cmocka teardown: free the environment
 */
static int MAYBE_UNUSED t_teardown(void **state)
{
	t_env_free(*state);
	return 0;
}

#endif
