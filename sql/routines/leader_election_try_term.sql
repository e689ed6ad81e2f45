-- Locks, without waiting, the open term of a seat the caller's transaction has locked already
-- (a batch: campaign_seats, resign_seats, the expiry sweep): p_free is 1 when the seat has no
-- leader, its term has no open history row, or that row is now locked by this transaction; 0
-- when another transaction holds it (a fenced transaction: assert_leader share-locks it until
-- it ends, see leader_election_lock_seat), and the caller leaves the seat as it is. With the
-- seat locked, its term cannot change meanwhile. Internal.
CREATE PROCEDURE leader_election_try_term(IN p_sid VARBINARY(512), OUT p_free INT)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: lock the open term of a locked seat, unless a fence holds it'
BEGIN
    DECLARE v_term BIGINT UNSIGNED;
    DECLARE v_open INT;
    SET p_free = 1;
    SELECT MAX(term) INTO v_term FROM leader_election WHERE service_id = p_sid AND leader_id IS NOT NULL;
    IF v_term IS NOT NULL THEN
        SELECT COUNT(*) INTO p_free FROM leader_election_history
         WHERE service_id = p_sid AND term = v_term AND ended_at IS NULL
           FOR UPDATE SKIP LOCKED;
        IF p_free = 0 THEN
            -- Skipped, or no open row to lock: which, by a plain read.
            SELECT COUNT(*) INTO v_open FROM leader_election_history
             WHERE service_id = p_sid AND term = v_term AND ended_at IS NULL;
            SET p_free = (v_open = 0);
        END IF;
    END IF;
END;
