#!/bin/bash
# tests/it/racer/dontneed.sh: the dontneed racer alone, 2 instances: merged
# pages discarded with MADV_DONTNEED before and during the unmerge, refilled
# before the cycle verifies (checks in tests/lib/racer-one.sh)
exec bash "$(dirname "$0")/../../lib/racer-one.sh" dontneed
