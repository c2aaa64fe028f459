/*
 * ksm-report: run the ksm-unmerge stressor several times and compare
 * series of runs the way the 0-day/LKP robot does.
 *
 *   ksm-report run --runs N --out DIR [--stressor PATH] -- <stressor args>
 *   ksm-report compare BASE NEW [--svg FILE] [--strict]
 *
 * A run is the stressor's --yaml file (run-<i>.yaml) and, next to it, its
 * text output (run-<i>.txt).  compare reads the YAML metrics: section with
 * libyaml (stress-ng.<stressor>.ops, .ops_per_sec, one key per misc metric)
 * and from the text the stressor's report lines (totals, racer reached /
 * NOT reached / skipped lines, latency spreads) and the kernel-log lines
 * (dmesg.* keys), and prints LKP's fail:runs and %stddev/%change tables,
 * marking the changes that LKP's significance rules would report.  Racer
 * names and descriptions come from build/ksm-racers.
 *
 * Exit status of compare: 0 no significant regression, 1 a significant
 * regression of a higher-is-better (*_per_sec) metric (with --strict also
 * of a lower-is-better latency or a kernel-log key new in NEW), 2 bad input.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <yaml.h>

#define KR_MAX_RATIO		(5.0)	/* LKP MAX_RATIO */
#define KR_MIN_RATIO		(1.01)	/* LKP skip_small_change? for perf metrics */
#define KR_MIN_RUNS		(3)	/* LKP skip_regular_stat? */
#define KR_ABS_WIDTH		(10)
#define KR_REL_WIDTH		(10)
#define KR_ERR_WIDTH		(6)
#define KR_DEFAULT_STRESSOR	"./build/stress-ksm-unmerge"
#define KR_DEFAULT_SYSFS	"/sys/kernel/mm/ksm"

/* one LKP stat of one run: a number, or a function (failure) stat */
typedef struct {
	char *key;
	double value;
} kr_kv_t;

/* description as printed in the text output, keyed by its YAML form */
typedef struct {
	const char *yaml_key;
	const char *description;
} kr_desc_t;

/* all stats of one run (one YAML document) */
typedef struct {
	char *source;		/* file name, plus #doc for streams */
	char *stressor;		/* name of the first metrics entry */
	kr_kv_t *perf;		/* numeric stats */
	size_t n_perf;
	size_t cap_perf;
	char **fails;		/* function stats seen in this run */
	size_t n_fails;
	size_t cap_fails;
	bool text_present;	/* its text output (run-<i>.txt) was read */
	bool emulated;		/* ran in a qemu guest under TCG (ksm-qemu) */
	long lost_records;	/* kernel-log records the watcher lost */
} kr_run_t;

/* one side of a comparison: a directory (or file) of runs */
typedef struct {
	const char *path;
	kr_run_t *runs;
	size_t n_runs;
	size_t cap_runs;
	size_t bad_files;
	size_t good_files;
} kr_side_t;

/* per side summary of one stat */
typedef struct {
	double *v;		/* samples */
	size_t n;
	double mean;
	double stddev;		/* population */
	double min;		/* LKP summary after margin trim */
	double median;		/* LKP's "mean": sorted[n / 2] */
	double max;
} kr_samples_t;

/* one row of the %stddev/%change table */
typedef struct {
	const char *key;
	kr_samples_t base;
	kr_samples_t new;
	double change;		/* percent */
	double ratio;		/* of LKP medians, capped */
	int direction;		/* +1 higher is better, -1 lower, 0 unknown */
	bool significant;
	bool regression;
} kr_row_t;

/* one row of the fail:runs table */
typedef struct {
	const char *key;
	size_t f_base;
	size_t f_new;
	double reproduction;
} kr_fail_row_t;

/*
 * misc metric descriptions of the ksm-unmerge stressor, then the names
 * older stressors printed (before the quiet windows of issue 21), so
 * their runs still compare under the same keys
 */
static const kr_desc_t kr_known_desc[] = {
	{ "unmerge-mb-per-sec",			"unmerge MB per sec" },
	{ "quiet-unmerge-mb-per-sec",		"quiet unmerge MB per sec" },
	{ "quiet-cputime-unmerge-mb-per-sec",	"quiet CPU-time unmerge MB per sec" },
	{ "merge-wait-millisecs-per-cycle",	"merge wait millisecs per cycle" },
	{ "pages-merged-per-cycle",		"pages merged per cycle" },
	{ "nanosecs-per-sparse-page",		"nanosecs per sparse page" },
	{ "known-kernel-bugs-confirmed",	"known kernel bugs confirmed" },
	/* older stressors */
	{ "mb-per-sec-unmerge-rate",		"MB per sec unmerge rate" },
	{ "mb-per-sec-quiet-unmerge-rate",	"MB per sec quiet unmerge rate" },
	{ "pages-unmerged-per-sec",		"pages unmerged per sec" },
	{ "unmerge-calls-per-cycle",		"unmerge calls per cycle" },
	{ "ksmd-scan-nanosecs-per-sparse-gib",	"ksmd scan nanosecs per sparse GiB" },
};

/* one racer of build/ksm-racers: name, evidence counter, build, text */
typedef struct {
	char *name;
	char *evidence;
	char *built;
	char *description;
} kr_racer_t;

static kr_racer_t *kr_racers;
static size_t kr_n_racers;
static int kr_racers_state;	/* 0 not asked, 1 loaded, -1 unavailable */

/* descriptions learnt from run-<i>.txt files next to the YAML files */
static kr_desc_t *kr_learnt_desc;
static size_t kr_n_learnt, kr_cap_learnt;

/* metrics entry keys that are not misc metrics */
static const char *const kr_std_keys[] = {
	"stressor", "bogo-ops", "bogo-ops-per-second-usr-sys-time",
	"bogo-ops-per-second-real-time", "wall-clock-time", "user-time",
	"system-time", "cpu-usage-per-instance", "max-rss", "instances",
};

/*
 *  kr_xmalloc()
 *	allocate or die: this is a short lived command line tool
 */
static void *kr_xmalloc(size_t size)
{
	void *p = calloc(1, size ? size : 1);

	if (!p) {
		fprintf(stderr, "ksm-report: out of memory allocating %zu bytes\n", size);
		exit(2);
	}
	return p;
}

/*
 *  kr_xrealloc()
 *	grow an array or die
 */
static void *kr_xrealloc(void *ptr, size_t nmemb, size_t size)
{
	void *p = reallocarray(ptr, nmemb ? nmemb : 1, size);

	if (!p) {
		fprintf(stderr, "ksm-report: out of memory growing to %zu items\n", nmemb);
		exit(2);
	}
	return p;
}

/*
 *  kr_xstrdup()
 *	duplicate a string or die
 */
static char *kr_xstrdup(const char *s)
{
	size_t len = strlen(s);
	char *p = kr_xmalloc(len + 1);

	memcpy(p, s, len + 1);
	return p;
}

/*
 *  kr_asprintf()
 *	format into a new string or die
 */
static char *kr_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int ret;

	va_start(ap, fmt);
	ret = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (ret < 0) {
		fprintf(stderr, "ksm-report: out of memory formatting a string\n");
		exit(2);
	}
	return s;
}

/*
 *  kr_lkp_normalize()
 *	LKP::Stats.normalize: runs of whitespace , " _ [ ] ( ) : become one
 *	'_', leading and trailing '_' are dropped; '/', '-', '%' are kept
 */
char *kr_lkp_normalize(const char *desc)
{
	char *out = kr_xmalloc(strlen(desc) + 1);
	char *dst = out;
	bool pending = false;

	for (const char *s = desc; *s; s++) {
		if (isspace((unsigned char)*s) || strchr(",\"_[]():", *s)) {
			pending = true;
			continue;
		}
		if (pending && dst != out)
			*dst++ = '_';
		pending = false;
		*dst++ = *s;
	}
	*dst = '\0';
	return out;
}

/*
 *  kr_yamlify()
 *	stress-ng's YAML key of a metric description: lower case, space to
 *	'-', '%' to "percent", other punctuation dropped, at most 39 chars
 */
void kr_yamlify(const char *desc, char *buf, size_t len)
{
	size_t n = 0;

	if (!len)
		return;
	for (const char *s = desc; *s && n + 1 < len && n < 39; s++) {
		const unsigned char c = (unsigned char)*s;

		if (isalnum(c)) {
			buf[n++] = (char)tolower(c);
		} else if (c == ' ') {
			buf[n++] = '-';
		} else if (c == '%') {
			for (const char *p = "percent"; *p && n + 1 < len && n < 39; p++)
				buf[n++] = *p;
		}
	}
	buf[n] = '\0';
}

/*
 *  kr_learn_desc()
 *	remember a description seen in a text log so its YAML key maps back
 */
static void kr_learn_desc(const char *desc)
{
	char key[64];

	kr_yamlify(desc, key, sizeof(key));
	for (size_t i = 0; i < kr_n_learnt; i++)
		if (!strcmp(kr_learnt_desc[i].yaml_key, key))
			return;
	if (kr_n_learnt == kr_cap_learnt) {
		kr_cap_learnt = kr_cap_learnt ? 2 * kr_cap_learnt : 16;
		kr_learnt_desc = kr_xrealloc(kr_learnt_desc, kr_cap_learnt, sizeof(*kr_learnt_desc));
	}
	kr_learnt_desc[kr_n_learnt].yaml_key = kr_xstrdup(key);
	kr_learnt_desc[kr_n_learnt].description = kr_xstrdup(desc);
	kr_n_learnt++;
}

/*
 *  kr_learn_text_log()
 *	read misc-metric rows of a stress-ng text log (if it exists) and
 *	learn their descriptions; rows end in "(<mean> of N instance(s))"
 */
void kr_learn_text_log(const char *path)
{
	static const char *const means[] = {
		" (harmonic mean of ", " (geometric mean of ", " (geometic mean of ",
		" (total of ", " (average of ", " (maximum of ",
	};
	FILE *fp = fopen(path, "r");
	char line[1024];

	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		char *tail = NULL, *p, *desc;
		char name[128];
		double value;
		int pos = 0;

		if (!strstr(line, "metrc:") && !strstr(line, "info:"))
			continue;
		for (size_t i = 0; i < sizeof(means) / sizeof(means[0]) && !tail; i++)
			tail = strstr(line, means[i]);
		if (!tail)
			continue;
		*tail = '\0';
		p = strchr(line, ']');
		if (!p)
			continue;
		if (sscanf(p + 1, " %127s %lf %n", name, &value, &pos) != 2 || !pos)
			continue;
		desc = p + 1 + pos;
		if (*desc)
			kr_learn_desc(desc);
	}
	(void)fclose(fp);
}

/*
 *  kr_racers_path()
 *	the racer table tool: $KSM_REPORT_RACERS, else ksm-racers next to
 *	this binary
 */
static char *kr_racers_path(void)
{
	const char *env = getenv("KSM_REPORT_RACERS");
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env)
		return kr_xstrdup(env);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return kr_xstrdup("build/ksm-racers");
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	return kr_asprintf("%s/ksm-racers", self);
}

/*
 *  kr_racer_add()
 *	one TSV line of ksm-racers: name, evidence, "built" or "not built:
 *	reason", description
 */
