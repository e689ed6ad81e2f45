//! Sessions (issue "Sessions"): one node leads many services over one connection and one renew.
//! Each test connects as accounts that hold only the app role, one per node, so that the server
//! can count each node's connections.

use crate::common;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::TestDb;
use mysql_async::prelude::Queryable;
use mysql_async::{Opts, OptsBuilder, Pool};
use mysqlleader::procedures::{self, Account, Role};
use mysqlleader::{Elector, ErrorKind, Event, Session, SessionStats, StopReason};
use tokio::time::Instant;

/// An account with the app role for `db`'s services, and a pool of it.
async fn app_account(db: &TestDb, name: &str) -> (String, Pool) {
    let (user, url) = common::app_account(db, name, "pw").await;
    (user, Pool::new(Opts::from_url(&url).unwrap()))
}

async fn drop_accounts(db: &TestDb, users: &[&str]) {
    let mut admin = db.conn().await;
    for user in users {
        admin.query_drop(format!("DROP USER IF EXISTS '{user}'@'%'")).await.unwrap();
    }
}

fn services(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("shard-{i:04}")).collect()
}

/// Waits until `check` holds, polling every 5 ms; fails after `within`. Returns the time taken.
async fn until(within: Duration, what: &str, mut check: impl FnMut() -> bool) -> Duration {
    let t0 = Instant::now();
    while !check() {
        assert!(t0.elapsed() < within, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    t0.elapsed()
}

/// Fails the test at any sampled instant (every 2 ms) at which two nodes believe they lead one
/// service; `electors[node][service]`.
struct Overlaps {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<u64>,
}

impl Overlaps {
    fn watch(electors: &[&[Elector]]) -> Self {
        let watches: Vec<Vec<(String, tokio::sync::watch::Receiver<mysqlleader::State>)>> = (0..electors[0].len())
            .map(|s| electors.iter().map(|node| (node[s].node_id().to_string(), node[s].watch())).collect())
            .collect();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let task = tokio::spawn(async move {
            let mut samples = 0;
            while !s.load(Ordering::SeqCst) {
                let now = Instant::now();
                for (i, nodes) in watches.iter().enumerate() {
                    let leading: Vec<&str> = nodes.iter().filter(|(_, rx)| rx.borrow().leads_at(now)).map(|(n, _)| n.as_str()).collect();
                    assert!(leading.len() <= 1, "service {i}: two nodes believed they led at one instant: {leading:?}");
                }
                samples += 1;
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            samples
        });
        Overlaps { stop, task }
    }

    async fn finish(self) -> u64 {
        self.stop.store(true, Ordering::SeqCst);
        self.task.await.expect("no overlap")
    }
}

/// The most connections each of `users` held at one instant, sampled every 10 ms while `busy`.
async fn sample_connections(db: &TestDb, users: Vec<String>, busy: Duration) -> HashMap<String, i64> {
    let mut admin = db.conn().await;
    let mut most: HashMap<String, i64> = users.iter().map(|u| (u.clone(), 0)).collect();
    let t0 = Instant::now();
    while t0.elapsed() < busy {
        let mut now: HashMap<String, i64> = HashMap::new();
        for (_, user, _, _) in common::connections(&mut admin).await {
            *now.entry(user).or_default() += 1;
        }
        for (user, n) in now {
            if let Some(m) = most.get_mut(&user) {
                *m = (*m).max(n);
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    most
}

/// Two sessions, each leading a seat the other follows: each holds its own wake-up lock and
/// would wait on the other's, a cycle of waits the server refuses at once (MariaDB 1213, MySQL
/// 3058). The refusal is an answer, not a lost lock: neither session says its lock is lost,
/// and each keeps its lock connection beside its call connection throughout. Before, the
/// refused session closed its lock connection (letting go of its own lock) for a pause of 1 s
/// doubling up to 60 s: the fleet test's crashed node had no wake-up connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_that_follow_each_other_keep_their_wakeup_locks() {
    let log = common::captured_log();
    let db = TestDb::migrated("session_cycle").await;
    let (ua, pa) = app_account(&db, "cyc_a").await;
    let (ub, pb) = app_account(&db, "cyc_b").await;
    let node_a = format!("cyc-a-{}", std::process::id());
    let node_b = format!("cyc-b-{}", std::process::id());
    let a = Session::builder(pa.clone()).node_id(node_a.as_str()).lease(Duration::from_secs(10)).start().unwrap();
    let b = Session::builder(pb.clone()).node_id(node_b.as_str()).lease(Duration::from_secs(10)).start().unwrap();
    let a1 = a.elector("cyc-1").unwrap();
    until(Duration::from_secs(10), "a leads cyc-1", || a1.is_leader()).await;
    let b2 = b.elector("cyc-2").unwrap();
    until(Duration::from_secs(10), "b leads cyc-2", || b2.is_leader()).await;
    let a2 = a.elector("cyc-2").unwrap();
    let b1 = b.elector("cyc-1").unwrap();
    until(Duration::from_secs(10), "each follows the other's seat", || {
        a2.state().leader_id.as_deref() == Some(node_b.as_str()) && b1.state().leader_id.as_deref() == Some(node_a.as_str())
    })
    .await;
    // Both wait, or one waits and the other is refused, for 3 s.
    let mut admin = db.conn().await;
    let mut fewest = (usize::MAX, usize::MAX);
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(3) {
        let (na, nb) = (common::connections_of(&mut admin, &ua).await.len(), common::connections_of(&mut admin, &ub).await.len());
        fewest = (fewest.0.min(na), fewest.1.min(nb));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let lines: Vec<(String, String)> = log.lock().unwrap().iter()
        .filter(|(_, node, m)| (*node == node_a || *node == node_b) && m.contains("wake-up lock"))
        .map(|(_, node, m)| (node.clone(), m.clone()))
        .collect();
    println!("the fewest connections each session held: {fewest:?}; its wake-up lock's lines: {lines:#?}");
    assert!(lines.is_empty(), "a refused wait is no lost lock: {lines:#?}");
    assert!(fewest.0 >= 2 && fewest.1 >= 2, "each session keeps its call and its lock connection: {fewest:?}");
    assert!(a1.is_leader() && b2.is_leader() && !a2.is_leader() && !b1.is_leader());
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
    drop((a1, a2, b1, b2, admin));
    pa.disconnect().await.ok();
    pb.disconnect().await.ok();
    drop_accounts(&db, &[&ua, &ub]).await;
    db.drop_db().await;
}

/// Three nodes, one session each, 150 services: each service has one leader, no instant with
/// two, each node holds at most two connections; a node whose process dies (its runtime stops
/// with no resign, its connections drop) has every one of its seats taken over by the others
/// once the leases lapse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_sessions_share_150_services_and_take_over_a_crashed_ones_seats() {
    let db = TestDb::migrated("session_crash").await;
    let ids = services(150);
    let lease = Duration::from_secs(1);
    let (ua, pa) = app_account(&db, "sess_a").await;
    let (ub, pb) = app_account(&db, "sess_b").await;
    let (uc, pc) = app_account(&db, "sess_c").await;

    // Node a runs on a runtime of its own, so that it can "crash": the runtime stops, no task
    // resigns, its sockets close.
    let runtime_a = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let electors_a: Vec<Elector> = {
        let _in = runtime_a.enter();
        let session = Session::builder(pa).node_id("node-a").lease(lease).start().unwrap();
        let electors = ids.iter().map(|s| session.elector(s.as_str()).unwrap()).collect();
        assert_eq!(session.len(), 150);
        electors
    };
    let took = until(Duration::from_secs(30), "node a leads every service", || electors_a.iter().all(Elector::is_leader)).await;
    println!("node a took 150 vacant seats in {took:?}");

    let session_b = Session::builder(pb).node_id("node-b").lease(lease).start().unwrap();
    let session_c = Session::builder(pc).node_id("node-c").lease(lease).start().unwrap();
    let electors_b: Vec<Elector> = ids.iter().map(|s| session_b.elector(s.as_str()).unwrap()).collect();
    let electors_c: Vec<Elector> = ids.iter().map(|s| session_c.elector(s.as_str()).unwrap()).collect();
    let overlaps = Overlaps::watch(&[&electors_a, &electors_b, &electors_c]);

    // Followers learn who leads (from the batch's answer), and nobody else leads.
    until(Duration::from_secs(10), "every follower knows node a leads", || {
        electors_b.iter().chain(&electors_c).all(|e| e.leader_id().as_deref() == Some("node-a"))
    })
    .await;
    let most = sample_connections(&db, vec![ua.clone(), ub.clone(), uc.clone()], Duration::from_secs(3)).await;
    println!("most connections at one instant per node over 3 s: {most:?}");
    for (user, n) in &most {
        assert!((1..=2).contains(n), "{user} held {n} connections at once (150 services: at most 2)");
    }
    assert!(electors_a.iter().all(Elector::is_leader), "node a kept every seat while renewing them in batches");

    // Crash node a.
    runtime_a.shutdown_background();
    let failover = until(Duration::from_secs(15), "every service has a leader in b or c", || {
        (0..ids.len()).all(|i| electors_b[i].is_leader() || electors_c[i].is_leader())
    })
    .await;
    println!("after node a crashed, b and c led all 150 services within {failover:?} (lease {lease:?})");
    assert!(electors_a.iter().all(|e| !e.is_leader()), "the crashed node's deadlines have passed");

    let samples = overlaps.finish().await;
    assert!(samples > 100, "the overlap monitor ran ({samples} samples)");
    // Each session resigns its ~75 seats in one resign_seats within the request timeout
    // (200 ms with this lease): on a loaded machine the call can take longer, the seats then
    // lapse with their leases, and shutdown says so with a Timeout (its documented bound).
    // Either way every elector has stepped down and stopped.
    for session in [session_b, session_c] {
        match session.shutdown().await {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::Timeout => println!("shutdown: {e} (the rest lapse with their leases)"),
            Err(e) => panic!("shutdown: {e}"),
        }
    }
    assert!(electors_b.iter().chain(&electors_c).all(|e| !e.is_leader() && !e.state().running));
    drop((electors_a, electors_b, electors_c));
    drop_accounts(&db, &[&ua, &ub, &uc]).await;
    db.drop_db().await;
}

/// A seat forced away steps down alone (the session's other seats go on); a handover from a
/// session's elector reaches a node of another session; one elector per service and session;
/// the session's shutdown resigns every seat, so the other session takes them all at once.
#[tokio::test]
async fn a_session_elector_has_the_api_of_any_elector() {
    let db = TestDb::migrated("session_api").await;
    let ids = services(20);
    let lease = Duration::from_secs(2);
    let (ua, pa) = app_account(&db, "sapi_a").await;
    let (ub, pb) = app_account(&db, "sapi_b").await;
    let a = Session::builder(pa).node_id("node-a").lease(lease).start().unwrap();
    let electors_a: Vec<Elector> = ids.iter().map(|s| a.elector(s.as_str()).unwrap()).collect();
    until(Duration::from_secs(20), "node a leads every service", || electors_a.iter().all(Elector::is_leader)).await;

    let e = a.elector("shard-0001").expect_err("a second elector for one service");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("service_id"), "{e}");
    a.elector("").expect_err("an empty service id");

    let b = Session::builder(pb).node_id("node-b").lease(lease).start().unwrap();
    let electors_b: Vec<Elector> = ids.iter().map(|s| b.elector(s.as_str()).unwrap()).collect();
    let mut events: Vec<_> = electors_a.iter().map(Elector::events).collect();

    // 1. An operator forces shard-0003 to node-b: that elector steps down; the others do not.
    let mut admin = db.conn().await;
    let forced: Vec<mysql_async::Row> = admin.exec("CALL force_leader('shard-0003', 'node-b', 60000)", ()).await.unwrap();
    assert!(!forced.is_empty());
    drop(admin);
    until(Duration::from_secs(5), "a's shard-0003 steps down", || !electors_a[3].is_leader()).await;
    until(Duration::from_secs(5), "b's shard-0003 leads", || electors_b[3].is_leader()).await;
    assert_eq!(electors_a[3].state().last_stop.map(|(_, r)| r), Some(StopReason::LostSeat));
    tokio::time::sleep(lease).await; // a whole lease of renews for the others
    for (i, (e, rx)) in electors_a.iter().zip(events.iter_mut()).enumerate() {
        let mut stopped = false;
        while let Ok(event) = rx.try_recv() {
            stopped |= matches!(event, Event::StoppedLeading { .. });
        }
        assert_eq!(stopped, i == 3, "shard {i}: only the forced seat stepped down");
        assert_eq!(e.is_leader(), i != 3, "shard {i}");
    }

    // 2. A handover from a session's elector to the other session's node.
    assert!(electors_a[5].handover("node-b").await.unwrap());
    assert!(!electors_a[5].is_leader());
    until(Duration::from_secs(5), "node-b leads shard-0005 after the handover", || electors_b[5].is_leader()).await;

    // 3. The session's shutdown resigns every seat: node b takes them all within a retry
    //    interval or two (no lease has to lapse).
    let t0 = Instant::now();
    a.shutdown().await.unwrap();
    assert!(electors_a.iter().all(|e| !e.is_leader() && !e.state().running));
    let took = until(Duration::from_secs(5), "node b leads every service", || electors_b.iter().all(Elector::is_leader)).await;
    println!("after node a's session shut down, node b led all 20 in {:?} (lease {lease:?})", t0.elapsed().max(took));
    b.shutdown().await.unwrap();
    drop((electors_a, electors_b));
    drop_accounts(&db, &[&ua, &ub]).await;
    db.drop_db().await;
}

/// An operator's handover of one of a session's seats: the session learns it at its next
/// renew, steps that seat's elector down (HandedOver), and only then acknowledges it with
/// `resign_seats`, which lets the named node take the seat at once, not when the displaced
/// lease would have run out (the database's own clock says which); its other seats go on.
#[tokio::test]
async fn an_operators_handover_of_a_sessions_seat_is_acknowledged_after_the_step_down() {
    let db = TestDb::migrated("session_op_handover").await;
    let ids = services(3);
    let lease = Duration::from_secs(6);
    let (ua, pa) = app_account(&db, "sho_a").await;
    let (ub, pb) = app_account(&db, "sho_b").await;
    let a = Session::builder(pa).node_id("node-a").lease(lease).start().unwrap();
    let electors_a: Vec<Elector> = ids.iter().map(|s| a.elector(s.as_str()).unwrap()).collect();
    until(Duration::from_secs(20), "node a leads every service", || electors_a.iter().all(Elector::is_leader)).await;
    let b = Session::builder(pb).node_id("node-b").lease(lease).start().unwrap();
    let electors_b: Vec<Elector> = ids.iter().map(|s| b.elector(s.as_str()).unwrap()).collect();
    tokio::time::sleep(Duration::from_millis(300)).await;

    let mut admin = db.conn().await;
    let old_end: String = admin
        .query_first("SELECT CAST(lease_expires_at AS CHAR) FROM leader_election WHERE service_id = 'shard-0001'")
        .await.unwrap().unwrap();
    let term = electors_a[1].term();
    let seat: Vec<mysql_async::Row> = admin.exec("CALL handover('shard-0001', 'node-b')", ()).await.unwrap();
    assert!(!seat.is_empty());
    until(Duration::from_secs(10), "node b leads shard-0001", || electors_b[1].is_leader()).await;
    assert_eq!(electors_a[1].state().last_stop, Some((term, StopReason::HandedOver)));
    // The new term began before the displaced lease would have run out: node a acknowledged it.
    let began_before_end: i64 = admin
        .exec_first("SELECT began_at < ? FROM leader_election_history WHERE service_id = 'shard-0001' AND term = ?", (old_end.as_str(), term + 1))
        .await.unwrap().unwrap();
    assert_eq!(began_before_end, 1, "node b began term {} only when node a's lease (to {old_end}) ran out", term + 1);
    let ended: Option<String> = admin
        .exec_first("SELECT CAST(ended_how AS CHAR) FROM leader_election_history WHERE service_id = 'shard-0001' AND term = ?", (term,))
        .await.unwrap();
    assert_eq!(ended.as_deref(), Some("handed_over"));
    assert!(electors_a[0].is_leader() && electors_a[2].is_leader(), "the session's other seats go on");
    drop(admin);
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
    drop((electors_a, electors_b));
    drop_accounts(&db, &[&ua, &ub]).await;
    db.drop_db().await;
}

/// A session restarted with the same node id while its predecessor's leases are valid leads each
/// seat at a term of its own: before its first campaigns its electors' resigns (batched in
/// `resign_seats`) end the predecessor's terms, so the predecessor's fences fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_session_leads_at_terms_of_its_own() {
    let db = TestDb::migrated("session_incarnation").await;
    let ids = services(30);
    let (user, pool) = app_account(&db, "sinc").await;
    let lease = Duration::from_secs(60);
    // The predecessor, on a runtime of its own so that it can die: nothing resigns, the leases
    // stay valid in the database.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let predecessor: Vec<Elector> = {
        let _in = runtime.enter();
        let session = Session::builder(pool).node_id("node-a").lease(lease).start().unwrap();
        ids.iter().map(|s| session.elector(s.as_str()).unwrap()).collect()
    };
    until(Duration::from_secs(20), "the predecessor leads every service", || predecessor.iter().all(Elector::is_leader)).await;
    assert!(predecessor.iter().all(|e| e.term() == 1));
    runtime.shutdown_background();
    drop(predecessor);

    // The successor, as a new process: a pool of its own.
    let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(user.as_str())).pass(Some("pw"));
    let session = Session::builder(Pool::new(opts)).node_id("node-a").lease(lease).start().unwrap();
    let successor: Vec<Elector> = ids.iter().map(|s| session.elector(s.as_str()).unwrap()).collect();
    let all_led = tokio::time::timeout(Duration::from_secs(20), async {
        while !successor.iter().all(Elector::is_leader) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    let states: Vec<_> = successor.iter().filter(|e| !e.is_leader()).map(|e| e.state()).take(3).collect();
    assert!(all_led.is_ok(), "the successor leads every service: not within 20 s; {:?}; {states:?}", session.stats());
    assert!(successor.iter().all(|e| e.term() == 2), "every seat at a new term: {:?}", successor.iter().map(Elector::term).collect::<Vec<_>>());
    assert!(session.stats().resign_batches >= 1, "the predecessor's terms ended in batches: {:?}", session.stats());
    let mut admin = db.conn().await;
    let ended: i64 = admin
        .query_first("SELECT COUNT(*) FROM leader_election_history WHERE term = 1 AND ended_how = 'resigned' AND service_id LIKE 'shard-%'")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ended, 30);
    let mut tx = admin.start_transaction(Default::default()).await.unwrap();
    let refused = procedures::assert_leader(&mut tx, &ids[0], "node-a", 1).await.unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::NotLeader, "the predecessor's fence: {refused}");
    drop(tx);
    drop(admin);
    session.shutdown().await.unwrap();
    drop(successor);
    drop_accounts(&db, &[&user]).await;
    db.drop_db().await;
}

/// An account that may not call renew_seats or resign_seats (granted before they existed) still
/// leads through a session: it campaigns one service at a time, and resigns so at its shutdown.
#[tokio::test]
async fn a_session_without_renew_seats_campaigns_one_by_one() {
    let db = TestDb::migrated("session_old_grant").await;
    let (user, pool) = app_account(&db, "sold").await;
    let mut admin = db.conn().await;
    let schema = db.name.clone();
    admin.query_drop(format!("REVOKE EXECUTE ON PROCEDURE `{schema}`.renew_seats FROM '{user}'@'%'")).await.unwrap();
    admin.query_drop(format!("REVOKE EXECUTE ON PROCEDURE `{schema}`.resign_seats FROM '{user}'@'%'")).await.unwrap();
    // Nor the node leases, which came later still.
    for procedure in ["grant_lease", "renew_lease", "take_seats"] {
        admin.query_drop(format!("REVOKE EXECUTE ON PROCEDURE `{schema}`.{procedure} FROM '{user}'@'%'")).await.unwrap();
    }
    // The shutdown resigns by the request timeout: 500 ms rather than the default lease / 5, as
    // its one-by-one resigns (after resign_seats is refused) share the session's connection with
    // the one-by-one renews (CI45: the default 200 ms ran out under make test's load).
    let session = Session::builder(pool).node_id("node-old").lease(Duration::from_secs(1))
        .request_timeout(Duration::from_millis(500)).start().unwrap();
    let electors: Vec<Elector> = services(5).iter().map(|s| session.elector(s.as_str()).unwrap()).collect();
    until(Duration::from_secs(10), "the node leads every service", || electors.iter().all(Elector::is_leader)).await;
    tokio::time::sleep(Duration::from_secs(2)).await; // renewed past two leases, one by one
    assert!(electors.iter().all(Elector::is_leader));
    session.shutdown().await.unwrap();
    // Nor resign_seats: the shutdown resigned each seat with resign.
    let resigned: i64 = admin
        .query_first("SELECT COUNT(*) FROM leader_election_history WHERE leader_id = 'node-old' AND ended_how = 'resigned'")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(resigned, 5, "every seat resigned one by one");
    drop(admin);
    drop(electors);
    drop_accounts(&db, &[&user]).await;
    db.drop_db().await;
}

/// An account granted before release_lease (with the node lease procedures, without it): its
/// session's close falls back to resign_seats for the seats on its lease (src/session/resigns.rs,
/// step 0), and every term ends resigned as before; the lease itself is left to run out.
#[tokio::test]
async fn a_session_without_release_lease_resigns_its_seats_in_batches_at_close() {
    let db = TestDb::migrated("session_no_release").await;
    let (user, pool) = app_account(&db, "snorel").await;
    let mut admin = db.conn().await;
    admin.query_drop(format!("REVOKE EXECUTE ON PROCEDURE `{}`.release_lease FROM '{user}'@'%'", db.name)).await.unwrap();
    let session = Session::builder(pool).node_id("node-norel").lease(Duration::from_secs(5)).start().unwrap();
    let electors: Vec<Elector> = services(20).iter().map(|s| session.elector(s.as_str()).unwrap()).collect();
    until(Duration::from_secs(10), "the node leads every service", || electors.iter().all(Elector::is_leader)).await;
    let on_lease: i64 = admin.query_first("SELECT COUNT(*) FROM leader_election WHERE lease_id IS NOT NULL").await.unwrap().unwrap();
    assert_eq!(on_lease, 20, "every seat hangs on the node lease");
    session.shutdown().await.unwrap();
    let (resigned, vacant, lease_runs): (i64, i64, i64) = admin
        .query_first("SELECT (SELECT COUNT(*) FROM leader_election_history WHERE leader_id = 'node-norel' AND ended_how = 'resigned'), \
                             (SELECT COUNT(*) FROM leader_election WHERE leader_id IS NULL), \
                             (SELECT COUNT(*) FROM leader_election_lease WHERE node_id = 'node-norel' AND expires_at > UTC_TIMESTAMP(6))")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((resigned, vacant, lease_runs), (20, 20, 1), "every seat resigned and vacant by resign_seats; the lease not released");
    drop(admin);
    drop(electors);
    drop_accounts(&db, &[&user]).await;
    db.drop_db().await;
}

/// The base rows of `services`' seats: (renewed_at in µs, lease_id).
async fn seat_rows(db: &TestDb, services: &[String]) -> Vec<(i64, Option<u64>)> {
    let mut admin = db.conn().await;
    let mut rows = Vec::new();
    for s in services {
        let row: (i64, Option<u64>) = admin
            .exec_first("SELECT TIMESTAMPDIFF(MICROSECOND, '2000-01-01', renewed_at), lease_id FROM leader_election \
                         WHERE service_id = CAST(? AS BINARY)", (s.as_str(),))
            .await
            .unwrap()
            .unwrap();
        rows.push(row);
    }
    rows
}

/// A session's leaders renew together, in one batch per renew interval, however far apart they
/// started leading: three groups of 20 seats taken 200 ms apart (more than a batch window:
/// 150 ms here) renew in one `renew_lease` per interval, not three. Before, each leader renewed
/// one interval after its own last renew, so the groups stayed apart for good: at 10,000 seats
/// the benchmark's leader sent about 8 renews per interval, each writing the lease's row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_leaders_renew_in_one_batch_however_far_apart_they_began() {
    let db = TestDb::migrated("session_align").await;
    let (user, pool) = app_account(&db, "salign").await;
    let interval = Duration::from_millis(600);
    let session = Session::builder(pool).node_id("node-align").lease(Duration::from_secs(3)).renew_interval(interval).start().unwrap();
    let mut electors = Vec::new();
    for group in 0..3 {
        for i in 0..20 {
            electors.push(session.elector(format!("align-{group}-{i:02}")).unwrap());
        }
        until(Duration::from_secs(10), "the group leads", || electors.iter().all(Elector::is_leader)).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Settled: every leader has renewed on the session's ticks at least once.
    tokio::time::sleep(interval * 3).await;
    let before = session.stats().batch_calls;
    tokio::time::sleep(interval * 10).await;
    let calls = session.stats().batch_calls - before;
    assert!(electors.iter().all(Elector::is_leader), "every seat still led");
    assert!(calls <= 13, "{calls} renews in 10 renew intervals: the leaders renew apart, not in one batch");
    println!("60 leaders that began in 3 groups 200 ms apart: {calls} renews in 10 renew intervals");
    session.shutdown().await.unwrap();
    drop(electors);
    drop_accounts(&db, &[&user]).await;
    db.drop_db().await;
}

/// Node leases (issue 42): a session's seats hang on one lease row, and its renew writes that
/// row alone. 60 services led with a 1 s lease stay led for 3 s with no write to any seat's row
/// after the first renew hung them on the lease; the lease's row is the session's one, renewed
/// all along. An account without the lease procedures (granted before them) renews seat by seat
/// with renew_seats, as before, and leads as well.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_renew_writes_one_row_whatever_its_seats() {
    let db = TestDb::migrated("session_lease").await;
    let (user, pool) = app_account(&db, "slease").await;
    let (old_user, old_pool) = app_account(&db, "soldl").await;
    let mut admin = db.conn().await;
    let schema = db.name.clone();
    admin.query_drop(format!("REVOKE EXECUTE ON PROCEDURE `{schema}`.grant_lease FROM '{old_user}'@'%'")).await.unwrap();

    let new = Session::builder(pool).node_id("node-lease").lease(Duration::from_secs(1)).start().unwrap();
    let old = Session::builder(old_pool).node_id("node-plain").lease(Duration::from_secs(1)).start().unwrap();
    let (a, b): (Vec<String>, Vec<String>) = (services(60), (0..20).map(|i| format!("plain-{i:02}")).collect());
    let led: Vec<Elector> = a.iter().map(|s| new.elector(s.as_str()).unwrap()).collect();
    let plain: Vec<Elector> = b.iter().map(|s| old.elector(s.as_str()).unwrap()).collect();
    until(Duration::from_secs(15), "each node leads its services", || {
        led.iter().all(Elector::is_leader) && plain.iter().all(Elector::is_leader)
    }).await;
    // Past one renew interval, every seat of the session hangs on its one lease.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let first = seat_rows(&db, &a).await;
    let leases: Vec<u64> = first.iter().filter_map(|r| r.1).collect();
    assert_eq!(leases.len(), a.len(), "every seat hangs on a lease: {first:?}");
    assert!(leases.iter().all(|l| *l == leases[0]), "one lease for the session: {leases:?}");
    let lease_rows: i64 = admin.query_first("SELECT COUNT(*) FROM leader_election_lease WHERE node_id = 'node-lease' \
                                             AND expires_at > UTC_TIMESTAMP(6)").await.unwrap().unwrap();
    assert_eq!(lease_rows, 1);
    let plain_first = seat_rows(&db, &b).await;
    assert!(plain_first.iter().all(|r| r.1.is_none()), "the old account's seats stand on their own leases");
    let terms_query = "SELECT COUNT(*) FROM leader_election_history WHERE leader_id IN ('node-lease', 'node-plain')";
    let terms_first: i64 = admin.query_first(terms_query).await.unwrap().unwrap();

    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(led.iter().all(Elector::is_leader) && plain.iter().all(Elector::is_leader), "both nodes still lead all");
    assert_eq!(seat_rows(&db, &a).await, first, "no seat's row was written in 3 s (3 leases)");
    let renewed_ago_ms: i64 = admin
        .exec_first("SELECT TIMESTAMPDIFF(MICROSECOND, renewed_at, UTC_TIMESTAMP(6)) DIV 1000 FROM leader_election_lease WHERE lease_id = ?", (leases[0],))
        .await.unwrap().unwrap();
    assert!(renewed_ago_ms < 1_000, "the lease's row was renewed within the last lease ({renewed_ago_ms} ms ago)");
    let plain_later = seat_rows(&db, &b).await;
    assert!(plain_later.iter().zip(&plain_first).all(|(l, f)| l.0 > f.0), "renew_seats renews each seat's row");
    let terms_later: i64 = admin.query_first(terms_query).await.unwrap().unwrap();
    assert_eq!(terms_later, terms_first, "no term began in 3 s of renews: none was lost");

    new.shutdown().await.unwrap();
    old.shutdown().await.unwrap();
    // Each service's last term: resigned by the shutdown. (Earlier terms may have ended
    // resigned too: a take whose answer came after its elector's request timeout is resigned at
    // once, as under make test's load on MySQL in CI55.)
    let resigned: i64 = admin.query_first("SELECT COUNT(*) FROM leader_election_history h \
                                           JOIN (SELECT service_id, MAX(term) AS term FROM leader_election_history GROUP BY service_id) m \
                                             ON m.service_id = h.service_id AND m.term = h.term \
                                          WHERE h.leader_id = 'node-lease' AND h.ended_how = 'resigned'")
        .await.unwrap().unwrap();
    assert_eq!(resigned, 60, "the shutdown resigned every seat on the lease");
    drop(admin);
    drop((led, plain));
    drop_accounts(&db, &[&user, &old_user]).await;
    db.drop_db().await;
}

