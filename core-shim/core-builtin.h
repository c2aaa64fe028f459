/*
 * core-shim/core-builtin.h: builtin string/memory wrappers (stress-ng core-builtin.h)
 */
#ifndef CORE_BUILTIN_H
#define CORE_BUILTIN_H

#define shim_memset(s, c, n)		__builtin_memset((s), (c), (n))
#define shim_memcpy(dst, src, n)	__builtin_memcpy((dst), (src), (n))
#define shim_memcmp(s1, s2, n)		__builtin_memcmp((s1), (s2), (n))
#define shim_strcmp(s1, s2)		__builtin_strcmp((s1), (s2))
#define shim_strncmp(s1, s2, n)		__builtin_strncmp((s1), (s2), (n))
#define shim_strlen(s)			__builtin_strlen((s))

#endif
