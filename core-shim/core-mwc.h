/*
 * core-shim/core-mwc.h: the multiply-with-carry PRNG (stress-ng core-mwc.h)
 */
#ifndef CORE_MWC_H
#define CORE_MWC_H

extern void stress_mwc_reseed(void);
extern void stress_mwc_seed(void);
extern uint8_t stress_mwc1(void);
extern uint8_t stress_mwc8(void);
extern uint32_t stress_mwc32(void);
extern uint64_t stress_mwc64(void);

static inline uint32_t ALWAYS_INLINE stress_mwc32modn(const uint32_t max)
{
	return (uint32_t)(((uint64_t)stress_mwc32() * (uint64_t)max) >> 32);
}

#endif
