//! The elector's background task: the loop of the module documentation, steps 1–6. It owns the
//! only writer of the state; the decisions are `decide::decide`'s. The database and the wake-up
//! lock sit behind [`Backend`], so that unit tests run the very same loop on a scripted backend
//! under `tokio::time::pause()`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mysql_async::Pool;
use tokio::sync::{broadcast, mpsc, watch};
use tokio::time::{sleep_until, timeout_at, Instant};

use super::decide::{decide, Decision, Input, Seat, Timing};
use super::{Command, Event, State, StopReason};
use crate::config::ElectorConfig;
use crate::error::{Error, ErrorKind, Result};
use crate::metrics::Metrics;
use crate::procedures::{self, Campaign, CurrentLeader, Resign};
use super::wakeup::{Role, Wakeup};

/// The calls the loop makes, on server `server` (0 is the first; the rest are fallbacks).
pub(crate) trait Backend: Send + Sync + 'static {
    /// How many servers there are (at least 1).
    fn servers(&self) -> usize;
    /// `leader_election_campaign` with `held`, the term this elector holds (0: none), which
    /// renews a lease of this node id only at that term; plain `campaign` where the account may
    /// not call it (the answer says which: [`Campaigned::carried`]).
    fn campaign(&self, server: usize, config: &Arc<ElectorConfig>, held: u64) -> impl Future<Output = Result<Campaigned>> + Send;
    fn current_leader(&self, server: usize, config: &Arc<ElectorConfig>) -> impl Future<Output = Result<CurrentLeader>> + Send;
    fn resign(&self, server: usize, config: &Arc<ElectorConfig>) -> impl Future<Output = Result<Resign>> + Send;
    /// Before the elector's first campaign: ends the term a previous process with this node id
    /// may still hold (`resign`, which does nothing when the node holds no valid lease).
    fn end_predecessor(&self, server: usize, config: &Arc<ElectorConfig>) -> impl Future<Output = Result<Resign>> + Send {
        self.resign(server, config)
    }
    /// `resign_to`: ends this node's term and reserves the seat for `to`.
    fn resign_to(&self, server: usize, config: &Arc<ElectorConfig>, to: &str) -> impl Future<Output = Result<Resign>> + Send;
    /// Tells the wake-up lock what this node does now.
    fn set_role(&self, role: Role);
    /// Resolves when a follower should campaign now (never, without a wake-up lock).
    fn woken(&self) -> impl Future<Output = ()> + Send;
    /// True while a follower's wake-up wait is on a lock a leader holds: a resign or crash of
    /// that leader wakes this node, so it need not poll until the lease it saw can end.
    fn watching(&self) -> bool;
    /// Where the elector reports its failed calls and its terms instead of logging each one: a
    /// session's log, which says an incident once for all its seats. None: the elector logs.
    fn incidents(&self) -> Option<&crate::session::incidents::Incidents> {
        None
    }
    /// Whether `error`, a failed call's on server `server`, is a refused login that the log of
    /// the pool said already for every elector on it ([`super::logins`]): the elector then says it
    /// only at DEBUG.
    fn login_said(&self, _server: usize, _error: &Error) -> bool {
        false
    }
    /// How long a campaign of an elector that does not lead waits for its answer: the request
    /// timeout, for a call of its own. A session's follower waits longer (its call queues
    /// behind the session's other calls: [`crate::session`]).
    fn follower_wait(&self, config: &ElectorConfig) -> Duration {
        config.request_timeout
    }
    /// When a leader whose renew succeeded renews next, planned for `planned` (one renew
    /// interval after it sent this one): then, for a call of its own; no later, and maybe a
    /// little earlier, for a session's (which aligns its leaders' renews into one batch).
    fn renew_at(&self, planned: Instant) -> Instant {
        planned
    }
    /// Whether a follower's `campaign` that timed out is followed by a `resign` of this node's
    /// term before its next campaign ([`Owed::Unanswered`]). For a call of its own, yes. A
    /// session resigns such seats itself: its batcher sees that nobody took the answer
    /// ([`crate::session`], steps 3 and 4).
    fn resigns_unanswered_campaigns(&self) -> bool {
        true
    }
}

/// A campaign's answer, and how it was asked.
#[derive(Debug, Clone)]
pub(crate) struct Campaigned {
    pub(crate) answer: Campaign,
    /// Whether the call carried the held term: false for plain `campaign` (the fall back for an
    /// account not granted `leader_election_campaign`), whose `is_leader` may be another
    /// process's term with this node id (decide's `carried`).
    pub(crate) carried: bool,
}

impl Campaigned {
    /// An answer of a call that carried the held term.
    pub(crate) fn carried(answer: Campaign) -> Campaigned {
        Campaigned { answer, carried: true }
    }
}

