-- The shared end of a term: the locked part of resign, resign_to, force_leader, handover
-- (and handover_seats, once per seat) and reelect. In a transaction of its own (leader_election_begin) that waits at most 1 s for a
-- lock, it locks the seat's term, then the seat (leader_election_lock_seat: a fenced term is
-- waited for before the seat is held, so its leader's renews never wait behind this call),
-- reads the seat under that lock, confirms the change still applies, makes it in one statement
-- whose trigger ends the term (sql/triggers/leader_election_record_term.sql: as p_how now, by
-- this session, when its lease still runs; as 'expired' at its lease's end otherwise), and
-- commits. The session's innodb_lock_wait_timeout is as it was on every way out; a failure
-- rolls back everything it did, a seat it created included, and is raised again.
-- The change, by p_how:
--   'resigned'    the seat is vacated (resign);
--   'handed_over' the seat is vacated and reserved for p_to for one lease
--                 (leader_election_reserve_seat: resign_to, handover); handover's, with no
--                 p_node, changes nothing but a pending reservation when p_to holds a valid
--                 lease already, and makes the named node wait for the displaced valid
--                 leader's acknowledgement (sql/V11__handover.sql, note 1; campaign, 2b);
--   'forced'      p_to leads at once with the next term, for p_lease_ms (force_leader);
--   'reelected'   the seat is vacated and a pending reservation ends (reelect).
-- p_node: the node whose valid lease the change ends (the leader's own calls, resign and
-- resign_to): when it holds none under the lock, nothing changes. NULL for an operator's call
-- (force_leader, handover, reelect), which ends whichever lease there is; those run again, up
-- to 3 times in all, when InnoDB picks this transaction as a deadlock's victim (1213: rolled
-- back whole, nothing of it stays) after the seat is locked, so that an operator's call does
-- not fail on what running it again settles. A 1213 of leader_election_lock_seat (it has run
-- its own part again already) or of leader_election_need_seat (the seat was removed meanwhile)
-- is a verdict, never run again. An operator's call that gives the seat to p_to (force_leader,
-- handover) creates it first when the service has none (leader_election_create_seat), and
-- removes it again when it fails.
-- Out, the seat as the call leaves it: p_leader, p_term, p_expires (NULL, the term, NULL when it
-- was vacated; term 0 when there is no seat), p_now (the time of the change, read under the
-- lock), and p_ended: the leader whose valid lease this call ended (NULL: none).
-- The caller has checked its input and access, and called leader_election_begin. Internal.
CREATE PROCEDURE leader_election_end_term(
    IN  p_sid      VARBINARY(512),
    IN  p_how      VARCHAR(16),
    IN  p_node     VARBINARY(512),
    IN  p_to       VARBINARY(512),
    IN  p_lease_ms BIGINT,
    OUT p_leader   VARBINARY(512),
    OUT p_term     BIGINT UNSIGNED,
    OUT p_expires  DATETIME(6),
    OUT p_now      DATETIME(6),
    OUT p_ended    VARBINARY(512))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: lock a term and its seat, and end the term'
