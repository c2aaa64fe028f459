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
 *  Racer indexes: method bit order after the two merge switches and the
 *  index of each racer's entry in the racer table (stress_ksm_unmerge_racers[],
 *  further down: names, help, evidence and metric names all come from it)
 */
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
	KSM_UNMERGE_RACERS		/* number of racers */
};

static const char *stress_ksm_unmerge_racer_name(const size_t idx);
static void stress_ksm_unmerge_racers_list(void);

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
		if (!strcmp(name, stress_ksm_unmerge_racer_name(i)))
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

	if (opt_arg && !strcmp(opt_arg, "which")) {
		stress_ksm_unmerge_racers_list();
		exit(EXIT_SUCCESS);
	}
	if (!mask) {
		(void)fprintf(stderr, "%s: invalid method '%s', choose from madvise, prctl,", opt_name, opt_arg);
		for (i = 0; i < KSM_UNMERGE_RACERS; i++)
			(void)fprintf(stderr, " %s,", stress_ksm_unmerge_racer_name(i));
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
    defined(HAVE_SYS_PRCTL_H) &&	\
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
	uint64_t op_ns;			/* time its operations took, ns (racers with an op_ns_metric) */
	uint64_t ksmd_waits_timed_out;	/* its own waits for a ksmd merge that timed out */
	uint64_t meet_timeouts;		/* merged phases that did not wait for it */
	uint64_t detail[KSM_RACER_DETAILS];	/* racer's own counters, named in its table entry */
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

#define KSM_RACER_FIXED_BYTES	(4 * MB)	/* memory a racer keeps besides per-page state */

/*
 *  One racer: started before the first cycle, stopped after the last; an
 *  entry of the racer table, written by its stress-ksm-unmerge-racer-*.h
 *  header with designated initialisers
 */
typedef struct {
	const char *name;		/* method name, racer line name */
	const char *path;		/* kernel path it covers */
	const char *evidence;		/* what its evidence counter counts */
	const char *details[KSM_RACER_DETAILS];	/* names of its detail[] counters, NULL unused */
	const char *not_built;		/* why this build lacks it (feature guard off), NULL built */
	size_t page_bytes;		/* memory cap: state it keeps per region page */
	size_t fixed_bytes;		/* memory cap: state besides, 0 = KSM_RACER_FIXED_BYTES */
	bool page_copy;			/* memory cap: keeps a second copy of every region page */
	const char *op_ns_metric;	/* metric of op_ns per op, NULL none */
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
	bool merged_phase_waits;	/* the merged phase waits for this racer */
	volatile uint64_t merged_op_cycle;	/* last cycle it began an op on merged pages */
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

/*
 *  stress_ksm_unmerge_knob_path()
 *	full sysfs path of a KSM knob
 */
static void stress_ksm_unmerge_knob_path(char *path, const size_t len, const char *knob)
{
	(void)snprintf(path, len, "%s/%s", KSM_SYSFS, knob);
}

/*
 *  stress_ksm_unmerge_knob_selected()
 *	a choice knob ("[none] scan-time") reads as its selected word ("none")
 */
static void stress_ksm_unmerge_knob_selected(char *buf)
{
	const char *open = strchr(buf, '[');
	const char *close = open ? strchr(open, ']') : NULL;
	size_t n;

	if (!open || !close)
		return;
	n = (size_t)(close - open - 1);
	(void)memmove(buf, open + 1, n);
	buf[n] = '\0';
}

/*
 *  stress_ksm_unmerge_knob_read()
 *	read a KSM knob into buf (newline stripped), -1 on error
 */
static int stress_ksm_unmerge_knob_read(const char *knob, char *buf, const size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	char *nl;

	stress_ksm_unmerge_knob_path(path, sizeof(path), knob);
	n = stress_fs_file_read(path, buf, len);
	if (n < 0)
		return -1;
	buf[(size_t)n < len ? (size_t)n : len - 1] = '\0';
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	stress_ksm_unmerge_knob_selected(buf);
	return 0;
}

/*
 *  stress_ksm_unmerge_knob_u64()
 *	read a numeric KSM knob or counter, 0 on error
 */
static uint64_t stress_ksm_unmerge_knob_u64(const char *knob)
{
	char buf[64];

	if (stress_ksm_unmerge_knob_read(knob, buf, sizeof(buf)) < 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

/*
 *  stress_ksm_unmerge_knob_write()
 *	write a KSM knob, returns 0 or -errno
 */
static int stress_ksm_unmerge_knob_write(const char *knob, const char *value)
{
	char path[PATH_MAX];
	int fd;
	ssize_t n;

	stress_ksm_unmerge_knob_path(path, sizeof(path), knob);
	/* O_TRUNC as a shell's "echo > knob" does: a no-op on sysfs */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, value, strlen(value));
	if (n < 0) {
		const int err = errno;

		(void)close(fd);
		return -err;
	}
	(void)close(fd);
	return 0;
}

/*
 *  stress_ksm_unmerge_knobs_save()
 *	snapshot every KSM knob the stressor may change
 */
static void stress_ksm_unmerge_knobs_save(stress_ksm_unmerge_knobs_t *knobs)
{
	size_t i;

	for (i = 0; i < KSM_KNOBS; i++) {
		if (stress_ksm_unmerge_knob_read(stress_ksm_unmerge_knob_names[i],
				knobs->value[i], sizeof(knobs->value[i])) < 0)
			knobs->value[i][0] = '\0';
	}
}

/*
 *  stress_ksm_unmerge_knobs_restore()
 *	write saved knobs back where they differ, returns failures
 */
static int stress_ksm_unmerge_knobs_restore(const stress_ksm_unmerge_knobs_t *knobs)
{
	size_t i;
	int failures = 0;

	for (i = 0; i < KSM_KNOBS; i++) {
		const char *name = stress_ksm_unmerge_knob_names[i];
		char now[32];
		int ret;

		if (!knobs->value[i][0])
			continue;
		if ((stress_ksm_unmerge_knob_read(name, now, sizeof(now)) == 0) &&
		    !strcmp(now, knobs->value[i]))
			continue;
		ret = stress_ksm_unmerge_knob_write(name, knobs->value[i]);
		if (ret < 0) {
			pr_err("ksm-unmerge: cannot restore %s/%s to %s, errno=%d (%s)\n",
				KSM_SYSFS, name, knobs->value[i], -ret, strerror(-ret));
			failures++;
		}
	}
	return failures;
}

/*
 *  stress_ksm_unmerge_state_write()
 *	record the saved knobs and owner pid so a SIGKILLed run can be repaired
 */
static int stress_ksm_unmerge_state_write(const stress_ksm_unmerge_knobs_t *knobs)
{
	char buf[1024], tmp[PATH_MAX];
	size_t i, off;
	int fd;

	off = (size_t)snprintf(buf, sizeof(buf), "pid %d\n", (int)getpid());
	for (i = 0; i < KSM_KNOBS && off < sizeof(buf); i++) {
		if (knobs->value[i][0])
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s %s\n",
				stress_ksm_unmerge_knob_names[i], knobs->value[i]);
	}
	(void)snprintf(tmp, sizeof(tmp), "%s.tmp", KSM_STATE_FILE);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if ((write(fd, buf, off) != (ssize_t)off) || (fsync(fd) < 0)) {
		const int err = errno;

		(void)close(fd);
		(void)shim_unlink(tmp);
		return -err;
	}
	(void)close(fd);
	if (rename(tmp, KSM_STATE_FILE) < 0)
		return -errno;
	return 0;
}

/*
 *  stress_ksm_unmerge_state_read()
 *	parse a state file into knobs and owner pid, -1 if absent or corrupt
 */
static int stress_ksm_unmerge_state_read(const char *path, stress_ksm_unmerge_knobs_t *knobs, pid_t *pid)
{
	char line[128];
	FILE *fp;
	int found = 0;

	(void)memset(knobs, 0, sizeof(*knobs));
	*pid = 0;
	fp = fopen(path, "re");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		char name[64], value[32];
		size_t i;
		int p;

		if (sscanf(line, "pid %d", &p) == 1) {
			*pid = (pid_t)p;
			continue;
		}
		if (sscanf(line, "%63s %31s", name, value) != 2)
			continue;
		for (i = 0; i < KSM_KNOBS; i++) {
			if (!strcmp(name, stress_ksm_unmerge_knob_names[i])) {
				(void)strlcpy(knobs->value[i], value, sizeof(knobs->value[i]));
				found++;
			}
		}
	}
	(void)fclose(fp);
	return (*pid > 0 && found > 0) ? 0 : -1;
}

/*
 *  stress_ksm_unmerge_state_repair()
 *	restore knobs left behind by a run that died without cleaning up
 */
static void stress_ksm_unmerge_state_repair(void)
{
	stress_ksm_unmerge_knobs_t knobs;
	pid_t pid;

	if (stress_ksm_unmerge_state_read(KSM_STATE_FILE, &knobs, &pid) < 0) {
		if (access(KSM_STATE_FILE, F_OK) == 0) {
			pr_warn("ksm-unmerge: ignoring corrupt state file %s\n", KSM_STATE_FILE);
			(void)shim_unlink(KSM_STATE_FILE);
		}
		return;
	}
	pr_inf("ksm-unmerge: restoring KSM knobs left by killed run (pid %d) from %s\n",
		(int)pid, KSM_STATE_FILE);
	if (stress_ksm_unmerge_knobs_restore(&knobs) == 0)
		(void)shim_unlink(KSM_STATE_FILE);
}

/*
 *  stress_ksm_unmerge_lock()
 *	take the run lock so two runs never fight over the global knobs
 */
static int stress_ksm_unmerge_lock(void)
{
	char path[PATH_MAX];
	int fd;

	(void)snprintf(path, sizeof(path), "%s.lock", KSM_STATE_FILE);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
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

/*
 *  stress_ksm_unmerge_supported()
 *	KSM must exist and its knobs must be writable; one run at a time
 */
static int stress_ksm_unmerge_supported(const char *name)
{
	char path[PATH_MAX];

	stress_ksm_unmerge_knob_path(path, sizeof(path), "run");
	if (access(path, F_OK) < 0) {
		pr_inf_skip("%s stressor will be skipped, KSM is not available "
			"(%s missing, kernel built without CONFIG_KSM?)\n", name, KSM_SYSFS);
		return -1;
	}
	if (access(path, W_OK) < 0) {
		pr_inf_skip("%s stressor will be skipped, cannot start ksmd: "
			"%s/run is not writable (need root)\n", name, KSM_SYSFS);
		return -1;
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_meminfo_available()
 *	MemAvailable in bytes, 0 if unknown
 */
static uint64_t stress_ksm_unmerge_meminfo_available(void)
{
	char buf[4096];
	const char *p;
	ssize_t n;

	n = stress_fs_file_read("/proc/meminfo", buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, "MemAvailable:");
	if (!p)
		return 0;
	return strtoull(p + 13, NULL, 10) * KB;
}

/*
 *  stress_ksm_unmerge_knobs_set()
 *	start ksmd with fast scanning and the zero-page mode the pattern needs
 */
static int stress_ksm_unmerge_knobs_set(const int pattern, char *err, const size_t len)
{
	const bool zero = stress_ksm_unmerge_pattern_zero(pattern);
	static const struct {
		const char *knob;
		const char *value;
		bool optional;
	} sets[] = {
		/* first: in scan-time mode pages_to_scan writes are refused */
		{ "advisor_mode",	"none",		true },
		{ "pages_to_scan",	"10000",	false },
		{ "sleep_millisecs",	"0",		false },
		{ "smart_scan",		"0",		true },
		{ "run",		"1",		false },
	};
	size_t i;
	int ret;

	ret = stress_ksm_unmerge_knob_write("use_zero_pages", zero ? "1" : "0");
	if ((ret < 0) && zero) {
		(void)snprintf(err, len, "cannot set use_zero_pages=1, errno=%d (%s)",
			-ret, strerror(-ret));
		return ret;
	}
	for (i = 0; i < SIZEOF_ARRAY(sets); i++) {
		ret = stress_ksm_unmerge_knob_write(sets[i].knob, sets[i].value);
		if ((ret < 0) && !(sets[i].optional && ret == -ENOENT)) {
			(void)snprintf(err, len, "cannot set %s/%s=%s, errno=%d (%s)",
				KSM_SYSFS, sets[i].knob, sets[i].value, -ret, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

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

/*
 *  stress_ksm_unmerge_fd_read()
 *	pread a whole small proc/sysfs file into buf, NUL terminated
 */
static ssize_t stress_ksm_unmerge_fd_read(const int fd, char *buf, const size_t len)
{
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, len - 1, 0);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/*
 *  stress_ksm_unmerge_field()
 *	value of "name N" in a proc text buffer, -1 if missing
 */
static int64_t stress_ksm_unmerge_field(const char *buf, const char *name)
{
	const size_t len = strlen(name);
	const char *p = buf;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == buf || p[-1] == '\n') && (p[len] == ' ' || p[len] == ':' || p[len] == '\t'))
			return (int64_t)strtoll(p + len + 1, NULL, 10);
		p += len;
	}
	return -1;
}

/*
 *  stress_ksm_unmerge_counters()
 *	this process's merging pages and KSM zero pages (-1 when unknown)
 */
static int stress_ksm_unmerge_counters(stress_ksm_unmerge_ctx_t *ctx,
	int64_t *merging, int64_t *zero)
{
	char buf[512];

	*merging = -1;
	*zero = -1;
	if (stress_ksm_unmerge_fd_read(ctx->ksm_stat_fd, buf, sizeof(buf)) > 0) {
		*merging = stress_ksm_unmerge_field(buf, "ksm_merging_pages");
		*zero = stress_ksm_unmerge_field(buf, "ksm_zero_pages");
	}
	/* field by field: 6.1's ksm_stat has only ksm_rmap_items */
	if (*merging < 0 && stress_ksm_unmerge_fd_read(ctx->merging_pages_fd, buf, sizeof(buf)) > 0)
		*merging = (int64_t)strtoll(buf, NULL, 10);
	return (*merging >= 0 || *zero >= 0) ? 0 : -1;
}

/*
 *  stress_ksm_unmerge_full_scans()
 *	ksmd's full scan count (not monotonic: run=2 resets it)
 */
static uint64_t stress_ksm_unmerge_full_scans(stress_ksm_unmerge_ctx_t *ctx)
{
	char buf[64];

	if (stress_ksm_unmerge_fd_read(ctx->full_scans_fd, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

/*
 *  stress_ksm_unmerge_cow_ksm()
 *	global /proc/vmstat cow_ksm, -1 when the kernel lacks it
 */
static int64_t stress_ksm_unmerge_cow_ksm(stress_ksm_unmerge_ctx_t *ctx)
{
	char buf[16384];

	if (stress_ksm_unmerge_fd_read(ctx->vmstat_fd, buf, sizeof(buf)) <= 0)
		return -1;
	return stress_ksm_unmerge_field(buf, "cow_ksm");
}

/*
 *  stress_ksm_unmerge_pagemap_read()
 *	pagemap entries for npages pages from addr into out
 */
static int stress_ksm_unmerge_pagemap_read(const int fd, const void *addr,
	const size_t npages, const size_t page_size, uint64_t *out)
{
	size_t done = 0;
	const off_t base = (off_t)(((uintptr_t)addr / page_size) * sizeof(uint64_t));

	while (done < npages * sizeof(uint64_t)) {
		const ssize_t n = pread(fd, (uint8_t *)out + done,
			npages * sizeof(uint64_t) - done, base + (off_t)done);

		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/*
 *  Interface self-test.  Every kernel signal a verdict uses is tested once
 *  per run, in init(), on memory the stressor maps for it: which page is
 *  the zero page, whether KPF_KSM tells KSM pages from private ones,
 *  which ksm_stat fields exist, whether pagemap shows PFNs, whether
 *  cow_ksm counts unshared KSM pages.  stress_ksm_unmerge_iface_probe()
 *  gathers the raw words, stress_ksm_unmerge_iface_judge() (pure, fed
 *  the recorded dumps of other kernels by the unit tests) decides, and
 *  stress_ksm_unmerge_page_what() answers "what is this page" from the
 *  signals found trustworthy.
 */
#define KPF_ANON			STRESS_BIT_ULL(12)
#define KSM_IFACE_PROBE_SECS		(3.0)

static bool stress_ksm_unmerge_fake_kpf_ksm;	/* test only: KPF_KSM on every anon page */
static bool stress_ksm_unmerge_fake_no_zero;	/* test only: read faults map private pages */

/*
 *  stress_ksm_unmerge_kpageflags()
 *	/proc/kpageflags word of pfn, 0 on error
 */

static uint64_t stress_ksm_unmerge_kpageflags(const int fd, const uint64_t pfn)
{
	uint64_t flags = 0;

	if (pread(fd, &flags, sizeof(flags), (off_t)(pfn * sizeof(flags))) != sizeof(flags))
		return 0;
	if (stress_ksm_unmerge_fake_kpf_ksm && (flags & KPF_ANON))
		flags |= STRESS_BIT_ULL(KPF_BIT_KSM);	/* test only: the 6.12 kpageflags bug */
	return flags;
}

/*
 *  stress_ksm_unmerge_kver()
 *	pure: "6.18.44-..." -> 618, 0 if unparsable
 */
static int stress_ksm_unmerge_kver(const char *release)
{
	int major = 0, minor = 0;

	if (sscanf(release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major * 100 + minor;
}

/*
 *  stress_ksm_unmerge_pm_pfn()
 *	pure: pfn of a present pagemap entry, 0 if not present
 */
static inline uint64_t stress_ksm_unmerge_pm_pfn(const uint64_t e)
{
	return (e & PM_PRESENT) ? (e & PM_PFN_MASK) : 0;
}

/*
 *  stress_ksm_unmerge_iface_set()
 *	record one interface's verdict: trusted or not, why, and what is used
 */
static void FORMAT(printf, 4, 5) stress_ksm_unmerge_iface_set(stress_ksm_unmerge_iface_t *ifc,
	const int i, const char *why, const char *fmt, ...)
{
	va_list ap;

	ifc->trusted[i] = (why == NULL);
	(void)snprintf(ifc->why[i], sizeof(ifc->why[i]), "%s", why ? why : "");
	va_start(ap, fmt);
	(void)vsnprintf(ifc->use[i], sizeof(ifc->use[i]), fmt, ap);
	va_end(ap);
}

/*
 *  stress_ksm_unmerge_iface_zero()
 *	pure: the zero page from the read-fault probe and KPF_ZERO_PAGE; a
 *	read fault counts only if it yields one shared, non-exclusive pfn
 */
static void stress_ksm_unmerge_iface_zero(const stress_ksm_unmerge_iface_obs_t *o,
	stress_ksm_unmerge_iface_t *ifc)
{
	const uint64_t zbit = STRESS_BIT_ULL(KPF_BIT_ZERO_PAGE);
	const uint64_t rf = stress_ksm_unmerge_pm_pfn(o->rf[0]);
	const bool rf_shared = ifc->pfns && rf && rf == stress_ksm_unmerge_pm_pfn(o->rf[1]) &&
		!(o->rf[0] & PM_EXCLUSIVE);
	const bool zp_shared = ifc->pfns && o->zp_valid && stress_ksm_unmerge_pm_pfn(o->zp) &&
		!(o->zp & PM_EXCLUSIVE);
	char why[160];
	bool lies;

	/* KPF_ZERO_PAGE lies if a private page shows it or the zero page lacks it */
	lies = (o->fresh_flags & zbit) || (!rf_shared && (o->rf_flags[0] & zbit)) ||
		(o->merged == 1 && (o->mg_flags[0] & zbit)) ||
		(rf_shared && !(o->rf_flags[0] & zbit)) || (zp_shared && !(o->zp_flags & zbit));
	ifc->kpf_zero = ifc->pfns && o->kpageflags && !lies;
	ifc->read_fault_zero = rf_shared;
	ifc->zero_pfn = 0;
	if (rf_shared)
		ifc->zero_pfn = rf;
	else if (zp_shared && (!o->kpageflags || (o->zp_flags & zbit)))
		ifc->zero_pfn = stress_ksm_unmerge_pm_pfn(o->zp);

	if (!ifc->pfns)
		(void)snprintf(why, sizeof(why), "PFNs hidden: the zero page cannot be seen");
	else if (!rf_shared)
		(void)snprintf(why, sizeof(why), "a read fault maps a private exclusive page (pfn %#" PRIx64
			"), not the shared zero page: pvm_no_zero_page=1?", rf);
	else if (o->kpageflags && !ifc->kpf_zero)
		(void)snprintf(why, sizeof(why), "KPF_ZERO_PAGE is not set on the shared zero page "
			"or is set on a private page");
	else
		why[0] = '\0';

	if (ifc->kpf_zero && ifc->zero_pfn)
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_ZERO_PAGE, why[0] ? why : NULL,
			"KPF_ZERO_PAGE per page (zero page pfn %#" PRIx64 ")", ifc->zero_pfn);
	else if (ifc->kpf_zero)
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_ZERO_PAGE, why[0] ? why : NULL,
			"KPF_ZERO_PAGE per page");
	else if (ifc->zero_pfn)
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_ZERO_PAGE, why[0] ? why : NULL,
			"the probed shared zero page pfn %#" PRIx64, ifc->zero_pfn);
	else
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_ZERO_PAGE, why[0] ? why : "no zero page found",
			"no zero-page verdicts (KSM zero pages are not told apart)");
}

/*
 *  stress_ksm_unmerge_iface_kpf_ksm()
 *	pure: KPF_KSM must be clear on a page KSM never saw and set on a
 *	page the probe merged
 */
static void stress_ksm_unmerge_iface_kpf_ksm(const stress_ksm_unmerge_iface_obs_t *o,
	stress_ksm_unmerge_iface_t *ifc)
{
	const uint64_t kbit = STRESS_BIT_ULL(KPF_BIT_KSM);
	const char *instead = ifc->excl ?
		"pfn sharing within the region, the pagemap exclusive bit 56 and kpagecount "
		"(weaker: a KSM page mapped by at most two ptes looks private)" :
		"pfn sharing within the region (weaker: a KSM page shared with another process only "
		"looks private)";
	char why[160];

	ifc->kpf_ksm = false;
	if (!ifc->pfns) {
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, "PFNs hidden",
			"per-process counters only");
		return;
	}
	if (!o->kpageflags) {
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, "/proc/kpageflags not readable",
			"%s", instead);
		return;
	}
	if (o->fresh_flags & kbit) {
		(void)snprintf(why, sizeof(why), "KPF_KSM set on a fresh anonymous page KSM never saw "
			"(kpageflags %#" PRIx64 "): the 6.10-6.12 stable_page_flags() bug", o->fresh_flags);
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, why, "%s", instead);
		return;
	}
	if (o->merged == 1 && !(o->mg_flags[0] & kbit)) {
		(void)snprintf(why, sizeof(why), "a page the probe merged (pfn %#" PRIx64
			", shared) lacks KPF_KSM", stress_ksm_unmerge_pm_pfn(o->mg[0]));
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, why, "%s", instead);
		return;
	}
	ifc->kpf_ksm = true;
	stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KPF_KSM, NULL, "KPF_KSM%s",
		o->merged == 1 ? " (clear on a fresh page, set on a merged one)" :
		" (clear on a fresh page; the probe merge did not complete)");
}

/*
 *  stress_ksm_unmerge_iface_counters()
 *	pure: ksm_stat fields (fallback field by field) and cow_ksm
 */
static void stress_ksm_unmerge_iface_counters(const stress_ksm_unmerge_iface_obs_t *o,
	stress_ksm_unmerge_iface_t *ifc)
{
	const int64_t delta = (o->cow_before >= 0 && o->cow_after >= 0) ? o->cow_after - o->cow_before : -1;
	const char *merging = o->stat_merging ? "ksm_stat" : o->merging_pages ?
		"/proc/self/ksm_merging_pages" : ifc->pfns ? "pagemap" : "nothing";
	const char *zero = o->stat_zero ? "ksm_stat" : ifc->pfns ? "pagemap" : "nothing";
	char why[160];

	ifc->stat_merging = o->stat && o->stat_merging;
	ifc->stat_zero = o->stat && o->stat_zero;
	ifc->merging_pages = o->merging_pages;
	if (!o->stat)
		(void)snprintf(why, sizeof(why), "/proc/self/ksm_stat missing (before 6.1)");
	else if (!o->stat_merging || !o->stat_zero)
		(void)snprintf(why, sizeof(why), "ksm_stat lacks %s%s%s", o->stat_merging ? "" : "ksm_merging_pages",
			(!o->stat_merging && !o->stat_zero) ? " and " : "", o->stat_zero ? "" : "ksm_zero_pages");
	else
		why[0] = '\0';
	stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_KSM_STAT, why[0] ? why : NULL,
		"%s for merging pages, %s for KSM zero pages", merging, zero);

	ifc->cow_ksm = false;
	if (delta < 0) {
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_COW_KSM, "no cow_ksm in /proc/vmstat",
			"pagemap checks only (the cow_ksm check is off)");
	} else if (o->merged == 1 && o->ksm_pages && (uint64_t)delta < o->ksm_pages) {
		(void)snprintf(why, sizeof(why), "cow_ksm grew by %" PRId64 " while the probe unshared %"
			PRIu64 " KSM pages", delta, o->ksm_pages);
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_COW_KSM, why,
			"pagemap checks only (the cow_ksm check is off)");
	} else {
		ifc->cow_ksm = true;
		if (o->merged == 1)
			stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_COW_KSM, NULL, "cow_ksm (grew by %" PRId64
				" for %" PRIu64 " unshared KSM pages)", delta, o->ksm_pages);
		else
			stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_COW_KSM, NULL,
				"cow_ksm (present; the probe merge did not complete)");
	}
}

