#!/bin/bash
# it-racer-sparse: the sparse racer alone on the real kernel, 2 instances
# (checks in tests/racer-one.sh)
exec bash "$(dirname "$0")/racer-one.sh" sparse
