//! The guard: a tiny watchdog process between `run` and COMMAND, and the pipe protocol
//! between the two.
//!
//! ```text
//!   mysqlleader run ──control pipe──▶ mysqlleader __guard ──fork/exec──▶ COMMAND (own process group)
//!   (tokio, elector)  ◀──report pipe──  (one thread, no runtime)
//! ```
//!
//! Why a separate process: `run` must stop COMMAND by its leadership deadline even when `run`
//! itself cannot act — frozen by SIGSTOP, starved of CPU, stuck in a long pause — and COMMAND
//! must not outlive `run`, even when `run` is killed with SIGKILL. Nothing inside `run` can
//! promise either, so the promise is kept by a process that does nothing else:
//!
//! * **The deadline lives in the guard.** `run` starts one guard per leadership stretch with the
//!   deadline it holds (the elector's local deadline: the send time of the last successful renew
//!   plus the lease time the database reported left, minus the drift margin), and sends every
//!   later deadline over the control pipe after each renew. The guard acts on its own clock:
//!   SIGTERM to COMMAND's process group `grace` before the deadline, SIGKILL to the group and
//!   every descendant `kill_margin` before it. If `run` stops sending — frozen, starved, or cut
//!   off from the database — the deadline simply passes and the guard stops COMMAND in time.
//!   Deadlines are absolute CLOCK_BOOTTIME instants (nanoseconds), which every process on the
//!   host reads alike, so a message that arrives late means no more time than it said; and unlike
//!   CLOCK_MONOTONIC, CLOCK_BOOTTIME keeps counting while the host is suspended, as the database's
//!   clock does.
//! * **The guard notices `run`'s death.** Only `run` holds the write end of the control pipe
//!   (close-on-exec everywhere else). When `run` dies, however it dies, the kernel closes it and
//!   the guard reads end-of-file: it SIGKILLs COMMAND's process group and descendants at once.
//! * **COMMAND dies with the guard.** COMMAND is started with `PR_SET_PDEATHSIG = SIGKILL`.
//!   The parent-death signal fires when the *thread* that forked the child exits; the guard has
//!   a single thread, which lives exactly as long as the guard. (`run` itself, a multi-threaded
//!   tokio program, never relies on PDEATHSIG.) The child checks after `prctl` that the guard is
//!   still its parent, so a guard that died during the fork cannot leave it unwatched.
//! * **No descendant escapes.** The guard is a child subreaper (`PR_SET_CHILD_SUBREAPER`): a
//!   process that COMMAND starts and abandons (double fork, `setsid`) is re-parented to the guard,
//!   not to init. To stop COMMAND, the guard kills the process group *and* every descendant it
//!   finds in `/proc`, and repeats until it has no child left; only then does it report the end.
//!   `run` resigns or campaigns again only after that report, so nothing of COMMAND runs once
//!   another node can take the seat.
//! * **COMMAND never starts late.** The guard drains the control pipe and checks the deadline
//!   again right before it forks: a guard that starts (or `run` that was frozen) too close to the
//!   deadline reports `late` and starts nothing.
//!
//! The guard and COMMAND each get their own process group, so job-control signals for `run`'s
//! group (Ctrl-C, Ctrl-Z) reach only `run`, which then stops COMMAND through the guard in order.
//!
//! Not covered: a SIGKILL of the guard itself kills COMMAND (parent-death signal) but not
//! COMMAND's own children; a process in uninterruptible sleep dies only when its system call
//! ends; and the guard, like any process, can itself be starved when the whole host is.
//!
//! Protocol, one text line per message (at most a few dozen bytes, so every write is atomic):
//! * `run` → guard: `deadline <boottime_ns>` (the current deadline; the latest message wins),
//!   `stop` (SIGTERM now, SIGKILL after `grace` but still before the deadline), `kill` (SIGKILL now).
//! * guard → `run`: `started <pid>`, `late`, `spawn-failed <reason>`,
//!   `exited <code=N|signal=N> <self|deadline|stop|kill|orphan>`.

use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::ExitCode;
use std::time::Duration;

use crate::args::GuardArgs;

// ---- Both ends ----

