-- mysqlleader V8: per-service access at no cost on the hot path, from a copy kept on each seat.
--
-- V6 and V7 read leader_election_access on every call, in the same statement as the election
-- row. Opening and reading that second table cost every account, limited or not, about 35 us of
-- a 250 us renew and 45-70 us of a follower's check (docs/benchmarks.md). V8 keeps what the
-- check decides on the election row itself, which every call reads anyway:
--
-- 1. The copy. leader_election.access_denied lists the limited accounts that may NOT act on the
--    row's service: every account with at least one row in leader_election_access and no pattern
--    that matches the service. Each name is its utf8mb4 bytes between two 0x00 bytes (a user
--    name never holds 0x00). '' means nobody is refused; NULL means "no copy": the call reads
--    leader_election_access as V7 did (a list over 1024 bytes, and the empty user name, also take
--    that path). A call refuses when its account's name, so wrapped, occurs in the copy.
-- 2. Account names are compared exactly, byte for byte, as the server compares user names (V6
--    and V7 compared them with the table's collation, so a row for 'Bob' also limited 'bob').
-- 3. Who writes the copy. leader_election_flush_access() recomputes it for every seat; the first
--    campaign or force of a service computes it when it creates the seat. Changes of
--    leader_election_access take effect on the seats when they are flushed, as hand edits of the
--    server's own grant tables take effect at FLUSH PRIVILEGES: `mysqlleader grant --service`
--    flushes after its changes; after editing the table by hand, CALL leader_election_flush_access().
--    (A trigger would flush by itself, but creating one needs SUPER wherever the binary log is
--    on, which managed servers do not give.)
-- 4. Why a flush and the creation of a seat cannot miss each other. Both first write the single
--    row of leader_election_access_flush (the flush in a transaction of its own, a creation in the
--    transaction that inserts the seat), and a creation computes its copy with a locking read of
--    leader_election_access, which always sees the latest committed rows. So either the creation
--    commits before the flush takes that row (and the flush, which lists the seats after, finds
--    the new seat and recomputes it), or it takes the row after the flush committed, that is after
--    the change of access committed (and its own copy already has it). On Galera the two writes of
--    that row certify against each other: one of two concurrent ones fails with a deadlock error
--    (1213, transient) and is tried again.
-- 5. A flush writes each seat in a transaction of its own, waiting at most 1 s for the seat's
--    lock (tried again up to 10 times on a lock wait timeout or a deadlock, as a Galera
--    certification conflict with a renew reports itself), and only where the copy changes.
--
-- The hot paths (campaign, am_i_leader, current_leader, assert_leader) check the copy inside the
-- statement that reads or writes the seat; force_leader, reelect and resign call
-- leader_election_check_access, which reads the seat's copy first. Results, messages and errors
-- are unchanged: a refusal is SQLSTATE 45002 'mysqlleader: access denied: ...' before anything is
-- returned or written.
--
-- Every statement here can run again safely (DROP + CREATE, as in V6 and V7).

CREATE TABLE IF NOT EXISTS leader_election_access_flush (
    id            TINYINT UNSIGNED NOT NULL COMMENT 'always 1: the row flushes and seat creations write',
    flushes       BIGINT UNSIGNED  NOT NULL DEFAULT 0 COMMENT 'how many flushes began',
    flushed_at    DATETIME(6)      NULL COMMENT 'UTC, when the last flush began',
    flushed_by    VARCHAR(384)     NULL COMMENT 'USER() of the session that began the last flush',
    seats_created BIGINT UNSIGNED  NOT NULL DEFAULT 0 COMMENT 'seats created with a copy of access',
    PRIMARY KEY (id)
) ENGINE=InnoDB COMMENT='mysqlleader: orders flushes of per-service access against new seats';

INSERT IGNORE INTO leader_election_access_flush (id) VALUES (1);

-- Adds leader_election.access_denied unless it is there already (MySQL has no ADD COLUMN IF NOT
-- EXISTS). Internal; dropped again right after the call.
DROP PROCEDURE IF EXISTS leader_election_v8_add_copy;
CREATE PROCEDURE leader_election_v8_add_copy()
    MODIFIES SQL DATA
    SQL SECURITY INVOKER
BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.COLUMNS
                    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'leader_election'
                      AND COLUMN_NAME = 'access_denied') THEN
        ALTER TABLE leader_election
          ADD COLUMN access_denied VARBINARY(1024) NULL DEFAULT NULL
              COMMENT 'limited accounts refused on this service, each 0x00 name 0x00; NULL: read leader_election_access';
    END IF;
