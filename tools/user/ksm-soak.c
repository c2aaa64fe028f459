/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * ksm-soak: run a soak of the ksm-unmerge stressor, standalone or inside
 * stress-ng, and log what can be known from outside the binary.
 *
 *   ksm-soak --log FILE [--interval S] [--progress] [--stop-on-warn]
 *            [--hang-secs S] -- BINARY [ARGS...]
 *
 * Every interval one YAML document is appended to FILE and fsynced: time
 * elapsed and remaining (the binary's -t/--timeout), KSM pages unshared
 * (/proc/vmstat cow_ksm), the /sys/kernel/mm/ksm counters, RSS and peak
 * RSS of the binary's processes, kernel-log events (/dev/kmsg), load.
 * A document that cannot be written is cut off again and retried at the
 * next interval; one still missing at the end fails the run.  An instance
 * whose kernel stack stays in the same KSM function longer than the hang
 * bound while cow_ksm does not move is logged with its stacks.
 * --stop-on-warn stops the run (SIGINT) at the first kernel warning or
 * hang, after writing the evidence (knobs, stacks, kernel-log tail).
 *
 * The binary's output passes through to stdout; its summary lines go into
 * the final document (final: true) with its exit status.
 *
 * Exit status: the binary's (0 passed, 2 failed, 3 no resource, 7 metrics
 * untrustworthy), 2 if documents are missing from the log, a kernel
 * warning or a hang was seen, or the binary was killed by a signal; 1 for
 * bad options (nothing started).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KS_NAME			"ksm-soak"
#define KS_KSM_DIR		"/sys/kernel/mm/ksm"
#define KS_TAIL			(64)	/* kernel-log records kept for evidence */
#define KS_EVENTS_MAX		(16)	/* event lines kept per interval */
#define KS_OUT_LINES		(256)	/* binary summary lines kept */
#define KS_STOP_TERM_SECS	(15.0)	/* after the stop: SIGTERM the group */
#define KS_STOP_KILL_SECS	(30.0)	/* then SIGKILL it */
#define KS_DRAIN_SECS		(3.0)	/* output read after the binary exits */
#define KS_MSG_LEN		(512)

/* one kernel-log record */
typedef struct {
	int level;
	uint64_t usec;
	char msg[KS_MSG_LEN];
} ks_rec_t;

/* one kernel-log event (a record of a failing kind) */
typedef struct {
	const char *kind;
	ks_rec_t rec;
} ks_event_t;

/* one process of the binary's tree */
typedef struct {
	pid_t pid;
	pid_t ppid;
	int depth;		/* 0 the binary, 1 its children, ... */
	char state;
	char comm[32];
	long rss_kb;
	long hwm_kb;
} ks_proc_t;

/* a process's peak RSS at the previous interval */
typedef struct {
	pid_t pid;
	long hwm_kb;
	bool cycling;		/* cow_ksm had moved when it was sampled */
} ks_hwm_t;

/* a task seen in a KSM function, for the hang check */
typedef struct {
	pid_t pid;
	pid_t tid;
	char func[64];
	double since;
	long long cow;
	bool reported;
	bool seen;
} ks_task_t;

/* a document waiting to be written */
typedef struct {
	char *text;
	size_t len;
	bool interval;
} ks_doc_t;

/* kernel-side counters; -1 when the kernel lacks one */
typedef struct {
	long long cow_ksm;
	long long full_scans;
	long long pages_sharing;
	long long ksm_zero_pages;
	long long general_profit;
} ks_counters_t;

static struct {
	/* options */
	const char *log_path;
	double interval;
	bool progress;
	bool stop_on_warn;
	double hang_secs;
	char **argv;		/* binary and its arguments */
	double timeout;		/* the binary's -t, 0 none or infinite */
	/* the log */
	int log_fd;
	bool log_regular;
	ks_doc_t *queue;
	size_t n_queue;
	unsigned docs_total;
	unsigned docs_written;
	unsigned intervals;		/* intervals ended */
	unsigned intervals_written;
	int log_errno;
	/* the binary */
	pid_t pid;
	int out_fd;
	int status;
	bool exited;
	double t_start;
	double t_exit;
	double t_stop;			/* stop requested (SIGINT sent), 0 none */
	const char *stop_reason;
	bool sent_term;
	bool sent_kill;
	char line[4096];		/* partial output line */
	size_t line_len;
	char *out_lines[KS_OUT_LINES];
	size_t n_out_lines;
	/* the kernel */
	int kmsg_fd;
	ks_rec_t tail[KS_TAIL];
	size_t n_tail;
	ks_event_t events[KS_EVENTS_MAX];
	size_t n_events;		/* events kept this interval */
	unsigned events_interval;	/* events this interval */
	unsigned events_total;
	unsigned lost_records;
	ks_counters_t base;
	ks_counters_t prev;
	/* processes */
	ks_hwm_t *hwm;
	size_t n_hwm;
	long rss_growth_max_kb;
	ks_task_t *tasks;
	size_t n_tasks;
	unsigned hangs;
	bool can_read_stacks;
	bool in_evidence;		/* writing an evidence document */
} ks;

static int ks_sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t ks_signalled;	/* SIGINT/SIGTERM to us */

/*
 *  ks_now()
 *	monotonic seconds
 */
static double ks_now(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 *  ks_say()
 *	one line of the tool's own on stdout
 */
static void __attribute__((format(printf, 1, 2))) ks_say(const char *fmt, ...)
{
	va_list ap;

	(void)fflush(stdout);
	(void)printf("%s: ", KS_NAME);
	va_start(ap, fmt);
	(void)vprintf(fmt, ap);
	va_end(ap);
	(void)fflush(stdout);
}

/*
 *  ks_xrealloc()
 *	grow an array or exit: a soak without memory cannot go on logging
 */
static void *ks_xrealloc(void *p, const size_t n, const size_t size)
{
	void *q = reallocarray(p, n ? n : 1, size);

	if (!q) {
		(void)fprintf(stderr, "%s: out of memory\n", KS_NAME);
		exit(2);
	}
	return q;
}

/*
 *  ks_read_file()
 *	read a small file into buf (NUL terminated); -1 with errno on error
 */
static ssize_t ks_read_file(const char *path, char *buf, const size_t len)
{
	const int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	(void)close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/*
 *  ks_read_ll()
 *	a file holding one integer; -1 if absent or unreadable
 */
static long long ks_read_ll(const char *path)
{
	char buf[64];
	long long v;

	if (ks_read_file(path, buf, sizeof(buf)) < 0 || sscanf(buf, "%lld", &v) != 1)
		return -1;
	return v;
}

/*
 *  ks_yaml_str()
 *	write s as a single-quoted YAML scalar, control characters as '?'
 */
static void ks_yaml_str(FILE *fp, const char *s)
{
	(void)fputc('\'', fp);
	for (; *s; s++) {
		const unsigned char c = (unsigned char)*s;

		if (c == '\'')
			(void)fputs("''", fp);
		else
			(void)fputc((c < 0x20 || c == 0x7f) ? '?' : c, fp);
	}
	(void)fputc('\'', fp);
}

/*
 *  ks_counters_read()
 *	cow_ksm and the KSM counters the log follows
 */
static void ks_counters_read(ks_counters_t *c)
{
	char buf[16384];
	const char *p;

	c->cow_ksm = -1;
	if (ks_read_file("/proc/vmstat", buf, sizeof(buf)) > 0 &&
	    (p = strstr(buf, "\ncow_ksm ")) != NULL)
		c->cow_ksm = strtoll(p + 9, NULL, 10);
	c->full_scans = ks_read_ll(KS_KSM_DIR "/full_scans");
	c->pages_sharing = ks_read_ll(KS_KSM_DIR "/pages_sharing");
	c->ksm_zero_pages = ks_read_ll(KS_KSM_DIR "/ksm_zero_pages");
	c->general_profit = ks_read_ll(KS_KSM_DIR "/general_profit");
}

/*
 *  ks_yaml_ll()
 *	"key: N" or "key: ~" for a counter the kernel lacks
 */
static void ks_yaml_ll(FILE *fp, const char *key, const long long v)
{
	if (v < 0)
		(void)fprintf(fp, "    %s: ~\n", key);
	else
		(void)fprintf(fp, "    %s: %lld\n", key, v);
}

/*
 *  ks_knobs_write()
 *	every file of /sys/kernel/mm/ksm as "    name: value"
 */
static void ks_knobs_write(FILE *fp)
{
	struct dirent **names;
	const int n = scandir(KS_KSM_DIR, &names, NULL, alphasort);

	if (n < 0) {
		(void)fprintf(fp, "knobs: ~\n");
		return;
	}
	(void)fprintf(fp, "knobs:\n");
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX], val[256];

		if (names[i]->d_name[0] != '.') {
			(void)snprintf(path, sizeof(path), KS_KSM_DIR "/%s", names[i]->d_name);
			if (ks_read_file(path, val, sizeof(val)) >= 0) {
				val[strcspn(val, "\n")] = '\0';
				(void)fprintf(fp, "    %s: ", names[i]->d_name);
				ks_yaml_str(fp, val);
				(void)fputc('\n', fp);
			}
		}
		free(names[i]);
	}
	free(names);
}

