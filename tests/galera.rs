//! The election on a real 3-node MariaDB Galera cluster (scripts/galera.sh), three electors each
//! attached to a different node with the other two as fallbacks: kill -9 of the leader's node
//! and of a follower's node, a node isolated from the others (gmcast.isolate), and each node's
//! return. Checked: never two leaders at one instant (polled every millisecond in this one
//! process, on one monotonic clock), a leader again within a documented bound after each
//! fault, terms gapless in the history.
//!
//! Needs a running cluster: run through `scripts/test-galera.sh` (part of `make test`), which
//! starts one and sets MYSQLLEADER_GALERA_URL1..3 and MYSQLLEADER_GALERA_DIR. Marked ignored so
//! that a plain `cargo test` without a cluster does not run it.
mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysqlleader::{Elector, State};
use tokio::sync::watch;
use tokio::time::Instant;

const LEASE: Duration = Duration::from_secs(3);
const RENEW: Duration = Duration::from_millis(600);
const RETRY: Duration = Duration::from_millis(300);
/// After a node fault the survivors stall commits until the failed node is evicted (2–3 s with
/// the shortened timeouts of scripts/galera.sh); the bound is one eviction, one lease, one retry,
/// and room for a shared 2-core machine.
const FAULT_BOUND: Duration = Duration::from_secs(20);

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run scripts/test-galera.sh"))
}

fn pool(url: &str) -> mysql_async::Pool {
    mysql_async::Pool::new(mysql_async::Opts::from_url(url).unwrap())
}

