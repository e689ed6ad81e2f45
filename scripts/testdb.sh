#!/usr/bin/env bash
# Throwaway MariaDB server for the tests and the demo.
#
#   scripts/testdb.sh start DIR   start mariadbd with its data in DIR (created, must be empty or new)
#                                 on a free 127.0.0.1 port; writes DIR/env with
#                                 `export MYSQLLEADER_TEST_URL=...` and prints that line
#   scripts/testdb.sh stop DIR    stop that server and remove DIR
#   scripts/testdb.sh restart|kill|relaunch|pause|resume DIR
#                                 fault injection: stop and start again on the same port and data
#                                 (restart), SIGKILL (kill), start after a kill (relaunch),
#                                 SIGSTOP (pause), SIGCONT (resume)
#   scripts/testdb.sh run CMD...  when MYSQLLEADER_TEST_URL is set, just run CMD; otherwise start a
#                                 server in a fresh temporary directory, run CMD with
#                                 MYSQLLEADER_TEST_URL (and MYSQLLEADER_TEST_ADMIN_SOCKET) exported,
#                                 stop the server whatever happens, and exit with CMD's status.
#   scripts/testdb.sh start-tls DIR   like start, for a TLS-only server: certificates made with
#                                 openssl at start-up in DIR/tls (a CA, the server's for 127.0.0.1 only
#                                 and localhost, a client's), require_secure_transport=ON, and an
#                                 account `mlx509` created REQUIRE X509. DIR/env also exports
#                                 MYSQLLEADER_TEST_TLS_URL (ssl-mode=VERIFY_IDENTITY with the CA),
#                                 MYSQLLEADER_TEST_TLS_DIR (ca.pem, client-cert.pem, client-key.pem,
#                                 other-ca.pem: a CA that signed nothing here)
#   scripts/testdb.sh run-tls CMD...  like run, around a TLS-only server (always a new one)
#
# The URL names an account `mysqlleader` with every privilege (the tests create one database per
# test) and the database `mysqlleader_test`. Nothing is left running or on disk afterwards.
# When mariadbd is missing: installed with apt when running as root, else a message says what to do.
#
# MYSQLLEADER_TEST_FLUSH_AT_COMMIT sets the server's innodb_flush_log_at_trx_commit (default 1,
# the servers' own default, which the benchmark measures): scripts/test-all.sh sets 2, so that a
# commit writes its redo log to the OS without waiting for the disk (a killed server loses
# nothing; only the machine's crash would). On MySQL, whose binary log is on, a transaction's
# prepare is flushed before its row locks are released: with 1, under make test's disk load, 16
# campaigns on one seat waited past their 1 s lock bound (1205) behind each other's fsyncs.
#
# MYSQLLEADER_TEST_KIND=mysql makes every command above start MySQL 9.7 instead (run from the
# Debian sid root that scripts/lib.sh's ensure_mysql builds once under /var/cache, reached over
# TCP on 127.0.0.1; its data lives inside that root, DIR holds a link to it). The account has
# MySQL's default authentication (caching_sha2_password). DIR/env then also exports
# MYSQLLEADER_TEST_KIND=mysql and MYSQLLEADER_TEST_SQL_CLIENT, a wrapper that runs MySQL's own
# `mysql` client (reading stdin; file arguments are not seen inside the root). With
# MYSQLLEADER_TEST_KIND=mysql, `run` uses MYSQLLEADER_TEST_MYSQL_URL when that is set (a MySQL
# server of your own) instead of starting one. Like the MariaDB one, the plain MySQL server
# offers no TLS (MySQL's own default would).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

die() { echo "testdb: $*" >&2; exit 2; }

. "$here/lib.sh"   # find_prog, ensure_mariadb (installs mariadb-server with apt when root)

kind=${MYSQLLEADER_TEST_KIND:-mariadb}
case "$kind" in mariadb|mysql) ;; *) die "MYSQLLEADER_TEST_KIND is mariadb or mysql, not '$kind'" ;; esac

