#!/bin/bash
# tests/it/racer/uffd-wp.sh: the uffd-wp racer alone, 2 instances
# (checks in tests/lib/racer-one.sh)
exec bash "$(dirname "$0")/../../lib/racer-one.sh" uffd-wp
