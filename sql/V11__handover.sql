-- mysqlleader V11: handover, a move of leadership to a named node with no overlap.
--
-- 1. leader_election gains a reservation: while handover_until lies in the future, only
--    handover_to may take the vacant seat (campaign); everybody may once it has passed. The
--    reservation is made by `handover` (an operator) or `resign_to` (the leader itself), which
--    end the current term and vacate the seat in the same transaction, so the old leader's fence
--    fails before the new leader's term can begin. Taking the seat (campaign, force_leader) and
--    reelect clear it.
--    An operator's handover also names the old leader (handover_from) and the end of its lease
--    (handover_from_until): it still believes it leads until its next renew, so the named node
--    may take the seat only once the old leader's campaign has seen the handover (which clears
--    handover_from) or its lease has run out. So the two never both believe they lead, also
--    where the named node polls instead of waiting on the old leader's wake-up lock.
-- 2. leader_election_history.ended_how gains 'handed_over': the end of a term by a handover
--    (ended_by: who asked).
--
-- Every statement here can run again safely (MySQL has no ADD COLUMN IF NOT EXISTS: a procedure
-- looks first; it is dropped again right after the call).

ALTER TABLE leader_election_history
    MODIFY ended_how ENUM('expired', 'resigned', 'reelected', 'forced_out', 'handed_over') NULL;

DROP PROCEDURE IF EXISTS leader_election_v11_add_reservation;
CREATE PROCEDURE leader_election_v11_add_reservation()
    MODIFIES SQL DATA
    SQL SECURITY INVOKER
BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.COLUMNS
                    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'leader_election'
                      AND COLUMN_NAME = 'handover_to') THEN
        ALTER TABLE leader_election
          ADD COLUMN handover_to VARBINARY(512) NULL DEFAULT NULL
              COMMENT 'handover: the only node that may take the vacant seat until handover_until',
          ADD COLUMN handover_until DATETIME(6) NULL DEFAULT NULL
              COMMENT 'UTC, the end of the reservation; anybody may take the seat after it',
          ADD COLUMN handover_by VARCHAR(384) NULL DEFAULT NULL
              COMMENT 'USER() of the session that asked for the handover',
          ADD COLUMN handover_from VARBINARY(512) NULL DEFAULT NULL
              COMMENT 'an operator''s handover: the old leader, until its campaign has seen the handover',
          ADD COLUMN handover_from_until DATETIME(6) NULL DEFAULT NULL
              COMMENT 'UTC, the end of the old leader''s lease: the named node waits for it at most';
    END IF;
END;
CALL leader_election_v11_add_reservation();
DROP PROCEDURE IF EXISTS leader_election_v11_add_reservation;
