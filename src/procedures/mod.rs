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

/// A lease as the procedures take it: whole milliseconds; a fraction is rejected, never
/// rounded. Out-of-range values are passed on as they are (saturated), so that the procedure
/// rejects them with its own message.
fn lease_ms(lease: Duration) -> Result<i64> {
    if lease.subsec_nanos() % 1_000_000 != 0 {
        return Err(Error::invalid("lease_ms", format!(
            "mysqlleader: lease_ms must be a whole number of milliseconds (got {lease:?})")));
    }
    Ok(i64::try_from(lease.as_millis()).unwrap_or(i64::MAX))
}

/// Runs one `CALL` and returns its single row. Through the text protocol, its parameters
/// written in as literals ([`inline_params`]): a server-side prepared statement per connection
/// would fail every call once any login has filled the server's prepared-statement table
/// (`max_prepared_stmt_count`, error 1461), which needs no privilege at all.
async fn call_row<'a, 't: 'a, C>(conn: C, sql: &'static str, params: Params) -> Result<Row>
where
    C: ToConnection<'a, 't> + 'a,
{
    let result = inline_params(sql, &params)?.run(conn).await.map_err(Error::from_mysql)?;
    let rows: Vec<Row> = result.collect_and_drop().await.map_err(Error::from_mysql)?;
    rows.into_iter().next().ok_or_else(|| Error::Server {
        code: 0,
        state: "HY000".into(),
        message: format!("`{sql}` returned no row"),
    })
}

/// How many times [`retry_conflicts`] runs a call that keeps losing to concurrent writes.
pub const CONFLICT_TRIES: u32 = 3;
/// The pause between two runs of [`retry_conflicts`]: long enough for the write it lost to (a
/// leader's renew, say) to be applied everywhere, short beside any lease.
const CONFLICT_PAUSE: Duration = Duration::from_millis(20);

/// Runs `call` — one autocommit `CALL` through a pool, so each run is a transaction of its own —
/// again when it loses to a concurrent write of the same seat: error 1213, a deadlock, or on
/// Galera and Group Replication a certification conflict with a write another member committed
/// first (a leader's renew of the seat an operator hands over, for instance). The server rolled
/// the loser back whole, so nothing of that run took effect and running it again is safe.
///
/// 1. Run `call`.
/// 2. Done when it succeeds, or fails with any error but 1213.
/// 3. After a 1213: when [`CONFLICT_TRIES`] runs have been made, fail with that error, saying
///    so; else wait [`CONFLICT_PAUSE`] and go back to 1.
///
/// The one-shot operator calls of the CLI and of the C ABI go through it. Never wrap a call
/// made inside the caller's own transaction: a 1213 there ended the whole transaction, and only
/// the caller can run it again.
pub async fn retry_conflicts<T, F, Fut>(mut call: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let mut runs = 1;
    loop {
        match call().await {
            Err(e) if e.server_code() == Some(1213) => {
                if runs >= CONFLICT_TRIES {
                    return Err(e.with_context(&format!("lost to a concurrent write of the seat {CONFLICT_TRIES} times")));
                }
                runs += 1;
                tokio::time::sleep(CONFLICT_PAUSE).await;
            }
            other => return other,
        }
    }
}

/// `sql` with each `?` replaced by its parameter as a literal that means exactly that value
/// under every `sql_mode` and connection character set: text as `_utf8mb4 X'...'` (its bytes),
/// integers as digits, NULL. The statements are the crate's own constants, whose only `?` are
/// placeholders.
pub(crate) fn inline_params(sql: &str, params: &Params) -> Result<String> {
    let values: &[Value] = match params {
        Params::Empty => &[],
        Params::Positional(values) => values,
        Params::Named(_) => return Err(Error::usage("named parameters are not used by mysqlleader")),
    };
    let mut out = String::with_capacity(sql.len() + 64);
    let mut values = values.iter();
    for (i, piece) in sql.split('?').enumerate() {
        if i > 0 {
            let literal = match values.next() {
                Some(Value::NULL) => "NULL".to_string(),
                Some(Value::Bytes(bytes)) => {
                    format!("_utf8mb4 X'{}'", bytes.iter().map(|b| format!("{b:02X}")).collect::<String>())
                }
                Some(Value::Int(n)) => n.to_string(),
                Some(Value::UInt(n)) => n.to_string(),
                other => return Err(Error::usage(format!("parameter {i} of `{sql}` cannot be written as a literal: {other:?}"))),
            };
            out.push_str(&literal);
        }
        out.push_str(piece);
    }
    if values.next().is_some() {
        return Err(Error::usage(format!("`{sql}` has fewer placeholders than parameters")));
    }
    Ok(out)
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
    let row = call_row(conn, "CALL campaign(?, ?, ?)", (service_id, node_id, lease_ms(lease)?).into()).await?;
    campaign_from(&row)
}

/// `CALL leader_election_campaign(service_id, node_id, lease_ms, held_term)`: [`campaign`] for a
/// caller that knows which term it holds (`held_term`; 0 when it holds none): it renews only a
/// lease of `node_id` at that very term, and takes a vacant or expired seat as `campaign` does.
/// A valid lease of `node_id` at another term belongs to another process with the same node id
/// (issue 39): nothing is written, and the answer says it leads (`is_leader` false, `leader_id`
/// this node id, its term and lease). The elector's call; an account granted before the routine
/// existed gets 1370 (run `mysqlleader grant` again).
pub async fn campaign_holding<'a, 't: 'a, C>(
    conn: C,
    service_id: &str,
    node_id: &str,
    lease: Duration,
    held_term: u64,
) -> Result<Campaign>
where
    C: ToConnection<'a, 't> + 'a,
{
    let params = (service_id, node_id, lease_ms(lease)?, held_term).into();
    let row = call_row(conn, "CALL leader_election_campaign(?, ?, ?, ?)", params).await?;
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
    let row = call_row(conn, "CALL force_leader(?, ?, ?)", (service_id, node_id, lease_ms(lease)?).into()).await?;
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

/// `CALL resign_to(service_id, node_id, to_node)`: the leader's own handover. Ends the
/// caller's lease now if and only if it holds a valid one (the term ends `handed_over`) and
/// reserves the vacant seat for `to_node` for one lease: only `to_node` may take it until then.
/// `to_node` must be another node.
pub async fn resign_to<'a, 't: 'a, C>(conn: C, service_id: &str, node_id: &str, to_node: &str) -> Result<Resign>
where
    C: ToConnection<'a, 't> + 'a,
{
    let row = call_row(conn, "CALL resign_to(?, ?, ?)", (service_id, node_id, to_node).into()).await?;
    Ok(Resign { resigned: flag(&row, "resigned")?, term: col(&row, "term")? })
}

/// One seat in the answer of [`renew_seats`]: renewed for the node (`answer.is_leader`), or led
/// by another node with a valid lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatAnswer {
    pub service_id: String,
    /// The seat as `campaign` would have answered for it: the leader, the term (a renew keeps
    /// it), the lease left, measured on the database's clock.
    pub answer: Campaign,
}

/// `CALL renew_seats(node_id, lease_ms, service_ids)`: one call for many seats of one node (the
/// building block of a [`Session`](crate::Session)). In one statement it renews every seat in
/// `service_ids` that `node_id` holds with a valid lease (`is_leader`), and it tells who leads
/// each other listed seat that another node holds with a valid lease. A seat missing from the
/// answer is vacant, reserved, expired, not yet created, one of this node's that could not be
/// renewed, or outside the account's limit: send `campaign` for it, which decides it as always
/// (and refuses a service outside the limit with [`Error::AccessDenied`]).
pub async fn renew_seats<'a, 't: 'a, C>(conn: C, node_id: &str, lease: Duration, service_ids: &[&str]) -> Result<Vec<SeatAnswer>>
where
    C: ToConnection<'a, 't> + 'a,
{
    seats_call(conn, "CALL renew_seats(?, ?, ?)", node_id, lease, service_ids).await
}

/// `CALL campaign_seats(node_id, lease_ms, service_ids)`: the batched takeover of a
/// [`Session`](crate::Session). In one transaction it takes every seat in `service_ids` that is
/// vacant or expired and that no handover's reservation bars for `node_id` (`is_leader`, at its
/// new term, with its history row), and it tells who leads each other listed seat that another
/// node holds with a valid lease. Seats the node held before are left out (see
/// [`renew_seats`]), and so is every seat `campaign` alone decides (no row or no access copy yet,
/// a handover to acknowledge, a seat another transaction has locked): send `campaign` for each
/// seat missing from the answer.
pub async fn campaign_seats<'a, 't: 'a, C>(conn: C, node_id: &str, lease: Duration, service_ids: &[&str]) -> Result<Vec<SeatAnswer>>
where
    C: ToConnection<'a, 't> + 'a,
{
    seats_call(conn, "CALL campaign_seats(?, ?, ?)", node_id, lease, service_ids).await
}

/// One seat [`resign_seats`] found the node holding: given up, or skipped because locked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatResigned {
    pub service_id: String,
    /// True when its term ended; false when another transaction held the seat's lock (an
    /// application's fence): the node still holds it, and [`resign`] (which waits for the lock)
    /// can end it.
    pub resigned: bool,
    /// The term that ended (`resigned` in the history, by this call's account), or the one still
    /// held.
    pub term: u64,
}

