-- mysqlleader V14: per-service access decided from the caller's account alone, before any seat
-- is read (issue "Tenant isolation by construction").
--
-- From V8 to V13 a call decided access from a copy kept on each seat (leader_election.
-- access_denied), so it read the seat before it knew whether the caller may see it; a call cut
-- between two statements in a session the caller had set up (SERIALIZABLE, autocommit off) kept
-- that read's share lock on another tenant's seat, and a grant had to rewrite every seat, so one
-- tenant's open fence vetoed every grant. From V14:
--
-- 1. leader_election_account holds, per limited account, its patterns as one row, keyed by the
--    account's user name as utf8mb4 bytes (compared byte for byte, as the server compares user
--    names): a call reads that one row by its key, and nothing else, to decide access. Under
--    SERIALIZABLE inside the caller's own transaction (assert_leader: the one call that runs
--    there) that read share-locks the caller's own row only (a key lookup locks no gap when the
--    row exists). An account without a row is not limited.
-- 2. leader_election_access stays what is edited (by `mysqlleader grant --service`, or by hand);
--    leader_election_compile_access(account) writes that account's row from it, and
--    leader_election_flush_access() does so for every account, each in a transaction of its own.
--    `grant` changes an account's patterns and its row in one transaction: concurrent grants of
--    one account end in the last one's limit, and a grant never touches a seat.
-- 3. patterns is a JSON array of the patterns' bytes in hexadecimal (a pattern is bytes, and
--    JSON holds text); version counts the changes of the row.
-- 4. leader_election.access_denied, the seats' copies, is no longer read or written (left in
--    place: dropping a column of the seats' table would stop every renew while it runs).
--
-- Every statement here can run again safely.

CREATE TABLE IF NOT EXISTS leader_election_account (
    account    VARBINARY(400)  NOT NULL COMMENT 'user name of the session (USER() before @), utf8mb4 bytes',
    patterns   LONGTEXT        CHARACTER SET ascii NOT NULL
                               COMMENT 'JSON array of the LIKE patterns it may act on, each its bytes in hex',
    version    BIGINT UNSIGNED NOT NULL DEFAULT 1 COMMENT 'how many times this row was written',
    changed_at DATETIME(6)     NOT NULL COMMENT 'UTC, when this row was last written',
    changed_by VARCHAR(384)    NULL COMMENT 'USER() of the session that last wrote it',
    PRIMARY KEY (account)
) ENGINE=InnoDB COMMENT='mysqlleader: per-service access as each call reads it (compiled from leader_election_access)';

-- The rows of the accounts limited now, from leader_election_access (as
-- leader_election_compile_access writes them).
INSERT INTO leader_election_account (account, patterns, version, changed_at, changed_by)
SELECT a.account,
       JSON_ARRAYAGG(HEX(a.service_pattern)),
       1, UTC_TIMESTAMP(6), USER()
  FROM leader_election_access a
 GROUP BY a.account
    ON DUPLICATE KEY UPDATE account = leader_election_account.account;

-- The seats' copies of access had two routines of their own, which nothing calls any more.
DROP PROCEDURE IF EXISTS leader_election_access_copy;
