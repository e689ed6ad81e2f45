#!/usr/bin/env bash
# The distribution (`make dist`), tested the way a user gets it: from a temporary directory
# outside the repository, against a real server (`make test-dist`, part of `make test`).
#
#   scripts/test-dist.sh
#
# 0. scripts/dist.sh (reuses the release build), then a check that target/dist holds exactly the
#    contract's artifacts: the SDK tarball (its file list, SONAME, no debug info, links, the
#    tool, the licenses), one manylinux wheel (the licenses in its .dist-info), go/ (the
#    licenses at its root) and java/ (the jar carries the SDK's library and, in META-INF, the
#    licenses); every license file is the repository's; the SDK's library and tool and the
#    wheel's library require no GLIBC_ symbol version newer than scripts/dist.sh's `glibc=`
#    (2.17), and the wheel is tagged for that glibc;
# 1. C: `make install PREFIX=<temp>`: bin/mysqlleader runs from there with a bare environment
#    (--help, --version, then migrate, campaign and resign against the server), the licenses are
#    under share/doc/mysqlleader; then bindings/c/example.c copied out and built with
#    pkg-config three ways — shared (mysqlleader), static archive (mysqlleader-static) and fully
#    static (cc -static, pkg-config --static mysqlleader) — each run as one elector against the
#    server until it leads, then stopped with SIGINT (it resigns), and once more linked by zig
#    (dist's) against glibc 2.17's symbol versions with the static archive, so that the archive
#    (the Go module's too) is shown to link for that glibc; the unpacked tarball's relocatable
#    .pc files are checked too;
# 2. Python: the wheel into a fresh virtualenv with no cargo or rustc on PATH (pip --no-index,
#    so nothing is built), then two electors of one service: one leads, the other sees it;
# 3. Go: a new module in a temporary directory that requires the binding and replaces it with
#    target/dist/go (GOPROXY=off: nothing downloaded), built statically by default, fully
#    static, and with -tags mysqlleader_dynamic against the SDK (pkg-config), each run as an
#    elector; CGO_ENABLED=0 and a module directory without its library
#    must fail with a message that says what to do;
# 4. Rust: the package holds every migration of sql/, and builds from its packaged files alone
#    (`cargo package`, then a release build of what it packed, as dist builds; `make
#    release-check` is the registry's own dry run).
#
# When MYSQLLEADER_TEST_URL is not set it runs itself again under scripts/testdb.sh, which starts
# a throwaway mariadbd and stops it. Ends with "N passed, M failed"; exits non-zero on a failure.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ -z "${MYSQLLEADER_TEST_URL:-}" ]; then
  exec scripts/testdb.sh run "$0" "$@"
fi

say() { echo "test-dist: $*" >&2; }

