/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * stress-ksm-unmerge-racer-uffd-minor.h: the uffd-minor racer (private
 * header of stress-ksm-unmerge.c, included once, before the racer table).
 *
 * Until f04aad36a07c ("mm/ksm: fix flag-dropping behavior in
 * ksm_madvise", Oct 2025, stable 5.4-6.12) VM_MERGEABLE was a 32-bit
 * constant, so MADV_UNMERGEABLE cleared it with a mask that also cleared
 * every vm_flags bit above 31; VM_UFFD_MINOR is one of them (bit 41), and
 * the VMA then still had its userfaultfd context without the flag, which
 * mm/userfaultfd.c met with a BUG (later a WARNING).  A VMA that is both
 * mergeable and registered for minor faults: a MAP_PRIVATE mapping of a
 * memfd (shmem, so minor mode is allowed; private, so KSM merges its
 * anonymous copies).
 *
 * Each cycle the racer makes its range (filled with the "same" page, so
 * it merges with the region) mergeable and registers it for minor faults
 * with the region's merge; in the unmerging phase it unmerges it with
 * MADV_UNMERGEABLE while the region unmerges, requires smaps VmFlags to
 * be unchanged apart from "mg" (so "ui" kept) and no KSM page left, then
 * unregisters (where the broken kernel warned; the kernel-log watcher
 * reports that).  Evidence: KSM pages of the range at the start of an
 * unmerge of the minor-registered VMA that it left private.
 */

/* its built and not-built entries share these (the name: KSM_UNMERGE_RACER_LIST) */
#define KSM_RACER_UFFD_MINOR_ID						\
	.path = "MADV_UNMERGEABLE of a uffd-minor VMA (flags above bit 31)",	\
	.evidence = "ksm-pages-unmerged"

#if defined(HAVE_LINUX_USERFAULTFD_H) &&	\
    defined(UFFDIO_REGISTER_MODE_MINOR) &&	\
    defined(UFFD_FEATURE_MINOR_SHMEM) &&	\
    defined(__NR_memfd_create)

#define KSM_MINOR_PAGES			(64)	/* pages of the range */

/* uffd-minor racer state (main thread hooks only) */
typedef struct {
	int uffd;
	int memfd;
	uint8_t *range;
	size_t size;
	bool registered;		/* minor mode registered this cycle */
	char vmflags[256];		/* VmFlags (without mg) before the unmerge */
} stress_ksm_unmerge_minor_t;

/*
 *  stress_ksm_unmerge_minor_has_ui()
 *	pure: does a VmFlags list hold "ui" (VM_UFFD_MINOR)
 */
static bool stress_ksm_unmerge_minor_has_ui(const char *flags)
{
	const char *p;

	for (p = strstr(flags, "ui"); p; p = strstr(p + 2, "ui"))
		if ((p == flags || p[-1] == ' ') && (p[2] == ' ' || p[2] == '\0' || p[2] == '\n'))
			return true;
	return false;
}

/*
 *  stress_ksm_unmerge_minor_flags_judge()
 *	pure: VmFlags (without mg) before and after MADV_UNMERGEABLE of the
 *	minor-registered VMA: 0 unchanged, 1 changed, 2 changed and "ui" lost
 */
static int stress_ksm_unmerge_minor_flags_judge(const char *before, const char *after)
{
	if (!strcmp(before, after))
		return 0;
	return (stress_ksm_unmerge_minor_has_ui(before) && !stress_ksm_unmerge_minor_has_ui(after)) ? 2 : 1;
}

/*
 *  stress_ksm_unmerge_minor_open()
 *	userfaultfd with minor faults on shmem; -1 with the reason
 */
static int stress_ksm_unmerge_minor_open(char *reason, const size_t len)
{
	struct uffdio_api api;
	int fd = shim_userfaultfd(O_CLOEXEC | O_NONBLOCK);

	if (fd < 0 && errno == EPERM)
		fd = shim_userfaultfd(O_CLOEXEC | O_NONBLOCK | 1 /* UFFD_USER_MODE_ONLY */);
	if (fd < 0) {
		(void)snprintf(reason, len, "userfaultfd denied or missing, errno=%d (%s)",
			errno, strerror(errno));
		return -1;
	}
	(void)memset(&api, 0, sizeof(api));
	api.api = UFFD_API;
	api.features = UFFD_FEATURE_MINOR_SHMEM;
	if (ioctl(fd, UFFDIO_API, &api) < 0 || !(api.features & UFFD_FEATURE_MINOR_SHMEM)) {
		(void)snprintf(reason, len, "UFFDIO_API without UFFD_FEATURE_MINOR_SHMEM, errno=%d (%s) "
			"(needs Linux 5.14)", errno, strerror(errno));
		(void)close(fd);
		return -1;
	}
	return fd;
}

/*
 *  stress_ksm_unmerge_minor_merging()
 *	MERGING: the range mergeable, then registered for minor faults
 */
static void stress_ksm_unmerge_minor_merging(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_minor_t *m)
{
	struct uffdio_register reg;

	if (madvise(m->range, m->size, MADV_MERGEABLE) < 0) {
		stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_UFFD_MINOR, "MADV_MERGEABLE failed, errno=%d (%s)", errno, strerror(errno));
		return;
	}
	(void)memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)m->range;
	reg.range.len = m->size;
	reg.mode = UFFDIO_REGISTER_MODE_MINOR;
	if (ioctl(m->uffd, UFFDIO_REGISTER, &reg) < 0) {
		stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_UFFD_MINOR, "UFFDIO_REGISTER (minor) failed, errno=%d (%s)",
			errno, strerror(errno));
		return;
	}
	m->registered = true;
}

