//! `mysqlleader run` against the real server: COMMAND runs only while its node leads, with the
//! documented environment and exit status; when a leader is cut off (frozen with SIGSTOP,
//! forced out) or killed, its COMMAND is gone before another node's COMMAND starts; COMMAND
//! never outlives `run`. And the demo runs to its end.
//!
//! The workers stamp CLOCK_MONOTONIC (one clock for every process on the host) into one file;
//! `lives_in_order` checks that no two workers' lives overlap. Safety is checked without slack;
//! liveness (someone leads again) with generous bounds, for a shared 2-core machine.

use crate::{common, cli_support};
use std::time::Duration;

use cli_support::{alive, cli, lives_in_order, monotonic_ns, signal, stamps, wait_until, RunProc, Scratch};

const LEASE: &str = "2s";
const LEASE_NS: u64 = 2_000_000_000;
/// For liveness only: how long a takeover may take on a busy machine.
const PATIENCE: Duration = Duration::from_secs(15);

fn leader_of(url: &str, service: &str) -> Option<String> {
    let out = cli(Some(url), &["status", service, "--json"]);
    if out.code != 0 {
        return None;
    }
    out.json()["leader_id"].as_str().map(str::to_string)
}

/// The pid of the most recent worker of `node`, once it has stamped.
fn worker_of(dir: &std::path::Path, node: &str) -> Option<i32> {
    stamps(dir).into_iter().rev().find(|s| s.node == node).map(|s| s.pid)
}

