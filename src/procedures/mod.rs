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
//!
//! The calls are in this file; the rest of the crate's SQL is in one file per job, each
//! re-exported here: `install` (the migration lock and the statements of the installer and of
//! the DBA script), `wakeup` (the wake-up lock), `status` (the read-only queries of the
//! command-line tool) and `accounts` (accounts, roles, grants and the check of grants).

use std::time::Duration;

use mysql_async::prelude::{Query, ToConnection};
use mysql_async::{Params, Row, Value};

use crate::error::{Error, Result};

mod accounts;
mod install;
mod status;
mod wakeup;

pub use accounts::{
    account_access, check_service_pattern, exact_service_pattern, grant, grant_differences, grant_sql, revoke_table_grants,
    role_of, Account, AccountAccess, GrantCheck, GrantDifference, Role, TableRevokes, GRANT_LOCK_WAIT_S,
};
pub use install::migration_lock_name;
pub(crate) use install::{
    migration_lock, migration_unlock, newer_schema_check_sql, record_migration_sql, record_routine_sql, regrant_sql,
    schema_history_ddl, server_check_sql,
};
pub use status::{
    expiry_event_status, recent_terms, server_info, service_statuses, ExpiryEventStatus, PendingHandover, ServerInfo,
    ServiceStatus, TermRecord,
};
pub(crate) use wakeup::{
    keepalive, kill_query, node_wakeup_lock_name, wakeup_lock_get, wakeup_lock_held, wakeup_lock_name,
    wakeup_lock_release, wakeup_lock_setup,
};

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

/// A node lease as [`grant_lease`] gives it (sql/V15__node_leases.sql): the seats a session takes
/// with [`take_seats`] hang on it, and one [`renew_lease`] renews them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseGrant {
    /// The lease's id, never used again for another lease.
    pub lease_id: u64,
    /// Its length from the grant, by the database's clock.
    pub lease_remaining: Duration,
}

/// `CALL grant_lease(node_id, lease_ms)`: a new node lease for `node_id`, valid for `lease` from
/// now, that only this connection's account may renew or take seats onto.
pub async fn grant_lease<'a, 't: 'a, C>(conn: C, node_id: &str, lease: Duration) -> Result<LeaseGrant>
where
    C: ToConnection<'a, 't> + 'a,
{
    let row = call_row(conn, "CALL grant_lease(?, ?)", (node_id, lease_ms(lease)?).into()).await?;
    Ok(LeaseGrant { lease_id: col(&row, "lease_id")?, lease_remaining: millis(&row, "lease_remaining_ms")? })
}

/// The answer of [`renew_lease`] or [`take_seats`]: the lease, then the seats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseAnswer {
    /// True when the lease was renewed: it is valid for `lease_remaining` from the call, and so
    /// is every seat in `seats` that the node leads. False: the lease had ended (or is not this
    /// account's, or not the node's); the node leads nothing through it, and needs a new one.
    pub renewed: bool,
    /// Time left on the lease, by the database's clock; zero when it was not renewed.
    pub lease_remaining: Duration,
    /// The call's time on the server, from its start to its answer, by the server's clock.
    pub server_time: Duration,
    /// The listed seats that hang on the lease (`answer.is_leader`, at the seat's term), and
    /// those another node leads with a valid lease.
    pub seats: Vec<SeatAnswer>,
    /// `renew_lease` only: how many seats others have taken from the lease so far (its `lost`),
    /// read at the same moment as `seats`. None from `take_seats`, and from a `renew_lease`
    /// installed before it answered it.
    pub lost: Option<u64>,
    /// `renew_lease` only: the listed seats another node leads on a node lease, each with that
    /// lease and its `moved`, read at the same moment as the seat (what [`watch_leases`]
    /// compares later). Empty from `take_seats` and from a `renew_lease` installed before it
    /// answered them.
    pub followed: Vec<FollowedSeat>,
}

