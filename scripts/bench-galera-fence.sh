#!/usr/bin/env bash
# What the Galera write fence of assert_leader (migration V4) costs, measured side by side in
# one run on one node of a 3-node cluster: the same fenced transactions
#   BEGIN; CALL assert_leader(...); UPDATE app SET v = v + 1 WHERE id = <session>; COMMIT;
# once with the share lock only (the session variable @mysqlleader_wsrep_on preset to 0, which
# is what a server without Galera does) and once with the write fence (the variable left to the
# probe), from 1 and from 4 concurrent sessions. Prints the ratios. Not part of `make test`.
#
#   scripts/bench-galera-fence.sh            start a throwaway cluster (scripts/galera.sh)
#   MYSQLLEADER_GALERA_DIR=DIR scripts/...   use a running one
#
# Environment: BENCH_TXNS (fenced transactions per run, default 1200), BENCH_ROUNDS (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
txns=${BENCH_TXNS:-1200}
rounds=${BENCH_ROUNDS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/mysqlleader-fencebench.XXXXXX")
own_cluster=
cleanup() {
  if [ -n "$own_cluster" ]; then bash scripts/galera.sh stop "$work/cluster" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
if [ -z "${MYSQLLEADER_GALERA_DIR:-}" ]; then
  own_cluster=1
  eval "$(bash scripts/galera.sh start "$work/cluster")"
elif [ -z "${MYSQLLEADER_GALERA_URL1:-}" ]; then
  . "$MYSQLLEADER_GALERA_DIR/env"
fi
cargo build --release --quiet --bin mysqlleader
sock="$MYSQLLEADER_GALERA_DIR/node1/mysqld.sock"
sql() { mariadb -S "$sock" -N -B "$@"; }
sql -e "DROP DATABASE IF EXISTS mysqlleader_fencebench; CREATE DATABASE mysqlleader_fencebench"
target/release/mysqlleader --url "${MYSQLLEADER_GALERA_URL1%/*}/mysqlleader_fencebench" migrate >/dev/null
sql mysqlleader_fencebench -e "CREATE TABLE app (id INT PRIMARY KEY, v BIGINT NOT NULL) ENGINE=InnoDB;
  INSERT INTO app VALUES (1, 0), (2, 0), (3, 0), (4, 0); CALL campaign('bench', 'n', 86400000)" >/dev/null

# run SESSIONS PRESET: seconds for $txns fenced transactions split over SESSIONS sessions.
run() {
  local sessions=$1 preset=$2 c
  for c in $(seq "$sessions"); do
    { echo "SET @mysqlleader_wsrep_on = $preset;"
      for _ in $(seq $((txns / sessions))); do
        echo "BEGIN; CALL assert_leader('bench', 'n', 1); UPDATE app SET v = v + 1 WHERE id = $c; COMMIT;"
      done; } > "$work/s$c.sql"
  done
  local t0=$EPOCHREALTIME
  for c in $(seq "$sessions"); do sql mysqlleader_fencebench < "$work/s$c.sql" > /dev/null & done
  wait
  echo "$EPOCHREALTIME - $t0" | bc
}

echo "fenced transactions on node 1 of 3, $txns per run; share lock only vs write fence, side by side"
for sessions in 1 4; do
  for r in $(seq "$rounds"); do
    lock=$(run "$sessions" 0)
    fence=$(run "$sessions" NULL)
    printf '%d session(s), round %d: share lock %.2f s, write fence %.2f s, ratio %.2f\n' \
      "$sessions" "$r" "$lock" "$fence" "$(echo "$fence / $lock" | bc -l)"
  done
done
sql -e "DROP DATABASE mysqlleader_fencebench"