/// `CALL resign_seats(node_id, service_ids)`: a node's graceful exit from many seats in one
/// call (a [`Session`](crate::Session)'s shutdown). In one transaction it resigns every seat in
/// `service_ids` that `node_id` holds with a valid lease, as [`resign`] does: the term ends
/// `resigned` now and the seat is vacant for the next campaign. A seat another transaction has
/// locked is never waited for: it is answered `resigned: false`. The answer has one entry per
/// listed seat the node held, by service id; a seat it did not hold, or a service outside the
/// account's limit, has none. Stop acting as leader of every listed seat before calling it.
pub async fn resign_seats<'a, 't: 'a, C>(conn: C, node_id: &str, service_ids: &[&str]) -> Result<Vec<SeatResigned>>
where
    C: ToConnection<'a, 't> + 'a,
{
    let ids = serde_json::to_string(service_ids).map_err(|e| Error::invalid("service_ids", e.to_string()))?;
    let sql = inline_params("CALL resign_seats(?, ?)", &(node_id, ids).into())?;
    let result = sql.run(conn).await.map_err(Error::from_mysql)?;
    let rows: Vec<Row> = result.collect_and_drop().await.map_err(Error::from_mysql)?;
    rows.iter()
        .map(|row| Ok(SeatResigned { service_id: col(row, "service_id")?, resigned: flag(row, "resigned")?, term: col(row, "term")? }))
        .collect()
}

/// One call of a procedure over many seats (`renew_seats`, `campaign_seats`): the list goes as
/// a JSON array, in the text protocol (one round trip, no prepared statement to hold).
async fn seats_call<'a, 't: 'a, C>(conn: C, sql: &str, node_id: &str, lease: Duration, service_ids: &[&str]) -> Result<Vec<SeatAnswer>>
where
    C: ToConnection<'a, 't> + 'a,
{
    let ids = serde_json::to_string(service_ids).map_err(|e| Error::invalid("service_ids", e.to_string()))?;
    let sql = inline_params(sql, &(node_id, lease_ms(lease)?, ids).into())?;
    let result = sql.run(conn).await.map_err(Error::from_mysql)?;
    let rows: Vec<Row> = result.collect_and_drop().await.map_err(Error::from_mysql)?;
    rows.iter()
        .map(|row| Ok(SeatAnswer { service_id: col(row, "service_id")?, answer: campaign_from(row)? }))
        .collect()
}

/// `CALL handover(service_id, to_node)` (operator role): ends the current term now (it ends
/// `handed_over`), vacates the seat and reserves it for `to_node` for one lease, so that only
/// `to_node` may take it, at its next campaign; nothing changes when `to_node` leads already.
/// The result is the seat after the call, from `to_node`'s side (`is_leader`: it leads).
pub async fn handover<'a, 't: 'a, C>(conn: C, service_id: &str, to_node: &str) -> Result<Campaign>
where
    C: ToConnection<'a, 't> + 'a,
{
    let row = call_row(conn, "CALL handover(?, ?)", (service_id, to_node).into()).await?;
    campaign_from(&row)
}

/// `CALL assert_leader(service_id, node_id, term)`: the fencing guard. Call it on the
/// application's own transaction before its writes: it fails with [`Error::NotLeader`] unless
/// the node holds a valid lease at exactly `term`, and on success it keeps the election row
/// share-locked until that transaction ends, so no takeover can commit in between.
///
/// On any failure it rolls the caller's transaction back before raising (so writes made under
/// a stale term cannot commit even if the error is ignored); statements after the failure run
/// outside any transaction. Treat the error as the end of the transaction.
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

/// A one-shot check that `node_id` leads `service_id` at exactly `term` now: `assert_leader` in a
/// transaction of its own that ends at once. It fences nothing (its lock ends with it); to fence
/// writes, call [`assert_leader`] inside their transaction. Fails with [`Error::NotLeader`] like
/// the guard. (Called outside a transaction, `assert_leader` itself is refused by the server.)
pub async fn check_leader_at(pool: &mysql_async::Pool, service_id: &str, node_id: &str, term: u64) -> Result<LeaderCheck> {
    let mut conn = pool.get_conn().await.map_err(|e| Error::from_pool(pool, e))?;
    let mut tx = conn.start_transaction(Default::default()).await.map_err(Error::from_mysql)?;
    let check = assert_leader(&mut tx, service_id, node_id, term).await;
    // A refusal has rolled the transaction back already; a success held a share lock only.
    let _ = tx.rollback().await;
    check
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
pub(crate) async fn migration_lock(conn: &mut mysql_async::Conn, server: crate::Server) -> Result<bool> {
    let name = migration_lock_name(server);
    let got: std::result::Result<Option<Option<i64>>, _> = format!("SELECT GET_LOCK({name}, 60)").first(&mut *conn).await;
    match got {
        Ok(Some(Some(1))) => Ok(true),
        Ok(_) => Err(Error::Migration { message: "another migration held the lock for 60 s; try again".into() }),
        // A Galera node may refuse named locks: there the installer goes on without one (the
        // README says to run one installer at a time on a cluster). Anywhere else a lock that
        // cannot be taken stops the migration, loudly.
        Err(mysql_async::Error::Server(e)) if !wakeup_lock_supported(conn).await.unwrap_or(true) => {
            tracing::warn!(code = e.code, "migrate: no migration lock on this Galera node ({}); going on without it", e.message);
            Ok(false)
        }
        Err(e) => Err(Error::Migration { message: format!("could not take the migration lock: {}", crate::error::redact(&e.to_string())) }),
    }
}

pub(crate) async fn migration_unlock(conn: &mut mysql_async::Conn, server: crate::Server) -> Result<()> {
    format!("DO RELEASE_LOCK({})", migration_lock_name(server))
        .ignore(&mut *conn)
        .await
        .map_err(Error::from_mysql)
}

/// The migration lock of the connection's database, an SQL expression: `mysqlleader.migrate.` +
/// 40 hex digits of a hash of the database name, 60 characters whatever the name (named locks
/// are limited to 64). MariaDB: SHA1, the name every earlier release used there, so that an old
/// and a new installer started together still run one after the other. MySQL 9.7 has no SHA1()
/// (nor SHA() or MD5()): the first 40 digits of SHA2-256; no earlier release installed there.
pub fn migration_lock_name(server: crate::Server) -> &'static str {
    match server {
        crate::Server::MariaDb => "CONCAT('mysqlleader.migrate.', SHA1(COALESCE(DATABASE(), '')))",
        crate::Server::MySql => "CONCAT('mysqlleader.migrate.', LEFT(SHA2(COALESCE(DATABASE(), ''), 256), 40))",
    }
}

/// Records that routine `name` (a name of the project's own, a plain identifier) now has the
/// definition whose SHA-256 is `checksum`, applied now: `applied_on` is the time of the last
/// (re-)creation by this installer, which [`crate::migrate::plan`] compares with the live
/// object's own creation time. No final `;`.
pub(crate) fn record_routine_sql(name: &str, kind: &str, checksum: &str) -> String {
    format!(
        "INSERT INTO mysqlleader_routines (name, kind, checksum, applied_on)\n\
         VALUES ('{name}', '{kind}', '{checksum}', UTC_TIMESTAMP(6))\n\
         ON DUPLICATE KEY UPDATE applied_on = UTC_TIMESTAMP(6), checksum = '{checksum}'"
    )
}

/// Grants EXECUTE on procedure `name` again to every account `leader_election_grants` lists
/// for it (routine `leader_election_regrant`). No final `;`.
pub(crate) fn regrant_sql(name: &str) -> String {
    format!("CALL leader_election_regrant('{name}')")
}

/// Statements that stop a script for the other kind of server before it changes anything:
/// SQLSTATE 45000 with `hint` unless the server is MariaDB (`mariadb`) or is not (`!mariadb`).
pub(crate) fn server_check_sql(mariadb: bool, hint: &str) -> String {
    let (want, name) = if mariadb { ("", "MariaDB") } else { ("NOT ", "MySQL") };
    format!(
        "DROP PROCEDURE IF EXISTS mysqlleader_install_check;\n\
         CREATE PROCEDURE mysqlleader_install_check()\n\
         BEGIN\n\
         \x20   IF NOT (VERSION() {want}LIKE '%MariaDB%') THEN\n\
         \x20       SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'mysqlleader: this script is for {name}; for this server use: {hint}';\n\
         \x20   END IF;\n\
         END;\n\
         CALL mysqlleader_install_check();\n\
         DROP PROCEDURE IF EXISTS mysqlleader_install_check;\n"
    )
}

