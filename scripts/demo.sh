#!/usr/bin/env bash
# The mysqlleader demo: leader election and failover, live, on a throwaway database server.
#
#   scripts/demo.sh            (what `make demo` runs)
#   scripts/demo.sh --short    shorter leases and pauses (DEMO_SHORT=1 does the same; the tests use it)
#
# Three copies of a tiny worker run through `mysqlleader run`; only the one whose node holds the
# leadership in the database works. The demo crashes the leader (SIGKILL) and measures the
# failover, then shows the operator's tools (force, reelect, handover) and a graceful handover, and cleans
# up every process it started.
#
# The database: MYSQLLEADER_URL, else MYSQLLEADER_TEST_URL, else a throwaway mariadbd started
# with scripts/testdb.sh (installed with apt when missing and running as root). The binary:
# MYSQLLEADER_BIN, else target/release/mysqlleader (built with cargo when missing or stale).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
short=${DEMO_SHORT:-0}
[ "${1:-}" = "--short" ] && short=1
if [ "$short" = 1 ]; then lease=2s; tick=0.5; else lease=3s; tick=1; fi
lease_words="${lease%s} s"

# ---- presentation ----
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
  B=$'\e[1m'; D=$'\e[2m'; G=$'\e[32m'; R=$'\e[0m'
else
  B=; D=; G=; R=
