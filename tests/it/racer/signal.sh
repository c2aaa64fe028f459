#!/bin/bash
# it-racer-signal: the signal racer alone, 2 instances: unmerges interrupted
# with EINTR, retried, and verified complete (checks in tests/racer-one.sh)
exec bash "$(dirname "$0")/racer-one.sh" signal
