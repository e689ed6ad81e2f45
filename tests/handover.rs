//! Handover through the library (issue "Handover"), against the real server: the leader's own
//! `Elector::handover`, an operator's `handover` seen at the leader's next renew, and a handover
//! to a node that is not there. An overlap monitor samples every elector every millisecond.
//! Timings are printed, not asserted, except bounds far from the expected value that tell a
//! wake-up from a poll (followers here poll only every 5 s).

use crate::common;
use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysqlleader::{procedures, Elector, Event, StopReason, WaitOutcome};
use tokio::time::Instant;

use common::overlap::{one_leader, watched, OverlapMonitor};

/// An elector whose followers poll only every 5 s: anything faster is the wake-up lock's doing.
fn slow_poller(pool: &mysql_async::Pool, service: &str, node: &str, lease: Duration, renew: Duration) -> Elector {
    Elector::builder(pool.clone(), service)
        .node_id(node)
        .lease(lease)
        .renew_interval(renew)
        .retry_interval(Duration::from_secs(5))
        .retry_jitter(0.0)
        .resign_on_drop(false)
        .start()
        .unwrap()
}

async fn ended_how(db: &common::TestDb, service: &str, term: u64) -> Option<String> {
    let mut conn = db.conn().await;
    conn.exec_first("SELECT CAST(ended_how AS CHAR) FROM leader_election_history WHERE service_id = ? AND term = ?", (service, term))
        .await
        .unwrap()
        .flatten()
}

/// The leader hands over to a named follower (not the one that would wake first): it steps down
/// before the call returns, its term ends `handed_over`, the named node leads next, woken (not
/// polled), and no two nodes ever believe they lead at once. Three rounds, each to another node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leader_hands_over_to_the_named_follower_with_no_overlap() {
    let db = common::TestDb::migrated("holeader").await;
    let electors: Vec<Elector> =
        (0..4).map(|i| slow_poller(&db.pool, "ho", &format!("n{i}"), Duration::from_secs(20), Duration::from_secs(4))).collect();
    let refs: Vec<&Elector> = electors.iter().collect();
    let monitor = OverlapMonitor::start(refs.iter().map(|e| watched(e)).collect());
    let mut leader = one_leader(&refs, Duration::from_secs(10)).await;
    for round in 0..3 {
        // Followers learn the leader and wait on its lock.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let to = (leader + 2) % electors.len();
        let mut events = electors[leader].events();
        let term = electors[leader].term();
        let t0 = Instant::now();
        assert!(electors[leader].handover(electors[to].node_id()).await.unwrap(), "round {round}: it led");
        assert!(!electors[leader].is_leader(), "round {round}: stepped down before handover returned");
        let next = one_leader(&refs, Duration::from_secs(3)).await;
        let took = t0.elapsed();
        println!("round {round}: leader-initiated handover {} -> {} in {took:?}", electors[leader].node_id(), electors[to].node_id());
        assert_eq!(next, to, "round {round}: the named node leads");
        assert!(took < Duration::from_millis(2500), "round {round}: took {took:?}: the named node was not woken");
        assert_eq!(electors[next].term(), term + 1);
        let stop = loop {
            match events.recv().await.unwrap() {
                Event::StoppedLeading { term: t, reason } if t == term => break reason,
                _ => {}
            }
        };
        assert_eq!(stop, StopReason::HandedOver);
        assert_eq!(ended_how(&db, "ho", term).await.as_deref(), Some("handed_over"));
        assert!(electors[leader].state().campaigning, "the old leader goes on as a follower");
        leader = next;
    }
    println!("overlap samples: {}", monitor.finish().await);
    // A follower's handover changes nothing; one to itself is refused by name.
    let follower = (leader + 1) % electors.len();
    assert!(!electors[follower].handover(electors[leader].node_id()).await.unwrap());
    let err = electors[leader].handover(electors[leader].node_id()).await.unwrap_err();
    assert_eq!(err.parameter(), Some("to_node"), "{err}");
    assert!(electors[leader].is_leader(), "a refused handover changes nothing");
    for e in electors {
        e.shutdown().await.unwrap();
    }
    db.drop_db().await;
}

