//! The whole system at the library's defaults, against the recipe at an equal failover budget:
//! what N services with 3 candidates each cost one server per second, side by side.
//!
//! * library: 3 real `Elector`s per service, each with a pool of its own made by
//!   `pool_from_url` (as separate processes would have), lease 10 s (renew 2 s, retry 1 s, the
//!   wake-up lock on): a crash fails over within lease + retry = 11 s.
//! * sessions: 3 nodes, one `Session` each holding an elector for every service (one pool
//!   each, lease 10 s at the defaults as above): the same failover budget.
//! * recipe: 3 nodes per service, each with a connection of its own, each running the recipe's
//!   upsert once a second with a 10 s timeout: a crash fails over within timeout + 1 s = 11 s.
//!
//! Each runs alone for the same window after settling; the server's own accounting gives the
//! numbers: CPU seconds of the server process (`/proc/PID/stat`, utime + stime, when the server
//! runs on this host), statements received (`Questions`), row writes, redo log writes and fsyncs
//! (`SHOW GLOBAL STATUS`), and the connections it holds for the candidates (`PROCESSLIST`).

use std::collections::BTreeMap;
use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts};
use serde_json::{json, Value};

use crate::common::*;
use crate::report::Table;

const COUNTERS: &[&str] = &["Questions", "Handler_write", "Handler_update", "Handler_delete", "Innodb_log_writes", "Innodb_data_fsyncs"];

type Counters = BTreeMap<String, i64>;

/// What the server spent on one contender, per service and second of the window.
#[derive(Clone, Debug)]
pub struct Cost {
    /// Server CPU seconds per service-second; None when the server process is not on this host.
    pub cpu: Option<f64>,
    pub statements: f64,
    pub row_writes: f64,
    pub log_writes: f64,
    pub fsyncs: f64,
    /// Server connections per candidate (the most seen in the window).
    pub conns_per_candidate: f64,
}

pub struct SystemResult {
    pub services: usize,
    pub library: Cost,
    pub sessions: Cost,
    pub recipe: Cost,
}

async fn counters(conn: &mut Conn) -> Res<Counters> {
    let list = COUNTERS.iter().map(|c| format!("'{c}'")).collect::<Vec<_>>().join(",");
    let rows: Vec<(String, String)> = conn.query(format!("SHOW GLOBAL STATUS WHERE Variable_name IN ({list})")).await?;
    Ok(rows.into_iter().map(|(k, v)| (k, v.parse().unwrap_or(0))).collect())
}

/// The connections of the benchmark's database, except `admin`'s own.
async fn connections(admin: &mut Conn, db: &str) -> Res<i64> {
    let n: Option<i64> = admin
        .query_first(format!(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '{db}' AND ID <> CONNECTION_ID()"
        ))
        .await?;
    Ok(n.unwrap_or(0))
}

