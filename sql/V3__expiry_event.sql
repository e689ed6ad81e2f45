-- mysqlleader V3: the optional event that ends expired terms and vacates their seats, so that a
-- plain SELECT on leader_election tells the truth. Installed switched off; switch it with
-- CALL set_expiry_event(1) / (0). It needs the server's event_scheduler to be ON to run, and on
-- a Galera cluster it runs on the node where it was switched on only.

-- Ends every term whose lease ran out before now ('expired', at the lease's end) and vacates the
-- seat. Safe to call at any time: it changes only what is already expired. Used by the event.
DROP PROCEDURE IF EXISTS leader_election_expire_stale;
CREATE PROCEDURE leader_election_expire_stale()
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: end expired terms and vacate their seats (run by the expiry event)'
BEGIN
    DECLARE v_cutoff  DATETIME(6);
    DECLARE v_expired INT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    -- Read committed: the locking scan below keeps locks on the expired rows only.
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;
    -- 1. Lock the rows expired at the cut-off. No other row can come to match it: a new lease
    --    always ends after the time it is written, and a vacated seat has no expiry.
    SET v_cutoff = UTC_TIMESTAMP(6);
    SELECT COUNT(*) INTO v_expired FROM leader_election
     WHERE leader_id IS NOT NULL AND lease_expires_at <= v_cutoff FOR UPDATE;
    IF v_expired > 0 THEN
        -- 2. Close their terms, then vacate their seats.
        UPDATE leader_election_history h
          JOIN leader_election e ON e.service_id = h.service_id AND e.term = h.term
           SET h.ended_at = e.lease_expires_at, h.ended_how = 'expired'
         WHERE e.leader_id IS NOT NULL AND e.lease_expires_at <= v_cutoff AND h.ended_at IS NULL;
        UPDATE leader_election SET leader_id = NULL, lease_expires_at = NULL
         WHERE leader_id IS NOT NULL AND lease_expires_at <= v_cutoff;
    END IF;
    COMMIT;
END;

CREATE EVENT IF NOT EXISTS leader_election_expire
    ON SCHEDULE EVERY 1 SECOND
    ON COMPLETION PRESERVE
    DISABLE
    COMMENT 'mysqlleader: ends expired terms every second (switch with CALL set_expiry_event)'
    DO CALL leader_election_expire_stale();

-- set_expiry_event: switch the expiry event on (1) or off (0). Result: event_enabled.
DROP PROCEDURE IF EXISTS set_expiry_event;
CREATE PROCEDURE set_expiry_event(IN p_enabled INT)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: switch the expiry event on (1) or off (0)'
BEGIN
    DECLARE v_msg VARCHAR(128);
    IF p_enabled IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'mysqlleader: enabled must not be NULL';
    ELSEIF p_enabled NOT IN (0, 1) THEN
        SET v_msg = CONCAT('mysqlleader: enabled must be 0 or 1 (got ', p_enabled, ')');
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
    END IF;
    IF p_enabled = 1 THEN
        ALTER EVENT leader_election_expire ENABLE;
    ELSE
        ALTER EVENT leader_election_expire DISABLE;
    END IF;
    SELECT COALESCE(MAX(STATUS = 'ENABLED'), 0) AS event_enabled
      FROM information_schema.EVENTS
     WHERE EVENT_SCHEMA = DATABASE() AND EVENT_NAME = 'leader_election_expire';
END;
