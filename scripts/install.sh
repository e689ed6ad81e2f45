#!/usr/bin/env bash
# Installs the C library for use by C programs (and the Python and Go bindings):
#
#   scripts/install.sh PREFIX        e.g. scripts/install.sh /usr/local
#
#   PREFIX/lib/libmysqlleader.so, PREFIX/lib/libmysqlleader.a
#   PREFIX/include/mysqlleader.h
#   PREFIX/lib/pkgconfig/mysqlleader.pc  (from mysqlleader.pc.in, with PREFIX and the version)
#
# then: cc app.c $(pkg-config --cflags --libs mysqlleader)
#   or: cc app.c $(pkg-config --static --cflags --libs mysqlleader)   (links libmysqlleader.a
#       when the .so is not found first; or pass PREFIX/lib/libmysqlleader.a directly)
#
# Builds the release library first (cargo build --release --lib) unless MYSQLLEADER_SKIP_BUILD=1.
# DESTDIR (for packaging) is put in front of every installed path, never into the .pc file;
# LIBDIR overrides PREFIX/lib.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 PREFIX   (e.g. $0 /usr/local)" >&2
  exit 2
fi
prefix=${1%/}
case "$prefix" in
  /*) ;;
  *) prefix="$(pwd)/$prefix" ;;
esac
libdir=${LIBDIR:-$prefix/lib}
destdir=${DESTDIR:-}

if [ "${MYSQLLEADER_SKIP_BUILD:-0}" != 1 ]; then
  "${CARGO:-cargo}" build --release --lib
fi

# The version of the package: the first `version = "..."` of Cargo.toml (the [package] one).
version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || { echo "install: no version in Cargo.toml" >&2; exit 2; }

for f in target/release/libmysqlleader.so target/release/libmysqlleader.a include/mysqlleader.h; do
  [ -f "$f" ] || { echo "install: $f is missing (build first)" >&2; exit 2; }
done

install -d "$destdir$libdir" "$destdir$libdir/pkgconfig" "$destdir$prefix/include"
install -m 0755 target/release/libmysqlleader.so "$destdir$libdir/libmysqlleader.so"
install -m 0644 target/release/libmysqlleader.a "$destdir$libdir/libmysqlleader.a"
install -m 0644 include/mysqlleader.h "$destdir$prefix/include/mysqlleader.h"
sed -e "s|@PREFIX@|$prefix|g" -e "s|@LIBDIR@|$libdir|g" -e "s|@VERSION@|$version|g" \
    mysqlleader.pc.in >"$destdir$libdir/pkgconfig/mysqlleader.pc"
chmod 0644 "$destdir$libdir/pkgconfig/mysqlleader.pc"

echo "install: mysqlleader $version installed under $destdir$prefix"
echo "install: use it with  PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs mysqlleader"
