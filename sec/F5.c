
/* ---- mremap: moves of merged ranges while merged and unmerging ---- */

#if !defined(MREMAP_MAYMOVE)
#define MREMAP_MAYMOVE		(1)
#endif
#if !defined(MREMAP_FIXED)
#define MREMAP_FIXED		(2)
#endif
#if !defined(MREMAP_DONTUNMAP)
#define MREMAP_DONTUNMAP	(4)
#endif

typedef struct {
	uint8_t *range, *scratch;	/* its mergeable range, the moves' reserved target */
	size_t npages, size;
	bool broken;			/* a move back failed: no more moves */
} stress_ksm_unmerge_mremap_t;

/*
 *  stress_ksm_unmerge_mremap_move()
 *	move len bytes from src to dst, src kept mapped (empty); 0 or -1
 */
static int stress_ksm_unmerge_mremap_move(uint8_t *src, uint8_t *dst, const size_t len)
{
	void *p = mremap(src, len, len, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, dst);

	if (p != MAP_FAILED && p != dst)
		errno = EFAULT;
	return (p == dst) ? 0 : -1;
}

/*
 *  stress_ksm_unmerge_mremap_op()
 *	move 1-16 random pages of the range out and back (moving a mergeable
 *	range unmerges it first), their data checked each way; before 6.17 a
 *	move over two VMAs (moves back leave pieces) fails with EFAULT: then
 *	it is cut at the VMA's end (counted)
 */
static bool stress_ksm_unmerge_mremap_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mremap_t *m = (stress_ksm_unmerge_mremap_t *)run->priv;
	size_t n = 1 + stress_mwc32modn(16), first, off;
	unsigned long lo = 0, hi = 0;
	char vma[320];
	uint64_t ksm;

	if (m->broken || !stress_ksm_unmerge_active(ctx))
		return false;
	first = stress_mwc32modn((uint32_t)(m->npages - n + 1));
	off = first * ctx->page_size;
	stress_ksm_unmerge_met(run);
	ksm = stress_ksm_unmerge_ksm_count(ctx, m->range + off, n);
	if (stress_ksm_unmerge_mremap_move(m->range + off, m->scratch + off, n * ctx->page_size) < 0) {
		if (errno == EFAULT && stress_ksm_unmerge_vmflags(m->range + off, vma, sizeof(vma), false) == 0 &&
		    sscanf(vma, "%lx-%lx", &lo, &hi) == 2 && hi < (uintptr_t)(m->range + off + n * ctx->page_size)) {
			n = (hi - (uintptr_t)(m->range + off)) / ctx->page_size;
			run->rs->detail[0]++;
		}
		if (!hi || stress_ksm_unmerge_mremap_move(m->range + off, m->scratch + off, n * ctx->page_size) < 0) {
			stress_ksm_unmerge_racer_fail(run, "moving %zu pages (%" PRIu64 " KSM) out failed, errno=%d (%s)",
				n, ksm, errno, strerror(errno));
			return true;
		}
	}
	if (stress_ksm_unmerge_same_check(ctx, m->scratch + off, n) >= 0)
		stress_ksm_unmerge_racer_fail(run, "pages %zu..%zu lost their data when moved (%" PRIu64 " KSM)",
			first, first + n - 1, ksm);
	else
		run->rs->evidence += ksm;
	if (stress_ksm_unmerge_mremap_move(m->scratch + off, m->range + off, n * ctx->page_size) < 0) {
		m->broken = true;
		stress_ksm_unmerge_racer_fail(run, "moving %zu pages back failed, errno=%d (%s)", n, errno, strerror(errno));
	} else if (stress_ksm_unmerge_same_check(ctx, m->range + off, n) >= 0) {
		stress_ksm_unmerge_racer_fail(run, "pages %zu..%zu lost their data when moved back", first, first + n - 1);
	}
	run->rs->ops++;
	(void)shim_nanosleep_uint64(stress_mwc32modn(50000));
	return true;
}

