/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * tools/user/ksm-racers.c: print the stressor's racer table, one racer a line,
 * tab separated: name, evidence counter, "built" or "not built: reason",
 * the kernel path it covers.  The table in stress-ksm-unmerge.c is the
 * only list of racers; the man page, ksm-report and the tests read it
 * through this tool.  Built from the stressor's own source (its main()
 * keeps the shim's runner out of the link).
 */
#include "../stress-ksm-unmerge.c"

/*
 *  main()
 *	the racer table as TSV
 */
int main(void)
{
	size_t i;

	for (i = 0; i < KSM_RACERS; i++) {
		const stress_ksm_unmerge_racer_t *r = &stress_ksm_unmerge_racers[i];

		(void)printf("%s\t%s\t%s%s\t%s\n", r->name, r->evidence, r->not_built ? "not built: " : "built",
			r->not_built ? r->not_built : "", r->desc);
	}
	return 0;
}
