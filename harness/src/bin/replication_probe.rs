//! The async-replication experiment of `docs/replication.md`: one program with four roles,
//! run by the `replication` program (harness/src/bin/replication.rs, which starts the servers,
//! injects the faults and writes `phases.log`).
//!
//! ```text
//! replication_probe candidate --node N --label L --url URL --log FILE
//!                             [--service S] [--lease-ms 2000] [--work-ms 100] [--sample-ms 250]
//! replication_probe router    --listen PORT --upstream-file FILE
//! replication_probe fence     --url URL --node N --term T [--service S]
//! replication_probe analyze   --dir DIR
//! ```
//!
//! * `candidate`: one [`Elector`] (lease 2 s by default, so renew every 400 ms) and a log of what
//!   it believes, one JSON object per line, `t` = wall-clock seconds (every process runs on one
//!   host, so their clocks agree): `boot`; `start`/`renew` with `term` and `deadline` (the local
//!   leadership deadline, converted to wall-clock seconds); `stop` with `reason`; `leader` (the
//!   leader seen changed); `sample` every `--sample-ms` (`leading`, `leader`, `term`,
//!   `valid_ms`, `err`); `write` for every fenced write. While it leads, every `--work-ms` it
//!   runs `BEGIN; SELECT @@server_id; CALL assert_leader(service, node, term); INSERT INTO
//!   app_writes ...; COMMIT`, and while it does not, every 500 ms the same with the last term it
//!   held (a stale leader that did not notice): `outcome` is `committed`, `fenced` (45001) or
//!   `error`, with the `server_id` that answered.
//! * `router`: the single routing point: a TCP forwarder on 127.0.0.1:PORT to the `host:port`
//!   written in FILE (`none`: refuse). FILE is read every 20 ms; when it changes, every open
//!   connection is closed, so clients reconnect to the new upstream.
//! * `fence`: one fenced write as above, rolled back when `assert_leader` let it through
//!   (`accepted`), so the probe changes no data; prints one JSON object.
//! * `analyze`: reads `DIR/cand-*.log` and `DIR/phases.log` and prints the report: a belief
//!   grid, the leadership intervals, every span in which two nodes believed they led, the time
//!   to a leader after the kill, and the fenced writes per server.
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mysql_async::prelude::Queryable;
use mysql_async::{Pool, TxOpts};
use mysqlleader::{procedures, Elector, Error, Event};
use serde_json::{json, Value};
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

fn usage(msg: &str) -> ! {
    eprintln!(
        "replication_probe: {msg}\nusage:\n  replication_probe candidate --node N --label L --url URL --log FILE [--service S] [--lease-ms MS] [--work-ms MS] [--sample-ms MS]\n  replication_probe router --listen PORT --upstream-file FILE\n  replication_probe fence --url URL --node N --term T [--service S]\n  replication_probe analyze --dir DIR"
    );
    std::process::exit(2);
}

/// `--flag value` pairs.
fn flags(args: &[String]) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let Some(name) = flag.strip_prefix("--") else { usage(&format!("unexpected argument {flag}")) };
        let value = it.next().unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        map.insert(name.to_string(), value.clone());
    }
    map
}

fn need<'a>(f: &'a BTreeMap<String, String>, name: &str) -> &'a str {
    f.get(name).map(String::as_str).unwrap_or_else(|| usage(&format!("--{name} is required")))
}

fn num(f: &BTreeMap<String, String>, name: &str, default: u64) -> u64 {
    f.get(name).map_or(default, |v| v.parse().unwrap_or_else(|_| usage(&format!("--{name}: not a number: {v}"))))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((role, rest)) = args.split_first() else { usage("a role is required") };
    let f = flags(rest);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    match role.as_str() {
        "candidate" => rt.block_on(candidate(f)),
        "router" => rt.block_on(router(f)),
        "fence" => rt.block_on(fence_once(f)),
        "analyze" => analyze(Path::new(need(&f, "dir"))),
        other => usage(&format!("unknown role {other}")),
    }
}

/// Wall-clock seconds since the epoch.
fn wall_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// A monotonic instant as wall-clock seconds (to within microseconds).
fn wall_of(i: Instant) -> f64 {
    let (now_i, now_w) = (Instant::now(), wall_now());
    if i >= now_i { now_w + (i - now_i).as_secs_f64() } else { now_w - (now_i - i).as_secs_f64() }
}

