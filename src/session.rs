//! Sessions: one node's part in the elections of many services, over one call connection and
//! one renew for all its seats (the model is etcd's `concurrency.Session`: one lease kept alive
//! by one request, shared by every election of the process).
//!
//! A [`Session`] holds one node identity and one lease configuration. [`Session::elector`] gives
//! an [`Elector`] with the API of any elector (events, waits, fences, resign, handover): each
//! runs the elector loop of [`crate::elector`] unchanged, with its own state and deadline, but
//! hands its calls to the session, which decides how they reach the server:
//!
//! 1. **Collect.** The `campaign` calls of the session's electors (a leader's renew and a
//!    follower's look alike) are queued. The first one opens a batch; the batch closes when
//!    every elector of the session has a call in it, or when no call came for a fifth of the
//!    batch window, or one batch window after the first call (a quarter of the renew interval,
//!    at most 500 ms). The quiet rule lets the followers' calls, spread by their retry jitter,
//!    gather in one batch: with a fixed window they settled into two groups for good, each
//!    missing the other's window (two calls a second instead of one). Each elector took its
//!    `sent_at` before it queued its call, so the wait only makes its local deadline earlier,
//!    never later.
//! 2. **One call for the batch.** `CALL renew_seats(node, lease, [services])` (at most
//!    [`BATCH_LIMIT`] services per call) renews, in one statement, every seat the node holds
//!    with a valid lease, and tells who leads the other seats another node holds with a valid
//!    lease. Each answered seat gets the answer `campaign` would have given it.
//! 3. **The rest one by one.** A seat missing from the answer (vacant, expired, reserved by a
//!    handover, never created, taken over, forced, or one whose access the seat's copy does not
//!    settle) gets its own `campaign`, which decides it as always, errors included: so a seat
//!    whose renew fails steps down alone. A call whose elector stopped waiting for it (its
//!    request timeout or deadline passed) is dropped unsent. These run for at most a batch
//!    window at a time; calls queued meanwhile go first (step 1 without waiting), so that
//!    thousands of takeovers never starve the renews of the seats the node holds.
//! 4. **Failures.** When `renew_seats` fails for a reason retrying cannot fix (an account
//!    granted before the procedure existed: re-run `grant`), the session says so once and
//!    campaigns one by one. Any other failure of the batch is every batched elector's answer:
//!    it retries, and a leader steps down by its deadline, as with any failed renew.
//!
//! Every call of the session (batches, one-by-one campaigns, resign, handover, current_leader)
//! runs on the one connection the session keeps, taken from the pool it was given (and given
//! back, for a new one, only after a failure that may have broken it): so a session holds one
//! server connection whatever the number of its services, plus, rarely, a short-lived one that
//! ends a call left running (see the elector's call bound).
//!
//! Not in this version: the wake-up lock. Followers of a session look at all their seats in one
//! call per retry interval (lease/10 by default): a resign or a crashed leader's lapsed lease is
//! seen within that, not at once as with a stand-alone elector's wake-up lock. Galera fallback
//! servers are not supported by sessions yet either (one server per session).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mysql_async::Pool;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio::time::{sleep_until, Instant};

use crate::config::ElectorConfig;
use crate::elector::task::{Backend, Database};
use crate::elector::{Elector, ElectorBuilder, Event, Stopper};
use crate::error::{Error, Result};
use crate::procedures::{self, Campaign, CurrentLeader, Resign};
use crate::wakeup::Role;

/// The most services one `renew_seats` call carries; a larger batch is sent as several calls
/// (each stays within a few tens of milliseconds on the server: 1,000 seats took 23 ms at the
/// median and 55 ms at p99 with 10,000 services on the benchmark machine; 500 keep the p99
/// well under 50 ms).
pub const BATCH_LIMIT: usize = 500;

/// The longest a batch stays open for more calls.
const MAX_BATCH_WINDOW: Duration = Duration::from_millis(500);

