# scripts/lib.sh — shell helpers shared by the scripts that start servers or need a package
# (testdb.sh, galera.sh, group-replication.sh, test-all.sh, replication-experiment.sh,
# profile-calls.sh). Sourced, not run:
#
#   . "$(dirname "$0")/lib.sh"
#
# Everything else about an experiment lives in Rust (harness/); shell only starts servers.

# find_prog NAME...: prints the path of the first NAME found in PATH or in the sbin
# directories Debian puts servers in; returns 1 when none is found.
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

# pick_ports COUNT: print COUNT distinct free TCP ports on 127.0.0.1. All
# sockets are held open until every port is chosen, so they are distinct.
# Ports are taken below the kernel's ephemeral range when possible so that
# outgoing connections (which use ephemeral ports) cannot grab a port that a
# node binds only later (IST/SST listeners, or after a restart); if no port
# there is free, binding port 0 lets the kernel choose.
pick_ports() {
    python3 - "$1" <<'PY'
import random, socket, sys
count = int(sys.argv[1])
try:
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        eph_lo = int(f.read().split()[0])
except Exception:
    eph_lo = 32768
lo, hi = 10000, max(10001, eph_lo - 1)
socks, ports = [], []
candidates = list(range(lo, hi))
random.shuffle(candidates)
for port in candidates + [0] * count:
    if len(ports) == count:
        break
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        s.close()
        continue
    socks.append(s)
    ports.append(s.getsockname()[1])
if len(ports) != count:
    sys.exit("could not find %d free ports" % count)
print(" ".join(map(str, ports)))
for s in socks:
    s.close()
PY
}

# apt_install WHO PACKAGE...: installs Debian packages with apt-get (after `apt-get update`)
# when running as root; otherwise prints, prefixed with WHO, the command that would, and
# returns 1. Progress goes to stderr (stdout is for what the calling script prints).
apt_install() {
  local who=$1
  shift
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "$who: missing: $*. Install them as root with: apt-get update && apt-get install -y $*" >&2
    return 1
  fi
  echo "$who: installing $* with apt-get" >&2
  # One apt at a time: test parts run side by side (scripts/test-all.sh), and dpkg has one lock.
  (
    flock 9
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -q >&2 &&
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q "$@" >&2
  ) 9>/var/lock/mysqlleader-apt.lock
}

# ensure_mariadb WHO: makes sure mariadbd, the mariadb client and mariadb-install-db are there,
# installing Debian's mariadb-server and mariadb-client with apt_install when one is missing.
ensure_mariadb() {
  if find_prog mariadbd mysqld >/dev/null && find_prog mariadb mysql >/dev/null \
     && find_prog mariadb-install-db mysql_install_db >/dev/null; then
    return 0
  fi
  apt_install "$1" mariadb-server mariadb-client || return 1
  # Debian starts the packaged service when it can; these scripts never use it.
  find_prog mariadbd mysqld >/dev/null || { echo "$1: apt-get installed mariadb-server but mariadbd is still missing" >&2; return 1; }
}

# The MySQL server of the tests: Debian bookworm carries none, so MySQL runs from a Debian sid
# root made once with debootstrap (mysql-server-core and mysql-client-core, MySQL 9.7) and kept
# under /var/cache (MYSQLLEADER_MYSQL_ROOT to put it elsewhere: about 1 GB, about 3 minutes the
# first time). Its servers listen on 127.0.0.1 and are reached over TCP from outside the root.
MYSQL_ROOT=${MYSQLLEADER_MYSQL_ROOT:-/var/cache/mysqlleader/mysql-sid}

