#!/bin/bash
# it-racer-thp: the thp racer alone, 2 instances
# (checks in tests/racer-one.sh)
exec bash "$(dirname "$0")/racer-one.sh" thp
