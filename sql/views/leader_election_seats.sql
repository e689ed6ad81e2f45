-- The seats as every routine reads them (sql/V15__node_leases.sql): a seat's lease ends at the
-- later of its own lease_expires_at and the end of the node lease it hangs on (lease_id), and
-- was last renewed at the later of the two renews. This is the one definition of a seat's lease
-- end. Two kinds of routines spell it out instead of reading the view, each saying so where it
-- does: those over many seats, which join the seats to a list by their key (the lease joined the
-- same way), and the hot paths on one seat (campaign's read, am_i_leader, current_leader,
-- assert_leader), which read the seat's row and, only when it hangs on a lease, the lease's row
-- by its key: opening a view cost about 0.1 ms a statement on both servers (MariaDB 10.11,
-- MySQL 9.7, 2026-11-29), more than the rest of a follower's check.
--   GREATEST(e.lease_expires_at, COALESCE(l.expires_at, e.lease_expires_at))
--   over leader_election e LEFT JOIN leader_election_lease l ON l.lease_id = e.lease_id AND l.node_id = e.leader_id
-- Why the later of the two, and never the lease's end alone: a node counts itself leader until
-- a deadline taken before its last renew, whichever renewed it (its session's renew_lease, or a
-- campaign of the one seat); the seat must stay valid on the server until then.
-- A locking read through the view (FOR UPDATE) locks the seat and its lease's row: a takeover
-- decided under that lock cannot race a renew of the lease. Internal: no role reads it.
CREATE SQL SECURITY INVOKER VIEW leader_election_seats AS
SELECT e.service_id,
       e.leader_id,
       e.term,
       COALESCE(l.lease_ms, e.lease_ms) AS lease_ms,
       e.term_started_at,
       GREATEST(e.renewed_at, COALESCE(l.renewed_at, e.renewed_at)) AS renewed_at,
       GREATEST(e.lease_expires_at, COALESCE(l.expires_at, e.lease_expires_at)) AS lease_expires_at,
       e.lease_id,
       e.handover_to,
       e.handover_until,
       e.handover_by,
       e.handover_from,
       e.handover_from_until
FROM leader_election e
LEFT JOIN leader_election_lease l ON l.lease_id = e.lease_id AND l.node_id = e.leader_id;
