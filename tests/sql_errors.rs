//! Bad input and failures, against the real server: every parameter of every procedure rejects
//! NULL, empty, too long and out-of-range values with SQLSTATE 45000 and a message
//! 'mysqlleader: <parameter> ...'; the limits themselves are accepted; and a failed call — bad
//! input, or a lock wait timeout in the middle of a writing procedure — changes no row, leaves
//! no transaction open on the caller's session and no lock held.

use crate::{common, sql_support};
use common::TestDb;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Value};
use sql_support::*;

const LONG: i64 = 60_000;

/// A procedure of the contract: its parameters, and valid arguments for them (the leader of
/// 'svc' at term 1, so that every call would succeed or answer normally).
struct Procedure {
    name: &'static str,
    params: &'static [&'static str],
}

const PROCEDURES: &[Procedure] = &[
    Procedure { name: "campaign", params: &["service_id", "node_id", "lease_ms"] },
    Procedure { name: "am_i_leader", params: &["service_id", "node_id"] },
    Procedure { name: "current_leader", params: &["service_id"] },
    Procedure { name: "force_leader", params: &["service_id", "node_id", "lease_ms"] },
    Procedure { name: "reelect", params: &["service_id"] },
    Procedure { name: "resign", params: &["service_id", "node_id"] },
    Procedure { name: "assert_leader", params: &["service_id", "node_id", "term"] },
    Procedure { name: "set_expiry_event", params: &["enabled"] },
];

fn valid(param: &str) -> Value {
    match param {
        "service_id" => Value::from("svc"),
        "node_id" => Value::from("a"),
        "lease_ms" => Value::from(LONG),
        "term" => Value::from(1u64),
        "enabled" => Value::from(0),
        _ => unreachable!(),
    }
}

/// The values each parameter must reject, with a label for the failure message.
fn bad_values(param: &str) -> Vec<(&'static str, Value)> {
    match param {
        "service_id" | "node_id" => vec![
            ("NULL", Value::NULL),
            ("empty", Value::from("")),
            ("129 ASCII characters", Value::from("x".repeat(129))),
            ("129 two-byte characters", Value::from("é".repeat(129))),
            ("129 four-byte characters", Value::from("🚀".repeat(129))),
            ("128 characters and a space", Value::from(format!("{} ", "x".repeat(128)))),
        ],
        "lease_ms" => vec![
            ("NULL", Value::NULL),
            ("0", Value::from(0)),
            ("-1", Value::from(-1)),
            ("86400001", Value::from(86_400_001)),
            ("i64::MAX", Value::from(i64::MAX)),
            ("i64::MIN", Value::from(i64::MIN)),
        ],
        "term" => vec![("NULL", Value::NULL)],
        "enabled" => vec![("NULL", Value::NULL), ("2", Value::from(2)), ("-1", Value::from(-1))],
        _ => unreachable!(),
    }
}

/// `CALL name(?, ?, ...)` as a prepared statement, and the same with the values written out as
/// SQL literals, as a command-line client sends it.
fn statements(p: &Procedure, args: &[Value]) -> (String, String) {
    let marks = vec!["?"; args.len()].join(", ");
    let literals: Vec<String> = args.iter().map(|v| v.as_sql(false)).collect();
    (format!("CALL {}({marks})", p.name), format!("CALL {}({})", p.name, literals.join(", ")))
}

/// A database with 'svc' led by 'a' at term 1 (and a closed term of 'old'), and two sessions.
async fn setup(tag: &str) -> (TestDb, Conn, Conn) {
    let db = TestDb::migrated(tag).await;
    let mut caller = connect(&db.url).await;
    campaign(&mut caller, "old", "z", LONG).await;
    resign(&mut caller, "old", "z").await;
    campaign(&mut caller, "svc", "a", LONG).await;
    let other = connect(&db.url).await;
    (db, caller, other)
}

/// After a failed call: no row changed, no transaction open on the caller's session, no lock held.
async fn assert_left_nothing_behind(caller: &mut Conn, other: &mut Conn, before: &Snapshot, what: &str) {
    assert!(!in_transaction(caller).await, "{what}: a transaction is left open");
    assert_eq!(&snapshot(other).await, before, "{what}: a row changed");
    assert_no_locks_held(other, what).await;
}

