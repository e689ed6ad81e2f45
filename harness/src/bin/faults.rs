//! The fault-injection harness of issue 8. See docs/faults.md.
//!
//! ```text
//! cargo build --release --examples
//! target/release/faults --seed 42 --faults 300 --candidates 5 --services 2 --lease 1s
//! ```
//!
//! 1. Starts a throwaway mariadbd with `scripts/testdb.sh` (or uses `--url`, without server
//!    faults, or a 3-node Galera cluster of `scripts/galera.sh` with `--galera DIR`, with node
//!    faults), creates a database, migrates it, and creates the fencing tables.
//! 2. Starts N candidates (`harness/src/bin/candidate.rs`), each on every service, each connected to
//!    every server through a TCP proxy of the harness's own.
//! 3. Injects faults chosen with a seeded generator (the seed is printed; the same seed gives
//!    the same sequence of kinds, roles, durations and gaps), logging each one to `faults.jsonl`.
//! 4. Stops everything, dumps the history and fencing tables, runs the checker, and writes
//!    `report.md` and `timeline.svg` into the run directory. Exits 1 on any violation.
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysql_async::Pool;
use mysqlleader::procedures;
use serde_json::json;
use tokio::process::{Child, Command};
use tokio::time::sleep;

use mysqlleader_harness as faults;

use faults::checker;
use faults::clock::mono_ns;
use faults::proxy::{self, Mode, Proxy};
use faults::rng::Rng;
use faults::servers::{ExternalServers, GaleraControl, GroupControl, ServerControl, ServerFault, TestDbServer};

// ---------------------------------------------------------------------------------------------
// Parameters.

#[derive(Clone, Debug)]
struct Args {
    seed: u64,
    faults: usize,
    candidates: usize,
    services: usize,
    lease: Duration,
    renew: Option<Duration>,
    retry: Option<Duration>,
    timeout: Option<Duration>,
    gap: Option<Duration>,
    slack: Option<Duration>,
    out: Option<PathBuf>,
    urls: Vec<String>,
    kinds: Option<Vec<String>>,
    experiment: Option<String>,
    keep_server: bool,
    title: Option<String>,
    /// Candidates leave MariaDB's idle_transaction_timeout alone (to see what it protects).
    no_idle_tx_timeout: bool,
    /// Each candidate's electors come from one `Session` (`candidate --session`).
    sessions: bool,
    /// A `scripts/galera.sh` cluster directory: attach to it when it holds a running cluster
    /// (`DIR/env`), else start one there.
    galera: Option<PathBuf>,
    /// A running `scripts/group-replication.sh` group's directory (`DIR/env`): attach to it.
    group: Option<PathBuf>,
}

const USAGE: &str = "usage: faults [--seed S] [--faults N] [--candidates N] [--services N] [--lease D] [--renew D] [--retry D] \
[--timeout D] [--gap D] [--slack D] [--out DIR] [--url URL ...] [--galera DIR] [--group DIR] [--kinds k1,k2,...] [--experiment clock-step] [--keep-server] [--no-idle-tx-timeout] [--sessions] [--title T]
  durations D: 500ms, 1s, 1.5s, 2m. Fault kinds: kill-leader kill-follower stop-leader server-kill server-pause
  net-cut net-stall net-delay net-lossy op-resign op-reelect op-force op-handover (all by default; server faults need the harness's own server),
  node-kill node-isolate (only with --galera: a running scripts/galera.sh cluster in DIR, or one started there)";

fn usage(msg: &str) -> ! {
    eprintln!("faults: {msg}\n{USAGE}");
    std::process::exit(2);
}

fn parse_duration(s: &str) -> Duration {
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else {
        usage(&format!("a duration needs a unit (ms, s, m): {s}"))
    };
    let v: f64 = num.parse().unwrap_or_else(|_| usage(&format!("not a duration: {s}")));
    Duration::from_millis((v * mult * 1000.0).round() as u64)
}

fn parse_args() -> Args {
    let mut a = Args {
        seed: {
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
            (t.as_nanos() as u64 ^ u64::from(std::process::id())) % 1_000_000_000
        },
        faults: 30,
        candidates: 5,
        services: 2,
        lease: Duration::from_secs(2),
        renew: None,
        retry: None,
        timeout: None,
        gap: None,
        slack: None,
        out: None,
        urls: Vec::new(),
        kinds: None,
        experiment: None,
        keep_server: false,
        title: None,
        no_idle_tx_timeout: false,
        sessions: false,
        galera: None,
        group: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        if flag == "--keep-server" {
            a.keep_server = true;
            continue;
        }
        if flag == "--no-idle-tx-timeout" {
            a.no_idle_tx_timeout = true;
            continue;
        }
        if flag == "--sessions" {
            a.sessions = true;
            continue;
        }
        let v = it.next().unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        let n = || v.parse::<u64>().unwrap_or_else(|_| usage(&format!("{flag}: not a number: {v}")));
        match flag.as_str() {
            "--seed" => a.seed = n(),
            "--faults" => a.faults = n() as usize,
            "--candidates" => a.candidates = n() as usize,
            "--services" => a.services = n() as usize,
            "--lease" => a.lease = parse_duration(&v),
            "--renew" => a.renew = Some(parse_duration(&v)),
            "--retry" => a.retry = Some(parse_duration(&v)),
            "--timeout" => a.timeout = Some(parse_duration(&v)),
            "--gap" => a.gap = Some(parse_duration(&v)),
            "--slack" => a.slack = Some(parse_duration(&v)),
            "--out" => a.out = Some(PathBuf::from(v)),
            "--url" => a.urls.push(v),
            "--galera" => a.galera = Some(PathBuf::from(v)),
            "--group" => a.group = Some(PathBuf::from(v)),
            "--kinds" => a.kinds = Some(v.split(',').map(|k| k.trim().to_string()).filter(|k| !k.is_empty()).collect()),
            "--experiment" => a.experiment = Some(v),
            "--title" => a.title = Some(v),
            _ => usage(&format!("unknown argument {flag}")),
        }
    }
    if a.candidates < 2 || a.services < 1 {
        usage("at least 2 candidates and 1 service");
    }
    if a.sessions && (a.galera.is_some() || a.group.is_some() || a.urls.len() > 1) {
        usage("--sessions uses one server: neither --galera, --group nor more than one --url");
    }
    if (a.galera.is_some() || a.group.is_some()) && (!a.urls.is_empty() || a.experiment.is_some()) {
        usage("--galera and --group go with neither --url nor --experiment");
    }
    if a.galera.is_some() && a.group.is_some() {
        usage("--galera or --group, not both");
    }
    if let Some(e) = &a.experiment {
        if e != "clock-step" {
            usage(&format!("unknown experiment {e} (known: clock-step)"));
        }
    }
    a
}

/// The intervals of the elector, as the candidates get them (the library's defaults unless set).
#[derive(Clone, Copy, Debug)]
struct Timing {
    lease: Duration,
    renew: Duration,
    retry: Duration,
    timeout: Duration,
}

// ---------------------------------------------------------------------------------------------
// Faults.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    KillLeader,
    KillFollower,
    StopLeader,
    ServerKill,
    ServerPause,
    NetCut,
    NetStall,
    NetDelay,
    NetLossy,
    OpResign,
    OpReelect,
    OpForce,
    /// An operator's `handover` of the service to a node drawn by `pick` (the leader itself
    /// sometimes: then nothing changes). The displaced leader's term ends `handed_over`; the
    /// named node may lead only after that leader's next renew has seen it, so unlike a force
    /// this must never show an overlap.
    OpHandover,
    /// Only in the clock-step experiment: the server's clock jumps forward.
    ClockStep,
    /// A cluster node killed (SIGKILL of mariadbd), restarted after the drawn duration.
    NodeKill,
    /// A cluster node cut off from the others (gmcast.isolate), let back after the drawn duration.
    NodeIsolate,
    /// A client fences a transaction as the current leader (`START TRANSACTION; CALL
    /// assert_leader(...)`) and then goes idle, for longer than the bound: the server must end
    /// it (MariaDB's idle-transaction timeout that `assert_leader` sets) so that another node
    /// takes over within lease + request timeout + 1 s, and nobody piles up connections.
    FencedTxOpen,
    /// The service's row is held locked (`SELECT ... FOR UPDATE` in an open transaction) while
    /// clients send campaigns and abandon each after 100 ms: the server must end each abandoned
    /// campaign's wait promptly (bounded lock waits), so the connection count stays flat.
    CampaignAbandon,
}

