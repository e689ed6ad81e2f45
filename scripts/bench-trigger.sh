#!/usr/bin/env bash
# What the V13 trigger (sql/triggers/leader_election_record_term.sql) costs the hot paths, measured
# side by side in one run: the same calls with the trigger in place and dropped, in alternating
# rounds, against a throwaway database on the test server (scripts/testdb.sh run starts one when
# MYSQLLEADER_TEST_URL is unset). Prints the times and their ratio; asserts nothing.
#   scripts/bench-trigger.sh [ROUNDS]     (default 8; each round: 20 renew_seats of 1,000 seats
#                                          and 500 renews by campaign, with and without)
# The trigger writes nothing on a renew; this shows what its mere firing costs per row.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${MYSQLLEADER_TEST_URL:-}" ]; then exec "$here/testdb.sh" run "$0" "$@"; fi
rounds=${1:-8}
cd "$here/.."
cargo build --release --quiet --bin mysqlleader
. "$here/lib.sh"
db=ml_bench_trigger_$$
sql() { url_sql bench-trigger "$@"; }
tmp=$(mktemp -d)
sql -e "CREATE DATABASE $db"
trap 'sql -e "DROP DATABASE IF EXISTS $db" || true; rm -rf "$tmp"' EXIT
target/release/mysqlleader sql > "$tmp/install.sql"
sql "$db" < "$tmp/install.sql" > /dev/null
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
ids = [f"s{i:04d}" for i in range(1000)]
open(f"{d}/setup.sql", "w").write("".join(f"CALL campaign('{s}', 'n', 600000);\n" for s in ids))
open(f"{d}/renew_seats.sql", "w").write(f"CALL renew_seats('n', 600000, '{json.dumps(ids)}');\n" * 20)
open(f"{d}/campaign.sql", "w").write("CALL campaign('s0001', 'n', 600000);\n" * 500)
PY
sql "$db" < "$tmp/setup.sql" > /dev/null
# The trigger's CREATE statement, to put it back after each round without it.
{ echo 'DELIMITER $$'; target/release/mysqlleader sql | sed -n '/^CREATE OR REPLACE TRIGGER/,/^END\$\$/p'; } > "$tmp/trigger.sql"
ms() { local s; s=$(date +%s%N); sql "$db" < "$1" > /dev/null; echo $(( ($(date +%s%N) - s) / 1000000 )); }
with_r=0; with_c=0; without_r=0; without_c=0
for _ in $(seq 1 "$rounds"); do
  with_r=$(( with_r + $(ms "$tmp/renew_seats.sql") )); with_c=$(( with_c + $(ms "$tmp/campaign.sql") ))
  sql "$db" -e "DROP TRIGGER leader_election_record_term"
  without_r=$(( without_r + $(ms "$tmp/renew_seats.sql") )); without_c=$(( without_c + $(ms "$tmp/campaign.sql") ))
  sql "$db" < "$tmp/trigger.sql"
done
ratio() { python3 -c "print(f'{$1 / $2:.3f}')"; }
echo "renew_seats, 1,000 seats, $(( rounds * 20 )) calls: with the trigger ${with_r} ms, without ${without_r} ms, ratio $(ratio $with_r $without_r)"
echo "campaign renews, $(( rounds * 500 )) calls:        with the trigger ${with_c} ms, without ${without_c} ms, ratio $(ratio $with_c $without_c)"
