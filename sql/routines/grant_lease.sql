-- grant_lease: a new node lease for a node session (sql/V15__node_leases.sql): valid for
-- p_lease_ms from now, for node p_node_id, and only for this session's account (USER() before @),
-- the one account that may renew it (renew_lease), take seats onto it (take_seats) or release
-- seats from it. A session asks for one before its first takeover, and again whenever its lease
-- has ended. It also removes, for this account, up to 100 leases that ended and on which no seat
-- hangs (the leases of sessions gone), so that the table keeps about one row per live session.
-- Result: lease_id (never used again for another lease), lease_remaining_ms.
-- A transaction of its own, as campaign.
CREATE PROCEDURE grant_lease(
    IN p_node_id  MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_lease_ms DECIMAL(65,30))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: a new node lease that the seats of one node session hang on'
BEGIN
    DECLARE v_nid     VARBINARY(512);
    DECLARE v_account VARBINARY(400);
    DECLARE v_now     DATETIME(6);
    DECLARE v_id      BIGINT UNSIGNED;
    DECLARE v_own     BOOLEAN DEFAULT FALSE;
    DECLARE v_wait    BIGINT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
            IF v_wait IS NOT NULL THEN
                SET SESSION innodb_lock_wait_timeout = v_wait;
            END IF;
        END IF;
        RESIGNAL;
    END;

    -- @include own_transaction grant_lease

    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_lease(p_lease_ms);
    SET v_nid = CAST(p_node_id AS BINARY),
        v_account = CAST(CONVERT(LEFT(USER(), CHAR_LENGTH(USER()) - CHAR_LENGTH(SUBSTRING_INDEX(USER(), '@', -1)) - 1)
                                 USING utf8mb4) AS BINARY);
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    CALL leader_election_begin(FALSE);
    SET v_wait = @@session.innodb_lock_wait_timeout;
    SET SESSION innodb_lock_wait_timeout = 1;
    SET v_now = UTC_TIMESTAMP(6);
    -- The lease's id comes from the table's counter alone. A session may SET insert_id = N, and
    -- the next INSERT takes N as its AUTO_INCREMENT value and moves the counter past it: one
    -- grant with N = 2^64 - 3 ran the counter out for every account (1467 on each later grant,
    -- and InnoDB never lowers a counter; MariaDB 10.11, 2026-11-30). Such a grant is refused, as
    -- is one that got id 0 (MySQL takes SET insert_id = 0 as a value too, and reads it as 0).
    IF @@session.insert_id <> 0 THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31000, MESSAGE_TEXT =
            'mysqlleader: insert_id is set on this session (SET insert_id): a lease''s id comes from its table alone';
    END IF;
    INSERT INTO leader_election_lease (node_id, account, lease_ms, granted_at, renewed_at, expires_at)
    VALUES (v_nid, v_account, p_lease_ms, v_now, v_now, v_now + INTERVAL (p_lease_ms * 1000) MICROSECOND);
    SET v_id = LAST_INSERT_ID();
    IF v_id = 0 THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31000, MESSAGE_TEXT =
            'mysqlleader: insert_id is set on this session (SET insert_id): a lease''s id comes from its table alone';
    END IF;
    COMMIT;
    -- The account's ended leases that no seat hangs on, by the owner index, each deleted only if
    -- no seat hangs on it then (a plain read of the seats' lease index); an error here (a lock
    -- wait) gives up the clean-up, never the grant.
    BEGIN
        DECLARE CONTINUE HANDLER FOR SQLEXCEPTION ROLLBACK;
        CALL leader_election_begin(FALSE);
        DELETE FROM leader_election_lease
         WHERE account = v_account AND expires_at < v_now
           AND NOT EXISTS (SELECT 1 FROM leader_election e WHERE e.lease_id = leader_election_lease.lease_id)
         LIMIT 100;
        COMMIT;
    END;
    SET SESSION innodb_lock_wait_timeout = v_wait;
    SELECT v_id AS lease_id, p_lease_ms DIV 1 AS lease_remaining_ms;
END;
