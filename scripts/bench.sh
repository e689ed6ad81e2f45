#!/usr/bin/env bash
# The election benchmark (issue 9): mysqlleader against the classic SQL recipe and the physical
# floor, side by side in one run. Prints Markdown tables and writes them as JSON.
#
#   scripts/bench.sh [--url URL] [--quick] [--json FILE] [--only SECTION,...]
#
# The server: --url, else MYSQLLEADER_TEST_URL, else a throwaway mariadbd that scripts/testdb.sh
# starts (default durability: innodb_flush_log_at_trx_commit=1, no binary log) and stops again.
# The JSON goes to --json FILE, by default target/bench/election.json.
# A full run takes about 12 minutes on 2 cores; --quick about 2.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"

have_url=0
have_json=0
for a in "$@"; do
  case "$a" in
    --url|--url=*) have_url=1 ;;
    --json|--json=*) have_json=1 ;;
  esac
done
# --bench: what `cargo bench` passes; without it the executable only runs its self-checks.
args=(--bench "$@")
if [ "$have_json" = 0 ]; then
  mkdir -p target/bench
  args+=(--json "$root/target/bench/election.json")
fi

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
  exec "$exe" "${args[@]}"
fi
exec "$here/testdb.sh" run "$exe" "${args[@]}"