/// Now on CLOCK_BOOTTIME, in nanoseconds.
pub fn boottime_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Why COMMAND ended, as the guard saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// COMMAND exited on its own.
    SelfExit,
    /// The leadership deadline came near without an extension.
    Deadline,
    /// `run` asked to stop it (leadership lost, or `run` was interrupted).
    Stop,
    /// `run` asked to kill it at once.
    Kill,
    /// `run` is gone (the control pipe closed).
    Orphan,
}

impl Cause {
    fn word(self) -> &'static str {
        match self {
            Cause::SelfExit => "self",
            Cause::Deadline => "deadline",
            Cause::Stop => "stop",
            Cause::Kill => "kill",
            Cause::Orphan => "orphan",
        }
    }

    fn from_word(word: &str) -> Option<Cause> {
        Some(match word {
            "self" => Cause::SelfExit,
            "deadline" => Cause::Deadline,
            "stop" => Cause::Stop,
            "kill" => Cause::Kill,
            "orphan" => Cause::Orphan,
            _ => return None,
        })
    }
}

/// How COMMAND ended: its exit code, or the signal that killed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Code(i32),
    Signal(i32),
}

impl Ended {
    /// The exit status a shell would report: the code, or 128 + the signal number.
    pub fn shell_status(self) -> u8 {
        match self {
            Ended::Code(c) => (c & 0xff) as u8,
            Ended::Signal(s) => (128 + s).min(255) as u8,
        }
    }

    fn from_wait_status(status: libc::c_int) -> Ended {
        if libc::WIFSIGNALED(status) {
            Ended::Signal(libc::WTERMSIG(status))
        } else {
            Ended::Code(libc::WEXITSTATUS(status))
        }
    }

    fn word(self) -> String {
        match self {
            Ended::Code(c) => format!("code={c}"),
            Ended::Signal(s) => format!("signal={s}"),
        }
    }

    fn from_word(word: &str) -> Option<Ended> {
        let (kind, n) = word.split_once('=')?;
        let n: i32 = n.parse().ok()?;
        match kind {
            "code" => Some(Ended::Code(n)),
            "signal" => Some(Ended::Signal(n)),
            _ => None,
        }
    }
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended::Code(c) => write!(f, "exit status {c}"),
            Ended::Signal(s) => write!(f, "signal {s} ({})", signal_name(*s)),
        }
    }
}

pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

/// What the guard tells `run`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    Started(u32),
    Late,
    SpawnFailed(String),
    Exited { ended: Ended, cause: Cause },
    /// The guard ended without reporting COMMAND's end (it was killed; COMMAND died with it).
    GuardGone,
}

impl Report {
    fn parse(line: &str) -> Option<Report> {
        let mut words = line.splitn(2, ' ');
        match (words.next()?, words.next()) {
            ("started", Some(pid)) => pid.trim().parse().ok().map(Report::Started),
            ("late", _) => Some(Report::Late),
            ("spawn-failed", reason) => Some(Report::SpawnFailed(reason.unwrap_or("").to_string())),
            ("exited", Some(rest)) => {
                let (ended, cause) = rest.trim().split_once(' ')?;
                Some(Report::Exited { ended: Ended::from_word(ended)?, cause: Cause::from_word(cause)? })
            }
            _ => None,
        }
    }
}

fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 just created both descriptors and nothing else owns them.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn set_fd_flag(fd: RawFd, get: libc::c_int, set: libc::c_int, flag: libc::c_int, on: bool) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor number has no memory effects; errors are returned.
    unsafe {
        let flags = libc::fcntl(fd, get);
        if flags < 0 {
            return Err(io::Error::last_os_error());
        }
        let new = if on { flags | flag } else { flags & !flag };
        if libc::fcntl(fd, set, new) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

// ---- `run`'s end ----

/// `run`'s handle on one guard (and so on one start of COMMAND).
pub struct GuardHandle {
    /// The write end of the control pipe, non-blocking: a full pipe (a guard that stopped
    /// reading) drops an extension, which only makes the guard act sooner.
    control: std::fs::File,
    reports: tokio::sync::mpsc::UnboundedReceiver<Report>,
    stop_sent: bool,
}

/// The times the guard enforces.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// A requested stop (`stop`): the longest wait from its SIGTERM to SIGKILL, for as long as
    /// the deadline allows (renews go on meanwhile and move it).
    pub grace: Duration,
    /// A deadline stop: SIGTERM this long before the deadline when it was not extended.
    pub lead: Duration,
    /// SIGKILL at the latest this long before the deadline, whatever the stop.
    pub kill_margin: Duration,
}

