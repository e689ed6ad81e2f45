-- release_lease: a node session gives its lease up whole, at its close (issue 42, "Fleets": the
-- close of a 10,000-seat session should hand every seat over within 2 s). Every seat that
-- hangs on it is vacant from this instant, its term ended 'resigned' now by this session's USER()
-- as resign ends it, in one transaction of three statements: the lease's row ends now; its seats
-- are locked; and one statement vacates every seat and closes its term's history row (no
-- change_how: the trigger writes no history of its own for it,
-- sql/triggers/leader_election_record_term.sql, and lets go of the lease). resign_seats, which a
-- session's close sent before, writes each seat by a statement of its own (its trigger writes
-- the history row): 0.13-0.25 ms a seat on the 2-core test machine, against 0.03-0.06 ms here
-- (scripts/bench-close.sh, docs/benchmarks.md).
-- A seat an operator's handover took from the node is no longer on the lease: its resign
-- (resign_seats) acknowledges the handover as before.
-- The lease p_lease_id is released if and only if it is valid, is for p_node_id and was granted
-- to this session's account (as renew_lease renews it): no account can end another's seats. An
-- account whose access to some of those seats was withdrawn since still gives them up: they were
-- its own. A lease that is not released writes nothing.
-- The caller must count itself leader of none of these seats any more: a session calls it only
-- once every elector of it has stepped down (src/session/resigns.rs).
-- Waits for each row it writes at most 1 s (a renew or a takeover holds the lease's row, an
-- operator's change a seat's, a fence its term's history row, each for its transaction: so a
-- fenced transaction of this node never commits after the seat was given up); then 1205, nothing
-- written, and the session resigns its seats in batches instead (resign_seats skips such a seat
-- and resign waits for it).
-- Result, in no particular order: one row for the lease (service_id NULL, leader_id the node,
-- term the lease id, lease_remaining_ms 0, is_leader 1 when this call released it, else 0), then
-- one row per seat it released (service_id, leader_id the node, the term that ended,
-- lease_remaining_ms 0, is_leader 0).
-- A transaction of its own, as campaign: what the caller left open is committed first (inside
-- an XA transaction the call is refused before it reads anything), and every way out ends the
-- call's own transaction; the answer is sent after the commit.
CREATE PROCEDURE release_lease(
    IN p_lease_id DECIMAL(65,30),
    IN p_node_id  MEDIUMTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: give a node lease up whole, every seat on it vacant at once'
BEGIN
    DECLARE v_nid      VARBINARY(512);
    DECLARE v_lease    BIGINT UNSIGNED;
    DECLARE v_now      DATETIME(6);
    DECLARE v_wait     BIGINT;
    DECLARE v_gcl      BIGINT UNSIGNED;
    DECLARE v_own      BOOLEAN DEFAULT FALSE;
    DECLARE v_released INT DEFAULT 0;
    DECLARE v_seats    LONGTEXT CHARACTER SET utf8mb4;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
            IF v_wait IS NOT NULL THEN
                SET SESSION innodb_lock_wait_timeout = v_wait;
            END IF;
            IF v_gcl IS NOT NULL THEN
                SET SESSION group_concat_max_len = v_gcl;
            END IF;
        END IF;
        RESIGNAL;
    END;

    -- @include own_transaction release_lease
    -- @include whole_lists v_gcl

    CALL leader_election_check_number('lease_id', p_lease_id, 1, 18446744073709551615);
    CALL leader_election_check_id('node_id', p_node_id);
    SET v_nid = CAST(p_node_id AS BINARY), v_lease = p_lease_id;
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    CALL leader_election_begin(FALSE);
    SET v_wait = @@session.innodb_lock_wait_timeout;
    SET SESSION innodb_lock_wait_timeout = 1;
    SET v_now = UTC_TIMESTAMP(6);
    -- 1. The lease ends now, if it is valid, this node's and this account's (one row; locked
    --    until the commit, so no renew, takeover or take_seats of it runs meanwhile).
    UPDATE leader_election_lease
       SET expires_at = v_now
     WHERE lease_id = v_lease AND node_id = v_nid AND expires_at > v_now
       AND account = CAST(CONVERT(LEFT(USER(), CHAR_LENGTH(USER()) - CHAR_LENGTH(SUBSTRING_INDEX(USER(), '@', -1)) - 1)
                                  USING utf8mb4) AS BINARY);
    SET v_released = ROW_COUNT();
    IF v_released = 1 THEN
        -- 2. Its seats, locked (by the lease's index: only the rows of this lease), for the answer.
        SELECT JSON_ARRAYAGG(CAST(e.service_id AS CHAR CHARACTER SET utf8mb4)) INTO v_seats
          FROM leader_election e FORCE INDEX (leader_election_by_lease)
         WHERE e.lease_id = v_lease AND e.leader_id = v_nid
           FOR UPDATE;
        -- 3. Each seat vacant, as resign leaves it, and its term ended now, resigned by this
        --    session, in ONE statement that writes both rows of every seat: a call cut short at
        --    any point (KILL QUERY, max_statement_time) and then committed by its caller commits
        --    every seat whole or none (InnoDB rolls a failed statement back whole), as with the
        --    one statement per seat of resign (sql/V13__term_and_history_in_one_statement.sql).
        --    Without change_how the trigger writes no row of its own (it lets go of the lease:
        --    lease_id NULL), so a statement cut on Galera leaves no trigger-written row in the
        --    write set (see campaign_seats, step 2).
        UPDATE leader_election e FORCE INDEX (leader_election_by_lease)
          STRAIGHT_JOIN leader_election_history h FORCE INDEX (PRIMARY)
                ON h.service_id = e.service_id AND h.term = e.term
           SET e.leader_id = NULL, e.lease_expires_at = NULL,
               h.ended_at = v_now, h.ended_how = 'resigned', h.ended_by = USER()
         WHERE e.lease_id = v_lease AND e.leader_id = v_nid AND h.ended_at IS NULL;
    END IF;
    COMMIT;
    SET SESSION innodb_lock_wait_timeout = v_wait, SESSION group_concat_max_len = v_gcl;
    -- The answer, in a read-only transaction of its own: the lease, then the terms this call
    -- ended (by the history it wrote). A seat of the lease whose term it did not end (no open
    -- history row: none is expected) is not in it; its elector's resign goes to resign_seats.
    CALL leader_election_begin(TRUE);
    SELECT NULL AS service_id,
           CAST(v_nid AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_lease AS term,
           0 AS lease_remaining_ms,
           v_released AS is_leader
    UNION ALL
    SELECT CAST(h.service_id AS CHAR CHARACTER SET utf8mb4), CAST(v_nid AS CHAR CHARACTER SET utf8mb4), h.term, 0, 0
      FROM JSON_TABLE(COALESCE(v_seats, '[]'), '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
      STRAIGHT_JOIN leader_election_history h ON h.service_id = CAST(j.sid AS BINARY)
     WHERE h.ended_how = 'resigned' AND h.ended_at = v_now AND h.leader_id = v_nid;
    COMMIT;
END;
