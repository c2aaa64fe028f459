#!/bin/bash
# tests/it/racer/uffd-minor.sh: the uffd-minor racer alone, 2 instances: unmerge of a
# mergeable, minor-registered VMA keeps its flags (checks in tests/lib/racer-one.sh)
exec bash "$(dirname "$0")/../../lib/racer-one.sh" uffd-minor
