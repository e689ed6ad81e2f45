#!/usr/bin/env bash
# The Galera tests: start a throwaway 3-node MariaDB Galera cluster on loopback
# (scripts/galera.sh, mariadbd running as user mysql), run tests/galera.rs against it, then the
# fault harness's Galera run on the same cluster (docs/faults.md), and stop it.
#
#   scripts/test-galera.sh                     a random seed for the harness run (printed)
#   GALERA_FAULTS_SEED=42 scripts/test-galera.sh
#
# Environment: GALERA_FAULTS_SEED, GALERA_FAULTS_N (faults, default 14), GALERA_FAULTS_OUT (run
# directory, default $CARGO_TARGET_DIR/faults/galera), GALERA_FAULTS_ONLY=1 (skip the cargo
# test). Exits non-zero when a test fails or the checker finds any violation; the harness's
# report and timeline picture stay in its run directory.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d "${TMPDIR:-/tmp}/mysqlleader-galera.XXXXXX")
cleanup() { bash scripts/galera.sh stop "$dir/cluster" >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
target=${CARGO_TARGET_DIR:-target}
# Build first: the cluster need not idle while cargo compiles.
# The same build as `make build` (every target: a no-op after it). A narrower one (--lib) would
# resolve other features, rebuild the library in place, and pull it from under the test parts
# running beside this one (scripts/test-all.sh).
scripts/build-tests.sh --quiet
if [ "${GALERA_FAULTS_ONLY:-0}" != 1 ]; then
  cargo test ${CARGO_PROFILE_FLAG:---release} --test galera --no-run --quiet
fi
eval "$(bash scripts/galera.sh start "$dir/cluster")"
if [ "${GALERA_FAULTS_ONLY:-0}" != 1 ]; then
  cargo test ${CARGO_PROFILE_FLAG:---release} --test galera -- --ignored --nocapture --test-threads=1
fi

# The fault harness on the same cluster: 3 candidates, candidate i attached to node i (the two
# other nodes its fallbacks), 2 services, a 3 s lease (longer than the cluster's ~2.5 s eviction),
# node faults (kill -9 and return, isolation and return) among crashes of the leading process
# and operator overrides; judged by the checker (zero overlaps, gapless terms, no stale commit,
# a leader again within lease + retry + eviction + slack).
seed=${GALERA_FAULTS_SEED:-$(( ($(date +%s%N) / 1000) % 1000000000 ))}
out=${GALERA_FAULTS_OUT:-$target/faults/galera}
status=0
"$target/release/faults" --galera "$dir/cluster" --seed "$seed" --faults "${GALERA_FAULTS_N:-14}" \
    --candidates 3 --services 2 --lease 3s --gap 6s --kinds node-kill,node-isolate,kill-leader,op-force \
    --out "$out" --title "Galera: node faults" || status=$?
if [ "$status" -eq 0 ]; then
  echo "galera faults: 1 passed, 0 failed (seed $seed)"
else
  echo "galera faults: the run with seed $seed failed (exit $status); replay: GALERA_FAULTS_SEED=$seed scripts/test-galera.sh; report: $out/report.md" >&2
  echo "galera faults: 0 passed, 1 failed (seed $seed)"
fi
exit "$status"