/*
 *  stress_ksm_unmerge_iface_judge()
 *	pure: which signals the verdicts may use, from the self-test's observations
 */
static void stress_ksm_unmerge_iface_judge(const stress_ksm_unmerge_iface_obs_t *o,
	stress_ksm_unmerge_iface_t *ifc)
{
	const uint64_t fresh = stress_ksm_unmerge_pm_pfn(o->fresh);

	(void)memset(ifc, 0, sizeof(*ifc));
	ifc->tested = true;
	ifc->pfns = o->pagemap && fresh;
	ifc->kpageflags = ifc->pfns && o->kpageflags;
	ifc->excl = ifc->pfns && (o->fresh & PM_EXCLUSIVE);
	ifc->zero_unshare = o->kver >= 604;
	if (ifc->pfns)
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_PFNS, NULL, "pagemap PFNs%s",
			ifc->excl ? " and exclusive bit 56" : " (no exclusive bit 56)");
	else
		stress_ksm_unmerge_iface_set(ifc, KSM_IFACE_PFNS, o->pagemap ?
			"pagemap hides PFNs (no CAP_SYS_ADMIN)" : "/proc/self/pagemap not readable",
			"per-process counters and data checks (no per-page verdicts)");
	stress_ksm_unmerge_iface_zero(o, ifc);
	stress_ksm_unmerge_iface_kpf_ksm(o, ifc);
	stress_ksm_unmerge_iface_counters(o, ifc);
}

/*
 *  stress_ksm_unmerge_page_what()
 *	pure, the one answer to "what is this page": pagemap entry e, its
 *	kpageflags word (0 if not read), how many region pages map its pfn
 *	(0 or 1 if unknown) and its kpagecount (0 unknown), judged from the
 *	self-tested signals only.  Where KPF_KSM lies, a page alone in the
 *	region and not exclusive is a KSM page only if more than two ptes map
 *	it: a fork child's copy-on-write share (fork and mrelease racers)
 *	looks the same
 */
static int stress_ksm_unmerge_page_what(const stress_ksm_unmerge_iface_t *ifc, const uint64_t e,
	const uint64_t flags, const size_t sharers, const uint64_t mapcount)
{
	const uint64_t pfn = e & PM_PFN_MASK;

	if (!(e & PM_PRESENT))
		return (e & PM_SWAP) ? KSM_PAGE_SWAPPED : KSM_PAGE_ABSENT;
	if (!ifc->pfns || !pfn)
		return KSM_PAGE_PRIVATE;	/* nothing to judge by: callers check have_pfns */
	if ((ifc->zero_pfn && pfn == ifc->zero_pfn) ||
	    (ifc->kpf_zero && (flags & STRESS_BIT_ULL(KPF_BIT_ZERO_PAGE))))
		return KSM_PAGE_ZERO;
	if (ifc->kpf_ksm)
		return (flags & STRESS_BIT_ULL(KPF_BIT_KSM)) ? KSM_PAGE_KSM : KSM_PAGE_PRIVATE;
	if (sharers > 1)
		return KSM_PAGE_KSM;
	if (ifc->excl && !(e & PM_EXCLUSIVE))
		return (mapcount == 0 || mapcount > 2) ? KSM_PAGE_KSM : KSM_PAGE_PRIVATE;
	return KSM_PAGE_PRIVATE;
}

/* Before the self-test (unit tests of racer verifiers): KPF_KSM and PFNs trusted */
static const stress_ksm_unmerge_iface_t stress_ksm_unmerge_iface_default = {
	.tested = false, .pfns = true, .kpageflags = true, .kpf_ksm = true,
};
static const stress_ksm_unmerge_iface_t *stress_ksm_unmerge_iface_cur;	/* this process's */
static int stress_ksm_unmerge_kpagecount_fd = -1;	/* /proc/kpagecount, where KPF_KSM lies */

/*
 *  stress_ksm_unmerge_what()
 *	page_what() with this process's self-tested signals, and a known
 *	zero page pfn (zero_pfn, 0 none) also taken for the zero page
 */