// ---------------------------------------------------------------------------------------------
// candidate

struct Log {
    file: std::fs::File,
    node: String,
}

impl Log {
    fn write(&self, ev: &str, fields: Value) {
        let mut obj = serde_json::Map::new();
        obj.insert("t".into(), json!(wall_now()));
        obj.insert("node".into(), json!(self.node));
        obj.insert("ev".into(), json!(ev));
        if let Value::Object(m) = fields {
            obj.extend(m);
        }
        let mut line = Value::Object(obj).to_string();
        line.push('\n');
        // One write(2) per line on an O_APPEND file: a SIGKILL loses no half line.
        (&self.file).write_all(line.as_bytes()).expect("write the candidate log");
    }
}

fn short(e: &Error) -> String {
    let s = e.to_string();
    if s.chars().count() > 100 { s.chars().take(100).collect::<String>() + "..." } else { s }
}

/// How one fenced write ended: the outcome, the server that answered, an error text. With
/// `commit` false the write is rolled back after it succeeded (`accepted`): a probe that leaves
/// the data alone.
async fn fenced_write(pool: &Pool, svc: &str, node: &str, term: u64, commit: bool) -> (&'static str, Option<u32>, Option<String>) {
    let mut conn = match pool.get_conn().await {
        Ok(c) => c,
        Err(e) => return ("error", None, Some(format!("connect: {e}"))),
    };
    let mut tx = match conn.start_transaction(TxOpts::default()).await {
        Ok(tx) => tx,
        Err(e) => return ("error", None, Some(format!("begin: {e}"))),
    };
    let server_id: Option<u32> = match tx.query_first("SELECT @@server_id").await {
        Ok(v) => v,
        Err(e) => return ("error", None, Some(format!("server_id: {e}"))),
    };
    match procedures::assert_leader(&mut tx, svc, node, term).await {
        Ok(_) => {}
        Err(Error::NotLeader { .. }) => return ("fenced", server_id, None),
        Err(e) => return ("error", server_id, Some(format!("assert_leader: {}", short(&e)))),
    }
    let insert = "INSERT INTO app_writes (node_id, term, server_id, written_at) VALUES (?, ?, @@server_id, UTC_TIMESTAMP(6))";
    if let Err(e) = tx.exec_drop(insert, (node, term)).await {
        return ("error", server_id, Some(format!("insert: {e}")));
    }
    if !commit {
        return match tx.rollback().await {
            Ok(()) => ("accepted", server_id, None),
            Err(e) => ("error", server_id, Some(format!("rollback: {e}"))),
        };
    }
    match tx.commit().await {
        Ok(()) => ("committed", server_id, None),
        Err(e) => ("error", server_id, Some(format!("commit (outcome unknown): {e}"))),
    }
}

