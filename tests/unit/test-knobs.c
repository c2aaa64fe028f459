/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/unit/test-knobs.c: cmocka unit tests of what the stressor reads
 * and writes at fixed kernel paths: the state file parser, and the knob
 * save/set/restore, the state file a SIGKILLed run leaves and the next run
 * repairs, the run lock, ksmd's end-of-run drain, the per-process counters
 * (ksm_stat, ksm_merging_pages), ksm_zero_pages below 0, and
 * the global zero-page leak check.  Those paths are fixed
 * (/sys/kernel/mm/ksm, /run/stress-ksm-unmerge.state, /proc/...), so the
 * tests run in a private mount namespace with tmpfs mounted over the knob
 * directory and /run (and over /proc where a test needs fake process
 * files); they are skipped where unshare(CLONE_NEWNS) or the mounts are
 * refused, and nothing is written unless the paths are proven to be the
 * tmpfs.  The real knobs are never touched.
 */
#include "../../stress-ksm-unmerge.c"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <sched.h>
#include <sys/mount.h>
#include <cmocka.h>

#define T_TMPFS_MAGIC	(0x01021994)
#define T_STATE		KSM_STATE_FILE

static bool t_ns_ok;			/* private namespace, fake knobs mounted */
static char t_ns_why[256] = "not set up";

/* the fake knobs at the start of each test (values written later are never longer) */
static const char * const t_knobs[][2] = {
	{ "run", "0\n" }, { "pages_to_scan", "12345\n" }, { "sleep_millisecs", "20\n" },
	{ "use_zero_pages", "0\n" }, { "smart_scan", "1\n" }, { "advisor_mode", "none\n" },
	/* never written, so neither saved nor restored */
	{ "max_page_sharing", "256\n" }, { "merge_across_nodes", "1\n" }, { "full_scans", "7\n" },
	{ "ksm_zero_pages", "1000000000000\n" },
};

/* stdout redirected into a memfd */
typedef struct {
	int saved, memfd;
} t_capture_t;

/*
 *  t_capture_begin()
 *	send stdout (pr_* lines) to a fresh memfd
 */
static void t_capture_begin(t_capture_t *c)
{
	c->saved = dup(STDOUT_FILENO);
	c->memfd = shim_memfd_create("t-capture", 0);
	assert_true(c->saved >= 0 && c->memfd >= 0);
	assert_int_equal(dup2(c->memfd, STDOUT_FILENO), STDOUT_FILENO);
}

/*
 *  t_capture_end()
 *	put stdout back; what was written, NUL terminated (static buffer)
 */
static const char *t_capture_end(t_capture_t *c)
{
	static char out[8192];
	ssize_t n;

	assert_int_equal(dup2(c->saved, STDOUT_FILENO), STDOUT_FILENO);
	n = pread(c->memfd, out, sizeof(out) - 1, 0);
	assert_true(n >= 0);
	out[n] = '\0';
	(void)close(c->saved);
	(void)close(c->memfd);
	return out;
}

/*
 *  t_is_tmpfs()
 *	is path a tmpfs (a fake this test mounted, not sysfs or the real /run)
 */
static bool t_is_tmpfs(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && sf.f_type == T_TMPFS_MAGIC;
}

/*
 *  t_ns_setup()
 *	group setup: a private mount namespace with tmpfs over the knobs' directory and /run
 */
static int t_ns_setup(void **state)
{
	const unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;

	(void)state;
	if (unshare(CLONE_NEWNS) < 0)
		(void)snprintf(t_ns_why, sizeof(t_ns_why), "unshare(CLONE_NEWNS) failed, errno=%d (%s)",
			errno, strerror(errno));
	else if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		(void)snprintf(t_ns_why, sizeof(t_ns_why), "cannot make / private, errno=%d (%s)",
			errno, strerror(errno));
	else if (mount("t-ksm", KSM_SYSFS, "tmpfs", flags, "size=1m,mode=0755") < 0)
		(void)snprintf(t_ns_why, sizeof(t_ns_why), "cannot mount a tmpfs over %s, errno=%d (%s)",
			KSM_SYSFS, errno, strerror(errno));
	else if (mount("t-run", "/run", "tmpfs", flags, "size=1m,mode=0755") < 0)
		(void)snprintf(t_ns_why, sizeof(t_ns_why), "cannot mount a tmpfs over /run, errno=%d (%s)",
			errno, strerror(errno));
	else if (!t_is_tmpfs(KSM_SYSFS) || !t_is_tmpfs("/run"))
		(void)snprintf(t_ns_why, sizeof(t_ns_why), "%s or /run is not the tmpfs mounted", KSM_SYSFS);
	else
		t_ns_ok = true;
	if (!t_ns_ok)
		(void)fprintf(stderr, "test-knobs: knob tests skipped: %s\n", t_ns_why);
	return 0;
}

