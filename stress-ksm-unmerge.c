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
 * stress-ksm-unmerge: merge anonymous memory with KSM, unmerge it
 * (break_ksm() via MADV_UNMERGEABLE or PR_SET_MEMORY_MERGE 0), race
 * other kernel paths against the unmerge, and verify every step.
 *
 * Map.  This file holds the options, the types, the page patterns, the
 * MADV/prctl switches, the racer framework and the racer table, one cycle,
 * the main loop, init/deinit and the stressor_info_t.  Private headers,
 * each #included once, in this order:
 *   stress-ksm-unmerge-knobs.h           KSM sysfs knobs: save/set/restore,
 *                                        state file and repair, run lock,
 *                                        supported()
 *   stress-ksm-unmerge-klog.h            kernel-log watcher process
 *   stress-ksm-unmerge-iface.h           proc/sysfs readers, the interface
 *                                        self-test, the page verdict
 *   stress-ksm-unmerge-verify.h          region scan, merge wait, verify_*
 *   stress-ksm-unmerge-check-counters.h  KSM counter sanity checks
 *   stress-ksm-unmerge-racer-*.h         the racers and their helpers
 *   stress-ksm-unmerge-memory.h          memory a run may take (MemAvailable,
 *                                        cgroup limits), region size
 *   stress-ksm-unmerge-report.h          totals, summary, monitor process
 *                                        (progress, soak log, hang check),
 *                                        evidence, standalone YAML
 *
 * One cycle (stress_ksm_unmerge_cycle(), one bogo op): merge on (madvise
 * or prctl) -> wait for ksmd (merge_wait) -> verify_merge -> counter
 * checks -> racers meet the merged pages -> timed unmerge -> racers
 * quiesce -> verify_unmerge -> counter checks -> tally.  init (parent):
 * run lock, knob save/state file, knobs set, interface self-test, klog
 * watcher, monitor; deinit restores the knobs after the report.
 */
#include "stress-ng.h"
#include "core-builtin.h"
#include "core-killpid.h"
#include "core-out-of-memory.h"

#if defined(HAVE_SYS_PRCTL_H)
#include <sys/prctl.h>
#endif

#include <sys/file.h>
#include <sys/ioctl.h>
#include <dirent.h>
#include <sys/klog.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <time.h>

#if defined(HAVE_LINUX_USERFAULTFD_H)
#include <linux/userfaultfd.h>
#endif

#if defined(HAVE_SYS_VFS_H)
#include <sys/vfs.h>
#endif

#if defined(HAVE_LINUX_IO_URING_H)
#include <linux/io_uring.h>
#endif

#define MIN_KSM_UNMERGE_BYTES		(64 * KB)
#define MAX_KSM_UNMERGE_BYTES		(MAX_MEM_LIMIT)
#define DEFAULT_KSM_UNMERGE_BYTES	(64 * MB)

#define KSM_UNMERGE_METHOD_MADVISE	STRESS_BIT_ULL(0)
#define KSM_UNMERGE_METHOD_PRCTL	STRESS_BIT_ULL(1)
#define KSM_UNMERGE_METHOD_SWITCHES	(KSM_UNMERGE_METHOD_MADVISE | \
					 KSM_UNMERGE_METHOD_PRCTL)
#define KSM_UNMERGE_RACER_SHIFT		(8)
#define KSM_UNMERGE_METHOD_ALL		(~0ULL)

static const stress_help_t help[] = {
	{ NULL,	"ksm-unmerge N",	"start N workers merging and unmerging KSM pages" },
	{ NULL,	"ksm-unmerge-bytes N",	"memory to merge/unmerge in total (K, M, G or % of available)" },
	{ NULL,	"ksm-unmerge-hang-timeout S", "report an unmerge or racer step stuck longer than S seconds (default 60)" },
	{ NULL,	"ksm-unmerge-log F",	"append a YAML document with progress figures to file F every interval" },
	{ NULL,	"ksm-unmerge-method M",	"[ all | madvise | prctl | vmsplice | gup | uffd-wp | mrelease | fork | mprotect | dontneed | sparse | thp | signal | mremap | uffd-minor | prctl-exec ] merge switches and racers to run, a comma list (default all)" },
	{ NULL,	"ksm-unmerge-no-klog",	"do not watch the kernel log for warnings" },
	{ NULL,	"ksm-unmerge-ops N",	"stop after N verified merge/unmerge cycles" },
	{ NULL,	"ksm-unmerge-pattern P", "page contents: same, few, zero, mixed or unique" },
	{ NULL,	"ksm-unmerge-sparse-bytes N", "address space of the sparse racer's range (default 16G)" },
	{ NULL,	"ksm-unmerge-proc D",	"read per-process KSM counters from D/self instead of /proc (tests fallbacks)" },
	{ NULL,	"ksm-unmerge-progress S", "print a progress line every S seconds (default 60 in runs of 10 minutes or more)" },
	{ NULL,	"ksm-unmerge-stop-on-warn", "stop the run at the first kernel warning or hang, keeping the evidence" },
	{ NULL,	NULL,			NULL }
};

/*
 *  Racer names, in method-bit order after the two merge switches;
 *  the implementations and their table are further down.
 */
static const char * const stress_ksm_unmerge_racer_names[] = {
	"vmsplice",
	"gup",
	"uffd-wp",
	"mrelease",
	"fork",
	"mprotect",
	"dontneed",
	"sparse",
	"thp",
	"signal",
	"mremap",
	"uffd-minor",
	"prctl-exec",
};

#define KSM_UNMERGE_RACERS	(SIZEOF_ARRAY(stress_ksm_unmerge_racer_names))

/* Racer indexes, in the order of the names above */
enum {
	KSM_RACER_IDX_VMSPLICE = 0,
	KSM_RACER_IDX_GUP,
	KSM_RACER_IDX_UFFD_WP,
	KSM_RACER_IDX_MRELEASE,
	KSM_RACER_IDX_FORK,
	KSM_RACER_IDX_MPROTECT,
	KSM_RACER_IDX_DONTNEED,
	KSM_RACER_IDX_SPARSE,
	KSM_RACER_IDX_THP,
	KSM_RACER_IDX_SIGNAL,
	KSM_RACER_IDX_MREMAP,
	KSM_RACER_IDX_UFFD_MINOR,
	KSM_RACER_IDX_PRCTL_EXEC,
};

/*
 *  stress_ksm_unmerge_method_bit()
 *	map one method name to its bit, 0 if unknown
 */
static uint64_t stress_ksm_unmerge_method_bit(const char *name)
{
	size_t i;

	if (!strcmp(name, "all"))
		return KSM_UNMERGE_METHOD_ALL;
	if (!strcmp(name, "madvise"))
		return KSM_UNMERGE_METHOD_MADVISE;
	if (!strcmp(name, "prctl"))
		return KSM_UNMERGE_METHOD_PRCTL;
	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		if (!strcmp(name, stress_ksm_unmerge_racer_names[i]))
			return STRESS_BIT_ULL(KSM_UNMERGE_RACER_SHIFT + i);
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_method_parse()
 *	parse a comma separated method list into a bit mask, 0 on error
 */
static uint64_t stress_ksm_unmerge_method_parse(const char *str, const char **bad)
{
	char buf[256];
	char *tok, *saveptr = NULL;
	uint64_t mask = 0;

	*bad = str;
	if (!str || !*str || strlen(str) >= sizeof(buf))
		return 0;
	(void)strlcpy(buf, str, sizeof(buf));
	for (tok = strtok_r(buf, ",", &saveptr); tok; tok = strtok_r(NULL, ",", &saveptr)) {
		const uint64_t bit = stress_ksm_unmerge_method_bit(tok);

		if (!bit) {
			*bad = str + (tok - buf);
			return 0;
		}
		mask |= bit;
	}
	/* "a,,b" or trailing commas leave empty tokens that strtok skips */
	if (strstr(str, ",,") || str[0] == ',' || str[strlen(str) - 1] == ',')
		return 0;
	return mask;
}

/*
 *  stress_ksm_unmerge_method_opt()
 *	option callback for --ksm-unmerge-method: validates the list
 */
static void stress_ksm_unmerge_method_opt(const char *opt_name, const char *opt_arg,
	stress_type_id_t *type_id, void *value)
{
	const char *bad = opt_arg;
	const uint64_t mask = stress_ksm_unmerge_method_parse(opt_arg, &bad);
	size_t i;

	if (!mask) {
		(void)fprintf(stderr, "%s: invalid method '%s', choose from madvise, prctl,", opt_name, opt_arg);
		for (i = 0; i < KSM_UNMERGE_RACERS; i++)
			(void)fprintf(stderr, " %s,", stress_ksm_unmerge_racer_names[i]);
		(void)fprintf(stderr, " all (comma separated)\n");
		longjmp(g_error_env, 1);
	}
	*type_id = TYPE_ID_UINT64;
	*(uint64_t *)value = mask;
}

static const char *stress_ksm_unmerge_log_arg;	/* --ksm-unmerge-log, NULL if none */

/*
 *  stress_ksm_unmerge_log_opt()
 *	option callback for --ksm-unmerge-log: a log that cannot be written is
 *	refused before anything starts (an existing file must open for
 *	appending, a new one needs a writable directory; nothing is created)
 */
static void stress_ksm_unmerge_log_opt(const char *opt_name, const char *opt_arg,
	stress_type_id_t *type_id, void *value)
{
	char dir[PATH_MAX];
	const char *slash;
	struct stat st;
	int fd, err = 0;

	(void)type_id;
	(void)value;
	if (!opt_arg || !*opt_arg) {
		err = ENOENT;
	} else if (stat(opt_arg, &st) == 0) {
		fd = open(opt_arg, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd < 0)
			err = errno;
		else
			(void)close(fd);
	} else if (errno != ENOENT) {
		err = errno;
	} else {
		slash = strrchr(opt_arg, '/');
		(void)snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - opt_arg) + 1 : 1,
			slash ? opt_arg : ".");
		if (access(dir, W_OK | X_OK) < 0)
			err = errno;
	}
	if (err) {
		(void)fprintf(stderr, "%s: cannot write soak log '%s', errno=%d (%s)\n",
			opt_name, opt_arg ? opt_arg : "", err, strerror(err));
		longjmp(g_error_env, 1);
	}
	stress_ksm_unmerge_log_arg = opt_arg;	/* argv outlives the run */
}

enum {
	KSM_UNMERGE_PATTERN_SAME = 0,
	KSM_UNMERGE_PATTERN_FEW,
	KSM_UNMERGE_PATTERN_ZERO,
	KSM_UNMERGE_PATTERN_MIXED,
	KSM_UNMERGE_PATTERN_UNIQUE,
};

static const char * const stress_ksm_unmerge_patterns[] = {
	"same", "few", "zero", "mixed", "unique",
};

/*
 *  stress_ksm_unmerge_pattern()
 *	return pattern name i, NULL when past the end
 */
static const char *stress_ksm_unmerge_pattern(const size_t i)
{
	return (i < SIZEOF_ARRAY(stress_ksm_unmerge_patterns)) ?
		stress_ksm_unmerge_patterns[i] : NULL;
}

/*
 *  stress_ksm_unmerge_pattern_zero()
 *	does the pattern have zero pages for KSM's use_zero_pages mode
 */
static inline bool stress_ksm_unmerge_pattern_zero(const int pattern)
{
	return (pattern == KSM_UNMERGE_PATTERN_ZERO) || (pattern == KSM_UNMERGE_PATTERN_MIXED);
}

static const stress_opt_t opts[] = {
	{ OPT_ksm_unmerge_bytes,   "ksm-unmerge-bytes",   TYPE_ID_SIZE_T_BYTES_VM, MIN_KSM_UNMERGE_BYTES, MAX_KSM_UNMERGE_BYTES, NULL },
	{ OPT_ksm_unmerge_hang_timeout, "ksm-unmerge-hang-timeout", TYPE_ID_UINT32, 1, 86400, NULL },
	{ OPT_ksm_unmerge_log,     "ksm-unmerge-log",     TYPE_ID_CALLBACK, 0, 0, (void *)stress_ksm_unmerge_log_opt },
	{ OPT_ksm_unmerge_method,  "ksm-unmerge-method",  TYPE_ID_CALLBACK, 0, 0, stress_ksm_unmerge_method_opt },
	{ OPT_ksm_unmerge_no_klog, "ksm-unmerge-no-klog", TYPE_ID_BOOL, 0, 1, NULL },
	{ OPT_ksm_unmerge_pattern, "ksm-unmerge-pattern", TYPE_ID_SIZE_T_METHOD, 0, 0, stress_ksm_unmerge_pattern },
	{ OPT_ksm_unmerge_sparse_bytes, "ksm-unmerge-sparse-bytes", TYPE_ID_SIZE_T_BYTES, 1 * MB, MAX_48, NULL },
	{ OPT_ksm_unmerge_proc,    "ksm-unmerge-proc",    TYPE_ID_STR, 0, 0, NULL },
	{ OPT_ksm_unmerge_progress, "ksm-unmerge-progress", TYPE_ID_UINT32, 1, 86400, NULL },
	{ OPT_ksm_unmerge_stop_on_warn, "ksm-unmerge-stop-on-warn", TYPE_ID_BOOL, 0, 1, NULL },
	END_OPT,
};

#if defined(__linux__) &&		\
    defined(HAVE_MADVISE) &&		\
    defined(MADV_MERGEABLE) &&		\
    defined(MADV_UNMERGEABLE)

#if !defined(PR_SET_MEMORY_MERGE)
#define PR_SET_MEMORY_MERGE		(67)
#endif
#if !defined(PR_GET_MEMORY_MERGE)
#define PR_GET_MEMORY_MERGE		(68)
#endif

/* Paths of the global KSM state; variables so unit tests can point them elsewhere */
static const char *stress_ksm_unmerge_sysfs = "/sys/kernel/mm/ksm";
static const char *stress_ksm_unmerge_state_file = "/run/stress-ksm-unmerge.state";

#define KSM_SYSFS			stress_ksm_unmerge_sysfs
#define KSM_STATE_FILE			stress_ksm_unmerge_state_file
#define KSM_UNMERGE_MAX_FAILURES	(5)
#define KSM_UNMERGE_LAT_SAMPLES		(4096)
#define KSM_UNMERGE_FEW_TEMPLATES	(8)
#define KSM_UNMERGE_PM_CHUNK		(4096)	/* pagemap entries read at a time */
#define KSM_UNMERGE_CALL_BYTES		(128 * MB)	/* madvise unmerge: bytes per call */
#define KSM_UNMERGE_FILL_PAGES		(16384)	/* pages filled between stop checks */
#define KSM_UNMERGE_TEARDOWN_RATE	(3 * GB)	/* bytes/s unmapped at exit, measured low end */
#define KSM_UNMERGE_TEARDOWN_FREE	(1 * GB)	/* regions up to this unmap in < 0.4 s */

#define PM_PRESENT			STRESS_BIT_ULL(63)
#define PM_PFN_MASK			((1ULL << 55) - 1)
#define PM_UFFD_WP			STRESS_BIT_ULL(57)
#define PM_EXCLUSIVE			STRESS_BIT_ULL(56)
#define PM_SWAP				STRESS_BIT_ULL(62)
#define KPF_BIT_KSM			(21)
#define KPF_BIT_ZERO_PAGE		(24)

/* Where the instance reads how much of its memory is merged */
enum {
	KSM_COUNTERS_NONE = 0,
	KSM_COUNTERS_KSM_STAT,		/* /proc/self/ksm_stat (6.1+) */
	KSM_COUNTERS_MERGING_PAGES,	/* /proc/self/ksm_merging_pages (5.19+) */
	KSM_COUNTERS_PAGEMAP,		/* pagemap + kpageflags (root) */
};

static const char * const stress_ksm_unmerge_counter_names[] = {
	"none", "ksm_stat", "ksm_merging_pages", "pagemap",
};

/* Kernel interfaces the verdicts use, self-tested once per run */
enum {
	KSM_IFACE_ZERO_PAGE = 0,	/* which page is the zero page */
	KSM_IFACE_KPF_KSM,		/* /proc/kpageflags KPF_KSM */
	KSM_IFACE_PFNS,			/* pagemap PFNs */
	KSM_IFACE_KSM_STAT,		/* /proc/self/ksm_stat fields */
	KSM_IFACE_COW_KSM,		/* /proc/vmstat cow_ksm */
	KSM_IFACES,
};

static const char * const stress_ksm_unmerge_iface_names[] = {
	"zero-page", "kpageflags-ksm", "pfns", "ksm_stat", "cow_ksm",
};

/* What the interface self-test saw: raw pagemap/kpageflags words and counters */
typedef struct {
	int kver;			/* kernel major * 100 + minor */
	bool pagemap;			/* /proc/self/pagemap readable */
	bool kpageflags;		/* /proc/kpageflags readable */
	uint64_t rf[2], rf_flags[2];	/* two read-faulted pages of a fresh mapping */
	uint64_t fresh, fresh_flags;	/* a written page KSM never saw */
	int merged;			/* probe merge: 1 merged, 0 did not, -1 not run */
	uint64_t mg[2], mg_flags[2];	/* two identical pages after the probe merge */
	bool zp_valid;			/* a zero-filled page was merged (use_zero_pages=1) */
	uint64_t zp, zp_flags;		/* that page */
	uint64_t ksm_pages;		/* pages on a shared KSM pfn the probe unmerge broke */
	int64_t cow_before, cow_after;	/* cow_ksm around the probe unmerge, -1 absent */
	bool stat;			/* /proc/self/ksm_stat exists */
	bool stat_merging, stat_zero;	/* its ksm_merging_pages, ksm_zero_pages lines */
	bool merging_pages;		/* /proc/self/ksm_merging_pages exists */
} stress_ksm_unmerge_iface_obs_t;

/* The self-test's verdict: which signals the verdicts may use */
typedef struct {
	bool tested;			/* the self-test ran */
	bool pfns;			/* pagemap gives real PFNs */
	bool kpageflags;		/* /proc/kpageflags readable */
	bool kpf_zero;			/* KPF_ZERO_PAGE names the zero page */
	bool kpf_ksm;			/* KPF_KSM is set on KSM pages only */
	bool excl;			/* pagemap bit 56 is set on a private page */
	bool read_fault_zero;		/* a read fault maps the shared zero page */
	bool zero_unshare;		/* unmerge unshares KSM zero pages (6.4+) */
	uint64_t zero_pfn;		/* a zero page pfn seen shared and non-exclusive, 0 none */
	bool stat_merging, stat_zero;	/* ksm_stat has ksm_merging_pages, ksm_zero_pages */
	bool merging_pages;		/* /proc/self/ksm_merging_pages exists */
	bool cow_ksm;			/* cow_ksm counts unshared KSM pages */
	bool trusted[KSM_IFACES];
	char why[KSM_IFACES][160];	/* the kernel behaviour, when not trusted */
	char use[KSM_IFACES][160];	/* what is used (instead) */
} stress_ksm_unmerge_iface_t;

/* What one page is, from the trusted signals */
enum {
	KSM_PAGE_ABSENT = 0,		/* not mapped */
	KSM_PAGE_SWAPPED,		/* swapped out (pagemap bit 62) */
	KSM_PAGE_PRIVATE,		/* a private anonymous page */
	KSM_PAGE_KSM,			/* a KSM page */
	KSM_PAGE_ZERO,			/* the (or a) shared zero page */
};

/* Phases of one cycle, seen by racers */
enum {
	KSM_PHASE_IDLE = 0,
	KSM_PHASE_MERGING,
	KSM_PHASE_MERGED,
	KSM_PHASE_UNMERGING,
	KSM_PHASE_VERIFY,
};

static const char * const stress_ksm_unmerge_phase_names[] = {
	"idle", "merging", "merged", "unmerging", "verify",
};

/* KSM knobs the stressor saves, sets and restores */
static const char * const stress_ksm_unmerge_knob_names[] = {
	"run",
	"pages_to_scan",
	"sleep_millisecs",
	"use_zero_pages",
	"max_page_sharing",
	"merge_across_nodes",
	"smart_scan",
	"advisor_mode",		/* last: restored after pages_to_scan (6.8+) */
};

#define KSM_KNOBS	(SIZEOF_ARRAY(stress_ksm_unmerge_knob_names))

typedef struct {
	char value[KSM_KNOBS][32];	/* saved value per knob, "" = absent */
} stress_ksm_unmerge_knobs_t;

/* Ring of the most recent latency samples, in shared memory */
typedef struct {
	uint32_t count;			/* samples held */
	uint64_t total;			/* samples taken */
	double ms[KSM_UNMERGE_LAT_SAMPLES];
} stress_ksm_unmerge_lat_t;

#define KSM_RACER_DETAILS	(4)	/* named counters a racer may add to its line */

/* Per racer figures, in shared memory so they survive a killed child */
typedef struct {
	uint64_t ops;			/* racer operations */
	uint64_t evidence;		/* kernel-side evidence it reached its path */
	uint64_t failures;		/* verification failures */
	uint64_t aux;			/* racer specific second counter */
	uint64_t meet_timeouts;		/* merged phases that did not wait for it */
	uint64_t detail[KSM_RACER_DETAILS];	/* racer's own counters, named in racer_details[] */
	bool active;			/* racer was started */
	bool skipped;			/* racer could not run here */
	char reason[96];		/* why skipped or not reached */
} stress_ksm_unmerge_racer_stats_t;

/* Per instance figures, in shared memory */
typedef struct {
	uint64_t cycles;		/* verified cycles */
	uint64_t merge_timeouts;	/* merges that did not complete in time */
	uint64_t partial_merges;	/* merges short of the prediction */
	uint64_t pages_merged;		/* pages seen merged before unmerge */
	uint64_t pages_zero;		/* of which KSM zero pages */
	uint64_t pages_unmerged;	/* pages unshared by the timed unmerge */
	uint64_t cow_ksm;		/* cow_ksm delta over timed unmerges */
	uint64_t failures;		/* verification failures */
	uint64_t method_cycles[2];	/* cycles per merge switch */
	double unmerge_secs;		/* time inside the timed unmerge calls */
	double merge_wait_secs;		/* time waiting for ksmd */
	uint64_t unmerge_calls;		/* timed unmerge calls (madvise is chunked) */
	uint64_t unmerge_cycles;	/* cycles with a timed unmerge */
	double stopped_at;		/* when the instance's cycle loop ended, 0 if not yet */
	char stop_step[32];		/* step a stop interrupted, "" none */
	stress_ksm_unmerge_lat_t unmerge_lat;	/* timed unmerge call, ms */
	stress_ksm_unmerge_lat_t mrelease_lat;	/* mrelease racer kill-to-reaped, ms */
	volatile int phase;		/* current phase, for the kernel-log context */
	volatile double phase_since;	/* when the phase began */
	volatile pid_t pid;		/* instance pid, for the monitor */
	uint64_t hangs;			/* steps the monitor saw stuck */
	bool hang_reported;		/* current stuck step already reported */
	stress_ksm_unmerge_racer_stats_t racer[KSM_UNMERGE_RACERS];
} stress_ksm_unmerge_instance_t;

/* State shared between the parent (init/deinit) and all instances */
typedef struct {
	uint32_t instances;
	bool knobs_ok;			/* knobs were set for the run */
	char knob_error[128];		/* why not */
	int pattern;
	uint64_t methods;
	double start_time;
	double end_time;		/* start + timeout, 0 if none */
	uint32_t hang_timeout;		/* seconds */
	uint32_t progress;		/* progress interval, seconds, 0 off */
	bool stop_on_warn;
	volatile bool stopping;		/* monitor stopped the run */
	pid_t monitor_pid;
	char log_path[PATH_MAX];
	uint32_t log_elapsed;		/* soak log intervals that ended */
	uint32_t log_written;		/* of them, in the file (written and fsynced) */
	uint32_t log_lost;		/* of them, dropped: the backlog overflowed */
	uint32_t log_pending;		/* of them, waiting for a retry */
	int log_errno;			/* last write/fsync error, 0 none */
	volatile uint32_t log_sync_req;	/* an instance asks the monitor to retry now */
	volatile uint32_t log_sync_done;	/* last request the monitor served */
	uint64_t rss_growth_kb;		/* largest RSS growth of an instance between two intervals */
	uint64_t mem_avail;		/* MemAvailable before the instances started */
	char proc_root[PATH_MAX];	/* --ksm-unmerge-proc, "" = /proc */
	stress_ksm_unmerge_knobs_t saved;
	stress_ksm_unmerge_iface_t iface;	/* interface self-test, from init */
	bool klog_unavail;		/* the kernel-log watcher could not start */
	volatile bool disagree_reported;	/* signal disagreement already printed */
	stress_ksm_unmerge_instance_t inst[];
} stress_ksm_unmerge_shared_t;

static stress_ksm_unmerge_shared_t *stress_ksm_unmerge_shared;
static size_t stress_ksm_unmerge_shared_size;
static int stress_ksm_unmerge_lock_fd = -1;

struct stress_ksm_unmerge_ctx;

/* One racer: started before the first cycle, stopped after the last */
typedef struct {
	const char *name;
	const char *path;		/* kernel path it covers */
	const char *evidence;		/* what its evidence counter counts */
	int (*supported)(char *reason, const size_t len);
	int (*start)(struct stress_ksm_unmerge_ctx *ctx, const size_t idx);
	void (*stop)(struct stress_ksm_unmerge_ctx *ctx, const size_t idx);
	void (*cycle)(struct stress_ksm_unmerge_ctx *ctx, const size_t idx, const int phase);
	void (*restore)(struct stress_ksm_unmerge_ctx *ctx, const size_t idx);	/* main thread, all parked */
} stress_ksm_unmerge_racer_t;

/* Per racer private run state inside an instance */
typedef struct {
	pthread_t thread;		/* racer thread, if any */
	bool thread_running;
	pid_t pid;			/* racer child, if any */
	void *priv;			/* racer private data */
	volatile uint64_t quiesced;	/* last cycle the racer parked for */
	void *(*fn)(void *);		/* racer thread function */
	struct stress_ksm_unmerge_ctx *ctx;	/* its argument */
	volatile bool thread_done;	/* fn returned: nothing left to park */
	bool meets;			/* the merged phase waits for this racer */
	volatile uint64_t met;		/* last cycle it began an op on merged pages */
} stress_ksm_unmerge_racer_run_t;

/* Per instance context */
typedef struct stress_ksm_unmerge_ctx {
	stress_args_t *args;
	stress_ksm_unmerge_instance_t *st;	/* this instance's shared figures */
	uint8_t *region;		/* the merged/unmerged region */
	size_t region_size;
	size_t npages;
	size_t page_size;
	int pattern;
	uint64_t methods;
	uint64_t seed;			/* per instance seed for unique pages */
	uint8_t *templates;		/* template pages for same/few */
	uint64_t *pagemap;		/* pagemap scratch, KSM_UNMERGE_PM_CHUNK entries */
	uint64_t *pfns;			/* present pfns, sorted by region_scan */
	int pagemap_fd;
	int kpageflags_fd;
	int ksm_stat_fd;		/* /proc/self/ksm_stat, -1 if missing */
	int merging_pages_fd;		/* /proc/self/ksm_merging_pages, -1 if missing */
	int full_scans_fd;
	int vmstat_fd;
	uint64_t zero_pfn;		/* pfn of the shared zero page, 0 unknown */
	const stress_ksm_unmerge_iface_t *iface;	/* self-tested signals */
	size_t scan_n;			/* entries region_collect left in pfns */
	size_t scan_swapped;		/* swapped-out pages it saw */
	bool wait_timed_out;		/* the last merge wait hit its time bound */
	int counters;			/* KSM_COUNTERS_* source for merge waits */
	struct {
		uint64_t cycle;		/* cycle whose merge wait ended on this scan, 0 none */
		uint64_t ksm, zero;
		size_t present;
	} last_scan;			/* the wait's final region scan, reused by verify_merge */
	bool ksm_zero;			/* use_zero_pages is on: zero pfn = KSM zero page */
	bool have_pfns;			/* pagemap gives real PFNs (root) */
	bool verify;			/* --verify: check every page */
	uint64_t expect_merged;		/* predicted KSM pages (not zero pages) */
	uint64_t expect_zero;		/* predicted KSM zero pages */
	char vmflags_before[256];
	volatile int phase;		/* KSM_PHASE_* */
	volatile uint64_t cycle;	/* cycle number */
	volatile uint64_t quiesce;	/* cycle for which racers must park */
	volatile bool racers_stop;	/* racers must exit */
	uint64_t racers_mask;		/* racers started */
	char racers_str[128];		/* their names, for the kernel-log context */
	bool racers_disturb_counts;	/* racers can block or break merges */
	bool racers_disturb_layout;	/* racers change VMAs or discard pages */
	size_t racers_touch_npages;	/* racers that read/write pages stay below this (0 = npages) */
	stress_ksm_unmerge_racer_run_t run[KSM_UNMERGE_RACERS];
	bool stopped;			/* a step gave up because the run is ending */
	double t_start;			/* when the instance started (before the fill) */
	double teardown_secs;		/* time to unmap the region, 0 when negligible */
	size_t filled;			/* pages filled so far (npages when done) */
} stress_ksm_unmerge_ctx_t;

#include "stress-ksm-unmerge-knobs.h"

#include "stress-ksm-unmerge-klog.h"

/* What one page holds under the chosen pattern */
enum {
	KSM_KIND_SAME = 0,
	KSM_KIND_FEW,
	KSM_KIND_ZERO,
	KSM_KIND_UNIQUE,
};

/*
 *  stress_ksm_unmerge_page_kind()
 *	content class of page i under pattern
 */
static int stress_ksm_unmerge_page_kind(const int pattern, const size_t i)
{
	static const int mixed[4] = {
		KSM_KIND_SAME, KSM_KIND_FEW, KSM_KIND_ZERO, KSM_KIND_UNIQUE
	};

	switch (pattern) {
	case KSM_UNMERGE_PATTERN_SAME:
		return KSM_KIND_SAME;
	case KSM_UNMERGE_PATTERN_FEW:
		return KSM_KIND_FEW;
	case KSM_UNMERGE_PATTERN_ZERO:
		return KSM_KIND_ZERO;
	case KSM_UNMERGE_PATTERN_UNIQUE:
		return KSM_KIND_UNIQUE;
	default:
		return mixed[i & 3];
	}
}

/*
 *  stress_ksm_unmerge_template()
 *	template page for same (t = 0) and few (t = 1..8) pages
 */
static const uint8_t *stress_ksm_unmerge_template(const stress_ksm_unmerge_ctx_t *ctx,
	const int kind, const size_t i)
{
	const size_t t = (kind == KSM_KIND_SAME) ? 0 : 1 + (i % KSM_UNMERGE_FEW_TEMPLATES);

	return ctx->templates + t * ctx->page_size;
}

/*
 *  stress_ksm_unmerge_templates_fill()
 *	fill the template pages: same for every instance, so they merge across
 */