/// A session's renews leave out the seats it saw on its node lease (src/session/on_lease.rs):
/// in steady state they list almost none, so the server reads no seat. An operator's takeover of
/// one seat counts in the lease's `lost`; the next renew lists every seat again, the taken one's
/// elector steps down (within one lease of the takeover, promise 1) and the others lead on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_renews_list_only_the_seats_a_takeover_may_have_touched() {
    let db = TestDb::migrated("session_left_out").await;
    let (user, pool) = app_account(&db, "sleft").await;
    let mut admin = db.conn().await;
    let lease = Duration::from_secs(1);
    let session = Session::builder(pool).node_id("node-left").lease(lease).start().unwrap();
    let names = services(100);
    let led: Vec<Elector> = names.iter().map(|s| session.elector(s.as_str()).unwrap()).collect();
    until(Duration::from_secs(15), "the session leads its services", || led.iter().all(Elector::is_leader)).await;
    tokio::time::sleep(Duration::from_millis(700)).await;

    let before = session.stats();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = session.stats();
    let (renewed, listed) = (after.batched_seats - before.batched_seats, after.listed_seats - before.listed_seats);
    eprintln!("steady state, 2 s: {renewed} seats renewed, {listed} listed");
    assert!(renewed >= 200, "the seats were renewed (about 3 times a lease): {renewed}");
    assert!(listed * 10 <= renewed, "at most a tenth of the seats renewed were listed: {listed} of {renewed}");
    assert!(led.iter().all(Elector::is_leader));

    let taken = 7;
    let forced_at = Instant::now();
    let r: Vec<mysql_async::Row> = admin.exec("CALL force_leader(?, 'node-x', 60000)", (names[taken].as_str(),)).await.unwrap();
    assert_eq!(r.len(), 1);
    let mut others_lost = Vec::new();
    let stepped_down = until(lease + Duration::from_millis(500), "the taken seat's elector steps down within a lease", || {
        others_lost.extend(led.iter().enumerate().filter(|(i, e)| *i != taken && !e.is_leader()).map(|(i, _)| i));
        !led[taken].is_leader()
    }).await;
    // The seats seen before the takeover are listed again by the renew that finds lost moved
    // (the one that stepped the taken seat's elector down, unless its deadline came first).
    until(lease, "the renew after the takeover lists every seat again", || session.stats().listed_seats - after.listed_seats >= 99).await;
    let relisted = session.stats().listed_seats - after.listed_seats;
    eprintln!("forced out: stepped down {stepped_down:?} after the force ({:?} in all), {relisted} seats listed since", forced_at.elapsed());
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    others_lost.extend(led.iter().enumerate().filter(|(i, e)| *i != taken && !e.is_leader()).map(|(i, _)| i));
    assert!(others_lost.is_empty(), "the other seats lead on: {others_lost:?}");
    assert!(!led[taken].is_leader());
    let leader: Option<String> = admin
        .exec_first("SELECT leader_id FROM leader_election WHERE service_id = ?", (names[taken].as_str(),))
        .await.unwrap().unwrap();
    assert_eq!(leader.as_deref(), Some("node-x"));

    session.shutdown().await.unwrap();
    drop(admin);
    drop(led);
    drop_accounts(&db, &[&user]).await;
    db.drop_db().await;
}

