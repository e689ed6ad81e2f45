//! The fault checker judged on hand-made logs: each rule must catch what it is there to catch
//! (a checker that cannot fail is worse than none), and must not extend a leadership that a
//! killed or stopped process stopped logging. No server needed.

use mysqlleader_harness as faults;

use faults::checker::{check, FencingRow, HistoryRow, Inputs, Params};
use serde_json::{json, Value};

const MS: i64 = 1_000_000;

fn params() -> Params {
    Params {
        seed: 1,
        lease_ms: 1000,
        renew_ms: 200,
        retry_ms: 100,
        timeout_ms: 200,
        slack_ms: 500,
        services: vec!["s".into()],
        nodes: vec!["a".into(), "b".into()],
        t_start: 0,
        t_end: 10_000 * MS,
        ..Params::default()
    }
}

fn boot(pid: u64, t: i64) -> Value { json!({"t": t * MS, "pid": pid, "ev": "boot"}) }
fn start(node: &str, pid: u64, t: i64, term: u64, deadline: i64) -> Value {
    json!({"t": t * MS, "node": node, "pid": pid, "ev": "start", "svc": "s", "term": term, "deadline": deadline * MS})
}
fn renew(node: &str, pid: u64, t: i64, term: u64, deadline: i64) -> Value {
    json!({"t": t * MS, "node": node, "pid": pid, "ev": "renew", "svc": "s", "term": term, "deadline": deadline * MS})
}
fn stop(node: &str, pid: u64, t: i64, term: u64) -> Value {
    json!({"t": t * MS, "node": node, "pid": pid, "ev": "stop", "svc": "s", "term": term, "reason": "deadline_passed"})
}
fn hb(node: &str, pid: u64, t: i64, term: u64, leading: bool) -> Value {
    json!({"t": t * MS, "node": node, "pid": pid, "ev": "hb", "svc": "s", "term": term, "leading": leading})
}
fn hist(term: u64, leader: &str, began_ms: i64, ended_how: Option<&str>) -> HistoryRow {
    HistoryRow {
        svc: "s".into(),
        term,
        leader: leader.into(),
        began_us: began_ms * 1000,
        began_how: "elected".into(),
        ended_us: ended_how.map(|_| began_ms * 1000 + 1),
        ended_how: ended_how.map(String::from),
    }
}

fn inputs(a: Vec<Value>, b: Vec<Value>, history: Vec<HistoryRow>) -> Inputs {
    let mut i = Inputs { params: params(), history, ..Inputs::default() };
    i.logs.insert("a".into(), a);
    i.logs.insert("b".into(), b);
    i.counters.insert("s".into(), 0);
    i
}

#[test]
fn a_clean_handover_passes() {
    let a = vec![boot(1, 0), start("a", 1, 10, 1, 1000), renew("a", 1, 200, 1, 1190), stop("a", 1, 1185, 1)];
    let b = vec![boot(2, 0), start("b", 2, 1300, 2, 2300)];
    let r = check(&inputs(a, b, vec![hist(1, "a", 10, Some("expired")), hist(2, "b", 1250, None)]));
    assert!(r.passed(), "{:?}", r.violations);
    assert_eq!(r.intervals.len(), 2);
    assert_eq!(r.intervals[0].end, 1185 * MS, "ends at the logged stop, before the deadline");
    assert_eq!(r.min_handover_ns, Some(115 * MS));
}

#[test]
fn an_overlap_is_a_violation() {
    let a = vec![boot(1, 0), start("a", 1, 10, 1, 1000)];
    let b = vec![boot(2, 0), start("b", 2, 900, 2, 1900)];
    let r = check(&inputs(a, b, vec![hist(1, "a", 10, Some("expired")), hist(2, "b", 890, None)]));
    assert_eq!(r.real_overlaps(), 1);
    assert!(!r.passed());
    assert!(r.violations.iter().any(|v| v.starts_with("overlap in s")), "{:?}", r.violations);
}

#[test]
fn a_stopped_process_is_not_extended_by_what_it_logs_after_waking() {
    // a leads until 1000, is SIGSTOPped at 500, wakes at 3000: its heartbeat still says
    // leading (the task has not run yet), then it steps down. b took over at 1500.
    let a = vec![boot(1, 0), start("a", 1, 10, 1, 1000), hb("a", 1, 400, 1, true), hb("a", 1, 3000, 1, true), stop("a", 1, 3001, 1)];
    let b = vec![boot(2, 0), start("b", 2, 1500, 2, 2500)];
    let r = check(&inputs(a, b, vec![hist(1, "a", 10, Some("expired")), hist(2, "b", 1450, None)]));
    assert!(r.passed(), "{:?}", r.violations);
    assert_eq!(r.intervals[0].end, 1000 * MS);
}

