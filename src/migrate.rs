//! Installing the SQL objects: the Refinery migrations in `sql/`, embedded in the crate.
//!
//! Three ways to install, all with the same result:
//! * [`migrate`] (or `mysqlleader migrate`): runs the migrations that are not applied yet and
//!   records them in the table `mysqlleader_schema_history` (kept apart from an application's
//!   own `refinery_schema_history`, so both can live in one database);
//! * [`install_sql`] (or `mysqlleader sql`): the same as one script for the `mysql`/`mariadb`
//!   client, for a DBA to review and apply; it records the migrations in the same table, so a
//!   later [`migrate`] sees them as applied.
//!
//! Every migration can run again safely (`IF NOT EXISTS`, `DROP ... IF EXISTS` before
//! `CREATE PROCEDURE`), so a run that failed halfway — MySQL commits DDL at once — is finished
//! by running it again. An applied migration is never edited: a change is a new `V{n}__name.sql`.

use mysql_async::Pool;
use refinery_core::traits::r#async::{AsyncQuery, AsyncTransaction};

use crate::error::{Error, Result};
use crate::procedures;

mod embedded {
    refinery::embed_migrations!("sql");
}

/// The table in which the applied migrations are recorded.
pub const MIGRATION_TABLE: &str = "mysqlleader_schema_history";

/// A migration applied by [`migrate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedMigration {
    pub version: i32,
    pub name: String,
}

fn runner() -> refinery::Runner {
    let mut runner = embedded::migrations::runner();
    runner.set_migration_table_name(MIGRATION_TABLE);
    runner
}

/// Installs or upgrades the election schema in the database of `pool`, and returns the
/// migrations it applied (none when the schema is current).
///
/// Concurrent callers (several copies of a service starting at once) are serialized with a
/// named lock where the server supports one, so each migration runs once.
pub async fn migrate(pool: &Pool) -> Result<Vec<AppliedMigration>> {
    // Asked before the lock is taken, so that no early return leaves it held.
    let mariadb = procedures::server_info(pool).await?.version.contains("MariaDB");
    let mut lock_conn = pool.get_conn().await.map_err(Error::from_mysql)?;
    let locked = procedures::migration_lock(&mut lock_conn).await?;
    let mut target = InPlace { pool: pool.clone(), mariadb };
    let outcome = runner().run_async(&mut target).await;
    if locked {
        procedures::migration_unlock(&mut lock_conn).await?;
    }
    let report = outcome.map_err(|e| Error::Migration { message: crate::error::redact(&e.to_string()) })?;
    Ok(report
        .applied_migrations()
        .iter()
        .map(|m| AppliedMigration { version: m.version() as i32, name: m.name().to_string() })
        .collect())
}

/// The database as Refinery sees it: the pool, except that on MariaDB a migration that
/// replaces a procedure (`DROP PROCEDURE IF EXISTS p;` then `CREATE PROCEDURE p`) runs it as
/// one `CREATE OR REPLACE PROCEDURE p` ([`replace_in_place`]). So upgrading a live system
/// leaves no moment in which `p` does not exist: a call made meanwhile runs the old or the new
/// definition, never fails with "PROCEDURE does not exist". MySQL has no such statement; there
/// the migration runs as written, and a call that lands between the DROP and the CREATE (a few
/// milliseconds) fails with error 1305 (README, "Upgrading a live system"). Refinery records
/// the checksum of the file as written either way.
struct InPlace {
    pool: Pool,
    mariadb: bool,
}

impl AsyncTransaction for InPlace {
    type Error = mysql_async::Error;

    async fn execute<'a, T: Iterator<Item = &'a str> + Send + 'a>(&'a mut self, queries: T) -> std::result::Result<usize, Self::Error> {
        let queries: Vec<String> =
            queries.map(|q| if self.mariadb { replace_in_place(q) } else { q.to_string() }).collect();
        self.pool.execute(queries.iter().map(String::as_str)).await
    }
}

impl AsyncQuery<Vec<refinery::Migration>> for InPlace {
    async fn query(&mut self, query: &str) -> std::result::Result<Vec<refinery::Migration>, Self::Error> {
        self.pool.query(query).await
    }
}

impl refinery::AsyncMigrate for InPlace {}

/// `DROP PROCEDURE IF EXISTS p;` followed (after blank and comment lines) by
/// `CREATE PROCEDURE p` becomes `CREATE OR REPLACE PROCEDURE p` (MariaDB 10.1.3+); every other
/// line stays as it is, the comments and blank lines between the two included.
fn replace_in_place(sql: &str) -> String {
    let lines: Vec<&str> = sql.lines().collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let dropped = lines[i]
            .trim()
            .strip_prefix("DROP PROCEDURE IF EXISTS ")
            .and_then(|rest| rest.strip_suffix(';'))
            .map(str::trim);
        if let Some(name) = dropped {
            let next = (i + 1..lines.len()).find(|&j| {
                let t = lines[j].trim();
                !t.is_empty() && !t.starts_with("--")
            });
            if let Some(j) = next {
                let create = format!("CREATE PROCEDURE {name}");
                let rest = lines[j].strip_prefix(&create);
                if rest.is_some_and(|r| r.is_empty() || r.starts_with('(') || r.starts_with(' ')) {
                    out.extend(lines[i + 1..j].iter().map(|l| l.to_string()));
                    out.push(format!("CREATE OR REPLACE PROCEDURE {name}{}", rest.unwrap_or_default()));
                    i = j + 1;
                    continue;
                }
            }
        }
        out.push(lines[i].to_string());
        i += 1;
    }
    let mut text = out.join("\n");
    if sql.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// One statement of a migration file, as the `mysql` client needs to see it.
