-- leader_election_wakeup_name: the name of the wake-up lock of a service (src/wakeup.rs), for an
-- account allowed on it (a service outside its patterns is refused with 45002). The name is
-- `mysqlleader.` and 40 hex digits of SHA-256(secret, database, service), 52 characters: named
-- locks are limited to 64, and without the schema's secret (sql/V12__wakeup_secret.sql) nobody
-- can compute it, so no other tenant can squat on the lock. A read; with autocommit off it ends
-- what it opened. Result: lock_name.
CREATE PROCEDURE leader_election_wakeup_name(IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: the name of a service''s wake-up lock'
BEGIN
    DECLARE v_secret VARBINARY(64);
    DECLARE v_own    BOOLEAN DEFAULT FALSE;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
        END IF;
        RESIGNAL;
    END;

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_refuse_snapshot('wakeup_name');
    SET v_own = TRUE;
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    -- A read-only transaction of the call's own, at READ COMMITTED whatever the session set: it
    -- locks nothing, and a call cut at any point leaves no lock behind.
    CALL leader_election_begin(TRUE);
    CALL leader_election_check_access(p_service_id);
    SELECT secret INTO v_secret FROM leader_election_secret WHERE id = 1;
    SELECT CONCAT('mysqlleader.',
                  LEFT(SHA2(CONCAT(HEX(COALESCE(v_secret, '')), '/', COALESCE(DATABASE(), ''), '/',
                                   HEX(CAST(p_service_id AS BINARY))), 256), 40)) AS lock_name;
    COMMIT;
END;
