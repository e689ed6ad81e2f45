-- Sets @mysqlleader_in_tx to @@in_transaction (MariaDB), or NULL where the server has no such
-- variable (MySQL: error 1193 when a routine names it, hence the prepared statement). When the
-- server's prepared-statement table is full (1461: any login can fill it), it reads
-- information_schema.SESSION_VARIABLES instead (MariaDB; slower, but needs no slot). Internal.
CREATE PROCEDURE leader_election_probe_in_tx()
    NO SQL
    SQL SECURITY INVOKER
    COMMENT 'mysqlleader internal: @mysqlleader_in_tx := @@in_transaction, NULL when unknown'
BEGIN
    SET @mysqlleader_in_tx = NULL;
    BEGIN
        DECLARE EXIT HANDLER FOR 1193, 1243 SET @mysqlleader_in_tx = NULL;
        DECLARE EXIT HANDLER FOR 1461 BEGIN
            DECLARE EXIT HANDLER FOR SQLEXCEPTION SET @mysqlleader_in_tx = NULL;
            SELECT MAX(CAST(VARIABLE_VALUE AS UNSIGNED)) INTO @mysqlleader_in_tx
              FROM information_schema.SESSION_VARIABLES WHERE VARIABLE_NAME = 'IN_TRANSACTION';
        END;
        PREPARE mysqlleader_in_tx_probe FROM 'SET @mysqlleader_in_tx = @@in_transaction';
        EXECUTE mysqlleader_in_tx_probe;
        DEALLOCATE PREPARE mysqlleader_in_tx_probe;
    END;
END;