#[tokio::test]
async fn exit_status_and_environment_are_as_documented() {
    let db = common::TestDb::migrated("run_env").await;
    let dir = Scratch::new("run_env");
    let file = dir.path("env");
    let script = format!("echo \"$MYSQLLEADER_SERVICE|$MYSQLLEADER_NODE|$MYSQLLEADER_TERM\" > {}; exit 7", file.display());
    let credentials = format!("echo \"${{MYSQLLEADER_URL:-no url}}|${{MYSQLLEADER_PASSWORD:-no password}}\" > {}", dir.path("credentials").display());

    // COMMAND's status is run's; the environment names service, node and term.
    let mut run = RunProc::start(&db.url, &dir.0, "billing", "node-a", &["--lease", LEASE], &["sh", "-c", &script]);
    assert_eq!(run.wait(PATIENCE), Some(7), "{}", run.log());
    assert_eq!(dir.read("env"), "billing|node-a|1\n");

    // run's credentials (MYSQLLEADER_URL here) are not COMMAND's, unless passed on purpose.
    let mut run = RunProc::start(&db.url, &dir.0, "billing", "node-a", &["--lease", LEASE], &["sh", "-c", &credentials]);
    assert_eq!(run.wait(PATIENCE), Some(0), "{}", run.log());
    assert_eq!(dir.read("credentials"), "no url|no password\n");
    let mut run = RunProc::start(&db.url, &dir.0, "billing", "node-a", &["--lease", LEASE, "--pass-credentials"], &["sh", "-c", &credentials]);
    assert_eq!(run.wait(PATIENCE), Some(0), "{}", run.log());
    assert_eq!(dir.read("credentials"), format!("{}|no password\n", db.url));
    // It resigned: the seat is vacant at once, the term ended 'resigned'.
    let j = cli(Some(&db.url), &["status", "billing", "--json"]).json();
    assert_eq!(j["leader_id"], serde_json::Value::Null, "{j}");
    assert_eq!(j["ended_how"], "resigned", "{j}");

    // The next leader gets the next term.
    let mut run = RunProc::start(&db.url, &dir.0, "billing", "node-b", &["--lease", LEASE], &["sh", "-c", &script]);
    assert_eq!(run.wait(PATIENCE), Some(7), "{}", run.log());
    assert_eq!(dir.read("env"), "billing|node-b|4\n");

    // Killed by a signal: 128 + the signal, like a shell.
    let mut run = RunProc::start(&db.url, &dir.0, "billing", "node-c", &["--lease", LEASE], &["sh", "-c", "kill -KILL $$"]);
    assert_eq!(run.wait(PATIENCE), Some(137), "{}", run.log());
    let mut run = RunProc::start(&db.url, &dir.0, "billing", "node-c", &["--lease", LEASE], &["true"]);
    assert_eq!(run.wait(PATIENCE), Some(0), "{}", run.log());

    // Mistakes: exit 2 with a message, before campaigning.
    let out = cli(Some(&db.url), &["run", "--service", "billing", "--", "no-such-program-xyz"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("command not found"), "{}", out.stderr);
    let out = cli(Some(&db.url), &["run", "--service", "billing"]);
    assert_eq!(out.code, 2, "{out:?}");
    let out = cli(Some(&db.url), &["run", "--service", "billing", "--lease", "2s", "--grace", "0s", "--", "true"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("invalid --grace"), "{}", out.stderr);
    let out = cli(Some(&db.url), &["run", "--service", "billing", "--lease", "2s", "--renew", "1s", "--", "true"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("invalid --renew"), "{}", out.stderr);
    let out = cli(Some(&db.url), &["run", "--service", "", "--", "true"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("service"), "{}", out.stderr);
    db.drop_db().await;
}

#[tokio::test]
async fn command_runs_only_while_leading_and_stops_when_forced_out() {
    let db = common::TestDb::migrated("run_only").await;
    let dir = Scratch::new("run_only");
    let url = db.url.as_str();

    // Someone else holds the seat: nothing starts.
    assert_eq!(cli(Some(url), &["force", "jobs", "operator", "--lease", "3s"]).code, 0);
    let mut run = RunProc::worker(url, &dir.0, "jobs", "node-a", &["--lease", LEASE]);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(stamps(&dir.0).is_empty(), "COMMAND ran while another node led");
    // The seat frees up: COMMAND starts, at the new term.
    assert!(wait_until(PATIENCE, || worker_of(&dir.0, "node-a").is_some()), "{}", run.log());
    let first = worker_of(&dir.0, "node-a").unwrap();
    assert_eq!(stamps(&dir.0)[0].term, 2);

    // Forced out: COMMAND is stopped, and `run` keeps campaigning.
    assert_eq!(cli(Some(url), &["force", "jobs", "operator", "--lease", "3s"]).code, 0);
    assert!(wait_until(PATIENCE, || !alive(first)), "COMMAND survived a force: {}", run.log());
    assert!(run.child.try_wait().unwrap().is_none(), "run itself keeps campaigning");
    let stopped_at = monotonic_ns();
    // When the operator's lease has run out, node-a leads again at a new term with a new COMMAND.
    assert!(wait_until(PATIENCE, || worker_of(&dir.0, "node-a").is_some_and(|p| p != first)), "{}", run.log());
    let lives = lives_in_order(&dir.0);
    assert_eq!(lives.len(), 2, "{lives:?}");
    assert_eq!(lives[1].term, 4, "{lives:?}");
    assert!(lives[0].last_ns < stopped_at);
    assert!(run.log().contains("node-a no longer leads jobs (term 2"), "{}", run.log());

    // SIGTERM: COMMAND stops, run resigns and exits 128 + 15.
    let second = lives[1].pid;
    signal(run.pid(), libc::SIGTERM);
    assert_eq!(run.wait(PATIENCE), Some(143), "{}", run.log());
    assert!(!alive(second));
    assert_eq!(leader_of(url, "jobs"), None);
    db.drop_db().await;
}

#[tokio::test]
async fn a_frozen_leaders_command_is_gone_by_its_deadline_before_the_next_starts() {
    let db = common::TestDb::migrated("run_stop").await;
    let dir = Scratch::new("run_stop");
    let url = db.url.as_str();

    let mut runs = vec![
        RunProc::worker(url, &dir.0, "jobs", "node-a", &["--lease", LEASE]),
        RunProc::worker(url, &dir.0, "jobs", "node-b", &["--lease", LEASE]),
    ];
    assert!(wait_until(PATIENCE, || !stamps(&dir.0).is_empty()), "nobody started");
    let leader = stamps(&dir.0)[0].node.clone();
    let worker = worker_of(&dir.0, &leader).unwrap();
    let (frozen, other) = if leader == "node-a" { (0, 1) } else { (1, 0) };

    // Freeze the leader's `run`. Its guard stops COMMAND by the deadline: no later than one
    // lease after the freeze (the last renew was sent before it).
    let frozen_at = monotonic_ns();
    signal(runs[frozen].pid(), libc::SIGSTOP);
    assert!(wait_until(PATIENCE, || !alive(worker)), "the frozen leader's COMMAND kept running");
    let last = stamps(&dir.0).into_iter().filter(|s| s.pid == worker).map(|s| s.ns).max().unwrap();
    assert!(last < frozen_at + LEASE_NS, "COMMAND stamped {} ms after the freeze", (last - frozen_at) / 1_000_000);

    // The other node takes over, and its COMMAND starts only after the first is gone.
    let next = runs[other].node.clone();
    assert!(wait_until(PATIENCE, || worker_of(&dir.0, &next).is_some()), "{}", runs[other].log());
    let lives = lives_in_order(&dir.0);
    assert_eq!(lives.last().unwrap().node, next);
    assert!(lives.last().unwrap().term > lives[0].term);

    // Thawed, the old leader sees it lost, and does not start COMMAND while the other leads.
    signal(runs[frozen].pid(), libc::SIGCONT);
    std::thread::sleep(Duration::from_millis(1500));
    let lives = lives_in_order(&dir.0);
    assert_eq!(lives.len(), 2, "{lives:?}");
    assert_eq!(leader_of(url, "jobs").as_deref(), Some(next.as_str()));

    for run in &mut runs {
        signal(run.pid(), libc::SIGTERM);
        assert_eq!(run.wait(PATIENCE), Some(143), "{}", run.log());
    }
    assert!(lives.iter().all(|l| !alive(l.pid)));
    db.drop_db().await;
}

/// `--fallback-url` (a Galera cluster's other nodes): a leader cut off from its first server
/// renews through the next one before its deadline, so its COMMAND keeps running and nobody
/// takes over. (Here both URLs reach one server: the first through a proxy that gets cut.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_cut_off_from_its_first_server_keeps_leading_through_a_fallback() {
    let db = common::TestDb::migrated("run_fallback").await;
    let dir = Scratch::new("run_fallback");
    let proxy = common::proxy::Proxy::start(common::proxy::server_addr(&db.url)).await;
    let cut_url = proxy.url_for(&db.url);

    let mut a = RunProc::worker(&cut_url, &dir.0, "jobs", "node-a", &["--lease", LEASE, "--fallback-url", &db.url]);
    assert!(wait_until(PATIENCE, || worker_of(&dir.0, "node-a").is_some()), "{}", a.log());
    let mut b = RunProc::worker(&db.url, &dir.0, "jobs", "node-b", &["--lease", LEASE]);
    let worker = worker_of(&dir.0, "node-a").unwrap();
    proxy.cut();
    // Three leases: time enough for a takeover, were node-a's lease to run out.
    std::thread::sleep(Duration::from_nanos(3 * LEASE_NS));
    assert!(alive(worker), "the leader's COMMAND was stopped although a fallback server answered: {}", a.log());
    assert_eq!(leader_of(&db.url, "jobs").as_deref(), Some("node-a"), "{}", b.log());
    assert_eq!(lives_in_order(&dir.0).len(), 1, "{}", b.log());

    // A --fallback-url that is not a URL is refused, by name, before anything starts.
    let out = cli(Some(&db.url), &["run", "--service", "jobs", "--fallback-url", "not a url", "--", "true"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("invalid --fallback-url"), "{}", out.stderr);

    for run in [&mut a, &mut b] {
        signal(run.pid(), libc::SIGTERM);
        assert_eq!(run.wait(PATIENCE), Some(143), "{}", run.log());
    }
    db.drop_db().await;
}

// Multi-threaded: the proxy's tasks run while the test body blocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_cut_off_from_the_database_stops_its_command_before_its_lease_ends() {
    let db = common::TestDb::migrated("run_cut").await;
    let dir = Scratch::new("run_cut");
    let proxy = common::proxy::Proxy::start(common::proxy::server_addr(&db.url)).await;
    let cut_url = proxy.url_for(&db.url);

    let mut a = RunProc::worker(&cut_url, &dir.0, "jobs", "node-a", &["--lease", LEASE]);
    assert!(wait_until(PATIENCE, || worker_of(&dir.0, "node-a").is_some()), "{}", a.log());
    let mut b = RunProc::worker(&db.url, &dir.0, "jobs", "node-b", &["--lease", LEASE]);
    std::thread::sleep(Duration::from_millis(500));
    let worker = worker_of(&dir.0, "node-a").unwrap();

    // Cut node-a off: its renews fail, and its COMMAND is stopped before its lease ends in the
    // database (SIGTERM at the deadline minus the grace period, SIGKILL before the deadline).
    let cut_at = monotonic_ns();
    proxy.cut();
    assert!(wait_until(PATIENCE, || !alive(worker)), "a cut-off leader's COMMAND kept running: {}", a.log());
    let last = stamps(&dir.0).into_iter().filter(|s| s.pid == worker).map(|s| s.ns).max().unwrap();
    assert!(last < cut_at + LEASE_NS, "COMMAND stamped {} ms after the cut", (last - cut_at) / 1_000_000);
    assert!(wait_until(PATIENCE, || worker_of(&dir.0, "node-b").is_some()), "{}", b.log());
    let lives = lives_in_order(&dir.0);
    assert_eq!(lives.iter().map(|l| l.node.as_str()).collect::<Vec<_>>(), ["node-a", "node-b"]);
    assert!(a.child.try_wait().unwrap().is_none(), "run keeps campaigning while cut off");
    assert!(a.log().contains("campaign failed"), "{}", a.log());
    assert!(a.log().contains("COMMAND stopped"), "{}", a.log());

    // Back in contact: node-a follows node-b and starts nothing.
    proxy.restore();
    assert!(wait_until(PATIENCE, || a.log().contains("the database answers again")), "{}", a.log());
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(lives_in_order(&dir.0).len(), 2);
    for run in [&mut a, &mut b] {
        signal(run.pid(), libc::SIGTERM);
        assert_eq!(run.wait(PATIENCE), Some(143), "{}", run.log());
    }
    db.drop_db().await;
}

#[tokio::test]
async fn command_never_outlives_a_killed_run_nor_its_own_children() {
    let db = common::TestDb::migrated("run_kill").await;
    let dir = Scratch::new("run_kill");
    let url = db.url.as_str();
    // COMMAND leaves a child in its group and one that escaped with setsid.
    let script = format!(
        "sleep 600 & echo $! > {d}/in_group; setsid sleep 601 & echo $! > {d}/escaped; exec python3 {d}/worker.py {d}",
        d = dir.0.display()
    );
    std::fs::write(dir.path("worker.py"), cli_support::WORKER).unwrap();
    let run = RunProc::start(url, &dir.0, "jobs", "node-a", &["--lease", LEASE], &["sh", "-c", &script]);
    assert!(wait_until(PATIENCE, || worker_of(&dir.0, "node-a").is_some()), "{}", run.log());
    let pids: Vec<i32> = vec![
        worker_of(&dir.0, "node-a").unwrap(),
        dir.read("in_group").trim().parse().unwrap(),
        dir.read("escaped").trim().parse().unwrap(),
    ];
    assert!(pids.iter().all(|&p| alive(p)));

    // SIGKILL of run: its guard sees the control pipe close and kills everything at once
    // (no lease to wait for: bounded here well below the lease).
    let killed_at = monotonic_ns();
    signal(run.pid(), libc::SIGKILL);
    assert!(wait_until(Duration::from_secs(5), || pids.iter().all(|&p| !alive(p))), "left behind: {pids:?}");
    let last = stamps(&dir.0).last().unwrap().ns;
    assert!(last < killed_at + LEASE_NS);
    drop(run);

    // The seat was not resigned (run could not): it lapses, and the next node takes over.
    let mut next = RunProc::worker(url, &dir.0, "jobs", "node-b", &["--lease", LEASE]);
    assert!(wait_until(PATIENCE, || worker_of(&dir.0, "node-b").is_some()), "{}", next.log());
    lives_in_order(&dir.0);
    signal(next.pid(), libc::SIGINT);
    assert_eq!(next.wait(PATIENCE), Some(130), "{}", next.log());
    db.drop_db().await;
}

#[tokio::test]
async fn a_command_that_exits_hands_over_at_once_or_restarts() {
    let db = common::TestDb::migrated("run_exit").await;
    let dir = Scratch::new("run_exit");
    let url = db.url.as_str();

    // Graceful: the leader's COMMAND exits 0 -> run resigns and exits 0 -> the other node's
    // COMMAND starts (after the first is gone), at the next term.
    let mut runs = [
        RunProc::worker(url, &dir.0, "jobs", "node-a", &["--lease", LEASE]),
        RunProc::worker(url, &dir.0, "jobs", "node-b", &["--lease", LEASE]),
    ];
    assert!(wait_until(PATIENCE, || !stamps(&dir.0).is_empty()), "nobody started");
    let leader = stamps(&dir.0)[0].node.clone();
    let (first, second) = if leader == "node-a" { (0, 1) } else { (1, 0) };
    std::fs::write(dir.path(&format!("exit.{leader}")), "").unwrap();
    assert_eq!(runs[first].wait(PATIENCE), Some(0), "{}", runs[first].log());
    assert!(runs[first].log().contains("resigning"), "{}", runs[first].log());
    let next = runs[second].node.clone();
    assert!(wait_until(PATIENCE, || worker_of(&dir.0, &next).is_some()), "{}", runs[second].log());
    let lives = lives_in_order(&dir.0);
    assert_eq!((lives.len(), lives[1].term), (2, lives[0].term + 1), "{lives:?}");
    let j = cli(Some(url), &["status", "jobs", "--json"]).json();
    assert_eq!(j["terms"][1]["ended_how"], "resigned", "{j}");
    signal(runs[second].pid(), libc::SIGTERM);
    assert_eq!(runs[second].wait(PATIENCE), Some(143));

    // --restart: COMMAND is started again while the node leads.
    let script = format!("echo \"$MYSQLLEADER_TERM\" >> {}/runs; sleep 0.1; exit 1", dir.0.display());
    let mut run = RunProc::start(url, &dir.0, "restarting", "node-a", &["--lease", LEASE, "--restart"], &["sh", "-c", &script]);
    assert!(wait_until(PATIENCE, || dir.read("runs").lines().count() >= 3), "{}", run.log());
    assert!(run.child.try_wait().unwrap().is_none());
    assert!(dir.read("runs").lines().all(|t| t == "1"), "one term throughout: {}", dir.read("runs"));
    signal(run.pid(), libc::SIGTERM);
    assert_eq!(run.wait(PATIENCE), Some(143), "{}", run.log());
    db.drop_db().await;
}

/// `--restart` with a 2 s lease: the pauses before the restarts double (100 ms, 200 ms, 400 ms,
/// 800 ms, 1.6 s: past the renew interval, 400 ms), the node keeping its seat (one term) while a
/// pause is at most the lease; the next pause (3.2 s) is longer than the lease, so the node
/// resigns and campaigns again after it, and starts COMMAND at a new term. The pauses are
/// measured between COMMAND's starts: each at least the pause announced, and each more than
/// the one before the last (it doubles twice).
#[tokio::test]
async fn restart_pauses_double_past_the_renew_interval_and_a_long_one_is_spent_out_of_the_seat() {
    let db = common::TestDb::migrated("run_backoff").await;
    let dir = Scratch::new("run_backoff");
    let url = db.url.as_str();
    let script = format!("echo \"$(date +%s%N) $MYSQLLEADER_TERM\" >> {}/starts; exit 1", dir.0.display());
    let mut run = RunProc::start(
        url,
        &dir.0,
        "backoff",
        "node-a",
        &["--lease", LEASE, "--restart", "--restart-backoff", "100ms", "--restart-limit", "50"],
        &["sh", "-c", &script],
    );
    let starts = || -> Vec<(u64, u64)> {
        dir.read("starts")
            .lines()
            .filter_map(|l| l.split_once(' ').and_then(|(ns, t)| Some((ns.parse().ok()?, t.parse().ok()?))))
            .collect()
    };
    assert!(wait_until(Duration::from_secs(40), || starts().len() >= 7), "{}\n{}", dir.read("starts"), run.log());
    let starts = starts();
    let gaps_ms: Vec<u64> = starts.windows(2).map(|w| (w[1].0 - w[0].0) / 1_000_000).collect();
    let pauses_ms = [100u64, 200, 400, 800, 1600, 3200];
    for (i, (&gap, &pause)) in gaps_ms.iter().zip(&pauses_ms).enumerate() {
        assert!(gap >= pause, "start {} came {gap} ms after the one before, not after the pause of {pause} ms: {gaps_ms:?}\n{}", i + 2, run.log());
        assert!(gap < 2 * pause + 3_000, "start {} came {gap} ms after the one before (pause {pause} ms): {gaps_ms:?}\n{}", i + 2, run.log());
    }
    for w in gaps_ms[..6].windows(3) {
        assert!(w[2] > w[0], "the pauses do not grow: {gaps_ms:?}\n{}", run.log());
    }
    // The first six starts at one term (the seat kept through pauses of up to 1.6 s); the
    // seventh, after the 3.2 s pause spent out of the seat, at a later term.
    let first = starts[0].1;
    assert!(starts[..6].iter().all(|s| s.1 == first), "one term through the short pauses: {starts:?}\n{}", run.log());
    assert!(starts[6].1 > first, "a new term after resigning: {starts:?}\n{}", run.log());
    let log = run.log();
    for said in ["starting it again in 100 ms", "starting it again in 800 ms", "starting it again in 1.6 s"] {
        assert!(log.contains(said), "{said:?} not in:\n{log}");
    }
    assert!(log.contains("its next start is due in 3.2 s, longer than the lease (2.0 s): resigning"), "{log}");
    let j = cli(Some(url), &["status", "backoff", "--json"]).json();
    let ended = j["terms"].as_array().unwrap().iter().find(|t| t["term"] == first).map(|t| t["ended_how"].clone());
    assert_eq!(ended, Some(serde_json::json!("resigned")), "{j}");
    signal(run.pid(), libc::SIGTERM);
    assert!(matches!(run.wait(PATIENCE), Some(143)), "{}", run.log());
    db.drop_db().await;
}

#[tokio::test]
async fn sigint_stops_command_with_sigterm_then_resigns() {
    let db = common::TestDb::migrated("run_int").await;
    let dir = Scratch::new("run_int");
    let script = format!(
        "trap 'echo stopped-by-TERM > {d}/trapped; exit 3' TERM; touch {d}/ready; while :; do sleep 0.05; done",
        d = dir.0.display()
    );
    let mut run = RunProc::start(&db.url, &dir.0, "jobs", "node-a", &["--lease", LEASE], &["sh", "-c", &script]);
    assert!(wait_until(PATIENCE, || leader_of(&db.url, "jobs").as_deref() == Some("node-a")), "{}", run.log());
    assert!(wait_until(PATIENCE, || dir.path("ready").exists()), "{}", run.log());
    signal(run.pid(), libc::SIGINT);
    assert_eq!(run.wait(PATIENCE), Some(130), "{}", run.log());
    assert_eq!(dir.read("trapped"), "stopped-by-TERM\n");
    assert_eq!(leader_of(&db.url, "jobs"), None, "resigned");
    db.drop_db().await;
}

/// A COMMAND that needs longer than the lease to shut down gets its whole --grace when `run`
/// stops it on purpose (SIGTERM): `run` keeps renewing meanwhile, so nobody else leads until
/// COMMAND has exited and `run` has resigned; then another node takes over at once.
#[tokio::test]
async fn a_requested_stop_gets_the_whole_grace_period_while_run_renews() {
    let db = common::TestDb::migrated("run_grace").await;
    let dir = Scratch::new("run_grace");
    let script = format!(
        "trap 'sleep 3; echo finished-after-3s > {d}/trapped; exit 0' TERM; touch {d}/ready; while :; do sleep 0.05; done",
        d = dir.0.display()
    );
    let mut a = RunProc::start(&db.url, &dir.0, "slowstop", "node-a", &["--lease", LEASE, "--grace", "6s"], &["sh", "-c", &script]);
    assert!(wait_until(PATIENCE, || leader_of(&db.url, "slowstop").as_deref() == Some("node-a")), "{}", a.log());
    assert!(wait_until(PATIENCE, || dir.path("ready").exists()), "{}", a.log());
    let mut b = RunProc::start(&db.url, &dir.0, "slowstop", "node-b", &["--lease", LEASE], &["sh", "-c", "while :; do sleep 1; done"]);
    std::thread::sleep(Duration::from_millis(500));
    signal(a.pid(), libc::SIGTERM);
    // For longer than a lease, COMMAND shuts down and node-a still leads (it keeps renewing).
    let until = std::time::Instant::now() + Duration::from_millis(2_800);
    while std::time::Instant::now() < until {
        assert_eq!(leader_of(&db.url, "slowstop").as_deref(), Some("node-a"), "a leads while COMMAND stops: {}", a.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(a.wait(PATIENCE), Some(143), "{}", a.log());
    assert_eq!(dir.read("trapped"), "finished-after-3s\n", "COMMAND had its whole grace period: {}", a.log());
    assert!(wait_until(PATIENCE, || leader_of(&db.url, "slowstop").as_deref() == Some("node-b")), "{}", b.log());
    signal(b.pid(), libc::SIGTERM);
    assert_eq!(b.wait(PATIENCE), Some(143), "{}", b.log());
    db.drop_db().await;
}

#[tokio::test]
async fn the_demo_runs_to_the_end_in_short_mode() {
    let db = common::TestDb::migrated("run_demo").await;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("bash")
        .arg(root.join("scripts/demo.sh"))
        .arg("--short")
        .env("MYSQLLEADER_URL", &db.url)
        .env("MYSQLLEADER_BIN", cli_support::bin())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    for step in ["failover", "force", "reelect", "handover: ", "resign", "cleaned up"] {
        assert!(stdout.to_lowercase().contains(step), "the demo skipped {step}:\n{stdout}");
    }
    db.drop_db().await;
}
