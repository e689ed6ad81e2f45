#!/usr/bin/env bash
# The Group Replication tests: tests/group_replication.rs against a throwaway 3-member MySQL
# Group Replication group on loopback (scripts/group-replication.sh, MySQL 9.7 from the Debian
# sid root; needs root), once in single-primary mode and once in multi-primary mode, each on a
# group of its own that is stopped afterwards whatever happens.
#
#   scripts/test-group-replication.sh
#
# Builds the test binary first (so that no group idles while cargo compiles), then runs both
# modes (the second also when the first failed). Prints one summary line per mode; exits
# non-zero when either mode failed. CARGO_PROFILE_FLAG overrides --release.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${CARGO_PROFILE_FLAG:---release}
cargo test $profile --test group_replication --no-run --quiet

declare -A result
status=0
for mode in single multi; do
  t0=$SECONDS
  rc=0
  bash scripts/group-replication.sh run "$mode" \
      cargo test $profile --test group_replication -- --ignored --test-threads=1 --nocapture || rc=$?
  result[$mode]="$rc $((SECONDS - t0))"
  [ "$rc" -eq 0 ] || status=1
done
for mode in single multi; do
  read -r rc secs <<<"${result[$mode]}"
  if [ "$rc" -eq 0 ]; then
    echo "group replication ($mode-primary): passed in ${secs}s"
  else
    echo "group replication ($mode-primary): FAILED (exit $rc) after ${secs}s"
  fi
done
exit "$status"
