-- Refuses, as a lock wait would (1205, transient: the caller tries again), a change that would
-- end a seat's term when leader_election_lock_seat could not lock that term (p_held false: a
-- takeover committed between its read and its lock, and another transaction holds the new
-- term's row). Called right before the UPDATE that would end the term. Internal.
CREATE PROCEDURE leader_election_need_term(IN p_held BOOLEAN)
    NO SQL
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: refuse to end a term this transaction has not locked'
BEGIN
    IF NOT COALESCE(p_held, FALSE) THEN
        SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = 1205, MESSAGE_TEXT =
            'Lock wait timeout exceeded; try restarting transaction (mysqlleader: another transaction holds the seat''s term)';
    END IF;
END;
