// SPDX-License-Identifier: GPL-2.0
/*
 * fork-shared-merge.c: shows, on the running kernel, why a range can hold
 * a KSM page after its own MADV_UNMERGEABLE returned (records/investigations/
 * still-ksm-after-unmerge.md).  Not a kernel bug: KSM merges a page that
 * another mm maps too (try_to_merge_one_page(): "If it's mapped elsewhere,
 * all of its ptes are necessarily already write-protected"), and when
 * ksmd builds a new KSM page from a page a fork child still shares with
 * its parent, the parent's pte maps that KSM page as well.
 *
 * 1. map N identical pages (content no other page has), MADV_MERGEABLE,
 *    before ksmd merged any of them: fork (the child shares every page
 *    copy-on-write, in a VMA that is still VM_MERGEABLE);
 * 2. the parent's MADV_UNMERGEABLE: nothing is merged yet, so nothing is
 *    broken; VM_MERGEABLE is cleared;
 * 3. ksmd (run=1) merges the child's pages: the first one becomes a KSM
 *    page in place, and the parent maps it;
 * 4. a second MADV_UNMERGEABLE in the parent is ignored (ksm_madvise():
 *    "if (!(*vm_flags & VM_MERGEABLE)) return 0;"), the KSM page stays;
 * 5. the child exits: the parent alone maps the KSM page (pagemap bit 56
 *    "exclusively mapped" set, kpageflags KPF_KSM set).
 *
 * Two signals: kpageflags KPF_KSM (where it is honest, checked on a fresh
 * page first) and, once the child is gone, a write to every page: only a
 * KSM page is copied to a new frame (and counted in /proc/vmstat cow_ksm).
 *
 * TAP output; exit 0 when the behaviour was seen, 1 when not, 4 skipped.
 * Needs root (pagemap pfns, kpageflags, the ksm knobs); restores run,
 * pages_to_scan and sleep_millisecs.  Run it under flock /tmp/ksm-dev.lock.
 * Build: cc -O2 -Wall -Wextra -o fork-shared-merge fork-shared-merge.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NPAGES		64
#define PM_PRESENT	(1ULL << 63)
#define PM_EXCLUSIVE	(1ULL << 56)
#define PM_PFN		((1ULL << 55) - 1)
#define KPF_KSM		(1ULL << 21)

static const char *knobs[] = { "run", "pages_to_scan", "sleep_millisecs" };
static char saved[3][32];
static long ps;
static int pm_fd = -1, kpf_fd = -1;

/* read (old != NULL) and/or write (val != NULL) /sys/kernel/mm/ksm/<name> */
static int knob(const char *name, const char *val, char *old, size_t len)
{
	char path[128];
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/mm/ksm/%s", name);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -1;
	if (old) {
		r = read(fd, old, len - 1);
		old[r > 0 ? r : 0] = '\0';
		old[strcspn(old, "\n")] = '\0';
	}
	if (val && pwrite(fd, val, strlen(val), 0) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* put back every knob saved */
static void knobs_restore(void)
{
	size_t i;

	/* run last: stop ksmd only after its pace is back */
	for (i = 1; i < 3; i++)
		if (saved[i][0])
			(void)knob(knobs[i], saved[i], NULL, 0);
	if (saved[0][0])
		(void)knob(knobs[0], saved[0], NULL, 0);
}

/* pagemap entry and kpageflags of the page at addr */
static void page_state(const uint8_t *addr, uint64_t *e, uint64_t *f)
{
	*e = 0;
	*f = 0;
	if (pread(pm_fd, e, 8, (off_t)((uintptr_t)addr / ps * 8)) != 8 || !(*e & PM_PRESENT))
		return;
	if (pread(kpf_fd, f, 8, (off_t)((*e & PM_PFN) * 8)) != 8)
		*f = 0;
}

/* how many of the n pages at p are KSM pages; the first one's entry/flags */
static int ksm_pages(const uint8_t *p, uint64_t *e0, uint64_t *f0)
{
	int k, n = 0;

	for (k = 0; k < NPAGES; k++) {
		uint64_t e, f;

		page_state(p + k * ps, &e, &f);
		if (!(f & KPF_KSM))
			continue;
		if (!n && e0) {
			*e0 = e;
			*f0 = f;
		}
		n++;
	}
	return n;
}

/* a counter of /proc/vmstat, -1 if absent */
static long long vmstat(const char *name)
{
	char line[128];
	long long v = -1, x;
	size_t n = strlen(name);
	FILE *fp = fopen("/proc/vmstat", "r");

	while (fp && fgets(line, sizeof(line), fp))
		if (!strncmp(line, name, n) && line[n] == ' ' && sscanf(line + n, "%lld", &x) == 1)
			v = x;
	if (fp)
		fclose(fp);
	return v;
}

/* /proc/<pid>/ksm_merging_pages, -1 if absent */
static long long merging_pages(const pid_t pid)
{
	char path[64];
	long long v = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/ksm_merging_pages", (int)pid);
	fp = fopen(path, "r");
	if (fp) {
		if (fscanf(fp, "%lld", &v) != 1)
			v = -1;
		fclose(fp);
	}
	return v;
}

/* KPF_KSM honest: a fresh private page must not carry it (6.10-6.12 set it on every anon page) */
static int kpf_ksm_trusted(void)
{
	uint64_t e, f;
	uint8_t *q = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ok;

	if (q == MAP_FAILED)
		return 0;
	q[0] = 1;
	page_state(q, &e, &f);
	ok = (e & PM_PRESENT) && (e & PM_PFN) && !(f & KPF_KSM);
	munmap(q, ps);
	return ok;
}

/* write each page in place: pages whose pfn moved (a KSM page is always copied) */
static int write_moves(uint8_t *p)
{
	int k, moved = 0;

	for (k = 0; k < NPAGES; k++) {
		uint64_t e0, e1, f;
		volatile uint8_t *b = p + k * ps;

		page_state(p + k * ps, &e0, &f);
		*b = *b;
		page_state(p + k * ps, &e1, &f);
		moved += (e0 & PM_PFN) != (e1 & PM_PFN);
	}
	return moved;
}

/* VmFlags of the VMA holding addr */
static void vmflags(const void *addr, char *out, size_t len)
{
	const unsigned long a = (unsigned long)addr;
	char line[256];
	unsigned long lo, hi;
	int in = 0;
	FILE *fp = fopen("/proc/self/smaps", "r");

	snprintf(out, len, "?");
	while (fp && fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, len, "%.200s", line + 9);
			break;
		}
	}
	if (fp)
		fclose(fp);
}

