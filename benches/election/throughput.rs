//! Closed-loop throughput of one call at 1, 8 and 32 connections: the follower's check and the
//! leader's renew, each against the classic recipe (and, for the check, the physical floor of a
//! primary-key read), contenders alternating in rounds so that machine noise hits all alike.

use std::time::{Duration, Instant};

use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use serde_json::{json, Value};

use crate::common::*;
use crate::report::{fmt_rate, Table};

pub const LEVELS: &[usize] = &[1, 8, 32];

/// The contender of the routines before issue 40 (common::PROPOSALS).
pub const BEFORE_40_LABEL: &str = "campaign (before issue 40)";
/// The contender of what the library sends now.
pub const HELD_LABEL: &str = "leader_election_campaign (tree, with held term)";

/// What one connection calls in a loop.
#[derive(Clone, Debug)]
pub enum Op {
    /// `procedures::campaign` (the library's typed call) on a dedicated connection.
    Campaign { service: String, node: String, lease: Duration },
    /// One tick of the recipe.
    Recipe { service: String, node: String, timeout: Duration },
    /// One primary-key read of the election row.
    Floor { service: String },
    /// The same `CALL campaign` as `Campaign`, sent as text (COM_QUERY) instead of a prepared
    /// statement: what a client tool sends.
    TextCall { service: String, node: String, lease: Duration },
    /// `procedures::campaign_holding`: `CALL leader_election_campaign(service, node, lease, held)`,
    /// what the library's elector sends (held: the term it holds, 0 when none).
    CampaignHolding { service: String, node: String, lease: Duration, held: u64 },
    /// One fenced write of the application (benches/election/fence.rs).
    Fence(crate::fence::FenceOp),
}

async fn run_op(conn: &mut Conn, op: &Op) -> Res<()> {
    match op {
        Op::Campaign { service, node, lease } => {
            mysqlleader::procedures::campaign(&mut *conn, service, node, *lease).await?;
        }
        Op::Recipe { service, node, timeout } => recipe_tick(conn, service, node, *timeout).await?,
        Op::Floor { service } => {
            let _: Option<mysql_async::Row> = conn.exec_first(FLOOR_SQL, (service.as_str(),)).await?;
        }
        Op::TextCall { service, node, lease } => {
            let sql = format!("CALL campaign('{}', '{}', {})", service.replace('\'', "''"), node.replace('\'', "''"), lease.as_millis());
            let _: Vec<mysql_async::Row> = conn.query(sql).await?;
        }
        Op::CampaignHolding { service, node, lease, held } => {
            mysqlleader::procedures::campaign_holding(&mut *conn, service, node, *lease, *held).await?;
        }
        Op::Fence(f) => crate::fence::fenced_write(conn, f).await?,
    }
    Ok(())
}

/// Every connection calls its op back to back for `dur`; returns the connections and the sample.
pub async fn closed_loop(conns: Vec<Conn>, ops: Vec<Op>, dur: Duration) -> Res<(Vec<Conn>, Sample)> {
    let start = Instant::now();
    let end = start + dur;
    let mut tasks = Vec::new();
    for (mut conn, op) in conns.into_iter().zip(ops) {
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(8192);
            let mut errors = 0u64;
            let mut first_error = None;
            while Instant::now() < end {
                let t = Instant::now();
                match run_op(&mut conn, &op).await {
                    Ok(()) => lat.push(elapsed_us(t)),
                    Err(e) => {
                        errors += 1;
                        first_error.get_or_insert(e.to_string());
                    }
                }
            }
            (conn, lat, errors, first_error)
        }));
    }
    let mut sample = Sample::default();
    let mut back = Vec::new();
    for t in tasks {
        let (conn, lat, errors, first_error) = t.await?;
        if let Some(e) = first_error {
            eprintln!("  (errors in a run: {errors}, first: {e})");
        }
        sample.calls += lat.len() as u64;
        sample.lat_us.extend(lat);
        sample.errors += errors;
        back.push(conn);
    }
    sample.secs = start.elapsed().as_secs_f64();
    Ok((back, sample))
}

