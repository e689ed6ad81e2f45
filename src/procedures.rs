//! Typed calls of the election procedures: the only Rust code that holds SQL text.
//!
//! Every function takes anything `mysql_async` can run a statement on — `&Pool`, `&mut Conn`,
//! or `&mut Transaction` — and returns the procedure's one row as a typed struct, with
//! durations as [`Duration`]s and errors mapped to [`Error`]. The procedures make every
//! decision; these functions only carry arguments in and results out.
//!
//! ```no_run
//! # async fn demo() -> mysqlleader::Result<()> {
//! let pool = mysqlleader::pool_from_url("mysql://app:secret@127.0.0.1:3306/app")?;
//! let c = mysqlleader::procedures::campaign(&pool, "billing", "web-3", std::time::Duration::from_secs(10)).await?;
//! if c.is_leader {
//!     println!("leading at term {} for {:?}", c.term, c.lease_remaining);
//! }
//! # Ok(()) }
//! ```

use std::time::Duration;

use mysql_async::prelude::{Query, ToConnection, WithParams};
use mysql_async::{Params, Row, Value};

use crate::error::{Error, Result};

/// Result of `campaign` and `force_leader`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Campaign {
    /// True when the caller holds the seat after the call.
    pub is_leader: bool,
    /// The node holding a valid lease (the caller when `is_leader`).
    pub leader_id: Option<String>,
    /// The fencing token of the service.
    pub term: u64,
    /// Time left on the current leader's lease, by the database's clock, measured after the call.
    pub lease_remaining: Duration,
}

/// Result of `am_i_leader` and `assert_leader`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderCheck {
    pub is_leader: bool,
    /// The current term, or the last term there was when nobody leads.
    pub term: u64,
    /// Time left on the current leader's lease; zero when nobody leads.
    pub lease_remaining: Duration,
}

/// Result of `current_leader`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentLeader {
    /// The node holding a valid lease; `None` when the seat is vacant or the lease has expired.
    pub leader_id: Option<String>,
    pub term: u64,
    pub lease_remaining: Duration,
}

/// Result of `reelect`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reelect {
    /// The node whose valid lease was ended, `None` when nobody led.
    pub previous_leader_id: Option<String>,
    pub term: u64,
}

/// Result of `resign`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resign {
    /// True when the node led and its lease has been ended.
    pub resigned: bool,
    pub term: u64,
}

/// A lease as the procedures take it: whole milliseconds. Out-of-range values are passed on
/// as they are (saturated), so that the procedure rejects them with its own message.
fn lease_ms(lease: Duration) -> i64 {
    i64::try_from(lease.as_millis()).unwrap_or(i64::MAX)
}

/// Runs one `CALL` and returns its single row.
async fn call_row<'a, 't: 'a, C>(conn: C, sql: &'static str, params: Params) -> Result<Row>
where
    C: ToConnection<'a, 't> + 'a,
{
    let result = sql.with(params).run(conn).await.map_err(Error::from_mysql)?;
    let rows: Vec<Row> = result.collect_and_drop().await.map_err(Error::from_mysql)?;
    rows.into_iter().next().ok_or_else(|| Error::Server {
        code: 0,
        state: "HY000".into(),
        message: format!("`{sql}` returned no row"),
    })
}

fn col<T: mysql_async::prelude::FromValue>(row: &Row, name: &str) -> Result<T> {
    let value: Value = row.get(name).ok_or_else(|| Error::Server {
        code: 0,
        state: "HY000".into(),
        message: format!("result has no column `{name}`"),
    })?;
    mysql_async::from_value_opt::<T>(value).map_err(|e| Error::Server {
        code: 0,
        state: "HY000".into(),
        message: format!("column `{name}`: {e}"),
    })
}

fn millis(row: &Row, name: &str) -> Result<Duration> {
    let ms: i64 = col(row, name)?;
    Ok(Duration::from_millis(ms.max(0) as u64))
}

fn flag(row: &Row, name: &str) -> Result<bool> {
    Ok(col::<i64>(row, name)? != 0)
}

fn campaign_from(row: &Row) -> Result<Campaign> {
    Ok(Campaign {
        is_leader: flag(row, "is_leader")?,
        leader_id: col(row, "leader_id")?,
        term: col(row, "term")?,
        lease_remaining: millis(row, "lease_remaining_ms")?,
    })
}

fn leader_check_from(row: &Row) -> Result<LeaderCheck> {
    Ok(LeaderCheck {
        is_leader: flag(row, "is_leader")?,
        term: col(row, "term")?,
        lease_remaining: millis(row, "lease_remaining_ms")?,
    })
}

