#!/bin/bash
# tests/it/racer/fork-zero.sh: the fork-zero racer alone, 2 instances: a
# child forked while the worker unmerges KSM zero pages, and with KSM zero
# pages in MADV_DONTFORK/WIPEONFORK ranges, must be charged only the KSM
# zero pages it maps.  On a kernel with the bug "KSM zero pages charged at
# fork" (6.12, 6.18) the run fails with that named line and the racer's
# overcharge counters say which way; elsewhere it passes with none
# (checks in tests/lib/racer-one.sh)
exec bash "$(dirname "$0")/../../lib/racer-one.sh" fork-zero
