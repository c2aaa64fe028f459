/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * This program is distributed in the hope that it will be useful,
 * but WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
 * GNU General Public License for more details.
 *
 * ksm-unmerge: merge anonymous memory with KSM (ksmd), unmerge it
 * (break_ksm() through MADV_UNMERGEABLE or PR_SET_MEMORY_MERGE 0) while
 * racers drive other kernel paths on the same pages (vmsplice, GUP pins,
 * userfaultfd-wp, fork, exit/process_mrelease, mprotect, mremap, ...),
 * and verify every step from the kernel's own view (pagemap, kpageflags,
 * ksm_stat, cow_ksm).  One bogo op is one verified merge/unmerge cycle.
 * Each instance runs its cycles in a worker child it supervises: a
 * killed worker fails the run, a stuck unmerge is reported with its
 * kernel stack.  ksmd's knobs are global: they are saved, set and
 * restored by the parent (init/deinit).
 */
#include "stress-ng.h"
#include "core-builtin.h"
#include "core-killpid.h"
#include "core-out-of-memory.h"

#include <math.h>
#include <stdarg.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

#if defined(HAVE_SYS_PRCTL_H)
#include <sys/prctl.h>
#endif
#if defined(HAVE_LIB_PTHREAD)
#include <pthread.h>
#endif
#if defined(HAVE_POLL_H)
#include <poll.h>
#endif
#if defined(HAVE_SYS_UIO_H)
#include <sys/uio.h>
#endif
#if defined(HAVE_SYS_FILE_H)
#include <sys/file.h>
#endif
#if defined(HAVE_SYS_UTSNAME_H)
#include <sys/utsname.h>
#endif
#if defined(HAVE_SYS_VFS_H)
#include <sys/vfs.h>
#endif
#if defined(HAVE_LINUX_USERFAULTFD_H)
#include <linux/userfaultfd.h>
#endif
#if defined(HAVE_LINUX_IO_URING_H)
#include <linux/io_uring.h>
#endif
#if defined(HAVE_PTRACE)
#include <sys/ptrace.h>
#endif

#define MIN_KSM_UNMERGE_BYTES		(64 * KB)
#define MAX_KSM_UNMERGE_BYTES		(MAX_MEM_LIMIT)
#define DEFAULT_KSM_UNMERGE_BYTES	(64 * MB)
#define MIN_KSM_UNMERGE_SPARSE		(1 * MB)
#define MAX_KSM_UNMERGE_SPARSE		(MAX_48)
#define DEFAULT_KSM_UNMERGE_SPARSE	(16ULL * GB)

static const stress_help_t help[] = {
	{ NULL,	"ksm-unmerge N",	"start N workers merging and unmerging KSM pages" },
	{ NULL,	"ksm-unmerge-bytes N",	"memory merged and unmerged by all workers" },
	{ NULL,	"ksm-unmerge-method M",	"method M: all, madvise, prctl or one racer, default all" },
	{ NULL,	"ksm-unmerge-ops N",	"stop after N verified merge/unmerge cycles" },
	{ NULL,	"ksm-unmerge-pattern P", "page contents P: same, few, zero, mixed or unique" },
	{ NULL,	"ksm-unmerge-sparse N",	"address space of the sparse racer's range (default 16G)" },
	{ NULL,	NULL,			NULL }
};

static const char * const stress_ksm_unmerge_patterns[] = {
	"same", "few", "zero", "mixed", "unique",
};

enum {
	KSM_PATTERN_SAME = 0,
	KSM_PATTERN_FEW,
	KSM_PATTERN_ZERO,
	KSM_PATTERN_MIXED,
	KSM_PATTERN_UNIQUE,
};

/*
 *  stress_ksm_unmerge_pattern()
 *	name of page pattern i, NULL past the end
 */
static const char *stress_ksm_unmerge_pattern(const size_t i)
{
	return (i < SIZEOF_ARRAY(stress_ksm_unmerge_patterns)) ? stress_ksm_unmerge_patterns[i] : NULL;
}

static const char *stress_ksm_unmerge_method(const size_t i);

static const stress_opt_t opts[] = {
	{ OPT_ksm_unmerge_bytes,   "ksm-unmerge-bytes",   TYPE_ID_SIZE_T_BYTES_VM, MIN_KSM_UNMERGE_BYTES, MAX_KSM_UNMERGE_BYTES, NULL },
	{ OPT_ksm_unmerge_method,  "ksm-unmerge-method",  TYPE_ID_SIZE_T_METHOD, 0, 0, stress_ksm_unmerge_method },
	{ OPT_ksm_unmerge_pattern, "ksm-unmerge-pattern", TYPE_ID_SIZE_T_METHOD, 0, 0, stress_ksm_unmerge_pattern },
	{ OPT_ksm_unmerge_sparse,  "ksm-unmerge-sparse",  TYPE_ID_SIZE_T_BYTES, MIN_KSM_UNMERGE_SPARSE, MAX_KSM_UNMERGE_SPARSE, NULL },
	END_OPT,
};

