-- mysqlleader V2: the election procedures. The whole decision of who leads lives here.
--
-- Conventions (every procedure):
--   * SQL SECURITY DEFINER: an account with only EXECUTE on this schema can call them.
--   * Input is checked first; bad input raises SQLSTATE 45000 'mysqlleader: <parameter> ...'
--     before anything is read or written.
--   * Times come from UTC_TIMESTAMP(6) on this server, taken after the election row is locked.
--   * A procedure that writes does so in a transaction of its own, under the row lock of the
--     service's election row, and rolls back on any error (EXIT handler), so that a failed call
--     leaves no transaction open and no row changed. Call them outside an open transaction
--     (START TRANSACTION inside a procedure commits a transaction the caller left open), except
--     assert_leader, which is made to run inside the caller's transaction.
--   * Ids are taken as utf8mb4 text and stored as their bytes (VARBINARY), compared exactly.
--   * Numbers (lease_ms, term) are taken as DECIMAL(65,30), so that any number a client writes
--     arrives unchanged and is checked here: a fraction or an out-of-range value is rejected with
--     45000, never rounded or clamped on the way in (nor refused with a server type error).
--   * Exactly one result set of exactly one row; no warnings on the normal paths.

-- Rejects a NULL, empty or over-long id. Internal; reads and writes nothing.
DROP PROCEDURE IF EXISTS leader_election_check_id;
CREATE PROCEDURE leader_election_check_id(
    IN p_name  VARCHAR(32),
    IN p_value MEDIUMTEXT CHARACTER SET utf8mb4)
    NO SQL
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: rejects a NULL, empty or over-long id'
BEGIN
    DECLARE v_msg VARCHAR(128);
    IF p_value IS NULL THEN
        SET v_msg = CONCAT('mysqlleader: ', p_name, ' must not be NULL');
    ELSEIF CHAR_LENGTH(p_value) = 0 THEN
        SET v_msg = CONCAT('mysqlleader: ', p_name, ' must not be empty');
    ELSEIF CHAR_LENGTH(p_value) > 128 THEN
        SET v_msg = CONCAT('mysqlleader: ', p_name, ' must be at most 128 characters (got ',
                           CHAR_LENGTH(p_value), ')');
    END IF;
    IF v_msg IS NOT NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
    END IF;
END;

-- Rejects a NULL, fractional or out-of-range number (p_name names the parameter in the
-- message). Internal; reads and writes nothing.
DROP PROCEDURE IF EXISTS leader_election_check_number;
CREATE PROCEDURE leader_election_check_number(
    IN p_name  VARCHAR(32),
    IN p_value DECIMAL(65,30),
    IN p_min   DECIMAL(65,30),
    IN p_max   DECIMAL(65,30))
    NO SQL
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: rejects a NULL, fractional or out-of-range number'
BEGIN
    DECLARE v_got VARCHAR(80);
    DECLARE v_msg VARCHAR(255);
    -- The value as written, without the trailing zeros of the DECIMAL: '1.5', '86400001'.
    SET v_got = TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM CAST(p_value AS CHAR)));
    IF p_value IS NULL THEN
        SET v_msg = CONCAT('mysqlleader: ', p_name, ' must not be NULL');
    ELSEIF p_value <> TRUNCATE(p_value, 0) THEN
        SET v_msg = CONCAT('mysqlleader: ', p_name, ' must be a whole number (got ', v_got, ')');
    ELSEIF p_value < p_min OR p_value > p_max THEN
        SET v_msg = CONCAT('mysqlleader: ', p_name, ' must be between ', CAST(p_min AS DECIMAL(20,0)),
                           ' and ', CAST(p_max AS DECIMAL(20,0)), ' (got ', v_got, ')');
    END IF;
    IF v_msg IS NOT NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
    END IF;
END;

-- Rejects a lease outside 1 ms to 86,400,000 ms (one day). Internal; reads and writes nothing.
DROP PROCEDURE IF EXISTS leader_election_check_lease;
CREATE PROCEDURE leader_election_check_lease(IN p_lease_ms DECIMAL(65,30))
    NO SQL
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: rejects a lease outside 1 to 86400000 ms'
BEGIN
    CALL leader_election_check_number('lease_ms', p_lease_ms, 1, 86400000);
END;