/// A seat another node leads, seen on that node's lease by a [`renew_lease`]: while the lease is
/// valid and its `moved` is still this one ([`watch_leases`]), the seat is on it, at the term
/// the renew answered, valid at least as long as the lease (sql/V16__lease_moves.sql).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowedSeat {
    pub service_id: String,
    /// The node lease the seat hangs on.
    pub lease_id: u64,
    /// How many seats had left that lease when the seat was seen on it.
    pub moved: u64,
}

/// A valid node lease this account may read, as [`watch_leases`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchedLease {
    pub lease_id: u64,
    /// The node the lease was granted for: the leader of every seat on it.
    pub node_id: String,
    /// Time left on the lease, by the database's clock (more than zero).
    pub lease_remaining: Duration,
    /// How many seats have left the lease so far, any way.
    pub moved: u64,
}

/// `CALL watch_leases(lease_ids)`: a follower's look at the node leases its followed seats hang
/// on, one row read per lease instead of one per seat. Answers each listed lease that is valid
/// now and was granted to this connection's account, to an account limited to exactly the same
/// service patterns, or to any account when this one is not limited (any other is left out: a
/// follower then lists its seats with [`renew_lease`]).
pub async fn watch_leases<'a, 't: 'a, C>(conn: C, lease_ids: &[u64]) -> Result<Vec<WatchedLease>>
where
    C: ToConnection<'a, 't> + 'a,
{
    let ids = serde_json::to_string(lease_ids).map_err(|e| Error::invalid("lease_ids", e.to_string()))?;
    let sql = inline_params("CALL watch_leases(?)", &(ids,).into())?;
    let result = sql.run(conn).await.map_err(Error::from_mysql)?;
    let rows: Vec<Row> = result.collect_and_drop().await.map_err(Error::from_mysql)?;
    rows.iter()
        .map(|row| Ok(WatchedLease {
            lease_id: col(row, "lease_id")?,
            node_id: col(row, "node_id")?,
            lease_remaining: millis(row, "lease_remaining_ms")?,
            moved: col(row, "moved")?,
        }))
        .collect()
}

/// `CALL renew_lease(lease_id, node_id, lease_ms, seats)`: a session's renew, one row written
/// whatever the number of seats. `seats` are the seats asked about, each with the term the
/// caller holds (0: none). Renews the lease (only while it is valid, for this account and node),
/// lets go of the listed seats that hang on it but that the caller does not hold at their term,
/// hangs on it the held seats that stand on a lease of their own, and tells who leads each other
/// listed seat. A seat of the node's missing from the answer is for its own `campaign` to decide.
pub async fn renew_lease<'a, 't: 'a, C>(conn: C, lease_id: u64, node_id: &str, lease: Duration, seats: &[(&str, u64)]) -> Result<LeaseAnswer>
where
    C: ToConnection<'a, 't> + 'a,
{
    let seats = serde_json::to_string(seats).map_err(|e| Error::invalid("seats", e.to_string()))?;
    let sql = inline_params("CALL renew_lease(?, ?, ?, ?)", &(lease_id, node_id, lease_ms(lease)?, seats).into())?;
    lease_answer(conn, sql).await
}

/// `CALL take_seats(lease_id, node_id, lease_ms, service_ids)`: [`campaign_seats`] for a session
/// with a node lease: renews the lease first, then takes every listed seat that is vacant or
/// whose lease has ended, each hung on the lease. With a lease that has ended it takes nothing
/// (`renewed` false).
pub async fn take_seats<'a, 't: 'a, C>(conn: C, lease_id: u64, node_id: &str, lease: Duration, service_ids: &[&str]) -> Result<LeaseAnswer>
where
    C: ToConnection<'a, 't> + 'a,
{
    let ids = serde_json::to_string(service_ids).map_err(|e| Error::invalid("service_ids", e.to_string()))?;
    let sql = inline_params("CALL take_seats(?, ?, ?, ?)", &(lease_id, node_id, lease_ms(lease)?, ids).into())?;
    lease_answer(conn, sql).await
}

