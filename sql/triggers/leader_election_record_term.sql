-- leader_election_record_term: the history of a seat's terms, written by the very statement
-- that changes the seat (sql/V13__term_and_history_in_one_statement.sql), so that no statement
-- killed or timed out part way can leave a term without its history row, or a history that
-- says a term ended while the seat still holds it: InnoDB rolls a failed statement back whole,
-- with everything its triggers wrote.
--
-- A writer that gives a seat a new term, or vacates it, sets change_how (what it does:
-- 'elected', 'forced', 'resigned', 'reelected', 'handed_over', 'expired') and change_at (its own
-- reading of UTC_TIMESTAMP(6), taken under the row lock) in the same UPDATE. Then, per row:
-- 1. The term the seat held ends, when a leader held it and the leader or the term changes:
--    if its lease still ran at change_at, at change_at, as change_how ('forced' ends it as
--    'forced_out'), ended_by USER(); if the lease had run out, as 'expired' at the lease's end,
--    with no ended_by (the server's decision, not a session's).
-- 2. The new term begins, when the term changes: its history row, began_how 'elected' or
--    'forced', began_by USER(). A new term must be the next one, have a leader, and not
--    displace a valid lease by election: anything else is refused (45000), a fault of the writer.
-- 3. change_how and change_at go back to NULL.
-- Without change_how it writes nothing: renews, copies of access, reservations, and the
-- procedures of earlier versions (which write their own history) during an upgrade.
-- The node lease a seat hangs on (sql/V15__node_leases.sql): the term's lease ends at the later
-- of the seat's own end and the lease's (sql/views/leader_election_seats.sql). A seat whose term
-- ends, or that is vacated, lets go of its lease (lease_id NULL), unless the writer hangs it on
-- another one (a takeover onto the taker's lease); when a term ends while it hung on a lease,
-- the lease's row is written too: moved + 1 always (sql/V16__lease_moves.sql: a follower that
-- saw the seat on the lease reads the lease's row instead of the seat's while moved stays the
-- same), and lost + 1 unless the term was resigned, so that on Galera and Group Replication a
-- takeover conflicts with a renew of that lease through another member. A writer that decides
-- to take such a seat has locked the lease's row already (it read the seat through the view FOR
-- UPDATE): the write waits for nothing; a resign waits at most for a renew of the lease in
-- flight (which skips locked seats, so it never waits for the resign). The writers that vacate
-- seats or move them off a lease without change_how count moved themselves (resign_seats'
-- one statement, renew_lease's let-go and move; release_lease ends the lease itself).
CREATE TRIGGER leader_election_record_term BEFORE UPDATE ON leader_election FOR EACH ROW
BEGIN
    DECLARE v_ends DATETIME(6);
    IF NEW.leader_id IS NULL OR (NEW.term <> OLD.term AND NEW.lease_id <=> OLD.lease_id) THEN
        SET NEW.lease_id = NULL;
    END IF;
    IF NEW.change_how IS NOT NULL THEN
        SET v_ends = OLD.lease_expires_at;
        IF OLD.lease_id IS NOT NULL AND OLD.leader_id IS NOT NULL THEN
            IF NOT (NEW.lease_id <=> OLD.lease_id) THEN
                UPDATE leader_election_lease
                   SET lost = lost + (NEW.change_how <> 'resigned'), moved = moved + 1
                 WHERE lease_id = OLD.lease_id AND node_id = OLD.leader_id;
            END IF;
            SELECT GREATEST(OLD.lease_expires_at, COALESCE(MAX(expires_at), OLD.lease_expires_at)) INTO v_ends
              FROM leader_election_lease WHERE lease_id = OLD.lease_id AND node_id = OLD.leader_id;
        END IF;
        IF NEW.change_at IS NULL
           OR (NEW.term <> OLD.term AND (NEW.term <> OLD.term + 1 OR NEW.leader_id IS NULL
                                         OR NEW.change_how NOT IN ('elected', 'forced')))
           OR (NEW.change_how = 'elected' AND OLD.leader_id IS NOT NULL AND v_ends > NEW.change_at) THEN
            SIGNAL SQLSTATE '45000'
                SET MESSAGE_TEXT = 'mysqlleader: internal: a seat change the history cannot record (leader_election_record_term)';
        END IF;
        -- 1.
        IF OLD.leader_id IS NOT NULL AND (NEW.leader_id IS NULL OR NEW.term <> OLD.term) THEN
            UPDATE leader_election_history
               SET ended_at  = IF(v_ends > NEW.change_at, NEW.change_at, v_ends),
                   ended_how = IF(v_ends > NEW.change_at,
                                  IF(NEW.change_how = 'forced', 'forced_out', NEW.change_how), 'expired'),
                   ended_by  = IF(v_ends > NEW.change_at, USER(), NULL)
             WHERE service_id = OLD.service_id AND term = OLD.term AND ended_at IS NULL;
        END IF;
        -- 2.
        IF NEW.term <> OLD.term THEN
            INSERT INTO leader_election_history
                   (service_id, term, leader_id, lease_ms, began_at, began_how, began_by)
            VALUES (NEW.service_id, NEW.term, NEW.leader_id, NEW.lease_ms, NEW.term_started_at,
                    NEW.change_how, USER());
        END IF;
        -- 3.
        SET NEW.change_how = NULL, NEW.change_at = NULL;
    END IF;
END;
