//! What an install would change, read from what is live: the plan of `mysqlleader migrate
//! --dry-run`, the differences of `mysqlleader migrate --verify`, and the routines
//! [`crate::install`] applies again.
//!
//! The installer's record (`mysqlleader_routines`) says which definition it applied, and when.
//! It is trusted only while what is live agrees with it: a routine, trigger or view that is
//! missing, or that was created again after its record (an older release's script run over
//! this one: a downgrade, or a restore of old definitions), is applied again, whatever the
//! record's checksum says. Creation times are read in UTC from `information_schema`
//! (`ROUTINES.LAST_ALTERED`, `TRIGGERS.CREATED`), and a creation counts as "again" only when it
//! is more than a minute after the record ([`REPLICATION_SLACK_S`]: a cluster node applies the
//! installer's `CREATE` when it arrives), so a re-creation within that minute is not seen; views
//! have no such time, and are applied again only when missing or after a versioned migration.

use std::collections::{HashMap, HashSet};

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Pool};

use super::routines::{self, Kind, Routine, Server};
use super::MIGRATION_TABLE;
use crate::error::{Error, Result};
use crate::procedures;

/// What an install of this release would change in one database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub server: Server,
    /// Versioned migrations this release has and the database has not applied, in order.
    pub migrations: Vec<PendingMigration>,
    /// Versions the database has applied that this release does not know: a newer release
    /// installed them. An install refuses to run then.
    pub newer: Vec<i32>,
    /// Routines, the trigger and the view that would be (re-)created, in the order applied.
    pub routines: Vec<PendingRoutine>,
    /// Services whose history misses term changes ([`history_gaps`]); `None` when the history
    /// could not be read (no `SELECT` on it) or is not installed yet.
    pub history_gaps: Option<HistoryGaps>,
    /// What the server's own settings put at risk, one sentence each ([`server_cautions`]):
    /// said by `migrate` and `--dry-run`/`--verify`, but no difference of the schema.
    pub cautions: Vec<String>,
}

/// The services whose history of terms has a hole: a term change that wrote no history row
/// (the trigger was missing meanwhile: dropped by hand, or an install without the `TRIGGER`
/// privilege forced on). The lost rows cannot be restored; the history is whole again from the
/// next term change once the trigger is back.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HistoryGaps {
    /// How many services.
    pub services: u64,
    /// The first ten of them, by name.
    pub examples: Vec<String>,
}

/// A versioned migration not applied yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingMigration {
    pub version: i32,
    pub name: String,
    /// The tables it alters: each `ALTER TABLE` waits for the open transactions that read the
    /// table (at most 1 s an attempt), and the election's calls on that table wait behind it.
    pub alters: Vec<String>,
}

/// A repeatable object an install would apply, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRoutine {
    pub name: String,
    pub kind: &'static str,
    pub why: Why,
}

/// Why a repeatable object would be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// Not there, and never recorded: new in this release (or a first install).
    New,
    /// Not there, though recorded: dropped since.
    Missing,
    /// There, but not recorded: installed by a release from before the record (V9), or by hand.
    Unrecorded,
    /// Its recorded definition is not this release's.
    Changed,
    /// Created again (at the UTC time given) after the installer recorded it: another
    /// release's definition may be live.
    ReplacedSince(String),
    /// A view, created again after any versioned migration (MySQL keeps a view's column
    /// metadata from when it was created).
    Refresh,
}

impl std::fmt::Display for HistoryGaps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the history misses term changes of {} service(s) ({}{}): terms changed while the history trigger was \
             missing; those rows cannot be restored, and the history is whole again from each service's next term",
            self.services,
            self.examples.join(", "),
            if self.services > self.examples.len() as u64 { ", ..." } else { "" }
        )
    }
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::New => f.write_str("new"),
            Why::Missing => f.write_str("missing (dropped since it was installed)"),
            Why::Unrecorded => f.write_str("not recorded by this installer (an older release's, or made by hand)"),
            Why::Changed => f.write_str("its definition changed in this release"),
            Why::ReplacedSince(at) => write!(f, "created again at {at} UTC, after it was installed (another release's definition?)"),
            Why::Refresh => f.write_str("re-created after the versioned migrations"),
        }
    }
}

impl Plan {
    /// True when an install would change nothing.
    pub fn is_current(&self) -> bool {
        self.migrations.is_empty() && self.newer.is_empty() && self.routines.is_empty()
    }

    /// True when the history misses term changes (a difference no install mends).
    pub fn history_has_gaps(&self) -> bool {
        self.history_gaps.as_ref().is_some_and(|g| g.services > 0)
    }

