/*
 * core-shim/core-parse-opts.h: stressor option table types and the
 * number/size/time parsers (stress-ng core-parse-opts.h)
 */
#ifndef CORE_PARSE_OPTS_H
#define CORE_PARSE_OPTS_H

typedef struct {
	const int opt;			/* optarg option */
	const char *opt_name;		/* optarg name */
	stress_type_id_t type_id;	/* option setting type */
	uint64_t min;			/* option min */
	uint64_t max;			/* option max */
	void *data;			/* option specific data */
} stress_opt_t;

#define END_OPT { 0, NULL, TYPE_ID_UNDEFINED, (uint64_t)0, (uint64_t)0, NULL }

typedef const char *(*stress_method_func)(const size_t i);
typedef void (*stress_callback_func)(const char *opt_name, const char *opt_arg,
	stress_type_id_t *type_id, void *value);

/*
 * Parsers: on bad input they print one line naming the option and value
 * to stderr and longjmp(g_error_env, 1); the runner then exits 1.
 */
extern WARN_UNUSED uint64_t stress_get_uint64(const char *const str);
extern WARN_UNUSED int64_t stress_get_int64(const char *const str);
extern WARN_UNUSED uint64_t stress_get_uint64_scale(const char *const str,
	const void *scales, const char *const msg);
extern WARN_UNUSED uint64_t stress_get_uint64_byte(const char *const str);
extern WARN_UNUSED uint64_t stress_get_uint64_byte_memory(const char *const str,
	const uint32_t instances);
extern WARN_UNUSED uint64_t stress_get_uint64_time(const char *const str);
extern void stress_check_range(const char *const opt, const uint64_t val,
	const uint64_t lo, const uint64_t hi);
extern WARN_UNUSED int stress_parse_opt(const char *stressor_name,
	const char *opt_name, const char *optarg, const stress_opt_t *opt);

#endif
