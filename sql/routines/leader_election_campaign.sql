-- leader_election_campaign: the one body of campaign (which calls it with p_held_term NULL),
-- and the library's campaign, which carries the term it holds (issue 39).
-- Takes the seat when it is vacant or its lease has expired (term + 1), renews it when the
-- caller holds a valid lease (same term), and otherwise only reads.
-- p_held_term NULL: "the caller holds it" means the seat's leader is p_node_id, at any term
-- (campaign's contract). p_held_term not NULL (the term the caller holds, 0 when it holds none):
-- only a lease of p_node_id at that very term is renewed. A valid lease of p_node_id at another
-- term belongs to another process with the same node id (a successor that took the seat while
-- this one was paused): nothing is written, and the answer is is_leader 0, leader_id p_node_id,
-- that term and its lease_remaining_ms, so the caller follows it and never adopts its term.
-- A transaction of its own: it first commits what the caller left open (as START TRANSACTION
-- would; inside an XA transaction it is refused, before it reads anything), and every way out
-- ends its own transaction, so nothing it read or locked outlives the call, whatever the
-- session's isolation level or autocommit.
-- Result: is_leader, leader_id, term, lease_remaining_ms.
CREATE PROCEDURE leader_election_campaign(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_node_id    MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_lease_ms   DECIMAL(65,30),
    IN p_held_term  DECIMAL(65,30))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: campaign; with a held term, renew only a lease held at that term'
BEGIN
    DECLARE v_sid      VARBINARY(512);
    DECLARE v_nid      VARBINARY(512);
    DECLARE v_lease_ms BIGINT;
    DECLARE v_rows     INT;
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_term     BIGINT UNSIGNED;
    DECLARE v_expires  DATETIME(6);
    DECLARE v_lease_id BIGINT UNSIGNED;
    DECLARE v_now      DATETIME(6);
    DECLARE v_wait     BIGINT;
    DECLARE v_renewed  INT DEFAULT 0;
    DECLARE v_own      BOOLEAN DEFAULT FALSE;
    DECLARE v_held_for VARBINARY(512);
    DECLARE v_held_to  DATETIME(6);
    DECLARE v_from_to  DATETIME(6);
    DECLARE v_barred   BOOLEAN DEFAULT FALSE;
    DECLARE v_term_held BOOLEAN;
    DECLARE v_held     BIGINT UNSIGNED;
    DECLARE v_other    BOOLEAN DEFAULT FALSE;
    DECLARE v_claim    BOOLEAN DEFAULT FALSE;
    DECLARE v_forced   INT;
    DECLARE v_renewed_at DATETIME(6);
    DECLARE v_started_at DATETIME(6);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
        END IF;
        SET @mysqlleader_seat_term = NULL;
        RESIGNAL;
    END;

    -- 0. A transaction of its own (see above).
    -- @include own_transaction campaign

    -- Input, inline; the checking procedures only build the message of a bad value.
    IF p_service_id IS NULL OR p_node_id IS NULL OR p_lease_ms IS NULL
       OR CHAR_LENGTH(p_service_id) NOT BETWEEN 1 AND 128
       OR CHAR_LENGTH(p_node_id) NOT BETWEEN 1 AND 128
       OR p_lease_ms NOT BETWEEN 1 AND 86400000 OR p_lease_ms <> TRUNCATE(p_lease_ms, 0)
       OR p_held_term NOT BETWEEN 0 AND 18446744073709551615 OR p_held_term <> TRUNCATE(p_held_term, 0) THEN
        CALL leader_election_check_id('service_id', p_service_id);
        CALL leader_election_check_id('node_id', p_node_id);
        CALL leader_election_check_lease(p_lease_ms);
        IF p_held_term IS NOT NULL THEN
            CALL leader_election_check_number('held_term', p_held_term, 0, 18446744073709551615);
        END IF;
    END IF;
    SET v_sid = CAST(p_service_id AS BINARY), v_nid = CAST(p_node_id AS BINARY),
        v_lease_ms = p_lease_ms, v_held = p_held_term;
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    -- Every read from here on in a transaction of the call's own (leader_election_begin: at
    -- READ COMMITTED, so plain reads lock nothing, whatever the session set), and access decided
    -- from the account alone before any seat is read or locked (sql/V14__access_by_account.sql).
    CALL leader_election_begin(FALSE);
    CALL leader_election_check_access(p_service_id);

    -- 1. The renew of a leader: the caller holds a term (p_held_term above 0), or, without one,
    --    this session won or renewed this seat in its last campaign (sql/V7__lean_hot_paths.sql,
    --    note 6), so try the renew of that term first, as one guarded write; only when it
    --    matches nothing does the call go on to read.
    IF v_held > 0 OR (v_held IS NULL AND @mysqlleader_seat_term IS NOT NULL AND @mysqlleader_seat_service = v_sid
       AND @mysqlleader_seat_node = v_nid) THEN
        BEGIN
            DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
                ROLLBACK;
                SET SESSION innodb_lock_wait_timeout = v_wait;
                SET @mysqlleader_seat_term = NULL;
                RESIGNAL;
            END;
            SET v_term = COALESCE(v_held, @mysqlleader_seat_term), v_now = UTC_TIMESTAMP(6),
                v_wait = @@session.innodb_lock_wait_timeout;
            SET SESSION innodb_lock_wait_timeout = 1;
            UPDATE leader_election
               SET lease_ms = v_lease_ms, renewed_at = v_now,
                   lease_expires_at = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND
             WHERE service_id = v_sid AND leader_id = v_nid AND term = v_term
               AND lease_expires_at > v_now;
            SET v_renewed = ROW_COUNT();
            SET SESSION innodb_lock_wait_timeout = v_wait;
            COMMIT;
        END;
        IF v_renewed = 1 THEN
            SET v_leader = v_nid, v_expires = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND;
        ELSE
            -- Step 1 committed: step 2 reads in a new transaction of the call's own.
            CALL leader_election_begin(FALSE);
        END IF;
    END IF;

    IF v_renewed = 0 THEN
    -- 2. One plain consistent read of the row, the clock and its handover reservation
    --    (sql/V11__handover.sql), in the call's own transaction (a follower's check begins one
    --    transaction in all).
    SELECT COUNT(*), MAX(leader_id), MAX(term), MAX(lease_expires_at), UTC_TIMESTAMP(6),
           MAX(handover_to), MAX(handover_until), MAX(handover_from_until), MAX(renewed_at), MAX(term_started_at),
           MAX(lease_id)
      INTO v_rows, v_leader, v_term, v_expires, v_now, v_held_for, v_held_to, v_from_to, v_renewed_at, v_started_at,
           v_lease_id
      FROM leader_election WHERE service_id = v_sid;
    -- A seat that hangs on a node lease: its lease ends at the later of its own end and the
    -- lease's (sql/views/leader_election_seats.sql, read here without the view: opening a view
    -- cost about 0.1 ms a statement on both servers, on this hot path). One key lookup, only then.
    IF v_lease_id IS NOT NULL THEN
        SELECT GREATEST(v_expires, COALESCE(MAX(expires_at), v_expires)) INTO v_expires
          FROM leader_election_lease WHERE lease_id = v_lease_id AND node_id = v_leader;
    END IF;

    -- 2b. An operator's handover (sql/V11__handover.sql, note 1) bars every node but the named one
    --     while its reservation lasts, and the named one too while the leader it displaced has
    --     neither acknowledged it nor run out of lease. That leader acknowledges with resign
    --     (or resign_seats), sent once it has stopped acting as leader; never with campaign:
    --     this call may be its renew, sent while it still leads, whose answer (that it leads no
    --     more) is still on its way back when the named node would take the seat.
    SET v_barred = COALESCE(v_held_to > v_now AND (v_held_for <> v_nid OR v_from_to > v_now), FALSE);

    -- 3. The caller holds a valid lease: renew it with one guarded write (sql/V7__lean_hot_paths.sql, note 3).
    --    With a held term, a valid lease of this node id at another term is another process's
    --    (see above): v_other, nothing written, here or in step 4.
    --    But a term an operator gave this node id (force_leader) was won by no process of it:
    --    the first to call after it claims it (v_claim), with a renew that only an unrenewed
    --    term matches (renewed_at = term_started_at, as force_leader wrote it), so that one
    --    process claims it and any other, finding it renewed, follows.
    SET v_other = COALESCE(v_leader = v_nid AND v_expires > v_now AND v_term <> v_held, FALSE);
    IF v_other AND v_renewed_at = v_started_at THEN
        SELECT COUNT(*) INTO v_forced FROM leader_election_history
         WHERE service_id = v_sid AND term = v_term AND began_how = 'forced';
        SET v_claim = (v_forced = 1);
    END IF;
    IF v_leader = v_nid AND v_expires > v_now AND (NOT v_other OR v_claim) THEN
        BEGIN
            DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
                ROLLBACK;
                SET SESSION innodb_lock_wait_timeout = v_wait;
                RESIGNAL;
            END;
            SET v_wait = @@session.innodb_lock_wait_timeout;
            SET SESSION innodb_lock_wait_timeout = 1;
            CALL leader_election_begin(FALSE);
            UPDATE leader_election
               SET lease_ms = v_lease_ms, renewed_at = v_now,
                   lease_expires_at = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND
             WHERE service_id = v_sid AND leader_id = v_nid AND term = v_term
               AND lease_expires_at > v_now AND (NOT v_claim OR renewed_at = term_started_at);
            SET v_renewed = ROW_COUNT();
            SET SESSION innodb_lock_wait_timeout = v_wait;
            -- Ends the write's transaction also when the caller had one open (as V6's START
            -- TRANSACTION did): a renew never waits for the caller's COMMIT.
            COMMIT;
        END;
        IF v_renewed = 1 THEN
            SET v_expires = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND, v_other = FALSE;
        END IF;
    END IF;

    -- 4. The seat is vacant or expired, or the renew's guard matched nothing: decide under the
    --    row lock, as V6 did. A follower of a valid lease never comes here, nor a node a
    --    handover's reservation bars (2b).
    IF v_renewed = 0 AND NOT (v_leader IS NOT NULL AND v_leader <> v_nid AND v_expires > v_now)
       AND NOT v_barred AND NOT v_other THEN
        BEGIN
            DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
                ROLLBACK;
                SET SESSION innodb_lock_wait_timeout = v_wait;
                -- Nothing half-done: a row this call created goes again.
                IF v_rows = 0 THEN
                    DELETE FROM leader_election WHERE service_id = v_sid AND term = 0 AND leader_id IS NULL;
                    -- Committed here: under autocommit off the DELETE would open a transaction
                    -- that outlives the call (at the session's own isolation level, with its locks).
                    COMMIT;
                END IF;
                RESIGNAL;
            END;
            SET v_wait = @@session.innodb_lock_wait_timeout;
            -- 4a. The first campaign of a service creates its row, in a
            --     transaction of its own, so that no transaction below holds an insert lock while
            --     it waits for the row lock.
            IF v_rows = 0 THEN
                CALL leader_election_create_seat(v_sid);
            END IF;
            -- 4b. Decide under the row lock (waited for at most 1 s), with the clock read after
            --     the lock is granted.
            SET SESSION innodb_lock_wait_timeout = 1;
            CALL leader_election_begin(FALSE);
            -- The term's lock first, then the seat (leader_election_lock_seat): a fenced term is
            -- waited for before the seat is held, so its leader's renews never wait behind this call.
            CALL leader_election_lock_seat(v_sid, TRUE, v_term_held);
            -- A SELECT INTO that finds no row leaves its variables as they were: the seat must be
            -- there (leader_election_need_seat), or this call would answer from an earlier read.
            SET v_term = NULL;
            SELECT leader_id, term, lease_expires_at, handover_to, handover_until, handover_from_until
              INTO v_leader, v_term, v_expires, v_held_for, v_held_to, v_from_to
              FROM leader_election_seats WHERE service_id = v_sid FOR UPDATE;
            CALL leader_election_need_seat(v_term IS NOT NULL);
            SET SESSION innodb_lock_wait_timeout = v_wait;
            SET v_now = UTC_TIMESTAMP(6);
            SET v_barred = COALESCE(v_held_to > v_now AND (v_held_for <> v_nid OR v_from_to > v_now), FALSE);
            SET v_other = COALESCE(v_leader = v_nid AND v_expires > v_now AND v_term <> v_held, FALSE);
            IF v_leader = v_nid AND v_expires > v_now AND NOT v_other THEN
                -- Renew our own valid lease: the term stays.
                SET v_expires = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND;
                UPDATE leader_election
                   SET lease_ms = v_lease_ms, renewed_at = v_now, lease_expires_at = v_expires
                 WHERE service_id = v_sid;
            ELSEIF (v_leader IS NULL OR v_expires <= v_now) AND NOT v_barred AND v_term_held THEN
                -- Take the vacant or expired seat (unless a handover's reservation bars this
                -- node) and end any reservation, in one statement: its trigger closes the
                -- expired term (at its lease's end, no ended_by) and writes the new term's
                -- history row (sql/triggers/leader_election_record_term.sql).
                SET v_term = v_term + 1, v_leader = v_nid,
                    v_expires = v_now + INTERVAL (v_lease_ms * 1000) MICROSECOND;
                UPDATE leader_election
                   SET leader_id = v_nid, term = v_term, lease_ms = v_lease_ms,
                       term_started_at = v_now, renewed_at = v_now, lease_expires_at = v_expires,
                       handover_to = NULL, handover_until = NULL, handover_by = NULL,
                       handover_from = NULL, handover_from_until = NULL,
                       change_how = 'elected', change_at = v_now
                 WHERE service_id = v_sid;
            END IF;
            -- Otherwise another node (or another process with this node id: v_other) took
            -- the seat meanwhile, a handover's reservation bars
            -- this node, or another transaction holds the expired seat's term (v_term_held
            -- false: a takeover that raced this one through leader_election_lock_seat's tries;
            -- a fence of an expired term is waited for there instead): nothing to write, and
            -- the answer is the seat as read (an expired lease answers as vacant), not an
            -- error: not taking a seat another caller is taking is a follower's plain answer.
            COMMIT;
        END;
    END IF;
    END IF;

    -- 5. End what the reads above opened (with autocommit off), then remember the seat this
    --    session holds now (or that it holds none), for step 1 next time. A seat left vacant
    --    (reserved for another node by a handover) answers as vacant: no leader, 0 ms.
    COMMIT;
    IF v_leader IS NULL OR v_expires IS NULL OR v_expires <= v_now THEN
        SET v_leader = NULL, v_expires = v_now;
    END IF;
    IF v_leader = v_nid AND v_expires > v_now AND NOT v_other THEN
        SET @mysqlleader_seat_service = v_sid, @mysqlleader_seat_node = v_nid, @mysqlleader_seat_term = v_term;
    ELSEIF @mysqlleader_seat_term IS NOT NULL THEN
        SET @mysqlleader_seat_term = NULL;
    END IF;

    SELECT IF(v_leader = v_nid AND NOT v_other, 1, 0) AS is_leader,
           CAST(v_leader AS CHAR CHARACTER SET utf8mb4) AS leader_id,
           v_term AS term,
           TIMESTAMPDIFF(MICROSECOND, v_now, v_expires) DIV 1000 AS lease_remaining_ms;
END;
