//! The installation as one script for the `mysql`/`mariadb` command-line client, and the
//! statement splitter it (and the installer) share.

use super::routines::{versioned_statements, Server, ROUTINES};
use crate::procedures;

/// One statement of a migration file, as the `mysql` client needs to see it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Chunk<'a> {
    /// Comment or blank lines between statements.
    Comment(&'a str),
    /// A statement that ends with `;`.
    Simple(String),
    /// `CREATE PROCEDURE/FUNCTION/TRIGGER ... BEGIN ... END;`: needs another delimiter.
    Compound(String),
}

/// Splits a migration file into statements. The files follow one layout rule that makes this
/// simple and exact: a compound statement (`CREATE PROCEDURE`, `CREATE FUNCTION`,
/// `CREATE TRIGGER`) ends with a line that is exactly `END;`, and any other statement ends
/// with a line whose last character is `;`.
pub(crate) fn split_statements(sql: &str) -> Vec<Chunk<'_>> {
    let mut chunks = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut compound = false;
    for line in sql.lines() {
        let trimmed = line.trim();
        if current.is_empty() {
            if trimmed.is_empty() || trimmed.starts_with("--") {
                chunks.push(Chunk::Comment(line));
                continue;
            }
            let upper = trimmed.to_ascii_uppercase();
            compound = ["CREATE PROCEDURE", "CREATE FUNCTION", "CREATE TRIGGER", "CREATE OR REPLACE PROCEDURE",
                        "CREATE OR REPLACE TRIGGER"]
                .iter()
                .any(|p| upper.starts_with(p));
        }
        current.push(line);
        let ends = if compound { line == "END;" } else { !trimmed.starts_with("--") && trimmed.ends_with(';') };
        if ends {
            let text = current.join("\n");
            chunks.push(if compound { Chunk::Compound(text) } else { Chunk::Simple(text) });
            current.clear();
        }
    }
    if !current.is_empty() {
        chunks.push(Chunk::Simple(current.join("\n")));
    }
    chunks
}

/// The installation script for MariaDB ([`install_sql_for`]`(Server::MariaDb)`).
pub fn install_sql() -> String {
    install_sql_for(Server::MariaDb)
}

