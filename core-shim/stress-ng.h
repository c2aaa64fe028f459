/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/stress-ng.h: the subset of the stress-ng 0.22 core API that
 * stress-ksm-unmerge.c uses, with stress-ng's names, types and semantics,
 * so the same stressor source builds standalone.  Declarations only; the
 * implementations live in core-shim/core-*.c, one concern per file.
 */
#ifndef STRESS_NG_H
#define STRESS_NG_H

#define STRESS_KSM_STANDALONE	(1)

#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <bsd/string.h>
#include <bsd/unistd.h>

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>

/*
 * What stress-ng's generated config.h says about this (Linux, glibc) box;
 * -DSTRESS_NO_HAVE_X turns HAVE_X off (tests/it/build/guards.sh builds the
 * stressor once per guard off, as on a libc or arch that lacks it)
 */
#if !defined(STRESS_NO_HAVE_MADVISE)
#define HAVE_MADVISE		(1)
#endif
#if !defined(STRESS_NO_HAVE_PRCTL)
#define HAVE_PRCTL		(1)
#endif
#if !defined(STRESS_NO_HAVE_SYS_PRCTL_H)
#define HAVE_SYS_PRCTL_H	(1)
#endif
#if !defined(STRESS_NO_HAVE_VMSPLICE)
#define HAVE_VMSPLICE		(1)
#endif
#if !defined(STRESS_NO_HAVE_SPLICE)
#define HAVE_SPLICE		(1)
#endif
#if !defined(STRESS_NO_HAVE_LINUX_USERFAULTFD_H)
#define HAVE_LINUX_USERFAULTFD_H (1)
#endif
#if defined(__has_include)
#if __has_include(<linux/io_uring.h>)
#if !defined(STRESS_NO_HAVE_LINUX_IO_URING_H)
#define HAVE_LINUX_IO_URING_H	(1)
#endif
#endif
#endif
#if !defined(STRESS_NO_HAVE_POLL_H)
#define HAVE_POLL_H		(1)
#endif
#if !defined(STRESS_NO_HAVE_LIB_PTHREAD)
#define HAVE_LIB_PTHREAD	(1)
#endif
#if !defined(STRESS_NO_HAVE_CLOCK_GETTIME)
#define HAVE_CLOCK_GETTIME	(1)
#endif
#if !defined(STRESS_NO_HAVE_GETRUSAGE)
#define HAVE_GETRUSAGE		(1)
#endif
#if !defined(STRESS_NO_HAVE_REGEX_H)
#define HAVE_REGEX_H		(1)
#endif
#if !defined(STRESS_NO_HAVE_REGEXEC)
#define HAVE_REGEXEC		(1)
#endif
#if !defined(STRESS_NO_HAVE_SYS_UIO_H)
#define HAVE_SYS_UIO_H		(1)
#endif
#if !defined(STRESS_NO_HAVE_SYS_FILE_H)
#define HAVE_SYS_FILE_H		(1)
#endif
#if !defined(STRESS_NO_HAVE_SYS_UTSNAME_H)
#define HAVE_SYS_UTSNAME_H	(1)
#endif
#if !defined(STRESS_NO_HAVE_MEMFD_CREATE)
#define HAVE_MEMFD_CREATE	(1)
#endif
#if !defined(STRESS_NO_HAVE_PTRACE)
#define HAVE_PTRACE		(1)
#endif
#if !defined(STRESS_NO_HAVE_SYS_VFS_H)
#define HAVE_SYS_VFS_H		(1)
#endif
#if !defined(STRESS_NO_HAVE_ATOMIC)
#define HAVE_ATOMIC_FETCH_OR	(1)
#define HAVE_ATOMIC_ADD_FETCH	(1)
#define HAVE_ATOMIC_SUB_FETCH	(1)
#endif
#if !defined(STRESS_NO_HAVE_PIPE2)
#define HAVE_PIPE2		(1)
#endif
#if !defined(STRESS_NO_HAVE_PROCESS_VM_READV)
#define HAVE_PROCESS_VM_READV	(1)
#endif
#if !defined(STRESS_NO_HAVE_LOCKF)
#define HAVE_LOCKF		(1)
#endif
#if !defined(STRESS_NO_HAVE_SCHED_H)
#define HAVE_SCHED_H		(1)
#endif
#if !defined(STRESS_NO_HAVE_SCHED_SETAFFINITY)
#define HAVE_SCHED_SETAFFINITY	(1)
#endif

