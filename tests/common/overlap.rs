//! Watching several electors of one service in one process: the one leader, and a monitor that
//! fails the test at any instant (sampled every millisecond) at which two nodes believe they lead.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mysqlleader::Elector;
use tokio::time::Instant;

/// Waits until exactly one of `electors` leads; returns its index.
pub async fn one_leader(electors: &[&Elector], within: Duration) -> usize {
    let until = Instant::now() + within;
    loop {
        let leading: Vec<usize> = (0..electors.len()).filter(|&i| electors[i].is_leader()).collect();
        assert!(leading.len() <= 1, "two leaders at once: {leading:?}");
        if let [i] = leading[..] {
            return i;
        }
        assert!(Instant::now() < until, "no leader within {within:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Polls every elector every millisecond and fails on any instant with two leaders.
pub struct OverlapMonitor {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<u64>,
}

impl OverlapMonitor {
    pub fn start(electors: Vec<(String, tokio::sync::watch::Receiver<mysqlleader::State>)>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let task = tokio::spawn(async move {
            let mut samples = 0u64;
            while !s.load(Ordering::SeqCst) {
                let now = Instant::now();
                let leading: Vec<&str> = electors.iter().filter(|(_, rx)| rx.borrow().leads_at(now)).map(|(n, _)| n.as_str()).collect();
                assert!(leading.len() <= 1, "two nodes believed they led at one instant: {leading:?}");
                samples += 1;
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            samples
        });
        OverlapMonitor { stop, task }
    }

    pub async fn finish(self) -> u64 {
        self.stop.store(true, Ordering::SeqCst);
        self.task.await.expect("no overlap")
    }
}

pub fn watched(e: &Elector) -> (String, tokio::sync::watch::Receiver<mysqlleader::State>) {
    (e.node_id().to_string(), e.watch())
}
