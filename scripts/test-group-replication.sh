#!/usr/bin/env bash
# The Group Replication tests: tests/group_replication.rs against a throwaway 3-member MySQL
# Group Replication group on loopback (scripts/group-replication.sh, MySQL 9.7 from the Debian
# sid root; needs root), in single-primary mode (and in multi-primary mode when asked), each on a group of its own that
# is stopped afterwards whatever happens.
#
#   scripts/test-group-replication.sh                    single-primary (what `make test` runs)
#   GR_MODES="single multi" scripts/test-group-replication.sh
#
# Builds the test binary first (so that no group idles while cargo compiles), then runs each mode
# of GR_MODES (the next also when one failed). Prints one summary line per mode; exits non-zero
# when any mode failed. CARGO_PROFILE_FLAG overrides --release.
#
# Multi-primary mode is not in `make test`: its tests found two faults not mended yet (README,
# "Group Replication"), and they fail about one run in two.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${CARGO_PROFILE_FLAG:---release}
cargo test $profile --test group_replication --no-run --quiet

declare -A result
status=0
modes=${GR_MODES:-single}
for mode in $modes; do
  t0=$SECONDS
  rc=0
  bash scripts/group-replication.sh run "$mode" \
      cargo test $profile --test group_replication -- --ignored --test-threads=1 --nocapture || rc=$?
  result[$mode]="$rc $((SECONDS - t0))"
  [ "$rc" -eq 0 ] || status=1
done
for mode in $modes; do
  read -r rc secs <<<"${result[$mode]}"
  if [ "$rc" -eq 0 ]; then
    echo "group replication ($mode-primary): passed in ${secs}s"
  else
    echo "group replication ($mode-primary): FAILED (exit $rc) after ${secs}s"
  fi
done
exit "$status"