/* core-attribute.h */
#define WARN_UNUSED	__attribute__((warn_unused_result))
#define NORETURN	__attribute__((noreturn))
#define ALWAYS_INLINE	__attribute__((always_inline))
#define NOINLINE	__attribute__((noinline))
#define CONST		__attribute__((const))
#define PURE		__attribute__((pure))
#define FORMAT(func, a, b) __attribute__((format(func, a, b)))
#define MAYBE_UNUSED	__attribute__((unused))
#define OPTIMIZE3	__attribute__((optimize("-O3")))

#define LIKELY(x)	__builtin_expect((x), 1)
#define UNLIKELY(x)	__builtin_expect((x), 0)

#define VOID_RET(type, x)	\
do {				\
	type void_ret = x;	\
				\
	(void)void_ret;		\
} while (0)

#define STRESS_BIT_U(shift)	(1U << (shift))
#define STRESS_BIT_UL(shift)	(1UL << (shift))
#define STRESS_BIT_ULL(shift)	(1ULL << (shift))

#define KB			(1ULL << 10)
#define MB			(1ULL << 20)
#define GB			(1ULL << 30)
#define NEVER_END_OPS		(0xffffffffffffffffULL)
#define MAX_32			(0xffffffffUL)
#define MAX_48			(0xffffffffffffULL)
#define MAX_MEM_LIMIT		(MAX_48)
#define TIMEOUT_NOT_SET		(~0ULL)
#define SIZEOF_ARRAY(a)		(sizeof(a) / sizeof(a[0]))
#define STRESS_MINIMUM(a, b)	(((a) < (b)) ? (a) : (b))
#define STRESS_MAXIMUM(a, b)	(((a) > (b)) ? (a) : (b))

/* Exit statuses (stress-ng.h) */
#define EXIT_NOT_SUCCESS		(2)
#define EXIT_NO_RESOURCE		(3)
#define EXIT_NOT_IMPLEMENTED		(4)
#define EXIT_SIGNALED			(5)
#define EXIT_BY_SYS_EXIT		(6)
#define EXIT_METRICS_UNTRUSTWORTHY	(7)

/* Process states */
#define STRESS_STATE_START		(0)
#define STRESS_STATE_INIT		(1)
#define STRESS_STATE_RUN		(2)
#define STRESS_STATE_SYNC_WAIT		(3)
#define STRESS_STATE_DEINIT		(4)
#define STRESS_STATE_STOP		(5)
#define STRESS_STATE_EXIT		(6)
#define STRESS_STATE_WAIT		(7)
#define STRESS_STATE_ZOMBIE		(8)

/* Stressor classes */
typedef unsigned long int stress_class_t;
#define CLASS_CPU_CACHE		STRESS_BIT_UL(2)
#define CLASS_OS		STRESS_BIT_UL(13)
#define CLASS_PATHOLOGICAL	STRESS_BIT_UL(14)
#define CLASS_PIPE_IO		STRESS_BIT_UL(15)
#define CLASS_VM		STRESS_BIT_UL(23)

typedef enum {
	VERIFY_NONE	= 0x00,
	VERIFY_OPTIONAL = 0x01,
	VERIFY_ALWAYS   = 0x02,
} stress_verify_t;

/* Metric mean types */
#define STRESS_METRIC_GEOMETRIC_MEAN	(0x1)
#define STRESS_METRIC_HARMONIC_MEAN	(0x2)
#define STRESS_METRIC_TOTAL		(0x3)
#define STRESS_METRIC_MAXIMUM		(0x4)
#define STRESS_METRICS_ITEMS_DEFAULT_SIZE (8)

#include "core-opts.h"
#include "core-setting.h"

/* Bogo-op counter state */
typedef struct {
	uint64_t counter;
	bool counter_ready;
	bool run_ok;
	bool force_killed;
	bool padding;
} stress_counter_t;

typedef struct {
	void *page_none;
	void *page_ro;
	void *page_wo;
} stress_mapped_t;

/* Run-time stressor args: lives in shared memory */
typedef struct {
	struct {
		volatile uint64_t max_ops;
		stress_counter_t count;
		bool possibly_oom_killed;
	} bogo;
	const char *name;
	uint32_t instance;
	uint32_t instances;
	pid_t pid;
	size_t page_size;
	double time_end;
	stress_mapped_t *mapped;
	struct stress_stats *stats;
	const struct stressor_info *info;
} stress_args_t;

