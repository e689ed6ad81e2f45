-- benches/election/before_40/leader_election_check_id.sql: sql/routines/leader_election_check_id.sql as it was before issue 40 touched it,
-- copied byte for byte from git (`git show 5085e36^:sql/routines/leader_election_check_id.sql`, commit 1c2869c).
-- The benchmark installs it over the migrated schema in mysqlleader_bench_before40 (like
-- campaign (V6)), so that follower, renew and fence measure it side by side with the tree.
-- Not part of the schema; do not edit (it is a record).
-- Rejects a NULL, empty or over-long id. Internal; reads and writes nothing.
CREATE PROCEDURE leader_election_check_id(
    IN p_name  VARCHAR(32),
    IN p_value MEDIUMTEXT CHARACTER SET utf8mb4)
    NO SQL
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: rejects a NULL, empty or over-long id'
BEGIN
    DECLARE v_msg VARCHAR(128);
    IF p_value IS NULL THEN
        SET v_msg = CONCAT('mysqlleader: ', p_name, ' must not be NULL');
    ELSEIF CHAR_LENGTH(p_value) = 0 THEN
        SET v_msg = CONCAT('mysqlleader: ', p_name, ' must not be empty');
    ELSEIF CHAR_LENGTH(p_value) > 128 THEN
        SET v_msg = CONCAT('mysqlleader: ', p_name, ' must be at most 128 characters (got ',
                           CHAR_LENGTH(p_value), ')');
    END IF;
    IF v_msg IS NOT NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
    END IF;
END;
