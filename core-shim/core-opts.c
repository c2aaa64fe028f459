/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/core-opts.c: command line parsing: global options, the
 * stressor's option table (stress_parse_opt), numbers, sizes, times
 * and the instance count.  Bad input prints exactly one line to
 * stderr naming the option and the value, then longjmp(g_error_env, 1).
 */
#include "stress-ng.h"

#include <ctype.h>
#include <stdarg.h>
#include <sys/stat.h>

uint64_t g_opt_timeout = TIMEOUT_NOT_SET;
uint64_t g_opt_flags;
jmp_buf g_error_env;

typedef struct {
	int ch;			/* suffix character, lower case */
	uint64_t scale;		/* multiplier */
} stress_scale_t;

static const stress_scale_t size_scales[] = {
	{ 'b', 1ULL },
	{ 'k', 1ULL << 10 },
	{ 'm', 1ULL << 20 },
	{ 'g', 1ULL << 30 },
	{ 't', 1ULL << 40 },
	{ 'p', 1ULL << 50 },
	{ 'e', 1ULL << 60 },
	{ 0, 0 },
};

static const stress_scale_t time_scales[] = {
	{ 's', 1ULL },
	{ 'm', 60ULL },
	{ 'h', 3600ULL },
	{ 'd', 86400ULL },
	{ 'w', 604800ULL },
	{ 'y', 31536000ULL },
	{ 0, 0 },
};

/* Global option ids (getopt values) */
enum {
	OPT_G_help = 'h',
	OPT_G_klog_check = 'K',
	OPT_G_quiet = 'q',
	OPT_G_timeout = 't',
	OPT_G_verbose = 'v',
	OPT_G_yaml = 'Y',
	OPT_G_log_file = 'L',
	OPT_G_metrics = 'M',
	OPT_G_log_brief = 0x100,
	OPT_G_metrics_brief,
	OPT_G_no_rand_seed,
	OPT_G_skip_silent,
	OPT_G_status,
	OPT_G_stderr,
	OPT_G_temp_path,
	OPT_G_times,
	OPT_G_verify,
	OPT_S_instances = 0x200,
	OPT_S_ops,
	OPT_S_table = 0x300,	/* + index into info->opts */
};

typedef struct {
	int id;			/* getopt value */
	const char *name;	/* long name */
	int has_arg;		/* getopt has_arg */
	const char *opt_s;	/* short option letter or NULL */
	const char *help;	/* help text */
	uint64_t opt_flags;	/* OPT_FLAGS_* to set */
	uint32_t log_flags;	/* PR_LOG_FLAGS_* to set */
} stress_global_opt_t;

static const stress_global_opt_t global_opts[] = {
	{ OPT_G_help, "help", no_argument, "h", "show help",
	  0, 0 },
	{ OPT_G_klog_check, "klog-check", no_argument, "K",
	  "check kernel log for errors and fail on them", OPT_FLAGS_KLOG_CHECK, 0 },
	{ OPT_G_log_brief, "log-brief", no_argument, NULL,
	  "less verbose log messages", 0, PR_LOG_FLAGS_BRIEF },
	{ OPT_G_log_file, "log-file", required_argument, "L",
	  "log messages to a log file too", 0, 0 },
	{ OPT_G_metrics, "metrics", no_argument, "M",
	  "print pseudo metrics of activity", OPT_FLAGS_METRICS, PR_LOG_FLAGS_METRICS },
	{ OPT_G_metrics_brief, "metrics-brief", no_argument, NULL,
	  "enable metrics and only show non-zero results",
	  OPT_FLAGS_METRICS | OPT_FLAGS_METRICS_BRIEF, PR_LOG_FLAGS_METRICS },
	{ OPT_G_no_rand_seed, "no-rand-seed", no_argument, NULL,
	  "seed random numbers with the same constant", OPT_FLAGS_NO_RAND_SEED, 0 },
	{ OPT_G_quiet, "quiet", no_argument, "q", "quiet output", 0, 0 },
	{ OPT_G_skip_silent, "skip-silent", no_argument, NULL,
	  "silently skip unimplemented stressors", OPT_FLAGS_SKIP_SILENT,
	  PR_LOG_FLAGS_SKIP_SILENT },
	{ OPT_G_status, "status", required_argument, NULL,
	  "show stress-ng progress status every S seconds", 0, 0 },
	{ OPT_G_stderr, "stderr", no_argument, NULL,
	  "output messages to stderr", 0, PR_LOG_FLAGS_STDERR },
	{ OPT_G_temp_path, "temp-path", required_argument, NULL,
	  "specify path for temporary directories and files", 0, 0 },
	{ OPT_G_timeout, "timeout", required_argument, "t",
	  "timeout after T seconds (s, m, h, d, w, y suffixes)", 0, 0 },
	{ OPT_G_times, "times", no_argument, NULL,
	  "show run time summary at end of the run", OPT_FLAGS_TIMES, 0 },
	{ OPT_G_verbose, "verbose", no_argument, "v", "verbose output",
	  0, PR_LOG_FLAGS_ALL },
	{ OPT_G_verify, "verify", no_argument, NULL,
	  "verify results (not available on all tests)", OPT_FLAGS_VERIFY,
	  PR_LOG_FLAGS_FAIL },
	{ OPT_G_yaml, "yaml", required_argument, "Y",
	  "output results to YAML formatted file", 0, 0 },
};

