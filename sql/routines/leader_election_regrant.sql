-- Grants EXECUTE on the procedure p_routine of this schema to every account that
-- leader_election_grants lists for it (V9): what MySQL's DROP PROCEDURE revoked when the
-- installer re-created the routine. Does nothing when the procedure does not exist (yet).
-- SQL SECURITY INVOKER: it runs with the installing account's rights (GRANT OPTION is needed
-- only when the table lists someone), and no role may call it.
-- Names that a statement could not hold safely (a backslash; see Account::parse) are skipped.
CREATE PROCEDURE leader_election_regrant(IN p_routine VARCHAR(64))
    MODIFIES SQL DATA
    SQL SECURITY INVOKER
    COMMENT 'mysqlleader installer: re-grant EXECUTE on a re-created procedure'
BEGIN
    DECLARE v_done INT DEFAULT 0;
    DECLARE v_user VARCHAR(128) CHARACTER SET utf8mb4;
    DECLARE v_host VARCHAR(255) CHARACTER SET utf8mb4;
    DECLARE v_grantees CURSOR FOR
        SELECT CONVERT(user_name USING utf8mb4), CONVERT(host USING utf8mb4)
          FROM leader_election_grants WHERE routine = p_routine;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;

    IF EXISTS (SELECT 1 FROM information_schema.ROUTINES
                WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME = p_routine
                  AND ROUTINE_TYPE = 'PROCEDURE') THEN
        OPEN v_grantees;
        grantees: LOOP
            FETCH v_grantees INTO v_user, v_host;
            IF v_done = 1 THEN
                LEAVE grantees;
            END IF;
            IF LOCATE(CHAR(92), CONCAT(v_user, v_host)) = 0 THEN
                SET @mysqlleader_regrant = CONCAT(
                    'GRANT EXECUTE ON PROCEDURE `', REPLACE(DATABASE(), '`', '``'), '`.`',
                    REPLACE(p_routine, '`', '``'), '` TO ''', REPLACE(v_user, '''', ''''''),
                    '''@''', REPLACE(v_host, '''', ''''''), '''');
                PREPARE mysqlleader_regrant_stmt FROM @mysqlleader_regrant;
                EXECUTE mysqlleader_regrant_stmt;
                DEALLOCATE PREPARE mysqlleader_regrant_stmt;
            END IF;
        END LOOP grantees;
        CLOSE v_grantees;
        SET @mysqlleader_regrant = NULL;
    END IF;
END;
