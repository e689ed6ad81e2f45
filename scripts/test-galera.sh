#!/usr/bin/env bash
# The Galera tests: start a throwaway 3-node MariaDB Galera cluster on loopback
# (scripts/galera.sh, mariadbd running as user mysql), run tests/galera.rs against it, stop it.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d "${TMPDIR:-/tmp}/mysqlleader-galera.XXXXXX")
cleanup() { bash scripts/galera.sh stop "$dir/cluster" >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
eval "$(bash scripts/galera.sh start "$dir/cluster")"
cargo test ${CARGO_PROFILE_FLAG:---release} --test galera -- --ignored --nocapture --test-threads=1