static void stress_ksm_unmerge_templates_fill(stress_ksm_unmerge_ctx_t *ctx)
{
	const size_t words = ctx->page_size / sizeof(uint64_t);
	size_t t, w;

	for (t = 0; t <= KSM_UNMERGE_FEW_TEMPLATES; t++) {
		uint64_t *page = (uint64_t *)(ctx->templates + t * ctx->page_size);

		for (w = 0; w < words; w++)
			page[w] = 0x6b736d756e6d7267ULL ^ ((t + 1) * 0x9e3779b97f4a7c15ULL) ^ w;
	}
}

/*
 *  stress_ksm_unmerge_unique_word()
 *	word w of unique page i: distinct per instance, page and word
 */
static inline uint64_t stress_ksm_unmerge_unique_word(const stress_ksm_unmerge_ctx_t *ctx,
	const size_t i, const size_t w)
{
	return ctx->seed ^ ((uint64_t)i << 24) ^ (uint64_t)w ^ 0x8000000000000000ULL;
}

/*
 *  stress_ksm_unmerge_page_fill()
 *	write the pattern's bytes into page i
 */
static void stress_ksm_unmerge_page_fill(const stress_ksm_unmerge_ctx_t *ctx,
	const size_t i, uint8_t *page)
{
	const int kind = stress_ksm_unmerge_page_kind(ctx->pattern, i);
	size_t w;

	switch (kind) {
	case KSM_KIND_ZERO:
		(void)shim_memset(page, 0, ctx->page_size);
		break;
	case KSM_KIND_UNIQUE:
		for (w = 0; w < ctx->page_size / sizeof(uint64_t); w++)
			((uint64_t *)page)[w] = stress_ksm_unmerge_unique_word(ctx, i, w);
		break;
	default:
		(void)shim_memcpy(page, stress_ksm_unmerge_template(ctx, kind, i), ctx->page_size);
		break;
	}
}

/*
 *  stress_ksm_unmerge_page_check()
 *	byte offset of the first wrong byte in page i, -1 if intact
 */
static ssize_t stress_ksm_unmerge_page_check(const stress_ksm_unmerge_ctx_t *ctx,
	const size_t i, const uint8_t *page)
{
	const int kind = stress_ksm_unmerge_page_kind(ctx->pattern, i);
	const uint64_t *p = (const uint64_t *)page;
	const size_t words = ctx->page_size / sizeof(uint64_t);
	size_t w;

	if (kind == KSM_KIND_SAME || kind == KSM_KIND_FEW) {
		const uint8_t *t = stress_ksm_unmerge_template(ctx, kind, i);

		if (!shim_memcmp(page, t, ctx->page_size))
			return -1;
		for (w = 0; w < ctx->page_size; w++)
			if (page[w] != t[w])
				return (ssize_t)w;
	}
	for (w = 0; w < words; w++) {
		const uint64_t want = (kind == KSM_KIND_ZERO) ? 0 :
			stress_ksm_unmerge_unique_word(ctx, i, w);
		size_t b;

		if (p[w] == want)
			continue;
		for (b = 0; b < sizeof(want); b++)
			if (page[w * sizeof(want) + b] != ((const uint8_t *)&want)[b])
				break;
		return (ssize_t)(w * sizeof(want) + b);
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_expect()
 *	predict how many pages ksmd must merge (KSM pages and zero pages)
 */
static void stress_ksm_unmerge_expect(stress_ksm_unmerge_ctx_t *ctx)
{
	size_t i;

	ctx->expect_merged = 0;
	ctx->expect_zero = 0;
	for (i = 0; i < ctx->npages; i++) {
		switch (stress_ksm_unmerge_page_kind(ctx->pattern, i)) {
		case KSM_KIND_SAME:
		case KSM_KIND_FEW:
			ctx->expect_merged++;
			break;
		case KSM_KIND_ZERO:
			ctx->expect_zero++;
			break;
		default:
			break;
		}
	}
}

/*
 *  stress_ksm_unmerge_ending()
 *	stopped, or so close to the timeout that freeing the region would
 *	end after it (gigabytes take seconds to unmap)
 */
static bool stress_ksm_unmerge_ending(const stress_ksm_unmerge_ctx_t *ctx)
{
	if (!stress_continue(ctx->args))
		return true;
	return ctx->teardown_secs > 0.0 &&
	       stress_time_now() + ctx->teardown_secs >= ctx->args->time_end;
}

/*
 *  stress_ksm_unmerge_stop_seen()
 *	the run is ending: note which step gave up (the cycle is not counted)
 */
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

#include "stress-ksm-unmerge-iface.h"

/*
 *  stress_ksm_unmerge_vmflags()
 *	smaps VmFlags of the VMA at addr, without the "mg" flag; -1 if not found
 */
static int stress_ksm_unmerge_vmflags(const void *addr, char *out, const size_t len)
{
	char line[512], start[32];
	FILE *fp;
	bool in_vma = false;
	int ret = -1;

	(void)snprintf(start, sizeof(start), "%lx-", (unsigned long)(uintptr_t)addr);
	fp = fopen("/proc/self/smaps", "re");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		if (!in_vma) {
			in_vma = !strncmp(line, start, strlen(start));
			continue;
		}
		if (!strncmp(line, "VmFlags:", 8)) {
			char *tok, *saveptr = NULL;
			size_t off = 0;

			out[0] = '\0';
			for (tok = strtok_r(line + 8, " \n", &saveptr); tok; tok = strtok_r(NULL, " \n", &saveptr)) {
				if (!strcmp(tok, "mg"))
					continue;
				off += (size_t)snprintf(out + off, len - off, "%s ", tok);
				if (off >= len)
					break;
			}
			ret = 0;
			break;
		}
	}
	(void)fclose(fp);
	return ret;
}

/*
 *  stress_ksm_unmerge_switch_name()
 *	name of the merge switch for a cycle
 */
static const char *stress_ksm_unmerge_switch_name(const uint64_t sw)
{
	return (sw == KSM_UNMERGE_METHOD_PRCTL) ? "prctl" : "madvise";
}

/*
 *  stress_ksm_unmerge_switch()
 *	turn merging on or off with madvise or prctl (explicit zero args)
 */
static int stress_ksm_unmerge_switch(stress_ksm_unmerge_ctx_t *ctx, const uint64_t sw, const bool on)
{
	if (sw == KSM_UNMERGE_METHOD_PRCTL)
		return prctl(PR_SET_MEMORY_MERGE, on ? 1UL : 0UL, 0UL, 0UL, 0UL);
	return madvise(ctx->region, ctx->region_size, on ? MADV_MERGEABLE : MADV_UNMERGEABLE);
}

/*
 *  stress_ksm_unmerge_switch_off_range()
 *	one unmerge call: madvise of [off, off + len) of the region, or prctl (whole mm)
 */
static int stress_ksm_unmerge_switch_off_range(stress_ksm_unmerge_ctx_t *ctx, const uint64_t sw,
	const size_t off, const size_t len)
{
	if (sw == KSM_UNMERGE_METHOD_PRCTL)
		return prctl(PR_SET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL);
	return madvise(ctx->region + off, len, MADV_UNMERGEABLE);
}

/*
 *  stress_ksm_unmerge_prctl_check()
 *	prctl merge-any must read back as set (a garbage-argument prctl does not)
 */
static int stress_ksm_unmerge_prctl_check(stress_ksm_unmerge_ctx_t *ctx, const int want)
{
	const int got = prctl(PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL);

	if (got != want) {
		pr_fail("%s: PR_GET_MEMORY_MERGE returned %d (errno=%d), expected %d\n",
			ctx->args->name, got, got < 0 ? errno : 0, want);
		return -1;
	}
	return 0;
}

#include "stress-ksm-unmerge-verify.h"

#include "stress-ksm-unmerge-check-counters.h"

/*
 *  Racers.  Each races one kernel path against the merge/unmerge cycle on
 *  the same memory.  A racer thread calls stress_ksm_unmerge_racer_park()
 *  in its loop: while the cycle verifies, every racer is parked, so what is
 *  checked is what the kernel left, not what a racer is writing.
 */

/*
 *  stress_ksm_unmerge_racer_stats()
 *	shared figures of racer idx in this instance
 */
static inline stress_ksm_unmerge_racer_stats_t *stress_ksm_unmerge_racer_stats(
	stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	return &ctx->st->racer[idx];
}

/*
 *  stress_ksm_unmerge_racer_park()
 *	racer thread: park while the cycle verifies; true if it parked
 */
static bool stress_ksm_unmerge_racer_park(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	const uint64_t q = ctx->quiesce;

	if (!q)
		return false;
	ctx->run[idx].quiesced = q;
	while (ctx->quiesce == q && !ctx->racers_stop)
		(void)shim_nanosleep_uint64(100000);
	return true;
}

/*
 *  stress_ksm_unmerge_racer_met()
 *	racer thread: it is about to pin or splice pages of this cycle's
 *	merged region (releases the merged phase's wait for it)
 */
static inline void stress_ksm_unmerge_racer_met(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	if (ctx->phase == KSM_PHASE_MERGED)
		ctx->run[idx].met = ctx->cycle;
}

/*
 *  stress_ksm_unmerge_racer_wants_merged()
 *	racer thread: has it yet to begin an op in this cycle's merged phase
 */
static inline bool stress_ksm_unmerge_racer_wants_merged(const stress_ksm_unmerge_ctx_t *ctx,
	const size_t idx)
{
	return ctx->phase == KSM_PHASE_MERGED && ctx->run[idx].met != ctx->cycle;
}

/*
 *  stress_ksm_unmerge_racer_running()
 *	racer thread: keep going?
 */
static inline bool stress_ksm_unmerge_racer_running(stress_ksm_unmerge_ctx_t *ctx)
{
	return !ctx->racers_stop && stress_continue(ctx->args);
}

/*
 *  stress_ksm_unmerge_racer_trampoline()
 *	run a racer thread function, then mark it done for the quiesce wait
 */
static void *stress_ksm_unmerge_racer_trampoline(void *arg)
{
	stress_ksm_unmerge_racer_run_t *run = (stress_ksm_unmerge_racer_run_t *)arg;
	void *ret = run->fn(run->ctx);

	run->thread_done = true;
	return ret;
}

/*
 *  stress_ksm_unmerge_racer_supported_always()
 *	supported() of racers whose interfaces every KSM kernel has
 */
static int stress_ksm_unmerge_racer_supported_always(char *reason, const size_t len)
{
	(void)reason;
	(void)len;
	return 0;
}

/*
 *  stress_ksm_unmerge_racer_thread_start()
 *	start a racer thread running fn(ctx) for racer idx
 */
static int stress_ksm_unmerge_racer_thread_start(stress_ksm_unmerge_ctx_t *ctx,
	const size_t idx, void *(*fn)(void *))
{
	int ret;

	ctx->run[idx].fn = fn;
	ctx->run[idx].ctx = ctx;
	ctx->run[idx].thread_done = false;
	ret = pthread_create(&ctx->run[idx].thread, NULL, stress_ksm_unmerge_racer_trampoline,
		&ctx->run[idx]);

	if (ret) {
		pr_fail("%s: %s racer: pthread_create failed, errno=%d (%s)\n",
			ctx->args->name, stress_ksm_unmerge_racer_names[idx], ret, strerror(ret));
		return -1;
	}
	ctx->run[idx].thread_running = true;
	return 0;
}

/*
 *  stress_ksm_unmerge_racer_thread_stop()
 *	join racer idx's thread (racers_stop is already set)
 */
static void stress_ksm_unmerge_racer_thread_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	if (!ctx->run[idx].thread_running)
		return;
	(void)pthread_join(ctx->run[idx].thread, NULL);
	ctx->run[idx].thread_running = false;
}

/*
 *  stress_ksm_unmerge_racer_helper_start()
 *	start a racer's optional second thread running fn(ctx); on failure
 *	the racer goes on without it and says so; true if it runs
 */
static bool stress_ksm_unmerge_racer_helper_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const char *what, pthread_t *thread, void *(*fn)(void *))
{
	const int ret = pthread_create(thread, NULL, fn, ctx);

	if (ret)
		pr_inf("%s: %s racer: no %s, pthread_create failed, errno=%d (%s)\n", ctx->args->name,
			stress_ksm_unmerge_racer_names[idx], what, ret, strerror(ret));
	return !ret;
}

/*
 *  stress_ksm_unmerge_racer_helper_join()
 *	join a racer's second thread if it runs
 */
static void stress_ksm_unmerge_racer_helper_join(const pthread_t thread, bool *running)
{
	if (*running)
		(void)pthread_join(thread, NULL);
	*running = false;
}

/* dontneed racer: pages it discarded this cycle, refilled before verification */
typedef struct {
	uint8_t *holes;			/* one byte per page: discarded */
	uint32_t ranges;		/* ranges discarded this cycle */
} stress_ksm_unmerge_dontneed_t;

/*
 *  stress_ksm_unmerge_page_is_ksm()
 *	is page i of the region a KSM page or KSM zero page right now
 */
static bool stress_ksm_unmerge_page_is_ksm(stress_ksm_unmerge_ctx_t *ctx, const size_t i)
{
	uint64_t e = 0;

	int what;

	if (!ctx->have_pfns ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region + i * ctx->page_size,
			1, ctx->page_size, &e) < 0 || !(e & PM_PRESENT))
		return false;
	what = stress_ksm_unmerge_what(ctx->zero_pfn, e,
		stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, e & PM_PFN_MASK), 1);
	if (what == KSM_PAGE_ZERO)
		return ctx->ksm_zero;
	return what == KSM_PAGE_KSM;
}

/*
 *  stress_ksm_unmerge_dontneed_refill()
 *	restore hook: rewrite the pattern into every page the racer discarded;
 *	runs in the main thread after all racers parked, so after the mprotect
 *	racer made every page writable again
 */
static void stress_ksm_unmerge_dontneed_refill(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_dontneed_t *d = (stress_ksm_unmerge_dontneed_t *)ctx->run[idx].priv;
	size_t i;

	if (!d)
		return;

	for (i = 0; i < ctx->npages; i++) {
		if (!d->holes[i])
			continue;
		stress_ksm_unmerge_page_fill(ctx, i, ctx->region + i * ctx->page_size);
		d->holes[i] = 0;
	}
	d->ranges = 0;
}

/*
 *  stress_ksm_unmerge_dontneed_one()
 *	discard one random range of 1..16 pages; count those that were KSM pages
 */
static void stress_ksm_unmerge_dontneed_one(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_dontneed_t *d)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const size_t n = 1 + stress_mwc32modn(16);
	const size_t first = stress_mwc32modn((uint32_t)(ctx->npages > n ? ctx->npages - n : 1));
	uint64_t was_ksm = 0;
	size_t i;

	for (i = first; i < first + n && i < ctx->npages; i++)
		was_ksm += stress_ksm_unmerge_page_is_ksm(ctx, i);
	if (madvise(ctx->region + first * ctx->page_size, n * ctx->page_size, MADV_DONTNEED) < 0) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "madvise MADV_DONTNEED failed, errno=%d (%s)",
			errno, strerror(errno));
		rs->failures++;
		return;
	}
	for (i = first; i < first + n && i < ctx->npages; i++)
		d->holes[i] = 1;
	d->ranges++;
	rs->ops++;
	rs->evidence += was_ksm;
}

/*
 *  stress_ksm_unmerge_dontneed_thread()
 *	racer: MADV_DONTNEED holes in merged memory, before and during unmerge
 */
static void *stress_ksm_unmerge_dontneed_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_DONTNEED;
	stress_ksm_unmerge_dontneed_t *d = (stress_ksm_unmerge_dontneed_t *)ctx->run[idx].priv;

	while (!ctx->racers_stop) {
		const int phase = ctx->phase;

		if (ctx->quiesce) {
			/* holes are refilled by restore() once every racer parked */
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (!stress_ksm_unmerge_racer_running(ctx)) {
			/* run ending: no new holes, but park for a cycle still verifying */
			(void)shim_nanosleep_uint64(1000000);
			continue;
		}
		if ((phase == KSM_PHASE_MERGED || phase == KSM_PHASE_UNMERGING) && d->ranges < 64) {
			stress_ksm_unmerge_dontneed_one(ctx, idx, d);
			continue;
		}
		(void)shim_nanosleep_uint64(200000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_dontneed_start()
 *	hole map and thread
 */
static int stress_ksm_unmerge_dontneed_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_dontneed_t *d = calloc(1, sizeof(*d));

	if (!d || !(d->holes = calloc(ctx->npages, 1))) {
		free(d);
		(void)snprintf(ctx->st->racer[idx].reason, sizeof(ctx->st->racer[idx].reason),
			"out of memory for the hole map");
		return -1;
	}
	ctx->run[idx].priv = d;
	ctx->racers_disturb_counts = true;
	ctx->racers_disturb_layout = true;
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_dontneed_thread) < 0) {
		free(d->holes);
		free(d);
		ctx->run[idx].priv = NULL;
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_dontneed_stop()
 *	join the thread, free the hole map
 */
static void stress_ksm_unmerge_dontneed_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_dontneed_t *d = (stress_ksm_unmerge_dontneed_t *)ctx->run[idx].priv;

	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	if (d) {
		free(d->holes);
		free(d);
	}
	ctx->run[idx].priv = NULL;
}

#define KSM_RACER_DONTNEED { "dontneed", "unmerge over MADV_DONTNEED holes", \
	"ksm-pages-discarded", stress_ksm_unmerge_racer_supported_always, \
	stress_ksm_unmerge_dontneed_start, stress_ksm_unmerge_dontneed_stop, NULL, \
	stress_ksm_unmerge_dontneed_refill }

/*
 *  Racers vmsplice, gup, uffd-wp and thp:
 *  vmsplice  GUP references on KSM pages held in a pipe across the unmerge
 *  gup       O_DIRECT read-only and write pins of KSM pages (COW breaks)
 *  uffd-wp   unshare of uffd-wp protected KSM pages, with an unmerge watchdog
 *  thp       KSM split of THPs, unmerge racing memory compaction
 */
#if !defined(KPF_BIT_THP)
#define KPF_BIT_THP			(22)
#endif
#if !defined(KPF_BIT_COMPOUND_HEAD)
#define KPF_BIT_COMPOUND_HEAD		(15)
#endif
#if !defined(KPF_BIT_COMPOUND_TAIL)
#define KPF_BIT_COMPOUND_TAIL		(16)
#endif

/* Racers implemented in this file; others may discard or protect pages */
#define KSM_RA_MASK	(STRESS_BIT_ULL(KSM_RACER_IDX_VMSPLICE) |	\
			 STRESS_BIT_ULL(KSM_RACER_IDX_GUP) |		\
			 STRESS_BIT_ULL(KSM_RACER_IDX_UFFD_WP) |	\
			 STRESS_BIT_ULL(KSM_RACER_IDX_THP))

#define KSM_RA_MAX_PAGES		(16)	/* pages per vmsplice / O_DIRECT op */

/* What one page of the region maps right now */
enum {
	KSM_RA_PAGE_ABSENT = 0,		/* not present */
	KSM_RA_PAGE_ANON,		/* present, not a KSM page */
	KSM_RA_PAGE_KSM,		/* KSM page (KPF_KSM) */
	KSM_RA_PAGE_KZERO,		/* zero page placed by KSM */
};

/*
 *  stress_ksm_unmerge_ra_others()
 *	are racers from outside this file running (they may discard,
 *	protect or rewrite pages, so transient zero pages are legitimate)
 */
static inline bool stress_ksm_unmerge_ra_others(const stress_ksm_unmerge_ctx_t *ctx)
{
	return (ctx->racers_mask & ~KSM_RA_MASK) != 0;
}

/*
 *  stress_ksm_unmerge_ra_reason()
 *	set a racer's reason string (why skipped / not reached)
 */
static void stress_ksm_unmerge_ra_reason(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const char *fmt, ...) FORMAT(printf, 3, 4);

static void stress_ksm_unmerge_ra_reason(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(ctx->st->racer[idx].reason, sizeof(ctx->st->racer[idx].reason), fmt, ap);
	va_end(ap);
}

/*
 *  stress_ksm_unmerge_ra_buffers()
 *	KSM_RA_MAX_PAGES + 1 pages (the last is a scratch page) for a racer's
 *	copies of region pages, in shared anonymous memory: KSM never merges
 *	shmem, so under prctl's merge-any a copy of a unique page cannot merge
 *	with the region page it came from; NULL on failure
 */
static uint8_t *stress_ksm_unmerge_ra_buffers(const stress_ksm_unmerge_ctx_t *ctx)
{
	void *p = mmap(NULL, (KSM_RA_MAX_PAGES + 1) * ctx->page_size, PROT_READ | PROT_WRITE,
		MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return (p == MAP_FAILED) ? NULL : (uint8_t *)p;
}

/*
 *  stress_ksm_unmerge_ra_buffers_free()
 *	unmap stress_ksm_unmerge_ra_buffers()
 */
static void stress_ksm_unmerge_ra_buffers_free(const stress_ksm_unmerge_ctx_t *ctx, uint8_t *buf)
{
	if (buf)
		(void)munmap(buf, (KSM_RA_MAX_PAGES + 1) * ctx->page_size);
}

/*
 *  stress_ksm_unmerge_ra_pm_state()
 *	classify one pagemap entry (KSM page, KSM zero page, anon, absent)
 */
static int stress_ksm_unmerge_ra_pm_state(const stress_ksm_unmerge_ctx_t *ctx, const uint64_t e)
{
	int what;

	if (!(e & PM_PRESENT))
		return KSM_RA_PAGE_ABSENT;
	what = stress_ksm_unmerge_what(ctx->zero_pfn, e,
		stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, e & PM_PFN_MASK), 1);
	if (what == KSM_PAGE_ZERO)
		return KSM_RA_PAGE_KZERO;
	if (what == KSM_PAGE_KSM)
		return KSM_RA_PAGE_KSM;
	return KSM_RA_PAGE_ANON;
}

/*
 *  stress_ksm_unmerge_ra_states()
 *	state of n pages from addr into st[], -1 without pagemap PFNs
 */
static int stress_ksm_unmerge_ra_states(const stress_ksm_unmerge_ctx_t *ctx, const void *addr,
	const size_t n, uint8_t *st)
{
	uint64_t pm[KSM_RA_MAX_PAGES];
	size_t i;

	if (!ctx->have_pfns || n > KSM_RA_MAX_PAGES ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, addr, n, ctx->page_size, pm) < 0) {
		(void)memset(st, KSM_RA_PAGE_ABSENT, n);
		return -1;
	}
	for (i = 0; i < n; i++)
		st[i] = (uint8_t)stress_ksm_unmerge_ra_pm_state(ctx, pm[i]);
	return 0;
}

/*
 *  stress_ksm_unmerge_ra_present()
 *	states of pages first.. (up to n): how many leading pages hold their
 *	pattern bytes (present, and on the zero page only if the pattern is
 *	zero there); touching a hole another racer discarded would map the
 *	zero page (taken for a KSM zero page by the verification) or, for
 *	an O_DIRECT read, expose zeros until the transfer lands
 */
static size_t stress_ksm_unmerge_ra_present(const stress_ksm_unmerge_ctx_t *ctx, const size_t first,
	const size_t n, uint8_t *st)
{
	size_t j;

	if (stress_ksm_unmerge_ra_states(ctx, ctx->region + first * ctx->page_size, n, st) < 0)
		return n;	/* no PFNs: cannot tell, take them all */
	for (j = 0; j < n; j++) {
		if (st[j] == KSM_RA_PAGE_ABSENT)
			break;
		if (st[j] == KSM_RA_PAGE_KZERO &&
		    stress_ksm_unmerge_page_kind(ctx->pattern, first + j) != KSM_KIND_ZERO)
			break;
	}
	return j;
}

/*
 *  stress_ksm_unmerge_ra_is_zero()
 *	is the buffer all zero bytes
 */
static bool stress_ksm_unmerge_ra_is_zero(const uint8_t *buf, const size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i])
			return false;
	return true;
}

/*
 *  stress_ksm_unmerge_ra_pages_check()
 *	pure verifier: buf holds len bytes copied from region pages first..;
 *	returns the index (within buf) of the first page that is not the
 *	pattern, with its byte offset in *off, or -1 if all intact; whole
 *	zero pages pass only if tolerate_zero (another racer discarded them);
 *	scratch is one page used for a partial last page
 */
static ssize_t stress_ksm_unmerge_ra_pages_check(const stress_ksm_unmerge_ctx_t *ctx,
	const size_t first, const uint8_t *buf, const size_t len, const bool tolerate_zero,
	uint8_t *scratch, ssize_t *off)
{
	const size_t ps = ctx->page_size;
	size_t j;

	*off = -1;
	for (j = 0; j * ps < len; j++) {
		const uint8_t *page = buf + j * ps;
		const size_t plen = (len - j * ps < ps) ? len - j * ps : ps;
		size_t b;

		if (plen == ps) {
			*off = stress_ksm_unmerge_page_check(ctx, first + j, page);
		} else {
			stress_ksm_unmerge_page_fill(ctx, first + j, scratch);
			for (b = 0; b < plen && page[b] == scratch[b]; b++)
				;
			*off = (b < plen) ? (ssize_t)b : -1;
		}
		if (*off < 0)
			continue;
		if (tolerate_zero && stress_ksm_unmerge_ra_is_zero(page, plen)) {
			*off = -1;
			continue;
		}
		return (ssize_t)j;
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_ra_expected()
 *	expected byte at offset off of region page i
 */
static uint8_t stress_ksm_unmerge_ra_expected(const stress_ksm_unmerge_ctx_t *ctx,
	const size_t i, const ssize_t off, uint8_t *scratch)
{
	stress_ksm_unmerge_page_fill(ctx, i, scratch);
	return scratch[off];
}

/*
 *  stress_ksm_unmerge_ra_range()
 *	random range of 1..max pages inside the region: first page, count
 */
static size_t stress_ksm_unmerge_ra_range(const stress_ksm_unmerge_ctx_t *ctx, const size_t max,
	size_t *first)
{
	/* keep out of pages another racer may make PROT_NONE (mprotect) */
	const size_t npages = ctx->racers_touch_npages ? ctx->racers_touch_npages : ctx->npages;
	size_t n = 1 + stress_mwc32modn((uint32_t)max);

	if (n > npages)
		n = npages;
	*first = stress_mwc32modn((uint32_t)(npages - n + 1));
	return n;
}

/*
 *  stress_ksm_unmerge_ra_hold()
 *	keep a splice or pin for up to 1 ms or until the phase moves on, so
 *	its release often happens while the unmerge runs
 */
static void stress_ksm_unmerge_ra_hold(stress_ksm_unmerge_ctx_t *ctx)
{
	const int phase = ctx->phase;
	const uint32_t steps = stress_mwc32modn(20);
	uint32_t s;

	for (s = 0; s < steps && ctx->phase == phase && !ctx->quiesce; s++)
		(void)shim_nanosleep_uint64(50000);
}

/*
 *  stress_ksm_unmerge_ra_hold_unmerge()
 *	keep a splice begun in the merged phase of cycle until that cycle's
 *	unmerge returned, so break_ksm() meets its references; true if the
 *	unmerge returned (phase VERIFY) while it was held
 */
static bool stress_ksm_unmerge_ra_hold_unmerge(const stress_ksm_unmerge_ctx_t *ctx, const uint64_t cycle)
{
	while (ctx->cycle == cycle && !ctx->racers_stop &&
	       (ctx->phase == KSM_PHASE_MERGED || ctx->phase == KSM_PHASE_UNMERGING))
		(void)shim_nanosleep_uint64(50000);
	return ctx->cycle == cycle && ctx->phase == KSM_PHASE_VERIFY;
}

/*
 *  stress_ksm_unmerge_ra_running()
 *	racer thread loop condition: run until racers_stop, not until the
 *	end of the run: a cycle that is past its merge when the run ends
 *	still verifies, and its quiesce needs every thread to park
 */
static inline bool stress_ksm_unmerge_ra_running(const stress_ksm_unmerge_ctx_t *ctx)
{
	return !ctx->racers_stop;
}

/*
 *  stress_ksm_unmerge_ra_phase_active()
 *	racers act only while merged or being unmerged, never while merging,
 *	and start nothing new once the run is ending
 */
static inline bool stress_ksm_unmerge_ra_phase_active(const stress_ksm_unmerge_ctx_t *ctx)
{
	const int phase = ctx->phase;

	return !ctx->quiesce && (phase == KSM_PHASE_MERGED || phase == KSM_PHASE_UNMERGING) &&
		stress_continue(ctx->args);
}

/* ------------------------------------------------------------------ */
/* vmsplice: GUP references on KSM pages held in a pipe               */
/* ------------------------------------------------------------------ */

#if defined(HAVE_VMSPLICE) && defined(SPLICE_F_NONBLOCK)

typedef struct {
	int pipefd[2];			/* non-blocking pipe */
	uint8_t *buf;			/* drain buffer, KSM_RA_MAX_PAGES pages */
	uint8_t *scratch;		/* one page for partial-page checks */
} stress_ksm_unmerge_vmsplice_t;

/*
 *  stress_ksm_unmerge_vmsplice_drain()
 *	read len bytes back out of the pipe; 0 or -errno
 */
static int stress_ksm_unmerge_vmsplice_drain(stress_ksm_unmerge_vmsplice_t *v, const size_t len)
{
	size_t got = 0;
	int spins = 0;

	while (got < len) {
		const ssize_t n = read(v->pipefd[0], v->buf + got, len - got);

		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0)
			return -EPIPE;
		if ((errno != EAGAIN && errno != EINTR) || ++spins > 10000)
			return -errno;
		(void)shim_nanosleep_uint64(10000);
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_vmsplice_splice()
 *	vmsplice pages first..first+n-1 into the pipe; bytes or -1 (errno)
 */
static ssize_t stress_ksm_unmerge_vmsplice_splice(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_vmsplice_t *v, const size_t first, const size_t n)
{
	struct iovec iov[KSM_RA_MAX_PAGES];
	size_t j;

	for (j = 0; j < n; j++) {
		iov[j].iov_base = ctx->region + (first + j) * ctx->page_size;
		iov[j].iov_len = ctx->page_size;
	}
	return vmsplice(v->pipefd[1], iov, n, SPLICE_F_NONBLOCK);
}

/*
 *  stress_ksm_unmerge_vmsplice_one()
 *	one op: count KSM pages, vmsplice them, hold, drain, check every byte
 */
static void stress_ksm_unmerge_vmsplice_one(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_vmsplice_t *v)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	uint8_t st[KSM_RA_MAX_PAGES];
	bool was_ksm[KSM_RA_MAX_PAGES];
	size_t first, j, covered, n = stress_ksm_unmerge_ra_range(ctx, KSM_RA_MAX_PAGES, &first);
	ssize_t ret, bad, off;
	int err;
	const uint64_t cycle = ctx->cycle;
	const bool merged = (ctx->phase == KSM_PHASE_MERGED);
	bool held = false;

	n = stress_ksm_unmerge_ra_present(ctx, first, n, st);
	if (!n)
		return;
	for (j = 0; j < n; j++)
		was_ksm[j] = stress_ksm_unmerge_page_is_ksm(ctx, first + j);
	stress_ksm_unmerge_racer_met(ctx, idx);
	ret = stress_ksm_unmerge_vmsplice_splice(ctx, v, first, n);
	if (ret <= 0) {
		/* EFAULT: another racer made the range PROT_NONE */
		if (ret == 0 || errno == EAGAIN || errno == EINTR ||
		    (errno == EFAULT && stress_ksm_unmerge_ra_others(ctx)))
			return;
		pr_fail("%s: vmsplice racer: vmsplice of pages %zu..%zu failed, errno=%d (%s)\n",
			ctx->args->name, first, first + n - 1, errno, strerror(errno));
		rs->failures++;
		return;
	}
	if (merged)
		held = stress_ksm_unmerge_ra_hold_unmerge(ctx, cycle);
	else
		stress_ksm_unmerge_ra_hold(ctx);
	err = stress_ksm_unmerge_vmsplice_drain(v, (size_t)ret);
	if (err < 0) {
		pr_fail("%s: vmsplice racer: draining %zd bytes from the pipe failed, errno=%d (%s)\n",
			ctx->args->name, ret, -err, strerror(-err));
		rs->failures++;
		return;
	}
	bad = stress_ksm_unmerge_ra_pages_check(ctx, first, v->buf, (size_t)ret,
		stress_ksm_unmerge_ra_others(ctx), v->scratch, &off);
	if (bad >= 0) {
		pr_fail("%s: vmsplice racer: page %zu read back from the pipe: byte %zd is 0x%02x, "
			"expected 0x%02x (was KSM when spliced: %s)\n", ctx->args->name,
			first + (size_t)bad, off, v->buf[(size_t)bad * ctx->page_size + (size_t)off],
			stress_ksm_unmerge_ra_expected(ctx, first + (size_t)bad, off, v->scratch),
			was_ksm[bad] ? "yes" : "no");
		rs->failures++;
	}
	covered = ((size_t)ret + ctx->page_size - 1) / ctx->page_size;
	for (j = 0; j < covered && j < n; j++) {
		rs->evidence += was_ksm[j];
		if (held)
			rs->detail[1] += was_ksm[j];
	}
	rs->detail[0] += held;
	rs->aux += covered;
	rs->ops++;
}

/*
 *  stress_ksm_unmerge_vmsplice_thread()
 *	racer: vmsplice merged pages into a pipe and read them back, while
 *	merged and while being unmerged; the pipe is empty whenever it parks
 */
static void *stress_ksm_unmerge_vmsplice_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_VMSPLICE;
	stress_ksm_unmerge_vmsplice_t *v = (stress_ksm_unmerge_vmsplice_t *)ctx->run[idx].priv;

	while (stress_ksm_unmerge_ra_running(ctx)) {
		if (ctx->quiesce) {
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (stress_ksm_unmerge_ra_phase_active(ctx)) {
			stress_ksm_unmerge_vmsplice_one(ctx, idx, v);
			continue;
		}
		(void)shim_nanosleep_uint64(100000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_vmsplice_supported()
 *	vmsplice needs pipes and the syscall
 */
static int stress_ksm_unmerge_vmsplice_supported(char *reason, const size_t len)
{
	int fds[2];
	char c = 0;
	struct iovec iov = { &c, 1 };

	if (pipe(fds) < 0) {
		(void)snprintf(reason, len, "pipe failed, errno=%d (%s)", errno, strerror(errno));
		return -1;
	}
	if (vmsplice(fds[1], &iov, 1, SPLICE_F_NONBLOCK) < 0) {
		(void)snprintf(reason, len, "vmsplice failed, errno=%d (%s)", errno, strerror(errno));
		(void)close(fds[0]);
		(void)close(fds[1]);
		return -1;
	}
	(void)close(fds[0]);
	(void)close(fds[1]);
	return 0;
}

/*
 *  stress_ksm_unmerge_vmsplice_free()
 *	close the pipe, free the buffers
 */
static void stress_ksm_unmerge_vmsplice_free(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_vmsplice_t *v = (stress_ksm_unmerge_vmsplice_t *)ctx->run[idx].priv;

	if (!v)
		return;
	if (v->pipefd[0] >= 0)
		(void)close(v->pipefd[0]);
	if (v->pipefd[1] >= 0)
		(void)close(v->pipefd[1]);
	stress_ksm_unmerge_ra_buffers_free(ctx, v->buf);
	free(v);
	ctx->run[idx].priv = NULL;
}

/*
 *  stress_ksm_unmerge_vmsplice_start()
 *	pipe, drain buffer and thread
 */
static int stress_ksm_unmerge_vmsplice_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_vmsplice_t *v = calloc(1, sizeof(*v));

	if (!v) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "out of memory for the racer state");
		return -1;
	}
	v->pipefd[0] = v->pipefd[1] = -1;
	ctx->run[idx].priv = v;
	v->buf = stress_ksm_unmerge_ra_buffers(ctx);
	v->scratch = v->buf ? v->buf + KSM_RA_MAX_PAGES * ctx->page_size : NULL;
	if (!v->buf) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "cannot map the drain buffer, errno=%d (%s)",
			errno, strerror(errno));
		stress_ksm_unmerge_vmsplice_free(ctx, idx);
		return -1;
	}
	if (pipe2(v->pipefd, O_CLOEXEC | O_NONBLOCK) < 0) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "pipe2 failed, errno=%d (%s)", errno, strerror(errno));
		v->pipefd[0] = v->pipefd[1] = -1;
		stress_ksm_unmerge_vmsplice_free(ctx, idx);
		return -1;
	}
	/* a page in the pipe blocks its merge (and others against it) */
	ctx->racers_disturb_counts = true;
	ctx->run[idx].meets = true;
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_vmsplice_thread) < 0) {
		stress_ksm_unmerge_vmsplice_free(ctx, idx);
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_vmsplice_stop()
 *	join the thread (the pipe is drained by then), close the pipe
 */
static void stress_ksm_unmerge_vmsplice_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	stress_ksm_unmerge_vmsplice_free(ctx, idx);
}

