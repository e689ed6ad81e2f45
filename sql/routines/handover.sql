-- handover: move leadership of a service to the node p_to_node, with no overlap (an operator's
-- switchover). In one transaction under the seat's row lock:
--   * p_to_node holds a valid lease already: nothing changes (a pending reservation is cleared);
--   * another node holds a valid lease: its term ends 'handed_over' (ended_by: the caller) and
--     the seat is vacated, so that node's fence (assert_leader) fails from this commit on;
--   * the seat is vacant or expired (an expired term ends 'expired', as a takeover would end it);
-- then the seat is reserved for p_to_node for one lease (the seat's last lease length, 10 s if
-- it never had one): only p_to_node may take it (at its next campaign, a new term) until the
-- reservation lapses, everybody may after. A displaced leader still believes it leads until its
-- next renew's answer reaches it: p_to_node may take the seat only once that leader has
-- acknowledged the handover (resign or resign_seats, which it sends once it stopped acting as
-- leader) or the old lease has run out, so the two never both count themselves leader. A later
-- handover replaces the reservation; force_leader and reelect clear it. The old leader learns at
-- its next renew that it does not lead; its library then steps down, acknowledges and wakes the
-- named node.
-- Result, for the seat as it is after the call: is_leader (1 when p_to_node leads), leader_id,
-- term, lease_remaining_ms.
-- A transaction of its own, as campaign: what the caller left open is committed first (inside
-- an XA transaction the call is refused before it reads anything), and every way out ends the
-- call's own transaction.
CREATE PROCEDURE handover(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_to_node    MEDIUMTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: end the current term and reserve the seat for a named node'
BEGIN
    DECLARE v_sid      VARBINARY(512);
    DECLARE v_to       VARBINARY(512);
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

    -- @include own_transaction handover

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('to_node', p_to_node);
    SET v_sid = CAST(p_service_id AS BINARY), v_to = CAST(p_to_node AS BINARY);
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    -- Every read from here on in a transaction of the call's own (leader_election_begin), and
    -- access decided from the account before the seat is read.
    CALL leader_election_begin(FALSE);
    CALL leader_election_check_access(p_service_id);

    -- Under the term's lock and the seat's (the seat created first when the service has none):
    -- unless p_to_node leads already, the term ends and the seat is reserved; a displaced valid
    -- leader's acknowledgement is waited for (leader_election_end_term).
    CALL leader_election_end_term(v_sid, 'handed_over', NULL, v_to, NULL, v_leader, v_term, v_expires, v_now, v_ended);

    COMMIT;
    SELECT IF(v_leader = v_to, 1, 0) AS is_leader,
           CAST(v_leader AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_term AS term,
           COALESCE(TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000, 0) AS lease_remaining_ms;
END;
