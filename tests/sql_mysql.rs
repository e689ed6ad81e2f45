//! What only MySQL does, on MySQL (each test returns at once, saying so, on MariaDB, where the
//! other suites cover the same promise by MariaDB's own means):
//!
//! * the open-transaction probe (`leader_election_probe_in_tx`, MySQL lines): MySQL has no
//!   `@@in_transaction`; the probe sets the next transaction's isolation level to the session's
//!   own, which MySQL refuses inside a transaction (1568). Outside one it could replace a
//!   one-shot `SET TRANSACTION ISOLATION LEVEL` the caller sent just before the call; the call's
//!   own autocommit read uses such a level up anyway, as any autocommit statement does;
//! * the trigger's replacement (`LOCK TABLES`, a trial trigger, `DROP`, `CREATE`): an installer
//!   refused the trigger (binary log on, no SUPER, `log_bin_trust_function_creators` off: 1419)
//!   stops before the `DROP`, and the old trigger keeps recording terms;
//! * the binary log's format, read from performance_schema once per connection
//!   (`leader_election_begin`, MySQL lines): a session whose format is STATEMENT writes at
//!   REPEATABLE READ (InnoDB refuses READ COMMITTED there), and a session that forges the
//!   remembered answer only gets its own writes refused.

use crate::{common, sql_support};
use common::TestDb;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};
use sql_support::*;

/// The isolation level of the transaction `c` runs now (performance_schema, MySQL).
async fn level_of_the_open_transaction(c: &mut Conn) -> String {
    c.query_first("SELECT ISOLATION_LEVEL FROM performance_schema.events_transactions_current \
                   WHERE THREAD_ID = PS_CURRENT_THREAD_ID()")
        .await
        .unwrap()
        .expect("the transaction is instrumented (performance_schema on, MySQL's default)")
}