void kr_racer_add(char *line)
{
	char *f[4] = { NULL, NULL, NULL, NULL }, *save = NULL, *tok;
	size_t n = 0;

	line[strcspn(line, "\r\n")] = '\0';
	for (tok = strtok_r(line, "\t", &save); tok && n < 4; tok = strtok_r(NULL, "\t", &save))
		f[n++] = tok;
	if (!f[0] || !*f[0] || f[0][0] == '#')
		return;
	kr_racers = kr_xrealloc(kr_racers, kr_n_racers + 1, sizeof(*kr_racers));
	kr_racers[kr_n_racers].name = kr_xstrdup(f[0]);
	kr_racers[kr_n_racers].evidence = kr_xstrdup(f[1] ? f[1] : "");
	kr_racers[kr_n_racers].built = kr_xstrdup(f[2] ? f[2] : "");
	kr_racers[kr_n_racers].description = kr_xstrdup(f[3] ? f[3] : "");
	kr_n_racers++;
}

/*
 *  kr_racers_load()
 *	run build/ksm-racers once for the racer table; without it racer
 *	metrics keep their YAML keys (said once) unless the text output
 *	names them
 */
void kr_racers_load(void)
{
	char *path, line[1024];
	FILE *fp;
	int status;

	if (kr_racers_state)
		return;
	kr_racers_state = -1;
	path = kr_racers_path();
	if (access(path, X_OK) < 0) {
		fprintf(stderr, "ksm-report: note: racer table %s: errno=%d (%s): racer "
			"descriptions unknown\n", path, errno, strerror(errno));
		free(path);
		return;
	}
	{
		char *cmd = kr_asprintf("'%s'", path);

		fp = popen(cmd, "r");
		free(cmd);
	}
	if (!fp) {
		fprintf(stderr, "ksm-report: note: cannot run %s: errno=%d (%s)\n",
			path, errno, strerror(errno));
		free(path);
		return;
	}
	while (fgets(line, sizeof(line), fp))
		kr_racer_add(line);
	status = pclose(fp);
	if (status != 0 || !kr_n_racers)
		fprintf(stderr, "ksm-report: note: %s exited with status %d and listed %zu racers\n",
			path, WIFEXITED(status) ? WEXITSTATUS(status) : -1, kr_n_racers);
	else
		kr_racers_state = 1;
	free(path);
}

/*
 *  kr_racer_find()
 *	a racer of the table by name, NULL if not there
 */
const kr_racer_t *kr_racer_find(const char *name)
{
	kr_racers_load();
	for (size_t i = 0; i < kr_n_racers; i++)
		if (!strcmp(kr_racers[i].name, name))
			return &kr_racers[i];
	return NULL;
}

/*
 *  kr_racers_free()
 *	release the racer table
 */
void kr_racers_free(void)
{
	for (size_t i = 0; i < kr_n_racers; i++) {
		free(kr_racers[i].name);
		free(kr_racers[i].evidence);
		free(kr_racers[i].built);
		free(kr_racers[i].description);
	}
	free(kr_racers);
	kr_racers = NULL;
	kr_n_racers = 0;
	kr_racers_state = 0;
}

/*
 *  kr_desc_of_key()
 *	map a YAML metric key back to its text description, or NULL
 */
const char *kr_desc_of_key(const char *key)
{
	for (size_t i = 0; i < kr_n_learnt; i++)
		if (!strcmp(kr_learnt_desc[i].yaml_key, key))
			return kr_learnt_desc[i].description;
	for (size_t i = 0; i < sizeof(kr_known_desc) / sizeof(kr_known_desc[0]); i++)
		if (!strcmp(kr_known_desc[i].yaml_key, key))
			return kr_known_desc[i].description;
	return NULL;
}

/*
 *  kr_misc_stat_key()
 *	LKP stat key of a misc metric YAML key
 */
char *kr_misc_stat_key(const char *stressor, const char *yaml_key)
{
	const char *desc = kr_desc_of_key(yaml_key);
	char *norm, *key;

	if (!desc)
		return kr_asprintf("stress-ng.%s.%s", stressor, yaml_key);
	norm = kr_lkp_normalize(desc);
	key = kr_asprintf("stress-ng.%s.%s", stressor, norm);
	free(norm);
	return key;
}

/*
 *  kr_run_add_perf()
 *	add (or overwrite) a numeric stat of a run
 */
static void kr_run_add_perf(kr_run_t *run, char *key, double value)
{
	for (size_t i = 0; i < run->n_perf; i++) {
		if (!strcmp(run->perf[i].key, key)) {
			run->perf[i].value = value;
			free(key);
			return;
		}
	}
	if (run->n_perf == run->cap_perf) {
		run->cap_perf = run->cap_perf ? 2 * run->cap_perf : 32;
		run->perf = kr_xrealloc(run->perf, run->cap_perf, sizeof(*run->perf));
	}
	run->perf[run->n_perf].key = key;
	run->perf[run->n_perf].value = value;
	run->n_perf++;
}

/*
 *  kr_run_add_fail()
 *	add a function (failure) stat to a run, once
 */
static void kr_run_add_fail(kr_run_t *run, char *key)
{
	for (size_t i = 0; i < run->n_fails; i++) {
		if (!strcmp(run->fails[i], key)) {
			free(key);
			return;
		}
	}
	if (run->n_fails == run->cap_fails) {
		run->cap_fails = run->cap_fails ? 2 * run->cap_fails : 8;
		run->fails = kr_xrealloc(run->fails, run->cap_fails, sizeof(*run->fails));
	}
	run->fails[run->n_fails++] = key;
}

/*
 *  kr_run_free()
 *	release everything a run owns
 */
void kr_run_free(kr_run_t *run)
{
	for (size_t i = 0; i < run->n_perf; i++)
		free(run->perf[i].key);
	for (size_t i = 0; i < run->n_fails; i++)
		free(run->fails[i]);
	free(run->perf);
	free(run->fails);
	free(run->source);
	free(run->stressor);
	memset(run, 0, sizeof(*run));
}

/*
 *  kr_run_perf()
 *	look up a numeric stat of a run, NULL if absent
 */
const double *kr_run_perf(const kr_run_t *run, const char *key)
{
	for (size_t i = 0; i < run->n_perf; i++)
		if (!strcmp(run->perf[i].key, key))
			return &run->perf[i].value;
	return NULL;
}

/*
 *  kr_run_has_fail()
 *	true if a run shows a function stat
 */
bool kr_run_has_fail(const kr_run_t *run, const char *key)
{
	for (size_t i = 0; i < run->n_fails; i++)
		if (!strcmp(run->fails[i], key))
			return true;
	return false;
}

/*
 *  kr_number()
 *	parse a whole scalar as a finite number
 */
bool kr_number(const char *s, double *value)
{
	char *end;
	double v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return false;
	while (isspace((unsigned char)*end))
		end++;
	if (*end || !isfinite(v))
		return false;
	*value = v;
	return true;
}

/* what a kernel-log line of the text output gives (kr_klog_key()) */
enum { KR_KLOG_NONE, KR_KLOG_KEY, KR_KLOG_DERIVED };

/*
 *  kr_log_msg()
 *	the message of a stress-ng log line (after "stress-ng: <type>: [pid] ",
 *	or the whole line under --log-brief) without its newline and the " -"
 *	the stressor appends to keep a line out of LKP's 10/12 field shapes
 */
char *kr_log_msg(char *line)
{
	char *msg = line, *end;
	size_t n;

	if (!strncmp(line, "stress-ng: ", 11)) {
		end = strstr(line, "] ");
		if (end)
			msg = end + 2;
	}
	n = strcspn(msg, "\r\n");
	msg[n] = '\0';
	if (n >= 2 && !strcmp(msg + n - 2, " -"))
		msg[n - 2] = '\0';
	return msg;
}

/*
 *  kr_splat_head()
 *	true if a kernel message is one of the splat lines lkp-tests turns
 *	into dmesg.* keys (a subset of its etc/oops-pattern)
 */
static bool kr_splat_head(const char *msg)
{
	static const char *const heads[] = {
		"WARNING:", "BUG:", "kernel BUG at", "Oops:", "RIP:", "Kernel panic",
		"general protection fault", "UBSAN:", "KASAN:", "Unable to handle kernel",
	};
	static const char *const within[] = {
		"soft lockup", "hard LOCKUP", "detected stall", "blocked for more than",
		"list_add corruption", "list_del corruption", "invoked oom-killer",
		"page allocation failure", "refcount_t: ",
	};

	while (*msg == ' ')
		msg++;
	for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		if (!strncmp(msg, heads[i], strlen(heads[i])))
			return true;
	for (size_t i = 0; i < sizeof(within) / sizeof(within[0]); i++)
		if (strstr(msg, within[i]))
			return true;
	return false;
}

/*
 *  kr_lkp_error_id()
 *	lkp-tests' error id of a kernel message, approximated for the common
 *	splats: "WARNING: CPU: n PID: n at" becomes "WARNING: at", a hung
 *	task's name and a bad page's process go, "+0x../0x.." offsets go,
 *	hex words and numbers become '#', spaces next to a non-alphanumeric
 *	character go and the others become '_', trailing punctuation goes
 */
void kr_lkp_error_id(const char *msg, char *id, size_t len)
{
	char buf[512], tmp[512];
	const char *p;
	size_t n = 0, m = 0;

	while (*msg == ' ')
		msg++;
	if (!strncmp(msg, "WARNING: CPU: ", 14) && (p = strstr(msg, " at ")))
		snprintf(buf, sizeof(buf), "WARNING: at %s", p + 4);
	else if (!strncmp(msg, "INFO: task ", 11) && (p = strstr(msg, " blocked for more than")))
		snprintf(buf, sizeof(buf), "INFO: task%s", p);
	else if ((p = strstr(msg, "Bad page state in process")) != NULL)
		snprintf(buf, sizeof(buf), "%.*s", (int)(p - msg) + 25, msg);
	else if (!strncmp(msg, "RIP: ", 5) && (p = strchr(msg + 5, ':')) != NULL)
		snprintf(buf, sizeof(buf), "RIP:%s", p + 1);
	else
		snprintf(buf, sizeof(buf), "%s", msg);

	for (p = buf; *p && n + 1 < sizeof(tmp); ) {
		const bool start = p == buf || !isalnum((unsigned char)p[-1]);
		size_t hex, digits = 0;

		if (p[0] == '+' && p[1] == '0' && p[2] == 'x') {	/* +0x1a2/0x1c0 */
			p += 3;
			while (isxdigit((unsigned char)*p) || (p[0] == '/' && p[1] == '0' && p[2] == 'x'))
				p += (*p == '/') ? 3 : 1;
			continue;
		}
		if (start && p[0] == '0' && p[1] == 'x' && isxdigit((unsigned char)p[2])) {
			for (p += 2; isxdigit((unsigned char)*p); p++)
				;
			tmp[n++] = '#';
			continue;
		}
		for (hex = 0; isxdigit((unsigned char)p[hex]); hex++)
			digits += isdigit((unsigned char)p[hex]) != 0;
		if (start && digits && hex >= 8 && !isalnum((unsigned char)p[hex])) {
			tmp[n++] = '#';			/* a pointer or pfn */
			p += hex;
			continue;
		}
		if (isdigit((unsigned char)*p)) {
			tmp[n++] = '#';
			while (isdigit((unsigned char)*p))
				p++;
			continue;
		}
		tmp[n++] = *p++;
	}
	tmp[n] = '\0';
	for (size_t i = 0; i < n && m + 1 < len; i++) {
		if (tmp[i] == ' ' || tmp[i] == '\t') {
			size_t j = i;

			while (j < n && (tmp[j] == ' ' || tmp[j] == '\t'))
				j++;
			if (m && j < n && isalnum((unsigned char)id[m - 1]) && isalnum((unsigned char)tmp[j]))
				id[m++] = '_';
			i = j - 1;
			continue;
		}
		id[m++] = tmp[i];
	}
	while (m && strchr(" :,.;!-#=", id[m - 1]))
		m--;
	id[m] = '\0';
}

