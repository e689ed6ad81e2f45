-- Creates the seat of a new service, in a transaction of its own (leader_election_begin, whatever the
-- session's level) that waits at most 1 s for a lock. Does nothing more when the seat exists.
-- The caller has checked access already. Internal.
CREATE PROCEDURE leader_election_create_seat(IN p_sid VARBINARY(512))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: create a service''s seat'
BEGIN
    DECLARE v_wait BIGINT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        ROLLBACK;
        SET SESSION innodb_lock_wait_timeout = v_wait;
        RESIGNAL;
    END;
    SET v_wait = @@session.innodb_lock_wait_timeout;
    SET SESSION innodb_lock_wait_timeout = 1;
    CALL leader_election_begin(FALSE);
    INSERT IGNORE INTO leader_election (service_id, term) VALUES (p_sid, 0);
    COMMIT;
    SET SESSION innodb_lock_wait_timeout = v_wait;
END;
