#!/bin/bash
# tests/it/racer/prctl-exec.sh: the prctl-exec racer alone, 2 instances: children
# exec the binary as a helper that keeps merge-any and merges its own
# memory (checks in tests/lib/racer-one.sh)
exec bash "$(dirname "$0")/../../lib/racer-one.sh" prctl-exec
