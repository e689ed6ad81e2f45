#!/usr/bin/env bash
# scripts/group-replication.sh - a throwaway 3-member MySQL Group Replication group on
# 127.0.0.1 for mysqlleader's tests (MySQL 9.7 from the Debian sid root that lib.sh's
# ensure_mysql builds once; needs root, since the servers run chrooted into it).
#
# Usage:
#
#   group-replication.sh start DIR [single|multi]
#                            create DIR, start 3 members (single-primary by default,
#                            multi-primary with "multi"), bootstrap the group on member 1,
#                            let 2 and 3 join, wait until all 3 are ONLINE, create the
#                            user/database, write DIR/env and print its lines (the only
#                            thing written to stdout).
#   group-replication.sh stop DIR
#                            SIGTERM all members (SIGKILL after 30 s), remove their data
#                            inside the MySQL root, then remove DIR. No-op if DIR is absent.
#   group-replication.sh kill DIR N      SIGKILL member N (1..3) and wait until it is gone.
#   group-replication.sh restart DIR N   SIGTERM member N (SIGKILL after 30 s), start it
#                            again and START GROUP_REPLICATION; waits until it is ONLINE.
#   group-replication.sh relaunch DIR N  start member N again after a kill and
#                            START GROUP_REPLICATION; waits until it is ONLINE.
#   group-replication.sh primary DIR     print the number (1..3) of the member that is the
#                            ONLINE PRIMARY (in multi-primary mode: every one, one a line).
#   group-replication.sh status DIR      one line per member: port, pid, state, role.
#   group-replication.sh run [single|multi] CMD...
#                            start a group in a fresh temporary directory, run CMD with
#                            DIR/env exported, stop the group whatever happens, and exit
#                            with CMD's status.
#
# DIR/env exports:
#   MYSQLLEADER_GR_URLS   "mysql://mysqlleader:mysqlleader@127.0.0.1:PORT/mysqlleader_test"
#                         for members 1, 2, 3, separated by spaces
#   MYSQLLEADER_GR_MODE   single | multi
#   MYSQLLEADER_GR_DIR    DIR
#   MYSQLLEADER_TEST_KIND mysql
# The account 'mysqlleader'@'%' has every privilege WITH GRANT OPTION and MySQL's default
# authentication (caching_sha2_password; clients need TLS, which the servers offer with
# their auto-generated certificates, or the server's RSA key).
#
# Layout: DIR/.group-replication-sh (marker: "stop" only deletes directories carrying it),
# DIR/group.state (ports, mode; sourced by the other subcommands), DIR/env, DIR/memberN.err
# (link to member N's error log). Member N's data directory is
# $MYSQL_ROOT/var/lib/mysqlleader/gr-<basename of DIR>-N (its error log and pid file next
# to it, suffixed .err and .pid), its admin socket /run/mysqld/gr-<basename of DIR>-N.sock
# inside the root (root without a password).
#
# Each member has a free loopback SQL port and a free XCom port (taken below the kernel's
# ephemeral range). Group communication and distributed recovery use TLS (MySQL's defaults
# group_replication_ssl_mode=REQUIRED and group_replication_recovery_use_ssl=ON, with the
# certificates mysqld generates at initialisation), which is also what lets the recovery
# account use caching_sha2_password. report_host is 127.0.0.1, so that recovery connects to
# the donor on loopback whatever the machine's host name resolves to.
# Failure detection is MySQL's default: a killed member is suspected after ~5 s and expelled
# after group_replication_member_expel_timeout (5 s) more.
#
# Environment knobs (all optional):
#   GR_START_TIMEOUT   seconds to wait for the 3 members to be ONLINE (default 90)
#   GR_WAIT_TIMEOUT    seconds restart/relaunch wait for the member to be ONLINE (default 90)
#   GR_JOIN_TRIES_BEFORE_MOVE  failed joins of one member before it takes a fresh XCom port
#                      (default 2)

set -euo pipefail

export PATH="${PATH:-/usr/bin:/bin}:/usr/local/sbin:/usr/sbin:/sbin"
export LC_ALL=C  # $EPOCHREALTIME uses a "." decimal point

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib.sh"   # ensure_mysql, mysql_client, MYSQL_ROOT, pick_ports

