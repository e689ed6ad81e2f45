-- resign_seats: one call for the seats a node gives up at once (issue "Fleets": a session's
-- graceful shutdown). Resigns, in one transaction, every seat in p_service_ids (a JSON array of
-- service ids) that p_node_id holds with a valid lease, as resign would: each term ends
-- 'resigned' now, by this session, and the seat is vacated, so the next campaign takes it at
-- once. A seat another transaction has locked (a campaign in flight), or whose term an
-- application's fenced transaction holds (leader_election_try_term), is not waited for: it is answered resigned 0 (the caller resigns it with resign, which waits for
-- the lock, or lets its lease lapse). A
-- service outside the account's patterns is left out before any seat is read
-- (sql/V14__access_by_account.sql); a list that is not one of distinct ids is refused
-- (leader_election_check_ids). The caller must have stopped acting as leader of every listed
-- seat before it calls (a resign vacates the seat for the others at its commit).
-- Like resign, it acknowledges the operator's handovers that displaced this node (step 4): a
-- listed seat still vacant that names this node as the leader a handover displaced may be
-- taken by the named node from this commit on (not in the result: no lease ended).
-- Result, in the order of service_id, one row per listed seat the node held with a valid lease:
-- service_id, resigned (1: its term ended; 0: locked by another transaction, still held),
-- term (the term that ended, or the one still held). No row for a seat the node did not hold.
-- A transaction of its own, as resign: what the caller left open is committed first (inside an
-- XA transaction the call is refused before it reads anything), and every way out ends the
-- call's own transaction. The seats' resigns are one statement (each seat and its history row
-- written by it, as release_lease writes them), or one statement a seat when a fence holds one
-- of their terms: a call cut short and then committed by its caller commits each seat whole or
-- not at all.
CREATE PROCEDURE resign_seats(
    IN p_node_id     MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_service_ids LONGTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: give up many seats of one node in one transaction'
BEGIN
    DECLARE v_nid      VARBINARY(512);
    DECLARE v_now      DATETIME(6);
    DECLARE v_wait     BIGINT;
    DECLARE v_gcl      BIGINT UNSIGNED;
    DECLARE v_walk     LONGTEXT CHARACTER SET ascii;
    DECLARE v_w        INT;
    DECLARE v_list     LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_own      BOOLEAN DEFAULT FALSE;
    DECLARE v_mine     LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_held     LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_skipped  LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_sid      VARBINARY(512);
    DECLARE v_i        INT;
    DECLARE v_n        INT;
    DECLARE v_free     INT;
    DECLARE v_locked   INT;
    DECLARE v_open     INT;
    DECLARE v_valid    INT;
    DECLARE v_acks     LONGTEXT CHARACTER SET utf8mb4;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
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

    -- @include own_transaction resign_seats
    -- @include whole_lists v_gcl

    CALL leader_election_check_id('node_id', p_node_id);
    SET v_nid = CAST(p_node_id AS BINARY);
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    -- Every read from here on in a transaction of the call's own (leader_election_begin), the
    -- list checked and cut to the services the account may act on, from its patterns alone.
    CALL leader_election_begin(FALSE);
    CALL leader_election_check_ids(p_service_ids, v_list);

    SET v_wait = @@session.innodb_lock_wait_timeout;
    SET SESSION innodb_lock_wait_timeout = 1;
    SET v_now = UTC_TIMESTAMP(6);
    -- 1. The node's seats with a valid lease: a plain consistent read that locks nothing (see
    --    renew_seats, step 1a), then a lock on those still matching, skipping each that another
    --    transaction holds (step 1b). The list drives the join: one primary-key lookup per
    --    listed service, never a scan.
    --    A seat's lease ends at the later of its own end and its node lease's
    --    (sql/views/leader_election_seats.sql): read through the view, locked on the seats'
    --    table, then read through the view again under the locks.
    SELECT JSON_ARRAYAGG(j.sid) INTO v_mine
      FROM JSON_TABLE(v_list, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
      STRAIGHT_JOIN leader_election_seats e ON e.service_id = CAST(j.sid AS BINARY)
     WHERE e.leader_id = v_nid AND e.lease_expires_at > v_now;
    SET v_held = v_mine;
    IF v_mine IS NOT NULL THEN
        SELECT JSON_ARRAYAGG(j.sid) INTO v_mine
          FROM JSON_TABLE(v_mine, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
          STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
         WHERE e.leader_id = v_nid
           FOR UPDATE SKIP LOCKED;        -- [mariadb]
           FOR UPDATE OF e SKIP LOCKED;   -- [mysql]
        SELECT JSON_ARRAYAGG(j.sid) INTO v_mine
          FROM JSON_TABLE(COALESCE(v_mine, '[]'), '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
          STRAIGHT_JOIN leader_election_seats e ON e.service_id = CAST(j.sid AS BINARY)
         WHERE e.leader_id = v_nid AND e.lease_expires_at > v_now;
    END IF;
    -- The clock, read again once the seats are locked: each term ends after whatever renewed it.
    SET v_now = UTC_TIMESTAMP(6);
    IF v_mine IS NOT NULL THEN
        -- 2a. The seats' open terms, locked in one statement (one primary-key lookup per seat),
        --     skipping each that another transaction holds (a fenced transaction:
        --     assert_leader), then counted by a plain read: when the two counts agree, this
        --     transaction holds every open term of these seats (the usual case, no fence), and
        --     no seat needs a look of its own; otherwise each does (leader_election_try_term,
        --     which finds a term it locked here free, and leaves a held one held: step 3 tells
        --     it). One locking statement instead of two to three per seat: 10,000 seats resigned
        --     in 20 calls took 0.58x the time on MariaDB 10.11, 0.74x on MySQL 9.7 (2026-11-29).
        SELECT COUNT(*) INTO v_locked
          FROM JSON_TABLE(v_mine, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
          STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
          STRAIGHT_JOIN leader_election_history h FORCE INDEX (PRIMARY)
                ON h.service_id = e.service_id AND h.term = e.term AND h.ended_at IS NULL
           FOR UPDATE SKIP LOCKED;        -- [mariadb]
           FOR UPDATE OF h SKIP LOCKED;   -- [mysql]
        SELECT COUNT(*) INTO v_open
          FROM JSON_TABLE(v_mine, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
          STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
          STRAIGHT_JOIN leader_election_history h FORCE INDEX (PRIMARY)
                ON h.service_id = e.service_id AND h.term = e.term AND h.ended_at IS NULL;
        -- 2b. When step 2a locked the open term of every seat (the usual case: no fence, and
        --     every term has its history row) and every lease is still valid at the clock read
        --     again above (a lease that ran out since step 1 ends 'expired' at its end, which
        --     the trigger decides in 2c), vacate them all and end each term 'resigned'
        --     now, by this session, in ONE statement that writes both rows of every seat, as
        --     release_lease does: a cut (KILL QUERY, max_statement_time) rolls it back whole, so
        --     a call cut short and then committed by its caller commits every seat whole or
        --     none. Without change_how the trigger writes no row of its own (it lets go of the
        --     seat's node lease: lease_id NULL), so a statement cut on Galera leaves no
        --     trigger-written row in the write set (see campaign_seats, step 2), and this holds
        --     on Galera too. 10,000 seats in 20 calls of 500 (scripts/bench-close.sh, before and
        --     after, 2026-12-01): 0.88-0.99 s from 1.72-1.86 s on MySQL 9.7, 0.49-0.51 s from
        --     1.09-1.12 s on MariaDB 10.11.
        SET v_n = JSON_LENGTH(v_mine);
        SELECT COUNT(*) INTO v_valid
          FROM JSON_TABLE(v_mine, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
          STRAIGHT_JOIN leader_election_seats e ON e.service_id = CAST(j.sid AS BINARY)
         WHERE e.leader_id = v_nid AND e.lease_expires_at > v_now;
        IF v_locked = v_open AND v_open = v_n AND v_valid = v_n THEN
            -- Without change_how the trigger counts no seat off its node lease: each lease a
            -- seat hangs on counts moved + 1 here, before the seats are vacated (a follower
            -- that saw a seat on the lease then reads it again: sql/V16__lease_moves.sql). A
            -- lease's row is this node's, written by its renews: waited for at most 1 s.
            UPDATE leader_election_lease l
              STRAIGHT_JOIN (SELECT DISTINCT e.lease_id
                               FROM JSON_TABLE(v_mine, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
                               STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
                              WHERE e.leader_id = v_nid AND e.lease_id IS NOT NULL) AS m ON l.lease_id = m.lease_id
               SET l.moved = l.moved + 1;
            UPDATE JSON_TABLE(v_mine, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
              STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
              STRAIGHT_JOIN leader_election_history h FORCE INDEX (PRIMARY)
                    ON h.service_id = e.service_id AND h.term = e.term
               SET e.leader_id = NULL, e.lease_expires_at = NULL,
                   h.ended_at = v_now, h.ended_how = 'resigned', h.ended_by = USER()
             WHERE e.leader_id = v_nid AND h.ended_at IS NULL;
            SET v_n = 0;
        END IF;
        -- 2c. Otherwise vacate each seat (locked by step 1: no wait) but the held ones, one
        --     statement per seat: its trigger ends the term as 'resigned' now, by this session
        --     (sql/triggers/leader_election_record_term.sql).
        --     The ids read by index from v_walk (sql/fragments/walk_by_index.sql).
        IF v_n > 0 THEN
            -- @include walk_by_index v_mine
        END IF;
        SET v_free = 1, v_i = 0;
        WHILE v_i < v_n DO
            SET v_sid = UNHEX(RTRIM(SUBSTRING(v_walk, v_i * v_w + 1, v_w)));
            IF v_locked < v_open THEN
                CALL leader_election_try_term(v_sid, v_free);
            END IF;
            IF v_free = 1 THEN
                UPDATE leader_election
                   SET leader_id = NULL, lease_expires_at = NULL,
                       change_how = 'resigned', change_at = v_now
                 WHERE service_id = v_sid AND leader_id = v_nid;
            END IF;
            SET v_i = v_i + 1;
        END WHILE;
    END IF;
    -- 3. The seats step 1a found held that step 1b skipped: those of v_held this node still
    --    holds in this transaction's view (a plain read that locks nothing; a seat step 2
    --    vacated reads vacant here). One primary-key lookup per seat. Told here, not by a
    --    correlated NOT EXISTS on the history in the answer below: MariaDB 10.11 crashed (signal
    --    11 in Item_equal::sort, the whole server) re-optimising that subquery of this
    --    procedure's cached statement, about once in 40 runs of the trust tests.
    IF v_held IS NOT NULL THEN
        SELECT JSON_ARRAYAGG(j.sid) INTO v_skipped
          FROM JSON_TABLE(v_held, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
          STRAIGHT_JOIN leader_election_seats e ON e.service_id = CAST(j.sid AS BINARY)
         WHERE e.leader_id = v_nid AND e.lease_expires_at > v_now;
    END IF;
    -- 4. The handovers this node acknowledges (see resign): the listed seats still vacant that an
    --    operator's handover took from it, read then locked as in step 1, skipping each that
    --    another transaction holds (its handover then waits for this node's lease to run out,
    --    as without an acknowledgement), each with one guarded write.
    SELECT JSON_ARRAYAGG(j.sid) INTO v_acks
      FROM JSON_TABLE(v_list, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
      STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
     WHERE e.leader_id IS NULL AND e.handover_from = v_nid;
    IF v_acks IS NOT NULL THEN
        SELECT JSON_ARRAYAGG(j.sid) INTO v_acks
          FROM JSON_TABLE(v_acks, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
          STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
         WHERE e.leader_id IS NULL AND e.handover_from = v_nid
           FOR UPDATE SKIP LOCKED;        -- [mariadb]
           FOR UPDATE OF e SKIP LOCKED;   -- [mysql]
        SET v_i = 0, v_n = COALESCE(JSON_LENGTH(v_acks), 0);
        WHILE v_i < v_n DO
            SET v_sid = CAST(JSON_UNQUOTE(JSON_EXTRACT(v_acks, CONCAT('$[', v_i, ']'))) AS BINARY);
            UPDATE leader_election
               SET handover_from = NULL, handover_from_until = NULL,
                   handover_until = v_now + INTERVAL (COALESCE(lease_ms, 10000) * 1000) MICROSECOND
             WHERE service_id = v_sid AND handover_from = v_nid AND leader_id IS NULL;
            SET v_i = v_i + 1;
        END WHILE;
    END IF;
    -- The writes are committed before the answer is sent; the answer is read in a read-only
    -- transaction of its own: the terms this call ended (by the history the trigger wrote), and
    -- the seats step 3 found skipped that the node still holds.
    COMMIT;
    SET SESSION innodb_lock_wait_timeout = v_wait, SESSION group_concat_max_len = v_gcl;
    CALL leader_election_begin(TRUE);
    SELECT CAST(h.service_id AS CHAR CHARACTER SET utf8mb4) AS service_id,
           1 AS resigned,
           h.term
      FROM JSON_TABLE(COALESCE(v_mine, '[]'), '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
      STRAIGHT_JOIN leader_election_history h ON h.service_id = CAST(j.sid AS BINARY)
     WHERE h.ended_how = 'resigned' AND h.ended_at = v_now AND h.leader_id = v_nid
    UNION ALL
    SELECT CAST(e.service_id AS CHAR CHARACTER SET utf8mb4),
           0,
           e.term
      FROM JSON_TABLE(COALESCE(v_skipped, '[]'), '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
      STRAIGHT_JOIN leader_election_seats e ON e.service_id = CAST(j.sid AS BINARY)
     WHERE e.leader_id = v_nid AND e.lease_expires_at > v_now
     ORDER BY service_id;
    COMMIT;
END;
