#!/usr/bin/env bash
# The short fault run (about a minute, thirty faults) of docs/faults.md, for `make test`.
#
#   scripts/test-faults.sh            a random seed (printed; replay it with FAULTS_SEED=...)
#   FAULTS_SEED=42 scripts/test-faults.sh
#
# Environment: FAULTS_SEED, FAULTS_N (faults, default 30), FAULTS_LEASE (default 1500ms),
# FAULTS_OUT (run directory, default target/faults/short). The harness starts a throwaway
# mariadbd of its own (scripts/testdb.sh; server faults need it), whatever MYSQLLEADER_TEST_URL
# says. Exits non-zero when the checker finds any violation; the report and the timeline
# picture stay in the run directory.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release -p mysqlleader-harness --quiet

seed=${FAULTS_SEED:-$(( ($(date +%s%N) / 1000) % 1000000000 ))}
out=${FAULTS_OUT:-target/faults/short}
status=0
"${CARGO_TARGET_DIR:-target}/release/faults" --seed "$seed" --faults "${FAULTS_N:-30}" --candidates 5 --services 2 \
    --lease "${FAULTS_LEASE:-1500ms}" --out "$out" || status=$?
if [ "$status" -eq 0 ]; then
  echo "faults: 1 passed, 0 failed (seed $seed)"
else
  echo "faults: the run with seed $seed failed (exit $status); replay: FAULTS_SEED=$seed scripts/test-faults.sh; report: $out/report.md" >&2
  echo "faults: 0 passed, 1 failed (seed $seed)"
fi
exit "$status"
