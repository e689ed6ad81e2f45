-- am_i_leader: a read without locks. is_leader is 1 only while the node holds an unexpired lease.
-- Refused inside an open transaction (sql/V7__lean_hot_paths.sql, note 5).
-- Result: is_leader, term, lease_remaining_ms (of the current leader's lease, 0 without one).
CREATE PROCEDURE am_i_leader(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_node_id    MEDIUMTEXT CHARACTER SET utf8mb4)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: does this node hold a valid lease? (a read)'
BEGIN
    DECLARE v_sid     VARBINARY(512);
    DECLARE v_needle  VARBINARY(402);
    DECLARE v_denied  VARBINARY(1024);
    DECLARE v_leader  VARBINARY(512);
    DECLARE v_term    BIGINT UNSIGNED;
    DECLARE v_expires DATETIME(6);
    DECLARE v_now     DATETIME(6);
    DECLARE v_own     BOOLEAN DEFAULT FALSE;
    -- With autocommit off, the read below opens a transaction (the caller had none: refused
    -- otherwise); it ends here on every way out, so that nothing it read (share-locked, under
    -- SERIALIZABLE) outlives the call.
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own AND @@session.autocommit = 0 THEN
            ROLLBACK;
        END IF;
        RESIGNAL;
    END;

    IF p_service_id IS NULL OR p_node_id IS NULL
       OR CHAR_LENGTH(p_service_id) NOT BETWEEN 1 AND 128
       OR CHAR_LENGTH(p_node_id) NOT BETWEEN 1 AND 128 THEN
        CALL leader_election_check_id('service_id', p_service_id);
        CALL leader_election_check_id('node_id', p_node_id);
    END IF;
    SET v_sid = CAST(p_service_id AS BINARY);
    CALL leader_election_refuse_snapshot('am_i_leader');
    SET v_own = TRUE;

    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), UTC_TIMESTAMP(6),
           MAX(access_denied)
      INTO v_leader, v_term, v_expires, v_now, v_denied
      FROM leader_election WHERE service_id = v_sid;
    -- Access from the seat's copy (sql/V8__access_copy_on_the_seat.sql, note 1); without one, from leader_election_access.
    SET v_needle = CONCAT(0x00, CAST(CONVERT(LEFT(USER(), CHAR_LENGTH(USER()) - CHAR_LENGTH(SUBSTRING_INDEX(USER(), '@', -1)) - 1) USING utf8mb4) AS BINARY), 0x00);
    IF v_denied IS NULL OR v_needle = 0x0000 THEN
        CALL leader_election_check_access(p_service_id);
    ELSEIF LOCATE(v_needle, v_denied) > 0 THEN
        CALL leader_election_deny(p_service_id);
    END IF;
    IF NOT (v_leader IS NOT NULL AND v_expires > v_now) THEN
        SET v_leader = NULL;
    END IF;

    IF @@session.autocommit = 0 THEN
        COMMIT;
    END IF;

    SELECT IF(v_leader = CAST(p_node_id AS BINARY), 1, 0) AS is_leader,
           v_term AS term,
           IF(v_leader IS NULL, 0, TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000)
               AS lease_remaining_ms;
END;
