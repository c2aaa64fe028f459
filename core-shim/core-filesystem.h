/*
 * core-shim/core-filesystem.h: file helpers (stress-ng core-filesystem.h)
 */
#ifndef CORE_FILESYSTEM_H
#define CORE_FILESYSTEM_H

extern WARN_UNUSED const char *stress_fs_temp_path_get(void);
extern ssize_t stress_fs_file_write(const char *path, const char *buf,
	const size_t buf_len);
extern WARN_UNUSED ssize_t stress_fs_file_read(const char *path, char *buf,
	const size_t buf_len);

#endif