/// A contender: a name, its connections (one set, the first `c` used at level `c`), and the op
/// of connection `i`.
pub struct Contender {
    pub name: String,
    pub conns: Vec<Conn>,
    pub op: Box<dyn Fn(usize) -> Op + Send>,
    /// Run before each of its runs (e.g. the recipe's leader refreshing its row).
    pub before: Option<Box<dyn Fn() -> Op + Send>>,
}

/// Per level and contender: the per-round rates and percentiles.
#[derive(Default, Clone)]
pub struct Rounds {
    pub rate: Vec<f64>,
    pub p50: Vec<f64>,
    pub p99: Vec<f64>,
    /// Failed calls over all rounds (a failing contender's rate would mean nothing).
    pub errors: u64,
}

/// Runs `rounds` rounds; in each round, every level, every contender (order rotated per round).
pub async fn measure(contenders: &mut [Contender], levels: &[usize], rounds: usize, dur: Duration) -> Res<Vec<Vec<Rounds>>> {
    let n = contenders.len();
    let mut out = vec![vec![Rounds::default(); n]; levels.len()];
    // Warm-up: prepare statements and fill caches.
    let top = levels.iter().copied().max().unwrap_or(1);
    for c in contenders.iter_mut() {
        run_one(c, top, Duration::from_millis(300)).await?;
    }
    for r in 0..rounds {
        for (li, &level) in levels.iter().enumerate() {
            for k in 0..n {
                let ci = (k + r) % n;
                let mut s = run_one(&mut contenders[ci], level, dur).await?;
                let slot = &mut out[li][ci];
                slot.rate.push(s.rate());
                slot.p50.push(s.pct_ms(50.0));
                slot.p99.push(s.pct_ms(99.0));
                slot.errors += s.errors;
            }
        }
    }
    Ok(out)
}

/// The per-round ratios of `a` to `b` (the two ran in the same rounds, side by side).
pub fn per_round(a: &Rounds, b: &Rounds) -> Vec<f64> {
    a.rate.iter().zip(&b.rate).map(|(x, y)| x / y).collect()
}

/// The spread of per-round ratios as `min–max`.
pub fn spread(v: &[f64]) -> String {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if v.is_empty() { "-".into() } else { format!("{lo:.2}–{hi:.2}") }
}

/// A section's table: per level and contender the median rate and percentiles, the median of
/// the per-round ratios to contender `base` and their spread; and the JSON rows. Also returns
/// (key, ratio) per level and contender: `{section}@{level}` for the first contender,
/// `{section}@{level}/{name}` for the others (not the base).
pub fn report(
    section: &str,
    title: &str,
    levels: &[usize],
    names: &[String],
    results: &[Vec<Rounds>],
    base: usize,
    base_word: &str,
) -> (Table, Vec<Value>, Vec<(String, f64)>) {
    let ratio_head = format!("ratio to {base_word}");
    let mut t = Table::new(title, &["conns", "contender", "calls/s", "p50 ms", "p99 ms", &ratio_head, "per round"]);
    let mut j = Vec::new();
    let mut ratios = Vec::new();
    for (li, &level) in levels.iter().enumerate() {
        let rows = &results[li];
        for (ci, r) in rows.iter().enumerate() {
            // The ratio is the median of the per-round ratios (the contenders ran side by side).
            let rounds = per_round(r, &rows[base]);
            let ratio = median(&rounds);
            let (rate, p50, p99) = (median(&r.rate), median(&r.p50), median(&r.p99));
            t.row(vec![
                level.to_string(),
                names[ci].clone(),
                fmt_rate(rate),
                format!("{p50:.3}"),
                format!("{p99:.3}"),
                if ci == base { "1".into() } else { format!("{ratio:.2}x") },
                if ci == base { "".into() } else { spread(&rounds) },
            ]);
            j.push(json!({
                "connections": level, "contender": names[ci], "calls_per_s": rate,
                "p50_ms": p50, "p99_ms": p99, format!("ratio_to_{}", base_word.replace(' ', "_")): ratio,
                "ratio_per_round": rounds, "errors": r.errors,
                "rounds": {"calls_per_s": r.rate, "p50_ms": r.p50, "p99_ms": r.p99},
            }));
            if ci == 0 {
                ratios.push((format!("{section}@{level}"), ratio));
            }
            if ci > 0 && ci != base {
                ratios.push((format!("{section}@{level}/{}", names[ci]), ratio));
            }
        }
    }
    let failed: Vec<String> = levels
        .iter()
        .enumerate()
        .flat_map(|(li, level)| results[li].iter().enumerate().filter(|(_, r)| r.errors > 0).map(move |(ci, r)| (level, ci, r.errors)))
        .map(|(level, ci, e)| format!("{} at {level}: {e}", names[ci]))
        .collect();
    if !failed.is_empty() {
        t.note(format!("**Calls failed** (their rates count only the calls that succeeded): {}.", failed.join("; ")));
    }
    (t, j, ratios)
}