/// The real backend: the pools of the servers, the optional wake-up lock, and per server the
/// slot that lets one call at a time hold a connection there (per server, so that a call still
/// running on a stalled server never holds up the move to a fallback).
pub(crate) struct Database {
    pools: Vec<Pool>,
    wakeup: Option<Wakeup>,
    /// Per server: the slot, holding the connection kept between calls when `sticky`.
    slots: Vec<Arc<tokio::sync::Mutex<Option<mysql_async::Conn>>>>,
    /// Whether calls keep one connection of their own between calls (a session's: so that it
    /// holds one connection, not as many as the pool lets linger idle), instead of taking one
    /// from the pool per call.
    sticky: bool,
    /// Until when campaigns go as plain `campaign`: the account may not call
    /// `leader_election_campaign` (1370: granted before it existed), or the schema has none yet
    /// (1305). Tried again after [`PLAIN_CAMPAIGN_FOR`] (a grant re-run, an upgrade finished).
    plain_until: std::sync::Mutex<Option<Instant>>,
    /// Whether the fall back was logged (once per backend).
    plain_said: std::sync::atomic::AtomicBool,
    /// Per server: its pool's login gate ([`super::logins`]), which every connection of a plain
    /// elector goes through; none for a session's (sticky) backend, which keeps its own log.
    gates: Vec<Option<super::logins::Member>>,
    /// Whether the elector leads (its role, as the loop last set it): a leader's calls never
    /// wait for its pool's login backoff (step 6 of [`super::logins`]).
    leading: std::sync::atomic::AtomicBool,
}

/// How long campaigns go as plain `campaign` after `leader_election_campaign` was refused.
const PLAIN_CAMPAIGN_FOR: Duration = Duration::from_secs(60);

/// One call's future, borrowing its connection.
pub(crate) type CallFuture<'c, T> = std::pin::Pin<Box<dyn Future<Output = Result<T>> + Send + 'c>>;

/// How long a call may run on the server after the loop stopped waiting for it: every procedure
/// waits for a row lock at most 1 s (migration V6) and then fails, so a call that is merely
/// blocked ends within this; one that runs longer (a frozen network, a metadata lock) is ended
/// with `KILL QUERY` and its connection dropped. MySQL notices a lock wait's timeout up to a
/// second late (its checker wakes once a second): a blocked call there takes up to 2 s, and more
/// on a loaded server, hence 4 s (at 1.5 s, and once under the whole suite's load at 2.5 s, the
/// elector opened a connection to kill calls that were about to end, tests/elector.rs
/// `a_blocked_campaign_never_piles_up_connections` on MySQL: a kill adds a connection and a
/// statement to a server that is slow already). Leadership never waits for it: the loop's
/// deadline is its own.
const CALL_RUNS_OUT: Duration = Duration::from_millis(4_000);

impl Database {
    /// The backend of the servers `pools` (the first is the primary), with `wakeup` if any.
    /// Its connections go through the login gates of the pools ([`super::logins`]).
    pub(crate) fn new(pools: Vec<Pool>, wakeup: Option<Wakeup>) -> Self {
        let gates = pools.iter().map(|p| Some(super::logins::Member::of(p))).collect();
        Database::with(pools, wakeup, false, gates)
    }

    /// Like [`Database::new`], keeping one connection per server between calls: it is given
    /// back to the pool after any failure but a procedure's own refusal (see step 2 of
    /// [`Database::call`]), and the next call takes a new one. No login gate: a session says
    /// its incidents in a log of its own.
    pub(crate) fn sticky(pools: Vec<Pool>) -> Self {
        let gates = pools.iter().map(|_| None).collect();
        Database::with(pools, None, true, gates)
    }

