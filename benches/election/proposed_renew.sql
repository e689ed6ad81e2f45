-- Proposed addition (variant 3), measured by `cargo bench --bench election` in the scratch
-- database mysqlleader_bench_proposed: a `renew` procedure that a node calls only while it
-- believes it leads (the elector knows), instead of `campaign`. Same arguments and result columns
-- as campaign. Its common path is one guarded UPDATE and one read that is also the result; when
-- the UPDATE matches nothing (the lease ran out or another node holds the seat) it falls back to
-- campaign, which decides under the row lock as usual.
DROP PROCEDURE IF EXISTS renew;
CREATE PROCEDURE renew(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_node_id    MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_lease_ms   DECIMAL(65,30))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: renew the lease this node holds; else as campaign'
BEGIN
    DECLARE v_now DATETIME(6);
    IF p_service_id IS NULL OR p_node_id IS NULL OR p_lease_ms IS NULL
       OR CHAR_LENGTH(p_service_id) NOT BETWEEN 1 AND 128
       OR CHAR_LENGTH(p_node_id) NOT BETWEEN 1 AND 128
       OR p_lease_ms NOT BETWEEN 1 AND 86400000 OR p_lease_ms <> TRUNCATE(p_lease_ms, 0) THEN
        CALL leader_election_check_id('service_id', p_service_id);
        CALL leader_election_check_id('node_id', p_node_id);
        CALL leader_election_check_lease(p_lease_ms);
    END IF;
    SET v_now = UTC_TIMESTAMP(6);
    UPDATE leader_election
       SET lease_ms = p_lease_ms, renewed_at = v_now,
           lease_expires_at = v_now + INTERVAL (p_lease_ms * 1000) MICROSECOND
     WHERE service_id = CAST(p_service_id AS BINARY) AND leader_id = CAST(p_node_id AS BINARY)
       AND lease_expires_at > v_now;
    IF ROW_COUNT() = 1 THEN
        SELECT 1 AS is_leader, CAST(leader_id AS CHAR CHARACTER SET utf8mb4) AS leader_id, term,
               TIMESTAMPDIFF(MICROSECOND, v_now, lease_expires_at) DIV 1000 AS lease_remaining_ms
          FROM leader_election WHERE service_id = CAST(p_service_id AS BINARY);
    ELSE
        CALL campaign(p_service_id, p_node_id, p_lease_ms);
    END IF;
END;
