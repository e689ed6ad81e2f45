//! The trust boundary, from a hostile tenant's seat (issue "The trust boundary"), against the
//! real server: each test reproduces an attack that once worked and checks it now does no harm.
//! Accounts: `tenant_a` limited to `billing%` (it leads `billing_dos`), `tenant_b` limited to
//! `billing_eu`, an observer; plain SQL, the session settings an attacker controls.

use crate::{common, sql_support};
use std::time::Duration;

use common::TestDb;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};
use mysqlleader::procedures::{self, Account, Role};
use sql_support::*;

/// Creates `user`@'%' (dropped first) with `role` limited to `services` (as `grant --apply`),
/// and connects as it. `user` may hold `@` (quoted).
async fn account(admin: &mut Conn, db: &TestDb, user: &str, role: Role, services: &[&str]) -> Conn {
    exec(admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    exec(admin, &format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")).await;
    let services: Vec<String> = services.iter().map(|s| s.to_string()).collect();
    procedures::grant(&db.pool, &Account::parse(&format!("'{user}'@'%'")).unwrap(), role, &services).await.expect("grant");
    let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(user)).pass(Some("pw"));
    Conn::new(opts).await.expect("the account connects")
}

async fn drop_users(admin: &mut Conn, users: &[&str]) {
    for u in users {
        exec(admin, &format!("DROP USER IF EXISTS '{u}'@'%'")).await;
    }
}

/// `tenant_a` renews its seat and another node's force takes it over, each within a second:
/// nothing holds a lock on the seat.
async fn assert_seat_free(admin: &mut Conn, a: &mut Conn, service: &str, what: &str) {
    let renew = tokio::time::timeout(Duration::from_millis(2500), call_text(a, &format!("CALL campaign('{service}', 'a1', 60000)")))
        .await
        .unwrap_or_else(|_| panic!("{what}: the leader's renew hangs"));
    let r = renew.unwrap_or_else(|e| panic!("{what}: the leader's renew failed: {e:?}"));
    assert_eq!(r.flag("is_leader"), 1, "{what}: {r:?}");
    let forced = call_text(admin, &format!("CALL force_leader('{service}', 'a1', 60000)")).await;
    forced.unwrap_or_else(|e| panic!("{what}: a takeover failed: {e:?}"));
    // Back to a1 by campaign next time: force already installed a1 at a new term.
}

/// 1. A refused call keeps no lock, and 2. a successful read keeps none either, whatever the
/// session: SERIALIZABLE with autocommit off (plain reads take share locks there), an explicit
/// transaction, XA. Before, `current_leader` refused with 45002 but kept the seat share-locked,
/// and every renew of tenant_a failed with 1205 until tenant_b's session ended.
#[tokio::test]
async fn no_call_leaves_a_lock_on_another_tenants_seat() {
    let db = TestDb::migrated("trust_locks").await;
    let mut admin = connect(&db.url).await;
    let tag = std::process::id();
    let (ua, ub) = (format!("ta_{tag}"), format!("tb_{tag}"));
    let mut a = account(&mut admin, &db, &ua, Role::App, &["billing%"]).await;
    let mut b = account(&mut admin, &db, &ub, Role::Operator, &["billing_eu"]).await;
    assert_eq!(call_text(&mut a, "CALL campaign('billing_dos', 'a1', 60000)").await.unwrap().flag("is_leader"), 1);
    exec(&mut a, "SET SESSION innodb_lock_wait_timeout = 1").await;
    exec(&mut admin, "SET SESSION innodb_lock_wait_timeout = 1").await;

    let calls = [
        "CALL current_leader('billing_dos')",
        "CALL am_i_leader('billing_dos', 'b1')",
        "CALL campaign('billing_dos', 'b1', 60000)",
        "CALL resign('billing_dos', 'a1')",
        "CALL force_leader('billing_dos', 'b1', 60000)",
        "CALL reelect('billing_dos')",
        "CALL leader_election_status('billing_dos')",
        "CALL leader_election_recent_terms('billing_dos', 5)",
        "CALL handover('billing_dos', 'b1')",
        "CALL resign_to('billing_dos', 'a1', 'b1')",
        "CALL leader_election_wakeup_name('billing_dos')",
        "CALL leader_election_node_wakeup_name('billing_dos', 'a1')",
    ];
    for setup in ["SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE; SET autocommit = 0",
                  "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE; SET autocommit = 1; START TRANSACTION",
                  "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE; SET autocommit = 1; XA START 'tenant-b'"] {
        for sql in calls {
            exec(&mut b, setup).await;
            let e = call_text(&mut b, sql).await.expect_err("outside tenant_b's limit, or inside a transaction");
            assert!(["45002", "45000"].contains(&e.state.as_str()), "{setup} / {sql}: {e:?}");
            // tenant_b's session stays as it set it up (XA still active): the seat must be free.
            assert_seat_free(&mut admin, &mut a, "billing_dos", &format!("{setup} / {sql}")).await;
            if setup.contains("XA START") {
                exec(&mut b, "XA END 'tenant-b'; XA ROLLBACK 'tenant-b'").await;
            } else {
                exec(&mut b, "ROLLBACK").await;
            }
        }
    }

    // renew_seats, campaign_seats, resign_seats and handover_seats refuse nothing they may not do (they leave another
    // tenant's seat out of the answer), and keep no lock on it either, in any of these sessions (inside XA it is refused
    // before it reads anything).
    for setup in ["SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE; SET autocommit = 0",
                  "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE; SET autocommit = 1; START TRANSACTION",
                  "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE; SET autocommit = 1; XA START 'tenant-b'"] {
      for sql in ["CALL renew_seats('a1', 60000, '[\"billing_dos\", \"billing_eu\"]')",
                  "CALL campaign_seats('b1', 60000, '[\"billing_dos\", \"billing_eu\"]')",
                  "CALL resign_seats('a1', '[\"billing_dos\", \"billing_eu\"]')",
                  "CALL handover_seats('[\"billing_dos\", \"billing_eu\"]', 'b1')"] {
        exec(&mut b, setup).await;
        let answer = b.query_iter(sql).await;
        if setup.contains("XA START") {
            let e = answer.map(drop).expect_err("inside XA");
            assert!(e.to_string().contains("45000") || e.to_string().contains("XA"), "{e}");
            exec(&mut b, "XA END 'tenant-b'; XA ROLLBACK 'tenant-b'").await;
        } else {
            let rows: Vec<mysql_async::Row> = answer.expect(setup).collect_and_drop().await.expect(setup);
            // campaign_seats creates and takes tenant_b's own new seat billing_eu (b1 then leads it):
            // only that seat may be in any answer.
            let seen: Vec<String> = rows.iter().map(|r| r.get::<String, _>("service_id").unwrap()).collect();
            assert!(seen.iter().all(|s| s == "billing_eu"), "{setup}: tenant_b renews nothing and sees nothing of billing_dos: {seen:?}");
            assert!(!in_transaction(&mut b).await, "{setup}: the call ended the transaction it opened");
        }
        assert_seat_free(&mut admin, &mut a, "billing_dos", &format!("{setup} / {sql}")).await;
        exec(&mut b, "ROLLBACK").await;
      }
    }

    // A successful read under SERIALIZABLE with autocommit off leaves no lock either.
    exec(&mut b, "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE; SET autocommit = 0").await;
    call_text(&mut b, "CALL campaign('billing_eu', 'b1', 60000)").await.expect("its own service");
    exec(&mut b, "SET autocommit = 0").await;
    let r = call_text(&mut b, "CALL current_leader('billing_eu')").await.expect("a read of its own service");
    assert_eq!(r.text("leader_id").as_deref(), Some("b1"));
    assert!(!in_transaction(&mut b).await, "the read ended the transaction it opened");
    let renew = tokio::time::timeout(Duration::from_millis(2500), call_text(&mut admin, "CALL force_leader('billing_eu', 'x', 60000)")).await;
    renew.expect("no wait").expect("a takeover right after tenant_b's read");

    drop((a, b));
    drop_users(&mut admin, &[&ua, &ub]).await;
    db.drop_db().await;
}

/// 4. XA drops the fence (XA PREPARE releases share locks), and a refused fence inside XA
/// could not roll back: assert_leader is refused inside an XA transaction before it reads
/// anything, and the seat stays free.
#[tokio::test]
async fn assert_leader_refuses_an_xa_transaction() {
    let db = TestDb::migrated("trust_xa").await;
    let mut c = connect(&db.url).await;
    let mut other = connect(&db.url).await;
    campaign(&mut c, "svc", "a", 60_000).await;
    exec(&mut c, "XA START 'fenced'").await;
    let e = call_text(&mut c, "CALL assert_leader('svc', 'a', 1)").await.expect_err("refused inside XA");
    assert_eq!(e.state, "45000", "{e:?}");
    assert!(e.message.starts_with("mysqlleader: assert_leader cannot run inside an XA transaction"), "{e:?}");
    exec(&mut other, "SET SESSION innodb_lock_wait_timeout = 1").await;
    call_text(&mut other, "CALL force_leader('svc', 'b', 60000)").await.expect("nothing locked by the refused fence");
    exec(&mut c, "XA END 'fenced'; XA ROLLBACK 'fenced'").await;
    // Outside XA the fence works as before: the old term is refused, the leader's accepted.
    exec(&mut c, "START TRANSACTION").await;
    assert_eq!(call_text(&mut c, "CALL assert_leader('svc', 'a', 1)").await.unwrap_err().state, "45001");
    assert_leader(&mut other, "svc", "b", 2).await.expect("the leader's fence, in a transaction");
    exec(&mut other, "COMMIT").await;
    db.drop_db().await;
}

/// 2. A role that may read cannot lock: no role holds SELECT on a table (SELECT ... FOR UPDATE
/// on the seat stopped every renew); `status` reads through a definer routine that shows a
/// limited account only its own services.
#[tokio::test]
async fn readers_read_through_routines_and_see_only_their_services() {
    let db = TestDb::migrated("trust_readers").await;
    let mut admin = connect(&db.url).await;
    let tag = std::process::id();
    let (uo, ul) = (format!("obs_{tag}"), format!("ops_{tag}"));
    let mut observer = account(&mut admin, &db, &uo, Role::Observer, &[]).await;
    let mut ops = account(&mut admin, &db, &ul, Role::Operator, &["ops%"]).await;
    for s in ["billing", "ops-1", "ops-2"] {
        campaign(&mut admin, s, "n", 60_000).await;
    }
    for conn in [&mut observer, &mut ops] {
        for table in ["leader_election", "leader_election_history", "leader_election_terms", "leader_election_access"] {
            let e = conn.query_drop(format!("SELECT * FROM {table} FOR UPDATE")).await.map_err(refusal).expect_err(table);
            assert_eq!(e.code, 1142, "{table}: {e:?}");
        }
    }
    let all: Vec<String> = observer.query_map("CALL leader_election_status(NULL)", |row: mysql_async::Row| row.get::<String, _>(0).unwrap()).await.unwrap();
    assert_eq!(all, vec!["billing", "ops-1", "ops-2"], "an unlimited observer sees every service");
    let mine: Vec<String> = ops.query_map("CALL leader_election_status(NULL)", |row: mysql_async::Row| row.get::<String, _>(0).unwrap()).await.unwrap();
    assert_eq!(mine, vec!["ops-1", "ops-2"], "a limited operator sees only its services");
    let e = call_text(&mut ops, "CALL leader_election_recent_terms('billing', 5)").await.unwrap_err();
    assert_eq!(e.state, "45002", "{e:?}");
    let terms: Vec<u64> = ops.query_map("CALL leader_election_recent_terms('ops-1', 5)", |row: mysql_async::Row| row.get::<u64, _>(0).unwrap()).await.unwrap();
    assert_eq!(terms, vec![1]);
    let ev = call_text(&mut observer, "CALL leader_election_event_status()").await.expect("an observer reads the event's state");
    assert_eq!(ev.flag("installed"), 1);
    drop((observer, ops));
    drop_users(&mut admin, &[&uo, &ul]).await;
    db.drop_db().await;
}

/// 5. Identity: the account is the part of USER() before its LAST '@': a user named
/// `carol@corp` limited to `carol%` is limited (it was unlimited: the check looked up `carol`).
#[tokio::test]
async fn a_user_name_with_an_at_sign_keeps_its_limit() {
    let db = TestDb::migrated("trust_at").await;
    let mut admin = connect(&db.url).await;
    let user = format!("carol{}@corp", std::process::id());
    let mut carol = account(&mut admin, &db, &user, Role::App, &["carol%"]).await;
    call_text(&mut carol, "CALL campaign('carol-jobs', 'n', 60000)").await.expect("inside the limit");
    let e = call_text(&mut carol, "CALL campaign('payroll', 'n', 60000)").await.expect_err("outside the limit");
    assert_eq!(e.state, "45002", "{e:?}");
    assert!(e.message.contains(&format!("'{user}'")), "names the whole user name: {e:?}");
    drop(carol);
    drop_users(&mut admin, &[&user]).await;
    db.drop_db().await;
}

/// 6. Access rows compare byte for byte: granting `TENANT_B` a limit leaves `tenant_b`'s alone
/// (it deleted it: the column compared case-insensitively). 8. Literal names: a limit to
/// exactly `billing_eu` (`--service-exact`) does not also open `billing-eu` and `billingXeu`.
#[tokio::test]
async fn access_rows_are_exact_and_names_can_be_granted_literally() {
    let db = TestDb::migrated("trust_exact").await;
    let mut admin = connect(&db.url).await;
    let tag = std::process::id();
    let lower = format!("tb_{tag}");
    let upper = lower.to_uppercase();
    let exact = procedures::exact_service_pattern("billing_eu").unwrap();
    assert_eq!(exact, "billing\\_eu");
    let mut b = account(&mut admin, &db, &lower, Role::App, &[exact.as_str()]).await;
    drop(account(&mut admin, &db, &upper, Role::App, &["other%"]).await);
    let rows: Vec<(Vec<u8>, Vec<u8>)> = admin
        .query("SELECT account, service_pattern FROM leader_election_access ORDER BY account, service_pattern")
        .await
        .unwrap();
    assert_eq!(rows, vec![(upper.clone().into_bytes(), b"other%".to_vec()), (lower.clone().into_bytes(), b"billing\\_eu".to_vec())],
               "each account keeps its own rows");
    call_text(&mut b, "CALL campaign('billing_eu', 'n', 60000)").await.expect("the granted name");
    for other in ["billing-eu", "billingXeu", "other-1"] {
        let e = call_text(&mut b, &format!("CALL campaign('{other}', 'n', 60000)")).await.expect_err(other);
        assert_eq!(e.state, "45002", "{other}: {e:?}");
    }
    drop(b);
    drop_users(&mut admin, &[&lower, &upper]).await;
    db.drop_db().await;
}

/// 11. The expiry event acts on every service: an operator limited to `ops%` may not switch it
/// (it could for every tenant); an unlimited operator may.
#[tokio::test]
async fn a_limited_operator_cannot_switch_the_expiry_event() {
    let db = TestDb::migrated("trust_event").await;
    let mut admin = connect(&db.url).await;
    let tag = std::process::id();
    let (limited, free) = (format!("opl_{tag}"), format!("opf_{tag}"));
    let mut l = account(&mut admin, &db, &limited, Role::Operator, &["ops%"]).await;
    let mut f = account(&mut admin, &db, &free, Role::Operator, &[]).await;
    let e = call_text(&mut l, "CALL set_expiry_event(1)").await.expect_err("limited");
    assert_eq!(e.state, "45002", "{e:?}");
    assert!(e.message.starts_with(&format!("mysqlleader: access denied: account '{limited}'")), "{e:?}");
    let off: i64 = admin.query_first("SELECT STATUS = 'ENABLED' FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE()").await.unwrap().unwrap();
    assert_eq!(off, 0, "nothing changed");
    assert_eq!(call_text(&mut f, "CALL set_expiry_event(1)").await.expect("unlimited").flag("event_enabled"), 1);
    assert_eq!(call_text(&mut f, "CALL set_expiry_event(0)").await.expect("unlimited").flag("event_enabled"), 0);
    drop((l, f));
    drop_users(&mut admin, &[&limited, &free]).await;
    db.drop_db().await;
}

/// 11. A retention rule for the history: `leader_election_prune_history(days)` deletes the terms
/// that ended more than that many days ago and nothing else (the current term stays, and the
/// next acquisition still raises the seat's term); an operator limited to some services may not
/// call it, since it acts on every service.
#[tokio::test]
async fn the_history_is_pruned_by_age_and_only_by_an_unlimited_operator() {
    let db = TestDb::migrated("trust_prune").await;
    let mut admin = connect(&db.url).await;
    let tag = std::process::id();
    let (limited, free) = (format!("prl_{tag}"), format!("prf_{tag}"));
    let mut l = account(&mut admin, &db, &limited, Role::Operator, &["ops%"]).await;
    let mut f = account(&mut admin, &db, &free, Role::Operator, &[]).await;
    for node in ["a", "b", "c", "d"] {
        force_leader(&mut admin, "svc", node, 60_000).await;
    }
    // Terms 1 and 2 ended long ago, term 3 yesterday; term 4 is current.
    exec(&mut admin, "UPDATE leader_election_history SET ended_at = UTC_TIMESTAMP(6) - INTERVAL 100 DAY WHERE term <= 2").await;
    exec(&mut admin, "UPDATE leader_election_history SET ended_at = UTC_TIMESTAMP(6) - INTERVAL 1 DAY WHERE term = 3").await;
    let e = call_text(&mut l, "CALL leader_election_prune_history(30)").await.expect_err("limited");
    assert_eq!(e.state, "45002", "{e:?}");
    let e = call_text(&mut f, "CALL leader_election_prune_history(0)").await.expect_err("days from 1");
    e.assert_invalid("days", "0 days");
    let r = call_text(&mut f, "CALL leader_election_prune_history(30)").await.expect("unlimited");
    assert_eq!(r.get::<i64>("pruned"), 2);
    let left: Vec<u64> = history(&mut admin, "svc").await.iter().map(|t| t.term).collect();
    assert_eq!(left, vec![3, 4]);
    assert_eq!(force_leader(&mut admin, "svc", "e", 60_000).await.term(), 5, "terms are never reused");
    drop((l, f));
    drop_users(&mut admin, &[&limited, &free]).await;
    db.drop_db().await;
}

/// The wake-up lock's name carries the schema's secret (V12): a tenant gets the name only for its
/// own services, cannot read the secret, and so cannot squat on another tenant's lock (which
/// would make its followers wait for the lease's end instead of waking at a resign).
#[tokio::test]
async fn the_wakeup_lock_name_is_only_for_accounts_allowed_on_the_service() {
    let db = TestDb::migrated("trust_wakeup").await;
    let mut admin = connect(&db.url).await;
    let tag = std::process::id();
    let (ua, ub) = (format!("wa_{tag}"), format!("wb_{tag}"));
    let mut a = account(&mut admin, &db, &ua, Role::App, &["billing%"]).await;
    let mut b = account(&mut admin, &db, &ub, Role::App, &["payroll%"]).await;
    let name = call_text(&mut a, "CALL leader_election_wakeup_name('billing_eu')").await.expect("its own service");
    let name = name.text("lock_name").expect("a name");
    assert!(name.starts_with("mysqlleader.") && name.len() <= 64, "{name}");
    let again = call_text(&mut a, "CALL leader_election_wakeup_name('billing_eu')").await.unwrap().text("lock_name");
    assert_eq!(again.as_deref(), Some(name.as_str()), "the same name every time");
    let other = call_text(&mut a, "CALL leader_election_wakeup_name('billing_us')").await.unwrap().text("lock_name");
    assert_ne!(other.as_deref(), Some(name.as_str()), "one name per service");
    let refused = call_text(&mut b, "CALL leader_election_wakeup_name('billing_eu')").await.expect_err("another tenant's service");
    assert_eq!(refused.state, "45002", "{refused:?}");
    let secret = call_text(&mut b, "SELECT secret FROM leader_election_secret").await.expect_err("no role reads the secret");
    assert_eq!(secret.code, 1142, "{secret:?}");
    // Not the name of the versions before V12, which anyone could compute. (They never ran on
    // MySQL, which has no SHA1() to compute it with.)
    if is_mariadb(&mut admin).await {
        let old: String = admin
            .query_first("SELECT CONCAT('mysqlleader.', LEFT(SHA1(CONCAT(DATABASE(), '/', 'billing_eu')), 40))")
            .await
            .unwrap()
            .unwrap();
        assert_ne!(old, name);
    }
    drop_users(&mut admin, &[&ua, &ub]).await;
    db.drop_db().await;
}

/// 9. Interrupted procedures: a statement cut short inside a procedure (KILL QUERY,
/// `max_statement_time`) while one of its statements runs is caught by the procedure's handler,
/// which rolls back; but when the cut lands between two statements the procedure stops without
/// its handler, and the caller's COMMIT commits what it wrote so far. Before V13 a takeover
/// closed the old term, raised the seat's term and inserted the new term's history row in
/// three statements, and the report's barrage (SET STATEMENT max_statement_time = 0.5..4 ms
/// FOR CALL campaign, then COMMIT) committed terms with no history row: measured here with the
/// mariadb client, 4 to 14 holes per 2,000 takeovers cut with 0.1 to 1 ms. Now the seat's own
/// UPDATE writes the history (its trigger, sql/triggers/leader_election_record_term.sql), and
/// no cut can separate them. Every writer that begins or ends a term, cut at every point.
#[tokio::test]
async fn an_interrupted_call_takes_a_whole_term_or_none() {
    let db = TestDb::migrated("trust_interrupted").await;
    let mut admin = connect(&db.url).await;
    let mut attacker = connect(&db.url).await;
    let mut killer = connect(&db.url).await;
    let mariadb = is_mariadb(&mut admin).await;
    let services = vec!["cut_take".to_string(), "cut_end".to_string()];
    // 1. Takeovers: each call finds the seat expired (leases of 1 ms, 1.5 ms apart), so each is
    //    a takeover; the cut sweeps 0.1 to 1 ms, where a takeover's writes happen.
    let takes = ["CALL campaign('cut_take', '{n}', 1)", "CALL force_leader('cut_take', '{n}', 1)",
                 "CALL campaign_seats('{n}', 1, '[\"cut_take\"]')"];
    // 2. Ends of terms: a force gives the seat a valid lease, the next call ends it.
    let ends = ["CALL resign('cut_end', '{n}')", "CALL reelect('cut_end')", "CALL handover('cut_end', 'next')",
                "CALL resign_to('cut_end', '{n}', 'next')", "CALL resign_seats('{n}', '[\"cut_end\"]')"];
    let mut cut = 0;
    let rounds = 3000usize;
    for i in 0..rounds {
        let node = format!("n{}", i % 2);
        let timeout = 0.0001 + (i % 90) as f64 * 0.00001;
        let call = if i % 5 == 4 {
            let end = ends[(i / 5) % ends.len()].replace("{n}", &node);
            exec(&mut attacker, &format!("CALL force_leader('cut_end', '{node}', 60000)")).await;
            end
        } else {
            takes[i % takes.len()].replace("{n}", &node)
        };
        match cut_call(mariadb, &mut attacker, &mut killer, &call, timeout).await {
            Ok(true) => cut += 1,
            Ok(false) => {}
            Err(e) => panic!("{call}: {e}"),
        }
        exec(&mut attacker, "COMMIT; DO SLEEP(0.0015)").await;
    }
    assert!(cut > rounds / 20, "only {cut} of {rounds} calls were cut short: the sweep misses the calls' writes");
    assert_history_whole(&mut admin, &services, &format!("after {rounds} calls, {cut} cut short")).await;

    // 3. A session's close (release_lease): the seat vacated and its term ended in one statement,
    //    so a cut commits both or neither. Each round: the seat vacated (by a resign of either
    //    node), taken onto a fresh node lease, then the release cut.
    let services = vec!["cut_rel".to_string()];
    let (mut released_cut, rounds) = (0, 600usize);
    for i in 0..rounds {
        let node = format!("n{}", i % 2);
        exec(&mut attacker, "CALL resign('cut_rel', 'n0'); CALL resign('cut_rel', 'n1')").await;
        let lease: u64 = attacker.query_first(format!("CALL grant_lease('{node}', 60000)")).await.unwrap()
            .map(|(id, _ms): (u64, i64)| id).unwrap();
        exec(&mut attacker, &format!("CALL take_seats({lease}, '{node}', 60000, '[\"cut_rel\"]')")).await;
        let call = format!("CALL release_lease({lease}, '{node}')");
        match cut_call(mariadb, &mut attacker, &mut killer, &call, 0.0001 + (i % 90) as f64 * 0.00001).await {
            Ok(true) => released_cut += 1,
            Ok(false) => {}
            Err(e) => panic!("{call}: {e}"),
        }
        exec(&mut attacker, "COMMIT").await;
        assert_history_whole(&mut admin, &services, &format!("release round {i}")).await;
    }
    assert!(released_cut > rounds / 20, "only {released_cut} of {rounds} releases were cut short");
}

// ---- Tenant isolation by construction (issue "Tenant isolation by construction") ----

/// The session states a caller can set before a call: each makes plain reads lock (SERIALIZABLE
/// with autocommit off or inside a transaction, also as a one-shot level for the next
/// transaction) or keeps what a call reads inside an open transaction (autocommit off).
/// The last: an XA transaction at SERIALIZABLE (every routine refuses it before it reads).
const SESSION_STATES: [&str; 5] = [
    "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE; SET autocommit = 0",
    "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE; SET autocommit = 1; START TRANSACTION",
    "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ; SET autocommit = 0",
    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED; SET autocommit = 0; SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
    "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE; SET autocommit = 1; XA START 'tm-attacker'",
];

/// Ends whatever the attacker's session has open, an XA transaction too (the server refuses a
/// plain ROLLBACK inside one).
async fn end_attackers_transaction(attacker: &mut Conn) {
    let _ = attacker.query_drop("XA END 'tm-attacker'").await;
    let _ = attacker.query_drop("XA ROLLBACK 'tm-attacker'").await;
    exec(attacker, "ROLLBACK").await;
}

/// Every routine the operator role may call (a superset of the app and observer roles': the
/// routines behave the same whoever may call them), aimed at the victim's seat `eu_victim`
/// (led by `v1` at term `{t}`) or listing it beside the attacker's own seat; and the seat hint of
/// campaign forged to point at it. `{l}` is the attacker's own node lease (`lease`): the lease
/// routines list the victim's seat beside the attacker's, onto that lease.
fn attacks(term: u64, lease: u64) -> Vec<String> {
    [
        "CALL campaign('eu_victim', 'a1', 60000)",
        "SET @mysqlleader_seat_service = CAST('eu_victim' AS BINARY), @mysqlleader_seat_node = CAST('v1' AS BINARY), \
         @mysqlleader_seat_term = {t}; CALL campaign('eu_victim', 'v1', 60000)",
        "CALL am_i_leader('eu_victim', 'v1')",
        "CALL current_leader('eu_victim')",
        "CALL resign('eu_victim', 'v1')",
        "CALL assert_leader('eu_victim', 'v1', {t})",
        "CALL resign_to('eu_victim', 'v1', 'a1')",
        "CALL renew_seats('v1', 60000, '[\"billing_a\", \"eu_victim\"]')",
        "CALL campaign_seats('a1', 60000, '[\"billing_a\", \"eu_victim\"]')",
        "CALL resign_seats('v1', '[\"billing_a\", \"eu_victim\"]')",
        "CALL handover_seats('[\"billing_a\", \"eu_victim\"]', 'a1')",
        "CALL grant_lease('v1', 60000)",
        "CALL take_seats({l}, 'a1', 60000, '[\"billing_a\", \"eu_victim\"]')",
        "CALL renew_lease({l}, 'a1', 60000, '[[\"billing_a\", 0], [\"eu_victim\", {t}]]')",
        "CALL release_lease({l}, 'v1')",
        "CALL leader_election_wakeup_name('eu_victim')",
        "CALL leader_election_node_wakeup_name('eu_victim', 'v1')",
        "CALL force_leader('eu_victim', 'a1', 60000)",
        "CALL reelect('eu_victim')",
        "CALL handover('eu_victim', 'a1')",
        "CALL set_expiry_event(0)",
        "CALL leader_election_prune_history(1)",
        "CALL leader_election_status(NULL)",
        "CALL leader_election_recent_terms('eu_victim', 5)",
        "CALL leader_election_event_status()",
        "CALL campaign('billing_a', 'a1', 60000)",
    ]
    .iter()
    .map(|a| a.replace("{t}", &term.to_string()).replace("{l}", &lease.to_string()))
    .collect()
}

/// The victim, right after the attacker's call (which the attacker leaves as it ended, its
/// transaction open if it has one): the leader renews its seat, and another node takes it over,
/// each waiting at most 1 s for a lock (then 1205) and answering within 2.5 s. Returns the new
/// term.
async fn victim_renews_and_is_taken_over(victim: &mut Conn, other: &mut Conn, leader: &str, what: &str) -> u64 {
    let renew = tokio::time::timeout(Duration::from_millis(2500), call_text(victim, &format!("CALL campaign('eu_victim', '{leader}', 60000)")))
        .await
        .unwrap_or_else(|_| panic!("{what}: the victim's renew hangs"))
        ;
    let renew = match renew {
        Ok(r) => r,
        Err(e) => panic!("{what}: the victim's renew failed: {e:?}; locks held: {:?}", locks_held(other).await),
    };
    assert_eq!(renew.flag("is_leader"), 1, "{what}: the victim still leads: {renew:?}");
    let next = if leader == "v1" { "v2" } else { "v1" };
    let taken = tokio::time::timeout(Duration::from_millis(2500), call_text(other, &format!("CALL force_leader('eu_victim', '{next}', 60000)")))
        .await
        .unwrap_or_else(|_| panic!("{what}: the takeover hangs"))
        .unwrap_or_else(|e| panic!("{what}: the takeover failed: {e:?}"));
    // Back to v1, so that the attacks aim at the leader.
    let back = call_text(other, "CALL force_leader('eu_victim', 'v1', 60000)").await.unwrap_or_else(|e| panic!("{what}: {e:?}"));
    assert!(back.term() > taken.term());
    back.term()
}

/// The row locks held or waited for now, as the server lists them (for a failure's message).
async fn locks_held(conn: &mut Conn) -> Vec<String> {
    let sql = if is_mariadb(conn).await {
        "SELECT CONCAT_WS(' ', lock_trx_id, lock_mode, lock_type, lock_table, lock_index, lock_data) FROM information_schema.INNODB_LOCKS"
    } else {
        "SELECT CONCAT_WS(' ', l.THREAD_ID, t.PROCESSLIST_ID, l.OBJECT_NAME, l.INDEX_NAME, l.LOCK_TYPE, l.LOCK_MODE, l.LOCK_STATUS, l.LOCK_DATA) \
         FROM performance_schema.data_locks l LEFT JOIN performance_schema.threads t ON t.THREAD_ID = l.THREAD_ID"
    };
    conn.query(sql).await.unwrap_or_else(|e| vec![format!("({e})")])
}

/// The tenant-isolation matrix: an operator limited to `billing%` calls every routine of its role
/// on another tenant's seat, from every session state it can set, and each call is cut at every
/// statement boundary (a sweep of MariaDB's max_statement_time, or of a KILL QUERY's moment on
/// MySQL, from 0.05 ms until the call runs to its end uncut); after each, with the attacker's
/// session left as the cut left it, the victim renews and is taken over without waiting. Before,
/// a cut between two statements kept a share lock on the victim's seat (read before access was
/// decided, or reported after the routine's COMMIT), and every renew of it failed with 1205.
#[tokio::test]
async fn no_cut_call_in_any_session_state_holds_another_tenants_seat() {
    let db = TestDb::migrated("trust_matrix").await;
    let mut admin = connect(&db.url).await;
    let mut victim = connect(&db.url).await;
    let mut killer = connect(&db.url).await;
    let mariadb = is_mariadb(&mut admin).await;
    let user = format!("tm_{}", std::process::id());
    let mut attacker = account(&mut admin, &db, &user, Role::Operator, &["billing%"]).await;
    exec(&mut victim, "SET SESSION innodb_lock_wait_timeout = 1").await;
    exec(&mut admin, "SET SESSION innodb_lock_wait_timeout = 1").await;
    call_text(&mut attacker, "CALL campaign('billing_a', 'a1', 60000)").await.expect("its own seat");
    let lease: u64 = call_text(&mut attacker, "CALL grant_lease('a1', 3600000)").await.expect("its own node lease").get("lease_id");
    let mut term = force_leader(&mut victim, "eu_victim", "v1", 60_000).await.term();

    let (mut calls, mut cuts) = (0, 0);
    for state in SESSION_STATES {
        for i in 0..attacks(0, lease).len() {
            // Cut after 0.05 ms, 0.10 ms, ... (then in steps of 0.25 ms); the sweep of one call
            // goes on to 1 ms at least, and ends after three calls in a row that ran to their end.
            let (mut uncut, mut step) = (0, 1);
            while (uncut < 3 || step <= 20) && step <= 200 {
                let attack = attacks(term, lease)[i].clone();
                end_attackers_transaction(&mut attacker).await;
                exec(&mut attacker, state).await;
                let call = match attack.rsplit_once("; ") {
                    Some((set, call)) => {
                        exec(&mut attacker, set).await;
                        call.to_string()
                    }
                    None => attack,
                };
                let what = format!("{state} / {call} cut after {:.2} ms", step as f64 * 0.05);
                match cut_call(mariadb, &mut attacker, &mut killer, &call, step as f64 * 0.00005).await {
                    Ok(true) => (cuts, uncut) = (cuts + 1, 0),
                    // Refused (outside the attacker's limit, or inside its transaction) or answered.
                    Ok(false) | Err(mysql_async::Error::Server(_)) => uncut += 1,
                    Err(e) => panic!("{what}: {e}"),
                }
                calls += 1;
                term = victim_renews_and_is_taken_over(&mut victim, &mut admin, "v1", &what).await;
                step += if step < 20 { 1 } else { 5 };
            }
        }
    }
    end_attackers_transaction(&mut attacker).await;
    eprintln!("{calls} calls, {cuts} cut short: the victim's seat was never held");
    assert!(cuts > calls / 10, "only {cuts} of {calls} calls were cut: the sweep misses the calls' statements");
    drop(attacker);
    drop_users(&mut admin, &[&user]).await;
    db.drop_db().await;
}

/// A list of service ids (renew_seats, campaign_seats) is a JSON array of distinct strings of 1
/// to 128 characters, or it is refused whole with an error naming `service_ids`, before anything
/// is read: an element that is null, a number, an object or an array was skipped, an id over 128
/// characters was cut to 128 (and acted on another seat), and a duplicate failed the batch with
/// an "internal" error.
#[tokio::test]
async fn a_list_of_service_ids_is_refused_whole_unless_each_is_a_distinct_id() {
    let db = TestDb::migrated("trust_ids").await;
    let mut c = connect(&db.url).await;
    let long = "x".repeat(128);
    let over = "x".repeat(129);
    campaign(&mut c, &long, "n", 60_000).await;
    for routine in ["renew_seats", "campaign_seats", "resign_seats"] {
        // resign_seats takes no lease: (node_id, service_ids).
        let args = |node: &str| if routine == "resign_seats" { format!("'{node}', ?") } else { format!("'{node}', 60000, ?") };
        for bad in ["[\"a\", null]", "[\"a\", 5]", "[\"a\", {\"b\": \"c\"}]", "[[\"a\"]]", "[true]", "[\"a\", \"a\"]", "[\"\"]",
                    &format!("[\"{over}\"]"), "{\"a\": 1}", "\"a\"", "not json"] {
            let e = call(&mut c, &format!("CALL {routine}({})", args("n")), (bad,)).await.expect_err(bad);
            e.assert_invalid("service_ids", &format!("{routine} {bad}"));
            assert!(!in_transaction(&mut c).await, "{routine} {bad}: nothing left open");
        }
        let none: Vec<mysql_async::Row> = c.exec(&format!("CALL {routine}({})", args("n")), ("[]",)).await.expect("an empty list");
        assert!(none.is_empty());
        if routine == "resign_seats" {
            // The node of the 128-character id resigns it (and nothing else: "b" has no seat).
            let rows: Vec<(String, u64)> = c
                .exec_map(&format!("CALL {routine}({})", args("n")), (format!("[\"{long}\", \"b\"]"),), |row: mysql_async::Row| {
                    (row.get::<String, _>(0).unwrap(), row.get::<u64, _>(2).unwrap())
                })
                .await
                .expect("ids of 128 characters");
            assert_eq!(rows, vec![(long.clone(), 1)], "{routine}: the seat of the 128-character id, term 1 resigned");
            continue;
        }
        let rows: Vec<(String, String)> = c
            .exec_map(&format!("CALL {routine}({})", args("m")), (format!("[\"{long}\", \"b\"]"),), |row: mysql_async::Row| {
                (row.get::<String, _>(0).unwrap(), row.get::<String, _>(1).unwrap())
            })
            .await
            .expect("ids of 128 characters");
        // campaign_seats creates "b" and takes it for m; renew_seats leaves a seat never created out.
        let b_seat: &[(String, String)] = if routine == "campaign_seats" { &[("b".to_string(), "m".to_string())] } else { &[] };
        let expected: Vec<(String, String)> = b_seat.iter().cloned().chain([(long.clone(), "n".to_string())]).collect();
        assert_eq!(rows, expected, "{routine}: the seat of the 128-character id, led by n");
    }
    db.drop_db().await;
}


/// Every routine that reads the clock, as an unlimited operator may call it, on the seat
/// `clk_victim` (led by `v1` at term 1) or listing it; `{l}` a node lease of the caller's.
fn clock_calls(lease: u64) -> Vec<String> {
    [
        "CALL campaign('clk_victim', 'a1', 60000)",
        "CALL am_i_leader('clk_victim', 'v1')",
        "CALL current_leader('clk_victim')",
        "CALL assert_leader('clk_victim', 'v1', 1)",
        "CALL resign('clk_victim', 'v1')",
        "CALL resign_to('clk_victim', 'v1', 'a1')",
        "CALL renew_seats('v1', 60000, '[\"clk_a\", \"clk_victim\"]')",
        "CALL campaign_seats('a1', 60000, '[\"clk_a\", \"clk_victim\"]')",
        "CALL resign_seats('v1', '[\"clk_a\", \"clk_victim\"]')",
        "CALL handover_seats('[\"clk_a\", \"clk_victim\"]', 'a1')",
        "CALL grant_lease('a1', 60000)",
        "CALL take_seats({l}, 'a1', 60000, '[\"clk_a\", \"clk_victim\"]')",
        "CALL renew_lease({l}, 'a1', 60000, '[[\"clk_a\", 0], [\"clk_victim\", 1]]')",
        "CALL release_lease({l}, 'nobody')",
        "CALL force_leader('clk_victim', 'a1', 60000)",
        "CALL reelect('clk_victim')",
        "CALL handover('clk_victim', 'a1')",
        "CALL leader_election_prune_history(1)",
        "CALL leader_election_status(NULL)",
        "CALL leader_election_recent_terms('clk_victim', 5)",
    ]
    .iter()
    .map(|a| a.replace("{l}", &lease.to_string()))
    .collect()
}

/// Any account may SET timestamp for its session (no privilege), and UTC_TIMESTAMP() then
/// returns that time inside routines too: a campaign an hour ahead took a seat whose lease had
/// ten minutes to run, and gave its own term a lease that ran 70 minutes; an hour behind,
/// assert_leader would pass a stale leader's fence. Every routine that reads the clock now
/// refuses a session whose clock is more than 1 ms off the server's (sql/fragments/server_clock.sql),
/// 45000 naming `timestamp`, before it reads anything: nothing changes, no transaction is left
/// open, the session's time zone is as it set it. Set an hour ahead, an hour behind, and 50 ms
/// behind (a set clock stands still, so it only falls further behind during the test). With
/// timestamp = DEFAULT again, and the same time zone, the calls run as usual.
#[tokio::test]
async fn a_session_clock_that_is_set_is_refused() {
    let db = TestDb::migrated("trust_clock").await;
    let mut admin = connect(&db.url).await;
    let user = format!("clk_{}", std::process::id());
    let mut op = account(&mut admin, &db, &user, Role::Operator, &[]).await;
    assert_eq!(campaign(&mut admin, "clk_victim", "v1", 600_000).await.term(), 1);
    exec(&mut op, "SET SESSION time_zone = '+05:30'").await;
    let lease: u64 = op.query_first("CALL grant_lease('a1', 60000)").await.unwrap().map(|(id, _ms): (u64, i64)| id).unwrap();
    let before = snapshot(&mut admin).await;

    for offset_s in [3600.0, -3600.0, -0.05] {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
        exec(&mut op, &format!("SET SESSION timestamp = {:.6}", now + offset_s)).await;
        for sql in clock_calls(lease) {
            let what = format!("{sql} with the clock set {offset_s} s off");
            if sql.contains("assert_leader") {
                exec(&mut op, "START TRANSACTION").await;
            }
            let e = refusal(op.query_drop(&sql).await.expect_err(&what));
            e.assert_invalid("timestamp", &what);
            assert!(!in_transaction(&mut op).await, "{what}: no transaction left open");
            let zone: String = op.query_first("SELECT @@session.time_zone").await.unwrap().unwrap();
            assert_eq!(zone, "+05:30", "{what}: the session's time zone as it set it");
        }
    }
    assert_eq!(snapshot(&mut admin).await, before, "the refused calls changed nothing");

    // The server's clock again: the victim's lease is valid, a new seat gets a lease of 60 s.
    exec(&mut op, "SET SESSION timestamp = DEFAULT").await;
    let r = call_text(&mut op, "CALL campaign('clk_victim', 'a1', 60000)").await.expect("campaign");
    assert_eq!((r.flag("is_leader"), r.text("leader_id").as_deref()), (0, Some("v1")), "{r:?}");
    let r = call_text(&mut op, "CALL campaign('clk_a', 'a1', 60000)").await.expect("campaign");
    assert_eq!(r.flag("is_leader"), 1, "{r:?}");
    assert!(r.remaining_ms() > 50_000 && r.remaining_ms() <= 60_000, "a lease of 60 s on the server's clock: {r:?}");
    exec(&mut op, "START TRANSACTION").await;
    call_text(&mut op, "CALL assert_leader('clk_a', 'a1', 1)").await.expect("the fence passes");
    exec(&mut op, "COMMIT").await;
    let zone: String = op.query_first("SELECT @@session.time_zone").await.unwrap().unwrap();
    assert_eq!(zone, "+05:30", "the session's time zone as it set it");

    drop(op);
    drop_users(&mut admin, &[&user]).await;
    db.drop_db().await;
}

/// How many node leases the table holds.
async fn lease_count(c: &mut Conn) -> u64 {
    c.query_first("SELECT COUNT(*) FROM leader_election_lease").await.unwrap().unwrap()
}

/// A node lease for node `n`, by grant_lease: its id.
async fn grant(c: &mut Conn) -> u64 {
    let row: Option<(u64, i64)> = c.query_first("CALL grant_lease('n', 60000)").await.expect("grant_lease");
    row.expect("a row").0
}

/// A session may SET insert_id = N, and the next INSERT takes N as its AUTO_INCREMENT value and
/// moves the table's counter past it (InnoDB never lowers it): one grant_lease with N = 2^64 - 3
/// ran the lease counter out, and every later grant of every account failed (1467). grant_lease
/// now refuses a session with insert_id set (45000 naming it), writing nothing: N huge, N an id
/// already used, and N = 0 on MySQL (which takes it as a value; MariaDB takes 0 as none, and the
/// grant gets the counter's next id); the other tenant's grants keep working with fresh ids.
#[tokio::test]
async fn a_callers_insert_id_never_picks_a_lease_id() {
    let db = TestDb::migrated("trust_insert_id").await;
    let mut admin = connect(&db.url).await;
    let tag = std::process::id();
    let (ua, ub) = (format!("iia_{tag}"), format!("iib_{tag}"));
    let mut a = account(&mut admin, &db, &ua, Role::App, &["ia%"]).await;
    let mut b = account(&mut admin, &db, &ub, Role::App, &["ib%"]).await;
    let first = grant(&mut b).await;
    let mut last = first;
    for forced in [18_446_744_073_709_551_613u64, first, 0] {
        exec(&mut a, &format!("SET SESSION insert_id = {forced}")).await;
        if forced == 0 && is_mariadb(&mut admin).await {
            last = grant(&mut a).await;
            assert!(last > first && last < 1000, "insert_id = 0 on MariaDB: the counter's next id, not {last}");
            continue;
        }
        let before = lease_count(&mut admin).await;
        let e = refusal(a.query_drop("CALL grant_lease('n', 60000)").await.expect_err("a grant with insert_id set"));
        e.assert_invalid("insert_id", &format!("insert_id = {forced}"));
        assert!(!in_transaction(&mut a).await, "insert_id = {forced}: no transaction left open");
        assert_eq!(lease_count(&mut admin).await, before, "insert_id = {forced}: no lease written");
    }
    for _ in 0..3 {
        let id = grant(&mut b).await;
        assert!(id > last && id < 1000, "the other tenant's grants keep working with fresh ids: {id} after {last}");
        last = id;
    }
    drop((a, b));
    drop_users(&mut admin, &[&ua, &ub]).await;
    db.drop_db().await;
}