/*
 *  stress-ng 0.22 global options (stress-ng.c help_generic[]) that this
 *  standalone build does not implement: refused by name, never ignored
 */
static const struct {
	const char *name;	/* long name */
	int opt_s;		/* short option letter, 0 if none */
} stress_unimplemented_opts[] = {
	{ "abort", 0 }, { "aggressive", 0 }, { "all", 'a' }, { "autogroup", 0 },
	{ "backoff", 'b' }, { "buddystat", 0 }, { "buildinfo", 0 },
	{ "c-states", 0 }, { "change-cpu", 0 }, { "class", 0 },
	{ "compact-memory", 0 }, { "config", 0 }, { "dentrystat", 0 },
	{ "dry-run", 'n' }, { "exclude", 'x' }, { "exercise-feature", 0 },
	{ "exercise-library", 0 }, { "exercise-syscall", 0 }, { "exercised", 0 },
	{ "ftrace", 0 }, { "ignite-cpu", 0 }, { "interrupts", 0 },
	{ "ionice-class", 0 }, { "ionice-level", 0 }, { "ios", 0 },
	{ "iostat", 'I' }, { "job", 'j' }, { "keep-files", 0 },
	{ "keep-name", 'k' }, { "ksm", 0 }, { "limit-as", 0 },
	{ "limit-data", 0 }, { "limit-stack", 0 }, { "log-lockless", 0 },
	{ "make-it-fail", 0 }, { "max-fd", 0 }, { "maximize", 0 },
	{ "mbind", 0 }, { "minimize", 0 }, { "no-madvise", 0 },
	{ "no-madvise-opts", 0 }, { "no-oom-adjust", 0 }, { "oom-avoid", 0 },
	{ "oom-avoid-bytes", 0 }, { "oom-no-child", 0 }, { "oomable", 0 },
	{ "page-in", 0 }, { "parallel", 0 }, { "pathological", 0 },
	{ "pause", 0 }, { "perf", 0 }, { "permute", 0 }, { "progress", 0 },
	{ "random", 'r' }, { "randprocname", 0 }, { "rapl", 0 },
	{ "raplstat", 0 }, { "resctrl", 0 }, { "sched", 0 },
	{ "sched-deadline", 0 }, { "sched-period", 0 }, { "sched-prio", 0 },
	{ "sched-reclaim", 0 }, { "sched-runtime", 0 }, { "seed", 0 },
	{ "sequential", 0 }, { "settings", 0 }, { "smart", 0 }, { "sn", 0 },
	{ "stdout", 0 }, { "stressor-time", 0 }, { "stressors", 0 },
	{ "syslog", 0 }, { "taskset", 0 }, { "thermalstat", 0 },
	{ "thrash", 0 }, { "timer-slack", 0 }, { "timestamp", 0 }, { "tz", 0 },
	{ "verifiable", 0 }, { "version", 'V' }, { "vmstat", 0 },
	{ "vmstat-units", 0 }, { "with", 'w' },
};

static const char *parse_opt_name;	/* option being parsed */
static const char *parse_opt_value;	/* its value */

/*
 *  stress_shim_parse_context_set()
 *	name the option and value that error messages refer to
 */
void stress_shim_parse_context_set(const char *opt_name, const char *value)
{
	parse_opt_name = opt_name;
	parse_opt_value = value;
}

/*
 *  stress_shim_parse_error()
 *	print one error line naming the option and value, then abort
 *	the parse via longjmp(g_error_env, 1)
 */
void stress_shim_parse_error(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	if (parse_opt_name)
		(void)fprintf(stderr, "%s: error: option --%s: invalid value "
			"'%.128s': %s\n", program_invocation_short_name,
			parse_opt_name, parse_opt_value ? parse_opt_value : "",
			msg);
	else
		(void)fprintf(stderr, "%s: error: invalid value '%.128s': %s\n",
			program_invocation_short_name,
			parse_opt_value ? parse_opt_value : "", msg);
	(void)fflush(stderr);
	longjmp(g_error_env, 1);
}

/*
 *  stress_digits_parse()
 *	parse a run of decimal digits at str into *val; returns the
 *	pointer after the digits, NULL on no digits or overflow
 */
static const char *stress_digits_parse(const char *str, uint64_t *val,
	bool *overflow)
{
	uint64_t v = 0;
	const char *ptr = str;

	*overflow = false;
	while (isdigit((unsigned char)*ptr)) {
		const uint64_t d = (uint64_t)(*ptr - '0');

		if (v > (UINT64_MAX - d) / 10) {
			*overflow = true;
			return NULL;
		}
		v = (v * 10) + d;
		ptr++;
	}
	if (ptr == str)
		return NULL;
	*val = v;
	return ptr;
}