    fn with(pools: Vec<Pool>, wakeup: Option<Wakeup>, sticky: bool, gates: Vec<Option<super::logins::Member>>) -> Self {
        let slots = pools.iter().map(|_| Arc::default()).collect();
        Database {
            pools,
            wakeup,
            slots,
            sticky,
            plain_until: std::sync::Mutex::new(None),
            plain_said: std::sync::atomic::AtomicBool::new(false),
            gates,
            leading: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Runs `call` on a connection of server `server`, one call at a time per elector and server:
    ///
    /// 1. Wait for the slot: a previous call the loop stopped waiting for may still run (below).
    /// 2. Take the slot's kept connection (a sticky backend's) or a pool connection (a plain
    ///    elector's through the pool's login gate, [`super::logins`]: at once, or the pool's
    ///    refusal without a login while its logins back off), and run
    ///    the call in a task of its own, bounded by max(request timeout, [`CALL_RUNS_OUT`]).
    /// 3. The loop may stop waiting sooner (its own time limit, its deadline): the task then goes
    ///    on to the call's end, and step 1 of the next call waits for it. So the server is never
    ///    left with a statement nobody waits for, and ending one takes no extra connection
    ///    except in the rare case of step 2's bound, where `KILL QUERY` ends it over a
    ///    connection opened for that and closed at once.
    pub(crate) async fn call<T, F>(&self, server: usize, config: &Arc<ElectorConfig>, call: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut mysql_async::Conn, Arc<ElectorConfig>) -> CallFuture<'c, T>
            + Send
            + 'static,
    {
        self.call_then(server, config, false, call).await
    }

    /// [`Database::call`]; with `keep`, the connection stays in the slot after a clean end even
    /// when the backend is not sticky, for the next call (which then gives it back to the pool
    /// as usual): two calls in a row on one connection, where taking a second from the pool
    /// before the first is back in it would leave the pool one connection larger.
    async fn call_then<T, F>(&self, server: usize, config: &Arc<ElectorConfig>, keep: bool, call: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut mysql_async::Conn, Arc<ElectorConfig>) -> CallFuture<'c, T>
            + Send
            + 'static,
    {
        let mut slot = self.slots[server].clone().lock_owned().await;
        let pool = self.pools[server].clone();
        let config = Arc::clone(config);
        let bound = config.request_timeout.max(CALL_RUNS_OUT);
        let sticky = self.sticky || keep;
        let gate = self.gates[server].as_ref().map(|m| m.gate().clone());
        let leading = self.leading.load(std::sync::atomic::Ordering::Relaxed);
        let task = tokio::spawn(async move {
            let (mut conn, guard) = match slot.take() {
                Some(conn) => {
                    let guard = KillOnDrop::of(&conn);
                    (conn, guard)
                }
                None => {
                    let conn = match &gate {
                        Some(gate) => gate.connect(&pool, config.retry_interval, leading, Some(config.request_timeout / 2)).await?,
                        None => pool.get_conn().await.map_err(|e| Error::from_pool(&pool, e))?,
                    };
                    let guard = KillOnDrop::of(&conn);
                    (conn, guard)
                }
            };
            match tokio::time::timeout(bound, call(&mut conn, config)).await {
                Ok(result) => {
                    guard.finished();
                    // A connection that broke during the call: say which server's.
                    let result = result.map_err(|e| e.at_server(Some(&crate::url::server_of(conn.opts()))));
                    // Kept (or given back to the pool as it is) only where nothing of the call
                    // can be left open on it: after an answer, or a refusal the procedure
                    // raised after ending its own transaction. After any other error (a
                    // statement killed mid-procedure skips its handler, leaving the
                    // procedure's transaction open with its locks) the next call's opening
                    // COMMIT could commit a half-done write: see `reset_on_return`.
                    let clean = match &result {
                        Ok(_) => true,
                        Err(e) => matches!(e, Error::NotLeader { .. } | Error::AccessDenied { .. } | Error::InvalidArgument { .. }),
                    };
                    if clean {
                        if sticky {
                            *slot = Some(conn);
                        }
                    } else if result.as_ref().is_err_and(|e| e.server_code().is_some_and(|c| c != 0)) {
                        // The server answered with an error packet (a lock wait's 1205, say; a
                        // lost or broken connection is Error::Connection, with no server code,
                        // and 0 is a malformed answer): the connection works. It is reset here,
                        // while this call still holds the slot, and kept for the next call.
                        // Given back to the pool to be reset there, it was not ready yet when
                        // the next call asked under load, and the pool opened another
                        // connection (CI62: a follower whose campaigns waited out a fenced row
                        // held 3 connections instead of 2).
                        match tokio::time::timeout(bound, conn.reset()).await {
                            Ok(Ok(true)) => *slot = Some(conn),
                            _ => reset_on_return(&mut conn),
                        }
                    } else {
                        reset_on_return(&mut conn);
                    }
                    result
                }
                // The guard, dropped unfinished, ends the statement on the server; the
                // connection is reset before anyone uses it again.
                Err(_) => {
                    drop(guard);
                    reset_on_return(&mut conn);
                    Err(Error::timeout(bound))
                }
            }
        });
        match task.await {
            Ok(result) => result,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => Err(Error::stopped("the call was cancelled (its runtime shut down)")),
        }
    }
}

impl Backend for Database {
    fn servers(&self) -> usize {
        self.pools.len()
    }

    /// `leader_election_campaign` with the held term; plain `campaign` for a while after the
    /// account was refused it (1370) or the schema had none (1305), said once at INFO.
    async fn campaign(&self, server: usize, config: &Arc<ElectorConfig>, held: u64) -> Result<Campaigned> {
        use std::sync::atomic::Ordering;
        let plain = self.plain_until.lock().unwrap_or_else(|e| e.into_inner()).is_some_and(|until| Instant::now() < until);
        if !plain {
            let result = self
                .call(server, config, move |conn, c| {
                    Box::pin(async move { procedures::campaign_holding(conn, &c.service_id, &c.node_id, c.lease, held).await })
                })
                .await;
            match result {
                Err(e) if matches!(e.server_code(), Some(1370 | 1305)) => {
                    *self.plain_until.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now() + PLAIN_CAMPAIGN_FOR);
                    if !self.plain_said.swap(true, Ordering::Relaxed) {
                        tracing::info!(service = %config.service_id, node = %config.node_id, error = %e,
                            "this account may not call leader_election_campaign (or the schema has none yet): campaigning with \
                             plain campaign, which cannot tell this process's term from another process's with the same node id \
                             (run `mysqlleader grant ACCOUNT --role ... --apply` again, and `mysqlleader install` if need be)");
                    }
                }
                other => return other.map(Campaigned::carried),
            }
        }
        self.call(server, config, |conn, c| {
            Box::pin(async move { procedures::campaign(conn, &c.service_id, &c.node_id, c.lease).await })
        })
        .await
        .map(|answer| Campaigned { answer, carried: false })
    }

    async fn current_leader(&self, server: usize, config: &Arc<ElectorConfig>) -> Result<CurrentLeader> {
        self.call(server, config, |conn, c| Box::pin(async move { procedures::current_leader(conn, &c.service_id).await }))
            .await
    }

    async fn resign(&self, server: usize, config: &Arc<ElectorConfig>) -> Result<Resign> {
        self.call(server, config, |conn, c| {
            Box::pin(async move { procedures::resign(conn, &c.service_id, &c.node_id).await })
        })
        .await
    }

    /// A `resign` whose connection the first campaign, which follows at once, takes over.
    async fn end_predecessor(&self, server: usize, config: &Arc<ElectorConfig>) -> Result<Resign> {
        self.call_then(server, config, true, |conn, c| {
            Box::pin(async move { procedures::resign(conn, &c.service_id, &c.node_id).await })
        })
        .await
    }

    async fn resign_to(&self, server: usize, config: &Arc<ElectorConfig>, to: &str) -> Result<Resign> {
        let to = to.to_string();
        self.call(server, config, move |conn, c| {
            Box::pin(async move { procedures::resign_to(conn, &c.service_id, &c.node_id, &to).await })
        })
        .await
    }

    fn set_role(&self, role: Role) {
        self.leading.store(role == Role::Leading, std::sync::atomic::Ordering::Relaxed);
        if let Some(w) = &self.wakeup {
            w.set_role(role);
        }
    }

    async fn woken(&self) {
        match &self.wakeup {
            Some(w) => w.woken().await,
            None => std::future::pending().await,
        }
    }

    fn watching(&self) -> bool {
        self.wakeup.as_ref().is_some_and(Wakeup::watching)
    }

    fn login_said(&self, server: usize, error: &Error) -> bool {
        self.gates.get(server).and_then(Option::as_ref).is_some_and(|m| m.gate().said(error))
    }
}

/// Marks a connection whose call may have left a transaction open on the server (a statement
/// killed mid-procedure) to be reset when it goes back to its pool (`COM_RESET_CONNECTION`,
/// before the pool hands it out again): the reset rolls back that transaction and releases its
/// locks. The pool's own clean-up would not: it rolls back only transactions begun through
/// mysql_async's API, and `pool_from_url` pools do not reset connections otherwise.
fn reset_on_return(conn: &mut mysql_async::Conn) {
    conn.reset_connection(true);
}

/// A guard that ends a call's statement on the server (`KILL QUERY`) if the call is dropped
/// before it finished ([`Database::call`]'s bound).
struct KillOnDrop {
    /// The options of the call's connection: the kill goes over a short-lived connection of
    /// its own ([`procedures::kill_query`]).
    opts: mysql_async::Opts,
    connection_id: u32,
    armed: bool,
}

impl KillOnDrop {
    /// The guard of a call on `conn`, armed.
    fn of(conn: &mysql_async::Conn) -> Self {
        KillOnDrop { opts: conn.opts().clone(), connection_id: conn.id(), armed: true }
    }

