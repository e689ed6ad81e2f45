-- benches/election/before_40/leader_election_deny.sql: sql/routines/leader_election_deny.sql as it was before issue 40 touched it,
-- copied byte for byte from git (`git show 5085e36^:sql/routines/leader_election_deny.sql`, commit 1c2869c).
-- The benchmark installs it over the migrated schema in mysqlleader_bench_before40 (like
-- campaign (V6)), so that follower, renew and fence measure it side by side with the tree.
-- Not part of the schema; do not edit (it is a record).
-- Raises the refusal of per-service access: SQLSTATE 45002, naming the account and the
-- service. Internal; reads and writes nothing. Only called on the slow path.
-- The message fits MySQL's 128 characters for MESSAGE_TEXT: 64 are fixed text, and when the
-- account and the service together pass the other 64, the longer is cut (ending in '...'),
-- the account to no fewer than 24 characters.
CREATE PROCEDURE leader_election_deny(IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4)
    NO SQL
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: raise 45002 access denied'
BEGIN
    DECLARE v_msg     VARCHAR(128) CHARACTER SET utf8mb4;
    DECLARE v_account VARCHAR(400) CHARACTER SET utf8mb4;
    DECLARE v_service VARCHAR(400) CHARACTER SET utf8mb4;
    DECLARE v_room    INT;
    SET v_account = LEFT(USER(), CHAR_LENGTH(USER()) - CHAR_LENGTH(SUBSTRING_INDEX(USER(), '@', -1)) - 1), v_service = LEFT(p_service_id, 128);
    IF CHAR_LENGTH(v_account) + CHAR_LENGTH(v_service) > 64 THEN
        SET v_room = GREATEST(24, 64 - CHAR_LENGTH(v_service));
        IF CHAR_LENGTH(v_account) > v_room THEN
            SET v_account = CONCAT(LEFT(v_account, v_room - 3), '...');
        END IF;
        SET v_room = 64 - CHAR_LENGTH(v_account);
        IF CHAR_LENGTH(v_service) > v_room THEN
            SET v_service = CONCAT(LEFT(v_service, v_room - 3), '...');
        END IF;
    END IF;
    SET v_msg = CONCAT('mysqlleader: access denied: account ''', v_account,
                       ''' may not act on service ''', v_service, '''');
    SIGNAL SQLSTATE '45002' SET MESSAGE_TEXT = v_msg;
END;
