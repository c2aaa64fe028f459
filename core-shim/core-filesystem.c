/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/core-filesystem.c: temp path and whole-file read/write
 * helpers (stress-ng core-filesystem.c semantics: -errno on failure).
 */
#include "stress-ng.h"

/*
 *  stress_fs_temp_path_get()
 *	--temp-path or "." when not given
 */
const char *stress_fs_temp_path_get(void)
{
	char *path = NULL;

	if (stress_setting_get("temp-path", &path) && path)
		return path;
	return ".";
}

/*
 *  stress_fs_file_write()
 *	write buf to an existing file in one write; bytes or -errno
 */
ssize_t stress_fs_file_write(const char *path, const char *buf,
	const size_t buf_len)
{
	int fd;
	ssize_t ret;

	if (!path || !buf || !buf_len)
		return -EINVAL;
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, buf, buf_len);
	if (ret < (ssize_t)buf_len)
		ret = (ret < 0) ? -errno : -EIO;
	(void)close(fd);
	return ret;
}

/*
 *  stress_fs_file_read()
 *	read up to buf_len bytes with one read, buffer zeroed first and
 *	always NUL terminated; bytes read or -errno
 */
ssize_t stress_fs_file_read(const char *path, char *buf, const size_t buf_len)
{
	int fd;
	ssize_t ret;

	if (!path || !buf || !buf_len)
		return -EINVAL;
	(void)memset(buf, 0, buf_len);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	ret = read(fd, buf, buf_len);
	if (ret < 0) {
		ret = -errno;
		buf[0] = '\0';
	}
	(void)close(fd);
	if (ret == (ssize_t)buf_len)
		buf[buf_len - 1] = '\0';
	return ret;
}

/*
 *  stress_fs_temp_dir()
 *	the temp dir of a stressor instance: <temp path>/tmp-<prog>-<name>-<pid>-<instance>
 */
int stress_fs_temp_dir(char *path, const size_t len, const char *name, const pid_t pid, const uint32_t instance)
{
	return snprintf(path, len, "%s/tmp-%s-%s-%d-%" PRIu32, stress_fs_temp_path_get(), STRESS_SHIM_PROG_NAME,
		name, (int)pid, instance);
}

/*
 *  stress_fs_temp_dir_args()
 *	stress_fs_temp_dir() of args' instance
 */
int stress_fs_temp_dir_args(stress_args_t *args, char *path, const size_t len)
{
	return stress_fs_temp_dir(path, len, args->name, args->pid, args->instance);
}

/*
 *  stress_fs_temp_dir_make_args()
 *	make the instance's temp dir; 0 or -errno (a fail line)
 */
int stress_fs_temp_dir_make_args(stress_args_t *args)
{
	char tmp[PATH_MAX];

	(void)stress_fs_temp_dir_args(args, tmp, sizeof(tmp));
	if (mkdir(tmp, S_IRWXU) == 0)
		return 0;
	pr_fail("%s: mkdir '%s' failed, errno=%d (%s)\n", args->name, tmp, errno, strerror(errno));
	return -errno;
}

/*
 *  stress_fs_temp_dir_rm_args()
 *	remove the instance's temp dir; 0 or -errno (a fail line)
 */
int stress_fs_temp_dir_rm_args(stress_args_t *args)
{
	char tmp[PATH_MAX];

	(void)stress_fs_temp_dir_args(args, tmp, sizeof(tmp));
	if (rmdir(tmp) == 0)
		return 0;
	pr_fail("%s: rmdir '%s' failed, errno=%d (%s)\n", args->name, tmp, errno, strerror(errno));
	return -errno;
}

/*
 *  stress_fs_temp_filename_args()
 *	a file name in the instance's temp dir
 */
int stress_fs_temp_filename_args(stress_args_t *args, char *path, const size_t len, const uint64_t magic)
{
	char dir[PATH_MAX];

	(void)stress_fs_temp_dir_args(args, dir, sizeof(dir));
	return snprintf(path, len, "%s/%s-%s-%d-%" PRIu32 "-%" PRIu64, dir, STRESS_SHIM_PROG_NAME, args->name,
		(int)args->pid, args->instance, magic);
}