/// `deadline` (the elector's, on the monotonic clock of tokio) as a CLOCK_BOOTTIME instant.
/// The boot-time clock is read *first*, so the result can only come out earlier than the true
/// instant, never later.
pub fn boottime_of(deadline: tokio::time::Instant) -> u64 {
    let boot_now = boottime_ns();
    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
    boot_now.saturating_add(left.as_nanos() as u64)
}

impl GuardHandle {
    /// Starts a guard that starts COMMAND with `env` added, unless `deadline` is too near;
    /// without `pass_credentials`, neither sees MYSQLLEADER_URL or MYSQLLEADER_PASSWORD.
    pub fn spawn(
        command: &[OsString],
        env: &[(&str, String)],
        deadline: tokio::time::Instant,
        timing: Timing,
        pass_credentials: bool,
    ) -> io::Result<GuardHandle> {
        let (control_read, control_write) = pipe_cloexec()?;
        let (report_read, report_write) = pipe_cloexec()?;
        let exe = if std::path::Path::new("/proc/self/exe").exists() {
            std::path::PathBuf::from("/proc/self/exe")
        } else {
            std::env::current_exe()?
        };
        let mut cmd = std::process::Command::new(exe);
        cmd.arg0("mysqlleader")
            .arg("__guard")
            .arg("--control-fd")
            .arg(control_read.as_raw_fd().to_string())
            .arg("--report-fd")
            .arg(report_write.as_raw_fd().to_string())
            .arg("--deadline-ns")
            .arg(boottime_of(deadline).to_string())
            .arg("--grace-ms")
            .arg(timing.grace.as_millis().to_string())
            .arg("--lead-ms")
            .arg(timing.lead.as_millis().to_string())
            .arg("--kill-margin-ms")
            .arg(timing.kill_margin.as_millis().to_string())
            .arg("--")
            .args(command)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())));
        if !pass_credentials {
            cmd.env_remove("MYSQLLEADER_URL").env_remove("MYSQLLEADER_PASSWORD");
        }
        cmd
            // Its own process group: Ctrl-C and Ctrl-Z at a terminal reach `run` only.
            .process_group(0);
        let (keep_read, keep_write) = (control_read.as_raw_fd(), report_write.as_raw_fd());
        // SAFETY: only async-signal-safe calls (fcntl) between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                // These two, and only these, survive the exec into the guard.
                set_fd_flag(keep_read, libc::F_GETFD, libc::F_SETFD, libc::FD_CLOEXEC, false)?;
                set_fd_flag(keep_write, libc::F_GETFD, libc::F_SETFD, libc::FD_CLOEXEC, false)
            });
        }
        let mut child = cmd.spawn()?;
        drop(control_read);
        drop(report_write);
        set_fd_flag(control_write.as_raw_fd(), libc::F_GETFL, libc::F_SETFL, libc::O_NONBLOCK, true)?;

        // A plain thread reads the reports and reaps the guard; the async side gets a channel.
        let (tx, reports) = tokio::sync::mpsc::unbounded_channel();
        std::thread::Builder::new().name("guard-reports".into()).spawn(move || {
            let reader = BufReader::new(std::fs::File::from(report_read));
            let mut ended = false;
            for line in reader.lines() {
                let Ok(line) = line else { break };
                if let Some(report) = Report::parse(&line) {
                    ended |= matches!(report, Report::Exited { .. } | Report::Late | Report::SpawnFailed(_));
                    let _ = tx.send(report);
                }
            }
            let _ = child.wait();
            if !ended {
                let _ = tx.send(Report::GuardGone);
            }
        })?;
        Ok(GuardHandle { control: std::fs::File::from(control_write), reports, stop_sent: false })
    }

    fn send(&mut self, line: &str) {
        // Errors are ignored: EAGAIN drops an extension (the guard acts sooner), EPIPE means the
        // guard is gone and its report is on the way.
        let _ = self.control.write_all(line.as_bytes());
    }

    /// A new deadline after a renew; also after `stop`, where it lets COMMAND use more of its
    /// grace period while the lease is still held.
    pub fn extend(&mut self, deadline: tokio::time::Instant) {
        let line = format!("deadline {}\n", boottime_of(deadline));
        self.send(&line);
    }

    /// Stops COMMAND: SIGTERM now, SIGKILL after the grace period or before the deadline,
    /// whichever comes first (later deadlines move the second).
    pub fn stop(&mut self) {
        if !self.stop_sent {
            self.stop_sent = true;
            self.send("stop\n");
        }
    }

    pub fn stop_sent(&self) -> bool {
        self.stop_sent
    }

    /// Kills COMMAND now.
    pub fn kill(&mut self) {
        self.stop_sent = true;
        self.send("kill\n");
    }

    /// The next report; [`Report::GuardGone`] once the guard is gone.
    pub async fn next(&mut self) -> Report {
        self.reports.recv().await.unwrap_or(Report::GuardGone)
    }
}

