-- Sets the session variable @mysqlleader_wsrep_on to 1 when this session's writes replicate
-- through Galera (@@session.wsrep_on), else to 0. Internal; reads and writes no table.
-- @@wsrep_on is unknown to a MySQL server without Galera (error 1193, raised when a routine
-- that names it is created), so it is read through a prepared statement. assert_leader probes
-- once per connection and keeps the answer in that variable: a node does not join or leave
-- Galera while a connection lasts (a session that changes its own wsrep_on should set
-- @mysqlleader_wsrep_on = NULL after, to be probed again). When the server's prepared-statement
-- table is full (1461: any login can fill it) it reads information_schema.SESSION_VARIABLES
-- instead; when neither answers, the error stands and the variable stays NULL (so the next
-- assert_leader probes again: an unknown answer is never taken for "no Galera").
CREATE PROCEDURE leader_election_probe_wsrep()
    NO SQL
    SQL SECURITY INVOKER
    COMMENT 'mysqlleader: internal; @mysqlleader_wsrep_on := this session replicates through Galera'
BEGIN
    SET @mysqlleader_wsrep_on = NULL;
    BEGIN
        -- 1193: unknown system variable (no Galera); 1243: the statement was not prepared.
        DECLARE EXIT HANDLER FOR 1193, 1243 SET @mysqlleader_wsrep_on = 0;
        DECLARE EXIT HANDLER FOR 1461 BEGIN
            SELECT COALESCE(MAX(VARIABLE_VALUE = 'ON'), 0) INTO @mysqlleader_wsrep_on
              FROM information_schema.SESSION_VARIABLES WHERE VARIABLE_NAME = 'WSREP_ON';
        END;
        PREPARE mysqlleader_wsrep_probe FROM 'SET @mysqlleader_wsrep_on = COALESCE(@@session.wsrep_on = 1, 0)';
        EXECUTE mysqlleader_wsrep_probe;
        DEALLOCATE PREPARE mysqlleader_wsrep_probe;
    END;
END;
