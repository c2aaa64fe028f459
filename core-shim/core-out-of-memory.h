/*
 * core-shim/core-out-of-memory.h: OOM helpers (stress-ng core-out-of-memory.h)
 */
#ifndef CORE_OUT_OF_MEMORY_H
#define CORE_OUT_OF_MEMORY_H

#include "stress-ng.h"

extern bool stress_process_oomed(const pid_t pid);
extern void stress_set_oom_adjustment(stress_args_t *args, const bool killable);

#endif
