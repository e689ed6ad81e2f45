//! The elector: one node's part in the election of one service, kept alive by a background
//! task that campaigns for the seat, renews it while it holds it, and steps down by its local
//! deadline whenever a renew fails or comes late.
//!
//! What happens on a renew, in order (see `Task::attempt`):
//! 1. take `sent_at = Instant::now()` (monotonic), *before* the call is sent;
//! 2. `CALL campaign(service, node, lease_ms)`, bounded by `request_timeout` and, while
//!    leading, by the current local deadline;
//! 3. on `is_leader = 1`: the new deadline is `sent_at + lease_remaining - drift_margin`, where
//!    `lease_remaining` is what the database measured on its own clock; on anything else —
//!    an error, a timeout, another leader — the deadline is not extended, and the node steps
//!    down when the old one passes (or at once when another node holds the seat).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mysql_async::Pool;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::time::{sleep_until, timeout, Instant};

use crate::config::ElectorConfig;
use crate::error::{Error, Result};
use crate::procedures;
use crate::wakeup::{Role, Wakeup};

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
    /// The error of the last call, if it failed.
    pub last_error: Option<Error>,
}

impl State {
    fn initial() -> Self {
        State { leading: false, leader_id: None, term: 0, valid_until: None, campaigning: true, last_error: None }
    }

    /// Leading, and the deadline has not passed at `now`.
    pub fn leads_at(&self, now: Instant) -> bool {
        self.leading && self.valid_until.is_some_and(|d| now < d)
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
}

enum Command {
    Resign(oneshot::Sender<Result<bool>>),
    Shutdown { resign: bool, done: oneshot::Sender<Result<()>> },
}

/// Builds an [`Elector`]; see [`ElectorConfig`] for every value and its default.
///
/// Intervals that are not set are derived from the lease: renew every lease/5, retry every
/// lease/10, time out requests after min(lease/5, 2 s), drift margin lease/100.
#[must_use]
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

