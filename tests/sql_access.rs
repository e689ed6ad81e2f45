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
use mysql_async::prelude::Queryable;
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

    // Revoked (and flushed onto the seats, as `grant` does: V8): the next renew (through the
    // hint) is refused and changes nothing.
    exec(&mut admin, &format!("UPDATE leader_election_access SET service_pattern = 'ledger' WHERE account = '{limited}'")).await;
    exec(&mut admin, "CALL leader_election_flush_access()").await;
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

/// The seat's copy of access (migration V8) and the table it copies.
async fn copy_of(admin: &mut Conn, service: &str) -> Option<Vec<u8>> {
    admin.exec_first::<Option<Vec<u8>>, _, _>("SELECT access_denied FROM leader_election WHERE service_id = ?", (service,))
        .await.unwrap().expect("the seat exists")
}

/// A change of `leader_election_access` by hand takes effect on existing seats when it is flushed
/// (V8: the seats keep a copy, as the server's own grant tables take effect at FLUSH
/// PRIVILEGES); a seat created after the change has it at once; the flush reports what it
/// rewrote.
#[tokio::test]
async fn a_change_by_hand_takes_effect_at_the_flush() {
    let db = TestDb::migrated("access_flush").await;
    let mut admin = connect(&db.url).await;
    let (limited, mut app) = account(&mut admin, &db, "flush").await;
    exec(&mut admin, &format!("INSERT INTO leader_election_access (account, service_pattern) VALUES ('{limited}', 'billing')")).await;
    let won = call_text(&mut app, &format!("CALL campaign('billing', 'a', {LONG})")).await.unwrap();
    assert_eq!(won.flag("is_leader"), 1);
    campaign(&mut admin, "ledger", "z", LONG).await;
    let wrapped = [&[0u8][..], limited.as_bytes(), &[0u8][..]].concat();
    assert_eq!(copy_of(&mut admin, "billing").await, Some(Vec::new()), "nobody refused on billing");
    assert_eq!(copy_of(&mut admin, "ledger").await, Some(wrapped.clone()), "the limited account refused on ledger");

    // Moved to ledger by hand, not flushed: the seats keep the copy they had.
    exec(&mut admin, &format!("UPDATE leader_election_access SET service_pattern = 'ledger' WHERE account = '{limited}'")).await;
    let renewed = call_text(&mut app, &format!("CALL campaign('billing', 'a', {LONG})")).await.unwrap();
    assert_eq!(renewed.flag("is_leader"), 1, "not flushed yet: the old copy");
    let e = call_text(&mut app, &format!("CALL campaign('ledger', 'a', {LONG})")).await.unwrap_err();
    assert_denied(&e, &limited, "ledger", "not flushed yet: the old copy");
    // A seat created now copies the table as it is.
    let e = call_text(&mut app, &format!("CALL campaign('billing-2', 'a', {LONG})")).await.unwrap_err();
    assert_denied(&e, &limited, "billing-2", "a new seat: the table as it is");
    campaign(&mut admin, "billing-3", "z", LONG).await;
    assert_eq!(copy_of(&mut admin, "billing-3").await, Some(wrapped.clone()), "created after the change");

    // Flushed: every seat follows the table.
    let flushed = call_text(&mut admin, "CALL leader_election_flush_access()").await.unwrap();
    assert_eq!((flushed.flag("seats"), flushed.flag("changed")), (3, 2), "{flushed:?}");
    let before = snapshot(&mut admin).await;
    let e = call_text(&mut app, &format!("CALL campaign('billing', 'a', {LONG})")).await.unwrap_err();
    assert_denied(&e, &limited, "billing", "flushed: the renew is refused");
    assert_eq!(snapshot(&mut admin).await, before, "the refused renew wrote nothing");
    let seen = call_text(&mut app, &format!("CALL campaign('ledger', 'a', {LONG})")).await.unwrap();
    assert_eq!((seen.flag("is_leader"), seen.text("leader_id").as_deref()), (0, Some("z")), "flushed: ledger allowed");
    let who: (Option<String>, u64) = admin.query_first("SELECT flushed_by, flushes FROM leader_election_access_flush")
        .await.unwrap().unwrap();
    assert!(who.0.is_some(), "who flushed last: {who:?}");
    assert!(who.1 >= 2, "the migration's flush and this one: {who:?}");
    exec(&mut admin, &format!("DROP USER '{limited}'@'%'")).await;
    db.drop_db().await;
}

