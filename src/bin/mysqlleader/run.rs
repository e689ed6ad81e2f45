//! `mysqlleader run`: campaign with an [`Elector`], and run COMMAND only while this node leads.
//!
//! The supervision loop, in order:
//! 1. check the arguments (lease, renew, grace, that COMMAND exists), the server, the login and
//!    the schema, so that mistakes are reported before anything runs;
//! 2. campaign (the elector renews in the background) until this node leads with more than the
//!    grace period left before its deadline;
//! 3. start COMMAND through a guard process (see `guard.rs`) with `MYSQLLEADER_SERVICE`,
//!    `MYSQLLEADER_NODE` and `MYSQLLEADER_TERM`, and pass it every later deadline after each
//!    renew — the guard stops COMMAND by the deadline on its own, whatever happens to `run`;
//! 4. when the elector stops leading (another node holds the seat, a new term, or no renew
//!    before the deadline), ask the guard to stop COMMAND (SIGTERM, SIGKILL after the grace
//!    period and before the deadline), wait for its report, and go back to 2;
//! 5. when COMMAND exits on its own: with `--restart`, start it again (step 2); otherwise
//!    resign, so another node takes over at once, and exit with COMMAND's status;
//! 6. on SIGINT, SIGTERM or SIGHUP: stop COMMAND through the guard (a second signal kills it at
//!    once), resign, and exit with 128 + the signal number.
//!
//! `run` resigns only after the guard has reported that COMMAND and everything it started have
//! ended, so nothing of COMMAND still runs when another node can take the seat.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use mysqlleader::{procedures, Elector, State};
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::args::RunArgs;
use crate::commands::{Ctx, Db};
use crate::errors::CliError;
use crate::guard::{signal_name, Cause, GuardHandle, Report, Timing};
use crate::output::human;

/// A line on standard error; a closed standard error must not end `run` (and so COMMAND).
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "mysqlleader: {}", format_args!($($arg)*));
    }};
}

/// The longest pause before `--restart` starts COMMAND again (at most the renew interval).
const RESTART_PAUSE: Duration = Duration::from_secs(1);

/// SIGINT, SIGTERM and SIGHUP, as one stream.
struct Signals {
    int: Signal,
    term: Signal,
    hup: Signal,
}

impl Signals {
    fn new() -> Result<Signals, CliError> {
        let make = |kind| signal(kind).map_err(|e| CliError::new(format!("cannot handle signals: {e}")));
        Ok(Signals {
            int: make(SignalKind::interrupt())?,
            term: make(SignalKind::terminate())?,
            hup: make(SignalKind::hangup())?,
        })
    }

    /// The number of the next signal.
    async fn recv(&mut self) -> i32 {
        tokio::select! {
            _ = self.int.recv() => libc::SIGINT,
            _ = self.term.recv() => libc::SIGTERM,
            _ = self.hup.recv() => libc::SIGHUP,
        }
    }
}

/// Prints the elector's errors once each (a failing server would otherwise repeat one line per
/// attempt), and when calls succeed again.
#[derive(Default)]
struct ErrorLog {
    last: Option<String>,
}

impl ErrorLog {
    fn observe(&mut self, state: &State) {
        let now = state
            .last_error
            .as_ref()
            .map(|e| mysqlleader::error::redact(&e.to_string()))
            // A renew sent after the deadline had passed (`run` was frozen) times out at once:
            // not a database problem, and the stop is already reported.
            .filter(|e| !e.ends_with("no answer within 0 ms"));
        if now != self.last {
            match &now {
                Some(e) => note!("campaign failed: {e}; retrying"),
                None => note!("the database answers again"),
            }
            self.last = now;
        }
    }
}

