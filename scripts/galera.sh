#!/usr/bin/env bash
# scripts/galera.sh - a throwaway 3-node MariaDB Galera cluster on 127.0.0.1
# for mysqlleader's tests.
#
# Usage (run from anywhere; CI runs it as root on Debian bookworm):
#
#   galera.sh start   DIR          create DIR, start 3 nodes, wait until all are
#                                  Synced in one Primary component of size 3,
#                                  create user/database, write DIR/env and print
#                                  its lines (the only thing written to stdout).
#   galera.sh stop    DIR          SIGTERM all nodes (SIGKILL after 30 s), then
#                                  remove DIR. No-op if DIR does not exist.
#   galera.sh kill    DIR N        SIGKILL node N (1..3) and wait until it is gone.
#   galera.sh restart DIR N        start node N again (it rejoins through gcomm,
#                                  never bootstraps) and wait until it is Synced;
#                                  needs a Primary component among the others,
#                                  else it times out and stops node N again.
#   galera.sh isolate DIR N on     gmcast.isolate=1 on node N; waits until node N
#                                  reports a non-Primary component.
#   galera.sh isolate DIR N off    gmcast.isolate=0 on node N; waits until node N
#                                  is back in the Primary component and Synced.
#   galera.sh status  DIR          one line per node: port, pid, state,
#                                  cluster size, cluster status.
#
# Layout of DIR:
#   DIR/.galera-sh          marker: "stop" only deletes directories carrying it
#   DIR/cluster.state       ports etc. (sourced by the other subcommands)
#   DIR/env                 export MYSQLLEADER_GALERA_URL{1,2,3}=... and _DIR=
#   DIR/nodeN/data          datadir of node N
#   DIR/nodeN/mysqld.sock   admin socket (root via unix_socket authentication)
#   DIR/nodeN/error.log     server error log (also stdout/stderr of mariadbd)
#   DIR/nodeN/pid           pid of the running mariadbd of node N
#
# Clients: mysql://mysqlleader:mysqlleader@127.0.0.1:PORTN/mysqlleader_test
# (user 'mysqlleader'@'%' and @'localhost', ALL PRIVILEGES WITH GRANT OPTION).
#
# Runs mariadbd as user mysql when invoked as root (rsync SST refuses root),
# else as the invoking user. Node 1 bootstraps; nodes 2 and 3 join by rsync
# SST. A node coming back from isolation needs IST (rsync SST cannot run into a
# live server), which gcache (32M) covers for test-sized write volumes.
# Typical timings on a 2-core machine: start ~9-10 s, a killed node is evicted
# after ~2.5 s, an isolated node goes non-Primary after ~2.5 s, restart of a
# killed node ~6 s, un-isolation ~3-5 s, stop ~1-3 s.
#
# Environment knobs (all optional):
#   GALERA_START_TIMEOUT   seconds to wait for the cluster to form (default 120)
#   GALERA_WAIT_TIMEOUT    seconds restart/isolate wait for a state (default 60)
#   GALERA_PROVIDER        path of libgalera_smm.so (default: auto-detected)

set -euo pipefail

export PATH="${PATH:-/usr/bin:/bin}:/usr/local/sbin:/usr/sbin:/sbin"
export LC_ALL=C  # stable tool output; $EPOCHREALTIME uses a "." decimal point

readonly NODES=(1 2 3)
readonly PACKAGES=(mariadb-server mariadb-client galera-4 rsync)
readonly DB_NAME=mysqlleader_test
readonly DB_USER=mysqlleader
readonly DB_PASS=mysqlleader
readonly START_TIMEOUT="${GALERA_START_TIMEOUT:-120}"
readonly WAIT_TIMEOUT="${GALERA_WAIT_TIMEOUT:-60}"
readonly STOP_TIMEOUT=30

# Shortened failure detection for tests. Galera's constraints (gcomm evs):
#   keepalive_period      <= suspect_timeout / 3
#   inactive_check_period <= suspect_timeout / 2
#   keepalive_period * 2  <= install_timeout <= inactive_timeout
# and suspect_timeout < inactive_timeout for the suspicion to matter.
# gcache is made small so that three nodes do not preallocate 3 x 128M.
readonly EVS_OPTIONS="evs.suspect_timeout=PT2S; evs.inactive_timeout=PT3S; evs.install_timeout=PT3S; evs.keepalive_period=PT0.5S; evs.inactive_check_period=PT0.5S; evs.join_retrans_period=PT0.5S; gmcast.peer_timeout=PT2S; gcache.size=32M"