/*
 *  stress_value_check()
 *	reject NULL, empty and negative values
 */
static void stress_value_check(const char *str)
{
	stress_shim_parse_context_set(parse_opt_name, str);
	if (!str || !*str)
		stress_shim_parse_error("empty value");
	if (*str == '-')
		stress_shim_parse_error("negative values are not allowed");
}

/*
 *  stress_get_uint64()
 *	string of decimal digits to uint64_t
 */
uint64_t stress_get_uint64(const char *const str)
{
	uint64_t val = 0;
	bool overflow;
	const char *end;

	stress_value_check(str);
	end = stress_digits_parse(str, &val, &overflow);
	if (overflow)
		stress_shim_parse_error("number too large (> %" PRIu64 ")", UINT64_MAX);
	if (!end || *end)
		stress_shim_parse_error("not a whole number");
	return val;
}

/*
 *  stress_get_int64()
 *	string of decimal digits, optionally negative, to int64_t
 */
int64_t stress_get_int64(const char *const str)
{
	uint64_t val = 0;
	bool overflow;
	const char *end;
	const bool negative = str && (*str == '-');

	stress_shim_parse_context_set(parse_opt_name, str);
	if (!str || !*str)
		stress_shim_parse_error("empty value");
	end = stress_digits_parse(str + negative, &val, &overflow);
	if (overflow || (val > (uint64_t)INT64_MAX + negative))
		stress_shim_parse_error("number out of 64 bit range");
	if (!end || *end)
		stress_shim_parse_error("not a whole number");
	return negative ? (int64_t)(0 - val) : (int64_t)val;
}

/*
 *  stress_get_uint64_scale()
 *	digits with an optional one character scale suffix (scales is a
 *	stress_scale_t table ending in { 0, 0 }); msg names the unit
 */
uint64_t stress_get_uint64_scale(const char *const str, const void *scales,
	const char *const msg)
{
	const stress_scale_t *sc = (const stress_scale_t *)scales;
	uint64_t val = 0;
	bool overflow;
	const char *end;
	int ch;

	stress_value_check(str);
	end = stress_digits_parse(str, &val, &overflow);
	if (overflow)
		stress_shim_parse_error("%s too large", msg);
	if (!end)
		stress_shim_parse_error("not a number");
	if (!*end)
		return val;
	if (end[1])
		stress_shim_parse_error("illegal %s specifier '%s'", msg, end);
	ch = tolower((unsigned char)*end);
	for (; sc->ch; sc++) {
		if (ch == sc->ch) {
			if (val && (sc->scale > UINT64_MAX / val))
				stress_shim_parse_error("%s too large", msg);
			return val * sc->scale;
		}
	}
	stress_shim_parse_error("illegal %s specifier '%c'", msg, *end);
}

/*
 *  stress_get_uint64_byte()
 *	size in bytes with optional b, k, m, g, t, p, e suffix
 */
uint64_t stress_get_uint64_byte(const char *const str)
{
	return stress_get_uint64_scale(str, size_scales, "size");
}

/*
 *  stress_percent_parse()
 *	parse "<digits>[.<digits>]%" into a percentage (over 100% allowed,
 *	as stress-ng allows it)
 */
static double stress_percent_parse(const char *str)
{
	const char *ptr = str;
	double val = 0.0;
	double frac = 0.1;

	if (!isdigit((unsigned char)*ptr))
		stress_shim_parse_error("invalid percentage");
	while (isdigit((unsigned char)*ptr)) {
		val = (val * 10.0) + (double)(*ptr - '0');
		ptr++;
	}
	if (*ptr == '.') {
		ptr++;
		if (!isdigit((unsigned char)*ptr))
			stress_shim_parse_error("invalid percentage");
		while (isdigit((unsigned char)*ptr)) {
			val += frac * (double)(*ptr - '0');
			frac /= 10.0;
			ptr++;
		}
	}
	if ((ptr[0] != '%') || ptr[1])
		stress_shim_parse_error("invalid percentage");
	return val;
}

/*
 *  stress_get_uint64_byte_memory()
 *	size in bytes, or "N%" as stress-ng's stress_get_uint64_byte_memory():
 *	N% of the free physical memory (sysconf _SC_AVPHYS_PAGES, not
 *	MemAvailable) divided by instances.  The option parser passes 1, so a
 *	*_BYTES_VM option holds the total that the stressor then divides by
 *	its instances.
 */
