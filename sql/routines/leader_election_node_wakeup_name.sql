-- leader_election_node_wakeup_name: the name of the wake-up lock of a node's session (issue
-- "Sessions"; src/session/wakeup.rs): the one lock a session holds while it leads any seat, and
-- that the followers of its seats wait on. Told only to an account allowed on p_service_id
-- (45002 otherwise) and only while that seat's leader_id is p_node_id (45001 otherwise): the
-- leader asks with a seat it leads, a follower with a seat it saw the node lead. The name is
-- `mysqlleader.n.` and 40 hex digits of SHA-256(secret, database, the caller's service limit,
-- node id), 54 characters (named locks are limited to 64; the per-service names of
-- leader_election_wakeup_name have no second dot, so the two never meet): without the schema's
-- secret (sql/V12__wakeup_secret.sql) nobody can compute it, an account learns it only for a
-- node that leads a service it may act on, and the name belongs to the caller's set of
-- services (its account's patterns, leader_election_account_patterns; one set for every account
-- without a limit): two tenants whose nodes share an id (`web-3`) hold two locks, and neither
-- can learn, let alone take, the other's. The nodes of one tenant use accounts with the same
-- limit, so leader and followers meet on one name; a follower whose account has another limit
-- learns a name nobody holds, and polls (src/session/wakeup.rs, step 3).
-- A read; with autocommit off it ends what it opened. Result: lock_name.
CREATE PROCEDURE leader_election_node_wakeup_name(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_node_id    MEDIUMTEXT CHARACTER SET utf8mb4)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: the name of a node session''s wake-up lock'
BEGIN
    DECLARE v_secret   VARBINARY(64);
    DECLARE v_leader   VARBINARY(512);
    DECLARE v_patterns LONGTEXT CHARACTER SET ascii;
    DECLARE v_own    BOOLEAN DEFAULT FALSE;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
        END IF;
        RESIGNAL;
    END;

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_id('node_id', p_node_id);
    CALL leader_election_refuse_snapshot('wakeup_name');
    SET v_own = TRUE;
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    -- A read-only transaction of the call's own, at READ COMMITTED whatever the session set: it
    -- locks nothing, and a call cut at any point leaves no lock behind.
    CALL leader_election_begin(TRUE);
    CALL leader_election_check_access(p_service_id);
    SELECT leader_id INTO v_leader FROM leader_election WHERE service_id = CAST(p_service_id AS BINARY);
    IF v_leader IS NULL OR v_leader <> CAST(p_node_id AS BINARY) THEN
        SIGNAL SQLSTATE '45001' SET MYSQL_ERRNO = 31001,
            MESSAGE_TEXT = 'mysqlleader: node_id does not lead service_id: no wake-up lock name';
    END IF;
    SELECT secret INTO v_secret FROM leader_election_secret WHERE id = 1;
    CALL leader_election_account_patterns(v_patterns);
    SELECT CONCAT('mysqlleader.n.',
                  LEFT(SHA2(CONCAT(HEX(COALESCE(v_secret, '')), '/', COALESCE(DATABASE(), ''), '/node/',
                                   COALESCE(SHA2(v_patterns, 256), 'any'), '/',
                                   HEX(CAST(p_node_id AS BINARY))), 256), 40)) AS lock_name;
    COMMIT;
END;
