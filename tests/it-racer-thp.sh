#!/bin/bash
# it-racer-thp: the thp racer alone, 1 and 2 instances (see it-racer-vmsplice.sh)
exec "$(dirname "$0")/it-racer-vmsplice.sh" thp
