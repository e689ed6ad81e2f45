#!/usr/bin/env bash
# The election benchmark (issue 9): mysqlleader against the classic SQL recipe and the physical
# floor, side by side in one run. Prints Markdown tables and writes them as JSON.
#
#   scripts/bench.sh [--url URL] [--servers mariadb,mysql] [--quick] [--json FILE] [--only SECTION,...]
#
# The server: --url, else MYSQLLEADER_TEST_URL, else throwaway servers that scripts/testdb.sh
# starts and stops again, one after the other: by default a MariaDB (default durability:
# innodb_flush_log_at_trx_commit=1, no binary log) and then a MySQL 9.7 (its defaults: the same
# durability, binary log on), or those --servers names. The JSON goes to --json FILE, by default
# target/bench/election.json; with throwaway servers each run's to FILE with the server's kind
# before .json (target/bench/election-mariadb.json, ...), and when both ran,
# scripts/bench-compare.py prints their headline figures side by side (also written to
# target/bench/side-by-side.md).
# A full run takes about 12 minutes per server on 2 cores; --quick about 2.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"

have_url=0
json="$root/target/bench/election.json"
servers=mariadb,mysql
# --bench: what `cargo bench` passes; without it the executable only runs its self-checks.
args=(--bench)
while [ $# -gt 0 ]; do
  case "$1" in
    --url|--url=*) have_url=1; args+=("$1") ;;
    --json) json=$2; shift ;;
    --json=*) json=${1#--json=} ;;
    --servers) servers=$2; shift ;;
    --servers=*) servers=${1#--servers=} ;;
    *) args+=("$1") ;;
  esac
  shift
done
mkdir -p "$(dirname "$json")"

# Build first (`cargo bench --bench election --no-run`), then run that very executable, so that
# compiling never overlaps the measurements nor keeps the throwaway server waiting.
exe=$(cargo bench --bench election --no-run --message-format=json-render-diagnostics \
  | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "election" and m.get("executable"):
        print(m["executable"])')
[ -x "$exe" ] || { echo "bench.sh: the benchmark did not build" >&2; exit 2; }

if [ "$have_url" = 1 ] || [ -n "${MYSQLLEADER_TEST_URL:-}" ]; then
  exec "$exe" "${args[@]}" --json "$json"
fi
written=()
for kind in ${servers//,/ }; do
  case "$kind" in mariadb|mysql) ;; *) echo "bench.sh: no server kind $kind (mariadb, mysql)" >&2; exit 2 ;; esac
  out="${json%.json}-$kind.json"
  echo "bench.sh: on a throwaway $kind server" >&2
  MYSQLLEADER_TEST_KIND=$kind "$here/testdb.sh" run "$exe" "${args[@]}" --json "$out"
  written+=("$out")
done
if [ ${#written[@]} -gt 1 ]; then
  python3 "$here/bench-compare.py" "${written[@]}" | tee "$(dirname "$json")/side-by-side.md"
fi
