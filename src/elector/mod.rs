//! The elector: one node's part in the election of one service, kept alive by a background
//! task that campaigns for the seat, renews it while it holds it, and steps down by its local
//! deadline whenever a renew fails or comes late.
//!
//! Three parts: this module is the public handle (builder, [`State`], [`Event`],
//! [`StopReason`], [`WaitOutcome`]); `task` is the loop that talks to the database; `decide` is
//! the one pure decision: (what this node knows, the outcome of a call, now) → (what it knows
//! now, the events, when to call next). Beside them, `logins` is what the electors of one pool
//! share: one login backoff and one log line per refused login, not one per elector.
//!
//! The loop, step by step (the same numbers mark the code in `task.rs`):
//! 1. **Before sending**: a node that woke past its local deadline (a paused process, a
//!    starved VM) steps down first, before it sends anything.
//!    Before its first campaign (once), an elector resigns its seat: a term a previous process
//!    with this node id still holds ends, so this process leads only at terms of its own and its
//!    predecessor's fence fails. It does not campaign until that resign has succeeded. So it
//!    does after an operator's handover took its seat (step 3): that resign, sent once it has
//!    stepped down, is the acknowledgement that lets the named node take the seat.
//! 2. **Send** one call, timing it from `sent_at = Instant::now()` (monotonic), taken *before*
//!    the send: `campaign` while campaigning — bounded by `request_timeout` and, while leading, by
//!    the current local deadline — else `current_leader` (an elector that resigned only observes).
//! 3. **Decide** (`decide::decide`): on `is_leader = 1` the new deadline is
//!    `sent_at + lease_remaining - drift_margin`, where `lease_remaining` is what the database
//!    measured on its own clock, and the next renew is due at `sent_at + renew_interval`; another
//!    leader means follow it and look again after the (jittered) retry interval, never later than
//!    its lease can end; an error or timeout never extends the deadline (a leader retries after
//!    renew_interval/4, a follower after the retry interval). Its own term found ended and the
//!    seat vacant means an operator's handover: step down, and owe the acknowledgement (1),
//!    sent at once while this node still holds its wake-up lock (let go only after it).
//! 4. **Publish**: one state update (so a watcher never sees a half-made change), then the
//!    events in the order they happened.
//! 5. **Wait** for the first of: a command (6); the step-down time (the deadline, at most 5 ms
//!    early) → step down, then campaign at once; a wake-up from the wake-up lock (a follower
//!    whose leader resigned or vanished); a refusal of this node's term reported by its own
//!    fenced transaction → step down, then campaign at once; the next call's time → 1.
//! 6. **Commands**: `resign` steps down locally first, then ends the lease in the database and
//!    stops campaigning (the node keeps observing); `handover` steps down locally first, then
//!    ends the term with the seat reserved for the named node (`resign_to`), lets go of the
//!    wake-up lock, and keeps campaigning, its next call a quarter renew interval later (by then
//!    the named node leads); `shutdown` does the same (resigning when
//!    `resign_on_drop`), publishes [`Event::ElectorStopped`] and ends the task.
//!
//! If the task ends for any other reason (a panic), a supervisor publishes that: not leading, not
//! campaigning, the error in [`State::last_error`], [`StopReason::Failed`] and
//! [`Event::ElectorStopped`]; the handle's calls then fail with [`Error::Stopped`].

mod decide;
pub(crate) mod logins;
pub(crate) mod task;
pub(crate) mod wakeup;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mysql_async::Pool;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::time::{sleep_until, timeout, Instant};

use crate::config::ElectorConfig;
use crate::error::{Error, Result};

/// What this node knows of the election, as of its last call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    /// Whether this node led when the state was published. Use [`Elector::is_leader`] to act:
    /// it also checks the deadline at the moment it is called.
    pub leading: bool,
    /// The leader seen last (this node while leading); `None` when the seat is vacant.
    pub leader_id: Option<String>,
    /// The term seen last (the fencing token of this node's leadership while leading).
    pub term: u64,
    /// While leading: the monotonic instant at which this node stops counting itself leader.
    pub valid_until: Option<Instant>,
    /// Whether the elector still campaigns (false after `resign` or shutdown).
    pub campaigning: bool,
    /// The error of the last call, if it failed; after the task died, why.
    pub last_error: Option<Error>,
    /// When the last call succeeded (monotonic); `None` before the first success.
    pub last_ok: Option<Instant>,
    /// The last term this node stopped leading, and why.
    pub last_stop: Option<(u64, StopReason)>,
    /// Whether the background task still runs (false after shutdown, or when it died).
    pub running: bool,
}

