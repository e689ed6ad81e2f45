//! The asynchronous-replication experiment of `docs/replication.md`: what happens to leadership
//! when an asynchronously replicated MariaDB primary fails over, and what protects users.
//!
//! ```text
//! replication writable|readonly|router|lag|all
//! ```
//!
//! (`scripts/replication-experiment.sh` installs MariaDB when it is missing, builds this program
//! and `replication_probe`, and runs it.) Each scenario starts its own pair of throwaway servers
//! on free 127.0.0.1 ports (primary: server-id 1, log-bin; replica: server-id 2, log-bin,
//! read_only=ON, GTID replication with MASTER_USE_GTID=slave_pos), installs mysqlleader into
//! `leaderdb` on the primary as `leader_admin` (it replicates), and starts a router and three
//! candidates, all `replication_probe` processes from this program's directory: the router is
//! the single routing point, a TCP forwarder whose upstream this program switches; each
//! candidate is an Elector (2 s lease) as the EXECUTE-only account `app`, doing fenced writes
//! while it leads. Then it fails the primary over: SIGKILL of the primary, promotion of the
//! replica (STOP SLAVE; SET GLOBAL read_only=OFF), the router switched to it. It writes
//! `phases.log`, checks (a fence probe of every (node, term) against each live server; in
//! `readonly`, `campaign` through both definers), prints the report (`replication_probe
//! analyze`, then both servers' seat, term history and app_writes), and stops every process and
//! removes every directory it made, whatever happens (including SIGINT and SIGTERM).
//!
//! Scenarios:
//! * `writable`: c1, c2 through the router, c3 configured with the old primary's own address
//!   (a misconfigured client); the old primary comes back WRITABLE: two leaders.
//! * `readonly`: the same, but the old primary comes back with read_only=ON: c3 cannot campaign.
//!   Also shows that read_only does not stop procedures whose DEFINER holds READ ONLY ADMIN:
//!   `leaderdb_rootdef` is installed by root.
//! * `router`: all three candidates through the router; the old primary comes back writable,
//!   but nobody reaches it: one leader.
//! * `lag`: all three through the router; the replica's SQL thread is stopped LAG_S seconds
//!   before the kill, and during the lag the leader c1 is paused (SIGSTOP) past its lease, so
//!   that the seat moves on the primary to a new term the replica never applies. The old
//!   primary stays dead.
//! * `all`: the four above, one after the other.
//!
//! Environment: LEASE_MS (2000), PROMOTE_DELAY_S (1; 0.3 in `lag`: seconds from the kill to the
//! promotion), LAG_S (4; at least lease + 1.3 s), STALL_LEADER_S (when set, the leader at the
//! kill is paused from the kill until that many seconds after the router switched, as a leader
//! whose calls hang on a dead host), OBSERVE_S (8: seconds to watch after the old primary is
//! back), RESULTS_DIR (when set, the logs and the report are copied to RESULTS_DIR/SCENARIO).
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, OptsBuilder, Row};
use mysqlleader_harness::replica_pair::{free_port, signal, table_lines, Children, Programs, Res, Server, TempDir};
use serde_json::Value;

const SERVICE: &str = "replicated-svc";
const SCENARIOS: [&str; 4] = ["writable", "readonly", "router", "lag"];

static START: OnceLock<Instant> = OnceLock::new();

/// A progress line on stderr, with the seconds since the program started.
fn say(msg: &str) {
    let t = START.get().map_or(0.0, |s| s.elapsed().as_secs_f64());
    eprintln!("replication [{t:6.1} s]: {msg}");
}

/// Wall-clock seconds with microseconds, as bash's $EPOCHREALTIME (what `analyze` reads).
fn epoch_realtime() -> String {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    format!("{}.{:06}", d.as_secs(), d.subsec_micros())
}

/// Now in UTC as `YYYY-MM-DD HH:MM UTC`.
fn utc_minute() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02} UTC", rem / 3600, rem % 3600 / 60)
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.max(0.0))
}

async fn sleep(s: f64) {
    tokio::time::sleep(secs(s)).await;
}

