#!/bin/bash
# it-racer-uffd-minor: the uffd-minor racer alone, 2 instances: unmerge of a
# mergeable, minor-registered VMA keeps its flags (checks in tests/racer-one.sh)
exec bash "$(dirname "$0")/racer-one.sh" uffd-minor
