-- assert_leader: the fencing guard, to be called inside the caller's own open transaction
-- before its writes. It succeeds only when the node holds an unexpired lease at exactly this
-- term, and it share-locks the term's own row (its history row, open while the term lasts)
-- until the caller's transaction ends. Every change that ends a term must change that row (the
-- trigger closes it: sql/triggers/leader_election_record_term.sql), so no takeover, resign,
-- handover or expiry can commit in between, and no later term can begin; on Galera and Group
-- Replication it writes that row instead (V4), so that a takeover on another member conflicts
-- with it. The seat itself is read without a lock: the leader's own renews, which change the
-- seat and never the term's row, go on while a fenced transaction is open, however long it lasts.
-- The lease is checked on the seat as the caller's transaction reads it: at READ COMMITTED, as
-- it is now; at REPEATABLE READ, as of the transaction's first read, so call it first in the
-- transaction (a later call, after the lease has run out by that reading, is refused, although
-- the term's lock is still held).
-- Outside a transaction it raises 45000 where the server can tell (MariaDB), since it would
-- fence nothing. On success it bounds how long this session's transaction may then stay idle
-- (MariaDB: idle_transaction_timeout, sql/V6__access_audit_bounded_waits.sql, note 4).
-- Otherwise SQLSTATE 45001: error number 31004 when an operator's handover ended the term (the
-- seat is vacant at that term and names this node as the one handed over from), 31001 for any
-- other cause (another node leads, the lease ran out, the term has ended). It never starts or
-- commits a transaction; but when it fails it rolls
-- the caller's transaction back before raising, so that writes made under a stale term cannot
-- commit even if the caller ignores the error, and no lock is left held. Inside an XA
-- transaction it is refused (45000) before it reads anything: XA PREPARE releases share locks,
-- so it could not fence; the server refuses a ROLLBACK there, so the caller ends it (XA END,
-- XA ROLLBACK). After a ROLLBACK TO SAVEPOINT taken before it, the share lock may be gone too:
-- call it again after the last such rollback, before COMMIT (README).
-- Result: is_leader (1), term, lease_remaining_ms (> 0).
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
    DECLARE v_lease_id BIGINT UNSIGNED;
    DECLARE v_now     DATETIME(6);
    DECLARE v_want    BIGINT UNSIGNED;
    DECLARE v_left_ms BIGINT;
    DECLARE v_in_tx   BOOLEAN;
    DECLARE v_msg     VARCHAR(255);
    DECLARE v_xa      BOOLEAN DEFAULT FALSE;
    DECLARE v_from    VARBINARY(512);
    DECLARE v_open    INT;
    -- Inside an XA transaction ROLLBACK itself fails (1399): the refusal below is then the error.
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF NOT v_xa THEN
            ROLLBACK;
        END IF;
        RESIGNAL;
    END;

    -- A fence measured on a clock the session set (SET timestamp) would pass a stale leader:
    -- refused, as every other routine refuses it (sql/fragments/server_clock.sql).
    -- @include server_clock
    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_number('term', p_term, 0, 18446744073709551615);
    SET v_want = p_term, v_sid = CAST(p_service_id AS BINARY);
    -- No fence inside an XA transaction: XA PREPARE releases the share lock below, so a
    -- takeover could commit before the prepared writes of the old term (the README says so).
    CALL leader_election_probe_xa();
    IF @mysqlleader_xa = 1 THEN
        SET v_xa = TRUE;
        CALL leader_election_refuse_xa('assert_leader');
    END IF;
    -- Access from the account alone, before the seat is read (sql/V14__access_by_account.sql):
    -- this call runs in the caller's transaction, whose isolation level the caller chose; under
    -- SERIALIZABLE the read of the account's row share-locks that one row (its own), never a seat.
    CALL leader_election_check_access(p_service_id);
    -- 1. The seat, as the caller's transaction reads it: a plain read, no lock.
    SELECT MAX(leader_id), COALESCE(MAX(term), 0), MAX(lease_expires_at), MAX(handover_from), MAX(lease_id)
      INTO v_leader, v_term, v_expires, v_from, v_lease_id
      FROM leader_election WHERE service_id = v_sid;
    -- A seat that hangs on a node lease: its lease ends at the later of its own end and the
    -- lease's (sql/views/leader_election_seats.sql, read here without the view: opening a view
    -- cost about 0.1 ms a statement on both servers, on this hot path). One key lookup, only then.
    IF v_lease_id IS NOT NULL THEN
        SELECT GREATEST(v_expires, COALESCE(MAX(expires_at), v_expires)) INTO v_expires
          FROM leader_election_lease WHERE lease_id = v_lease_id AND node_id = v_leader;
    END IF;
    -- A fence outside a transaction fences nothing: refuse it where the server can tell. With
    -- autocommit off a transaction is always open (it begins with the read above); with it on,
    -- only @@in_transaction (MariaDB) tells whether START TRANSACTION was sent.
    CALL leader_election_probe_in_tx();
    SET v_in_tx = (@@session.autocommit = 0 OR @mysqlleader_in_tx = 1);
    IF @@session.autocommit = 1 AND @mysqlleader_in_tx = 0 THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31003, MESSAGE_TEXT =
            'mysqlleader: assert_leader needs an open transaction (START TRANSACTION first): with autocommit on it would fence nothing';
    END IF;

    SET v_now = UTC_TIMESTAMP(6);
    -- Valid means at least 1 ms left, so that lease_remaining_ms is always > 0 on success.
    IF NOT COALESCE(v_leader = CAST(p_node_id AS BINARY) AND v_term = v_want
                    AND v_expires >= v_now + INTERVAL 1000 MICROSECOND, FALSE) THEN
        -- An operator's handover vacated the seat at this very term, away from this node: the
        -- elector reports it as such (handed_over), and acknowledges it at its next call.
        IF v_leader IS NULL AND v_term = v_want AND v_from = CAST(p_node_id AS BINARY) THEN
            SET v_msg = CONCAT('mysqlleader: not the leader at term ', v_want,
                               ' (current term ', v_term, '): the term was handed over to another node');
            SIGNAL SQLSTATE '45001' SET MYSQL_ERRNO = 31004, MESSAGE_TEXT = v_msg;
        END IF;
        SET v_msg = CONCAT('mysqlleader: not the leader at term ', v_want,
                           ' (current term ', v_term, ')');
        SIGNAL SQLSTATE '45001' SET MYSQL_ERRNO = 31001, MESSAGE_TEXT = v_msg;
    END IF;

    -- 2. The term's lock: its history row, read as it is now (a locking read, whatever the
    --    transaction's snapshot) and held until the caller's transaction ends. It must still be
    --    open and name this node. No row, no fence: a takeover would not wait for this
    --    transaction (since V13 every term has its row; a term taken before it by a call cut
    --    short may not): refuse (the leader steps down, and its next term has its row).
    IF @mysqlleader_wsrep_on IS NULL THEN
        CALL leader_election_probe_wsrep();
    END IF;
    IF @mysqlleader_wsrep_on = 1 THEN
        -- Galera, Group Replication: a write, so that the term's row is in this transaction's
        -- write set, and a takeover through another member conflicts with it (V4).
        UPDATE leader_election_history SET fence_checks = fence_checks + 1
         WHERE service_id = v_sid AND term = v_term AND ended_at IS NULL
           AND leader_id = CAST(p_node_id AS BINARY);
        SET v_open = ROW_COUNT();
    ELSE
        SELECT COUNT(*) INTO v_open FROM leader_election_history
         WHERE service_id = v_sid AND term = v_term AND ended_at IS NULL
           AND leader_id = CAST(p_node_id AS BINARY)
          LOCK IN SHARE MODE;
    END IF;
    IF v_open = 0 THEN
        SET v_msg = CONCAT('mysqlleader: not the leader at term ', v_want, ' (current term ', v_term,
                           '): the term has ended, or its history row is missing');
        SIGNAL SQLSTATE '45001' SET MYSQL_ERRNO = 31001, MESSAGE_TEXT = v_msg;
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