/// The whole installation as one script for the `mysql`/`mariadb` command-line client on
/// `server`, with the `DELIMITER` lines that client needs around procedure bodies: a check that
/// it runs on that kind of server, every versioned migration without its routine definitions
/// (each statement can run again and changes nothing the second time), each routine and view
/// once, as [`Routine::apply_statements`](super::routines::Routine::apply_statements) writes
/// it for `server`, and what the migrations deferred until the routines exist. It records the
/// migrations and routines as [`super::install`] does. Apply it with
/// `mariadb DBNAME < install.sql` as an account that may create tables, routines and events.
pub fn install_sql_for(server: Server) -> String {
    let mut out = String::new();
    let other = match server {
        Server::MariaDb => "mysql",
        Server::MySql => "mariadb",
    };
    out.push_str(&format!(
        "-- mysqlleader {} installation script for {}.\n\
         -- Apply with the mysql or mariadb client to the database the services use, e.g.\n\
         --   mariadb --database=app < mysqlleader.sql\n\
         -- as an account with, on that database: CREATE, ALTER, DROP, CREATE ROUTINE, ALTER ROUTINE,\n\
         -- EVENT, CREATE VIEW, TRIGGER, SELECT, INSERT, UPDATE, DELETE{}.\n\
         -- It checks them before it changes anything (a trial table, trigger, view and event, created\n\
         -- and dropped) and stops at the first it lacks. Never apply it with --force: a statement\n\
         -- refused would be skipped and the rest installed without it (without the trigger, no term\n\
         -- change would be recorded in the history). Running it again is safe: it changes nothing\n\
         -- that is current. It records each migration in {}\n\
         -- and each routine in mysqlleader_routines, so `mysqlleader migrate` sees them as applied.\n\n",
        env!("CARGO_PKG_VERSION"),
        server.name(),
        match server {
            Server::MariaDb => "",
            Server::MySql => ", LOCK TABLES (the trigger is replaced under LOCK TABLES);\n\
                              -- with binary logging on, also SUPER or the server's log_bin_trust_function_creators=ON\n\
                              -- (for the trigger), and GRANT OPTION to upgrade a schema with granted accounts",
        },
        super::MIGRATION_TABLE,
    ));
    out.push_str(&format!("-- ---- this script is for {} ----\n", server.name()));
    push_chunks(&mut out, &procedures::server_check_sql(server == Server::MariaDb, &format!("mysqlleader sql --server {other}")));
    out.push('\n');
    // A schema a newer release installed is left as it is (docs/upgrades.md, "Going back").
    let known = super::runner().get_migrations().iter().map(|m| m.version() as i64).max().unwrap_or(0);
    out.push_str("-- ---- a schema that a newer release installed is left as it is ----\n");
    push_chunks(&mut out, &procedures::newer_schema_check_sql(super::MIGRATION_TABLE, known));
    out.push('\n');
    out.push_str(LOCK_WAIT_PREAMBLE);
    push_chunks(&mut out, &privilege_probe(server));
    out.push('\n');
    out.push_str(&procedures::schema_history_ddl(super::MIGRATION_TABLE));
    out.push_str("\n\n");
    let mut deferred = Vec::new();
    // In version order (the embedded list is in file-name order: V10 before V2).
    let mut migrations = super::runner().get_migrations().clone();
    migrations.sort_by_key(|m| m.version());
    for migration in &migrations {
        let v = versioned_statements(migration.sql().unwrap_or_default());
        out.push_str(&format!("-- ---- migration V{}__{} ----\n", migration.version(), migration.name()));
        for statement in &v.run {
            match once_only(statement, migration.version()) {
                Some(guarded) => out.push_str(&guarded),
                None => push_chunks(&mut out, statement),
            }
        }
        deferred.extend(v.deferred);
        out.push_str(&procedures::record_migration_sql(
            super::MIGRATION_TABLE,
            migration.version() as i64,
            migration.name(),
            migration.checksum(),
        ));
        out.push_str("\n\n");
    }
    for routine in ROUTINES {
        out.push_str(&format!("-- ---- {} {} (sql/{}/{}.sql) ----\n", routine.kind.name(), routine.name,
                              routine.kind.dir(), routine.name));
        let statements = routine.apply_statements(server);
        push_chunks(&mut out, &statements.iter().map(|s| format!("{s};")).collect::<Vec<_>>().join("\n"));
        out.push_str(&procedures::record_routine_sql(routine.name, routine.kind.name(), &routine.checksum(server)));
        out.push_str(";\n\n");
    }
    if !deferred.is_empty() {
        out.push_str("-- ---- what the migrations run once the routines exist ----\n");
        push_chunks(&mut out, &deferred.join("\n"));
    }
    out.push_str(&done_report(ROUTINES.len()));
    out
}

/// The script's last statement: what it installed, read back from the database (the client
/// prints it; reached only when every statement before succeeded, since the client stops at the
/// first error): the schema version recorded, the routines recorded out of this release's
/// `routines`, and whether the history's trigger is in place (an installer that ran the script
/// with `--force` and no TRIGGER privilege sees MISSING here).
fn done_report(routines: usize) -> String {
    format!(
        "-- ---- done: what is installed now ----\n\
         SELECT CONCAT('mysqlleader {version}: installed; schema version ', \
         (SELECT MAX(version) FROM {table}), '; routines recorded ', \
         (SELECT COUNT(*) FROM mysqlleader_routines), ' of {routines}; the history trigger ', \
         IF(EXISTS(SELECT 1 FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() \
         AND TRIGGER_NAME = 'leader_election_record_term'), 'in place', 'MISSING (run the script again without --force, \
         as an account with TRIGGER)')) AS mysqlleader;\n",
        version = env!("CARGO_PKG_VERSION"),
        table = super::MIGRATION_TABLE,
    )
}