target=${CARGO_TARGET_DIR:-$root/target}
case "$target" in /*) ;; *) target="$root/$target" ;; esac
dist=$target/dist
version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
minor=${version#*.}; minor=${minor%%.*}
major=${version%%.*}
if [ "$major" = 0 ]; then abi="0.$minor"; else abi=$major; fi
sdk_name=mysqlleader-$version-linux-x86_64
# The oldest glibc the native files support: scripts/dist.sh's `glibc=` line.
glibc=$(sed -n 's/^glibc=\([0-9.]*\)$/\1/p' scripts/dist.sh)
[ -n "$glibc" ] || { say "scripts/dist.sh has no glibc= line"; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mysqlleader-dist.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0
# Every check's output is kept here for reading after the run.
logs=$target/dist-build/test-logs
rm -rf "$logs"
mkdir -p "$logs"
# check NAME FUNCTION: runs one check in a subshell (its cd and exports stay there) that stops at
# the first failing command and kills the programs it started when it ends; the output goes to
# $tmp/NAME.log, shown when it fails.
check() {
  local name=$1; shift
  local log=$tmp/$name.log rc start=$SECONDS
  say "$name"
  set +e
  (set -e; trap 'kill -9 $(jobs -pr) 2>/dev/null || true' EXIT; "$@") >"$log" 2>&1
  rc=$?
  set -e
  cp "$log" "$logs/"
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    say "$name passed in $((SECONDS - start)) s"
  else
    failed=$((failed + 1))
    sed 's/^/    /' "$log" >&2
    say "FAILED: $name (exit status $rc)"
  fi
}
fail() { echo "$*"; return 1; }

# Where the artifacts check unpacks the SDK tarball: a fixed path, because Go's build cache does
# not key on what `#cgo pkg-config` prints (a path that changed between runs would stay cached).
unpacked=$target/dist-build/test-unpacked
rm -rf "$unpacked"

# A service id no other run of this test uses: elections of one run never meet another's.
run_id=dist-$$-$RANDOM

# is_static FILE: FILE is an executable without a dynamic section (needs no shared library).
is_static() {
  file "$1"
  if readelf -d "$1" | grep NEEDED >/dev/null; then fail "$1 loads shared libraries: $(readelf -d "$1" | grep NEEDED)"; fi
  if readelf -l "$1" | grep INTERP >/dev/null; then fail "$1 names a program interpreter (it is dynamic)"; fi
}

# glibc_ok FILE...: every FILE requires no GLIBC_ symbol version newer than $glibc (the versions
# its .gnu.version_r names, which the loader checks against the system's libc).
glibc_ok() {
  local f needed
  for f in "$@"; do
    needed=$(readelf -W -V "$f" | sed -n 's/.*Name: GLIBC_\([0-9][0-9.]*\) .*/\1/p' | sort -V | tail -n 1)
    [ -n "$needed" ] || fail "$f requires no GLIBC_ symbol version (not a dynamic ELF file?)"
    echo "$f requires glibc $needed"
    [ "$(printf '%s\n' "$needed" "$glibc" | sort -V | tail -n 1)" = "$glibc" ] \
      || fail "$f requires GLIBC_$needed, newer than $glibc: $(readelf -W --dyn-syms "$f" | grep -o "[^ ]*@GLIBC_$needed" | sort -u | tr '\n' ' ')"
  done
}