/*
 *  kr_klog_key()
 *	the LKP key a kernel-log line of the stressor's output names, the
 *	one place to adapt to the core's -K format.  Returns KR_KLOG_KEY for
 *	a line that names the key ("<name>: kernel <kind>: <key>", "<name>:
 *	kernel-log key: <key> (count N)", the standalone watcher's, now in
 *	the core's -K as "klog-check: ..."), KR_KLOG_DERIVED for stress-ng's
 *	"klog-check: <kind>: [<secs>] '<message>'" (dmesg.<id> of a splat
 *	line, kmsg.<id> of another error line, the id approximated by
 *	kr_lkp_error_id()), KR_KLOG_NONE for other lines
 */
int kr_klog_key(const char *msg, char *key, size_t len)
{
	static const char *const kinds[] = {
		"warning", "BUG", "oops", "lockup", "RCU stall", "hung task", "memory corruption",
		"sanitizer report", "lockdep report", "panic", "RIP",
	};
	char id[512];
	const char *p;

	if ((p = strstr(msg, ": kernel-log key: ")) != NULL) {
		p += 18;
		snprintf(key, len, "dmesg.%.*s", (int)strcspn(p, " "), p);
		return p[0] ? KR_KLOG_KEY : KR_KLOG_NONE;
	}
	if ((p = strstr(msg, ": kernel ")) != NULL) {
		p += 9;
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			const size_t k = strlen(kinds[i]);

			if (!strncmp(p, kinds[i], k) && p[k] == ':' && p[k + 1] == ' ' && p[k + 2]) {
				p += k + 2;
				if (strchr(p, ' ')) {		/* a message, not a key */
					kr_lkp_error_id(p, id, sizeof(id));
					p = id;
				}
				snprintf(key, len, "%s%s", strncmp(p, "dmesg.", 6) ? "dmesg." : "", p);
				return KR_KLOG_KEY;
			}
		}
	}
	if ((p = strstr(msg, "klog-check: ")) != NULL) {
		const char *kind = p + 12, *q = strstr(kind, ": [");
		const char *text = q ? strstr(q, "] '") : NULL;
		size_t n;

		if (!q || !text || strchr(kind, ':') != q)
			return KR_KLOG_NONE;
		text += 3;
		n = strlen(text);
		if (n && text[n - 1] == '\'')
			n--;
		snprintf(id, sizeof(id), "%.*s", (int)n, text);
		if (kr_splat_head(id)) {
			kr_lkp_error_id(id, id, sizeof(id));
			snprintf(key, len, "dmesg.%s", id);
			return KR_KLOG_DERIVED;
		}
		if (!strncmp(kind, "error:", 6) || !strncmp(kind, "critical:", 9) ||
		    !strncmp(kind, "alert:", 6) || !strncmp(kind, "emergency:", 10)) {
			kr_lkp_error_id(id, id, sizeof(id));
			snprintf(key, len, "kmsg.%s", id);
			return KR_KLOG_DERIVED;
		}
	}
	return KR_KLOG_NONE;
}

/*
 *  kr_text_pairs()
 *	"k=N,k=N..." into <prefix><k> stats; with evidence set the first pair
 *	is <prefix>evidence; a failure key (failures, merge-timeouts,
 *	partial-merges) that is not 0 is a function stat instead
 */
