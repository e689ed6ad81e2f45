-- Raises 45002 unless the session's account may act on the service (sql/V8__access_copy_on_the_seat.sql, note 1): from the
-- seat's copy when it has one, else from leader_election_access itself. Internal; the path of
-- calls that are not hot (force_leader, reelect, resign), and of hot calls on a seat without a
-- copy.
CREATE PROCEDURE leader_election_check_access(IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: 45002 unless this account may act on the service'
BEGIN
    DECLARE v_sid     VARBINARY(512);
    DECLARE v_account VARCHAR(80);
    DECLARE v_name    VARBINARY(400);
    DECLARE v_denied  VARBINARY(1024);
    DECLARE v_allowed INT;

    SET v_sid = CAST(p_service_id AS BINARY), v_account = LEFT(USER(), CHAR_LENGTH(USER()) - CHAR_LENGTH(SUBSTRING_INDEX(USER(), '@', -1)) - 1);
    SET v_name = CAST(CONVERT(v_account USING utf8mb4) AS BINARY);
    SELECT MAX(access_denied) INTO v_denied FROM leader_election WHERE service_id = v_sid;
    IF v_denied IS NOT NULL AND v_name <> '' THEN
        SET v_allowed = (LOCATE(CONCAT(0x00, v_name, 0x00), v_denied) = 0);
    ELSE
        SELECT IF(COUNT(*) = 0, 1, MAX(v_sid LIKE a.service_pattern)) INTO v_allowed
          FROM leader_election_access a
         WHERE a.account = v_account AND CAST(CONVERT(a.account USING utf8mb4) AS BINARY) = v_name;
    END IF;
    IF v_allowed = 0 THEN
        CALL leader_election_deny(p_service_id);
    END IF;
END;
