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
 * Map.  This file holds the racer list (KSM_UNMERGE_RACER_LIST: indexes,
 * help row and racer table come from it), the options, the types, the page
 * patterns, the MADV/prctl switches, the racer framework and the racer
 * table, one cycle, the main loop, init/deinit and the stressor_info_t.
 * Private headers, each #included once, in this order:
 *   stress-ksm-unmerge-knobs.h           KSM sysfs knobs: save/set/restore,
 *                                        state file and repair, run lock,
 *                                        supported()
 *   stress-ksm-unmerge-klog.h            kernel-log watcher process
 *   stress-ksm-unmerge-iface.h           proc/sysfs readers, the interface
 *                                        self-test, the page verdict
 *   stress-ksm-unmerge-verify.h          region scan, merge wait, verify_*
 *   stress-ksm-unmerge-check-counters.h  KSM counter sanity checks
 *   stress-ksm-unmerge-racer-*.h         the racers and their helpers; each
 *                                        racer header ends with its table
 *                                        entry KSM_RACER_<ID> (a new racer:
 *                                        its header, its #include above the
 *                                        racer table, one line in
 *                                        KSM_UNMERGE_RACER_LIST)
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

/*
 *  The list of racers, the only one: X(ID, "name") per racer, in method bit
 *  order after the two merge switches.  The racer indexes (KSM_RACER_IDX_<ID>),
 *  the --ksm-unmerge-method help row and the racer table
 *  (stress_ksm_unmerge_racers[], further down: each entry's name from here,
 *  its other fields from KSM_RACER_<ID> in stress-ksm-unmerge-racer-<name>.h)
 *  are all generated from it.  Append a racer at the end: a racer's bit is
 *  its place in this list.
 */
#define KSM_UNMERGE_RACER_LIST(X)		\
	X(VMSPLICE,	"vmsplice")		\
	X(GUP,		"gup")			\
	X(UFFD_WP,	"uffd-wp")		\
	X(MRELEASE,	"mrelease")		\
	X(FORK,		"fork")			\
	X(MPROTECT,	"mprotect")		\
	X(DONTNEED,	"dontneed")		\
	X(SPARSE,	"sparse")		\
	X(THP,		"thp")			\
	X(SIGNAL,	"signal")		\
	X(MREMAP,	"mremap")		\
	X(UFFD_MINOR,	"uffd-minor")		\
	X(PRCTL_EXEC,	"prctl-exec")

#define KSM_RACER_HELP_OF(id, name)	" | " name

static const stress_help_t help[] = {
	{ NULL,	"ksm-unmerge N",	"start N workers merging and unmerging KSM pages" },
	{ NULL,	"ksm-unmerge-bytes N",	"memory to merge/unmerge in total (K, M, G or % of available)" },
	{ NULL,	"ksm-unmerge-hang-timeout S", "report an unmerge or racer step stuck longer than S seconds (default 60)" },
	{ NULL,	"ksm-unmerge-log F",	"append a YAML document with progress figures to file F every interval" },
	{ NULL,	"ksm-unmerge-method M",	"[ all | madvise | prctl" KSM_UNMERGE_RACER_LIST(KSM_RACER_HELP_OF)
		" ] merge switches and racers to run, a comma list (default all)" },
	{ NULL,	"ksm-unmerge-no-klog",	"do not watch the kernel log for warnings" },
	{ NULL,	"ksm-unmerge-ops N",	"stop after N verified merge/unmerge cycles" },
	{ NULL,	"ksm-unmerge-pattern P", "page contents: same, few, zero, mixed or unique" },
	{ NULL,	"ksm-unmerge-sparse-bytes N", "address space of the sparse racer's range (default 16G)" },
	{ NULL,	"ksm-unmerge-proc D",	"read per-process KSM counters from D/self instead of /proc (tests fallbacks)" },
	{ NULL,	"ksm-unmerge-progress S", "print a progress line every S seconds (default 60 in runs of 10 minutes or more)" },
	{ NULL,	"ksm-unmerge-stop-on-warn", "stop the run at the first kernel warning or hang, keeping the evidence" },
	{ NULL,	NULL,			NULL }
};

/* Racer indexes: method bit order after the two merge switches, table index */
#define KSM_RACER_IDX_OF(id, name)	KSM_RACER_IDX_##id,