need_mariadb() {
  if [ "$kind" = mysql ]; then
    ensure_mysql testdb || die "MySQL is needed: run as root (it is built once under $MYSQL_ROOT), or set MYSQLLEADER_TEST_MYSQL_URL"
    return 0
  fi
  ensure_mariadb testdb || die "mariadbd is needed: install it, or set MYSQLLEADER_TEST_URL=mysql://user:pass@host:port/db"
}

# The data directory of a MySQL server inside the root, for DIR (the root cannot see DIR).
mysql_id() { basename "$1"; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Starts mariadbd on the data directory and port recorded in DIR, and waits until it answers.
launch() {
  [ "$kind" = mysql ] && { launch_mysql "$1"; return; }
  local dir=$1 mariadbd client port
  mariadbd=$(find_prog mariadbd mysqld)
  client=$(find_prog mariadb mysql)
  port=$(cat "$dir/port")
  # performance_schema is on, every instrument off: its threads table names each connection's
  # login account, which the tests count connections by (information_schema.PROCESSLIST names a
  # procedure's definer while a call runs in it; tests/common/mod.rs, `connections`). MySQL has it
  # on by default. The event scheduler is on, for the optional expiry event. A temporary directory of the
  # server's own: a server starting removes every "#sql*" file of its temporary directory, so
  # with /tmp shared, one throwaway server's start-up deleted another's temporary table in use
  # (MariaDB: "Error on delete of '/tmp/#sql-update-....MAI'", a renew_seats failed).
  mkdir -p "$dir/tmp"
  "$mariadbd" --no-defaults --user="$(id -un)" --datadir="$dir/data" --tmpdir="$dir/tmp" \
      --socket="$dir/mysqld.sock" --port="$port" --bind-address=127.0.0.1 \
      --pid-file="$dir/mysqld.pid" --log-error="$dir/error.log" \
      --skip-name-resolve --event-scheduler=ON --max-connections=500 \
      --innodb-buffer-pool-size=128M --innodb-log-file-size=64M \
      --performance-schema=ON --performance-schema-instrument='%=OFF' \
      --innodb-flush-log-at-trx-commit="${MYSQLLEADER_TEST_FLUSH_AT_COMMIT:-1}" \
      $(cat "$dir/server-args" 2>/dev/null || true) \
      >/dev/null 2>&1 &
  echo $! >"$dir/mysqld.pid.launcher"
  await_server "$dir" 60 "$dir/error.log" mariadbd \
      "$client" --no-defaults --socket="$dir/mysqld.sock" -uroot -e 'SELECT 1'
}

# await_server DIR SECONDS LOG NAME PROBE...: waits until PROBE (a client command) succeeds;
# dies with LOG's end when the server started in DIR exits first or SECONDS pass.
await_server() {
  local dir=$1 seconds=$2 log=$3 name=$4 i
  shift 4
  for i in $(seq 1 $((seconds * 10))); do
    if "$@" >/dev/null 2>&1; then
      return 0
    fi
    if ! kill -0 "$(cat "$dir/mysqld.pid.launcher")" 2>/dev/null; then
      tail -n 30 "$log" >&2 || true
      die "$name exited during start-up (log above)"
    fi
    sleep 0.1
  done
  tail -n 30 "$log" >&2
  die "$name did not answer within $seconds s"
}

# Starts MySQL (inside the root) on the data directory and port recorded in DIR, and waits.
# The binary log is on, as MySQL's default is (what the installer must cope with); GTIDs on, as
# Group Replication needs. It is not synced at every commit (sync_binlog=0): a commit then costs
# one fsync, as on the MariaDB test server, which has no binary log, not two, and the two
# servers' suites run at comparable speed on a loaded 2-core machine (a throwaway server loses
# nothing to it).
launch_mysql() {
  local dir=$1 id port
  id=$(mysql_id "$dir")
  port=$(cat "$dir/port")
  # A temporary directory of its own (see launch).
  mkdir -p "$MYSQL_ROOT/var/lib/mysqlleader/$id.tmp"
  # shellcheck disable=SC2046
  setsid chroot "$MYSQL_ROOT" mysqld --no-defaults --user=root --datadir="/var/lib/mysqlleader/$id" \
      --tmpdir="/var/lib/mysqlleader/$id.tmp" \
      --socket="/run/mysqld/$id.sock" --port="$port" --bind-address=127.0.0.1 --mysqlx=OFF \
      --pid-file="/var/lib/mysqlleader/$id.pid" --log-error="/var/lib/mysqlleader/$id.err" \
      --secure-file-priv= --skip-name-resolve --event-scheduler=ON --max-connections=500 \
      --innodb-buffer-pool-size=128M --innodb-redo-log-capacity=128M \
      --gtid-mode=ON --enforce-gtid-consistency=ON --server-id=1 --sync-binlog=0 \
      --innodb-flush-log-at-trx-commit="${MYSQLLEADER_TEST_FLUSH_AT_COMMIT:-1}" \
      $(cat "$dir/server-args" 2>/dev/null || true) \
      >/dev/null 2>&1 &
  echo $! >"$dir/mysqld.pid.launcher"
  await_server "$dir" 90 "$MYSQL_ROOT/var/lib/mysqlleader/$id.err" mysqld \
      mysql_client --socket="/run/mysqld/$id.sock" -uroot -e 'SELECT 1'
}

# The admin client of a server started in DIR (root over its socket), reading stdin.
admin_client() {
  local dir=$1
  if [ "$kind" = mysql ]; then
    mysql_client --socket="/run/mysqld/$(mysql_id "$dir").sock" -uroot
  else
    "$(find_prog mariadb mysql)" --no-defaults --socket="$dir/mysqld.sock" -uroot
  fi
}

start_mysql() {
  local dir=$1 id port
  id=$(mysql_id "$dir")
  rm -rf "$MYSQL_ROOT/var/lib/mysqlleader/$id"
  # 1. A fresh data directory; root@localhost without a password.
  chroot "$MYSQL_ROOT" mysqld --no-defaults --initialize-insecure --user=root \
      --datadir="/var/lib/mysqlleader/$id" >"$dir/install.log" 2>&1 \
    || { cat "$dir/install.log" >&2; die "mysqld --initialize-insecure failed"; }
  ln -s "$MYSQL_ROOT/var/lib/mysqlleader/$id" "$dir/data"
  ln -sf "$MYSQL_ROOT/run/mysqld/$id.sock" "$dir/mysqld.sock"
  # 2. The server on a free loopback port. MySQL would offer TLS with certificates of its own:
  #    like the MariaDB one, the plain test server has none (the "server without TLS" of
  #    test-tls.sh; the TLS-only server, start-tls, has the test's certificates), so every
  #    login of MySQL's default authentication there goes by the server's RSA key.
  if [ ! -f "$dir/server-args" ]; then
    echo "--tls-version=" >"$dir/server-args"
  fi
  port=$(free_port)
  echo "$port" >"$dir/port"
  launch_mysql "$dir" || { stop "$dir"; exit 2; }
  # 3. The test account (MySQL's default authentication) and database.
  admin_client "$dir" <<'SQL'
CREATE DATABASE IF NOT EXISTS mysqlleader_test;
CREATE USER IF NOT EXISTS 'mysqlleader'@'%' IDENTIFIED BY 'mysqlleader';
GRANT ALL PRIVILEGES ON *.* TO 'mysqlleader'@'%' WITH GRANT OPTION;
SQL
  # MySQL's own client, for the suites that drive one (tests/sql_client.sh).
  mkdir -p "$dir/bin"
  { printf '#!/usr/bin/env bash\nroot=%q\n' "$MYSQL_ROOT"; cat <<'EOF'; } >"$dir/bin/mysql"
# MySQL's own client from the MySQL root. The root cannot see files outside it: an option file
# given as --defaults-file=FILE is copied in first; SQL comes on stdin. The test server offers
# no TLS, so MySQL's default authentication needs the server's RSA key: the client may fetch it
# (--get-server-public-key, right after --defaults-file or --no-defaults, which come first).
set -euo pipefail
args=()
copies=()
for a in "$@"; do
  case "$a" in
    --defaults-file=*)
      inside=/tmp/mysqlleader-client.$$.${#copies[@]}.cnf
      cp "${a#--defaults-file=}" "$root$inside"
      copies+=("$root$inside")
      args+=("--defaults-file=$inside") ;;
    *) args+=("$a") ;;
  esac
done
case "${args[0]:-}" in
  --defaults-file=*|--no-defaults) args=("${args[0]}" --get-server-public-key "${args[@]:1}") ;;
  *) args=(--get-server-public-key "${args[@]}") ;;