. "$(dirname "$0")/lib.sh"   # find_prog, apt_install, pick_ports

# --- output helpers -----------------------------------------------------------

# log MSG...: progress message on stderr (stdout is reserved for the env lines).
log() { printf 'galera.sh: %s\n' "$*" >&2; }

# die MSG...: print an error on stderr and exit 1 (EXIT traps still run).
die() { printf 'galera.sh: ERROR: %s\n' "$*" >&2; exit 1; }

# since T0: print the seconds elapsed since T0 (a $EPOCHREALTIME value), to 0.1 s.
since() {
    awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'
}

usage() {
    sed -n '5,23p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# --- prerequisites ------------------------------------------------------------

# pkg_installed PKG: true if the Debian package PKG is installed.
pkg_installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]
}

# ensure_packages: make sure mariadb-server, mariadb-client, galera-4, rsync
# (and python3, used to pick ports) are installed. As root they are installed
# with apt-get; otherwise the script fails saying what to install.
ensure_packages() {
    local missing=() install=("${PACKAGES[@]}") p
    if command -v dpkg-query >/dev/null 2>&1; then
        for p in "${PACKAGES[@]}"; do
            pkg_installed "$p" || missing+=("$p")
        done
    else
        # Not a Debian system: judge by the binaries only.
        command -v mariadbd >/dev/null 2>&1 || missing+=(mariadb-server)
        command -v mariadb >/dev/null 2>&1 || missing+=(mariadb-client)
        command -v rsync >/dev/null 2>&1 || missing+=(rsync)
    fi
    if ! command -v python3 >/dev/null 2>&1; then
        missing+=(python3)
        install+=(python3)
    fi
    [ "${#missing[@]}" -eq 0 ] && return 0

    log "missing packages: ${missing[*]}"
    apt_install galera.sh "${install[@]}" || die "cannot install ${install[*]} (see above)"
}

# find_provider: print the path of the Galera 4 provider library.
find_provider() {
    local c
    for c in "${GALERA_PROVIDER:-}" /usr/lib/galera/libgalera_smm.so \
             /usr/lib/libgalera_smm.so /usr/lib64/galera-4/libgalera_smm.so \
             /usr/lib64/galera/libgalera_smm.so; do
        if [ -n "$c" ] && [ -f "$c" ]; then printf '%s\n' "$c"; return 0; fi
    done
    die "libgalera_smm.so not found (is galera-4 installed?); set GALERA_PROVIDER"
}

# find_mariadbd: print the path of the server binary.
find_mariadbd() {
    find_prog mariadbd mysqld || die "mariadbd not found (install mariadb-server)"
}

# --- ports --------------------------------------------------------------------


# --- state --------------------------------------------------------------------