-- campaign: take the seat when it is vacant or its lease has expired (term + 1), renew it when the
-- caller holds a valid lease (same term), and otherwise only read.
-- Result: is_leader, leader_id, term, lease_remaining_ms.
DROP PROCEDURE IF EXISTS campaign;
CREATE PROCEDURE campaign(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_node_id    MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_lease_ms   DECIMAL(65,30))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: take a vacant or expired seat, renew a held one, else only read'
BEGIN
    DECLARE v_sid      VARBINARY(512);
    DECLARE v_nid      VARBINARY(512);
    DECLARE v_lease_ms BIGINT;
    DECLARE v_rows     INT;
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_now      DATETIME(6);

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_lease(p_lease_ms);
    SET v_sid = CAST(p_service_id AS BINARY), v_nid = CAST(p_node_id AS BINARY),
        v_lease_ms = p_lease_ms;

    -- 1. A plain consistent read: while another node's lease is valid, this is all a follower does.
    SELECT COUNT(*), MAX(leader_id), MAX(term), MAX(lease_expires_at), UTC_TIMESTAMP(6)
      INTO v_rows, v_leader, v_term, v_expires, v_now
      FROM leader_election WHERE service_id = v_sid;

    IF NOT (v_leader IS NOT NULL AND v_leader <> v_nid AND v_expires > v_now) THEN
        BEGIN
            DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
            -- 2. The first campaign of a service creates its row in a statement of its own, so
            --    that no transaction below holds an insert lock while it waits for the row lock.
            IF v_rows = 0 THEN
                INSERT IGNORE INTO leader_election (service_id, term) VALUES (v_sid, 0);
            END IF;
            -- 3. Decide under the row lock, with the clock read after the lock is granted.
            START TRANSACTION;
            SELECT leader_id, term, lease_expires_at INTO v_leader, v_term, v_expires
              FROM leader_election WHERE service_id = v_sid FOR UPDATE;
            SET v_now = UTC_TIMESTAMP(6);
            IF v_leader = v_nid AND v_expires > v_now THEN
                -- 3a. Renew our own valid lease: the term stays.
                SET v_expires = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND;
                UPDATE leader_election
                   SET lease_ms = v_lease_ms, renewed_at = v_now, lease_expires_at = v_expires
                 WHERE service_id = v_sid;
            ELSEIF v_leader IS NULL OR v_expires <= v_now THEN
                -- 3b. Take the vacant or expired seat: close the expired term, open the next one.
                IF v_leader IS NOT NULL THEN
                    UPDATE leader_election_history
                       SET ended_at = v_expires, ended_how = 'expired'
                     WHERE service_id = v_sid AND term = v_term AND ended_at IS NULL;
                END IF;
                SET v_term = v_term + 1, v_leader = v_nid,
                    v_expires = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND;
                UPDATE leader_election
                   SET leader_id = v_nid, term = v_term, lease_ms = v_lease_ms,
                       term_started_at = v_now, renewed_at = v_now, lease_expires_at = v_expires
                 WHERE service_id = v_sid;
                INSERT INTO leader_election_history
                       (service_id, term, leader_id, lease_ms, began_at, began_how)
                VALUES (v_sid, v_term, v_nid, v_lease_ms, v_now, 'elected');
            END IF;
            -- 3c. Otherwise another node took the seat meanwhile: nothing to write.
            COMMIT;
        END;
    END IF;

    SELECT IF(v_leader = v_nid, 1, 0) AS is_leader,
           CAST(v_leader AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_term AS term,
           TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000 AS lease_remaining_ms;
END;

-- am_i_leader: a read. is_leader is 1 only while the node holds an unexpired lease.
-- Result: is_leader, term, lease_remaining_ms (of the current leader's lease, 0 without one).
DROP PROCEDURE IF EXISTS am_i_leader;
CREATE PROCEDURE am_i_leader(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_node_id    MEDIUMTEXT CHARACTER SET utf8mb4)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: does this node hold a valid lease? (a read)'
BEGIN
    DECLARE v_leader  VARBINARY(512);
    DECLARE v_term    BIGINT UNSIGNED;
    DECLARE v_expires DATETIME(6);
    DECLARE v_now     DATETIME(6);

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), UTC_TIMESTAMP(6)
      INTO v_leader, v_term, v_expires, v_now
      FROM leader_election WHERE service_id = CAST(p_service_id AS BINARY);
    IF NOT (v_leader IS NOT NULL AND v_expires > v_now) THEN
        SET v_leader = NULL;
    END IF;

    SELECT IF(v_leader = CAST(p_node_id AS BINARY), 1, 0) AS is_leader,
           v_term AS term,
           IF(v_leader IS NULL, 0, TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000)
               AS lease_remaining_ms;
END;

-- current_leader: a read. Result: leader_id (NULL without a current leader), term, lease_remaining_ms.
DROP PROCEDURE IF EXISTS current_leader;
CREATE PROCEDURE current_leader(IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: who holds a valid lease, at which term (a read)'
BEGIN
    DECLARE v_leader  VARBINARY(512);
    DECLARE v_term    BIGINT UNSIGNED;
    DECLARE v_expires DATETIME(6);
    DECLARE v_now     DATETIME(6);

    CALL leader_election_check_id('service_id', p_service_id);
    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), UTC_TIMESTAMP(6)
      INTO v_leader, v_term, v_expires, v_now
      FROM leader_election WHERE service_id = CAST(p_service_id AS BINARY);
    IF NOT (v_leader IS NOT NULL AND v_expires > v_now) THEN
        SET v_leader = NULL;
    END IF;

    SELECT CAST(v_leader AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_term AS term,
           IF(v_leader IS NULL, 0, TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000)
               AS lease_remaining_ms;
END;

-- force_leader: install the node at once with a new term (an operator's override). A displaced
-- valid leader's term ends 'forced_out'; an expired one's ends 'expired' at its lease's end.
-- Result: is_leader (1), leader_id, term, lease_remaining_ms.
DROP PROCEDURE IF EXISTS force_leader;
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

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_lease(p_lease_ms);
    SET v_sid = CAST(p_service_id AS BINARY), v_nid = CAST(p_node_id AS BINARY),
        v_lease_ms = p_lease_ms;

    BEGIN
        DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
        INSERT IGNORE INTO leader_election (service_id, term) VALUES (v_sid, 0);
        START TRANSACTION;
        SELECT leader_id, term, lease_expires_at INTO v_leader, v_term, v_expires
          FROM leader_election WHERE service_id = v_sid FOR UPDATE;
        SET v_now = UTC_TIMESTAMP(6);
        IF v_leader IS NOT NULL THEN
            UPDATE leader_election_history
               SET ended_at  = IF(v_expires > v_now, v_now, v_expires),
                   ended_how = IF(v_expires > v_now, 'forced_out', 'expired')
             WHERE service_id = v_sid AND term = v_term AND ended_at IS NULL;
        END IF;
        SET v_term = v_term + 1,
            v_expires = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND;
        UPDATE leader_election
           SET leader_id = v_nid, term = v_term, lease_ms = v_lease_ms,
               term_started_at = v_now, renewed_at = v_now, lease_expires_at = v_expires
         WHERE service_id = v_sid;
        INSERT INTO leader_election_history
               (service_id, term, leader_id, lease_ms, began_at, began_how)
        VALUES (v_sid, v_term, v_nid, v_lease_ms, v_now, 'forced');
        COMMIT;
    END;

    SELECT 1 AS is_leader,
           CAST(v_nid AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_term AS term,
           v_lease_ms AS lease_remaining_ms;
END;

-- reelect: end the current lease now (its term ends 'reelected') and vacate the seat, so that
-- the next campaign of any node wins. The term is kept; the next acquisition raises it.
-- Result: previous_leader_id (NULL when nobody held a valid lease), term.
DROP PROCEDURE IF EXISTS reelect;
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

    CALL leader_election_check_id('service_id', p_service_id);
    SET v_sid = CAST(p_service_id AS BINARY);

    BEGIN
        DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
        START TRANSACTION;
        SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at)
          INTO v_leader, v_term, v_expires
          FROM leader_election WHERE service_id = v_sid FOR UPDATE;
        SET v_now = UTC_TIMESTAMP(6);
        IF v_leader IS NOT NULL THEN
            IF v_expires > v_now THEN
                SET v_previous = v_leader;
            END IF;
            UPDATE leader_election_history
               SET ended_at  = IF(v_expires > v_now, v_now, v_expires),
                   ended_how = IF(v_expires > v_now, 'reelected', 'expired')
             WHERE service_id = v_sid AND term = v_term AND ended_at IS NULL;
            UPDATE leader_election SET leader_id = NULL, lease_expires_at = NULL
             WHERE service_id = v_sid;
        END IF;
        COMMIT;
    END;

    SELECT CAST(v_previous AS CHAR CHARACTER SET utf8mb4) AS previous_leader_id,
           v_term AS term;
END;

-- resign: end the caller's lease now if and only if it holds a valid one (term ends 'resigned'),
-- and vacate the seat. A node that does not lead changes nothing (and takes no lock).
-- Result: resigned (0 or 1), term.
DROP PROCEDURE IF EXISTS resign;
CREATE PROCEDURE resign(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_node_id    MEDIUMTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: give up the seat now if this node holds it'
BEGIN
    DECLARE v_sid      VARBINARY(512);
    DECLARE v_nid      VARBINARY(512);
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_now      DATETIME(6);
    DECLARE v_resigned INT DEFAULT 0;

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    SET v_sid = CAST(p_service_id AS BINARY), v_nid = CAST(p_node_id AS BINARY);

    -- 1. A read: only a node that appears to lead goes on to lock and write.
    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), UTC_TIMESTAMP(6)
      INTO v_leader, v_term, v_expires, v_now
      FROM leader_election WHERE service_id = v_sid;
    IF v_leader = v_nid AND v_expires > v_now THEN
        BEGIN
            DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
            -- 2. Confirm under the row lock, then close the term and vacate the seat.
            START TRANSACTION;
            SELECT leader_id, term, lease_expires_at INTO v_leader, v_term, v_expires
              FROM leader_election WHERE service_id = v_sid FOR UPDATE;
            SET v_now = UTC_TIMESTAMP(6);
            IF v_leader = v_nid AND v_expires > v_now THEN
                UPDATE leader_election_history SET ended_at = v_now, ended_how = 'resigned'
                 WHERE service_id = v_sid AND term = v_term AND ended_at IS NULL;
                UPDATE leader_election SET leader_id = NULL, lease_expires_at = NULL
                 WHERE service_id = v_sid;
                SET v_resigned = 1;
            END IF;
            COMMIT;
        END;
    END IF;

    SELECT v_resigned AS resigned, v_term AS term;
END;

-- assert_leader: the fencing guard, to be called inside the caller's own transaction before
-- its writes. It succeeds only when the node holds an unexpired lease at exactly this term, and
-- it share-locks the election row until the caller's transaction ends, so no takeover (which
-- needs the row's exclusive lock) can commit in between. Otherwise SQLSTATE 45001. It never
-- starts or commits a transaction; but when it fails (45001, bad input, a lock wait) it rolls
-- the caller's transaction back before raising, so that writes made under a stale term cannot
-- commit even if the caller ignores the error, and no lock is left held.
-- Result: is_leader (1), term, lease_remaining_ms (> 0).
DROP PROCEDURE IF EXISTS assert_leader;
CREATE PROCEDURE assert_leader(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_node_id    MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_term       DECIMAL(65,30))
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: fence the caller''s transaction: raise 45001 unless node leads at term'
BEGIN
    DECLARE v_leader  VARBINARY(512);
    DECLARE v_term    BIGINT UNSIGNED;
    DECLARE v_expires DATETIME(6);
    DECLARE v_now     DATETIME(6);
    DECLARE v_want    BIGINT UNSIGNED;
    DECLARE v_msg     VARCHAR(255);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_number('term', p_term, 0, 18446744073709551615);
    SET v_want = p_term;

    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at)
      INTO v_leader, v_term, v_expires
      FROM leader_election WHERE service_id = CAST(p_service_id AS BINARY)
      LOCK IN SHARE MODE;
    SET v_now = UTC_TIMESTAMP(6);
    -- Valid means at least 1 ms left, so that lease_remaining_ms is always > 0 on success.
    IF NOT COALESCE(v_leader = CAST(p_node_id AS BINARY) AND v_term = v_want
                    AND v_expires >= v_now + INTERVAL 1000 MICROSECOND, FALSE) THEN
        SET v_msg = CONCAT('mysqlleader: not the leader at term ', v_want,
                           ' (current term ', v_term, ')');
        SIGNAL SQLSTATE '45001' SET MESSAGE_TEXT = v_msg;
    END IF;

    SELECT 1 AS is_leader,
           v_term AS term,
           TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000 AS lease_remaining_ms;
END;