esac
status=0
chroot "$root" mysql "${args[@]}" || status=$?
rm -f "${copies[@]}"
exit $status
EOF
  chmod +x "$dir/bin/mysql"
  {
    echo "export MYSQLLEADER_TEST_URL=mysql://mysqlleader:mysqlleader@127.0.0.1:$port/mysqlleader_test"
    echo "export MYSQLLEADER_TEST_ADMIN_SOCKET=$dir/mysqld.sock"
    echo "export MYSQLLEADER_TEST_SERVER_DIR=$dir"
    echo "export MYSQLLEADER_TEST_KIND=mysql"
    echo "export MYSQLLEADER_TEST_SQL_CLIENT=$dir/bin/mysql"
  } >"$dir/env"
  cat "$dir/env"
}

start() {
  local dir=$1
  need_mariadb
  if [ "$kind" = mysql ]; then
    mkdir -p "$dir"
    start_mysql "$(cd "$dir" && pwd)"
    return
  fi
  local install_db client port
  install_db=$(find_prog mariadb-install-db mysql_install_db)
  client=$(find_prog mariadb mysql)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  # 1. A fresh data directory; root@localhost may log in over the socket without a password.
  #    The bootstrap server gets the temporary directory of its own too (see launch): with /tmp
  #    shared, two parts' bootstraps at the same moment removed each other's temporary tables
  #    ("Could not remove temporary table '/tmp/#sql-temptable-...'", then "Unknown table
  #    'mysql.tmp_user_sys'": the install failed).
  mkdir -p "$dir/tmp"
  "$install_db" --no-defaults --datadir="$dir/data" --tmpdir="$dir/tmp" --user="$(id -un)" \
      --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 \
    || { cat "$dir/install.log" >&2; die "mariadb-install-db failed"; }
  # 2. The server on a free loopback port.
  port=$(free_port)
  echo "$port" >"$dir/port"
  launch "$dir" || { stop "$dir"; exit 2; }
  # 3. The test account and database.
  "$client" --no-defaults --socket="$dir/mysqld.sock" -uroot <<'SQL'
CREATE DATABASE IF NOT EXISTS mysqlleader_test;
CREATE USER IF NOT EXISTS 'mysqlleader'@'%' IDENTIFIED BY 'mysqlleader';
GRANT ALL PRIVILEGES ON *.* TO 'mysqlleader'@'%' WITH GRANT OPTION;
SQL
  {
    echo "export MYSQLLEADER_TEST_URL=mysql://mysqlleader:mysqlleader@127.0.0.1:$port/mysqlleader_test"
    echo "export MYSQLLEADER_TEST_ADMIN_SOCKET=$dir/mysqld.sock"
    echo "export MYSQLLEADER_TEST_SERVER_DIR=$dir"
  } >"$dir/env"
  cat "$dir/env"
}