static void kr_text_pairs(char *list, kr_run_t *run, const char *prefix, bool evidence)
{
	static const char *const failure_keys[] = { "failures", "merge-timeouts", "partial-merges" };
	char *save = NULL;

	for (char *kv = strtok_r(list, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		bool failure = false;
		double v;

		if (!eq)
			continue;
		*eq = '\0';
		if (!*kv || strchr(kv, ' ') || !kr_number(eq + 1, &v))
			continue;
		for (size_t i = 0; i < sizeof(failure_keys) / sizeof(failure_keys[0]); i++)
			failure |= !strcmp(kv, failure_keys[i]);
		if (evidence)
			kr_run_add_perf(run, kr_asprintf("%sevidence", prefix), v);
		else if (!failure)
			kr_run_add_perf(run, kr_asprintf("%s%s", prefix, kv), v);
		else if (v != 0.0)
			kr_run_add_fail(run, kr_asprintf("%s%s", prefix, kv));
		evidence = false;
	}
}

/*
 *  kr_text_racer()
 *	"racer R reached: ops=N ev=N,k=N...", "racer R NOT reached: ops=N
 *	ev=0,k=N... (why)" or "racer R skipped: why" into
 *	<stressor>.racer.R.{ops,evidence,k} and a not_reached or skipped
 *	function stat (a racer the kernel or build lacks is a skip)
 */
static void kr_text_racer(const char *stressor, char *rest, kr_run_t *run)
{
	char name[64], *prefix, *p;
	int pos = 0;
	double ops;

	if (sscanf(rest, "%63s %n", name, &pos) != 1 || !pos)
		return;
	rest += pos;
	if (!strncmp(rest, "skipped: ", 9)) {
		kr_run_add_fail(run, kr_asprintf("%s.racer.%s.skipped", stressor, name));
		return;
	}
	if (!strncmp(rest, "NOT reached: ", 13))
		kr_run_add_fail(run, kr_asprintf("%s.racer.%s.not_reached", stressor, name));
	else if (strncmp(rest, "reached: ", 9))
		return;
	p = strstr(rest, "ops=");
	if (!p || sscanf(p + 4, "%lf", &ops) != 1)
		return;
	prefix = kr_asprintf("%s.racer.%s.", stressor, name);
	kr_run_add_perf(run, kr_asprintf("%sops", prefix), ops);
	p = strchr(p, ' ');
	if (p) {
		p[strcspn(p, "(")] = '\0';
		kr_text_pairs(p + 1, run, prefix, true);
	}
	free(prefix);
}

/*
 *  kr_text_latency()
 *	"<what> <unit>secs ...: p50=X p95=X p99=X mean=X stdev=X samples=N"
 *	into <stressor>.latency.<what>-<unit>secs.{p50,...} (not samples)
 */
static void kr_text_latency(const char *stressor, char *label, char *stats, kr_run_t *run)
{
	char first[64] = "", unit[64] = "", *save = NULL;
	const char *w;

	for (w = strtok_r(label, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		const size_t n = strlen(w);

		if (!*first)
			snprintf(first, sizeof(first), "%s", w);
		else if (n >= 4 && !strcmp(w + n - 4, "secs")) {
			snprintf(unit, sizeof(unit), "%s", w);
			break;
		}
	}
	if (!*first || !*unit)
		return;
	for (w = strtok_r(stats, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		const char *eq = strchr(w, '=');
		double v;

		if (!eq || !strncmp(w, "samples=", 8) || !kr_number(eq + 1, &v))
			continue;
		kr_run_add_perf(run, kr_asprintf("%s.latency.%s-%s.%.*s", stressor, first, unit,
			(int)(eq - w), w), v);
	}
}

/*
 *  kr_text_line()
 *	one message of the stressor's text output into stats of a run;
 *	kernel-log keys derived from a message go to *derived (used only
 *	when no line names its key: see kr_apply_text())
 */
void kr_text_line(char *msg, kr_run_t *run, kr_run_t *derived, bool *named)
{
	char stressor[64], key[512], *rest, *p;
	const size_t n = strcspn(msg, ": ");

	switch (kr_klog_key(msg, key, sizeof(key))) {
	case KR_KLOG_KEY:
		kr_run_add_fail(run, kr_xstrdup(key));
		*named = true;
		return;
	case KR_KLOG_DERIVED:
		kr_run_add_fail(derived, kr_xstrdup(key));
		return;
	default:
		break;
	}
	if (!n || n >= sizeof(stressor) || msg[n] != ':' || msg[n + 1] != ' ')
		return;
	snprintf(stressor, sizeof(stressor), "%.*s", (int)n, msg);
	rest = msg + n + 2;
	if (!strncmp(rest, "totals: ", 8)) {
		char *prefix = kr_asprintf("%s.", stressor);

		kr_text_pairs(rest + 8, run, prefix, false);
		free(prefix);
	} else if (!strncmp(rest, "racer ", 6)) {
		kr_text_racer(stressor, rest + 6, run);
	} else if ((p = strstr(rest, ": p50=")) != NULL && strstr(rest, "secs")) {
		*p = '\0';
		kr_text_latency(stressor, rest, p + 2, run);
	} else if (!strncmp(rest, "kernel-log: ", 12) && strstr(rest, " records lost")) {
		run->lost_records += strtol(rest + 12, NULL, 10);
	} else if (isdigit((unsigned char)*rest) && strstr(rest, " kernel log records lost")) {
		run->lost_records += strtol(rest, NULL, 10);
	}
}

/*
 *  kr_apply_text()
 *	the stressor's text output next to a run's YAML (run-<i>.txt): its
 *	report lines and kernel-log lines.  Keys derived from the messages
 *	count only if no line names a key: where the core prints both, the
 *	named key is lkp-tests' exact one and the derived one could differ.
 */
void kr_apply_text(const char *path, kr_run_t *run)
{
	FILE *fp = fopen(path, "r");
	kr_run_t derived;
	char line[2048];
	bool named = false;

	if (!fp)
		return;
	memset(&derived, 0, sizeof(derived));
	run->text_present = true;
	while (fgets(line, sizeof(line), fp))
		kr_text_line(kr_log_msg(line), run, &derived, &named);
	(void)fclose(fp);
	for (size_t i = 0; i < derived.n_fails && !named; i++) {
		kr_run_add_fail(run, derived.fails[i]);
		derived.fails[i] = NULL;
	}
	kr_run_free(&derived);
}

/*
 *  kr_scalar()
 *	the text of a scalar node, NULL for other nodes
 */
static const char *kr_scalar(const yaml_node_t *node)
{
	if (!node || node->type != YAML_SCALAR_NODE)
		return NULL;
	return (const char *)node->data.scalar.value;
}

/*
 *  kr_map_get()
 *	the value node of a key in a mapping node, NULL if absent
 */
static yaml_node_t *kr_map_get(yaml_document_t *doc, const yaml_node_t *map, const char *key)
{
	const yaml_node_pair_t *pair;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		const char *k = kr_scalar(yaml_document_get_node(doc, pair->key));

		if (k && !strcmp(k, key))
			return yaml_document_get_node(doc, pair->value);
	}
	return NULL;
}

/*
 *  kr_node_number()
 *	numeric value of a scalar node
 */
static bool kr_node_number(const yaml_node_t *node, double *value)
{
	return kr_number(kr_scalar(node), value);
}

/*
 *  kr_is_std_key()
 *	true for the standard (non misc metric) keys of a metrics entry
 */
static bool kr_is_std_key(const char *key)
{
	for (size_t i = 0; i < sizeof(kr_std_keys) / sizeof(kr_std_keys[0]); i++)
		if (!strcmp(kr_std_keys[i], key))
			return true;
	return false;
}

/*
 *  kr_parse_metrics_entry()
 *	turn one "- stressor:" entry into LKP stress-ng.<name>.* stats
 */
static int kr_parse_metrics_entry(yaml_document_t *doc, yaml_node_t *entry, kr_run_t *run,
				  char *err, size_t errlen)
{
	const char *name = kr_scalar(kr_map_get(doc, entry, "stressor"));
	const yaml_node_pair_t *pair;
	double v;

	if (!name || !*name) {
		snprintf(err, errlen, "metrics entry without a stressor name");
		return -1;
	}
	if (!run->stressor)
		run->stressor = kr_xstrdup(name);
	if (kr_node_number(kr_map_get(doc, entry, "bogo-ops"), &v)) {
		if (v == 0.0)
			kr_run_add_fail(run, kr_asprintf("stress-ng.%s.fail", name));
		else
			kr_run_add_perf(run, kr_asprintf("stress-ng.%s.ops", name), v);
	}
	if (kr_node_number(kr_map_get(doc, entry, "bogo-ops-per-second-real-time"), &v) && v != 0.0)
		kr_run_add_perf(run, kr_asprintf("stress-ng.%s.ops_per_sec", name), v);

	for (pair = entry->data.mapping.pairs.start; pair < entry->data.mapping.pairs.top; pair++) {
		const char *k = kr_scalar(yaml_document_get_node(doc, pair->key));
		char *key;

		if (!k || kr_is_std_key(k))
			continue;
		if (!kr_node_number(yaml_document_get_node(doc, pair->value), &v))
			continue;
		key = kr_misc_stat_key(name, k);
		if (v == 0.0) {
			/* LKP: a misc metric printed as 0.00 is a failure stat */
			kr_run_add_fail(run, kr_asprintf("%s.fail", key));
			free(key);
		} else {
			kr_run_add_perf(run, key, v);
		}
	}
	return 0;
}

/*
 *  kr_parse_document()
 *	turn one YAML document's metrics: section into a run; -1 (with err)
 *	if it has none.  Other top-level sections are not read.
 */
int kr_parse_document(yaml_document_t *doc, kr_run_t *run, char *err, size_t errlen)
{
	yaml_node_t *root = yaml_document_get_root_node(doc);
	yaml_node_t *metrics = kr_map_get(doc, root, "metrics");
	yaml_node_item_t *it;

	if (!root || root->type != YAML_MAPPING_NODE) {
		snprintf(err, errlen, "top level is not a mapping");
		return -1;
	}
	if (!metrics || metrics->type != YAML_SEQUENCE_NODE ||
	    metrics->data.sequence.items.start == metrics->data.sequence.items.top) {
		snprintf(err, errlen, "no 'metrics:' list");
		return -1;
	}
	for (it = metrics->data.sequence.items.start; it < metrics->data.sequence.items.top; it++) {
		yaml_node_t *entry = yaml_document_get_node(doc, *it);

		if (!entry || entry->type != YAML_MAPPING_NODE) {
			snprintf(err, errlen, "metrics entry is not a mapping");
			return -1;
		}
		if (kr_parse_metrics_entry(doc, entry, run, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/*
 *  kr_sibling()
 *	path with the ".yaml"/".yml" suffix replaced by another suffix
 */
static char *kr_sibling(const char *path, const char *suffix)
{
	const char *dot = strrchr(path, '.');
	const char *slash = strrchr(path, '/');

	if (!dot || (slash && dot < slash))
		return kr_asprintf("%s%s", path, suffix);
	return kr_asprintf("%.*s%s", (int)(dot - path), path, suffix);
}

/*
 *  kr_sibling_lines()
 *	hand each line of the run's sibling file <yaml_path - .yaml><suffix>
 *	(absent: none) to fn
 */
static void kr_sibling_lines(const char *yaml_path, const char *suffix,
	void (*fn)(const char *line, kr_run_t *run), kr_run_t *run)
{
	char *name = kr_sibling(yaml_path, suffix);
	FILE *fp = fopen(name, "r");
	char line[512];

	free(name);
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp))
		fn(line, run);
	(void)fclose(fp);
}

/*
 *  kr_env_line()
 *	a run-<i>.env written by "ksm-report run" records the exit status:
 *	non-zero becomes LKP's last_state.test.stress-ng.exit_code.<N>
 */
static void kr_env_line(const char *line, kr_run_t *run)
{
	int code;

	if (sscanf(line, "exit_code=%d", &code) == 1 && code != 0)
		kr_run_add_fail(run, kr_asprintf("last_state.test.stress-ng.exit_code.%d", code));
}

/*
 *  kr_summary_line()
 *	a run-<i>.summary written by "ksm-qemu --series": note TCG emulation
 */
static void kr_summary_line(const char *line, kr_run_t *run)
{
	if (!strncmp(line, "accel: tcg", 10))
		run->emulated = true;
}

/*
 *  kr_side_add_run()
 *	append a run to a side (taking ownership of its contents)
 */
static void kr_side_add_run(kr_side_t *side, kr_run_t *run)
{
	if (side->n_runs == side->cap_runs) {
		side->cap_runs = side->cap_runs ? 2 * side->cap_runs : 8;
		side->runs = kr_xrealloc(side->runs, side->cap_runs, sizeof(*side->runs));
	}
	side->runs[side->n_runs++] = *run;
	memset(run, 0, sizeof(*run));
}

/*
 *  kr_load_file()
 *	load every document of a YAML file as a run; on any error report it
 *	naming the file, keep nothing from that file and return -1
 */
int kr_load_file(const char *path, kr_side_t *side)
{
	yaml_parser_t parser;
	kr_run_t *runs = NULL;
	size_t n = 0;
	int ret = 0;
	FILE *fp;
	char *txt;

	fp = fopen(path, "r");
	if (!fp) {
		fprintf(stderr, "ksm-report: %s: cannot open: errno=%d (%s), skipping\n",
			path, errno, strerror(errno));
		return -1;
	}
	txt = kr_sibling(path, ".txt");
	kr_learn_text_log(txt);
	free(txt);

	if (!yaml_parser_initialize(&parser)) {
		fprintf(stderr, "ksm-report: %s: cannot initialise libyaml parser\n", path);
		(void)fclose(fp);
		return -1;
	}
	yaml_parser_set_input_file(&parser, fp);
	for (;;) {
		yaml_document_t doc;
		char err[256] = "";
		kr_run_t run;

		if (!yaml_parser_load(&parser, &doc)) {
			fprintf(stderr, "ksm-report: %s:%zu:%zu: malformed YAML: %s%s%s, skipping file\n",
				path, parser.problem_mark.line + 1, parser.problem_mark.column + 1,
				parser.problem ? parser.problem : "parse error",
				parser.context ? " " : "", parser.context ? parser.context : "");
			ret = -1;
			break;
		}
		if (!yaml_document_get_root_node(&doc)) {
			yaml_document_delete(&doc);
			break;
		}
		memset(&run, 0, sizeof(run));
		if (kr_parse_document(&doc, &run, err, sizeof(err)) < 0) {
			fprintf(stderr, "ksm-report: %s: document %zu: %s, skipping file\n",
				path, n + 1, err);
			kr_run_free(&run);
			yaml_document_delete(&doc);
			ret = -1;
			break;
		}
		yaml_document_delete(&doc);
		run.source = n ? kr_asprintf("%s#%zu", path, n + 1) : kr_xstrdup(path);
		runs = kr_xrealloc(runs, n + 1, sizeof(*runs));
		runs[n++] = run;
	}
	yaml_parser_delete(&parser);
	(void)fclose(fp);

	if (!ret && !n) {
		fprintf(stderr, "ksm-report: %s: empty file, no YAML document, skipping\n", path);
		ret = -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!ret) {
			if (n == 1) {
				char *txt = kr_sibling(path, ".txt");

				kr_apply_text(txt, &runs[i]);
				free(txt);
				kr_sibling_lines(path, ".env", kr_env_line, &runs[i]);
				kr_sibling_lines(path, ".summary", kr_summary_line, &runs[i]);
			}
			kr_side_add_run(side, &runs[i]);
		} else {
			kr_run_free(&runs[i]);
		}
	}
	free(runs);
	if (ret)
		side->bad_files++;
	else
		side->good_files++;
	return ret;
}

/*
 *  kr_is_yaml_name()
 *	true for *.yaml / *.yml file names
 */
static bool kr_is_yaml_name(const char *name)
{
	const size_t len = strlen(name);

	return (len > 5 && !strcmp(name + len - 5, ".yaml")) ||
	       (len > 4 && !strcmp(name + len - 4, ".yml"));
}

/*
 *  kr_cmp_str()
 *	qsort helper: version-aware order so run-10 follows run-9
 */
static int kr_cmp_str(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/*
 *  kr_load_side()
 *	load a directory of YAML files (or a single file); -1 if nothing usable
 */
int kr_load_side(const char *path, kr_side_t *side)
{
	struct stat st;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	DIR *dir;

	side->path = path;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "ksm-report: %s: cannot access: errno=%d (%s)\n",
			path, errno, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (kr_load_file(path, side) < 0 || !side->n_runs) {
			fprintf(stderr, "ksm-report: %s: no usable run\n", path);
			return -1;
		}
		return 0;
	}
	dir = opendir(path);
	if (!dir) {
		fprintf(stderr, "ksm-report: %s: cannot open directory: errno=%d (%s)\n",
			path, errno, strerror(errno));
		return -1;
	}
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.' || !kr_is_yaml_name(de->d_name))
			continue;
		names = kr_xrealloc(names, n + 1, sizeof(*names));
		names[n++] = kr_asprintf("%s/%s", path, de->d_name);
	}
	(void)closedir(dir);
	if (n)
		qsort(names, n, sizeof(*names), kr_cmp_str);
	for (size_t i = 0; i < n; i++) {
		(void)kr_load_file(names[i], side);
		free(names[i]);
	}
	free(names);
	if (!n) {
		fprintf(stderr, "ksm-report: %s: no *.yaml files in directory\n", path);
		return -1;
	}
	if (!side->n_runs) {
		fprintf(stderr, "ksm-report: %s: none of %zu YAML files is usable\n", path, n);
		return -1;
	}
	return 0;
}

/*
 *  kr_side_free()
 *	release all runs of a side
 */
void kr_side_free(kr_side_t *side)
{
	for (size_t i = 0; i < side->n_runs; i++)
		kr_run_free(&side->runs[i]);
	free(side->runs);
	side->runs = NULL;
	side->n_runs = side->cap_runs = 0;
}

/*
 *  kr_cmp_double()
 *	qsort helper for doubles
 */
static int kr_cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 *  kr_samples_summarise()
 *	arithmetic mean, population stddev, and LKP's trimmed min/median/max
 */
void kr_samples_summarise(kr_samples_t *s)
{
	double sum = 0.0, sq = 0.0, *sorted;
	size_t margin, lo, hi;

	s->mean = s->stddev = s->min = s->median = s->max = 0.0;
	if (!s->n)
		return;
	for (size_t i = 0; i < s->n; i++)
		sum += s->v[i];
	s->mean = sum / (double)s->n;
	for (size_t i = 0; i < s->n; i++)
		sq += (s->v[i] - s->mean) * (s->v[i] - s->mean);
	s->stddev = sqrt(sq / (double)s->n);

	sorted = kr_xmalloc(s->n * sizeof(*sorted));
	memcpy(sorted, s->v, s->n * sizeof(*sorted));
	qsort(sorted, s->n, sizeof(*sorted), kr_cmp_double);
	margin = s->n >> 5;		/* LKP MARGIN_SHIFT */
	if (margin > 3)
		margin = 3;
	lo = margin;
	hi = s->n - margin;		/* exclusive */
	s->min = sorted[lo];
	s->max = sorted[hi - 1];
	s->median = sorted[lo + (hi - lo) / 2];
	free(sorted);
}

/*
 *  kr_lkp_changed()
 *	LKP::ChangedStat#change?: medians separated from the other side
 */
bool kr_lkp_changed(const kr_samples_t *base, const kr_samples_t *new)
{
	if (base->min > new->median && base->median > new->max)
		return true;
	if (new->min > base->median && new->median > base->max)
		return true;
	return false;
}

/*
 *  kr_lkp_ratio()
 *	ratio of the higher to the lower median, capped at MAX_RATIO
 */
double kr_lkp_ratio(const kr_samples_t *base, const kr_samples_t *new)
{
	const double hi = base->median > new->median ? base->median : new->median;
	const double lo = base->median > new->median ? new->median : base->median;
	double ratio = KR_MAX_RATIO;

	if (lo > 0.0)
		ratio = hi / lo;
	return ratio > KR_MAX_RATIO ? KR_MAX_RATIO : ratio;
}

/*
 *  kr_stat_direction()
 *	+1 higher is better (*_per_sec*), -1 lower is better (latencies, times)
 */
int kr_stat_direction(const char *key)
{
	const size_t len = strlen(key);

	/* *_per_sec KPIs (quiet_CPU-time_unmerge_MB_per_sec) and older throughputs (MB_per_sec_unmerge_rate) */
	if ((len > 8 && !strcmp(key + len - 8, "_per_sec")) || strstr(key, "_per_sec_"))
		return 1;
	if (strstr(key, ".latency.") || strstr(key, "secs_per_") ||
	    strstr(key, "millisecs") || strstr(key, "nanosecs"))
		return -1;
	return 0;
}

/*
 *  kr_row_compute()
 *	fill in mean, stddev, %change and LKP significance of a row
 */
void kr_row_compute(kr_row_t *row)
{
	double base_mean;

	kr_samples_summarise(&row->base);
	kr_samples_summarise(&row->new);
	base_mean = row->base.mean == 0.0 ? 1e-100 : row->base.mean;
	row->change = 100.0 * (row->new.mean - row->base.mean) / base_mean;
	row->ratio = kr_lkp_ratio(&row->base, &row->new);
	row->direction = kr_stat_direction(row->key);
	row->significant = false;
	if (row->base.n < KR_MIN_RUNS && row->new.n < KR_MIN_RUNS)
		return;
	if (!row->base.n || !row->new.n)
		return;
	if (!kr_lkp_changed(&row->base, &row->new))
		return;
	if (!(row->ratio > KR_MIN_RATIO))
		return;
	row->significant = true;
	row->regression = (row->direction * (row->new.median - row->base.median)) < 0.0;
}

/*
 *  kr_fmt_value()
 *	LKP value column: %.2f below 1000, %.4g above 1e8, else integer
 */
void kr_fmt_value(char *buf, size_t len, double v)
{
	if (fabs(v) < 1000.0)
		snprintf(buf, len, "%*.2f", KR_ABS_WIDTH, v);
	else if (fabs(v) > 100000000.0)
		snprintf(buf, len, "%*.4g", KR_ABS_WIDTH, v);
	else
		snprintf(buf, len, "%*lld", KR_ABS_WIDTH, (long long)trunc(v));
}

/*
 *  kr_fmt_stddev()
 *	LKP "± N%" column: truncated percent, only above 2%, else blanks
 */
void kr_fmt_stddev(char *buf, size_t len, const kr_samples_t *s)
{
	double pct = s->stddev;

	if (s->n < 2) {
		snprintf(buf, len, "%*s", KR_ERR_WIDTH, "");
		return;
	}
	if (s->mean != 0.0)
		pct = 100.0 * s->stddev / s->mean;
	if (pct > 2.0)
		snprintf(buf, len, " \u00b1%*d%%", KR_ERR_WIDTH - 3, (int)trunc(pct));
	else
		snprintf(buf, len, "%*s", KR_ERR_WIDTH, "");
}

/*
 *  kr_fmt_change()
 *	LKP %change column: %+.1f%%, or %+.2g%% at or above 100000%
 */
void kr_fmt_change(char *buf, size_t len, double change)
{
	if (fabs(change) < 100000.0)
		snprintf(buf, len, "%+*.1f%% ", KR_REL_WIDTH, change);
	else
		snprintf(buf, len, "%+*.2g%% ", KR_REL_WIDTH, change);
}

/*
 *  kr_format_row()
 *	one line of the %stddev/%change table, LKP layout plus a '*' mark
 */
void kr_format_row(char *buf, size_t len, const kr_row_t *row)
{
	char bv[64], bs[32], ch[64], nv[64], ns[32];

	kr_fmt_value(bv, sizeof(bv), row->base.mean);
	kr_fmt_stddev(bs, sizeof(bs), &row->base);
	kr_fmt_change(ch, sizeof(ch), row->change);
	kr_fmt_value(nv, sizeof(nv), row->new.mean);
	kr_fmt_stddev(ns, sizeof(ns), &row->new);
	snprintf(buf, len, "%s%s%s%s%s  %s%s", bv, bs, ch, nv, ns, row->key,
		 row->significant ? (row->regression ? "  * regression" :
				     (row->direction ? "  * improvement" : "  * changed")) : "");
}

/*
 *  kr_format_fail_row()
 *	one line of the fail:runs table, LKP layout
 */
void kr_format_fail_row(char *buf, size_t len, const kr_fail_row_t *row,
			size_t runs_base, size_t runs_new)
{
	char fb[32], fn[32];

	if (row->f_base)
		snprintf(fb, sizeof(fb), "%*zu", KR_ABS_WIDTH + 1, row->f_base);
	else
		snprintf(fb, sizeof(fb), "%*s", KR_ABS_WIDTH + 1, "");
	if (row->f_new)
		snprintf(fn, sizeof(fn), "%*zu", KR_ABS_WIDTH + 1, row->f_new);
	else
		snprintf(fn, sizeof(fn), "%*s", KR_ABS_WIDTH + 1, "");
	snprintf(buf, len, "%s:%-*zu%*.0f%% %s:%-*zu  %s", fb, KR_ERR_WIDTH - 2, runs_base,
		 KR_REL_WIDTH, row->reproduction, fn, KR_ERR_WIDTH - 2, runs_new, row->key);
}

/*
 *  kr_key_list_add()
 *	add a key to a list of unique keys (pointers borrowed from runs)
 */
static void kr_key_list_add(const char ***list, size_t *n, const char *key)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*list)[i], key))
			return;
	*list = kr_xrealloc(*list, *n + 1, sizeof(**list));
	(*list)[(*n)++] = key;
}

