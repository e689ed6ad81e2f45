//! Per-service access (contract "Per-service access", migration V6) at the SQL level, against
//! the real server with real accounts: an account limited to LIKE patterns may call every
//! procedure on a matching service; on any other service each procedure raises SQLSTATE 45002 'mysqlleader: access
//! denied' naming the account and the service, before it reads or writes anything, and changes
//! nothing. An account without a limit works as before.

mod common;
#[path = "sql_support.rs"]
mod sql_support;
#[path = "common/access.rs"]
mod access;

use access::{assert_denied, calls, run, LONG};
use common::TestDb;
use mysql_async::{Conn, Opts, OptsBuilder};
use sql_support::*;

/// An account `name`@'%' with only EXECUTE on the test's database.
async fn account(admin: &mut Conn, db: &TestDb, prefix: &str) -> (String, Conn) {
    let name = format!("{prefix}_{}", db.name.trim_start_matches("ml_"));
    let name: String = name.chars().take(32).collect(); // MySQL's limit on user names
    exec(admin, &format!("DROP USER IF EXISTS '{name}'@'%'")).await;
    exec(admin, &format!("CREATE USER '{name}'@'%' IDENTIFIED BY 'app-secret'")).await;
    exec(admin, &format!("GRANT EXECUTE ON `{}`.* TO '{name}'@'%'", db.name)).await;
    let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(&name)).pass(Some("app-secret"));
    let conn = Conn::new(opts).await.expect("the account connects");
    (name, conn)
}

/// A limited account: allowed on services matching its patterns, 45002 on every other, with
/// nothing read into a transaction, nothing written; an account without a limit is unaffected.
#[tokio::test]
async fn a_limited_account_uses_only_its_services() {
    let db = TestDb::migrated("access_limits").await;
    let mut admin = connect(&db.url).await;
    let (limited, mut app) = account(&mut admin, &db, "lim").await;
    let (free, mut other) = account(&mut admin, &db, "free").await;
    exec(&mut admin, &format!("INSERT INTO leader_election_access (account, service_pattern) VALUES \
                               ('{limited}', 'billing%'), ('{limited}', 'ledger')")).await;
    // Rows the denied calls could touch: a seat and a history on the denied service.
    campaign(&mut admin, "payroll", "z", LONG).await;

    for service in ["billing", "billing-eu", "ledger"] {
        for (what, sql) in calls(service) {
            run(&mut app, what, &sql).await.unwrap_or_else(|e| panic!("{what} on {service}: {e:?}"));
            exec(&mut app, "ROLLBACK").await;
        }
    }
    let before = snapshot(&mut admin).await;
    for service in ["payroll", "ledger2", "Billing", "bill"] {
        for (what, sql) in calls(service) {
            let e = run(&mut app, what, &sql).await.expect_err(&format!("{what} on {service}"));
            assert_denied(&e, &limited, service, &format!("{what} on {service}"));
            assert!(!in_transaction(&mut app).await, "{what} on {service}: no transaction left open");
            exec(&mut app, "ROLLBACK").await;
        }
    }
    assert_eq!(snapshot(&mut admin).await, before, "the denied calls changed nothing");

    // Without a row in the table an account is limited by its role alone.
    for (what, sql) in calls("unlisted") {
        run(&mut other, what, &sql).await.unwrap_or_else(|e| panic!("{free}: {what}: {e:?}"));
        exec(&mut other, "ROLLBACK").await;
    }
    // The application account cannot change its own limit: it has no privilege on the table.
    let e = call_text(&mut app, &format!("DELETE FROM leader_election_access WHERE account = '{limited}'"))
        .await.expect_err("no DELETE on the table");
    assert_eq!(e.code, 1142, "{e:?}");

    drop(app);
    drop(other);
    exec(&mut admin, &format!("DROP USER IF EXISTS '{limited}'@'%'")).await;
    exec(&mut admin, &format!("DROP USER IF EXISTS '{free}'@'%'")).await;
    db.drop_db().await;
}

/// The seat hint of V7 (a session that led at its last campaign tries the renew first) only
/// picks a path: a leader whose access is revoked meanwhile is refused on its next renew with
/// 45002 and writes nothing; a hint forged by SET (or left over after a force) renews nothing.
#[tokio::test]
async fn the_seat_hint_never_bypasses_the_guard_nor_the_access_check() {
    let db = TestDb::migrated("access_hint").await;
    let mut admin = connect(&db.url).await;
    let (limited, mut app) = account(&mut admin, &db, "hint").await;
    exec(&mut admin, &format!("INSERT INTO leader_election_access (account, service_pattern) VALUES ('{limited}', 'billing')")).await;
    let won = call_text(&mut app, &format!("CALL campaign('billing', 'a', {LONG})")).await.unwrap();
    assert_eq!((won.flag("is_leader"), won.term()), (1, 1));
    let renewed = call_text(&mut app, &format!("CALL campaign('billing', 'a', {LONG})")).await.unwrap();
    assert_eq!((renewed.flag("is_leader"), renewed.term()), (1, 1), "the renew through the hint");

    // Revoked: the next renew (through the hint) is refused and changes nothing.
    exec(&mut admin, &format!("UPDATE leader_election_access SET service_pattern = 'ledger' WHERE account = '{limited}'")).await;
    let before = snapshot(&mut admin).await;
    let e = call_text(&mut app, &format!("CALL campaign('billing', 'a', {LONG})")).await.unwrap_err();
    assert_denied(&e, &limited, "billing", "a renew after the revocation");
    assert_eq!(snapshot(&mut admin).await, before, "the refused renew wrote nothing");
    assert!(!in_transaction(&mut app).await);

    // Left over after a force, and forged: the guard decides, nothing is renewed.
    campaign(&mut admin, "svc", "a", LONG).await;
    campaign(&mut admin, "svc", "a", LONG).await; // the admin session now holds a hint for svc/a/1
    call_text(&mut connect(&db.url).await, &format!("CALL force_leader('svc', 'b', {LONG})")).await.unwrap();
    let seen = call_text(&mut admin, &format!("CALL campaign('svc', 'a', {LONG})")).await.unwrap();
    assert_eq!((seen.flag("is_leader"), seen.text("leader_id").as_deref(), seen.term()), (0, Some("b"), 2), "a stale hint");
    let mut forger = connect(&db.url).await;
    exec(&mut forger, "SET @mysqlleader_seat_service = 'svc', @mysqlleader_seat_node = 'c', @mysqlleader_seat_term = 2").await;
    let before = snapshot(&mut admin).await;
    let seen = call_text(&mut forger, &format!("CALL campaign('svc', 'c', {LONG})")).await.unwrap();
    assert_eq!((seen.flag("is_leader"), seen.text("leader_id").as_deref(), seen.term()), (0, Some("b"), 2), "a forged hint");
    assert_eq!(snapshot(&mut admin).await, before, "a forged hint renews nothing");
    exec(&mut admin, &format!("DROP USER '{limited}'@'%'")).await;
    db.drop_db().await;
}
