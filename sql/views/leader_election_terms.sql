-- The history as people read it: ids as text, who began and ended each term (began_by,
-- ended_by: USER() of the session; NULL for an end the server decided), and a term whose lease
-- ran out but that nobody has closed yet (no takeover, expiry event off) shown as ended
-- 'expired' at the end of its lease.
CREATE SQL SECURITY INVOKER VIEW leader_election_terms AS
SELECT CAST(h.service_id AS CHAR CHARACTER SET utf8mb4) AS service_id,
       h.term,
       CAST(h.leader_id AS CHAR CHARACTER SET utf8mb4) AS leader_id,
       h.lease_ms,
       h.began_at,
       h.began_how,
       h.began_by,
       CASE WHEN h.ended_at IS NOT NULL THEN h.ended_at
            WHEN e.term = h.term AND e.leader_id IS NOT NULL
                 AND e.lease_expires_at <= UTC_TIMESTAMP(6) THEN e.lease_expires_at
       END AS ended_at,
       CASE WHEN h.ended_at IS NOT NULL THEN h.ended_how
            WHEN e.term = h.term AND e.leader_id IS NOT NULL
                 AND e.lease_expires_at <= UTC_TIMESTAMP(6) THEN 'expired'
       END AS ended_how,
       h.ended_by
FROM leader_election_history h
LEFT JOIN leader_election_seats e ON e.service_id = h.service_id;