static int stress_ksm_unmerge_what(const uint64_t zero_pfn, const uint64_t e, const uint64_t flags,
	const size_t sharers)
{
	const stress_ksm_unmerge_iface_t *ifc = stress_ksm_unmerge_iface_cur ?
		stress_ksm_unmerge_iface_cur : &stress_ksm_unmerge_iface_default;

	uint64_t count = 0;

	if (zero_pfn && (e & PM_PRESENT) && (e & PM_PFN_MASK) == zero_pfn)
		return KSM_PAGE_ZERO;
	if (!ifc->kpf_ksm && sharers <= 1 && (e & PM_PRESENT) && !(e & PM_EXCLUSIVE) &&
	    stress_ksm_unmerge_kpagecount_fd >= 0 &&
	    pread(stress_ksm_unmerge_kpagecount_fd, &count, sizeof(count),
		  (off_t)((e & PM_PFN_MASK) * sizeof(count))) != sizeof(count))
		count = 0;
	return stress_ksm_unmerge_page_what(ifc, e, flags, sharers, count);
}

/*
 *  stress_ksm_unmerge_iface_line()
 *	pure: the report line of interface i (other tools grep the unreliable form)
 */
static void stress_ksm_unmerge_iface_line(const stress_ksm_unmerge_iface_t *ifc, const int i,
	char *buf, const size_t len)
{
	if (ifc->trusted[i])
		(void)snprintf(buf, len, "ksm-unmerge: interface %s: trusted: %s",
			stress_ksm_unmerge_iface_names[i], ifc->use[i]);
	else
		(void)snprintf(buf, len, "ksm-unmerge: interface %s: unreliable (%s); using %s instead",
			stress_ksm_unmerge_iface_names[i], ifc->why[i], ifc->use[i]);
}

/*
 *  stress_ksm_unmerge_iface_report()
 *	one line per interface found unreliable; -v: the whole table
 */
static void stress_ksm_unmerge_iface_report(const stress_ksm_unmerge_iface_t *ifc)
{
	char line[512];
	int i;

	for (i = 0; i < KSM_IFACES; i++) {
		stress_ksm_unmerge_iface_line(ifc, i, line, sizeof(line));
		if (ifc->trusted[i])
			pr_dbg("%s\n", line);
		else
			pr_inf("%s\n", line);
	}
	if (!ifc->zero_unshare)
		pr_dbg("ksm-unmerge: kernel before 6.4: KSM zero pages stay mapped after unmerge "
			"by design, not checked\n");
}

static int stress_ksm_unmerge_open(const char *path);
static int stress_ksm_unmerge_open_proc(const char *root, const char *name);

/*
 *  stress_ksm_unmerge_iface_entry()
 *	pagemap entry and kpageflags word of the page at addr (0s on error)
 */
static void stress_ksm_unmerge_iface_entry(const int pm_fd, const int kpf_fd, const void *addr,
	const size_t page_size, uint64_t *e, uint64_t *flags)
{
	*e = 0;
	*flags = 0;
	if (pm_fd < 0 || stress_ksm_unmerge_pagemap_read(pm_fd, addr, 1, page_size, e) < 0) {
		*e = 0;
		return;
	}
	if (kpf_fd >= 0 && stress_ksm_unmerge_pm_pfn(*e))
		*flags = stress_ksm_unmerge_kpageflags(kpf_fd, *e & PM_PFN_MASK);
}

/*
 *  stress_ksm_unmerge_iface_files()
 *	the self-test's file observations: kernel version, ksm_stat lines,
 *	ksm_merging_pages (under the --ksm-unmerge-proc root)
 */
static void stress_ksm_unmerge_iface_files(const char *proc_root, stress_ksm_unmerge_iface_obs_t *o)
{
	struct utsname u;
	char buf[1024];
	int fd;

	o->kver = (uname(&u) == 0) ? stress_ksm_unmerge_kver(u.release) : 0;
	fd = stress_ksm_unmerge_open_proc(proc_root, "self/ksm_stat");
	o->stat = fd >= 0;
	if (stress_ksm_unmerge_fd_read(fd, buf, sizeof(buf)) > 0) {
		o->stat_merging = stress_ksm_unmerge_field(buf, "ksm_merging_pages") >= 0;
		o->stat_zero = stress_ksm_unmerge_field(buf, "ksm_zero_pages") >= 0;
	}
	if (fd >= 0)
		(void)close(fd);
	fd = stress_ksm_unmerge_open_proc(proc_root, "self/ksm_merging_pages");
	o->merging_pages = fd >= 0;
	if (fd >= 0)
		(void)close(fd);
}

/*
 *  stress_ksm_unmerge_iface_cow()
 *	global cow_ksm, -1 when /proc/vmstat lacks it
 */
static int64_t stress_ksm_unmerge_iface_cow(void)
{
	char buf[16384];
	const int fd = stress_ksm_unmerge_open("/proc/vmstat");
	int64_t v = -1;

	if (stress_ksm_unmerge_fd_read(fd, buf, sizeof(buf)) > 0)
		v = stress_ksm_unmerge_field(buf, "cow_ksm");
	if (fd >= 0)
		(void)close(fd);
	return v;
}

/*
 *  stress_ksm_unmerge_iface_merge()
 *	the probe merge: pages 0 and 1 identical, page 2 zero-filled, with
 *	use_zero_pages=1 for the duration; waits for ksmd, then unmerges and
 *	reads how cow_ksm moved
 */
static void stress_ksm_unmerge_iface_merge(const int pm_fd, const int kpf_fd, const size_t ps,
	stress_ksm_unmerge_iface_obs_t *o)
{
	uint8_t *p;
	char zero_was[32];
	size_t w;
	const double t0 = stress_time_now();
	const uint64_t salt = stress_mwc64() | 1;

	o->merged = -1;
	p = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	for (w = 0; w < ps / sizeof(uint64_t); w++)
		((uint64_t *)p)[w] = ((uint64_t *)(p + ps))[w] = salt * (w + 1);
	(void)shim_memset(p + 2 * ps, 0, ps);
	if (stress_ksm_unmerge_knob_read("use_zero_pages", zero_was, sizeof(zero_was)) < 0)
		zero_was[0] = '\0';
	(void)stress_ksm_unmerge_knob_write("use_zero_pages", "1");
	if (madvise(p, 3 * ps, MADV_MERGEABLE) == 0) {
		o->merged = 0;
		while (stress_time_now() - t0 < KSM_IFACE_PROBE_SECS) {
			stress_ksm_unmerge_iface_entry(pm_fd, kpf_fd, p, ps, &o->mg[0], &o->mg_flags[0]);
			stress_ksm_unmerge_iface_entry(pm_fd, kpf_fd, p + ps, ps, &o->mg[1], &o->mg_flags[1]);
			stress_ksm_unmerge_iface_entry(pm_fd, kpf_fd, p + 2 * ps, ps, &o->zp, &o->zp_flags);
			o->merged = stress_ksm_unmerge_pm_pfn(o->mg[0]) &&
				stress_ksm_unmerge_pm_pfn(o->mg[0]) == stress_ksm_unmerge_pm_pfn(o->mg[1]);
			o->zp_valid = stress_ksm_unmerge_pm_pfn(o->zp) && !(o->zp & PM_EXCLUSIVE);
			if (o->merged && o->zp_valid)
				break;
			(void)shim_nanosleep_uint64(5000000);
		}
		o->ksm_pages = o->merged ? 2 : 0;
		o->cow_before = stress_ksm_unmerge_iface_cow();
		(void)madvise(p, 3 * ps, MADV_UNMERGEABLE);
		o->cow_after = stress_ksm_unmerge_iface_cow();
	}
	if (zero_was[0])
		(void)stress_ksm_unmerge_knob_write("use_zero_pages", zero_was);
	(void)munmap(p, 3 * ps);
}

/*
 *  stress_ksm_unmerge_iface_probe()
 *	gather the self-test's observations on memory mapped for it
 */
static void stress_ksm_unmerge_iface_probe(const char *proc_root, stress_ksm_unmerge_iface_obs_t *o)
{
	const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	const int pm_fd = stress_ksm_unmerge_open("/proc/self/pagemap");
	const int kpf_fd = stress_ksm_unmerge_open("/proc/kpageflags");
	volatile uint8_t *rf;
	uint8_t *fresh;

	(void)memset(o, 0, sizeof(*o));
	o->cow_before = o->cow_after = -1;
	o->pagemap = pm_fd >= 0;
	o->kpageflags = kpf_fd >= 0;
	stress_ksm_unmerge_iface_files(proc_root, o);
	rf = mmap(NULL, 2 * ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fresh = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rf != MAP_FAILED) {
		(void)rf[0];
		(void)rf[ps];
		stress_ksm_unmerge_iface_entry(pm_fd, kpf_fd, (void *)rf, ps, &o->rf[0], &o->rf_flags[0]);
		stress_ksm_unmerge_iface_entry(pm_fd, kpf_fd, (void *)(rf + ps), ps, &o->rf[1], &o->rf_flags[1]);
		(void)munmap((void *)rf, 2 * ps);
	}
	if (fresh != MAP_FAILED) {
		fresh[0] = 1;
		stress_ksm_unmerge_iface_entry(pm_fd, kpf_fd, fresh, ps, &o->fresh, &o->fresh_flags);
		(void)munmap(fresh, ps);
	}
	stress_ksm_unmerge_iface_merge(pm_fd, kpf_fd, ps, o);
	if (stress_ksm_unmerge_fake_no_zero) {
		/* test only: what a pvm_no_zero_page=1 kernel shows for the read faults */
		o->rf[0] = o->fresh;
		o->rf_flags[0] = o->fresh_flags;
		o->rf[1] = o->fresh + 1;
		o->rf_flags[1] = o->fresh_flags;
	}
	if (pm_fd >= 0)
		(void)close(pm_fd);
	if (kpf_fd >= 0)
		(void)close(kpf_fd);
}

/*
 *  stress_ksm_unmerge_iface_selftest()
 *	init(), knobs set: probe, judge, print; the verdict is shared with instances
 */
static void stress_ksm_unmerge_iface_selftest(stress_ksm_unmerge_shared_t *sh)
{
	stress_ksm_unmerge_iface_obs_t o;
	const char *fake = getenv("STRESS_KSM_UNMERGE_FAKE");

	if (fake) {
		stress_ksm_unmerge_fake_kpf_ksm = strstr(fake, "kpf-ksm-all") != NULL;
		stress_ksm_unmerge_fake_no_zero = strstr(fake, "no-zero-page") != NULL;
		pr_inf("ksm-unmerge: STRESS_KSM_UNMERGE_FAKE=%s: faking a kernel's interface behaviour (tests only)\n",
			fake);
	}
	stress_ksm_unmerge_iface_probe(sh->proc_root, &o);
	stress_ksm_unmerge_iface_judge(&o, &sh->iface);
	stress_ksm_unmerge_iface_report(&sh->iface);
}

/*
 *  stress_ksm_unmerge_pfn_isort()
 *	insertion sort of a small run of pfns
 */
static void stress_ksm_unmerge_pfn_isort(uint64_t *pfns, const size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		const uint64_t v = pfns[i];

		for (j = i; j > 0 && pfns[j - 1] > v; j--)
			pfns[j] = pfns[j - 1];
		pfns[j] = v;
	}
}

/*
 *  stress_ksm_unmerge_pfn_sort_digit()
 *	in-place MSD radix sort (American flag) of n pfns on the byte at
 *	shift and the bytes below it; no scratch array, so the scan's memory
 *	is 8 bytes per page
 */
static void stress_ksm_unmerge_pfn_sort_digit(uint64_t *pfns, const size_t n, const unsigned int shift)
{
	size_t count[256], next[256], end[256], sum = 0, b;

	if (n < 32) {
		stress_ksm_unmerge_pfn_isort(pfns, n);
		return;
	}
	(void)shim_memset(count, 0, sizeof(count));
	for (b = 0; b < n; b++)
		count[(pfns[b] >> shift) & 0xff]++;
	for (b = 0; b < 256; b++) {
		next[b] = sum;
		sum += count[b];
		end[b] = sum;
	}
	if (count[(pfns[0] >> shift) & 0xff] != n) {
		/* cycle each misplaced pfn into its bucket */
		for (b = 0; b < 256; b++) {
			while (next[b] < end[b]) {
				uint64_t v = pfns[next[b]];
				size_t d = (v >> shift) & 0xff;

				while (d != b) {
					const uint64_t t = pfns[next[d]];

					pfns[next[d]++] = v;
					v = t;
					d = (v >> shift) & 0xff;
				}
				pfns[next[b]++] = v;
			}
		}
	}
	if (!shift)
		return;
	for (b = 0, sum = 0; b < 256; sum += count[b], b++) {
		if (count[b] > 1)
			stress_ksm_unmerge_pfn_sort_digit(pfns + sum, count[b], shift - 8);
	}
}

/*
 *  stress_ksm_unmerge_pfn_sort()
 *	sort n pfns in place, starting at the highest byte max_pfn uses
 */
static void stress_ksm_unmerge_pfn_sort(uint64_t *pfns, const size_t n, const uint64_t max_pfn)
{
	unsigned int shift = 0;

	while (shift < 56 && (max_pfn >> (shift + 8)))
		shift += 8;
	stress_ksm_unmerge_pfn_sort_digit(pfns, n, shift);
}

/*
 *  stress_ksm_unmerge_pm_entry()
 *	failure paths: pagemap entry of region page i (0 if unreadable)
 */
static uint64_t stress_ksm_unmerge_pm_entry(const stress_ksm_unmerge_ctx_t *ctx, const size_t i)
{
	uint64_t e = 0;

	if (stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region + i * ctx->page_size, 1,
			ctx->page_size, &e) < 0)
		return 0;
	return e;
}

/*
 *  stress_ksm_unmerge_pfn_pages()
 *	failure path: the first two region pages mapping pfn (from pagemap)
 */
static void stress_ksm_unmerge_pfn_pages(const stress_ksm_unmerge_ctx_t *ctx, const uint64_t pfn,
	size_t *first, size_t *second)
{
	size_t i, found = 0;

	*first = *second = ctx->npages;
	for (i = 0; i < ctx->npages && found < 2; i++) {
		const uint64_t e = stress_ksm_unmerge_pm_entry(ctx, i);

		if ((e & PM_PRESENT) && (e & PM_PFN_MASK) == pfn) {
			if (found++ == 0)
				*first = i;
			else
				*second = i;
		}
	}
}

/*
 *  stress_ksm_unmerge_region_collect()
 *	pagemap of the region: present pages' pfns (with the exclusive bit)
 *	sorted into ctx->pfns, ctx->scan_n of them; swapped-out pages counted
 */
