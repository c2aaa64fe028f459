/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/core-mmap.c: the mapping helpers of stress-ng's core-mmap.c
 * the stressor uses.
 */
#include "stress-ng.h"
#include "core-mmap.h"

/*
 *  stress_mmap_anon_shared()
 *	anonymous shared mapping of length bytes; MAP_FAILED on failure
 *	(stress-ng's Linux path)
 */
void *stress_mmap_anon_shared(const size_t length, const int prot)
{
	const int prot_flag = prot & (PROT_READ | PROT_WRITE | PROT_EXEC);

	return mmap(NULL, length, prot_flag, MAP_ANONYMOUS | MAP_SHARED, -1, 0);
}
