//! The database side of a run, behind one trait so that other topologies (issue 10: a 3-node
//! Galera cluster) plug in without touching the harness: a list of servers, each with a URL,
//! and the faults each one supports.
//!
//! * [`TestDbServer`]: one throwaway mariadbd started with `scripts/testdb.sh start DIR`, with
//!   kill / relaunch / pause / resume through the same script;
//! * [`ExternalServers`]: servers the harness did not start (`--url`): no server faults;
//! * [`GaleraControl`]: the 3 nodes of a cluster of `scripts/galera.sh` (started by the harness,
//!   or one it attaches to): kill -9 / restart of one node, and one node isolated from the others
//!   (`gmcast.isolate`) and back.
//!
//! Every method blocks (it runs scripts); call them from `spawn_blocking`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A fault of one server process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerFault {
    /// SIGKILL, then start again on the same data and port.
    KillRestart,
    /// SIGSTOP, then SIGCONT.
    Pause,
    /// SIGKILL of one node of a cluster while the others serve, then its return (`kill(i)`,
    /// `relaunch(i)`).
    NodeKill,
    /// One node cut off from the other nodes of its cluster (clients still reach it), then back
    /// (`isolate(i, true)`, `isolate(i, false)`).
    Isolate,
}

pub trait ServerControl: Send + Sync {
    /// One line for the report.
    fn describe(&self) -> String;
    /// One URL per server (an account that may create databases; the path names a database).
    fn urls(&self) -> Vec<String>;
    /// The server faults this topology can inject.
    fn supported(&self) -> Vec<ServerFault>;
    /// SIGKILL server `i` and wait until it is gone.
    fn kill(&self, i: usize) -> Result<(), String>;
    /// Start server `i` again after `kill`; returns once it answers.
    fn relaunch(&self, i: usize) -> Result<(), String>;
    /// SIGSTOP server `i`.
    fn pause(&self, i: usize) -> Result<(), String>;
    /// SIGCONT server `i`.
    fn resume(&self, i: usize) -> Result<(), String>;
    /// Cut server `i` off from the other servers of its cluster (`on`), or let it back in;
    /// returns once the node left the primary component (on) or is back and synced (off).
    fn isolate(&self, _i: usize, _on: bool) -> Result<(), String> { Err("isolation is not supported here".into()) }
    /// The longest a cluster takes to evict a dead or cut-off node, during which the other
    /// nodes commit nothing (none for a single server).
    fn eviction(&self) -> Option<Duration> { None }
    /// Stop every server the harness started and remove its data (no-op for external ones).
    fn shutdown(&self) -> Result<(), String>;
}

/// Runs `script args...` with extra environment; the error carries its output.
pub fn run_script(script: &Path, args: &[&str], env: &[(String, String)]) -> Result<String, String> {
    let out = Command::new(script)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} {} failed ({}): {}{}",
            script.display(),
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// One mariadbd of `scripts/testdb.sh`, started in `dir`. `env` is passed to every call of the
/// script, and so to mariadbd itself (the libfaketime experiment preloads the library this way).
pub struct TestDbServer {
    script: PathBuf,
    dir: PathBuf,
    url: String,
    env: Vec<(String, String)>,
}

impl TestDbServer {
    pub fn start(script: &Path, dir: &Path, env: Vec<(String, String)>) -> Result<TestDbServer, String> {
        let out = run_script(script, &["start", &dir.display().to_string()], &env)?;
        let url = out
            .lines()
            .find_map(|l| l.strip_prefix("export MYSQLLEADER_TEST_URL="))
            .ok_or_else(|| format!("testdb.sh start printed no URL: {out}"))?
            .trim()
            .to_string();
        Ok(TestDbServer { script: script.to_path_buf(), dir: dir.to_path_buf(), url, env })
    }

    pub fn dir(&self) -> &Path { &self.dir }

    fn call(&self, what: &str) -> Result<(), String> {
        run_script(&self.script, &[what, &self.dir.display().to_string()], &self.env).map(|_| ())
    }
}

