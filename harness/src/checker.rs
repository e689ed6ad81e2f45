//! The checker: reads only what the candidates logged and what the database recorded (the
//! history of terms and the fencing rows), and judges the run.
//!
//! Inputs, all in the run directory (see docs/faults.md):
//! * `nodes/*.jsonl` — the candidates' logs (see `harness/src/bin/candidate.rs` for the lines);
//! * `db/history.jsonl`, `db/fencing.jsonl`, `db/counter.jsonl` — dumps of
//!   `leader_election_history`, `faults_fencing` and `faults_counter` taken after the run;
//! * `run.json` — the run's parameters (lease, retry; for the availability bound);
//! * `faults.jsonl` — the harness's own record of the faults it injected. Used only to mark
//!   faults in the picture and to measure availability after each one, never for safety.
//!
//! Rules (each failure is a violation; any violation makes the run fail):
//! 1. Overlap. A leadership interval is one process's leadership of one term of one service:
//!    from the time it logged `start` to the earlier of its largest logged deadline and its
//!    logged `stop` (or `exit`). A process that logs nothing more (SIGKILL, SIGSTOP, the end of
//!    the run) ends at its largest logged deadline; nothing it logs later extends an interval
//!    of a term whose `stop` or whose end it passed. Two intervals of one service that
//!    intersect are a violation, unless they are one process's, of one term (a process leading
//!    its term again after its local deadline lapsed; a *restarted* process never resumes its
//!    predecessor's term: its elector's first campaign is preceded by a resign) — and unless the
//!    earlier term was ended early by an operator (`leader_election_history.ended_how` is
//!    `reelected`, `forced_out` or `resigned`: the database revoked the lease before its end,
//!    which no lease can protect against; only fencing can). Those are listed apart, with
//!    their length, never hidden.
//! 2. Terms. In the history, the terms of a service are 1, 2, 3, ... with none skipped, begin
//!    in order, and every term but the last is closed. In the logs, each term of a service was
//!    started by one node only, the node the history names; one process's terms never go down
//!    (the same term again is the node leading again after its local deadline lapsed while the
//!    database still held its lease: counted, allowed by the contract).
//! 3. Fencing. The counter of a service equals its number of fencing rows, whose values are
//!    1..N exactly (no lost or doubled increment). In counter order (the order the increments
//!    committed, since each one locks the counter row), terms never go down. Each row's term is
//!    the term the election row had inside its transaction (`seen_term`), its node is the one
//!    the history names for that term, and it was written before the next term began (by the
//!    database's clock). A row failing any of these is a stale-term commit. Every commit a
//!    candidate logged is in the table, with its term and node.
//! 4. Availability. After each fault, the time until a leader is in office again, measured
//!    from the injection (faults that leave the others able to take over) or from the heal
//!    (server faults, during which nobody can lead), against one lease plus one retry
//!    interval, plus the fault's own allowance when it carries one (`extra_ms`: a Galera
//!    cluster's eviction time, during which no node commits). Only measurements no other fault
//!    overlapped are judged, with an allowance (`slack_ms`) for scheduling on a shared machine;
//!    every measurement is reported.
//! Log anomalies (a renew with no start, unparsable lines) are violations too: the checker
//! will not judge logs it cannot read.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

/// One process's leadership of one term of one service.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    pub svc: String,
    pub node: String,
    pub pid: u64,
    pub term: u64,
    /// CLOCK_MONOTONIC ns.
    pub start: i64,
    pub end: i64,
    /// The largest deadline logged for it.
    pub deadline: i64,
    /// How it ended: `stop:<reason>`, `exit`, or `deadline` (nothing logged: killed, stopped, end of run).
    pub end_how: String,
}

