#!/bin/bash
# tests/it/racer/mrelease.sh: the mrelease racer alone on the real kernel, 2 instances
# (checks in tests/lib/racer-one.sh)
exec bash "$(dirname "$0")/../../lib/racer-one.sh" mrelease
