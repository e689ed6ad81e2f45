//! Per-service access (contract "Per-service access", migration V6) at the SQL level, against
//! the real server with real accounts: an account limited to LIKE patterns may call every
//! procedure on a matching service; on any other service each procedure raises SQLSTATE 45002 'mysqlleader: access
//! denied' naming the account and the service, before it reads or writes anything, and changes
//! nothing. An account without a limit works as before.

use crate::{common, sql_support, access};
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
    exec(&mut admin, "CALL leader_election_flush_access()").await;
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
    exec(&mut admin, "CALL leader_election_flush_access()").await;
    let won = call_text(&mut app, &format!("CALL campaign('billing', 'a', {LONG})")).await.unwrap();
    assert_eq!((won.flag("is_leader"), won.term()), (1, 1));
    let renewed = call_text(&mut app, &format!("CALL campaign('billing', 'a', {LONG})")).await.unwrap();
    assert_eq!((renewed.flag("is_leader"), renewed.term()), (1, 1), "the renew through the hint");

    // Revoked (and flushed, as `grant` does: V14): the next renew (through the hint) is refused
    // and changes nothing.
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

/// The account's row of `leader_election_account` (migration V14): its patterns, decoded, and
/// the row's version; None without a row.
async fn limit_of(admin: &mut Conn, account: &str) -> Option<(Vec<String>, u64)> {
    let row: Option<(String, u64)> = admin
        .exec_first("SELECT patterns, version FROM leader_election_account WHERE account = CAST(? AS BINARY)", (account,))
        .await
        .unwrap();
    row.map(|(patterns, version)| {
        let hex: Vec<String> = serde_json::from_str(&patterns).expect("a JSON array");
        let patterns = hex.iter().map(|h| {
            let bytes: Vec<u8> = (0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap()).collect();
            String::from_utf8(bytes).unwrap()
        });
        (patterns.collect(), version)
    })
}

/// A change of `leader_election_access` by hand takes effect when it is flushed (as the server's
/// own grant tables take effect at FLUSH PRIVILEGES): each call reads the account's row of
/// `leader_election_account`, which the flush writes; the flush reports what it rewrote, and
/// rewrites a row only when it changes.
#[tokio::test]
async fn a_change_by_hand_takes_effect_at_the_flush() {
    let db = TestDb::migrated("access_flush").await;
    let mut admin = connect(&db.url).await;
    let (limited, mut app) = account(&mut admin, &db, "flush").await;
    exec(&mut admin, &format!("INSERT INTO leader_election_access (account, service_pattern) VALUES ('{limited}', 'billing')")).await;
    let e = call_text(&mut app, &format!("CALL campaign('ledger', 'a', {LONG})")).await;
    assert!(e.is_ok(), "not flushed yet: not limited: {e:?}");
    let flushed = call_text(&mut admin, "CALL leader_election_flush_access()").await.unwrap();
    assert_eq!((flushed.flag("accounts"), flushed.flag("changed")), (1, 1), "{flushed:?}");
    assert_eq!(limit_of(&mut admin, &limited).await, Some((vec!["billing".to_string()], 1)));
    let won = call_text(&mut app, &format!("CALL campaign('billing', 'a', {LONG})")).await.unwrap();
    assert_eq!(won.flag("is_leader"), 1);
    let e = call_text(&mut app, &format!("CALL campaign('ledger', 'a', {LONG})")).await.unwrap_err();
    assert_denied(&e, &limited, "ledger", "flushed");

    // Moved to ledger by hand, not flushed: the limit stays as it was.
    exec(&mut admin, &format!("UPDATE leader_election_access SET service_pattern = 'ledger' WHERE account = '{limited}'")).await;
    let renewed = call_text(&mut app, &format!("CALL campaign('billing', 'a', {LONG})")).await.unwrap();
    assert_eq!(renewed.flag("is_leader"), 1, "not flushed yet: the old limit");
    let e = call_text(&mut app, &format!("CALL campaign('ledger', 'a', {LONG})")).await.unwrap_err();
    assert_denied(&e, &limited, "ledger", "not flushed yet: the old limit");

    // Flushed: the calls follow the table; a flush that changes nothing rewrites nothing.
    let flushed = call_text(&mut admin, "CALL leader_election_flush_access()").await.unwrap();
    assert_eq!((flushed.flag("accounts"), flushed.flag("changed")), (1, 1), "{flushed:?}");
    let again = call_text(&mut admin, "CALL leader_election_flush_access()").await.unwrap();
    assert_eq!((again.flag("accounts"), again.flag("changed")), (1, 0), "{again:?}");
    assert_eq!(limit_of(&mut admin, &limited).await, Some((vec!["ledger".to_string()], 2)));
    let before = snapshot(&mut admin).await;
    let e = call_text(&mut app, &format!("CALL campaign('billing', 'a', {LONG})")).await.unwrap_err();
    assert_denied(&e, &limited, "billing", "flushed: the renew is refused");
    assert_eq!(snapshot(&mut admin).await, before, "the refused renew wrote nothing");
    let seen = call_text(&mut app, &format!("CALL campaign('ledger', 'a', {LONG})")).await.unwrap();
    assert_eq!(seen.flag("is_leader"), 1, "flushed: ledger allowed");

    // Every row gone: the account is no longer limited.
    exec(&mut admin, &format!("DELETE FROM leader_election_access WHERE account = '{limited}'")).await;
    exec(&mut admin, "CALL leader_election_flush_access()").await;
    assert_eq!(limit_of(&mut admin, &limited).await, None);
    call_text(&mut app, &format!("CALL campaign('billing', 'a', {LONG})")).await.expect("not limited");
    exec(&mut admin, &format!("DROP USER '{limited}'@'%'")).await;
    db.drop_db().await;
}