BEGIN
    DECLARE v_leader  VARBINARY(512);
    DECLARE v_term    BIGINT UNSIGNED;
    DECLARE v_expires DATETIME(6);
    DECLARE v_now     DATETIME(6);
    DECLARE v_ended   VARBINARY(512);
    DECLARE v_found   INT;
    DECLARE v_rows    INT;
    DECLARE v_wait    BIGINT;
    DECLARE v_held    BOOLEAN;
    DECLARE v_valid   BOOLEAN;
    DECLARE v_runs    INT DEFAULT 0;
    DECLARE v_again   BOOLEAN;
    DECLARE v_final   BOOLEAN;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        ROLLBACK;
        SET SESSION innodb_lock_wait_timeout = v_wait;
        IF v_rows = 0 THEN
            DELETE FROM leader_election WHERE service_id = p_sid AND term = 0 AND leader_id IS NULL;
            -- Committed here: under autocommit off the DELETE would open a transaction
            -- that outlives the call (at the session's own isolation level, with its locks).
            COMMIT;
        END IF;
        RESIGNAL;
    END;
    SET v_wait = @@session.innodb_lock_wait_timeout;
    IF p_node IS NULL AND p_how IN ('forced', 'handed_over') THEN
        SELECT COUNT(*) INTO v_rows FROM leader_election WHERE service_id = p_sid;
        IF v_rows = 0 THEN
            CALL leader_election_create_seat(p_sid);
        END IF;
    END IF;
    locked: LOOP
        SET v_runs = v_runs + 1, v_again = FALSE, v_ended = NULL;
        BEGIN
            DECLARE EXIT HANDLER FOR 1213 BEGIN
                IF v_runs >= IF(p_node IS NULL, 3, 1) OR v_final THEN
                    RESIGNAL;
                END IF;
                ROLLBACK;
                SET v_again = TRUE;
            END;
            SET SESSION innodb_lock_wait_timeout = 1;
            CALL leader_election_begin(FALSE);
            -- The term's lock first, then the seat.
            SET v_final = TRUE;
            CALL leader_election_lock_seat(p_sid, FALSE, v_held);
            SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), COUNT(*)
              INTO v_leader, v_term, v_expires, v_found
              FROM leader_election_seats WHERE service_id = p_sid FOR UPDATE;
            -- A seat this call saw or created must still be there, or the call would answer as
            -- if it had changed a seat that does not exist.
            IF v_rows IS NOT NULL THEN
                CALL leader_election_need_seat(v_found > 0);
            END IF;
            SET v_final = FALSE;
            SET SESSION innodb_lock_wait_timeout = v_wait;
            SET v_now = UTC_TIMESTAMP(6);
            SET v_valid = COALESCE(v_leader IS NOT NULL AND v_expires > v_now, FALSE);
            IF p_node IS NOT NULL AND NOT (v_valid AND v_leader = p_node) THEN
                -- The node no longer leads: nothing to end.
                SET v_ended = NULL;
            ELSEIF p_how = 'handed_over' AND v_valid AND v_leader = p_to THEN
                -- The operator's handover to the node that leads already: only a pending
                -- reservation ends.
                UPDATE leader_election SET handover_to = NULL, handover_until = NULL, handover_by = NULL,
                                           handover_from = NULL, handover_from_until = NULL
                 WHERE service_id = p_sid AND handover_to IS NOT NULL;
            ELSE
                -- One statement: its trigger ends the term (and, forced, writes the new term's
                -- history row).
                CALL leader_election_need_term(v_held);
                IF v_valid THEN
                    SET v_ended = v_leader;
                END IF;
                IF p_how = 'handed_over' THEN
                    -- An operator's handover of a valid lease: the named node waits for the old
                    -- leader's acknowledgement (resign), or for its lease to run out. The leader's
                    -- own (resign_to) stepped down before it called: the named node may take the
                    -- seat at once.
                    IF p_node IS NULL AND v_valid THEN
                        CALL leader_election_reserve_seat(p_sid, p_to, v_term, TRUE, v_now, v_leader, v_expires);
                    ELSE
                        CALL leader_election_reserve_seat(p_sid, p_to, v_term, v_valid, v_now, NULL, NULL);
                    END IF;
                    SET v_leader = NULL, v_expires = NULL;
                ELSEIF p_how = 'forced' THEN
                    SET v_leader = p_to, v_term = v_term + 1,
                        v_expires = v_now + INTERVAL (p_lease_ms * 1000) MICROSECOND;
                    UPDATE leader_election
                       SET leader_id = v_leader, term = v_term, lease_ms = p_lease_ms,
                           term_started_at = v_now, renewed_at = v_now, lease_expires_at = v_expires,
                           handover_to = NULL, handover_until = NULL, handover_by = NULL,
                           handover_from = NULL, handover_from_until = NULL,
                           change_how = 'forced', change_at = v_now
                     WHERE service_id = p_sid;
                ELSEIF p_how = 'reelected' THEN
                    UPDATE leader_election
                       SET leader_id = NULL, lease_expires_at = NULL,
                           handover_to = NULL, handover_until = NULL, handover_by = NULL,
                           handover_from = NULL, handover_from_until = NULL,
                           change_how = 'reelected', change_at = v_now
                     WHERE service_id = p_sid AND (leader_id IS NOT NULL OR handover_to IS NOT NULL);
                    SET v_leader = NULL, v_expires = NULL;
                ELSE
                    -- 'resigned'.
                    UPDATE leader_election
                       SET leader_id = NULL, lease_expires_at = NULL,
                           change_how = 'resigned', change_at = v_now
                     WHERE service_id = p_sid;
                    SET v_leader = NULL, v_expires = NULL;
                END IF;
            END IF;
            COMMIT;
        END;
        IF NOT v_again THEN
            LEAVE locked;
        END IF;
    END LOOP;
    SET p_leader = v_leader, p_term = v_term, p_expires = v_expires, p_now = v_now, p_ended = v_ended;
END;
