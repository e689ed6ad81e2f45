#!/usr/bin/env bash
# Two builds' batch procedures side by side, in one run: campaign_seats (a node takes N seats,
# created the first round, vacant after) then resign_seats (it gives them all up), in calls of
# BATCH seats each over one client connection, on database A and on database B of the same
# server, alternating, ROUNDS rounds. Each database is migrated by the build under comparison
# (e.g. `mysqlleader migrate` of the commit before a change into A, of the change into B).
# Prints each phase's seconds per round (the client's clock around the calls, so it includes
# the client's start), then the ratio B / A of each phase's total.
#
#   benches/batch_walk.sh CLIENT HOST PORT DB_A DB_B [N=10000] [BATCH=500] [ROUNDS=3]
#
# CLIENT is a mysql or mariadb client; the account mysqlleader/mysqlleader (the test servers'
# own, scripts/testdb.sh) must be able to call the procedures in both. Leaves N seats and their
# history in each database.
set -euo pipefail
client=$1 host=$2 port=$3 dba=$4 dbb=$5 n=${6:-10000} batch=${7:-500} rounds=${8:-3}
q() { "$client" -h"$host" -P"$port" -umysqlleader -pmysqlleader -N -B "$@" 2>/dev/null; }
lists=()
for ((s = 0; s < n; s += batch)); do
    l="["
    for ((i = s; i < s + batch && i < n; i++)); do l+="\"walk-$i\","; done
    lists+=("${l%,}]")
done
# phase DB PROCEDURE NODE: the seconds the calls took.
phase() {
    local db=$1 proc=$2 node=$3 script l t0 t1
    script=$(mktemp)
    for l in "${lists[@]}"; do
        if [ "$proc" = campaign_seats ]; then
            echo "CALL campaign_seats('$node', 60000, '$l');"
        else
            echo "CALL resign_seats('$node', '$l');"
        fi
    done > "$script"
    t0=$(date +%s.%N)
    q "$db" < "$script" > /dev/null
    t1=$(date +%s.%N)
    rm -f "$script"
    echo "$t1 - $t0" | bc
}
declare -A total
for ((r = 1; r <= rounds; r++)); do
    for db in "$dba" "$dbb"; do
        c=$(phase "$db" campaign_seats "walker-$r")
        x=$(phase "$db" resign_seats "walker-$r")
        echo "round $r, $db: campaign_seats ${c} s, resign_seats ${x} s"
        total[$db.c]=$(echo "${total[$db.c]:-0} + $c" | bc)
        total[$db.x]=$(echo "${total[$db.x]:-0} + $x" | bc)
    done
done
echo "campaign_seats $dbb / $dba: $(echo "scale=2; ${total[$dbb.c]} / ${total[$dba.c]}" | bc)x;" \
     "resign_seats $dbb / $dba: $(echo "scale=2; ${total[$dbb.x]} / ${total[$dba.x]}" | bc)x"
