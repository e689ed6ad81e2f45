-- mysqlleader V1: the election table, the history of terms, and a readable view of the history.
--
-- Times are DATETIME(6) in UTC, always taken from the database server's clock (UTC_TIMESTAMP(6)).
-- Ids are VARBINARY so that they compare exactly, byte for byte (no collation, no PAD SPACE):
-- 128 characters of utf8mb4 take at most 512 bytes. Every statement here can run again safely.

-- One row per election group ("service"). The seat is held while leader_id is set and
-- lease_expires_at lies in the future; a follower's campaign only reads this row.
CREATE TABLE IF NOT EXISTS leader_election (
    service_id       VARBINARY(512)  NOT NULL COMMENT 'election group, utf8mb4 text of 1 to 128 characters',
    leader_id        VARBINARY(512)  NULL     COMMENT 'node holding the seat; NULL when vacant',
    term             BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'fencing token: +1 at every acquisition, never lowered',
    lease_ms         INT UNSIGNED    NULL     COMMENT 'length of the current lease in milliseconds',
    term_started_at  DATETIME(6)     NULL     COMMENT 'UTC, when the current term began',
    renewed_at       DATETIME(6)     NULL     COMMENT 'UTC, the last acquisition or renewal',
    lease_expires_at DATETIME(6)     NULL     COMMENT 'UTC, the end of the lease; NULL when vacant',
    PRIMARY KEY (service_id),
    KEY leader_election_expiry (lease_expires_at)
) ENGINE=InnoDB COMMENT='mysqlleader: one row per election group';

-- One row per term. ended_at/ended_how stay NULL until the term is closed: by the next
-- acquisition, by resign/reelect/force_leader, or by the optional expiry event.
CREATE TABLE IF NOT EXISTS leader_election_history (
    service_id VARBINARY(512)  NOT NULL,
    term       BIGINT UNSIGNED NOT NULL,
    leader_id  VARBINARY(512)  NOT NULL,
    lease_ms   INT UNSIGNED    NOT NULL COMMENT 'lease length at acquisition, milliseconds',
    began_at   DATETIME(6)     NOT NULL COMMENT 'UTC',
    began_how  ENUM('elected', 'forced') NOT NULL,
    ended_at   DATETIME(6)     NULL     COMMENT 'UTC; for expired terms the moment the lease ran out',
    ended_how  ENUM('expired', 'resigned', 'reelected', 'forced_out') NULL,
    PRIMARY KEY (service_id, term)
) ENGINE=InnoDB COMMENT='mysqlleader: one row per term';

-- The history as people read it: ids as text, and a term whose lease ran out but that nobody has
-- closed yet (no takeover, expiry event off) shown as ended 'expired' at the end of its lease.
CREATE OR REPLACE SQL SECURITY INVOKER VIEW leader_election_terms AS
SELECT CAST(h.service_id AS CHAR CHARACTER SET utf8mb4) AS service_id,
       h.term,
       CAST(h.leader_id AS CHAR CHARACTER SET utf8mb4) AS leader_id,
       h.lease_ms,
       h.began_at,
       h.began_how,
       CASE WHEN h.ended_at IS NOT NULL THEN h.ended_at
            WHEN e.term = h.term AND e.leader_id IS NOT NULL
                 AND e.lease_expires_at <= UTC_TIMESTAMP(6) THEN e.lease_expires_at
       END AS ended_at,
       CASE WHEN h.ended_at IS NOT NULL THEN h.ended_how
            WHEN e.term = h.term AND e.leader_id IS NOT NULL
                 AND e.lease_expires_at <= UTC_TIMESTAMP(6) THEN 'expired'
       END AS ended_how
FROM leader_election_history h
LEFT JOIN leader_election e ON e.service_id = h.service_id;