/*
 *  stress_ksm_unmerge_mremap_phase()
 *	merging: the range mergeable; unmerging: unmerged while moves run;
 *	idle, every racer parked: a last unmerge leaves no KSM page (a part
 *	moved back later brought VM_MERGEABLE with it) and the data intact
 */
static void stress_ksm_unmerge_mremap_phase(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_mremap_t *m = (stress_ksm_unmerge_mremap_t *)run->priv;
	const bool final = (phase == KSM_PHASE_IDLE && ctx->quiesce == ctx->cycle);
	uint64_t ksm;

	if (m->broken || (phase != KSM_PHASE_MERGING && phase != KSM_PHASE_UNMERGING && !final))
		return;
	if (madvise(m->range, m->size, phase == KSM_PHASE_MERGING ? MADV_MERGEABLE : MADV_UNMERGEABLE) < 0) {
		if (errno != EINTR || stress_continue(ctx->args))
			stress_ksm_unmerge_racer_fail(run, "madvise of the range failed, errno=%d (%s)", errno, strerror(errno));
		return;
	}
	ksm = final ? stress_ksm_unmerge_ksm_count(ctx, m->range, m->npages) : 0;
	if (ksm)
		stress_ksm_unmerge_racer_fail(run, "%" PRIu64 " pages of the range are still KSM pages after "
			"MADV_UNMERGEABLE with no move running", ksm);
	if (final && stress_ksm_unmerge_same_check(ctx, m->range, m->npages) >= 0)
		stress_ksm_unmerge_racer_fail(run, "the range lost data after the moves and the unmerge");
}

/*
 *  stress_ksm_unmerge_mremap_stop()
 *	unmap both ranges
 */
static void stress_ksm_unmerge_mremap_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mremap_t *m = (stress_ksm_unmerge_mremap_t *)run->priv;

	(void)ctx;
	if (m->range)
		(void)munmap(m->range, m->size);
	if (m->scratch && m->scratch != MAP_FAILED)
		(void)munmap(m->scratch, m->size);
}

/*
 *  stress_ksm_unmerge_mremap_start()
 *	its range (a quarter of the region, 16-1024 same pages: it merges
 *	with the region) and the reserved target; one test move proves
 *	MREMAP_DONTUNMAP (5.7)
 */
static int stress_ksm_unmerge_mremap_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_mremap_t *m = (stress_ksm_unmerge_mremap_t *)run->priv;

	m->npages = STRESS_MINIMUM(STRESS_MAXIMUM(ctx->npages / 4, (size_t)16), (size_t)1024);
	m->size = m->npages * ctx->page_size;
	m->range = stress_ksm_unmerge_map(m->size, 0, "ksm-unmerge-mremap");
	m->scratch = mmap(NULL, m->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!m->range || m->scratch == MAP_FAILED)
		return stress_ksm_unmerge_racer_reason(run, "mmap of 2 x %zu bytes failed, errno=%d (%s)", m->size,
			errno, strerror(errno));
	stress_ksm_unmerge_same_fill(ctx, m->range, m->npages);
	if (stress_ksm_unmerge_mremap_move(m->range, m->scratch, ctx->page_size) < 0 ||
	    stress_ksm_unmerge_mremap_move(m->scratch, m->range, ctx->page_size) < 0) {
		(void)stress_ksm_unmerge_racer_reason(run, "mremap(MREMAP_DONTUNMAP) failed, errno=%d (%s) (needs 5.7)",
			errno, strerror(errno));
		return -2;
	}
	return 0;
}

/* ---- uffd-minor: MADV_UNMERGEABLE of a uffd-minor VMA (flags above bit 31) ---- */
#if defined(KSM_UFFD_BUILT) && defined(UFFDIO_REGISTER_MODE_MINOR) &&	\
    defined(UFFD_FEATURE_MINOR_SHMEM) && defined(HAVE_MEMFD_CREATE)

#define KSM_MINOR_PAGES		(64)

typedef struct {
	int uffd, memfd;
	uint8_t *range;			/* MAP_PRIVATE of a memfd: shmem allows minor mode, KSM merges its copies */
	size_t size;
	bool registered;
} stress_ksm_unmerge_minor_t;