/// Statements that stop a script over a schema that a newer release installed (a migration
/// after `known` is recorded in `table`), before it changes anything: SQLSTATE 45000, in at
/// most 128 characters (MySQL's limit for a SIGNAL message). Without them an older script would
/// put its older routines over the newer ones (and on MySQL revoke every account's EXECUTE on
/// them): the downgrade of issue 39.
pub(crate) fn newer_schema_check_sql(table: &str, known: i64) -> String {
    format!(
        "DROP PROCEDURE IF EXISTS mysqlleader_install_newer_check;\n\
         CREATE PROCEDURE mysqlleader_install_newer_check()\n\
         BEGIN\n\
         \x20   DECLARE newest INT DEFAULT NULL;\n\
         \x20   IF EXISTS (SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{table}') THEN\n\
         \x20       SELECT MAX(version) INTO newest FROM {table};\n\
         \x20   END IF;\n\
         \x20   IF newest > {known} THEN\n\
         \x20       SET @mysqlleader_refusal = CONCAT('mysqlleader: the schema is newer than this script (V', newest, \n\
         \x20           ' applied; it knows up to V{known}): nothing was changed');\n\
         \x20       SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = @mysqlleader_refusal;\n\
         \x20   END IF;\n\
         END;\n\
         CALL mysqlleader_install_newer_check();\n\
         DROP PROCEDURE IF EXISTS mysqlleader_install_newer_check;\n"
    )
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
// A named lock per database and service, named by `leader_election_wakeup_name`: `mysqlleader.`
// and 40 hex digits of SHA-256 of the schema's secret, the database and the service (named locks
// are limited to 64 characters), so that only accounts allowed on the service can know it. It
// carries no authority: it only wakes followers.

/// The name of the wake-up lock of `service_id` (`CALL leader_election_wakeup_name`).
pub(crate) async fn wakeup_lock_name(conn: &mut mysql_async::Conn, service_id: &str) -> Result<String> {
    let row = call_row(&mut *conn, "CALL leader_election_wakeup_name(?)", (service_id,).into()).await?;
    lock_name_from(&row)
}

/// The name of the wake-up lock of `node_id`'s session (`CALL leader_election_node_wakeup_name`),
/// asked with a seat `service_id` that the node leads (or led last).
pub(crate) async fn node_wakeup_lock_name(conn: &mut mysql_async::Conn, service_id: &str, node_id: &str) -> Result<String> {
    let row = call_row(&mut *conn, "CALL leader_election_node_wakeup_name(?, ?)", (service_id, node_id).into()).await?;
    lock_name_from(&row)
}

/// The `lock_name` column, checked: it is written into statements as a literal, so only the
/// characters the routines make are accepted.
fn lock_name_from(row: &Row) -> Result<String> {
    let name: String = col(row, "lock_name")?;
    if name.len() > 64 || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.') {
        return Err(Error::Server { code: 0, state: "HY000".into(), message: format!("unexpected wake-up lock name {name:?}") });
    }
    Ok(name)
}

/// Whether named locks can wake followers on this server: not on a Galera node (`wsrep_on`),
/// nor on a member of a MySQL Group Replication group (a group name is set): a lock is local to
/// the member that holds it, and electors of one election may talk to different members.
pub(crate) async fn wakeup_lock_supported(conn: &mut mysql_async::Conn) -> Result<bool> {
    let vars: Vec<(String, String)> =
        "SHOW VARIABLES WHERE Variable_name IN ('wsrep_on', 'group_replication_group_name')"
            .fetch(&mut *conn)
            .await
            .map_err(Error::from_mysql)?;
    Ok(!vars.iter().any(|(name, value)| match name.as_str() {
        "wsrep_on" => value.eq_ignore_ascii_case("ON"),
        _ => !value.is_empty(),
    }))
}

/// `GET_LOCK(name, wait_s)`: true when this connection now holds the lock; false when the wait
/// timed out or was interrupted by [`kill_query`] (error 1317, or NULL).
/// `name` comes from [`wakeup_lock_name`].
pub(crate) async fn wakeup_lock_get(conn: &mut mysql_async::Conn, name: &str, wait_s: u32) -> Result<bool> {
    let sql = format!("SELECT GET_LOCK('{name}', {wait_s})");
    match sql.as_str().first::<Option<i64>, _>(&mut *conn).await {
        Ok(got) => Ok(got.flatten() == Some(1)),
        Err(mysql_async::Error::Server(e)) if e.code == 1317 => Ok(false),
        Err(e) => Err(Error::from_mysql(e)),
    }
}

/// `KILL QUERY id`: ends the statement running on connection `id` (of the same account: no
/// privilege needed), e.g. a wake-up lock wait that must end now.
///
/// It is sent on a connection of its own, opened with `opts` (those of the connection to end)
/// and closed at once, never on one taken from a pool: a pool that hands out a new connection
/// because its others are busy keeps that one afterwards (idle connections up to the pool's
/// minimum stay open for good), so a kill through the pool could leave the elector holding one
/// connection more than its call and its wake-up lock for the rest of the process.
pub(crate) async fn kill_query(opts: &mysql_async::Opts, connection_id: u32) -> Result<()> {
    let mut conn = mysql_async::Conn::new(opts.clone()).await.map_err(|e| Error::from_opts(opts, e))?;
    // KILL cannot be prepared; the id is a number, so the text is safe.
    let killed = format!("KILL QUERY {connection_id}").ignore(&mut conn).await.map_err(Error::from_mysql);
    let _ = conn.disconnect().await;
    killed
}

/// The session's `wait_timeout` in seconds: how long the server lets it idle before closing it.
pub(crate) async fn session_wait_timeout_s(conn: &mut mysql_async::Conn) -> Result<u64> {
    let s: Option<u64> = "SELECT @@session.wait_timeout".first(&mut *conn).await.map_err(Error::from_mysql)?;
    Ok(s.unwrap_or(28_800))
}

/// One statement that does nothing, so that the server does not close the session as idle
/// (`DO 0` rather than a protocol ping, which a proxy may answer itself).
pub(crate) async fn keepalive(conn: &mut mysql_async::Conn) -> Result<()> {
    "DO 0".ignore(&mut *conn).await.map_err(Error::from_mysql)
}

/// Whether any connection holds the lock now.
pub(crate) async fn wakeup_lock_held(conn: &mut mysql_async::Conn, name: &str) -> Result<bool> {
    let sql = format!("SELECT IS_USED_LOCK('{name}')");
    let holder: Option<Option<u64>> = sql.as_str().first(&mut *conn).await.map_err(Error::from_mysql)?;
    Ok(holder.flatten().is_some())
}

pub(crate) async fn wakeup_lock_release(conn: &mut mysql_async::Conn, name: &str) -> Result<()> {
    let sql = format!("DO RELEASE_LOCK('{name}')");
    sql.as_str().ignore(&mut *conn).await.map_err(Error::from_mysql)
}

// =====================================================================================
// ---- Queries of the `mysqlleader` command-line tool ----
//
// Read-only views for operators (`status`, `event status`), the connection check, and the text
// of `grant`. The status queries call definer routines (`leader_election_status`,
// `leader_election_recent_terms`, `leader_election_event_status`) that the operator and observer
// roles may call; no role holds SELECT on the tables. Every time is taken
// or computed on the database's clock and returned as UTC text (`2025-01-31T12:00:00.123456Z`);
// every length of time is computed by the database, never against a local clock.
// =====================================================================================

/// What the server says about the connection: asked first by the command-line tool, so that
/// an unreachable server or a refused login is reported before anything else is tried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    /// `VERSION()`, e.g. `10.11.6-MariaDB-0+deb12u1`.
    pub version: String,
    /// The default database of the connection (`DATABASE()`), where the schema lives.
    pub database: Option<String>,
    /// The account the server authenticated (`CURRENT_USER()`).
    pub account: String,
}

/// Connects and asks who the server is and who we are.
pub async fn server_info(pool: &mysql_async::Pool) -> Result<ServerInfo> {
    let row = call_row(pool, "SELECT VERSION() AS version, DATABASE() AS db, CURRENT_USER() AS account", Params::Empty)
        .await
        .map_err(|e| e.on_pool(pool))?;
    Ok(ServerInfo { version: col(&row, "version")?, database: col(&row, "db")?, account: col(&row, "account")? })
}

/// One service's seat, as `status` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceStatus {
    pub service_id: String,
    /// The node holding a valid lease; `None` when the seat is vacant or the lease has expired.
    pub leader_id: Option<String>,
    /// The service's term: the current leader's, or the last there was.
    pub term: u64,
    /// Time left on the current leader's lease; zero when nobody leads.
    pub lease_remaining: Duration,
    /// The length of the lease the current (or last) leader asked for.
    pub lease: Option<Duration>,
    /// When the current (or last) term began, UTC text.
    pub term_started_at: Option<String>,
    /// How the current (or last) term began: `elected` or `forced`.
    pub began_how: Option<String>,
    /// The node that led the last term (the leader itself while a lease is valid).
    pub last_leader_id: Option<String>,
    /// While nobody leads: when and how the last term ended (`expired`, `resigned`, ...).
    pub ended_at: Option<String>,
    pub ended_how: Option<String>,
    /// While leading: how long the current term has lasted; while vacant: how long the seat has
    /// been vacant. Both on the database's clock.
    pub for_how_long: Option<Duration>,
    /// A pending handover: the node the seat is reserved for, how long the reservation has left
    /// (database clock), and who asked (`user@host`). `None` when none is pending.
    pub handover: Option<PendingHandover>,
}

/// A handover that has not completed yet (`handover`, `resign_to`): the seat is vacant and only
/// `to_node` may take it for `remaining`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingHandover {
    pub to_node: String,
    pub remaining: Duration,
    pub asked_by: Option<String>,
}

