-- mysqlleader V16: a node lease counts every seat that leaves it (issue 42, "Fleets": followers
-- that stay quiet while a lease is valid, at 10,000 services as at 10).
--
-- A follower node lists every seat it follows once a lease, to learn whether its leader still
-- holds it: at 10,000 services that read, not the leaders' renews, was most of the server's work.
-- A seat that hangs on a node lease (sql/V15__node_leases.sql) is held for as long as the lease
-- is valid and the seat has not left it, so a follower may read the lease's row instead of the
-- seat's, if it can tell that no seat has left the lease since it saw the seat there:
-- leader_election_lease.moved counts every seat that left the lease, whatever the way (a resign,
-- a takeover, an operator's change, a let-go by the lease's own renew, a move onto a newer lease
-- of the node), written in the same transaction as the seat (the trigger, and the few
-- set-wide statements that vacate seats without it: sql/triggers/leader_election_record_term.sql,
-- resign_seats, renew_lease). lost, which counts takeovers only, stays for the lease's own
-- session (src/session/on_lease.rs), which knows its own resigns.
--
-- Every statement here can run again safely. Adding a column at the end with a default is
-- instant (MariaDB 10.3+, MySQL 8.0.12+): no renew stops meanwhile. Until the installer has
-- replaced the routines, moved stays 0 and no procedure answers it: a client then lists the
-- seats it follows, as before.

DROP PROCEDURE IF EXISTS leader_election_v16_add_moved;
CREATE PROCEDURE leader_election_v16_add_moved()
    MODIFIES SQL DATA
    SQL SECURITY INVOKER
BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.COLUMNS
                    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'leader_election_lease'
                      AND COLUMN_NAME = 'moved') THEN
        ALTER TABLE leader_election_lease
          ADD COLUMN moved BIGINT UNSIGNED NOT NULL DEFAULT 0
              COMMENT 'seats that left this lease so far, any way (a follower compares it: watch_leases)';
    END IF;
END;
CALL leader_election_v16_add_moved();
DROP PROCEDURE IF EXISTS leader_election_v16_add_moved;
