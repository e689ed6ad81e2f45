-- leader_election_take_seats: the one body of campaign_seats (p_lease_id NULL) and take_seats
-- (the node lease the seats taken hang on: sql/V15__node_leases.sql).
-- One call for the seats a node may take now (issue "Sessions"): the batched
-- takeover. Takes, in one transaction, every seat in p_service_ids (a JSON array of service
-- ids) that is vacant or whose lease has expired and that no handover's reservation bars for
-- p_node_id (and whose expired term no fenced transaction still holds), as campaign's step 4 would: the expired term is closed in the history ('expired',
-- at its lease's end), the next term opened (term + 1, 'elected', began_by the session's
-- account) and any reservation ended. It never waits for a seat another transaction has locked
-- (it leaves that seat out), and it leaves to campaign what campaign alone decides: a seat
-- whose handover this node must acknowledge (it was the leader the handover displaced). The
-- seats of listed services that have none yet are created first, all in one statement (step 0:
-- a node's first start with many new services takes them in one call, not one campaign each). A service outside the account's patterns is left out before any
-- seat is read (sql/V14__access_by_account.sql); a list that is not one of distinct ids is
-- refused (leader_election_check_ids). The caller sends campaign for each listed seat missing
-- from the result.
-- Result: one row per listed seat led with a valid lease after the call, by this node (taken
-- by this call: is_leader 1) or by another node (is_leader 0), in the order of service_id:
-- service_id, leader_id, term, lease_remaining_ms (on the database's clock), is_leader. Seats
-- this node held before the call are left out (renew_seats renews them).
-- A transaction of its own, as campaign: what the caller left open is committed first (inside
-- an XA transaction the call is refused before it reads anything), and every way out ends the
-- call's own transaction. Each seat's take (its term, the seat and its history rows) is one
-- statement (sql/V13__term_and_history_in_one_statement.sql): a call cut short and then
-- committed by its caller commits each seat whole or not at all.
-- With p_lease_id (take_seats): the lease is renewed first, as renew_lease renews it (only by the
-- account it was granted to, for its node, while it is valid), and every seat taken hangs on it
-- (its lease then ends with the lease's, or later: sql/views/leader_election_seats.sql). A lease
-- that is no longer valid takes nothing. A seat that hangs on another node's lease is taken only
-- once that lease has ended, read under its row lock (a lease another transaction holds locked is
-- waited for, at most 1 s; then its seats are left out). The result then has one more column,
-- server_us (the call's time on the server, microseconds, on the lease's row; 0 on the
-- others), and one more row, the lease's: service_id NULL, leader_id the node, term the lease
-- id, lease_remaining_ms the time left on it (0 when it is no longer valid), is_leader 1 when
-- it was renewed.
-- Internal: campaign_seats and take_seats call it.
CREATE PROCEDURE leader_election_take_seats(
    IN p_lease_id    DECIMAL(65,30),
    IN p_node_id     MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_lease_ms    DECIMAL(65,30),
    IN p_service_ids LONGTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: the one body of campaign_seats and take_seats'
BEGIN
    DECLARE v_nid      VARBINARY(512);
    DECLARE v_lease_ms BIGINT;
    DECLARE v_now      DATETIME(6);
    DECLARE v_wait     BIGINT;
    DECLARE v_gcl      BIGINT UNSIGNED;
    DECLARE v_walk     LONGTEXT CHARACTER SET ascii;
    DECLARE v_w        INT;
    DECLARE v_list     LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_own      BOOLEAN DEFAULT FALSE;
    DECLARE v_take     LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_sid      VARBINARY(512);
    DECLARE v_i        INT;
    DECLARE v_n        INT;
    DECLARE v_new      LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_free     INT;
    DECLARE v_locked   INT;
    DECLARE v_open     INT;
    DECLARE v_lease    BIGINT UNSIGNED;
    DECLARE v_alive    INT DEFAULT 0;
    DECLARE v_began    DATETIME(6);
    DECLARE v_leases   LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_one      BOOLEAN DEFAULT TRUE;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
            -- Nothing half-done: the seats step 0 created go again, unless a node took one
            -- meanwhile (under a lock wait of at most 1 s, set by then).
            SET v_i = 0, v_n = COALESCE(JSON_LENGTH(v_new), 0);
            WHILE v_i < v_n DO
                DELETE FROM leader_election
                 WHERE service_id = CAST(JSON_UNQUOTE(JSON_EXTRACT(v_new, CONCAT('$[', v_i, ']'))) AS BINARY)
                   AND term = 0 AND leader_id IS NULL;
                SET v_i = v_i + 1;
            END WHILE;
            COMMIT;
            -- Not set yet when a check before it refused (MySQL refuses COALESCE over it: 1232).
            IF v_wait IS NOT NULL THEN
                SET SESSION innodb_lock_wait_timeout = v_wait;
            END IF;
            IF v_gcl IS NOT NULL THEN
                SET SESSION group_concat_max_len = v_gcl;
            END IF;
        END IF;
        RESIGNAL;
    END;

    -- @include own_transaction take_seats
    -- @include whole_lists v_gcl

    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_lease(p_lease_ms);
    IF p_lease_id IS NOT NULL THEN
        CALL leader_election_check_number('lease_id', p_lease_id, 1, 18446744073709551615);
    END IF;
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    SET v_nid = CAST(p_node_id AS BINARY), v_lease_ms = p_lease_ms, v_lease = p_lease_id,
        v_began = UTC_TIMESTAMP(6);
    -- Every read from here on in a transaction of the call's own (leader_election_begin: at
    -- READ COMMITTED, so plain reads lock nothing, whatever the session set). The list is
    -- checked, then cut to the services the account may act on, from its patterns alone: no
    -- seat outside them is read, locked or reported (sql/V14__access_by_account.sql).
    CALL leader_election_begin(FALSE);
    CALL leader_election_check_ids(p_service_ids, v_list);

    SET v_wait = @@session.innodb_lock_wait_timeout;
    SET SESSION innodb_lock_wait_timeout = 1;
    -- 0. Create the seats of the listed services that have none yet, in one statement, in the
    --    seats' key order (so that two nodes creating the same seats at once wait for each other
    --    instead of deadlocking), committed before any seat is locked. Which seats are new is a
    --    plain read (no lock); the INSERT reads nothing but that list. When another transaction
    --    creates one of them meanwhile (1062, or 1205/1213 while waiting for it), this call
    --    creates none and goes on: the seats that exist by then are taken below, and the caller
    --    campaigns for the rest one by one.
    SELECT JSON_ARRAYAGG(j.sid) INTO v_new
      FROM JSON_TABLE(v_list, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
      LEFT JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
     WHERE e.service_id IS NULL;
    IF v_new IS NOT NULL THEN
        BEGIN
            DECLARE EXIT HANDLER FOR 1062, 1205, 1213 BEGIN
                ROLLBACK;
                SET v_new = NULL;
            END;
            INSERT INTO leader_election (service_id, term)
            SELECT CAST(j.sid AS BINARY), 0
              FROM JSON_TABLE(v_new, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
             ORDER BY 1;
            COMMIT;
        END;
        CALL leader_election_begin(FALSE);
    END IF;
    SET v_now = UTC_TIMESTAMP(6);
    -- 0b. With a lease (take_seats): renew it first, as renew_lease does (leader_election_renew_lease:
    --     only the account it was granted to, for its node, while it is valid). The seats taken
    --     below hang on it. A lease that is no longer valid takes nothing: the answer says so,
    --     and the session asks for a new one (grant_lease).
    IF v_lease IS NOT NULL THEN
        CALL leader_election_renew_lease(v_lease, v_nid, v_lease_ms, v_now, v_alive);
        IF v_alive = 0 THEN
            SET v_list = '[]';
        END IF;
    END IF;
    -- 1. Lock the seats this node may take, skipping each that another transaction holds. The
    --    list drives the join (one primary-key lookup per listed service, never a scan: see
    --    renew_seats). The conditions are campaign's step 4 (vacant or expired, not barred by a
    --    reservation: sql/V11__handover.sql), over the listed services the account may act on.
    -- 1a. The candidates, by a plain consistent read that locks nothing (this transaction is
    --     READ COMMITTED whatever the session's level): a locking read of every listed seat
    --     would lock, until the commit, the seats other nodes lead too (InnoDB keeps the locks of
    --     rows a condition then rejects), and their own renews, skipping locked seats, would
    --     miss them.
    --     A seat's lease ends at the later of its own end and its node lease's
    --     (sql/views/leader_election_seats.sql).
    SELECT JSON_ARRAYAGG(j.sid) INTO v_take
      FROM JSON_TABLE(v_list, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
      STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
      LEFT JOIN leader_election_lease l ON l.lease_id = e.lease_id AND l.node_id = e.leader_id
     WHERE (e.leader_id IS NULL OR GREATEST(e.lease_expires_at, COALESCE(l.expires_at, e.lease_expires_at)) <= v_now)
       AND NOT COALESCE(e.handover_until > v_now AND (e.handover_to <> v_nid OR e.handover_from_until > v_now), FALSE);
    -- 1b. Lock the candidates still matching (the latest versions), skipping each that another
    --     transaction holds. MySQL locks every table a locking clause covers and refuses one over
    --     JSON_TABLE (3569), so there the clause names the seats' table; MariaDB 10.11 has no OF.
    IF v_take IS NOT NULL THEN
        SELECT JSON_ARRAYAGG(j.sid) INTO v_take
          FROM JSON_TABLE(v_take, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
          STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
         WHERE (e.leader_id IS NULL OR e.lease_expires_at <= v_now)
           AND NOT COALESCE(e.handover_until > v_now AND (e.handover_to <> v_nid OR e.handover_from_until > v_now), FALSE)
           FOR UPDATE SKIP LOCKED;        -- [mariadb]
           FOR UPDATE OF e SKIP LOCKED;   -- [mysql]
    END IF;
    -- 1c. The node leases the locked seats hang on, locked in turn and read as they are now: a
    --     seat whose lease is still valid is let go of (not taken). Locked here, a lease cannot
    --     be renewed before this commit; the trigger writes its row (lost + 1) as each seat is
    --     taken from it. A lease another transaction holds is waited for, at most the lock wait
    --     set above (1 s): a renew holds it for one statement, and another node's takeover of
    --     the same crashed node's seats (the other seats: 1b skipped them) until its commit.
    --     (Skipping such a lease left every seat of it out while the other takeover ran: two
    --     followers of a crashed node took its 10,000 seats in turns of nothing, and the seats
    --     left out went to a campaign each: 18-28 s after the crash instead of 15.) A wait
    --     that runs out leaves that lease's seats out, as a skip did; where the server rolls
    --     the whole transaction back on a lock wait (innodb_rollback_on_timeout), and on a
    --     deadlock, the call fails instead and its seats go to a campaign each.
    IF v_take IS NOT NULL THEN
        SELECT JSON_ARRAYAGG(x.lease_id) INTO v_leases
          FROM (SELECT DISTINCT e.lease_id
                  FROM JSON_TABLE(v_take, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
                  STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
                 WHERE e.lease_id IS NOT NULL AND e.leader_id IS NOT NULL) AS x;
        IF v_leases IS NOT NULL THEN
            BEGIN
                DECLARE EXIT HANDLER FOR 1205 BEGIN
                    IF @@global.innodb_rollback_on_timeout THEN
                        RESIGNAL;
                    END IF;
                    SET v_leases = NULL;
                END;
                SELECT JSON_ARRAYAGG(l.lease_id) INTO v_leases
                  FROM JSON_TABLE(v_leases, '$[*]' COLUMNS (id BIGINT UNSIGNED PATH '$')) AS k
                  STRAIGHT_JOIN leader_election_lease l FORCE INDEX (PRIMARY) ON l.lease_id = k.id
                 WHERE l.expires_at <= v_now
                   FOR UPDATE;        -- [mariadb]
                   FOR UPDATE OF l;   -- [mysql]
            END;
            SELECT JSON_ARRAYAGG(j.sid) INTO v_take
              FROM JSON_TABLE(v_take, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
              STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
             WHERE e.lease_id IS NULL OR e.leader_id IS NULL
                OR JSON_CONTAINS(COALESCE(v_leases, '[]'), CAST(e.lease_id AS CHAR));
        END IF;
    END IF;
    -- The clock, read again once the seats are locked: a term taken below begins after whatever
    -- ended the one before it (a resign that committed between 1a and 1b, at its own reading).
    SET v_now = UTC_TIMESTAMP(6);
    IF v_take IS NOT NULL THEN
        -- 2. Open the next term on each seat (locked by step 1: no wait), ending any
        --    reservation: one UPDATE per seat, whose trigger closes the expired term (at its
        --    lease's end, no ended_by) and writes the new term's history row
        --    (sql/triggers/leader_election_record_term.sql), so each seat is taken whole or not
        --    at all. One statement per seat, not one multi-table UPDATE of them all: on Galera a
        --    multi-table UPDATE cut short (max_statement_time, KILL QUERY) left its trigger's
        --    history rows in the node's write set although the node had rolled them back; the
        --    other nodes applied them, failed on the next take of the same term, and voted the
        --    node out of the cluster (MariaDB 10.11, tests/galera.rs).
        --    An expired term a fenced transaction still holds is left as it is (for a campaign
        --    of its own, which waits for that transaction). The open terms of the seats are
        --    locked in one statement, skipping each that another transaction holds, then
        --    counted by a plain read: when the counts agree (the usual case, no fence), this
        --    transaction holds every one of them and no seat needs a look of its own;
        --    otherwise each seat does (leader_election_try_term, which finds a term locked here
        --    free and a held one held). As in resign_seats, step 2a: two to three statements a
        --    seat fewer.
        --    Where no Galera replicates the call (MySQL, Group Replication included, and
        --    MariaDB with wsrep off) and no seat needs a look of its own, the seats are taken
        --    in ONE statement instead, the same UPDATE over the list, its trigger firing for each
        --    seat: a cut (KILL QUERY, max_statement_time) rolls the statement back whole, so
        --    every seat is taken whole or none is, and Group Replication replicates the binary
        --    log's row events, which hold what the statement kept (the divergence above is
        --    Galera's write set alone). Measured side by side (10,000 vacant seats in 20 calls
        --    of 500 through one `mysql` client, 2026-12-01): 0.51 s against 1.21 s on MySQL 9.7,
        --    0.47 s against 0.78 s on MariaDB 10.11. Galera is probed at each call
        --    (leader_election_probe_wsrep), not read from what a caller's session may have set.
        SELECT COUNT(*) INTO v_locked
          FROM JSON_TABLE(v_take, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
          STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
          STRAIGHT_JOIN leader_election_history h FORCE INDEX (PRIMARY)
                ON h.service_id = e.service_id AND h.term = e.term AND h.ended_at IS NULL
         WHERE e.leader_id IS NOT NULL
           FOR UPDATE SKIP LOCKED;        -- [mariadb]
           FOR UPDATE OF h SKIP LOCKED;   -- [mysql]
        SELECT COUNT(*) INTO v_open
          FROM JSON_TABLE(v_take, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
          STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
          STRAIGHT_JOIN leader_election_history h FORCE INDEX (PRIMARY)
                ON h.service_id = e.service_id AND h.term = e.term AND h.ended_at IS NULL
         WHERE e.leader_id IS NOT NULL;
        CALL leader_election_probe_wsrep();                                      -- [mariadb]
        SET v_one = (@mysqlleader_wsrep_on = 0);                                  -- [mariadb]
        IF v_one AND v_locked = v_open THEN
            UPDATE JSON_TABLE(v_take, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
              STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
               SET e.leader_id = v_nid, e.term = e.term + 1, e.lease_ms = v_lease_ms,
                   e.term_started_at = v_now, e.renewed_at = v_now,
                   e.lease_expires_at = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND,
                   e.handover_to = NULL, e.handover_until = NULL, e.handover_by = NULL,
                   e.handover_from = NULL, e.handover_from_until = NULL,
                   e.lease_id = v_lease,
                   e.change_how = 'elected', e.change_at = v_now;
            SET v_take = NULL;
        END IF;
    END IF;
    IF v_take IS NOT NULL THEN
        -- The ids read by index from v_walk (sql/fragments/walk_by_index.sql).
        -- @include walk_by_index v_take
        SET v_free = 1, v_i = 0, v_n = JSON_LENGTH(v_take);
        WHILE v_i < v_n DO
            SET v_sid = UNHEX(RTRIM(SUBSTRING(v_walk, v_i * v_w + 1, v_w)));
            IF v_locked < v_open THEN
                CALL leader_election_try_term(v_sid, v_free);
            END IF;
            IF v_free = 1 THEN
            UPDATE leader_election
               SET leader_id = v_nid, term = term + 1, lease_ms = v_lease_ms,
                   term_started_at = v_now, renewed_at = v_now,
                   lease_expires_at = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND,
                   handover_to = NULL, handover_until = NULL, handover_by = NULL,
                   handover_from = NULL, handover_from_until = NULL,
                   lease_id = v_lease,
                   change_how = 'elected', change_at = v_now
             WHERE service_id = v_sid;
            END IF;
            SET v_i = v_i + 1;
        END WHILE;
    END IF;
    -- The writes are committed before the answer is sent (a client slow to read it holds no
    -- lock); the answer is read in a read-only transaction of its own, which locks nothing.
    COMMIT;
    SET v_new = NULL;
    CALL leader_election_begin(TRUE);
    -- The seats taken now (term_started_at = v_now), and the other listed seats another node leads.
    -- With a lease (take_seats), a first row tells of the lease (leader_election_lease_answer).
    IF v_lease IS NULL THEN
    SELECT CAST(e.service_id AS CHAR CHARACTER SET utf8mb4) AS service_id,
           CAST(e.leader_id AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           e.term,
           TIMESTAMPDIFF(MICROSECOND, v_now, e.lease_expires_at) DIV 1000 AS lease_remaining_ms,
           (e.leader_id = v_nid) AS is_leader
      FROM JSON_TABLE(v_list, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
      STRAIGHT_JOIN leader_election_seats e ON e.service_id = CAST(j.sid AS BINARY)
     WHERE e.leader_id IS NOT NULL AND e.lease_expires_at > v_now
       AND (e.leader_id <> v_nid OR e.term_started_at = v_now)
     ORDER BY e.service_id;
    ELSE
    SELECT NULL AS service_id,
           CAST(v_nid AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_lease AS term,
           COALESCE(MAX(TIMESTAMPDIFF(MICROSECOND, v_now, l.expires_at) DIV 1000), 0) AS lease_remaining_ms,
           v_alive AS is_leader,
           TIMESTAMPDIFF(MICROSECOND, v_began, UTC_TIMESTAMP(6)) AS server_us
      FROM leader_election_lease l WHERE l.lease_id = v_lease AND l.expires_at > v_now
    UNION ALL
    SELECT CAST(e.service_id AS CHAR CHARACTER SET utf8mb4) AS service_id,
           CAST(e.leader_id AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           e.term,
           TIMESTAMPDIFF(MICROSECOND, v_now, e.lease_expires_at) DIV 1000 AS lease_remaining_ms,
           (e.leader_id = v_nid) AS is_leader,
           0 AS server_us
      FROM JSON_TABLE(v_list, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
      STRAIGHT_JOIN leader_election_seats e ON e.service_id = CAST(j.sid AS BINARY)
     WHERE e.leader_id IS NOT NULL AND e.lease_expires_at > v_now
       AND (e.leader_id <> v_nid OR (e.term_started_at = v_now AND e.lease_id = v_lease));
    END IF;
    COMMIT;
    SET SESSION innodb_lock_wait_timeout = v_wait, SESSION group_concat_max_len = v_gcl;
END;
