/*
 * Copyright (C) 2026      SENDER NAME (placeholder: the sender names the copyright holder)
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
 * You should have received a copy of the GNU General Public License
 * along with this program; if not, write to the Free Software
 * Foundation, Inc., 51 Franklin Street, Fifth Floor, Boston, MA 02110-1301, USA.
 *
 * ksm-unmerge: merge anonymous memory with ksmd and unmerge it (break_ksm())
 * while racers drive other kernel paths on the same pages; verify every step
 * from the kernel's own view.  One bogo op is one verified merge/unmerge
 * cycle, run by a worker each instance supervises.  ksmd's global knobs are
 * saved, set and restored by init/deinit.
 *
 * Layout, top to bottom, each part under a "==== Part: ... ====" banner:
 *   Options          limits, help[], page patterns, opts[]
 *   Types            constants, enums, the racer row, the contexts
 *   Readers          clock, kernel counters, pagemap, kpageflags, VmFlags
 *   Knobs            save, set, restore ksmd's knobs; the state file, the run lock
 *   Patterns         page kinds, fill, check, the merge prediction
 *   Setup            the interface self-test, the one page verdict
 *   Verification     scan, merge wait, merge, PFNs, data, unmerge, zero pages
 *   Racer framework  known bugs, shared helpers, threads, meet, quiesce
 *   Racers           one "---- name" section each, then stress_ksm_unmerge_racers[]
 *   One cycle        region, worker context, timed unmerge, merge, the cycle
 *   Instance         metrics, outcome, worker, supervisor, the stressor
 *   Report           the figures over all instances
 *   Init             init/deinit, exercises, stressor_info_t
 *   Fallback         after the #else: the unimplemented stressor
 */
#include "stress-ng.h"
#include "core-builtin.h"
#include "core-killpid.h"
#include "core-mmap.h"
#include "core-out-of-memory.h"

#include <ctype.h>
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
#if defined(HAVE_SCHED_H)
#include <sched.h>
#endif
#if defined(HAVE_SYS_UIO_H)
#include <sys/uio.h>
#endif
#if defined(HAVE_SYS_FILE_H)
#include <sys/file.h>
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

/* ==== Options: limits, help[], page patterns, opts[] ==== */

#define MIN_KSM_UNMERGE_BYTES		(64 * KB)
#define MAX_KSM_UNMERGE_BYTES		(MAX_MEM_LIMIT)
#define DEFAULT_KSM_UNMERGE_BYTES	(64 * MB)
#define MIN_KSM_UNMERGE_SPARSE		(1 * MB)
#define MAX_KSM_UNMERGE_SPARSE		(MAX_MEM_LIMIT)
#if UINTPTR_MAX == MAX_32
#define DEFAULT_KSM_UNMERGE_SPARSE	(1ULL * GB)
#else
#define DEFAULT_KSM_UNMERGE_SPARSE	(16ULL * GB)
#endif

static const stress_help_t help[] = {
	{ NULL,	"ksm-unmerge N",	"start N workers merging and unmerging KSM pages" },
	{ NULL,	"ksm-unmerge-bytes N",	"memory merged and unmerged by all workers" },
	{ NULL,	"ksm-unmerge-method M",	"select method: all, madvise, prctl or one racer" },
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

/* name of page pattern i, NULL past the end */
static const char *stress_ksm_unmerge_pattern(const size_t i)
{
	return (i < SIZEOF_ARRAY(stress_ksm_unmerge_patterns)) ?
		stress_ksm_unmerge_patterns[i] : NULL;
}

static const char *stress_ksm_unmerge_method(const size_t i);

static const stress_opt_t opts[] = {
	{ OPT_ksm_unmerge_bytes,   "ksm-unmerge-bytes",   TYPE_ID_SIZE_T_BYTES_VM,
	  MIN_KSM_UNMERGE_BYTES, MAX_KSM_UNMERGE_BYTES, NULL },
	{ OPT_ksm_unmerge_method,  "ksm-unmerge-method",  TYPE_ID_SIZE_T_METHOD,
	  0, 0, stress_ksm_unmerge_method },
	{ OPT_ksm_unmerge_pattern, "ksm-unmerge-pattern", TYPE_ID_SIZE_T_METHOD,
	  0, 0, stress_ksm_unmerge_pattern },
	{ OPT_ksm_unmerge_sparse,  "ksm-unmerge-sparse",  TYPE_ID_SIZE_T_BYTES,
	  MIN_KSM_UNMERGE_SPARSE, MAX_KSM_UNMERGE_SPARSE, NULL },
	END_OPT,
};

#if defined(__linux__) &&		\
    defined(HAVE_MADVISE) &&		\
    defined(HAVE_SYS_PRCTL_H) &&	\
    defined(HAVE_LIB_PTHREAD) &&	\
    defined(MADV_MERGEABLE) &&		\
    defined(MADV_UNMERGEABLE) &&	\
    defined(MADV_DONTFORK) &&		\
    defined(HAVE_ATOMIC_FETCH_OR) &&	\
    defined(HAVE_ATOMIC_ADD_FETCH) &&	\
    defined(HAVE_ATOMIC_SUB_FETCH) &&	\
    defined(HAVE_LOCKF)

#if !defined(PR_SET_MEMORY_MERGE)
#define PR_SET_MEMORY_MERGE	(67)
#endif
#if !defined(PR_GET_MEMORY_MERGE)
#define PR_GET_MEMORY_MERGE	(68)
#endif
#if !defined(MAP_NORESERVE)
#define MAP_NORESERVE		(0)
#endif
#if !defined(TMPFS_MAGIC)
#define TMPFS_MAGIC		(0x01021994)
#endif

/* ==== Types: constants, enums, the racer row, the contexts ==== */

#define KSM_SYSFS		"/sys/kernel/mm/ksm"
#define KSM_STAT		"/proc/self/ksm_stat"
#define KSM_STATE_FILE		"/run/stress-ksm-unmerge.state"
#define KSM_CALL_BYTES		(128 * MB)	/* madvise unmerge: bytes per call */
#define KSM_CHUNK		(4096)		/* pages read from pagemap at a time */
#define KSM_FEW_TEMPLATES	(8)
#define KSM_LAT_SAMPLES		(4096)
#define KSM_DETAILS		(7)		/* named counters a racer may add */
#define KSM_SUSPECTS		(4)		/* pages confirmed by a write, per cycle */
#define KSM_JUDGE_CYCLES	(4)		/* fewer verified cycles: reach not judged */
#define KSM_MAX_FAILURES	(5)
#define KSM_HANG_SECS		(60.0)		/* a kernel step stuck this long is a hang */
#define KSM_STOP_SECS		(10.0)		/* a worker idle this long after the stop is stuck */
#define KSM_STOP_CAP_SECS	(60.0)		/* ...and one still busy in the kernel this long */
#define KSM_TEARDOWN_RATE	(3.0 * GB)	/* bytes/s unmapped at exit, measured low end */
#define KSM_DRAIN_SECS		(2.0)		/* end of run: ksmd's last full scan, bound */
#define KSM_RMAP_LEAK		(64)		/* rmap_items no live process has: a leak */
#define KSM_QUIET_FIRST		(5.0)		/* quiet windows: 5 s into the run, */
#define KSM_QUIET_PERIOD	(10.0)		/* then every 10 s, */
#define KSM_QUIET_LEN		(3.0)		/* 3 s long: every instance stops its racers, */
#define KSM_QUIET_SETTLE	(1.0)		/* counted 1 s after the last one did */
#define KSM_OP_PAGES		(16)		/* pages per racer op */
#define KSM_STARVED_SHARE	(0.25)		/* ksmd ran less of a wait than this: starved */
#define KSM_STUCK_CPU		(5.0)		/* ksmd's CPU in a wait, nothing scanned: stuck */
#define KSM_WAIT_SCANS		(6)		/* fresh full scans that end a wait unmerged */
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

/* cycle phases, then the racer events their phase hooks also get */
enum {
	KSM_PHASE_IDLE = 0,
	KSM_PHASE_MERGING,
	KSM_PHASE_MERGED,
	KSM_PHASE_UNMERGING,
	KSM_PHASE_VERIFY,
	/* racer thread, before it parks: leave the region as the cycle expects */
	KSM_PHASE_PARK,
	KSM_PHASE_RESTORE,	/* every racer parked */
	KSM_PHASE_STOP,		/* the racer ends (also after a failed start) */
	KSM_PHASE_RETRY,	/* the timed unmerge returned EINTR, before its retry (KSM_RF_WP) */
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
enum { KSM_KIND_SAME = 0, KSM_KIND_FEW, KSM_KIND_ZERO, KSM_KIND_UNIQUE };

/* kernel interfaces the verdicts use, self-tested once per run */
enum {
	KSM_IFACE_ZERO_PAGE = 0,
	KSM_IFACE_KPF_KSM,
	KSM_IFACE_PFNS,
	KSM_IFACE_KSM_STAT,
	KSM_IFACE_COW_KSM,
	KSM_IFACES
};

static const char * const stress_ksm_unmerge_iface_names[] = {
	"zero-page", "kpageflags-ksm", "pfns", "ksm_stat", "cow_ksm",
};

/* what the self-test saw: raw pagemap/kpageflags words and counters */
typedef struct {
	int kver;			/* stress_kernel_release_get(), -1 unknown */
	bool pagemap, kpageflags;	/* readable */
	uint64_t rf[2], rf_flags[2];	/* two read-faulted pages of a fresh mapping */
	uint64_t fresh, fresh_flags;	/* a written page KSM never saw */
	int merged;			/* probe merge: 1 merged, 0 not, -1 not run */
	uint64_t mg[2], mg_flags[2];	/* two identical pages after the probe merge */
	uint64_t mg_after[2];		/* the same two pages right after the probe unmerge */
	bool zp_valid;			/* a zero-filled page was merged (use_zero_pages=1) */
	uint64_t zp, zp_flags;		/* that page */
	/* KSM zero pages merged; ksm_stat's count before, merged, unmerged */
	int64_t zp_pages, zp_stat[3];
	int64_t zp_global[2];		/* global ksm_zero_pages merged, unmerged; -1 absent */
	uint64_t zp_after, zp_after_flags;	/* the zero-filled page right after it */
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
	bool zero_kept;			/* the probe unmerge left its KSM zero page */
	char broken[640];		/* the kernel failed the probe unmerge: fail line */
	char disagree[320];		/* one signal said so, the other not: info line */
} stress_ksm_unmerge_iface_t;

/* KSM knobs saved, set and restored; advisor_mode last (6.8+) */
static const char * const stress_ksm_unmerge_knob_names[] = {
	"run", "pages_to_scan", "sleep_millisecs", "use_zero_pages", "smart_scan", "advisor_mode",
};

#define KSM_KNOBS	(SIZEOF_ARRAY(stress_ksm_unmerge_knob_names))

typedef struct { char value[KSM_KNOBS][32]; } stress_ksm_unmerge_knobs_t;	/* "" = absent */

/* ring of the latest latency samples, ms */
typedef struct {
	uint32_t count;
	uint64_t total;
	double ms[KSM_LAT_SAMPLES];
} stress_ksm_unmerge_lat_t;

/* how a merge wait ended (stress_ksm_unmerge_wait_judge()) */
enum {
	KSM_WAIT_MERGED = 0,	/* the prediction merged */
	KSM_WAIT_PARTIAL,	/* ksmd ended its passes short of it */
	KSM_WAIT_STARVED,	/* ksmd got too little CPU: named, never a kernel failure */
	KSM_WAIT_SLOW,		/* ksmd had CPU and progressed too slowly: named, not a failure */
	KSM_WAIT_STUCK,		/* ksmd had CPU and made no progress: a failure */
	KSM_WAITS,
};

static const char * const stress_ksm_unmerge_wait_names[] = {
	"merged", "partial", "starved", "slow", "stuck",
};

/* what ksmd did during one merge wait */
typedef struct {
	double wall;			/* secs waited */
	double cpu, runnable;		/* ksmd's secs on a CPU, and runnable off one; -1 unknown */
	int64_t scanned, scans;		/* pages_scanned and full_scans grown meanwhile */
	uint64_t got, want;		/* pages merged at the end, predicted */
	bool stable;			/* ksmd ended its passes: counts unchanged over two */
} stress_ksm_unmerge_wait_t;

/* one racer's figures, in shared memory so they survive a killed worker */
typedef struct {
	uint64_t ops, evidence, failures, op_ns, meet_timeouts;
	uint64_t detail[KSM_DETAILS];
	bool active, skipped;
	bool left_out;			/* not started: the run's budget for it went to others */
	char reason[160];		/* why skipped or not reached */
} stress_ksm_unmerge_racer_stats_t;

#define KSM_RACERS	(14)

/* known, written-up kernel bugs (stress_ksm_unmerge_bugs[]), and what a start probe said */
enum { KSM_BUG_FORK_ZERO = 0, KSM_BUGS };
enum { KSM_PROBE_NONE = 0, KSM_PROBE_SEEN, KSM_PROBE_CLEAR };

/* what a run saw of a known kernel bug, in shared memory */
typedef struct {
	int probe;			/* KSM_PROBE_*: what the start probe said */
	volatile uint32_t confirmed;	/* seen in this run: what triggers it steps aside */
	volatile uint64_t hits;		/* verdicts of the run that matched it */
	/* KSM zero pages the run left charged to no process, -1 unknown */
	int64_t left;
	char first[256];		/* the first verdict that matched, for the report */
} stress_ksm_unmerge_bug_state_t;

/* one instance's figures, in shared memory */
typedef struct {
	uint64_t cycles, merge_timeouts, partial_merges, failures;
	/* each verified cycle unmerged what it merged */
	uint64_t pages_merged, pages_zero, cow_ksm;
	uint64_t method_cycles[2];
	/* cycles of a window every instance's racers were stopped in */
	uint64_t quiet_cycles, quiet_pages;
	double unmerge_secs, merge_wait_secs, quiet_secs, quiet_cpu_secs;
	uint64_t waits[KSM_WAITS];	/* merge waits by how they ended */
	uint64_t rss_kb;		/* the worker's peak RSS */
	uint64_t rmap_max;		/* the most rmap_items ksmd kept for the worker */
	char stop_step[32];		/* step the end of the run cut, "" none */
	stress_ksm_unmerge_lat_t unmerge_lat, mrelease_lat, merge_lat;
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
	volatile double t0;		/* the first instance's start: the quiet windows' clock */
	volatile uint32_t quiet_in;	/* instances in a quiet window, racers stopped */
	volatile double quiet_all;	/* when the last one stopped them, 0 when not all */
	bool knobs_ok;
	char knob_error[160];
	size_t pattern, method;
	/* global ksm_zero_pages, ksmd's rmap_items not held by a live process, at the start */
	int64_t zero_leak0, rmap_leak0;
	/* use_zero_pages=0 for the run: a confirmed bug leaks them */
	bool zero_pages_off;
	stress_ksm_unmerge_knobs_t saved;
	stress_ksm_unmerge_iface_t iface;
	uint64_t mem_avail;		/* MemAvailable before any region was filled */
	volatile bool disagree_reported;
	stress_ksm_unmerge_bug_state_t bug[KSM_BUGS];
	volatile bool wait_reported[KSM_WAITS];	/* a starved or slow wait was said */
	pid_t ksmd_pid;			/* 0 unknown (not visible: a PID namespace) */
	double ksmd_cpu0, ksmd_rq0, ksmd_t0;	/* ksmd's times before the instances (the report) */
	int64_t scanned0, full_scans0;
	stress_ksm_unmerge_instance_t inst[];
} stress_ksm_unmerge_shared_t;

static stress_ksm_unmerge_shared_t *stress_ksm_unmerge_shared;
static size_t stress_ksm_unmerge_shared_size;
static int stress_ksm_unmerge_lock_fd = -1;

typedef struct stress_ksm_unmerge_ctx stress_ksm_unmerge_ctx_t;
typedef struct stress_ksm_unmerge_run stress_ksm_unmerge_run_t;

/* racer flags (a racer table row's .flags) */
#define KSM_RF_WAIT	STRESS_BIT_U(2)	/* the merged phase waits for its first op */
#define KSM_RF_PFNS	STRESS_BIT_U(3)	/* needs pagemap PFNs for its evidence */
#define KSM_RF_COPY	STRESS_BIT_U(4)	/* its children keep a copy of every region page */
#define KSM_RF_PARTIAL	STRESS_BIT_U(5)	/* blocks or breaks merges: partial merges are legitimate */
/* discards pages or protects them: explains a zero page or EFAULT */
#define KSM_RF_LAYOUT	STRESS_BIT_U(6)
/* uffd-wp protects pages: 6.1's long-term pin of one fails, EFAULT */
#define KSM_RF_WP	STRESS_BIT_U(7)
/* forks children of the worker: can meet the fork-zero bug */
#define KSM_RF_FORKS	STRESS_BIT_U(8)

/* the racers' detail counters: indices of detail[], named in the racer table's .details */
enum { KSM_D_VMSPLICE_HELD = 0, KSM_D_VMSPLICE_HELD_KSM, KSM_D_VMSPLICE_COPIED };
enum { KSM_D_GUP_ODIRECT = 0, KSM_D_GUP_ODIRECT_KSM, KSM_D_GUP_LONGTERM, KSM_D_GUP_LONGTERM_KSM,
	KSM_D_GUP_READV, KSM_D_GUP_READV_KSM };
enum { KSM_D_UFFD_WP_AT_UNMERGE = 0, KSM_D_UFFD_WP_KEPT, KSM_D_UFFD_WP_KEPT_KSM,
	KSM_D_UFFD_WP_LOST_PINNED, KSM_D_UFFD_WP_LOST_HOLE, KSM_D_UFFD_WP_LOST_RETRY };
enum { KSM_D_MRELEASE_REAPS = 0, KSM_D_MRELEASE_ESRCH, KSM_D_MRELEASE_VICTIM_KSM };
enum { KSM_D_SPARSE_WALKED = 0, KSM_D_SPARSE_CHECKED };
enum { KSM_D_THP_PMD = 0, KSM_D_THP_MTHP, KSM_D_THP_COMPACTIONS, KSM_D_THP_IN_COMPACTION,
	KSM_D_THP_ZERO };
enum { KSM_D_MREMAP_CUT = 0, KSM_D_MREMAP_COPIED };
enum { KSM_D_PRCTL_ANY_KEPT = 0 };
enum {
	KSM_D_FORK_ZERO_DURING = 0,
	KSM_D_FORK_ZERO_UNCOPIED,
	KSM_D_FORK_ZERO_UNMERGING,
	KSM_D_FORK_ZERO_UNDER,
	KSM_D_FORK_ZERO_ZAPS,
	KSM_D_FORK_ZERO_ZAPS_REACHED,
	KSM_D_FORK_ZERO_ZAPS_LOST
};

/* one racer: a row of the racer table, the only list of racers */
typedef struct {
	const char *name;		/* --ksm-unmerge-method name */
	/* its evidence counter: kernel-side proof it reached its path */
	const char *evidence;
	const char *desc;		/* the kernel path it covers */
	const char *details[KSM_DETAILS];	/* names of its detail counters */
	const char *not_built;		/* why this build lacks it, NULL if built */
	unsigned int flags;		/* KSM_RF_* */
	size_t page_bytes;		/* memory it keeps per region page */
	size_t priv_size;		/* its state, zeroed before start, freed after stop */
	int (*supported)(char *reason, const size_t len);
	/* -2 unsupported */
	int (*start)(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run);
	bool (*op)(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run);
	void (*phase)(
		stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase);
	/* makes the timed unmerge's calls itself (signal: under its signals), NULL if not */
	int (*unmerge)(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run,
		const uint64_t sw, const size_t off, const size_t len);
} stress_ksm_unmerge_racer_t;

/* a racer's run state inside a worker */
struct stress_ksm_unmerge_run {
	const stress_ksm_unmerge_racer_t *r;
	stress_ksm_unmerge_racer_stats_t *rs;
	stress_ksm_unmerge_ctx_t *ctx;
	void *priv;			/* the racer's own state */
	pthread_t thread;		/* runs r->op, if any */
	bool thread_running;
	volatile bool thread_done;
	volatile uint64_t parked;	/* last cycle it parked for */
	volatile uint64_t met;		/* last cycle it began an op on merged pages */
	struct {
		void *addr;
		size_t len;		/* a mapping, or 0: a heap block */
	} kept[8];			/* what the racer holds, released by the framework */
	int fds[4];
	size_t nkept, nfds;
};

/* per worker state: the region, the kernel files, the cycle, the racers */
struct stress_ksm_unmerge_ctx {
	stress_args_t *args;
	stress_ksm_unmerge_instance_t *st;
	const stress_ksm_unmerge_iface_t *iface;
	uint8_t *region;
	size_t region_size, npages, page_size;
	int pattern;
	uint64_t use;			/* switches and racers requested */
	uint64_t seed;			/* per instance: unique pages differ */
	uint8_t *templates;		/* the same page and the few pages */
	int pagemap_fd, kpageflags_fd, kpagecount_fd;
	uint64_t *pm;			/* pagemap chunk */
	uint64_t *keys;			/* its words sorted with their page index */
	bool have_pfns, verify;
	bool by_pages;			/* merge progress from the region's pages, not counters */
	uint64_t expect_merged, expect_zero;
	char vmflags[256];		/* region VmFlags without "mg" */
	volatile int phase;
	volatile uint64_t cycle;
	volatile uint64_t quiesce;	/* cycle for which racers must park, 0 none */
	volatile bool racers_stop;
	pthread_mutex_t wake_lock;	/* racer threads sleep on wake, the main thread on acked */
	pthread_cond_t wake, acked;
	bool wake_made;
	volatile uint64_t gen;		/* bumped when the phase, the parking or the stop changes */
	bool quiet;			/* in a quiet window: racers stopped */
	/* racer restarts after a window: their start lines are not said again */
	uint32_t restarts;
	/* compact_memory, locked shared while verifying (thp racer compacts exclusive) */
	int compact_fd;
	uint64_t racers;		/* racers started */
	bool disturb_counts, disturb_layout;
	size_t touch_npages;		/* racers reading/writing pages stay below this */
	volatile uint32_t *ro_pinned;	/* per page: cycle of its last read-only pin (uffd-wp) */
	volatile uint8_t *holes;	/* per page: discarded since the last restore (dontneed) */
	pthread_t main_thread;
	stress_ksm_unmerge_run_t run[KSM_RACERS];
	bool stopped;
	stress_ksm_unmerge_wait_t wait;	/* the last merge wait */
	double t_start, teardown_secs;
	size_t filled;
	struct {
		uint64_t cycle, ksm, zero;
		size_t present, swapped;
		uint64_t firm;		/* KSM pages by a pfn shared in the region or KPF_KSM */
		int64_t cow, swapin;	/* stress_ksm_unmerge_vmstat() read before the scan */
	} last;				/* the merge wait's last region scan */
};

static const stress_ksm_unmerge_racer_t stress_ksm_unmerge_racers[KSM_RACERS];

/* a known, written-up kernel bug: a verdict that matches it is named in the report, not failed */
typedef struct {
	const char *name;		/* its name in the report */
	const char *verdict;		/* what its verdicts say (the words of their fail lines) */
	const char *writeup;		/* where it is written up, with its fix */
	const char *kernels;		/* the kernels it affects */
	/* its own racer: run alone (the method), it still fails on it */
	const char *racer;
	int (*probe)(const stress_ksm_unmerge_iface_t *ifc, char *detail, const size_t len);
} stress_ksm_unmerge_bug_t;

static const stress_ksm_unmerge_bug_t stress_ksm_unmerge_bugs[KSM_BUGS];

/* ==== Readers: clock, kernel counters, pagemap, kpageflags, VmFlags ==== */

/*
 *  stress_ksm_unmerge_lkp_pad()
 *	pure: " -" when "stress-ng: info:  [pid] ksm-unmerge: <text>" would split into
 *	10 or 12 fields, which LKP's stress-ng parser takes for a metrics row
 *	(a line printed after the metrics table: the report, deinit's errors)
 */
static const char *stress_ksm_unmerge_lkp_pad(const char *text)
{
	int fields = 4;
	const char *p;

	for (p = text; *p; p++)
		fields += (!isspace((int)*p) && (p == text || isspace((int)p[-1])));
	return (fields == 10 || fields == 12) ? " -" : "";
}

/* what one counter, read as text, says */
enum {
	KSM_COUNTER_OK = 0,
	KSM_COUNTER_MISSING,
	KSM_COUNTER_NEGATIVE,		/* printed signed and below 0 */
	KSM_COUNTER_WRAPPED,		/* printed unsigned, 2^63 or more */
	KSM_COUNTER_GARBLED,
};

static const char * const stress_ksm_unmerge_counter_verdicts[] = {
	"ok", "missing", "negative", "wrapped below 0 (2^63 or more)", "not a number",
};

/*
 * pure: "name N" of a proc text buffer (name NULL: a bare number) into *val; a KSM_COUNTER_*
 * verdict
 */
static int stress_ksm_unmerge_counter(const char *buf, const char *name, int64_t *val)
{
	const char *p = buf;
	char *end;
	uint64_t v;

	*val = -1;
	if (name) {
		const size_t len = shim_strlen(name);

		for (p = shim_strstr(buf, name); p; p = shim_strstr(p + len, name))
			if ((p == buf || p[-1] == '\n') &&
				(p[len] == ' ' || p[len] == ':' || p[len] == '\t'))
				break;
		if (!p)
			return KSM_COUNTER_MISSING;
		p += len + 1;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '-') {
		*val = (int64_t)strtoll(p, &end, 10);
		return (end <= p + 1) ? KSM_COUNTER_GARBLED : KSM_COUNTER_NEGATIVE;
	}
	v = strtoull(p, &end, 10);	/* ULLONG_MAX on overflow: wrapped too */
	if (end == p)
		return KSM_COUNTER_GARBLED;
	*val = (int64_t)v;
	return (v >= (1ULL << 63)) ? KSM_COUNTER_WRAPPED : KSM_COUNTER_OK;
}

/* counter name of the file at path (NULL: the file is the number), -1 if missing or bad */
static int64_t stress_ksm_unmerge_field(const char *path, const char *name)
{
	char buf[16384];
	int64_t v;

	if (stress_fs_file_read(path, buf, sizeof(buf)) <= 0 ||
	    stress_ksm_unmerge_counter(buf, name, &v) != KSM_COUNTER_OK)
		return -1;
	return v;
}

/* cow_ksm and pages swapped in (pswpin + zswpin) from one /proc/vmstat read; -1 absent */
static void stress_ksm_unmerge_vmstat(int64_t *cow, int64_t *swapin)
{
	char buf[16384];
	int64_t v = 0, z = 0;
	const bool ok = stress_fs_file_read("/proc/vmstat", buf, sizeof(buf)) > 0;

	*cow = (ok && stress_ksm_unmerge_counter(buf, "cow_ksm", &v) == KSM_COUNTER_OK) ? v : -1;
	*swapin = (ok && stress_ksm_unmerge_counter(buf, "pswpin", &v) == KSM_COUNTER_OK) ? v : 0;
	if (ok && stress_ksm_unmerge_counter(buf, "zswpin", &z) == KSM_COUNTER_OK)
		*swapin += z;
}

/* pagemap entries of n pages from addr into out */
static int stress_ksm_unmerge_pagemap_read(const int fd, const void *addr, const size_t n,
	const size_t page_size, uint64_t *out)
{
	const off_t base = (off_t)(((uintptr_t)addr / page_size) * sizeof(uint64_t));
	size_t done = 0;

	while (done < n * sizeof(uint64_t)) {
		const ssize_t ret = pread(fd, (uint8_t *)out + done, n * sizeof(uint64_t) - done,
			base + (off_t)done);

		if (ret <= 0)
			return -1;
		done += (size_t)ret;
	}
	return 0;
}

/* /proc/kpageflags (or kpagecount) word of pfn, 0 on error */
static uint64_t stress_ksm_unmerge_kpf(const int fd, const uint64_t pfn)
{
	uint64_t v = 0;

	if (fd < 0 || pread(fd, &v, sizeof(v), (off_t)(pfn * sizeof(v))) != sizeof(v))
		return 0;
	return v;
}

/* pure: pfn of a present pagemap entry, 0 if not present */
static inline uint64_t stress_ksm_unmerge_pm_pfn(const uint64_t e)
{
	return (e & PM_PRESENT) ? (e & PM_PFN_MASK) : 0;
}

/* range and VmFlags of the VMA holding addr (no_mg: VmFlags alone, "mg" left out); -1 if none */
static int stress_ksm_unmerge_vmflags(
	const void *addr, char *out, const size_t len, const bool no_mg)
{
	const unsigned long a = (unsigned long)(uintptr_t)addr;
	char line[512], *tok, *save = NULL;
	bool in_vma = false;
	size_t off = 0;
	FILE *fp = fopen("/proc/self/smaps", "re");

	out[0] = '\0';
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in_vma = (a >= lo && a < hi);
			if (in_vma && !no_mg)
				off = (size_t)snprintf(out, len, "%lx-%lx", lo, hi);
			continue;
		}
		if (!in_vma || shim_strncmp(line, "VmFlags:", 8))
			continue;
		for (tok = shim_strtok_r(line + 8, " \n", &save); tok;
			tok = shim_strtok_r(NULL, " \n", &save)) {
			if (no_mg && !shim_strcmp(tok, "mg"))
				continue;
			if (off < len)
				off += (size_t)snprintf(out + off, len - off, " %s", tok);
		}
		(void)fclose(fp);
		return 0;
	}
	(void)fclose(fp);
	return -1;
}

/* pure: does a VmFlags list hold flag (a two-letter word) */
static bool stress_ksm_unmerge_has_flag(const char *flags, const char *flag)
{
	const char *p;

	for (p = shim_strstr(flags, flag); p; p = shim_strstr(p + 2, flag))
		if ((p == flags || p[-1] == ' ') && (p[2] == ' ' || p[2] == '\0' || p[2] == '\n'))
			return true;
	return false;
}

/* ==== Knobs: save, set, restore, the state file, the run lock ==== */

/* read a KSM sysfs file into buf (newline stripped, "[a] b" as "a"), -1 on error */
static int stress_ksm_unmerge_knob_read(const char *knob, char *buf, const size_t len)
{
	char path[PATH_MAX];
	const char *open, *close;
	ssize_t n;

	(void)snprintf(path, sizeof(path), "%s/%s", KSM_SYSFS, knob);
	n = stress_fs_file_read(path, buf, len - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[shim_strcspn(buf, "\n")] = '\0';
	open = shim_strchr(buf, '[');
	close = open ? shim_strchr(open, ']') : NULL;
	if (close) {
		n = close - open - 1;
		(void)shim_memmove(buf, open + 1, (size_t)n);
		buf[n] = '\0';
	}
	return 0;
}

/* write a KSM knob, 0 or -errno */
static int stress_ksm_unmerge_knob_write(const char *knob, const char *value)
{
	char path[PATH_MAX];
	ssize_t ret;

	(void)snprintf(path, sizeof(path), "%s/%s", KSM_SYSFS, knob);
	ret = stress_fs_file_write(path, value, shim_strlen(value));
	return (ret < 0) ? (int)ret : 0;
}

/* snapshot every KSM knob the stressor may change */
static void stress_ksm_unmerge_knobs_save(stress_ksm_unmerge_knobs_t *knobs)
{
	size_t i;

	for (i = 0; i < KSM_KNOBS; i++)
		if (stress_ksm_unmerge_knob_read(stress_ksm_unmerge_knob_names[i], knobs->value[i],
				sizeof(knobs->value[i])) < 0)
			knobs->value[i][0] = '\0';
}

/* write the saved knobs back where they differ; failures returned */
static int stress_ksm_unmerge_knobs_restore(const stress_ksm_unmerge_knobs_t *knobs)
{
	int failures = 0;
	size_t i;

	for (i = 0; i < KSM_KNOBS; i++) {
		const char *name = stress_ksm_unmerge_knob_names[i];
		char now[32];
		int ret;

		if (!knobs->value[i][0] ||
			(stress_ksm_unmerge_knob_read(name, now, sizeof(now)) == 0 &&
				!shim_strcmp(now, knobs->value[i])))
			continue;
		ret = stress_ksm_unmerge_knob_write(name, knobs->value[i]);
		if (ret < 0) {
			char line[256];

			/* deinit's: after the metrics table */
			(void)snprintf(line, sizeof(line),
				"cannot restore %s/%s to %s, errno=%d (%s)", KSM_SYSFS, name,
				knobs->value[i], -ret, strerror(-ret));
			pr_err("ksm-unmerge: %s%s\n", line, stress_ksm_unmerge_lkp_pad(line));
			failures++;
		}
	}
	return failures;
}

/* record the saved knobs so the next run can repair a SIGKILLed one */
static int stress_ksm_unmerge_state_write(const stress_ksm_unmerge_knobs_t *knobs)
{
	char buf[1024];
	size_t i, off;
	int fd, err = 0;

	off = (size_t)snprintf(buf, sizeof(buf), "pid %d\n", (int)getpid());
	for (i = 0; i < KSM_KNOBS && off < sizeof(buf); i++)
		if (knobs->value[i][0])
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s %s\n",
				stress_ksm_unmerge_knob_names[i], knobs->value[i]);
	fd = open(KSM_STATE_FILE ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, off) != (ssize_t)off || shim_fsync(fd) < 0)
		err = -(errno ? errno : EIO);
	(void)close(fd);
	if (!err && rename(KSM_STATE_FILE ".tmp", KSM_STATE_FILE) < 0)
		err = -errno;
	if (err)
		(void)shim_unlink(KSM_STATE_FILE ".tmp");
	return err;
}

/* pure but for the file: parse a state file; -1 if absent or corrupt */
static int stress_ksm_unmerge_state_read(
	const char *path, stress_ksm_unmerge_knobs_t *knobs, int *pid)
{
	char line[128], name[64], value[32];
	int found = 0;
	size_t i;
	FILE *fp = fopen(path, "re");

	(void)shim_memset(knobs, 0, sizeof(*knobs));
	*pid = 0;
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "pid %d", pid) == 1 || sscanf(line, "%63s %31s", name, value) != 2)
			continue;
		for (i = 0; i < KSM_KNOBS; i++)
			if (!shim_strcmp(name, stress_ksm_unmerge_knob_names[i]))
				found += shim_strscpy(knobs->value[i], value,
						 sizeof(knobs->value[i])) > 0;
	}
	(void)fclose(fp);
	return (*pid > 0 && found > 0) ? 0 : -1;
}

/* restore knobs a run left when it was killed before its deinit */
static void stress_ksm_unmerge_state_repair(void)
{
	stress_ksm_unmerge_knobs_t knobs;
	int pid;

	if (stress_ksm_unmerge_state_read(KSM_STATE_FILE, &knobs, &pid) < 0) {
		if (access(KSM_STATE_FILE, F_OK) == 0) {
			pr_warn("ksm-unmerge: ignoring corrupt state file %s\n", KSM_STATE_FILE);
			(void)shim_unlink(KSM_STATE_FILE);
		}
		return;
	}
	pr_inf("ksm-unmerge: restoring KSM knobs left by killed run (pid %d) from %s\n", pid,
		KSM_STATE_FILE);
	if (stress_ksm_unmerge_knobs_restore(&knobs) == 0)
		(void)shim_unlink(KSM_STATE_FILE);
}

/* the run lock: two runs never fight over the global knobs */
static int stress_ksm_unmerge_lock(void)
{
	const int fd = open(KSM_STATE_FILE ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (lockf(fd, F_TLOCK, 0) < 0) {
		const int err = errno;

		(void)close(fd);
		return -err;
	}
	stress_ksm_unmerge_lock_fd = fd;
	return 0;
}

/* ksmd on, fast scans, KSM zero pages on; -errno with err set */
static int stress_ksm_unmerge_knobs_set(char *err, const size_t len)
{
	static const struct {
		const char *knob, *value;
		bool optional;
	} sets[] = {
		/* scan-time refuses pages_to_scan */
		{ "advisor_mode",	"none",		true },
		{ "pages_to_scan",	"10000",	false },
		{ "sleep_millisecs",	"0",		false },
		{ "smart_scan",		"0",		true },
		{ "use_zero_pages",	"1",		false },
		{ "run",		"1",		false },
	};
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(sets); i++) {
		const int ret = stress_ksm_unmerge_knob_write(sets[i].knob, sets[i].value);

		if (ret < 0 && !(sets[i].optional && ret == -ENOENT)) {
			(void)snprintf(err, len, "cannot set %s/%s=%s, errno=%d (%s)",
				KSM_SYSFS, sets[i].knob, sets[i].value, -ret, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* ksmd's rmap_items (shared+sharing+unshared+volatile) system-wide; 0 when its mm list is empty */
static int64_t stress_ksm_unmerge_rmap_items(void)
{
	static const char * const paths[] = { KSM_SYSFS "/pages_shared", KSM_SYSFS "/pages_sharing",
		KSM_SYSFS "/pages_unshared", KSM_SYSFS "/pages_volatile" };
	int64_t sum = 0;
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(paths); i++)
		sum += STRESS_MAXIMUM(stress_ksm_unmerge_field(paths[i], NULL), (int64_t)0);
	return sum;
}

/*
 * let ksmd end one more full scan (bounded): it frees the rmap_items of dead mms; none left, no
 * scan ends
 */
static void stress_ksm_unmerge_ksmd_drain(const stress_ksm_unmerge_knobs_t *saved)
{
	const double deadline = stress_time_now() + KSM_DRAIN_SECS;
	const int64_t scans = stress_ksm_unmerge_field(KSM_SYSFS "/full_scans", NULL);

	if (!shim_strcmp(saved->value[0], "1"))
		return;		/* ksmd stays on: it frees them itself */
	while (stress_time_now() < deadline &&
		stress_ksm_unmerge_field(KSM_SYSFS "/full_scans", NULL) == scans &&
		stress_ksm_unmerge_rmap_items() > 0)
		(void)shim_nanosleep_uint64(2000000);
}

/* KSM must exist and its knobs be writable */
static int stress_ksm_unmerge_supported(const char *name)
{
	if (access(KSM_SYSFS "/run", F_OK) < 0) {
		pr_inf_skip("%s stressor will be skipped, KSM is not available (%s missing, "
			"kernel built without CONFIG_KSM?)\n", name, KSM_SYSFS);
		return -1;
	}
	if (access(KSM_SYSFS "/run", W_OK) < 0) {
		pr_inf_skip("%s stressor will be skipped, cannot start ksmd: %s/run is not "
			"writable (need root)\n", name, KSM_SYSFS);
		return -1;
	}
	return 0;
}

/* ==== Patterns: page kinds, fill, check, the merge prediction ==== */

/* content class of page i under pattern */
static int stress_ksm_unmerge_page_kind(const int pattern, const size_t i)
{
	static const int kinds[] = { KSM_KIND_SAME, KSM_KIND_FEW, KSM_KIND_ZERO, -1,
		KSM_KIND_UNIQUE };

	return (pattern == KSM_PATTERN_MIXED) ? (int)(i & 3) : kinds[pattern];
}

/* the page a same (t = 0) or few (t = 1..8) page holds */
static const uint8_t *stress_ksm_unmerge_template(const stress_ksm_unmerge_ctx_t *ctx,
	const int kind, const size_t i)
{
	return ctx->templates +
		((kind == KSM_KIND_SAME) ? 0 : 1 + (i % KSM_FEW_TEMPLATES)) * ctx->page_size;
}

/* the same words in every instance, so pages merge across instances */
static void stress_ksm_unmerge_templates_fill(stress_ksm_unmerge_ctx_t *ctx)
{
	const size_t words = ctx->page_size / sizeof(uint64_t);
	size_t t, w;

	for (t = 0; t <= KSM_FEW_TEMPLATES; t++)
		for (w = 0; w < words; w++)
			((uint64_t *)(void *)(ctx->templates + t * ctx->page_size))[w] =
				0x6b736d756e6d7267ULL ^ ((t + 1) * 0x9e3779b97f4a7c15ULL) ^ w;
}

/* word w of unique page i: distinct per instance, page and word */
static inline uint64_t stress_ksm_unmerge_unique_word(const stress_ksm_unmerge_ctx_t *ctx,
	const size_t i, const size_t w)
{
	return ctx->seed ^ ((uint64_t)i << 24) ^ (uint64_t)w ^ 0x8000000000000000ULL;
}

/* write the pattern's bytes of page i into page */
static void stress_ksm_unmerge_page_fill(
	const stress_ksm_unmerge_ctx_t *ctx, const size_t i, uint8_t *page)
{
	const int kind = stress_ksm_unmerge_page_kind(ctx->pattern, i);
	size_t w;

	if (kind == KSM_KIND_ZERO) {
		(void)shim_memset(page, 0, ctx->page_size);
	} else if (kind == KSM_KIND_UNIQUE) {
		for (w = 0; w < ctx->page_size / sizeof(uint64_t); w++)
			((uint64_t *)(void *)page)[w] = stress_ksm_unmerge_unique_word(ctx, i, w);
	} else {
		(void)shim_memcpy(page, stress_ksm_unmerge_template(ctx, kind, i), ctx->page_size);
	}
}

/* offset of page i's first wrong byte at page (the right one in *want), -1 if intact */
static ssize_t stress_ksm_unmerge_page_check(const stress_ksm_unmerge_ctx_t *ctx, const size_t i,
	const uint8_t *page, uint8_t *want)
{
	const int kind = stress_ksm_unmerge_page_kind(ctx->pattern, i);
	size_t w, b;

	if (kind == KSM_KIND_SAME || kind == KSM_KIND_FEW) {
		const uint8_t *t = stress_ksm_unmerge_template(ctx, kind, i);

		if (!shim_memcmp(page, t, ctx->page_size))
			return -1;
		for (b = 0; page[b] == t[b]; b++)
			;
		*want = t[b];
		return (ssize_t)b;
	}
	for (w = 0; w < ctx->page_size / sizeof(uint64_t); w++) {
		const uint64_t x =
			(kind == KSM_KIND_ZERO) ? 0 : stress_ksm_unmerge_unique_word(ctx, i, w);
		const uint8_t *p = page + w * sizeof(x);

		if (!shim_memcmp(p, &x, sizeof(x)))
			continue;
		for (b = 0; p[b] == ((const uint8_t *)&x)[b]; b++)
			;
		*want = ((const uint8_t *)&x)[b];
		return (ssize_t)(w * sizeof(x) + b);
	}
	return -1;
}

/* pure: are len bytes at buf all zero */
static bool stress_ksm_unmerge_all_zero(const uint8_t *buf, const size_t len)
{
	return len == 0 || (buf[0] == 0 && !shim_memcmp(buf, buf + 1, len - 1));
}

/* predict the KSM pages and KSM zero pages ksmd must make of the region */
static void stress_ksm_unmerge_expect(stress_ksm_unmerge_ctx_t *ctx)
{
	size_t i;

	ctx->expect_merged = ctx->expect_zero = 0;
	for (i = 0; i < ctx->npages; i++) {
		const int kind = stress_ksm_unmerge_page_kind(ctx->pattern, i);

		ctx->expect_merged += (kind == KSM_KIND_SAME || kind == KSM_KIND_FEW);
		ctx->expect_zero += (kind == KSM_KIND_ZERO);
	}
}

/* ==== Setup: the interface self-test, the one page verdict ==== */

/* record one interface's verdict: trusted or not (why), and what is used */
static void FORMAT(printf, 4, 5) stress_ksm_unmerge_iface_set(stress_ksm_unmerge_iface_t *ifc,
	const int i, const char *why, const char *fmt, ...)
{
	va_list ap;

	ifc->trusted[i] = !why;
	(void)snprintf(ifc->why[i], sizeof(ifc->why[i]), "%s", why ? why : "");
	va_start(ap, fmt);
	(void)vsnprintf(ifc->use[i], sizeof(ifc->use[i]), fmt, ap);
	va_end(ap);
}

/*
 *  stress_ksm_unmerge_iface_zero()
 *	pure: the zero page, from two read faults (one shared pfn) and KPF_ZERO_PAGE
 */
static void stress_ksm_unmerge_iface_zero(
	const stress_ksm_unmerge_obs_t *o, stress_ksm_unmerge_iface_t *ifc)
{
	const uint64_t rf = stress_ksm_unmerge_pm_pfn(o->rf[0]);
	const bool rf_shared = ifc->pfns && rf && rf == stress_ksm_unmerge_pm_pfn(o->rf[1]) &&
		!(o->rf[0] & PM_EXCLUSIVE);
	const bool zp_shared = ifc->pfns && o->zp_valid && stress_ksm_unmerge_pm_pfn(o->zp) &&
		!(o->zp & PM_EXCLUSIVE);
	/* KPF_ZERO_PAGE lies if a private page shows it or the zero page lacks it */
	const bool lies = (o->fresh_flags & KPF_ZERO_PAGE) ||
		(!rf_shared && (o->rf_flags[0] & KPF_ZERO_PAGE)) ||
		(o->merged == 1 && (o->mg_flags[0] & KPF_ZERO_PAGE)) ||
		(rf_shared && !(o->rf_flags[0] & KPF_ZERO_PAGE)) ||
		(zp_shared && !(o->zp_flags & KPF_ZERO_PAGE));
	char why[160] = "";

	ifc->kpf_zero = ifc->pfns && o->kpageflags && !lies;
	ifc->zero_pfn = rf_shared ? rf :
		(zp_shared && (!o->kpageflags || (o->zp_flags & KPF_ZERO_PAGE))) ?
				    stress_ksm_unmerge_pm_pfn(o->zp) :
				    0;
	if (!ifc->pfns)
		(void)snprintf(why, sizeof(why), "PFNs hidden: the zero page cannot be seen");
	else if (!rf_shared)
		(void)snprintf(why, sizeof(why),
			"a read fault maps a private exclusive page (pfn %#" PRIx64
			"), not the shared zero page: pvm_no_zero_page=1?",
			rf);
	else if (o->kpageflags && !ifc->kpf_zero)
		(void)snprintf(why, sizeof(why), "KPF_ZERO_PAGE is not set on the shared zero page "
			"or is set on a private page");
	if (!ifc->kpf_zero && !ifc->zero_pfn)
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_ZERO_PAGE,
			why[0] ? why : "no zero page found",
			"no zero-page verdicts (KSM zero pages are not told apart)");
	else
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_ZERO_PAGE, why[0] ? why : NULL,
			"%s (zero page pfn %#" PRIx64 ")",
			ifc->kpf_zero ? "KPF_ZERO_PAGE per page" :
					"the probed shared zero page pfn",
			ifc->zero_pfn);
}

/* pure: KPF_KSM clear on a page KSM never saw, set on one it merged */
static void stress_ksm_unmerge_iface_kpf_ksm(
	const stress_ksm_unmerge_obs_t *o, stress_ksm_unmerge_iface_t *ifc)
{
	const char *instead = ifc->excl ?
		"pfn sharing within the region, the pagemap exclusive bit 56 and kpagecount "
		"(weaker: a KSM page mapped by at most two ptes looks private)" :
		"pfn sharing within the region (weaker: a KSM page shared with another process "
		"only looks private)";
	char why[160];

	ifc->kpf_ksm = false;
	if (!ifc->pfns) {
		stress_ksm_unmerge_iface_set(
			ifc, KSM_IFACE_KPF_KSM, "PFNs hidden", "per-process counters only");
	} else if (!o->kpageflags) {
		stress_ksm_unmerge_iface_set(
			ifc, KSM_IFACE_KPF_KSM, "/proc/kpageflags not readable", "%s", instead);
	} else if (o->fresh_flags & KPF_KSM) {
		(void)snprintf(why, sizeof(why),
			"KPF_KSM set on a fresh anonymous page KSM never saw "
			"(kpageflags %#" PRIx64 "): the 6.10-6.12 stable_page_flags() bug",
			o->fresh_flags);
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, why, "%s", instead);
	} else if (o->merged == 1 && !(o->mg_flags[0] & KPF_KSM)) {
		(void)snprintf(why, sizeof(why),
			"a page the probe merged (pfn %#" PRIx64 ", shared) lacks KPF_KSM",
			stress_ksm_unmerge_pm_pfn(o->mg[0]));
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, why, "%s", instead);
	} else {
		ifc->kpf_ksm = true;
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, NULL, "KPF_KSM%s",
			o->merged == 1 ?
				" (clear on a fresh page, set on a merged one)" :
				" (clear on a fresh page; the probe merge did not complete)");
	}
}

/*
 *  stress_ksm_unmerge_iface_kept()
 *	pure: the probe unmerge left its KSM zero page (6.4+), still mapped (pagemap) and
 *	charged (ksm_stat's, else the global ksm_zero_pages): the kernel broke, not the interface
 */
static void stress_ksm_unmerge_iface_kept(const stress_ksm_unmerge_obs_t *o,
	stress_ksm_unmerge_iface_t *ifc)
{
	const uint64_t zpfn = stress_ksm_unmerge_pm_pfn(o->zp_after);
	const bool mapped = ifc->zero_unshare && ifc->pfns && o->zp_valid && o->zp_pages > 0 &&
		zpfn && !(o->zp_after & PM_EXCLUSIVE) && ((ifc->zero_pfn && zpfn ==
		ifc->zero_pfn) || (ifc->kpf_zero && (o->zp_after_flags & KPF_ZERO_PAGE)));
	const bool by_stat = o->stat && o->stat_zero && o->zp_stat[0] >= 0 &&
		o->zp_stat[1] - o->zp_stat[0] == o->zp_pages;
	const int64_t kept = by_stat ? o->zp_stat[2] - o->zp_stat[0] :
		o->zp_global[1] - o->zp_global[0];

	ifc->zero_kept = mapped && ((by_stat && kept >= o->zp_pages) ||
		(!by_stat && o->zp_global[0] >= 0 && o->zp_global[1] >= 0 && kept >= 0));
	if (ifc->zero_kept)
		(void)snprintf(ifc->broken, sizeof(ifc->broken), "the self-test's probe KSM "
			"zero page is still mapped (pfn %#" PRIx64 ") and still charged (%s "
			"ksm_zero_pages %+" PRId64 " after its unmerge) after MADV_UNMERGEABLE: "
			"the kernel no longer unshares KSM zero pages (6.4+)", zpfn,
			by_stat ? "ksm_stat's" : "the global", kept);
	else if (mapped)
		(void)snprintf(ifc->disagree, sizeof(ifc->disagree), "after the self-test's "
			"probe unmerge its zero-filled page still maps the zero page but no "
			"counter says it is still charged; not counted as a kernel failure");
}

/*
 *  stress_ksm_unmerge_iface_counters()
 *	pure: ksm_stat fields (fallback field by field)
 */
static void stress_ksm_unmerge_iface_counters(
	const stress_ksm_unmerge_obs_t *o, stress_ksm_unmerge_iface_t *ifc)
{
	char why[160] = "";

	ifc->stat_merging = o->stat && o->stat_merging;
	/* a count kept with a zero page the kernel kept agrees with the pages: the kernel broke */
	ifc->stat_zero = o->stat && o->stat_zero && o->zp_pages > 0 && o->zp_stat[0] >= 0 &&
		o->zp_stat[1] - o->zp_stat[0] == o->zp_pages &&
		(o->zp_stat[2] == o->zp_stat[0] || ifc->zero_kept);
	ifc->merging_pages = o->merging_pages;
	if (!o->stat)
		(void)snprintf(why, sizeof(why), "/proc/self/ksm_stat missing (before 6.1)");
	else if (!o->stat_merging || !o->stat_zero)
		(void)snprintf(why, sizeof(why), "ksm_stat lacks %s%s%s",
			o->stat_merging ? "" : "ksm_merging_pages",
			(!o->stat_merging && !o->stat_zero) ? " and " : "",
			o->stat_zero ? "" : "ksm_zero_pages");
	else if (!ifc->stat_zero)
		(void)snprintf(why, sizeof(why),
			"ksm_stat's ksm_zero_pages moved %+" PRId64 " for %" PRId64 " probe KSM "
			"zero page(s), %+" PRId64 " after their unmerge",
			o->zp_stat[1] - o->zp_stat[0], o->zp_pages, o->zp_stat[2] - o->zp_stat[0]);
	stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KSM_STAT, why[0] ? why : NULL,
		"%s for merging pages, %s for KSM zero pages",
		o->stat_merging          ? "ksm_stat" :
			o->merging_pages ? "/proc/self/ksm_merging_pages" :
			ifc->pfns        ? "pagemap" :
					   "nothing",
		ifc->stat_zero    ? "ksm_stat" :
			ifc->pfns ? "pagemap" :
				    "nothing");
}

/*
 *  stress_ksm_unmerge_iface_copied()
 *	pure: probe pages its unmerge provably copied: on one pfn after the merge (only KSM
 *	maps a frame twice in a private mapping), now present on a frame of their own
 */
static uint64_t stress_ksm_unmerge_iface_copied(const stress_ksm_unmerge_obs_t *o)
{
	const uint64_t k = stress_ksm_unmerge_pm_pfn(o->mg[0]);
	uint64_t n = 0;
	int i;

	for (i = 0; i < 2 && o->merged == 1 && o->ksm_pages >= 2 && k; i++) {
		const uint64_t e = o->mg_after[i], other = o->mg_after[!i];
		const uint64_t pfn = stress_ksm_unmerge_pm_pfn(e);

		n += (e & PM_PRESENT) && pfn && pfn != k &&
			!((other & PM_PRESENT) && stress_ksm_unmerge_pm_pfn(other) == pfn);
	}
	return n;
}

/*
 *  stress_ksm_unmerge_iface_cow()
 *	pure: every kernel with cow_ksm (6.1+, VM event counters) counts each copy of a KSM
 *	page in do_wp_page(), write or unshare: fewer than the probe's copies is the kernel
 *	failing. Off only without the counter, or with no provable copy and no growth:
 *	swapped out (unmerge skips it, a swap-in may copy it uncounted) or still shared
 *	(the cycles' page checks judge that)
 */
static void stress_ksm_unmerge_iface_cow(
	const stress_ksm_unmerge_obs_t *o, stress_ksm_unmerge_iface_t *ifc)
{
	const int64_t delta =
		(o->cow_before >= 0 && o->cow_after >= 0) ? o->cow_after - o->cow_before : -1;
	const uint64_t copied = stress_ksm_unmerge_iface_copied(o);
	const size_t len = strlen(ifc->broken);

	ifc->cow_ksm = delta >= 0;
	if (delta < 0) {
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_COW_KSM, "no cow_ksm in /proc/vmstat",
			"pagemap checks only (the cow_ksm check is off)");
	} else if ((uint64_t)delta < copied) {
		(void)snprintf(ifc->broken + len, sizeof(ifc->broken) - len, "%sthe self-test's "
			"probe unmerge copied %" PRIu64 " KSM pages (pfn %#" PRIx64 " mapped "
			"twice; now %#" PRIx64 " and %#" PRIx64 ", present) but /proc/vmstat "
			"cow_ksm grew by %" PRId64 ": the kernel no longer counts the copy of a "
			"KSM page (do_wp_page, 6.1+)", len ? "; " : "", copied,
			stress_ksm_unmerge_pm_pfn(o->mg[0]),
			stress_ksm_unmerge_pm_pfn(o->mg_after[0]),
			stress_ksm_unmerge_pm_pfn(o->mg_after[1]), delta);
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_COW_KSM, NULL,
			"cow_ksm (grew by %" PRId64 " for %" PRIu64 " copied KSM pages: a kernel "
			"failure)", delta, copied);
	} else if (o->merged == 1 && !copied && (uint64_t)delta < o->ksm_pages) {
		ifc->cow_ksm = false;
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_COW_KSM,
			"cow_ksm grew less than the probe's KSM pages, which its unmerge did "
			"not provably copy (swapped out or still shared)",
			"pagemap checks only (the cow_ksm check is off): %" PRId64 " < %" PRIu64,
			delta, o->ksm_pages);
	} else {
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_COW_KSM, NULL,
			"cow_ksm (grew by %" PRId64 " for %" PRIu64 " unshared KSM pages)", delta,
			o->merged != 1 ? 0 : (uint64_t)delta < o->ksm_pages ? copied : o->ksm_pages);
	}
}

/* pure: which signals the verdicts may use, from the self-test's observations */
static void stress_ksm_unmerge_iface_judge(
	const stress_ksm_unmerge_obs_t *o, stress_ksm_unmerge_iface_t *ifc)
{
	(void)shim_memset(ifc, 0, sizeof(*ifc));
	ifc->tested = true;
	ifc->pfns = o->pagemap && stress_ksm_unmerge_pm_pfn(o->fresh);
	ifc->kpageflags = ifc->pfns && o->kpageflags;
	ifc->excl = ifc->pfns && (o->fresh & PM_EXCLUSIVE);
	ifc->zero_unshare = o->kver >= stress_kernel_release(6, 4, 0);
	if (ifc->pfns)
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_PFNS, NULL, "pagemap PFNs%s",
			ifc->excl ? " and exclusive bit 56" : " (no exclusive bit 56)");
	else
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_PFNS, o->pagemap ? "pagemap hides PFNs "
			"(no CAP_SYS_ADMIN)" : "/proc/self/pagemap not readable",
			"per-process counters and data checks (no per-page verdicts)");
	stress_ksm_unmerge_iface_zero(o, ifc);
	stress_ksm_unmerge_iface_kpf_ksm(o, ifc);
	stress_ksm_unmerge_iface_kept(o, ifc);
	stress_ksm_unmerge_iface_counters(o, ifc);
	stress_ksm_unmerge_iface_cow(o, ifc);
}

/* pure: what a page is (KSM_PAGE_*), from the self-tested signals only */
static int stress_ksm_unmerge_page_what(const stress_ksm_unmerge_iface_t *ifc, const uint64_t e,
	const uint64_t flags, const size_t sharers, const uint64_t mapcount, const int kind)
{
	const uint64_t pfn = e & PM_PFN_MASK;

	if (!(e & PM_PRESENT))
		return (e & PM_SWAP) ? KSM_PAGE_SWAPPED : KSM_PAGE_ABSENT;
	if (!ifc->pfns || !pfn)
		return KSM_PAGE_PRIVATE;
	if ((ifc->zero_pfn && pfn == ifc->zero_pfn) || (ifc->kpf_zero && (flags & KPF_ZERO_PAGE)))
		return (kind == KSM_KIND_ZERO) ? KSM_PAGE_KZERO : KSM_PAGE_HOLE;
	if (ifc->kpf_ksm)
		return (flags & KPF_KSM) ? KSM_PAGE_KSM : KSM_PAGE_PRIVATE;
	if (sharers > 1)
		return KSM_PAGE_KSM;
	if (ifc->excl && !(e & PM_EXCLUSIVE))
		/* a COW share has 2 */
		return (mapcount == 0 || mapcount > 2) ? KSM_PAGE_KSM : KSM_PAGE_PRIVATE;
	return KSM_PAGE_PRIVATE;
}

/* page_what() of pagemap entry e, kpageflags and kpagecount read now */
static int stress_ksm_unmerge_page_state(const stress_ksm_unmerge_ctx_t *ctx, const uint64_t e,
	const size_t sharers, const int kind)
{
	const uint64_t pfn = stress_ksm_unmerge_pm_pfn(e);
	const uint64_t flags = pfn ? stress_ksm_unmerge_kpf(ctx->kpageflags_fd, pfn) : 0;
	const uint64_t count =
		(pfn && !ctx->iface->kpf_ksm && sharers <= 1 && !(e & PM_EXCLUSIVE)) ?
		stress_ksm_unmerge_kpf(ctx->kpagecount_fd, pfn) :
		0;

	return stress_ksm_unmerge_page_what(ctx->iface, e, flags, sharers, count, kind);
}

/* pure: a KSM page or a KSM zero page */
static inline bool stress_ksm_unmerge_is_ksm(const int what)
{
	return what == KSM_PAGE_KSM || what == KSM_PAGE_KZERO;
}

/* states of n pages at addr of kind (-1: the same page) into st[], entries into pm[]; -1 */
static int stress_ksm_unmerge_pages_entries(const stress_ksm_unmerge_ctx_t *ctx, const void *addr,
	const size_t n, const int kind, uint8_t *st, uint64_t *pm)
{
	size_t j;

	if (n > KSM_OP_PAGES)
		return -1;
	if (!ctx->have_pfns ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, addr, n, ctx->page_size, pm) < 0) {
		(void)shim_memset(st, KSM_PAGE_ABSENT, n);
		(void)shim_memset(pm, 0, n * sizeof(*pm));
		return -1;
	}
	for (j = 0; j < n; j++)
		st[j] = (uint8_t)stress_ksm_unmerge_page_state(ctx, pm[j], 0, kind);
	return 0;
}

/* states of n pages at addr of pattern kind (-1: the same page) into st[]; -1 without PFNs */
static int stress_ksm_unmerge_pages_state(const stress_ksm_unmerge_ctx_t *ctx, const void *addr,
	const size_t n, const int kind, uint8_t *st)
{
	uint64_t pm[KSM_OP_PAGES];

	return stress_ksm_unmerge_pages_entries(ctx, addr, n, kind, st, pm);
}

/* KSM pages among n pages at addr holding the same page (racer ranges) */
static uint64_t stress_ksm_unmerge_ksm_count(
	const stress_ksm_unmerge_ctx_t *ctx, const uint8_t *addr, const size_t n)
{
	uint8_t st[KSM_OP_PAGES];
	uint64_t count = 0;
	size_t k, j, m;

	for (k = 0; k < n; k += m) {
		m = STRESS_MINIMUM(n - k, (size_t)KSM_OP_PAGES);
		if (stress_ksm_unmerge_pages_state(ctx, addr + k * ctx->page_size, m, -1, st) < 0)
			return 0;
		for (j = 0; j < m; j++)
			count += stress_ksm_unmerge_is_ksm(st[j]);
	}
	return count;
}

/* self-test: pagemap entry and kpageflags of the page at addr (0s on error) */
static void stress_ksm_unmerge_iface_entry(const int pm_fd, const int kpf_fd, const void *addr,
	const size_t ps, uint64_t *e, uint64_t *flags)
{
	*e = *flags = 0;
	if (pm_fd < 0 || stress_ksm_unmerge_pagemap_read(pm_fd, addr, 1, ps, e) < 0)
		*e = 0;
	else
		*flags = stress_ksm_unmerge_kpf(kpf_fd, stress_ksm_unmerge_pm_pfn(*e));
}

/*
 *  stress_ksm_unmerge_iface_merge()
 *	the probe merge of two identical pages and a zero page, then unmerged (cow_ksm)
 */
static void stress_ksm_unmerge_iface_merge(const int pm_fd, const int kpf_fd, const size_t ps,
	 stress_ksm_unmerge_obs_t *o)
{
	const double t0 = stress_time_now();
	const uint64_t salt = stress_mwc64() | 1;
	uint8_t *p = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t flags;
	size_t w;

	o->merged = -1;
	if (p == MAP_FAILED)
		return;
	for (w = 0; w < ps / sizeof(uint64_t); w++)
		((uint64_t *)(void *)p)[w] = ((uint64_t *)(void *)(p + ps))[w] = salt * (w + 1);
	(void)shim_memset(p + 2 * ps, 0, ps);
	o->zp_stat[0] = stress_ksm_unmerge_field(KSM_STAT, "ksm_zero_pages");
	if (shim_madvise(p, 3 * ps, MADV_MERGEABLE) == 0) {
		o->merged = 0;
		while (stress_time_now() - t0 < 3.0) {
			stress_ksm_unmerge_iface_entry(
				pm_fd, kpf_fd, p, ps, &o->mg[0], &o->mg_flags[0]);
			stress_ksm_unmerge_iface_entry(
				pm_fd, kpf_fd, p + ps, ps, &o->mg[1], &o->mg_flags[1]);
			stress_ksm_unmerge_iface_entry(
				pm_fd, kpf_fd, p + 2 * ps, ps, &o->zp, &o->zp_flags);
			o->merged = stress_ksm_unmerge_pm_pfn(o->mg[0]) &&
				stress_ksm_unmerge_pm_pfn(o->mg[0]) ==
					stress_ksm_unmerge_pm_pfn(o->mg[1]);
			o->zp_valid = stress_ksm_unmerge_pm_pfn(o->zp) && !(o->zp & PM_EXCLUSIVE);
			if (o->merged && o->zp_valid)
				break;
			(void)shim_nanosleep_uint64(5000000);
		}
		o->ksm_pages = o->merged ? 2 : 0;
		o->zp_pages = o->zp_valid;
		o->zp_stat[1] = stress_ksm_unmerge_field(KSM_STAT, "ksm_zero_pages");
		o->zp_global[0] = stress_ksm_unmerge_field(KSM_SYSFS "/ksm_zero_pages", NULL);
		o->cow_before = stress_ksm_unmerge_field("/proc/vmstat", "cow_ksm");
		if (shim_madvise(p, 3 * ps, MADV_UNMERGEABLE) < 0) {	/* nothing to judge */
			pr_inf("ksm-unmerge: self-test: MADV_UNMERGEABLE of the probe failed, "
				"errno=%d (%s)\n", errno, strerror(errno));
			o->merged = -1;
			o->zp_pages = 0;
		}
		o->cow_after = stress_ksm_unmerge_field("/proc/vmstat", "cow_ksm");
		stress_ksm_unmerge_iface_entry(pm_fd, -1, p, ps, &o->mg_after[0], &flags);
		stress_ksm_unmerge_iface_entry(pm_fd, -1, p + ps, ps, &o->mg_after[1], &flags);
		o->zp_stat[2] = stress_ksm_unmerge_field(KSM_STAT, "ksm_zero_pages");
		o->zp_global[1] = stress_ksm_unmerge_field(KSM_SYSFS "/ksm_zero_pages", NULL);
		stress_ksm_unmerge_iface_entry(pm_fd, kpf_fd, p + 2 * ps, ps, &o->zp_after,
			&o->zp_after_flags);
	}
	(void)munmap(p, 3 * ps);
}

/*
 *  stress_ksm_unmerge_iface_probe()
 *	gather the self-test's observations on memory mapped for it
 */
static void stress_ksm_unmerge_iface_probe(stress_ksm_unmerge_obs_t *o)
{
	const size_t ps = stress_memory_page_size_get();
	const int pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	const int kpf_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	uint8_t *rf = mmap(NULL, 2 * ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *fresh = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char buf[1024];
	int64_t v;

	o->kver = stress_kernel_release_get();
	o->cow_before = o->cow_after = -1;
	o->zp_global[0] = o->zp_global[1] = -1;
	o->pagemap = pm_fd >= 0;
	o->kpageflags = kpf_fd >= 0;
	o->stat = stress_fs_file_read(KSM_STAT, buf, sizeof(buf)) > 0;
	if (o->stat) {
		o->stat_merging = stress_ksm_unmerge_counter(buf, "ksm_merging_pages", &v) !=
			KSM_COUNTER_MISSING;
		o->stat_zero = stress_ksm_unmerge_counter(buf, "ksm_zero_pages", &v) !=
			KSM_COUNTER_MISSING;
	}
	o->merging_pages = access("/proc/self/ksm_merging_pages", R_OK) == 0;
	if (rf != MAP_FAILED) {
		(void)*(volatile uint8_t *)rf;
		(void)*(volatile uint8_t *)(rf + ps);
		stress_ksm_unmerge_iface_entry(pm_fd, kpf_fd, rf, ps, &o->rf[0], &o->rf_flags[0]);
		stress_ksm_unmerge_iface_entry(
			pm_fd, kpf_fd, rf + ps, ps, &o->rf[1], &o->rf_flags[1]);
		(void)munmap(rf, 2 * ps);
	}
	if (fresh != MAP_FAILED) {
		fresh[0] = 1;
		stress_ksm_unmerge_iface_entry(
			pm_fd, kpf_fd, fresh, ps, &o->fresh, &o->fresh_flags);
		(void)munmap(fresh, ps);
	}
	stress_ksm_unmerge_iface_merge(pm_fd, kpf_fd, ps, o);
	if (pm_fd >= 0)
		(void)close(pm_fd);
	if (kpf_fd >= 0)
		(void)close(kpf_fd);
}

/* pure: the report line of interface i (tests grep the unreliable form) */
static void stress_ksm_unmerge_iface_line(const stress_ksm_unmerge_iface_t *ifc, const int i,
	char *buf, const size_t len)
{
	if (ifc->trusted[i])
		(void)snprintf(buf, len, "ksm-unmerge: interface %s: trusted: %s",
			stress_ksm_unmerge_iface_names[i], ifc->use[i]);
	else
		(void)snprintf(buf, len,
			"ksm-unmerge: interface %s: unreliable (%s); using %s instead",
			stress_ksm_unmerge_iface_names[i], ifc->why[i], ifc->use[i]);
}

/* probe and judge the kernel's signals once per run; say each unreliable one */
static void stress_ksm_unmerge_iface_selftest(stress_ksm_unmerge_iface_t *ifc)
{
	stress_ksm_unmerge_obs_t o;
	char line[512];
	int i;

	(void)shim_memset(&o, 0, sizeof(o));
	stress_ksm_unmerge_iface_probe(&o);
	stress_ksm_unmerge_iface_judge(&o, ifc);
	for (i = 0; i < KSM_IFACES; i++) {
		stress_ksm_unmerge_iface_line(ifc, i, line, sizeof(line));
		if (ifc->trusted[i])
			pr_dbg("%s\n", line);
		else
			pr_inf("%s\n", line);
	}
	if (ifc->disagree[0])
		pr_inf("ksm-unmerge: signals disagree: %s\n", ifc->disagree);
}

/* ==== Verification: scan, merge wait, merge, PFNs, data, unmerge ==== */

/* stopped, or too close to the timeout to free the region before it */
static bool stress_ksm_unmerge_ending(const stress_ksm_unmerge_ctx_t *ctx)
{
	return !stress_continue(ctx->args) || (ctx->teardown_secs > 0.0 &&
		stress_time_now() + ctx->teardown_secs >= ctx->args->time_end);
}

/* the run is ending: note the step that gave up (its cycle is not counted) */
static bool stress_ksm_unmerge_stop_seen(stress_ksm_unmerge_ctx_t *ctx, const char *step)
{
	if (!stress_ksm_unmerge_ending(ctx))
		return false;
	if (!ctx->stopped) {
		ctx->stopped = true;
		(void)shim_strscpy(ctx->st->stop_step, step, sizeof(ctx->st->stop_step));
	}
	return true;
}

/* this process's merging pages and KSM zero pages, -1 when unknown */
static void stress_ksm_unmerge_counters(int64_t *merging, int64_t *zero)
{
	*merging = stress_ksm_unmerge_field(KSM_STAT, "ksm_merging_pages");
	*zero = stress_ksm_unmerge_field(KSM_STAT, "ksm_zero_pages");
	if (*merging < 0)
		*merging = stress_ksm_unmerge_field("/proc/self/ksm_merging_pages", NULL);
}

typedef void (*stress_ksm_unmerge_page_fn)(stress_ksm_unmerge_ctx_t *ctx, void *arg, const size_t i,
	const uint64_t e, const int what, const size_t sharers, const uint64_t flags);

/* qsort: order (pfn << 12 | chunk index) keys */
static int stress_ksm_unmerge_key_cmp(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 *  stress_ksm_unmerge_scan_chunk()
 *	judge pages i0..i0+n (pagemap in ctx->pm) grouped by pfn, each handed to fn
 */
static void stress_ksm_unmerge_scan_chunk(stress_ksm_unmerge_ctx_t *ctx, const size_t i0,
	const size_t n, const bool sample, size_t *distinct, stress_ksm_unmerge_page_fn fn,
	void *arg)
{
	size_t j, m = 0, a, b, k;

	for (j = 0; j < n; j++) {
		const uint64_t pfn = stress_ksm_unmerge_pm_pfn(ctx->pm[j]);

		if (pfn && pfn < (1ULL << 50))
			ctx->keys[m++] = (pfn << 12) | j;
		else
			fn(ctx, arg, i0 + j, ctx->pm[j],
				stress_ksm_unmerge_page_what(ctx->iface, ctx->pm[j], 0, 0, 0,
					stress_ksm_unmerge_page_kind(ctx->pattern, i0 + j)),
				0, 0);
	}
	qsort(ctx->keys, m, sizeof(*ctx->keys), stress_ksm_unmerge_key_cmp);
	for (a = 0; a < m; a = b) {
		const uint64_t pfn = ctx->keys[a] >> 12;
		const uint64_t e = ctx->pm[ctx->keys[a] & 4095];
		uint64_t flags = 0, count = 0;

		for (b = a + 1; b < m && (ctx->keys[b] >> 12) == pfn; b++)
			;
		if (b - a > 1 || !sample || ((*distinct)++ & 7) == (ctx->cycle & 7) ||
			pfn == ctx->iface->zero_pfn)
			flags = stress_ksm_unmerge_kpf(ctx->kpageflags_fd, pfn);
		if (!ctx->iface->kpf_ksm && b - a == 1 && !(e & PM_EXCLUSIVE))
			count = stress_ksm_unmerge_kpf(ctx->kpagecount_fd, pfn);
		for (k = a; k < b; k++) {
			const size_t i = i0 + (ctx->keys[k] & 4095);

			fn(ctx, arg, i, ctx->pm[ctx->keys[k] & 4095],
				stress_ksm_unmerge_page_what(ctx->iface,
					ctx->pm[ctx->keys[k] & 4095], flags, b - a, count,
					stress_ksm_unmerge_page_kind(ctx->pattern, i)),
				b - a, flags);
		}
	}
}

/* judge every region page in bounded chunks; -1 without PFNs or at the end of the run */
static int stress_ksm_unmerge_scan(stress_ksm_unmerge_ctx_t *ctx, const bool sample,
	stress_ksm_unmerge_page_fn fn, void *arg)
{
	size_t i, distinct = 0;

	if (!ctx->have_pfns)
		return -1;
	for (i = 0; i < ctx->npages; i += KSM_CHUNK) {
		const size_t n = STRESS_MINIMUM((size_t)KSM_CHUNK, ctx->npages - i);

		if (stress_ksm_unmerge_stop_seen(ctx, "page scan") ||
			stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd,
				ctx->region + i * ctx->page_size, n, ctx->page_size, ctx->pm) < 0)
			return -1;
		stress_ksm_unmerge_scan_chunk(ctx, i, n, sample, &distinct, fn, arg);
	}
	return 0;
}

/* scan consumer: count KSM pages, KSM zero pages, present and swapped */
static void stress_ksm_unmerge_count_page(stress_ksm_unmerge_ctx_t *ctx, void *arg, const size_t i,
	const uint64_t e, const int what, const size_t sharers, const uint64_t flags)
{
	(void)arg;
	(void)i;
	(void)e;
	ctx->last.ksm += (what == KSM_PAGE_KSM);
	/* firm: only KSM maps one frame twice in a private mapping; or KPF_KSM, trusted */
	ctx->last.firm += (what == KSM_PAGE_KSM) &&
		(sharers > 1 || (ctx->iface->kpf_ksm && (flags & KPF_KSM)));
	ctx->last.zero += (what == KSM_PAGE_KZERO);
	ctx->last.present +=
		(what == KSM_PAGE_KSM || what == KSM_PAGE_PRIVATE || what == KSM_PAGE_HOLE);
	ctx->last.swapped += (what == KSM_PAGE_SWAPPED);
}

/* count the region's KSM pages and KSM zero pages into ctx->last */
static int stress_ksm_unmerge_region_count(stress_ksm_unmerge_ctx_t *ctx)
{
	(void)shim_memset(&ctx->last, 0, sizeof(ctx->last));
	/* before the scan: a KSM page it sees copied later is in a delta from here */
	stress_ksm_unmerge_vmstat(&ctx->last.cow, &ctx->last.swapin);
	if (stress_ksm_unmerge_scan(ctx, false, stress_ksm_unmerge_count_page, NULL) < 0) {
		(void)shim_memset(&ctx->last, 0, sizeof(ctx->last));
		return -1;
	}
	ctx->last.cycle = ctx->cycle;
	return 0;
}

/* pages merged now: the process counters, or the region's pages where they fall short */
static uint64_t stress_ksm_unmerge_merged_now(
	stress_ksm_unmerge_ctx_t *ctx, int64_t *merging, int64_t *zero)
{
	if (ctx->by_pages) {
		(void)stress_ksm_unmerge_region_count(ctx);
		*merging = (int64_t)ctx->last.ksm;
		*zero = (int64_t)ctx->last.zero;
	} else {
		stress_ksm_unmerge_counters(merging, zero);
	}
	return (uint64_t)(*merging > 0 ? *merging : 0) + (uint64_t)(*zero > 0 ? *zero : 0);
}

/* more instances than CPUs: ksmd and the racer threads may wait for a CPU */
static bool stress_ksm_unmerge_oversubscribed(stress_args_t *args)
{
	return args->instances > (uint32_t)stress_cpus_online_get();
}

/* ksmd's pid (a kernel thread, child of kthreadd), 0 when /proc does not show it */
static pid_t stress_ksm_unmerge_ksmd_pid(void)
{
	DIR *dir = opendir("/proc");
	struct dirent *d;
	char path[64], buf[256], *p;
	pid_t pid = 0;

	while (dir && !pid && (d = readdir(dir)) != NULL) {
		(void)snprintf(path, sizeof(path), "/proc/%.16s/stat", d->d_name);
		if (isdigit((int)d->d_name[0]) && stress_fs_file_read(path, buf, sizeof(buf)) > 0 &&
		    (p = shim_strstr(buf, " (ksmd) ")) && atoi(p + 10) == 2)
			pid = (pid_t)atoi(d->d_name);
	}
	if (dir)
		(void)closedir(dir);
	return pid;
}

/* secs ksmd ran and waited runnable for a CPU (schedstat), -1 unknown */
static void stress_ksm_unmerge_ksmd_time(const pid_t pid, double *cpu, double *runnable)
{
	char path[64], buf[128];
	unsigned long long run, wait;

	*cpu = *runnable = -1.0;
	(void)snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if (pid > 0 && stress_fs_file_read(path, buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%llu %llu", &run, &wait) == 2) {
		*cpu = (double)run / 1.0E9;
		*runnable = (double)wait / 1.0E9;
	}
}

/*
 *  stress_ksm_unmerge_wait_judge()
 *	pure: how a merge wait ended, from what ksmd did during it.  Starved (too
 *	little CPU) and slow (progress, too slowly) are named conditions of a
 *	loaded machine; only a ksmd that had the CPU and scanned nothing is stuck
 */
static int stress_ksm_unmerge_wait_judge(const stress_ksm_unmerge_wait_t *w)
{
	if (w->want ? w->got >= w->want : w->stable)
		return KSM_WAIT_MERGED;
	if (w->stable || w->scans >= KSM_WAIT_SCANS)
		return KSM_WAIT_PARTIAL;
	if (w->cpu >= KSM_STUCK_CPU && w->scanned <= 0 && w->scans <= 0)
		return KSM_WAIT_STUCK;
	if (w->cpu < 0.0)
		return (w->scanned > 0) ? KSM_WAIT_SLOW : KSM_WAIT_STARVED;
	return (w->cpu < KSM_STARVED_SHARE * w->wall) ? KSM_WAIT_STARVED : KSM_WAIT_SLOW;
}

/*
 *  stress_ksm_unmerge_merge_wait()
 *	sleep until ksmd merged the prediction; how the wait ended (KSM_WAIT_*), -1 stopped.
 *	The deadline follows ksmd, not the clock: the wait goes on until ksmd used
 *	`bound` secs of CPU in it, or made no progress for `bound` secs
 */
static int stress_ksm_unmerge_merge_wait(stress_ksm_unmerge_ctx_t *ctx, const double bound,
	int64_t *merging, int64_t *zero)
{
	stress_ksm_unmerge_wait_t *w = &ctx->wait;
	const pid_t ksmd = stress_ksm_unmerge_shared->ksmd_pid;
	const bool oversub = stress_ksm_unmerge_oversubscribed(ctx->args);
	const double t0 = stress_time_now();
	const uint64_t want = ctx->expect_merged + ctx->expect_zero;
	const int64_t scanned0 = stress_ksm_unmerge_field(KSM_SYSFS "/pages_scanned", NULL);
	uint64_t scans0 = stress_ksm_unmerge_field(KSM_SYSFS "/full_scans", NULL),
		 last_scans = scans0;
	uint64_t last_total = 0, stable = 0, stale, sleep_ns = 500000, total;
	int64_t m0, z0;
	double cpu0, rq0, cpu, rq, progress = t0;

	(void)shim_memset(w, 0, sizeof(*w));
	w->want = want;
	stress_ksm_unmerge_ksmd_time(ksmd, &cpu0, &rq0);
	/* counts left from the last unmerge drain lazily: need fresh full scans */
	stress_ksm_unmerge_counters(&m0, &z0);
	stale = (m0 > 0 && !ctx->by_pages) ? 2 : 0;
	for (;;) {
		const uint64_t scans =
			(uint64_t)stress_ksm_unmerge_field(KSM_SYSFS "/full_scans", NULL);
		const int64_t scanned = stress_ksm_unmerge_field(KSM_SYSFS "/pages_scanned", NULL);
		const double now = stress_time_now();

		if (stress_ksm_unmerge_ending(ctx))
			return -1;
		if (scans < scans0)
			scans0 = scans;		/* run=2 by someone else reset the count */
		ctx->last.cycle = 0;
		total = stress_ksm_unmerge_merged_now(ctx, merging, zero);
		/* progress: ksmd scanned pages, ended a pass, or ours merged */
		if (total != w->got || scanned - scanned0 != w->scanned ||
		    (int64_t)(scans - scans0) != w->scans)
			progress = now;
		w->got = total;
		stress_ksm_unmerge_ksmd_time(ksmd, &cpu, &rq);
		w->wall = now - t0;
		w->cpu = (cpu0 >= 0.0 && cpu >= cpu0) ? cpu - cpu0 : -1.0;
		w->runnable = (w->cpu >= 0.0) ? rq - rq0 : -1.0;
		w->scanned = scanned - scanned0;
		w->scans = (int64_t)(scans - scans0);
		if (scans - scans0 >= stale) {
			/* the counters also count the racers' ranges: the region must hold it */
			if (want && total >= want && (!ctx->have_pfns ||
			    (ctx->last.cycle == ctx->cycle ? ctx->last.ksm + ctx->last.zero :
			    (stress_ksm_unmerge_region_count(ctx) < 0 ? want :
			    ctx->last.ksm + ctx->last.zero)) >= want))
				return KSM_WAIT_MERGED;
			if (scans != last_scans) {
				stable = (total == last_total) ? stable + 1 : 0;
				last_total = total;
				last_scans = scans;
			}
			/* nothing more will merge: unique or pinned pages */
			w->stable = scans - scans0 >= 3 && (stable >= 2 || !want);
			if (w->stable || w->scans - (int64_t)stale >= KSM_WAIT_SCANS)
				return stress_ksm_unmerge_wait_judge(w);
		}
		if (w->cpu >= bound || now - progress > bound)
			return stress_ksm_unmerge_wait_judge(w);
		/* a busy poll slows ksmd (TLB shootdowns); at width it takes its CPU: poll less */
		(void)shim_nanosleep_uint64(sleep_ns);
		if ((double)sleep_ns < (oversub ? STRESS_MINIMUM(1.0E8, w->wall * 1.0E8) : 4.0E6))
			sleep_ns += sleep_ns / 2;
	}
}

/*
 *  stress_ksm_unmerge_merge_short()
 *	the region short of the prediction, counted again while it is: a KSM page compaction is
 *	moving reads as its freed old frame until the move ends; one swapped out or migrating
 *	(a swap entry) may be a KSM page, so it does not count against
 */
static bool stress_ksm_unmerge_merge_short(stress_ksm_unmerge_ctx_t *ctx, uint64_t *ksm,
	uint64_t *zero)
{
	int i;

	for (i = 0; ; i++) {
		if (*ksm + ctx->last.swapped >= ctx->expect_merged && *ksm + *zero +
		    ctx->last.swapped >= ctx->expect_merged + ctx->expect_zero)
			return false;
		if (i == 10)
			return true;
		(void)shim_nanosleep_uint64(10000000);
		if (stress_ksm_unmerge_region_count(ctx) < 0)
			return true;
		*ksm = ctx->last.ksm;
		*zero = ctx->last.zero;
	}
}

/* the region holds the predicted KSM pages and KSM zero pages, no more */
static int stress_ksm_unmerge_verify_merge(stress_ksm_unmerge_ctx_t *ctx, const int waited,
	uint64_t *ksm, uint64_t *zero)
{
	const char *name = ctx->args->name;

	if (ctx->last.cycle != ctx->cycle && stress_ksm_unmerge_region_count(ctx) < 0)
		return 0;	/* no PFNs (not root): counters only */
	*ksm = ctx->last.ksm;
	*zero = ctx->last.zero;
	if (!ctx->disturb_layout &&
		ctx->last.present + ctx->last.zero + ctx->last.swapped != ctx->npages) {
		pr_fail("%s: %zu of %zu pages present or swapped out after merge, expected all\n",
			name, ctx->last.present + (size_t)ctx->last.zero + ctx->last.swapped,
			ctx->npages);
		return -1;
	}
	/* a zero-filled page ksmd could not swap for the zero page merges as a KSM page */
	if (*zero > ctx->expect_zero || *ksm + *zero > ctx->expect_merged + ctx->expect_zero) {
		pr_fail("%s: %" PRIu64 " KSM pages and %" PRIu64
			" KSM zero pages merged, pattern %s allows "
			"at most %" PRIu64 " in all, %" PRIu64 " of them zero pages\n",
			name, *ksm, *zero, stress_ksm_unmerge_patterns[ctx->pattern],
			ctx->expect_merged + ctx->expect_zero, ctx->expect_zero);
		return -1;
	}
	/*
	 * Short of it where the counters reached it: judged on KPF_KSM only. The fallback
	 * signals miss a KSM page mapped once (its other sharers were another instance's
	 * pages, unmerged since: alone in the region and exclusive, it reads as plain), so
	 * their count is a lower bound
	 */
	if (waited > 0 && !ctx->disturb_counts && ctx->iface->kpf_ksm &&
	    stress_ksm_unmerge_merge_short(ctx, ksm, zero)) {
		pr_fail("%s: ksmd reported the merge complete but the region has %" PRIu64
			" KSM pages and %" PRIu64 " KSM zero pages, expected %" PRIu64
			" and %" PRIu64 "\n",
			name, *ksm, *zero, ctx->expect_merged, ctx->expect_zero);
		return -1;
	}
	return 0;
}

/* a page that may still be a KSM page after the unmerge, and its signals */
typedef struct {
	size_t page;
	uint64_t pfn;
	size_t sharers;
	bool kpf;			/* A: KPF_KSM set (trusted) */
	bool mapping;			/* B: pfn shared in the region, or not exclusive */
} stress_ksm_unmerge_suspect_t;

/* what verify_pfns gathers */
typedef struct {
	stress_ksm_unmerge_suspect_t sus[KSM_SUSPECTS];
	size_t nsus, zero_page;
	uint64_t zero, total, kpf_pages;
	uint64_t copies;		/* private order-0 pages, present on a frame of their own */
} stress_ksm_unmerge_pfns_t;

/* scan consumer after the unmerge: KSM zero pages left, and suspect KSM pages */
static void stress_ksm_unmerge_pfns_page(stress_ksm_unmerge_ctx_t *ctx, void *arg, const size_t i,
	const uint64_t e, const int what, const size_t sharers, const uint64_t flags)
{
	stress_ksm_unmerge_pfns_t *p = (stress_ksm_unmerge_pfns_t *)arg;
	const bool kpf = ctx->iface->kpf_ksm && (flags & KPF_KSM);
	const bool mapping = sharers > 1 || (ctx->iface->excl && !(e & PM_EXCLUSIVE));

	p->kpf_pages += !!(flags & KPF_KSM);
	p->copies += what == KSM_PAGE_PRIVATE && (e & PM_PRESENT) && sharers == 1 &&
		!(flags & (KPF_THP | KPF_HEAD | KPF_TAIL));
	if (what == KSM_PAGE_KZERO) {
		p->zero_page = p->zero ? p->zero_page : i;
		p->zero++;
	} else if ((kpf || mapping) && what != KSM_PAGE_HOLE) {
		if (p->nsus < KSM_SUSPECTS)
			p->sus[p->nsus++] = (stress_ksm_unmerge_suspect_t){ i, e & PM_PFN_MASK,
				sharers, kpf, mapping };
		p->total++;
	}
}

/* signal C: does a data-preserving write move page i to a new frame */
static bool stress_ksm_unmerge_cow_probe(stress_ksm_unmerge_ctx_t *ctx, const size_t i)
{
	uint8_t *page = ctx->region + i * ctx->page_size;
	uint64_t e0 = 0, e1 = 0;

	if (stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, page, 1, ctx->page_size, &e0) < 0 ||
	    !(e0 & PM_PRESENT) || (e0 & PM_UFFD_WP))
		return false;
	(void)__atomic_fetch_or((uint64_t *)(void *)page, 0, __ATOMIC_SEQ_CST);
	if (stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, page, 1, ctx->page_size, &e1) < 0)
		return false;
	return stress_ksm_unmerge_pm_pfn(e1) && stress_ksm_unmerge_pm_pfn(e1) != (e0 & PM_PFN_MASK);
}

/* the kernel's signals disagree: said once per run with the numbers, not a failure */
static void FORMAT(printf, 2, 3)
	stress_ksm_unmerge_disagree(stress_ksm_unmerge_ctx_t *ctx, const char *fmt, ...)
{
	char buf[384];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!__atomic_exchange_n(
		    &stress_ksm_unmerge_shared->disagree_reported, true, __ATOMIC_SEQ_CST))
		pr_inf("%s: signals disagree (cycle %" PRIu64
		       "): %s; not counted as an unmerge failure\n",
			ctx->args->name, ctx->cycle, buf);
	else
		pr_dbg("%s: signals disagree (cycle %" PRIu64 "): %s\n", ctx->args->name,
			ctx->cycle, buf);
}

/*
 *  stress_ksm_unmerge_verify_pfns()
 *	no KSM zero page or KSM page left, a KSM page judged by two signals that agree
 */
static int stress_ksm_unmerge_verify_pfns(stress_ksm_unmerge_ctx_t *ctx, const uint64_t ksm_before,
	const int64_t cow_delta, uint64_t *copies)
{
	stress_ksm_unmerge_pfns_t p;
	int64_t merging, zero;
	size_t k;

	(void)shim_memset(&p, 0, sizeof(p));
	*copies = 0;
	if (stress_ksm_unmerge_scan(ctx, !ctx->verify, stress_ksm_unmerge_pfns_page, &p) < 0)
		return 0;
	*copies = p.copies;	/* a scan cut short counts none: nothing is owed then */
	if (p.zero && ctx->iface->zero_unshare) {
		pr_fail("%s: page %zu still maps the KSM zero page after unmerge (%" PRIu64
			" such pages)\n",
			ctx->args->name, p.zero_page, p.zero);
		return -1;
	}
	for (k = 0; k < p.nsus; k++) {
		const stress_ksm_unmerge_suspect_t *s = &p.sus[k];
		const bool moved =
			!(s->kpf && s->mapping) && stress_ksm_unmerge_cow_probe(ctx, s->page);

		if ((s->kpf && s->mapping) ||
			(moved && (s->kpf || s->sharers > 1 || !ctx->iface->kpf_ksm))) {
			pr_fail("%s: page %zu is still a KSM page after unmerge: pfn %#" PRIx64
				" mapped by %zu "
				"region page(s)%s, KPF_KSM %s%s (%" PRIu64 " such pages)\n",
				ctx->args->name, s->page, s->pfn, s->sharers,
				s->mapping ? " and not exclusive" : "",
				s->kpf ? "set" : "clear or not trusted",
				moved ? "; a write moved it to a new frame" : "", p.total);
			return -1;
		}
	}
	if (p.nsus) {
		stress_ksm_unmerge_counters(&merging, &zero);
		stress_ksm_unmerge_disagree(ctx,
			"kpageflags says %" PRIu64 " KSM pages, %" PRIu64 " pages are "
			"flagged by one signal only, ksm_merging_pages says %" PRId64
			" (drains lazily), cow_ksm "
			"moved by %" PRId64 " for %" PRIu64
			" merged, and a write kept page %zu in its frame",
			p.kpf_pages, p.total, merging, cow_delta, ksm_before, p.sus[0].page);
	}
	return 0;
}

/* every page (a rotating 1/16 without --verify) holds its bytes */
static int stress_ksm_unmerge_verify_data(stress_ksm_unmerge_ctx_t *ctx)
{
	const size_t step = ctx->verify ? 1 : 16;
	size_t i;

	for (i = (size_t)(ctx->cycle % step); i < ctx->npages; i += step) {
		const uint8_t *page = ctx->region + i * ctx->page_size;
		uint8_t want = 0;
		ssize_t off;

		if (!(i & 16383) && stress_ksm_unmerge_stop_seen(ctx, "data check"))
			return 0;
		off = stress_ksm_unmerge_page_check(ctx, i, page, &want);
		if (off >= 0) {
			pr_fail("%s: data corrupted after unmerge: page %zu byte %zd is 0x%02x, "
				"expected 0x%02x (pattern %s)\n",
				ctx->args->name, i, off, page[off], want,
				stress_ksm_unmerge_patterns[ctx->pattern]);
			return -1;
		}
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_verify_cow()
 *	the merge scan's firm KSM pages (read after cow_ksm), less the region pages not
 *	private copies now (cow, swapin read now), became private: only do_wp_page()'s
 *	counted copy does that. Not judged where something else could: a layout racer's
 *	discard, a swap-in (copies a KSM page uncounted), an unknown zero page; no THP
 *	collapse in a NOHUGEPAGE region, and a THP page is no copy
 */
static int stress_ksm_unmerge_verify_cow(stress_ksm_unmerge_ctx_t *ctx, const uint64_t copies,
	const int64_t cow, const int64_t swapin)
{
	const uint64_t elsewhere = ctx->npages - STRESS_MINIMUM(copies, (uint64_t)ctx->npages);
	const uint64_t firm = ctx->last.cycle == ctx->cycle ? ctx->last.firm : 0;
	const uint64_t copied = firm > elsewhere ? firm - elsewhere : 0;

	if (!copied || ctx->disturb_layout || !ctx->iface->cow_ksm || ctx->last.cow < 0 ||
	    !(ctx->iface->zero_pfn || ctx->iface->kpf_zero) || cow < 0 ||
	    swapin != ctx->last.swapin || cow - ctx->last.cow >= (int64_t)copied)
		return 0;
	pr_fail("%s: cow_ksm grew by %" PRId64 " while at least %" PRIu64 " of %" PRIu64 " KSM "
		"pages (a frame shared in the region%s) became private pages of their own in the "
		"unmerge: the kernel copied KSM pages without counting them in /proc/vmstat "
		"cow_ksm\n", ctx->args->name, cow - ctx->last.cow, copied, firm,
		ctx->iface->kpf_ksm ? " or KPF_KSM" : "");
	return -1;
}

/*
 *  stress_ksm_unmerge_verify_unmerge()
 *	pages unshared, data intact, VMA flags kept, counters agreeing with the pages
 */
static int stress_ksm_unmerge_verify_unmerge(
	stress_ksm_unmerge_ctx_t *ctx, const uint64_t ksm_before, const int64_t cow_delta)
{
	const char *name = ctx->args->name;
	int64_t merging, zero, cow, swapin;
	uint64_t copies;
	char vmflags[256];

	if (stress_ksm_unmerge_verify_pfns(ctx, ksm_before, cow_delta, &copies) < 0 ||
	    stress_ksm_unmerge_verify_data(ctx) < 0)
		return -1;
	stress_ksm_unmerge_vmstat(&cow, &swapin);
	if (stress_ksm_unmerge_verify_cow(ctx, copies, cow, swapin) < 0)
		return -1;
	stress_ksm_unmerge_counters(&merging, &zero);
	/* the pages were judged above: a counter alone is a disagreement */
	if (zero > 0 && ctx->iface->zero_unshare && ctx->expect_zero && !ctx->disturb_counts) {
		if (!ctx->have_pfns) {
			pr_fail("%s: ksm_zero_pages is %" PRId64
				" right after unmerge, expected 0\n",
				name, zero);
			return -1;
		}
		stress_ksm_unmerge_disagree(ctx,
			"ksm_zero_pages is %" PRId64 " right after unmerge, "
			"but no region page maps the zero page",
			zero);
	}
	if (!ctx->disturb_layout && ctx->vmflags[0] && (ctx->verify || !(ctx->cycle & 7)) &&
	    stress_ksm_unmerge_vmflags(ctx->region, vmflags, sizeof(vmflags), true) == 0 &&
	    shim_strcmp(vmflags, ctx->vmflags)) {
		pr_fail("%s: VMA flags changed by merge/unmerge: before '%s', after '%s'\n", name,
			ctx->vmflags, vmflags);
		return -1;
	}
	if (!ctx->disturb_layout && cow_delta >= 0 && (uint64_t)cow_delta < ksm_before &&
		ctx->iface->cow_ksm) {
		if (!ctx->have_pfns) {
			pr_fail("%s: cow_ksm grew by %" PRId64 " during unmerge of %" PRIu64
				" KSM pages\n",
				name, cow_delta, ksm_before);
			return -1;
		}
		stress_ksm_unmerge_disagree(ctx,
			"cow_ksm grew by %" PRId64 " during the unmerge of %" PRIu64
			" KSM pages, but every region page is private",
			cow_delta, ksm_before);
	}
	return 0;
}

/* global and per-process ksm_zero_pages never below 0 (c2dc78b86e08) */
static int stress_ksm_unmerge_zero_check(stress_ksm_unmerge_ctx_t *ctx, const char *where)
{
	static const char * const which[] = { "global (sysfs)", "per-process (ksm_stat)" };
	static const char * const paths[] = { KSM_SYSFS "/ksm_zero_pages", KSM_STAT };
	char buf[1024];
	int64_t v;
	int i, verdict, rc = 0;

	for (i = 0; i < 2; i++) {
		if (stress_fs_file_read(paths[i], buf, sizeof(buf)) <= 0)
			continue;
		verdict = stress_ksm_unmerge_counter(buf, i ? "ksm_zero_pages" : NULL, &v);
		if (verdict != KSM_COUNTER_NEGATIVE && verdict != KSM_COUNTER_WRAPPED)
			continue;
		pr_fail("%s: %s ksm_zero_pages reads %" PRId64
			" %s: %s; the kernel lost count of KSM zero pages "
			"(c2dc78b86e08, a child undercharged at fork, or an uncharged zero page "
			"unshared: one a THP split mapped)\n",
			ctx->args->name, which[i], v, where,
			stress_ksm_unmerge_counter_verdicts[verdict]);
		rc = -1;
	}
	return rc;
}

/* merging on or off: madvise of [off, off + len), or prctl of the whole mm */
static int stress_ksm_unmerge_switch(stress_ksm_unmerge_ctx_t *ctx, const uint64_t sw,
	const size_t off, const size_t len, const bool on)
{
	if (sw == KSM_SW_PRCTL)
		return prctl(PR_SET_MEMORY_MERGE, on ? 1UL : 0UL, 0UL, 0UL, 0UL);
	return shim_madvise(ctx->region + off, len, on ? MADV_MERGEABLE : MADV_UNMERGEABLE);
}

/*
 *  stress_ksm_unmerge_unmerge_retried()
 *	MADV_UNMERGEABLE of a racer's range.  The unmerge walk returns EINTR
 *	when a signal reaches the calling thread (the signal racer's, sent to
 *	the whole process): the walk is retried, as the kernel expects, while
 *	the run goes on; -1 with errno set otherwise
 */
static int stress_ksm_unmerge_unmerge_retried(stress_ksm_unmerge_ctx_t *ctx, void *addr,
	const size_t len)
{
	int ret, tries = 0;

	do {
		ret = shim_madvise(addr, len, MADV_UNMERGEABLE);
	} while (ret < 0 && errno == EINTR && stress_continue(ctx->args) && tries++ < 256);
	return ret;
}

/* ==== Racer framework: known bugs, helpers, threads, meet, quiesce ==== */

/*
 *  Known kernel bugs.  A verdict that matches a known, written-up bug is
 *  counted and named once in the report instead of failing the run, so a
 *  run stays green unless something new broke; the bug's own racer run
 *  alone (--ksm-unmerge-method RACER) still fails on it.  Once a run has
 *  seen it, what triggers it steps aside, so the system is not polluted.
 */

/* pure: does a run of method m fail on known bug k (its own racer alone) */
static bool stress_ksm_unmerge_bug_fails(const size_t m, const int k)
{
	const char *name = stress_ksm_unmerge_method(m);

	return name && !shim_strcmp(name, stress_ksm_unmerge_bugs[k].racer);
}

/* this run has seen known bug k and must not trigger it again */
static bool stress_ksm_unmerge_bug_aside(const int k)
{
	const stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;

	return sh->bug[k].confirmed && !stress_ksm_unmerge_bug_fails(sh->method, k);
}

/* a verdict matched known bug k: counted and named in the report; false when it must fail */
static bool FORMAT(printf, 2, 3) stress_ksm_unmerge_bug_hit(const int k, const char *fmt, ...)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	stress_ksm_unmerge_bug_state_t *b = &sh->bug[k];
	char buf[sizeof(b->first)];
	va_list ap;

	if (stress_ksm_unmerge_bug_fails(sh->method, k))
		return false;
	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	(void)__atomic_add_fetch(&b->hits, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_exchange_n(&b->confirmed, 1, __ATOMIC_SEQ_CST))
		(void)shim_strscpy(b->first, buf, sizeof(b->first));
	pr_dbg("ksm-unmerge: known kernel bug %s: %s\n", stress_ksm_unmerge_bugs[k].name, buf);
	return true;
}

/*
 *  Racers.  Each races one kernel path against the cycle on the same
 *  memory: a thread doing one op at a time (op) and a hook for the
 *  phases and events (phase).  While the cycle verifies, every racer is
 *  parked: what is checked is what the kernel left, not a racer's write.
 */

/*
 *  stress_ksm_unmerge_share()
 *	pure: units of a racer's memory instance i of n gets from the run's `budget`,
 *	at most `most` each: a share each while there is a unit for every instance,
 *	else one unit in `budget` of them, spread (rotated by `slot`); 0: left out
 */
static inline size_t stress_ksm_unmerge_share(const size_t budget, const size_t most,
	const uint32_t n, const uint32_t i, const uint32_t slot)
{
	const uint64_t k = n ? ((uint64_t)i + slot) % n : 0;

	if (!n || !most || budget >= n)
		return n ? STRESS_MINIMUM(budget / n, most) : 0;
	return ((k + 1) * budget / n > k * budget / n) ? 1 : 0;
}

/* a racer left out at this width: its start()'s return */
#define KSM_LEFT_OUT	(-3)

/* count a failure of a racer and say what the kernel did wrong */
static void FORMAT(printf, 2, 3)
	stress_ksm_unmerge_racer_fail(stress_ksm_unmerge_run_t *run, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* the first is a fail line; repeats are counted, so one bug cannot end the run */
	if (!run->rs->failures++)
		pr_fail("%s: %s racer: %s\n", run->ctx->args->name, run->r->name, buf);
	else
		pr_dbg("%s: %s racer: again: %s\n", run->ctx->args->name, run->r->name, buf);
}

/* set why a racer is skipped or not reached; -1 for start()'s return */
static int FORMAT(printf, 2, 3)
	stress_ksm_unmerge_racer_reason(stress_ksm_unmerge_run_t *run, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(run->rs->reason, sizeof(run->rs->reason), fmt, ap);
	va_end(ap);
	return -1;
}

/* does a racer other than self with flag (KSM_RF_LAYOUT: discards or protects region pages) run */
static bool stress_ksm_unmerge_others_run(const stress_ksm_unmerge_ctx_t *ctx,
	const stress_ksm_unmerge_racer_t *self, const unsigned int flag)
{
	size_t i;

	for (i = 0; i < KSM_RACERS; i++)
		if ((ctx->racers & STRESS_BIT_ULL(i)) &&
			(stress_ksm_unmerge_racers[i].flags & flag) &&
			&stress_ksm_unmerge_racers[i] != self)
			return true;
	return false;
}

/* racer thread: act now (merged or unmerging, not parking, run going) */
static inline bool stress_ksm_unmerge_active(const stress_ksm_unmerge_ctx_t *ctx)
{
	return !ctx->quiesce && stress_continue(ctx->args) &&
		(ctx->phase == KSM_PHASE_MERGED || ctx->phase == KSM_PHASE_UNMERGING);
}

/* broadcast cond under wake_lock; the racers' (wake) is the cycle moving on: gen is bumped */
static void stress_ksm_unmerge_broadcast(stress_ksm_unmerge_ctx_t *ctx, pthread_cond_t *cond)
{
	(void)pthread_mutex_lock(&ctx->wake_lock);
	if (cond == &ctx->wake)
		(void)__atomic_add_fetch(&ctx->gen, 1, __ATOMIC_SEQ_CST);
	(void)pthread_cond_broadcast(cond);
	(void)pthread_mutex_unlock(&ctx->wake_lock);
}

/* wake_lock held: wait on cond until deadline (stress_time_now() secs); false once it passed */
static bool stress_ksm_unmerge_cond_wait(stress_ksm_unmerge_ctx_t *ctx, pthread_cond_t *cond,
	const double deadline)
{
	const double left = deadline - stress_time_now();
	struct timespec ts;
	double whole;

	if (left <= 0.0)
		return false;
	(void)shim_clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)(modf(left, &whole) * 1.0E9);
	ts.tv_sec += (time_t)whole + ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	(void)pthread_cond_timedwait(cond, &ctx->wake_lock, &ts);
	return true;
}

/* racer thread: note an op begun on this cycle's merged pages */
static inline void stress_ksm_unmerge_met(stress_ksm_unmerge_run_t *run)
{
	if (run->ctx->phase == KSM_PHASE_MERGED && run->met != run->ctx->cycle) {
		run->met = run->ctx->cycle;
		stress_ksm_unmerge_broadcast(run->ctx, &run->ctx->acked);
	}
}

/* keep a splice or pin up to 1 ms or until the phase moves on */
static void stress_ksm_unmerge_hold(const stress_ksm_unmerge_ctx_t *ctx)
{
	const int phase = ctx->phase;
	const uint32_t steps = stress_mwc32modn(20);
	uint32_t s;

	for (s = 0; s < steps && ctx->phase == phase && !ctx->quiesce; s++)
		(void)shim_nanosleep_uint64(50000);
}

/* 1..max random pages inside the part of the region racers may touch */
static size_t stress_ksm_unmerge_random_range(
	const stress_ksm_unmerge_ctx_t *ctx, const size_t max, size_t *first)
{
	const size_t npages = ctx->touch_npages;
	const size_t n = STRESS_MINIMUM(1 + (size_t)stress_mwc32modn((uint32_t)max), npages);

	*first = stress_mwc32modn((uint32_t)(npages - n + 1));
	return n;
}

/* leading pages of first..first+n holding their pattern's bytes; states, entries into st, pm */
static size_t stress_ksm_unmerge_present(const stress_ksm_unmerge_ctx_t *ctx, const size_t first,
	const size_t n, uint8_t *st, uint64_t *pm)
{
	size_t j;

	if (stress_ksm_unmerge_pages_entries(ctx, ctx->region + first * ctx->page_size, n,
			stress_ksm_unmerge_page_kind(ctx->pattern, first), st, pm) < 0)
		return n;	/* no PFNs: cannot tell, take them all */
	for (j = 0; j < n; j++)
		if (st[j] == KSM_PAGE_ABSENT || st[j] == KSM_PAGE_SWAPPED ||
			st[j] == KSM_PAGE_HOLE ||
			(st[j] == KSM_PAGE_KZERO &&
				stress_ksm_unmerge_page_kind(ctx->pattern, first + j) !=
					KSM_KIND_ZERO))
			break;
	return j;
}

/* a copy of region pages first.. holds the pattern, else a fail line and -1 */
static int stress_ksm_unmerge_copy_check(stress_ksm_unmerge_run_t *run, const size_t first,
	const uint8_t *buf, const size_t len, const char *what)
{
	const stress_ksm_unmerge_ctx_t *ctx = run->ctx;
	const size_t ps = ctx->page_size;
	const bool others = stress_ksm_unmerge_others_run(ctx, NULL, KSM_RF_LAYOUT);
	size_t j;

	for (j = 0; j * ps < len; j++) {
		const size_t plen = STRESS_MINIMUM(len - j * ps, ps);
		uint8_t want = 0;
		ssize_t off = stress_ksm_unmerge_page_check(ctx, first + j, buf + j * ps, &want);

		if (off < 0 || (size_t)off >= plen ||
			(others && stress_ksm_unmerge_all_zero(buf + j * ps, plen)))
			continue;
		stress_ksm_unmerge_racer_fail(run,
			"%s page %zu: byte %zd is 0x%02x, expected 0x%02x", what, first + j, off,
			buf[j * ps + (size_t)off], want);
		return -1;
	}
	return 0;
}

/* first of n pages at p not holding the same page, -1 if all do */
static ssize_t stress_ksm_unmerge_same_check(
	const stress_ksm_unmerge_ctx_t *ctx, const uint8_t *p, const size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (shim_memcmp(p + k * ctx->page_size, ctx->templates, ctx->page_size))
			return (ssize_t)k;
	return -1;
}

/*
 *  stress_ksm_unmerge_child_unshare()
 *	racer child: its copy of each run of region pages that are not KSM pages is
 *	made unmergeable.  Else ksmd may merge such a page, which the child shares
 *	with its parent, in place through the child's mm after the parent's unmerge
 *	passed it, and the parent then maps a KSM page it never merged: a false
 *	"still a KSM page after unmerge" (records/investigations/still-ksm-after-
 *	unmerge.md), common at width, where cross-instance pins leave partial merges
 */
static int stress_ksm_unmerge_child_unshare(const stress_ksm_unmerge_ctx_t *ctx)
{
	uint64_t pm[512];
	size_t i, j, n, run = 0;
	int fd, ret = 0;

	if (!ctx->region || !ctx->iface || !ctx->iface->pfns)
		return 0;	/* no page verdict: the region's pages are not checked either */
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);	/* the parent's fd reads its mm */
	if (fd < 0)
		return -1;
	for (i = 0; i < ctx->npages && !ret; i += n) {
		n = STRESS_MINIMUM(ctx->npages - i, SIZEOF_ARRAY(pm));
		if (stress_ksm_unmerge_pagemap_read(fd, ctx->region + i * ctx->page_size, n,
		    ctx->page_size, pm) < 0) {
			ret = -1;
			break;
		}
		for (j = 0; j <= n && !ret; j++) {
			const int kind = stress_ksm_unmerge_page_kind(ctx->pattern, i + j);
			const bool ksm = (j == n) || stress_ksm_unmerge_is_ksm(
				stress_ksm_unmerge_page_state(ctx, pm[j], 0, kind));

			if (!ksm) {
				run++;
			} else if (run && (j < n || i + n == ctx->npages)) {
				ret = shim_madvise(ctx->region + (i + j - run) * ctx->page_size,
					run * ctx->page_size, MADV_UNMERGEABLE);
				run = 0;
			}
		}
	}
	(void)close(fd);
	return ret;
}

/* racer child: die with the forking thread, be the OOM killer's first pick */
static int stress_ksm_unmerge_child_init(stress_ksm_unmerge_ctx_t *ctx, const pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return -1;
	if (getppid() != parent) {
		errno = ESRCH;
		return -1;
	}
	stress_set_oom_adjustment(ctx->args, true);
	return 0;
}

/* reap child pid, which must end within secs, else killed; 1 killed, 0 reaped, -1 error */
static int stress_ksm_unmerge_reap(const pid_t pid, const double secs, int *status)
{
	const double deadline = stress_time_now() + secs;
	pid_t ret;

	*status = 0;
	do {
		ret = shim_waitpid(pid, status, WNOHANG);
		if (ret == pid)
			return 0;
		(void)shim_nanosleep_uint64(500000);
	} while ((ret >= 0 || errno == EINTR) && stress_time_now() < deadline);
	return (stress_kill_pid_wait(pid, status) == pid) ? 1 : -1;
}

/* private anonymous, NOHUGEPAGE, named mapping (dontfork: MADV_DONTFORK); NULL on failure */
static uint8_t *stress_ksm_unmerge_map(
	const size_t size, const int flags, const char *name, const bool dontfork)
{
	uint8_t *p = mmap(
		NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	/* a child's mergeable copy would let ksmd make a page still shared with it a KSM page */
	if (p == MAP_FAILED || (dontfork && shim_madvise(p, size, MADV_DONTFORK) < 0)) {
		if (p != MAP_FAILED)
			(void)munmap(p, size);
		return NULL;
	}
#if defined(MADV_NOHUGEPAGE)
	(void)shim_madvise(p, size, MADV_NOHUGEPAGE);
#endif
	stress_memory_anon_name_set(p, size, name);
	return p;
}

/* fill n pages at p with the same page (racer ranges merge with the region) */
static void stress_ksm_unmerge_same_fill(
	const stress_ksm_unmerge_ctx_t *ctx, uint8_t *p, const size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		(void)shim_memcpy(p + k * ctx->page_size, ctx->templates, ctx->page_size);
}

/*
 *  stress_ksm_unmerge_racer_thread()
 *	a racer's thread: ops while the cycle allows, parked when asked; an op that
 *	returns false has nothing to do until the cycle moves on, and the thread sleeps
 */
static void *stress_ksm_unmerge_racer_thread(void *arg)
{
	stress_ksm_unmerge_run_t *run = (stress_ksm_unmerge_run_t *)arg;
	stress_ksm_unmerge_ctx_t *ctx = run->ctx;

	while (!ctx->racers_stop) {
		const uint64_t gen = __atomic_load_n(&ctx->gen, __ATOMIC_SEQ_CST);
		const uint64_t q = ctx->quiesce;

		if (q) {
			if (run->parked != q) {
				if (run->r->phase)
					run->r->phase(ctx, run, KSM_PHASE_PARK);
				run->parked = q;
				stress_ksm_unmerge_broadcast(ctx, &ctx->acked);
			}
		} else if (stress_continue(ctx->args) && run->r->op(ctx, run)) {
			continue;
		}
		/* nothing to do until the cycle moves on (gen changes): a polling thread takes the
		 * CPU ksmd needs, and at width (instances over CPUs) ksmd, at nice 5, starves */
		(void)pthread_mutex_lock(&ctx->wake_lock);
		while (__atomic_load_n(&ctx->gen, __ATOMIC_SEQ_CST) == gen && !ctx->racers_stop &&
		       stress_ksm_unmerge_cond_wait(ctx, &ctx->wake, stress_time_now() + 1.0))
			;
		(void)pthread_mutex_unlock(&ctx->wake_lock);
	}
	if (run->r->phase)
		run->r->phase(ctx, run, KSM_PHASE_PARK);
	run->thread_done = true;
	stress_ksm_unmerge_broadcast(ctx, &ctx->acked);
	return NULL;
}

/* hold a racer's mapping (len bytes) or heap block (len 0) until its end; p or NULL */
static void *stress_ksm_unmerge_keep(stress_ksm_unmerge_run_t *run, void *p, const size_t len)
{
	if (p == MAP_FAILED || !p || run->nkept >= SIZEOF_ARRAY(run->kept))
		return NULL;
	run->kept[run->nkept].addr = p;
	run->kept[run->nkept++].len = len;
	return p;
}

/* hold an fd for a racer (the framework closes it); fd, or -1 */
static int stress_ksm_unmerge_keep_fd(stress_ksm_unmerge_run_t *run, const int fd)
{
	if (fd >= 0 && run->nfds < SIZEOF_ARRAY(run->fds))
		run->fds[run->nfds++] = fd;
	return fd;
}

/* undo a racer's start: its stop event, then what it held released */
static void stress_ksm_unmerge_racer_end(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	if (run->r->phase && run->priv)
		run->r->phase(ctx, run, KSM_PHASE_STOP);
	while (run->nfds)
		(void)close(run->fds[--run->nfds]);
	for (; run->nkept; run->nkept--) {
		if (run->kept[run->nkept - 1].len)
			(void)munmap(run->kept[run->nkept - 1].addr, run->kept[run->nkept - 1].len);
		else
			free(run->kept[run->nkept - 1].addr);
	}
	free(run->priv);
	run->priv = NULL;
}

/*
 *  stress_ksm_unmerge_racers_start()
 *	start every requested racer (start -2: a skip, -1: a failure) and its thread
 */
static void stress_ksm_unmerge_racers_start(stress_ksm_unmerge_ctx_t *ctx)
{
	size_t i;

	for (i = 0; i < KSM_RACERS; i++) {
		stress_ksm_unmerge_run_t *run = &ctx->run[i];
		const stress_ksm_unmerge_racer_t *r = run->r;
		char why[sizeof(run->rs->reason) + 16];
		int ret = -2;

		if (!(ctx->use & KSM_RACER_BIT(i)))
			continue;
		run->thread_done = false;
		run->parked = run->met = 0;
		if (r->not_built)
			(void)stress_ksm_unmerge_racer_reason(run, "not built: %s", r->not_built);
		else if ((r->flags & KSM_RF_PFNS) && !ctx->have_pfns)
			(void)stress_ksm_unmerge_racer_reason(run,
				"pagemap PFNs not readable (needs CAP_SYS_ADMIN): "
				"its evidence cannot be seen");
		else if (!r->supported ||
			r->supported(run->rs->reason, sizeof(run->rs->reason)) == 0)
			ret = (r->priv_size && !(run->priv = calloc(1, r->priv_size))) ? -1 :
				(r->start ? r->start(ctx, run) : 0);
		if (ret == 0 && r->op) {
			ret = pthread_create(
				&run->thread, NULL, stress_ksm_unmerge_racer_thread, run);
			run->thread_running = !ret;
			errno = ret;
			ret = ret ? stress_ksm_unmerge_racer_reason(run,
					    "pthread_create failed, errno=%d (%s)", errno,
					    strerror(errno)) :
				    0;
		}
		if (ret == 0) {
			run->rs->active = true;
			ctx->racers |= STRESS_BIT_ULL(i);
			ctx->disturb_counts |= !!(r->flags & KSM_RF_PARTIAL);
			ctx->disturb_layout |= !!(r->flags & KSM_RF_LAYOUT);
			continue;
		}
		stress_ksm_unmerge_racer_end(ctx, run);
		if (ret == KSM_LEFT_OUT) {
			run->rs->left_out = true;	/* counted in the report, no skip line */
			continue;
		}
		if (ret == -1) {
			(void)snprintf(why, sizeof(why), "start failed%s%s",
				run->rs->reason[0] ? ": " : "", run->rs->reason);
			(void)shim_strscpy(run->rs->reason, why, sizeof(run->rs->reason));
		}
		run->rs->skipped = true;
		if (stress_instance_zero(ctx->args) && !ctx->restarts)
			pr_inf_skip("%s: racer %s skipped: %s\n", ctx->args->name, r->name,
				run->rs->reason);
	}
}

/* stop every running racer: join its thread, end it */
static void stress_ksm_unmerge_racers_stop(stress_ksm_unmerge_ctx_t *ctx)
{
	size_t i;

	ctx->racers_stop = true;
	ctx->quiesce = 0;
	stress_ksm_unmerge_broadcast(ctx, &ctx->wake);
	for (i = 0; i < KSM_RACERS; i++) {
		if (!(ctx->racers & STRESS_BIT_ULL(i)))
			continue;
		if (ctx->run[i].thread_running)
			(void)pthread_join(ctx->run[i].thread, NULL);
		ctx->run[i].thread_running = false;
		stress_ksm_unmerge_racer_end(ctx, &ctx->run[i]);
	}
	ctx->racers = 0;
	ctx->disturb_counts = ctx->disturb_layout = false;
	ctx->touch_npages = ctx->npages;
	if (stress_ksm_unmerge_vmflags(ctx->region, ctx->vmflags, sizeof(ctx->vmflags), true) < 0)
		ctx->vmflags[0] = '\0';	/* uffd-wp's "uw" gone */
}

/* enter or leave the shared quiet window: every instance stops its racers for 3 s every 10 s */
static void stress_ksm_unmerge_window(stress_ksm_unmerge_ctx_t *ctx, const bool end)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	const double t = stress_time_now() - sh->t0 - KSM_QUIET_FIRST;
	const bool in = !end && ctx->use >= KSM_RACER_BIT(0) && t >= 0.0 &&
		fmod(t, KSM_QUIET_PERIOD) < KSM_QUIET_LEN;

	if (in == ctx->quiet)
		return;
	ctx->quiet = in;
	if (in) {
		stress_ksm_unmerge_racers_stop(ctx);
		if (__atomic_add_fetch(&sh->quiet_in, 1, __ATOMIC_SEQ_CST) >= sh->running)
			sh->quiet_all = stress_time_now();
		return;
	}
	sh->quiet_all = 0.0;
	(void)__atomic_sub_fetch(&sh->quiet_in, 1, __ATOMIC_SEQ_CST);
	if (!end) {
		ctx->racers_stop = false;
		ctx->restarts++;
		stress_ksm_unmerge_racers_start(ctx);
	}
}

/*
 *  stress_ksm_unmerge_window_hold()
 *	a cycle begun now, as long as the last one (secs), would end inside the next
 *	quiet window: wait for the window instead, so that every instance is in it
 *	from its start, also at a width where a cycle lasts longer than the window
 */
static void stress_ksm_unmerge_window_hold(stress_ksm_unmerge_ctx_t *ctx, const double last)
{
	const stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	const double t = stress_time_now() - sh->t0 - KSM_QUIET_FIRST;
	const double into = (t < 0.0) ? t : fmod(t, KSM_QUIET_PERIOD);
	const double start = stress_time_now() + ((t < 0.0) ? -t : KSM_QUIET_PERIOD - into);

	if (ctx->quiet || ctx->use < KSM_RACER_BIT(0) || (t >= 0.0 && into < KSM_QUIET_LEN) ||
	    start - stress_time_now() > last)
		return;
	while (!stress_ksm_unmerge_ending(ctx) && stress_time_now() < start)
		(void)shim_nanosleep_uint64((uint64_t)(1.0E9 *
			STRESS_MINIMUM(start - stress_time_now(), 0.05)) + 1000);
}

/* wait up to 50 ms for every racer that needs merged pages to begin an op on them */
static void stress_ksm_unmerge_racers_meet(stress_ksm_unmerge_ctx_t *ctx)
{
	const double deadline = stress_time_now() + 0.05;
	size_t i;

	(void)pthread_mutex_lock(&ctx->wake_lock);
	for (i = 0; i < KSM_RACERS; i++) {
		stress_ksm_unmerge_run_t *run = &ctx->run[i];

		if (!(ctx->racers & STRESS_BIT_ULL(i)) || !(run->r->flags & KSM_RF_WAIT) ||
			!run->thread_running)
			continue;
		while (run->met != ctx->cycle && !run->thread_done && stress_continue(ctx->args)) {
			if (!stress_ksm_unmerge_cond_wait(ctx, &ctx->acked, deadline)) {
				run->rs->meet_timeouts++;
				break;
			}
		}
	}
	(void)pthread_mutex_unlock(&ctx->wake_lock);
}

/* park every racer thread, then their restore events; false if one did not park */
static bool stress_ksm_unmerge_racers_quiesce(stress_ksm_unmerge_ctx_t *ctx)
{
	const double deadline = stress_time_now() + 5.0;
	bool parked = true;
	size_t i;

	ctx->quiesce = ctx->cycle;
	stress_ksm_unmerge_broadcast(ctx, &ctx->wake);
	(void)pthread_mutex_lock(&ctx->wake_lock);
	for (i = 0; i < KSM_RACERS && parked; i++) {
		stress_ksm_unmerge_run_t *run = &ctx->run[i];

		if (!(ctx->racers & STRESS_BIT_ULL(i)) || !run->thread_running)
			continue;
		while (run->parked != ctx->cycle && !run->thread_done) {
			if (!stress_ksm_unmerge_cond_wait(ctx, &ctx->acked, deadline)) {
				pr_fail("%s: racer %s did not park within 5 s (stuck in the "
					"kernel?)\n",
					ctx->args->name, run->r->name);
				parked = false;
				break;
			}
		}
	}
	(void)pthread_mutex_unlock(&ctx->wake_lock);
	if (!parked)
		return false;
	for (i = 0; i < KSM_RACERS; i++)
		if ((ctx->racers & STRESS_BIT_ULL(i)) && ctx->run[i].r->phase)
			ctx->run[i].r->phase(ctx, &ctx->run[i], KSM_PHASE_RESTORE);
	return true;
}

/* enter a cycle phase: the racers' phase hooks run; shared compaction lock while verifying */
static void stress_ksm_unmerge_phase_set(stress_ksm_unmerge_ctx_t *ctx, const int phase)
{
	const bool sh = (phase == KSM_PHASE_MERGED || phase == KSM_PHASE_VERIFY);
	size_t i;

	ctx->phase = phase;
	ctx->st->phase = phase;
	ctx->st->phase_since = stress_time_now();
	ctx->st->hang_allow = 0.0;
#if defined(HAVE_SYS_FILE_H)
	/* migration entries, reused pfns: locked shared after the hooks (thp joins compaction) */
	while (ctx->compact_fd >= 0 && !sh && flock(ctx->compact_fd, LOCK_UN) < 0 && errno == EINTR)
		;
#endif
	for (i = 0; i < KSM_RACERS; i++)
		if ((ctx->racers & STRESS_BIT_ULL(i)) && ctx->run[i].r->phase)
			ctx->run[i].r->phase(ctx, &ctx->run[i], phase);
#if defined(HAVE_SYS_FILE_H)
	while (ctx->compact_fd >= 0 && sh && flock(ctx->compact_fd, LOCK_SH) < 0 && errno == EINTR)
		;
#else
	(void)sh;	/* no compaction lock to take */
#endif
	if (phase == KSM_PHASE_IDLE)
		ctx->quiesce = 0;
	stress_ksm_unmerge_broadcast(ctx, &ctx->wake);
}

/* keep one latency sample (a ring of the latest) */
static void stress_ksm_unmerge_lat_add(stress_ksm_unmerge_lat_t *lat, const double ms)
{
	lat->ms[lat->total % KSM_LAT_SAMPLES] = ms;
	lat->total++;
	if (lat->count < KSM_LAT_SAMPLES)
		lat->count++;
}

/* ==== Racers: one "---- name" section each, then the racer table ==== */

/* ---- vmsplice: GUP references on KSM pages held in a pipe ---- */
#if defined(HAVE_VMSPLICE) && defined(SPLICE_F_NONBLOCK) && defined(HAVE_SYS_UIO_H) &&             \
	defined(HAVE_PIPE2)

typedef struct {
	int fds[2];			/* non-blocking pipe */
	uint8_t *buf;			/* read back; shared memory never merges with the region */
} stress_ksm_unmerge_vmsplice_t;

/*
 *  stress_ksm_unmerge_held_kept()
 *	pure: a KSM page when spliced (what0, e0), read (what, e) after the unmerge while a pipe
 *	holds its frame (never reused): the same pfn and KSM or not exclusive, left: 1; copy: 0
 */
static int stress_ksm_unmerge_held_kept(const int what0, const uint64_t e0, const int what,
	const uint64_t e, const bool excl)
{
	const uint64_t pfn = stress_ksm_unmerge_pm_pfn(e0);

	if (what0 != KSM_PAGE_KSM || !pfn || !(e & PM_PRESENT))
		return -1;
	if (stress_ksm_unmerge_pm_pfn(e) != pfn)
		return 0;
	return (what == KSM_PAGE_KSM || (excl && !(e & PM_EXCLUSIVE))) ? 1 : -1;
}

/*
 *  stress_ksm_unmerge_vmsplice_op()
 *	vmsplice 1-16 merged pages into the pipe, read them back, check every byte
 */
static bool stress_ksm_unmerge_vmsplice_op(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_vmsplice_t *v = (stress_ksm_unmerge_vmsplice_t *)run->priv;
	struct iovec iov[KSM_OP_PAGES];
	uint8_t st[KSM_OP_PAGES], now[KSM_OP_PAGES];
	uint64_t pm[KSM_OP_PAGES], e[KSM_OP_PAGES];
	const uint64_t cycle = ctx->cycle;
	const bool merged = (ctx->phase == KSM_PHASE_MERGED);
	size_t first, j, got = 0, n = stress_ksm_unmerge_random_range(ctx, KSM_OP_PAGES, &first);
	uint64_t ksm = 0;
	bool held = false;
	ssize_t ret;
	int spins = 0, kept;

	if (!stress_ksm_unmerge_active(ctx))
		return false;
	n = stress_ksm_unmerge_present(ctx, first, n, st, pm);
	for (j = 0; j < n; j++) {
		iov[j].iov_base = ctx->region + (first + j) * ctx->page_size;
		iov[j].iov_len = ctx->page_size;
		ksm += stress_ksm_unmerge_is_ksm(st[j]);
	}
	stress_ksm_unmerge_met(run);
	ret = n ? vmsplice(v->fds[1], iov, n, SPLICE_F_NONBLOCK) : 0;
	if (ret <= 0) {
		if (ret < 0 && errno != EAGAIN && errno != EINTR)
			stress_ksm_unmerge_racer_fail(run,
				"vmsplice of pages %zu..%zu failed, errno=%d (%s)", first,
				first + n - 1, errno, strerror(errno));
		return true;
	}
	/* a splice begun while merged holds its references over the unmerge */
	while (merged && ctx->cycle == cycle && !ctx->racers_stop &&
	       (ctx->phase == KSM_PHASE_MERGED || ctx->phase == KSM_PHASE_UNMERGING))
		(void)shim_nanosleep_uint64(50000);
	held = merged && ctx->cycle == cycle && ctx->phase == KSM_PHASE_VERIFY;
	/*
	 * the KSM pages held over the unmerge must map a copy now; judged only
	 * where KPF_KSM is trusted: the fallback signals take a plain page the
	 * fork racers' children share by COW (not exclusive, mapcount > 2) for
	 * a KSM page, and no unmerge copies that one
	 */
	if (held && !ctx->stopped && ctx->iface->kpf_ksm &&
	    stress_ksm_unmerge_pages_entries(ctx, iov[0].iov_base, n,
			stress_ksm_unmerge_page_kind(ctx->pattern, first), now, e) == 0) {
		for (j = 0; j < n && !run->rs->failures; j++) {
			kept = stress_ksm_unmerge_held_kept(st[j], pm[j], now[j], e[j],
				ctx->iface->excl);
			run->rs->detail[KSM_D_VMSPLICE_COPIED] += (kept == 0);
			if (kept == 1)
				stress_ksm_unmerge_racer_fail(run, "page %zu still maps "
					"the KSM page (pfn %#" PRIx64 ") a pipe holds after the "
					"unmerge", first + j, (uint64_t)(pm[j] & PM_PFN_MASK));
		}
	}
	if (!merged)
		stress_ksm_unmerge_hold(ctx);
	while (got < (size_t)ret) {
		const ssize_t r = read(v->fds[0], v->buf + got, (size_t)ret - got);

		if (r > 0) {
			got += (size_t)r;
		} else if (r == 0 || (errno != EAGAIN && errno != EINTR) || ++spins > 10000) {
			stress_ksm_unmerge_racer_fail(run,
				"reading %zd bytes back from the pipe failed, errno=%d (%s)", ret,
				errno, strerror(errno));
			return true;
		} else {
			(void)shim_nanosleep_uint64(10000);
		}
	}
	(void)stress_ksm_unmerge_copy_check(
		run, first, v->buf, (size_t)ret, "read back from the pipe:");
	run->rs->evidence += ksm;
	run->rs->detail[KSM_D_VMSPLICE_HELD] += held;
	run->rs->detail[KSM_D_VMSPLICE_HELD_KSM] += held ? ksm : 0;
	run->rs->ops++;
	return true;
}

/* the pipe (a vmsplice into it proves the syscall) and the buffer */
static int stress_ksm_unmerge_vmsplice_start(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_vmsplice_t *v = (stress_ksm_unmerge_vmsplice_t *)run->priv;
	struct iovec iov = { ctx->templates, 1 };
	char c;

	v->buf = stress_ksm_unmerge_keep(run,
		stress_mmap_anon_shared(KSM_OP_PAGES * ctx->page_size, PROT_READ | PROT_WRITE),
		KSM_OP_PAGES * ctx->page_size);
	if (!v->buf || pipe2(v->fds, O_CLOEXEC | O_NONBLOCK) < 0 ||
		stress_ksm_unmerge_keep_fd(run, v->fds[0]) < 0 ||
		stress_ksm_unmerge_keep_fd(run, v->fds[1]) < 0 ||
		vmsplice(v->fds[1], &iov, 1, SPLICE_F_NONBLOCK) != 1 || read(v->fds[0], &c, 1) != 1)
		return stress_ksm_unmerge_racer_reason(run,
			"mmap, pipe2 or vmsplice failed, errno=%d (%s)", errno, strerror(errno));
	return 0;
}
#define KSM_VMSPLICE_NOT_BUILT	NULL
#else
#define KSM_VMSPLICE_NOT_BUILT                                                                     \
	"vmsplice(), pipe2() or SPLICE_F_NONBLOCK missing (HAVE_VMSPLICE, HAVE_PIPE2)"
typedef int stress_ksm_unmerge_vmsplice_t;	/* the racer table's priv_size */
#define stress_ksm_unmerge_vmsplice_start	NULL
#define stress_ksm_unmerge_vmsplice_op		NULL
#endif

/* ---- gup: O_DIRECT (GUP-fast) pins, io_uring long-term pins, process_vm_readv read pins ---- */
#if defined(O_DIRECT)

#define KSM_RO_PINS		(3)	/* read-only pins that must each have unshared a KSM page */

/* what a gup op pins with: O_DIRECT read into / write from the region, long-term, readv */
enum { KSM_GUP_ODIRECT_IN = 0, KSM_GUP_ODIRECT_OUT, KSM_GUP_LONGTERM, KSM_GUP_READV };

typedef struct {
	int fd;				/* O_DIRECT file, unnamed (O_TMPFILE) or unlinked */
	int ring_fd;			/* io_uring for long-term pins, -1 none */
	bool readv;			/* process_vm_readv works (CONFIG_CROSS_MEMORY_ATTACH) */
	uint8_t *buf;			/* bounce buffer */
	uint32_t turn;
} stress_ksm_unmerge_gup_t;

/* pure: the pin (KSM_GUP_*) of turn with the kinds has (a bit each); one it lacks: the next's */
static int stress_ksm_unmerge_gup_kind(const unsigned int has, const uint32_t turn)
{
	static const int kinds[] = { 0, 3, 1, 0, 2, 3 };	/* in, readv, out, in, lt, readv */
	uint32_t i;

	for (i = turn; i < turn + SIZEOF_ARRAY(kinds); i++)
		if (has & STRESS_BIT_U(kinds[i % SIZEOF_ARRAY(kinds)]))
			return kinds[i % SIZEOF_ARRAY(kinds)];
	return -1;
}

/* pure: pages KSM before a pin and private after it; KSM folios in *folios */
static uint64_t stress_ksm_unmerge_gup_broken(
	const uint8_t *before, const uint8_t *after, const size_t n, uint64_t *folios)
{
	uint64_t broken = 0;
	size_t j;

	*folios = 0;
	for (j = 0; j < n; j++) {
		if (!stress_ksm_unmerge_is_ksm(before[j]) || after[j] != KSM_PAGE_PRIVATE)
			continue;
		broken++;
		*folios += (before[j] == KSM_PAGE_KSM);
	}
	return broken;
}

/*
 *  stress_ksm_unmerge_ro_kept()
 *	pure: did read-only pins keep a KSM page (e0 before them) shared?  A
 *	read-only FOLL_PIN must unshare it (gup_must_unshare()).  1: after each
 *	of n pins (what[], e[]) the same frame, a KSM page and not exclusive
 *	(excl: bit 56 trusted), while ksmd ended at most one full scan (scans:
 *	it visits a page once a scan, so it cannot have merged it back after
 *	each); 0: a pin unshared it; -1: no verdict
 */
static int stress_ksm_unmerge_ro_kept(const uint64_t e0, const uint8_t *what, const uint64_t *e,
	const size_t n, const bool excl, const int64_t scans)
{
	int verdict = (excl && n >= KSM_RO_PINS && scans >= 0 && scans <= 1) ? 1 : -1;
	size_t i;

	for (i = 0; i < n; i++) {
		if (what[i] != KSM_PAGE_KSM)
			return 0;
		if (((e[i] ^ e0) & PM_PFN_MASK) || (e[i] & PM_EXCLUSIVE))
			verdict = -1;
	}
	return verdict;
}

/* an O_DIRECT transfer moved all len bytes, else a failure (not EINTR) */
static bool stress_ksm_unmerge_gup_io_ok(
	stress_ksm_unmerge_run_t *run, const char *what, const ssize_t ret, const size_t len)
{
	if (ret == (ssize_t)len)
		return true;
	if (ret >= 0 || errno != EINTR)
		stress_ksm_unmerge_racer_fail(run,
			"O_DIRECT %s of %zu bytes returned %zd, errno=%d (%s)", what, len, ret,
			ret < 0 ? errno : 0, ret < 0 ? strerror(errno) : "short");
	return false;
}

/*
 *  stress_ksm_unmerge_gup_odirect()
 *	O_DIRECT read into merged pages: write pins, which must break KSM COW
 */
static void stress_ksm_unmerge_gup_odirect(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, stress_ksm_unmerge_gup_t *g)
{
	const size_t ps = ctx->page_size;
	const off_t slot = (off_t)(KSM_OP_PAGES * ps);
	uint8_t before[KSM_OP_PAGES], after[KSM_OP_PAGES];
	size_t first, j, n = stress_ksm_unmerge_random_range(ctx, KSM_OP_PAGES, &first);
	uint64_t folios, broken, pm[KSM_OP_PAGES];
	int64_t cow0, cow1;

	for (j = 0; j < n; j++)
		stress_ksm_unmerge_page_fill(ctx, first + j, g->buf + j * ps);
	if (!stress_ksm_unmerge_gup_io_ok(run, "write of the pattern",
			pwrite(g->fd, g->buf, n * ps, slot), n * ps))
		return;
	/* cow_ksm first: a break by the unmerge after the snapshot is in the delta */
	cow0 = stress_ksm_unmerge_field("/proc/vmstat", "cow_ksm");
	n = stress_ksm_unmerge_present(ctx, first, n, before, pm);
	if (!n)
		return;
	stress_ksm_unmerge_met(run);
	if (!stress_ksm_unmerge_gup_io_ok(run, "read into the region",
			pread(g->fd, ctx->region + first * ps, n * ps, slot), n * ps))
		return;
	cow1 = stress_ksm_unmerge_field("/proc/vmstat", "cow_ksm");
	(void)stress_ksm_unmerge_pages_state(ctx, ctx->region + first * ps, n,
		stress_ksm_unmerge_page_kind(ctx->pattern, first), after);
	broken = stress_ksm_unmerge_gup_broken(before, after, n, &folios);
	run->rs->detail[KSM_D_GUP_ODIRECT]++;
	run->rs->ops++;
	run->rs->evidence += broken;
	run->rs->detail[KSM_D_GUP_ODIRECT_KSM] += broken;
	/* a page another racer discarded refaults private without a COW */
	if (cow0 >= 0 && cow1 >= 0 && (uint64_t)(cow1 - cow0) < folios &&
		!stress_ksm_unmerge_others_run(ctx, run->r, KSM_RF_LAYOUT))
		stress_ksm_unmerge_racer_fail(run,
			"O_DIRECT read broke %" PRIu64 " KSM pages (%zu..%zu) but cow_ksm "
			"grew by only %" PRId64,
			folios, first, first + n - 1, cow1 - cow0);
	(void)stress_ksm_unmerge_copy_check(run, first, ctx->region + first * ps, n * ps,
		"region after an O_DIRECT read into it:");
}

/* a read-only pin of n pages from first: O_DIRECT write from them or process_vm_readv */
static bool stress_ksm_unmerge_gup_ro_pin(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_run_t *run, stress_ksm_unmerge_gup_t *g, const int kind,
	const size_t first, const size_t n)
{
	const size_t len = n * ctx->page_size;
	uint8_t *addr = ctx->region + first * ctx->page_size;
	ssize_t ret = -1;

	if (kind == KSM_GUP_ODIRECT_OUT)
		return stress_ksm_unmerge_gup_io_ok(run, "write from the region",
			pwrite(g->fd, addr, len, 0), len);
	errno = ENOSYS;
#if defined(HAVE_PROCESS_VM_READV) && defined(HAVE_SYS_UIO_H)
	ret = process_vm_readv(getpid(), &(struct iovec){ g->buf, len }, 1,
		&(struct iovec){ addr, len }, 1, 0);
#endif
	if (ret != (ssize_t)len && (ret >= 0 || errno != EINTR))
		stress_ksm_unmerge_racer_fail(run, "process_vm_readv of pages %zu..%zu returned "
			"%zd, errno=%d (%s)", first, first + n - 1, ret, errno, strerror(errno));
	return ret == (ssize_t)len;
}

/*
 *  stress_ksm_unmerge_gup_ro()
 *	read-only pins of 1-16 merged pages: each KSM page unshared, the copy intact; one still
 *	a KSM page (merged back by ksmd?) is pinned alone until KSM_RO_PINS pins (ro_kept())
 */
static void stress_ksm_unmerge_gup_ro(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run,
	stress_ksm_unmerge_gup_t *g, const int kind)
{
	const size_t ps = ctx->page_size;
	const int64_t scans0 = stress_ksm_unmerge_field(KSM_SYSFS "/full_scans", NULL);
	uint8_t before[KSM_OP_PAGES], after[KSM_OP_PAGES], what[KSM_RO_PINS];
	uint64_t e0[KSM_OP_PAGES], e1[KSM_OP_PAGES], e[KSM_RO_PINS], folios, broken;
	size_t first, j, k, n = stress_ksm_unmerge_random_range(ctx, KSM_OP_PAGES, &first);
	int64_t scans1;

	n = stress_ksm_unmerge_present(ctx, first, n, before, e0);
	stress_ksm_unmerge_met(run);
	for (j = 0; ctx->ro_pinned && j < n; j++)	/* before the pin: uffd-wp sees it */
		ctx->ro_pinned[first + j] = (uint32_t)ctx->cycle;
	if (!n || !stress_ksm_unmerge_gup_ro_pin(ctx, run, g, kind, first, n))
		return;
	(void)stress_ksm_unmerge_pages_entries(ctx, ctx->region + first * ps, n,
		stress_ksm_unmerge_page_kind(ctx->pattern, first), after, e1);
	broken = stress_ksm_unmerge_gup_broken(before, after, n, &folios);
	run->rs->evidence += broken;
	run->rs->ops++;
	run->rs->detail[kind == KSM_GUP_READV ? KSM_D_GUP_READV : KSM_D_GUP_ODIRECT]++;
	run->rs->detail[kind == KSM_GUP_READV ? KSM_D_GUP_READV_KSM : KSM_D_GUP_ODIRECT_KSM] +=
		broken;
	if (kind == KSM_GUP_ODIRECT_OUT && !stress_ksm_unmerge_gup_io_ok(run, "read back",
			pread(g->fd, g->buf, n * ps, 0), n * ps))
		return;
	(void)stress_ksm_unmerge_copy_check(run, first, g->buf, n * ps, "copy by a read-only pin:");
	for (j = 0; j < n && (before[j] != KSM_PAGE_KSM || after[j] != KSM_PAGE_KSM); j++)
		;
	if (j == n)
		return;
	what[0] = after[j];
	e[0] = e1[j];
	for (k = 1; k < KSM_RO_PINS; k++)
		if (!stress_ksm_unmerge_gup_ro_pin(ctx, run, g, kind, first + j, 1) ||
		    stress_ksm_unmerge_pages_entries(ctx, ctx->region + (first + j) * ps, 1,
			stress_ksm_unmerge_page_kind(ctx->pattern, first + j), &what[k], &e[k]) < 0)
			return;
	scans1 = stress_ksm_unmerge_field(KSM_SYSFS "/full_scans", NULL);
	if (stress_ksm_unmerge_ro_kept(e0[j], what, e, KSM_RO_PINS, ctx->iface->excl,
			(scans0 >= 0 && scans1 >= scans0) ? scans1 - scans0 : -1) == 1)
		stress_ksm_unmerge_racer_fail(run, "a read-only pin (%s) kept KSM page %zu "
			"shared: after each of %d pins it mapped KSM pfn %#" PRIx64 ", not "
			"exclusive, while ksmd ended %" PRId64 " full scan(s): gup_must_unshare() "
			"did not unshare it",
			kind == KSM_GUP_READV ? "process_vm_readv" : "O_DIRECT write", first + j,
			KSM_RO_PINS, stress_ksm_unmerge_pm_pfn(e0[j]), scans1 - scans0);
}

#if defined(HAVE_LINUX_IO_URING_H) && defined(__NR_io_uring_setup) &&                              \
	defined(__NR_io_uring_register)
/*
 *  stress_ksm_unmerge_gup_longterm()
 *	merged pages as an io_uring fixed buffer: unshared when pinned, held a while
 */
static void stress_ksm_unmerge_gup_longterm(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, stress_ksm_unmerge_gup_t *g)
{
	uint8_t before[KSM_OP_PAGES], after[KSM_OP_PAGES];
	size_t first, j, n = stress_ksm_unmerge_random_range(ctx, KSM_OP_PAGES, &first);
	struct iovec iov = { ctx->region + first * ctx->page_size, 0 };
	uint64_t folios, pm[KSM_OP_PAGES];

	n = stress_ksm_unmerge_present(ctx, first, n, before, pm);
	iov.iov_len = n * ctx->page_size;
	stress_ksm_unmerge_met(run);
	if (!n)
		return;
	if (syscall(__NR_io_uring_register, g->ring_fd, IORING_REGISTER_BUFFERS, &iov, 1) < 0) {
		if (errno == ENOMEM || errno == EPERM || errno == EOPNOTSUPP) {
			pr_inf("%s: gup racer: long-term pins off from now on, "
			       "IORING_REGISTER_BUFFERS failed, errno=%d (%s)\n",
				ctx->args->name, errno, strerror(errno));
			g->ring_fd = -1;	/* closed with the racer's fds */
		} else if (errno != EINTR &&
			!(errno == EFAULT &&
				stress_ksm_unmerge_others_run(ctx, run->r, KSM_RF_WP))) {
			stress_ksm_unmerge_racer_fail(run,
				"IORING_REGISTER_BUFFERS of merged pages failed, errno=%d (%s)",
				errno, strerror(errno));
		}
		return;
	}
	if (stress_ksm_unmerge_pages_state(ctx, iov.iov_base, n,
		    stress_ksm_unmerge_page_kind(ctx->pattern, first), after) == 0) {
		const uint64_t broken = stress_ksm_unmerge_gup_broken(before, after, n, &folios);

		run->rs->detail[KSM_D_GUP_LONGTERM_KSM] += broken;
		run->rs->evidence += broken;
		for (j = 0; j < n && !stress_ksm_unmerge_is_ksm(after[j]); j++)
			;
		if (j < n)
			stress_ksm_unmerge_racer_fail(run,
				"page %zu is still a KSM page while an io_uring fixed buffer "
				"pins it for write",
				first + j);
	}
	stress_ksm_unmerge_hold(ctx);
	if (syscall(__NR_io_uring_register, g->ring_fd, IORING_UNREGISTER_BUFFERS, NULL, 0) < 0)
		stress_ksm_unmerge_racer_fail(run,
			"IORING_UNREGISTER_BUFFERS failed, errno=%d (%s)", errno, strerror(errno));
	(void)stress_ksm_unmerge_copy_check(
		run, first, iov.iov_base, iov.iov_len, "region after a long-term pin:");
	run->rs->detail[KSM_D_GUP_LONGTERM]++;
	run->rs->ops++;
}

/* an io_uring used only to register fixed buffers, -1 without one */
static int stress_ksm_unmerge_gup_ring(void)
{
	struct io_uring_params p;

	(void)shim_memset(&p, 0, sizeof(p));
	return (int)syscall(__NR_io_uring_setup, 1, &p);
}
#else
#define stress_ksm_unmerge_gup_longterm(ctx, run, g)	do { } while (0)
#define stress_ksm_unmerge_gup_ring()			(-1)
#endif

/* a merged phase's first op an O_DIRECT read, long-term pin or readv by cycle, then in turn */
static bool stress_ksm_unmerge_gup_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	static const uint32_t first_turns[] = { 0, 4, 1 };
	stress_ksm_unmerge_gup_t *g = (stress_ksm_unmerge_gup_t *)run->priv;
	const unsigned int has = (g->fd >= 0 ? 3U : 0U) | (g->ring_fd >= 0 ? 4U : 0U) |
		(g->readv ? 8U : 0U);	/* a bit per KSM_GUP_* */
	int kind;

	if (!stress_ksm_unmerge_active(ctx))
		return false;
	kind = stress_ksm_unmerge_gup_kind(has, (ctx->phase == KSM_PHASE_MERGED &&
		run->met != ctx->cycle) ? first_turns[ctx->cycle % 3] : g->turn++);
	if (kind == KSM_GUP_ODIRECT_IN)
		stress_ksm_unmerge_gup_odirect(ctx, run, g);
	else if (kind == KSM_GUP_LONGTERM)
		stress_ksm_unmerge_gup_longterm(ctx, run, g);
	else if (kind >= 0)
		stress_ksm_unmerge_gup_ro(ctx, run, g, kind);
	return kind >= 0;
}

/* an O_DIRECT file in the temp path, unnamed where it can be; 0 or -errno */
static int stress_ksm_unmerge_gup_file(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_gup_t *g)
{
	char path[PATH_MAX];
	int fd = -1;
#if defined(HAVE_SYS_VFS_H)
	struct statfs sfs;
#endif

	(void)stress_fs_temp_dir_args(ctx->args, path, sizeof(path));
	/* a restart after a quiet window finds the dir the first start made */
	if (access(stress_fs_temp_path_get(), W_OK) < 0 ||
		(access(path, F_OK) < 0 && stress_fs_temp_dir_make_args(ctx->args) < 0))
		return -errno;
#if defined(O_TMPFILE)
	fd = open(path, O_TMPFILE | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
#endif
	if (fd < 0) {
		(void)stress_fs_temp_filename_args(ctx->args, path, sizeof(path), stress_mwc32());
		fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
		(void)shim_unlink(path);
	}
	g->fd = fd;
	if (fd < 0)
		return -errno;
#if defined(HAVE_SYS_VFS_H)
	if (fstatfs(fd, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC)
		return -EXDEV;
#endif
	return (pwrite(fd, g->buf, ctx->page_size, 0) == (ssize_t)ctx->page_size) ?
		0 :
		-(errno ? errno : EIO);
}

/*
 *  stress_ksm_unmerge_gup_start()
 *	bounce buffer, O_DIRECT file, io_uring, process_vm_readv; each one off is said once
 */
static int stress_ksm_unmerge_gup_start(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_gup_t *g = (stress_ksm_unmerge_gup_t *)run->priv;
	const bool say = stress_instance_zero(ctx->args) && !ctx->restarts;
	int ret = -ENOMEM, rv = ENOSYS;

	g->ring_fd = stress_ksm_unmerge_keep_fd(run, stress_ksm_unmerge_gup_ring());
	g->buf = stress_ksm_unmerge_keep(run,
		stress_mmap_anon_shared(2 * KSM_OP_PAGES * ctx->page_size, PROT_READ | PROT_WRITE),
		2 * KSM_OP_PAGES * ctx->page_size);
	g->fd = -1;
	if (g->buf) {
		(void)shim_memset(g->buf, 0x5a, ctx->page_size);
		ret = stress_ksm_unmerge_gup_file(ctx, g);
#if defined(HAVE_PROCESS_VM_READV) && defined(HAVE_SYS_UIO_H)
		/* a read-only pin of our own memory (CONFIG_CROSS_MEMORY_ATTACH) */
		g->readv = process_vm_readv(getpid(), &(struct iovec){ g->buf + ctx->page_size, 1 },
			1, &(struct iovec){ ctx->templates, 1 }, 1, 0) == 1;
		rv = g->readv ? 0 : errno;
#endif
	}
	if (g->fd >= 0 && (ret < 0 || stress_ksm_unmerge_keep_fd(run, g->fd) < 0)) {
		(void)close(g->fd);
		g->fd = -1;
	}
	if (g->fd < 0 && g->ring_fd < 0 && !g->readv)
		return stress_ksm_unmerge_racer_reason(run, "no io_uring, no O_DIRECT file in %s "
			"(%s) and no process_vm_readv (%s)", stress_fs_temp_path_get(),
			ret == -EXDEV ? "tmpfs takes no pin, use --temp-path" : strerror(-ret),
			strerror(rv));
	if (say && (ret < 0 || g->ring_fd < 0 || rv))
		pr_inf("%s: gup racer: pins off:%s%s%s%s\n", ctx->args->name, ret == -EXDEV ?
			" O_DIRECT (the temp path is on tmpfs, which takes no pin: --temp-path)" :
			ret < 0 ? " O_DIRECT (no O_DIRECT file in the temp path)" : "",
			g->ring_fd < 0 ? " long-term (io_uring_setup failed)" : "",
			rv ? " process_vm_readv (CONFIG_CROSS_MEMORY_ATTACH?): " : "",
			rv ? strerror(rv) : "");
	return 0;
}
#define KSM_GUP_NOT_BUILT	NULL
#else
#define KSM_GUP_NOT_BUILT	"O_DIRECT missing"
typedef int stress_ksm_unmerge_gup_t;	/* the racer table's priv_size */
#define stress_ksm_unmerge_gup_start	NULL
#define stress_ksm_unmerge_gup_op	NULL
#endif

/* ---- uffd-wp: unshare of uffd-wp protected KSM pages ---- */
#if defined(HAVE_LINUX_USERFAULTFD_H) && defined(UFFDIO_WRITEPROTECT) &&                           \
	defined(UFFD_FEATURE_PAGEFAULT_FLAG_WP) && defined(UFFDIO_REGISTER_MODE_WP) &&             \
	defined(HAVE_POLL_H)

#if !defined(UFFD_USER_MODE_ONLY)
#define UFFD_USER_MODE_ONLY	(1)
#endif
#if !defined(UFFD_FEATURE_THREAD_ID)
#define UFFD_FEATURE_THREAD_ID	(1 << 8)
#endif

typedef struct {
	int uffd;
	bool tid;			/* faults carry the faulting thread id */
	pid_t main_tid;			/* the thread that unmerges */
	bool snap_valid;
	uint64_t *snap;			/* per page: its KSM pfn if protected at unmerge start, or 0 */
	volatile uint32_t *touched;	/* per page: the cycle it was unprotected in */
	uint64_t *pm;
} stress_ksm_unmerge_uffd_wp_t;

/* a userfaultfd with feature (thread ids where offered); -1 with the reason */
static int stress_ksm_unmerge_uffd_open(
	const uint64_t feature, char *reason, const size_t len, bool *tid)
{
	const uint64_t want[] = { feature | UFFD_FEATURE_THREAD_ID, feature };
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(want); i++) {
		struct uffdio_api api = { .api = UFFD_API, .features = want[i] };
		int fd = shim_userfaultfd(O_CLOEXEC | O_NONBLOCK);

		if (fd < 0 && errno == EPERM)
			fd = shim_userfaultfd(O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
		if (fd < 0) {
			(void)snprintf(reason, len, "userfaultfd denied or missing, errno=%d (%s)",
				errno, strerror(errno));
			return -1;
		}
		if (ioctl(fd, UFFDIO_API, &api) == 0 && (api.features & feature)) {
			*tid = !!(want[i] & UFFD_FEATURE_THREAD_ID);
			return fd;
		}
		(void)snprintf(reason, len,
			"UFFDIO_API without feature %#" PRIx64 ", errno=%d (%s)", feature, errno,
			strerror(errno));
		(void)close(fd);
	}
	return -1;
}

/* write-protect (on) or unprotect and wake n pages from first; a fail line if refused */
static void stress_ksm_unmerge_uffd_wp_range(
	stress_ksm_unmerge_run_t *run, const size_t first, const size_t n, const bool on)
{
	const stress_ksm_unmerge_uffd_wp_t *u = (const stress_ksm_unmerge_uffd_wp_t *)run->priv;
	struct uffdio_writeprotect wp = {
		.range = { (uintptr_t)(run->ctx->region + first * run->ctx->page_size),
			n * run->ctx->page_size },
		.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	if (ioctl(u->uffd, UFFDIO_WRITEPROTECT, &wp) < 0 && errno != ENOENT && errno != EAGAIN)
		stress_ksm_unmerge_racer_fail(run,
			"UFFDIO_WRITEPROTECT %s of pages %zu..%zu failed, errno=%d (%s)",
			on ? "on" : "off", first, first + n - 1, errno, strerror(errno));
}

/* resolve pending WP faults; the unmerge itself must never raise one */
static void stress_ksm_unmerge_uffd_wp_events(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int ms)
{
	stress_ksm_unmerge_uffd_wp_t *u = (stress_ksm_unmerge_uffd_wp_t *)run->priv;
	struct pollfd pfd = { u->uffd, POLLIN, 0 };
	struct uffd_msg msg;

	if (poll(&pfd, 1, ms) <= 0)
		return;
	while (read(u->uffd, &msg, sizeof(msg)) == (ssize_t)sizeof(msg)) {
		const uintptr_t a = (uintptr_t)msg.arg.pagefault.address;
		const size_t i = (size_t)((a - (uintptr_t)ctx->region) / ctx->page_size);

		if (msg.event != UFFD_EVENT_PAGEFAULT ||
			!(msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP) ||
			a < (uintptr_t)ctx->region || i >= ctx->npages) {
			stress_ksm_unmerge_racer_fail(run,
				"unexpected uffd message: event %#x, flags %#llx, address %#llx",
				(unsigned int)msg.event,
				(unsigned long long)msg.arg.pagefault.flags, (unsigned long long)a);
			continue;
		}
		if (u->tid && (pid_t)msg.arg.pagefault.feat.ptid == u->main_tid &&
			ctx->phase == KSM_PHASE_UNMERGING)
			stress_ksm_unmerge_racer_fail(run,
				"the unmerge itself raised a WP fault at page %zu (break_ksm "
				"must unshare, not write)",
				i);
		u->touched[i] = (uint32_t)ctx->cycle;
		stress_ksm_unmerge_uffd_wp_range(run, i, 1, false);
	}
}

/* serve WP faults, protect a random range, while unmerging unprotect one */
static bool stress_ksm_unmerge_uffd_wp_op(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_uffd_wp_t *u = (stress_ksm_unmerge_uffd_wp_t *)run->priv;
	const bool active = stress_ksm_unmerge_active(ctx);
	const bool on = (ctx->phase != KSM_PHASE_UNMERGING) || stress_mwc1();
	size_t first, j, n;

	/* no page is protected outside the active phases but while parking (PARK wakes them) */
	stress_ksm_unmerge_uffd_wp_events(ctx, run, 0);
	if (!active)
		return false;
	n = stress_ksm_unmerge_random_range(ctx, 64, &first);
	for (j = 0; !on && j < n; j++)
		u->touched[first + j] = (uint32_t)ctx->cycle;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	stress_ksm_unmerge_uffd_wp_range(run, first, n, on);
	run->rs->ops++;
	(void)shim_nanosleep_uint64(20000);
	return true;
}

/*
 *  stress_ksm_unmerge_uffd_wp_phase()
 *	protect half when merged; what was KSM and protected must keep WP and unshare.
 *	A page is judged once, at the first read after the walk reached it (its pfn moved),
 *	or at the end.  A read before an EINTR retry cannot judge a lost bit: ksmd may have
 *	merged the copy again (the bug below) in the gap; a page the walk had not reached
 *	is judged later
 */
static void stress_ksm_unmerge_uffd_wp_phase(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_uffd_wp_t *u = (stress_ksm_unmerge_uffd_wp_t *)run->priv;
	const uint32_t cycle = (uint32_t)ctx->cycle;
	uint64_t lost = 0, kept = 0, still = 0, pinned = 0;
	size_t i, first_lost = 0;

	if (phase == KSM_PHASE_STOP)
		ctx->ro_pinned = NULL;	/* the gup racer's thread has ended */
	if (phase == KSM_PHASE_PARK) {
		stress_ksm_unmerge_uffd_wp_range(run, 0, ctx->npages, false);
		stress_ksm_unmerge_uffd_wp_events(ctx, run, 0);
		return;
	}
	if (phase == KSM_PHASE_MERGED)
		stress_ksm_unmerge_uffd_wp_range(run,
			stress_mwc32modn((uint32_t)(ctx->npages / 2 + 1)), (ctx->npages + 1) / 2,
			true);
	if ((phase != KSM_PHASE_UNMERGING && ((phase != KSM_PHASE_VERIFY &&
		phase != KSM_PHASE_RETRY) || !u->snap_valid)) || !ctx->have_pfns ||
		stress_ksm_unmerge_pagemap_read(
			ctx->pagemap_fd, ctx->region, ctx->npages, ctx->page_size, u->pm) < 0)
		return;
	for (i = 0; i < ctx->npages; i++) {
		const uint64_t pfn = stress_ksm_unmerge_pm_pfn(u->pm[i]);
		const bool wp = !!(u->pm[i] & PM_UFFD_WP);
		int what;

		if (phase != KSM_PHASE_UNMERGING && (!u->snap[i] || u->touched[i] == cycle ||
			(phase == KSM_PHASE_RETRY && pfn == u->snap[i] && wp)))
			continue;	/* not judged, or not reached yet */
		what = wp ? stress_ksm_unmerge_page_state(ctx, u->pm[i], 0,
				stress_ksm_unmerge_page_kind(ctx->pattern, i)) : KSM_PAGE_ABSENT;
		if (phase == KSM_PHASE_UNMERGING) {
			u->snap[i] = stress_ksm_unmerge_is_ksm(what) ? pfn : 0;
			run->rs->detail[KSM_D_UFFD_WP_AT_UNMERGE] += !!u->snap[i];
			continue;
		}
		if (!wp) {
			if (ctx->ro_pinned && ctx->ro_pinned[i] == cycle)
				pinned++;	/* a pin unshared it, ksmd merged the copy: below */
			else if (ctx->holes && ctx->holes[i])	/* an anonymous zap drops it */
				run->rs->detail[KSM_D_UFFD_WP_LOST_HOLE]++;
			else if (phase == KSM_PHASE_RETRY)
				run->rs->detail[KSM_D_UFFD_WP_LOST_RETRY]++;
			else
				first_lost = lost++ ? first_lost : i;
		} else {
			kept++;
			run->rs->evidence += (what == KSM_PAGE_PRIVATE);
			still += stress_ksm_unmerge_is_ksm(what);
		}
		u->snap[i] = 0;
	}
	u->snap_valid = (phase != KSM_PHASE_VERIFY);
	run->rs->detail[KSM_D_UFFD_WP_KEPT] += kept;
	run->rs->detail[KSM_D_UFFD_WP_KEPT_KSM] += still;
	if (pinned && !run->rs->detail[KSM_D_UFFD_WP_LOST_PINNED])	/* once per instance */
		pr_inf("%s: uffd-wp racer: %" PRIu64 " pages a read-only pin unshared lost the uffd-wp "
		       "bit, not judged: ksmd's merge of the copy drops it\n", ctx->args->name, pinned);
	run->rs->detail[KSM_D_UFFD_WP_LOST_PINNED] += pinned;
	if (lost)
		stress_ksm_unmerge_racer_fail(run,
			"%" PRIu64 " KSM pages lost their uffd-wp bit across the unmerge "
			"(first: page %zu, pagemap %#" PRIx64 ")",
			lost, first_lost, u->pm[first_lost]);
}

/* the region registered in WP mode (its VmFlags gain "uw": new baseline) */
static int stress_ksm_unmerge_uffd_wp_start(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_uffd_wp_t *u = (stress_ksm_unmerge_uffd_wp_t *)run->priv;
	struct uffdio_register reg = { .range = { (uintptr_t)ctx->region, ctx->region_size },
		.mode = UFFDIO_REGISTER_MODE_WP };
	uint32_t *pinned = stress_ksm_unmerge_keep(run, calloc(ctx->npages, sizeof(uint32_t)), 0);

	u->main_tid = (pid_t)shim_gettid();
	u->snap = stress_ksm_unmerge_keep(run, calloc(ctx->npages, sizeof(uint64_t)), 0);
	u->touched = stress_ksm_unmerge_keep(run, calloc(ctx->npages, sizeof(uint32_t)), 0);
	u->pm = stress_ksm_unmerge_keep(run, calloc(ctx->npages, sizeof(uint64_t)), 0);
	u->uffd = stress_ksm_unmerge_keep_fd(run,
		stress_ksm_unmerge_uffd_open(UFFD_FEATURE_PAGEFAULT_FLAG_WP, run->rs->reason,
			sizeof(run->rs->reason), &u->tid));
	if (u->uffd < 0)
		return -2;	/* not a failure: the kernel lacks it */
	if (!u->snap || !u->touched || !u->pm || ioctl(u->uffd, UFFDIO_REGISTER, &reg) < 0 ||
	    !(reg.ioctls & (1ULL << _UFFDIO_WRITEPROTECT)) || !pinned)
		return stress_ksm_unmerge_racer_reason(run,
			"memory, or UFFDIO_REGISTER MODE_WP with WRITEPROTECT, "
			"failed, errno=%d (%s)",
			errno, strerror(errno));
	if (stress_ksm_unmerge_vmflags(ctx->region, ctx->vmflags, sizeof(ctx->vmflags), true) < 0)
		ctx->vmflags[0] = '\0';
	ctx->ro_pinned = pinned;
	return 0;
}
#define KSM_UFFD_BUILT		(1)
#define KSM_UFFD_WP_NOT_BUILT	NULL
#else
#define KSM_UFFD_WP_NOT_BUILT                                                                      \
	"userfaultfd write-protect or poll() missing (HAVE_LINUX_USERFAULTFD_H, HAVE_POLL_H)"
typedef int stress_ksm_unmerge_uffd_wp_t;	/* the racer table's priv_size */
#define stress_ksm_unmerge_uffd_wp_start		NULL
#define stress_ksm_unmerge_uffd_wp_op		NULL
#define stress_ksm_unmerge_uffd_wp_phase		NULL
#endif

/* ---- mrelease: process_mrelease against exit_mmap of KSM memory ---- */

typedef struct {
	uint64_t cycle;			/* the cycle rounds are counted in */
	uint32_t rounds;
	uint64_t victims;		/* picks each victim's mode */
} stress_ksm_unmerge_mrelease_t;

/* child: unmerge its copy, COW it or keep it (mode), then wait to be killed */
static void NORETURN stress_ksm_unmerge_mrelease_victim(
	stress_ksm_unmerge_ctx_t *ctx, const pid_t parent, const int mode)
{
	size_t i;

	if (stress_ksm_unmerge_child_init(ctx, parent) < 0 ||
	    (mode != 0 && stress_ksm_unmerge_child_unshare(ctx) < 0) ||
	    (mode == 0 && shim_madvise(ctx->region, ctx->region_size, MADV_UNMERGEABLE) < 0) ||
	    (mode == 1 && mprotect(ctx->region, ctx->region_size, PROT_READ | PROT_WRITE) < 0))
		_exit(errno ? errno : 1);
	for (i = 0; mode == 1 && i < ctx->npages; i++)
		ctx->region[i * ctx->page_size] =
			*(volatile uint8_t *)(ctx->region + i * ctx->page_size);
	(void)shim_pause();	/* until the SIGKILL (or the parent's death) */
	_exit(0);
}

/*
 *  stress_ksm_unmerge_mrelease_op()
 *	fork a victim sharing KSM pages, SIGKILL and process_mrelease it, reap it
 */
static bool stress_ksm_unmerge_mrelease_op(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mrelease_t *m = (stress_ksm_unmerge_mrelease_t *)run->priv;
	const pid_t parent = getpid();
	uint64_t pm[64], ksm = 0;
	double t0, t1;
	const size_t n = STRESS_MINIMUM(ctx->npages, SIZEOF_ARRAY(pm));
	const size_t first = stress_mwc32modn((uint32_t)(ctx->npages - n + 1));
	int pidfd, pm_fd = -1, status, ret, err;
	char path[64];
	size_t j;
	pid_t pid;

	if (m->cycle != ctx->cycle) {
		m->cycle = ctx->cycle;
		m->rounds = 0;
	}
	if (!stress_ksm_unmerge_active(ctx) || m->rounds++ >= 4)
		return false;
	pid = fork();
	if (pid < 0)
		return stress_ksm_unmerge_racer_reason(
			       run, "fork failed, errno=%d (%s)", errno, strerror(errno)) < 0;
	if (pid == 0)
		stress_ksm_unmerge_mrelease_victim(ctx, parent, (int)(m->victims % 3));
	m->victims++;
	stress_ksm_unmerge_met(run);
	(void)snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	pidfd = shim_pidfd_open(pid, 0);
	if (pidfd >= 0)
		pm_fd = open(path, O_RDONLY | O_CLOEXEC);
	(void)shim_nanosleep_uint64(stress_mwc32modn(2000001));
	if (pm_fd >= 0 &&
		stress_ksm_unmerge_pagemap_read(
			pm_fd, ctx->region + first * ctx->page_size, n, ctx->page_size, pm) == 0)
		for (j = 0; j < n; j++)
			ksm += stress_ksm_unmerge_is_ksm(stress_ksm_unmerge_page_state(ctx, pm[j],
				0, stress_ksm_unmerge_page_kind(ctx->pattern, first + j)));
	t0 = stress_time_now();
	ret = (pidfd >= 0 && pm_fd >= 0) ? shim_pidfd_send_signal(pidfd, SIGKILL, NULL, 0) : -1;
	ret = (ret == 0) ? shim_process_mrelease(pidfd, 0) : (shim_kill(pid, SIGKILL), -2);
	err = errno;
	t1 = stress_time_now();
	if (shim_waitpid(pid, &status, 0) != pid ||
		(!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) &&
			!(WIFEXITED(status) && !WEXITSTATUS(status))))
		stress_ksm_unmerge_racer_fail(run,
			"victim ended with wait status %#x (exit status: the errno of its "
			"madvise or mprotect)",
			status);
	if (pm_fd >= 0)
		(void)close(pm_fd);
	if (pidfd >= 0)
		(void)close(pidfd);
	if (ret == -2) {
		stress_ksm_unmerge_racer_fail(run,
			"pidfd_open, opening its pagemap or pidfd_send_signal of the victim "
			"failed, errno=%d (%s)",
			err, strerror(err));
		return true;
	}
	run->rs->ops++;
	run->rs->evidence += (ksm > 0);
	run->rs->detail[KSM_D_MRELEASE_VICTIM_KSM] += ksm;
	if (ret == 0 || err == ESRCH) {
		/* ESRCH: the victim was past exit_mm(), its reap is the latency */
		run->rs->detail[ret == 0 ? KSM_D_MRELEASE_REAPS : KSM_D_MRELEASE_ESRCH]++;
		stress_ksm_unmerge_lat_add(&ctx->st->mrelease_lat,
			((ret == 0 ? t1 : stress_time_now()) - t0) * 1.0E3);
	} else if (!(err == EINTR && !stress_continue(ctx->args))) {
		stress_ksm_unmerge_racer_fail(run,
			"process_mrelease on a SIGKILLed victim failed (expected 0 or ESRCH), "
			"errno=%d (%s)",
			err, strerror(err));
	}
	return true;
}

/* pidfd_open (5.3) and process_mrelease (5.15) must exist */
static int stress_ksm_unmerge_mrelease_supported(char *reason, const size_t len)
{
	const int fd = shim_pidfd_open(getpid(), 0);

	if (fd >= 0)
		(void)close(fd);
	if (fd >= 0 && (shim_process_mrelease(-1, 0) == 0 || errno != ENOSYS))
		return 0;
	(void)snprintf(reason, len,
		"pidfd_open or process_mrelease not implemented, errno=%d (%s) (needs 5.15)", errno,
		strerror(errno));
	return -1;
}

/* ---- fork: COW of KSM pages in forked children ---- */

#define KSM_FORK_PAGES		(64)	/* KSM pages a child COWs at most */

/* shared between the worker and its fork child */
typedef struct {
	volatile uint32_t n;		/* KSM pages COWed and verified */
	/* 0, or the first failure (stress_ksm_unmerge_fork_fails) */
	volatile int fail, err;
	volatile uint64_t page, pfn[2];
	volatile int64_t off;
	volatile uint64_t pages[KSM_FORK_PAGES];
	/* the parent's ksm_merging_pages, ksm_rmap_items before fork() */
	volatile int64_t parent[2];
	/* the child's, first thing after fork() (read once it is reaped) */
	int64_t child[2];
	volatile int verdict[2];	/* KSM_COUNTER_* of the child's */
	volatile int64_t scanned[2];	/* pages_scanned before fork(), after the child's read */
	volatile double fork_t, read_t;	/* stress_time_now() at fork(), at the child's read */
	volatile bool ready;		/* the child's copy cannot be merged in place any more */
} stress_ksm_unmerge_fork_sh_t;

typedef struct {
	pid_t pid;
	stress_ksm_unmerge_fork_sh_t *sh;
} stress_ksm_unmerge_fork_t;

static const char * const stress_ksm_unmerge_fork_fails[] = {
	"ok", "child setup failed", "child pagemap read failed",
	"a KSM page held wrong data before the child's write",
	"the child's write to a KSM page did not get a private copy",
	"the child's write did not read back",
	"a neighbouring KSM page changed by the child's write",
};

/* pure: did the child start with its parent's KSM counters: 1 yes, 0 no, 2 cannot tell */
static int stress_ksm_unmerge_fork_counters_verdict(const stress_ksm_unmerge_fork_sh_t *sh)
{
	if (sh->read_t <= 0.0 || ((sh->verdict[0] != KSM_COUNTER_OK || sh->child[0] <= 0) &&
	    (sh->verdict[1] != KSM_COUNTER_OK || sh->child[1] <= 0)))
		return 0;
	/* ksmd makes at most one rmap item per page it scans */
	if (sh->scanned[0] < 0 || sh->scanned[1] < sh->scanned[0] ||
		sh->verdict[1] != KSM_COUNTER_OK || sh->child[1] <= sh->scanned[1] - sh->scanned[0])
		return 2;
	return 1;
}

/*
 *  stress_ksm_unmerge_fork_cow()
 *	child: COW page i if it is a KSM page, check copy and neighbours; 0 or a failure
 */
static int stress_ksm_unmerge_fork_cow(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_fork_sh_t *sh, const int pm_fd, const size_t i)
{
	uint8_t *page = ctx->region + i * ctx->page_size;
	uint64_t e0, e1, *w = (uint64_t *)(void *)page;
	uint8_t want;
	size_t k;

	sh->page = i;
	sh->off = -1;
	if (stress_ksm_unmerge_pagemap_read(pm_fd, page, 1, ctx->page_size, &e0) < 0)
		return 2;
	if (!stress_ksm_unmerge_is_ksm(stress_ksm_unmerge_page_state(
		    ctx, e0, 0, stress_ksm_unmerge_page_kind(ctx->pattern, i))))
		return 0;
	sh->off = stress_ksm_unmerge_page_check(ctx, i, page, &want);
	if (sh->off >= 0)
		return (stress_ksm_unmerge_all_zero(page, ctx->page_size) &&
			       stress_ksm_unmerge_others_run(ctx, NULL, KSM_RF_LAYOUT)) ?
			0 :
			3;
	for (k = 0; k < ctx->page_size / sizeof(*w); k++)
		w[k] = 0xf04b636f77000000ULL ^ ((uint64_t)i << 20) ^ k;
	if (stress_ksm_unmerge_pagemap_read(pm_fd, page, 1, ctx->page_size, &e1) < 0)
		return 2;
	sh->pfn[0] = e0 & PM_PFN_MASK;
	sh->pfn[1] = e1 & PM_PFN_MASK;
	if (stress_ksm_unmerge_page_state(ctx, e1, 0, KSM_KIND_UNIQUE) != KSM_PAGE_PRIVATE)
		return 4;
	for (k = 0; k < ctx->page_size / sizeof(*w); k++) {
		if (w[k] != (0xf04b636f77000000ULL ^ ((uint64_t)i << 20) ^ k)) {
			sh->off = (int64_t)(k * sizeof(*w));
			return 5;
		}
	}
	for (k = i - 1; k <= i + 1; k += 2) {
		if (k >= ctx->npages ||
			stress_ksm_unmerge_pagemap_read(pm_fd, ctx->region + k * ctx->page_size, 1,
				ctx->page_size, &e1) < 0 ||
			!stress_ksm_unmerge_is_ksm(stress_ksm_unmerge_page_state(
				ctx, e1, 0, stress_ksm_unmerge_page_kind(ctx->pattern, k))))
			continue;
		sh->off = stress_ksm_unmerge_page_check(
			ctx, k, ctx->region + k * ctx->page_size, &want);
		sh->page = k;
		if (sh->off >= 0 && !(stress_ksm_unmerge_others_run(ctx, NULL, KSM_RF_LAYOUT) &&
		    stress_ksm_unmerge_all_zero(ctx->region + k * ctx->page_size, ctx->page_size)))
			return 6;
	}
	sh->pages[sh->n++] = i;
	return 0;
}

/* child: read its KSM counters, then COW up to 64 KSM pages during the unmerge */
static void NORETURN stress_ksm_unmerge_fork_child(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_fork_sh_t *sh, const pid_t parent)
{
	char buf[1024];
	int pm_fd, tries;

	if (stress_fs_file_read(KSM_STAT, buf, sizeof(buf)) > 0) {
		sh->scanned[1] = stress_ksm_unmerge_field(KSM_SYSFS "/pages_scanned", NULL);
		sh->read_t = stress_time_now();
		sh->verdict[0] =
			stress_ksm_unmerge_counter(buf, "ksm_merging_pages", &sh->child[0]);
		sh->verdict[1] = stress_ksm_unmerge_counter(buf, "ksm_rmap_items", &sh->child[1]);
	}
	if (stress_ksm_unmerge_child_init(ctx, parent) < 0 ||
	    stress_ksm_unmerge_child_unshare(ctx) < 0 ||
	    mprotect(ctx->region, ctx->region_size, PROT_READ | PROT_WRITE) < 0 ||
	    (pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)) < 0) {
		sh->err = errno;
		sh->fail = 1;
		sh->ready = true;
		_exit(EXIT_FAILURE);
	}
	sh->ready = true;
	stress_mwc_reseed();
	for (tries = 0;
		tries < 1024 && sh->n < KSM_FORK_PAGES && stress_continue(ctx->args) && !sh->fail;
		tries++) {
		if (sh->n >= 4 &&
			(ctx->st->phase == KSM_PHASE_VERIFY || ctx->st->phase == KSM_PHASE_IDLE))
			break;
		sh->err = 0;
		sh->fail = stress_ksm_unmerge_fork_cow(
			ctx, sh, pm_fd, stress_mwc32modn((uint32_t)ctx->npages));
		if (sh->fail == 2)
			sh->err = errno;
		(void)shim_nanosleep_uint64(stress_mwc32modn(100000));
	}
	_exit(sh->fail ? EXIT_FAILURE : EXIT_SUCCESS);
}

/* reap the child (3 s at most), count its COWs, report what it recorded */
static void stress_ksm_unmerge_fork_reap(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, stress_ksm_unmerge_fork_t *f)
{
	const stress_ksm_unmerge_fork_sh_t *sh = f->sh;
	int status;
	const int ret = stress_ksm_unmerge_reap(f->pid, 3.0, &status);

	f->pid = 0;
	run->rs->ops++;
	run->rs->evidence += sh->n;
	if (stress_ksm_unmerge_fork_counters_verdict(sh) == 1)
		stress_ksm_unmerge_racer_fail(run,
			"the parent's KSM counters were copied into the child (fixed by "
			"4d6fc29f3634): its ksm_merging_pages %" PRId64 ", ksm_rmap_items %" PRId64
			" %.3f ms after fork() "
			"(parent %" PRId64 ", %" PRId64 "; %" PRId64 " pages scanned meanwhile)",
			sh->child[0], sh->child[1], (sh->read_t - sh->fork_t) * 1.0E3,
			sh->parent[0], sh->parent[1], sh->scanned[1] - sh->scanned[0]);
	if (sh->fail > 0 && (size_t)sh->fail < SIZEOF_ARRAY(stress_ksm_unmerge_fork_fails))
		stress_ksm_unmerge_racer_fail(run,
			"%s: page %" PRIu64 ", byte %" PRId64 ", pfn %#" PRIx64 " -> %#" PRIx64
			", errno=%d (%s)",
			stress_ksm_unmerge_fork_fails[sh->fail], sh->page, sh->off, sh->pfn[0],
			sh->pfn[1], sh->err, strerror(sh->err));
	else if (ret > 0 && stress_continue(ctx->args))
		stress_ksm_unmerge_racer_fail(run, "child did not exit within 3 s, killed");
	else if (ret < 0 ||
		(ret == 0 && !(WIFEXITED(status) && !WEXITSTATUS(status)) &&
			!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
				!stress_continue(ctx->args))))
		stress_ksm_unmerge_racer_fail(
			run, "waitpid on the child failed or it ended with status %#x", status);
}

/* wait (1 s at most) until the child made its copy unmergeable where it shares plain pages */
static void stress_ksm_unmerge_fork_ready(const stress_ksm_unmerge_ctx_t *ctx,
	const stress_ksm_unmerge_fork_t *f)
{
	const double deadline = stress_time_now() + 1.0;
	uint64_t ns = 20000;

	while (f->pid > 0 && !f->sh->ready && stress_continue(ctx->args) &&
	       stress_time_now() < deadline) {
		(void)shim_nanosleep_uint64(ns);
		ns = STRESS_MINIMUM(ns * 2, (uint64_t)2000000);
	}
}

/*
 *  stress_ksm_unmerge_fork_phase()
 *	fork the child when merged, reap it to verify, check the parent's pages
 */
static void stress_ksm_unmerge_fork_phase(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_fork_t *f = (stress_ksm_unmerge_fork_t *)run->priv;
	stress_ksm_unmerge_fork_sh_t *sh = f->sh;
	const pid_t parent = getpid();
	uint8_t want;
	ssize_t off;
	size_t k;

	if (phase == KSM_PHASE_STOP && f->pid > 0) {
		(void)stress_kill_pid_wait(f->pid, NULL);
		return;
	}
	if (phase == KSM_PHASE_MERGED && !f->pid) {
		(void)shim_memset((void *)sh, 0, sizeof(*sh));
		sh->parent[0] = stress_ksm_unmerge_field(KSM_STAT, "ksm_merging_pages");
		sh->parent[1] = stress_ksm_unmerge_field(KSM_STAT, "ksm_rmap_items");
		sh->scanned[0] = stress_ksm_unmerge_field(KSM_SYSFS "/pages_scanned", NULL);
		sh->fork_t = stress_time_now();
		f->pid = fork();
		if (f->pid == 0)
			stress_ksm_unmerge_fork_child(ctx, sh, parent);
		if (f->pid < 0) {
			(void)stress_ksm_unmerge_racer_reason(
				run, "fork failed, errno=%d (%s)", errno, strerror(errno));
			f->pid = 0;
		}
		stress_ksm_unmerge_fork_ready(ctx, f);
	} else if ((phase == KSM_PHASE_VERIFY || phase == KSM_PHASE_IDLE) && f->pid > 0) {
		stress_ksm_unmerge_fork_reap(ctx, run, f);
	}
	if (phase != KSM_PHASE_IDLE || ctx->quiesce != ctx->cycle)
		return;
	for (k = 0; k < STRESS_MINIMUM(sh->n, (uint32_t)KSM_FORK_PAGES); k++) {
		const size_t i = (size_t)sh->pages[k];

		off = (i < ctx->npages) ? stress_ksm_unmerge_page_check(
						  ctx, i, ctx->region + i * ctx->page_size, &want) :
					  0;
		if (off >= 0) {
			stress_ksm_unmerge_racer_fail(run,
				"parent page %zu changed by the child's COW write: byte %zd", i,
				off);
			break;
		}
	}
	sh->n = 0;
}

/* the state shared with the children */
static int stress_ksm_unmerge_fork_start(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_fork_t *f = (stress_ksm_unmerge_fork_t *)run->priv;

	(void)ctx;
	f->sh = stress_ksm_unmerge_keep(run,
		stress_mmap_anon_shared(sizeof(*f->sh), PROT_READ | PROT_WRITE), sizeof(*f->sh));
	return f->sh ?
		0 :
		stress_ksm_unmerge_racer_reason(run,
			"mmap of the shared state failed, errno=%d (%s)", errno, strerror(errno));
}

/* ---- mprotect: unmerge of PROT_NONE / read-only KSM pages ---- */

typedef struct {
	pthread_mutex_t lock;		/* the thread's toggles vs the hooks */
	bool lock_made, frozen;		/* frozen from verify to merging */
	size_t first, n;		/* the window it protects: the region's last quarter */
	uint8_t *prot;			/* per window page: 0 RW, 1 READ, 2 NONE */
	/* per window page: KSM pfn protected at unmerge start, 0 none */
	uint64_t *snap;
	uint64_t *pm;
	size_t nprot;			/* pages not RW */
	uint32_t toggles;		/* this cycle */
} stress_ksm_unmerge_mprotect_t;

/* (lock held) the window back to PROT_READ | PROT_WRITE; a fail line if refused */
static void stress_ksm_unmerge_mprotect_rw(
	stress_ksm_unmerge_run_t *run, stress_ksm_unmerge_mprotect_t *mp)
{
	if (!mp->nprot)
		return;
	if (mprotect(run->ctx->region + mp->first * run->ctx->page_size,
		    mp->n * run->ctx->page_size, PROT_READ | PROT_WRITE) < 0) {
		stress_ksm_unmerge_racer_fail(run,
			"restoring PROT_READ|PROT_WRITE failed, errno=%d (%s)", errno,
			strerror(errno));
		return;
	}
	(void)shim_memset(mp->prot, 0, mp->n);
	mp->nprot = 0;
}

/* 1-32 random window pages to a random protection, 128 times a cycle at most */
static bool stress_ksm_unmerge_mprotect_op(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	static const int prots[] = { PROT_READ | PROT_WRITE, PROT_READ, PROT_NONE };
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)run->priv;
	const size_t n = 1 + stress_mwc32modn((uint32_t)STRESS_MINIMUM(mp->n, (size_t)32));
	const size_t first = stress_mwc32modn((uint32_t)(mp->n - n + 1));
	const uint8_t p = (uint8_t)stress_mwc32modn(3);
	size_t i;

	if (mp->frozen || mp->toggles >= 128 || ctx->phase == KSM_PHASE_IDLE ||
		ctx->phase == KSM_PHASE_VERIFY)
		return false;
	(void)pthread_mutex_lock(&mp->lock);
	for (i = first; i < first + n && !mp->snap[i]; i++)
		;
	if (!mp->frozen && i == first + n) {
		if (mprotect(ctx->region + (mp->first + first) * ctx->page_size, n * ctx->page_size,
			    prots[p]) == 0) {
			for (i = first; i < first + n; i++) {
				mp->nprot += (p != 0) - (mp->prot[i] != 0);
				mp->prot[i] = p;
			}
			mp->toggles++;
			run->rs->ops++;
		} else if (errno == ENOMEM) { /* too many VMAs: start over */
			stress_ksm_unmerge_mprotect_rw(run, mp);
		} else {
			stress_ksm_unmerge_racer_fail(run,
				"mprotect of pages %zu..%zu failed, errno=%d (%s)",
				mp->first + first, mp->first + first + n - 1, errno,
				strerror(errno));
		}
	}
	(void)pthread_mutex_unlock(&mp->lock);
	(void)shim_nanosleep_uint64(50000);
	return true;
}

/*
 *  stress_ksm_unmerge_mprotect_phase()
 *	what was KSM and protected at the unmerge must be unshared by it
 */
static void stress_ksm_unmerge_mprotect_phase(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)run->priv;
	uint8_t *window = ctx->region + mp->first * ctx->page_size;
	const bool read = (phase == KSM_PHASE_UNMERGING && mp->nprot) || phase == KSM_PHASE_VERIFY;
	size_t i;

	if (phase == KSM_PHASE_STOP) {
		if (mp->lock_made)
			(void)pthread_mutex_destroy(&mp->lock);
		return;
	}
	(void)pthread_mutex_lock(&mp->lock);
	if (phase == KSM_PHASE_MERGING || phase == KSM_PHASE_VERIFY || phase == KSM_PHASE_IDLE)
		mp->frozen = (phase != KSM_PHASE_MERGING);
	if (phase == KSM_PHASE_MERGING)
		mp->toggles = 0;
	if (read &&
		stress_ksm_unmerge_pagemap_read(
			ctx->pagemap_fd, window, mp->n, ctx->page_size, mp->pm) == 0) {
		for (i = 0; i < mp->n; i++) {
			const int what = stress_ksm_unmerge_page_state(ctx, mp->pm[i], 0,
				stress_ksm_unmerge_page_kind(ctx->pattern, mp->first + i));

			if (phase == KSM_PHASE_UNMERGING) {
				mp->snap[i] = (mp->prot[i] && stress_ksm_unmerge_is_ksm(what)) ?
					mp->pm[i] & PM_PFN_MASK :
					0;
				continue;
			}
			if (!mp->snap[i])
				continue;
			run->rs->evidence += (what == KSM_PAGE_PRIVATE);
			/*
			 * a discarded page read back: pagemap cannot tell it from a KSM zero page
			 */
			if (stress_ksm_unmerge_is_ksm(what) &&
				!(what == KSM_PAGE_KZERO &&
					stress_ksm_unmerge_others_run(ctx, run->r, KSM_RF_LAYOUT)))
				stress_ksm_unmerge_racer_fail(run,
					"page %zu was a KSM page (pfn %#" PRIx64 ") under %s at "
					"the start of the unmerge and still maps a KSM page after "
					"it (pfn %#" PRIx64 "); cycle %" PRIu64,
					mp->first + i, mp->snap[i],
					mp->prot[i] == 2 ? "PROT_NONE" : "PROT_READ",
					(uint64_t)(mp->pm[i] & PM_PFN_MASK), ctx->cycle);
		}
	}
	if (phase == KSM_PHASE_VERIFY || phase == KSM_PHASE_IDLE || phase == KSM_PHASE_PARK) {
		(void)shim_memset(mp->snap, 0, mp->n * sizeof(*mp->snap));
		stress_ksm_unmerge_mprotect_rw(run, mp);
	}
	(void)pthread_mutex_unlock(&mp->lock);
}

/* the window (racers that touch pages stay below it) and its maps */
static int stress_ksm_unmerge_mprotect_start(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)run->priv;

	mp->n = STRESS_MAXIMUM(ctx->npages / 4, (size_t)1);
	mp->first = ctx->npages - mp->n;
	mp->frozen = true;
	mp->prot = stress_ksm_unmerge_keep(run, calloc(mp->n, 1), 0);
	mp->snap = stress_ksm_unmerge_keep(run, calloc(mp->n, sizeof(*mp->snap)), 0);
	mp->pm = stress_ksm_unmerge_keep(run, calloc(mp->n, sizeof(*mp->pm)), 0);
	if (!mp->prot || !mp->snap || !mp->pm)
		return stress_ksm_unmerge_racer_reason(run, "out of memory for the protection map");
	mp->lock_made = pthread_mutex_init(&mp->lock, NULL) == 0;
	ctx->touch_npages = STRESS_MAXIMUM(mp->first, (size_t)1);
	return 0;
}

/* ---- dontneed: unmerge over MADV_DONTNEED holes ---- */

typedef struct {
	uint8_t *holes;			/* per page: discarded this cycle */
	uint64_t cycle;
	uint32_t ranges;		/* ranges discarded this cycle, 64 at most */
} stress_ksm_unmerge_dontneed_t;

/* discard 1-16 random pages while merged or unmerging; count the KSM pages */
static bool stress_ksm_unmerge_dontneed_op(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_dontneed_t *d = (stress_ksm_unmerge_dontneed_t *)run->priv;
	uint8_t st[KSM_OP_PAGES];
	size_t first, j, n;

	d->ranges = (d->cycle != ctx->cycle) ? 0 : d->ranges;
	d->cycle = ctx->cycle;
	if (!stress_ksm_unmerge_active(ctx) || d->ranges >= 64)
		return false;
	n = stress_ksm_unmerge_random_range(ctx, KSM_OP_PAGES, &first);
	(void)stress_ksm_unmerge_pages_state(ctx, ctx->region + first * ctx->page_size, n,
		stress_ksm_unmerge_page_kind(ctx->pattern, first), st);
	(void)shim_memset(d->holes + first, 1, n);	/* before the discard: uffd-wp sees it */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (shim_madvise(ctx->region + first * ctx->page_size, n * ctx->page_size, MADV_DONTNEED) <
		0) {
		stress_ksm_unmerge_racer_fail(run,
			"MADV_DONTNEED of pages %zu..%zu failed, errno=%d (%s)", first,
			first + n - 1, errno, strerror(errno));
		return true;
	}
	for (j = 0; j < n; j++)
		run->rs->evidence += stress_ksm_unmerge_is_ksm(st[j]);
	d->ranges++;
	run->rs->ops++;
	return true;
}

/* every racer parked (the window is RW again): refill the holes */
static void stress_ksm_unmerge_dontneed_phase(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_dontneed_t *d = (stress_ksm_unmerge_dontneed_t *)run->priv;
	size_t i;

	if (phase == KSM_PHASE_STOP)
		ctx->holes = NULL;
	for (i = 0; i < ctx->npages && phase == KSM_PHASE_RESTORE; i++) {
		if (d->holes[i])
			stress_ksm_unmerge_page_fill(ctx, i, ctx->region + i * ctx->page_size);
		d->holes[i] = 0;
	}
}

/* the hole map */
static int stress_ksm_unmerge_dontneed_start(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_dontneed_t *d = (stress_ksm_unmerge_dontneed_t *)run->priv;

	d->holes = stress_ksm_unmerge_keep(run, calloc(ctx->npages, 1), 0);
	ctx->holes = d->holes;
	return d->holes ? 0 :
			  stress_ksm_unmerge_racer_reason(run, "out of memory for the hole map");
}

/* ---- sparse: the unmerge walk over a huge, mostly empty range ---- */

typedef struct {
	uint8_t *base;			/* NULL once unmapped */
	size_t size, stride, populated;
	bool mergeable;
	double last_ns;			/* the last walk's ns per page */
} stress_ksm_unmerge_sparse_t;

/* pure: bytes between the populated pages of a range, their count in *n */
static size_t stress_ksm_unmerge_sparse_layout(const size_t size, const size_t page_size, size_t *n)
{
	size_t stride = 64 * MB;

	if (size < 2 * stride)
		stride = (size / 2) & ~(page_size - 1);
	else if (size / stride > 1024)
		stride = ((size + 1023) / 1024 + page_size - 1) & ~(page_size - 1);
	*n = size / stride;
	return stride;
}

/* pure: secs a walk of pages is excused from the hang bound */
static double stress_ksm_unmerge_sparse_allow(
	const size_t pages, const double probe_ns, const double last_ns)
{
	const double ns = STRESS_MAXIMUM(probe_ns, last_ns);

	return 4.0 * (double)pages * (ns > 0.0 ? ns : 250.0) / 1.0E9;
}

/*
 *  stress_ksm_unmerge_sparse_phase()
 *	the range mergeable when merging; its timed unmerge, then its pages checked
 */
static void stress_ksm_unmerge_sparse_phase(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_sparse_t *s = (stress_ksm_unmerge_sparse_t *)run->priv;
	const size_t pages = s->size / ctx->page_size;
	uint64_t ksm = 0;
	double t0, spent = 0.0;
	size_t k;
	int ret, err;

	if (phase == KSM_PHASE_STOP && s->base)
		(void)munmap(s->base, s->size);
	if (!s->base || (phase != KSM_PHASE_MERGING && phase != KSM_PHASE_UNMERGING) ||
	    s->mergeable == (phase == KSM_PHASE_MERGING))
		return;
	if (phase == KSM_PHASE_MERGING) {
		s->mergeable = true;
		if (shim_madvise(s->base, s->size, MADV_MERGEABLE) < 0)
			stress_ksm_unmerge_racer_fail(run,
				"MADV_MERGEABLE of %zu bytes failed, errno=%d (%s)", s->size, errno,
				strerror(errno));
		return;
	}
	for (k = 0; k < s->populated; k++)
		ksm += stress_ksm_unmerge_ksm_count(ctx, s->base + k * s->stride, 1);
	ctx->st->hang_allow = stress_ksm_unmerge_sparse_allow(pages, 0.0, s->last_ns);
	do {
		t0 = stress_time_now();
		ret = shim_madvise(s->base, s->size, MADV_UNMERGEABLE);
		err = errno;
		spent += stress_time_now() - t0;
		ctx->st->hang_allow += spent;
	} while (ret < 0 && err == EINTR && stress_continue(ctx->args));
	ctx->st->hang_allow = spent;
	if (ret < 0 && err == EINTR) {
		pr_dbg("%s: sparse racer: the end of the run interrupted its unmerge (EINTR): not "
			"counted\n",
			ctx->args->name);
		(void)munmap(s->base, s->size);	/* a prctl unmerge must not walk it again */
		s->base = NULL;
		return;
	}
	if (ret < 0) {
		stress_ksm_unmerge_racer_fail(run,
			"MADV_UNMERGEABLE of %zu bytes failed, errno=%d (%s)", s->size, err,
			strerror(err));
		return;
	}
	s->mergeable = false;
	s->last_ns = spent * 1.0E9 / (double)pages;
	run->rs->evidence += ksm;
	run->rs->ops++;
	run->rs->detail[KSM_D_SPARSE_WALKED] += pages;
	run->rs->detail[KSM_D_SPARSE_CHECKED] += s->populated;
	run->rs->op_ns += (uint64_t)(spent * 1.0E9);
	for (k = 0; k < s->populated; k++) {
		if (stress_ksm_unmerge_same_check(ctx, s->base + k * s->stride, 1) >= 0 ||
		    stress_ksm_unmerge_ksm_count(ctx, s->base + k * s->stride, 1)) {
			stress_ksm_unmerge_racer_fail(run,
				"populated page %zu (offset %zu) lost its data or is still a "
				"KSM page after MADV_UNMERGEABLE",
				k, k * s->stride);
			break;
		}
	}
}

/*
 *  stress_ksm_unmerge_sparse_start()
 *	probe the walk, reserve the range, populate one page per stride
 */
static int stress_ksm_unmerge_sparse_start(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_sparse_t *s = (stress_ksm_unmerge_sparse_t *)run->priv;
	const size_t ps = ctx->page_size;
	const int64_t hung =
		stress_ksm_unmerge_field("/proc/sys/kernel/hung_task_timeout_secs", NULL);
	size_t want = DEFAULT_KSM_UNMERGE_SPARSE, k;
	double walk;

	/* the default splits 2 x 16G over the instances (256M each at least): a walk a cycle */
	if (!stress_setting_get("ksm-unmerge-sparse", &want))
		want = STRESS_MAXIMUM(STRESS_MINIMUM(want, 2 * want / ctx->args->instances),
			STRESS_MINIMUM(want, 256 * MB));
	s->size = want & ~(ps - 1);
	if (stress_ksm_unmerge_field("/proc/sys/vm/overcommit_memory", NULL) == 2) {
		const int64_t room = stress_ksm_unmerge_field("/proc/meminfo", "CommitLimit") -
			stress_ksm_unmerge_field("/proc/meminfo", "Committed_AS");

		s->size = STRESS_MINIMUM(s->size,
			(size_t)((uint64_t)STRESS_MAXIMUM(room, (int64_t)0) * KB / 4 /
				ctx->args->instances) &
				~(ps - 1));
	}
	for (s->size = STRESS_MAXIMUM(s->size, 2 * ps), k = 0;
		!(s->base = stress_ksm_unmerge_map(
			  s->size, MAP_NORESERVE, "ksm-unmerge-sparse", true)) &&
		errno == ENOMEM && k < 12 && s->size / 2 >= 2 * ps;
		k++)
		s->size = (s->size / 2) & ~(ps - 1);
	if (!s->base)
		return stress_ksm_unmerge_racer_reason(run,
			"cannot reserve %zu bytes of address space (mmap, "
			"MADV_DONTFORK), errno=%d (%s)",
			s->size, errno, strerror(errno));
	s->stride = stress_ksm_unmerge_sparse_layout(s->size, ps, &s->populated);
	for (k = 0; k < s->populated; k++)
		stress_ksm_unmerge_same_fill(ctx, s->base + k * s->stride, 1);
	/* at a slow kernel's pace */
	walk = stress_ksm_unmerge_sparse_allow(s->size / ps, 0.0, 0.0) / 4.0;
	if (stress_instance_zero(ctx->args) && !ctx->restarts && (s->size < want || walk >= 1.0))
		pr_inf("%s: sparse racer: %zu bytes (%zu asked), %zu populated pages; one unmerge "
		       "may take up to %.1f s%s\n",
			ctx->args->name, s->size, want, s->populated, walk,
			(hung > 0 && walk > (double)hung) ?
				", past kernel.hung_task_timeout_secs: ksmd, blocked on the mmap "
				"lock, may be reported hung" :
				"");
	return 0;
}

/* ---- thp: KSM split of THPs, unmerge racing compaction ---- */
#if defined(MADV_HUGEPAGE) && defined(HAVE_SYS_FILE_H)

#define KSM_THP_MAX		(4)		/* PMD-sized chunks at most */
/*
 * every 8th page of a chunk stays zero-filled: a THP split (KSM's, before it merges a
 * subpage) maps such a page to the shared zero page (6.12+), which KSM never charged
 */
#define KSM_THP_ZERO_EVERY	(8)

typedef struct {
	uint8_t *map, *thp;		/* mapping with alignment slack, PMD aligned region */
	size_t map_size, size, npages, pmd, chunks;
	uint64_t *pm, *flags;
	bool was_thp[KSM_THP_MAX];	/* THP-mapped before merging */
	volatile uint64_t unmerged;	/* cycle whose unmerge the thread did */
	uint64_t compacted;		/* cycle compaction ran in */
	int compact_fd;			/* compact_memory, locked exclusive while compacting */
	volatile bool compacting;	/* the compaction thread has not returned */
	pthread_t helper;		/* the compaction thread the UNMERGING hook started */
	bool hooked;			/* ... and has not joined yet */
	uint64_t thps;
	uint64_t zero;			/* zero slots of the chunk last read mapping the zero page */
} stress_ksm_unmerge_thp_t;

/* pure: a chunk is small pages (0), one PMD-sized THP (1) or mTHPs (2) */
static int stress_ksm_unmerge_thp_kind(const uint64_t *pm, const uint64_t *flags, const size_t per)
{
	size_t i;

	if (!(pm[0] & PM_PRESENT) || !(flags[0] & KPF_THP))
		return 0;
	for (i = 1; (flags[0] & KPF_HEAD) && i < per; i++)
		if (!(pm[i] & PM_PRESENT) || (pm[i] & PM_PFN_MASK) != (pm[0] & PM_PFN_MASK) + i ||
			!(flags[i] & KPF_TAIL))
			break;
	return (flags[0] & KPF_HEAD) && i == per ? 1 : 2;
}

/* pure: page k of a THP chunk is left zero-filled */
static inline bool stress_ksm_unmerge_thp_zero_slot(const size_t k)
{
	return (k % KSM_THP_ZERO_EVERY) == KSM_THP_ZERO_EVERY - 1;
}

/*
 *  stress_ksm_unmerge_thp_count()
 *	pure: KSM pages among the per pages of a chunk that hold the same page.  The zero-filled
 *	ones are left out: after a split they map the shared zero page, which the fallback
 *	signals (no trusted KPF_KSM: a non-exclusive pfn) would call a KSM page, and with
 *	use_zero_pages=1 ksmd may make them KSM zero pages; the counters judge those
 */
static int64_t stress_ksm_unmerge_thp_count(const stress_ksm_unmerge_iface_t *ifc,
	const uint64_t *pm, const uint64_t *flags, const size_t per, uint64_t *zero)
{
	int64_t ksm = 0;
	size_t i;

	*zero = 0;
	for (i = 0; i < per; i++) {
		const int what = stress_ksm_unmerge_page_what(ifc, pm[i], flags[i], 0, 0, -1);

		if (!stress_ksm_unmerge_thp_zero_slot(i))
			ksm += stress_ksm_unmerge_is_ksm(what);
		else
			*zero += (what == KSM_PAGE_HOLE);	/* the zero page, told apart */
	}
	return ksm;
}

/* KSM pages (what, per page) in chunk c of the THP region, -1 unread; t->zero: zero pages */
static int64_t stress_ksm_unmerge_thp_ksm(
	const stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_thp_t *t, const size_t c)
{
	const size_t per = t->pmd / ctx->page_size;
	size_t i;

	if (!ctx->have_pfns ||
		stress_ksm_unmerge_pagemap_read(
			ctx->pagemap_fd, t->thp + c * t->pmd, per, ctx->page_size, t->pm) < 0)
		return -1;
	for (i = 0; i < per; i++)
		t->flags[i] = stress_ksm_unmerge_kpf(
			ctx->kpageflags_fd, stress_ksm_unmerge_pm_pfn(t->pm[i]));
	return stress_ksm_unmerge_thp_count(ctx->iface, t->pm, t->flags, per, &t->zero);
}

/*
 * page k's template: the slots that are not zero take turns over the first templates, so each
 * KSM page is mapped all over the region and an unmerge keeps meeting every one of them: a KSM
 * page compaction migrates while the region unmerges is met in its migration entries
 */
static inline const uint8_t *stress_ksm_unmerge_thp_template(
	const stress_ksm_unmerge_ctx_t *ctx, const size_t k)
{
	return ctx->templates + (k % KSM_THP_ZERO_EVERY) * ctx->page_size;
}

/* fill n pages at chunk start p (per pages a chunk): templates, zero slots written 0 */
static void stress_ksm_unmerge_thp_fill(
	const stress_ksm_unmerge_ctx_t *ctx, uint8_t *p, const size_t n, const size_t per)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (stress_ksm_unmerge_thp_zero_slot(k % per))
			(void)shim_memset(p + k * ctx->page_size, 0, ctx->page_size);
		else
			(void)shim_memcpy(p + k * ctx->page_size,
				stress_ksm_unmerge_thp_template(ctx, k), ctx->page_size);
}

/* first of n pages at chunk start p (per pages a chunk) not holding its fill, -1 if all do */
static ssize_t stress_ksm_unmerge_thp_check(
	const stress_ksm_unmerge_ctx_t *ctx, const uint8_t *p, const size_t n, const size_t per)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (stress_ksm_unmerge_thp_zero_slot(k % per) ?
		    !stress_ksm_unmerge_all_zero(p + k * ctx->page_size, ctx->page_size) :
		    !!shim_memcmp(p + k * ctx->page_size, stress_ksm_unmerge_thp_template(ctx, k),
			    ctx->page_size))
			return (ssize_t)k;
	return -1;
}

/* before parking: the THP region unmerged, intact and free of KSM pages */
static void stress_ksm_unmerge_thp_park(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, stress_ksm_unmerge_thp_t *t)
{
	const size_t per = t->pmd / ctx->page_size;
	const ssize_t bad = stress_ksm_unmerge_thp_check(ctx, t->thp, t->npages, per);
	size_t c;

	if (t->unmerged != ctx->cycle &&
	    stress_ksm_unmerge_unmerge_retried(ctx, t->thp, t->size) < 0 &&
		stress_continue(ctx->args))
		stress_ksm_unmerge_racer_fail(run,
			"MADV_UNMERGEABLE on the THP region failed, errno=%d (%s)", errno,
			strerror(errno));
	t->unmerged = ctx->cycle;
	if (!stress_continue(ctx->args))
		/* an interrupted prctl unmerge made every VMA mergeable again: no verdict */
		return;
	if (bad >= 0)
		stress_ksm_unmerge_racer_fail(run, "THP region page %zd lost its data after "
			"unmerge (expected %s)", bad,
			stress_ksm_unmerge_thp_zero_slot((size_t)bad % per) ? "zeros" :
			"its template");
	for (c = 0; c < t->chunks && bad < 0; c++)
		if (stress_ksm_unmerge_thp_ksm(ctx, t, c) > 0) {
			stress_ksm_unmerge_racer_fail(
				run, "THP region chunk %zu still has KSM pages after unmerge", c);
			break;
		}
}

/* compaction thread: one write to compact_memory (it returns when every zone is compacted) */
static void *stress_ksm_unmerge_thp_compact(void *arg)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)arg;

	if (write(t->compact_fd, "1", 1) != 1)
		pr_dbg("ksm-unmerge: thp racer: compact_memory write failed, errno=%d (%s)\n",
			errno, strerror(errno));
	t->compacting = false;
	return NULL;
}

/* with compact_memory locked exclusive: start the compaction thread, true if it runs */
static bool stress_ksm_unmerge_thp_compaction(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_run_t *run, stress_ksm_unmerge_thp_t *t, pthread_t *helper)
{
	t->compacting = true;
	if (pthread_create(helper, NULL, stress_ksm_unmerge_thp_compact, t) != 0) {
		pr_dbg("%s: thp racer: pthread_create failed, errno=%d (%s): no compaction\n",
			ctx->args->name, errno, strerror(errno));
		t->compacting = false;
		(void)flock(t->compact_fd, LOCK_UN);
		return false;
	}
	t->compacted = ctx->cycle;
	run->rs->detail[KSM_D_THP_COMPACTIONS]++;
	return true;
}

/*
 *  stress_ksm_unmerge_thp_unmerge()
 *	the region in pieces, visited with a stride of 7 (coprime with their count: chunks <=
 *	KSM_THP_MAX < 7 times a power of two), 1 ms apart while compaction runs: the unmerge keeps
 *	coming back to every KSM page, so one that compaction migrates meets an unshare in one of
 *	its migration entries (break_ksm() must retry after it)
 */
static void stress_ksm_unmerge_thp_unmerge(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, stress_ksm_unmerge_thp_t *t)
{
	const size_t pieces = t->chunks * STRESS_MINIMUM(t->pmd / ctx->page_size, (size_t)32);
	const size_t len = t->size / pieces;
	size_t i, off;

	t->unmerged = ctx->cycle;
	for (i = 0; i < pieces; i++) {
		const bool during = t->compacting;

		off = ((i * 7) % pieces) * len;
		if (stress_ksm_unmerge_unmerge_retried(ctx, t->thp + off, len) < 0 &&
		    stress_continue(ctx->args))
			stress_ksm_unmerge_racer_fail(run, "MADV_UNMERGEABLE on THP region offset "
				"%zu failed, errno=%d (%s)", off, errno, strerror(errno));
		run->rs->detail[KSM_D_THP_IN_COMPACTION] += during;
		if (t->compacting && i + 1 < pieces && stress_continue(ctx->args))
			(void)shim_nanosleep_uint64(1000000);
	}
	run->rs->ops++;
}

/*
 *  stress_ksm_unmerge_thp_hook()
 *	main thread, before the region unmerges: that unmerge holds the mmap lock as long as a
 *	compaction runs under TCG, so the racer's thread unmerged the chunks only after it. Here
 *	compaction starts and the chunks unmerge first; the compaction goes on under the region's
 *	unmerge and is joined at the next phase (before verification locks compaction out)
 */
static void stress_ksm_unmerge_thp_hook(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, stress_ksm_unmerge_thp_t *t,
	const int phase)
{
	const uint64_t before = t->unmerged;
	bool locked = false;
	int tries;

	/* the main thread's phases only: PARK comes from the racer's thread */
	if (phase != KSM_PHASE_UNMERGING && phase != KSM_PHASE_PARK && t->hooked) {
		(void)pthread_join(t->helper, NULL);
		(void)flock(t->compact_fd, LOCK_UN);
		t->hooked = false;
	}
	if (phase != KSM_PHASE_UNMERGING || t->compact_fd < 0 || t->compacted == ctx->cycle)
		return;
	t->unmerged = ctx->cycle;	/* keeps the racer's thread out meanwhile */
	/* other instances verifying hold it shared: a short try, the racer's thread polls on */
	for (tries = 0; tries < 20 && !(locked = (flock(t->compact_fd, LOCK_EX | LOCK_NB) == 0));
	     tries++)
		(void)shim_nanosleep_uint64(1000000);
	t->hooked = locked && stress_ksm_unmerge_thp_compaction(ctx, run, t, &t->helper);
	if (t->hooked)
		stress_ksm_unmerge_thp_unmerge(ctx, run, t);
	else
		t->unmerged = before;
}

/*
 *  stress_ksm_unmerge_thp_phase()
 *	fresh THPs each cycle, merged (KSM splits them), no compaction while verifying
 */
static void stress_ksm_unmerge_thp_phase(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)run->priv;
	const size_t per = t->pmd / ctx->page_size;
	const double deadline = stress_time_now() + 5.0;
	const int64_t scans = (phase == KSM_PHASE_MERGED) ?
		stress_ksm_unmerge_field(KSM_SYSFS "/full_scans", NULL) :
		0;
	size_t c;

	stress_ksm_unmerge_thp_hook(ctx, run, t, phase);
	if (phase == KSM_PHASE_PARK)
		stress_ksm_unmerge_thp_park(ctx, run, t);
	if (phase == KSM_PHASE_STOP && !t->thps && !run->rs->reason[0])
		(void)stress_ksm_unmerge_racer_reason(
			run, "no THP could be faulted (KPF_THP never set)");
	/*
	 * a fresh mapping: MADV_DONTNEED keeps the PTE table a KSM split left (no PMD THP again on
	 * 6.12)
	 */
	if (phase == KSM_PHASE_MERGING &&
		(mmap(t->thp, t->size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ||
			shim_madvise(t->thp, t->size, MADV_HUGEPAGE) < 0 ||
			shim_madvise(t->thp, t->size, MADV_DONTFORK) < 0))
		stress_ksm_unmerge_racer_fail(run,
			"mmap(MAP_FIXED) or madvise of the THP region failed, errno=%d (%s)", errno,
			strerror(errno));
	for (c = 0; c < t->chunks && phase == KSM_PHASE_MERGING; c++) {
		int kind = 0;

		stress_ksm_unmerge_thp_fill(ctx, t->thp + c * t->pmd, per, per);
		if (stress_ksm_unmerge_thp_ksm(ctx, t, c) >= 0)
			kind = stress_ksm_unmerge_thp_kind(t->pm, t->flags, per);
		t->was_thp[c] = (kind != 0);
		t->thps += t->was_thp[c];
		run->rs->detail[KSM_D_THP_PMD] += (kind == 1);
		run->rs->detail[KSM_D_THP_MTHP] += (kind == 2);
	}
	if (phase == KSM_PHASE_MERGING && shim_madvise(t->thp, t->size, MADV_MERGEABLE) < 0)
		stress_ksm_unmerge_racer_fail(run,
			"MADV_MERGEABLE on the THP region failed, errno=%d (%s)", errno,
			strerror(errno));
	for (c = 0;
		phase == KSM_PHASE_MERGED && !run->rs->evidence && c < t->chunks && !t->was_thp[c];
		c++)
		;
	/*
	 * until its first evidence: ksmd may reach the region up to two full scans after the main
	 * merge
	 */
	while (phase == KSM_PHASE_MERGED && !run->rs->evidence && c < t->chunks &&
		stress_ksm_unmerge_thp_ksm(ctx, t, c) == 0 &&
		stress_ksm_unmerge_field(KSM_SYSFS "/full_scans", NULL) < scans + 2 &&
		stress_time_now() < deadline && stress_continue(ctx->args))
		(void)shim_nanosleep_uint64(20000000);
	for (c = 0; c < t->chunks && phase == KSM_PHASE_MERGED; c++) {
		const bool split = t->was_thp[c] && stress_ksm_unmerge_thp_ksm(ctx, t, c) > 0;

		run->rs->evidence += split;
		/* the split's zero pages: uncharged on a good kernel, the unmerge leaves them */
		run->rs->detail[KSM_D_THP_ZERO] += split ? t->zero : 0;
	}
}

/*
 *  stress_ksm_unmerge_thp_op()
 *	where the UNMERGING hook got no compaction: during the region's unmerge, compact memory
 *	from a thread of its own and meanwhile unmerge the chunks
 */
static bool stress_ksm_unmerge_thp_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)run->priv;
	const uint64_t cycle = ctx->cycle;
	pthread_t helper;
	bool locked = false, started = false;

	if (ctx->phase != KSM_PHASE_UNMERGING || t->unmerged == cycle)
		return false;
	/* polled while the region unmerges: the phase hooks before it and every other instance's
	 * merge check and verification hold it shared */
	while (t->compact_fd >= 0 && t->compacted != cycle && ctx->phase == KSM_PHASE_UNMERGING &&
	       !ctx->quiesce && stress_continue(ctx->args) &&
	       !(locked = (flock(t->compact_fd, LOCK_EX | LOCK_NB) == 0)))
		(void)shim_nanosleep_uint64(1000000);
	started = locked && stress_ksm_unmerge_thp_compaction(ctx, run, t, &helper);
	stress_ksm_unmerge_thp_unmerge(ctx, run, t);
	if (started) {
		(void)pthread_join(helper, NULL);
		(void)flock(t->compact_fd, LOCK_UN);
	}
	return true;
}

/*
 *  stress_ksm_unmerge_thp_start()
 *	up to 4 PMD-aligned THP chunks; THP must not be [never]
 */
static int stress_ksm_unmerge_thp_start(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)run->priv;
	const int64_t pmd = stress_ksm_unmerge_field(
		"/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", NULL);
	char buf[128];
	size_t budget;

	t->compact_fd = -1;
	if (stress_fs_file_read("/sys/kernel/mm/transparent_hugepage/enabled", buf,
			sizeof(buf)) <= 0 || shim_strstr(buf, "[never]") ||
		pmd < 2 * (int64_t)ctx->page_size || (pmd & (pmd - 1)) || pmd > 32 * (int64_t)MB) {
		(void)stress_ksm_unmerge_racer_reason(run,
			"transparent huge pages not built in, [never], or an "
			"unusable hpage_pmd_size (%" PRId64 ")",
			pmd);
		return -2;
	}
	t->pmd = (size_t)pmd;
	/* the run's THP chunks: a quarter of its regions, at least 16 MiB (two instances' 8 MiB) */
	budget = STRESS_MAXIMUM(ctx->region_size * ctx->args->instances / 4, (size_t)(16 * MB));
	t->chunks = STRESS_MAXIMUM(STRESS_MINIMUM((size_t)(8 * MB) / t->pmd, (size_t)KSM_THP_MAX),
		(size_t)1);
	t->chunks = stress_ksm_unmerge_share(budget / t->pmd, t->chunks, ctx->args->instances,
		ctx->args->instance, (uint32_t)(run - ctx->run));
	if (!t->chunks) {
		(void)stress_ksm_unmerge_racer_reason(run, "left out at this width: the run's THP "
			"budget went to other instances");
		return KSM_LEFT_OUT;
	}
	t->size = t->chunks * t->pmd;
	t->npages = t->size / ctx->page_size;
	t->map_size = t->size + t->pmd;
	t->map = stress_ksm_unmerge_keep(run,
		mmap(NULL, t->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
		t->map_size);
	t->thp = t->map ? (uint8_t *)(((uintptr_t)t->map + t->pmd - 1) & ~((uintptr_t)t->pmd - 1)) :
			  NULL;
	t->pm = stress_ksm_unmerge_keep(run, calloc(t->pmd / ctx->page_size, sizeof(uint64_t)), 0);
	t->flags =
		stress_ksm_unmerge_keep(run, calloc(t->pmd / ctx->page_size, sizeof(uint64_t)), 0);
	if (!t->map || !t->pm || !t->flags || shim_madvise(t->thp, t->size, MADV_HUGEPAGE) < 0 ||
	    /* see stress_ksm_unmerge_map() */
	    shim_madvise(t->map, t->map_size, MADV_DONTFORK) < 0)
		return stress_ksm_unmerge_racer_reason(run,
			"mmap, MADV_HUGEPAGE or memory for %zu bytes failed, "
			"errno=%d (%s)",
			t->map_size, errno, strerror(errno));
	stress_memory_anon_name_set(t->thp, t->size, "ksm-unmerge-thp");
	/* what a park before its first merge checks */
	stress_ksm_unmerge_thp_fill(ctx, t->thp, t->npages, t->pmd / ctx->page_size);
	if (geteuid() == 0)
		t->compact_fd = stress_ksm_unmerge_keep_fd(
			run, open("/proc/sys/vm/compact_memory", O_WRONLY | O_CLOEXEC));
	return 0;
}
#define KSM_THP_NOT_BUILT	NULL
#else
#define KSM_THP_NOT_BUILT	"MADV_HUGEPAGE missing"
typedef int stress_ksm_unmerge_thp_t;	/* the racer table's priv_size */
#define stress_ksm_unmerge_thp_start		NULL
#define stress_ksm_unmerge_thp_op		NULL
#define stress_ksm_unmerge_thp_phase		NULL
#endif

/* ---- signal: signals interrupting the unmerge walk (EINTR, retried) ---- */

typedef struct {
	pthread_mutex_t lock;		/* the window vs sending */
	bool lock_made;
	volatile bool window;		/* the main thread is inside the timed unmerge */
	volatile uint32_t sent;		/* signals sent in this window, 256 at most */
	struct sigaction old;
} stress_ksm_unmerge_signal_t;

/* returning interrupts the unmerge (installed without SA_RESTART) */
static void stress_ksm_unmerge_signal_handler(int sig)
{
	(void)sig;
}

/* signal the main thread every 10-110 us while it is in the unmerge */
static bool stress_ksm_unmerge_signal_op(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_signal_t *s = (stress_ksm_unmerge_signal_t *)run->priv;

	if (ctx->phase != KSM_PHASE_UNMERGING || ctx->quiesce)
		return false;	/* its window is inside the unmerge: idle until the phase moves */
	(void)pthread_mutex_lock(&s->lock);
	if (s->window && s->sent < 256 && pthread_kill(ctx->main_thread, SIGRTMIN + 3) == 0) {
		s->sent++;
		run->rs->ops++;
	}
	(void)pthread_mutex_unlock(&s->lock);
	(void)shim_nanosleep_uint64(10000 + stress_mwc32modn(100000));
	return true;
}

/* one timed unmerge call under signals, retried on EINTR (the evidence) */
static int stress_ksm_unmerge_signal_call(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_run_t *run, const uint64_t sw, const size_t off, const size_t len)
{
	stress_ksm_unmerge_signal_t *s = (stress_ksm_unmerge_signal_t *)run->priv;
	int ret, err, tries = 0;
	size_t i;

	s->sent = 0;
	s->window = true;

	while ((ret = stress_ksm_unmerge_switch(ctx, sw, off, len, false)) < 0 &&
		(err = errno) == EINTR && stress_continue(ctx->args) && tries++ < 256) {
		run->rs->evidence++;
		for (i = 0; i < KSM_RACERS; i++)	/* uffd-wp reads the pages the walk reached */
			if ((ctx->racers & STRESS_BIT_ULL(i)) && ctx->run[i].r->phase &&
				(ctx->run[i].r->flags & KSM_RF_WP))
				ctx->run[i].r->phase(ctx, &ctx->run[i], KSM_PHASE_RETRY);
	}
	err = errno;
	(void)pthread_mutex_lock(&s->lock);
	s->window = false;
	(void)pthread_mutex_unlock(&s->lock);
	if (ret < 0 && err == EINTR && stress_continue(ctx->args))
		stress_ksm_unmerge_racer_fail(
			run, "the unmerge still returned EINTR after %d retries", tries);
	errno = err;
	return ret;
}

/* a handler without SA_RESTART (stress-ng's) */
static int stress_ksm_unmerge_signal_start(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_signal_t *s = (stress_ksm_unmerge_signal_t *)run->priv;

	if (stress_signal_handler(
		    ctx->args->name, SIGRTMIN + 3, stress_ksm_unmerge_signal_handler, &s->old) < 0)
		return stress_ksm_unmerge_racer_reason(
			run, "sigaction of signal %d failed", SIGRTMIN + 3);
	s->lock_made = pthread_mutex_init(&s->lock, NULL) == 0;
	return 0;
}

/* at the racer's end: the old handler back */
static void stress_ksm_unmerge_signal_phase(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_signal_t *s = (stress_ksm_unmerge_signal_t *)run->priv;

	if (phase != KSM_PHASE_STOP)
		return;
	(void)stress_signal_restore(ctx->args->name, SIGRTMIN + 3, &s->old);
	if (s->lock_made)
		(void)pthread_mutex_destroy(&s->lock);
}

/* ---- mremap: moves of merged ranges while merged and unmerging ---- */

#if !defined(MREMAP_MAYMOVE)
#define MREMAP_MAYMOVE		(1)
#endif
#if !defined(MREMAP_FIXED)
#define MREMAP_FIXED		(2)
#endif
#if !defined(MREMAP_DONTUNMAP)
#define MREMAP_DONTUNMAP	(4)
#endif

typedef struct {
	uint8_t *range, *scratch;	/* its mergeable range, the moves' reserved target */
	size_t npages, size;
	bool broken;			/* a move back failed: no more moves */
} stress_ksm_unmerge_mremap_t;

/* a move: its pages before and after, cow_ksm around it (-1 not judged), counts */
typedef struct {
	uint8_t st0[KSM_OP_PAGES], st1[KSM_OP_PAGES];
	uint64_t pm0[KSM_OP_PAGES], pm1[KSM_OP_PAGES];
	int64_t cow0, cow1;
	size_t n, ksm, copied, kept, at;	/* at: the first kept */
} stress_ksm_unmerge_move_t;

/* move len bytes from src to dst, src kept mapped (empty); 0 or -1 */
static int stress_ksm_unmerge_mremap_move(uint8_t *src, uint8_t *dst, const size_t len)
{
	void *p = mremap(src, len, len, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, dst);

	if (p != MAP_FAILED && p != dst)
		errno = EFAULT;
	return (p == dst) ? 0 : -1;
}

/*
 *  stress_ksm_unmerge_move_kept()
 *	pure: a move unmerges a mergeable range first (1ff829957316): a KSM page (read not
 *	exclusive: a frame reused meanwhile was private) lands in a new frame (copied) or was
 *	moved as it was (kept: same frame, still KSM).  ksmd may merge a copy back into that
 *	frame at once (the target stays VM_MERGEABLE), but each copy is an unshare, one
 *	cow_ksm event in the window: kept pages fail only above cow_ksm's growth.  Not judged:
 *	KSM zero pages (no cow_ksm); fallback states only miss KSM pages (MADV_DONTFORK).
 *	Unexplained kept pages, or 0
 */
static size_t stress_ksm_unmerge_move_kept(stress_ksm_unmerge_move_t *mv)
{
	size_t j;

	for (mv->ksm = mv->copied = mv->kept = 0, mv->at = mv->n, j = 0; j < mv->n; j++) {
		const uint64_t pfn = stress_ksm_unmerge_pm_pfn(mv->pm0[j]);
		const bool same = stress_ksm_unmerge_pm_pfn(mv->pm1[j]) == pfn;

		mv->ksm += stress_ksm_unmerge_is_ksm(mv->st0[j]);	/* a KSM zero page too */
		if (mv->st0[j] != KSM_PAGE_KSM || !pfn || (mv->pm0[j] & PM_EXCLUSIVE) ||
			!(mv->pm1[j] & PM_PRESENT))
			continue;
		mv->copied += !same;
		if (same && mv->st1[j] == KSM_PAGE_KSM && !mv->kept++)
			mv->at = j;
	}
	return (mv->cow0 < 0 || mv->cow1 < mv->cow0 ||
		(uint64_t)(mv->cow1 - mv->cow0) >= mv->kept) ? 0 : mv->kept;
}

/* move n pages src to dst (first..), move_kept() in a cow_ksm window closed here; 0 or -1 */
static int stress_ksm_unmerge_mremap_checked(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_run_t *run, stress_ksm_unmerge_move_t *mv, uint8_t *src, uint8_t *dst,
	const size_t first, const char *where, const bool lazy)
{
	mv->cow1 = -1;
	(void)stress_ksm_unmerge_pages_entries(ctx, src, mv->n, -1, mv->st0, mv->pm0);
	if (stress_ksm_unmerge_mremap_move(src, dst, mv->n * ctx->page_size) < 0)
		return -1;
	(void)stress_ksm_unmerge_pages_entries(ctx, dst, mv->n, -1, mv->st1, mv->pm1);
	(void)stress_ksm_unmerge_move_kept(mv);	/* lazy: cow_ksm again for a kept page */
	if (mv->cow0 >= 0 && (!lazy || mv->kept))	/* after the last read */
		mv->cow1 = stress_ksm_unmerge_field("/proc/vmstat", "cow_ksm");
	if (stress_ksm_unmerge_move_kept(mv))
		stress_ksm_unmerge_racer_fail(run, "page %zu of its range is still the KSM page "
			"pfn %#" PRIx64 " after mremap moved it %s: same frame, %s (kpagecount %"
			PRIu64 "), cow_ksm +%" PRId64 " for %zu such pages: not unmerged",
			first + mv->at, stress_ksm_unmerge_pm_pfn(mv->pm1[mv->at]), where,
			ctx->iface->kpf_ksm ? "KPF_KSM set" : "not exclusive",
			stress_ksm_unmerge_kpf(ctx->kpagecount_fd, mv->pm1[mv->at] & PM_PFN_MASK),
			mv->cow1 - mv->cow0, mv->kept);
	run->rs->detail[KSM_D_MREMAP_COPIED] += mv->copied;
	return 0;
}

/* move 1-16 random pages of the range out and back, data and frames checked each way */
static bool stress_ksm_unmerge_mremap_op(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mremap_t *m = (stress_ksm_unmerge_mremap_t *)run->priv;
	stress_ksm_unmerge_move_t mv;
	size_t first, off;
	unsigned long lo = 0, hi = 0;
	char vma[320];

	if (m->broken || !stress_ksm_unmerge_active(ctx))
		return false;
	mv.n = 1 + stress_mwc32modn(KSM_OP_PAGES);
	first = stress_mwc32modn((uint32_t)(m->npages - mv.n + 1));
	off = first * ctx->page_size;
	/* before met(): the merged phase ends soon after it, and the pages must be read first */
	mv.cow0 = ctx->iface->cow_ksm ? stress_ksm_unmerge_field("/proc/vmstat", "cow_ksm") : -1;
	stress_ksm_unmerge_met(run);
	if (stress_ksm_unmerge_mremap_checked(ctx, run, &mv, m->range + off, m->scratch + off,
		first, "out", false) < 0) {
		if (errno == EFAULT &&
			stress_ksm_unmerge_vmflags(m->range + off, vma, sizeof(vma), false) == 0 &&
			sscanf(vma, "%lx-%lx", &lo, &hi) == 2 &&
			hi < (uintptr_t)(m->range + off + mv.n * ctx->page_size)) {
			mv.n = (hi - (uintptr_t)(m->range + off)) / ctx->page_size;
			run->rs->detail[KSM_D_MREMAP_CUT]++;
		}
		if (!hi || stress_ksm_unmerge_mremap_checked(ctx, run, &mv, m->range + off,
			m->scratch + off, first, "out", false) < 0) {
			stress_ksm_unmerge_racer_fail(run, "moving %zu pages out failed, "
				"errno=%d (%s)", mv.n, errno, strerror(errno));
			return true;
		}
	}
	if (stress_ksm_unmerge_same_check(ctx, m->scratch + off, mv.n) >= 0)
		stress_ksm_unmerge_racer_fail(run, "pages %zu..%zu lost their data when moved "
			"(%zu KSM)", first, first + mv.n - 1, mv.ksm);
	else
		run->rs->evidence += mv.ksm;
	mv.cow0 = mv.cow1;	/* read after the move out's last read: before the move back's */
	if (stress_ksm_unmerge_mremap_checked(ctx, run, &mv, m->scratch + off, m->range + off,
		first, "back", true) < 0) {
		m->broken = true;
		stress_ksm_unmerge_racer_fail(run, "moving %zu pages back failed, errno=%d (%s)",
			mv.n, errno, strerror(errno));
	} else if (stress_ksm_unmerge_same_check(ctx, m->range + off, mv.n) >= 0) {
		stress_ksm_unmerge_racer_fail(run, "pages %zu..%zu lost their data when moved back",
			first, first + mv.n - 1);
	}
	run->rs->ops++;
	(void)shim_nanosleep_uint64(stress_mwc32modn(50000));
	return true;
}

/* the range merged, unmerged under moves, then no KSM page and data intact */
static void stress_ksm_unmerge_mremap_phase(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_mremap_t *m = (stress_ksm_unmerge_mremap_t *)run->priv;
	const bool final = (phase == KSM_PHASE_IDLE && ctx->quiesce == ctx->cycle);
	uint64_t ksm;

	if (m->broken || (phase != KSM_PHASE_MERGING && phase != KSM_PHASE_UNMERGING && !final))
		return;
	if ((phase == KSM_PHASE_MERGING ? shim_madvise(m->range, m->size, MADV_MERGEABLE) :
	    stress_ksm_unmerge_unmerge_retried(ctx, m->range, m->size)) < 0) {
		if (errno != EINTR || stress_continue(ctx->args))
			stress_ksm_unmerge_racer_fail(run, "madvise of the range failed, "
				"errno=%d (%s)", errno, strerror(errno));
		return;
	}
	ksm = final ? stress_ksm_unmerge_ksm_count(ctx, m->range, m->npages) : 0;
	if (ksm)
		stress_ksm_unmerge_racer_fail(run, "%" PRIu64 " pages of the range are still KSM "
			"pages after MADV_UNMERGEABLE with no move running", ksm);
	if (final && stress_ksm_unmerge_same_check(ctx, m->range, m->npages) >= 0)
		stress_ksm_unmerge_racer_fail(run, "the range lost data after the moves and the "
			"unmerge");
}

/* the range (merges with the region) and its target; MREMAP_DONTUNMAP proved */
static int stress_ksm_unmerge_mremap_start(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mremap_t *m = (stress_ksm_unmerge_mremap_t *)run->priv;

	m->npages = STRESS_MINIMUM(STRESS_MAXIMUM(ctx->npages / 4, (size_t)16), (size_t)1024);
	m->size = m->npages * ctx->page_size;
	m->range = stress_ksm_unmerge_keep(
		run, stress_ksm_unmerge_map(m->size, 0, "ksm-unmerge-mremap", true), m->size);
	m->scratch = stress_ksm_unmerge_keep(run, stress_ksm_unmerge_map(m->size, MAP_NORESERVE,
		"ksm-unmerge-mremap-to", true), m->size);
	if (!m->range || !m->scratch)
		return stress_ksm_unmerge_racer_reason(run, "mmap of 2 x %zu bytes failed, "
			"errno=%d (%s)", m->size, errno, strerror(errno));
	stress_ksm_unmerge_same_fill(ctx, m->range, m->npages);
	if (mprotect(m->scratch, m->size, PROT_NONE) < 0 ||
		stress_ksm_unmerge_mremap_move(m->range, m->scratch, ctx->page_size) < 0 ||
		stress_ksm_unmerge_mremap_move(m->scratch, m->range, ctx->page_size) < 0) {
		(void)stress_ksm_unmerge_racer_reason(run, "mremap(MREMAP_DONTUNMAP) failed, "
			"errno=%d (%s) (needs 5.7)", errno, strerror(errno));
		return -2;
	}
	return 0;
}

/* ---- uffd-minor: MADV_UNMERGEABLE of a uffd-minor VMA (flags above bit 31) ---- */
#if defined(KSM_UFFD_BUILT) && defined(UFFDIO_REGISTER_MODE_MINOR) &&	\
    defined(UFFD_FEATURE_MINOR_SHMEM) && defined(HAVE_MEMFD_CREATE)

#define KSM_UFFD_MINOR_PAGES		(64)		/* at most: a sixteenth of the region */

typedef struct {
	int uffd, memfd;
	/* MAP_PRIVATE of a memfd: shmem allows minor mode, KSM merges its copies */
	uint8_t *range;
	size_t size, npages;
	bool registered;
} stress_ksm_unmerge_uffd_minor_t;

/* drop the minor registration (where the broken kernel warned) */
static void stress_ksm_unmerge_uffd_minor_unregister(
	stress_ksm_unmerge_run_t *run, stress_ksm_unmerge_uffd_minor_t *m)
{
	struct uffdio_range r = { (uintptr_t)m->range, m->size };

	if (m->registered && ioctl(m->uffd, UFFDIO_UNREGISTER, &r) < 0)
		stress_ksm_unmerge_racer_fail(
			run, "UFFDIO_UNREGISTER failed, errno=%d (%s)", errno, strerror(errno));
	m->registered = false;
}

/*
 *  stress_ksm_unmerge_uffd_minor_phase()
 *	unmerge of a uffd-minor VMA keeps its VmFlags but "mg" (f04aad36a07c)
 */
static void stress_ksm_unmerge_uffd_minor_phase(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_uffd_minor_t *m = (stress_ksm_unmerge_uffd_minor_t *)run->priv;
	struct uffdio_register reg = { .range = { (uintptr_t)m->range, m->size },
		.mode = UFFDIO_REGISTER_MODE_MINOR };
	char before[256] = "", after[256] = "";
	uint64_t ksm0, ksm1;

	if (phase == KSM_PHASE_MERGING) {
		if (shim_madvise(m->range, m->size, MADV_MERGEABLE) < 0 ||
			ioctl(m->uffd, UFFDIO_REGISTER, &reg) < 0)
			stress_ksm_unmerge_racer_fail(run,
				"MADV_MERGEABLE or UFFDIO_REGISTER (minor) failed, errno=%d (%s)",
				errno, strerror(errno));
		else
			m->registered = true;
		return;
	}
	if (phase == KSM_PHASE_UNMERGING && m->registered) {
		ksm0 = stress_ksm_unmerge_ksm_count(ctx, m->range, m->npages);
		if (stress_ksm_unmerge_vmflags(m->range, before, sizeof(before), true) < 0 ||
		    !stress_ksm_unmerge_has_flag(before, "ui"))
			stress_ksm_unmerge_racer_fail(run,
				"the registered range has no \"ui\" in its VmFlags ('%s')", before);
		else if (stress_ksm_unmerge_unmerge_retried(ctx, m->range, m->size) < 0) {
			if (errno != EINTR || stress_continue(ctx->args))
				stress_ksm_unmerge_racer_fail(run, "MADV_UNMERGEABLE of the "
					"minor-registered range failed, errno=%d (%s)",
					errno, strerror(errno));
		} else if (stress_ksm_unmerge_vmflags(m->range, after, sizeof(after), true) == 0 &&
			shim_strcmp(before, after))
			stress_ksm_unmerge_racer_fail(run,
				"MADV_UNMERGEABLE changed the VMA's flags beyond \"mg\": before "
				"'%s', after '%s'%s",
				before, after,
				stress_ksm_unmerge_has_flag(after, "ui") ?
					"" :
					" (VM_UFFD_MINOR, bit 41, lost: VM_MERGEABLE cleared with "
					"a 32-bit mask, fixed by f04aad36a07c)");
		else if ((ksm1 = stress_ksm_unmerge_ksm_count(ctx, m->range, m->npages)) > 0)
			stress_ksm_unmerge_racer_fail(run,
				"%" PRIu64 " pages are still KSM pages after MADV_UNMERGEABLE",
				ksm1);
		else if (stress_ksm_unmerge_same_check(ctx, m->range, m->npages) >= 0)
			stress_ksm_unmerge_racer_fail(run, "the range lost data in the unmerge");
		else
			run->rs->evidence += ksm0;
		run->rs->ops++;
	}
	if (phase == KSM_PHASE_UNMERGING || phase == KSM_PHASE_IDLE || phase == KSM_PHASE_STOP)
		stress_ksm_unmerge_uffd_minor_unregister(run, m);
}

/* a uffd with minor faults on shmem and a private mapping of a memfd */
static int stress_ksm_unmerge_uffd_minor_start(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_uffd_minor_t *m = (stress_ksm_unmerge_uffd_minor_t *)run->priv;
	bool tid;

	m->npages = STRESS_MINIMUM(STRESS_MAXIMUM(ctx->npages / 16, (size_t)16),
		(size_t)KSM_UFFD_MINOR_PAGES);
	m->size = m->npages * ctx->page_size;
	m->memfd = stress_ksm_unmerge_keep_fd(
		run, shim_memfd_create("ksm-unmerge-minor", MFD_CLOEXEC));
	m->uffd = stress_ksm_unmerge_keep_fd(run,
		stress_ksm_unmerge_uffd_open(
			UFFD_FEATURE_MINOR_SHMEM, run->rs->reason, sizeof(run->rs->reason), &tid));
	if (m->uffd < 0)
		return -2;
	if (m->memfd < 0 || ftruncate(m->memfd, (off_t)m->size) < 0 ||
		!(m->range = stress_ksm_unmerge_keep(run,
			  mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, m->memfd, 0),
			  m->size)) ||
		shim_madvise(m->range, m->size, MADV_DONTFORK) <
			0) /* see stress_ksm_unmerge_map() */
		return stress_ksm_unmerge_racer_reason(run,
			"memfd of %zu bytes or its private mmap failed, errno=%d (%s)", m->size,
			errno, strerror(errno));
	stress_ksm_unmerge_same_fill(ctx, m->range, m->npages);
	return 0;
}
#define KSM_UFFD_MINOR_NOT_BUILT	NULL
#else
#define KSM_UFFD_MINOR_NOT_BUILT							\
	"uffd minor mode, poll() or memfd_create() missing "				\
	"(HAVE_LINUX_USERFAULTFD_H, HAVE_POLL_H, HAVE_MEMFD_CREATE)"
typedef int stress_ksm_unmerge_uffd_minor_t;	/* the racer table's priv_size */
#define stress_ksm_unmerge_uffd_minor_start		NULL
#define stress_ksm_unmerge_uffd_minor_phase		NULL
#endif

/* ---- prctl-exec: PR_SET_MEMORY_MERGE across fork and exec ---- */
#if defined(HAVE_PTRACE)

/* an exec'd child's private writable VMAs and how many are "mg"; -1 if unreadable */
static int stress_ksm_unmerge_prctl_exec_vmas(
	const pid_t pid, size_t *vmas, size_t *mg, char *first, const size_t len)
{
	char path[64], line[512], range[64] = "", word[64], perms[8];
	bool wanted = false;
	FILE *fp;

	*vmas = *mg = 0;
	first[0] = '\0';
	(void)snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	fp = fopen(path, "re");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%63s %7s", word, perms) == 2 && shim_strchr(word, '-') &&
			shim_strlen(perms) == 4) {
			wanted = perms[1] == 'w' && perms[3] == 'p' &&
				!shim_strstr(line, "[stack]");
			(void)shim_strscpy(range, word, sizeof(range));
		} else if (wanted && !shim_strncmp(line, "VmFlags:", 8)) {
			(*vmas)++;
			*mg += stress_ksm_unmerge_has_flag(line + 8, "mg");
			if (!stress_ksm_unmerge_has_flag(line + 8, "mg") && !first[0])
				(void)snprintf(first, len, "%s", range);
		}
	}
	(void)fclose(fp);
	return 0;
}

/*
 *  stress_ksm_unmerge_prctl_any_child()
 *	a merge-any child with no mergeable VMA left: after two full scans ksmd has dropped its
 *	slot, but merge-any is the process's prctl setting and must stay, a new mapping mergeable
 *	(and the mm back on ksmd's list). xu xin's fix 590c03ca6a3f made it so: ksmd clearing
 *	the flag lost it for any mm without mergeable VMAs yet, such as one mid-exec. Exit 0
 *	kept, 1 lost (all signals agree), 2 no verdict. No allocation before the mmap: a new
 *	VMA would itself be mergeable.
 */
static int stress_ksm_unmerge_prctl_any_child(const size_t ps)
{
	const int64_t scans = stress_ksm_unmerge_field(KSM_SYSFS "/full_scans", NULL);
	const double deadline = stress_time_now() + 60.0;
	char buf[1024], flags[256];
	int ret, get, any = -1;
	uint8_t *g, *p;

	/* one call over the whole address space: ENOMEM only says it has holes */
	while ((ret = shim_madvise(NULL, ~(size_t)0 & ~(ps - 1), MADV_UNMERGEABLE)) < 0 &&
	       (errno == EINTR || errno == EAGAIN))
		;
	if ((ret < 0 && errno != ENOMEM) || scans < 0)
		return 2;
	/* a lost flag shows at ksmd's first pass; a kept one needs two full scans */
	while ((get = prctl(PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL)) == 1 &&
	       stress_ksm_unmerge_field(KSM_SYSFS "/full_scans", NULL) < scans + 2)
		if (stress_time_now() > deadline || shim_nanosleep_uint64(50000000) < 0)
			return 2;	/* ksmd did not pass it: not reached */
	if (stress_fs_file_read("/proc/self/ksm_stat", buf, sizeof(buf)) > 0 &&
	    shim_strstr(buf, "ksm_merge_any"))
		any = shim_strstr(buf, "ksm_merge_any: yes") ? 1 : 0;
	/* PROT_NONE on both sides: 6.12 skips ksm_add_vma() for a mapping merged into a neighbour */
	g = mmap(NULL, 3 * ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p = (g == MAP_FAILED) ? MAP_FAILED : mmap(g + ps, ps, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (p == MAP_FAILED || get < 0 || stress_ksm_unmerge_vmflags(p, flags, sizeof(flags), false))
		return 2;
	if (get == 1 && any != 0 && stress_ksm_unmerge_has_flag(flags, "mg"))
		return 0;
	return (get == 0 && any != 1 && !stress_ksm_unmerge_has_flag(flags, "mg")) ? 1 : 2;
}

/* the merge-any child: judged once it has exited, else a new one started */
static void stress_ksm_unmerge_prctl_any(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const pid_t parent)
{
	pid_t *pid = (pid_t *)run->priv, w;
	int status = 0;

	if (*pid > 0) {
		w = shim_waitpid(*pid, &status, WNOHANG);
		if (w == 0 || (w < 0 && errno == EINTR))
			return;
		*pid = 0;
		if (w > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
			run->rs->detail[KSM_D_PRCTL_ANY_KEPT]++;
		else if (w > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 1)
			stress_ksm_unmerge_racer_fail(run,
				"a merge-any child that made all its VMAs unmergeable lost "
				"merge-any after ksmd passed it twice: PR_GET_MEMORY_MERGE 0, "
				"ksm_stat not ksm_merge_any yes, a new mapping not mergeable: ksmd "
				"cleared MMF_VM_MERGE_ANY (xu xin's \"mm/ksm: fix exec/fork "
				"inheritance support for prctl\")");
		return;
	}
	*pid = fork();
	if (*pid == 0) {
		if (stress_ksm_unmerge_child_init(ctx, parent) < 0 ||
			munmap((void *)ctx->region, ctx->region_size) < 0 ||
			prctl(PR_SET_MEMORY_MERGE, 1UL, 0UL, 0UL, 0UL) < 0)
			_exit(2);
		_exit(stress_ksm_unmerge_prctl_any_child(ctx->page_size));
	}
}

/* stop: the merge-any child killed and reaped */
static void stress_ksm_unmerge_prctl_exec_phase(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	pid_t *pid = (pid_t *)run->priv;

	(void)ctx;
	if (phase == KSM_PHASE_STOP && *pid > 0)
		(void)stress_kill_pid_wait(*pid, NULL);
	*pid = (phase == KSM_PHASE_STOP) ? 0 : *pid;
}

/*
 *  stress_ksm_unmerge_prctl_exec_op()
 *	a merge-any child execs under ptrace: its new mm must be merge-any at the exec stop
 */
static bool stress_ksm_unmerge_prctl_exec_op(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	static char *const argv[] = { "stress-ng", "--exec-exit", NULL };
	static char *const envp[] = { NULL };
	const pid_t parent = getpid();
	char path[64], exe[PATH_MAX], first[64], buf[1024];
	size_t vmas, mg;
	int status = 0, any = -1;
	pid_t pid, w = -1;

	if (!stress_ksm_unmerge_active(ctx) || !stress_proc_self_exe_get(exe, sizeof(exe)))
		return false;
	stress_ksm_unmerge_prctl_any(ctx, run, parent);
	pid = fork();
	if (pid == 0) {
		/*
		 * unmapped first: merge-any would let ksmd merge, in place, pages this copy shares
		 * with the region
		 */
		if (stress_ksm_unmerge_child_init(ctx, parent) < 0 ||
			munmap((void *)ctx->region, ctx->region_size) < 0 ||
			ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0 ||
			prctl(PR_SET_MEMORY_MERGE, 1UL, 0UL, 0UL, 0UL) < 0)
			_exit(4);
		(void)execve(exe, argv, envp);
		_exit(5);
	}
	if (pid > 0)
		w = shim_waitpid(pid, &status, 0);
	if (pid < 0 || w != pid || !WIFSTOPPED(status)) {
		if (stress_continue(ctx->args))
			stress_ksm_unmerge_racer_fail(run,
				"fork, ptrace, prctl or exec of %s failed (wait status %#x: "
				"exit 4 munmap/ptrace/prctl, 5 execve), errno=%d (%s)",
				exe, status, errno, strerror(errno));
		/* a child that exited is reaped: its pid may already be another process's */
		if (pid > 0 && w != pid)
			(void)stress_kill_pid_wait(pid, NULL);
		return true;
	}
	(void)snprintf(path, sizeof(path), "/proc/%d/ksm_stat", (int)pid);
	if (stress_fs_file_read(path, buf, sizeof(buf)) > 0 && shim_strstr(buf, "ksm_merge_any"))
		any = shim_strstr(buf, "ksm_merge_any: yes") ? 1 : 0;
	if (stress_ksm_unmerge_prctl_exec_vmas(pid, &vmas, &mg, first, sizeof(first)) == 0) {
		run->rs->ops++;
		if (any == 0 || mg < vmas)
			stress_ksm_unmerge_racer_fail(run,
				"after exec with merge-any set, ksm_stat says ksm_merge_any %s and "
				"%zu of the %zu private writable VMAs exec mapped are not "
				"mergeable (first %s): merge-any lost across exec (xu xin's "
				"\"mm/ksm: fix exec/fork inheritance support for prctl\")",
				any ? "yes" : "no", vmas - mg, vmas, first);
		else
			run->rs->evidence += (vmas > 0);
	}
	(void)stress_kill_pid_wait(pid, NULL);
	(void)shim_nanosleep_uint64(20000000);
	return true;
}

/* PR_GET_MEMORY_MERGE (6.4) */
static int stress_ksm_unmerge_prctl_exec_supported(char *reason, const size_t len)
{
	if (prctl(PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL) >= 0)
		return 0;
	(void)snprintf(reason, len, "PR_GET_MEMORY_MERGE failed, errno=%d (%s) (needs Linux 6.4)",
		errno, strerror(errno));
	return -1;
}
#define KSM_PRCTL_EXEC_NOT_BUILT	NULL
#else
#define KSM_PRCTL_EXEC_NOT_BUILT	"ptrace missing (HAVE_PTRACE)"
#define stress_ksm_unmerge_prctl_exec_supported	NULL
#define stress_ksm_unmerge_prctl_exec_op		NULL
#define stress_ksm_unmerge_prctl_exec_phase		NULL
#endif

/* ---- fork-zero: a forked child charged KSM zero pages it does not map ---- */

/* what a fork-zero child saw, shared with the worker */
typedef struct {
	/* the parent's KSM zero pages in DONTFORK/WIPEONFORK VMAs at fork() */
	volatile int64_t uncopied;
	volatile int64_t charged;	/* the child's ksm_stat ksm_zero_pages, first thing */
	/* KSM zero PTEs in all its VMAs (pagemap): at least what it holds */
	volatile int64_t mapped;
	/* those in the zero range (all written): at most what it holds */
	volatile int64_t mapped_zero;
	/* ksm_stat again after the count: ksmd moved it, no verdict */
	volatile int64_t charged2;
	volatile int err;
} stress_ksm_unmerge_fork_zero_sh_t;

typedef struct {
	/* zero-filled: unmerged during the fork, not copied, copied empty */
	uint8_t *zero, *dontfork, *wipe;
	size_t nzero, nother;
	stress_ksm_unmerge_fork_zero_sh_t *sh;
	/* fork while merging (0) or unmerging (1): cycle to, cycle did */
	volatile uint64_t go[2], done[2];
	volatile double unmerge_t[2];	/* the zero range's unmerge: start, end */
	pid_t zapper;			/* the concurrent-zap check's child, 0 none */
} stress_ksm_unmerge_fork_zero_t;

/* pure: KSM zero pages charged beyond those mapped, split by cause */
static int64_t stress_ksm_unmerge_fork_zero_judge(const int64_t charged, const int64_t mapped,
	const int64_t uncopied, int64_t *uncopied_part, int64_t *unmerging_part)
{
	const int64_t excess =
		(charged >= 0 && mapped >= 0 && charged > mapped) ? charged - mapped : 0;

	*uncopied_part = STRESS_MINIMUM(excess, STRESS_MAXIMUM(uncopied, (int64_t)0));
	*unmerging_part = excess - *uncopied_part;
	return excess;
}

/*
 * KSM zero pages in n pages at addr, read through pm_fd (kpageflags through kpf_fd); -1 unreadable
 */
static int64_t stress_ksm_unmerge_kzero_count(const stress_ksm_unmerge_iface_t *ifc,
	const int pm_fd, const int kpf_fd, const size_t ps, uintptr_t a, size_t n)
{
	uint64_t pm[256];
	int64_t count = 0;
	size_t j, k;

	for (; n; n -= k, a += k * ps) {
		k = STRESS_MINIMUM(n, SIZEOF_ARRAY(pm));
		if (stress_ksm_unmerge_pagemap_read(pm_fd, (void *)a, k, ps, pm) < 0)
			return -1;
		for (j = 0; j < k; j++) {
			const uint64_t flags = ((pm[j] & PM_PRESENT) && !ifc->zero_pfn) ?
				stress_ksm_unmerge_kpf(kpf_fd, pm[j] & PM_PFN_MASK) : 0;

			count += stress_ksm_unmerge_page_what(ifc, pm[j], flags, 0, 0,
				KSM_KIND_ZERO) == KSM_PAGE_KZERO;
		}
	}
	return count;
}

/* KSM zero pages this process maps in all its VMAs (at least what it holds); -1 unreadable */
static int64_t stress_ksm_unmerge_kzero_mapped(
	const stress_ksm_unmerge_iface_t *ifc, const int pm_fd, const int kpf_fd, const size_t ps)
{
	FILE *fp = fopen("/proc/self/maps", "re");
	char line[512];
	unsigned long lo, hi;
	int64_t n, mapped = 0;

	if (!fp || pm_fd < 0) {
		if (fp)
			(void)fclose(fp);
		return -1;
	}
	/* a VMA left unread would undercount what it maps: no count, no verdict */
	while (fgets(line, sizeof(line), fp) && mapped >= 0) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || shim_strstr(line, "[vsyscall]"))
			continue;
		n = stress_ksm_unmerge_kzero_count(ifc, pm_fd, kpf_fd, ps, lo, (hi - lo) / ps);
		mapped = (n < 0) ? -1 : mapped + n;
	}
	(void)fclose(fp);
	return mapped;
}

/* KSM zero pages in n pages at a of the worker's memory; -1 unreadable */
static int64_t stress_ksm_unmerge_fork_zero_count(
	const stress_ksm_unmerge_ctx_t *ctx, const int pm_fd, const uintptr_t a, const size_t n)
{
	return stress_ksm_unmerge_kzero_count(
		ctx->iface, pm_fd, ctx->kpageflags_fd, ctx->page_size, a, n);
}

/* child: the KSM zero pages charged to it, then those it maps */
static void NORETURN stress_ksm_unmerge_fork_zero_child(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_fork_zero_t *z, stress_ksm_unmerge_fork_zero_sh_t *sh,
	const pid_t parent)
{
	const int pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	sh->charged = stress_ksm_unmerge_field(KSM_STAT, "ksm_zero_pages");
	sh->err = (sh->charged < 0 || pm_fd < 0) ? errno : 0;
	if (stress_ksm_unmerge_child_init(ctx, parent) < 0)
		_exit(1);
	sh->mapped = stress_ksm_unmerge_kzero_mapped(
		ctx->iface, pm_fd, ctx->kpageflags_fd, ctx->page_size);
	sh->err = (sh->mapped < 0 && !sh->err) ? errno : sh->err;
	sh->mapped_zero =
		stress_ksm_unmerge_fork_zero_count(ctx, pm_fd, (uintptr_t)z->zero, z->nzero);
	sh->charged2 = stress_ksm_unmerge_field(KSM_STAT, "ksm_zero_pages");
	_exit(0);
}

/* a charge verdict: the known kernel bug (named, then the racer steps aside) or a racer failure */
static void FORMAT(printf, 2, 3)
	stress_ksm_unmerge_fork_zero_verdict(stress_ksm_unmerge_run_t *run, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!stress_ksm_unmerge_bug_hit(KSM_BUG_FORK_ZERO, "%s", buf))
		stress_ksm_unmerge_racer_fail(run, "%s", buf);
}

/*
 *  stress_ksm_unmerge_fork_zero_op()
 *	fork while ksmd merges the zero range, or while it is unmerged or written; charge against
 *	mapping
 */
static bool stress_ksm_unmerge_fork_zero_op(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_fork_zero_t *z = (stress_ksm_unmerge_fork_zero_t *)run->priv;
	stress_ksm_unmerge_fork_zero_sh_t *sh = z->sh;
	const pid_t parent = getpid();
	int64_t before, excess, uncopied, unmerging, deficit;
	double t0, t1;
	bool overlap;
	int status, w;
	pid_t pid;

	for (w = 0; w < 2 && (z->go[w] != ctx->cycle || z->done[w] == ctx->cycle); w++)
		;
	if (w == 2 || !ctx->cycle || stress_ksm_unmerge_bug_aside(KSM_BUG_FORK_ZERO))
		return false;
	z->done[w] = ctx->cycle;
	stress_ksm_unmerge_broadcast(ctx, &ctx->acked);	/* the verify hook waits for it */
	/* into the unmerge, or ksmd's pass */
	(void)shim_nanosleep_uint64(stress_mwc32modn(w ? 100000 : 20000000));
	(void)shim_memset((void *)sh, 0, sizeof(*sh));
	sh->charged = sh->mapped = -1;
	sh->uncopied = stress_ksm_unmerge_fork_zero_count(
			       ctx, ctx->pagemap_fd, (uintptr_t)z->dontfork, z->nother) +
		(z->wipe ? stress_ksm_unmerge_fork_zero_count(
				   ctx, ctx->pagemap_fd, (uintptr_t)z->wipe, z->nother) :
			   0);
	before = stress_ksm_unmerge_field(KSM_STAT, "ksm_zero_pages");
	t0 = stress_time_now();
	pid = fork();
	if (pid == 0)
		stress_ksm_unmerge_fork_zero_child(ctx, z, sh, parent);
	t1 = stress_time_now();
	if (pid < 0 || stress_ksm_unmerge_reap(pid, 3.0, &status) != 0 || !WIFEXITED(status)) {
		if (stress_continue(ctx->args))
			stress_ksm_unmerge_racer_fail(run,
				"fork failed, or the child did not end within 3 s (wait status "
				"%#x), errno=%d (%s)",
				status, errno, strerror(errno));
		return true;
	}
	overlap = w && (t0 < z->unmerge_t[1] || z->unmerge_t[1] <= 0.0) && t1 > z->unmerge_t[0];
	excess = stress_ksm_unmerge_fork_zero_judge(
		sh->charged, sh->mapped, sh->uncopied, &uncopied, &unmerging);
	deficit = (sh->charged >= 0 && sh->mapped_zero > sh->charged) ?
		sh->mapped_zero - sh->charged :
		0;
	run->rs->ops++;
	run->rs->evidence += (before > 0);
	run->rs->detail[KSM_D_FORK_ZERO_DURING] += overlap;
	if (sh->charged < 0 || sh->mapped < 0 || sh->mapped_zero < 0 ||
		sh->charged2 != sh->charged) {
		/* else ksmd merged in the child meanwhile: no verdict */
		if (sh->charged2 == sh->charged)
			stress_ksm_unmerge_racer_fail(run,
				"the child could not read its ksm_stat or pagemap, errno=%d (%s)",
				sh->err, strerror(sh->err));
		return true;
	}
	run->rs->detail[KSM_D_FORK_ZERO_UNCOPIED] += (uncopied > 0);
	run->rs->detail[KSM_D_FORK_ZERO_UNMERGING] += (unmerging > 0);
	run->rs->detail[KSM_D_FORK_ZERO_UNDER] += (deficit > 0);
	if (deficit)
		stress_ksm_unmerge_fork_zero_verdict(run,
			"%s: a child maps %" PRId64 " KSM zero pages but was charged %" PRId64
			" (parent %" PRId64
			"): ksmd merged them after dup_mm() copied the count, and its exit "
			"uncharges them",
			stress_ksm_unmerge_bugs[KSM_BUG_FORK_ZERO].verdict, sh->mapped_zero,
			sh->charged, before);
	else if (excess)
		stress_ksm_unmerge_fork_zero_verdict(run,
			"%s: a child was charged %" PRId64 " but maps %" PRId64 " (parent "
			"%" PRId64 "; excess %" PRId64 " in DONTFORK/WIPEONFORK VMAs, %" PRId64 " "
			"unmerged or written during fork()%s): dup_mm() copies a stale count, and "
			"it outlives the child",
			stress_ksm_unmerge_bugs[KSM_BUG_FORK_ZERO].verdict, sh->charged, sh->mapped,
			before, uncopied, unmerging,
			overlap ? ", which overlapped our unmerge" : "");
	return true;
}

/* fork-zero's concurrent-zap check: ksm_zero_pages against two zaps at once, in a child */

#define KSM_ZAP_HALF	(32 * MB)	/* each zap thread's half: 1-13 ms of zap under TCG */

/* one zap thread: its half, pinned to its own CPU */
typedef struct {
	uint8_t *p;
	int cpu;			/* -1: not pinned */
	int ret, err;			/* madvise()'s */
	pthread_barrier_t *bar;
	double t[2];			/* the zap's start, end */
} stress_ksm_unmerge_zap_t;

/* zap thread: MADV_DONTNEED of its half, together with the other thread */
static void *stress_ksm_unmerge_zap_half(void *arg)
{
	stress_ksm_unmerge_zap_t *h = (stress_ksm_unmerge_zap_t *)arg;
#if defined(HAVE_SCHED_SETAFFINITY)
	cpu_set_t set;

	CPU_ZERO(&set);
	if (h->cpu >= 0) {
		CPU_SET(h->cpu, &set);
		(void)sched_setaffinity(0, sizeof(set), &set);
	}
#endif
	(void)pthread_barrier_wait(h->bar);
	h->t[0] = stress_time_now();
	h->ret = shim_madvise(h->p, KSM_ZAP_HALF, MADV_DONTNEED);
	h->err = errno;
	h->t[1] = stress_time_now();
	return NULL;
}

/*
 * ksm_stat's ksm_zero_pages, the KSM zero PTEs in the halves and in all VMAs (pagemap), read
 * while the count stood still (ksmd merges meanwhile); -1 none in 10 tries
 */
static int stress_ksm_unmerge_zap_read(const stress_ksm_unmerge_ctx_t *ctx, const int pm_fd,
	const uint8_t *p, int64_t v[3])
{
	int i;

	for (i = 0; i < 10; i++) {
		v[0] = stress_ksm_unmerge_field(KSM_STAT, "ksm_zero_pages");
		v[1] = stress_ksm_unmerge_fork_zero_count(ctx, pm_fd, (uintptr_t)p,
			2 * KSM_ZAP_HALF / ctx->page_size);
		v[2] = stress_ksm_unmerge_kzero_mapped(ctx->iface, pm_fd, ctx->kpageflags_fd,
			ctx->page_size);
		if (v[0] >= 0 && v[1] >= 0 && v[2] >= 0 &&
			stress_ksm_unmerge_field(KSM_STAT, "ksm_zero_pages") == v[0])
			return 0;
	}
	return -1;
}

/*
 * pure: ksm_stat's count beyond (+) or short of (-) the KSM zero pages mapped, as it moved from
 * before[] to after[] (zap_read()'s), where the halves alone and all VMAs agree; else 0
 */
static int64_t stress_ksm_unmerge_zap_judge(const int64_t before[3], const int64_t after[3])
{
	const int64_t halves = (after[0] - after[1]) - (before[0] - before[1]);
	const int64_t all = (after[0] - after[2]) - (before[0] - before[2]);

	if (!halves || !all || (halves > 0) != (all > 0))
		return 0;
	return (halves > 0) ? STRESS_MINIMUM(halves, all) : STRESS_MAXIMUM(halves, all);
}

/*
 *  stress_ksm_unmerge_zap_round()
 *	the halves written with zeros, merged by ksmd into KSM zero pages (10 s at most), then
 *	zapped by two threads at once: ksm_stat must drop by what they unmapped; false: stop
 */
static bool stress_ksm_unmerge_zap_round(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_run_t *run, const int pm_fd, uint8_t *p, const int cpu[2])
{
	const size_t ps = ctx->page_size, n = KSM_ZAP_HALF / ps;
	const double t0 = stress_time_now();
	stress_ksm_unmerge_zap_t h[2];
	pthread_barrier_t bar;
	pthread_t tid;
	int64_t before[3], after[3], half[2] = { 0, 0 }, lost;
	char buf[512];
	size_t i;
	int ret, err;

	for (i = 0; i < 2 * n; i++)
		((volatile uint8_t *)p)[i * ps] = 0;
	while (half[0] + half[1] < (int64_t)(2 * n * 9 / 10) && stress_time_now() - t0 < 10.0) {
		(void)shim_nanosleep_uint64(20000000);
		half[0] = stress_ksm_unmerge_fork_zero_count(ctx, pm_fd, (uintptr_t)p, n);
		half[1] = stress_ksm_unmerge_fork_zero_count(ctx, pm_fd, (uintptr_t)p + n * ps, n);
	}
	ret = stress_ksm_unmerge_zap_read(ctx, pm_fd, p, before);
	for (i = 0; i < 2; i++)
		h[i] = (stress_ksm_unmerge_zap_t){ .p = p + i * n * ps, .cpu = cpu[i],
			.bar = &bar };
	err = pthread_barrier_init(&bar, NULL, 2);
	if (!err && (err = pthread_create(&tid, NULL, stress_ksm_unmerge_zap_half, &h[1])) != 0)
		(void)pthread_barrier_destroy(&bar);
	if (err) {
		pr_inf("%s: fork-zero racer: concurrent-zap check stopped: no zap thread, "
		       "errno=%d (%s)\n", ctx->args->name, err, strerror(err));
		return false;
	}
	(void)stress_ksm_unmerge_zap_half(&h[0]);
	(void)pthread_join(tid, NULL);
	(void)pthread_barrier_destroy(&bar);
	if (h[0].ret < 0 || h[1].ret < 0) {
		stress_ksm_unmerge_racer_fail(run, "MADV_DONTNEED of a zap half failed, errno=%d (%s)",
			h[h[0].ret >= 0].err, strerror(h[h[0].ret >= 0].err));
		return false;
	}
	if (ret < 0 || stress_ksm_unmerge_zap_read(ctx, pm_fd, p, after) < 0)
		return true;	/* no verdict */
	run->rs->detail[KSM_D_FORK_ZERO_ZAPS]++;
	run->rs->detail[KSM_D_FORK_ZERO_ZAPS_REACHED] += half[0] >= (int64_t)n / 4 &&
		half[1] >= (int64_t)n / 4 && STRESS_MAXIMUM(h[0].t[0], h[1].t[0]) <
		STRESS_MINIMUM(h[0].t[1], h[1].t[1]);
	lost = stress_ksm_unmerge_zap_judge(before, after);
	if (!lost)
		return true;
	(void)snprintf(buf, sizeof(buf),
		"a child that never forks reads ksm_zero_pages %" PRId64 " in ksm_stat after two "
		"threads on two CPUs zapped its %" PRId64 " + %" PRId64 " KSM zero pages at once: "
		"%+" PRId64 " against the KSM zero pages it maps (pagemap: %" PRId64 " in the zapped "
		"range, %" PRId64 " in all VMAs; before: %" PRId64 " charged, %" PRId64 ", %" PRId64
		" mapped); the kernel lost count of KSM zero pages (c2dc78b86e08)",
		after[0], half[0], half[1], lost, after[1], after[2], before[0], before[1], before[2]);
	/* its own fail line, also where the fork verdicts (the known bug) had the racer's */
	if (!run->rs->detail[KSM_D_FORK_ZERO_ZAPS_LOST]++ && run->rs->failures)
		pr_fail("%s: %s racer: %s\n", ctx->args->name, run->r->name, buf);
	stress_ksm_unmerge_racer_fail(run, "%s", buf);
	return true;
}

/* the check's child: alone with its halves (no mergeable range of the worker), round on round */
static void NORETURN stress_ksm_unmerge_zap_child(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_run_t *run, const pid_t parent, const int cpu[2])
{
	const stress_ksm_unmerge_fork_zero_t *z = (const stress_ksm_unmerge_fork_zero_t *)run->priv;
	const int pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	const size_t ps = ctx->page_size;
	uint8_t *p;

	if (stress_ksm_unmerge_child_init(ctx, parent) < 0)
		_exit(1);	/* the worker is gone */
	/* ksmd then merges no zero page of ours but in the halves (both measures see that) */
	(void)munmap(ctx->region, ctx->region_size);
	(void)munmap(z->zero, z->nzero * ps);
	if (z->wipe)
		(void)munmap(z->wipe, z->nother * ps);
	(void)prctl(PR_SET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL);
	p = stress_ksm_unmerge_map(2 * KSM_ZAP_HALF, 0, "ksm-unmerge-zap", false);
	if (pm_fd < 0 || !p || shim_madvise(p, 2 * KSM_ZAP_HALF, MADV_MERGEABLE) < 0) {
		pr_inf("%s: fork-zero racer: concurrent-zap check not run: pagemap, mmap or "
		       "madvise failed, errno=%d (%s)\n", ctx->args->name, errno, strerror(errno));
		_exit(1);
	}
	while (stress_continue(ctx->args) && stress_ksm_unmerge_zap_round(ctx, run, pm_fd, p, cpu))
		;
	_exit(0);
}

/*
 *  stress_ksm_unmerge_zap_start()
 *	instance 0 forks the check's child (it never forks: its count is exact), or says once
 *	why not (one CPU)
 */
static void stress_ksm_unmerge_zap_start(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_fork_zero_t *z = (stress_ksm_unmerge_fork_zero_t *)run->priv;
	const pid_t parent = getpid();
	int cpu[2] = { -1, -1 }, i, j = 0;
#if defined(HAVE_SCHED_SETAFFINITY)
	cpu_set_t set;

	CPU_ZERO(&set);
	(void)sched_getaffinity(0, sizeof(set), &set);
	for (i = 0; i < CPU_SETSIZE && j < 2; i++)
		if (CPU_ISSET(i, &set))
			cpu[j++] = i;
#else
	(void)i;
	j = (int)STRESS_MINIMUM(sysconf(_SC_NPROCESSORS_ONLN), 2L);
#endif
	/* use_zero_pages=0 (zero_pages_off()) only where this racer steps aside */
	if (!stress_instance_zero(ctx->args) || j < 2) {
		if (j < 2 && !ctx->restarts)
			pr_inf("%s: fork-zero racer: concurrent-zap check of ksm_zero_pages not "
			       "run: one CPU, no two zaps at once\n", ctx->args->name);
		return;
	}
	z->zapper = fork();
	if (z->zapper == 0)
		stress_ksm_unmerge_zap_child(ctx, run, parent, cpu);
	if (z->zapper < 0 && stress_continue(ctx->args))
		stress_ksm_unmerge_racer_fail(run,
			"fork of the concurrent-zap check's child failed, errno=%d (%s)", errno,
			strerror(errno));
}

/* madvise the zero ranges (the main one too if asked) */
static void stress_ksm_unmerge_fork_zero_ranges(
	stress_ksm_unmerge_run_t *run, const int advice, const bool main_range)
{
	const stress_ksm_unmerge_fork_zero_t *z = (const stress_ksm_unmerge_fork_zero_t *)run->priv;
	const size_t ps = run->ctx->page_size;

	if (((main_range && shim_madvise(z->zero, z->nzero * ps, advice) < 0) ||
		    shim_madvise(z->dontfork, z->nother * ps, advice) < 0 ||
		    (z->wipe && shim_madvise(z->wipe, z->nother * ps, advice) < 0)) &&
		stress_continue(run->ctx->args))
		stress_ksm_unmerge_racer_fail(run,
			"madvise %d of a zero range failed, errno=%d (%s)", advice, errno,
			strerror(errno));
}

/*
 * the zap child ends with the run: a signal of its own (not the stop's SIGKILL) is a failure,
 * with its own line also where the fork verdicts (the known bug) had the racer's
 */
static void stress_ksm_unmerge_zapper_reap(stress_ksm_unmerge_run_t *run,
	stress_ksm_unmerge_fork_zero_t *z)
{
	int status = 0;

	if (stress_kill_pid_wait(z->zapper, &status) == z->zapper && WIFSIGNALED(status) &&
	    WTERMSIG(status) != SIGKILL) {
		pr_fail("%s: %s racer: the concurrent-zap check's child died of signal %d (%s)\n",
			run->ctx->args->name, run->r->name, WTERMSIG(status),
			strsignal(WTERMSIG(status)));
		run->rs->failures++;
	}
	z->zapper = 0;
}

/*
 *  stress_ksm_unmerge_fork_zero_phase()
 *	zero ranges merged, the main one unmerged while the thread forks
 */
static void stress_ksm_unmerge_fork_zero_phase(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_fork_zero_t *z = (stress_ksm_unmerge_fork_zero_t *)run->priv;
	const double deadline = stress_time_now() + 3.0;
	size_t i;

	if (phase == KSM_PHASE_STOP && z->zapper > 0)
		stress_ksm_unmerge_zapper_reap(run, z);
	/* stepped aside: no more KSM zero pages merged, the last ones unmerged */
	if (stress_ksm_unmerge_bug_aside(KSM_BUG_FORK_ZERO) && phase != KSM_PHASE_VERIFY)
		return;
	if (phase == KSM_PHASE_MERGING) {
		stress_ksm_unmerge_fork_zero_ranges(run, MADV_MERGEABLE, true);
		z->go[0] = ctx->cycle;
	} else if (phase == KSM_PHASE_UNMERGING) {
		z->unmerge_t[0] = stress_time_now();
		z->unmerge_t[1] = 0.0;
		z->go[1] = ctx->cycle;
		/*
		 * odd cycles unmerge the zero range, even ones write-fault its KSM zero pages
		 * (zeros: no data change)
		 */
		if ((ctx->cycle & 1) &&
			stress_ksm_unmerge_unmerge_retried(ctx, z->zero,
				z->nzero * ctx->page_size) < 0 &&
			stress_continue(ctx->args))
			stress_ksm_unmerge_racer_fail(run,
				"MADV_UNMERGEABLE of the zero range failed, errno=%d (%s)", errno,
				strerror(errno));
		for (i = 0; !(ctx->cycle & 1) && i < z->nzero; i++)
			((volatile uint8_t *)z->zero)[i * ctx->page_size] = 0;
		z->unmerge_t[1] = stress_time_now();
	} else if (phase == KSM_PHASE_VERIFY) {
		(void)pthread_mutex_lock(&ctx->wake_lock);
		while (z->done[1] != ctx->cycle && !ctx->racers_stop &&
		       stress_continue(ctx->args) &&
		       stress_ksm_unmerge_cond_wait(ctx, &ctx->acked, deadline))
			;
		(void)pthread_mutex_unlock(&ctx->wake_lock);
		stress_ksm_unmerge_fork_zero_ranges(run, MADV_UNMERGEABLE, true);
	}
}

/*
 *  stress_ksm_unmerge_fork_zero_start()
 *	three zero-filled ranges: plain, MADV_DONTFORK and MADV_WIPEONFORK
 */
static int stress_ksm_unmerge_fork_zero_start(
	stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_fork_zero_t *z = (stress_ksm_unmerge_fork_zero_t *)run->priv;
	const size_t ps = ctx->page_size;

	if (!ctx->iface->stat_zero || (!ctx->iface->kpf_zero && !ctx->iface->zero_pfn)) {
		(void)stress_ksm_unmerge_racer_reason(run,
			"no ksm_zero_pages in ksm_stat (counted since 6.10) that the self-test "
			"confirmed, or KSM zero pages cannot be told apart: nothing to check");
		return -2;
	}
	if (stress_ksm_unmerge_bug_aside(KSM_BUG_FORK_ZERO)) {
		(void)stress_ksm_unmerge_racer_reason(run,
			"steps aside: this run confirmed the known kernel bug %s, which each of "
			"its forks would trigger again (--ksm-unmerge-method fork-zero runs it)",
			stress_ksm_unmerge_bugs[KSM_BUG_FORK_ZERO].name);
		return -2;
	}
	/* in proportion to the region: what ksmd scans for it stays bounded at any width */
	z->nzero = STRESS_MINIMUM(STRESS_MAXIMUM(ctx->npages / 8, (size_t)16), (size_t)4096);
	z->nother = STRESS_MINIMUM(STRESS_MAXIMUM(ctx->npages / 32, (size_t)8), (size_t)64);
	z->zero = stress_ksm_unmerge_keep(run,
		stress_ksm_unmerge_map(z->nzero * ps, 0, "ksm-unmerge-zero", false), z->nzero * ps);
	z->dontfork = stress_ksm_unmerge_keep(run,
		stress_ksm_unmerge_map(z->nother * ps, 0, "ksm-unmerge-zero-dontfork", true),
		z->nother * ps);
	z->sh = stress_ksm_unmerge_keep(run,
		stress_mmap_anon_shared(sizeof(*z->sh), PROT_READ | PROT_WRITE), sizeof(*z->sh));
#if defined(MADV_WIPEONFORK)
	z->wipe = stress_ksm_unmerge_keep(run,
		stress_ksm_unmerge_map(z->nother * ps, 0, "ksm-unmerge-zero-wipeonfork", false),
		z->nother * ps);
	if (z->wipe && shim_madvise(z->wipe, z->nother * ps, MADV_WIPEONFORK) < 0)
		z->wipe = NULL;		/* unmapped with the others */
#endif
	if (!z->zero || !z->dontfork || !z->sh)
		return stress_ksm_unmerge_racer_reason(run,
			"mmap or MADV_DONTFORK of the zero ranges failed, "
			"errno=%d (%s)",
			errno, strerror(errno));
	(void)shim_memset(z->zero, 0, z->nzero * ps);
	(void)shim_memset(z->dontfork, 0, z->nother * ps);
	if (z->wipe)
		(void)shim_memset(z->wipe, 0, z->nother * ps);
	stress_ksm_unmerge_zap_start(ctx, run);
	return 0;
}

/* pure: the start probe's verdict: 1 the child is charged what fork did not copy, 0 not, -1 none */
static int stress_ksm_unmerge_fork_zero_probe_judge(const int64_t parent, const int64_t charged,
	const int64_t mapped, const int64_t mapped2)
{
	if (parent < 2 || charged < 0 || mapped < 0 || mapped != mapped2)
		/* not both merged before fork(), unreadable, or ksmd moved meanwhile */
		return -1;
	return charged > mapped;
}

/* probe child: what it is charged and what it maps, then gone */
static void NORETURN stress_ksm_unmerge_fork_zero_probe_child(const stress_ksm_unmerge_iface_t *ifc,
	const int pm_fd, const int kpf_fd, const size_t ps, volatile int64_t *out)
{
	out[0] = stress_ksm_unmerge_field(KSM_STAT, "ksm_zero_pages");
	out[1] = stress_ksm_unmerge_kzero_mapped(ifc, pm_fd, kpf_fd, ps);
	out[2] = stress_ksm_unmerge_kzero_mapped(ifc, pm_fd, kpf_fd, ps);
	_exit(0);
}

/* merge both zero-filled probe pages into KSM zero pages (3 s at most); this process's count, -1 */
static int64_t stress_ksm_unmerge_fork_zero_probe_merge(const stress_ksm_unmerge_iface_t *ifc,
	const int pm_fd, const int kpf_fd, const size_t ps, uint8_t *p)
{
	const double t0 = stress_time_now();

	if (shim_madvise(p + ps, ps, MADV_DONTFORK) < 0 ||
		shim_madvise(p, 2 * ps, MADV_MERGEABLE) < 0)
		return -1;
	while (stress_time_now() - t0 < 3.0) {
		if (stress_ksm_unmerge_kzero_count(ifc, pm_fd, kpf_fd, ps, (uintptr_t)p, 2) == 2)
			return stress_ksm_unmerge_field(KSM_STAT, "ksm_zero_pages");
		(void)shim_nanosleep_uint64(5000000);
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_fork_zero_probe()
 *	the fork-zero bug's start probe: a child forked over a KSM zero page in a
 *	MADV_DONTFORK VMA must not be charged for it; 1 it is, 0 not, -1 no verdict.
 *	On a kernel with the bug it leaves one KSM zero page charged to nobody.
 */
static int stress_ksm_unmerge_fork_zero_probe(
	const stress_ksm_unmerge_iface_t *ifc, char *detail, const size_t len)
{
	const size_t ps = stress_memory_page_size_get();
	const int pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	const int kpf_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	uint8_t *p = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int64_t *map = stress_mmap_anon_shared(sizeof(int64_t) * 3, PROT_READ | PROT_WRITE);
	volatile int64_t *out = (map == MAP_FAILED) ? NULL : map;	/* the child writes it */
	int64_t parent = -1;
	int status, verdict = -1;
	pid_t pid;

	if (ifc->stat_zero && ifc->pfns && (ifc->kpf_zero || ifc->zero_pfn) && pm_fd >= 0 &&
		p != MAP_FAILED && out) {
		/* written: a zero page there later is one KSM put */
		(void)shim_memset(p, 0, 2 * ps);
		out[0] = out[1] = out[2] = -1;
		parent = stress_ksm_unmerge_fork_zero_probe_merge(ifc, pm_fd, kpf_fd, ps, p);
		pid = (parent >= 2) ? fork() : -1;
		if (pid == 0)
			stress_ksm_unmerge_fork_zero_probe_child(ifc, pm_fd, kpf_fd, ps, out);
		if (pid > 0 && stress_ksm_unmerge_reap(pid, 3.0, &status) == 0 && WIFEXITED(status))
			verdict = stress_ksm_unmerge_fork_zero_probe_judge(
				parent, out[0], out[1], out[2]);
		(void)snprintf(detail, len,
			"start probe: a child forked over 2 KSM zero pages, one of them in a "
			"MADV_DONTFORK VMA, was charged %" PRId64 " and maps %" PRId64
			" (parent charged %" PRId64 ")",
			out[0], out[1], parent);
		(void)shim_madvise(p, 2 * ps, MADV_UNMERGEABLE);
	}
	if (map != MAP_FAILED)
		(void)munmap(map, sizeof(int64_t) * 3);
	if (p != MAP_FAILED)
		(void)munmap(p, 2 * ps);
	if (pm_fd >= 0)
		(void)close(pm_fd);
	if (kpf_fd >= 0)
		(void)close(kpf_fd);
	return verdict;
}

/* ---- racer table: the racers in one list, then the known kernel bugs ---- */

/*
 *  The racer table, the only list of racers: --ksm-unmerge-method takes
 *  "all", "madvise", "prctl" or one of these (a racer runs with both
 *  merge switches); the report follows its order
 */
#define KSM_PRIV(type)	.priv_size = sizeof(type)

static const stress_ksm_unmerge_racer_t stress_ksm_unmerge_racers[KSM_RACERS] = {
	{ .name = "vmsplice", .evidence = "ksm-pages-spliced", .not_built = KSM_VMSPLICE_NOT_BUILT,
	  .desc = "GUP references from vmsplice on KSM pages, held in a pipe across the unmerge",
	  .details = { [KSM_D_VMSPLICE_HELD] = "splices-held-over-unmerge",
		[KSM_D_VMSPLICE_HELD_KSM] = "ksm-pages-held-over-unmerge",
		[KSM_D_VMSPLICE_COPIED] = "held-pages-copied" },
	  .flags = KSM_RF_WAIT | KSM_RF_PARTIAL, KSM_PRIV(stress_ksm_unmerge_vmsplice_t),
	  .start = stress_ksm_unmerge_vmsplice_start, .op = stress_ksm_unmerge_vmsplice_op },
	{ .name = "gup", .evidence = "ksm-pages-pinned", .not_built = KSM_GUP_NOT_BUILT,
	  .desc = "O_DIRECT, io_uring long-term and process_vm_readv pins of KSM pages (unshare)",
	  .details = { [KSM_D_GUP_ODIRECT] = "odirect-pins",
		[KSM_D_GUP_ODIRECT_KSM] = "odirect-ksm-pages",
		[KSM_D_GUP_LONGTERM] = "longterm-pins",
		[KSM_D_GUP_LONGTERM_KSM] = "longterm-ksm-pages", [KSM_D_GUP_READV] = "readv-pins",
		[KSM_D_GUP_READV_KSM] = "readv-ksm-pages" },
	  .flags = KSM_RF_WAIT | KSM_RF_PARTIAL, KSM_PRIV(stress_ksm_unmerge_gup_t),
	  .start = stress_ksm_unmerge_gup_start, .op = stress_ksm_unmerge_gup_op },
	{ .name = "uffd-wp", .evidence = "wp-pages-unshared", .not_built = KSM_UFFD_WP_NOT_BUILT,
	  .desc = "FAULT_FLAG_UNSHARE of userfaultfd-wp protected KSM pages",
	  .details = { [KSM_D_UFFD_WP_AT_UNMERGE] = "wp-ksm-pages-at-unmerge",
		[KSM_D_UFFD_WP_KEPT] = "wp-bits-kept",
		[KSM_D_UFFD_WP_KEPT_KSM] = "wp-kept-still-ksm",
		[KSM_D_UFFD_WP_LOST_PINNED] = "wp-lost-after-pin",
		[KSM_D_UFFD_WP_LOST_HOLE] = "wp-lost-in-hole",
		[KSM_D_UFFD_WP_LOST_RETRY] = "wp-lost-before-retry" },
	  .flags = KSM_RF_WP, .page_bytes = 2 * sizeof(uint32_t) + 2 * sizeof(uint64_t),
	  KSM_PRIV(stress_ksm_unmerge_uffd_wp_t), .start = stress_ksm_unmerge_uffd_wp_start,
	  .op = stress_ksm_unmerge_uffd_wp_op, .phase = stress_ksm_unmerge_uffd_wp_phase },
	{ .name = "mrelease", .evidence = "ksm-victims-killed",
	  .desc = "process_mrelease against exit_mmap of SIGKILLed children sharing KSM pages",
	  .details = { [KSM_D_MRELEASE_REAPS] = "mrelease-reaps",
		[KSM_D_MRELEASE_ESRCH] = "mrelease-esrch",
		[KSM_D_MRELEASE_VICTIM_KSM] = "victim-ksm-pages" },
	  .flags = KSM_RF_WAIT | KSM_RF_PFNS | KSM_RF_COPY | KSM_RF_FORKS,
	  KSM_PRIV(stress_ksm_unmerge_mrelease_t),
	  .supported = stress_ksm_unmerge_mrelease_supported,
	  .op = stress_ksm_unmerge_mrelease_op },
	{ .name = "fork", .evidence = "ksm-cow-writes",
	  .desc = "COW of KSM pages in forked children, and their KSM counters at fork",
	  .flags = KSM_RF_PFNS | KSM_RF_FORKS, KSM_PRIV(stress_ksm_unmerge_fork_t),
	  .start = stress_ksm_unmerge_fork_start, .phase = stress_ksm_unmerge_fork_phase },
	{ .name = "mprotect", .evidence = "ksm-pages-protected",
	  .desc = "unmerge of PROT_NONE and read-only KSM pages (VMAs split and merge)",
	  .flags = KSM_RF_PFNS | KSM_RF_LAYOUT | KSM_RF_PARTIAL, .page_bytes = 5,
	  KSM_PRIV(stress_ksm_unmerge_mprotect_t), .start = stress_ksm_unmerge_mprotect_start,
	  .op = stress_ksm_unmerge_mprotect_op, .phase = stress_ksm_unmerge_mprotect_phase },
	{ .name = "dontneed", .evidence = "ksm-pages-discarded",
	  .desc = "unmerge over MADV_DONTNEED holes made before and during it",
	  .flags = KSM_RF_LAYOUT | KSM_RF_PARTIAL, .page_bytes = 1,
	  KSM_PRIV(stress_ksm_unmerge_dontneed_t), .start = stress_ksm_unmerge_dontneed_start,
	  .op = stress_ksm_unmerge_dontneed_op, .phase = stress_ksm_unmerge_dontneed_phase },
	{ .name = "sparse", .evidence = "sparse-ksm-pages",
	  .desc = "the per-page unmerge walk over a huge, mostly unpopulated range",
	  .details = { [KSM_D_SPARSE_WALKED] = "sparse-pages-walked",
		[KSM_D_SPARSE_CHECKED] = "populated-pages-checked" },
	  .flags = KSM_RF_PFNS | KSM_RF_PARTIAL, KSM_PRIV(stress_ksm_unmerge_sparse_t),
	  .start = stress_ksm_unmerge_sparse_start, .phase = stress_ksm_unmerge_sparse_phase },
	{ .name = "thp", .evidence = "thps-split", .not_built = KSM_THP_NOT_BUILT,
	  .desc = "KSM split of THPs, and unmerge racing memory compaction (migration entries)",
	  .details = { [KSM_D_THP_PMD] = "pmd-thps", [KSM_D_THP_MTHP] = "mthps",
		[KSM_D_THP_COMPACTIONS] = "compactions",
		[KSM_D_THP_IN_COMPACTION] = "unmerges-in-compaction",
		[KSM_D_THP_ZERO] = "split-zero-pages" },
	  .flags = KSM_RF_PARTIAL, KSM_PRIV(stress_ksm_unmerge_thp_t),
	  .start = stress_ksm_unmerge_thp_start, .op = stress_ksm_unmerge_thp_op,
	  .phase = stress_ksm_unmerge_thp_phase },
	{ .name = "signal", .evidence = "unmerges-interrupted",
	  .desc = "signals interrupting the unmerge walk (EINTR, retried)",
	  KSM_PRIV(stress_ksm_unmerge_signal_t), .start = stress_ksm_unmerge_signal_start,
	  .op = stress_ksm_unmerge_signal_op, .phase = stress_ksm_unmerge_signal_phase,
	  .unmerge = stress_ksm_unmerge_signal_call },
	{ .name = "mremap", .evidence = "ksm-pages-moved",
	  .desc = "mremap moves of merged ranges while merged and unmerging",
	  .details = { [KSM_D_MREMAP_CUT] = "moves-cut-at-vma-end",
		[KSM_D_MREMAP_COPIED] = "ksm-pages-copied" },
	  .flags = KSM_RF_WAIT | KSM_RF_PARTIAL, KSM_PRIV(stress_ksm_unmerge_mremap_t),
	  .start = stress_ksm_unmerge_mremap_start, .op = stress_ksm_unmerge_mremap_op,
	  .phase = stress_ksm_unmerge_mremap_phase },
	{ .name = "uffd-minor", .evidence = "ksm-pages-unmerged",
	  .not_built = KSM_UFFD_MINOR_NOT_BUILT,
	  .desc = "MADV_UNMERGEABLE of a userfaultfd-minor VMA (vm_flags above bit 31 kept)",
	  .flags = KSM_RF_PFNS | KSM_RF_PARTIAL, KSM_PRIV(stress_ksm_unmerge_uffd_minor_t),
	  .start = stress_ksm_unmerge_uffd_minor_start,
	  .phase = stress_ksm_unmerge_uffd_minor_phase },
	{ .name = "prctl-exec", .evidence = "execs-mergeable",
	  .not_built = KSM_PRCTL_EXEC_NOT_BUILT,
	  .desc = "PR_SET_MEMORY_MERGE kept across fork and exec, the exec's VMAs mergeable, "
		  "and when ksmd drops an mm with no mergeable VMA",
	  .details = { [KSM_D_PRCTL_ANY_KEPT] = "merge-any-kept" },
	  .flags = KSM_RF_FORKS, KSM_PRIV(pid_t),
	  .supported = stress_ksm_unmerge_prctl_exec_supported,
	  .op = stress_ksm_unmerge_prctl_exec_op, .phase = stress_ksm_unmerge_prctl_exec_phase },
	{ .name = "fork-zero", .evidence = "zero-page-forks",
	  .desc = "ksm_zero_pages of children forked while KSM zero pages merge, unmerge, take "
		  "write faults or sit in DONTFORK/WIPEONFORK VMAs",
	  .details = { [KSM_D_FORK_ZERO_DURING] = "forks-during-unmerge",
		[KSM_D_FORK_ZERO_UNCOPIED] = "overcharged-uncopied",
		[KSM_D_FORK_ZERO_UNMERGING] = "overcharged-unmerging",
		[KSM_D_FORK_ZERO_UNDER] = "undercharged", [KSM_D_FORK_ZERO_ZAPS] = "zap-rounds",
		[KSM_D_FORK_ZERO_ZAPS_REACHED] = "zero-zaps-reached",
		[KSM_D_FORK_ZERO_ZAPS_LOST] = "zap-counts-lost" },
	  .flags = KSM_RF_PFNS | KSM_RF_PARTIAL | KSM_RF_FORKS,
	  KSM_PRIV(stress_ksm_unmerge_fork_zero_t), .start = stress_ksm_unmerge_fork_zero_start,
	  .op = stress_ksm_unmerge_fork_zero_op, .phase = stress_ksm_unmerge_fork_zero_phase },
};

/*
 *  The known kernel bugs: a verdict that matches one is named in the report,
 *  not failed (but by its own racer run alone); each has a start probe
 */
static const stress_ksm_unmerge_bug_t stress_ksm_unmerge_bugs[KSM_BUGS] = {
	{ .name = "ksm-fork-zero-pages", .verdict = "KSM zero pages charged at fork",
	  .writeup = "docs/upstream/ksm-fork-zero-pages",
	  .kernels = "6.10 and later (per-process ksm_zero_pages), unfixed upstream",
	  .racer = "fork-zero", .probe = stress_ksm_unmerge_fork_zero_probe },
};

/* --ksm-unmerge-method names: all, madvise, prctl, then the racers */
static const char *stress_ksm_unmerge_method(const size_t i)
{
	static const char * const fixed[] = { "all", "madvise", "prctl" };

	if (i < SIZEOF_ARRAY(fixed))
		return fixed[i];
	return (i - SIZEOF_ARRAY(fixed) < KSM_RACERS) ?
		stress_ksm_unmerge_racers[i - SIZEOF_ARRAY(fixed)].name :
		NULL;
}

/* pure: the switches and racers method m runs */
static uint64_t stress_ksm_unmerge_use(const size_t m)
{
	if (m == 0)
		return KSM_SW_BOTH | (KSM_RACER_BIT(KSM_RACERS) - KSM_RACER_BIT(0));
	return (m <= 2) ? STRESS_BIT_ULL(m - 1) : KSM_SW_BOTH | KSM_RACER_BIT(m - 3);
}

/* ==== One cycle: region, context, timed unmerge, merge, the cycle ==== */

/*
 *  stress_ksm_unmerge_region_size()
 *	this instance's share of the bytes, capped to half of the memory available
 */
static size_t stress_ksm_unmerge_region_size(stress_args_t *args, const uint64_t use, size_t *total)
{
	const stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	char buf[4096], dir[PATH_MAX], path[PATH_MAX + 32];
	uint64_t avail = sh->mem_avail, fixed = 4 * MB, extra = 0, copies = 1, cap;
	size_t bytes = DEFAULT_KSM_UNMERGE_BYTES, i, per;
	const char *what = "MemAvailable", *p;
	char *slash;

	if (!stress_setting_get("ksm-unmerge-bytes", &bytes)) {
		if (g_opt_flags & OPT_FLAGS_MAXIMIZE)
			bytes = 1 * GB;
		if (g_opt_flags & OPT_FLAGS_MINIMIZE)
			bytes = MIN_KSM_UNMERGE_BYTES * args->instances;
	}
	/* the tightest memory.max of this cgroup v2 and its ancestors */
	if (stress_fs_file_read("/proc/self/cgroup", buf, sizeof(buf)) > 0 &&
		(p = shim_strstr(buf, "0::")) && (p == buf || p[-1] == '\n')) {
		(void)shim_strscpy(dir, p + 3, sizeof(dir));
		dir[shim_strcspn(dir, "\n")] = '\0';
		for (;;) {
			int64_t max, cur;

			(void)snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", dir);
			max = stress_ksm_unmerge_field(path, NULL);
			(void)snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.current", dir);
			cur = stress_ksm_unmerge_field(path, NULL);
			if (max >= 0 &&
				(uint64_t)(max > cur ? max - STRESS_MAXIMUM(cur, (int64_t)0) : 0) <
					avail) {
				avail = (uint64_t)(max > cur ?
						max - STRESS_MAXIMUM(cur, (int64_t)0) :
						0);
				what = "the cgroup's memory.max room";
			}
			slash = shim_strrchr(dir, '/');
			if (!slash || slash == dir)
				break;
			*slash = '\0';
		}
	}
	for (i = 0; i < KSM_RACERS; i++) {
		if (!(use & KSM_RACER_BIT(i)))
			continue;
		fixed += KSM_RACER_BYTES;
		extra += stress_ksm_unmerge_racers[i].page_bytes;
		copies += !!(stress_ksm_unmerge_racers[i].flags & KSM_RF_COPY) && copies == 1;
	}
	fixed *= args->instances;
	cap = (avail / 2 > fixed) ?
		(avail / 2 - fixed) / (copies * args->page_size + extra) * args->page_size :
		0;
	if (avail && bytes > cap) {
		if (stress_instance_zero(args))
			pr_inf("%s: capping %zu bytes to %" PRIu64 " bytes: half of %s (%" PRIu64
			       " bytes) less the "
			       "racers' and verification memory%s\n",
				args->name, bytes, cap, what, avail,
				copies > 1 ? ", halved for the mrelease victims' copies" : "");
		bytes = (size_t)cap;
	}
	per = STRESS_MAXIMUM(
		(bytes / args->instances) & ~(args->page_size - 1), (size_t)MIN_KSM_UNMERGE_BYTES);
	*total = per * args->instances;
	return per;
}

/* release everything the context holds */
static void stress_ksm_unmerge_ctx_free(stress_ksm_unmerge_ctx_t *ctx)
{
	int *fds[] = { &ctx->pagemap_fd, &ctx->kpageflags_fd, &ctx->kpagecount_fd,
		&ctx->compact_fd };
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(fds); i++) {
		if (*fds[i] >= 0)
			(void)close(*fds[i]);
		*fds[i] = -1;
	}
	if (ctx->region)
		(void)munmap(ctx->region, ctx->region_size);
	if (ctx->templates)
		(void)munmap(ctx->templates, (KSM_FEW_TEMPLATES + 1) * ctx->page_size);
	free(ctx->pm);
	free(ctx->keys);
	ctx->region = ctx->templates = NULL;
	ctx->pm = ctx->keys = NULL;
	if (ctx->wake_made) {
		(void)pthread_cond_destroy(&ctx->wake);
		(void)pthread_cond_destroy(&ctx->acked);
		(void)pthread_mutex_destroy(&ctx->wake_lock);
		ctx->wake_made = false;
	}
}

/*
 *  stress_ksm_unmerge_ctx_init()
 *	map and fill the region, open the kernel files; EXIT_SUCCESS or a skip code
 */
static int stress_ksm_unmerge_ctx_init(stress_ksm_unmerge_ctx_t *ctx, stress_args_t *args)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	size_t total, i;

	ctx->args = args;
	ctx->t_start = stress_time_now();
	ctx->page_size = args->page_size;
	ctx->st = &sh->inst[args->instance];
	ctx->iface = &sh->iface;
	ctx->pattern = (int)sh->pattern;
	ctx->use = stress_ksm_unmerge_use(sh->method);
	ctx->verify = !!(g_opt_flags & OPT_FLAGS_VERIFY);
	ctx->seed = ((uint64_t)getpid() << 32) ^ ((uint64_t)args->instance << 48) ^ stress_mwc64();
	ctx->main_thread = pthread_self();
	if (pthread_mutex_init(&ctx->wake_lock, NULL) || pthread_cond_init(&ctx->wake, NULL) ||
	    pthread_cond_init(&ctx->acked, NULL)) {
		pr_inf_skip("%s: no mutex or condition, skipping stressor\n", args->name);
		return EXIT_NO_RESOURCE;
	}
	ctx->wake_made = true;
	ctx->region_size = stress_ksm_unmerge_region_size(args, ctx->use, &total);
	ctx->npages = ctx->touch_npages = ctx->region_size / ctx->page_size;
	ctx->teardown_secs =
		(ctx->region_size > GB) ? (double)ctx->region_size / KSM_TEARDOWN_RATE : 0.0;
	for (i = 0; i < KSM_RACERS; i++) {
		ctx->run[i].r = &stress_ksm_unmerge_racers[i];
		ctx->run[i].rs = &ctx->st->racer[i];
		ctx->run[i].ctx = ctx;
	}
	ctx->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ctx->kpageflags_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	ctx->kpagecount_fd = open("/proc/kpagecount", O_RDONLY | O_CLOEXEC);
	ctx->compact_fd = open("/proc/sys/vm/compact_memory", O_WRONLY | O_CLOEXEC);	/* root */
	if (access(KSM_SYSFS "/full_scans", R_OK) < 0) {
		pr_inf_skip("%s: cannot read %s/full_scans, errno=%d (%s), skipping stressor\n",
			args->name, KSM_SYSFS, errno, strerror(errno));
		return EXIT_NO_RESOURCE;
	}
	ctx->region = stress_ksm_unmerge_map(ctx->region_size, 0, "ksm-unmerge-region", false);
	/* shared memory: under prctl's merge-any the templates never merge with the region */
	ctx->templates = stress_mmap_anon_shared((KSM_FEW_TEMPLATES + 1) * ctx->page_size,
		PROT_READ | PROT_WRITE);
	ctx->pm = calloc(KSM_CHUNK, sizeof(*ctx->pm));
	ctx->keys = calloc(KSM_CHUNK, sizeof(*ctx->keys));
	if (ctx->templates == MAP_FAILED)
		ctx->templates = NULL;
	if (!ctx->region || !ctx->templates || !ctx->pm || !ctx->keys) {
		pr_inf_skip(
			"%s: cannot map a region of %zu bytes and its scratch%s, errno=%d (%s), "
			"skipping stressor\n",
			args->name, ctx->region_size, stress_memory_free_get(), errno,
			strerror(errno));
		return EXIT_NO_RESOURCE;
	}
	stress_ksm_unmerge_templates_fill(ctx);
	for (i = 0; i < ctx->npages; i++) {
		if (!(i & 16383) && stress_ksm_unmerge_stop_seen(ctx, "region fill"))
			break;
		stress_ksm_unmerge_page_fill(ctx, i, ctx->region + i * ctx->page_size);
	}
	ctx->filled = i;
	stress_ksm_unmerge_expect(ctx);
	ctx->have_pfns = sh->iface.pfns &&
		stress_ksm_unmerge_pagemap_read(
			ctx->pagemap_fd, ctx->region, 1, ctx->page_size, ctx->pm) == 0 &&
		stress_ksm_unmerge_pm_pfn(ctx->pm[0]);
	ctx->by_pages = ctx->have_pfns && (!(sh->iface.stat_merging || sh->iface.merging_pages) ||
		(ctx->expect_zero && !sh->iface.stat_zero));
	if (ctx->verify && !ctx->have_pfns) {
		if (stress_instance_zero(args))
			pr_inf_skip(
				"%s: --verify cannot keep its promise: the page checks need "
				"pagemap PFNs (CAP_SYS_ADMIN); skipping stressor\n",
				args->name);
		return EXIT_NOT_IMPLEMENTED;
	}
	if (!ctx->have_pfns && access(KSM_STAT, R_OK) < 0 &&
		access("/proc/self/ksm_merging_pages", R_OK) < 0) {
		pr_inf_skip(
			"%s: no way to observe merging (no ksm_stat, ksm_merging_pages or pagemap "
			"PFNs), skipping stressor\n",
			args->name);
		return EXIT_NOT_IMPLEMENTED;
	}
	if (stress_ksm_unmerge_vmflags(ctx->region, ctx->vmflags, sizeof(ctx->vmflags), true) < 0)
		ctx->vmflags[0] = '\0';
	if (stress_instance_zero(args))
		stress_memory_usage_get(args, ctx->region_size, total);
	return EXIT_SUCCESS;
}

/*
 *  stress_ksm_unmerge_timed_off()
 *	the timed unmerge (wall and CPU time): one call, or 128 MiB madvise calls while racers run
 */
static int stress_ksm_unmerge_timed_off(
	stress_ksm_unmerge_ctx_t *ctx, const uint64_t sw, double *dt, double *cpu)
{
	/*
	 * one call: between calls ksmd frees stale rmap_items under the mmap lock the next one
	 * needs
	 */
	const size_t call = ctx->racers ? KSM_CALL_BYTES : ctx->region_size;
	stress_ksm_unmerge_run_t *own = NULL;	/* a racer that makes the calls itself */
	struct timespec c0, c1;
	size_t off, i;
	int ret = 0;

	for (i = 0; i < KSM_RACERS; i++)
		if ((ctx->racers & STRESS_BIT_ULL(i)) && ctx->run[i].r->unmerge)
			own = &ctx->run[i];
	*dt = *cpu = 0.0;
	for (off = 0; off < ctx->region_size && ret == 0; off += call) {
		const size_t len = (sw == KSM_SW_PRCTL) ?
			ctx->region_size :
			STRESS_MINIMUM(call, ctx->region_size - off);
		double t0, t1;

		if (off && stress_ksm_unmerge_stop_seen(ctx, "unmerge")) {
			errno = EINTR;
			return -1;
		}
		ctx->st->in_call = true;
		(void)shim_clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
		t0 = stress_time_now();
		ret = own ? own->r->unmerge(ctx, own, sw, off, len) :
			stress_ksm_unmerge_switch(ctx, sw, off, len, false);
		t1 = stress_time_now();
		(void)shim_clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
		ctx->st->in_call = false;
		*dt += t1 - t0;
		*cpu += (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1.0E9;
		if (sw == KSM_SW_PRCTL)
			break;
	}
	return ret;
}

/* a starved or slow merge wait: said once per run with ksmd's numbers (then at debug level) */
static void stress_ksm_unmerge_wait_said(stress_ksm_unmerge_ctx_t *ctx, const int wait)
{
	const stress_ksm_unmerge_wait_t *w = &ctx->wait;
	volatile bool *said = &stress_ksm_unmerge_shared->wait_reported[wait];
	char buf[384], cpu[96] = "its CPU time unknown (ksmd not visible in /proc)";

	if (w->cpu >= 0.0)
		(void)snprintf(cpu, sizeof(cpu), "ksmd ran %.2f s (%.0f%% of one CPU), waited %.2f "
			"s for one", w->cpu, 100.0 * w->cpu / STRESS_MAXIMUM(w->wall, 1.0E-9),
			w->runnable);
	(void)snprintf(buf, sizeof(buf), "%s: merge wait %s (cycle %" PRIu64 "): %.1f s, %s, %"
		PRId64 " pages scanned and %" PRId64 " full scans ended, %" PRIu64 " of %" PRIu64
		" pages merged; not a kernel failure", ctx->args->name,
		stress_ksm_unmerge_wait_names[wait], ctx->cycle, w->wall, cpu, w->scanned, w->scans,
		w->got, w->want);
	if (!__atomic_exchange_n(said, true, __ATOMIC_SEQ_CST))
		pr_inf("%s\n", buf);
	else
		pr_dbg("%s\n", buf);
}

/*
 *  stress_ksm_unmerge_merge()
 *	merge and verify it: 0 ok, 1 stopped, -1 failed
 */
static int stress_ksm_unmerge_merge(stress_ksm_unmerge_ctx_t *ctx, const uint64_t sw,
	const double bound, const bool quiet, uint64_t *ksm, uint64_t *kzero, bool *empty)
{
	const char *name = ctx->args->name;
	stress_ksm_unmerge_instance_t *st = ctx->st;
	const double t0 = stress_time_now();
	int64_t merging = 0, zero = 0, rmap;
	int wait, waited, rc = 0;

	stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_MERGING);
	if (stress_ksm_unmerge_switch(ctx, sw, 0, ctx->region_size, true) < 0) {
		if (errno == EINTR && !stress_continue(ctx->args))
			return 1;
		pr_fail("%s: %s merge on failed, errno=%d (%s)\n", name,
			sw == KSM_SW_PRCTL ? "prctl" : "madvise", errno, strerror(errno));
		return -1;
	}
	if (sw == KSM_SW_PRCTL && !st->method_cycles[1] &&
		prctl(PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL) != 1) {
		pr_fail("%s: PR_GET_MEMORY_MERGE does not read 1 after PR_SET_MEMORY_MERGE 1, "
			"errno=%d (%s)\n",
			name, errno, strerror(errno));
		rc = -1;
	}
	wait = stress_ksm_unmerge_merge_wait(ctx, bound, &merging, &zero);
	st->merge_wait_secs += stress_time_now() - t0;
	if (wait < 0) {
		(void)stress_ksm_unmerge_stop_seen(ctx, "merge wait");
		return 1;
	}
	st->waits[wait]++;
	stress_ksm_unmerge_lat_add(&st->merge_lat, ctx->wait.wall * 1000.0);
	rmap = stress_ksm_unmerge_field(KSM_STAT, "ksm_rmap_items");
	st->rmap_max = STRESS_MAXIMUM(st->rmap_max, (uint64_t)STRESS_MAXIMUM(rmap, (int64_t)0));
	waited = (wait == KSM_WAIT_MERGED);
	if (wait == KSM_WAIT_STUCK) {
		pr_fail("%s: ksmd stuck: it ran %.2f s of a %.1f s merge wait and scanned no page, "
			"no full scan ended (%" PRIu64 " of %" PRIu64 " pages merged)\n", name,
			ctx->wait.cpu, ctx->wait.wall, ctx->wait.got, ctx->wait.want);
		rc = -1;
	} else if (wait == KSM_WAIT_STARVED || wait == KSM_WAIT_SLOW) {
		stress_ksm_unmerge_wait_said(ctx, wait);
	}
	stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_MERGED);
	if (stress_ksm_unmerge_verify_merge(ctx, waited, ksm, kzero) < 0 ||
	    stress_ksm_unmerge_zero_check(ctx, "after the merge") < 0)
		rc = -1;
	if (ctx->stopped && !rc)
		return 1;
	if (!ctx->have_pfns) {
		*ksm = merging > 0 ? (uint64_t)merging : 0;
		*kzero = zero > 0 ? (uint64_t)zero : 0;
	}
	*empty = !(*ksm + *kzero) && ctx->expect_merged + ctx->expect_zero;
	/* the counters may lag the pages: what the region holds decides */
	if (*empty || *ksm + *kzero < ctx->expect_merged + ctx->expect_zero) {
		st->merge_timeouts += *empty;
		st->partial_merges += !*empty;
		pr_dbg("%s: cycle %" PRIu64 ": merge incomplete after %.2f s: %" PRIu64
		       " KSM + %" PRIu64 " zero "
		       "pages of %" PRIu64 "\n",
			name, ctx->cycle, stress_time_now() - t0, *ksm, *kzero,
			ctx->expect_merged + ctx->expect_zero);
		/*
		 * On a quiet kernel ksmd ending its passes short of the prediction is a failure.
		 * Quiet is no racer in any instance: another instance's pin (gup, vmsplice) on a
		 * page of the same content in the unstable tree blocks every identical page.
		 * The region's count must be exact: counters, or KPF_KSM (not the fallback)
		 */
		if (ctx->verify && quiet && (!ctx->have_pfns || ctx->iface->kpf_ksm) &&
		    (stress_ksm_unmerge_shared->quiet_all > 0.0 ||
		    ctx->use < KSM_RACER_BIT(0)) && wait == KSM_WAIT_PARTIAL && ctx->wait.stable &&
		    !*empty) {
			pr_fail("%s: partial merge on a quiet kernel: ksmd finished its passes "
				"with %" PRIu64 " KSM + %" PRIu64 " zero pages of %" PRIu64 " + "
				"%" PRIu64 " predicted (counters: merging %" PRId64 ", zero "
				"%" PRId64 ")\n",
				name, *ksm, *kzero, ctx->expect_merged, ctx->expect_zero, merging,
				zero);
			rc = -1;
		}
	}
	return rc;
}

/*
 *  stress_ksm_unmerge_cycle()
 *	one bogo op: a verified merge and unmerge; 0 verified, 1 stopped, -1 failed
 */
static int stress_ksm_unmerge_cycle(stress_ksm_unmerge_ctx_t *ctx, uint64_t sw, const double bound)
{
	const stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	stress_ksm_unmerge_instance_t *st = ctx->st;
	/*
	 * a quiet figure from a window every instance is in, settled; without racers every cycle is
	 * quiet
	 */
	const bool quiet = ctx->use < KSM_RACER_BIT(0) ||
		(ctx->quiet && sh->quiet_all > 0.0 &&
			stress_time_now() - sh->quiet_all >= KSM_QUIET_SETTLE);
	uint64_t ksm = 0, kzero = 0;
	int64_t cow0, cow1;
	double dt = 0.0, cpu = 0.0;
	bool empty = false;
	int rc, ret, err;

	ctx->cycle++;
	sw = ctx->quiet ? KSM_SW_MADVISE : sw;
	rc = stress_ksm_unmerge_merge(ctx, sw, bound, quiet, &ksm, &kzero, &empty);
	if (rc > 0)
		return 1;
	if (ksm + kzero)
		stress_ksm_unmerge_racers_meet(ctx);
	cow0 = stress_ksm_unmerge_field("/proc/vmstat", "cow_ksm");
	stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_UNMERGING);
	ret = stress_ksm_unmerge_timed_off(ctx, sw, &dt, &cpu);
	err = errno;	/* before the cow_ksm read: its parse sets errno = 0 */
	cow1 = stress_ksm_unmerge_field("/proc/vmstat", "cow_ksm");
	if (ret < 0) {
		stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_IDLE);
		if (err == EINTR && stress_ksm_unmerge_stop_seen(ctx, "unmerge"))
			return 1;
		pr_fail("%s: %s unmerge failed, errno=%d (%s)\n", ctx->args->name,
			sw == KSM_SW_PRCTL ? "prctl" : "madvise", err, strerror(err));
		return -1;
	}
	if (sw == KSM_SW_PRCTL && !st->method_cycles[1] &&
		prctl(PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL) != 0) {
		pr_fail("%s: PR_GET_MEMORY_MERGE does not read 0 after PR_SET_MEMORY_MERGE 0\n",
			ctx->args->name);
		rc = -1;
	}
	stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_VERIFY);
	if (!stress_ksm_unmerge_racers_quiesce(ctx))
		rc = -1;
	if (!ctx->stopped &&
		stress_ksm_unmerge_verify_unmerge(
			ctx, ksm, (cow0 >= 0 && cow1 >= 0) ? cow1 - cow0 : -1) < 0)
		rc = -1;
	if (stress_ksm_unmerge_zero_check(ctx, "after the unmerge") < 0)
		rc = -1;
	stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_IDLE);
	if (rc < 0)
		return -1;
	if (ctx->stopped || empty)
		/* cut short, or nothing unmerged: not a bogo op, not in the metrics */
		return ctx->stopped ? 1 : 0;
	st->pages_merged += ksm + kzero;
	st->pages_zero += kzero;
	st->cow_ksm += (cow0 >= 0 && cow1 > cow0) ? (uint64_t)(cow1 - cow0) : 0;
	st->unmerge_secs += (ksm + kzero) ? dt : 0.0;
	if (ksm + kzero)
		stress_ksm_unmerge_lat_add(&st->unmerge_lat, dt * 1000.0);
	if (quiet && (sh->quiet_all > 0.0 || ctx->use < KSM_RACER_BIT(0)) &&
		ksm + kzero >= ctx->expect_merged + ctx->expect_zero) {
		st->quiet_cycles++;
		st->quiet_pages += ksm + kzero;
		st->quiet_secs += dt;
		st->quiet_cpu_secs += cpu;
	}
	st->cycles++;
	st->method_cycles[sw == KSM_SW_PRCTL]++;
	stress_bogo_inc(ctx->args);
	return 0;
}

/* ==== Instance: metrics, outcome, worker, supervisor, the stressor ==== */

/* this instance's metrics; none whose value is legitimately 0 */
static void stress_ksm_unmerge_metrics(stress_ksm_unmerge_ctx_t *ctx)
{
	stress_args_t *args = ctx->args;
	const stress_ksm_unmerge_instance_t *st = ctx->st;
	const double mib = (double)ctx->page_size / (double)MB;
	size_t i;

	if (st->pages_merged && st->unmerge_secs > 0.0)
		stress_metrics_set(args, "unmerge MB per sec",
			(double)st->pages_merged * mib / st->unmerge_secs,
			STRESS_METRIC_HARMONIC_MEAN);
	if (st->quiet_pages && st->quiet_secs > 0.0)
		stress_metrics_set(args, "quiet unmerge MB per sec",
			(double)st->quiet_pages * mib / st->quiet_secs,
			STRESS_METRIC_HARMONIC_MEAN);
	if (st->quiet_pages && st->quiet_cpu_secs > 0.0)
		stress_metrics_set(args, "quiet CPU-time unmerge MB per sec",
			(double)st->quiet_pages * mib / st->quiet_cpu_secs,
			STRESS_METRIC_HARMONIC_MEAN);
	if (st->cycles) {
		stress_metrics_set(args, "merge wait millisecs per cycle",
			st->merge_wait_secs * 1000.0 / (double)st->cycles,
			STRESS_METRIC_GEOMETRIC_MEAN);
		if (st->pages_merged)
			stress_metrics_set(args, "pages merged per cycle",
				(double)st->pages_merged / (double)st->cycles,
				STRESS_METRIC_GEOMETRIC_MEAN);
	}
	/* racers' counts are in the report, not rates to compare */
	for (i = 0; i < KSM_RACERS; i++)
		if (st->racer[i].op_ns && st->racer[i].detail[KSM_D_SPARSE_WALKED])
			stress_metrics_set(args, "nanosecs per sparse page",
				(double)st->racer[i].op_ns /
					(double)st->racer[i].detail[KSM_D_SPARSE_WALKED],
				STRESS_METRIC_HARMONIC_MEAN);
}

/*
 *  stress_ksm_unmerge_outcome()
 *	end of the worker: racer failures and reach, degenerate runs; the exit code
 */
static int stress_ksm_unmerge_outcome(stress_ksm_unmerge_ctx_t *ctx, int rc)
{
	const char *name = ctx->args->name;
	const stress_ksm_unmerge_instance_t *st = ctx->st;
	const uint64_t want = ctx->expect_merged + ctx->expect_zero;
	size_t i;

	for (i = 0; i < KSM_RACERS; i++) {
		const stress_ksm_unmerge_racer_stats_t *rs = &st->racer[i];

		if (!rs->active)
			continue;
		if (rs->failures) {
			rc = EXIT_FAILURE;
		} else if (!rs->evidence && ctx->verify && st->cycles &&
			st->cycles < KSM_JUDGE_CYCLES) {
			pr_inf("%s: racer %s not reached in %" PRIu64
			       " verified cycle(s): too short a run to judge\n",
				name, stress_ksm_unmerge_racers[i].name, st->cycles);
		} else if (!rs->evidence && ctx->verify && st->cycles &&
			stress_ksm_unmerge_oversubscribed(ctx->args)) {
			pr_dbg("%s: racer %s not reached in this instance's %" PRIu64 " cycles "
				"(%" PRIu64 " ops): instances over CPUs, judged over all of them\n",
				name, stress_ksm_unmerge_racers[i].name, st->cycles, rs->ops);
		} else if (!rs->evidence && ctx->verify && st->cycles) {
			pr_fail("%s: racer %s ran %" PRIu64
				" ops but never reached its path (%s): degenerate run\n",
				name, stress_ksm_unmerge_racers[i].name, rs->ops,
				rs->reason[0] ? rs->reason : "no evidence");
			rc = EXIT_FAILURE;
		}
	}
	if (rc != EXIT_SUCCESS)
		return rc;
	/* ksmd ended its passes and nothing merged: a failure; it never got so far: a named skip */
	if (want && !st->pages_merged && st->waits[KSM_WAIT_PARTIAL]) {
		pr_fail("%s: nothing merged in %" PRIu64 " merge waits (ksmd run=%" PRId64
			", %zu pages per instance): "
			"no throughput reported\n",
			name, st->merge_timeouts + st->partial_merges,
			stress_ksm_unmerge_field(KSM_SYSFS "/run", NULL), ctx->npages);
		return EXIT_FAILURE;
	}
	if (want && !st->pages_merged && (st->waits[KSM_WAIT_STARVED] ||
	    st->waits[KSM_WAIT_SLOW])) {
		pr_inf_skip("%s: nothing merged: ksmd starved in %" PRIu64 " and slow in %" PRIu64
			" merge waits: no cycle verified, not a kernel failure\n", name,
			st->waits[KSM_WAIT_STARVED], st->waits[KSM_WAIT_SLOW]);
		return EXIT_NO_RESOURCE;
	}
	if (!st->cycles && want) {
		pr_inf_skip(
			"%s: no merge/unmerge cycle verified: the run ended during the %s, %.1f s "
			"after the start (%zu of %zu pages filled; a %zu MB region needs longer: "
			"raise --timeout or lower --ksm-unmerge-bytes)\n",
			name, st->stop_step[0] ? st->stop_step : "first cycle",
			stress_time_now() - ctx->t_start, ctx->filled, ctx->npages,
			(size_t)(ctx->region_size / MB));
		return EXIT_NO_RESOURCE;
	}
	if (!want && st->pages_merged) {
		pr_fail("%s: control pattern unique merged %" PRIu64 " pages, expected none\n",
			name, st->pages_merged);
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

/*
 *  stress_ksm_unmerge_worker()
 *	the worker: verified cycles with the racers; the instance's exit code
 */
static int stress_ksm_unmerge_worker(stress_args_t *args)
{
	stress_ksm_unmerge_ctx_t ctx;
	uint64_t sw, n = 0;
	double bound, last = 0.0;
	int64_t rss;
	int rc;

	(void)shim_memset(&ctx, 0, sizeof(ctx));
	rc = stress_ksm_unmerge_ctx_init(&ctx, args);
	sw = ctx.use & KSM_SW_BOTH;
	if (rc == EXIT_SUCCESS && (sw & KSM_SW_PRCTL) &&
		prctl(PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL) < 0) {
		if (stress_instance_zero(args))
			pr_inf_skip(
				"%s: method prctl skipped: PR_GET_MEMORY_MERGE failed, errno=%d "
				"(%s) (needs Linux 6.4)\n",
				args->name, errno, strerror(errno));
		sw &= ~KSM_SW_PRCTL;
		rc = sw ? EXIT_SUCCESS : EXIT_NOT_IMPLEMENTED;
	}
	if (rc != EXIT_SUCCESS) {
		stress_ksm_unmerge_ctx_free(&ctx);
		return rc;
	}
	/* merging needs two ksmd passes over every instance's pages */
	bound = 10.0 + (double)(ctx.region_size * args->instances) / (32.0 * MB);
	stress_ksm_unmerge_racers_start(&ctx);
	while (!stress_ksm_unmerge_ending(&ctx)) {
		double t_cycle;
		int ret;

		stress_ksm_unmerge_window_hold(&ctx, last);
		stress_ksm_unmerge_window(&ctx, false);
		n += !ctx.quiet;	/* the switches alternate outside the windows */
		t_cycle = stress_time_now();
		ret = stress_ksm_unmerge_cycle(&ctx,
			sw == KSM_SW_BOTH ? ((n & 1) ? KSM_SW_PRCTL : KSM_SW_MADVISE) : sw, bound);
		last = ctx.quiet ? last : stress_time_now() - t_cycle;

		if (ret > 0)
			break;
		if (ret < 0) {
			rc = EXIT_FAILURE;
			if (++ctx.st->failures >= KSM_MAX_FAILURES) {
				pr_inf("%s: %d failures reached, aborting stress process\n",
					args->name, KSM_MAX_FAILURES);
				break;
			}
		}
	}
	stress_ksm_unmerge_window(&ctx, true);
	stress_ksm_unmerge_racers_stop(&ctx);
	stress_ksm_unmerge_phase_set(&ctx, KSM_PHASE_IDLE);
	if (stress_ksm_unmerge_zero_check(&ctx, "after the racers' children exited") < 0)
		rc = EXIT_FAILURE;
	stress_ksm_unmerge_metrics(&ctx);
	rss = stress_ksm_unmerge_field("/proc/self/status", "VmHWM");
	ctx.st->rss_kb = (uint64_t)STRESS_MAXIMUM(rss, (int64_t)0);
	rc = stress_ksm_unmerge_outcome(&ctx, rc);
	stress_ksm_unmerge_ctx_free(&ctx);
	/* a big region was freed ahead of the timeout: end with the run, not before */
	while (ctx.teardown_secs > 0.0 && stress_continue(args) &&
		stress_time_now() < args->time_end - 0.2)
		(void)shim_nanosleep_uint64(50000000);
	return rc;
}

/* a worker stuck in the kernel: its wchan and every thread's kernel stack */
static void stress_ksm_unmerge_stacks(const char *name, const pid_t pid, const char *why)
{
	char path[64], wchan[128], stack[2048], *p;
	struct dirent *d;
	DIR *dir;

	(void)snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
	if (stress_fs_file_read(path, wchan, sizeof(wchan)) <= 0)
		(void)shim_strscpy(wchan, "?", sizeof(wchan));
	pr_fail("%s: worker %d %s; wchan %s, kernel stacks follow\n", name, (int)pid, why, wchan);
	(void)snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	while (dir && (d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		(void)snprintf(
			path, sizeof(path), "/proc/%d/task/%.16s/stack", (int)pid, d->d_name);
		if (stress_fs_file_read(path, stack, sizeof(stack)) <= 0)
			continue;
		for (p = stack; (p = shim_strchr(p, '\n')) != NULL; )
			*p = (p[1] ? ' ' : '\0');
		pr_inf("%s: worker %d thread %s: %s\n", name, (int)pid, d->d_name, stack);
	}
	if (dir)
		(void)closedir(dir);
}

/* pure: utime + stime (all threads, clock ticks) of a /proc/PID/stat line, -1 unparsable */
static int64_t stress_ksm_unmerge_stat_ticks(const char *buf)
{
	unsigned long long ut, st;
	const char *p = shim_strrchr(buf, ')');

	/* after the command: state ppid pgrp session tty tpgid flags 4 fault counts, then these */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return -1;
	return (int64_t)(ut + st);
}

/* the worker's CPU time in ticks, -1 unread */
static int64_t stress_ksm_unmerge_cpu_ticks(const pid_t pid)
{
	char path[64], buf[1024];

	(void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (stress_fs_file_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	return stress_ksm_unmerge_stat_ticks(buf);
}

/*
 *  stress_ksm_unmerge_stopped_late()
 *	after the stop request: a worker that used no CPU for KSM_STOP_SECS (plus what the
 *	sparse walk is excused) is stuck; one still using CPU is still working in the kernel
 *	(a whole-node compaction the thp racer started, an smaps walk of the sparse range:
 *	tens of seconds under emulation) and is stuck only past KSM_STOP_CAP_SECS
 */
static bool stress_ksm_unmerge_stopped_late(const pid_t pid, const double now,
	const double stop_at, const double allow, int64_t *ticks, double *busy_at)
{
	const int64_t t = stress_ksm_unmerge_cpu_ticks(pid);

	if (t >= 0 && t != *ticks) {
		*ticks = t;
		*busy_at = now;
	}
	return now - *busy_at > KSM_STOP_SECS + allow ||
		now - stop_at > KSM_STOP_CAP_SECS + allow;
}

/*
 *  stress_ksm_unmerge_supervise()
 *	the instance: pass the stop on, report a hang with stacks, judge the worker's end
 */
static int stress_ksm_unmerge_supervise(stress_args_t *args, const pid_t pid)
{
	const stress_ksm_unmerge_instance_t *st = &stress_ksm_unmerge_shared->inst[args->instance];
	double stop_at = 0.0, busy_at = 0.0;
	bool hung = false, killed = false, stopping = false;
	int status = 0;
	int64_t ticks = -1;

	for (;;) {
		const pid_t ret = shim_waitpid(pid, &status, WNOHANG);
		const double now = stress_time_now();

		if (ret == pid)
			break;
		if (ret < 0 && errno != EINTR) {
			pr_fail("%s: waitpid on worker %d failed, errno=%d (%s)\n", args->name,
				(int)pid, errno, strerror(errno));
			(void)stress_kill_pid(pid);
			return EXIT_FAILURE;
		}
		if (!stress_continue(args) && !stopping) {
			stopping = true;
			stop_at = busy_at = now;
			ticks = stress_ksm_unmerge_cpu_ticks(pid);
			(void)shim_kill(pid, SIGALRM);
		}
		if (!hung && (st->phase == KSM_PHASE_UNMERGING || st->phase == KSM_PHASE_VERIFY) &&
		    now - st->phase_since - st->hang_allow > KSM_HANG_SECS) {
			hung = true;
			stress_ksm_unmerge_stacks(args->name, pid,
				st->phase == KSM_PHASE_UNMERGING ?
					"stuck in the unmerge for longer than the hang bound" :
					"stuck in the verification (racers parking) for longer "
					"than the hang bound");
		}
		if (stopping && !killed && stress_ksm_unmerge_stopped_late(pid, now, stop_at,
				st->hang_allow, &ticks, &busy_at)) {
			char why[128];

			(void)snprintf(why, sizeof(why), "did not stop within %.0f secs of the "
				"stop request (%.0f secs with no CPU time used) and is killed",
				now - stop_at, now - busy_at);
			stress_ksm_unmerge_stacks(args->name, pid, why);
			(void)stress_kill_pid(pid);
			killed = true;
		}
		(void)shim_nanosleep_uint64(20000000);
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && !killed &&
		stress_process_oomed(pid)) {
		pr_inf_skip("%s: worker %d killed by the OOM killer after %" PRIu64
			    " bogo ops, skipping stressor\n",
			args->name, (int)pid, stress_bogo_get(args));
		return EXIT_NO_RESOURCE;
	}
	if (WIFSIGNALED(status) && !killed)
		pr_fail("%s: worker %d killed by signal %d from outside the run\n", args->name,
			(int)pid, WTERMSIG(status));
	if (WIFSIGNALED(status) || hung)
		return EXIT_FAILURE;
	return WEXITSTATUS(status);
}

/* a process's ksm_stat field; where its leader has exited (no mm there) a live thread's */
static int64_t stress_ksm_unmerge_stat_field(const char *pid, const char *field)
{
	char path[96];
	struct dirent *d;
	DIR *dir;
	int64_t v;

	(void)snprintf(path, sizeof(path), "/proc/%.16s/ksm_stat", pid);
	v = stress_ksm_unmerge_field(path, field);
	(void)snprintf(path, sizeof(path), "/proc/%.16s/task", pid);
	if (v >= 0 || !(dir = opendir(path)))
		return v;
	while (v < 0 && (d = readdir(dir)) != NULL) {
		(void)snprintf(path, sizeof(path), "/proc/%.16s/task/%.16s/ksm_stat", pid,
			d->d_name);
		v = stress_ksm_unmerge_field(path, field);
	}
	(void)closedir(dir);
	return v;
}

/*
 * a global (sysfs ksm_zero_pages; ksmd's rmap_items for ksm_rmap_items) less what live
 * processes' ksm_stat field holds, when it and the fork count stayed put over the sum; -1 unknown
 */
static int64_t stress_ksm_unmerge_unheld(const char *field)
{
	const bool rmap = !shim_strcmp(field, "ksm_rmap_items");
	int tries;

	for (tries = 0; tries < 20; tries++) {
		const int64_t f0 = stress_ksm_unmerge_field("/proc/stat", "processes");
		const int64_t g0 = rmap ? stress_ksm_unmerge_rmap_items() :
			stress_ksm_unmerge_field(KSM_SYSFS "/ksm_zero_pages", NULL);
		int64_t held = 0, g1;
		struct dirent *d;
		DIR *dir = opendir("/proc");

		if (g0 < 0 || !dir) {
			if (dir)
				(void)closedir(dir);
			return -1;
		}
		while ((d = readdir(dir)) != NULL)
			if (d->d_name[0] >= '1' && d->d_name[0] <= '9')
				held += STRESS_MAXIMUM(stress_ksm_unmerge_stat_field(
					d->d_name, field), (int64_t)0);
		(void)closedir(dir);
		g1 = rmap ? stress_ksm_unmerge_rmap_items() :
			stress_ksm_unmerge_field(KSM_SYSFS "/ksm_zero_pages", NULL);
		if (g0 == g1 && f0 == stress_ksm_unmerge_field("/proc/stat", "processes"))
			return g0 - held;
		(void)shim_nanosleep_uint64(10000000);
	}
	return -1;
}

/* pure: KSM zero pages held by no process beyond base, 0 if none */
static int64_t stress_ksm_unmerge_leak_judge(const int64_t base, const int64_t *now, const size_t n)
{
	int64_t leak = INT64_MAX;
	size_t i;

	for (i = 0; i < n; i++)
		if (now[i] >= 0)
			leak = STRESS_MINIMUM(leak, now[i] - base);
	return (base < 0 || leak == INT64_MAX || leak < 0) ? 0 : leak;
}

/*
 *  stress_ksm_unmerge_zero_leak_check()
 *	the last instance: no KSM zero page left held by no process, or only what
 *	the known fork-zero bug leaves where this run confirmed it
 */
static int stress_ksm_unmerge_zero_leak_check(stress_args_t *args)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	stress_ksm_unmerge_bug_state_t *b = &sh->bug[KSM_BUG_FORK_ZERO];
	const double deadline = stress_time_now() + 2.0;
	int64_t now[16], leak = 0;
	size_t n = 0;

	if (sh->zero_leak0 < 0)
		return EXIT_SUCCESS;
	do {
		now[n++] = stress_ksm_unmerge_unheld("ksm_zero_pages");
		leak = stress_ksm_unmerge_leak_judge(sh->zero_leak0, now, n);
		if (!leak)
			break;
		/* exits in flight settle; a leak stays put */
		(void)shim_nanosleep_uint64(100000000);
	} while (stress_time_now() < deadline && n < SIZEOF_ARRAY(now) &&
		(n < 3 || now[n - 1] != now[n - 3]));
	b->left = leak;
	if (!leak ||
		(b->confirmed &&
			stress_ksm_unmerge_bug_hit(KSM_BUG_FORK_ZERO,
				"%s: the global "
				"ksm_zero_pages holds %" PRId64
				" more pages that no live process has than at the start",
				stress_ksm_unmerge_bugs[KSM_BUG_FORK_ZERO].verdict, leak)))
		return EXIT_SUCCESS;
	pr_fail("%s: %s: the global ksm_zero_pages holds %" PRId64
		" more pages that no live process has than at "
		"the start (%" PRId64
		" then): forked children were charged KSM zero pages they never mapped, and "
		"the charge outlived them\n",
		args->name, stress_ksm_unmerge_bugs[KSM_BUG_FORK_ZERO].verdict, leak,
		sh->zero_leak0);
	return EXIT_FAILURE;
}

/* pure: an rmap_item leak beyond base: the last 3 readings (2 full scans apart) agree at 64+ */
static int64_t stress_ksm_unmerge_rmap_judge(const int64_t base, const int64_t *now, const size_t n)
{
	const int64_t leak = n ? now[n - 1] - STRESS_MAXIMUM(base, (int64_t)0) : 0;

	return (n >= 3 && now[n - 2] == now[n - 1] && now[n - 3] == now[n - 1] &&
		leak >= KSM_RMAP_LEAK) ? leak : 0;
}

/* n unique mergeable pages (ksmd keeps an rmap_item for each); NULL on error */
static uint8_t *stress_ksm_unmerge_rmap_area(const size_t n, const size_t ps)
{
	uint8_t *p = mmap(NULL, n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		0);
	size_t i;

	for (i = 0; p != MAP_FAILED && i < n; i++)
		*(uint64_t *)(void *)(p + i * ps) = (uint64_t)(i + 1 + (n << 20));
	return (p == MAP_FAILED || shim_madvise(p, n * ps, MADV_MERGEABLE) < 0) ? NULL : p;
}

/*
 *  stress_ksm_unmerge_rmap_leak_check()
 *	the last instance: ksmd frees a dead mm's rmap_items at its next visit, so two full scans
 *	after the last KSM user (the workers, then a probe child) exited, live processes hold all
 *	of them: more than at the start, the same over further scans, leaked.  Judged where the sum
 *	sees every process (initial PID namespace: its fixed inode, /proc/self this pid) and ksmd
 *	runs; 1024 pages here keep it scanning, and its cursor mostly off the probe when it dies
 */
static int stress_ksm_unmerge_rmap_leak_check(stress_args_t *args)
{
	const int64_t base = stress_ksm_unmerge_shared->rmap_leak0;
	const double end = stress_time_now() + 10.0;
	char ns[32] = "", self[16] = "", pid[16], run[8] = "";
	int64_t now[8], scans, probed = -1, leak = 0, v;
	size_t n = 0;
	uint8_t *p = NULL;
	pid_t probe = -1;
	int fds[2] = { -1, -1 };

	(void)stress_ksm_unmerge_knob_read("run", run, sizeof(run));
	(void)snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if ((readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1) < 0 && errno != ENOENT) ||
	    readlink("/proc/self", self, sizeof(self) - 1) < 0 || shim_strcmp(self, pid) ||
	    (ns[0] && shim_strcmp(ns, "pid:[4026531836]")) || shim_strcmp(run, "1") ||
	    stress_ksm_unmerge_field(KSM_STAT, "ksm_rmap_items") < 0) {
		pr_inf("%s: rmap_item leak not checked: it needs the initial PID namespace, ksmd "
		       "running and ksm_stat's ksm_rmap_items (6.1+)\n", args->name);
		return EXIT_SUCCESS;
	}
	/* the probe exits when the pipe closes: an exit, not a kill, so valgrind sees it end */
	if (pipe(fds) == 0 && (probe = fork()) == 0) {
		(void)close(fds[1]);
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (stress_ksm_unmerge_rmap_area(128, args->page_size))
			v = read(fds[0], pid, 1);
		_exit(0);
	}
	(void)close(fds[0]);
	scans = stress_ksm_unmerge_field(KSM_SYSFS "/full_scans", NULL);
	p = stress_ksm_unmerge_rmap_area(1024, args->page_size);
	while (p && scans >= 0 && n < 8 && stress_time_now() < end && !leak &&
	       (n < 1 || now[n - 1] - base >= KSM_RMAP_LEAK)) {
		if ((v = stress_ksm_unmerge_field(KSM_SYSFS "/full_scans", NULL)) < scans + 2) {
			(void)shim_nanosleep_uint64(5000000);
			continue;
		}
		scans = v;
		if (probe > 0) {	/* ksmd scanned it twice: it exits with rmap_items */
			(void)snprintf(pid, sizeof(pid), "%d", (int)probe);
			probed = stress_ksm_unmerge_stat_field(pid, "ksm_rmap_items");
			(void)close(fds[1]);
			(void)shim_waitpid(probe, NULL, 0);
			probe = fds[1] = -1;
		} else if ((now[n] = stress_ksm_unmerge_unheld("ksm_rmap_items")) >= 0) {
			pr_dbg("%s: rmap_items no live process has: %" PRId64 " (full scan %" PRId64
			       ")\n", args->name, now[n], scans);
			leak = stress_ksm_unmerge_rmap_judge(base, now, ++n);
		}
	}
	if (p)
		(void)munmap(p, 1024 * args->page_size);
	(void)close(fds[1]);
	if (probe > 0)
		(void)shim_waitpid(probe, NULL, 0);
	if (!leak && n && now[n - 1] - base >= KSM_RMAP_LEAK)
		pr_inf("%s: rmap_item leak not judged: %" PRId64 " rmap_items no live process has "
		       "did not settle in 10 s\n", args->name, now[n - 1]);
	if (!leak)
		return EXIT_SUCCESS;
	pr_fail("%s: ksmd holds %" PRId64 " rmap_items (sysfs pages_shared + pages_sharing + "
		"pages_unshared + pages_volatile, %" PRId64 ") that no live process's ksm_stat "
		"ksm_rmap_items has, %" PRId64 " at the start, the same over 3 readings 2 full "
		"scans apart to full scan %" PRId64 ": an exited process's were never freed (a "
		"probe process exited with %" PRId64 ")\n", args->name, now[n - 1],
		stress_ksm_unmerge_rmap_items(), base, scans, probed);
	return EXIT_FAILURE;
}

/* the last instance: how many known kernel bugs the run confirmed, a metric (none: not set) */
static void stress_ksm_unmerge_bugs_metric(stress_args_t *args)
{
	const stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	size_t k, n = 0;

	for (k = 0; k < KSM_BUGS; k++)
		n += !!sh->bug[k].confirmed;
	/* a fixed kernel sets none: LKP would read a 0 as a failure */
	if (n)
		stress_metrics_set(
			args, "known kernel bugs confirmed", (double)n, STRESS_METRIC_TOTAL);
}

/* racer k over the instances: figures; instances that ran it, reached, left it out, their cycles */
static void stress_ksm_unmerge_racer_sum(const stress_ksm_unmerge_shared_t *sh, const size_t k,
	stress_ksm_unmerge_racer_stats_t *rt, uint64_t count[4])
{
	size_t i, j;

	(void)shim_memset(rt, 0, sizeof(*rt));
	(void)shim_memset(count, 0, 4 * sizeof(*count));
	for (i = 0; i < sh->instances; i++) {
		const stress_ksm_unmerge_racer_stats_t *rs = &sh->inst[i].racer[k];

		rt->ops += rs->ops;
		rt->evidence += rs->evidence;
		rt->meet_timeouts += rs->meet_timeouts;
		rt->failures += rs->failures;
		for (j = 0; j < KSM_DETAILS; j++)
			rt->detail[j] += rs->detail[j];
		rt->active |= rs->active;
		count[0] += rs->active;
		count[1] += rs->active && rs->evidence;
		count[2] += rs->left_out && !rs->active;
		count[3] += rs->active ? sh->inst[i].cycles : 0;
		/* why it was not reached: from an instance that ran it */
		if (rs->reason[0] && !rs->left_out && (!rt->reason[0] || rs->active))
			(void)shim_strscpy(rt->reason, rs->reason, sizeof(rt->reason));
	}
}

/* the last instance, --verify, more instances than CPUs: each racer reached its path somewhere */
static int stress_ksm_unmerge_reach_check(stress_args_t *args)
{
	const stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	stress_ksm_unmerge_racer_stats_t rt;
	uint64_t count[4];
	int rc = EXIT_SUCCESS;
	size_t k;

	for (k = 0; k < KSM_RACERS && (g_opt_flags & OPT_FLAGS_VERIFY) &&
	     stress_ksm_unmerge_oversubscribed(args); k++) {
		if (!(stress_ksm_unmerge_use(sh->method) & KSM_RACER_BIT(k)))
			continue;
		stress_ksm_unmerge_racer_sum(sh, k, &rt, count);
		if (!count[0] || rt.evidence || count[3] < KSM_JUDGE_CYCLES)
			continue;
		pr_fail("%s: racer %s ran %" PRIu64 " ops in %" PRIu64 " instances (%" PRIu64
			" verified cycles) but never reached its path: degenerate run\n",
			args->name, stress_ksm_unmerge_racers[k].name, rt.ops, count[0], count[3]);
		rc = EXIT_FAILURE;
	}
	return rc;
}

/*
 *  stress_ksm_unmerge()
 *	stress KSM unmerging from a supervised worker
 */
static int stress_ksm_unmerge(stress_args_t *args)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	char path[PATH_MAX];
	pid_t pid;
	int rc, leak;

	if (!sh || !sh->knobs_ok) {
		pr_inf_skip("%s: %s, skipping stressor\n", args->name,
			sh && sh->knob_error[0] ? sh->knob_error :
						  "the KSM knobs could not be set up");
		return EXIT_NO_RESOURCE;
	}
	/* the self-test's probe unmerge failed the very thing under test: a kernel failure */
	if (sh->iface.broken[0] && stress_instance_zero(args))
		pr_fail("%s: %s\n", args->name, sh->iface.broken);
	stress_proc_state_set(args->name, STRESS_STATE_SYNC_WAIT);
	stress_sync_start_wait(args);
	stress_proc_state_set(args->name, STRESS_STATE_RUN);
	if (!(sh->t0 > 0.0))
		/* the instances start together: one clock for the windows */
		sh->t0 = stress_time_now();
	pid = fork();
	if (pid == 0) {
		stress_parent_died_alarm();
		stress_set_oom_adjustment(args, true);
		_exit(stress_ksm_unmerge_worker(args));
	}
	if (pid < 0) {
		pr_inf_skip("%s: fork of the worker failed, errno=%d (%s), skipping stressor\n",
			args->name, errno, strerror(errno));
		rc = EXIT_NO_RESOURCE;
	} else {
		rc = stress_ksm_unmerge_supervise(args, pid);
	}
	/* a killed worker's O_DIRECT temp dir */
	if (stress_fs_temp_dir_args(args, path, sizeof(path)) >= 0)
		(void)shim_rmdir(path);
	if (__atomic_sub_fetch(&sh->running, 1, __ATOMIC_SEQ_CST) == 0) {
		leak = stress_ksm_unmerge_zero_leak_check(args);
		rc = (leak != EXIT_SUCCESS && rc != EXIT_FAILURE) ? leak : rc;
		rc = (stress_ksm_unmerge_rmap_leak_check(args) != EXIT_SUCCESS) ? EXIT_FAILURE : rc;
		stress_ksm_unmerge_bugs_metric(args);
		rc = (stress_ksm_unmerge_reach_check(args) != EXIT_SUCCESS) ? EXIT_FAILURE : rc;
	}
	if (sh->iface.broken[0] && stress_instance_zero(args))
		rc = EXIT_FAILURE;
	stress_proc_state_set(args->name, STRESS_STATE_DEINIT);
	return rc;
}

/* ==== Report: the figures over all instances ==== */

/* pr_inf a line LKP's parser cannot take for a metrics row */
static void FORMAT(printf, 1, 2) stress_ksm_unmerge_report_line(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pr_inf("ksm-unmerge: %s%s\n", buf, stress_ksm_unmerge_lkp_pad(buf));
}

/* qsort: order doubles */
static int stress_ksm_unmerge_double_cmp(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* p50/p95/p99, mean and stdev of one latency over every instance */
static void stress_ksm_unmerge_spread(
	const stress_ksm_unmerge_shared_t *sh, const size_t off, const char *what)
{
	double *v, sum = 0.0, sq = 0.0, mean;
	size_t n = 0, i;

	for (i = 0; i < sh->instances; i++)
		n += ((const stress_ksm_unmerge_lat_t *)(const void *)((const char *)&sh->inst[i] +
			      off))
			     ->count;
	if (!n || !(v = calloc(n, sizeof(*v))))
		return;
	for (n = 0, i = 0; i < sh->instances; i++) {
		const stress_ksm_unmerge_lat_t *lat = (const stress_ksm_unmerge_lat_t *)(const void
				*)((const char *)&sh->inst[i] + off);

		(void)shim_memcpy(v + n, lat->ms, lat->count * sizeof(*v));
		n += lat->count;
	}
	qsort(v, n, sizeof(*v), stress_ksm_unmerge_double_cmp);
	for (i = 0; i < n; i++)
		sum += v[i];
	mean = sum / (double)n;
	for (i = 0; i < n; i++)
		sq += (v[i] - mean) * (v[i] - mean);
	stress_ksm_unmerge_report_line(
		"%s: p50=%.3f p95=%.3f p99=%.3f mean=%.3f stdev=%.3f samples=%zu", what,
		v[(size_t)ceil(0.50 * (double)n) - 1], v[(size_t)ceil(0.95 * (double)n) - 1],
		v[(size_t)ceil(0.99 * (double)n) - 1], mean, shim_sqrt(sq / (double)n), n);
	free(v);
}

/*
 * a line per known kernel bug the run probed or met: what matched, what it left, where it is
 * written up
 */
static void stress_ksm_unmerge_bugs_report(const stress_ksm_unmerge_shared_t *sh)
{
	size_t k;

	for (k = 0; k < KSM_BUGS; k++) {
		const stress_ksm_unmerge_bug_t *bug = &stress_ksm_unmerge_bugs[k];
		const stress_ksm_unmerge_bug_state_t *b = &sh->bug[k];
		char left[96] = "";

		if (b->left >= 0)
			(void)snprintf(left, sizeof(left),
				"; KSM zero pages the run left charged to no process: "
				"%" PRId64,
				b->left);
		if (b->confirmed && stress_ksm_unmerge_bug_fails(sh->method, (int)k))
			stress_ksm_unmerge_report_line(
				"known kernel bug %s: seen (%s)%s; written up in %s (kernels: "
				"%s); racer %s alone fails on it",
				bug->name, b->first, left, bug->writeup, bug->kernels, bug->racer);
		else if (b->confirmed)
			stress_ksm_unmerge_report_line(
				"known kernel bug %s: %" PRIu64 " matching verdict(s), first: "
				"%s%s; written up in %s (kernels: %s); not a failure of this run "
				"(racer %s alone, --ksm-unmerge-method %s, fails on it)%s",
				bug->name, b->hits, b->first, left, bug->writeup, bug->kernels,
				bug->racer, bug->racer,
				(k == KSM_BUG_FORK_ZERO && sh->zero_pages_off) ?
					"; ksmd placed no KSM zero pages in this run "
					"(use_zero_pages=0)" :
					"");
		else if (b->probe == KSM_PROBE_CLEAR)
			stress_ksm_unmerge_report_line(
				"known kernel bug %s: not seen (%s)%s", bug->name, b->first, left);
	}
}

/*
 *  stress_ksm_unmerge_report_width()
 *	what the width did: merge waits by how they ended and their spread, ksmd's
 *	CPU share, the fewest verified cycles, RSS and the KSM-managed bytes
 */
static void stress_ksm_unmerge_report_width(const stress_ksm_unmerge_shared_t *sh)
{
	uint64_t waits[KSM_WAITS] = { 0 }, rmap = 0, rss = 0, rss_max = 0, cycles = 0;
	uint64_t least = UINT64_MAX;
	const int64_t scanned = stress_ksm_unmerge_field(KSM_SYSFS "/pages_scanned", NULL);
	const int64_t full = stress_ksm_unmerge_field(KSM_SYSFS "/full_scans", NULL);
	const double wall = stress_time_now() - sh->ksmd_t0;
	double cpu, rq;
	size_t i, w;

	for (i = 0; i < sh->instances; i++) {
		for (w = 0; w < KSM_WAITS; w++)
			waits[w] += sh->inst[i].waits[w];
		rmap += sh->inst[i].rmap_max;
		rss += sh->inst[i].rss_kb;
		rss_max = STRESS_MAXIMUM(rss_max, sh->inst[i].rss_kb);
		cycles += sh->inst[i].cycles;
		least = STRESS_MINIMUM(least, sh->inst[i].cycles);
	}
	stress_ksm_unmerge_report_line("merge waits: merged=%" PRIu64 ",partial=%" PRIu64
		",starved=%" PRIu64 ",slow=%" PRIu64 ",stuck=%" PRIu64, waits[KSM_WAIT_MERGED],
		waits[KSM_WAIT_PARTIAL], waits[KSM_WAIT_STARVED], waits[KSM_WAIT_SLOW],
		waits[KSM_WAIT_STUCK]);
	stress_ksm_unmerge_spread(sh, offsetof(stress_ksm_unmerge_instance_t, merge_lat),
		"merge wait millisecs per cycle");
	stress_ksm_unmerge_ksmd_time(sh->ksmd_pid, &cpu, &rq);
	if (cpu >= 0.0 && sh->ksmd_cpu0 >= 0.0 && wall > 0.0)
		stress_ksm_unmerge_report_line("ksmd: cpu-share=%.1f%%,cpu-secs=%.2f,"
			"runnable-secs=%.2f,pages-scanned=%" PRId64 ",full-scans=%" PRId64
			",secs=%.1f", 100.0 * (cpu - sh->ksmd_cpu0) / wall, cpu - sh->ksmd_cpu0,
			rq - sh->ksmd_rq0, scanned - sh->scanned0, (full >= sh->full_scans0) ?
			full - sh->full_scans0 : full, wall);
	if (sh->instances)
		stress_ksm_unmerge_report_line("instances: count=%" PRIu32 ",cpus=%" PRId32
			",verified-cycles-min=%" PRIu64 ",verified-cycles-mean=%.1f,"
			"worker-rss-kb-mean=%" PRIu64 ",worker-rss-kb-max=%" PRIu64
			",ksm-managed-bytes=%" PRIu64, sh->instances, stress_cpus_online_get(),
			least, (double)cycles / sh->instances, rss / sh->instances, rss_max,
			rmap * (uint64_t)stress_memory_page_size_get());
}

/*
 *  stress_ksm_unmerge_report()
 *	totals, a line per racer (reached, NOT reached, skipped), latency spreads
 */
static void stress_ksm_unmerge_report(const stress_ksm_unmerge_shared_t *sh)
{
	const uint64_t use = stress_ksm_unmerge_use(sh->method);
	stress_ksm_unmerge_instance_t t;
	uint64_t racer_failures = 0, count[4];
	size_t i, j, k;

	(void)shim_memset(&t, 0, offsetof(stress_ksm_unmerge_instance_t, stop_step));
	for (i = 0; i < sh->instances; i++) {
		const stress_ksm_unmerge_instance_t *st = &sh->inst[i];

		t.cycles += st->cycles;
		t.merge_timeouts += st->merge_timeouts;
		t.partial_merges += st->partial_merges;
		t.failures += st->failures;
		t.pages_merged += st->pages_merged;
		t.pages_zero += st->pages_zero;
		t.cow_ksm += st->cow_ksm;
		for (k = 0; k < KSM_RACERS; k++)
			racer_failures += st->racer[k].failures;
		t.method_cycles[0] += st->method_cycles[0];
		t.method_cycles[1] += st->method_cycles[1];
		t.quiet_cycles += st->quiet_cycles;
	}
	stress_ksm_unmerge_report_line(
		"totals: cycles=%" PRIu64 ",madvise-cycles=%" PRIu64 ",prctl-cycles=%" PRIu64
		",quiet-cycles=%" PRIu64 ",pages-merged=%" PRIu64 ",zero-pages=%" PRIu64
		",pages-unmerged=%" PRIu64 ",cow-ksm-delta=%" PRIu64 ",merge-timeouts=%" PRIu64
		",partial-merges=%" PRIu64 ",failures=%" PRIu64 ",racer-failures=%" PRIu64,
		t.cycles, t.method_cycles[0], t.method_cycles[1], t.quiet_cycles, t.pages_merged,
		t.pages_zero, t.pages_merged, t.cow_ksm, t.merge_timeouts, t.partial_merges,
		t.failures, racer_failures);
	stress_ksm_unmerge_bugs_report(sh);
	for (k = 0; k < KSM_RACERS; k++) {
		const stress_ksm_unmerge_racer_t *r = &stress_ksm_unmerge_racers[k];
		stress_ksm_unmerge_racer_stats_t rt;
		char details[384] = "";
		size_t off = 0;

		if (!(use & KSM_RACER_BIT(k)))
			continue;
		stress_ksm_unmerge_racer_sum(sh, k, &rt, count);
		if (rt.failures)
			off += (size_t)snprintf(
				details, sizeof(details), ",failures=%" PRIu64, rt.failures);
		if (rt.meet_timeouts)
			off += (size_t)snprintf(details + off, sizeof(details) - off,
				",merged-phase-timeouts=%" PRIu64, rt.meet_timeouts);
		for (j = 0; j < KSM_DETAILS && r->details[j] && off < sizeof(details); j++)
			off += (size_t)snprintf(details + off, sizeof(details) - off,
				",%s=%" PRIu64, r->details[j], rt.detail[j]);
		/* how many instances ran it and reached its path, how many the budget left out */
		if (sh->instances > 1 && off < sizeof(details))
			off += (size_t)snprintf(details + off, sizeof(details) - off,
				",instances-reached=%" PRIu64 ",instances-running=%" PRIu64,
				count[1], count[0]);
		if (count[2] && off < sizeof(details))
			off += (size_t)snprintf(details + off, sizeof(details) - off,
				",instances-left-out=%" PRIu64, count[2]);
		if (rt.active && rt.evidence)
			stress_ksm_unmerge_report_line("racer %s reached: ops=%" PRIu64
						       " %s=%" PRIu64 "%s",
				r->name, rt.ops, r->evidence, rt.evidence, details);
		else if (rt.active)
			stress_ksm_unmerge_report_line("racer %s NOT reached: ops=%" PRIu64
						       " %s=0%s (%s)",
				r->name, rt.ops, r->evidence, details,
				rt.reason[0] ? rt.reason : "its path never met a KSM page");
		else
			stress_ksm_unmerge_report_line("racer %s skipped: %s", r->name,
				rt.reason[0] ? rt.reason : "not started");
	}
	stress_ksm_unmerge_spread(sh, offsetof(stress_ksm_unmerge_instance_t, unmerge_lat),
		"unmerge millisecs per cycle");
	stress_ksm_unmerge_spread(sh, offsetof(stress_ksm_unmerge_instance_t, mrelease_lat),
		"mrelease kill-to-reaped millisecs");
	stress_ksm_unmerge_report_width(sh);
}

/* pure: does a run of these switches and racers fork children (KSM_RF_FORKS) */
static bool stress_ksm_unmerge_forks(const uint64_t use)
{
	size_t i;

	for (i = 0; i < KSM_RACERS; i++)
		if ((use & KSM_RACER_BIT(i)) && (stress_ksm_unmerge_racers[i].flags & KSM_RF_FORKS))
			return true;
	return false;
}

/* ==== Init: init/deinit (knobs, probes), exercises, stressor_info_t ==== */

/* each known bug's start probe, in runs whose racers fork: a bug seen there is confirmed at once */
static void stress_ksm_unmerge_bugs_probe(stress_ksm_unmerge_shared_t *sh)
{
	size_t k;

	for (k = 0; k < KSM_BUGS; k++) {
		stress_ksm_unmerge_bug_state_t *b = &sh->bug[k];

		b->probe = KSM_PROBE_NONE;
		b->left = -1;
		if (!stress_ksm_unmerge_forks(stress_ksm_unmerge_use(sh->method)) ||
			!stress_ksm_unmerge_bugs[k].probe)
			continue;
		switch (stress_ksm_unmerge_bugs[k].probe(&sh->iface, b->first, sizeof(b->first))) {
		case 1:
			b->probe = KSM_PROBE_SEEN;
			b->hits = 1;
			b->confirmed = 1;
			break;
		case 0:
			b->probe = KSM_PROBE_CLEAR;
			break;
		default:
			b->first[0] = '\0';
			break;
		}
	}
}

/*
 *  A confirmed fork-zero bug leaks every KSM zero page a forked child
 *  inherits, until reboot.  Where the pattern has no zero pages of its own,
 *  a run's KSM zero pages come only from the racers' other memory (a
 *  merge-any process's stack and heap, forked hundreds of times a minute at
 *  width): ksmd stops placing KSM zero pages for the run, so the default job
 *  leaves the system as it found it.  The zero and mixed patterns and the
 *  fork-zero racer alone keep them, as on a kernel without the bug.
 */
static void stress_ksm_unmerge_zero_pages_off(stress_ksm_unmerge_shared_t *sh)
{
	int ret;

	if (!sh->bug[KSM_BUG_FORK_ZERO].confirmed ||
		stress_ksm_unmerge_bug_fails(sh->method, KSM_BUG_FORK_ZERO) ||
		sh->pattern == KSM_PATTERN_ZERO || sh->pattern == KSM_PATTERN_MIXED)
		return;
	ret = stress_ksm_unmerge_knob_write("use_zero_pages", "0");
	if (ret < 0) {
		pr_inf("ksm-unmerge: cannot set %s/use_zero_pages=0, errno=%d (%s); KSM zero pages "
		       "stay on and the known fork-zero bug may leak them\n",
			KSM_SYSFS, -ret, strerror(-ret));
		return;
	}
	sh->zero_pages_off = true;
}

/*
 *  stress_ksm_unmerge_init()
 *	shared state, run lock, knobs saved and set, self-test, baselines
 */
static void stress_ksm_unmerge_init(const uint32_t instances)
{
	stress_ksm_unmerge_shared_t *sh;
	int ret;

	stress_ksm_unmerge_shared_size =
		sizeof(*sh) + (size_t)instances * sizeof(stress_ksm_unmerge_instance_t);
	sh = stress_mmap_anon_shared(stress_ksm_unmerge_shared_size, PROT_READ | PROT_WRITE);
	if (sh == MAP_FAILED) {
		pr_err("ksm-unmerge: cannot mmap %zu bytes of shared state, errno=%d (%s)\n",
			stress_ksm_unmerge_shared_size, errno, strerror(errno));
		return;
	}
	stress_ksm_unmerge_shared = sh;
	sh->instances = sh->running = instances;
	(void)stress_setting_get("ksm-unmerge-pattern", &sh->pattern);
	(void)stress_setting_get("ksm-unmerge-method", &sh->method);
	sh->ksmd_pid = stress_ksm_unmerge_ksmd_pid();
	sh->mem_avail =
		(uint64_t)STRESS_MAXIMUM(
			stress_ksm_unmerge_field("/proc/meminfo", "MemAvailable"), (int64_t)0) *
		KB;
	ret = stress_ksm_unmerge_lock();
	if (ret < 0) {
		(void)snprintf(sh->knob_error, sizeof(sh->knob_error),
			(ret == -EAGAIN || ret == -EACCES) ?
				"another stress-ksm-unmerge run owns the KSM knobs (%s.lock is "
				"locked)" :
				"cannot create the run lock %s.lock",
			KSM_STATE_FILE);
		return;
	}
	stress_ksm_unmerge_state_repair();
	stress_ksm_unmerge_knobs_save(&sh->saved);
	ret = stress_ksm_unmerge_state_write(&sh->saved);
	if (ret < 0)
		pr_warn("ksm-unmerge: cannot write state file %s, errno=%d (%s); a SIGKILLed run "
			"will not be repaired\n",
			KSM_STATE_FILE, -ret, strerror(-ret));
	if (stress_ksm_unmerge_knobs_set(sh->knob_error, sizeof(sh->knob_error)) < 0) {
		(void)stress_ksm_unmerge_knobs_restore(&sh->saved);
		return;
	}
	sh->knobs_ok = true;
	stress_ksm_unmerge_iface_selftest(&sh->iface);
	/* per-process counts self-tested */
	sh->zero_leak0 = sh->iface.stat_zero ? stress_ksm_unmerge_unheld("ksm_zero_pages") : -1;
	sh->rmap_leak0 = stress_ksm_unmerge_unheld("ksm_rmap_items");
	stress_ksm_unmerge_bugs_probe(sh);
	stress_ksm_unmerge_zero_pages_off(sh);
	stress_ksm_unmerge_ksmd_time(sh->ksmd_pid, &sh->ksmd_cpu0, &sh->ksmd_rq0);
	sh->ksmd_t0 = stress_time_now();
	sh->scanned0 = stress_ksm_unmerge_field(KSM_SYSFS "/pages_scanned", NULL);
	sh->full_scans0 = stress_ksm_unmerge_field(KSM_SYSFS "/full_scans", NULL);
}

/* parent, after the instances: the report, ksmd's last scan, the knobs restored */
static void stress_ksm_unmerge_deinit(void)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;

	if (!sh)
		return;
	if (sh->knobs_ok)
		stress_ksm_unmerge_report(sh);
	if (stress_ksm_unmerge_lock_fd >= 0) {
		if (sh->knobs_ok)
			stress_ksm_unmerge_ksmd_drain(&sh->saved);
		if (stress_ksm_unmerge_knobs_restore(&sh->saved) == 0)
			(void)shim_unlink(KSM_STATE_FILE);
		(void)close(stress_ksm_unmerge_lock_fd);
		stress_ksm_unmerge_lock_fd = -1;
	}
	(void)munmap((void *)sh, stress_ksm_unmerge_shared_size);
	stress_ksm_unmerge_shared = NULL;
}

static const stress_exercises_t exercises[] = {
	STRESS_EX_FEATURE("ksm"),
	STRESS_EX_SYSCALL("madvise"),
	STRESS_EX_SYSCALL("prctl"),
	STRESS_EX_SYSCALL("vmsplice"),
	STRESS_EX_SYSCALL("userfaultfd"),
	STRESS_EX_SYSCALL("process_mrelease"),
	STRESS_EX_SYSCALL("pidfd_open"),
	STRESS_EX_SYSCALL("mremap"),
	STRESS_EX_SYSCALL("mprotect"),
	STRESS_EX_SYSCALL("ptrace"),
	STRESS_EX_LIBRARY("pthread"),
	STRESS_EX_END
};

const stressor_info_t stress_ksm_unmerge_info = {
	.stressor = stress_ksm_unmerge,
	.supported = stress_ksm_unmerge_supported,
	.init = stress_ksm_unmerge_init,
	.deinit = stress_ksm_unmerge_deinit,
	.opts = opts,
	.help = help,
	.exercises = exercises,
	.classifier = CLASS_VM | CLASS_OS,
	.verify = VERIFY_ALWAYS,
};

#else

/* ==== Fallback: the unimplemented stressor ==== */

/* no methods in a build without KSM */
static const char *stress_ksm_unmerge_method(const size_t i)
{
	(void)i;
	return NULL;
}

static const stress_exercises_t exercises[] = {
	STRESS_EX_FEATURE("ksm"),
	STRESS_EX_END
};

const stressor_info_t stress_ksm_unmerge_info = {
	.stressor = stress_unimplemented,
	.opts = opts,
	.help = help,
	.exercises = exercises,
	.classifier = CLASS_VM | CLASS_OS,
	.verify = VERIFY_ALWAYS,
	.unimplemented_reason = "built without MADV_MERGEABLE, prctl or pthread support"
};

#endif