/*
 *  stress_ksm_unmerge_minor_unregister()
 *	drop the minor registration (where the broken kernel warned)
 */
static void stress_ksm_unmerge_minor_unregister(stress_ksm_unmerge_run_t *run, stress_ksm_unmerge_minor_t *m)
{
	struct uffdio_range r = { (uintptr_t)m->range, m->size };

	if (m->registered && ioctl(m->uffd, UFFDIO_UNREGISTER, &r) < 0)
		stress_ksm_unmerge_racer_fail(run, "UFFDIO_UNREGISTER failed, errno=%d (%s)", errno, strerror(errno));
	m->registered = false;
}

/*
 *  stress_ksm_unmerge_minor_phase()
 *	merging: the range mergeable, then registered for minor faults;
 *	unmerging: MADV_UNMERGEABLE of it keeps its VmFlags but "mg" ("ui",
 *	VM_UFFD_MINOR, bit 41, was cleared with a 32-bit mask before
 *	f04aad36a07c), leaves no KSM page and keeps the data; idle: unregistered
 */
static void stress_ksm_unmerge_minor_phase(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_minor_t *m = (stress_ksm_unmerge_minor_t *)run->priv;
	struct uffdio_register reg = { .range = { (uintptr_t)m->range, m->size }, .mode = UFFDIO_REGISTER_MODE_MINOR };
	char before[256] = "", after[256] = "";
	uint64_t ksm0, ksm1;

	if (phase == KSM_PHASE_MERGING) {
		if (madvise(m->range, m->size, MADV_MERGEABLE) < 0 || ioctl(m->uffd, UFFDIO_REGISTER, &reg) < 0)
			stress_ksm_unmerge_racer_fail(run, "MADV_MERGEABLE or UFFDIO_REGISTER (minor) failed, errno=%d (%s)",
				errno, strerror(errno));
		else
			m->registered = true;
		return;
	}
	if (phase == KSM_PHASE_UNMERGING && m->registered) {
		ksm0 = stress_ksm_unmerge_ksm_count(ctx, m->range, KSM_MINOR_PAGES);
		if (stress_ksm_unmerge_vmflags(m->range, before, sizeof(before), true) < 0 ||
		    !stress_ksm_unmerge_has_flag(before, "ui"))
			stress_ksm_unmerge_racer_fail(run, "the registered range has no \"ui\" in its VmFlags ('%s')", before);
		else if (madvise(m->range, m->size, MADV_UNMERGEABLE) < 0)
			stress_ksm_unmerge_racer_fail(run, "MADV_UNMERGEABLE of the minor-registered range failed, "
				"errno=%d (%s)", errno, strerror(errno));
		else if (stress_ksm_unmerge_vmflags(m->range, after, sizeof(after), true) == 0 && strcmp(before, after))
			stress_ksm_unmerge_racer_fail(run, "MADV_UNMERGEABLE changed the VMA's flags beyond \"mg\": before "
				"'%s', after '%s'%s", before, after, stress_ksm_unmerge_has_flag(after, "ui") ? "" :
				" (VM_UFFD_MINOR, bit 41, lost: VM_MERGEABLE cleared with a 32-bit mask, fixed by f04aad36a07c)");
		else if ((ksm1 = stress_ksm_unmerge_ksm_count(ctx, m->range, KSM_MINOR_PAGES)) > 0)
			stress_ksm_unmerge_racer_fail(run, "%" PRIu64 " pages are still KSM pages after MADV_UNMERGEABLE", ksm1);
		else if (stress_ksm_unmerge_same_check(ctx, m->range, KSM_MINOR_PAGES) >= 0)
			stress_ksm_unmerge_racer_fail(run, "the range lost data in the unmerge");
		else
			run->rs->evidence += ksm0;
		run->rs->ops++;
	}
	if (phase == KSM_PHASE_UNMERGING || phase == KSM_PHASE_IDLE)
		stress_ksm_unmerge_minor_unregister(run, m);
}

/*
 *  stress_ksm_unmerge_minor_stop()
 *	unregister, unmap, close
 */
