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
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

die() { echo "testdb: $*" >&2; exit 2; }

. "$here/lib.sh"   # find_prog, ensure_mariadb (installs mariadb-server with apt when root)

need_mariadb() {
  ensure_mariadb testdb || die "mariadbd is needed: install it, or set MYSQLLEADER_TEST_URL=mysql://user:pass@host:port/db"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Starts mariadbd on the data directory and port recorded in DIR, and waits until it answers.
launch() {
  local dir=$1 mariadbd client port i
  mariadbd=$(find_prog mariadbd mysqld)
  client=$(find_prog mariadb mysql)
  port=$(cat "$dir/port")
  # The event scheduler is on, for the optional expiry event.
  "$mariadbd" --no-defaults --user="$(id -un)" --datadir="$dir/data" \
      --socket="$dir/mysqld.sock" --port="$port" --bind-address=127.0.0.1 \
      --pid-file="$dir/mysqld.pid" --log-error="$dir/error.log" \
      --skip-name-resolve --event-scheduler=ON --max-connections=500 \
      --innodb-buffer-pool-size=128M --innodb-log-file-size=64M \
      $(cat "$dir/server-args" 2>/dev/null || true) \
      >/dev/null 2>&1 &
  echo $! >"$dir/mysqld.pid.launcher"
  # Wait until it answers (at most 60 s).
  for i in $(seq 1 600); do
    if "$client" --no-defaults --socket="$dir/mysqld.sock" -uroot -e 'SELECT 1' >/dev/null 2>&1; then
      return 0
    fi
    if ! kill -0 "$(cat "$dir/mysqld.pid.launcher")" 2>/dev/null; then
      tail -n 30 "$dir/error.log" >&2 || true
      die "mariadbd exited during start-up (log above)"
    fi
    sleep 0.1
  done
  tail -n 30 "$dir/error.log" >&2
  die "mariadbd did not answer within 60 s"
}

start() {
  local dir=$1
  need_mariadb
  local install_db client port
  install_db=$(find_prog mariadb-install-db mysql_install_db)
  client=$(find_prog mariadb mysql)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  # 1. A fresh data directory; root@localhost may log in over the socket without a password.
  "$install_db" --no-defaults --datadir="$dir/data" --user="$(id -un)" \
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
  start "$dir" >/dev/null
  local client port
  client=$(find_prog mariadb mysql)
  port=$(cat "$dir/port")
  "$client" --no-defaults --socket="$dir/mysqld.sock" -uroot <<'SQL'
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
  echo "testdb: throwaway TLS-only mariadbd on ${MYSQLLEADER_TEST_URL#*@} (data in $dir)" >&2
  "$@" || status=$?
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
  local dir=$1
  [ -d "$dir" ] || return 0
  signal_server "$dir" CONT
  signal_server "$dir" TERM
  rm -rf "$dir"
}

run() {
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
  echo "testdb: throwaway mariadbd on ${MYSQLLEADER_TEST_URL#*@} (data in $dir)" >&2
  "$@" || status=$?
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
