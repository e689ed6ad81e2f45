-- The work of leader_election_flush_access, without a result set, so that a migration can run it
-- (V8 calls it). Writes the row of leader_election_account of every account that has rows in
-- leader_election_access or a row there (sql/V14__access_by_account.sql, note 2), each account
-- in a transaction of its own that waits at most 1 s for its rows (tried again up to 10 times
-- on a lock wait timeout or a deadlock); it never touches a seat. An account whose rows stay
-- locked through its tries (a concurrent grant of it, or its own open fenced transaction under
-- SERIALIZABLE) stops it with that error: the accounts before it, in key order, are done.
-- OUT: how many accounts it looked at, how many rows it rewrote. Internal. (Until V14 it
-- rewrote the seats' copies of access, hence its name.)
CREATE PROCEDURE leader_election_flush_copies(OUT p_seats BIGINT, OUT p_changed BIGINT)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: every account''s limit, as calls read it, from leader_election_access'
BEGIN
    DECLARE v_list     LONGTEXT CHARACTER SET ascii;
    DECLARE v_at       BIGINT DEFAULT 0;
    DECLARE v_account  VARBINARY(400);
    DECLARE v_tries    INT;
    DECLARE v_wait     BIGINT;
    DECLARE v_one      INT;
    DECLARE v_accounts BIGINT DEFAULT 0;
    DECLARE v_changed  BIGINT DEFAULT 0;
    DECLARE v_gcl      BIGINT UNSIGNED;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        ROLLBACK;
        SET SESSION innodb_lock_wait_timeout = v_wait, SESSION group_concat_max_len = v_gcl;
        RESIGNAL;
    END;

    SET v_wait = @@session.innodb_lock_wait_timeout;
    -- @include whole_lists v_gcl
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    -- 1. The accounts (each name's bytes in hex), read in a transaction of their own.
    CALL leader_election_begin(TRUE);
    SELECT JSON_ARRAYAGG(h), COUNT(*) INTO v_list, v_accounts
      FROM (SELECT HEX(account) AS h FROM leader_election_access
             UNION SELECT HEX(account) FROM leader_election_account) AS a;
    COMMIT;

    -- 2. Each account, in a transaction of its own.
    WHILE v_at < v_accounts DO
        SET v_account = UNHEX(JSON_UNQUOTE(JSON_EXTRACT(v_list, CONCAT('$[', v_at, ']')))), v_tries = 0;
        one: LOOP
            BEGIN
                DECLARE EXIT HANDLER FOR 1205, 1213 BEGIN
                    ROLLBACK;
                    SET v_tries = v_tries + 1;
                    IF v_tries >= 10 THEN
                        SET SESSION innodb_lock_wait_timeout = v_wait, SESSION group_concat_max_len = v_gcl;
                        RESIGNAL;
                    END IF;
                END;
                SET SESSION innodb_lock_wait_timeout = 1;
                CALL leader_election_begin(FALSE);
                CALL leader_election_compile_access(v_account, v_one);
                COMMIT;
                SET v_changed = v_changed + (v_one > 0);
                LEAVE one;
            END;
        END LOOP one;
        SET v_at = v_at + 1;
    END WHILE;
    SET SESSION innodb_lock_wait_timeout = v_wait, SESSION group_concat_max_len = v_gcl;
    SET p_seats = v_accounts, p_changed = v_changed;
END;