#if defined(__linux__) &&		\
    defined(HAVE_MADVISE) &&		\
    defined(HAVE_SYS_PRCTL_H) &&	\
    defined(HAVE_LIB_PTHREAD) &&	\
    defined(MADV_MERGEABLE) &&		\
    defined(MADV_UNMERGEABLE)

#if !defined(PR_SET_MEMORY_MERGE)
#define PR_SET_MEMORY_MERGE	(67)
#endif
#if !defined(PR_GET_MEMORY_MERGE)
#define PR_GET_MEMORY_MERGE	(68)
#endif
#if !defined(MAP_NORESERVE)
#define MAP_NORESERVE		(0)
#endif

#define KSM_SYSFS		"/sys/kernel/mm/ksm"
#define KSM_STATE_FILE		"/run/stress-ksm-unmerge.state"
#define KSM_CALL_BYTES		(128 * MB)	/* madvise unmerge: bytes per call */
#define KSM_CHUNK		(4096)		/* pages read from pagemap at a time */
#define KSM_FEW_TEMPLATES	(8)
#define KSM_LAT_SAMPLES		(4096)
#define KSM_DETAILS		(4)		/* named counters a racer may add */
#define KSM_SUSPECTS		(4)		/* pages confirmed by a write, per cycle */
#define KSM_JUDGE_CYCLES	(4)		/* fewer verified cycles: reach not judged */
#define KSM_MAX_FAILURES	(5)
#define KSM_HANG_SECS		(60.0)		/* a kernel step stuck this long is a hang */
#define KSM_STOP_SECS		(10.0)		/* a worker must end this soon after the stop */
#define KSM_TEARDOWN_RATE	(3.0 * GB)	/* bytes/s unmapped at exit, measured low end */
#define KSM_DRAIN_SECS		(2.0)		/* end of run: ksmd's last full scan, bound */
#define KSM_QUIET_EVERY		(4)		/* every 4th cycle: racers held off */
#define KSM_OP_PAGES		(16)		/* pages per racer op */
#define KSM_RACER_BYTES		(4 * MB)	/* memory a racer keeps besides per-page state */

#define PM_PFN_MASK		((1ULL << 55) - 1)
#define PM_EXCLUSIVE		STRESS_BIT_ULL(56)
#define PM_UFFD_WP		STRESS_BIT_ULL(57)
#define PM_SWAP			STRESS_BIT_ULL(62)
#define PM_PRESENT		STRESS_BIT_ULL(63)
#define KPF_ANON		STRESS_BIT_ULL(12)
#define KPF_HEAD		STRESS_BIT_ULL(15)
#define KPF_TAIL		STRESS_BIT_ULL(16)
#define KPF_KSM			STRESS_BIT_ULL(21)
#define KPF_THP			STRESS_BIT_ULL(22)
#define KPF_ZERO_PAGE		STRESS_BIT_ULL(24)

/* the merge switches and racers a run uses: bit 0 madvise, 1 prctl, 2.. racers */
#define KSM_SW_MADVISE		STRESS_BIT_ULL(0)
#define KSM_SW_PRCTL		STRESS_BIT_ULL(1)
#define KSM_SW_BOTH		(KSM_SW_MADVISE | KSM_SW_PRCTL)
#define KSM_RACER_BIT(i)	STRESS_BIT_ULL(2 + (i))

/* cycle phases, seen by the racers */
enum {
	KSM_PHASE_IDLE = 0,
	KSM_PHASE_MERGING,
	KSM_PHASE_MERGED,
	KSM_PHASE_UNMERGING,
	KSM_PHASE_VERIFY,
};

/* what one page is, from the self-tested signals */
enum {
	KSM_PAGE_ABSENT = 0,	/* not mapped */
	KSM_PAGE_SWAPPED,	/* swapped out */
	KSM_PAGE_PRIVATE,	/* a private anonymous page */
	KSM_PAGE_HOLE,		/* the zero page where the pattern has none: a read-faulted hole */
	KSM_PAGE_KZERO,		/* the zero page where the pattern has one: a KSM zero page */
	KSM_PAGE_KSM,		/* a KSM page */
};

/* what one page holds under a pattern */
enum {
	KSM_KIND_SAME = 0,
	KSM_KIND_FEW,
	KSM_KIND_ZERO,
	KSM_KIND_UNIQUE,
};

/* kernel interfaces the verdicts use, self-tested once per run */
enum {
	KSM_IFACE_ZERO_PAGE = 0,
	KSM_IFACE_KPF_KSM,
	KSM_IFACE_PFNS,
	KSM_IFACE_KSM_STAT,
	KSM_IFACE_COW_KSM,
	KSM_IFACES,
};

static const char * const stress_ksm_unmerge_iface_names[] = {
	"zero-page", "kpageflags-ksm", "pfns", "ksm_stat", "cow_ksm",
};