/// Thousands of takeovers never starve the renews of the seats a session holds: a session
/// leading 20 services with a 1 s lease starts electors for 1,000 new services at once, whose
/// seats campaign_seats creates and takes, 500 a call (what it leaves goes one by one, about a
/// millisecond each); the 20 keep leading throughout. What keeps them: the takeovers and the
/// one-by-one campaigns each yield to queued calls every batch window, and a campaign whose
/// elector stopped waiting is not sent. Without the yields a held seat stepped down
/// (DeadlinePassed) here: the one-by-one campaigns on an idle machine, two takeovers of 500 seats
/// back to back under the load of `make test`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn takeovers_never_starve_the_renews_of_held_seats() {
    let db = TestDb::migrated("session_starve").await;
    let (user, pool) = app_account(&db, "sstarve").await;
    let session = Session::builder(pool).node_id("node-a").lease(Duration::from_secs(1)).start().unwrap();
    let held: Vec<Elector> = services(20).iter().map(|s| session.elector(s.as_str()).unwrap()).collect();
    until(Duration::from_secs(10), "node a leads the first 20", || held.iter().all(Elector::is_leader)).await;
    let mut events: Vec<_> = held.iter().map(Elector::events).collect();
    let more: Vec<Elector> = (0..1000).map(|i| session.elector(format!("vacant-{i:04}")).unwrap()).collect();
    let took = until(Duration::from_secs(60), "node a leads the 1,000 vacant services", || more.iter().all(Elector::is_leader)).await;
    let stats = session.stats();
    println!("a session took 1,000 vacant seats in {took:?} while renewing its 20 (lease 1 s): {} takeover calls, {} campaigns one by one",
             stats.take_calls, stats.single_campaigns);
    for (i, rx) in events.iter_mut().enumerate() {
        while let Ok(event) = rx.try_recv() {
            assert!(!matches!(event, Event::StoppedLeading { .. }), "held seat {i} stepped down during the takeovers: {event:?}");
        }
    }
    assert!(held.iter().all(Elector::is_leader));
    // 1,020 resigns go in three resign_seats (at most 500 seats each) on one connection: those
    // not done within the request timeout (200 ms here) lapse with their leases, and shutdown
    // says so.
    if let Err(e) = session.shutdown().await {
        assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    }
    drop((held, more));
    drop_accounts(&db, &[&user]).await;
    db.drop_db().await;
}

