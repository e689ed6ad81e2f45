-- The caller's per-service limit (sql/V14__access_by_account.sql, note 1): the patterns of its
-- account's row of leader_election_account, a JSON array of each pattern's bytes in hex; NULL
-- when the account has no row (not limited). One read by the table's key, of nothing else: no
-- seat is read before access is decided. Internal.
CREATE PROCEDURE leader_election_account_patterns(OUT p_patterns LONGTEXT CHARACTER SET ascii)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: the patterns the caller''s account is limited to (NULL: none)'
BEGIN
    SELECT MAX(patterns) INTO p_patterns
      FROM leader_election_account
     WHERE account = CAST(CONVERT(LEFT(USER(), CHAR_LENGTH(USER()) - CHAR_LENGTH(SUBSTRING_INDEX(USER(), '@', -1)) - 1)
                                  USING utf8mb4) AS BINARY);
END;
