-- force_leader: install the node at once with a new term (an operator's override). A displaced
-- valid leader's term ends 'forced_out' (ended_by: the operator); an expired one's ends 'expired'.
-- A pending handover reservation (see handover) ends: the forced node holds the seat.
-- Result: is_leader (1), leader_id, term, lease_remaining_ms.
-- A transaction of its own, as campaign: what the caller left open is committed first (inside
-- an XA transaction the call is refused before it reads anything), and every way out ends the
-- call's own transaction.
CREATE PROCEDURE force_leader(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_node_id    MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_lease_ms   DECIMAL(65,30))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: install a node as leader now, with a new term'
BEGIN
    DECLARE v_sid      VARBINARY(512);
    DECLARE v_nid      VARBINARY(512);
    DECLARE v_lease_ms BIGINT;
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_now      DATETIME(6);
    DECLARE v_own      BOOLEAN DEFAULT FALSE;
    DECLARE v_ended    VARBINARY(512);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
        END IF;
        RESIGNAL;
    END;

    -- @include own_transaction force_leader

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_lease(p_lease_ms);
    SET v_sid = CAST(p_service_id AS BINARY), v_nid = CAST(p_node_id AS BINARY),
        v_lease_ms = p_lease_ms;
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    -- Every read from here on in a transaction of the call's own (leader_election_begin), and
    -- access decided from the account before the seat is read.
    CALL leader_election_begin(FALSE);
    CALL leader_election_check_access(p_service_id);

    -- Under the term's lock and the seat's (the seat created first when the service has none),
    -- in one statement: its trigger ends the current term ('forced_out' now by this session, or
    -- 'expired' at its lease's end) and writes the forced term's history row
    -- (leader_election_end_term).
    CALL leader_election_end_term(v_sid, 'forced', NULL, v_nid, v_lease_ms, v_leader, v_term, v_expires, v_now, v_ended);

    COMMIT;
    SELECT 1 AS is_leader,
           CAST(v_nid AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_term AS term,
           v_lease_ms AS lease_remaining_ms;
END;