/// The node kinds are filtered out unless the servers support them, so adding them changed no
/// seed's draws for the single server.
const ALL_KINDS: [(Kind, &str, u32); 17] = [
    (Kind::KillLeader, "kill-leader", 10),
    (Kind::KillFollower, "kill-follower", 6),
    (Kind::StopLeader, "stop-leader", 10),
    (Kind::ServerKill, "server-kill", 4),
    (Kind::ServerPause, "server-pause", 5),
    (Kind::NetCut, "net-cut", 8),
    (Kind::NetStall, "net-stall", 8),
    (Kind::NetDelay, "net-delay", 6),
    (Kind::NetLossy, "net-lossy", 6),
    (Kind::OpResign, "op-resign", 4),
    (Kind::OpReelect, "op-reelect", 4),
    (Kind::OpForce, "op-force", 4),
    (Kind::NodeKill, "node-kill", 6),
    (Kind::NodeIsolate, "node-isolate", 6),
    (Kind::FencedTxOpen, "fenced-tx-open", 3),
    (Kind::CampaignAbandon, "campaign-abandon", 3),
    (Kind::OpHandover, "op-handover", 4),
];

fn kind_name(k: Kind) -> &'static str {
    if k == Kind::ClockStep {
        return "clock-step";
    }
    ALL_KINDS.iter().find(|(x, _, _)| *x == k).map(|(_, n, _)| *n).unwrap()
}

/// One fault, fully decided by the generator before it is injected (the same draws every
/// time, whatever the state of the run: that is what makes a seed replayable).
#[derive(Clone, Debug)]
struct Plan {
    kind: Kind,
    /// Index of the service whose leader (or follower) is targeted.
    svc: usize,
    /// A number to choose a follower, or the node to force, with.
    pick: usize,
    /// For net faults: target the leader (else a follower).
    at_leader: bool,
    /// How long the fault lasts.
    dur: Duration,
    /// Kind-specific: one-way delay (net-delay), loss in per mille (net-lossy), step in s (clock-step).
    param: u64,
    /// Pause before this fault.
    gap: Duration,
}

fn plan(rng: &mut Rng, kinds: &[(Kind, &str, u32)], t: &Timing, gap_mean: Duration, services: usize) -> Plan {
    // Always the same seven draws.
    let k = rng.weighted(&kinds.iter().map(|(_, _, w)| *w).collect::<Vec<_>>());
    let svc = rng.below(services);
    let pick = rng.below(1 << 20);
    let at_leader = rng.chance(0.65);
    let u = rng.unit();
    let v = rng.unit();
    let g = rng.range_f(0.5, 1.5);
    let kind = kinds[k].0;
    let lease = t.lease.as_secs_f64();
    let between = |lo: f64, hi: f64| Duration::from_secs_f64(lease * (lo + (hi - lo) * u));
    let (dur, param) = match kind {
        Kind::KillLeader | Kind::KillFollower => (between(0.3, 2.0), 0),
        // Longer than the lease: the paused leader's lease runs out while it sleeps.
        Kind::StopLeader => (between(1.2, 2.0), 0),
        Kind::ServerKill => (between(0.2, 1.0), 0),
        Kind::ServerPause => (between(0.3, 2.0), 0),
        Kind::NetCut | Kind::NetStall => (between(0.5, 2.5), 0),
        // A slow link: up to 45% of the request timeout each way.
        Kind::NetDelay => (between(0.5, 2.5), (t.timeout.as_millis() as f64 * (0.05 + 0.40 * v)) as u64),
        Kind::NetLossy => (between(0.5, 2.5), (100.0 + 300.0 * v) as u64),
        Kind::OpResign | Kind::OpReelect | Kind::OpForce | Kind::OpHandover => (Duration::ZERO, 0),
        // How long the node stays down or cut off before its return: 1.5 to 2.5 leases, so
        // that the return does not begin before a failover the fault caused has played out.
        Kind::NodeKill | Kind::NodeIsolate => (between(1.5, 2.5), 0),
        // Forward by 1.5 to 4 leases.
        Kind::ClockStep => (Duration::ZERO, ((1.5 + 2.5 * v) * lease).ceil() as u64),
        // Idle for 4 to 6 leases: far past the bound, so a missing server-side bound shows.
        Kind::FencedTxOpen => (between(4.0, 6.0), 0),
        // The row held 0.5 to 1.5 leases; a campaign abandoned every 400 ms meanwhile.
        Kind::CampaignAbandon => (between(0.5, 1.5), 400),
    };
    Plan { kind, svc, pick, at_leader, dur, param, gap: gap_mean.mul_f64(g) }
}

/// `faults.jsonl`: one `inject` and one `heal` line per fault.
struct FaultLog {
    file: Mutex<std::fs::File>,
}

impl FaultLog {
    fn write(&self, v: serde_json::Value) {
        let mut line = v.to_string();
        line.push('\n');
        self.file.lock().unwrap().write_all(line.as_bytes()).expect("write faults.jsonl");
    }
}

// ---------------------------------------------------------------------------------------------
// Candidates.

struct Node {
    name: String,
    /// One proxy per server, in the order of the servers.
    proxies: Vec<Proxy>,
    child: tokio::sync::Mutex<Option<Child>>,
    pid: Mutex<Option<u32>>,
}

struct Harness {
    idle_tx_timeout: bool,
    timing: Timing,
    dir: PathBuf,
    candidate_bin: PathBuf,
    services: Vec<String>,
    nodes: Vec<Arc<Node>>,
    servers: Arc<dyn ServerControl>,
    /// Candidate URLs per server (database path), before proxying.
    db_urls: Vec<String>,
    /// Candidate i's first URL is server `i mod servers` (its own node of a cluster), the
    /// others follow as its fallbacks; without it every candidate lists the servers in order.
    spread: bool,
    /// The harness's own, direct connections, one pool per server (the operator's, who-leads
    /// look-ups, the final dump): always through a server that is up and in its cluster.
    admins: Vec<Mutex<Pool>>,
    /// Servers killed or cut off by a node fault right now.
    down: Mutex<Vec<bool>>,
    /// Fault ids for the returns of nodes (after the planned faults' ids).
    next_id: std::sync::atomic::AtomicU64,
    /// Node faults that could not be carried out (a script failed): the run is then not valid.
    errors: Mutex<Vec<String>>,
    log: Arc<FaultLog>,
    busy: Mutex<HashSet<usize>>,
    faketime_file: Option<PathBuf>,
    /// Whether candidates run their electors in one session each.
    sessions: bool,
}

