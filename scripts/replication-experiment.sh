#!/usr/bin/env bash
# scripts/replication-experiment.sh — what happens to leadership when an asynchronously
# replicated MariaDB primary fails over, and what protects users (docs/replication.md).
#
#   scripts/replication-experiment.sh SCENARIO
#
# Each scenario starts its own pair of throwaway servers on free 127.0.0.1 ports (primary:
# server-id 1, log-bin; replica: server-id 2, log-bin, read_only=ON, GTID replication with
# MASTER_USE_GTID=slave_pos), installs mysqlleader into `leaderdb` on the primary (it replicates),
# starts three candidates (harness/src/bin/replication_probe.rs: an Elector with a 2 s lease each, as an
# EXECUTE-only account, doing fenced writes while it leads) and a router (the single routing
# point, a TCP forwarder whose upstream the script switches), then fails the primary over:
# SIGKILL the primary, promote the replica (STOP SLAVE; SET GLOBAL read_only=OFF), switch the
# router to it. It prints a report (beliefs over time, overlaps, fenced writes, both servers'
# tables) and removes every process and directory it made, whatever happens.
#
# Scenarios:
#   writable   c1, c2 through the router, c3 configured with the old primary's own address
#              (a misconfigured client); the old primary comes back WRITABLE: two leaders.
#   readonly   the same, but the old primary comes back with read_only=ON: c3 cannot campaign.
#              Also shows that read_only does not stop procedures whose DEFINER holds
#              READ ONLY ADMIN (SUPER): `leaderdb_rootdef` is installed by root.
#   router     all three candidates through the router; the old primary comes back writable,
#              but nobody reaches it: one leader.
#   lag        all three through the router; the replica's SQL thread is stopped LAG_S seconds
#              before the kill (it holds an older lease), and during the lag the leader c1 is
#              paused (SIGSTOP) past its lease, so that the seat moves on the primary to a new
#              term the replica never applies. The old primary stays dead.
#   all        the four above, one after the other (about 3-4 minutes).
#
# Environment: LEASE_MS (2000), PROMOTE_DELAY_S (1; 0.3 in `lag`: seconds from the kill to the
# promotion), LAG_S (4; at least lease + 1.3 s), STALL_LEADER_S (when set, the leader
# at the kill is paused from the kill until that many seconds after the router switched, as a
# leader whose calls hang on a dead host), OBSERVE_S (8: seconds to watch after the old primary is back),
# RESULTS_DIR (when set, the logs and the report are copied there), NO_BUILD (when set, the
# examples already built in target/release/examples are used as they are).
# Needs cargo; installs mariadb-server with apt when mariadbd is missing and it runs as root.
# Not part of `make test`: it is a documented experiment.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
export LC_ALL=C   # $EPOCHREALTIME with a "." decimal point

LEASE_MS=${LEASE_MS:-2000}
LAG_S=${LAG_S:-4}
OBSERVE_S=${OBSERVE_S:-8}
SERVICE=replicated-svc

die() { echo "replication-experiment: $*" >&2; exit 2; }
T_START=$EPOCHREALTIME
say() { printf 'replication-experiment [%6.1f s]: %s\n' "$(awk -v a="$T_START" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" "$*" >&2; }