/* what the self-test saw: raw pagemap/kpageflags words and counters */
typedef struct {
	int kver;			/* kernel major * 100 + minor */
	bool pagemap, kpageflags;	/* readable */
	uint64_t rf[2], rf_flags[2];	/* two read-faulted pages of a fresh mapping */
	uint64_t fresh, fresh_flags;	/* a written page KSM never saw */
	int merged;			/* probe merge: 1 merged, 0 not, -1 not run */
	uint64_t mg[2], mg_flags[2];	/* two identical pages after the probe merge */
	bool zp_valid;			/* a zero-filled page was merged (use_zero_pages=1) */
	uint64_t zp, zp_flags;		/* that page */
	uint64_t ksm_pages;		/* pages on a shared KSM pfn the probe unmerge broke */
	int64_t cow_before, cow_after;	/* cow_ksm around the probe unmerge, -1 absent */
	bool stat, stat_merging, stat_zero;	/* ksm_stat and its two lines */
	bool merging_pages;		/* /proc/self/ksm_merging_pages exists */
} stress_ksm_unmerge_obs_t;

/* the self-test's verdict: which signals the verdicts may use */
typedef struct {
	bool tested, pfns, kpageflags;
	bool kpf_zero;			/* KPF_ZERO_PAGE names the zero page */
	bool kpf_ksm;			/* KPF_KSM is set on KSM pages only */
	bool excl;			/* pagemap bit 56 is set on a private page */
	bool zero_unshare;		/* unmerge unshares KSM zero pages (6.4+) */
	uint64_t zero_pfn;		/* the zero page's pfn, 0 unknown */
	bool stat_merging, stat_zero, merging_pages, cow_ksm;
	bool trusted[KSM_IFACES];
	char why[KSM_IFACES][160];	/* the kernel behaviour, when not trusted */
	char use[KSM_IFACES][160];	/* what is used (instead) */
} stress_ksm_unmerge_iface_t;

/* KSM knobs saved, set and restored; advisor_mode last (6.8+) */
static const char * const stress_ksm_unmerge_knob_names[] = {
	"run", "pages_to_scan", "sleep_millisecs", "use_zero_pages",
	"max_page_sharing", "merge_across_nodes", "smart_scan", "advisor_mode",
};

#define KSM_KNOBS	(SIZEOF_ARRAY(stress_ksm_unmerge_knob_names))

typedef struct {
	char value[KSM_KNOBS][32];	/* "" = absent */
} stress_ksm_unmerge_knobs_t;

/* ring of the latest latency samples, ms */
typedef struct {
	uint32_t count;
	uint64_t total;
	double ms[KSM_LAT_SAMPLES];
} stress_ksm_unmerge_lat_t;

/* one racer's figures, in shared memory so they survive a killed worker */
typedef struct {
	uint64_t ops, evidence, failures, op_ns, meet_timeouts;
	uint64_t detail[KSM_DETAILS];
	bool active, skipped;
	char reason[96];		/* why skipped or not reached */
} stress_ksm_unmerge_racer_stats_t;

#define KSM_RACERS	(14)

/* one instance's figures, in shared memory */
typedef struct {
	uint64_t cycles, merge_timeouts, partial_merges, failures;
	uint64_t pages_merged, pages_zero, pages_unmerged, cow_ksm;
	uint64_t method_cycles[2], unmerge_calls, unmerge_cycles;
	uint64_t quiet_cycles, quiet_pages;	/* cycles with every racer held off */
	double unmerge_secs, merge_wait_secs, quiet_secs;
	char stop_step[32];		/* step the end of the run cut, "" none */
	stress_ksm_unmerge_lat_t unmerge_lat, mrelease_lat;
	volatile int phase;
	volatile double phase_since;	/* when the phase began */
	volatile double hang_allow;	/* secs excused from the hang bound (sparse walk) */
	volatile bool in_call;		/* inside the timed unmerge call */
	stress_ksm_unmerge_racer_stats_t racer[KSM_RACERS];
} stress_ksm_unmerge_instance_t;

/* state shared by the parent (init/deinit), the instances and their workers */
typedef struct {
	uint32_t instances;
	volatile uint32_t running;	/* instances not yet ended */
	bool knobs_ok;
	char knob_error[160];
	size_t pattern, method;
	uint64_t taint;			/* /proc/sys/kernel/tainted at the start */
	int64_t zero_leak0;		/* global ksm_zero_pages not held by a live process, at the start */
	stress_ksm_unmerge_knobs_t saved;
	stress_ksm_unmerge_iface_t iface;
	uint64_t mem_avail;		/* MemAvailable before any region was filled */
	volatile bool disagree_reported;
	stress_ksm_unmerge_instance_t inst[];
} stress_ksm_unmerge_shared_t;

static stress_ksm_unmerge_shared_t *stress_ksm_unmerge_shared;
static size_t stress_ksm_unmerge_shared_size;
static int stress_ksm_unmerge_lock_fd = -1;

