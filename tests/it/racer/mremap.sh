#!/bin/bash
# tests/it/racer/mremap.sh: the mremap racer alone, 2 instances: merged ranges moved
# out and back while merged and unmerging (checks in tests/lib/racer-one.sh)
exec bash "$(dirname "$0")/../../lib/racer-one.sh" mremap
