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