impl State {
    fn initial() -> Self {
        State {
            leading: false,
            leader_id: None,
            term: 0,
            valid_until: None,
            campaigning: true,
            last_error: None,
            last_ok: None,
            last_stop: None,
            running: true,
        }
    }

    /// Leading, and the deadline has not passed at `now`.
    pub fn leads_at(&self, now: Instant) -> bool {
        self.leading && self.valid_until.is_some_and(|d| now < d)
    }

    /// How much longer, from `now`, this node may act as leader without another renew; zero
    /// when it does not lead.
    pub fn valid_for(&self, now: Instant) -> Duration {
        match self.valid_until {
            Some(deadline) if self.leads_at(now) => deadline - now,
            _ => Duration::ZERO,
        }
    }
}

/// Why a node stopped leading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// A call showed another node holding the seat (forced out, or the lease lapsed and was taken).
    LostSeat,
    /// No renew succeeded before the local deadline (failed, slow or lost calls).
    DeadlinePassed,
    /// This node resigned.
    Resigned,
    /// The elector was shut down or dropped.
    Shutdown,
    /// The elector's background task failed (see [`State::last_error`]).
    Failed,
    /// The term ended by a handover: [`Elector::handover`] on this node, or an operator's
    /// `handover` seen at the next renew. The seat is reserved for the named node; this node
    /// goes on campaigning as a follower.
    HandedOver,
}

impl StopReason {
    /// Why a node stops leading when the database refused its term with `error`: `HandedOver`
    /// for the refusal of a term an operator's handover ended (error 31004), `LostSeat` for any
    /// other [`Error::NotLeader`]; `None` for every other error (not a refusal of the term).
    pub fn of_refusal(error: &Error) -> Option<StopReason> {
        match error {
            Error::NotLeader { handed_over: true, .. } => Some(StopReason::HandedOver),
            Error::NotLeader { .. } => Some(StopReason::LostSeat),
            _ => None,
        }
    }

    /// The reason in snake case, as logs, JSON and the bindings spell it: `lost_seat`,
    /// `deadline_passed`, `resigned`, `shutdown`, `failed`.
    pub fn name(self) -> &'static str {
        match self {
            StopReason::LostSeat => "lost_seat",
            StopReason::DeadlinePassed => "deadline_passed",
            StopReason::Resigned => "resigned",
            StopReason::Shutdown => "shutdown",
            StopReason::Failed => "failed",
            StopReason::HandedOver => "handed_over",
        }
    }
}

/// How [`Elector::wait_for_leadership`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitOutcome {
    /// This node leads (by its local deadline, at the moment of answering).
    Leading,
    /// The time limit passed first.
    TimedOut,
    /// The node no longer campaigns (it resigned, was shut down, or its task failed), so it
    /// will not lead without a new elector.
    NotCampaigning,
    /// The elector's last call failed with an error retrying cannot fix
    /// ([`Error::is_permanent`]: a refused login, a missing grant, the schema not installed, a
    /// service outside the account's patterns): [`State::last_error`] says which. The elector
    /// keeps trying (the set-up may be mended meanwhile), but will not lead until it is.
    Failed,
}

/// A change of leadership, as this node observed it, in the order it observed them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// This node became leader at `term`; it leads until `valid_until` unless renewed.
    StartedLeading { term: u64, valid_until: Instant },
    /// This node stopped leading `term`.
    StoppedLeading { term: u64, reason: StopReason },
    /// A different leader (or a vacant seat: `None`) or a new term was seen.
    LeaderChanged { leader_id: Option<String>, term: u64 },
    /// The background task ended: `None` after a shutdown, the error when it failed. Last event.
    ElectorStopped { error: Option<Error> },
    /// The elector's calls fail with an error retrying cannot fix ([`Error::is_permanent`]):
    /// sent once per change of condition. The elector keeps trying; it leads once the set-up
    /// is mended.
    Failing { error: Error },
}

enum Command {
    Resign(oneshot::Sender<Result<bool>>),
    /// Hand the seat over to the node `to` (it leads next); answers whether this node led.
    Handover { to: String, reply: oneshot::Sender<Result<bool>> },
    /// Stop; resign first when `resign`, giving up on the server at `deadline`.
    Shutdown { resign: bool, done: oneshot::Sender<Result<()>>, deadline: Instant },
    /// This node's fenced transaction was refused at `term` (SQLSTATE 45001); `reason`:
    /// `HandedOver` when an operator's handover ended the term, else `LostSeat`.
    Refused { term: u64, reason: StopReason },
}

/// A channel to an elector's task for a fenced transaction that outlives the borrow of the
/// elector: tells it that the database refused its term.
#[derive(Clone)]
pub(crate) struct RefusalLink {
    commands: mpsc::UnboundedSender<Command>,
    state: watch::Receiver<State>,
}

