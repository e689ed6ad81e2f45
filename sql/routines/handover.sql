-- handover: move leadership of a service to the node p_to_node, with no overlap (an operator's
-- switchover). In one transaction under the seat's row lock:
--   * p_to_node holds a valid lease already: nothing changes (a pending reservation is cleared);
--   * another node holds a valid lease: its term ends 'handed_over' (ended_by: the caller) and
--     the seat is vacated, so that node's fence (assert_leader) fails from this commit on;
--   * the seat is vacant or expired (an expired term ends 'expired', as a takeover would end it);
-- then the seat is reserved for p_to_node for one lease (the seat's last lease length, 10 s if
-- it never had one): only p_to_node may take it (at its next campaign, a new term) until the
-- reservation lapses, everybody may after. A displaced leader still believes it leads until its
-- next renew's answer reaches it: p_to_node may take the seat only once that leader has
-- acknowledged the handover (resign or resign_seats, which it sends once it stopped acting as
-- leader) or the old lease has run out, so the two never both count themselves leader. A later
-- handover replaces the reservation; force_leader and reelect clear it. The old leader learns at
-- its next renew that it does not lead; its library then steps down, acknowledges and wakes the
-- named node.
-- Result, for the seat as it is after the call: is_leader (1 when p_to_node leads), leader_id,
-- term, lease_remaining_ms.
-- A transaction of its own, as campaign: what the caller left open is committed first (inside
-- an XA transaction the call is refused before it reads anything), and every way out ends the
-- call's own transaction.
CREATE PROCEDURE handover(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_to_node    MEDIUMTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: end the current term and reserve the seat for a named node'
BEGIN
    DECLARE v_sid      VARBINARY(512);
    DECLARE v_to       VARBINARY(512);
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
        DECLARE EXIT HANDLER FOR 1399 CALL leader_election_refuse_xa('handover');
        COMMIT;
    END;
    SET v_own = TRUE;

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('to_node', p_to_node);
    SET v_sid = CAST(p_service_id AS BINARY), v_to = CAST(p_to_node AS BINARY);
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
                IF v_leader = v_to AND v_expires > v_now THEN
                    UPDATE leader_election SET handover_to = NULL, handover_until = NULL, handover_by = NULL,
                                               handover_from = NULL, handover_from_until = NULL
                     WHERE service_id = v_sid AND handover_to IS NOT NULL;
                ELSE
                    CALL leader_election_need_term(v_term_held);
                    IF v_leader IS NOT NULL AND v_expires > v_now THEN
                        -- The old leader believes it leads until its next renew's answer reaches it: the
                        -- named node waits for its acknowledgement (resign), or for its lease to run
                        -- out (sql/V11__handover.sql, note 1; campaign, 2b).
                        CALL leader_election_reserve_seat(v_sid, v_to, v_term, TRUE, v_now, v_leader, v_expires);
                    ELSE
                        CALL leader_election_reserve_seat(v_sid, v_to, v_term, FALSE, v_now, NULL, NULL);
                    END IF;
                    SET v_leader = NULL, v_expires = v_now;
                END IF;
                COMMIT;
            END;
            IF NOT v_again THEN
                LEAVE locked;
            END IF;
        END LOOP;
    END;

    COMMIT;
    SELECT IF(v_leader = v_to, 1, 0) AS is_leader,
           CAST(v_leader AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_term AS term,
           TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000 AS lease_remaining_ms;
END;
