//! `mysqlleader run`: campaign with an [`Elector`], and run COMMAND only while this node leads.
//!
//! The supervision loop, in order:
//! 1. check the arguments (lease, renew, grace, that COMMAND exists), bind `--http`'s address,
//!    check the server, the login and the schema, so that mistakes are reported before anything
//!    runs (and before any campaign);
//! 2. campaign (the elector renews in the background) until this node leads with more than the
//!    deadline stop's lead (min(grace, lease - drift margin - 2 x renew)) left before its deadline;
//! 3. start COMMAND through a guard process (see `guard.rs`) with `MYSQLLEADER_SERVICE`,
//!    `MYSQLLEADER_NODE` and `MYSQLLEADER_TERM`, and pass it every later deadline after each
//!    renew — the guard stops COMMAND by the deadline on its own, whatever happens to `run`;
//! 4. when the elector stops leading (another node holds the seat, a new term, or no renew
//!    before the deadline), ask the guard to stop COMMAND (SIGTERM, SIGKILL after the grace
//!    period or before the deadline, whichever comes first), wait for its report, and go back
//!    to 2;
//! 5. when COMMAND exits on its own: with `--restart`, start it again (step 2) after a pause
//!    that doubles with each exit, up to `--restart-backoff-max`: a pause of at most a lease
//!    keeps the seat; a longer one resigns (so another node can take over) and campaigns again
//!    after it; after `--restart-limit` exits within `--restart-window`, resign, stay out for
//!    one lease, then campaign again;
//!    without `--restart`, resign, so another node takes over at once, and exit with COMMAND's
//!    status;
//! 6. on SIGINT or SIGTERM: stop COMMAND through the guard (a second signal kills it at once)
//!    while renewing, so that COMMAND gets its whole grace period as long as the lease holds
//!    (every renew moves the guard's deadline), then resign, and exit with 128 + the signal number; the other catchable signals of
//!    [`FORWARDED`] go to COMMAND's process group while it runs (one that arrives while the
//!    guard starts COMMAND is passed on as soon as COMMAND's pid is known), and `run` goes on;
//! 7. with `--try D`: when this node has not led within D, exit with [`EXIT_TRY`].
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


/// The exit status when `--try` passes without leadership (EX_TEMPFAIL: try again later).
const EXIT_TRY: u8 = 75;

/// The signals `run` forwards to COMMAND's process group (it uses SIGINT and SIGTERM itself).
const FORWARDED: [i32; 6] = [libc::SIGHUP, libc::SIGQUIT, libc::SIGUSR1, libc::SIGUSR2, libc::SIGALRM, libc::SIGWINCH];

/// SIGINT and SIGTERM (stop), and the forwarded ones, as one stream.
struct Signals {
    int: Signal,
    term: Signal,
    forwarded: Vec<(i32, Signal)>,
}

/// What a signal asks of `run`.
enum Sig {
    /// SIGINT or SIGTERM: stop COMMAND, resign, exit 128 + N.
    Stop(i32),
    /// Another catchable signal: pass it on to COMMAND.
    Forward(i32),
}

impl Signals {
    fn new() -> Result<Signals, CliError> {
        let make = |kind| signal(kind).map_err(|e| CliError::new(format!("cannot handle signals: {e}")));
        let mut forwarded = Vec::new();
        for signo in FORWARDED {
            forwarded.push((signo, make(SignalKind::from_raw(signo))?));
        }
        Ok(Signals { int: make(SignalKind::interrupt())?, term: make(SignalKind::terminate())?, forwarded })
    }

    /// The next signal.
    async fn recv(&mut self) -> Sig {
        let forwarded = futures_lite_select(&mut self.forwarded);
        tokio::select! {
            _ = self.int.recv() => Sig::Stop(libc::SIGINT),
            _ = self.term.recv() => Sig::Stop(libc::SIGTERM),
            signo = forwarded => Sig::Forward(signo),
        }
    }
}

/// The first of the forwarded signals to arrive.
async fn futures_lite_select(signals: &mut [(i32, Signal)]) -> i32 {
    std::future::poll_fn(|cx| {
        for (signo, s) in signals.iter_mut() {
            if let std::task::Poll::Ready(_) = s.poll_recv(cx) {
                return std::task::Poll::Ready(*signo);
            }
        }
        std::task::Poll::Pending
    })
    .await
}

