//! Handover in plain SQL (issue "Handover"): `CALL handover(service, to_node)` (operator) and
//! `CALL resign_to(service, node, to_node)` (the leader itself) end the current term, vacate the
//! seat and reserve it for the named node for one lease. Checked against the real server: the
//! old fence fails at once, only the named node takes the seat (a new term) while the
//! reservation lasts, everybody may after it lapses, two handovers race safely, and a refused
//! call changes nothing.

use crate::{common, sql_support};
use std::time::Duration;

use common::TestDb;
use mysql_async::Conn;
use mysql_async::prelude::Queryable;
use mysql_async::{Opts, OptsBuilder, Row};
use mysqlleader::procedures::{self, Account, Role};
use sql_support::*;

async fn handover(c: &mut Conn, service: &str, to: &str) -> Result<Reply, Refusal> {
    call(c, "CALL handover(?, ?)", (service, to)).await
}

async fn resign_to(c: &mut Conn, service: &str, node: &str, to: &str) -> Result<Reply, Refusal> {
    call(c, "CALL resign_to(?, ?, ?)", (service, node, to)).await
}

/// (ended_how, ended_by) of `term`, and the number of terms of `service` still open.
async fn term_end(c: &mut Conn, service: &str, term: u64) -> (Option<String>, Option<String>, i64) {
    let end: Option<(Option<String>, Option<String>)> = c
        .exec_first("SELECT CAST(ended_how AS CHAR), ended_by FROM leader_election_history WHERE service_id = ? AND term = ?", (service, term))
        .await
        .expect("history");
    let (how, by) = end.expect("the term is in the history");
    let open: i64 = c
        .exec_first("SELECT COUNT(*) FROM leader_election_history WHERE service_id = ? AND ended_at IS NULL", (service,))
        .await
        .expect("history")
        .unwrap();
    (how, by, open)
}

async fn seat_rows(c: &mut Conn, service: &str) -> i64 {
    c.exec_first("SELECT COUNT(*) FROM leader_election WHERE service_id = ?", (service,)).await.expect("seat").unwrap()
}