/// Every service (`service_id = None`, in name order) or one service: its seat, on the
/// database's clock. Empty when the service has no row (nobody ever campaigned for it).
pub async fn service_statuses(pool: &mysql_async::Pool, service_id: Option<&str>) -> Result<Vec<ServiceStatus>> {
    // Through a definer routine (sql/routines/leader_election_status.sql): the roles that read
    // hold no SELECT on the tables, so no reader can lock a seat. One statement there, so
    // UTC_TIMESTAMP(6) is one instant for every row.
    const SQL: &str = "CALL leader_election_status(?)";
    let result = inline_params(SQL, &(service_id,).into())?.run(pool).await.map_err(|e| Error::from_pool(pool, e))?;
    let rows: Vec<Row> = result.collect_and_drop().await.map_err(Error::from_mysql)?;
    rows.iter()
        .map(|row| {
            let lease_ms: Option<i64> = col(row, "lease_ms")?;
            let for_ms: Option<i64> = col(row, "for_ms")?;
            let handover_to: Option<String> = col(row, "handover_to")?;
            let handover_ms: Option<i64> = col(row, "handover_remaining_ms")?;
            let handover = match (handover_to, handover_ms) {
                (Some(to_node), Some(ms)) => Some(PendingHandover {
                    to_node,
                    remaining: Duration::from_millis(ms.max(0) as u64),
                    asked_by: col(row, "handover_by")?,
                }),
                _ => None,
            };
            Ok(ServiceStatus {
                service_id: col(row, "service_id")?,
                leader_id: col(row, "leader_id")?,
                term: col(row, "term")?,
                lease_remaining: millis(row, "lease_remaining_ms")?,
                lease: lease_ms.map(|ms| Duration::from_millis(ms.max(0) as u64)),
                term_started_at: col(row, "term_started_at")?,
                began_how: col(row, "began_how")?,
                last_leader_id: col(row, "last_leader_id")?,
                ended_at: col(row, "ended_at")?,
                ended_how: col(row, "ended_how")?,
                for_how_long: for_ms.map(|ms| Duration::from_millis(ms.max(0) as u64)),
                handover,
            })
        })
        .collect()
}

/// One term of a service, as the `leader_election_terms` view shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermRecord {
    pub term: u64,
    pub leader_id: String,
    /// The lease length asked for when the term began.
    pub lease: Duration,
    /// UTC text; `began_how` is `elected` or `forced`.
    pub began_at: String,
    pub began_how: String,
    /// UTC text; `None` while the term is current. `ended_how`: `expired`, `resigned`,
    /// `reelected` or `forced_out`.
    pub ended_at: Option<String>,
    pub ended_how: Option<String>,
    /// Who began and who ended the term (`user@host` of the session; `None` for an end the
    /// server decided, an expiry, and for terms recorded before migration V6).
    pub began_by: Option<String>,
    pub ended_by: Option<String>,
    /// From its beginning to its end (or to now while current), on the database's clock.
    pub lasted: Duration,
}

/// The `limit` most recent terms of a service, newest first.
pub async fn recent_terms(pool: &mysql_async::Pool, service_id: &str, limit: u32) -> Result<Vec<TermRecord>> {
    // Through a definer routine, as service_statuses.
    const SQL: &str = "CALL leader_election_recent_terms(?, ?)";
    let result = inline_params(SQL, &(service_id, limit).into())?.run(pool).await.map_err(|e| Error::from_pool(pool, e))?;
    let rows: Vec<Row> = result.collect_and_drop().await.map_err(Error::from_mysql)?;
    rows.iter()
        .map(|row| {
            let lease_ms: i64 = col(row, "lease_ms")?;
            Ok(TermRecord {
                term: col(row, "term")?,
                leader_id: col(row, "leader_id")?,
                lease: Duration::from_millis(lease_ms.max(0) as u64),
                began_at: col(row, "began_at")?,
                began_how: col(row, "began_how")?,
                ended_at: col(row, "ended_at")?,
                ended_how: col(row, "ended_how")?,
                began_by: col(row, "began_by")?,
                ended_by: col(row, "ended_by")?,
                lasted: millis(row, "lasted_ms")?,
            })
        })
        .collect()
}

/// The optional expiry event and the server's scheduler that runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiryEventStatus {
    /// Whether the event `leader_election_expire` exists in this database (as far as this
    /// account may see events).
    pub installed: bool,
    /// Whether the event is switched on (`CALL set_expiry_event(1)`).
    pub enabled: bool,
    /// `@@GLOBAL.event_scheduler`: `ON`, `OFF` or `DISABLED`. The event runs only when `ON`.
    pub event_scheduler: String,
    /// When the event last ran, UTC text (as the server reports it).
    pub last_executed: Option<String>,
}

/// Reads the state of the expiry event and of `@@event_scheduler`.
pub async fn expiry_event_status(pool: &mysql_async::Pool) -> Result<ExpiryEventStatus> {
    // Through a definer routine: reading the event needs the EVENT privilege, which the
    // operator and observer roles do not hold.
    const SQL: &str = "CALL leader_election_event_status()";
    let row = call_row(pool, SQL, Params::Empty).await.map_err(|e| e.on_pool(pool))?;
    Ok(ExpiryEventStatus {
        installed: flag(&row, "installed")?,
        enabled: flag(&row, "event_enabled")?,
        event_scheduler: col(&row, "event_scheduler")?,
        last_executed: col(&row, "last_executed")?,
    })
}

/// An account as MySQL names it: `'user'@'host'`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub user: String,
    pub host: String,
}

impl Account {
    /// Reads `user`, `user@host` or `'user'@'host'` (the host defaults to `%`, any host).
    ///
    /// Only plain names are accepted — printable characters other than quotes, backticks and
    /// backslashes, 1 to 80 characters for the user and at most 255 for the host — so that the
    /// quoted name means the same under every `sql_mode` (with or without
    /// `NO_BACKSLASH_ESCAPES`) and no input can end the quoted string early.
    pub fn parse(text: &str) -> Result<Account> {
        let text = text.trim();
        let unquote = |part: &str| -> String {
            let p = part.trim();
            match (p.strip_prefix('\''), p.strip_prefix('"'), p.strip_prefix('`')) {
                (Some(rest), _, _) => rest.strip_suffix('\'').unwrap_or(rest).to_string(),
                (_, Some(rest), _) => rest.strip_suffix('"').unwrap_or(rest).to_string(),
                (_, _, Some(rest)) => rest.strip_suffix('`').unwrap_or(rest).to_string(),
                _ => p.to_string(),
            }
        };
        let (user, host) = match text.rfind('@') {
            Some(at) => (unquote(&text[..at]), unquote(&text[at + 1..])),
            None => (unquote(text), "%".to_string()),
        };
        let check = |what: &str, value: &str, max: usize, allow_empty: bool| -> Result<()> {
            if value.is_empty() && !allow_empty {
                return Err(Error::invalid("account", format!("the {what} name must not be empty")));
            }
            if value.chars().count() > max {
                return Err(Error::invalid("account", format!("the {what} name must be at most {max} characters")));
            }
            if let Some(c) = value.chars().find(|c| c.is_control() || matches!(c, '\'' | '"' | '`' | '\\')) {
                return Err(Error::invalid("account", format!(
                    "the {what} name must not contain {c:?} (quotes, backticks, backslashes and control characters are refused)")));
            }
            Ok(())
        };
        check("user", &user, 80, false)?;
        check("host", &host, 255, false)?;
        Ok(Account { user, host })
    }

    /// `'user'@'host'`, safe to put into a statement (see [`Account::parse`]).
    pub fn quoted(&self) -> String {
        format!("'{}'@'{}'", self.user, self.host)
    }
}

/// `database` quoted as an identifier (backticks doubled).
fn quote_identifier(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// What an account may do with the election (the contract's roles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// An application node: campaign, am_i_leader, current_leader, resign, assert_leader.
    App,
    /// An operator: everything `App` may, plus force_leader, reelect, set_expiry_event, and
    /// the routines that read for `mysqlleader status` and `event status`.
    Operator,
    /// A watcher: current_leader, and the routines that read for `status` and `event status`.
    Observer,
}

impl Role {
    pub fn parse(text: &str) -> Result<Role> {
        match text {
            "app" => Ok(Role::App),
            "operator" => Ok(Role::Operator),
            "observer" => Ok(Role::Observer),
            other => Err(Error::invalid("role", format!("role must be app, operator or observer (got {other:?})"))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Role::App => "app",
            Role::Operator => "operator",
            Role::Observer => "observer",
        }
    }

    /// The procedures the role may call: the contract's, and for the roles that read
    /// (`status`, `watch`, `event status`) the three definer routines that read for them. No
    /// role gets SELECT on a table: SELECT would also allow SELECT ... FOR UPDATE, and one open
    /// transaction holding that lock would stop every renew.
    pub fn procedures(self) -> &'static [&'static str] {
        match self {
            Role::App => &["campaign", "am_i_leader", "current_leader", "resign", "assert_leader", "resign_to", "renew_seats",
                           "campaign_seats", "resign_seats", "leader_election_wakeup_name", "leader_election_node_wakeup_name", "leader_election_campaign"],
            Role::Operator => &["campaign", "am_i_leader", "current_leader", "resign", "assert_leader", "resign_to", "renew_seats",
                                "campaign_seats", "resign_seats", "leader_election_wakeup_name", "leader_election_node_wakeup_name", "leader_election_campaign", "force_leader", "reelect", "handover", "set_expiry_event", "leader_election_prune_history",
                                "leader_election_status", "leader_election_recent_terms", "leader_election_event_status"],
            Role::Observer => &["current_leader", "leader_election_status", "leader_election_recent_terms",
                                "leader_election_event_status"],
        }
    }
}

