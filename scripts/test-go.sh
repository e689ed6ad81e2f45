#!/usr/bin/env bash
# The Go binding's tests (bindings/go), against a real server.
#
#   scripts/test-go.sh [GO TEST ARGS...]        e.g. scripts/test-go.sh -run TestThreeProcesses -v
#
# 1. builds the release library when needed (scripts/build-tests.sh, as `make test`: a no-op after it):
#    the package links target/release/libmysqlleader.a through cgo;
# 2. go vet ./... (also with the build tag mysqlleader_dynamic);
# 3. builds the example program (examples/go/elect, its own module) both ways, checks with ldd
#    that the default (static) build needs no libmysqlleader at run time and the
#    mysqlleader_dynamic build does, and runs it against the server (it must exit 0);
# 4. go test -race -count=1 ./... against MYSQLLEADER_TEST_URL. When that is not set, it runs
#    itself again under scripts/testdb.sh, which starts a throwaway mariadbd and stops it;
# 5. the same (vet, then test -race) in bindings/go/sqldrivertest, a test-only module of its own:
#    Elector.Fence on a transaction of github.com/go-sql-driver/mysql.
#
# The package needs nothing beyond the standard library; the test module's driver comes from the
# Go module proxy as usual (once; then from the module cache).
# Exits non-zero when anything fails, including the package's tests not running at all.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ -z "${MYSQLLEADER_TEST_URL:-}" ]; then
  exec scripts/testdb.sh run "$0" "$@"
fi

say() { echo "test-go: $*" >&2; }

command -v go >/dev/null 2>&1 || { say "go is not installed (https://go.dev/dl/)"; exit 2; }
say "$(go version)"

# 1. The library the package links.
# The same build as `make build` (every target: a no-op after it). A narrower one (--lib) would
# resolve other features, rebuild the library in place, and pull it from under the test parts
# running beside this one (scripts/test-all.sh).
say "scripts/build-tests.sh"
scripts/build-tests.sh

cd "$root/bindings/go"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mysqlleader-go.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# 2. Vet, both link modes (the package, then the example module).
say "go vet ./... (bindings/go, examples/go/elect)"
go vet ./...
go vet -tags mysqlleader_dynamic ./...
(cd "$root/examples/go/elect" && go vet ./...)

# 3. Static by default: a built program needs no libmysqlleader at run time.
say "go build examples/go/elect (static, then -tags mysqlleader_dynamic)"
(cd "$root/examples/go/elect" && go build -o "$tmp/elect" . && go build -tags mysqlleader_dynamic -o "$tmp/elect-dynamic" .)
# (ldd's output is read whole first: `ldd | grep -q` under pipefail fails when grep stops early
# and ldd dies of SIGPIPE.)
static_deps=$(ldd "$tmp/elect")
dynamic_deps=$(ldd "$tmp/elect-dynamic")
if grep -q libmysqlleader <<<"$static_deps"; then
  ldd "$tmp/elect" >&2
  say "the static build needs libmysqlleader at run time"
  exit 1
fi
if ! grep -q 'libmysqlleader.so => /' <<<"$dynamic_deps"; then
  ldd "$tmp/elect-dynamic" >&2
  say "the mysqlleader_dynamic build does not load target/release/libmysqlleader.so"
  exit 1
fi
say "static example: $(ldd "$tmp/elect" | awk '{print $1}' | tr '\n' ' ')"
say "running examples/go/elect against the test server"
MYSQLLEADER_URL=$MYSQLLEADER_TEST_URL "$tmp/elect" -migrate || { say "examples/go/elect failed"; exit 1; }

# 4. The tests, with the race detector.
say "go test -race -count=1 ./... $*"
status=0
go test -race -count=1 -timeout 20m "$@" ./... 2>&1 | tee "$tmp/test.log" || status=$?
if [ "$status" -ne 0 ]; then
  say "failed (go test exit status $status)"
  exit "$status"
fi
if ! grep -Eq '^ok[[:space:]]+github.com/mysqlleader/mysqlleader/bindings/go[[:space:]]' "$tmp/test.log"; then
  say "the package's tests did not run"
  exit 1
fi

# 5. Elector.Fence with a real database/sql driver, in a module of its own (so that the package's
# go.mod requires no driver and no newer Go).
say "bindings/go/sqldrivertest: go vet, go test -race -count=1 $*"
cd "$root/bindings/go/sqldrivertest"
go vet ./...
status=0
go test -race -count=1 -timeout 5m "$@" ./... 2>&1 | tee "$tmp/test-driver.log" || status=$?
if [ "$status" -ne 0 ]; then
  say "sqldrivertest failed (go test exit status $status)"
  exit "$status"
fi
if ! grep -Eq '^ok[[:space:]]+github.com/mysqlleader/mysqlleader/bindings/go/sqldrivertest[[:space:]]' "$tmp/test-driver.log"; then
  say "the sqldrivertest tests did not run"
  exit 1
fi
say "passed"