#define KSM_RACER_VMSPLICE { "vmsplice", "GUP refs from vmsplice on KSM pages", \
	"ksm-pages-spliced", stress_ksm_unmerge_vmsplice_supported, \
	stress_ksm_unmerge_vmsplice_start, stress_ksm_unmerge_vmsplice_stop, NULL, NULL }

#endif

/* ------------------------------------------------------------------ */
/* gup: O_DIRECT read-only and write pins of KSM pages                */
/* ------------------------------------------------------------------ */

#if defined(O_DIRECT)

#define KSM_GUP_SLOT_OUT	(0)	/* file slot written from the region */
#define KSM_GUP_SLOT_IN		(1)	/* file slot read into the region */
#define KSM_GUP_TMPFS_MAGIC	(0x01021994)	/* statfs f_type of tmpfs */

/* detail[] counters of the gup racer */
#define KSM_GUP_D_ODIRECT	(0)	/* O_DIRECT transfers (GUP-fast pins) */
#define KSM_GUP_D_ODIRECT_KSM	(1)	/* KSM pages COW-broken by O_DIRECT write pins */
#define KSM_GUP_D_LONGTERM	(2)	/* long-term pins (io_uring fixed buffers) */
#define KSM_GUP_D_LONGTERM_KSM	(3)	/* KSM pages COW-broken by them */

typedef struct {
	int fd;				/* O_DIRECT temp file, already unlinked */
	int vmstat_fd;			/* own /proc/vmstat fd (thread-safe reads) */
	uint8_t *buf;			/* page aligned bounce buffer */
	uint8_t *scratch;		/* one page for partial-page checks */
	char dir[PATH_MAX];		/* where the file lives */
	uint64_t ro_unshared;		/* KSM pages unshared by read-only pins */
	uint64_t cow_short;		/* cow_ksm deltas short of the count */
	int ring_fd;			/* io_uring for long-term pins, -1 none */
} stress_ksm_unmerge_gup_t;

static void FORMAT(printf, 1, 2) stress_ksm_unmerge_pr_report(const char *fmt, ...);

/*
 *  stress_ksm_unmerge_gup_cow_ksm()
 *	global cow_ksm from this racer's own vmstat fd, -1 if unknown
 */
static int64_t stress_ksm_unmerge_gup_cow_ksm(const int fd)
{
	char buf[16384];

	if (stress_ksm_unmerge_fd_read(fd, buf, sizeof(buf)) <= 0)
		return -1;
	return stress_ksm_unmerge_field(buf, "cow_ksm");
}

/*
 *  stress_ksm_unmerge_gup_broken()
 *	pure: pages that were KSM pages (or KSM zero pages) before a write
 *	pin and are present, non-KSM pages after it; KSM folios in *folios
 */
static uint64_t stress_ksm_unmerge_gup_broken(const uint8_t *before, const uint8_t *after,
	const size_t n, uint64_t *folios)
{
	uint64_t broken = 0;
	size_t j;

	*folios = 0;
	for (j = 0; j < n; j++) {
		if ((before[j] != KSM_RA_PAGE_KSM && before[j] != KSM_RA_PAGE_KZERO) ||
		    after[j] != KSM_RA_PAGE_ANON)
			continue;
		broken++;
		*folios += (before[j] == KSM_RA_PAGE_KSM);
	}
	return broken;
}

/*
 *  stress_ksm_unmerge_gup_cow_check()
 *	pure: a cow_ksm delta must cover every KSM folio a write pin broke
 *	(zero pages are not counted by the kernel); -1 if it does not
 */
static int stress_ksm_unmerge_gup_cow_check(const int64_t cow_delta, const uint64_t folios)
{
	if (cow_delta < 0)
		return 0;	/* counter unavailable */
	return ((uint64_t)cow_delta >= folios) ? 0 : -1;
}

/*
 *  stress_ksm_unmerge_gup_tmpfs()
 *	is fd's file on tmpfs, whose O_DIRECT goes through the page cache and
 *	pins no user page; 1 yes, 0 no, -errno if fstatfs failed
 */
static int stress_ksm_unmerge_gup_tmpfs(const int fd)
{
#if defined(HAVE_SYS_VFS_H)
	struct statfs sfs;

	if (fstatfs(fd, &sfs) < 0)
		return -errno;
	return sfs.f_type == KSM_GUP_TMPFS_MAGIC;
#else
	(void)fd;
	return 0;
#endif
}

/*
 *  stress_ksm_unmerge_gup_try_dir()
 *	create an unlinked O_DIRECT file in dir (not on tmpfs: -EXDEV) and
 *	prove a 4K aligned write works there; fd or -errno
 */
static int stress_ksm_unmerge_gup_try_dir(const char *dir, uint8_t *buf, const size_t ps)
{
	char path[PATH_MAX];
	int fd, err;

	(void)snprintf(path, sizeof(path), "%s/stress-ksm-unmerge-gup-%d-%d.tmp",
		dir, (int)getpid(), shim_gettid());
	fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	(void)shim_unlink(path);
	err = stress_ksm_unmerge_gup_tmpfs(fd);
	if (err != 0) {
		(void)close(fd);
		return err < 0 ? err : -EXDEV;
	}
	(void)memset(buf, 0x5a, ps);
	if (pwrite(fd, buf, ps, 0) != (ssize_t)ps) {
		err = errno ? errno : EIO;
		(void)close(fd);
		return -err;
	}
	return fd;
}

/*
 *  stress_ksm_unmerge_gup_file()
 *	pick --temp-path, the cwd, /var/tmp or /tmp: the first not on tmpfs
 *	where O_DIRECT works; instance 0 says where (and what it refused);
 *	-1 (the O_DIRECT half is off) if none, the refusals in tried
 */
static int stress_ksm_unmerge_gup_file(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_gup_t *g,
	char *tried, const size_t len)
{
	const char *dirs[] = { stress_fs_temp_path_get(), ".", "/var/tmp", "/tmp" };
	char path[PATH_MAX];
	size_t i, off = 0;

	tried[0] = '\0';
	for (i = 0; i < SIZEOF_ARRAY(dirs); i++) {
		int fd;

		if (!dirs[i] || (i == 1 && !strcmp(dirs[0], ".")))
			continue;
		fd = stress_ksm_unmerge_gup_try_dir(dirs[i], g->buf, ctx->page_size);
		if (fd >= 0) {
			g->fd = fd;
			(void)strlcpy(g->dir, dirs[i], sizeof(g->dir));
			if (stress_instance_zero(ctx->args))
				stress_ksm_unmerge_pr_report("gup racer: its O_DIRECT file is in %s%s%s%s",
					realpath(dirs[i], path) ? path : dirs[i],
					tried[0] ? " (refused " : "", tried, tried[0] ? ")" : "");
			return 0;
		}
		if (off < len)
			off += (size_t)snprintf(tried + off, len - off, "%s%s: %s", off ? ", " : "", dirs[i],
				fd == -EXDEV ? "tmpfs, no pin" : strerror(-fd));
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_gup_io_ok()
 *	did an O_DIRECT transfer move all len bytes; a failure is counted
 *	unless another racer explains it (EFAULT on a PROT_NONE range)
 */
static bool stress_ksm_unmerge_gup_io_ok(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const char *what, const ssize_t ret, const size_t len)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);

	if (ret == (ssize_t)len)
		return true;
	if (ret < 0 && (errno == EINTR || (errno == EFAULT && stress_ksm_unmerge_ra_others(ctx))))
		return false;
	pr_fail("%s: gup racer: O_DIRECT %s of %zu bytes returned %zd, errno=%d (%s)\n",
		ctx->args->name, what, len, ret, ret < 0 ? errno : 0, ret < 0 ? strerror(errno) : "short");
	rs->failures++;
	return false;
}

/*
 *  stress_ksm_unmerge_gup_report_bad()
 *	report a page whose bytes are not the pattern
 */
static void stress_ksm_unmerge_gup_report_bad(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_gup_t *g, const char *where, const size_t page, const uint8_t *p,
	const ssize_t off)
{
	pr_fail("%s: gup racer: %s page %zu byte %zd is 0x%02x, expected 0x%02x\n",
		ctx->args->name, where, page, off, p[off],
		stress_ksm_unmerge_ra_expected(ctx, page, off, g->scratch));
	stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
}

/*
 *  stress_ksm_unmerge_gup_out()
 *	O_DIRECT write from merged pages (read-only pins), read the file
 *	back and check it holds the pattern
 */
static void stress_ksm_unmerge_gup_out(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_gup_t *g)
{
	const size_t ps = ctx->page_size;
	const off_t slot = (off_t)(KSM_GUP_SLOT_OUT * KSM_RA_MAX_PAGES * ps);
	uint8_t before[KSM_RA_MAX_PAGES], after[KSM_RA_MAX_PAGES];
	uint64_t folios;
	size_t first, n = stress_ksm_unmerge_ra_range(ctx, KSM_RA_MAX_PAGES, &first);
	ssize_t bad, off;

	n = stress_ksm_unmerge_ra_present(ctx, first, n, before);
	if (!n)
		return;
	if (!stress_ksm_unmerge_gup_io_ok(ctx, idx, "write from the region",
			pwrite(g->fd, ctx->region + first * ps, n * ps, slot), n * ps))
		return;
	(void)stress_ksm_unmerge_ra_states(ctx, ctx->region + first * ps, n, after);
	g->ro_unshared += stress_ksm_unmerge_gup_broken(before, after, n, &folios);
	if (!stress_ksm_unmerge_gup_io_ok(ctx, idx, "read back of the file",
			pread(g->fd, g->buf, n * ps, slot), n * ps))
		return;
	bad = stress_ksm_unmerge_ra_pages_check(ctx, first, g->buf, n * ps,
		stress_ksm_unmerge_ra_others(ctx), g->scratch, &off);
	if (bad >= 0)
		stress_ksm_unmerge_gup_report_bad(ctx, idx, g, "file written from region",
			first + (size_t)bad, g->buf + (size_t)bad * ps, off);
	stress_ksm_unmerge_racer_stats(ctx, idx)->ops++;
	stress_ksm_unmerge_racer_stats(ctx, idx)->detail[KSM_GUP_D_ODIRECT]++;
}

/*
 *  stress_ksm_unmerge_gup_in_prepare()
 *	write the pattern bytes of pages first.. into the file's in-slot
 */
static bool stress_ksm_unmerge_gup_in_prepare(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_gup_t *g, const size_t first, const size_t n, const off_t slot)
{
	size_t j;

	for (j = 0; j < n; j++)
		stress_ksm_unmerge_page_fill(ctx, first + j, g->buf + j * ctx->page_size);
	return stress_ksm_unmerge_gup_io_ok(ctx, idx, "write of the pattern file",
		pwrite(g->fd, g->buf, n * ctx->page_size, slot), n * ctx->page_size);
}

/*
 *  stress_ksm_unmerge_gup_in()
 *	O_DIRECT read of the pattern into merged pages (write pins): the
 *	KSM pages must be COW-broken, cow_ksm must count them, data intact
 */
static void stress_ksm_unmerge_gup_in(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_gup_t *g)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const size_t ps = ctx->page_size;
	const off_t slot = (off_t)(KSM_GUP_SLOT_IN * KSM_RA_MAX_PAGES * ps);
	uint8_t before[KSM_RA_MAX_PAGES], after[KSM_RA_MAX_PAGES];
	uint64_t broken, folios;
	int64_t cow0, cow1;
	size_t first, j, n = stress_ksm_unmerge_ra_range(ctx, KSM_RA_MAX_PAGES, &first);
	ssize_t off;

	if (!stress_ksm_unmerge_gup_in_prepare(ctx, idx, g, first, n, slot))
		return;
	n = stress_ksm_unmerge_ra_present(ctx, first, n, before);
	if (!n)
		return;
	cow0 = stress_ksm_unmerge_gup_cow_ksm(g->vmstat_fd);
	stress_ksm_unmerge_racer_met(ctx, idx);
	if (!stress_ksm_unmerge_gup_io_ok(ctx, idx, "read into the region",
			pread(g->fd, ctx->region + first * ps, n * ps, slot), n * ps))
		return;
	cow1 = stress_ksm_unmerge_gup_cow_ksm(g->vmstat_fd);
	(void)stress_ksm_unmerge_ra_states(ctx, ctx->region + first * ps, n, after);
	broken = stress_ksm_unmerge_gup_broken(before, after, n, &folios);
	rs->evidence += broken;
	rs->detail[KSM_GUP_D_ODIRECT_KSM] += broken;
	if (stress_ksm_unmerge_gup_cow_check((cow0 >= 0 && cow1 >= 0) ? cow1 - cow0 : -1, folios) < 0) {
		g->cow_short++;
		if (!stress_ksm_unmerge_ra_others(ctx)) {
			pr_fail("%s: gup racer: O_DIRECT read broke %" PRIu64 " KSM pages (%zu..%zu) "
				"but cow_ksm grew by only %" PRId64 "\n", ctx->args->name,
				folios, first, first + n - 1, cow1 - cow0);
			rs->failures++;
		}
	}
	for (j = 0; j < n; j++) {
		const uint8_t *p = ctx->region + (first + j) * ps;

		off = stress_ksm_unmerge_page_check(ctx, first + j, p);
		if (off >= 0 && !(stress_ksm_unmerge_ra_others(ctx) && stress_ksm_unmerge_ra_is_zero(p, ps))) {
			stress_ksm_unmerge_gup_report_bad(ctx, idx, g, "region after O_DIRECT read into",
				first + j, p, off);
			break;
		}
	}
	rs->ops++;
	rs->detail[KSM_GUP_D_ODIRECT]++;
}

/* IORING_(UN)REGISTER_BUFFERS are enum values, there since 5.1's header */
#if defined(HAVE_LINUX_IO_URING_H) &&		\
    defined(__NR_io_uring_setup) &&		\
    defined(__NR_io_uring_register)
#define KSM_GUP_LONGTERM

/*
 *  stress_ksm_unmerge_gup_pinned_shared()
 *	pure: index of the first page still a KSM page (or KSM zero page)
 *	while a write pin holds it, -1 if none: a pinned page may be neither
 */
static ssize_t stress_ksm_unmerge_gup_pinned_shared(const uint8_t *st, const size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		if (st[j] == KSM_RA_PAGE_KSM || st[j] == KSM_RA_PAGE_KZERO)
			return (ssize_t)j;
	return -1;
}

/*
 *  stress_ksm_unmerge_gup_ring_open()
 *	an io_uring used only to register fixed buffers; -1 without io_uring
 */
static int stress_ksm_unmerge_gup_ring_open(stress_ksm_unmerge_ctx_t *ctx)
{
	struct io_uring_params p;
	int fd;

	(void)shim_memset(&p, 0, sizeof(p));
	fd = (int)syscall(__NR_io_uring_setup, 1, &p);
	if (fd < 0 && stress_instance_zero(ctx->args))
		pr_inf("%s: gup racer: long-term pins off, io_uring_setup failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
	return fd;
}

/*
 *  stress_ksm_unmerge_gup_longterm_refused()
 *	register refused: a limit (no long-term pins from now on), another
 *	racer's PROT_NONE range, or a failure
 */
static void stress_ksm_unmerge_gup_longterm_refused(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_gup_t *g, const int err)
{
	if (err == EINTR || (err == EFAULT && stress_ksm_unmerge_ra_others(ctx)))
		return;
	if (err == ENOMEM || err == EPERM || err == EOPNOTSUPP) {
		pr_inf("%s: gup racer: long-term pins off from now on, IORING_REGISTER_BUFFERS "
			"failed, errno=%d (%s)\n", ctx->args->name, err, strerror(err));
		(void)close(g->ring_fd);
		g->ring_fd = -1;
		if (g->fd < 0)
			stress_ksm_unmerge_ra_reason(ctx, idx, "O_DIRECT half off and long-term "
				"pins refused, errno=%d (%s)", err, strerror(err));
		return;
	}
	pr_fail("%s: gup racer: IORING_REGISTER_BUFFERS of merged pages failed, errno=%d (%s)\n",
		ctx->args->name, err, strerror(err));
	stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
}

/*
 *  stress_ksm_unmerge_gup_longterm()
 *	register merged pages as an io_uring fixed buffer, a FOLL_WRITE |
 *	FOLL_LONGTERM pin: KSM pages must be COW-broken when pinned and stay
 *	private while pinned; hold it while the cycle moves on, unregister,
 *	check the data
 */
static void stress_ksm_unmerge_gup_longterm(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_gup_t *g)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const size_t ps = ctx->page_size;
	uint8_t before[KSM_RA_MAX_PAGES], after[KSM_RA_MAX_PAGES];
	size_t first, j, n = stress_ksm_unmerge_ra_range(ctx, KSM_RA_MAX_PAGES, &first);
	struct iovec iov;
	uint64_t folios, broken;
	ssize_t shared, off;

	n = stress_ksm_unmerge_ra_present(ctx, first, n, before);
	if (!n)
		return;
	iov.iov_base = ctx->region + first * ps;
	iov.iov_len = n * ps;
	stress_ksm_unmerge_racer_met(ctx, idx);
	if (syscall(__NR_io_uring_register, g->ring_fd, IORING_REGISTER_BUFFERS, &iov, 1) < 0) {
		stress_ksm_unmerge_gup_longterm_refused(ctx, idx, g, errno);
		return;
	}
	if (stress_ksm_unmerge_ra_states(ctx, iov.iov_base, n, after) == 0) {
		broken = stress_ksm_unmerge_gup_broken(before, after, n, &folios);
		rs->evidence += broken;
		rs->detail[KSM_GUP_D_LONGTERM_KSM] += broken;
		shared = stress_ksm_unmerge_gup_pinned_shared(after, n);
		if (shared >= 0) {
			pr_fail("%s: gup racer: page %zu is still a shared KSM page while an io_uring "
				"fixed buffer pins it for write\n", ctx->args->name, first + (size_t)shared);
			rs->failures++;
		}
	}
	stress_ksm_unmerge_ra_hold(ctx);
	if (syscall(__NR_io_uring_register, g->ring_fd, IORING_UNREGISTER_BUFFERS, NULL, 0) < 0) {
		pr_fail("%s: gup racer: IORING_UNREGISTER_BUFFERS failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		rs->failures++;
	}
	for (j = 0; j < n; j++) {
		const uint8_t *p = ctx->region + (first + j) * ps;

		off = stress_ksm_unmerge_page_check(ctx, first + j, p);
		if (off >= 0 && !(stress_ksm_unmerge_ra_others(ctx) && stress_ksm_unmerge_ra_is_zero(p, ps))) {
			stress_ksm_unmerge_gup_report_bad(ctx, idx, g, "region after a long-term pin of",
				first + j, p, off);
			break;
		}
	}
	rs->detail[KSM_GUP_D_LONGTERM]++;
	rs->ops++;
}
#endif

/*
 *  stress_ksm_unmerge_gup_op()
 *	one op: the first of each merged phase a write pin (O_DIRECT read,
 *	or on odd cycles a long-term pin), then O_DIRECT reads, O_DIRECT
 *	writes and long-term pins in turn
 */
static void stress_ksm_unmerge_gup_op(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_gup_t *g, uint32_t *n)
{
	const bool merged = stress_ksm_unmerge_racer_wants_merged(ctx, idx);
	const uint32_t turn = merged ? (uint32_t)(ctx->cycle & 1) * 3 : (*n)++ % 4;

#if defined(KSM_GUP_LONGTERM)
	if ((turn == 3 || g->fd < 0) && g->ring_fd >= 0) {
		stress_ksm_unmerge_gup_longterm(ctx, idx, g);
		return;
	}
#endif
	if (g->fd < 0) {
		(void)shim_nanosleep_uint64(1000000);	/* both halves off */
		return;
	}
	if (turn == 2)
		stress_ksm_unmerge_gup_out(ctx, idx, g);
	else
		stress_ksm_unmerge_gup_in(ctx, idx, g);
}

/*
 *  stress_ksm_unmerge_gup_thread()
 *	racer: O_DIRECT writes from and reads into merged pages while merged
 *	and while being unmerged; every transfer completes before it parks
 */
static void *stress_ksm_unmerge_gup_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_GUP;
	stress_ksm_unmerge_gup_t *g = (stress_ksm_unmerge_gup_t *)ctx->run[idx].priv;
	uint32_t n = 0;

	while (stress_ksm_unmerge_ra_running(ctx)) {
		if (ctx->quiesce) {
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (stress_ksm_unmerge_ra_phase_active(ctx)) {
			stress_ksm_unmerge_gup_op(ctx, idx, g, &n);
			continue;
		}
		(void)shim_nanosleep_uint64(100000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_gup_free()
 *	close the file and counters, free the buffers
 */
static void stress_ksm_unmerge_gup_free(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_gup_t *g = (stress_ksm_unmerge_gup_t *)ctx->run[idx].priv;

	if (!g)
		return;
	if (g->fd >= 0)
		(void)close(g->fd);
	if (g->vmstat_fd >= 0)
		(void)close(g->vmstat_fd);
	if (g->ring_fd >= 0)
		(void)close(g->ring_fd);
	stress_ksm_unmerge_ra_buffers_free(ctx, g->buf);
	free(g);
	ctx->run[idx].priv = NULL;
}

/*
 *  stress_ksm_unmerge_gup_start()
 *	bounce buffer, unlinked O_DIRECT file, thread
 */
static int stress_ksm_unmerge_gup_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_gup_t *g = calloc(1, sizeof(*g));
	char tried[256];

	if (!g) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "out of memory for the racer state");
		return -1;
	}
	g->fd = g->vmstat_fd = g->ring_fd = -1;
	ctx->run[idx].priv = g;
	g->buf = stress_ksm_unmerge_ra_buffers(ctx);
	g->scratch = g->buf ? g->buf + KSM_RA_MAX_PAGES * ctx->page_size : NULL;
	if (!g->buf) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "cannot allocate the bounce buffer, errno=%d (%s)",
			errno, strerror(errno));
		stress_ksm_unmerge_gup_free(ctx, idx);
		return -1;
	}
#if defined(KSM_GUP_LONGTERM)
	g->ring_fd = stress_ksm_unmerge_gup_ring_open(ctx);
#endif
	if (stress_ksm_unmerge_gup_file(ctx, g, tried, sizeof(tried)) < 0) {
		if (g->ring_fd < 0) {
			stress_ksm_unmerge_ra_reason(ctx, idx, "no long-term pins and no O_DIRECT dir (%s)",
				tried);
			stress_ksm_unmerge_gup_free(ctx, idx);
			return -1;
		}
		if (stress_instance_zero(ctx->args))
			stress_ksm_unmerge_pr_report("gup racer: the O_DIRECT half is off, no directory "
				"for its file (%s); long-term pins only", tried);
	}
	g->vmstat_fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
	ctx->run[idx].meets = true;
	/* pins break merges and the reads write pages */
	ctx->racers_disturb_counts = true;
	ctx->racers_disturb_layout = true;
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_gup_thread) < 0) {
		stress_ksm_unmerge_gup_free(ctx, idx);
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_gup_stop()
 *	join the thread, close the (already unlinked) file
 */
static void stress_ksm_unmerge_gup_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_gup_t *g = (stress_ksm_unmerge_gup_t *)ctx->run[idx].priv;

	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	if (g) {
		pr_dbg("%s: gup racer: O_DIRECT file in %s; %" PRIu64 " KSM pages unshared by "
			"read-only pins, %" PRIu64 " cow_ksm deltas short\n", ctx->args->name,
			g->fd >= 0 ? g->dir : "(none)", g->ro_unshared, g->cow_short);
		stress_ksm_unmerge_racer_stats(ctx, idx)->aux += g->ro_unshared;
	}
	stress_ksm_unmerge_gup_free(ctx, idx);
}

#define KSM_RACER_GUP { "gup", "O_DIRECT GUP-fast pins of KSM pages", \
	"ksm-pages-pinned", stress_ksm_unmerge_racer_supported_always, \
	stress_ksm_unmerge_gup_start, stress_ksm_unmerge_gup_stop, NULL, NULL }

#endif

/* ------------------------------------------------------------------ */
/* uffd-wp: unshare of write-protected KSM pages, unmerge watchdog    */
/* ------------------------------------------------------------------ */

#if defined(HAVE_LINUX_USERFAULTFD_H) &&	\
    defined(UFFDIO_WRITEPROTECT) &&		\
    defined(UFFD_FEATURE_PAGEFAULT_FLAG_WP) &&	\
    defined(UFFDIO_REGISTER_MODE_WP)

#if !defined(UFFD_USER_MODE_ONLY)
#define UFFD_USER_MODE_ONLY		(1)
#endif
#if !defined(UFFD_FEATURE_THREAD_ID)
#define UFFD_FEATURE_THREAD_ID		(1 << 8)
#endif

#define KSM_UFFD_HANG_SECS		(10.0)	/* an unmerge longer than this hangs */
#define KSM_UFFD_MAX_RANGE		(64)	/* pages per WRITEPROTECT toggle */

typedef struct {
	int uffd;
	bool thread_id;			/* faults carry the faulting tid */
	pid_t main_tid;			/* the instance thread that unmerges */
	uint8_t *snap;			/* per page: KSM + uffd-wp at unmerge start */
	volatile uint32_t *touched;	/* per page: cycle it was unprotected in */
	uint64_t *pm;			/* pagemap scratch (main thread hooks) */
	bool snap_valid;		/* snap taken this cycle */
	pthread_t watchdog;
	bool watchdog_running;
	uint64_t faults;		/* WP faults resolved */
	uint64_t lost;			/* WP bits lost, tolerated with other racers */
} stress_ksm_unmerge_uffd_t;