static int stress_ksm_unmerge_region_collect(stress_ksm_unmerge_ctx_t *ctx)
{
	size_t i, n = 0;
	uint64_t max_pfn = 0;

	ctx->scan_n = 0;
	ctx->scan_swapped = 0;
	if (!ctx->have_pfns)
		return -1;
	for (i = 0; i < ctx->npages; i++) {
		uint64_t e;

		/* pagemap in chunks: the scan's scratch does not grow with the region */
		if (!(i % KSM_UNMERGE_PM_CHUNK) && stress_ksm_unmerge_stop_seen(ctx, "page scan"))
			return -1;
		if (!(i % KSM_UNMERGE_PM_CHUNK) &&
		    stress_ksm_unmerge_pagemap_read(ctx->pagemap_fd, ctx->region + i * ctx->page_size,
				STRESS_MINIMUM(KSM_UNMERGE_PM_CHUNK, ctx->npages - i), ctx->page_size,
				ctx->pagemap) < 0)
			return -1;
		e = ctx->pagemap[i % KSM_UNMERGE_PM_CHUNK];
		if (!(e & PM_PRESENT)) {
			ctx->scan_swapped += !!(e & PM_SWAP);
			continue;
		}
		/* a shared pfn is never exclusive, so the bit does not split its group */
		ctx->pfns[n] = (e & PM_PFN_MASK) | (e & PM_EXCLUSIVE);
		if (ctx->pfns[n] > max_pfn)
			max_pfn = ctx->pfns[n];
		n++;
	}
	/* radix, not qsort: qsort was 2/3 of the stressor's user time */
	if (n > 1)
		stress_ksm_unmerge_pfn_sort(ctx->pfns, n, max_pfn);
	ctx->scan_n = n;
	return 0;
}

/*
 *  stress_ksm_unmerge_group_what()
 *	what the region pages of sorted group pfns[i..j) are; kpageflags read
 *	once per group (singles sampled if asked: then judged without it)
 */
static int stress_ksm_unmerge_group_what(stress_ksm_unmerge_ctx_t *ctx, const size_t i,
	const size_t j, const bool sample, size_t *distinct, uint64_t *flags)
{
	const uint64_t v = ctx->pfns[i];
	const uint64_t pfn = v & PM_PFN_MASK;

	*flags = 0;
	/* shared pfns are always checked; singles sampled unless verifying */
	if ((j - i > 1) || !sample || (((*distinct)++ & 7) == (ctx->cycle & 7)) ||
	    (ctx->zero_pfn && pfn == ctx->zero_pfn))
		*flags = stress_ksm_unmerge_kpageflags(ctx->kpageflags_fd, pfn);
	return stress_ksm_unmerge_what(ctx->zero_pfn, PM_PRESENT | v, *flags, j - i);
}

/*
 *  stress_ksm_unmerge_group_end()
 *	end of the run of equal pfns starting at i
 */
static inline size_t stress_ksm_unmerge_group_end(const stress_ksm_unmerge_ctx_t *ctx, const size_t i)
{
	const uint64_t pfn = ctx->pfns[i] & PM_PFN_MASK;
	size_t j = i + 1;

	while (j < ctx->scan_n && (ctx->pfns[j] & PM_PFN_MASK) == pfn)
		j++;
	return j;
}

/*
 *  stress_ksm_unmerge_region_scan()
 *	count KSM pages and KSM zero pages in the region (stress_ksm_unmerge_what:
 *	the self-tested signals), reading kpageflags once per distinct pfn
 *	(singles sampled if asked); *present counts present pages that are
 *	not the zero page
 */
static int stress_ksm_unmerge_region_scan(stress_ksm_unmerge_ctx_t *ctx,
	const bool sample, uint64_t *ksm, uint64_t *zero, size_t *present)
{
	size_t i, distinct = 0, groups = 0;

	*ksm = 0;
	*zero = 0;
	*present = 0;
	if (stress_ksm_unmerge_region_collect(ctx) < 0)
		return -1;
	for (i = 0; i < ctx->scan_n; ) {
		const size_t j = stress_ksm_unmerge_group_end(ctx, i);
		uint64_t flags;

		if (!(++groups & 4095) && stress_ksm_unmerge_stop_seen(ctx, "page scan"))
			return -1;
		switch (stress_ksm_unmerge_group_what(ctx, i, j, sample, &distinct, &flags)) {
		case KSM_PAGE_ZERO:
			/* without use_zero_pages it is a read-faulted hole, not KSM's */
			if (ctx->ksm_zero)
				*zero += j - i;
			break;
		case KSM_PAGE_KSM:
			*ksm += j - i;
			*present += j - i;
			break;
		default:
			*present += j - i;
			break;
		}
		i = j;
	}
	return 0;
}

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

/*
 *  stress_ksm_unmerge_phase_set()
 *	enter a cycle phase; racers see it and may act on it
 */
static void stress_ksm_unmerge_phase_set(stress_ksm_unmerge_ctx_t *ctx, const int phase);

/*
 *  stress_ksm_unmerge_counter_source()
 *	best source of merged-page counts: per-process counters that cover the
 *	pattern's pages, else pagemap (root), else whatever counter there is
 */
static int stress_ksm_unmerge_counter_source(const bool ksm_stat, const bool stat_has_zero,
	const bool merging_pages, const bool pfns, const bool need_zero)
{
	if (ksm_stat && (stat_has_zero || !need_zero))
		return KSM_COUNTERS_KSM_STAT;
	if (merging_pages && !need_zero)
		return KSM_COUNTERS_MERGING_PAGES;
	if (pfns)
		return KSM_COUNTERS_PAGEMAP;
	if (ksm_stat)
		return KSM_COUNTERS_KSM_STAT;
	return merging_pages ? KSM_COUNTERS_MERGING_PAGES : KSM_COUNTERS_NONE;
}

/*
 *  stress_ksm_unmerge_merged_now()
 *	pages of this process merged now (KSM pages in *merging, KSM zero pages in *zero)
 */
static uint64_t stress_ksm_unmerge_merged_now(stress_ksm_unmerge_ctx_t *ctx,
	int64_t *merging, int64_t *zero)
{
	if (ctx->counters == KSM_COUNTERS_PAGEMAP) {
		if (stress_ksm_unmerge_region_scan(ctx, false, &ctx->last_scan.ksm, &ctx->last_scan.zero,
				&ctx->last_scan.present) < 0) {
			ctx->last_scan.ksm = ctx->last_scan.zero = 0;
			ctx->last_scan.cycle = 0;
		} else {
			ctx->last_scan.cycle = ctx->cycle;
		}
		*merging = (int64_t)ctx->last_scan.ksm;
		*zero = (int64_t)ctx->last_scan.zero;
	} else {
		(void)stress_ksm_unmerge_counters(ctx, merging, zero);
	}
	return (uint64_t)(*merging > 0 ? *merging : 0) + (uint64_t)(*zero > 0 ? *zero : 0);
}

/*
 *  stress_ksm_unmerge_region_merged()
 *	counters say enough is merged: check the region itself holds it (the
 *	counters also count other mergeable memory under prctl or the
 *	sparse and thp racers)
 */
static bool stress_ksm_unmerge_region_merged(stress_ksm_unmerge_ctx_t *ctx, const uint64_t want)
{
	if (!ctx->have_pfns || ctx->counters == KSM_COUNTERS_PAGEMAP)
		return true;
	if (stress_ksm_unmerge_region_scan(ctx, false, &ctx->last_scan.ksm, &ctx->last_scan.zero,
			&ctx->last_scan.present) < 0)
		return true;
	ctx->last_scan.cycle = ctx->cycle;
	return ctx->last_scan.ksm + ctx->last_scan.zero >= want;
}

/*
 *  stress_ksm_unmerge_merge_wait()
 *	sleeping wait for ksmd to merge the prediction; 1 merged, 0 partial
 *	or timeout, -1 stopped by the end of the run
 */
static int stress_ksm_unmerge_merge_wait(stress_ksm_unmerge_ctx_t *ctx, const double bound,
	int64_t *merging, int64_t *zero)
{
	const double t0 = stress_time_now();
	const uint64_t want = ctx->expect_merged + ctx->expect_zero;
	uint64_t scans0 = stress_ksm_unmerge_full_scans(ctx);
	uint64_t stale_scans, last_total = 0, stable_scans = 0, last_scans = scans0;
	uint64_t sleep_ns = 500000;
	int64_t m0, z0;

	ctx->wait_timed_out = false;
	/* counts left from the last unmerge drain lazily: need a fresh full pass */
	(void)stress_ksm_unmerge_counters(ctx, &m0, &z0);
	stale_scans = (m0 > 0 && ctx->counters != KSM_COUNTERS_PAGEMAP) ? 2 : 0;
	for (;;) {
		uint64_t scans = stress_ksm_unmerge_full_scans(ctx), total;
		const double now = stress_time_now();

		if (stress_ksm_unmerge_ending(ctx))
			return -1;
		if (scans < scans0)
			scans0 = scans;		/* run=2 by someone else reset the count */
		ctx->last_scan.cycle = 0;	/* only a scan that ends the wait is kept */
		total = stress_ksm_unmerge_merged_now(ctx, merging, zero);
		if (scans - scans0 >= stale_scans) {
			if (want && total >= want && stress_ksm_unmerge_region_merged(ctx, want))
				return 1;
			if (scans != last_scans) {
				stable_scans = (total == last_total) ? stable_scans + 1 : 0;
				last_total = total;
				last_scans = scans;
			}
			/* nothing more will merge: unique pages or pinned pages */
			if (scans - scans0 >= 3 && (stable_scans >= 2 || !want))
				return want ? 0 : 1;
		}
		if (now - t0 > bound) {
			ctx->wait_timed_out = true;
			return 0;
		}
		(void)shim_nanosleep_uint64(sleep_ns);
		if (sleep_ns < 4000000)
			sleep_ns += sleep_ns / 2;
	}
}

/*
 *  stress_ksm_unmerge_fail()
 *	report a verification failure and count it
 */
static void stress_ksm_unmerge_fail(stress_ksm_unmerge_ctx_t *ctx)
{
	ctx->st->failures++;
}

/*
 *  stress_ksm_unmerge_verify_merge()
 *	the region really holds the predicted KSM pages and zero pages
 */
static int stress_ksm_unmerge_verify_merge(stress_ksm_unmerge_ctx_t *ctx,
	const int waited, uint64_t *ksm, uint64_t *zero)
{
	stress_args_t *args = ctx->args;
	size_t present;

	if (ctx->last_scan.cycle == ctx->cycle) {
		/* the scan that ended the merge wait: no need to read it all again */
		*ksm = ctx->last_scan.ksm;
		*zero = ctx->last_scan.zero;
		present = ctx->last_scan.present;
	} else if (stress_ksm_unmerge_region_scan(ctx, false, ksm, zero, &present) < 0) {
		return 0;	/* no PFNs (not root): counters only */
	}
	/* swapped-out pages (pagemap bit 62) are not missing */
	if (!ctx->racers_disturb_layout && present + *zero + ctx->scan_swapped != ctx->npages) {
		pr_fail("%s: %zu of %zu pages present or swapped out after merge, expected all\n",
			args->name, present + (size_t)*zero + ctx->scan_swapped, ctx->npages);
		return -1;
	}
	/*
	 * A zero-filled page that ksmd could not swap for the zero page (a
	 * raised refcount: migration, a pin) goes on to merge as an ordinary
	 * KSM page (mm/ksm.c, cmp_and_merge_page), so the zero-kind pages
	 * bound only the sum, not the KSM pages alone
	 */
	if (*zero > ctx->expect_zero || *ksm + *zero > ctx->expect_merged + ctx->expect_zero) {
		pr_fail("%s: %" PRIu64 " KSM pages and %" PRIu64 " KSM zero pages merged, "
			"pattern %s allows at most %" PRIu64 " in all, %" PRIu64 " of them zero pages\n",
			args->name, *ksm, *zero, stress_ksm_unmerge_patterns[ctx->pattern],
			ctx->expect_merged + ctx->expect_zero, ctx->expect_zero);
		return -1;
	}
	if (*ksm > ctx->expect_merged)
		pr_dbg("%s: cycle %" PRIu64 ": %" PRIu64 " zero-filled pages merged as ordinary KSM "
			"pages, not onto the zero page\n", args->name, ctx->cycle, *ksm - ctx->expect_merged);
	if (waited > 0 && !ctx->racers_disturb_counts &&
	    (*ksm < ctx->expect_merged || *ksm + *zero < ctx->expect_merged + ctx->expect_zero)) {
		pr_fail("%s: ksmd reported the merge complete but the region has %" PRIu64
			" KSM pages and %" PRIu64 " KSM zero pages, expected %" PRIu64 " and %" PRIu64 "\n",
			args->name, *ksm, *zero, ctx->expect_merged, ctx->expect_zero);
		return -1;
	}
	return 0;
}

/* A page that may still be a KSM page after the unmerge, and the signals saying so */
typedef struct {
	uint64_t pfn;
	size_t sharers;			/* region pages on it */
	bool kpf;			/* A: KPF_KSM set (trusted) */
	bool mapping;			/* B: pfn shared in the region, or not exclusive */
} stress_ksm_unmerge_suspect_t;

#define KSM_UNMERGE_SUSPECTS	(4)	/* suspects confirmed by a write, per cycle */

/*
 *  stress_ksm_unmerge_cow_probe()
 *	C: does a write (an atomic OR of 0: data unchanged) move region page
 *	i to a new frame, as a write to a KSM page must; 0 if it stayed or
 *	cannot be written (uffd-wp armed), 1 moved; *after its new pfn
 */
static int stress_ksm_unmerge_cow_probe(stress_ksm_unmerge_ctx_t *ctx, const size_t i, uint64_t *after)
{
	const uint64_t e0 = stress_ksm_unmerge_pm_entry(ctx, i);
	uint64_t e1;

	*after = 0;
	if (!(e0 & PM_PRESENT) || (e0 & PM_UFFD_WP))
		return 0;
	(void)__atomic_fetch_or((uint64_t *)(ctx->region + i * ctx->page_size), 0, __ATOMIC_SEQ_CST);
	e1 = stress_ksm_unmerge_pm_entry(ctx, i);
	*after = stress_ksm_unmerge_pm_pfn(e1);
	return *after && *after != (e0 & PM_PFN_MASK);
}

/*
 *  stress_ksm_unmerge_disagree()
 *	kernel signals disagree: say so once per run, with the numbers; not a failure
 */
static void FORMAT(printf, 2, 3) stress_ksm_unmerge_disagree(stress_ksm_unmerge_ctx_t *ctx, const char *fmt, ...)
{
	stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;
	char buf[384];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (sh && !__atomic_exchange_n(&sh->disagree_reported, true, __ATOMIC_SEQ_CST))
		pr_inf("%s: signals disagree (cycle %" PRIu64 "): %s; not counted as an unmerge failure\n",
			ctx->args->name, ctx->cycle, buf);
	else
		pr_dbg("%s: signals disagree (cycle %" PRIu64 "): %s\n", ctx->args->name, ctx->cycle, buf);
}

/*
 *  stress_ksm_unmerge_suspects_judge()
 *	a suspect is still a KSM page only if two of its signals agree
 *	(A: KPF_KSM, B: pfn sharing or exclusive bit, C: a write moves it;
 *	B by the exclusive bit alone with C only where KPF_KSM lies)
 */
