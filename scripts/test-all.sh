#!/usr/bin/env bash
# Every test part of `make test`, side by side in lanes, with a summary at the end.
#
#   scripts/test-all.sh                  every part (what `make test` runs after the build)
#   scripts/test-all.sh PART...          only those parts, e.g. `rust-mysql c-mariadb`
#   TEST_LANES=1 scripts/test-all.sh     one part at a time
#
# A part is one make target run against one kind of server: `rust-mariadb` is `make test-rust`
# under a throwaway MariaDB of its own (scripts/testdb.sh run), `rust-mysql` the same under a
# throwaway MySQL (MYSQLLEADER_TEST_KIND=mysql; MYSQLLEADER_TEST_MYSQL_URL to use a MySQL server
# of your own, as MYSQLLEADER_TEST_URL names a MariaDB one). Parts that need no server of the
# URL's (dist, galera, group-replication) start their own.
#
# Lanes: the parts of one lane run one after the other; the lanes run at once. A lane keeps
# together what shares build output (the C, Python and Go parts, then TLS, which uses what they
# built) and never runs one binding's parts for both servers at once (they share its build
# output); the Rust and fault parts keep apart by themselves. Each part's output goes
# to target/test-logs/PART.log (printed whole when the part fails); the summary gives each part
# its time and result, and the exit status is 1 when any part failed.
set -uo pipefail
# The throwaway servers' commits do not wait for the disk (scripts/testdb.sh says why).
export MYSQLLEADER_TEST_FLUSH_AT_COMMIT=${MYSQLLEADER_TEST_FLUSH_AT_COMMIT:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
logs=${CARGO_TARGET_DIR:-$root/target}/test-logs
mkdir -p "$logs"
rm -f "$logs"/*.result

# The lanes, each a list of parts, balanced by the times of a fresh-clone run on 2 cores
# (CI67, 2026-11-30, in seconds): dist 605 (it builds the library again, as it ships; 304-669
# in other runs), galera 359, group-replication 260, rust 159-223, faults 124-126, java
# 180-184, python 116-143, go 73-82, c 48-62, tls 17-30, sql-client 5-13. The lanes then summed
# to 1,032 s (the first, with both fault parts), 842 s and 935 s; one fault part moved to the
# second lane, 908 s and 966 s. The two cluster parts (galera, group-replication) share a lane:
# each starts three servers, and one after the other they never load the machine together. The
# two fault parts write to run directories of their own (scripts/test-faults.sh) and may overlap.
lanes=(
  "rust-mariadb sql-client-mariadb sql-client-mysql faults-mysql dist"
  "rust-mysql group-replication galera faults-mariadb"
  "c-mariadb c-mysql python-mariadb python-mysql go-mariadb go-mysql tls-mariadb tls-mysql java-mariadb java-mysql"
)
if [ "${TEST_LANES:-}" = 1 ]; then
  lanes=("${lanes[*]}")
fi
# After every lane, alone on the machine one after the other: the fleet test (3 nodes x 10,000
# services, `make test-fleet`), whose 30,000 electors starved the timings of the tests beside it
# on 2 cores (CI58), and the two contention tests of tests/sql_concurrency.rs (CI63, CI68).
last="fleet-mariadb fleet-mysql"

wanted=("$@")
for w in "${wanted[@]}"; do
  [[ " ${lanes[*]} $last " == *" $w "* ]] || { echo "test-all: no part $w (the parts: ${lanes[*]} $last)" >&2; exit 2; }
done
want() {
  [ ${#wanted[@]} -eq 0 ] && return 0
  local w
  for w in "${wanted[@]}"; do [ "$w" = "$1" ] && return 0; done
  return 1
}

# part NAME: runs one part, its output in its log, and records "status seconds".
part() {
  local name=$1 target kind status=0 start
  start=$(date +%s)
  case "$name" in
    dist|galera|group-replication) target=test-$name; kind= ;;
    *-mariadb) target=test-${name%-mariadb}; kind=mariadb ;;
    *-mysql) target=test-${name%-mysql}; kind=mysql ;;
    *) echo "test-all: no part $name" >&2; return 2 ;;
  esac
  echo "test-all: $name started" >&2
  {
    case "$kind" in
      # The distribution is built as it ships (the library and the tool alone, not every
      # target): in a target directory of its own, so that it never rebuilds, in place, the
      # library the parts beside it are using.
      "") if [ "$name" = dist ]; then
            CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}/dist-part make --no-print-directory "$target"
          else
            make --no-print-directory "$target"
          fi ;;
      # The parts that start servers of their own besides (faults, tls, the elector's restarts)
      # start them of the kind that MYSQLLEADER_TEST_KIND says.
      mariadb) env -u MYSQLLEADER_TEST_KIND scripts/testdb.sh run make --no-print-directory "$target" ;;
      mysql) MYSQLLEADER_TEST_KIND=mysql MYSQLLEADER_TEST_URL= scripts/testdb.sh run make --no-print-directory "$target" ;;
    esac
  } >"$logs/$name.log" 2>&1 || status=$?
  echo "$status $(( $(date +%s) - start ))" >"$logs/$name.result"
  if [ "$status" -ne 0 ]; then
    echo "test-all: $name FAILED (exit $status); its output:" >&2
    sed "s/^/[$name] /" "$logs/$name.log" >&2
  else
    echo "test-all: $name passed in $(( $(date +%s) - start )) s" >&2
  fi
}

# free_gb DIR: the space left on DIR's file system, in whole GiB.
free_gb() { df -P -B1G "$1" 2>/dev/null | awk 'NR == 2 { print $4 }'; }
# disk_report: one line per file system the run writes to (the build, the throwaway servers' data
# in TMPDIR, MySQL's data inside its root), with the space left on each.
disk_report() {
  local d seen=
  for d in "${CARGO_TARGET_DIR:-$root/target}" "${TMPDIR:-/tmp}" "$MYSQL_ROOT"; do
    [ -d "$d" ] || continue
    local fs; fs=$(df -P "$d" | awk 'NR == 2 { print $1 }')
    [[ " $seen " == *" $fs "* ]] && continue
    seen="$seen $fs"
    echo "test-all: $(free_gb "$d") GiB free on $fs (holds $d)" >&2
  done
}

begin=$(date +%s)
. scripts/lib.sh
# A full run from a clean clone writes about 7 GiB at its peak (CI71, 2026-11-30: the target
# directory 5.3 GiB with the distribution's own build, the MySQL root 0.8 GiB and its servers'
# data up to 1.4 GiB, the MariaDB and Galera servers' up to 0.6 GiB); a disk with less fills in
# the middle of the run and fails parts with errors that do not name the disk ("Errcode: 28", a
# server that will not start; the stop of 60ad42f failed so). Said first, so a reader of a cut
# transcript sees it.
need_gb=${TEST_ALL_NEED_GB:-8}
disk_report
free=$(free_gb "${CARGO_TARGET_DIR:-$root/target}")
if [ -n "$free" ] && [ "$free" -lt "$need_gb" ]; then
  echo "test-all: WARNING: only $free GiB free where the build goes; a full run needs about $need_gb GiB" \
       "(left-overs of killed runs: ${TMPDIR:-/tmp}/mysqlleader-*, $MYSQL_ROOT/var/lib/mysqlleader/*)" >&2
fi
# The servers' programs first, one after the other (apt and debootstrap each once), before the
# lanes start them side by side: MariaDB from Debian's packages, MySQL's root (scripts/lib.sh).
needs() { local lane name; for lane in "${lanes[@]}"; do for name in $lane; do
  want "$name" && [[ $name == *"$1" ]] && return 0; done; done; return 1; }
if [ -z "${MYSQLLEADER_TEST_URL:-}" ]; then
  ensure_mariadb test-all || exit 2
fi
if { [ -z "${MYSQLLEADER_TEST_MYSQL_URL:-}" ] && needs -mysql; } || needs group-replication; then
  ensure_mysql test-all || exit 2
fi
pids=()
for lane in "${lanes[@]}"; do
  (
    for name in $lane; do
      want "$name" && part "$name"
    done
  ) &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
for name in $last; do
  want "$name" && part "$name"
done

# The summary.
failed=0
echo
echo "test-all: summary (logs in $logs)"
printf '  %-20s %-7s %8s\n' part result seconds
for lane in "${lanes[@]}" "$last"; do
  for name in $lane; do
    want "$name" || continue
    if [ -f "$logs/$name.result" ]; then
      read -r status secs <"$logs/$name.result"
    else
      status=missing secs=-
    fi
    if [ "$status" = 0 ]; then result=passed; else result=FAILED; failed=$((failed + 1)); fi
    printf '  %-20s %-7s %8s\n' "$name" "$result" "$secs"
  done
done
echo "  total wall time: $(( $(date +%s) - begin )) s; $failed part(s) failed"
# Each failed part's first failures again, last, where a reader of a cut transcript sees them:
# the failing tests (cargo's "---- name" and "panicked at" lines, pytest's, Go's, Maven's) and
# the scripts' own FAILED lines, each with a few lines of its message, at most 60 lines a part.
for lane in "${lanes[@]}" "$last"; do
  for name in $lane; do
    want "$name" && [ -f "$logs/$name.result" ] || continue
    read -r status _ <"$logs/$name.result"
    [ "$status" = 0 ] && continue
    echo "test-all: $name's failures (the whole log: $logs/$name.log):"
    grep -E -A4 'panicked at|^---- |^FAILED|FAILED \(exit|^--- FAIL|\[ERROR\] (Tests run|Failures)|^E   |: FAIL$|not ok ' \
      "$logs/$name.log" | head -60 | sed "s/^/  [$name] /"
  done
done
# A full disk fails parts with messages of their own; say it once, plainly, last.
full=
for r in "$logs"/*.result; do
  [ -f "$r" ] || continue
  grep -q -E 'No space left on device|Errcode: 28|ENOSPC' "${r%.result}.log" 2>/dev/null && full="$full $(basename "${r%.result}")"
done
if [ -n "$full" ]; then
  echo "test-all: THE DISK FILLED UP during this run (\"No space left on device\" in:$full); now:" >&2
  disk_report
fi
[ "$failed" -eq 0 ]
