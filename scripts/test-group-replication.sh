#!/usr/bin/env bash
# The Group Replication tests: tests/group_replication.rs against a throwaway 3-member MySQL
# Group Replication group on loopback (scripts/group-replication.sh, MySQL 9.7 from the Debian
# sid root; needs root), in single-primary mode and in multi-primary mode, each on a group of
# its own that is stopped afterwards whatever happens; on the single-primary group, after the
# tests, the fault harness's group run (docs/faults.md), as scripts/test-galera.sh runs it on
# Galera.
#
#   scripts/test-group-replication.sh                    both modes (what `make test` runs)
#   GR_MODES=single scripts/test-group-replication.sh    one mode
#   GR_FAULTS_SEED=42 scripts/test-group-replication.sh  the harness run's seed (else random, printed)
#
# Builds the test binary and the harness first (so that no group idles while cargo compiles),
# then runs each mode of GR_MODES (the next also when one failed). Prints one summary line per
# mode; exits non-zero when any mode failed. CARGO_PROFILE_FLAG overrides --release.
# Environment: GR_FAULTS_N (faults, default 8), GR_FAULTS_OUT (run directory, default
# $CARGO_TARGET_DIR/faults/group-replication).
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${CARGO_PROFILE_FLAG:---release}
cargo test $profile --test group_replication --no-run --quiet
# The same build as `make build` (a no-op after it): the harness and its candidate.
scripts/build-tests.sh --quiet
target=${CARGO_TARGET_DIR:-target}
seed=${GR_FAULTS_SEED:-$(( ($(date +%s%N) / 1000) % 1000000000 ))}
export GR_FAULTS_SEED=$seed GR_FAULTS_N=${GR_FAULTS_N:-8} GR_FAULTS_OUT=${GR_FAULTS_OUT:-$target/faults/group-replication} GR_TARGET=$target

declare -A result
status=0
modes=${GR_MODES:-single multi}
# The fault harness on the single-primary group: 3 candidates, candidate i attached to member i
# (the two others its fallbacks), 2 services, a 6 s lease (a killed member stays down 1.5 to 2.5
# leases, long enough for the group to expel it before it comes back), a member's kill -9 and
# return among crashes of the leading process and operator overrides; judged by the checker
# (zero overlaps, gapless terms, no stale fenced commit, a leader again within lease + retry +
# the group's failover time + slack).
faults='"$GR_TARGET/release/faults" --group "$MYSQLLEADER_GR_DIR" --seed "$GR_FAULTS_SEED" --faults "$GR_FAULTS_N" \
    --candidates 3 --services 2 --lease 6s --gap 8s --kinds node-kill,kill-leader,op-force \
    --out "$GR_FAULTS_OUT" --title "Group Replication: member faults" \
  && echo "group replication faults: 1 passed, 0 failed (seed $GR_FAULTS_SEED)" \
  || { echo "group replication faults: the run with seed $GR_FAULTS_SEED failed; replay: GR_FAULTS_SEED=$GR_FAULTS_SEED GR_MODES=single scripts/test-group-replication.sh; report: $GR_FAULTS_OUT/report.md" >&2; exit 1; }'
for mode in $modes; do
  t0=$SECONDS
  rc=0
  then_faults=true
  [ "$mode" = single ] && then_faults=$faults
  bash scripts/group-replication.sh run "$mode" bash -c \
      "cargo test $profile --test group_replication -- --ignored --test-threads=1 --nocapture && $then_faults" || rc=$?
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