END;
CALL leader_election_v8_add_copy();
DROP PROCEDURE IF EXISTS leader_election_v8_add_copy;

-- The copy for one service (see 1 at the top): the limited accounts none of whose patterns
-- match p_sid, each 0x00 name 0x00; '' when none; NULL when the list would exceed 1024 bytes.
-- Reads leader_election_access with a locking read (the latest committed rows, see 4).
-- Internal.
DROP PROCEDURE IF EXISTS leader_election_access_copy;
CREATE PROCEDURE leader_election_access_copy(IN p_sid VARBINARY(512), OUT p_denied VARBINARY(1024))
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: the accounts refused on a service, for its seat'
BEGIN
    DECLARE v_list  LONGBLOB;
    DECLARE v_count BIGINT;
    DECLARE v_max   BIGINT;
    DECLARE v_cut   INT DEFAULT 0;
    -- 1260: the list was cut at group_concat_max_len, so it is over 1024 bytes: no copy.
    DECLARE CONTINUE HANDLER FOR 1260 SET v_cut = 1;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        SET SESSION group_concat_max_len = v_max;
        RESIGNAL;
    END;
    -- The caller's session decides how long GROUP_CONCAT may grow; 1025 is enough to tell a
    -- list over 1024 bytes, whatever the caller set (a longer one is cut: 1260, or a warning).
    SET v_max = @@session.group_concat_max_len;
    SET SESSION group_concat_max_len = 1025;
    SELECT COUNT(*), GROUP_CONCAT(DISTINCT CONCAT(0x00, CAST(CONVERT(a.account USING utf8mb4) AS BINARY), 0x00)
                                  SEPARATOR '')
      INTO v_count, v_list
      FROM leader_election_access a
     WHERE NOT EXISTS (SELECT 1 FROM leader_election_access b
                        WHERE b.account = a.account AND BINARY b.account = BINARY a.account
                          AND p_sid LIKE b.service_pattern)
      LOCK IN SHARE MODE;
    SET SESSION group_concat_max_len = v_max;
    SET p_denied = IF(v_cut = 1, NULL, IF(v_count = 0, '', IF(LENGTH(v_list) > 1024, NULL, v_list)));
END;

