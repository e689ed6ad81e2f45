-- Sets the session variable @mysqlleader_wsrep_on to 1 when this session's writes replicate
-- through a group in which a lock taken on one member is not seen by the others, so that
-- assert_leader must put a write into the fenced transaction (V4), else to 0. Internal; reads
-- and writes no table of the project's.
-- * MariaDB: Galera (@@session.wsrep_on). @@wsrep_on is unknown to a server without Galera
--   (error 1193, raised when a routine that names it is created), so it is read through a
--   prepared statement; when the server's prepared-statement table is full (1461: any login
--   can fill it) it reads information_schema.SESSION_VARIABLES instead.
-- * MySQL: Group Replication, in either mode (in single-primary mode the write costs one row
--   more per fence, and a switch of primary cannot let a fence go unseen): the server has a
--   group name (performance_schema.global_variables, readable by every account; no row, or an
--   empty one, without the plugin or a group).
-- assert_leader probes once per connection and keeps the answer in that variable: a node does
-- not join or leave its group while a connection lasts (a session that changes its own wsrep_on
-- should set @mysqlleader_wsrep_on = NULL after, to be probed again). When no way answers, the
-- error stands and the variable stays NULL (so the next assert_leader probes again: an unknown
-- answer is never taken for "no group").
CREATE PROCEDURE leader_election_probe_wsrep()
    READS SQL DATA
    SQL SECURITY INVOKER
    COMMENT 'mysqlleader: internal; @mysqlleader_wsrep_on := a fence must write (Galera, Group Replication)'
BEGIN
    SET @mysqlleader_wsrep_on = NULL;
    BEGIN
        -- 1193: unknown system variable (no Galera); 1243: the statement was not prepared.
        DECLARE EXIT HANDLER FOR 1193, 1243 SET @mysqlleader_wsrep_on = 0;                          -- [mariadb]
        DECLARE EXIT HANDLER FOR 1461 BEGIN                                                          -- [mariadb]
            SELECT COALESCE(MAX(VARIABLE_VALUE = 'ON'), 0) INTO @mysqlleader_wsrep_on                -- [mariadb]
              FROM information_schema.SESSION_VARIABLES WHERE VARIABLE_NAME = 'WSREP_ON';            -- [mariadb]
        END;                                                                                         -- [mariadb]
        PREPARE mysqlleader_wsrep_probe FROM 'SET @mysqlleader_wsrep_on = COALESCE(@@session.wsrep_on = 1, 0)'; -- [mariadb]
        EXECUTE mysqlleader_wsrep_probe;                                                             -- [mariadb]
        DEALLOCATE PREPARE mysqlleader_wsrep_probe;                                                  -- [mariadb]
        SELECT COALESCE(MAX(VARIABLE_VALUE <> ''), 0) INTO @mysqlleader_wsrep_on                     -- [mysql]
          FROM performance_schema.global_variables                                                   -- [mysql]
         WHERE VARIABLE_NAME = 'group_replication_group_name';                                       -- [mysql]
    END;
END;
