/*
 * core-shim/core-memory.h: memory helpers (stress-ng core-memory.h)
 */
#ifndef CORE_MEMORY_H_H
#define CORE_MEMORY_H_H

typedef struct stress_memory_info {
	size_t freemem;
	size_t totalmem;
	size_t freeswap;
	size_t totalswap;
	size_t shmall;
} stress_memory_info_t;

extern size_t stress_memory_page_size_get(void);
extern int stress_memory_info_get(stress_memory_info_t *info);
extern WARN_UNUSED char *stress_memory_free_get(void);
extern void stress_memory_usage_get(stress_args_t *args,
	const size_t vm_per_instance, const size_t vm_total);
extern void stress_memory_anon_name_set(const void *addr, const size_t size,
	const char *name);

#endif