/*
 *  stress_ksm_unmerge_uffd_open()
 *	userfaultfd with the WP feature (USER_MODE_ONLY on EPERM); fd or -1
 */
static int stress_ksm_unmerge_uffd_open(char *reason, const size_t len, bool *thread_id)
{
	static const uint64_t features[] = {
		UFFD_FEATURE_PAGEFAULT_FLAG_WP | UFFD_FEATURE_THREAD_ID,
		UFFD_FEATURE_PAGEFAULT_FLAG_WP,
	};
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(features); i++) {
		struct uffdio_api api;
		int fd = shim_userfaultfd(O_CLOEXEC | O_NONBLOCK);

		if (fd < 0 && errno == EPERM)
			fd = shim_userfaultfd(O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
		if (fd < 0) {
			(void)snprintf(reason, len, "userfaultfd denied or missing, errno=%d (%s)",
				errno, strerror(errno));
			return -1;
		}
		(void)memset(&api, 0, sizeof(api));
		api.api = UFFD_API;
		api.features = features[i];
		if (ioctl(fd, UFFDIO_API, &api) == 0 &&
		    (api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP)) {
			*thread_id = !!(features[i] & UFFD_FEATURE_THREAD_ID);
			return fd;
		}
		(void)snprintf(reason, len, "UFFDIO_API without UFFD_FEATURE_PAGEFAULT_FLAG_WP, "
			"errno=%d (%s)", errno, strerror(errno));
		(void)close(fd);
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_uffd_wp()
 *	write-protect (on) or unprotect and wake (off) pages first..first+n-1
 */
static int stress_ksm_unmerge_uffd_wp(stress_ksm_unmerge_ctx_t *ctx, const int uffd,
	const size_t first, const size_t n, const bool on)
{
	struct uffdio_writeprotect wp;

	wp.range.start = (uintptr_t)(ctx->region + first * ctx->page_size);
	wp.range.len = n * ctx->page_size;
	wp.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0;
	return ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
}

/*
 *  stress_ksm_unmerge_uffd_msg_check()
 *	pure: is a uffd message one we may see (a WP page fault inside
 *	[start, start+len)); 0 if so, -1 with a description otherwise
 */
static int stress_ksm_unmerge_uffd_msg_check(const struct uffd_msg *msg, const uintptr_t start,
	const size_t len, char *why, const size_t why_len)
{
	if (msg->event != UFFD_EVENT_PAGEFAULT) {
		(void)snprintf(why, why_len, "unexpected uffd event 0x%x", (unsigned int)msg->event);
		return -1;
	}
	if (!(msg->arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP)) {
		(void)snprintf(why, why_len, "missing-page fault (flags 0x%llx) at 0x%llx, expected WP only",
			(unsigned long long)msg->arg.pagefault.flags,
			(unsigned long long)msg->arg.pagefault.address);
		return -1;
	}
	if (msg->arg.pagefault.address < start || msg->arg.pagefault.address >= start + len) {
		(void)snprintf(why, why_len, "WP fault at 0x%llx outside the region",
			(unsigned long long)msg->arg.pagefault.address);
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_uffd_fault()
 *	resolve one WP fault: mark the page touched, unprotect and wake
 */
static void stress_ksm_unmerge_uffd_fault(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u, const struct uffd_msg *msg)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const size_t i = (size_t)((msg->arg.pagefault.address - (uintptr_t)ctx->region) / ctx->page_size);

	if (u->thread_id && (pid_t)msg->arg.pagefault.feat.ptid == u->main_tid &&
	    ctx->phase == KSM_PHASE_UNMERGING) {
		pr_fail("%s: uffd-wp racer: the unmerge itself raised a WP fault at page %zu "
			"(break_ksm must unshare, not write)\n", ctx->args->name, i);
		rs->failures++;
	}
	u->touched[i] = (uint32_t)ctx->cycle;
	if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, i, 1, false) < 0 && errno != ENOENT) {
		pr_fail("%s: uffd-wp racer: UFFDIO_WRITEPROTECT off at faulting page %zu failed, "
			"errno=%d (%s)\n", ctx->args->name, i, errno, strerror(errno));
		rs->failures++;
	}
	u->faults++;
}

/*
 *  stress_ksm_unmerge_uffd_events()
 *	read and handle every pending uffd message, waiting up to ms
 */
static void stress_ksm_unmerge_uffd_events(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u, const int ms)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	struct pollfd pfd = { u->uffd, POLLIN, 0 };
	struct uffd_msg msg;
	char why[128];

	if (poll(&pfd, 1, ms) <= 0)
		return;
	while (read(u->uffd, &msg, sizeof(msg)) == (ssize_t)sizeof(msg)) {
		if (stress_ksm_unmerge_uffd_msg_check(&msg, (uintptr_t)ctx->region,
				ctx->region_size, why, sizeof(why)) < 0) {
			pr_fail("%s: uffd-wp racer: %s\n", ctx->args->name, why);
			rs->failures++;
			continue;
		}
		stress_ksm_unmerge_uffd_fault(ctx, idx, u, &msg);
	}
}

/*
 *  stress_ksm_unmerge_uffd_toggle()
 *	one op: protect a random range; while unmerging also unprotect
 *	(marked touched first so the WP-survival check leaves it out)
 */
static void stress_ksm_unmerge_uffd_toggle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	size_t first, j;
	const size_t n = stress_ksm_unmerge_ra_range(ctx, KSM_UFFD_MAX_RANGE, &first);
	const bool on = (ctx->phase != KSM_PHASE_UNMERGING) || stress_mwc32modn(2);

	if (!on) {
		for (j = 0; j < n; j++)
			u->touched[first + j] = (uint32_t)ctx->cycle;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, first, n, on) < 0 && errno != ENOENT &&
	    errno != EAGAIN) {
		pr_fail("%s: uffd-wp racer: UFFDIO_WRITEPROTECT %s pages %zu..%zu failed, errno=%d (%s)\n",
			ctx->args->name, on ? "on" : "off", first, first + n - 1, errno, strerror(errno));
		rs->failures++;
		return;
	}
	rs->ops++;
}

/*
 *  stress_ksm_unmerge_uffd_release()
 *	unprotect (and wake) the whole region
 */
static void stress_ksm_unmerge_uffd_release(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u)
{
	if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, 0, ctx->npages, false) < 0 &&
	    errno != ENOENT && errno != EAGAIN) {
		pr_fail("%s: uffd-wp racer: UFFDIO_WRITEPROTECT off for the region failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
	}
}

/*
 *  stress_ksm_unmerge_uffd_thread()
 *	racer: toggle uffd-wp on the merged region and resolve WP faults;
 *	the region is fully unprotected whenever it parks or exits
 */
static void *stress_ksm_unmerge_uffd_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_UFFD_WP;
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)ctx->run[idx].priv;

	while (stress_ksm_unmerge_ra_running(ctx)) {
		stress_ksm_unmerge_uffd_events(ctx, idx, u, 0);
		if (ctx->quiesce) {
			stress_ksm_unmerge_uffd_release(ctx, idx, u);
			stress_ksm_unmerge_uffd_events(ctx, idx, u, 0);
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (stress_ksm_unmerge_ra_phase_active(ctx)) {
			stress_ksm_unmerge_uffd_toggle(ctx, idx, u);
			(void)shim_nanosleep_uint64(20000);
			continue;
		}
		stress_ksm_unmerge_uffd_events(ctx, idx, u, 1);
	}
	/* other racers may sit in a WP fault: unprotect wakes them */
	stress_ksm_unmerge_uffd_release(ctx, idx, u);
	stress_ksm_unmerge_uffd_events(ctx, idx, u, 0);
	return NULL;
}

/*
 *  stress_ksm_unmerge_uffd_hang_report()
 *	report an unmerge that is taking too long, with its kernel stack
 */
static void stress_ksm_unmerge_uffd_hang_report(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_uffd_t *u, const double secs)
{
	char path[64], stack[2048];
	ssize_t n;

	(void)snprintf(path, sizeof(path), "/proc/self/task/%d/stack", (int)u->main_tid);
	n = stress_fs_file_read(path, stack, sizeof(stack) - 1);
	if (n < 0)
		(void)snprintf(stack, sizeof(stack), "(%s not readable, errno=%d)\n", path, errno);
	else
		stack[n] = '\0';
	pr_fail("%s: uffd-wp racer: unmerge of cycle %" PRIu64 " still running after %.1f s "
		"(hang, bound %.0f s); kernel stack of tid %d:\n%s", ctx->args->name, ctx->cycle,
		secs, KSM_UFFD_HANG_SECS, (int)u->main_tid, stack);
	stress_ksm_unmerge_racer_stats(ctx, KSM_RACER_IDX_UFFD_WP)->failures++;
}

/*
 *  stress_ksm_unmerge_uffd_watchdog()
 *	thread: an unmerge phase that lasts longer than the bound is a hang
 */
static void *stress_ksm_unmerge_uffd_watchdog(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)ctx->run[KSM_RACER_IDX_UFFD_WP].priv;
	uint64_t seen = 0, reported = 0;
	double t0 = 0.0;

	while (stress_ksm_unmerge_ra_running(ctx)) {
		if (ctx->phase == KSM_PHASE_UNMERGING) {
			const uint64_t cycle = ctx->cycle;
			const double now = stress_time_now();

			if (cycle != seen) {
				seen = cycle;
				t0 = now;
			} else if (reported != cycle && now - t0 > KSM_UFFD_HANG_SECS) {
				reported = cycle;
				stress_ksm_unmerge_uffd_hang_report(ctx, u, now - t0);
			}
		}
		(void)shim_nanosleep_uint64(10000000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_uffd_snap_build()
 *	pure: from pagemap entries and page states, mark pages that are KSM
 *	and uffd-wp protected; returns how many
 */
static uint64_t stress_ksm_unmerge_uffd_snap_build(const uint64_t *pm, const uint8_t *state,
	const size_t npages, uint8_t *snap)
{
	uint64_t count = 0;
	size_t i;

	for (i = 0; i < npages; i++) {
		snap[i] = (pm[i] & PM_UFFD_WP) &&
			(state[i] == KSM_RA_PAGE_KSM || state[i] == KSM_RA_PAGE_KZERO);
		count += snap[i];
	}
	return count;
}

/*
 *  stress_ksm_unmerge_uffd_wp_check()
 *	pure: pages protected + KSM at unmerge start and not unprotected in
 *	this cycle must still carry PM_UFFD_WP; kept/lost counted, first
 *	lost page in *first_lost (npages if none)
 */
static void stress_ksm_unmerge_uffd_wp_check(const uint8_t *snap, const volatile uint32_t *touched,
	const uint32_t cycle, const uint64_t *pm, const size_t npages,
	uint64_t *kept, uint64_t *lost, size_t *first_lost)
{
	size_t i;

	*kept = 0;
	*lost = 0;
	*first_lost = npages;
	for (i = 0; i < npages; i++) {
		if (!snap[i] || touched[i] == cycle)
			continue;
		if (pm[i] & PM_UFFD_WP) {
			(*kept)++;
			continue;
		}
		if (!*lost)
			*first_lost = i;
		(*lost)++;
	}
}

/*
 *  stress_ksm_unmerge_uffd_unshared()
 *	after the unmerge: of the pages KSM + protected at its start (and not
 *	unprotected since), those that kept PM_UFFD_WP and are no longer KSM
 *	pages (the evidence); the others that kept the bit in *still_ksm
 */
static uint64_t stress_ksm_unmerge_uffd_unshared(const stress_ksm_unmerge_ctx_t *ctx,
	const stress_ksm_unmerge_uffd_t *u, uint64_t *still_ksm)
{
	const uint32_t cycle = (uint32_t)ctx->cycle;
	uint64_t unshared = 0;
	size_t i;

	*still_ksm = 0;
	for (i = 0; i < ctx->npages; i++) {
		int st;

		if (!u->snap[i] || u->touched[i] == cycle || !(u->pm[i] & PM_UFFD_WP))
			continue;
		st = stress_ksm_unmerge_ra_pm_state(ctx, u->pm[i]);
		unshared += (st == KSM_RA_PAGE_ANON);
		*still_ksm += (st == KSM_RA_PAGE_KSM || st == KSM_RA_PAGE_KZERO);
	}
	return unshared;
}

/*
 *  stress_ksm_unmerge_uffd_snapshot()
 *	UNMERGING hook: record pages that are KSM and uffd-wp protected
 */
static void stress_ksm_unmerge_uffd_snapshot(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_uffd_t *u)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, KSM_RACER_IDX_UFFD_WP);
	size_t i;

	u->snap_valid = false;
	if (!ctx->have_pfns ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region, ctx->npages,
			ctx->page_size, u->pm) < 0)
		return;
	/* reuse snap as the page-state array, then overwrite it with the result */
	for (i = 0; i < ctx->npages; i++)
		u->snap[i] = (u->pm[i] & PM_UFFD_WP) ?
			(uint8_t)stress_ksm_unmerge_ra_pm_state(ctx, u->pm[i]) : KSM_RA_PAGE_ABSENT;
	rs->detail[0] += stress_ksm_unmerge_uffd_snap_build(u->pm, u->snap, ctx->npages, u->snap);
	u->snap_valid = true;
}

/*
 *  stress_ksm_unmerge_uffd_after()
 *	VERIFY hook: the WP bits recorded at unmerge start survived unsharing
 */
static void stress_ksm_unmerge_uffd_after(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	uint64_t kept, lost, still_ksm;
	size_t first_lost;

	if (!u->snap_valid ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region, ctx->npages,
			ctx->page_size, u->pm) < 0)
		return;
	u->snap_valid = false;
	stress_ksm_unmerge_uffd_wp_check(u->snap, u->touched, (uint32_t)ctx->cycle, u->pm,
		ctx->npages, &kept, &lost, &first_lost);
	rs->evidence += stress_ksm_unmerge_uffd_unshared(ctx, u, &still_ksm);
	rs->detail[1] += kept;
	rs->detail[2] += still_ksm;
	if (!lost)
		return;
	u->lost += lost;
	if (stress_ksm_unmerge_ra_others(ctx))
		return;		/* another racer may have discarded them */
	pr_fail("%s: uffd-wp racer: %" PRIu64 " KSM pages lost their uffd-wp bit across the "
		"unmerge (first: page %zu, pagemap %#" PRIx64 ")\n", ctx->args->name, lost,
		first_lost, u->pm[first_lost]);
	rs->failures++;
}

/*
 *  stress_ksm_unmerge_uffd_protect_half()
 *	MERGED hook: write-protect a random half of the merged region at once
 */
static void stress_ksm_unmerge_uffd_protect_half(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u)
{
	const size_t n = (ctx->npages + 1) / 2;
	const size_t first = stress_mwc32modn((uint32_t)(ctx->npages - n + 1));

	if (stress_ksm_unmerge_uffd_wp(ctx, u->uffd, first, n, true) < 0 && errno != ENOENT) {
		pr_fail("%s: uffd-wp racer: UFFDIO_WRITEPROTECT on pages %zu..%zu failed, errno=%d (%s)\n",
			ctx->args->name, first, first + n - 1, errno, strerror(errno));
		stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
		return;
	}
	stress_ksm_unmerge_racer_stats(ctx, idx)->ops++;
}

/*
 *  stress_ksm_unmerge_uffd_cycle()
 *	hooks: protect half once merged, snapshot at unmerge start,
 *	WP-survival check right after it
 */
static void stress_ksm_unmerge_uffd_cycle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const int phase)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)ctx->run[idx].priv;

	if (!u)
		return;
	if (phase == KSM_PHASE_MERGED)
		stress_ksm_unmerge_uffd_protect_half(ctx, idx, u);
	else if (phase == KSM_PHASE_UNMERGING)
		stress_ksm_unmerge_uffd_snapshot(ctx, u);
	else if (phase == KSM_PHASE_VERIFY)
		stress_ksm_unmerge_uffd_after(ctx, idx, u);
}

/*
 *  stress_ksm_unmerge_uffd_supported()
 *	userfaultfd allowed and UFFD_FEATURE_PAGEFAULT_FLAG_WP present
 */
static int stress_ksm_unmerge_uffd_supported(char *reason, const size_t len)
{
	bool thread_id;
	const int fd = stress_ksm_unmerge_uffd_open(reason, len, &thread_id);

	if (fd < 0)
		return -1;
	(void)close(fd);
	return 0;
}

/*
 *  stress_ksm_unmerge_uffd_free()
 *	unregister, close and free
 */
static void stress_ksm_unmerge_uffd_free(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)ctx->run[idx].priv;

	if (!u)
		return;
	if (u->uffd >= 0) {
		struct uffdio_range range = { (uintptr_t)ctx->region, ctx->region_size };

		if (ioctl(u->uffd, UFFDIO_UNREGISTER, &range) < 0)
			pr_dbg("%s: uffd-wp racer: UFFDIO_UNREGISTER failed, errno=%d (%s)\n",
				ctx->args->name, errno, strerror(errno));
		(void)close(u->uffd);
	}
	free(u->snap);
	free((void *)u->touched);
	free(u->pm);
	free(u);
	ctx->run[idx].priv = NULL;
}

/*
 *  stress_ksm_unmerge_uffd_register()
 *	register the region in WP mode; WRITEPROTECT must be offered
 */
static int stress_ksm_unmerge_uffd_register(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_uffd_t *u)
{
	struct uffdio_register reg;

	(void)memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)ctx->region;
	reg.range.len = ctx->region_size;
	reg.mode = UFFDIO_REGISTER_MODE_WP;
	if (ioctl(u->uffd, UFFDIO_REGISTER, &reg) < 0) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "UFFDIO_REGISTER MODE_WP failed, errno=%d (%s)",
			errno, strerror(errno));
		return -1;
	}
	if (!(reg.ioctls & (1ULL << _UFFDIO_WRITEPROTECT))) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "UFFDIO_WRITEPROTECT not offered for anonymous memory");
		return -1;
	}
	/* registration adds the "uw" VMA flag: re-baseline the VmFlags check */
	if (stress_ksm_unmerge_vmflags(ctx->region, ctx->vmflags_before, sizeof(ctx->vmflags_before)) < 0)
		ctx->vmflags_before[0] = '\0';
	return 0;
}

/*
 *  stress_ksm_unmerge_uffd_start()
 *	uffd registered in WP mode, toggle/handler thread, watchdog thread
 */
static int stress_ksm_unmerge_uffd_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_uffd_t *u = calloc(1, sizeof(*u));

	if (!u) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "out of memory for the racer state");
		return -1;
	}
	ctx->run[idx].priv = u;
	u->main_tid = (pid_t)shim_gettid();
	u->snap = calloc(ctx->npages, 1);
	u->touched = calloc(ctx->npages, sizeof(uint32_t));
	u->pm = calloc(ctx->npages, sizeof(uint64_t));
	u->uffd = stress_ksm_unmerge_uffd_open(ctx->st->racer[idx].reason,
		sizeof(ctx->st->racer[idx].reason), &u->thread_id);
	if (!u->snap || !u->touched || !u->pm || u->uffd < 0 ||
	    stress_ksm_unmerge_uffd_register(ctx, idx, u) < 0) {
		if (!u->snap || !u->touched || !u->pm)
			stress_ksm_unmerge_ra_reason(ctx, idx, "out of memory for the page maps");
		stress_ksm_unmerge_uffd_free(ctx, idx);
		return -1;
	}
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_uffd_thread) < 0) {
		stress_ksm_unmerge_uffd_free(ctx, idx);
		return -1;
	}
	u->watchdog_running = stress_ksm_unmerge_racer_helper_start(ctx, idx, "unmerge watchdog",
		&u->watchdog, stress_ksm_unmerge_uffd_watchdog);
	return 0;
}

/*
 *  stress_ksm_unmerge_uffd_stop()
 *	join both threads (the region is unprotected by then), unregister, close
 */
static void stress_ksm_unmerge_uffd_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_uffd_t *u = (stress_ksm_unmerge_uffd_t *)ctx->run[idx].priv;

	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	if (!u)
		return;
	stress_ksm_unmerge_racer_helper_join(u->watchdog, &u->watchdog_running);
	stress_ksm_unmerge_racer_stats(ctx, idx)->aux += u->faults;
	pr_dbg("%s: uffd-wp racer: %" PRIu64 " WP faults resolved, %" PRIu64 " WP bits lost "
		"(tolerated with other racers), thread ids %s\n", ctx->args->name, u->faults,
		u->lost, u->thread_id ? "yes" : "no");
	stress_ksm_unmerge_uffd_free(ctx, idx);
}

#define KSM_RACER_UFFD_WP { "uffd-wp", "unshare of uffd-wp protected KSM pages", \
	"wp-pages-unshared", stress_ksm_unmerge_uffd_supported, \
	stress_ksm_unmerge_uffd_start, stress_ksm_unmerge_uffd_stop, \
	stress_ksm_unmerge_uffd_cycle, NULL }

#endif

/* ------------------------------------------------------------------ */
/* thp: KSM split of THPs, unmerge racing memory compaction            */
/* ------------------------------------------------------------------ */

#if defined(MADV_HUGEPAGE)

#define KSM_THP_CHUNKS		(4)		/* most THPs in the racer's region */
#define KSM_THP_MAX_BYTES	(32 * MB)	/* largest THP region */
#define KSM_THP_ENABLED		"/sys/kernel/mm/transparent_hugepage/enabled"
#define KSM_THP_PMD_SIZE	"/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"

/* what a chunk of the THP region was faulted as */
enum {
	KSM_THP_KIND_NONE = 0,		/* small pages */
	KSM_THP_KIND_PMD,		/* one PMD-sized THP */
	KSM_THP_KIND_MTHP,		/* large folios smaller than a PMD (mTHP) */
};

/* detail[] counters of the thp racer */
#define KSM_THP_D_PMD		(0)	/* chunks faulted as PMD-sized THPs */
#define KSM_THP_D_MTHP		(1)	/* chunks faulted as mTHPs */
#define KSM_THP_D_ANON_HUGE	(2)	/* PMD mappings seen in smaps AnonHugePages */
#define KSM_THP_COMPACT		"/proc/sys/vm/compact_memory"

typedef struct {
	uint8_t *map;			/* mapping with alignment slack */
	size_t map_size;
	uint8_t *thp;			/* PMD aligned THP region */
	size_t size;
	size_t npages;
	size_t pmd_size;		/* hpage_pmd_size */
	size_t chunks;			/* PMD-sized chunks in the region */
	uint64_t *pm;			/* pagemap scratch */
	uint64_t *flags;		/* kpageflags scratch */
	uint8_t was_thp[KSM_THP_CHUNKS];	/* THP-mapped before merging */
	volatile uint64_t unmerged;	/* cycle whose unmerge the thread did */
	volatile uint64_t compacted;	/* cycle compaction ran in */
	int busy;			/* compaction in progress (atomic) */
	bool can_compact;		/* root and compact_memory writable */
	int verify_fd;			/* compact_memory fd: LOCK_SH while verifying */
	int compact_fd;			/* compact_memory fd: LOCK_EX while compacting */
	pthread_t compactor;
	bool compactor_running;
	uint64_t thps;			/* THPs faulted before merging */
	uint64_t compactions;		/* compactions started during unmerge */
} stress_ksm_unmerge_thp_t;

/*
 *  stress_ksm_unmerge_thp_template()
 *	the non-zero page every THP subpage holds (the "same" template)
 */
static inline const uint8_t *stress_ksm_unmerge_thp_template(const stress_ksm_unmerge_ctx_t *ctx)
{
	return ctx->templates;
}

/*
 *  stress_ksm_unmerge_thp_data_check()
 *	pure: first page of buf (npages pages) that differs from tmpl, with
 *	its byte offset in *off; -1 if all pages hold tmpl
 */
static ssize_t stress_ksm_unmerge_thp_data_check(const uint8_t *buf, const size_t npages,
	const uint8_t *tmpl, const size_t page_size, size_t *off)
{
	size_t i, b;

	*off = 0;
	for (i = 0; i < npages; i++) {
		const uint8_t *p = buf + i * page_size;

		if (!memcmp(p, tmpl, page_size))
			continue;
		for (b = 0; b < page_size && p[b] == tmpl[b]; b++)
			;
		*off = b;
		return (ssize_t)i;
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_thp_split_count()
 *	pure: from per-subpage states of chunks that were THPs, count THPs
 *	whose subpages became KSM pages (split + merged); KSM subpages in *pages
 */
static uint64_t stress_ksm_unmerge_thp_split_count(const uint8_t *state, const uint8_t *was_thp,
	const size_t chunks, const size_t per_chunk, uint64_t *pages)
{
	uint64_t split = 0;
	size_t c, i;

	*pages = 0;
	for (c = 0; c < chunks; c++) {
		uint64_t k = 0;

		for (i = 0; i < per_chunk; i++)
			k += (state[c * per_chunk + i] == KSM_RA_PAGE_KSM);
		*pages += k;
		split += (was_thp[c] && k > 0);
	}
	return split;
}

/*
 *  stress_ksm_unmerge_thp_kind()
 *	pure: a chunk of per subpages (pagemap pm, kpageflags flags) is small
 *	pages, one PMD-sized THP (a compound head followed by per-1 tails on
 *	consecutive pfns) or smaller large folios, mTHPs
 */
static int stress_ksm_unmerge_thp_kind(const uint64_t *pm, const uint64_t *flags, const size_t per)
{
	size_t i;

	if (!(pm[0] & PM_PRESENT) || !(flags[0] & STRESS_BIT_ULL(KPF_BIT_THP)))
		return KSM_THP_KIND_NONE;
	if (!(flags[0] & STRESS_BIT_ULL(KPF_BIT_COMPOUND_HEAD)))
		return KSM_THP_KIND_MTHP;
	for (i = 1; i < per; i++) {
		if (!(pm[i] & PM_PRESENT) ||
		    ((pm[i] & PM_PFN_MASK) != (pm[0] & PM_PFN_MASK) + i) ||
		    !(flags[i] & STRESS_BIT_ULL(KPF_BIT_COMPOUND_TAIL)))
			return KSM_THP_KIND_MTHP;
	}
	return KSM_THP_KIND_PMD;
}

/*
 *  stress_ksm_unmerge_thp_chunk_flags()
 *	kpageflags of a chunk's per subpages: one read when the pfns are
 *	consecutive, else one per present page (0 for absent pages)
 */
static void stress_ksm_unmerge_thp_chunk_flags(const stress_ksm_unmerge_ctx_t *ctx, const uint64_t *pm,
	const size_t per, uint64_t *flags)
{
	const uint64_t pfn0 = pm[0] & PM_PFN_MASK;
	const ssize_t len = (ssize_t)(per * sizeof(*flags));
	size_t i;

	for (i = 1; i < per; i++)
		if (!(pm[i] & PM_PRESENT) || (pm[i] & PM_PFN_MASK) != pfn0 + i)
			break;
	if ((pm[0] & PM_PRESENT) && i == per &&
	    pread(ctx->kpageflags_fd, flags, (size_t)len, (off_t)(pfn0 * sizeof(*flags))) == len)
		return;
	for (i = 0; i < per; i++)
		flags[i] = (pm[i] & PM_PRESENT) ?
			stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, pm[i] & PM_PFN_MASK) : 0;
}

/*
 *  stress_ksm_unmerge_thp_anon_huge_kb()
 *	AnonHugePages (PMD-mapped THPs, kB) of the VMA holding addr in
 *	/proc/self/smaps, -1 if not found
 */
static int64_t stress_ksm_unmerge_thp_anon_huge_kb(const void *addr)
{
	const unsigned long a = (unsigned long)(uintptr_t)addr;
	char line[512];
	bool in_vma = false;
	int64_t kb = -1;
	FILE *fp = fopen("/proc/self/smaps", "re");

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long lo, hi;
		long long v;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			if (in_vma)
				break;
			in_vma = (a >= lo && a < hi);
		} else if (in_vma && sscanf(line, "AnonHugePages: %lld kB", &v) == 1) {
			kb = (int64_t)v;
			break;
		}
	}
	(void)fclose(fp);
	return kb;
}

/*
 *  stress_ksm_unmerge_thp_refault()
 *	MERGING hook: fresh THPs with the template content, record which
 *	chunks really are THP-mapped (KPF_THP), then make them mergeable
 */
static void stress_ksm_unmerge_thp_refault(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const uint8_t *tmpl = stress_ksm_unmerge_thp_template(ctx);
	size_t i, c;

	if (madvise(t->thp, t->size, MADV_DONTNEED) < 0)
		pr_dbg("%s: thp racer: MADV_DONTNEED failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
	for (i = 0; i < t->npages; i++)
		(void)shim_memcpy(t->thp + i * ctx->page_size, tmpl, ctx->page_size);
	(void)memset(t->was_thp, 0, sizeof(t->was_thp));
	if (ctx->have_pfns &&
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, t->thp, t->npages, ctx->page_size, t->pm) == 0) {
		const size_t per = t->pmd_size / ctx->page_size;
		int64_t kb;

		for (c = 0; c < t->chunks; c++) {
			int kind;

			stress_ksm_unmerge_thp_chunk_flags(ctx, t->pm + c * per, per, t->flags + c * per);
			kind = stress_ksm_unmerge_thp_kind(t->pm + c * per, t->flags + c * per, per);
			t->was_thp[c] = (kind != KSM_THP_KIND_NONE);
			t->thps += t->was_thp[c];
			rs->detail[KSM_THP_D_PMD] += (kind == KSM_THP_KIND_PMD);
			rs->detail[KSM_THP_D_MTHP] += (kind == KSM_THP_KIND_MTHP);
		}
		kb = stress_ksm_unmerge_thp_anon_huge_kb(t->thp);
		if (kb > 0)
			rs->detail[KSM_THP_D_ANON_HUGE] += (uint64_t)kb / (t->pmd_size / 1024);
	}
	if (madvise(t->thp, t->size, MADV_MERGEABLE) < 0) {
		pr_fail("%s: thp racer: MADV_MERGEABLE on the THP region failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
	}
}

/*
 *  stress_ksm_unmerge_thp_merged()
 *	MERGED hook: count THPs that KSM split and merged (evidence)
 */
static void stress_ksm_unmerge_thp_merged(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	uint8_t *state;
	uint64_t pages;
	size_t i;

	if (!ctx->have_pfns ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, t->thp, t->npages, ctx->page_size, t->pm) < 0)
		return;
	state = malloc(t->npages);
	if (!state)
		return;
	for (i = 0; i < t->npages; i++)
		state[i] = (uint8_t)stress_ksm_unmerge_ra_pm_state(ctx, t->pm[i]);
	rs->evidence += stress_ksm_unmerge_thp_split_count(state, t->was_thp, t->chunks,
		t->pmd_size / ctx->page_size, &pages);
	rs->aux += pages;
	free(state);
}

/*
 *  stress_ksm_unmerge_thp_verify_lock()
 *	share-lock compact_memory while the cycle verifies: compaction turns
 *	PTEs into migration entries (not present in pagemap) and reuses
 *	pfns, which the verification would report as lost or shared pages
 */