/// The copy holds at most 1024 bytes: with more limited accounts refused on a service than fit,
/// the seat keeps no copy (NULL) and every call reads the table, so the limits still hold.
/// Account names are compared exactly, as the server compares user names.
#[tokio::test]
async fn a_seat_without_a_copy_still_checks_every_call_and_names_compare_exactly() {
    let db = TestDb::migrated("access_overflow").await;
    let mut admin = connect(&db.url).await;
    let (limited, mut app) = account(&mut admin, &db, "over").await;
    let (free, mut other) = account(&mut admin, &db, "exact").await;
    campaign(&mut admin, "payroll", "z", LONG).await;
    // 40 accounts of 30 bytes (no server account needed), none allowed on payroll: 1,280 bytes.
    let many: Vec<String> = (0..40).map(|i| format!("('acct_{i:024}', 'nothing')")).collect();
    exec(&mut admin, &format!("INSERT INTO leader_election_access (account, service_pattern) VALUES {}", many.join(", "))).await;
    exec(&mut admin, &format!("INSERT INTO leader_election_access (account, service_pattern) VALUES ('{limited}', 'billing'), \
                               ('{}', 'billing')", free.to_uppercase())).await;
    exec(&mut admin, "CALL leader_election_flush_access()").await;
    assert_eq!(copy_of(&mut admin, "payroll").await, None, "too long for a copy");

    let before = snapshot(&mut admin).await;
    for (what, sql) in calls("payroll") {
        let e = run(&mut app, what, &sql).await.expect_err(&format!("{what} on payroll"));
        assert_denied(&e, &limited, "payroll", &format!("{what}, from the table"));
        exec(&mut app, "ROLLBACK").await;
    }
    assert_eq!(snapshot(&mut admin).await, before, "the denied calls changed nothing");
    // A row for the upper-cased name is another account's: this one is not limited by it,
    // neither where the table decides (a new seat whose copy would be too long) nor where the
    // seat's copy does (once the 40 accounts are gone).
    for (what, sql) in calls("other") {
        run(&mut other, what, &sql).await.unwrap_or_else(|e| panic!("{free}: {what}: {e:?}"));
        exec(&mut other, "ROLLBACK").await;
    }
    assert_eq!(copy_of(&mut admin, "other").await, None, "too long for a copy");
    exec(&mut admin, "DELETE FROM leader_election_access WHERE account LIKE 'acct%'").await;
    exec(&mut admin, "CALL leader_election_flush_access()").await;
    for (what, sql) in calls("other-2") {
        run(&mut other, what, &sql).await.unwrap_or_else(|e| panic!("{free}: {what}, from the copy: {e:?}"));
        exec(&mut other, "ROLLBACK").await;
    }
    let copy = copy_of(&mut admin, "other-2").await.expect("a copy");
    assert!(copy.windows(free.len()).any(|w| w == free.to_uppercase().as_bytes()), "the upper-cased name is listed");
    exec(&mut admin, &format!("DROP USER '{limited}'@'%'")).await;
    exec(&mut admin, &format!("DROP USER '{free}'@'%'")).await;
    db.drop_db().await;
}

/// A flush and the creation of new seats at the same time miss nothing (V8, 4 at the top): while
/// one session creates 150 services, another moves the limited account's pattern back and forth
/// and flushes after each move. At the end every seat's copy is the one the final table gives.
#[tokio::test]
async fn flushes_racing_new_seats_leave_every_copy_right() {
    let db = TestDb::migrated("access_race").await;
    let mut admin = connect(&db.url).await;
    let (limited, _app) = account(&mut admin, &db, "race").await;
    exec(&mut admin, &format!("INSERT INTO leader_election_access (account, service_pattern) VALUES ('{limited}', 'a%')")).await;
    let url = db.url.clone();
    let creator = tokio::spawn(async move {
        let mut c = connect(&url).await;
        for i in 0..150 {
            let service = if i % 2 == 0 { format!("a-{i}") } else { format!("b-{i}") };
            loop {
                // A deadlock with a flush (1213) or a lock wait (1205) is transient: try again.
                match call_text(&mut c, &format!("CALL campaign('{service}', 'n', {LONG})")).await {
                    Ok(_) => break,
                    Err(e) if e.code == 1213 || e.code == 1205 => continue,
                    Err(e) => panic!("{service}: {e:?}"),
                }
            }
        }
    });
    let mut flusher = connect(&db.url).await;
    let mut pattern = "a%";
    while !creator.is_finished() {
        pattern = if pattern == "a%" { "b%" } else { "a%" };
        exec(&mut flusher, &format!("UPDATE leader_election_access SET service_pattern = '{pattern}' WHERE account = '{limited}'")).await;
        exec(&mut flusher, "CALL leader_election_flush_access()").await;
    }
    creator.await.unwrap();
    let wrapped = [&[0u8][..], limited.as_bytes(), &[0u8][..]].concat();
    let seats: Vec<(Vec<u8>, Option<Vec<u8>>)> = admin.query("SELECT service_id, access_denied FROM leader_election").await.unwrap();
    assert_eq!(seats.len(), 150);
    for (service, copy) in seats {
        let allowed = service.starts_with(&pattern.as_bytes()[..1]);
        let want = if allowed { Vec::new() } else { wrapped.clone() };
        assert_eq!(copy, Some(want), "{}: pattern {pattern}", String::from_utf8_lossy(&service));
    }
    exec(&mut admin, &format!("DROP USER '{limited}'@'%'")).await;
    db.drop_db().await;
}
