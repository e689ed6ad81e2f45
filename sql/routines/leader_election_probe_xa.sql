-- Sets @mysqlleader_xa to 1 when this session is inside an XA transaction, 0 when it is not,
-- NULL where the server cannot tell. Internal; reads and writes no table, and changes no
-- transaction: `XA END` of an xid that cannot exist fails with XAER_NOTA (1397) inside an XA
-- transaction and with XAER_RMFAIL (1399) outside one (MariaDB 10.6-11, MySQL 8.0-9.7).
-- MariaDB runs it as a prepared statement (a server that does not prepare XA statements
-- answers 1295 and the session is "unknown"); MySQL refuses to prepare XA statements (1295)
-- but runs one in a routine's body, so there it is written out.
CREATE PROCEDURE leader_election_probe_xa()
    NO SQL
    SQL SECURITY INVOKER
    COMMENT 'mysqlleader internal: @mysqlleader_xa := this session is inside an XA transaction'
BEGIN
    SET @mysqlleader_xa = NULL;
    BEGIN
        DECLARE EXIT HANDLER FOR 1397 SET @mysqlleader_xa = 1;
        DECLARE EXIT HANDLER FOR 1399 SET @mysqlleader_xa = 0;
        DECLARE EXIT HANDLER FOR SQLEXCEPTION SET @mysqlleader_xa = NULL;
        PREPARE mysqlleader_xa_probe FROM 'XA END ''mysqlleader: no such xid''';                   -- [mariadb]
        EXECUTE mysqlleader_xa_probe;                                                               -- [mariadb]
        XA END 'mysqlleader: no such xid';                                                          -- [mysql]
    END;
    BEGIN                                                                                           -- [mariadb]
        DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END;                                        -- [mariadb]
        DEALLOCATE PREPARE mysqlleader_xa_probe;                                                    -- [mariadb]
    END;                                                                                            -- [mariadb]
END;