static int stress_ksm_unmerge_suspects_judge(stress_ksm_unmerge_ctx_t *ctx,
	const stress_ksm_unmerge_suspect_t *sus, const size_t nsus, const uint64_t total,
	const uint64_t kpf_pages, const uint64_t ksm_before, const int64_t cow_delta)
{
	size_t k, first = ctx->npages, second;
	int64_t merging = -1, zero = -1;
	uint64_t after = 0;

	for (k = 0; k < nsus && k < KSM_UNMERGE_SUSPECTS; k++) {
		const stress_ksm_unmerge_suspect_t *s = &sus[k];
		int moved;

		stress_ksm_unmerge_pfn_pages(ctx, s->pfn, &first, &second);
		if (first >= ctx->npages)
			continue;	/* gone since the scan */
		moved = (s->kpf && s->mapping) ? 1 : stress_ksm_unmerge_cow_probe(ctx, first, &after);
		/*
		 * a write also moves a page a fork child shares (not exclusive):
		 * that with C alone counts only where KPF_KSM cannot be asked
		 */
		if ((s->kpf && s->mapping) ||
		    (moved && (s->kpf || s->sharers > 1 || !stress_ksm_unmerge_iface_cur ||
			       !stress_ksm_unmerge_iface_cur->kpf_ksm))) {
			pr_fail("%s: page %zu is still a KSM page after unmerge: pfn %#" PRIx64 " mapped by %zu "
				"region page(s)%s, KPF_KSM %s%s (%" PRIu64 " such pages)\n", ctx->args->name,
				first, s->pfn, s->sharers, s->mapping ? " and not exclusive" : "",
				s->kpf ? "set" : "clear or not trusted",
				(moved && !(s->kpf && s->mapping)) ? "; a write moved it to a new frame" : "", total);
			if (s->sharers > 1)
				pr_fail("%s: page %zu still shares pfn %#" PRIx64 " with page %zu after unmerge\n",
					ctx->args->name, second, s->pfn, first);
			return -1;
		}
	}
	(void)stress_ksm_unmerge_counters(ctx, &merging, &zero);
	stress_ksm_unmerge_disagree(ctx, "kpageflags says %" PRIu64 " KSM pages, %" PRIu64 " pages are "
		"flagged by one signal only, ksm_merging_pages says %" PRId64 " (drains lazily), cow_ksm moved "
		"by %" PRId64 " for %" PRIu64 " merged, and a write kept page %zu in its frame",
		kpf_pages, total, merging, cow_delta, ksm_before, first);
	return 0;
}

/*
 *  stress_ksm_unmerge_verify_pfns()
 *	after unmerge: no KSM page (by two agreeing signals, see
 *	suspects_judge) and, where unmerge unshares them (6.4+), no KSM zero page
 */
static int stress_ksm_unmerge_verify_pfns(stress_ksm_unmerge_ctx_t *ctx, const uint64_t ksm_before,
	const int64_t cow_delta)
{
	const stress_ksm_unmerge_iface_t *ifc = stress_ksm_unmerge_iface_cur ?
		stress_ksm_unmerge_iface_cur : &stress_ksm_unmerge_iface_default;
	stress_ksm_unmerge_suspect_t sus[KSM_UNMERGE_SUSPECTS];
	uint64_t zero = 0, total = 0, kpf_pages = 0, zero_pfn = 0;
	size_t i, nsus = 0, distinct = 0;

	if (stress_ksm_unmerge_region_collect(ctx) < 0)
		return 0;
	for (i = 0; i < ctx->scan_n; ) {
		const size_t j = stress_ksm_unmerge_group_end(ctx, i);
		uint64_t flags;
		const int what = stress_ksm_unmerge_group_what(ctx, i, j, !ctx->verify, &distinct, &flags);
		const bool kpf = ifc->kpf_ksm && (flags & STRESS_BIT_ULL(KPF_BIT_KSM));
		const bool mapping = (j - i > 1) || (ifc->excl && !(ctx->pfns[i] & PM_EXCLUSIVE));

		if (what == KSM_PAGE_ZERO) {
			if (ctx->ksm_zero) {
				zero += j - i;
				zero_pfn = ctx->pfns[i] & PM_PFN_MASK;
			}
		} else if (kpf || mapping) {
			if (nsus < KSM_UNMERGE_SUSPECTS)
				sus[nsus++] = (stress_ksm_unmerge_suspect_t){ ctx->pfns[i] & PM_PFN_MASK, j - i, kpf, mapping };
			total += j - i;
		}
		kpf_pages += (flags & STRESS_BIT_ULL(KPF_BIT_KSM)) ? j - i : 0;
		i = j;
	}
	if (zero && ifc->zero_unshare) {
		size_t first, second;

		stress_ksm_unmerge_pfn_pages(ctx, zero_pfn, &first, &second);
		pr_fail("%s: page %zu still maps the KSM zero page after unmerge (%" PRIu64 " such pages)\n",
			ctx->args->name, first, zero);
		return -1;
	}
	if (zero)
		pr_dbg("%s: %" PRIu64 " KSM zero pages still mapped after unmerge: kept by design before 6.4\n",
			ctx->args->name, zero);
	if (!nsus)
		return 0;
	return stress_ksm_unmerge_suspects_judge(ctx, sus, nsus, total, kpf_pages, ksm_before, cow_delta);
}

/*
 *  stress_ksm_unmerge_verify_data()
 *	every page (or a rotating 1/16 without --verify) holds its bytes
 */
