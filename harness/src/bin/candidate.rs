//! One candidate of the fault harness (issue 8): an [`Elector`] per service, and a log of
//! everything it observes, for the checker.
//!
//! ```text
//! candidate --node N --service S [--service S2 ...] --url URL [--url URL2 ...] --log FILE
//!           [--lease-ms 2000] [--renew-ms L/5] [--retry-ms L/10] [--timeout-ms ...]
//!           [--work-ms 50] [--rogue-ms 500] [--heartbeat-ms 200] [--idle-tx-timeout-s S]
//!           [--session]
//! ```
//!
//! * With `--session` the electors of all `--service`s come from one [`mysqlleader::Session`]
//!   (one kept connection, one batched renew; one `--url` only: sessions use one server).
//! * The first `--url` is the server the elector uses; further ones are its fallbacks (a
//!   cluster). The harness gives each candidate URLs of proxies of its own.
//! * The log (appended, one JSON object per line, one `write` each, so a SIGKILL loses nothing
//!   that was written) has `t` = `CLOCK_MONOTONIC` in ns, `node`, `pid`, `ev`, and:
//!   - `boot`: the process started (a restart after SIGKILL is a new `pid`);
//!   - `start`: `svc`, `term`, `deadline` — this node leads `term` until `deadline` (CLOCK_MONOTONIC ns);
//!   - `renew`: `svc`, `term`, `deadline` — a renew moved the deadline;
//!   - `stop`: `svc`, `term`, `reason` — the elector stopped leading;
//!   - `leader`: `svc`, `leader`, `term` — the leader this node saw changed;
//!   - `hb`: `svc`, `leading`, `term` — a heartbeat, every `--heartbeat-ms`;
//!   - `commit`: `svc`, `term`, `value`, `rogue` — a fenced increment committed (`value` is the
//!     counter after it);
//!   - `fenced`: `svc`, `term`, `rogue` — `assert_leader` refused the increment (45001);
//!   - `tx_error`: `svc`, `term`, `rogue`, `stage`, `error` — the increment failed otherwise
//!     (`stage` = `commit` means its outcome is unknown).
//! * While it leads a service (by [`Elector::state`] and its deadline at that moment), every
//!   `--work-ms` it runs `BEGIN; CALL assert_leader(service, node, term); UPDATE faults_counter;
//!   INSERT INTO faults_fencing; COMMIT`. Before each one it makes sure the deadline it acts
//!   under is in the log, so no action happens under a deadline the checker has not seen.
//! * While it does not lead, every `--rogue-ms` it tries the same increment with the last term
//!   it held (a zombie leader that did not notice it lost the seat): `assert_leader` must
//!   refuse every one of these, unless the database still holds this node's lease at that term.
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysql_async::{Pool, TxOpts};
use mysqlleader::{procedures, Elector, Error, Event, State};
use serde_json::{json, Value};
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use mysqlleader_harness as faults;

use faults::clock::{mono_ns, Anchor};

struct Args {
    node: String,
    services: Vec<String>,
    urls: Vec<String>,
    log: String,
    lease_ms: u64,
    renew_ms: Option<u64>,
    retry_ms: Option<u64>,
    timeout_ms: Option<u64>,
    work_ms: u64,
    rogue_ms: u64,
    heartbeat_ms: u64,
    idle_tx_timeout_s: Option<u64>,
    session: bool,
}

fn parse_args() -> Args {
    let mut a = Args {
        node: String::new(),
        services: Vec::new(),
        urls: Vec::new(),
        log: String::new(),
        lease_ms: 2000,
        renew_ms: None,
        retry_ms: None,
        timeout_ms: None,
        work_ms: 50,
        rogue_ms: 500,
        heartbeat_ms: 200,
        idle_tx_timeout_s: None,
        session: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--session" {
            a.session = true;
            continue;
        }
        let mut value = || it.next().unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        let num = |v: String| v.parse::<u64>().unwrap_or_else(|_| usage(&format!("not a number: {v}")));
        match flag.as_str() {
            "--node" => a.node = value(),
            "--service" => a.services.push(value()),
            "--url" => a.urls.push(value()),
            "--log" => a.log = value(),
            "--lease-ms" => a.lease_ms = num(value()),
            "--renew-ms" => a.renew_ms = Some(num(value())),
            "--retry-ms" => a.retry_ms = Some(num(value())),
            "--timeout-ms" => a.timeout_ms = Some(num(value())),
            "--work-ms" => a.work_ms = num(value()),
            "--rogue-ms" => a.rogue_ms = num(value()),
            "--heartbeat-ms" => a.heartbeat_ms = num(value()),
            "--idle-tx-timeout-s" => a.idle_tx_timeout_s = Some(num(value())),
            other => usage(&format!("unknown argument {other}")),
        }
    }
    if a.node.is_empty() || a.services.is_empty() || a.urls.is_empty() || a.log.is_empty() {
        usage("--node, --service, --url and --log are required");
    }
    if a.session && a.urls.len() > 1 {
        usage("--session uses one server: give one --url");
    }
    a
}

