-- Renews the node lease p_lease (sql/V15__node_leases.sql) to p_now + p_lease_ms, in the
-- caller's transaction, if and only if it is valid at p_now, is for node p_nid, and was granted
-- to this session's account: p_alive 1 when it was renewed, else 0 (then nothing is written).
-- One row written, whatever the number of seats that hang on it. Waits for the lease's row at
-- most the session's innodb_lock_wait_timeout (the callers set 1 s): a takeover or an operator's
-- change of one of its seats holds it for that change's transaction. Internal: renew_lease and
-- take_seats call it.
CREATE PROCEDURE leader_election_renew_lease(
    IN  p_lease    BIGINT UNSIGNED,
    IN  p_nid      VARBINARY(512),
    IN  p_lease_ms BIGINT,
    IN  p_now      DATETIME(6),
    OUT p_alive    INT)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: renew a node lease of this account, while it is valid'
BEGIN
    UPDATE leader_election_lease
       SET lease_ms = p_lease_ms, renewed_at = p_now,
           expires_at = p_now + INTERVAL (p_lease_ms * 1000) MICROSECOND
     WHERE lease_id = p_lease AND node_id = p_nid AND expires_at > p_now
       AND account = CAST(CONVERT(LEFT(USER(), CHAR_LENGTH(USER()) - CHAR_LENGTH(SUBSTRING_INDEX(USER(), '@', -1)) - 1)
                                  USING utf8mb4) AS BINARY);
    SET p_alive = ROW_COUNT();
END;
