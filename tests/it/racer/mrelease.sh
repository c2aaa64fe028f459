#!/bin/bash
# it-racer-mrelease: the mrelease racer alone on the real kernel, 2 instances
# (checks in tests/racer-one.sh)
exec bash "$(dirname "$0")/racer-one.sh" mrelease
