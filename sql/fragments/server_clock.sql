-- server_clock: refuses a call from a session whose clock is not the server's, before the
-- routine reads anything. Included by the line `-- @include server_clock` where a routine's
-- statements begin: by leader_election_begin, which every routine that reads the clock calls
-- before its first read, and by assert_leader, which runs in its caller's transaction.
-- Any account may SET timestamp = <any time> for its session (no privilege needed, MariaDB and
-- MySQL); from then on UTC_TIMESTAMP() and NOW() return that time, in stored routines too, and
-- only SYSDATE() keeps the real clock. A lease measured on it would end when the caller says: a
-- campaign took a seat whose lease had 10 minutes left, under a term whose lease then ran for 70
-- (MariaDB 10.11, 2026-11-30), and assert_leader would pass a stale leader's fence. So the
-- session's clock (UTC_TIMESTAMP(6), read at each statement's start) is compared with the
-- server's (SYSDATE(6), in the time zone '+00:00' for the comparison, the caller's zone again
-- right after): more than 1 ms apart, twice in a row, and the call is refused, 45000 naming
-- `timestamp` (twice, as two statements: a thread descheduled between a statement's start and
-- its SYSDATE() could be 1 ms late once by mistake, not twice; a set clock is refused both
-- times). tests/sql_trust.rs, a_session_clock_that_is_set_is_refused.
BEGIN
    DECLARE v_zone VARCHAR(64) DEFAULT @@session.time_zone;
    SET SESSION time_zone = '+00:00';
    IF ABS(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), SYSDATE(6))) > 1000 THEN
        IF ABS(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), SYSDATE(6))) > 1000 THEN
            SET SESSION time_zone = v_zone;
            SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31000, MESSAGE_TEXT =
                'mysqlleader: timestamp is set on this session: leases run on the server''s clock (SET timestamp = DEFAULT first)';
        END IF;
    END IF;
    SET SESSION time_zone = v_zone;
END;