/// Many limited accounts (there was a limit of 1,024 bytes on the seats' copies, V8) and names
/// compared exactly, as the server compares user names: a row for the upper-cased name limits
/// another account, not this one.
#[tokio::test]
async fn many_limited_accounts_and_names_compare_exactly() {
    let db = TestDb::migrated("access_overflow").await;
    let mut admin = connect(&db.url).await;
    let (limited, mut app) = account(&mut admin, &db, "over").await;
    let (free, mut other) = account(&mut admin, &db, "exact").await;
    campaign(&mut admin, "payroll", "z", LONG).await;
    // 40 accounts of 30 bytes (no server account needed), none allowed on payroll.
    let many: Vec<String> = (0..40).map(|i| format!("('acct_{i:024}', 'nothing')")).collect();
    exec(&mut admin, &format!("INSERT INTO leader_election_access (account, service_pattern) VALUES {}", many.join(", "))).await;
    exec(&mut admin, &format!("INSERT INTO leader_election_access (account, service_pattern) VALUES ('{limited}', 'billing'), \
                               ('{}', 'billing')", free.to_uppercase())).await;
    let flushed = call_text(&mut admin, "CALL leader_election_flush_access()").await.unwrap();
    assert_eq!((flushed.flag("accounts"), flushed.flag("changed")), (42, 42), "{flushed:?}");

    let before = snapshot(&mut admin).await;
    for (what, sql) in calls("payroll") {
        let e = run(&mut app, what, &sql).await.expect_err(&format!("{what} on payroll"));
        assert_denied(&e, &limited, "payroll", what);
        exec(&mut app, "ROLLBACK").await;
    }
    assert_eq!(snapshot(&mut admin).await, before, "the denied calls changed nothing");
    for (what, sql) in calls("other") {
        run(&mut other, what, &sql).await.unwrap_or_else(|e| panic!("{free}: {what}: {e:?}"));
        exec(&mut other, "ROLLBACK").await;
    }
    exec(&mut admin, &format!("DROP USER '{limited}'@'%'")).await;
    exec(&mut admin, &format!("DROP USER '{free}'@'%'")).await;
    db.drop_db().await;
}

