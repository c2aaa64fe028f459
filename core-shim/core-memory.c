/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/core-memory.c: memory size helpers and the memory usage
 * messages of stress-ng's core-memory.c.
 */
#include "stress-ng.h"

#include <sys/prctl.h>

#if !defined(PR_SET_VMA)
#define PR_SET_VMA		(0x53564d41)
#endif
#if !defined(PR_SET_VMA_ANON_NAME)
#define PR_SET_VMA_ANON_NAME	(0)
#endif

/*
 *  stress_memory_page_size_get()
 *	system page size, cached
 */
size_t stress_memory_page_size_get(void)
{
	static size_t page_size;

	if (!page_size) {
		const long int sz = sysconf(_SC_PAGESIZE);

		page_size = (sz > 0) ? (size_t)sz : 4096;
	}
	return page_size;
}

/*
 *  stress_memory_info_get()
 *	free/total memory and swap via sysinfo(2); 0 or -1
 */
int stress_memory_info_get(stress_memory_info_t *info)
{
	struct sysinfo si;
	char buf[64];

	if (!info)
		return -1;
	(void)memset(info, 0, sizeof(*info));
	if (sysinfo(&si) < 0)
		return -1;
	info->freemem = (size_t)si.freeram * si.mem_unit;
	info->totalmem = (size_t)si.totalram * si.mem_unit;
	info->freeswap = (size_t)si.freeswap * si.mem_unit;
	info->totalswap = (size_t)si.totalswap * si.mem_unit;
	if (stress_fs_file_read("/proc/sys/kernel/shmall", buf, sizeof(buf)) > 0) {
		size_t shmall = 0;

		if (sscanf(buf, "%zu", &shmall) == 1)
			info->shmall = shmall;
	}
	return 0;
}

/*
 *  stress_memory_free_get()
 *	" (xG mem free, yG swap free)" text for messages, static buffer
 */
char *stress_memory_free_get(void)
{
	static char buf[96];
	stress_memory_info_t info;
	char s_mem[32], s_swap[32];

	buf[0] = '\0';
	if (stress_memory_info_get(&info) < 0)
		return buf;
	if (!info.freemem && !info.totalmem && !info.freeswap && !info.totalswap)
		return buf;
	(void)stress_uint64_to_str(s_mem, sizeof(s_mem), (uint64_t)info.freemem, 0, true);
	(void)stress_uint64_to_str(s_swap, sizeof(s_swap), (uint64_t)info.freeswap, 0, true);
	(void)snprintf(buf, sizeof(buf), " (%s mem free, %s swap free)", s_mem, s_swap);
	return buf;
}

/*
 *  stress_memory_phys_size_get()
 *	available physical memory in bytes (sysconf), 0 on failure
 */
uint64_t stress_memory_phys_size_get(void)
{
	const uint64_t page_size = (uint64_t)stress_memory_page_size_get();
	long int pages;

	errno = 0;
	pages = sysconf(_SC_AVPHYS_PAGES);
	if (pages < 0)
		return 0;
	if ((uint64_t)pages > UINT64_MAX / page_size)
		return UINT64_MAX & ~(page_size - 1);
	return (uint64_t)pages * page_size;
}

/*
 *  stress_memory_available_get()
 *	MemAvailable from /proc/meminfo in bytes, falls back to free RAM
 */
uint64_t stress_memory_available_get(void)
{
	char buf[4096];
	const char *ptr;
	unsigned long long int kb;
	const ssize_t n = stress_fs_file_read("/proc/meminfo", buf, sizeof(buf));

	if (n > 0) {
		ptr = strstr(buf, "MemAvailable:");
		if (ptr && (sscanf(ptr + 13, "%llu", &kb) == 1))
			return (uint64_t)kb * 1024ULL;
	}
	return stress_memory_phys_size_get();
}

/*
 *  stress_memory_usage_get()
 *	info line with memory per instance and in total
 */
void stress_memory_usage_get(stress_args_t *args, const size_t vm_per_instance,
	const size_t vm_total)
{
	char s1[32], s2[32], s3[32];

	pr_inf("%s: using %sB per stressor instance (total %sB of %sB available memory)\n",
		args->name,
		stress_uint64_to_str(s1, sizeof(s1), (uint64_t)vm_per_instance, 2, true),
		stress_uint64_to_str(s2, sizeof(s2), (uint64_t)vm_total, 2, true),
		stress_uint64_to_str(s3, sizeof(s3), stress_memory_phys_size_get(), 2, true));
}

/*
 *  stress_memory_anon_name_set()
 *	name an anonymous mapping (shows in /proc/pid/maps), best effort
 */
void stress_memory_anon_name_set(const void *addr, const size_t size,
	const char *name)
{
	(void)prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long int)addr,
		(unsigned long int)size, (unsigned long int)name);
}
