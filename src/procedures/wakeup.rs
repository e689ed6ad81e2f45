//! The wake-up lock's SQL (used by `crate::wakeup` and `crate::session`): its name, taking,
//! testing and releasing it, ending a wait with `KILL QUERY`, and keeping its connection open.
//!
//! A named lock per database and service, named by `leader_election_wakeup_name`: `mysqlleader.`
//! and 40 hex digits of SHA-256 of the schema's secret, the database and the service (named locks
//! are limited to 64 characters), so that only accounts allowed on the service can know it. It
//! carries no authority: it only wakes followers.

use mysql_async::prelude::Query;
use mysql_async::Row;

use crate::error::{Error, Result};

use super::{call_row, col};

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
    Ok(wakeup_lock_setup(conn).await?.0)
}

/// [`wakeup_lock_supported`], and the session's `wait_timeout` in seconds (how long the server
/// lets it idle before closing it), in one round trip.
pub(crate) async fn wakeup_lock_setup(conn: &mut mysql_async::Conn) -> Result<(bool, u64)> {
    let vars = super::server_variables(conn, &["wsrep_on", "group_replication_group_name", "wait_timeout"]).await?;
    let supported = !vars.is_on("wsrep_on") && !vars.value("group_replication_group_name").is_some_and(|v| !v.is_empty());
    let wait_timeout_s = vars.value("wait_timeout").and_then(|v| v.parse().ok()).unwrap_or(28_800);
    Ok((supported, wait_timeout_s))
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
