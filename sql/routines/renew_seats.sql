-- renew_seats: one call for many seats of one node (issue "Sessions"). Renews, in one
-- statement, the lease of every seat in p_service_ids (a JSON array of service ids) that
-- p_node_id holds with a valid lease, each at its own term (kept: a renew never raises a term),
-- writing no history (as campaign's renew); and tells, for the other listed seats that another
-- node leads with a valid lease, who leads them, so that a follower of many services looks at
-- them all in one call. A service outside the account's patterns is left out before any seat
-- is read (sql/V14__access_by_account.sql), like a vacant, reserved or expired seat, or one of
-- this node's that could not be renewed; the caller sends campaign for each seat missing from
-- the result, which decides it as always. A list that is not one of distinct ids is refused
-- (leader_election_check_ids).
-- Result: one row per renewed or reported seat (none when there is none), in the order of
-- service_id: service_id, leader_id, term, lease_remaining_ms (measured on the database's clock
-- from the renew), is_leader (1: renewed for p_node_id; 0: another node leads it).
-- A transaction of its own, as campaign: what the caller left open is committed first (inside
-- an XA transaction the call is refused before it reads anything), and every way out ends the
-- call's own transaction. The renew never waits for a seat another transaction has locked (it
-- leaves that seat out); the report is a plain read after its COMMIT, in a read-only transaction: it
-- locks nothing.
CREATE PROCEDURE renew_seats(
    IN p_node_id     MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_lease_ms    DECIMAL(65,30),
    IN p_service_ids LONGTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: renew many seats of one node in one statement, and tell who leads the others'
BEGIN
    DECLARE v_nid      VARBINARY(512);
    DECLARE v_lease_ms BIGINT;
    DECLARE v_now      DATETIME(6);
    DECLARE v_wait     BIGINT;
    DECLARE v_gcl      BIGINT UNSIGNED;
    DECLARE v_list     LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_own      BOOLEAN DEFAULT FALSE;
    DECLARE v_mine     LONGTEXT CHARACTER SET utf8mb4;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
            -- Not set yet when a check before it refused (MySQL refuses COALESCE over it: 1232).
            IF v_wait IS NOT NULL THEN
                SET SESSION innodb_lock_wait_timeout = v_wait;
            END IF;
            IF v_gcl IS NOT NULL THEN
                SET SESSION group_concat_max_len = v_gcl;
            END IF;
        END IF;
        RESIGNAL;
    END;

    -- @include own_transaction renew_seats
    -- @include whole_lists v_gcl

    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_lease(p_lease_ms);
    SET v_nid = CAST(p_node_id AS BINARY), v_lease_ms = p_lease_ms;
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    -- Every read from here on in a transaction of the call's own (leader_election_begin: at
    -- READ COMMITTED, so plain reads lock nothing, whatever the session set). The list is
    -- checked, then cut to the services the account may act on, from its patterns alone: no
    -- seat outside them is read, locked or reported (sql/V14__access_by_account.sql).
    CALL leader_election_begin(FALSE);
    CALL leader_election_check_ids(p_service_ids, v_list);

    SET v_wait = @@session.innodb_lock_wait_timeout;
    SET SESSION innodb_lock_wait_timeout = 1;
    SET v_now = UTC_TIMESTAMP(6);
    -- 1. Lock the node's renewable seats, skipping each that another transaction holds (a
    --    campaign or force in flight; never a fenced transaction of the application's, which
    --    locks the term's row, not the seat: assert_leader): such a seat is left out of the answer, for a campaign of its own, so that one
    --    busy seat never holds up, or fails, the renew of the others. The list drives the join
    --    (STRAIGHT_JOIN, the primary key forced): one primary-key lookup per listed service,
    --    never a scan, which would lock, or wait for, seats not listed (the optimizer prefers a
    --    scan of a small table).
    -- 1a. The candidates, by a plain consistent read that locks nothing (this transaction is
    --     READ COMMITTED whatever the session's level): a locking read of every listed seat
    --     would lock, until the commit, the seats other nodes lead too (InnoDB keeps the locks of
    --     rows a condition then rejects), and their own renews, skipping locked seats, would
    --     miss them.
    --     A term an operator gave this node id (force_leader) that no process has claimed yet
    --     (never renewed: renewed_at = term_started_at) is left out too, for the campaign that
    --     claims it (leader_election_campaign's v_claim, which only an unrenewed forced term
    --     matches): renewed here, no process of the node could claim it any more, and the seat
    --     would stay held at a term nobody leads for as long as the renews went on.
    --     The history is read only for a seat not renewed since its term began (both servers
    --     test renewed_at first: a renew of 1,000 seats renewed before read 1,000 index keys
    --     fewer than one of 1,000 fresh seats, Handler_read_key, MySQL 9.7 and MariaDB 10.11,
    --     2026-12-01), so the steady renew pays nothing for it.
    SELECT JSON_ARRAYAGG(j.sid) INTO v_mine
      FROM JSON_TABLE(v_list, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
      STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
     WHERE e.leader_id = v_nid AND e.lease_expires_at > v_now
       AND NOT (e.renewed_at = e.term_started_at
                AND EXISTS (SELECT 1 FROM leader_election_history h
                             WHERE h.service_id = e.service_id AND h.term = e.term AND h.began_how = 'forced'));
    -- 1b. Lock the candidates still matching (the latest versions), skipping each that another
    --     transaction holds. MySQL locks every table a locking clause covers and refuses one over
    --     JSON_TABLE (3569), so there the clause names the seats' table; MariaDB 10.11 has no OF.
    IF v_mine IS NOT NULL THEN
        SELECT JSON_ARRAYAGG(j.sid) INTO v_mine
          FROM JSON_TABLE(v_mine, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
          STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
         WHERE e.leader_id = v_nid AND e.lease_expires_at > v_now
           FOR UPDATE SKIP LOCKED;        -- [mariadb]
           FOR UPDATE OF e SKIP LOCKED;   -- [mysql]
    END IF;
    -- 2. Renew exactly those (locked by step 1: no wait).
    UPDATE JSON_TABLE(COALESCE(v_mine, '[]'), '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
      STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
       SET e.lease_ms = v_lease_ms, e.renewed_at = v_now,
           e.lease_expires_at = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND
     WHERE e.leader_id = v_nid AND e.lease_expires_at > v_now;
    -- The writes are committed before the answer is sent (a client slow to read it holds no
    -- lock); the answer is read in a read-only transaction of its own, which locks nothing.
    COMMIT;
    CALL leader_election_begin(TRUE);
    -- The renewed seats (renewed_at = v_now), and the other listed seats another node leads (a
    -- seat's lease through the view: it may hang on a node lease, sql/V15__node_leases.sql; one
    -- that hangs on this node's is left to a campaign of its own).
    SELECT CAST(e.service_id AS CHAR CHARACTER SET utf8mb4) AS service_id,
           CAST(e.leader_id AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           e.term,
           TIMESTAMPDIFF(MICROSECOND, v_now, e.lease_expires_at) DIV 1000 AS lease_remaining_ms,
           (e.leader_id = v_nid) AS is_leader
      FROM JSON_TABLE(v_list, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
      STRAIGHT_JOIN leader_election_seats e ON e.service_id = CAST(j.sid AS BINARY)
     WHERE e.leader_id IS NOT NULL AND e.lease_expires_at > v_now
       AND (e.leader_id <> v_nid OR e.renewed_at = v_now)
     ORDER BY e.service_id;
    COMMIT;
    SET SESSION innodb_lock_wait_timeout = v_wait, SESSION group_concat_max_len = v_gcl;
END;
