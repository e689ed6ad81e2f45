-- Lowers this session's idle_transaction_timeout (MariaDB) to p_seconds unless it is already
-- lower (0 means none); does nothing where the variable is unknown (MySQL), nor when the
-- server's prepared-statement table is full (1461): the fence holds without the bound. The
-- value it found first is kept in @mysqlleader_idle_tx_was (until someone sets that to NULL),
-- so that whoever ends the fenced transaction can restore it, as the library's units of work do
-- (src/fenced.rs, RESTORE_IDLE_BOUND). Internal.
CREATE PROCEDURE leader_election_bound_idle_tx(IN p_seconds BIGINT)
    NO SQL
    SQL SECURITY INVOKER
    COMMENT 'mysqlleader internal: lower the session idle_transaction_timeout to p_seconds'
BEGIN
    DECLARE EXIT HANDLER FOR 1193, 1243, 1238, 1461 BEGIN END;
    SET @mysqlleader_idle_tx = p_seconds;
    -- Prepared, as the statement below: MySQL knows no such variable, and would refuse the routine.
    PREPARE mysqlleader_idle_tx_set FROM
        'SET @mysqlleader_idle_tx_was = COALESCE(@mysqlleader_idle_tx_was, @@session.idle_transaction_timeout)';
    EXECUTE mysqlleader_idle_tx_set;
    PREPARE mysqlleader_idle_tx_set FROM
        'SET SESSION idle_transaction_timeout = IF(@@session.idle_transaction_timeout = 0, @mysqlleader_idle_tx, LEAST(@@session.idle_transaction_timeout, @mysqlleader_idle_tx))';
    EXECUTE mysqlleader_idle_tx_set;
    DEALLOCATE PREPARE mysqlleader_idle_tx_set;
END;
