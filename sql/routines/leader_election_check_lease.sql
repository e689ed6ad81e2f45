-- Rejects a lease outside 1 ms to 86,400,000 ms (one day). Internal; reads and writes nothing.
CREATE PROCEDURE leader_election_check_lease(IN p_lease_ms DECIMAL(65,30))
    NO SQL
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: rejects a lease outside 1 to 86400000 ms'
BEGIN
    CALL leader_election_check_number('lease_ms', p_lease_ms, 1, 86400000);
END;