/// `CALL campaign(service_id, node_id, lease_ms)`: takes a vacant or expired seat (a new
/// term), renews the caller's valid lease (same term), or else only reads.
pub async fn campaign<'a, 't: 'a, C>(conn: C, service_id: &str, node_id: &str, lease: Duration) -> Result<Campaign>
where
    C: ToConnection<'a, 't> + 'a,
{
    let row = call_row(conn, "CALL campaign(?, ?, ?)", (service_id, node_id, lease_ms(lease)).into()).await?;
    campaign_from(&row)
}

/// `CALL am_i_leader(service_id, node_id)`: a read.
pub async fn am_i_leader<'a, 't: 'a, C>(conn: C, service_id: &str, node_id: &str) -> Result<LeaderCheck>
where
    C: ToConnection<'a, 't> + 'a,
{
    let row = call_row(conn, "CALL am_i_leader(?, ?)", (service_id, node_id).into()).await?;
    leader_check_from(&row)
}

/// `CALL current_leader(service_id)`: a read.
pub async fn current_leader<'a, 't: 'a, C>(conn: C, service_id: &str) -> Result<CurrentLeader>
where
    C: ToConnection<'a, 't> + 'a,
{
    let row = call_row(conn, "CALL current_leader(?)", (service_id,).into()).await?;
    Ok(CurrentLeader {
        leader_id: col(&row, "leader_id")?,
        term: col(&row, "term")?,
        lease_remaining: millis(&row, "lease_remaining_ms")?,
    })
}

/// `CALL force_leader(service_id, node_id, lease_ms)`: installs the node now with a new term.
pub async fn force_leader<'a, 't: 'a, C>(conn: C, service_id: &str, node_id: &str, lease: Duration) -> Result<Campaign>
where
    C: ToConnection<'a, 't> + 'a,
{
    let row = call_row(conn, "CALL force_leader(?, ?, ?)", (service_id, node_id, lease_ms(lease)).into()).await?;
    campaign_from(&row)
}

/// `CALL reelect(service_id)`: ends the current lease now; the next campaign wins.
pub async fn reelect<'a, 't: 'a, C>(conn: C, service_id: &str) -> Result<Reelect>
where
    C: ToConnection<'a, 't> + 'a,
{
    let row = call_row(conn, "CALL reelect(?)", (service_id,).into()).await?;
    Ok(Reelect { previous_leader_id: col(&row, "previous_leader_id")?, term: col(&row, "term")? })
}

/// `CALL resign(service_id, node_id)`: ends the node's lease now if it is the current leader.
pub async fn resign<'a, 't: 'a, C>(conn: C, service_id: &str, node_id: &str) -> Result<Resign>
where
    C: ToConnection<'a, 't> + 'a,
{
    let row = call_row(conn, "CALL resign(?, ?)", (service_id, node_id).into()).await?;
    Ok(Resign { resigned: flag(&row, "resigned")?, term: col(&row, "term")? })
}

/// `CALL assert_leader(service_id, node_id, term)`: the fencing guard. Call it on the
/// application's own transaction before its writes: it fails with [`Error::NotLeader`] unless
/// the node holds a valid lease at exactly `term`, and on success it keeps the election row
/// share-locked until that transaction ends, so no takeover can commit in between.
///
/// ```no_run
/// # async fn demo(pool: mysql_async::Pool, term: u64) -> mysqlleader::Result<()> {
/// use mysql_async::prelude::Queryable;
/// let mut conn = pool.get_conn().await.map_err(|e| mysqlleader::Error::Connection { message: e.to_string() })?;
/// let mut tx = conn.start_transaction(Default::default()).await.unwrap();
/// mysqlleader::procedures::assert_leader(&mut tx, "billing", "web-3", term).await?;
/// tx.query_drop("UPDATE invoices SET state = 'sent' WHERE id = 42").await.unwrap();
/// tx.commit().await.unwrap();
/// # Ok(()) }
/// ```
pub async fn assert_leader<'a, 't: 'a, C>(conn: C, service_id: &str, node_id: &str, term: u64) -> Result<LeaderCheck>
where
    C: ToConnection<'a, 't> + 'a,
{
    let row = call_row(conn, "CALL assert_leader(?, ?, ?)", (service_id, node_id, term).into()).await?;
    leader_check_from(&row)
}

