#!/usr/bin/env bash
# scripts/replication-experiment.sh — what happens to leadership when an asynchronously
# replicated MariaDB primary fails over, and what protects users (docs/replication.md).
#
#   scripts/replication-experiment.sh writable|readonly|router|lag|all
#
# A thin wrapper: it installs mariadb-server with apt when mariadbd is missing and it runs as
# root, builds the harness programs (cargo build --release -p mysqlleader-harness --bin
# replication --bin replication_probe) unless NO_BUILD is set, then runs
# target/release/replication (harness/src/bin/replication.rs) with the same arguments. That
# program does the experiment: the servers, the candidates and router, the failover, the checks,
# the report and the clean-up; its header lists the scenarios.
#
# Environment (read by the program): LEASE_MS (2000), PROMOTE_DELAY_S (1; 0.3 in `lag`),
# LAG_S (4), STALL_LEADER_S (unset), OBSERVE_S (8), RESULTS_DIR (unset: where to copy the logs
# and the report). NO_BUILD (when set, the programs already built in
# ${CARGO_TARGET_DIR:-target}/release are used as they are). Not part of `make test`: it is a
# documented experiment.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "replication-experiment: $*" >&2; exit 2; }

case "${1:-}" in
  writable|readonly|router|lag|all) ;;
  *) die "usage: $0 writable|readonly|router|lag|all" ;;
esac

. "$root/scripts/lib.sh"   # ensure_mariadb: mariadb-server with apt when missing and root
ensure_mariadb replication-experiment || die "mariadbd is needed"

target=${CARGO_TARGET_DIR:-$root/target}
if [ -n "${NO_BUILD:-}" ]; then
  echo "replication-experiment: NO_BUILD is set: using the programs already built in $target/release" >&2
else
  echo "replication-experiment: building (cargo build --release -p mysqlleader-harness --bin replication --bin replication_probe)" >&2
  (cd "$root" && cargo build --release --quiet -p mysqlleader-harness --bin replication --bin replication_probe) >&2
fi
[ -x "$target/release/replication" ] && [ -x "$target/release/replication_probe" ] \
  || die "the harness programs were not built in $target/release"
exec "$target/release/replication" "$@"
