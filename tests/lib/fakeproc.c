/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/lib/fakeproc.c: an LD_PRELOAD library, built only for the tests
 * (tests/fakeproc.mk, tests/build/fakeproc.so), that makes this kernel's
 * KSM interfaces look like another kernel's to the unmodified stressor, so
 * tests/it/cycle/iface.sh can run its replacement paths on the real kernel.
 * FAKEPROC (a comma list) picks what to fake, each as the recorded dumps
 * in tests/data/kernel-signals/ show it:
 *   kpf-ksm-all   Debian 6.12.117: /proc/kpageflags sets KPF_KSM (bit 21)
 *                 on every anonymous page (KPF_ANON, bit 12), a fresh
 *                 written page and a private copy after the unmerge too
 *   ksm-stat-61   Debian 6.1.192: /proc/<pid>/ksm_stat holds only
 *                 ksm_rmap_items; no global ksm_zero_pages or
 *                 general_profit in /sys/kernel/mm/ksm
 *   ksm-stat-none Linux 5.19-6.0: no /proc/<pid>/ksm_stat (6.1), no global
 *                 ksm_zero_pages or general_profit
 *   ksm-merging-none  no /proc/<pid>/ksm_merging_pages (5.19); with
 *                 ksm-stat-none: a kernel before 5.19, no per-process
 *                 counter at all
 *   no-zero-page  a kernel booted with pvm_no_zero_page=1: a read fault of
 *                 anonymous memory maps a fresh exclusive page, not the
 *                 zero page.  Only the interface self-test's probe (a
 *                 2-page PROT_READ private anonymous mapping, read) is
 *                 faked: such an mmap gets each page write-faulted (a
 *                 zero-filled private page) and then made read-only
 *   kmsg-kernel   records read from /dev/kmsg that user space wrote with
 *                 facility 1 (LOG_USER, what "<4>WARNING: ..." written to
 *                 /dev/kmsg gives) are read as facility 0 (kernel)
 *                 records: how tests/it/klog/inject.sh injects kernel
 *                 splats into the real log the kernel-log check reads
 *                 (which matches kernel records only)
 * The real reads are done and then edited, so every counter stays live.
 * Nothing is printed; the stressor's "interface ... unreliable" lines show
 * the fake took effect.
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#define FAKE_FDS	(65536)
#define KPF_ANON	(1ULL << 12)
#define KPF_KSM		(1ULL << 21)

enum { FD_REAL = 0, FD_KSM_STAT, FD_KPAGEFLAGS, FD_KMSG };

static unsigned char fake_fd[FAKE_FDS];	/* FD_* per fd */
static off_t fake_pos[FAKE_FDS];	/* read() position of a ksm_stat fd */
static int fake_modes = -1;		/* FAKE_* */