/// `CALL set_expiry_event(enabled)`: switches the expiry event; returns whether it is enabled.
pub async fn set_expiry_event<'a, 't: 'a, C>(conn: C, enabled: bool) -> Result<bool>
where
    C: ToConnection<'a, 't> + 'a,
{
    let row = call_row(conn, "CALL set_expiry_event(?)", (i32::from(enabled),).into()).await?;
    flag(&row, "event_enabled")
}

// ---- Installation support (used by `crate::migrate`) ----

/// Takes the named lock that serializes concurrent migrations of one database (waits up to
/// 60 s). Returns false where the server offers no named locks (Galera rejects GET_LOCK).
pub(crate) async fn migration_lock(conn: &mut mysql_async::Conn) -> Result<bool> {
    let got: std::result::Result<Option<Option<i64>>, _> =
        "SELECT GET_LOCK(CONCAT('mysqlleader.migrate.', COALESCE(DATABASE(), '')), 60)".first(&mut *conn).await;
    match got {
        Ok(Some(Some(1))) => Ok(true),
        Ok(_) => Err(Error::Migration { message: "another migration held the lock for 60 s; try again".into() }),
        Err(mysql_async::Error::Server(_)) => Ok(false),
        Err(e) => Err(Error::from_mysql(e)),
    }
}

pub(crate) async fn migration_unlock(conn: &mut mysql_async::Conn) -> Result<()> {
    "DO RELEASE_LOCK(CONCAT('mysqlleader.migrate.', COALESCE(DATABASE(), '')))"
        .ignore(&mut *conn)
        .await
        .map_err(Error::from_mysql)
}

/// The table Refinery records migrations in, as Refinery itself creates it.
pub(crate) fn schema_history_ddl(table: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {table} (\n    version INT PRIMARY KEY,\n    name VARCHAR(255),\n    \
         applied_on VARCHAR(255),\n    checksum VARCHAR(255)\n);"
    )
}

/// Records one migration as applied, the way Refinery does (RFC 3339 time, checksum as text).
pub(crate) fn record_migration_sql(table: &str, version: i64, name: &str, checksum: u64) -> String {
    format!(
        "INSERT IGNORE INTO {table} (version, name, applied_on, checksum)\n\
         VALUES ({version}, '{name}', DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%dT%H:%i:%sZ'), '{checksum}');"
    )
}

// ---- The wake-up lock (used by `crate::wakeup`) ----
//
// A named lock per database and service, `mysqlleader.` + 40 hex digits of SHA1(db/service)
// (named locks are limited to 64 characters). It carries no authority: it only wakes followers.

const WAKEUP_LOCK_NAME: &str = "CONCAT('mysqlleader.', LEFT(SHA1(CONCAT(COALESCE(DATABASE(), ''), '/', ?)), 40))";

/// False on a Galera node, where named locks are local to one node and so cannot wake others.
pub(crate) async fn wakeup_lock_supported(conn: &mut mysql_async::Conn) -> Result<bool> {
    let wsrep: Option<(String, String)> =
        "SHOW VARIABLES LIKE 'wsrep_on'".first(&mut *conn).await.map_err(Error::from_mysql)?;
    Ok(!wsrep.is_some_and(|(_, value)| value.eq_ignore_ascii_case("ON")))
}

/// `GET_LOCK(name, wait_s)`: true when this connection now holds the lock.
pub(crate) async fn wakeup_lock_get(conn: &mut mysql_async::Conn, service_id: &str, wait_s: u32) -> Result<bool> {
    let sql = format!("SELECT GET_LOCK({WAKEUP_LOCK_NAME}, ?)");
    let got: Option<Option<i64>> = sql.with((service_id, wait_s)).first(&mut *conn).await.map_err(Error::from_mysql)?;
    Ok(got.flatten() == Some(1))
}

/// Whether any connection holds the lock now.
pub(crate) async fn wakeup_lock_held(conn: &mut mysql_async::Conn, service_id: &str) -> Result<bool> {
    let sql = format!("SELECT IS_USED_LOCK({WAKEUP_LOCK_NAME})");
    let holder: Option<Option<u64>> = sql.with((service_id,)).first(&mut *conn).await.map_err(Error::from_mysql)?;
    Ok(holder.flatten().is_some())
}

pub(crate) async fn wakeup_lock_release(conn: &mut mysql_async::Conn, service_id: &str) -> Result<()> {
    let sql = format!("DO RELEASE_LOCK({WAKEUP_LOCK_NAME})");
    sql.with((service_id,)).ignore(&mut *conn).await.map_err(Error::from_mysql)
}