/// The operator's handover: the old fence fails from its commit on, a third node cannot take the
/// seat, the named node takes it with the next term, and the history says who asked.
#[tokio::test]
async fn handover_ends_the_term_and_only_the_named_node_takes_the_seat() {
    let db = TestDb::migrated("handover_basic").await;
    let mut c = connect(&db.url).await;
    assert_eq!(campaign(&mut c, "svc", "a", 60_000).await.flag("is_leader"), 1);
    assert_eq!(campaign(&mut c, "svc", "b", 60_000).await.flag("is_leader"), 0);

    let r = handover(&mut c, "svc", "b").await.expect("handover");
    assert_eq!((r.flag("is_leader"), r.text("leader_id"), r.term(), r.remaining_ms()), (0, None, 1, 0), "{r:?}");
    let (how, by, open) = term_end(&mut c, "svc", 1).await;
    assert_eq!(how.as_deref(), Some("handed_over"));
    assert!(by.is_some_and(|by| by.contains('@')), "ended_by names the session that asked");
    assert_eq!(open, 0, "no term is open between the two");

    // The old leader's fence fails now, before anyone has the seat.
    assert_leader(&mut c, "svc", "a", 1).await.expect_err("the old fence").assert_not_leader("old fence");
    c.query_drop("ROLLBACK").await.unwrap();
    // The named node waits until the old leader has acknowledged the handover (it still
    // believes it leads until its next renew's answer comes back), or its lease has run out.
    let r = campaign(&mut c, "svc", "b", 60_000).await;
    assert_eq!((r.flag("is_leader"), r.text("leader_id")), (0, None), "b before a's acknowledgement: {r:?}");
    // Neither the old leader nor a third node takes the reserved seat; both see it vacant.
    for node in ["a", "c"] {
        let r = campaign(&mut c, "svc", node, 60_000).await;
        assert_eq!((r.flag("is_leader"), r.text("leader_id"), r.term(), r.remaining_ms()), (0, None, 1, 0), "{node}: {r:?}");
    }
    assert_eq!(current_leader(&mut c, "svc").await.text("leader_id"), None);
    // The old leader's campaign is no acknowledgement: it may be its renew, sent while it still
    // led, whose answer is on its way back. The named node still waits.
    let r = campaign(&mut c, "svc", "b", 60_000).await;
    assert_eq!((r.flag("is_leader"), r.text("leader_id")), (0, None), "b after a's campaign: {r:?}");
    // Nor is another node's resign. The old leader's resign, sent once it stopped acting as
    // leader, is: it ends no lease.
    assert_eq!(resign(&mut c, "svc", "c").await.flag("resigned"), 0);
    assert_eq!(campaign(&mut c, "svc", "b", 60_000).await.flag("is_leader"), 0, "b after c's resign");
    let r = resign(&mut c, "svc", "a").await;
    assert_eq!((r.flag("resigned"), r.term()), (0, 1), "a's acknowledgement: {r:?}");
    // The named node takes it, at the next term, elected.
    let r = campaign(&mut c, "svc", "b", 60_000).await;
    assert_eq!((r.flag("is_leader"), r.term()), (1, 2), "{r:?}");
    let began: String = c
        .exec_first("SELECT CAST(began_how AS CHAR) FROM leader_election_history WHERE service_id = 'svc' AND term = 2", ())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(began, "elected");
    // The reservation ended with the take: after b resigns, anybody may lead.
    resign(&mut c, "svc", "b").await;
    assert_eq!(campaign(&mut c, "svc", "c", 60_000).await.flag("is_leader"), 1);
    // A handover to the leader itself changes nothing.
    let r = handover(&mut c, "svc", "c").await.expect("handover to the leader");
    assert_eq!((r.flag("is_leader"), r.text("leader_id").as_deref(), r.term()), (1, Some("c"), 3), "{r:?}");
    assert_eq!(am_i_leader(&mut c, "svc", "c").await.flag("is_leader"), 1);
    db.drop_db().await;
}

/// A handover to a node that never campaigns lapses after one lease (the old leader's), and the
/// service elects as usual; a handover of a vacant seat, or one never led, reserves it too.
#[tokio::test]
async fn a_reservation_lapses_after_one_lease() {
    let db = TestDb::migrated("handover_lapse").await;
    let mut c = connect(&db.url).await;
    assert_eq!(campaign(&mut c, "svc", "a", 400).await.flag("is_leader"), 1);
    handover(&mut c, "svc", "ghost").await.expect("handover");
    // a acknowledges the handover: the reservation's lease counts from now.
    assert_eq!(campaign(&mut c, "svc", "a", 400).await.flag("is_leader"), 0, "a's renew sees the handover");
    assert_eq!(resign(&mut c, "svc", "a").await.flag("resigned"), 0, "a's acknowledgement");
    assert_eq!(campaign(&mut c, "svc", "b", 60_000).await.flag("is_leader"), 0, "reserved for ghost");
    tokio::time::sleep(Duration::from_millis(450)).await;
    let r = campaign(&mut c, "svc", "b", 60_000).await;
    assert_eq!((r.flag("is_leader"), r.term()), (1, 2), "the reservation lapsed: {r:?}");

    // The displaced leader never renews again (it crashed): the named node may take the seat
    // once the old lease has run out, and has it to itself for one lease after that.
    assert_eq!(campaign(&mut c, "dead", "a", 400).await.flag("is_leader"), 1);
    handover(&mut c, "dead", "n").await.expect("handover");
    assert_eq!(campaign(&mut c, "dead", "n", 60_000).await.flag("is_leader"), 0, "a's lease still runs");
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(campaign(&mut c, "dead", "b", 60_000).await.flag("is_leader"), 0, "reserved for n after a's lease");
    assert_eq!(campaign(&mut c, "dead", "n", 60_000).await.flag("is_leader"), 1, "n once a's lease ran out");

    // Never led: the seat is created and reserved (10 s by default).
    let r = handover(&mut c, "fresh", "b").await.expect("handover of a new service");
    assert_eq!((r.flag("is_leader"), r.term()), (0, 0));
    assert_eq!(campaign(&mut c, "fresh", "a", 60_000).await.flag("is_leader"), 0);
    assert_eq!(campaign(&mut c, "fresh", "b", 60_000).await.flag("is_leader"), 1);
    db.drop_db().await;
}

