-- mysqlleader V12: a secret in the name of the wake-up lock.
--
-- The wake-up lock (src/wakeup.rs) is a named lock the leader holds and followers wait on. Any
-- account of the server may take any named lock (GET_LOCK needs no privilege), so a name that
-- anyone can compute lets another tenant squat on it: followers then wait for the lease's end
-- instead of waking at a resign. From V12 the name includes a secret of this schema, and only
-- leader_election_wakeup_name tells it, to an account allowed on the service.
--
-- The secret: 32 random bytes, made once (RANDOM_BYTES where the server has it: MySQL,
-- MariaDB 10.10+; else SHA-256 of the server's own entropy: UUID_SHORT, RAND, the time, the
-- connection). Nobody holds SELECT on this table; the definer routines read it.
--
-- Every statement here can run again safely (the row is made once).

CREATE TABLE IF NOT EXISTS leader_election_secret (
    id     TINYINT UNSIGNED NOT NULL COMMENT 'always 1',
    secret VARBINARY(64)    NOT NULL COMMENT 'the schema''s secret in the name of the wake-up lock',
    PRIMARY KEY (id)
) ENGINE=InnoDB COMMENT='mysqlleader: the secret of the wake-up lock names; no role may read it';

DROP PROCEDURE IF EXISTS leader_election_v12_make_secret;
CREATE PROCEDURE leader_election_v12_make_secret()
    MODIFIES SQL DATA
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_secret VARBINARY(64);
    -- 1305: RANDOM_BYTES does not exist on this server (MariaDB before 10.10).
    DECLARE CONTINUE HANDLER FOR 1305
        SET v_secret = UNHEX(SHA2(CONCAT(UUID_SHORT(), '/', RAND(), '/', UUID(), '/', SYSDATE(6), '/',
                                         CONNECTION_ID(), '/', RAND()), 256));
    SET v_secret = RANDOM_BYTES(32);
    INSERT IGNORE INTO leader_election_secret (id, secret) VALUES (1, v_secret);
END;
CALL leader_election_v12_make_secret();
DROP PROCEDURE IF EXISTS leader_election_v12_make_secret;
