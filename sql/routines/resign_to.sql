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
    DECLARE v_wait     BIGINT;
    DECLARE v_own      BOOLEAN DEFAULT FALSE;
    DECLARE v_term_held BOOLEAN;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
        END IF;
        RESIGNAL;
    END;

    BEGIN
        DECLARE EXIT HANDLER FOR 1399 CALL leader_election_refuse_xa('resign_to');
        COMMIT;
    END;
    SET v_own = TRUE;

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_id('to_node', p_to_node);
    SET v_sid = CAST(p_service_id AS BINARY), v_nid = CAST(p_node_id AS BINARY),
        v_to = CAST(p_to_node AS BINARY);
    IF v_to = v_nid THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31000,
            MESSAGE_TEXT = 'mysqlleader: to_node must name another node than node_id';
    END IF;
    -- Every read from here on in a transaction of the call's own (leader_election_begin), and
    -- access decided from the account before the seat is read.
    CALL leader_election_begin(FALSE);
    CALL leader_election_check_access(p_service_id);

    -- 1. A read: only a node that appears to lead goes on to lock and write.
    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), UTC_TIMESTAMP(6)
      INTO v_leader, v_term, v_expires, v_now
      FROM leader_election WHERE service_id = v_sid;
    IF v_leader = v_nid AND v_expires > v_now THEN
        BEGIN
            DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
                ROLLBACK;
                SET SESSION innodb_lock_wait_timeout = v_wait;
                RESIGNAL;
            END;
            SET v_wait = @@session.innodb_lock_wait_timeout;
            -- 2. Confirm under the row lock, then end the term and reserve the seat.
            SET SESSION innodb_lock_wait_timeout = 1;
            CALL leader_election_begin(FALSE);
            -- The term's lock first, then the seat (leader_election_lock_seat): a fenced term is
            -- waited for before the seat is held, so its leader's renews never wait behind this call.
            CALL leader_election_lock_seat(v_sid, FALSE, v_term_held);
            SELECT leader_id, term, lease_expires_at INTO v_leader, v_term, v_expires
              FROM leader_election WHERE service_id = v_sid FOR UPDATE;
            SET SESSION innodb_lock_wait_timeout = v_wait;
            SET v_now = UTC_TIMESTAMP(6);
            IF v_leader = v_nid AND v_expires > v_now THEN
                -- The caller stepped down before it called: the named node may take the seat at once.
                CALL leader_election_need_term(v_term_held);
                CALL leader_election_reserve_seat(v_sid, v_to, v_term, TRUE, v_now, NULL, NULL);
                SET v_resigned = 1;
            END IF;
            COMMIT;
        END;
    END IF;

    COMMIT;
    SELECT v_resigned AS resigned, v_term AS term;
END;
