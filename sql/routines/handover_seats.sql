-- handover_seats: many operator handovers in one call (issue 42, "Fleets": draining a node that
-- leads thousands of services). p_service_ids is a JSON array of distinct service ids; each
-- listed seat is handed over to p_to_node exactly as handover hands over one: the shared end of
-- a term, leader_election_end_term (p_how 'handed_over', no p_node), called once per seat, so
-- that handover and this call keep one definition of what a handover does:
--   * p_to_node holds a valid lease already: nothing changes (a pending reservation is cleared);
--   * another node holds a valid lease: its term ends 'handed_over' (ended_by: the caller), the
--     seat is vacated and reserved for p_to_node, which may take it once that leader has
--     acknowledged (resign, resign_seats) or its lease has run out;
--   * the seat is vacant or expired: reserved for p_to_node (an expired term ends 'expired').
-- The list is refused whole unless it is one of distinct ids (leader_election_check_ids:
-- 45000 naming service_ids), then cut to the services the account's patterns allow (from its
-- patterns alone, before any seat is read): a service outside them is left out, as
-- resign_seats leaves it out. A listed service with no seat (nobody ever campaigned for it) is
-- left out too, and no seat is created for it (unlike handover, which creates and reserves a
-- seat for a new service): a list of thousands is far more likely to hold a typo than a plan.
-- One transaction per seat, not one for the batch: each seat's end of term is its own
-- transaction (leader_election_end_term commits it), so a call cut short, or failed, keeps the
-- handovers of the seats it had done; sending the same list again is harmless (a seat handed
-- over already is reserved again for the same node, one p_to_node leads is left as it is).
-- Bounded waits: each seat waits for its locks as handover does (leader_election_end_term: at
-- most 1 s per lock, a fenced term waited for before the seat is held); a seat whose lock is
-- not obtained within that (1205), or that stays a deadlock's victim (1213), is left as it was
-- and the batch goes on with the next one. The batch as a whole begins no seat once 10 s have
-- passed since the call began (the first seat always): it ends within about 10 s plus one
-- seat's bound (about 2 s, 1 s per lock), whatever the number of seats or of fences. The seats
-- it left or did not reach have no row in the answer: send them again (mysqlleader handover
-- does, while a call makes progress). Uncontended, 1,000 seats take well under that budget
-- (see docs/operations.md).
-- Result, in the order of service_id (byte for byte), one row per listed seat this call handed
-- over or found p_to_node leading: service_id, is_leader (1 when p_to_node leads), leader_id,
-- term, lease_remaining_ms, for the seat as it is once every seat is done (read in one
-- statement after the last one; a handed-over seat reads vacant, unless p_to_node has taken it
-- meanwhile). No row for a service left out (unknown, outside the account's patterns, or left
-- as it was). Operator role only, as handover.
-- A transaction of its own, as handover: what the caller left open is committed first (inside
-- an XA transaction the call is refused before it reads anything), and every way out ends the
-- call's own transaction.
CREATE PROCEDURE handover_seats(
    IN p_service_ids LONGTEXT CHARACTER SET utf8mb4,
    IN p_to_node     MEDIUMTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: hand over many seats to a named node in one call'
BEGIN
    DECLARE v_to       VARBINARY(512);
    DECLARE v_list     LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_seats    LONGTEXT CHARACTER SET utf8mb4;
    DECLARE v_left     LONGTEXT CHARACTER SET utf8mb4 DEFAULT '[]';
    DECLARE v_sid      VARBINARY(512);
    DECLARE v_i        INT DEFAULT 0;
    DECLARE v_n        INT DEFAULT 0;
    DECLARE v_until    DATETIME(6);
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_now      DATETIME(6);
    DECLARE v_ended    VARBINARY(512);
    DECLARE v_own      BOOLEAN DEFAULT FALSE;
    DECLARE v_gcl      BIGINT UNSIGNED;
    DECLARE v_walk     LONGTEXT CHARACTER SET ascii;
    DECLARE v_w        INT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
        END IF;
        IF v_gcl IS NOT NULL THEN
            SET SESSION group_concat_max_len = v_gcl;
        END IF;
        RESIGNAL;
    END;

    -- @include own_transaction handover_seats
    -- @include whole_lists v_gcl

    CALL leader_election_check_id('to_node', p_to_node);
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    SET v_to = CAST(p_to_node AS BINARY), v_until = UTC_TIMESTAMP(6) + INTERVAL 10 SECOND;
    -- Every read from here on in a transaction of the call's own (leader_election_begin), the
    -- list checked and cut to the services the account may act on, from its patterns alone.
    CALL leader_election_begin(FALSE);
    CALL leader_election_check_ids(p_service_ids, v_list);
    -- The listed services that have a seat: a plain read that locks nothing, one primary-key
    -- lookup per listed service, never a scan.
    SELECT JSON_ARRAYAGG(j.sid) INTO v_seats
      FROM JSON_TABLE(v_list, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
      STRAIGHT_JOIN leader_election e FORCE INDEX (PRIMARY) ON e.service_id = CAST(j.sid AS BINARY);
    -- The ids read by index from v_walk (sql/fragments/walk_by_index.sql).
    -- @include walk_by_index v_seats
    COMMIT;
    SET SESSION group_concat_max_len = v_gcl;
    SET v_n = COALESCE(JSON_LENGTH(v_seats), 0);
    -- Each seat as handover hands it over (its own transaction), until the budget is spent.
    seats: WHILE v_i < v_n DO
        IF v_i > 0 AND UTC_TIMESTAMP(6) >= v_until THEN
            LEAVE seats;
        END IF;
        SET v_sid = UNHEX(RTRIM(SUBSTRING(v_walk, v_i * v_w + 1, v_w)));
        BEGIN
            -- Its lock not obtained within the bound: left as it was (end_term rolled back
            -- everything it did and put the session's lock wait back), not in the answer.
            DECLARE EXIT HANDLER FOR 1205, 1213 SET v_left = JSON_ARRAY_APPEND(v_left, '$', v_i + 1);
            CALL leader_election_end_term(v_sid, 'handed_over', NULL, v_to, NULL,
                                          v_leader, v_term, v_expires, v_now, v_ended);
        END;
        SET v_i = v_i + 1;
    END WHILE;

    -- The answer, the seats this call handed over (the first v_i listed, but those left) as they
    -- are now (a seat's lease through the view: it may hang on a node lease,
    -- sql/V15__node_leases.sql): one statement in a read-only transaction of its own, one clock
    -- reading.
    CALL leader_election_begin(TRUE);
    SET v_now = UTC_TIMESTAMP(6);
    SELECT CAST(e.service_id AS CHAR CHARACTER SET utf8mb4) AS service_id,
           IF(e.leader_id = v_to AND e.lease_expires_at > v_now, 1, 0) AS is_leader,
           CAST(IF(e.lease_expires_at > v_now, e.leader_id, NULL) AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           e.term AS term,
           IF(e.leader_id IS NOT NULL AND e.lease_expires_at > v_now,
              TIMESTAMPDIFF(MICROSECOND, v_now, e.lease_expires_at) DIV 1000, 0) AS lease_remaining_ms
      FROM JSON_TABLE(COALESCE(v_seats, '[]'), '$[*]' COLUMNS (n FOR ORDINALITY,
                      sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
      STRAIGHT_JOIN leader_election_seats e ON e.service_id = CAST(j.sid AS BINARY)
     WHERE j.n <= v_i AND NOT JSON_CONTAINS(v_left, CAST(j.n AS CHAR))
     ORDER BY e.service_id;
    COMMIT;
END;