uint64_t stress_get_uint64_byte_memory(const char *const str,
	const uint32_t instances)
{
	size_t len;
	double pct, bytes;
	uint64_t phys;

	stress_value_check(str);
	len = strlen(str);
	if (str[len - 1] != '%')
		return stress_get_uint64_byte(str);
	pct = stress_percent_parse(str);
	phys = stress_memory_phys_size_get();
	if (!phys)
		stress_shim_parse_error("cannot determine physical memory size");
	bytes = ((double)phys * pct) / (100.0 * (double)(instances ? instances : 1));
	if (bytes >= 18446744073709551616.0)	/* 2^64 */
		stress_shim_parse_error("invalid too large percentage");
	return (uint64_t)bytes;
}

/*
 *  stress_get_uint64_time()
 *	time in seconds with optional s, m, h, d, w, y suffix
 */
uint64_t stress_get_uint64_time(const char *const str)
{
	return stress_get_uint64_scale(str, time_scales, "time");
}

/*
 *  stress_check_range()
 *	error unless lo <= val <= hi
 */
void stress_check_range(const char *const opt, const uint64_t val,
	const uint64_t lo, const uint64_t hi)
{
	if ((val < lo) || (val > hi)) {
		if (opt && !parse_opt_name)
			parse_opt_name = opt;
		stress_shim_parse_error("value %" PRIu64 " is out of range, "
			"allowed: %" PRIu64 " .. %" PRIu64, val, lo, hi);
	}
}

/*
 *  stress_check_range_bytes()
 *	error unless lo <= val <= hi, sizes printed human readable
 */
static void stress_check_range_bytes(const uint64_t val, const uint64_t lo,
	const uint64_t hi)
{
	char s_val[32], s_lo[32], s_hi[32];

	if ((val >= lo) && (val <= hi))
		return;
	stress_shim_parse_error("size %sB is out of range, allowed: %sB .. %sB",
		stress_uint64_to_str(s_val, sizeof(s_val), val, 1, false),
		stress_uint64_to_str(s_lo, sizeof(s_lo), lo, 1, false),
		stress_uint64_to_str(s_hi, sizeof(s_hi), hi, 1, false));
}

/*
 *  stress_check_signed_range()
 *	error unless lo <= val <= hi (signed)
 */
static void stress_check_signed_range(const int64_t val, const int64_t lo,
	const int64_t hi)
{
	if ((val < lo) || (val > hi))
		stress_shim_parse_error("value %" PRId64 " is out of range, "
			"allowed: %" PRId64 " .. %" PRId64, val, lo, hi);
}

/*
 *  stress_parse_method()
 *	match opt_arg against the method names; the index is stored
 */
static int stress_parse_method(const char *stressor_name, const char *opt_name,
	const char *opt_arg, const stress_opt_t *opt)
{
	const stress_method_func func = (stress_method_func)opt->data;
	char choices[256] = "";
	const char *str;
	size_t i;

	if (!func)
		stress_shim_parse_error("no method function for this option");
	if (!opt_arg || !*opt_arg)
		stress_shim_parse_error("empty value");
	for (i = 0; (str = func(i)) != NULL; i++) {
		if (strcmp(str, opt_arg) == 0)
			return stress_setting_set(stressor_name, opt_name,
				TYPE_ID_SIZE_T_METHOD, &i);
		if (i)
			(void)strlcat(choices, " ", sizeof(choices));
		(void)strlcat(choices, str, sizeof(choices));
	}
	stress_shim_parse_error("unknown choice, choices are: %s", choices);
}

/*
 *  stress_parse_callback()
 *	run the option's callback; it may longjmp on bad input
 */
static int stress_parse_callback(const char *stressor_name, const char *opt_name,
	const char *opt_arg, const stress_opt_t *opt)
{
	const stress_callback_func func = (stress_callback_func)opt->data;
	stress_type_id_t type_id = TYPE_ID_UNDEFINED;
	union {
		uint64_t u64;
		size_t size;
		char *str;
		char pad[32];
	} value;

	if (!func)
		stress_shim_parse_error("no callback function for this option");
	(void)memset(&value, 0, sizeof(value));
	func(opt_name, opt_arg, &type_id, &value);
	if (type_id == TYPE_ID_UNDEFINED)
		return 0;
	if (type_id == TYPE_ID_STR)
		return value.str ? stress_setting_set(stressor_name, opt_name,
			type_id, value.str) : 0;
	return stress_setting_set(stressor_name, opt_name, type_id, &value);
}

/*
 *  stress_parse_int_types()
 *	parse the fixed width integer types with range checks
 */
