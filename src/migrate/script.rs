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
         -- as an account that may create tables, views, routines and events. Running it again is safe:\n\
         -- it changes nothing that is current. It records each migration in {}\n\
         -- and each routine in mysqlleader_routines, so `mysqlleader migrate` sees them as applied.\n\n",
        env!("CARGO_PKG_VERSION"),
        server.name(),
        super::MIGRATION_TABLE,
    ));
    out.push_str(&format!("-- ---- this script is for {} ----\n", server.name()));
    push_chunks(&mut out, &procedures::server_check_sql(server == Server::MariaDb, &format!("mysqlleader sql --server {other}")));
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
        push_chunks(&mut out, &v.run.join("\n"));
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
    out
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
                    let unlock = script.find("UNLOCK TABLES;").unwrap();
                    let record = script.find("VALUES ('leader_election_record_term'").unwrap();
                    assert!(lock < create && create < unlock && unlock < record);
                    assert_eq!(script.matches("CALL leader_election_regrant('campaign');").count(), 2);
                }
            }
        }
    }
}