    /// The call finished (answered or failed): nothing to end.
    fn finished(mut self) {
        self.armed = false;
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (opts, id) = (self.opts.clone(), self.connection_id);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = procedures::kill_query(&opts, id).await {
                    tracing::debug!(connection = id, error = %e, "could not end an abandoned call");
                }
            });
        }
    }
}

/// Starts the task for real servers, with a supervisor that reports its end.
pub(super) fn spawn(
    config: Arc<ElectorConfig>,
    pools: Vec<Pool>,
    state: watch::Sender<State>,
    events: broadcast::Sender<Event>,
    commands: mpsc::UnboundedReceiver<Command>,
    metrics: Metrics,
) {
    let wakeup = config
        .wakeup_lock
        .then(|| Wakeup::start(pools[0].clone(), config.service_id.clone(), config.retry_interval));
    spawn_with(Database::new(pools, wakeup), config, state, events, commands, metrics);
}

/// Starts the task on any backend (the unit tests' seam), with its supervisor.
pub(super) fn spawn_with<B: Backend>(
    backend: B,
    config: Arc<ElectorConfig>,
    state: watch::Sender<State>,
    events: broadcast::Sender<Event>,
    commands: mpsc::UnboundedReceiver<Command>,
    metrics: Metrics,
) {
    let state = Arc::new(state);
    let task = Task {
        backend,
        timing: Timing::of(&config),
        config: config.clone(),
        server: 0,
        state: state.clone(),
        events: events.clone(),
        commands,
        rng: seed(),
        condition: None,
        condition_said: false,
        late_reported: false,
        metrics,
        pending: None,
        look_at: None,
        resign_owed: Some(Owed::Predecessor),
        held: 0,
    };
    let running = tokio::spawn(task.run());
    // The supervisor: if the task ends without having said so (a panic), say it for it.
    tokio::spawn(async move {
        let error = match running.await {
            Ok(()) => return,
            Err(e) if e.is_panic() => {
                let payload = e.into_panic();
                let what = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".to_string());
                Error::stopped(format!("the background task failed: {}", crate::error::redact(&what)))
            }
            Err(_) => Error::stopped("the background task was cancelled (its runtime shut down)"),
        };
        tracing::error!(service = %config.service_id, node = %config.node_id, error = %error, "elector stopped");
        let mut stopped_term = None;
        state.send_modify(|s| {
            if s.leading {
                stopped_term = Some(s.term);
                s.last_stop = Some((s.term, StopReason::Failed));
            }
            s.leading = false;
            s.valid_until = None;
            s.campaigning = false;
            s.running = false;
            s.last_error = Some(error.clone());
        });
        if let Some(term) = stopped_term {
            let _ = events.send(Event::StoppedLeading { term, reason: StopReason::Failed });
        }
        let _ = events.send(Event::ElectorStopped { error: Some(error) });
    });
}

/// Waits for `call`, unless a resign or a shutdown command comes first: then `None`, with the
/// command kept in `pending` for step 6 (so closing never waits for a call to a server that
/// hangs). Any other command that comes meanwhile is kept too, and the call awaited.
async fn call_or_command<F: Future>(
    call: F,
    commands: &mut mpsc::UnboundedReceiver<Command>,
    pending: &mut Option<Option<Command>>,
) -> Option<F::Output> {
    tokio::pin!(call);
    loop {
        tokio::select! {
            biased;
            out = &mut call => return Some(out),
            command = commands.recv(), if pending.is_none() => {
                let urgent = !matches!(command, Some(Command::Refused { .. }));
                *pending = Some(command);
                if urgent {
                    return None;
                }
            }
        }
    }
}