# ---- cleanup: every process and directory this script made --------------------------------
PIDS=()        # candidates and the router
SERVER_DIRS=() # directories holding a mysqld.pid.launcher
RUNS=()        # temporary directories
cleanup() {
  local pid d
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  for d in "${SERVER_DIRS[@]}"; do
    if [ -f "$d/mysqld.pid.launcher" ]; then
      pid=$(cat "$d/mysqld.pid.launcher")
      kill -CONT "$pid" 2>/dev/null || true
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  for d in "${RUNS[@]}"; do rm -rf "$d"; done
  PIDS=(); SERVER_DIRS=(); RUNS=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- MariaDB ------------------------------------------------------------------------------
find_prog() {
  local name d
  for name in "$@"; do
    if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
    for d in /usr/sbin /usr/local/sbin /sbin; do
      if [ -x "$d/$name" ]; then echo "$d/$name"; return 0; fi
    done
  done
  return 1
}

ensure_mariadb() {
  if find_prog mariadbd mysqld >/dev/null && find_prog mariadb mysql >/dev/null \
     && find_prog mariadb-install-db mysql_install_db >/dev/null; then
    return 0
  fi
  [ "$(id -u)" = 0 ] || die "mariadbd is not installed; install it (Debian: sudo apt-get install mariadb-server mariadb-client)"
  say "installing mariadb-server with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q mariadb-server mariadb-client >&2
  find_prog mariadbd mysqld >/dev/null || die "apt-get installed mariadb-server but mariadbd is still missing"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

MARIADBD='' CLIENT='' INSTALL_DB=''

# init_server DIR: a fresh data directory.
init_server() {
  local dir=$1
  mkdir -p "$dir"
  "$INSTALL_DB" --no-defaults --datadir="$dir/data" --user="$(id -un)" \
      --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 \
    || { cat "$dir/install.log" >&2; die "mariadb-install-db failed"; }
  SERVER_DIRS+=("$dir")
}

# launch_server DIR SERVER_ID PORT READ_ONLY(ON|OFF): mariadbd with binary log and GTIDs; waits
# until it answers on its socket.
launch_server() {
  local dir=$1 id=$2 port=$3 ro=$4 pid
  "$MARIADBD" --no-defaults --user="$(id -un)" --datadir="$dir/data" \
      --socket="$dir/mysqld.sock" --port="$port" --bind-address=127.0.0.1 \
      --pid-file="$dir/mysqld.pid" --log-error="$dir/error.log" --skip-name-resolve \
      --server-id="$id" --log-bin="$dir/data/binlog" --binlog-format=ROW --log-slave-updates=ON \
      --read-only="$ro" --skip-slave-start \
      --max-connections=200 --innodb-buffer-pool-size=64M --innodb-log-file-size=48M \
      >/dev/null 2>&1 &
  pid=$!
  echo "$pid" >"$dir/mysqld.pid.launcher"
  for _ in $(seq 1 600); do
    if "$CLIENT" --no-defaults --socket="$dir/mysqld.sock" -uroot -e 'SELECT 1' >/dev/null 2>&1; then
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || { tail -n 30 "$dir/error.log" >&2; die "mariadbd exited during start-up"; }
    sleep 0.1
  done
  die "mariadbd did not answer within 60 s"
}

kill_server() {
  local dir=$1 pid
  pid=$(cat "$dir/mysqld.pid.launcher")
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# sql DIR STATEMENTS: as root over the server's socket, tab-separated, no headers.
sql() { "$CLIENT" --no-defaults --socket="$1/mysqld.sock" -uroot -N -B -e "$2"; }
# sqlh DIR STATEMENTS: the same with column names (for the report).
sqlh() { "$CLIENT" --no-defaults --socket="$1/mysqld.sock" -uroot -B -e "$2"; }

# ---- the run ------------------------------------------------------------------------------
RUN='' P='' R='' P_PORT='' R_PORT='' ROUTER_PORT='' PROBE='' PRINT_SQL=''

phase() { # phase NAME [TEXT]: a line of phases.log (wall-clock seconds, name, text)
  echo "$EPOCHREALTIME $1 ${2:-}" >>"$RUN/phases.log"
  say "  $1 ${2:-}"
}

build() {
  local target=${CARGO_TARGET_DIR:-$root/target}
  if [ -n "${NO_BUILD:-}" ]; then
    say "NO_BUILD is set: using the programs already built in $target/release"
  else
    say "building the probe (cargo build --release -p mysqlleader-harness --bin replication_probe --bin print_sql)"
    (cd "$root" && cargo build --release --quiet -p mysqlleader-harness --bin replication_probe --bin print_sql) >&2
  fi
  PROBE=$target/release/replication_probe
  PRINT_SQL=$target/release/print_sql
  { [ -x "$PROBE" ] && [ -x "$PRINT_SQL" ]; } || die "the harness programs were not built"
}

# setup_pair: primary P and replica R, replicating, with mysqlleader installed.
setup_pair() {
  P=$RUN/primary R=$RUN/replica
  P_PORT=$(free_port) R_PORT=$(free_port)
  init_server "$P"; init_server "$R"
  launch_server "$P" 1 "$P_PORT" OFF
  launch_server "$R" 2 "$R_PORT" ON
  # 1. Replication: GTID-based, from the beginning of the primary's binary log.
  sql "$P" "CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY 'repl'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1';"
  sql "$R" "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$P_PORT, MASTER_USER='repl',
            MASTER_PASSWORD='repl', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1; START SLAVE;"
  # 2. Accounts: leader_admin owns the schema (no global privilege, so no READ ONLY ADMIN) and
  #    installs it, so it is the procedures' DEFINER; app holds EXECUTE (and INSERT on its own
  #    table) only. leaderdb_rootdef is the same schema installed by root, for the read_only check.
  sql "$P" "CREATE DATABASE leaderdb; CREATE DATABASE leaderdb_rootdef;
            CREATE USER 'leader_admin'@'localhost' IDENTIFIED BY 'admin';
            GRANT ALL PRIVILEGES ON leaderdb.* TO 'leader_admin'@'localhost';
            CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY 'app';"
  "$PRINT_SQL" >"$RUN/install.sql"
  "$CLIENT" --no-defaults --socket="$P/mysqld.sock" -uleader_admin -padmin leaderdb <"$RUN/install.sql"
  "$CLIENT" --no-defaults --socket="$P/mysqld.sock" -uroot leaderdb_rootdef <"$RUN/install.sql"
  sql "$P" "CREATE TABLE leaderdb.app_writes (
              id BIGINT AUTO_INCREMENT PRIMARY KEY, node_id VARCHAR(64) NOT NULL,
              term BIGINT UNSIGNED NOT NULL, server_id INT UNSIGNED NOT NULL,
              written_at DATETIME(6) NOT NULL);
            GRANT EXECUTE ON leaderdb.* TO 'app'@'127.0.0.1';
            GRANT SELECT, INSERT ON leaderdb.app_writes TO 'app'@'127.0.0.1';
            GRANT EXECUTE ON leaderdb_rootdef.* TO 'app'@'127.0.0.1';"
  # 3. Wait until the replica has all of it.
  local pos got
  pos=$(sql "$P" "SELECT @@gtid_binlog_pos")
  got=$(sql "$R" "SELECT MASTER_GTID_WAIT('$pos', 30)")
  [ "$got" = 0 ] || { sqlh "$R" "SHOW SLAVE STATUS\G" >&2 || true; die "the replica did not catch up with $pos"; }
  say "primary 127.0.0.1:$P_PORT (server-id 1), replica 127.0.0.1:$R_PORT (server-id 2), replicating at GTID $pos"
}

app_url() { echo "mysql://app:app@127.0.0.1:$1/leaderdb"; }

start_router() {
  ROUTER_PORT=$(free_port)
  echo "127.0.0.1:$P_PORT" >"$RUN/upstream"
  "$PROBE" router --listen "$ROUTER_PORT" --upstream-file "$RUN/upstream" >"$RUN/router.out" 2>&1 &
  PIDS+=($!)
  local _
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$ROUTER_PORT") 2>/dev/null && break
    sleep 0.05
  done
  say "router 127.0.0.1:$ROUTER_PORT -> primary"
}

# switch_router HOST:PORT: the router reads the file within 20 ms and closes every open connection.
switch_router() { echo "$1" >"$RUN/upstream.new"; mv "$RUN/upstream.new" "$RUN/upstream"; }

# start_candidate NODE LABEL PORT
start_candidate() {
  "$PROBE" candidate --node "$1" --label "$2" --url "$(app_url "$3")" --service "$SERVICE" \
      --lease-ms "$LEASE_MS" --log "$RUN/cand-$1.log" >"$RUN/cand-$1.out" 2>&1 &
  PIDS+=($!)
  echo $! >"$RUN/cand-$1.pid"
}

wait_leading() { # wait_leading NODE: until its log shows a start (at most 15 s)
  local _
  for _ in $(seq 1 150); do
    grep -q '"ev":"start"' "$RUN/cand-$1.log" 2>/dev/null && return 0
    sleep 0.1
  done
  die "$1 did not become leader within 15 s (see $RUN/cand-$1.out)"
}

# The seat as one server holds it: leader, term, lease end (Unix seconds).
seat() {
  sql "$1" "SET time_zone='+00:00'; SELECT CONCAT('leader=', COALESCE(CAST(leader_id AS CHAR), 'none'), ' term=', term,
            ' expires=', COALESCE(UNIX_TIMESTAMP(lease_expires_at), 0))
            FROM leaderdb.leader_election WHERE service_id = '$SERVICE'"
}

# fence_matrix: every (node, term) in either server's history, fenced against each live server.
fence_matrix() {
  local servers=("$R:$R_PORT:replica") s dir port name pairs node term out
  [ -f "$P/up" ] && servers=("$P:$P_PORT:old-primary" "${servers[@]}")
  local q="FROM leaderdb.leader_election_history WHERE service_id='$SERVICE'"
  pairs=$(sql "$R" "SELECT CONCAT(CAST(leader_id AS CHAR), ' ', term, ' replica') $q")
  if [ -f "$P/up" ]; then
    pairs+=$'\n'$(sql "$P" "SELECT CONCAT(CAST(leader_id AS CHAR), ' ', term, ' old-primary') $q")
  fi
  pairs=$(sort -u -k2,2n -k1,1 <<<"$pairs")
  echo "== fence probes: BEGIN; assert_leader(node, term); INSERT; ROLLBACK, against each live server"
  echo "   (each (node, term) from the history of the server named; 'accepted' = the guard let it through)"
  while read -r node term from; do
    [ -n "$node" ] || continue
    for s in "${servers[@]}"; do
      IFS=: read -r dir port name <<<"$s"
      out=$("$PROBE" fence --url "$(app_url "$port")" --service "$SERVICE" --node "$node" --term "$term" 2>&1 || true)
      printf '   %-4s term %-3s (in the %-11s history) on the %-11s -> %s\n' "$node" "$term" "$from" "$name" \
        "$(echo "$out" | sed -n 's/.*"outcome":"\([a-z]*\)".*/\1/p')"
    done
  done <<<"$pairs"
}

report_server() { # report_server DIR NAME
  local dir=$1 name=$2
  echo "== $name: $(sql "$dir" "SELECT CONCAT('server_id=', @@server_id, ' read_only=', @@read_only, ' gtid_binlog_pos=', @@gtid_binlog_pos)")"
  echo "-- seat: $(seat "$dir")"
  echo "-- terms (leader_election_history):"
  sqlh "$dir" "SELECT term, CAST(leader_id AS CHAR) AS leader, began_at, began_how, ended_at, ended_how
               FROM leaderdb.leader_election_history WHERE service_id='$SERVICE' ORDER BY term" | sed 's/^/   /'
  echo "-- app_writes (fenced writes that committed), by writer, term and the server they were written on:"
  sqlh "$dir" "SELECT node_id, term, server_id AS written_on, COUNT(*) AS writes, MIN(written_at) AS first, MAX(written_at) AS last
               FROM leaderdb.app_writes GROUP BY node_id, term, server_id ORDER BY first" | sed 's/^/   /'
}

scenario() {
  local name=$1 promote_delay
  RUN=$(mktemp -d "${TMPDIR:-/tmp}/mysqlleader-repl.XXXXXX")
  RUNS+=("$RUN")
  : >"$RUN/phases.log"
  promote_delay=${PROMOTE_DELAY_S:-1}
  [ "$name" = lag ] && promote_delay=${PROMOTE_DELAY_S:-0.3}
  say "=== scenario $name (lease ${LEASE_MS} ms, promotion ${promote_delay} s after the kill; data in $RUN)"
  setup_pair
  touch "$P/up"
  start_router

  # 1. Candidates: c1 first, so that it is the leader at the failover.
  local c3_label="router" c3_port=$ROUTER_PORT
  if [ "$name" = writable ] || [ "$name" = readonly ]; then
    c3_label="direct to the old primary (misconfigured)" c3_port=$P_PORT
  fi
  start_candidate c1 "router" "$ROUTER_PORT"
  wait_leading c1
  start_candidate c2 "router" "$ROUTER_PORT"
  start_candidate c3 "$c3_label" "$c3_port"
  phase candidates "c1,c2 via the router; c3: $c3_label"
  sleep 3

  # 2. Under lag: the replica stops applying; meanwhile the leader c1 is paused (SIGSTOP) for
  #    longer than the lease, so that another node takes the seat on the primary with a new
  #    term that the replica never applies.
  if [ "$name" = lag ]; then
    local c1_pid lease_s
    c1_pid=$(cat "$RUN/cand-c1.pid")
    lease_s=$(awk -v l="$LEASE_MS" 'BEGIN { print l / 1000 }')
    sql "$R" "STOP SLAVE SQL_THREAD"
    phase lag_start "replica SQL thread stopped; replica seat: $(seat "$R")"
    sleep 0.5
    kill -STOP "$c1_pid"
    phase pause_c1 "SIGSTOP of the leader c1 for lease + 0.6 s"
    sleep "$(awk -v l="$lease_s" 'BEGIN { print l + 0.6 }')"
    kill -CONT "$c1_pid"
    phase resume_c1 "SIGCONT; primary seat: $(seat "$P")"
    sleep "$(awk -v l="$LAG_S" -v d="$lease_s" 'BEGIN { r = l - d - 1.1; print (r > 0.2 ? r : 0.2) }')"
    phase before_kill "primary seat: $(seat "$P"); replica seat: $(seat "$R")"
  fi

  # 3. The failover. With STALL_LEADER_S, the leader at the kill is also paused from
  #    the kill until that long after the router switched, as a leader whose calls hang on a
  #    dead host would be: its first call to the promoted replica comes that much later.
  local stalled=''
  if [ -n "${STALL_LEADER_S:-}" ]; then
    stalled=$(seat "$P" | sed -n 's/^leader=\([^ ]*\) .*/\1/p')
  fi
  phase kill "SIGKILL of the primary (server-id 1)"
  kill_server "$P"; rm -f "$P/up"
  if [ -n "$stalled" ] && [ -f "$RUN/cand-$stalled.pid" ]; then
    kill -STOP "$(cat "$RUN/cand-$stalled.pid")"
    phase stall "SIGSTOP of the leader $stalled until ${STALL_LEADER_S} s after the switch"
  fi
  sleep "$promote_delay"
  sql "$R" "STOP SLAVE; SET GLOBAL read_only=OFF"
  phase promoted "replica: STOP SLAVE; read_only=OFF"
  phase replica_lease "$(seat "$R")"
  switch_router "127.0.0.1:$R_PORT"
  phase switch "router -> replica (127.0.0.1:$R_PORT)"
  if [ -n "$stalled" ]; then
    sleep "$STALL_LEADER_S"
    kill -CONT "$(cat "$RUN/cand-$stalled.pid")"
    phase unstall "SIGCONT of $stalled"
  fi

  # 4. The old primary comes back (not in `lag`).
  if [ "$name" != lag ]; then
    sleep 3
    local ro=OFF
    [ "$name" = readonly ] && ro=ON
    launch_server "$P" 1 "$P_PORT" "$ro"
    touch "$P/up"
    phase old_primary_back "relaunched with read_only=$ro; its seat: $(seat "$P")"
  fi
  sleep "$OBSERVE_S"

  # 5. Checks while the candidates still run.
  local checks=$RUN/checks.txt
  {
    fence_matrix
    if [ "$name" = readonly ]; then
      echo "== read_only on the old primary, CALL campaign('probe', 'intruder', 2000) as the EXECUTE-only account 'app':"
      echo "   leaderdb (procedures' DEFINER leader_admin@localhost, no READ ONLY ADMIN):"
      "$CLIENT" --no-defaults -h127.0.0.1 -P"$P_PORT" -uapp -papp leaderdb -B \
        -e "CALL campaign('probe','intruder',2000)" 2>&1 | sed 's/^/     /' || true
      echo "   leaderdb_rootdef (procedures' DEFINER root@localhost, which holds READ ONLY ADMIN):"
      "$CLIENT" --no-defaults -h127.0.0.1 -P"$P_PORT" -uapp -papp leaderdb_rootdef -B \
        -e "CALL campaign('probe','intruder',2000)" 2>&1 | sed 's/^/     /' || true
    fi
  } >"$checks" 2>&1
  phase end

  # 6. Stop the candidates (the router and servers stay for the report).
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  sleep 0.3

  local report=$RUN/report.txt
  {
    echo "##### scenario $name — $(date -u '+%Y-%m-%d %H:%M UTC'), $("$MARIADBD" --version | awk '{print $3}'), lease ${LEASE_MS} ms, promotion ${promote_delay} s after the kill"
    "$PROBE" analyze --dir "$RUN"
    echo
    cat "$checks"
    echo
    if [ -f "$P/up" ]; then report_server "$P" "old primary (server-id 1)"; echo; fi
    report_server "$R" "promoted replica (server-id 2)"
  } >"$report" 2>&1
  cat "$report"
  if [ -n "${RESULTS_DIR:-}" ]; then
    mkdir -p "$RESULTS_DIR/$name"
    cp "$RUN"/cand-*.log "$RUN/phases.log" "$report" "$RESULTS_DIR/$name/"
  fi
  cleanup
}

case "${1:-}" in
  writable|readonly|router|lag) ;;
  all) ;;
  *) die "usage: $0 writable|readonly|router|lag|all" ;;
esac
ensure_mariadb
MARIADBD=$(find_prog mariadbd mysqld)
CLIENT=$(find_prog mariadb mysql)
INSTALL_DB=$(find_prog mariadb-install-db mysql_install_db)
build
if [ "$1" = all ]; then
  for s in writable readonly router lag; do scenario "$s"; done
else
  scenario "$1"
fi
