#!/bin/bash
# tests/it/racer/thp.sh: the thp racer alone, 2 instances
# (checks in tests/lib/racer-one.sh)
exec bash "$(dirname "$0")/../../lib/racer-one.sh" thp