static void stress_ksm_unmerge_minor_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_minor_t *m = (stress_ksm_unmerge_minor_t *)run->priv;

	(void)ctx;
	stress_ksm_unmerge_minor_unregister(run, m);
	if (m->range && m->range != MAP_FAILED)
		(void)munmap(m->range, m->size);
	if (m->memfd >= 0)
		(void)close(m->memfd);
	if (m->uffd >= 0)
		(void)close(m->uffd);
}

/*
 *  stress_ksm_unmerge_minor_start()
 *	a userfaultfd with minor faults on shmem (5.14), a memfd and its
 *	private mapping written with the same page
 */
static int stress_ksm_unmerge_minor_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_minor_t *m = (stress_ksm_unmerge_minor_t *)run->priv;
	bool tid;

	m->size = KSM_MINOR_PAGES * ctx->page_size;
	m->memfd = shim_memfd_create("ksm-unmerge-minor", MFD_CLOEXEC);
	m->uffd = stress_ksm_unmerge_uffd_open(UFFD_FEATURE_MINOR_SHMEM, run->rs->reason, sizeof(run->rs->reason), &tid);
	if (m->uffd < 0)
		return -2;
	if (m->memfd < 0 || ftruncate(m->memfd, (off_t)m->size) < 0 ||
	    (m->range = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, m->memfd, 0)) == MAP_FAILED)
		return stress_ksm_unmerge_racer_reason(run, "memfd of %zu bytes or its private mmap failed, errno=%d (%s)",
			m->size, errno, strerror(errno));
	stress_ksm_unmerge_same_fill(ctx, m->range, KSM_MINOR_PAGES);
	return 0;
}
#define KSM_UFFD_MINOR_NOT_BUILT	NULL
#else
#define KSM_UFFD_MINOR_NOT_BUILT	"userfaultfd minor mode or memfd_create missing (HAVE_LINUX_USERFAULTFD_H)"
#define stress_ksm_unmerge_minor_start		NULL
#define stress_ksm_unmerge_minor_stop		NULL
#define stress_ksm_unmerge_minor_phase		NULL
#endif

/* ---- prctl-exec: PR_SET_MEMORY_MERGE across fork and exec ---- */
#if defined(HAVE_PTRACE)

/*
 *  stress_ksm_unmerge_exec_vmas()
 *	of the stopped, just exec'd process pid: the private writable VMAs
 *	exec mapped (not its stack, never merge-any's: not an mmap) and how
 *	many carry "mg"; the first without in first; -1 if unreadable
 */
static int stress_ksm_unmerge_exec_vmas(const pid_t pid, size_t *vmas, size_t *mg, char *first, const size_t len)
{
	char path[64], line[512], range[64] = "", word[64], perms[8];
	bool wanted = false;
	FILE *fp;

	*vmas = *mg = 0;
	first[0] = '\0';
	(void)snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	fp = fopen(path, "re");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%63s %7s", word, perms) == 2 && strchr(word, '-') && strlen(perms) == 4) {
			wanted = perms[1] == 'w' && perms[3] == 'p' && !strstr(line, "[stack]");
			(void)shim_strscpy(range, word, sizeof(range));
		} else if (wanted && !strncmp(line, "VmFlags:", 8)) {
			(*vmas)++;
			*mg += stress_ksm_unmerge_has_flag(line + 8, "mg");
			if (!stress_ksm_unmerge_has_flag(line + 8, "mg") && !first[0])
				(void)snprintf(first, len, "%s", range);
		}
	}
	(void)fclose(fp);
	return 0;
}

/*
 *  stress_ksm_unmerge_exec_op()
 *	a child sets merge-any and execs the running binary under ptrace; at
 *	its exec stop the new mm must still be merge-any (ksm_stat, where it
 *	says) and the private writable VMAs exec mapped mergeable ("mg");
 *	ksmd scanning the new mm before they existed cleared merge-any until
 *	xu xin's "mm/ksm: fix exec/fork inheritance support for prctl"
 */