# elect NAME PROGRAM...: runs an elector program (MYSQLLEADER_URL, argv: SERVICE NODE LEASE_MS)
# until it prints that it leads, then sends SIGINT and expects it to resign and exit 0. Both
# waits are bounded (60 s) only so that a hung program fails the check instead of hanging it.
elect() {
  local name=$1; shift
  local out=$tmp/$name.out pid i
  : >"$out"
  MYSQLLEADER_URL=$MYSQLLEADER_TEST_URL "$@" "$run_id-$name" node-1 3000 >"$out" 2>&1 &
  pid=$!
  for ((i = 0; i < 600; i++)); do
    grep -q "leading at term\|working as leader of term" "$out" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if ! grep -q "leading at term\|working as leader of term" "$out"; then
    cat "$out"
    fail "$name: never led"
  fi
  kill -INT "$pid"
  for ((i = 0; i < 600; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    cat "$out"
    fail "$name: still running 60 s after SIGINT"
  fi
  local rc=0
  wait "$pid" || rc=$?
  cat "$out"
  [ "$rc" -eq 0 ] || fail "$name: exit status $rc after SIGINT"
}

# ---------------------------------------------------------------------------------------------
# 0. The artifacts.
check dist scripts/dist.sh
if [ "$failed" -ne 0 ]; then
  echo "$passed passed, $failed failed"
  exit 1
fi

artifacts() {
  local listing expected
  listing=$(cd "$dist" && ls -1 | sort)
  local wheels
  wheels=$(cd "$dist" && ls -1 mysqlleader-"$version"-py3-none-*manylinux*.whl)
  [ "$(echo "$wheels" | wc -l)" -eq 1 ] || fail "expected one manylinux wheel, found: $wheels"
  expected=$(printf '%s\n' "$sdk_name.tar.gz" "$wheels" go java | sort)
  [ "$listing" = "$expected" ] || fail "target/dist holds:"$'\n'"$listing"$'\n'"expected:"$'\n'"$expected"
  # The wheel's tag is the PEP 600 one of dist's glibc (with its legacy alias for 2.17,
  # manylinux2014), and auditwheel confirms it from the library's symbol versions.
  local tag=manylinux_${glibc/./_}_x86_64
  grep -E "^mysqlleader-$version-py3-none-([a-z0-9_]+\.)*$tag(\.[a-z0-9_]+)*\.whl$" <<<"$wheels" >/dev/null \
    || fail "the wheel $wheels is not tagged $tag"
  if [ "$glibc" = 2.17 ]; then
    grep -E -- "-py3-none-([a-z0-9_]+\.)*manylinux2014_x86_64[.]" <<<"$wheels" >/dev/null \
      || fail "the wheel $wheels lacks the manylinux2014_x86_64 alias of $tag"
  fi
  "$target/dist-tools/bin/auditwheel" show "$dist/$wheels" | tee "$tmp/auditwheel.txt"
  tr -s ' \n' ' ' <"$tmp/auditwheel.txt" | grep "is consistent with the following platform tag: \"$tag\"" >/dev/null \
    || fail "auditwheel does not confirm the tag $tag"
  # The tarball, file by file (links with their targets).
  local files
  files=$(tar -tvzf "$dist/$sdk_name.tar.gz" | awk '{ $1=$2=$3=$4=$5=""; sub(/^ +/, ""); print }' | sort)
  expected=$(printf '%s\n' "$sdk_name/" "$sdk_name/include/" "$sdk_name/include/mysqlleader.h" \
      "$sdk_name/lib/" "$sdk_name/lib/libmysqlleader.a" \
      "$sdk_name/lib/libmysqlleader.so -> libmysqlleader.so.$abi" \
      "$sdk_name/lib/libmysqlleader.so.$abi -> libmysqlleader.so.$version" \
      "$sdk_name/lib/libmysqlleader.so.$version" \
      "$sdk_name/lib/pkgconfig/" "$sdk_name/lib/pkgconfig/mysqlleader-static.pc" \
      "$sdk_name/lib/pkgconfig/mysqlleader.pc" \
      "$sdk_name/bin/" "$sdk_name/bin/mysqlleader" \
      "$sdk_name/share/" "$sdk_name/share/doc/" "$sdk_name/share/doc/mysqlleader/" \
      "$sdk_name/share/doc/mysqlleader/LICENSE-APACHE" "$sdk_name/share/doc/mysqlleader/LICENSE-MIT" | sort)
  [ "$files" = "$expected" ] || fail "the tarball holds:"$'\n'"$files"$'\n'"expected:"$'\n'"$expected"
  mkdir -p "$unpacked"
  tar -xzf "$dist/$sdk_name.tar.gz" -C "$unpacked"
  local so=$unpacked/$sdk_name/lib/libmysqlleader.so.$version
  readelf -d "$so" | grep "(SONAME).*\[libmysqlleader.so.$abi\]" >/dev/null \
    || fail "$so: SONAME is not libmysqlleader.so.$abi: $(readelf -d "$so" | grep SONAME)"
  if readelf -S "$so" | grep '\.debug_' >/dev/null; then fail "$so carries debug info"; fi
  if readelf -S "$unpacked/$sdk_name/lib/libmysqlleader.a" 2>/dev/null | grep '\.debug_' >/dev/null; then
    fail "libmysqlleader.a carries debug info"
  fi
  local tool=$unpacked/$sdk_name/bin/mysqlleader
  [ -x "$tool" ] || fail "$tool is not executable"
  glibc_ok "$so" "$tool"
  # (.debug_gdb_scripts, Rust's pretty-printer hook, is loaded data, not debug information.)
  if readelf -W -S "$tool" | grep -E '\.debug_(info|line|str|abbrev|ranges|loc)' >/dev/null; then fail "$tool carries debug info"; fi
  "$tool" --version | grep -qx "mysqlleader $version" || fail "$tool --version: $("$tool" --version)"
  # The licenses: the repository's files, in the tarball, the wheel, the Go module and the jar.
  local lic wheel_dir
  for lic in LICENSE-MIT LICENSE-APACHE; do
    cmp "$lic" "$unpacked/$sdk_name/share/doc/mysqlleader/$lic" || fail "the tarball's $lic"
    cmp "$lic" "$dist/go/$lic" || fail "go/$lic"
  done
  mkdir -p "$unpacked/wheel"
  (cd "$unpacked/wheel" && unzip -q "$dist/$wheels")
  wheel_dir=$unpacked/wheel/mysqlleader-$version.dist-info
  for lic in LICENSE-MIT LICENSE-APACHE; do
    cmp "$lic" "$wheel_dir/licenses/$lic" || fail "the wheel's .dist-info/licenses/$lic"
  done
  grep -x "License-File: LICENSE-MIT" "$wheel_dir/METADATA" || fail "the wheel's METADATA names no License-File"
  grep -x "License-Expression: MIT OR Apache-2.0" "$wheel_dir/METADATA" || fail "the wheel's METADATA has no License-Expression"
  glibc_ok "$unpacked/wheel/mysqlleader/libmysqlleader.so"
  # The header is the committed one; the Go module carries the same header and archive.
  cmp include/mysqlleader.h "$unpacked/$sdk_name/include/mysqlleader.h"
  cmp include/mysqlleader.h "$dist/go/include/mysqlleader.h"
  cmp "$unpacked/$sdk_name/lib/libmysqlleader.a" "$dist/go/lib/libmysqlleader.a"
  # java/: the jar, its sources and its pom; the jar carries the SDK's stripped library where JNA
  # looks on the class path (scripts/test-java.sh runs a project outside the repository on it);
  # and the Spring Boot starter's jar, sources and pom.
  listing=$(cd "$dist/java" && ls -1 | sort)
  expected=$(printf '%s\n' "mysqlleader-$version.jar" "mysqlleader-$version-sources.jar" "mysqlleader-$version.pom" \
    "mysqlleader-spring-boot-starter-$version.jar" "mysqlleader-spring-boot-starter-$version-sources.jar" \
    "mysqlleader-spring-boot-starter-$version.pom" | sort)
  [ "$listing" = "$expected" ] || fail "target/dist/java holds:"$'\n'"$listing"$'\n'"expected:"$'\n'"$expected"
  mkdir -p "$unpacked/jar"
  (cd "$unpacked/jar" && unzip -q "$dist/java/mysqlleader-$version.jar")
  cmp "$so" "$unpacked/jar/linux-x86-64/libmysqlleader.so" || fail "the jar's library is not the SDK's"
  [ -f "$unpacked/jar/io/mysqlleader/Elector.class" ] || fail "the jar lacks io/mysqlleader/Elector.class"
  for lic in LICENSE-MIT LICENSE-APACHE; do
    cmp "$lic" "$unpacked/jar/META-INF/$lic" || fail "the jar's META-INF/$lic"
  done
  if unzip -l "$dist/java/mysqlleader-$version-sources.jar" | grep '\.so$' >/dev/null; then fail "the sources jar carries a library"; fi
  grep -q "<version>$version</version>" "$dist/java/mysqlleader-$version.pom" || fail "the pom is not version $version"
  mkdir -p "$unpacked/starter"
  (cd "$unpacked/starter" && unzip -q "$dist/java/mysqlleader-spring-boot-starter-$version.jar")
  grep -qx 'io.mysqlleader.spring.MysqlLeaderAutoConfiguration' \
    "$unpacked/starter/META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports" \
    || fail "the starter's jar does not register io.mysqlleader.spring.MysqlLeaderAutoConfiguration"
  [ -f "$unpacked/starter/io/mysqlleader/spring/LeaderOnly.class" ] || fail "the starter's jar lacks io/mysqlleader/spring/LeaderOnly.class"
  [ -f "$unpacked/jar/io/mysqlleader/micrometer/MysqlLeaderMetrics.class" ] || fail "the jar lacks io/mysqlleader/micrometer/MysqlLeaderMetrics.class"
  grep -q "<version>$version</version>" "$dist/java/mysqlleader-spring-boot-starter-$version.pom" \
    || fail "the starter's pom is not version $version"
  ls -l "$dist" "$dist/go/lib" "$dist/java"
}
check artifacts artifacts

# ---------------------------------------------------------------------------------------------
# 1. C, from an installed prefix, with pkg-config.
c_sdk() {
  local prefix=$tmp/prefix c=$tmp/c
  make --no-print-directory install PREFIX="$prefix"
  # The command-line tool from the prefix, with nothing of the build around: a bare environment.
  local tool=$prefix/bin/mysqlleader out lic
  env -i PATH=/usr/bin:/bin "$tool" --help >"$tmp/cli-help.txt" || fail "$tool --help failed"
  grep -q "^Usage: mysqlleader" "$tmp/cli-help.txt" || fail "$tool --help: $(cat "$tmp/cli-help.txt")"
  out=$(env -i PATH=/usr/bin:/bin "$tool" --version) || fail "$tool --version failed"
  [ "$out" = "mysqlleader $version" ] || fail "$tool --version printed '$out', not 'mysqlleader $version'"
  env -i PATH=/usr/bin:/bin MYSQLLEADER_URL="$MYSQLLEADER_TEST_URL" "$tool" migrate
  env -i PATH=/usr/bin:/bin MYSQLLEADER_URL="$MYSQLLEADER_TEST_URL" "$tool" campaign "$run_id-cli" node-1 --lease 5s
  env -i PATH=/usr/bin:/bin MYSQLLEADER_URL="$MYSQLLEADER_TEST_URL" "$tool" resign "$run_id-cli" node-1
  for lic in LICENSE-MIT LICENSE-APACHE; do
    cmp "$lic" "$prefix/share/doc/mysqlleader/$lic" || fail "make install: share/doc/mysqlleader/$lic"
  done
  mkdir -p "$c"
  cp bindings/c/example.c "$c/"
  cd "$c"
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  local warn=(-std=c11 -Wall -Wextra -Wpedantic -Werror)
  # shellcheck disable=SC2046
  cc "${warn[@]}" example.c $(pkg-config --cflags --libs mysqlleader) -Wl,-rpath,"$prefix/lib" -o example_shared
  readelf -d example_shared | grep "(NEEDED).*\[libmysqlleader.so.$abi\]" >/dev/null \
    || fail "example_shared does not load libmysqlleader.so.$abi"
  ldd example_shared | grep "libmysqlleader.so.$abi => $prefix/lib/" >/dev/null \
    || fail "example_shared does not find the installed library: $(ldd example_shared)"
  # shellcheck disable=SC2046
  cc "${warn[@]}" example.c $(pkg-config --cflags --libs mysqlleader-static) -o example_static
  if ldd example_static | grep libmysqlleader >/dev/null; then fail "example_static loads libmysqlleader"; fi
  # Fully static: the linker's warnings about getaddrinfo/getpwuid_r in static glibc are expected.
  # shellcheck disable=SC2046
  cc -static "${warn[@]}" example.c $(pkg-config --static --cflags --libs mysqlleader) -o example_full_static
  is_static example_full_static
  # The archive linked for glibc $glibc: zig's C compiler (dist's tools) against that glibc's
  # symbol versions, with zig's unwinder in place of libgcc_s.
  # shellcheck disable=SC2046
  "$target/dist-tools/bin/python" -m ziglang cc -target "x86_64-linux-gnu.$glibc" "${warn[@]}" example.c \
      $(pkg-config --static --cflags --libs mysqlleader-static) -lunwind -o example_old_glibc
  glibc_ok example_old_glibc
  elect c-shared ./example_shared
  elect c-static ./example_static
  elect c-full-static ./example_full_static
  elect c-old-glibc ./example_old_glibc
  # The tarball unpacked anywhere works as it is: relocatable .pc files.
  export PKG_CONFIG_PATH=$unpacked/$sdk_name/lib/pkgconfig
  # shellcheck disable=SC2046
  cc "${warn[@]}" example.c $(pkg-config --cflags --libs mysqlleader) -o example_unpacked
}
check c-sdk c_sdk

# ---------------------------------------------------------------------------------------------
# 2. Python: the wheel in a fresh virtualenv, no Rust toolchain on PATH.
python_wheel() {
  local wheel venv=$tmp/venv path="" dir
  wheel=$(ls "$dist"/mysqlleader-"$version"-*.whl)
  # PATH without any directory that holds cargo or rustc.
  local IFS=:
  for dir in $PATH; do
    [ -x "$dir/cargo" ] || [ -x "$dir/rustc" ] || path=${path:+$path:}$dir
  done
  unset IFS
  env PATH="$path" bash -c '! command -v cargo && ! command -v rustc' || fail "cargo is still on PATH"
  "${PYTHON:-python3}" -m venv "$venv"
  cd "$tmp"
  env -u MYSQLLEADER_LIB -u PYTHONPATH PATH="$venv/bin:$path" PIP_DISABLE_PIP_VERSION_CHECK=1 \
    pip install --no-index "$wheel"
  env -u MYSQLLEADER_LIB -u PYTHONPATH PATH="$venv/bin:$path" SERVICE="$run_id-py" python - <<'PY'
import os, sys
import mysqlleader

lib = mysqlleader.library_path()
assert lib.startswith(sys.prefix), f"loaded {lib}, not the wheel's copy under {sys.prefix}"
print(f"mysqlleader {mysqlleader.__version__}, library {mysqlleader.version()} at {lib}")
url = os.environ["MYSQLLEADER_TEST_URL"]
service = os.environ["SERVICE"]
mysqlleader.migrate(url)
with mysqlleader.Elector(url, service, node_id="py-1", lease=3) as first:
    assert first.wait_for_leadership(timeout=60), "py-1 never led"
    assert first.is_leader and first.term >= 1, (first.is_leader, first.term)
    with mysqlleader.Elector(url, service, node_id="py-2", lease=3) as second:
        assert not second.wait_for_leadership(timeout=2), "py-2 leads beside py-1"
        assert second.leader_id == "py-1", second.leader_id
    print(f"py-1 leads {service} at term {first.term}; py-2 follows")
PY
}
check python-wheel python_wheel

# ---------------------------------------------------------------------------------------------
# 3. Go: a module outside the repository, against target/dist/go.
go_module() {
  command -v go >/dev/null 2>&1 || fail "go is not installed (https://go.dev/dl/)"
  local app=$tmp/goapp
  mkdir -p "$app"
  cat >"$app/go.mod" <<EOF
module example.com/distcheck

go 1.22

require github.com/mysqlleader/mysqlleader/bindings/go v0.0.0

replace github.com/mysqlleader/mysqlleader/bindings/go => $dist/go
EOF
  cat >"$app/main.go" <<'EOF'
// An elector that prints when it leads and resigns on SIGINT (argv: SERVICE NODE LEASE_MS).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"time"

	mysqlleader "github.com/mysqlleader/mysqlleader/bindings/go"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "distcheck:", err)
		os.Exit(1)
	}
}