/// force_leader and reelect end a pending reservation: an operator's later word wins.
#[tokio::test]
async fn force_and_reelect_end_a_reservation() {
    let db = TestDb::migrated("handover_override").await;
    let mut c = connect(&db.url).await;
    campaign(&mut c, "svc", "a", 60_000).await;
    handover(&mut c, "svc", "ghost").await.expect("handover");
    reelect(&mut c, "svc").await;
    assert_eq!(campaign(&mut c, "svc", "c", 60_000).await.flag("is_leader"), 1, "reelect: anybody wins");
    handover(&mut c, "svc", "ghost").await.expect("handover");
    let r = force_leader(&mut c, "svc", "d", 60_000).await;
    assert_eq!(r.flag("is_leader"), 1);
    resign(&mut c, "svc", "d").await;
    assert_eq!(campaign(&mut c, "svc", "e", 60_000).await.flag("is_leader"), 1, "force ended the reservation");
    db.drop_db().await;
}

/// Two operators hand over at once to different nodes, and both named nodes (and the old leader)
/// campaign at once, many times: never two leaders, terms rise by one, the later handover's node
/// or the earlier's leads, and every term but the current one is closed.
#[tokio::test]
async fn two_handovers_race_safely() {
    let db = TestDb::migrated("handover_race").await;
    let mut conns = Vec::new();
    for _ in 0..5 {
        conns.push(connect(&db.url).await);
    }
    for round in 0..20u64 {
        let service = format!("race{round}");
        campaign(&mut conns[0], &service, "old", 60_000).await;
        let [c1, c2, c3, c4, c5] = &mut conns[..] else { unreachable!() };
        let (h1, h2, r1, r2, r3) = tokio::join!(
            handover(c1, &service, "x"),
            handover(c2, &service, "y"),
            call(c3, "CALL campaign(?, 'x', 60000)", (service.as_str(),)),
            call(c4, "CALL campaign(?, 'y', 60000)", (service.as_str(),)),
            call(c5, "CALL campaign(?, 'old', 60000)", (service.as_str(),)),
        );
        h1.expect("handover 1");
        h2.expect("handover 2");
        let winners: Vec<_> = [r1, r2, r3].into_iter().map(|r| r.expect("campaign")).filter(|r| r.flag("is_leader") == 1).collect();
        // Campaigns that ran before both handovers renew old's seat (old may win); what matters:
        // at most one leader at a time, and the history agrees.
        let c = &mut conns[0];
        for node in ["x", "y", "old"] {
            campaign(c, &service, node, 60_000).await;
        }
        let leader = current_leader(c, &service).await;
        let rows: Vec<(u64, Option<String>)> = c
            .exec(
                "SELECT term, CAST(ended_how AS CHAR) FROM leader_election_history WHERE service_id = ? ORDER BY term",
                (service.as_str(),),
            )
            .await
            .unwrap();
        let open = rows.iter().filter(|(_, how)| how.is_none()).count();
        assert!(open <= 1, "round {round}: at most one open term: {rows:?} winners {winners:?}");
        for (i, (term, _)) in rows.iter().enumerate() {
            assert_eq!(*term, i as u64 + 1, "round {round}: terms rise by one: {rows:?}");
        }
        if let Some(l) = leader.text("leader_id") {
            assert_eq!(open, 1, "round {round}: the leader's term is open");
            assert_eq!(leader.term(), rows.len() as u64, "round {round}: the leader holds the last term");
            assert!(["x", "y", "old"].contains(&l.as_str()));
        }
    }
    db.drop_db().await;
}

