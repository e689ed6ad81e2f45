-- mysqlleader V6: per-service access, an audit trail, fencing only inside a transaction, and
-- server-side work bounded by what a caller is prepared to wait.
--
-- 1. Per-service access. `leader_election_access` lists, per account (the user name of the
--    session: the part of USER() before '@'), the LIKE patterns of the services it may act on.
--    An account with no row there is limited by its role (its EXECUTE grants) alone. Every
--    procedure checks it right after the input checks, BEFORE it reads or writes anything; a
--    refusal raises SQLSTATE 45002 'mysqlleader: access denied: account ... may not act on
--    service ...' and changes nothing. The check is one read of the primary key's prefix of a
--    tiny table (nothing found for an unlimited account).
-- 2. Audit. The history records who began and who ended each term (`began_by`, `ended_by`:
--    USER() of the calling session, `user@host`); NULL for an end the server decided itself
--    (a lease that ran out: 'expired', whether the expiry event or a later campaign closes it).
-- 3. Fencing only inside a transaction. `assert_leader` in autocommit mode would fence nothing
--    (its share lock ends with the statement); where the server can tell (MariaDB:
--    @@in_transaction) it raises SQLSTATE 45000 'mysqlleader: assert_leader needs an open
--    transaction ...'. MySQL has no such variable: there the call still succeeds (documented).
-- 4. An idle fenced transaction cannot block a takeover for hours. On MariaDB, a successful
--    assert_leader lowers this session's idle_transaction_timeout to the lease left, in whole
--    seconds rounded up, + 1 (never raising a lower value the session already had): a fenced
--    transaction left idle past its lease is ended by the server (the connection is closed), and
--    the share lock with it. The setting stays on the session afterwards (it only ever lowers it
--    to at least 2 s). MySQL has no such bound: there an idle fenced transaction blocks every
--    takeover until the client ends it or wait_timeout closes its connection.
-- 5. Bounded row-lock waits. Every procedure that takes the election row's exclusive lock waits
--    for it at most 1 s (innodb_lock_wait_timeout, set for the wait and restored after, also on
--    error), then fails with error 1205 (transient: the caller retries). A campaign whose client
--    gave up therefore ends on the server within a second, instead of holding a server thread for
--    the default 50 s; the library also ends its own abandoned statements at once (KILL QUERY).
-- 6. Nothing half-done. A first campaign (or force) of a service creates the service's row in a
--    statement of its own; when the rest of the call then fails, that row is removed again.
--
-- Every statement here can run again safely. Procedures are replaced with DROP + CREATE, the
-- only form MySQL knows: a call that arrives between the two fails with "PROCEDURE ... does
-- not exist" (error 1305, reported as not migrated). Apply migrations when no elector runs, or
-- accept one failed call per elector (it retries).

CREATE TABLE IF NOT EXISTS leader_election_access (
    account         VARCHAR(80)    NOT NULL COMMENT 'user name of the session (USER() before @)',
    service_pattern VARBINARY(512) NOT NULL COMMENT 'SQL LIKE pattern of the service ids it may act on',
    PRIMARY KEY (account, service_pattern)
) ENGINE=InnoDB COMMENT='mysqlleader: per-service access; an account without rows is not limited';

-- Adds the audit columns unless they are there already (MySQL has no ADD COLUMN IF NOT
-- EXISTS). Internal; dropped again right after the call.
DROP PROCEDURE IF EXISTS leader_election_v6_add_audit;
CREATE PROCEDURE leader_election_v6_add_audit()
    MODIFIES SQL DATA
    SQL SECURITY INVOKER
BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.COLUMNS
                    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'leader_election_history'
                      AND COLUMN_NAME = 'began_by') THEN
        ALTER TABLE leader_election_history
          ADD COLUMN began_by VARCHAR(384) NULL COMMENT 'USER() of the session that began the term',
          ADD COLUMN ended_by VARCHAR(384) NULL COMMENT 'USER() of the session that ended it; NULL when it expired';
    END IF;
END;
CALL leader_election_v6_add_audit();
DROP PROCEDURE IF EXISTS leader_election_v6_add_audit;

