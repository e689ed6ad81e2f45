# scripts/lib.sh — shell helpers shared by the scripts that start servers or need a package
# (testdb.sh, galera.sh, replication-experiment.sh, profile-calls.sh). Sourced, not run:
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
  DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2
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
