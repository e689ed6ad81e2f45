-- benches/election/before_40/leader_election_bound_idle_tx.sql: sql/routines/leader_election_bound_idle_tx.sql as it was before issue 40 touched it,
-- copied byte for byte from git (`git show 5085e36^:sql/routines/leader_election_bound_idle_tx.sql`, commit 1c2869c).
-- The benchmark installs it over the migrated schema in mysqlleader_bench_before40 (like
-- campaign (V6)), so that follower, renew and fence measure it side by side with the tree.
-- Not part of the schema; do not edit (it is a record).
-- Lowers this session's idle_transaction_timeout (MariaDB) to p_seconds unless it is already
-- lower (0 means none); does nothing where the variable is unknown (MySQL), nor when the
-- server's prepared-statement table is full (1461): the fence holds without the bound. Internal.
CREATE PROCEDURE leader_election_bound_idle_tx(IN p_seconds BIGINT)
    NO SQL
    SQL SECURITY INVOKER
    COMMENT 'mysqlleader internal: lower the session idle_transaction_timeout to p_seconds'
BEGIN
    DECLARE EXIT HANDLER FOR 1193, 1243, 1238, 1461 BEGIN END;
    SET @mysqlleader_idle_tx = p_seconds;
    PREPARE mysqlleader_idle_tx_set FROM
        'SET SESSION idle_transaction_timeout = IF(@@session.idle_transaction_timeout = 0, @mysqlleader_idle_tx, LEAST(@@session.idle_transaction_timeout, @mysqlleader_idle_tx))';
    EXECUTE mysqlleader_idle_tx_set;
    DEALLOCATE PREPARE mysqlleader_idle_tx_set;
END;