func run() error {
	ms, err := strconv.Atoi(os.Args[3])
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	client, err := mysqlleader.Open(os.Getenv("MYSQLLEADER_URL"))
	if err != nil {
		return err
	}
	defer client.Close()
	if _, err := client.Migrate(ctx); err != nil {
		return err
	}
	elector, err := mysqlleader.NewElector(client, mysqlleader.ElectorConfig{
		ServiceID: os.Args[1], NodeID: os.Args[2], Lease: time.Duration(ms) * time.Millisecond,
	})
	if err != nil {
		return err
	}
	if err := elector.WaitForLeadership(ctx); err != nil {
		return err
	}
	fmt.Printf("node %s: working as leader of term %d\n", elector.NodeID(), elector.Term())
	<-ctx.Done()
	return elector.Close() // resigns
}
EOF
  cd "$app"
  export GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local
  go build -o distcheck .
  if ldd distcheck | grep libmysqlleader >/dev/null; then fail "the default Go build loads libmysqlleader"; fi
  go build -ldflags '-linkmode external -extldflags "-static"' -o distcheck_static . 2>"$tmp/go-static.warnings"
  is_static distcheck_static
  # -tags mysqlleader_dynamic: the shared library of a C SDK, found with pkg-config (here the
  # unpacked tarball of the artifacts check).
  local sdk_lib=$unpacked/$sdk_name/lib
  PKG_CONFIG_PATH=$sdk_lib/pkgconfig go build -tags mysqlleader_dynamic \
      -ldflags "-extldflags -Wl,-rpath,$sdk_lib" -o distcheck_dynamic .
  ldd distcheck_dynamic | grep "libmysqlleader.so.$abi => $sdk_lib/" >/dev/null \
    || fail "the mysqlleader_dynamic build does not load the SDK's library: $(ldd distcheck_dynamic)"
  elect go-static ./distcheck
  elect go-dynamic ./distcheck_dynamic
  elect go-full-static ./distcheck_static
  # Without cgo: the build stops with the one message that says what to do.
  local rc=0
  CGO_ENABLED=0 go build -o /dev/null . >"$tmp/nocgo.log" 2>&1 || rc=$?
  cat "$tmp/nocgo.log"
  [ "$rc" -ne 0 ] || fail "CGO_ENABLED=0 go build succeeded"
  grep -q "mysqlleader_needs_cgo__build_with_CGO_ENABLED_1" "$tmp/nocgo.log" \
    || fail "CGO_ENABLED=0: no message that names the fix"
  # A module directory without its library: the message names `make dist`.
  cp -r "$dist/go" "$tmp/go-nolib"
  rm "$tmp/go-nolib/lib/libmysqlleader.a"
  go mod edit -replace "github.com/mysqlleader/mysqlleader/bindings/go=$tmp/go-nolib"
  rc=0
  go build -o /dev/null . >"$tmp/nolib.log" 2>&1 || rc=$?
  cat "$tmp/nolib.log"
  [ "$rc" -ne 0 ] || fail "go build succeeded without lib/libmysqlleader.a"
  grep -q "lib/libmysqlleader.a is missing from this module directory.*make dist" "$tmp/nolib.log" \
    || fail "a missing library gives no message that names the fix"
}
check go-module go_module

