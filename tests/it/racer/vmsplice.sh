#!/bin/bash
# tests/it/racer/vmsplice.sh: the vmsplice racer alone, 2 instances
# (checks in tests/lib/racer-one.sh)
exec bash "$(dirname "$0")/../../lib/racer-one.sh" vmsplice