/*
 *  t_empty()
 *	remove everything in a fake directory
 */
static void t_empty(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dp = opendir(dir);

	assert_non_null(dp);
	while ((d = readdir(dp)) != NULL) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		(void)snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (unlink(path) < 0)
			assert_int_equal(rmdir(path), 0);
	}
	(void)closedir(dp);
}

/*
 *  t_put()
 *	write a fake file (a fake directory's file: only under the tmpfs)
 */
static void t_put(const char *path, const char *text)
{
	FILE *fp;

	assert_true(t_ns_ok);
	fp = fopen(path, "w");
	assert_non_null(fp);
	(void)fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
}

/*
 *  t_knob_put()
 *	write fake knob name
 */
static void t_knob_put(const char *name, const char *text)
{
	char path[PATH_MAX];

	(void)snprintf(path, sizeof(path), "%s/%s", KSM_SYSFS, name);
	t_put(path, text);
}

/*
 *  t_knob()
 *	a fake knob's value as the stressor reads it
 */
static const char *t_knob(const char *name)
{
	static char buf[64];

	assert_int_equal(stress_ksm_unmerge_knob_read(name, buf, sizeof(buf)), 0);
	return buf;
}

/*
 *  t_fakes()
 *	test setup: fresh fake knobs and an empty /run, when the namespace is up
 */
static int t_fakes(void **state)
{
	size_t i;

	(void)state;
	if (!t_ns_ok || !t_is_tmpfs(KSM_SYSFS) || !t_is_tmpfs("/run"))
		return 0;
	if (t_is_tmpfs("/proc"))
		(void)umount2("/proc", MNT_DETACH);	/* a fake a failed test left */
	t_empty(KSM_SYSFS);
	t_empty("/run");
	for (i = 0; i < SIZEOF_ARRAY(t_knobs); i++)
		t_knob_put(t_knobs[i][0], t_knobs[i][1]);
	return 0;
}

/*
 *  t_need_ns()
 *	skip the test unless the fake knobs are mounted
 */
#define t_need_ns() do {						\
	if (!t_ns_ok || !t_is_tmpfs(KSM_SYSFS) || !t_is_tmpfs("/run"))	\
		skip();							\
} while (0)

/*
 *  t_state_read()
 *	state_read() of a file holding text
 */
static int t_state_read(const char *text, stress_ksm_unmerge_knobs_t *knobs, int *pid)
{
	char path[] = "/tmp/test-knobs.XXXXXX";
	const int fd = mkstemp(path);
	int ret;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	(void)close(fd);
	ret = stress_ksm_unmerge_state_read(path, knobs, pid);
	(void)unlink(path);
	return ret;
}

/*
 *  test_state_read()
 *	a state file's pid and knobs; -1 (no knob taken) when absent, without a pid or a known knob
 */