#[derive(Debug, PartialEq, Eq)]
enum Chunk<'a> {
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
fn split_statements(sql: &str) -> Vec<Chunk<'_>> {
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
            compound = ["CREATE PROCEDURE", "CREATE FUNCTION", "CREATE TRIGGER"]
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

/// The whole installation as one script for the `mysql`/`mariadb` command-line client, with
/// the `DELIMITER` lines that client needs around procedure bodies. Apply it with
/// `mariadb DBNAME < install.sql` as an account that may create tables, routines and events.
pub fn install_sql() -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "-- mysqlleader {} installation script.\n\
         -- Apply with the mysql or mariadb client to the database the services use, e.g.\n\
         --   mariadb --database=app < mysqlleader.sql\n\
         -- as an account that may create tables, views, routines and events. Running it again is safe.\n\
         -- It records each migration in {MIGRATION_TABLE}, so `mysqlleader migrate` sees it as applied.\n\n",
        env!("CARGO_PKG_VERSION"),
    ));
    out.push_str(&procedures::schema_history_ddl(MIGRATION_TABLE));
    out.push_str("\n\n");
    for migration in runner().get_migrations() {
        let sql = migration.sql().unwrap_or_default();
        out.push_str(&format!("-- ---- migration V{}__{} ----\n", migration.version(), migration.name()));
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
        out.push_str(&procedures::record_migration_sql(
            MIGRATION_TABLE,
            migration.version() as i64,
            migration.name(),
            migration.checksum(),
        ));
        out.push_str("\n\n");
    }
    out
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

    #[test]
    fn every_procedure_of_the_contract_is_in_the_script_once() {
        let script = install_sql();
        for name in ["campaign", "am_i_leader", "current_leader", "force_leader", "reelect", "resign",
                     "assert_leader", "set_expiry_event"] {
            // Once, except those a later migration replaces: the last definition is that one's.
            let create = format!("CREATE PROCEDURE {name}(");
            let (replaced_by, count) = match name {
                "assert_leader" => (Some("V8__access_copy_on_the_seat"), 4),
                "set_expiry_event" => (Some("V5__expiry_event_switch"), 2),
                "campaign" | "am_i_leader" | "current_leader" => (Some("V8__access_copy_on_the_seat"), 4),
                _ => (Some("V8__access_copy_on_the_seat"), 3),
            };
            assert_eq!(script.matches(&create).count(), count, "{create}");
            if let Some(v) = replaced_by {
                let at = script.find(&format!("-- ---- migration {v} ----")).expect("the migration is in the script");
                assert!(script.rfind(&create).unwrap() > at, "the last {name} is {v}'s");
            }
        }
        assert!(script.contains("CREATE EVENT IF NOT EXISTS leader_election_expire"));
        // Every procedure body sits between DELIMITER lines.
        assert_eq!(script.matches("DELIMITER $$").count(), script.matches("CREATE PROCEDURE").count());
        assert!(!script.contains("VALUES("), "no VALUES() in ON DUPLICATE KEY UPDATE");
    }

    #[test]
    fn mariadb_replaces_a_dropped_and_recreated_procedure_in_place() {
        let sql = "DROP PROCEDURE IF EXISTS p;\n-- p does a thing\nCREATE PROCEDURE p(IN a INT)\nBEGIN\n  SELECT 1;\nEND;\n\
                   DROP PROCEDURE IF EXISTS tmp;\nCALL other();\nCREATE PROCEDURE pq()\nBEGIN\nEND;\n\
                   DROP PROCEDURE IF EXISTS q;\nCREATE PROCEDURE qq()\nBEGIN\nEND;\n";
        assert_eq!(replace_in_place(sql),
                   "-- p does a thing\nCREATE OR REPLACE PROCEDURE p(IN a INT)\nBEGIN\n  SELECT 1;\nEND;\n\
                    DROP PROCEDURE IF EXISTS tmp;\nCALL other();\nCREATE PROCEDURE pq()\nBEGIN\nEND;\n\
                    DROP PROCEDURE IF EXISTS q;\nCREATE PROCEDURE qq()\nBEGIN\nEND;\n");
        // Every procedure a migration re-creates is replaced in place; none is dropped first.
        for m in runner().get_migrations() {
            let replaced = replace_in_place(m.sql().unwrap());
            for line in replaced.lines().filter(|l| l.starts_with("DROP PROCEDURE IF EXISTS ")) {
                let name = line.trim_start_matches("DROP PROCEDURE IF EXISTS ").trim_end_matches(';');
                let created_after = replaced.split(line).nth(1).is_some_and(|after| {
                    after.lines().find(|l| l.starts_with("CREATE")).is_some_and(|l| l.starts_with(&format!("CREATE PROCEDURE {name}(")))
                });
                assert!(!created_after, "V{}: {name} is still dropped before it is created again", m.version());
            }
        }
    }

    #[test]
    fn migration_files_keep_the_portability_rules() {
        for m in runner().get_migrations() {
            let sql = m.sql().unwrap().to_ascii_uppercase();
            assert!(!sql.contains("DELIMITER"), "V{}: no DELIMITER in migration files", m.version());
            assert!(!sql.contains(" AS NEW"), "V{}: no row alias AS new", m.version());
            assert!(!sql.contains("VALUES("), "V{}: no VALUES() function", m.version());
        }
    }
}