#[derive(Clone, Debug, Default)]
pub struct HistoryRow {
    pub svc: String,
    pub term: u64,
    pub leader: String,
    pub began_us: i64,
    pub began_how: String,
    pub ended_us: Option<i64>,
    pub ended_how: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct FencingRow {
    pub svc: String,
    pub value: u64,
    pub term: u64,
    pub node: String,
    pub seen_term: u64,
    pub written_us: i64,
}

#[derive(Clone, Debug, Default)]
pub struct Fault {
    pub id: u64,
    pub kind: String,
    pub target: String,
    pub svc: Option<String>,
    pub detail: String,
    pub t0: i64,
    pub t1: Option<i64>,
    /// Availability is measured from the heal (true) or from the injection (false).
    pub from_heal: bool,
    /// The fault can take a leader down at any time until its heal (network, server), not only
    /// at its injection (kill, stop, operator).
    pub lasting: bool,
    /// Added to this fault's availability bound, in ms (the inject line's `extra_ms`, 0 when
    /// absent): a delay the fault itself causes before anyone can take over, e.g. the time a
    /// Galera cluster needs to evict a dead or cut-off node, during which no node commits.
    pub extra_ms: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Params {
    pub seed: u64,
    pub lease_ms: u64,
    pub renew_ms: u64,
    pub retry_ms: u64,
    pub timeout_ms: u64,
    pub slack_ms: u64,
    pub services: Vec<String>,
    pub nodes: Vec<String>,
    pub t_start: i64,
    pub t_end: i64,
    pub title: String,
    /// Overlaps are expected (the clock-step experiment): reported, but not a failure.
    pub expect_overlaps: bool,
    /// The most server connections allowed at once (run.json `connection_bound`; 0: not checked).
    pub connection_bound: u64,
}

/// Everything the checker reads.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    pub params: Params,
    /// node -> its log lines, in file order.
    pub logs: BTreeMap<String, Vec<Value>>,
    pub history: Vec<HistoryRow>,
    pub fencing: Vec<FencingRow>,
    pub counters: BTreeMap<String, u64>,
    pub faults: Vec<Fault>,
    /// The server's `Threads_connected`, sampled: (time, count) (`db/connections.jsonl`).
    pub connections: Vec<(i64, u64)>,
}

#[derive(Clone, Debug)]
pub struct Overlap {
    pub a: Interval,
    pub b: Interval,
    pub ns: i64,
    /// Why it is allowed (`None`: a violation).
    pub excused: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Availability {
    pub fault: Fault,
    pub svc: String,
    /// From the reference point (injection or heal) to a leader in office, ns; `None`: never.
    pub to_leader_ns: Option<i64>,
    /// Length of the leaderless stretch itself, ns.
    pub leaderless_ns: i64,
    /// Judged: no other fault was active from one lease before the leaderless stretch (or the
    /// injection, if earlier) until its end.
    pub clean: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub violations: Vec<String>,
    pub intervals: Vec<Interval>,
    pub overlaps: Vec<Overlap>,
    pub availability: Vec<Availability>,
    pub stale_commits: usize,
    pub commits_db: usize,
    pub commits_logged: usize,
    pub rogue_commits: usize,
    pub fenced: usize,
    /// Increments refused although the node still believed it led (its local deadline had not
    /// passed): what fencing saved when the lease alone could not.
    pub fenced_while_leading: usize,
    pub tx_errors: usize,
    pub commits_after_deadline: usize,
    pub unobserved_terms: usize,
    /// A process leading the same term again after its local deadline lapsed (its lease was
    /// still held in the database).
    pub resumed_terms: usize,
    pub terms: usize,
    pub anomalies: Vec<String>,
    /// Closest approach between a leader's end and the next leader's start, ns (excused pairs aside).
    pub min_handover_ns: Option<i64>,
    /// The most server connections seen at once outside the windows of faults that hold
    /// connections open by their nature (a stalled or slow link, a stopped server), and when.
    pub max_connections: Option<(u64, i64)>,
}

impl Report {
    pub fn real_overlaps(&self) -> usize { self.overlaps.iter().filter(|o| o.excused.is_none()).count() }
    pub fn passed(&self) -> bool { self.violations.is_empty() }
}

// ---------------------------------------------------------------------------------------------
// Reading a run directory.

fn read_jsonl(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v) => out.push(v),
            // A torn last line cannot happen with one write per line; say so if it does.
            Err(e) => out.push(serde_json::json!({"ev": "unparsable", "line": i + 1, "error": e.to_string()})),
        }
    }
    Ok(out)
}

fn s(v: &Value, k: &str) -> String { v.get(k).and_then(Value::as_str).unwrap_or("").to_string() }
fn u(v: &Value, k: &str) -> u64 { v.get(k).and_then(Value::as_u64).unwrap_or(0) }
fn i(v: &Value, k: &str) -> i64 { v.get(k).and_then(Value::as_i64).unwrap_or(0) }

