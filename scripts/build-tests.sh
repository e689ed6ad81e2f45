#!/usr/bin/env bash
# The one build every test part needs (`make build-tests`, what `make test` builds first): every
# target of the workspace in release but the two benchmarks, which no test runs (`make build`
# and `make bench` compile them). Each part's script runs exactly this, a no-op after
# `make test`'s own build: a build of other targets could resolve other features and rebuild
# the library in place, under the parts running beside it (scripts/test-all.sh).
#   scripts/build-tests.sh [CARGO ARGS...]      e.g. --quiet
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${CARGO:-cargo}" build --release --workspace --lib --bins --tests --examples "$@"