static void stress_ksm_unmerge_thp_verify_lock(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_thp_t *t, const bool lock)
{
	if (t->verify_fd < 0)
		return;
	while (flock(t->verify_fd, lock ? LOCK_SH : LOCK_UN) < 0) {
		if (errno != EINTR) {
			pr_dbg("%s: thp racer: flock %s failed, errno=%d (%s)\n", ctx->args->name,
				KSM_THP_COMPACT, errno, strerror(errno));
			return;
		}
	}
}

/*
 *  stress_ksm_unmerge_thp_cycle()
 *	hooks: fresh THPs when merging starts, split evidence once merged
 */
static void stress_ksm_unmerge_thp_cycle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const int phase)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)ctx->run[idx].priv;

	if (!t)
		return;
	if (phase == KSM_PHASE_MERGING)
		stress_ksm_unmerge_thp_refault(ctx, idx, t);
	else if (phase == KSM_PHASE_MERGED)
		stress_ksm_unmerge_thp_merged(ctx, idx, t);
	/* no compaction (any instance's) while this instance verifies */
	stress_ksm_unmerge_thp_verify_lock(ctx, t,
		phase == KSM_PHASE_MERGED || phase == KSM_PHASE_VERIFY);
}

/*
 *  stress_ksm_unmerge_thp_unmerge()
 *	unmerge the THP region (a no-op after a prctl unmerge did it)
 */
static void stress_ksm_unmerge_thp_unmerge(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
	if (t->unmerged == ctx->cycle)
		return;
	t->unmerged = ctx->cycle;
	if (madvise(t->thp, t->size, MADV_UNMERGEABLE) < 0) {
		pr_fail("%s: thp racer: MADV_UNMERGEABLE on the THP region failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
		return;
	}
	stress_ksm_unmerge_racer_stats(ctx, idx)->ops++;
}

/*
 *  stress_ksm_unmerge_thp_verify()
 *	after unmerge: every page of the THP region holds the template and
 *	none is still a KSM page
 */
static void stress_ksm_unmerge_thp_verify(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const uint8_t *tmpl = stress_ksm_unmerge_thp_template(ctx);
	size_t off, i;
	const ssize_t bad = stress_ksm_unmerge_thp_data_check(t->thp, t->npages, tmpl, ctx->page_size, &off);

	if (bad >= 0) {
		pr_fail("%s: thp racer: THP region page %zd byte %zu is 0x%02x after unmerge, expected 0x%02x\n",
			ctx->args->name, bad, off, t->thp[(size_t)bad * ctx->page_size + off], tmpl[off]);
		rs->failures++;
		return;
	}
	if (!ctx->have_pfns ||
	    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, t->thp, t->npages, ctx->page_size, t->pm) < 0)
		return;
	for (i = 0; i < t->npages; i++) {
		const int st = stress_ksm_unmerge_ra_pm_state(ctx, t->pm[i]);

		if (st == KSM_RA_PAGE_KSM || st == KSM_RA_PAGE_KZERO) {
			pr_fail("%s: thp racer: THP region page %zu is still a KSM page after unmerge "
				"(pagemap %#" PRIx64 ")\n", ctx->args->name, i, t->pm[i]);
			rs->failures++;
			return;
		}
	}
}

/*
 *  stress_ksm_unmerge_thp_settle()
 *	before parking: wait (bounded) for compaction, unmerge, verify
 */
static void stress_ksm_unmerge_thp_settle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
	const double deadline = stress_time_now() + 4.0;

	while (__atomic_load_n(&t->busy, __ATOMIC_SEQ_CST) && stress_time_now() < deadline)
		(void)shim_nanosleep_uint64(1000000);
	stress_ksm_unmerge_thp_unmerge(ctx, idx, t);
	stress_ksm_unmerge_thp_verify(ctx, idx, t);
}

/*
 *  stress_ksm_unmerge_thp_thread()
 *	racer: unmerge the THP region while the main unmerge runs; verify
 *	it before parking
 */
static void *stress_ksm_unmerge_thp_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_THP;
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)ctx->run[idx].priv;

	while (stress_ksm_unmerge_ra_running(ctx)) {
		if (ctx->quiesce) {
			if (ctx->run[idx].quiesced != ctx->quiesce)
				stress_ksm_unmerge_thp_settle(ctx, idx, t);
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (ctx->phase == KSM_PHASE_UNMERGING)
			stress_ksm_unmerge_thp_unmerge(ctx, idx, t);
		(void)shim_nanosleep_uint64(100000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_thp_compact()
 *	write 1 to compact_memory; false if not permitted
 */
static bool stress_ksm_unmerge_thp_compact(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_thp_t *t)
{
	if (write(t->compact_fd, "1", 1) != 1) {
		pr_dbg("%s: thp racer: cannot write %s, errno=%d (%s); no compaction\n",
			ctx->args->name, KSM_THP_COMPACT, errno, strerror(errno));
		return false;
	}
	return true;
}

/*
 *  stress_ksm_unmerge_thp_compact_locked()
 *	compact unless some instance is verifying (then try again later);
 *	true if this cycle is done with
 */
static bool stress_ksm_unmerge_thp_compact_locked(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_thp_t *t)
{
	if (flock(t->compact_fd, LOCK_EX | LOCK_NB) < 0)
		return errno != EWOULDBLOCK && errno != EINTR;
	t->can_compact = stress_ksm_unmerge_thp_compact(ctx, t);
	t->compactions += t->can_compact;
	(void)flock(t->compact_fd, LOCK_UN);
	return true;
}

/*
 *  stress_ksm_unmerge_thp_compactor()
 *	thread (root only): compact memory once per cycle while unmerging,
 *	so break_ksm meets migration entries; never while verifying
 */
static void *stress_ksm_unmerge_thp_compactor(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)ctx->run[KSM_RACER_IDX_THP].priv;

	while (stress_ksm_unmerge_ra_running(ctx) && t->can_compact) {
		if (ctx->phase == KSM_PHASE_UNMERGING && t->compacted != ctx->cycle && !ctx->quiesce) {
			const uint64_t cycle = ctx->cycle;

			__atomic_store_n(&t->busy, 1, __ATOMIC_SEQ_CST);
			if (ctx->phase == KSM_PHASE_UNMERGING && !ctx->quiesce &&
			    stress_ksm_unmerge_thp_compact_locked(ctx, t))
				t->compacted = cycle;
			__atomic_store_n(&t->busy, 0, __ATOMIC_SEQ_CST);
		}
		(void)shim_nanosleep_uint64(50000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_thp_supported()
 *	THP must be built in and not disabled
 */
static int stress_ksm_unmerge_thp_supported(char *reason, const size_t len)
{
	char buf[128];
	const ssize_t n = stress_fs_file_read(KSM_THP_ENABLED, buf, sizeof(buf) - 1);

	if (n <= 0) {
		(void)snprintf(reason, len, "no transparent huge pages (%s missing)", KSM_THP_ENABLED);
		return -1;
	}
	buf[n] = '\0';
	if (strstr(buf, "[never]")) {
		(void)snprintf(reason, len, "transparent huge pages disabled (%s is [never])", KSM_THP_ENABLED);
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_thp_free()
 *	unmap the region, free the state
 */
static void stress_ksm_unmerge_thp_free(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)ctx->run[idx].priv;

	if (!t)
		return;
	if (t->verify_fd >= 0)
		(void)close(t->verify_fd);
	if (t->compact_fd >= 0)
		(void)close(t->compact_fd);
	if (t->map)
		(void)munmap(t->map, t->map_size);
	free(t->pm);
	free(t->flags);
	free(t);
	ctx->run[idx].priv = NULL;
}

/*
 *  stress_ksm_unmerge_thp_pmd_size()
 *	the PMD size from hpage_pmd_size (not assumed) and how many PMD-sized
 *	chunks fit KSM_THP_MAX_BYTES (at most KSM_THP_CHUNKS)
 */
static int stress_ksm_unmerge_thp_pmd_size(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
	char buf[32];
	const ssize_t n = stress_fs_file_read(KSM_THP_PMD_SIZE, buf, sizeof(buf) - 1);
	unsigned long long v;

	if (n <= 0) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "cannot read %s, errno=%d (%s)", KSM_THP_PMD_SIZE,
			n < 0 ? errno : ENODATA, strerror(n < 0 ? errno : ENODATA));
		return -1;
	}
	buf[n] = '\0';
	if (sscanf(buf, "%llu", &v) != 1 || v < 2 * ctx->page_size || (v & (v - 1)) ||
	    v > KSM_THP_MAX_BYTES) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "PMD size '%.20s' from hpage_pmd_size unusable "
			"(power of 2, at most %u MiB)", buf, (unsigned int)(KSM_THP_MAX_BYTES / MB));
		return -1;
	}
	t->pmd_size = (size_t)v;
	t->chunks = KSM_THP_MAX_BYTES / 4 / t->pmd_size;
	t->chunks = t->chunks < 1 ? 1 : (t->chunks > KSM_THP_CHUNKS ? KSM_THP_CHUNKS : t->chunks);
	return 0;
}

/*
 *  stress_ksm_unmerge_thp_map()
 *	map up to KSM_THP_CHUNKS PMD-sized chunks, PMD aligned, with MADV_HUGEPAGE
 */
static int stress_ksm_unmerge_thp_map(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_thp_t *t)
{
	if (stress_ksm_unmerge_thp_pmd_size(ctx, idx, t) < 0)
		return -1;
	t->size = t->chunks * t->pmd_size;
	t->npages = t->size / ctx->page_size;
	t->map_size = t->size + t->pmd_size;
	t->map = mmap(NULL, t->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->map == MAP_FAILED) {
		t->map = NULL;
		stress_ksm_unmerge_ra_reason(ctx, idx, "mmap of %zu bytes failed, errno=%d (%s)",
			t->map_size, errno, strerror(errno));
		return -1;
	}
	t->thp = (uint8_t *)(((uintptr_t)t->map + t->pmd_size - 1) & ~((uintptr_t)t->pmd_size - 1));
	if (madvise(t->thp, t->size, MADV_HUGEPAGE) < 0) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "MADV_HUGEPAGE failed, errno=%d (%s)",
			errno, strerror(errno));
		return -1;
	}
	stress_memory_anon_name_set(t->thp, t->size, "ksm-unmerge-thp");
	t->pm = calloc(t->npages, sizeof(uint64_t));
	t->flags = calloc(t->npages, sizeof(uint64_t));
	if (!t->pm || !t->flags) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "out of memory for the pagemap buffer");
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_thp_start()
 *	THP region, racer thread, compactor thread when root
 */
static int stress_ksm_unmerge_thp_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_thp_t *t = calloc(1, sizeof(*t));

	if (!t) {
		stress_ksm_unmerge_ra_reason(ctx, idx, "out of memory for the racer state");
		return -1;
	}
	ctx->run[idx].priv = t;
	t->verify_fd = t->compact_fd = -1;
	if (stress_ksm_unmerge_thp_map(ctx, idx, t) < 0) {
		stress_ksm_unmerge_thp_free(ctx, idx);
		return -1;
	}
	/* its pages count in this process's ksm_merging_pages */
	ctx->racers_disturb_counts = true;
	if (geteuid() == 0) {
		t->verify_fd = open(KSM_THP_COMPACT, O_WRONLY | O_CLOEXEC);
		t->compact_fd = open(KSM_THP_COMPACT, O_WRONLY | O_CLOEXEC);
	}
	t->can_compact = (t->verify_fd >= 0) && (t->compact_fd >= 0);
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_thp_thread) < 0) {
		stress_ksm_unmerge_thp_free(ctx, idx);
		return -1;
	}
	if (t->can_compact)
		t->compactor_running = stress_ksm_unmerge_racer_helper_start(ctx, idx, "compaction",
			&t->compactor, stress_ksm_unmerge_thp_compactor);
	return 0;
}

/*
 *  stress_ksm_unmerge_thp_stop()
 *	join both threads, unmap the region
 */
static void stress_ksm_unmerge_thp_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_thp_t *t = (stress_ksm_unmerge_thp_t *)ctx->run[idx].priv;

	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	if (!t)
		return;
	stress_ksm_unmerge_racer_helper_join(t->compactor, &t->compactor_running);
	if (!t->thps && !ctx->st->racer[idx].reason[0])
		stress_ksm_unmerge_ra_reason(ctx, idx, "no THP could be faulted (KPF_THP never set)");
	pr_dbg("%s: thp racer: %" PRIu64 " THPs faulted before merging, %" PRIu64
		" compactions during unmerge\n", ctx->args->name, t->thps, t->compactions);
	stress_ksm_unmerge_thp_free(ctx, idx);
}

#define KSM_RACER_THP { "thp", "KSM split of THPs, unmerge vs compaction", \
	"thps-split", stress_ksm_unmerge_thp_supported, \
	stress_ksm_unmerge_thp_start, stress_ksm_unmerge_thp_stop, \
	stress_ksm_unmerge_thp_cycle, NULL }

#endif

/*
 *  Racers mrelease, fork, mprotect and sparse
 */
static void stress_ksm_unmerge_lat_add(stress_ksm_unmerge_lat_t *lat, const double ms);

#if !defined(PR_SET_PDEATHSIG)
#define PR_SET_PDEATHSIG		(1)
#endif
#if !defined(MAP_NORESERVE)
#define MAP_NORESERVE			(0)
#endif

#define KSM_MRELEASE_ROUNDS		(4)		/* kill/reap rounds per cycle */
#define KSM_MRELEASE_DELAY_NS		(2000000)	/* max fork-to-kill delay */
#define KSM_MRELEASE_CHILD_SECS		(10)		/* child lifetime bound */
#define KSM_MRELEASE_MODES		(3)		/* unmerge, COW-write, keep */
#define KSM_MRELEASE_PROBE_PAGES	(64)		/* victim pages probed before the kill */
#define KSM_FORK_PAGES			(64)		/* KSM pages a child COWs */
#define KSM_FORK_MIN_PAGES		(4)		/* ... at least, if it can */
#define KSM_FORK_TRIES			(1024)		/* random picks per child */
#define KSM_FORK_REAP_SECS		(3.0)		/* child exit bound */
#define KSM_MPROTECT_TOGGLES		(128)		/* mprotect calls per cycle */
#define KSM_MPROTECT_MAX_PAGES		(32)		/* pages per mprotect */
#define KSM_SPARSE_DEFAULT_BYTES	(16ULL * GB)
#define KSM_SPARSE_STRIDE		(64ULL * MB)	/* one populated page per */

/* Racers implemented in this file */
#define KSM_RB_MASK	(STRESS_BIT_ULL(KSM_RACER_IDX_MRELEASE) |	\
			 STRESS_BIT_ULL(KSM_RACER_IDX_FORK) |		\
			 STRESS_BIT_ULL(KSM_RACER_IDX_MPROTECT) |	\
			 STRESS_BIT_ULL(KSM_RACER_IDX_SPARSE))

/*
 *  stress_ksm_unmerge_b_others()
 *	racers from outside this file run: they may discard pages, which
 *	then read back (or merge) as zero-filled pages until refilled
 */
static inline bool stress_ksm_unmerge_b_others(const stress_ksm_unmerge_ctx_t *ctx)
{
	return (ctx->racers_mask & ~KSM_RB_MASK) != 0;
}

/*
 *  stress_ksm_unmerge_b_is_zero()
 *	pure: is the page all zero bytes
 */
static bool stress_ksm_unmerge_b_is_zero(const uint8_t *page, const size_t len)
{
	const uint64_t *p = (const uint64_t *)page;
	size_t w;

	for (w = 0; w < len / sizeof(uint64_t); w++)
		if (p[w])
			return false;
	return true;
}

/*
 *  stress_ksm_unmerge_b_pattern_bad()
 *	byte offset of the first wrong byte of region page i at page, -1 if it
 *	holds the pattern or is a zero page another racer's discard explains
 */
static ssize_t stress_ksm_unmerge_b_pattern_bad(const stress_ksm_unmerge_ctx_t *ctx,
	const size_t i, const uint8_t *page)
{
	const ssize_t off = stress_ksm_unmerge_page_check(ctx, i, page);

	if (off >= 0 && stress_ksm_unmerge_b_others(ctx) &&
	    stress_ksm_unmerge_b_is_zero(page, ctx->page_size))
		return -1;
	return off;
}

/*
 *  stress_ksm_unmerge_b_now_ns()
 *	CLOCK_MONOTONIC in nanoseconds
 */
static uint64_t stress_ksm_unmerge_b_now_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 *  stress_ksm_unmerge_b_entry_ksm()
 *	pure: does pagemap entry e (kpageflags flags) map a KSM page or KSM zero page
 */
static bool stress_ksm_unmerge_b_entry_ksm(const uint64_t e, const uint64_t flags,
	const uint64_t zero_pfn)
{
	int what;

	if (!(e & PM_PRESENT))
		return false;
	what = stress_ksm_unmerge_what(zero_pfn, e, flags, 1);
	return what == KSM_PAGE_ZERO || what == KSM_PAGE_KSM;
}

/*
 *  stress_ksm_unmerge_b_page_ksm()
 *	is region page i (pagemap entry e, kpageflags flags) a KSM page; the
 *	shared zero page only counts as a KSM zero page where the pattern puts
 *	zero pages (elsewhere it is a discarded page read back)
 */
static bool stress_ksm_unmerge_b_page_ksm(const stress_ksm_unmerge_ctx_t *ctx, const size_t i,
	const uint64_t e, const uint64_t flags)
{
	if ((e & PM_PRESENT) && stress_ksm_unmerge_what(ctx->zero_pfn, e, flags, 1) == KSM_PAGE_ZERO)
		return stress_ksm_unmerge_page_kind(ctx->pattern, i) == KSM_KIND_ZERO;
	return stress_ksm_unmerge_b_entry_ksm(e, flags, ctx->zero_pfn);
}

/*
 *  stress_ksm_unmerge_b_unshared()
 *	pure: page that mapped KSM pfn_before now maps e_after (flags_after):
 *	1 unshared (a private page), 0 not present or another racer's zero
 *	page (inconclusive), -1 still a KSM page or still the KSM zero page.
 *	Decided by the page flags, not the pfn: when compaction migrated the
 *	KSM page during the unmerge, the private copy can be allocated in the
 *	frame the KSM page left (measured: 41 times in 13 M checks)
 */
static int stress_ksm_unmerge_b_unshared(const uint64_t pfn_before, const uint64_t e_after,
	const uint64_t flags_after, const uint64_t zero_pfn)
{
	if (!(e_after & PM_PRESENT))
		return 0;
	/* the zero page: still KSM's, or a discarded page read back */
	if (zero_pfn && ((e_after & PM_PFN_MASK) == zero_pfn))
		return (pfn_before == zero_pfn) ? -1 : 0;
	if (stress_ksm_unmerge_b_entry_ksm(e_after, flags_after, zero_pfn))
		return -1;
	return 1;
}

/*
 *  stress_ksm_unmerge_b_lookup()
 *	pagemap entry (via pm_fd) and kpageflags word of the page at addr
 */
static int stress_ksm_unmerge_b_lookup(const stress_ksm_unmerge_ctx_t *ctx, const int pm_fd,
	const void *addr, uint64_t *e, uint64_t *flags)
{
	*e = 0;
	*flags = 0;
	if (stress_ksm_unmerge_pagemap_read(pm_fd, addr, 1, ctx->page_size, e) < 0)
		return -1;
	if ((*e & PM_PRESENT) && (*e & PM_PFN_MASK))
		*flags = stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, *e & PM_PFN_MASK);
	return 0;
}

/*
 *  stress_ksm_unmerge_b_keep_going()
 *	racer thread: false (after a short sleep) once the run is ending; the
 *	thread must still park for a cycle that verifies after the end of the
 *	run, so it loops on racers_stop, not on stress_continue()
 */
static bool stress_ksm_unmerge_b_keep_going(stress_ksm_unmerge_ctx_t *ctx)
{
	if (stress_ksm_unmerge_racer_running(ctx))
		return true;
	(void)shim_nanosleep_uint64(1000000);
	return false;
}

/*
 *  stress_ksm_unmerge_b_vma_flags()
 *	diagnostics: range and VmFlags (with "mg") of the VMA holding addr
 */
static void stress_ksm_unmerge_b_vma_flags(const void *addr, char *out, const size_t len)
{
	const unsigned long a = (unsigned long)(uintptr_t)addr;
	char line[512];
	bool in_vma = false;
	FILE *fp;

	(void)snprintf(out, len, "VMA not found");
	fp = fopen("/proc/self/smaps", "re");
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in_vma = (a >= lo && a < hi);
			if (in_vma)
				(void)snprintf(out, len, "%lx-%lx", lo, hi);
			continue;
		}
		if (in_vma && !strncmp(line, "VmFlags:", 8)) {
			line[strcspn(line, "\n")] = '\0';
			(void)strlcat(out, line + 8, len);
			break;
		}
	}
	(void)fclose(fp);
}

/*
 *  stress_ksm_unmerge_b_child_init()
 *	racer child: die with the forking thread, be the OOM killer's first pick
 */
static int stress_ksm_unmerge_b_child_init(stress_ksm_unmerge_ctx_t *ctx, const pid_t parent)
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

/*
 *  stress_ksm_unmerge_b_need_pfns()
 *	start(): -1 with the reason when pagemap hides PFNs (not root): the
 *	racer's evidence (what why names) cannot be seen
 */
static int stress_ksm_unmerge_b_need_pfns(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const char *why)
{
	if (ctx->have_pfns)
		return 0;
	(void)snprintf(ctx->st->racer[idx].reason, sizeof(ctx->st->racer[idx].reason),
		"pagemap PFNs not readable (needs CAP_SYS_ADMIN): %s", why);
	return -1;
}

/*
 *  stress_ksm_unmerge_b_child_rw()
 *	racer child: make its own copy of the region writable (mprotect racer)
 */
static int stress_ksm_unmerge_b_child_rw(stress_ksm_unmerge_ctx_t *ctx)
{
	return mprotect(ctx->region, ctx->region_size, PROT_READ | PROT_WRITE);
}

/*
 *  stress_ksm_unmerge_b_reap()
 *	wait for child pid up to secs (0: no bound), then SIGKILL it;
 *	returns 1 if it had to be killed, 0 reaped, -1 waitpid error
 */
static int stress_ksm_unmerge_b_reap(const pid_t pid, const double secs, int *status)
{
	const double deadline = stress_time_now() + secs;
	pid_t ret;

	*status = 0;
	if (secs <= 0.0)
		return (shim_waitpid(pid, status, 0) == pid) ? 0 : -1;
	for (;;) {
		ret = waitpid(pid, status, WNOHANG);
		if (ret == pid)
			return 0;
		if ((ret < 0) && (errno != EINTR))
			return -1;
		if (stress_time_now() > deadline)
			break;
		(void)shim_nanosleep_uint64(500000);
	}
	(void)shim_kill(pid, SIGKILL);
	return (shim_waitpid(pid, status, 0) == pid) ? 1 : -1;
}

/* ---------------------------------------------------------------------
 *  mrelease: a forked child holding the merged region (break_ksm in the
 *  child, or COW writes) is SIGKILLed through a pidfd and reaped at once
 *  with process_mrelease, racing __oom_reap_task_mm with exit_mmap.
 * --------------------------------------------------------------------- */

enum {
	KSM_MRELEASE_REAPED = 0,	/* process_mrelease returned 0 */
	KSM_MRELEASE_GONE,		/* ESRCH: victim already past exit_mm() */
	KSM_MRELEASE_FAIL,		/* anything else */
};

/* mrelease racer state (racer thread only) */
typedef struct {
	uint64_t cycle;			/* cycle the rounds are counted for */
	uint32_t rounds;		/* rounds done in that cycle */
	uint64_t victims;		/* victims forked, picks the victim's mode */
	pid_t pid;			/* live child, 0 if none */
} stress_ksm_unmerge_mrelease_t;

/*
 *  stress_ksm_unmerge_mrelease_pagemap()
 *	open the victim's /proc/PID/pagemap, -1 on error
 */
static int stress_ksm_unmerge_mrelease_pagemap(const pid_t pid)
{
	char path[64];

	(void)snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/*
 *  stress_ksm_unmerge_mrelease_judge()
 *	pure: classify a process_mrelease return (ret, errno err)
 */
static int stress_ksm_unmerge_mrelease_judge(const int ret, const int err)
{
	if (ret == 0)
		return KSM_MRELEASE_REAPED;
	if (ret < 0 && err == ESRCH)
		return KSM_MRELEASE_GONE;
	return KSM_MRELEASE_FAIL;
}

/*
 *  stress_ksm_unmerge_mrelease_status_ok()
 *	pure: a victim must die by our SIGKILL (or exit 0 after its bound)
 */
static bool stress_ksm_unmerge_mrelease_status_ok(const int status)
{
	if (WIFSIGNALED(status))
		return WTERMSIG(status) == SIGKILL;
	return WIFEXITED(status) && (WEXITSTATUS(status) == 0);
}

/*
 *  stress_ksm_unmerge_mrelease_child()
 *	victim: unmerge its copy (mode 0), COW-write every page (mode 1) or
 *	keep the KSM pages it inherited mapped (mode 2), then wait to be
 *	killed; exit status is the errno of a failed call
 */
static void NORETURN stress_ksm_unmerge_mrelease_child(stress_ksm_unmerge_ctx_t *ctx,
	const pid_t parent, const int mode)
{
	size_t i;

	if (stress_ksm_unmerge_b_child_init(ctx, parent) < 0)
		_exit(errno ? errno : 1);
	if (mode == 0) {
		if (madvise(ctx->region, ctx->region_size, MADV_UNMERGEABLE) < 0)
			_exit(errno ? errno : 1);
	} else if (mode == 1) {
		if (stress_ksm_unmerge_b_child_rw(ctx) < 0)
			_exit(errno ? errno : 1);
		for (i = 0; i < ctx->npages; i++) {
			volatile uint8_t *p = ctx->region + i * ctx->page_size;

			*p = *p;	/* same byte: COW without changing data */
		}
	}
	for (i = 0; i < KSM_MRELEASE_CHILD_SECS * 100; i++)
		(void)shim_nanosleep_uint64(10000000);
	_exit(0);
}

/*
 *  stress_ksm_unmerge_mrelease_fail()
 *	count a racer failure and say why
 */
static void stress_ksm_unmerge_mrelease_fail(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const char *what, const int err)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);

	rs->failures++;
	pr_fail("%s: mrelease racer: %s, errno=%d (%s)\n", ctx->args->name, what, err, strerror(err));
}

/*
 *  stress_ksm_unmerge_mrelease_status()
 *	check how the victim ended
 */
static void stress_ksm_unmerge_mrelease_status(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const int status)
{
	if (stress_ksm_unmerge_mrelease_status_ok(status))
		return;
	if (WIFEXITED(status))
		stress_ksm_unmerge_mrelease_fail(ctx, idx, "victim's setup, MADV_UNMERGEABLE "
			"or mprotect failed (exit status is its errno)", WEXITSTATUS(status));
	else
		stress_ksm_unmerge_mrelease_fail(ctx, idx, "victim died by an unexpected signal",
			WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/*
 *  stress_ksm_unmerge_mrelease_victim_ksm()
 *	KSM pages the victim maps right now in a random window of its copy of
 *	the region (its pagemap, pm_fd, and kpageflags); -1 if unreadable
 */
static ssize_t stress_ksm_unmerge_mrelease_victim_ksm(stress_ksm_unmerge_ctx_t *ctx, const int pm_fd)
{
	uint64_t pm[KSM_MRELEASE_PROBE_PAGES];
	const size_t n = ctx->npages < KSM_MRELEASE_PROBE_PAGES ? ctx->npages : KSM_MRELEASE_PROBE_PAGES;
	const size_t first = stress_mwc32modn((uint32_t)(ctx->npages - n + 1));
	ssize_t ksm = 0;
	size_t j;

	if (stress_ksm_unmerge_pagemap_read(pm_fd, ctx->region + first * ctx->page_size, n,
			ctx->page_size, pm) < 0)
		return -1;
	for (j = 0; j < n; j++) {
		const uint64_t flags = ((pm[j] & PM_PRESENT) && (pm[j] & PM_PFN_MASK)) ?
			stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, pm[j] & PM_PFN_MASK) : 0;

		ksm += stress_ksm_unmerge_b_page_ksm(ctx, first + j, pm[j], flags);
	}
	return ksm;
}

/*
 *  stress_ksm_unmerge_mrelease_kill()
 *	probe the victim's KSM pages, SIGKILL it via its pidfd,
 *	process_mrelease at once, reap; evidence only if the probe saw KSM
 *	pages; latency: kill to mrelease return (0) or to waitpid return (ESRCH)
 */
static void stress_ksm_unmerge_mrelease_kill(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const int pidfd, const pid_t pid, const int pm_fd)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	uint64_t t0, t1, t2;
	int ret, err, status, verdict;
	const ssize_t ksm = stress_ksm_unmerge_mrelease_victim_ksm(ctx, pm_fd);

	t0 = stress_ksm_unmerge_b_now_ns();
	if (shim_pidfd_send_signal(pidfd, SIGKILL, NULL, 0) < 0) {
		err = errno;
		(void)shim_kill(pid, SIGKILL);
		(void)stress_ksm_unmerge_b_reap(pid, 0.0, &status);
		stress_ksm_unmerge_mrelease_fail(ctx, idx, "pidfd_send_signal SIGKILL failed", err);
		return;
	}
	ret = shim_process_mrelease(pidfd, 0);
	err = errno;
	t1 = stress_ksm_unmerge_b_now_ns();
	if (stress_ksm_unmerge_b_reap(pid, 0.0, &status) < 0) {
		stress_ksm_unmerge_mrelease_fail(ctx, idx, "waitpid on the victim failed", errno);
		return;
	}
	t2 = stress_ksm_unmerge_b_now_ns();
	rs->ops++;
	if (ksm > 0) {
		rs->evidence++;
		rs->detail[2] += (uint64_t)ksm;
	}
	verdict = stress_ksm_unmerge_mrelease_judge(ret, err);
	if (verdict == KSM_MRELEASE_REAPED) {
		rs->detail[0]++;
		stress_ksm_unmerge_lat_add(&ctx->st->mrelease_lat, (double)(t1 - t0) / 1.0E6);
	} else if (verdict == KSM_MRELEASE_GONE) {
		rs->detail[1]++;
		stress_ksm_unmerge_lat_add(&ctx->st->mrelease_lat, (double)(t2 - t0) / 1.0E6);
	} else if (!(err == EINTR && !stress_ksm_unmerge_racer_running(ctx))) {
		stress_ksm_unmerge_mrelease_fail(ctx, idx, "process_mrelease on a SIGKILLed victim "
			"failed (expected 0 or ESRCH)", err);
	}
	stress_ksm_unmerge_mrelease_status(ctx, idx, status);
}

/*
 *  stress_ksm_unmerge_mrelease_round()
 *	fork a victim sharing the merged pages, wait 0-2 ms, kill and reap it
 */