impl Harness {
    async fn spawn(&self, i: usize) {
        let node = &self.nodes[i];
        let log = self.dir.join("nodes").join(format!("{}.jsonl", node.name));
        let stderr = std::fs::OpenOptions::new().create(true).append(true)
            .open(self.dir.join("nodes").join(format!("{}.stderr", node.name))).expect("candidate stderr file");
        let mut cmd = Command::new(&self.candidate_bin);
        cmd.arg("--node").arg(&node.name).arg("--log").arg(&log);
        for s in &self.services {
            cmd.arg("--service").arg(s);
        }
        if self.sessions {
            cmd.arg("--session");
        }
        let n = node.proxies.len();
        for k in 0..n {
            let j = if self.spread { (self.home(i) + k) % n } else { k };
            cmd.arg("--url").arg(node.proxies[j].url_for(&self.db_urls[j]));
        }
        let t = &self.timing;
        cmd.arg("--lease-ms").arg(t.lease.as_millis().to_string())
            .arg("--renew-ms").arg(t.renew.as_millis().to_string())
            .arg("--retry-ms").arg(t.retry.as_millis().to_string())
            .arg("--timeout-ms").arg(t.timeout.as_millis().to_string());
        if self.idle_tx_timeout {
            // A paused or cut-off leader's fenced transaction (holding assert_leader's share
            // lock) is aborted by the server after one lease, rounded up to whole seconds.
            cmd.arg("--idle-tx-timeout-s").arg(t.lease.as_secs_f64().ceil().max(1.0).to_string());
        }
        cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(stderr);
        cmd.kill_on_drop(true);
        let child = cmd.spawn().expect("start a candidate (build it: cargo build --release --examples)");
        *node.pid.lock().unwrap() = child.id();
        *node.child.lock().await = Some(child);
    }

    async fn kill(&self, i: usize) {
        let node = &self.nodes[i];
        let mut guard = node.child.lock().await;
        if let Some(mut child) = guard.take() {
            if let Some(pid) = child.id() {
                // SAFETY: signalling our own child process.
                unsafe { libc::kill(pid as i32, libc::SIGCONT) };
            }
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
        *node.pid.lock().unwrap() = None;
    }

    fn signal(&self, i: usize, sig: i32) {
        if let Some(pid) = *self.nodes[i].pid.lock().unwrap() {
            // SAFETY: signalling our own child process.
            unsafe { libc::kill(pid as i32, sig) };
        }
    }

    /// The server candidate `i` is attached to (its first URL).
    fn home(&self, i: usize) -> usize { if self.spread { i % self.db_urls.len() } else { 0 } }

    /// A pool on the first server that no node fault holds down or cut off.
    fn admin(&self) -> Pool {
        let down = self.down.lock().unwrap();
        let j = (0..self.admins.len()).find(|&j| !down[j]).unwrap_or(0);
        self.admins[j].lock().unwrap().clone()
    }

    /// Pools on the servers no node fault holds down or cut off, in order.
    fn admins_up(&self) -> Vec<Pool> {
        let down = self.down.lock().unwrap();
        let up: Vec<Pool> = (0..self.admins.len()).filter(|&j| !down[j]).map(|j| self.admins[j].lock().unwrap().clone()).collect();
        drop(down);
        if up.is_empty() { vec![self.admin()] } else { up }
    }

    /// `call` through the first server that takes writes: on a Group Replication group in
    /// single-primary mode a secondary refuses a write with 1290 (read-only), and the next
    /// server is tried, as an operator's client would (the other topologies take writes
    /// everywhere: the first server answers).
    async fn on_writer<T, F, Fut>(&self, call: F) -> mysqlleader::Result<T>
    where
        F: Fn(Pool) -> Fut,
        Fut: std::future::Future<Output = mysqlleader::Result<T>>,
    {
        let pools = self.admins_up();
        let last = pools.len() - 1;
        for (k, pool) in pools.into_iter().enumerate() {
            match call(pool).await {
                Err(e) if e.server_code() == Some(1290) && k < last => continue,
                r => return r,
            }
        }
        unreachable!("admins_up is never empty")
    }

    /// The node leading `svc` now, by the database (direct connection), if any.
    async fn leader_of(&self, svc: usize) -> Option<usize> {
        let admin = self.admin();
        let call = procedures::current_leader(&admin, &self.services[svc]);
        let leader = tokio::time::timeout(Duration::from_millis(500), call).await.ok()?.ok()?.leader_id?;
        self.nodes.iter().position(|n| n.name == leader)
    }

    fn free(&self, i: usize) -> bool { !self.busy.lock().unwrap().contains(&i) }

    /// A free node other than `not`, chosen with `pick`.
    fn pick_free(&self, pick: usize, not: Option<usize>) -> Option<usize> {
        let n = self.nodes.len();
        (0..n).map(|k| (pick + k) % n).find(|&i| Some(i) != not && self.free(i))
    }

    fn busy_count(&self) -> usize { self.busy.lock().unwrap().len() }
}

// ---------------------------------------------------------------------------------------------
// The run.

fn main() {
    let args = parse_args();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a tokio runtime");
    let code = rt.block_on(run(args));
    std::process::exit(code);
}

async fn run(args: Args) -> i32 {
    // The repository: the parent of this crate's directory (scripts/testdb.sh, scripts/galera.sh).
    let repo = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let dir = args.out.clone().unwrap_or_else(|| repo.join("target/faults").join(format!("seed-{}", args.seed)));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("nodes")).expect("create the run directory");
    std::fs::create_dir_all(dir.join("db")).expect("create the run directory");
    let dir = dir.canonicalize().unwrap();
    let candidate_bin = std::env::current_exe().unwrap().with_file_name("candidate");
    if !candidate_bin.exists() {
        usage(&format!("{} is missing: build it with `cargo build --release --examples`", candidate_bin.display()));
    }

    // The elector's timing, as the library derives it from the lease unless set.
    let lease = args.lease;
    let timing = Timing {
        lease,
        renew: args.renew.unwrap_or(lease / 5),
        retry: args.retry.unwrap_or(lease / 10),
        timeout: args.timeout.unwrap_or((lease / 5).min(Duration::from_secs(2))),
    };
    let gap_mean = args.gap.unwrap_or(lease.mul_f64(0.75));
    // The availability allowance (never applied to safety): scheduling on a shared machine, and
    // a leader paused inside its fenced transaction, whose share lock holds a takeover until it
    // wakes (pauses last up to two leases here).
    let slack = args.slack.unwrap_or_else(|| lease.mul_f64(1.5).max(Duration::from_millis(1500)));
    println!("faults: seed {} — replay with: target/release/faults --seed {} --faults {} --candidates {} --services {} --lease {}ms{}{}{}{}",
        args.seed, args.seed, args.faults, args.candidates, args.services, lease.as_millis(),
        args.experiment.as_ref().map_or(String::new(), |e| format!(" --experiment {e}")),
        args.gap.map_or(String::new(), |g| format!(" --gap {}ms", g.as_millis())),
        args.kinds.as_ref().map_or(String::new(), |k| format!(" --kinds {}", k.join(","))),
        args.galera.as_ref().map_or(String::new(), |d| format!(" --galera {}", d.display()))
            + &args.group.as_ref().map_or(String::new(), |d| format!(" --group {}", d.display())));
    println!("faults: run directory {}", dir.display());