/// The rows of `renew_lease` / `take_seats`: the lease's row (service_id NULL: the lease id as
/// its term, renewed as its is_leader) and one row per seat, in no particular order.
async fn lease_answer<'a, 't: 'a, C>(conn: C, sql: String) -> Result<LeaseAnswer>
where
    C: ToConnection<'a, 't> + 'a,
{
    let result = sql.run(conn).await.map_err(Error::from_mysql)?;
    let rows: Vec<Row> = result.collect_and_drop().await.map_err(Error::from_mysql)?;
    let (lease, seats) = lease_and_seat_rows(&rows, "a node lease call")?;
    let has = |name: &str| lease.columns_ref().iter().any(|c| c.name_ref() == name.as_bytes());
    let lost = if has("lost") { col::<Option<u64>>(lease, "lost")? } else { None };
    let mut followed = Vec::new();
    if has("seat_lease_id") {
        for (service_id, row) in &seats {
            if let (Some(lease_id), Some(moved)) = (col::<Option<u64>>(row, "seat_lease_id")?, col::<Option<u64>>(row, "seat_lease_moved")?) {
                followed.push(FollowedSeat { service_id: service_id.clone(), lease_id, moved });
            }
        }
    }
    Ok(LeaseAnswer {
        renewed: flag(lease, "is_leader")?,
        lease_remaining: millis(lease, "lease_remaining_ms")?,
        server_time: Duration::from_micros(col::<i64>(lease, "server_us")?.max(0) as u64),
        seats: seats.into_iter().map(|(service_id, row)| Ok(SeatAnswer { service_id, answer: campaign_from(row)? })).collect::<Result<_>>()?,
        lost,
        followed,
    })
}

/// The rows of a node lease call (`renew_lease`, `take_seats`, `release_lease`), split: its one
/// lease row (service_id NULL) and its seat rows, each with its service id. More or fewer lease
/// rows than one is an error naming `what`.
fn lease_and_seat_rows<'r>(rows: &'r [Row], what: &str) -> Result<(&'r Row, Vec<(String, &'r Row)>)> {
    let (mut lease, mut seats) = (Vec::new(), Vec::new());
    for row in rows {
        match col::<Option<String>>(row, "service_id")? {
            None => lease.push(row),
            Some(service_id) => seats.push((service_id, row)),
        }
    }
    match lease[..] {
        [one] => Ok((one, seats)),
        _ => Err(Error::Server {
            code: 0,
            state: "HY000".into(),
            message: format!("the answer of {what} had {} lease rows (one expected)", lease.len()),
        }),
    }
}

/// The answer of [`release_lease`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRelease {
    /// True when this call gave the lease up; false when it was no longer valid (or not this
    /// account's, or not the node's): nothing was written.
    pub released: bool,
    /// Each seat that hung on the lease, with the term that ended (service id, term): vacant
    /// from the call, its term recorded `resigned` at that instant.
    pub seats: Vec<(String, u64)>,
}

