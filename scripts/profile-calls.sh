#!/usr/bin/env bash
# Where the server's CPU goes in one call: a leader's renew and a follower's check (`CALL
# campaign`), against the recipe's upsert and a primary-key read, each profiled with `perf` on
# the server process while `mariadb-slap` sends the same statement on one connection
# (docs/benchmarks.md, "Where the time goes").
#
#   scripts/profile-calls.sh [CALLS]        # CALLS per statement, default 20000
#
# For each statement it prints the server's CPU per call (utime + stime of the server process,
# /proc/PID/stat, over the whole run) and how that splits over the server's own functions
# (perf's inclusive share of each, times the CPU per call), in microseconds. Needs `perf`
# (Debian: linux-perf; installed with apt when missing and run as root) and a server it can
# profile: a throwaway mariadbd from scripts/testdb.sh, started here unless
# MYSQLLEADER_TEST_SERVER_DIR names one (with its mysqld.pid and admin socket).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
calls=${1:-20000}

. "$here/lib.sh"   # apt_install
if ! command -v perf >/dev/null; then
  apt_install profile-calls linux-perf || exit 2
fi

if [ -z "${MYSQLLEADER_TEST_SERVER_DIR:-}" ]; then
  cargo build --release --quiet --bin mysqlleader --manifest-path "$root/Cargo.toml"
  exec "$here/testdb.sh" run "$0" "$@"
fi

dir=$MYSQLLEADER_TEST_SERVER_DIR
pid=$(cat "$dir/mysqld.pid")
sock=${MYSQLLEADER_TEST_ADMIN_SOCKET:-$dir/mysqld.sock}
admin=(mariadb -S "$sock" -uroot)
work=$(mktemp -d)
trap 'rm -rf "$work"; "${admin[@]}" -e "DROP DATABASE IF EXISTS mysqlleader_profile" 2>/dev/null || true' EXIT

# The schema as the library installs it, the recipe's table, and the two seats: `prof` led by
# this very session's node (renews), `follow` led by another node for a day (checks).
"${admin[@]}" -e "DROP DATABASE IF EXISTS mysqlleader_profile; CREATE DATABASE mysqlleader_profile"
url="${MYSQLLEADER_TEST_URL%/*}/mysqlleader_profile"
"$root/target/release/mysqlleader" --url "$url" migrate >/dev/null
"${admin[@]}" mysqlleader_profile -e "
  CREATE TABLE recipe_election (service_id VARCHAR(128) NOT NULL, leader_id VARCHAR(128) NOT NULL,
    last_seen_active TIMESTAMP(6) NOT NULL, PRIMARY KEY (service_id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
  CALL campaign('follow', 'leader', 86400000);" >/dev/null

# name|statement: each runs CALLS times on one connection (the renew's first call takes the seat,
# every later one renews it through the session's seat hint, as a leader's connection does).
statements=(
  "renew|CALL campaign('prof', 'leader', 60000)"
  "recipe upsert|INSERT INTO recipe_election (service_id, leader_id, last_seen_active) VALUES ('r', 'leader', NOW(6)) ON DUPLICATE KEY UPDATE leader_id = IF(last_seen_active < NOW(6) - INTERVAL 10000000 MICROSECOND, 'leader', leader_id), last_seen_active = IF(leader_id = 'leader', NOW(6), last_seen_active)"
  "follower check|CALL campaign('follow', 'f1', 60000)"
  "primary-key read|SELECT leader_id, term, lease_expires_at FROM leader_election WHERE service_id = 'follow'"
)
# The server functions reported (inclusive: with everything they call), in the order shown.
functions=(dispatch_command parse_sql sp_head::execute sp_instr_stmt::execute sp_rcontext::create
  sql_set_variables mysql_update mysql_insert handle_select JOIN::optimize Item_subselect::exec
  ha_commit_trans fdatasync open_and_lock_tables close_thread_tables Protocol::send_result_set_metadata net_flush)

ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
declare -A per_call share
for entry in "${statements[@]}"; do
  name=${entry%%|*}; sql=${entry#*|}
  slap=(mariadb-slap -S "$sock" -uroot --create-schema=mysqlleader_profile --concurrency=1
        --number-of-queries="$calls" --query="$sql")
  # First the CPU per call, without perf (whose sampling costs the server CPU too), then the
  # same run under perf for the shares.
  a=$(cpu)
  "${slap[@]}" >/dev/null
  b=$(cpu)
  perf record -q -F 4000 -e cpu-clock -g -p "$pid" -o "$work/perf.data" -- "${slap[@]}" >/dev/null 2>"$work/perf.err"
  per_call[$name]=$(awk -v d=$((b - a)) -v t="$ticks" -v n="$calls" 'BEGIN { printf "%.1f", d / t / n * 1e6 }')
  perf report -i "$work/perf.data" --children --sort sym --stdio -g none 2>/dev/null \
    | awk '$1 ~ /%$/ { sym = $NF; sub(/%/, "", $1); print sym, $1 }' > "$work/$name.shares"
  for f in "${functions[@]}"; do
    s=$(awk -v f="$f" '$1 == f { print $2; exit }' "$work/$name.shares")
    share[$name,$f]=${s:-0}
  done
  echo "profile-calls: $name: ${per_call[$name]} µs of server CPU per call" >&2
done

printf '\n| server function (inclusive) |'
for entry in "${statements[@]}"; do printf ' %s |' "${entry%%|*}"; done
printf '\n|---|'
for entry in "${statements[@]}"; do printf -- '---|'; done
printf '\n| **server CPU per call, µs** |'
for entry in "${statements[@]}"; do printf ' **%s** |' "${per_call[${entry%%|*}]}"; done
printf '\n'
for f in "${functions[@]}"; do
  printf '| `%s` |' "$f"
  for entry in "${statements[@]}"; do
    name=${entry%%|*}
    awk -v s="${share[$name,$f]}" -v c="${per_call[$name]}" 'BEGIN { v = s * c / 100; if (v < 0.05) printf " – |"; else printf " %.1f |", v }'
  done
  printf '\n'
done
echo
echo "$calls calls per statement on one connection (mariadb-slap, text protocol); server CPU from /proc/$pid/stat over a run without perf;"
echo "each function's inclusive share of the server's perf samples (cpu-clock, call graphs) in a second run, times that CPU. $(mariadbd --version 2>/dev/null | head -1)"
