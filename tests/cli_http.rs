//! `mysqlleader run` as operations see it: `--http` endpoints scraped during a failover, signals
//! forwarded to COMMAND, a crash-looping COMMAND under `--restart` that yields the seat, and
//! `--try`. Against the real server; liveness bounds are generous (a shared 2-core machine),
//! safety (never 200 on two nodes at once) has no slack.

use crate::{common, cli_support};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use cli_support::{cli, signal, wait_until, RunProc, Scratch};

const PATIENCE: Duration = Duration::from_secs(15);

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// One HTTP request; the status code and the body (empty for HEAD). `None` when nobody answers.
fn http(port: u16, method: &str, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(s, "{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let code = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    Some((code, body))
}

#[tokio::test]
async fn http_endpoints_follow_a_failover_and_never_say_leader_twice() {
    let db = common::TestDb::migrated("run_http").await;
    let dir = Scratch::new("run_http");
    let (pa, pb) = (free_port(), free_port());
    let mut a = RunProc::start(&db.url, &dir.0, "web", "node-a", &["--lease", "2s", "--http", &format!("127.0.0.1:{pa}")], &["sleep", "60"]);
    assert!(wait_until(PATIENCE, || http(pa, "GET", "/leader").is_some_and(|(c, _)| c == 200)), "{}", a.log());
    let mut b = RunProc::start(&db.url, &dir.0, "web", "node-b", &["--lease", "2s", "--http", &format!("127.0.0.1:{pb}")], &["sleep", "60"]);
    assert!(wait_until(PATIENCE, || http(pb, "GET", "/healthz").is_some_and(|(c, _)| c == 200)), "{}", b.log());
    assert_eq!(http(pb, "GET", "/leader").map(|(c, _)| c), Some(503), "a follower is not the leader");
    assert_eq!(http(pa, "HEAD", "/leader"), Some((200, String::new())), "HEAD: the status, no body");
    assert_eq!(http(pa, "GET", "/nothing").map(|(c, _)| c), Some(404));
    assert_eq!(http(pa, "POST", "/leader").map(|(c, _)| c), Some(405));
    let (code, metrics) = http(pa, "GET", "/metrics").unwrap();
    assert_eq!(code, 200);
    for name in ["leader_election_master_status{name=\"web\"} 1", "mysqlleader_term{name=\"web\"} 1",
                 "mysqlleader_leadership_transitions_total{name=\"web\"}", "mysqlleader_campaign_errors_total{name=\"web\"}",
                 "mysqlleader_campaign_duration_seconds_bucket{name=\"web\",le=\"+Inf\"}"] {
        assert!(metrics.contains(name), "{name} missing:\n{metrics}");
    }
    let (_, metrics_b) = http(pb, "GET", "/metrics").unwrap();
    assert!(metrics_b.contains("leader_election_master_status{name=\"web\"} 0"), "{metrics_b}");

    // Failover (the leader is told to leave): scrape both every few ms; never 200 on both.
    // The new leader first, then the old: leadership only moves from a to b here, so a's 200
    // after b's is a real overlap (a still said leader after b had begun to). The other order
    // would flag a handover that fell between the two requests (seen under CI load on MySQL:
    // a answered, resigned, b was woken and took the seat, then b answered: no overlap).
    let t0 = Instant::now();
    signal(a.pid(), libc::SIGTERM);
    let mut flipped = false;
    while t0.elapsed() < PATIENCE {
        let cb = http(pb, "GET", "/leader").map(|r| r.0);
        let ca = http(pa, "GET", "/leader").map(|r| r.0);
        assert!(!(ca == Some(200) && cb == Some(200)), "both nodes answered 200 on /leader at once");
        if cb == Some(200) {
            flipped = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(flipped, "b never became the leader: {}", b.log());
    assert_eq!(a.wait(PATIENCE), Some(128 + libc::SIGTERM), "{}", a.log());
    signal(b.pid(), libc::SIGTERM);
    assert_eq!(b.wait(PATIENCE), Some(128 + libc::SIGTERM), "{}", b.log());
    db.drop_db().await;
}

/// `--http` on a port already taken: exit 2 naming the address, before any campaign (the
/// service's history stays empty: no term won and resigned at once).
#[tokio::test]
async fn a_taken_http_port_fails_before_any_campaign() {
    use mysql_async::prelude::Queryable;
    let db = common::TestDb::migrated("run_http_taken").await;
    let dir = Scratch::new("run_http_taken");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("127.0.0.1:{}", taken.local_addr().unwrap().port());
    let started = dir.path("started");
    let mut run = RunProc::start(&db.url, &dir.0, "taken", "node-a", &["--lease", "2s", "--http", &addr],
                                 &["touch", started.to_str().unwrap()]);
    assert_eq!(run.wait(PATIENCE), Some(2), "{}", run.log());
    assert!(run.log().contains(&format!("--http {addr}")), "the message names the address: {}", run.log());
    assert!(!started.exists(), "COMMAND ran");
    let mut admin = db.conn().await;
    let terms: Option<i64> = admin.query_first("SELECT COUNT(*) FROM leader_election_history WHERE service_id = 'taken'").await.unwrap();
    let seats: Option<i64> = admin.query_first("SELECT COUNT(*) FROM leader_election WHERE service_id = 'taken'").await.unwrap();
    assert_eq!((terms, seats), (Some(0), Some(0)), "a campaign happened: {}", run.log());
    drop(admin);
    drop(taken);
    db.drop_db().await;
}

#[tokio::test]
async fn signals_run_does_not_use_are_forwarded_to_command() {
    let db = common::TestDb::migrated("run_signals").await;
    let dir = Scratch::new("run_signals");
    let got = dir.path("got");
    let ready = dir.path("ready");
    let script = format!(
        "trap 'echo HUP >> {g}' HUP; trap 'echo USR1 >> {g}' USR1; trap 'echo USR2 >> {g}' USR2; touch {r}; \
         while :; do sleep 0.05; done",
        g = got.display(), r = ready.display()
    );
    let mut run = RunProc::start(&db.url, &dir.0, "sig", "node-a", &["--lease", "2s"], &["sh", "-c", &script]);
    assert!(wait_until(PATIENCE, || ready.exists()), "{}", run.log());
    for (signo, name) in [(libc::SIGHUP, "HUP"), (libc::SIGUSR1, "USR1"), (libc::SIGUSR2, "USR2")] {
        signal(run.pid(), signo);
        assert!(wait_until(PATIENCE, || std::fs::read_to_string(&got).unwrap_or_default().contains(name)), "{name} not forwarded: {}", run.log());
    }
    // run is still there, COMMAND too: the forwarded signals stopped nothing.
    assert_eq!(run.wait(Duration::from_millis(300)), None, "run ended on a forwarded signal: {}", run.log());
    signal(run.pid(), libc::SIGINT);
    assert_eq!(run.wait(PATIENCE), Some(128 + libc::SIGINT), "{}", run.log());
    db.drop_db().await;
}

#[tokio::test]
async fn a_crash_looping_command_under_restart_yields_the_seat() {
    let db = common::TestDb::migrated("run_crashloop").await;
    let dir = Scratch::new("run_crashloop");
    let mut bad = RunProc::start(&db.url, &dir.0, "loop", "node-bad", &["--lease", "2s", "--restart", "--restart-backoff", "50ms"], &["false"]);
    assert!(wait_until(PATIENCE, || cli(Some(&db.url), &["status", "loop"]).code == 0), "{}", bad.log());
    let healthy = dir.path("healthy");
    let mut good = RunProc::start(&db.url, &dir.0, "loop", "node-good", &["--lease", "2s"],
                                  &["sh", "-c", &format!("touch {}; sleep 60", healthy.display())]);
    assert!(wait_until(Duration::from_secs(30), || healthy.exists()), "the healthy node never got the seat:\n{}\n{}", bad.log(), good.log());
    assert!(bad.log().contains("resigning, and staying out for one lease"), "{}", bad.log());
    signal(good.pid(), libc::SIGTERM);
    signal(bad.pid(), libc::SIGTERM);
    let _ = good.wait(PATIENCE);
    let _ = bad.wait(PATIENCE);
    db.drop_db().await;
}

#[tokio::test]
async fn try_gives_up_with_its_own_exit_status() {
    let db = common::TestDb::migrated("run_try").await;
    let dir = Scratch::new("run_try");
    assert_eq!(cli(Some(&db.url), &["campaign", "held", "other", "--lease", "30s"]).code, 0);
    let mut run = RunProc::start(&db.url, &dir.0, "held", "node-a", &["--lease", "2s", "--try", "1s"], &["true"]);
    assert_eq!(run.wait(PATIENCE), Some(75), "{}", run.log());
    db.drop_db().await;
}