/// Rejects a service pattern that is not a well-formed SQL `LIKE` pattern of 1 to 128
/// characters: no control characters, and a backslash only as the escape of `%`, `_` or `\`
/// (so `billing\_eu` matches `billing_eu` only). `%` and `_` are the wildcards. Patterns are
/// written into statements as hexadecimal literals, so quotes are harmless.
pub fn check_service_pattern(pattern: &str) -> Result<()> {
    crate::config::check_id("service", pattern)?;
    if let Some(c) = pattern.chars().find(|c| c.is_control()) {
        return Err(Error::invalid("service", format!("a service pattern must not contain {c:?} (control characters are refused)")));
    }
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '\\' && !matches!(chars.next(), Some('%' | '_' | '\\')) {
            return Err(Error::invalid("service", format!(
                "a backslash in a service pattern must escape %, _ or \\ (got {pattern:?}); for a literal name use --service-exact")));
        }
    }
    Ok(())
}

/// The `LIKE` pattern that matches exactly the service `name` and nothing else: `%`, `_` and
/// `\` escaped with `\` (`grant --service-exact`).
pub fn exact_service_pattern(name: &str) -> Result<String> {
    crate::config::check_id("service", name)?;
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    check_service_pattern(&out)?;
    Ok(out)
}

/// `X'...'`: text as a hexadecimal literal, safe in a statement whatever it holds and whatever
/// the session's sql_mode (NO_BACKSLASH_ESCAPES included).
fn hex_literal(text: &str) -> String {
    hex_bytes(text.as_bytes())
}

/// `X'...'`: bytes as a hexadecimal literal (a service id or a pattern read back as stored).
fn hex_bytes(bytes: &[u8]) -> String {
    format!("X'{}'", bytes.iter().map(|b| format!("{b:02X}")).collect::<String>())
}

/// `text` inside a `/* */` comment, for a reader of the statement (`*/` cannot end it early).
fn comment(text: &str) -> String {
    format!("/* {} */", text.replace("*/", "* /"))
}

/// The statements that give `account` exactly what `role` needs in `database`, and nothing
/// else, in an order that never leaves the account with more than it should have:
/// 1. with service patterns, the account's rows of `leader_election_access` (replacing any it
///    had) and its row of `leader_election_account`, which calls read (migration V14), in one
///    transaction that touches no seat: the limit is in effect before the role can be used, and
///    of two concurrent grants of one account the last to commit is the limit in effect;
/// 2. `GRANT EXECUTE ON PROCEDURE` per procedure of the role (never `EXECUTE ON db.*`, which
///    would also open the application's own routines; the roles that read get the routines
///    that read for them, never SELECT on a table);
/// 3. the record of those grants in `leader_election_grants`, from which an upgrade that has
///    to re-create a procedure (MySQL) grants them again.
/// The limit applies to the user name, whatever the host. Names and patterns go in as
/// hexadecimal literals, each followed by its text in a comment.
pub fn grant_sql(account: &Account, database: &str, role: Role, services: &[String]) -> Result<Vec<String>> {
    if database.is_empty() {
        return Err(Error::invalid("database", "the URL names no database (mysql://user:pass@host:port/DATABASE)"));
    }
    for pattern in services {
        check_service_pattern(pattern)?;
    }
    let db = quote_identifier(database);
    let user = format!("{} {}", hex_literal(&account.user), comment(&account.user));
    let mut out: Vec<String> = Vec::new();
    if !services.is_empty() {
        out.push("START TRANSACTION;".into());
        // The account's row first, locked (created empty when new; the call below writes it):
        // two grants of one account take turns here instead of deadlocking on the gaps of
        // leader_election_access.
        out.push(format!("INSERT INTO {db}.`leader_election_account` (account, patterns, changed_at, changed_by) \
                          VALUES ({user}, '[]', UTC_TIMESTAMP(6), USER()) ON DUPLICATE KEY UPDATE account = account;"));
        out.push(format!("DELETE FROM {db}.`leader_election_access` WHERE account = {user};"));
        for pattern in services {
            out.push(format!("INSERT INTO {db}.`leader_election_access` (account, service_pattern) VALUES ({user}, {} {});",
                             hex_literal(pattern), comment(pattern)));
        }
        out.push(format!("CALL {db}.`leader_election_compile_access`({user}, @mysqlleader_changed);"));
        out.push("COMMIT;".into());
    }
    out.extend(role_grants(database, role).iter().map(|g| format!("{g} TO {};", account.quoted())));
    let rows: Vec<String> = role
        .procedures()
        .iter()
        .map(|p| format!("({user}, {} {}, '{p}', UTC_TIMESTAMP(6), USER())", hex_literal(&account.host), comment(&account.host)))
        .collect();
    out.push(format!(
        "INSERT INTO {db}.`leader_election_grants` (user_name, host, routine, granted_at, granted_by) VALUES {} \
         ON DUPLICATE KEY UPDATE granted_at = UTC_TIMESTAMP(6), granted_by = USER();",
        rows.join(", ")
    ));
    Ok(out)
}

/// The role's grants in `database`, each `GRANT PRIVILEGE ON OBJECT` as SHOW GRANTS prints it
/// (without ` TO account`): EXECUTE per procedure.
fn role_grants(database: &str, role: Role) -> Vec<String> {
    let db = quote_identifier(database);
    role.procedures().iter().map(|p| format!("GRANT EXECUTE ON PROCEDURE {db}.{}", quote_identifier(p))).collect()
}

/// What an account holds in a schema besides its role's grants, read back after [`grant`] so
/// that `mysqlleader grant` says what is really in effect, not only what it just added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountAccess {
    /// The user's per-service patterns now in `leader_election_access` (empty: not limited).
    /// They belong to the user name, whatever the host, and stay until replaced by
    /// `grant --service` (`--service '%'` matches every service).
    pub service_patterns: Vec<String>,
    /// The account's grants that reach the schema beyond the role, each written
    /// `GRANT PRIVILEGES ON OBJECT` (without the account or any password hash): global
    /// privileges other than USAGE, privileges on the whole schema (`EXECUTE ON db.*` opens every
    /// routine, `force_leader` and the application's own included), and grants on the schema's
    /// objects that the role does not hold. MariaDB roles granted to the account are not
    /// expanded. `None` when this session may not read them (SHOW GRANTS for another account
    /// needs SELECT on the `mysql` schema).
    pub beyond_role: Option<Vec<String>>,
}

/// Reads [`AccountAccess`] of `account` in the connection's database, for `role`.
pub async fn account_access(pool: &mysql_async::Pool, account: &Account, role: Role) -> Result<AccountAccess> {
    let info = server_info(pool).await?;
    let database = info.database.unwrap_or_default();
    let mut conn = pool.get_conn().await.map_err(|e| Error::from_pool(pool, e))?;
    // Names compared byte for byte, as the procedures compare them (V8).
    let service_patterns: Vec<String> = "SELECT service_pattern FROM leader_election_access \
         WHERE account = CAST(? AS BINARY) ORDER BY service_pattern"
        .with((account.user.as_str(),))
        .map(&mut conn, |pattern: String| pattern)
        .await
        .map_err(Error::from_mysql)?;
    // The account's name is checked by Account::parse (no quote can end the string early).
    let show = format!("SHOW GRANTS FOR {}", account.quoted());
    let beyond_role = match show.as_str().fetch::<String, _>(&mut conn).await {
        Ok(lines) => Some(grants_beyond_role(&lines, &database, role)),
        // 1044/1142: no SELECT on the mysql schema; 1227: a missing global privilege.
        Err(mysql_async::Error::Server(e)) if matches!(e.code, 1044 | 1142 | 1227) => None,
        Err(e) => return Err(Error::from_mysql(e)),
    };
    Ok(AccountAccess { service_patterns, beyond_role })
}