async fn candidate(f: BTreeMap<String, String>) {
    let node = need(&f, "node").to_string();
    let label = need(&f, "label").to_string();
    let url = need(&f, "url").to_string();
    let svc = f.get("service").cloned().unwrap_or_else(|| "replicated-svc".into());
    let lease = Duration::from_millis(num(&f, "lease-ms", 2000));
    let work = Duration::from_millis(num(&f, "work-ms", 100));
    let sample = Duration::from_millis(num(&f, "sample-ms", 250));
    let file = std::fs::OpenOptions::new().create(true).append(true).open(need(&f, "log")).expect("open the log");
    let log = std::rc::Rc::new(Log { file, node: node.clone() });
    log.write("boot", json!({"label": label, "lease_ms": lease.as_millis() as u64, "pid": std::process::id()}));

    let pool = mysqlleader::pool_from_url(&url).unwrap_or_else(|e| usage(&format!("--url: {e}")));
    let config = Elector::builder(pool.clone(), svc.clone())
        .node_id(node.clone())
        .lease(lease)
        .resign_on_drop(false)
        .config()
        .unwrap_or_else(|e| usage(&format!("elector: {e}")));
    let (elector, mut events) = Elector::start_subscribed(vec![pool.clone()], config).unwrap_or_else(|e| usage(&format!("elector: {e}")));
    let elector = std::rc::Rc::new(elector);

    // 1. Events and every new deadline, in the order the elector published them.
    let watcher = {
        let (log, elector) = (log.clone(), elector.clone());
        async move {
            let mut state = elector.watch();
            let (mut leading_term, mut last_deadline) = (None::<u64>, None::<Instant>);
            loop {
                let mut batch = Vec::new();
                tokio::select! {
                    biased;
                    ev = events.recv() => match ev {
                        Ok(e) => batch.push(e),
                        Err(RecvError::Lagged(n)) => log.write("lagged", json!({"missed": n})),
                        Err(RecvError::Closed) => return,
                    },
                    changed = state.changed() => if changed.is_err() { return },
                }
                while let Ok(e) = events.try_recv() {
                    batch.push(e);
                }
                for e in batch {
                    match e {
                        Event::StartedLeading { term, valid_until } => {
                            leading_term = Some(term);
                            last_deadline = Some(valid_until);
                            log.write("start", json!({"term": term, "deadline": wall_of(valid_until)}));
                        }
                        Event::StoppedLeading { term, reason } => {
                            leading_term = None;
                            let reason = reason.name();
                            log.write("stop", json!({"term": term, "reason": reason}));
                        }
                        Event::LeaderChanged { leader_id, term } => {
                            log.write("leader", json!({"leader": leader_id, "term": term}));
                        }
                        Event::ElectorStopped { .. } | Event::Failing { .. } => {}
                    }
                }
                let s = state.borrow_and_update().clone();
                if let (true, Some(d), Some(t)) = (s.leading, s.valid_until, leading_term) {
                    if t == s.term && last_deadline != Some(d) {
                        last_deadline = Some(d);
                        log.write("renew", json!({"term": t, "deadline": wall_of(d)}));
                    }
                }
            }
        }
    };

    // 2. The leader's fenced writes, and a stale leader's (the last term held) every 500 ms.
    let worker = {
        let (log, elector, pool, svc, node) = (log.clone(), elector.clone(), pool.clone(), svc.clone(), node.clone());
        async move {
            let mut last_term = None::<u64>;
            let mut last_rogue = Instant::now();
            loop {
                tokio::time::sleep(work).await;
                let now = Instant::now();
                let s = elector.state();
                let (term, rogue) = if s.leads_at(now) {
                    last_term = Some(s.term);
                    (s.term, false)
                } else {
                    match last_term {
                        Some(t) if now - last_rogue >= Duration::from_millis(500) => {
                            last_rogue = now;
                            (t, true)
                        }
                        _ => continue,
                    }
                };
                let (outcome, server_id, err) = tokio::time::timeout(lease, fenced_write(&pool, &svc, &node, term, true))
                    .await
                    .unwrap_or(("error", None, Some("timeout".into())));
                log.write("write", json!({"term": term, "rogue": rogue, "outcome": outcome, "server_id": server_id, "err": err}));
            }
        }
    };

    // 3. What it believes, every `sample`.
    let sampler = {
        let (log, elector) = (log.clone(), elector.clone());
        async move {
            let mut tick = tokio::time::interval(sample);
            loop {
                tick.tick().await;
                let s = elector.state();
                let now = Instant::now();
                let valid_ms = match s.valid_until {
                    Some(d) if s.leads_at(now) => (d - now).as_millis() as u64,
                    _ => 0,
                };
                log.write(
                    "sample",
                    json!({"leading": s.leads_at(now), "leader": s.leader_id, "term": s.term, "valid_ms": valid_ms,
                           "err": s.last_error.as_ref().map(short)}),
                );
            }
        }
    };

    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = watcher => {}
        _ = worker => {}
        _ = sampler => {}
        _ = sigterm.recv() => {}
    }
    log.write("exit", json!({}));
    std::process::exit(0);
}

// ---------------------------------------------------------------------------------------------
// router

fn read_upstream(file: &Path) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let text = text.trim();
    (!text.is_empty() && text != "none").then(|| text.to_string())
}