fn usage(msg: &str) -> ! {
    eprintln!("candidate: {msg}\nusage: candidate --node N --service S [--service S2] --url URL [--url URL2] --log FILE [--lease-ms MS] [--renew-ms MS] [--retry-ms MS] [--timeout-ms MS] [--work-ms MS] [--rogue-ms MS] [--heartbeat-ms MS] [--idle-tx-timeout-s S] [--session]");
    std::process::exit(2);
}

/// What this process has written to its log for one service.
#[derive(Default, Clone)]
struct Logged {
    /// The term of the last `start`, and whether it has not been stopped since.
    term: u64,
    leading: bool,
    deadline: i64,
}

/// The log file, and what has been written to it.
struct Log {
    file: std::fs::File,
    anchor: Anchor,
    node: String,
    pid: u32,
    logged: Mutex<HashMap<String, Logged>>,
}

impl Log {
    fn write(&self, ev: &str, fields: Value) {
        let mut obj = serde_json::Map::new();
        obj.insert("t".into(), json!(mono_ns()));
        obj.insert("node".into(), json!(self.node));
        obj.insert("pid".into(), json!(self.pid));
        obj.insert("ev".into(), json!(ev));
        if let Value::Object(m) = fields {
            obj.extend(m);
        }
        let mut line = Value::Object(obj).to_string();
        line.push('\n');
        // One write(2) of a whole line on an O_APPEND file: in the kernel at once, whole.
        (&self.file).write_all(line.as_bytes()).expect("write the candidate log");
    }

    fn deadline_ns(&self, valid_until: tokio::time::Instant) -> i64 {
        self.anchor.mono_of(valid_until.into_std())
    }

    fn on_event(&self, svc: &str, event: Event) {
        let mut logged = self.logged.lock().unwrap();
        let entry = logged.entry(svc.to_string()).or_default();
        match event {
            Event::StartedLeading { term, valid_until } => {
                let deadline = self.deadline_ns(valid_until);
                *entry = Logged { term, leading: true, deadline };
                self.write("start", json!({"svc": svc, "term": term, "deadline": deadline}));
            }
            Event::StoppedLeading { term, reason } => {
                entry.leading = false;
                let reason = reason.name();
                self.write("stop", json!({"svc": svc, "term": term, "reason": reason}));
            }
            Event::LeaderChanged { leader_id, term } => {
                self.write("leader", json!({"svc": svc, "leader": leader_id, "term": term}));
            }
            Event::ElectorStopped { error } => {
                self.write("elector_stopped", json!({"svc": svc, "error": error.map(|e| e.to_string())}));
            }
            Event::Failing { error } => {
                self.write("failing", json!({"svc": svc, "error": error.to_string()}));
            }
        }
    }

    /// Logs a renew when `state` leads the logged term under a deadline not logged yet. Returns
    /// whether `state`'s leadership (term and deadline) is in the log now.
    fn note_state(&self, svc: &str, state: &State) -> bool {
        let mut logged = self.logged.lock().unwrap();
        let entry = logged.entry(svc.to_string()).or_default();
        let (true, Some(valid_until)) = (state.leading, state.valid_until) else { return false };
        if !entry.leading || entry.term != state.term {
            // The `start` of this term is not in the log yet (its event is still queued).
            return false;
        }
        let deadline = self.deadline_ns(valid_until);
        if deadline != entry.deadline {
            entry.deadline = deadline;
            self.write("renew", json!({"svc": svc, "term": state.term, "deadline": deadline}));
        }
        true
    }

    /// The last term this process logged leading for `svc`, if any.
    fn last_term(&self, svc: &str) -> Option<u64> {
        self.logged.lock().unwrap().get(svc).map(|l| l.term).filter(|&t| t > 0)
    }
}

