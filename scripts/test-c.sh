#!/usr/bin/env bash
# The C API's tests: builds the release library, builds bindings/c/example.c and
# bindings/c/test_mysqlleader.c with -Wall -Wextra -Wpedantic -Werror, links them once against
# the shared and once against the static library, and runs the tests against the server of
# MYSQLLEADER_TEST_URL under AddressSanitizer + LeakSanitizer; then runs the user example
# examples/c/elect.c the same way (it must exit 0). Exits non-zero on any failure,
# warning or leak, and ends with one line "N passed, M failed".
#
#   MYSQLLEADER_TEST_URL=mysql://user:pass@host:port/db scripts/test-c.sh
#   scripts/testdb.sh run scripts/test-c.sh        # with a throwaway server
#
# MYSQLLEADER_C_VALGRIND=1 adds a run of the shared build under valgrind (slow; needs valgrind).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

if [ -z "${MYSQLLEADER_TEST_URL:-}" ]; then
  echo "test-c: MYSQLLEADER_TEST_URL is not set; run \`scripts/testdb.sh run scripts/test-c.sh\` or \`make test\`" >&2
  echo "0 passed, 1 failed"
  exit 2
fi

CC=${CC:-cc}
CARGO=${CARGO:-cargo}
lib=target/release
out=bindings/c/build
mkdir -p "$out"

# 1. The library (cdylib + staticlib of the crate).
# (and the tool: scripts/install.sh below installs bin/mysqlleader too)
# The same build as `make test`'s (scripts/build-tests.sh: a no-op after it). A narrower one
# (--lib) would resolve other features, rebuild the library in place, and pull it from under the
# test parts running beside this one (scripts/test-all.sh).
CARGO=$CARGO scripts/build-tests.sh

# 2. Build. Warnings are errors; the C code is instrumented, the Rust library is not (its
#    allocations still go through the instrumented malloc, so LeakSanitizer sees them).
warn=(-std=c11 -Wall -Wextra -Wpedantic -Werror)
asan=(-g -O1 -fsanitize=address -fno-omit-frame-pointer)
inc=(-I include)
shared=(-L "$lib" -lmysqlleader -Wl,-rpath,"$here/$lib")
# What the library needs from the system when linked statically (Rust's std, and zlib for the
# MySQL protocol's compression); the same list is Libs.private in mysqlleader.pc.
static=("$lib/libmysqlleader.a" -lz -lpthread -ldl -lm)

echo "test-c: building with ${CC}" >&2
# The plain form a user types (no sanitizer), to show the committed header is enough.
"$CC" "${warn[@]}" "${inc[@]}" bindings/c/example.c "${shared[@]}" -o "$out/example_plain"
"$CC" "${warn[@]}" "${asan[@]}" "${inc[@]}" bindings/c/example.c "${shared[@]}" -o "$out/example_shared"
"$CC" "${warn[@]}" "${asan[@]}" "${inc[@]}" bindings/c/test_mysqlleader.c "${shared[@]}" -lpthread -lm -o "$out/test_shared"
"$CC" "${warn[@]}" "${asan[@]}" "${inc[@]}" bindings/c/example.c "${static[@]}" -o "$out/example_static"
"$CC" "${warn[@]}" "${asan[@]}" "${inc[@]}" bindings/c/test_mysqlleader.c "${static[@]}" -o "$out/test_static"
# The user example: elects, makes one fenced write, resigns (run in step 4).
"$CC" "${warn[@]}" "${asan[@]}" "${inc[@]}" examples/c/elect.c "${shared[@]}" -o "$out/elect_example"
# The static binaries really carry the library (no libmysqlleader.so needed at run time).
# (grep reads all of ldd's output: with -q, ldd could die of SIGPIPE and the check pass unseen.)
if ldd "$out/test_static" | grep libmysqlleader >/dev/null; then
  echo "test-c: $out/test_static is linked against libmysqlleader.so, not the static library" >&2
  exit 1
fi