/// An operator's handover: the leader learns at its next renew (StopReason::HandedOver), lets go
/// of its wake-up lock, and the named follower leads; no overlap meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operators_handover_reaches_the_leader_at_its_next_renew() {
    let db = common::TestDb::migrated("hooperator").await;
    let electors: Vec<Elector> =
        (0..3).map(|i| slow_poller(&db.pool, "hop", &format!("p{i}"), Duration::from_secs(6), Duration::from_millis(400))).collect();
    let refs: Vec<&Elector> = electors.iter().collect();
    let monitor = OverlapMonitor::start(refs.iter().map(|e| watched(e)).collect());
    let leader = one_leader(&refs, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let to = (leader + 1) % electors.len();
    let term = electors[leader].term();
    let t0 = Instant::now();
    let seat = procedures::handover(&db.pool, "hop", electors[to].node_id()).await.unwrap();
    assert!(!seat.is_leader && seat.leader_id.is_none(), "{seat:?}");
    assert_eq!(electors[leader].term_ended(term).await, StopReason::HandedOver);
    let next = one_leader(&refs, Duration::from_secs(3)).await;
    println!("operator-initiated handover in {:?} (renew every 400 ms)", t0.elapsed());
    assert_eq!(next, to);
    println!("overlap samples: {}", monitor.finish().await);
    for e in electors {
        e.shutdown().await.unwrap();
    }
    db.drop_db().await;
}

/// A handover to a node that is not there: nobody leads while the reservation lasts (one lease),
/// then the service elects as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handover_to_an_absent_node_lapses_and_the_service_elects_again() {
    let db = common::TestDb::migrated("holapse").await;
    let electors: Vec<Elector> = (0..2)
        .map(|i| {
            Elector::builder(db.pool.clone(), "hol")
                .node_id(format!("q{i}"))
                .lease(Duration::from_millis(1000))
                .renew_interval(Duration::from_millis(200))
                .retry_interval(Duration::from_millis(200))
                .resign_on_drop(false)
                .start()
                .unwrap()
        })
        .collect();
    let refs: Vec<&Elector> = electors.iter().collect();
    let leader = one_leader(&refs, Duration::from_secs(10)).await;
    let t0 = Instant::now();
    assert!(electors[leader].handover("ghost").await.unwrap());
    // While reserved for ghost (1 s), nobody leads.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(electors.iter().all(|e| !e.is_leader()), "the seat is reserved for ghost");
    one_leader(&refs, Duration::from_secs(5)).await;
    println!("elected again {:?} after a handover to an absent node (lease 1 s)", t0.elapsed());
    assert!(t0.elapsed() >= Duration::from_millis(1000), "not before the reservation lapsed");
    for e in electors {
        e.shutdown().await.unwrap();
    }
    db.drop_db().await;
}

/// An operator's handover seen first by the leader's fence, before its next renew: the database
/// refuses the term with error 31004 (`NotLeader` with `handed_over`), the elector stops leading
/// for `HandedOver` (not `LostSeat`), its next call, sent at once, acknowledges the handover, and
/// the named node leads long before the old lease (60 s) could have run out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fence_refused_by_an_operators_handover_stops_for_it_and_acknowledges_at_once() {
    let db = common::TestDb::migrated("hofence").await;
    let lease = Duration::from_secs(60);
    // Renews every 15 s: no renew in between, so the fence is the first to learn.
    let a = slow_poller(&db.pool, "hofence", "a", lease, Duration::from_secs(15));
    assert_eq!(a.wait_for_leadership(Some(Duration::from_secs(10))).await, WaitOutcome::Leading);
    let b = slow_poller(&db.pool, "hofence", "b", lease, Duration::from_secs(15));
    let term = a.term();
    let seat = procedures::handover(&db.pool, "hofence", "b").await.unwrap();
    assert!(!seat.is_leader && seat.leader_id.is_none(), "{seat:?}");
    let t0 = Instant::now();
    let mut conn = db.conn().await;
    let mut tx = conn.start_transaction(mysql_async::TxOpts::default()).await.unwrap();
    match a.fence(&mut tx).await {
        Err(mysqlleader::Error::NotLeader { handed_over, current_term, message }) => {
            assert!(handed_over, "the refusal says the term was handed over: {message}");
            assert_eq!(current_term, Some(term), "{message}");
        }
        other => panic!("the fence after an operator's handover: {other:?}"),
    }
    drop(tx);
    assert!(!a.is_leader(), "the elector stepped down before the fence returned");
    assert_eq!(a.state().last_stop, Some((term, StopReason::HandedOver)));
    // a's acknowledgement lets b take the seat; b, woken, leads within the retry interval (5 s)
    // at most, never by waiting out a's lease.
    assert_eq!(b.wait_for_leadership(Some(Duration::from_secs(8))).await, WaitOutcome::Leading, "b did not take over");
    println!("handover seen by the fence: b leads {:?} after it", t0.elapsed());
    assert_eq!(b.term(), term + 1);
    assert_eq!(ended_how(&db, "hofence", term).await.as_deref(), Some("handed_over"));
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}
