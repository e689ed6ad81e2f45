-- leader_election_flush_access: put leader_election_access into effect (sql/V14__access_by_account.sql,
-- note 2): writes each account's row of leader_election_account, which calls read. Run it after
-- changing leader_election_access by hand; `mysqlleader grant --service` does the same for its
-- one account in the transaction that changes its patterns. It commits any transaction the
-- caller has open first, as START TRANSACTION does, and touches no seat. Result: accounts (how
-- many accounts it looked at), changed (how many of their rows it rewrote).
CREATE PROCEDURE leader_election_flush_access()
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: put leader_election_access into effect (after a change by hand)'
BEGIN
    DECLARE v_accounts BIGINT;
    DECLARE v_changed  BIGINT;
    COMMIT;
    CALL leader_election_flush_copies(v_accounts, v_changed);
    SELECT v_accounts AS accounts, v_changed AS changed;
END;
