/*
 * core-shim/core-builtin.h: builtin string/memory/math wrappers (stress-ng
 * core-builtin.h; the same names, the builtins stress-ng picks with gcc
 * and clang)
 */
#ifndef CORE_BUILTIN_H
#define CORE_BUILTIN_H

#define shim_memset(s, c, n)		__builtin_memset((s), (c), (n))
#define shim_memcpy(dst, src, n)	__builtin_memcpy((dst), (src), (n))
#define shim_memmove(dst, src, n)	__builtin_memmove((dst), (src), (n))
#define shim_memcmp(s1, s2, n)		__builtin_memcmp((s1), (s2), (n))
#define shim_strchr(str, c)		__builtin_strchr((str), (c))
#define shim_strcmp(s1, s2)		__builtin_strcmp((s1), (s2))
#define shim_strcspn(s, reject)		__builtin_strcspn((s), (reject))
#define shim_strncmp(s1, s2, n)		__builtin_strncmp((s1), (s2), (n))
#define shim_strlen(s)			__builtin_strlen((s))
#define shim_strrchr(str, c)		__builtin_strrchr((str), (c))
#define shim_strstr(haystack, needle)	__builtin_strstr((haystack), (needle))
#define shim_sqrt(x)			__builtin_sqrt((x))

#endif
