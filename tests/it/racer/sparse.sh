#!/bin/bash
# tests/it/racer/sparse.sh: the sparse racer alone on the real kernel, 2 instances
# (checks in tests/lib/racer-one.sh)
exec bash "$(dirname "$0")/../../lib/racer-one.sh" sparse