fn seed() -> u64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    t ^ (u64::from(std::process::id()) << 32) | 1
}

/// What a failure looked like, for logging once per change of condition.
type Condition = (ErrorKind, Option<u16>);

struct Task<B: Backend> {
    backend: B,
    config: Arc<ElectorConfig>,
    timing: Timing,
    /// The server calls go to; moves to the next on a transient failure.
    server: usize,
    state: Arc<watch::Sender<State>>,
    events: broadcast::Sender<Event>,
    commands: mpsc::UnboundedReceiver<Command>,
    rng: u64,
    /// The condition of the last failed call, `None` after a success.
    condition: Option<Condition>,
    /// Whether that failure was a refused login the pool's log said ([`Backend::login_said`]):
    /// its end is the pool's to say too.
    condition_said: bool,
    /// Whether an answer that came too late to lead on was reported already (once per elector).
    late_reported: bool,
    metrics: Metrics,
    /// A command that arrived while a call was in flight (see [`Task::call_or_command`]): handled
    /// at step 6 before waiting for anything else.
    pending: Option<Option<Command>>,
    /// When to call next instead of at once, once (set after a handover).
    look_at: Option<Instant>,
    /// A resign this node sends before its next campaign (step 1b), and why.
    resign_owed: Option<Owed>,
    /// The term this elector holds ([`Seat::held`]); every campaign carries it.
    held: u64,
}

/// Why a resign is owed before the next campaign (step 1b).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owed {
    /// The elector's first: a term a previous process with this node id may hold ends.
    Predecessor,
    /// A campaign of this elector, holding no term, timed out: had the server taken the seat for it
    /// after it stopped waiting, the seat would be held under this node id at a term the
    /// elector does not hold, led by nobody, and the elector would follow it as another
    /// process's until its lease ran out. The resign ends such a term (and changes nothing
    /// when the node holds none), so the next campaign takes the seat at once.
    Unanswered,
    /// An operator's handover took this node's seat (`decide`'s `acknowledge`): the resign,
    /// sent now that this node no longer acts as leader, acknowledges it, so the named node
    /// may take the seat at once (else it waits for this node's lease to run out).
    Acknowledgement,
}

impl<B: Backend> Task<B> {
    async fn run(mut self) {
        // A session's electors start and stop by the thousand: each is news only at DEBUG.
        if self.backend.incidents().is_some() {
            tracing::debug!(service = %self.config.service_id, node = %self.config.node_id, "elector started");
        } else {
            tracing::info!(service = %self.config.service_id, node = %self.config.node_id, "elector started");
        }
        loop {
            let campaigning = self.state.borrow().campaigning;
            // After a handover: the first look at the seat a little later, when the named node
            // has had time to take it (so this node learns who leads, not a vacant seat).
            let next = match self.look_at.take() {
                Some(at) => at,
                None if campaigning => self.campaign().await,
                None => self.observe().await,
            };
            // 5. Wait for a command, the step-down time, a wake-up, or the next call.
            let seat = self.seat();
            let step_down_at = seat.valid_until.filter(|_| seat.leading).map(|d| self.step_down_at(d));
            // A node that owes a handover's acknowledgement keeps its wake-up lock until it has
            // sent it: followers woken by its release before then would find the seat barred.
            let acknowledging = self.resign_owed == Some(Owed::Acknowledgement);
            let following = campaigning && !seat.leading && !acknowledging;
            self.backend.set_role(if !campaigning {
                Role::Idle
            } else if following {
                Role::Following { until: next }
            } else {
                Role::Leading
            });
            let pending = self.pending.take();
            let command = if let Some(command) = pending {
                Some(command)
            } else {
                let woken = async {
                    if following { self.backend.woken().await } else { std::future::pending().await }
                };
                let step_down = async {
                    match step_down_at {
                        Some(at) if at < next => sleep_until(at).await,
                        _ => std::future::pending().await,
                    }
                };
                tokio::select! {
                    biased;
                    command = self.commands.recv() => Some(command),
                    () = step_down => {
                        self.apply(Input::DeadlineReached);
                        None
                    }
                    () = woken => {
                        tracing::debug!(service = %self.config.service_id, "woken by the wake-up lock");
                        None
                    }
                    () = sleep_until(next) => None,
                }
            };
            // 6. Commands.
            match command {
                None => {}
                Some(Some(Command::Refused { term, reason })) => {
                    // A refusal of the current term: the next call (at once) learns who leads.
                    self.apply(Input::Refused { term, reason });
                }
                Some(Some(Command::Resign(reply))) => {
                    let limit = Instant::now() + self.config.request_timeout;
                    let result = self.resign(StopReason::Resigned, limit).await;
                    let _ = reply.send(result);
                }
                Some(Some(Command::Handover { to, reply })) => {
                    let limit = Instant::now() + self.config.request_timeout;
                    let result = self.handover(&to, limit).await;
                    if matches!(result, Ok(true)) {
                        self.look_at = Some(Instant::now() + self.timing.renew_retry());
                    }
                    let _ = reply.send(result);
                }
                Some(Some(Command::Shutdown { resign, done, deadline })) => {
                    // Bounded by the caller's deadline whatever the server does: the call in
                    // flight was let go already (`call_or_command`), and the resign gets what
                    // is left (the lease lapses when that is not enough).
                    let result = if resign {
                        self.resign(StopReason::Shutdown, deadline).await.map(|_| ())
                    } else {
                        self.apply(Input::Stop(StopReason::Shutdown));
                        Ok(())
                    };
                    self.finish(None);
                    let _ = done.send(result);
                    return;
                }
                Some(None) => {
                    // Every handle is gone without a shutdown command (Drop sends one).
                    self.apply(Input::Stop(StopReason::Shutdown));
                    self.finish(None);
                    return;
                }
            }
        }
    }