// ---- The guard process ----

/// What the guard is doing to COMMAND.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// COMMAND runs; SIGTERM is due at `deadline - lead`.
    Running,
    /// SIGTERM sent; SIGKILL is due at `kill_at`. For a requested stop (`stop_at`: when it came)
    /// that is min(stop_at + grace, deadline - kill_margin), recomputed with each new deadline;
    /// for a deadline stop, deadline - kill_margin.
    Terminating { kill_at: u64, cause: Cause, stop_at: Option<u64> },
    /// SIGKILL sent; waiting for COMMAND to be reaped.
    Killed { cause: Cause },
}

enum Message {
    Deadline(u64),
    Stop,
    Kill,
}

/// Reads the control pipe without blocking, line by line.
struct Control {
    fd: RawFd,
    buf: Vec<u8>,
    eof: bool,
}

impl Control {
    /// Everything that has arrived; sets `eof` when `run` has closed its end.
    fn read(&mut self) -> Vec<Message> {
        let mut chunk = [0u8; 512];
        while !self.eof {
            // SAFETY: reading into a stack buffer of the given length.
            let n = unsafe { libc::read(self.fd, chunk.as_mut_ptr().cast(), chunk.len()) };
            if n > 0 {
                self.buf.extend_from_slice(&chunk[..n as usize]);
            } else if n == 0 {
                self.eof = true;
            } else {
                match io::Error::last_os_error().raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::EAGAIN) => break,
                    // Any other failure reading from `run` counts as losing `run`.
                    _ => self.eof = true,
                }
            }
        }
        let mut messages = Vec::new();
        while let Some(end) = self.buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let mut words = line.split_whitespace();
            match (words.next(), words.next()) {
                (Some("deadline"), Some(ns)) => {
                    if let Ok(ns) = ns.parse() {
                        messages.push(Message::Deadline(ns));
                    }
                }
                (Some("stop"), _) => messages.push(Message::Stop),
                (Some("kill"), _) => messages.push(Message::Kill),
                _ => {}
            }
        }
        messages
    }
}

struct Guard {
    control: Control,
    report_fd: RawFd,
    deadline: u64,
    grace: u64,
    lead: u64,
    kill_margin: u64,
    phase: Phase,
    /// COMMAND's pid, which is also its process group id.
    pid: libc::pid_t,
    /// COMMAND's wait status once reaped.
    status: Option<libc::c_int>,
}

const MS: u64 = 1_000_000;

impl Guard {
    fn report(&self, line: &str) {
        let line = format!("{line}\n");
        // SAFETY: writing a buffer of the given length; a failure (run gone) is ignored.
        unsafe { libc::write(self.report_fd, line.as_ptr().cast(), line.len()) };
    }

    /// SIGTERM to COMMAND's process group (and SIGCONT, so a stopped COMMAND can act on it).
    fn terminate(&self) {
        // SAFETY: kill(2) with a negative pid signals the process group.
        unsafe {
            libc::kill(-self.pid, libc::SIGTERM);
            libc::kill(-self.pid, libc::SIGCONT);
        }
    }

