/*
 * core-shim/core-helper.h: process helpers (stress-ng core-helper.h,
 * core-time.h, core-sync.h)
 */
#ifndef CORE_HELPER_H
#define CORE_HELPER_H

extern double stress_time_now(void);
extern void stress_proc_state_set(const char *name, const int state);
extern void stress_parent_died_alarm(void);
extern WARN_UNUSED int stress_signal_handler(const char *name, const int signum, void (*handler)(int),
	struct sigaction *orig_action);
extern int stress_signal_restore(const char *name, const int signum, struct sigaction *orig_action);
extern WARN_UNUSED char *stress_proc_self_exe_get(char *path, const size_t path_len);
extern void stress_sync_start_wait(stress_args_t *args);
extern WARN_UNUSED int32_t stress_cpus_online_get(void);
extern CONST WARN_UNUSED int stress_exit_status(const int err);
extern CONST WARN_UNUSED int stress_kernel_release(const int major, const int minor,
	const int patchlevel);
extern WARN_UNUSED int stress_kernel_release_get(void);
extern char *stress_uint64_to_str(char *str, const size_t len, const uint64_t val,
	const int precision, const bool no_zero);
extern WARN_UNUSED char *stress_const_optdup(const char *opt);
extern WARN_UNUSED int stress_unimplemented(stress_args_t *args);
extern WARN_UNUSED bool stress_capabilities_check(const int capability);

#define SHIM_CAP_IS_ROOT	(-1)
#define SHIM_CAP_SYS_ADMIN	(21)

#endif