# Certificates for a TLS-only server, made with openssl in DIR/tls: a CA, a server certificate
# for 127.0.0.1 only (so that a host-name check has something to refuse: localhost), a client certificate, and another CA that signed nothing here.
make_certs() {
  local tls=$1/tls
  command -v openssl >/dev/null || die "openssl is needed for the TLS server (Debian: apt-get install openssl)"
  mkdir -p "$tls"
  (
    cd "$tls"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=mysqlleader test CA" \
        -keyout ca-key.pem -out ca.pem
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=another CA" \
        -keyout other-ca-key.pem -out other-ca.pem
    openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout server-key.pem -out server.csr
    printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 \
        -extfile server.ext -out server-cert.pem
    openssl req -newkey rsa:2048 -nodes -subj "/CN=mlx509" -keyout client-key.pem -out client.csr
    printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n' >client.ext
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 \
        -extfile client.ext -out client-cert.pem
  ) >"$1/openssl.log" 2>&1 || { cat "$1/openssl.log" >&2; die "openssl could not make the test certificates"; }
}

start_tls() {
  local dir=$1
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  make_certs "$dir"
  echo "--ssl-ca=$dir/tls/ca.pem --ssl-cert=$dir/tls/server-cert.pem --ssl-key=$dir/tls/server-key.pem --require-secure-transport=ON" \
    >"$dir/server-args"
  if [ "$kind" = mysql ]; then
    # The root cannot see DIR: the server reads a copy of the certificates inside it.
    local inside=/var/lib/mysqlleader/$(mysql_id "$dir")-tls
    rm -rf "$MYSQL_ROOT$inside"
    cp -r "$dir/tls" "$MYSQL_ROOT$inside"
    echo "--ssl-ca=$inside/ca.pem --ssl-cert=$inside/server-cert.pem --ssl-key=$inside/server-key.pem --require-secure-transport=ON" \
      >"$dir/server-args"
  fi
  start "$dir" >/dev/null
  local port
  port=$(cat "$dir/port")
  admin_client "$dir" <<'SQL'
CREATE USER IF NOT EXISTS 'mlx509'@'%' IDENTIFIED BY 'mlx509' REQUIRE X509;
GRANT ALL PRIVILEGES ON *.* TO 'mlx509'@'%';
SQL
  local ca
  ca=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$dir/tls/ca.pem")
  {
    echo "export MYSQLLEADER_TEST_TLS_URL='mysql://mysqlleader:mysqlleader@127.0.0.1:$port/mysqlleader_test?ssl-mode=VERIFY_IDENTITY&ssl-ca=$ca'"
    echo "export MYSQLLEADER_TEST_TLS_DIR=$dir/tls"
  } >>"$dir/env"
  cat "$dir/env"
}