static int stress_parse_int_types(const char *stressor_name, const char *opt_name,
	const char *opt_arg, const stress_opt_t *opt)
{
	const stress_type_id_t t = opt->type_id;
	uint64_t u = 0;
	int64_t s = 0;
	union {
		uint8_t u8; int8_t s8; uint16_t u16; int16_t s16;
		uint32_t u32; int32_t s32; uint64_t u64; int64_t s64;
		size_t size; ssize_t ssize; unsigned int uint; int sint;
	} v;

	(void)memset(&v, 0, sizeof(v));
	switch (t) {
	case TYPE_ID_UINT8:
	case TYPE_ID_UINT16:
	case TYPE_ID_UINT32:
	case TYPE_ID_UINT64:
	case TYPE_ID_SIZE_T:
	case TYPE_ID_UINT:
		u = stress_get_uint64(opt_arg);
		stress_check_range(opt_name, u, opt->min, opt->max);
		if (((t == TYPE_ID_UINT8) && (u > UINT8_MAX)) ||
		    ((t == TYPE_ID_UINT16) && (u > UINT16_MAX)) ||
		    (((t == TYPE_ID_UINT32) || (t == TYPE_ID_UINT)) && (u > UINT32_MAX)))
			stress_shim_parse_error("value too large for the option type");
		v.u8 = (uint8_t)u;
		if (t == TYPE_ID_UINT16)
			v.u16 = (uint16_t)u;
		else if ((t == TYPE_ID_UINT32) || (t == TYPE_ID_UINT))
			v.u32 = (uint32_t)u;
		else if ((t == TYPE_ID_UINT64) || (t == TYPE_ID_SIZE_T))
			v.u64 = u;
		break;
	default:
		s = stress_get_int64(opt_arg);
		stress_check_signed_range(s, (int64_t)opt->min, (int64_t)opt->max);
		if (((t == TYPE_ID_INT8) && ((s < INT8_MIN) || (s > INT8_MAX))) ||
		    ((t == TYPE_ID_INT16) && ((s < INT16_MIN) || (s > INT16_MAX))) ||
		    (((t == TYPE_ID_INT32) || (t == TYPE_ID_INT)) &&
		     ((s < INT32_MIN) || (s > INT32_MAX))))
			stress_shim_parse_error("value out of range for the option type");
		v.s8 = (int8_t)s;
		if (t == TYPE_ID_INT16)
			v.s16 = (int16_t)s;
		else if ((t == TYPE_ID_INT32) || (t == TYPE_ID_INT))
			v.s32 = (int32_t)s;
		else
			v.s64 = s;
		break;
	}
	return stress_setting_set(stressor_name, opt_name, t, &v);
}

/*
 *  stress_parse_opt()
 *	parse opt_arg by the option's type_id, check min/max and store
 *	it under opt_name.  Returns 0, or -1 if it could not be stored.
 */
int stress_parse_opt(const char *stressor_name, const char *opt_name,
	const char *optarg, const stress_opt_t *opt)
{
	uint64_t u64;
	size_t sz;
	bool b = true;
	uint32_t u32;

	stress_shim_parse_context_set(opt_name, optarg);
	switch (opt->type_id) {
	case TYPE_ID_UINT32_TIME:
	case TYPE_ID_INT32_TIME:
		u64 = stress_get_uint64_time(optarg);
		stress_check_range(opt_name, u64, opt->min, opt->max);
		if (u64 > INT32_MAX)
			stress_shim_parse_error("time too large");
		u32 = (uint32_t)u64;
		return stress_setting_set(stressor_name, opt_name, opt->type_id, &u32);
	case TYPE_ID_UINT64_TIME:
		u64 = stress_get_uint64_time(optarg);
		stress_check_range(opt_name, u64, opt->min, opt->max);
		return stress_setting_set(stressor_name, opt_name, opt->type_id, &u64);
	case TYPE_ID_UINT64_BYTES:
	case TYPE_ID_UINT64_BYTES_FS:
	case TYPE_ID_UINT64_BYTES_VM:
	case TYPE_ID_OFF_T:
		u64 = (opt->type_id == TYPE_ID_UINT64_BYTES_VM) ?
			stress_get_uint64_byte_memory(optarg, 1) :
			stress_get_uint64_byte(optarg);
		stress_check_range_bytes(u64, opt->min, opt->max);
		return stress_setting_set(stressor_name, opt_name, opt->type_id, &u64);
	case TYPE_ID_SIZE_T_BYTES:
	case TYPE_ID_SIZE_T_BYTES_FS:
	case TYPE_ID_SIZE_T_BYTES_VM:
		u64 = (opt->type_id == TYPE_ID_SIZE_T_BYTES_VM) ?
			stress_get_uint64_byte_memory(optarg, 1) :
			stress_get_uint64_byte(optarg);
		stress_check_range_bytes(u64, opt->min, opt->max);
		sz = (size_t)u64;
		return stress_setting_set(stressor_name, opt_name, opt->type_id, &sz);
	case TYPE_ID_INT32_CPU_PERCENT:
		u32 = (uint32_t)stress_shim_instances_parse(opt_name, optarg);
		return stress_setting_set(stressor_name, opt_name, TYPE_ID_INT32, &u32);
	case TYPE_ID_SIZE_T_METHOD:
		return stress_parse_method(stressor_name, opt_name, optarg, opt);
	case TYPE_ID_CALLBACK:
		return stress_parse_callback(stressor_name, opt_name, optarg, opt);
	case TYPE_ID_STR:
		if (!optarg || !*optarg)
			stress_shim_parse_error("empty value");
		return stress_setting_set(stressor_name, opt_name, TYPE_ID_STR, optarg);
	case TYPE_ID_BOOL:
		if (optarg) {
			u64 = stress_get_uint64(optarg);
			stress_check_range(opt_name, u64, 0, 1);
			b = (u64 != 0);
		}
		return stress_setting_set(stressor_name, opt_name, TYPE_ID_BOOL, &b);
	case TYPE_ID_UINT8:
	case TYPE_ID_INT8:
	case TYPE_ID_UINT16:
	case TYPE_ID_INT16:
	case TYPE_ID_UINT32:
	case TYPE_ID_INT32:
	case TYPE_ID_UINT64:
	case TYPE_ID_INT64:
	case TYPE_ID_SIZE_T:
	case TYPE_ID_SSIZE_T:
	case TYPE_ID_UINT:
	case TYPE_ID_INT:
	case TYPE_ID_INT_DOMAIN:
	case TYPE_ID_INT_PORT:
		return stress_parse_int_types(stressor_name, opt_name, optarg, opt);
	case TYPE_ID_UINT64_BYTES_FS_PERCENT:
	case TYPE_ID_SIZE_T_BYTES_FS_PERCENT:
	case TYPE_ID_UNDEFINED:
	default:
		stress_shim_parse_error("option type %d is not supported",
			(int)opt->type_id);
	}
	return -1;
}