/// Every bad value of every parameter of every procedure, through both protocols: SQLSTATE
/// 45000, 'mysqlleader: <parameter> ...', and nothing left behind.
#[tokio::test]
async fn every_parameter_rejects_bad_input_and_leaves_nothing_behind() {
    let (db, mut caller, mut other) = setup("errors_input").await;
    let before = snapshot(&mut other).await;
    let mut checked = 0;
    for p in PROCEDURES {
        for (i, param) in p.params.iter().enumerate() {
            for (label, bad) in bad_values(param) {
                let mut args: Vec<Value> = p.params.iter().map(|q| valid(q)).collect();
                args[i] = bad;
                let (prepared, text) = statements(p, &args);
                let what = format!("{}: {param} {label}", p.name);
                let e = refused(&mut caller, &prepared, args.clone()).await;
                e.assert_invalid(param, &what);
                assert_left_nothing_behind(&mut caller, &mut other, &before, &what).await;
                let e = call_text(&mut caller, &text).await.expect_err(&what);
                e.assert_invalid(param, &format!("{what} (text protocol)"));
                assert_left_nothing_behind(&mut caller, &mut other, &before, &what).await;
                checked += 1;
            }
        }
    }
    // service_id in 7 procedures, node_id in 5, lease_ms in 2, term and enabled in 1 each.
    assert_eq!(checked, 7 * 6 + 5 * 6 + 2 * 6 + 1 + 3, "every parameter was tried");
    db.drop_db().await;
}

/// Numbers that are not whole, or do not fit a BIGINT, are rejected the same way: never rounded,
/// never clamped, never a server type error in place of the contract's.
#[tokio::test]
async fn numbers_are_never_rounded_or_clamped() {
    let (db, mut caller, mut other) = setup("errors_numbers").await;
    let before = snapshot(&mut other).await;
    let cases = [
        ("CALL campaign('svc', 'b', 1.5)", "lease_ms"),
        ("CALL campaign('svc', 'b', 0.4)", "lease_ms"),
        ("CALL campaign('svc', 'b', 99999999999999999999)", "lease_ms"),
        ("CALL force_leader('svc', 'b', 86400000.5)", "lease_ms"),
        ("CALL force_leader('svc', 'b', -99999999999999999999)", "lease_ms"),
        ("CALL assert_leader('svc', 'a', -1)", "term"),
        ("CALL assert_leader('svc', 'a', 1.5)", "term"),
        ("CALL assert_leader('svc', 'a', 0.9)", "term"),
        ("CALL assert_leader('svc', 'a', 18446744073709551616)", "term"),
        ("CALL set_expiry_event(0.5)", "enabled"),
        ("CALL set_expiry_event(1.4)", "enabled"),
    ];
    for (sql, param) in cases {
        call_text(&mut caller, sql).await.expect_err(sql).assert_invalid(param, sql);
        assert_left_nothing_behind(&mut caller, &mut other, &before, sql).await;
    }
    let status: String = other
        .query_first("SELECT STATUS FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE()")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status, "DISABLED", "set_expiry_event(1.4) did not switch the event on");
    db.drop_db().await;
}

/// A failed assert_leader inside the caller's transaction (bad input or not the leader) rolls
/// that transaction back: the writes made in it are gone and no transaction stays open.
#[tokio::test]
async fn a_failed_assert_leader_rolls_back_the_callers_transaction() {
    let (db, mut caller, mut other) = setup("errors_assert_tx").await;
    exec(&mut caller, "CREATE TABLE ledger (id INT PRIMARY KEY)").await;
    let before = snapshot(&mut other).await;
    let cases: [(&str, Vec<Value>, Option<&str>); 5] = [
        ("NULL term", vec!["svc".into(), "a".into(), Value::NULL], Some("term")),
        ("empty node_id", vec!["svc".into(), "".into(), 1u64.into()], Some("node_id")),
        ("NULL service_id", vec![Value::NULL, "a".into(), 1u64.into()], Some("service_id")),
        ("stale term", vec!["svc".into(), "a".into(), 0u64.into()], None),
        ("another node", vec!["svc".into(), "b".into(), 1u64.into()], None),
    ];
    for (what, args, param) in cases {
        exec(&mut caller, "START TRANSACTION").await;
        exec(&mut caller, "INSERT INTO ledger VALUES (1)").await;
        let e = refused(&mut caller, "CALL assert_leader(?, ?, ?)", args).await;
        match param {
            Some(param) => e.assert_invalid(param, what),
            None => e.assert_not_leader(what),
        }
        assert_left_nothing_behind(&mut caller, &mut other, &before, what).await;
        exec(&mut caller, "COMMIT").await;
        let written: Option<i64> = other.query_first("SELECT COUNT(*) FROM ledger").await.unwrap();
        assert_eq!(written, Some(0), "{what}: the write before the failed assert_leader was rolled back");
    }
    db.drop_db().await;
}