# ensure_mysql WHO: makes sure $MYSQL_ROOT holds mysqld and the mysql client, building it when
# missing (as root: debootstrap from Debian's mirror, then apt-get inside the root), and that
# its /proc is mounted. One build at a time (flock): suites started side by side share it.
ensure_mysql() {
  local who=$1 tmp
  if [ "$(id -u)" != 0 ]; then
    echo "$who: MySQL runs in a chroot ($MYSQL_ROOT), which needs root; or set MYSQLLEADER_TEST_MYSQL_URL to a MySQL server of your own" >&2
    return 1
  fi
  mkdir -p "$(dirname "$MYSQL_ROOT")"
  (
    flock 9
    if [ ! -x "$MYSQL_ROOT/usr/sbin/mysqld" ] || [ ! -x "$MYSQL_ROOT/usr/bin/mysql" ]; then
      command -v debootstrap >/dev/null || apt_install "$who" debootstrap || exit 1
      tmp=$MYSQL_ROOT.building
      if mountpoint -q "$tmp/proc" 2>/dev/null; then umount "$tmp/proc"; fi
      rm -rf "$tmp"
      echo "$who: building the MySQL root $MYSQL_ROOT (debootstrap sid, then mysql-server-core; a few minutes, once)" >&2
      debootstrap --variant=minbase sid "$tmp" >&2 || exit 1
      mount -t proc proc "$tmp/proc"
      # The sid snapshot a mirror serves can be weeks old: its Release file's Valid-Until passed.
      chroot "$tmp" apt-get -q -o Acquire::Check-Valid-Until=false update >&2 || exit 1
      DEBIAN_FRONTEND=noninteractive chroot "$tmp" apt-get -q -o Acquire::Check-Valid-Until=false \
          install -y --no-install-recommends mysql-server-core mysql-client-core >&2 || exit 1
      umount "$tmp/proc"
      mv "$tmp" "$MYSQL_ROOT"
    fi
    mkdir -p "$MYSQL_ROOT/run/mysqld" "$MYSQL_ROOT/var/lib/mysqlleader"
    mountpoint -q "$MYSQL_ROOT/proc" || mount -t proc proc "$MYSQL_ROOT/proc"
    sweep_mysql_leftovers "$who"
  ) 9>"$(dirname "$MYSQL_ROOT")/.mysql-root.lock"
}

# sweep_mysql_leftovers WHO: removes what servers of runs that were killed before they could stop
# them left inside the MySQL root (a data directory is 100-250 MB, out of sight under /var/cache):
# every entry of $MYSQL_ROOT/var/lib/mysqlleader whose data directory no running mysqld names
# in its --datadir and that nothing has changed for an hour (so never a server being set up).
sweep_mysql_leftovers() {
  local who=$1 base=$MYSQL_ROOT/var/lib/mysqlleader live entry id size freed=0
  [ -d "$base" ] || return 0
  live=$(cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n' | sed -n 's|^--datadir=/var/lib/mysqlleader/||p' | sort -u || true)
  for entry in "$base"/*; do
    [ -e "$entry" ] || continue
    id=$(basename "$entry")
    id=${id%.tmp}; id=${id%.err}; id=${id%.pid}; id=${id%-tls}
    grep -qxF -- "$id" <<<"$live" && continue
    [ -n "$(find "$entry" -maxdepth 0 -mmin +60 2>/dev/null)" ] || continue
    # A run stopping its own server may remove the entry meanwhile: never fail for that.
    size=$(du -sm "$entry" 2>/dev/null | cut -f1 || true)
    rm -rf "$entry" 2>/dev/null || true
    freed=$((freed + ${size:-0}))
  done
  [ "$freed" -eq 0 ] || echo "$who: removed $freed MB that servers of killed runs left in $base" >&2
}

# mysql_client ARGS...: MySQL's own command-line client, from the MySQL root (reads stdin).
mysql_client() {
  chroot "$MYSQL_ROOT" mysql --no-defaults "$@"
}

# url_sql WHO ARGS...: the command-line client of the test server run against the account, host
# and port of MYSQLLEADER_TEST_URL (mysql://user:pass@host:port/db) over TCP, with ARGS (a
# database name, -e, -N ...): MySQL's own client when MYSQLLEADER_TEST_KIND=mysql
# (MYSQLLEADER_TEST_SQL_CLIENT, set by scripts/testdb.sh), else mariadb or mysql from PATH. The
# client's warning about a password on the command line is left out of its stderr.
url_sql() {
  local who=$1 client rest creds hostport; shift
  if [ "${MYSQLLEADER_TEST_KIND:-mariadb}" = mysql ]; then
    client=${MYSQLLEADER_TEST_SQL_CLIENT:?MYSQLLEADER_TEST_SQL_CLIENT: the MySQL client of scripts/testdb.sh}
  else
    client=$(find_prog mariadb mysql) || { echo "$who: no mariadb/mysql client" >&2; return 2; }
  fi
  rest=${MYSQLLEADER_TEST_URL#mysql://}; creds=${rest%%@*}; hostport=${rest#*@}; hostport=${hostport%%/*}
  "$client" --protocol=TCP -h "${hostport%%:*}" -P "${hostport##*:}" -u "${creds%%:*}" -p"${creds#*:}" "$@" \
    2> >(grep -v 'Using a password' >&2)
}
