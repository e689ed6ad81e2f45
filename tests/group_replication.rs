//! The election on a real 3-member MySQL Group Replication group (scripts/group-replication.sh),
//! in single-primary and in multi-primary mode. Three electors, each given all three members in
//! a different order (so some start on a member that cannot take writes), find the one that
//! can: a secondary refuses their writes with 1290 (`super_read_only`), which the library counts
//! as transient, so the elector moves to its next server. Checked: exactly one leader, never two
//! at one instant (polled every millisecond, tests/common/overlap.rs), a leader again after the
//! primary is killed, and no fenced write of the old term committed after the new term began;
//! in multi-primary mode, campaigns through the three members at once (one winner per term,
//! only transient errors, retried), and a fence on one member that conflicts with a takeover
//! made through another (`assert_leader` writes the term's history row on a member of a group,
//! as on Galera: docs/galera.md).
//!
//! Needs a running group: run through `scripts/test-group-replication.sh`, which starts one in
//! each mode (`scripts/group-replication.sh run single|multi`) and sets MYSQLLEADER_GR_URLS
//! (member 1 first), MYSQLLEADER_GR_MODE and MYSQLLEADER_GR_DIR. Marked ignored so that a plain
//! `cargo test` without a group does not run it. The tests kill and relaunch members: run them
//! one at a time (`--test-threads=1`). Tests that belong to the other mode return early with a
//! printed line.
mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::overlap::{one_leader, watched, OverlapMonitor};
use mysql_async::prelude::Queryable;
use mysql_async::{Opts, Pool};
use mysqlleader::{procedures, Elector, Error, ErrorKind};
use tokio::time::Instant;

const LEASE: Duration = Duration::from_secs(3);
const RENEW: Duration = Duration::from_millis(600);
const RETRY: Duration = Duration::from_millis(300);
/// After the primary is killed: ~5 s until it is suspected, 5 s more until it is expelled
/// (group_replication_member_expel_timeout), the election of a new primary, which then applies
/// its backlog before it takes writes (BEFORE_ON_PRIMARY_FAILOVER); room for a 2-core machine.
const FAILOVER_SLACK: Duration = Duration::from_secs(60);
/// The codes a campaign may meet when members certify concurrent writes: 1213 deadlock, 3101
/// the group rolled the transaction back (certification conflict), 1180 a failed commit.
const CONFLICT_CODES: [u16; 3] = [1213, 3101, 1180];

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run scripts/test-group-replication.sh (or scripts/group-replication.sh run single|multi cargo test --release --test group_replication -- --ignored --test-threads=1)")
    })
}

fn pool(url: &str) -> Pool {
    Pool::new(Opts::from_url(url).unwrap())
}

/// `scripts/group-replication.sh ARGS`; its standard output.
fn gr(args: &[&str]) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/group-replication.sh");
    let out = std::process::Command::new("bash").arg(script).args(args).output().unwrap();
    assert!(out.status.success(), "group-replication.sh {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

struct Group {
    dir: String,
    mode: String,
    /// Members 1, 2, 3 (index 0, 1, 2).
    urls: Vec<String>,
}

impl Group {
    fn from_env() -> Group {
        let urls: Vec<String> = env("MYSQLLEADER_GR_URLS").split_whitespace().map(str::to_string).collect();
        assert_eq!(urls.len(), 3, "MYSQLLEADER_GR_URLS names 3 members: {urls:?}");
        let mode = env("MYSQLLEADER_GR_MODE");
        assert!(mode == "single" || mode == "multi", "MYSQLLEADER_GR_MODE is single or multi, not {mode:?}");
        Group { dir: env("MYSQLLEADER_GR_DIR"), mode, urls }
    }
    fn multi(&self) -> bool {
        self.mode == "multi"
    }
    /// The index (0..3) of a primary: the one in single-primary mode, the first in multi.
    fn primary(&self) -> usize {
        let out = gr(&["primary", &self.dir]);
        let n: usize = out.lines().next().and_then(|l| l.trim().parse().ok()).unwrap_or_else(|| panic!("primary: {out:?}"));
        n - 1
    }
    fn kill(&self, index: usize) {
        gr(&["kill", &self.dir, &(index + 1).to_string()]);
    }
    fn relaunch(&self, index: usize) {
        gr(&["relaunch", &self.dir, &(index + 1).to_string()]);
    }
}

/// Relaunches a killed member when dropped (also when the test panics), so that the group is
/// whole for the next test.
struct Relaunch<'g> {
    group: &'g Group,
    member: Option<usize>,
}

