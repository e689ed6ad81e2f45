-- mysqlleader V13: a seat's change and its history in one statement.
--
-- Until V12 a procedure that took a seat wrote three statements in its transaction: it closed
-- the old term in leader_election_history, raised the term on the seat, and inserted the new
-- term's history row. A statement killed between them (KILL QUERY, max_statement_time) skips
-- the procedure's handler, and a client that then sent COMMIT committed a term with no history
-- row (issue "trust boundary", item 9). InnoDB rolls a failed statement back whole, with what
-- its triggers wrote; so from V13 the history is written by a trigger of the seat's own UPDATE
-- (sql/triggers/leader_election_record_term.sql), and a term is either taken with its history
-- row or not taken at all.
--
-- 1. leader_election gains change_how and change_at: the statement that moves a seat to a new
--    term or vacates it says there what it does and when (its clock reading); the trigger reads
--    them, writes the history, and sets both back to NULL, so they are NULL at rest.
--
-- Every statement here can run again safely (MySQL has no ADD COLUMN IF NOT EXISTS: a procedure
-- looks first; it is dropped again right after the call). The procedures of V12 keep working
-- while this runs and until the installer replaces them: without change_how the trigger writes
-- nothing, and they write their history themselves.

DROP PROCEDURE IF EXISTS leader_election_v13_add_change;
CREATE PROCEDURE leader_election_v13_add_change()
    MODIFIES SQL DATA
    SQL SECURITY INVOKER
BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.COLUMNS
                    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'leader_election'
                      AND COLUMN_NAME = 'change_how') THEN
        ALTER TABLE leader_election
          ADD COLUMN change_how ENUM('elected', 'forced', 'resigned', 'reelected', 'handed_over', 'expired')
              NULL DEFAULT NULL
              COMMENT 'what the updating statement does to the term; read and cleared by the trigger, NULL at rest',
          ADD COLUMN change_at DATETIME(6) NULL DEFAULT NULL
              COMMENT 'UTC, the updating statement''s clock reading; read and cleared by the trigger, NULL at rest';
    END IF;
END;
CALL leader_election_v13_add_change();
DROP PROCEDURE IF EXISTS leader_election_v13_add_change;
