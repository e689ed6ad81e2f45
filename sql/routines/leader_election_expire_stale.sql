-- Ends every term whose lease ran out before now ('expired', at the lease's end) and vacates the
-- seat. Safe to call at any time: it changes only what is already expired. Used by the event.
--
-- It takes one seat at a time, by its key, in a transaction of its own, and skips a seat that
-- someone else has locked, or whose term a transaction fenced with assert_leader holds, so it
-- never waits for a lock and never deadlocks: a campaign that is taking the seat over closes the
-- term itself, and a fenced term is swept next time. (Locking all expired rows at once through the expiry
-- index deadlocked against campaigns, which lock the key first and the index entry second.)
CREATE PROCEDURE leader_election_expire_stale()
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: end expired terms and vacate their seats (run by the expiry event)'
BEGIN
    DECLARE v_cutoff  DATETIME(6);
    DECLARE v_sid     VARBINARY(512);
    DECLARE v_last    VARBINARY(512) DEFAULT '';
    DECLARE v_leader  VARBINARY(512);
    DECLARE v_expires DATETIME(6);
    DECLARE v_free    INT;
    DECLARE v_lease   BIGINT UNSIGNED;
    DECLARE v_locked  INT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    -- No lease can come to end before the cut-off once it has passed: a new lease always ends
    -- after the time it is written.
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    SET v_cutoff = UTC_TIMESTAMP(6);
    sweep: LOOP
        -- 1. The next expired seat in key order, by a plain consistent read (no lock).
        SET v_sid = NULL;
        CALL leader_election_begin(TRUE);
        SELECT MIN(service_id) INTO v_sid FROM leader_election_seats
         WHERE service_id > v_last AND leader_id IS NOT NULL AND lease_expires_at <= v_cutoff;
        IF v_sid IS NULL THEN
            LEAVE sweep;
        END IF;
        SET v_last = v_sid;
        -- 2. Lock that seat by its key, as every procedure does; skip it if someone holds it.
        CALL leader_election_begin(FALSE);
        --    Then the node lease it hangs on, if any (sql/V15__node_leases.sql), skipping it too
        --    when a renew holds it (never through the view's outer join with SKIP LOCKED, which
        --    would read a skipped lease as none); then the seat's lease end through the view.
        SET v_leader = NULL, v_lease = NULL, v_locked = 1;
        SELECT MAX(leader_id), MAX(lease_id) INTO v_leader, v_lease
          FROM leader_election WHERE service_id = v_sid FOR UPDATE SKIP LOCKED;
        IF v_lease IS NOT NULL THEN
            SELECT COUNT(*) INTO v_locked FROM leader_election_lease
             WHERE lease_id = v_lease FOR UPDATE SKIP LOCKED;
        END IF;
        IF v_leader IS NOT NULL AND v_locked = 1 THEN
            SELECT MAX(leader_id), MAX(lease_expires_at) INTO v_leader, v_expires
              FROM leader_election_seats WHERE service_id = v_sid;
        ELSE
            SET v_leader = NULL;
        END IF;
        -- 3. Still expired under the lock, and its term not held by a fenced transaction
        --    (leader_election_try_term; swept next time): end its term at the lease's end,
        --    vacate the seat.
        IF v_leader IS NOT NULL AND v_expires <= v_cutoff THEN
            CALL leader_election_try_term(v_sid, v_free);
        END IF;
        IF v_leader IS NOT NULL AND v_expires <= v_cutoff AND v_free = 1 THEN
            -- One statement: its trigger ends the term as 'expired' at its lease's end
            -- (sql/triggers/leader_election_record_term.sql).
            UPDATE leader_election
               SET leader_id = NULL, lease_expires_at = NULL,
                   change_how = 'expired', change_at = v_cutoff
             WHERE service_id = v_sid;
        END IF;
        COMMIT;
    END LOOP;
    -- The last read's transaction.
    COMMIT;
END;