/// The limits are accepted: ids of exactly 128 characters of one, two and four bytes (and with
/// quotes, backslashes and non-ASCII), leases of 1 and 86,400,000 ms, enabled 0 and 1.
#[tokio::test]
async fn the_limits_themselves_are_accepted() {
    let db = TestDb::migrated("errors_limits").await;
    let mut c = connect(&db.url).await;
    let ids = [
        "x".repeat(128),
        "é".repeat(128),
        "🚀".repeat(128),
        format!("{}'\"\\`%_é🚀 ", "y".repeat(116)),
        " ".into(),
        "0".into(),
    ];
    for (n, service) in ids.iter().enumerate() {
        assert!(service.chars().count() <= 128);
        for node in &ids {
            let what = format!("service #{n} node {:?}…", node.chars().take(3).collect::<String>());
            let r = campaign(&mut c, service, node, LONG).await;
            let leader = r.text("leader_id").expect(&what);
            assert_eq!(&leader, &ids[0], "{what}: the first node leads each service, exactly as given");
            am_i_leader(&mut c, service, node).await;
            resign(&mut c, service, "nobody").await;
            force_leader(&mut c, service, node, LONG).await;
            assert_eq!(current_leader(&mut c, service).await.text("leader_id").as_ref(), Some(node), "{what}");
            let term = current_leader(&mut c, service).await.term();
            exec(&mut c, "START TRANSACTION").await;
            assert_leader(&mut c, service, node, term).await.unwrap_or_else(|e| panic!("{what}: {e:?}"));
            exec(&mut c, "COMMIT").await;
            reelect(&mut c, service).await;
            campaign(&mut c, service, &ids[0], LONG).await;
        }
    }
    // Ids are stored whole: 128 four-byte characters are 512 bytes.
    let longest: Option<i64> = c.query_first("SELECT MAX(LENGTH(leader_id)) FROM leader_election_history").await.unwrap();
    assert_eq!(longest, Some(512));

    for lease_ms in [1, 86_400_000] {
        let r = campaign(&mut c, &format!("lease {lease_ms}"), "a", lease_ms).await;
        assert_eq!((r.flag("is_leader"), r.term(), r.remaining_ms()), (1, 1, lease_ms), "campaign, lease {lease_ms}");
        let r = force_leader(&mut c, &format!("forced {lease_ms}"), "a", lease_ms).await;
        assert_eq!((r.flag("is_leader"), r.term(), r.remaining_ms()), (1, 1, lease_ms), "force_leader, lease {lease_ms}");
    }
    assert_eq!(set_expiry_event(&mut c, 1).await.flag("event_enabled"), 1);
    assert_eq!(set_expiry_event(&mut c, 0).await.flag("event_enabled"), 0);
    db.drop_db().await;
}

// ---- Failures in the middle of a writing procedure ----
//
// Another session holds a row lock the procedure needs after it has already locked the seat
// (and sometimes written to it); the caller's lock wait timeout is 1 s, so the procedure fails
// halfway with error 1205. InnoDB then rolls back only the failed statement (unless
// innodb_rollback_on_timeout is ON): everything else is undone by the procedure's exit handler.

/// Runs `sql` on the caller (lock wait timeout 1 s) while `holder` holds the locks taken by
/// `lock_sql`; checks the call fails with a lock wait timeout and leaves nothing behind.
async fn fails_halfway(db: &TestDb, caller: &mut Conn, lock_sql: &str, sql: &str) {
    let mut holder = connect(&db.url).await;
    let mut observer = connect(&db.url).await;
    let before = snapshot(&mut observer).await;
    exec(caller, "SET SESSION innodb_lock_wait_timeout = 1").await;
    exec(&mut holder, "START TRANSACTION").await;
    exec(&mut holder, lock_sql).await;
    let e = call_text(caller, sql).await.expect_err(sql);
    assert_eq!(e.code, 1205, "{sql}: expected a lock wait timeout, got {e:?}");
    assert!(!in_transaction(caller).await, "{sql}: a transaction is left open");
    exec(&mut holder, "ROLLBACK").await;
    assert_eq!(snapshot(&mut observer).await, before, "{sql}: a row changed");
    assert_no_locks_held(&mut observer, sql).await;
}

