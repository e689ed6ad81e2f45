-- resign: end the caller's lease now if and only if it holds a valid one (term ends 'resigned',
-- ended_by: the caller), and vacate the seat. A node that does not lead changes nothing (and
-- takes no lock), except that it acknowledges an operator's handover that displaced it (see
-- below). Result: resigned (0 or 1), term.
-- The acknowledgement: an operator's handover of this node's valid lease (handover) vacates the
-- seat and bars even the named node until this node acknowledges it, or its lease runs out
-- (sql/V11__handover.sql, note 1; campaign, 2b). A resign from a node the seat names as the
-- leader the handover displaced is that acknowledgement: the caller of resign has stopped
-- acting as leader before it sends it (an elector steps down first), so the named node may take
-- the seat from this commit on, for one lease from now. Answered resigned 0: no lease ended.
-- A transaction of its own, as campaign: what the caller left open is committed first (inside
-- an XA transaction the call is refused before it reads anything), and every way out ends the
-- call's own transaction.
CREATE PROCEDURE resign(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_node_id    MEDIUMTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: give up the seat now if this node holds it'
BEGIN
    DECLARE v_sid      VARBINARY(512);
    DECLARE v_nid      VARBINARY(512);
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_now      DATETIME(6);
    DECLARE v_resigned INT DEFAULT 0;
    DECLARE v_wait     BIGINT;
    DECLARE v_own      BOOLEAN DEFAULT FALSE;
    DECLARE v_from     VARBINARY(512);
    DECLARE v_ended    VARBINARY(512);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
        END IF;
        RESIGNAL;
    END;

    -- @include own_transaction resign

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    SET v_sid = CAST(p_service_id AS BINARY), v_nid = CAST(p_node_id AS BINARY);
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    -- Every read from here on in a transaction of the call's own (leader_election_begin), and
    -- access decided from the account before the seat is read.
    CALL leader_election_begin(FALSE);
    CALL leader_election_check_access(p_service_id);

    -- 1. A read: only a node that appears to lead, or to owe a handover's acknowledgement, goes
    --    on to lock and write.
    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), MAX(handover_from), UTC_TIMESTAMP(6)
      INTO v_leader, v_term, v_expires, v_from, v_now
      FROM leader_election_seats WHERE service_id = v_sid;
    IF v_leader IS NULL AND v_from = v_nid THEN
        -- 2a. The acknowledgement, one guarded write (the seat still vacant and naming this
        --     node): the named node's one lease counts from now.
        BEGIN
            DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
                ROLLBACK;
                SET SESSION innodb_lock_wait_timeout = v_wait;
                RESIGNAL;
            END;
            SET v_wait = @@session.innodb_lock_wait_timeout;
            SET SESSION innodb_lock_wait_timeout = 1;
            CALL leader_election_begin(FALSE);
            UPDATE leader_election
               SET handover_from = NULL, handover_from_until = NULL,
                   handover_until = UTC_TIMESTAMP(6) + INTERVAL (COALESCE(lease_ms, 10000) * 1000) MICROSECOND
             WHERE service_id = v_sid AND handover_from = v_nid AND leader_id IS NULL;
            SET SESSION innodb_lock_wait_timeout = v_wait;
            COMMIT;
        END;
    ELSEIF v_leader = v_nid AND v_expires > v_now THEN
        -- 2b. Confirm under the row lock, then end the term as 'resigned' and vacate the seat
        --     (leader_election_end_term).
        CALL leader_election_end_term(v_sid, 'resigned', v_nid, NULL, NULL, v_leader, v_term, v_expires, v_now, v_ended);
        SET v_resigned = (v_ended IS NOT NULL);
    END IF;

    COMMIT;
    SELECT v_resigned AS resigned, v_term AS term;
END;
