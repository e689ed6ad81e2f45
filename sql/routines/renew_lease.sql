-- renew_lease: a node session's renew of all its seats (sql/V15__node_leases.sql): one row
-- written, however many seats hang on the lease. p_seats lists the seats the session asks about,
-- each as a pair [service_id, held_term] (held_term: the term the caller holds, 0 for none: a
-- follower, or an elector that stopped). In one transaction:
-- 1. The lease p_lease_id is renewed to p_lease_ms from now, if and only if it is valid, is for
--    p_node_id and was granted to this session's account (leader_election_renew_lease). Every
--    seat that hangs on it is renewed with it.
-- 2. Listed seats that hang on it although the caller does not hold them at that term (a
--    takeover whose answer was lost, an elector that stopped) are let go of: each stands on its
--    own lease from now on, kept until the lease's end before this renew (so no deadline the
--    node counted on is cut short), and then ends unless campaigned for.
-- 3. Listed seats the caller holds that this node leads at exactly that term with a valid lease
--    of their own (won or renewed by a campaign of their own) are hung on the lease: a write
--    each, once.
-- Steps 2 and 3 skip a seat another transaction has locked (a takeover or an operator's change
-- in flight: it is not waited for). Nothing is written when the lease is not renewed.
-- p_seats must be a JSON array of distinct pairs [id of 1 to 128 characters, whole number >= 0]
-- (45000 naming seats otherwise); its ids are then cut to the services the account may act on
-- before any seat is read (leader_election_check_ids, sql/V14__access_by_account.sql).
-- Result, in no particular order: one row for the lease (service_id NULL, leader_id the node,
-- term the lease id, lease_remaining_ms the time left on it, 0 when it was not renewed, is_leader
-- 1 when it was renewed), then one row per listed seat that hangs on the lease after the call
-- (is_leader 1, its term, the time left) or that another node leads with a valid lease
-- (is_leader 0, its leader, term and time left): service_id, leader_id, term,
-- lease_remaining_ms, is_leader, server_us (the call's time on the server, microseconds,
-- measured on its clock from its start to its answer; on the lease's row, 0 on the others),
-- lost (on the lease's row: how many seats others have taken from the lease, its column lost,
-- read by the same statement as the seats' rows, so at the same moment; NULL on the others),
-- seat_lease_id and seat_lease_moved (on the row of a seat another node leads: the node lease
-- it hangs on and that lease's moved, read by the same statement as the seat's row; NULL
-- otherwise: a follower may then watch the lease instead of listing the seat, see
-- watch_leases).
-- A seat of this node's that is missing from the answer is for its own campaign to decide.
-- A session need not list a seat it saw on the lease at its term: while lost stays what it
-- was when it saw it, no takeover has taken a seat off the lease since, and the lease's row
-- renewed it (src/session/on_lease.rs; only this node id's own resign takes a seat off without
-- counting, and a node id is one process).
-- A transaction of its own, as campaign: what the caller left open is committed first (inside
-- an XA transaction the call is refused before it reads anything), and every way out ends the
-- call's own transaction; the answer is read after the commit, in a read-only transaction.
CREATE PROCEDURE renew_lease(
    IN p_lease_id    DECIMAL(65,30),
    IN p_node_id     MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_lease_ms    DECIMAL(65,30),
    IN p_seats       LONGTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: renew a node lease and every seat on it, writing one row'
BEGIN
    DECLARE v_nid      VARBINARY(512);
    DECLARE v_lease    BIGINT UNSIGNED;
    DECLARE v_lease_ms BIGINT;
    DECLARE v_now      DATETIME(6);
    DECLARE v_began    DATETIME(6);
    DECLARE v_before   DATETIME(6);
    DECLARE v_wait     BIGINT;
    DECLARE v_gcl      BIGINT UNSIGNED;
    DECLARE v_list     LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_ids      LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_seats    LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_own      BOOLEAN DEFAULT FALSE;
    DECLARE v_alive    INT DEFAULT 0;
    DECLARE v_drop     LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_hang     LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_n        BIGINT;
    DECLARE v_good     BIGINT;
    DECLARE v_distinct BIGINT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
            IF v_wait IS NOT NULL THEN
                SET SESSION innodb_lock_wait_timeout = v_wait;
            END IF;
            IF v_gcl IS NOT NULL THEN
                SET SESSION group_concat_max_len = v_gcl;
            END IF;
        END IF;
        RESIGNAL;
    END;

    -- @include own_transaction renew_lease
    -- @include whole_lists v_gcl

    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    SET v_began = UTC_TIMESTAMP(6);
    CALL leader_election_check_number('lease_id', p_lease_id, 1, 18446744073709551615);
    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_check_lease(p_lease_ms);
    IF p_seats IS NULL OR JSON_VALID(p_seats) = 0 OR JSON_TYPE(p_seats) <> 'ARRAY' THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31000,
            MESSAGE_TEXT = 'mysqlleader: seats must be a JSON array of [service_id, held_term] pairs';
    END IF;
    -- Each element a pair [string, whole number >= 0]; the ids, as a list, checked as
    -- renew_seats checks its list (leader_election_check_ids: strings of 1 to 128 characters,
    -- none twice), and cut to the services the account may act on.
    SELECT COUNT(*),
           COALESCE(SUM(JSON_TYPE(h.v) = 'ARRAY' AND JSON_LENGTH(h.v) = 2
                        AND JSON_TYPE(JSON_EXTRACT(h.v, '$[0]')) = 'STRING'
                        AND CHAR_LENGTH(h.sid) BETWEEN 1 AND 128
                        AND JSON_TYPE(JSON_EXTRACT(h.v, '$[1]')) IN ('INTEGER', 'UNSIGNED INTEGER')
                        AND JSON_EXTRACT(h.v, '$[1]') >= 0), 0),
           COUNT(DISTINCT CAST(h.sid AS BINARY)),
           JSON_ARRAYAGG(h.sid)
      INTO v_n, v_good, v_distinct, v_ids
      FROM JSON_TABLE(p_seats, '$[*]' COLUMNS (v JSON PATH '$', sid LONGTEXT CHARACTER SET utf8mb4 PATH '$[0]')) AS h;
    IF v_good <> v_n OR v_distinct <> v_n THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31000,
            MESSAGE_TEXT = 'mysqlleader: seats must be a JSON array of distinct [service_id, held_term] pairs';
    END IF;
    SET v_nid = CAST(p_node_id AS BINARY), v_lease = p_lease_id, v_lease_ms = p_lease_ms;
    -- Every read from here on in a transaction of the call's own (leader_election_begin: READ
    -- COMMITTED).
    CALL leader_election_begin(FALSE);
    CALL leader_election_check_ids(COALESCE(v_ids, '[]'), v_list);
    -- The pairs of the services the account may act on: all of them, or (a limited account that
    -- listed others too) those in the cut list.
    IF JSON_LENGTH(v_list) = v_n THEN
        SET v_seats = p_seats;
    ELSE
        SELECT COALESCE(JSON_ARRAYAGG(JSON_ARRAY(h.sid, h.held)), JSON_ARRAY()) INTO v_seats
          FROM JSON_TABLE(p_seats, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$[0]',
                                                   held DECIMAL(65,0) PATH '$[1]')) AS h
         WHERE EXISTS (SELECT 1 FROM JSON_TABLE(v_list, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS a
                        WHERE CAST(a.sid AS BINARY) = CAST(h.sid AS BINARY));
    END IF;

    SET v_wait = @@session.innodb_lock_wait_timeout;
    SET SESSION innodb_lock_wait_timeout = 1;
    SET v_now = UTC_TIMESTAMP(6);
    -- The lease's end before this renew (step 2), then 1. the renew.
    SELECT MAX(expires_at) INTO v_before FROM leader_election_lease WHERE lease_id = v_lease;
    CALL leader_election_renew_lease(v_lease, v_nid, v_lease_ms, v_now, v_alive);
    IF v_alive = 1 THEN
        -- 2. The listed seats on the lease that the caller does not hold at their term: a plain
        --    read (no lock), then those still so, locked, skipping each that another
        --    transaction holds; one write each.
        SELECT JSON_ARRAYAGG(j.sid) INTO v_drop
          FROM JSON_TABLE(v_seats, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$[0]', held DECIMAL(65,0) PATH '$[1]')) AS j
          STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
         WHERE e.lease_id = v_lease AND NOT (j.held <=> e.term);
        IF v_drop IS NOT NULL THEN
            SELECT JSON_ARRAYAGG(j.sid) INTO v_drop
              FROM JSON_TABLE(v_drop, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
              STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
             WHERE e.lease_id = v_lease
               FOR UPDATE SKIP LOCKED;        -- [mariadb]
               FOR UPDATE OF e SKIP LOCKED;   -- [mysql]
            -- Each seat let go of leaves the lease: moved + 1 on its row (locked by step 1).
            IF v_drop IS NOT NULL THEN
                UPDATE leader_election_lease SET moved = moved + 1 WHERE lease_id = v_lease;
            END IF;
            UPDATE JSON_TABLE(COALESCE(v_drop, '[]'), '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
              STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
               SET e.lease_expires_at = GREATEST(e.lease_expires_at, COALESCE(v_before, e.lease_expires_at)),
                   e.lease_id = NULL
             WHERE e.lease_id = v_lease;
        END IF;
        -- 3. The held seats to hang on the lease: this node's at the held term, valid on their own
        --    lease (or on an older lease of this node's), not on this lease yet. Read, then locked
        --    as in step 2; one write each.
        SELECT JSON_ARRAYAGG(JSON_ARRAY(j.sid, j.held)) INTO v_hang
          FROM JSON_TABLE(v_seats, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$[0]', held DECIMAL(65,0) PATH '$[1]')) AS j
          STRAIGHT_JOIN leader_election_seats e ON e.service_id = CAST(j.sid AS BINARY)
         WHERE j.held = e.term AND e.leader_id = v_nid AND e.lease_expires_at > v_now
           AND NOT (e.lease_id <=> v_lease);
        IF v_hang IS NOT NULL THEN
            SELECT JSON_ARRAYAGG(JSON_ARRAY(j.sid, j.held)) INTO v_hang
              FROM JSON_TABLE(v_hang, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$[0]', held DECIMAL(65,0) PATH '$[1]')) AS j
              STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
             WHERE e.leader_id = v_nid AND NOT (e.lease_id <=> v_lease)
               FOR UPDATE SKIP LOCKED;        -- [mariadb]
               FOR UPDATE OF e SKIP LOCKED;   -- [mysql]
            -- Under the locks: still this node's, at the held term, and valid by its own lease,
            -- or by an older lease of this node's (the view, read again now).
            SELECT JSON_ARRAYAGG(j.sid) INTO v_hang
              FROM JSON_TABLE(COALESCE(v_hang, '[]'), '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$[0]', held DECIMAL(65,0) PATH '$[1]')) AS j
              STRAIGHT_JOIN leader_election_seats e ON e.service_id = CAST(j.sid AS BINARY)
             WHERE j.held = e.term AND e.leader_id = v_nid AND e.lease_expires_at > v_now
               AND NOT (e.lease_id <=> v_lease);
            -- A seat that hung on an older lease of this node's leaves it: moved + 1 on that
            -- lease's row (sql/V16__lease_moves.sql), before the move.
            UPDATE leader_election_lease o
              STRAIGHT_JOIN (SELECT DISTINCT e.lease_id
                               FROM JSON_TABLE(COALESCE(v_hang, '[]'), '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
                               STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
                              WHERE e.leader_id = v_nid AND e.lease_id IS NOT NULL AND e.lease_id <> v_lease) AS m
                    ON o.lease_id = m.lease_id
               SET o.moved = o.moved + 1;
            -- The seat keeps its own end (and that of an older lease it hung on), so that no
            -- deadline counted on either is cut short.
            UPDATE JSON_TABLE(COALESCE(v_hang, '[]'), '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
              STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY)
              LEFT JOIN leader_election_lease o ON o.lease_id = e.lease_id AND o.node_id = e.leader_id
               SET e.lease_expires_at = GREATEST(e.lease_expires_at, COALESCE(o.expires_at, e.lease_expires_at)),
                   e.lease_id = v_lease
             WHERE e.leader_id = v_nid;
        END IF;
    END IF;
    -- The writes are committed before the answer is sent; the answer is read in a read-only
    -- transaction of its own, which locks nothing.
    COMMIT;
    SET SESSION innodb_lock_wait_timeout = v_wait, SESSION group_concat_max_len = v_gcl;
    CALL leader_election_begin(TRUE);
    SELECT NULL AS service_id,
           CAST(v_nid AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_lease AS term,
           IF(v_alive = 1, v_lease_ms, 0) AS lease_remaining_ms,
           v_alive AS is_leader,
           TIMESTAMPDIFF(MICROSECOND, v_began, UTC_TIMESTAMP(6)) AS server_us,
           (SELECT l.lost FROM leader_election_lease l WHERE l.lease_id = v_lease) AS lost,
           NULL AS seat_lease_id,
           NULL AS seat_lease_moved
    UNION ALL
    SELECT CAST(e.service_id AS CHAR CHARACTER SET utf8mb4),
           CAST(e.leader_id AS CHAR CHARACTER SET utf8mb4),
           e.term,
           TIMESTAMPDIFF(MICROSECOND, v_now, e.lease_expires_at) DIV 1000,
           (e.leader_id = v_nid),
           0,
           NULL,
           IF(e.leader_id = v_nid, NULL, m.lease_id),
           IF(e.leader_id = v_nid, NULL, m.moved)
      FROM JSON_TABLE(v_seats, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$[0]', held DECIMAL(65,0) PATH '$[1]')) AS j
      STRAIGHT_JOIN leader_election_seats e ON e.service_id = CAST(j.sid AS BINARY)
      LEFT JOIN leader_election_lease m ON m.lease_id = e.lease_id AND m.node_id = e.leader_id
     WHERE e.leader_id IS NOT NULL AND e.lease_expires_at > v_now
       AND (e.leader_id <> v_nid OR (v_alive = 1 AND e.lease_id = v_lease));
    COMMIT;
END;