const LOCK_TERM_1: &str = "SELECT * FROM leader_election_history WHERE service_id = 'svc' AND term = 1 FOR UPDATE";

/// campaign taking an expired seat: it fails waiting for the old term's lock (taken before the
/// seat's: leader_election_lock_seat), or for the seat's.
#[tokio::test]
async fn campaign_failing_halfway_leaves_nothing_behind() {
    let db = TestDb::migrated("errors_halfway_campaign").await;
    let mut caller = connect(&db.url).await;
    campaign(&mut caller, "svc", "a", 100).await;
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    fails_halfway(&db, &mut caller, LOCK_TERM_1, "CALL campaign('svc', 'b', 60000)").await;
    // The seat itself locked: the campaign fails waiting for it.
    fails_halfway(&db, &mut caller, "SELECT * FROM leader_election FOR UPDATE", "CALL campaign('svc', 'b', 60000)").await;
    assert_eq!(campaign(&mut caller, "svc", "b", LONG).await.term(), 2, "works once the locks are gone");
    db.drop_db().await;
}

/// campaign on a vacant seat: it has written the seat, fails opening the next term (another
/// session's gap lock where term 2 would go); the seat's new leader and term are undone.
#[tokio::test]
async fn campaign_failing_after_writing_the_seat_leaves_nothing_behind() {
    let db = TestDb::migrated("errors_halfway_vacant").await;
    let mut caller = connect(&db.url).await;
    campaign(&mut caller, "svc", "a", LONG).await;
    resign(&mut caller, "svc", "a").await;
    let lock_term_2 = "SELECT * FROM leader_election_history WHERE service_id = 'svc' AND term = 2 FOR UPDATE";
    fails_halfway(&db, &mut caller, lock_term_2, "CALL campaign('svc', 'b', 60000)").await;
    fails_halfway(&db, &mut caller, lock_term_2, "CALL force_leader('svc', 'b', 60000)").await;
    // A new service: the first campaign fails creating the seat (another session's gap lock).
    let lock_new = "SELECT * FROM leader_election WHERE service_id = 'new' FOR UPDATE";
    fails_halfway(&db, &mut caller, lock_new, "CALL campaign('new', 'b', 60000)").await;
    db.drop_db().await;
}

/// force_leader, reelect and resign: each fails waiting for the current term's lock.
#[tokio::test]
async fn force_reelect_and_resign_failing_halfway_leave_nothing_behind() {
    let db = TestDb::migrated("errors_halfway_others").await;
    let mut caller = connect(&db.url).await;
    campaign(&mut caller, "svc", "a", LONG).await;
    fails_halfway(&db, &mut caller, LOCK_TERM_1, "CALL force_leader('svc', 'b', 60000)").await;
    fails_halfway(&db, &mut caller, LOCK_TERM_1, "CALL reelect('svc')").await;
    fails_halfway(&db, &mut caller, LOCK_TERM_1, "CALL resign('svc', 'a')").await;
    db.drop_db().await;
}

/// assert_leader waiting for the term's lock (its history row) that another session holds
/// exclusively, as a takeover about to end the term does: the lock wait timeout rolls back the
/// caller's transaction, with the write made in it.
#[tokio::test]
async fn assert_leader_failing_on_a_lock_wait_rolls_back_the_callers_transaction() {
    let db = TestDb::migrated("errors_halfway_assert").await;
    let mut caller = connect(&db.url).await;
    exec(&mut caller, "CREATE TABLE ledger (id INT PRIMARY KEY)").await;
    campaign(&mut caller, "svc", "a", LONG).await;
    let mut holder = connect(&db.url).await;
    exec(&mut caller, "SET SESSION innodb_lock_wait_timeout = 1").await;
    exec(&mut holder, "START TRANSACTION").await;
    exec(&mut holder, "SELECT * FROM leader_election_history FOR UPDATE").await;
    exec(&mut caller, "START TRANSACTION").await;
    exec(&mut caller, "INSERT INTO ledger VALUES (1)").await;
    let e = assert_leader(&mut caller, "svc", "a", 1).await.expect_err("the term is locked");
    assert_eq!(e.code, 1205, "{e:?}");
    assert!(!in_transaction(&mut caller).await, "the caller's transaction was rolled back");
    exec(&mut holder, "ROLLBACK").await;
    exec(&mut caller, "COMMIT").await;
    let written: Option<i64> = holder.query_first("SELECT COUNT(*) FROM ledger").await.unwrap();
    assert_eq!(written, Some(0));
    assert_no_locks_held(&mut holder, "after assert_leader's lock wait").await;
    db.drop_db().await;
}