static bool stress_ksm_unmerge_exec_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	static char *const argv[] = { "stress-ng", "--exec-exit", NULL };
	static char *const envp[] = { NULL };
	const pid_t parent = getpid();
	char path[64], exe[PATH_MAX], first[64], buf[1024];
	size_t vmas, mg;
	int status, any = -1;
	pid_t pid;

	if (!stress_ksm_unmerge_active(ctx) || !stress_proc_self_exe_get(exe, sizeof(exe)))
		return false;
	pid = fork();
	if (pid == 0) {
		if (stress_ksm_unmerge_child_init(ctx, parent) < 0 || ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0 ||
		    prctl(PR_SET_MEMORY_MERGE, 1UL, 0UL, 0UL, 0UL) < 0)
			_exit(4);
		(void)execve(exe, argv, envp);
		_exit(5);
	}
	if (pid < 0 || shim_waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		if (stress_continue(ctx->args))
			stress_ksm_unmerge_racer_fail(run, "fork, ptrace, prctl or exec of %s failed (wait status %#x: "
				"exit 4 ptrace/prctl, 5 execve), errno=%d (%s)", exe, status, errno, strerror(errno));
		if (pid > 0)
			(void)stress_ksm_unmerge_reap(pid, 0.01, &status);
		return true;
	}
	(void)snprintf(path, sizeof(path), "/proc/%d/ksm_stat", (int)pid);
	if (stress_fs_file_read(path, buf, sizeof(buf)) > 0 && strstr(buf, "ksm_merge_any"))
		any = strstr(buf, "ksm_merge_any: yes") ? 1 : 0;
	if (stress_ksm_unmerge_exec_vmas(pid, &vmas, &mg, first, sizeof(first)) == 0) {
		run->rs->ops++;
		if (any == 0 || mg < vmas)
			stress_ksm_unmerge_racer_fail(run, "after exec with merge-any set, ksm_stat says ksm_merge_any %s and "
				"%zu of the %zu private writable VMAs exec mapped are not mergeable (first %s): merge-any "
				"lost across exec (xu xin's \"mm/ksm: fix exec/fork inheritance support for prctl\")",
				any ? "yes" : "no", vmas - mg, vmas, first);
		else
			run->rs->evidence += (vmas > 0);
	}
	(void)stress_ksm_unmerge_reap(pid, 0.01, &status);
	(void)shim_nanosleep_uint64(20000000);
	return true;
}

/*
 *  stress_ksm_unmerge_exec_supported()
 *	PR_GET_MEMORY_MERGE (6.4)
 */
static int stress_ksm_unmerge_exec_supported(char *reason, const size_t len)
{
	if (prctl(PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL) >= 0)
		return 0;
	(void)snprintf(reason, len, "PR_GET_MEMORY_MERGE failed, errno=%d (%s) (needs Linux 6.4)", errno, strerror(errno));
	return -1;
}
#define KSM_PRCTL_EXEC_NOT_BUILT	NULL
#else
#define KSM_PRCTL_EXEC_NOT_BUILT	"ptrace missing (HAVE_PTRACE)"
#define stress_ksm_unmerge_exec_supported	NULL
#define stress_ksm_unmerge_exec_op		NULL
#endif

/* ---- fork-zero: a forked child charged KSM zero pages it does not map ---- */

/* what a fork-zero child saw, shared with the worker */
typedef struct {
	volatile int64_t uncopied;	/* the parent's KSM zero pages in DONTFORK/WIPEONFORK VMAs at fork() */
	volatile int64_t charged;	/* the child's ksm_stat ksm_zero_pages, first thing */
	volatile int64_t mapped;	/* KSM zero PTEs in all its VMAs (pagemap) */
	volatile int err;
} stress_ksm_unmerge_fz_sh_t;

typedef struct {
	uint8_t *zero, *dontfork, *wipe;	/* zero-filled: unmerged during the fork, not copied, copied empty */
	size_t nzero, nother;
	stress_ksm_unmerge_fz_sh_t *sh;
	volatile uint64_t go, done;	/* cycle whose zero range unmerge starts now, last cycle forked in */
	volatile uint64_t unmerge_ns[2];	/* the zero range's unmerge: start, end */
} stress_ksm_unmerge_fz_t;