/// Set at the top of the script: no statement of it waits more than a second for a lock that an
/// open transaction holds (the server's default is a year), because every election call that
/// touches the same table or routine queues behind a statement that waits. Such a statement
/// fails instead (1205) and the client stops there; run the script again once that transaction
/// has ended (`mysqlleader migrate` tries again by itself: src/migrate/locks.rs).
const LOCK_WAIT_PREAMBLE: &str = "\
-- No statement waits more than 1 s for a lock another session holds (an application's open
-- transaction on the election's tables or routines): the election's calls would queue behind
-- it. Such a statement fails (ERROR 1205) and the script stops there; run it again once that
-- transaction has ended. Open transactions, oldest first:
--   SELECT trx_mysql_thread_id, trx_started FROM information_schema.INNODB_TRX ORDER BY trx_started;
SET SESSION lock_wait_timeout = 1;

";

/// The privileges the script needs, tried before it changes anything: a trial table with a
/// trigger, a view and an event, each created and dropped again (a trial routine was created
/// and dropped by the server check before). The client stops at the first refusal, with the
/// server's message naming the privilege; the trial objects it leaves are named
/// `mysqlleader_install_probe*` and are dropped by the next run. An installer without TRIGGER
/// otherwise installed everything else, and no term change was recorded in the history from
/// then on. On MySQL, LOCK TABLES too (the trigger is replaced under it).
fn privilege_probe(server: Server) -> String {
    let lock = match server {
        Server::MariaDb => "",
        Server::MySql => "LOCK TABLES mysqlleader_install_probe WRITE;\nUNLOCK TABLES;\n",
    };
    format!(
        "-- ---- the privileges this script needs, tried before it changes anything ----\n\
         DROP TRIGGER IF EXISTS mysqlleader_install_probe_trigger;\n\
         DROP VIEW IF EXISTS mysqlleader_install_probe_view;\n\
         DROP EVENT IF EXISTS mysqlleader_install_probe_event;\n\
         DROP TABLE IF EXISTS mysqlleader_install_probe;\n\
         CREATE TABLE mysqlleader_install_probe (id INT PRIMARY KEY);\n\
         ALTER TABLE mysqlleader_install_probe ADD COLUMN probe INT NULL;\n\
         INSERT INTO mysqlleader_install_probe (id) VALUES (1);\n\
         UPDATE mysqlleader_install_probe SET probe = 1;\n\
         DELETE FROM mysqlleader_install_probe;\n\
         {lock}\
         CREATE TRIGGER mysqlleader_install_probe_trigger BEFORE UPDATE ON mysqlleader_install_probe FOR EACH ROW\n\
         BEGIN\n\
         END;\n\
         DROP TRIGGER mysqlleader_install_probe_trigger;\n\
         CREATE SQL SECURITY INVOKER VIEW mysqlleader_install_probe_view AS SELECT id FROM mysqlleader_install_probe;\n\
         DROP VIEW mysqlleader_install_probe_view;\n\
         CREATE EVENT mysqlleader_install_probe_event ON SCHEDULE EVERY 1 DAY DISABLE DO DELETE FROM mysqlleader_install_probe;\n\
         DROP EVENT mysqlleader_install_probe_event;\n\
         DROP TABLE mysqlleader_install_probe;\n"
    )
}