impl ServerControl for TestDbServer {
    fn describe(&self) -> String {
        format!("one throwaway mariadbd (scripts/testdb.sh, data in {})", self.dir.display())
    }
    fn urls(&self) -> Vec<String> { vec![self.url.clone()] }
    fn supported(&self) -> Vec<ServerFault> { vec![ServerFault::KillRestart, ServerFault::Pause] }
    fn kill(&self, _i: usize) -> Result<(), String> { self.call("kill") }
    fn relaunch(&self, _i: usize) -> Result<(), String> { self.call("relaunch") }
    fn pause(&self, _i: usize) -> Result<(), String> { self.call("pause") }
    fn resume(&self, _i: usize) -> Result<(), String> { self.call("resume") }
    fn shutdown(&self) -> Result<(), String> { self.call("stop") }
}

/// Servers given with `--url`: used as they are, never faulted.
pub struct ExternalServers {
    pub urls: Vec<String>,
}

impl ServerControl for ExternalServers {
    fn describe(&self) -> String { format!("{} external server(s) given with --url (no server faults)", self.urls.len()) }
    fn urls(&self) -> Vec<String> { self.urls.clone() }
    fn supported(&self) -> Vec<ServerFault> { Vec::new() }
    fn kill(&self, _: usize) -> Result<(), String> { Err("not supported on external servers".into()) }
    fn relaunch(&self, _: usize) -> Result<(), String> { Err("not supported on external servers".into()) }
    fn pause(&self, _: usize) -> Result<(), String> { Err("not supported on external servers".into()) }
    fn resume(&self, _: usize) -> Result<(), String> { Err("not supported on external servers".into()) }
    fn shutdown(&self) -> Result<(), String> { Ok(()) }
}

/// The 3 nodes of a `scripts/galera.sh` cluster in `dir`. Node `i` (0-based) here is node `i + 1`
/// of the script. [`GaleraControl::start`] starts a cluster that `shutdown` stops again;
/// [`GaleraControl::attach`] uses a running one (its URLs from `dir/env`) and leaves it running.
pub struct GaleraControl {
    script: PathBuf,
    dir: PathBuf,
    urls: Vec<String>,
    owned: bool,
}

impl GaleraControl {
    /// Starts a new cluster in `dir` (about 10 s); `shutdown` stops it and removes `dir`.
    pub fn start(script: &Path, dir: &Path) -> Result<GaleraControl, String> {
        let out = run_script(Path::new("bash"), &[&script.display().to_string(), "start", &dir.display().to_string()], &[])?;
        Ok(GaleraControl { script: script.to_path_buf(), dir: dir.to_path_buf(), urls: Self::parse_urls(&out)?, owned: true })
    }

    /// Uses the running cluster of `dir` (started with `galera.sh start DIR`); `shutdown`
    /// leaves it running.
    pub fn attach(script: &Path, dir: &Path) -> Result<GaleraControl, String> {
        let env = std::fs::read_to_string(dir.join("env")).map_err(|e| format!("{}/env: {e} (start it with scripts/galera.sh start DIR)", dir.display()))?;
        Ok(GaleraControl { script: script.to_path_buf(), dir: dir.to_path_buf(), urls: Self::parse_urls(&env)?, owned: false })
    }

