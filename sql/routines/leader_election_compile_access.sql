-- Writes one account's row of leader_election_account from its rows of leader_election_access
-- (sql/V14__access_by_account.sql, note 2): its patterns, or no row when it has none; the row's
-- version goes up only when its patterns change. p_account: the user name's utf8mb4 bytes.
-- Runs in the caller's transaction (`mysqlleader grant` calls it in the one that changes the
-- patterns, so that both commit together) and locks that account's rows only. Internal.
CREATE PROCEDURE leader_election_compile_access(IN p_account VARBINARY(400), OUT p_changed INT)
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: one account''s limit, as calls read it, from leader_election_access'
BEGIN
    DECLARE v_patterns LONGTEXT CHARACTER SET ascii;
    DECLARE v_rows     BIGINT;
    DECLARE v_old      LONGTEXT CHARACTER SET ascii;
    DECLARE v_gcl      BIGINT UNSIGNED;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_gcl IS NOT NULL THEN
            SET SESSION group_concat_max_len = v_gcl;
        END IF;
        RESIGNAL;
    END;
    -- @include whole_lists v_gcl
    -- The account's rows, locked first, so that the read after them sees the latest committed
    -- ones (and the caller's own changes); then their patterns, in key order.
    SELECT COUNT(*) INTO v_rows FROM leader_election_access WHERE account = p_account FOR UPDATE;
    SELECT JSON_ARRAYAGG(a.h) INTO v_patterns
      FROM (SELECT HEX(service_pattern) AS h FROM leader_election_access
             WHERE account = p_account ORDER BY service_pattern LIMIT 18446744073709551615) AS a;
    SET SESSION group_concat_max_len = v_gcl;
    -- The row as it is: written only when it changes, so that a flush that changes nothing
    -- never waits for a lock on an account's row (its own fenced transaction may share-lock it).
    SELECT MAX(patterns) INTO v_old FROM leader_election_account WHERE account = p_account;
    IF v_patterns <=> v_old THEN
        SET p_changed = 0;
    ELSEIF v_patterns IS NULL THEN
        DELETE FROM leader_election_account WHERE account = p_account;
        SET p_changed = ROW_COUNT();
    ELSE
        INSERT INTO leader_election_account (account, patterns, version, changed_at, changed_by)
        VALUES (p_account, v_patterns, 1, UTC_TIMESTAMP(6), USER())
            ON DUPLICATE KEY UPDATE version = version + 1, changed_at = UTC_TIMESTAMP(6),
                                    changed_by = USER(), patterns = v_patterns;
        SET p_changed = 1;
    END IF;
END;
