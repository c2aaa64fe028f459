#!/bin/bash
# tests/it/racer/mprotect.sh: the mprotect racer alone on the real kernel, 2 instances
# (checks in tests/lib/racer-one.sh)
exec bash "$(dirname "$0")/../../lib/racer-one.sh" mprotect
