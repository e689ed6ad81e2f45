-- mysqlleader V4: fencing that also holds on a Galera cluster.
--
-- On one server, assert_leader's share lock on the election row keeps every takeover waiting
-- until the fenced transaction ends. On a Galera cluster that lock exists only on the node that
-- took it, and certification compares only what transactions write: a fenced transaction that
-- checked the seat before its node had applied a takeover made on another node could commit
-- after that takeover (tests/galera.rs opens this window on purpose and saw it happen).
--
-- So on a session that replicates through Galera (@@wsrep_on), assert_leader also writes the
-- history row of the term it confirms (the counter fence_checks added here). Every way a term
-- ends — a takeover of the expired seat, force_leader, reelect, resign, the expiry event —
-- writes that same row, so of a fenced transaction and the end of its term, whichever is
-- ordered second by the cluster fails certification (error 1213) unless its node had already
-- applied the first. A fenced commit is therefore always ordered before the end of its term.
-- The cost, on Galera only: fenced transactions of one term update one row, so they run one
-- after another on a node, and conflict (1213, retry) across nodes. On a server without
-- Galera nothing changes but a check of one session variable per call (measured: within noise).
--
-- Every statement here can run again safely.

-- Adds leader_election_history.fence_checks unless it is there already (MySQL has no
-- ADD COLUMN IF NOT EXISTS). Internal; dropped again right after the call.
DROP PROCEDURE IF EXISTS leader_election_v4_add_fence_checks;
CREATE PROCEDURE leader_election_v4_add_fence_checks()
    MODIFIES SQL DATA
    SQL SECURITY INVOKER
BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.COLUMNS
                    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'leader_election_history'
                      AND COLUMN_NAME = 'fence_checks') THEN
        ALTER TABLE leader_election_history
          ADD COLUMN fence_checks BIGINT UNSIGNED NOT NULL DEFAULT 0
          COMMENT 'Galera only: assert_leader calls that confirmed this term (each writes this row)';
    END IF;
END;
CALL leader_election_v4_add_fence_checks();
DROP PROCEDURE IF EXISTS leader_election_v4_add_fence_checks;

-- Sets the session variable @mysqlleader_wsrep_on to 1 when this session's writes replicate
-- through Galera (@@session.wsrep_on), else to 0. Internal; reads and writes no table.
-- @@wsrep_on is unknown to a MySQL server without Galera (error 1193, raised when a routine
-- that names it is created), so it is read through a prepared statement. assert_leader probes
-- once per connection and keeps the answer in that variable: a node does not join or leave
-- Galera while a connection lasts (a session that changes its own wsrep_on should set
-- @mysqlleader_wsrep_on = NULL after, to be probed again).
DROP PROCEDURE IF EXISTS leader_election_probe_wsrep;
CREATE PROCEDURE leader_election_probe_wsrep()
    NO SQL
    SQL SECURITY INVOKER
    COMMENT 'mysqlleader: internal; @mysqlleader_wsrep_on := this session replicates through Galera'
BEGIN
    SET @mysqlleader_wsrep_on = 0;
    BEGIN
        -- 1193: unknown system variable (no Galera); 1243: the statement was not prepared.
        DECLARE EXIT HANDLER FOR 1193, 1243 SET @mysqlleader_wsrep_on = 0;
        PREPARE mysqlleader_wsrep_probe FROM 'SET @mysqlleader_wsrep_on = COALESCE(@@session.wsrep_on = 1, 0)';
        EXECUTE mysqlleader_wsrep_probe;
        DEALLOCATE PREPARE mysqlleader_wsrep_probe;
    END;
END;

-- assert_leader: the fencing guard, to be called inside the caller's own transaction before
-- its writes. It succeeds only when the node holds an unexpired lease at exactly this term, and
-- it share-locks the election row until the caller's transaction ends, so no takeover (which
-- needs the row's exclusive lock) can commit in between; on Galera it also writes the term's
-- history row (see the top of this file). Otherwise SQLSTATE 45001. It never starts or commits
-- a transaction; but when it fails (45001, bad input, a lock wait, a Galera error) it rolls the
-- caller's transaction back before raising, so that writes made under a stale term cannot
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
    SET v_want = p_term, v_sid = CAST(p_service_id AS BINARY);

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

    -- Galera: put the term's history row into this transaction's write set.
    IF @mysqlleader_wsrep_on IS NULL THEN
        CALL leader_election_probe_wsrep();
    END IF;
    IF @mysqlleader_wsrep_on = 1 THEN
        UPDATE leader_election_history SET fence_checks = fence_checks + 1
         WHERE service_id = v_sid AND term = v_term;
    END IF;

    SELECT 1 AS is_leader,
           v_term AS term,
           TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000 AS lease_remaining_ms;
END;