/// Writes the elector's events and every new deadline to the log, in the order they happened.
async fn watch_elector(log: Arc<Log>, svc: String, elector: Arc<Elector>) {
    let mut events = elector.events();
    let mut state = elector.watch();
    loop {
        tokio::select! {
            biased;
            ev = events.recv() => match ev {
                Ok(e) => log.on_event(&svc, e),
                Err(RecvError::Lagged(n)) => log.write("lagged", json!({"svc": svc, "missed": n})),
                Err(RecvError::Closed) => return,
            },
            changed = state.changed() => if changed.is_err() { return },
        }
        loop {
            match events.try_recv() {
                Ok(e) => log.on_event(&svc, e),
                Err(TryRecvError::Lagged(n)) => log.write("lagged", json!({"svc": svc, "missed": n})),
                Err(_) => break,
            }
        }
        let s = state.borrow_and_update().clone();
        log.note_state(&svc, &s);
    }
}

/// How one fenced increment ended.
enum Outcome {
    Committed(u64),
    Fenced,
    Failed(&'static str, String),
}

/// BEGIN; CALL assert_leader; UPDATE the counter; INSERT the fencing row; COMMIT.
async fn fenced_increment(pool: &Pool, svc: &str, node: &str, term: u64, idle_tx_timeout_s: Option<u64>) -> Outcome {
    let mut conn = match pool.get_conn().await {
        Ok(c) => c,
        Err(e) => return Outcome::Failed("connect", e.to_string()),
    };
    if let Some(s) = idle_tx_timeout_s {
        // MariaDB: abort this session's transaction when the client goes quiet inside it (a
        // paused or cut-off leader), so that its share lock on the election row cannot hold
        // up a takeover for longer than this. MySQL has no such variable: ignored there.
        let _ = conn.query_drop(format!("SET SESSION idle_transaction_timeout = {s}")).await;
    }
    let mut tx = match conn.start_transaction(TxOpts::default()).await {
        Ok(tx) => tx,
        Err(e) => return Outcome::Failed("begin", e.to_string()),
    };
    match procedures::assert_leader(&mut tx, svc, node, term).await {
        Ok(_) => {}
        Err(Error::NotLeader { .. }) => return Outcome::Fenced,
        Err(e) => return Outcome::Failed("assert_leader", e.to_string()),
    }
    if let Err(e) = tx.exec_drop("UPDATE faults_counter SET value = value + 1 WHERE service_id = ?", (svc,)).await {
        return Outcome::Failed("update", e.to_string());
    }
    let value: u64 = match tx.exec_first("SELECT value FROM faults_counter WHERE service_id = ?", (svc,)).await {
        Ok(Some(v)) => v,
        Ok(None) => return Outcome::Failed("select", "no counter row".into()),
        Err(e) => return Outcome::Failed("select", e.to_string()),
    };
    // seen_term: the election row's term as this transaction reads it (a locking read).
    let insert = "INSERT INTO faults_fencing (service_id, counter_value, term, node_id, seen_term, written_at) \
                  SELECT ?, ?, ?, ?, term, UTC_TIMESTAMP(6) FROM leader_election WHERE service_id = CAST(? AS BINARY)";
    if let Err(e) = tx.exec_drop(insert, (svc, value, term, node, svc)).await {
        return Outcome::Failed("insert", e.to_string());
    }
    match tx.commit().await {
        Ok(()) => Outcome::Committed(value),
        Err(e) => Outcome::Failed("commit", e.to_string()),
    }
}

/// The leader's work: fenced increments while leading, rogue ones (with the last term held)
/// while not. They go to the first server; after a failure (not a refusal by `assert_leader`)
/// to the next one, as the elector moves to its fallbacks (a cluster node down or cut off).
async fn work(log: Arc<Log>, svc: String, elector: Arc<Elector>, pools: Vec<Pool>, args: Arc<Args>) {
    let mut at = 0;
    let node = args.node.clone();
    let limit = Duration::from_millis(args.lease_ms);
    let mut last_rogue = tokio::time::Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(args.work_ms)).await;
        let now = tokio::time::Instant::now();
        let state = elector.state();
        let (term, rogue) = if state.leads_at(now) {
            if !log.note_state(&svc, &state) {
                continue;
            }
            (state.term, false)
        } else {
            match log.last_term(&svc) {
                Some(t) if args.rogue_ms > 0 && now - last_rogue >= Duration::from_millis(args.rogue_ms) => {
                    last_rogue = now;
                    (t, true)
                }
                _ => continue,
            }
        };
        let outcome = tokio::time::timeout(limit, fenced_increment(&pools[at], &svc, &node, term, args.idle_tx_timeout_s))
            .await
            .unwrap_or_else(|_| Outcome::Failed("timeout", format!("no answer within {} ms", limit.as_millis())));
        match outcome {
            Outcome::Committed(value) => log.write("commit", json!({"svc": svc, "term": term, "value": value, "rogue": rogue})),
            Outcome::Fenced => log.write("fenced", json!({"svc": svc, "term": term, "rogue": rogue})),
            Outcome::Failed(stage, error) => {
                log.write("tx_error", json!({"svc": svc, "term": term, "rogue": rogue, "stage": stage, "error": error,
                                            "server": at}));
                at = (at + 1) % pools.len();
            }
        }
    }
}

