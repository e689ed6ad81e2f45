//! Installing the SQL objects: the versioned Refinery migrations in `sql/V*.sql` (tables,
//! columns, data: what must happen once and in order), then the repeatable objects in
//! `sql/routines/` and `sql/views/` (every routine and view as its one current definition:
//! [`routines`]).
//!
//! Three ways to install, all with the same result:
//! * [`migrate`] / [`install`] (or `mysqlleader migrate`): runs the versioned migrations that are
//!   not applied yet, recording them in `mysqlleader_schema_history` (kept apart from an
//!   application's own `refinery_schema_history`), then applies each routine that is not live
//!   as this release defines it (its recorded checksum in `mysqlleader_routines` differs, or it
//!   is missing, or was created again after its record: [`plan`]), and records it;
//! * [`install_plan`] (or `mysqlleader migrate --dry-run` / `--verify`): what an install would
//!   change, read only;
//! * [`install_sql`] / [`install_sql_for`] (or `mysqlleader sql`): the same as one script for the
//!   `mysql`/`mariadb` client, for a DBA to review and apply, for one kind of server; it records
//!   what it applied in the same tables, so a later [`migrate`] applies nothing.
//!
//! The versioned migrations never run the routine definitions that V2-V8 hold (they are
//! history, kept for their checksums): no install path creates an older definition, not even
//! for a moment. Every step can run again safely, so a run that failed halfway (MySQL commits
//! DDL at once) is finished by running it again. An applied versioned migration is never
//! edited: a change to a table is a new `V{n}__name.sql`; a change to a routine is an edit of
//! its one file.

mod locks;
pub mod plan;
pub(crate) mod routines;
mod script;


use mysql_async::Pool;
use refinery_core::traits::r#async::{AsyncQuery, AsyncTransaction};

use crate::error::{Error, Result};
use crate::procedures;

pub use locks::DEFAULT_LOCK_BUDGET;
pub use routines::Server;
pub use plan::{install_plan, Plan};
pub use script::{install_sql, install_sql_for};

mod embedded {
    refinery::embed_migrations!("sql");
}

/// The table in which the applied versioned migrations are recorded.
pub const MIGRATION_TABLE: &str = "mysqlleader_schema_history";

/// A versioned migration applied by [`migrate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedMigration {
    pub version: i32,
    pub name: String,
}

/// What [`install`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Installed {
    /// The versioned migrations it applied, in order.
    pub migrations: Vec<AppliedMigration>,
    /// The routines and views it (re-)created, because they were new or their definition
    /// changed, in the order applied.
    pub routines: Vec<String>,
    /// Services whose history misses term changes, read after the install (`None`: the
    /// installer may not read the history); see [`plan::HistoryGaps`].
    pub history_gaps: Option<plan::HistoryGaps>,
    /// What the server's settings put at risk ([`plan::server_cautions`]), logged as warnings.
    pub cautions: Vec<String>,
}

fn runner() -> refinery::Runner {
    let mut runner = embedded::migrations::runner();
    runner.set_migration_table_name(MIGRATION_TABLE);
    runner
}

/// Installs or upgrades the election schema in the database of `pool`, and returns the
/// versioned migrations it applied (none when the schema is current). See [`install`], which
/// also says which routines it replaced.
pub async fn migrate(pool: &Pool) -> Result<Vec<AppliedMigration>> {
    Ok(install(pool).await?.migrations)
}

/// Installs or upgrades the election schema in the database of `pool`, waiting at most
/// [`DEFAULT_LOCK_BUDGET`] in all for locks that open transactions hold ([`install_within`]).
pub async fn install(pool: &Pool) -> Result<Installed> {
    install_within(pool, DEFAULT_LOCK_BUDGET, None).await
}

/// Hears each wait of [`install_within`] for a lock that open transactions hold, as a sentence
/// that names them.
pub type OnLockWait = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

