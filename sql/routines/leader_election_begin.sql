-- Begins the calling routine's own transaction, at READ COMMITTED whatever isolation level or
-- autocommit the caller's session has set (sql/V14__access_by_account.sql; issue "Tenant
-- isolation by construction"). In it every plain read of a routine is a consistent read that
-- locks nothing, and its writes lock the rows they write and no gap: at REPEATABLE READ a renew
-- that moves its seat's lease to the end of the expiry index holds a lock on the gap after it
-- until its COMMIT, where every other seat's renew moves its lease too (measured on MySQL 9.7: a
-- call cut there stopped every other tenant's renews). So the only locks a routine holds are on
-- the rows it writes or reads FOR UPDATE, and a call cut at any statement boundary (KILL QUERY,
-- max_statement_time) holds no lock on another tenant's seat. Where the binary log is written
-- statement by statement, InnoDB refuses writes at READ COMMITTED (1665): there it is REPEATABLE
-- READ (Galera and Group Replication need the row format, which every server has by default).
-- A read-only transaction is always READ COMMITTED (the format refuses only writes there).
-- A routine calls it before its first read of a table, and again after each COMMIT before it
-- reads on: with autocommit off, a read after a COMMIT would otherwise open a transaction at the
-- session's level (SERIALIZABLE turns every read into a locking one). It commits what the
-- routine has open first, as START TRANSACTION would: no routine calls it inside its caller's
-- transaction. p_read_only: START TRANSACTION READ ONLY. Internal; reads no table of the schema.
CREATE PROCEDURE leader_election_begin(IN p_read_only BOOLEAN)
    READS SQL DATA
    SQL SECURITY INVOKER
    COMMENT 'mysqlleader internal: a transaction of the routine''s own, at READ COMMITTED'
BEGIN
    -- What the routine had open first (the level of the next transaction cannot be set inside one).
    COMMIT;
    IF p_read_only THEN
        SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
        START TRANSACTION READ ONLY;
    ELSE
        -- MySQL warns on every read of @@binlog_format (deprecated, to be removed): it reads
        -- the session's format from performance_schema, which any account may read but which
        -- costs about 0.4 ms (it lists every session variable; measured on MySQL 9.7). So it
        -- reads it once per connection: @mysqlleader_binlog_rows = 1 remembers that the
        -- session's format is not STATEMENT. A session may set that variable itself, but it can
        -- only claim READ COMMITTED: where the format is STATEMENT its own writes are then
        -- refused (1665), and nobody else's call is touched. Anything else is read again.
        IF @@global.log_bin = 1 AND @@session.sql_log_bin = 1 THEN
            IF NOT (@mysqlleader_binlog_rows <=> 1) THEN                                            -- [mysql]
                -- A plain count, not SET ... = NOT EXISTS (subquery): MySQL 9.7.4 crashed (signal 11,
                -- in JOIN::optimize) re-optimising that subquery of this cached statement under load.
                SELECT COUNT(*) = 0 INTO @mysqlleader_binlog_rows FROM performance_schema.session_variables  -- [mysql]
                 WHERE VARIABLE_NAME = 'binlog_format' AND VARIABLE_VALUE = 'STATEMENT';             -- [mysql]
            END IF;                                                                                 -- [mysql]
            IF @mysqlleader_binlog_rows <=> 1 THEN                                                  -- [mysql]
            IF @@session.binlog_format <> 'STATEMENT' THEN                                          -- [mariadb]
                SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
            ELSE
                SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;
            END IF;
        ELSE
            SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
        END IF;
        START TRANSACTION;
    END IF;
END;