/// Two sessions, a leading `a` and a following `b`, of `n` services with `lease` and `retry`;
/// returns them with their electors once `a` leads all and each of b's knows it.
async fn leader_and_follower(db: &TestDb, tag: &str, n: usize, lease: Duration, retry: Duration)
    -> (Vec<String>, Session, Vec<Elector>, Session, Vec<Elector>) {
    let ids = services(n);
    let (ua, pa) = app_account(db, &format!("{tag}_a")).await;
    let (ub, pb) = app_account(db, &format!("{tag}_b")).await;
    let a = Session::builder(pa).node_id("node-a").lease(lease).retry_interval(retry).start().unwrap();
    let electors_a: Vec<Elector> = ids.iter().map(|s| a.elector(s.as_str()).unwrap()).collect();
    until(Duration::from_secs(20), "node a leads every service", || electors_a.iter().all(Elector::is_leader)).await;
    let b = Session::builder(pb).node_id("node-b").lease(lease).retry_interval(retry).start().unwrap();
    let electors_b: Vec<Elector> = ids.iter().map(|s| b.elector(s.as_str()).unwrap()).collect();
    until(Duration::from_secs(20), "node b knows node a leads", || {
        electors_b.iter().all(|e| e.state().leader_id.as_deref() == Some("node-a"))
    })
    .await;
    (vec![ua, ub], a, electors_a, b, electors_b)
}

/// Quiet followers: while the follower session waits on the leader session's wake-up lock, its
/// electors look at their seats only when the lease they saw can end, not every retry interval.
/// Polling, 20 electors with a 200 ms retry interval would send about 5 batches a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn followers_of_a_session_stay_quiet_while_its_lock_is_held() {
    let db = TestDb::migrated("session_quiet").await;
    let (users, a, electors_a, b, electors_b) =
        leader_and_follower(&db, "squiet", 20, Duration::from_secs(30), Duration::from_millis(200)).await;
    // Let b's wait on a's lock begin, then count b's calls for 3 s.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let before = b.stats();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = b.stats();
    let calls = (after.batch_calls - before.batch_calls) + (after.single_campaigns - before.single_campaigns);
    println!("follower session's calls in 3 s while watching: {calls} (polling: about 15)");
    assert!(calls <= 2, "b's followers should wait on a's lock, not poll: {calls} calls in 3 s ({after:?})");
    assert!(electors_a.iter().all(Elector::is_leader));
    a.shutdown().await.unwrap();
    until(Duration::from_secs(10), "node b leads every service", || electors_b.iter().all(Elector::is_leader)).await;
    b.shutdown().await.unwrap();
    drop((electors_a, electors_b));
    drop_accounts(&db, &users.iter().map(String::as_str).collect::<Vec<_>>()).await;
    db.drop_db().await;
}