impl RefusalLink {
    /// When the elector still leads at `term` it steps down at once, for `reason` (see
    /// [`StopReason::of_refusal`]); resolves when it no longer reports leading at `term` (see
    /// [`Elector::refused`]).
    pub(crate) async fn refused(&self, term: u64, reason: StopReason) -> StopReason {
        // A refusal of another term than the one led now changes nothing, and costs no call.
        let leads_at_term = {
            let state = self.state.borrow();
            state.leading && state.term == term
        };
        if leads_at_term {
            let _ = self.commands.send(Command::Refused { term, reason });
        }
        term_ended(self.state.clone(), term).await
    }
}

/// [`Elector::wait_for_leadership`] on a receiver of the state: the C ABI waits with it without
/// holding the elector itself (so that freeing it is never blocked by a waiter).
pub(crate) async fn wait_for_leadership(mut rx: watch::Receiver<State>, limit: Option<Duration>) -> WaitOutcome {
    let wait = async move {
        loop {
            {
                let state = rx.borrow_and_update();
                if state.leads_at(Instant::now()) {
                    return WaitOutcome::Leading;
                }
                if !state.campaigning || !state.running {
                    return WaitOutcome::NotCampaigning;
                }
                if state.last_error.as_ref().is_some_and(Error::is_permanent) {
                    return WaitOutcome::Failed;
                }
            }
            if rx.changed().await.is_err() {
                return WaitOutcome::NotCampaigning;
            }
        }
    };
    match limit {
        Some(limit) => timeout(limit, wait).await.unwrap_or(WaitOutcome::TimedOut),
        None => wait.await,
    }
}

/// [`Elector::term_ended`] on a receiver of the state.
pub(crate) async fn term_ended(mut rx: watch::Receiver<State>, term: u64) -> StopReason {
    loop {
        let deadline = {
            let state = rx.borrow_and_update();
            if !(state.leading && state.term == term) {
                return match state.last_stop {
                    Some((t, reason)) if t == term => reason,
                    _ if !state.running => StopReason::Failed,
                    _ => StopReason::LostSeat,
                };
            }
            match state.valid_until {
                Some(d) if Instant::now() < d => d,
                _ => return StopReason::DeadlinePassed,
            }
        };
        tokio::select! {
            changed = rx.changed() => if changed.is_err() { return StopReason::Failed },
            _ = sleep_until(deadline) => return StopReason::DeadlinePassed,
        }
    }
}

/// Builds an [`Elector`]; see [`ElectorConfig`] for every value and its default.
///
/// Intervals that are not set are derived from the lease by [`ElectorConfig::with_lease`].
#[must_use]
#[derive(Clone)]
pub struct ElectorBuilder {
    pools: Vec<Pool>,
    service_id: String,
    node_id: Option<String>,
    lease: Duration,
    renew_interval: Option<Duration>,
    retry_interval: Option<Duration>,
    retry_jitter: Option<f64>,
    request_timeout: Option<Duration>,
    drift_margin: Option<Duration>,
    resign_on_drop: bool,
    wakeup_lock: bool,
}

impl ElectorBuilder {
    pub fn node_id(mut self, node_id: impl Into<String>) -> Self { self.node_id = Some(node_id.into()); self }
    pub fn lease(mut self, lease: Duration) -> Self { self.lease = lease; self }
    pub fn renew_interval(mut self, d: Duration) -> Self { self.renew_interval = Some(d); self }
    pub fn retry_interval(mut self, d: Duration) -> Self { self.retry_interval = Some(d); self }
    /// A fraction from 0 (no jitter) to below 1.
    pub fn retry_jitter(mut self, fraction: f64) -> Self { self.retry_jitter = Some(fraction); self }
    pub fn request_timeout(mut self, d: Duration) -> Self { self.request_timeout = Some(d); self }
    pub fn drift_margin(mut self, d: Duration) -> Self { self.drift_margin = Some(d); self }
    pub fn resign_on_drop(mut self, yes: bool) -> Self { self.resign_on_drop = yes; self }
    /// Whether to use the wake-up lock (see `wakeup_lock` in [`ElectorConfig`]).
    pub fn wakeup_lock(mut self, yes: bool) -> Self { self.wakeup_lock = yes; self }
    /// More servers of one cluster (Galera) for the same election: when a call to the current
    /// server fails with a connection or cluster error, the next one is tried.
    pub fn fallback_servers(mut self, pools: impl IntoIterator<Item = Pool>) -> Self {
        self.pools.extend(pools);
        self
    }

