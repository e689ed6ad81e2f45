//! The contract of every procedure, row by row, against the real server (see
//! ../shared/spec/CONTRACT.md): result columns, the term rules, leases, the history each call
//! writes, fencing with assert_leader, the expiry event, and byte-exact ids.
//!
//! Leases: LONG never runs out during a test; SHORT is only ever asserted to have *ended*, after
//! sleeping well past it, so that a slow, shared machine cannot make these tests fail.

use crate::{common, sql_support};
use std::time::Duration;

use common::TestDb;
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use sql_support::*;

/// A lease that never runs out during a test.
const LONG: i64 = 60_000;
/// A lease the tests outlive with [`outlive`].
const SHORT: i64 = 250;

/// Sleeps well past a lease of `lease_ms` taken just before.
async fn outlive(lease_ms: i64) {
    tokio::time::sleep(Duration::from_millis(lease_ms as u64 * 2 + 300)).await;
}

/// Like `outlive`, while `busy` sends a statement every 300 ms: an open fenced transaction that is
/// not idle (the server ends an idle one after its lease: see V6).
async fn outlive_busy(busy: &mut Conn, lease_ms: i64) {
    let until = tokio::time::Instant::now() + Duration::from_millis(lease_ms as u64 * 2 + 300);
    while tokio::time::Instant::now() < until {
        exec(busy, "DO 0").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

async fn setup(tag: &str) -> (TestDb, Conn) {
    let db = TestDb::migrated(tag).await;
    let conn = connect(&db.url).await;
    (db, conn)
}

/// The session counters of rows written, updated and deleted by this connection.
async fn rows_written(c: &mut Conn) -> (u64, u64, u64) {
    let rows: Vec<(String, u64)> = c
        .query("SHOW SESSION STATUS WHERE Variable_name IN ('Handler_write', 'Handler_update', 'Handler_delete')")
        .await
        .unwrap();
    let get = |n: &str| rows.iter().find(|(k, _)| k == n).map(|(_, v)| *v).unwrap();
    (get("Handler_write"), get("Handler_update"), get("Handler_delete"))
}

/// Asserts a campaign/force_leader reply: (is_leader, leader_id, term).
fn assert_seat(r: &Reply, is_leader: i64, leader_id: &str, term: u64, what: &str) {
    assert_eq!(
        (r.flag("is_leader"), r.text("leader_id").as_deref(), r.term()),
        (is_leader, Some(leader_id), term),
        "{what}: {r:?}"
    );
}

/// Asserts that nobody leads: current_leader says (NULL, term, 0).
async fn assert_vacant(c: &mut Conn, service: &str, term: u64, what: &str) {
    let r = current_leader(c, service).await;
    assert_eq!((r.text("leader_id"), r.term(), r.remaining_ms()), (None, term, 0), "{what}: {r:?}");
}

// ---- Shape of every reply ----

/// Every CALL returns exactly one result set of exactly one row (checked by `one_row` in the
/// helpers) with the contract's column names in the contract's order, through the text
/// protocol (as a command-line client sends it) and the binary one (prepared statements).
#[tokio::test]
async fn every_call_returns_one_row_with_the_contract_columns() {
    let (db, mut c) = setup("contract_columns").await;
    const CAMPAIGN: &[&str] = &["is_leader", "leader_id", "term", "lease_remaining_ms"];
    const CHECK: &[&str] = &["is_leader", "term", "lease_remaining_ms"];
    const CURRENT: &[&str] = &["leader_id", "term", "lease_remaining_ms"];
    const REELECT: &[&str] = &["previous_leader_id", "term"];
    const RESIGN: &[&str] = &["resigned", "term"];
    const EVENT: &[&str] = &["event_enabled"];
    // Each call in the states that take a different path through its procedure.
    let script: &[(&str, &[&str])] = &[
        ("CALL current_leader('svc')", CURRENT),           // no row yet
        ("CALL am_i_leader('svc', 'a')", CHECK),           // no row yet
        ("CALL reelect('svc')", REELECT),                  // no row yet
        ("CALL resign('svc', 'a')", RESIGN),               // no row yet
        ("CALL campaign('svc', 'a', 60000)", CAMPAIGN),    // creates the row, takes the seat
        ("CALL campaign('svc', 'a', 60000)", CAMPAIGN),    // renews
        ("CALL campaign('svc', 'b', 60000)", CAMPAIGN),    // follower: a read
        ("CALL am_i_leader('svc', 'a')", CHECK),
        ("CALL am_i_leader('svc', 'b')", CHECK),
        ("CALL current_leader('svc')", CURRENT),
        // (assert_leader runs inside a transaction: below)
        ("CALL force_leader('svc', 'b', 60000)", CAMPAIGN), // displaces a
        ("CALL force_leader('new', 'b', 60000)", CAMPAIGN), // creates the row
        ("CALL resign('svc', 'a')", RESIGN),               // not the leader
        ("CALL resign('svc', 'b')", RESIGN),               // the leader
        ("CALL reelect('svc')", REELECT),                  // nobody leads
        ("CALL campaign('svc', 'a', 60000)", CAMPAIGN),    // takes the vacant seat
        ("CALL reelect('svc')", REELECT),                  // ends a's lease
        ("CALL set_expiry_event(1)", EVENT),
        ("CALL set_expiry_event(0)", EVENT),
    ];
    for binary in [false, true] {
        exec(&mut c, "DELETE FROM leader_election").await;
        exec(&mut c, "DELETE FROM leader_election_history").await;
        for (sql, columns) in script {
            let reply = if binary { ok(&mut c, sql, ()).await } else { call_text(&mut c, sql).await.unwrap() };
            assert_eq!(&reply.columns, columns, "{sql} (binary protocol: {binary})");
            assert_eq!(reply.warnings, 0, "{sql}: no warnings on a normal path");
        }
        // assert_leader inside the caller's transaction, where it is meant to run.
        call_text(&mut c, "CALL campaign('svc', 'a', 60000)").await.unwrap();
        exec(&mut c, "START TRANSACTION").await;
        let reply = if binary {
            ok(&mut c, "CALL assert_leader(?, ?, ?)", ("svc", "a", 4u64)).await
        } else {
            call_text(&mut c, "CALL assert_leader('svc', 'a', 4)").await.unwrap()
        };
        assert_eq!(reply.columns, CHECK, "assert_leader (binary protocol: {binary})");
        exec(&mut c, "COMMIT").await;
    }
    db.drop_db().await;
}

// ---- Terms ----

/// Term 0 before anyone ever led, for every call that reports a term; and reads create no row.
#[tokio::test]
async fn the_term_is_0_before_anyone_led() {
    let (db, mut c) = setup("contract_term0").await;
    assert_vacant(&mut c, "svc", 0, "current_leader").await;
    let r = am_i_leader(&mut c, "svc", "a").await;
    assert_eq!((r.flag("is_leader"), r.term(), r.remaining_ms()), (0, 0, 0), "am_i_leader: {r:?}");
    let r = resign(&mut c, "svc", "a").await;
    assert_eq!((r.flag("resigned"), r.term()), (0, 0), "resign: {r:?}");
    let r = reelect(&mut c, "svc").await;
    assert_eq!((r.text("previous_leader_id"), r.term()), (None, 0), "reelect: {r:?}");
    assert_leader(&mut c, "svc", "a", 0).await.unwrap_err().assert_not_leader("term 0 leads nothing");
    assert_eq!(snapshot(&mut c).await, Snapshot { seats: vec![], terms: vec![] }, "nothing was written");
    db.drop_db().await;
}

/// The first campaign takes the seat at term 1 with the full lease, on the server's UTC clock,
/// and opens term 1 in the history ('elected', not ended).
#[tokio::test]
async fn the_first_campaign_takes_the_seat_at_term_1() {
    let (db, mut c) = setup("contract_first").await;
    // A session time zone far from UTC: the lease must still be on the UTC clock.
    exec(&mut c, "SET time_zone = '+09:00'").await;
    let r = campaign(&mut c, "svc", "a", LONG).await;
    assert_seat(&r, 1, "a", 1, "first campaign");
    assert_eq!(r.remaining_ms(), LONG, "a new lease has all its time left");

    let seat = seat(&mut c, "svc").await.unwrap();
    assert_eq!((seat.leader_id.as_deref(), seat.term, seat.lease_ms), (Some("a"), 1, Some(LONG as u32)));
    assert_eq!(seat.term_started_us, seat.renewed_us);
    assert_eq!(seat.expires_us.unwrap() - seat.renewed_us.unwrap(), LONG * 1000, "lease_ms after renewed_at");
    let skew_s: i64 = c
        .query_first("SELECT TIMESTAMPDIFF(SECOND, renewed_at, UTC_TIMESTAMP(6)) FROM leader_election")
        .await
        .unwrap()
        .unwrap();
    assert!((0..600).contains(&skew_s), "renewed_at is UTC, not the session's time zone: {skew_s} s from UTC");

    let terms = history(&mut c, "svc").await;
    assert_eq!(terms, vec![Term {
        term: 1,
        leader_id: "a".into(),
        lease_ms: LONG as u32,
        began_us: seat.term_started_us.unwrap(),
        began_how: "elected".into(),
        ended_us: None,
        ended_how: None,
    }]);
    db.drop_db().await;
}

/// A leader's campaign while its lease is valid renews it: same term, new lease from now, no new
/// history row. The new lease length is the one just asked for.
#[tokio::test]
async fn renewing_a_valid_lease_keeps_the_term() {
    let (db, mut c) = setup("contract_renew").await;
    campaign(&mut c, "svc", "a", LONG).await;
    let before = seat(&mut c, "svc").await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let r = campaign(&mut c, "svc", "a", 30_000).await;
    assert_seat(&r, 1, "a", 1, "renewal");
    assert_eq!(r.remaining_ms(), 30_000, "the renewed lease has all its time left");

    let after = seat(&mut c, "svc").await.unwrap();
    assert_eq!(after.term_started_us, before.term_started_us, "the term did not restart");
    assert!(after.renewed_us > before.renewed_us, "renewed_at moved: {before:?} -> {after:?}");
    assert_eq!(after.expires_us.unwrap() - after.renewed_us.unwrap(), 30_000 * 1000);
    assert_eq!(after.lease_ms, Some(30_000));
    let terms = history(&mut c, "svc").await;
    assert_eq!(terms.len(), 1, "a renewal writes no history: {terms:?}");
    assert_eq!((terms[0].lease_ms, terms[0].ended_how.as_deref()), (LONG as u32, None));
    db.drop_db().await;
}

/// While a lease is valid, a follower's campaign is a read: it reports the leader and writes no
/// row (the session's Handler_write/update/delete counters stand still, the tables are equal),
/// and it takes no lock (it returns while another session holds the seat's row lock, although
/// its lock wait timeout is 1 s).
#[tokio::test]
async fn a_followers_campaign_during_a_valid_lease_writes_no_row() {
    let (db, mut leader) = setup("contract_follower").await;
    campaign(&mut leader, "svc", "a", LONG).await;
    let mut follower = connect(&db.url).await;
    exec(&mut follower, "SET SESSION innodb_lock_wait_timeout = 1").await;
    let before = snapshot(&mut follower).await;

    let counters = rows_written(&mut follower).await;
    let r = campaign(&mut follower, "svc", "b", 5_000).await;
    assert_eq!(rows_written(&mut follower).await, counters, "the follower's campaign wrote a row");
    assert_seat(&r, 0, "a", 1, "follower");
    assert!(0 < r.remaining_ms() && r.remaining_ms() <= LONG, "the leader's lease: {r:?}");

    // The seat's row is locked by someone else: a follower's campaign still answers at once.
    let mut holder = connect(&db.url).await;
    exec(&mut holder, "START TRANSACTION").await;
    exec(&mut holder, "SELECT * FROM leader_election FOR UPDATE").await;
    for node in ["b", "c", "a "] {
        let r = call(&mut follower, "CALL campaign(?, ?, ?)", ("svc", node, 5_000)).await;
        let r = r.unwrap_or_else(|e| panic!("follower {node:?} waited for a lock: {e:?}"));
        assert_seat(&r, 0, "a", 1, node);
    }
    exec(&mut holder, "ROLLBACK").await;

    assert_eq!(snapshot(&mut follower).await, before, "no row changed");
    assert!(!in_transaction(&mut follower).await);
    db.drop_db().await;
}

/// Once a lease has run out, nobody leads (leader_id NULL, remaining 0, the term kept), the view
/// shows the term ended 'expired' at the lease's end, and the next campaign of another node takes
/// the seat at term + 1, closing the old term 'expired' at exactly the lease's end.
#[tokio::test]
async fn taking_an_expired_seat_raises_the_term() {
    let (db, mut c) = setup("contract_expired").await;
    campaign(&mut c, "svc", "a", SHORT).await;
    let lease_end = seat(&mut c, "svc").await.unwrap().expires_us.unwrap();
    outlive(SHORT).await;

    assert_vacant(&mut c, "svc", 1, "after the lease ran out").await;
    for node in ["a", "b"] {
        let r = am_i_leader(&mut c, "svc", node).await;
        assert_eq!((r.flag("is_leader"), r.term(), r.remaining_ms()), (0, 1, 0), "am_i_leader {node}: {r:?}");
    }
    let view: (Option<i64>, Option<String>) = c
        .query_first(format!("SELECT {}, ended_how FROM leader_election_terms WHERE term = 1", us("ended_at")))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(view, (Some(lease_end), Some("expired".into())), "the view reads an unclosed lapsed term as expired");

    let r = campaign(&mut c, "svc", "b", LONG).await;
    assert_seat(&r, 1, "b", 2, "taking the expired seat");
    assert_eq!(r.remaining_ms(), LONG);
    let now = seat(&mut c, "svc").await.unwrap();
    let terms = history(&mut c, "svc").await;
    assert_eq!(terms.len(), 2, "{terms:?}");
    assert_eq!((terms[0].ended_us, terms[0].ended_how.as_deref()), (Some(lease_end), Some("expired")));
    assert_eq!((terms[1].leader_id.as_str(), terms[1].began_how.as_str(), terms[1].ended_us), ("b", "elected", None));
    assert_eq!(Some(terms[1].began_us), now.term_started_us);
    assert!(terms[0].ended_us.unwrap() <= terms[1].began_us, "the terms do not overlap");
    db.drop_db().await;
}

/// A leader whose own lease ran out is a new leader when it campaigns again: a new term.
#[tokio::test]
async fn a_leader_renewing_its_own_expired_lease_gets_a_new_term() {
    let (db, mut c) = setup("contract_own_expired").await;
    campaign(&mut c, "svc", "a", SHORT).await;
    let lease_end = seat(&mut c, "svc").await.unwrap().expires_us.unwrap();
    outlive(SHORT).await;
    let r = campaign(&mut c, "svc", "a", LONG).await;
    assert_seat(&r, 1, "a", 2, "re-taking its own expired seat");
    let terms = history(&mut c, "svc").await;
    let summary: Vec<_> = terms.iter().map(|t| (t.term, t.leader_id.as_str(), t.ended_how.as_deref())).collect();
    assert_eq!(summary, vec![(1, "a", Some("expired")), (2, "a", None)]);
    assert_eq!(terms[0].ended_us, Some(lease_end));
    db.drop_db().await;
}

/// force_leader installs the node at once with term + 1, whoever held the seat (another node, the
/// node itself, nobody, an expired lease); a displaced valid leader's term ends 'forced_out'
/// at the moment the new term begins; the new term begins 'forced'.
#[tokio::test]
async fn force_leader_installs_the_node_with_a_new_term() {
    let (db, mut c) = setup("contract_force").await;
    campaign(&mut c, "svc", "a", LONG).await;
    let r = force_leader(&mut c, "svc", "b", 30_000).await;
    assert_seat(&r, 1, "b", 2, "forcing b over a");
    assert_eq!(r.remaining_ms(), 30_000);
    let r = am_i_leader(&mut c, "svc", "a").await;
    assert_eq!((r.flag("is_leader"), r.term()), (0, 2), "a no longer leads: {r:?}");
    assert_seat(&campaign(&mut c, "svc", "a", LONG).await, 0, "b", 2, "a is a follower now");
    assert_seat(&force_leader(&mut c, "svc", "b", LONG).await, 1, "b", 3, "forcing the leader itself");

    let terms = history(&mut c, "svc").await;
    let summary: Vec<_> =
        terms.iter().map(|t| (t.term, t.leader_id.as_str(), t.began_how.as_str(), t.ended_how.as_deref())).collect();
    assert_eq!(summary, vec![
        (1, "a", "elected", Some("forced_out")),
        (2, "b", "forced", Some("forced_out")),
        (3, "b", "forced", None),
    ]);
    assert_eq!(terms[0].ended_us, Some(terms[1].began_us), "term 1 ended when term 2 began");
    assert_eq!(terms[1].ended_us, Some(terms[2].began_us), "term 2 ended when term 3 began");

    // A service nobody ever led: term 1, 'forced'.
    assert_seat(&force_leader(&mut c, "fresh", "c", LONG).await, 1, "c", 1, "forcing on a new service");
    assert_eq!(history(&mut c, "fresh").await[0].began_how, "forced");

    // A vacant seat (after resign): term + 1, and the resigned term stays 'resigned'.
    resign(&mut c, "fresh", "c").await;
    assert_seat(&force_leader(&mut c, "fresh", "d", LONG).await, 1, "d", 2, "forcing on a vacant seat");
    let ends: Vec<_> = history(&mut c, "fresh").await.into_iter().map(|t| t.ended_how).collect();
    assert_eq!(ends, vec![Some("resigned".to_string()), None]);

    // An expired lease is not displaced, it ran out: its term ends 'expired' at the lease's end.
    campaign(&mut c, "lapsed", "e", SHORT).await;
    let lease_end = seat(&mut c, "lapsed").await.unwrap().expires_us;
    outlive(SHORT).await;
    assert_seat(&force_leader(&mut c, "lapsed", "f", LONG).await, 1, "f", 2, "forcing over an expired lease");
    let terms = history(&mut c, "lapsed").await;
    assert_eq!((terms[0].ended_us, terms[0].ended_how.as_deref()), (lease_end, Some("expired")));
    assert_eq!(terms[1].began_how, "forced");
    db.drop_db().await;
}

/// reelect ends the current lease now ('reelected'), keeps the term, vacates the seat, and the
/// next campaign of any node wins, the old leader's as well as another's, at term + 1.
#[tokio::test]
async fn reelect_ends_the_lease_and_the_next_campaign_of_any_node_wins() {
    let (db, mut c) = setup("contract_reelect").await;
    campaign(&mut c, "svc", "a", LONG).await;
    let r = reelect(&mut c, "svc").await;
    assert_eq!((r.text("previous_leader_id").as_deref(), r.term()), (Some("a"), 1), "{r:?}");
    assert_vacant(&mut c, "svc", 1, "after reelect").await;
    let seat1 = seat(&mut c, "svc").await.unwrap();
    assert_eq!((seat1.leader_id, seat1.expires_us, seat1.term), (None, None, 1), "the seat is vacant");
    let t1 = &history(&mut c, "svc").await[0];
    assert_eq!(t1.ended_how.as_deref(), Some("reelected"));
    assert!(t1.ended_us.unwrap() >= t1.began_us);

    // Nobody leads: reelect changes nothing and says so.
    let before = snapshot(&mut c).await;
    let r = reelect(&mut c, "svc").await;
    assert_eq!((r.text("previous_leader_id"), r.term()), (None, 1), "{r:?}");
    assert_eq!(snapshot(&mut c).await, before);

    // The next campaign wins, whoever makes it: another node, then the previous leader itself.
    assert_seat(&campaign(&mut c, "svc", "b", LONG).await, 1, "b", 2, "b after reelect");
    assert_eq!(reelect(&mut c, "svc").await.text("previous_leader_id").as_deref(), Some("b"));
    assert_seat(&campaign(&mut c, "svc", "b", LONG).await, 1, "b", 3, "the reelected leader itself");
    let ends: Vec<_> = history(&mut c, "svc").await.into_iter().map(|t| t.ended_how).collect();
    assert_eq!(ends, vec![Some("reelected".into()), Some("reelected".into()), None]);

    // A lease that already ran out: no previous leader, and its term ends 'expired' at the lease's end.
    campaign(&mut c, "lapsed", "e", SHORT).await;
    let lease_end = seat(&mut c, "lapsed").await.unwrap().expires_us;
    outlive(SHORT).await;
    let r = reelect(&mut c, "lapsed").await;
    assert_eq!((r.text("previous_leader_id"), r.term()), (None, 1), "{r:?}");
    let t = &history(&mut c, "lapsed").await[0];
    assert_eq!((t.ended_us, t.ended_how.as_deref()), (lease_end, Some("expired")));
    db.drop_db().await;
}

/// resign ends the lease only of the current leader ('resigned', the term kept); anyone else's
/// resign (another node, an id that differs by case or a space, a leader whose lease ran out)
/// answers resigned = 0 and changes nothing.
#[tokio::test]
async fn resign_ends_the_lease_only_of_the_current_leader() {
    let (db, mut c) = setup("contract_resign").await;
    campaign(&mut c, "svc", "a", LONG).await;
    let before = snapshot(&mut c).await;
    for node in ["b", "a ", "A"] {
        let r = resign(&mut c, "svc", node).await;
        assert_eq!((r.flag("resigned"), r.term()), (0, 1), "{node:?} does not lead: {r:?}");
    }
    assert_eq!(snapshot(&mut c).await, before, "a non-leader's resign changes nothing");

    let r = resign(&mut c, "svc", "a").await;
    assert_eq!((r.flag("resigned"), r.term()), (1, 1), "{r:?}");
    assert_vacant(&mut c, "svc", 1, "after resign").await;
    let t = &history(&mut c, "svc").await[0];
    assert_eq!(t.ended_how.as_deref(), Some("resigned"));
    assert!(t.ended_us.unwrap() >= t.began_us);
    let r = resign(&mut c, "svc", "a").await;
    assert_eq!((r.flag("resigned"), r.term()), (0, 1), "resigning twice: {r:?}");
    assert_seat(&campaign(&mut c, "svc", "b", LONG).await, 1, "b", 2, "the next campaign after resign");

    campaign(&mut c, "lapsed", "e", SHORT).await;
    outlive(SHORT).await;
    let before = snapshot(&mut c).await;
    let r = resign(&mut c, "lapsed", "e").await;
    assert_eq!((r.flag("resigned"), r.term()), (0, 1), "an expired leader does not lead: {r:?}");
    assert_eq!(snapshot(&mut c).await, before);
    db.drop_db().await;
}

/// Every term any call reports rises by exactly one per acquisition and never goes down, over
/// a sequence of every kind of call; the history holds terms 1..N with no gap.
#[tokio::test]
async fn the_term_is_never_lowered_nor_reused() {
    let (db, mut c) = setup("contract_term_rules").await;
    let mut seen: Vec<(String, u64)> = Vec::new();
    let steps: &[(&str, &str, i64, u64)] = &[
        // (call, node, lease_ms, the term it must report)
        ("campaign", "a", LONG, 1),
        ("campaign", "a", LONG, 1),
        ("resign", "a", 0, 1),
        ("current", "", 0, 1),
        ("campaign", "b", SHORT, 2),
        ("outlive", "", 0, 2),
        ("current", "", 0, 2),
        ("reelect", "", 0, 2),
        ("campaign", "c", LONG, 3),
        ("force", "d", LONG, 4),
        ("reelect", "", 0, 4),
        ("reelect", "", 0, 4),
        ("resign", "d", 0, 4),
        ("force", "d", LONG, 5),
        ("resign", "d", 0, 5),
        ("campaign", "a", LONG, 6),
    ];
    for &(step, node, lease_ms, term) in steps {
        let r = match step {
            "campaign" => campaign(&mut c, "svc", node, lease_ms).await,
            "force" => force_leader(&mut c, "svc", node, lease_ms).await,
            "resign" => resign(&mut c, "svc", node).await,
            "reelect" => reelect(&mut c, "svc").await,
            "current" => current_leader(&mut c, "svc").await,
            "outlive" => {
                outlive(SHORT).await;
                am_i_leader(&mut c, "svc", "b").await
            }
            _ => unreachable!(),
        };
        assert_eq!(r.term(), term, "{step} {node}: {r:?} (terms so far {seen:?})");
        seen.push((format!("{step} {node}"), r.term()));
    }
    let terms: Vec<u64> = history(&mut c, "svc").await.iter().map(|t| t.term).collect();
    assert_eq!(terms, (1..=6).collect::<Vec<_>>());
    db.drop_db().await;
}

// ---- Leases ----

/// lease_remaining_ms is the current leader's lease left on the server's clock, for the leader
/// and for anyone else who asks; it shrinks as time passes and is 0 when nobody leads.
#[tokio::test]
async fn lease_remaining_ms_is_the_current_leaders_time_left() {
    let (db, mut c) = setup("contract_remaining").await;
    campaign(&mut c, "svc", "a", LONG).await;
    let r1 = am_i_leader(&mut c, "svc", "a").await;
    assert_eq!((r1.flag("is_leader"), r1.term()), (1, 1));
    assert!(0 < r1.remaining_ms() && r1.remaining_ms() <= LONG, "{r1:?}");
    let r = am_i_leader(&mut c, "svc", "b").await;
    assert_eq!((r.flag("is_leader"), r.term()), (0, 1));
    assert!(0 < r.remaining_ms() && r.remaining_ms() <= LONG, "a follower sees the leader's lease: {r:?}");
    let r = current_leader(&mut c, "svc").await;
    assert_eq!((r.text("leader_id").as_deref(), r.term()), (Some("a"), 1));
    assert!(0 < r.remaining_ms() && r.remaining_ms() <= LONG, "{r:?}");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let r2 = am_i_leader(&mut c, "svc", "a").await;
    assert!(r2.remaining_ms() < r1.remaining_ms(), "time passed: {r1:?} then {r2:?}");

    campaign(&mut c, "lapsed", "a", SHORT).await;
    outlive(SHORT).await;
    assert_eq!(am_i_leader(&mut c, "lapsed", "a").await.remaining_ms(), 0);
    assert_eq!(current_leader(&mut c, "lapsed").await.remaining_ms(), 0);
    db.drop_db().await;
}

// ---- Fencing ----

/// assert_leader succeeds for the leader at its exact term, inside a transaction, and raises
/// 45001 'mysqlleader: not the leader' for a stale or future term, another node (by a byte),
/// an expired lease, a vacant seat and an unknown service.
#[tokio::test]
async fn assert_leader_accepts_only_the_leader_at_its_term() {
    let (db, mut c) = setup("contract_assert").await;
    campaign(&mut c, "svc", "a", LONG).await;
    exec(&mut c, "START TRANSACTION").await;
    let r = assert_leader(&mut c, "svc", "a", 1).await.unwrap();
    assert_eq!((r.flag("is_leader"), r.term()), (1, 1));
    assert!(0 < r.remaining_ms() && r.remaining_ms() <= LONG, "{r:?}");
    exec(&mut c, "COMMIT").await;

    not_leader(assert_leader(&mut c, "svc", "a", 2).await, "a future term");
    not_leader(assert_leader(&mut c, "svc", "a", 0).await, "term 0");
    not_leader(assert_leader(&mut c, "svc", "b", 1).await, "another node");
    not_leader(assert_leader(&mut c, "svc", "a ", 1).await, "a trailing space");
    not_leader(assert_leader(&mut c, "svc", "A", 1).await, "another case");
    not_leader(assert_leader(&mut c, "nobody", "a", 1).await, "an unknown service");

    force_leader(&mut c, "svc", "b", LONG).await;
    not_leader(assert_leader(&mut c, "svc", "a", 1).await, "a stale term");
    not_leader(assert_leader(&mut c, "svc", "b", 1).await, "the new leader at the old term");
    assert_leader(&mut c, "svc", "b", 2).await.expect("the new leader at its term");
    resign(&mut c, "svc", "b").await;
    not_leader(assert_leader(&mut c, "svc", "b", 2).await, "a vacant seat");

    campaign(&mut c, "lapsed", "e", SHORT).await;
    outlive(SHORT).await;
    not_leader(assert_leader(&mut c, "lapsed", "e", 1).await, "an expired lease");
    assert!(!in_transaction(&mut c).await);
    db.drop_db().await;
}

fn not_leader(r: Result<Reply, Refusal>, what: &str) {
    match r {
        Ok(reply) => panic!("{what}: assert_leader should refuse, returned {reply:?}"),
        Err(e) => e.assert_not_leader(what),
    }
}

/// Spawns `sql` on its own connection; the task returns the reply.
fn spawn_call(mut conn: Conn, sql: &'static str, params: (&'static str, &'static str, i64))
              -> tokio::task::JoinHandle<Result<Reply, Refusal>> {
    tokio::spawn(async move { call(&mut conn, sql, params).await })
}

/// Asserts that a spawned call has not finished within `ms` (it waits for a lock). A call that
/// does not block would finish in a few milliseconds; this cannot fail because the machine is slow.
async fn assert_still_waiting<T: std::fmt::Debug>(task: &mut tokio::task::JoinHandle<T>, ms: u64, what: &str) {
    if let Ok(done) = tokio::time::timeout(Duration::from_millis(ms), task).await {
        panic!("{what}: should wait for the fencing transaction, but finished: {done:?}");
    }
}

/// While the leader's transaction that called assert_leader is open, force_leader on another
/// connection cannot take the seat: it waits at most 1 s for the row lock (V6: bounded waits)
/// and fails with 1205, a transient error, changing nothing; once the transaction commits, it
/// goes through.
#[tokio::test]
async fn assert_leader_holds_off_force_leader_until_the_transaction_ends() {
    let (db, mut fenced) = setup("contract_fence_force").await;
    campaign(&mut fenced, "svc", "a", LONG).await;
    exec(&mut fenced, "START TRANSACTION").await;
    assert_leader(&mut fenced, "svc", "a", 1).await.unwrap();

    let mut force = spawn_call(connect(&db.url).await, "CALL force_leader(?, ?, ?)", ("svc", "b", LONG));
    assert_still_waiting(&mut force, 700, "force_leader").await;
    let refused = tokio::time::timeout(Duration::from_secs(30), force).await.expect("force_leader gives up").unwrap();
    assert_eq!(refused.as_ref().map_err(|e| e.code).unwrap_err(), 1205, "a bounded wait: {refused:?}");
    let mut observer = connect(&db.url).await;
    let r = current_leader(&mut observer, "svc").await;
    assert_eq!((r.text("leader_id").as_deref(), r.term()), (Some("a"), 1), "no takeover committed");

    exec(&mut fenced, "COMMIT").await;
    let r = call(&mut observer, "CALL force_leader(?, ?, ?)", ("svc", "b", LONG)).await;
    assert_seat(&r.unwrap(), 1, "b", 2, "force_leader after the commit");
    db.drop_db().await;
}

/// Even after the fenced leader's lease has run out, a campaign that would take the expired
/// seat cannot while the transaction that called assert_leader is open (it waits at most 1 s,
/// then fails with 1205); it takes the seat after that transaction ends.
#[tokio::test]
async fn assert_leader_holds_off_a_campaign_until_the_transaction_ends() {
    let (db, mut fenced) = setup("contract_fence_campaign").await;
    const LEASE: i64 = 2_000; // generous: assert_leader must find it valid
    campaign(&mut fenced, "svc", "a", LEASE).await;
    exec(&mut fenced, "START TRANSACTION").await;
    assert_leader(&mut fenced, "svc", "a", 1).await.unwrap();
    outlive_busy(&mut fenced, LEASE).await;

    let mut take = spawn_call(connect(&db.url).await, "CALL campaign(?, ?, ?)", ("svc", "b", LONG));
    assert_still_waiting(&mut take, 700, "campaign on the expired seat").await;
    let refused = tokio::time::timeout(Duration::from_secs(30), take).await.expect("campaign gives up").unwrap();
    assert_eq!(refused.as_ref().map_err(|e| e.code).unwrap_err(), 1205, "a bounded wait: {refused:?}");
    let mut observer = connect(&db.url).await;
    assert_vacant(&mut observer, "svc", 1, "expired, but no takeover committed").await;

    exec(&mut fenced, "COMMIT").await;
    let r = call(&mut observer, "CALL campaign(?, ?, ?)", ("svc", "b", LONG)).await;
    assert_seat(&r.unwrap(), 1, "b", 2, "campaign after the commit");
    db.drop_db().await;
}

/// A fence never holds up its own leader (issue "Long jobs"): a fenced transaction that stays
/// open for three leases (busy, as a job waiting on the application's rows is) leaves the
/// leader's renews to go through at once, so the leader keeps its lease and term throughout;
/// meanwhile another node's force_leader and campaign wait for the fence (a bounded wait, then
/// 1205) and nothing takes the seat; the job's write then commits in its own term, and the
/// takeover goes through after it.
#[tokio::test]
async fn a_long_fenced_transaction_keeps_its_leader_and_commits_in_its_term() {
    let (db, mut leader) = setup("contract_fence_long").await;
    // Long enough for a renew after a force's lock wait (1 s; MySQL notices it up to 1 s late).
    const LEASE: i64 = 3_000;
    exec(&mut leader, "CREATE TABLE ledger (id INT PRIMARY KEY, term BIGINT UNSIGNED NOT NULL)").await;
    assert_seat(&campaign(&mut leader, "svc", "a", LEASE).await, 1, "a", 1, "a leads");
    let mut job = connect(&db.url).await;
    exec(&mut job, "START TRANSACTION").await;
    assert_leader(&mut job, "svc", "a", 1).await.expect("the fence, first in the job's transaction");
    exec(&mut job, "INSERT INTO ledger VALUES (1, 1)").await;

    let mut other = connect(&db.url).await;
    let until = tokio::time::Instant::now() + Duration::from_millis(3 * LEASE as u64);
    let (mut renews, mut refused) = (0, 0);
    while tokio::time::Instant::now() < until {
        // The leader renews every third of a lease, and is never made to wait.
        let r = campaign(&mut leader, "svc", "a", LEASE).await;
        assert_seat(&r, 1, "a", 1, "the leader's renew under its own open fence");
        renews += 1;
        exec(&mut job, "DO 0").await;
        // Another node may neither force nor (were the lease to lapse) take the seat meanwhile.
        if refused < 2 {
            match call(&mut other, "CALL force_leader(?, ?, ?)", ("svc", "b", LONG)).await {
                Err(e) => assert_eq!(e.code, 1205, "a bounded wait for the fence: {e:?}"),
                Ok(r) => panic!("force_leader went through under an open fence: {r:?}"),
            }
            refused += 1;
            let r = campaign(&mut leader, "svc", "a", LEASE).await;
            assert_seat(&r, 1, "a", 1, "the leader's renew right after a force waited for the fence");
            exec(&mut job, "DO 0").await;
        }
        tokio::time::sleep(Duration::from_millis(LEASE as u64 / 3)).await;
    }
    assert!(renews >= 6, "{renews} renews");
    exec(&mut job, "COMMIT").await;
    let written: Vec<(i64, u64)> = other.query("SELECT id, term FROM ledger").await.unwrap();
    assert_eq!(written, [(1, 1)], "the job's write committed");
    let h = history(&mut other, "svc").await;
    assert_eq!(h.len(), 1, "no other term began: {h:?}");
    assert_eq!(h[0].ended_how, None, "term 1 still open: {h:?}");
    let r = call(&mut other, "CALL force_leader(?, ?, ?)", ("svc", "b", LONG)).await;
    assert_seat(&r.unwrap(), 1, "b", 2, "force_leader once the fenced transaction ended");
    db.drop_db().await;
}

/// assert_leader with autocommit on and no transaction open would fence nothing (its share
/// lock ends with the call): MariaDB tells, and the call is refused with 45000, naming
/// assert_leader. With autocommit off (a PEP 249 driver's default) a transaction is open, and
/// it succeeds.
#[tokio::test]
async fn assert_leader_outside_a_transaction_fences_nothing_and_says_so() {
    let (db, mut c) = setup("contract_fence_autocommit").await;
    campaign(&mut c, "svc", "a", LONG).await;
    let e = call(&mut c, "CALL assert_leader(?, ?, ?)", ("svc", "a", 1u64)).await.unwrap_err();
    assert_eq!(e.state, "45000", "{e:?}");
    assert!(e.message.starts_with("mysqlleader: assert_leader") && e.message.contains("transaction"), "{e:?}");
    exec(&mut c, "SET autocommit = 0").await;
    let r = call(&mut c, "CALL assert_leader(?, ?, ?)", ("svc", "a", 1u64)).await.expect("autocommit off: a transaction is open");
    assert_eq!(r.term(), 1);
    exec(&mut c, "COMMIT").await;
    exec(&mut c, "SET autocommit = 1").await;
    db.drop_db().await;
}

/// am_i_leader and current_leader read without locks (V7) and so never block a renew or a
/// takeover, whatever the caller's transaction does; where their answer could come from an old
/// snapshot (inside an open transaction) they are refused with 45000, naming the procedure.
/// With autocommit off (a PEP 249 driver's default) a call with no transaction open answers and
/// ends the transaction its own read opened, so it leaves no transaction and no lock behind:
/// force_leader from another client goes through at once (V6's locking read made it fail with
/// 1205 until the caller committed), and the next read answers the seat as it is now.
#[tokio::test]
async fn the_reads_never_lock_and_never_answer_from_an_old_snapshot() {
    let (db, mut reader) = setup("contract_read_snapshot").await;
    let mut other = connect(&db.url).await;
    campaign(&mut other, "svc", "a", LONG).await;

    // A PEP 249 client: autocommit off, a call, no commit.
    exec(&mut reader, "SET autocommit = 0").await;
    let r = call(&mut reader, "CALL am_i_leader(?, ?)", ("svc", "a")).await.expect("first read after a commit");
    assert_eq!((r.flag("is_leader"), r.term()), (1, 1));
    let forced = tokio::time::timeout(Duration::from_millis(900),
        call(&mut other, "CALL force_leader(?, ?, ?)", ("svc", "b", LONG))).await
        .expect("force_leader is not held off by the reader's open transaction");
    assert_seat(&forced.unwrap(), 1, "b", 2, "force_leader while a reader's transaction is open");

    // No transaction is left open, so the next read answers the seat as it is now, never
    // 'a leads at term 1' from an old snapshot.
    assert!(!in_transaction(&mut reader).await, "the read ended the transaction it opened");
    let r = call(&mut reader, "CALL current_leader(?)", ("svc",)).await.expect("the next read");
    assert_eq!((r.text("leader_id").as_deref(), r.term()), (Some("b"), 2));
    let r = call(&mut reader, "CALL am_i_leader(?, ?)", ("svc", "a")).await.expect("the next read");
    assert_eq!((r.flag("is_leader"), r.term()), (0, 2));

    // A transaction the reader opened itself (autocommit off, then a read of a table): its
    // snapshot may be old, so both reads are refused, naming themselves.
    exec(&mut reader, "SELECT COUNT(*) FROM leader_election_history").await;
    assert!(in_transaction(&mut reader).await);
    for (sql, params, name) in [("CALL am_i_leader(?, ?)", vec!["svc", "a"], "am_i_leader"),
                                ("CALL current_leader(?)", vec!["svc"], "current_leader")] {
        let e = call(&mut reader, sql, params).await.unwrap_err();
        assert_eq!(e.state, "45000", "{name}: {e:?}");
        assert!(e.message.starts_with(&format!("mysqlleader: {name} needs autocommit")), "{name}: {e:?}");
    }
    exec(&mut reader, "ROLLBACK").await;
    exec(&mut reader, "SET autocommit = 1").await;

    // An explicit transaction: refused too; with autocommit on and none open: the current row.
    exec(&mut reader, "START TRANSACTION").await;
    let e = call(&mut reader, "CALL current_leader(?)", ("svc",)).await.unwrap_err();
    assert!(e.message.starts_with("mysqlleader: current_leader needs autocommit"), "{e:?}");
    exec(&mut reader, "ROLLBACK").await;
    let r = call(&mut reader, "CALL am_i_leader(?, ?)", ("svc", "b")).await.unwrap();
    assert_eq!((r.flag("is_leader"), r.term()), (1, 2));
    db.drop_db().await;
}

/// A renew is one guarded write that commits before campaign returns, also when the caller had
/// a transaction open (as the locking path's START TRANSACTION always did): another client sees
/// the new expiry before the caller ends its own transaction, and the renew holds no lock after.
#[tokio::test]
async fn a_renew_commits_before_campaign_returns() {
    let (db, mut leader) = setup("contract_renew_commits").await;
    let mut other = connect(&db.url).await;
    campaign(&mut leader, "svc", "a", 2_000).await;
    exec(&mut leader, "START TRANSACTION").await;
    let r = call(&mut leader, "CALL campaign(?, ?, ?)", ("svc", "a", LONG)).await.unwrap();
    assert_seat(&r, 1, "a", 1, "renew inside the caller's transaction");
    assert_eq!(r.get::<i64>("lease_remaining_ms"), LONG, "a renew reports the whole new lease");
    let seen: i64 = other
        .query_first("SELECT lease_ms FROM leader_election WHERE service_id = 'svc'")
        .await.unwrap().unwrap();
    assert_eq!(seen, LONG, "the renew is visible to others before the caller's COMMIT");
    let forced = tokio::time::timeout(Duration::from_millis(900),
        call(&mut other, "CALL force_leader(?, ?, ?)", ("svc", "b", LONG))).await
        .expect("the renew left no lock behind");
    assert_seat(&forced.unwrap(), 1, "b", 2, "force after the renew");
    exec(&mut leader, "ROLLBACK").await;
    let r = call(&mut leader, "CALL current_leader(?)", ("svc",)).await.unwrap();
    assert_eq!((r.text("leader_id").as_deref(), r.term()), (Some("b"), 2), "the caller's ROLLBACK undid nothing of the calls");
    db.drop_db().await;
}

/// An idle fenced transaction does not block a takeover for hours: assert_leader bounds how long
/// its session may stay idle in that transaction to the lease left + 1 s (MariaDB), so the
/// server ends it, and another node takes the seat within lease + 1 s + a campaign's bounded wait.
/// MySQL has no such bound: there the takeover waits until the transaction ends, never less.
#[tokio::test]
async fn an_idle_fenced_transaction_ends_with_its_lease() {
    let (db, mut fenced) = setup("contract_fence_idle").await;
    const LEASE: i64 = 2_000;
    campaign(&mut fenced, "svc", "a", LEASE).await;
    exec(&mut fenced, "START TRANSACTION").await;
    assert_leader(&mut fenced, "svc", "a", 1).await.unwrap();
    let t0 = tokio::time::Instant::now();
    // The client goes idle; another node campaigns until it gets the seat.
    let mut b = connect(&db.url).await;
    if !is_mariadb(&mut b).await {
        // MySQL has no idle-transaction timeout of a session's own: the limit the README states.
        // The takeover waits, bounded, until the fenced transaction ends (here its client goes
        // away; else the server's wait_timeout), and never takes the seat under the fence.
        tokio::time::sleep(Duration::from_millis(LEASE as u64 + 1_500)).await;
        match call(&mut b, "CALL campaign(?, ?, ?)", ("svc", "b", LONG)).await {
            Ok(r) => assert_eq!(r.flag("is_leader"), 0, "a takeover under an open fence"),
            Err(e) => assert_eq!(e.code, 1205, "only a bounded lock wait while the fence is open: {e:?}"),
        }
        drop(fenced);
        let taken = loop {
            let r = call(&mut b, "CALL campaign(?, ?, ?)", ("svc", "b", LONG)).await;
            match r {
                Ok(r) if r.flag("is_leader") == 1 => break r,
                Ok(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                Err(e) => assert_eq!(e.code, 1205, "{e:?}"),
            }
            assert!(t0.elapsed() < Duration::from_secs(30), "no takeover after the fenced client went away");
        };
        assert_eq!(taken.term(), 2);
        db.drop_db().await;
        return;
    }
    let taken = loop {
        match call(&mut b, "CALL campaign(?, ?, ?)", ("svc", "b", LONG)).await {
            Ok(r) if r.flag("is_leader") == 1 => break r,
            Ok(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            Err(e) => assert_eq!(e.code, 1205, "only bounded lock waits while the fenced transaction is open: {e:?}"),
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "no takeover within 30 s: the idle fenced transaction blocks it");
    };
    assert_eq!(taken.term(), 2);
    println!("takeover {:?} after the fenced transaction went idle (lease {LEASE} ms)", t0.elapsed());
    // The idle connection was closed by the server.
    assert!(fenced.query_drop("DO 0").await.is_err(), "the idle fenced session was ended");
    db.drop_db().await;
}

/// The fencing pattern: a write in the same transaction as assert_leader. With a stale term the
/// call fails and the write does not commit, even when the application ignores the error and
/// sends COMMIT: the failed assert_leader has already rolled the transaction back (it leaves no
/// transaction open). At the right term the write commits.
#[tokio::test]
async fn a_write_fenced_with_a_stale_term_never_commits() {
    let (db, mut old) = setup("contract_fence_write").await;
    exec(&mut old, "CREATE TABLE ledger (id INT PRIMARY KEY, term BIGINT UNSIGNED NOT NULL)").await;
    campaign(&mut old, "svc", "a", LONG).await;
    let mut new = connect(&db.url).await;
    force_leader(&mut new, "svc", "b", LONG).await;

    // a still believes it leads at term 1.
    exec(&mut old, "START TRANSACTION").await;
    exec(&mut old, "INSERT INTO ledger VALUES (1, 1)").await;
    assert_leader(&mut old, "svc", "a", 1).await.unwrap_err().assert_not_leader("stale term");
    assert!(!in_transaction(&mut old).await, "the failed assert_leader leaves no transaction open");
    exec(&mut old, "COMMIT").await; // a careless application
    // b leads at term 2.
    exec(&mut new, "START TRANSACTION").await;
    assert_leader(&mut new, "svc", "b", 2).await.unwrap();
    exec(&mut new, "INSERT INTO ledger VALUES (2, 2)").await;
    exec(&mut new, "COMMIT").await;

    let mut observer = connect(&db.url).await;
    let rows: Vec<(i32, u64)> = observer.query("SELECT id, term FROM ledger ORDER BY id").await.unwrap();
    assert_eq!(rows, vec![(2, 2)], "only the write fenced at the current term committed");
    assert_no_locks_held(&mut observer, "after the failed assert_leader").await;
    db.drop_db().await;
}

// ---- The expiry event ----

async fn event_status(c: &mut Conn) -> String {
    c.query_first(
        "SELECT STATUS FROM information_schema.EVENTS \
         WHERE EVENT_SCHEMA = DATABASE() AND EVENT_NAME = 'leader_election_expire'",
    )
    .await
    .unwrap()
    .expect("the event leader_election_expire exists")
}

/// Waits (up to 15 s) until the seat of `service` is vacant; false when it never is.
async fn wait_vacated(c: &mut Conn, service: &str) -> bool {
    for _ in 0..150 {
        if seat(c, service).await.unwrap().leader_id.is_none() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// The event is installed switched off; set_expiry_event(1) switches it on, and then it vacates
/// expired seats and ends their terms 'expired' at the lease's end, keeping the term, leaving
/// valid leases alone; set_expiry_event(0) switches it off again.
#[tokio::test]
async fn the_expiry_event_vacates_expired_seats() {
    let (db, mut c) = setup("contract_event").await;
    let scheduler: String = c.query_first("SELECT @@event_scheduler").await.unwrap().unwrap();
    assert_eq!(scheduler, "ON", "this test needs a server started with --event-scheduler=ON");
    assert_eq!(event_status(&mut c).await, "DISABLED", "installed switched off");
    assert_eq!(set_expiry_event(&mut c, 0).await.flag("event_enabled"), 0);
    assert_eq!(set_expiry_event(&mut c, 1).await.flag("event_enabled"), 1);
    assert_eq!(event_status(&mut c).await, "ENABLED");

    campaign(&mut c, "lapses", "a", SHORT).await;
    campaign(&mut c, "stays", "b", LONG).await;
    let lease_end = seat(&mut c, "lapses").await.unwrap().expires_us;
    assert!(wait_vacated(&mut c, "lapses").await, "the event did not vacate the expired seat within 15 s");

    let vacated = seat(&mut c, "lapses").await.unwrap();
    assert_eq!((vacated.leader_id, vacated.expires_us, vacated.term), (None, None, 1), "vacated, term kept");
    let t = &history(&mut c, "lapses").await[0];
    assert_eq!((t.ended_us, t.ended_how.as_deref()), (lease_end, Some("expired")), "ended at the lease's end");
    assert_vacant(&mut c, "lapses", 1, "after the event").await;
    let stays = seat(&mut c, "stays").await.unwrap();
    assert_eq!(stays.leader_id.as_deref(), Some("b"), "a valid lease is left alone");
    assert_eq!(history(&mut c, "stays").await[0].ended_how, None);
    assert_seat(&campaign(&mut c, "lapses", "c", LONG).await, 1, "c", 2, "the next term is 2, never 1 again");

    assert_eq!(set_expiry_event(&mut c, 0).await.flag("event_enabled"), 0);
    assert_eq!(event_status(&mut c).await, "DISABLED");
    // Switched off: an expired lease stays in the table past two periods of the event.
    campaign(&mut c, "unswept", "d", SHORT).await;
    tokio::time::sleep(Duration::from_millis(2_600)).await;
    assert_eq!(seat(&mut c, "unswept").await.unwrap().leader_id.as_deref(), Some("d"), "the event is off");
    db.drop_db().await;
}

/// The expiry event's sweep (run here directly) never waits for a lock: a seat whose lease ran
/// out while its leader's transaction fenced with assert_leader is still open is skipped (the
/// sweep returns at once although its lock wait timeout is 1 s), and swept once that ends.
#[tokio::test]
async fn the_expiry_sweep_skips_a_seat_held_by_a_fenced_transaction() {
    let (db, mut fenced) = setup("contract_sweep_skips").await;
    const LEASE: i64 = 2_000; // generous: assert_leader must find it valid
    campaign(&mut fenced, "svc", "a", LEASE).await;
    let lease_end = seat(&mut fenced, "svc").await.unwrap().expires_us;
    exec(&mut fenced, "START TRANSACTION").await;
    assert_leader(&mut fenced, "svc", "a", 1).await.unwrap();
    outlive_busy(&mut fenced, LEASE).await;

    let mut sweeper = connect(&db.url).await;
    exec(&mut sweeper, "SET SESSION innodb_lock_wait_timeout = 1").await;
    sweeper.query_drop("CALL leader_election_expire_stale()").await.expect("the sweep does not wait");
    assert_eq!(seat(&mut sweeper, "svc").await.unwrap().leader_id.as_deref(), Some("a"), "skipped while fenced");

    exec(&mut fenced, "COMMIT").await;
    sweeper.query_drop("CALL leader_election_expire_stale()").await.unwrap();
    let swept = seat(&mut sweeper, "svc").await.unwrap();
    assert_eq!((swept.leader_id, swept.term), (None, 1));
    let t = &history(&mut sweeper, "svc").await[0];
    assert_eq!((t.ended_us, t.ended_how.as_deref()), (lease_end, Some("expired")));
    db.drop_db().await;
}

// ---- Ids ----

/// service_id and node_id are compared exactly, byte for byte: case, trailing spaces, accents
/// (composed or not) and quotes all make different ids; ids come back exactly as given.
#[tokio::test]
async fn ids_are_compared_byte_for_byte() {
    let (db, mut c) = setup("contract_bytes").await;
    campaign(&mut c, "svc", "a", LONG).await;
    for node in ["a ", "A", " a", "á", "a\u{301}", "a'", "'a'"] {
        assert_seat(&campaign(&mut c, "svc", node, LONG).await, 0, "a", 1, node);
        assert_eq!(am_i_leader(&mut c, "svc", node).await.flag("is_leader"), 0, "{node:?}");
        assert_eq!(resign(&mut c, "svc", node).await.flag("resigned"), 0, "{node:?}");
        assert_leader(&mut c, "svc", node, 1).await.unwrap_err().assert_not_leader(node);
    }
    assert_eq!(am_i_leader(&mut c, "svc", "a").await.flag("is_leader"), 1);

    // Services that differ by a byte are different election groups, each with its own seat.
    let services = ["svc ", "SVC", "svç", "sv\u{63}\u{327}", "s'v\"c\\`%_", "🚀 launch", "svc\t"];
    for (i, service) in services.iter().enumerate() {
        let node = format!("node {i} 'quoted' \"double\" \\ é 🚀 ");
        let r = campaign(&mut c, service, &node, LONG).await;
        assert_seat(&r, 1, &node, 1, service);
        let r = current_leader(&mut c, service).await;
        assert_eq!(r.text("leader_id"), Some(node.clone()), "{service:?} comes back exactly");
        let stored: String = c
            .exec_first("SELECT HEX(leader_id) FROM leader_election WHERE service_id = CAST(? AS BINARY)", (*service,))
            .await
            .unwrap()
            .unwrap();
        let expected: String = node.bytes().map(|b| format!("{b:02X}")).collect();
        assert_eq!(stored, expected, "stored as its UTF-8 bytes");
    }
    let seats: Option<i64> = c.query_first("SELECT COUNT(*) FROM leader_election").await.unwrap();
    assert_eq!(seats, Some(1 + services.len() as i64));
    db.drop_db().await;
}

// ---- The history view ----

/// leader_election_terms shows the history as text, one row per term, with how each term began
/// and ended (NULL while current).
#[tokio::test]
async fn the_terms_view_reads_the_history_as_text() {
    let (db, mut c) = setup("contract_view").await;
    campaign(&mut c, "sé", "a", LONG).await;
    resign(&mut c, "sé", "a").await;
    campaign(&mut c, "sé", "b", LONG).await;
    reelect(&mut c, "sé").await;
    campaign(&mut c, "sé", "c", LONG).await;
    force_leader(&mut c, "sé", "d", LONG).await;
    let rows: Vec<(String, u64, String, String, Option<String>, bool)> = c
        .query(
            "SELECT service_id, term, leader_id, began_how, ended_how, ended_at IS NULL \
             FROM leader_election_terms ORDER BY term",
        )
        .await
        .unwrap();
    let s = "sé".to_string();
    assert_eq!(rows, vec![
        (s.clone(), 1, "a".into(), "elected".into(), Some("resigned".into()), false),
        (s.clone(), 2, "b".into(), "elected".into(), Some("reelected".into()), false),
        (s.clone(), 3, "c".into(), "elected".into(), Some("forced_out".into()), false),
        (s.clone(), 4, "d".into(), "forced".into(), None, true),
    ]);
    db.drop_db().await;
}
