//! Scale: how many services, each with 3 candidates calling once a second (the leader renews,
//! the two followers check), one server sustains while the p99 latency of the calls stays under
//! 50 ms. The load is open-loop raw procedure calls on one pool (not thousands of Elector
//! objects): every candidate's call is scheduled at its own moment of the second, and a call's
//! latency runs from that scheduled moment to its answer, so queueing counts. The number of
//! services is doubled until a step fails, then bisected. The recipe gets the same treatment.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mysql_async::Pool;
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::common::*;
use crate::report::{fmt_rate, Table};

const P99_LIMIT_MS: f64 = 50.0;
const LEASE: Duration = Duration::from_secs(60);
const POOL_MAX: usize = 64;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Who {
    Library,
    /// The library's call on a pool with `reset_connection=false`.
    LibraryNoReset,
    Recipe,
}

#[derive(Clone, Debug)]
pub struct Step {
    pub services: usize,
    pub target_rate: f64,
    pub achieved_rate: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub errors: u64,
    pub pass: bool,
}

fn svc(s: usize) -> String {
    format!("sc{s}")
}

async fn one_call(pool: &Pool, who: Who, s: usize, node: usize) -> Res<()> {
    let (service, node) = (svc(s), format!("sc{s}-n{node}"));
    match who {
        Who::Library | Who::LibraryNoReset => {
            mysqlleader::procedures::campaign(pool, &service, &node, LEASE).await?;
        }
        Who::Recipe => {
            let mut conn = pool.get_conn().await?;
            recipe_tick(&mut conn, &service, &node, LEASE).await?;
        }
    }
    Ok(())
}