static void stress_ksm_unmerge_mrelease_round(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_mrelease_t *m)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const pid_t parent = getpid();
	int pidfd, pm_fd, status, err;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "fork failed, errno=%d (%s)",
			errno, strerror(errno));
		(void)shim_nanosleep_uint64(10000000);
		return;
	}
	if (pid == 0)
		stress_ksm_unmerge_mrelease_child(ctx, parent, (int)(m->victims % KSM_MRELEASE_MODES));
	m->victims++;
	m->pid = pid;
	/* a victim forked while merged maps the KSM pages: the unmerge may start */
	stress_ksm_unmerge_racer_met(ctx, idx);
	pidfd = shim_pidfd_open(pid, 0);
	pm_fd = (pidfd < 0) ? -1 : stress_ksm_unmerge_mrelease_pagemap(pid);
	if (pidfd < 0 || pm_fd < 0) {
		err = errno;
		(void)shim_kill(pid, SIGKILL);
		(void)stress_ksm_unmerge_b_reap(pid, 0.0, &status);
		m->pid = 0;
		if (pidfd >= 0)
			(void)close(pidfd);
		stress_ksm_unmerge_mrelease_fail(ctx, idx, pidfd < 0 ? "pidfd_open of the victim failed" :
			"open of the victim's /proc/PID/pagemap failed", err);
		return;
	}
	(void)shim_nanosleep_uint64(stress_mwc32modn(KSM_MRELEASE_DELAY_NS + 1));
	stress_ksm_unmerge_mrelease_kill(ctx, idx, pidfd, pid, pm_fd);
	(void)close(pm_fd);
	(void)close(pidfd);
	m->pid = 0;
}

/*
 *  stress_ksm_unmerge_mrelease_thread()
 *	racer: a few kill/reap rounds per cycle while merged and unmerging
 */
static void *stress_ksm_unmerge_mrelease_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_MRELEASE;
	stress_ksm_unmerge_mrelease_t *m = (stress_ksm_unmerge_mrelease_t *)ctx->run[idx].priv;

	while (!ctx->racers_stop) {
		const int phase = ctx->phase;

		if (ctx->quiesce) {
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (!stress_ksm_unmerge_b_keep_going(ctx))
			continue;
		if (m->cycle != ctx->cycle) {
			m->cycle = ctx->cycle;
			m->rounds = 0;
		}
		if ((phase == KSM_PHASE_MERGED || phase == KSM_PHASE_UNMERGING) &&
		    (m->rounds < KSM_MRELEASE_ROUNDS)) {
			stress_ksm_unmerge_mrelease_round(ctx, idx, m);
			m->rounds++;
			continue;
		}
		(void)shim_nanosleep_uint64(100000);
	}
	return NULL;
}

/*
 *  stress_ksm_unmerge_mrelease_supported()
 *	needs pidfd_open and process_mrelease (Linux 5.15)
 */
static int stress_ksm_unmerge_mrelease_supported(char *reason, const size_t len)
{
	int fd;

	fd = shim_pidfd_open(getpid(), 0);
	if (fd < 0) {
		(void)snprintf(reason, len, "pidfd_open failed, errno=%d (%s)%s", errno, strerror(errno),
			errno == ENOSYS ? ", needs Linux 5.3" : "");
		return -1;
	}
	(void)close(fd);
	if ((shim_process_mrelease(-1, 0) < 0) && (errno == ENOSYS)) {
		(void)snprintf(reason, len, "process_mrelease not implemented (ENOSYS), needs Linux 5.15");
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_mrelease_start()
 *	state and thread
 */
static int stress_ksm_unmerge_mrelease_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_mrelease_t *m;

	if (stress_ksm_unmerge_b_need_pfns(ctx, idx, "victims' KSM pages not visible") < 0)
		return -1;
	m = calloc(1, sizeof(*m));
	if (!m) {
		(void)snprintf(ctx->st->racer[idx].reason, sizeof(ctx->st->racer[idx].reason),
			"out of memory for racer state");
		return -1;
	}
	ctx->run[idx].priv = m;
	ctx->run[idx].meets = true;
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_mrelease_thread) < 0) {
		free(m);
		ctx->run[idx].priv = NULL;
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_mrelease_stop()
 *	join the thread; kill and reap a victim it left (it never should)
 */
static void stress_ksm_unmerge_mrelease_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_mrelease_t *m = (stress_ksm_unmerge_mrelease_t *)ctx->run[idx].priv;
	int status;

	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	if (m && m->pid > 0) {
		(void)shim_kill(m->pid, SIGKILL);
		(void)stress_ksm_unmerge_b_reap(m->pid, 0.0, &status);
	}
	free(m);
	ctx->run[idx].priv = NULL;
}

#define KSM_RACER_MRELEASE { "mrelease", "process_mrelease vs exit_mmap of KSM memory", \
	"ksm-victims-killed", stress_ksm_unmerge_mrelease_supported, \
	stress_ksm_unmerge_mrelease_start, stress_ksm_unmerge_mrelease_stop, NULL, NULL }

/* ---------------------------------------------------------------------
 *  fork: a child forked at MERGED writes to pages that are KSM pages in
 *  its own pagemap (COW of KSM pages, cow_ksm) while the parent goes on
 *  to unmerge the same pages; reaped at VERIFY, parent copy checked.
 * --------------------------------------------------------------------- */

enum {
	KSM_FORK_OK = 0,
	KSM_FORK_FAIL_SETUP,		/* prctl/getppid/mprotect/pagemap open */
	KSM_FORK_FAIL_PAGEMAP,		/* pagemap read */
	KSM_FORK_FAIL_SHARED,		/* KSM page held wrong data before the write */
	KSM_FORK_FAIL_NOCOW,		/* write to a KSM page did not get a private page */
	KSM_FORK_FAIL_WRITE,		/* the child's write did not read back */
	KSM_FORK_FAIL_NEIGHBOUR,	/* a neighbouring KSM page changed */
};

/* Shared between the parent and its fork child */
typedef struct {
	volatile uint32_t n;		/* KSM pages COWed and verified */
	volatile uint32_t tried;	/* KSM pages the child wrote */
	volatile int fail;		/* KSM_FORK_FAIL_*, first failure */
	volatile int err;		/* its errno */
	volatile uint64_t page;		/* its page index */
	volatile int64_t off;		/* its byte offset */
	volatile uint64_t pfn[2];	/* pfn before/after for NOCOW */
	volatile uint64_t pages[KSM_FORK_PAGES];	/* pages COWed */
	stress_ksm_unmerge_forkc_t fc;	/* KSM counters around the fork */
} stress_ksm_unmerge_fork_shared_t;

/* fork racer state (main thread only) */
typedef struct {
	pid_t pid;			/* live child, 0 if none */
	stress_ksm_unmerge_fork_shared_t *sh;
} stress_ksm_unmerge_fork_t;

static const char * const stress_ksm_unmerge_fork_fail_names[] = {
	"ok",
	"child setup failed",
	"child pagemap read failed",
	"KSM page held wrong data before the child's write",
	"child's write to a KSM page did not get a private copy",
	"child's write did not read back",
	"neighbouring KSM page changed by the child's write",
};

/*
 *  stress_ksm_unmerge_fork_word()
 *	word w the fork child writes into page i
 */
static inline uint64_t stress_ksm_unmerge_fork_word(const size_t i, const size_t w)
{
	return 0xf04b636f77000000ULL ^ ((uint64_t)i << 20) ^ (uint64_t)w;
}

/*
 *  stress_ksm_unmerge_fork_fill()
 *	child: write the child pattern into page i
 */
static void stress_ksm_unmerge_fork_fill(uint8_t *page, const size_t page_size, const size_t i)
{
	uint64_t *p = (uint64_t *)page;
	size_t w;

	for (w = 0; w < page_size / sizeof(uint64_t); w++)
		p[w] = stress_ksm_unmerge_fork_word(i, w);
}

/*
 *  stress_ksm_unmerge_fork_written_check()
 *	pure: byte offset of the first wrong word of the child's page i, -1 if intact
 */
static ssize_t stress_ksm_unmerge_fork_written_check(const uint8_t *page, const size_t page_size,
	const size_t i)
{
	const uint64_t *p = (const uint64_t *)page;
	size_t w;

	for (w = 0; w < page_size / sizeof(uint64_t); w++)
		if (p[w] != stress_ksm_unmerge_fork_word(i, w))
			return (ssize_t)(w * sizeof(uint64_t));
	return -1;
}

/*
 *  stress_ksm_unmerge_fork_parent_check()
 *	pure: the parent's copies of the pages the child COWed still hold the
 *	pattern; index into pages[] of the first bad one (*off its byte), -1 if all good
 */
static ssize_t stress_ksm_unmerge_fork_parent_check(const stress_ksm_unmerge_ctx_t *ctx,
	const volatile uint64_t *pages, const size_t n, ssize_t *off)
{
	size_t k;

	*off = -1;
	for (k = 0; k < n; k++) {
		const size_t i = (size_t)pages[k];

		if (i >= ctx->npages) {
			*off = 0;
			return (ssize_t)k;
		}
		*off = stress_ksm_unmerge_page_check(ctx, i, ctx->region + i * ctx->page_size);
		if (*off >= 0)
			return (ssize_t)k;
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_fork_child_fail()
 *	child: record the first failure for the parent to report
 */
static int stress_ksm_unmerge_fork_child_fail(stress_ksm_unmerge_fork_shared_t *sh, const int fail,
	const int err, const size_t i, const ssize_t off)
{
	if (sh->fail == KSM_FORK_OK) {
		sh->err = err;
		sh->page = i;
		sh->off = off;
		sh->fail = fail;
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_fork_neighbours()
 *	child: pages next to i that are KSM pages in the child hold the pattern
 */
static int stress_ksm_unmerge_fork_neighbours(stress_ksm_unmerge_ctx_t *ctx, const int pm_fd,
	stress_ksm_unmerge_fork_shared_t *sh, const size_t i)
{
	const size_t js[2] = { i - 1, i + 1 };
	size_t k;

	for (k = 0; k < 2; k++) {
		const size_t j = js[k];
		const uint8_t *page = ctx->region + j * ctx->page_size;
		uint64_t e, flags;
		ssize_t off;

		if (j >= ctx->npages)	/* i - 1 wraps for i = 0 */
			continue;
		if (stress_ksm_unmerge_b_lookup(ctx, pm_fd, page, &e, &flags) < 0)
			return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_PAGEMAP, errno, j, -1);
		if (!stress_ksm_unmerge_b_page_ksm(ctx, j, e, flags))
			continue;
		off = stress_ksm_unmerge_b_pattern_bad(ctx, j, page);
		if (off >= 0)
			return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_NEIGHBOUR, 0, j, off);
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_fork_cow_one()
 *	child: if page i is a KSM page here, check it, write it (COW), check the
 *	new private copy, the write and the neighbours; 1 COWed, 0 skipped, -1 failed
 */
static int stress_ksm_unmerge_fork_cow_one(stress_ksm_unmerge_ctx_t *ctx, const int pm_fd,
	stress_ksm_unmerge_fork_shared_t *sh, const size_t i)
{
	uint8_t *page = ctx->region + i * ctx->page_size;
	uint64_t e0, f0, e1, f1;
	ssize_t off;

	if (stress_ksm_unmerge_b_lookup(ctx, pm_fd, page, &e0, &f0) < 0)
		return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_PAGEMAP, errno, i, -1);
	if (!stress_ksm_unmerge_b_page_ksm(ctx, i, e0, f0))
		return 0;
	if (stress_ksm_unmerge_page_check(ctx, i, page) >= 0) {
		off = stress_ksm_unmerge_b_pattern_bad(ctx, i, page);
		if (off >= 0)
			return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_SHARED, 0, i, off);
		return 0;	/* zero-filled by another racer's discard: not ours to COW */
	}
	sh->tried++;
	stress_ksm_unmerge_fork_fill(page, ctx->page_size, i);
	if (stress_ksm_unmerge_b_lookup(ctx, pm_fd, page, &e1, &f1) < 0)
		return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_PAGEMAP, errno, i, -1);
	if (stress_ksm_unmerge_b_unshared(e0 & PM_PFN_MASK, e1, f1, ctx->zero_pfn) <= 0) {
		sh->pfn[0] = e0 & PM_PFN_MASK;
		sh->pfn[1] = e1 & PM_PFN_MASK;
		return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_NOCOW, 0, i, -1);
	}
	off = stress_ksm_unmerge_fork_written_check(page, ctx->page_size, i);
	if (off >= 0)
		return stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_WRITE, 0, i, off);
	if (stress_ksm_unmerge_fork_neighbours(ctx, pm_fd, sh, i) < 0)
		return -1;
	sh->pages[sh->n] = i;
	sh->n++;
	return 1;
}

/*
 *  stress_ksm_unmerge_fork_child()
 *	child: COW up to KSM_FORK_PAGES random KSM pages while the parent unmerges
 */
static void NORETURN stress_ksm_unmerge_fork_child(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_fork_shared_t *sh, const pid_t parent)
{
	int pm_fd, tries;

	stress_ksm_unmerge_forkc_child(&sh->fc);
	if ((stress_ksm_unmerge_b_child_init(ctx, parent) < 0) ||
	    (stress_ksm_unmerge_b_child_rw(ctx) < 0)) {
		(void)stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_SETUP, errno, 0, -1);
		_exit(EXIT_FAILURE);
	}
	pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pm_fd < 0) {
		(void)stress_ksm_unmerge_fork_child_fail(sh, KSM_FORK_FAIL_SETUP, errno, 0, -1);
		_exit(EXIT_FAILURE);
	}
	stress_mwc_reseed();
	for (tries = 0; (tries < KSM_FORK_TRIES) && (sh->n < KSM_FORK_PAGES); tries++) {
		const int phase = ctx->st->phase;
		size_t i;

		if ((sh->n >= KSM_FORK_MIN_PAGES) &&
		    ((phase == KSM_PHASE_VERIFY) || (phase == KSM_PHASE_IDLE)))
			break;
		if (!stress_continue(ctx->args))
			break;
		i = stress_mwc32modn((uint32_t)ctx->npages);
		if (stress_ksm_unmerge_fork_cow_one(ctx, pm_fd, sh, i) < 0)
			break;
		(void)shim_nanosleep_uint64(stress_mwc32modn(100000));
	}
	(void)close(pm_fd);
	_exit(sh->fail == KSM_FORK_OK ? EXIT_SUCCESS : EXIT_FAILURE);
}

/*
 *  stress_ksm_unmerge_fork_spawn()
 *	MERGED hook: fork the child that COWs KSM pages
 */
static void stress_ksm_unmerge_fork_spawn(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_fork_t *f)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const pid_t parent = getpid();
	pid_t pid;

	if (f->pid > 0)
		return;
	(void)memset((void *)f->sh, 0, sizeof(*f->sh));
	stress_ksm_unmerge_forkc_before(ctx, &f->sh->fc);
	pid = fork();
	if (pid < 0) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "fork failed, errno=%d (%s)",
			errno, strerror(errno));
		return;
	}
	if (pid == 0)
		stress_ksm_unmerge_fork_child(ctx, f->sh, parent);
	f->pid = pid;
}

/*
 *  stress_ksm_unmerge_fork_report()
 *	parent: report a failure the child recorded
 */
static void stress_ksm_unmerge_fork_report(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const stress_ksm_unmerge_fork_shared_t *sh)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const int fail = sh->fail;
	const char *what = (fail > 0 && (size_t)fail < SIZEOF_ARRAY(stress_ksm_unmerge_fork_fail_names)) ?
		stress_ksm_unmerge_fork_fail_names[fail] : "unknown failure";

	rs->failures++;
	if (fail == KSM_FORK_FAIL_NOCOW)
		pr_fail("%s: fork racer: %s: page %" PRIu64 " pfn %#" PRIx64 " -> %#" PRIx64 "\n",
			ctx->args->name, what, sh->page, sh->pfn[0], sh->pfn[1]);
	else if (sh->off >= 0)
		pr_fail("%s: fork racer: %s: page %" PRIu64 " byte %" PRId64 " (pattern %s)\n",
			ctx->args->name, what, sh->page, sh->off, stress_ksm_unmerge_patterns[ctx->pattern]);
	else
		pr_fail("%s: fork racer: %s, page %" PRIu64 ", errno=%d (%s)\n",
			ctx->args->name, what, sh->page, sh->err, strerror(sh->err));
}

/*
 *  stress_ksm_unmerge_fork_reap()
 *	VERIFY hook: bounded wait for the child, count its COWs, report failures
 */
static void stress_ksm_unmerge_fork_reap(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_fork_t *f)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	int status, ret;

	if (f->pid <= 0)
		return;
	ret = stress_ksm_unmerge_b_reap(f->pid, KSM_FORK_REAP_SECS, &status);
	f->pid = 0;
	rs->ops++;
	rs->evidence += f->sh->n;
	if (stress_ksm_unmerge_forkc_judge(ctx, &f->sh->fc) < 0)
		rs->failures++;
	if (f->sh->fail != KSM_FORK_OK) {
		stress_ksm_unmerge_fork_report(ctx, idx, f->sh);
	} else if (ret < 0) {
		rs->failures++;
		pr_fail("%s: fork racer: waitpid on the child failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
	} else if (ret > 0 && stress_continue(ctx->args)) {
		rs->failures++;
		pr_fail("%s: fork racer: child did not exit within %.0f s after %" PRIu32
			" COW writes, killed\n", ctx->args->name, KSM_FORK_REAP_SECS, f->sh->tried);
	} else if (ret == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0) &&
		   !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && !stress_continue(ctx->args))) {
		rs->failures++;
		pr_fail("%s: fork racer: child ended with wait status %#x\n", ctx->args->name, status);
	}
}

/*
 *  stress_ksm_unmerge_fork_check()
 *	IDLE hook, racers parked: the parent's copies of COWed pages are intact
 */
static void stress_ksm_unmerge_fork_check(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_fork_t *f)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const size_t n = f->sh->n < KSM_FORK_PAGES ? f->sh->n : KSM_FORK_PAGES;
	ssize_t k, off;

	if (ctx->quiesce != ctx->cycle)
		goto done;	/* racers not parked (error path): data may be in flux */
	k = stress_ksm_unmerge_fork_parent_check(ctx, f->sh->pages, n, &off);
	if (k >= 0) {
		const size_t i = (size_t)f->sh->pages[k];

		rs->failures++;
		pr_fail("%s: fork racer: parent page %zu changed by the child's COW write: "
			"byte %zd is 0x%02x (pattern %s)\n", ctx->args->name, i, off,
			i < ctx->npages ? ctx->region[i * ctx->page_size + (size_t)off] : 0,
			stress_ksm_unmerge_patterns[ctx->pattern]);
	}
done:
	f->sh->n = 0;
}

/*
 *  stress_ksm_unmerge_fork_cycle()
 *	fork at MERGED, reap at VERIFY, check the parent's pages at IDLE
 */
static void stress_ksm_unmerge_fork_cycle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const int phase)
{
	stress_ksm_unmerge_fork_t *f = (stress_ksm_unmerge_fork_t *)ctx->run[idx].priv;

	if (!f)
		return;
	switch (phase) {
	case KSM_PHASE_MERGED:
		stress_ksm_unmerge_fork_spawn(ctx, idx, f);
		break;
	case KSM_PHASE_VERIFY:
		stress_ksm_unmerge_fork_reap(ctx, idx, f);
		break;
	case KSM_PHASE_IDLE:
		stress_ksm_unmerge_fork_reap(ctx, idx, f);
		stress_ksm_unmerge_fork_check(ctx, idx, f);
		break;
	default:
		break;
	}
}

/*
 *  stress_ksm_unmerge_fork_start()
 *	state and the page list shared with the child
 */
static int stress_ksm_unmerge_fork_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	stress_ksm_unmerge_fork_t *f;

	if (stress_ksm_unmerge_b_need_pfns(ctx, idx, "child cannot see KSM pages") < 0)
		return -1;
	f = calloc(1, sizeof(*f));
	if (!f) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "out of memory for racer state");
		return -1;
	}
	f->sh = mmap(NULL, sizeof(*f->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (f->sh == MAP_FAILED) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "mmap of shared page list failed, "
			"errno=%d (%s)", errno, strerror(errno));
		free(f);
		return -1;
	}
	ctx->run[idx].priv = f;
	return 0;
}

/*
 *  stress_ksm_unmerge_fork_stop()
 *	kill and reap a child still running, unmap, free
 */
static void stress_ksm_unmerge_fork_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_fork_t *f = (stress_ksm_unmerge_fork_t *)ctx->run[idx].priv;
	int status;

	if (!f)
		return;
	if (f->pid > 0) {
		(void)shim_kill(f->pid, SIGKILL);
		(void)stress_ksm_unmerge_b_reap(f->pid, 0.0, &status);
		f->pid = 0;
	}
	(void)munmap((void *)f->sh, sizeof(*f->sh));
	free(f);
	ctx->run[idx].priv = NULL;
}

#define KSM_RACER_FORK { "fork", "COW of KSM pages in forked children", \
	"ksm-cow-writes", stress_ksm_unmerge_racer_supported_always, \
	stress_ksm_unmerge_fork_start, stress_ksm_unmerge_fork_stop, stress_ksm_unmerge_fork_cycle, NULL }

/* ---------------------------------------------------------------------
 *  mprotect: a thread toggles PROT_NONE / PROT_READ / PROT_READ|WRITE on
 *  ranges of the region while it merges and unmerges (VMAs split and
 *  merge); KSM pages that are protected when the unmerge starts must be
 *  unshared by it.  Protections are restored in the VERIFY hook, before
 *  any racer parks (and writes).
 * --------------------------------------------------------------------- */

enum {
	KSM_PROT_RW = 0,
	KSM_PROT_READ,
	KSM_PROT_NONE,
};

/* mprotect racer state, shared by its thread and the hooks under lock */
typedef struct {
	pthread_mutex_t lock;
	uint8_t *prot;			/* per page: KSM_PROT_* */
	uint64_t *snap;			/* per page: KSM pfn protected at unmerge start, 0 none */
	uint64_t *pm;			/* pagemap scratch */
	size_t *list;			/* snapshot page indexes */
	uint64_t *flags;		/* their kpageflags after the unmerge */
	uint8_t *mg;			/* per snapshot page: VMA was VM_MERGEABLE */
	size_t nsnap;			/* snapshot pages */
	size_t nprot;			/* pages not RW */
	uint32_t toggles;		/* mprotect calls this cycle */
	bool frozen;			/* VERIFY..MERGING: no toggling */
} stress_ksm_unmerge_mprotect_t;

static const int stress_ksm_unmerge_prots[] = {
	PROT_READ | PROT_WRITE, PROT_READ, PROT_NONE,
};

/*
 *  stress_ksm_unmerge_mprotect_tally()
 *	pure: for n snapshot pages (KSM pfns before, entries and kpageflags after)
 *	count the unshared ones; index of the first still shared in *bad (-1 none)
 */
static uint64_t stress_ksm_unmerge_mprotect_tally(const uint64_t *pfn_before, const uint64_t *after,
	const uint64_t *flags_after, const size_t n, const uint64_t zero_pfn, ssize_t *bad)
{
	uint64_t unshared = 0;
	size_t k;

	*bad = -1;
	for (k = 0; k < n; k++) {
		const int v = stress_ksm_unmerge_b_unshared(pfn_before[k], after[k], flags_after[k], zero_pfn);

		if (v > 0)
			unshared++;
		else if (v < 0 && *bad < 0)
			*bad = (ssize_t)k;
	}
	return unshared;
}

/*
 *  stress_ksm_unmerge_mprotect_window()
 *	first page of the part of the region the racer protects: the last
 *	quarter, so racers that read or write region pages directly (and
 *	would fault on PROT_NONE) can be kept out of it
 */
static size_t stress_ksm_unmerge_mprotect_window(const stress_ksm_unmerge_ctx_t *ctx)
{
	const size_t quarter = ctx->npages / 4;

	return ctx->npages - (quarter ? quarter : 1);
}

/*
 *  stress_ksm_unmerge_mprotect_restore()
 *	(lock held) everything back to PROT_READ|PROT_WRITE
 */
static int stress_ksm_unmerge_mprotect_restore(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_mprotect_t *mp)
{
	if (!mp->nprot)
		return 0;
	if (mprotect(ctx->region, ctx->region_size, PROT_READ | PROT_WRITE) < 0)
		return -1;
	(void)memset(mp->prot, KSM_PROT_RW, ctx->npages);
	mp->nprot = 0;
	return 0;
}

/*
 *  stress_ksm_unmerge_mprotect_one()
 *	(thread) one mprotect of 1..32 random pages to a random protection;
 *	pages in the unmerge snapshot are left alone
 */
static void stress_ksm_unmerge_mprotect_one(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_mprotect_t *mp)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	const size_t wfirst = stress_ksm_unmerge_mprotect_window(ctx);
	const size_t wsize = ctx->npages - wfirst;
	const size_t n = 1 + stress_mwc32modn((uint32_t)(wsize < KSM_MPROTECT_MAX_PAGES ? wsize : KSM_MPROTECT_MAX_PAGES));
	const size_t first = wfirst + stress_mwc32modn((uint32_t)(wsize - n + 1));
	const size_t end = first + n;
	const uint8_t p = (uint8_t)stress_mwc32modn(SIZEOF_ARRAY(stress_ksm_unmerge_prots));
	size_t i;

	(void)pthread_mutex_lock(&mp->lock);
	if (mp->frozen)
		goto unlock;
	for (i = first; i < end; i++)
		if (mp->snap[i])
			goto unlock;
	if (mprotect(ctx->region + first * ctx->page_size, (end - first) * ctx->page_size,
			stress_ksm_unmerge_prots[p]) < 0) {
		const int err = errno;

		if (err == ENOMEM) {	/* too many VMAs: start over */
			(void)stress_ksm_unmerge_mprotect_restore(ctx, mp);
			goto unlock;
		}
		rs->failures++;
		pr_fail("%s: mprotect racer: mprotect of pages %zu..%zu failed, errno=%d (%s)\n",
			ctx->args->name, first, end - 1, err, strerror(err));
		goto unlock;
	}
	for (i = first; i < end; i++) {
		if (mp->prot[i] != KSM_PROT_RW)
			mp->nprot--;
		if (p != KSM_PROT_RW)
			mp->nprot++;
		mp->prot[i] = p;
	}
	mp->toggles++;
	rs->ops++;
unlock:
	(void)pthread_mutex_unlock(&mp->lock);
}

/*
 *  stress_ksm_unmerge_mprotect_end()
 *	(thread) the run is ending: drop the snapshot, restore RW, stop toggling
 */
static void stress_ksm_unmerge_mprotect_end(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_mprotect_t *mp)
{
	size_t k;

	(void)pthread_mutex_lock(&mp->lock);
	mp->frozen = true;
	for (k = 0; k < mp->nsnap; k++)
		mp->snap[mp->list[k]] = 0;
	mp->nsnap = 0;
	(void)stress_ksm_unmerge_mprotect_restore(ctx, mp);
	(void)pthread_mutex_unlock(&mp->lock);
	(void)shim_nanosleep_uint64(1000000);
}

/*
 *  stress_ksm_unmerge_mprotect_thread()
 *	racer: toggle protections while merging, merged and unmerging
 */
static void *stress_ksm_unmerge_mprotect_thread(void *arg)
{
	stress_ksm_unmerge_ctx_t *ctx = (stress_ksm_unmerge_ctx_t *)arg;
	const size_t idx = KSM_RACER_IDX_MPROTECT;
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)ctx->run[idx].priv;

	while (!ctx->racers_stop) {
		const int phase = ctx->phase;

		if (ctx->quiesce) {
			(void)pthread_mutex_lock(&mp->lock);
			(void)stress_ksm_unmerge_mprotect_restore(ctx, mp);
			(void)pthread_mutex_unlock(&mp->lock);
			(void)stress_ksm_unmerge_racer_park(ctx, idx);
			continue;
		}
		if (!stress_ksm_unmerge_racer_running(ctx)) {
			stress_ksm_unmerge_mprotect_end(ctx, mp);
			continue;
		}
		if ((phase == KSM_PHASE_MERGING || phase == KSM_PHASE_MERGED ||
		     phase == KSM_PHASE_UNMERGING) && !mp->frozen && mp->toggles < KSM_MPROTECT_TOGGLES) {
			stress_ksm_unmerge_mprotect_one(ctx, idx, mp);
			(void)shim_nanosleep_uint64(50000);
			continue;
		}
		(void)shim_nanosleep_uint64(200000);
	}
	(void)pthread_mutex_lock(&mp->lock);
	if (stress_ksm_unmerge_mprotect_restore(ctx, mp) < 0)
		pr_fail("%s: mprotect racer: restoring PROT_READ|PROT_WRITE failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
	(void)pthread_mutex_unlock(&mp->lock);
	return NULL;
}

/*
 *  stress_ksm_unmerge_mprotect_snap_mg()
 *	diagnostics for a failure: was each snapshot page's VMA VM_MERGEABLE
 *	("mg" in smaps VmFlags) when the unmerge started (1 yes, 0 no, 2 unknown)
 */
static void stress_ksm_unmerge_mprotect_snap_mg(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_mprotect_t *mp)
{
	unsigned long lo = 0, hi = 0;
	char line[512];
	size_t k = 0;
	FILE *fp;

	(void)memset(mp->mg, 2, mp->nsnap);
	fp = fopen("/proc/self/smaps", "re");
	if (!fp)
		return;
	while (k < mp->nsnap && fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			continue;
		if (strncmp(line, "VmFlags:", 8))
			continue;
		for (; k < mp->nsnap; k++) {
			const unsigned long a = (unsigned long)(uintptr_t)(ctx->region + mp->list[k] * ctx->page_size);

			if (a >= hi)
				break;
			if (a >= lo)
				mp->mg[k] = strstr(line, " mg") ? 1 : 0;
		}
	}
	(void)fclose(fp);
}

/*
 *  stress_ksm_unmerge_mprotect_snapshot()
 *	UNMERGING hook (lock held): KSM pages that are PROT_NONE/PROT_READ now
 */
static void stress_ksm_unmerge_mprotect_snapshot(stress_ksm_unmerge_ctx_t *ctx,
	stress_ksm_unmerge_mprotect_t *mp)
{
	size_t i;

	mp->nsnap = 0;
	if (!mp->nprot || stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region,
			ctx->npages, ctx->page_size, mp->pm) < 0)
		return;
	for (i = 0; i < ctx->npages; i++) {
		const uint64_t e = mp->pm[i];
		uint64_t flags = 0;

		if (mp->prot[i] == KSM_PROT_RW || !(e & PM_PRESENT))
			continue;
		if ((e & PM_PFN_MASK) != ctx->zero_pfn)
			flags = stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, e & PM_PFN_MASK);
		if (!stress_ksm_unmerge_b_page_ksm(ctx, i, e, flags))
			continue;
		mp->snap[i] = e & PM_PFN_MASK;
		mp->list[mp->nsnap++] = i;
	}
	if (mp->nsnap)
		stress_ksm_unmerge_mprotect_snap_mg(ctx, mp);
}

