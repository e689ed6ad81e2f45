//! One call for many seats (issue "Sessions"): `CALL renew_seats(node, lease_ms, service_ids)`
//! renews, in one statement, exactly the seats the node holds with a valid lease, each at its
//! own term and with no history written, and tells who leads the other listed seats; it leaves
//! alone (and out of its answer) a seat vacant, expired or never created, and one outside the
//! account's services; a refused call changes nothing.

use crate::{common, sql_support};
use std::time::Duration;

use common::TestDb;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};
use mysqlleader::procedures::{self, Account, Role};
use sql_support::*;

async fn history_rows(c: &mut Conn) -> i64 {
    c.query_first("SELECT COUNT(*) FROM leader_election_history").await.unwrap().unwrap()
}

#[tokio::test]
async fn renew_seats_renews_exactly_the_nodes_valid_seats() {
    let db = TestDb::migrated("sessions_renew").await;
    let mut c = connect(&db.url).await;
    for s in ["s1", "s2", "s3"] {
        assert_eq!(campaign(&mut c, s, "a", 500).await.flag("is_leader"), 1);
    }
    assert_eq!(campaign(&mut c, "s4", "b", 60_000).await.flag("is_leader"), 1);
    force_leader(&mut c, "s3", "b", 60_000).await;
    let before = history_rows(&mut c).await;

    let ids = ["s1", "s2", "s3", "s4", "never"];
    let renewed = procedures::renew_seats(&db.pool, "a", Duration::from_secs(30), &ids).await.expect("renew_seats");
    let (mine, others): (Vec<_>, Vec<_>) = renewed.iter().partition(|r| r.answer.is_leader);
    let names: Vec<&str> = mine.iter().map(|r| r.service_id.as_str()).collect();
    assert_eq!(names, ["s1", "s2"], "only a's valid seats are renewed: {renewed:?}");
    assert!(mine.iter().all(|r| r.answer.term == 1 && r.answer.lease_remaining > Duration::from_secs(29)
                            && r.answer.leader_id.as_deref() == Some("a")), "{renewed:?}");
    // The others listed that b leads are reported as b's, with b's term and lease (not renewed).
    let names: Vec<&str> = others.iter().map(|r| r.service_id.as_str()).collect();
    assert_eq!(names, ["s3", "s4"], "b's seats are reported, the never-created one is not: {renewed:?}");
    assert!(others.iter().all(|r| r.answer.leader_id.as_deref() == Some("b")
                              && r.answer.lease_remaining > Duration::from_secs(50)
                              && r.answer.lease_remaining <= Duration::from_secs(60)), "{renewed:?}");
    assert_eq!(others[0].answer.term, 2, "s3 was forced to b: term 2");
    assert_eq!(history_rows(&mut c).await, before, "a renew writes no history");
    // The leases really were extended: past the old 500 ms, a still leads both.
    tokio::time::sleep(Duration::from_millis(600)).await;
    for s in ["s1", "s2"] {
        assert_eq!(am_i_leader(&mut c, s, "a").await.flag("is_leader"), 1, "{s}");
    }
    assert_eq!(current_leader(&mut c, "s3").await.text("leader_id").as_deref(), Some("b"));
    // An expired seat is not renewed (campaign decides it: a new term).
    campaign(&mut c, "s5", "a", 200).await;
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(procedures::renew_seats(&db.pool, "a", Duration::from_secs(30), &["s5"]).await.unwrap().is_empty(),
            "an expired seat is neither renewed nor reported");
    // Bad input names the parameter and changes nothing.
    for bad in ["not json", "{\"a\":1}"] {
        let e = call(&mut c, "CALL renew_seats('a', 1000, ?)", (bad,)).await.expect_err("bad service_ids");
        e.assert_invalid("service_ids", bad);
    }
    call(&mut c, "CALL renew_seats('', 1000, '[]')", ()).await.expect_err("empty node").assert_invalid("node_id", "empty node");
    call(&mut c, "CALL renew_seats('a', 0, '[]')", ()).await.expect_err("lease 0").assert_invalid("lease_ms", "lease 0");
    db.drop_db().await;
}