/// A statement of versioned migration `version` that changes what is there (ALTER TABLE, a
/// CALL of the migration's own procedure, a write), written to run only when the migration is
/// not recorded as applied yet: a re-run of the script then skips it, and takes no lock. (V11's
/// `ALTER TABLE ... MODIFY ended_how` changed nothing the second time, but waited for every
/// open reader of the history with every renew queued behind it.) The statement goes to the
/// server as a prepared statement from its bytes in hex, so no quoting and no `sql_mode` can
/// change it. None for a statement that needs no guard (`CREATE TABLE IF NOT EXISTS`, `CREATE
/// EVENT IF NOT EXISTS`, the creation and drop of a migration's own procedure) or cannot be
/// prepared.
fn once_only(statement: &str, version: i32) -> Option<String> {
    let text = statement.trim().strip_suffix(';')?;
    let upper = text.to_ascii_uppercase();
    let guarded = ["ALTER TABLE ", "CALL ", "INSERT ", "UPDATE ", "DELETE ", "CREATE INDEX ", "DROP INDEX ", "DROP TABLE ", "RENAME TABLE "];
    if !guarded.iter().any(|p| upper.starts_with(p)) || upper.contains("IF NOT EXISTS") {
        return None;
    }
    let hex: String = text.bytes().map(|b| format!("{b:02X}")).collect();
    let table = super::MIGRATION_TABLE;
    Some(format!(
        "-- Only when V{version} is not applied yet:\n{}\n\
         SET @mysqlleader_step = IF(EXISTS (SELECT 1 FROM {table} WHERE version = {version}), 'DO 0', CONVERT(X'{hex}' USING utf8mb4));\n\
         PREPARE mysqlleader_step FROM @mysqlleader_step;\n\
         EXECUTE mysqlleader_step;\n\
         DEALLOCATE PREPARE mysqlleader_step;\n",
        text.lines().map(|l| format!("--   {l}")).collect::<Vec<_>>().join("\n"),
    ))
}