fn galera(args: &[&str]) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/galera.sh");
    let out = std::process::Command::new("bash").arg(script).args(args).output().unwrap();
    assert!(out.status.success(), "galera.sh {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

struct Cluster {
    dir: String,
    urls: Vec<String>,
}

impl Cluster {
    fn from_env() -> Cluster {
        Cluster {
            dir: env("MYSQLLEADER_GALERA_DIR"),
            urls: (1..=3).map(|i| env(&format!("MYSQLLEADER_GALERA_URL{i}"))).collect(),
        }
    }
    fn kill(&self, node: usize) { galera(&["kill", &self.dir, &node.to_string()]) }
    fn restart(&self, node: usize) { galera(&["restart", &self.dir, &node.to_string()]) }
    fn isolate(&self, node: usize, on: bool) { galera(&["isolate", &self.dir, &node.to_string(), if on { "on" } else { "off" }]) }
}

/// Fails (panics) as soon as two electors lead at one instant.
fn monitor(states: Vec<watch::Receiver<State>>, stop: Arc<AtomicBool>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while !stop.load(Ordering::SeqCst) {
            let now = Instant::now();
            let n = states.iter().filter(|s| s.borrow().leads_at(now)).count();
            assert!(n <= 1, "{n} electors led at one instant");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
}

/// Waits for a leader; returns (index, time waited).
async fn leader_within(electors: &[Elector], bound: Duration) -> (usize, Duration) {
    let t0 = Instant::now();
    loop {
        if let Some(i) = electors.iter().position(|e| e.is_leader()) {
            return (i, t0.elapsed());
        }
        assert!(t0.elapsed() < bound, "no leader within {bound:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Galera cluster: scripts/test-galera.sh"]
async fn galera_node_faults_never_give_two_leaders() {
    let cluster = Cluster::from_env();
    let db = format!("ml_galera_{}", std::process::id());
    {
        let admin = pool(&cluster.urls[0]);
        let mut c = admin.get_conn().await.unwrap();
        c.query_drop(format!("CREATE DATABASE `{db}`")).await.unwrap();
        drop(c);
        admin.disconnect().await.unwrap();
    }
    let urls: Vec<String> = cluster.urls.iter().map(|u| common::url_with_db(u, &db)).collect();
    let pools: Vec<mysql_async::Pool> = urls.iter().map(|u| pool(u)).collect();
    let applied = mysqlleader::migrate(&pools[0]).await.expect("the migrations run unchanged on Galera");
    assert!(!applied.is_empty());

    // Elector i talks to node i first, then the others.
    let electors: Vec<Elector> = (0..3)
        .map(|i| {
            Elector::builder(pools[i].clone(), "galera")
                .node_id(format!("elector-on-node{}", i + 1))
                .fallback_servers((1..3).map(|k| pools[(i + k) % 3].clone()))
                .lease(LEASE)
                .renew_interval(RENEW)
                .retry_interval(RETRY)
                .resign_on_drop(false)
                .start()
                .unwrap()
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = monitor(electors.iter().map(|e| e.watch()).collect(), stop.clone());

    let (first, t) = leader_within(&electors, Duration::from_secs(20)).await;
    println!("first leader: {} after {t:?}", electors[first].node_id());

    // Node numbers are 1-based; elector i starts on node i+1.
    let faults: Vec<(&str, Box<dyn Fn(usize) -> usize>)> = vec![
        ("kill -9 of the leader's node", Box::new(|leader| leader + 1)),
        ("kill -9 of a follower's node", Box::new(|leader| (leader + 1) % 3 + 1)),
        ("the leader's node isolated", Box::new(|leader| leader + 1)),
    ];
    for (name, pick) in faults {
        let (leader, _) = leader_within(&electors, FAULT_BOUND).await;
        let node = pick(leader);
        let t0 = Instant::now();
        let isolate = name.contains("isolated");
        if isolate { cluster.isolate(node, true) } else { cluster.kill(node) }
        // Let the fault take effect (eviction), then require a leader within the bound.
        tokio::time::sleep(LEASE).await;
        let (now_leading, _) = leader_within(&electors, FAULT_BOUND).await;
        println!("{name} (node {node}): {} leads, {:?} after the fault", electors[now_leading].node_id(), t0.elapsed());
        if isolate { cluster.isolate(node, false) } else { cluster.restart(node) }
        let t1 = Instant::now();
        let (back, _) = leader_within(&electors, FAULT_BOUND).await;
        println!("node {node} back: {} leads, {:?} after its return", electors[back].node_id(), t1.elapsed());
    }

    // A crash of the leading elector itself (no resign): another elector, on another node,
    // takes over once the lease has run out, with the next term.
    let mut electors: Vec<Option<Elector>> = electors.into_iter().map(Some).collect();
    let leader = electors.iter().position(|e| e.as_ref().is_some_and(|e| e.is_leader())).expect("a leader");
    let crashed = electors[leader].take().unwrap();
    let term_before = crashed.term();
    let t0 = Instant::now();
    crashed.shutdown().await.unwrap(); // resign_on_drop(false): the lease is left to lapse
    let rest: Vec<Elector> = electors.into_iter().flatten().collect();
    let (next, _) = leader_within(&rest, LEASE + RETRY + FAULT_BOUND).await;
    println!("leader crashed: {} leads {:?} later at term {}", rest[next].node_id(), t0.elapsed(), rest[next].term());
    assert_eq!(rest[next].term(), term_before + 1, "one acquisition, one term");

    stop.store(true, Ordering::SeqCst);
    watcher.await.expect("never two leaders at one instant");
    for e in rest {
        e.shutdown().await.unwrap();
    }
    // Terms are gapless and rising in the history (read on node 1).
    let mut c = pools[0].get_conn().await.unwrap();
    let terms: Vec<u64> = c
        .query("SELECT term FROM leader_election_history WHERE service_id = 'galera' ORDER BY term")
        .await
        .unwrap();
    assert!(!terms.is_empty());
    assert_eq!(terms, (1..=terms.len() as u64).collect::<Vec<_>>(), "gapless terms");
    println!("terms: {terms:?}");
    c.query_drop(format!("DROP DATABASE `{db}`")).await.unwrap();
    drop(c);
    for p in pools {
        let _ = p.disconnect().await;
    }
}
