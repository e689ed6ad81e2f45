#!/usr/bin/env bash
# The short fault runs of docs/faults.md, for `make test`: one of separate electors (thirty
# faults, 2 services) and one of sessions (twenty faults, 6 services, each candidate's electors
# from one Session), each about a minute, one after the other (each starts a server of its own).
#
#   scripts/test-faults.sh            a random seed (printed; replay it with FAULTS_SEED=...)
#   FAULTS_SEED=42 scripts/test-faults.sh
#
# Environment: FAULTS_SEED (both runs), FAULTS_N (faults of the first run, default 30),
# FAULTS_SESSIONS_N (of the sessions run, default 20), FAULTS_LEASE (default 1500ms),
# FAULTS_OUT (run directory, default target/faults/short, or target/faults/short-mysql when
# MYSQLLEADER_TEST_KIND=mysql, so that the two servers' runs may go side by side; the sessions
# run's is the same with -sessions). The harness starts a throwaway mariadbd of its own
# (scripts/testdb.sh; server faults need it), whatever MYSQLLEADER_TEST_URL says. Exits non-zero
# when the checker finds any violation in either run; the reports and the timeline pictures
# stay in the run directories.
set -euo pipefail
cd "$(dirname "$0")/.."

# The same build as `make build` (every target: a no-op after it). A narrower one (--lib) would
# resolve other features, rebuild the library in place, and pull it from under the test parts
# running beside this one (scripts/test-all.sh).
scripts/build-tests.sh --quiet

seed=${FAULTS_SEED:-$(( ($(date +%s%N) / 1000) % 1000000000 ))}
if [ "${MYSQLLEADER_TEST_KIND:-mariadb}" = mysql ]; then
  out=${FAULTS_OUT:-target/faults/short-mysql}
else
  out=${FAULTS_OUT:-target/faults/short}
fi
passed=0
failed=0
# run NAME OUT ARGS...: one harness run, counted.
run() {
  local name=$1 dir=$2 status=0
  shift 2
  "${CARGO_TARGET_DIR:-target}/release/faults" --seed "$seed" --candidates 5 --lease "${FAULTS_LEASE:-1500ms}" \
      --out "$dir" "$@" || status=$?
  if [ "$status" -eq 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "faults: the $name run with seed $seed failed (exit $status); replay: FAULTS_SEED=$seed scripts/test-faults.sh; report: $dir/report.md" >&2
  fi
}
run electors "$out" --faults "${FAULTS_N:-30}" --services 2
run sessions "$out-sessions" --faults "${FAULTS_SESSIONS_N:-20}" --services 6 --sessions
echo "faults: $passed passed, $failed failed (seed $seed)"
[ "$failed" -eq 0 ]
