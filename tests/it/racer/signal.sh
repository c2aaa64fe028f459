#!/bin/bash
# tests/it/racer/signal.sh: the signal racer alone, 2 instances: unmerges interrupted
# with EINTR, retried, and verified complete (checks in tests/lib/racer-one.sh)
exec bash "$(dirname "$0")/../../lib/racer-one.sh" signal