/// The level a transaction started with `START TRANSACTION` after `between` runs at, when the
/// session's level is REPEATABLE READ and it sent a one-shot SERIALIZABLE before `between`.
async fn level_after(c: &mut Conn, between: &str) -> String {
    exec(c, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ").await;
    exec(c, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE").await;
    if !between.is_empty() {
        c.query_drop(between).await.unwrap_or_else(|e| panic!("{between}: {e}"));
    }
    exec(c, "START TRANSACTION").await;
    c.query_drop("SELECT COUNT(*) FROM leader_election").await.unwrap();
    let level = level_of_the_open_transaction(c).await;
    exec(c, "COMMIT").await;
    level
}

#[tokio::test]
async fn the_transaction_probe_is_exact_and_changes_nothing_a_call_would_not() {
    let db = TestDb::migrated("mysql_probe").await;
    let mut c = connect(&db.url).await;
    if is_mariadb(&mut c).await {
        println!("MariaDB: @@in_transaction answers; the probe's MySQL lines are not installed here");
        db.drop_db().await;
        return;
    }
    campaign(&mut c, "svc", "a", 60_000).await;
    // 1. Exact: refused in every open transaction, answered outside one.
    for (setup, open) in [("SET autocommit = 1", false), ("SET autocommit = 1; START TRANSACTION", true),
                          ("SET autocommit = 0", false), ("SET autocommit = 0; SELECT COUNT(*) FROM leader_election", true),
                          ("SET autocommit = 1; START TRANSACTION READ ONLY", true)] {
        exec(&mut c, setup).await;
        let r = call_text(&mut c, "CALL am_i_leader('svc', 'a')").await;
        match (open, r) {
            (false, Ok(r)) => assert_eq!(r.flag("is_leader"), 1, "{setup}"),
            (true, Err(e)) => assert!(e.state == "45000" && e.message.contains("needs autocommit on"), "{setup}: {e:?}"),
            (open, r) => panic!("{setup}: open {open}, answered {r:?}"),
        }
        exec(&mut c, "ROLLBACK; SET autocommit = 1").await;
    }
    // 2. A one-shot level sent before a call: the control shows it applies to the next
    //    transaction; any autocommit statement in between uses it up, and a probing call does
    //    no more than that.
    assert_eq!(level_after(&mut c, "").await, "SERIALIZABLE", "control: the one-shot level applies");
    assert_eq!(level_after(&mut c, "SELECT 1 FROM leader_election LIMIT 1").await, "REPEATABLE READ",
               "an autocommit read uses the one-shot level up");
    assert_eq!(level_after(&mut c, "CALL am_i_leader('svc', 'a')").await, "REPEATABLE READ");
    assert_eq!(level_after(&mut c, "CALL current_leader('svc')").await, "REPEATABLE READ");
    db.drop_db().await;
}

#[tokio::test]
async fn an_installer_refused_the_trigger_leaves_the_old_one_in_place() {
    let _settings = SERVER_SETTINGS.lock().await;
    let db = TestDb::migrated("mysql_trigger").await;
    let mut admin = connect(&db.url).await;
    if is_mariadb(&mut admin).await {
        println!("MariaDB: CREATE OR REPLACE TRIGGER is one statement; nothing to leave behind");
        db.drop_db().await;
        return;
    }
    let (log_bin, trust): (i64, i64) = admin
        .query_first("SELECT @@GLOBAL.log_bin, @@GLOBAL.log_bin_trust_function_creators")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((log_bin, trust), (1, 0), "the test server has MySQL's defaults: binary log on, no trust");
    // An installer with the README's privileges, and a changed trigger to apply (its record
    // no longer matches, as after an upgrade that changed it).
    let name: String = format!("trg_{}", db.name.trim_start_matches("ml_")).chars().take(32).collect();
    exec(&mut admin, &format!("DROP USER IF EXISTS '{name}'@'%'")).await;
    exec(&mut admin, &format!("CREATE USER '{name}'@'%' IDENTIFIED BY 'trg-secret'")).await;
    exec(&mut admin, &format!(
        "GRANT CREATE, ALTER, DROP, CREATE ROUTINE, ALTER ROUTINE, EVENT, CREATE VIEW, TRIGGER, SELECT, INSERT, \
         UPDATE, DELETE, LOCK TABLES ON `{}`.* TO '{name}'@'%'", db.name)).await;
    exec(&mut admin, "UPDATE mysqlleader_routines SET checksum = 'changed' WHERE name = 'leader_election_record_term'").await;
    let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(&name)).pass(Some("trg-secret"));
    let pool = mysql_async::Pool::new(opts);
    let refused = mysqlleader::migrate(&pool).await.expect_err("no trigger without SUPER or the setting");
    assert!(refused.to_string().contains("log_bin_trust_function_creators=ON"), "{refused}");
    let _ = pool.disconnect().await;
    // The old trigger is there, and the election's tables are not left locked.
    let triggers: Vec<String> = admin
        .query("SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() ORDER BY 1")
        .await
        .unwrap();
    assert_eq!(triggers, vec!["leader_election_record_term".to_string()], "the old trigger stays; no trial left");
    let r = campaign(&mut admin, "svc", "a", 60_000).await;
    assert_eq!(r.term(), 1);
    let rows: i64 = admin
        .query_first("SELECT COUNT(*) FROM leader_election_history WHERE service_id = 'svc' AND term = 1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rows, 1, "the old trigger still records the term");
    exec(&mut admin, &format!("DROP USER IF EXISTS '{name}'@'%'")).await;
    db.drop_db().await;
}

#[tokio::test]
async fn a_statement_logged_session_writes_and_a_forged_format_harms_only_itself() {
    let db = TestDb::migrated("mysql_binlog").await;
    let mut c = connect(&db.url).await;
    if is_mariadb(&mut c).await {
        println!("MariaDB: @@binlog_format is read directly (no warning, no cache); the test server has no binary log");
        db.drop_db().await;
        return;
    }
    let log_bin: i64 = c.query_first("SELECT @@GLOBAL.log_bin").await.unwrap().unwrap();
    assert_eq!(log_bin, 1, "the test server has MySQL's default: binary log on");
    // 1. A row-logged session: the first write reads the format and remembers it.
    let r = campaign(&mut c, "rows", "a", 60_000).await;
    assert_eq!(r.term(), 1);
    let remembered: Option<i64> = c.query_first("SELECT @mysqlleader_binlog_rows").await.unwrap().unwrap();
    assert_eq!(remembered, Some(1), "a row-logged session is remembered as such");
    // 2. A statement-logged session (an administrator's: the account may set the format) writes
    //    at REPEATABLE READ, and is read again at every write (nothing remembered).
    let mut stmt = connect(&db.url).await;
    exec(&mut stmt, "SET SESSION binlog_format = 'STATEMENT'").await;
    for term in 1..=2 {
        if term > 1 {
            exec(&mut stmt, "CALL reelect('stmt')").await;
        }
        let r = campaign(&mut stmt, "stmt", "b", 60_000).await;
        assert_eq!((r.term(), r.flag("is_leader")), (term, 1), "a write under the statement format");
    }
    let remembered: Option<i64> = stmt.query_first("SELECT @mysqlleader_binlog_rows").await.unwrap().unwrap();
    assert_eq!(remembered, Some(0), "a statement-logged session is read again, not remembered");
    // 3. The same session forges the remembered answer: its writes go at READ COMMITTED, which
    //    InnoDB refuses under the statement format (1665): the call fails whole, no seat is
    //    made, nothing stays open or locked, and another session's calls go on.
    exec(&mut stmt, "SET @mysqlleader_binlog_rows = 1").await;
    let e = call(&mut stmt, "CALL campaign(?, ?, ?)", ("forged", "b", 60_000)).await.expect_err("refused under STATEMENT");
    assert_eq!(e.code, 1665, "{e:?}");
    assert!(!in_transaction(&mut stmt).await, "the refused call leaves no transaction open");
    assert!(seat(&mut c, "forged").await.is_none(), "no seat is left behind");
    assert_no_locks_held(&mut c, "after the forged call").await;
    let r = campaign(&mut c, "rows", "a", 60_000).await;
    assert_eq!((r.term(), r.flag("is_leader")), (1, 1), "the other session renews as before");
    db.drop_db().await;
}
