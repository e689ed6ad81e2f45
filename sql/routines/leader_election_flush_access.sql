-- leader_election_flush_access: recompute every seat's copy of per-service access from
-- leader_election_access (sql/V8__access_copy_on_the_seat.sql, notes 3-5). Run it after changing that table by hand;
-- `mysqlleader grant --service` runs it. It commits any transaction the caller has open first,
-- as START TRANSACTION does. Result: seats (how many seats there are), changed (how many copies
-- it rewrote).
CREATE PROCEDURE leader_election_flush_access()
    MODIFIES SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: apply leader_election_access to every seat (after a change by hand)'
BEGIN
    DECLARE v_seats   BIGINT;
    DECLARE v_changed BIGINT;
    CALL leader_election_flush_copies(v_seats, v_changed);
    SELECT v_seats AS seats, v_changed AS changed;
END;
