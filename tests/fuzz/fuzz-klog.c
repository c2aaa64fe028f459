/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tests/fuzz/fuzz-klog.c: libFuzzer target for the kernel-log check's
 * (klog/klog-check.c) record parser, unescaper, classifier / LKP key
 * normaliser, splat grouping and stress-ng's -K level rule.  The input is a list of /dev/kmsg records, one per line
 * (lines starting with a space are dictionary lines of the record
 * before), as in tests/data/corpus/klog.  Invariants are checked with
 * __builtin_trap().
 *
 *   make fuzz-klog FUZZ_KLOG_TIME=30
 */
#include "../lib/klog-stubs.h"		/* klog-check.c with silent core stubs */

#include <time.h>

static double fuzz_clock;	/* fake clock so idle closing is exercised */

/* stub: stress_time_now() */
double stress_time_now(void)
{
	return fuzz_clock;
}

/*
 *  fuzz_check_str()
 *	trap unless buf is NUL terminated within len
 */
static void fuzz_check_str(const char *buf, const size_t len)
{
	if (!memchr(buf, '\0', len))
		__builtin_trap();
}

/*
 *  fuzz_one_record()
 *	parse + unescape + classify one record, checking invariants
 */
static void fuzz_one_record(const char *rec, const size_t len)
{
	char key[STRESS_KLOG_KEY_LEN], msgbuf[STRESS_KLOG_REC_MAX];
	const char *msg = NULL;
	size_t msglen = 0, n;
	uint64_t seq, usec;
	int level = -1, fac = -1;

	if (stress_klog_record_parse(rec, len, &level, &seq, &usec, &fac, &msg, &msglen) == 0) {
		if ((level < 0) || (level > 7) || (fac < 0) || (fac > 127))
			__builtin_trap();
		if ((msg < rec) || (msg + msglen > rec + len) || memchr(msg, '\n', msglen))
			__builtin_trap();
		n = stress_klog_unescape(msg, msglen, msgbuf, sizeof(msgbuf));
		if ((n >= sizeof(msgbuf)) || (n > msglen) || (msgbuf[n] != '\0'))
			__builtin_trap();
		if (stress_klog_lkp_classify(msgbuf, key, sizeof(key)) == 0) {
			if (key[0])
				__builtin_trap();
		} else {
			fuzz_check_str(key, sizeof(key));
		}
	}
}

/*
 *  LLVMFuzzerTestOneInput()
 *	fuzz entry point
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static stress_shared_t fuzz_shared;
	static char buf[1 << 16], yaml[8192], rec[1 << 16];
	char key[STRESS_KLOG_KEY_LEN], letters[64];
	size_t i, start, reclen = 0;
	uint32_t records = 0, bits = 0;

	if (size >= sizeof(buf))
		return 0;
	if (!stress_klog_shm && (stress_klog_shm_init() < 0))
		__builtin_trap();
	(void)memset(stress_klog_shm, 0, sizeof(*stress_klog_shm));
	(void)memset(&stress_klog_state, 0, sizeof(stress_klog_state));
	stress_klog_shm->status = STRESS_KLOG_STATUS_OK;
	stress_klog_shm->taint_valid = 1;
	fuzz_clock = 0.0;
	g_shared = &fuzz_shared;
	fuzz_shared.klog_errors = 0;
	/* half the inputs also go through stress-ng's -K level rule */
	if (size & 1)
		g_opt_flags |= OPT_FLAGS_KLOG_CHECK;
	else
		g_opt_flags &= ~OPT_FLAGS_KLOG_CHECK;

	/* the whole input as one record and as one message */
	(void)memcpy(buf, data, size);
	buf[size] = '\0';
	fuzz_one_record(buf, size);
	(void)stress_klog_lkp_classify(buf, key, sizeof(key));
	fuzz_check_str(key, sizeof(key));

	/* the input as a record stream through the watcher logic */
	for (start = 0, i = 0; i <= size; i++) {
		if ((i < size) && (data[i] != '\n'))
			continue;
		if ((i > start) && (data[start] == ' ') && reclen && (reclen + (i - start) + 1 < sizeof(rec))) {
			rec[reclen++] = '\n';
			(void)memcpy(rec + reclen, data + start, i - start);
			reclen += i - start;
		} else {
			if (reclen) {
				fuzz_one_record(rec, reclen);
				if (stress_klog_feed(rec, reclen, fuzz_clock) == 0)
					records++;
				fuzz_clock += 0.125;
				if ((records & 7) == 7)
					stress_klog_idle(fuzz_clock, false);
			}
			reclen = i - start;
			(void)memcpy(rec, data + start, reclen);
		}
		start = i + 1;
	}
	if (reclen) {
		fuzz_one_record(rec, reclen);
		if (stress_klog_feed(rec, reclen, fuzz_clock) == 0)
			records++;
	}
	stress_klog_idle(fuzz_clock, true);

	/* invariants: one event needs at least one record, keys are strings */
	if (stress_klog_shm->events > records)
		__builtin_trap();
	/* every splat is an error; -K adds at most one per record */
	if (fuzz_shared.klog_errors < stress_klog_shm->events)
		__builtin_trap();
	if (fuzz_shared.klog_errors > (uint64_t)stress_klog_shm->events + records)
		__builtin_trap();
	if (!(g_opt_flags & OPT_FLAGS_KLOG_CHECK) &&
	    (fuzz_shared.klog_errors != stress_klog_shm->events))
		__builtin_trap();
	if (stress_klog_shm->records != records)
		__builtin_trap();
	if (stress_klog_shm->nkeys > STRESS_KLOG_KEYS_MAX)
		__builtin_trap();
	for (i = 0; i < stress_klog_shm->nkeys; i++) {
		fuzz_check_str(stress_klog_shm->keys[i].key, STRESS_KLOG_KEY_LEN);
		if (!stress_klog_shm->keys[i].key[0] || !stress_klog_shm->keys[i].count)
			__builtin_trap();
	}
	if (stress_klog_yaml(yaml, sizeof(yaml)) >= sizeof(yaml))
		__builtin_trap();

	if (size >= 4)
		(void)memcpy(&bits, data, sizeof(bits));
	stress_klog_taint_letters(bits, letters, sizeof(letters));
	fuzz_check_str(letters, sizeof(letters));
	stress_klog_taint_check(bits);
	return 0;
}
