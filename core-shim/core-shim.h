/*
 * core-shim/core-shim.h: syscall wrappers (stress-ng core-shim.h)
 * Each returns -1 with errno ENOSYS where the syscall number is missing.
 */
#ifndef CORE_SHIM_H
#define CORE_SHIM_H

#include <sys/uio.h>
#include <dirent.h>

extern int shim_pidfd_open(pid_t pid, unsigned int flags);
extern int shim_pidfd_send_signal(int pidfd, int sig, siginfo_t *info,
	unsigned int flags);
extern int shim_process_mrelease(int pidfd, unsigned int flags);
extern int shim_userfaultfd(int flags);
extern int shim_gettid(void);
extern int shim_usleep(uint64_t usec);
extern int shim_nanosleep_uint64(uint64_t nsec);
extern pid_t shim_waitpid(pid_t pid, int *wstatus, int options);
extern int shim_kill(pid_t pid, int sig);
extern int shim_unlink(const char *pathname);
extern int shim_fsync(int fd);
extern ssize_t shim_strscpy(char *dst, const char *src, size_t len);
extern size_t shim_strlcat(char *dst, const char *src, size_t len);
extern int shim_memfd_create(const char *name, unsigned int flags);
extern char *shim_strtok_r(char *str, const char *delim, char **saveptr);
extern int shim_madvise(void *addr, size_t length, int advice);
extern int shim_rmdir(const char *pathname);
extern int shim_clock_gettime(clockid_t clk_id, struct timespec *tp);
extern int shim_pause(void);

#endif