/*
 *  kr_collect_samples()
 *	the values of a stat over all runs of a side that have it
 */
static void kr_collect_samples(const kr_side_t *side, const char *key, kr_samples_t *s)
{
	s->v = kr_xmalloc((side->n_runs ? side->n_runs : 1) * sizeof(*s->v));
	s->n = 0;
	for (size_t i = 0; i < side->n_runs; i++) {
		const double *v = kr_run_perf(&side->runs[i], key);

		if (v)
			s->v[s->n++] = *v;
	}
}

/*
 *  kr_is_ops_per_sec()
 *	true for the stressor's ops_per_sec key
 */
static bool kr_is_ops_per_sec(const char *key)
{
	const size_t len = strlen(key);

	return !strncmp(key, "stress-ng.", 10) && len > 12 &&
	       !strcmp(key + len - 12, ".ops_per_sec");
}

/*
 *  kr_cmp_rows()
 *	ops_per_sec first, then by |%change| descending, then by key
 */
static int kr_cmp_rows(const void *a, const void *b)
{
	const kr_row_t *x = a, *y = b;
	const bool hx = kr_is_ops_per_sec(x->key), hy = kr_is_ops_per_sec(y->key);

	if (hx != hy)
		return hx ? -1 : 1;
	if (fabs(x->change) != fabs(y->change))
		return fabs(x->change) > fabs(y->change) ? -1 : 1;
	return strcmp(x->key, y->key);
}

/*
 *  kr_cmp_fail_rows()
 *	fail table order: by key
 */
static int kr_cmp_fail_rows(const void *a, const void *b)
{
	return strcmp(((const kr_fail_row_t *)a)->key, ((const kr_fail_row_t *)b)->key);
}

/*
 *  kr_all_zero()
 *	true if every sample is zero
 */
static bool kr_all_zero(const kr_samples_t *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] != 0.0)
			return false;
	return true;
}

/* result of a comparison, for printing, SVG and tests */
typedef struct {
	kr_row_t *rows;
	size_t n_rows;
	kr_fail_row_t *fails;
	size_t n_fails;
	const char **only_base;
	size_t n_only_base;
	const char **only_new;
	size_t n_only_new;
} kr_compare_t;

/*
 *  kr_compare_build()
 *	compute every row of the two tables
 */
void kr_compare_build(const kr_side_t *base, const kr_side_t *new, kr_compare_t *cmp)
{
	const char **keys = NULL, **fkeys = NULL;
	size_t n_keys = 0, n_fkeys = 0;
	const kr_side_t *sides[2] = { base, new };

	memset(cmp, 0, sizeof(*cmp));
	for (size_t s = 0; s < 2; s++) {
		for (size_t r = 0; r < sides[s]->n_runs; r++) {
			const kr_run_t *run = &sides[s]->runs[r];

			for (size_t i = 0; i < run->n_perf; i++)
				kr_key_list_add(&keys, &n_keys, run->perf[i].key);
			for (size_t i = 0; i < run->n_fails; i++)
				kr_key_list_add(&fkeys, &n_fkeys, run->fails[i]);
		}
	}
	cmp->rows = kr_xmalloc((n_keys ? n_keys : 1) * sizeof(*cmp->rows));
	for (size_t k = 0; k < n_keys; k++) {
		kr_row_t row;

		memset(&row, 0, sizeof(row));
		row.key = keys[k];
		kr_collect_samples(base, keys[k], &row.base);
		kr_collect_samples(new, keys[k], &row.new);
		if (!row.base.n || !row.new.n) {
			if (row.base.n)
				kr_key_list_add(&cmp->only_base, &cmp->n_only_base, keys[k]);
			else
				kr_key_list_add(&cmp->only_new, &cmp->n_only_new, keys[k]);
			free(row.base.v);
			free(row.new.v);
			continue;
		}
		if (kr_all_zero(&row.base) && kr_all_zero(&row.new)) {
			/* LKP's dump-stat drops stats that are 0 in every sample */
			free(row.base.v);
			free(row.new.v);
			continue;
		}
		kr_row_compute(&row);
		cmp->rows[cmp->n_rows++] = row;
	}
	qsort(cmp->rows, cmp->n_rows, sizeof(*cmp->rows), kr_cmp_rows);

	cmp->fails = kr_xmalloc((n_fkeys ? n_fkeys : 1) * sizeof(*cmp->fails));
	for (size_t k = 0; k < n_fkeys; k++) {
		kr_fail_row_t *f = &cmp->fails[cmp->n_fails++];

		f->key = fkeys[k];
		f->f_base = f->f_new = 0;
		for (size_t r = 0; r < base->n_runs; r++)
			f->f_base += kr_run_has_fail(&base->runs[r], fkeys[k]);
		for (size_t r = 0; r < new->n_runs; r++)
			f->f_new += kr_run_has_fail(&new->runs[r], fkeys[k]);
		f->reproduction = 100.0 * ((double)f->f_new / (double)new->n_runs -
					   (double)f->f_base / (double)base->n_runs);
	}
	qsort(cmp->fails, cmp->n_fails, sizeof(*cmp->fails), kr_cmp_fail_rows);
	free(keys);
	free(fkeys);
}

