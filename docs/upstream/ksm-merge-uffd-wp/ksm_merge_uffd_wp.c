// SPDX-License-Identifier: GPL-2.0
/*
 * ksm_merge_uffd_wp: does ksmd keep the userfaultfd write-protect bit of a
 * page it merges?
 *
 * 64 identical anonymous pages are registered with userfaultfd in WP mode
 * and write-protected, then ksmd merges them (MADV_MERGEABLE).  Every PTE
 * must keep the uffd-wp bit (pagemap bit 57), and a write to every page must
 * raise a WP fault.  replace_page() builds the new PTE from scratch and
 * carries over soft-dirty but not uffd-wp, so on 6.1-6.18 every page ksmd
 * replaced (all but the one that became the KSM page in place) loses the
 * bit, and a write to it goes through without a fault: the monitor never
 * learns of it.
 *
 * "pin" mode is the sequence stress-ksm-unmerge met: the pages are merged
 * first and protected, a read-only pin (process_vm_readv) unshares half of
 * them into private copies (FAULT_FLAG_UNSHARE keeps the bit), and ksmd
 * merges those copies again.
 *
 * Root; changes ksmd's run, pages_to_scan and sleep_millisecs for its run
 * and restores them.  Build: gcc -O2 -static -o ksm_merge_uffd_wp
 * ksm_merge_uffd_wp.c -lpthread
 *
 * Exit: 0 the bit was kept (fixed kernel), 1 it was lost, 4 skipped (no
 * KSM, userfaultfd WP or pagemap; ksmd did not merge in 30 s).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define NPAGES		64
#define PM_PRESENT	(1ULL << 63)
#define PM_UFFD_WP	(1ULL << 57)
#define PM_PFN		((1ULL << 55) - 1)
#define KSFT_SKIP	4
#define KSM		"/sys/kernel/mm/ksm/"

static const char *knobs[] = { "run", "pages_to_scan", "sleep_millisecs" };
static char saved[3][32];
static long ps;
static char *region;
static int pm_fd, uffd;

static int knob(const char *name, char *val, size_t len, int wr)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), KSM "%s", name);
	fd = open(path, wr ? O_WRONLY : O_RDONLY);
	if (fd < 0)
		return -1;
	n = wr ? write(fd, val, strlen(val)) : read(fd, val, len - 1);
	if (!wr && n >= 0)
		val[n] = '\0';
	close(fd);
	return n < 0 ? -1 : 0;
}

static void restore(void)
{
	int i;

	for (i = 2; i >= 0; i--)
		knob(knobs[i], saved[i], sizeof(saved[i]), 1);
}

static uint64_t pagemap(int i)
{
	uint64_t e = 0;

	if (pread(pm_fd, &e, 8, ((uintptr_t)region / ps + i) * 8) != 8)
		return 0;
	return e;
}

/*
 * page i: 1 present, 2 merged (its pfn mapped at another page of the region:
 * the pages are identical, so only KSM shares a frame; KPF_KSM is not used,
 * 6.10-6.12 set it on any anonymous page), 4 uffd-wp
 */
static int state(int i)
{
	const uint64_t e = pagemap(i);
	int j, shared = 0;

	if (!(e & PM_PRESENT) || !(e & PM_PFN))
		return 0;
	for (j = 0; j < NPAGES && !shared; j++)
		shared = j != i && (pagemap(j) & PM_PRESENT) && !((pagemap(j) ^ e) & PM_PFN);
	return 1 | (shared ? 2 : 0) | ((e & PM_UFFD_WP) ? 4 : 0);
}

static int count(int from, int to, int want)
{
	int i, n = 0;

	for (i = from; i < to; i++)
		n += (state(i) & want) == want;
	return n;
}

/* wait up to 30 s until pages from..to-1 are KSM pages; how many are */
static int wait_merged(int from, int to)
{
	int t, n = 0;

	for (t = 0; t < 300 && (n = count(from, to, 2)) < to - from; t++)
		usleep(100000);
	return n;
}

static void census(const char *when, int from, int to)
{
	printf("# %-44s pages %2d-%2d: KSM %2d, uffd-wp %2d, KSM without uffd-wp %2d\n", when,
		from, to - 1, count(from, to, 2), count(from, to, 4),
		count(from, to, 2) - count(from, to, 6));
}

static void *writer(void *arg)
{
	region[(intptr_t)arg * ps] = 1;
	return NULL;
}

