-- force_leader: install the node at once with a new term (an operator's override). A displaced
-- valid leader's term ends 'forced_out' (ended_by: the operator); an expired one's ends 'expired'.
-- A pending handover reservation (see handover) ends: the forced node holds the seat.
-- Result: is_leader (1), leader_id, term, lease_remaining_ms.
-- A transaction of its own, as campaign: what the caller left open is committed first (inside
-- an XA transaction the call is refused before it reads anything), and every way out ends the
-- call's own transaction.
CREATE PROCEDURE force_leader(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_node_id    MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_lease_ms   DECIMAL(65,30))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: install a node as leader now, with a new term'
BEGIN
    DECLARE v_sid      VARBINARY(512);
    DECLARE v_nid      VARBINARY(512);
    DECLARE v_lease_ms BIGINT;
    DECLARE v_rows     INT;
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_now      DATETIME(6);
    DECLARE v_wait     BIGINT;
    DECLARE v_own      BOOLEAN DEFAULT FALSE;
    DECLARE v_term_held BOOLEAN;
    DECLARE v_runs     INT DEFAULT 0;
    DECLARE v_again    BOOLEAN;
    DECLARE v_final    BOOLEAN;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
        END IF;
        RESIGNAL;
    END;

    BEGIN
        DECLARE EXIT HANDLER FOR 1399 CALL leader_election_refuse_xa('force_leader');
        COMMIT;
    END;
    SET v_own = TRUE;

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_lease(p_lease_ms);
    SET v_sid = CAST(p_service_id AS BINARY), v_nid = CAST(p_node_id AS BINARY),
        v_lease_ms = p_lease_ms;
    -- Every read from here on in a transaction of the call's own (leader_election_begin), and
    -- access decided from the account before the seat is read.
    CALL leader_election_begin(FALSE);
    CALL leader_election_check_access(p_service_id);

    BEGIN
        DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
            ROLLBACK;
            SET SESSION innodb_lock_wait_timeout = v_wait;
            IF v_rows = 0 THEN
                DELETE FROM leader_election WHERE service_id = v_sid AND term = 0 AND leader_id IS NULL;
                -- Committed here: under autocommit off the DELETE would open a transaction
                -- that outlives the call (at the session's own isolation level, with its locks).
                COMMIT;
            END IF;
            RESIGNAL;
        END;
        SET v_wait = @@session.innodb_lock_wait_timeout;
        SELECT COUNT(*) INTO v_rows FROM leader_election WHERE service_id = v_sid;
        IF v_rows = 0 THEN
            CALL leader_election_create_seat(v_sid);
        END IF;
        -- Run again, up to 3 times in all, when InnoDB picks this transaction as a deadlock's victim
        -- (1213: rolled back whole, nothing of it stays) after the seat is locked, so that an
        -- operator's call does not fail on what running it again settles. A 1213 while v_final
        -- is a verdict, never run again: leader_election_lock_seat's (it has run its own part
        -- again already) and leader_election_need_seat's (the seat was removed meanwhile).
        locked: LOOP
            SET v_runs = v_runs + 1, v_again = FALSE;
            BEGIN
                DECLARE EXIT HANDLER FOR 1213 BEGIN
                    IF v_runs >= 3 OR v_final THEN
                        RESIGNAL;
                    END IF;
                    ROLLBACK;
                    SET v_again = TRUE;
                END;
                SET SESSION innodb_lock_wait_timeout = 1;
                CALL leader_election_begin(FALSE);
                -- The term's lock first, then the seat (leader_election_lock_seat): a fenced term is
                -- waited for before the seat is held, so its leader's renews never wait behind this call.
                SET v_final = TRUE;
                CALL leader_election_lock_seat(v_sid, FALSE, v_term_held);
                -- A SELECT INTO that finds no row leaves its variables as they were: the seat must be
                -- there (leader_election_need_seat), or this call would answer from an earlier read.
                SET v_term = NULL;
                SELECT leader_id, term, lease_expires_at INTO v_leader, v_term, v_expires
                  FROM leader_election WHERE service_id = v_sid FOR UPDATE;
                CALL leader_election_need_seat(v_term IS NOT NULL);
                SET v_final = FALSE;
                SET SESSION innodb_lock_wait_timeout = v_wait;
                SET v_now = UTC_TIMESTAMP(6);
                -- One statement: its trigger ends the current term ('forced_out' now by this
                -- session, or 'expired' at its lease's end) and writes the forced term's history row
                -- (sql/triggers/leader_election_record_term.sql).
                CALL leader_election_need_term(v_term_held);
                SET v_term = v_term + 1,
                    v_expires = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND;
                UPDATE leader_election
                   SET leader_id = v_nid, term = v_term, lease_ms = v_lease_ms,
                       term_started_at = v_now, renewed_at = v_now, lease_expires_at = v_expires,
                       handover_to = NULL, handover_until = NULL, handover_by = NULL,
                       handover_from = NULL, handover_from_until = NULL,
                       change_how = 'forced', change_at = v_now
                 WHERE service_id = v_sid;
                COMMIT;
            END;
            IF NOT v_again THEN
                LEAVE locked;
            END IF;
        END LOOP;
    END;

    COMMIT;
    SELECT 1 AS is_leader,
           CAST(v_nid AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_term AS term,
           v_lease_ms AS lease_remaining_ms;
END;
