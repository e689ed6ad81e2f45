-- Raises 45002 unless the session's account may act on the service: from the account's row of
-- leader_election_account alone (sql/V14__access_by_account.sql, note 1), before the caller
-- reads any seat. Internal.
CREATE PROCEDURE leader_election_check_access(IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: 45002 unless this account may act on the service'
BEGIN
    DECLARE v_patterns LONGTEXT CHARACTER SET ascii;
    DECLARE v_allowed  INT;
    CALL leader_election_account_patterns(v_patterns);
    IF v_patterns IS NOT NULL THEN
        -- The patterns' bytes against the service's: no table is read.
        SELECT COUNT(*) INTO v_allowed
          FROM JSON_TABLE(v_patterns, '$[*]' COLUMNS (h VARCHAR(1100) CHARACTER SET ascii PATH '$')) AS p
         WHERE CAST(p_service_id AS BINARY) LIKE UNHEX(p.h);
        IF v_allowed = 0 THEN
            CALL leader_election_deny(p_service_id);
        END IF;
    END IF;
END;
