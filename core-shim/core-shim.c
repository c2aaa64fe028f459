/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/core-shim.c: syscall wrappers; -1 with errno ENOSYS when
 * the syscall number is unknown to the headers.
 */
#include "stress-ng.h"

#include <time.h>

#if !defined(__NR_pidfd_open) && defined(__x86_64__)
#define __NR_pidfd_open		(434)
#endif
#if !defined(__NR_pidfd_send_signal) && defined(__x86_64__)
#define __NR_pidfd_send_signal	(424)
#endif
#if !defined(__NR_process_mrelease) && defined(__x86_64__)
#define __NR_process_mrelease	(448)
#endif

/*
 *  shim_enosys()
 *	fail with ENOSYS
 */
static inline int MAYBE_UNUSED shim_enosys(void)
{
	errno = ENOSYS;
	return -1;
}

/*
 *  shim_pidfd_open()
 *	pidfd_open(2)
 */
int shim_pidfd_open(pid_t pid, unsigned int flags)
{
#if defined(__NR_pidfd_open)
	return (int)syscall(__NR_pidfd_open, pid, flags);
#else
	(void)pid;
	(void)flags;
	return shim_enosys();
#endif
}

/*
 *  shim_pidfd_send_signal()
 *	pidfd_send_signal(2)
 */
int shim_pidfd_send_signal(int pidfd, int sig, siginfo_t *info,
	unsigned int flags)
{
#if defined(__NR_pidfd_send_signal)
	return (int)syscall(__NR_pidfd_send_signal, pidfd, sig, info, flags);
#else
	(void)pidfd;
	(void)sig;
	(void)info;
	(void)flags;
	return shim_enosys();
#endif
}

/*
 *  shim_process_mrelease()
 *	process_mrelease(2)
 */
int shim_process_mrelease(int pidfd, unsigned int flags)
{
#if defined(__NR_process_mrelease)
	return (int)syscall(__NR_process_mrelease, pidfd, flags);
#else
	(void)pidfd;
	(void)flags;
	return shim_enosys();
#endif
}

/*
 *  shim_userfaultfd()
 *	userfaultfd(2)
 */
int shim_userfaultfd(int flags)
{
#if defined(__NR_userfaultfd)
	return (int)syscall(__NR_userfaultfd, flags);
#else
	(void)flags;
	return shim_enosys();
#endif
}

/*
 *  shim_gettid()
 *	gettid(2)
 */
int shim_gettid(void)
{
	return (int)syscall(SYS_gettid);
}

/*
 *  shim_nanosleep_uint64()
 *	sleep nsec nanoseconds, resuming after signals unless stopped
 */
int shim_nanosleep_uint64(uint64_t nsec)
{
	struct timespec t, trem;

	t.tv_sec = (time_t)(nsec / 1000000000ULL);
	t.tv_nsec = (long int)(nsec % 1000000000ULL);
	for (;;) {
		errno = 0;
		if (nanosleep(&t, &trem) == 0)
			return 0;
		if (errno != EINTR)
			return -1;
		if (!stress_continue_flag())
			return -1;
		t = trem;
	}
}

/*
 *  shim_usleep()
 *	sleep usec microseconds
 */
int shim_usleep(uint64_t usec)
{
	if (usec > UINT64_MAX / 1000ULL)
		usec = UINT64_MAX / 1000ULL;
	return shim_nanosleep_uint64(usec * 1000ULL);
}

/*
 *  shim_waitpid()
 *	waitpid(2) retrying on EINTR until stopped, then one more try
 */
pid_t shim_waitpid(pid_t pid, int *wstatus, int options)
{
	int count = 0;

	for (;;) {
		const pid_t ret = waitpid(pid, wstatus, options);

		if ((ret >= 0) || (errno != EINTR))
			return ret;
		if (!stress_continue_flag() && (++count > 1000))
			return ret;
	}
}

/*
 *  shim_kill()
 *	kill(2), refusing the process group and init
 */
int shim_kill(pid_t pid, int sig)
{
	if (pid <= 1) {
		errno = EINVAL;
		return -1;
	}
	return kill(pid, sig);
}

/*
 *  shim_unlink()
 *	unlink(2)
 */
int shim_unlink(const char *pathname)
{
	return unlink(pathname);
}

/*
 *  shim_fsync()
 *	fsync(2)
 */
int shim_fsync(int fd)
{
	return fsync(fd);
}

/*
 *  shim_strscpy()
 *	copy src into dst of len bytes, always terminated; returns the
 *	length copied or -E2BIG if truncated
 */
ssize_t shim_strscpy(char *dst, const char *src, size_t len)
{
	size_t i;

	if (!len)
		return -E2BIG;
	for (i = 0; i < len; i++) {
		dst[i] = src[i];
		if (!src[i])
			return (ssize_t)i;
	}
	dst[len - 1] = '\0';
	return -E2BIG;
}

/*
 *  shim_strtok_r()
 *	strtok_r(3)
 */
char *shim_strtok_r(char *str, const char *delim, char **saveptr)
{
	return strtok_r(str, delim, saveptr);
}

/*
 *  shim_strlcat()
 *	strlcat(3): append src to dst of len bytes; the length it tried to make
 */
size_t shim_strlcat(char *dst, const char *src, size_t len)
{
	return strlcat(dst, src, len);
}

/*
 *  shim_memfd_create()
 *	memfd_create(2)
 */
int shim_memfd_create(const char *name, unsigned int flags)
{
	return (int)syscall(__NR_memfd_create, name, flags);
}

/*
 *  shim_madvise()
 *	madvise(2); stress-ng's also maps POSIX_MADV_* (the same values on Linux)
 */
int shim_madvise(void *addr, size_t length, int advice)
{
	return madvise(addr, length, advice);
}

/*
 *  shim_rmdir()
 *	rmdir(2)
 */
int shim_rmdir(const char *pathname)
{
	return rmdir(pathname);
}

/*
 *  shim_clock_gettime()
 *	clock_gettime(2)
 */
int shim_clock_gettime(clockid_t clk_id, struct timespec *tp)
{
	return clock_gettime(clk_id, tp);
}

/*
 *  shim_pause()
 *	pause(2)
 */
int shim_pause(void)
{
	return pause();
}