    /// The validated configuration.
    pub fn config(&self) -> Result<ElectorConfig> {
        let lease = self.lease;
        let jitter = self.retry_jitter.unwrap_or(0.2);
        if !(0.0..1.0).contains(&jitter) {
            return Err(Error::invalid("retry_jitter", format!("retry_jitter must be at least 0 and below 1, got {jitter}")));
        }
        let config = ElectorConfig {
            service_id: self.service_id.clone(),
            node_id: self.node_id.clone().unwrap_or_else(crate::config::default_node_id),
            lease,
            renew_interval: self.renew_interval.unwrap_or(lease / 5),
            retry_interval: self.retry_interval.unwrap_or(lease / 10),
            retry_jitter_permille: (jitter * 1000.0).round().min(999.0) as u32,
            request_timeout: self.request_timeout.unwrap_or((lease / 5).min(Duration::from_secs(2))),
            drift_margin: self.drift_margin.unwrap_or(lease / 100),
            resign_on_drop: self.resign_on_drop,
            wakeup_lock: self.wakeup_lock,
        };
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
}

impl Elector {
    /// Starts building an elector for `service_id` that talks to the database of `pool`.
    pub fn builder(pool: Pool, service_id: impl Into<String>) -> ElectorBuilder {
        ElectorBuilder {
            pools: vec![pool],
            service_id: service_id.into(),
            node_id: None,
            lease: Duration::from_secs(10),
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
            .map_err(|_| Error::invalid("runtime", "Elector::start must be called inside a tokio runtime"))?;
        let config = Arc::new(config);
        let (state_tx, state_rx) = watch::channel(State::initial());
        let (events, first_subscriber) = broadcast::channel(256);
        let (commands, command_rx) = mpsc::unbounded_channel();
        let wakeup = config.wakeup_lock.then(|| {
            let _guard = handle.enter();
            Wakeup::start(pools[0].clone(), config.service_id.clone(), config.retry_interval)
        });
        let task = Task {
            wakeup,
            config: config.clone(),
            pools,
            current_pool: 0,
            state: state_tx,
            events: events.clone(),
            commands: command_rx,
            rng: seed(),
        };
        handle.spawn(task.run());
        Ok((Elector { config, state: state_rx, events, commands }, first_subscriber))
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
        let now = Instant::now();
        let state = self.state.borrow();
        match state.valid_until {
            Some(d) if state.leading && d > now => d - now,
            _ => Duration::ZERO,
        }
    }

    /// A snapshot of the state.
    pub fn state(&self) -> State { self.state.borrow().clone() }

    /// A `watch` of the state: changes on every transition and on every renew.
    pub fn watch(&self) -> watch::Receiver<State> { self.state.clone() }

    /// The events from now on: started leading, stopped leading, leader changed.
    pub fn events(&self) -> broadcast::Receiver<Event> { self.events.subscribe() }

    /// Waits until this node leads (true) or `limit` passes (false); `None` waits for ever
    /// (or until the elector stops).
    pub async fn wait_for_leadership(&self, limit: Option<Duration>) -> bool {
        let mut rx = self.state.clone();
        let wait = async move {
            loop {
                if rx.borrow_and_update().leads_at(Instant::now()) {
                    return true;
                }
                if rx.changed().await.is_err() {
                    return false;
                }
            }
        };
        match limit {
            Some(limit) => timeout(limit, wait).await.unwrap_or(false),
            None => wait.await,
        }
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
                state.valid_until.expect("a leading state has a deadline")
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
        if !self.wait_for_leadership(None).await {
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
        self.commands.send(Command::Resign(tx)).map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }

    /// Stops the background task; resigns first when `resign_on_drop` is set (the default).
    pub async fn shutdown(self) -> Result<()> {
        let (tx, rx) = oneshot::channel();
        let resign = self.config.resign_on_drop;
        self.commands.send(Command::Shutdown { resign, done: tx }).map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }
}

impl Drop for Elector {
    /// Asks the task to stop (and resign, when configured); it finishes in the background as
    /// long as the runtime runs. Use [`Elector::shutdown`] to wait for the handover.
    fn drop(&mut self) {
        let (done, _) = oneshot::channel();
        let _ = self.commands.send(Command::Shutdown { resign: self.config.resign_on_drop, done });
    }
}

fn stopped() -> Error {
    Error::invalid("elector", "the elector has stopped")
}

fn seed() -> u64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    t ^ (u64::from(std::process::id()) << 32) | 1
}

/// The background task. It owns the only writer of the state.
struct Task {
    /// The optional accelerator; `None` when switched off.
    wakeup: Option<Wakeup>,
    config: Arc<ElectorConfig>,
    pools: Vec<Pool>,
    current_pool: usize,
    state: watch::Sender<State>,
    events: broadcast::Sender<Event>,
    commands: mpsc::UnboundedReceiver<Command>,
    rng: u64,
}

/// What one attempt decided: when to try next.
struct Next {
    at: Instant,
}

impl Task {
    async fn run(mut self) {
        tracing::info!(service = %self.config.service_id, node = %self.config.node_id, "elector started");
        loop {
            let campaigning = self.state.borrow().campaigning;
            let next = if campaigning { self.attempt().await } else { self.observe().await };
            // Wait for the next attempt, the local deadline, a wake-up, or a command.
            let deadline = self.deadline();
            let step_down_at = deadline.map_or(next.at, |d| self.step_down_at(d));
            let following = campaigning && deadline.is_none();
            if let Some(w) = &self.wakeup {
                w.set_role(if !campaigning { Role::Idle } else if following { Role::Following } else { Role::Leading });
            }
            let woken = async {
                match &self.wakeup {
                    Some(w) if following => w.woken().await,
                    _ => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                command = self.commands.recv() => match command {
                    Some(Command::Resign(reply)) => {
                        let result = self.resign(StopReason::Resigned).await;
                        let _ = reply.send(result);
                    }
                    Some(Command::Shutdown { resign, done }) => {
                        let result = if resign { self.resign(StopReason::Shutdown).await.map(|_| ()) } else {
                            self.step_down(StopReason::Shutdown);
                            Ok(())
                        };
                        self.state.send_modify(|s| s.campaigning = false);
                        tracing::info!(service = %self.config.service_id, node = %self.config.node_id, "elector stopped");
                        let _ = done.send(result);
                        return;
                    }
                    None => {
                        // Every handle is gone without a shutdown command (cannot happen: Drop sends one).
                        self.step_down(StopReason::Shutdown);
                        return;
                    }
                },
                _ = sleep_until(step_down_at), if step_down_at < next.at => {
                    self.step_down(StopReason::DeadlinePassed);
                }
                _ = woken => tracing::debug!(service = %self.config.service_id, "woken by the wake-up lock"),
                _ = sleep_until(next.at) => {}
            }
        }
    }

    /// When the task steps down for a deadline: a little before it (at most 5 ms, at most the
    /// drift margin), so that the StoppedLeading event lands no later than the deadline even
    /// with a late timer. `is_leader()` itself is exact: it compares with the deadline.
    fn step_down_at(&self, deadline: Instant) -> Instant {
        let early = self.config.drift_margin.min(Duration::from_millis(5));
        deadline.checked_sub(early).unwrap_or(deadline)
    }

    /// The current local deadline while leading.
    fn deadline(&self) -> Option<Instant> {
        let s = self.state.borrow();
        if s.leading { s.valid_until } else { None }
    }

    fn pool(&self) -> &Pool { &self.pools[self.current_pool] }

    /// A failed call on a connection or cluster error moves to the next server, if any.
    fn note_failure(&mut self, error: &Error) {
        if error.is_transient() && self.pools.len() > 1 {
            self.current_pool = (self.current_pool + 1) % self.pools.len();
            tracing::info!(server = self.current_pool, "moving to the next server");
        }
    }

    /// 1. One campaign call: acquire, renew, or learn who leads. Returns when to try next.
    async fn attempt(&mut self) -> Next {
        let config = self.config.clone();
        // A process that slept past its deadline (paused, starved) stops leading before it
        // sends anything, and then campaigns with a full request timeout.
        if self.deadline().is_some_and(|d| d <= Instant::now()) {
            self.step_down(StopReason::DeadlinePassed);
        }
        let sent_at = Instant::now();
        // A renew in flight never outlives the deadline it would extend.
        let limit = match self.deadline() {
            Some(d) => (sent_at + config.request_timeout).min(d),
            None => sent_at + config.request_timeout,
        };
        let call = procedures::campaign(self.pool(), &config.service_id, &config.node_id, config.lease);
        let outcome = match tokio::time::timeout_at(limit, call).await {
            Ok(result) => result,
            Err(_) => Err(Error::timeout(limit - sent_at)),
        };
        let now = Instant::now();
        match outcome {
            Ok(c) if c.is_leader => {
                // 2. The lease runs from no earlier than `sent_at` on the database's clock.
                let valid_until = (sent_at + c.lease_remaining).checked_sub(config.drift_margin).unwrap_or(sent_at);
                if valid_until <= now {
                    // The answer came too late to act on: not leader, try again at once.
                    self.step_down(StopReason::DeadlinePassed);
                    return Next { at: now };
                }
                self.lead(c.term, valid_until);
                Next { at: (sent_at + config.renew_interval).max(now) }
            }
            Ok(c) => {
                // 3. Another node holds a valid lease (or took ours): follow it until its lease
                //    ends, polling no less often than the retry interval.
                self.follow(c.leader_id, c.term);
                let wait = self.jittered(config.retry_interval).min(c.lease_remaining + Duration::from_millis(1));
                Next { at: now + wait }
            }
            Err(e) => {
                // 4. Unknown outcome: the deadline stands (never extended); retry soon while
                //    leading, else after the retry interval.
                tracing::warn!(service = %config.service_id, node = %config.node_id, error = %e, "campaign failed");
                self.note_failure(&e);
                self.state.send_modify(|s| s.last_error = Some(e));
                if self.deadline().is_some_and(|d| d <= now) {
                    self.step_down(StopReason::DeadlinePassed);
                }
                let wait = if self.deadline().is_some() {
                    (config.renew_interval / 4).max(Duration::from_millis(5))
                } else {
                    self.jittered(config.retry_interval)
                };
                Next { at: now + wait }
            }
        }
    }

    /// After resigning: only watch who leads (a read), every retry interval.
    async fn observe(&mut self) -> Next {
        let config = self.config.clone();
        let call = procedures::current_leader(self.pool(), &config.service_id);
        match timeout(config.request_timeout, call).await {
            Ok(Ok(c)) => self.follow(c.leader_id, c.term),
            Ok(Err(e)) => {
                self.note_failure(&e);
                self.state.send_modify(|s| s.last_error = Some(e));
            }
            Err(_) => self.state.send_modify(|s| s.last_error = Some(Error::timeout(config.request_timeout))),
        }
        Next { at: Instant::now() + self.jittered(config.retry_interval) }
    }

    /// Publishes leadership at `term` until `valid_until`.
    fn lead(&mut self, term: u64, valid_until: Instant) {
        let me = self.config.node_id.clone();
        let before = self.state.borrow().clone();
        let newly = !before.leads_at(Instant::now()) || before.term != term;
        if before.leading && !before.leads_at(Instant::now()) {
            // The old deadline passed before this renew came back: that leadership ended.
            self.step_down(StopReason::DeadlinePassed);
        } else if newly && before.leading {
            // Leading a different term than before (e.g. forced back in): close the old one.
            self.step_down(StopReason::LostSeat);
        }
        self.announce_leader(Some(me.clone()), term);
        self.state.send_modify(|s| {
            s.leading = true;
            s.leader_id = Some(me);
            s.term = term;
            s.valid_until = Some(valid_until);
            s.last_error = None;
        });
        if newly {
            tracing::info!(service = %self.config.service_id, node = %self.config.node_id, term, "started leading");
            let _ = self.events.send(Event::StartedLeading { term, valid_until });
        }
    }

    /// Publishes a follower's view of the seat: this node does not lead (if it did, it stops
    /// now, `LostSeat`), `leader_id` does at `term`.
    fn follow(&mut self, leader_id: Option<String>, term: u64) {
        self.publish_not_leading(StopReason::LostSeat, Some((leader_id, term)));
    }

    fn announce_leader(&self, leader_id: Option<String>, term: u64) {
        let s = self.state.borrow();
        if s.leader_id != leader_id || s.term != term {
            drop(s);
            let _ = self.events.send(Event::LeaderChanged { leader_id, term });
        }
    }

    /// Stops counting this node as leader, now. Idempotent.
    fn step_down(&mut self, reason: StopReason) {
        self.publish_not_leading(reason, None);
    }

    /// One state update: this node does not lead, and with `seat`, who leads at which term
    /// (so that a watcher never sees this node stepped down but still named as the leader).
    /// Then the events, in order: `StoppedLeading` (if it led), `LeaderChanged` (if `seat`
    /// changed hands or term). Without `seat` and not leading, nothing is published.
    fn publish_not_leading(&mut self, reason: StopReason, seat: Option<(Option<String>, u64)>) {
        let (was_leading, old_term, changed) = {
            let s = self.state.borrow();
            (s.leading, s.term, seat.as_ref().is_some_and(|(l, t)| s.leader_id != *l || s.term != *t))
        };
        if !was_leading && seat.is_none() {
            return;
        }
        self.state.send_modify(|s| {
            s.leading = false;
            s.valid_until = None;
            if let Some((leader_id, term)) = &seat {
                s.leader_id = leader_id.clone();
                s.term = *term;
                s.last_error = None;
            }
        });
        if was_leading {
            tracing::info!(service = %self.config.service_id, node = %self.config.node_id, term = old_term, ?reason, "stopped leading");
            let _ = self.events.send(Event::StoppedLeading { term: old_term, reason });
        }
        if let (true, Some((leader_id, term))) = (changed, seat) {
            let _ = self.events.send(Event::LeaderChanged { leader_id, term });
        }
    }

    /// Steps down locally first (so nothing acts as leader once the handover can start), then
    /// ends the lease in the database, and stops campaigning.
    async fn resign(&mut self, reason: StopReason) -> Result<bool> {
        self.step_down(reason);
        self.state.send_modify(|s| s.campaigning = false);
        let config = self.config.clone();
        let call = procedures::resign(self.pool(), &config.service_id, &config.node_id);
        let result = match timeout(config.request_timeout, call).await {
            Ok(r) => r,
            Err(_) => Err(Error::timeout(config.request_timeout)),
        };
        // Only now, with the seat vacated in the database, wake the followers.
        if let Some(w) = &self.wakeup {
            w.set_role(Role::Idle);
        }
        match result {
            Ok(r) => {
                if r.resigned {
                    self.follow(None, r.term);
                }
                Ok(r.resigned)
            }
            Err(e) => {
                tracing::warn!(service = %config.service_id, node = %config.node_id, error = %e, "resign failed; the lease will lapse");
                Err(e)
            }
        }
    }

    /// `base` shortened by a random part of up to `retry_jitter` of it.
    fn jittered(&mut self, base: Duration) -> Duration {
        // xorshift64*: enough to spread followers apart.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = (self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
        base.mul_f64(1.0 - self.config.retry_jitter() * r)
    }
}
