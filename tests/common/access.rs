//! Per-service access at the SQL level, shared by `tests/sql_access.rs` (one server) and
//! `tests/galera.rs` (a 3-node cluster). Not a module of `common` itself: the suites that need
//! it include it with `#[path = "common/access.rs"] mod access;` next to `mod sql_support;`,
//! whose helpers it uses.
#![allow(dead_code)]

use mysql_async::Conn;

use crate::sql_support::{call_text, exec, Refusal, Reply};

pub const LONG: i64 = 60_000;

/// Every call that takes a service, on `service`, as (procedure, SQL); run them with [`run`].
pub fn calls(service: &str) -> Vec<(&'static str, String)> {
    let s = service.replace('\'', "''");
    vec![
        ("campaign", format!("CALL campaign('{s}', 'a', {LONG})")),
        // Right after the campaign, so that on an allowed new service 'a' leads at term 1.
        ("assert_leader", format!("CALL assert_leader('{s}', 'a', 1)")),
        ("am_i_leader", format!("CALL am_i_leader('{s}', 'a')")),
        ("current_leader", format!("CALL current_leader('{s}')")),
        ("force_leader", format!("CALL force_leader('{s}', 'a', {LONG})")),
        ("resign", format!("CALL resign('{s}', 'a')")),
        ("reelect", format!("CALL reelect('{s}')")),
    ]
}

/// Runs one of [`calls`]: assert_leader inside a transaction of its own (the caller ends it).
pub async fn run(c: &mut Conn, what: &str, sql: &str) -> Result<Reply, Refusal> {
    if what == "assert_leader" {
        exec(c, "START TRANSACTION").await;
    }
    call_text(c, sql).await
}

/// The refusal of per-service access: SQLSTATE 45002, naming the account and the service.
pub fn assert_denied(e: &Refusal, account: &str, service: &str, what: &str) {
    assert_eq!(e.state, "45002", "{what}: SQLSTATE of {e:?}");
    assert!(e.message.starts_with("mysqlleader: access denied"), "{what}: {e:?}");
    assert!(e.message.contains(&format!("'{account}'")), "{what}: names the account: {e:?}");
    assert!(e.message.contains(&format!("'{service}'")), "{what}: names the service: {e:?}");
}