/// resign_to: the leader's own handover. A node that does not lead changes nothing; handing over
/// to itself is bad input that names to_node; a leader's call ends its term 'handed_over' and
/// reserves the seat. Bad input to handover names the parameter and leaves no seat behind.
#[tokio::test]
async fn resign_to_and_bad_input() {
    let db = TestDb::migrated("handover_resign_to").await;
    let mut c = connect(&db.url).await;
    campaign(&mut c, "svc", "a", 60_000).await;
    let r = resign_to(&mut c, "svc", "b", "c").await.expect("a follower's resign_to");
    assert_eq!((r.flag("resigned"), r.term()), (0, 1));
    assert_eq!(am_i_leader(&mut c, "svc", "a").await.flag("is_leader"), 1, "nothing changed");
    resign_to(&mut c, "svc", "a", "a").await.expect_err("to itself").assert_invalid("to_node", "resign_to itself");
    resign_to(&mut c, "svc", "a", "").await.expect_err("empty").assert_invalid("to_node", "empty to_node");
    let r = resign_to(&mut c, "svc", "a", "b").await.expect("resign_to");
    assert_eq!((r.flag("resigned"), r.term()), (1, 1));
    assert_eq!(term_end(&mut c, "svc", 1).await.0.as_deref(), Some("handed_over"));
    assert_eq!(campaign(&mut c, "svc", "a", 60_000).await.flag("is_leader"), 0, "reserved for b");
    assert_eq!(campaign(&mut c, "svc", "b", 60_000).await.flag("is_leader"), 1);

    handover(&mut c, "nosuch", "").await.expect_err("empty").assert_invalid("to_node", "empty to_node");
    handover(&mut c, "nosuch", &"n".repeat(129)).await.expect_err("long").assert_invalid("to_node", "long to_node");
    call(&mut c, "CALL handover(NULL, 'b')", ()).await.expect_err("NULL").assert_invalid("service_id", "NULL service");
    assert_eq!(seat_rows(&mut c, "nosuch").await, 0, "a refused handover creates no seat");
    db.drop_db().await;
}

/// Roles: the app role may hand over its own seat (resign_to) but not another's (handover is
/// the operator's); an operator limited to some services is refused elsewhere, with no seat left.
#[tokio::test]
async fn handover_is_the_operators_and_resign_to_the_leaders() {
    let db = TestDb::migrated("handover_roles").await;
    let mut admin = connect(&db.url).await;
    let tag = std::process::id();
    let (app, op) = (format!("happ_{tag}"), format!("hop_{tag}"));
    let mut accounts = Vec::new();
    for (user, role, services) in [(&app, Role::App, vec![]), (&op, Role::Operator, vec!["billing%".to_string()])] {
        exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
        exec(&mut admin, &format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")).await;
        procedures::grant(&db.pool, &Account::parse(&format!("'{user}'@'%'")).unwrap(), role, &services).await.expect("grant");
        let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(user.as_str())).pass(Some("pw"));
        accounts.push(Conn::new(opts).await.expect("connect"));
    }
    let [a, o] = &mut accounts[..] else { unreachable!() };
    assert_eq!(campaign(a, "svc", "n1", 60_000).await.flag("is_leader"), 1);
    let denied = handover(a, "svc", "n2").await.expect_err("the app role may not hand over");
    assert_eq!(denied.code, 1370, "{denied:?}");
    assert_eq!(resign_to(a, "svc", "n1", "n2").await.expect("resign_to").flag("resigned"), 1);

    let refused = handover(o, "payroll", "n2").await.expect_err("outside the operator's services");
    assert_eq!(refused.state, "45002", "{refused:?}");
    assert_eq!(seat_rows(&mut admin, "payroll").await, 0, "a refused handover creates no seat");
    campaign(&mut admin, "billing_eu", "n1", 60_000).await;
    assert_eq!(handover(o, "billing_eu", "n2").await.expect("inside").flag("is_leader"), 0);
    for user in [&app, &op] {
        exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    }
    db.drop_db().await;
}