impl Relaunch<'_> {
    fn now(&mut self) -> Duration {
        let t0 = std::time::Instant::now();
        if let Some(m) = self.member.take() {
            self.group.relaunch(m);
        }
        t0.elapsed()
    }
}

impl Drop for Relaunch<'_> {
    fn drop(&mut self) {
        if let Some(m) = self.member.take() {
            eprintln!("relaunching member {} after a failure", m + 1);
            self.group.relaunch(m);
        }
    }
}

/// A connection to `pool` whose reads wait until the member has applied everything the group
/// ordered before them (`group_replication_consistency = BEFORE`).
async fn caught_up(pool: &Pool) -> mysql_async::Conn {
    let mut c = pool.get_conn().await.unwrap();
    c.query_drop("SET SESSION group_replication_consistency = 'BEFORE'").await.unwrap();
    c
}

/// A fresh database `ml_gr_<what>_<pid>`, created and migrated on a primary, and seen by every
/// member; one pool per member (member order) on it, and the index of the primary used.
async fn migrated_database(group: &Group, what: &str) -> (String, Vec<Pool>, usize) {
    let db = format!("ml_gr_{what}_{}", std::process::id());
    let primary = group.primary();
    {
        let admin = pool(&group.urls[primary]);
        let mut c = admin.get_conn().await.unwrap();
        c.query_drop(format!("DROP DATABASE IF EXISTS `{db}`")).await.unwrap();
        c.query_drop(format!("CREATE DATABASE `{db}`")).await.unwrap();
        drop(c);
        admin.disconnect().await.unwrap();
    }
    let pools: Vec<Pool> = group.urls.iter().map(|u| pool(&common::url_with_db(u, &db))).collect();
    let applied = mysqlleader::migrate(&pools[primary]).await.expect("the migrations run unchanged on Group Replication");
    assert!(!applied.is_empty());
    let on_primary = routines(&pools[primary]).await;
    for (i, p) in pools.iter().enumerate() {
        assert_eq!(routines(p).await, on_primary, "member {} has the schema", i + 1);
    }
    (db, pools, primary)
}

async fn routines(pool: &Pool) -> u64 {
    let mut c = caught_up(pool).await;
    c.query_first("SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()").await.unwrap().unwrap()
}

async fn drop_database(pools: Vec<Pool>, primary: usize, db: &str) {
    let mut c = pools[primary].get_conn().await.unwrap();
    c.query_drop(format!("DROP DATABASE `{db}`")).await.unwrap();
    drop(c);
    for p in pools {
        let _ = p.disconnect().await;
    }
}

/// Elector `node` given the members in `order` (indexes), the first its own.
fn elector(pools: &[Pool], service: &str, node: &str, order: &[usize]) -> Elector {
    Elector::builder(pools[order[0]].clone(), service)
        .node_id(node)
        .fallback_servers(order[1..].iter().map(|&i| pools[i].clone()))
        .lease(LEASE)
        .renew_interval(RENEW)
        .retry_interval(RETRY)
        .resign_on_drop(false)
        .start()
        .unwrap()
}

/// The three electors a, b, c: a starts on member 1, b on member 2, c on member 3, each with the
/// other two as fallbacks in turn.
fn three_electors(pools: &[Pool], service: &str) -> (Vec<Elector>, Vec<Vec<usize>>) {
    let orders: Vec<Vec<usize>> = vec![vec![0, 1, 2], vec![1, 2, 0], vec![2, 0, 1]];
    let electors = ["a", "b", "c"].iter().zip(&orders).map(|(n, o)| elector(pools, service, n, o)).collect();
    (electors, orders)
}

/// Every error code each elector's state showed, in order (a watcher per elector; an error
/// stays in the state until the next call: a retry interval later, or at once when the
/// elector moves on to its next member, which is why a watcher starts with its elector).
type Seen = Arc<Mutex<Vec<Vec<SeenError>>>>;

