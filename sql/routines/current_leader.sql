-- current_leader: a read without locks, refused inside an open transaction (as am_i_leader).
-- Result: leader_id (NULL without a current leader), term, lease_remaining_ms.
CREATE PROCEDURE current_leader(IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: who holds a valid lease, at which term (a read)'
BEGIN
    DECLARE v_sid     VARBINARY(512);
    DECLARE v_leader  VARBINARY(512);
    DECLARE v_term    BIGINT UNSIGNED;
    DECLARE v_expires DATETIME(6);
    DECLARE v_lease_id BIGINT UNSIGNED;
    DECLARE v_now     DATETIME(6);
    DECLARE v_own     BOOLEAN DEFAULT FALSE;
    -- The read runs in a read-only transaction of the call's own (the caller had none: refused
    -- otherwise), at READ COMMITTED whatever the session's level: it locks nothing, so a call
    -- cut at any point leaves no lock behind; it ends here on every way out.
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
        END IF;
        RESIGNAL;
    END;

    IF p_service_id IS NULL OR CHAR_LENGTH(p_service_id) NOT BETWEEN 1 AND 128 THEN
        CALL leader_election_check_id('service_id', p_service_id);
    END IF;
    SET v_sid = CAST(p_service_id AS BINARY);
    CALL leader_election_refuse_snapshot('current_leader');
    SET v_own = TRUE;

    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    CALL leader_election_begin(TRUE);
    -- Access from the account alone, before the seat is read (sql/V14__access_by_account.sql).
    CALL leader_election_check_access(p_service_id);
    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), UTC_TIMESTAMP(6), MAX(lease_id)
      INTO v_leader, v_term, v_expires, v_now, v_lease_id
      FROM leader_election WHERE service_id = v_sid;
    -- A seat that hangs on a node lease: its lease ends at the later of its own end and the
    -- lease's (sql/views/leader_election_seats.sql, read here without the view: opening a view
    -- cost about 0.1 ms a statement on both servers, on this hot path). One key lookup, only then.
    IF v_lease_id IS NOT NULL THEN
        SELECT GREATEST(v_expires, COALESCE(MAX(expires_at), v_expires)) INTO v_expires
          FROM leader_election_lease WHERE lease_id = v_lease_id AND node_id = v_leader;
    END IF;
    IF NOT (v_leader IS NOT NULL AND v_expires > v_now) THEN
        SET v_leader = NULL;
    END IF;

    COMMIT;

    SELECT CAST(v_leader AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_term AS term,
           IF(v_leader IS NULL, 0, TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000)
               AS lease_remaining_ms;
END;
