-- reelect: end the current lease now (its term ends 'reelected', ended_by: the caller) and vacate
-- the seat, so that the next campaign of any node wins (a pending handover reservation ends too). The term is kept; the next acquisition
-- raises it. Result: previous_leader_id (NULL when nobody held a valid lease), term.
-- A transaction of its own, as campaign: what the caller left open is committed first (inside
-- an XA transaction the call is refused before it reads anything), and every way out ends the
-- call's own transaction.
CREATE PROCEDURE reelect(IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: end the current lease now; the next campaign wins'
BEGIN
    DECLARE v_sid      VARBINARY(512);
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_previous VARBINARY(512);
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
        DECLARE EXIT HANDLER FOR 1399 CALL leader_election_refuse_xa('reelect');
        COMMIT;
    END;
    SET v_own = TRUE;

    CALL leader_election_check_id('service_id', p_service_id);
    SET v_sid = CAST(p_service_id AS BINARY);
    -- Every read from here on in a transaction of the call's own (leader_election_begin), and
    -- access decided from the account before the seat is read.
    CALL leader_election_begin(FALSE);
    CALL leader_election_check_access(p_service_id);

    BEGIN
        DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
            ROLLBACK;
            SET SESSION innodb_lock_wait_timeout = v_wait;
            RESIGNAL;
        END;
        SET v_wait = @@session.innodb_lock_wait_timeout;
        -- Run again, up to 3 times in all, when InnoDB picks this transaction as a deadlock's victim
        -- (1213: rolled back whole, nothing of it stays) after the seat is locked, so that an
        -- operator's call does not fail on what running it again settles. A 1213 while v_final
        -- is a verdict, never run again: leader_election_lock_seat's (it has run its own part
        -- again already) and leader_election_need_seat's (the seat was removed meanwhile).
        locked: LOOP
            SET v_runs = v_runs + 1, v_again = FALSE, v_previous = NULL;
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
                SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at)
                  INTO v_leader, v_term, v_expires
                  FROM leader_election WHERE service_id = v_sid FOR UPDATE;
                SET v_final = FALSE;
                SET SESSION innodb_lock_wait_timeout = v_wait;
                SET v_now = UTC_TIMESTAMP(6);
                IF v_leader IS NOT NULL AND v_expires > v_now THEN
                    SET v_previous = v_leader;
                END IF;
                -- Vacate the seat, and end a pending handover reservation (any node may win next), in
                -- one statement: its trigger ends the term ('reelected' now by this session, or
                -- 'expired' at its lease's end; sql/triggers/leader_election_record_term.sql).
                CALL leader_election_need_term(v_term_held);
                UPDATE leader_election
                   SET leader_id = NULL, lease_expires_at = NULL,
                       handover_to = NULL, handover_until = NULL, handover_by = NULL,
                       handover_from = NULL, handover_from_until = NULL,
                       change_how = 'reelected', change_at = v_now
                 WHERE service_id = v_sid AND (leader_id IS NOT NULL OR handover_to IS NOT NULL);
                COMMIT;
            END;
            IF NOT v_again THEN
                LEAVE locked;
            END IF;
        END LOOP;
    END;

    COMMIT;
    SELECT CAST(v_previous AS CHAR CHARACTER SET utf8mb4) AS previous_leader_id,
           v_term AS term;
END;