    /// Steps 1–4 for a campaigning node. Returns when to call next.
    async fn campaign(&mut self) -> Instant {
        // 1. A process that slept past its deadline stops leading before it sends anything.
        let seat = self.seat();
        if seat.leading && !seat.leads_at(Instant::now()) {
            self.apply(Input::DeadlineReached);
        }
        // 1b. The elector's first campaign is preceded by a `resign` of the seat, once: a process
        //     restarted with the same node id within its predecessor's lease would otherwise renew
        //     that lease at the same term, and the fencing token could not tell the two apart (a
        //     predecessor paused, not dead, that wakes with a transaction in flight would pass the
        //     fence of its successor). So is the first campaign after an operator's handover took
        //     the seat (`Owed::Acknowledgement`), and the first after a follower's campaign timed
        //     out (`Owed::Unanswered`). Until that resign succeeds the elector does not
        //     campaign; its failure counts as a failed campaign (retried after the retry interval).
        if let Some(owed) = self.resign_owed {
            match self.end_predecessor(owed).await {
                None => return Instant::now(),
                Some(Ok(())) => self.resign_owed = None,
                Some(Err((sent_at, e))) => {
                    let result = Err(e);
                    // Counted before it is told (state, FAILING event): whoever sees the failure
                    // sees it in the metrics too.
                    self.metrics.observe_campaign(sent_at.elapsed(), false);
                    self.note(&result);
                    return self.apply(Input::Campaigned { sent_at, result, watched: false, carried: true }).unwrap_or_else(Instant::now);
                }
            }
        }
        // 2. Send, bounded by the request timeout and, while leading, by the deadline: a renew in
        //    flight never outlives the deadline it would extend.
        let sent_at = Instant::now();
        let seat = self.seat();
        let wait = if seat.leading { self.config.request_timeout } else { self.backend.follower_wait(&self.config) };
        let mut limit = sent_at + wait;
        if let Some(deadline) = seat.valid_until {
            limit = limit.min(deadline);
        }
        let config = self.config.clone();
        let call = timeout_at(limit, self.backend.campaign(self.server, &config, self.held));
        let Some(result) = call_or_command(call, &mut self.commands, &mut self.pending).await else {
            // A resign or shutdown came first: the call goes on to its end on its own, and its
            // outcome, unknown, never extends the deadline.
            return Instant::now();
        };
        let (result, carried) = match result.unwrap_or_else(|_| Err(Error::timeout(limit - sent_at))) {
            Ok(Campaigned { answer, carried }) => (Ok(answer), carried),
            // Unused for a failure.
            Err(e) => (Err(e), true),
        };
        // Counted before it is told (state, FAILING event): whoever sees the failure sees it in
        // the metrics too (a test read the counter at 0 right after the FAILING event).
        self.metrics.observe_campaign(sent_at.elapsed(), result.is_ok());
        self.note(&result);
        if let Ok(c) = &result {
            self.report_late_answer(c, sent_at);
        }
        // A campaign that held no term and timed out may have taken the seat on the server after
        // this elector stopped waiting: resign before the next one (`Owed::Unanswered`). A
        // leader's renew, or a campaign that carried a term this elector held, at most renewed
        // that term, which the next campaign renews or finds ended.
        if !seat.leading
            && seat.held == 0
            && self.resign_owed.is_none()
            && self.backend.resigns_unanswered_campaigns()
            && result.as_ref().is_err_and(|e| e.kind() == crate::ErrorKind::Timeout)
        {
            self.resign_owed = Some(Owed::Unanswered);
        }
        // 3–4. Decide and publish. A renew that keeps this elector leading is followed by the
        //      next one when the backend says (never later than planned).
        let watched = self.backend.watching();
        let renewed = result.as_ref().is_ok_and(|c| c.is_leader);
        let decision = self.apply(Input::Campaigned { sent_at, result, watched, carried });
        match decision {
            Some(next) if renewed && self.seat().leading => self.backend.renew_at(next).min(next),
            _ => decision.unwrap_or_else(Instant::now),
        }
    }

    /// Step 1b, the owed `resign`: `None` when a resign or shutdown command came first; the
    /// failure with the instant the call was sent.
    async fn end_predecessor(&mut self, owed: Owed) -> Option<std::result::Result<(), (Instant, Error)>> {
        let config = self.config.clone();
        let sent_at = Instant::now();
        let limit = sent_at + config.request_timeout;
        let call = timeout_at(limit, self.backend.end_predecessor(self.server, &config));
        let result = call_or_command(call, &mut self.commands, &mut self.pending).await?;
        Some(match result.unwrap_or_else(|_| Err(Error::timeout(config.request_timeout))) {
            Ok(r) => {
                if r.resigned && owed == Owed::Unanswered {
                    tracing::info!(service = %config.service_id, node = %config.node_id, term = r.term,
                        "ended term {} that a campaign of this elector took after it had stopped waiting for the answer: \
                         the next campaign takes the seat", r.term);
                } else if r.resigned {
                    tracing::info!(service = %config.service_id, node = %config.node_id, term = r.term,
                        "ended term {} that an earlier process with this node id held: this process leads only at terms of its own", r.term);
                }
                Ok(())
            }
            Err(e) => Err((sent_at, e)),
        })
    }