static void test_state_read(void **state)
{
	stress_ksm_unmerge_knobs_t k;
	int pid;

	(void)state;
	assert_int_equal(t_state_read("pid 123\nrun 0\npages_to_scan 100\nadvisor_mode none\n", &k, &pid), 0);
	assert_int_equal(pid, 123);
	assert_string_equal(k.value[0], "0");
	assert_string_equal(k.value[1], "100");
	assert_string_equal(k.value[2], "");
	assert_string_equal(k.value[KSM_KNOBS - 1], "none");
	/* unknown names, one-word lines and blank lines are skipped; the last value wins */
	assert_int_equal(t_state_read("bogus 7\n\nrun\nrun 1\npid 9\nrun 0\n  use_zero_pages   1  \n", &k, &pid), 0);
	assert_int_equal(pid, 9);
	assert_string_equal(k.value[0], "0");
	assert_string_equal(k.value[3], "1");
	assert_string_equal(k.value[4], "");
	/* a value longer than a knob's is cut, not overflowed */
	assert_int_equal(t_state_read("pid 5\nrun 0123456789012345678901234567890123456789\n", &k, &pid), 0);
	assert_int_equal(strlen(k.value[0]), 31);
	assert_int_equal(t_state_read("run 0\npages_to_scan 100\n", &k, &pid), -1);
	assert_int_equal(t_state_read("pid 0\nrun 0\n", &k, &pid), -1);
	assert_int_equal(t_state_read("pid -4\nrun 0\n", &k, &pid), -1);
	assert_int_equal(t_state_read("pid 12\nbogus 1\n", &k, &pid), -1);
	assert_int_equal(t_state_read("", &k, &pid), -1);
	(void)memset(&k, 'x', sizeof(k));
	pid = 77;
	assert_int_equal(stress_ksm_unmerge_state_read("/nonexistent/state", &k, &pid), -1);
	assert_int_equal(pid, 0);
	assert_string_equal(k.value[0], "");
	assert_string_equal(k.value[KSM_KNOBS - 1], "");
}

/*
 *  test_knob_read()
 *	a knob's text without its newline, "[a] b" as "a"; a missing knob is an error
 */
static void test_knob_read(void **state)
{
	char buf[8];

	(void)state;
	t_need_ns();
	assert_string_equal(t_knob("pages_to_scan"), "12345");
	t_knob_put("advisor_mode", "[none] scan-time\n");
	assert_string_equal(t_knob("advisor_mode"), "none");
	t_knob_put("advisor_mode", "none [scan-time]\n");
	assert_string_equal(t_knob("advisor_mode"), "scan-time");
	assert_int_equal(stress_ksm_unmerge_field(KSM_SYSFS "/full_scans", NULL), 7);
	assert_int_equal(stress_ksm_unmerge_knob_read("pages_scanned", buf, sizeof(buf)), -1);
	assert_int_equal(stress_ksm_unmerge_field(KSM_SYSFS "/pages_scanned", NULL), -1);
}

/*
 *  test_knobs_save_set_restore()
 *	save every knob, set ksmd's (optional ones may be absent), restore what differs
 */
