-- leader_election_prune_history: the retention rule for the history. Deletes the terms that
-- ended more than p_days days ago (1 to 36500, by the database's clock), never a term that has
-- not ended, in batches of at most 1000 rows, each a transaction of its own (so a prune never
-- holds many locks, and stops cleanly between batches). Terms are never reused: the seat keeps
-- the service's term, whatever the history still holds. Like set_expiry_event it acts on every
-- service, so an account limited to some services may not call it (45002); a transaction of its
-- own, as campaign (what the caller left open is committed first; refused inside XA).
-- Result: pruned (rows deleted).
CREATE PROCEDURE leader_election_prune_history(IN p_days DECIMAL(65,30))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: delete the terms that ended more than p_days days ago'
BEGIN
    DECLARE v_cutoff  DATETIME(6);
    DECLARE v_pruned  BIGINT DEFAULT 0;
    DECLARE v_batch   BIGINT;
    DECLARE v_own     BOOLEAN DEFAULT FALSE;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
        END IF;
        RESIGNAL;
    END;

    -- @include own_transaction prune_history
    CALL leader_election_check_number('days', p_days, 1, 36500);
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    CALL leader_election_begin(TRUE);
    CALL leader_election_refuse_limited('pruning');
    COMMIT;

    SET v_cutoff = UTC_TIMESTAMP(6) - INTERVAL p_days DAY;
    prune: LOOP
        CALL leader_election_begin(FALSE);
        DELETE FROM leader_election_history
         WHERE ended_at IS NOT NULL AND ended_at < v_cutoff
         ORDER BY service_id, term
         LIMIT 1000;
        SET v_batch = ROW_COUNT();
        COMMIT;
        SET v_pruned = v_pruned + v_batch;
        IF v_batch < 1000 THEN
            LEAVE prune;
        END IF;
    END LOOP prune;

    SELECT v_pruned AS pruned;
END;