enum {
	FAKE_KPF_KSM_ALL = 1,
	FAKE_KSM_STAT_61 = 2,
	FAKE_NO_ZERO_PAGE = 4,
	FAKE_KSM_STAT_NONE = 8,
	FAKE_KSM_MERGING_NONE = 16,
	FAKE_KMSG_KERNEL = 32,
};

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_close)(int);
static int (*real_access)(const char *, int);
static int (*real_faccessat)(int, const char *, int, int);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_pread64)(int, void *, size_t, off_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static void *(*real_mmap64)(void *, size_t, int, int, int, off_t);

/*
 *  fake_init()
 *	resolve the real functions, parse FAKEPROC once
 */
static void fake_init(void)
{
	const char *env;

	if (fake_modes >= 0)
		return;
	real_open = dlsym(RTLD_NEXT, "open");
	real_open64 = dlsym(RTLD_NEXT, "open64");
	real_openat = dlsym(RTLD_NEXT, "openat");
	real_openat64 = dlsym(RTLD_NEXT, "openat64");
	real_close = dlsym(RTLD_NEXT, "close");
	real_access = dlsym(RTLD_NEXT, "access");
	real_faccessat = dlsym(RTLD_NEXT, "faccessat");
	real_read = dlsym(RTLD_NEXT, "read");
	real_pread = dlsym(RTLD_NEXT, "pread");
	real_pread64 = dlsym(RTLD_NEXT, "pread64");
	real_mmap = dlsym(RTLD_NEXT, "mmap");
	real_mmap64 = dlsym(RTLD_NEXT, "mmap64");
	env = getenv("FAKEPROC");
	fake_modes = 0;
	if (!env)
		return;
	if (strstr(env, "kpf-ksm-all"))
		fake_modes |= FAKE_KPF_KSM_ALL;
	if (strstr(env, "ksm-stat-61"))
		fake_modes |= FAKE_KSM_STAT_61;
	if (strstr(env, "no-zero-page"))
		fake_modes |= FAKE_NO_ZERO_PAGE;
	if (strstr(env, "ksm-stat-none"))
		fake_modes |= FAKE_KSM_STAT_NONE;
	if (strstr(env, "ksm-merging-none"))
		fake_modes |= FAKE_KSM_MERGING_NONE;
	if (strstr(env, "kmsg-kernel"))
		fake_modes |= FAKE_KMSG_KERNEL;
}

/*
 *  fake_is_proc()
 *	"/proc/<self|pid>/<name>"
 */
static bool fake_is_proc(const char *path, const char *name)
{
	const char *p;

	if (strncmp(path, "/proc/", 6))
		return false;
	p = strchr(path + 6, '/');
	return p && p[1] && !strcmp(p + 1, name);
}

/*
 *  fake_hidden()
 *	a file the faked kernel does not have: ENOENT
 */
static bool fake_hidden(const char *path)
{
	if (!path)
		return false;
	if ((fake_modes & (FAKE_KSM_STAT_61 | FAKE_KSM_STAT_NONE)) &&
	    (!strcmp(path, "/sys/kernel/mm/ksm/ksm_zero_pages") || !strcmp(path, "/sys/kernel/mm/ksm/general_profit")))
		return true;
	if ((fake_modes & FAKE_KSM_STAT_NONE) && fake_is_proc(path, "ksm_stat"))
		return true;
	return (fake_modes & FAKE_KSM_MERGING_NONE) && fake_is_proc(path, "ksm_merging_pages");
}

/*
 *  fake_opened()
 *	remember what an fd opened by path is
 */
static int fake_opened(const int fd, const char *path)
{
	if (fd < 0 || fd >= FAKE_FDS)
		return fd;
	fake_fd[fd] = FD_REAL;
	fake_pos[fd] = 0;
	if ((fake_modes & FAKE_KSM_STAT_61) && fake_is_proc(path, "ksm_stat"))
		fake_fd[fd] = FD_KSM_STAT;
	else if ((fake_modes & FAKE_KPF_KSM_ALL) && !strcmp(path, "/proc/kpageflags"))
		fake_fd[fd] = FD_KPAGEFLAGS;
	else if ((fake_modes & FAKE_KMSG_KERNEL) && !strcmp(path, "/dev/kmsg"))
		fake_fd[fd] = FD_KMSG;
	return fd;
}

/* the mode argument open() takes with O_CREAT or O_TMPFILE (as glibc's __OPEN_NEEDS_MODE) */
#define FAKE_MODE(flags, last, mode)							\
	do {										\
		va_list ap;								\
		mode = 0;								\
		if (((flags) & O_CREAT) || ((flags) & O_TMPFILE) == O_TMPFILE) {	\
			va_start(ap, last);						\
			mode = va_arg(ap, int);						\
			va_end(ap);							\
		}									\
	} while (0)

/*
 *  fake_ctor()
 *	resolve everything before the program runs (its threads come later)
 */
static void __attribute__((constructor)) fake_ctor(void)
{
	fake_init();
}

/*
 *  fake_open()
 *	the open interposers' body: ENOENT for a hidden file, else the real
 *	call (*real, or *real_at with dirfd) and remember what the fd is
 */
static int fake_open(int (**real)(const char *, int, ...), int (**real_at)(int, const char *, int, ...),
	const int dirfd, const char *path, const int flags, const int mode)
{
	fake_init();
	if (fake_hidden(path)) {
		errno = ENOENT;
		return -1;
	}
	return fake_opened(real ? (*real)(path, flags, mode) : (*real_at)(dirfd, path, flags, mode), path);
}

int open(const char *path, int flags, ...)
{
	int mode;

	FAKE_MODE(flags, flags, mode);
	return fake_open(&real_open, NULL, AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	int mode;

	FAKE_MODE(flags, flags, mode);
	return fake_open(&real_open64, NULL, AT_FDCWD, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	int mode;

	FAKE_MODE(flags, flags, mode);
	return fake_open(NULL, &real_openat, dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	int mode;

	FAKE_MODE(flags, flags, mode);
	return fake_open(NULL, &real_openat64, dirfd, path, flags, mode);
}

int access(const char *path, int mode)
{
	fake_init();
	if (fake_hidden(path)) {
		errno = ENOENT;
		return -1;
	}
	return real_access(path, mode);
}

int faccessat(int dirfd, const char *path, int mode, int flags)
{
	fake_init();
	if (fake_hidden(path)) {
		errno = ENOENT;
		return -1;
	}
	return real_faccessat(dirfd, path, mode, flags);
}

int close(int fd)
{
	fake_init();
	if (fd >= 0 && fd < FAKE_FDS)
		fake_fd[fd] = FD_REAL;
	return real_close(fd);
}

/*
 *  fake_ksm_stat()
 *	6.1's ksm_stat of the real one: its ksm_rmap_items line only, the
 *	bytes from off; -1 with errno as the real read
 */
static ssize_t fake_ksm_stat(const int fd, void *buf, const size_t len, const off_t off)
{
	char real[8192], out[256];
	const char *line;
	ssize_t n;
	size_t olen = 0;

	n = real_pread(fd, real, sizeof(real) - 1, 0);
	if (n < 0)
		return -1;
	real[n] = '\0';
	line = strstr(real, "ksm_rmap_items ");
	if (line && (line == real || line[-1] == '\n')) {
		olen = strcspn(line, "\n");
		if (olen > sizeof(out) - 2)
			olen = sizeof(out) - 2;
		memcpy(out, line, olen);
		out[olen++] = '\n';
	}
	if (off >= (off_t)olen)
		return 0;
	n = (ssize_t)((olen - (size_t)off) < len ? olen - (size_t)off : len);
	memcpy(buf, out + off, (size_t)n);
	return n;
}

/*
 *  fake_kpageflags()
 *	6.12's stable_page_flags(): KPF_KSM on every anonymous page of a
 *	real kpageflags read at a word-aligned offset
 */
static ssize_t fake_kpageflags(const ssize_t n, void *buf, const off_t off)
{
	uint64_t w;
	ssize_t i;

	if (n <= 0 || (off % 8))
		return n;
	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, (char *)buf + i, sizeof(w));
		if (w & KPF_ANON)
			w |= KPF_KSM;
		memcpy((char *)buf + i, &w, sizeof(w));
	}
	return n;
}

/*
 *  fake_kmsg()
 *	a /dev/kmsg record "prefix,seq,usec,flags;text" of facility 1 read
 *	as a kernel record: the prefix becomes its level alone
 */
static ssize_t fake_kmsg(const ssize_t n, char *buf)
{
	char *end;
	unsigned long prefix;

	if (n <= 0 || buf[0] < '0' || buf[0] > '9')
		return n;
	prefix = strtoul(buf, &end, 10);
	if (*end != ',' || (prefix >> 3) != 1)
		return n;
	buf[0] = (char)('0' + (prefix & 7));
	if (end - buf == 1)		/* "8," "9," -> "0," "1," */
		return n;
	/* "10,".."15," -> "2,".."7,": one character shorter */
	memmove(buf + 1, buf + 2, (size_t)n - 2);
	return n - 1;
}

ssize_t read(int fd, void *buf, size_t len)
{
	ssize_t n;

	fake_init();
	if (fd >= 0 && fd < FAKE_FDS && fake_fd[fd] == FD_KMSG)
		return fake_kmsg(real_read(fd, buf, len), buf);
	if (fd >= 0 && fd < FAKE_FDS && fake_fd[fd] == FD_KSM_STAT) {
		n = fake_ksm_stat(fd, buf, len, fake_pos[fd]);
		if (n > 0)
			fake_pos[fd] += n;
		return n;
	}
	return real_read(fd, buf, len);
}

/*
 *  fake_pread()
 *	pread and pread64 (one function on LP64)
 */
static ssize_t fake_pread(ssize_t (*fn)(int, void *, size_t, off_t), int fd, void *buf, size_t len, off_t off)
{
	if (fd >= 0 && fd < FAKE_FDS && fake_fd[fd] == FD_KSM_STAT)
		return fake_ksm_stat(fd, buf, len, off);
	if (fd >= 0 && fd < FAKE_FDS && fake_fd[fd] == FD_KPAGEFLAGS)
		return fake_kpageflags(fn(fd, buf, len, off), buf, off);
	return fn(fd, buf, len, off);
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	fake_init();
	return fake_pread(real_pread, fd, buf, len, off);
}

ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
	fake_init();
	return fake_pread(real_pread64, fd, buf, len, off);
}

/*
 *  fake_mmap()
 *	no-zero-page: the self-test's read-fault probe gets private pages
 */
static void *fake_mmap(void *(*fn)(void *, size_t, int, int, int, off_t), void *addr, size_t len,
	int prot, int flags, int fd, off_t off)
{
	const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	volatile char *p;
	size_t i;

	if (!(fake_modes & FAKE_NO_ZERO_PAGE) || addr || prot != PROT_READ || flags != (MAP_PRIVATE | MAP_ANONYMOUS) ||
	    fd != -1 || len != 2 * ps)
		return fn(addr, len, prot, flags, fd, off);
	p = fn(NULL, len, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED)
		return MAP_FAILED;
	for (i = 0; i < len; i += ps)
		p[i] = 0;	/* a write fault: a zero-filled private page */
	if (mprotect((void *)p, len, PROT_READ) < 0) {
		(void)munmap((void *)p, len);
		return MAP_FAILED;
	}
	return (void *)p;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	fake_init();
	return fake_mmap(real_mmap, addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	fake_init();
	return fake_mmap(real_mmap64, addr, len, prot, flags, fd, off);
}
