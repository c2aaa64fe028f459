#!/bin/bash
# tests/it/racer/prctl-exec.sh: the prctl-exec racer alone, 2 instances: a
# child sets merge-any and execs the running binary under PTRACE_TRACEME;
# at its exec stop the new mm must still be merge-any and the VMAs exec
# made mergeable (checks in tests/lib/racer-one.sh)
exec bash "$(dirname "$0")/../../lib/racer-one.sh" prctl-exec