/// Appends the statements of `sql`, compound ones between `DELIMITER` lines.
fn push_chunks(out: &mut String, sql: &str) {
    for chunk in split_statements(sql) {
        match chunk {
            Chunk::Comment(line) => {
                out.push_str(line);
                out.push('\n');
            }
            Chunk::Simple(text) => {
                out.push_str(&text);
                out.push('\n');
            }
            Chunk::Compound(text) => {
                out.push_str("DELIMITER $$\n");
                out.push_str(text.strip_suffix(';').unwrap_or(&text));
                out.push_str("$$\nDELIMITER ;\n");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_compound_and_simple_statements() {
        let sql = "-- c\nCREATE TABLE t (\n a INT\n);\nDROP PROCEDURE IF EXISTS p;\nCREATE PROCEDURE p()\nBEGIN\n    SELECT 1;\n    BEGIN\n    END;\nEND;\n";
        let chunks = split_statements(sql);
        assert_eq!(chunks, vec![
            Chunk::Comment("-- c"),
            Chunk::Simple("CREATE TABLE t (\n a INT\n);".into()),
            Chunk::Simple("DROP PROCEDURE IF EXISTS p;".into()),
            Chunk::Compound("CREATE PROCEDURE p()\nBEGIN\n    SELECT 1;\n    BEGIN\n    END;\nEND;".into()),
        ]);
    }

    /// A re-run of the script takes no lock for a migration already applied: each statement that
    /// changes what is there runs, as a prepared statement of its own bytes, only while its
    /// migration is unrecorded; the others are as written.
    #[test]
    fn the_script_runs_a_migrations_changes_only_until_it_is_recorded() {
        let alter = "ALTER TABLE leader_election_history\n    MODIFY ended_how ENUM('expired', 'it''s') NULL;";
        let guarded = once_only(alter, 11).expect("an ALTER TABLE is guarded");
        let text = alter.strip_suffix(';').unwrap();
        let hex: String = text.bytes().map(|b| format!("{b:02X}")).collect();
        assert!(guarded.contains(&format!(
            "SET @mysqlleader_step = IF(EXISTS (SELECT 1 FROM mysqlleader_schema_history WHERE version = 11), 'DO 0', CONVERT(X'{hex}' USING utf8mb4));")));
        assert!(guarded.contains("\nEXECUTE mysqlleader_step;\n"));
        assert!(guarded.lines().filter(|l| !l.starts_with("--")).all(|l| !l.contains("ALTER")), "the statement itself only in hex and comments");
        assert!(once_only("CALL leader_election_v11_add_reservation();", 11).is_some());
        assert!(once_only("INSERT INTO t SELECT 1;", 14).is_some());
        for left in ["CREATE TABLE IF NOT EXISTS t (a INT);", "DROP PROCEDURE IF EXISTS p;", "CREATE EVENT IF NOT EXISTS e ON SCHEDULE EVERY 1 SECOND DO SELECT 1;"] {
            assert_eq!(once_only(left, 3), None, "{left}");
        }
        for server in [Server::MariaDb, Server::MySql] {
            let script = install_sql_for(server);
            assert!(script.find("SET SESSION lock_wait_timeout = 1;").unwrap() < script.find("-- ---- migration V1__").unwrap());
            // The privileges are tried before the first change (the record table).
            let first_change = script.find("CREATE TABLE IF NOT EXISTS mysqlleader_schema_history").unwrap();
            for trial in ["CREATE TRIGGER mysqlleader_install_probe_trigger", "CREATE EVENT mysqlleader_install_probe_event",
                          "CREATE SQL SECURITY INVOKER VIEW mysqlleader_install_probe_view"] {
                assert!(script.find(trial).unwrap() < first_change, "{server:?}: {trial}");
            }
            assert_eq!(script.contains("LOCK TABLES mysqlleader_install_probe WRITE;"), server == Server::MySql);
            assert!(!script.lines().any(|l| l.starts_with("ALTER TABLE") && !l.contains("mysqlleader_install_probe")),
                    "{server:?}: no ALTER TABLE of the election runs unguarded");
        }
    }

    /// The script creates each routine exactly once, as its file defines it, between DELIMITER
    /// lines; on MariaDB in place, on MySQL dropped, created and re-granted.
    #[test]
    fn the_script_creates_every_routine_once() {
        for server in [Server::MariaDb, Server::MySql] {
            let script = install_sql_for(server);
            for r in ROUTINES {
                let create = r.create(server);
                let body = &create["CREATE ".len()..];
                assert_eq!(script.matches(body).count(), 1, "{server:?}: {} once", r.name);
                let head = body.lines().next().unwrap();
                let creates = script.lines().filter(|l| l.starts_with("CREATE ") && l.ends_with(head)).count();
                assert_eq!(creates, 1, "{server:?}: {} created once", r.name);
            }
            let compound = ["CREATE PROCEDURE", "CREATE OR REPLACE PROCEDURE", "CREATE TRIGGER", "CREATE OR REPLACE TRIGGER"];
            let bodies = script.lines().filter(|l| compound.iter().any(|c| l.starts_with(c))).count();
            assert_eq!(script.matches("DELIMITER $$").count(), bodies, "{server:?}: every body between DELIMITER lines");
            assert!(script.contains("CREATE EVENT IF NOT EXISTS leader_election_expire"));
            assert!(!script.contains("VALUES("), "no VALUES() in ON DUPLICATE KEY UPDATE");
            match server {
                Server::MariaDb => {
                    assert!(!script.contains("DROP PROCEDURE IF EXISTS `campaign`"));
                    assert!(script.contains("CREATE OR REPLACE TRIGGER leader_election_record_term"));
                }
                Server::MySql => {
                    assert!(!script.contains("CREATE OR REPLACE PROCEDURE"));
                    assert!(!script.contains("CREATE OR REPLACE TRIGGER"));
                    // The trigger is swapped under the table lock, and the lock ends before the record.
                    let lock = script.find("LOCK TABLES `leader_election` WRITE").unwrap();
                    let create = script.find("CREATE TRIGGER leader_election_record_term").unwrap();
                    let unlock = lock + script[lock..].find("UNLOCK TABLES;").unwrap();
                    let record = script.find("VALUES ('leader_election_record_term'").unwrap();
                    assert!(lock < create && create < unlock && unlock < record);
                    assert_eq!(script.matches("CALL leader_election_regrant('campaign');").count(), 2);
                }
            }
        }
    }
}