/// One error an elector's state showed: its server code, its text, and whether it was a
/// request timeout (no answer within the elector's request timeout: the machine's load, not the
/// group's answer; judged by no assertion here, as timings are not).
type SeenError = (Option<u16>, String, bool);

fn record_errors(electors: &[Elector]) -> (Seen, Vec<tokio::task::JoinHandle<()>>) {
    let seen: Seen = Arc::new(Mutex::new(vec![Vec::new(); electors.len()]));
    let tasks = electors.iter().enumerate().map(|(i, e)| record_errors_of(&seen, i, e)).collect();
    (seen, tasks)
}

/// The watcher of elector `i` alone, into `seen[i]`: started right after the elector, it sees
/// even an error its next call clears at once (a secondary's refusal followed by a campaign
/// through the primary, its next member).
fn record_errors_of(seen: &Seen, i: usize, e: &Elector) -> tokio::task::JoinHandle<()> {
    let mut rx = e.watch();
    let seen = seen.clone();
    tokio::spawn(async move {
        let mut last: Option<String> = None;
        loop {
            let now = rx.borrow_and_update().last_error.clone();
            let text = now.as_ref().map(|e| e.to_string());
            if let Some(e) = &now {
                if text != last {
                    seen.lock().unwrap()[i].push((e.server_code(), e.to_string(), e.kind() == ErrorKind::Timeout));
                }
            }
            last = text;
            if rx.changed().await.is_err() {
                return;
            }
        }
    })
}

