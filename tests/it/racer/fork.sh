#!/bin/bash
# it-racer-fork: the fork racer alone, 2 instances
# (checks in tests/racer-one.sh)
exec bash "$(dirname "$0")/racer-one.sh" fork
