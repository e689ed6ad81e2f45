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
//!
//! Before step 1, step 0: three nodes start at once on N other new services, one `Session`
//! each; the time until every service has exactly one leader and all three nodes know it, and
//! this process's thread count before and while the 3 × N electors run (issue "Fleets": a
//! bounded thread count). They shut down before step 1.
//! In step 1's window also the rows written to tables (no internal temporary table:
//! [`rows_written`]), per node and renew interval: with node leases a steady renew writes one
//! row per node, whatever N.
//! After step 4, step 5: the classic recipe at the same N ("honest benchmarks"): 3 nodes, each
//! with a pool of [`RECIPE_CONNS`] connections (the services dealt out over them), each node
//! ticking every service once a second with a 10 s timeout (the library's failover budget at
//! the defaults, as in the `system` section); after one settling window, the server CPU per
//! service-second over a window as long as step 1's, and the ticks the server managed against
//! the 3 × N a second wanted (beyond what 2 cores can serve, the recipe falls behind: its CPU
//! is then what the server could give, and the ratio flatters the recipe).

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
    /// Step 0: three nodes started at once on N new services, every service led and known
    /// after this long (`None`: not within 300 s).
    pub start3: Option<Duration>,
    /// Step 0: this process's threads before the three sessions started, and at most while
    /// they ran.
    pub threads: (usize, usize),
    /// Step 1's window: rows written ([`rows_written`]) per node per renew interval (2 s).
    pub rows_per_node_renew: f64,
    /// Step 5: the recipe at the same N.
    pub recipe: RecipeAtN,
}

/// The recipe at N services × 3 nodes (step 5).
pub struct RecipeAtN {
    pub cpu_per_service_s: Option<f64>,
    /// Ticks the server answered per second, in all three nodes' pools.
    pub ticks_per_s: f64,
    /// Ticks per second the recipe wants: one per service per node.
    pub wanted_per_s: f64,
}

/// Connections per recipe node: a sensible pool for one process ticking many services.
pub const RECIPE_CONNS: usize = 4;
/// The renew interval at the defaults (lease 10 s / 5).
const RENEW: Duration = Duration::from_secs(2);

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

/// Rows of the benchmark database's tables inserted, updated and deleted so far, no internal
/// temporary table and no system table: MySQL's `performance_schema.table_io_waits_summary_by_table`
/// for the database (its `Innodb_rows_*` also count the server's own tables, such as the
/// persistent statistics it recalculates after a burst of new rows); MariaDB 10.11, whose
/// performance schema is off by default and which has no `Innodb_rows_*`, by `Handler_write` +
/// `Handler_update` + `Handler_delete`, which leave internal temporary tables out (those count in
/// `Handler_tmp_*`).
async fn rows_written(admin: &mut Conn) -> Res<i64> {
    // The performance schema counts table I/O only while its instrument is on (scripts/testdb.sh
    // starts MariaDB with every instrument off: its sum then stays 0, which read as no row written).
    let counted: Option<i64> = admin
        .query_first("SELECT COUNT(*) FROM performance_schema.setup_instruments WHERE NAME = 'wait/io/table/sql/handler' AND ENABLED = 'YES'")
        .await
        .ok()
        .flatten();
    let by_table: Option<Option<i64>> = if counted != Some(1) { None } else { admin
        .query_first(format!(
            "SELECT CAST(SUM(COUNT_INSERT + COUNT_UPDATE + COUNT_DELETE) AS SIGNED) FROM performance_schema.table_io_waits_summary_by_table \
             WHERE OBJECT_SCHEMA = '{BENCH_DB}'"
        ))
        .await
        .ok()
        .flatten() };
    if let Some(Some(n)) = by_table {
        return Ok(n);
    }
    let rows: Vec<(String, String)> =
        admin.query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Handler_write', 'Handler_update', 'Handler_delete')").await?;
    Ok(rows.iter().map(|(_, v)| v.parse::<i64>().unwrap_or(0)).sum())
}

/// This process's threads now (`Threads:` of /proc/self/status).
fn threads() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Threads:").and_then(|n| n.trim().parse().ok())))
        .unwrap_or(0)
}