    /// The error an install meets when a newer release has installed versions this one lacks.
    pub fn newer_error(&self) -> Option<Error> {
        self.newer_message().map(|message| Error::Migration { message })
    }

    /// What [`newer_error`](Self::newer_error) says.
    pub fn newer_message(&self) -> Option<String> {
        newer_message(&self.newer)
    }
}

/// What an install of this release would change in the database of `pool` (reads only).
pub async fn install_plan(pool: &Pool) -> Result<Plan> {
    let server = Server::from_version(&procedures::server_info(pool).await?.version);
    let mut conn = pool.get_conn().await.map_err(|e| Error::from_pool(pool, e))?;
    let applied = applied_versions(&mut conn).await?;
    let known: Vec<refinery::Migration> = super::embedded::migrations::runner().get_migrations().to_vec();
    let mut migrations = Vec::new();
    for m in &known {
        if !applied.contains(&(m.version() as i32)) {
            migrations.push(PendingMigration { version: m.version() as i32, name: m.name().to_string(), alters: alters(m.sql().unwrap_or("")) });
        }
    }
    migrations.sort_by_key(|m| m.version);
    let newer = newer_versions(&applied, &known_versions());
    let live = live_objects(&mut conn).await?;
    let routines = routines::ROUTINES
        .iter()
        .filter_map(|r| why_apply(r, server, live.get(r.name), !migrations.is_empty()).map(|why| PendingRoutine { name: r.name.to_string(), kind: r.kind.name(), why }))
        .collect();
    let history_gaps = history_gaps(&mut conn).await?;
    let cautions = server_cautions(&mut conn).await?;
    Ok(Plan { server, migrations, newer, routines, history_gaps, cautions })
}

/// What the server's settings put at risk that the schema cannot mend, one sentence each:
/// - a Galera node without a binary log (`wsrep_on` ON, `log_bin` OFF): MariaDB then emulates
///   the log for Galera, and keeps rows of a statement cut short (`max_statement_time`,
///   `KILL QUERY`) in the transaction's write set although the node rolled them back; a session
///   that cuts a call that changes a seat and then commits makes that service's history differ
///   between the nodes (measured on MariaDB 10.11.19: `tests/galera.rs`'s cut-call test, 900
///   cut calls a run, left the nodes disagreeing in 5 of 45 runs without the log, 0 of 40 with it).
pub async fn server_cautions(conn: &mut Conn) -> Result<Vec<String>> {
    let vars = crate::procedures::server_variables(conn, &["wsrep_on", "log_bin"]).await?;
    let mut cautions = Vec::new();
    if vars.is_on("wsrep_on") && !vars.is_on("log_bin") {
        cautions.push(GALERA_WITHOUT_BINLOG.to_string());
    }
    Ok(cautions)
}

/// [`server_cautions`]' sentence for a Galera node without a binary log.
pub const GALERA_WITHOUT_BINLOG: &str =
    "this Galera node runs without a binary log (log_bin=OFF): MariaDB then keeps rows of a statement cut short \
     (max_statement_time, KILL QUERY) in the write set, so a session that cuts its own call and then commits can \
     make its service's history differ between the nodes; start every node with log_bin (README, \"Clusters\")";

/// The services whose history misses a term change: terms are raised by one at a time and each
/// change writes one history row (the trigger), and pruning removes only the oldest ended terms,
/// so where a service has history rows they must run without a gap up to the seat's term.
/// `None` when the history cannot be read (1142: no `SELECT`; 1146: not installed).
pub async fn history_gaps(conn: &mut Conn) -> Result<Option<HistoryGaps>> {
    let rows: Vec<(u64, Option<String>)> = match conn
        .query(
            "SELECT COUNT(*), SUBSTRING_INDEX(GROUP_CONCAT(CAST(e.service_id AS CHAR CHARACTER SET utf8mb4) \
                    ORDER BY e.service_id SEPARATOR '\n'), '\n', 10) \
               FROM leader_election e \
               JOIN (SELECT service_id, MIN(term) AS lo, MAX(term) AS hi, COUNT(*) AS n \
                       FROM leader_election_history GROUP BY service_id) h ON h.service_id = e.service_id \
              WHERE h.hi <> e.term OR h.hi - h.lo + 1 <> h.n",
        )
        .await
    {
        Ok(rows) => rows,
        Err(mysql_async::Error::Server(e)) if e.code == 1142 || e.code == 1146 => return Ok(None),
        Err(e) => return Err(Error::from_mysql(e)),
    };
    let (services, names) = rows.into_iter().next().unwrap_or((0, None));
    let examples = names.map(|n| n.split('\n').map(str::to_string).collect()).unwrap_or_default();
    Ok(Some(HistoryGaps { services, examples }))
}