/* write page i from a thread: 1 if the write raised a WP fault (then resolved) */
static int write_faults(int i)
{
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	struct uffd_msg msg;
	pthread_t t;
	int faulted = 0;

	if (pthread_create(&t, NULL, writer, (void *)(intptr_t)i))
		return -1;
	if (poll(&pfd, 1, 2000) > 0 && read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
	    msg.event == UFFD_EVENT_PAGEFAULT && (msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP)) {
		struct uffdio_writeprotect wp = { { (uintptr_t)region + i * ps, ps }, 0 };

		faulted = 1;
		ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);	/* unprotect and wake */
	}
	pthread_join(t, NULL);
	return faulted;
}

static int setup(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP };
	struct uffdio_register reg;
	int i;

	ps = sysconf(_SC_PAGESIZE);
	for (i = 0; i < 3; i++)
		if (knob(knobs[i], saved[i], sizeof(saved[i]), 0) < 0)
			return -1;
	pm_fd = open("/proc/self/pagemap", O_RDONLY);
	region = mmap(NULL, NPAGES * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		-1, 0);
	if (pm_fd < 0 || region == MAP_FAILED)
		return -1;
	memset(region, 0x5a, NPAGES * ps);	/* identical pages, not zero pages */
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) < 0)
		return -1;
	reg.range.start = (uintptr_t)region;
	reg.range.len = NPAGES * ps;
	reg.mode = UFFDIO_REGISTER_MODE_WP;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0)
		return -1;
	atexit(restore);
	return knob("pages_to_scan", "1000", 0, 1) | knob("sleep_millisecs", "10", 0, 1) |
		knob("run", "1", 0, 1);
}

static int protect(void)
{
	struct uffdio_writeprotect wp = {
		{ (uintptr_t)region, NPAGES * ps }, UFFDIO_WRITEPROTECT_MODE_WP
	};

	return ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
}

int main(int argc, char **argv)
{
	const int pin = argc > 1 && !strcmp(argv[1], "pin");
	const int from = pin ? NPAGES / 2 : 0;	/* the pages ksmd merged while protected */
	int i, lost, unfaulted = 0;

	if (setup() < 0) {
		printf("ok 1 # SKIP no KSM, userfaultfd WP or pagemap: %s\n", strerror(errno));
		return KSFT_SKIP;
	}
	if (pin && (madvise(region, NPAGES * ps, MADV_MERGEABLE) < 0 ||
		    wait_merged(0, NPAGES) < NPAGES)) {
		printf("ok 1 # SKIP ksmd did not merge the pages\n");
		return KSFT_SKIP;
	}
	if (protect() < 0) {
		printf("ok 1 # SKIP UFFDIO_WRITEPROTECT: %s\n", strerror(errno));
		return KSFT_SKIP;
	}
	census("write-protected", 0, NPAGES);
	if (pin) {
		struct iovec local = { malloc(NPAGES / 2 * ps), NPAGES / 2 * ps };
		struct iovec remote = { region + from * ps, NPAGES / 2 * ps };

		/*
		 * a read-only pin unshares the KSM pages (FAULT_FLAG_UNSHARE keeps the
		 * bit), seen with ksmd stopped; then ksmd merges the copies again
		 */
		knob("run", "0", 0, 1);
		if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)local.iov_len)
			perror("process_vm_readv");
		census("after a read-only pin of the upper half", from, NPAGES);
		knob("run", "1", 0, 1);
	} else if (madvise(region, NPAGES * ps, MADV_MERGEABLE) < 0) {
		printf("ok 1 # SKIP MADV_MERGEABLE: %s\n", strerror(errno));
		return KSFT_SKIP;
	}
	if (wait_merged(from, NPAGES) < NPAGES - from) {
		printf("ok 1 # SKIP ksmd did not merge the pages\n");
		return KSFT_SKIP;
	}
	census("after ksmd merged them", from, NPAGES);
	lost = count(from, NPAGES, 2) - count(from, NPAGES, 6);
	for (i = from; i < NPAGES; i++)
		unfaulted += !write_faults(i);
	printf("# writes to the %d protected pages: %d raised no WP fault\n", NPAGES - from,
		unfaulted);
	printf("%s 1 ksmd's merge keeps the uffd-wp bit (%d of %d KSM pages lost it)\n",
		lost || unfaulted ? "not ok" : "ok", lost, NPAGES - from);
	return lost || unfaulted;
}
