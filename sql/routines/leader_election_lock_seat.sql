-- Locks a seat for a change that may end its term, in the caller's transaction, the term first:
-- 1. The seat's current term, by a plain read (the caller's transaction is READ COMMITTED:
--    leader_election_begin): when a leader holds the seat (with p_expired_only, as for a
--    campaign, which ends no valid lease: only when that lease has run out or has less than a
--    second to go, by the time the caller reads its clock), the term's history row is locked
--    exclusively while the term is open. That row is the term's lock: every fence
--    (assert_leader) holds it shared until its transaction ends, and the trigger that ends a
--    term must change it (sql/triggers/leader_election_record_term.sql). So a change that would end a fenced term
--    waits here, for the fenced transaction, before it holds the seat: the leader's renews,
--    which change the seat and never the term's row, go on meanwhile.
-- 2. The seat itself, for update.
-- 3. Should the term have changed between 1 and 2 (a takeover committed in between), the new
--    term's row is locked too, without waiting (another call may hold it while it waits for
--    this seat: waiting here could deadlock). When another transaction holds it, everything is
--    let go (ROLLBACK: the caller has written nothing yet) and 1-3 run again; so they do when
--    InnoDB picks this transaction as a deadlock's victim (1213).
-- 4. 1-3 run at least 5 times, and again (after a pause of 1 ms more each time, at most
--    10 ms, with nothing locked) until as long as one lock wait (the session's
--    innodb_lock_wait_timeout, in seconds) has passed since the first try: a seat whose term
--    moves on every few milliseconds (16 campaigners on 20-60 ms leases, tests/sql_concurrency.rs)
--    beat 5 tries in a row now and then on MySQL under CI load, and the caller was refused
--    although nothing held the seat for long. Only then is the caller refused, as a lock wait
--    would be, after as long as one.
-- p_held says whether the seat's term, if it has a leader, is now locked by this transaction:
-- a caller about to end a term it does not hold calls leader_election_need_term, which fails as
-- a lock wait would (1205) rather than wait for the term's row while it holds the seat.
-- The caller calls it first in a transaction of its own, just begun (leader_election_begin).
-- Waits at most the session's innodb_lock_wait_timeout (the callers set 1 s) at step 1 or 2 of
-- each try.
-- Afterwards the caller reads the seat FOR UPDATE (locked here already: no wait). Internal.
CREATE PROCEDURE leader_election_lock_seat(IN p_sid VARBINARY(512), IN p_expired_only BOOLEAN, OUT p_held BOOLEAN)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: lock a seat and its open term, the term first'
BEGIN
    DECLARE v_term   BIGINT UNSIGNED;
    DECLARE v_locked BIGINT UNSIGNED;
    DECLARE v_leader VARBINARY(512);
    DECLARE v_until  DATETIME(6);
    DECLARE v_rows   INT;
    DECLARE v_tries  INT DEFAULT 0;
    DECLARE v_victim BOOLEAN;
    -- 4. UTC_TIMESTAMP(6) is read anew by each statement of a procedure (both servers).
    DECLARE v_retry_until DATETIME(6) DEFAULT UTC_TIMESTAMP(6) + INTERVAL @@session.innodb_lock_wait_timeout SECOND;
    attempt: LOOP
        SET v_tries = v_tries + 1, v_victim = FALSE;
        BEGIN
            -- Chosen as a deadlock's victim (1213): InnoDB has rolled this transaction back, and
            -- it had written nothing; 1-3 run again in a new one.
            DECLARE EXIT HANDLER FOR 1213 SET v_victim = TRUE, p_held = FALSE;
            -- 1.
            SELECT MAX(term) INTO v_term FROM leader_election_seats
             WHERE service_id = p_sid AND leader_id IS NOT NULL
               AND NOT (p_expired_only AND lease_expires_at > UTC_TIMESTAMP(6) + INTERVAL 1 SECOND);
            IF v_term IS NOT NULL THEN
                SELECT COUNT(*) INTO v_rows FROM leader_election_history
                 WHERE service_id = p_sid AND term = v_term AND ended_at IS NULL FOR UPDATE;
            END IF;
            -- 2.
            SELECT MAX(leader_id), MAX(term), MAX(lease_expires_at) INTO v_leader, v_locked, v_until
              FROM leader_election_seats WHERE service_id = p_sid FOR UPDATE;
            -- 3.
            SET p_held = (v_leader IS NULL OR v_locked <=> v_term
                          -- A lease with a second to go stays valid until the caller reads its clock.
                          OR (p_expired_only AND v_until > UTC_TIMESTAMP(6) + INTERVAL 1 SECOND));
            IF NOT p_held THEN
                CALL leader_election_try_term(p_sid, v_rows);
                SET p_held = (v_rows = 1);
            END IF;
        END;
        IF p_held OR (v_tries >= 5 AND UTC_TIMESTAMP(6) >= v_retry_until) THEN
            LEAVE attempt;
        END IF;
        IF NOT v_victim THEN
            ROLLBACK;
        END IF;
        -- Past the 5th try, holding nothing, a pause of 1 ms more each try (at most 10 ms): a
        -- call that went on trying at once for a whole lock wait crowded the seat's lock queues,
        -- and three of 16 campaigners beside it waited out their own 1 s bound (CI63, MariaDB).
        IF v_tries >= 5 THEN
            DO SLEEP(0.001 * LEAST(v_tries - 4, 10));
        END IF;
        CALL leader_election_begin(FALSE);
    END LOOP;
    IF v_victim THEN
        SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT =
            'Deadlock found when trying to get lock; try restarting transaction (mysqlleader: tried for a lock wait''s time)';
    END IF;
END;
