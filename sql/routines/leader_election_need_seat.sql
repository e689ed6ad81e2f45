-- Refuses, as a deadlock would (1213, SQLSTATE 40001, transient: the caller tries again), a
-- change of a seat that its caller found missing when it locked it (p_found false): a seat this
-- call saw or created a moment before was removed meanwhile (a campaign_seats that failed after
-- creating it deletes the seats it created, term 0 and vacant; on a multi-primary group another
-- member's create and delete may be applied in between). Without this refusal the caller would
-- answer from values read before, as if it had taken or changed a seat that does not exist.
-- Called right after the caller's read of the seat FOR UPDATE. Internal.
CREATE PROCEDURE leader_election_need_seat(IN p_found BOOLEAN)
    NO SQL
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: refuse to change a seat that was removed meanwhile'
BEGIN
    IF NOT COALESCE(p_found, FALSE) THEN
        SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT =
            'Deadlock found when trying to get lock; try restarting transaction (mysqlleader: the seat was removed meanwhile)';
    END IF;
END;
