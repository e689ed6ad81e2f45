-- benches/election/before_40/leader_election_check_number.sql: sql/routines/leader_election_check_number.sql as it was before issue 40 touched it,
-- copied byte for byte from git (`git show 5085e36^:sql/routines/leader_election_check_number.sql`, commit 1c2869c).
-- The benchmark installs it over the migrated schema in mysqlleader_bench_before40 (like
-- campaign (V6)), so that follower, renew and fence measure it side by side with the tree.
-- Not part of the schema; do not edit (it is a record).
-- Rejects a NULL, fractional or out-of-range number (p_name names the parameter in the
-- message). Internal; reads and writes nothing.
CREATE PROCEDURE leader_election_check_number(
    IN p_name  VARCHAR(32),
    IN p_value DECIMAL(65,30),
    IN p_min   DECIMAL(65,30),
    IN p_max   DECIMAL(65,30))
    NO SQL
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: rejects a NULL, fractional or out-of-range number'
BEGIN
    DECLARE v_got VARCHAR(80);
    DECLARE v_msg VARCHAR(255);
    -- The value as written, without the trailing zeros of the DECIMAL: '1.5', '86400001'; cut to
    -- 40 characters (with '...') so that every message fits MySQL's 128 for MESSAGE_TEXT.
    SET v_got = TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM CAST(p_value AS CHAR)));
    IF CHAR_LENGTH(v_got) > 40 THEN
        SET v_got = CONCAT(LEFT(v_got, 37), '...');
    END IF;
    IF p_value IS NULL THEN
        SET v_msg = CONCAT('mysqlleader: ', p_name, ' must not be NULL');
    ELSEIF p_value <> TRUNCATE(p_value, 0) THEN
        SET v_msg = CONCAT('mysqlleader: ', p_name, ' must be a whole number (got ', v_got, ')');
    ELSEIF p_value < p_min OR p_value > p_max THEN
        SET v_msg = CONCAT('mysqlleader: ', p_name, ' must be between ', CAST(p_min AS DECIMAL(20,0)),
                           ' and ', CAST(p_max AS DECIMAL(20,0)), ' (got ', v_got, ')');
    END IF;
    IF v_msg IS NOT NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
    END IF;
END;