# abs_path PATH: print PATH made absolute (the directory need not exist).
abs_path() {
    case "$1" in
        /*) printf '%s\n' "${1%/}" ;;
        *) printf '%s/%s\n' "$(pwd)" "${1%/}" ;;
    esac
}

# load_state DIR: source DIR/cluster.state (ports, user, provider, binaries).
load_state() {
    [ -f "$DIR/cluster.state" ] || die "$DIR is not a cluster directory made by 'galera.sh start' (no cluster.state)"
    # shellcheck disable=SC1091
    . "$DIR/cluster.state"
}

# check_node N: die unless N is 1, 2 or 3.
check_node() {
    case "${1:-}" in 1|2|3) ;; *) die "node must be 1, 2 or 3, got '${1:-}'" ;; esac
}

# port_of KIND N: print the port of KIND (client|gmcast|ist|sst) for node N.
port_of() {
    local var="${1^^}_PORT_$2"
    printf '%s\n' "${!var}"
}

# --- processes ----------------------------------------------------------------

# pid_alive PID: true if PID exists and is not a zombie.
pid_alive() {
    local pid="$1" state
    [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
    state="$(sed -e 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)" || return 1
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# node_pid N: print the pid of node N's mariadbd if it is running, else
# nothing. The pid is only trusted if its command line names DIR/nodeN, so a
# recycled pid is never mistaken for the node.
node_pid() {
    local n="$1" pid
    pid="$(cat "$DIR/node$n/pid" 2>/dev/null || true)"
    pid_alive "$pid" || return 0
    if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "--datadir=$DIR/node$n/data"; then
        printf '%s\n' "$pid"
    fi
}

# sweep_helpers N: SIGKILL state-transfer helpers left behind by a node that
# died (wsrep_sst_rsync scripts and the rsync daemons they start). They are
# identified by their command line naming DIR/nodeN/, and this script's own
# ancestors are never touched.
sweep_helpers() {
    local n="$1" p pid cmd comm
    local -A ancestors=()
    pid=$$
    while [ -n "$pid" ] && [ "$pid" -gt 1 ]; do
        ancestors[$pid]=1
        pid="$(awk '/^PPid:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)"
    done
    for p in /proc/[0-9]*; do
        pid="${p#/proc/}"
        [ -n "${ancestors[$pid]:-}" ] && continue
        comm="$(cat "$p/comm" 2>/dev/null || true)"
        case "$comm" in rsync|wsrep_sst_*) ;; *) continue ;; esac
        cmd="$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null || true)"
        case "$cmd" in
            *"$DIR/node$n/"*) kill -KILL "$pid" 2>/dev/null || true ;;
        esac
    done
}

# signal_node N SIGNAL: send SIGNAL to node N's mariadbd (if it is running).
signal_node() {
    local pid
    pid="$(node_pid "$1")"
    if [ -n "$pid" ]; then kill "-$2" "$pid" 2>/dev/null || true; fi
}

# stop_nodes GRACE N...: SIGTERM the given nodes together, wait up to GRACE
# seconds for all of them to exit, SIGKILL any survivor, then remove leftover
# SST helpers.
stop_nodes() {
    local grace="$1" n pid deadline alive
    shift
    local killed=0
    for n in "$@"; do signal_node "$n" TERM; done
    deadline=$((SECONDS + grace))
    while :; do
        alive=""
        for n in "$@"; do
            pid="$(node_pid "$n")"
            [ -n "$pid" ] && alive+=" $n"
        done
        [ -z "$alive" ] && break
        if [ "$SECONDS" -ge "$deadline" ]; then
            if [ "$killed" -eq 1 ]; then
                log "WARNING: node(s)$alive survived SIGKILL for 10s; giving up"
                break
            fi
            log "node(s)$alive still running after ${grace}s, sending SIGKILL"
            for n in $alive; do signal_node "$n" KILL; done
            killed=1
            deadline=$((SECONDS + 10))
        fi
        sleep 0.2
    done
    for n in "$@"; do sweep_helpers "$n"; done
}

# --- SQL ----------------------------------------------------------------------

# admin_sql N SQL: run SQL on node N over its unix socket as the admin account
# (root, or the invoking user when not root; both use unix_socket auth) and
# print the result in batch mode without column names. Bounded to 20 s.
admin_sql() {
    local n="$1" sql="$2"
    timeout 20 mariadb --no-defaults --protocol=socket \
        --socket="$DIR/node$n/mysqld.sock" --user="$ADMIN_USER" \
        --connect-timeout=5 --batch --skip-column-names -e "$sql"
}

# wsrep_status N: print "state|size|status" of node N (wsrep_local_state_comment,
# wsrep_cluster_size, wsrep_cluster_status); prints nothing if unreachable.
wsrep_status() {
    local out
    out="$(admin_sql "$1" "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment','wsrep_cluster_size','wsrep_cluster_status')" 2>/dev/null)" || return 0
    awk -F'\t' '
        $1 == "wsrep_local_state_comment" { st = $2 }
        $1 == "wsrep_cluster_size"        { sz = $2 }
        $1 == "wsrep_cluster_status"      { cs = $2 }
        END { if (st != "") printf "%s|%s|%s\n", st, sz, cs }' <<<"$out"
}

# show_logs N...: print the last lines of each given node's error log on stderr.
show_logs() {
    local n
    for n in "$@"; do
        printf '\n----- tail of %s -----\n' "$DIR/node$n/error.log" >&2
        tail -n 40 "$DIR/node$n/error.log" >&2 2>/dev/null || echo "(no log)" >&2
    done
}

# wait_for TIMEOUT WANT_SIZE N...: wait until every listed node is running and
# reports Synced in a Primary component. WANT_SIZE, if not empty, is also
# required as wsrep_cluster_size. On timeout or if a node dies, prints the
# state and log tails and returns 1.
wait_for() {
    local timeout="$1" want_size="$2"; shift 2
    local deadline=$((SECONDS + timeout)) n ok st size cs
    while :; do
        ok=1
        for n in "$@"; do
            if [ -z "$(node_pid "$n")" ]; then
                log "node $n (mariadbd) exited unexpectedly"
                show_logs "$n"
                return 1
            fi
            IFS="|" read -r st size cs <<<"$(wsrep_status "$n")" || true
            if [ "${st:-}" != Synced ] || [ "${cs:-}" != Primary ] \
                || { [ -n "$want_size" ] && [ "${size:-}" != "$want_size" ]; }; then
                ok=0
            fi
        done
        [ "$ok" -eq 1 ] && return 0
        if [ "$SECONDS" -ge "$deadline" ]; then
            log "timed out after ${timeout}s waiting for node(s) $* to be Synced/Primary${want_size:+ with cluster size $want_size}"
            print_status >&2 || true
            show_logs "$@"
            return 1
        fi
        sleep 0.5
    done
}

# wait_size N SIZE TIMEOUT: wait until node N reports wsrep_cluster_size=SIZE
# (membership only, the joiner need not be Synced yet). Returns 1 on timeout.
wait_size() {
    local n="$1" size="$2" deadline=$((SECONDS + $3)) st sz cs
    while :; do
        IFS="|" read -r st sz cs <<<"$(wsrep_status "$n")" || true
        [ "${sz:-}" = "$size" ] && return 0
        if [ "$SECONDS" -ge "$deadline" ]; then
            log "timed out waiting for node $n to see a cluster of size $size"
            print_status >&2 || true
            show_logs "${NODES[@]}"
            return 1
        fi
        sleep 0.2
    done
}

# --- node start ---------------------------------------------------------------

# start_node N [--wsrep-new-cluster]: launch node N's mariadbd in the
# background (as user mysql when root) with its stdout/stderr appended to its
# error log and every inherited descriptor above 2 closed, so callers that
# capture our output (e.g. $(galera.sh start ...)) never wait on the server.
start_node() {
    local n="$1"; shift
    local d="$DIR/node$n" pid
    local user_opt=()
    [ "$(id -u)" -eq 0 ] && user_opt=(--user="$RUN_USER")
    local provider_options
    provider_options="gmcast.listen_addr=tcp://127.0.0.1:$(port_of gmcast "$n"); ist.recv_addr=127.0.0.1:$(port_of ist "$n"); ${EVS_OPTIONS}"
    rm -f "$d/mysqld.sock" "$d/mysqld.sock.lock"
    # A binary log (in the datadir), as production nodes keep one for backups and replicas.
    # Without it MariaDB emulates one for Galera, and then keeps some rows of a statement cut
    # short (max_statement_time, KILL QUERY) in the transaction's write set: a session that cuts
    # a call and commits makes the nodes' histories differ (README, "Clusters"). Set
    # MYSQLLEADER_GALERA_LOG_BIN=0 to start a node that way (tests/galera.rs does, to see that
    # migrate names it).
    local log_bin=(--log-bin=node-bin)
    if [ "${MYSQLLEADER_GALERA_LOG_BIN:-1}" = 0 ]; then log_bin=(); fi
    (
        # Close inherited descriptors > 2 (e.g. a test harness's pipes).
        for fd in /proc/self/fd/*; do
            fd="${fd##*/}"
            if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
        done
        cd "$d"
        exec "$MARIADBD" --no-defaults "${user_opt[@]}" \
            --basedir=/usr \
            --datadir="$d/data" \
            --tmpdir="$d/tmp" \
            --socket="$d/mysqld.sock" \
            --pid-file="$d/mysqld.pid" \
            --log-error="$d/error.log" \
            --port="$(port_of client "$n")" \
            --bind-address=127.0.0.1 \
            --skip-name-resolve \
            --event-scheduler=ON \
            --default-storage-engine=InnoDB \
            --binlog-format=ROW \
            --innodb-autoinc-lock-mode=2 \
            --innodb-buffer-pool-size=64M \
            --innodb-log-file-size=16M \
            --innodb-flush-log-at-trx-commit=2 \
            --wsrep-on=ON \
            --wsrep-provider="$PROVIDER" \
            --wsrep-cluster-name=mysqlleader_test \
            --wsrep-cluster-address="gcomm://127.0.0.1:$GMCAST_PORT_1,127.0.0.1:$GMCAST_PORT_2,127.0.0.1:$GMCAST_PORT_3" \
            --wsrep-node-name="node$n" \
            --wsrep-node-address="127.0.0.1:$(port_of gmcast "$n")" \
            --wsrep-node-incoming-address="127.0.0.1:$(port_of client "$n")" \
            --wsrep-provider-options="$provider_options" \
            --wsrep-sst-method=rsync \
            --wsrep-sst-receive-address="127.0.0.1:$(port_of sst "$n")" \
            "${log_bin[@]}" \
            "$@"
    ) </dev/null >>"$d/error.log" 2>&1 &
    pid=$!
    # Not a job of ours any more: no "Killed" notices when we stop it.
    disown "$pid" 2>/dev/null || true
    echo "$pid" >"$d/pid"
    # The subshell execs mariadbd only after closing its descriptors: until then its command line
    # is this script's, and node_pid takes the node for dead (under load that window lasted long
    # enough for wait_for to report "exited unexpectedly" with an empty error log). Wait for the
    # exec, or the subshell's end, for at most 10 s.
    local i
    for ((i = 0; i < 200; i++)); do
        pid_alive "$pid" || break
        tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "--datadir=$d/data" && break
        sleep 0.05
    done
    log "node $n started (pid $pid, client port $(port_of client "$n"), gmcast $(port_of gmcast "$n"))"
}