# ---------------------------------------------------------------------------------------------
# 4. Rust: the crate packages and builds from its packaged files alone.
rust_package() {
  local list missing=0 f
  list=$(cargo package --list --allow-dirty)
  for f in sql/V*.sql include/mysqlleader.h Cargo.lock LICENSE-MIT LICENSE-APACHE; do
    if ! grep -qx "$f" <<<"$list"; then echo "the package lacks $f"; missing=1; fi
  done
  [ "$missing" -eq 0 ] || fail "files missing from the package"
  # --allow-dirty only when the working tree has uncommitted changes (a developer's checkout):
  # the package then holds the files as they are, which is what is being tested.
  local dirty=()
  if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
    dirty=(--allow-dirty)
    echo "the working tree has uncommitted changes: cargo package --allow-dirty"
  fi
  # The package, then a build of it from its files alone, as `cargo publish --dry-run` verifies
  # it, but in the release profile and this part's target directory, the way scripts/dist.sh
  # builds (cargo zigbuild for glibc $glibc, its tools and environment), whose dependencies dist
  # has built already (the dry run built every one again, in the dev profile: 2.5 minutes of a
  # 2-core machine in every `make test`). The dry run itself, with the registry's checks, is
  # `make release-check`, run where a release is made.
  cargo package --no-verify "${dirty[@]}"
  local crate="$target/package/mysqlleader-$version.crate"
  [ -f "$crate" ] || fail "cargo package wrote no $crate"
  mkdir -p "$tmp/package"
  tar -xzf "$crate" -C "$tmp/package"
  (cd "$tmp/package/mysqlleader-$version" && CARGO_TARGET_DIR="$target" PATH="$target/dist-tools/bin:$PATH" \
     LIBZ_SYS_STATIC=1 cargo-zigbuild zigbuild --release --target "x86_64-unknown-linux-gnu.$glibc" --lib)
}
check rust-package rust_package

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
