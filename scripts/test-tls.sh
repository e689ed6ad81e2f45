#!/usr/bin/env bash
# TLS in every language, against a TLS-only throwaway server (scripts/testdb.sh start-tls:
# certificates made with openssl, require_secure_transport=ON, a REQUIRE X509 account):
#
# 1. Rust and the CLI: tests/tls.rs (each ssl-mode, a wrong CA, a wrong host name, a client
#    certificate, plaintext refused, a server without TLS refused, an election over TLS);
# 2. C: bindings/c/example.c elects over TLS as the X509 account with its client certificate, and
#    bindings/c/test_tls.c checks the same refusals as 1. through the C API;
# 3. Python (bindings/python/tls_tests): the same refusals as 1., and an election and a fenced
#    transaction over TLS as the X509 account;
# 4. Go: the same, in bindings/go/tls_test.go.
#
# Runs after test-c, test-python and test-go (it uses what they built). The plain server of
# `make test` (MYSQLLEADER_TEST_URL, when set) is the "server without TLS".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
say() { echo "test-tls: $*" >&2; }
target=${CARGO_TARGET_DIR:-$root/target}

if [ -z "${MYSQLLEADER_TEST_TLS_DIR:-}" ]; then
  export MYSQLLEADER_TEST_PLAIN_URL=${MYSQLLEADER_TEST_URL:-}
  exec scripts/testdb.sh run-tls "$0" "$@"
fi
[ -n "${MYSQLLEADER_TEST_PLAIN_URL:-}" ] || { say "MYSQLLEADER_TEST_PLAIN_URL is not set: run under make test (scripts/testdb.sh run)"; exit 2; }

enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
hostpath=${MYSQLLEADER_TEST_URL#*@}
x509_url="mysql://mlx509:mlx509@${hostpath%%\?*}?ssl-mode=VERIFY_IDENTITY&ssl-ca=$(enc "$MYSQLLEADER_TEST_TLS_DIR/ca.pem")&ssl-cert=$(enc "$MYSQLLEADER_TEST_TLS_DIR/client-cert.pem")&ssl-key=$(enc "$MYSQLLEADER_TEST_TLS_DIR/client-key.pem")"
export MYSQLLEADER_TLS_X509_URL=$x509_url
passed=0

say "1. Rust and the CLI (tests/tls.rs)"
cargo test --release --test tls -- --ignored --test-threads=1
passed=$((passed + 1))

say "2. C: the example elects over TLS with a client certificate"
"$target/release/mysqlleader" --url "$x509_url" migrate >/dev/null
cc -std=c11 -Wall -Werror -I include bindings/c/example.c -L "$target/release" -lmysqlleader \
   -Wl,-rpath,"$target/release" -o "$target/tls-example"
log=$target/tls-example.log
MYSQLLEADER_URL=$x509_url "$target/tls-example" tls-c c1 2000 >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do grep -q "leading at term" "$log" && break; sleep 0.1; done
kill -INT "$pid"; wait "$pid" || true
grep -q "leading at term" "$log" || { cat "$log" >&2; say "the C example did not lead over TLS"; exit 1; }
passed=$((passed + 1))

say "2b. C: every ssl-mode and refusal through the C API (bindings/c/test_tls.c, AddressSanitizer)"
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -g -O1 -fsanitize=address -fno-omit-frame-pointer -I include \
   bindings/c/test_tls.c -L "$target/release" -lmysqlleader -Wl,-rpath,"$target/release" -o "$target/test_tls"
ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:exitcode=86" "$target/test_tls" \
  || { say "the C TLS tests failed"; exit 1; }
passed=$((passed + 1))

say "3. Python: each ssl-mode, refusals, the X509 account, an election and a fenced transaction (bindings/python/tls_tests)"
(cd bindings/python && "$target/python-venv/bin/python" -I -m pytest -p no:cacheprovider -ra tls_tests)
passed=$((passed + 1))

say "4. Go: every ssl-mode and refusal (migrating first), then an election and a fenced transaction over TLS"
(cd bindings/go && MYSQLLEADER_TEST_URL=$MYSQLLEADER_TEST_TLS_URL MYSQLLEADER_TEST_TLS_ELECTION=1 go test -count=1 -run 'TestTLSModesOverTheCABI|TestElectionOverTLS' .)
passed=$((passed + 1))
echo "test-tls: $passed passed, 0 failed"