/// The settings, from the environment (the script's variables, with its defaults).
struct Settings {
    lease_ms: u64,
    lag_s: f64,
    observe_s: f64,
    /// PROMOTE_DELAY_S as given (it is printed as given), when set.
    promote_delay: Option<String>,
    stall_leader_s: Option<f64>,
    results_dir: Option<PathBuf>,
}

impl Settings {
    fn from_env() -> Res<Settings> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let number = |name: &str| -> Res<Option<f64>> {
            var(name).map(|v| v.parse::<f64>().map_err(|_| format!("{name}: not a number: {v}"))).transpose()
        };
        let lease_ms = match var("LEASE_MS") {
            Some(v) => v.parse().map_err(|_| format!("LEASE_MS: not a whole number: {v}"))?,
            None => 2000,
        };
        number("PROMOTE_DELAY_S")?;
        Ok(Settings {
            lease_ms,
            lag_s: number("LAG_S")?.unwrap_or(4.0),
            observe_s: number("OBSERVE_S")?.unwrap_or(8.0),
            promote_delay: var("PROMOTE_DELAY_S"),
            stall_leader_s: number("STALL_LEADER_S")?,
            results_dir: var("RESULTS_DIR").map(PathBuf::from),
        })
    }
}

/// One scenario's processes and directory. Dropping it stops the candidates and the router,
/// kills both servers (SIGCONT first, then SIGKILL), then removes the directory.
struct Lab {
    name: String,
    children: Children,
    p: Server,
    r: Server,
    dir: TempDir,
    probe: PathBuf,
    router_port: u16,
}

impl Drop for Lab {
    fn drop(&mut self) {
        self.children.stop_all();
        self.p.kill();
        self.r.kill();
        // Then the fields drop: `dir` removes the directory.
    }
}

fn app_url(port: u16) -> String {
    format!("mysql://app:app@127.0.0.1:{port}/leaderdb")
}

impl Lab {
    fn run_dir(&self) -> &Path {
        &self.dir.0
    }

    /// A line of phases.log (wall-clock seconds, name, text), and the same on stderr.
    fn phase(&self, name: &str, text: &str) -> Res<()> {
        let path = self.run_dir().join("phases.log");
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        writeln!(f, "{} {name} {text}", epoch_realtime()).map_err(|e| e.to_string())?;
        say(&format!("  {name} {text}"));
        Ok(())
    }

    /// The seat as one server holds it: `leader=X term=N expires=UNIX_SECONDS` (empty when the
    /// server has no row for the service).
    async fn seat(server: &Server) -> Res<String> {
        let mut conn = server.root().await?;
        conn.query_drop("SET time_zone = '+00:00'").await.map_err(|e| e.to_string())?;
        let sql = "SELECT CONCAT('leader=', COALESCE(CAST(leader_id AS CHAR), 'none'), ' term=', term, \
                   ' expires=', COALESCE(UNIX_TIMESTAMP(lease_expires_at), 0)) \
                   FROM leaderdb.leader_election WHERE service_id = ?";
        let seat: Option<String> = conn.exec_first(sql, (SERVICE,)).await.map_err(|e| format!("server-id {}: seat: {e}", server.server_id))?;
        let _ = conn.disconnect().await;
        Ok(seat.unwrap_or_default())
    }

