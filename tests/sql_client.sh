#!/usr/bin/env bash
# The core scenario of the contract, driven through the `mariadb` (or `mysql`) command-line client
# only: proof that any SQL client can use the procedures. It installs the script that
# `mysqlleader sql` prints into a database
# of its own, then checks every call's output with plain text matching.
#
#   MYSQLLEADER_TEST_URL=mysql://user:pass@host:port/db tests/sql_client.sh
#
# MYSQLLEADER_SQL_SCRIPT=FILE uses an installation script printed beforehand instead.
#
# The URL's account must be allowed to create and drop databases. Prints one line per failed
# check and 'N passed, N failed' at the end; exits 1 when any check failed, 2 when it cannot run.
set -uo pipefail

die() { echo "sql_client: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
url=${MYSQLLEADER_TEST_URL:-}
[ -n "$url" ] || die "MYSQLLEADER_TEST_URL is not set (make test sets it; or scripts/testdb.sh run tests/sql_client.sh)"

# ---- Connection: host, port, user and password from the URL, in an option file of our own ----
re='^mysql://([^:@/]*)(:([^@]*))?@([^:/?]+)(:([0-9]+))?'
[[ $url =~ $re ]] || die "cannot read MYSQLLEADER_TEST_URL (want mysql://user:pass@host:port/db)"
urldecode() { local s=${1//+/ }; printf '%b' "${s//%/\\x}"; }
user=$(urldecode "${BASH_REMATCH[1]}")
password=$(urldecode "${BASH_REMATCH[3]}")
host=${BASH_REMATCH[4]}
port=${BASH_REMATCH[6]:-3306}
# MYSQLLEADER_TEST_SQL_CLIENT names the client to drive (scripts/testdb.sh sets it to MySQL's own
# `mysql` for a MySQL server); otherwise the mariadb client.
client=${MYSQLLEADER_TEST_SQL_CLIENT:-$(command -v mariadb || command -v mysql)} \
  || die "no mariadb or mysql client: apt-get install mariadb-client"
# The installation script for the kind of server the URL names (MYSQLLEADER_TEST_KIND).
server_kind=${MYSQLLEADER_TEST_KIND:-mariadb}

work=$(mktemp -d "${TMPDIR:-/tmp}/mysqlleader-client.XXXXXX")
db="ml_client_$$"
cat >"$work/client.cnf" <<EOF
[client]
host=$host
port=$port
user=$user
password=$password
protocol=TCP
default-character-set=utf8mb4
EOF
cleanup() {
  "$client" --defaults-file="$work/client.cnf" -e "DROP DATABASE IF EXISTS \`$db\`" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

# sql STATEMENTS: the output rows, tab-separated, no column names; on an error, the client's
# 'ERROR nnnn (SQLSTATE) at line n: message' line alone (it also echoes the failed statement).
sql() {
  local out
  if out=$("$client" --defaults-file="$work/client.cnf" --batch --skip-column-names "$db" -e "$1" 2>&1); then
    printf '%s\n' "$out"
  else
    printf '%s\n' "$out" | grep '^ERROR' || printf '%s\n' "$out"
  fi
}
# sql_header STATEMENTS: the column names line first.
sql_header() { "$client" --defaults-file="$work/client.cnf" --batch "$db" -e "$1" 2>&1; }

passed=0
failed=0
t=$'\t'
# expect NAME EXPECTED ACTUAL: exact match.
expect() {
  if [ "$3" == "$2" ]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); printf 'FAIL %s\n  expected: %q\n  got:      %q\n' "$1" "$2" "$3"; fi
}
# expect_re NAME REGEX ACTUAL: extended regular expression match.
expect_re() {
  if [[ $3 =~ $2 ]]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); printf 'FAIL %s\n  expected /%s/\n  got:      %q\n' "$1" "$2" "$3"; fi
}
# rejects NAME STATEMENT PARAMETER: SQLSTATE 45000, 'mysqlleader: PARAMETER ...'.
rejects() { expect_re "$1" "^ERROR 31000 \(45000\) at line 1: mysqlleader: $3 " "$(sql "$2")"; }

# ---- 1. Install with the client, twice ----
# MYSQLLEADER_SQL_SCRIPT may name a script printed beforehand (saves a release build).
if [ -n "${MYSQLLEADER_SQL_SCRIPT:-}" ]; then
  cp "$MYSQLLEADER_SQL_SCRIPT" "$work/install.sql" || die "cannot read $MYSQLLEADER_SQL_SCRIPT"
else
  # The same build as `make test`'s (scripts/build-tests.sh: a no-op after it; a narrower one
  # would rebuild the library in place under the test parts running beside this one).
  "$here/scripts/build-tests.sh" --quiet || die "cargo build failed"
  "${CARGO_TARGET_DIR:-$here/target}/release/mysqlleader" sql --server "$server_kind" >"$work/install.sql" \
    || die "mysqlleader sql failed"
fi
"$client" --defaults-file="$work/client.cnf" -e "CREATE DATABASE \`$db\`" || die "cannot create database $db"
for round in first second; do
  out=$("$client" --defaults-file="$work/client.cnf" "$db" <"$work/install.sql" 2>&1)
  # Nothing but its last line, which says what is installed, read back from the database.
  expect_re "install script applied a $round time" \
    "^0:mysqlleader"$'\n'"mysqlleader [0-9.]+: installed; schema version [0-9]+; routines recorded [0-9]+ of [0-9]+; the history trigger in place$" \
    "$?:$out"
done
# Every migration file of sql/ (V1__..., V2__...), in version order: the script records each one.
migrations=$(cd "$here/sql" && ls V*__*.sql | sed -E 's/^V([0-9]+)__.*/\1/' | sort -n | tr '\n' ' ')
expect "the script records its migrations" "${migrations% }" "$(sql "SELECT GROUP_CONCAT(version ORDER BY version SEPARATOR ' ') FROM mysqlleader_schema_history")"

# ---- 2. Result columns of every call ----
header() { sql_header "$1" | head -n 1; }
expect "campaign columns" "is_leader${t}leader_id${t}term${t}lease_remaining_ms" "$(header "CALL campaign('cols', 'a', 60000)")"
expect "am_i_leader columns" "is_leader${t}term${t}lease_remaining_ms" "$(header "CALL am_i_leader('cols', 'a')")"
expect "current_leader columns" "leader_id${t}term${t}lease_remaining_ms" "$(header "CALL current_leader('cols')")"
expect "assert_leader columns" "is_leader${t}term${t}lease_remaining_ms" \
  "$(header "START TRANSACTION; CALL assert_leader('cols', 'a', 1); COMMIT")"
expect "force_leader columns" "is_leader${t}leader_id${t}term${t}lease_remaining_ms" "$(header "CALL force_leader('cols', 'b', 60000)")"
expect "resign columns" "resigned${t}term" "$(header "CALL resign('cols', 'b')")"
expect "reelect columns" "previous_leader_id${t}term" "$(header "CALL reelect('cols')")"
expect "set_expiry_event columns" "event_enabled" "$(header "CALL set_expiry_event(0)")"

# ---- 3. Campaign, renew, follower, reads ----
expect "nobody led yet" "NULL${t}0${t}0" "$(sql "CALL current_leader('svc')")"
expect "a takes the seat at term 1" "1${t}a${t}1${t}60000" "$(sql "CALL campaign('svc', 'a', 60000)")"
expect "a renews, same term, new lease" "1${t}a${t}1${t}30000" "$(sql "CALL campaign('svc', 'a', 30000)")"
before=$(sql "SELECT HEX(leader_id), term, renewed_at, lease_expires_at FROM leader_election WHERE service_id = 'svc'")
expect_re "b is a follower" "^0${t}a${t}1${t}[1-9][0-9]*$" "$(sql "CALL campaign('svc', 'b', 60000)")"
expect "a follower's campaign writes nothing" "$before" \
  "$(sql "SELECT HEX(leader_id), term, renewed_at, lease_expires_at FROM leader_election WHERE service_id = 'svc'")"
expect_re "am_i_leader a" "^1${t}1${t}[1-9][0-9]*$" "$(sql "CALL am_i_leader('svc', 'a')")"
expect_re "am_i_leader b" "^0${t}1${t}[1-9][0-9]*$" "$(sql "CALL am_i_leader('svc', 'b')")"
expect_re "current_leader" "^a${t}1${t}[1-9][0-9]*$" "$(sql "CALL current_leader('svc')")"
expect_re "ids compare byte for byte ('a ' is not 'a')" "^0${t}a${t}1${t}" "$(sql "CALL campaign('svc', 'a ', 60000)")"
expect_re "ids compare byte for byte ('A' is not 'a')" "^0${t}1${t}" "$(sql "CALL am_i_leader('svc', 'A')")"

# ---- 4. Fencing with assert_leader ----
expect_re "assert_leader at the right term" "^1${t}1${t}[1-9][0-9]*$" \
  "$(sql "START TRANSACTION; CALL assert_leader('svc', 'a', 1); COMMIT")"
expect_re "assert_leader at a wrong term" "^ERROR 31001 \(45001\) at line 1: mysqlleader: not the leader" \
  "$(sql "START TRANSACTION; CALL assert_leader('svc', 'a', 2)")"
expect_re "assert_leader of another node" "^ERROR 31001 \(45001\) at line 1: mysqlleader: not the leader" \
  "$(sql "START TRANSACTION; CALL assert_leader('svc', 'b', 1)")"
expect_re "assert_leader outside a transaction fences nothing, and says so" \
  "^ERROR 31003 \(45000\) at line 1: mysqlleader: assert_leader needs an open transaction" \
  "$(sql "CALL assert_leader('svc', 'a', 1)")"
sql "CREATE TABLE ledger (id INT PRIMARY KEY)" >/dev/null
# A careless script (--force goes on after errors) that writes, fails assert_leader, and commits.
"$client" --defaults-file="$work/client.cnf" --batch --force "$db" >/dev/null 2>&1 <<'EOF'
START TRANSACTION;
INSERT INTO ledger VALUES (1);
CALL assert_leader('svc', 'b', 1);
COMMIT;
EOF
expect "a write fenced with a stale term is not committed" "0" "$(sql "SELECT COUNT(*) FROM ledger")"

# ---- 5. Resign, reelect, force ----
expect "b cannot resign a's lease" "0${t}1" "$(sql "CALL resign('svc', 'b')")"
expect "a resigns" "1${t}1" "$(sql "CALL resign('svc', 'a')")"
expect "nobody leads after resign" "NULL${t}1${t}0" "$(sql "CALL current_leader('svc')")"
expect "b takes the vacant seat at term 2" "1${t}b${t}2${t}60000" "$(sql "CALL campaign('svc', 'b', 60000)")"
expect "reelect ends b's lease" "b${t}2" "$(sql "CALL reelect('svc')")"
expect "reelect with nobody leading" "NULL${t}2" "$(sql "CALL reelect('svc')")"
expect "the next campaign after reelect wins" "1${t}c${t}3${t}60000" "$(sql "CALL campaign('svc', 'c', 60000)")"
expect "force_leader installs d at term 4" "1${t}d${t}4${t}60000" "$(sql "CALL force_leader('svc', 'd', 60000)")"
expect_re "c no longer leads" "^0${t}4${t}[1-9][0-9]*$" "$(sql "CALL am_i_leader('svc', 'c')")"
expect "the history of svc" \
  "1 a elected resigned
2 b elected reelected
3 c elected forced_out
4 d forced -" \
  "$(sql "SELECT CONCAT_WS(' ', term, leader_id, began_how, COALESCE(ended_how, '-')) FROM leader_election_terms WHERE service_id = 'svc' ORDER BY term")"
expect "every ended term has ended_at" "3" \
  "$(sql "SELECT COUNT(ended_at) FROM leader_election_history WHERE service_id = 'svc'")"

# ---- 6. Expiry ----
expect "e takes a 200 ms lease" "1${t}e${t}1${t}200" "$(sql "CALL campaign('lapse', 'e', 200)")"
sleep 0.7
expect "the lease has run out" "NULL${t}1${t}0" "$(sql "CALL current_leader('lapse')")"
expect "f takes the expired seat at term 2" "1${t}f${t}2${t}60000" "$(sql "CALL campaign('lapse', 'f', 60000)")"
expect "the expired term ended at its lease's end" "expired 1" \
  "$(sql "SELECT CONCAT_WS(' ', ended_how, ended_at = began_at + INTERVAL 200000 MICROSECOND) FROM leader_election_history WHERE service_id = 'lapse' AND term = 1")"
expect "set_expiry_event(1)" "1" "$(sql "CALL set_expiry_event(1)")"
expect "set_expiry_event(0)" "0" "$(sql "CALL set_expiry_event(0)")"

# ---- 7. Unusual ids ----
expect "quotes and non-ASCII ids come back exactly" "1${t}nœud 🚀 'q' \"d\"${t}1${t}60000" \
  "$(sql "CALL campaign('sérvice ''x''', 'nœud 🚀 ''q'' \"d\"', 60000)")"
expect "128 characters are accepted" "1${t}1" \
  "$(sql "CALL campaign(REPEAT('é', 128), 'a', 60000)" | cut -f 1,3)"

# ---- 8. Bad input: SQLSTATE 45000 naming the parameter, and nothing changed ----
state() { sql "SELECT HEX(service_id), HEX(leader_id), term, lease_expires_at FROM leader_election ORDER BY 1; SELECT HEX(service_id), term, ended_at FROM leader_election_history ORDER BY 1, 2"; }
before=$(state)
rejects "empty service_id" "CALL campaign('', 'a', 1000)" service_id
rejects "NULL node_id" "CALL campaign('svc', NULL, 1000)" node_id
rejects "lease 0" "CALL campaign('svc', 'a', 0)" lease_ms
rejects "lease 86400001" "CALL campaign('svc', 'a', 86400001)" lease_ms
rejects "lease 1.5" "CALL campaign('svc', 'a', 1.5)" lease_ms
rejects "lease -1" "CALL force_leader('svc', 'a', -1)" lease_ms
rejects "129-character node_id" "CALL force_leader('svc', REPEAT('x', 129), 1000)" node_id
rejects "NULL service_id" "CALL am_i_leader(NULL, 'a')" service_id
rejects "empty service_id" "CALL current_leader('')" service_id
rejects "129-character service_id" "CALL reelect(REPEAT('é', 129))" service_id
rejects "empty node_id" "CALL resign('svc', '')" node_id
rejects "NULL term" "CALL assert_leader('svc', 'd', NULL)" term
rejects "negative term" "CALL assert_leader('svc', 'd', -1)" term
rejects "enabled NULL" "CALL set_expiry_event(NULL)" enabled
rejects "enabled 2" "CALL set_expiry_event(2)" enabled
expect "no row changed by rejected calls" "$before" "$(state)"
# A failed call inside a transaction ends it: nothing written, no transaction open.
# (--force reads on after an error; it works on standard input, not with -e.)
open_trx="SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = CONNECTION_ID();"
after_failure() {
  printf '%s\n' "START TRANSACTION;" "INSERT INTO ledger VALUES ($1);" "$2" "$open_trx" |
    "$client" --defaults-file="$work/client.cnf" --batch --skip-column-names --force "$db" 2>/dev/null | tail -n 1
}
expect "no transaction left open by a failed assert_leader" "0" "$(after_failure 2 "CALL assert_leader('svc', 'a', 4);")"
expect "no transaction left open by a rejected call" "0" "$(after_failure 3 "CALL assert_leader('svc', 'd', NULL);")"
expect "and nothing written" "0" "$(sql "SELECT COUNT(*) FROM ledger")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