static int stress_ksm_unmerge_verify_data(stress_ksm_unmerge_ctx_t *ctx)
{
	const size_t step = ctx->verify ? 1 : 16;
	size_t i;

	for (i = (size_t)(ctx->cycle % step); i < ctx->npages; i += step) {
		const uint8_t *page = ctx->region + i * ctx->page_size;
		ssize_t off;

		if (!(i & (KSM_UNMERGE_FILL_PAGES - 1)) && stress_ksm_unmerge_stop_seen(ctx, "data check"))
			return 0;
		off = stress_ksm_unmerge_page_check(ctx, i, page);
		if (off >= 0) {
			pr_fail("%s: data corrupted after unmerge: page %zu byte %zd is 0x%02x "
				"(pattern %s)\n", ctx->args->name, i, off, page[off],
				stress_ksm_unmerge_patterns[ctx->pattern]);
			return -1;
		}
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_verify_unmerge()
 *	pages really unshared, data intact, VMA flags kept, cow_ksm counted
 */
static int stress_ksm_unmerge_verify_unmerge(stress_ksm_unmerge_ctx_t *ctx,
	const uint64_t ksm_before, const int64_t cow_delta)
{
	stress_args_t *args = ctx->args;
	int64_t merging, zero;
	char vmflags[256];

	if (stress_ksm_unmerge_verify_pfns(ctx, ksm_before, cow_delta) < 0)
		return -1;
	if (stress_ksm_unmerge_verify_data(ctx) < 0)
		return -1;
	if ((stress_ksm_unmerge_counters(ctx, &merging, &zero) == 0) && (zero > 0) && ctx->ksm_zero &&
	    ctx->iface && ctx->iface->zero_unshare) {
		/* the region's pages were checked above: a count alone is not a failure */
		if (ctx->have_pfns) {
			stress_ksm_unmerge_disagree(ctx, "ksm_zero_pages is %" PRId64 " right after unmerge, "
				"but no region page maps the zero page", zero);
		} else {
			pr_fail("%s: ksm_zero_pages is %" PRId64 " right after unmerge, expected 0\n",
				args->name, zero);
			return -1;
		}
	}
	if (!ctx->racers_disturb_layout && ctx->vmflags_before[0] &&
	    (ctx->verify || (ctx->cycle & 7) == 0) &&
	    (stress_ksm_unmerge_vmflags(ctx->region, vmflags, sizeof(vmflags)) == 0) &&
	    strcmp(vmflags, ctx->vmflags_before)) {
		pr_fail("%s: VMA flags changed by merge/unmerge: before '%s', after '%s'\n",
			args->name, ctx->vmflags_before, vmflags);
		return -1;
	}
	if (!ctx->racers_disturb_layout && cow_delta >= 0 && (uint64_t)cow_delta < ksm_before &&
	    ctx->iface && ctx->iface->cow_ksm) {
		/* pages verified private above: a short count is a disagreement, not a failure */
		if (ctx->have_pfns) {
			stress_ksm_unmerge_disagree(ctx, "cow_ksm grew by %" PRId64 " during the unmerge of %"
				PRIu64 " KSM pages, but every region page is private", cow_delta, ksm_before);
		} else {
			pr_fail("%s: cow_ksm grew by %" PRId64 " during unmerge of %" PRIu64 " KSM pages\n",
				args->name, cow_delta, ksm_before);
			return -1;
		}
	}
	return 0;
}

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
 *  stress_ksm_unmerge_racer_merged_op_begins()
 *	racer thread: it is about to pin or splice pages of this cycle's
 *	merged region (releases the merged phase's wait for it)
 */
static inline void stress_ksm_unmerge_racer_merged_op_begins(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	if (ctx->phase == KSM_PHASE_MERGED)
		ctx->run[idx].merged_op_cycle = ctx->cycle;
}

/*
 *  stress_ksm_unmerge_racer_wants_merged()
 *	racer thread: has it yet to begin an op in this cycle's merged phase
 */
static inline bool stress_ksm_unmerge_racer_wants_merged(const stress_ksm_unmerge_ctx_t *ctx,
	const size_t idx)
{
	return ctx->phase == KSM_PHASE_MERGED && ctx->run[idx].merged_op_cycle != ctx->cycle;
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
			ctx->args->name, stress_ksm_unmerge_racer_name(idx), ret, strerror(ret));
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
			stress_ksm_unmerge_racer_name(idx), what, ret, strerror(ret));
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

#include "stress-ksm-unmerge-racer-common.h"
#include "stress-ksm-unmerge-racer-dontneed.h"
#include "stress-ksm-unmerge-racer-vmsplice.h"
#include "stress-ksm-unmerge-racer-gup.h"
#include "stress-ksm-unmerge-racer-uffd-wp.h"
#include "stress-ksm-unmerge-racer-thp.h"
#include "stress-ksm-unmerge-racer-mrelease.h"
#include "stress-ksm-unmerge-racer-fork.h"
#include "stress-ksm-unmerge-racer-mprotect.h"
#include "stress-ksm-unmerge-racer-sparse.h"
#include "stress-ksm-unmerge-racer-signal.h"
#include "stress-ksm-unmerge-racer-mremap.h"
#include "stress-ksm-unmerge-racer-uffd-minor.h"
#include "stress-ksm-unmerge-racer-prctl-exec.h"

/*
 *  The racer table: the only list of racers.  A racer is added by writing
 *  its stress-ksm-unmerge-racer-<name>.h (ending with its KSM_RACER_<NAME>
 *  entry, or a "not built" entry when its feature guard is off), an index
 *  above and one line here.
 */
static const stress_ksm_unmerge_racer_t stress_ksm_unmerge_racers[KSM_UNMERGE_RACERS] = {
	[KSM_RACER_IDX_VMSPLICE]	= KSM_RACER_VMSPLICE,
	[KSM_RACER_IDX_GUP]		= KSM_RACER_GUP,
	[KSM_RACER_IDX_UFFD_WP]		= KSM_RACER_UFFD_WP,
	[KSM_RACER_IDX_MRELEASE]	= KSM_RACER_MRELEASE,
	[KSM_RACER_IDX_FORK]		= KSM_RACER_FORK,
	[KSM_RACER_IDX_MPROTECT]	= KSM_RACER_MPROTECT,
	[KSM_RACER_IDX_DONTNEED]	= KSM_RACER_DONTNEED,
	[KSM_RACER_IDX_SPARSE]		= KSM_RACER_SPARSE,
	[KSM_RACER_IDX_THP]		= KSM_RACER_THP,
	[KSM_RACER_IDX_SIGNAL]		= KSM_RACER_SIGNAL,
	[KSM_RACER_IDX_MREMAP]		= KSM_RACER_MREMAP,
	[KSM_RACER_IDX_UFFD_MINOR]	= KSM_RACER_UFFD_MINOR,
	[KSM_RACER_IDX_PRCTL_EXEC]	= KSM_RACER_PRCTL_EXEC,
};

/*
 *  stress_ksm_unmerge_racer_name()
 *	method and report name of racer idx
 */
static const char *stress_ksm_unmerge_racer_name(const size_t idx)
{
	return stress_ksm_unmerge_racers[idx].name;
}

/*
 *  stress_ksm_unmerge_racers_list()
 *	--ksm-unmerge-method which: one line per racer of the table, "name
 *	evidence-name built" or "name evidence-name not built: reason"
 */
static void stress_ksm_unmerge_racers_list(void)
{
	size_t i;

	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		const stress_ksm_unmerge_racer_t *r = &stress_ksm_unmerge_racers[i];

		(void)printf("%s %s %s%s\n", r->name, r->evidence, r->not_built ? "not built: " : "built",
			r->not_built ? r->not_built : "");
	}
	(void)fflush(stdout);
}

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
		if (r->not_built)
			(void)snprintf(rs->reason, sizeof(rs->reason), "not built: %s", r->not_built);
		if (r->not_built || r->supported(rs->reason, sizeof(rs->reason)) < 0 || !r->start) {
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

		if (!(ctx->racers_mask & STRESS_BIT_ULL(i)) || !run->merged_phase_waits || !run->thread_running)
			continue;
		while (run->merged_op_cycle != ctx->cycle && !run->thread_done && stress_continue(ctx->args)) {
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
					ctx->args->name, stress_ksm_unmerge_racer_name(i));
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
 *  stress_ksm_unmerge_cycle_account()
 *	add one cycle's merged, unmerged and cow_ksm figures to the instance's
 */
static void stress_ksm_unmerge_cycle_account(stress_ksm_unmerge_instance_t *st, const uint64_t ksm,
	const uint64_t kzero, const double dt, const int64_t cow0, const int64_t cow1)
{
	st->pages_merged += ksm + kzero;
	st->pages_zero += kzero;
	if (ksm + kzero) {
		st->pages_unmerged += ksm + kzero;
		st->unmerge_secs += dt;
		stress_ksm_unmerge_lat_add(&st->unmerge_lat, dt * 1000.0);
	}
	if (cow0 >= 0 && cow1 >= cow0)
		st->cow_ksm += (uint64_t)(cow1 - cow0);
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

	stress_ksm_unmerge_cycle_account(st, ksm, kzero, dt, cow0, cow1);
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

/*
 *  stress_ksm_unmerge_avail()
 *	MemAvailable as the parent read it before any instance filled its
 *	region (every instance caps with the same figure)
 */
static uint64_t stress_ksm_unmerge_avail(void)
{
	const stress_ksm_unmerge_shared_t *sh = stress_ksm_unmerge_shared;

	return (sh && sh->mem_avail) ? sh->mem_avail : stress_ksm_unmerge_meminfo_available();
}

/*
 *  stress_ksm_unmerge_cgroup_max()
 *	room left under memory.max of cgroup v2 directory dir (bytes, in
 *	*room); false if it has no limit or cannot be read
 */
static bool stress_ksm_unmerge_cgroup_max(const char *dir, uint64_t *room)
{
	char path[PATH_MAX + 32], val[32];
	uint64_t max, cur;
	ssize_t n;

	(void)snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", dir);
	n = stress_fs_file_read(path, val, sizeof(val) - 1);
	if (n <= 0)
		return false;
	val[n] = '\0';
	if (val[0] < '0' || val[0] > '9')	/* "max": no limit */
		return false;
	max = strtoull(val, NULL, 10);
	(void)snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.current", dir);
	n = stress_fs_file_read(path, val, sizeof(val) - 1);
	val[n > 0 ? n : 0] = '\0';
	cur = (n > 0) ? strtoull(val, NULL, 10) : 0;
	*room = (max > cur) ? max - cur : 0;
	return true;
}

/*
 *  stress_ksm_unmerge_cgroup_room()
 *	bytes this process's cgroup v2 and its ancestors can still charge
 *	before the tightest memory.max; false if none is limited (or no v2)
 */
static bool stress_ksm_unmerge_cgroup_room(uint64_t *room)
{
	char buf[4096], dir[PATH_MAX];
	char *p, *slash;
	uint64_t r, best = 0;
	bool found = false;
	ssize_t n;

	n = stress_fs_file_read("/proc/self/cgroup", buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (!strncmp(buf, "0::", 3)) {
		p = buf + 3;
	} else {
		p = strstr(buf, "\n0::");
		if (!p)
			return false;
		p += 4;
	}
	(void)strlcpy(dir, p, sizeof(dir));
	dir[strcspn(dir, "\n")] = '\0';
	for (;;) {
		if (stress_ksm_unmerge_cgroup_max(dir, &r) && (!found || r < best)) {
			best = r;
			found = true;
		}
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
	}
	*room = best;
	return found;
}

/*
 *  stress_ksm_unmerge_cap()
 *	largest total region that fits in limit bytes with what each instance
 *	keeps besides it: per region page the pfn array and the uffd-wp,
 *	mprotect and dontneed racers' state, a second copy of every page for
 *	the mrelease victims, and a few MB per racer (thp: its THPs)
 */
static uint64_t stress_ksm_unmerge_cap(const uint64_t limit, stress_args_t *args, const uint64_t methods)
{
	uint64_t extra = sizeof(uint64_t), fixed = 0, copies = 1;
	size_t i;

	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		const stress_ksm_unmerge_racer_t *r = &stress_ksm_unmerge_racers[i];

		if (!(methods & STRESS_BIT_ULL(KSM_UNMERGE_RACER_SHIFT + i)))
			continue;
		fixed += r->fixed_bytes ? r->fixed_bytes : KSM_RACER_FIXED_BYTES;
		extra += r->page_bytes;
		if (r->page_copy)
			copies = 2;
	}
	fixed *= args->instances;
	if (limit <= fixed)
		return 0;
	return (limit - fixed) / (copies * args->page_size + extra) * args->page_size;
}

/*
 *  stress_ksm_unmerge_page_copies()
 *	does a requested racer keep a second copy of every region page
 */
static bool stress_ksm_unmerge_page_copies(const uint64_t methods)
{
	size_t i;

	for (i = 0; i < KSM_UNMERGE_RACERS; i++)
		if ((methods & STRESS_BIT_ULL(KSM_UNMERGE_RACER_SHIFT + i)) &&
		    stress_ksm_unmerge_racers[i].page_copy)
			return true;
	return false;
}

/*
 *  stress_ksm_unmerge_region_size()
 *	this instance's share of --ksm-unmerge-bytes, capped so region, copies
 *	and racers fit in half of MemAvailable or of the cgroup's memory.max room
 */
static size_t stress_ksm_unmerge_region_size(stress_args_t *args, const uint64_t methods, size_t *total)
{
	size_t bytes = DEFAULT_KSM_UNMERGE_BYTES;
	uint64_t avail = stress_ksm_unmerge_avail();
	uint64_t room = 0, cap;
	const char *what = "MemAvailable";
	size_t per;

	if (!stress_setting_get("ksm-unmerge-bytes", &bytes)) {
		if (g_opt_flags & OPT_FLAGS_MAXIMIZE)
			bytes = 1 * GB;
		if (g_opt_flags & OPT_FLAGS_MINIMIZE)
			bytes = MIN_KSM_UNMERGE_BYTES * args->instances;
	}
	if (stress_ksm_unmerge_cgroup_room(&room) && (!avail || room < avail)) {
		avail = room;
		what = "the cgroup's memory.max room";
	}
	/* leave headroom: racers and unmerged copies need memory too */
	cap = stress_ksm_unmerge_cap(avail / 2, args, methods);
	if (avail && bytes > cap) {
		if (stress_instance_zero(args))
			pr_inf("%s: capping %zu bytes to %" PRIu64 " bytes: half of %s (%" PRIu64
				" bytes) less the racers' and verification memory%s\n", args->name, bytes, cap,
				what, avail, stress_ksm_unmerge_page_copies(methods) ?
				", halved for the mrelease victims' copies" : "");
		bytes = (size_t)cap;
	}
	per = bytes / args->instances;
	per &= ~(args->page_size - 1);
	if (per < MIN_KSM_UNMERGE_BYTES)
		per = MIN_KSM_UNMERGE_BYTES;
	*total = per * args->instances;
	return per;
}

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
	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		const stress_ksm_unmerge_racer_stats_t *rs = &st->racer[i];

		if (stress_ksm_unmerge_racers[i].op_ns_metric && rs->active && rs->ops && rs->op_ns)
			stress_metrics_set(args, stress_ksm_unmerge_racers[i].op_ns_metric,
				(double)rs->op_ns / (double)rs->ops, STRESS_METRIC_HARMONIC_MEAN);
	}
	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		char desc[64];

		if (!st->racer[i].active || !st->racer[i].ops || duration <= 0.0)
			continue;
		(void)snprintf(desc, sizeof(desc), "%s ops per sec", stress_ksm_unmerge_racer_name(i));
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
				stress_ksm_unmerge_racer_name(i), rs->failures);
			rc = EXIT_FAILURE;
		} else if (!rs->evidence && ctx->verify && st->cycles) {
			pr_fail("%s: racer %s ran %" PRIu64 " ops but never reached its path (%s): "
				"degenerate run\n", args->name, stress_ksm_unmerge_racer_name(i),
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

/* Spread of a latency sample set */
typedef struct {
	uint64_t n;
	double p50, p95, p99, mean, stdev;
} stress_ksm_unmerge_spread_t;

/*
 *  stress_ksm_unmerge_double_cmp()
 *	qsort comparator for doubles
 */
static int stress_ksm_unmerge_double_cmp(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 *  stress_ksm_unmerge_spread()
 *	p50/p95/p99 (nearest rank), mean and population stdev of v[0..n-1]; sorts v
 */
static void stress_ksm_unmerge_spread(double *v, const size_t n, stress_ksm_unmerge_spread_t *s)
{
	double sum = 0.0, sq = 0.0;
	size_t i;

	(void)memset(s, 0, sizeof(*s));
	if (!n)
		return;
	qsort(v, n, sizeof(*v), stress_ksm_unmerge_double_cmp);
	for (i = 0; i < n; i++)
		sum += v[i];
	s->n = n;
	s->mean = sum / (double)n;
	for (i = 0; i < n; i++)
		sq += (v[i] - s->mean) * (v[i] - s->mean);
	s->stdev = sqrt(sq / (double)n);
	s->p50 = v[(size_t)ceil(0.50 * (double)n) - 1];
	s->p95 = v[(size_t)ceil(0.95 * (double)n) - 1];
	s->p99 = v[(size_t)ceil(0.99 * (double)n) - 1];
}

/*
 *  stress_ksm_unmerge_lat_spread()
 *	spread of one latency ring (at offset off in the instance) over all instances
 */
static void stress_ksm_unmerge_lat_spread(const stress_ksm_unmerge_shared_t *sh,
	const size_t off, stress_ksm_unmerge_spread_t *s)
{
	size_t n = 0, i;
	double *v;

	(void)memset(s, 0, sizeof(*s));
	for (i = 0; i < sh->instances; i++)
		n += ((const stress_ksm_unmerge_lat_t *)((const char *)&sh->inst[i] + off))->count;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return;
	for (n = 0, i = 0; i < sh->instances; i++) {
		const stress_ksm_unmerge_lat_t *lat =
			(const stress_ksm_unmerge_lat_t *)((const char *)&sh->inst[i] + off);

		(void)memcpy(v + n, lat->ms, lat->count * sizeof(*v));
		n += lat->count;
	}
	stress_ksm_unmerge_spread(v, n, s);
	free(v);
}

/*
 *  stress_ksm_unmerge_racer_total()
 *	one racer's figures summed over instances
 */
static void stress_ksm_unmerge_racer_total(const stress_ksm_unmerge_shared_t *sh, const size_t idx,
	stress_ksm_unmerge_racer_stats_t *t)
{
	uint32_t i, j;

	(void)memset(t, 0, sizeof(*t));
	for (i = 0; i < sh->instances; i++) {
		const stress_ksm_unmerge_racer_stats_t *r = &sh->inst[i].racer[idx];

		t->ops += r->ops;
		t->evidence += r->evidence;
		t->failures += r->failures;
		t->op_ns += r->op_ns;
		t->ksmd_waits_timed_out += r->ksmd_waits_timed_out;
		t->meet_timeouts += r->meet_timeouts;
		for (j = 0; j < KSM_RACER_DETAILS; j++)
			t->detail[j] += r->detail[j];
		t->active |= r->active;
		t->skipped |= r->skipped;
		if (!t->reason[0] && r->reason[0])
			(void)strlcpy(t->reason, r->reason, sizeof(t->reason));
	}
}

/*
 *  stress_ksm_unmerge_fields()
 *	number of whitespace separated fields in str
 */
static int stress_ksm_unmerge_fields(const char *str)
{
	bool in_field = false;
	int fields = 0;

	for (; *str; str++) {
		const bool space = (*str == ' ' || *str == '\t' || *str == '\n');

		if (!space && !in_field)
			fields++;
		in_field = !space;
	}
	return fields;
}

/*
 *  stress_ksm_unmerge_pr_report()
 *	pr_inf a report line, kept out of the 10 and 12 field shapes that
 *	LKP's stress-ng parser takes for metrics rows
 */
static void FORMAT(printf, 1, 2) stress_ksm_unmerge_pr_report(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int fields;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* 3 fields of prefix ("stress-ng: info:  [pid]") and "ksm-unmerge:" */
	fields = 4 + stress_ksm_unmerge_fields(buf);
	if (fields == 10 || fields == 12)
		pr_inf("ksm-unmerge: %s -\n", buf);
	else
		pr_inf("ksm-unmerge: %s\n", buf);
}

/*
 *  stress_ksm_unmerge_racer_details_str()
 *	racer idx's named counters: ",name=N,..." for its report line or,
 *	yaml set, "name: N, ..." for its YAML entry; "" if it has none
 */
static void stress_ksm_unmerge_racer_details_str(const size_t idx, const stress_ksm_unmerge_racer_stats_t *t,
	char *buf, const size_t len, const bool yaml)
{
	size_t j, off = 0;

	buf[0] = '\0';
	for (j = 0; j < KSM_RACER_DETAILS && off < len; j++) {
		const char *name = stress_ksm_unmerge_racers[idx].details[j];

		if (!name)
			continue;
		if (yaml)
			off += (size_t)snprintf(buf + off, len - off, "%s%s: %" PRIu64,
				off ? ", " : "", name, t->detail[j]);
		else
			off += (size_t)snprintf(buf + off, len - off, ",%s=%" PRIu64, name, t->detail[j]);
	}
}

/*
 *  stress_ksm_unmerge_totals()
 *	instance figures summed over all instances
 */
static void stress_ksm_unmerge_totals(const stress_ksm_unmerge_shared_t *sh,
	stress_ksm_unmerge_instance_t *t)
{
	uint32_t i;

	(void)memset(t, 0, offsetof(stress_ksm_unmerge_instance_t, unmerge_lat));
	for (i = 0; i < sh->instances; i++) {
		const stress_ksm_unmerge_instance_t *st = &sh->inst[i];

		t->cycles += st->cycles;
		t->merge_timeouts += st->merge_timeouts;
		t->partial_merges += st->partial_merges;
		t->pages_merged += st->pages_merged;
		t->pages_zero += st->pages_zero;
		t->pages_unmerged += st->pages_unmerged;
		t->cow_ksm += st->cow_ksm;
		t->failures += st->failures;
		t->method_cycles[0] += st->method_cycles[0];
		t->method_cycles[1] += st->method_cycles[1];
	}
}

/*
 *  stress_ksm_unmerge_report()
 *	parent: totals, per racer reached/NOT reached lines, latency spreads
 */
static void stress_ksm_unmerge_report(const stress_ksm_unmerge_shared_t *sh)
{
	stress_ksm_unmerge_spread_t s;
	stress_ksm_unmerge_instance_t *t;
	size_t i;

	t = calloc(1, sizeof(*t));
	if (t) {
		stress_ksm_unmerge_totals(sh, t);
		stress_ksm_unmerge_pr_report("totals: cycles=%" PRIu64 ",madvise-cycles=%" PRIu64
			",prctl-cycles=%" PRIu64 ",pages-merged=%" PRIu64 ",zero-pages=%" PRIu64
			",pages-unmerged=%" PRIu64 ",cow-ksm-delta=%" PRIu64 ",merge-timeouts=%" PRIu64
			",partial-merges=%" PRIu64 ",failures=%" PRIu64,
			t->cycles, t->method_cycles[0], t->method_cycles[1], t->pages_merged,
			t->pages_zero, t->pages_unmerged, t->cow_ksm, t->merge_timeouts,
			t->partial_merges, t->failures);
		free(t);
	}

	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		stress_ksm_unmerge_racer_stats_t t;
		char details[192];

		if (!(sh->methods & STRESS_BIT_ULL(KSM_UNMERGE_RACER_SHIFT + i)))
			continue;
		stress_ksm_unmerge_racer_total(sh, i, &t);
		stress_ksm_unmerge_racer_details_str(i, &t, details, sizeof(details), false);
		if (t.active && t.evidence && t.meet_timeouts)
			stress_ksm_unmerge_pr_report("racer %s reached: ops=%" PRIu64 " %s=%" PRIu64
				",merged-phase-timeouts=%" PRIu64 "%s", stress_ksm_unmerge_racer_name(i), t.ops,
				stress_ksm_unmerge_racers[i].evidence, t.evidence, t.meet_timeouts, details);
		else if (t.active && t.evidence)
			stress_ksm_unmerge_pr_report("racer %s reached: ops=%" PRIu64 " %s=%" PRIu64 "%s",
				stress_ksm_unmerge_racer_name(i), t.ops,
				stress_ksm_unmerge_racers[i].evidence, t.evidence, details);
		else if (t.active)
			stress_ksm_unmerge_pr_report("racer %s NOT reached: ops=%" PRIu64 " %s=0%s (%s)",
				stress_ksm_unmerge_racer_name(i), t.ops,
				stress_ksm_unmerge_racers[i].evidence, details,
				t.reason[0] ? t.reason : "path never met a KSM page");
		else
			stress_ksm_unmerge_pr_report("racer %s skipped: %s", stress_ksm_unmerge_racer_name(i),
				t.reason[0] ? t.reason : "not started");
	}
	stress_ksm_unmerge_lat_spread(sh, offsetof(stress_ksm_unmerge_instance_t, unmerge_lat), &s);
	if (s.n)
		stress_ksm_unmerge_pr_report("unmerge millisecs per cycle: p50=%.3f p95=%.3f p99=%.3f "
			"mean=%.3f stdev=%.3f samples=%" PRIu64,
			s.p50, s.p95, s.p99, s.mean, s.stdev, s.n);
	stress_ksm_unmerge_lat_spread(sh, offsetof(stress_ksm_unmerge_instance_t, mrelease_lat), &s);
	if (s.n)
		stress_ksm_unmerge_pr_report("mrelease kill-to-reaped millisecs: p50=%.3f p95=%.3f p99=%.3f "
			"mean=%.3f stdev=%.3f samples=%" PRIu64,
			s.p50, s.p95, s.p99, s.mean, s.stdev, s.n);
}

/*
 *  The monitor: a process forked by the parent's init, independent of the
 *  instances, so a stuck instance cannot silence it.  It prints progress
 *  lines, appends the soak log, watches for stuck steps (hangs) and, with
 *  --ksm-unmerge-stop-on-warn, stops the run at the first warning or hang.
 */

/*
 *  stress_ksm_unmerge_proc_text()
 *	first len-1 bytes of /proc/<pid>/<name>, newlines turned into "; "
 */
static void stress_ksm_unmerge_proc_text(const pid_t pid, const char *name, char *buf, const size_t len)
{
	char path[64];
	ssize_t n;
	char *p;

	(void)snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	n = stress_fs_file_read(path, buf, len - 1);
	if (n <= 0) {
		(void)snprintf(buf, len, "unreadable (%s)", strerror(n < 0 ? errno : ENODATA));
		return;
	}
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	for (p = buf; *p; p++)
		if (*p == '\n')
			*p = '|';
}

/*
 *  stress_ksm_unmerge_status_kb()
 *	a KiB field of /proc/pid/status ("VmRSS:", "VmHWM:"), 0 if unknown
 */
static uint64_t stress_ksm_unmerge_status_kb(const pid_t pid, const char *field)
{
	char path[64], buf[2048];
	const char *p;
	ssize_t n;

	(void)snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	n = stress_fs_file_read(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, field);
	return p ? strtoull(p + strlen(field), NULL, 10) : 0;
}

/* Soak log documents not yet in the file (monitor process) */
typedef struct {
	int fd;				/* the log, -1 if none */
	char *buf;			/* unwritten documents, oldest first */
	size_t len;			/* bytes of them */
	uint32_t docs;			/* intervals among them */
} stress_ksm_unmerge_log_t;

#define KSM_UNMERGE_LOG_BACKLOG		(1 * MB)	/* unwritten documents kept for retries */

/*
 *  stress_ksm_unmerge_log_open()
 *	open the soak log for appending, -1 if none or on error
 */
static int stress_ksm_unmerge_log_open(const stress_ksm_unmerge_shared_t *sh)
{
	int fd;

	if (!sh->log_path[0])
		return -1;
	fd = open(sh->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		pr_err("ksm-unmerge: cannot open soak log %s, errno=%d (%s); every interval "
			"is lost and the run fails\n", sh->log_path, errno, strerror(errno));
	return fd;
}

/*
 *  stress_ksm_unmerge_log_flush()
 *	write and fsync every unwritten document; a failed attempt is cut
 *	off the file again (no half document) and kept for the next retry
 */
static bool stress_ksm_unmerge_log_flush(stress_ksm_unmerge_shared_t *sh, stress_ksm_unmerge_log_t *lg)
{
	off_t end;
	ssize_t n;
	int err;

	if (!lg->docs)
		return true;
	if (lg->fd < 0) {
		err = EBADF;
	} else {
		end = lseek(lg->fd, 0, SEEK_END);
		n = write(lg->fd, lg->buf, lg->len);
		/* special files (/dev/null) cannot be synced: EINVAL */
		if (n == (ssize_t)lg->len && (fsync(lg->fd) == 0 || errno == EINVAL)) {
			if (sh->log_errno)
				pr_inf("ksm-unmerge: soak log %s: %" PRIu32 " delayed interval(s) written\n",
					sh->log_path, lg->docs);
			sh->log_written += lg->docs;
			sh->log_pending = 0;
			sh->log_errno = 0;
			lg->docs = 0;
			lg->len = 0;
			return true;
		}
		err = (n >= 0 && n < (ssize_t)lg->len) ? ENOSPC : errno;
		if (n > 0 && end >= 0)
			(void)ftruncate(lg->fd, end);
	}
	if (sh->log_errno != err || sh->log_pending != lg->docs)
		pr_err("ksm-unmerge: soak log %s: %" PRIu32 " interval(s) not written, errno=%d (%s); "
			"retrying at the next interval\n", sh->log_path, lg->docs, err, strerror(err));
	sh->log_errno = err;
	sh->log_pending = lg->docs;
	return false;
}

/*
 *  stress_ksm_unmerge_log_write()
 *	queue one document behind the unwritten ones and try to write them all
 */
static void stress_ksm_unmerge_log_write(stress_ksm_unmerge_shared_t *sh, stress_ksm_unmerge_log_t *lg,
	const char *doc, const size_t len)
{
	if (!sh->log_path[0] || !lg->buf)
		return;
	if (lg->len + len > KSM_UNMERGE_LOG_BACKLOG) {
		/* retries failed for too long: the oldest intervals are lost */
		sh->log_lost += lg->docs;
		lg->docs = 0;
		lg->len = 0;
	}
	if (len > KSM_UNMERGE_LOG_BACKLOG) {
		sh->log_lost++;
		return;
	}
	(void)memcpy(lg->buf + lg->len, doc, len);
	lg->len += len;
	lg->docs++;
	(void)stress_ksm_unmerge_log_flush(sh, lg);
}

/*
 *  stress_ksm_unmerge_racers_reached()
 *	racers with evidence and racers started, over all instances
 */
static void stress_ksm_unmerge_racers_reached(const stress_ksm_unmerge_shared_t *sh,
	uint32_t *reached, uint32_t *active)
{
	size_t i;

	*reached = 0;
	*active = 0;
	for (i = 0; i < KSM_UNMERGE_RACERS; i++) {
		stress_ksm_unmerge_racer_stats_t t;

		stress_ksm_unmerge_racer_total(sh, i, &t);
		*active += t.active;
		*reached += (t.active && t.evidence);
	}
}

/*
 *  stress_ksm_unmerge_unmerge_rate()
 *	MiB/s of unmerging over all instances so far, 0 if none
 */
static double stress_ksm_unmerge_unmerge_rate(const stress_ksm_unmerge_shared_t *sh)
{
	double secs = 0.0, pages = 0.0;
	uint32_t i;

	for (i = 0; i < sh->instances; i++) {
		secs += sh->inst[i].unmerge_secs;
		pages += (double)sh->inst[i].pages_unmerged;
	}
	return secs > 0.0 ? pages * (double)getpagesize() / (double)MB / secs : 0.0;
}

/*
 *  stress_ksm_unmerge_stop_latency()
 *	timed runs whose instances all returned: secs from the timeout to the
 *	last return (negative: big regions are freed ahead of it); false if none
 */
static bool stress_ksm_unmerge_stop_latency(const stress_ksm_unmerge_shared_t *sh, double *lat)
{
	double last = 0.0;
	uint32_t i;

	for (i = 0; i < sh->instances; i++) {
		if (sh->inst[i].pid > 0 && sh->inst[i].stopped_at <= 0.0)
			return false;
		if (sh->inst[i].stopped_at > last)
			last = sh->inst[i].stopped_at;
	}
	if (sh->end_time <= 0.0 || last <= 0.0 || last < sh->end_time - 2.0)
		return false;	/* no timeout, nothing ran, or stopped early by a signal */
	*lat = last - sh->end_time;
	return true;
}

/*
 *  stress_ksm_unmerge_progress_doc()
 *	one soak log document: run figures now; final marks the last one
 */
static size_t stress_ksm_unmerge_progress_doc(const stress_ksm_unmerge_shared_t *sh, char *buf,
	const size_t len, const bool final)
{
	stress_ksm_unmerge_instance_t *t = calloc(1, sizeof(*t));
	const double now = stress_time_now();
	size_t off = 0, i;
	uint32_t reached, active;
	double lat;

	if (!t)
		return 0;
	stress_ksm_unmerge_totals(sh, t);
	stress_ksm_unmerge_racers_reached(sh, &reached, &active);
	off += (size_t)snprintf(buf + off, len - off,
		"---\nstressor: ksm-unmerge\nepoch-secs: %.3f\nelapsed-secs: %.3f\n"
		"remaining-secs: %.0f\nfinal: %s\ncycles: %" PRIu64 "\npages-merged: %" PRIu64 "\n"
		"pages-unmerged: %" PRIu64 "\nunmerge-mb-per-sec: %.3f\nmerge-timeouts: %" PRIu64 "\n"
		"failures: %" PRIu64 "\nhangs: %" PRIu64 "\nkernel-warnings: %" PRIu32 "\n"
		"racers-reached: %" PRIu32 "\nracers-active: %" PRIu32 "\nintervals-elapsed: %" PRIu32 "\n"
		"intervals-logged: %" PRIu32 "\nintervals-lost: %" PRIu32 "\nrss-growth-max-kb: %" PRIu64 "\n",
		now, now - sh->start_time, sh->end_time > now ? sh->end_time - now : 0.0,
		final ? "true" : "false", t->cycles, t->pages_merged, t->pages_unmerged,
		stress_ksm_unmerge_unmerge_rate(sh), t->merge_timeouts, t->failures, t->hangs,
		stress_ksm_unmerge_klog_events(), reached, active, sh->log_elapsed,
		sh->log_written, sh->log_lost, sh->rss_growth_kb);
	if (stress_ksm_unmerge_stop_latency(sh, &lat))
		off += (size_t)snprintf(buf + off, len - off, "stop-latency-secs: %.3f\n", lat);
	off += (size_t)snprintf(buf + off, len - off, "instances:\n");
	for (i = 0; i < sh->instances && off < len; i++) {
		const stress_ksm_unmerge_instance_t *st = &sh->inst[i];

		off += (size_t)snprintf(buf + off, len - off,
			"    - instance: %zu\n      pid: %d\n      cycles: %" PRIu64 "\n"
			"      phase: %s\n      rss-kb: %" PRIu64 "\n", i, (int)st->pid, st->cycles,
			stress_ksm_unmerge_phase_names[st->phase],
			st->pid > 0 ? stress_ksm_unmerge_status_kb(st->pid, "VmRSS:") : 0);
	}
	free(t);
	return off < len ? off : len - 1;
}

/*
 *  stress_ksm_unmerge_progress_line()
 *	the periodic status line
 */
static void stress_ksm_unmerge_progress_line(const stress_ksm_unmerge_shared_t *sh)
{
	stress_ksm_unmerge_instance_t *t = calloc(1, sizeof(*t));
	const double now = stress_time_now();
	uint32_t reached, active;

	if (!t)
		return;
	stress_ksm_unmerge_totals(sh, t);
	stress_ksm_unmerge_racers_reached(sh, &reached, &active);
	stress_ksm_unmerge_pr_report("progress: elapsed=%.0fs,remaining=%.0fs,cycles=%" PRIu64
		",unmerge-mb-per-sec=%.1f,pages-merged=%" PRIu64 ",racers-reached=%" PRIu32 "/%" PRIu32
		",kernel-warnings=%" PRIu32 ",failures=%" PRIu64 ",hangs=%" PRIu64,
		now - sh->start_time, sh->end_time > now ? sh->end_time - now : 0.0, t->cycles,
		stress_ksm_unmerge_unmerge_rate(sh), t->pages_merged, reached, active,
		stress_ksm_unmerge_klog_events(), t->failures, t->hangs);
	free(t);
}

/*
 *  stress_ksm_unmerge_kernel_log_tail()
 *	the last lines of the kernel log ring (klogctl) as a YAML list
 */
static size_t stress_ksm_unmerge_kernel_log_tail(char *buf, const size_t len, const int lines)
{
	const int size = klogctl(10, NULL, 0);	/* SYSLOG_ACTION_SIZE_BUFFER */
	char *log, *p, *end;
	size_t off;
	int n, seen = 0;

	off = (size_t)snprintf(buf, len, "kernel-log-tail:\n");
	if (size <= 0 || !(log = malloc((size_t)size + 1)))
		return off + (size_t)snprintf(buf + off, len - off, "    - 'unavailable'\n");
	n = klogctl(3, log, size);		/* SYSLOG_ACTION_READ_ALL */
	if (n < 0) {
		off += (size_t)snprintf(buf + off, len - off, "    - 'klogctl failed: %s'\n", strerror(errno));
		free(log);
		return off;
	}
	log[n] = '\0';
	for (p = log + n; p > log && seen <= lines; p--)
		seen += (p[-1] == '\n');
	for (; *p && off < len; p = end + (*end != '\0')) {
		end = strchrnul(p, '\n');
		off += (size_t)snprintf(buf + off, len - off, "    - '");
		for (; p < end && off + 2 < len; p++) {
			if (*p == '\'')
				buf[off++] = '\'';
			buf[off++] = (*p >= ' ' && *p < 0x7f) ? *p : '?';
		}
		off += (size_t)snprintf(buf + off, len - off, "'\n");
	}
	free(log);
	return off < len ? off : len - 1;
}

/*
 *  stress_ksm_unmerge_evidence_doc()
 *	soak log document with the evidence of a warning or hang: knobs,
 *	each instance's wchan and kernel stack, the recent kernel log
 */
static size_t stress_ksm_unmerge_evidence_doc(const stress_ksm_unmerge_shared_t *sh, char *buf,
	const size_t len, const char *why)
{
	char text[4096];
	size_t off, i;

	off = (size_t)snprintf(buf, len, "---\nstressor: ksm-unmerge\nevidence: '%s'\n"
		"epoch-secs: %.3f\nknobs:\n", why, stress_time_now());
	for (i = 0; i < KSM_KNOBS && off < len; i++) {
		if (stress_ksm_unmerge_knob_read(stress_ksm_unmerge_knob_names[i], text, sizeof(text)) < 0)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "    %s: '%s'\n",
			stress_ksm_unmerge_knob_names[i], text);
	}
	off += (size_t)snprintf(buf + off, len - off, "instances:\n");
	for (i = 0; i < sh->instances && off < len; i++) {
		const pid_t pid = sh->inst[i].pid;
		char wchan[128];

		if (pid <= 0)
			continue;
		stress_ksm_unmerge_proc_text(pid, "wchan", wchan, sizeof(wchan));
		stress_ksm_unmerge_proc_text(pid, "stack", text, sizeof(text));
		off += (size_t)snprintf(buf + off, len - off,
			"    - instance: %zu\n      pid: %d\n      phase: %s\n      wchan: '%s'\n"
			"      stack: '%s'\n", i, (int)pid,
			stress_ksm_unmerge_phase_names[sh->inst[i].phase], wchan, text);
	}
	if (off < len)
		off += stress_ksm_unmerge_kernel_log_tail(buf + off, len - off, 40);
	return off < len ? off : len - 1;
}

/*
 *  stress_ksm_unmerge_threads_report()
 *	wchan and kernel stack of every racer thread of a stuck instance
 */
static void stress_ksm_unmerge_threads_report(const pid_t pid)
{
	char path[64], wchan[128], stack[2048];
	struct dirent *d;
	DIR *dir;

	(void)snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir)) != NULL) {
		char name[64];
		const long tid = strtol(d->d_name, NULL, 10);

		if (tid <= 0 || tid == pid)
			continue;
		(void)snprintf(name, sizeof(name), "task/%ld/wchan", tid);
		stress_ksm_unmerge_proc_text(pid, name, wchan, sizeof(wchan));
		(void)snprintf(name, sizeof(name), "task/%ld/stack", tid);
		stress_ksm_unmerge_proc_text(pid, name, stack, sizeof(stack));
		pr_inf("ksm-unmerge: thread %ld of pid %d: wchan %s, kernel stack: %s\n",
			tid, (int)pid, wchan, stack);
	}
	(void)closedir(dir);
}

