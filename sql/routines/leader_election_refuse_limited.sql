-- Raises 45002 when the session's account is limited to some services (it has a row in
-- leader_election_account: sql/V14__access_by_account.sql): for the calls that act on every service at once (the expiry event's
-- switch, pruning the history), which no limited account may make. p_what says what acts on
-- every service, at most 13 characters, so that the message fits MySQL's 128 (the account is
-- cut to 35: 37 + 35 + 31 + 13 + 12). Internal; reads the account's row only, writes nothing.
CREATE PROCEDURE leader_election_refuse_limited(IN p_what VARCHAR(13))
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader internal: 45002 for an account limited to some services'
BEGIN
    DECLARE v_account VARCHAR(400) CHARACTER SET utf8mb4;
    DECLARE v_msg     VARCHAR(128) CHARACTER SET utf8mb4;
    DECLARE v_patterns LONGTEXT CHARACTER SET ascii;
    SET v_account = LEFT(USER(), CHAR_LENGTH(USER()) - CHAR_LENGTH(SUBSTRING_INDEX(USER(), '@', -1)) - 1);
    CALL leader_election_account_patterns(v_patterns);
    IF v_patterns IS NOT NULL THEN
        SET v_msg = CONCAT('mysqlleader: access denied: account ''',
                           IF(CHAR_LENGTH(v_account) > 35, CONCAT(LEFT(v_account, 32), '...'), v_account),
                           ''' is limited to some services; ', p_what, ' acts on all');
        SIGNAL SQLSTATE '45002' SET MYSQL_ERRNO = 31002, MESSAGE_TEXT = v_msg;
    END IF;
END;