static void test_knobs_save_set_restore(void **state)
{
	stress_ksm_unmerge_knobs_t saved;
	char err[160] = "", path[PATH_MAX];
	t_capture_t cap;
	const char *out;
	size_t i;
	int ret;

	(void)state;
	t_need_ns();
	stress_ksm_unmerge_knobs_save(&saved);
	for (i = 0; i < KSM_KNOBS; i++) {
		char want[32];

		(void)snprintf(want, sizeof(want), "%s", t_knobs[i][1]);
		want[strcspn(want, "\n")] = '\0';
		assert_string_equal(stress_ksm_unmerge_knob_names[i], t_knobs[i][0]);
		assert_string_equal(saved.value[i], want);
	}
	assert_int_equal(stress_ksm_unmerge_knobs_set(err, sizeof(err)), 0);
	assert_string_equal(t_knob("run"), "1");
	assert_string_equal(t_knob("pages_to_scan"), "10000");
	assert_int_equal(stress_ksm_unmerge_field(KSM_SYSFS "/sleep_millisecs", NULL), 0);
	assert_string_equal(t_knob("use_zero_pages"), "1");
	assert_string_equal(t_knob("smart_scan"), "0");
	assert_string_equal(t_knob("advisor_mode"), "none");
	assert_string_equal(t_knob("max_page_sharing"), "256");
	assert_int_equal(stress_ksm_unmerge_knobs_restore(&saved), 0);
	for (i = 0; i < KSM_KNOBS; i++)
		assert_string_equal(t_knob(stress_ksm_unmerge_knob_names[i]), saved.value[i]);
	assert_string_equal(t_knob("max_page_sharing"), "256");
	assert_string_equal(t_knob("merge_across_nodes"), "1");

	/* an older kernel: no smart_scan, no advisor_mode */
	(void)snprintf(path, sizeof(path), "%s/smart_scan", KSM_SYSFS);
	assert_int_equal(unlink(path), 0);
	(void)snprintf(path, sizeof(path), "%s/advisor_mode", KSM_SYSFS);
	assert_int_equal(unlink(path), 0);
	stress_ksm_unmerge_knobs_save(&saved);
	assert_string_equal(saved.value[4], "");
	assert_string_equal(saved.value[5], "");
	assert_int_equal(stress_ksm_unmerge_knobs_set(err, sizeof(err)), 0);
	assert_int_equal(stress_ksm_unmerge_knobs_restore(&saved), 0);
	assert_string_equal(t_knob("run"), "0");
	assert_int_equal(access(path, F_OK), -1);	/* an absent knob is not created */

	/* a knob that must be set is missing: the error names it */
	(void)snprintf(path, sizeof(path), "%s/use_zero_pages", KSM_SYSFS);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(stress_ksm_unmerge_knobs_set(err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "cannot set /sys/kernel/mm/ksm/use_zero_pages=1, errno=2 (No such file or directory)");

	/* a knob that cannot be written back is counted and said */
	t_knob_put("run", "1\n");
	t_knob_put("use_zero_pages", "1\n");
	(void)snprintf(path, sizeof(path), "%s/pages_to_scan", KSM_SYSFS);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	t_capture_begin(&cap);
	ret = stress_ksm_unmerge_knobs_restore(&saved);
	out = t_capture_end(&cap);
	assert_int_equal(ret, 1);
	assert_non_null(strstr(out, "error: [") );
	assert_non_null(strstr(out, "ksm-unmerge: cannot restore /sys/kernel/mm/ksm/pages_to_scan to 12345, errno=21"));
	assert_string_equal(t_knob("run"), "0");	/* the others still restored */
	assert_string_equal(t_knob("use_zero_pages"), "0");
}

/*
 *  t_state_text()
 *	the state file's text (static buffer), "" if absent
 */
static const char *t_state_text(void)
{
	static char buf[1024];
	const ssize_t n = stress_fs_file_read(T_STATE, buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/*
 *  test_state_write_repair()
 *	the state file written atomically; a killed run repaired; kept or removed as it must be
 */
static void test_state_write_repair(void **state)
{
	stress_ksm_unmerge_knobs_t saved, back;
	char err[160], want[64];
	struct stat st;
	t_capture_t cap;
	const char *out;
	size_t i;
	int pid;

	(void)state;
	t_need_ns();
	t_knob_put("advisor_mode", "[none] scan-time\n");
	stress_ksm_unmerge_knobs_save(&saved);
	assert_int_equal(stress_ksm_unmerge_state_write(&saved), 0);
	(void)snprintf(want, sizeof(want), "pid %d\nrun 0\npages_to_scan 12345\nsleep_millisecs 20\n", (int)getpid());
	assert_true(!strncmp(t_state_text(), want, strlen(want)));
	assert_non_null(strstr(t_state_text(), "\nadvisor_mode none\n"));
	assert_int_equal(stat(T_STATE, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(access(T_STATE ".tmp", F_OK), -1);
	assert_int_equal(stress_ksm_unmerge_state_read(T_STATE, &back, &pid), 0);
	assert_int_equal(pid, getpid());
	for (i = 0; i < KSM_KNOBS; i++)
		assert_string_equal(back.value[i], saved.value[i]);

	/* the run is SIGKILLed with the knobs set; the next run repairs them */
	assert_int_equal(stress_ksm_unmerge_knobs_set(err, sizeof(err)), 0);
	assert_string_equal(t_knob("run"), "1");
	t_capture_begin(&cap);
	stress_ksm_unmerge_state_repair();
	out = t_capture_end(&cap);
	(void)snprintf(want, sizeof(want), "killed run (pid %d) from %s", (int)getpid(), T_STATE);
	assert_non_null(strstr(out, want));
	assert_string_equal(t_knob("run"), "0");
	assert_string_equal(t_knob("pages_to_scan"), "12345");
	assert_string_equal(t_knob("use_zero_pages"), "0");
	assert_string_equal(t_knob("sleep_millisecs"), "20");
	assert_int_equal(access(T_STATE, F_OK), -1);

	/* no state file: nothing to do */
	t_capture_begin(&cap);
	stress_ksm_unmerge_state_repair();
	assert_string_equal(t_capture_end(&cap), "");

	/* a knob the repair cannot write: the file stays for the next run */
	assert_int_equal(stress_ksm_unmerge_state_write(&saved), 0);
	assert_int_equal(stress_ksm_unmerge_knobs_set(err, sizeof(err)), 0);
	assert_int_equal(unlink(KSM_SYSFS "/run"), 0);
	assert_int_equal(mkdir(KSM_SYSFS "/run", 0755), 0);
	t_capture_begin(&cap);
	stress_ksm_unmerge_state_repair();
	out = t_capture_end(&cap);
	assert_non_null(strstr(out, "cannot restore /sys/kernel/mm/ksm/run to 0"));
	assert_int_equal(access(T_STATE, F_OK), 0);
	assert_string_equal(t_knob("pages_to_scan"), "12345");

	/* corrupt: removed with a warning, no knob touched */
	assert_int_equal(rmdir(KSM_SYSFS "/run"), 0);
	t_knob_put("run", "1\n");
	t_put(T_STATE, "garbage\nrun 0\n");
	t_capture_begin(&cap);
	stress_ksm_unmerge_state_repair();
	out = t_capture_end(&cap);
	assert_non_null(strstr(out, "warn: "));
	assert_non_null(strstr(out, "ignoring corrupt state file /run/stress-ksm-unmerge.state"));
	assert_string_equal(t_knob("run"), "1");
	assert_int_equal(access(T_STATE, F_OK), -1);

	/* the write fails: -errno, and the file already there is left whole */
	t_put(T_STATE, "pid 1\nrun 1\n");
	assert_int_equal(mkdir(T_STATE ".tmp", 0700), 0);
	assert_int_equal(stress_ksm_unmerge_state_write(&saved), -EISDIR);
	assert_string_equal(t_state_text(), "pid 1\nrun 1\n");
}

/*
 *  t_child_lock()
 *	the run lock's result in another process (a second run), -errno or 0
 */
static int t_child_lock(void)
{
	int status;
	const pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(-stress_ksm_unmerge_lock());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return -WEXITSTATUS(status);
}

/*
 *  test_lock()
 *	a second run is refused the lock while the first holds it, and gets it after
 */
static void test_lock(void **state)
{
	int ret;

	(void)state;
	t_need_ns();
	assert_int_equal(stress_ksm_unmerge_lock(), 0);
	assert_true(stress_ksm_unmerge_lock_fd >= 0);
	assert_int_equal(access(T_STATE ".lock", F_OK), 0);
	ret = t_child_lock();
	assert_true(ret == -EAGAIN || ret == -EACCES);
	(void)close(stress_ksm_unmerge_lock_fd);
	stress_ksm_unmerge_lock_fd = -1;
	assert_int_equal(t_child_lock(), 0);
	/* /run not writable for the lock file */
	t_empty("/run");
	assert_int_equal(mkdir(T_STATE ".lock", 0700), 0);
	assert_int_equal(stress_ksm_unmerge_lock(), -EISDIR);
	assert_int_equal(stress_ksm_unmerge_lock_fd, -1);
}

/*
 *  test_supported()
 *	KSM present (a run knob): supported; absent: skipped, saying why
 */
static void test_supported(void **state)
{
	t_capture_t cap;
	const char *out;
	int ret;

	(void)state;
	t_need_ns();
	assert_int_equal(stress_ksm_unmerge_supported("ksm-unmerge"), 0);
	assert_int_equal(unlink(KSM_SYSFS "/run"), 0);
	t_capture_begin(&cap);
	ret = stress_ksm_unmerge_supported("ksm-unmerge");
	out = t_capture_end(&cap);
	assert_int_equal(ret, -1);
	assert_non_null(strstr(out, "ksm-unmerge stressor will be skipped, KSM is not available"));
}

/* a fake knob written later, from a thread: a kernel counter moving while the stressor waits */
typedef struct {
	uint64_t ns;
	const char *knob, *text;
} t_later_t;

/*
 *  t_later()
 *	thread: sleep, then write the knob
 */
static void *t_later(void *arg)
{
	const t_later_t *l = (const t_later_t *)arg;

	(void)shim_nanosleep_uint64(l->ns);
	t_knob_put(l->knob, l->text);
	return NULL;
}

/*
 *  test_ksmd_drain()
 *	no wait when ksmd was on before the run or no rmap_item is left; else until a full scan ends,
 *	within KSM_DRAIN_SECS
 */
static void test_ksmd_drain(void **state)
{
	static const t_later_t scan_end = { 50000000, "full_scans", "8\n" };	/* ksmd ends a full scan */
	stress_ksm_unmerge_knobs_t saved;
	pthread_t thread;
	double t0, dt;

	(void)state;
	t_need_ns();
	t_knob_put("run", "1\n");
	stress_ksm_unmerge_knobs_save(&saved);
	t0 = stress_time_now();
	stress_ksm_unmerge_ksmd_drain(&saved);
	assert_true(stress_time_now() - t0 < 0.1);

	t_knob_put("run", "0\n");
	stress_ksm_unmerge_knobs_save(&saved);
	t0 = stress_time_now();
	stress_ksm_unmerge_ksmd_drain(&saved);	/* no rmap_item: the scan would never end */
	assert_true(stress_time_now() - t0 < 0.1);

	t_knob_put("pages_volatile", "3\n");	/* a dead mm's rmap_items, for ksmd to free */
	assert_int_equal(pthread_create(&thread, NULL, t_later, (void *)&scan_end), 0);
	t0 = stress_time_now();
	stress_ksm_unmerge_ksmd_drain(&saved);
	dt = stress_time_now() - t0;
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_true(dt >= 0.04 && dt < 1.0);

	t0 = stress_time_now();
	stress_ksm_unmerge_ksmd_drain(&saved);	/* the scan never ends */
	dt = stress_time_now() - t0;
	assert_true(dt >= KSM_DRAIN_SECS - 0.01 && dt < KSM_DRAIN_SECS + 1.0);
}

/*
 *  t_fake_proc()
 *	a tmpfs /proc: this process's counters, processes holding 40, 2 and 0 zero pages
 */
static void t_fake_proc(void)
{
	static const char * const dirs[] = {
		"/proc/self", "/proc/sys", "/proc/sys/kernel", "/proc/100", "/proc/200", "/proc/300", "/proc/1x",
	};
	size_t i;

	assert_int_equal(mount("t-proc", "/proc", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=1m"), 0);
	assert_true(t_is_tmpfs("/proc"));
	for (i = 0; i < SIZEOF_ARRAY(dirs); i++)
		assert_int_equal(mkdir(dirs[i], 0755), 0);
	t_put(KSM_STAT, "ksm_rmap_items 64\nksm_zero_pages 3\nksm_merging_pages 60\n");
	t_put("/proc/self/ksm_merging_pages", "61\n");
	t_put("/proc/sys/ksm_stat", "ksm_zero_pages 1000\n");
	t_put("/proc/100/ksm_stat", "ksm_rmap_items 64\nksm_zero_pages 40\nksm_merging_pages 0\n");
	t_put("/proc/200/ksm_stat", "ksm_zero_pages 2\n");
	t_put("/proc/300/ksm_stat", "ksm_rmap_items 0\n");	/* 6.1 */
	t_put("/proc/1x/ksm_stat", "ksm_zero_pages -7\n");
}

/*
 *  t_real_proc()
 *	the real /proc back
 */
static void t_real_proc(void)
{
	assert_int_equal(umount2("/proc", MNT_DETACH), 0);
	assert_false(t_is_tmpfs("/proc"));
}

/*
 *  test_counters()
 *	merging and KSM zero pages from ksm_stat field by field, merging pages on 6.1 from their file
 */
static void test_counters(void **state)
{
	int64_t merging, zero;

	(void)state;
	t_need_ns();
	t_fake_proc();
	stress_ksm_unmerge_counters(&merging, &zero);
	assert_int_equal(merging, 60);
	assert_int_equal(zero, 3);
	t_put(KSM_STAT, "ksm_rmap_items 64\n");
	stress_ksm_unmerge_counters(&merging, &zero);
	assert_int_equal(merging, 61);
	assert_int_equal(zero, -1);
	assert_int_equal(unlink(KSM_STAT), 0);
	assert_int_equal(unlink("/proc/self/ksm_merging_pages"), 0);
	stress_ksm_unmerge_counters(&merging, &zero);
	assert_int_equal(merging, -1);
	assert_int_equal(zero, -1);
	t_real_proc();
}

/*
 *  t_zero_check()
 *	zero_check() on the counters given (NULL: missing), its fail lines in *out
 */
static int t_zero_check(const char *global, const char *stat, const char **out)
{
	stress_args_t args = { .name = "ksm-unmerge" };
	stress_ksm_unmerge_ctx_t ctx;
	t_capture_t cap;
	int ret;

	(void)unlink(KSM_SYSFS "/ksm_zero_pages");
	(void)unlink(KSM_STAT);
	if (global)
		t_knob_put("ksm_zero_pages", global);
	if (stat)
		t_put(KSM_STAT, stat);
	(void)memset(&ctx, 0, sizeof(ctx));
	ctx.args = &args;
	t_capture_begin(&cap);
	ret = stress_ksm_unmerge_zero_check(&ctx, "after the unmerge");
	*out = t_capture_end(&cap);
	return ret;
}

/*
 *  test_zero_check()
 *	ksm_zero_pages below 0 (signed or wrapped) fails naming counter and c2dc78b86e08
 */
static void test_zero_check(void **state)
{
	const char *out;

	(void)state;
	t_need_ns();
	t_fake_proc();
	assert_int_equal(t_zero_check("0\n", "ksm_rmap_items 0\nksm_zero_pages 0\n", &out), 0);
	assert_int_equal(t_zero_check("4096\n", "ksm_zero_pages 4096\n", &out), 0);
	assert_int_equal(t_zero_check(NULL, NULL, &out), 0);
	assert_int_equal(t_zero_check(NULL, "ksm_rmap_items 3\n", &out), 0);
	assert_string_equal(out, "");
	assert_int_equal(t_zero_check("-1\n", "ksm_zero_pages 0\n", &out), -1);
	assert_non_null(strstr(out, "ksm-unmerge: global (sysfs) ksm_zero_pages reads -1 after the unmerge: "
		"negative; the kernel lost count of KSM zero pages"));
	assert_non_null(strstr(out, "c2dc78b86e08"));
	assert_int_equal(t_zero_check("0\n", "ksm_zero_pages -3\n", &out), -1);
	assert_non_null(strstr(out, "per-process (ksm_stat) ksm_zero_pages reads -3 after the unmerge: negative"));
	assert_int_equal(t_zero_check("18446744073709551615\n", NULL, &out), -1);
	assert_non_null(strstr(out, "global (sysfs) ksm_zero_pages reads -1 after the unmerge: wrapped below 0"));
	assert_int_equal(t_zero_check("18446744073709551614\n", "ksm_zero_pages 18446744073709551614\n", &out), -1);
	assert_non_null(strstr(out, "global (sysfs)"));
	assert_non_null(strstr(out, "per-process (ksm_stat) ksm_zero_pages reads -2"));
	t_real_proc();
}

/*
 *  test_zero_leak()
 *	the global count less every process's; the end-of-run check on growth, settling, unknown start
 */
static void test_zero_leak(void **state)
{
	/* an exit in flight drops the count back before three readings agree; a leak that grows */
	static const t_later_t settle = { 150000000, "ksm_zero_pages", "1000000000066\n" };
	static const t_later_t grow = { 300000000, "ksm_zero_pages", "1000000000096\n" };
	stress_args_t args = { .name = "ksm-unmerge" };
	stress_ksm_unmerge_shared_t sh;
	pthread_t thread;
	t_capture_t cap;
	const char *out;
	int ret;

	(void)state;
	t_need_ns();
	t_fake_proc();
	(void)memset(&sh, 0, sizeof(sh));
	stress_ksm_unmerge_shared = &sh;
	t_knob_put("ksm_zero_pages", "1000000000066\n");
	assert_int_equal(stress_ksm_unmerge_unheld("ksm_zero_pages"), 1000000000024LL);
	sh.zero_leak0 = 1000000000024LL;
	assert_int_equal(stress_ksm_unmerge_zero_leak_check(&args), EXIT_SUCCESS);
	sh.zero_leak0 = 1000000000030LL;	/* fewer than at the start */
	assert_int_equal(stress_ksm_unmerge_zero_leak_check(&args), EXIT_SUCCESS);
	t_knob_put("ksm_zero_pages", "1000000000090\n");
	sh.zero_leak0 = -1;
	assert_int_equal(stress_ksm_unmerge_zero_leak_check(&args), EXIT_SUCCESS);
	sh.zero_leak0 = 1000000000024LL;
	assert_int_equal(pthread_create(&thread, NULL, t_later, (void *)&settle), 0);
	assert_int_equal(stress_ksm_unmerge_zero_leak_check(&args), EXIT_SUCCESS);
	assert_int_equal(pthread_join(thread, NULL), 0);
	t_knob_put("ksm_zero_pages", "1000000000090\n");
	t_capture_begin(&cap);
	ret = stress_ksm_unmerge_zero_leak_check(&args);
	out = t_capture_end(&cap);
	assert_int_equal(ret, EXIT_FAILURE);
	assert_non_null(strstr(out, "fail: "));
	assert_non_null(strstr(out, "ksm-unmerge: KSM zero pages charged at fork: the global ksm_zero_pages "));
	assert_non_null(strstr(out, " 24 more pages "));
	assert_non_null(strstr(out, " (1000000000024 then)"));
	/* a count still growing: the least excess seen is said */
	assert_int_equal(pthread_create(&thread, NULL, t_later, (void *)&grow), 0);
	t_capture_begin(&cap);
	ret = stress_ksm_unmerge_zero_leak_check(&args);
	out = t_capture_end(&cap);
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_int_equal(ret, EXIT_FAILURE);
	assert_non_null(strstr(out, "KSM zero pages charged at fork: the global ksm_zero_pages holds 24 more pages "));
	/* the known bug confirmed in this run: the leak is named, not failed, but by fork-zero alone */
	sh.bug[KSM_BUG_FORK_ZERO].confirmed = 1;
	(void)shim_strscpy(sh.bug[KSM_BUG_FORK_ZERO].first, "start probe", sizeof(sh.bug[0].first));
	t_knob_put("ksm_zero_pages", "1000000000090\n");
	t_capture_begin(&cap);
	ret = stress_ksm_unmerge_zero_leak_check(&args);
	out = t_capture_end(&cap);
	assert_int_equal(ret, EXIT_SUCCESS);
	assert_null(strstr(out, "fail: "));
	assert_int_equal(sh.bug[KSM_BUG_FORK_ZERO].left, 24);
	assert_int_equal(sh.bug[KSM_BUG_FORK_ZERO].hits, 1);
	assert_string_equal(sh.bug[KSM_BUG_FORK_ZERO].first, "start probe");	/* the first match is kept */
	sh.method = 3 + KSM_RACERS - 1;		/* fork-zero alone */
	t_capture_begin(&cap);
	ret = stress_ksm_unmerge_zero_leak_check(&args);
	out = t_capture_end(&cap);
	assert_int_equal(ret, EXIT_FAILURE);
	assert_non_null(strstr(out, "KSM zero pages charged at fork: the global ksm_zero_pages holds 24 more pages "));
	assert_int_equal(sh.bug[KSM_BUG_FORK_ZERO].hits, 1);
	sh.method = 0;
	sh.bug[KSM_BUG_FORK_ZERO].confirmed = 0;
	t_knob_put("ksm_zero_pages", "garbled\n");
	assert_int_equal(stress_ksm_unmerge_unheld("ksm_zero_pages"), -1);
	assert_int_equal(unlink(KSM_SYSFS "/ksm_zero_pages"), 0);
	assert_int_equal(stress_ksm_unmerge_unheld("ksm_zero_pages"), -1);
	stress_ksm_unmerge_shared = NULL;
	t_real_proc();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_read),
		cmocka_unit_test_setup(test_knob_read, t_fakes),
		cmocka_unit_test_setup(test_knobs_save_set_restore, t_fakes),
		cmocka_unit_test_setup(test_state_write_repair, t_fakes),
		cmocka_unit_test_setup(test_lock, t_fakes),
		cmocka_unit_test_setup(test_supported, t_fakes),
		cmocka_unit_test_setup(test_ksmd_drain, t_fakes),
		cmocka_unit_test_setup(test_counters, t_fakes),
		cmocka_unit_test_setup(test_zero_check, t_fakes),
		cmocka_unit_test_setup(test_zero_leak, t_fakes),
	};

	return cmocka_run_group_tests(tests, t_ns_setup, NULL);
}