/*
 *  stress_ksm_unmerge_hang_check()
 *	report instances stuck in one step longer than the bound; true if any
 */
static bool stress_ksm_unmerge_hang_check(stress_ksm_unmerge_shared_t *sh)
{
	const double now = stress_time_now();
	bool hung = false;
	uint32_t i;

	for (i = 0; i < sh->instances; i++) {
		stress_ksm_unmerge_instance_t *st = &sh->inst[i];
		char wchan[128], stack[2048];

		/* merge waits and checks are bounded in user space; kernel steps are not */
		if (st->pid <= 0 || st->hang_reported ||
		    (st->phase != KSM_PHASE_UNMERGING && st->phase != KSM_PHASE_VERIFY) ||
		    now - st->phase_since < (double)sh->hang_timeout)
			continue;
		st->hang_reported = true;
		st->hangs++;
		hung = true;
		stress_ksm_unmerge_proc_text(st->pid, "wchan", wchan, sizeof(wchan));
		stress_ksm_unmerge_proc_text(st->pid, "stack", stack, sizeof(stack));
		pr_fail("ksm-unmerge: instance %" PRIu32 " (pid %d) stuck in phase %s for %.0f s "
			"(bound %" PRIu32 " s): wchan %s, kernel stack: %s\n", i, (int)st->pid,
			stress_ksm_unmerge_phase_names[st->phase], now - st->phase_since,
			sh->hang_timeout, wchan, stack);
		stress_ksm_unmerge_threads_report(st->pid);
	}
	return hung;
}

