#!/usr/bin/env bash
# What a session's close costs the server, measured side by side in one run: 10,000 seats taken
# onto a node lease (20 take_seats of 500), then given up by release_lease (one call, what a
# session's shutdown sends: src/session/resigns.rs, step 0) or by resign_seats (20 calls of 500,
# what it sent before, and still sends without release_lease); then a follower's take of the
# 10,000 vacant seats (20 take_seats). Alternating, ROUNDS times, against a throwaway database on
# the test server (scripts/testdb.sh run starts one when MYSQLLEADER_TEST_URL is unset;
# MYSQLLEADER_TEST_KIND=mysql for MySQL 9.7). Prints the times and their ratio; asserts nothing.
#   scripts/bench-close.sh [ROUNDS]     (default 3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${MYSQLLEADER_TEST_URL:-}" ]; then exec "$here/testdb.sh" run "$0" "$@"; fi
rounds=${1:-3}
cd "$here/.."
cargo build --release --quiet --bin mysqlleader
. "$here/lib.sh"
server=${MYSQLLEADER_TEST_KIND:-mariadb}
db=ml_bench_close_$$
sql() { url_sql bench-close -N "$@"; }
tmp=$(mktemp -d)
sql -e "CREATE DATABASE $db"
trap 'sql -e "DROP DATABASE IF EXISTS $db" || true; rm -rf "$tmp"' EXIT
target/release/mysqlleader sql --server "$server" > "$tmp/install.sql"
sql "$db" < "$tmp/install.sql" > /dev/null
python3 -c "
import json
for s in range(0, 10000, 500):
    print(json.dumps(['svc-%05d' % i for i in range(s, s + 500)]))" > "$tmp/ids"
calls() { while read -r ids; do printf "$1\n" "$ids"; done < "$tmp/ids"; }
seconds() { python3 -c "import sys; print('%.3f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$@"; }
take() { # NODE: a lease for NODE, and the 10,000 seats taken onto it; prints the lease id
  local lease; lease=$(sql "$db" -e "CALL grant_lease('$1', 600000)" | cut -f1)
  calls "CALL take_seats($lease, '$1', 600000, '%s');" | sql "$db" > /dev/null
  echo "$lease"
}
for r in $(seq 1 "$rounds"); do
  lease=$(take "r$r-release")
  t0=$(date +%s.%N); sql "$db" -e "CALL release_lease($lease, 'r$r-release')" > /dev/null; t1=$(date +%s.%N)
  released=$(seconds "$t0" "$t1")
  take "r$r-resign" > /dev/null
  t0=$(date +%s.%N); calls "CALL resign_seats('r$r-resign', '%s');" | sql "$db" > /dev/null; t1=$(date +%s.%N)
  resigned=$(seconds "$t0" "$t1")
  t0=$(date +%s.%N); lease=$(take "r$r-follower"); t1=$(date +%s.%N)
  taken=$(seconds "$t0" "$t1")
  sql "$db" -e "CALL release_lease($lease, 'r$r-follower')" > /dev/null
  echo "round $r ($server): release_lease ${released} s, resign_seats ${resigned} s (ratio $(python3 -c "print('%.2f' % ($released / $resigned))")); a follower's take of the vacant seats ${taken} s"
done