/*
 *  stress_shim_instances_parse()
 *	instance count: 0 = one per online CPU, "N%" of online CPUs,
 *	else 1..STRESS_SHIM_INSTANCES_MAX
 */
int32_t stress_shim_instances_parse(const char *opt, const char *str)
{
	uint64_t val = 0;
	bool overflow;
	const char *end;
	const int32_t cpus = stress_cpus_online_get();

	stress_shim_parse_context_set(opt, str);
	if (!str || !*str)
		stress_shim_parse_error("empty value");
	if (*str == '-')
		stress_shim_parse_error("number of instances must be between "
			"0 and %d", STRESS_SHIM_INSTANCES_MAX);
	end = stress_digits_parse(str, &val, &overflow);
	if (!end || overflow)
		stress_shim_parse_error("not a number of instances");
	if ((end[0] == '%') && !end[1]) {
		if (val > 100)
			stress_shim_parse_error("percentage above 100%%");
		val = ((uint64_t)cpus * val) / 100;
		return val < 1 ? 1 : (int32_t)val;
	}
	if (*end)
		stress_shim_parse_error("not a number of instances");
	if (val > STRESS_SHIM_INSTANCES_MAX)
		stress_shim_parse_error("number of instances must be between "
			"0 and %d", STRESS_SHIM_INSTANCES_MAX);
	return (val == 0) ? cpus : (int32_t)val;
}

/*
 *  stress_shim_ops_share()
 *	instance's share of ops; the shares sum exactly to ops
 */
uint64_t stress_shim_ops_share(const uint64_t ops, const uint32_t instances,
	const uint32_t instance)
{
	if (!instances)
		return 0;
	return (ops / instances) + ((instance < (ops % instances)) ? 1 : 0);
}

/*
 *  stress_shim_usage()
 *	print global options then the stressor's help rows
 */
void stress_shim_usage(const stressor_info_t *info, const char *name)
{
	size_t i;

	(void)printf("%s, standalone %s stressor (stress-ng %s core shim)\n",
		program_invocation_short_name, name, STRESS_SHIM_VERSION);
	(void)printf("\nusage: %s --%s N [OPTION [ARG]]\n",
		program_invocation_short_name, name);
	(void)printf("\ngeneral control options:\n");
	for (i = 0; i < SIZEOF_ARRAY(global_opts); i++) {
		char opt_s[10] = "";
		char opt_l[64];

		if (global_opts[i].opt_s)
			(void)snprintf(opt_s, sizeof(opt_s), "-%s,", global_opts[i].opt_s);
		(void)snprintf(opt_l, sizeof(opt_l), "%s%s", global_opts[i].name,
			(global_opts[i].has_arg == required_argument) ?
			((global_opts[i].id == OPT_G_timeout) ? " T" :
			 (global_opts[i].id == OPT_G_status) ? " S" :
			 (global_opts[i].id == OPT_G_log_file) ? " F" : " ARG") : "");
		(void)printf("%-6s--%-22s%s\n", opt_s, opt_l, global_opts[i].help);
	}
	(void)printf("\nstressor specific options:\n");
	for (i = 0; info->help && info->help[i].description; i++) {
		char opt_s[10] = "";

		if (info->help[i].opt_s)
			(void)snprintf(opt_s, sizeof(opt_s), "-%s,", info->help[i].opt_s);
		(void)printf("%-6s--%-22s%s\n", opt_s,
			info->help[i].opt_l ? info->help[i].opt_l : "",
			info->help[i].description);
	}
	(void)printf("\nnote: sizes can be suffixed with B, K, M, G and times "
		"with s, m, h, d, y\n");
}