/*
 *  kr_compare_free()
 *	release a comparison
 */
void kr_compare_free(kr_compare_t *cmp)
{
	for (size_t i = 0; i < cmp->n_rows; i++) {
		free(cmp->rows[i].base.v);
		free(cmp->rows[i].new.v);
	}
	free(cmp->rows);
	free(cmp->fails);
	free(cmp->only_base);
	free(cmp->only_new);
	memset(cmp, 0, sizeof(*cmp));
}

/*
 *  kr_side_label()
 *	column label of a side: its last path component, cut to width
 */
static void kr_side_label(const char *path, char *buf, size_t width)
{
	char tmp[PATH_MAX];
	const char *base;
	size_t len;

	snprintf(tmp, sizeof(tmp), "%s", path);
	len = strlen(tmp);
	while (len > 1 && tmp[len - 1] == '/')
		tmp[--len] = '\0';
	base = strrchr(tmp, '/');
	base = base ? base + 1 : tmp;
	snprintf(buf, width + 1, "%s", base);
}

/*
 *  kr_print_side_notes()
 *	runs, skipped files and kernel-log coverage of a side
 */
static void kr_print_side_notes(FILE *out, const char *what, const kr_side_t *side)
{
	size_t lost = 0, absent = 0, emulated = 0;

	for (size_t i = 0; i < side->n_runs; i++) {
		if (side->runs[i].emulated)
			emulated++;
		if (!side->runs[i].text_present)
			absent++;
		if (side->runs[i].lost_records > 0)
			lost++;
	}
	fprintf(out, "%s: %s: %zu run%s", what, side->path, side->n_runs,
		side->n_runs == 1 ? "" : "s");
	if (side->bad_files)
		fprintf(out, ", %zu bad file%s skipped", side->bad_files,
			side->bad_files == 1 ? "" : "s");
	if (absent)
		fprintf(out, ", %zu without a text output (no racer, latency or kernel-log stats)",
			absent);
	if (lost)
		fprintf(out, ", kernel-log records lost in %zu", lost);
	if (emulated)
		fprintf(out, ", %zu under qemu TCG (software emulation: performance "
			"figures are not meaningful, compare pass/fail and kernel-log)", emulated);
	fprintf(out, "\n");
}

/*
 *  kr_print_only()
 *	one note line for the stats present on one side only
 */
static void kr_print_only(FILE *out, const char *side, const char **keys, size_t n)
{
	if (!n)
		return;
	fprintf(out, "note: %zu stat%s only in %s runs (not compared):", n, n == 1 ? "" : "s", side);
	for (size_t i = 0; i < n && i < 4; i++)
		fprintf(out, "%s %s", i ? "," : "", keys[i]);
	fprintf(out, "%s\n", n > 4 ? ", ..." : "");
}

/*
 *  kr_print_racers()
 *	what each racer of the fail table does and proves (build/ksm-racers)
 */
static void kr_print_racers(FILE *out, const kr_compare_t *cmp)
{
	const char **done = NULL;
	size_t n_done = 0;

	for (size_t i = 0; i < cmp->n_fails; i++) {
		const char *r = strstr(cmp->fails[i].key, ".racer."), *end;
		const kr_racer_t *racer;
		char name[64];
		bool seen = false;

		if (!r || !(end = strchr(r + 7, '.')) || end - (r + 7) >= (ptrdiff_t)sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(end - (r + 7)), r + 7);
		for (size_t j = 0; j < n_done; j++)
			seen |= !strcmp(done[j], name);
		racer = seen ? NULL : kr_racer_find(name);
		if (!racer)
			continue;
		done = kr_xrealloc(done, n_done + 1, sizeof(*done));
		done[n_done++] = racer->name;
		fprintf(out, "racer %s (evidence: %s; %s): %s\n", racer->name, racer->evidence,
			racer->built, racer->description);
	}
	free(done);
}

/*
 *  kr_print_compare()
 *	print both LKP tables and a summary; returns the exit status
 */
int kr_print_compare(FILE *out, const kr_side_t *base, const kr_side_t *new,
		     const kr_compare_t *cmp, bool strict)
{
	char lb[32], ln[32], line[1024];
	int status = 0;

	kr_print_side_notes(out, "base", base);
	kr_print_side_notes(out, "new ", new);
	fprintf(out, "\n");
	kr_side_label(base->path, lb, KR_ABS_WIDTH + KR_ERR_WIDTH);
	kr_side_label(new->path, ln, KR_ABS_WIDTH + KR_ERR_WIDTH + KR_REL_WIDTH + 1);
	fprintf(out, "%*s %*s \n", KR_ABS_WIDTH + KR_ERR_WIDTH, lb,
		KR_ABS_WIDTH + KR_ERR_WIDTH + KR_REL_WIDTH + 1, ln);
	fprintf(out, "---------------- --------------------------- \n");

	if (cmp->n_fails) {
		fprintf(out, "       fail:runs  %%reproduction    fail:runs\n");
		fprintf(out, "           |             |             |    \n");
		for (size_t i = 0; i < cmp->n_fails; i++) {
			kr_format_fail_row(line, sizeof(line), &cmp->fails[i],
					   base->n_runs, new->n_runs);
			fprintf(out, "%s\n", line);
		}
	}
	fprintf(out, "         %%stddev     %%change         %%stddev\n");
	fprintf(out, "             \\          |                \\  \n");
	for (size_t i = 0; i < cmp->n_rows; i++) {
		kr_format_row(line, sizeof(line), &cmp->rows[i]);
		fprintf(out, "%s\n", line);
	}
	fprintf(out, "\n(* = significant by LKP's rules: at least %d runs on one side, medians\n"
		" separated, ratio of medians > %.2f; \u00b1 is the population stddev)\n",
		KR_MIN_RUNS, KR_MIN_RATIO);
	if (base->n_runs < KR_MIN_RUNS && new->n_runs < KR_MIN_RUNS)
		fprintf(out, "note: fewer than %d runs on both sides: LKP would not report any metric change\n",
			KR_MIN_RUNS);
	kr_print_only(out, "base", cmp->only_base, cmp->n_only_base);
	kr_print_only(out, "new", cmp->only_new, cmp->n_only_new);
	kr_print_racers(out, cmp);

	for (size_t i = 0; i < cmp->n_rows; i++) {
		const kr_row_t *r = &cmp->rows[i];

		if (!r->significant || !r->regression)
			continue;
		fprintf(out, "REGRESSION: %s %+.1f%% (median ratio %.3f, %zu vs %zu runs)%s\n",
			r->key, r->change, r->ratio, r->base.n, r->new.n,
			r->direction > 0 ? "" : " [lower is better]");
		if (r->direction > 0 || strict)
			status = 1;
	}
	for (size_t i = 0; i < cmp->n_fails; i++) {
		const kr_fail_row_t *f = &cmp->fails[i];

		if (f->f_new && !f->f_base) {
			fprintf(out, "NEW FAILURE: %s in %zu of %zu new runs, no base run\n",
				f->key, f->f_new, new->n_runs);
			if (strict)
				status = 1;
		}
	}
	if (!status)
		fprintf(out, "no significant regression of a higher-is-better metric\n");
	return status;
}

/*
 *  kr_xml_escape()
 *	write text escaped for XML
 */
static void kr_xml_escape(FILE *fp, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", fp);
			break;
		case '>':
			fputs("&gt;", fp);
			break;
		case '&':
			fputs("&amp;", fp);
			break;
		case '"':
			fputs("&quot;", fp);
			break;
		case '\'':
			fputs("&apos;", fp);
			break;
		default:
			fputc(*s, fp);
		}
	}
}

/* SVG plot geometry */
#define KR_SVG_W		(640.0)
#define KR_SVG_LEFT		(80.0)
#define KR_SVG_PLOT_W		(300.0)
#define KR_SVG_PLOT_H		(120.0)
#define KR_SVG_PANEL_H		(175.0)
#define KR_SVG_TICKS		(5)

/* SVG groups, in drawing order */
enum { KR_SVG_REGRESSION, KR_SVG_IMPROVEMENT, KR_SVG_CHANGED, KR_SVG_UNCHANGED };

static const char *const kr_svg_group_title[] = {
	"Regressions", "Improvements", "Changed (no better direction)", "Unchanged",
};
static const char *const kr_svg_group_colour[] = { "#c00000", "#007000", "#555555", "#555555" };

/*
 *  kr_svg_group()
 *	which SVG group a row belongs to
 */
int kr_svg_group(const kr_row_t *row)
{
	if (!row->significant)
		return KR_SVG_UNCHANGED;
	if (row->direction == 0)
		return KR_SVG_CHANGED;
	return row->regression ? KR_SVG_REGRESSION : KR_SVG_IMPROVEMENT;
}

/*
 *  kr_nice_ticks()
 *	round axis ticks covering [lo, hi]: a step of 1, 2 or 5 x 10^k giving
 *	at most max_ticks intervals; *first and *last are multiples of *step
 */
void kr_nice_ticks(double lo, double hi, int max_ticks, double *first, double *last, double *step)
{
	double range, mag, f;

	if (!(hi > lo)) {
		const double d = fabs(lo) > 0.0 ? fabs(lo) * 0.05 : 1.0;

		lo -= d;
		hi += d;
	}
	range = hi - lo;
	mag = pow(10.0, floor(log10(range / (double)max_ticks)));
	f = range / (double)max_ticks / mag;
	f = f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0;
	for (;;) {
		*step = mag * f;
		*first = floor(lo / *step + 1e-9) * *step;
		*last = ceil(hi / *step - 1e-9) * *step;
		if (*last <= *first)
			*last = *first + *step;
		if ((*last - *first) / *step <= (double)max_ticks + 1e-9)
			break;
		/* rounding out the ends added an interval: next 1, 2, 5 step */
		f = (f == 1.0) ? 2.0 : (f == 2.0) ? 5.0 : 10.0;
		if (f == 10.0) {
			mag *= 10.0;
			f = 1.0;
		}
	}
}

/*
 *  kr_fmt_tick()
 *	a tick label with no more digits than the step needs, k/M/G scaled
 */
void kr_fmt_tick(char *buf, size_t len, double v, double step, double top)
{
	static const char *const sfx[] = { "", "k", "M", "G" };
	static const double from[] = { 1e4, 1e6, 1e9 };	/* where k, M, G start */
	size_t i = 0;
	double scale = 1.0;
	int decimals;

	while (i < 3 && fabs(top) >= from[i]) {
		scale *= 1000.0;
		i++;
	}
	decimals = (int)ceil(-log10(step / scale) - 1e-9);
	if (decimals < 0)
		decimals = 0;
	if (fabs(v) < step * 1e-6)
		v = 0.0;
	snprintf(buf, len, "%.*f%s", decimals, v / scale, sfx[i]);
}

/*
 *  kr_svg_side()
 *	draw one side of a panel: run points, mean tick and ±stddev bar
 */