async fn router(f: BTreeMap<String, String>) {
    let port = num(&f, "listen", 0);
    let file = PathBuf::from(need(&f, "upstream-file"));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port as u16))
        .await
        .unwrap_or_else(|e| usage(&format!("cannot listen on 127.0.0.1:{port}: {e}")));
    let (tx, rx) = tokio::sync::watch::channel(read_upstream(&file));
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let now = read_upstream(&file);
            if *tx.borrow() != now {
                // Every open connection closes (they watch this channel), new ones go to `now`.
                tx.send_replace(now);
            }
        }
    });
    loop {
        let Ok((mut inbound, _)) = listener.accept().await else { continue };
        let mut rx = rx.clone();
        let upstream = rx.borrow_and_update().clone();
        tokio::spawn(async move {
            let Some(addr) = upstream else { return };
            let _ = inbound.set_nodelay(true);
            let connect = tokio::time::timeout(Duration::from_secs(1), tokio::net::TcpStream::connect(addr.as_str()));
            let Ok(Ok(mut outbound)) = connect.await else { return };
            let _ = outbound.set_nodelay(true);
            tokio::select! {
                _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                _ = rx.changed() => {}
            }
        });
    }
}

// ---------------------------------------------------------------------------------------------
// fence

async fn fence_once(f: BTreeMap<String, String>) {
    let pool = mysqlleader::pool_from_url(need(&f, "url")).unwrap_or_else(|e| usage(&format!("--url: {e}")));
    let svc = f.get("service").cloned().unwrap_or_else(|| "replicated-svc".into());
    let node = need(&f, "node");
    let term = num(&f, "term", 0);
    let (outcome, server_id, err) = fenced_write(&pool, &svc, node, term, false).await;
    println!("{}", json!({"node": node, "term": term, "server_id": server_id, "outcome": outcome, "err": err}));
    let _ = pool.disconnect().await;
}

// ---------------------------------------------------------------------------------------------
// analyze

/// One node's leadership of one term, as it believed it: from its `start` until the earlier of
/// its `stop` and the last deadline it had.
#[derive(Debug, Clone)]
struct Interval {
    node: String,
    term: u64,
    from: f64,
    to: f64,
}

struct Run {
    phases: Vec<(f64, String, String)>,
    /// node -> (label, events in order)
    nodes: BTreeMap<String, (String, Vec<Value>)>,
}

fn load(dir: &Path) -> Run {
    let mut phases = Vec::new();
    if let Ok(text) = std::fs::read_to_string(dir.join("phases.log")) {
        for line in text.lines() {
            let mut parts = line.splitn(3, ' ');
            let (Some(t), Some(name)) = (parts.next(), parts.next()) else { continue };
            let Ok(t) = t.parse::<f64>() else { continue };
            phases.push((t, name.to_string(), parts.next().unwrap_or("").to_string()));
        }
    }
    let mut nodes = BTreeMap::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| usage(&format!("cannot read {}: {e}", dir.display())))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("cand-") && n.ends_with(".log")))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
            let node = v["node"].as_str().unwrap_or("?").to_string();
            let entry = nodes.entry(node).or_insert_with(|| (String::new(), Vec::new()));
            if v["ev"] == "boot" {
                entry.0 = v["label"].as_str().unwrap_or("").to_string();
            }
            entry.1.push(v);
        }
    }
    Run { phases, nodes }
}

fn intervals(run: &Run) -> Vec<Interval> {
    let mut out = Vec::new();
    for (node, (_, events)) in &run.nodes {
        let mut open: Option<(u64, f64, f64)> = None; // term, from, deadline
        let mut last_t = 0.0;
        for e in events {
            let t = e["t"].as_f64().unwrap_or(0.0);
            last_t = t;
            let close = |open: &mut Option<(u64, f64, f64)>, at: f64, out: &mut Vec<Interval>| {
                if let Some((term, from, deadline)) = open.take() {
                    out.push(Interval { node: node.clone(), term, from, to: at.min(deadline) });
                }
            };
            match e["ev"].as_str() {
                Some("start") => {
                    close(&mut open, t, &mut out);
                    open = Some((e["term"].as_u64().unwrap_or(0), t, e["deadline"].as_f64().unwrap_or(t)));
                }
                Some("renew") => {
                    let d = e["deadline"].as_f64().unwrap_or(t);
                    match &mut open {
                        Some((term, _, deadline)) if *term == e["term"].as_u64().unwrap_or(0) => *deadline = deadline.max(d),
                        _ => {
                            close(&mut open, t, &mut out);
                            open = Some((e["term"].as_u64().unwrap_or(0), t, d));
                        }
                    }
                }
                Some("stop") | Some("exit") => close(&mut open, t, &mut out),
                _ => {}
            }
        }
        if let Some((term, from, deadline)) = open {
            out.push(Interval { node: node.clone(), term, from, to: last_t.min(deadline) });
        }
    }
    out.retain(|i| i.to > i.from);
    out.sort_by(|a, b| a.from.total_cmp(&b.from));
    out
}

