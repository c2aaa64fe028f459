/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-racer.h: the shared fixture of the per-racer unit tests
 * (tests/unit/test-racer-<name>.c, test-check-counters.c): the stressor
 * itself, cmocka, the pattern-filled context of test-env.h, pagemap entry
 * helpers and the racer-table check.  Each test source includes only this.
 */
#ifndef TEST_RACER_H
#define TEST_RACER_H

#include "../../stress-ksm-unmerge.c"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#define T_ZERO_PFN	(0x1000ULL)
#define T_KSM_FLAG	STRESS_BIT_ULL(KPF_BIT_KSM)

#include "test-env.h"

/*
 *  t_setup_mixed()
 *	environment with the "mixed" pattern (same, few, zero, unique pages)
 */
static int MAYBE_UNUSED t_setup_mixed(void **state)
{
	t_env_t *e = t_env_new(KSM_UNMERGE_PATTERN_MIXED, T_PAGES);

	*state = e;
	return e ? 0 : -1;
}

/*
 *  t_setup_same()
 *	environment with the "same" pattern and a known zero page pfn
 */
static int MAYBE_UNUSED t_setup_same(void **state)
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
static uint64_t MAYBE_UNUSED t_entry(const uint64_t pfn)
{
	return PM_PRESENT | pfn;
}

/*
 *  t_racer_built()
 *	racer idx is built under its own name, with a single-token evidence name
 */
static void MAYBE_UNUSED t_racer_built(const size_t idx)
{
	const stress_ksm_unmerge_racer_t *r = &stress_ksm_unmerge_racers[idx];

	assert_string_equal(r->name, stress_ksm_unmerge_racer_name(idx));
	assert_non_null(r->start);
	assert_non_null(r->stop);
	assert_null(strpbrk(r->evidence, " =\t"));
}

#endif
