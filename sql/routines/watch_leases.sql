-- watch_leases: what a follower node reads instead of the seats it follows (issue 42, "Fleets":
-- followers stay quiet while a lease is valid; sql/V16__lease_moves.sql). p_lease_ids is a JSON
-- array of node lease ids (whole numbers >= 1), as renew_lease answered them on the rows of the
-- seats another node leads (seat_lease_id). One row per listed lease that is valid now and was
-- granted to an account that may act on no service this one may not: this session's account
-- (USER() before @), an account limited to exactly the same service patterns, or any account
-- when this one is not limited to some services (it may read every seat anyway, with
-- current_leader). Columns: lease_id, node_id (the node it is for), lease_remaining_ms (the
-- time left on it, by the database's clock), moved (how many seats have left it so far, any
-- way). A lease that has ended, never was, or is another tenant's is not in the answer (a
-- follower then lists its seats, as before): no account learns of a node it could not learn of
-- through the seats it may read.
-- While a lease is valid and its moved is the one read with a seat on it, the seat is still on
-- it, at the same term, led by its node, valid at least as long as the lease
-- (src/session/watched.rs). Reads one row per listed lease, by its key; writes nothing.
-- A transaction of its own, read-only, as current_leader: what the caller left open is committed
-- first (inside an XA transaction the call is refused before it reads anything).
CREATE PROCEDURE watch_leases(
    IN p_lease_ids LONGTEXT CHARACTER SET utf8mb4)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: the valid node leases of this account among those listed, for followers'
BEGIN
    DECLARE v_now     DATETIME(6);
    DECLARE v_n       BIGINT;
    DECLARE v_good    BIGINT;
    DECLARE v_own     BOOLEAN DEFAULT FALSE;
    DECLARE v_patterns LONGTEXT CHARACTER SET ascii;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
        END IF;
        RESIGNAL;
    END;

    -- @include own_transaction watch_leases

    IF p_lease_ids IS NULL OR JSON_VALID(p_lease_ids) = 0 OR JSON_TYPE(p_lease_ids) <> 'ARRAY' THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31000,
            MESSAGE_TEXT = 'mysqlleader: lease_ids must be a JSON array of node lease ids (whole numbers >= 1)';
    END IF;
    SELECT COUNT(*),
           COALESCE(SUM(JSON_TYPE(h.v) IN ('INTEGER', 'UNSIGNED INTEGER') AND h.v >= 1), 0)
      INTO v_n, v_good
      FROM JSON_TABLE(p_lease_ids, '$[*]' COLUMNS (v JSON PATH '$')) AS h;
    IF v_good <> v_n OR v_n > 100000 THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31000,
            MESSAGE_TEXT = 'mysqlleader: lease_ids must be a JSON array of at most 100000 node lease ids (whole numbers >= 1)';
    END IF;
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    CALL leader_election_begin(TRUE);
    CALL leader_election_account_patterns(v_patterns);
    SET v_now = UTC_TIMESTAMP(6);
    SELECT l.lease_id,
           CAST(l.node_id AS CHAR CHARACTER SET utf8mb4) AS node_id,
           TIMESTAMPDIFF(MICROSECOND, v_now, l.expires_at) DIV 1000 AS lease_remaining_ms,
           l.moved
      FROM (SELECT DISTINCT h.id
              FROM JSON_TABLE(p_lease_ids, '$[*]' COLUMNS (id DECIMAL(65,0) PATH '$')) AS h) AS j
      STRAIGHT_JOIN leader_election_lease l FORCE INDEX (PRIMARY) ON l.lease_id = j.id
      LEFT JOIN leader_election_account a ON a.account = l.account
     WHERE l.expires_at > v_now
       AND (v_patterns IS NULL OR a.patterns = v_patterns OR l.account = CAST(CONVERT(LEFT(USER(), CHAR_LENGTH(USER()) - CHAR_LENGTH(SUBSTRING_INDEX(USER(), '@', -1)) - 1)
                                    USING utf8mb4) AS BINARY));
    COMMIT;
END;
