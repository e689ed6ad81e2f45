-- resign_to: the leader's own handover. Ends the caller's lease now if and only if it holds a
-- valid one, as resign does (the term ends 'handed_over', ended_by: the caller), and reserves
-- the vacant seat for p_to_node for one lease (see handover): only p_to_node may take it until
-- the reservation lapses. A node that does not lead changes nothing (and takes no lock).
-- p_to_node must name another node. Result: resigned (0 or 1), term.
-- A transaction of its own, as campaign: what the caller left open is committed first (inside
-- an XA transaction the call is refused before it reads anything), and every way out ends the
-- call's own transaction.
CREATE PROCEDURE resign_to(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_node_id    MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_to_node    MEDIUMTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: give up the seat now and reserve it for a named node'
BEGIN
    DECLARE v_sid      VARBINARY(512);
    DECLARE v_nid      VARBINARY(512);
    DECLARE v_to       VARBINARY(512);
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_now      DATETIME(6);
    DECLARE v_resigned INT DEFAULT 0;
    DECLARE v_own      BOOLEAN DEFAULT FALSE;
    DECLARE v_ended    VARBINARY(512);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
        END IF;
        RESIGNAL;
    END;

    -- @include own_transaction resign_to

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_id('to_node', p_to_node);
    SET v_sid = CAST(p_service_id AS BINARY), v_nid = CAST(p_node_id AS BINARY),
        v_to = CAST(p_to_node AS BINARY);
    IF v_to = v_nid THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31000,
            MESSAGE_TEXT = 'mysqlleader: to_node must name another node than node_id';
    END IF;
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    -- Every read from here on in a transaction of the call's own (leader_election_begin), and
    -- access decided from the account before the seat is read.
    CALL leader_election_begin(FALSE);
    CALL leader_election_check_access(p_service_id);

    -- 1. A read: only a node that appears to lead goes on to lock and write.
    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), UTC_TIMESTAMP(6)
      INTO v_leader, v_term, v_expires, v_now
      FROM leader_election_seats WHERE service_id = v_sid;
    IF v_leader = v_nid AND v_expires > v_now THEN
        -- 2. Confirm under the row lock, then end the term and reserve the seat
        --    (leader_election_end_term). The caller stepped down before it called: the named
        --    node may take the seat at once.
        CALL leader_election_end_term(v_sid, 'handed_over', v_nid, v_to, NULL, v_leader, v_term, v_expires, v_now, v_ended);
        SET v_resigned = (v_ended IS NOT NULL);
    END IF;

    COMMIT;
    SELECT v_resigned AS resigned, v_term AS term;
END;