/*
 *  ks_klog_kind()
 *	the kind of a kernel-log message that fails a run, NULL for others.
 *	Kept simple: the line heads of WARN, BUG, oops, lockup, hung task,
 *	RCU stall, panic and list corruption splats (replace with the
 *	shim's -K classification when that can be linked).
 */
const char *ks_klog_kind(const char *msg)
{
	while (*msg == ' ' || *msg == '\t')
		msg++;
	if (strstr(msg, "soft lockup") || strstr(msg, "hard LOCKUP"))
		return "lockup";
	if (!strncmp(msg, "WARNING:", 8))
		return "warning";
	if (!strncmp(msg, "BUG:", 4) || !strncmp(msg, "kernel BUG at", 13))
		return "BUG";
	if (!strncmp(msg, "Oops:", 5) || strstr(msg, "general protection fault") ||
	    !strncmp(msg, "Unable to handle kernel", 23))
		return "oops";
	if (!strncmp(msg, "INFO: task ", 11) && strstr(msg, "blocked for more than"))
		return "hung task";
	if (strstr(msg, "detected stall") || strstr(msg, "detected stalls"))
		return "RCU stall";
	if (!strncmp(msg, "Kernel panic", 12))
		return "panic";
	if (strstr(msg, "list_add corruption") || strstr(msg, "list_del corruption"))
		return "list corruption";
	return NULL;
}

/*
 *  ks_kmsg_parse()
 *	a /dev/kmsg record "prio,seq,usec,flags;message\n..." into rec
 */
bool ks_kmsg_parse(const char *buf, ks_rec_t *rec)
{
	unsigned long long seq, usec;
	const char *msg = strchr(buf, ';');
	int prio;
	size_t n;

	if (!msg || sscanf(buf, "%d,%llu,%llu", &prio, &seq, &usec) != 3)
		return false;
	msg++;
	n = strcspn(msg, "\n");
	if (n >= sizeof(rec->msg))
		n = sizeof(rec->msg) - 1;
	memcpy(rec->msg, msg, n);
	rec->msg[n] = '\0';
	rec->level = prio & 7;
	rec->usec = (uint64_t)usec;
	return true;
}

/*
 *  ks_stop()
 *	ask the binary to stop (SIGINT, as Ctrl-C would), once
 */
static void ks_stop(const char *reason)
{
	if (ks.t_stop > 0.0 || ks.exited)
		return;
	ks.t_stop = ks_now();
	ks.stop_reason = reason;
	if (kill(ks.pid, SIGINT) < 0)
		ks_say("cannot send SIGINT to %d: errno=%d (%s)\n", (int)ks.pid,
			errno, strerror(errno));
}

static void ks_evidence(const char *why, const char *line, const char *stack);

/*
 *  ks_kmsg_record()
 *	keep a record in the tail; count and keep it if it is an event
 */
static void ks_kmsg_record(const ks_rec_t *rec)
{
	const char *kind = ks_klog_kind(rec->msg);

	if (ks.n_tail == KS_TAIL) {
		memmove(&ks.tail[0], &ks.tail[1], sizeof(ks.tail[0]) * (KS_TAIL - 1));
		ks.n_tail--;
	}
	ks.tail[ks.n_tail++] = *rec;
	if (!kind)
		return;
	ks.events_interval++;
	ks.events_total++;
	if (ks.n_events < KS_EVENTS_MAX) {
		ks.events[ks.n_events].kind = kind;
		ks.events[ks.n_events].rec = *rec;
		ks.n_events++;
	}
	ks_say("kernel %s: %s\n", kind, rec->msg);
	if (ks.stop_on_warn && !ks.in_evidence && ks.t_stop == 0.0 && !ks.exited) {
		char why[64];

		(void)snprintf(why, sizeof(why), "kernel %s", kind);
		ks_say("stopping the run at the first kernel warning (--stop-on-warn)\n");
		ks_evidence(why, rec->msg, NULL);
		ks_stop("stop-on-warn");
	}
}

/*
 *  ks_kmsg_drain()
 *	read every kernel-log record available now
 */
static void ks_kmsg_drain(void)
{
	char buf[8192];

	while (ks.kmsg_fd >= 0) {
		const ssize_t n = read(ks.kmsg_fd, buf, sizeof(buf) - 1);
		ks_rec_t rec;

		if (n < 0) {
			if (errno == EPIPE) {	/* overwritten before we read it */
				ks.lost_records++;
				continue;
			}
			if (errno == EINTR)
				continue;
			break;
		}
		if (n == 0)
			break;
		buf[n] = '\0';
		if (ks_kmsg_parse(buf, &rec))
			ks_kmsg_record(&rec);
	}
}

/*
 *  ks_procs_get()
 *	the binary and its descendants, parents before children
 */
