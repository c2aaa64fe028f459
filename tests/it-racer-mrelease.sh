#!/bin/bash
# it-racer-mrelease: the mrelease racer alone on the real kernel, 1 and 2 instances:
# exit 0 with --verify, "racer mrelease reached" with its evidence > 0, no leftovers.
# The checks are shared with the fork racer's script; see it-racer-fork.sh.
exec bash "$(dirname "$0")/it-racer-fork.sh" mrelease
