// SPDX-License-Identifier: GPL-2.0
/*
 * Proof for "mm/migrate_device: uncharge a KSM zero page that migration
 * replaces" (patch 3 of the series): merge zero-filled pages into KSM zero
 * pages, migrate them to test_hmm's device-private memory
 * (HMM_DMIRROR_MIGRATE_TO_DEV: migrate_vma_setup() collects the zero pfn,
 * migrate_vma_pages() calls migrate_vma_insert_page(), which replaces the
 * zero page PTE), and check that the process is no longer charged for them
 * in its own /proc/self/ksm_stat.  Per-process counter only; nothing races:
 * ksmd is stopped before the migration.
 *
 * Needs root, KSM and CONFIG_TEST_HMM (/dev/hmm_dmirror0), so it runs in the
 * small proof kernels under tools/kernels/ksm-qemu, not in a kselftest run.  It
 * writes the KSM knobs run, use_zero_pages, pages_to_scan and sleep_millisecs
 * and puts back what it found.  Not part of the series: the kernel's own
 * kselftest.h and test_hmm_uapi.h, built by tools/kernels/upstream/selftests.sh:
 *
 *   gcc -static -O2 -Wall -I $LINUX/tools/testing/selftests -I $LINUX/lib \
 *       -o migrate_device_ksm_zero_pages migrate_device_ksm_zero_pages.c
 *
 * Exit status (kselftest): 0 pass, 1 fail, 4 skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kselftest.h"
#include "test_hmm_uapi.h"

#define KSM_DIR		"/sys/kernel/mm/ksm/"
#define SIZE		(2u << 20)

static const char *knobs[] = { "run", "use_zero_pages", "pages_to_scan", "sleep_millisecs" };
static long saved[4];
static int nr_saved;

/* Read a number from a sysfs or procfs file; -1 if it cannot. */
static long read_long(const char *path, const char *key)
{
	char buf[4096], *p;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = buf;
	if (key) {
		p = strstr(buf, key);
		if (!p)
			return -1;
		p += strlen(key);
	}
	return strtol(p, NULL, 10);
}

static int write_knob(const char *knob, long val)
{
	char path[128], buf[32];
	int fd, len, ret;

	snprintf(path, sizeof(path), KSM_DIR "%s", knob);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	len = snprintf(buf, sizeof(buf), "%ld", val);
	ret = write(fd, buf, len) == len ? 0 : -1;
	close(fd);
	return ret;
}

/* Put back the KSM knobs as they were when the program started. */
static void restore_knobs(void)
{
	int i;

	write_knob("run", 0);
	for (i = nr_saved - 1; i >= 0; i--)
		write_knob(knobs[i], saved[i]);
}

static long my_ksm_zero_pages(void)
{
	return read_long("/proc/self/ksm_stat", "ksm_zero_pages ");
}

/* Run ksmd until it has done two more full scans (merging needs two). */
static int ksm_merge(void)
{
	long start = read_long(KSM_DIR "full_scans", NULL);
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i;

	if (start < 0 || write_knob("run", 1))
		return -1;
	for (i = 0; i < 6000; i++) {
		if (read_long(KSM_DIR "full_scans", NULL) >= start + 2)
			return write_knob("run", 0);
		nanosleep(&ts, NULL);
	}
	return -1;
}

int main(void)
{
	struct hmm_dmirror_cmd cmd = { 0 };
	long pages = SIZE / getpagesize();
	long merged, migrated, unmapped;
	char *map, *buf;
	int fd, i;

	ksft_print_header();
	fd = open("/dev/hmm_dmirror0", O_RDWR);
	if (fd < 0)
		ksft_exit_skip("no /dev/hmm_dmirror0 (CONFIG_TEST_HMM): %s\n", strerror(errno));
	if (my_ksm_zero_pages() < 0)
		ksft_exit_skip("no ksm_zero_pages in /proc/self/ksm_stat\n");
	for (i = 0; i < 4; i++, nr_saved++) {
		char path[128];

		snprintf(path, sizeof(path), KSM_DIR "%s", knobs[i]);
		saved[i] = read_long(path, NULL);
		if (saved[i] < 0)
			ksft_exit_skip("cannot read %s\n", path);
	}
	ksft_set_plan(1);
	if (write_knob("run", 2) || write_knob("use_zero_pages", 1) ||
	    write_knob("pages_to_scan", 1000) || write_knob("sleep_millisecs", 0)) {
		restore_knobs();
		ksft_exit_skip("cannot write the KSM knobs (not root?)\n");
	}

	map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	buf = malloc(SIZE);
	if (map == MAP_FAILED || !buf) {
		restore_knobs();
		ksft_exit_fail_msg("mmap/malloc failed\n");
	}
	madvise(map, SIZE, MADV_NOHUGEPAGE);
	memset(map, 0, SIZE);
	if (madvise(map, SIZE, MADV_MERGEABLE) || ksm_merge()) {
		restore_knobs();
		ksft_exit_fail_msg("merging failed\n");
	}
	merged = my_ksm_zero_pages();
	if (merged != pages) {
		restore_knobs();
		ksft_exit_fail_msg("ksm_zero_pages %ld after merging, not %ld\n", merged, pages);
	}

	cmd.addr = (unsigned long)map;
	cmd.ptr = (unsigned long)buf;
	cmd.npages = pages;
	if (ioctl(fd, HMM_DMIRROR_MIGRATE_TO_DEV, &cmd) || (long)cmd.cpages != pages) {
		restore_knobs();
		ksft_exit_fail_msg("HMM_DMIRROR_MIGRATE_TO_DEV: %s, %llu of %ld pages\n",
				   strerror(errno), (unsigned long long)cmd.cpages, pages);
	}
	migrated = my_ksm_zero_pages();
	munmap(map, SIZE);
	unmapped = my_ksm_zero_pages();
	restore_knobs();

	ksft_print_msg("ksm_zero_pages: %ld after merging, %ld after migrating %llu pages\n",
		       merged, migrated, (unsigned long long)cmd.cpages);
	ksft_print_msg("to device-private memory, %ld after munmap()\n", unmapped);
	ksft_test_result(!migrated && !unmapped,
			 "KSM zero pages replaced by migrate_vma_pages() are uncharged\n");
	ksft_finished();
}