/// Builds a [`Session`]: the same settings as an [`ElectorBuilder`], for every elector of the
/// session (one node id, one lease configuration).
#[must_use]
#[derive(Clone)]
pub struct SessionBuilder {
    electors: ElectorBuilder,
}

impl SessionBuilder {
    pub fn node_id(mut self, node_id: impl Into<String>) -> Self { self.electors = self.electors.node_id(node_id); self }
    pub fn lease(mut self, lease: Duration) -> Self { self.electors = self.electors.lease(lease); self }
    pub fn renew_interval(mut self, d: Duration) -> Self { self.electors = self.electors.renew_interval(d); self }
    pub fn retry_interval(mut self, d: Duration) -> Self { self.electors = self.electors.retry_interval(d); self }
    /// A fraction from 0 (no jitter) to below 1.
    pub fn retry_jitter(mut self, fraction: f64) -> Self { self.electors = self.electors.retry_jitter(fraction); self }
    pub fn request_timeout(mut self, d: Duration) -> Self { self.electors = self.electors.request_timeout(d); self }
    pub fn drift_margin(mut self, d: Duration) -> Self { self.electors = self.electors.drift_margin(d); self }
    /// Whether closing an elector of the session (or the session) resigns its seat.
    pub fn resign_on_drop(mut self, yes: bool) -> Self { self.electors = self.electors.resign_on_drop(yes); self }

    /// A session with the settings of `electors` (its service id and wake-up lock aside): the C
    /// ABI reads its configuration into an elector builder.
    pub(crate) fn from_electors(electors: ElectorBuilder) -> Self {
        SessionBuilder { electors: electors.wakeup_lock(false) }
    }

    /// The configuration every elector of the session gets (with its own `service_id`).
    pub fn config(&self) -> Result<ElectorConfig> {
        self.electors.config()
    }

    /// Validates the configuration and starts the session's batcher on the current tokio
    /// runtime. Connects to nothing yet: the first elector's first call does.
    pub fn start(self) -> Result<Session> {
        let template = self.config()?;
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|_| Error::usage("Session::start must be called inside a tokio runtime"))?;
        let pool = self.electors.pools().into_iter().next().ok_or_else(|| Error::invalid("servers", "a session needs a server"))?;
        let window = (template.renew_interval / 4).min(MAX_BATCH_WINDOW);
        let core = Arc::new(Core {
            db: Database::sticky(vec![pool]),
            template: Arc::new(template),
            window,
            electors: Mutex::new(HashMap::new()),
            said_one_by_one: std::sync::atomic::AtomicBool::new(false),
            stats: Mutex::default(),
            running: std::sync::atomic::AtomicUsize::new(0),
        });
        let (queue, requests) = mpsc::unbounded_channel();
        handle.spawn(batcher(core.clone(), requests));
        Ok(Session { core, queue, runtime: handle })
    }
}

/// One node's part in the elections of many services, over one connection and one renew: see
/// the module documentation.
///
/// ```no_run
/// # async fn demo() -> mysqlleader::Result<()> {
/// use std::time::Duration;
/// let pool = mysqlleader::pool_from_url("mysql://app:secret@127.0.0.1:3306/app")?;
/// let session = mysqlleader::Session::builder(pool)
///     .node_id("web-3:4121")
///     .lease(Duration::from_secs(10))
///     .start()?;
/// // One elector per shard; all of them share the session's connection and renew.
/// let electors: Vec<_> = (0..1000)
///     .map(|i| session.elector(format!("shard-{i}")))
///     .collect::<mysqlleader::Result<_>>()?;
/// for e in &electors {
///     if e.is_leader() { /* work on this shard, fencing with e.term() */ }
/// }
/// session.shutdown().await?; // every elector steps down and resigns
/// # Ok(()) }
/// ```
pub struct Session {
    core: Arc<Core>,
    queue: mpsc::UnboundedSender<Request>,
    runtime: tokio::runtime::Handle,
}