run_tls() {
  local dir status=0
  dir=$(mktemp -d "${TMPDIR:-/tmp}/mysqlleader-tlsdb.XXXXXX")
  trap 'stop "$dir"' EXIT
  trap 'exit 130' INT TERM
  start_tls "$dir" >/dev/null
  # shellcheck disable=SC1091
  . "$dir/env"
  echo "testdb: throwaway TLS-only $kind server on ${MYSQLLEADER_TEST_URL#*@} (data in $dir)" >&2
  "$@" || status=$?
  if crashed "$dir"; then status=1; fi
  exit "$status"
}

# Signals the running server: TERM (and waits for it to exit), KILL, STOP or CONT.
signal_server() {
  local dir=$1 sig=$2 pid i
  [ -f "$dir/mysqld.pid.launcher" ] || return 0
  pid=$(cat "$dir/mysqld.pid.launcher")
  kill "-$sig" "$pid" 2>/dev/null || true
  if [ "$sig" = TERM ] || [ "$sig" = KILL ]; then
    for i in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
}

stop() {
  local dir=$1 id
  [ -d "$dir" ] || return 0
  signal_server "$dir" CONT
  signal_server "$dir" TERM
  if [ -L "$dir/data" ]; then
    # A MySQL server's data, log and certificates live inside the root.
    id=$(mysql_id "$dir")
    rm -rf "$MYSQL_ROOT/var/lib/mysqlleader/$id" "$MYSQL_ROOT/var/lib/mysqlleader/$id".* \
           "$MYSQL_ROOT/var/lib/mysqlleader/$id-tls"
  fi
  rm -rf "$dir"
}