/// Grants never wait on a tenant: while one limited tenant holds a fenced transaction open on its
/// own seat (at REPEATABLE READ, and at SERIALIZABLE, where its read of its own limit
/// share-locks that limit's row), a grant of another account's limit and a flush of every
/// account each complete at once (before V14 the flush rewrote every seat and waited 10 s on the
/// fenced one, then undid the grant). Concurrent grants of one account end in the last one's
/// limit, with the table and the account's row agreeing.
#[tokio::test]
async fn grants_never_wait_on_a_tenant_and_the_last_grant_wins() {
    use mysqlleader::procedures::{self, Account, Role};
    let db = TestDb::migrated("access_grants").await;
    let mut admin = connect(&db.url).await;
    let tag = std::process::id();
    let (ua, ub) = (format!("ga_{tag}"), format!("gb_{tag}"));
    let mut conns = Vec::new();
    for u in [&ua, &ub] {
        exec(&mut admin, &format!("DROP USER IF EXISTS '{u}'@'%'")).await;
        exec(&mut admin, &format!("CREATE USER '{u}'@'%' IDENTIFIED BY 'pw'")).await;
        let acct = Account::parse(&format!("'{u}'@'%'")).unwrap();
        procedures::grant(&db.pool, &acct, Role::App, &["billing%".to_string()]).await.expect("grant");
        let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(u.as_str())).pass(Some("pw"));
        conns.push(Conn::new(opts).await.unwrap());
    }
    let mut a = conns.remove(0);
    let term = call_text(&mut a, &format!("CALL campaign('billing_a', 'a1', {LONG})")).await.unwrap().term();
    let b = Account::parse(&format!("'{ub}'@'%'")).unwrap();
    for level in ["REPEATABLE READ", "SERIALIZABLE"] {
        exec(&mut a, &format!("SET SESSION TRANSACTION ISOLATION LEVEL {level}; START TRANSACTION")).await;
        call_text(&mut a, &format!("CALL assert_leader('billing_a', 'a1', {term})")).await.expect("its fence");
        let started = std::time::Instant::now();
        let granted = tokio::time::timeout(std::time::Duration::from_secs(3),
                                           procedures::grant(&db.pool, &b, Role::App, &[format!("eu_{level:.3}%")])).await;
        granted.unwrap_or_else(|_| panic!("{level}: the grant of another account waits on the fence")).expect("the grant");
        let flushed = tokio::time::timeout(std::time::Duration::from_secs(3), call_text(&mut admin, "CALL leader_election_flush_access()")).await;
        flushed.unwrap_or_else(|_| panic!("{level}: the flush waits on the fence")).expect("the flush");
        eprintln!("{level}: grant and flush beside a fenced transaction in {:?}", started.elapsed());
        exec(&mut a, "COMMIT").await;
    }

    // Two grants of one account at once, 20 times: the last to commit is in effect, and the
    // table and the account's row say the same.
    let url = db.url.clone();
    let pool = db.pool.clone();
    for round in 0..20 {
        let (p1, p2) = (format!("one_{round}%"), format!("two_{round}%"));
        let (r1, r2) = tokio::join!(procedures::grant(&pool, &b, Role::App, std::slice::from_ref(&p1)),
                                    procedures::grant(&pool, &b, Role::App, std::slice::from_ref(&p2)));
        r1.expect("the first grant");
        r2.expect("the second grant");
        let rows: Vec<String> = admin
            .exec("SELECT CAST(service_pattern AS CHAR) FROM leader_election_access WHERE account = CAST(? AS BINARY)", (ub.as_str(),))
            .await
            .unwrap();
        assert!(rows == vec![p1.clone()] || rows == vec![p2.clone()], "round {round}: one grant's limit, whole: {rows:?}");
        let (compiled, _) = limit_of(&mut admin, &ub).await.expect("a limit");
        assert_eq!(compiled, rows, "round {round}: the row calls read is the table's");
    }
    drop(url);
    drop((a, conns));
    for u in [&ua, &ub] {
        exec(&mut admin, &format!("DROP USER IF EXISTS '{u}'@'%'")).await;
    }
    db.drop_db().await;
}

/// The service ids of a batched call's rows (its column `service_id`; the lease's row of
/// take_seats and renew_lease has none), sorted.
fn listed_ids(rows: &[mysql_async::Row]) -> Vec<String> {
    let mut ids: Vec<String> = rows.iter().filter_map(|r| r.get::<Option<String>, _>("service_id").flatten()).collect();
    ids.sort();
    ids
}