pub fn load(dir: &Path) -> Result<Inputs, String> {
    let run = std::fs::read_to_string(dir.join("run.json")).map_err(|e| format!("run.json: {e}"))?;
    let run: Value = serde_json::from_str(&run).map_err(|e| format!("run.json: {e}"))?;
    let strings = |k: &str| -> Vec<String> {
        run.get(k).and_then(Value::as_array).map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect()).unwrap_or_default()
    };
    let params = Params {
        seed: u(&run, "seed"),
        lease_ms: u(&run, "lease_ms"),
        renew_ms: u(&run, "renew_ms"),
        retry_ms: u(&run, "retry_ms"),
        timeout_ms: u(&run, "timeout_ms"),
        slack_ms: u(&run, "slack_ms"),
        services: strings("services"),
        nodes: strings("nodes"),
        t_start: i(&run, "t_start"),
        t_end: i(&run, "t_end"),
        title: s(&run, "title"),
        expect_overlaps: run.get("expect_overlaps").and_then(Value::as_bool).unwrap_or(false),
        connection_bound: u(&run, "connection_bound"),
    };
    let mut logs = BTreeMap::new();
    let nodes_dir = dir.join("nodes");
    let mut entries: Vec<_> = std::fs::read_dir(&nodes_dir)
        .map_err(|e| format!("{}: {e}", nodes_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    entries.sort();
    for p in entries {
        let node = p.file_stem().unwrap().to_string_lossy().into_owned();
        logs.insert(node, read_jsonl(&p)?);
    }
    let history = read_jsonl(&dir.join("db/history.jsonl"))?
        .iter()
        .map(|v| HistoryRow {
            svc: s(v, "svc"),
            term: u(v, "term"),
            leader: s(v, "leader"),
            began_us: i(v, "began_us"),
            began_how: s(v, "began_how"),
            ended_us: v.get("ended_us").and_then(Value::as_i64),
            ended_how: v.get("ended_how").and_then(Value::as_str).map(String::from),
        })
        .collect();
    let fencing = read_jsonl(&dir.join("db/fencing.jsonl"))?
        .iter()
        .map(|v| FencingRow {
            svc: s(v, "svc"),
            value: u(v, "value"),
            term: u(v, "term"),
            node: s(v, "node"),
            seen_term: u(v, "seen_term"),
            written_us: i(v, "written_us"),
        })
        .collect();
    let counters = read_jsonl(&dir.join("db/counter.jsonl"))?.iter().map(|v| (s(v, "svc"), u(v, "value"))).collect();
    let mut faults: BTreeMap<u64, Fault> = BTreeMap::new();
    let fpath = dir.join("faults.jsonl");
    if fpath.exists() {
        for v in read_jsonl(&fpath)? {
            let id = u(&v, "id");
            match s(&v, "ev").as_str() {
                "inject" => {
                    faults.insert(id, Fault {
                        id,
                        kind: s(&v, "kind"),
                        target: s(&v, "target"),
                        svc: v.get("svc").and_then(Value::as_str).map(String::from),
                        detail: s(&v, "detail"),
                        t0: i(&v, "t"),
                        t1: None,
                        from_heal: v.get("from_heal").and_then(Value::as_bool).unwrap_or(false),
                        lasting: v.get("lasting").and_then(Value::as_bool).unwrap_or(false),
                        extra_ms: u(&v, "extra_ms"),
                    });
                }
                "heal" => {
                    if let Some(f) = faults.get_mut(&id) {
                        f.t1 = Some(i(&v, "t"));
                    }
                }
                _ => {}
            }
        }
    }
    let connections = match read_jsonl(&dir.join("db").join("connections.jsonl")) {
        Ok(lines) => lines.iter().map(|v| (i(v, "t"), u(v, "n"))).collect(),
        Err(_) => Vec::new(),
    };
    Ok(Inputs { params, logs, history, fencing, counters, faults: faults.into_values().collect(), connections })
}

// ---------------------------------------------------------------------------------------------
// Rule 1: leadership intervals from the logs.

/// Builds every leadership interval from the logs; anomalies are reported, not guessed around.
pub fn intervals(logs: &BTreeMap<String, Vec<Value>>, anomalies: &mut Vec<String>) -> Vec<Interval> {
    let mut out = Vec::new();
    for (file_node, lines) in logs {
        // svc -> the open interval of the current process.
        let mut open: HashMap<String, Interval> = HashMap::new();
        let mut pid = None::<u64>;
        let close_all = |open: &mut HashMap<String, Interval>, out: &mut Vec<Interval>, at: Option<i64>, how: &str| {
            let mut keys: Vec<String> = open.keys().cloned().collect();
            keys.sort();
            for k in keys {
                let mut iv = open.remove(&k).unwrap();
                iv.end = at.map_or(iv.deadline, |t| t.min(iv.deadline));
                iv.end_how = if at.is_some_and(|t| t < iv.deadline) { how.to_string() } else { "deadline".to_string() };
                out.push(iv);
            }
        };
        for (n, v) in lines.iter().enumerate() {
            let ev = s(v, "ev");
            let t = i(v, "t");
            let line_pid = u(v, "pid");
            if ev == "unparsable" {
                anomalies.push(format!("{file_node}: line {} is not JSON: {}", u(v, "line"), s(v, "error")));
                continue;
            }
            if pid != Some(line_pid) {
                // A new process (or the first): whatever the old one held ends at its deadline.
                close_all(&mut open, &mut out, None, "deadline");
                if ev != "boot" {
                    anomalies.push(format!("{file_node}: line {} of pid {line_pid} comes before its boot line", n + 1));
                }
                pid = Some(line_pid);
            }
            let node = s(v, "node");
            let svc = s(v, "svc");
            let term = u(v, "term");
            match ev.as_str() {
                "start" => {
                    if let Some(mut old) = open.remove(&svc) {
                        old.end = t.min(old.deadline);
                        old.end_how = "superseded".into();
                        out.push(old);
                    }
                    let deadline = i(v, "deadline");
                    open.insert(svc.clone(), Interval {
                        svc, node, pid: line_pid, term, start: t, end: deadline, deadline, end_how: String::new(),
                    });
                }
                "renew" => match open.get_mut(&svc) {
                    Some(iv) if iv.term == term => iv.deadline = iv.deadline.max(i(v, "deadline")),
                    _ => anomalies.push(format!("{file_node}: line {}: renew of {svc} term {term} with no open start", n + 1)),
                },
                "stop" => {
                    if let Some(mut iv) = open.remove(&svc) {
                        if iv.term != term {
                            anomalies.push(format!("{file_node}: line {}: stop of term {term} while term {} is open", n + 1, iv.term));
                        }
                        iv.end = t.min(iv.deadline);
                        iv.end_how = if t < iv.deadline { format!("stop:{}", s(v, "reason")) } else { "deadline".into() };
                        out.push(iv);
                    }
                }
                "exit" => close_all(&mut open, &mut out, Some(t), "exit"),
                "lagged" => anomalies.push(format!("{file_node}: line {}: the event channel lagged", n + 1)),
                _ => {}
            }
        }
        close_all(&mut open, &mut out, None, "deadline");
    }
    out.retain(|iv| iv.end > iv.start);
    out.sort_by(|a, b| (a.svc.as_str(), a.start).cmp(&(b.svc.as_str(), b.start)));
    out
}

const OPERATOR_ENDS: [&str; 3] = ["reelected", "forced_out", "resigned"];

fn overlaps(ivs: &[Interval], history: &HashMap<(String, u64), &HistoryRow>) -> (Vec<Overlap>, Option<i64>) {
    let mut out = Vec::new();
    let mut min_handover: Option<i64> = None;
    let mut by_svc: BTreeMap<&str, Vec<&Interval>> = BTreeMap::new();
    for iv in ivs {
        by_svc.entry(iv.svc.as_str()).or_default().push(iv);
    }
    for (_, list) in by_svc {
        // `list` is sorted by start. Compare each interval with every earlier one that could
        // still be open (quadratic in the worst case; runs have thousands of intervals at most).
        for j in 0..list.len() {
            for k in 0..j {
                let (a, b) = (list[k], list[j]);
                let same = a.node == b.node && a.term == b.term && a.pid == b.pid;
                if b.start < a.end {
                    if same {
                        continue;
                    }
                    let earlier_term = a.term.min(b.term);
                    let ended = history.get(&(a.svc.clone(), earlier_term)).and_then(|h| h.ended_how.clone());
                    let excused = ended
                        .filter(|how| OPERATOR_ENDS.contains(&how.as_str()) && a.term != b.term)
                        .map(|how| format!("term {earlier_term} ended `{how}` by the database before its lease ran out"));
                    out.push(Overlap { a: a.clone(), b: b.clone(), ns: a.end.min(b.end) - b.start, excused });
                } else if !same && a.term < b.term {
                    let revoked = history
                        .get(&(a.svc.clone(), a.term))
                        .and_then(|h| h.ended_how.as_deref())
                        .is_some_and(|how| OPERATOR_ENDS.contains(&how));
                    if !revoked {
                        let gap = b.start - a.end;
                        min_handover = Some(min_handover.map_or(gap, |m: i64| m.min(gap)));
                    }
                }
            }
        }
    }
    (out, min_handover)
}

// ---------------------------------------------------------------------------------------------
// The whole check.

pub fn check(inp: &Inputs) -> Report {
    let mut r = Report::default();
    let p = &inp.params;
    let mut anomalies = Vec::new();
    r.intervals = intervals(&inp.logs, &mut anomalies);
    for a in &anomalies {
        r.violations.push(format!("log anomaly: {a}"));
    }
    r.anomalies = anomalies;
    let hist: HashMap<(String, u64), &HistoryRow> = inp.history.iter().map(|h| ((h.svc.clone(), h.term), h)).collect();

    // 1. Overlaps.
    let (ovs, min_handover) = overlaps(&r.intervals, &hist);
    r.min_handover_ns = min_handover;
    for o in &ovs {
        if o.excused.is_none() && !p.expect_overlaps {
            r.violations.push(format!(
                "overlap in {}: {} term {} [{}..{}] and {} term {} [{}..{}] share {:.1} ms",
                o.a.svc, o.a.node, o.a.term, rel(p, o.a.start), rel(p, o.a.end), o.b.node, o.b.term,
                rel(p, o.b.start), rel(p, o.b.end), o.ns as f64 / 1e6
            ));
        }
    }
    r.overlaps = ovs;

    // 2. Terms: the history.
    let mut hist_by_svc: BTreeMap<&str, Vec<&HistoryRow>> = BTreeMap::new();
    for h in &inp.history {
        hist_by_svc.entry(h.svc.as_str()).or_default().push(h);
    }
    for (svc, rows) in hist_by_svc.iter_mut() {
        rows.sort_by_key(|h| h.term);
        r.terms += rows.len();
        for (idx, h) in rows.iter().enumerate() {
            let want = idx as u64 + 1;
            if h.term != want {
                r.violations.push(format!("history of {svc}: term {} where term {want} was due (a term skipped or doubled)", h.term));
                break;
            }
            if idx > 0 && h.began_us < rows[idx - 1].began_us {
                r.violations.push(format!("history of {svc}: term {} began before term {}", h.term, rows[idx - 1].term));
            }
            if idx + 1 < rows.len() && h.ended_us.is_none() {
                r.violations.push(format!("history of {svc}: term {} is not closed though term {} began", h.term, h.term + 1));
            }
        }
    }
    //    ... and the logs.
    let mut started: BTreeMap<(String, u64), BTreeSet<String>> = BTreeMap::new();
    for (node, lines) in &inp.logs {
        let mut last_by_pid: HashMap<(u64, String), u64> = HashMap::new();
        let mut last_by_node: HashMap<String, u64> = HashMap::new();
        for v in lines.iter().filter(|v| s(v, "ev") == "start") {
            let (svc, term, pid) = (s(v, "svc"), u(v, "term"), u(v, "pid"));
            started.entry((svc.clone(), term)).or_default().insert(s(v, "node"));
            if let Some(&prev) = last_by_pid.get(&(pid, svc.clone())) {
                // The same term again is a node leading again after its local deadline lapsed
                // while the database still held its lease (a renew that failed, or came back
                // late, and the next one in time): the contract keeps the term for that.
                if term < prev {
                    r.violations.push(format!("{node} (pid {pid}) started {svc} term {term} after term {prev}: terms must rise"));
                } else if term == prev {
                    r.resumed_terms += 1;
                }
            }
            if let Some(&prev) = last_by_node.get(&svc) {
                if term < prev {
                    r.violations.push(format!("{node} started {svc} term {term} after term {prev} (in an earlier process)"));
                }
            }
            last_by_pid.insert((pid, svc.clone()), term);
            last_by_node.insert(svc, term);
        }
    }
    for ((svc, term), nodes) in &started {
        if nodes.len() > 1 {
            r.violations.push(format!("{svc} term {term} was started by more than one node: {nodes:?}"));
        }
        match hist.get(&(svc.clone(), *term)) {
            None => r.violations.push(format!("{svc} term {term} was logged as started but is not in the history")),
            Some(h) if !nodes.contains(&h.leader) || nodes.len() != 1 => r.violations.push(format!(
                "{svc} term {term}: the history names {} but {nodes:?} logged it", h.leader)),
            _ => {}
        }
    }
    r.unobserved_terms = inp.history.iter().filter(|h| !started.contains_key(&(h.svc.clone(), h.term))).count();

    // 3. Fencing.
    let mut rows_by_svc: BTreeMap<&str, Vec<&FencingRow>> = BTreeMap::new();
    for f in &inp.fencing {
        rows_by_svc.entry(f.svc.as_str()).or_default().push(f);
    }
    let mut stale: BTreeSet<(String, u64)> = BTreeSet::new();
    let mut stale_note = |r: &mut Report, f: &FencingRow, why: String| {
        if stale.insert((f.svc.clone(), f.value)) {
            r.violations.push(format!("stale-term commit in {} (counter value {}, term {}, node {}): {why}", f.svc, f.value, f.term, f.node));
        }
    };
    let services: BTreeSet<&str> = rows_by_svc.keys().copied().chain(inp.counters.keys().map(String::as_str)).collect();
    for svc in services {
        let mut rows = rows_by_svc.get(svc).cloned().unwrap_or_default();
        rows.sort_by_key(|f| f.value);
        r.commits_db += rows.len();
        let counter = inp.counters.get(svc).copied().unwrap_or(0);
        if counter != rows.len() as u64 {
            r.violations.push(format!("{svc}: the counter is {counter} but {} fencing rows exist (lost or doubled increment)", rows.len()));
        }
        for (idx, f) in rows.iter().enumerate() {
            if f.value != idx as u64 + 1 {
                r.violations.push(format!("{svc}: fencing row with counter value {} where {} was due (lost or doubled increment)", f.value, idx + 1));
                break;
            }
        }
        let mut max_term = 0;
        for f in &rows {
            if f.term < max_term {
                stale_note(&mut r, f, format!("committed after a commit of term {max_term}"));
            }
            max_term = max_term.max(f.term);
            if f.seen_term != f.term {
                stale_note(&mut r, f, format!("the election row had term {} inside its transaction", f.seen_term));
            }
            match hist.get(&(f.svc.clone(), f.term)) {
                None => stale_note(&mut r, f, "its term is not in the history".into()),
                Some(h) => {
                    if h.leader != f.node {
                        stale_note(&mut r, f, format!("term {} was held by {}", f.term, h.leader));
                    }
                    if f.written_us < h.began_us {
                        stale_note(&mut r, f, "written before its term began (database clock)".into());
                    }
                }
            }
            if let Some(next) = hist.get(&(f.svc.clone(), f.term + 1)) {
                if f.written_us >= next.began_us {
                    stale_note(&mut r, f, format!("written after term {} began (database clock)", f.term + 1));
                }
            }
        }
    }
    r.stale_commits = stale.len();
    let by_value: HashMap<(String, u64), &FencingRow> = inp.fencing.iter().map(|f| ((f.svc.clone(), f.value), f)).collect();
    for (node, lines) in &inp.logs {
        for v in lines {
            match s(v, "ev").as_str() {
                "commit" => {
                    r.commits_logged += 1;
                    let rogue = v.get("rogue").and_then(Value::as_bool).unwrap_or(false);
                    if rogue {
                        r.rogue_commits += 1;
                    }
                    let (svc, term, value) = (s(v, "svc"), u(v, "term"), u(v, "value"));
                    match by_value.get(&(svc.clone(), value)) {
                        Some(f) if f.term == term && &f.node == node => {}
                        _ => r.violations.push(format!("{node} logged a commit of {svc} value {value} term {term} that the table does not hold")),
                    }
                    let t = i(v, "t");
                    let inside = r.intervals.iter().any(|iv| iv.svc == svc && &iv.node == node && iv.term == term && iv.start <= t && t <= iv.end);
                    if !inside {
                        r.commits_after_deadline += 1;
                    }
                }
                "fenced" => {
                    r.fenced += 1;
                    if !v.get("rogue").and_then(Value::as_bool).unwrap_or(true) {
                        r.fenced_while_leading += 1;
                    }
                }
                "tx_error" => r.tx_errors += 1,
                _ => {}
            }
        }
    }

    // 4. Availability.
    let bound = ((p.lease_ms + p.retry_ms) * 1_000_000) as i64;
    let slack = (p.slack_ms * 1_000_000) as i64;
    for f in &inp.faults {
        for svc in &p.services {
            let a = availability(f, svc, &r.intervals, &inp.faults, p);
            if a.clean {
                let extra = (f.extra_ms * 1_000_000) as i64;
                match a.to_leader_ns {
                    None => r.violations.push(format!("availability: no leader of {svc} after fault #{} ({}) until the end", f.id, f.kind)),
                    Some(ns) if ns > bound + extra + slack => r.violations.push(format!(
                        "availability: {svc} had no leader for {:.0} ms after fault #{} ({} {}), over the bound of {} ms{} + {} ms slack",
                        ns as f64 / 1e6, f.id, f.kind, f.target, bound / 1_000_000,
                        if f.extra_ms > 0 { format!(" + {} ms for this fault", f.extra_ms) } else { String::new() }, p.slack_ms)),
                    _ => {}
                }
            }
            r.availability.push(a);
        }
    }

    // 5. Connections: never more than the bound, outside the windows of faults that keep
    //    connections open by their nature (a stalled, slow or lossy link holds even the closes
    //    of abandoned connections; a stopped or killed server), each until one lease after its heal.
    if p.connection_bound > 0 {
        let lease = (p.lease_ms * 1_000_000) as i64;
        let excluded: Vec<(i64, i64)> = inp
            .faults
            .iter()
            .filter(|f| matches!(f.kind.as_str(), "net-stall" | "net-delay" | "net-lossy" | "server-kill" | "server-pause"))
            .map(|f| (f.t0, f.t1.unwrap_or(p.t_end) + lease))
            .collect();
        r.max_connections = inp
            .connections
            .iter()
            .filter(|(t, _)| !excluded.iter().any(|(a, b)| a <= t && t <= b))
            .map(|&(t, n)| (n, t))
            .max();
        if let Some((n, t)) = r.max_connections {
            if n > p.connection_bound {
                r.violations.push(format!(
                    "connections: the server held {n} connections at {}, over the bound of {} (the harness's own + per candidate one pool \
                     connection per service, one for its fenced work and one wake-up connection per service)",
                    rel(p, t), p.connection_bound));
            }
        }
    }
    r
}

/// The union of leadership of `svc`, as sorted disjoint spans.
fn coverage(svc: &str, ivs: &[Interval]) -> Vec<(i64, i64)> {
    let mut spans: Vec<(i64, i64)> = ivs.iter().filter(|iv| iv.svc == svc).map(|iv| (iv.start, iv.end)).collect();
    spans.sort();
    let mut out: Vec<(i64, i64)> = Vec::new();
    for (a, b) in spans {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

fn availability(f: &Fault, svc: &str, ivs: &[Interval], all: &[Fault], p: &Params) -> Availability {
    let cov = coverage(svc, ivs);
    let lease = (p.lease_ms as i64) * 1_000_000;
    let reference = if f.from_heal { f.t1.unwrap_or(f.t0) } else { f.t0 };
    // A leadership the fault takes down ends by one lease after the fault hits it.
    let window_end = if f.lasting { f.t1.unwrap_or(f.t0).max(f.t0) } else { f.t0 } + lease;
    // The leaderless stretches: before the first leader, between leaders, after the last
    // (open: no leader until the end of the run).
    let mut gaps: Vec<(i64, Option<i64>)> = Vec::new();
    let mut prev = p.t_start;
    for &(a, b) in &cov {
        if a > prev {
            gaps.push((prev, Some(a)));
        }
        prev = prev.max(b);
    }
    if prev < p.t_end {
        gaps.push((prev, None));
    }
    // The first stretch that the fault could have caused: one under way at or after the
    // injection that began before the window ends.
    let hit = gaps.into_iter().find(|&(gs, ge)| gs < window_end && ge.is_none_or(|e| e > f.t0));
    let (to_leader_ns, leaderless_ns, span) = match hit {
        None => (Some(0), 0, None),
        Some((gs, Some(ge))) => (Some((ge - reference).max(0)), ge - gs.max(f.t0), Some((gs, ge))),
        Some((gs, None)) => (None, p.t_end - gs.max(f.t0), Some((gs, p.t_end))),
    };
    // Judged only when no other fault was active from one lease before the leaderless stretch
    // (when the leader it ended could have been hit) until its end. No stretch: nothing to judge
    // but a zero.
    let clean = match span {
        None => true,
        Some((gs, ge)) => !all.iter().any(|g| g.id != f.id && g.t0 <= ge && g.t1.unwrap_or(g.t0).max(g.t0) >= gs.min(f.t0) - lease),
    };
    Availability { fault: f.clone(), svc: svc.to_string(), to_leader_ns, leaderless_ns, clean }
}

/// The per-kind allowances of faults that carry one (`extra_ms`), for the report.
fn extras(inp: &Inputs) -> String {
    let mut by_kind: BTreeMap<&str, u64> = BTreeMap::new();
    for f in inp.faults.iter().filter(|f| f.extra_ms > 0) {
        let e = by_kind.entry(f.kind.as_str()).or_default();
        *e = (*e).max(f.extra_ms);
    }
    by_kind.iter().map(|(k, v)| format!(", plus {v} ms after {k}")).collect()
}

fn rel(p: &Params, t: i64) -> String { format!("{:.3}s", (t - p.t_start) as f64 / 1e9) }

// ---------------------------------------------------------------------------------------------
// The report.

pub fn markdown(inp: &Inputs, r: &Report, svg_name: &str) -> String {
    let p = &inp.params;
    let mut m = String::new();
    let ms = |ns: i64| format!("{:.0}", ns as f64 / 1e6);
    let _ = writeln!(m, "# Fault run: {}\n", if p.title.is_empty() { "report" } else { &p.title });
    let _ = writeln!(m, "**Result: {}**\n", if r.passed() { "PASS".to_string() } else { format!("FAIL ({} violations)", r.violations.len()) });
    let _ = writeln!(m, "| | |\n| --- | --- |");
    let _ = writeln!(m, "| seed | {} |", p.seed);
    let _ = writeln!(m, "| duration | {:.1} s |", (p.t_end - p.t_start) as f64 / 1e9);
    let _ = writeln!(m, "| candidates | {} ({}) |", p.nodes.len(), p.nodes.join(", "));
    let _ = writeln!(m, "| services | {} |", p.services.join(", "));
    let _ = writeln!(m, "| lease / renew / retry / request timeout | {} / {} / {} / {} ms |", p.lease_ms, p.renew_ms, p.retry_ms, p.timeout_ms);
    let _ = writeln!(m, "| faults injected | {} |", inp.faults.len());
    let _ = writeln!(m, "| leadership intervals | {} |", r.intervals.len());
    let _ = writeln!(m, "| **overlapping leaderships** | **{}**{} |", r.real_overlaps(), if p.expect_overlaps { " (expected in this experiment)" } else { "" });
    let excused: Vec<&Overlap> = r.overlaps.iter().filter(|o| o.excused.is_some()).collect();
    let _ = writeln!(m, "| overlaps after an operator revoked a lease (reelect/force/resign) | {} (longest {} ms) |", excused.len(),
        excused.iter().map(|o| o.ns).max().map_or("-".into(), ms));
    let _ = writeln!(m, "| closest handover (end of one leader to start of the next) | {} |",
        r.min_handover_ns.map_or("-".into(), |ns| format!("{:.2} ms", ns as f64 / 1e6)));
    let _ = writeln!(m, "| terms in the history / never observed by their holder | {} / {} |", r.terms, r.unobserved_terms);
    let _ = writeln!(m, "| a node leading its term again after its local deadline lapsed (lease still held in the database) | {} |", r.resumed_terms);
    let _ = writeln!(m, "| fenced commits in the table / logged by candidates | {} / {} |", r.commits_db, r.commits_logged);
    let _ = writeln!(m, "| **stale-term commits** | **{}** |", r.stale_commits);
    let _ = writeln!(m, "| increments refused by `assert_leader`: in all / from a node that still believed it led | {} / {} |", r.fenced, r.fenced_while_leading);
    let _ = writeln!(m, "| zombie increments (last term held, while not leading) that committed because the database still held that node's lease at that term | {} |", r.rogue_commits);
    let _ = writeln!(m, "| commits logged after the committer's local deadline (kept safe by `assert_leader`: its share lock, and on Galera its write fence) | {} |", r.commits_after_deadline);
    let _ = writeln!(m, "| increments failed otherwise (connection, timeout, lock wait) | {} |", r.tx_errors);
    let lost: Vec<&Availability> = r.availability.iter().filter(|a| a.leaderless_ns > 0 || a.to_leader_ns.is_none()).collect();
    let judged: Vec<&&Availability> = lost.iter().filter(|a| a.clean).collect();
    let worst = judged.iter().filter_map(|a| a.to_leader_ns).max();
    let _ = writeln!(m, "| availability: fault × service measurements / leader lost / judged (no other fault in the way) / worst judged time to a new leader | {} / {} / {} / {} ms (bound {} + {} ms slack) |",
        r.availability.len(), lost.len(), judged.len(), worst.map_or("-".into(), ms), p.lease_ms + p.retry_ms, p.slack_ms);
    if p.connection_bound > 0 {
        let _ = writeln!(m, "| most server connections at once (outside stalled/slow links and server faults) / bound | {} / {} |",
            r.max_connections.map_or("-".into(), |(n, _)| n.to_string()), p.connection_bound);
    }
    let _ = writeln!(m);
    let _ = writeln!(m, "![timeline]({svg_name})\n");
    if !r.violations.is_empty() {
        let _ = writeln!(m, "## Violations\n");
        for v in r.violations.iter().take(200) {
            let _ = writeln!(m, "- {v}");
        }
        if r.violations.len() > 200 {
            let _ = writeln!(m, "- ... and {} more", r.violations.len() - 200);
        }
        let _ = writeln!(m);
    }
    // Availability by kind.
    let _ = writeln!(m, "## Availability by fault kind\n");
    let _ = writeln!(m, "Per fault and service: did the service lose its leader (a leaderless stretch began within one lease of the fault, or of its heal for network and server faults)? If so, the time from the fault — from its heal for server faults, during which nobody can lead — until a leader was in office again. Judged: no other fault was active from one lease before the stretch to its end; those must stay within lease + retry ({} ms) plus {} ms slack{}.\n", p.lease_ms + p.retry_ms, p.slack_ms,
        extras(inp));
    let _ = writeln!(m, "| fault kind | from | measurements | leader kept | leader lost | judged | judged: median ms | p90 ms | max ms | all losses: max ms to a leader | longest leaderless ms |");
    let _ = writeln!(m, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut kinds: BTreeMap<&str, Vec<&Availability>> = BTreeMap::new();
    for a in &r.availability {
        kinds.entry(a.fault.kind.as_str()).or_default().push(a);
    }
    for (kind, list) in &kinds {
        let lost: Vec<&&Availability> = list.iter().filter(|a| a.leaderless_ns > 0 || a.to_leader_ns.is_none()).collect();
        let mut vals: Vec<i64> = lost.iter().filter(|a| a.clean).filter_map(|a| a.to_leader_ns).collect();
        vals.sort();
        let q = |f: f64| vals.get(((vals.len() as f64 - 1.0) * f).round() as usize).map_or("-".into(), |&v| ms(v));
        let never = lost.iter().any(|a| a.to_leader_ns.is_none());
        let all_max = lost.iter().filter_map(|a| a.to_leader_ns).max();
        let _ = writeln!(m, "| {kind} | {} | {} | {} | {} | {} | {} | {} | {} | {}{} | {} |", if list[0].fault.from_heal { "heal" } else { "injection" },
            list.len(), list.len() - lost.len(), lost.len(), vals.len(), q(0.5), q(0.9), vals.last().map_or("-".into(), |&v| ms(v)),
            all_max.map_or("-".into(), ms), if never { " (and never)" } else { "" },
            lost.iter().map(|a| a.leaderless_ns).max().map_or("-".into(), ms));
    }
    let _ = writeln!(m);
    let real: Vec<&Overlap> = r.overlaps.iter().filter(|o| o.excused.is_none()).collect();
    if !real.is_empty() {
        let _ = writeln!(m, "## Overlapping leaderships\n");
        let _ = writeln!(m, "| service | earlier | later | from s | shared ms | earlier ended |\n| --- | --- | --- | --- | --- | --- |");
        for o in real.iter().take(100) {
            let _ = writeln!(m, "| {} | {} term {} | {} term {} | {:.3} | {:.1} | {} |", o.a.svc, o.a.node, o.a.term, o.b.node, o.b.term,
                (o.b.start - p.t_start) as f64 / 1e9, o.ns as f64 / 1e6, o.a.end_how);
        }
        let _ = writeln!(m);
    }
    if !excused.is_empty() {
        let _ = writeln!(m, "## Overlaps after an operator revoked a lease\n");
        let _ = writeln!(m, "`reelect`, `force_leader` and `resign` end a lease in the database before the holder's local deadline; the holder learns it at its next renew. Until then two nodes believe they lead — this is where `assert_leader` fencing, checked above, is what keeps writes safe.\n");
        let _ = writeln!(m, "| service | earlier | later | shared ms | why allowed |\n| --- | --- | --- | --- | --- |");
        for o in excused.iter().take(50) {
            let _ = writeln!(m, "| {} | {} term {} | {} term {} | {:.1} | {} |", o.a.svc, o.a.node, o.a.term, o.b.node, o.b.term, o.ns as f64 / 1e6, o.excused.as_deref().unwrap_or(""));
        }
        let _ = writeln!(m);
    }
    let _ = writeln!(m, "## Faults\n");
    let _ = writeln!(m, "| # | at s | healed s | kind | target | detail |\n| --- | --- | --- | --- | --- | --- |");
    for f in &inp.faults {
        let _ = writeln!(m, "| {} | {:.2} | {} | {} | {} | {} |", f.id, (f.t0 - p.t_start) as f64 / 1e9,
            f.t1.map_or("-".into(), |t| format!("{:.2}", (t - p.t_start) as f64 / 1e9)), f.kind, f.target, f.detail);
    }
    m
}