/// Why `routine` would be applied, given what is live of it (`None`: it is not there) and
/// whether versioned migrations run first; `None` when it is current.
pub(crate) fn why_apply(routine: &Routine, server: Server, live: Option<&Live>, after_migrations: bool) -> Option<Why> {
    let checksum = routine.checksum(server);
    match live {
        None | Some(Live { exists: false, recorded: None, .. }) => Some(Why::New),
        Some(Live { exists: false, recorded: Some(_), .. }) => Some(Why::Missing),
        Some(Live { recorded: None, .. }) => Some(Why::Unrecorded),
        Some(Live { recorded: Some(r), .. }) if *r != checksum => Some(Why::Changed),
        Some(Live { replaced_at: Some(at), .. }) => Some(Why::ReplacedSince(at.clone())),
        Some(_) if routine.kind == Kind::View && after_migrations => Some(Why::Refresh),
        Some(_) => None,
    }
}

/// How much later than its record a live object may have been created and still count as the
/// recorded one, in seconds: on a Galera node or a Group Replication member other than the one
/// that installed, the `CREATE` is applied (and timed) when it arrives, after the record's time
/// on the installing node; a replica's lag is seconds. An older release's script run over this
/// one within this minute of the install goes unseen.
const REPLICATION_SLACK_S: u32 = 60;

/// One repeatable object's state: there or not, its recorded checksum, and when it was created
/// again after its record (UTC), if it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Live {
    pub exists: bool,
    pub recorded: Option<String>,
    pub replaced_at: Option<String>,
}

/// Every repeatable object of the schema that is live or recorded, by name.
pub(crate) async fn live_objects(conn: &mut Conn) -> Result<HashMap<String, Live>> {
    // Creation times in UTC: information_schema shows them in the session's time zone.
    conn.query_drop("SET @mysqlleader_time_zone = @@session.time_zone, SESSION time_zone = '+00:00'").await.map_err(Error::from_mysql)?;
    let live: std::result::Result<Vec<(String, Option<String>)>, _> = conn
        .query(
            "SELECT ROUTINE_NAME, DATE_FORMAT(LAST_ALTERED, '%Y-%m-%d %H:%i:%s.%f') FROM information_schema.ROUTINES \
              WHERE ROUTINE_SCHEMA = DATABASE() \
             UNION ALL SELECT TRIGGER_NAME, DATE_FORMAT(CREATED, '%Y-%m-%d %H:%i:%s.%f') FROM information_schema.TRIGGERS \
              WHERE TRIGGER_SCHEMA = DATABASE() \
             UNION ALL SELECT TABLE_NAME, NULL FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE()",
        )
        .await;
    let restored = conn.query_drop("SET SESSION time_zone = @mysqlleader_time_zone").await;
    let live = live.map_err(Error::from_mysql)?;
    restored.map_err(Error::from_mysql)?;
    let recorded: Vec<(String, String, String)> = match conn
        .query(format!(
            "SELECT name, checksum, DATE_FORMAT(applied_on + INTERVAL {REPLICATION_SLACK_S} SECOND, '%Y-%m-%d %H:%i:%s.%f') \
             FROM mysqlleader_routines"
        ))
        .await
    {
        Ok(rows) => rows,
        // No record table yet: a first install, or a release from before V9.
        Err(mysql_async::Error::Server(e)) if e.code == 1146 => Vec::new(),
        Err(e) => return Err(Error::from_mysql(e)),
    };
    let mut objects: HashMap<String, Live> = HashMap::new();
    let mut created: HashMap<String, Option<String>> = HashMap::new();
    for (name, at) in live {
        objects.insert(name.clone(), Live { exists: true, recorded: None, replaced_at: None });
        created.insert(name, at);
    }
    for (name, checksum, applied_on) in recorded {
        let entry = objects.entry(name.clone()).or_insert(Live { exists: false, recorded: None, replaced_at: None });
        entry.recorded = Some(checksum);
        // Both formatted alike ("YYYY-MM-DD HH:MM:SS.ffffff"), so text order is time order;
        // `applied_on` is read with the slack added.
        if let Some(Some(at)) = created.get(&name) {
            if at.as_str() > applied_on.as_str() {
                entry.replaced_at = Some(at.trim_end_matches(".000000").to_string());
            }
        }
    }
    Ok(objects)
}

/// The applied versions this release does not know, in order.
fn newer_versions(applied: &HashSet<i32>, known: &HashSet<i32>) -> Vec<i32> {
    let mut newer: Vec<i32> = applied.iter().copied().filter(|v| !known.contains(v)).collect();
    newer.sort_unstable();
    newer
}