/// `CALL release_lease(lease_id, node_id)`: a session's close in one call. Ends the node lease
/// now, and with it every seat that hangs on it: each is vacant at once, its term ended
/// `resigned` now by this account, as [`resign`] ends it, in one transaction of a few set-wide
/// statements (as [`resign_seats`] when no fence holds one of its terms). Only the account the lease was
/// granted to, for its node, while it is valid. Stop acting as leader of every seat on the lease
/// before calling it.
pub async fn release_lease<'a, 't: 'a, C>(conn: C, lease_id: u64, node_id: &str) -> Result<LeaseRelease>
where
    C: ToConnection<'a, 't> + 'a,
{
    let sql = inline_params("CALL release_lease(?, ?)", &(lease_id, node_id).into())?;
    let result = sql.run(conn).await.map_err(Error::from_mysql)?;
    let rows: Vec<Row> = result.collect_and_drop().await.map_err(Error::from_mysql)?;
    let (lease, seats) = lease_and_seat_rows(&rows, "release_lease")?;
    Ok(LeaseRelease {
        released: flag(lease, "is_leader")?,
        seats: seats.into_iter().map(|(service_id, row)| Ok((service_id, col(row, "term")?))).collect::<Result<_>>()?,
    })
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

/// One seat [`handover_seats`] handed over (or found its node leading), as it is after the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatHandover {
    pub service_id: String,
    /// True when `to_node` holds a valid lease on the seat (it led already, or took the seat
    /// between the handover and the answer); false while the seat waits for it, vacant and
    /// reserved.
    pub is_leader: bool,
    /// The node holding a valid lease: `to_node` when `is_leader`, else `None` (the seat was
    /// vacated for `to_node`).
    pub leader_id: Option<String>,
    /// The seat's term: the one the handover ended (or `to_node`'s, when it leads).
    pub term: u64,
    /// Time left on the current leader's lease, by the database's clock; zero while vacant.
    pub lease_remaining: Duration,
}

/// `CALL handover_seats(service_ids, to_node)` (operator role): [`handover`] of many seats in
/// one round trip (draining a node). Each listed seat is handed over to `to_node` as
/// [`handover`] hands over one, each in a transaction of its own (a failed or cut call keeps
/// the handovers it made; sending the same list again is harmless). The answer has one entry
/// per seat the call handed over or found `to_node` leading, by service id, as the seat is
/// after the call. No entry, and nothing changed, for: a service with no seat (no seat is
/// created, unlike [`handover`]), one outside the account's limit, a seat whose lock was not
/// obtained within its bound (about 1 s per lock, as [`handover`] waits), and the seats not
/// begun once the call had run 10 s: send those again. A list that is not one of distinct ids
/// of 1 to 128 characters is refused whole ([`Error::InvalidArgument`] naming `service_ids`).
pub async fn handover_seats<'a, 't: 'a, C>(conn: C, service_ids: &[&str], to_node: &str) -> Result<Vec<SeatHandover>>
where
    C: ToConnection<'a, 't> + 'a,
{
    let ids = serde_json::to_string(service_ids).map_err(|e| Error::invalid("service_ids", e.to_string()))?;
    let sql = inline_params("CALL handover_seats(?, ?)", &(ids, to_node).into())?;
    let result = sql.run(conn).await.map_err(Error::from_mysql)?;
    let rows: Vec<Row> = result.collect_and_drop().await.map_err(Error::from_mysql)?;
    rows.iter()
        .map(|row| {
            Ok(SeatHandover {
                service_id: col(row, "service_id")?,
                is_leader: flag(row, "is_leader")?,
                leader_id: col(row, "leader_id")?,
                term: col(row, "term")?,
                lease_remaining: millis(row, "lease_remaining_ms")?,
            })
        })
        .collect()
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

/// Some of the server's variables as this session sees them (`SHOW VARIABLES`): one round trip
/// for every question the library asks of the server's set-up (named locks, binary log).
pub(crate) struct ServerVariables(Vec<(String, String)>);

impl ServerVariables {
    /// The value of `name`; `None` when the server has no such variable.
    pub(crate) fn value(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// Whether `name` is `ON` (a variable the server lacks is off).
    pub(crate) fn is_on(&self, name: &str) -> bool {
        self.value(name).is_some_and(|v| v.eq_ignore_ascii_case("ON"))
    }
}

/// Reads `names` (identifiers of the library's own choosing, never input) in one statement.
pub(crate) async fn server_variables(conn: &mut mysql_async::Conn, names: &[&str]) -> Result<ServerVariables> {
    let list = names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ");
    let sql = format!("SHOW VARIABLES WHERE Variable_name IN ({list})");
    let vars: Vec<(String, String)> = sql.as_str().fetch(&mut *conn).await.map_err(Error::from_mysql)?;
    Ok(ServerVariables(vars))
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