/*
 *  stress_ksm_unmerge_mprotect_evidence()
 *	VERIFY hook (lock held): snapshot pages unshared by the unmerge
 */
static void stress_ksm_unmerge_mprotect_evidence(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_mprotect_t *mp)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	uint64_t *after = mp->pm, *before = mp->pm + ctx->npages;
	ssize_t bad;
	size_t k;

	if (!mp->nsnap)
		return;
	if (stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region, ctx->npages,
			ctx->page_size, after) < 0) {
		rs->failures++;
		pr_fail("%s: mprotect racer: pagemap read failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		return;
	}
	for (k = 0; k < mp->nsnap; k++) {
		const size_t i = mp->list[k];

		before[k] = mp->snap[i];
		after[k] = after[i];	/* compact in place: list is ascending, k <= i */
		/* a KSM zero page, or a discarded one read back: pagemap cannot tell */
		if (before[k] == ctx->zero_pfn && (after[k] & PM_PFN_MASK) == ctx->zero_pfn &&
		    stress_ksm_unmerge_b_others(ctx))
			after[k] = 0;
		mp->flags[k] = ((after[k] & PM_PRESENT) && (after[k] & PM_PFN_MASK) != ctx->zero_pfn) ?
			stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, after[k] & PM_PFN_MASK) : 0;
	}
	rs->evidence += stress_ksm_unmerge_mprotect_tally(before, after, mp->flags, mp->nsnap,
		ctx->zero_pfn, &bad);
	if (bad >= 0) {
		char vma[320];

		stress_ksm_unmerge_b_vma_flags(ctx->region + mp->list[bad] * ctx->page_size, vma, sizeof(vma));
		rs->failures++;
		pr_fail("%s: mprotect racer: page %zu was a KSM page (pfn %#" PRIx64 ") under %s at "
			"the start of the unmerge and still maps a KSM page after it (pfn %#" PRIx64
			", kpageflags %#" PRIx64 "); cycle %" PRIu64
			", racers %s, VMA %s, VMA %s VM_MERGEABLE when the unmerge started\n",
			ctx->args->name, mp->list[bad], before[bad],
			mp->prot[mp->list[bad]] == KSM_PROT_NONE ? "PROT_NONE" : "PROT_READ",
			(uint64_t)(after[bad] & PM_PFN_MASK), mp->flags[bad], ctx->cycle, ctx->racers_str, vma,
			mp->mg[bad] == 1 ? "was" : (mp->mg[bad] == 0 ? "was NOT" : "unknown if"));
	}
}

/*
 *  stress_ksm_unmerge_mprotect_cycle()
 *	MERGING: unfreeze; UNMERGING: snapshot; VERIFY: evidence, restore, freeze
 */
static void stress_ksm_unmerge_mprotect_cycle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	const int phase)
{
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)ctx->run[idx].priv;
	size_t k;

	if (!mp || (phase != KSM_PHASE_MERGING && phase != KSM_PHASE_UNMERGING &&
		    phase != KSM_PHASE_VERIFY && phase != KSM_PHASE_IDLE))
		return;
	(void)pthread_mutex_lock(&mp->lock);
	switch (phase) {
	case KSM_PHASE_MERGING:
		mp->frozen = false;
		mp->toggles = 0;
		break;
	case KSM_PHASE_UNMERGING:
		stress_ksm_unmerge_mprotect_snapshot(ctx, mp);
		break;
	default:	/* VERIFY, or IDLE on an error path */
		mp->frozen = true;
		if (phase == KSM_PHASE_VERIFY)
			stress_ksm_unmerge_mprotect_evidence(ctx, idx, mp);
		for (k = 0; k < mp->nsnap; k++)
			mp->snap[mp->list[k]] = 0;
		mp->nsnap = 0;
		if (stress_ksm_unmerge_mprotect_restore(ctx, mp) < 0) {
			stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
			pr_fail("%s: mprotect racer: restoring PROT_READ|PROT_WRITE failed, errno=%d (%s)\n",
				ctx->args->name, errno, strerror(errno));
		}
		break;
	}
	(void)pthread_mutex_unlock(&mp->lock);
}

/*
 *  stress_ksm_unmerge_mprotect_free()
 *	free the racer state
 */
static void stress_ksm_unmerge_mprotect_free(stress_ksm_unmerge_mprotect_t *mp)
{
	if (!mp)
		return;
	free(mp->prot);
	free(mp->snap);
	free(mp->pm);
	free(mp->list);
	free(mp->flags);
	free(mp->mg);
	free(mp);
}

/*
 *  stress_ksm_unmerge_mprotect_start()
 *	maps and thread; VMAs will split
 */
static int stress_ksm_unmerge_mprotect_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	stress_ksm_unmerge_mprotect_t *mp;

	if (stress_ksm_unmerge_b_need_pfns(ctx, idx, "no evidence possible") < 0)
		return -1;
	mp = calloc(1, sizeof(*mp));
	if (!mp || !(mp->prot = calloc(ctx->npages, 1)) ||
	    !(mp->snap = calloc(ctx->npages, sizeof(*mp->snap))) ||
	    !(mp->pm = calloc(2 * ctx->npages, sizeof(*mp->pm))) ||
	    !(mp->list = calloc(ctx->npages, sizeof(*mp->list))) ||
	    !(mp->flags = calloc(ctx->npages, sizeof(*mp->flags))) ||
	    !(mp->mg = calloc(ctx->npages, 1))) {
		stress_ksm_unmerge_mprotect_free(mp);
		(void)snprintf(rs->reason, sizeof(rs->reason), "out of memory for the protection map");
		return -1;
	}
	(void)pthread_mutex_init(&mp->lock, NULL);
	mp->frozen = true;
	ctx->run[idx].priv = mp;
	ctx->racers_disturb_layout = true;
	ctx->racers_touch_npages = stress_ksm_unmerge_mprotect_window(ctx);
	/* a PTE changed under ksmd fails its pte_same() check: merges slip a pass */
	ctx->racers_disturb_counts = true;
	if (stress_ksm_unmerge_racer_thread_start(ctx, idx, stress_ksm_unmerge_mprotect_thread) < 0) {
		(void)pthread_mutex_destroy(&mp->lock);
		stress_ksm_unmerge_mprotect_free(mp);
		ctx->run[idx].priv = NULL;
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_mprotect_stop()
 *	join the thread (it restores protections), free
 */
static void stress_ksm_unmerge_mprotect_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_mprotect_t *mp = (stress_ksm_unmerge_mprotect_t *)ctx->run[idx].priv;

	stress_ksm_unmerge_racer_thread_stop(ctx, idx);
	if (mp) {
		(void)pthread_mutex_destroy(&mp->lock);
		stress_ksm_unmerge_mprotect_free(mp);
	}
	ctx->run[idx].priv = NULL;
}

#define KSM_RACER_MPROTECT { "mprotect", "unmerge of PROT_NONE / read-only KSM pages", \
	"ksm-pages-protected", stress_ksm_unmerge_racer_supported_always, \
	stress_ksm_unmerge_mprotect_start, stress_ksm_unmerge_mprotect_stop, \
	stress_ksm_unmerge_mprotect_cycle, NULL }

/* ---------------------------------------------------------------------
 *  sparse: a huge MAP_NORESERVE range with one populated page per 64 MiB
 *  is made mergeable with the region and unmerged (timed) right before
 *  it: break_ksm's per-page walk over holes (no range walk in 6.18).
 * --------------------------------------------------------------------- */

/* sparse racer state (main thread only) */
typedef struct {
	uint8_t *base;			/* the sparse range */
	size_t size;			/* its bytes */
	size_t stride;			/* bytes between populated pages */
	size_t populated;		/* populated pages */
	bool mergeable;			/* MADV_MERGEABLE is on */
	uint64_t *entries;		/* pagemap of the populated pages */
	uint64_t *flags;		/* their kpageflags */
} stress_ksm_unmerge_sparse_t;

/*
 *  stress_ksm_unmerge_sparse_judge()
 *	pure: populated page k holds tmpl and is a private (non-KSM) page;
 *	index of the first bad page (-1 all good), *why: 1 data, 2 still KSM
 */
static ssize_t stress_ksm_unmerge_sparse_judge(const stress_ksm_unmerge_sparse_t *s,
	const uint8_t *tmpl, const size_t page_size, const uint64_t zero_pfn, int *why)
{
	size_t k;

	*why = 0;
	for (k = 0; k < s->populated; k++) {
		if (shim_memcmp(s->base + k * s->stride, tmpl, page_size)) {
			*why = 1;
			return (ssize_t)k;
		}
		if (stress_ksm_unmerge_b_entry_ksm(s->entries[k], s->flags[k], zero_pfn)) {
			*why = 2;
			return (ssize_t)k;
		}
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_sparse_lookup()
 *	pagemap entries and kpageflags of the populated pages
 */
static int stress_ksm_unmerge_sparse_lookup(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_sparse_t *s)
{
	size_t k;

	for (k = 0; k < s->populated; k++) {
		if (stress_ksm_unmerge_b_lookup(ctx, ctx->pagemap_fd, s->base + k * s->stride,
				&s->entries[k], &s->flags[k]) < 0)
			return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_sparse_verify()
 *	after the sparse unmerge: populated pages intact and unshared
 */
static void stress_ksm_unmerge_sparse_verify(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_sparse_t *s)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	ssize_t k;
	int why;

	if (stress_ksm_unmerge_sparse_lookup(ctx, s) < 0) {
		rs->failures++;
		pr_fail("%s: sparse racer: pagemap read failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		return;
	}
	k = stress_ksm_unmerge_sparse_judge(s, ctx->templates, ctx->page_size, ctx->zero_pfn, &why);
	if (k < 0)
		return;
	rs->failures++;
	if (why == 1)
		pr_fail("%s: sparse racer: populated page %zd (offset %zu) lost its data after unmerge\n",
			ctx->args->name, k, (size_t)k * s->stride);
	else
		pr_fail("%s: sparse racer: populated page %zd (offset %zu) is still a KSM page "
			"(pfn %#" PRIx64 ") after MADV_UNMERGEABLE\n", ctx->args->name, k,
			(size_t)k * s->stride, (uint64_t)(s->entries[k] & PM_PFN_MASK));
}

/*
 *  stress_ksm_unmerge_sparse_ksm_before()
 *	before the timed unmerge: count the populated pages that are KSM
 *	pages (the evidence: the walk met KSM pages, not just holes)
 */
static int stress_ksm_unmerge_sparse_ksm_before(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_sparse_t *s)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	size_t k;

	if (stress_ksm_unmerge_sparse_lookup(ctx, s) < 0) {
		rs->failures++;
		pr_fail("%s: sparse racer: pagemap read before the unmerge failed, errno=%d (%s)\n",
			ctx->args->name, errno, strerror(errno));
		return -1;
	}
	for (k = 0; k < s->populated; k++)
		rs->evidence += stress_ksm_unmerge_b_entry_ksm(s->entries[k], s->flags[k], ctx->zero_pfn);
	rs->detail[1] += s->populated;
	return 0;
}

/*
 *  stress_ksm_unmerge_sparse_unmerge()
 *	UNMERGING hook: the timed MADV_UNMERGEABLE of the sparse range
 */
static void stress_ksm_unmerge_sparse_unmerge(stress_ksm_unmerge_ctx_t *ctx, const size_t idx,
	stress_ksm_unmerge_sparse_t *s)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	uint64_t t0, t1;
	int ret, err;

	if (!s->mergeable)
		return;
	if (stress_ksm_unmerge_sparse_ksm_before(ctx, idx, s) < 0)
		return;
	t0 = stress_ksm_unmerge_b_now_ns();
	ret = madvise(s->base, s->size, MADV_UNMERGEABLE);
	err = errno;
	t1 = stress_ksm_unmerge_b_now_ns();
	if (ret < 0) {
		if (err == EINTR && !stress_continue(ctx->args))
			return;		/* end of the run: left for stop() */
		rs->failures++;
		pr_fail("%s: sparse racer: MADV_UNMERGEABLE of %zu bytes failed, errno=%d (%s)\n",
			ctx->args->name, s->size, err, strerror(err));
		return;
	}
	s->mergeable = false;
	rs->ops += s->size / ctx->page_size;
	rs->detail[0] += s->size / ctx->page_size;
	rs->aux += t1 - t0;
	stress_ksm_unmerge_sparse_verify(ctx, idx, s);
}

/*
 *  stress_ksm_unmerge_sparse_cycle()
 *	MERGING: sparse range mergeable; UNMERGING: timed unmerge of it
 */
static void stress_ksm_unmerge_sparse_cycle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const int phase)
{
	stress_ksm_unmerge_sparse_t *s = (stress_ksm_unmerge_sparse_t *)ctx->run[idx].priv;

	if (!s)
		return;
	if (phase == KSM_PHASE_MERGING) {
		if (madvise(s->base, s->size, MADV_MERGEABLE) < 0) {
			stress_ksm_unmerge_racer_stats(ctx, idx)->failures++;
			pr_fail("%s: sparse racer: MADV_MERGEABLE of %zu bytes failed, errno=%d (%s)\n",
				ctx->args->name, s->size, errno, strerror(errno));
			return;
		}
		s->mergeable = true;
	} else if (phase == KSM_PHASE_UNMERGING) {
		stress_ksm_unmerge_sparse_unmerge(ctx, idx, s);
	}
}

/*
 *  stress_ksm_unmerge_sparse_free()
 *	unmap the range, free the state
 */
static void stress_ksm_unmerge_sparse_free(stress_ksm_unmerge_sparse_t *s)
{
	if (!s)
		return;
	if (s->base)
		(void)munmap(s->base, s->size);
	free(s->entries);
	free(s->flags);
	free(s);
}

/*
 *  stress_ksm_unmerge_sparse_bytes()
 *	--ksm-unmerge-sparse-bytes (default 16G), page aligned, at least 2 strides
 */
static size_t stress_ksm_unmerge_sparse_bytes(const size_t page_size)
{
	size_t bytes = (size_t)KSM_SPARSE_DEFAULT_BYTES;

	if (!stress_setting_get("ksm-unmerge-sparse-bytes", &bytes))
		bytes = (size_t)KSM_SPARSE_DEFAULT_BYTES;
	bytes &= ~(page_size - 1);
	return bytes < 2 * page_size ? 2 * page_size : bytes;
}

/*
 *  stress_ksm_unmerge_commit_room()
 *	CommitLimit - Committed_AS in bytes when vm.overcommit_memory is 2
 *	(strict: MAP_NORESERVE is ignored, a private writable map is charged
 *	in full); false in the heuristic and always-overcommit modes
 */
static bool stress_ksm_unmerge_commit_room(uint64_t *room)
{
	char buf[4096];
	const char *lim, *used;
	uint64_t limit, committed;
	ssize_t n;

	n = stress_fs_file_read("/proc/sys/vm/overcommit_memory", buf, sizeof(buf) - 1);
	if (n <= 0 || buf[0] != '2')
		return false;
	n = stress_fs_file_read("/proc/meminfo", buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	lim = strstr(buf, "CommitLimit:");
	used = strstr(buf, "Committed_AS:");
	if (!lim || !used)
		return false;
	limit = strtoull(lim + 12, NULL, 10) * KB;
	committed = strtoull(used + 13, NULL, 10) * KB;
	*room = (limit > committed) ? limit - committed : 0;
	return true;
}

/*
 *  stress_ksm_unmerge_sparse_fit()
 *	under strict overcommit shrink the sparse range to a quarter of the
 *	commit room left, shared by the instances, and say so
 */
static void stress_ksm_unmerge_sparse_fit(stress_ksm_unmerge_ctx_t *ctx, size_t *size)
{
	uint64_t room, fit;

	if (!stress_ksm_unmerge_commit_room(&room))
		return;
	fit = (room / 4 / ctx->args->instances) & ~((uint64_t)ctx->page_size - 1);
	if (fit < 2 * ctx->page_size)
		fit = 2 * ctx->page_size;
	if (*size <= fit)
		return;
	if (stress_instance_zero(ctx->args))
		pr_inf("%s: sparse racer: vm.overcommit_memory=2 charges the whole range (MAP_NORESERVE "
			"is ignored): shrinking it from %zu to %" PRIu64 " bytes per instance, a quarter "
			"of CommitLimit - Committed_AS (%" PRIu64 " bytes)\n", ctx->args->name, *size, fit, room);
	*size = (size_t)fit;
}

/*
 *  stress_ksm_unmerge_sparse_map()
 *	reserve the range, populate one page per stride with the "same" template
 */
static int stress_ksm_unmerge_sparse_map(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_sparse_t *s)
{
	size_t k;

	s->size = stress_ksm_unmerge_sparse_bytes(ctx->page_size);
	stress_ksm_unmerge_sparse_fit(ctx, &s->size);
	s->stride = (s->size >= 2 * KSM_SPARSE_STRIDE) ? (size_t)KSM_SPARSE_STRIDE :
		(s->size / 2) & ~(ctx->page_size - 1);
	s->populated = s->size / s->stride;
	s->entries = calloc(s->populated, sizeof(*s->entries));
	s->flags = calloc(s->populated, sizeof(*s->flags));
	if (!s->entries || !s->flags) {
		errno = ENOMEM;
		return -1;
	}
	s->base = mmap(NULL, s->size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s->base == MAP_FAILED) {
		s->base = NULL;
		return -1;
	}
#if defined(MADV_NOHUGEPAGE)
	(void)madvise(s->base, s->size, MADV_NOHUGEPAGE);
#endif
	stress_memory_anon_name_set(s->base, s->size, "ksm-unmerge-sparse");
	for (k = 0; k < s->populated; k++)
		(void)shim_memcpy(s->base + k * s->stride, ctx->templates, ctx->page_size);
	return 0;
}

/*
 *  stress_ksm_unmerge_sparse_start()
 *	map the sparse range
 */
static int stress_ksm_unmerge_sparse_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	stress_ksm_unmerge_sparse_t *s;

	if (stress_ksm_unmerge_b_need_pfns(ctx, idx, "no evidence possible") < 0)
		return -1;
	s = calloc(1, sizeof(*s));
	if (!s) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "out of memory for racer state");
		return -1;
	}
	if (stress_ksm_unmerge_sparse_map(ctx, s) < 0) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "cannot reserve %zu bytes of sparse "
			"address space, errno=%d (%s)", s->size, errno, strerror(errno));
		stress_ksm_unmerge_sparse_free(s);
		return -1;
	}
	ctx->run[idx].priv = s;
	/* its populated pages merge too and count in this mm's ksm_merging_pages */
	ctx->racers_disturb_counts = true;
	return 0;
}

/*
 *  stress_ksm_unmerge_sparse_stop()
 *	unmap the sparse range
 */
static void stress_ksm_unmerge_sparse_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_sparse_free((stress_ksm_unmerge_sparse_t *)ctx->run[idx].priv);
	ctx->run[idx].priv = NULL;
}

#define KSM_RACER_SPARSE { "sparse", "unmerge walk over unpopulated ranges", \
	"sparse-ksm-pages", stress_ksm_unmerge_racer_supported_always, \
	stress_ksm_unmerge_sparse_start, stress_ksm_unmerge_sparse_stop, \
	stress_ksm_unmerge_sparse_cycle, NULL }

#include "stress-ksm-unmerge-racer-common.h"
#include "stress-ksm-unmerge-racer-signal.h"
#include "stress-ksm-unmerge-racer-mremap.h"
#include "stress-ksm-unmerge-racer-uffd-minor.h"
#include "stress-ksm-unmerge-racer-prctl-exec.h"

/*
 *  The racer table, in the order of stress_ksm_unmerge_racer_names[]
 */
static const stress_ksm_unmerge_racer_t stress_ksm_unmerge_racers[KSM_UNMERGE_RACERS] = {
	KSM_RACER_VMSPLICE,
	KSM_RACER_GUP,
	KSM_RACER_UFFD_WP,
	KSM_RACER_MRELEASE,
	KSM_RACER_FORK,
	KSM_RACER_MPROTECT,
	KSM_RACER_DONTNEED,
	KSM_RACER_SPARSE,
	KSM_RACER_THP,
	KSM_RACER_SIGNAL,
	KSM_RACER_MREMAP,
	KSM_RACER_UFFD_MINOR,
	KSM_RACER_PRCTL_EXEC,
};

/*
 *  Names of the racers' own counters (racer_stats_t detail[]), printed
 *  after the evidence in the racer's line and in its YAML entry
 */
static const char * const stress_ksm_unmerge_racer_details[KSM_UNMERGE_RACERS][KSM_RACER_DETAILS] = {
	[KSM_RACER_IDX_VMSPLICE] = { "splices-held-over-unmerge", "ksm-pages-held-over-unmerge", NULL, NULL },
	[KSM_RACER_IDX_GUP] = { "odirect-pins", "odirect-ksm-pages", "longterm-pins", "longterm-ksm-pages" },
	[KSM_RACER_IDX_UFFD_WP] = { "wp-ksm-pages-at-unmerge", "wp-bits-kept", "wp-kept-still-ksm", NULL },
	[KSM_RACER_IDX_THP] = { "pmd-thps", "mthps", "pmd-mapped-in-smaps", NULL },
	[KSM_RACER_IDX_MRELEASE] = { "mrelease-reaps", "mrelease-esrch", "victim-ksm-pages", NULL },
	[KSM_RACER_IDX_SPARSE] = { "sparse-pages-walked", "populated-pages-checked", NULL, NULL },
};

/*
 *  stress_ksm_unmerge_racer_start_failed()
 *	mark a racer whose start() failed as skipped, its reason prefixed
 *	"start failed" (tests tell it from a supported() refusal by that)
 */
static void stress_ksm_unmerge_racer_start_failed(stress_ksm_unmerge_racer_stats_t *rs)
{
	char why[sizeof(rs->reason)];

	(void)strlcpy(why, "start failed", sizeof(why));
	if (rs->reason[0]) {
		(void)strlcat(why, ": ", sizeof(why));
		(void)strlcat(why, rs->reason, sizeof(why));
	}
	(void)strlcpy(rs->reason, why, sizeof(rs->reason));
	rs->skipped = true;
}

/*
 *  stress_ksm_unmerge_racers_start()
 *	start every requested racer this kernel supports; skip the others
 */
static int stress_ksm_unmerge_racers_start(stress_ksm_unmerge_ctx_t *ctx)
{
	size_t i;

	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		const stress_ksm_unmerge_racer_t *r = &stress_ksm_unmerge_racers[i];
		stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, i);

		if (!(ctx->methods & STRESS_BIT_ULL(KSM_UNMERGE_RACER_SHIFT + i)))
			continue;
		if (r->supported(rs->reason, sizeof(rs->reason)) < 0 || !r->start) {
			rs->skipped = true;
			if (stress_instance_zero(ctx->args))
				pr_inf_skip("%s: racer %s skipped: %s\n", ctx->args->name, r->name, rs->reason);
			continue;
		}
		if (r->start(ctx, i) < 0) {
			stress_ksm_unmerge_racer_start_failed(rs);
			if (stress_instance_zero(ctx->args))
				pr_inf_skip("%s: racer %s skipped: %s\n", ctx->args->name, r->name, rs->reason);
			continue;
		}
		rs->active = true;
		ctx->racers_mask |= STRESS_BIT_ULL(i);
		if (ctx->racers_str[0])
			(void)strlcat(ctx->racers_str, ",", sizeof(ctx->racers_str));
		(void)strlcat(ctx->racers_str, r->name, sizeof(ctx->racers_str));
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_racers_stop()
 *	stop every running racer
 */
static void stress_ksm_unmerge_racers_stop(stress_ksm_unmerge_ctx_t *ctx)
{
	size_t i;

	ctx->racers_stop = true;
	ctx->quiesce = 0;
	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		if ((ctx->racers_mask & STRESS_BIT_ULL(i)) && stress_ksm_unmerge_racers[i].stop)
			stress_ksm_unmerge_racers[i].stop(ctx, i);
	}
	ctx->racers_mask = 0;
}

/*
 *  stress_ksm_unmerge_racers_meet()
 *	merged phase: wait (sleeping, at most 50 ms) until every racer that
 *	needs merged pages has begun an op on them, so a slow racer thread
 *	(a loaded machine, slow O_DIRECT) still races the unmerge instead of
 *	only ever seeing pages that are already unshared; timeouts counted
 */
static void stress_ksm_unmerge_racers_meet(stress_ksm_unmerge_ctx_t *ctx)
{
	const double deadline = stress_time_now() + 0.05;
	size_t i;

	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		stress_ksm_unmerge_racer_run_t *run = &ctx->run[i];

		if (!(ctx->racers_mask & STRESS_BIT_ULL(i)) || !run->meets || !run->thread_running)
			continue;
		while (run->met != ctx->cycle && !run->thread_done && stress_continue(ctx->args)) {
			if (stress_time_now() > deadline) {
				ctx->st->racer[i].meet_timeouts++;
				break;
			}
			(void)shim_nanosleep_uint64(20000);
		}
	}
}

/*
 *  stress_ksm_unmerge_racers_quiesce()
 *	park every racer thread before verification; false if one did not park
 */
static bool stress_ksm_unmerge_racers_quiesce(stress_ksm_unmerge_ctx_t *ctx)
{
	const double deadline = stress_time_now() + 5.0;
	size_t i;

	ctx->quiesce = ctx->cycle;
	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		if (!(ctx->racers_mask & STRESS_BIT_ULL(i)) || !ctx->run[i].thread_running)
			continue;
		while (ctx->run[i].quiesced != ctx->cycle && !ctx->run[i].thread_done) {
			if (stress_time_now() > deadline) {
				pr_fail("%s: racer %s did not park within 5 s (stuck in the kernel?)\n",
					ctx->args->name, stress_ksm_unmerge_racer_names[i]);
				return false;
			}
			(void)shim_nanosleep_uint64(50000);
		}
	}
	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		if ((ctx->racers_mask & STRESS_BIT_ULL(i)) && stress_ksm_unmerge_racers[i].restore)
			stress_ksm_unmerge_racers[i].restore(ctx, i);
	}
	return true;
}

/*
 *  stress_ksm_unmerge_phase_set()
 *	enter a cycle phase: racers' cycle hooks run, kernel-log context updated
 */
static void stress_ksm_unmerge_phase_set(stress_ksm_unmerge_ctx_t *ctx, const int phase)
{
	size_t i;

	ctx->phase = phase;
	ctx->st->phase_since = stress_time_now();
	ctx->st->hang_reported = false;
	ctx->st->phase = phase;
	stress_ksm_unmerge_klog_context_set(ctx->args->instance,
		stress_ksm_unmerge_phase_names[phase], ctx->racers_str);
	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		if ((ctx->racers_mask & STRESS_BIT_ULL(i)) && stress_ksm_unmerge_racers[i].cycle)
			stress_ksm_unmerge_racers[i].cycle(ctx, i, phase);
	}
	if (phase == KSM_PHASE_IDLE)
		ctx->quiesce = 0;
}

/*
 *  stress_ksm_unmerge_lat_add()
 *	keep one unmerge latency sample (ring of the most recent)
 */
static void stress_ksm_unmerge_lat_add(stress_ksm_unmerge_lat_t *lat, const double ms)
{
	lat->ms[lat->total % KSM_UNMERGE_LAT_SAMPLES] = ms;
	lat->total++;
	if (lat->count < KSM_UNMERGE_LAT_SAMPLES)
		lat->count++;
}

/*
 *  stress_ksm_unmerge_timed_call()
 *	one timed unmerge call (madvise of [off, off + len) or prctl), secs added to *dt
 */