    /// Primary and replica, replicating, with mysqlleader installed (scenario set-up).
    async fn setup_pair(&mut self) -> Res<()> {
        self.p.launch(false)?;
        self.r.launch(true)?;
        // 1. Replication: GTID-based, from the beginning of the primary's binary log.
        self.p.run(&["CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY 'repl'", "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'"]).await?;
        // CHANGE MASTER takes literals only (MariaDB's grammar has no placeholder there); the
        // port is a u16 this program chose.
        let change_master = format!(
            "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='repl', \
             MASTER_PASSWORD='repl', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
            self.p.port
        );
        self.r.run(&[&change_master, "START SLAVE"]).await?;
        // 2. Accounts: leader_admin owns the schema (no global privilege, so no READ ONLY
        //    ADMIN) and installs it, so it is the procedures' DEFINER; app holds EXECUTE (and
        //    INSERT on its own table) only. leaderdb_rootdef is the same schema installed by
        //    root, for the read_only check.
        self.p
            .run(&[
                "CREATE DATABASE leaderdb",
                "CREATE DATABASE leaderdb_rootdef",
                "CREATE USER 'leader_admin'@'localhost' IDENTIFIED BY 'admin'",
                "GRANT ALL PRIVILEGES ON leaderdb.* TO 'leader_admin'@'localhost'",
                "CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY 'app'",
            ])
            .await?;
        let install = mysqlleader::install_sql();
        self.p.client_script("leader_admin", "admin", "leaderdb", &install)?;
        self.p.client_script("root", "", "leaderdb_rootdef", &install)?;
        self.p
            .run(&[
                "CREATE TABLE leaderdb.app_writes (
                   id BIGINT AUTO_INCREMENT PRIMARY KEY, node_id VARCHAR(64) NOT NULL,
                   term BIGINT UNSIGNED NOT NULL, server_id INT UNSIGNED NOT NULL,
                   written_at DATETIME(6) NOT NULL)",
                "GRANT EXECUTE ON leaderdb.* TO 'app'@'127.0.0.1'",
                "GRANT SELECT, INSERT ON leaderdb.app_writes TO 'app'@'127.0.0.1'",
                "GRANT EXECUTE ON leaderdb_rootdef.* TO 'app'@'127.0.0.1'",
            ])
            .await?;
        // 3. Wait until the replica has all of it.
        let pos = self.p.first_text("SELECT @@gtid_binlog_pos", ()).await?.unwrap_or_default();
        let got = self.r.first_text("SELECT MASTER_GTID_WAIT(?, 30)", (pos.as_str(),)).await?;
        if got.as_deref() != Some("0") {
            if let Ok(status) = self.r.table("SHOW SLAVE STATUS", ()).await {
                // One `name: value` line per column, as `SHOW SLAVE STATUS\G`.
                if let [names, values, ..] = status.as_slice() {
                    for (n, v) in names.split('\t').zip(values.split('\t')) {
                        eprintln!("{n:>30}: {v}");
                    }
                }
            }
            return Err(format!("the replica did not catch up with {pos}"));
        }
        say(&format!(
            "primary 127.0.0.1:{} (server-id 1), replica 127.0.0.1:{} (server-id 2), replicating at GTID {pos}",
            self.p.port, self.r.port
        ));
        Ok(())
    }

    fn probe_cmd(&self, out: &str) -> Res<Command> {
        let path = self.run_dir().join(out);
        let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut cmd = Command::new(&self.probe);
        cmd.stdout(file.try_clone().map_err(|e| e.to_string())?).stderr(file);
        Ok(cmd)
    }

    fn write_upstream(&self, addr: &str) -> Res<()> {
        // Written aside, then renamed: the router never reads half a line.
        let (new, file) = (self.run_dir().join("upstream.new"), self.run_dir().join("upstream"));
        std::fs::write(&new, format!("{addr}\n")).map_err(|e| e.to_string())?;
        std::fs::rename(&new, &file).map_err(|e| e.to_string())
    }

    async fn start_router(&mut self) -> Res<()> {
        self.router_port = free_port()?;
        self.write_upstream(&format!("127.0.0.1:{}", self.p.port))?;
        let mut cmd = self.probe_cmd("router.out")?;
        let upstream = self.run_dir().join("upstream");
        cmd.arg("router").arg("--listen").arg(self.router_port.to_string()).arg("--upstream-file").arg(&upstream);
        self.children.spawn("router", &mut cmd)?;
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.router_port)).await.is_ok() {
                break;
            }
            sleep(0.05).await;
        }
        say(&format!("router 127.0.0.1:{} -> primary", self.router_port));
        Ok(())
    }

    /// The router reads the file within 20 ms and closes every open connection.
    fn switch_router(&self, addr: &str) -> Res<()> {
        self.write_upstream(addr)
    }

    fn start_candidate(&mut self, node: &str, label: &str, port: u16, lease_ms: u64) -> Res<()> {
        let mut cmd = self.probe_cmd(&format!("cand-{node}.out"))?;
        let log = self.run_dir().join(format!("cand-{node}.log"));
        cmd.args(["candidate", "--node", node, "--label", label, "--url", &app_url(port), "--service", SERVICE])
            .args(["--lease-ms", &lease_ms.to_string()])
            .arg("--log")
            .arg(&log);
        self.children.spawn(node, &mut cmd)?;
        Ok(())
    }

    /// Until the node's log shows a `start` (at most 15 s).
    async fn wait_leading(&self, node: &str) -> Res<()> {
        let log = self.run_dir().join(format!("cand-{node}.log"));
        for _ in 0..150 {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).any(|v| v["ev"] == "start") {
                return Ok(());
            }
            sleep(0.1).await;
        }
        Err(format!("{node} did not become leader within 15 s (see {})", self.run_dir().join(format!("cand-{node}.out")).display()))
    }

    fn pid(&self, node: &str) -> Option<u32> {
        self.children.pid(node)
    }

    /// Every (node, term) in either live server's history, fenced against each live server.
    async fn fence_matrix(&self, out: &mut String) -> Res<()> {
        let mut servers = vec![(&self.r, "replica")];
        if self.p.is_up() {
            servers.insert(0, (&self.p, "old-primary"));
        }
        let sql = "SELECT CAST(leader_id AS CHAR), term FROM leaderdb.leader_election_history WHERE service_id = ?";
        // (term, node) -> the history it was first seen in (the replica's first).
        let mut pairs: std::collections::BTreeMap<(u64, String), &str> = Default::default();
        for (server, name) in servers.iter().rev() {
            let mut conn = server.root().await?;
            let rows: Vec<(String, u64)> = conn.exec(sql, (SERVICE,)).await.map_err(|e| format!("{name}: history: {e}"))?;
            let _ = conn.disconnect().await;
            for (node, term) in rows {
                pairs.entry((term, node)).or_insert(name);
            }
        }
        writeln!(out, "== fence probes: BEGIN; assert_leader(node, term); INSERT; ROLLBACK, against each live server").unwrap();
        writeln!(out, "   (each (node, term) from the history of the server named; 'accepted' = the guard let it through)").unwrap();
        for ((term, node), from) in &pairs {
            for (server, name) in &servers {
                let output = Command::new(&self.probe)
                    .args(["fence", "--url", &app_url(server.port), "--service", SERVICE, "--node", node, "--term", &term.to_string()])
                    .stdin(Stdio::null())
                    .stderr(Stdio::null())
                    .output()
                    .map_err(|e| format!("cannot run the probe: {e}"))?;
                let outcome = String::from_utf8_lossy(&output.stdout)
                    .lines()
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                    .find_map(|v| v["outcome"].as_str().map(str::to_string))
                    .unwrap_or_default();
                writeln!(out, "   {node:<4} term {term:<3} (in the {from:<11} history) on the {name:<11} -> {outcome}").unwrap();
            }
        }
        Ok(())
    }

    /// `CALL campaign('probe', 'intruder', 2000)` on the old primary as `app`, in both
    /// installations, printed as `mariadb -B` prints a result or an error.
    async fn read_only_check(&self, out: &mut String) {
        writeln!(out, "== read_only on the old primary, CALL campaign('probe', 'intruder', 2000) as the EXECUTE-only account 'app':").unwrap();
        for (db, what) in [
            ("leaderdb", "procedures' DEFINER leader_admin@localhost, no READ ONLY ADMIN"),
            ("leaderdb_rootdef", "procedures' DEFINER root@localhost, which holds READ ONLY ADMIN"),
        ] {
            writeln!(out, "   {db} ({what}):").unwrap();
            let opts = OptsBuilder::default()
                .ip_or_hostname("127.0.0.1")
                .tcp_port(self.p.port)
                .prefer_socket(false)
                .user(Some("app"))
                .pass(Some("app"))
                .db_name(Some(db));
            let lines = match Conn::new(opts).await {
                Ok(mut conn) => {
                    let result: Result<Vec<Row>, _> = conn.exec("CALL campaign(?, ?, ?)", ("probe", "intruder", 2000u32)).await;
                    let _ = conn.disconnect().await;
                    match result {
                        Ok(rows) => table_lines(&rows),
                        Err(e) => vec![error_line(&e)],
                    }
                }
                Err(e) => vec![error_line(&e)],
            };
            for l in lines {
                writeln!(out, "     {l}").unwrap();
            }
        }
    }

    /// One server's state, seat, term history and committed fenced writes.
    async fn report_server(server: &Server, name: &str, out: &mut String) -> Res<()> {
        let state = server
            .first_text("SELECT CONCAT('server_id=', @@server_id, ' read_only=', @@read_only, ' gtid_binlog_pos=', @@gtid_binlog_pos)", ())
            .await?
            .unwrap_or_default();
        writeln!(out, "== {name}: {state}").unwrap();
        writeln!(out, "-- seat: {}", Lab::seat(server).await?).unwrap();
        writeln!(out, "-- terms (leader_election_history):").unwrap();
        let terms = server
            .table(
                "SELECT term, CAST(leader_id AS CHAR) AS leader, began_at, began_how, ended_at, ended_how \
                 FROM leaderdb.leader_election_history WHERE service_id = ? ORDER BY term",
                (SERVICE,),
            )
            .await?;
        for l in terms {
            writeln!(out, "   {l}").unwrap();
        }
        writeln!(out, "-- app_writes (fenced writes that committed), by writer, term and the server they were written on:").unwrap();
        let writes = server
            .table(
                "SELECT node_id, term, server_id AS written_on, COUNT(*) AS writes, MIN(written_at) AS first, MAX(written_at) AS last \
                 FROM leaderdb.app_writes GROUP BY node_id, term, server_id ORDER BY first",
                (),
            )
            .await?;
        for l in writes {
            writeln!(out, "   {l}").unwrap();
        }
        Ok(())
    }
}