/*
 *  stress_ksm_unmerge_fz_judge()
 *	pure: a child charged charged KSM zero pages that maps mapped, its
 *	parent holding uncopied in VMAs fork() does not copy: the excess
 *	(0 if none) split into *uncopied_part and *unmerging_part
 */
static int64_t stress_ksm_unmerge_fz_judge(const int64_t charged, const int64_t mapped, const int64_t uncopied,
	int64_t *uncopied_part, int64_t *unmerging_part)
{
	const int64_t excess = (charged >= 0 && mapped >= 0 && charged > mapped) ? charged - mapped : 0;

	*uncopied_part = STRESS_MINIMUM(excess, STRESS_MAXIMUM(uncopied, (int64_t)0));
	*unmerging_part = excess - *uncopied_part;
	return excess;
}

/*
 *  stress_ksm_unmerge_fz_count()
 *	KSM zero pages in n pages at addr, read through pm_fd; -1 unreadable
 */
static int64_t stress_ksm_unmerge_fz_count(const stress_ksm_unmerge_ctx_t *ctx, const int pm_fd, uintptr_t a, size_t n)
{
	uint64_t pm[256];
	int64_t count = 0;
	size_t j, k;

	for (; n; n -= k, a += k * ctx->page_size) {
		k = STRESS_MINIMUM(n, SIZEOF_ARRAY(pm));
		if (stress_ksm_unmerge_pagemap_read(pm_fd, (void *)a, k, ctx->page_size, pm) < 0)
			return -1;
		for (j = 0; j < k; j++)
			count += stress_ksm_unmerge_page_what(ctx->iface, pm[j], (pm[j] & PM_PRESENT) && !ctx->iface->zero_pfn ?
				stress_ksm_unmerge_kpf(ctx->kpageflags_fd, pm[j] & PM_PFN_MASK) : 0, 0, 0,
				KSM_KIND_ZERO) == KSM_PAGE_KZERO;
	}
	return count;
}

/*
 *  stress_ksm_unmerge_fz_child()
 *	child: the KSM zero pages the kernel charged it (first thing), then
 *	those it maps in every VMA (merge-any makes any VMA mergeable)
 */
static void NORETURN stress_ksm_unmerge_fz_child(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_fz_sh_t *sh,
	const pid_t parent)
{
	const int fd = open("/proc/self/ksm_stat", O_RDONLY | O_CLOEXEC);
	const int pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	FILE *fp = fopen("/proc/self/maps", "re");
	char line[512];
	unsigned long lo, hi;
	int64_t n, mapped = 0;

	sh->charged = stress_ksm_unmerge_field(fd, "ksm_zero_pages");
	sh->err = (fd < 0 || pm_fd < 0 || !fp) ? errno : 0;
	if (stress_ksm_unmerge_child_init(ctx, parent) < 0)
		_exit(1);
	while (fp && fgets(line, sizeof(line), fp))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && !strstr(line, "[vsyscall]") &&
		    (n = stress_ksm_unmerge_fz_count(ctx, pm_fd, lo, (hi - lo) / ctx->page_size)) > 0)
			mapped += n;
	sh->mapped = (pm_fd >= 0 && fp) ? mapped : -1;
	_exit(0);
}

/*
 *  stress_ksm_unmerge_fz_op()
 *	once a cycle, 0-100 us into the main thread's unmerge of the zero
 *	range: fork a child and hold what it was charged against what it
 *	maps; the excess is split between the ranges not copied and the
 *	pages unmerged while fork() copied the mm
 */