/// Measures the window: counters and CPU before and after, connections sampled every second.
async fn window(admin: &mut Conn, db: &str, pid: Option<u32>, services: usize, length: Duration) -> Res<Cost> {
    let c1 = counters(admin).await?;
    let cpu1 = pid.and_then(cpu_seconds);
    let start = tokio::time::Instant::now();
    let mut most = 0;
    while start.elapsed() < length {
        most = most.max(connections(admin, db).await?);
        tokio::time::sleep(Duration::from_secs(1).min(length.saturating_sub(start.elapsed()))).await;
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu2 = pid.and_then(cpu_seconds);
    let c2 = counters(admin).await?;
    let per = |k: &str| (c2.get(k).unwrap_or(&0) - c1.get(k).unwrap_or(&0)) as f64 / secs / services as f64;
    Ok(Cost {
        cpu: cpu1.zip(cpu2).map(|(a, b)| (b - a) / secs / services as f64),
        statements: per("Questions"),
        row_writes: per("Handler_write") + per("Handler_update") + per("Handler_delete"),
        log_writes: per("Innodb_log_writes"),
        fsyncs: per("Innodb_data_fsyncs"),
        conns_per_candidate: most as f64 / (3 * services) as f64,
    })
}

pub async fn run(dbs: &Dbs, quick: bool) -> Res<(Vec<Table>, Value, SystemResult)> {
    let services = if quick { 15 } else { 30 };
    let length = if quick { Duration::from_secs(12) } else { Duration::from_secs(40) };
    let lease = Duration::from_secs(10);
    let db = BENCH_DB;
    let mut admin = Conn::new(Opts::from_url(&dbs.url)?).await?;
    let pid = server_pid(&mut admin).await?;

    // 0. The idle server over the same window: its own background work (and this sampling),
    //    which no service causes, is taken off both contenders' CPU.
    let idle = window(&mut admin, db, pid, services, length).await?;

    // 1. The library: 3 electors per service at the defaults, each with its own pool.
    let mut electors = Vec::new();
    let mut pools = Vec::new();
    for s in 0..services {
        for n in 0..3 {
            let pool = mysqlleader::pool_from_url(&dbs.url)?;
            let e = mysqlleader::Elector::builder(pool.clone(), format!("system-{s}")).node_id(format!("n{n}")).start()?;
            electors.push(e);
            pools.push(pool);
        }
    }
    // Settle: every service has a leader and its followers have seen it (two retry intervals).
    let t0 = tokio::time::Instant::now();
    while electors.iter().filter(|e| e.is_leader()).count() < services && t0.elapsed() < lease * 2 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let library = window(&mut admin, db, pid, services, length).await?;
    let leaders = electors.iter().filter(|e| e.is_leader()).count();
    for e in electors {
        let _ = e.shutdown().await;
    }
    for p in pools {
        let _ = p.disconnect().await;
    }
    if leaders != services {
        eprintln!("  system: {leaders} leaders for {services} services at the end of the window (expected one each)");
    }

    // 2. Sessions: 3 nodes, one session each with an elector for every service.
    let mut sessions = Vec::new();
    let mut electors = Vec::new();
    for n in 0..3 {
        let pool = mysqlleader::pool_from_url(&dbs.url)?;
        let session = mysqlleader::Session::builder(pool.clone()).node_id(format!("n{n}")).start()?;
        for s in 0..services {
            electors.push(session.elector(format!("system-{s}"))?);
        }
        sessions.push((session, pool));
    }
    let t0 = tokio::time::Instant::now();
    while electors.iter().filter(|e| e.is_leader()).count() < services && t0.elapsed() < lease * 2 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let in_sessions = window(&mut admin, db, pid, services, length).await?;
    let leaders = electors.iter().filter(|e| e.is_leader()).count();
    for (session, pool) in sessions {
        let _ = session.shutdown().await;
        let _ = pool.disconnect().await;
    }
    drop(electors);
    if leaders != services {
        eprintln!("  system: {leaders} session leaders for {services} services at the end of the window (expected one each)");
    }

    // 3. The recipe: 3 nodes per service, an upsert a second each at random phases.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut tasks = Vec::new();
    let mut rng = Rng::seeded();
    for s in 0..services {
        for n in 0..3 {
            let conn = Conn::new(Opts::from_url(&dbs.url)?).await?;
            let offset = rng.duration(Duration::from_secs(1));
            let node = spawn_recipe_node(conn, format!("system-{s}"), format!("n{n}"), lease, Duration::from_secs(1), offset, stop_rx.clone());
            tasks.push(node);
        }
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let recipe = window(&mut admin, db, pid, services, length).await?;
    let _ = stop_tx.send(true);
    for t in tasks {
        let _ = t.await;
    }
    admin.disconnect().await?;
    let net = |c: Cost| Cost { cpu: c.cpu.zip(idle.cpu).map(|(a, b)| a - b), ..c };
    let (library, sessions, recipe) = (net(library), net(in_sessions), net(recipe));

    let mut t = Table::new(
        "System: N services x 3 candidates at the library's defaults vs the recipe at an equal failover budget (per service and second)",
        &["contender", "services", "server CPU ms", "statements", "row writes", "redo log writes", "fsyncs", "server connections per candidate"],
    );
    let fmt_cpu = |c: &Cost| c.cpu.map_or("n/a (server not on this host)".to_string(), |v| format!("{:.3}", v * 1000.0));
    for (name, c) in [
        ("library (3 Electors, lease 10 s)", &library),
        ("sessions (3 Sessions of every service, lease 10 s)", &sessions),
        ("recipe (upsert every 1 s, timeout 10 s)", &recipe),
    ] {
        t.row(vec![
            name.into(),
            services.to_string(),
            fmt_cpu(c),
            format!("{:.2}", c.statements),
            format!("{:.2}", c.row_writes),
            format!("{:.2}", c.log_writes),
            format!("{:.2}", c.fsyncs),
            format!("{:.2}", c.conns_per_candidate),
        ]);
    }
    let ratio = library.cpu.zip(recipe.cpu).map(|(a, b)| a / b);
    t.row(vec![
        "ratio library / recipe".into(),
        String::new(),
        ratio.map_or("n/a".into(), |r| format!("{r:.2}x")),
        format!("{:.2}x", library.statements / recipe.statements),
        format!("{:.2}x", library.row_writes / recipe.row_writes),
        format!("{:.2}x", library.log_writes / recipe.log_writes),
        format!("{:.2}x", library.fsyncs / recipe.fsyncs),
        String::new(),
    ]);
    let s_ratio = sessions.cpu.zip(recipe.cpu).map(|(a, b)| a / b);
    t.row(vec![
        "ratio sessions / recipe".into(),
        String::new(),
        s_ratio.map_or("n/a".into(), |r| format!("{r:.3}x")),
        format!("{:.3}x", sessions.statements / recipe.statements),
        format!("{:.3}x", sessions.row_writes / recipe.row_writes),
        format!("{:.3}x", sessions.log_writes / recipe.log_writes),
        format!("{:.3}x", sessions.fsyncs / recipe.fsyncs),
        String::new(),
    ]);
    t.note(format!(
        "Each contender alone on the server for {:.0} s after settling, one after the other. Failover budget: a crash is \
         noticed within 11 s by both (lease 10 s + retry 1 s; timeout 10 s + tick 1 s). server CPU: utime + stime of the \
         server process (/proc/PID/stat, all its threads), less what the idle server used over a window of the same \
         length just before (idle: {:.3} ms per service-second). \
         statements: Questions (client statements; a CALL counts once). row writes: Handler_write + Handler_update + \
         Handler_delete. connections: the most seen in PROCESSLIST for the benchmark's database, per candidate (library: \
         each Elector's pool connection and its wake-up lock connection; sessions: each session's kept connection and its wake-up lock connection, \
         so per node that number times the services). The benchmark client runs on the same 2 cores \
         as the server, unpinned; its own CPU is not counted.",
        length.as_secs_f64(),
        idle.cpu.unwrap_or(0.0) * 1000.0
    ));
    let cost_json = |c: &Cost| {
        json!({"server_cpu_s_per_service_s": c.cpu, "statements": c.statements, "row_writes": c.row_writes,
               "redo_log_writes": c.log_writes, "fsyncs": c.fsyncs, "connections_per_candidate": c.conns_per_candidate})
    };
    let value = json!({
        "services": services, "window_s": length.as_secs_f64(), "idle": cost_json(&idle),
        "library": cost_json(&library), "sessions": cost_json(&sessions), "recipe": cost_json(&recipe), "cpu_ratio": ratio,
        "sessions_cpu_ratio": s_ratio,
    });
    Ok((vec![t], value, SystemResult { services, library, sessions, recipe }))
}