/// Passes `signo` to COMMAND's process group (COMMAND leads its own group), if it runs.
fn forward(signo: i32, command: Option<u32>) {
    match command {
        Some(pid) => {
            note!("{} received: forwarding it to COMMAND (process group {pid})", signal_name(signo));
            // SAFETY: kill(2) with a negative pid signals that process group; no memory involved.
            unsafe { libc::kill(-(pid as i32), signo) };
        }
        None => note!("{} received before COMMAND started: not forwarded", signal_name(signo)),
    }
}

/// Waits `pause` while COMMAND does not run (a restart's back-off, a stay-out): SIGINT or SIGTERM
/// ends the wait and is returned; a signal to forward finds no COMMAND and is dropped.
async fn pause_unless_stopped(pause: Duration, signals: &mut Signals) -> Option<i32> {
    let sleep = tokio::time::sleep(pause);
    tokio::pin!(sleep);
    loop {
        tokio::select! {
            _ = &mut sleep => return None,
            sig = signals.recv() => match sig {
                Sig::Stop(signo) => return Some(signo),
                Sig::Forward(signo) => forward(signo, None),
            },
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
/// `Some(Err(e))` when the elector's calls fail with an error retrying cannot fix (a refused
/// login, a missing grant, the schema not installed, a service outside the account's patterns):
/// `run` then exits 2 at once instead of campaigning for ever.
async fn wait_to_lead(
    state: &mut watch::Receiver<State>,
    min_left: Duration,
    errors: &mut ErrorLog,
) -> Option<Result<(u64, Instant), mysqlleader::Error>> {
    loop {
        {
            let s = state.borrow_and_update();
            if let Some(e) = s.last_error.as_ref().filter(|e| e.is_permanent() && !s.leading) {
                return Some(Err(e.clone()));
            }
            errors.observe(&s);
            let now = Instant::now();
            if s.leads_at(now) {
                if let Some(deadline) = s.valid_until.filter(|d| *d > now + min_left) {
                    return Some(Ok((s.term, deadline)));
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

/// The library's own log records, on standard error for as long as `run` runs: warnings and
/// errors by default (a renew that failed, a wake-up lock that is off for want of a grant), more
/// with `MYSQLLEADER_LOG=info|debug|trace` (`off` for none).
fn log_to_stderr() {
    unsafe extern "C" fn line(_: *mut std::ffi::c_void, level: u32, _target: *const std::ffi::c_char, message: *const std::ffi::c_char) {
        // SAFETY: the library passes a valid NUL-terminated message for the call's duration.
        let message = unsafe { std::ffi::CStr::from_ptr(message) }.to_string_lossy();
        let level = ["error", "warning", "info", "debug", "trace"].get(level.saturating_sub(1) as usize).copied().unwrap_or("info");
        note!("{level}: {}", crate::output::printable(&message));
    }
    let max = match std::env::var("MYSQLLEADER_LOG").unwrap_or_default().to_ascii_lowercase().as_str() {
        "off" | "none" => 0,
        "error" => 1,
        "info" => 3,
        "debug" => 4,
        "trace" => 5,
        _ => 2,
    };
    if max > 0 {
        // SAFETY: `line` is a plain function that lives for the whole process; no userdata.
        let _ = unsafe { mysqlleader::ffi::log::mysqlleader_set_log_callback(std::ptr::null_mut(), Some(line), max) };
    }
}

pub async fn run(ctx: &Ctx, args: RunArgs) -> Result<u8, CliError> {
    // 1. Arguments, server, login, schema.
    ctx.url()?;
    log_to_stderr();
    check_command(&args.command[0])?;
    let fallbacks = fallback_pools(&args.fallback_urls)?;
    // --http's port before anything else touches the database: a taken port must not cost a
    // term (a campaign won, then resigned at once).
    let listener = match &args.http {
        Some(addr) => Some(crate::http::bind(addr).await.map_err(CliError::new)?),
        None => None,
    };
    let db = ctx.connect().await?;
    let outcome = supervise(&db, &fallbacks, args, listener).await;
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

async fn supervise(
    db: &Db,
    fallbacks: &[mysql_async::Pool],
    args: RunArgs,
    listener: Option<(tokio::net::TcpListener, std::net::SocketAddr)>,
) -> Result<u8, CliError> {
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
    // The grace period of a requested stop may be any length: `run` keeps renewing while
    // COMMAND stops. When renews fail, the deadline bounds it: SIGTERM `lead` before the
    // deadline, which leaves room for two renews after the last one that succeeded.
    let usable = config.lease - config.drift_margin;
    let room = usable.saturating_sub(config.renew_interval * 2);
    let grace = args.grace.unwrap_or(config.lease / 4);
    if grace.is_zero() {
        return Err(CliError::new("invalid --grace: must be above 0"));
    }
    let lead = grace.min(room);
    if lead.is_zero() {
        return Err(CliError::new(format!(
            "invalid --renew: {} leaves no time to stop COMMAND before the deadline (lease - drift margin - 2 x renew = 0)",
            human(config.renew_interval)
        )));
    }
    let timing = Timing { grace, lead, kill_margin: (lead / 4).min(Duration::from_millis(100)) };
    procedures::current_leader(&db.pool, &args.service).await.map_err(|e| db.explain(e))?;

    // 2. Campaign.
    let (node, service) = (config.node_id.clone(), config.service_id.clone());
    let mut signals = Signals::new()?;
    let mut elector = builder.clone().start().map_err(config_error)?;
    if let Some(listener) = listener {
        let view = crate::http::View {
            state: elector.watch(),
            metrics: elector.metrics().clone(),
            service: service.clone(),
            lease: config.lease,
        };
        let (listener, bound) = listener;
        crate::http::serve(listener, view);
        note!("serving /leader, /healthz and /metrics on http://{bound}");
    }
    let mut state = elector.watch();
    let mut errors = ErrorLog::default();
    note!(
        "{node} campaigns for {service} (lease {}, renew every {}, grace {}; without renews COMMAND gets SIGTERM {} \
         before the deadline); COMMAND runs only while it leads",
        human(config.lease),
        human(config.renew_interval),
        human(grace),
        human(lead)
    );
    // --try bounds the first wait for the seat, from the start of `run`.
    let mut try_until = args.try_for.map(|d| Instant::now() + d);
    let mut interrupted: Option<i32> = None;
    let mut elector_gone = false;
    // Exits of COMMAND under --restart within --restart-window, for --restart-limit.
    let mut exits: Vec<Instant> = Vec::new();
    // Exits of COMMAND under --restart since it last ran for a whole --restart-window, for the
    // back-off (which, unlike `exits`, a crash-loop resign does not reset).
    let mut quick_exits: u32 = 0;
    'campaign: loop {
        let try_limit = async move {
            match try_until {
                Some(t) => tokio::time::sleep_until(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(try_limit);
        let (term, deadline) = loop {
            tokio::select! {
                led = wait_to_lead(&mut state, timing.lead + timing.kill_margin, &mut errors) => match led {
                    Some(Ok(led)) => break led,
                    Some(Err(e)) => {
                        note!("{node} cannot campaign for {service}, and retrying cannot fix it: giving up");
                        resign_and_stop(elector, &node, &service).await;
                        return Err(db.explain(e));
                    }
                    None => return Err(CliError::new("the elector stopped unexpectedly")),
                },
                _ = &mut try_limit => {
                    note!("{node} did not lead {service} within --try {}: giving up", human(args.try_for.unwrap_or_default()));
                    resign_and_stop(elector, &node, &service).await;
                    return Ok(EXIT_TRY);
                }
                sig = signals.recv() => match sig {
                    Sig::Stop(signo) => {
                        note!("{} received: leaving the election", signal_name(signo));
                        resign_and_stop(elector, &node, &service).await;
                        return Ok((128 + signo) as u8);
                    }
                    Sig::Forward(signo) => { forward(signo, None); continue; }
                },
            }
        };

        try_until = None;

        // 3. COMMAND, under its guard.
        let env = [
            ("MYSQLLEADER_SERVICE", service.clone()),
            ("MYSQLLEADER_NODE", node.clone()),
            ("MYSQLLEADER_TERM", term.to_string()),
        ];
        let mut guard = match GuardHandle::spawn(&args.command, &env, deadline, timing, args.pass_credentials) {
            Ok(guard) => guard,
            Err(e) => {
                resign_and_stop(elector, &node, &service).await;
                return Err(CliError::new(format!("cannot start the guard process: {e}")));
            }
        };
        let mut command_pid: Option<u32> = None;
        let mut started_at: Option<Instant> = None;
        // Signals to forward that arrived after the guard was asked to start COMMAND but before
        // it reported COMMAND's pid: COMMAND may already run, so they are passed on at once then.
        let mut early: Vec<i32> = Vec::new();
        loop {
            tokio::select! {
                report = guard.next() => match report {
                    Report::Started(pid) => {
                        command_pid = Some(pid);
                        started_at = Some(Instant::now());
                        note!("{node} leads {service} at term {term}: started COMMAND (pid {pid})");
                        for signo in early.drain(..) {
                            forward(signo, command_pid.filter(|_| !guard.stop_sent()));
                        }
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
                                let now = Instant::now();
                                if started_at.is_some_and(|t| now.duration_since(t) >= args.restart_window) {
                                    quick_exits = 0; // it ran long enough: the back-off starts anew
                                }
                                quick_exits = quick_exits.saturating_add(1);
                                exits.retain(|t| now.duration_since(*t) < args.restart_window);
                                exits.push(now);
                                // The back-off doubles with each quick exit, up to --restart-backoff-max
                                // (a cap of its own: the lease does not bound it).
                                let pause = args
                                    .restart_backoff
                                    .saturating_mul(1 << (quick_exits - 1).min(20))
                                    .min(args.restart_backoff_max.max(args.restart_backoff));
                                let stay_out = if exits.len() as u32 >= args.restart_limit.max(1) {
                                    // A crash loop: let a healthy node have the seat.
                                    note!(
                                        "COMMAND ended ({ended}) {} times within {}: resigning, and staying out for one lease ({})",
                                        exits.len(), human(args.restart_window), human(config.lease)
                                    );
                                    exits.clear();
                                    config.lease
                                } else if pause > config.lease {
                                    // Holding the seat idle for longer than a lease would cost the
                                    // service more than this node's crash (a failover takes at most
                                    // a lease): let another node run COMMAND meanwhile.
                                    note!(
                                        "COMMAND ended ({ended}); its next start is due in {}, longer than the lease ({}): \
                                         resigning, so that another node can take over, and campaigning again in {} (--restart)",
                                        human(pause), human(config.lease), human(pause)
                                    );
                                    pause
                                } else {
                                    // A short pause: keep the seat (the elector renews meanwhile).
                                    note!("COMMAND ended ({ended}); starting it again in {} (--restart)", human(pause));
                                    if let Some(signo) = pause_unless_stopped(pause, &mut signals).await {
                                        resign_and_stop(elector, &node, &service).await;
                                        return Ok((128 + signo) as u8);
                                    }
                                    continue 'campaign;
                                };
                                let _ = elector.resign().await;
                                if let Some(signo) = pause_unless_stopped(stay_out, &mut signals).await {
                                    resign_and_stop(elector, &node, &service).await;
                                    return Ok((128 + signo) as u8);
                                }
                                elector.shutdown().await.ok();
                                elector = builder.clone().start().map_err(config_error)?;
                                state = elector.watch();
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
                        // 4. Leadership ended: stop COMMAND (first), then say why.
                        guard.stop();
                        note!(
                            "{node} no longer leads {service} (term {term}: {}); stopping COMMAND",
                            why_stopped(&elector.state(), &node, term)
                        );
                    }
                },
                sig = signals.recv() => match sig {
                    // 6. Interrupted: stop COMMAND first, resign once it has ended.
                    Sig::Stop(signo) if interrupted.is_none() => {
                        note!("{} received: stopping COMMAND, then resigning", signal_name(signo));
                        interrupted = Some(signo);
                        guard.stop();
                    }
                    Sig::Stop(signo) => {
                        note!("{} received again: killing COMMAND", signal_name(signo));
                        guard.kill();
                    }
                    Sig::Forward(signo) if command_pid.is_none() && !guard.stop_sent() => {
                        note!("{} received while COMMAND starts: forwarding it once COMMAND runs", signal_name(signo));
                        early.push(signo);
                    }
                    Sig::Forward(signo) => forward(signo, command_pid.filter(|_| !guard.stop_sent())),
                }
            }
        }
    }
}