CREATE OR REPLACE SQL SECURITY INVOKER VIEW leader_election_terms AS
SELECT CAST(h.service_id AS CHAR CHARACTER SET utf8mb4) AS service_id,
       h.term,
       CAST(h.leader_id AS CHAR CHARACTER SET utf8mb4) AS leader_id,
       h.lease_ms,
       h.began_at,
       h.began_how,
       h.began_by,
       CASE WHEN h.ended_at IS NOT NULL THEN h.ended_at
            WHEN e.term = h.term AND e.leader_id IS NOT NULL
                 AND e.lease_expires_at <= UTC_TIMESTAMP(6) THEN e.lease_expires_at
       END AS ended_at,
       CASE WHEN h.ended_at IS NOT NULL THEN h.ended_how
            WHEN e.term = h.term AND e.leader_id IS NOT NULL
                 AND e.lease_expires_at <= UTC_TIMESTAMP(6) THEN 'expired'
       END AS ended_how,
       h.ended_by
FROM leader_election_history h
LEFT JOIN leader_election e ON e.service_id = h.service_id;

-- Raises the refusal of per-service access: SQLSTATE 45002, naming the account and the
-- service. Internal; reads and writes nothing. Only called on the slow path.
DROP PROCEDURE IF EXISTS leader_election_deny;
CREATE PROCEDURE leader_election_deny(IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4)
    NO SQL
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: raise 45002 access denied'
BEGIN
    DECLARE v_msg VARCHAR(512);
    SET v_msg = CONCAT('mysqlleader: access denied: account ''', SUBSTRING_INDEX(USER(), '@', 1),
                       ''' may not act on service ''', LEFT(p_service_id, 128), '''');
    SIGNAL SQLSTATE '45002' SET MESSAGE_TEXT = v_msg;
END;

-- Sets @mysqlleader_in_tx to @@in_transaction (MariaDB), or NULL where the server has no such
-- variable (MySQL: error 1193 when a routine names it, hence the prepared statement). Internal.
DROP PROCEDURE IF EXISTS leader_election_probe_in_tx;
CREATE PROCEDURE leader_election_probe_in_tx()
    NO SQL
    SQL SECURITY INVOKER
    COMMENT 'mysqlleader internal: @mysqlleader_in_tx := @@in_transaction, NULL when unknown'
BEGIN
    SET @mysqlleader_in_tx = NULL;
    BEGIN
        DECLARE EXIT HANDLER FOR 1193, 1243 SET @mysqlleader_in_tx = NULL;
        PREPARE mysqlleader_in_tx_probe FROM 'SET @mysqlleader_in_tx = @@in_transaction';
        EXECUTE mysqlleader_in_tx_probe;
        DEALLOCATE PREPARE mysqlleader_in_tx_probe;
    END;
END;

-- Lowers this session's idle_transaction_timeout (MariaDB) to p_seconds unless it is already
-- lower (0 means none); does nothing where the variable is unknown (MySQL). Internal.
DROP PROCEDURE IF EXISTS leader_election_bound_idle_tx;
CREATE PROCEDURE leader_election_bound_idle_tx(IN p_seconds BIGINT)
    NO SQL
    SQL SECURITY INVOKER
    COMMENT 'mysqlleader internal: lower the session idle_transaction_timeout to p_seconds'
BEGIN
    DECLARE EXIT HANDLER FOR 1193, 1243, 1238 BEGIN END;
    SET @mysqlleader_idle_tx = p_seconds;
    PREPARE mysqlleader_idle_tx_set FROM
        'SET SESSION idle_transaction_timeout = IF(@@session.idle_transaction_timeout = 0, @mysqlleader_idle_tx, LEAST(@@session.idle_transaction_timeout, @mysqlleader_idle_tx))';
    EXECUTE mysqlleader_idle_tx_set;
    DEALLOCATE PREPARE mysqlleader_idle_tx_set;
END;

-- campaign: take the seat when it is vacant or its lease has expired (term + 1), renew it when
-- the caller holds a valid lease (same term), and otherwise only read.
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
    DECLARE v_limits   INT;
    DECLARE v_allowed  INT;
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_now      DATETIME(6);
    DECLARE v_wait     BIGINT;

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_lease(p_lease_ms);
    SET v_sid = CAST(p_service_id AS BINARY), v_nid = CAST(p_node_id AS BINARY),
        v_lease_ms = p_lease_ms;
    -- 0. Per-service access, before anything is read.
    SELECT COUNT(*), COALESCE(MAX(v_sid LIKE service_pattern), 0) INTO v_limits, v_allowed
      FROM leader_election_access WHERE account = SUBSTRING_INDEX(USER(), '@', 1);
    IF v_limits > 0 AND v_allowed = 0 THEN
        CALL leader_election_deny(p_service_id);
    END IF;

    -- 1. A plain consistent read: while another node's lease is valid, this is all a follower does.
    SELECT COUNT(*), MAX(leader_id), MAX(term), MAX(lease_expires_at), UTC_TIMESTAMP(6)
      INTO v_rows, v_leader, v_term, v_expires, v_now
      FROM leader_election WHERE service_id = v_sid;

    IF NOT (v_leader IS NOT NULL AND v_leader <> v_nid AND v_expires > v_now) THEN
        BEGIN
            DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
                ROLLBACK;
                SET SESSION innodb_lock_wait_timeout = v_wait;
                -- Nothing half-done: a row this call created goes again.
                IF v_rows = 0 THEN
                    DELETE FROM leader_election WHERE service_id = v_sid AND term = 0 AND leader_id IS NULL;
                END IF;
                RESIGNAL;
            END;
            SET v_wait = @@session.innodb_lock_wait_timeout;
            -- 2. The first campaign of a service creates its row in a statement of its own, so
            --    that no transaction below holds an insert lock while it waits for the row lock.
            IF v_rows = 0 THEN
                INSERT IGNORE INTO leader_election (service_id, term) VALUES (v_sid, 0);
            END IF;
            -- 3. Decide under the row lock (waited for at most 1 s), with the clock read after
            --    the lock is granted.
            SET SESSION innodb_lock_wait_timeout = 1;
            START TRANSACTION;
            SELECT leader_id, term, lease_expires_at INTO v_leader, v_term, v_expires
              FROM leader_election WHERE service_id = v_sid FOR UPDATE;
            SET SESSION innodb_lock_wait_timeout = v_wait;
            SET v_now = UTC_TIMESTAMP(6);
            IF v_leader = v_nid AND v_expires > v_now THEN
                -- 3a. Renew our own valid lease: the term stays.
                SET v_expires = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND;
                UPDATE leader_election
                   SET lease_ms = v_lease_ms, renewed_at = v_now, lease_expires_at = v_expires
                 WHERE service_id = v_sid;
            ELSEIF v_leader IS NULL OR v_expires <= v_now THEN
                -- 3b. Take the vacant or expired seat: close the expired term (the server's
                --     decision: no ended_by), open the next one.
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
                       (service_id, term, leader_id, lease_ms, began_at, began_how, began_by)
                VALUES (v_sid, v_term, v_nid, v_lease_ms, v_now, 'elected', USER());
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
-- The read is a locking read (LOCK IN SHARE MODE, ended with the statement under autocommit):
-- it sees the latest committed row even inside a caller's old REPEATABLE READ snapshot (a PEP 249
-- driver starts with autocommit off), so it never answers from a stale snapshot.
-- Result: is_leader, term, lease_remaining_ms (of the current leader's lease, 0 without one).
DROP PROCEDURE IF EXISTS am_i_leader;
CREATE PROCEDURE am_i_leader(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_node_id    MEDIUMTEXT CHARACTER SET utf8mb4)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: does this node hold a valid lease? (a read)'
BEGIN
    DECLARE v_sid     VARBINARY(512);
    DECLARE v_limits  INT;
    DECLARE v_allowed INT;
    DECLARE v_leader  VARBINARY(512);
    DECLARE v_term    BIGINT UNSIGNED;
    DECLARE v_expires DATETIME(6);
    DECLARE v_now     DATETIME(6);

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    SET v_sid = CAST(p_service_id AS BINARY);
    SELECT COUNT(*), COALESCE(MAX(v_sid LIKE service_pattern), 0) INTO v_limits, v_allowed
      FROM leader_election_access WHERE account = SUBSTRING_INDEX(USER(), '@', 1);
    IF v_limits > 0 AND v_allowed = 0 THEN
        CALL leader_election_deny(p_service_id);
    END IF;

    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), UTC_TIMESTAMP(6)
      INTO v_leader, v_term, v_expires, v_now
      FROM leader_election WHERE service_id = v_sid LOCK IN SHARE MODE;
    IF NOT (v_leader IS NOT NULL AND v_expires > v_now) THEN
        SET v_leader = NULL;
    END IF;

    SELECT IF(v_leader = CAST(p_node_id AS BINARY), 1, 0) AS is_leader,
           v_term AS term,
           IF(v_leader IS NULL, 0, TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000)
               AS lease_remaining_ms;
END;

-- current_leader: a read (a locking read, as am_i_leader: never from a stale snapshot).
-- Result: leader_id (NULL without a current leader), term, lease_remaining_ms.
DROP PROCEDURE IF EXISTS current_leader;
CREATE PROCEDURE current_leader(IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: who holds a valid lease, at which term (a read)'
BEGIN
    DECLARE v_sid     VARBINARY(512);
    DECLARE v_limits  INT;
    DECLARE v_allowed INT;
    DECLARE v_leader  VARBINARY(512);
    DECLARE v_term    BIGINT UNSIGNED;
    DECLARE v_expires DATETIME(6);
    DECLARE v_now     DATETIME(6);

    CALL leader_election_check_id('service_id', p_service_id);
    SET v_sid = CAST(p_service_id AS BINARY);
    SELECT COUNT(*), COALESCE(MAX(v_sid LIKE service_pattern), 0) INTO v_limits, v_allowed
      FROM leader_election_access WHERE account = SUBSTRING_INDEX(USER(), '@', 1);
    IF v_limits > 0 AND v_allowed = 0 THEN
        CALL leader_election_deny(p_service_id);
    END IF;

    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), UTC_TIMESTAMP(6)
      INTO v_leader, v_term, v_expires, v_now
      FROM leader_election WHERE service_id = v_sid LOCK IN SHARE MODE;
    IF NOT (v_leader IS NOT NULL AND v_expires > v_now) THEN
        SET v_leader = NULL;
    END IF;

    SELECT CAST(v_leader AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_term AS term,
           IF(v_leader IS NULL, 0, TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000)
               AS lease_remaining_ms;
END;

-- force_leader: install the node at once with a new term (an operator's override). A displaced
-- valid leader's term ends 'forced_out' (ended_by: the operator); an expired one's ends 'expired'.
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
    DECLARE v_rows     INT;
    DECLARE v_limits   INT;
    DECLARE v_allowed  INT;
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_now      DATETIME(6);
    DECLARE v_wait     BIGINT;

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_lease(p_lease_ms);
    SET v_sid = CAST(p_service_id AS BINARY), v_nid = CAST(p_node_id AS BINARY),
        v_lease_ms = p_lease_ms;
    SELECT COUNT(*), COALESCE(MAX(v_sid LIKE service_pattern), 0) INTO v_limits, v_allowed
      FROM leader_election_access WHERE account = SUBSTRING_INDEX(USER(), '@', 1);
    IF v_limits > 0 AND v_allowed = 0 THEN
        CALL leader_election_deny(p_service_id);
    END IF;

    BEGIN
        DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
            ROLLBACK;
            SET SESSION innodb_lock_wait_timeout = v_wait;
            IF v_rows = 0 THEN
                DELETE FROM leader_election WHERE service_id = v_sid AND term = 0 AND leader_id IS NULL;
            END IF;
            RESIGNAL;
        END;
        SET v_wait = @@session.innodb_lock_wait_timeout;
        SELECT COUNT(*) INTO v_rows FROM leader_election WHERE service_id = v_sid;
        IF v_rows = 0 THEN
            INSERT IGNORE INTO leader_election (service_id, term) VALUES (v_sid, 0);
        END IF;
        SET SESSION innodb_lock_wait_timeout = 1;
        START TRANSACTION;
        SELECT leader_id, term, lease_expires_at INTO v_leader, v_term, v_expires
          FROM leader_election WHERE service_id = v_sid FOR UPDATE;
        SET SESSION innodb_lock_wait_timeout = v_wait;
        SET v_now = UTC_TIMESTAMP(6);
        IF v_leader IS NOT NULL THEN
            UPDATE leader_election_history
               SET ended_at  = IF(v_expires > v_now, v_now, v_expires),
                   ended_how = IF(v_expires > v_now, 'forced_out', 'expired'),
                   ended_by  = IF(v_expires > v_now, USER(), NULL)
             WHERE service_id = v_sid AND term = v_term AND ended_at IS NULL;
        END IF;
        SET v_term = v_term + 1,
            v_expires = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND;
        UPDATE leader_election
           SET leader_id = v_nid, term = v_term, lease_ms = v_lease_ms,
               term_started_at = v_now, renewed_at = v_now, lease_expires_at = v_expires
         WHERE service_id = v_sid;
        INSERT INTO leader_election_history
               (service_id, term, leader_id, lease_ms, began_at, began_how, began_by)
        VALUES (v_sid, v_term, v_nid, v_lease_ms, v_now, 'forced', USER());
        COMMIT;
    END;

    SELECT 1 AS is_leader,
           CAST(v_nid AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_term AS term,
           v_lease_ms AS lease_remaining_ms;
END;

-- reelect: end the current lease now (its term ends 'reelected', ended_by: the caller) and vacate
-- the seat, so that the next campaign of any node wins. The term is kept; the next acquisition
-- raises it. Result: previous_leader_id (NULL when nobody held a valid lease), term.
DROP PROCEDURE IF EXISTS reelect;
CREATE PROCEDURE reelect(IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: end the current lease now; the next campaign wins'
BEGIN
    DECLARE v_sid      VARBINARY(512);
    DECLARE v_limits   INT;
    DECLARE v_allowed  INT;
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_previous VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_now      DATETIME(6);
    DECLARE v_wait     BIGINT;

    CALL leader_election_check_id('service_id', p_service_id);
    SET v_sid = CAST(p_service_id AS BINARY);
    SELECT COUNT(*), COALESCE(MAX(v_sid LIKE service_pattern), 0) INTO v_limits, v_allowed
      FROM leader_election_access WHERE account = SUBSTRING_INDEX(USER(), '@', 1);
    IF v_limits > 0 AND v_allowed = 0 THEN
        CALL leader_election_deny(p_service_id);
    END IF;

    BEGIN
        DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
            ROLLBACK;
            SET SESSION innodb_lock_wait_timeout = v_wait;
            RESIGNAL;
        END;
        SET v_wait = @@session.innodb_lock_wait_timeout;
        SET SESSION innodb_lock_wait_timeout = 1;
        START TRANSACTION;
        SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at)
          INTO v_leader, v_term, v_expires
          FROM leader_election WHERE service_id = v_sid FOR UPDATE;
        SET SESSION innodb_lock_wait_timeout = v_wait;
        SET v_now = UTC_TIMESTAMP(6);
        IF v_leader IS NOT NULL THEN
            IF v_expires > v_now THEN
                SET v_previous = v_leader;
            END IF;
            UPDATE leader_election_history
               SET ended_at  = IF(v_expires > v_now, v_now, v_expires),
                   ended_how = IF(v_expires > v_now, 'reelected', 'expired'),
                   ended_by  = IF(v_expires > v_now, USER(), NULL)
             WHERE service_id = v_sid AND term = v_term AND ended_at IS NULL;
            UPDATE leader_election SET leader_id = NULL, lease_expires_at = NULL
             WHERE service_id = v_sid;
        END IF;
        COMMIT;
    END;

    SELECT CAST(v_previous AS CHAR CHARACTER SET utf8mb4) AS previous_leader_id,
           v_term AS term;
END;

-- resign: end the caller's lease now if and only if it holds a valid one (term ends 'resigned',
-- ended_by: the caller), and vacate the seat. A node that does not lead changes nothing (and
-- takes no lock). Result: resigned (0 or 1), term.
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
    DECLARE v_limits   INT;
    DECLARE v_allowed  INT;
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_now      DATETIME(6);
    DECLARE v_resigned INT DEFAULT 0;
    DECLARE v_wait     BIGINT;

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    SET v_sid = CAST(p_service_id AS BINARY), v_nid = CAST(p_node_id AS BINARY);
    SELECT COUNT(*), COALESCE(MAX(v_sid LIKE service_pattern), 0) INTO v_limits, v_allowed
      FROM leader_election_access WHERE account = SUBSTRING_INDEX(USER(), '@', 1);
    IF v_limits > 0 AND v_allowed = 0 THEN
        CALL leader_election_deny(p_service_id);
    END IF;

    -- 1. A read: only a node that appears to lead goes on to lock and write.
    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), UTC_TIMESTAMP(6)
      INTO v_leader, v_term, v_expires, v_now
      FROM leader_election WHERE service_id = v_sid;
    IF v_leader = v_nid AND v_expires > v_now THEN
        BEGIN
            DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
                ROLLBACK;
                SET SESSION innodb_lock_wait_timeout = v_wait;
                RESIGNAL;
            END;
            SET v_wait = @@session.innodb_lock_wait_timeout;
            -- 2. Confirm under the row lock, then close the term and vacate the seat.
            SET SESSION innodb_lock_wait_timeout = 1;
            START TRANSACTION;
            SELECT leader_id, term, lease_expires_at INTO v_leader, v_term, v_expires
              FROM leader_election WHERE service_id = v_sid FOR UPDATE;
            SET SESSION innodb_lock_wait_timeout = v_wait;
            SET v_now = UTC_TIMESTAMP(6);
            IF v_leader = v_nid AND v_expires > v_now THEN
                UPDATE leader_election_history
                   SET ended_at = v_now, ended_how = 'resigned', ended_by = USER()
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

-- assert_leader: the fencing guard, to be called inside the caller's own open transaction
-- before its writes. It succeeds only when the node holds an unexpired lease at exactly this
-- term, and it share-locks the election row until the caller's transaction ends, so no takeover
-- (which needs the row's exclusive lock) can commit in between; on Galera it also writes the
-- term's history row (V4). Outside a transaction it raises 45000 where the server can tell
-- (MariaDB), since it would fence nothing. On success it bounds how long this session's
-- transaction may then stay idle (MariaDB: idle_transaction_timeout, see the top of this file).
-- Otherwise SQLSTATE 45001. It never starts or commits a transaction; but when it fails it rolls
-- the caller's transaction back before raising, so that writes made under a stale term cannot
-- commit even if the caller ignores the error, and no lock is left held.
-- Result: is_leader (1), term, lease_remaining_ms (> 0).
DROP PROCEDURE IF EXISTS assert_leader;
CREATE PROCEDURE assert_leader(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_node_id    MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_term       DECIMAL(65,30))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: fence the caller''s transaction: raise 45001 unless node leads at term'
BEGIN
    DECLARE v_sid     VARBINARY(512);
    DECLARE v_limits  INT;
    DECLARE v_allowed INT;
    DECLARE v_leader  VARBINARY(512);
    DECLARE v_term    BIGINT UNSIGNED;
    DECLARE v_expires DATETIME(6);
    DECLARE v_now     DATETIME(6);
    DECLARE v_want    BIGINT UNSIGNED;
    DECLARE v_left_ms BIGINT;
    DECLARE v_in_tx   BOOLEAN;
    DECLARE v_msg     VARCHAR(255);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_number('term', p_term, 0, 18446744073709551615);
    SET v_want = p_term, v_sid = CAST(p_service_id AS BINARY);
    SELECT COUNT(*), COALESCE(MAX(v_sid LIKE service_pattern), 0) INTO v_limits, v_allowed
      FROM leader_election_access WHERE account = SUBSTRING_INDEX(USER(), '@', 1);
    IF v_limits > 0 AND v_allowed = 0 THEN
        CALL leader_election_deny(p_service_id);
    END IF;
    -- A fence outside a transaction fences nothing: refuse it where the server can tell. With
    -- autocommit off a transaction is always open (it begins with the read below); with it on,
    -- only @@in_transaction (MariaDB) tells whether START TRANSACTION was sent.
    CALL leader_election_probe_in_tx();
    SET v_in_tx = (@@session.autocommit = 0 OR @mysqlleader_in_tx = 1);
    IF @@session.autocommit = 1 AND @mysqlleader_in_tx = 0 THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
            'mysqlleader: assert_leader needs an open transaction (START TRANSACTION first): with autocommit on it would fence nothing';
    END IF;

    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at)
      INTO v_leader, v_term, v_expires
      FROM leader_election WHERE service_id = v_sid
      LOCK IN SHARE MODE;
    SET v_now = UTC_TIMESTAMP(6);
    -- Valid means at least 1 ms left, so that lease_remaining_ms is always > 0 on success.
    IF NOT COALESCE(v_leader = CAST(p_node_id AS BINARY) AND v_term = v_want
                    AND v_expires >= v_now + INTERVAL 1000 MICROSECOND, FALSE) THEN
        SET v_msg = CONCAT('mysqlleader: not the leader at term ', v_want,
                           ' (current term ', v_term, ')');
        SIGNAL SQLSTATE '45001' SET MESSAGE_TEXT = v_msg;
    END IF;

    -- Galera: put the term's history row into this transaction's write set (V4).
    IF @mysqlleader_wsrep_on IS NULL THEN
        CALL leader_election_probe_wsrep();
    END IF;
    IF @mysqlleader_wsrep_on = 1 THEN
        UPDATE leader_election_history SET fence_checks = fence_checks + 1
         WHERE service_id = v_sid AND term = v_term;
    END IF;

    -- An idle fenced transaction ends with its lease (MariaDB): whole seconds, rounded up, + 1.
    SET v_left_ms = TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000;
    IF v_in_tx THEN
        CALL leader_election_bound_idle_tx((v_left_ms + 999) DIV 1000 + 1);
    END IF;

    SELECT 1 AS is_leader,
           v_term AS term,
           v_left_ms AS lease_remaining_ms;
END;