readonly MEMBERS=(1 2 3)
readonly GROUP_NAME=6d797371-6c6c-6561-6465-720000000001  # fixed: "mysqlleader" in hex
readonly DB_NAME=mysqlleader_test
readonly DB_USER=mysqlleader
readonly DB_PASS=mysqlleader
readonly RECOVERY_USER=gr_recovery
readonly RECOVERY_PASS=gr_recovery
readonly START_TIMEOUT="${GR_START_TIMEOUT:-90}"
readonly WAIT_TIMEOUT="${GR_WAIT_TIMEOUT:-90}"
readonly STOP_TIMEOUT=30
readonly JOIN_TRIES_BEFORE_MOVE="${GR_JOIN_TRIES_BEFORE_MOVE:-2}"
readonly MARKER=.group-replication-sh

# --- output helpers -----------------------------------------------------------

log() { printf 'group-replication.sh: %s\n' "$*" >&2; }
die() { printf 'group-replication.sh: ERROR: %s\n' "$*" >&2; exit 1; }

# since T0: seconds elapsed since T0 (an $EPOCHREALTIME value), to 0.1 s.
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

usage() {
    sed -n '6,28p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# --- state --------------------------------------------------------------------

abs_path() {
    case "$1" in
        /*) printf '%s\n' "${1%/}" ;;
        *) printf '%s/%s\n' "$(pwd)" "${1%/}" ;;
    esac
}

check_member() {
    case "${1:-}" in 1|2|3) ;; *) die "member must be 1, 2 or 3, got '${1:-}'" ;; esac
}

# member_id N: name of member N's data directory (and socket) inside the root.
member_id() { printf 'gr-%s-%s\n' "$(basename "$DIR")" "$1"; }

# port_of N / grport_of N: SQL port / XCom port of member N.
port_of() { local v="PORT_$1"; printf '%s\n' "${!v}"; }
grport_of() { local v="GRPORT_$1"; printf '%s\n' "${!v}"; }

load_state() {
    [ -f "$DIR/group.state" ] || die "$DIR is not a directory made by 'group-replication.sh start' (no group.state)"
    # shellcheck disable=SC1091
    . "$DIR/group.state"
}


# --- processes ----------------------------------------------------------------

pid_alive() {
    local pid="$1" state
    [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
    state="$(sed -e 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)" || return 1
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# member_pid N: pid of member N's mysqld if it is running, else nothing. Only trusted when
# its command line names member N's data directory (no recycled pid is ever signalled).
member_pid() {
    local n="$1" pid
    pid="$(cat "$DIR/member$n.pid" 2>/dev/null || true)"
    pid_alive "$pid" || return 0
    if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null \
            | grep -qF -- "--datadir=/var/lib/mysqlleader/$(member_id "$n") "; then
        printf '%s\n' "$pid"
    fi
}

signal_member() {
    local pid
    pid="$(member_pid "$1")"
    if [ -n "$pid" ]; then kill "-$2" "$pid" 2>/dev/null || true; fi
}

# stop_members GRACE N...: SIGTERM the given members together, wait up to GRACE seconds,
# SIGKILL the survivors.
stop_members() {
    local grace="$1" n alive killed=0 deadline
    shift
    for n in "$@"; do signal_member "$n" CONT; signal_member "$n" TERM; done
    deadline=$((SECONDS + grace))
    while :; do
        alive=""
        for n in "$@"; do [ -n "$(member_pid "$n")" ] && alive+=" $n"; done
        [ -z "$alive" ] && return 0
        if [ "$SECONDS" -ge "$deadline" ]; then
            if [ "$killed" -eq 1 ]; then
                log "WARNING: member(s)$alive survived SIGKILL for 10 s; giving up"
                return 1
            fi
            log "member(s)$alive still running after ${grace}s, sending SIGKILL"
            for n in $alive; do signal_member "$n" KILL; done
            killed=1
            deadline=$((SECONDS + 10))
        fi
        sleep 0.2
    done
}

# --- SQL ----------------------------------------------------------------------

# admin_sql N SQL: run SQL on member N as root over its socket; batch output without
# column names. Bounded to 60 s (START GROUP_REPLICATION can take a while).
admin_sql() {
    timeout 60 chroot "$MYSQL_ROOT" mysql --no-defaults --socket="/run/mysqld/$(member_id "$1").sock" \
        -uroot --connect-timeout=5 --batch --skip-column-names -e "$2"
}

# member_view N: "STATE ROLE" of member N as it sees itself; nothing if unreachable.
member_view() {
    admin_sql "$1" "SELECT MEMBER_STATE, MEMBER_ROLE FROM performance_schema.replication_group_members WHERE MEMBER_ID = @@server_uuid" 2>/dev/null || true
}

# online_count N: how many members member N sees ONLINE (empty if unreachable).
online_count() {
    admin_sql "$1" "SELECT COUNT(*) FROM performance_schema.replication_group_members WHERE MEMBER_STATE = 'ONLINE'" 2>/dev/null || true
}

show_logs() {
    local n
    for n in "$@"; do
        printf '\n----- tail of member %s error log -----\n' "$n" >&2
        tail -n 30 "$MYSQL_ROOT/var/lib/mysqlleader/$(member_id "$n").err" >&2 2>/dev/null || echo "(no log)" >&2
    done
}

# --- members ------------------------------------------------------------------

# launch_member N: start member N's mysqld on its data directory and ports, and wait (at most
# 90 s) until it answers on its socket. Group Replication is not started (start_on_boot OFF).
launch_member() {
    local n="$1" id pid i seeds="" m mode_args=()
    id="$(member_id "$n")"
    for m in "${MEMBERS[@]}"; do seeds+="${seeds:+,}127.0.0.1:$(grport_of "$m")"; done
    if [ "$MODE" = multi ]; then
        mode_args=(--group-replication-single-primary-mode=OFF
                   --group-replication-enforce-update-everywhere-checks=ON)
    fi
    rm -f "$MYSQL_ROOT/run/mysqld/$id.sock" "$MYSQL_ROOT/run/mysqld/$id.sock.lock"
    # A temporary directory of its own: a server starting removes every "#sql*" file of its
    # temporary directory, another server's temporary tables in use too.
    mkdir -p "$MYSQL_ROOT/var/lib/mysqlleader/$id.tmp"
    setsid chroot "$MYSQL_ROOT" mysqld --no-defaults --user=root \
        --datadir="/var/lib/mysqlleader/$id" --tmpdir="/var/lib/mysqlleader/$id.tmp" --socket="/run/mysqld/$id.sock" \
        --port="$(port_of "$n")" --bind-address=127.0.0.1 --report-host=127.0.0.1 --mysqlx=OFF \
        --pid-file="/var/lib/mysqlleader/$id.pid" --log-error="/var/lib/mysqlleader/$id.err" \
        --secure-file-priv= --skip-name-resolve --event-scheduler=ON --max-connections=500 \
        --innodb-buffer-pool-size=128M --innodb-redo-log-capacity=128M \
        --server-id="$n" --gtid-mode=ON --enforce-gtid-consistency=ON --log-bin \
        --plugin-load-add=group_replication.so \
        --group-replication-group-name="$GROUP_NAME" \
        --group-replication-local-address="127.0.0.1:$(grport_of "$n")" \
        --group-replication-group-seeds="$seeds" \
        --group-replication-start-on-boot=OFF --group-replication-bootstrap-group=OFF \
        --super-read-only=ON \
        --group-replication-consistency=BEFORE_ON_PRIMARY_FAILOVER \
        --group-replication-ip-allowlist=127.0.0.1/8 \
        "${mode_args[@]}" \
        </dev/null >/dev/null 2>&1 9>&- &
    pid=$!
    disown "$pid" 2>/dev/null || true
    echo "$pid" >"$DIR/member$n.pid"
    for i in $(seq 1 900); do
        if admin_sql "$n" 'SELECT 1' >/dev/null 2>&1; then
            log "member $n up (pid $pid, port $(port_of "$n"), XCom port $(grport_of "$n"))"
            return 0
        fi
        if ! pid_alive "$pid"; then
            show_logs "$n"
            die "member $n's mysqld exited during start-up (log above)"
        fi
        sleep 0.1
    done
    show_logs "$n"
    die "member $n's mysqld did not answer within 90 s"
}

# listed_elsewhere N: how many of the other running members still list member N (by its SQL
# port) in their view: an incarnation killed a moment before stays there, UNREACHABLE, until the
# group expels it (about 10 s after the kill).
listed_elsewhere() {
    local n="$1" m count total=0
    for m in "${MEMBERS[@]}"; do
        [ "$m" != "$n" ] && [ -n "$(member_pid "$m")" ] || continue
        count="$(admin_sql "$m" "SELECT COUNT(*) FROM performance_schema.replication_group_members
            WHERE MEMBER_PORT = $(port_of "$n") AND MEMBER_ID <> @@server_uuid" 2>/dev/null || echo 0)"
        total=$((total + ${count:-0}))
    done
    printf '%s\n' "$total"
}

# print_views: every running member's view of the group, one member a line (to stderr).
print_views() {
    local m
    for m in "${MEMBERS[@]}"; do
        [ -n "$(member_pid "$m")" ] || { log "  member $m: down"; continue; }
        log "  member $m sees: $(admin_sql "$m" "SELECT GROUP_CONCAT(CONCAT(MEMBER_PORT, ' ', MEMBER_STATE) ORDER BY MEMBER_PORT SEPARATOR ', ')
            FROM performance_schema.replication_group_members" 2>/dev/null || echo '(no answer)')"
    done
}

# move_xcom N: give member N a fresh XCom address (group_replication_local_address), recorded
# in group.state. A group whose members keep refusing an address (its old incarnation not yet
# forgotten by their XCom) takes a new one as a new node.
move_xcom() {
    local n="$1" port
    port="$(pick_ports 1)"
    [ -n "$port" ] || die "could not pick a free port for member $n's group communication"
    admin_sql "$n" "SET GLOBAL group_replication_local_address = '127.0.0.1:$port'" \
        || die "could not move member $n's group communication to port $port"
    sed -i "s/^GRPORT_$n=.*/GRPORT_$n=$port/" "$DIR/group.state"
    load_state
    log "member $n: group communication moved to port $port"
}

# join_member N: START GROUP_REPLICATION on member N (not bootstrapping).
#  1. Wait (at most 30 s) until no other member lists N's old incarnation: a join while the
#     group still has it fails ("Error connecting to all peers").
#  2. START GROUP_REPLICATION (the server's own join attempts take up to about 60 s, so the
#     client waits 100 s). On failure: stop it, print what every member sees, wait 5 s.
#  3. After JOIN_TRIES_BEFORE_MOVE failures the member takes a fresh XCom address (move_xcom):
#     CI saw the two live members refuse one rejoin for 13 minutes, every try failing at once.
#  4. 8 tries in all, then give up with every member's log.
join_member() {
    local n="$1" try deadline=$((SECONDS + 30))
    while [ "$(listed_elsewhere "$n")" != 0 ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.5; done
    for try in 1 2 3 4 5 6 7 8; do
        timeout 100 chroot "$MYSQL_ROOT" mysql --no-defaults --socket="/run/mysqld/$(member_id "$n").sock" \
            -uroot --connect-timeout=5 -e "START GROUP_REPLICATION" && return 0
        log "member $n: START GROUP_REPLICATION failed (try $try of 8); again in 5 s; the group meanwhile:"
        admin_sql "$n" "STOP GROUP_REPLICATION" >/dev/null 2>&1 || true
        print_views
        sleep 5
        if [ "$try" -eq "$JOIN_TRIES_BEFORE_MOVE" ]; then move_xcom "$n"; fi
    done
    show_logs "${MEMBERS[@]}"
    die "START GROUP_REPLICATION failed on member $n"
}

# wait_online TIMEOUT WANT N...: wait until each listed member is running, sees itself
# ONLINE and (unless WANT is empty) sees WANT members ONLINE. Returns 1 (after printing status and logs) on timeout.
wait_online() {
    local timeout="$1" want="$2"; shift 2
    local deadline=$((SECONDS + timeout)) n ok view
    while :; do
        ok=1
        for n in "$@"; do
            if [ -z "$(member_pid "$n")" ]; then
                log "member $n (mysqld) exited unexpectedly"
                show_logs "$n"
                return 1
            fi
            view="$(member_view "$n")"
            if [ "${view%%$'\t'*}" != ONLINE ] \
                || { [ -n "$want" ] && [ "$(online_count "$n")" != "$want" ]; }; then
                ok=0
            fi
        done
        [ "$ok" -eq 1 ] && return 0
        if [ "$SECONDS" -ge "$deadline" ]; then
            log "timed out after ${timeout}s waiting for member(s) $* to be ONLINE among $want"
            print_status >&2 || true
            show_logs "$@"
            return 1
        fi
        sleep 0.5
    done
}

# remove_member_files N: member N's data, logs and socket inside the root (it must be down).
remove_member_files() {
    local id
    id="$(member_id "$1")"
    rm -rf -- "$MYSQL_ROOT/var/lib/mysqlleader/$id" "$MYSQL_ROOT/var/lib/mysqlleader/$id.err" "$MYSQL_ROOT/var/lib/mysqlleader/$id.tmp" \
        "$MYSQL_ROOT/var/lib/mysqlleader/$id.pid" "$MYSQL_ROOT/run/mysqld/$id.sock" \
        "$MYSQL_ROOT/run/mysqld/$id.sock.lock"
}

# --- subcommands --------------------------------------------------------------

print_status() {
    local n pid view st role
    printf '%-7s %-6s %-8s %-12s %s\n' member port pid state role
    for n in "${MEMBERS[@]}"; do
        pid="$(member_pid "$n")"
        st=down role=-
        if [ -n "$pid" ]; then
            view="$(member_view "$n")"
            st="${view%%$'\t'*}" role="${view#*$'\t'}"
            [ -n "$view" ] || { st=OFFLINE; role=-; }
        fi
        printf '%-7s %-6s %-8s %-12s %s\n' "$n" "$(port_of "$n")" "${pid:--}" "$st" "$role"
    done
}

# start_failed: EXIT trap of cmd_start; on failure stop the members started so far and
# remove their data inside the root (their error logs are copied into DIR first; DIR is kept,
# "stop DIR" removes it).
start_failed() {
    local rc=$? n id
    trap - EXIT INT TERM
    exec 2>&9  # the signal may have come while stderr was sent to /dev/null
    if [ "$rc" -ne 0 ]; then
        log "start failed; stopping the members (error logs copied to $DIR/memberN.err)"
        stop_members 5 "${MEMBERS[@]}" || true
        for n in "${MEMBERS[@]}"; do
            id="$(member_id "$n")"
            rm -f "$DIR/member$n.err"
            cp "$MYSQL_ROOT/var/lib/mysqlleader/$id.err" "$DIR/member$n.err" 2>/dev/null || true
            remove_member_files "$n"
        done
    fi
    exit "$rc"
}

cmd_start() {
    local t0=$EPOCHREALTIME n id ports pids=() i
    [ -e "$DIR" ] && [ -n "$(ls -A "$DIR" 2>/dev/null)" ] \
        && die "$DIR exists and is not empty; pass a fresh directory (e.g. from mktemp -d)"
    ensure_mysql group-replication.sh || die "MySQL is needed: run as root (it is built once under $MYSQL_ROOT)"
    command -v python3 >/dev/null 2>&1 || die "python3 is needed (to pick free ports)"
    for n in "${MEMBERS[@]}"; do
        id="$(member_id "$n")"
        [ ! -e "$MYSQL_ROOT/var/lib/mysqlleader/$id" ] \
            || die "$MYSQL_ROOT/var/lib/mysqlleader/$id already exists (another group with a DIR named $(basename "$DIR")?)"
    done
    mkdir -p "$DIR"
    : >"$DIR/$MARKER"
    trap start_failed EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM

    read -r -a ports <<<"$(pick_ports 6)"
    [ "${#ports[@]}" -eq 6 ] || die "could not pick free ports"
    {
        echo "# written by group-replication.sh start; sourced by the other subcommands"
        echo "MODE=$MODE"
        for n in "${MEMBERS[@]}"; do
            echo "PORT_$n=${ports[(n - 1) * 2]}"
            echo "GRPORT_$n=${ports[(n - 1) * 2 + 1]}"
        done
    } >"$DIR/group.state"
    load_state

    # Three fresh data directories (root@localhost without a password), made side by side.
    log "initialising 3 data directories ($MODE-primary group)"
    for n in "${MEMBERS[@]}"; do
        id="$(member_id "$n")"
        ln -s "$MYSQL_ROOT/var/lib/mysqlleader/$id.err" "$DIR/member$n.err"
        chroot "$MYSQL_ROOT" mysqld --no-defaults --initialize-insecure --user=root \
            --datadir="/var/lib/mysqlleader/$id" >"$DIR/install$n.log" 2>&1 9>&- &
        pids+=($!)
    done
    for i in 0 1 2; do
        wait "${pids[i]}" || { cat "$DIR/install$((i + 1)).log" >&2; die "mysqld --initialize-insecure failed for member $((i + 1))"; }
    done
    log "data directories ready after $(since "$t0")s"

    for n in "${MEMBERS[@]}"; do launch_member "$n"; done

    # The recovery account, outside the binary log (every member has it before it joins, so
    # the members' GTID sets stay identical), and the recovery channel's credentials. The
    # channel uses TLS (group_replication_recovery_use_ssl=ON by default), as
    # caching_sha2_password requires without an RSA key exchange.
    # Members start read-only (super_read_only=ON, as MySQL advises for a group's members): a
    # member relaunched after a kill takes no client's write before it has rejoined (a write
    # then, an elector's campaign, is a transaction the group does not have, and the member can
    # never rejoin: "This member has more executed transactions than those present in the
    # group"); Group Replication makes the primary writable itself. The recovery account is
    # created with it off for a moment.
    for n in "${MEMBERS[@]}"; do
        admin_sql "$n" "SET GLOBAL super_read_only=OFF;
            SET SQL_LOG_BIN=0;
            CREATE USER '$RECOVERY_USER'@'%' IDENTIFIED BY '$RECOVERY_PASS';
            GRANT REPLICATION SLAVE, BACKUP_ADMIN, GROUP_REPLICATION_STREAM, CONNECTION_ADMIN ON *.* TO '$RECOVERY_USER'@'%';
            SET SQL_LOG_BIN=1;
            SET GLOBAL super_read_only=ON;
            CHANGE REPLICATION SOURCE TO SOURCE_USER='$RECOVERY_USER', SOURCE_PASSWORD='$RECOVERY_PASS' FOR CHANNEL 'group_replication_recovery';" \
            || die "setting up the recovery account on member $n failed"
    done

    admin_sql 1 "SET GLOBAL group_replication_bootstrap_group=ON;
        START GROUP_REPLICATION;
        SET GLOBAL group_replication_bootstrap_group=OFF;" \
        || { admin_sql 1 "SET GLOBAL group_replication_bootstrap_group=OFF" >/dev/null 2>&1 || true
             show_logs 1; die "bootstrapping the group on member 1 failed"; }
    log "member 1 bootstrapped the group after $(since "$t0")s"
    join_member 2
    join_member 3
    wait_online "$START_TIMEOUT" 3 "${MEMBERS[@]}" || die "the group did not reach 3 ONLINE members"
    log "3 members ONLINE after $(since "$t0")s"

    # Test database and account, on the primary (member 1, which bootstrapped); they replicate.
    admin_sql 1 "CREATE DATABASE IF NOT EXISTS $DB_NAME;
        CREATE USER IF NOT EXISTS '$DB_USER'@'%' IDENTIFIED BY '$DB_PASS';
        GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'%' WITH GRANT OPTION;" \
        || die "creating database/user on member 1 failed"
    local deadline=$((SECONDS + 30))
    for n in "${MEMBERS[@]}"; do
        until timeout 10 chroot "$MYSQL_ROOT" mysql --no-defaults --protocol=tcp --host=127.0.0.1 \
                --port="$(port_of "$n")" --user="$DB_USER" --password="$DB_PASS" \
                --connect-timeout=5 "$DB_NAME" -e 'SELECT 1' >/dev/null 2>&1; do
            [ "$SECONDS" -lt "$deadline" ] || die "cannot log in as $DB_USER on member $n"
            sleep 0.3
        done
    done

    local urls=""
    for n in "${MEMBERS[@]}"; do
        urls+="${urls:+ }mysql://$DB_USER:$DB_PASS@127.0.0.1:$(port_of "$n")/$DB_NAME"
    done
    {
        echo "export MYSQLLEADER_GR_URLS='$urls'"
        echo "export MYSQLLEADER_GR_MODE=$MODE"
        echo "export MYSQLLEADER_GR_DIR=$DIR"
        echo "export MYSQLLEADER_TEST_KIND=mysql"
    } >"$DIR/env"
    log "ready after $(since "$t0")s"
    trap - EXIT INT TERM
    cat "$DIR/env"
}

cmd_stop() {
    local n
    if [ ! -e "$DIR" ]; then
        log "$DIR does not exist; nothing to stop"
        return 0
    fi
    [ -f "$DIR/$MARKER" ] || die "$DIR was not created by group-replication.sh (no $MARKER marker); refusing to delete it"
    if [ -f "$DIR/group.state" ]; then
        load_state
        stop_members "$STOP_TIMEOUT" "${MEMBERS[@]}" || die "members still running; $DIR kept"
        for n in "${MEMBERS[@]}"; do remove_member_files "$n"; done
    fi
    rm -rf -- "$DIR"
    log "stopped and removed $DIR"
}

cmd_kill() {
    local n="$1" pid deadline
    check_member "$n"
    load_state
    pid="$(member_pid "$n")"
    [ -n "$pid" ] || die "member $n is not running"
    kill -KILL "$pid"
    deadline=$((SECONDS + 10))
    while pid_alive "$pid"; do
        [ "$SECONDS" -lt "$deadline" ] || die "member $n (pid $pid) survived SIGKILL"
        sleep 0.1
    done
    log "member $n (pid $pid) killed"
}

# rejoin N: launch member N and START GROUP_REPLICATION; wait until it is ONLINE.
rejoin() {
    local n="$1" t0=$EPOCHREALTIME
    launch_member "$n"
    join_member "$n"
    if ! wait_online "$WAIT_TIMEOUT" "" "$n"; then
        die "member $n did not come back ONLINE (it is left running)"
    fi
    log "member $n ONLINE again after $(since "$t0")s"
}

cmd_restart() {
    local n="$1"
    check_member "$n"
    load_state
    stop_members "$STOP_TIMEOUT" "$n" || die "member $n does not stop"
    rejoin "$n"
}

cmd_relaunch() {
    local n="$1"
    check_member "$n"
    load_state
    [ -z "$(member_pid "$n")" ] || die "member $n is already running"
    rejoin "$n"
}

cmd_primary() {
    local n view port m found=""
    load_state
    # Ask a member that is itself ONLINE (a member that left the group has a stale view).
    for n in "${MEMBERS[@]}"; do
        [ -n "$(member_pid "$n")" ] || continue
        view="$(member_view "$n")"
        [ "${view%%$'\t'*}" = ONLINE ] || continue
        for port in $(admin_sql "$n" "SELECT MEMBER_PORT FROM performance_schema.replication_group_members WHERE MEMBER_ROLE = 'PRIMARY' AND MEMBER_STATE = 'ONLINE' ORDER BY MEMBER_PORT" 2>/dev/null); do
            for m in "${MEMBERS[@]}"; do
                [ "$(port_of "$m")" = "$port" ] && found+="$m"$'\n'
            done
        done
        [ -n "$found" ] && break
    done
    [ -n "$found" ] || die "no ONLINE member reports an ONLINE PRIMARY"
    printf '%s' "$found" | sort -n
}

cmd_run() {
    local status=0
    DIR="$(mktemp -d "${TMPDIR:-/tmp}/mysqlleader-gr.XXXXXX")"
    trap 'exec 2>&9; cmd_stop' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    ( cmd_start ) >/dev/null || exit $?
    # shellcheck disable=SC1091
    . "$DIR/env"
    log "throwaway $MODE-primary group: $MYSQLLEADER_GR_URLS"
    "$@" || status=$?
    exit "$status"
}

# --- main ---------------------------------------------------------------------

main() {
    # fd 9: the real stderr, for EXIT traps that may run where stderr is sent to /dev/null
    # (servers are started with it closed, so that they never hold a caller's pipe open).
    exec 9>&2
    [ $# -ge 1 ] || usage
    local cmd="$1"
    shift
    MODE=single
    if [ "$cmd" = run ]; then
        case "${1:-}" in single|multi) MODE="$1"; shift ;; esac
        [ $# -ge 1 ] || usage
        cmd_run "$@"
        return
    fi
    [ $# -ge 1 ] || usage
    DIR="$(abs_path "$1")"
    shift
    case "$cmd" in
        start)
            case "${1:-single}" in single|multi) MODE="${1:-single}" ;; *) usage ;; esac
            [ $# -le 1 ] || usage
            cmd_start ;;
        stop)     [ $# -eq 0 ] || usage; cmd_stop ;;
        kill)     [ $# -eq 1 ] || usage; cmd_kill "$1" ;;
        restart)  [ $# -eq 1 ] || usage; cmd_restart "$1" ;;
        relaunch) [ $# -eq 1 ] || usage; cmd_relaunch "$1" ;;
        primary)  [ $# -eq 0 ] || usage; cmd_primary ;;
        status)   [ $# -eq 0 ] || usage; load_state; print_status ;;
        *) usage ;;
    esac
}

# Run unless sourced (a test sources the functions).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi
