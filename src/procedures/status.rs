//! Queries of the `mysqlleader` command-line tool: read-only views for operators (`status`,
//! `event status`) and the connection check ([`server_info`]).
//!
//! The status queries call definer routines (`leader_election_status`,
//! `leader_election_recent_terms`, `leader_election_event_status`) that the operator and observer
//! roles may call; no role holds SELECT on the tables. Every time is taken or computed on the
//! database's clock and returned as UTC text (`2025-01-31T12:00:00.123456Z`); every length of
//! time is computed by the database, never against a local clock.

use std::time::Duration;

use mysql_async::prelude::Query;
use mysql_async::{Params, Row};

use crate::error::{Error, Result};

use super::{call_row, col, flag, inline_params, millis};

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