/// Side by side, per level: each (new, old) pair of contenders as the median of their per-round
/// ratios and its spread (how issue 40 changed a hot path); the JSON rows too.
pub fn pairs_table(title: &str, levels: &[usize], names: &[String], results: &[Vec<Rounds>], pairs: &[(&str, &str)]) -> (Table, Vec<Value>) {
    let mut t = Table::new(title, &["conns", "contender", "against", "calls/s", "against calls/s", "ratio", "per round"]);
    let mut j = Vec::new();
    for (li, &level) in levels.iter().enumerate() {
        for (new, old) in pairs {
            let (Some(a), Some(b)) = (names.iter().position(|n| n == new), names.iter().position(|n| n == old)) else { continue };
            let (ra, rb) = (&results[li][a], &results[li][b]);
            let rounds = per_round(ra, rb);
            let ratio = median(&rounds);
            t.row(vec![
                level.to_string(),
                new.to_string(),
                old.to_string(),
                fmt_rate(median(&ra.rate)),
                fmt_rate(median(&rb.rate)),
                format!("{ratio:.2}x"),
                spread(&rounds),
            ]);
            j.push(json!({"connections": level, "contender": new, "against": old, "ratio": ratio, "ratio_per_round": rounds}));
        }
    }
    (t, j)
}

async fn run_one(c: &mut Contender, level: usize, dur: Duration) -> Res<Sample> {
    if let Some(before) = &c.before {
        let op = before();
        run_op(&mut c.conns[0], &op).await?;
    }
    let mut conns = std::mem::take(&mut c.conns);
    let rest = conns.split_off(level);
    let ops: Vec<Op> = (0..level).map(|i| (c.op)(i)).collect();
    let (mut back, sample) = closed_loop(conns, ops, dur).await?;
    back.extend(rest);
    c.conns = back;
    Ok(sample)
}