static size_t ks_procs_get(ks_proc_t **out)
{
	ks_proc_t *all = NULL, *tree = NULL;
	size_t n_all = 0, n_tree = 0;
	struct dirent *de;
	DIR *dir = opendir("/proc");

	*out = NULL;
	if (!dir || ks.exited) {
		if (dir)
			(void)closedir(dir);
		return 0;
	}
	while ((de = readdir(dir)) != NULL) {
		char path[64], buf[1024], *rp;
		ks_proc_t p;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		(void)snprintf(path, sizeof(path), "/proc/%d/stat", atoi(de->d_name));
		if (ks_read_file(path, buf, sizeof(buf)) < 0)
			continue;
		rp = strrchr(buf, ')');
		if (!rp || !strchr(buf, '('))
			continue;
		memset(&p, 0, sizeof(p));
		p.pid = (pid_t)atoi(de->d_name);
		*rp = '\0';
		(void)snprintf(p.comm, sizeof(p.comm), "%s", strchr(buf, '(') + 1);
		if (sscanf(rp + 1, " %c %d", &p.state, &p.ppid) != 2)
			continue;
		all = ks_xrealloc(all, n_all + 1, sizeof(*all));
		all[n_all++] = p;
	}
	(void)closedir(dir);
	for (size_t i = 0; i < n_all; i++) {
		if (all[i].pid == ks.pid) {
			tree = ks_xrealloc(tree, 1, sizeof(*tree));
			tree[n_tree++] = all[i];
		}
	}
	/* breadth first: each pass adds the children of what is in the tree */
	for (size_t t = 0; t < n_tree; t++) {
		for (size_t i = 0; i < n_all; i++) {
			if (all[i].ppid != tree[t].pid)
				continue;
			tree = ks_xrealloc(tree, n_tree + 1, sizeof(*tree));
			tree[n_tree] = all[i];
			tree[n_tree].depth = tree[t].depth + 1;
			n_tree++;
		}
	}
	free(all);
	*out = tree;
	return n_tree;
}

/*
 *  ks_proc_mem()
 *	VmRSS and VmHWM of a process in KiB
 */
static void ks_proc_mem(ks_proc_t *p)
{
	char path[64], buf[4096];
	const char *s;

	p->rss_kb = p->hwm_kb = -1;
	(void)snprintf(path, sizeof(path), "/proc/%d/status", (int)p->pid);
	if (ks_read_file(path, buf, sizeof(buf)) < 0)
		return;
	if ((s = strstr(buf, "VmRSS:")) != NULL)
		p->rss_kb = strtol(s + 6, NULL, 10);
	if ((s = strstr(buf, "VmHWM:")) != NULL)
		p->hwm_kb = strtol(s + 6, NULL, 10);
}

/*
 *  ks_rss_growth()
 *	largest growth of a process's peak RSS since the previous interval,
 *	counted once cycles run: from the first sample taken a whole
 *	interval after cow_ksm first moved (the region fill, the first
 *	unmerge and its verification are no leak); cycling says whether
 *	this sample is such a one
 */
static long ks_rss_growth(const ks_proc_t *procs, const size_t n, const bool cycling)
{
	ks_hwm_t *next = NULL;
	size_t n_next = 0;
	long max = 0;

	for (size_t i = 0; i < n; i++) {
		if (procs[i].hwm_kb < 0)
			continue;
		for (size_t j = 0; j < ks.n_hwm; j++) {
			if (ks.hwm[j].pid == procs[i].pid && ks.hwm[j].cycling &&
			    procs[i].hwm_kb - ks.hwm[j].hwm_kb > max)
				max = procs[i].hwm_kb - ks.hwm[j].hwm_kb;
		}
		next = ks_xrealloc(next, n_next + 1, sizeof(*next));
		next[n_next].pid = procs[i].pid;
		next[n_next].hwm_kb = procs[i].hwm_kb;
		next[n_next].cycling = cycling;
		n_next++;
	}
	free(ks.hwm);
	ks.hwm = next;
	ks.n_hwm = n_next;
	return max;
}

/*
 *  ks_ksm_frame()
 *	the innermost kernel stack frame naming KSM ("break_ksm+0x12/0x40"
 *	gives "break_ksm"); false if none
 */
