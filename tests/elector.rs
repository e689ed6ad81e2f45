//! The elector against a real server: one leader among three, failover after a crash and after
//! resign, a cut connection, a paused process, a server restart, and fencing with assert_leader.
//!
//! Liveness bounds (new leader within one lease plus one retry) are checked with a slack for
//! this shared, noisy machine; safety (never two leaders at one instant, never leading past the
//! local deadline) is checked without any slack.

use crate::{common, sql_support};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysqlleader::{procedures, Elector, Error, Event, StopReason, WaitOutcome};
use tokio::time::Instant;

use common::overlap::{one_leader, watched, OverlapMonitor};

const LEASE: Duration = Duration::from_millis(2000);
const RENEW: Duration = Duration::from_millis(400);
const RETRY: Duration = Duration::from_millis(200);
/// Allowance for scheduling on a shared 2-core machine, on liveness bounds only.
const SLACK: Duration = Duration::from_millis(1500);

fn elector(pool: &mysql_async::Pool, service: &str, node: &str) -> Elector {
    Elector::builder(pool.clone(), service)
        .node_id(node)
        .lease(LEASE)
        .renew_interval(RENEW)
        .retry_interval(RETRY)
        .resign_on_drop(false)
        .start()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_electors_one_leader_crash_and_resign_hand_over() {
    let db = common::TestDb::migrated("el3").await;
    let mut electors: Vec<Option<Elector>> = (0..3).map(|i| Some(elector(&db.pool, "billing", &format!("node-{i}")))).collect();
    let monitor = OverlapMonitor::start(electors.iter().flatten().map(watched).collect());

    let all: Vec<&Elector> = electors.iter().flatten().collect();
    let first = one_leader(&all, Duration::from_secs(10)).await;
    let term1 = all[first].term();
    // Followers learn who leads.
    tokio::time::sleep(RETRY * 2).await;
    for e in &all {
        assert_eq!(e.leader_id().as_deref(), Some(all[first].node_id()), "{} sees the leader", e.node_id());
    }

    // A crash: the leader's task stops without resigning. The lease must lapse first.
    let crashed = electors[first].take().unwrap();
    let crashed_deadline = crashed.state().valid_until.unwrap();
    let t_crash = Instant::now();
    crashed.shutdown().await.unwrap();
    let rest: Vec<&Elector> = electors.iter().flatten().collect();
    let second = one_leader(&rest, LEASE + RETRY + SLACK).await;
    let failover = t_crash.elapsed();
    assert!(Instant::now() >= crashed_deadline, "took over before the crashed leader's deadline");
    assert_eq!(rest[second].term(), term1 + 1, "one acquisition, one term");
    println!("failover after a crash: {failover:?} (lease {LEASE:?}, retry {RETRY:?})");
    assert!(failover <= LEASE + RETRY + SLACK, "failover took {failover:?}");

    // A graceful resign: the other follower takes over within one retry interval.
    let t_resign = Instant::now();
    assert!(rest[second].resign().await.unwrap(), "the leader resigned");
    assert!(!rest[second].is_leader());
    let third = one_leader(&rest, RETRY + SLACK).await;
    let handover = t_resign.elapsed();
    assert_ne!(third, second, "a resigned elector no longer campaigns");
    assert_eq!(rest[third].term(), term1 + 2);
    println!("handover after resign: {handover:?}");
    assert!(handover <= RETRY + SLACK, "handover took {handover:?}");

    let samples = monitor.finish().await;
    assert!(samples > 100, "the monitor ran ({samples} samples)");
    for e in electors.into_iter().flatten() {
        e.shutdown().await.unwrap();
    }
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_report_each_transition_in_order() {
    let db = common::TestDb::migrated("elev").await;
    let a = elector(&db.pool, "orders", "a");
    let mut events = a.events();
    assert_eq!(a.wait_for_leadership(Some(Duration::from_secs(10))).await, WaitOutcome::Leading);
    let term = a.term();
    // An operator forces another node in: `a` sees it on its next renew and steps down.
    procedures::force_leader(&db.pool, "orders", "operator-pick", LEASE).await.unwrap();
    a.leadership_lost().await;
    assert!(!a.is_leader());
    let mut seen = Vec::new();
    while let Ok(Ok(e)) = tokio::time::timeout(Duration::from_millis(200), events.recv()).await {
        seen.push(e);
    }
    let expected_prefix = [
        Event::LeaderChanged { leader_id: Some("a".into()), term },
    ];
    assert_eq!(seen[0], expected_prefix[0], "{seen:?}");
    assert!(matches!(seen[1], Event::StartedLeading { term: t, .. } if t == term), "{seen:?}");
    assert_eq!(seen[2], Event::StoppedLeading { term, reason: StopReason::LostSeat }, "{seen:?}");
    assert_eq!(seen[3], Event::LeaderChanged { leader_id: Some("operator-pick".into()), term: term + 1 }, "{seen:?}");
    assert_eq!(seen.len(), 4, "each transition once: {seen:?}");
    a.shutdown().await.unwrap();
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_while_leader_cancels_work_when_leadership_ends() {
    let db = common::TestDb::migrated("elrun").await;
    let a = elector(&db.pool, "jobs", "a");
    let started = Arc::new(Mutex::new(None));
    let s2 = started.clone();
    let pool = db.pool.clone();
    let forcer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        while s2.lock().unwrap().is_none() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        procedures::force_leader(&pool, "jobs", "b", LEASE).await.unwrap();
    });
    let outcome = a
        .run_while_leader(async {
            *started.lock().unwrap() = Some(Instant::now());
            tokio::time::sleep(Duration::from_secs(3600)).await;
        })
        .await;
    let term = outcome.expect_err("the work was cancelled, not finished");
    assert_eq!(term, 1);
    assert!(!a.is_leader());
    forcer.await.unwrap();
    a.shutdown().await.unwrap();
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_connection_leader_steps_down_by_its_deadline_before_anyone_else_leads() {
    let db = common::TestDb::migrated("elcut").await;
    let proxy = common::proxy::Proxy::start(common::proxy::server_addr(&db.url)).await;
    let proxied = mysql_async::Pool::new(mysql_async::Opts::from_url(&proxy.url_for(&db.url)).unwrap());
    let a = elector(&proxied, "mail", "a-behind-proxy");
    assert_eq!(a.wait_for_leadership(Some(Duration::from_secs(10))).await, WaitOutcome::Leading);
    let b = elector(&db.pool, "mail", "b");
    let c = elector(&db.pool, "mail", "c");
    let mut a_events = a.events();
    let monitor = OverlapMonitor::start(vec![watched(&a), watched(&b), watched(&c)]);
    tokio::time::sleep(RENEW * 2).await;
    assert!(a.is_leader());

    proxy.cut();
    // A renew answered just before the cut may still be published: let it land, then take
    // the deadline that stands (no call can succeed any more).
    tokio::time::sleep(Duration::from_millis(100)).await;
    let deadline = a.state().valid_until.expect("a leads with a deadline");
    // Until the deadline a may still lead; from the deadline on it must not, at once.
    tokio::time::sleep_until(deadline).await;
    assert!(!a.is_leader(), "leading past the local deadline: {:?} deadline {:?} now {:?}", a.state(), deadline, Instant::now());
    let stop = tokio::time::timeout(Duration::from_secs(1), async {
        loop {
            match a_events.recv().await.unwrap() {
                Event::StoppedLeading { reason, .. } => return (Instant::now(), reason),
                _ => continue,
            }
        }
    })
    .await
    .expect("a reported stopping");
    assert_eq!(stop.1, StopReason::DeadlinePassed);
    // The task steps down 5 ms before the deadline; allow for a late timer on a busy machine.
    let late = stop.0.saturating_duration_since(deadline);
    println!("stop reported {late:?} after the deadline");
    assert!(late <= Duration::from_millis(100), "stop reported {late:?} after the deadline");

    let rest = [&b, &c];
    let winner = one_leader(&rest, LEASE + RETRY + SLACK).await;
    let took_over_at = Instant::now();
    assert!(took_over_at >= deadline);
    assert!(rest[winner].term() >= 2);
    monitor.finish().await;

    // Back online: a learns it lost the seat and follows.
    proxy.restore();
    tokio::time::sleep(LEASE).await;
    assert!(!a.is_leader());
    assert_eq!(a.leader_id().as_deref(), Some(rest[winner].node_id()));
    for e in [a, b, c] {
        e.shutdown().await.unwrap();
    }
    db.drop_db().await;
}

#[test]
fn paused_leader_is_not_leader_on_waking() {
    // The leader runs on a runtime of its own, on one thread, so a blocking task stalls it
    // entirely, as a GC pause or SIGSTOP would.
    let main_rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let db = main_rt.block_on(common::TestDb::migrated("elpause"));
    let paused_rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let pool = db.pool.clone();
    let leader = paused_rt.block_on(async { elector(&pool, "cron", "sleepy") });
    let leader = Arc::new(leader);
    let l2 = leader.clone();
    let rt_thread = std::thread::spawn(move || {
        paused_rt.block_on(async move {
            assert_eq!(l2.wait_for_leadership(Some(Duration::from_secs(10))).await, WaitOutcome::Leading);
            // Stall this runtime for two leases: no timer, no renew, nothing runs.
            std::thread::sleep(LEASE * 2);
            // First thing on waking: the elector must not claim leadership.
            let on_waking = l2.is_leader();
            tokio::time::sleep(LEASE).await;
            (on_waking, l2.is_leader(), l2.leader_id())
        })
    });
    main_rt.block_on(async {
        let deadline = loop {
            if let Some(d) = leader.state().valid_until {
                break d;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let other = elector(&db.pool, "cron", "awake");
        tokio::time::sleep_until(deadline).await;
        assert!(!leader.is_leader(), "a stalled process must not count itself leader past its deadline");
        assert_eq!(other.wait_for_leadership(Some(LEASE + RETRY + SLACK)).await, WaitOutcome::Leading);
        assert!(!leader.is_leader());
        let (on_waking, later, seen_leader) = rt_thread.join().unwrap();
        assert!(!on_waking, "leader on waking");
        assert!(!later, "retook the seat from a valid lease");
        assert_eq!(seen_leader.as_deref(), Some("awake"));
        assert!(other.is_leader());
        other.shutdown().await.unwrap();
        db.drop_db().await;
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_restart_never_gives_two_leaders_and_leadership_resumes() {
    // A private server: restarting the shared one would disturb the other tests.
    let dir = tempdir("restart");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/testdb.sh");
    let out = std::process::Command::new("bash").args([script, "start", &dir]).output().unwrap();
    assert!(out.status.success(), "start: {}", String::from_utf8_lossy(&out.stderr));
    let url = format!("mysql://mysqlleader:mysqlleader@127.0.0.1:{}/mysqlleader_test",
                      std::fs::read_to_string(format!("{dir}/port")).unwrap().trim());
    let pool = mysql_async::Pool::new(mysql_async::Opts::from_url(&url).unwrap());
    mysqlleader::migrate(&pool).await.unwrap();
    let a = elector(&pool, "ledger", "a");
    let b = elector(&pool, "ledger", "b");
    let monitor = OverlapMonitor::start(vec![watched(&a), watched(&b)]);
    let first = one_leader(&[&a, &b], Duration::from_secs(10)).await;
    let term_before = [&a, &b][first].term();

    let out = std::process::Command::new("bash").args([script, "restart", &dir]).output().unwrap();
    assert!(out.status.success(), "restart: {}", String::from_utf8_lossy(&out.stderr));
    let back = Instant::now();
    let leader = one_leader(&[&a, &b], LEASE + RETRY + SLACK * 2).await;
    println!("leader again {:?} after the server came back", back.elapsed());
    let term_after = [&a, &b][leader].term();
    assert!(term_after >= term_before, "terms never go back");
    monitor.finish().await;
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
    let _ = pool.disconnect().await;
    let _ = std::process::Command::new("bash").args([script, "stop", &dir]).status();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn assert_leader_fences_a_stale_leaders_write() {
    let db = common::TestDb::migrated("elfence").await;
    let mut conn = db.conn().await;
    conn.query_drop("CREATE TABLE ledger (id INT PRIMARY KEY, written_by VARCHAR(64), term BIGINT UNSIGNED)").await.unwrap();
    let a = elector(&db.pool, "ledger", "a");
    assert_eq!(a.wait_for_leadership(Some(Duration::from_secs(10))).await, WaitOutcome::Leading);
    let stale_term = a.term();
    // An operator moves leadership while `a` still believes it leads.
    let forced = procedures::force_leader(&db.pool, "ledger", "b", LEASE).await.unwrap();
    assert_eq!(forced.term, stale_term + 1);

    // a's write, fenced with its (stale) term, is rejected: the failed assert_leader rolls the
    // whole transaction back, the write made before it included.
    let mut tx = conn.start_transaction(Default::default()).await.unwrap();
    tx.exec_drop("INSERT INTO ledger VALUES (1, 'a', ?)", (stale_term,)).await.unwrap();
    let err = procedures::assert_leader(&mut tx, "ledger", "a", stale_term).await.unwrap_err();
    assert!(matches!(&err, Error::NotLeader { message, .. } if message.starts_with("mysqlleader: not the leader")), "{err:?}");
    assert!(!sql_support::in_transaction(&mut tx).await, "no transaction left open");
    tx.rollback().await.unwrap();

    // b's write at the current term commits.
    let mut tx = conn.start_transaction(Default::default()).await.unwrap();
    let ok = procedures::assert_leader(&mut tx, "ledger", "b", forced.term).await.unwrap();
    assert!(ok.is_leader && ok.term == forced.term && !ok.lease_remaining.is_zero());
    tx.exec_drop("INSERT INTO ledger VALUES (2, 'b', ?)", (forced.term,)).await.unwrap();
    tx.commit().await.unwrap();

    let rows: Vec<(i32, String)> = conn.query("SELECT id, written_by FROM ledger ORDER BY id").await.unwrap();
    assert_eq!(rows, vec![(2, "b".to_string())]);
    drop(conn);
    a.shutdown().await.unwrap();
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn builder_rejects_invalid_configuration_by_name() {
    let db = common::TestDb::empty("elcfg").await;
    let cases: Vec<(&str, mysqlleader::ElectorBuilder)> = vec![
        ("service_id", Elector::builder(db.pool.clone(), "")),
        ("node_id", Elector::builder(db.pool.clone(), "s").node_id("x".repeat(129))),
        ("lease", Elector::builder(db.pool.clone(), "s").lease(Duration::ZERO)),
        ("renew_interval", Elector::builder(db.pool.clone(), "s").lease(Duration::from_secs(1)).renew_interval(Duration::from_secs(1))),
        ("retry_interval", Elector::builder(db.pool.clone(), "s").retry_interval(Duration::from_secs(60))),
        ("retry_jitter", Elector::builder(db.pool.clone(), "s").retry_jitter(1.5)),
        ("request_timeout", Elector::builder(db.pool.clone(), "s").request_timeout(Duration::from_secs(30))),
        ("drift_margin", Elector::builder(db.pool.clone(), "s").drift_margin(Duration::from_secs(30))),
    ];
    for (name, builder) in cases {
        match builder.start() {
            Err(Error::InvalidArgument { parameter, message }) => {
                assert_eq!(parameter, name, "{message}");
            }
            Err(other) => panic!("{name}: {other:?}"),
            Ok(_) => panic!("{name}: accepted"),
        }
    }
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unmigrated_database_is_reported_as_such() {
    let db = common::TestDb::empty("elnomig").await;
    let err = procedures::campaign(&db.pool, "s", "n", LEASE).await.unwrap_err();
    assert!(matches!(err, Error::NotMigrated { .. }), "{err:?}");
    assert!(err.to_string().contains("mysqlleader migrate"));
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_server_is_a_connection_error_without_the_password() {
    let pool = mysqlleader::pool_from_url("mysql://app:hunter2@127.0.0.1:1/x").unwrap();
    let err = procedures::current_leader(&pool, "s").await.unwrap_err();
    assert!(matches!(err, Error::Connection { .. }), "{err:?}");
    assert!(err.is_transient());
    assert!(!format!("{err} {err:?}").contains("hunter2"));
    let err = mysqlleader::pool_from_url("mysql://app:hunter2@[nope/x").unwrap_err();
    assert!(!format!("{err} {err:?}").contains("hunter2"), "{err:?}");
}

/// A connection error names the server, `host:port` (never the user or the password), in every
/// path that makes connections for the caller: the elector's calls, `migrate`, the one-shot
/// calls of a pool — which is what C, Python, Go and Java show through the C ABI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_names_the_server_as_host_and_port() {
    // A loopback port nobody listens on (bound, then closed).
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let pool = mysqlleader::pool_from_url(&format!("mysql://app:hunter2@127.0.0.1:{port}/x")).unwrap();
    let server = format!("127.0.0.1:{port}");
    let named = |what: &str, err: &Error| {
        assert!(matches!(err, Error::Connection { .. }), "{what}: {err:?}");
        let text = err.to_string();
        assert!(text.contains(&server), "{what}: {text:?} does not name {server}");
        assert_eq!(text.matches(&server).count(), 1, "{what}: {text:?}");
        assert!(!format!("{err} {err:?}").contains("hunter2") && !text.contains("app@"), "{what}: {err:?}");
    };
    named("server_info", &procedures::server_info(&pool).await.unwrap_err());
    named("check_leader_at", &procedures::check_leader_at(&pool, "s", "n", 1).await.unwrap_err());
    named("migrate", &mysqlleader::migrate(&pool).await.unwrap_err());
    let elector = elector(&pool, "refused", "n");
    assert_eq!(elector.wait_for_leadership(Some(Duration::from_millis(500))).await, WaitOutcome::TimedOut);
    let error = elector.state().last_error.expect("the elector's failed calls leave their error");
    named("elector", &error);
    elector.shutdown().await.ok();
}

fn tempdir(tag: &str) -> String {
    let base = std::env::var("TMPDIR").unwrap_or_else(|_| "/tmp".into());
    let dir = format!("{base}/mysqlleader-{tag}-{}-{}", std::process::id(),
                      std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos());
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resign_wakes_a_follower_at_once_through_the_wakeup_lock() {
    // Followers poll only every 5 s here; a handover much faster than that comes from the
    // wake-up lock. Three rounds, so a lucky poll cannot pass for the accelerator.
    let db = common::TestDb::migrated("elwake").await;
    let slow_poll = |node: &str| {
        Elector::builder(db.pool.clone(), "wake")
            .node_id(node)
            .lease(Duration::from_secs(20))
            .renew_interval(Duration::from_secs(2))
            .retry_interval(Duration::from_secs(5))
            .retry_jitter(0.0)
            .start()
            .unwrap()
    };
    let mut electors: Vec<Elector> = (0..4).map(|i| slow_poll(&format!("w{i}"))).collect();
    for round in 0..3 {
        let refs: Vec<&Elector> = electors.iter().collect();
        let leader = one_leader(&refs, Duration::from_secs(10)).await;
        // Give followers time to learn the leader and start waiting on its lock.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let t0 = Instant::now();
        assert!(electors[leader].resign().await.unwrap());
        let refs: Vec<&Elector> = electors.iter().collect();
        one_leader(&refs, Duration::from_secs(10)).await;
        let handover = t0.elapsed();
        println!("round {round}: handover after resign {handover:?} (followers poll every 5 s)");
        assert!(handover < Duration::from_millis(2500), "handover took {handover:?}: not woken");
        electors.remove(leader).shutdown().await.unwrap();
    }
    for e in electors {
        e.shutdown().await.unwrap();
    }
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_shot_calls_reject_a_fractional_lease_instead_of_rounding_it() {
    let db = common::TestDb::migrated("elfrac").await;
    for call in [
        procedures::campaign(&db.pool, "s", "n", Duration::from_micros(1500)).await.map(|_| ()),
        procedures::force_leader(&db.pool, "s", "n", Duration::from_micros(10_000_001)).await.map(|_| ()),
    ] {
        match call {
            Err(Error::InvalidArgument { parameter, .. }) => assert_eq!(parameter, "lease_ms"),
            other => panic!("expected lease_ms to be rejected, got {other:?}"),
        }
    }
    let seat = procedures::current_leader(&db.pool, "s").await.unwrap();
    assert_eq!((seat.leader_id, seat.term), (None, 0), "nothing was written");
    db.drop_db().await;
}

/// The statements of `db` that are waiting in `GET_LOCK` on the server now.
async fn lock_waits(admin: &mut mysql_async::Conn, db: &str) -> i64 {
    let n: Option<i64> = admin
        .exec_first("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID() AND INFO LIKE '%GET_LOCK%'", (db,))
        .await
        .unwrap();
    n.unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_followers_wait_ends_on_the_server_when_it_closes() {
    // With a 20 s lease a follower's wake-up wait lasts until the lease it saw can end (~20 s).
    // Closing must end that wait on the server at once (KILL QUERY), not leave it running.
    let db = common::TestDb::migrated("elquiet").await;
    let start = |node: &str| {
        Elector::builder(db.pool.clone(), "quiet").node_id(node).lease(Duration::from_secs(20)).start().unwrap()
    };
    let leader = start("l");
    assert_eq!(leader.wait_for_leadership(Some(Duration::from_secs(10))).await, WaitOutcome::Leading);
    let follower = start("f");
    let mut admin = db.conn().await;
    let until = Instant::now() + Duration::from_secs(10);
    while lock_waits(&mut admin, &db.name).await == 0 {
        assert!(Instant::now() < until, "the follower never waited on the leader's lock");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The first wait lasts a retry interval (2 s); the campaign after it finds the wait on the
    // leader's lock and goes quiet: its next wait lasts until the lease it saw can end.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(lock_waits(&mut admin, &db.name).await, 1, "the quiet follower waits on the lock");
    let t0 = Instant::now();
    follower.shutdown().await.unwrap();
    let closed = t0.elapsed();
    // The wait was for ~20 s; it must be gone long before that (allowing for a busy machine).
    let until = Instant::now() + Duration::from_secs(5);
    while lock_waits(&mut admin, &db.name).await > 0 {
        assert!(Instant::now() < until, "the follower's lock wait kept running on the server after close");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    println!("follower closed in {closed:?}; its server-side wait ended {:?} after the close", t0.elapsed());
    drop(admin);
    leader.shutdown().await.unwrap();
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_fence_steps_the_elector_down_at_once() {
    let db = common::TestDb::migrated("elrefuse").await;
    let a = Elector::builder(db.pool.clone(), "refuse")
        .node_id("a")
        .lease(Duration::from_secs(20))
        .resign_on_drop(false)
        .start()
        .unwrap();
    assert_eq!(a.wait_for_leadership(Some(Duration::from_secs(10))).await, WaitOutcome::Leading);
    let term = a.term();
    let mut events = a.events();
    // An operator moves the seat; a's next renew is 4 s away.
    procedures::force_leader(&db.pool, "refuse", "b", Duration::from_secs(20)).await.unwrap();
    let mut conn = db.conn().await;
    let mut tx = conn.start_transaction(Default::default()).await.unwrap();
    let err = a.assert_leader(&mut tx).await.unwrap_err();
    assert_eq!(err.kind(), mysqlleader::ErrorKind::NotLeader);
    assert_eq!(err.current_term(), Some(term + 1));
    drop(tx);
    // The elector learned it from its own fence: it stops leading now, not at its next renew.
    let stopped = tokio::time::timeout(Duration::from_secs(2), async {
        loop {
            if let Event::StoppedLeading { term: t, reason } = events.recv().await.unwrap() {
                return (t, reason);
            }
        }
    })
    .await
    .expect("no StoppedLeading within 2 s of the refusal (the next renew is 4 s away)");
    assert_eq!(stopped, (term, StopReason::LostSeat));
    assert!(!a.is_leader());
    drop(conn);
    a.shutdown().await.unwrap();
    db.drop_db().await;
}

/// `Elector::refused` (behind `mysqlleader_elector_note_refusal`): the application ran the fence
/// on its own connection and the database refused the term; when the call returns, the elector
/// no longer reports leading, and its next call (sent at once) learns who leads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_told_by_the_application_steps_the_elector_down_before_it_returns() {
    let db = common::TestDb::migrated("elrefused").await;
    // Without the wake-up lock, the elector learns of the operator's move only at its next renew
    // (4 s away) or from the refusal.
    let a = Elector::builder(db.pool.clone(), "refused")
        .node_id("a")
        .lease(Duration::from_secs(20))
        .wakeup_lock(false)
        .resign_on_drop(false)
        .start()
        .unwrap();
    assert_eq!(a.wait_for_leadership(Some(Duration::from_secs(10))).await, WaitOutcome::Leading);
    let term = a.term();
    // A refusal of a term it does not lead at changes nothing.
    assert_eq!(a.refused(term - 1).await, StopReason::LostSeat);
    assert!(a.is_leader());
    assert_eq!(a.term(), term);
    // An operator moves the seat; a's next renew is 4 s away. The application's own fence fails.
    procedures::force_leader(&db.pool, "refused", "b", Duration::from_secs(20)).await.unwrap();
    let mut conn = db.conn().await;
    let mut tx = conn.start_transaction(Default::default()).await.unwrap();
    let err = procedures::assert_leader(&mut tx, "refused", "a", term).await.unwrap_err();
    assert_eq!(err.kind(), mysqlleader::ErrorKind::NotLeader);
    drop(tx);
    assert!(a.is_leader(), "the elector cannot know of the refusal before it is told");
    assert_eq!(a.refused(term).await, StopReason::LostSeat);
    assert!(!a.is_leader(), "still leading right after refused() returned");
    // Its next call learns who leads, well before the next renew was due.
    tokio::time::timeout(Duration::from_secs(2), async {
        while a.leader_id().as_deref() != Some("b") {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the elector did not learn within 2 s that b leads");
    assert_eq!(a.term(), term + 1);
    drop(conn);
    a.shutdown().await.unwrap();
    db.drop_db().await;
}

/// `Elector::fence` on the application's own `mysql_async` transaction (issue 26, item 3): it
/// passes while the node leads (on a `Transaction` and on a `Conn` after the application's own
/// `START TRANSACTION`); outside a transaction it fails and changes nothing; after an operator
/// moved the seat it fails with NotLeader, the elector no longer leads the moment it returns
/// (its next renew is 4 s away), and the caller's insert before the fence does not commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fence_on_the_applications_own_transaction() {
    let db = common::TestDb::migrated("elfence").await;
    let a = Elector::builder(db.pool.clone(), "fence")
        .node_id("a")
        .lease(Duration::from_secs(20))
        .wakeup_lock(false)
        .resign_on_drop(false)
        .start()
        .unwrap();
    assert_eq!(a.wait_for_leadership(Some(Duration::from_secs(10))).await, WaitOutcome::Leading);
    let term = a.term();
    let mut conn = db.conn().await;
    conn.query_drop("CREATE TABLE ledger (id INT PRIMARY KEY, term BIGINT UNSIGNED NOT NULL)").await.unwrap();
    let count = |id: u32| {
        let pool = db.pool.clone();
        async move {
            let mut c = pool.get_conn().await.unwrap();
            c.exec_first::<u64, _, _>("SELECT COUNT(*) FROM ledger WHERE id = ?", (id,)).await.unwrap().unwrap()
        }
    };

    // 1. Leading: the fence passes inside the caller's transaction, which then commits.
    let mut tx = conn.start_transaction(Default::default()).await.unwrap();
    tx.exec_drop("INSERT INTO ledger VALUES (1, ?)", (term,)).await.unwrap();
    assert_eq!(a.fence(&mut tx).await.unwrap(), term);
    tx.commit().await.unwrap();
    assert_eq!(count(1).await, 1);
    // The same on the connection itself, in a transaction the application began in SQL.
    conn.query_drop("START TRANSACTION").await.unwrap();
    conn.exec_drop("INSERT INTO ledger VALUES (2, ?)", (term,)).await.unwrap();
    assert_eq!(a.fence(&mut conn).await.unwrap(), term);
    conn.query_drop("COMMIT").await.unwrap();
    assert_eq!(count(2).await, 1);

    // 2. No transaction open (autocommit): the fence would fence nothing, so it fails (MariaDB
    // tells) — and that is no refusal: the elector still leads.
    let err = a.fence(&mut conn).await.unwrap_err();
    assert_eq!(err.kind(), mysqlleader::ErrorKind::Usage, "{err}");
    assert!(a.is_leader());

    // 3. An operator moves the seat; a's next renew is 4 s away.
    procedures::force_leader(&db.pool, "fence", "b", Duration::from_secs(20)).await.unwrap();
    let mut tx = conn.start_transaction(Default::default()).await.unwrap();
    tx.exec_drop("INSERT INTO ledger VALUES (3, ?)", (term,)).await.unwrap();
    let err = a.fence(&mut tx).await.unwrap_err();
    // Right after the refusal, not at the next renew.
    assert!(!a.is_leader(), "still leading right after the refused fence returned");
    assert_eq!(err.kind(), mysqlleader::ErrorKind::NotLeader, "{err}");
    assert_eq!(err.current_term(), Some(term + 1));
    tx.rollback().await.unwrap();
    assert_eq!(count(3).await, 0, "the insert before the refused fence committed");
    // Not leading: refused without a round trip.
    let mut tx = conn.start_transaction(Default::default()).await.unwrap();
    assert_eq!(a.fence(&mut tx).await.unwrap_err().kind(), mysqlleader::ErrorKind::NotLeader);
    tx.rollback().await.unwrap();
    drop(conn);
    a.shutdown().await.unwrap();
    db.drop_db().await;
}

/// A fenced job that outlives three leases (issue "Long jobs"): `Elector::fence` first in the
/// application's transaction, then a job that stays busy for 3 leases. The elector's renews go
/// through meanwhile (the fence locks the term, not the seat), so it never stops leading and
/// reports no transition; a follower on the same service never leads and an operator's
/// force_leader waits for the job and fails (1205); the job's write commits in the term it was
/// fenced at, and that term is still the current one after the commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fenced_job_longer_than_three_leases_keeps_its_leader() {
    let db = common::TestDb::migrated("ellong").await;
    let a = elector(&db.pool, "long", "a");
    let mut events = a.events();
    assert_eq!(a.wait_for_leadership(Some(Duration::from_secs(10))).await, WaitOutcome::Leading);
    let term = a.term();
    let b = elector(&db.pool, "long", "b");
    let mut conn = db.conn().await;
    conn.query_drop("CREATE TABLE ledger (id INT PRIMARY KEY, term BIGINT UNSIGNED NOT NULL)").await.unwrap();

    let mut tx = conn.start_transaction(Default::default()).await.unwrap();
    assert_eq!(a.fence(&mut tx).await.unwrap(), term);
    let until = Instant::now() + LEASE * 3;
    let mut forced = false;
    while Instant::now() < until {
        assert!(a.is_leader(), "a stopped leading during its own fenced job");
        assert!(!b.is_leader(), "b leads while a's fenced job runs");
        tx.query_drop("DO 0").await.unwrap();
        if !forced && Instant::now() + LEASE * 2 < until {
            let err = procedures::force_leader(&db.pool, "long", "operator-pick", LEASE).await.unwrap_err();
            assert!(err.is_transient(), "force_leader waits for the fence, then fails as a lock wait (transient): {err}");
            forced = true;
        }
        tokio::time::sleep(RENEW / 2).await;
    }
    assert!(forced);
    tx.exec_drop("INSERT INTO ledger VALUES (1, ?)", (term,)).await.unwrap();
    tx.commit().await.unwrap();
    assert!(a.is_leader() && a.term() == term, "a leads at its term after the job");
    let seat = procedures::current_leader(&db.pool, "long").await.unwrap();
    assert_eq!((seat.leader_id.as_deref(), seat.term), (Some("a"), term), "the job committed in the current term");
    let mut seen = Vec::new();
    while let Ok(Ok(e)) = tokio::time::timeout(Duration::from_millis(100), events.recv()).await {
        seen.push(e);
    }
    assert!(!seen.iter().any(|e| matches!(e, Event::StoppedLeading { .. })), "a stepped down: {seen:?}");
    drop(conn);
    b.shutdown().await.unwrap();
    a.shutdown().await.unwrap();
    db.drop_db().await;
}

/// A process restarted with the same node id while its predecessor's lease is valid (kill -9 and
/// a supervisor's restart; a StatefulSet's pod) leads at a term of its own: its first campaign is
/// preceded by a resign that ends the predecessor's term (`resigned`), so the predecessor's fence
/// at its old term (a process paused, not dead, that wakes with its term) is refused. Before, the
/// new process renewed the predecessor's lease at the same term, and that fence passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_node_leads_at_a_term_of_its_own_and_its_predecessors_fence_fails() {
    let db = common::TestDb::migrated("elincarnation").await;
    let long = |pool: &mysql_async::Pool| {
        Elector::builder(pool.clone(), "inc")
            .node_id("web-1")
            .lease(Duration::from_secs(60))
            .renew_interval(Duration::from_secs(5))
            .retry_interval(RETRY)
            .resign_on_drop(false)
            .start()
            .unwrap()
    };
    let predecessor = long(&db.pool);
    one_leader(&[&predecessor], Duration::from_secs(10)).await;
    let term = predecessor.term();
    // Its process dies: nothing resigns, the 60 s lease stays valid in the database.
    predecessor.shutdown().await.unwrap();
    let successor = long(&db.pool);
    one_leader(&[&successor], Duration::from_secs(10)).await;
    assert_eq!(successor.term(), term + 1, "the restarted node leads at a new term, not its predecessor's");
    let mut conn = db.pool.get_conn().await.unwrap();
    let terms = sql_support::history(&mut conn, "inc").await;
    assert_eq!(
        terms.iter().map(|t| (t.term, t.leader_id.as_str(), t.ended_how.as_deref())).collect::<Vec<_>>(),
        [(term, "web-1", Some("resigned")), (term + 1, "web-1", None)]
    );
    // The predecessor wakes with its term and fences a transaction: refused.
    let mut tx = conn.start_transaction(Default::default()).await.unwrap();
    let refused = procedures::assert_leader(&mut tx, "inc", "web-1", term).await.unwrap_err();
    assert_eq!((refused.kind(), refused.current_term()), (mysqlleader::ErrorKind::NotLeader, Some(term + 1)), "{refused}");
    drop(tx);
    let mut tx = conn.start_transaction(Default::default()).await.unwrap();
    assert_eq!(successor.fence(&mut tx).await.unwrap(), term + 1, "the successor's fence passes");
    tx.commit().await.unwrap();
    drop(conn);
    successor.shutdown().await.unwrap();
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loopback_url_connects_where_it_says_not_to_the_unix_socket() {
    // A proxy on loopback in front of the local server: the URL names the proxy's port, and the
    // connection must go there (mysql_async alone would move to the server's Unix socket).
    let db = common::TestDb::migrated("elsocket").await;
    let proxy = common::proxy::Proxy::start(common::proxy::server_addr(&db.url)).await;
    let through = proxy.url_for(&db.url).replace("prefer_socket=false", "x_unused=1");
    let through = through.replace("?x_unused=1", "").replace("&x_unused=1", "");
    assert!(!through.contains("prefer_socket"), "{through}");
    let pool = mysqlleader::pool_from_url(&through).unwrap();
    procedures::campaign(&pool, "socket", "a", Duration::from_secs(5)).await.unwrap();
    assert!(proxy.connections() >= 1, "the call did not go through the URL's port");
    // The session the pool uses is a TCP one (a Unix socket session's host is `localhost`).
    let mut conn = pool.get_conn().await.unwrap();
    let host: Option<String> = conn.query_first("SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()").await.unwrap();
    assert!(host.as_deref().is_some_and(|h| h.starts_with("127.0.0.1:")), "the session came over {host:?}, not the URL's TCP port");
    drop(conn);
    let _ = pool.disconnect().await;
    db.drop_db().await;
}

/// A campaign the loop gives up on (its request timeout is shorter than the server's 1 s bound
/// on a row-lock wait) is not abandoned on the server: it runs to that bound in the background,
/// and the elector's next call waits for it. So however long the row stays locked (here: an
/// expired leader's fenced transaction, kept busy), the elector holds at most its call connection
/// and its wake-up connection on the server, and opens no connection just to end a call (before,
/// each abandoned call was ended with KILL QUERY on a connection of its own, and the abandoned
/// one was dropped: new connections every retry interval).
#[tokio::test]
async fn a_blocked_campaign_never_piles_up_connections() {
    let db = common::TestDb::migrated("elpile").await;
    let mut fenced = db.conn().await;
    procedures::campaign(&mut fenced, "pile", "old", Duration::from_millis(1200)).await.unwrap();
    fenced.query_drop("START TRANSACTION").await.unwrap();
    procedures::assert_leader(&mut fenced, "pile", "old", 1).await.unwrap();

    let mut sampler = db.conn().await;
    // The follower logs in with an account of its own, and only that account's connections
    // count, by login (common::connections; the process list's USER names the procedure's
    // definer while the follower's call waits in it): once (CI, 4 test threads) a connection
    // running another pool's migrate showed in this database's process list, and was counted
    // as the follower's third.
    let (user, url) = common::app_account(&db, "elpile", "pw").await;
    let mut seen = std::collections::BTreeSet::new();
    // The follower's connections at the sample that saw the most of them (for a failure's message).
    let mut at_most: Vec<String> = Vec::new();
    // lease 500 ms: request timeout 100 ms, retry 50 ms, far below the 1 s lock wait.
    let pool = mysqlleader::pool_from_url(&url).unwrap();
    let follower = Elector::builder(pool.clone(), "pile").node_id("new").lease(Duration::from_millis(500)).start().unwrap();
    let mut most = 0;
    let until = Instant::now() + Duration::from_millis(4000);
    while Instant::now() < until {
        let rows = common::connections_of(&mut sampler, &user).await;
        if rows.len() > most {
            most = rows.len();
            at_most = rows.iter().map(|(_, what)| what.clone()).collect();
        }
        seen.extend(rows.into_iter().map(|(id, _)| id));
        // The fenced transaction stays busy, so the server does not end it as idle.
        fenced.query_drop("DO 0").await.unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let state = follower.state();
    assert!(!state.leading, "the row is locked: nobody can take the seat");
    assert!(most >= 1, "none of the follower's connections was seen: the count below proves nothing");
    assert!(most <= 2, "the follower held {most} server connections at once (its call and its wake-up lock: 2): {at_most:#?}");
    assert!(seen.len() <= 2, "the follower opened {} connections: {seen:?} (ending a call must not take new ones)", seen.len());
    fenced.query_drop("ROLLBACK").await.unwrap();
    assert_eq!(follower.wait_for_leadership(Some(Duration::from_secs(5))).await, WaitOutcome::Leading, "it takes the seat once the lock is gone");
    follower.shutdown().await.unwrap();
    pool.disconnect().await.unwrap();
    sampler.query_drop(format!("DROP USER IF EXISTS '{user}'@'%'")).await.unwrap();
    drop((sampler, fenced));
    db.drop_db().await;
}

/// A follower's `campaign` that timed out while the server still ran it (waiting for the seat's
/// lock), and that the server committed after: it took the seat under the elector's node id, at
/// a term the elector does not hold, led by nobody. The elector resigns that term before its
/// next campaign and leads at the term after, at once; before, it followed its own node id's
/// term as another process's until that lease (10 s here) ran out.
#[tokio::test]
async fn a_campaign_committed_after_the_elector_gave_up_is_resigned_not_followed() {
    let db = common::TestDb::migrated("elunans").await;
    let mut admin = db.conn().await;
    procedures::campaign(&mut admin, "orphan", "old", Duration::from_millis(2000)).await.unwrap();
    let old_ends = Instant::now() + Duration::from_millis(2000);
    // The elector logs in with an account of its own, to find its connection.
    let (user, url) = common::app_account(&db, "elunans", "pw").await;
    let pool = mysqlleader::pool_from_url(&url).unwrap();
    // Request timeout 100 ms, far below the procedures' 1 s wait for a row lock; no wake-up
    // lock, so the follower looks every retry interval.
    let elector = Elector::builder(pool.clone(), "orphan")
        .node_id("new")
        .lease(Duration::from_secs(10))
        .request_timeout(Duration::from_millis(100))
        .retry_interval(Duration::from_millis(100))
        .wakeup_lock(false)
        .start()
        .unwrap();
    // It has sent its first resign and campaign (it follows old) before the row is locked.
    let t0 = Instant::now();
    while elector.leader_id().as_deref() != Some("old") {
        assert!(t0.elapsed() < Duration::from_secs(10), "the elector never saw old lead: {:?}", elector.state());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut blocker = db.conn().await;
    blocker.query_drop("START TRANSACTION").await.unwrap();
    blocker.query_drop("SELECT term FROM leader_election WHERE service_id = 'orphan' FOR UPDATE").await.unwrap();
    // Once old's lease has ended, the elector's next campaign would take the seat: it waits for
    // the lock instead. Found waiting, it is given 600 ms (its client stops waiting after
    // 100 ms; the server waits up to 1 s), then the lock goes and the server takes the seat.
    tokio::time::sleep_until(old_ends).await;
    // Its connection is then in a locking read (the seat's, in leader_election_lock_seat). Not
    // told by information_schema.INNODB_TRX: MariaDB listed no transaction of it while it
    // waited, in the optimizer's "Statistics" stage.
    let waiting = Instant::now();
    while !common::connections_of(&mut admin, &user).await.iter().any(|(_, what)| what.contains("FOR UPDATE")) {
        if waiting.elapsed() > Duration::from_secs(10) {
            panic!("the elector's campaign never waited for the locked row: its connections {:?}, state {:?}",
                   common::connections_of(&mut admin, &user).await, elector.state());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
    blocker.query_drop("COMMIT").await.unwrap();
    let freed = Instant::now();
    let outcome = elector.wait_for_leadership(Some(Duration::from_secs(5))).await;
    let history: Vec<(u64, String, Option<String>)> = admin
        .query("SELECT term, CAST(leader_id AS CHAR), ended_how FROM leader_election_history WHERE service_id = 'orphan' ORDER BY term")
        .await
        .unwrap();
    assert_eq!(
        history.iter().map(|(t, l, _)| (*t, l.as_str())).collect::<Vec<_>>(),
        [(1, "old"), (2, "new"), (3, "new")],
        "old's term, the term the unanswered campaign took, the elector's own: {history:?}"
    );
    assert_eq!(history[1].2.as_deref(), Some("resigned"), "the unanswered campaign's term was resigned: {history:?}");
    assert_eq!(outcome, WaitOutcome::Leading, "the elector leads {:?} after the lock went (lease 10 s): {history:?}", freed.elapsed());
    assert_eq!(elector.term(), 3);
    elector.shutdown().await.unwrap();
    pool.disconnect().await.unwrap();
    admin.query_drop(format!("DROP USER IF EXISTS '{user}'@'%'")).await.unwrap();
    drop((admin, blocker));
    db.drop_db().await;
}

/// A pool as `pool_from_url` makes it, but whose sessions the server closes after 2 s without a
/// statement (`wait_timeout = 2`).
fn pool_closing_idle_sessions(url: &str) -> mysql_async::Pool {
    let opts = mysqlleader::opts_from_url(url).unwrap();
    mysql_async::Pool::new(
        mysql_async::OptsBuilder::from_opts(opts).setup(vec!["SET autocommit = 1", "SET SESSION wait_timeout = 2"]),
    )
}

/// Node `l` leading `service` (lease 30 s) and node `f` following it, both on `pool`.
async fn leader_and_follower(pool: &mysql_async::Pool, service: &str) -> (Elector, Elector) {
    let start = |node: &str| {
        Elector::builder(pool.clone(), service).node_id(node).lease(Duration::from_secs(30)).start().unwrap()
    };
    let leader = start("l");
    assert_eq!(leader.wait_for_leadership(Some(Duration::from_secs(10))).await, WaitOutcome::Leading);
    (leader, start("f"))
}

/// Whether a connection holds the wake-up lock of `service` in the database of `conn` now.
async fn wakeup_lock_held(conn: &mut mysql_async::Conn, service: &str) -> bool {
    wakeup_lock_holder(conn, service).await.is_some()
}

/// A leader holds the wake-up lock on a connection that otherwise sends nothing, for as long as
/// it leads (hours). A server that closes idle sessions (`wait_timeout`, often a few minutes on
/// managed databases) must not take the lock away: the followers would then find nobody to wait
/// for and look again every 100 ms for the rest of the term, and a resign would wake nobody.
/// Here every session of the electors' pool runs with `wait_timeout = 2` (seconds); after three times that, the
/// leader still holds the lock and the follower still waits on it, quietly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wakeup_lock_outlives_the_servers_idle_timeout() {
    let db = common::TestDb::migrated("elidle").await;
    let pool = pool_closing_idle_sessions(&db.url);
    let (leader, follower) = leader_and_follower(&pool, "idle").await;
    let mut admin = db.conn().await;
    let until = Instant::now() + Duration::from_secs(10);
    while lock_waits(&mut admin, &db.name).await == 0 {
        assert!(Instant::now() < until, "the follower never waited on the leader's lock");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert!(wakeup_lock_held(&mut admin, "idle").await, "the leader's wake-up lock went with its idle connection");
    assert_eq!(lock_waits(&mut admin, &db.name).await, 1, "the follower no longer waits on the leader's lock");
    // And it still does its job: a resign wakes the follower long before its 30 s lease would.
    let t0 = Instant::now();
    assert!(leader.resign().await.unwrap());
    assert_eq!(follower.wait_for_leadership(Some(Duration::from_secs(5))).await, WaitOutcome::Leading);
    println!("handover after resign, 6 s past the idle timeout: {:?}", t0.elapsed());
    drop(admin);
    follower.shutdown().await.unwrap();
    leader.shutdown().await.unwrap();
    pool.disconnect().await.unwrap();
    db.drop_db().await;
}

/// The connection of the wake-up lock `service` holds now, if any.
async fn wakeup_lock_holder(conn: &mut mysql_async::Conn, service: &str) -> Option<u64> {
    // The name carries the schema's secret: asked of the routine, as the library does.
    let name: Option<String> = conn.exec_first("CALL leader_election_wakeup_name(?)", (service,)).await.unwrap();
    let name = name.expect("a lock name");
    let holder: Option<Option<u64>> = conn.exec_first("SELECT IS_USED_LOCK(?)", (name,)).await.unwrap();
    holder.flatten()
}

/// A leader whose lock connection is lost (killed here, as a DBA or a failover of a proxy would)
/// takes the lock again on a new connection, and its follower goes back to waiting on it: the
/// wake-up lock is not switched off for good by one error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wakeup_lock_comes_back_after_its_connection_is_lost() {
    let db = common::TestDb::migrated("elback").await;
    // wait_timeout 2 s: the leader's lock connection speaks every second, so it notices the
    // kill within about a second (with the default it would be within a minute).
    let pool = pool_closing_idle_sessions(&db.url);
    let (leader, follower) = leader_and_follower(&pool, "back").await;
    let mut admin = db.conn().await;
    let until = Instant::now() + Duration::from_secs(10);
    let first = loop {
        if let (Some(holder), 1) = (wakeup_lock_holder(&mut admin, "back").await, lock_waits(&mut admin, &db.name).await) {
            break holder;
        }
        assert!(Instant::now() < until, "the follower never waited on the leader's lock");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    admin.query_drop(format!("KILL CONNECTION {first}")).await.unwrap();
    let t0 = Instant::now();
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        let holder = wakeup_lock_holder(&mut admin, "back").await;
        if holder.is_some_and(|h| h != first) && lock_waits(&mut admin, &db.name).await == 1 {
            break;
        }
        assert!(Instant::now() < until, "the wake-up lock did not come back after its connection was killed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!("the lock was held again, and waited on, {:?} after the kill", t0.elapsed());
    assert!(leader.is_leader(), "a lost lock connection changes nothing about the lease");
    let t0 = Instant::now();
    assert!(leader.resign().await.unwrap());
    assert_eq!(follower.wait_for_leadership(Some(Duration::from_secs(5))).await, WaitOutcome::Leading);
    println!("handover after resign: {:?}", t0.elapsed());
    drop(admin);
    follower.shutdown().await.unwrap();
    leader.shutdown().await.unwrap();
    pool.disconnect().await.unwrap();
    db.drop_db().await;
}

/// Ending a follower's wake-up wait takes a connection for `KILL QUERY`, and that connection must
/// not come from the elector's pool: a pool that opens a connection because its others are busy
/// keeps it afterwards (idle connections up to its minimum stay open), so each kill through the
/// pool could leave the process a connection larger for good. Here the application holds the
/// pool's idle connection when the follower closes; afterwards the pool holds nothing but that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_follower_leaves_its_pool_no_larger() {
    let db = common::TestDb::migrated("elkillpool").await;
    // Every pool here has one user, so a connection that appears is that user's.
    let leader_pool = mysqlleader::pool_from_url(&db.url).unwrap();
    let leader = Elector::builder(leader_pool.clone(), "kp").node_id("l").lease(Duration::from_secs(20)).start().unwrap();
    assert_eq!(leader.wait_for_leadership(Some(Duration::from_secs(10))).await, WaitOutcome::Leading);
    let mut admin = db.conn().await;
    let ids_sql = format!("SELECT ID FROM information_schema.PROCESSLIST WHERE DB = '{}' ORDER BY ID", db.name);
    let before: Vec<u64> = admin.query(ids_sql.as_str()).await.unwrap();

    let pool = mysqlleader::pool_from_url(&db.url).unwrap();
    let follower = Elector::builder(pool.clone(), "kp")
        .node_id("f")
        .lease(Duration::from_secs(20))
        .resign_on_drop(false)
        .start()
        .unwrap();
    // Quiet: the follower's wait is on the leader's lock (see the test above).
    let until = Instant::now() + Duration::from_secs(10);
    while lock_waits(&mut admin, &db.name).await == 0 {
        assert!(Instant::now() < until, "the follower never waited on the leader's lock");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    // The application takes the pool's idle connection (the follower's call connection).
    let held = pool.get_conn().await.unwrap();
    follower.shutdown().await.unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    while lock_waits(&mut admin, &db.name).await > 0 {
        assert!(Instant::now() < until, "the follower's wait kept running on the server after close");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after: Vec<u64> = admin.query(ids_sql.as_str()).await.unwrap();
    let extra: Vec<u64> = after.into_iter().filter(|id| !before.contains(id) && *id != u64::from(held.id())).collect();
    assert!(extra.is_empty(), "after the follower closed, its pool still holds connections {extra:?} besides the application's");
    drop(held);
    pool.disconnect().await.unwrap();
    leader.shutdown().await.unwrap();
    leader_pool.disconnect().await.unwrap();
    drop(admin);
    db.drop_db().await;
}

/// Issue 26, item 5: closing an elector returns within its request timeout whatever the server
/// does, leader and follower alike (it took about 5.5 s with a lease of 2 s and a request
/// timeout of 400 ms while the server hung).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_returns_within_the_request_timeout_while_the_server_hangs() {
    let db = common::TestDb::migrated("close_hang").await;
    let proxy = common::proxy::Proxy::start(common::proxy::server_addr(&db.url)).await;
    let pool = mysqlleader::pool_from_url(&proxy.url_for(&db.url)).unwrap();
    let request_timeout = Duration::from_millis(400);
    let start = |node: &str| {
        Elector::builder(pool.clone(), "svc")
            .node_id(node)
            .lease(LEASE)
            .request_timeout(request_timeout)
            .resign_on_drop(true)
            .start()
            .unwrap()
    };
    let leader = start("leader");
    assert_eq!(leader.wait_for_leadership(Some(Duration::from_secs(10))).await, WaitOutcome::Leading);
    let follower = start("follower");
    let until = Instant::now() + Duration::from_secs(10);
    while follower.leader_id().as_deref() != Some("leader") {
        assert!(Instant::now() < until, "the follower never saw the leader");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    proxy.stall();
    // Let both be in the middle of a call to the hung server.
    tokio::time::sleep(Duration::from_millis(600)).await;
    for (name, elector) in [("leader", leader), ("follower", follower)] {
        let began = Instant::now();
        let result = elector.shutdown().await;
        let took = began.elapsed();
        println!("{name}: shutdown took {} ms ({result:?})", took.as_millis());
        // The bound the issue states (the request timeout), plus timer resolution.
        assert!(took <= request_timeout + Duration::from_millis(20), "{name}: shutdown took {took:?}");
    }
    proxy.restore();
    db.drop_db().await;
}

/// Issue 26, item 4: an elector whose calls fail with what retrying cannot fix says so at once
/// (`WaitOutcome::Failed`, the `Failing` event), where it used to answer `TimedOut` for ever; it
/// keeps trying, and leads once the set-up is mended (here: the schema installed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_elector_reports_what_retrying_cannot_fix_and_recovers_when_mended() {
    let db = common::TestDb::empty("elfailing").await;
    let (elector, mut events) = Elector::start_subscribed(
        vec![db.pool.clone()],
        mysqlleader::ElectorConfig { node_id: "n".into(), ..mysqlleader::ElectorConfig::with_lease("svc", LEASE) },
    )
    .unwrap();
    let began = Instant::now();
    assert_eq!(elector.wait_for_leadership(Some(Duration::from_secs(30))).await, WaitOutcome::Failed);
    println!("Failed after {} ms", began.elapsed().as_millis());
    let error = elector.state().last_error.expect("the error");
    assert!(matches!(error, Error::NotMigrated { .. }) && error.is_permanent(), "{error:?}");
    match tokio::time::timeout(Duration::from_secs(5), events.recv()).await {
        Ok(Ok(Event::Failing { error })) => assert!(matches!(error, Error::NotMigrated { .. })),
        other => panic!("want a Failing event first, got {other:?}"),
    }
    assert!(elector.state().campaigning, "it keeps trying");
    mysqlleader::migrate(&db.pool).await.unwrap();
    // A wait answers Failed while the last call failed so; the next call (a retry interval
    // later) succeeds.
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        match elector.wait_for_leadership(Some(Duration::from_secs(30))).await {
            WaitOutcome::Leading => break,
            WaitOutcome::Failed if Instant::now() < until => tokio::time::sleep(Duration::from_millis(50)).await,
            other => panic!("after the migration: {other:?}"),
        }
    }
    elector.shutdown().await.unwrap();
    db.drop_db().await;
}

/// More electors than their pool has connections (issue "Fleets", item 2): each leader's
/// wake-up lock keeps a connection of the pool, and with one per elector they took every
/// connection, so that no renew got one and every seat was lost after a lease, with nothing but
/// warnings in the log. Now at most half of a pool's connections serve wake-up locks; the
/// electors beyond run without one (polling). 18 electors, each alone on its service, share a
/// pool of at most 12 connections: every one leads, and still leads three leases later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_electors_than_pool_connections_keep_every_seat() {
    let db = common::TestDb::migrated("elcrowd").await;
    let opts = mysql_async::OptsBuilder::from_opts(mysql_async::Opts::from_url(&db.url).unwrap()).pool_opts(
        mysql_async::PoolOpts::default().with_constraints(mysql_async::PoolConstraints::new(0, 12).unwrap()),
    );
    let pool = mysql_async::Pool::new(opts);
    let electors: Vec<Elector> = (0..18).map(|i| elector(&pool, &format!("crowd-{i:02}"), "n1")).collect();
    let leading = async |electors: &[Elector]| -> Vec<usize> {
        (0..electors.len()).filter(|&i| electors[i].is_leader()).collect()
    };
    let until = Instant::now() + LEASE + SLACK * 2;
    while leading(&electors).await.len() < electors.len() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(leading(&electors).await.len(), electors.len(), "every elector leads its service");
    tokio::time::sleep(LEASE * 3).await;
    let all: Vec<usize> = (0..electors.len()).collect();
    assert_eq!(leading(&electors).await, all, "every elector still leads three leases later: its renews got connections");
    let in_use = pool.metrics().connection_count.load(std::sync::atomic::Ordering::SeqCst);
    assert!(in_use <= 12, "the pool holds {in_use} connections");
    for e in electors {
        e.shutdown().await.unwrap();
    }
    pool.disconnect().await.unwrap();
    db.drop_db().await;
}

/// The core's fenced transaction (`Elector::fenced`, the C ABI's `mysqlleader_txn` is its shell):
/// its writes commit under the fence; a statement that would end the transaction is refused
/// before it is sent and spends it (nothing commits, not even the writes before it); a step
/// that outlasts the request timeout spends it too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fenced_transaction_commits_under_its_fence_and_is_spent_by_any_failure() {
    let db = common::TestDb::migrated("elfenced").await;
    let mut conn = db.conn().await;
    conn.query_drop("CREATE TABLE ledger (id INT PRIMARY KEY, term BIGINT)").await.unwrap();
    let elector = Elector::builder(db.pool.clone(), "fenced")
        .node_id("a")
        .lease(Duration::from_secs(5))
        .request_timeout(Duration::from_millis(800))
        .retry_interval(RETRY)
        .start()
        .unwrap();
    one_leader(&[&elector], Duration::from_secs(10)).await;

    let mut tx = elector.fenced(&db.pool).await.unwrap();
    assert_eq!(tx.term(), Some(elector.term()));
    let outcome = tx.exec("INSERT INTO ledger VALUES (?, ?)", (1, tx.term())).await.unwrap();
    assert_eq!(outcome.affected_rows, 1);
    let read = tx.query("SELECT id FROM ledger", ()).await.unwrap();
    assert_eq!(read.rows.len(), 1, "the transaction reads its own write");
    tx.commit().await.unwrap();
    assert_eq!(conn.query_first::<i64, _>("SELECT COUNT(*) FROM ledger").await.unwrap(), Some(1));
    assert!(tx.exec("INSERT INTO ledger VALUES (9, 9)", ()).await.is_err(), "a committed transaction runs nothing more");

    // A statement that ends the transaction: refused before it is sent, and the whole
    // transaction with it.
    let mut tx = elector.fenced(&db.pool).await.unwrap();
    tx.exec("INSERT INTO ledger VALUES (2, 0)", ()).await.unwrap();
    let refused = tx.exec("COMMIT", ()).await.unwrap_err();
    assert_eq!(refused.kind(), mysqlleader::ErrorKind::Usage, "{refused}");
    let spent = tx.exec("INSERT INTO ledger VALUES (3, 0)", ()).await.unwrap_err();
    assert!(spent.to_string().contains("cannot be used any more"), "{spent}");
    assert!(tx.commit().await.is_err(), "a spent transaction never commits");
    tx.rollback().await.unwrap();
    assert_eq!(conn.query_first::<i64, _>("SELECT COUNT(*) FROM ledger").await.unwrap(), Some(1), "nothing of it committed");

    // A step longer than the request timeout: its connection is dropped, the transaction spent.
    let mut tx = elector.fenced(&db.pool).await.unwrap();
    tx.exec("INSERT INTO ledger VALUES (4, 0)", ()).await.unwrap();
    let slow = tx.query("SELECT SLEEP(3)", ()).await.unwrap_err();
    assert_eq!(slow.kind(), mysqlleader::ErrorKind::Timeout, "{slow}");
    assert!(tx.commit().await.is_err());
    drop(tx);
    // The server runs the abandoned SLEEP to its end, then rolls back (with the fence's lock,
    // which the elector's resign at shutdown would wait for).
    let deadline = Instant::now() + Duration::from_secs(10);
    while conn
        .query_first::<i64, _>("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(3)%'")
        .await
        .unwrap()
        != Some(0)
    {
        assert!(Instant::now() < deadline, "the abandoned statement never ended");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(conn.query_first::<i64, _>("SELECT COUNT(*) FROM ledger").await.unwrap(), Some(1));

    drop(conn);
    elector.shutdown().await.unwrap();
    db.drop_db().await;
}

/// The fence is asserted once more right before COMMIT: a `ROLLBACK TO SAVEPOINT` that
/// released the fence's lock lets another node take over meanwhile, and then nothing commits.
/// An elector whose term the database refuses at `fenced()` has stepped down before the error
/// is returned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fence_dropped_by_a_savepoint_is_asserted_again_at_commit_and_a_refusal_steps_the_elector_down() {
    let db = common::TestDb::migrated("elrefence").await;
    let mut conn = db.conn().await;
    conn.query_drop("CREATE TABLE ledger (id INT PRIMARY KEY)").await.unwrap();
    // The library refuses `ROLLBACK TO SAVEPOINT` as a statement of its transactions; inside a
    // procedure the application calls, it still runs.
    conn.query_drop("CREATE PROCEDURE back_to_savepoint() ROLLBACK TO SAVEPOINT before_fence").await.unwrap();
    let c = procedures::campaign(&mut conn, "refence", "a", Duration::from_secs(30)).await.unwrap();
    let mut tx = mysqlleader::FencedTransaction::begin(&db.pool, Duration::from_secs(2)).await.unwrap();
    tx.exec("SAVEPOINT before_fence", ()).await.unwrap();
    tx.assert_leader("refence", "a", c.term).await.unwrap();
    tx.exec("INSERT INTO ledger VALUES (1)", ()).await.unwrap();
    tx.exec("CALL back_to_savepoint()", ()).await.unwrap();
    tx.exec("INSERT INTO ledger VALUES (2)", ()).await.unwrap();
    // The lock is gone: an operator installs another node at once.
    let forced = tokio::time::timeout(Duration::from_secs(5), procedures::force_leader(&mut conn, "refence", "b", Duration::from_secs(30)))
        .await
        .expect("force_leader waited: the savepoint did not release the fence's lock")
        .unwrap();
    assert_eq!(forced.term, c.term + 1);
    let refused = tx.commit().await.unwrap_err();
    assert_eq!((refused.kind(), refused.current_term()), (mysqlleader::ErrorKind::NotLeader, Some(c.term + 1)), "{refused}");
    assert_eq!(conn.query_first::<i64, _>("SELECT COUNT(*) FROM ledger").await.unwrap(), Some(0), "nothing committed");

    // An elector that still believes it leads: the database refuses its fence, and it has
    // stepped down when the error arrives.
    let elector = Elector::builder(db.pool.clone(), "refence2")
        .node_id("a")
        .lease(Duration::from_secs(30))
        .renew_interval(Duration::from_secs(9))
        .retry_interval(RETRY)
        .start()
        .unwrap();
    one_leader(&[&elector], Duration::from_secs(10)).await;
    let term = elector.term();
    procedures::force_leader(&mut conn, "refence2", "b", Duration::from_secs(30)).await.unwrap();
    assert!(elector.is_leader(), "its renew is 9 s away: it still believes it leads");
    let refused = elector.fenced(&db.pool).await.err().expect("the database refuses the old term");
    assert_eq!((refused.kind(), refused.current_term()), (mysqlleader::ErrorKind::NotLeader, Some(term + 1)), "{refused}");
    assert!(!elector.is_leader(), "the elector stepped down before the refusal was returned");
    drop(conn);
    elector.shutdown().await.unwrap();
    db.drop_db().await;
}

/// A fenced transaction leaves its pooled connection as it found it (MariaDB, where the fence
/// lowers the session's idle_transaction_timeout to the lease left): the commit, and the
/// rollback (also of a transaction a failure spent), restore the value the first fence found, in the same round
/// trip. A pool of one connection, so that every transaction gets the same session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fenced_transaction_restores_the_sessions_idle_bound_when_it_ends() {
    let db = common::TestDb::migrated("elidle").await;
    let mut admin = db.conn().await;
    if !sql_support::is_mariadb(&mut admin).await {
        return; // MySQL has no idle_transaction_timeout: the fence sets nothing there
    }
    let opts = mysql_async::OptsBuilder::from_opts(mysql_async::Opts::from_url(&db.url).unwrap())
        .pool_opts(mysql_async::PoolOpts::default().with_constraints(mysql_async::PoolConstraints::new(1, 1).unwrap()).with_reset_connection(false));
    let one = mysql_async::Pool::new(opts);
    let bound = |pool: mysql_async::Pool| async move {
        let mut conn = pool.get_conn().await.unwrap();
        conn.query_first::<u64, _>("SELECT @@session.idle_transaction_timeout").await.unwrap().unwrap()
    };
    one.get_conn().await.unwrap().query_drop("SET SESSION idle_transaction_timeout = 600").await.unwrap();
    let elector = Elector::builder(db.pool.clone(), "idle").node_id("a").lease(Duration::from_secs(5)).start().unwrap();
    one_leader(&[&elector], Duration::from_secs(10)).await;

    let mut tx = elector.fenced(&one).await.unwrap();
    let inside: u64 = tx.query("SELECT @@session.idle_transaction_timeout", ()).await.unwrap().rows[0].get(0).unwrap();
    assert!((1..=7).contains(&inside), "the fence bounds the idle transaction by its lease (5 s): {inside}");
    tx.commit().await.unwrap();
    assert_eq!(bound(one.clone()).await, 600, "after the commit");

    let mut tx = elector.fenced(&one).await.unwrap();
    tx.rollback().await.unwrap();
    assert_eq!(bound(one.clone()).await, 600, "after a rollback");

    // Spent by a failure (a statement it refuses): its rollback restores.
    let mut tx = elector.fenced(&one).await.unwrap();
    assert_eq!(tx.exec("COMMIT", ()).await.unwrap_err().kind(), mysqlleader::ErrorKind::Usage);
    tx.rollback().await.unwrap();
    drop(tx);
    assert_eq!(bound(one.clone()).await, 600, "after a failure and its rollback");
    elector.shutdown().await.unwrap();
    one.disconnect().await.unwrap();
}

/// Issue 39, "an incarnation in the fence": a leader paused past its lease (its traffic held
/// here, as a SIGSTOP, a GC pause or a frozen VM would) wakes after a process with its node id
/// took the next term. Its campaigns carry the term it held, so the database renews nothing for
/// it and it follows its successor: it never starts leading at the successor's term, its fence
/// fails, and the successor keeps leading. Before, its first campaign on waking renewed the
/// successor's lease (campaign renews a node id's lease at any term) and it adopted that term:
/// two live processes leading at one term, both passing `assert_leader`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_woken_predecessor_never_leads_at_its_successors_term() {
    let db = common::TestDb::migrated("elwoken").await;
    let proxy = common::proxy::Proxy::start(common::proxy::server_addr(&db.url)).await;
    let proxied = mysql_async::Pool::new(mysql_async::Opts::from_url(&proxy.url_for(&db.url)).unwrap());
    let a = elector(&proxied, "woken", "n");
    let mut a_events = a.events();
    one_leader(&[&a], Duration::from_secs(10)).await;
    let term = a.term();

    // A is paused: nothing it sends arrives, nothing comes back. It steps down by its deadline.
    proxy.stall();
    let stalled = Instant::now();
    while a.is_leader() {
        assert!(stalled.elapsed() < LEASE + SLACK, "a stalled leader must step down by its deadline");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A successor with the same node id (a restarted pod) takes the next term.
    let b = elector(&db.pool, "woken", "n");
    let mut b_events = b.events();
    assert_eq!(b.wait_for_leadership(Some(LEASE + RETRY + SLACK * 2)).await, WaitOutcome::Leading);
    let b_term = b.term();
    assert!(b_term > term, "the successor leads at a term of its own ({b_term} after {term})");

    // A wakes: its held bytes flow, and it campaigns again. For a few leases it never leads.
    proxy.restore();
    let watch_until = Instant::now() + LEASE * 3;
    while Instant::now() < watch_until {
        assert!(!a.is_leader(), "the woken predecessor leads again (at term {})", a.term());
        assert!(b.is_leader() && b.term() == b_term, "the successor stopped leading ({:?})", b.state());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut seen = Vec::new();
    while let Ok(e) = a_events.try_recv() {
        seen.push(e);
    }
    assert!(!seen.iter().any(|e| matches!(e, Event::StartedLeading { term: t, .. } if *t != term)),
            "the woken predecessor started leading at a term it did not win: {seen:?}");
    assert!(seen.iter().any(|e| matches!(e, Event::LeaderChanged { leader_id: Some(n), term: t } if n == "n" && *t == b_term)),
            "it follows its successor: {seen:?}");
    let mut seen_b = Vec::new();
    while let Ok(e) = b_events.try_recv() {
        seen_b.push(e);
    }
    assert!(!seen_b.iter().any(|e| matches!(e, Event::StoppedLeading { .. })), "the successor kept its term: {seen_b:?}");
    assert_eq!(a.leader_id().as_deref(), Some("n"));
    assert_eq!(a.term(), b_term, "it sees the successor's term");

    // Its fenced transactions cannot commit: neither through the elector, nor at its old term.
    let mut conn = proxied.get_conn().await.unwrap();
    let mut tx = conn.start_transaction(Default::default()).await.unwrap();
    a.fence(&mut tx).await.expect_err("the woken predecessor's fence passed");
    drop(tx);
    let mut tx = conn.start_transaction(Default::default()).await.unwrap();
    let refused = procedures::assert_leader(&mut tx, "woken", "n", term).await.unwrap_err();
    assert_eq!(refused.kind(), mysqlleader::ErrorKind::NotLeader, "{refused}");
    drop(tx);
    let mut tx = conn.start_transaction(Default::default()).await.unwrap();
    assert_eq!(b.fence(&mut tx).await.unwrap(), b_term, "the successor's fence passes");
    tx.commit().await.unwrap();
    drop(conn);
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
    proxied.disconnect().await.unwrap();
    db.drop_db().await;
}
