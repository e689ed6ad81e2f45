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
    DECLARE v_own      BOOLEAN DEFAULT FALSE;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
        END IF;
        RESIGNAL;
    END;

    -- @include own_transaction reelect

    CALL leader_election_check_id('service_id', p_service_id);
    SET v_sid = CAST(p_service_id AS BINARY);
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    -- Every read from here on in a transaction of the call's own (leader_election_begin), and
    -- access decided from the account before the seat is read.
    CALL leader_election_begin(FALSE);
    CALL leader_election_check_access(p_service_id);

    -- Under the term's lock and the seat's: vacate the seat, and end a pending handover
    -- reservation (any node may win next), in one statement: its trigger ends the term
    -- ('reelected' now by this session, or 'expired' at its lease's end;
    -- leader_election_end_term). v_previous: the leader whose valid lease ended.
    CALL leader_election_end_term(v_sid, 'reelected', NULL, NULL, NULL, v_leader, v_term, v_expires, v_now, v_previous);

    COMMIT;
    SELECT CAST(v_previous AS CHAR CHARACTER SET utf8mb4) AS previous_leader_id,
           v_term AS term;
END;