    /// The servers, the primary first.
    pub(crate) fn pools(&self) -> Vec<Pool> {
        self.pools.clone()
    }

    /// The validated configuration.
    pub fn config(&self) -> Result<ElectorConfig> {
        let defaults = ElectorConfig::with_lease(self.service_id.clone(), self.lease);
        let mut config = ElectorConfig {
            node_id: self.node_id.clone().unwrap_or(defaults.node_id.clone()),
            renew_interval: self.renew_interval.unwrap_or(defaults.renew_interval),
            retry_interval: self.retry_interval.unwrap_or(defaults.retry_interval),
            request_timeout: self.request_timeout.unwrap_or(defaults.request_timeout),
            drift_margin: self.drift_margin.unwrap_or(defaults.drift_margin),
            resign_on_drop: self.resign_on_drop,
            wakeup_lock: self.wakeup_lock,
            ..defaults
        };
        if let Some(jitter) = self.retry_jitter {
            if !(0.0..1.0).contains(&jitter) {
                return Err(Error::invalid("retry_jitter", format!("retry_jitter must be at least 0 and below 1, got {jitter}")));
            }
            config.retry_jitter_permille = (jitter * 1000.0).round().min(999.0) as u32;
        }
        config.validate()?;
        Ok(config)
    }

    /// Validates the configuration and starts the background task on the current tokio runtime.
    pub fn start(self) -> Result<Elector> {
        let config = self.config()?;
        Elector::start_with(self.pools, config)
    }
}

/// One node's membership in one service's election. Cheap to query from any thread.
///
/// ```no_run
/// # async fn demo() -> mysqlleader::Result<()> {
/// use std::time::Duration;
/// let pool = mysqlleader::pool_from_url("mysql://app:secret@127.0.0.1:3306/app")?;
/// let elector = mysqlleader::Elector::builder(pool, "billing")
///     .lease(Duration::from_secs(10))
///     .start()?;
/// elector.wait_for_leadership(None).await;
/// while elector.is_leader() {
///     // do the leader's work, fencing database writes with the term:
///     let term = elector.term();
///     # let _ = term; break;
/// }
/// elector.shutdown().await?; // resigns: another node takes over at once
/// # Ok(()) }
/// ```
pub struct Elector {
    config: Arc<ElectorConfig>,
    state: watch::Receiver<State>,
    events: broadcast::Sender<Event>,
    commands: mpsc::UnboundedSender<Command>,
    metrics: crate::metrics::Metrics,
}

impl Elector {
    /// Starts building an elector for `service_id` that talks to the database of `pool`.
    pub fn builder(pool: Pool, service_id: impl Into<String>) -> ElectorBuilder {
        ElectorBuilder {
            pools: vec![pool],
            service_id: service_id.into(),
            node_id: None,
            lease: crate::config::DEFAULT_LEASE,
            renew_interval: None,
            retry_interval: None,
            retry_jitter: None,
            request_timeout: None,
            drift_margin: None,
            resign_on_drop: true,
            wakeup_lock: true,
        }
    }

    /// Starts an elector from a complete configuration (validated here).
    pub fn start_with(pools: Vec<Pool>, config: ElectorConfig) -> Result<Elector> {
        Self::start_subscribed(pools, config).map(|(elector, _)| elector)
    }

