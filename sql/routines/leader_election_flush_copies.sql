-- The work of leader_election_flush_access (below), without a result set, so that this
-- migration can run it. OUT: how many seats there are, how many copies it rewrote. Internal.
-- The seats are walked in key order (service_id), each in a transaction of its own, and a seat it
-- cannot update (locked through 10 tries) stops it: the seats before that one hold the new copy,
-- that one and those after it the copy they had. `mysqlleader grant` relies on this order to undo
-- a limit whose flush cannot complete (src/procedures.rs, grant).
CREATE PROCEDURE leader_election_flush_copies(OUT p_seats BIGINT, OUT p_changed BIGINT)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: recompute every seat''s copy of access'
BEGIN
    DECLARE v_done    INT DEFAULT 0;
    DECLARE v_sid     VARBINARY(512);
    DECLARE v_denied  VARBINARY(1024);
    DECLARE v_tries   INT;
    DECLARE v_wait    BIGINT;
    DECLARE v_seats   BIGINT DEFAULT 0;
    DECLARE v_changed BIGINT DEFAULT 0;
    DECLARE v_cursor CURSOR FOR SELECT service_id FROM leader_election ORDER BY service_id;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        ROLLBACK;
        SET SESSION innodb_lock_wait_timeout = v_wait;
        RESIGNAL;
    END;

    SET v_wait = @@session.innodb_lock_wait_timeout;
    -- 1. Take the flush row (after any seat being created commits), in a transaction of its own.
    SET v_tries = 0;
    flush_row: LOOP
        BEGIN
            DECLARE EXIT HANDLER FOR 1205, 1213 BEGIN
                ROLLBACK;
                SET v_tries = v_tries + 1;
                IF v_tries >= 10 THEN
                    SET SESSION innodb_lock_wait_timeout = v_wait;
                    RESIGNAL;
                END IF;
            END;
            SET SESSION innodb_lock_wait_timeout = 1;
            START TRANSACTION;
            INSERT INTO leader_election_access_flush (id, flushes, flushed_at, flushed_by)
            VALUES (1, 1, UTC_TIMESTAMP(6), USER())
                ON DUPLICATE KEY UPDATE flushes = flushes + 1, flushed_at = UTC_TIMESTAMP(6),
                                        flushed_by = USER();
            COMMIT;
            LEAVE flush_row;
        END;
    END LOOP flush_row;

    -- 2. Every seat that exists now, each in a transaction of its own.
    OPEN v_cursor;
    seats: LOOP
        FETCH v_cursor INTO v_sid;
        IF v_done = 1 THEN
            LEAVE seats;
        END IF;
        SET v_seats = v_seats + 1, v_tries = 0;
        seat: LOOP
            BEGIN
                DECLARE EXIT HANDLER FOR 1205, 1213 BEGIN
                    ROLLBACK;
                    SET v_tries = v_tries + 1;
                    IF v_tries >= 10 THEN
                        SET SESSION innodb_lock_wait_timeout = v_wait;
                        RESIGNAL;
                    END IF;
                END;
                START TRANSACTION;
                CALL leader_election_access_copy(v_sid, v_denied);
                UPDATE leader_election SET access_denied = v_denied
                 WHERE service_id = v_sid AND NOT (access_denied <=> v_denied);
                SET v_changed = v_changed + ROW_COUNT();
                COMMIT;
                LEAVE seat;
            END;
        END LOOP seat;
    END LOOP seats;
    CLOSE v_cursor;
    SET SESSION innodb_lock_wait_timeout = v_wait;
    SET p_seats = v_seats, p_changed = v_changed;
END;