/*
 *  stress_ksm_unmerge_stop_run()
 *	ask every instance to stop, as stress-ng's own timeout does
 */
static void stress_ksm_unmerge_stop_run(stress_ksm_unmerge_shared_t *sh)
{
	uint32_t i;

	sh->stopping = true;
	for (i = 0; i < sh->instances; i++)
		if (sh->inst[i].pid > 0)
			(void)kill(sh->inst[i].pid, SIGALRM);
}

static volatile bool stress_ksm_unmerge_monitor_done;

/*
 *  stress_ksm_unmerge_monitor_sig()
 *	SIGTERM from deinit: write the final document and leave
 */
static void stress_ksm_unmerge_monitor_sig(int sig)
{
	(void)sig;
	stress_ksm_unmerge_monitor_done = true;
}

/*
 *  stress_ksm_unmerge_rss_growth()
 *	largest growth of an instance's peak RSS (VmHWM) since the previous
 *	interval, counted from the first interval after its first verified
 *	cycle (the region fill is not growth)
 */
static void stress_ksm_unmerge_rss_growth(stress_ksm_unmerge_shared_t *sh, uint64_t *prev)
{
	uint32_t i;

	for (i = 0; i < sh->instances; i++) {
		const stress_ksm_unmerge_instance_t *st = &sh->inst[i];
		const uint64_t kb = (st->pid > 0 && st->cycles) ? stress_ksm_unmerge_status_kb(st->pid, "VmHWM:") : 0;

		if (kb && prev[i] && kb > prev[i] && kb - prev[i] > sh->rss_growth_kb)
			sh->rss_growth_kb = kb - prev[i];
		prev[i] = kb;
	}
}

/*
 *  stress_ksm_unmerge_monitor_final()
 *	last document: final: true only when every interval before it is in the file
 */
static void stress_ksm_unmerge_monitor_final(stress_ksm_unmerge_shared_t *sh,
	stress_ksm_unmerge_log_t *lg, char *doc, const size_t len)
{
	const bool all = stress_ksm_unmerge_log_flush(sh, lg) && !sh->log_lost;

	stress_ksm_unmerge_log_write(sh, lg, doc, stress_ksm_unmerge_progress_doc(sh, doc, len, all));
	if (sh->log_path[0] && (lg->docs || sh->log_lost))
		pr_err("ksm-unmerge: soak log %s: %" PRIu32 " of %" PRIu32 " intervals%s are not in "
			"the file\n", sh->log_path, sh->log_elapsed - STRESS_MINIMUM(sh->log_written, sh->log_elapsed),
			sh->log_elapsed, lg->docs ? " and the final document" : "");
}

/*
 *  stress_ksm_unmerge_monitor()
 *	monitor process main loop
 */
static void NORETURN stress_ksm_unmerge_monitor(stress_ksm_unmerge_shared_t *sh)
{
	const size_t len = 65536;
	char *doc = malloc(len);
	uint64_t *rss = calloc(sh->instances, sizeof(*rss));
	stress_ksm_unmerge_log_t lg = { stress_ksm_unmerge_log_open(sh), malloc(KSM_UNMERGE_LOG_BACKLOG), 0, 0 };
	double next = sh->start_time + (sh->progress ? sh->progress : 60);
	bool evidence_kept = false;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	(void)signal(SIGTERM, stress_ksm_unmerge_monitor_sig);
	(void)signal(SIGINT, SIG_IGN);
	(void)signal(SIGALRM, SIG_IGN);
	while (!stress_ksm_unmerge_monitor_done && doc && rss) {
		const bool hung = stress_ksm_unmerge_hang_check(sh);
		const bool warned = stress_ksm_unmerge_klog_events() > 0;
		const uint32_t req = sh->log_sync_req;

		if ((hung || warned) && sh->stop_on_warn && !evidence_kept) {
			stress_ksm_unmerge_log_write(sh, &lg, doc, stress_ksm_unmerge_evidence_doc(sh, doc, len,
				hung ? "hang" : "kernel warning"));
			evidence_kept = true;
			pr_inf("ksm-unmerge: stopping the run at the first %s (--ksm-unmerge-stop-on-warn)\n",
				hung ? "hang" : "kernel warning");
			stress_ksm_unmerge_stop_run(sh);
		}
		if (stress_time_now() >= next) {
			if (sh->progress)
				stress_ksm_unmerge_progress_line(sh);
			stress_ksm_unmerge_rss_growth(sh, rss);
			sh->log_elapsed++;
			stress_ksm_unmerge_log_write(sh, &lg, doc, stress_ksm_unmerge_progress_doc(sh, doc, len, false));
			next += sh->progress ? sh->progress : 60;
		}
		if (req != sh->log_sync_done) {
			(void)stress_ksm_unmerge_log_flush(sh, &lg);
			sh->log_sync_done = req;
		}
		(void)shim_nanosleep_uint64(250000000);
	}
	if (doc)
		stress_ksm_unmerge_monitor_final(sh, &lg, doc, len);
	if (lg.fd >= 0)
		(void)close(lg.fd);
	free(lg.buf);
	free(rss);
	free(doc);
	_exit(0);
}

/*
 *  stress_ksm_unmerge_monitor_start()
 *	parent: fork the monitor
 */
static void stress_ksm_unmerge_monitor_start(stress_ksm_unmerge_shared_t *sh)
{
	const pid_t pid = fork();

	if (pid < 0) {
		pr_err("ksm-unmerge: cannot fork the monitor, errno=%d (%s); no progress, "
			"soak log or hang watchdog\n", errno, strerror(errno));
		return;
	}
	if (pid == 0)
		stress_ksm_unmerge_monitor(sh);
	sh->monitor_pid = pid;
}

/*
 *  stress_ksm_unmerge_monitor_stop()
 *	parent: final log document, then reap the monitor
 */
static void stress_ksm_unmerge_monitor_stop(stress_ksm_unmerge_shared_t *sh)
{
	int status;

	if (sh->monitor_pid <= 0)
		return;
	(void)kill(sh->monitor_pid, SIGTERM);
	if (shim_waitpid(sh->monitor_pid, &status, 0) < 0)
		pr_dbg("ksm-unmerge: waitpid on monitor %d failed, errno=%d (%s)\n",
			(int)sh->monitor_pid, errno, strerror(errno));
	sh->monitor_pid = 0;
}

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

#if defined(STRESS_KSM_STANDALONE)
/*
 *  stress_ksm_unmerge_yaml_spread()
 *	append one latency spread as a YAML flow mapping
 */
static size_t stress_ksm_unmerge_yaml_spread(char *buf, const size_t len, const char *name,
	const stress_ksm_unmerge_spread_t *s)
{
	return (size_t)snprintf(buf, len, "        %s: { samples: %" PRIu64 ", p50: %.6f, p95: %.6f, "
		"p99: %.6f, mean: %.6f, stdev: %.6f }\n", name, s->n, s->p50, s->p95, s->p99, s->mean, s->stdev);
}

/*
 *  stress_ksm_unmerge_yaml()
 *	standalone build: the ksm-unmerge YAML section (totals, latencies, racers)
 */
static void stress_ksm_unmerge_yaml(const stress_ksm_unmerge_shared_t *sh)
{
	const size_t len = 16384;
	char *buf = malloc(len);
	stress_ksm_unmerge_instance_t *t = calloc(1, sizeof(*t));
	stress_ksm_unmerge_spread_t s;
	size_t off = 0, i;

	if (!buf || !t)
		goto out;
	stress_ksm_unmerge_totals(sh, t);
	off += (size_t)snprintf(buf + off, len - off,
		"    pattern: %s\n    cycles: %" PRIu64 "\n    madvise-cycles: %" PRIu64 "\n"
		"    prctl-cycles: %" PRIu64 "\n    pages-merged: %" PRIu64 "\n    zero-pages: %" PRIu64 "\n"
		"    pages-unmerged: %" PRIu64 "\n    cow-ksm-delta: %" PRIu64 "\n"
		"    merge-timeouts: %" PRIu64 "\n    partial-merges: %" PRIu64 "\n    failures: %" PRIu64 "\n"
		"    latencies:\n",
		stress_ksm_unmerge_patterns[sh->pattern], t->cycles, t->method_cycles[0], t->method_cycles[1],
		t->pages_merged, t->pages_zero, t->pages_unmerged, t->cow_ksm, t->merge_timeouts,
		t->partial_merges, t->failures);
	stress_ksm_unmerge_lat_spread(sh, offsetof(stress_ksm_unmerge_instance_t, unmerge_lat), &s);
	off += stress_ksm_unmerge_yaml_spread(buf + off, len - off, "unmerge-millisecs", &s);
	stress_ksm_unmerge_lat_spread(sh, offsetof(stress_ksm_unmerge_instance_t, mrelease_lat), &s);
	if (s.n)
		off += stress_ksm_unmerge_yaml_spread(buf + off, len - off, "mrelease-millisecs", &s);
	off += (size_t)snprintf(buf + off, len - off, "    racers:\n");
	for (i = 0; i < KSM_UNMERGE_RACERS && off < len; i++) {
		stress_ksm_unmerge_racer_stats_t r;
		char details[192];

		if (!(sh->methods & STRESS_BIT_ULL(KSM_UNMERGE_RACER_SHIFT + i)))
			continue;
		stress_ksm_unmerge_racer_total(sh, i, &r);
		off += (size_t)snprintf(buf + off, len - off,
			"        - racer: %s\n          ops: %" PRIu64 "\n          evidence: %" PRIu64 "\n"
			"          evidence-counts: %s\n          failures: %" PRIu64 "\n"
			"          reached: %s\n          skipped: %s\n",
			stress_ksm_unmerge_racer_name(i), r.ops, r.evidence,
			stress_ksm_unmerge_racers[i].evidence, r.failures,
			(r.active && r.evidence) ? "true" : "false", r.skipped ? "true" : "false");
		stress_ksm_unmerge_racer_details_str(i, &r, details, sizeof(details), true);
		if (details[0] && off < len)
			off += (size_t)snprintf(buf + off, len - off, "          details: { %s }\n", details);
	}
	if (off < len)
		stress_yaml_extra_add("ksm-unmerge", buf);
out:
	free(t);
	free(buf);
}
#endif

/*
 *  stress_ksm_unmerge_soak_report()
 *	soak figures: intervals logged / elapsed, largest RSS growth between
 *	two intervals, stop latency
 */
static void stress_ksm_unmerge_soak_report(const stress_ksm_unmerge_shared_t *sh)
{
	char lat_str[48] = "";
	double lat;

	if (!sh->log_path[0] && !sh->progress)
		return;
	if (stress_ksm_unmerge_stop_latency(sh, &lat))
		(void)snprintf(lat_str, sizeof(lat_str), ",stop-latency-secs=%.3f", lat);
	stress_ksm_unmerge_pr_report("soak: intervals-logged=%" PRIu32 "/%" PRIu32 ",intervals-lost=%" PRIu32
		",rss-growth-max-kb=%" PRIu64 "%s", STRESS_MINIMUM(sh->log_written, sh->log_elapsed),
		sh->log_elapsed, sh->log_elapsed - STRESS_MINIMUM(sh->log_written, sh->log_elapsed),
		sh->rss_growth_kb, lat_str);
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

/*
 *  stress_ksm_unmerge_racer_name()
 *	no racer table in a build without KSM: no name matches a method
 */
static const char *stress_ksm_unmerge_racer_name(const size_t idx)
{
	(void)idx;
	return "";
}

/*
 *  stress_ksm_unmerge_racers_list()
 *	--ksm-unmerge-method which in a build without KSM: no racer built
 */
static void stress_ksm_unmerge_racers_list(void)
{
	(void)printf("no racers: built without MADV_MERGEABLE/MADV_UNMERGEABLE or prctl support\n");
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
	.unimplemented_reason = "built without MADV_MERGEABLE/MADV_UNMERGEABLE or prctl support"
};

#endif