/// The lines of SHOW GRANTS that reach `database` beyond what [`grant_sql`] gives `role`, each
/// cut to `GRANT PRIVILEGES ON OBJECT` (see [`AccountAccess::beyond_role`]).
fn grants_beyond_role(lines: &[String], database: &str, role: Role) -> Vec<String> {
    let in_schema = format!("{}.", quote_identifier(database));
    let ours = role_grants(database, role);
    let mut out = Vec::new();
    for line in lines {
        // "GRANT <privileges> ON <object> TO <account> [IDENTIFIED BY ...] [WITH ...]"; lines
        // without " ON " grant a role or a proxy, not a privilege on an object.
        let Some(head) = line.find(" TO ").map(|to| &line[..to]) else { continue };
        let Some((privileges, object)) = head.strip_prefix("GRANT ").and_then(|h| h.split_once(" ON ")) else { continue };
        // A schema name may be printed with its wildcards escaped (`app\_db`).
        let object_name = object.replace('\\', "");
        // What reaches the election: a global privilege, one on the whole schema, one on an
        // election table, or EXECUTE on one of its routines. The application's own tables and
        // routines in the same schema are its business, not the role's.
        let name_in_schema = |o: &str| o.strip_prefix(in_schema.as_str()).map(|n| n.trim_matches('`').to_string());
        let reaches = match object_name.as_str() {
            "*.*" => privileges != "USAGE",
            o => match o.strip_prefix("PROCEDURE ").or_else(|| o.strip_prefix("FUNCTION ")) {
                Some(routine) => name_in_schema(routine)
                    .is_some_and(|n| crate::migrate::routines::ROUTINES.iter().any(|r| r.name == n)),
                None => name_in_schema(o).is_some_and(|n| {
                    n == "*" || n.starts_with("leader_election") || n.starts_with("mysqlleader_")
                }),
            },
        };
        if reaches && !ours.iter().any(|g| g == head) {
            out.push(head.to_string());
        }
    }
    out
}

/// One way a granted account differs from what its role gets from this release, and the
/// statement that mends it (`mysqlleader migrate --verify`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantDifference {
    pub account: Account,
    /// The role its EXECUTE grants make it (recorded ones first), when it has any.
    pub role: Option<Role>,
    /// What differs, in words.
    pub what: String,
    /// The statement, or the `mysqlleader grant` command, that mends it.
    pub mend: String,
}

/// What [`grant_differences`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantCheck {
    /// The grants were read: every difference (none: the grants are as this release gives them).
    Checked(Vec<GrantDifference>),
    /// The grants could not be read by this session, and why (with what would let it).
    NotChecked(String),
}

/// The role that `routines` (an account's EXECUTE grants, recorded or held) were granted for:
/// operator when any is the operator's alone (`force_leader`, ...), else app when any is an
/// application's call that an observer lacks, else observer when any is the observer's; `None`
/// when none is any role's.
pub fn role_of(routines: &[&str]) -> Option<Role> {
    let only = |role: Role, not_in: &[Role]| {
        routines.iter().any(|r| role.procedures().contains(r) && !not_in.iter().any(|o| o.procedures().contains(r)))
    };
    if only(Role::Operator, &[Role::App, Role::Observer]) {
        Some(Role::Operator)
    } else if only(Role::App, &[Role::Observer]) {
        Some(Role::App)
    } else if routines.iter().any(|r| Role::Observer.procedures().contains(r)) {
        Some(Role::Observer)
    } else {
        None
    }
}

/// The election's tables and views, by name (`leader_election...`, `mysqlleader_...`).
fn is_election_table(name: &str) -> bool {
    name.starts_with("leader_election") || name.starts_with("mysqlleader_")
}

/// A privilege of `mysql.tables_priv`'s `Table_priv` as GRANT and REVOKE write it.
fn privilege_word(set_value: &str) -> String {
    match set_value.to_ascii_uppercase().as_str() {
        "GRANT" => "GRANT OPTION".to_string(),
        "DELETE VERSIONING ROWS" => "DELETE HISTORY".to_string(),
        other => other.to_string(),
    }
}

/// Compares what every account the tool recorded (`leader_election_grants`), and every account
/// holding a grant on the election's procedures or tables, holds in the connection's database
/// with what its role gets from this release:
/// * EXECUTE on a procedure of its role that it lacks, or that is not recorded (an upgrade on
///   MySQL grants again only what is recorded): mended by `mysqlleader grant ... --apply`;
/// * EXECUTE on one of the election's procedures beyond its role, and a recorded one beyond it:
///   mended by the REVOKE (and the DELETE of the record);
/// * any table-level privilege on the election's tables and views (no role needs one; an older
///   release granted SELECT to operators and observers, and `SELECT ... FOR UPDATE` by such an
///   account stops every renew of the seats it reads): mended by the REVOKE;
/// * a recorded account that does not exist any more: mended by the DELETE of its record.
///
/// Reads `mysql.user`, `mysql.procs_priv` and `mysql.tables_priv`, which needs `SELECT` on the
/// `mysql` schema (the installer's privileges on the database alone do not allow it: then
/// [`GrantCheck::NotChecked`] says so). MariaDB roles granted to an account are not expanded.
pub async fn grant_differences(pool: &mysql_async::Pool) -> Result<GrantCheck> {
    use std::collections::{BTreeMap, BTreeSet};
    let info = server_info(pool).await?;
    let database = info.database.unwrap_or_default();
    let db = quote_identifier(&database);
    let mut conn = pool.get_conn().await.map_err(|e| Error::from_pool(pool, e))?;
    let recorded: Vec<(String, String, String)> = match "SELECT CONVERT(user_name USING utf8mb4), CONVERT(host USING utf8mb4), routine \
         FROM leader_election_grants"
        .fetch(&mut conn)
        .await
    {
        Ok(rows) => rows,
        // Not installed yet (or a release before V9): nothing recorded.
        Err(mysql_async::Error::Server(e)) if e.code == 1146 => Vec::new(),
        Err(mysql_async::Error::Server(e)) if matches!(e.code, 1044 | 1142) => {
            return Ok(GrantCheck::NotChecked(format!("leader_election_grants cannot be read (error {}: {})", e.code, e.message)));
        }
        Err(e) => return Err(Error::from_mysql(e)),
    };
    // The server's grant tables: readable with SELECT on the mysql schema only.
    let grant_tables = async {
        let users: Vec<(String, String)> = "SELECT CONVERT(User USING utf8mb4), CONVERT(Host USING utf8mb4) FROM mysql.user"
            .fetch(&mut conn)
            .await?;
        let executes: Vec<(String, String, String)> = "SELECT CONVERT(User USING utf8mb4), CONVERT(Host USING utf8mb4), \
                    CONVERT(Routine_name USING utf8mb4) FROM mysql.procs_priv \
              WHERE Db = DATABASE() AND Routine_type = 'PROCEDURE' AND FIND_IN_SET('Execute', Proc_priv) > 0"
            .fetch(&mut conn)
            .await?;
        let tables: Vec<(String, String, String, String)> = "SELECT CONVERT(User USING utf8mb4), CONVERT(Host USING utf8mb4), \
                    CONVERT(Table_name USING utf8mb4), CAST(Table_priv AS CHAR) FROM mysql.tables_priv \
              WHERE Db = DATABASE() AND Table_priv <> ''"
            .fetch(&mut conn)
            .await?;
        Ok::<_, mysql_async::Error>((users, executes, tables))
    };
    let (users, executes, tables) = match grant_tables.await {
        Ok(read) => read,
        Err(mysql_async::Error::Server(e)) if matches!(e.code, 1044 | 1142 | 1227) => {
            return Ok(GrantCheck::NotChecked(format!(
                "reading other accounts' grants needs SELECT on the mysql schema, which this account lacks (error {}: {}); \
                 run it as an account that has it, or compare SHOW GRANTS FOR each account of leader_election_grants \
                 with `mysqlleader grant ACCOUNT --role ROLE` by hand",
                e.code, e.message
            )));
        }
        Err(e) => return Err(Error::from_mysql(e)),
    };

    // Per account (user byte for byte, host in any case, as the server compares them): what is
    // recorded, what is held, which table grants.
    #[derive(Default)]
    struct Holds {
        host: String,
        recorded: BTreeSet<String>,
        held: BTreeSet<String>,
        tables: Vec<(String, String)>,
    }
    let key = |user: &str, host: &str| (user.to_string(), host.to_lowercase());
    let mut accounts: BTreeMap<(String, String), Holds> = BTreeMap::new();
    let election_procedure = |name: &str| {
        crate::migrate::routines::ROUTINES.iter().any(|r| r.kind == crate::migrate::routines::Kind::Procedure && r.name.eq_ignore_ascii_case(name))
    };
    for (user, host, routine) in recorded {
        let entry = accounts.entry(key(&user, &host)).or_default();
        entry.host = host;
        entry.recorded.insert(routine.to_lowercase());
    }
    for (user, host, routine) in executes.into_iter().filter(|(_, _, r)| election_procedure(r)) {
        let entry = accounts.entry(key(&user, &host)).or_default();
        if entry.host.is_empty() {
            entry.host = host;
        }
        entry.held.insert(routine.to_lowercase());
    }
    for (user, host, table, privileges) in tables.into_iter().filter(|(_, _, t, _)| is_election_table(t)) {
        let entry = accounts.entry(key(&user, &host)).or_default();
        if entry.host.is_empty() {
            entry.host = host;
        }
        let words: Vec<String> = privileges.split(',').filter(|p| !p.is_empty()).map(privilege_word).collect();
        entry.tables.push((table, words.join(", ")));
    }
    let existing: BTreeSet<(String, String)> = users.iter().map(|(u, h)| key(u, h)).collect();

    let mut out = Vec::new();
    for ((user, _), holds) in accounts {
        let account = Account { user: user.clone(), host: holds.host.clone() };
        let quoted = account.quoted();
        let record_of = |routine: Option<&str>| {
            format!(
                "DELETE FROM {db}.`leader_election_grants` WHERE user_name = {} AND host = {}{};",
                hex_literal(&account.user),
                hex_literal(&account.host),
                routine.map(|r| format!(" AND routine = '{r}'")).unwrap_or_default()
            )
        };
        if !existing.contains(&key(&account.user, &account.host)) {
            out.push(GrantDifference {
                what: "is recorded in leader_election_grants but does not exist".into(),
                mend: record_of(None),
                account,
                role: None,
            });
            continue;
        }
        let basis: Vec<&str> = if holds.recorded.is_empty() { &holds.held } else { &holds.recorded }.iter().map(String::as_str).collect();
        let role = role_of(&basis);
        if let Some(role) = role {
            let regrant = format!("mysqlleader grant {quoted} --role {} --apply", role.name());
            let lacks: Vec<&str> = role.procedures().iter().copied().filter(|p| !holds.held.contains(*p)).collect();
            if !lacks.is_empty() {
                out.push(GrantDifference {
                    account: account.clone(),
                    role: Some(role),
                    what: format!("lacks EXECUTE on {} (this release's role {} has them)", lacks.join(", "), role.name()),
                    mend: regrant.clone(),
                });
            }
            let unrecorded: Vec<&str> = role
                .procedures()
                .iter()
                .copied()
                .filter(|p| holds.held.contains(*p) && !holds.recorded.contains(*p))
                .collect();
            if !unrecorded.is_empty() {
                out.push(GrantDifference {
                    account: account.clone(),
                    role: Some(role),
                    what: format!(
                        "holds EXECUTE on {} unrecorded in leader_election_grants (an upgrade on MySQL would not grant it again)",
                        unrecorded.join(", ")
                    ),
                    mend: regrant.clone(),
                });
            }
        }
        let wanted: &[&str] = role.map(Role::procedures).unwrap_or(&[]);
        let beyond: BTreeSet<&String> = holds.held.iter().chain(holds.recorded.iter()).filter(|p| !wanted.contains(&p.as_str())).collect();
        for routine in beyond {
            let (held, recorded) = (holds.held.contains(routine), holds.recorded.contains(routine));
            let revoke = format!("REVOKE EXECUTE ON PROCEDURE {db}.{} FROM {quoted};", quote_identifier(routine));
            let (what, mend) = match (held, recorded) {
                (true, true) => ("holds and is recorded with", format!("{revoke} {}", record_of(Some(routine)))),
                (true, false) => ("holds", revoke),
                _ => ("is recorded (an upgrade on MySQL would grant it) with", record_of(Some(routine))),
            };
            out.push(GrantDifference {
                account: account.clone(),
                role,
                what: format!(
                    "{what} EXECUTE on {routine}, beyond {}",
                    role.map(|r| format!("role {}", r.name())).unwrap_or_else(|| "every role".into())
                ),
                mend,
            });
        }
        for (table, privileges) in &holds.tables {
            out.push(GrantDifference {
                account: account.clone(),
                role,
                what: format!(
                    "holds {privileges} on the election's table {table} (no role needs a table; a locking read on it, \
                     SELECT ... FOR UPDATE, makes renews wait)"
                ),
                mend: format!("REVOKE {privileges} ON {db}.{} FROM {quoted};", quote_identifier(table)),
            });
        }
    }
    Ok(GrantCheck::Checked(out))
}

