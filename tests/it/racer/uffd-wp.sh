#!/bin/bash
# it-racer-uffd-wp: the uffd-wp racer alone, 2 instances
# (checks in tests/racer-one.sh)
exec bash "$(dirname "$0")/racer-one.sh" uffd-wp
