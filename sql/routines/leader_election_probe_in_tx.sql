-- Sets @mysqlleader_in_tx to 1 when this session has a transaction open, 0 when it has none,
-- NULL where the server cannot tell. Internal; reads and writes no table.
-- * MariaDB: @@in_transaction (error 1193 on MySQL when a routine names it, hence the prepared
--   statement). When the server's prepared-statement table is full (1461: any login can fill it),
--   it reads information_schema.SESSION_VARIABLES instead (slower, but needs no slot).
-- * MySQL has no such variable. It refuses to change the characteristics of the next
--   transaction while one is open (1568), so the probe sets the next transaction's isolation
--   level to the session's own: refused inside a transaction (nothing changes), a no-op outside
--   one, except that it replaces a one-shot `SET TRANSACTION ISOLATION LEVEL` the caller sent
--   just before the call; every routine that probes reads a table in its own autocommit
--   statement, which uses up such a one-shot level anyway (tests/sql_mysql.rs).
CREATE PROCEDURE leader_election_probe_in_tx()
    NO SQL
    SQL SECURITY INVOKER
    COMMENT 'mysqlleader internal: @mysqlleader_in_tx := this session has a transaction open'
BEGIN
    SET @mysqlleader_in_tx = NULL;
    BEGIN
        DECLARE EXIT HANDLER FOR 1193, 1243 SET @mysqlleader_in_tx = NULL;                         -- [mariadb]
        DECLARE EXIT HANDLER FOR 1461 BEGIN                                                         -- [mariadb]
            DECLARE EXIT HANDLER FOR SQLEXCEPTION SET @mysqlleader_in_tx = NULL;                   -- [mariadb]
            SELECT MAX(CAST(VARIABLE_VALUE AS UNSIGNED)) INTO @mysqlleader_in_tx                    -- [mariadb]
              FROM information_schema.SESSION_VARIABLES WHERE VARIABLE_NAME = 'IN_TRANSACTION';     -- [mariadb]
        END;                                                                                        -- [mariadb]
        PREPARE mysqlleader_in_tx_probe FROM 'SET @mysqlleader_in_tx = @@in_transaction';          -- [mariadb]
        EXECUTE mysqlleader_in_tx_probe;                                                            -- [mariadb]
        DEALLOCATE PREPARE mysqlleader_in_tx_probe;                                                 -- [mariadb]
        DECLARE EXIT HANDLER FOR 1568 SET @mysqlleader_in_tx = 1;                                   -- [mysql]
        SET @@transaction_isolation = @@SESSION.transaction_isolation;                              -- [mysql]
        SET @mysqlleader_in_tx = 0;                                                                 -- [mysql]
    END;
END;