    /// SIGKILL to COMMAND's process group and to every descendant of the guard.
    fn kill_all(&self) {
        // SAFETY: kill(2) has no memory effects; ESRCH for a group that is already gone is fine.
        unsafe { libc::kill(-self.pid, libc::SIGKILL) };
        // SAFETY: getpid cannot fail.
        let me = unsafe { libc::getpid() };
        for pid in descendants(me) {
            // SAFETY: as above.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }

    /// Reaps every child that has ended, keeping COMMAND's status. True when no child is left.
    fn reap(&mut self) -> bool {
        loop {
            let mut status: libc::c_int = 0;
            // SAFETY: waitpid writes the status of a reaped child into `status`.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid > 0 {
                if pid == self.pid {
                    self.status = Some(status);
                }
                continue;
            }
            if pid == 0 {
                return false;
            }
            match io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) => continue,
                _ => return true, // ECHILD: nothing left
            }
        }
    }

    fn handle(&mut self, message: Message) {
        let now = boottime_ns();
        match message {
            // The latest deadline wins (it only ever moves forward while the term lasts; if it
            // moved back, acting sooner is the safe side). After SIGTERM there is no way back to
            // running; a requested stop may only use more of its grace period.
            Message::Deadline(ns) => match self.phase {
                Phase::Running => self.deadline = ns,
                Phase::Terminating { cause, stop_at: Some(stop_at), .. } => {
                    self.deadline = ns;
                    let kill_at = (stop_at + self.grace).min(ns.saturating_sub(self.kill_margin));
                    self.phase = Phase::Terminating { kill_at, cause, stop_at: Some(stop_at) };
                }
                Phase::Terminating { .. } | Phase::Killed { .. } => {}
            },
            Message::Stop => {
                if self.phase == Phase::Running {
                    self.terminate();
                    let kill_at = (now + self.grace).min(self.deadline.saturating_sub(self.kill_margin));
                    self.phase = Phase::Terminating { kill_at, cause: Cause::Stop, stop_at: Some(now) };
                }
            }
            Message::Kill => {
                if !matches!(self.phase, Phase::Killed { .. }) {
                    self.kill_all();
                    self.phase = Phase::Killed { cause: Cause::Kill };
                }
            }
        }
    }

    /// Acts on the clock: SIGTERM at `deadline - lead`, SIGKILL at the kill time.
    fn act_on_time(&mut self) {
        let now = boottime_ns();
        if self.phase == Phase::Running && now.saturating_add(self.lead) >= self.deadline {
            self.terminate();
            let kill_at = self.deadline.saturating_sub(self.kill_margin);
            self.phase = Phase::Terminating { kill_at, cause: Cause::Deadline, stop_at: None };
        }
        if let Phase::Terminating { kill_at, cause, .. } = self.phase {
            if now >= kill_at {
                self.kill_all();
                self.phase = Phase::Killed { cause };
            }
        }
    }

    /// How long to sleep at most before acting on the clock again.
    fn next_wake(&self) -> Duration {
        let now = boottime_ns();
        let at = match self.phase {
            Phase::Running => self.deadline.saturating_sub(self.lead),
            Phase::Terminating { kill_at, .. } => kill_at,
            Phase::Killed { .. } => now + 5 * MS,
        };
        // Wake at least every 100 ms: poll's timeout runs on CLOCK_MONOTONIC, which stands
        // still in a suspend while CLOCK_BOOTTIME does not.
        Duration::from_nanos(at.saturating_sub(now).min(100 * MS))
    }

    /// Sleeps until a control message, COMMAND's end (when a pidfd is available), or `timeout`.
    fn wait(&self, pidfd: Option<RawFd>, timeout: Duration) {
        let mut fds = vec![libc::pollfd { fd: self.control.fd, events: libc::POLLIN, revents: 0 }];
        if self.control.eof {
            fds[0].fd = -1; // ignored by ppoll
        }
        let timeout = match pidfd {
            Some(fd) => {
                fds.push(libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
                timeout
            }
            // Without a pidfd, look at COMMAND every 10 ms.
            None => timeout.min(Duration::from_millis(10)),
        };
        let ts = libc::timespec { tv_sec: timeout.as_secs() as libc::time_t, tv_nsec: timeout.subsec_nanos() as libc::c_long };
        // SAFETY: `fds` is a valid array of its length; `ts` outlives the call.
        unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    }
}