    // 1. The server(s).
    let faketime_file = (args.experiment.as_deref() == Some("clock-step")).then(|| dir.join("faketime.rc"));
    let servers: Arc<dyn ServerControl> = if let Some(gdir) = &args.group {
        let script = repo.join("scripts/group-replication.sh");
        match GroupControl::attach(&script, gdir) {
            Ok(g) => Arc::new(g),
            Err(e) => {
                eprintln!("faults: the Group Replication group: {e}");
                return 2;
            }
        }
    } else if let Some(gdir) = &args.galera {
        let script = repo.join("scripts/galera.sh");
        let gdir = gdir.clone();
        let attach = gdir.join("env").exists();
        if !attach {
            println!("faults: starting a 3-node Galera cluster in {} (scripts/galera.sh)", gdir.display());
        }
        let r = tokio::task::spawn_blocking(move || {
            if attach { GaleraControl::attach(&script, &gdir) } else { GaleraControl::start(&script, &gdir) }
        }).await.unwrap();
        match r {
            Ok(g) => Arc::new(g),
            Err(e) => {
                eprintln!("faults: the Galera cluster: {e}");
                return 2;
            }
        }
    } else if !args.urls.is_empty() {
        if faketime_file.is_some() {
            usage("the clock-step experiment needs the harness's own server (no --url)");
        }
        Arc::new(ExternalServers { urls: args.urls.clone() })
    } else {
        let mut env = Vec::new();
        if let Some(f) = &faketime_file {
            let lib = faketime_library().unwrap_or_else(|e| usage(&e));
            std::fs::write(f, "+0\n").unwrap();
            env.push(("LD_PRELOAD".to_string(), lib));
            env.push(("FAKETIME_TIMESTAMP_FILE".to_string(), f.display().to_string()));
            env.push(("FAKETIME_DONT_FAKE_MONOTONIC".to_string(), "1".to_string()));
            env.push(("FAKETIME_CACHE_DURATION".to_string(), "1".to_string()));
        }
        let script = repo.join("scripts/testdb.sh");
        let sdir = dir.join("server");
        match tokio::task::spawn_blocking(move || TestDbServer::start(&script, &sdir, env)).await.unwrap() {
            Ok(s) => Arc::new(s),
            Err(e) => {
                eprintln!("faults: could not start the server: {e}");
                return 2;
            }
        }
    };
    println!("faults: database side: {}", servers.describe());
    let code = match run_with(args.clone(), timing, gap_mean, slack, &dir, candidate_bin, servers.clone(), faketime_file).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("faults: {e}");
            2
        }
    };
    if !args.keep_server {
        let s = servers.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || s.shutdown()).await.unwrap() {
            eprintln!("faults: stopping the server: {e}");
        }
    }
    code
}