/// A term an operator gave the node (force_leader) is left to the campaign that claims it: a
/// renew_seats that renewed it (a session's follower asking who leads) made it unclaimable, and
/// the seat stayed held at a term no process led (a Go test: a plain elector forced back to its
/// node never led again). Once claimed (renewed), renew_seats renews it as any other.
#[tokio::test]
async fn renew_seats_leaves_an_unclaimed_forced_term_to_the_campaign_that_claims_it() {
    let db = TestDb::migrated("sessions_forced").await;
    let mut c = connect(&db.url).await;
    assert_eq!(campaign(&mut c, "s1", "b", 60_000).await.flag("is_leader"), 1);
    force_leader(&mut c, "s1", "a", 60_000).await;
    let forced = seat(&mut c, "s1").await.unwrap();
    assert_eq!((forced.leader_id.as_deref(), forced.term), (Some("a"), 2));
    // Neither renewed nor reported: left to a campaign.
    let answer = procedures::renew_seats(&db.pool, "a", Duration::from_secs(30), &["s1"]).await.expect("renew_seats");
    assert!(answer.is_empty(), "an unclaimed forced term is left out: {answer:?}");
    let after = seat(&mut c, "s1").await.unwrap();
    assert_eq!(after.renewed_us, forced.renewed_us, "not renewed");
    // The process's campaign (holding no term) claims it.
    let claimed = procedures::campaign_holding(&db.pool, "s1", "a", Duration::from_secs(30), 0).await.expect("campaign");
    assert!(claimed.is_leader && claimed.term == 2, "the campaign claims the forced term: {claimed:?}");
    // Claimed: renew_seats renews it from now on.
    let answer = procedures::renew_seats(&db.pool, "a", Duration::from_secs(30), &["s1"]).await.expect("renew_seats");
    assert!(answer.len() == 1 && answer[0].answer.is_leader && answer[0].answer.term == 2, "{answer:?}");
    db.drop_db().await;
}

/// A seat another transaction has locked (a campaign or force in flight) is left out of the
/// answer, for a campaign of its own, and the other seats are renewed without waiting for it (a
/// wait would end in a lock-wait timeout for the whole call). A seat whose term the application's
/// fenced transaction holds is renewed like any other: the fence locks the term's row, not the
/// seat (assert_leader), so a long fenced job never costs its leader a renew.
#[tokio::test]
async fn renew_seats_skips_a_locked_seat_and_renews_the_others() {
    let db = TestDb::migrated("sessions_locked").await;
    let mut c = connect(&db.url).await;
    for s in ["s1", "s2", "s3"] {
        assert_eq!(campaign(&mut c, s, "a", 60_000).await.flag("is_leader"), 1);
    }
    let mut fenced = connect(&db.url).await;
    exec(&mut fenced, "START TRANSACTION").await;
    call(&mut fenced, "CALL assert_leader('s2', 'a', 1)", ()).await.expect("the fence");
    let mut locker = connect(&db.url).await;
    exec(&mut locker, "START TRANSACTION").await;
    exec(&mut locker, "SELECT term FROM leader_election WHERE service_id = 's3' FOR UPDATE").await;
    let started = std::time::Instant::now();
    let answer = procedures::renew_seats(&db.pool, "a", Duration::from_secs(30), &["s1", "s2", "s3"]).await.expect("no lock wait");
    let took = started.elapsed();
    let renewed: Vec<&str> = answer.iter().filter(|r| r.answer.is_leader).map(|r| r.service_id.as_str()).collect();
    assert_eq!(renewed, ["s1", "s2"], "the fenced s2 is renewed, the locked s3 left out: {answer:?}");
    assert!(took < Duration::from_secs(1), "the locked seat is skipped, not waited for ({took:?})");
    exec(&mut locker, "ROLLBACK").await;
    let answer = procedures::renew_seats(&db.pool, "a", Duration::from_secs(30), &["s1", "s2", "s3"]).await.unwrap();
    assert_eq!(answer.iter().filter(|r| r.answer.is_leader).count(), 3, "{answer:?}");
    // The fence still holds its term: it commits, at the term it asserted.
    exec(&mut fenced, "COMMIT").await;
    assert_eq!(seat(&mut c, "s2").await.unwrap().term, 1);
    drop((c, fenced, locker));
    db.drop_db().await;
}

