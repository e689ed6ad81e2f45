-- Creates the seat of a new service with its copy of access (sql/V8__access_copy_on_the_seat.sql, note 4), in a transaction
-- of its own that waits at most 1 s for a lock. Does nothing more when the seat exists. Internal.
CREATE PROCEDURE leader_election_create_seat(IN p_sid VARBINARY(512))
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: create a service''s seat with its copy of access'
BEGIN
    DECLARE v_denied VARBINARY(1024);
    DECLARE v_wait   BIGINT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        ROLLBACK;
        SET SESSION innodb_lock_wait_timeout = v_wait;
        RESIGNAL;
    END;
    SET v_wait = @@session.innodb_lock_wait_timeout;
    SET SESSION innodb_lock_wait_timeout = 1;
    START TRANSACTION;
    INSERT INTO leader_election_access_flush (id, seats_created) VALUES (1, 1)
        ON DUPLICATE KEY UPDATE seats_created = seats_created + 1;
    CALL leader_election_access_copy(p_sid, v_denied);
    INSERT IGNORE INTO leader_election (service_id, term, access_denied) VALUES (p_sid, 0, v_denied);
    COMMIT;
    SET SESSION innodb_lock_wait_timeout = v_wait;
END;
