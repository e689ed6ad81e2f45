-- mysqlleader V7: lean hot paths, and reads that neither lock nor answer from an old snapshot.
--
-- What a call costs is what an election costs the database it shares with the application. The
-- common calls are a follower's campaign (while another node's lease is valid) and a leader's
-- renew; V7 makes each as short as the rules allow (docs/benchmarks.md measures it side by side
-- with V6's procedure and with the classic recipe):
--
-- 1. Inline input checks. One IF tests every argument; only a call that fails it takes the slow
--    path, where the V2 checking procedures build the usual message (same SQLSTATE, same text).
--    V6 paid three nested CALLs on every call.
-- 2. Per-service access in the same statement as the read. The first read of the election row
--    also reads, as a scalar subquery, whether the account may act on the service (1 when the
--    account has no row in leader_election_access). A refusal is raised before anything is
--    returned or written, so it still reveals and changes nothing (V6: a statement of its own).
-- 3. A renew is one guarded write. When this session's last campaign won or renewed the same
--    seat (6), campaign tries the renew first, without a read: one UPDATE whose guard also
--    checks the account's access. Otherwise, when the read shows the caller holding a valid
--    lease, the same UPDATE follows the read. It extends the lease, guarded by the row as it is when the UPDATE holds its lock (same leader,
--    same term, lease still valid at the read's clock), and COMMIT; V6 ran START TRANSACTION,
--    SELECT ... FOR UPDATE, UPDATE, COMMIT. When the guard matches nothing (the seat moved or the
--    lease ran out meanwhile) the call falls through to the locking path below, unchanged from V6.
--    Why the read's clock (taken before the row lock) is as safe as a clock read after it:
--      a. The new expiry is that clock + lease. The clock was read after the server received the
--         call, so it is no earlier than the moment the node sent it, from which the node counts
--         its own deadline: the node stops leading no later than the database lets the lease run.
--      b. The seat changes hands only under the row's exclusive lock, and every change of hands
--         (a takeover, force_leader, reelect, resign, the expiry event) changes leader_id or term
--         or clears the lease. The UPDATE's guard is evaluated on the row's latest committed
--         version once it holds that lock, so it matches only if nobody took the seat: a lease
--         that ran out between the read and the lock is extended only when nobody acted on its
--         end, which is the same outcome as a renew that arrived a moment earlier.
--    The wait for the row lock is bounded as in V6 (innodb_lock_wait_timeout 1 s for the
--    statement, restored after, also on error).
-- 4. A follower's check is one read and the result: nothing is locked, nothing written.
-- 6. The seat hint. After a campaign that leaves the caller leading, the session keeps
--    @mysqlleader_seat_service, _node and _term (cleared when it does not lead). The hint only
--    chooses which path to try first: the UPDATE's guard (leader, term, a valid lease, access)
--    decides, on the row as it is under its lock, so a stale or forged hint costs one UPDATE
--    that matches nothing and then the usual read; it can neither renew a lease the caller does
--    not hold nor skip the access check. A pool that hands a leader the same connection (the
--    library calls one at a time per elector) renews with one statement.
-- 5. am_i_leader and current_leader read without locks. V6 read with LOCK IN SHARE MODE, so as
--    not to answer from an old snapshot; but that share lock lasted until the caller's
--    transaction ended, and a PEP 249 client (autocommit off by default) that never committed
--    blocked every renew and every takeover: no leader at all. V7 reads plainly, and refuses
--    (SQLSTATE 45000 'mysqlleader: am_i_leader needs autocommit ...') where its answer could come
--    from an old snapshot: inside an open transaction (MariaDB: @@in_transaction), or, where the
--    server cannot tell (MySQL), whenever autocommit is off. With autocommit on and no
--    transaction open (what every library connection uses) the read is always current.
--
-- Unchanged: the results, the messages, the term rules, the history and its audit columns, the
-- locking path of a takeover, and every other procedure. Galera: a renew is still a write of the
-- election row, certified like any other; a takeover racing it on another node loses one of the
-- two at commit (deadlock error 1213, transient), as in V6.
--
-- Every statement here can run again safely (DROP + CREATE, as in V6).

-- Refuses a read whose answer could come from an old snapshot (see 5 above): SQLSTATE 45000
-- 'mysqlleader: <p_name> needs autocommit ...'. Internal; reads and writes no table.
DROP PROCEDURE IF EXISTS leader_election_refuse_snapshot;
CREATE PROCEDURE leader_election_refuse_snapshot(IN p_name VARCHAR(32))
    NO SQL
    SQL SECURITY INVOKER
    COMMENT 'mysqlleader internal: 45000 inside an open transaction (its snapshot may be old)'
BEGIN
    DECLARE v_msg VARCHAR(400);
    CALL leader_election_probe_in_tx();
    IF @mysqlleader_in_tx = 1 OR (@mysqlleader_in_tx IS NULL AND @@session.autocommit = 0) THEN
        SET v_msg = CONCAT('mysqlleader: ', p_name, ' needs autocommit on and no open transaction: ',
                           'inside one it could answer from the transaction''s old snapshot ',
                           '(COMMIT first, or turn autocommit on; to fence writes use assert_leader)');
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
    END IF;
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
    DECLARE v_allowed  INT;
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_now      DATETIME(6);
    DECLARE v_wait     BIGINT;
    DECLARE v_renewed  INT DEFAULT 0;
    DECLARE v_access   VARCHAR(80);

    -- 0. Input, inline; the checking procedures only build the message of a bad value.
    IF p_service_id IS NULL OR p_node_id IS NULL OR p_lease_ms IS NULL
       OR CHAR_LENGTH(p_service_id) NOT BETWEEN 1 AND 128
       OR CHAR_LENGTH(p_node_id) NOT BETWEEN 1 AND 128
       OR p_lease_ms NOT BETWEEN 1 AND 86400000 OR p_lease_ms <> TRUNCATE(p_lease_ms, 0) THEN
        CALL leader_election_check_id('service_id', p_service_id);
        CALL leader_election_check_id('node_id', p_node_id);
        CALL leader_election_check_lease(p_lease_ms);
    END IF;
    SET v_sid = CAST(p_service_id AS BINARY), v_nid = CAST(p_node_id AS BINARY),
        v_lease_ms = p_lease_ms, v_access = SUBSTRING_INDEX(USER(), '@', 1);

    -- 1. The renew of a leader: this session won or renewed this seat in its last campaign
    --    (see 6 at the top), so try the renew first, as one guarded write that also checks the
    --    account's access; only when it matches nothing does the call go on to read.
    IF @mysqlleader_seat_term IS NOT NULL AND @mysqlleader_seat_service = v_sid
       AND @mysqlleader_seat_node = v_nid THEN
        BEGIN
            DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
                ROLLBACK;
                SET SESSION innodb_lock_wait_timeout = v_wait;
                SET @mysqlleader_seat_term = NULL;
                RESIGNAL;
            END;
            SET v_term = @mysqlleader_seat_term, v_now = UTC_TIMESTAMP(6),
                v_wait = @@session.innodb_lock_wait_timeout;
            SET SESSION innodb_lock_wait_timeout = 1;
            UPDATE leader_election
               SET lease_ms = v_lease_ms, renewed_at = v_now,
                   lease_expires_at = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND
             WHERE service_id = v_sid AND leader_id = v_nid AND term = v_term
               AND lease_expires_at > v_now
               AND (SELECT IF(COUNT(*) = 0, 1, MAX(v_sid LIKE a.service_pattern))
                      FROM leader_election_access a WHERE a.account = v_access) = 1;
            SET v_renewed = ROW_COUNT();
            SET SESSION innodb_lock_wait_timeout = v_wait;
            COMMIT;
        END;
        IF v_renewed = 1 THEN
            SET v_leader = v_nid, v_expires = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND;
        END IF;
    END IF;

    IF v_renewed = 0 THEN
    -- 2. One plain consistent read of the row, the clock and the account's access to the service.
    SELECT COUNT(*), MAX(leader_id), MAX(term), MAX(lease_expires_at), UTC_TIMESTAMP(6),
           (SELECT IF(COUNT(*) = 0, 1, MAX(v_sid LIKE a.service_pattern))
              FROM leader_election_access a WHERE a.account = v_access)
      INTO v_rows, v_leader, v_term, v_expires, v_now, v_allowed
      FROM leader_election WHERE service_id = v_sid;
    IF v_allowed = 0 THEN
        SET @mysqlleader_seat_term = NULL;
        CALL leader_election_deny(p_service_id);
    END IF;

    -- 3. The caller holds a valid lease: renew it with one guarded write (see 3 at the top).
    IF v_leader = v_nid AND v_expires > v_now THEN
        BEGIN
            DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
                ROLLBACK;
                SET SESSION innodb_lock_wait_timeout = v_wait;
                RESIGNAL;
            END;
            SET v_wait = @@session.innodb_lock_wait_timeout;
            SET SESSION innodb_lock_wait_timeout = 1;
            UPDATE leader_election
               SET lease_ms = v_lease_ms, renewed_at = v_now,
                   lease_expires_at = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND
             WHERE service_id = v_sid AND leader_id = v_nid AND term = v_term
               AND lease_expires_at > v_now;
            SET v_renewed = ROW_COUNT();
            SET SESSION innodb_lock_wait_timeout = v_wait;
            -- Ends the write's transaction also when the caller had one open (as V6's START
            -- TRANSACTION did): a renew never waits for the caller's COMMIT.
            COMMIT;
        END;
        IF v_renewed = 1 THEN
            SET v_expires = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND;
        END IF;
    END IF;

    -- 4. The seat is vacant or expired, or the renew's guard matched nothing: decide under the
    --    row lock, as V6 did. A follower of a valid lease never comes here.
    IF v_renewed = 0 AND NOT (v_leader IS NOT NULL AND v_leader <> v_nid AND v_expires > v_now) THEN
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
            -- 4a. The first campaign of a service creates its row in a statement of its own, so
            --     that no transaction below holds an insert lock while it waits for the row lock.
            IF v_rows = 0 THEN
                INSERT IGNORE INTO leader_election (service_id, term) VALUES (v_sid, 0);
            END IF;
            -- 4b. Decide under the row lock (waited for at most 1 s), with the clock read after
            --     the lock is granted.
            SET SESSION innodb_lock_wait_timeout = 1;
            START TRANSACTION;
            SELECT leader_id, term, lease_expires_at INTO v_leader, v_term, v_expires
              FROM leader_election WHERE service_id = v_sid FOR UPDATE;
            SET SESSION innodb_lock_wait_timeout = v_wait;
            SET v_now = UTC_TIMESTAMP(6);
            IF v_leader = v_nid AND v_expires > v_now THEN
                -- Renew our own valid lease: the term stays.
                SET v_expires = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND;
                UPDATE leader_election
                   SET lease_ms = v_lease_ms, renewed_at = v_now, lease_expires_at = v_expires
                 WHERE service_id = v_sid;
            ELSEIF v_leader IS NULL OR v_expires <= v_now THEN
                -- Take the vacant or expired seat: close the expired term (the server's
                -- decision: no ended_by), open the next one.
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
            -- Otherwise another node took the seat meanwhile: nothing to write.
            COMMIT;
        END;
    END IF;
    END IF;

    -- 5. Remember the seat this session holds now (or that it holds none), for step 1 next time.
    IF v_leader = v_nid AND v_expires > v_now THEN
        SET @mysqlleader_seat_service = v_sid, @mysqlleader_seat_node = v_nid, @mysqlleader_seat_term = v_term;
    ELSEIF @mysqlleader_seat_term IS NOT NULL THEN
        SET @mysqlleader_seat_term = NULL;
    END IF;

    SELECT IF(v_leader = v_nid, 1, 0) AS is_leader,
           CAST(v_leader AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_term AS term,
           TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000 AS lease_remaining_ms;
END;

-- am_i_leader: a read without locks. is_leader is 1 only while the node holds an unexpired lease.
-- Refused inside an open transaction (see 5 at the top).
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
    DECLARE v_allowed INT;
    DECLARE v_leader  VARBINARY(512);
    DECLARE v_term    BIGINT UNSIGNED;
    DECLARE v_expires DATETIME(6);
    DECLARE v_now     DATETIME(6);

    IF p_service_id IS NULL OR p_node_id IS NULL
       OR CHAR_LENGTH(p_service_id) NOT BETWEEN 1 AND 128
       OR CHAR_LENGTH(p_node_id) NOT BETWEEN 1 AND 128 THEN
        CALL leader_election_check_id('service_id', p_service_id);
        CALL leader_election_check_id('node_id', p_node_id);
    END IF;
    SET v_sid = CAST(p_service_id AS BINARY);
    CALL leader_election_refuse_snapshot('am_i_leader');

    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), UTC_TIMESTAMP(6),
           (SELECT IF(COUNT(*) = 0, 1, MAX(v_sid LIKE a.service_pattern))
              FROM leader_election_access a WHERE a.account = SUBSTRING_INDEX(USER(), '@', 1))
      INTO v_leader, v_term, v_expires, v_now, v_allowed
      FROM leader_election WHERE service_id = v_sid;
    IF v_allowed = 0 THEN
        CALL leader_election_deny(p_service_id);
    END IF;
    IF NOT (v_leader IS NOT NULL AND v_expires > v_now) THEN
        SET v_leader = NULL;
    END IF;

    SELECT IF(v_leader = CAST(p_node_id AS BINARY), 1, 0) AS is_leader,
           v_term AS term,
           IF(v_leader IS NULL, 0, TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000)
               AS lease_remaining_ms;
END;

-- current_leader: a read without locks, refused inside an open transaction (as am_i_leader).
-- Result: leader_id (NULL without a current leader), term, lease_remaining_ms.
DROP PROCEDURE IF EXISTS current_leader;
CREATE PROCEDURE current_leader(IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: who holds a valid lease, at which term (a read)'
BEGIN
    DECLARE v_sid     VARBINARY(512);
    DECLARE v_allowed INT;
    DECLARE v_leader  VARBINARY(512);
    DECLARE v_term    BIGINT UNSIGNED;
    DECLARE v_expires DATETIME(6);
    DECLARE v_now     DATETIME(6);

    IF p_service_id IS NULL OR CHAR_LENGTH(p_service_id) NOT BETWEEN 1 AND 128 THEN
        CALL leader_election_check_id('service_id', p_service_id);
    END IF;
    SET v_sid = CAST(p_service_id AS BINARY);
    CALL leader_election_refuse_snapshot('current_leader');

    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), UTC_TIMESTAMP(6),
           (SELECT IF(COUNT(*) = 0, 1, MAX(v_sid LIKE a.service_pattern))
              FROM leader_election_access a WHERE a.account = SUBSTRING_INDEX(USER(), '@', 1))
      INTO v_leader, v_term, v_expires, v_now, v_allowed
      FROM leader_election WHERE service_id = v_sid;
    IF v_allowed = 0 THEN
        CALL leader_election_deny(p_service_id);
    END IF;
    IF NOT (v_leader IS NOT NULL AND v_expires > v_now) THEN
        SET v_leader = NULL;
    END IF;

    SELECT CAST(v_leader AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_term AS term,
           IF(v_leader IS NULL, 0, TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000)
               AS lease_remaining_ms;
END;
