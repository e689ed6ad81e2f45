//! Sessions at scale: 3 nodes, one `Session` each, every node an elector for each of N services
//! (N = 1,000 and 10,000; --quick: 300), at the defaults (lease 10 s, renew 2 s, retry 1 s).
//! Per N, one after the other:
//!
//! 1. Node n0 starts alone and takes every seat, none of which exists yet (the time is
//!    reported: the start-up of a node of N new services), then n1 and n2 start and
//!    follow; once every follower has seen its leader, a window of the server's accounting as in
//!    the `system` section: server CPU per service-second, statements, and the most connections
//!    each node held at once (PROCESSLIST, per node's account... all three share one account,
//!    so the number is the benchmark database's connections divided by 3).
//! 2. The durations of the sessions' `renew_seats` calls in the window: the leader's renews,
//!    and the followers' looks (p50, p99).
//! 3. Node n0 "crashes": its runtime stops with no resign, its sockets close (as `kill -9`
//!    would close them). The time until every service has a leader in n1 or n2 is measured
//!    from that instant; the target is lease + retry + 1 s.
//! 4. n1, which leads about half of the seats by then, shuts down gracefully (`shutdown()`:
//!    its seats resigned in `resign_seats` batches), one lease after n2's followers all know it
//!    leads (so that n2 waits on n1's wake-up lock, as after any steady run); the time until n2
//!    leads every service is measured from the call.

use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts};
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::common::*;
use crate::report::Table;

pub struct SessionsResult {
    pub services: usize,
    pub cpu_per_service_s: Option<f64>,
    pub conns_per_node: f64,
    pub leader_p99_ms: f64,
    pub follower_p99_ms: f64,
    pub failover: Option<Duration>,
    /// Step 1: n0 alone took all N new seats in this time (`None`: not within 300 s).
    pub startup: Option<Duration>,
    /// Step 4: the seats n1 led when it shut down, and how long until n2 led every service.
    pub graceful: (usize, Option<Duration>),
}

/// The failover target: lease + retry interval + 1 s at the defaults.
pub const FAILOVER_TARGET: Duration = Duration::from_secs(12);

fn p(v: &[Duration], q: f64) -> f64 {
    percentile_f(&v.iter().map(|d| d.as_secs_f64() * 1000.0).collect::<Vec<_>>(), q)
}

/// The server's CPU seconds so far, when it runs on this host.
async fn cpu_of(admin: &mut Conn) -> Res<Option<f64>> {
    Ok(server_pid(admin).await?.and_then(cpu_seconds))
}

async fn questions(admin: &mut Conn) -> Res<i64> {
    let row: Option<(String, String)> = admin.query_first("SHOW GLOBAL STATUS LIKE 'Questions'").await?;
    Ok(row.map_or(0, |(_, v)| v.parse().unwrap_or(0)))
}

