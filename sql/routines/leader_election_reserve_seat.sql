-- The common end of a handover (handover, resign_to), inside the caller's transaction and under
-- its row lock on the seat: ends the current term p_term as 'handed_over' at p_now when
-- p_end_term (ended_by: the session that asked), vacates the seat and reserves it for p_to for
-- one lease (the seat's last lease length; 10 s when it never had one), measured from p_now.
-- Internal.
CREATE PROCEDURE leader_election_reserve_seat(
    IN p_sid      VARBINARY(512),
    IN p_to       VARBINARY(512),
    IN p_term     BIGINT UNSIGNED,
    IN p_end_term BOOLEAN,
    IN p_now      DATETIME(6))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: end a term as handed_over and reserve the seat'
BEGIN
    IF p_end_term THEN
        UPDATE leader_election_history
           SET ended_at = p_now, ended_how = 'handed_over', ended_by = USER()
         WHERE service_id = p_sid AND term = p_term AND ended_at IS NULL;
    END IF;
    UPDATE leader_election
       SET leader_id = NULL, lease_expires_at = NULL,
           handover_to = p_to,
           handover_until = p_now + INTERVAL (COALESCE(lease_ms, 10000) * 1000) MICROSECOND,
           handover_by = USER()
     WHERE service_id = p_sid;
END;
