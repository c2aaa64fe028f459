struct stress_ksm_unmerge_ctx;
struct stress_ksm_unmerge_run;
typedef struct stress_ksm_unmerge_ctx stress_ksm_unmerge_ctx_t;
typedef struct stress_ksm_unmerge_run stress_ksm_unmerge_run_t;

/* racer flags (a racer table row's .flags) */
#define KSM_RF_WAIT	STRESS_BIT_U(2)	/* the merged phase waits for its first op */
#define KSM_RF_PFNS	STRESS_BIT_U(3)	/* needs pagemap PFNs for its evidence */
#define KSM_RF_COPY	STRESS_BIT_U(4)	/* its children keep a copy of every region page */
#define KSM_RF_PARTIAL	STRESS_BIT_U(5)	/* blocks or breaks merges: partial merges are legitimate */
#define KSM_RF_LAYOUT	STRESS_BIT_U(6)	/* discards pages or protects them: explains a zero page or EFAULT */

/* one racer: a row of the racer table, the only list of racers */
typedef struct {
	const char *name;		/* --ksm-unmerge-method name */
	const char *evidence;		/* its evidence counter: kernel-side proof it reached its path */
	const char *desc;		/* the kernel path it covers */
	const char *details[KSM_DETAILS];	/* names of its detail counters */
	const char *not_built;		/* why this build lacks it, NULL if built */
	unsigned int flags;		/* KSM_RF_* */
	size_t page_bytes;		/* memory it keeps per region page */
	size_t priv_size;		/* its state, zeroed before start, freed after stop */
	int (*supported)(char *reason, const size_t len);
	int (*start)(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run);	/* -2 unsupported */
	void (*stop)(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run);
	bool (*op)(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run);
	void (*park)(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run);
	void (*phase)(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase);
	void (*restore)(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run);
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
	int pagemap_fd, kpageflags_fd, kpagecount_fd, ksm_stat_fd;
	int merging_pages_fd, full_scans_fd, vmstat_fd, zero_pages_fd, taint_fd;
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
	bool quiet;			/* this cycle holds every racer off */
	uint64_t racers;		/* racers started */
	char racers_str[160];
	bool disturb_counts, disturb_layout;
	size_t touch_npages;		/* racers reading/writing pages stay below this */
	pthread_t main_thread;
	stress_ksm_unmerge_run_t run[KSM_RACERS];
	bool stopped, wait_timed_out;
	double t_start, teardown_secs;
	size_t filled;
	struct {
		uint64_t cycle, ksm, zero;
		size_t present, swapped;
	} last;				/* the merge wait's last region scan */
};

static const stress_ksm_unmerge_racer_t stress_ksm_unmerge_racers[KSM_RACERS];

/*
 *  stress_ksm_unmerge_now_ns()
 *	CLOCK_MONOTONIC in nanoseconds
 */
static uint64_t stress_ksm_unmerge_now_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
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
 *  stress_ksm_unmerge_counter()
 *	pure: value of "name N" in a proc text buffer (name NULL: buf is the
 *	number, as in sysfs) into *val, and what it says (KSM_COUNTER_*)
 */
static int stress_ksm_unmerge_counter(const char *buf, const char *name, int64_t *val)
{
	const char *p = buf;
	char *end;
	uint64_t v;

	*val = -1;
	if (name) {
		const size_t len = strlen(name);

		for (p = strstr(buf, name); p; p = strstr(p + len, name))
			if ((p == buf || p[-1] == '\n') && (p[len] == ' ' || p[len] == ':' || p[len] == '\t'))
				break;
		if (!p)
			return KSM_COUNTER_MISSING;
		p += len + 1;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '-') {
		*val = (int64_t)strtoll(p, &end, 10);
		return (end == p + 1) ? KSM_COUNTER_GARBLED : KSM_COUNTER_NEGATIVE;
	}
	errno = 0;
	v = strtoull(p, &end, 10);
	if (end == p)
		return KSM_COUNTER_GARBLED;
	*val = (int64_t)v;
	return (errno == ERANGE || v >= (1ULL << 63)) ? KSM_COUNTER_WRAPPED : KSM_COUNTER_OK;
}