fn error_line(e: &mysql_async::Error) -> String {
    match e {
        mysql_async::Error::Server(s) => format!("ERROR {} ({}): {}", s.code, s.state, s.message),
        other => format!("ERROR: {other}"),
    }
}

/// One scenario, from the servers' creation to the report; everything it started is stopped
/// and its directory removed when it returns, fails or is cancelled (the `Lab` guard).
async fn scenario(name: &str, s: &Settings, programs: &Programs, probe: &Path) -> Res<()> {
    let promote_delay = s.promote_delay.clone().unwrap_or_else(|| if name == "lag" { "0.3" } else { "1" }.to_string());
    let promote_delay_s: f64 = promote_delay.parse().map_err(|_| format!("PROMOTE_DELAY_S: not a number: {promote_delay}"))?;
    let dir = TempDir::new("mysqlleader-repl")?;
    let run = dir.0.clone();
    std::fs::write(run.join("phases.log"), "").map_err(|e| e.to_string())?;
    say(&format!(
        "=== scenario {name} (lease {} ms, promotion {promote_delay} s after the kill; data in {})",
        s.lease_ms,
        run.display()
    ));
    let p = Server::init(programs, &run.join("primary"), 1)?;
    let r = Server::init(programs, &run.join("replica"), 2)?;
    let mut lab = Lab { name: name.to_string(), children: Children::default(), p, r, dir, probe: probe.to_path_buf(), router_port: 0 };
    lab.setup_pair().await?;
    lab.start_router().await?;

    // 1. Candidates: c1 first, so that it is the leader at the failover.
    let (c3_label, c3_port) = if name == "writable" || name == "readonly" {
        ("direct to the old primary (misconfigured)", lab.p.port)
    } else {
        ("router", lab.router_port)
    };
    let router_port = lab.router_port;
    lab.start_candidate("c1", "router", router_port, s.lease_ms)?;
    lab.wait_leading("c1").await?;
    lab.start_candidate("c2", "router", router_port, s.lease_ms)?;
    lab.start_candidate("c3", c3_label, c3_port, s.lease_ms)?;
    lab.phase("candidates", &format!("c1,c2 via the router; c3: {c3_label}"))?;
    sleep(3.0).await;

    // 2. Under lag: the replica stops applying; meanwhile the leader c1 is paused (SIGSTOP) for
    //    longer than the lease, so that another node takes the seat on the primary with a new
    //    term that the replica never applies.
    if name == "lag" {
        let c1 = lab.pid("c1").ok_or("c1 is not running")?;
        let lease_s = s.lease_ms as f64 / 1000.0;
        lab.r.run(&["STOP SLAVE SQL_THREAD"]).await?;
        lab.phase("lag_start", &format!("replica SQL thread stopped; replica seat: {}", Lab::seat(&lab.r).await?))?;
        sleep(0.5).await;
        signal(c1, libc::SIGSTOP);
        lab.phase("pause_c1", "SIGSTOP of the leader c1 for lease + 0.6 s")?;
        sleep(lease_s + 0.6).await;
        signal(c1, libc::SIGCONT);
        lab.phase("resume_c1", &format!("SIGCONT; primary seat: {}", Lab::seat(&lab.p).await?))?;
        sleep((s.lag_s - lease_s - 1.1).max(0.2)).await;
        let text = format!("primary seat: {}; replica seat: {}", Lab::seat(&lab.p).await?, Lab::seat(&lab.r).await?);
        lab.phase("before_kill", &text)?;
    }

    // 3. The failover. With STALL_LEADER_S, the leader at the kill is also paused from the kill
    //    until that long after the router switched, as a leader whose calls hang on a dead host
    //    would be: its first call to the promoted replica comes that much later.
    let stalled = match s.stall_leader_s {
        Some(_) => {
            let seat = Lab::seat(&lab.p).await?;
            seat.strip_prefix("leader=").and_then(|r| r.split(' ').next()).and_then(|node| lab.pid(node).map(|pid| (node.to_string(), pid)))
        }
        None => None,
    };
    lab.phase("kill", "SIGKILL of the primary (server-id 1)")?;
    lab.p.kill();
    if let (Some((node, pid)), Some(stall)) = (&stalled, s.stall_leader_s) {
        signal(*pid, libc::SIGSTOP);
        lab.phase("stall", &format!("SIGSTOP of the leader {node} until {stall} s after the switch"))?;
    }
    sleep(promote_delay_s).await;
    lab.r.run(&["STOP SLAVE", "SET GLOBAL read_only=OFF"]).await?;
    lab.phase("promoted", "replica: STOP SLAVE; read_only=OFF")?;
    lab.phase("replica_lease", &Lab::seat(&lab.r).await?)?;
    let replica_addr = format!("127.0.0.1:{}", lab.r.port);
    lab.switch_router(&replica_addr)?;
    lab.phase("switch", &format!("router -> replica ({replica_addr})"))?;
    if let (Some((node, pid)), Some(stall)) = (&stalled, s.stall_leader_s) {
        sleep(stall).await;
        signal(*pid, libc::SIGCONT);
        lab.phase("unstall", &format!("SIGCONT of {node}"))?;
    }

    // 4. The old primary comes back (not in `lag`).
    if name != "lag" {
        sleep(3.0).await;
        let read_only = name == "readonly";
        lab.p.launch(read_only)?;
        let text = format!("relaunched with read_only={}; its seat: {}", if read_only { "ON" } else { "OFF" }, Lab::seat(&lab.p).await?);
        lab.phase("old_primary_back", &text)?;
    }
    sleep(s.observe_s).await;

    // 5. Checks while the candidates still run.
    let mut checks = String::new();
    if let Err(e) = lab.fence_matrix(&mut checks).await {
        writeln!(checks, "   fence probes failed: {e}").unwrap();
    }
    if name == "readonly" {
        lab.read_only_check(&mut checks).await;
    }
    std::fs::write(run.join("checks.txt"), &checks).map_err(|e| e.to_string())?;
    lab.phase("end", "")?;

    // 6. Stop the candidates (the router and the servers stay for the report).
    for node in ["c1", "c2", "c3"] {
        if let Some(pid) = lab.pid(node) {
            signal(pid, libc::SIGCONT);
            signal(pid, libc::SIGTERM);
        }
    }
    sleep(0.3).await;

    let mut report = format!(
        "##### scenario {name} — {}, {}, lease {} ms, promotion {promote_delay} s after the kill\n",
        utc_minute(),
        programs.version(),
        s.lease_ms
    );
    let analyze = Command::new(probe)
        .arg("analyze")
        .arg("--dir")
        .arg(&run)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run the probe: {e}"))?;
    report.push_str(&String::from_utf8_lossy(&analyze.stdout));
    report.push_str(&String::from_utf8_lossy(&analyze.stderr));
    report.push('\n');
    report.push_str(&checks);
    report.push('\n');
    if lab.p.is_up() {
        Lab::report_server(&lab.p, "old primary (server-id 1)", &mut report).await?;
        report.push('\n');
    }
    Lab::report_server(&lab.r, "promoted replica (server-id 2)", &mut report).await?;
    std::fs::write(run.join("report.txt"), &report).map_err(|e| e.to_string())?;
    print!("{report}");
    let _ = std::io::stdout().flush();
    if let Some(results) = &s.results_dir {
        let to = results.join(&lab.name);
        std::fs::create_dir_all(&to).map_err(|e| format!("{}: {e}", to.display()))?;
        for entry in std::fs::read_dir(&run).map_err(|e| e.to_string())?.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            let keep = (file.starts_with("cand-") && file.ends_with(".log")) || file == "phases.log" || file == "report.txt";
            if keep {
                std::fs::copy(entry.path(), to.join(&file)).map_err(|e| format!("{file}: {e}"))?;
            }
        }
    }
    Ok(())
}