impl Session {
    /// Starts building a session whose electors talk to the database of `pool`. The session
    /// uses one connection of `pool` at a time.
    pub fn builder(pool: Pool) -> SessionBuilder {
        // The service id is each elector's; the builder's own is never used.
        SessionBuilder { electors: Elector::builder(pool, "session").wakeup_lock(false) }
    }

    /// This session's node id (every elector's).
    pub fn node_id(&self) -> &str {
        &self.core.template.node_id
    }

    /// The configuration every elector of the session gets; its `service_id` means nothing.
    pub fn config(&self) -> &ElectorConfig {
        &self.core.template
    }

    /// The services this session has a running elector for, in no order.
    pub fn services(&self) -> Vec<String> {
        let mut electors = self.core.electors.lock().unwrap_or_else(|e| e.into_inner());
        electors.retain(|_, stopper| stopper.running());
        electors.keys().cloned().collect()
    }

    /// Starts an elector for `service_id` in this session: it campaigns at once, with the
    /// session's node id and lease. One running elector per service and session: a second one
    /// for the same service fails with [`crate::ErrorKind::InvalidArgument`] naming
    /// `service_id` until the first has shut down.
    pub fn elector(&self, service_id: impl Into<String>) -> Result<Elector> {
        self.elector_subscribed(service_id).map(|(elector, _)| elector)
    }

    /// [`Session::elector`], and a receiver of its events subscribed before its task started
    /// (so it misses no event: see [`Elector::start_subscribed`]).
    pub fn elector_subscribed(&self, service_id: impl Into<String>) -> Result<(Elector, broadcast::Receiver<Event>)> {
        let service_id = service_id.into();
        crate::config::check_id("service_id", &service_id)?;
        let config = ElectorConfig { service_id: service_id.clone(), ..(*self.core.template).clone() };
        let mut electors = self.core.electors.lock().unwrap_or_else(|e| e.into_inner());
        if electors.get(&service_id).is_some_and(Stopper::running) {
            return Err(Error::invalid("service_id", format!(
                "mysqlleader: this session has a running elector for service_id {service_id} already")));
        }
        let backend = SessionBackend::new(self.core.clone(), self.queue.clone());
        let _guard = self.runtime.enter();
        let (elector, events) = Elector::start_on(backend, config);
        electors.insert(service_id, elector.stopper());
        Ok((elector, events))
    }