fi
step() { echo; echo "${B}== $* ==${R}"; }
say() { echo "$*"; }
result() { echo "${G}=> $*${R}"; }
cmd() { echo "${D}\$ $*${R}"; }
now() { echo "${EPOCHREALTIME/,/.}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

started_at=$(now)
work=$(mktemp -d "${TMPDIR:-/tmp}/mysqlleader-demo.XXXXXX")
server_dir=
declare -A run_pid=()

cleanup() {
  local status=$? pid i
  trap - EXIT INT TERM
  # Stop every candidate (each stops its worker and resigns), then anything left, then the server.
  for pid in "${run_pid[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for i in $(seq 1 50); do
    local alive=0
    for pid in "${run_pid[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for pid in "${run_pid[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "$server_dir" ]; then "$root/scripts/testdb.sh" stop "$server_dir" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "${B}mysqlleader demo: leader election for services that already run on MySQL or MariaDB${R}"
say "Several copies of a service run for safety, but only one may do the work (send the"
say "e-mails, run the cron jobs). mysqlleader lets the database they already use decide which:"
say "the leader holds a lease in a table, renews it every few hundred milliseconds, and anyone"
say "may take the seat once the lease runs out. Leases here last $lease_words."

# ---- 1. a database server and the binary ----
step "1. A database server and the mysqlleader tool"
if [ -n "${MYSQLLEADER_URL:-}" ]; then
  url=$MYSQLLEADER_URL
  say "Using the database in MYSQLLEADER_URL (${url##*@})."
elif [ -n "${MYSQLLEADER_TEST_URL:-}" ]; then
  url=$MYSQLLEADER_TEST_URL
  say "Using the database in MYSQLLEADER_TEST_URL (${url##*@})."
else
  say "Starting a throwaway MariaDB server (its data lives in a temporary directory)..."
  server_dir="$work/db"
  "$root/scripts/testdb.sh" start "$server_dir" >/dev/null
  # shellcheck disable=SC1091
  . "$server_dir/env"
  url=$MYSQLLEADER_TEST_URL
  say "MariaDB is up on ${url#*@}."
fi
export MYSQLLEADER_URL=$url

bin=${MYSQLLEADER_BIN:-}
if [ -z "$bin" ]; then
  bin="$root/target/release/mysqlleader"
  say "Building the release binary with cargo (a few minutes the first time)..."
  (cd "$root" && cargo build --release --quiet --bin mysqlleader)
fi
ml() { "$bin" "$@"; }

cmd "mysqlleader migrate"
ml migrate | sed 's/^/  /'

service=mailer
if ml status "$service" >/dev/null 2>&1; then service="mailer-$$"; fi

# ---- 2. three candidates ----
step "2. Three candidates for one job"
cat >"$work/worker.sh" <<'WORKER'
#!/bin/sh
# The demo's worker: "sends a batch of mail" every tick while it runs; exits by itself (status 0)
# once the file finish.<node> appears; on SIGTERM it finishes the batch and stops.
trap 'echo "    | worker on $MYSQLLEADER_NODE: told to stop (SIGTERM), stopping"; exit 0' TERM
n=0
while :; do
  if [ $((n % TICKS)) -eq 0 ]; then
    echo "    | worker on $MYSQLLEADER_NODE, term $MYSQLLEADER_TERM: sending batch $((n / TICKS + 1))"
  fi
  if [ -e "$DEMO_DIR/finish.$MYSQLLEADER_NODE" ]; then
    echo "    | worker on $MYSQLLEADER_NODE: job done, exiting"
    exit 0
  fi
  n=$((n + 1))
  sleep 0.1
done
WORKER
chmod +x "$work/worker.sh"
export DEMO_DIR=$work
ticks=$(awk -v t="$tick" 'BEGIN { print int(t * 10) }')
export TICKS=$ticks

say "Each candidate is the same worker wrapped in \`mysqlleader run\`, which campaigns for the"
say "service \"$service\" and starts the worker only while its node leads:"
cmd "mysqlleader run --service $service --node alpha --lease $lease --http 127.0.0.1:PORT -- ./worker.sh"
declare -A http_port
start_candidate() {
  local node=$1
  http_port[$node]=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  # "$bin" itself, not a shell function: $! must be the pid of `mysqlleader run`.
  "$bin" run --service "$service" --node "$node" --lease "$lease" --http "127.0.0.1:${http_port[$node]}" \
      -- "$work/worker.sh" 2>>"$work/$node.log" &
  run_pid[$node]=$!
}
for node in alpha bravo charlie; do start_candidate "$node"; done
say "(and the same for bravo and charlie)"

# Leader, term and lease left (ms) as the database sees them; leader "-" when the seat is vacant.
seat() {
  local j leader term left
  j=$(ml status "$service" --json 2>/dev/null) || { echo "- 0 0"; return; }
  j=${j%%,\"terms\"*}
  leader=$(sed -n 's/^{"service_id":"[^"]*","leader_id":"\([^"]*\)".*/\1/p' <<<"$j")
  term=$(sed -n 's/.*"term":\([0-9]*\).*/\1/p' <<<"$j")
  left=$(sed -n 's/.*"lease_remaining_ms":\([0-9]*\).*/\1/p' <<<"$j")
  echo "${leader:--} ${term:-0} ${left:-0}"
}

show_table() { ml status | sed 's/^/  /'; }

# Waits until "$1" (a shell condition on $leader, $term and $left) holds, at most $2 seconds.
# With "live" as $3 it prints what the database says every half second while it waits.
wait_for() {
  local cond=$1 limit=${2:-30} mode=${3:-} t0 shown=0 elapsed
  t0=$(now)
  while :; do
    read -r leader term left < <(seat)
    if eval "$cond"; then break; fi
    elapsed=$(since "$t0")
    if [ "$mode" = live ] && awk -v e="$elapsed" -v s="$shown" 'BEGIN { exit !(e >= s * 0.5) }'; then
      shown=$((shown + 1))
      if [ "$leader" = - ]; then
        printf '  %5.1f s  the seat is vacant (term %s ended); the next campaign takes it\n' "$elapsed" "$term"
      else
        printf '  %5.1f s  the database still says: %s leads, term %s, lease left %s ms\n' "$elapsed" "$leader" "$term" "$left"
      fi
    fi
    if awk -v e="$elapsed" -v l="$limit" 'BEGIN { exit !(e > l) }'; then
      echo "demo: gave up waiting for: $cond" >&2
      exit 1
    fi
    sleep 0.05
  done
}

wait_for '[ "$leader" != - ]'
sleep "$tick"
result "$leader leads, at term $term. Only $leader's worker works; the others wait their turn."
show_table
sleep "$tick"
say
say "A load balancer asks each node over HTTP (run --http): only the leader answers 200 on /leader."
for node in alpha bravo charlie; do
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${http_port[$node]}/leader" 2>/dev/null \
         || python3 -c 'import sys, urllib.request, urllib.error
try: print(urllib.request.urlopen(sys.argv[1]).status)
except urllib.error.HTTPError as e: print(e.code)' "http://127.0.0.1:${http_port[$node]}/leader")
  printf '  GET http://127.0.0.1:%s/leader  (%s)  ->  %s\n' "${http_port[$node]}" "$node" "$code"
done
say "And Prometheus scrapes /metrics ($leader's, abridged):"
python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' \
    "http://127.0.0.1:${http_port[$leader]}/metrics" | grep -v '^#' | grep -v '_bucket' | grep . | sed 's/^/  /'
sleep "$tick"

# ---- 3. crash ----
step "3. Crash: the leader dies without a word"
old=$leader; old_term=$term
say "Killing $old's process with SIGKILL. It cannot resign: its lease stays in the database"
say "until it runs out ($lease_words), and nobody may take the seat before that."
cmd "kill -KILL <pid of $old's mysqlleader run>"
t0=$(now)
kill -KILL "${run_pid[$old]}"
wait "${run_pid[$old]}" 2>/dev/null || true
unset "run_pid[$old]"
say "$old's worker died with it (run's guard process killed it the moment run was gone)."
say "Meanwhile, live:"
wait_for '[ "$leader" != - ] && [ "$term" -gt "$old_term" ]' 30 live
failover=$(since "$t0")
result "failover: $leader took over at term $term, ${failover} s after the crash (lease $lease_words)."
sleep "$tick"
show_table

# ---- 4. operator tools ----
step "4. An operator steps in: force and reelect"
next=$(printf '%s\n' "${!run_pid[@]}" | grep -vx "$leader" | sort | sed -n 1p)
say "Say the operator wants $next to lead now ($leader's host needs maintenance). force"
say "installs it at once, with a new term; $leader notices at its next renew and stops its"
say "worker. Until then both workers may run for a moment: force and reelect are overrides"
say "that act in the database at once. That is why a leader's writes carry its term (the"
say "fencing token): the database refuses an old term from that instant on (CALL assert_leader"
say "in the write's transaction)."
cmd "mysqlleader force $service $next --lease $lease"
prev=$leader
stops() { grep -c "COMMAND stopped" "$work/$1.log" || true; }
stops_before=$(stops "$prev")
t0=$(now)
ml force "$service" "$next" --lease "$lease" | sed 's/^/  /'
wait_for '[ "$(stops "$prev")" -gt "$stops_before" ]'
result "force: $next leads at term $term; $prev's worker stopped $(since "$t0") s later."
sleep "$tick"

say
say "reelect ends the current lease at once and lets every node compete again:"
cmd "mysqlleader reelect $service"
old_term=$term
t0=$(now)
ml reelect "$service" | sed 's/^/  /'
wait_for '[ "$leader" != - ] && [ "$term" -gt "$old_term" ]'
result "reelect: $leader won the new election, term $term, $(since "$t0") s later."
sleep "$tick"

say
say "handover moves leadership to a node you choose, with no overlap: the term ends at once (the"
say "old fence fails), the seat is reserved for that node, and the old leader stops its worker at"
say "its next renew and wakes the chosen one, which alone may take the seat:"
target=
for n in "${!run_pid[@]}"; do [ "$n" != "$leader" ] && target=$n; done
old_term=$term
cmd "mysqlleader handover $service --to $target --wait"
t0=$(now)
ml handover "$service" --to "$target" --wait | sed 's/^/  /'
wait_for '[ "$leader" = "$target" ] && [ "$term" -gt "$old_term" ]'
result "handover: $target leads at term $term, $(since "$t0") s later (one renew interval at most)."
sleep "$tick"
show_table

# ---- 5. graceful handover ----
step "5. Graceful handover: the leader's job is done"
say "$leader's worker finishes and exits by itself; \`mysqlleader run\` then resigns, so another"
say "node takes over at once instead of waiting for the lease to run out."
old=$leader; old_term=$term
t0=$(now)
touch "$work/finish.$old"
wait_for '[ "$leader" != - ] && [ "$term" -gt "$old_term" ]'
handover=$(since "$t0")
wait "${run_pid[$old]}" 2>/dev/null && old_status=0 || old_status=$?
unset "run_pid[$old]"
result "resign: $leader took over at term $term, ${handover} s after $old's worker was told to finish"
result "        ($old's run exited with its worker's status, $old_status; a crash took ${failover} s)."
sleep "$tick"

# ---- 6. history ----
step "6. The record"
say "Every term is in the history table, with how it began and ended (times on the database's clock):"
cmd "mysqlleader status $service"
ml status "$service" | sed 's/^/  /'

step "Done"
for pid in "${run_pid[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
for pid in "${run_pid[@]}"; do wait "$pid" 2>/dev/null || true; done
run_pid=()
gone="every candidate stopped its worker and left the election"
if [ -n "$server_dir" ]; then
  "$root/scripts/testdb.sh" stop "$server_dir" >/dev/null 2>&1 || true
  server_dir=
  gone="$gone, and the throwaway server is gone"
fi
say "All cleaned up: $gone ($(since "$started_at") s in all)."
say "Next: \`mysqlleader --help\`, docs/cli.md, and \`make test\`."
