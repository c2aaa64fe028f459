/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-knobs.h: the global KSM sysfs knobs (private header
 * of stress-ksm-unmerge.c, included once): read, save, set and restore
 * them, the state file that lets the next run repair knobs a SIGKILLed run
 * left changed, the run lock that keeps two runs apart, and supported()
 * (is KSM there and may we drive it).
 */

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

/*
 *  stress_ksm_unmerge_knob_saved()
 *	the saved value of a knob, "" if absent
 */
static const char *stress_ksm_unmerge_knob_saved(const stress_ksm_unmerge_knobs_t *knobs, const char *knob)
{
	size_t i;

	for (i = 0; i < KSM_KNOBS; i++) {
		if (!strcmp(stress_ksm_unmerge_knob_names[i], knob))
			return knobs->value[i];
	}
	return "";
}

/*
 *  stress_ksm_unmerge_rmap_items()
 *	every rmap_item the kernel holds, of live and exited mms alike
 *	(pages_volatile is the rest of ksm_rmap_items, never below 0)
 */
static uint64_t stress_ksm_unmerge_rmap_items(void)
{
	return stress_ksm_unmerge_knob_u64("pages_shared") + stress_ksm_unmerge_knob_u64("pages_sharing") +
		stress_ksm_unmerge_knob_u64("pages_unshared") + stress_ksm_unmerge_knob_u64("pages_volatile");
}

/*
 *  stress_ksm_unmerge_ksmd_drain()
 *	parent, every instance reaped, ksmd still on: an mm that exits (or is
 *	SIGKILLed) holding rmap_items keeps them, its mm_slot and its count in
 *	pages_shared/pages_sharing until ksmd next visits it (__ksm_exit puts
 *	it right after ksmd's cursor); stopping ksmd first would leave them
 *	charged to dead processes.  One full scan that ends after the exits
 *	frees them; bounded, since other users' memory may make it long.
 */
static void stress_ksm_unmerge_ksmd_drain(const stress_ksm_unmerge_knobs_t *saved)
{
	const double deadline = stress_time_now() + KSM_UNMERGE_DRAIN_SECS;
	const uint64_t scans0 = stress_ksm_unmerge_knob_u64("full_scans");
	uint64_t scans = scans0;

	/* ksmd stays on after the run: it frees them itself */
	if (!strcmp(stress_ksm_unmerge_knob_saved(saved, "run"), "1") || stress_ksm_unmerge_rmap_items() == 0)
		return;
	while (stress_time_now() < deadline) {
		scans = stress_ksm_unmerge_knob_u64("full_scans");
		if (scans != scans0)
			return;		/* a scan ended (or run=2 reset the count) */
		(void)shim_nanosleep_uint64(2000000);
	}
	pr_dbg("ksm-unmerge: ksmd did not finish a full scan within %.0f s of the end of the run: "
		"%" PRIu64 " rmap_items are left for its next run (full_scans %" PRIu64 ")\n",
		KSM_UNMERGE_DRAIN_SECS, stress_ksm_unmerge_rmap_items(), scans);
}
