/*
 * core-shim/core-opts.h: option flag bits and option ids (stress-ng core-opts.h)
 * The OPT_* values only need to be distinct; stress-ng's own enum replaces
 * them inside a stress-ng tree.
 */
#ifndef CORE_OPTS_H
#define CORE_OPTS_H

#include <getopt.h>

/* Option bit masks, same bits as stress-ng 0.22 */
#define OPT_FLAGS_METRICS	 STRESS_BIT_ULL(0)	/* --metrics */
#define OPT_FLAGS_METRICS_BRIEF	 STRESS_BIT_ULL(4)	/* --metrics-brief */
#define OPT_FLAGS_VERIFY	 STRESS_BIT_ULL(5)	/* --verify */
#define OPT_FLAGS_TIMES		 STRESS_BIT_ULL(8)	/* --times */
#define OPT_FLAGS_MINIMIZE	 STRESS_BIT_ULL(9)	/* --minimize */
#define OPT_FLAGS_MAXIMIZE	 STRESS_BIT_ULL(10)	/* --maximize */
#define OPT_FLAGS_NO_RAND_SEED	 STRESS_BIT_ULL(19)	/* --no-rand-seed */
#define OPT_FLAGS_KLOG_CHECK	 STRESS_BIT_ULL(29)	/* --klog-check */
#define OPT_FLAGS_SKIP_SILENT	 STRESS_BIT_ULL(33)	/* --skip-silent */

/* Option ids: stressor ones are named as stress-ng's generated enum */
typedef enum {
	OPT_undefined = 0,
	OPT_ksm_unmerge = 1000,
	OPT_ksm_unmerge_bytes,
	OPT_ksm_unmerge_method,
	OPT_ksm_unmerge_ops,
	OPT_ksm_unmerge_pattern,
	OPT_ksm_unmerge_sparse,
	OPT_SHIM_MAX,
} stress_op_t;

#endif
