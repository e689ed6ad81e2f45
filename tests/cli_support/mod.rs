//! Helpers of the command-line tests: run the built `mysqlleader` binary, parse its output,
//! watch processes, and keep the processes a test starts from outliving it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The binary Cargo built for these tests.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_mysqlleader")
}

/// What one run of the tool did.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}): {:?} (exit status {}, stderr {:?})",
                                       self.stdout, self.code, self.stderr))
    }
}

/// A `Command` for the tool with `MYSQLLEADER_URL` set to `url` (or removed when `None`).
pub fn command(url: Option<&str>, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(args).env_remove("MYSQLLEADER_URL");
    if let Some(url) = url {
        cmd.env("MYSQLLEADER_URL", url);
    }
    cmd
}

/// Runs the tool to its end.
pub fn cli(url: Option<&str>, args: &[&str]) -> Out {
    let out = command(url, args).stdin(Stdio::null()).output().expect("run mysqlleader");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The keys of a JSON object, in order.
pub fn keys(value: &serde_json::Value) -> Vec<String> {
    value.as_object().expect("a JSON object").keys().cloned().collect()
}

/// Polls `cond` every 10 ms until it holds (true) or `limit` passes (false).
pub fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether `pid` is a live process (not gone, not a zombie).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rfind(')').and_then(|i| stat[i + 1..].split_whitespace().next()).is_some_and(|s| s != "Z"),
        Err(_) => false,
    }
}

/// CLOCK_MONOTONIC now, in nanoseconds: the clock the workers stamp with.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: writes into a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn signal(pid: u32, signal: i32) {
    // SAFETY: kill(2) has no memory effects.
    unsafe { libc::kill(pid as i32, signal) };
}

/// A scratch directory, removed at the end of the test.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("mysqlleader-cli-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A worker for `run`: appends `<CLOCK_MONOTONIC ns> <node> <term> <pid>` to `stamps` every
/// 10 ms, after writing its environment to `env.<node>.<pid>`; exits with status 0 when the
/// file `exit.<node>` appears.
pub const WORKER: &str = r#"
import os, sys, time
d = sys.argv[1]
node, term, svc = os.environ["MYSQLLEADER_NODE"], os.environ["MYSQLLEADER_TERM"], os.environ["MYSQLLEADER_SERVICE"]
with open(os.path.join(d, "env.%s.%d" % (node, os.getpid())), "w") as f:
    f.write("%s|%s|%s\n" % (svc, node, term))
fd = os.open(os.path.join(d, "stamps"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
stop = os.path.join(d, "exit." + node)
while True:
    os.write(fd, ("%d %s %s %d\n" % (time.clock_gettime_ns(time.CLOCK_MONOTONIC), node, term, os.getpid())).encode())
    if os.path.exists(stop):
        sys.exit(0)
    time.sleep(0.01)
"#;

/// One line of the workers' stamps file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    pub ns: u64,
    pub node: String,
    pub term: u64,
    pub pid: i32,
}

pub fn stamps(dir: &Path) -> Vec<Stamp> {
    let text = std::fs::read_to_string(dir.join("stamps")).unwrap_or_default();
    let mut out: Vec<Stamp> = text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some(Stamp {
                ns: w.next()?.parse().ok()?,
                node: w.next()?.to_string(),
                term: w.next()?.parse().ok()?,
                pid: w.next()?.parse().ok()?,
            })
        })
        .collect();
    out.sort_by_key(|s| s.ns);
    out
}

/// One worker's life as its stamps show it.
#[derive(Debug, Clone)]
pub struct Life {
    pub pid: i32,
    pub node: String,
    pub term: u64,
    pub first_ns: u64,
    pub last_ns: u64,
}

/// The workers' lives in order of start, checked to never overlap: each worker's first stamp
/// comes after the previous worker's last, and terms never go down.
pub fn lives_in_order(dir: &Path) -> Vec<Life> {
    let mut lives: Vec<Life> = Vec::new();
    for s in stamps(dir) {
        match lives.iter_mut().find(|l| l.pid == s.pid) {
            Some(l) => l.last_ns = s.ns,
            None => lives.push(Life { pid: s.pid, node: s.node, term: s.term, first_ns: s.ns, last_ns: s.ns }),
        }
    }
    lives.sort_by_key(|l| l.first_ns);
    for pair in lives.windows(2) {
        assert!(
            pair[1].first_ns > pair[0].last_ns,
            "two workers ran at once: {:?} still stamped {} ms after {:?} started",
            pair[0],
            (pair[0].last_ns - pair[1].first_ns) / 1_000_000,
            pair[1]
        );
        assert!(pair[1].term >= pair[0].term, "the term went down: {:?} then {:?}", pair[0], pair[1]);
    }
    lives
}

/// A `mysqlleader run` process; killed (with its guard and COMMAND) when dropped.
pub struct RunProc {
    pub child: Child,
    pub node: String,
    pub log: PathBuf,
}

impl RunProc {
    /// Starts `mysqlleader run --service S --node N ARGS... -- COMMAND...`, its standard error
    /// going to `<dir>/run.<node>.log`.
    pub fn start(url: &str, dir: &Path, service: &str, node: &str, args: &[&str], command: &[&str]) -> RunProc {
        let log = dir.join(format!("run.{node}.log"));
        let mut all = vec!["run", "--service", service, "--node", node];
        all.extend_from_slice(args);
        all.push("--");
        all.extend_from_slice(command);
        let child = self::command(Some(url), &all)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start mysqlleader run");
        RunProc { child, node: node.to_string(), log }
    }

    /// Starts it with the stamping worker as COMMAND.
    pub fn worker(url: &str, dir: &Path, service: &str, node: &str, args: &[&str]) -> RunProc {
        let script = dir.join("worker.py");
        if !script.exists() {
            std::fs::write(&script, WORKER).unwrap();
        }
        let (script, dir) = (script.to_str().unwrap().to_string(), dir.to_str().unwrap().to_string());
        RunProc::start(url, Path::new(&dir), service, node, args, &["python3", &script, &dir])
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits for the exit status (at most `limit`).
    pub fn wait(&mut self, limit: Duration) -> Option<i32> {
        let until = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                use std::os::unix::process::ExitStatusExt;
                return Some(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)));
            }
            if Instant::now() >= until {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for RunProc {
    fn drop(&mut self) {
        signal(self.child.id(), libc::SIGCONT);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
