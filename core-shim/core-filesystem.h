/*
 * core-shim/core-filesystem.h: file helpers (stress-ng core-filesystem.h)
 */
#ifndef CORE_FILESYSTEM_H
#define CORE_FILESYSTEM_H

extern WARN_UNUSED const char *stress_fs_temp_path_get(void);
extern int stress_fs_temp_dir(char *path, const size_t len, const char *name, const pid_t pid,
	const uint32_t instance);
extern int stress_fs_temp_dir_args(stress_args_t *args, char *path, const size_t len);
extern WARN_UNUSED int stress_fs_temp_dir_make_args(stress_args_t *args);
extern int stress_fs_temp_dir_rm_args(stress_args_t *args);
extern int stress_fs_temp_filename_args(stress_args_t *args, char *path, const size_t len, const uint64_t magic);
extern ssize_t stress_fs_file_write(const char *path, const char *buf,
	const size_t buf_len);
extern WARN_UNUSED ssize_t stress_fs_file_read(const char *path, char *buf,
	const size_t buf_len);

#endif