/// A span in which two or more nodes believed they led: (from, to, [(node, term)]).
type Overlap = (f64, f64, Vec<(String, u64)>);

/// Every span in which two or more nodes believed they led.
fn overlaps(ivs: &[Interval]) -> Vec<Overlap> {
    let mut points: Vec<f64> = ivs.iter().flat_map(|i| [i.from, i.to]).collect();
    points.sort_by(f64::total_cmp);
    points.dedup();
    let mut out: Vec<Overlap> = Vec::new();
    for w in points.windows(2) {
        let (a, b) = (w[0], w[1]);
        let mid = (a + b) / 2.0;
        let mut who: Vec<(String, u64)> =
            ivs.iter().filter(|i| i.from <= mid && mid < i.to).map(|i| (i.node.clone(), i.term)).collect();
        who.sort();
        who.dedup();
        let distinct: BTreeSet<&String> = who.iter().map(|(n, _)| n).collect();
        if distinct.len() < 2 {
            continue;
        }
        match out.last_mut() {
            Some(last) if (last.1 - a).abs() < 1e-9 && last.2 == who => last.1 = b,
            _ => out.push((a, b, who)),
        }
    }
    out
}

/// Seconds in [from, to) that no interval covers, as spans.
fn gaps(ivs: &[Interval], from: f64, to: f64) -> Vec<(f64, f64)> {
    let mut covered: Vec<(f64, f64)> = ivs.iter().filter(|i| i.to > from && i.from < to).map(|i| (i.from.max(from), i.to.min(to))).collect();
    covered.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = Vec::new();
    let mut at = from;
    for (a, b) in covered {
        if a > at {
            out.push((at, a));
        }
        at = at.max(b);
    }
    if at < to {
        out.push((at, to));
    }
    out
}

fn phase(run: &Run, name: &str) -> Option<f64> {
    run.phases.iter().find(|(_, n, _)| n == name).map(|(t, _, _)| *t)
}

fn phase_text<'a>(run: &'a Run, name: &str) -> Option<&'a str> {
    run.phases.iter().find(|(_, n, _)| n == name).map(|(_, _, s)| s.as_str())
}

/// `key=value` out of a phase's text.
fn field(text: &str, key: &str) -> Option<String> {
    text.split_whitespace().find_map(|kv| kv.strip_prefix(key).and_then(|r| r.strip_prefix('=')).map(str::to_string))
}