#[test]
fn a_killed_process_ends_at_its_last_logged_deadline() {
    // a renewed up to 2000 and was killed; its restart (a new pid) comes at 5000. b starting
    // at 1500 overlaps the renewed deadline: the checker must see it.
    let a = vec![boot(1, 0), start("a", 1, 10, 1, 1000), renew("a", 1, 900, 1, 2000), boot(3, 5000)];
    let b = vec![boot(2, 0), start("b", 2, 1500, 2, 2500)];
    let r = check(&inputs(a.clone(), b, vec![hist(1, "a", 10, Some("expired")), hist(2, "b", 1450, None)]));
    assert_eq!(r.real_overlaps(), 1, "{:?}", r.intervals);
    assert_eq!(r.intervals[0].end, 2000 * MS);
    // Started after that deadline: fine.
    let b = vec![boot(2, 0), start("b", 2, 2001, 2, 3000)];
    let r = check(&inputs(a, b, vec![hist(1, "a", 10, Some("expired")), hist(2, "b", 2000, None)]));
    assert!(r.passed(), "{:?}", r.violations);
}

#[test]
fn a_restarted_node_leads_at_a_new_term_never_at_its_predecessors() {
    // pid 1 leads term 1 until 1000; its restart (pid 3, the same node id) at 300 leads term 1
    // too: two processes on one term at once, which the fencing token cannot tell apart. A
    // violation (the library's first campaign resigns first, so this never happens).
    let a = vec![boot(1, 0), start("a", 1, 10, 1, 1000), boot(3, 300), start("a", 3, 350, 1, 1350)];
    let r = check(&inputs(a, vec![boot(2, 0)], vec![hist(1, "a", 10, None)]));
    assert_eq!(r.real_overlaps(), 1, "{:?}", r.intervals);
    // What the library does: the restart ends term 1 (`resigned`) and leads term 2. The
    // predecessor's interval still overlaps it (a paused predecessor believes it leads until
    // its deadline; its fence at term 1 fails): listed apart as a revocation, no violation.
    let a = vec![boot(1, 0), start("a", 1, 10, 1, 1000), boot(3, 300), start("a", 3, 350, 2, 1350)];
    let r = check(&inputs(a, vec![boot(2, 0)], vec![hist(1, "a", 10, Some("resigned")), hist(2, "a", 340, None)]));
    assert!(r.passed(), "{:?}", r.violations);
    assert_eq!(r.overlaps.len(), 1);
}

#[test]
fn an_overlap_after_an_operator_revoked_the_lease_is_listed_apart() {
    let a = vec![boot(1, 0), start("a", 1, 10, 1, 1000), stop("a", 1, 700, 1)];
    let b = vec![boot(2, 0), start("b", 2, 500, 2, 1500)];
    let r = check(&inputs(a.clone(), b.clone(), vec![hist(1, "a", 10, Some("forced_out")), hist(2, "b", 490, None)]));
    assert!(r.passed(), "{:?}", r.violations);
    assert_eq!(r.overlaps.len(), 1);
    assert_eq!(r.overlaps[0].ns, 200 * MS);
    // The same logs with a term that merely expired: a violation.
    let r = check(&inputs(a, b, vec![hist(1, "a", 10, Some("expired")), hist(2, "b", 490, None)]));
    assert_eq!(r.real_overlaps(), 1);
}

#[test]
fn terms_skipped_doubled_or_misattributed_are_violations() {
    let a = vec![boot(1, 0), start("a", 1, 10, 1, 1000)];
    let b = vec![boot(2, 0), start("b", 2, 2000, 3, 3000)];
    let r = check(&inputs(a.clone(), b, vec![hist(1, "a", 10, Some("expired")), hist(3, "b", 1990, None)]));
    assert!(r.violations.iter().any(|v| v.contains("skipped")), "{:?}", r.violations);
    // b claims term 1 too.
    let b = vec![boot(2, 0), start("b", 2, 2000, 1, 3000)];
    let r = check(&inputs(a, b, vec![hist(1, "a", 10, None)]));
    assert!(r.violations.iter().any(|v| v.contains("more than one node")), "{:?}", r.violations);
}

fn row(value: u64, term: u64, node: &str, seen: u64, written_ms: i64) -> FencingRow {
    FencingRow { svc: "s".into(), value, term, node: node.into(), seen_term: seen, written_us: written_ms * 1000 }
}

