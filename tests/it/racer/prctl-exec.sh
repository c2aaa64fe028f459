#!/bin/bash
# it-racer-prctl-exec: the prctl-exec racer alone, 2 instances: children
# exec the binary as a helper that keeps merge-any and merges its own
# memory (checks in tests/racer-one.sh)
exec bash "$(dirname "$0")/racer-one.sh" prctl-exec