fn analyze(dir: &Path) {
    let run = load(dir);
    if run.nodes.is_empty() {
        usage(&format!("no cand-*.log in {}", dir.display()));
    }
    let t0 = phase(&run, "kill").unwrap_or_else(|| run.phases.first().map_or(0.0, |p| p.0));
    let end = phase(&run, "end").unwrap_or_else(|| {
        run.nodes.values().flat_map(|(_, e)| e.iter().filter_map(|v| v["t"].as_f64())).fold(t0, f64::max)
    });
    let rel = |t: f64| t - t0;
    let ivs = intervals(&run);

    println!("== phases (seconds from the kill of the primary)");
    for (t, name, text) in &run.phases {
        println!("  {:>7.2}  {name} {text}", rel(*t));
    }

    println!("\n== candidates");
    for (node, (label, events)) in &run.nodes {
        println!("  {node}: {label}");
        // The errors its elector reported (from the samples), most frequent first.
        let mut errors: BTreeMap<&str, usize> = BTreeMap::new();
        for e in events.iter().filter(|e| e["ev"] == "sample") {
            if let Some(err) = e["err"].as_str() {
                *errors.entry(err).or_default() += 1;
            }
        }
        let mut errors: Vec<_> = errors.into_iter().collect();
        errors.sort_by_key(|e| std::cmp::Reverse(e.1));
        for (err, n) in errors.iter().take(3) {
            println!("      last call failed ({n} samples): {err}");
        }
    }

    // 1. What each node believed, every 0.5 s: LEAD/t (leading term t, with ms left), or the
    //    leader/term it follows, or ERR when its last call failed.
    println!("\n== beliefs every 0.5 s  (LEAD tN +ms: leads term N, ms left on its local deadline; ->X/N: follows X at term N; ! : last call failed)");
    let names: Vec<&String> = run.nodes.keys().collect();
    print!("  {:>7}", "t");
    for n in &names {
        print!("  {:<22}", n);
    }
    println!();
    let first = run.nodes.values().filter_map(|(_, e)| e.first().and_then(|v| v["t"].as_f64())).fold(f64::MAX, f64::min);
    let mut t = first.max(t0 - 3.0);
    while t <= end + 1e-9 {
        print!("  {:>7.1}", rel(t));
        for n in &names {
            let events = &run.nodes[*n].1;
            let s = events.iter().rev().find(|v| v["ev"] == "sample" && v["t"].as_f64().is_some_and(|x| x <= t));
            let cell = match s {
                None => "-".to_string(),
                Some(s) if s["leading"] == true => format!("LEAD t{} +{}", s["term"], s["valid_ms"]),
                Some(s) => {
                    let leader = s["leader"].as_str().unwrap_or("none");
                    let err = if s["err"].is_null() { "" } else { " !" };
                    format!("->{leader}/{}{err}", s["term"])
                }
            };
            print!("  {:<22}", cell);
        }
        println!();
        t += 0.5;
    }

    println!("\n== leadership intervals (as each node believed: start .. min(stop, last local deadline))");
    for i in &ivs {
        println!("  {:<4} term {:<3} {:>7.2} .. {:>7.2}  ({:.2} s)", i.node, i.term, rel(i.from), rel(i.to), i.to - i.from);
    }

    // 2. Two nodes believing they lead at once.
    let ovs = overlaps(&ivs);
    let total = ovs.iter().fold(0.0, |sum, (a, b, _)| sum + (b - a));
    println!("\n== two or more nodes believing they lead at the same instant");
    if ovs.is_empty() {
        println!("  none");
    }
    for (a, b, who) in &ovs {
        let who: Vec<String> = who.iter().map(|(n, t)| format!("{n} (term {t})")).collect();
        println!("  {:>7.2} .. {:>7.2}  {:.3} s  {}", rel(*a), rel(*b), b - a, who.join(" + "));
    }
    let after_kill = ovs.iter().fold(0.0, |sum, (a, b, _)| sum + (b - a.max(t0)).max(0.0));
    println!("  total: {total:.3} s, of which after the kill of the primary: {after_kill:.3} s");

    // 3. After the kill: the leader then, the first leadership on the promoted replica, and the
    //    spans without a leader.
    if phase(&run, "kill").is_some() {
        println!("\n== after the kill of the primary");
        // The leader at the kill, with the local deadline its last renew before the kill set.
        let at_kill: Vec<(String, u64, f64)> = run
            .nodes
            .iter()
            .filter_map(|(node, (_, events))| {
                let mut current: Option<(u64, f64)> = None;
                for e in events.iter().take_while(|e| e["t"].as_f64().unwrap_or(0.0) <= t0) {
                    match e["ev"].as_str() {
                        Some("start") | Some("renew") => {
                            current = Some((e["term"].as_u64().unwrap_or(0), e["deadline"].as_f64().unwrap_or(0.0)))
                        }
                        Some("stop") | Some("exit") => current = None,
                        _ => {}
                    }
                }
                current.filter(|(_, d)| *d > t0).map(|(term, d)| (node.clone(), term, d))
            })
            .collect();
        for (node, term, d) in &at_kill {
            println!("  leader at the kill: {node} term {term}, local deadline {:+.3} s (set by its last renew before the kill)", rel(*d));
        }
        let switch = phase(&run, "switch");
        if let Some(sw) = switch {
            // The first successful campaign through the router after the switch.
            let mut first: Option<(f64, String, u64, &str)> = None;
            for (node, (label, events)) in &run.nodes {
                if !label.starts_with("router") {
                    continue;
                }
                let hit = events.iter().find(|e| {
                    e["t"].as_f64().is_some_and(|t| t >= sw) && (e["ev"] == "start" || e["ev"] == "renew")
                });
                if let Some(e) = hit {
                    let et = e["t"].as_f64().unwrap_or(0.0);
                    let term = e["term"].as_u64().unwrap_or(0);
                    if first.as_ref().is_none_or(|f| et < f.0) {
                        // The replica's own copy of the seat tells a renew of the lease it holds
                        // from an acquisition that happens to reach the same term number.
                        let replica = phase_text(&run, "replica_lease").unwrap_or("");
                        let held = field(replica, "leader").as_deref() == Some(node.as_str())
                            && field(replica, "term") == Some(term.to_string());
                        let how = if e["ev"] == "start" {
                            "a new term"
                        } else if held {
                            "renewed the lease the replica held for it"
                        } else {
                            "took the seat on the replica at a term number it already held on the old primary"
                        };
                        first = Some((et, node.clone(), term, how));
                    }
                }
            }
            match first {
                Some((et, node, term, how)) => println!(
                    "  first leader on the promoted replica: {node} term {term} ({how}) at {:+.3} s, {:.3} s after the router switched",
                    rel(et),
                    et - sw
                ),
                None => println!("  no leader on the promoted replica"),
            }
        }
        for (a, b) in gaps(&ivs, t0, end) {
            println!("  no node believed it led: {:+.3} .. {:+.3} s ({:.3} s)", rel(a), rel(b), b - a);
        }
        // 4. The replica's copy of the seat at promotion against the old leader's deadline:
        //    another node may take the seat there from the later of that lease's end and the
        //    moment the replica is reachable; the old leader counts itself leader until its
        //    deadline. The difference is the exposure that replication lag creates.
        if let Some(text) = phase_text(&run, "replica_lease") {
            let expires = field(text, "expires").and_then(|s| s.parse::<f64>().ok());
            let reachable = switch.unwrap_or(t0);
            if let Some(exp) = expires {
                println!(
                    "  the promoted replica's copy of the seat: {text}; that lease ends {:+.3} s; the router reached the replica from {:+.3} s",
                    rel(exp),
                    rel(reachable)
                );
                for (node, _, d) in &at_kill {
                    let open = exp.max(reachable);
                    println!(
                        "  on the replica another node could take the seat from {:+.3} s; {node} counted itself leader until {:+.3} s: \
                         exposure {:.3} s (the replica's lease ends {:.3} s {} that deadline)",
                        rel(open),
                        rel(*d),
                        (d - open).max(0.0),
                        (exp - d).abs(),
                        if exp < *d { "before" } else { "after" }
                    );
                }
            }
        }
    }

    // 5. Fenced writes: where they committed, and which were refused.
    println!("\n== fenced writes (BEGIN; assert_leader(node, term); INSERT; COMMIT) by node, term, server, outcome");
    // (node, term, server, stale, outcome) -> (count, first, last)
    type WriteKey = (String, u64, String, bool, String);
    let mut counts: BTreeMap<WriteKey, (u64, f64, f64)> = BTreeMap::new();
    for (node, (_, events)) in &run.nodes {
        for e in events.iter().filter(|e| e["ev"] == "write") {
            let server = e["server_id"].as_u64().map_or("?".to_string(), |s| s.to_string());
            let key = (node.clone(), e["term"].as_u64().unwrap_or(0), server, e["rogue"] == true, e["outcome"].as_str().unwrap_or("?").to_string());
            let et = e["t"].as_f64().unwrap_or(0.0);
            let c = counts.entry(key).or_insert((0, et, et));
            c.0 += 1;
            c.2 = et;
        }
    }
    println!("  {:<4} {:>4} {:>6} {:<22} {:<10} {:>5}  {:>7} .. {:>7}", "node", "term", "server", "as", "outcome", "count", "first", "last");
    for ((node, term, server, rogue, outcome), (n, a, b)) in &counts {
        let who = if *rogue { "stale (not leading)" } else { "leader (believed)" };
        println!("  {node:<4} {term:>4} {server:>6} {who:<22} {outcome:<10} {n:>5}  {:>7.2} .. {:>7.2}", rel(*a), rel(*b));
    }
}