/// A session's shutdown wakes the followers of its seats at once (its lock is let go after the
/// last resign committed), and the follower session takes the seats in one batched takeover.
/// With a 30 s retry interval and a 60 s lease, a follower that polled would wait at least
/// 24 s (the retry interval less its jitter): the 15 s bound holds only through the wake-up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_shutdown_wakes_the_follower_session_which_takes_all_in_one_call() {
    let db = TestDb::migrated("session_wake").await;
    let (users, a, electors_a, b, electors_b) =
        leader_and_follower(&db, "swake", 20, Duration::from_secs(60), Duration::from_secs(30)).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let before = b.stats();
    let t0 = Instant::now();
    a.shutdown().await.unwrap();
    let took = until(Duration::from_secs(15), "node b leads every service, woken", || electors_b.iter().all(Elector::is_leader)).await;
    let after = b.stats();
    println!("woken takeover of 20 seats: {:?}; {:?}", t0.elapsed().max(took), after);
    assert!(after.take_calls > before.take_calls, "the takeover was batched: {after:?}");
    assert!(after.taken_seats - before.taken_seats >= 2, "several seats in one campaign_seats: {after:?}");
    // a's shutdown gave its 20 seats up in one release_lease (src/session/resigns.rs, step 0):
    // one transaction, so every term ended at the same instant of the database's clock (one by
    // one, each at its own), the instant its node lease ended.
    let mut admin = db.conn().await;
    let (terms, instants): (i64, i64) = admin
        .query_first("SELECT COUNT(*), COUNT(DISTINCT ended_at) FROM leader_election_history \
                      WHERE leader_id = 'node-a' AND ended_how = 'resigned'")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((terms, instants), (20, 1), "a's 20 terms ended at one instant");
    let released: i64 = admin
        .query_first("SELECT COUNT(*) FROM leader_election_history h JOIN leader_election_lease l \
                        ON l.node_id = h.leader_id AND l.expires_at = h.ended_at \
                      WHERE h.leader_id = 'node-a' AND h.ended_how = 'resigned'")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(released, 20, "a's terms ended with its node lease, by one release_lease (resign_seats leaves the lease as it was)");
    drop(admin);
    b.shutdown().await.unwrap();
    drop((electors_a, electors_b));
    drop_accounts(&db, &users.iter().map(String::as_str).collect::<Vec<_>>()).await;
    db.drop_db().await;
}

/// A resign (or handover) of one seat in a session that still leads others blinks the
/// session's lock: its followers wake and take the seat, long before the 30 s retry interval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resign_of_one_seat_in_a_session_wakes_its_followers() {
    let db = TestDb::migrated("session_blink").await;
    let (users, a, electors_a, b, electors_b) =
        leader_and_follower(&db, "sblink", 3, Duration::from_secs(60), Duration::from_secs(30)).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(electors_a[1].resign().await.unwrap());
    until(Duration::from_secs(15), "node b leads the resigned seat, woken", || electors_b[1].is_leader()).await;
    assert!(electors_a[0].is_leader() && electors_a[2].is_leader(), "the other seats stay a's");
    assert!(electors_a[2].handover("node-b").await.unwrap());
    until(Duration::from_secs(15), "node b leads the handed-over seat, woken", || electors_b[2].is_leader()).await;
    assert!(electors_a[0].is_leader() && !electors_b[0].is_leader());
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
    drop((electors_a, electors_b));
    drop_accounts(&db, &users.iter().map(String::as_str).collect::<Vec<_>>()).await;
    db.drop_db().await;
}

/// A leading session `a` and a polling follower session `b` (no wake-up lock, a 300 ms retry
/// interval) of `n` services with `lease`, each on an account of its own (b's without the
/// procedures in `revoked`); returns them once `a` leads all and each of b's electors knows it.
async fn leader_and_polling_follower(db: &TestDb, tag: &str, n: usize, lease: Duration, revoked: &[&str])
    -> (Vec<String>, Session, Vec<Elector>, Session, Vec<Elector>) {
    let ids = services(n);
    let (ua, pa) = app_account(db, &format!("{tag}_a")).await;
    let (ub, pb) = app_account(db, &format!("{tag}_b")).await;
    let mut admin = db.conn().await;
    for procedure in revoked {
        admin.query_drop(format!("REVOKE EXECUTE ON PROCEDURE `{}`.{procedure} FROM '{ub}'@'%'", db.name)).await.unwrap();
    }
    let a = Session::builder(pa).node_id("node-a").lease(lease).start().unwrap();
    let electors_a: Vec<Elector> = ids.iter().map(|s| a.elector(s.as_str()).unwrap()).collect();
    until(Duration::from_secs(20), "node a leads every service", || electors_a.iter().all(Elector::is_leader)).await;
    let b = Session::builder(pb).node_id("node-b").lease(lease).retry_interval(Duration::from_millis(300))
        .wakeup_lock(false).start().unwrap();
    let electors_b: Vec<Elector> = ids.iter().map(|s| b.elector(s.as_str()).unwrap()).collect();
    until(Duration::from_secs(20), "node b knows node a leads", || {
        electors_b.iter().all(|e| e.state().leader_id.as_deref() == Some("node-a"))
    })
    .await;
    (vec![ua, ub], a, electors_a, b, electors_b)
}

/// Followers read their leader's node lease, not their seats (src/session/watched.rs): a
/// follower session that polls (no wake-up lock, a 300 ms retry interval) answers almost every
/// look of its 100 electors from one row of the leader's lease (`watch_leases`), listing almost
/// no seat. Every seat that leaves the lease moves its count (sql/V16__lease_moves.sql), so the
/// follower still sees, within a few looks, a seat its leader resigned while leading on (the
/// lease valid all along: without the count it would follow the resigned seat's node for as long
/// as that node lived), and one an operator forced to another node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn followers_read_the_leaders_lease_and_still_see_each_seat_that_leaves_it() {
    let db = TestDb::migrated("session_watch").await;
    let ids = services(100);
    let lease = Duration::from_secs(3);
    let (users, a, electors_a, b, electors_b) = leader_and_polling_follower(&db, "swatch", ids.len(), lease, &[]).await;
    tokio::time::sleep(Duration::from_secs(1)).await;

    let before = b.stats();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = b.stats();
    let (watched, listed) = (after.watched_seats - before.watched_seats, after.listed_seats - before.listed_seats);
    println!("follower session, 3 s of 300 ms looks at 100 seats: {watched} answered from the lease in {} calls, {listed} listed",
             after.watch_calls - before.watch_calls);
    assert!(watched >= 500, "the followers' looks were answered from the leader's lease: {watched} ({after:?})");
    assert!(listed * 20 <= watched, "almost no followed seat was listed: {listed} listed, {watched} watched");
    assert!(electors_b.iter().all(|e| !e.is_leader() && e.state().leader_id.as_deref() == Some("node-a")));

    // a resigns one seat and leads on: the lease stays valid, its count moves.
    assert!(electors_a[5].resign().await.unwrap());
    until(Duration::from_secs(5), "node b leads the seat node a resigned", || electors_b[5].is_leader()).await;
    // An operator forces another to a third node.
    let mut admin = db.conn().await;
    let r: Vec<mysql_async::Row> = admin.exec("CALL force_leader(?, 'node-x', 60000)", (ids[7].as_str(),)).await.unwrap();
    assert_eq!(r.len(), 1);
    until(Duration::from_secs(5), "node b's follower of the forced seat follows node-x", || {
        electors_b[7].state().leader_id.as_deref() == Some("node-x")
    })
    .await;
    until(lease + Duration::from_secs(1), "node a's elector of the forced seat steps down", || !electors_a[7].is_leader()).await;
    assert!(electors_a.iter().enumerate().all(|(i, e)| e.is_leader() == (i != 5 && i != 7)), "a leads the others");
    assert!(electors_b.iter().enumerate().all(|(i, e)| e.is_leader() == (i == 5)), "b leads the seat a resigned alone");
    a.shutdown().await.unwrap();
    until(Duration::from_secs(10), "node b leads every seat of a's", || {
        electors_b.iter().enumerate().all(|(i, e)| e.is_leader() == (i != 7))
    })
    .await;
    b.shutdown().await.unwrap();
    drop((electors_a, electors_b, admin));
    drop_accounts(&db, &users.iter().map(String::as_str).collect::<Vec<_>>()).await;
    db.drop_db().await;
}

/// An account granted before `watch_leases` (or a schema before it): its follower session lists
/// every seat it follows, as before, and still sees its leader resign one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_session_without_watch_leases_lists_its_seats() {
    let db = TestDb::migrated("session_no_watch").await;
    let (users, a, electors_a, b, electors_b) =
        leader_and_polling_follower(&db, "snowatch", 20, Duration::from_secs(3), &["watch_leases"]).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let stats = b.stats();
    assert!(stats.watched_seats == 0 && stats.listed_seats >= 100, "b lists the seats it follows: {stats:?}");
    assert!(electors_a[3].resign().await.unwrap());
    until(Duration::from_secs(5), "node b leads the seat node a resigned", || electors_b[3].is_leader()).await;
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
    drop((electors_a, electors_b));
    drop_accounts(&db, &users.iter().map(String::as_str).collect::<Vec<_>>()).await;
    db.drop_db().await;
}