/// The expiry event's procedure (run here directly) with the expired term's row locked by
/// another transaction (as a takeover about to end it, or a fence, holds it): it does not wait
/// and fails nothing; it leaves that seat as it was, with no lock and no transaction left
/// behind, and ends the term at its next run once the row is free.
#[tokio::test]
async fn the_expiry_sweep_skips_a_held_term_and_leaves_nothing_behind() {
    let db = TestDb::migrated("errors_halfway_sweep").await;
    let mut caller = connect(&db.url).await;
    campaign(&mut caller, "svc", "a", 100).await;
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    let mut holder = connect(&db.url).await;
    let before = snapshot(&mut holder).await;
    exec(&mut holder, "START TRANSACTION").await;
    exec(&mut holder, LOCK_TERM_1).await;
    let started = std::time::Instant::now();
    caller.query_drop("CALL leader_election_expire_stale()").await.map_err(refusal).expect("the sweep skips the held term");
    assert!(started.elapsed() < std::time::Duration::from_secs(1), "not waited for: {:?}", started.elapsed());
    assert!(!in_transaction(&mut caller).await);
    exec(&mut holder, "ROLLBACK").await;
    assert_eq!(snapshot(&mut holder).await, before, "the held seat is as it was");
    assert_no_locks_held(&mut holder, "after the sweep").await;
    caller.query_drop("CALL leader_election_expire_stale()").await.map_err(refusal).expect("the sweep");
    let h = history(&mut holder, "svc").await;
    assert_eq!(h[0].ended_how.as_deref(), Some("expired"), "swept once free: {h:?}");
    db.drop_db().await;
}

/// A seat removed while a call locks it (a campaign_seats that fails after creating seats
/// deletes the vacant ones it created; here a DELETE committed while the call waits for the
/// row): campaign, force_leader and handover refuse with 1213 (transient: the caller tries
/// again), leave no transaction open, and create no term. Before, campaign answered
/// `is_leader = 1` at term 1, and force_leader a forced term, for a seat that did not exist
/// (seen on a multi-primary Group Replication group, where members create a new seat at once).
#[tokio::test]
async fn a_seat_removed_while_a_call_locks_it_is_never_answered_as_taken() {
    let db = TestDb::migrated("errors_seat_removed").await;
    let mut caller = connect(&db.url).await;
    let mut remover = connect(&db.url).await;
    for call in ["CALL campaign('gone', 'a', 10000)", "CALL force_leader('gone', 'a', 10000)", "CALL handover('gone', 'b')"] {
        exec(&mut remover, "INSERT INTO leader_election (service_id, term) VALUES ('gone', 0)").await;
        exec(&mut remover, "START TRANSACTION").await;
        exec(&mut remover, "DELETE FROM leader_election WHERE service_id = 'gone'").await;
        // The DELETE commits while the call waits for the row it saw (at most 1 s).
        let commit = tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            exec(&mut remover, "COMMIT").await;
            remover
        });
        let answer: Result<Vec<mysql_async::Row>, _> = caller.query(call).await;
        remover = commit.await.unwrap();
        let e = refusal(answer.expect_err(&format!("{call}: the seat was removed meanwhile")));
        assert_eq!((e.code, e.state.as_str()), (1213, "40001"), "{call}: {e:?}");
        assert!(e.message.contains("the seat was removed meanwhile"), "{call}: {e:?}");
        assert!(!in_transaction(&mut caller).await, "{call}: no transaction left open");
        assert!(seat(&mut remover, "gone").await.is_none(), "{call}: no seat");
        assert!(history(&mut remover, "gone").await.is_empty(), "{call}: no term");
        assert_no_locks_held(&mut remover, call).await;
    }
    db.drop_db().await;
}