/*
 *  stress_ksm_unmerge_minor_unregister()
 *	drop the minor registration (the broken kernel warned here)
 */
static void stress_ksm_unmerge_minor_unregister(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_minor_t *m)
{
	struct uffdio_range r;

	if (!m->registered)
		return;
	r.start = (uintptr_t)m->range;
	r.len = m->size;
	if (ioctl(m->uffd, UFFDIO_UNREGISTER, &r) < 0)
		stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_UFFD_MINOR, "UFFDIO_UNREGISTER failed, errno=%d (%s)",
			errno, strerror(errno));
	m->registered = false;
}

/*
 *  stress_ksm_unmerge_minor_unmerge()
 *	UNMERGING: MADV_UNMERGEABLE of the minor-registered range; VmFlags
 *	kept apart from mg, no KSM page left, data intact
 */
static void stress_ksm_unmerge_minor_unmerge(stress_ksm_unmerge_ctx_t *ctx, stress_ksm_unmerge_minor_t *m)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, KSM_RACER_IDX_UFFD_MINOR);
	const size_t n = m->size / ctx->page_size;
	char after[256];
	uint64_t ksm0, ksm1;
	ssize_t bad;
	int judged;

	if (!m->registered)
		return;
	if (stress_ksm_unmerge_vmflags(m->range, m->vmflags, sizeof(m->vmflags)) < 0 ||
	    !stress_ksm_unmerge_minor_has_ui(m->vmflags)) {
		stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_UFFD_MINOR, "the registered range has no \"ui\" in its VmFlags "
			"('%s'): the minor registration did not reach the VMA", m->vmflags);
		stress_ksm_unmerge_minor_unregister(ctx, m);
		return;
	}
	ksm0 = stress_ksm_unmerge_ksm_page_count(ctx, m->range, n);
	if (madvise(m->range, m->size, MADV_UNMERGEABLE) < 0) {
		if (errno != EINTR || stress_continue(ctx->args))
			stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_UFFD_MINOR, "MADV_UNMERGEABLE of the minor-registered range "
				"failed, errno=%d (%s)", errno, strerror(errno));
		stress_ksm_unmerge_minor_unregister(ctx, m);
		return;
	}
	if (stress_ksm_unmerge_vmflags(m->range, after, sizeof(after)) == 0 &&
	    (judged = stress_ksm_unmerge_minor_flags_judge(m->vmflags, after)) != 0)
		stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_UFFD_MINOR, "MADV_UNMERGEABLE changed the VMA's flags beyond \"mg\": "
			"before '%s', after '%s'%s", m->vmflags, after, judged == 2 ?
			" (VM_UFFD_MINOR, bit 41, lost: VM_MERGEABLE cleared with a 32-bit mask, "
			"fixed by f04aad36a07c)" : "");
	ksm1 = stress_ksm_unmerge_ksm_page_count(ctx, m->range, n);
	if (ksm1)
		stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_UFFD_MINOR, "%" PRIu64 " pages are still KSM pages after "
			"MADV_UNMERGEABLE", ksm1);
	else
		rs->evidence += ksm0;
	bad = stress_ksm_unmerge_first_bad_page(m->range, n, ctx->templates, ctx->page_size);
	if (bad >= 0)
		stress_ksm_unmerge_racer_fail(ctx, KSM_RACER_IDX_UFFD_MINOR, "page %zd lost its data in the unmerge", bad);
	rs->ops++;
	stress_ksm_unmerge_minor_unregister(ctx, m);
}

/*
 *  stress_ksm_unmerge_minor_cycle()
 *	MERGING: mergeable + registered; UNMERGING: unmerge and check; IDLE:
 *	never left registered (a fault on it would wait for a handler)
 */
