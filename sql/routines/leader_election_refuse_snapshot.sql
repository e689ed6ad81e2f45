-- Refuses a read whose answer could come from an old snapshot (see 5 above): SQLSTATE 45000
-- 'mysqlleader: <p_name> needs autocommit ...'. Internal; reads and writes no table.
CREATE PROCEDURE leader_election_refuse_snapshot(IN p_name VARCHAR(32))
    NO SQL
    SQL SECURITY INVOKER
    COMMENT 'mysqlleader internal: 45000 inside an open transaction (its snapshot may be old)'
BEGIN
    DECLARE v_msg VARCHAR(400);
    CALL leader_election_probe_in_tx();
    IF @mysqlleader_in_tx = 1 OR (@mysqlleader_in_tx IS NULL AND @@session.autocommit = 0) THEN
        -- At most 128 characters (MySQL's limit for MESSAGE_TEXT): p_name is at most 14 here.
        SET v_msg = CONCAT('mysqlleader: ', p_name, ' needs autocommit on and no open transaction ',
                           '(it could read an old snapshot): COMMIT first');
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31003, MESSAGE_TEXT = v_msg;
    END IF;
END;
