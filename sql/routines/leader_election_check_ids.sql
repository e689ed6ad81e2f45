-- Rejects a list of service ids that is not a JSON array of distinct strings of 1 to 128
-- characters (renew_seats, campaign_seats): SQLSTATE 45000 'mysqlleader: service_ids ...' saying
-- what is wrong. An element that is null, a number, an object or an array, a duplicate, or an
-- id over 128 characters is refused, never skipped or cut. Then p_allowed is the listed ids the
-- session's account may act on (sql/V14__access_by_account.sql: from its patterns alone, before
-- any seat is read), a JSON array; all of them for an account that is not limited. Internal;
-- reads the account's row of leader_election_account only.
CREATE PROCEDURE leader_election_check_ids(
    IN  p_ids     LONGTEXT CHARACTER SET utf8mb4,
    OUT p_allowed LONGTEXT CHARACTER SET utf8mb4)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: rejects a bad list of service ids; the ones this account may act on'
BEGIN
    DECLARE v_msg      VARCHAR(128);
    DECLARE v_n        BIGINT;
    DECLARE v_strings  BIGINT;
    DECLARE v_good     BIGINT;
    DECLARE v_distinct BIGINT;
    DECLARE v_patterns LONGTEXT CHARACTER SET ascii;

    IF p_ids IS NULL OR JSON_VALID(p_ids) = 0 OR JSON_TYPE(p_ids) <> 'ARRAY' THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31000,
            MESSAGE_TEXT = 'mysqlleader: service_ids must be a JSON array of service ids';
    END IF;
    -- Each element: a string (its JSON type), of 1 to 128 characters, none twice (compared byte
    -- for byte, as the seats' keys are). One pass over the list.
    SELECT COUNT(*), COALESCE(SUM(JSON_TYPE(j.v) = 'STRING'), 0),
           COALESCE(SUM(CHAR_LENGTH(j.sid) BETWEEN 1 AND 128), 0), COUNT(DISTINCT CAST(j.sid AS BINARY))
      INTO v_n, v_strings, v_good, v_distinct
      FROM JSON_TABLE(p_ids, '$[*]' COLUMNS (v JSON PATH '$', sid LONGTEXT CHARACTER SET utf8mb4 PATH '$')) AS j;
    IF v_strings <> v_n THEN
        SET v_msg = CONCAT('mysqlleader: service_ids must hold only strings (', v_n - v_strings,
                           ' of ', v_n, ' elements are not)');
    ELSEIF v_good <> v_n THEN
        SET v_msg = CONCAT('mysqlleader: service_ids must hold ids of 1 to 128 characters (',
                           v_n - v_good, ' are not)');
    ELSEIF v_distinct <> v_n THEN
        SET v_msg = CONCAT('mysqlleader: service_ids must not list an id twice (',
                           v_n - v_distinct, ' repeated)');
    END IF;
    IF v_msg IS NOT NULL THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31000, MESSAGE_TEXT = v_msg;
    END IF;

    -- The ones the account may act on: its patterns against the ids, no table read.
    CALL leader_election_account_patterns(v_patterns);
    IF v_patterns IS NULL THEN
        SET p_allowed = p_ids;
    ELSE
        SELECT COALESCE(JSON_ARRAYAGG(j.sid), JSON_ARRAY()) INTO p_allowed
          FROM JSON_TABLE(p_ids, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j
         WHERE EXISTS (SELECT 1
                         FROM JSON_TABLE(v_patterns, '$[*]' COLUMNS (h VARCHAR(1100) CHARACTER SET ascii PATH '$')) AS p
                        WHERE CAST(j.sid AS BINARY) LIKE UNHEX(p.h));
    END IF;
END;