# --- subcommands --------------------------------------------------------------

# print_status: one line per node with port, pid and wsrep state.
print_status() {
    local n pid st size cs
    printf '%-5s %-6s %-8s %-34s %-5s %s\n' node port pid state size status
    for n in "${NODES[@]}"; do
        pid="$(node_pid "$n")"
        st="" size="" cs=""
        if [ -n "$pid" ]; then
            IFS="|" read -r st size cs <<<"$(wsrep_status "$n")" || true
            st="${st:-unreachable}"
        else
            st=down
        fi
        printf '%-5s %-6s %-8s %-34s %-5s %s\n' "$n" "$(port_of client "$n")" \
            "${pid:--}" "$st" "${size:--}" "${cs:--}"
    done
}

# start_failed: EXIT trap of cmd_start; on failure stop every node started so
# far, with a short grace period since their data is thrown away (DIR is kept
# so its logs can be inspected; 'stop DIR' removes it).
start_failed() {
    local rc=$?
    trap - EXIT INT TERM
    if [ "$rc" -ne 0 ]; then
        log "start failed; stopping the nodes that were started (logs kept in $DIR)"
        stop_nodes 5 "${NODES[@]}" || true
    fi
    exit "$rc"
}

cmd_start() {
    local t0=$EPOCHREALTIME s0=$SECONDS n ports p
    ensure_packages
    if [ -e "$DIR" ] && [ -n "$(ls -A "$DIR" 2>/dev/null)" ]; then
        die "$DIR exists and is not empty; pass a fresh directory (e.g. from mktemp -d)"
    fi
    mkdir -p "$DIR"
    : >"$DIR/.galera-sh"
    trap start_failed EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM

    MARIADBD="$(find_mariadbd)"
    PROVIDER="$(find_provider)"
    if [ "$(id -u)" -eq 0 ]; then
        RUN_USER=mysql ADMIN_USER=root
        id mysql >/dev/null 2>&1 || die "user 'mysql' does not exist (is mariadb-server installed?)"
    else
        RUN_USER="$(id -un)" ADMIN_USER="$(id -un)"
    fi

    # 12 ports: client, gmcast, IST and SST for each node.
    read -r -a ports <<<"$(pick_ports 12)"
    [ "${#ports[@]}" -eq 12 ] || die "could not pick free ports"
    {
        echo "# written by galera.sh start; sourced by the other subcommands"
        for n in "${NODES[@]}"; do
            i=$(( (n - 1) * 4 ))
            echo "CLIENT_PORT_$n=${ports[i]}"
            echo "GMCAST_PORT_$n=${ports[i+1]}"
            echo "IST_PORT_$n=${ports[i+2]}"
            echo "SST_PORT_$n=${ports[i+3]}"
        done
        printf 'RUN_USER=%q\nADMIN_USER=%q\nMARIADBD=%q\nPROVIDER=%q\n' \
            "$RUN_USER" "$ADMIN_USER" "$MARIADBD" "$PROVIDER"
    } >"$DIR/cluster.state"
    load_state

    # Directories; mariadbd runs as mysql, so DIR and every parent must be
    # traversable by others (mktemp -d makes DIR mode 0700).
    for n in "${NODES[@]}"; do
        mkdir -p "$DIR/node$n/data" "$DIR/node$n/tmp"
        : >"$DIR/node$n/error.log"
    done
    if [ "$(id -u)" -eq 0 ]; then
        chmod 0755 "$DIR"
        p="$(dirname "$DIR")"
        while [ "$p" != / ]; do
            if [ "$(( 0$(stat -c %a "$p") & 1 ))" -eq 0 ]; then
                log "making $p traversable (chmod o+x) so user $RUN_USER can reach $DIR"
                chmod o+x "$p"
            fi
            p="$(dirname "$p")"
        done
        for n in "${NODES[@]}"; do chown -R "$RUN_USER:" "$DIR/node$n"; done
    fi

    # Initialise node 1's datadir once and copy it to nodes 2 and 3 (they get
    # a full rsync SST from node 1 anyway when they join).
    log "initialising data directory"
    # A temporary directory of its own, as each node's server has (see scripts/testdb.sh: a
    # bootstrap in a shared /tmp lost its temporary tables to another part's bootstrap).
    if ! mariadb-install-db --no-defaults --user="$RUN_USER" --tmpdir="$DIR/node1/tmp" \
            --datadir="$DIR/node1/data" --auth-root-authentication-method=socket \
            --skip-test-db --skip-name-resolve \
            --innodb-buffer-pool-size=64M --innodb-log-file-size=16M \
            >"$DIR/node1/install-db.log" 2>&1; then
        cat "$DIR/node1/install-db.log" >&2
        die "mariadb-install-db failed"
    fi
    for n in 2 3; do
        cp -a "$DIR/node1/data/." "$DIR/node$n/data/"
    done

    # Bootstrap node 1, then let nodes 2 and 3 join (each gets an rsync SST;
    # a donor serves one joiner at a time and the other retries every second).
    # Node 3 is started only once node 2 is a member of the component: two
    # nodes joining at the very same moment make gcomm's membership protocol
    # run into install timeouts, which costs several seconds.
    start_node 1 --wsrep-new-cluster
    wait_for "$START_TIMEOUT" 1 1 || die "node 1 did not bootstrap"
    log "node 1 bootstrapped after $(since "$t0")s"
    start_node 2
    wait_size 1 2 $((START_TIMEOUT - (SECONDS - s0))) || die "node 2 did not join the component"
    start_node 3
    wait_for $((START_TIMEOUT - (SECONDS - s0))) 3 1 2 3 \
        || die "cluster did not reach 3 Synced nodes"
    log "cluster of 3 Synced nodes formed after $(since "$t0")s"

    # Test database and account; DDL/ACL statements replicate (TOI). Anonymous
    # accounts would shadow 'mysqlleader'@'%' for local connections: drop any.
    local anon h sql=""
    anon="$(admin_sql 1 "SELECT Host FROM mysql.user WHERE User=''")"
    for h in $anon; do sql+="DROP USER IF EXISTS ''@'$h'; "; done
    admin_sql 1 "$sql
        CREATE DATABASE IF NOT EXISTS $DB_NAME;
        CREATE USER IF NOT EXISTS '$DB_USER'@'%' IDENTIFIED BY '$DB_PASS';
        CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PASS';
        GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'%' WITH GRANT OPTION;
        GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'localhost' WITH GRANT OPTION;" \
        || die "creating database/user on node 1 failed"

    # Check that the account works over TCP on every node (proves replication).
    local deadline=$((SECONDS + 30))
    for n in "${NODES[@]}"; do
        until timeout 10 mariadb --no-defaults --protocol=tcp --host=127.0.0.1 \
                --port="$(port_of client "$n")" --user="$DB_USER" \
                --password="$DB_PASS" --connect-timeout=5 "$DB_NAME" \
                -e 'SELECT 1' >/dev/null 2>&1; do
            [ "$SECONDS" -lt "$deadline" ] || die "cannot log in as $DB_USER on node $n"
            sleep 0.3
        done
    done

    {
        for n in "${NODES[@]}"; do
            echo "export MYSQLLEADER_GALERA_URL$n=mysql://$DB_USER:$DB_PASS@127.0.0.1:$(port_of client "$n")/$DB_NAME"
        done
        echo "export MYSQLLEADER_GALERA_DIR=$DIR"
    } >"$DIR/env"
    log "ready after $(since "$t0")s"
    trap - EXIT INT TERM
    cat "$DIR/env"
}