/// Every descendant of `root`, from `/proc` (parents before children).
fn descendants(root: libc::pid_t) -> Vec<libc::pid_t> {
    let mut parent_of: Vec<(libc::pid_t, libc::pid_t)> = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<libc::pid_t>().ok()) else { continue };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
            // "pid (comm) state ppid ...": comm may hold spaces and parentheses; it ends at the last ')'.
            let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
            if let Some(ppid) = after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
                parent_of.push((pid, ppid));
            }
        }
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(parent_of.iter().filter(|(_, ppid)| *ppid == parent).map(|(pid, _)| *pid));
        i += 1;
    }
    found.remove(0);
    found
}

/// The guard process: `mysqlleader __guard` (started by `run` only).
pub fn main(args: GuardArgs) -> ExitCode {
    // 1. Neither pipe may reach COMMAND: the control pipe's end-of-file must mean "run is gone",
    //    and the report pipe's end-of-file "the guard is gone".
    for fd in [args.control_fd, args.report_fd] {
        if set_fd_flag(fd, libc::F_GETFD, libc::F_SETFD, libc::FD_CLOEXEC, true).is_err() {
            eprintln!("mysqlleader __guard is started by `mysqlleader run` only");
            return ExitCode::from(2);
        }
    }
    let _ = set_fd_flag(args.control_fd, libc::F_GETFL, libc::F_SETFL, libc::O_NONBLOCK, true);
    // 2. Abandoned descendants of COMMAND become the guard's children, so it can find them all.
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };

    let mut guard = Guard {
        control: Control { fd: args.control_fd, buf: Vec::new(), eof: false },
        report_fd: args.report_fd,
        deadline: args.deadline_ns,
        grace: args.grace_ms * MS,
        lead: args.lead_ms * MS,
        kill_margin: args.kill_margin_ms * MS,
        phase: Phase::Running,
        pid: 0,
        status: None,
    };

    // 3. Take in what `run` sent while the guard was starting, then decide whether there is
    //    still time to start COMMAND at all.
    let mut cancelled = false;
    for message in guard.control.read() {
        match message {
            Message::Deadline(ns) => guard.deadline = ns,
            Message::Stop | Message::Kill => cancelled = true,
        }
    }
    if cancelled || guard.control.eof || boottime_ns().saturating_add(guard.lead) >= guard.deadline {
        guard.report("late");
        return ExitCode::SUCCESS;
    }

    // 4. Start COMMAND in a process group of its own, dying with the guard.
    // SAFETY: getpid cannot fail.
    let guard_pid = unsafe { libc::getpid() };
    let mut cmd = std::process::Command::new(&args.command[0]);
    cmd.args(&args.command[1..]).process_group(0);
    // SAFETY: only async-signal-safe calls (prctl, getppid) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != guard_pid {
                // The guard died before the prctl: nobody would watch this COMMAND.
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
    let child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            let program = args.command[0].to_string_lossy();
            guard.report(&format!("spawn-failed {program}: {e}"));
            return ExitCode::SUCCESS;
        }
    };
    guard.pid = child.id() as libc::pid_t;
    guard.report(&format!("started {}", guard.pid));
    // A pidfd makes COMMAND's end wake the poll at once (Linux 5.3+); without one, poll often.
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, guard.pid, 0) };
    let pidfd = (pidfd >= 0).then_some(pidfd as RawFd);

    // 5. Watch: act on the deadline, on messages, on `run`'s death, until COMMAND has ended.
    loop {
        guard.act_on_time();
        guard.reap();
        if guard.status.is_some() {
            break;
        }
        guard.wait(pidfd, guard.next_wake());
        for message in guard.control.read() {
            guard.handle(message);
        }
        if guard.control.eof && !matches!(guard.phase, Phase::Killed { cause: Cause::Orphan }) {
            // `run` is gone: nothing of COMMAND may outlive it.
            guard.kill_all();
            guard.phase = Phase::Killed { cause: Cause::Orphan };
        }
    }
    let cause = match guard.phase {
        Phase::Running => Cause::SelfExit,
        Phase::Terminating { cause, .. } | Phase::Killed { cause } => cause,
    };

    // 6. COMMAND has ended; whatever it left behind goes too, before the report: `run` resigns
    //    or campaigns again only after it.
    let give_up = boottime_ns() + 10_000 * MS;
    loop {
        guard.kill_all();
        if guard.reap() || boottime_ns() > give_up {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let ended = Ended::from_wait_status(guard.status.unwrap_or(0));
    guard.report(&format!("exited {} {}", ended.word(), cause.word()));
    ExitCode::SUCCESS
}