# crashed DIR: whether the server started in DIR crashed since its start (its error log names a
# fatal signal or a failed assertion); prints that part of the log. A crash of the server the
# tests share is a failure of the part, even when no test noticed it: the product must never
# harm the database it runs on (a MariaDB 10.11 optimizer crash, signal 11, was found this way).
crashed() {
  local dir=$1 log
  log=$dir/error.log
  if [ -L "$dir/data" ]; then log="$MYSQL_ROOT/var/lib/mysqlleader/$(mysql_id "$dir").err"; fi
  [ -f "$log" ] || return 1
  grep -q -E "got signal [0-9]+|Assertion failure|got exception" "$log" || return 1
  echo "testdb: the $kind server crashed; its log from there:" >&2
  grep -n -E -A40 "got signal [0-9]+|Assertion failure|got exception" "$log" | head -80 >&2
  return 0
}

run() {
  if [ "$kind" = mysql ] && [ -n "${MYSQLLEADER_TEST_MYSQL_URL:-}" ]; then
    export MYSQLLEADER_TEST_URL=$MYSQLLEADER_TEST_MYSQL_URL
  fi
  if [ -n "${MYSQLLEADER_TEST_URL:-}" ]; then
    exec "$@"
  fi
  local dir status=0
  dir=$(mktemp -d "${TMPDIR:-/tmp}/mysqlleader-db.XXXXXX")
  trap 'stop "$dir"' EXIT
  trap 'exit 130' INT TERM
  start "$dir" >/dev/null
  # shellcheck disable=SC1091
  . "$dir/env"
  echo "testdb: throwaway $kind server on ${MYSQLLEADER_TEST_URL#*@} (data in $dir)" >&2
  "$@" || status=$?
  if crashed "$dir"; then status=1; fi
  exit "$status"
}

cmd=${1:-}
shift || true
case "$cmd" in
  start) [ $# -eq 1 ] || die "usage: $0 start DIR"; start "$1" ;;
  stop)  [ $# -eq 1 ] || die "usage: $0 stop DIR"; stop "$1" ;;
  run)   [ $# -ge 1 ] || die "usage: $0 run COMMAND [ARGS...]"; run "$@" ;;
  start-tls) [ $# -eq 1 ] || die "usage: $0 start-tls DIR"; need_mariadb; start_tls "$1" ;;
  run-tls) [ $# -ge 1 ] || die "usage: $0 run-tls COMMAND [ARGS...]"; need_mariadb; run_tls "$@" ;;
  # Fault injection on a server started with `start DIR` (the data stays):
  restart) [ $# -eq 1 ] || die "usage: $0 restart DIR"; signal_server "$1" CONT; signal_server "$1" TERM; launch "$1" ;;
  kill)    [ $# -eq 1 ] || die "usage: $0 kill DIR"; signal_server "$1" KILL ;;
  relaunch) [ $# -eq 1 ] || die "usage: $0 relaunch DIR"; launch "$1" ;;
  pause)   [ $# -eq 1 ] || die "usage: $0 pause DIR"; signal_server "$1" STOP ;;
  resume)  [ $# -eq 1 ] || die "usage: $0 resume DIR"; signal_server "$1" CONT ;;
  *) die "usage: $0 start DIR | stop DIR | run COMMAND [ARGS...] | restart|kill|relaunch|pause|resume DIR" ;;
esac