static bool ks_ksm_frame(const char *stack, char *func, const size_t len)
{
	for (const char *line = stack; line && *line; ) {
		const char *nl = strchr(line, '\n');
		const char *f = strstr(line, "] ");

		if (f && (!nl || f < nl)) {
			size_t n;

			f += 2;
			n = strcspn(f, "+ \n");
			if (n && n < len && memmem(f, n, "ksm", 3)) {
				memcpy(func, f, n);
				func[n] = '\0';
				return true;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

/*
 *  ks_stack_read()
 *	/proc/PID/task/TID/stack and wchan; false if unreadable
 */
static bool ks_stack_read(const pid_t pid, const pid_t tid, char *stack, const size_t len,
	char *wchan, const size_t wlen)
{
	char path[96];

	(void)snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", (int)pid, (int)tid);
	if (ks_read_file(path, wchan, wlen) < 0)
		(void)snprintf(wchan, wlen, "?");
	(void)snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", (int)pid, (int)tid);
	return ks_read_file(path, stack, len) >= 0;
}

/*
 *  ks_tasks_get()
 *	the thread ids of a process
 */
static size_t ks_tasks_get(const pid_t pid, pid_t **tids)
{
	char path[64];
	struct dirent *de;
	size_t n = 0;
	DIR *dir;

	*tids = NULL;
	(void)snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((de = readdir(dir)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		*tids = ks_xrealloc(*tids, n + 1, sizeof(**tids));
		(*tids)[n++] = (pid_t)atoi(de->d_name);
	}
	(void)closedir(dir);
	return n;
}

/*
 *  ks_yaml_lines()
 *	"KEY:" and the lines of text (split in place) as a YAML list whose
 *	items start at indent; "KEY: []" when text is empty
 */
static void ks_yaml_lines(FILE *fp, const char *key, char *text, const char *indent)
{
	(void)fprintf(fp, "%s:%s\n", key, *text ? "" : " []");
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		(void)fprintf(fp, "%s- ", indent);
		ks_yaml_str(fp, l);
		(void)fputc('\n', fp);
	}
}

/*
 *  ks_procs_stacks_write()
 *	each process with every thread's wchan and kernel stack (evidence)
 */
static void ks_procs_stacks_write(FILE *fp)
{
	ks_proc_t *procs;
	const size_t n = ks_procs_get(&procs);

	(void)fprintf(fp, "processes:%s\n", n ? "" : " []");
	for (size_t i = 0; i < n; i++) {
		pid_t *tids;
		const size_t nt = ks_tasks_get(procs[i].pid, &tids);

		(void)fprintf(fp, "    - pid: %d\n      ppid: %d\n      depth: %d\n      comm: ",
			(int)procs[i].pid, (int)procs[i].ppid, procs[i].depth);
		ks_yaml_str(fp, procs[i].comm);
		(void)fprintf(fp, "\n      state: '%c'\n      tasks:%s\n", procs[i].state, nt ? "" : " []");
		for (size_t t = 0; t < nt; t++) {
			char stack[8192], wchan[128];
			const bool ok = ks_stack_read(procs[i].pid, tids[t], stack, sizeof(stack),
				wchan, sizeof(wchan));

			(void)fprintf(fp, "          - tid: %d\n            wchan: ", (int)tids[t]);
			ks_yaml_str(fp, wchan);
			if (!ok)
				*stack = '\0';
			(void)fputc('\n', fp);
			ks_yaml_lines(fp, "            stack", stack, "                ");
		}
		free(tids);
	}
	free(procs);
}

/*
 *  ks_doc_queue()
 *	queue a finished document (from an open_memstream) for writing
 */
static void ks_doc_queue(char *text, const size_t len, const bool interval)
{
	ks.queue = ks_xrealloc(ks.queue, ks.n_queue + 1, sizeof(*ks.queue));
	ks.queue[ks.n_queue].text = text;
	ks.queue[ks.n_queue].len = len;
	ks.queue[ks.n_queue].interval = interval;
	ks.n_queue++;
	ks.docs_total++;
}

/*
 *  ks_doc_write()
 *	append one document and fsync it; on failure cut the file back to
 *	where it was so no half document stays; returns 0 or an errno
 */
static int ks_doc_write(const ks_doc_t *doc)
{
	struct stat st;
	off_t before = -1;
	size_t off = 0;
	int err = 0;

	if (ks.log_regular && fstat(ks.log_fd, &st) == 0)
		before = st.st_size;
	while (off < doc->len) {
		const ssize_t n = write(ks.log_fd, doc->text + off, doc->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : ENOSPC;
			break;
		}
		off += (size_t)n;
	}
	if (!err && fsync(ks.log_fd) < 0 && !(errno == EINVAL && !ks.log_regular))
		err = errno;
	if (err && before >= 0 && ftruncate(ks.log_fd, before) < 0)
		ks_say("log %s: cannot cut a half-written document off, errno=%d (%s)\n",
			ks.log_path, errno, strerror(errno));
	return err;
}

/*
 *  ks_flush()
 *	write the queued documents in order, stopping at the first failure
 */
static void ks_flush(void)
{
	size_t done = 0;
	const size_t had = ks.n_queue;

	while (done < ks.n_queue) {
		const int err = ks_doc_write(&ks.queue[done]);

		if (err) {
			if (!ks.log_errno || err != ks.log_errno)
				ks_say("log %s: %zu document(s) not written, errno=%d (%s); "
					"retried at the next interval\n", ks.log_path,
					ks.n_queue - done, err, strerror(err));
			ks.log_errno = err;
			break;
		}
		ks.docs_written++;
		ks.intervals_written += ks.queue[done].interval;
		free(ks.queue[done].text);
		done++;
	}
	if (done && ks.log_errno && done == had) {
		ks_say("log %s: %zu delayed document(s) written\n", ks.log_path, done);
		ks.log_errno = 0;
	}
	memmove(ks.queue, ks.queue + done, (ks.n_queue - done) * sizeof(*ks.queue));
	ks.n_queue -= done;
}

/*
 *  ks_doc_head()
 *	the fields every document starts with
 */
static void ks_doc_head(FILE *fp, const char *what, const double now)
{
	const double elapsed = now - ks.t_start;
	char when[32];
	const time_t t = time(NULL);
	struct tm tm;

	(void)strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	(void)fprintf(fp, "---\nksm-soak: %s\ninterval: %u\ntime: '%s'\nelapsed-secs: %.2f\n",
		what, ks.intervals, when, elapsed);
	if (ks.timeout > 0.0)
		(void)fprintf(fp, "remaining-secs: %.2f\n",
			ks.timeout - elapsed > 0.0 ? ks.timeout - elapsed : 0.0);
	else
		(void)fprintf(fp, "remaining-secs: ~\n");
	/* interval documents already in the file / still queued, before this one */
	(void)fprintf(fp, "intervals-elapsed: %u\nintervals-logged: %u\nintervals-lost: %u\n",
		ks.intervals, ks.intervals_written, ks.intervals - ks.intervals_written -
		(!strcmp(what, "interval") ? 1 : 0));
}

/*
 *  ks_doc_end()
 *	close a document built in an open_memstream(&text, &len) and queue it
 */
static void ks_doc_end(FILE *fp, char **text, size_t *len, const bool interval)
{
	(void)fprintf(fp, "...\n");
	(void)fclose(fp);	/* sets *text and *len */
	ks_doc_queue(*text, *len, interval);
}

/*
 *  ks_evidence()
 *	the stop-on-warn or hang evidence document, written at once: the
 *	stack sample that proved a hang (a thread on a CPU reads as an empty
 *	stack a moment later), knobs, each process's threads' wchan and
 *	kernel stack now, kernel-log tail
 */
static void ks_evidence(const char *why, const char *line, const char *stack)
{
	char copy[8192];
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	const double t = ks_now() + 0.3;

	if (!fp)
		return;
	ks_doc_head(fp, "evidence", ks_now());
	(void)fprintf(fp, "evidence: ");
	ks_yaml_str(fp, why);
	(void)fprintf(fp, "\ntrigger: ");
	ks_yaml_str(fp, line);
	(void)snprintf(copy, sizeof(copy), "%s", stack ? stack : "");
	(void)fputc('\n', fp);
	ks_yaml_lines(fp, "trigger-stack", copy, "    ");
	(void)fprintf(fp, "final: false\n");
	ks_knobs_write(fp);
	ks_procs_stacks_write(fp);
	/* the rest of the splat follows its first line within milliseconds */
	ks.in_evidence = true;		/* records read now add no evidence */
	while (ks_now() < t && ks.kmsg_fd >= 0) {
		struct pollfd pfd = { ks.kmsg_fd, POLLIN, 0 };

		(void)poll(&pfd, 1, 50);
		ks_kmsg_drain();
	}
	ks.in_evidence = false;
	(void)fprintf(fp, "kernel-log-tail:%s\n", ks.n_tail ? "" : " []");
	for (size_t i = 0; i < ks.n_tail; i++) {
		(void)fprintf(fp, "    - [%d, %llu.%06llu, ", ks.tail[i].level,
			(unsigned long long)(ks.tail[i].usec / 1000000),
			(unsigned long long)(ks.tail[i].usec % 1000000));
		ks_yaml_str(fp, ks.tail[i].msg);
		(void)fprintf(fp, "]\n");
	}
	ks_doc_end(fp, &text, &len, false);
	ks_flush();
}

/*
 *  ks_hang_step()
 *	one sample of a task: func is its innermost KSM frame (NULL: stack
 *	empty, the task is on a CPU, no new information), cow the global
 *	cow_ksm.  True once, when it has been in the same function for
 *	bound seconds while cow_ksm did not move.
 */
bool ks_hang_step(ks_task_t *task, const char *func, const long long cow,
	const double now, const double bound)
{
	task->seen = true;
	if (!func)
		return false;
	if (strcmp(task->func, func) || task->cow != cow || task->since == 0.0) {
		(void)snprintf(task->func, sizeof(task->func), "%s", func);
		task->cow = cow;
		task->since = now;
		task->reported = false;
		return false;
	}
	if (task->reported || now - task->since < bound)
		return false;
	task->reported = true;
	return true;
}

/*
 *  ks_task_find()
 *	the hang state of a thread, new if it has none
 */
static ks_task_t *ks_task_find(const pid_t pid, const pid_t tid)
{
	ks_task_t *task;

	for (size_t t = 0; t < ks.n_tasks; t++)
		if (ks.tasks[t].tid == tid)
			return &ks.tasks[t];
	ks.tasks = ks_xrealloc(ks.tasks, ks.n_tasks + 1, sizeof(*ks.tasks));
	task = &ks.tasks[ks.n_tasks++];
	memset(task, 0, sizeof(*task));
	task->tid = tid;
	task->pid = pid;
	return task;
}

/*
 *  ks_hang_check()
 *	sample every thread of the binary's tree; a thread whose innermost
 *	KSM function stays the same for hang_secs while cow_ksm does not
 *	move is a hang: said, logged with the evidence, once
 */
static void ks_hang_check(const double now)
{
	ks_counters_t c;
	ks_proc_t *procs;
	size_t n;

	if (!ks.can_read_stacks || ks.hang_secs <= 0.0 || ks.exited)
		return;
	ks_counters_read(&c);
	n = ks_procs_get(&procs);
	for (size_t t = 0; t < ks.n_tasks; t++)
		ks.tasks[t].seen = false;
	for (size_t i = 0; i < n; i++) {
		pid_t *tids;
		const size_t nt = ks_tasks_get(procs[i].pid, &tids);

		for (size_t j = 0; j < nt; j++) {
			char stack[8192], wchan[128], func[64], line[256];
			ks_task_t *task;
			bool known = false;

			if (!ks_stack_read(procs[i].pid, tids[j], stack, sizeof(stack), wchan, sizeof(wchan)))
				continue;
			for (size_t t = 0; t < ks.n_tasks && !known; t++)
				known = ks.tasks[t].tid == tids[j];
			if (*stack && !ks_ksm_frame(stack, func, sizeof(func)))
				continue;	/* out of KSM: forgotten below */
			if (!*stack && !known)
				continue;	/* on a CPU, never seen in KSM */
			task = ks_task_find(procs[i].pid, tids[j]);
			if (!ks_hang_step(task, *stack ? func : NULL, c.cow_ksm, now, ks.hang_secs))
				continue;
			ks.hangs++;
			(void)snprintf(line, sizeof(line), "pid %d thread %d in %s for %.0f s while "
				"cow_ksm stayed at %lld", (int)task->pid, (int)task->tid, task->func,
				now - task->since, c.cow_ksm);
			ks_say("hang: %s\n", line);
			ks_evidence("hang", line, stack);
			if (ks.stop_on_warn)
				ks_stop("stop-on-warn");
		}
		free(tids);
	}
	free(procs);
	for (size_t t = 0; t < ks.n_tasks; ) {
		if (!ks.tasks[t].seen)
			ks.tasks[t] = ks.tasks[--ks.n_tasks];
		else
			t++;
	}
}

/*
 *  ks_start_write()
 *	what only the start document has: command, kernel, knobs
 */
static void ks_start_write(FILE *fp)
{
	struct utsname u;

	(void)fprintf(fp, "interval-secs: %.0f\ntimeout-secs: %.0f\ncommand:\n",
		ks.interval, ks.timeout);
	for (char **a = ks.argv; *a; a++) {
		(void)fprintf(fp, "    - ");
		ks_yaml_str(fp, *a);
		(void)fputc('\n', fp);
	}
	if (uname(&u) == 0)
		(void)fprintf(fp, "kernel-release: '%s'\n", u.release);
	ks_knobs_write(fp);
}

/*
 *  ks_kernel_write()
 *	the kernel-side progress since the start and this interval
 */
static void ks_kernel_write(FILE *fp, const ks_counters_t *c)
{
	(void)fprintf(fp, "kernel:\n");
	ks_yaml_ll(fp, "cow-ksm", c->cow_ksm < 0 ? -1 : c->cow_ksm - ks.base.cow_ksm);
	ks_yaml_ll(fp, "cow-ksm-interval", c->cow_ksm < 0 ? -1 : c->cow_ksm - ks.prev.cow_ksm);
	ks_yaml_ll(fp, "full-scans", c->full_scans < 0 ? -1 : c->full_scans - ks.base.full_scans);
	ks_yaml_ll(fp, "pages-sharing", c->pages_sharing);
	ks_yaml_ll(fp, "ksm-zero-pages", c->ksm_zero_pages);
	ks_yaml_ll(fp, "general-profit", c->general_profit);
}

/*
 *  ks_procs_write()
 *	the processes two levels down with RSS and peak RSS, a count of the
 *	deeper ones; returns the largest peak RSS, *shown the processes listed
 */
static long ks_procs_write(FILE *fp, const ks_proc_t *procs, const size_t n, size_t *shown)
{
	long hwm_max = 0;

	*shown = 0;
	(void)fprintf(fp, "processes:%s\n", n ? "" : " []");
	for (size_t i = 0; i < n; i++) {
		if (procs[i].depth > 2)
			continue;
		(*shown)++;
		if (procs[i].hwm_kb > hwm_max)
			hwm_max = procs[i].hwm_kb;
		(void)fprintf(fp, "    - { pid: %d, ppid: %d, depth: %d, comm: ", (int)procs[i].pid,
			(int)procs[i].ppid, procs[i].depth);
		ks_yaml_str(fp, procs[i].comm);
		(void)fprintf(fp, ", state: '%c', rss-kb: %ld, hwm-kb: %ld }\n", procs[i].state,
			procs[i].rss_kb, procs[i].hwm_kb);
	}
	(void)fprintf(fp, "other-descendants: %zu\n", n - *shown);
	return hwm_max;
}

/*
 *  ks_klog_write()
 *	this interval's kernel-log events
 */
static void ks_klog_write(FILE *fp)
{
	(void)fprintf(fp, "kernel-log:\n    available: %s\n    events: %u\n    events-total: %u\n"
		"    lost-records: %u\n    lines:%s\n", ks.kmsg_fd >= 0 ? "true" : "false",
		ks.events_interval, ks.events_total, ks.lost_records, ks.n_events ? "" : " []");
	for (size_t i = 0; i < ks.n_events; i++) {
		(void)fprintf(fp, "        - { kind: '%s', time: %llu.%06llu, msg: ", ks.events[i].kind,
			(unsigned long long)(ks.events[i].rec.usec / 1000000),
			(unsigned long long)(ks.events[i].rec.usec % 1000000));
		ks_yaml_str(fp, ks.events[i].rec.msg);
		(void)fprintf(fp, " }\n");
	}
	ks.n_events = 0;
	ks.events_interval = 0;
}

/*
 *  ks_interval_doc()
 *	the document of one interval (interval false: the start one), and
 *	the progress line
 */
static void ks_interval_doc(const double now, const bool interval)
{
	char *text = NULL, load[128] = "";	/* /proc/loadavg, then remaining time */
	size_t len = 0, n, shown = 0;
	FILE *fp = open_memstream(&text, &len);
	ks_proc_t *procs = NULL;
	ks_counters_t c;
	long growth, hwm_max = 0;
	double l1 = 0.0, l5 = 0.0, l15 = 0.0;

	if (!fp) {
		ks_say("cannot build a log document: errno=%d (%s)\n", errno, strerror(errno));
		return;
	}
	ks_counters_read(&c);
	n = interval ? ks_procs_get(&procs) : 0;
	for (size_t i = 0; i < n; i++)
		ks_proc_mem(&procs[i]);
	growth = ks_rss_growth(procs, n, ks.prev.cow_ksm > ks.base.cow_ksm);
	if (interval && growth > ks.rss_growth_max_kb)
		ks.rss_growth_max_kb = growth;
	(void)ks_read_file("/proc/loadavg", load, sizeof(load));

	ks_doc_head(fp, interval ? "interval" : "start", now);
	(void)fprintf(fp, "final: false\n");
	if (!interval)
		ks_start_write(fp);
	if (sscanf(load, "%lf %lf %lf", &l1, &l5, &l15) == 3)
		(void)fprintf(fp, "load: [%.2f, %.2f, %.2f]\n", l1, l5, l15);
	else
		(void)fprintf(fp, "load: ~\n");
	ks_kernel_write(fp, &c);
	hwm_max = ks_procs_write(fp, procs, n, &shown);
	(void)fprintf(fp, "rss-growth-kb: %ld\nrss-growth-max-kb: %ld\n", growth, ks.rss_growth_max_kb);
	ks_klog_write(fp);
	(void)fprintf(fp, "hangs: %u\n", ks.hangs);
	ks_doc_end(fp, &text, &len, interval);
	ks_flush();

	if (ks.timeout > 0.0)
		(void)snprintf(load, sizeof(load), "%.0f s", ks.timeout > now - ks.t_start ?
			ks.timeout - (now - ks.t_start) : 0.0);
	else
		(void)snprintf(load, sizeof(load), "unknown");
	if (ks.progress && interval)
		ks_say("progress: interval %u, elapsed %.0f s, remaining %s, pages unshared %lld "
			"(+%lld), full scans %lld, processes %zu, max peak RSS %ld KiB, kernel events %u, "
			"hangs %u, load %.2f, log %u/%u\n", ks.intervals, now - ks.t_start, load,
			c.cow_ksm - ks.base.cow_ksm, c.cow_ksm - ks.prev.cow_ksm,
			c.full_scans - ks.base.full_scans, shown, hwm_max, ks.events_total,
			ks.hangs, l1, ks.intervals_written, ks.intervals);
	ks.prev = c;
	free(procs);
}

/*
 *  ks_out_keep()
 *	keep a line of the binary's summary for the final document: the
 *	stressor's totals, racer and latency lines, klog-check and kernel
 *	log lines, the summary counts and the run completed line (the last
 *	KS_OUT_LINES of them: the summary comes last)
 */
static void ks_out_keep(const char *line)
{
	static const char *const keep[] = {
		": totals: ", ": racer ", " millisecs per cycle: ", " millisecs: p50=",
		"klog-check:", ": kernel ", "] skipped: ", "] passed: ", "] failed: ",
		"] metrics untrustworthy: ", " run completed in ", "fail: ",
	};

	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		if (strstr(line, keep[i])) {
			if (ks.n_out_lines == KS_OUT_LINES) {
				free(ks.out_lines[0]);
				memmove(ks.out_lines, ks.out_lines + 1,
					(KS_OUT_LINES - 1) * sizeof(ks.out_lines[0]));
				ks.n_out_lines--;
			}
			ks.out_lines[ks.n_out_lines] = strdup(line);
			if (ks.out_lines[ks.n_out_lines])
				ks.n_out_lines++;
			return;
		}
	}
}

/*
 *  ks_out_read()
 *	pass the binary's output through to stdout, keeping summary lines;
 *	false at end of file
 */
static bool ks_out_read(void)
{
	char buf[4096];
	const ssize_t n = read(ks.out_fd, buf, sizeof(buf));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	if (n == 0)
		return false;
	(void)fflush(stdout);
	for (ssize_t off = 0; off < n; ) {
		const ssize_t w = write(STDOUT_FILENO, buf + off, (size_t)(n - off));

		if (w <= 0 && errno != EINTR)
			break;
		if (w > 0)
			off += w;
	}
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == '\n' || ks.line_len == sizeof(ks.line) - 1) {
			ks.line[ks.line_len] = '\0';
			ks_out_keep(ks.line);
			ks.line_len = 0;
			if (buf[i] == '\n')
				continue;
		}
		ks.line[ks.line_len++] = buf[i];
	}
	return true;
}

/*
 *  ks_signal_handler()
 *	SIGINT/SIGTERM: stop the run; SIGCHLD: wake the loop
 */
static void ks_signal_handler(int sig)
{
	const int saved = errno;
	const char c = (char)sig;

	if (sig == SIGINT || sig == SIGTERM)
		ks_signalled = sig;
	if (write(ks_sig_pipe[1], &c, 1) < 0) {
		/* the pipe is full: the loop wakes anyway */
	}
	errno = saved;
}

/*
 *  ks_secs_parse()
 *	seconds with an optional s, m, h, d, w or y suffix (stress-ng's
 *	time syntax); -1 if malformed
 */
double ks_secs_parse(const char *s)
{
	static const char sfx[] = "smhdwy";
	static const double mul[] = { 1, 60, 3600, 86400, 604800, 31536000 };
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)*s))
		return -1.0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1.0;
	if (!*end)
		return (double)v;
	if (end[1] || !strchr(sfx, tolower((unsigned char)*end)))
		return -1.0;
	return (double)v * mul[strchr(sfx, tolower((unsigned char)*end)) - sfx];
}