/// The follower check and the leader renew, with their tables and JSON.
pub async fn run(dbs: &Dbs, quick: bool, section: &str) -> Res<(Vec<Table>, Value, Vec<(String, f64)>)> {
    let (rounds, dur) = if quick { (2, Duration::from_millis(300)) } else { (4, Duration::from_secs(2)) };
    let max = *LEVELS.iter().max().unwrap();
    let lease = Duration::from_secs(10);
    let long = Duration::from_secs(600);
    let timeout = Duration::from_secs(10);
    let mut contenders = Vec::new();
    // The tree's campaign, then each other campaign in its scratch database (common::PROPOSALS).
    let mut dbs_for = vec![("campaign (tree)", dbs.url.clone())];
    for p in &dbs.proposals {
        dbs_for.push((p.label, p.url.clone()));
    }
    let follower = section == "follower";
    // Set-up: a leader holding a long lease (follower check) or a leader per connection (renew),
    // in the election tables and in the recipe's table.
    // The terms the tree's leaders hold (renew), for the library's call with its held term.
    let mut held_terms: Vec<u64> = Vec::new();
    for (db, (_, url)) in dbs_for.iter().enumerate() {
        let mut c = Conn::new(mysql_async::Opts::from_url(url)?).await?;
        if follower {
            mysqlleader::procedures::force_leader(&mut c, "follow", "leader", Duration::from_millis(86_400_000)).await?;
        } else {
            for i in 0..max {
                let won = mysqlleader::procedures::campaign(&mut c, &format!("renew-{i}"), &format!("leader-{i}"), long).await?;
                if db == 0 {
                    if !won.is_leader {
                        return Err(format!("renew set-up: leader-{i} did not win renew-{i}").into());
                    }
                    held_terms.push(won.term);
                }
            }
        }
        if follower {
            recipe_tick(&mut c, "follow", "leader", timeout).await?;
        } else {
            for i in 0..max {
                recipe_tick(&mut c, &format!("renew-{i}"), &format!("leader-{i}"), timeout).await?;
            }
        }
        c.disconnect().await?;
    }
    for (label, url) in &dbs_for {
        let conns = conns(url, max).await?;
        let op: Box<dyn Fn(usize) -> Op + Send> = if follower {
            Box::new(move |i| Op::Campaign { service: "follow".into(), node: format!("follower-{i}"), lease })
        } else {
            Box::new(move |i| Op::Campaign { service: format!("renew-{i}"), node: format!("leader-{i}"), lease: long })
        };
        contenders.push(Contender { name: label.to_string(), conns, op, before: None });
    }
    {
        // What the library's elector sends now: leader_election_campaign with the term it holds.
        let conns = conns(&dbs.url, max).await?;
        let op: Box<dyn Fn(usize) -> Op + Send> = if follower {
            Box::new(move |i| Op::CampaignHolding { service: "follow".into(), node: format!("follower-{i}"), lease, held: 0 })
        } else {
            let held_terms = held_terms.clone();
            Box::new(move |i| Op::CampaignHolding { service: format!("renew-{i}"), node: format!("leader-{i}"), lease: long, held: held_terms[i] })
        };
        contenders.push(Contender { name: HELD_LABEL.into(), conns, op, before: None });
    }
    {
        // The same calls by an account limited to these services: the per-service check's cost.
        // The seats exist by now (set up above), so the flush in limited_account gives them
        // their copies of access.
        let limited = limited_account(&dbs.url).await?;
        let conns = conns(&limited, max).await?;
        let op: Box<dyn Fn(usize) -> Op + Send> = if follower {
            Box::new(move |i| Op::Campaign { service: "follow".into(), node: format!("follower-{i}"), lease })
        } else {
            Box::new(move |i| Op::Campaign { service: format!("renew-{i}"), node: format!("leader-{i}"), lease: long })
        };
        contenders.push(Contender { name: "campaign (tree), limited account".into(), conns, op, before: None });
    }
    if follower {
        let conns = conns(&dbs.url, max).await?;
        contenders.push(Contender {
            name: "campaign (tree, text protocol)".into(),
            conns,
            op: Box::new(move |i| Op::TextCall { service: "follow".into(), node: format!("follower-{i}"), lease }),
            before: None,
        });
    }
    {
        let conns = conns(&dbs.url, max).await?;
        let (op, before): (Box<dyn Fn(usize) -> Op + Send>, Option<Box<dyn Fn() -> Op + Send>>) = if follower {
            (
                Box::new(move |i| Op::Recipe { service: "follow".into(), node: format!("follower-{i}"), timeout }),
                Some(Box::new(move || Op::Recipe { service: "follow".into(), node: "leader".into(), timeout })),
            )
        } else {
            (Box::new(move |i| Op::Recipe { service: format!("renew-{i}"), node: format!("leader-{i}"), timeout }), None)
        };
        contenders.push(Contender { name: "recipe (INSERT ... ON DUPLICATE KEY UPDATE)".into(), conns, op, before });
    }
    if follower {
        let conns = conns(&dbs.url, max).await?;
        contenders.push(Contender {
            name: "floor (one primary-key SELECT)".into(),
            conns,
            op: Box::new(|_| Op::Floor { service: "follow".into() }),
            before: None,
        });
    }
    let results = measure(&mut contenders, LEVELS, rounds, dur).await?;
    let names: Vec<String> = contenders.iter().map(|c| c.name.clone()).collect();
    for c in contenders.drain(..) {
        for conn in c.conns {
            let _ = conn.disconnect().await;
        }
    }

    let recipe = names.iter().position(|n| n.starts_with("recipe")).expect("the recipe runs");
    let title = if follower {
        "Follower check: CALL campaign by a non-leader while a lease is valid, vs the recipe's tick"
    } else {
        "Leader renew: the leader's CALL campaign vs the recipe's tick by its leader"
    };
    let (mut t, j, ratios) = report(section, title, LEVELS, &names, &results, recipe, "recipe");
    t.note(format!(
        "{rounds} rounds of {:.1} s per contender and level, alternating; medians of rounds; ratio = median of per-round ratios.",
        dur.as_secs_f64()
    ));
    t.note(
        "campaign (tree): the migrations of sql/ as applied (since V14 campaign runs in a READ COMMITTED transaction of its \
         own and decides access from the account's one row of leader_election_account before it reads the seat), called \
         with procedures::campaign on a dedicated connection. campaign (V6): V6's campaign, taken from \
         sql/V6__access_audit_bounded_waits.sql and installed over the same schema in a scratch database, called the same \
         way. campaign (V7): V7's campaign, taken from sql/V7__lean_hot_paths.sql and installed the same way; it reads \
         leader_election_access in every call. campaign (tree), no access check: V8's campaign (the copy of access on \
         the seat) from sql/V8__access_copy_on_the_seat.sql with its access check removed by text substitution (the \
         LOCATE guard of the leader's renew and the check after the read of the row; each asserted to occur exactly once, \
         the rest identical), installed the same way: a campaign with no access check and no transaction of its own. text protocol: the tree's procedure, the CALL \
         sent as text instead of a prepared statement. limited account: the tree's procedure called by an account with \
         EXECUTE on campaign alone and a per-service limit (leader_election_access: 'follow', 'renew-%', flushed into \
         leader_election_account with leader_election_flush_access()), so that every call matches the service against \
         the account's patterns. recipe: one INSERT ... ON DUPLICATE KEY UPDATE per call. floor: one primary-key SELECT \
         of the election row.",
    );
    t.note(format!(
        "leader_election_campaign (tree, with held term): what the library's elector sends (procedures::campaign_holding), \
         with the term the connection holds{}. campaign (before issue 40): campaign and assert_leader with the helpers \
         they call as they were at 5085e36^ (benches/election/before_40/), installed over the same schema in a scratch \
         database. per round: the lowest and highest of the per-round ratios.",
        if follower { " (0: a follower holds none)" } else { "" }
    ));
    let (p, pj) = pairs_table(
        &format!("Issue 40, {section}: the tree against the routines before it (ratio of calls/s, same rounds)"),
        LEVELS,
        &names,
        &results,
        &[("campaign (tree)", BEFORE_40_LABEL), (HELD_LABEL, BEFORE_40_LABEL), (HELD_LABEL, "campaign (tree)")],
    );
    let value = json!({"rounds": rounds, "seconds_per_run": dur.as_secs_f64(), "rows": j, "issue_40": pj});
    Ok((vec![t, p], value, ratios))
}