static void stress_ksm_unmerge_minor_cycle(stress_ksm_unmerge_ctx_t *ctx, const size_t idx, const int phase)
{
	stress_ksm_unmerge_minor_t *m = (stress_ksm_unmerge_minor_t *)ctx->run[idx].priv;

	if (!m)
		return;
	if (phase == KSM_PHASE_MERGING)
		stress_ksm_unmerge_minor_merging(ctx, m);
	else if (phase == KSM_PHASE_UNMERGING)
		stress_ksm_unmerge_minor_unmerge(ctx, m);
	else if (phase == KSM_PHASE_IDLE)
		stress_ksm_unmerge_minor_unregister(ctx, m);
}

/*
 *  stress_ksm_unmerge_minor_supported()
 *	userfaultfd with minor faults on shmem
 */
static int stress_ksm_unmerge_minor_supported(char *reason, const size_t len)
{
	const int fd = stress_ksm_unmerge_minor_open(reason, len);

	if (fd < 0)
		return -1;
	(void)close(fd);
	return 0;
}

/*
 *  stress_ksm_unmerge_minor_free()
 *	unregister, unmap, close
 */
static void stress_ksm_unmerge_minor_free(stress_ksm_unmerge_minor_t *m)
{
	if (!m)
		return;
	if (m->range && m->range != MAP_FAILED)
		(void)munmap(m->range, m->size);
	if (m->memfd >= 0)
		(void)close(m->memfd);
	if (m->uffd >= 0)
		(void)close(m->uffd);
	free(m);
}

/*
 *  stress_ksm_unmerge_minor_start()
 *	memfd, its private mapping filled with the "same" page, userfaultfd
 */
static int stress_ksm_unmerge_minor_start(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_racer_stats_t *rs = stress_ksm_unmerge_racer_stats(ctx, idx);
	stress_ksm_unmerge_minor_t *m = stress_ksm_unmerge_racer_alloc(ctx, idx, sizeof(*m), true);
	size_t k;

	if (!m)
		return -1;
	m->uffd = m->memfd = -1;
	m->size = KSM_MINOR_PAGES * ctx->page_size;
	m->uffd = stress_ksm_unmerge_minor_open(rs->reason, sizeof(rs->reason));
	m->memfd = (int)syscall(__NR_memfd_create, "ksm-unmerge-minor", 1 /* MFD_CLOEXEC */);
	if (m->uffd < 0 || m->memfd < 0 || ftruncate(m->memfd, (off_t)m->size) < 0) {
		if (m->uffd >= 0)
			(void)snprintf(rs->reason, sizeof(rs->reason), "memfd of %zu bytes failed, "
				"errno=%d (%s)", m->size, errno, strerror(errno));
		stress_ksm_unmerge_minor_free(m);
		return -1;
	}
	m->range = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, m->memfd, 0);
	if (m->range == MAP_FAILED) {
		(void)snprintf(rs->reason, sizeof(rs->reason), "private mmap of the memfd failed, "
			"errno=%d (%s)", errno, strerror(errno));
		stress_ksm_unmerge_minor_free(m);
		return -1;
	}
	/* written: every page is an anonymous copy, present, mergeable */
	for (k = 0; k < KSM_MINOR_PAGES; k++)
		(void)shim_memcpy(m->range + k * ctx->page_size, ctx->templates, ctx->page_size);
	ctx->run[idx].priv = m;
	ctx->racers_disturb_counts = true;
	return 0;
}

/*
 *  stress_ksm_unmerge_minor_stop()
 *	unregister and free
 */
static void stress_ksm_unmerge_minor_stop(stress_ksm_unmerge_ctx_t *ctx, const size_t idx)
{
	stress_ksm_unmerge_minor_t *m = (stress_ksm_unmerge_minor_t *)ctx->run[idx].priv;

	if (m)
		stress_ksm_unmerge_minor_unregister(ctx, m);
	stress_ksm_unmerge_minor_free(m);
	ctx->run[idx].priv = NULL;
}

#define KSM_RACER_UFFD_MINOR                                                 \
	KSM_RACER_UFFD_MINOR_ID,							\
	.supported = stress_ksm_unmerge_minor_supported,                     \
	.start = stress_ksm_unmerge_minor_start,                             \
	.stop = stress_ksm_unmerge_minor_stop,                               \
	.cycle = stress_ksm_unmerge_minor_cycle,

#else

/* feature guard off: the racer is listed, and reports "not built" */
#define KSM_RACER_UFFD_MINOR						\
	KSM_RACER_UFFD_MINOR_ID,							\
	.not_built = "userfaultfd minor mode (HAVE_LINUX_USERFAULTFD_H) or memfd_create missing",

#endif