/// The libfaketime preload library, installed with apt when missing and running as root.
fn faketime_library() -> Result<String, String> {
    let candidates = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
                      "/usr/lib/faketime/libfaketime.so.1", "/usr/local/lib/faketime/libfaketime.so.1"];
    let find = || candidates.iter().find(|p| Path::new(p).exists()).map(|p| p.to_string());
    if let Some(p) = find() {
        return Ok(p);
    }
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        return Err("libfaketime is not installed (Debian: sudo apt-get install libfaketime)".into());
    }
    eprintln!("faults: installing libfaketime with apt-get");
    let ok = std::process::Command::new("sh")
        .args(["-c", "DEBIAN_FRONTEND=noninteractive apt-get install -y -q libfaketime >&2 || (apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libfaketime >&2)"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    match find() {
        Some(p) if ok => Ok(p),
        _ => Err("apt-get could not install libfaketime".into()),
    }
}

#[allow(clippy::too_many_arguments)]
async fn run_with(args: Args, timing: Timing, gap_mean: Duration, slack: Duration, dir: &Path, candidate_bin: PathBuf,
                  servers: Arc<dyn ServerControl>, faketime_file: Option<PathBuf>) -> Result<i32, String> {
    // 2. A database of the run's own, migrated, with the fencing tables.
    let base_urls = servers.urls();
    let db = if args.urls.is_empty() { "faults".to_string() } else { format!("faults_{}_{}", args.seed, std::process::id()) };
    let spread = args.galera.is_some() || args.group.is_some();
    let db_urls: Vec<String> = base_urls.iter().map(|u| with_db(u, &db)).collect();
    // The set-up writes through the first server that takes writes (a Group Replication group in
    // single-primary mode refuses them on its secondaries, read_only; its primary may be any
    // member after an earlier failover).
    let mut writer = 0;
    for (j, u) in base_urls.iter().enumerate() {
        let pool = mysqlleader::pool_from_url(u).map_err(|e| e.to_string())?;
        let read_only: Option<u64> = match pool.get_conn().await {
            Ok(mut c) => c.query_first("SELECT @@global.read_only").await.ok().flatten(),
            Err(_) => None,
        };
        let _ = pool.disconnect().await;
        if read_only == Some(0) {
            writer = j;
            break;
        }
    }
    {
        let root = mysqlleader::pool_from_url(&base_urls[writer]).map_err(|e| e.to_string())?;
        let mut c = root.get_conn().await.map_err(|e| format!("connect: {e}"))?;
        c.query_drop(format!("DROP DATABASE IF EXISTS `{db}`")).await.map_err(|e| e.to_string())?;
        c.query_drop(format!("CREATE DATABASE `{db}`")).await.map_err(|e| e.to_string())?;
        drop(c);
        let _ = root.disconnect().await;
    }
    let admins: Vec<Mutex<Pool>> = db_urls.iter()
        .map(|u| mysqlleader::pool_from_url(u).map(Mutex::new).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let admin = admins[writer].lock().unwrap().clone();
    mysqlleader::migrate(&admin).await.map_err(|e| format!("migrate: {e}"))?;
    let services: Vec<String> = (1..=args.services).map(|i| format!("svc{i}")).collect();
    {
        let mut c = admin.get_conn().await.map_err(|e| e.to_string())?;
        c.query_drop(
            "CREATE TABLE faults_counter (service_id VARCHAR(128) NOT NULL PRIMARY KEY, value BIGINT UNSIGNED NOT NULL) ENGINE=InnoDB",
        ).await.map_err(|e| e.to_string())?;
        c.query_drop(
            "CREATE TABLE faults_fencing (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, service_id VARCHAR(128) NOT NULL, \
             counter_value BIGINT UNSIGNED NOT NULL, term BIGINT UNSIGNED NOT NULL, node_id VARCHAR(128) NOT NULL, \
             seen_term BIGINT UNSIGNED NULL, written_at DATETIME(6) NOT NULL) ENGINE=InnoDB",
        ).await.map_err(|e| e.to_string())?;
        for s in &services {
            c.exec_drop("INSERT INTO faults_counter (service_id, value) VALUES (?, 0)", (s,)).await.map_err(|e| e.to_string())?;
        }
    }

    // 3. Proxies and candidates.
    let mut nodes = Vec::new();
    for i in 0..args.candidates {
        let mut proxies = Vec::new();
        for (j, u) in db_urls.iter().enumerate() {
            let p = Proxy::start(proxy::server_addr(u), args.seed ^ ((i as u64) << 40) ^ ((j as u64) << 32))
                .await.map_err(|e| format!("proxy: {e}"))?;
            proxies.push(p);
        }
        nodes.push(Arc::new(Node { name: format!("n{}", i + 1), proxies, child: tokio::sync::Mutex::new(None), pid: Mutex::new(None) }));
    }
    let log = Arc::new(FaultLog {
        file: Mutex::new(std::fs::OpenOptions::new().create(true).append(true).open(dir.join("faults.jsonl")).unwrap()),
    });
    let h = Arc::new(Harness {
        idle_tx_timeout: !args.no_idle_tx_timeout, timing, dir: dir.to_path_buf(), candidate_bin, services: services.clone(), nodes,
        servers: servers.clone(), down: Mutex::new(vec![false; db_urls.len()]), db_urls, spread, admins, log: log.clone(),
        busy: Mutex::new(HashSet::new()), faketime_file, sessions: args.sessions, next_id: std::sync::atomic::AtomicU64::new(args.faults as u64 + 1),
        errors: Mutex::new(Vec::new()),
    });
    drop(admin);
    let title = args.title.clone().unwrap_or_else(|| match &args.experiment {
        Some(e) => format!("experiment {e}"),
        None => "fault run".to_string(),
    });
    let mut run_json = json!({
        "seed": args.seed, "faults": args.faults, "lease_ms": timing.lease.as_millis() as u64, "renew_ms": timing.renew.as_millis() as u64,
        "retry_ms": timing.retry.as_millis() as u64, "timeout_ms": timing.timeout.as_millis() as u64, "slack_ms": slack.as_millis() as u64,
        "services": services, "nodes": h.nodes.iter().map(|n| n.name.clone()).collect::<Vec<_>>(),
        "servers": servers.describe(), "title": title, "eviction_ms": servers.eviction().map(|d| d.as_millis() as u64), "experiment": args.experiment,
        "expect_overlaps": args.experiment.is_some(), "t_start": mono_ns(), "t_end": 0,
        "started_at": chrono_now(),
    });
    // The server's connection count, sampled from now on (single server only: a cluster's
    // candidates spread over its nodes). Bound: the harness's own now, + 2 for its fault
    // connections, + 3 for the campaigns campaign-abandon abandons (one every 400 ms, each ended
    // on the server within its 1 s bounded wait), plus per candidate one pool connection per
    // service and the fenced work's, and one wake-up connection per service; with --sessions,
    // per candidate its session's two (calls, and its one wake-up lock), the short-lived one
    // that may end a call or a wait left running, and the fenced work's, whatever the number of
    // services.
    let connections_baseline = if h.db_urls.len() == 1 { threads_connected(&h.admin()).await } else { None };
    if let Some(base) = connections_baseline {
        let per_candidate = if args.sessions { 4 } else { 2 * services.len() + 1 };
        let bound = base + 2 + 3 + (h.nodes.len() * per_candidate) as u64;
        run_json["connections_baseline"] = json!(base);
        run_json["connection_bound"] = json!(bound);
        let (h2, file) = (h.clone(), dir.join("db").join("connections.jsonl"));
        let _ = std::fs::create_dir_all(dir.join("db"));
        tokio::spawn(async move {
            let mut out = match std::fs::File::create(&file) { Ok(f) => f, Err(_) => return };
            loop {
                if let Some(n) = threads_connected(&h2.admin()).await {
                    let _ = writeln!(out, "{}", json!({"t": mono_ns(), "n": n}));
                }
                sleep(Duration::from_millis(100)).await;
            }
        });
    }
    for i in 0..h.nodes.len() {
        h.spawn(i).await;
    }

    // 4. Settle: every service has a leader.
    let settle_until = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let mut all = true;
        for s in 0..services.len() {
            all &= h.leader_of(s).await.is_some();
        }
        if all || tokio::time::Instant::now() > settle_until {
            break;
        }
        sleep(Duration::from_millis(100)).await;
    }
    sleep(timing.lease).await;

    // 5. Faults.
    let supported = servers.supported();
    let kinds: Vec<(Kind, &str, u32)> = if args.experiment.is_some() {
        vec![(Kind::ClockStep, "clock-step", 1)]
    } else {
        ALL_KINDS
            .iter()
            .copied()
            .filter(|(k, name, _)| match k {
                Kind::ServerKill => supported.contains(&ServerFault::KillRestart),
                Kind::ServerPause => supported.contains(&ServerFault::Pause),
                Kind::NodeKill => supported.contains(&ServerFault::NodeKill),
                Kind::NodeIsolate => supported.contains(&ServerFault::Isolate),
                _ => true,
            } && args.kinds.as_ref().is_none_or(|ks| ks.iter().any(|x| x == name)))
            .collect()
    };
    if kinds.is_empty() {
        return Err("no fault kind left to inject (check --kinds)".into());
    }
    let mut rng = Rng::new(args.seed);
    let mut tasks = Vec::new();
    let started = tokio::time::Instant::now();
    for id in 1..=args.faults as u64 {
        let p = plan(&mut rng, &kinds, &timing, gap_mean, services.len());
        sleep(p.gap).await;
        // At most two node faults at once; server faults and clock steps alone.
        let alone = matches!(p.kind, Kind::ServerKill | Kind::ServerPause | Kind::ClockStep | Kind::NodeKill | Kind::NodeIsolate);
        while h.busy_count() >= if alone { 1 } else { 2 } {
            sleep(Duration::from_millis(20)).await;
        }
        if let Some(task) = inject(&h, id, &p).await {
            tasks.push(task);
        }
        print!("\rfaults: {id}/{} injected ({:.0} s)   ", args.faults, started.elapsed().as_secs_f64());
        let _ = std::io::stdout().flush();
    }
    for t in tasks {
        let _ = t.await;
    }
    println!();
    // Let the last fault play out, then stop.
    sleep(timing.lease * 2 + Duration::from_secs(1)).await;
    run_json["t_end"] = json!(mono_ns());
    for i in 0..h.nodes.len() {
        h.kill(i).await;
    }
    for n in &h.nodes {
        for p in &n.proxies {
            p.heal();
        }
    }

    // 6. The database's record: history, fencing rows, counters.
    let admin = h.admin();
    dump(&admin, dir).await?;
    std::fs::write(dir.join("run.json"), serde_json::to_string_pretty(&run_json).unwrap()).unwrap();
    for a in &h.admins {
        let pool = a.lock().unwrap().clone();
        let _ = pool.disconnect().await;
    }

    // 7. The checker.
    let inputs = checker::load(dir)?;
    let report = checker::check(&inputs);
    std::fs::write(dir.join("report.md"), checker::markdown(&inputs, &report, "timeline.svg")).unwrap();
    std::fs::write(dir.join("timeline.svg"), faults::svg::timeline(&inputs, &report)).unwrap();
    print_summary(&inputs, &report, dir);
    let errors = h.errors.lock().unwrap().clone();
    for e in &errors {
        println!("faults: NOT CARRIED OUT: {e}");
    }
    Ok(if !report.passed() { 1 } else if !errors.is_empty() { 2 } else { 0 })
}

fn chrono_now() -> String {
    let out = std::process::Command::new("date").args(["-u", "+%Y-%m-%dT%H:%M:%SZ"]).output();
    out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default()
}

pub fn print_summary(inputs: &checker::Inputs, r: &checker::Report, dir: &Path) {
    let p = &inputs.params;
    let judged: Vec<i64> = r.availability.iter().filter(|a| a.clean && a.leaderless_ns > 0).filter_map(|a| a.to_leader_ns).collect();
    println!("faults: seed {}: {} faults, {} leadership intervals, {} terms", p.seed, inputs.faults.len(), r.intervals.len(), r.terms);
    println!("faults: overlaps {} (after operator revocations: {}), stale-term commits {}, fenced commits {}, refused by assert_leader {} ({} from a node that still believed it led)",
        r.real_overlaps(), r.overlaps.len() - r.real_overlaps(), r.stale_commits, r.commits_db, r.fenced, r.fenced_while_leading);
    let extra = inputs.faults.iter().map(|f| f.extra_ms).max().unwrap_or(0);
    println!("faults: availability: {} judged leader losses, worst {} ms to a new leader (bound {} ms{} + {} ms slack)", judged.len(),
        judged.iter().max().map_or("-".into(), |v| format!("{:.0}", *v as f64 / 1e6)), p.lease_ms + p.retry_ms,
        if extra > 0 { format!(" + a fault's own allowance (up to {extra} ms here)") } else { String::new() }, p.slack_ms);
    if p.connection_bound > 0 {
        println!("faults: server connections: at most {} at once (bound {})",
            r.max_connections.map_or("-".into(), |(n, _)| n.to_string()), p.connection_bound);
    }
    for v in r.violations.iter().take(20) {
        println!("faults: VIOLATION: {v}");
    }
    if r.violations.len() > 20 {
        println!("faults: ... {} violations in all", r.violations.len());
    }
    println!("faults: {} — report {}/report.md, picture {}/timeline.svg", if r.passed() { "PASS" } else { "FAIL" }, dir.display(), dir.display());
}

fn with_db(url: &str, db: &str) -> String {
    let (head, rest) = url.split_once("://").unwrap();
    let (before_path, query) = match rest.split_once('?') { Some((a, q)) => (a, format!("?{q}")), None => (rest, String::new()) };
    let hostpart = before_path.split('/').next().unwrap();
    format!("{head}://{hostpart}/{db}{query}")
}

async fn dump(admin: &Pool, dir: &Path) -> Result<(), String> {
    let mut c = admin.get_conn().await.map_err(|e| format!("dump: {e}"))?;
    // On a Galera node: first apply everything the cluster committed; on a Group Replication
    // member, the same (an error elsewhere).
    let _ = c.query_drop("SET SESSION wsrep_sync_wait = 1").await;
    let _ = c.query_drop("SET SESSION group_replication_consistency = 'BEFORE'").await;
    let epoch = "'1970-01-01 00:00:00'";
    let history: Vec<(String, u64, String, i64, String, Option<i64>, Option<String>)> = c
        .query(format!(
            "SELECT CAST(service_id AS CHAR), term, CAST(leader_id AS CHAR), TIMESTAMPDIFF(MICROSECOND, {epoch}, began_at), \
             CAST(began_how AS CHAR), TIMESTAMPDIFF(MICROSECOND, {epoch}, ended_at), CAST(ended_how AS CHAR) \
             FROM leader_election_history ORDER BY service_id, term"))
        .await
        .map_err(|e| format!("dump history: {e}"))?;
    let mut f = String::new();
    for (svc, term, leader, began, began_how, ended, ended_how) in history {
        f.push_str(&json!({"svc": svc, "term": term, "leader": leader, "began_us": began, "began_how": began_how,
                           "ended_us": ended, "ended_how": ended_how}).to_string());
        f.push('\n');
    }
    std::fs::write(dir.join("db/history.jsonl"), f).unwrap();
    let fencing: Vec<(String, u64, u64, String, Option<u64>, i64)> = c
        .query(format!("SELECT service_id, counter_value, term, node_id, seen_term, TIMESTAMPDIFF(MICROSECOND, {epoch}, written_at) \
                        FROM faults_fencing ORDER BY service_id, counter_value"))
        .await
        .map_err(|e| format!("dump fencing: {e}"))?;
    let mut f = String::new();
    for (svc, value, term, node, seen, written) in fencing {
        f.push_str(&json!({"svc": svc, "value": value, "term": term, "node": node, "seen_term": seen, "written_us": written}).to_string());
        f.push('\n');
    }
    std::fs::write(dir.join("db/fencing.jsonl"), f).unwrap();
    let counters: Vec<(String, u64)> = c.query("SELECT service_id, value FROM faults_counter").await.map_err(|e| e.to_string())?;
    let mut f = String::new();
    for (svc, value) in counters {
        f.push_str(&json!({"svc": svc, "value": value}).to_string());
        f.push('\n');
    }
    std::fs::write(dir.join("db/counter.jsonl"), f).unwrap();
    Ok(())
}

/// Injects one fault; returns the task that heals it later, for node faults.
async fn inject(h: &Arc<Harness>, id: u64, p: &Plan) -> Option<tokio::task::JoinHandle<()>> {
    let svc_name = h.services[p.svc].clone();
    let leader = h.leader_of(p.svc).await;
    let name = kind_name(p.kind);
    // from_heal: nobody can lead until the heal (server faults), so availability counts from
    // there; lasting: the fault can take a leader down at any time until its heal (network
    // and server faults), not only at its injection.
    let lasting = matches!(p.kind, Kind::NetCut | Kind::NetStall | Kind::NetDelay | Kind::NetLossy | Kind::ServerKill | Kind::ServerPause);
    let record = |target: String, detail: String, from_heal: bool| {
        h.log.write(json!({"ev": "inject", "id": id, "kind": name, "target": target, "svc": svc_name, "detail": detail,
                           "from_heal": from_heal, "lasting": lasting, "t": mono_ns()}));
    };
    let heal = move |h: &Harness| h.log.write(json!({"ev": "heal", "id": id, "t": mono_ns()}));
    // The node a node fault hits: the leader of the service when wanted and free, else a follower.
    let target = |want_leader: bool| -> Option<(usize, &'static str)> {
        match leader {
            Some(l) if want_leader && h.free(l) => Some((l, "leader")),
            _ => h.pick_free(p.pick, leader).map(|i| (i, "follower")),
        }
    };
    match p.kind {
        Kind::KillLeader | Kind::KillFollower | Kind::StopLeader => {
            let want_leader = p.kind != Kind::KillFollower;
            let (i, role) = target(want_leader)?;
            h.busy.lock().unwrap().insert(i);
            let node = h.nodes[i].name.clone();
            let h = h.clone();
            let (kind, dur) = (p.kind, p.dur);
            if kind == Kind::StopLeader {
                record(node.clone(), format!("{role} of {svc_name}; SIGSTOP for {} ms", dur.as_millis()), false);
                h.signal(i, libc::SIGSTOP);
            } else {
                record(node.clone(), format!("{role} of {svc_name}; SIGKILL, restart after {} ms", dur.as_millis()), false);
                h.kill(i).await;
            }
            Some(tokio::spawn(async move {
                sleep(dur).await;
                if kind == Kind::StopLeader {
                    h.signal(i, libc::SIGCONT);
                } else {
                    h.spawn(i).await;
                }
                heal(&h);
                h.busy.lock().unwrap().remove(&i);
            }))
        }
        Kind::NetCut | Kind::NetStall | Kind::NetDelay | Kind::NetLossy => {
            let (i, role) = target(p.at_leader)?;
            h.busy.lock().unwrap().insert(i);
            let node = h.nodes[i].name.clone();
            let mode = match p.kind {
                Kind::NetCut => Mode::Cut,
                Kind::NetStall => Mode::Stall,
                Kind::NetDelay => Mode::Delay { one_way_ms: p.param },
                _ => Mode::Lossy { permille: p.param as u32 },
            };
            record(node, format!("{role} of {svc_name}; {mode:?} for {} ms", p.dur.as_millis()), false);
            for px in &h.nodes[i].proxies {
                px.set_mode(mode);
            }
            let h = h.clone();
            let dur = p.dur;
            Some(tokio::spawn(async move {
                sleep(dur).await;
                for px in &h.nodes[i].proxies {
                    px.heal();
                }
                heal(&h);
                h.busy.lock().unwrap().remove(&i);
            }))
        }
        Kind::ServerKill | Kind::ServerPause => {
            h.busy.lock().unwrap().insert(usize::MAX);
            let s = h.servers.clone();
            if p.kind == Kind::ServerKill {
                record("server".into(), format!("SIGKILL, relaunch after {} ms", p.dur.as_millis()), true);
                let r = tokio::task::spawn_blocking(move || s.kill(0)).await.unwrap();
                if let Err(e) = r {
                    eprintln!("\nfaults: server kill: {e}");
                }
                sleep(p.dur).await;
                let s = h.servers.clone();
                if let Err(e) = tokio::task::spawn_blocking(move || s.relaunch(0)).await.unwrap() {
                    eprintln!("\nfaults: server relaunch: {e}");
                }
            } else {
                record("server".into(), format!("SIGSTOP for {} ms", p.dur.as_millis()), true);
                let r = tokio::task::spawn_blocking(move || s.pause(0)).await.unwrap();
                if let Err(e) = r {
                    eprintln!("\nfaults: server pause: {e}");
                }
                sleep(p.dur).await;
                let s = h.servers.clone();
                if let Err(e) = tokio::task::spawn_blocking(move || s.resume(0)).await.unwrap() {
                    eprintln!("\nfaults: server resume: {e}");
                }
            }
            heal(h);
            h.busy.lock().unwrap().remove(&usize::MAX);
            None
        }
        Kind::OpResign | Kind::OpReelect | Kind::OpForce | Kind::OpHandover => {
            let limit = h.timing.lease * 2;
            let lease = h.timing.lease;
            let (target, outcome) = match p.kind {
                Kind::OpResign => match leader {
                    Some(l) => {
                        let node = h.nodes[l].name.clone();
                        let r = tokio::time::timeout(limit, h.on_writer(|p| {
                            let (svc_name, node) = (svc_name.clone(), node.clone());
                            async move { procedures::resign(&p, &svc_name, &node).await }
                        })).await;
                        (node, format!("{r:?}"))
                    }
                    None => ("-".to_string(), "no leader to resign".to_string()),
                },
                Kind::OpReelect => {
                    let r = tokio::time::timeout(limit, h.on_writer(|p| {
                        let svc_name = svc_name.clone();
                        async move { procedures::reelect(&p, &svc_name).await }
                    })).await;
                    (leader.map_or("-".into(), |l| h.nodes[l].name.clone()), format!("{r:?}"))
                }
                Kind::OpHandover => {
                    let node = h.nodes[p.pick % h.nodes.len()].name.clone();
                    let r = tokio::time::timeout(limit, h.on_writer(|p| {
                        let (svc_name, node) = (svc_name.clone(), node.clone());
                        async move { procedures::handover(&p, &svc_name, &node).await }
                    })).await;
                    (node, format!("{r:?}"))
                }
                _ => {
                    let node = h.nodes[p.pick % h.nodes.len()].name.clone();
                    let r = tokio::time::timeout(limit, h.on_writer(|p| {
                        let (svc_name, node) = (svc_name.clone(), node.clone());
                        async move { procedures::force_leader(&p, &svc_name, &node, lease).await }
                    })).await;
                    (node, format!("{r:?}"))
                }
            };
            record(target, format!("operator CALL on {svc_name}: {}", compact(&outcome)), false);
            heal(h);
            None
        }
        Kind::NodeKill | Kind::NodeIsolate => {
            node_fault(h, id, p, leader, &svc_name).await;
            None
        }
        Kind::FencedTxOpen => {
            let l = leader?;
            let node = h.nodes[l].name.clone();
            let admin = h.admin();
            let term = procedures::current_leader(&admin, &svc_name).await.ok()?.term;
            let mut conn = admin.get_conn().await.ok()?;
            conn.query_drop("START TRANSACTION").await.ok()?;
            if let Err(e) = procedures::assert_leader(&mut conn, &svc_name, &node, term).await {
                eprintln!("\nfaults: fenced-tx-open: assert_leader: {e}");
                return None;
            }
            // The takeover may wait for the server to end this transaction: lease + timeout + 1 s
            // (MariaDB's bound on an idle fenced transaction). MySQL has no such bound (README):
            // there the takeover waits for this transaction's ROLLBACK at the fault's end.
            let version: String = conn.query_first("SELECT VERSION()").await.ok()??;
            let unbounded_ms = if version.contains("MariaDB") { 0 } else { p.dur.as_millis() as u64 };
            let extra_ms = unbounded_ms + h.timing.timeout.as_millis() as u64 + 1000;
            h.log.write(json!({"ev": "inject", "id": id, "kind": name, "target": node, "svc": svc_name,
                               "detail": format!("transaction fenced at term {term} as {node}, then idle for {} ms", p.dur.as_millis()),
                               "from_heal": false, "lasting": true, "extra_ms": extra_ms, "t": mono_ns()}));
            // Runs alone, to its end: the row is share-locked meanwhile, so other faults would
            // only queue behind it (and its availability could not be judged).
            sleep(p.dur).await;
            // The server has normally ended it long ago; a rollback on a killed session fails.
            let _ = conn.query_drop("ROLLBACK").await;
            drop(conn);
            heal(h);
            None
        }
        Kind::CampaignAbandon => {
            let admin = h.admin();
            let mut holder = admin.get_conn().await.ok()?;
            holder.query_drop("START TRANSACTION").await.ok()?;
            holder.exec_drop("SELECT term FROM leader_election WHERE service_id = ? FOR UPDATE", (&svc_name,)).await.ok()?;
            record("row".into(), format!("{svc_name}'s row locked for {} ms; a campaign abandoned after 100 ms every {} ms", p.dur.as_millis(), p.param), true);
            // Runs alone, to its end (the row is locked meanwhile).
            let (dur, every, url) = (p.dur, Duration::from_millis(p.param), h.db_urls[0].clone());
            let until = tokio::time::Instant::now() + dur;
            for k in 0.. {
                let Ok(opts) = mysql_async::Opts::from_url(&url) else { break };
                // A client of its own that gives up after 100 ms and closes its connection.
                let abandon = async {
                    let mut c = mysql_async::Conn::new(opts).await?;
                    let r = tokio::time::timeout(Duration::from_millis(100),
                        procedures::campaign(&mut c, &svc_name, &format!("abandoner-{k}"), Duration::from_secs(1))).await;
                    drop(c); // abandoned mid-call: the connection is closed, the statement is not
                    Ok::<_, mysql_async::Error>(r.is_err())
                };
                let _ = abandon.await;
                if tokio::time::Instant::now() + every >= until { break }
                sleep(every).await;
            }
            sleep(until.saturating_duration_since(tokio::time::Instant::now())).await;
            let _ = holder.query_drop("ROLLBACK").await;
            drop(holder);
            heal(h);
            None
        }
        Kind::ClockStep => {
            let Some(f) = &h.faketime_file else { return None };
            // libfaketime reads an offset from real time: add this step to the total so far.
            let total: u64 = std::fs::read_to_string(f).ok().and_then(|s| s.trim().trim_start_matches('+').parse().ok()).unwrap_or(0) + p.param;
            record("server".into(), format!("server clock stepped forward {} s (now +{total} s)", p.param), false);
            std::fs::write(f, format!("+{total}\n")).unwrap();
            heal(h);
            // Let the step play out before the next one.
            sleep(h.timing.lease * 2).await;
            None
        }
    }
}

/// `Threads_connected` of the server behind `pool`, within 500 ms.
async fn threads_connected(pool: &Pool) -> Option<u64> {
    let q = async {
        let mut c = pool.get_conn().await.ok()?;
        let row: Option<(String, u64)> = c.query_first("SHOW GLOBAL STATUS LIKE 'Threads_connected'").await.ok()?;
        row.map(|(_, n)| n)
    };
    tokio::time::timeout(Duration::from_millis(500), q).await.ok().flatten()
}

fn compact(s: &str) -> String {
    let s: String = s.chars().filter(|c| *c != '\n').collect();
    match s.char_indices().nth(140) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s,
    }
}