/// `CALL handover_seats(service_ids, to_node)` as any SQL client sends it: its rows as
/// (service_id, is_leader, leader_id, term, lease_remaining_ms), or the refusal.
async fn handover_seats(c: &mut Conn, ids: &str, to: &str) -> Result<Vec<(String, i64, Option<String>, u64, i64)>, Refusal> {
    c.exec("CALL handover_seats(?, ?)", (ids, to)).await.map_err(refusal)
}

/// handover_seats (issue 42, "Fleets"): each listed seat is handed over as handover hands over
/// one: a's terms end 'handed_over' (by the caller), a's fences fail, b takes each seat once a
/// acknowledges (resign_seats), a seat b leads already is left as it is, a vacant one is
/// reserved; a service with no seat is left out of the answer and gets no seat. The rows come
/// in service_id order.
#[tokio::test]
async fn handover_seats_hands_over_each_seat_as_handover_does() {
    let db = TestDb::migrated("handover_seats").await;
    let mut c = connect(&db.url).await;
    for s in ["s1", "s2", "s3"] {
        assert_eq!(campaign(&mut c, s, "a", 60_000).await.flag("is_leader"), 1);
    }
    assert_eq!(campaign(&mut c, "led_by_b", "b", 60_000).await.flag("is_leader"), 1);
    assert_eq!(campaign(&mut c, "vacant", "c", 60_000).await.flag("is_leader"), 1);
    assert_eq!(resign(&mut c, "vacant", "c").await.flag("resigned"), 1);

    let rows = handover_seats(&mut c, r#"["s3", "nosuch", "s1", "led_by_b", "s2", "vacant"]"#, "b").await.expect("handover_seats");
    let got: Vec<(&str, i64, Option<&str>, u64)> = rows.iter().map(|r| (r.0.as_str(), r.1, r.2.as_deref(), r.3)).collect();
    assert_eq!(
        got,
        [("led_by_b", 1, Some("b"), 1), ("s1", 0, None, 1), ("s2", 0, None, 1), ("s3", 0, None, 1), ("vacant", 0, None, 1)],
        "one row per listed seat, in service_id order; nosuch left out"
    );
    assert!(rows[0].4 > 50_000, "b's lease runs on: {rows:?}");
    assert!(rows[1..].iter().all(|r| r.4 == 0), "a vacated seat has no lease: {rows:?}");
    assert_eq!(seat_rows(&mut c, "nosuch").await, 0, "no seat is created for an unknown service");
    assert!(!in_transaction(&mut c).await, "the call ended its own transaction");
    for s in ["s1", "s2", "s3"] {
        let (how, by, open) = term_end(&mut c, s, 1).await;
        assert_eq!(how.as_deref(), Some("handed_over"), "{s}");
        assert!(by.is_some_and(|by| by.contains('@')), "{s}: ended_by names the session that asked");
        assert_eq!(open, 0, "{s}: no term open between the two");
        assert_leader(&mut c, s, "a", 1).await.expect_err("the old fence").assert_not_leader(s);
        c.query_drop("ROLLBACK").await.unwrap();
        // Reserved for b, which waits for a's acknowledgement; nobody else takes it.
        assert_eq!(campaign(&mut c, s, "b", 60_000).await.flag("is_leader"), 0, "{s}: b before a's acknowledgement");
        assert_eq!(campaign(&mut c, s, "c", 60_000).await.flag("is_leader"), 0, "{s}: a third node");
    }
    assert_eq!(am_i_leader(&mut c, "led_by_b", "b").await.flag("is_leader"), 1, "b's own seat is left as it was");
    assert_eq!(history(&mut c, "led_by_b").await.len(), 1);
    // a acknowledges all three at once (its session's shutdown): b takes each, at term 2, once.
    let acked = procedures::resign_seats(&db.pool, "a", &["s1", "s2", "s3"]).await.expect("a's acknowledgement");
    assert!(acked.is_empty(), "a held no valid lease any more: {acked:?}");
    for s in ["s1", "s2", "s3"] {
        let r = campaign(&mut c, s, "b", 60_000).await;
        assert_eq!((r.flag("is_leader"), r.term()), (1, 2), "{s}: {r:?}");
        assert_eq!(campaign(&mut c, s, "b", 60_000).await.term(), 2, "{s}: b's renew keeps the term");
        let terms = history(&mut c, s).await;
        assert_eq!(terms.iter().map(|t| (t.term, t.leader_id.as_str(), t.began_how.as_str())).collect::<Vec<_>>(),
                   [(1, "a", "elected"), (2, "b", "elected")], "{s}");
    }
    // The vacant seat was reserved for b: c may not take it, b may, at once (no lease ended).
    assert_eq!(campaign(&mut c, "vacant", "c", 60_000).await.flag("is_leader"), 0);
    assert_eq!(campaign(&mut c, "vacant", "b", 60_000).await.term(), 2);
    // Sent again, the list changes nothing: b leads every seat.
    let again = procedures::handover_seats(&db.pool, &["s1", "s2", "s3", "vacant", "led_by_b"], "b").await.expect("again");
    assert!(again.iter().all(|s| s.is_leader && s.leader_id.as_deref() == Some("b")), "{again:?}");
    assert_eq!(again.len(), 5);
    db.drop_db().await;
}

/// handover_seats waits for a seat's locks as handover does, for at most about 1 s per lock: a
/// seat whose term an application's fenced transaction holds is left as it was (no row), the
/// others are handed over; sent again once the fence ended, it is handed over too.
#[tokio::test]
async fn handover_seats_leaves_a_seat_it_cannot_lock_within_the_bound() {
    let db = TestDb::migrated("handover_seats_fence").await;
    let mut c = connect(&db.url).await;
    for s in ["f1", "f2", "f3"] {
        assert_eq!(campaign(&mut c, s, "a", 60_000).await.flag("is_leader"), 1);
    }
    let mut fenced = connect(&db.url).await;
    exec(&mut fenced, "START TRANSACTION").await;
    call(&mut fenced, "CALL assert_leader('f2', 'a', 1)", ()).await.expect("the fence");
    let t0 = std::time::Instant::now();
    let rows = procedures::handover_seats(&db.pool, &["f1", "f2", "f3"], "b").await.expect("handover_seats");
    let took = t0.elapsed();
    assert_eq!(rows.iter().map(|r| r.service_id.as_str()).collect::<Vec<_>>(), ["f1", "f3"], "the fenced f2 left out: {rows:?}");
    assert!(took < Duration::from_secs(8), "bounded: {took:?}");
    assert_eq!(seat(&mut c, "f2").await.unwrap().leader_id.as_deref(), Some("a"), "f2 is still a's");
    assert_eq!(history(&mut c, "f2").await[0].ended_how, None, "f2's term still open");
    // The fence's transaction commits what it wrote under term 1, still a's then.
    exec(&mut fenced, "COMMIT").await;
    let rows = procedures::handover_seats(&db.pool, &["f2"], "b").await.expect("again");
    assert_eq!(rows.iter().map(|r| (r.service_id.as_str(), r.is_leader, r.term)).collect::<Vec<_>>(), [("f2", false, 1)]);
    assert_eq!(term_end(&mut c, "f2", 1).await.0.as_deref(), Some("handed_over"));
    drop(fenced);
    db.drop_db().await;
}

/// A bad list is refused whole, naming service_ids (not JSON, not an array, duplicates, an
/// element that is no id), and so is a bad to_node: nothing changes, nothing is left open. An
/// empty list answers no row.
#[tokio::test]
async fn handover_seats_refuses_a_bad_list_whole() {
    let db = TestDb::migrated("handover_seats_bad").await;
    let mut c = connect(&db.url).await;
    assert_eq!(campaign(&mut c, "s1", "a", 60_000).await.flag("is_leader"), 1);
    for bad in ["not json", r#"{"s1": 1}"#, r#""s1""#, r#"["s1", "s1"]"#, r#"["s1", null]"#, r#"["s1", 5]"#, r#"[""]"#,
                &format!(r#"["s1", "{}"]"#, "x".repeat(129))] {
        handover_seats(&mut c, bad, "b").await.expect_err(bad).assert_invalid("service_ids", bad);
        assert!(!in_transaction(&mut c).await, "{bad}: nothing left open");
    }
    let e = c.exec::<Row, _, _>("CALL handover_seats(NULL, 'b')", ()).await.map_err(refusal).expect_err("NULL");
    e.assert_invalid("service_ids", "NULL list");
    handover_seats(&mut c, r#"["s1"]"#, "").await.expect_err("empty to_node").assert_invalid("to_node", "empty to_node");
    handover_seats(&mut c, r#"["s1"]"#, &"n".repeat(129)).await.expect_err("long to_node").assert_invalid("to_node", "long to_node");
    assert_eq!(am_i_leader(&mut c, "s1", "a").await.flag("is_leader"), 1, "nothing changed");
    assert_eq!(history(&mut c, "s1").await[0].ended_how, None);
    assert!(handover_seats(&mut c, "[]", "b").await.expect("an empty list").is_empty());
    db.drop_db().await;
}

/// Roles and per-service access: the app role may not call handover_seats (handover is the
/// operator's); an operator limited to billing% hands over the listed seats inside its
/// patterns, and a listed service outside them is left out (as resign_seats leaves it out):
/// unchanged, not in the answer, no seat made for it.
#[tokio::test]
async fn handover_seats_is_the_operators_within_its_patterns() {
    let db = TestDb::migrated("handover_seats_roles").await;
    let mut admin = connect(&db.url).await;
    let tag = std::process::id();
    let (app, op) = (format!("hsapp_{tag}"), format!("hsop_{tag}"));
    let mut accounts = Vec::new();
    for (user, role, services) in [(&app, Role::App, vec![]), (&op, Role::Operator, vec!["billing%".to_string()])] {
        exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
        exec(&mut admin, &format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")).await;
        procedures::grant(&db.pool, &Account::parse(&format!("'{user}'@'%'")).unwrap(), role, &services).await.expect("grant");
        let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(user.as_str())).pass(Some("pw"));
        accounts.push(Conn::new(opts).await.expect("connect"));
    }
    let [a, o] = &mut accounts[..] else { unreachable!() };
    for s in ["billing_eu", "billing_us", "payroll"] {
        assert_eq!(campaign(&mut admin, s, "n1", 60_000).await.flag("is_leader"), 1);
    }
    let denied = handover_seats(a, r#"["billing_eu"]"#, "n2").await.expect_err("the app role may not hand over");
    assert_eq!(denied.code, 1370, "{denied:?}");

    let rows = handover_seats(o, r#"["payroll", "billing_us", "billing_eu", "billing_new"]"#, "n2").await.expect("inside its patterns");
    let got: Vec<(&str, i64)> = rows.iter().map(|r| (r.0.as_str(), r.1)).collect();
    assert_eq!(got, [("billing_eu", 0), ("billing_us", 0)], "payroll left out, billing_new has no seat");
    assert_eq!(am_i_leader(&mut admin, "payroll", "n1").await.flag("is_leader"), 1, "payroll unchanged");
    assert_eq!(history(&mut admin, "payroll").await[0].ended_how, None);
    assert_eq!(seat_rows(&mut admin, "billing_new").await, 0);
    for s in ["billing_eu", "billing_us"] {
        assert_eq!(term_end(&mut admin, s, 1).await.0.as_deref(), Some("handed_over"), "{s}");
    }
    // Nothing but outside services: an empty answer, nothing changed.
    assert!(handover_seats(o, r#"["payroll"]"#, "n2").await.expect("outside only").is_empty());
    assert_eq!(am_i_leader(&mut admin, "payroll", "n1").await.flag("is_leader"), 1);
    drop(accounts);
    for user in [&app, &op] {
        exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    }
    db.drop_db().await;
}