/*
 *  ks_timeout_find()
 *	the run time the binary was given (-t N, -tN, --timeout N,
 *	--timeout=N; the last one wins); 0 if none or infinite
 */
double ks_timeout_find(char **argv)
{
	double t = 0.0;

	for (size_t i = 1; argv[i]; i++) {
		const char *v = NULL;

		if ((!strcmp(argv[i], "-t") || !strcmp(argv[i], "--timeout")) && argv[i + 1])
			v = argv[++i];
		else if (!strncmp(argv[i], "--timeout=", 10))
			v = argv[i] + 10;
		else if (!strncmp(argv[i], "-t", 2) && isdigit((unsigned char)argv[i][2]))
			v = argv[i] + 2;
		if (v && ks_secs_parse(v) >= 0.0)
			t = ks_secs_parse(v);
	}
	return t;
}

/*
 *  ks_usage()
 *	the command line help
 */
static void ks_usage(FILE *fp)
{
	(void)fprintf(fp,
		"usage: %s --log FILE [--interval S] [--progress] [--stop-on-warn]\n"
		"                [--hang-secs S] -- BINARY [ARGS...]\n"
		"\n"
		"Runs BINARY (build/stress-ksm-unmerge or stress-ng) and appends one fsynced YAML\n"
		"document per interval to FILE: elapsed/remaining time, KSM pages unshared\n"
		"(cow_ksm), KSM counters, each process's RSS and peak RSS, kernel-log events,\n"
		"load.  The last document has final: true and the binary's exit status.\n"
		"\n"
		"  --log FILE       the soak log (appended; must be writable)\n"
		"  --interval S     seconds between documents (default 60; s/m/h suffixes)\n"
		"  --progress       a progress line on stdout every interval\n"
		"  --stop-on-warn   stop the run (SIGINT) at the first kernel warning or\n"
		"                   hang, after logging knobs, stacks and kernel-log tail\n"
		"  --hang-secs S    a thread in the same KSM function for S seconds while\n"
		"                   cow_ksm does not move is a hang (default 120, 0 off)\n"
		"\n"
		"Exit: the binary's status; 2 if a document is missing from the log, a kernel\n"
		"warning or hang was seen, or the binary was killed; 1 for bad options.\n",
		KS_NAME);
}