    /// Steps 2–4 for a node that no longer campaigns: it only observes who leads.
    async fn observe(&mut self) -> Instant {
        let config = self.config.clone();
        let limit = Instant::now() + config.request_timeout;
        let call = timeout_at(limit, self.backend.current_leader(self.server, &config));
        let Some(result) = call_or_command(call, &mut self.commands, &mut self.pending).await else {
            return Instant::now();
        };
        let result = result.unwrap_or_else(|_| Err(Error::timeout(config.request_timeout)));
        self.note(&result);
        self.apply(Input::Observed { result }).unwrap_or_else(Instant::now)
    }

    /// Steps locally first (so nothing acts as leader once the handover can start), then ends
    /// the lease in the database, and stops campaigning.
    /// `limit` bounds the resign call (the request timeout, or what is left of a shutdown's).
    async fn resign(&mut self, reason: StopReason, limit: Instant) -> Result<bool> {
        let was_leading = self.seat().leading;
        self.apply(Input::Stop(reason));
        self.state.send_modify(|s| s.campaigning = false);
        let config = self.config.clone();
        let started = Instant::now();
        let result = match timeout_at(limit, self.backend.resign(self.server, &config)).await {
            Ok(r) => r,
            Err(_) => Err(Error::timeout(limit.saturating_duration_since(started))),
        };
        // Only now, with the seat vacated in the database, wake the followers.
        self.backend.set_role(Role::Idle);
        self.note(&result);
        match result {
            Ok(r) => {
                if r.resigned {
                    self.apply(Input::Resigned { term: r.term });
                }
                Ok(r.resigned)
            }
            Err(e) => {
                // Worth a warning only from a node that led: a follower's resign has no lease to end.
                // (A session's log counts the failed call with the others.)
                if was_leading && self.backend.incidents().is_none() {
                    tracing::warn!(service = %config.service_id, node = %config.node_id, error = %e, "resign failed; the lease will lapse");
                } else {
                    tracing::debug!(service = %config.service_id, node = %config.node_id, error = %e, "resign failed (this node did not lead)");
                }
                Err(e)
            }
        }
    }

    /// Steps locally first, then ends the term in the database with the seat reserved for `to`
    /// (`resign_to`), then lets go of the wake-up lock so that `to` wakes; keeps campaigning as a
    /// follower. `limit` bounds the call. Returns whether this node led.
    async fn handover(&mut self, to: &str, limit: Instant) -> Result<bool> {
        let was_leading = self.seat().leading;
        self.apply(Input::Stop(StopReason::HandedOver));
        let config = self.config.clone();
        let started = Instant::now();
        let result = match timeout_at(limit, self.backend.resign_to(self.server, &config, to)).await {
            Ok(r) => r,
            Err(_) => Err(Error::timeout(limit.saturating_duration_since(started))),
        };
        // Only now, with the term ended in the database, wake the followers (the named one takes
        // the seat; the others find it reserved).
        self.backend.set_role(Role::Following { until: Instant::now() + self.timing.retry_interval });
        self.note(&result);
        match result {
            Ok(r) => {
                if r.resigned {
                    self.apply(Input::HandedOver { term: r.term });
                    tracing::info!(service = %config.service_id, node = %config.node_id, term = r.term, to, "handed over");
                }
                Ok(r.resigned)
            }
            Err(e) => {
                if was_leading {
                    tracing::warn!(service = %config.service_id, node = %config.node_id, error = %e, to,
                        "handover failed; this node stepped down and its lease will lapse");
                }
                Err(e)
            }
        }
    }

    /// The task ends: say so (state, then the last event).
    fn finish(&mut self, error: Option<Error>) {
        self.state.send_modify(|s| {
            s.campaigning = false;
            s.running = false;
        });
        if self.backend.incidents().is_some() {
            tracing::debug!(service = %self.config.service_id, node = %self.config.node_id, "elector stopped");
        } else {
            tracing::info!(service = %self.config.service_id, node = %self.config.node_id, "elector stopped");
        }
        let _ = self.events.send(Event::ElectorStopped { error });
    }

    /// 3–4. Runs the decision on `input` and publishes it: one state update, then the events.
    /// Returns when to call next, if the decision says.
    fn apply(&mut self, input: Input) -> Option<Instant> {
        let now = Instant::now();
        let random = self.random();
        let Decision { seat, events, next, acknowledge } = decide(&self.seat(), input, now, &self.config.node_id, &self.timing, random);
        if acknowledge {
            self.resign_owed = Some(Owed::Acknowledgement);
        }
        self.held = seat.held;
        let stop = events.iter().rev().find_map(|e| match e {
            Event::StoppedLeading { term, reason } => Some((*term, *reason)),
            _ => None,
        });
        self.metrics.observe_leading(seat.leading, seat.term);
        self.state.send_modify(|s| {
            s.leading = seat.leading;
            s.leader_id = seat.leader_id;
            s.term = seat.term;
            s.valid_until = seat.valid_until;
            if stop.is_some() {
                s.last_stop = stop;
            }
        });
        for event in events {
            match (&event, self.backend.incidents()) {
                (Event::StartedLeading { .. }, Some(log)) => log.started_leading(&self.config.service_id),
                (Event::StoppedLeading { reason, .. }, Some(log)) => log.stopped_leading(&self.config.service_id, *reason),
                (Event::StartedLeading { term, .. }, None) => {
                    tracing::info!(service = %self.config.service_id, node = %self.config.node_id, term, "started leading")
                }
                // Losing a term for lack of a renew (the database unreachable or slow) or a failure
                // is a warning; a resign, handover, shutdown or another node's takeover is news.
                (Event::StoppedLeading { term, reason: reason @ (StopReason::DeadlinePassed | StopReason::Failed) }, None) => {
                    tracing::warn!(service = %self.config.service_id, node = %self.config.node_id, term, ?reason, "stopped leading")
                }
                (Event::StoppedLeading { term, reason }, None) => {
                    tracing::info!(service = %self.config.service_id, node = %self.config.node_id, term, ?reason, "stopped leading")
                }
                _ => {}
            }
            let _ = self.events.send(event);
        }
        next
    }