enum {
	KSM_UNMERGE_RACER_LIST(KSM_RACER_IDX_OF)
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
#define KSM_UNMERGE_JUDGE_CYCLES	(4)	/* fewer verified cycles: racers' reach not judged */
#define KSM_UNMERGE_MAX_FAILURES	(5)
#define KSM_UNMERGE_LAT_SAMPLES		(4096)
#define KSM_UNMERGE_FEW_TEMPLATES	(8)
#define KSM_UNMERGE_PM_CHUNK		(4096)	/* pagemap entries read at a time */
#define KSM_UNMERGE_CALL_BYTES		(128 * MB)	/* madvise unmerge: bytes per call */
#define KSM_UNMERGE_FILL_PAGES		(16384)	/* pages filled between stop checks */
#define KSM_UNMERGE_TEARDOWN_RATE	(3 * GB)	/* bytes/s unmapped at exit, measured low end */
#define KSM_UNMERGE_TEARDOWN_FREE	(1 * GB)	/* regions up to this unmap in < 0.4 s */
#define KSM_UNMERGE_DRAIN_SECS		(2.0)	/* end of run: ksmd's last full scan, bound */

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
	volatile double hang_allow;	/* secs of the phase excused from the hang bound (long sparse walk) */
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
 *  Racer groups (the flags of a racer's table entry): a racer's page checks
 *  accept a transient zero page only while a racer outside its group runs
 *  (stress_ksm_unmerge_others_run())
 */
#define KSM_RACER_F_HOLDING	(1U << 0)	/* holds, pins or protects KSM pages */
#define KSM_RACER_F_MM		(1U << 1)	/* races processes and VMAs: exit, fork, protections, sparse ranges */

/*
 *  One racer: started before the first cycle, stopped after the last; an
 *  entry of the racer table, written by its stress-ksm-unmerge-racer-*.h
 *  header with designated initialisers (all fields but the name, which
 *  comes from KSM_UNMERGE_RACER_LIST)
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
	unsigned int flags;		/* KSM_RACER_F_*: the groups it belongs to */
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
	uint64_t *pfns;			/* the region scan's buffer (verify.h), scan_cap words + histogram */
	int pagemap_fd;
	int kpageflags_fd;
	int ksm_stat_fd;		/* /proc/self/ksm_stat, -1 if missing */
	int merging_pages_fd;		/* /proc/self/ksm_merging_pages, -1 if missing */
	int full_scans_fd;
	int vmstat_fd;
	uint64_t zero_pfn;		/* pfn of the shared zero page, 0 unknown */
	const stress_ksm_unmerge_iface_t *iface;	/* self-tested signals */
	size_t scan_cap;		/* words the scan buffer holds (KSM_UNMERGE_SCAN_CAP) */
	size_t scan_passes;		/* pagemap passes of the last region scan */
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
	volatile uint64_t unmerge_call;	/* timed unmerge calls begun (watchdogs) */
	volatile bool in_unmerge_call;	/* the main thread is inside one */
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

/* the racer table, defined after the racer headers that read it */
static const stress_ksm_unmerge_racer_t stress_ksm_unmerge_racers[KSM_UNMERGE_RACERS];

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
 *  The racer table, generated from KSM_UNMERGE_RACER_LIST: entry
 *  KSM_RACER_IDX_<ID> is { .name = "name", KSM_RACER_<ID> }, where
 *  KSM_RACER_<ID>, at the end of the racer's header, is the designated
 *  initialisers of every other field, without braces (its real entry, or a
 *  "not built" one when its feature guard is off).  A racer is added
 *  by writing its stress-ksm-unmerge-racer-<name>.h, one X(ID, "name") line
 *  in KSM_UNMERGE_RACER_LIST and the header's #include line above (C cannot
 *  generate an #include from a list).
 */
#define KSM_RACER_ENTRY_OF(id, name_)	[KSM_RACER_IDX_##id] = { .name = name_, KSM_RACER_##id },

static const stress_ksm_unmerge_racer_t stress_ksm_unmerge_racers[KSM_UNMERGE_RACERS] = {
	KSM_UNMERGE_RACER_LIST(KSM_RACER_ENTRY_OF)
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
	ctx->st->hang_allow = 0.0;
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

	ctx->unmerge_call++;
	ctx->in_unmerge_call = true;
	(void)clock_gettime(CLOCK_MONOTONIC, &a);
	ret = stress_ksm_unmerge_signal_off(ctx, sw, off, len);
	(void)clock_gettime(CLOCK_MONOTONIC, &b);
	ctx->in_unmerge_call = false;
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
	ctx->pfns = stress_ksm_unmerge_scan_alloc(ctx);
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
	stress_ksm_unmerge_sparse_metrics(ctx);
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
		} else if (!rs->evidence && ctx->verify && st->cycles &&
			   st->cycles < KSM_UNMERGE_JUDGE_CYCLES) {
			pr_inf("%s: racer %s not reached in %" PRIu64 " verified cycle(s): too short "
				"a run to judge (a racer that never reaches its path in %d cycles "
				"fails --verify)\n", args->name, stress_ksm_unmerge_racer_name(i),
				st->cycles, KSM_UNMERGE_JUDGE_CYCLES);
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