/// What [`revoke_table_grants`] did: the REVOKE statements that took a privilege away, and
/// those the server refused, with its error.
#[derive(Debug, Default)]
pub struct TableRevokes {
    pub revoked: Vec<String>,
    pub refused: Vec<(String, Error)>,
}

/// Takes from `account` its privileges on the election's tables and views, which no role needs
/// (an older release granted `SELECT` on them to operators and observers, and `SELECT ... FOR
/// UPDATE` by such an account stops every renew of the seats it reads). `known`: the account's
/// grants beyond its role as [`account_access`] read them; each table-level one is revoked as
/// read. `None` (this session may not read another account's grants): `REVOKE SELECT` is tried
/// on each of the election's tables and views, and one the account does not hold (1147) is no
/// change. Grants on the whole schema or globally are left alone (they may serve the
/// application's own tables): [`account_access`] names them.
pub async fn revoke_table_grants(pool: &mysql_async::Pool, account: &Account, known: Option<&[String]>) -> Result<TableRevokes> {
    let mut conn = pool.get_conn().await.map_err(|e| Error::from_pool(pool, e))?;
    let heads: Vec<String> = match known {
        Some(grants) => grants
            .iter()
            .filter(|g| {
                let object = g.split_once(" ON ").map(|(_, o)| o).unwrap_or("");
                !object.starts_with("PROCEDURE ") && !object.starts_with("FUNCTION ") && !object.ends_with(".*")
            })
            .cloned()
            .collect(),
        None => {
            let info = server_info(pool).await?;
            let db = quote_identifier(info.database.as_deref().unwrap_or(""));
            let names: Vec<String> = "SELECT CONVERT(TABLE_NAME USING utf8mb4) FROM information_schema.TABLES \
                 WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME"
                .fetch(&mut conn)
                .await
                .map_err(Error::from_mysql)?;
            names.iter().filter(|n| is_election_table(n)).map(|n| format!("GRANT SELECT ON {db}.{}", quote_identifier(n))).collect()
        }
    };
    let mut out = TableRevokes::default();
    for head in heads {
        let statement = format!("{} FROM {};", head.replacen("GRANT ", "REVOKE ", 1), account.quoted());
        match statement.trim_end_matches(';').ignore(&mut conn).await {
            Ok(()) => out.revoked.push(statement),
            // Not held (only when tried without reading the grants): nothing to take away.
            Err(mysql_async::Error::Server(e)) if known.is_none() && matches!(e.code, 1147 | 1141) => {}
            Err(e) => out.refused.push((statement, Error::from_mysql(e))),
        }
    }
    Ok(out)
}

/// Runs [`grant_sql`] for the database of the connection, in order; returns the statements run.
///
/// The limit's transaction waits at most [`GRANT_LOCK_WAIT_S`] for a lock: it locks only the
/// account's own rows, which a concurrent grant of the same account holds, or the account
/// itself inside an open transaction at SERIALIZABLE that called `assert_leader` (its read of
/// its own limit share-locks its row). Then it is rolled back whole: nothing was changed.
pub async fn grant(pool: &mysql_async::Pool, account: &Account, role: Role, services: &[String]) -> Result<Vec<String>> {
    let info = server_info(pool).await?;
    let statements = grant_sql(account, info.database.as_deref().unwrap_or(""), role, services)?;
    let mut conn = pool.get_conn().await.map_err(|e| Error::from_pool(pool, e))?;
    format!("SET SESSION innodb_lock_wait_timeout = {GRANT_LOCK_WAIT_S}")
        .ignore(&mut conn)
        .await
        .map_err(Error::from_mysql)?;
    // The account's patterns before this grant, when it replaces them (with --service): what an
    // undo puts back when the first GRANT is refused.
    let mut earlier: Option<Vec<Vec<u8>>> = None;
    let mut granted_any = false;
    // The limit's transaction (from START TRANSACTION to COMMIT) is run again from its start
    // after a deadlock (1213: two grants of one account at once), up to DEADLOCK_TRIES times.
    let (mut at, mut begun_at, mut deadlocks) = (0, 0, 0);
    while let Some(sql) = statements.get(at) {
        // Plain text statements: GRANT takes no placeholders for names; every name is checked.
        let mut result = sql.as_str().ignore(&mut conn).await.map_err(Error::from_mysql);
        if sql.starts_with("START TRANSACTION") {
            begun_at = at;
        }
        if result.is_ok() && sql.contains("INTO") && sql.contains("`leader_election_account`") {
            result = account_patterns(&mut conn, account, true).await.map(|p| earlier = Some(p));
        }
        let in_limit = earlier.is_some() && !granted_any && !sql.starts_with("GRANT ") && !sql.contains("leader_election_grants");
        if let Err(e) = &result {
            if in_limit && e.server_code() == Some(1213) && deadlocks + 1 < DEADLOCK_TRIES {
                let _ = "ROLLBACK".ignore(&mut conn).await;
                deadlocks += 1;
                at = begun_at;
                continue;
            }
        }
        if let Err(e) = result {
            // A failure inside the limit's transaction changes nothing; the connection goes back
            // to the pool with no transaction open.
            let _ = "ROLLBACK".ignore(&mut conn).await;
            // The first GRANT refused: nothing of the role was granted, so the limit this grant
            // stored goes too (when it is still the one it stored).
            let undone = match (&earlier, sql.starts_with("GRANT ") && !granted_any) {
                (Some(earlier), true) => Some(undo_limit(&mut conn, account, services, earlier).await),
                _ => None,
            };
            // 1044/1142/1227/1370/1410: the connecting account may not grant. Say what it lacks.
            let e = if sql.starts_with("GRANT ") && matches!(e.server_code(), Some(1044 | 1142 | 1227 | 1370 | 1410)) {
                e.with_context(
                    "the account this connects as may not grant: it needs GRANT OPTION (and EXECUTE) on the \
                     election's procedures, or on the schema; run grant --apply as an administrator, or print the \
                     statements without --apply and have one run them",
                )
            } else if e.server_code() == Some(1205) {
                e.with_context(&format!(
                    "the account's limit is locked (by a concurrent grant of it, or by its own open transaction \
                     at SERIALIZABLE that called assert_leader) and stayed locked for {GRANT_LOCK_WAIT_S} s"
                ))
            } else if e.server_code() == Some(1213) {
                e.with_context(&format!("a deadlock with a concurrent grant of the account, {DEADLOCK_TRIES} times"))
            } else {
                e
            };
            return Err(e.with_context(&match undone {
                Some(Ok(true)) => format!("{}: nothing was changed (the limit it had stored was put back)", stopped_at(sql)),
                Some(Ok(false)) => format!("{}; the limit was changed again meanwhile, by another grant, and is left \
                                            as that one set it", grant_stopped_at(sql)),
                Some(Err(undo)) => format!("{}; putting the earlier limit back failed too ({undo})", grant_stopped_at(sql)),
                None => grant_stopped_at(sql),
            }));
        }
        granted_any |= sql.starts_with("GRANT ");
        at += 1;
    }
    Ok(statements)
}