    /// Records a call's outcome in the state (last error, last success), logs a failure once
    /// per change of condition (a failed login, an unreachable server, a missing schema), and
    /// moves to the next server after a transient failure.
    fn note<T>(&mut self, result: &Result<T>) {
        match result {
            Ok(_) => {
                if let Some(log) = self.backend.incidents() {
                    self.condition = None;
                    log.call_succeeded();
                } else if self.condition.take().is_some() {
                    if self.condition_said {
                        tracing::debug!(service = %self.config.service_id, node = %self.config.node_id, "calls succeed again");
                    } else {
                        tracing::info!(service = %self.config.service_id, node = %self.config.node_id, "calls succeed again");
                    }
                }
                self.condition_said = false;
                self.state.send_modify(|s| {
                    s.last_error = None;
                    s.last_ok = Some(Instant::now());
                });
            }
            Err(e) => {
                // A call that times out or loses its connection while another failure goes on
                // (the pool's logins refused, the server down) is part of that incident, not a
                // new one: the burst of calls that follows a mended outage can time out on a
                // loaded machine (CI56: 50 electors each logged a warning and an INFO line after
                // the pool's password was mended). It keeps the condition going on.
                let condition = match self.condition {
                    Some(going_on) if matches!(e.kind(), ErrorKind::Timeout | ErrorKind::Connection) => going_on,
                    _ => (e.kind(), e.server_code()),
                };
                let changed = self.condition != Some(condition);
                let said = self.backend.incidents().is_none() && self.backend.login_said(self.server, e);
                if let Some(log) = self.backend.incidents() {
                    log.call_failed(e);
                } else if said {
                    // One line for every elector on the pool: the pool's log said it.
                    tracing::debug!(service = %self.config.service_id, node = %self.config.node_id, error = %e,
                                    "election call failed again: the pool's logins are refused (said once for the pool)");
                } else if changed && e.is_permanent() {
                    tracing::error!(service = %self.config.service_id, node = %self.config.node_id, error = %e,
                        "election call failed, and retrying cannot fix it: this node cannot lead until the set-up is mended");
                } else if changed {
                    tracing::warn!(service = %self.config.service_id, node = %self.config.node_id, error = %e, "election call failed");
                } else {
                    tracing::debug!(service = %self.config.service_id, error = %e, "election call failed again");
                }
                self.condition = Some(condition);
                // Said by the pool once is said for the whole condition: a repeat taken in after
                // the pool's refusal ended (a loaded machine, past `logins::ENDED_LATELY`) must
                // not make its end an INFO line of its own (CI46: 3 of 50 electors did).
                self.condition_said = if changed { said } else { self.condition_said || said };
                self.state.send_modify(|s| s.last_error = Some(e.clone()));
                if changed && e.is_permanent() {
                    let _ = self.events.send(Event::Failing { error: e.clone() });
                }
                if e.is_transient() && self.backend.servers() > 1 {
                    self.server = (self.server + 1) % self.backend.servers();
                    tracing::info!(service = %self.config.service_id, server = self.server, "moving to the next server");
                }
            }
        }
    }

    /// A seat won by an answer that came back after the deadline it would set cannot be led:
    /// the lease is too short for this server's round trip. Says so once, with the measurement.
    fn report_late_answer(&mut self, c: &Campaign, sent_at: Instant) {
        let round_trip = sent_at.elapsed();
        if c.is_leader && !self.late_reported && round_trip + self.config.drift_margin >= c.lease_remaining {
            self.late_reported = true;
            tracing::warn!(service = %self.config.service_id, node = %self.config.node_id,
                round_trip_ms = round_trip.as_millis() as u64, lease_ms = self.config.lease.as_millis() as u64,
                "won the seat, but the answer took longer than the lease left: this node cannot lead with this lease \
                 on this server; use a lease of at least 10 times the round trip");
        }
    }

    fn seat(&self) -> Seat {
        let s = self.state.borrow();
        Seat { leading: s.leading, leader_id: s.leader_id.clone(), term: s.term, valid_until: s.valid_until, held: self.held }
    }

    /// When the task steps down for a deadline: a little before it (at most 5 ms, at most the
    /// drift margin), so that the StoppedLeading event lands no later than the deadline even
    /// with a late timer. `is_leader()` itself is exact: it compares with the deadline.
    fn step_down_at(&self, deadline: Instant) -> Instant {
        let early = self.config.drift_margin.min(Duration::from_millis(5));
        deadline.checked_sub(early).unwrap_or(deadline)
    }

    /// Uniform in [0, 1): xorshift64*, enough to spread followers apart.
    fn random(&mut self) -> f64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}