    fn parse_urls(env: &str) -> Result<Vec<String>, String> {
        let urls: Vec<String> = (1..=3)
            .map(|n| {
                env.lines()
                    .find_map(|l| l.strip_prefix(&format!("export MYSQLLEADER_GALERA_URL{n}=")))
                    .map(|u| u.trim().trim_matches(|c| c == '\'' || c == '"').to_string())
                    .ok_or_else(|| format!("galera.sh printed no MYSQLLEADER_GALERA_URL{n}: {env}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(urls)
    }

    pub fn dir(&self) -> &Path { &self.dir }

    fn call(&self, args: &[&str]) -> Result<(), String> {
        let dir = self.dir.display().to_string();
        let script = self.script.display().to_string();
        let mut all = vec![script.as_str(), args[0], dir.as_str()];
        all.extend_from_slice(&args[1..]);
        // Through bash: the script need not be executable (as scripts/test-galera.sh runs it).
        run_script(Path::new("bash"), &all, &[]).map(|_| ())
    }
}

impl ServerControl for GaleraControl {
    fn describe(&self) -> String {
        format!("a 3-node Galera cluster (scripts/galera.sh, {} in {})", if self.owned { "started by the harness" } else { "attached" }, self.dir.display())
    }
    fn urls(&self) -> Vec<String> { self.urls.clone() }
    fn supported(&self) -> Vec<ServerFault> { vec![ServerFault::NodeKill, ServerFault::Isolate] }
    fn kill(&self, i: usize) -> Result<(), String> { self.call(&["kill", &(i + 1).to_string()]) }
    fn relaunch(&self, i: usize) -> Result<(), String> { self.call(&["restart", &(i + 1).to_string()]) }
    fn pause(&self, _: usize) -> Result<(), String> { Err("pausing a Galera node is not supported".into()) }
    fn resume(&self, _: usize) -> Result<(), String> { Err("pausing a Galera node is not supported".into()) }
    fn isolate(&self, i: usize, on: bool) -> Result<(), String> {
        self.call(&["isolate", &(i + 1).to_string(), if on { "on" } else { "off" }])
    }
    /// `evs.inactive_timeout` of scripts/galera.sh (PT3S): a node silent that long is evicted
    /// (measured: about 2.5 s after a kill or an isolation on the project's machine).
    fn eviction(&self) -> Option<Duration> { Some(Duration::from_secs(3)) }
    fn shutdown(&self) -> Result<(), String> { if self.owned { self.call(&["stop"]) } else { Ok(()) } }
}

/// The 3 members of a MySQL Group Replication group of `scripts/group-replication.sh` in `dir`
/// (started by the script, attached to here through `dir/env`; left running). Member `i`
/// (0-based) here is member `i + 1` of the script. Its one fault is a member's kill -9 and
/// return (`kill`, `relaunch`: START GROUP_REPLICATION, until ONLINE); a member cut off from
/// the others is not scripted. In single-primary mode a write through a secondary fails with
/// 1290: the electors move on to the primary, and the harness's own writes go to the member
/// that takes them.
pub struct GroupControl {
    script: PathBuf,
    dir: PathBuf,
    urls: Vec<String>,
}

impl GroupControl {
    /// Uses the running group of `dir` (started with `group-replication.sh start DIR`).
    pub fn attach(script: &Path, dir: &Path) -> Result<GroupControl, String> {
        let env = std::fs::read_to_string(dir.join("env"))
            .map_err(|e| format!("{}/env: {e} (start it with scripts/group-replication.sh start DIR)", dir.display()))?;
        let urls: Vec<String> = env
            .lines()
            .find_map(|l| l.strip_prefix("export MYSQLLEADER_GR_URLS="))
            .map(|u| u.trim().trim_matches(|c| c == '\'' || c == '"').split_whitespace().map(str::to_string).collect())
            .ok_or_else(|| format!("group-replication.sh wrote no MYSQLLEADER_GR_URLS: {env}"))?;
        if urls.len() != 3 {
            return Err(format!("expected the URLs of 3 members, got {urls:?}"));
        }
        Ok(GroupControl { script: script.to_path_buf(), dir: dir.to_path_buf(), urls })
    }

    fn call(&self, what: &str, member: usize) -> Result<(), String> {
        let (script, dir, n) = (self.script.display().to_string(), self.dir.display().to_string(), (member + 1).to_string());
        run_script(Path::new("bash"), &[&script, what, &dir, &n], &[]).map(|_| ())
    }
}

impl ServerControl for GroupControl {
    fn describe(&self) -> String {
        format!("a 3-member MySQL Group Replication group (scripts/group-replication.sh, attached in {})", self.dir.display())
    }
    fn urls(&self) -> Vec<String> { self.urls.clone() }
    fn supported(&self) -> Vec<ServerFault> { vec![ServerFault::NodeKill] }
    fn kill(&self, i: usize) -> Result<(), String> { self.call("kill", i) }
    fn relaunch(&self, i: usize) -> Result<(), String> { self.call("relaunch", i) }
    fn pause(&self, _: usize) -> Result<(), String> { Err("pausing a group member is not supported".into()) }
    fn resume(&self, _: usize) -> Result<(), String> { Err("pausing a group member is not supported".into()) }
    /// A killed member is suspected after about 5 s and expelled 5 s later
    /// (group_replication_member_expel_timeout); a killed primary's successor is elected then and
    /// applies its backlog first (BEFORE_ON_PRIMARY_FAILOVER): measured 21.6 to 22.1 s from the
    /// kill to a writable primary (tests/group_replication.rs). The allowance adds a few seconds.
    fn eviction(&self) -> Option<Duration> { Some(Duration::from_secs(25)) }
    fn shutdown(&self) -> Result<(), String> { Ok(()) }
}
