-- The common end of a handover (handover, resign_to: through leader_election_end_term), inside the caller's transaction and under
-- its row lock on the seat: ends the current term p_term as 'handed_over' at p_now when
-- p_end_term (ended_by: the session that asked; an expired one as 'expired'), vacates the seat and reserves it for p_to for
-- one lease (the seat's last lease length; 10 s when it never had one), measured from p_now.
-- p_from / p_from_until: an operator's handover of a valid leader names it and the end of its
-- lease; the named node then waits until that leader has acknowledged the handover (resign,
-- resign_seats: sent once it stopped acting as leader) or its lease has run out
-- (sql/V11__handover.sql, note 1; campaign, 2b), and the reservation's one lease counts from
-- then: from p_from_until here, from the acknowledgement once there is one. NULL for the
-- leader's own handover.
-- Internal.
CREATE PROCEDURE leader_election_reserve_seat(
    IN p_sid      VARBINARY(512),
    IN p_to       VARBINARY(512),
    IN p_term     BIGINT UNSIGNED,
    IN p_end_term BOOLEAN,
    IN p_now      DATETIME(6),
    IN p_from     VARBINARY(512),
    IN p_from_until DATETIME(6))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: end a term as handed_over and reserve the seat'
BEGIN
    -- One statement: its trigger ends the seat's term, if it has one, as 'handed_over' at p_now
    -- when its lease still ran then, else as 'expired' at the lease's end
    -- (sql/triggers/leader_election_record_term.sql). p_term and p_end_term say what the
    -- caller saw under the row lock; the trigger reads the same from the row itself (they stay
    -- so that callers of the previous definition fit while an upgrade replaces the routines).
    UPDATE leader_election
       SET leader_id = NULL, lease_expires_at = NULL,
           handover_to = p_to,
           handover_until = COALESCE(p_from_until, p_now) + INTERVAL (COALESCE(lease_ms, 10000) * 1000) MICROSECOND,
           handover_by = USER(),
           handover_from = p_from, handover_from_until = p_from_until,
           change_how = 'handed_over', change_at = p_now
     WHERE service_id = p_sid;
END;
