-- leader_election_recent_terms: the p_limit (1 to 1000) most recent terms of one service,
-- newest first, from leader_election_terms, for `mysqlleader status SERVICE` and `watch`. A
-- read for the operator and observer roles, refused inside an open transaction and leaving no
-- lock behind (see leader_election_status); 45002 for a service outside the caller's limit.
CREATE PROCEDURE leader_election_recent_terms(
    IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4,
    IN p_limit      DECIMAL(65,30))
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: the recent terms of one service (status; a read)'
BEGIN
    DECLARE v_limit INT;
    DECLARE v_own   BOOLEAN DEFAULT FALSE;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
        END IF;
        RESIGNAL;
    END;

    CALL leader_election_check_id('service_id', p_service_id);
    CALL leader_election_check_number('limit', p_limit, 1, 1000);
    SET v_limit = p_limit;
    CALL leader_election_refuse_snapshot('status');
    SET v_own = TRUE;
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    -- A read-only transaction of the call's own, at READ COMMITTED whatever the session set: it
    -- locks nothing, and a call cut at any point leaves no lock behind.
    CALL leader_election_begin(TRUE);
    CALL leader_election_check_access(p_service_id);

    -- The history as leader_election_terms shows it (a term whose lease ran out unclosed ends
    -- 'expired' at its lease's end), read by the history's key.
    SELECT h.term, CAST(h.leader_id AS CHAR CHARACTER SET utf8mb4) AS leader_id, h.lease_ms,
           DATE_FORMAT(h.began_at, '%Y-%m-%dT%H:%i:%s.%fZ') AS began_at, CAST(h.began_how AS CHAR) AS began_how,
           DATE_FORMAT(CASE WHEN h.ended_at IS NOT NULL THEN h.ended_at
                            WHEN e.term = h.term AND e.leader_id IS NOT NULL
                                 AND e.lease_expires_at <= UTC_TIMESTAMP(6) THEN e.lease_expires_at END,
                       '%Y-%m-%dT%H:%i:%s.%fZ') AS ended_at,
           CASE WHEN h.ended_at IS NOT NULL THEN CAST(h.ended_how AS CHAR)
                WHEN e.term = h.term AND e.leader_id IS NOT NULL
                     AND e.lease_expires_at <= UTC_TIMESTAMP(6) THEN 'expired' END AS ended_how,
           h.began_by, h.ended_by,
           TIMESTAMPDIFF(MICROSECOND, h.began_at,
                         COALESCE(h.ended_at, IF(e.term = h.term AND e.leader_id IS NOT NULL
                                                 AND e.lease_expires_at <= UTC_TIMESTAMP(6),
                                                 e.lease_expires_at, NULL),
                                  UTC_TIMESTAMP(6))) DIV 1000 AS lasted_ms
      FROM leader_election_history h
      LEFT JOIN leader_election_seats e ON e.service_id = h.service_id
     WHERE h.service_id = CAST(p_service_id AS BINARY)
     ORDER BY h.term DESC
     LIMIT v_limit;

    COMMIT;
END;
