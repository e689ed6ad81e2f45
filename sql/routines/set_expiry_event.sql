-- set_expiry_event: switch the expiry event on (1) or off (0). Result: event_enabled.
-- The event acts on every service, so an account limited to some services
-- (leader_election_access) may not switch it: 45002, changing nothing.
CREATE PROCEDURE set_expiry_event(IN p_enabled DECIMAL(65,30))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: switch the expiry event on (1) or off (0)'
BEGIN
    DECLARE v_enabled TINYINT;
    DECLARE v_tries   INT DEFAULT 0;
    DECLARE v_seen    INT;
    -- Taken as DECIMAL like every number (see V2): 0.5 or 1.4 is rejected, never rounded.
    CALL leader_election_check_number('enabled', p_enabled, 0, 1);
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    -- In a read-only transaction of the call's own (ALTER EVENT would commit the caller's anyway).
    CALL leader_election_begin(TRUE);
    CALL leader_election_refuse_limited('the event');
    COMMIT;
    switch: LOOP
        IF p_enabled = 1 THEN
            ALTER EVENT leader_election_expire ENABLE;
        ELSE
            ALTER EVENT leader_election_expire DISABLE;
        END IF;
        SET v_tries = v_tries + 1;
        -- The scheduler writes an event's status back with its last run's time, from the copy
        -- it took when it picked the run (MariaDB when the run starts: V5; MySQL 9.7 too, after
        -- waiting for the ALTER's lock): a run picked as the ALTER commits can undo it later,
        -- by as long as the scheduler thread waits for a CPU (measured under load: 50 ms, then
        -- more than 40 ms after three reads 20 ms apart). A run picked after the ALTER sees the
        -- event as switched (the ALTER takes a disabled event off the queue), so a DISABLE that
        -- reads as made for a whole period of the event (1 s: 21 reads, 50 ms apart) stays; an
        -- ENABLE cannot be undone that way (a disabled event is never picked): three reads, 20
        -- ms apart. Else the switch is made again.
        SET v_seen = 0;
        settle: LOOP
            SELECT COALESCE(MAX(STATUS = 'ENABLED'), 0) INTO v_enabled
              FROM information_schema.EVENTS
             WHERE EVENT_SCHEMA = DATABASE() AND EVENT_NAME = 'leader_election_expire';
            IF v_enabled <> p_enabled THEN
                LEAVE settle;
            END IF;
            SET v_seen = v_seen + 1;
            IF v_seen >= IF(p_enabled = 1, 3, 21) THEN
                LEAVE settle;
            END IF;
            DO SLEEP(IF(p_enabled = 1, 0.02, 0.05));
        END LOOP settle;
        IF v_enabled = p_enabled OR v_tries >= 10 THEN
            LEAVE switch;
        END IF;
        DO SLEEP(0.005 * v_tries);
    END LOOP;
    SELECT v_enabled AS event_enabled;
END;