#[test]
fn stale_term_commits_are_caught() {
    let a = vec![boot(1, 0), start("a", 1, 10, 1, 1000)];
    let b = vec![boot(2, 0), start("b", 2, 1100, 2, 2000)];
    let history = vec![hist(1, "a", 10, Some("expired")), hist(2, "b", 1050, None)];
    let good = vec![row(1, 1, "a", 1, 100), row(2, 2, "b", 2, 1200)];
    let mut inp = inputs(a.clone(), b.clone(), history.clone());
    inp.fencing = good.clone();
    inp.counters.insert("s".into(), 2);
    let r = check(&inp);
    assert!(r.passed(), "{:?}", r.violations);

    // a's term-1 write committed after b's term-2 write.
    let mut inp = inputs(a.clone(), b.clone(), history.clone());
    inp.fencing = vec![row(1, 2, "b", 2, 1200), row(2, 1, "a", 1, 1300)];
    inp.counters.insert("s".into(), 2);
    let r = check(&inp);
    assert_eq!(r.stale_commits, 1, "{:?}", r.violations);

    // Written while the election row already had term 2 (seen_term), or after term 2 began.
    let mut inp = inputs(a.clone(), b.clone(), history.clone());
    inp.fencing = vec![row(1, 1, "a", 2, 1000)];
    inp.counters.insert("s".into(), 1);
    assert_eq!(check(&inp).stale_commits, 1);
    let mut inp = inputs(a.clone(), b.clone(), history.clone());
    inp.fencing = vec![row(1, 1, "a", 1, 1060)];
    inp.counters.insert("s".into(), 1);
    assert_eq!(check(&inp).stale_commits, 1);

    // A lost increment: the counter says 3.
    let mut inp = inputs(a.clone(), b.clone(), history.clone());
    inp.fencing = good;
    inp.counters.insert("s".into(), 3);
    assert!(!check(&inp).passed());

    // A logged commit the table does not hold.
    let mut a2 = a;
    a2.push(json!({"t": 100 * MS, "node": "a", "pid": 1, "ev": "commit", "svc": "s", "term": 1, "value": 7, "rogue": false}));
    let mut inp = inputs(a2, b, history);
    inp.counters.insert("s".into(), 0);
    assert!(check(&inp).violations.iter().any(|v| v.contains("does not hold")));
}

#[test]
fn a_renew_without_a_start_is_an_anomaly() {
    let a = vec![boot(1, 0), renew("a", 1, 10, 1, 1000)];
    let r = check(&inputs(a, vec![boot(2, 0)], vec![]));
    assert!(r.violations.iter().any(|v| v.contains("log anomaly")), "{:?}", r.violations);
}

/// A node fault of a cluster carries its eviction time (`extra_ms`): the bound after it is
/// lease + retry + extra + slack, no more; without it, the same gap is a violation.
#[test]
fn a_fault_allowance_extends_only_its_own_availability_bound() {
    use faults::checker::Fault;
    // a leads until 1000 ms; the fault at 900 ms; b leads from 5900 ms: 5000 ms after the fault.
    let a = vec![boot(1, 0), start("a", 1, 10, 1, 1000)];
    let b = vec![boot(2, 0), start("b", 2, 5900, 2, 9999)];
    let fault = |extra_ms: u64| Fault {
        id: 1, kind: "node-kill".into(), target: "node1".into(), svc: Some("s".into()), detail: String::new(),
        t0: 900 * MS, t1: Some(950 * MS), from_heal: false, lasting: false, extra_ms,
    };
    let history = || vec![hist(1, "a", 10, Some("expired")), hist(2, "b", 5890, None)];
    // bound 1000 + 100, slack 500: 1600 ms < 5000 ms.
    let mut i = inputs(a.clone(), b.clone(), history());
    i.faults = vec![fault(0)];
    let r = check(&i);
    assert!(r.violations.iter().any(|v| v.starts_with("availability:")), "{:?}", r.violations);
    // 1600 + 3000 = 4600 ms < 5000 ms: still a violation.
    i.faults = vec![fault(3000)];
    let r = check(&i);
    assert!(r.violations.iter().any(|v| v.contains("+ 3000 ms for this fault")), "{:?}", r.violations);
    // 1600 + 3500 = 5100 ms >= 5000 ms: within the bound.
    i.faults = vec![fault(3500)];
    let r = check(&i);
    assert!(r.passed(), "{:?}", r.violations);
}

#[test]
fn connections_over_the_bound_are_a_violation_outside_stalled_links() {
    let mut i = inputs(vec![], vec![], vec![]);
    i.params.connection_bound = 12;
    i.connections = vec![(1_000 * MS, 10), (2_000 * MS, 12), (3_000 * MS, 30)];
    let r = check(&i);
    assert_eq!(r.max_connections, Some((30, 3_000 * MS)));
    assert!(r.violations.iter().any(|v| v.starts_with("connections: the server held 30")), "{:?}", r.violations);
    // The same count during a stalled link (the proxy holds even the closes) is not judged.
    i.faults = vec![faults::checker::Fault {
        id: 1, kind: "net-stall".into(), target: "n1".into(), svc: None, detail: String::new(),
        t0: 2_500 * MS, t1: Some(2_900 * MS), from_heal: false, lasting: true, extra_ms: 0,
    }];
    let r = check(&i);
    assert_eq!(r.max_connections, Some((12, 2_000 * MS)));
    assert!(!r.violations.iter().any(|v| v.starts_with("connections")), "{:?}", r.violations);
}
