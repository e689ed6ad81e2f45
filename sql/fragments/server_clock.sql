-- server_clock: refuses a call from a session whose clock is not the server's, before the
-- routine reads anything. Included by the line `-- @include server_clock` once a call, before
-- its first reading of the clock, by every routine a caller calls that reads it (the entry
-- routines: each one that calls leader_election_begin, and assert_leader, which runs in its
-- caller's transaction). Not in leader_election_begin, which a call runs again after each
-- COMMIT: a refusal there could fail a call whose writes were committed. The internal routines
-- that read the clock without it (create_seat, lock_seat, end_term) are called only by routines
-- that include it (src/migrate/routines.rs, every_entry_routine_checks_the_session_clock_once).
-- Any account may SET timestamp = <any time> for its session (no privilege needed, MariaDB and
-- MySQL); from then on UTC_TIMESTAMP() and NOW() return that time, in stored routines too, and
-- only SYSDATE() keeps the real clock. A lease measured on it would end when the caller says: a
-- campaign took a seat whose lease had 10 minutes left, under a term whose lease then ran for 70
-- (MariaDB 10.11, 2026-11-30), and assert_leader would pass a stale leader's fence. So the
-- session's clock (UTC_TIMESTAMP(6): the start of the statement that reads it) is compared with
-- the server's (SYSDATE(6): now), in the time zone '+00:00' for the comparison and the caller's
-- zone again right after. More than 1 ms apart at five readings in a row, each a statement of
-- its own, and the call is refused, 45000 naming `timestamp` and the offset. A set clock stands
-- still and fails every reading. The server's own passes the first, unless the thread was
-- descheduled between the statement's start and its SYSDATE(): under a load average of 4-5 on
-- 2 cores, 10 first readings of 80,000 calls were 1.4-4.5 ms late, and every second reading
-- passed (MariaDB 10.11, 2026-11-30). MariaDB also keeps a connection's statement clock
-- strictly increasing, 1 us a statement at least, so a burst of thousands of statements
-- faster than 1 us each (a tight loop in a procedure of the caller's) runs it ahead of SYSDATE
-- until real time catches up: a call right after such a burst on the same connection is
-- refused too (none of the library's own calls makes such bursts).
-- tests/sql_trust.rs, a_session_clock_that_is_set_is_refused.
BEGIN
    DECLARE v_zone  VARCHAR(64) DEFAULT @@session.time_zone;
    DECLARE v_skew  BIGINT;
    DECLARE v_tries INT DEFAULT 0;
    DECLARE v_msg   VARCHAR(128);
    SET SESSION time_zone = '+00:00';
    server_clock: LOOP
        SET v_skew = TIMESTAMPDIFF(MICROSECOND, SYSDATE(6), UTC_TIMESTAMP(6));
        SET v_tries = v_tries + 1;
        IF ABS(v_skew) <= 1000 THEN
            LEAVE server_clock;
        ELSEIF v_tries >= 5 THEN
            SET SESSION time_zone = v_zone;
            SET v_msg = CONCAT('mysqlleader: timestamp of this session is ', v_skew DIV 1000,
                               ' ms off the server''s clock (SET timestamp = DEFAULT)');
            SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31000, MESSAGE_TEXT = v_msg;
        END IF;
    END LOOP server_clock;
    SET SESSION time_zone = v_zone;
END;