-- Raises 45002 unless the session's account may act on the service (see 1 at the top): from the
-- seat's copy when it has one, else from leader_election_access itself. Internal; the path of
-- calls that are not hot (force_leader, reelect, resign), and of hot calls on a seat without a
-- copy.
DROP PROCEDURE IF EXISTS leader_election_check_access;
CREATE PROCEDURE leader_election_check_access(IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: 45002 unless this account may act on the service'
BEGIN
    DECLARE v_sid     VARBINARY(512);
    DECLARE v_account VARCHAR(80);
    DECLARE v_name    VARBINARY(400);
    DECLARE v_denied  VARBINARY(1024);
    DECLARE v_allowed INT;

    SET v_sid = CAST(p_service_id AS BINARY), v_account = SUBSTRING_INDEX(USER(), '@', 1);
    SET v_name = CAST(CONVERT(v_account USING utf8mb4) AS BINARY);
    SELECT MAX(access_denied) INTO v_denied FROM leader_election WHERE service_id = v_sid;
    IF v_denied IS NOT NULL AND v_name <> '' THEN
        SET v_allowed = (LOCATE(CONCAT(0x00, v_name, 0x00), v_denied) = 0);
    ELSE
        SELECT IF(COUNT(*) = 0, 1, MAX(v_sid LIKE a.service_pattern)) INTO v_allowed
          FROM leader_election_access a
         WHERE a.account = v_account AND CAST(CONVERT(a.account USING utf8mb4) AS BINARY) = v_name;
    END IF;
    IF v_allowed = 0 THEN
        CALL leader_election_deny(p_service_id);
    END IF;
END;

-- Creates the seat of a new service with its copy of access (see 4 at the top), in a transaction
-- of its own that waits at most 1 s for a lock. Does nothing more when the seat exists. Internal.
DROP PROCEDURE IF EXISTS leader_election_create_seat;
CREATE PROCEDURE leader_election_create_seat(IN p_sid VARBINARY(512))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: create a service''s seat with its copy of access'
BEGIN
    DECLARE v_denied VARBINARY(1024);
    DECLARE v_wait   BIGINT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        ROLLBACK;
        SET SESSION innodb_lock_wait_timeout = v_wait;
        RESIGNAL;
    END;
    SET v_wait = @@session.innodb_lock_wait_timeout;
    SET SESSION innodb_lock_wait_timeout = 1;
    START TRANSACTION;
    INSERT INTO leader_election_access_flush (id, seats_created) VALUES (1, 1)
        ON DUPLICATE KEY UPDATE seats_created = seats_created + 1;
    CALL leader_election_access_copy(p_sid, v_denied);
    INSERT IGNORE INTO leader_election (service_id, term, access_denied) VALUES (p_sid, 0, v_denied);
    COMMIT;
    SET SESSION innodb_lock_wait_timeout = v_wait;
END;

-- The work of leader_election_flush_access (below), without a result set, so that this
-- migration can run it. OUT: how many seats there are, how many copies it rewrote. Internal.
DROP PROCEDURE IF EXISTS leader_election_flush_copies;
CREATE PROCEDURE leader_election_flush_copies(OUT p_seats BIGINT, OUT p_changed BIGINT)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: recompute every seat''s copy of access'
BEGIN
    DECLARE v_done    INT DEFAULT 0;
    DECLARE v_sid     VARBINARY(512);
    DECLARE v_denied  VARBINARY(1024);
    DECLARE v_tries   INT;
    DECLARE v_wait    BIGINT;
    DECLARE v_seats   BIGINT DEFAULT 0;
    DECLARE v_changed BIGINT DEFAULT 0;
    DECLARE v_cursor CURSOR FOR SELECT service_id FROM leader_election;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        ROLLBACK;
        SET SESSION innodb_lock_wait_timeout = v_wait;
        RESIGNAL;
    END;

    SET v_wait = @@session.innodb_lock_wait_timeout;
    -- 1. Take the flush row (after any seat being created commits), in a transaction of its own.
    SET v_tries = 0;
    flush_row: LOOP
        BEGIN
            DECLARE EXIT HANDLER FOR 1205, 1213 BEGIN
                ROLLBACK;
                SET v_tries = v_tries + 1;
                IF v_tries >= 10 THEN
                    SET SESSION innodb_lock_wait_timeout = v_wait;
                    RESIGNAL;
                END IF;
            END;
            SET SESSION innodb_lock_wait_timeout = 1;
            START TRANSACTION;
            INSERT INTO leader_election_access_flush (id, flushes, flushed_at, flushed_by)
            VALUES (1, 1, UTC_TIMESTAMP(6), USER())
                ON DUPLICATE KEY UPDATE flushes = flushes + 1, flushed_at = UTC_TIMESTAMP(6),
                                        flushed_by = USER();
            COMMIT;
            LEAVE flush_row;
        END;
    END LOOP flush_row;

    -- 2. Every seat that exists now, each in a transaction of its own.
    OPEN v_cursor;
    seats: LOOP
        FETCH v_cursor INTO v_sid;
        IF v_done = 1 THEN
            LEAVE seats;
        END IF;
        SET v_seats = v_seats + 1, v_tries = 0;
        seat: LOOP
            BEGIN
                DECLARE EXIT HANDLER FOR 1205, 1213 BEGIN
                    ROLLBACK;
                    SET v_tries = v_tries + 1;
                    IF v_tries >= 10 THEN
                        SET SESSION innodb_lock_wait_timeout = v_wait;
                        RESIGNAL;
                    END IF;
                END;
                START TRANSACTION;
                CALL leader_election_access_copy(v_sid, v_denied);
                UPDATE leader_election SET access_denied = v_denied
                 WHERE service_id = v_sid AND NOT (access_denied <=> v_denied);
                SET v_changed = v_changed + ROW_COUNT();
                COMMIT;
                LEAVE seat;
            END;
        END LOOP seat;
    END LOOP seats;
    CLOSE v_cursor;
    SET SESSION innodb_lock_wait_timeout = v_wait;
    SET p_seats = v_seats, p_changed = v_changed;
END;

-- leader_election_flush_access: recompute every seat's copy of per-service access from
-- leader_election_access (see 3-5 at the top). Run it after changing that table by hand;
-- `mysqlleader grant --service` runs it. It commits any transaction the caller has open first,
-- as START TRANSACTION does. Result: seats (how many seats there are), changed (how many copies
-- it rewrote).
DROP PROCEDURE IF EXISTS leader_election_flush_access;
CREATE PROCEDURE leader_election_flush_access()
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: apply leader_election_access to every seat (after a change by hand)'
BEGIN
    DECLARE v_seats   BIGINT;
    DECLARE v_changed BIGINT;
    CALL leader_election_flush_copies(v_seats, v_changed);
    SELECT v_seats AS seats, v_changed AS changed;
END;

-- Seats that exist now get their copies (until then they read leader_election_access).
CALL leader_election_flush_copies(@mysqlleader_v8_seats, @mysqlleader_v8_changed);

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
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_now      DATETIME(6);
    DECLARE v_wait     BIGINT;
    DECLARE v_renewed  INT DEFAULT 0;
    DECLARE v_access   VARCHAR(80);
    DECLARE v_needle   VARBINARY(402);
    DECLARE v_denied   VARBINARY(1024);

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
    -- The account as the seat's copy of access lists it (see 1 at the top); NULL for the empty
    -- user name, which the copy cannot tell apart: such a call reads leader_election_access.
    SET v_needle = CONCAT(0x00, CAST(CONVERT(v_access USING utf8mb4) AS BINARY), 0x00);
    IF v_needle = 0x0000 THEN
        SET v_needle = NULL;
    END IF;

    -- 1. The renew of a leader: this session won or renewed this seat in its last campaign
    --    (see 6 in V7), so try the renew first, as one guarded write that also checks the
    --    account against the seat's copy of access; only when it matches nothing (also when the
    --    seat has no copy) does the call go on to read.
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
               AND LOCATE(v_needle, access_denied) = 0;
            SET v_renewed = ROW_COUNT();
            SET SESSION innodb_lock_wait_timeout = v_wait;
            COMMIT;
        END;
        IF v_renewed = 1 THEN
            SET v_leader = v_nid, v_expires = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND;
        END IF;
    END IF;

    IF v_renewed = 0 THEN
    -- 2. One plain consistent read of the row, the clock and the seat's copy of access; a seat
    --    without a copy (or no seat yet) has the account checked against leader_election_access.
    SELECT COUNT(*), MAX(leader_id), MAX(term), MAX(lease_expires_at), UTC_TIMESTAMP(6),
           MAX(access_denied)
      INTO v_rows, v_leader, v_term, v_expires, v_now, v_denied
      FROM leader_election WHERE service_id = v_sid;
    IF v_denied IS NULL OR v_needle IS NULL THEN
        SET @mysqlleader_seat_term = NULL;
        CALL leader_election_check_access(p_service_id);
    ELSEIF LOCATE(v_needle, v_denied) > 0 THEN
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
            -- 4a. The first campaign of a service creates its row, with its copy of access, in a
            --     transaction of its own, so that no transaction below holds an insert lock while
            --     it waits for the row lock.
            IF v_rows = 0 THEN
                CALL leader_election_create_seat(v_sid);
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
    DECLARE v_needle  VARBINARY(402);
    DECLARE v_denied  VARBINARY(1024);
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
           MAX(access_denied)
      INTO v_leader, v_term, v_expires, v_now, v_denied
      FROM leader_election WHERE service_id = v_sid;
    -- Access from the seat's copy (see 1 at the top); without one, from leader_election_access.
    SET v_needle = CONCAT(0x00, CAST(CONVERT(SUBSTRING_INDEX(USER(), '@', 1) USING utf8mb4) AS BINARY), 0x00);
    IF v_denied IS NULL OR v_needle = 0x0000 THEN
        CALL leader_election_check_access(p_service_id);
    ELSEIF LOCATE(v_needle, v_denied) > 0 THEN
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
    DECLARE v_needle  VARBINARY(402);
    DECLARE v_denied  VARBINARY(1024);
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
           MAX(access_denied)
      INTO v_leader, v_term, v_expires, v_now, v_denied
      FROM leader_election WHERE service_id = v_sid;
    -- Access from the seat's copy (see 1 at the top); without one, from leader_election_access.
    SET v_needle = CONCAT(0x00, CAST(CONVERT(SUBSTRING_INDEX(USER(), '@', 1) USING utf8mb4) AS BINARY), 0x00);
    IF v_denied IS NULL OR v_needle = 0x0000 THEN
        CALL leader_election_check_access(p_service_id);
    ELSEIF LOCATE(v_needle, v_denied) > 0 THEN
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
    CALL leader_election_check_access(p_service_id);

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
            CALL leader_election_create_seat(v_sid);
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
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_previous VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_now      DATETIME(6);
    DECLARE v_wait     BIGINT;

    CALL leader_election_check_id('service_id', p_service_id);
    SET v_sid = CAST(p_service_id AS BINARY);
    CALL leader_election_check_access(p_service_id);

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
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_now      DATETIME(6);
    DECLARE v_resigned INT DEFAULT 0;
    DECLARE v_wait     BIGINT;

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    SET v_sid = CAST(p_service_id AS BINARY), v_nid = CAST(p_node_id AS BINARY);
    CALL leader_election_check_access(p_service_id);

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
    DECLARE v_leader  VARBINARY(512);
    DECLARE v_term    BIGINT UNSIGNED;
    DECLARE v_expires DATETIME(6);
    DECLARE v_now     DATETIME(6);
    DECLARE v_want    BIGINT UNSIGNED;
    DECLARE v_left_ms BIGINT;
    DECLARE v_in_tx   BOOLEAN;
    DECLARE v_msg     VARCHAR(255);
    DECLARE v_needle  VARBINARY(402);
    DECLARE v_denied  VARBINARY(1024);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_number('term', p_term, 0, 18446744073709551615);
    SET v_want = p_term, v_sid = CAST(p_service_id AS BINARY);
    -- The seat, share-locked until the caller's transaction ends, and its copy of access (see 1
    -- at the top): the refusal of access comes first, as in V6, then the other checks.
    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), MAX(access_denied)
      INTO v_leader, v_term, v_expires, v_denied
      FROM leader_election WHERE service_id = v_sid
      LOCK IN SHARE MODE;
    SET v_needle = CONCAT(0x00, CAST(CONVERT(SUBSTRING_INDEX(USER(), '@', 1) USING utf8mb4) AS BINARY), 0x00);
    IF v_denied IS NULL OR v_needle = 0x0000 THEN
        CALL leader_election_check_access(p_service_id);
    ELSEIF LOCATE(v_needle, v_denied) > 0 THEN
        CALL leader_election_deny(p_service_id);
    END IF;
    -- A fence outside a transaction fences nothing: refuse it where the server can tell. With
    -- autocommit off a transaction is always open (it begins with the read above); with it on,
    -- only @@in_transaction (MariaDB) tells whether START TRANSACTION was sent.
    CALL leader_election_probe_in_tx();
    SET v_in_tx = (@@session.autocommit = 0 OR @mysqlleader_in_tx = 1);
    IF @@session.autocommit = 1 AND @mysqlleader_in_tx = 0 THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
            'mysqlleader: assert_leader needs an open transaction (START TRANSACTION first): with autocommit on it would fence nothing';
    END IF;

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