/// The fenced work's pool on `url`: one connection, kept open.
fn work_pool(url: &str) -> Pool {
    let opts = mysqlleader::opts_from_url(url).unwrap_or_else(|e| usage(&format!("bad --url: {e}")));
    let constraints = mysql_async::PoolConstraints::new(1, 1).expect("min <= max");
    let pool_opts = opts.pool_opts().clone().with_constraints(constraints);
    Pool::new(mysql_async::OptsBuilder::from_opts(opts).pool_opts(pool_opts))
}

fn main() {
    let args = Arc::new(parse_args());
    // One thread: the elector's task, the log writer and the work share it, so an event is
    // logged before the elector runs again.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    rt.block_on(run(args));
}

async fn run(args: Arc<Args>) {
    let file = std::fs::OpenOptions::new().create(true).append(true).open(&args.log).expect("open the log");
    let log = Arc::new(Log {
        file,
        anchor: Anchor::new(),
        node: args.node.clone(),
        pid: std::process::id(),
        logged: Mutex::new(HashMap::new()),
    });
    log.write("boot", json!({"services": args.services, "lease_ms": args.lease_ms, "servers": args.urls.len()}));
    // Two pools per server, as an application would have: the electors' (as `pool_from_url`
    // makes it, so that the checker's connection count sees exactly what the library holds:
    // per service its call connection and its wake-up lock's), and the fenced work's, of one
    // connection that the services' work takes in turn. Before, the work shared the electors'
    // pool: two services' increments at the same moment, or one abandoned at its time limit
    // while the next began, made that pool open a connection more, and a `mysql_async` pool
    // keeps up to 10 idle connections for good, so the count crept past the checker's bound
    // (one fenced connection per candidate) without the library holding any more.
    let pools: Vec<Pool> = args
        .urls
        .iter()
        .map(|u| mysqlleader::pool_from_url(u).unwrap_or_else(|e| usage(&format!("bad --url: {e}"))))
        .collect();
    let work_pools: Vec<Pool> = args.urls.iter().map(|u| work_pool(u)).collect();
    let mut electors = Vec::new();
    let session = args.session.then(|| {
        let mut b = mysqlleader::Session::builder(pools[0].clone())
            .node_id(args.node.clone())
            .lease(Duration::from_millis(args.lease_ms))
            .resign_on_drop(false);
        if let Some(ms) = args.renew_ms { b = b.renew_interval(Duration::from_millis(ms)); }
        if let Some(ms) = args.retry_ms { b = b.retry_interval(Duration::from_millis(ms)); }
        if let Some(ms) = args.timeout_ms { b = b.request_timeout(Duration::from_millis(ms)); }
        b.start().unwrap_or_else(|e| usage(&format!("session: {e}")))
    });
    for svc in &args.services {
        let mut b = Elector::builder(pools[0].clone(), svc.clone())
            .node_id(args.node.clone())
            .lease(Duration::from_millis(args.lease_ms))
            .resign_on_drop(false)
            .fallback_servers(pools[1..].iter().cloned());
        if let Some(ms) = args.renew_ms { b = b.renew_interval(Duration::from_millis(ms)); }
        if let Some(ms) = args.retry_ms { b = b.retry_interval(Duration::from_millis(ms)); }
        if let Some(ms) = args.timeout_ms { b = b.request_timeout(Duration::from_millis(ms)); }
        let started = match &session {
            Some(session) => session.elector(svc.clone()),
            None => b.start(),
        };
        let elector = Arc::new(started.unwrap_or_else(|e| usage(&format!("elector: {e}"))));
        tokio::spawn(watch_elector(log.clone(), svc.clone(), elector.clone()));
        tokio::spawn(work(log.clone(), svc.clone(), elector.clone(), work_pools.clone(), args.clone()));
        electors.push((svc.clone(), elector));
    }
    let mut tick = tokio::time::interval(Duration::from_millis(args.heartbeat_ms));
    let mut term_signal = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
    loop {
        tokio::select! {
            _ = tick.tick() => {
                let now = tokio::time::Instant::now();
                for (svc, e) in &electors {
                    let s = e.state();
                    log.write("hb", json!({"svc": svc, "leading": s.leads_at(now), "term": s.term, "leader": s.leader_id}));
                }
            }
            _ = term_signal.recv() => {
                log.write("exit", json!({}));
                std::process::exit(0);
            }
        }
    }
}