/// A session logs an incident once for all its seats, not once per seat (issue "Fleets", logs
/// per incident): 30 seats, then every call refused (EXECUTE revoked) until each seat's term
/// ends for lack of a renew, then the grant back and every seat led again. Before, that was 30
/// errors for the failed calls and 30 warnings for the lost terms, and 60 lines more when it
/// cleared; now one error, one warning per second in which terms stopped, and a few lines when
/// it clears.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_logs_an_incident_once_for_all_its_seats() {
    let log = common::captured_log();
    let db = TestDb::migrated("session_log").await;
    let (user, pool) = app_account(&db, "slog").await;
    let node = format!("node-log-{}", std::process::id());
    let session = Session::builder(pool).node_id(node.as_str()).lease(Duration::from_secs(1)).start().unwrap();
    let electors: Vec<Elector> = services(30).iter().map(|s| session.elector(s.as_str()).unwrap()).collect();
    until(Duration::from_secs(10), "the node leads every service", || electors.iter().all(Elector::is_leader)).await;

    let mut admin = db.conn().await;
    for procedure in ["campaign", "leader_election_campaign", "renew_seats", "campaign_seats", "renew_lease", "take_seats", "grant_lease"] {
        admin.query_drop(format!("REVOKE EXECUTE ON PROCEDURE `{}`.{procedure} FROM '{user}'@'%'", db.name)).await.unwrap();
    }
    until(Duration::from_secs(10), "every seat steps down", || electors.iter().all(|e| !e.is_leader())).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    procedures::grant(&db.pool, &Account::parse(&format!("'{user}'@'%'")).unwrap(), Role::App, &["%".to_string()]).await.unwrap();
    until(Duration::from_secs(10), "the node leads every service again", || electors.iter().all(Elector::is_leader)).await;
    // The incident ends with the first whole second of calls without a failure.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    session.shutdown().await.unwrap();

    let node_field = format!("{node:?}");
    let lines: Vec<(tracing::Level, String)> = log.lock().unwrap().iter()
        .filter(|(_, n, _)| *n == node_field || n.trim_matches('"') == node)
        .map(|(level, _, message)| (*level, message.clone()))
        .collect();
    let loud: Vec<&(tracing::Level, String)> = lines.iter().filter(|(level, _)| *level <= tracing::Level::WARN).collect();
    assert!(loud.iter().any(|(level, m)| *level == tracing::Level::ERROR && m.contains("election calls fail")), "{lines:#?}");
    let stopped: u64 = loud.iter().filter_map(|(_, m)| m.strip_prefix("stopped leading ")?.split(' ').next()?.parse::<u64>().ok()).sum();
    assert_eq!(stopped, 30, "every lost term is counted: {lines:#?}");
    assert!(loud.len() <= 6, "{} warnings and errors for one incident: {loud:#?}", loud.len());
    assert!(lines.iter().any(|(_, m)| m.contains("election calls succeed again")), "{lines:#?}");
    assert!(lines.len() <= 14, "{} lines in all: {lines:#?}", lines.len());
    drop(admin);
    drop(electors);
    drop_accounts(&db, &[&user]).await;
    db.drop_db().await;
}

/// A session whose renews take longer than its renew interval says so once for all its seats,
/// and once when they keep up again (issue "Fleets": a client that cannot serve its electors
/// says so), not once per renew or per seat. A slow link: the tests' proxy holds every chunk
/// 400 ms each way, so a renew's round trip takes at least 800 ms against an interval of
/// 500 ms (an undelayed renew of 20 seats takes 5-50 ms); the lease (5 s) outlasts such renews,
/// and every seat stays led through them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_says_once_that_its_renews_fall_behind_and_once_that_they_keep_up() {
    let log = common::captured_log();
    let db = TestDb::migrated("session_pace").await;
    let proxy = common::proxy::Proxy::start(common::proxy::server_addr(&db.url)).await;
    let pool = Pool::new(Opts::from_url(&proxy.url_for(&db.url)).unwrap());
    let node = format!("node-pace-{}", std::process::id());
    let session = Session::builder(pool)
        .node_id(node.as_str())
        .lease(Duration::from_secs(5))
        .renew_interval(Duration::from_millis(500))
        .start()
        .unwrap();
    // The session's lines so far: (level, message).
    let node_field = format!("{node:?}");
    let lines = || -> Vec<(tracing::Level, String)> {
        log.lock().unwrap().iter()
            .filter(|(_, n, _)| *n == node_field || n.trim_matches('"') == node)
            .map(|(level, _, message)| (*level, message.clone()))
            .collect()
    };
    // Its lines about the renews' pace: true for "behind", false for "keep up again".
    let pace = |lines: &[(tracing::Level, String)]| -> Vec<bool> {
        lines.iter().filter_map(|(level, m)| {
            if m.contains("longer than its renew interval") {
                assert_eq!(*level, tracing::Level::WARN, "{m}");
                assert!(m.contains(" seats took "), "it counts the seats: {m}");
                Some(true)
            } else {
                m.contains("less than its renew interval again").then_some(false)
            }
        }).collect()
    };
    let electors: Vec<Elector> = services(20).iter().map(|s| session.elector(s.as_str()).unwrap()).collect();
    until(Duration::from_secs(10), "the node leads every service", || electors.iter().all(Elector::is_leader)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = pace(&lines());
    proxy.delay(400);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(electors.iter().all(Elector::is_leader), "renews of 800 ms and more keep a lease of 5 s");
    let slow = pace(&lines());
    proxy.restore();
    tokio::time::sleep(Duration::from_secs(2)).await;
    session.shutdown().await.unwrap();
    let all = lines();
    let after = pace(&all);

    // While the link was slow: one warning (none if a loaded machine had put the session behind
    // already, and it had not caught up), however many renews came late.
    let was_behind = before.last() == Some(&true);
    let during = &slow[before.len()..];
    assert_eq!(during.iter().filter(|&&b| b).count(), usize::from(!was_behind), "{all:#?}");
    assert_eq!(slow.last(), Some(&true), "behind when the link was mended: {all:#?}");
    // Once it is mended: a line saying the renews keep up again, first.
    assert_eq!(after[slow.len()..].first(), Some(&false), "{all:#?}");
    // Never the same line twice in a row: once per incident, not per renew.
    assert!(after.windows(2).all(|w| w[0] != w[1]), "{all:#?}");
    assert!(!all.iter().any(|(_, m)| m.starts_with("stopped leading") && !m.ends_with(": shutdown")),
            "no seat stepped down before the shutdown: {all:#?}");
    drop(electors);
    db.drop_db().await;
}

/// A session with fallback servers (issue 40) whose first server is down: its first call fails
/// at once (the connection is refused, a transient failure), every later call goes to the
/// fallback, and its electors lead there. A plain elector's calls move the same way.
#[tokio::test]
async fn a_session_whose_first_server_is_down_leads_through_its_fallback() {
    let db = TestDb::migrated("session_fallback").await;
    let ids = services(10);
    let (user, live) = app_account(&db, "sfall").await;
    // A loopback port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dead = Pool::new(OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).ip_or_hostname("127.0.0.1").tcp_port(port));
    let session = Session::builder(dead)
        .fallback_servers([live])
        .node_id("node-f")
        .lease(Duration::from_secs(2))
        .start()
        .unwrap();
    let electors: Vec<Elector> = ids.iter().map(|s| session.elector(s.as_str()).unwrap()).collect();
    let took = until(Duration::from_secs(20), "the session leads every service through its fallback", || {
        electors.iter().all(Elector::is_leader)
    })
    .await;
    println!("first server down: the session led all 10 through its fallback in {took:?}");
    // It keeps them: a lease of renews, all on the fallback.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(electors.iter().all(Elector::is_leader), "the session renews its seats on the fallback");
    session.shutdown().await.unwrap();
    let mut admin = db.conn().await;
    let led: Vec<u64> = admin.query("SELECT COUNT(*) FROM leader_election WHERE leader_id IS NOT NULL").await.unwrap();
    assert_eq!(led, vec![0], "the shutdown resigned every seat, on the fallback");
    drop((electors, admin));
    drop_accounts(&db, &[&user]).await;
    db.drop_db().await;
}

/// The families and samples of a Prometheus text exposition (0.0.4), checked as a scraper does:
/// each `# HELP` and `# TYPE` once, before its samples; a family's samples together; every
/// sample line `name{label="value",...} number`, labels escaped. Returns the samples, by
/// `name{labels}` as written.
fn parse_exposition(text: &str) -> HashMap<String, f64> {
    let mut types: HashMap<String, String> = HashMap::new();
    let mut helps = std::collections::HashSet::new();
    let mut families_done = std::collections::HashSet::new();
    let mut current: Option<String> = None;
    let mut samples = HashMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap().to_string();
            assert!(helps.insert(name.clone()), "HELP of {name} twice");
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("# TYPE name kind");
            assert!(["gauge", "counter", "histogram"].contains(&kind), "type {kind}");
            assert!(types.insert(name.to_string(), kind.to_string()).is_none(), "TYPE of {name} twice");
            continue;
        }
        assert!(!line.starts_with('#') && !line.is_empty(), "unexpected line {line:?}");
        // name
        let end = line.find(['{', ' ']).expect("a sample has a value");
        let name = &line[..end];
        assert!(!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
                && !name.starts_with(|c: char| c.is_ascii_digit()), "metric name {name:?}");
        // labels
        let mut rest = &line[end..];
        if let Some(labels) = rest.strip_prefix('{') {
            let mut chars = labels.char_indices().peekable();
            let close = loop {
                let (i, _) = *chars.peek().expect("labels end");
                if labels[i..].starts_with('}') {
                    break i;
                }
                let eq = labels[i..].find("=\"").expect("label=\"value\"") + i;
                let key = &labels[i..eq];
                assert!(!key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "label name {key:?}");
                while chars.peek().is_some_and(|(j, _)| *j <= eq + 1) {
                    chars.next();
                }
                loop {
                    match chars.next().expect("label value ends") {
                        (_, '\\') => assert!(matches!(chars.next(), Some((_, '\\' | '"' | 'n'))), "escape in {line}"),
                        (_, '"') => break,
                        (_, '\n') => panic!("raw newline"),
                        _ => {}
                    }
                }
                if let Some((_, ',')) = chars.peek() {
                    chars.next();
                }
            };
            rest = &labels[close + 1..];
        }
        let value = rest.strip_prefix(' ').unwrap_or_else(|| panic!("one space before the value: {line:?}"));
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("value of {line:?}"));
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s).filter(|f| types.get(*f).is_some_and(|k| k == "histogram")))
            .unwrap_or(name);
        assert!(types.contains_key(family) && helps.contains(family), "{family}: a sample before its HELP and TYPE");
        if current.as_deref() != Some(family) {
            if let Some(done) = current.replace(family.to_string()) {
                families_done.insert(done);
            }
            assert!(!families_done.contains(family), "{family}'s samples are not together");
        }
        samples.insert(line[..line.len() - rest.len()].to_string(), value);
    }
    samples
}