static void kr_svg_side(FILE *fp, const kr_samples_t *s, double x, double y0,
			double lo, double hi, const char *colour)
{
	const double span = hi - lo, h = KR_SVG_PLOT_H;
	double ym, yt, yb;

#define KR_Y(v)	(y0 + h - ((v) - lo) / span * h)
	for (size_t i = 0; i < s->n; i++) {
		const double dx = (double)i * 6.0 - (double)(s->n - 1) * 3.0;

		fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" fill-opacity=\"0.6\">"
			"<title>run %zu: %g</title></circle>\n", x + dx, KR_Y(s->v[i]), colour, i + 1, s->v[i]);
	}
	ym = KR_Y(s->mean);
	yt = KR_Y(s->mean + s->stddev);
	yb = KR_Y(s->mean - s->stddev);
#undef KR_Y
	fprintf(fp, "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" stroke=\"black\"/>\n",
		x + 40, yt, yb, x + 35, yt, x + 45, x + 35, yb, x + 45);
	fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\">"
		"<title>mean %g, stddev %g</title></line>\n", x + 30, ym, x + 50, ym, colour, s->mean, s->stddev);
}

/*
 *  kr_svg_axis()
 *	the panel frame, round ticks with grid lines; range in *lo, *hi
 */
static void kr_svg_axis(FILE *fp, const kr_row_t *row, double y0, double *lo, double *hi)
{
	const kr_samples_t *sides[2] = { &row->base, &row->new };
	double first, last, step;

	*lo = row->base.mean - row->base.stddev;
	*hi = row->base.mean + row->base.stddev;
	for (size_t s = 0; s < 2; s++) {
		for (size_t i = 0; i < sides[s]->n; i++) {
			*lo = fmin(*lo, sides[s]->v[i]);
			*hi = fmax(*hi, sides[s]->v[i]);
		}
		*lo = fmin(*lo, sides[s]->mean - sides[s]->stddev);
		*hi = fmax(*hi, sides[s]->mean + sides[s]->stddev);
	}
	kr_nice_ticks(*lo, *hi, KR_SVG_TICKS, &first, &last, &step);
	*lo = first;
	*hi = last;
	fprintf(fp, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#999\"/>\n",
		KR_SVG_LEFT, y0, KR_SVG_PLOT_W, KR_SVG_PLOT_H);
	for (double t = first; t <= last + step * 0.5; t += step) {
		const double y = y0 + KR_SVG_PLOT_H - (t - first) / (last - first) * KR_SVG_PLOT_H;
		char label[32];

		kr_fmt_tick(label, sizeof(label), t, step, fmax(fabs(first), fabs(last)));
		fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
			KR_SVG_LEFT, y, KR_SVG_LEFT + KR_SVG_PLOT_W, y);
		fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%s</text>\n",
			KR_SVG_LEFT - 4, y + 3.5, label);
	}
}

/*
 *  kr_svg_panel()
 *	one panel: a metric, base and new runs side by side on round ticks
 */
static void kr_svg_panel(FILE *fp, const kr_row_t *row, double y0)
{
	const int g = kr_svg_group(row);
	double lo, hi;

	fprintf(fp, "<g>\n<text x=\"10\" y=\"%.1f\" font-size=\"12\" font-weight=\"bold\">", y0 - 8);
	kr_xml_escape(fp, row->key);
	fprintf(fp, "</text>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"%s\" text-anchor=\"end\">"
		"%+.1f%%</text>\n", KR_SVG_W - 10, y0 - 8, kr_svg_group_colour[g], row->change);
	kr_svg_axis(fp, row, y0, &lo, &hi);
	kr_svg_side(fp, &row->base, KR_SVG_LEFT + 50, y0, lo, hi, "#1f77b4");
	kr_svg_side(fp, &row->new, KR_SVG_LEFT + 180, y0, lo, hi, "#d62728");
	fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#444\">mean %g → %g</text>\n",
		KR_SVG_LEFT + KR_SVG_PLOT_W + 12, y0 + KR_SVG_PLOT_H / 2, row->base.mean, row->new.mean);
	fprintf(fp, "</g>\n");
}

/*
 *  kr_svg_order()
 *	rows to draw: regressions, improvements, other changes, then (all)
 *	the unchanged ones; each group by size of change.  Returns the count.
 */
static size_t kr_svg_order(const kr_compare_t *cmp, bool all, const kr_row_t **out)
{
	size_t n = 0;

	for (int g = KR_SVG_REGRESSION; g <= KR_SVG_UNCHANGED; g++) {
		const size_t first = n;

		if (g == KR_SVG_UNCHANGED && !all)
			break;
		for (size_t i = 0; i < cmp->n_rows; i++) {
			if (kr_svg_group(&cmp->rows[i]) == g)
				out[n++] = &cmp->rows[i];
		}
		for (size_t i = first + 1; i < n; i++) {	/* insertion sort by |change| */
			const kr_row_t *r = out[i];
			size_t j = i;

			for (; j > first && fabs(out[j - 1]->change) < fabs(r->change); j--)
				out[j] = out[j - 1];
			out[j] = r;
		}
	}
	return n;
}

/*
 *  kr_svg_legend()
 *	each side labelled once, at the top
 */
static void kr_svg_legend(FILE *fp, const kr_side_t *base, const kr_side_t *new, size_t shown,
			  size_t total)
{
	char lb[64], ln[64];

	kr_side_label(base->path, lb, 40);
	kr_side_label(new->path, ln, 40);
	fprintf(fp, "<circle cx=\"16\" cy=\"18\" r=\"5\" fill=\"#1f77b4\"/>"
		"<text x=\"26\" y=\"22\" font-size=\"12\">base: ");
	kr_xml_escape(fp, lb);
	fprintf(fp, " (%zu runs)</text>\n<circle cx=\"336\" cy=\"18\" r=\"5\" fill=\"#d62728\"/>"
		"<text x=\"346\" y=\"22\" font-size=\"12\">new: ", base->n_runs);
	kr_xml_escape(fp, ln);
	fprintf(fp, " (%zu runs)</text>\n", new->n_runs);
	fprintf(fp, "<text x=\"10\" y=\"40\" font-size=\"11\" fill=\"#444\">%zu of %zu metrics drawn%s; "
		"dots: runs, bar: mean ± stddev</text>\n", shown, total,
		shown < total ? " (unchanged ones left out, --svg-all draws them)" : "");
}

/*
 *  kr_svg_panels()
 *	draw the rows under their group headings from y; returns the end y
 */
static double kr_svg_panels(FILE *fp, const kr_row_t **rows, size_t n, double y)
{
	int group = -1;

	for (size_t i = 0; i < n; i++) {
		const int g = kr_svg_group(rows[i]);

		if (g != group) {
			group = g;
			if (fp)
				fprintf(fp, "<text x=\"10\" y=\"%.1f\" font-size=\"15\" font-weight=\"bold\" "
					"fill=\"%s\">%s</text>\n", y + 12.0, kr_svg_group_colour[g],
					kr_svg_group_title[g]);
			y += 26.0;
		}
		if (fp)
			kr_svg_panel(fp, rows[i], y + 30.0);
		y += KR_SVG_PANEL_H;
	}
	return y;
}

/*
 *  kr_write_svg()
 *	write the comparison plot (all: unchanged metrics too); -1 on error
 */
int kr_write_svg(const char *path, const kr_side_t *base, const kr_side_t *new,
		 const kr_compare_t *cmp, bool all)
{
	const kr_row_t **rows = kr_xmalloc((cmp->n_rows + 1) * sizeof(*rows));
	const size_t n = kr_svg_order(cmp, all, rows);
	const double height = kr_svg_panels(NULL, rows, n, 60.0) + (n ? 0.0 : 30.0);
	FILE *fp;

	fp = fopen(path, "w");
	if (!fp) {
		fprintf(stderr, "ksm-report: %s: cannot create SVG: errno=%d (%s)\n",
			path, errno, strerror(errno));
		free(rows);
		return -1;
	}
	fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"font-family=\"sans-serif\">\n<title>ksm-report compare</title>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", KR_SVG_W, height);
	kr_svg_legend(fp, base, new, n, cmp->n_rows);
	if (!n)
		fprintf(fp, "<text x=\"10\" y=\"72\">no significant change</text>\n");
	(void)kr_svg_panels(fp, rows, n, 60.0);
	fprintf(fp, "</svg>\n");
	free(rows);
	if (fclose(fp) == EOF) {
		fprintf(stderr, "ksm-report: %s: error writing SVG: errno=%d (%s)\n",
			path, errno, strerror(errno));
		return -1;
	}
	return 0;
}

#ifndef KSM_REPORT_NO_MAIN
/*
 *  kr_usage()
 *	print the command line help
 */
static void kr_usage(FILE *fp)
{
	fprintf(fp,
		"usage: ksm-report run --runs N --out DIR [--stressor PATH] -- <stressor args>\n"
		"       ksm-report compare BASE NEW [--svg FILE [--svg-all]] [--strict]\n"
		"       ksm-report keys TEXT...\n"
		"\n"
		"run      run the stressor N times (default 5), keeping run-<i>.yaml, .txt, .env\n"
		"compare  LKP-style fail:runs and %%stddev/%%change tables of two series of\n"
		"         runs (directories of YAML files, or single files)\n"
		"         exit 0: no significant regression; 1: significant regression of a\n"
		"         *_per_sec metric (--strict: also latencies and new kernel-log keys);\n"
		"         2: bad input.  --svg: significant changes drawn, regressions\n"
		"         first; --svg-all: the unchanged metrics too\n"
		"keys     the LKP function stats the stressor's text output names, one a\n"
		"         line: kernel-log (dmesg.*, kmsg.*), racers not reached or skipped,\n"
		"         failure totals; exit 2 if a file cannot be read\n"
		);
}

/*
 *  kr_cmd_compare()
 *	the compare sub-command
 */
static int kr_cmd_compare(int argc, char **argv)
{
	const char *paths[2] = { NULL, NULL }, *svg = NULL;
	kr_side_t base, new;
	kr_compare_t cmp;
	bool strict = false, svg_all = false;
	size_t np = 0;
	int status;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--svg") && i + 1 < argc) {
			svg = argv[++i];
		} else if (!strncmp(argv[i], "--svg=", 6)) {
			svg = argv[i] + 6;
		} else if (!strcmp(argv[i], "--svg-all")) {
			svg_all = true;
		} else if (!strcmp(argv[i], "--strict")) {
			strict = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "ksm-report: compare: unknown option '%s'\n", argv[i]);
			kr_usage(stderr);
			return 2;
		} else if (np < 2) {
			paths[np++] = argv[i];
		} else {
			fprintf(stderr, "ksm-report: compare: too many arguments ('%s')\n", argv[i]);
			return 2;
		}
	}
	if (np != 2) {
		kr_usage(stderr);
		return 2;
	}
	memset(&base, 0, sizeof(base));
	memset(&new, 0, sizeof(new));
	if (kr_load_side(paths[0], &base) < 0 || kr_load_side(paths[1], &new) < 0) {
		fprintf(stderr, "ksm-report: compare: bad input, nothing compared\n");
		kr_side_free(&base);
		kr_side_free(&new);
		return 2;
	}
	if (strcmp(base.runs[0].stressor, new.runs[0].stressor)) {
		fprintf(stderr, "ksm-report: stressor differs between sides: '%s' in %s, '%s' in %s\n",
			base.runs[0].stressor, base.runs[0].source,
			new.runs[0].stressor, new.runs[0].source);
		kr_side_free(&base);
		kr_side_free(&new);
		return 2;
	}
	kr_compare_build(&base, &new, &cmp);
	status = kr_print_compare(stdout, &base, &new, &cmp, strict);
	if (svg_all && !svg) {
		fprintf(stderr, "ksm-report: compare: --svg-all needs --svg FILE\n");
		status = 2;
	} else if (svg && kr_write_svg(svg, &base, &new, &cmp, svg_all) < 0)
		status = 2;
	kr_compare_free(&cmp);
	kr_side_free(&base);
	kr_side_free(&new);
	return status;
}

