#!/bin/bash
# it-racer-mremap: the mremap racer alone, 2 instances: merged ranges moved
# out and back while merged and unmerging (checks in tests/racer-one.sh)
exec bash "$(dirname "$0")/racer-one.sh" mremap
