#!/usr/bin/env bash
# How long the installer's steps take at 10 and at 10,000 seats, on MariaDB and on MySQL
# (docs/upgrades.md, "Durations"): prints one Markdown table row per server kind and size.
#
#   scripts/upgrade-timings.sh [mariadb|mysql]...     (default: both, each on a throwaway server)
#
# For each size N, in a database of its own:
#   1. `mysqlleader migrate` on the empty database (a first install);
#   2. N seats, led by one node (campaign_seats, 500 a call);
#   3. `migrate` again (nothing to apply: a re-run);
#   4. `migrate --verify`;
#   5. `migrate` after every routine's record was made stale (every routine, the trigger and the
#      view created again: the upper bound of an upgrade's routine step).
# Needs the release build (target/release/mysqlleader). Times are wall-clock seconds, one run
# each: they are a guide for planning, not a benchmark.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tool=${MYSQLLEADER_BIN:-$root/target/release/mysqlleader}
[ -x "$tool" ] || { echo "upgrade-timings: build first (cargo build --release)" >&2; exit 2; }

if [ -z "${MYSQLLEADER_TEST_URL:-}" ]; then
  kinds=("$@")
  [ ${#kinds[@]} -gt 0 ] || kinds=(mariadb mysql)
  echo "| server | seats | first install | re-run (nothing to apply) | --verify | every routine again |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: |"
  for kind in "${kinds[@]}"; do
    MYSQLLEADER_TEST_KIND=$kind MYSQLLEADER_TEST_URL= scripts/testdb.sh run "$0"
  done
  exit 0
fi

# One server (MYSQLLEADER_TEST_URL): rows only.
url=$MYSQLLEADER_TEST_URL
base=${url%/*}
kind=${MYSQLLEADER_TEST_KIND:-mariadb}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f s", b - a }'; }
sql() { # sql DB STATEMENT: through the tool's own server account, with the client of the kind
  local db=$1 stmt=$2 hostport=${base#*@} userpass=${base#mysql://}
  userpass=${userpass%@*}
  local client=(mariadb)
  [ "$kind" = mysql ] && client=("$MYSQLLEADER_TEST_SQL_CLIENT")
  "${client[@]}" --protocol=tcp -h "${hostport%:*}" -P "${hostport#*:}" -u "${userpass%%:*}" -p"${userpass#*:}" \
    ${db:+"$db"} -N -e "$stmt" 2>/dev/null
}
for n in 10 10000; do
  db=mysqlleader_upgrade_$n
  sql "" "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
  t0=$(now); "$tool" --url "$base/$db" migrate >/dev/null; t1=$(now)
  i=0
  while [ "$i" -lt "$n" ]; do
    ids=$(seq "$i" $((i + 499 < n - 1 ? i + 499 : n - 1)) | sed 's/.*/"s&"/' | paste -sd,)
    sql "$db" "CALL campaign_seats('node-a', 600000, '[$ids]')" >/dev/null
    i=$((i + 500))
  done
  seats=$(sql "$db" "SELECT COUNT(*) FROM leader_election")
  t2=$(now); "$tool" --url "$base/$db" migrate >/dev/null; t3=$(now)
  "$tool" --url "$base/$db" migrate --verify >/dev/null; t4=$(now)
  sql "$db" "UPDATE mysqlleader_routines SET checksum = 'stale'"
  t5=$(now); "$tool" --url "$base/$db" migrate >/dev/null; t6=$(now)
  echo "| $kind | $seats | $(secs "$t0" "$t1") | $(secs "$t2" "$t3") | $(secs "$t3" "$t4") | $(secs "$t5" "$t6") |"
  sql "" "DROP DATABASE $db"
done