    /// Like [`Elector::start_with`], and also returns a receiver of [`Elector::events`] that was
    /// subscribed before the background task started, so it misses no event (the first
    /// `StartedLeading` included).
    pub fn start_subscribed(pools: Vec<Pool>, config: ElectorConfig) -> Result<(Elector, broadcast::Receiver<Event>)> {
        config.validate()?;
        if pools.is_empty() {
            return Err(Error::invalid("servers", "at least one server is needed"));
        }
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|_| Error::usage("Elector::start must be called inside a tokio runtime"))?;
        let _guard = handle.enter();
        Ok(Self::spawn(config, |config, state, events, commands, metrics| {
            task::spawn(config, pools, state, events, commands, metrics)
        }))
    }

    /// Starts an elector whose calls go to `backend` (a session's), with a receiver of its
    /// events subscribed before its task started. `config` must be valid; inside a runtime.
    pub(crate) fn start_on<B: task::Backend>(backend: B, config: ElectorConfig) -> (Elector, broadcast::Receiver<Event>) {
        Self::spawn(config, |config, state, events, commands, metrics| {
            task::spawn_with(backend, config, state, events, commands, metrics)
        })
    }

    /// The handle's half of an elector, and `start` to start its task with the other half.
    fn spawn(
        config: ElectorConfig,
        start: impl FnOnce(Arc<ElectorConfig>, watch::Sender<State>, broadcast::Sender<Event>, mpsc::UnboundedReceiver<Command>, crate::metrics::Metrics),
    ) -> (Elector, broadcast::Receiver<Event>) {
        let config = Arc::new(config);
        let (state_tx, state_rx) = watch::channel(State::initial());
        let (events, first_subscriber) = broadcast::channel(256);
        let (commands, command_rx) = mpsc::unbounded_channel();
        let metrics = crate::metrics::Metrics::new();
        start(config.clone(), state_tx, events.clone(), command_rx, metrics.clone());
        (Elector { config, state: state_rx, events, commands, metrics }, first_subscriber)
    }

    /// What a session keeps of each of its electors, to shut it down with the session.
    pub(crate) fn stopper(&self) -> Stopper {
        Stopper { commands: self.commands.clone(), resign: self.config.resign_on_drop, state: self.state.clone(), metrics: self.metrics.clone() }
    }

    pub fn config(&self) -> &ElectorConfig { &self.config }
    pub fn service_id(&self) -> &str { &self.config.service_id }
    pub fn node_id(&self) -> &str { &self.config.node_id }

    /// True only while this node leads *and* its local deadline has not passed at this very
    /// moment, so a process that was paused past its deadline sees `false` on waking, before the
    /// background task had a chance to run.
    pub fn is_leader(&self) -> bool {
        self.state.borrow().leads_at(Instant::now())
    }

    /// The term seen last: while [`is_leader`](Self::is_leader), the fencing token to pass to
    /// `assert_leader` or to stamp on writes.
    pub fn term(&self) -> u64 { self.state.borrow().term }

    /// The leader seen last (`None` when the seat was vacant).
    pub fn leader_id(&self) -> Option<String> { self.state.borrow().leader_id.clone() }

    /// How much longer this node may act as leader without another renew; zero when not leading.
    pub fn valid_for(&self) -> Duration {
        self.state.borrow().valid_for(Instant::now())
    }

    /// A snapshot of the state.
    pub fn state(&self) -> State { self.state.borrow().clone() }

    /// A `watch` of the state: changes on every transition and on every renew.
    pub fn watch(&self) -> watch::Receiver<State> { self.state.clone() }

    /// The events from now on: started leading, stopped leading, leader changed.
    pub fn events(&self) -> broadcast::Receiver<Event> { self.events.subscribe() }

    /// Waits until this node leads, `limit` passes, the node no longer campaigns (it resigned,
    /// was shut down, or its task failed), or its calls fail with an error retrying cannot fix
    /// ([`WaitOutcome::Failed`]: at once when the last call failed so); `None` waits without a
    /// time limit.
    pub async fn wait_for_leadership(&self, limit: Option<Duration>) -> WaitOutcome {
        wait_for_leadership(self.state.clone(), limit).await
    }

    /// Resolves when this node no longer leads at `term`, and says why; at once when it does
    /// not lead at `term` now. A deadline that passes with no renew ends the term by itself.
    pub async fn term_ended(&self, term: u64) -> StopReason {
        term_ended(self.state.clone(), term).await
    }

    /// This elector's metrics (see [`crate::metrics`]).
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.metrics
    }

    /// The metrics in the Prometheus text format, with the leading gauge exact at this moment.
    pub fn metrics_text(&self) -> String {
        self.metrics.render(&self.config.service_id, self.is_leader())
    }

    /// True while the background task runs and its last call succeeded within one lease: what
    /// a `/healthz` endpoint reports.
    pub fn is_healthy(&self) -> bool {
        let state = self.state.borrow();
        state.running && state.last_ok.is_some_and(|t| t.elapsed() <= self.config.lease)
    }

    /// Tells the elector that the database refused its term (a [`Error::NotLeader`] from
    /// `assert_leader` in a fenced transaction): it steps down at once, without waiting for its
    /// next renew. Any other error is ignored. [`Elector::fence`] steps down itself (and waits for it:
    /// see [`Elector::refused`]).
    pub fn note_refusal(&self, error: &Error, term: u64) {
        if let Some(reason) = StopReason::of_refusal(error) {
            let _ = self.commands.send(Command::Refused { term, reason });
        }
    }

    /// Tells the elector that the database refused this node's `term` (SQLSTATE 45001 from an
    /// `assert_leader` the application ran on a connection of its own): when it still leads at
    /// `term` it steps down at once (reason `LostSeat`) and its next call, sent at once, learns
    /// who leads. Resolves when the elector no longer reports leading at `term` — at once when it
    /// does not lead at `term` now, else as soon as its task has taken the refusal in (after
    /// a call already in flight, which is bounded by the request timeout).
    pub async fn refused(&self, term: u64) -> StopReason {
        self.refusal_link().refused(term, StopReason::LostSeat).await
    }

    /// [`Elector::refused`] for the refusal `error` (a [`Error::NotLeader`]): the elector stops
    /// leading for [`StopReason::HandedOver`] when an operator's handover ended the term, else
    /// for `LostSeat`.
    async fn refused_by(&self, error: &Error, term: u64) -> StopReason {
        let reason = StopReason::of_refusal(error).unwrap_or(StopReason::LostSeat);
        self.refusal_link().refused(term, reason).await
    }

    /// What a fenced transaction keeps of this elector, to tell it of a refusal.
    pub(crate) fn refusal_link(&self) -> RefusalLink {
        RefusalLink { commands: self.commands.clone(), state: self.state.clone() }
    }

    /// The error of a fence asked of a node that does not lead now (no round trip).
    fn not_leading(&self, term: u64) -> Error {
        Error::NotLeader {
            message: format!("mysqlleader: not the leader: node {} does not lead service {} now (term seen last: {term})",
                             self.config.node_id, self.config.service_id),
            current_term: None,
            handed_over: false,
        }
    }

    /// Begins a fenced transaction on a connection of `pool` (the database this elector
    /// campaigns on): `assert_leader` has succeeded in it with the term this node leads at now
    /// ([`FencedTransaction::term`](crate::FencedTransaction::term)). Every step waits at most
    /// the request timeout and never past the lease this node led by when it began; COMMIT
    /// fences once more (see [`crate::fenced`] for its rules).
    ///
    /// [`Error::NotLeader`] when this node does not lead now (no round trip then) or the
    /// database refuses its term, at this fence or at the one before COMMIT; after a refusal the
    /// elector has stepped down before the error is returned, as after [`Elector::fence`].
    pub async fn fenced(&self, pool: &Pool) -> Result<crate::FencedTransaction<'static>> {
        let (term, leads, valid_until) = {
            let state = self.state.borrow();
            (state.term, state.leads_at(Instant::now()), state.valid_until)
        };
        if !leads {
            return Err(self.not_leading(term));
        }
        let deadline = valid_until.unwrap_or_else(Instant::now);
        let mut tx = crate::FencedTransaction::begin_with(pool, self.config.request_timeout, Some(deadline), Some(self.refusal_link())).await?;
        tx.assert_leader(&self.config.service_id, &self.config.node_id, term).await?;
        Ok(tx)
    }

    /// The fence on the application's own transaction: runs `CALL assert_leader(service, node,
    /// term)` on `conn` with the term this node leads at now, inside the transaction the caller
    /// opened on it with its own `mysql_async` connection. `conn` is what a `mysql_async` user
    /// holds there: `&mut Transaction` (from `Conn::start_transaction`) or `&mut Conn` after a
    /// `START TRANSACTION` of its own. On success the term stays share-locked (its history row; never the seat, so the leader renews meanwhile) until that
    /// transaction ends, so no takeover can commit before its writes do; it returns the term
    /// fenced.
    ///
    /// * This node does not lead now (by its local deadline): [`Error::NotLeader`], without a
    ///   round trip.
    /// * The database refuses the term (SQLSTATE 45001: another node took over): the server has
    ///   rolled the caller's transaction back; the elector steps down *before* this returns
    ///   ([`Elector::is_leader`] is false at once, its next call learns who leads), and the
    ///   error is [`Error::NotLeader`] with [`Error::current_term`].
    /// * No answer within the request timeout, nor within the time this node still leads
    ///   (whichever is shorter; past it the fence could only be refused): [`Error::Timeout`]. A
    ///   hung server or a lock wait never holds the caller longer; the statement may still run
    ///   on the server, so roll the transaction back (or drop the connection).
    /// * Any other error passes through unchanged, and the elector goes on as it was: e.g.
    ///   [`ErrorKind::Usage`](crate::ErrorKind::Usage) (SQLSTATE 45000) on MariaDB when no
    ///   transaction is open on `conn`, since a fence there would fence nothing. Treat every
    ///   error as the end of the transaction: roll it back.
    ///
    /// ```no_run
    /// # async fn demo(pool: mysql_async::Pool, elector: mysqlleader::Elector) -> Result<(), Box<dyn std::error::Error>> {
    /// use mysql_async::prelude::Queryable;
    /// let mut conn = pool.get_conn().await?;
    /// let mut tx = conn.start_transaction(Default::default()).await?;
    /// match elector.fence(&mut tx).await {
    ///     Ok(term) => {
    ///         tx.exec_drop("UPDATE invoices SET state = 'sent', term = ? WHERE id = 42", (term,)).await?;
    ///         tx.commit().await?; // no takeover committed in between
    ///     }
    ///     Err(e) => {
    ///         tx.rollback().await.ok();
    ///         // e.kind() == ErrorKind::NotLeader: another node leads; elector.is_leader() is false
    ///         return Err(e.into());
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn fence<'a, 't: 'a, C>(&self, conn: C) -> Result<u64>
    where
        C: mysql_async::prelude::ToConnection<'a, 't> + 'a,
    {
        // This node's view at one instant: the term, whether it leads at it now, for how long.
        let now = Instant::now();
        let (term, leads, left) = {
            let state = self.state.borrow();
            (state.term, state.leads_at(now), state.valid_for(now))
        };
        if !leads {
            return Err(self.not_leading(term));
        }
        let limit = left.min(self.config.request_timeout);
        let call = crate::procedures::assert_leader(conn, &self.config.service_id, &self.config.node_id, term);
        let answer = tokio::time::timeout(limit, call).await.unwrap_or(Err(Error::Timeout { after: limit }));
        match answer {
            Ok(_) => Ok(term),
            Err(e) => {
                if matches!(e, Error::NotLeader { .. }) {
                    // Step down before the caller hears of it: `is_leader()` is false on return.
                    self.refused_by(&e, term).await;
                }
                Err(e)
            }
        }
    }

    /// The fencing guard with this node's current term, inside the caller's open transaction:
    /// the same as [`Elector::fence`] (kept under its first name). Returns the term that was
    /// asserted.
    pub async fn assert_leader<'a, 't: 'a, C>(&self, conn: C) -> Result<u64>
    where
        C: mysql_async::prelude::ToConnection<'a, 't> + 'a,
    {
        self.fence(conn).await
    }

    /// Resolves the moment this node is no longer leader: a transition, or the local deadline
    /// passing with no renew. Resolves at once when it does not lead now.
    pub async fn leadership_lost(&self) {
        let mut rx = self.state.clone();
        loop {
            let deadline = {
                let state = rx.borrow_and_update();
                if !state.leads_at(Instant::now()) {
                    return;
                }
                match state.valid_until {
                    Some(deadline) => deadline,
                    None => return,
                }
            };
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { return },
                _ = sleep_until(deadline) => {}
            }
        }
    }

    /// Runs `work` only while this node leads: waits for leadership, then runs it, and drops
    /// (cancels) it the moment leadership ends. `Ok` holds the output when `work` finished while
    /// leading; `Err(term)` tells which term ended first.
    pub async fn run_while_leader<F: Future>(&self, work: F) -> std::result::Result<F::Output, u64> {
        if self.wait_for_leadership(None).await != WaitOutcome::Leading {
            return Err(self.term());
        }
        let term = self.term();
        tokio::select! {
            biased;
            _ = self.leadership_lost() => Err(term),
            out = work => Ok(out),
        }
    }

    /// Steps down at once and ends this node's lease in the database, so another node takes
    /// over on its next attempt. Afterwards the elector no longer campaigns; it keeps
    /// observing who leads. Returns whether this node held the seat.
    pub async fn resign(&self) -> Result<bool> {
        let (tx, rx) = oneshot::channel();
        self.commands.send(Command::Resign(tx)).map_err(|_| self.stopped())?;
        rx.await.map_err(|_| self.stopped())?
    }

    /// Hands leadership over to the node `to_node`, with no overlap:
    ///
    /// 1. this node steps down at once (locally, before anything is sent: [`Event::StoppedLeading`]
    ///    with [`StopReason::HandedOver`]);
    /// 2. `CALL resign_to(service, node, to_node)` ends its term in the database (the history
    ///    records `handed_over`) and reserves the vacant seat for `to_node` for one lease, so that
    ///    its fence fails from then on and only `to_node` may begin the next term;
    /// 3. it lets go of its wake-up lock, which wakes `to_node` when that node follows with a
    ///    wake-up wait: it campaigns at once and leads within milliseconds.
    ///
    /// This node keeps campaigning as a follower. When `to_node` does not campaign, the
    /// reservation lapses after one lease and the service elects as usual. Returns whether this
    /// node led (false: nothing changed). `to_node` must be another node's id.
    ///
    /// ```no_run
    /// # async fn example(elector: &mysqlleader::Elector) -> mysqlleader::Result<()> {
    /// // Before this host's maintenance: let web-2 lead instead.
    /// if elector.handover("web-2:4121").await? {
    ///     println!("handed over; web-2:4121 leads next");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn handover(&self, to_node: &str) -> Result<bool> {
        crate::config::check_id("to_node", to_node)?;
        if to_node == self.config.node_id {
            return Err(Error::invalid("to_node", format!(
                "mysqlleader: to_node must name another node than this one ({to_node})")));
        }
        let (tx, rx) = oneshot::channel();
        self.commands.send(Command::Handover { to: to_node.to_string(), reply: tx }).map_err(|_| self.stopped())?;
        rx.await.map_err(|_| self.stopped())?
    }

    /// Stops the background task; resigns first when `resign_on_drop` is set (the default).
    /// Returns within the request timeout whatever the server does (a call in flight is let
    /// go; a resign that cannot finish in time fails with [`Error::Timeout`], and the lease
    /// lapses): [`Elector::shutdown_by`] with `now + request_timeout`.
    pub async fn shutdown(self) -> Result<()> {
        let deadline = Instant::now() + self.config.request_timeout;
        self.shutdown_by(deadline).await
    }

    /// [`Elector::shutdown`], returning by `deadline`: the node steps down at once, the resign
    /// (when configured) gets the time left, and the task ends in the background when the
    /// server does not answer in time (its call connection is then ended as any abandoned call).
    pub async fn shutdown_by(self, deadline: Instant) -> Result<()> {
        let (tx, rx) = oneshot::channel();
        let resign = self.config.resign_on_drop;
        // The task gives up on the server a little before `deadline`, so its answer (and the
        // events before it) arrive in time.
        let early = (self.config.request_timeout / 20).min(Duration::from_millis(10));
        let task_deadline = deadline.checked_sub(early).unwrap_or(deadline);
        self.commands.send(Command::Shutdown { resign, done: tx, deadline: task_deadline }).map_err(|_| self.stopped())?;
        match tokio::time::timeout_at(deadline, rx).await {
            Ok(answer) => answer.map_err(|_| self.stopped())?,
            Err(_) => Err(Error::timeout(self.config.request_timeout)),
        }
    }

    /// The error for a call on an elector whose task has ended: why it ended, when it failed.
    fn stopped(&self) -> Error {
        match &self.state.borrow().last_error {
            Some(Error::Stopped { message }) => Error::stopped(message.clone()),
            _ => Error::stopped("the elector was shut down"),
        }
    }
}

