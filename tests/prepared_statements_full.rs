//! Calls keep working when the server's prepared-statement table is full (issue "The trust
//! boundary", 10): any login, without a privilege, can prepare statements until
//! `max_prepared_stmt_count` is reached, and every server-side prepare then fails with 1461.
//! The library sends its calls through the text protocol, and the routines' own prepared probes
//! fall back to information_schema. Here the table is "full" by setting its size to 0, in a test
//! binary of its own (it changes a global variable of the server, and the test binaries run one
//! after another).

mod common;
#[path = "sql_support.rs"]
mod sql_support;

use std::time::Duration;

use common::TestDb;
use mysql_async::prelude::Queryable;
use mysqlleader::procedures;
use sql_support::*;

#[tokio::test]
async fn every_call_works_when_no_statement_can_be_prepared() {
    let db = TestDb::migrated("prepared_full").await;
    let mut admin = connect(&db.url).await;
    let before: u64 = admin.query_first("SELECT @@GLOBAL.max_prepared_stmt_count").await.unwrap().unwrap();
    exec(&mut admin, "SET GLOBAL max_prepared_stmt_count = 0").await;
    // The condition is real: a prepare fails.
    let refused = admin.prep("SELECT 1").await.map_err(refusal).expect_err("no prepared statement");

    // A fresh pool (no statement cached), every call of an elector's life.
    let pool = mysql_async::Pool::new(mysql_async::Opts::from_url(&db.url).unwrap());
    let lease = Duration::from_secs(60);
    let outcome = async {
        let c = procedures::campaign(&pool, "svc", "a", lease).await?;
        let renewed = procedures::campaign(&pool, "svc", "a", lease).await?;
        let am = procedures::am_i_leader(&pool, "svc", "a").await?;
        let current = procedures::current_leader(&pool, "svc").await?;
        let check = procedures::check_leader_at(&pool, "svc", "a", c.term).await?;
        let statuses = procedures::service_statuses(&pool, None).await?;
        let terms = procedures::recent_terms(&pool, "svc", 5).await?;
        let resigned = procedures::resign(&pool, "svc", "a").await?;
        Ok::<_, mysqlleader::Error>((c, renewed, am, current, check, statuses, terms, resigned))
    }
    .await;
    exec(&mut admin, &format!("SET GLOBAL max_prepared_stmt_count = {before}")).await;
    assert_eq!(refused.code, 1461, "{refused:?}");
    let (c, renewed, am, current, check, statuses, terms, resigned) = outcome.expect("every call works");
    assert!(c.is_leader && renewed.is_leader && renewed.term == c.term, "{c:?} {renewed:?}");
    assert!(am.is_leader && current.leader_id.as_deref() == Some("a") && check.term == c.term, "{am:?} {current:?} {check:?}");
    assert_eq!(statuses.len(), 1);
    assert_eq!(terms.len(), 1);
    assert!(resigned.resigned, "{resigned:?}");
    pool.disconnect().await.unwrap();
    db.drop_db().await;
}