/*
 *  stress_ksm_unmerge_field()
 *	value of counter name in the file at fd, -1 if missing or bad
 */
static int64_t stress_ksm_unmerge_field(const int fd, const char *name)
{
	char buf[16384];
	int64_t v;

	if (stress_ksm_unmerge_fd_read(fd, buf, sizeof(buf)) <= 0 ||
	    stress_ksm_unmerge_counter(buf, name, &v) != KSM_COUNTER_OK)
		return -1;
	return v;
}

/*
 *  stress_ksm_unmerge_file_field()
 *	value of counter name in the file at path, -1 if missing or bad
 */
static int64_t stress_ksm_unmerge_file_field(const char *path, const char *name)
{
	char buf[8192];
	int64_t v;

	if (stress_fs_file_read(path, buf, sizeof(buf)) <= 0 ||
	    stress_ksm_unmerge_counter(buf, name, &v) != KSM_COUNTER_OK)
		return -1;
	return v;
}

/*
 *  stress_ksm_unmerge_pagemap_read()
 *	pagemap entries of n pages from addr into out
 */
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

/*
 *  stress_ksm_unmerge_kpf()
 *	/proc/kpageflags (or kpagecount) word of pfn, 0 on error
 */
static uint64_t stress_ksm_unmerge_kpf(const int fd, const uint64_t pfn)
{
	uint64_t v = 0;

	if (fd < 0 || pread(fd, &v, sizeof(v), (off_t)(pfn * sizeof(v))) != sizeof(v))
		return 0;
	return v;
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
 *  stress_ksm_unmerge_vmflags()
 *	smaps range and VmFlags of the VMA holding addr into out; with
 *	no_mg the VmFlags alone without "mg"; -1 if not found
 */
static int stress_ksm_unmerge_vmflags(const void *addr, char *out, const size_t len, const bool no_mg)
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
		if (!in_vma || strncmp(line, "VmFlags:", 8))
			continue;
		for (tok = strtok_r(line + 8, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
			if (no_mg && !strcmp(tok, "mg"))
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

/*
 *  stress_ksm_unmerge_has_flag()
 *	pure: does a VmFlags list hold flag (a two-letter word)
 */
static bool stress_ksm_unmerge_has_flag(const char *flags, const char *flag)
{
	const char *p;

	for (p = strstr(flags, flag); p; p = strstr(p + 2, flag))
		if ((p == flags || p[-1] == ' ') && (p[2] == ' ' || p[2] == '\0' || p[2] == '\n'))
			return true;
	return false;
}

/*
 *  stress_ksm_unmerge_knob_read()
 *	read a KSM sysfs file into buf (newline stripped, "[a] b" as "a"), -1 on error
 */
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
	buf[strcspn(buf, "\n")] = '\0';
	open = strchr(buf, '[');
	close = open ? strchr(open, ']') : NULL;
	if (close) {
		n = close - open - 1;
		(void)memmove(buf, open + 1, (size_t)n);
		buf[n] = '\0';
	}
	return 0;
}

/*
 *  stress_ksm_unmerge_knob_u64()
 *	a numeric KSM knob or counter, 0 on error
 */
static uint64_t stress_ksm_unmerge_knob_u64(const char *knob)
{
	char buf[64];

	return (stress_ksm_unmerge_knob_read(knob, buf, sizeof(buf)) < 0) ? 0 : strtoull(buf, NULL, 10);
}

/*
 *  stress_ksm_unmerge_knob_write()
 *	write a KSM knob, 0 or -errno
 */
static int stress_ksm_unmerge_knob_write(const char *knob, const char *value)
{
	char path[PATH_MAX];
	int fd, err = 0;

	(void)snprintf(path, sizeof(path), "%s/%s", KSM_SYSFS, knob);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		err = -errno;
	(void)close(fd);
	return err;
}

/*
 *  stress_ksm_unmerge_knobs_save()
 *	snapshot every KSM knob the stressor may change
 */
static void stress_ksm_unmerge_knobs_save(stress_ksm_unmerge_knobs_t *knobs)
{
	size_t i;

	for (i = 0; i < KSM_KNOBS; i++)
		if (stress_ksm_unmerge_knob_read(stress_ksm_unmerge_knob_names[i], knobs->value[i],
				sizeof(knobs->value[i])) < 0)
			knobs->value[i][0] = '\0';
}

/*
 *  stress_ksm_unmerge_knobs_restore()
 *	write the saved knobs back where they differ; failures returned
 */
static int stress_ksm_unmerge_knobs_restore(const stress_ksm_unmerge_knobs_t *knobs)
{
	int failures = 0;
	size_t i;

	for (i = 0; i < KSM_KNOBS; i++) {
		const char *name = stress_ksm_unmerge_knob_names[i];
		char now[32];
		int ret;

		if (!knobs->value[i][0] || (stress_ksm_unmerge_knob_read(name, now, sizeof(now)) == 0 &&
		    !strcmp(now, knobs->value[i])))
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
 *	record the saved knobs so the next run can repair a SIGKILLed one
 */
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

/*
 *  stress_ksm_unmerge_state_read()
 *	pure but for the file: parse a state file; -1 if absent or corrupt
 */
static int stress_ksm_unmerge_state_read(const char *path, stress_ksm_unmerge_knobs_t *knobs, int *pid)
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
			if (!strcmp(name, stress_ksm_unmerge_knob_names[i]))
				found += shim_strscpy(knobs->value[i], value, sizeof(knobs->value[i])) > 0;
	}
	(void)fclose(fp);
	return (*pid > 0 && found > 0) ? 0 : -1;
}

/*
 *  stress_ksm_unmerge_state_repair()
 *	restore knobs a run left when it was killed before its deinit
 */
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
	pr_inf("ksm-unmerge: restoring KSM knobs left by killed run (pid %d) from %s\n", pid, KSM_STATE_FILE);
	if (stress_ksm_unmerge_knobs_restore(&knobs) == 0)
		(void)shim_unlink(KSM_STATE_FILE);
}

/*
 *  stress_ksm_unmerge_lock()
 *	the run lock: two runs never fight over the global knobs
 */
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

/*
 *  stress_ksm_unmerge_knobs_set()
 *	ksmd on, fast scanning, KSM zero pages on (the fork racer's zero
 *	range and the zero patterns use them); -errno with err set
 */
static int stress_ksm_unmerge_knobs_set(char *err, const size_t len)
{
	static const struct {
		const char *knob, *value;
		bool optional;
	} sets[] = {
		{ "advisor_mode",	"none",		true },	/* scan-time refuses pages_to_scan */
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

/*
 *  stress_ksm_unmerge_ksmd_drain()
 *	every instance gone, ksmd still on: a dead mm's rmap_items stay
 *	charged until ksmd next visits it, so let one full scan end (bounded)
 *	before ksmd is stopped again
 */
static void stress_ksm_unmerge_ksmd_drain(const stress_ksm_unmerge_knobs_t *saved)
{
	const double deadline = stress_time_now() + KSM_DRAIN_SECS;
	const uint64_t scans = stress_ksm_unmerge_knob_u64("full_scans");

	if (!strcmp(saved->value[0], "1"))
		return;		/* ksmd stays on: it frees them itself */
	while (stress_time_now() < deadline && stress_ksm_unmerge_knob_u64("full_scans") == scans)
		(void)shim_nanosleep_uint64(2000000);
}

/*
 *  stress_ksm_unmerge_supported()
 *	KSM must exist and its knobs be writable
 */
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