/// Installs or upgrades the election schema in the database of `pool`. No statement of it
/// queues the election's calls for more than a second: one that needs a lock an open
/// transaction holds (an application's fence, an idle reader of the history) gives way after
/// a second, lets the calls through, and tries again, until `lock_budget` is spent; then it
/// fails naming the oldest open transactions (`locks`). `on_wait` hears each such wait (it is
/// logged as a warning in any case). Steps:
/// 1. asks the server what it is (MariaDB replaces routines in place; MySQL cannot);
/// 2. takes the migration lock, so that concurrent installers (several copies of a service
///    starting at once) run one after another; a lock that cannot be taken is an error, except
///    on a Galera node (no named locks there: run one installer at a time, README);
/// 3. refuses a schema that a newer release installed (a migration this release does not know
///    is applied): nothing changes; else runs the versioned migrations not yet recorded,
///    without their routine definitions;
/// 4. applies every routine, trigger and view that is not live as this release defines it
///    ([`plan`]: new, missing, changed, or created again after its record), and records it;
/// 5. runs what the versioned migrations of step 3 deferred until the routines exist;
/// 6. reads whether the history misses term changes ([`plan::history_gaps`]), and what the
///    server's settings put at risk ([`plan::server_cautions`]), and says so;
/// 7. releases the lock, also after a failure.
pub async fn install_within(pool: &Pool, lock_budget: std::time::Duration, on_wait: Option<OnLockWait>) -> Result<Installed> {
    let waits = locks::LockWaits { budget: lock_budget, report: on_wait };
    // 1. Asked before the lock is taken, so that no early return leaves it held.
    let server = Server::from_version(&procedures::server_info(pool).await?.version);
    // 2.
    let mut conn = pool.get_conn().await.map_err(|e| Error::from_pool(pool, e))?;
    let locked = procedures::migration_lock(&mut conn, server).await?;
    let outcome = install_locked(pool, &mut conn, server, &waits).await;
    // 7.
    if locked {
        let unlocked = procedures::migration_unlock(&mut conn, server).await;
        let installed = outcome?;
        unlocked?;
        return Ok(installed);
    }
    outcome
}

async fn install_locked(pool: &Pool, conn: &mut mysql_async::Conn, server: Server, waits: &locks::LockWaits)
    -> Result<Installed> {
    locks::bound_waits(conn).await?;
    // 3. Not over a newer release's schema: its routines would be replaced by older ones.
    if let Some(newer) = plan::newer_than_this_release(conn).await? {
        return Err(newer);
    }
    let mut versioned_conn = pool.get_conn().await.map_err(|e| Error::from_pool(pool, e))?;
    locks::bound_waits(&mut versioned_conn).await?;
    let mut target = Versioned { pool: pool.clone(), conn: versioned_conn, waits: waits.clone(), deferred: Vec::new() };
    let report = runner()
        .run_async(&mut target)
        .await
        .map_err(|e| Error::Migration { message: crate::error::redact(&e.to_string()) })?;
    let migrations: Vec<AppliedMigration> = report
        .applied_migrations()
        .iter()
        .map(|m| AppliedMigration { version: m.version() as i32, name: m.name().to_string() })
        .collect();
    // 4. A view is applied again after any versioned migration, whatever its record: MySQL
    //    keeps a view's column metadata (nullability, defaults) from when it was created, and
    //    after an ALTER of a table under it reports every column nullable until it is re-created.
    //    A routine is applied again when the live one is missing, or was created again after
    //    its record (another release's definition: `plan`), whatever the record says.
    let live = plan::live_objects(conn).await?;
    let mut applied = Vec::new();
    for routine in routines::ROUTINES {
        let checksum = routine.checksum(server);
        if plan::why_apply(routine, server, live.get(routine.name), !migrations.is_empty()).is_none() {
            continue;
        }
        let mut statements = routine.apply_statements(server);
        statements.push(procedures::record_routine_sql(routine.name, routine.kind.name(), &checksum));
        // One round trip: on MySQL the DROP, the CREATE and the re-grant follow each other
        // as closely as the server allows.
        let text = statements.iter().map(|s| format!("{s};")).collect::<Vec<_>>().join("\n");
        // MySQL: a failure after LOCK TABLES must not leave the election's tables locked.
        let unlock = (routine.kind == routines::Kind::Trigger && server == Server::MySql).then_some("UNLOCK TABLES");
        let what = format!("applying {} {}", routine.kind.name(), routine.name);
        if let Err(e) = locks::run_bounded(conn, &text, &what, waits, unlock).await {
            // 1419: binary logging is on, and creating a trigger then needs more than TRIGGER.
            let hint = match &e {
                mysql_async::Error::Server(s) if s.code == 1419 => {
                    " (binary logging is on: creating a trigger then needs the SUPER privilege, or the server's \
                     log_bin_trust_function_creators=ON; README, \"Installing\")"
                }
                _ => "",
            };
            return Err(Error::Migration {
                message: format!("applying {} {} on {}: {}{hint}", routine.kind.name(), routine.name, server.name(),
                                 crate::error::redact(&e.to_string())),
            });
        }
        applied.push(routine.name.to_string());
    }
    // 5.
    for statement in &target.deferred {
        locks::run_bounded(conn, statement, "after the routines", waits, None).await.map_err(|e| Error::Migration {
            message: format!("after the routines: {}", crate::error::redact(&e.to_string())),
        })?;
    }
    // 6. Said, not mended: a history that missed term changes (the trigger was missing).
    let history_gaps = plan::history_gaps(conn).await?;
    if let Some(gaps) = history_gaps.as_ref().filter(|g| g.services > 0) {
        tracing::warn!("mysqlleader install: {gaps}");
    }
    let cautions = plan::server_cautions(conn).await?;
    for caution in &cautions {
        tracing::warn!("mysqlleader install: {caution}");
    }
    Ok(Installed { migrations, routines: applied, history_gaps, cautions })
}