    /// Shuts down every running elector of the session (each steps down at once and resigns
    /// when `resign_on_drop`, as [`Elector::shutdown`]), by the request timeout from now
    /// whatever the server does: the resigns share the session's connection, so with many
    /// seats those not resigned by then lapse with their leases. The handles of the electors
    /// stay usable and report that they stopped. Returns the first error.
    pub async fn shutdown(self) -> Result<()> {
        let deadline = Instant::now() + self.core.template.request_timeout;
        let stoppers: Vec<Stopper> = {
            let mut electors = self.core.electors.lock().unwrap_or_else(|e| e.into_inner());
            electors.drain().map(|(_, s)| s).collect()
        };
        let mut stopping = tokio::task::JoinSet::new();
        for stopper in stoppers {
            stopping.spawn(async move { stopper.stop_by(deadline).await });
        }
        let mut first_error = None;
        while let Some(result) = stopping.join_next().await {
            if let Ok(Err(e)) = result {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// What the session's calls have cost so far: for a benchmark, or a health page.
    pub fn stats(&self) -> SessionStats {
        self.core.stats.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// How many electors of the session run now.
    pub fn len(&self) -> usize {
        self.core.running()
    }

    /// Whether no elector of the session runs.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("node_id", &self.node_id()).field("electors", &self.len()).finish()
    }
}

/// What a session's calls have cost so far ([`Session::stats`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// `renew_seats` calls sent (step 2), and the seats they carried in all.
    pub batch_calls: u64,
    pub batched_seats: u64,
    /// `renew_seats` calls that failed.
    pub batch_failures: u64,
    /// `campaign` calls sent one by one (step 3).
    pub single_campaigns: u64,
    /// How long each of the last (at most [`RECENT_BATCHES`]) `renew_seats` calls took, answered
    /// or not, oldest first.
    pub recent_batch_durations: Vec<Duration>,
}

/// How many `renew_seats` durations [`SessionStats`] keeps.
pub const RECENT_BATCHES: usize = 4_096;

/// What the session's electors share.
struct Core {
    /// The one server, one call at a time.
    db: Database,
    /// Every elector's configuration but its service id.
    template: Arc<ElectorConfig>,
    /// How long a batch stays open for more calls (step 1).
    window: Duration,
    /// The electors started by the session, by service.
    electors: Mutex<HashMap<String, Stopper>>,
    /// Whether step 4's fallback was reported.
    said_one_by_one: std::sync::atomic::AtomicBool,
    stats: Mutex<SessionStats>,
    /// The number of [`SessionBackend`]s alive: of electors whose task runs.
    running: std::sync::atomic::AtomicUsize,
}

impl Core {
    /// How many electors of the session still run (an upper bound on a batch's size): their
    /// backends, each owned by its elector's task until the task ends. O(1): the batcher asks
    /// once per queued call.
    fn running(&self) -> usize {
        self.running.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn count(&self, update: impl FnOnce(&mut SessionStats)) {
        update(&mut self.stats.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

/// One elector's `campaign`, queued for a batch.
struct Request {
    config: Arc<ElectorConfig>,
    reply: oneshot::Sender<Result<Campaign>>,
}

/// The session's side of one elector: `campaign` goes to the batcher; resign, handover and
/// current_leader go to the session's connection one by one; no wake-up lock.
struct SessionBackend {
    core: Arc<Core>,
    queue: mpsc::UnboundedSender<Request>,
}

impl SessionBackend {
    fn new(core: Arc<Core>, queue: mpsc::UnboundedSender<Request>) -> Self {
        core.running.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        SessionBackend { core, queue }
    }
}

impl Drop for SessionBackend {
    fn drop(&mut self) {
        self.core.running.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Backend for SessionBackend {
    fn servers(&self) -> usize {
        1
    }

    async fn campaign(&self, _server: usize, config: &Arc<ElectorConfig>) -> Result<Campaign> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .send(Request { config: config.clone(), reply })
            .map_err(|_| Error::stopped("the session's batcher has ended"))?;
        answer.await.unwrap_or_else(|_| Err(Error::stopped("the session's batcher has ended")))
    }

    async fn current_leader(&self, _server: usize, config: &Arc<ElectorConfig>) -> Result<CurrentLeader> {
        self.core.db.current_leader(0, config).await
    }

    async fn resign(&self, _server: usize, config: &Arc<ElectorConfig>) -> Result<Resign> {
        self.core.db.resign(0, config).await
    }

    async fn resign_to(&self, _server: usize, config: &Arc<ElectorConfig>, to: &str) -> Result<Resign> {
        self.core.db.resign_to(0, config, to).await
    }

    fn set_role(&self, _role: Role) {}

    async fn woken(&self) {
        std::future::pending().await
    }

    fn watching(&self) -> bool {
        false
    }
}

/// The session's batcher: steps 1–4 of the module documentation, until the session and every
/// elector of it are gone. The one-by-one campaigns of step 3 run for at most a batch window at
/// a time: calls queued meanwhile (the leaders' renews) are batched and sent first, so that
/// thousands of takeovers after a crash never starve the renews of the seats the node holds.
async fn batcher(core: Arc<Core>, mut requests: mpsc::UnboundedReceiver<Request>) {
    let mut rest: VecDeque<Request> = VecDeque::new();
    loop {
        // 1. The first call: wait for one, unless campaigns are left from the round before
        //    (then take only what is queued now, without waiting).
        let first = if rest.is_empty() {
            match requests.recv().await {
                Some(r) => Some(r),
                None => return,
            }
        } else {
            requests.try_recv().ok()
        };
        if let Some(first) = first {
            let batch = collect(&core, &mut requests, first, rest.is_empty()).await;
            // 2. One renew_seats per BATCH_LIMIT services.
            for chunk in chunked(batch, BATCH_LIMIT) {
                rest.extend(renew_or_answer(&core, chunk).await);
            }
        }
        // 3. The seats the batches did not settle, one by one, for at most a window.
        let until = Instant::now() + core.window;
        while let Some(request) = rest.pop_front() {
            if request.reply.is_closed() {
                continue;
            }
            core.count(|s| s.single_campaigns += 1);
            let answer = core.db.campaign(0, &request.config).await;
            let _ = request.reply.send(answer);
            if Instant::now() >= until {
                break;
            }
        }
    }
}

/// Step 1: `first` and the calls queued after it, until every running elector has a call in
/// the batch, or no call came for a fifth of the window, or the window has passed since the
/// first call; without `wait`, only the calls queued already. Calls whose elector stopped
/// waiting are dropped.
async fn collect(core: &Core, requests: &mut mpsc::UnboundedReceiver<Request>, first: Request, wait: bool) -> Vec<Request> {
    let closes = Instant::now() + core.window;
    let quiet = core.window / 5;
    let mut batch = vec![first];
    while batch.len() < core.running() {
        if !wait {
            match requests.try_recv() {
                Ok(r) => batch.push(r),
                Err(_) => break,
            }
            continue;
        }
        let until = closes.min(Instant::now() + quiet);
        tokio::select! {
            request = requests.recv() => match request {
                Some(r) => batch.push(r),
                None => break,
            },
            () = sleep_until(until) => break,
        }
    }
    batch.retain(|r| !r.reply.is_closed());
    batch
}

/// Sends one `renew_seats` for `batch` and answers every request it settles; returns the
/// others, for a `campaign` each (steps 2 and 4).
async fn renew_or_answer(core: &Core, batch: Vec<Request>) -> Vec<Request> {
    let ids: Vec<String> = batch.iter().map(|r| r.config.service_id.clone()).collect();
    let (node, lease) = (core.template.node_id.clone(), core.template.lease);
    let sent_at = Instant::now();
    let result = core
        .db
        .call(0, &core.template, move |conn, _| {
            Box::pin(async move {
                let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                procedures::renew_seats(conn, &node, lease, &refs).await
            })
        })
        .await;
    core.count(|s| {
        s.batch_calls += 1;
        s.batched_seats += batch.len() as u64;
        s.batch_failures += u64::from(result.is_err());
        if s.recent_batch_durations.len() == RECENT_BATCHES {
            s.recent_batch_durations.remove(0);
        }
        s.recent_batch_durations.push(sent_at.elapsed());
    });
    match result {
        Ok(answers) => {
            let mut answers: HashMap<String, Campaign> = answers.into_iter().map(|a| (a.service_id, a.answer)).collect();
            let mut rest = Vec::new();
            for request in batch {
                match answers.remove(&request.config.service_id) {
                    Some(answer) => {
                        let _ = request.reply.send(Ok(answer));
                    }
                    None => rest.push(request),
                }
            }
            rest
        }
        Err(e) if e.is_permanent() => {
            if !core.said_one_by_one.swap(true, std::sync::atomic::Ordering::Relaxed) {
                tracing::warn!(node = %core.template.node_id, error = %e,
                    "renew_seats failed, and retrying cannot fix it: this session campaigns one service at a time \
                     (re-run `mysqlleader grant` for the account, so that it may call renew_seats)");
            }
            batch
        }
        Err(e) => {
            for request in batch {
                let _ = request.reply.send(Err(e.clone()));
            }
            Vec::new()
        }
    }
}

/// `items` in chunks of at most `limit`, in order.
fn chunked<T>(items: Vec<T>, limit: usize) -> Vec<Vec<T>> {
    let mut chunks = Vec::new();
    let mut items = items.into_iter().peekable();
    while items.peek().is_some() {
        chunks.push(items.by_ref().take(limit).collect());
    }
    chunks
}
