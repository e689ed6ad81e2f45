-- campaign: take the seat when it is vacant or its lease has expired (term + 1), renew it when
-- the caller holds a valid lease (same term), and otherwise only read.
-- A transaction of its own: it first commits what the caller left open (as START TRANSACTION
-- would; inside an XA transaction it is refused, before it reads anything), and every way out
-- ends its own transaction, so nothing it read or locked outlives the call, whatever the
-- session's isolation level or autocommit.
-- Result: is_leader, leader_id, term, lease_remaining_ms.
-- The body is leader_election_campaign's (one definition), called without a held term: a valid
-- lease of p_node_id is renewed at whatever term it has. The library's elector calls
-- leader_election_campaign with the term it holds instead, so that a process never takes over
-- the term of another process with the same node id (issue 39).
CREATE PROCEDURE campaign(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_node_id    MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_lease_ms   DECIMAL(65,30))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: take a vacant or expired seat, renew a held one, else only read'
BEGIN
    CALL leader_election_campaign(p_service_id, p_node_id, p_lease_ms, NULL);
END;
