-- mysqlleader V10: per-service access rows compare byte for byte.
--
-- leader_election_access.account was VARCHAR with the schema's collation, so the table
-- compared names case- and trailing-space-insensitively: `grant TENANT_B --service ...`
-- replaced the rows of `tenant_b`. The server compares user names exactly; from V10 the table
-- does too: the name as utf8mb4 bytes (first made utf8mb4 text, whatever the schema's default
-- character set was, then bytes). The routines read it with CONVERT(account USING utf8mb4).
--
-- Every statement here can run again safely (a column that is bytes already stays as it is).

DROP PROCEDURE IF EXISTS leader_election_v10_account_bytes;
CREATE PROCEDURE leader_election_v10_account_bytes()
    MODIFIES SQL DATA
    SQL SECURITY INVOKER
BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.COLUMNS
                    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'leader_election_access'
                      AND COLUMN_NAME = 'account' AND DATA_TYPE = 'varbinary') THEN
        ALTER TABLE leader_election_access
            MODIFY account VARCHAR(80) CHARACTER SET utf8mb4 NOT NULL;
        ALTER TABLE leader_election_access
            MODIFY account VARBINARY(320) NOT NULL
            COMMENT 'user name of the session (USER() before its last @), utf8mb4 bytes, compared exactly';
    END IF;
END;
CALL leader_election_v10_account_bytes();
DROP PROCEDURE IF EXISTS leader_election_v10_account_bytes;