/// Waits until some elector leads at a term above `above`; returns its index.
async fn leader_above(electors: &[Elector], above: u64, bound: Duration) -> usize {
    let t0 = Instant::now();
    loop {
        if let Some(i) = electors.iter().position(|e| e.is_leader() && e.term() > above) {
            return i;
        }
        assert!(t0.elapsed() < bound, "no leader above term {above} within {bound:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// a. Three electors, each given all three members in a different order. Single-primary: the
/// two that start on a secondary start first; one whose first campaign finds the seat vacant is
/// refused there with 1290 (read-only) and moves on to the primary (at least one does; the other
/// may come after the seat was taken and follow through its secondary, a read); exactly one of the three leads within two leases, through the primary; no
/// two ever lead at one instant. Multi-primary: every member takes writes; the only errors are
/// the group's certification conflicts, retried. Control: a direct `campaign` on each secondary
/// is refused with 1290 (so the refusals the electors met were real and the test would see
/// them), and the same call on the primary answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Group Replication group: scripts/test-group-replication.sh"]
async fn gr_1_three_electors_find_the_primary_and_one_leads() {
    let group = Group::from_env();
    let t_test = Instant::now();
    let (db, pools, primary) = migrated_database(&group, "find").await;
    // The electors that start on a secondary start first and must meet its refusal (the seat
    // is vacant, so their campaign writes) before the one on the primary starts: a follower's
    // campaign that finds a valid leader only reads, and a secondary answers that.
    let orders: Vec<Vec<usize>> = vec![vec![0, 1, 2], vec![1, 2, 0], vec![2, 0, 1]];
    let names = ["a", "b", "c"];
    let t0 = Instant::now();
    let mut started: Vec<Option<Elector>> = (0..3).map(|_| None).collect();
    // Each elector's errors are watched from its start: one whose next member is the primary
    // meets the secondary's refusal and leads a moment later, its state cleared.
    let seen: Seen = Arc::new(Mutex::new(vec![Vec::new(); 3]));
    let mut watchers = Vec::new();
    let mut t_last = t0;
    let firsts: Vec<usize> = if group.multi() { vec![0, 1, 2] } else { (0..3).filter(|&i| orders[i][0] != primary).collect() };
    for &i in &firsts {
        let e = elector(&pools, "gr_find", names[i], &orders[i]);
        watchers.push(record_errors_of(&seen, i, &e));
        started[i] = Some(e);
    }
    // Single-primary: whether the second of the two starters is refused depends on a race the
    // election does not decide. Each is refused only if its first campaign finds the seat vacant;
    // the one whose next member is the primary moves there after its refusal and takes the seat,
    // and when that comes before the other's first campaign (CI54 and stop 52: a first login
    // slowed by the machine's load), the other's campaign only reads, which its secondary
    // answers: it follows from there without a refusal. The first campaign of all finds the
    // seat vacant (nothing runs on the primary yet), so at least one starter is refused.
    let mut came_late: Vec<usize> = Vec::new();
    if !group.multi() {
        for &i in &firsts {
            let e = started[i].as_ref().unwrap();
            // Bounded generously: how soon the answer comes depends on the machine's load, not
            // on the election.
            while e.metrics().campaign_errors() == 0 && e.leader_id().is_none() {
                assert!(t0.elapsed() < 10 * LEASE, "{}: no answer from its first member, a secondary", e.node_id());
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            if e.metrics().campaign_errors() == 0 {
                println!("{}: its first campaign came after the seat was taken: it follows {:?} through its secondary, unrefused",
                         e.node_id(), e.leader_id());
                came_late.push(i);
            }
        }
        assert!(came_late.len() < firsts.len(), "the first campaign of all finds the seat vacant: some starter is refused");
        let i = (0..3).find(|&i| orders[i][0] == primary).unwrap();
        let e = elector(&pools, "gr_find", names[i], &orders[i]);
        watchers.push(record_errors_of(&seen, i, &e));
        started[i] = Some(e);
        t_last = Instant::now();
    }
    let electors: Vec<Elector> = started.into_iter().map(Option::unwrap).collect();
    let monitor = OverlapMonitor::start(electors.iter().map(watched).collect());
    let refs: Vec<&Elector> = electors.iter().collect();
    // Within two leases of the last elector's start (the one on the primary, in single-primary
    // mode; all three at once in multi-primary mode).
    let leader = one_leader(&refs, (2 * LEASE).saturating_sub(t_last.elapsed())).await;
    println!("mode {}: primary member {}; {} leads at term {} after {:?}", group.mode, primary + 1, electors[leader].node_id(), electors[leader].term(), t0.elapsed());
    // Two more leases: everyone follows through a member that answers, the leader renews.
    tokio::time::sleep(2 * LEASE).await;
    let now_leading = one_leader(&refs, Duration::ZERO).await;
    if now_leading != leader {
        for e in &electors {
            println!("{}: {:?}", e.node_id(), e.state());
        }
        let mut c = caught_up(&pools[primary]).await;
        let rows: Vec<(u64, String, String, Option<String>, Option<String>, Option<String>)> = c
            .query("SELECT term, leader_id, CAST(began_at AS CHAR), began_how, CAST(ended_at AS CHAR), ended_how FROM leader_election_history WHERE service_id = 'gr_find' ORDER BY term")
            .await
            .unwrap();
        println!("history: {rows:?}");
        println!("overlap samples: {}", monitor.finish().await);
        panic!("the leader changed from {} to {} within two leases", electors[leader].node_id(), electors[now_leading].node_id());
    }
    for e in &electors {
        let s = e.state();
        // A request timeout is the machine's load, never the group's answer (see below): printed,
        // not judged; any other error fails.
        if let Some(err) = s.last_error.as_ref().filter(|err| err.kind() == ErrorKind::Timeout) {
            println!("{}: its last call timed out (the machine's load): {err}", e.node_id());
        }
        assert!(s.last_error.as_ref().is_none_or(|err| err.kind() == ErrorKind::Timeout), "{}: its calls succeed now: {:?}", e.node_id(), s.last_error);
        assert!(s.last_ok.is_some_and(|t| t.elapsed() < LEASE), "{}: a recent successful call", e.node_id());
        assert_eq!(s.leader_id.as_deref(), Some(electors[leader].node_id()), "{} knows the leader", e.node_id());
    }
    let seen = seen.lock().unwrap().clone();
    for (i, e) in electors.iter().enumerate() {
        let codes: Vec<Option<u16>> = seen[i].iter().map(|(c, _, _)| *c).collect();
        // Request timeouts are the shared machine's load (a commit the group certified late),
        // never the group's answer: printed, not judged (timings are not assertions here).
        let timeouts = seen[i].iter().filter(|(_, _, timeout)| *timeout).count() as u64;
        let answered: Vec<&SeenError> = seen[i].iter().filter(|(_, _, timeout)| !*timeout).collect();
        println!("{} (members {:?} in order): {} campaign errors, codes seen {codes:?} ({timeouts} request timeouts)", e.node_id(),
                 orders[i].iter().map(|m| m + 1).collect::<Vec<_>>(), e.metrics().campaign_errors());
        let refusals = e.metrics().campaign_errors().saturating_sub(timeouts);
        if group.multi() {
            for (code, text, _) in &answered {
                assert!(code.is_some_and(|c| CONFLICT_CODES.contains(&c)), "{}: only certification conflicts: {text}", e.node_id());
            }
        } else if orders[i][0] == primary {
            assert!(answered.is_empty(), "{} starts on the primary: no error: {:?}", e.node_id(), seen[i]);
        } else {
            // Started on a secondary: refused there (and on the other secondary if it came next).
            let secondaries_before_primary = orders[i].iter().position(|&m| m == primary).unwrap() as u64;
            if !came_late.contains(&i) {
                assert!(e.metrics().campaign_errors() >= 1, "{} starts on a secondary: refused", e.node_id());
                assert!(!answered.is_empty(), "{}: the refusal was seen in its state", e.node_id());
            }
            for (code, text, _) in &answered {
                assert_eq!(*code, Some(1290), "{}: a secondary's refusal is 1290 (read-only): {text}", e.node_id());
            }
            // At most one refusal per secondary before the primary (a follower's campaign that
            // finds the leader only reads, which a secondary answers: it may stay there), and
            // one per secondary again after each request timeout: a timeout moves the elector to
            // its next member, and from the primary that is a secondary (one round of both at most).
            assert!(refusals <= secondaries_before_primary + 2 * timeouts,
                    "{}: at most one refusal per secondary before the primary: {:?}", e.node_id(), seen[i]);
        }
    }
    // Control: a campaign that writes (a vacant seat of its own) on each member directly: the
    // secondaries refuse it with 1290, the primary answers. A campaign that only reads (the
    // electors' seat, held by the leader) is answered by every member: that is why a follower
    // may stay on a secondary, and why only a write shows where the primary is.
    for (i, p) in pools.iter().enumerate() {
        let r = procedures::campaign(p, &format!("gr_find_probe_{i}"), "probe", LEASE).await;
        if group.multi() || i == primary {
            let r = r.unwrap_or_else(|e| panic!("member {}: campaign: {e}", i + 1));
            assert!(r.is_leader, "member {}: the vacant seat is taken: {r:?}", i + 1);
        } else {
            let e = r.expect_err("a writing campaign on a secondary");
            assert_eq!(e.server_code(), Some(1290), "member {}: {e}", i + 1);
            assert!(e.is_transient(), "1290 moves an elector on: {e}");
        }
        let r = procedures::campaign(p, "gr_find", "probe", LEASE).await.unwrap_or_else(|e| panic!("member {}: a reading campaign: {e}", i + 1));
        assert_eq!((r.is_leader, r.leader_id.as_deref()), (false, Some(electors[leader].node_id())), "member {}", i + 1);
    }
    println!("overlap samples: {}", monitor.finish().await);
    for e in electors {
        e.shutdown().await.unwrap();
    }
    for w in watchers {
        w.await.unwrap();
    }
    drop_database(pools, primary, &db).await;
    println!("test took {:?}", t_test.elapsed());
}

/// b. Single-primary failover. Three electors as in (a); a transaction on the primary is fenced
/// by the leader at its term (`Elector::fence`) and writes a row, and stays open; then the
/// primary's mysqld is killed (SIGKILL). Within lease + 60 s an elector leads again at a higher
/// term, through the new primary; never two at one instant; the fenced transaction never
/// commits (its COMMIT, tried after the new term began, fails) and its row is on no member,
/// the old primary included once it is back (relaunched at the end, also on failure).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Group Replication group: scripts/test-group-replication.sh"]
async fn gr_2_the_primary_killed_a_leader_again_and_no_stale_fenced_write() {
    let group = Group::from_env();
    if group.multi() {
        println!("gr_2: single-primary failover; skipped in {}-primary mode", group.mode);
        return;
    }
    let t_test = Instant::now();
    let (db, pools, primary) = migrated_database(&group, "failover").await;
    {
        let mut c = pools[primary].get_conn().await.unwrap();
        c.query_drop("CREATE TABLE app (id INT PRIMARY KEY, term BIGINT NOT NULL) ENGINE=InnoDB").await.unwrap();
    }
    let (electors, _) = three_electors(&pools, "gr_failover");
    let (seen, watchers) = record_errors(&electors);
    let monitor = OverlapMonitor::start(electors.iter().map(watched).collect());
    let refs: Vec<&Elector> = electors.iter().collect();
    let leader = one_leader(&refs, 2 * LEASE).await;
    let term = electors[leader].term();
    println!("primary member {}; {} leads at term {term}", primary + 1, electors[leader].node_id());

    // The leader's fenced transaction on the primary, left open.
    let mut conn = pools[primary].get_conn().await.unwrap();
    let mut tx = conn.start_transaction(mysql_async::TxOpts::default()).await.unwrap();
    assert_eq!(electors[leader].fence(&mut tx).await.expect("the leader's fence"), term);
    tx.exec_drop("INSERT INTO app (id, term) VALUES (1, ?)", (term,)).await.unwrap();

    let mut relaunch = Relaunch { group: &group, member: Some(primary) };
    let t_kill = Instant::now();
    group.kill(primary);
    // When a surviving member takes writes again (super_read_only off), polled every 100 ms.
    let writable = {
        let survivors: Vec<Pool> = (0..3).filter(|&i| i != primary).map(|i| pools[i].clone()).collect();
        tokio::spawn(async move {
            loop {
                for p in &survivors {
                    if let Ok(mut c) = p.get_conn().await {
                        if let Ok(Some(0u8)) = c.query_first::<u8, _>("SELECT @@global.super_read_only").await {
                            return t_kill.elapsed();
                        }
                    }
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    let next = leader_above(&electors, term, LEASE + FAILOVER_SLACK).await;
    let failover = t_kill.elapsed();
    let new_term = electors[next].term();
    let new_primary = group.primary();
    assert_ne!(new_primary, primary, "a new primary");
    let writable = writable.await.unwrap();
    println!("primary member {} killed: member {} takes writes {writable:?} later; {} leads at term {new_term} {failover:?} later",
             primary + 1, new_primary + 1, electors[next].node_id());

    // The old term's fenced transaction, after the new term began: it cannot commit.
    let commit = tx.commit().await;
    println!("the fenced transaction's COMMIT after term {new_term} began: {commit:?}");
    assert!(commit.is_err(), "a transaction fenced at term {term} committed after term {new_term} began");
    drop(conn);
    for (i, p) in pools.iter().enumerate() {
        if i == primary {
            continue;
        }
        let mut c = caught_up(p).await;
        let rows: i64 = c.query_first("SELECT COUNT(*) FROM app").await.unwrap().unwrap();
        assert_eq!(rows, 0, "member {}: no stale fenced write", i + 1);
    }
    // Stable under the new primary for one more lease, then the old primary comes back.
    tokio::time::sleep(LEASE).await;
    let still = one_leader(&refs, LEASE).await;
    let relaunched = relaunch.now();
    println!("member {} relaunched and ONLINE in {relaunched:?}", primary + 1);
    {
        let mut c = caught_up(&pools[primary]).await;
        let rows: i64 = c.query_first("SELECT COUNT(*) FROM app").await.unwrap().unwrap();
        assert_eq!(rows, 0, "member {} (the old primary, recovered): no stale fenced write", primary + 1);
    }
    let back = one_leader(&refs, 2 * LEASE).await;
    println!("after the return: {} leads at term {} (before it: {})", electors[back].node_id(), electors[back].term(), electors[still].node_id());
    println!("overlap samples: {}", monitor.finish().await);
    for e in electors {
        e.shutdown().await.unwrap();
    }
    for w in watchers {
        w.await.unwrap();
    }
    for (i, errors) in seen.lock().unwrap().iter().enumerate() {
        let mut codes: BTreeMap<String, usize> = BTreeMap::new();
        for (code, text, _) in errors {
            *codes.entry(code.map_or_else(|| text.chars().take(60).collect(), |c| c.to_string())).or_default() += 1;
        }
        println!("elector {}: errors seen {codes:?}", ["a", "b", "c"][i]);
    }
    // Terms gapless in the history (read on the new primary).
    let mut c = caught_up(&pools[new_primary]).await;
    let terms: Vec<u64> = c.query("SELECT term FROM leader_election_history WHERE service_id = 'gr_failover' ORDER BY term").await.unwrap();
    assert_eq!(terms, (1..=terms.len() as u64).collect::<Vec<_>>(), "gapless terms");
    drop(c);
    drop_database(pools, new_primary, &db).await;
    println!("failover: group {writable:?}, leader {failover:?}; test took {:?}", t_test.elapsed());
}

/// c. Multi-primary: the same service campaigned for through the three members at once, round
/// after round (the winner resigns between rounds). Each round exactly one of the three wins,
/// all three answers name it and the same term, one term more than the round before; the
/// history on every member has one row per term naming that round's winner. Every failure is
/// a certification conflict the library counts as transient (1213, 3101, 1180), retried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Group Replication group: scripts/test-group-replication.sh"]
async fn gr_3_multi_primary_campaigns_through_three_members_at_once() {
    const ROUNDS: u64 = 40;
    const SVC: &str = "gr_contended";
    let group = Group::from_env();
    if !group.multi() {
        println!("gr_3: multi-primary only; skipped in {}-primary mode", group.mode);
        return;
    }
    let t_test = Instant::now();
    let (db, pools, primary) = migrated_database(&group, "contend").await;
    let nodes = ["m1", "m2", "m3"];
    let mut codes: BTreeMap<u16, usize> = BTreeMap::new();
    let mut winners = Vec::new();
    for round in 1..=ROUNDS {
        // Every member has applied the previous round's resign (the seat is vacant everywhere),
        // so that each round is a race for a vacant seat, not a stale read on a lagging member
        // (which answers "the old leader, the old term" and is not a win either).
        for p in &pools {
            let mut c = caught_up(p).await;
            let _: Option<u64> = c.exec_first("SELECT term FROM leader_election WHERE service_id = CAST(? AS BINARY)", (SVC,)).await.unwrap();
        }
        let barrier = Arc::new(tokio::sync::Barrier::new(3));
        let tasks: Vec<_> = (0..3)
            .map(|i| {
                let (p, barrier) = (pools[i].clone(), barrier.clone());
                tokio::spawn(async move {
                    let mut conn = p.get_conn().await.unwrap();
                    let mut failures: Vec<Error> = Vec::new();
                    barrier.wait().await;
                    loop {
                        match procedures::campaign(&mut conn, SVC, nodes[i], Duration::from_secs(60)).await {
                            Ok(r) => return (r, failures),
                            Err(e) if failures.len() < 50 => {
                                failures.push(e);
                                // A fresh connection, as the library takes after such an error.
                                drop(conn);
                                tokio::time::sleep(Duration::from_millis(5)).await;
                                conn = p.get_conn().await.unwrap();
                            }
                            Err(e) => panic!("member {}: 50 failures, the last: {e}", i + 1),
                        }
                    }
                })
            })
            .collect();
        let mut answers = Vec::new();
        for t in tasks {
            let (r, failures) = t.await.unwrap();
            for e in failures {
                let code = e.server_code().unwrap_or(0);
                assert!(CONFLICT_CODES.contains(&code), "round {round}: only certification conflicts, got {e}");
                assert!(e.is_transient(), "round {round}: {e} is retried by the library");
                *codes.entry(code).or_default() += 1;
            }
            answers.push(r);
        }
        let won: Vec<usize> = (0..3).filter(|&i| answers[i].is_leader).collect();
        assert_eq!(won.len(), 1, "round {round}: exactly one winner: {answers:?}");
        let w = won[0];
        for (i, a) in answers.iter().enumerate() {
            assert_eq!((a.term, a.leader_id.as_deref()), (round, Some(nodes[w])), "round {round}, member {}: {answers:?}", i + 1);
        }
        winners.push(nodes[w]);
        let r = procedures::resign(&pools[w], SVC, nodes[w]).await.unwrap();
        assert!(r.resigned && r.term == round, "round {round}: {r:?}");
    }
    for (i, p) in pools.iter().enumerate() {
        let mut c = caught_up(p).await;
        let rows: Vec<(u64, String)> = c
            .query(format!("SELECT term, leader_id FROM leader_election_history WHERE service_id = '{SVC}' ORDER BY term"))
            .await
            .unwrap();
        let want: Vec<(u64, String)> = winners.iter().enumerate().map(|(t, n)| (t as u64 + 1, n.to_string())).collect();
        assert_eq!(rows, want, "member {}: one history row per term, naming the winner", i + 1);
    }
    let mut wins: BTreeMap<&str, usize> = BTreeMap::new();
    for w in &winners {
        *wins.entry(w).or_default() += 1;
    }
    println!("{ROUNDS} rounds through 3 members at once: wins {wins:?}; retried errors by code {codes:?}; test took {:?}", t_test.elapsed());
    drop_database(pools, primary, &db).await;
}

/// d. Multi-primary fencing across members. A transaction on member 1 is fenced at term T
/// (`CALL assert_leader`, which on a group member writes the term's history row) and writes a
/// row of the application; before it commits, a takeover through member 2 (`force_leader`,
/// which closes that history row) commits. The fenced transaction's COMMIT on member 1 must
/// fail, and no member has its write. Control, in the same interleaving: a transaction on
/// member 1 that writes without `assert_leader` commits, and every member has its write (the
/// fence's history write cannot be switched off from SQL, so this shows what the interleaving
/// does to an unfenced write).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Group Replication group: scripts/test-group-replication.sh"]
async fn gr_4_multi_primary_a_fence_on_one_member_conflicts_with_a_takeover_through_another() {
    const LONG: Duration = Duration::from_secs(60);
    let group = Group::from_env();
    if !group.multi() {
        println!("gr_4: multi-primary only; skipped in {}-primary mode", group.mode);
        return;
    }
    let t_test = Instant::now();
    let (db, pools, primary) = migrated_database(&group, "fence").await;
    let mut c2 = pools[1].get_conn().await.unwrap();
    c2.query_drop("SET SESSION group_replication_consistency = 'BEFORE'").await.unwrap();
    c2.query_drop("CREATE TABLE app (id INT PRIMARY KEY, v BIGINT NOT NULL) ENGINE=InnoDB").await.unwrap();
    c2.query_drop("INSERT INTO app VALUES (1, 0), (2, 0)").await.unwrap();

    for (id, fenced) in [(1, true), (2, false)] {
        let svc = format!("gr_fence_{id}");
        let what = if fenced { "fenced" } else { "control, not fenced" };
        let term = procedures::campaign(&pools[0], &svc, "a", LONG).await.unwrap().term;
        let mut c1 = pools[0].get_conn().await.unwrap();
        let mut tx = c1.start_transaction(mysql_async::TxOpts::default()).await.unwrap();
        if fenced {
            let check = procedures::assert_leader(&mut tx, &svc, "a", term).await.expect("the fence at term T on member 1");
            assert!(check.is_leader && check.term == term);
        }
        tx.exec_drop("UPDATE app SET v = v + 1 WHERE id = ?", (id,)).await.unwrap();
        // The takeover through member 2 (its reads wait until it has applied the campaign).
        let forced = procedures::force_leader(&mut c2, &svc, "b", LONG).await.expect("the takeover through member 2");
        assert_eq!(forced.term, term + 1);
        let commit = tx.commit().await;
        println!("{what}: {} at term {term} on member 1, takeover at term {} through member 2, then COMMIT on member 1: {commit:?}", if fenced { "assert_leader" } else { "no assert_leader" }, term + 1);
        if fenced {
            let e = commit.expect_err("a transaction fenced at term T committed after the takeover at T+1 through another member");
            let code = match &e {
                mysql_async::Error::Server(s) => Some(s.code),
                _ => None,
            };
            println!("the fenced COMMIT failed with code {code:?}");
        } else {
            commit.expect("control: the unfenced write commits in the same interleaving");
        }
        drop(c1);
        for (i, p) in pools.iter().enumerate() {
            let mut c = caught_up(p).await;
            let v: i64 = c.exec_first("SELECT v FROM app WHERE id = ?", (id,)).await.unwrap().unwrap();
            assert_eq!(v, if fenced { 0 } else { 1 }, "{what}: member {}", i + 1);
            let (leader, t): (String, u64) = c
                .exec_first("SELECT leader_id, term FROM leader_election WHERE service_id = CAST(? AS BINARY)", (&svc,))
                .await
                .unwrap()
                .unwrap();
            assert_eq!((leader.as_str(), t), ("b", term + 1), "{what}: member {} has the takeover", i + 1);
        }
    }
    drop(c2);
    drop_database(pools, primary, &db).await;
    println!("test took {:?}", t_test.elapsed());
}