cmd_stop() {
    if [ ! -e "$DIR" ]; then
        log "$DIR does not exist; nothing to stop"
        return 0
    fi
    [ -f "$DIR/.galera-sh" ] || die "$DIR was not created by galera.sh (no .galera-sh marker); refusing to delete it"
    if [ -f "$DIR/cluster.state" ]; then
        load_state
        stop_nodes "$STOP_TIMEOUT" "${NODES[@]}"
    fi
    rm -rf -- "$DIR"
    log "stopped and removed $DIR"
}

cmd_kill() {
    local n="$1" pid deadline
    check_node "$n"
    load_state
    pid="$(node_pid "$n")"
    [ -n "$pid" ] || die "node $n is not running"
    kill -KILL "$pid"
    deadline=$((SECONDS + 10))
    while pid_alive "$pid"; do
        [ "$SECONDS" -lt "$deadline" ] || die "node $n (pid $pid) survived SIGKILL"
        sleep 0.1
    done
    sweep_helpers "$n"
    log "node $n (pid $pid) killed"
}

cmd_restart() {
    local n="$1" t0=$EPOCHREALTIME
    check_node "$n"
    load_state
    [ -z "$(node_pid "$n")" ] || die "node $n is already running"
    sweep_helpers "$n"
    # Never bootstrap on restart: the node joins the running component through
    # the gcomm addresses of the others (also when it was the bootstrap node).
    start_node "$n"
    if ! wait_for "$WAIT_TIMEOUT" "" "$n"; then
        stop_nodes 5 "$n"
        die "node $n did not rejoin (stopped it again)"
    fi
    log "node $n Synced after $(since "$t0")s"
}

