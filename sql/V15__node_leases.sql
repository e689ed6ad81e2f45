-- mysqlleader V15: one lease row per node session, the seats it leads hanging on it (issue 42,
-- "Fleets": a renew that costs one row, not one row per seat; etcd's model, where keys are
-- attached to a lease and only the lease is kept alive).
--
-- 1. leader_election_lease holds one row per lease a session was granted (grant_lease): the
--    node it is for, the account that was granted it (the only one that may renew it, take
--    seats onto it or release seats from it: no account keeps another's seats alive), its
--    length and its end on the database's clock. A renew (renew_lease) writes this one row,
--    whatever the number of seats on it.
-- 2. leader_election.lease_id names the lease a seat hangs on (NULL: the seat stands on its own
--    lease_expires_at, as before V15: plain electors, SQL clients, single campaigns). A seat's
--    lease ends at the later of its own lease_expires_at and its lease's end
--    (sql/views/leader_election_seats.sql says it once; every routine reads the seats through
--    that view or joins the lease the same way). The trigger lets go of the lease whenever a
--    seat's term ends or it is vacated.
-- 3. lost counts the seats taken from the lease by others (a takeover of an expired lease, an
--    operator's force, handover or reelect, the expiry event): each such change writes the
--    lease's row, so that on Galera and Group Replication it conflicts with a renew of the same
--    lease through another member, as a takeover of a seat conflicted with the seat's renew.
--
-- Every statement here can run again safely. The procedures of V14 keep working while this runs
-- and until the installer replaces them: no seat hangs on a lease before the new procedures are
-- in place, and a seat with no lease reads as before. Adding a nullable column at the end is
-- instant (MariaDB 10.3+, MySQL 8.0.12+), the index is built online: no renew stops meanwhile.

CREATE TABLE IF NOT EXISTS leader_election_lease (
    lease_id   BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    node_id    VARBINARY(512)  NOT NULL COMMENT 'the node the lease was granted for',
    account    VARBINARY(400)  NOT NULL COMMENT 'user name (USER() before @) of the session it was granted to, utf8mb4 bytes',
    lease_ms   INT UNSIGNED    NOT NULL COMMENT 'length of the lease at its last renew, milliseconds',
    granted_at DATETIME(6)     NOT NULL COMMENT 'UTC',
    renewed_at DATETIME(6)     NOT NULL COMMENT 'UTC, the last grant or renew',
    expires_at DATETIME(6)     NOT NULL COMMENT 'UTC, the end of the lease',
    lost       BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'seats taken from this lease by others',
    PRIMARY KEY (lease_id),
    KEY leader_election_lease_owner (account, expires_at)
) ENGINE=InnoDB COMMENT='mysqlleader: one row per node session lease; its seats hang on it';

DROP PROCEDURE IF EXISTS leader_election_v15_add_lease;
CREATE PROCEDURE leader_election_v15_add_lease()
    MODIFIES SQL DATA
    SQL SECURITY INVOKER
BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.COLUMNS
                    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'leader_election'
                      AND COLUMN_NAME = 'lease_id') THEN
        ALTER TABLE leader_election
          ADD COLUMN lease_id BIGINT UNSIGNED NULL DEFAULT NULL
              COMMENT 'the node lease this seat hangs on (leader_election_lease); NULL: its own lease only';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM information_schema.STATISTICS
                    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'leader_election'
                      AND INDEX_NAME = 'leader_election_by_lease') THEN
        ALTER TABLE leader_election ADD KEY leader_election_by_lease (lease_id);
    END IF;
END;
CALL leader_election_v15_add_lease();
DROP PROCEDURE IF EXISTS leader_election_v15_add_lease;
