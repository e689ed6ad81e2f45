//! One candidate of the failover measurement: a process that runs an [`Elector`] and reports on
//! standard output every moment it starts or stops leading, so that the benchmark can SIGKILL it
//! or make it resign and time the handover. The benchmark runs its own executable in this mode
//! (`election --candidate ...`), so the candidate is always built from the same tree;
//! `examples/bench_candidate.rs` runs the same code by hand.
//!
//! Arguments: `URL SERVICE NODE LEASE_MS` (LEASE_MS 0: the library's default lease).
//!
//! Output lines (times in microseconds since the Unix epoch, this host's clock):
//! `ready`, `lead TERM T`, `stop TERM T`, `resigning T`, `resigned 0|1 T`.
//! Commands on standard input, one per line: `handover NODE` (hand over to NODE: `resigning`
//! and `resigned` lines as for resign; the elector goes on as a follower), `resign` (resign now; the elector then stops
//! campaigning), `rejoin` (a new elector for the same node), `quit`. End of input also quits.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mysqlleader::{Elector, Event};
use tokio::io::{AsyncBufReadExt, BufReader};

pub fn now_us() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_micros()).unwrap_or(0)
}

fn start(pool: &mysql_async::Pool, service: &str, node: &str, lease_ms: u64) -> Elector {
    let mut builder = Elector::builder(pool.clone(), service).node_id(node);
    if lease_ms > 0 {
        builder = builder.lease(Duration::from_millis(lease_ms));
    }
    let elector = builder.start().expect("valid elector configuration");
    let mut events = elector.events();
    tokio::spawn(async move {
        while let Ok(event) = events.recv().await {
            match event {
                Event::StartedLeading { term, .. } => println!("lead {term} {}", now_us()),
                Event::StoppedLeading { term, .. } => println!("stop {term} {}", now_us()),
                Event::LeaderChanged { .. } | Event::ElectorStopped { .. } | Event::Failing { .. } => {}
            }
        }
    });
    elector
}

/// Runs a candidate until `quit` or the end of standard input.
pub fn main(args: Vec<String>) -> i32 {
    if args.len() != 4 {
        eprintln!("usage: bench_candidate URL SERVICE NODE LEASE_MS");
        return 2;
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    rt.block_on(async move {
        let (url, service, node) = (&args[0], &args[1], &args[2]);
        let lease_ms: u64 = args[3].parse().expect("LEASE_MS is a number");
        let pool = mysqlleader::pool_from_url(url).expect("valid URL");
        let mut elector = Some(start(&pool, service, node, lease_ms));
        println!("ready");
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            match line.trim() {
                "resign" => {
                    if let Some(e) = &elector {
                        println!("resigning {}", now_us());
                        let ok = e.resign().await.unwrap_or(false);
                        println!("resigned {} {}", u8::from(ok), now_us());
                    }
                }
                cmd if cmd.starts_with("handover ") => {
                    if let Some(e) = &elector {
                        let to = cmd["handover ".len()..].trim();
                        println!("resigning {}", now_us());
                        let ok = e.handover(to).await.unwrap_or(false);
                        println!("resigned {} {}", u8::from(ok), now_us());
                    }
                }
                "rejoin" => {
                    if let Some(old) = elector.take() {
                        let _ = old.shutdown().await;
                    }
                    elector = Some(start(&pool, service, node, lease_ms));
                }
                "quit" => break,
                _ => {}
            }
        }
        if let Some(e) = elector.take() {
            let _ = e.shutdown().await;
        }
        let _ = pool.disconnect().await;
    });
    0
}