cmd_isolate() {
    local n="$1" mode="${2:-}" t0=$EPOCHREALTIME deadline st size cs
    check_node "$n"
    load_state
    [ -n "$(node_pid "$n")" ] || die "node $n is not running"
    case "$mode" in
        on)
            admin_sql "$n" "SET GLOBAL wsrep_provider_options='gmcast.isolate=1'"
            deadline=$((SECONDS + WAIT_TIMEOUT))
            while :; do
                IFS="|" read -r st size cs <<<"$(wsrep_status "$n")" || true
                [ -n "${cs:-}" ] && [ "$cs" != Primary ] && break
                [ "$SECONDS" -lt "$deadline" ] || die "node $n still Primary ${WAIT_TIMEOUT}s after isolation"
                sleep 0.2
            done
            log "node $n isolated: $cs after $(since "$t0")s"
            ;;
        off)
            admin_sql "$n" "SET GLOBAL wsrep_provider_options='gmcast.isolate=0'"
            wait_for "$WAIT_TIMEOUT" "" "$n" || die "node $n did not rejoin after isolation"
            log "node $n rejoined and Synced after $(since "$t0")s"
            ;;
        *) die "isolate needs 'on' or 'off', got '$mode'" ;;
    esac
}

cmd_status() {
    load_state
    print_status
}

# --- main ---------------------------------------------------------------------

main() {
    [ $# -ge 2 ] || usage
    local cmd="$1"
    DIR="$(abs_path "$2")"
    shift 2
    case "$cmd" in
        start)   [ $# -eq 0 ] || usage; cmd_start ;;
        stop)    [ $# -eq 0 ] || usage; cmd_stop ;;
        kill)    [ $# -eq 1 ] || usage; cmd_kill "$1" ;;
        restart) [ $# -eq 1 ] || usage; cmd_restart "$1" ;;
        isolate) [ $# -eq 2 ] || usage; cmd_isolate "$1" "$2" ;;
        status)  [ $# -eq 0 ] || usage; cmd_status ;;
        *) usage ;;
    esac
}

main "$@"