/*
 *  ks_bad()
 *	one line about a bad option or value, exit 1 (nothing started)
 */
static void __attribute__((noreturn, format(printf, 1, 2))) ks_bad(const char *fmt, ...)
{
	va_list ap;

	(void)fprintf(stderr, "%s: ", KS_NAME);
	va_start(ap, fmt);
	(void)vfprintf(stderr, fmt, ap);
	va_end(ap);
	(void)fputc('\n', stderr);
	exit(1);
}

/*
 *  ks_opts_parse()
 *	the tool's options up to "--", then the binary and its arguments
 */
static void ks_opts_parse(int argc, char **argv)
{
	int i;

	ks.interval = 60.0;
	ks.hang_secs = 120.0;
	for (i = 1; i < argc; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "--")) {
			i++;
			break;
		} else if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			ks_usage(stdout);
			exit(0);
		} else if (!strcmp(o, "--progress")) {
			ks.progress = true;
		} else if (!strcmp(o, "--stop-on-warn")) {
			ks.stop_on_warn = true;
		} else if (!strcmp(o, "--log") || !strcmp(o, "--interval") || !strcmp(o, "--hang-secs")) {
			const char *v = argv[i + 1];

			if (!v)
				ks_bad("option %s needs a value", o);
			i++;
			if (!strcmp(o, "--log")) {
				if (!*v)
					ks_bad("option --log: empty file name");
				ks.log_path = v;
			} else if (!strcmp(o, "--interval")) {
				ks.interval = ks_secs_parse(v);
				if (ks.interval < 1.0 || ks.interval > 86400.0)
					ks_bad("option --interval: invalid value '%s' (1 s .. 1 d)", v);
			} else {
				ks.hang_secs = ks_secs_parse(v);
				if (ks.hang_secs < 0.0 || ks.hang_secs > 86400.0)
					ks_bad("option --hang-secs: invalid value '%s' (0 .. 1 d)", v);
			}
		} else {
			ks_bad("unknown option '%s' (the binary's arguments follow \"--\")", o);
		}
	}
	if (!ks.log_path)
		ks_bad("--log FILE is required");
	if (i >= argc)
		ks_bad("no binary to run: ksm-soak --log FILE -- BINARY [ARGS...]");
	ks.argv = &argv[i];
	ks.timeout = ks_timeout_find(ks.argv);
}

