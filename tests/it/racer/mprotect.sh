#!/bin/bash
# it-racer-mprotect: the mprotect racer alone on the real kernel, 2 instances
# (checks in tests/racer-one.sh)
exec bash "$(dirname "$0")/racer-one.sh" mprotect