/// MariaDB cuts JSON_ARRAYAGG at the session's group_concat_max_len, with a warning only, and the
/// cut list is valid JSON whose last id is a prefix of a listed one: an account limited to
/// `billing-eu-%` that set the limit to 9 bytes resigned, then took, another tenant's seat
/// `billing` through a list of its own `billing-eu-1` (MariaDB 10.11, 2026-11-30; MySQL never
/// cuts). Every routine that builds lists raises the limit for the call and puts the caller's
/// back (sql/fragments/whole_lists.sql). Under every limit from 4 bytes up: each batched call of
/// a limited account acts on its listed services exactly and whole (every one answered, no seat
/// created or changed under a prefix of one; the other tenant's seat and history as they were),
/// and the session's limit is its own again after every call, a refused one too. An operator's
/// flush under a 4-byte limit compiles every pattern whole.
#[tokio::test]
async fn a_callers_group_concat_max_len_cuts_no_list() {
    let db = TestDb::migrated("access_concat_limit").await;
    let mut admin = connect(&db.url).await;
    let (limited, mut app) = account(&mut admin, &db, "gcl").await;

    // The operator's flush, under the smallest limit: both patterns compiled whole.
    exec(&mut admin, "SET SESSION group_concat_max_len = 4").await;
    exec(&mut admin, &format!("INSERT INTO leader_election_access (account, service_pattern) VALUES \
                               ('{limited}', 'billing-eu-%'), ('{limited}', 'zz-last')")).await;
    exec(&mut admin, "CALL leader_election_flush_access()").await;
    let compiled: Option<(u64, String, String)> = admin
        .exec_first("SELECT JSON_LENGTH(patterns), JSON_UNQUOTE(JSON_EXTRACT(patterns, '$[0]')), \
                            JSON_UNQUOTE(JSON_EXTRACT(patterns, '$[1]')) \
                       FROM leader_election_account WHERE account = ?", (limited.as_str(),))
        .await
        .unwrap();
    let hex = |s: &str| s.bytes().map(|b| format!("{b:02X}")).collect::<String>();
    assert_eq!(compiled, Some((2, hex("billing-eu-%"), hex("zz-last"))), "both patterns compiled whole");
    let limit: u64 = admin.query_first("SELECT @@session.group_concat_max_len").await.unwrap().unwrap();
    assert_eq!(limit, 4, "the operator's session keeps its own limit");
    exec(&mut admin, "SET SESSION group_concat_max_len = DEFAULT").await;

    // Another tenant's seat, led by a node of the same name as the limited account's.
    campaign(&mut admin, "billing", "web-1", LONG).await;
    let (other_seat, other_history) = (seat(&mut admin, "billing").await, history(&mut admin, "billing").await);

    let mut listed: Vec<String> = Vec::new();
    for limit in 4..=30u64 {
        exec(&mut app, &format!("SET SESSION group_concat_max_len = {limit}")).await;
        let ids = [format!("billing-eu-{limit:02}-a"), format!("billing-eu-{limit:02}-b")];
        listed.extend(ids.iter().cloned());
        let list = format!("[\"{}\", \"{}\"]", ids[0], ids[1]);
        let calls = [
            format!("CALL campaign_seats('web-1', {LONG}, '{list}')"),
            format!("CALL renew_seats('web-1', {LONG}, '{list}')"),
            format!("CALL resign_seats('web-1', '{list}')"),
            "LEASE".to_string(),
            format!("CALL handover_seats('{list}', 'web-2')"),
        ];
        for sql in calls {
            let sql = if sql == "LEASE" {
                let lease: (u64, i64) = app.query_first(format!("CALL grant_lease('web-1', {LONG})")).await.unwrap().unwrap();
                let taken: Vec<mysql_async::Row> = app
                    .query(format!("CALL take_seats({}, 'web-1', {LONG}, '{list}')", lease.0)).await
                    .unwrap_or_else(|e| panic!("take_seats under a limit of {limit}: {e}"));
                assert_eq!(listed_ids(&taken), ids, "take_seats under a limit of {limit}: every listed seat, no other");
                let terms: Vec<u64> = ids.iter().map(|id| {
                    taken.iter().find(|r| r.get::<Option<String>, _>("service_id").flatten().as_deref() == Some(id.as_str()))
                        .and_then(|r| r.get::<u64, _>("term")).unwrap()
                }).collect();
                format!("CALL renew_lease({}, 'web-1', {LONG}, '[[\"{}\", {}], [\"{}\", {}]]')",
                        lease.0, ids[0], terms[0], ids[1], terms[1])
            } else {
                sql
            };
            let rows: Vec<mysql_async::Row> = app.query(&sql).await
                .unwrap_or_else(|e| panic!("`{sql}` under a limit of {limit}: {e}"));
            assert_eq!(listed_ids(&rows), ids, "`{sql}` under a limit of {limit}: every listed seat answered, no other");
            let own: u64 = app.query_first("SELECT @@session.group_concat_max_len").await.unwrap().unwrap();
            assert_eq!(own, limit, "`{sql}`: the session's limit is its own again");
        }
        // A refused call (a list that is not one of strings) puts the limit back too.
        let e = app.query_drop(format!("CALL campaign_seats('web-1', {LONG}, '[\"{}\", 1]')", ids[0])).await
            .expect_err("a list with a number is refused");
        assert!(e.to_string().contains("service_ids"), "{e}");
        let own: u64 = app.query_first("SELECT @@session.group_concat_max_len").await.unwrap().unwrap();
        assert_eq!(own, limit, "after a refused call, the session's limit is its own again");
    }

    assert_eq!(seat(&mut admin, "billing").await, other_seat, "the other tenant's seat is as it was");
    assert_eq!(history(&mut admin, "billing").await, other_history, "and its history");
    let mut seats: Vec<String> = admin
        .query("SELECT CAST(service_id AS CHAR CHARACTER SET utf8mb4) FROM leader_election").await.unwrap();
    seats.sort();
    listed.push("billing".to_string());
    listed.sort();
    assert_eq!(seats, listed, "no seat under a prefix of a listed id");

    drop(app);
    exec(&mut admin, &format!("DROP USER IF EXISTS '{limited}'@'%'")).await;
    db.drop_db().await;
}