int main(void)
{
	uint64_t e = 0, f = 0, seed;
	char vf[256];
	uint8_t *p;
	int k, i, n_before, n_merged = 0, n_after, n_alone, status, kpf_ok, moved, seen;
	long long cow0, cow1;
	size_t w;
	pid_t pid;

	printf("TAP version 13\n1..1\n");
	ps = sysconf(_SC_PAGESIZE);
	pm_fd = open("/proc/self/pagemap", O_RDONLY);
	kpf_fd = open("/proc/kpageflags", O_RDONLY);
	for (i = 0; i < 3; i++)
		if (knob(knobs[i], NULL, saved[i], sizeof(saved[i])) < 0)
			saved[i][0] = '\0';
	if (pm_fd < 0 || kpf_fd < 0 || !saved[0][0] || !saved[1][0] || !saved[2][0]) {
		printf("ok 1 # SKIP needs root, KSM, /proc/kpageflags\n");
		return 4;
	}
	kpf_ok = kpf_ksm_trusted();
	p = mmap(NULL, NPAGES * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		printf("ok 1 # SKIP mmap failed\n");
		return 4;
	}
	seed = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)time(NULL);
	for (w = 0; w < (size_t)ps / 8; w++)	/* content no other page has */
		((uint64_t *)p)[w] = seed ^ (w * 0xff51afd7ed558ccdULL);
	for (k = 1; k < NPAGES; k++)		/* NPAGES identical pages */
		memcpy(p + k * ps, p, ps);
	if (madvise(p, NPAGES * ps, MADV_MERGEABLE) < 0) {
		printf("ok 1 # SKIP MADV_MERGEABLE failed\n");
		return 4;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("ok 1 # SKIP fork failed\n");
		return 4;
	}
	if (pid == 0) {		/* shares every page, its VMA still VM_MERGEABLE */
		pause();
		_exit(0);
	}
	(void)madvise(p, NPAGES * ps, MADV_UNMERGEABLE);
	n_before = kpf_ok ? ksm_pages(p, NULL, NULL) : -1;
	vmflags(p, vf, sizeof(vf));
	printf("# parent after MADV_UNMERGEABLE: %d KSM pages, VmFlags: %s\n", n_before, vf);
	if (knob("pages_to_scan", "1000", NULL, 0) < 0 || knob("sleep_millisecs", "0", NULL, 0) < 0 ||
	    knob("run", "1", NULL, 0) < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		knobs_restore();
		printf("ok 1 # SKIP cannot set the ksm knobs\n");
		return 4;
	}
	for (i = 0; i < 1000; i++) {	/* up to 10 s for ksmd to merge the child's copies */
		usleep(10000);
		n_merged = kpf_ok ? ksm_pages(p, NULL, NULL) : 0;
		if ((kpf_ok && n_merged) || merging_pages(pid) >= NPAGES)
			break;
	}
	printf("# child's ksm_merging_pages %lld after %.2f s\n", merging_pages(pid), (i + 1) * 0.01);
	(void)madvise(p, NPAGES * ps, MADV_UNMERGEABLE);
	n_after = kpf_ok ? ksm_pages(p, NULL, NULL) : -1;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	knobs_restore();
	n_alone = kpf_ok ? ksm_pages(p, &e, &f) : -1;
	vmflags(p, vf, sizeof(vf));
	cow0 = vmstat("cow_ksm");
	moved = write_moves(p);
	cow1 = vmstat("cow_ksm");
	printf("# after a second MADV_UNMERGEABLE: %d KSM pages by KPF_KSM%s (VmFlags: %s)\n", n_after,
		kpf_ok ? "" : " (KPF_KSM lies on this kernel: not used)", vf);
	if (kpf_ok)
		printf("# child gone: %d KSM pages; first: pagemap %#llx (exclusive %s) kpageflags %#llx\n",
			n_alone, (unsigned long long)e, (e & PM_EXCLUSIVE) ? "yes" : "no",
			(unsigned long long)f);
	printf("# child gone: a write moved %d of the %d pages to a new frame; cow_ksm %+lld%s\n",
		moved, NPAGES, (cow0 >= 0 && cow1 >= 0) ? cow1 - cow0 : 0,
		(cow0 >= 0 && cow1 >= 0) ? "" : " (no cow_ksm counter)");
	seen = moved > 0 && (cow0 < 0 || cow1 - cow0 >= moved) && (!kpf_ok || n_after > 0);
	printf("%s 1 KSM page in the parent's range after its MADV_UNMERGEABLE, merged through a fork child\n",
		seen ? "ok" : "not ok");
	return seen ? 0 : 1;
}