/* Help information for options */
typedef struct {
	const char *opt_s;
	const char *opt_l;
	const char *description;
} stress_help_t;

typedef enum {
	STRESS_EX_TYPE_BEGIN   = 0x00,
	STRESS_EX_TYPE_FEATURE = 0x00,
	STRESS_EX_TYPE_LIBRARY = 0x01,
	STRESS_EX_TYPE_SYSCALL = 0x02,
	STRESS_EX_TYPE_END =     0x03,
} stress_exercise_type_t;

typedef struct stress_exercises {
	stress_exercise_type_t type;
	const char *name;
} stress_exercises_t;

#define STRESS_EX_FEATURE(name)	{ STRESS_EX_TYPE_FEATURE, name }
#define STRESS_EX_LIBRARY(name)	{ STRESS_EX_TYPE_LIBRARY, name }
#define STRESS_EX_SYSCALL(name)	{ STRESS_EX_TYPE_SYSCALL, name }
#define STRESS_EX_END		{ STRESS_EX_TYPE_END, NULL }

#include "core-parse-opts.h"

typedef struct stressor_info {
	int (*stressor)(stress_args_t *args);
	int (*supported)(const char *name);
	void (*init)(const uint32_t instances);
	void (*deinit)(void);
	void (*default_set)(void);
	void (*limit_set)(uint64_t max);
	const stress_opt_t *opts;
	const stress_help_t *help;
	const stress_exercises_t *exercises;
	const stress_class_t classifier;
	const stress_verify_t verify;
	const char *unimplemented_reason;
	size_t max_metrics_items;
} stressor_info_t;

extern const stressor_info_t stress_ksm_unmerge_info;

/* Globals (stress-ng.c) */
extern uint64_t g_opt_timeout;
extern uint64_t g_opt_flags;
extern volatile bool g_stress_continue_flag;
extern jmp_buf g_error_env;

extern void stress_bogo_max_ops_zero(void);

/* Memory barrier */
static inline void ALWAYS_INLINE stress_asm_mb(void)
{
	__asm__ __volatile__("" ::: "memory");
}

static inline bool ALWAYS_INLINE stress_continue_flag(void)
{
	return g_stress_continue_flag;
}

static inline void ALWAYS_INLINE stress_continue_set_flag(const bool setting)
{
	g_stress_continue_flag = setting;
	if (!setting)
		stress_bogo_max_ops_zero();
}

static inline void ALWAYS_INLINE stress_bogo_stop(stress_args_t *args)
{
	args->bogo.max_ops = 0ULL;
}

static inline void ALWAYS_INLINE stress_bogo_add(stress_args_t *args, const uint64_t inc)
{
	args->bogo.count.counter_ready = false;
	stress_asm_mb();
	args->bogo.count.counter += inc;
	stress_asm_mb();
	args->bogo.count.counter_ready = true;
}

static inline void ALWAYS_INLINE stress_bogo_inc(stress_args_t *args)
{
	stress_bogo_add(args, 1);
}

static inline uint64_t ALWAYS_INLINE stress_bogo_get(stress_args_t *args)
{
	return args->bogo.count.counter;
}

static inline void ALWAYS_INLINE stress_bogo_ready(stress_args_t *args)
{
	args->bogo.count.counter_ready = true;
}

static inline void ALWAYS_INLINE stress_bogo_set(stress_args_t *args, const uint64_t val)
{
	args->bogo.count.counter_ready = false;
	stress_asm_mb();
	args->bogo.count.counter = val;
	stress_asm_mb();
	args->bogo.count.counter_ready = true;
}

static inline void ALWAYS_INLINE stress_force_killed_bogo(stress_args_t *args)
{
	args->bogo.count.force_killed = true;
}

#define stress_continue(args)	LIKELY(args->bogo.count.counter < args->bogo.max_ops)

static inline bool ALWAYS_INLINE stress_instance_zero(stress_args_t *args)
{
	return args->instance == 0;
}

/* Metrics (core-metrics.c) */
extern void stress_metrics_set(stress_args_t *args, const char *description,
	const double value, const int mean_type);

#include "core-log.h"
#include "core-helper.h"
#include "core-shim.h"
#include "core-mwc.h"
#include "core-memory.h"
#include "core-filesystem.h"
#include "core-shim-ext.h"

#endif