/// A node fault of a cluster, run to its end (the fault loop waits: node faults run alone).
///
/// Two entries in `faults.jsonl`:
/// * `node-kill` / `node-isolate` (id `id`): from the kill, or from `gmcast.isolate=1`, until
///   the script returned (the node is gone, or out of the primary component). The others can
///   take over: availability is measured from the injection, against the bound plus the
///   cluster's eviction time (`extra_ms`): until the cluster evicts the node, no node commits.
/// * `node-restart` / `node-rejoin` (a fresh id after the planned ones), after the drawn
///   duration: from `galera.sh restart` (or `isolate off`) until the node is Synced. Its join
///   can stall commits again (state transfer, membership change) anywhere in that span, so its
///   allowance is the span itself plus the eviction time: a leader must be in office again
///   within lease + retry + eviction (+ slack) after the node is back. Its inject line is
///   written when the return is over (with the time it began), since the allowance needs its
///   length.
///
/// The "leader's node" is the node the leading candidate is attached to: its first URL
/// (candidate i sits on node i mod 3). The leader may be renewing through a fallback at that
/// moment (after an earlier fault moved it); the fault is then, in effect, a follower's node.
async fn node_fault(h: &Arc<Harness>, id: u64, p: &Plan, leader: Option<usize>, svc_name: &str) {
    let n = h.db_urls.len();
    let kill = p.kind == Kind::NodeKill;
    let name = kind_name(p.kind);
    let extra = h.servers.eviction().unwrap_or_default().as_millis() as u64;
    if h.down.lock().unwrap().iter().any(|d| *d) {
        // An earlier return failed: one more node down would leave no primary component.
        eprintln!("\nfaults: fault #{id} ({name}) skipped: a node is still down after a failed return");
        h.errors.lock().unwrap().push(format!("fault #{id} {name} skipped: a node is still down"));
        return;
    }
    let leader_home = leader.map(|l| h.home(l));
    let (target, role) = match leader_home {
        Some(ln) if p.at_leader => (ln, format!("the node of {}, leader of {svc_name}", h.nodes[leader.unwrap()].name)),
        Some(ln) => {
            let t = (0..n).filter(|&j| j != ln).nth(p.pick % (n - 1).max(1)).unwrap_or(ln);
            let on: Vec<String> = (0..h.nodes.len()).filter(|&i| h.home(i) == t).map(|i| h.nodes[i].name.clone()).collect();
            (t, format!("a follower's node ({}; {} leads {svc_name})", on.join(", "), h.nodes[leader.unwrap()].name))
        }
        None => (p.pick % n, format!("no leader of {svc_name} seen")),
    };
    h.busy.lock().unwrap().insert(usize::MAX);
    h.down.lock().unwrap()[target] = true;
    let label = format!("node{}", target + 1);
    let t0 = mono_ns();
    let s = h.servers.clone();
    let r = tokio::task::spawn_blocking(move || if kill { s.kill(target) } else { s.isolate(target, true) }).await.unwrap();
    let t1 = mono_ns();
    h.log.write(json!({"ev": "inject", "id": id, "kind": name, "target": label, "svc": svc_name,
        "detail": format!("{role}; {}, back after {} ms{}", if kill { "kill -9" } else { "gmcast.isolate=1" }, p.dur.as_millis(),
                          r.as_ref().err().map_or(String::new(), |e| format!(" (FAILED: {})", compact(e)))),
        "from_heal": false, "lasting": false, "extra_ms": extra, "t": t0}));
    h.log.write(json!({"ev": "heal", "id": id, "t": t1}));
    if let Err(e) = &r {
        eprintln!("\nfaults: {name} of {label}: {e}");
        h.errors.lock().unwrap().push(format!("fault #{id} {name} of {label}: {}", compact(e)));
    }
    sleep(p.dur).await;
    let rid = h.next_id.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let rname = if kill { "node-restart" } else { "node-rejoin" };
    let s = h.servers.clone();
    let r0 = mono_ns();
    let r = tokio::task::spawn_blocking(move || if kill { s.relaunch(target) } else { s.isolate(target, false) }).await.unwrap();
    let r1 = mono_ns();
    h.log.write(json!({"ev": "inject", "id": rid, "kind": rname, "target": label, "svc": svc_name,
        "detail": format!("return of fault #{id}: {} took {} ms{}", if kill { "restart until Synced" } else { "gmcast.isolate=0 until Synced" },
                          (r1 - r0) / 1_000_000, r.as_ref().err().map_or(String::new(), |e| format!(" (FAILED: {})", compact(e)))),
        "from_heal": false, "lasting": true, "extra_ms": extra + ((r1 - r0) / 1_000_000) as u64, "t": r0}));
    h.log.write(json!({"ev": "heal", "id": rid, "t": r1}));
    if let Err(e) = &r {
        eprintln!("\nfaults: {rname} of {label}: {e}");
        h.errors.lock().unwrap().push(format!("fault #{rid} {rname} of {label}: {}", compact(e)));
    }
    if r.is_ok() {
        // Fresh admin connections to the node that came back.
        if let Ok(pool) = mysqlleader::pool_from_url(&h.db_urls[target]) {
            let old = std::mem::replace(&mut *h.admins[target].lock().unwrap(), pool);
            let _ = old.disconnect().await;
        }
        h.down.lock().unwrap()[target] = false;
    }
    h.busy.lock().unwrap().remove(&usize::MAX);
}
