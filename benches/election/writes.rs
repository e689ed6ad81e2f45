//! Database writes per service per renew interval, from the server's own counters, with 3, 10
//! and 50 candidates: real `Elector`s (one pool each, as separate processes would have), against
//! the recipe's candidates ticking once per renew interval. Measured one after the other on an
//! otherwise idle server.

use std::collections::BTreeMap;
use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts};
use serde_json::{json, Value};

use crate::common::*;
use crate::report::Table;

pub const CANDIDATES: &[usize] = &[3, 10, 50];

const COUNTERS: &[&str] = &[
    "Handler_write",
    "Handler_update",
    "Handler_delete",
    "Innodb_log_writes",
    "Innodb_data_fsyncs",
];

type Counters = BTreeMap<String, i64>;

async fn snapshot(conn: &mut Conn) -> Res<Counters> {
    let list = COUNTERS.iter().map(|c| format!("'{c}'")).collect::<Vec<_>>().join(",");
    let rows: Vec<(String, String)> = conn.query(format!("SHOW GLOBAL STATUS WHERE Variable_name IN ({list})")).await?;
    Ok(rows.into_iter().map(|(k, v)| (k, v.parse().unwrap_or(0))).collect())
}

fn delta(a: &Counters, b: &Counters, overhead: &Counters) -> Counters {
    COUNTERS
        .iter()
        .map(|k| {
            let d = b.get(*k).unwrap_or(&0) - a.get(*k).unwrap_or(&0) - overhead.get(*k).unwrap_or(&0);
            (k.to_string(), d)
        })
        .collect()
}

/// What one window counted, per renew interval.
#[derive(Clone, Debug)]
pub struct PerInterval {
    /// Row writes through the storage-engine API: Handler_write + Handler_update + Handler_delete
    /// (an INSERT that meets a duplicate key counts here, and so does the UPDATE it turns into).
    pub row_writes: f64,
    /// Insert attempts (Handler_write) and row updates (Handler_update) on their own.
    pub inserts: f64,
    pub updates: f64,
    pub log_writes: f64,
    pub fsyncs: f64,
}

fn per_interval(d: &Counters, intervals: f64) -> PerInterval {
    let g = |k: &str| *d.get(k).unwrap_or(&0) as f64 / intervals;
    PerInterval {
        row_writes: g("Handler_write") + g("Handler_update") + g("Handler_delete"),
        inserts: g("Handler_write"),
        updates: g("Handler_update"),
        log_writes: g("Innodb_log_writes"),
        fsyncs: g("Innodb_data_fsyncs"),
    }
}

pub struct WritesResult {
    pub candidates: usize,
    pub ours: PerInterval,
    pub recipe: PerInterval,
}

pub async fn run(dbs: &Dbs, quick: bool) -> Res<(Vec<Table>, Value, Vec<WritesResult>)> {
    // The library's defaults in the full run; a shorter lease (same ratios) in the quick one.
    let lease = if quick { Duration::from_millis(2500) } else { Duration::from_secs(10) };
    let renew = lease / 5;
    let intervals: u32 = if quick { 4 } else { 5 };
    let window = renew * intervals;
    let mut admin = Conn::new(Opts::from_url(&dbs.url)?).await?;
    // What reading the counters itself adds (SHOW STATUS fills a temporary table).
    let a = snapshot(&mut admin).await?;
    let b = snapshot(&mut admin).await?;
    let overhead = delta(&a, &b, &Counters::new());

    let mut results = Vec::new();
    let mut rng = Rng::seeded();
    for &n in CANDIDATES {
        // 1. The library: n electors for one service, each with a pool of its own.
        let service = format!("writes-{n}");
        let mut electors = Vec::new();
        let mut pools = Vec::new();
        for i in 0..n {
            let pool = mysql_async::Pool::new(Opts::from_url(&dbs.url)?);
            let e = mysqlleader::Elector::builder(pool.clone(), service.as_str())
                .node_id(format!("n{i}"))
                .lease(lease)
                .start()?;
            electors.push(e);
            pools.push(pool);
        }
        // Settle: a leader holds the seat and every follower has seen it (and waits on the lock).
        let mut waited = Duration::ZERO;
        while !electors.iter().any(|e| e.is_leader()) && waited < lease * 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            waited += Duration::from_millis(20);
        }
        tokio::time::sleep(renew + lease / 10).await;
        let s1 = snapshot(&mut admin).await?;
        tokio::time::sleep(window).await;
        let s2 = snapshot(&mut admin).await?;
        let ours = per_interval(&delta(&s1, &s2, &overhead), f64::from(intervals));
        let leaders = electors.iter().filter(|e| e.is_leader()).count();
        for e in electors {
            let _ = e.shutdown().await;
        }
        for p in pools {
            let _ = p.disconnect().await;
        }
        if leaders != 1 {
            eprintln!("  writes: {leaders} leaders among {n} electors at the end of the window (expected 1)");
        }

        // 2. The recipe: n candidates, each ticking once per renew interval, at random phases.
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let mut tasks = Vec::new();
        for i in 0..n {
            let conn = Conn::new(Opts::from_url(&dbs.url)?).await?;
            let offset = rng.duration(renew);
            tasks.push(spawn_recipe_node(conn, service.clone(), format!("n{i}"), lease, renew, offset, stop_rx.clone()));
        }
        tokio::time::sleep(renew * 2).await;
        let s1 = snapshot(&mut admin).await?;
        tokio::time::sleep(window).await;
        let s2 = snapshot(&mut admin).await?;
        let recipe = per_interval(&delta(&s1, &s2, &overhead), f64::from(intervals));
        let _ = stop_tx.send(true);
        for t in tasks {
            let _ = t.await;
        }
        results.push(WritesResult { candidates: n, ours, recipe });
    }
    admin.disconnect().await?;

    let mut t = Table::new(
        "Database writes per service per renew interval (server counters)",
        &["candidates", "contender", "row writes", "of which insert attempts", "row updates", "redo log writes", "fsyncs"],
    );
    let mut j = Vec::new();
    for r in &results {
        for (name, p) in [("library (Elector)", &r.ours), ("recipe", &r.recipe)] {
            t.row(vec![
                r.candidates.to_string(),
                name.into(),
                format!("{:.2}", p.row_writes),
                format!("{:.2}", p.inserts),
                format!("{:.2}", p.updates),
                format!("{:.2}", p.log_writes),
                format!("{:.2}", p.fsyncs),
            ]);
            j.push(json!({
                "candidates": r.candidates, "contender": name, "row_writes": p.row_writes,
                "insert_attempts": p.inserts, "row_updates": p.updates, "redo_log_writes": p.log_writes, "fsyncs": p.fsyncs,
            }));
        }
    }
    t.note(format!(
        "Lease {} ms, renew interval {} ms (followers check every {} ms); counters over {} renew intervals after settling, \
         less what reading them adds. row writes = Handler_write + Handler_update + Handler_delete (every row insert \
         attempt, update and delete through the engine API: each recipe tick is an INSERT that meets the existing row and \
         takes its exclusive lock, counted even when its UPDATE part then changes nothing); row updates = Handler_update \
         (rows really changed); redo log writes = Innodb_log_writes; fsyncs = Innodb_data_fsyncs.",
        lease.as_millis(),
        renew.as_millis(),
        (lease / 10).as_millis(),
        intervals
    ));
    let value = json!({"lease_ms": lease.as_millis() as u64, "renew_interval_ms": renew.as_millis() as u64, "intervals": intervals, "rows": j});
    Ok((vec![t], value, results))
}