/// Makes node 0 of services `from..to` the leader (32 at a time).
async fn seat_leaders(pool: &Pool, who: Who, from: usize, to: usize) -> Res<()> {
    let next = Arc::new(AtomicUsize::new(from));
    let mut tasks = Vec::new();
    for _ in 0..32 {
        let (pool, next) = (pool.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let s = next.fetch_add(1, Ordering::Relaxed);
                if s >= to {
                    return Ok::<_, BoxError>(());
                }
                one_call(&pool, who, s, 0).await?;
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(())
}

/// One step: `services` × 3 calls a second for `warm + dur`; statistics over `dur`.
async fn step(pool: &Pool, who: Who, services: usize, warm: Duration, dur: Duration) -> Res<Step> {
    let per_s = 3 * services;
    let total = ((warm + dur).as_secs_f64() * per_s as f64) as usize;
    let gap = Duration::from_secs_f64(1.0 / per_s as f64);
    let start = Instant::now() + Duration::from_millis(5);
    let measure_from = start + warm;
    let outstanding = Arc::new(AtomicUsize::new(0));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(Instant, Option<u32>)>();
    let mut aborted = false;
    let mut k = 0usize;
    let mut ticker = tokio::time::interval(Duration::from_millis(1));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    while k < total {
        ticker.tick().await;
        let now = Instant::now();
        while k < total {
            let at = start + gap * k as u32;
            if at > now {
                break;
            }
            let idx = k % per_s;
            let (s, node) = (idx / 3, idx % 3);
            let (pool, tx, outstanding) = (pool.clone(), tx.clone(), outstanding.clone());
            outstanding.fetch_add(1, Ordering::Relaxed);
            tokio::spawn(async move {
                let r = one_call(&pool, who, s, node).await;
                let lat = r.ok().map(|_| u32::try_from(at.elapsed().as_micros()).unwrap_or(u32::MAX));
                outstanding.fetch_sub(1, Ordering::Relaxed);
                let _ = tx.send((at, lat));
            });
            k += 1;
        }
        // Hopelessly behind: more than two seconds of calls in flight.
        if outstanding.load(Ordering::Relaxed) > 2 * per_s + 1000 {
            aborted = true;
            break;
        }
    }
    drop(tx);
    let mut lat = Vec::new();
    let mut errors = 0u64;
    let mut first_at = None;
    let mut last_done = measure_from;
    while let Some((at, l)) = rx.recv().await {
        if at < measure_from {
            continue;
        }
        first_at.get_or_insert(at);
        match l {
            Some(us) => {
                lat.push(us);
                last_done = last_done.max(Instant::now());
            }
            None => errors += 1,
        }
    }
    let span = (last_done - measure_from).as_secs_f64().max(dur.as_secs_f64());
    let achieved = lat.len() as f64 / span;
    let p50 = percentile_us(&mut lat, 50.0) / 1000.0;
    let p99 = percentile_us(&mut lat, 99.0) / 1000.0;
    let target_rate = per_s as f64;
    let pass = !aborted && errors == 0 && p99 < P99_LIMIT_MS && achieved >= 0.97 * target_rate;
    Ok(Step { services, target_rate, achieved_rate: achieved, p50_ms: p50, p99_ms: if aborted { f64::INFINITY } else { p99 }, errors, pass })
}

async fn ramp(url: &str, who: Who, quick: bool) -> Res<(Vec<Step>, Option<Step>)> {
    let (warm, dur) = if quick { (Duration::from_millis(300), Duration::from_millis(1200)) } else { (Duration::from_secs(1), Duration::from_secs(5)) };
    let url = if who == Who::LibraryNoReset { no_reset(url) } else { url.to_string() };
    let pool = pool(&url, POOL_MAX)?;
    let mut seated = 0usize;
    let mut steps = Vec::new();
    let mut best: Option<Step> = None;
    let mut fail_at = None;
    let mut s = if quick { 100usize } else { 50 };
    while s <= 12_800 {
        if s > seated {
            seat_leaders(&pool, who, seated, s).await?;
            seated = s;
        }
        let st = step(&pool, who, s, warm, dur).await?;
        eprintln!("  scale {who:?}: {} services -> {:.0}/s of {:.0}/s, p99 {:.1} ms{}", s, st.achieved_rate, st.target_rate, st.p99_ms, if st.pass { "" } else { " (fail)" });
        steps.push(st.clone());
        if st.pass {
            best = Some(st);
            s *= 2;
        } else {
            fail_at = Some(s);
            break;
        }
    }
    // Bisect between the last pass and the first failure, to a tenth of the interval.
    if let Some(mut hi) = fail_at {
        let mut lo = best.as_ref().map_or(0, |b| b.services);
        let rounds = if quick { 0 } else { 3 };
        for _ in 0..rounds {
            let mid = (lo + hi) / 2;
            if mid <= lo || hi - lo < 20 {
                break;
            }
            if mid > seated {
                seat_leaders(&pool, who, seated, mid).await?;
                seated = mid;
            }
            let st = step(&pool, who, mid, warm, dur).await?;
            eprintln!("  scale {who:?}: {} services -> {:.0}/s of {:.0}/s, p99 {:.1} ms{}", mid, st.achieved_rate, st.target_rate, st.p99_ms, if st.pass { "" } else { " (fail)" });
            steps.push(st.clone());
            if st.pass {
                lo = mid;
                best = Some(st);
            } else {
                hi = mid;
            }
        }
    }
    pool.disconnect().await?;
    Ok((steps, best))
}

pub struct ScaleResult {
    pub library: Option<Step>,
    pub library_no_reset: Option<Step>,
    pub recipe: Option<Step>,
}

pub async fn run(dbs: &Dbs, quick: bool) -> Res<(Vec<Table>, Value, ScaleResult)> {
    let (lib_steps, lib_best) = ramp(&dbs.url, Who::Library, quick).await?;
    let (nr_steps, nr_best) = ramp(&dbs.url, Who::LibraryNoReset, quick).await?;
    let (rec_steps, rec_best) = ramp(&dbs.url, Who::Recipe, quick).await?;
    let mut t = Table::new(
        "Scale: services (3 candidates each, one call per candidate per second) one server sustains with p99 < 50 ms",
        &["contender", "services sustained", "calls/s", "p50 ms", "p99 ms", "first failing step"],
    );
    let describe_fail = |steps: &[Step]| {
        steps
            .iter()
            .filter(|s| !s.pass)
            .min_by_key(|s| s.services)
            .map(|s| format!("{} services: {:.0} of {:.0} calls/s, p99 {}", s.services, s.achieved_rate, s.target_rate,
                if s.p99_ms.is_finite() { format!("{:.1} ms", s.p99_ms) } else { "unbounded (fell behind)".into() }))
            .unwrap_or_else(|| "none up to 12800".into())
    };
    for (name, best, steps) in [
        ("library (CALL campaign), pool with reset_connection=true (mysql_async's default)", &lib_best, &lib_steps),
        ("library, pool with reset_connection=false (as pool_from_url makes it)", &nr_best, &nr_steps),
        ("recipe", &rec_best, &rec_steps),
    ] {
        match best {
            Some(b) => t.row(vec![
                name.into(),
                b.services.to_string(),
                fmt_rate(b.achieved_rate),
                format!("{:.2}", b.p50_ms),
                format!("{:.2}", b.p99_ms),
                describe_fail(steps),
            ]),
            None => t.row(vec![name.into(), format!("< {}", steps.iter().map(|s| s.services).min().unwrap_or(0)), "-".into(), "-".into(), "-".into(), describe_fail(steps)]),
        }
    }
    t.note(format!(
        "Open-loop raw calls on one pool of {POOL_MAX} connections from this benchmark process (on the same machine as the \
         server): per service, the leader's CALL campaign (a renew: one committed write) and two followers' CALL campaign \
         (reads), each once a second at its own phase; the recipe: the same three nodes each running its tick. Latency \
         from each call's scheduled moment to its answer. A step passes with p99 < 50 ms, no error, and at least 97% of \
         the scheduled calls/s; services double per step, then the boundary is bisected. Lease {} s (its length does not \
         change what a call costs).",
        LEASE.as_secs()
    ));
    let js = |steps: &[Step]| -> Vec<Value> {
        steps
            .iter()
            .map(|s| json!({"services": s.services, "target_calls_per_s": s.target_rate, "achieved_calls_per_s": s.achieved_rate,
                            "p50_ms": s.p50_ms, "p99_ms": if s.p99_ms.is_finite() { json!(s.p99_ms) } else { Value::Null },
                            "errors": s.errors, "pass": s.pass}))
            .collect()
    };
    let value = json!({
        "library": {"sustained_services": lib_best.as_ref().map(|b| b.services), "steps": js(&lib_steps)},
        "library_no_reset": {"sustained_services": nr_best.as_ref().map(|b| b.services), "steps": js(&nr_steps)},
        "recipe": {"sustained_services": rec_best.as_ref().map(|b| b.services), "steps": js(&rec_steps)},
    });
    Ok((vec![t], value, ScaleResult { library: lib_best, library_no_reset: nr_best, recipe: rec_best }))
}
