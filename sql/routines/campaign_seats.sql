-- campaign_seats: one call for the seats a node may take now (issue "Sessions"): the batched
-- takeover. Takes, in one transaction, every seat in p_service_ids (a JSON array of service
-- ids) that is vacant or whose lease has expired and that no handover's reservation bars for
-- p_node_id (and whose expired term no fenced transaction still holds), as campaign's step 4 would: the expired term is closed in the history ('expired',
-- at its lease's end), the next term opened (term + 1, 'elected', began_by the session's
-- account) and any reservation ended. It never waits for a seat another transaction has locked
-- (it leaves that seat out), and it leaves to campaign what campaign alone decides: a seat
-- whose handover this node must acknowledge (it was the leader the handover displaced). The
-- seats of listed services that have none yet are created first, all in one statement (step 0:
-- a node's first start with many new services takes them in one call, not one campaign each). A service outside the account's patterns is left out before any
-- seat is read (sql/V14__access_by_account.sql); a list that is not one of distinct ids is
-- refused (leader_election_check_ids). The caller sends campaign for each listed seat missing
-- from the result.
-- Result: one row per listed seat led with a valid lease after the call, by this node (taken
-- by this call: is_leader 1) or by another node (is_leader 0), in the order of service_id:
-- service_id, leader_id, term, lease_remaining_ms (on the database's clock), is_leader. Seats
-- this node held before the call are left out (renew_seats renews them).
-- A transaction of its own, as campaign: what the caller left open is committed first (inside
-- an XA transaction the call is refused before it reads anything), and every way out ends the
-- call's own transaction. Each seat's take (its term, the seat and its history rows) is one
-- statement (sql/V13__term_and_history_in_one_statement.sql): a call cut short and then
-- committed by its caller commits each seat whole or not at all.
-- The body is leader_election_take_seats (shared with take_seats, which hangs the seats it takes
-- on a node lease).
CREATE PROCEDURE campaign_seats(
    IN p_node_id     MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_lease_ms    DECIMAL(65,30),
    IN p_service_ids LONGTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: take many vacant or expired seats for one node in one transaction'
BEGIN
    DECLARE v_own BOOLEAN DEFAULT FALSE;
    -- @include own_transaction campaign_seats
    CALL leader_election_take_seats(NULL, p_node_id, p_lease_ms, p_service_ids);
END;
