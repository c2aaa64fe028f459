/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/core-mwc.c: multiply-with-carry pseudo random numbers
 * (Marsaglia's two 16 bit MWC generators); --no-rand-seed gives a
 * fixed seed so runs repeat.
 */
#include "stress-ng.h"

#define MWC_SEED_W	(521288629U)
#define MWC_SEED_Z	(362436069U)

static uint32_t mwc_w = MWC_SEED_W;
static uint32_t mwc_z = MWC_SEED_Z;

/*
 *  stress_mwc_seed()
 *	reset to the fixed default seed
 */
void stress_mwc_seed(void)
{
	mwc_w = MWC_SEED_W;
	mwc_z = MWC_SEED_Z;
}

/*
 *  stress_mwc_reseed()
 *	seed from time and pid unless --no-rand-seed
 */
void stress_mwc_reseed(void)
{
	struct timeval tv;
	uint64_t aux;

	if (g_opt_flags & OPT_FLAGS_NO_RAND_SEED) {
		stress_mwc_seed();
		return;
	}
	(void)gettimeofday(&tv, NULL);
	aux = (uint64_t)tv.tv_sec ^ ((uint64_t)tv.tv_usec << 20) ^
	      ((uint64_t)getpid() << 8) ^ (uint64_t)(uintptr_t)&aux;
	mwc_w = (uint32_t)(aux ^ (aux >> 32));
	mwc_z = (uint32_t)((aux >> 16) ^ (aux * 2654435761ULL));
	if (!mwc_w)
		mwc_w = MWC_SEED_W;
	if (!mwc_z)
		mwc_z = MWC_SEED_Z;
}

/*
 *  stress_mwc32()
 *	32 bit pseudo random number
 */
uint32_t stress_mwc32(void)
{
	mwc_z = 36969 * (mwc_z & 65535) + (mwc_z >> 16);
	mwc_w = 18000 * (mwc_w & 65535) + (mwc_w >> 16);
	return (mwc_z << 16) + mwc_w;
}

/*
 *  stress_mwc64()
 *	64 bit pseudo random number
 */
uint64_t stress_mwc64(void)
{
	return ((uint64_t)stress_mwc32() << 32) | (uint64_t)stress_mwc32();
}

/*
 *  stress_mwc8()
 *	8 bit pseudo random number
 */
uint8_t stress_mwc8(void)
{
	return (uint8_t)(stress_mwc32() >> 24);
}

/*
 *  stress_mwc1()
 *	1 bit pseudo random number
 */
uint8_t stress_mwc1(void)
{
	return (uint8_t)(stress_mwc32() >> 31);
}