impl std::fmt::Debug for Elector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.borrow();
        f.debug_struct("Elector")
            .field("service_id", &self.config.service_id)
            .field("node_id", &self.config.node_id)
            .field("leading", &state.leads_at(Instant::now()))
            .field("term", &state.term)
            .field("leader_id", &state.leader_id)
            .finish()
    }
}

/// A session's handle on one of its electors ([`Elector::stopper`]).
pub(crate) struct Stopper {
    commands: mpsc::UnboundedSender<Command>,
    resign: bool,
    state: watch::Receiver<State>,
    metrics: crate::metrics::Metrics,
}

impl Stopper {
    /// [`Elector::is_leader`] of the elector.
    pub(crate) fn is_leader(&self) -> bool {
        self.state.borrow().leads_at(Instant::now())
    }

    /// Whether the elector follows another leader now: it does not lead, its last call
    /// succeeded, and that call's answer named a leader (another node, or another process with
    /// this node id).
    pub(crate) fn follows(&self) -> bool {
        let state = self.state.borrow();
        !state.leads_at(Instant::now()) && state.leader_id.is_some() && state.last_error.is_none()
    }

    /// [`Elector::metrics`] of the elector.
    pub(crate) fn metrics(&self) -> &crate::metrics::Metrics {
        &self.metrics
    }

    /// Whether the elector's task still runs.
    pub(crate) fn running(&self) -> bool {
        self.state.borrow().running
    }

    /// [`Elector::shutdown_by`] for the elector this handle stops: steps down, resigns when
    /// configured, and ends its task, by `deadline`. Done at once when the task has ended.
    pub(crate) async fn stop_by(&self, deadline: Instant) -> Result<()> {
        let budget = deadline.saturating_duration_since(Instant::now());
        let (done, answer) = oneshot::channel();
        if self.commands.send(Command::Shutdown { resign: self.resign, done, deadline }).is_err() {
            return Ok(());
        }
        match tokio::time::timeout_at(deadline, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Ok(()),
            Err(_) => Err(Error::timeout(budget)),
        }
    }
}

impl Drop for Elector {
    /// Asks the task to stop (and resign, when configured); it finishes in the background as
    /// long as the runtime runs. Use [`Elector::shutdown`] to wait for the handover.
    fn drop(&mut self) {
        let (done, _) = oneshot::channel();
        let deadline = Instant::now() + self.config.request_timeout;
        let _ = self.commands.send(Command::Shutdown { resign: self.config.resign_on_drop, done, deadline });
    }
}