/// The database as Refinery sees it: one connection of the installer's, whose waits for locks
/// are bounded (`locks`); a versioned migration runs statement by statement (each can run
/// again: `locks::run_bounded` retries one), without the statements that define, drop or
/// replace a repeatable object, and its calls of repeatable routines are kept for after the
/// routines are applied ([`routines::versioned_statements`]). Refinery records the checksum of
/// the file as written; its record is written last, after every statement of the migration.
struct Versioned {
    /// Reads Refinery's record of applied migrations (a plain read).
    pool: Pool,
    conn: mysql_async::Conn,
    waits: locks::LockWaits,
    deferred: Vec<String>,
}

impl AsyncTransaction for Versioned {
    type Error = mysql_async::Error;

    async fn execute<'a, T: Iterator<Item = &'a str> + Send + 'a>(&'a mut self, queries: T) -> std::result::Result<usize, Self::Error> {
        let mut count = 0;
        for query in queries {
            let v = routines::versioned_statements(query);
            self.deferred.extend(v.deferred);
            for statement in &v.run {
                locks::run_bounded(&mut self.conn, statement, "a versioned migration", &self.waits, None).await?;
            }
            count += 1;
        }
        Ok(count)
    }
}

impl AsyncQuery<Vec<refinery::Migration>> for Versioned {
    async fn query(&mut self, query: &str) -> std::result::Result<Vec<refinery::Migration>, Self::Error> {
        self.pool.query(query).await
    }
}

impl refinery::AsyncMigrate for Versioned {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migration_files_keep_the_portability_rules() {
        let files = runner().get_migrations().iter().map(|m| (format!("V{}", m.version()), m.sql().unwrap().to_string())).collect::<Vec<_>>();
        let repeatables = routines::ROUTINES.iter().map(|r| (r.name.to_string(), r.text()));
        for (what, sql) in files.into_iter().chain(repeatables) {
            let upper = sql.to_ascii_uppercase();
            assert!(!upper.contains("DELIMITER"), "{what}: no DELIMITER in SQL files");
            assert!(!upper.contains(" AS NEW"), "{what}: no row alias AS new");
            assert!(!upper.contains("VALUES("), "{what}: no VALUES() function");
        }
    }

    #[test]
    fn no_versioned_migration_runs_a_repeatable_definition() {
        for m in runner().get_migrations() {
            let v = routines::versioned_statements(m.sql().unwrap());
            for statement in v.run.iter() {
                for r in routines::ROUTINES {
                    let upper = statement.to_ascii_uppercase();
                    let name = r.name.to_ascii_uppercase();
                    assert!(!upper.starts_with(&format!("CREATE PROCEDURE {name}(")), "V{} creates {}", m.version(), r.name);
                    assert!(!upper.starts_with(&format!("DROP PROCEDURE IF EXISTS {name};")), "V{} drops {}", m.version(), r.name);
                    assert!(!upper.contains(&format!("VIEW {name} ")), "V{} replaces {}", m.version(), r.name);
                }
            }
        }
    }
}