/// How many times [`grant`] runs the limit's transaction when it ends in a deadlock.
const DEADLOCK_TRIES: u32 = 5;

/// The patterns of `account` in `leader_election_access`, in key order; `lock`: locked until the
/// transaction ends.
async fn account_patterns(conn: &mut mysql_async::Conn, account: &Account, lock: bool) -> Result<Vec<Vec<u8>>> {
    let sql = format!(
        "SELECT service_pattern FROM leader_election_access WHERE account = CAST(? AS BINARY) ORDER BY service_pattern{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    sql.with((account.user.as_str(),)).map(&mut *conn, |pattern: Vec<u8>| pattern).await.map_err(Error::from_mysql)
}

/// Puts `earlier` back as the patterns of `account`, in one transaction, when its patterns are
/// still `services` (what the failed grant stored); Ok(false) when another grant changed them
/// meanwhile (they are left as that one set them).
async fn undo_limit(conn: &mut mysql_async::Conn, account: &Account, services: &[String], earlier: &[Vec<u8>]) -> Result<bool> {
    let undo = async {
        "START TRANSACTION".ignore(&mut *conn).await.map_err(Error::from_mysql)?;
        let mut stored: Vec<Vec<u8>> = services.iter().map(|p| p.as_bytes().to_vec()).collect();
        stored.sort();
        stored.dedup();
        if account_patterns(conn, account, true).await? != stored {
            "ROLLBACK".ignore(&mut *conn).await.map_err(Error::from_mysql)?;
            return Ok(false);
        }
        "DELETE FROM leader_election_access WHERE account = CAST(? AS BINARY)"
            .with((account.user.as_str(),))
            .ignore(&mut *conn)
            .await
            .map_err(Error::from_mysql)?;
        for pattern in earlier {
            "INSERT INTO leader_election_access (account, service_pattern) VALUES (CAST(? AS BINARY), ?)"
                .with((account.user.as_str(), pattern.as_slice()))
                .ignore(&mut *conn)
                .await
                .map_err(Error::from_mysql)?;
        }
        "CALL leader_election_compile_access(CAST(? AS BINARY), @mysqlleader_changed)"
            .with((account.user.as_str(),))
            .ignore(&mut *conn)
            .await
            .map_err(Error::from_mysql)?;
        "COMMIT".ignore(&mut *conn).await.map_err(Error::from_mysql)?;
        Ok(true)
    }
    .await;
    if undo.is_err() {
        let _ = "ROLLBACK".ignore(&mut *conn).await;
    }
    undo
}

/// How long, in seconds, [`grant`] waits for a lock on the account's own rows.
pub const GRANT_LOCK_WAIT_S: u32 = 10;

/// What is in effect when [`grant`] stopped at `failed` (the order of [`grant_sql`]).
fn grant_stopped_at(failed: &str) -> String {
    let what = if failed.starts_with("GRANT ") {
        "the limit (if any) is in effect; the role was granted only in part: run the grant again"
    } else if failed.contains("leader_election_grants") {
        "the limit and the role are in effect; the record that upgrades re-grant from (MySQL) was not \
         written: run the grant again"
    } else {
        "nothing was changed"
    };
    format!("{}: {what}", stopped_at(failed))
}

/// "grant stopped at `STATEMENT`", the statement cut to 60 characters.
fn stopped_at(failed: &str) -> String {
    format!("grant stopped at `{}`", failed.chars().take(60).collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_written_in_as_exact_literals() {
        let sql = inline_params("CALL campaign(?, ?, ?)", &("a'b\\c", "é", 10_000).into()).unwrap();
        assert_eq!(sql, "CALL campaign(_utf8mb4 X'6127625C63', _utf8mb4 X'C3A9', 10000)");
        assert_eq!(inline_params("SELECT ?", &(None::<String>,).into()).unwrap(), "SELECT NULL");
        assert_eq!(inline_params("SELECT 1", &Params::Empty).unwrap(), "SELECT 1");
        assert!(inline_params("SELECT ?", &(1, 2).into()).is_err(), "more parameters than placeholders");
    }

    #[test]
    fn grants_beyond_the_role_are_those_that_reach_the_schema_and_are_not_the_roles() {
        let lines: Vec<String> = [
            "GRANT USAGE ON *.* TO `app`@`%` IDENTIFIED BY PASSWORD '*F71FF2DCE3D1E50FE93199DF2EE830DEA2BFC803'",
            "GRANT EXECUTE ON `shop`.* TO `app`@`%`",
            "GRANT SELECT, INSERT ON `shop`.`invoices` TO `app`@`%`",
            "GRANT SELECT ON `shop`.`leader_election` TO `app`@`%`",
            "GRANT EXECUTE ON PROCEDURE `shop`.`campaign` TO `app`@`%`",
            "GRANT EXECUTE ON PROCEDURE `shop`.`force_leader` TO `app`@`%`",
            "GRANT EXECUTE ON PROCEDURE `shop`.`monthly_report` TO `app`@`%`",
            "GRANT SELECT ON `other`.* TO `app`@`%`",
            "GRANT `reporting` TO `app`@`%`",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(grants_beyond_role(&lines, "shop", Role::App), vec![
            "GRANT EXECUTE ON `shop`.*".to_string(),
            "GRANT SELECT ON `shop`.`leader_election`".to_string(),
            "GRANT EXECUTE ON PROCEDURE `shop`.`force_leader`".to_string(),
        ]);
        // The application's own table and routine in the same schema are not flagged.
        // For an operator, force_leader is the role's; a global privilege reaches every schema,
        // and no password hash is ever part of what is returned.
        let admin = vec!["GRANT ALL PRIVILEGES ON *.* TO `ops`@`%` IDENTIFIED BY PASSWORD '*F71F' WITH GRANT OPTION".to_string(),
                         "GRANT EXECUTE ON PROCEDURE `shop`.`force_leader` TO `ops`@`%`".to_string(),
                         "GRANT EXECUTE ON `shop\\_db`.* TO `ops`@`%`".to_string()];
        assert_eq!(grants_beyond_role(&admin, "shop", Role::Operator), vec!["GRANT ALL PRIVILEGES ON *.*".to_string()]);
        assert_eq!(grants_beyond_role(&admin, "shop_db", Role::Operator).len(), 2, "the escaped schema name is this one");
    }

    #[test]
    fn the_role_of_an_accounts_grants_is_the_narrowest_that_explains_them() {
        assert_eq!(role_of(&["campaign", "am_i_leader", "current_leader", "resign", "assert_leader"]), Some(Role::App));
        assert_eq!(role_of(&["current_leader", "force_leader"]), Some(Role::Operator));
        assert_eq!(role_of(&["current_leader"]), Some(Role::Observer), "an older release's observer");
        assert_eq!(role_of(&["leader_election_status", "current_leader"]), Some(Role::Observer));
        assert_eq!(role_of(&["leader_election_regrant"]), None);
        assert_eq!(role_of(&[]), None);
        assert_eq!(privilege_word("Grant"), "GRANT OPTION");
        assert_eq!(privilege_word("Show view"), "SHOW VIEW");
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_that_lost_to_a_concurrent_write_runs_again_and_nothing_else_does() {
        let conflict = || Error::from_server(1213, "40001", "Deadlock found when trying to get lock");
        let runs = std::cell::Cell::new(0);
        let won_third = retry_conflicts(|| {
            runs.set(runs.get() + 1);
            let n = runs.get();
            async move { if n < 3 { Err(conflict()) } else { Ok(n) } }
        })
        .await;
        assert_eq!(won_third.unwrap(), 3, "two conflicts, then the third run counts");

        runs.set(0);
        let always = retry_conflicts(|| {
            runs.set(runs.get() + 1);
            async { Err::<(), _>(conflict()) }
        })
        .await
        .unwrap_err();
        assert_eq!((runs.get(), always.server_code()), (CONFLICT_TRIES, Some(1213)));
        assert!(always.to_string().contains("3 times"), "{always}");

        runs.set(0);
        let refused = retry_conflicts(|| {
            runs.set(runs.get() + 1);
            async { Err::<(), _>(Error::from_server(1205, "HY000", "Lock wait timeout exceeded")) }
        })
        .await
        .unwrap_err();
        assert_eq!((runs.get(), refused.server_code()), (1, Some(1205)), "a lock wait may have taken its whole budget: not run again");
    }
}
