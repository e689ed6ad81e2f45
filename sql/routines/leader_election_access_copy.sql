-- The copy for one service (sql/V8__access_copy_on_the_seat.sql, note 1): the limited accounts none of whose patterns
-- match p_sid, each 0x00 name 0x00; '' when none; NULL when the list would exceed 1024 bytes.
-- Reads leader_election_access with a locking read (the latest committed rows, see 4).
-- Internal.
CREATE PROCEDURE leader_election_access_copy(IN p_sid VARBINARY(512), OUT p_denied VARBINARY(1024))
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: the accounts refused on a service, for its seat'
BEGIN
    DECLARE v_list  LONGBLOB;
    DECLARE v_count BIGINT;
    DECLARE v_max   BIGINT;
    DECLARE v_cut   INT DEFAULT 0;
    -- 1260: the list was cut at group_concat_max_len, so it is over 1024 bytes: no copy.
    DECLARE CONTINUE HANDLER FOR 1260 SET v_cut = 1;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        SET SESSION group_concat_max_len = v_max;
        RESIGNAL;
    END;
    -- The caller's session decides how long GROUP_CONCAT may grow; 1025 is enough to tell a
    -- list over 1024 bytes, whatever the caller set (a longer one is cut: 1260, or a warning).
    SET v_max = @@session.group_concat_max_len;
    SET SESSION group_concat_max_len = 1025;
    SELECT COUNT(*), GROUP_CONCAT(DISTINCT CONCAT(0x00, CAST(CONVERT(a.account USING utf8mb4) AS BINARY), 0x00)
                                  SEPARATOR '')
      INTO v_count, v_list
      FROM leader_election_access a
     WHERE NOT EXISTS (SELECT 1 FROM leader_election_access b
                        WHERE b.account = a.account AND CAST(b.account AS BINARY) = CAST(a.account AS BINARY)
                          AND p_sid LIKE b.service_pattern)
      LOCK IN SHARE MODE;
    SET SESSION group_concat_max_len = v_max;
    SET p_denied = IF(v_cut = 1, NULL, IF(v_count = 0, '', IF(LENGTH(v_list) > 1024, NULL, v_list)));
END;