/// Step 0: three sessions start at once on `services` new services; returns how long until
/// every service had exactly one leader that all three knew, and the threads before and at
/// most while they ran. They shut down (gracefully) before it returns.
async fn three_start_at_once(dbs: &Dbs, services: usize) -> Res<(Option<Duration>, (usize, usize))> {
    let ids: Vec<String> = (0..services).map(|i| format!("start-{services}-{i}")).collect();
    let before = threads();
    let t0 = Instant::now();
    let mut nodes = Vec::new();
    for n in 0..3 {
        let pool = mysqlleader::pool_from_url(&dbs.url)?;
        let session = mysqlleader::Session::builder(pool.clone()).node_id(format!("s{n}")).start()?;
        let electors: Vec<_> = ids.iter().map(|s| session.elector(s.as_str())).collect::<Result<_, _>>()?;
        nodes.push((session, pool, electors));
    }
    let mut most = threads();
    let settled = |nodes: &[(mysqlleader::Session, mysql_async::Pool, Vec<mysqlleader::Elector>)]| {
        (0..services).all(|i| {
            let leaders: Vec<String> = nodes.iter().filter(|(_, _, e)| e[i].is_leader()).map(|(_, _, e)| e[i].node_id().to_string()).collect();
            leaders.len() == 1 && nodes.iter().all(|(_, _, e)| e[i].leader_id().as_deref() == Some(leaders[0].as_str()))
        })
    };
    let mut took = None;
    while t0.elapsed() < Duration::from_secs(300) {
        most = most.max(threads());
        if settled(&nodes) {
            took = Some(t0.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!("  sessions {services}: three nodes started at once; every service led and known after {took:?}; threads {before} before, at most {most} with 3 x {services} electors");
    for (session, pool, electors) in nodes {
        let _ = session.shutdown().await;
        drop(electors);
        let _ = pool.disconnect().await;
    }
    Ok((took, (before, most)))
}

/// Step 5: the recipe at `services` services × 3 nodes (the module's documentation).
async fn recipe_at(dbs: &Dbs, services: usize, window: Duration) -> Res<RecipeAtN> {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let mut admin = Conn::new(Opts::from_url(&dbs.url)?).await?;
    admin.query_drop(RECIPE_TABLE).await?;
    admin.query_drop("DELETE FROM recipe_election").await?;
    let ids: Vec<String> = (0..services).map(|i| format!("recipe-{services}-{i}")).collect();
    let ticks = Arc::new(AtomicU64::new(0));
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut workers = Vec::new();
    for node in 0..3 {
        for k in 0..RECIPE_CONNS {
            let mine: Vec<String> = ids.iter().skip(k).step_by(RECIPE_CONNS).cloned().collect();
            let mut conn = Conn::new(Opts::from_url(&dbs.url)?).await?;
            let (ticks, mut stopped) = (ticks.clone(), stopped.clone());
            let node = format!("r{node}");
            // One tick per service per second, spread evenly; a connection that falls behind
            // ticks as fast as the server answers.
            let gap = Duration::from_secs(1) / mine.len().max(1) as u32;
            workers.push(tokio::spawn(async move {
                let mut next = Instant::now() + gap * (k as u32);
                for service in mine.iter().cycle() {
                    tokio::select! {
                        _ = stopped.changed() => break,
                        _ = tokio::time::sleep_until(next) => {}
                    }
                    if recipe_tick(&mut conn, service, &node, Duration::from_secs(10)).await.is_ok() {
                        ticks.fetch_add(1, Ordering::Relaxed);
                    }
                    next += gap;
                }
                let _ = conn.disconnect().await;
            }));
        }
    }
    tokio::time::sleep(window).await;
    let (cpu1, t1, start) = (cpu_of(&mut admin).await?, ticks.load(Ordering::Relaxed), Instant::now());
    tokio::time::sleep(window).await;
    let (cpu2, t2, secs) = (cpu_of(&mut admin).await?, ticks.load(Ordering::Relaxed), start.elapsed().as_secs_f64());
    let _ = stop.send(true);
    for w in workers {
        let _ = w.await;
    }
    admin.query_drop("DELETE FROM recipe_election").await?;
    admin.disconnect().await?;
    let r = RecipeAtN {
        cpu_per_service_s: cpu1.zip(cpu2).map(|(a, b)| (b - a) / secs / services as f64),
        ticks_per_s: (t2 - t1) as f64 / secs,
        wanted_per_s: 3.0 * services as f64,
    };
    eprintln!("  recipe {services} x 3 nodes ({RECIPE_CONNS} connections each): {:.0} of {:.0} ticks/s answered; server CPU ms per service-second {:?}",
              r.ticks_per_s, r.wanted_per_s, r.cpu_per_service_s.map(|c| c * 1000.0));
    Ok(r)
}

async fn one(dbs: &Dbs, services: usize, window: Duration) -> Res<SessionsResult> {
    // 0. Three nodes at once.
    let (start3, threads) = three_start_at_once(dbs, services).await?;

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
    // Seats renewed, seats listed for the server to read (src/session/on_lease.rs), and followed
    // seats answered from their leader's lease row (src/session/watched.rs), per node.
    let listing = |stats: &[mysqlleader::SessionStats]| {
        stats.iter().map(|s| (s.batched_seats, s.listed_seats, s.watched_seats)).collect::<Vec<_>>()
    };
    let all_stats = |s0: &mysqlleader::Session, rest: &[(mysqlleader::Session, mysql_async::Pool)]| {
        std::iter::once(s0.stats()).chain(rest.iter().map(|(s, _)| s.stats())).collect::<Vec<_>>()
    };
    let listed_before = listing(&all_stats(&session0, &others));
    let (cpu1, q1, w1) = (cpu_of(&mut admin).await?, questions(&mut admin).await?, rows_written(&mut admin).await?);
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
    let (cpu2, q2, w2) = (cpu_of(&mut admin).await?, questions(&mut admin).await?, rows_written(&mut admin).await?);
    let rows_per_node_renew = (w2 - w1) as f64 / 3.0 / (secs / RENEW.as_secs_f64());
    for (node, ((b0, l0, w0), (b1, l1, w1))) in listed_before.iter().zip(listing(&all_stats(&session0, &others))).enumerate() {
        eprintln!("  sessions {services}: n{node} renewed {} seats in the window, listed {} of them for the server to read, \
                   answered {} followed seats from their leader's lease", b1 - b0, l1 - l0, w1 - w0);
    }
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

    // 5. The recipe at the same N.
    let recipe = recipe_at(dbs, services, window).await?;
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
        start3,
        threads,
        rows_per_node_renew,
        recipe,
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
        &["services", "start-up: three nodes at once, N new services", "threads of this process: before, with 3 x N electors", "start-up: one node takes N new seats", "server CPU ms per service-second", "the recipe's at the same N", "ratio", "recipe ticks answered / wanted per s", "rows written per node per renew interval", "connections per node", "renew p99: leader", "renew p99: followers", "failover of every service after a crash", "graceful shutdown: seats it led, all led by another after"],
    );
    let ms = |c: Option<f64>| c.map_or("n/a (server not on this host)".into(), |c| format!("{:.4}", c * 1000.0));
    for r in &results {
        t.row(vec![
            r.services.to_string(),
            r.start3.map_or("not within 300 s".into(), |d| format!("{:.2} s", d.as_secs_f64())),
            format!("{}, {}", r.threads.0, r.threads.1),
            r.startup.map_or("not within 300 s".into(), |d| format!("{:.2} s", d.as_secs_f64())),
            ms(r.cpu_per_service_s),
            ms(r.recipe.cpu_per_service_s),
            r.cpu_per_service_s.zip(r.recipe.cpu_per_service_s).map_or("n/a".into(), |(a, b)| format!("{:.3}x", a / b)),
            format!("{:.0} / {:.0}", r.recipe.ticks_per_s, r.recipe.wanted_per_s),
            format!("{:.2}", r.rows_per_node_renew),
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
         graceful shutdown: from n1's `shutdown()` until n2 led every service. The recipe at the same N: 3 nodes of {} \
         connections each, one tick per service per node per second, timeout 10 s (the same failover budget), CPU over a \
         window as long, after one settling window; when it answers fewer ticks than it wants, the server is saturated and \
         the ratio flatters the recipe. Rows written: the benchmark database's rows inserted, updated and deleted in the \
         window (MySQL: performance_schema's table I/O summary; MariaDB: Handler_write/update/delete, which leave internal \
         temporary tables out), per node and renew interval (2 s). renew p99: each session's batch calls (renew_lease, or renew_seats without node leases).",
        window.as_secs_f64(),
        FAILOVER_TARGET.as_secs_f64(),
        RECIPE_CONNS
    ));
    let value = json!(results.iter().map(|r| json!({
        "services": r.services, "server_cpu_s_per_service_s": r.cpu_per_service_s, "connections_per_node": r.conns_per_node,
        "renew_seats_p99_ms_leader": r.leader_p99_ms, "renew_seats_p99_ms_followers": r.follower_p99_ms,
        "failover_s": r.failover.map(|d| d.as_secs_f64()),
        "startup_s": r.startup.map(|d| d.as_secs_f64()),
        "graceful_seats": r.graceful.0, "graceful_s": r.graceful.1.map(|d| d.as_secs_f64()),
        "start3_s": r.start3.map(|d| d.as_secs_f64()), "threads_before": r.threads.0, "threads_with_electors": r.threads.1,
        "rows_written_per_node_per_renew": r.rows_per_node_renew,
        "recipe_server_cpu_s_per_service_s": r.recipe.cpu_per_service_s,
        "recipe_ticks_per_s": r.recipe.ticks_per_s, "recipe_wanted_per_s": r.recipe.wanted_per_s,
    })).collect::<Vec<_>>());
    Ok((vec![t], value, results))
}