# 3. The installed form: scripts/install.sh into a scratch prefix, then the example built the way a
#    user builds it, with pkg-config (shared) and with -Wl,-Bstatic (static); both must start.
prefix="$here/$out/prefix"
rm -rf "$prefix"
MYSQLLEADER_SKIP_BUILD=1 MYSQLLEADER_HOST_BUILD=1 scripts/install.sh "$prefix" >/dev/null
if command -v pkg-config >/dev/null 2>&1; then
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
  # shellcheck disable=SC2046
  "$CC" "${warn[@]}" bindings/c/example.c $(pkg-config --cflags --libs mysqlleader) \
      -Wl,-rpath,"$prefix/lib" -o "$out/example_installed"
  unset PKG_CONFIG_PATH
else
  "$CC" "${warn[@]}" -I "$prefix/include" bindings/c/example.c -L "$prefix/lib" -lmysqlleader \
      -Wl,-rpath,"$prefix/lib" -o "$out/example_installed"
fi
"$CC" "${warn[@]}" -I "$prefix/include" bindings/c/example.c -L "$prefix/lib" \
    -Wl,-Bstatic -lmysqlleader -Wl,-Bdynamic -lz -lpthread -ldl -lm -o "$out/example_installed_static"
for exe in example_installed example_installed_static; do
  rc=0
  "$out/$exe" >/dev/null 2>"$out/$exe.usage" || rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q '^usage:' "$out/$exe.usage"; then
    echo "test-c: $exe (built against the installed library) did not run (exit status $rc)" >&2
    exit 1
  fi
done

# 4. Run, each build with its own example as the second process of the failover tests.
# No leak suppressions: everything the library keeps for the life of the process (its runtime,
# the runtime's threads, process-wide caches) stays reachable from statics or live threads, which
# LeakSanitizer does not count as leaks.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=86${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

total_passed=0
total_failed=0
status=0
run() {
  local name=$1; shift
  local log="$out/$name.log" rc=0
  echo "test-c: running $name" >&2
  "$@" >"$log" 2>&1 || rc=$?
  cat "$log"
  local line
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1 || true)
  if [ -n "$line" ]; then
    total_passed=$((total_passed + ${line%% passed*}))
    local f=${line#*, }
    total_failed=$((total_failed + ${f%% failed*}))
  fi
  if [ "$rc" -ne 0 ] || [ -z "$line" ]; then
    echo "test-c: $name failed (exit status $rc)" >&2
    # A run that died or leaked counts as one more failure.
    if [ -z "$line" ] || [ "${line#*, }" = "0 failed" ]; then total_failed=$((total_failed + 1)); fi
    status=1
  fi
  # Sanitizer reports anywhere (also from the example child processes) are failures.
  if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)' "$log"; then
    echo "test-c: $name: sanitizer errors (see $log)" >&2
    status=1
  fi
}

# The 10,000 plain electors of one client (test_many_plain_electors_on_one_client): once, with
# the shared library.
run test_shared env MYSQLLEADER_C_MANY=1 "$out/test_shared" "$here/$out/example_shared"
run test_static "$out/test_static" "$here/$out/example_static"

# examples/c/elect.c against the test server: must exit 0, with no sanitizer report; one test.
echo "test-c: running examples/c/elect" >&2
rc=0
MYSQLLEADER_URL=$MYSQLLEADER_TEST_URL "$out/elect_example" --migrate >"$out/elect_example.log" 2>&1 || rc=$?
cat "$out/elect_example.log"
if [ "$rc" -eq 0 ] && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)' "$out/elect_example.log"; then
  total_passed=$((total_passed + 1))
else
  echo "test-c: examples/c/elect failed (exit status $rc)" >&2
  total_failed=$((total_failed + 1))
  status=1
fi

if [ "${MYSQLLEADER_C_VALGRIND:-0}" = 1 ]; then
  "$CC" "${warn[@]}" -g "${inc[@]}" bindings/c/test_mysqlleader.c "${shared[@]}" -lpthread -lm -o "$out/test_valgrind"
  # Definite and indirect leaks fail the run; "possibly lost" blocks are hash tables of
  # process-wide caches (a regex DFA cache of the MySQL protocol crate) seen through an interior
  # pointer, not leaks.
  run test_valgrind valgrind --quiet --error-exitcode=87 --leak-check=full \
      --errors-for-leak-kinds=definite,indirect "$out/test_valgrind" "$here/$out/example_plain"
fi

echo "${total_passed} passed, ${total_failed} failed"
exit "$status"
