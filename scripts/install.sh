#!/usr/bin/env bash
# Installs the C SDK (what `make dist` puts in its tarball) under a prefix:
#
#   scripts/install.sh PREFIX        e.g. scripts/install.sh /usr/local   (make install PREFIX=...)
#
#   PREFIX/bin/mysqlleader                      the command-line tool
#   PREFIX/lib/libmysqlleader.so.<version>     SONAME libmysqlleader.so.<abi> (0.<minor> for 0.x)
#   PREFIX/lib/libmysqlleader.so.<abi>, PREFIX/lib/libmysqlleader.so   (symbolic links)
#   PREFIX/lib/libmysqlleader.a
#   PREFIX/include/mysqlleader.h
#   PREFIX/lib/pkgconfig/mysqlleader.pc, mysqlleader-static.pc   (with PREFIX written in)
#   PREFIX/share/doc/mysqlleader/LICENSE-MIT, LICENSE-APACHE
#
# then: cc app.c $(pkg-config --cflags --libs mysqlleader)          (shared; run `ldconfig` when
#       PREFIX/lib is a system directory, else give the loader the path: -Wl,-rpath,PREFIX/lib)
#   or: cc app.c $(pkg-config --cflags --libs mysqlleader-static)   (libmysqlleader.a linked in)
#   or: cc -static app.c $(pkg-config --static --cflags --libs mysqlleader)   (fully static)
#
# The files come from scripts/dist.sh's SDK tree (debug info stripped, SONAME set), which builds
# the release library and tool first (cargo build --release --lib --bin mysqlleader) unless
# MYSQLLEADER_SKIP_BUILD=1; CARGO_TARGET_DIR is honoured. DESTDIR (for packaging) is put in front of every installed path,
# never into the .pc files; LIBDIR overrides PREFIX/lib.
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

# The SDK tree (its last line on stdout is the directory).
sdk=$(scripts/dist.sh sdk-tree | tail -n 1)
[ -d "$sdk/lib" ] || { echo "install: scripts/dist.sh made no SDK tree" >&2; exit 2; }
version=$(sed -n 's/^Version: *//p' "$sdk/lib/pkgconfig/mysqlleader.pc")

install -d "$destdir$libdir" "$destdir$libdir/pkgconfig" "$destdir$prefix/include" "$destdir$prefix/bin" \
           "$destdir$prefix/share/doc/mysqlleader"
install -m 0755 "$sdk/bin/mysqlleader" "$destdir$prefix/bin/mysqlleader"
install -m 0644 "$sdk/share/doc/mysqlleader/LICENSE-MIT" "$sdk/share/doc/mysqlleader/LICENSE-APACHE" \
        "$destdir$prefix/share/doc/mysqlleader/"
# The library and its links, as in the tarball (cp -P keeps a link a link).
real=libmysqlleader.so.$version
install -m 0755 "$sdk/lib/$real" "$destdir$libdir/$real"
for link in "$sdk"/lib/libmysqlleader.so*; do
  [ -L "$link" ] || continue
  rm -f "$destdir$libdir/$(basename "$link")"
  cp -P "$link" "$destdir$libdir/"
done
install -m 0644 "$sdk/lib/libmysqlleader.a" "$destdir$libdir/libmysqlleader.a"
install -m 0644 "$sdk/include/mysqlleader.h" "$destdir$prefix/include/mysqlleader.h"
for pc in mysqlleader mysqlleader-static; do
  # The relocatable prefix of the tarball becomes the real one.
  sed -e "s|^prefix=.*|prefix=$prefix|" -e "s|^libdir=.*|libdir=$libdir|" \
      "$sdk/lib/pkgconfig/$pc.pc" >"$destdir$libdir/pkgconfig/$pc.pc"
  chmod 0644 "$destdir$libdir/pkgconfig/$pc.pc"
done

echo "install: mysqlleader $version installed under $destdir$prefix"
echo "install: use it with  PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs mysqlleader"