async fn one(dbs: &Dbs, services: usize, window: Duration) -> Res<SessionsResult> {
    let mut admin = Conn::new(Opts::from_url(&dbs.url)?).await?;
    let ids: Vec<String> = (0..services).map(|i| format!("sess-{services}-{i}")).collect();

    // 1. n0 alone, on a runtime of its own (so that it can crash), takes every seat.
    let runtime0 = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    let (session0, electors0) = {
        let _in = runtime0.enter();
        let session = mysqlleader::Session::builder(mysqlleader::pool_from_url(&dbs.url)?).node_id("n0").start()?;
        let electors: Vec<_> = ids.iter().map(|s| session.elector(s.as_str())).collect::<Result<_, _>>()?;
        (session, electors)
    };
    let t0 = Instant::now();
    while electors0.iter().filter(|e| e.is_leader()).count() < services && t0.elapsed() < Duration::from_secs(300) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let took = t0.elapsed();
    let startup = (electors0.iter().all(|e| e.is_leader())).then_some(took);
    let mut others = Vec::new();
    let mut followers = Vec::new();
    for n in 1..3 {
        let pool = mysqlleader::pool_from_url(&dbs.url)?;
        let session = mysqlleader::Session::builder(pool.clone()).node_id(format!("n{n}")).start()?;
        let electors: Vec<_> = ids.iter().map(|s| session.elector(s.as_str())).collect::<Result<_, _>>()?;
        followers.push(electors);
        others.push((session, pool));
    }
    let t1 = Instant::now();
    while !followers.iter().flatten().all(|e| e.leader_id().as_deref() == Some("n0")) && t1.elapsed() < Duration::from_secs(120) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    eprintln!("  sessions {services}: n0 took every seat in {:.1} s; followers settled in {:.1} s",
              took.as_secs_f64(), t1.elapsed().as_secs_f64());

    // The window: CPU, statements, connections; the renew_seats durations from here on.
    let before = (session0.stats().batch_calls, others.iter().map(|(s, _)| s.stats().batch_calls).collect::<Vec<_>>());
    let (cpu1, q1) = (cpu_of(&mut admin).await?, questions(&mut admin).await?);
    let start = Instant::now();
    let mut most = 0i64;
    while start.elapsed() < window {
        let n: Option<i64> = admin
            .query_first(format!("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '{BENCH_DB}' AND ID <> CONNECTION_ID()"))
            .await?;
        most = most.max(n.unwrap_or(0));
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let secs = start.elapsed().as_secs_f64();
    let (cpu2, q2) = (cpu_of(&mut admin).await?, questions(&mut admin).await?);
    let leaders = electors0.iter().filter(|e| e.is_leader()).count();
    let recent = |stats: mysqlleader::SessionStats, before: u64| {
        let new = (stats.batch_calls - before) as usize;
        let d = stats.recent_batch_durations;
        d[d.len().saturating_sub(new)..].to_vec()
    };
    let leader_durations = recent(session0.stats(), before.0);
    let follower_durations: Vec<Duration> =
        others.iter().zip(&before.1).flat_map(|((s, _), b)| recent(s.stats(), *b)).collect();

    // 3. n0 crashes.
    let crashed = Instant::now();
    runtime0.shutdown_background();
    let mut failover = None;
    while crashed.elapsed() < Duration::from_secs(120) {
        if (0..services).all(|i| followers.iter().any(|f| f[i].is_leader())) {
            failover = Some(crashed.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop((session0, electors0));

    // 4. n1 shuts down gracefully; n2 takes its seats. First the steady state after the
    //    failover: n2's followers know n1 leads their seats, and one lease later their session
    //    waits on n1's wake-up lock (as a node that has run for a while does).
    let settled = Instant::now();
    while !followers[1].iter().all(|e| e.is_leader() || e.leader_id().as_deref() == Some("n1")) && settled.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(10)).await;
    let handed = followers[0].iter().filter(|e| e.is_leader()).count();
    let closing = Instant::now();
    let (session1, pool1) = others.remove(0);
    let electors1 = followers.remove(0);
    let closed = session1.shutdown().await;
    let mut graceful = None;
    while closing.elapsed() < Duration::from_secs(120) {
        if followers[0].iter().all(|e| e.is_leader()) {
            graceful = Some(closing.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    eprintln!("  sessions {services}: n1's shutdown ({closed:?}) with {handed} seats led: n2 led every service after {graceful:?}");
    drop(electors1);
    let _ = pool1.disconnect().await;
    for (session, pool) in others {
        let _ = session.shutdown().await;
        let _ = pool.disconnect().await;
    }
    drop(followers);
    admin.disconnect().await?;
    if leaders != services {
        eprintln!("  sessions {services}: n0 led {leaders} of {services} at the end of the window");
    }
    Ok(SessionsResult {
        services,
        cpu_per_service_s: cpu1.zip(cpu2).map(|(a, b)| (b - a) / secs / services as f64),
        conns_per_node: most as f64 / 3.0,
        leader_p99_ms: p(&leader_durations, 99.0),
        follower_p99_ms: p(&follower_durations, 99.0),
        failover,
        startup,
        graceful: (handed, graceful),
    })
    .map(|r| {
        eprintln!(
            "  sessions {services}: {:.1} statements/s in all; renew_seats: leader p50 {:.1} ms p99 {:.1} ms ({} calls), followers p50 {:.1} ms p99 {:.1} ms ({} calls)",
            (q2 - q1) as f64 / secs,
            p(&leader_durations, 50.0),
            r.leader_p99_ms,
            leader_durations.len(),
            p(&follower_durations, 50.0),
            r.follower_p99_ms,
            follower_durations.len()
        );
        r
    })
}

pub async fn run(dbs: &Dbs, quick: bool) -> Res<(Vec<Table>, Value, Vec<SessionsResult>)> {
    let (sizes, window): (&[usize], Duration) = if quick { (&[300], Duration::from_secs(10)) } else { (&[1_000, 10_000], Duration::from_secs(30)) };
    let mut results = Vec::new();
    for &n in sizes {
        results.push(one(dbs, n, window).await?);
    }
    let mut t = Table::new(
        "Sessions: N services x 3 nodes, one Session per node, at the defaults (lease 10 s)",
        &["services", "start-up: one node takes N new seats", "server CPU ms per service-second", "connections per node", "renew_seats p99: leader", "renew_seats p99: followers", "failover of every service after a crash", "graceful shutdown: seats it led, all led by another after"],
    );
    for r in &results {
        t.row(vec![
            r.services.to_string(),
            r.startup.map_or("not within 300 s".into(), |d| format!("{:.2} s", d.as_secs_f64())),
            r.cpu_per_service_s.map_or("n/a (server not on this host)".into(), |c| format!("{:.4}", c * 1000.0)),
            format!("{:.1}", r.conns_per_node),
            format!("{:.1} ms", r.leader_p99_ms),
            format!("{:.1} ms", r.follower_p99_ms),
            r.failover.map_or("not within 120 s".into(), |d| format!("{:.2} s", d.as_secs_f64())),
            format!("{}, {}", r.graceful.0, r.graceful.1.map_or("not within 120 s".into(), |d| format!("{:.2} s", d.as_secs_f64()))),
        ]);
    }
    t.note(format!(
        "Window {:.0} s per N after settling. CPU: utime + stime of the server process over the window (the idle server's own \
         work included), per service and second. connections: the most seen at once for the benchmark's database, divided \
         by the 3 nodes. renew_seats p99: the round trip of each session's batch calls in the window (the leader renews its \
         seats; the followers look at theirs). failover: from the crash of the leading node (its runtime stopped with no \
         resign, its sockets closed) until every service had a leader among the other two; target lease + retry + 1 s = {:.0} s. \
         graceful shutdown: from n1's `shutdown()` until n2 led every service.",
        window.as_secs_f64(),
        FAILOVER_TARGET.as_secs_f64()
    ));
    let value = json!(results.iter().map(|r| json!({
        "services": r.services, "server_cpu_s_per_service_s": r.cpu_per_service_s, "connections_per_node": r.conns_per_node,
        "renew_seats_p99_ms_leader": r.leader_p99_ms, "renew_seats_p99_ms_followers": r.follower_p99_ms,
        "failover_s": r.failover.map(|d| d.as_secs_f64()),
        "startup_s": r.startup.map(|d| d.as_secs_f64()),
        "graceful_seats": r.graceful.0, "graceful_s": r.graceful.1.map(|d| d.as_secs_f64()),
    })).collect::<Vec<_>>());
    Ok((vec![t], value, results))
}
