-- mysqlleader V9: routines as their one current definition, and a record of the grants on them.
--
-- From V9 on, every routine and view lives as its one current definition in a file of its own
-- (sql/routines/NAME.sql, sql/views/NAME.sql). The installer applies them after the versioned
-- migrations, each when its checksum differs from the one recorded here, and never runs the
-- routine definitions of V2-V8 again: they are history (docs/design.md, "The SQL layer").
--
-- 1. mysqlleader_routines: one row per routine or view the installer applied, with the SHA-256
--    of the statement that created it.
-- 2. leader_election_grants: who was granted EXECUTE on which of the schema's procedures, one
--    row per account and procedure, written by `mysqlleader grant` (and seeded here from the
--    server's grant table where the installing account may read it). MariaDB replaces a routine
--    in place (CREATE OR REPLACE keeps its grants); MySQL can only DROP and CREATE it again,
--    and DROP revokes every account's EXECUTE on it: there the installer re-grants, from this
--    table, right after it creates the routine again (CALL leader_election_regrant).
--
-- Every statement here can run again safely.

CREATE TABLE IF NOT EXISTS mysqlleader_routines (
    name       VARCHAR(64)  NOT NULL COMMENT 'routine or view name',
    kind       VARCHAR(16)  NOT NULL COMMENT 'procedure or view',
    checksum   CHAR(64)     NOT NULL COMMENT 'SHA-256 (hex) of the CREATE statement applied',
    applied_on DATETIME(6)  NOT NULL COMMENT 'UTC',
    PRIMARY KEY (name)
) ENGINE=InnoDB COMMENT='mysqlleader: the routines and views the installer applied';

CREATE TABLE IF NOT EXISTS leader_election_grants (
    user_name  VARBINARY(512) NOT NULL COMMENT 'user name of the account, utf8mb4 bytes',
    host       VARBINARY(1024) NOT NULL COMMENT 'host part of the account, utf8mb4 bytes',
    routine    VARCHAR(64)    NOT NULL COMMENT 'procedure of this schema the account may EXECUTE',
    granted_at DATETIME(6)    NULL     COMMENT 'UTC; NULL when seeded from the server''s grants',
    granted_by VARCHAR(384)   NULL     COMMENT 'USER() of the session that granted',
    PRIMARY KEY (user_name, host, routine)
) ENGINE=InnoDB COMMENT='mysqlleader: EXECUTE grants to re-establish when a routine is re-created';

-- Seeds leader_election_grants from mysql.procs_priv when this session may read it; does
-- nothing otherwise (1142, 1044: no SELECT on the mysql schema). Internal; dropped again right
-- after the call.
DROP PROCEDURE IF EXISTS leader_election_v9_seed_grants;
CREATE PROCEDURE leader_election_v9_seed_grants()
    MODIFIES SQL DATA
    SQL SECURITY INVOKER
BEGIN
    DECLARE EXIT HANDLER FOR 1142, 1044, 1146 BEGIN END;
    INSERT IGNORE INTO leader_election_grants (user_name, host, routine)
    SELECT CAST(CONVERT(p.User USING utf8mb4) AS BINARY), CAST(CONVERT(p.Host USING utf8mb4) AS BINARY),
           p.Routine_name
      FROM mysql.procs_priv p
     WHERE p.Db = DATABASE() AND p.Routine_type = 'PROCEDURE' AND FIND_IN_SET('Execute', p.Proc_priv) > 0
       AND p.User <> ''
       AND p.Routine_name IN ('campaign', 'am_i_leader', 'current_leader', 'resign', 'assert_leader',
                              'force_leader', 'reelect', 'set_expiry_event');
END;
CALL leader_election_v9_seed_grants();
DROP PROCEDURE IF EXISTS leader_election_v9_seed_grants;
