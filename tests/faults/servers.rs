//! The database side of a run, behind one trait so that other topologies (issue 10: a 3-node
//! Galera cluster) plug in without touching the harness: a list of servers, each with a URL,
//! and the faults each one supports.
//!
//! * [`TestDbServer`]: one throwaway mariadbd started with `scripts/testdb.sh start DIR`, with
//!   kill / relaunch / pause / resume through the same script;
//! * [`ExternalServers`]: servers the harness did not start (`--url`): no server faults.
//!
//! Every method blocks (it runs scripts); call them from `spawn_blocking`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A fault of one server process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerFault {
    /// SIGKILL, then start again on the same data and port.
    KillRestart,
    /// SIGSTOP, then SIGCONT.
    Pause,
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