fn main() {
    START.get_or_init(Instant::now);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let scenarios: Vec<&str> = match args.as_slice() {
        [s] if s == "all" => SCENARIOS.to_vec(),
        [s] if SCENARIOS.contains(&s.as_str()) => vec![s.as_str()],
        _ => {
            eprintln!("replication: usage: replication writable|readonly|router|lag|all");
            std::process::exit(2);
        }
    };
    let fail = |e: String| -> ! {
        eprintln!("replication: {e}");
        std::process::exit(2);
    };
    let settings = Settings::from_env().unwrap_or_else(|e| fail(e));
    let programs = Programs::find().unwrap_or_else(|e| fail(e));
    let exe = std::env::current_exe().unwrap_or_else(|e| fail(format!("current_exe: {e}")));
    let probe = exe.with_file_name("replication_probe");
    if !probe.is_file() {
        fail(format!("{} is missing (cargo build --release -p mysqlleader-harness --bin replication_probe)", probe.display()));
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    let code = rt.block_on(async {
        use tokio::signal::unix::{signal as unix_signal, SignalKind};
        let mut interrupt = unix_signal(SignalKind::interrupt()).expect("SIGINT handler");
        let mut terminate = unix_signal(SignalKind::terminate()).expect("SIGTERM handler");
        let run = async {
            for name in &scenarios {
                scenario(name, &settings, &programs, &probe).await?;
            }
            Ok::<(), String>(())
        };
        // A signal drops `run`, and with it the scenario's guard: every process and directory
        // goes before the program exits.
        tokio::select! {
            r = run => match r {
                Ok(()) => 0,
                Err(e) => {
                    // A Ctrl-C also reaches the programs this one was waiting for, which then
                    // fail: report the interruption rather than their failure.
                    let pending = tokio::time::timeout(Duration::from_millis(100), async {
                        tokio::select! { _ = interrupt.recv() => {} _ = terminate.recv() => {} }
                    });
                    if pending.await.is_ok() {
                        say("interrupted: every process stopped, the run's directory removed");
                        130
                    } else {
                        eprintln!("replication: {e}");
                        2
                    }
                }
            },
            _ = interrupt.recv() => {
                say("SIGINT: every process stopped, the run's directory removed");
                130
            }
            _ = terminate.recv() => {
                say("SIGTERM: every process stopped, the run's directory removed");
                130
            }
        }
    });
    drop(rt);
    std::process::exit(code);
}
