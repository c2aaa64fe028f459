
/*
 *  The racer table, the only list of racers: --ksm-unmerge-method takes
 *  "all", "madvise", "prctl" or one of these (a racer runs with both
 *  merge switches); the report follows its order
 */
#define KSM_PRIV(type)	.priv_size = sizeof(type)

static const stress_ksm_unmerge_racer_t stress_ksm_unmerge_racers[KSM_RACERS] = {
	{ .name = "vmsplice", .evidence = "ksm-pages-spliced", .not_built = KSM_VMSPLICE_NOT_BUILT,
	  .desc = "GUP references from vmsplice on KSM pages, held in a pipe across the unmerge",
	  .details = { "splices-held-over-unmerge", "ksm-pages-held-over-unmerge" }, .flags = KSM_RF_WAIT | KSM_RF_PARTIAL,
	  KSM_PRIV(stress_ksm_unmerge_vmsplice_t), .start = stress_ksm_unmerge_vmsplice_start,
	  .stop = stress_ksm_unmerge_vmsplice_stop, .op = stress_ksm_unmerge_vmsplice_op },
	{ .name = "gup", .evidence = "ksm-pages-pinned", .not_built = KSM_GUP_NOT_BUILT,
	  .desc = "O_DIRECT GUP-fast pins and io_uring long-term pins of KSM pages (COW breaks)",
	  .details = { "odirect-pins", "odirect-ksm-pages", "longterm-pins", "longterm-ksm-pages" },
	  .flags = KSM_RF_WAIT | KSM_RF_PARTIAL, KSM_PRIV(stress_ksm_unmerge_gup_t), .start = stress_ksm_unmerge_gup_start,
	  .stop = stress_ksm_unmerge_gup_stop, .op = stress_ksm_unmerge_gup_op },
	{ .name = "uffd-wp", .evidence = "wp-pages-unshared", .not_built = KSM_UFFD_WP_NOT_BUILT,
	  .desc = "FAULT_FLAG_UNSHARE of userfaultfd-wp protected KSM pages",
	  .details = { "wp-ksm-pages-at-unmerge", "wp-bits-kept", "wp-kept-still-ksm" },
	  .page_bytes = 1 + sizeof(uint32_t) + sizeof(uint64_t), KSM_PRIV(stress_ksm_unmerge_uffd_t),
	  .start = stress_ksm_unmerge_uffd_start, .stop = stress_ksm_unmerge_uffd_stop, .op = stress_ksm_unmerge_uffd_op,
	  .park = stress_ksm_unmerge_uffd_park, .phase = stress_ksm_unmerge_uffd_phase },
	{ .name = "mrelease", .evidence = "ksm-victims-killed",
	  .desc = "process_mrelease against exit_mmap of SIGKILLed children sharing KSM pages",
	  .details = { "mrelease-reaps", "mrelease-esrch", "victim-ksm-pages" },
	  .flags = KSM_RF_WAIT | KSM_RF_PFNS | KSM_RF_COPY, KSM_PRIV(stress_ksm_unmerge_mrelease_t),
	  .supported = stress_ksm_unmerge_mrelease_supported, .op = stress_ksm_unmerge_mrelease_op },
	{ .name = "fork", .evidence = "ksm-cow-writes",
	  .desc = "COW of KSM pages in forked children, and their KSM counters at fork",
	  .flags = KSM_RF_PFNS, KSM_PRIV(stress_ksm_unmerge_fork_t), .start = stress_ksm_unmerge_fork_start,
	  .stop = stress_ksm_unmerge_fork_stop, .phase = stress_ksm_unmerge_fork_phase },
	{ .name = "mprotect", .evidence = "ksm-pages-protected",
	  .desc = "unmerge of PROT_NONE and read-only KSM pages (VMAs split and merge)",
	  .flags = KSM_RF_PFNS | KSM_RF_LAYOUT | KSM_RF_PARTIAL, .page_bytes = 5, KSM_PRIV(stress_ksm_unmerge_mprotect_t),
	  .start = stress_ksm_unmerge_mprotect_start, .stop = stress_ksm_unmerge_mprotect_stop,
	  .op = stress_ksm_unmerge_mprotect_op, .park = stress_ksm_unmerge_mprotect_park,
	  .phase = stress_ksm_unmerge_mprotect_phase },
	{ .name = "dontneed", .evidence = "ksm-pages-discarded", .desc = "unmerge over MADV_DONTNEED holes made before and during it",
	  .flags = KSM_RF_LAYOUT | KSM_RF_PARTIAL, .page_bytes = 1, KSM_PRIV(stress_ksm_unmerge_dontneed_t),
	  .start = stress_ksm_unmerge_dontneed_start, .stop = stress_ksm_unmerge_dontneed_stop,
	  .op = stress_ksm_unmerge_dontneed_op, .restore = stress_ksm_unmerge_dontneed_restore },
	{ .name = "sparse", .evidence = "sparse-ksm-pages", .desc = "the per-page unmerge walk over a huge, mostly unpopulated range",
	  .details = { "sparse-pages-walked", "populated-pages-checked" }, .flags = KSM_RF_PFNS | KSM_RF_PARTIAL,
	  KSM_PRIV(stress_ksm_unmerge_sparse_t), .start = stress_ksm_unmerge_sparse_start,
	  .stop = stress_ksm_unmerge_sparse_stop, .phase = stress_ksm_unmerge_sparse_phase },
	{ .name = "thp", .evidence = "thps-split", .not_built = KSM_THP_NOT_BUILT,
	  .desc = "KSM split of THPs, and unmerge racing memory compaction (migration entries)",
	  .details = { "pmd-thps", "mthps" }, .flags = KSM_RF_PARTIAL, KSM_PRIV(stress_ksm_unmerge_thp_t),
	  .start = stress_ksm_unmerge_thp_start, .stop = stress_ksm_unmerge_thp_stop, .op = stress_ksm_unmerge_thp_op,
	  .park = stress_ksm_unmerge_thp_park, .phase = stress_ksm_unmerge_thp_phase },
	{ .name = "signal", .evidence = "unmerges-interrupted", .desc = "signals interrupting the unmerge walk (EINTR, retried)",
	  KSM_PRIV(stress_ksm_unmerge_signal_t), .start = stress_ksm_unmerge_signal_start,
	  .stop = stress_ksm_unmerge_signal_stop, .op = stress_ksm_unmerge_signal_op },
	{ .name = "mremap", .evidence = "ksm-pages-moved", .desc = "mremap moves of merged ranges while merged and unmerging",
	  .details = { "moves-cut-at-vma-end" }, .flags = KSM_RF_WAIT | KSM_RF_PARTIAL, KSM_PRIV(stress_ksm_unmerge_mremap_t),
	  .start = stress_ksm_unmerge_mremap_start, .stop = stress_ksm_unmerge_mremap_stop,
	  .op = stress_ksm_unmerge_mremap_op, .phase = stress_ksm_unmerge_mremap_phase },
	{ .name = "uffd-minor", .evidence = "ksm-pages-unmerged", .not_built = KSM_UFFD_MINOR_NOT_BUILT,
	  .desc = "MADV_UNMERGEABLE of a userfaultfd-minor VMA (vm_flags above bit 31 kept)",
	  .flags = KSM_RF_PFNS | KSM_RF_PARTIAL, KSM_PRIV(stress_ksm_unmerge_minor_t), .start = stress_ksm_unmerge_minor_start,
	  .stop = stress_ksm_unmerge_minor_stop, .phase = stress_ksm_unmerge_minor_phase },
	{ .name = "prctl-exec", .evidence = "execs-mergeable", .not_built = KSM_PRCTL_EXEC_NOT_BUILT,
	  .desc = "PR_SET_MEMORY_MERGE kept across fork and exec, the exec's VMAs mergeable",
	  .supported = stress_ksm_unmerge_exec_supported, .op = stress_ksm_unmerge_exec_op },
	{ .name = "fork-zero", .evidence = "zero-page-forks",
	  .desc = "ksm_zero_pages of children forked while KSM zero pages unmerge or sit in DONTFORK/WIPEONFORK VMAs",
	  .details = { "forks-during-unmerge", "overcharged-uncopied", "overcharged-unmerging" },
	  .flags = KSM_RF_PFNS | KSM_RF_PARTIAL, KSM_PRIV(stress_ksm_unmerge_fz_t), .start = stress_ksm_unmerge_fz_start,
	  .stop = stress_ksm_unmerge_fz_stop, .op = stress_ksm_unmerge_fz_op, .phase = stress_ksm_unmerge_fz_phase },
};

/*
 *  stress_ksm_unmerge_method()
 *	--ksm-unmerge-method names: all, madvise, prctl, then the racers
 */
static const char *stress_ksm_unmerge_method(const size_t i)
{
	static const char * const fixed[] = { "all", "madvise", "prctl" };

	if (i < SIZEOF_ARRAY(fixed))
		return fixed[i];
	return (i - SIZEOF_ARRAY(fixed) < KSM_RACERS) ? stress_ksm_unmerge_racers[i - SIZEOF_ARRAY(fixed)].name : NULL;
}

/*
 *  stress_ksm_unmerge_use()
 *	pure: the switches and racers method m runs: all of them, one switch
 *	alone, or one racer with both switches
 */
static uint64_t stress_ksm_unmerge_use(const size_t m)
{
	if (m == 0)
		return KSM_SW_BOTH | (KSM_RACER_BIT(KSM_RACERS) - KSM_RACER_BIT(0));
	return (m <= 2) ? STRESS_BIT_ULL(m - 1) : KSM_SW_BOTH | KSM_RACER_BIT(m - 3);
}
