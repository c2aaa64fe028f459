#!/bin/bash
# tests/it/racer/gup.sh: the gup racer alone, 2 instances
# (checks in tests/lib/racer-one.sh)
exec bash "$(dirname "$0")/../../lib/racer-one.sh" gup
