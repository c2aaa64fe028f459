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
