/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-memory.h: how much memory a run may take (private
 * header of stress-ksm-unmerge.c, included once): MemAvailable, the
 * cgroup v2 memory limits on the way up, and the cap and per-instance
 * region size derived from them.
 */

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
 *	keeps besides it: the page scan's bounded scratch, per region page the
 *	uffd-wp, mprotect and dontneed racers' state, a second copy of every
 *	page for the mrelease victims, and a few MB per racer (thp: its THPs)
 */
static uint64_t stress_ksm_unmerge_cap(const uint64_t limit, stress_args_t *args, const uint64_t methods)
{
	uint64_t extra = 0, fixed = KSM_UNMERGE_SCAN_BYTES, copies = 1;
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