/// campaign_seats never waits for a term an application's fenced transaction still holds,
/// even after its lease ran out: that seat is left as it is (a campaign of its own waits for
/// the fence, at most 1 s per try), and the other expired seats are taken.
#[tokio::test]
async fn campaign_seats_leaves_a_fenced_expired_term_alone() {
    let db = TestDb::migrated("sessions_fenced_take").await;
    let mut c = connect(&db.url).await;
    campaign(&mut c, "fenced", "b", 1_500).await;
    campaign(&mut c, "free", "b", 200).await;
    let mut fenced = connect(&db.url).await;
    exec(&mut fenced, "START TRANSACTION").await;
    call(&mut fenced, "CALL assert_leader('fenced', 'b', 1)", ()).await.expect("the fence, while the lease runs");
    // Both leases run out; the fenced transaction stays busy (an idle one ends with its lease).
    let until = std::time::Instant::now() + Duration::from_millis(1_800);
    while std::time::Instant::now() < until {
        exec(&mut fenced, "DO 0").await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let started = std::time::Instant::now();
    let answer = procedures::campaign_seats(&db.pool, "a", Duration::from_secs(30), &["fenced", "free"]).await.expect("campaign_seats");
    let took = started.elapsed();
    let taken: Vec<(&str, u64)> = answer.iter().filter(|r| r.answer.is_leader).map(|r| (r.service_id.as_str(), r.answer.term)).collect();
    assert_eq!(taken, [("free", 2)], "the fenced term is left alone: {answer:?}");
    assert!(took < Duration::from_secs(1), "not waited for ({took:?})");
    let held = seat(&mut c, "fenced").await.unwrap();
    assert_eq!((held.term, held.leader_id.as_deref()), (1, Some("b")), "the fenced seat is as it was");
    exec(&mut fenced, "COMMIT").await;
    let answer = procedures::campaign_seats(&db.pool, "a", Duration::from_secs(30), &["fenced", "free"]).await.unwrap();
    let taken: Vec<(&str, u64)> = answer.iter().filter(|r| r.answer.is_leader).map(|r| (r.service_id.as_str(), r.answer.term)).collect();
    assert_eq!(taken, [("fenced", 2)], "taken once the fence ended: {answer:?}");
    drop((c, fenced));
    db.drop_db().await;
}

/// `resign_seats` gives up, in one call, exactly the seats the node holds with a valid lease:
/// each term ends `resigned` now (its history row), the seat is vacant and the next campaign
/// takes it at once at the next term; a seat another node leads, an expired one, one never
/// created and one an application's fence holds are left out (the fenced one without waiting),
/// and the call leaves nothing open.
#[tokio::test]
async fn resign_seats_gives_up_exactly_the_nodes_valid_seats_in_one_call() {
    let db = TestDb::migrated("sessions_resign").await;
    let mut c = connect(&db.url).await;
    for s in ["s1", "s2", "s3"] {
        assert_eq!(campaign(&mut c, s, "a", 60_000).await.flag("is_leader"), 1);
    }
    assert_eq!(campaign(&mut c, "other", "b", 60_000).await.flag("is_leader"), 1);
    assert_eq!(campaign(&mut c, "lapsed", "a", 1).await.flag("is_leader"), 1);
    tokio::time::sleep(Duration::from_millis(20)).await; // the 1 ms lease of "lapsed" runs out
    let mut fenced = connect(&db.url).await;
    exec(&mut fenced, "START TRANSACTION").await;
    call(&mut fenced, "CALL assert_leader('s2', 'a', 1)", ()).await.expect("the fence");
    let t0 = std::time::Instant::now();
    let resigned = procedures::resign_seats(&db.pool, "a", &["s1", "s2", "s3", "other", "lapsed", "never"]).await.expect("no lock wait");
    let took = t0.elapsed();
    let got: Vec<(&str, bool, u64)> = resigned.iter().map(|r| (r.service_id.as_str(), r.resigned, r.term)).collect();
    assert_eq!(got, [("s1", true, 1), ("s2", false, 1), ("s3", true, 1)], "the fenced s2 answered still held; the seats a does not hold left out");
    assert!(took < Duration::from_secs(1), "the fenced seat is skipped, not waited for ({took:?})");
    assert!(!in_transaction(&mut c).await);
    for s in ["s1", "s3"] {
        let seat = seat(&mut c, s).await.expect("the seat stays");
        assert_eq!((seat.leader_id, seat.term), (None, 1), "{s} is vacant");
        let terms = history(&mut c, s).await;
        assert_eq!(terms.len(), 1, "{s}: {terms:?}");
        assert_eq!(terms[0].ended_how.as_deref(), Some("resigned"), "{s}: {terms:?}");
        assert_eq!(campaign(&mut c, s, "b", 60_000).await.term(), 2, "{s}: the next campaign takes it at once");
    }
    assert_eq!(seat(&mut c, "other").await.unwrap().leader_id.as_deref(), Some("b"));
    assert_eq!(seat(&mut c, "lapsed").await.unwrap().leader_id.as_deref(), Some("a"), "an expired seat is not resigned");
    assert!(seat(&mut c, "never").await.is_none(), "no seat is made");
    exec(&mut fenced, "COMMIT").await;
    assert_eq!(seat(&mut c, "s2").await.unwrap().leader_id.as_deref(), Some("a"), "the fenced seat is still a's");
    let again = procedures::resign_seats(&db.pool, "a", &["s1", "s2", "s3"]).await.unwrap();
    assert_eq!(again.iter().map(|r| (r.service_id.as_str(), r.resigned)).collect::<Vec<_>>(), [("s2", true)], "once the fence ended");
    drop((c, fenced));
    db.drop_db().await;
}

/// A caller's session that limits the rows a SELECT returns (`sql_select_limit`, which it
/// controls) must not cut a batched call short (a walk over its seats by a cursor would be such a
/// SELECT). With the limit at 1, `campaign_seats` takes all three seats, `handover_seats` hands
/// all three over, and `resign_seats` gives up all three that were taken back; each answer lists
/// every seat (a's acknowledgement of the three handovers, by `resign_seats`, walks all three
/// too), and every seat reads as the call said from a connection without the limit.
#[tokio::test]
async fn a_callers_row_limit_cuts_no_batch_short() {
    let db = TestDb::migrated("sessions_row_limit").await;
    let mut c = connect(&db.url).await;
    let mut limited = connect(&db.url).await;
    exec(&mut limited, "SET SESSION sql_select_limit = 1").await;
    let ids = ["l1", "l2", "l3"];
    let lease = Duration::from_secs(60);
    let taken = procedures::campaign_seats(&mut limited, "a", lease, &ids).await.expect("campaign_seats");
    assert_eq!(taken.iter().map(|r| (r.service_id.as_str(), r.answer.is_leader)).collect::<Vec<_>>(),
               [("l1", true), ("l2", true), ("l3", true)], "every seat taken and answered");
    for s in ids {
        assert_eq!(seat(&mut c, s).await.unwrap().leader_id.as_deref(), Some("a"), "{s} taken");
    }
    // Control: the limit is in force on that session for a SELECT of its own.
    let own: Vec<mysql_async::Row> = limited.query("SELECT service_id FROM leader_election").await.unwrap();
    assert_eq!(own.len(), 1, "sql_select_limit = 1 applies to the session's own SELECT");
    let handed = procedures::handover_seats(&mut limited, &ids, "b").await.expect("handover_seats");
    assert_eq!(handed.iter().map(|r| r.service_id.as_str()).collect::<Vec<_>>(), ids, "every seat handed over and answered");
    // a acknowledges the three handovers in one resign_seats (its step 4 walk): no term ends.
    let acknowledged = procedures::resign_seats(&mut limited, "a", &ids).await.expect("the acknowledgement");
    assert!(acknowledged.is_empty(), "no lease ended: {acknowledged:?}");
    for s in ids {
        assert_eq!(seat(&mut c, s).await.unwrap().leader_id, None, "{s} handed over: vacant, reserved for b");
        assert_eq!(campaign(&mut c, s, "b", 60_000).await.flag("is_leader"), 1, "{s}: b takes it once a acknowledged");
    }
    let resigned = procedures::resign_seats(&mut limited, "b", &ids).await.expect("resign_seats");
    assert_eq!(resigned.iter().map(|r| (r.service_id.as_str(), r.resigned)).collect::<Vec<_>>(),
               [("l1", true), ("l2", true), ("l3", true)], "every seat resigned and answered");
    for s in ids {
        assert_eq!(seat(&mut c, s).await.unwrap().leader_id, None, "{s} resigned: vacant");
    }
    drop((c, limited));
    db.drop_db().await;
}

/// A limited account renews only seats inside its services; a seat outside is left alone even
/// when the node named leads it (another tenant's seat under a shared node name).
#[tokio::test]
async fn renew_seats_keeps_to_the_accounts_services() {
    let db = TestDb::migrated("sessions_access").await;
    let mut admin = connect(&db.url).await;
    let user = format!("sess_{}", std::process::id());
    exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    exec(&mut admin, &format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")).await;
    procedures::grant(&db.pool, &Account::parse(&format!("'{user}'@'%'")).unwrap(), Role::App, &["billing%".to_string()])
        .await
        .expect("grant");
    campaign(&mut admin, "billing_eu", "n", 500).await;
    campaign(&mut admin, "payroll", "n", 500).await;
    let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(user.as_str())).pass(Some("pw"));
    let pool = mysql_async::Pool::new(opts);
    let renewed = procedures::renew_seats(&pool, "n", Duration::from_secs(30), &["billing_eu", "payroll"]).await.unwrap();
    assert_eq!(renewed.iter().map(|r| r.service_id.as_str()).collect::<Vec<_>>(), ["billing_eu"]);
    assert!(renewed[0].answer.is_leader);
    // Nor does it tell who leads a seat outside its services.
    let seen = procedures::renew_seats(&pool, "other", Duration::from_secs(30), &["billing_eu", "payroll"]).await.unwrap();
    assert_eq!(seen.iter().map(|r| (r.service_id.as_str(), r.answer.is_leader)).collect::<Vec<_>>(), [("billing_eu", false)]);
    pool.disconnect().await.unwrap();
    exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    db.drop_db().await;
}

/// Side by side in one run (printed, not asserted): 1,000 seats renewed by one renew_seats
/// against 1,000 campaign calls, on one connection.
#[tokio::test]
async fn one_renew_for_a_thousand_seats_against_a_thousand_campaigns() {
    let db = TestDb::migrated("sessions_cost").await;
    let mut c = connect(&db.url).await;
    let ids: Vec<String> = (0..1000).map(|i| format!("svc{i:04}")).collect();
    for id in &ids {
        campaign(&mut c, id, "a", 60_000).await;
    }
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let mut conn = db.pool.get_conn().await.unwrap();
    let mut batch = Vec::new();
    let mut single = Vec::new();
    for _ in 0..3 {
        let t0 = std::time::Instant::now();
        let renewed = procedures::renew_seats(&mut conn, "a", Duration::from_secs(60), &refs).await.unwrap();
        batch.push(t0.elapsed());
        assert!(renewed.len() == 1000 && renewed.iter().all(|r| r.answer.is_leader));
        let t0 = std::time::Instant::now();
        for id in &refs {
            procedures::campaign(&mut conn, id, "a", Duration::from_secs(60)).await.unwrap();
        }
        single.push(t0.elapsed());
    }
    let (b, s) = (batch.iter().min().unwrap(), single.iter().min().unwrap());
    println!("1,000 seats: one renew_seats {b:?}, 1,000 campaigns {s:?} (ratio {:.3}, best of 3 each)", b.as_secs_f64() / s.as_secs_f64());
    drop(conn);
    db.drop_db().await;
}

/// The batched takeover: `CALL campaign_seats(node, lease_ms, service_ids)` takes, in one
/// transaction, every listed seat that is vacant or expired, each at its next term with its
/// history (the expired term closed 'expired' at its lease's end), and reports who leads the
/// others; it leaves alone a seat held validly by another node, one a handover reserves for
/// another node, one this node holds already (renew_seats renews it) and one another transaction
/// has locked; a seat never created it creates and takes (at term 1).
#[tokio::test]
async fn campaign_seats_takes_the_free_seats_in_one_transaction() {
    let db = TestDb::migrated("sessions_take").await;
    let mut c = connect(&db.url).await;
    // expired: b's lease of 200 ms runs out; vacant: resigned; held: c's valid lease; mine: a's;
    // reserved: handed over to d by an operator; locked: expired, and locked by another session.
    campaign(&mut c, "expired", "b", 200).await;
    campaign(&mut c, "vacant", "b", 60_000).await;
    resign(&mut c, "vacant", "b").await;
    campaign(&mut c, "held", "c", 60_000).await;
    campaign(&mut c, "mine", "a", 60_000).await;
    campaign(&mut c, "reserved", "b", 60_000).await;
    call(&mut c, "CALL handover('reserved', 'd')", ()).await.expect("handover");
    campaign(&mut c, "locked", "b", 200).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut locker = connect(&db.url).await;
    exec(&mut locker, "START TRANSACTION").await;
    exec(&mut locker, "SELECT term FROM leader_election WHERE service_id = 'locked' FOR UPDATE").await;
    let before = history_rows(&mut c).await;

    let ids = ["expired", "vacant", "held", "mine", "reserved", "locked", "never"];
    let answer = procedures::campaign_seats(&db.pool, "a", Duration::from_secs(30), &ids).await.expect("campaign_seats");
    let taken: Vec<(&str, u64)> = answer.iter().filter(|r| r.answer.is_leader).map(|r| (r.service_id.as_str(), r.answer.term)).collect();
    assert_eq!(taken, [("expired", 2), ("never", 1), ("vacant", 2)], "only the free seats are taken, each at its next term: {answer:?}");
    assert!(answer.iter().filter(|r| r.answer.is_leader)
                  .all(|r| r.answer.leader_id.as_deref() == Some("a") && r.answer.lease_remaining > Duration::from_secs(29)), "{answer:?}");
    let others: Vec<(&str, Option<&str>)> = answer.iter().filter(|r| !r.answer.is_leader)
        .map(|r| (r.service_id.as_str(), r.answer.leader_id.as_deref())).collect();
    assert_eq!(others, [("held", Some("c"))], "others' valid seats are reported; mine, reserved and locked are not: {answer:?}");
    assert_eq!(history_rows(&mut c).await, before + 3, "one history row per term taken");
    let h = history(&mut c, "never").await;
    assert_eq!(h.iter().map(|t| (t.term, t.leader_id.as_str(), t.began_how.as_str())).collect::<Vec<_>>(), [(1, "a", "elected")]);
    for s in ["expired", "vacant"] {
        let h = history(&mut c, s).await;
        assert_eq!(h.len(), 2, "{s}: {h:?}");
        assert_eq!((h[1].term, h[1].leader_id.as_str(), h[1].began_how.as_str(), h[1].ended_how.as_deref()), (2, "a", "elected", None), "{s}");
        assert!(h[0].ended_how.is_some(), "{s}: the old term is closed: {h:?}");
    }
    let h = history(&mut c, "expired").await;
    assert_eq!(h[0].ended_how.as_deref(), Some("expired"));
    let old = seat(&mut c, "expired").await.unwrap();
    assert_eq!(old.term, 2);
    // Nothing else moved.
    assert_eq!(seat(&mut c, "held").await.unwrap().leader_id.as_deref(), Some("c"));
    assert_eq!(seat(&mut c, "mine").await.unwrap().term, 1);
    assert_eq!(seat(&mut c, "reserved").await.unwrap().leader_id, None, "reserved for d: not a's");
    exec(&mut locker, "ROLLBACK").await;
    assert_eq!(seat(&mut c, "locked").await.unwrap().term, 1, "the locked seat was skipped, not waited for");
    // Once free of the lock, and for d the reserved one, a second call takes them.
    let answer = procedures::campaign_seats(&db.pool, "a", Duration::from_secs(30), &["locked"]).await.unwrap();
    assert_eq!(answer.iter().map(|r| (r.service_id.as_str(), r.answer.term, r.answer.is_leader)).collect::<Vec<_>>(), [("locked", 2, true)]);
    // d may not take the reserved seat while b, the leader the handover displaced, has not
    // acknowledged it (its lease runs for a minute): no overlap. b's campaign is no
    // acknowledgement (it may be a renew whose answer is still on its way); its resign_seats, as
    // a session sends it once the seat's elector has stepped down, is (no row: no lease ended).
    assert!(procedures::campaign_seats(&db.pool, "d", Duration::from_secs(30), &["reserved"]).await.unwrap().is_empty());
    assert_eq!(campaign(&mut c, "reserved", "b", 60_000).await.flag("is_leader"), 0);
    assert!(procedures::campaign_seats(&db.pool, "d", Duration::from_secs(30), &["reserved"]).await.unwrap().is_empty());
    let acknowledged = procedures::resign_seats(&db.pool, "b", &["reserved", "held"]).await.unwrap();
    assert!(acknowledged.is_empty(), "{acknowledged:?}");
    let answer = procedures::campaign_seats(&db.pool, "d", Duration::from_secs(30), &["reserved"]).await.unwrap();
    assert_eq!(answer.iter().map(|r| (r.service_id.as_str(), r.answer.is_leader)).collect::<Vec<_>>(), [("reserved", true)]);
    assert_eq!(history(&mut c, "reserved").await.last().map(|t| (t.term, t.leader_id.clone())), Some((2, "d".to_string())));
    // Bad input names the parameter and changes nothing.
    let before = snapshot(&mut c).await;
    for bad in ["not json", "{\"a\":1}"] {
        call(&mut c, "CALL campaign_seats('a', 1000, ?)", (bad,)).await.expect_err("bad service_ids").assert_invalid("service_ids", bad);
    }
    call(&mut c, "CALL campaign_seats('', 1000, '[\"vacant\"]')", ()).await.expect_err("empty node").assert_invalid("node_id", "empty node");
    call(&mut c, "CALL campaign_seats('a', 0, '[\"vacant\"]')", ()).await.expect_err("lease 0").assert_invalid("lease_ms", "lease 0");
    assert_eq!(snapshot(&mut c).await, before, "refused calls change nothing");
    assert!(!in_transaction(&mut c).await);
    drop((c, locker));
    db.drop_db().await;
}

/// A node's first start with many new services: two nodes create and take the same 300 new seats
/// at the same moment, listed in opposite orders. Neither call fails (one creates the seats, the
/// other waits for it and creates none), and every seat ends with one leader at term 1 and one
/// history row.
#[tokio::test]
async fn two_nodes_creating_the_same_new_seats_at_once_each_get_one_leader() {
    let db = TestDb::migrated("sessions_take_new").await;
    let mut c = connect(&db.url).await;
    let ids: Vec<String> = (0..300).map(|i| format!("new-{i:03}")).collect();
    let forward: Vec<&str> = ids.iter().map(String::as_str).collect();
    let backward: Vec<&str> = forward.iter().rev().copied().collect();
    let (a, b) = tokio::join!(
        procedures::campaign_seats(&db.pool, "a", Duration::from_secs(30), &forward),
        procedures::campaign_seats(&db.pool, "b", Duration::from_secs(30), &backward),
    );
    let (a, b) = (a.expect("node a"), b.expect("node b"));
    let led_by = |answers: &[procedures::SeatAnswer]| answers.iter().filter(|r| r.answer.is_leader).count();
    println!("of 300 new seats created at once: a took {}, b took {}", led_by(&a), led_by(&b));
    let rows: Vec<(i64, i64, i64)> = c
        .query("SELECT COUNT(*), COALESCE(SUM(term = 1 AND leader_id IN ('a', 'b')), 0), \
                (SELECT COUNT(*) FROM leader_election_history WHERE service_id LIKE 'new-%') FROM leader_election WHERE service_id LIKE 'new-%'")
        .await
        .unwrap();
    // Both insert in the seats' key order: the second waits for the first's commit, finds the
    // seats made (1062) and creates none; then each locks what it may, skipping what the other
    // holds, so every seat is taken by exactly one of them.
    assert_eq!(rows[0], (300, 300, 300), "(seats, seats led at term 1, history rows)");
    assert_eq!(led_by(&a) + led_by(&b), 300, "each seat reported as taken by the node that took it, and by no other");
    drop(c);
    db.drop_db().await;
}

/// A limited account takes only seats inside its services: a free seat of another tenant is
/// neither taken nor reported.
#[tokio::test]
async fn campaign_seats_keeps_to_the_accounts_services() {
    let db = TestDb::migrated("sessions_take_access").await;
    let mut admin = connect(&db.url).await;
    let user = format!("take_{}", std::process::id());
    exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    exec(&mut admin, &format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")).await;
    procedures::grant(&db.pool, &Account::parse(&format!("'{user}'@'%'")).unwrap(), Role::App, &["billing%".to_string()])
        .await
        .expect("grant");
    for s in ["billing_eu", "payroll"] {
        campaign(&mut admin, s, "n", 60_000).await;
        resign(&mut admin, s, "n").await;
    }
    let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(user.as_str())).pass(Some("pw"));
    let pool = mysql_async::Pool::new(opts);
    let taken = procedures::campaign_seats(&pool, "t", Duration::from_secs(30), &["billing_eu", "payroll", "billing_new", "payroll_new"])
        .await
        .unwrap();
    assert_eq!(
        taken.iter().map(|r| (r.service_id.as_str(), r.answer.is_leader)).collect::<Vec<_>>(),
        [("billing_eu", true), ("billing_new", true)],
        "a new seat inside its services is created and taken"
    );
    assert_eq!(seat(&mut admin, "payroll").await.unwrap().leader_id, None, "another tenant's free seat is left alone");
    assert!(seat(&mut admin, "payroll_new").await.is_none(), "no seat is created outside its services");
    pool.disconnect().await.unwrap();
    exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    db.drop_db().await;
}

/// The name of a node session's wake-up lock: the same for every seat the node leads, 54
/// characters, different from any service's lock name; told only while the node leads the seat
/// named (45001 otherwise) and only to an account allowed on it (45002 otherwise). The name
/// belongs to the caller's set of services: two tenants whose nodes share an id get two names
/// (each holds its own lock, neither can learn the other's), two accounts of one tenant (the
/// same limit) one name.
#[tokio::test]
async fn a_node_wakeup_lock_name_is_told_only_for_a_seat_the_node_leads() {
    let db = TestDb::migrated("sessions_node_lock").await;
    let mut c = connect(&db.url).await;
    campaign(&mut c, "s1", "a", 60_000).await;
    campaign(&mut c, "s2", "a", 60_000).await;
    campaign(&mut c, "s3", "b", 60_000).await;
    campaign(&mut c, "u1", "a", 60_000).await;
    let name = |r: Reply| r.text("lock_name").unwrap();
    let n1 = name(call(&mut c, "CALL leader_election_node_wakeup_name('s1', 'a')", ()).await.unwrap());
    let n2 = name(call(&mut c, "CALL leader_election_node_wakeup_name('s2', 'a')", ()).await.unwrap());
    let nb = name(call(&mut c, "CALL leader_election_node_wakeup_name('s3', 'b')", ()).await.unwrap());
    let service = name(call(&mut c, "CALL leader_election_wakeup_name('s1')", ()).await.unwrap());
    assert_eq!(n1, n2, "one lock per node");
    assert_ne!(n1, nb);
    assert_ne!(n1, service);
    assert!(n1.starts_with("mysqlleader.n.") && n1.len() == 54, "{n1}");
    let e = call(&mut c, "CALL leader_election_node_wakeup_name('s3', 'a')", ()).await.expect_err("a does not lead s3");
    assert_eq!(e.state, "45001", "{e:?}");
    let e = call(&mut c, "CALL leader_election_node_wakeup_name('never', 'a')", ()).await.expect_err("no seat");
    assert_eq!(e.state, "45001", "{e:?}");
    assert!(!in_transaction(&mut c).await);
    // Tenants: accounts limited to s% (two of them: one tenant) and to u% (another), whose nodes
    // are all called `a`.
    let tag = std::process::id();
    let users = [format!("lockname_s_{tag}"), format!("lockname_s2_{tag}"), format!("lockname_u_{tag}")];
    let mut tenants = Vec::new();
    for (user, pattern) in users.iter().zip(["s%", "s%", "u%"]) {
        exec(&mut c, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
        exec(&mut c, &format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")).await;
        procedures::grant(&db.pool, &Account::parse(&format!("'{user}'@'%'")).unwrap(), Role::App, &[pattern.to_string()]).await.expect("grant");
        let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(user.as_str())).pass(Some("pw"));
        tenants.push(Conn::new(opts).await.unwrap());
    }
    let [mut limited, mut same_tenant, mut other_tenant] = <[Conn; 3]>::try_from(tenants).ok().unwrap();
    let ns = name(call(&mut limited, "CALL leader_election_node_wakeup_name('s1', 'a')", ()).await.unwrap());
    assert_eq!(name(call(&mut same_tenant, "CALL leader_election_node_wakeup_name('s2', 'a')", ()).await.unwrap()), ns,
               "two accounts of one tenant (the same limit) meet on one name");
    let nu = name(call(&mut other_tenant, "CALL leader_election_node_wakeup_name('u1', 'a')", ()).await.unwrap());
    assert!(ns.starts_with("mysqlleader.n.") && ns.len() == 54 && nu.len() == 54, "{ns} {nu}");
    assert_ne!(ns, nu, "node `a` of one tenant and node `a` of another: two names");
    assert_ne!(ns, n1, "a limited tenant's name is not the unlimited accounts' name");
    let e = call(&mut other_tenant, "CALL leader_election_node_wakeup_name('s1', 'a')", ()).await.expect_err("outside its services");
    assert_eq!(e.state, "45002", "{e:?}");
    // Each tenant's session holds its own lock: the other's is no obstacle.
    let got: Option<i64> = limited.query_first(format!("SELECT GET_LOCK('{ns}', 0)")).await.unwrap();
    assert_eq!(got, Some(1));
    let got: Option<i64> = other_tenant.query_first(format!("SELECT GET_LOCK('{nu}', 0)")).await.unwrap();
    assert_eq!(got, Some(1), "the other tenant's node `a` holds its lock beside it");
    drop(same_tenant);
    drop(other_tenant);
    let e = call(&mut limited, "CALL leader_election_node_wakeup_name('u1', 'a')", ()).await.expect_err("outside its services");
    assert_eq!(e.state, "45002", "{e:?}");
    drop(limited);
    for user in &users {
        exec(&mut c, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    }
    drop(c);
    db.drop_db().await;
}
