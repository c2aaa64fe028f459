/*
 * core-shim/core-mmap.h: mapping helpers (stress-ng core-mmap.h)
 */
#ifndef CORE_MMAP_H
#define CORE_MMAP_H

#include "stress-ng.h"

extern WARN_UNUSED void *stress_mmap_anon_shared(const size_t length, const int prot);

#endif