/*
 *  stress_long_options_build()
 *	getopt_long table: globals, --<name>, --<name>-ops, info->opts
 */
static struct option *stress_long_options_build(const stressor_info_t *info,
	const char *name, char *ops_name, const size_t ops_len)
{
	size_t n_opts = 0, i, n = 0;
	struct option *lopts;

	(void)snprintf(ops_name, ops_len, "%s-ops", name);
	for (i = 0; info->opts && info->opts[i].opt_name; i++)
		n_opts++;
	lopts = calloc(SIZEOF_ARRAY(global_opts) + n_opts + 3, sizeof(*lopts));
	if (!lopts) {
		(void)fprintf(stderr, "%s: error: cannot allocate option table, "
			"errno=%d (%s)\n", program_invocation_short_name,
			errno, strerror(errno));
		return NULL;
	}
	for (i = 0; i < SIZEOF_ARRAY(global_opts); i++, n++) {
		lopts[n].name = global_opts[i].name;
		lopts[n].has_arg = global_opts[i].has_arg;
		lopts[n].val = global_opts[i].id;
	}
	lopts[n++] = (struct option){ name, required_argument, NULL, OPT_S_instances };
	lopts[n++] = (struct option){ ops_name, required_argument, NULL, OPT_S_ops };
	for (i = 0; i < n_opts; i++) {
		const char *oname = info->opts[i].opt_name;

		if (!strcmp(oname, name) || !strcmp(oname, ops_name))
			continue;
		lopts[n].name = oname;
		lopts[n].has_arg = (info->opts[i].type_id == TYPE_ID_BOOL) ?
			no_argument : required_argument;
		lopts[n].val = OPT_S_table + (int)i;
		n++;
	}
	return lopts;
}

/*
 *  stress_global_opt_find()
 *	global option entry for a getopt value, NULL if none
 */
static const stress_global_opt_t *stress_global_opt_find(const int id)
{
	size_t i;

	for (i = 0; i < SIZEOF_ARRAY(global_opts); i++) {
		if (global_opts[i].id == id)
			return &global_opts[i];
	}
	return NULL;
}

/*
 *  stress_temp_path_check()
 *	--temp-path must be a writable directory
 */
