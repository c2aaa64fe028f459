#!/bin/bash
# it-racer-mprotect: the mprotect racer alone on the real kernel, 1 and 2 instances:
# exit 0 with --verify, "racer mprotect reached" with its evidence > 0, no leftovers.
# The checks are shared with the fork racer's script; see it-racer-fork.sh.
exec bash "$(dirname "$0")/it-racer-fork.sh" mprotect