/// Metrics at scale (issue 42 item 6): a session of 1,000 services renders its own series and a
/// compact per-service part, small enough that 10,000 services stay under 1 MB a scrape; the
/// detailed form still has every elector's full series.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_metrics_stay_small_at_1000_services() {
    const N: usize = 1000;
    let db = TestDb::migrated("session_metrics").await;
    let ids = services(N);
    let (ua, pa) = app_account(&db, "smet_a").await;
    let (ub, pb) = app_account(&db, "smet_b").await;
    let lease = Duration::from_secs(3);
    let session = Session::builder(pa).node_id("node-a").lease(lease).start().unwrap();
    let electors: Vec<Elector> = ids.iter().map(|s| session.elector(s.as_str()).unwrap()).collect();
    let took = until(Duration::from_secs(60), "node a leads every service", || electors.iter().all(Elector::is_leader)).await;
    println!("node a took {N} vacant seats in {took:?}");
    // A second node follows the first 50 services.
    let follower = Session::builder(pb).node_id("node-b").lease(lease).start().unwrap();
    let following: Vec<Elector> = ids[..50].iter().map(|s| follower.elector(s.as_str()).unwrap()).collect();
    until(Duration::from_secs(20), "node b knows node a leads", || {
        following.iter().all(|e| e.state().leader_id.as_deref() == Some("node-a"))
    })
    .await;
    // At least one renew interval (lease / 5) after every seat was taken: renews went out.
    tokio::time::sleep(lease / 5 * 2).await;

    let text = session.metrics_text();
    let samples = parse_exposition(&text);
    let get = |key: &str| *samples.get(key).unwrap_or_else(|| panic!("no sample {key}"));
    assert_eq!(get(r#"mysqlleader_session_seats{node="node-a",state="leading"}"#), N as f64, "every seat leads");
    assert_eq!(get(r#"mysqlleader_session_seats{node="node-a",state="following"}"#), 0.0);
    assert_eq!(get(r#"mysqlleader_session_seats{node="node-a",state="vacant"}"#), 0.0);
    let batches = get(r#"mysqlleader_session_renew_batches_total{node="node-a"}"#);
    assert!(batches > 0.0, "renews went out in batches");
    assert!(get(r#"mysqlleader_session_renewed_seats_total{node="node-a"}"#) >= batches, "each batch carried a seat at least");
    assert_eq!(get(r#"mysqlleader_session_renew_batch_duration_seconds_count{node="node-a"}"#), batches,
               "one observed round trip per renew_seats call");
    assert_eq!(get(r#"mysqlleader_session_renew_batch_duration_seconds_bucket{node="node-a",le="+Inf"}"#), batches);
    assert!(get(r#"mysqlleader_session_renew_batch_duration_seconds_sum{node="node-a"}"#) > 0.0);
    assert!(get(r#"mysqlleader_session_taken_seats_total{node="node-a"}"#) > 0.0, "the vacant seats were taken in batches");
    for key in ["renew_batch_failures_total", "take_batches_total", "take_batch_failures_total", "resign_batches_total",
                "single_campaigns_total"] {
        get(&format!("mysqlleader_session_{key}{{node=\"node-a\"}}"));
    }
    for id in &ids {
        assert_eq!(get(&format!("leader_election_master_status{{name=\"{id}\"}}")), 1.0, "{id}");
        assert!(get(&format!("mysqlleader_term{{name=\"{id}\"}}")) >= 1.0, "{id}");
    }
    assert!(!text.contains("mysqlleader_campaign_duration_seconds") && !text.contains("mysqlleader_leadership_transitions_total")
            && !text.contains("mysqlleader_campaign_errors_total"), "the compact form has no per-service counters or histogram");
    let f = parse_exposition(&follower.metrics_text());
    assert_eq!(f[r#"mysqlleader_session_seats{node="node-b",state="following"}"#], 50.0, "node b follows 50 seats");
    assert_eq!(f[r#"mysqlleader_session_seats{node="node-b",state="leading"}"#], 0.0);

    // The size: the session's series once, then the same bytes again per service.
    let per_service_start = text.find("# HELP leader_election_master_status").unwrap();
    let per_service = (text.len() - per_service_start) as f64 / N as f64;
    let bound_10k = per_service_start as f64 + per_service * 10_000.0;
    let detailed = session.metrics_text_detailed();
    println!("session metrics, {N} services of {}-byte ids: compact {} bytes ({} of session series, {per_service:.1} per service), \
              so 10,000 services: {:.0} bytes ({:.2} MB); detailed {} bytes ({:.0} per service)",
             ids[0].len(), text.len(), per_service_start, bound_10k, bound_10k / 1e6, detailed.len(), detailed.len() as f64 / N as f64);
    assert!(bound_10k < 1_000_000.0, "10,000 services would render {bound_10k} bytes: not under 1 MB");
    assert!(per_service <= (2 * ids[0].len() + 80) as f64, "{per_service} bytes a service");

    // The detailed form: valid, the session series, and every per-service series.
    let d = parse_exposition(&detailed);
    assert_eq!(d[r#"mysqlleader_session_seats{node="node-a",state="leading"}"#], N as f64);
    for id in &ids {
        for key in ["leader_election_master_status", "mysqlleader_term", "mysqlleader_leadership_transitions_total",
                    "mysqlleader_campaign_errors_total", "mysqlleader_campaign_duration_seconds_sum",
                    "mysqlleader_campaign_duration_seconds_count"] {
            assert!(d.contains_key(&format!("{key}{{name=\"{id}\"}}")), "detailed: no {key} of {id}");
        }
        assert!(d[&format!("mysqlleader_campaign_duration_seconds_count{{name=\"{id}\"}}")] >= 1.0);
        assert!(d.contains_key(&format!("mysqlleader_campaign_duration_seconds_bucket{{name=\"{id}\",le=\"+Inf\"}}")));
        assert!(d[&format!("mysqlleader_leadership_transitions_total{{name=\"{id}\"}}")] >= 1.0, "{id} started leading");
    }

    for s in [follower, session] {
        if let Err(e) = s.shutdown().await {
            assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
        }
    }
    drop((electors, following));
    drop_accounts(&db, &[&ua, &ub]).await;
    db.drop_db().await;
}

/// The threads of this process whose name starts with `prefix` (/proc/self/task/*/comm).
fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|tasks| {
            tasks.flatten().filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.starts_with(prefix))).count()
        })
        .unwrap_or(0)
}

/// Issue "Fleets", done when: 3 nodes × 10,000 services start with a bounded thread count per
/// process, and a graceful close of a 10,000-seat session hands over at once. Three sessions
/// (one per node account) start at once on 10,000 new services, all in this process, on a
/// runtime of the test's own (2 workers, its threads named `fleet`): every service gets exactly
/// one leader that all three nodes know, and the runtime's threads stay its 2 workers (tokio's
/// blocking pool allowed a few, which the library does not use) while 30,000 electors run: an
/// elector is a task, and a session's calls share its two connections. Then the node that leads
/// the most seats is cut off from the server (a crash, as the server sees it): its two
/// followers take its seats, each seat once. Then the node that leads the most seats of the
/// two left shuts down: the last one leads every service well within one lease (20 s),
/// so by the hand-over (its release_lease and wake-up lock), not by its leases running out.
/// Last, the issue's own case: a fourth node follows all 10,000 services, and the node that
/// leads them all closes: the fourth leads every one well within a lease. The
/// times are printed, not judged: the benchmark's sessions section measures them on a quiet
/// machine (docs/benchmarks.md).
///
/// Run alone (`make test-fleet`; scripts/test-all.sh runs it after every other part): 30,000
/// electors beside other tests starved their timings on a shared 2-core machine (CI58: three
/// other session and login tests failed on MySQL).
#[test]
#[ignore = "run alone: make test-fleet (scripts/test-all.sh runs it after every other part)"]
fn three_nodes_start_10000_services_at_once_on_two_threads_then_a_crash_and_a_close_hand_over() {
    const N: usize = 10_000;
    const FLEET_THREADS: usize = 2 + 4;
    let lease = Duration::from_secs(20);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).thread_name("fleet").enable_all().build().unwrap();
    // The sessions' INFO lines, for what a failure needs to be read (the wake-up lock's).
    let log = common::captured_log();
    rt.block_on(async move {
        let db = TestDb::migrated("session_fleet").await;
        let ids: Vec<String> = (0..N).map(|i| format!("fleet-{i:05}")).collect();
        let mut nodes: Vec<(Session, Vec<Elector>)> = Vec::new();
        let mut users = Vec::new();
        let t0 = Instant::now();
        for n in ["a", "b", "c"] {
            let (user, pool) = app_account(&db, &format!("fleet_{n}")).await;
            let session = Session::builder(pool).node_id(format!("node-{n}")).lease(lease).start().unwrap();
            let electors: Vec<Elector> = ids.iter().map(|s| session.elector(s.as_str()).unwrap()).collect();
            nodes.push((session, electors));
            users.push(user);
        }
        // Every service led by exactly one node, which the two others know.
        let settled = |nodes: &[(Session, Vec<Elector>)], i: usize| {
            let leaders: Vec<&Elector> = nodes.iter().map(|(_, e)| &e[i]).filter(|e| e.is_leader()).collect();
            leaders.len() == 1 && nodes.iter().all(|(_, e)| e[i].state().leader_id.as_deref() == Some(leaders[0].node_id()))
        };
        let mut most = threads_named("fleet");
        let mut pending: Vec<usize> = (0..N).collect();
        while !pending.is_empty() {
            assert!(t0.elapsed() < Duration::from_secs(300), "{} of {N} services not settled within 300 s", pending.len());
            most = most.max(threads_named("fleet"));
            pending.retain(|&i| !settled(&nodes, i));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let took = t0.elapsed();
        // Steady for a while (every renew goes out meanwhile), the threads sampled again.
        let steady = Instant::now();
        while steady.elapsed() < lease / 5 * 2 {
            most = most.max(threads_named("fleet"));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!((0..N).all(|i| settled(&nodes, i)), "every service still has one leader, known by all");
        let led: Vec<usize> = nodes.iter().map(|(_, e)| e.iter().filter(|e| e.is_leader()).count()).collect();
        println!("3 nodes x {N} services started at once: every service led and known after {took:?} (seats led: {led:?}); \
                  the runtime's threads at most {most}");
        assert!(most <= FLEET_THREADS, "{most} threads for 3 x {N} electors: a thread per elector or per call?");

        // The node that leads the most seats is cut off from the server, as a crash or a
        // partition would (its account locked, its connections killed, so that it can neither
        // renew nor resign): its two followers take its seats once its lease has ended. Each
        // seat is taken once (not taken, resigned and taken again by a follower that gave up
        // waiting), hardly any by a campaign of its own, and none is left held by a follower
        // node id whose elector does not lead it (that seat waited out a lease: the slowest
        // seats of a takeover of 10,000, 27.8 s after the crash with a 10 s lease).
        let cut = (0..3).max_by_key(|&n| led[n]).unwrap();
        let before: Vec<SessionStats> = nodes.iter().map(|(s, _)| s.stats()).collect();
        let mut admin = db.conn().await;
        let mut held = Vec::new();
        for user in &users {
            held.push(common::connections_of(&mut admin, user).await);
        }
        println!("connections of each node before the cut: {held:?}");
        // A node's second connection is its wake-up lock's: where one is missing, its task
        // said why (a lost lock, a pause) at INFO.
        let wakeup: Vec<(String, String)> = log.lock().unwrap().iter()
            .filter(|(_, _, m)| m.contains("wake-up lock"))
            .map(|(_, node, m)| (node.clone(), m.clone()))
            .collect();
        println!("the sessions' wake-up lock lines so far: {wakeup:#?}");
        admin.query_drop(format!("ALTER USER '{}'@'%' ACCOUNT LOCK", users[cut])).await.unwrap();
        // Its connections, found by their login account (common::connections: the processlist's
        // USER names the procedures' definer while a call runs, and a run on MySQL found none
        // of them that way while the node's one connection was in a call: it renewed on), are
        // killed until none has shown for half a second.
        let crashed = Instant::now();
        let mut killed = Vec::new();
        let mut none_since = Instant::now();
        while none_since.elapsed() < Duration::from_millis(500) {
            let of_cut = common::connections_of(&mut admin, &users[cut]).await;
            if !of_cut.is_empty() {
                none_since = Instant::now();
            }
            for (id, _) in of_cut {
                killed.push((id, admin.query_drop(format!("KILL CONNECTION {id}")).await.is_ok()));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let others: Vec<usize> = (0..3).filter(|&n| n != cut).collect();
        let mut lapsed: Vec<usize> = (0..N).filter(|&i| nodes[cut].1[i].is_leader()).collect();
        let seats_of_cut = lapsed.len();
        while !lapsed.is_empty() {
            if crashed.elapsed() >= lease * 2 {
                // What a failure needs to be read: were the cut node's connections killed, does it
                // still renew, and what do the seats and their lease say now.
                let rows: Vec<(String, Option<String>, u64, Option<u64>, Option<i64>)> = admin
                    .query(format!(
                        "SELECT CAST(e.service_id AS CHAR), CAST(e.leader_id AS CHAR), e.term, e.lease_id, \
                                TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), e.lease_expires_at) DIV 1000 \
                           FROM leader_election_seats e WHERE e.service_id IN ('{}')",
                        lapsed.iter().take(3).map(|&i| ids[i].as_str()).collect::<Vec<_>>().join("', '")))
                    .await
                    .unwrap_or_default();
                let still = common::connections_of(&mut admin, &users[cut]).await;
                let cut_leads = lapsed.iter().filter(|&&i| nodes[cut].1[i].is_leader()).count();
                let stats: Vec<SessionStats> = nodes.iter().map(|(s, _)| s.stats()).collect();
                panic!("{} of the {seats_of_cut} seats of the node cut off not led by another node within two leases ({:?}); \
                        connections killed (id, ok): {killed:?}; its connections now: {still:?}; the cut node's electors \
                        still leading: {cut_leads}; seats (id, leader, term, lease id, ms left): {rows:?}; sessions' \
                        (take calls, taken, single campaigns, failed takes, failed renews): {:?}",
                       lapsed.len(), lease * 2,
                       stats.iter().map(|s| (s.take_calls, s.taken_seats, s.single_campaigns, s.take_failures, s.batch_failures)).collect::<Vec<_>>());
            }
            lapsed.retain(|&i| !others.iter().any(|&n| nodes[n].1[i].is_leader()));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let failover = crashed.elapsed();
        let (taken, single): (u64, u64) = others.iter().fold((0, 0), |(t, c), &n| {
            let now = nodes[n].0.stats();
            (t + now.taken_seats - before[n].taken_seats, c + now.single_campaigns - before[n].single_campaigns)
        });
        println!("node {} cut off with {seats_of_cut} seats (connections killed (id, ok): {killed:?}): every one led by another \
                  node {failover:?} after (lease {lease:?}); the two others took {taken} seats, {single} of them by a campaign each",
                 nodes[cut].1[0].node_id());
        assert!(taken as usize <= seats_of_cut + seats_of_cut / 100,
                "{taken} seats taken for {seats_of_cut} lapsed: seats taken, resigned and taken again");
        assert!(single as usize <= seats_of_cut / 100, "{single} campaigns one by one for {seats_of_cut} lapsed seats");
        let (session, electors) = nodes.remove(cut);
        let result = session.shutdown().await;
        println!("node {} (cut off) shut down: {result:?}", electors[0].node_id());
        drop(electors);
        let cut_user = users.remove(cut);
        admin.query_drop(format!("DROP USER IF EXISTS '{cut_user}'@'%'")).await.unwrap();
        drop(admin);
        // Steady again: every service led by one of the two, which both know.
        let steady = Instant::now();
        while !(0..N).all(|i| settled(&nodes, i)) {
            assert!(steady.elapsed() < lease, "the two nodes left never agreed on every service within a lease");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let led: Vec<usize> = nodes.iter().map(|(_, e)| e.iter().filter(|e| e.is_leader()).count()).collect();

        // The close of the node that leads the most seats of the two.
        let first = (0..2).max_by_key(|&n| led[n]).unwrap();
        let (session, electors) = nodes.remove(first);
        let closing = Instant::now();
        // Its result is printed, not judged: the shutdown waits at most the request timeout
        // (here 2 s) for its resign_seats calls, and under load thousands of seats can take
        // longer (Err(Timeout), the calls going on meanwhile); what counts is the hand-over below.
        let result = session.shutdown().await;
        let closed = (closing.elapsed(), result);
        let mut orphans: Vec<usize> = (0..N).collect();
        while !orphans.is_empty() {
            assert!(closing.elapsed() < lease, "{} of {N} services not led again within one lease ({lease:?}) of the close: \
                                                the seats were not handed over", orphans.len());
            orphans.retain(|&i| !nodes.iter().any(|(_, e)| e[i].is_leader()));
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        println!("node {} closed with {} seats (in, and with: {closed:?}); every service led by another node {:?} after the call",
                 electors[0].node_id(), led[first], closing.elapsed());
        drop(electors);

        // The issue's case: the close of a session that leads all 10,000 services. The last node
        // leads every one now; a fourth starts and follows them all, then the last one closes
        // (release_lease, src/session/resigns.rs): every service led by the fourth, well within
        // one lease. The time is printed (docs/benchmarks.md), with the fourth's takeover calls.
        let (last, last_electors) = nodes.pop().unwrap();
        let (user_d, pool_d) = app_account(&db, "fleet_d").await;
        users.push(user_d);
        let session_d = Session::builder(pool_d).node_id("node-d").lease(lease).start().unwrap();
        let electors_d: Vec<Elector> = ids.iter().map(|s| session_d.elector(s.as_str()).unwrap()).collect();
        let following = Instant::now();
        while !electors_d.iter().all(|e| e.state().leader_id.as_deref() == Some(last_electors[0].node_id())) {
            assert!(following.elapsed() < lease, "node-d never learnt that {} leads every service", last_electors[0].node_id());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(last_electors.iter().all(Elector::is_leader), "{} leads all {N}", last_electors[0].node_id());
        let before_d = session_d.stats();
        let closing = Instant::now();
        let result = last.shutdown().await;
        let closed = (closing.elapsed(), result);
        let mut orphans: Vec<usize> = (0..N).collect();
        while !orphans.is_empty() {
            assert!(closing.elapsed() < lease, "{} of {N} services not led by node-d within one lease ({lease:?}) of the close",
                    orphans.len());
            orphans.retain(|&i| !electors_d[i].is_leader());
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let handed = closing.elapsed();
        let after_d = session_d.stats();
        println!("node {} closed with all {N} seats (in, and with: {closed:?}); every service led by node-d {handed:?} after the call, \
                  in {} take calls ({} seats taken, {} by a campaign each)",
                 last_electors[0].node_id(), after_d.take_calls - before_d.take_calls, after_d.taken_seats - before_d.taken_seats,
                 after_d.single_campaigns - before_d.single_campaigns);
        drop(last_electors);
        let result = session_d.shutdown().await;
        println!("node node-d closed: {result:?}");
        drop(electors_d);
        for (session, electors) in nodes {
            let result = session.shutdown().await;
            println!("node {} closed: {result:?}", electors[0].node_id());
            drop(electors);
        }
        drop_accounts(&db, &users.iter().map(String::as_str).collect::<Vec<_>>()).await;
        db.drop_db().await;
    });
}
