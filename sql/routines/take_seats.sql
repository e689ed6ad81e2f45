-- take_seats: campaign_seats for a node session that holds a node lease (sql/V15__node_leases.sql,
-- grant_lease): takes, in one transaction, every listed seat that is vacant or whose lease has
-- ended (a seat on another node's lease: once that lease has ended), as campaign_seats does, and
-- hangs each seat it takes on the lease p_lease_id, which it renews first (p_lease_ms from now).
-- Only the account the lease was granted to may use it, for its node, while it is valid; with a
-- lease that is no longer valid (or not this account's) it takes nothing.
-- Result, one row per listed seat led with a valid lease after the call (taken now by this node:
-- is_leader 1; led by another node: is_leader 0), and one row for the lease itself (service_id
-- NULL; term the lease id; is_leader 1 when it was renewed; lease_remaining_ms the time left on
-- it): service_id, leader_id, term, lease_remaining_ms, is_leader, server_us (the call's time on
-- the server in microseconds, on the lease's row). Rows in no particular order.
-- A transaction of its own, as campaign (leader_election_take_seats, the body).
CREATE PROCEDURE take_seats(
    IN p_lease_id    DECIMAL(65,30),
    IN p_node_id     MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_lease_ms    DECIMAL(65,30),
    IN p_service_ids LONGTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: take many vacant or expired seats onto a node lease in one transaction'
BEGIN
    DECLARE v_own BOOLEAN DEFAULT FALSE;
    -- @include own_transaction take_seats
    CALL leader_election_check_number('lease_id', p_lease_id, 1, 18446744073709551615);
    CALL leader_election_take_seats(p_lease_id, p_node_id, p_lease_ms, p_service_ids);
END;