static bool stress_ksm_unmerge_fz_op(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_fz_t *z = (stress_ksm_unmerge_fz_t *)run->priv;
	stress_ksm_unmerge_fz_sh_t *sh = z->sh;
	const uint64_t cycle = z->go;
	const pid_t parent = getpid();
	int64_t before, excess, uncopied, unmerging;
	uint64_t t0, t1;
	bool overlap;
	int status;
	pid_t pid;

	if (!cycle || cycle == z->done || cycle != ctx->cycle)
		return false;
	z->done = cycle;
	(void)shim_nanosleep_uint64(stress_mwc32modn(100000));
	(void)shim_memset((void *)sh, 0, sizeof(*sh));
	sh->charged = sh->mapped = -1;
	sh->uncopied = stress_ksm_unmerge_fz_count(ctx, ctx->pagemap_fd, (uintptr_t)z->dontfork, z->nother) +
		(z->wipe ? stress_ksm_unmerge_fz_count(ctx, ctx->pagemap_fd, (uintptr_t)z->wipe, z->nother) : 0);
	before = stress_ksm_unmerge_field(ctx->ksm_stat_fd, "ksm_zero_pages");
	t0 = stress_ksm_unmerge_now_ns();
	pid = fork();
	if (pid == 0)
		stress_ksm_unmerge_fz_child(ctx, sh, parent);
	t1 = stress_ksm_unmerge_now_ns();
	if (pid < 0 || stress_ksm_unmerge_reap(pid, 3.0, &status) != 0 || !WIFEXITED(status)) {
		if (stress_continue(ctx->args))
			stress_ksm_unmerge_racer_fail(run, "fork failed, or the child did not end within 3 s (wait status "
				"%#x), errno=%d (%s)", status, errno, strerror(errno));
		return true;
	}
	overlap = (t0 < z->unmerge_ns[1] || !z->unmerge_ns[1]) && t1 > z->unmerge_ns[0];
	excess = stress_ksm_unmerge_fz_judge(sh->charged, sh->mapped, sh->uncopied, &uncopied, &unmerging);
	run->rs->ops++;
	run->rs->evidence += (before > 0);
	run->rs->detail[0] += overlap;
	run->rs->detail[1] += (uncopied > 0);
	run->rs->detail[2] += (unmerging > 0);
	if (sh->charged < 0 || sh->mapped < 0)
		stress_ksm_unmerge_racer_fail(run, "the child could not read its ksm_stat or pagemap, errno=%d (%s)",
			sh->err, strerror(sh->err));
	else if (excess)
		stress_ksm_unmerge_racer_fail(run, "KSM zero pages charged at fork: a child forked with %" PRId64 " in "
			"its parent's ksm_stat was charged %" PRId64 " while it maps %" PRId64 "; %" PRId64 " of the excess "
			"sat in VMAs fork() does not copy (MADV_DONTFORK/WIPEONFORK), %" PRId64 " were unmerged while "
			"fork() ran (%s): dup_mm() copies the parent's count before dup_mmap() copies the page "
			"tables, and the global ksm_zero_pages keeps the excess after the child exits", before,
			sh->charged, sh->mapped, uncopied, unmerging, overlap ? "it overlapped our unmerge" : "no overlap");
	return true;
}

/*
 *  stress_ksm_unmerge_fz_ranges()
 *	madvise the zero ranges (the main one too if asked)
 */
static void stress_ksm_unmerge_fz_ranges(stress_ksm_unmerge_run_t *run, const int advice, const bool main_range)
{
	const stress_ksm_unmerge_fz_t *z = (const stress_ksm_unmerge_fz_t *)run->priv;
	const size_t ps = run->ctx->page_size;

	if (((main_range && madvise(z->zero, z->nzero * ps, advice) < 0) || madvise(z->dontfork, z->nother * ps, advice) < 0 ||
	     (z->wipe && madvise(z->wipe, z->nother * ps, advice) < 0)) && stress_continue(run->ctx->args))
		stress_ksm_unmerge_racer_fail(run, "madvise %d of a zero range failed, errno=%d (%s)", advice, errno,
			strerror(errno));
}

/*
 *  stress_ksm_unmerge_fz_phase()
 *	merging: the zero ranges mergeable (ksmd makes KSM zero pages of
 *	them); unmerging: the main one unmerged while the thread forks;
 *	verify: the others unmerged once the child is done
 */