/// COMMAND is a path that exists and is executable, or a name found in PATH.
fn check_command(program: &OsStr) -> Result<(), CliError> {
    fn executable(p: &Path) -> bool {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    let shown = program.to_string_lossy();
    if program.as_bytes().contains(&b'/') {
        if executable(Path::new(program)) {
            return Ok(());
        }
        return Err(CliError::new(format!("cannot run COMMAND {shown:?}: no executable file there")));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|dir| executable(&dir.join(program))) {
        return Ok(());
    }
    Err(CliError::new(format!("cannot run COMMAND {shown:?}: command not found in PATH")))
}

/// Why this node no longer leads `term`, in words.
fn why_stopped(s: &State, node: &str, term: u64) -> String {
    if s.leading && s.term != term {
        format!("a new term {} began", s.term)
    } else if let Some(other) = s.leader_id.as_deref().filter(|l| *l != node) {
        format!("{other} holds the seat now, at term {}", s.term)
    } else if let Some(e) = &s.last_error {
        format!("no renew succeeded before the deadline; last error: {}", mysqlleader::error::redact(&e.to_string()))
    } else {
        "the lease was not renewed in time".to_string()
    }
}

/// Waits until this node leads with more than `min_left` before its deadline; returns the
/// term and the deadline. `None` when the elector has stopped.
async fn wait_to_lead(state: &mut watch::Receiver<State>, min_left: Duration, errors: &mut ErrorLog) -> Option<(u64, Instant)> {
    loop {
        {
            let s = state.borrow_and_update();
            errors.observe(&s);
            let now = Instant::now();
            if s.leads_at(now) {
                if let Some(deadline) = s.valid_until.filter(|d| *d > now + min_left) {
                    return Some((s.term, deadline));
                }
            }
        }
        state.changed().await.ok()?;
    }
}

/// Resigns (so another node takes over at once) and stops the elector.
async fn resign_and_stop(elector: Elector, node: &str, service: &str) {
    let lease = elector.config().lease;
    match elector.shutdown().await {
        Ok(()) => note!("{node} left the election for {service}"),
        Err(e) => note!(
            "could not resign ({}); the lease lapses by itself within {}",
            mysqlleader::error::redact(&e.to_string()),
            human(lease)
        ),
    }
}

/// Maps a configuration error to the option the user wrote.
fn config_error(e: mysqlleader::Error) -> CliError {
    match e {
        mysqlleader::Error::InvalidArgument { parameter, message } => {
            let option = match parameter.as_str() {
                "service_id" => "--service",
                "node_id" => "--node",
                "lease" => "--lease",
                "renew_interval" => "--renew",
                _ => "--lease", // the other intervals are derived from the lease
            };
            CliError::new(format!("invalid {option}: {message}"))
        }
        other => crate::errors::offline(other),
    }
}

pub async fn run(ctx: &Ctx, args: RunArgs) -> Result<u8, CliError> {
    // 1. Arguments, server, login, schema.
    ctx.url()?;
    check_command(&args.command[0])?;
    let fallbacks = fallback_pools(&args.fallback_urls)?;
    let db = ctx.connect().await?;
    let outcome = supervise(&db, &fallbacks, args).await;
    db.close().await;
    for pool in fallbacks {
        let _ = pool.disconnect().await;
    }
    outcome
}

/// One pool per `--fallback-url`, in order. Only the URLs are checked here: a fallback server
/// that is down at the start is simply skipped over when the elector moves.
fn fallback_pools(urls: &[String]) -> Result<Vec<mysql_async::Pool>, CliError> {
    urls.iter()
        .map(|url| {
            crate::errors::Target::from_url(url).map_err(|e| CliError::new(format!("invalid --fallback-url: {e}")))?;
            mysqlleader::pool_from_url(url).map_err(|e| {
                CliError::new(format!("invalid --fallback-url: {}", mysqlleader::error::redact(&e.to_string())))
            })
        })
        .collect()
}

async fn supervise(db: &Db, fallbacks: &[mysql_async::Pool], args: RunArgs) -> Result<u8, CliError> {
    let mut builder = Elector::builder(db.pool.clone(), args.service.clone())
        .lease(args.lease)
        .resign_on_drop(true)
        .fallback_servers(fallbacks.iter().cloned());
    if let Some(node) = &args.node {
        builder = builder.node_id(node.clone());
    }
    if let Some(renew) = args.renew {
        builder = builder.renew_interval(renew);
    }
    let config = builder.config().map_err(config_error)?;
    let usable = config.lease - config.drift_margin;
    let room = usable.saturating_sub(config.renew_interval * 2);
    let grace = args.grace.unwrap_or((config.lease / 4).min(room));
    if grace.is_zero() || grace > room {
        return Err(CliError::new(format!(
            "invalid --grace: {} must be above 0 and leave room for two renews before it: at most lease - \
             drift margin - 2 x renew = {}",
            human(grace),
            human(room)
        )));
    }
    let timing = Timing { grace, kill_margin: (grace / 4).min(Duration::from_millis(100)) };
    procedures::current_leader(&db.pool, &args.service).await.map_err(|e| db.explain(e))?;

    // 2. Campaign.
    let (node, service) = (config.node_id.clone(), config.service_id.clone());
    let mut signals = Signals::new()?;
    let elector = builder.start().map_err(config_error)?;
    let mut state = elector.watch();
    let mut errors = ErrorLog::default();
    note!(
        "{node} campaigns for {service} (lease {}, renew every {}, grace {}); COMMAND runs only while it leads",
        human(config.lease),
        human(config.renew_interval),
        human(grace)
    );
    let mut interrupted: Option<i32> = None;
    let mut elector_gone = false;
    'campaign: loop {
        let (term, deadline) = tokio::select! {
            led = wait_to_lead(&mut state, timing.grace + timing.kill_margin, &mut errors) => match led {
                Some(led) => led,
                None => return Err(CliError::new("the elector stopped unexpectedly")),
            },
            signo = signals.recv() => {
                note!("{} received: leaving the election", signal_name(signo));
                resign_and_stop(elector, &node, &service).await;
                return Ok((128 + signo) as u8);
            }
        };

        // 3. COMMAND, under its guard.
        let env = [
            ("MYSQLLEADER_SERVICE", service.clone()),
            ("MYSQLLEADER_NODE", node.clone()),
            ("MYSQLLEADER_TERM", term.to_string()),
        ];
        let mut guard = match GuardHandle::spawn(&args.command, &env, deadline, timing) {
            Ok(guard) => guard,
            Err(e) => {
                resign_and_stop(elector, &node, &service).await;
                return Err(CliError::new(format!("cannot start the guard process: {e}")));
            }
        };
        loop {
            tokio::select! {
                report = guard.next() => match report {
                    Report::Started(pid) => {
                        note!("{node} leads {service} at term {term}: started COMMAND (pid {pid})");
                    }
                    Report::Late => {
                        if let Some(signo) = interrupted {
                            resign_and_stop(elector, &node, &service).await;
                            return Ok((128 + signo) as u8);
                        }
                        continue 'campaign;
                    }
                    Report::SpawnFailed(reason) => {
                        resign_and_stop(elector, &node, &service).await;
                        return Err(CliError::new(format!("cannot start COMMAND: {reason}")));
                    }
                    Report::Exited { ended, cause } => {
                        if let Some(signo) = interrupted {
                            note!("COMMAND stopped ({ended})");
                            resign_and_stop(elector, &node, &service).await;
                            return Ok((128 + signo) as u8);
                        }
                        match cause {
                            // 5. COMMAND ended on its own.
                            Cause::SelfExit if args.restart => {
                                note!("COMMAND ended ({ended}); starting it again (--restart)");
                                let pause = RESTART_PAUSE.min(config.renew_interval);
                                tokio::select! {
                                    _ = tokio::time::sleep(pause) => {}
                                    signo = signals.recv() => {
                                        resign_and_stop(elector, &node, &service).await;
                                        return Ok((128 + signo) as u8);
                                    }
                                }
                                continue 'campaign;
                            }
                            Cause::SelfExit => {
                                note!("COMMAND ended ({ended}); resigning");
                                resign_and_stop(elector, &node, &service).await;
                                return Ok(ended.shell_status());
                            }
                            Cause::Deadline => {
                                note!(
                                    "COMMAND stopped ({ended}): the leadership deadline came near without a renew"
                                );
                                continue 'campaign;
                            }
                            _ => {
                                note!("COMMAND stopped ({ended})");
                                continue 'campaign;
                            }
                        }
                    }
                    Report::GuardGone => {
                        note!("the guard process ended unexpectedly (COMMAND died with it)");
                        if let Some(signo) = interrupted {
                            resign_and_stop(elector, &node, &service).await;
                            return Ok((128 + signo) as u8);
                        }
                        continue 'campaign;
                    }
                },
                changed = state.changed(), if !elector_gone => {
                    if changed.is_err() {
                        elector_gone = true;
                        guard.kill();
                        continue;
                    }
                    let s = state.borrow_and_update().clone();
                    errors.observe(&s);
                    if s.leads_at(Instant::now()) && s.term == term {
                        // A renew: the guard gets the new deadline.
                        if let Some(deadline) = s.valid_until {
                            guard.extend(deadline);
                        }
                    } else if !guard.stop_sent() {
                        // 4. Leadership ended: stop COMMAND (first), then say why. The elector
                        //    publishes "stopped leading" and "who leads now" as two updates:
                        //    a moment's wait lets the second arrive for the message.
                        guard.stop();
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        note!(
                            "{node} no longer leads {service} (term {term}: {}); stopping COMMAND",
                            why_stopped(&elector.state(), &node, term)
                        );
                    }
                },
                signo = signals.recv() => {
                    // 6. Interrupted: stop COMMAND first, resign once it has ended.
                    if interrupted.is_none() {
                        note!("{} received: stopping COMMAND, then resigning", signal_name(signo));
                        interrupted = Some(signo);
                        guard.stop();
                    } else {
                        note!("{} received again: killing COMMAND", signal_name(signo));
                        guard.kill();
                    }
                }
            }
        }
    }
}