/// The refusal of an install over versions `newer` (applied, unknown to this release); `None`
/// when there are none.
fn newer_message(newer: &[i32]) -> Option<String> {
    let newest = *newer.iter().max()?;
    let known = known_versions().into_iter().max().unwrap_or(0);
    Some(format!(
        "the schema is newer than this release: migration V{newest} is applied, and this release knows migrations up to \
         V{known}; nothing was changed. Use the newer release's `mysqlleader migrate`, or go back to this release as \
         docs/upgrades.md, \"Going back to an older release\", says"
    ))
}

/// The versions of this release's migrations.
fn known_versions() -> HashSet<i32> {
    super::embedded::migrations::runner().get_migrations().iter().map(|m| m.version() as i32).collect()
}

/// The refusal of an install over a schema that a newer release installed, if it is one.
pub(crate) async fn newer_than_this_release(conn: &mut Conn) -> Result<Option<Error>> {
    let newer = newer_versions(&applied_versions(conn).await?, &known_versions());
    Ok(newer_message(&newer).map(|message| Error::Migration { message }))
}

/// The versions the record of applied migrations lists (none before the first install). A
/// record that cannot be read as one (a table of that name that is something else) is a
/// migration error, as Refinery's own reading of it would be.
async fn applied_versions(conn: &mut Conn) -> Result<HashSet<i32>> {
    match conn.query::<i32, _>(format!("SELECT version FROM {MIGRATION_TABLE}")).await {
        Ok(versions) => Ok(versions.into_iter().collect()),
        Err(mysql_async::Error::Server(e)) if e.code == 1146 => Ok(HashSet::new()),
        Err(mysql_async::Error::Server(e)) => Err(Error::Migration {
            message: format!("the record of applied migrations ({MIGRATION_TABLE}) cannot be read: {}", e.message),
        }),
        Err(e) => Err(Error::from_mysql(e)),
    }
}

/// The tables a versioned migration's statements alter (`ALTER TABLE name ...`), in order.
fn alters(sql: &str) -> Vec<String> {
    let mut tables = Vec::new();
    for statement in routines::versioned_statements(sql).run {
        let words: Vec<&str> = statement.split_whitespace().collect();
        for (i, pair) in words.windows(2).enumerate() {
            if pair[0].eq_ignore_ascii_case("ALTER") && pair[1].eq_ignore_ascii_case("TABLE") {
                if let Some(table) = words.get(i + 2) {
                    let table = table.trim_matches('`').to_string();
                    if !tables.contains(&table) {
                        tables.push(table);
                    }
                }
            }
        }
    }
    tables
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alters_names_the_tables_a_migration_alters() {
        assert_eq!(alters("CREATE TABLE IF NOT EXISTS t (a INT);\nALTER TABLE `leader_election` ADD COLUMN x INT;\nALTER TABLE h MODIFY y INT;"),
                   ["leader_election", "h"]);
        assert!(alters("CREATE TABLE IF NOT EXISTS t (a INT);").is_empty());
    }

    #[test]
    fn a_routine_is_applied_when_it_is_missing_unrecorded_changed_or_replaced() {
        let r = routines::find("campaign").unwrap();
        let sum = r.checksum(Server::MariaDb);
        let live = |exists, recorded: Option<&str>, replaced: Option<&str>| Live {
            exists,
            recorded: recorded.map(str::to_string),
            replaced_at: replaced.map(str::to_string),
        };
        let why = |l: Option<Live>| why_apply(r, Server::MariaDb, l.as_ref(), false);
        assert_eq!(why(None), Some(Why::New));
        assert_eq!(why(Some(live(false, Some(&sum), None))), Some(Why::Missing));
        assert_eq!(why(Some(live(true, None, None))), Some(Why::Unrecorded));
        assert_eq!(why(Some(live(true, Some("0"), None))), Some(Why::Changed));
        assert_eq!(why(Some(live(true, Some(&sum), Some("2026-11-29 10:00:01")))), Some(Why::ReplacedSince("2026-11-29 10:00:01".into())));
        assert_eq!(why(Some(live(true, Some(&sum), None))), None);
        let view = routines::find("leader_election_terms").unwrap();
        let view_sum = view.checksum(Server::MariaDb);
        assert_eq!(why_apply(view, Server::MariaDb, Some(&live(true, Some(&view_sum), None)), true), Some(Why::Refresh));
        assert_eq!(why_apply(view, Server::MariaDb, Some(&live(true, Some(&view_sum), None)), false), None);
    }
}