static void stress_ksm_unmerge_fz_phase(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run, const int phase)
{
	stress_ksm_unmerge_fz_t *z = (stress_ksm_unmerge_fz_t *)run->priv;
	const double deadline = stress_time_now() + 3.0;

	if (phase == KSM_PHASE_MERGING) {
		stress_ksm_unmerge_fz_ranges(run, MADV_MERGEABLE, true);
	} else if (phase == KSM_PHASE_UNMERGING) {
		z->unmerge_ns[0] = stress_ksm_unmerge_now_ns();
		z->unmerge_ns[1] = 0;
		z->go = ctx->cycle;
		if (madvise(z->zero, z->nzero * ctx->page_size, MADV_UNMERGEABLE) < 0 && stress_continue(ctx->args))
			stress_ksm_unmerge_racer_fail(run, "MADV_UNMERGEABLE of the zero range failed, errno=%d (%s)",
				errno, strerror(errno));
		z->unmerge_ns[1] = stress_ksm_unmerge_now_ns();
	} else if (phase == KSM_PHASE_VERIFY) {
		while (z->done != ctx->cycle && stress_time_now() < deadline && !ctx->racers_stop)
			(void)shim_nanosleep_uint64(100000);
		stress_ksm_unmerge_fz_ranges(run, MADV_UNMERGEABLE, false);
	}
}

/*
 *  stress_ksm_unmerge_fz_stop()
 *	unmap the ranges and the shared page
 */
static void stress_ksm_unmerge_fz_stop(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_fz_t *z = (stress_ksm_unmerge_fz_t *)run->priv;

	if (z->zero)
		(void)munmap(z->zero, z->nzero * ctx->page_size);
	if (z->dontfork)
		(void)munmap(z->dontfork, z->nother * ctx->page_size);
	if (z->wipe)
		(void)munmap(z->wipe, z->nother * ctx->page_size);
	if (z->sh)
		(void)munmap((void *)z->sh, sizeof(*z->sh));
}

/*
 *  stress_ksm_unmerge_fz_start()
 *	the kernel counts KSM zero pages per process (6.10): three zero-filled
 *	ranges (written: ksmd sees zero-filled pages), an eighth of the region
 *	(64-4096 pages) and 64 pages each with MADV_DONTFORK and MADV_WIPEONFORK
 */
static int stress_ksm_unmerge_fz_start(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_run_t *run)
{
	stress_ksm_unmerge_fz_t *z = (stress_ksm_unmerge_fz_t *)run->priv;
	const size_t ps = ctx->page_size;

	if (stress_ksm_unmerge_field(ctx->ksm_stat_fd, "ksm_zero_pages") < 0) {
		(void)stress_ksm_unmerge_racer_reason(run, "no ksm_zero_pages in /proc/self/ksm_stat (per-process KSM "
			"zero pages are counted since 6.10): nothing to check");
		return -2;
	}
	z->nzero = STRESS_MINIMUM(STRESS_MAXIMUM(ctx->npages / 8, (size_t)64), (size_t)4096);
	z->nother = 64;
	z->zero = stress_ksm_unmerge_map(z->nzero * ps, 0, "ksm-unmerge-zero");
	z->dontfork = stress_ksm_unmerge_map(z->nother * ps, 0, "ksm-unmerge-zero-dontfork");
	z->sh = stress_ksm_unmerge_shared_map(sizeof(*z->sh));
#if defined(MADV_WIPEONFORK)
	z->wipe = stress_ksm_unmerge_map(z->nother * ps, 0, "ksm-unmerge-zero-wipeonfork");
	if (z->wipe && madvise(z->wipe, z->nother * ps, MADV_WIPEONFORK) < 0) {
		(void)munmap(z->wipe, z->nother * ps);
		z->wipe = NULL;
	}
#endif
	if (!z->zero || !z->dontfork || !z->sh || madvise(z->dontfork, z->nother * ps, MADV_DONTFORK) < 0)
		return stress_ksm_unmerge_racer_reason(run, "mmap or MADV_DONTFORK of the zero ranges failed, "
			"errno=%d (%s)", errno, strerror(errno));
	(void)shim_memset(z->zero, 0, z->nzero * ps);
	(void)shim_memset(z->dontfork, 0, z->nother * ps);
	if (z->wipe)
		(void)shim_memset(z->wipe, 0, z->nother * ps);
	return 0;
}
