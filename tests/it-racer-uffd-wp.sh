#!/bin/bash
# it-racer-uffd-wp: the uffd-wp racer alone, 1 and 2 instances (see it-racer-vmsplice.sh)
exec "$(dirname "$0")/it-racer-vmsplice.sh" uffd-wp