static int stress_ksm_unmerge_timed_call(stress_ksm_unmerge_ctx_t *ctx, const uint64_t sw,
	const size_t off, const size_t len, double *dt)
{
	struct timespec a, b;
	int ret;

	(void)clock_gettime(CLOCK_MONOTONIC, &a);
	ret = stress_ksm_unmerge_signal_off(ctx, sw, off, len);
	(void)clock_gettime(CLOCK_MONOTONIC, &b);
	*dt += (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1.0E-9;
	ctx->st->unmerge_calls++;
	return ret;
}

/*
 *  stress_ksm_unmerge_timed_off()
 *	the measured unmerge, only the calls timed (CLOCK_MONOTONIC), secs in *dt:
 *	madvise in KSM_UNMERGE_CALL_BYTES calls with a stop check between them,
 *	prctl (whole mm) in one call that the stop signal interrupts (EINTR)
 */
static int stress_ksm_unmerge_timed_off(stress_ksm_unmerge_ctx_t *ctx, const uint64_t sw, double *dt)
{
	size_t off;

	*dt = 0.0;
	ctx->st->unmerge_cycles++;
	if (sw == KSM_UNMERGE_METHOD_PRCTL)
		return stress_ksm_unmerge_timed_call(ctx, sw, 0, ctx->region_size, dt);
	for (off = 0; off < ctx->region_size; off += KSM_UNMERGE_CALL_BYTES) {
		const size_t len = STRESS_MINIMUM(KSM_UNMERGE_CALL_BYTES, ctx->region_size - off);

		if (off && stress_ksm_unmerge_stop_seen(ctx, "unmerge")) {
			errno = EINTR;
			return -1;
		}
		if (stress_ksm_unmerge_timed_call(ctx, sw, off, len, dt) < 0)
			return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_partial_fails()
 *	under --verify on a quiet kernel (no racer that blocks or breaks
 *	merges), ksmd finishing its passes short of the prediction is a
 *	failure; a wait cut by its time bound is a slow ksmd, not a failure
 */
static bool stress_ksm_unmerge_partial_fails(stress_ksm_unmerge_ctx_t *ctx, const bool empty,
	const int64_t merging, const int64_t zero, const uint64_t ksm, const uint64_t kzero)
{
	if (!ctx->verify || ctx->racers_disturb_counts || ctx->wait_timed_out || empty)
		return false;
	pr_fail("%s: partial merge on a quiet kernel: ksmd finished its passes with %" PRIu64
		" KSM + %" PRIu64 " zero pages of %" PRIu64 " + %" PRIu64 " predicted in the region "
		"(counters: merging %" PRId64 ", zero %" PRId64 ")\n", ctx->args->name, ksm, kzero,
		ctx->expect_merged, ctx->expect_zero, merging, zero);
	return true;
}

/*
 *  stress_ksm_unmerge_cycle()
 *	one bogo op: merge, verify merged, timed unmerge, verify unmerged;
 *	returns 0 verified, 1 stopped by the end of the run, -1 failed
 */
static int stress_ksm_unmerge_cycle(stress_ksm_unmerge_ctx_t *ctx, const uint64_t sw, const double bound)
{
	stress_args_t *args = ctx->args;
	stress_ksm_unmerge_instance_t *st = ctx->st;
	int64_t merging = 0, zero = 0, cow0, cow1;
	uint64_t ksm = 0, kzero = 0;
	double t0, dt;
	int waited, ret, rc = 0;
	bool empty;

	ctx->cycle++;
	stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_MERGING);
	if (stress_ksm_unmerge_switch(ctx, sw, true) < 0) {
		if (errno == EINTR && !stress_continue(args))
			return 1;
		pr_fail("%s: %s merge on failed, errno=%d (%s)\n", args->name,
			stress_ksm_unmerge_switch_name(sw), errno, strerror(errno));
		return -1;
	}
	if (sw == KSM_UNMERGE_METHOD_PRCTL && st->method_cycles[1] == 0 &&
	    stress_ksm_unmerge_prctl_check(ctx, 1) < 0)
		rc = -1;
	t0 = stress_time_now();
	waited = stress_ksm_unmerge_merge_wait(ctx, bound, &merging, &zero);
	st->merge_wait_secs += stress_time_now() - t0;
	if (waited < 0) {
		/* no unmerge of what did merge: exit unmaps it at once */
		(void)stress_ksm_unmerge_stop_seen(ctx, "merge wait");
		return 1;
	}
	stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_MERGED);
	if (stress_ksm_unmerge_verify_merge(ctx, waited, &ksm, &kzero) < 0)
		rc = -1;
	if (ctx->stopped && rc == 0)
		return 1;	/* the merge scan was cut short by the end of the run */
	if (stress_ksm_unmerge_zc_check(ctx, "after the merge") < 0)
		rc = -1;
	if (!ctx->have_pfns) {
		ksm = merging > 0 ? (uint64_t)merging : 0;
		kzero = zero > 0 ? (uint64_t)zero : 0;
	}
	/* nothing of the region merged (pinned by racers, or ksmd too slow) */
	empty = (ksm + kzero == 0) && (ctx->expect_merged + ctx->expect_zero > 0);
	if (waited == 0 || empty) {
		if (empty)
			st->merge_timeouts++;
		else
			st->partial_merges++;
		pr_dbg("%s: cycle %" PRIu64 ": merge incomplete after %.2f s: %" PRIu64
			" KSM + %" PRIu64 " zero pages of %" PRIu64 " predicted\n", args->name,
			ctx->cycle, stress_time_now() - t0, ksm, kzero, ctx->expect_merged + ctx->expect_zero);
		if (stress_ksm_unmerge_partial_fails(ctx, empty, merging, zero, ksm, kzero))
			rc = -1;
	}

	if (ksm + kzero)
		stress_ksm_unmerge_racers_meet(ctx);
	cow0 = stress_ksm_unmerge_cow_ksm(ctx);
	stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_UNMERGING);
	ret = stress_ksm_unmerge_timed_off(ctx, sw, &dt);
	cow1 = stress_ksm_unmerge_cow_ksm(ctx);
	if (ret < 0) {
		const int err = errno;

		stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_IDLE);
		if (err == EINTR && stress_ksm_unmerge_stop_seen(ctx, "unmerge"))
			return 1;
		pr_fail("%s: %s unmerge failed, errno=%d (%s)\n", args->name,
			stress_ksm_unmerge_switch_name(sw), err, strerror(err));
		return -1;
	}
	if (sw == KSM_UNMERGE_METHOD_PRCTL && st->method_cycles[1] == 0 &&
	    stress_ksm_unmerge_prctl_check(ctx, 0) < 0)
		rc = -1;

	stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_VERIFY);
	if (!stress_ksm_unmerge_racers_quiesce(ctx))
		rc = -1;
	if (!ctx->stopped && stress_ksm_unmerge_verify_unmerge(ctx, ksm,
			(cow0 >= 0 && cow1 >= 0) ? cow1 - cow0 : -1) < 0)
		rc = -1;
	if (stress_ksm_unmerge_zc_check(ctx, "after the unmerge") < 0)
		rc = -1;
	stress_ksm_unmerge_phase_set(ctx, KSM_PHASE_IDLE);

	st->pages_merged += ksm + kzero;
	st->pages_zero += kzero;
	if (ksm + kzero) {
		st->pages_unmerged += ksm + kzero;
		st->unmerge_secs += dt;
		stress_ksm_unmerge_lat_add(&st->unmerge_lat, dt * 1000.0);
	}
	if (cow0 >= 0 && cow1 >= cow0)
		st->cow_ksm += (uint64_t)(cow1 - cow0);
	if (rc < 0) {
		stress_ksm_unmerge_fail(ctx);
		return -1;
	}
	if (ctx->stopped)
		return 1;	/* verification cut short by the end of the run: not counted */
	if (empty)
		return 0;	/* unmerged nothing: not a bogo op */
	st->cycles++;
	st->method_cycles[sw == KSM_UNMERGE_METHOD_PRCTL]++;
	stress_bogo_inc(args);
	return 0;
}

#include "stress-ksm-unmerge-memory.h"

/*
 *  stress_ksm_unmerge_open()
 *	open a proc/sysfs file read-only, -1 if missing
 */
static int stress_ksm_unmerge_open(const char *path)
{
	return open(path, O_RDONLY | O_CLOEXEC);
}

/*
 *  stress_ksm_unmerge_open_proc()
 *	open <proc root>/<name> read-only, -1 if missing
 */
static int stress_ksm_unmerge_open_proc(const char *root, const char *name)
{
	char path[PATH_MAX];

	(void)snprintf(path, sizeof(path), "%s/%s", root[0] ? root : "/proc", name);
	return stress_ksm_unmerge_open(path);
}

/*
 *  stress_ksm_unmerge_stat_has_zero()
 *	does ksm_stat report ksm_zero_pages (6.10+ style)
 */
static bool stress_ksm_unmerge_stat_has_zero(stress_ksm_unmerge_ctx_t *ctx)
{
	int64_t merging, zero;

	return (stress_ksm_unmerge_counters(ctx, &merging, &zero) == 0) && (zero >= 0);
}

/*
 *  stress_ksm_unmerge_ctx_free()
 *	release everything the context holds
 */
static void stress_ksm_unmerge_ctx_free(stress_ksm_unmerge_ctx_t *ctx)
{
	int *fds[] = {
		&ctx->pagemap_fd, &ctx->kpageflags_fd, &ctx->ksm_stat_fd,
		&ctx->merging_pages_fd, &ctx->full_scans_fd, &ctx->vmstat_fd,
	};
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(fds); i++) {
		if (*fds[i] >= 0)
			(void)close(*fds[i]);
		*fds[i] = -1;
	}
	if (stress_ksm_unmerge_kpagecount_fd >= 0)
		(void)close(stress_ksm_unmerge_kpagecount_fd);
	stress_ksm_unmerge_kpagecount_fd = -1;
	if (ctx->region)
		(void)munmap(ctx->region, ctx->region_size);
	if (ctx->templates)
		(void)munmap(ctx->templates, (KSM_UNMERGE_FEW_TEMPLATES + 1) * ctx->page_size);
	free(ctx->pagemap);
	free(ctx->pfns);
	ctx->region = NULL;
	ctx->templates = NULL;
	ctx->pagemap = NULL;
	ctx->pfns = NULL;
}

/*
 *  stress_ksm_unmerge_verify_cannot_run()
 *	the --verify rule: a check that cannot run (pagemap PFNs hidden, the
 *	kernel log unreadable) skips the stressor with the reason
 */
static bool stress_ksm_unmerge_verify_cannot_run(stress_ksm_unmerge_ctx_t *ctx)
{
	const stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	const char *why = NULL;

	if (!ctx->verify)
		return false;
	if (!ctx->have_pfns)
		why = "the page checks need pagemap PFNs (CAP_SYS_ADMIN)";
	else if (sh && sh->klog_unavail)
		why = "the kernel-log check cannot read /dev/kmsg (use --ksm-unmerge-no-klog to run without it)";
	if (!why)
		return false;
	if (stress_instance_zero(ctx->args))
		pr_inf_skip("%s: --verify cannot keep its promise: %s; skipping stressor\n",
			ctx->args->name, why);
	return true;
}

/*
 *  stress_ksm_unmerge_ctx_init()
 *	map and fill the region, open the counters; EXIT_SUCCESS or a skip/fail code
 */
static int stress_ksm_unmerge_ctx_init(stress_ksm_unmerge_ctx_t *ctx, stress_args_t *args)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	size_t total, i;

	ctx->args = args;
	ctx->t_start = stress_time_now();
	ctx->page_size = args->page_size;
	ctx->pagemap_fd = ctx->kpageflags_fd = ctx->ksm_stat_fd = -1;
	ctx->merging_pages_fd = ctx->full_scans_fd = ctx->vmstat_fd = -1;
	ctx->st = &sh->inst[args->instance];
	ctx->st->pid = getpid();
	ctx->pattern = sh->pattern;
	ctx->methods = sh->methods;
	ctx->verify = !!(g_opt_flags & OPT_FLAGS_VERIFY);
	ctx->ksm_zero = stress_ksm_unmerge_pattern_zero(ctx->pattern);
	ctx->seed = ((uint64_t)getpid() << 32) ^ ((uint64_t)args->instance << 48) ^ stress_mwc64();
	ctx->region_size = stress_ksm_unmerge_region_size(args, ctx->methods, &total);
	ctx->npages = ctx->region_size / ctx->page_size;
	if (ctx->region_size > KSM_UNMERGE_TEARDOWN_FREE)
		ctx->teardown_secs = (double)ctx->region_size / (double)KSM_UNMERGE_TEARDOWN_RATE;

	ctx->region = mmap(NULL, ctx->region_size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ctx->region == MAP_FAILED) {
		ctx->region = NULL;
		pr_inf_skip("%s: mmap of %zu bytes failed%s, errno=%d (%s), skipping stressor\n",
			args->name, ctx->region_size, stress_memory_free_get(), errno, strerror(errno));
		return EXIT_NO_RESOURCE;
	}
#if defined(MADV_NOHUGEPAGE)
	(void)madvise(ctx->region, ctx->region_size, MADV_NOHUGEPAGE);
#endif
	stress_memory_anon_name_set(ctx->region, ctx->region_size, "ksm-unmerge-region");
	/* shmem: under prctl's merge-any the templates must not merge with the region */
	ctx->templates = mmap(NULL, (KSM_UNMERGE_FEW_TEMPLATES + 1) * ctx->page_size,
		PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ctx->pagemap = calloc(KSM_UNMERGE_PM_CHUNK, sizeof(uint64_t));
	ctx->pfns = calloc(ctx->npages, sizeof(uint64_t));
	if (ctx->templates == MAP_FAILED || !ctx->pagemap || !ctx->pfns) {
		if (ctx->templates == MAP_FAILED)
			ctx->templates = NULL;
		pr_inf_skip("%s: cannot allocate verification buffers for %zu pages, skipping stressor\n",
			args->name, ctx->npages);
		return EXIT_NO_RESOURCE;
	}

	ctx->pagemap_fd = stress_ksm_unmerge_open("/proc/self/pagemap");
	ctx->kpageflags_fd = stress_ksm_unmerge_open("/proc/kpageflags");
	ctx->ksm_stat_fd = stress_ksm_unmerge_open_proc(sh->proc_root, "self/ksm_stat");
	ctx->merging_pages_fd = stress_ksm_unmerge_open_proc(sh->proc_root, "self/ksm_merging_pages");
	ctx->full_scans_fd = stress_ksm_unmerge_open_proc(KSM_SYSFS, "full_scans");
	ctx->vmstat_fd = stress_ksm_unmerge_open("/proc/vmstat");
	if (ctx->full_scans_fd < 0) {
		pr_inf_skip("%s: cannot open %s/full_scans, errno=%d (%s), skipping stressor\n",
			args->name, KSM_SYSFS, errno, strerror(errno));
		return EXIT_NO_RESOURCE;
	}

	stress_ksm_unmerge_templates_fill(ctx);
	for (i = 0; i < ctx->npages; i++) {
		/* gigabytes take seconds to fault in: stop on time */
		if (!(i % KSM_UNMERGE_FILL_PAGES) && stress_ksm_unmerge_stop_seen(ctx, "region fill"))
			break;
		stress_ksm_unmerge_page_fill(ctx, i, ctx->region + i * ctx->page_size);
	}
	ctx->filled = i;
	stress_ksm_unmerge_expect(ctx);
	/* the self-tested signals (init): zero page, KPF_KSM, PFNs, counters */
	ctx->iface = &sh->iface;
	stress_ksm_unmerge_iface_cur = &sh->iface;
	if (!sh->iface.kpf_ksm && stress_ksm_unmerge_kpagecount_fd < 0)
		stress_ksm_unmerge_kpagecount_fd = stress_ksm_unmerge_open("/proc/kpagecount");
	ctx->zero_pfn = sh->iface.zero_pfn;
	/* without CAP_SYS_ADMIN pagemap hides PFNs: fall back to counters */
	ctx->have_pfns = sh->iface.pfns && ctx->pagemap_fd >= 0 &&
		(stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region, 1,
			ctx->page_size, ctx->pagemap) == 0) && (ctx->pagemap[0] & PM_PFN_MASK);
	if (!ctx->have_pfns && stress_instance_zero(args))
		pr_inf("%s: pagemap PFNs not readable: verifying with per-process counters only\n", args->name);
	ctx->counters = stress_ksm_unmerge_counter_source(ctx->ksm_stat_fd >= 0 && sh->iface.stat_merging,
		stress_ksm_unmerge_stat_has_zero(ctx), ctx->merging_pages_fd >= 0,
		ctx->have_pfns, ctx->expect_zero > 0);
	if (stress_instance_zero(args) && ctx->counters != KSM_COUNTERS_KSM_STAT)
		pr_inf("%s: /proc/self/ksm_stat %s: merge waits read %s\n", args->name,
			ctx->ksm_stat_fd < 0 ? "missing" : "lacks ksm_merging_pages or ksm_zero_pages",
			stress_ksm_unmerge_counter_names[ctx->counters]);
	if (stress_ksm_unmerge_verify_cannot_run(ctx))
		return EXIT_NOT_IMPLEMENTED;
	if (ctx->counters == KSM_COUNTERS_NONE) {
		pr_inf_skip("%s: no way to observe merging (no /proc/self/ksm_stat, "
			"ksm_merging_pages or pagemap PFNs), skipping stressor\n", args->name);
		return EXIT_NOT_IMPLEMENTED;
	}
	if (stress_ksm_unmerge_vmflags(ctx->region, ctx->vmflags_before, sizeof(ctx->vmflags_before)) < 0)
		ctx->vmflags_before[0] = '\0';
	if (stress_instance_zero(args))
		stress_memory_usage_get(args, ctx->region_size, total);
	return EXIT_SUCCESS;
}

/*
 *  stress_ksm_unmerge_switches()
 *	merge switches to rotate through; prctl dropped where the kernel lacks it
 */
static uint64_t stress_ksm_unmerge_switches(stress_ksm_unmerge_ctx_t *ctx)
{
	uint64_t sw = ctx->methods & KSM_UNMERGE_METHOD_SWITCHES;

	if (!sw)
		sw = KSM_UNMERGE_METHOD_MADVISE;
	if ((sw & KSM_UNMERGE_METHOD_PRCTL) && prctl(PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL) < 0) {
		if (stress_instance_zero(ctx->args))
			pr_inf_skip("%s: method prctl skipped: PR_GET_MEMORY_MERGE failed, errno=%d (%s) "
				"(needs Linux 6.4)\n", ctx->args->name, errno, strerror(errno));
		sw &= ~KSM_UNMERGE_METHOD_PRCTL;
	}
	return sw;
}

/*
 *  stress_ksm_unmerge_metrics()
 *	set this instance's metrics; none whose value is legitimately 0
 */
static void stress_ksm_unmerge_metrics(stress_ksm_unmerge_ctx_t *ctx, const double duration)
{
	stress_args_t *args = ctx->args;
	const stress_ksm_unmerge_instance_t *st = ctx->st;
	size_t i;

	if (st->pages_unmerged && st->unmerge_secs > 0.0) {
		stress_metrics_set(args, "MB per sec unmerge rate",
			((double)st->pages_unmerged * (double)ctx->page_size / (double)MB) / st->unmerge_secs,
			STRESS_METRIC_HARMONIC_MEAN);
		stress_metrics_set(args, "pages unmerged per sec",
			(double)st->pages_unmerged / st->unmerge_secs, STRESS_METRIC_HARMONIC_MEAN);
	}
	/* printed only where the madvise unmerge was split into calls */
	if (st->unmerge_cycles && st->unmerge_calls > st->unmerge_cycles)
		stress_metrics_set(args, "unmerge calls per cycle",
			(double)st->unmerge_calls / (double)st->unmerge_cycles, STRESS_METRIC_GEOMETRIC_MEAN);
	if (st->cycles) {
		stress_metrics_set(args, "merge wait millisecs per cycle",
			st->merge_wait_secs * 1000.0 / (double)st->cycles, STRESS_METRIC_GEOMETRIC_MEAN);
		if (st->pages_merged)
			stress_metrics_set(args, "pages merged per cycle",
				(double)st->pages_merged / (double)st->cycles, STRESS_METRIC_GEOMETRIC_MEAN);
	}
	if (st->racer[KSM_RACER_IDX_SPARSE].active && st->racer[KSM_RACER_IDX_SPARSE].ops &&
	    st->racer[KSM_RACER_IDX_SPARSE].aux)
		stress_metrics_set(args, "nanosecs per sparse page",
			(double)st->racer[KSM_RACER_IDX_SPARSE].aux /
			(double)st->racer[KSM_RACER_IDX_SPARSE].ops, STRESS_METRIC_HARMONIC_MEAN);
	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		char desc[64];

		if (!st->racer[i].active || !st->racer[i].ops || duration <= 0.0)
			continue;
		(void)snprintf(desc, sizeof(desc), "%s ops per sec", stress_ksm_unmerge_racer_names[i]);
		stress_metrics_set(args, desc, (double)st->racer[i].ops / duration,
			STRESS_METRIC_HARMONIC_MEAN);
	}
}

/*
 *  stress_ksm_unmerge_log_sync()
 *	instance, at its end: have the monitor retry the unwritten intervals
 *	now, then fail if any is not in the file
 */
static int stress_ksm_unmerge_log_sync(stress_ksm_unmerge_ctx_t *ctx)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	const double deadline = stress_time_now() + 1.0;
	uint32_t req, missing;

	if (!sh->log_path[0] || sh->monitor_pid <= 0)
		return 0;
	req = __atomic_add_fetch(&sh->log_sync_req, 1, __ATOMIC_SEQ_CST);
	while (sh->log_sync_done < req && stress_time_now() < deadline)
		(void)shim_nanosleep_uint64(10000000);
	missing = sh->log_pending + sh->log_lost;
	if (!missing)
		return 0;
	pr_fail("%s: soak log %s: %" PRIu32 " of %" PRIu32 " intervals are not in the file "
		"(%" PRIu32 " lost, %" PRIu32 " unwritten), last errno=%d (%s)\n", ctx->args->name,
		sh->log_path, missing, sh->log_elapsed, sh->log_lost, sh->log_pending,
		sh->log_errno, strerror(sh->log_errno));
	return -1;
}

/*
 *  stress_ksm_unmerge_outcome()
 *	end-of-run checks: kernel log, degenerate runs; returns the exit code
 */
static int stress_ksm_unmerge_outcome(stress_ksm_unmerge_ctx_t *ctx, int rc)
{
	stress_args_t *args = ctx->args;
	const stress_ksm_unmerge_instance_t *st = ctx->st;
	const uint64_t want = ctx->expect_merged + ctx->expect_zero;
	size_t i;

	if (!stress_ksm_unmerge_klog_sync(2.0))
		pr_dbg("%s: kernel-log watcher did not catch up within 2 s\n", args->name);
	if (st->hangs) {
		pr_fail("%s: %" PRIu64 " step(s) stuck longer than the hang bound\n", args->name, st->hangs);
		rc = EXIT_FAILURE;
	}
	if (stress_ksm_unmerge_klog_events()) {
		pr_fail("%s: %" PRIu32 " kernel warning event(s) during the run (see kernel-log report)\n",
			args->name, stress_ksm_unmerge_klog_events());
		rc = EXIT_FAILURE;
	}
	if (stress_ksm_unmerge_log_sync(ctx) < 0)
		rc = EXIT_FAILURE;
	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		const stress_ksm_unmerge_racer_stats_t *rs = &st->racer[i];

		if (!rs->active)
			continue;
		if (rs->failures) {
			pr_fail("%s: racer %s: %" PRIu64 " verification failure(s)\n", args->name,
				stress_ksm_unmerge_racer_names[i], rs->failures);
			rc = EXIT_FAILURE;
		} else if (!rs->evidence && ctx->verify && st->cycles) {
			pr_fail("%s: racer %s ran %" PRIu64 " ops but never reached its path (%s): "
				"degenerate run\n", args->name, stress_ksm_unmerge_racer_names[i],
				rs->ops, rs->reason[0] ? rs->reason : "no evidence");
			rc = EXIT_FAILURE;
		}
	}
	if (rc != EXIT_SUCCESS)
		return rc;
	if (want && !st->pages_merged && (st->merge_timeouts || st->partial_merges)) {
		pr_fail("%s: nothing merged in %" PRIu64 " merge waits: ksmd run=%" PRIu64 ", "
			"%zu pages per instance; no throughput reported\n", args->name,
			st->merge_timeouts + st->partial_merges,
			stress_ksm_unmerge_knob_u64("run"), ctx->npages);
		return EXIT_FAILURE;
	}
	if (!st->cycles && want) {
		pr_inf_skip("%s: no merge/unmerge cycle verified: the run ended during the %s, "
			"%.1f s after the start (%zu of %zu pages filled; a %zu MB region needs "
			"longer: raise --timeout or lower --ksm-unmerge-bytes)\n", args->name,
			st->stop_step[0] ? st->stop_step : "first cycle",
			stress_time_now() - ctx->t_start, ctx->filled, ctx->npages,
			(size_t)(ctx->region_size / MB));
		return EXIT_NO_RESOURCE;
	}
	if (!want && st->pages_merged) {
		pr_fail("%s: control pattern unique merged %" PRIu64 " pages, expected none\n",
			args->name, st->pages_merged);
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

/*
 *  stress_ksm_unmerge_teardown_wait()
 *	a big region was freed ahead of the timeout: end with the run, not
 *	before it (stress-ng warns about an instance that finished early)
 */
static void stress_ksm_unmerge_teardown_wait(const stress_ksm_unmerge_ctx_t *ctx)
{
	while (ctx->teardown_secs > 0.0 && stress_continue(ctx->args) &&
	       stress_time_now() < ctx->args->time_end - 0.2)
		(void)shim_nanosleep_uint64(50000000);
}

/*
 *  stress_ksm_unmerge()
 *	stress KSM unmerging: verified merge/unmerge cycles with racers
 */
static int stress_ksm_unmerge(stress_args_t *args)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	stress_ksm_unmerge_ctx_t ctx;
	uint64_t switches;
	double bound, t_start;
	int rc;

	if (!sh) {
		pr_inf_skip("%s: shared state missing (init failed), skipping stressor\n", args->name);
		return EXIT_NO_RESOURCE;
	}
	if (!sh->knobs_ok) {
		pr_inf_skip("%s: %s, skipping stressor\n", args->name,
			sh->knob_error[0] ? sh->knob_error : "KSM knobs not set");
		return EXIT_NO_RESOURCE;
	}
	(void)memset(&ctx, 0, sizeof(ctx));
	rc = stress_ksm_unmerge_ctx_init(&ctx, args);
	if (rc != EXIT_SUCCESS) {
		stress_ksm_unmerge_ctx_free(&ctx);
		return rc;
	}
	switches = stress_ksm_unmerge_switches(&ctx);
	if (!switches) {
		stress_ksm_unmerge_ctx_free(&ctx);
		return EXIT_NOT_IMPLEMENTED;
	}
	/* merging needs two ksmd passes over every instance's pages */
	bound = 10.0 + (double)(ctx.region_size * args->instances) / (32.0 * MB);

	stress_proc_state_set(args->name, STRESS_STATE_SYNC_WAIT);
	stress_sync_start_wait(args);
	stress_proc_state_set(args->name, STRESS_STATE_RUN);
	(void)stress_ksm_unmerge_racers_start(&ctx);
	t_start = stress_time_now();

	rc = EXIT_SUCCESS;
	while (!stress_ksm_unmerge_ending(&ctx)) {
		uint64_t sw = switches;
		int ret;

		if (sw == KSM_UNMERGE_METHOD_SWITCHES)
			sw = (ctx.cycle & 1) ? KSM_UNMERGE_METHOD_PRCTL : KSM_UNMERGE_METHOD_MADVISE;
		ret = stress_ksm_unmerge_cycle(&ctx, sw, bound);
		if (ret > 0)
			break;
		if (ret < 0) {
			rc = EXIT_FAILURE;
			if (ctx.st->failures >= KSM_UNMERGE_MAX_FAILURES) {
				pr_inf("%s: %d failures reached, aborting stress process\n",
					args->name, KSM_UNMERGE_MAX_FAILURES);
				break;
			}
		}
	}
	stress_proc_state_set(args->name, STRESS_STATE_DEINIT);
	stress_ksm_unmerge_racers_stop(&ctx);
	stress_ksm_unmerge_phase_set(&ctx, KSM_PHASE_IDLE);
	if (stress_ksm_unmerge_zc_check(&ctx, "after the racers' children exited") < 0) {
		stress_ksm_unmerge_fail(&ctx);
		rc = EXIT_FAILURE;
	}
	stress_ksm_unmerge_zc_close();
	stress_ksm_unmerge_metrics(&ctx, stress_time_now() - t_start);
	rc = stress_ksm_unmerge_outcome(&ctx, rc);
	stress_ksm_unmerge_ctx_free(&ctx);
	ctx.st->stopped_at = stress_time_now();
	stress_ksm_unmerge_teardown_wait(&ctx);
	return rc;
}

#include "stress-ksm-unmerge-report.h"

/*
 *  stress_ksm_unmerge_settings()
 *	read the stressor options into the shared state
 */
static void stress_ksm_unmerge_settings(stress_ksm_unmerge_shared_t *sh)
{
	size_t pattern = KSM_UNMERGE_PATTERN_SAME;
	uint64_t methods = KSM_UNMERGE_METHOD_ALL;	/* default: the whole job */
	uint32_t hang_timeout = 60, progress = 0;
	char *log_path = NULL, *proc_root = NULL;
	bool stop_on_warn = false;

	(void)stress_setting_get("ksm-unmerge-pattern", &pattern);
	(void)stress_setting_get("ksm-unmerge-method", &methods);
	(void)stress_setting_get("ksm-unmerge-hang-timeout", &hang_timeout);
	(void)stress_setting_get("ksm-unmerge-stop-on-warn", &stop_on_warn);
	log_path = (char *)stress_ksm_unmerge_log_arg;
	(void)stress_setting_get("ksm-unmerge-proc", &proc_root);
	if (proc_root)
		(void)shim_strscpy(sh->proc_root, proc_root, sizeof(sh->proc_root));
	if (!stress_setting_get("ksm-unmerge-progress", &progress) &&
	    g_opt_timeout != TIMEOUT_NOT_SET && g_opt_timeout >= 600)
		progress = 60;
	sh->pattern = (int)pattern;
	sh->methods = methods;
	sh->hang_timeout = hang_timeout;
	sh->progress = progress;
	sh->stop_on_warn = stop_on_warn;
	if (log_path)
		(void)shim_strscpy(sh->log_path, log_path, sizeof(sh->log_path));
	if (g_opt_timeout != TIMEOUT_NOT_SET && g_opt_timeout)
		sh->end_time = sh->start_time + (double)g_opt_timeout;
}

/*
 *  stress_ksm_unmerge_init()
 *	parent: shared state, knob save + state file, ksmd on, watcher on
 */
static void stress_ksm_unmerge_init(const uint32_t instances)
{
	stress_ksm_unmerge_shared_t *sh;
	bool no_klog = false;
	int ret;

	stress_ksm_unmerge_shared_size = sizeof(*sh) +
		(size_t)instances * sizeof(stress_ksm_unmerge_instance_t);
	sh = mmap(NULL, stress_ksm_unmerge_shared_size, PROT_READ | PROT_WRITE,
		MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		pr_err("ksm-unmerge: cannot mmap %zu bytes of shared state, errno=%d (%s)\n",
			stress_ksm_unmerge_shared_size, errno, strerror(errno));
		stress_ksm_unmerge_shared = NULL;
		return;
	}
	stress_ksm_unmerge_shared = sh;
	sh->instances = instances;
	sh->start_time = stress_time_now();
	sh->mem_avail = stress_ksm_unmerge_meminfo_available();
	stress_ksm_unmerge_settings(sh);
	(void)stress_setting_get("ksm-unmerge-no-klog", &no_klog);

	ret = stress_ksm_unmerge_lock();
	if (ret < 0) {
		if (ret == -EAGAIN || ret == -EACCES)
			(void)snprintf(sh->knob_error, sizeof(sh->knob_error),
				"another stress-ksm-unmerge run owns the KSM knobs (%s.lock is locked)",
				KSM_STATE_FILE);
		else
			(void)snprintf(sh->knob_error, sizeof(sh->knob_error),
				"cannot create the run lock %s.lock, errno=%d (%s)",
				KSM_STATE_FILE, -ret, strerror(-ret));
		return;
	}
	stress_ksm_unmerge_state_repair();
	stress_ksm_unmerge_knobs_save(&sh->saved);
	ret = stress_ksm_unmerge_state_write(&sh->saved);
	if (ret < 0)
		pr_warn("ksm-unmerge: cannot write state file %s, errno=%d (%s); "
			"a SIGKILLed run will not be repaired\n", KSM_STATE_FILE, -ret, strerror(-ret));
	if (stress_ksm_unmerge_knobs_set(sh->pattern, sh->knob_error, sizeof(sh->knob_error)) < 0) {
		(void)stress_ksm_unmerge_knobs_restore(&sh->saved);
		return;
	}
	sh->knobs_ok = true;
	stress_ksm_unmerge_iface_selftest(sh);
	if (!no_klog)
		sh->klog_unavail = stress_ksm_unmerge_klog_start() < 0;
	stress_ksm_unmerge_monitor_start(sh);
}

/*
 *  stress_ksm_unmerge_deinit()
 *	parent: racer report, latency spread, watcher off, knobs restored
 */
static void stress_ksm_unmerge_deinit(void)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;

	if (!sh)
		return;
	stress_ksm_unmerge_monitor_stop(sh);
	stress_ksm_unmerge_klog_stop();
	stress_ksm_unmerge_report(sh);
	stress_ksm_unmerge_soak_report(sh);
#if defined(STRESS_KSM_STANDALONE)
	stress_ksm_unmerge_yaml(sh);
#endif
	if (stress_ksm_unmerge_lock_fd >= 0) {
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
	STRESS_EX_FEATURE("break-ksm"),
	STRESS_EX_SYSCALL("madvise"),
	STRESS_EX_SYSCALL("prctl"),
	STRESS_EX_SYSCALL("vmsplice"),
	STRESS_EX_SYSCALL("userfaultfd"),
	STRESS_EX_SYSCALL("process_mrelease"),
	STRESS_EX_SYSCALL("pidfd_open"),
	STRESS_EX_SYSCALL("fork"),
	STRESS_EX_SYSCALL("mprotect"),
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
	.max_metrics_items = 24,
};

#else

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
	.unimplemented_reason = "built without MADV_MERGEABLE/MADV_UNMERGEABLE support"
};

#endif