static void stress_temp_path_check(const char *path)
{
	struct stat st;

	if (!path || !*path)
		stress_shim_parse_error("empty value");
	if (stat(path, &st) < 0)
		stress_shim_parse_error("cannot stat path, errno=%d (%s)",
			errno, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		stress_shim_parse_error("not a directory");
	if (access(path, R_OK | W_OK | X_OK) < 0)
		stress_shim_parse_error("directory not accessible, errno=%d (%s)",
			errno, strerror(errno));
}

/*
 *  stress_global_opt_handle()
 *	act on one global option
 */
static void stress_global_opt_handle(const stress_global_opt_t *g,
	const char *arg, stress_shim_config_t *cfg, bool *quiet)
{
	const bool t = true;

	stress_shim_parse_context_set(g->name, arg);
	g_opt_flags |= g->opt_flags;
	g_pr_log_flags |= g->log_flags;
	switch (g->id) {
	case OPT_G_timeout:
		g_opt_timeout = stress_get_uint64_time(arg);
		stress_check_range(g->name, g_opt_timeout, 0, UINT32_MAX);
		cfg->timeout_set = true;
		(void)stress_setting_set("global", g->name, TYPE_ID_UINT64_TIME,
			&g_opt_timeout);
		break;
	case OPT_G_yaml:
		if (!arg || !*arg)
			stress_shim_parse_error("empty file name");
		cfg->yaml_filename = arg;
		(void)stress_setting_set("global", g->name, TYPE_ID_STR, arg);
		break;
	case OPT_G_status:
		cfg->status = (uint32_t)stress_get_uint64(arg);
		stress_check_range(g->name, cfg->status, 1, 3600);
		break;
	case OPT_G_log_file:
		if (!arg || !*arg)
			stress_shim_parse_error("empty file name");
		cfg->log_filename = arg;	/* opened after parsing: see main() */
		(void)stress_setting_set("global", g->name, TYPE_ID_STR, arg);
		break;
	case OPT_G_temp_path:
		stress_temp_path_check(arg);
		(void)stress_setting_set("global", g->name, TYPE_ID_STR, arg);
		break;
	case OPT_G_quiet:
		*quiet = true;
		/* fall through */
	default:
		(void)stress_setting_set("global", g->name, TYPE_ID_BOOL, &t);
		break;
	}
}

/*
 *  stress_unimplemented_opt()
 *	stress-ng's name for arg ("--name[=value]", or "-c" with optopt c)
 *	if it is a stress-ng option the shim does not implement, else NULL
 */
static const char *stress_unimplemented_opt(const char *arg, const int opt_c)
{
	size_t i, len;

	if (!strncmp(arg, "--", 2)) {
		arg += 2;
		len = strcspn(arg, "=");
		for (i = 0; i < SIZEOF_ARRAY(stress_unimplemented_opts); i++) {
			if ((strlen(stress_unimplemented_opts[i].name) == len) &&
			    !strncmp(stress_unimplemented_opts[i].name, arg, len))
				return stress_unimplemented_opts[i].name;
		}
		return NULL;
	}
	for (i = 0; opt_c && (i < SIZEOF_ARRAY(stress_unimplemented_opts)); i++) {
		if (stress_unimplemented_opts[i].opt_s == opt_c)
			return stress_unimplemented_opts[i].name;
	}
	return NULL;
}

/*
 *  stress_getopt_error()
 *	one line for a getopt failure: unknown option or missing value
 */
static void stress_getopt_error(const int c, char **argv,
	const struct option *lopts)
{
	const char *arg = argv[optind - 1];
	const char *name;
	size_t i;

	stress_shim_parse_context_set(NULL, NULL);
	if (c == ':') {
		for (i = 0; lopts[i].name; i++) {
			if (lopts[i].val == optopt) {
				(void)fprintf(stderr, "%s: error: option --%s "
					"requires a value\n",
					program_invocation_short_name, lopts[i].name);
				goto out;
			}
		}
		(void)fprintf(stderr, "%s: error: option -%c requires a value\n",
			program_invocation_short_name, optopt);
		goto out;
	}
	if ((name = stress_unimplemented_opt(arg, optopt)) != NULL) {
		char opt_s[8] = "";

		if (strncmp(arg, "--", 2) != 0)
			(void)snprintf(opt_s, sizeof(opt_s), "-%c (", optopt);
		(void)fprintf(stderr, "%s: error: option %s--%s%s is a stress-ng option "
			"this standalone build does not implement (run it in stress-ng)\n",
			program_invocation_short_name, opt_s, name, *opt_s ? ")" : "");
	}
	else if (optopt && (optopt < 0x100) && (strncmp(arg, "--", 2) != 0))
		(void)fprintf(stderr, "%s: error: unrecognized option '-%c'\n",
			program_invocation_short_name, optopt);
	else
		(void)fprintf(stderr, "%s: error: unrecognized or malformed "
			"option '%s'\n", program_invocation_short_name, arg);
out:
	(void)fflush(stderr);
	longjmp(g_error_env, 1);
}

/*
 *  stress_shim_opts_parse()
 *	parse argv; returns 0 to run, 1 if help was printed.  Bad input
 *	longjmps to g_error_env after one stderr line.
 */
int stress_shim_opts_parse(int argc, char **argv, const stressor_info_t *info,
	const char *name, stress_shim_config_t *cfg)
{
	static struct option *lopts;
	static char ops_name[64];
	bool quiet = false;

	(void)memset(cfg, 0, sizeof(*cfg));
	cfg->instances = -1;
	free(lopts);
	lopts = stress_long_options_build(info, name, ops_name, sizeof(ops_name));
	if (!lopts)
		longjmp(g_error_env, 1);

	optind = 0;	/* 0: glibc also forgets a half parsed "-abc" */
	opterr = 0;
	for (;;) {
		const stress_global_opt_t *g;
		const int c = getopt_long(argc, argv, ":t:Y:L:vqKMh", lopts, NULL);

		if (c == -1)
			break;
		if ((c == '?') || (c == ':'))
			stress_getopt_error(c, argv, lopts);
		if (c == OPT_G_help) {
			stress_shim_usage(info, name);
			cfg->help = true;
			return 1;
		}
		if (c == OPT_S_instances) {
			cfg->instances = stress_shim_instances_parse(name, optarg);
		} else if (c == OPT_S_ops) {
			stress_shim_parse_context_set(ops_name, optarg);
			cfg->ops = stress_get_uint64(optarg);
			stress_check_range(ops_name, cfg->ops, 1, 100000000ULL);
			cfg->ops_set = true;
			(void)stress_setting_set("global", ops_name, TYPE_ID_UINT64,
				&cfg->ops);
		} else if (c >= OPT_S_table) {
			const stress_opt_t *opt = &info->opts[c - OPT_S_table];

			if (stress_parse_opt(name, opt->opt_name, optarg, opt) < 0)
				longjmp(g_error_env, 1);
		} else if ((g = stress_global_opt_find(c)) != NULL) {
			stress_global_opt_handle(g, optarg, cfg, &quiet);
		}
	}
	stress_shim_parse_context_set(NULL, NULL);
	if (optind < argc) {
		(void)fprintf(stderr, "%s: error: unexpected argument '%.128s'\n",
			program_invocation_short_name, argv[optind]);
		longjmp(g_error_env, 1);
	}
	if (cfg->instances < 0) {
		(void)fprintf(stderr, "%s: error: no stressor given, use --%s N\n",
			program_invocation_short_name, name);
		longjmp(g_error_env, 1);
	}
	if (quiet)
		g_pr_log_flags &= ~PR_LOG_FLAGS_ALL;
	free(lopts);
	lopts = NULL;
	return 0;
}