/*
 *  kr_cmd_keys()
 *	the keys sub-command: function stats of text outputs
 */
static int kr_cmd_keys(int argc, char **argv)
{
	int status = argc ? 0 : 2;

	if (!argc)
		kr_usage(stderr);
	for (int i = 0; i < argc; i++) {
		kr_run_t run;

		memset(&run, 0, sizeof(run));
		kr_apply_text(argv[i], &run);
		if (!run.text_present) {
			fprintf(stderr, "ksm-report: keys: %s: cannot read: errno=%d (%s)\n",
				argv[i], errno, strerror(errno));
			status = 2;
		}
		for (size_t k = 0; k < run.n_fails; k++)
			printf("%s\n", run.fails[k]);
		kr_run_free(&run);
	}
	return status;
}

/*
 *  kr_read_line()
 *	first line of a small file without its newline; false on error
 */
static bool kr_read_line(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "r");
	size_t n;

	if (!fp)
		return false;
	if (!fgets(buf, (int)len, fp)) {
		(void)fclose(fp);
		return false;
	}
	(void)fclose(fp);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	return true;
}

/*
 *  kr_write_env_knobs()
 *	write every KSM sysfs knob as ksm.<name>=<value>
 */
static void kr_write_env_knobs(FILE *fp, const char *sysfs)
{
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	DIR *dir = opendir(sysfs);

	if (!dir) {
		fprintf(fp, "ksm=unavailable (%s: errno=%d %s)\n", sysfs, errno, strerror(errno));
		return;
	}
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		names = kr_xrealloc(names, n + 1, sizeof(*names));
		names[n++] = kr_xstrdup(de->d_name);
	}
	(void)closedir(dir);
	if (n)
		qsort(names, n, sizeof(*names), kr_cmp_str);
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX], val[256];

		snprintf(path, sizeof(path), "%s/%s", sysfs, names[i]);
		if (kr_read_line(path, val, sizeof(val)))
			fprintf(fp, "ksm.%s=%s\n", names[i], val);
		free(names[i]);
	}
	free(names);
}

/*
 *  kr_now()
 *	monotonic time in seconds
 */
static double kr_now(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 *  kr_spawn()
 *	run the stressor with output to a file; returns its exit status
 *	(128 + signal when killed), or -1 if it could not be started
 */
static int kr_spawn(char *const *argv, const char *outpath)
{
	int status, fd;
	pid_t pid;

	fd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "ksm-report: %s: cannot create: errno=%d (%s)\n",
			outpath, errno, strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "ksm-report: fork failed: errno=%d (%s)\n", errno, strerror(errno));
		(void)close(fd);
		return -1;
	}
	if (pid == 0) {
		if (dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(127);
		execv(argv[0], argv);
		dprintf(STDERR_FILENO, "ksm-report: cannot execute %s: errno=%d (%s)\n",
			argv[0], errno, strerror(errno));
		_exit(127);
	}
	(void)close(fd);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "ksm-report: waitpid failed: errno=%d (%s)\n",
				errno, strerror(errno));
			return -1;
		}
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

/*
 *  kr_is_headline()
 *	true for a key of the progress line: ops_per_sec, the unmerge rate of
 *	every cycle, the quiet-window rate a performance report watches, and
 *	older stressors' unmerge rate
 */
static bool kr_is_headline(const char *key)
{
	static const char *const heads[] = {
		"unmerge_MB_per_sec", "quiet_CPU-time_unmerge_MB_per_sec", "MB_per_sec_unmerge_rate",
	};
	const char *last = strrchr(key, '.');

	if (kr_is_ops_per_sec(key))
		return true;
	for (size_t i = 0; last && i < sizeof(heads) / sizeof(heads[0]); i++)
		if (!strcmp(last + 1, heads[i]))
			return true;
	return false;
}

/*
 *  kr_headline()
 *	short description of a finished run's YAML for the progress line
 */
static void kr_headline(const char *yaml, char *buf, size_t len)
{
	kr_side_t side;
	int saved_stderr, devnull;

	memset(&side, 0, sizeof(side));
	/* the progress line reports the problem; keep libyaml noise quiet */
	saved_stderr = dup(STDERR_FILENO);
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (saved_stderr >= 0 && devnull >= 0)
		(void)dup2(devnull, STDERR_FILENO);
	(void)kr_load_file(yaml, &side);
	if (saved_stderr >= 0) {
		(void)dup2(saved_stderr, STDERR_FILENO);
		(void)close(saved_stderr);
	}
	if (devnull >= 0)
		(void)close(devnull);

	if (!side.n_runs) {
		snprintf(buf, len, "no usable YAML");
	} else {
		const kr_run_t *run = &side.runs[0];
		size_t off = 0;

		buf[0] = '\0';
		for (size_t i = 0; i < run->n_perf && off < len; i++) {
			const char *k = run->perf[i].key;

			if (!kr_is_headline(k))
				continue;
			off += (size_t)snprintf(buf + off, len - off, "%s%s %.2f", off ? ", " : "",
						strrchr(k, '.') + 1, run->perf[i].value);
		}
		for (size_t i = 0; i < run->n_fails && off < len; i++)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", run->fails[i]);
		if (!off)
			snprintf(buf, len, "no headline metric");
	}
	kr_side_free(&side);
}

/*
 *  kr_run_one()
 *	one run: env before, the stressor, env after; returns its exit status
 */
static int kr_run_one(const char *out, size_t i, size_t runs, char **argv, size_t argc,
		      const char *sysfs, double t0)
{
	char yaml[PATH_MAX], txt[PATH_MAX], env[PATH_MAX], val[256], head[512];
	struct utsname uts;
	double start;
	FILE *fp;
	int rc;

	snprintf(yaml, sizeof(yaml), "%s/run-%zu.yaml", out, i);
	snprintf(txt, sizeof(txt), "%s/run-%zu.txt", out, i);
	snprintf(env, sizeof(env), "%s/run-%zu.env", out, i);
	argv[argc - 1] = yaml;
	(void)unlink(yaml);

	fp = fopen(env, "w");
	if (!fp) {
		fprintf(stderr, "ksm-report: %s: cannot create: errno=%d (%s)\n", env, errno, strerror(errno));
		return -1;
	}
	if (uname(&uts) == 0)
		fprintf(fp, "release=%s\nmachine=%s\n", uts.release, uts.machine);
	fprintf(fp, "command=");
	for (size_t a = 0; a < argc; a++)
		fprintf(fp, "%s%s", a ? " " : "", argv[a]);
	fprintf(fp, "\n");
	kr_write_env_knobs(fp, sysfs);
	if (kr_read_line("/proc/loadavg", val, sizeof(val)))
		fprintf(fp, "loadavg_before=%s\n", val);
	(void)fflush(fp);

	start = kr_now();
	rc = kr_spawn(argv, txt);
	if (kr_read_line("/proc/loadavg", val, sizeof(val)))
		fprintf(fp, "loadavg_after=%s\n", val);
	fprintf(fp, "duration=%.2f\nexit_code=%d\n", kr_now() - start, rc);
	if (fclose(fp) == EOF)
		fprintf(stderr, "ksm-report: %s: write error: errno=%d (%s)\n", env, errno, strerror(errno));

	kr_headline(yaml, head, sizeof(head));
	printf("run %zu of %zu, elapsed %.1fs, %s%s", i, runs, kr_now() - t0, head,
	       rc ? "" : "\n");
	if (rc)
		printf(", FAILED: exit status %d (see %s)\n", rc, txt);
	(void)fflush(stdout);
	return rc;
}

/*
 *  kr_cmd_run()
 *	the run sub-command
 */
static int kr_cmd_run(int argc, char **argv)
{
	const char *out = NULL, *stressor = KR_DEFAULT_STRESSOR, *sysfs;
	size_t runs = 5, failed = 0, sargc;
	char **sargv;
	int worst = 0, i;
	double t0;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			char *end;
			unsigned long v = strtoul(argv[++i], &end, 10);

			if (*end || !v || v > 10000) {
				fprintf(stderr, "ksm-report: run: bad --runs '%s'\n", argv[i]);
				return 1;
			}
			runs = v;
		} else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(argv[i], "--stressor") && i + 1 < argc) {
			stressor = argv[++i];
		} else {
			fprintf(stderr, "ksm-report: run: unexpected argument '%s'\n", argv[i]);
			kr_usage(stderr);
			return 1;
		}
	}
	if (!out) {
		fprintf(stderr, "ksm-report: run: --out DIR is required\n");
		return 1;
	}
	if (access(stressor, X_OK) < 0) {
		fprintf(stderr, "ksm-report: run: stressor %s: errno=%d (%s)\n",
			stressor, errno, strerror(errno));
		return 1;
	}
	if (mkdir(out, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "ksm-report: run: mkdir %s: errno=%d (%s)\n", out, errno, strerror(errno));
		return 1;
	}
	sysfs = getenv("KSM_REPORT_SYSFS");
	if (!sysfs || !*sysfs)
		sysfs = KR_DEFAULT_SYSFS;

	/* stressor, its arguments, --yaml FILE, NULL */
	sargc = (size_t)(argc - i) + 3;
	sargv = kr_xmalloc((sargc + 1) * sizeof(*sargv));
	sargv[0] = (char *)stressor;
	for (int a = i; a < argc; a++)
		sargv[1 + a - i] = argv[a];
	sargv[sargc - 2] = "--yaml";
	sargv[sargc] = NULL;

	t0 = kr_now();
	for (size_t r = 1; r <= runs; r++) {
		const int rc = kr_run_one(out, r, runs, sargv, sargc, sysfs, t0);

		if (rc != 0) {
			failed++;
			if (rc == 2)
				worst = 2;
		}
	}
	free(sargv);
	printf("%zu run%s in %.1fs: %zu ok, %zu failed; results in %s\n", runs, runs == 1 ? "" : "s",
	       kr_now() - t0, runs - failed, failed, out);
	/* a stressor failure (exit 2) propagates; other failures exit 1 */
	return failed ? (worst ? worst : 1) : 0;
}

/*
 *  main()
 *	dispatch the sub-command
 */
int main(int argc, char **argv)
{
	int ret;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		kr_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "compare"))
		ret = kr_cmd_compare(argc - 2, argv + 2);
	else if (!strcmp(argv[1], "run"))
		ret = kr_cmd_run(argc - 2, argv + 2);
	else if (!strcmp(argv[1], "keys"))
		ret = kr_cmd_keys(argc - 2, argv + 2);
	else {
		fprintf(stderr, "ksm-report: unknown command '%s'\n", argv[1]);
		kr_usage(stderr);
		ret = 2;
	}
	for (size_t i = 0; i < kr_n_learnt; i++) {
		free((void *)kr_learnt_desc[i].yaml_key);
		free((void *)kr_learnt_desc[i].description);
	}
	free(kr_learnt_desc);
	kr_racers_free();
	return ret;
}
#endif