/*
 *  ks_binary_check()
 *	the binary exists and is executable (as execvp would find it)
 */
static void ks_binary_check(const char *bin)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(bin, '/')) {
		if (access(bin, X_OK) < 0)
			ks_bad("binary '%s': errno=%d (%s)", bin, errno, strerror(errno));
		return;
	}
	for (const char *p = path ? path : "/usr/bin:/bin"; p && *p; ) {
		const size_t n = strcspn(p, ":");

		(void)snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, p, bin);
		if (access(buf, X_OK) == 0)
			return;
		p = p[n] ? p + n + 1 : NULL;
	}
	ks_bad("binary '%s' not found in PATH", bin);
}

/*
 *  ks_log_open()
 *	open the soak log for appending; a log that cannot be opened is bad
 *	input: one line, exit 1, the binary is not started
 */
static void ks_log_open(void)
{
	struct stat st;

	ks.log_fd = open(ks.log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (ks.log_fd < 0)
		ks_bad("option --log: cannot write soak log '%s': errno=%d (%s)", ks.log_path,
			errno, strerror(errno));
	ks.log_regular = fstat(ks.log_fd, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 *  ks_kmsg_open()
 *	follow /dev/kmsg from its end; without it no kernel-log events
 */
static void ks_kmsg_open(void)
{
	ks.kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (ks.kmsg_fd < 0) {
		if (ks.stop_on_warn)
			ks_bad("--stop-on-warn: cannot read /dev/kmsg: errno=%d (%s)",
				errno, strerror(errno));
		ks_say("kernel log not followed: cannot open /dev/kmsg: errno=%d (%s)\n",
			errno, strerror(errno));
		return;
	}
	(void)lseek(ks.kmsg_fd, 0, SEEK_END);
}

/*
 *  ks_spawn()
 *	start the binary in its own process group with its output on a pipe;
 *	it gets SIGTERM if this tool dies
 */
static void ks_spawn(void)
{
	int fds[2];
	const pid_t parent = getpid();

	if (pipe2(fds, O_CLOEXEC) < 0)
		ks_bad("pipe failed: errno=%d (%s)", errno, strerror(errno));
	ks.pid = fork();
	if (ks.pid < 0)
		ks_bad("fork failed: errno=%d (%s)", errno, strerror(errno));
	if (ks.pid == 0) {
		(void)setpgid(0, 0);
		(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		if (dup2(fds[1], STDOUT_FILENO) < 0 || dup2(fds[1], STDERR_FILENO) < 0)
			_exit(127);
		(void)signal(SIGINT, SIG_DFL);
		(void)signal(SIGTERM, SIG_DFL);
		(void)signal(SIGCHLD, SIG_DFL);
		execvp(ks.argv[0], ks.argv);
		(void)dprintf(STDERR_FILENO, "%s: cannot execute %s: errno=%d (%s)\n", KS_NAME,
			ks.argv[0], errno, strerror(errno));
		_exit(127);
	}
	(void)setpgid(ks.pid, ks.pid);
	(void)close(fds[1]);
	ks.out_fd = fds[0];
	(void)fcntl(ks.out_fd, F_SETFL, O_NONBLOCK);
}

/*
 *  ks_signals_set()
 *	self-pipe for SIGINT, SIGTERM and SIGCHLD
 */
static void ks_signals_set(void)
{
	struct sigaction sa;

	if (pipe2(ks_sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		ks_bad("pipe failed: errno=%d (%s)", errno, strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ks_signal_handler;
	sa.sa_flags = SA_RESTART;
	(void)sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGCHLD, &sa, NULL);
	(void)signal(SIGPIPE, SIG_IGN);
}

/*
 *  ks_reap()
 *	note the binary's exit
 */
static void ks_reap(void)
{
	int status;

	if (ks.exited)
		return;
	if (waitpid(ks.pid, &status, WNOHANG) == ks.pid) {
		ks.exited = true;
		ks.status = status;
		ks.t_exit = ks_now();
	}
}

/*
 *  ks_escalate()
 *	a binary that does not stop after the stop request gets SIGTERM,
 *	then SIGKILL, to its whole process group
 */
static void ks_escalate(const double now)
{
	if (ks.exited)
		return;
	if (ks_signalled) {
		char why[32];

		(void)snprintf(why, sizeof(why), "signal %s", ks_signalled == SIGINT ? "SIGINT" : "SIGTERM");
		if (ks.t_stop == 0.0) {
			ks_say("%s received, stopping the run\n", why + 7);
			ks_stop(ks_signalled == SIGINT ? "signal SIGINT" : "signal SIGTERM");
		}
	}
	if (ks.t_stop == 0.0)
		return;
	if (!ks.sent_term && now - ks.t_stop >= KS_STOP_TERM_SECS) {
		ks.sent_term = true;
		ks_say("binary still running %.0f s after SIGINT, sending SIGTERM to its process group\n",
			KS_STOP_TERM_SECS);
		(void)kill(-ks.pid, SIGTERM);
	} else if (!ks.sent_kill && now - ks.t_stop >= KS_STOP_KILL_SECS) {
		ks.sent_kill = true;
		ks_say("binary still running %.0f s after SIGINT, sending SIGKILL to its process group\n",
			KS_STOP_KILL_SECS);
		(void)kill(-ks.pid, SIGKILL);
	}
}

/*
 *  ks_loop()
 *	until the binary exits: pass its output on, follow the kernel log,
 *	check for hangs every second, log every interval
 */
static void ks_loop(void)
{
	double next_tick = ks.t_start + 1.0, next_doc = ks.t_start + ks.interval;

	while (!ks.exited) {
		struct pollfd pfd[3] = {
			{ ks_sig_pipe[0], POLLIN, 0 }, { ks.out_fd, POLLIN, 0 }, { ks.kmsg_fd, POLLIN, 0 },
		};
		double now = ks_now();
		const double next = next_tick < next_doc ? next_tick : next_doc;
		const int ms = next > now ? (int)((next - now) * 1000.0) + 1 : 0;
		char drain[64];

		(void)poll(pfd, 3, ms);
		if (pfd[0].revents & POLLIN)
			while (read(ks_sig_pipe[0], drain, sizeof(drain)) > 0)
				;
		if (pfd[1].revents & (POLLIN | POLLHUP) && !ks_out_read()) {
			(void)close(ks.out_fd);
			ks.out_fd = -1;
		}
		if (pfd[2].revents & POLLIN)
			ks_kmsg_drain();
		ks_reap();
		now = ks_now();
		ks_escalate(now);
		if (ks.exited)
			break;
		if (now >= next_tick) {
			ks_hang_check(now);
			next_tick = now + 1.0;
		}
		if (now >= next_doc) {
			ks.intervals++;
			ks_interval_doc(now, true);
			next_doc += ks.interval;
			if (next_doc < now)	/* a stall of the tool itself: no burst */
				next_doc = now + ks.interval;
		}
	}
}

/*
 *  ks_drain_output()
 *	after the exit: the rest of the binary's output (children that keep
 *	the pipe open are given KS_DRAIN_SECS)
 */
static void ks_drain_output(void)
{
	const double end = ks_now() + KS_DRAIN_SECS;

	while (ks.out_fd >= 0 && ks_now() < end) {
		struct pollfd pfd = { ks.out_fd, POLLIN, 0 };

		if (poll(&pfd, 1, 100) > 0 && !ks_out_read()) {
			(void)close(ks.out_fd);
			ks.out_fd = -1;
		}
	}
	if (ks.line_len) {
		ks.line[ks.line_len] = '\0';
		ks_out_keep(ks.line);
		ks.line_len = 0;
	}
}

/*
 *  ks_killed_by_us()
 *	true if the binary died of the stop signal this tool sent it
 *	(SIGINT, not the SIGTERM/SIGKILL of a binary that did not stop)
 */
static bool ks_killed_by_us(void)
{
	return WIFSIGNALED(ks.status) && WTERMSIG(ks.status) == SIGINT &&
	       ks.t_stop > 0.0 && !ks.sent_term && !ks.sent_kill;
}

/*
 *  ks_exit_status()
 *	the binary's exit status; killed by a signal is a failure (2)
 *	unless it was the SIGINT that stopped it
 */
static int ks_exit_status(void)
{
	if (WIFEXITED(ks.status))
		return WEXITSTATUS(ks.status);
	return ks_killed_by_us() ? 0 : 2;
}

/*
 *  ks_final_doc()
 *	the final document: exit status, stop, soak figures, summary lines
 */
static double ks_final_doc(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	double latency = 0.0;
	bool have_latency = true;

	if (ks.t_stop > 0.0)
		latency = ks.t_exit - ks.t_stop;
	else if (ks.timeout > 0.0)
		latency = ks.t_exit - (ks.t_start + ks.timeout);
	else
		have_latency = false, latency = NAN;
	if (!fp) {
		ks_say("cannot build the final log document: errno=%d (%s)\n", errno, strerror(errno));
		ks.docs_total++;	/* it is missing from the log */
		return latency;
	}
	ks_doc_head(fp, "final", ks.t_exit);
	(void)fprintf(fp, "final: true\nexit-status: %d\n", ks_exit_status());
	if (WIFSIGNALED(ks.status))
		(void)fprintf(fp, "exit-signal: %d\n", WTERMSIG(ks.status));
	(void)fprintf(fp, "stop-reason: '%s'\n", ks.stop_reason ? ks.stop_reason :
		(ks.timeout > 0.0 ? "timeout or ops" : "exit"));
	if (have_latency)
		(void)fprintf(fp, "stop-latency-secs: %.3f\n", latency);
	else
		(void)fprintf(fp, "stop-latency-secs: ~\n");
	(void)fprintf(fp, "rss-growth-max-kb: %ld\nkernel-events: %u\nkernel-log-lost-records: %u\n"
		"hangs: %u\noutput:%s\n", ks.rss_growth_max_kb, ks.events_total,
		ks.lost_records, ks.hangs, ks.n_out_lines ? "" : " []");
	for (size_t i = 0; i < ks.n_out_lines; i++) {
		(void)fprintf(fp, "    - ");
		ks_yaml_str(fp, ks.out_lines[i]);
		(void)fputc('\n', fp);
		free(ks.out_lines[i]);
	}
	ks_doc_end(fp, &text, &len, false);
	ks_flush();
	return latency;
}

/*
 *  main()
 *	parse, open the log and /dev/kmsg, run, log, judge
 */
int main(int argc, char **argv)
{
	double latency;
	char lat[32];
	int rc;

	ks.out_fd = ks.kmsg_fd = ks.log_fd = -1;
	ks_opts_parse(argc, argv);
	ks_binary_check(ks.argv[0]);
	ks_log_open();
	ks_signals_set();
	ks_kmsg_open();
	ks.can_read_stacks = access("/proc/self/stack", R_OK) == 0;
	if (!ks.can_read_stacks && ks.hang_secs > 0.0)
		ks_say("no hang check: /proc/PID/stack is not readable (needs root)\n");
	ks_counters_read(&ks.base);
	ks.prev = ks.base;

	ks.t_start = ks_now();
	ks_interval_doc(ks.t_start, false);
	ks_spawn();
	ks_loop();
	ks_drain_output();
	ks_kmsg_drain();
	latency = ks_final_doc();

	rc = ks_exit_status();
	if (isnan(latency))	/* no timeout and no stop request */
		(void)snprintf(lat, sizeof(lat), "none");
	else
		(void)snprintf(lat, sizeof(lat), "%.3f", latency);
	ks_say("soak: intervals-logged=%u/%u,intervals-lost=%u,rss-growth-max-kb=%ld,"
		"stop-latency-secs=%s,kernel-events=%u,hangs=%u,exit-status=%d\n",
		ks.intervals_written, ks.intervals, ks.intervals - ks.intervals_written,
		ks.rss_growth_max_kb, lat, ks.events_total, ks.hangs, rc);
	if (ks.docs_written < ks.docs_total) {
		(void)fprintf(stderr, "%s: fail: soak log %s: %u of %u documents are not in the file "
			"(last errno=%d (%s))\n", KS_NAME, ks.log_path, ks.docs_total - ks.docs_written,
			ks.docs_total, ks.log_errno, strerror(ks.log_errno));
		rc = 2;
	}
	if (ks.events_total || ks.hangs) {
		(void)fprintf(stderr, "%s: fail: %u kernel warning(s), %u hang(s) during the run\n",
			KS_NAME, ks.events_total, ks.hangs);
		rc = 2;
	}
	if (WIFSIGNALED(ks.status) && !ks_killed_by_us()) {
		(void)fprintf(stderr, "%s: fail: %s killed by signal %d\n", KS_NAME, ks.argv[0],
			WTERMSIG(ks.status));
		rc = 2;
	}
	if (ks.log_fd >= 0)
		(void)close(ks.log_fd);
	for (size_t i = 0; i < ks.n_queue; i++)
		free(ks.queue[i].text);
	free(ks.queue);
	free(ks.hwm);
	free(ks.tasks);
	return rc;
}
