-- leader_election_status: the seat of every service the caller may act on (p_service_id NULL,
-- in name order), or of one service, for `mysqlleader status`. The operator and observer roles
-- read the election through this routine and the two beside it (leader_election_recent_terms,
-- leader_election_event_status), never through SELECT on the tables: a SELECT grant would also
-- allow SELECT ... FOR UPDATE, and one open transaction holding that lock stops every renew.
-- Like am_i_leader it is refused inside an open transaction, and it reads in a read-only
-- transaction of its own, so it leaves no lock behind whatever the session's isolation level.
-- An account limited to some services (leader_election_access) sees only those; one service
-- outside its limit is refused with 45002. Columns as `status --json` shows them; times are
-- UTC text, durations milliseconds, one instant for every row (UTC_TIMESTAMP(6)). A pending
-- handover (sql/V11__handover.sql) shows as handover_to, handover_remaining_ms, handover_by;
-- all three are NULL when none is pending or the reservation has lapsed.
CREATE PROCEDURE leader_election_status(IN p_service_id MEDIUMTEXT CHARACTER SET utf8mb4)
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: who leads every service or one (status; a read)'
BEGIN
    DECLARE v_sid     VARBINARY(512);
    DECLARE v_patterns LONGTEXT CHARACTER SET ascii;
    DECLARE v_own     BOOLEAN DEFAULT FALSE;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_own THEN
            ROLLBACK;
        END IF;
        RESIGNAL;
    END;

    IF p_service_id IS NOT NULL THEN
        CALL leader_election_check_id('service_id', p_service_id);
        SET v_sid = CAST(p_service_id AS BINARY);
    END IF;
    CALL leader_election_refuse_snapshot('status');
    SET v_own = TRUE;
    -- Refused first if the session's clock is set (sql/fragments/server_clock.sql): once a call.
    -- @include server_clock
    -- A read-only transaction of the call's own, at READ COMMITTED whatever the session set:
    -- the report below locks nothing, and a call cut at any point leaves no lock behind.
    CALL leader_election_begin(TRUE);
    IF v_sid IS NOT NULL THEN
        CALL leader_election_check_access(p_service_id);
    END IF;
    -- The account's patterns (NULL: not limited), which filter the report in its query.
    CALL leader_election_account_patterns(v_patterns);

    SELECT CAST(e.service_id AS CHAR CHARACTER SET utf8mb4) AS service_id,
           IF(e.leader_id IS NOT NULL AND e.lease_expires_at > UTC_TIMESTAMP(6),
              CAST(e.leader_id AS CHAR CHARACTER SET utf8mb4), NULL) AS leader_id,
           e.term AS term,
           IF(e.leader_id IS NOT NULL AND e.lease_expires_at > UTC_TIMESTAMP(6),
              TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), e.lease_expires_at) DIV 1000, 0) AS lease_remaining_ms,
           h.lease_ms AS lease_ms,
           DATE_FORMAT(h.began_at, '%Y-%m-%dT%H:%i:%s.%fZ') AS term_started_at,
           CAST(h.began_how AS CHAR) AS began_how,
           CAST(h.leader_id AS CHAR CHARACTER SET utf8mb4) AS last_leader_id,
           CASE WHEN h.ended_at IS NOT NULL THEN DATE_FORMAT(h.ended_at, '%Y-%m-%dT%H:%i:%s.%fZ')
                WHEN e.leader_id IS NOT NULL AND e.lease_expires_at <= UTC_TIMESTAMP(6)
                     THEN DATE_FORMAT(e.lease_expires_at, '%Y-%m-%dT%H:%i:%s.%fZ') END AS ended_at,
           CASE WHEN h.ended_at IS NOT NULL THEN CAST(h.ended_how AS CHAR)
                WHEN e.leader_id IS NOT NULL AND e.lease_expires_at <= UTC_TIMESTAMP(6) THEN 'expired' END AS ended_how,
           CASE WHEN e.leader_id IS NOT NULL AND e.lease_expires_at > UTC_TIMESTAMP(6)
                     THEN TIMESTAMPDIFF(MICROSECOND, h.began_at, UTC_TIMESTAMP(6)) DIV 1000
                WHEN h.ended_at IS NOT NULL THEN TIMESTAMPDIFF(MICROSECOND, h.ended_at, UTC_TIMESTAMP(6)) DIV 1000
                WHEN e.lease_expires_at IS NOT NULL
                     THEN TIMESTAMPDIFF(MICROSECOND, e.lease_expires_at, UTC_TIMESTAMP(6)) DIV 1000 END AS for_ms,
           IF(e.handover_until > UTC_TIMESTAMP(6),
              CAST(e.handover_to AS CHAR CHARACTER SET utf8mb4), NULL) AS handover_to,
           IF(e.handover_until > UTC_TIMESTAMP(6),
              TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), e.handover_until) DIV 1000, NULL) AS handover_remaining_ms,
           IF(e.handover_until > UTC_TIMESTAMP(6), e.handover_by, NULL) AS handover_by
      FROM leader_election_seats e
      LEFT JOIN leader_election_history h ON h.service_id = e.service_id AND h.term = e.term
     WHERE (v_sid IS NULL OR e.service_id = v_sid)
       AND (v_patterns IS NULL
            OR EXISTS (SELECT 1
                         FROM JSON_TABLE(v_patterns, '$[*]' COLUMNS (h VARCHAR(1100) CHARACTER SET ascii PATH '$')) AS p
                        WHERE e.service_id LIKE UNHEX(p.h)))
     ORDER BY e.service_id;

    COMMIT;
END;
