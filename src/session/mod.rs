//! Sessions: one node's part in the elections of many services, over one call connection, one
//! wake-up connection and one renew for all its seats (the model is etcd's
//! `concurrency.Session`: one lease kept alive by one request, shared by every election of the
//! process).
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
//! 2. **One renew for the batch.** `CALL renew_seats(node, lease, [services])` (at most
//!    [`BATCH_LIMIT`] services per call) renews, in one statement, every seat the node holds
//!    with a valid lease, and tells who leads the other seats another node holds with a valid
//!    lease. Each answered seat gets the answer `campaign` would have given it. The leaders'
//!    renews go first (in the first call), and every renew of the batch before any takeover.
//!    With a node lease (the usual case) the renew is `renew_lease`, which leaves out the seats
//!    seen on the session's own lease (src/session/on_lease.rs) and, for the followers of seats seen on
//!    other nodes' leases, one `watch_leases` reads those leases' rows instead (src/session/watched.rs).
//! 3. **One takeover for the rest.** When two or more seats are left, `CALL
//!    campaign_seats(node, lease, [services])` takes, in one transaction, every one of them that
//!    is vacant or expired and not reserved for another node by a handover (each at its own
//!    next term, with its history row; seats never created are created first, in one
//!    statement), and tells who leads those another node took meanwhile. After a leader's crash
//!    or shutdown, a follower takes all the seats it may take in a few calls: each takes as
//!    many seats as the one before took in a batch window's time (100 the first, at most
//!    [`BATCH_LIMIT`]). These calls run for at most a batch window at a time (at least one per
//!    round); the seats left wait until the calls queued meanwhile were batched and sent.
//! 4. **The rest one by one.** A seat still unanswered (reserved by a handover, locked by
//!    another transaction, taken over, forced, or one whose access is withdrawn) gets its own
//!    `campaign`, which decides it as always, errors included: so a seat whose renew fails steps
//!    down alone. A call whose elector stopped waiting for it (its request timeout or deadline
//!    passed) is dropped unsent. These run for at most a batch window at a time; calls queued
//!    meanwhile go first (step 1 without waiting), so that thousands of takeovers never starve
//!    the renews of the seats the node holds.
//! 5. **Failures.** When `renew_seats` fails for a reason retrying cannot fix (an account
//!    granted before the procedure existed: re-run `grant`), the session says so once and
//!    campaigns one by one, sending `renew_seats` again with every batch (one refused round
//!    trip a batch: a re-run `grant` takes effect at the next); a failed `campaign_seats` leaves its seats to step 4 (and after a
//!    failure retrying cannot fix, the session stops sending it). Any other failure of a renew
//!    batch is every batched elector's answer: it retries, and a leader steps down by its
//!    deadline, as with any failed renew.
//!
//! Every call of the session (batches, one-by-one campaigns, resign, handover, current_leader)
//! runs on the one connection the session keeps, taken from the pool it was given (and given
//! back, for a new one, only after a failure that may have broken it). With fallback servers
//! ([`SessionBuilder::fallback_servers`]: more nodes of a Galera cluster or Group Replication
//! group) a transient failure moves every later call to the next server, in turn, as a plain
//! elector's calls move; the session then keeps one connection there.
//!
//! **The wake-up lock** ([`wakeup`], on by default, `wakeup_lock(false)` switches it off) runs
//! on a second connection: one named lock per node session, held while it leads any seat, and
//! a follower's wait on the lock of the node that leads most of its seats. While that wait is
//! on, the electors following that node stay quiet until the lease they saw can end; a
//! session's shutdown (or crash) wakes them at once, and they take its seats in one
//! `campaign_seats`. A resign or handover of one seat in a session that leads others wakes its
//! followers too (the session blinks its lock: at once, or within [`wakeup::BUSY_WAIT_S`] in a
//! burst of such changes). Seats led by other nodes are polled once per retry interval, as
//! without the lock. So a session holds two
//! server connections whatever the number of its services, plus, rarely, a short-lived one
//! that ends a call or a wait left running.

mod batcher;
pub(crate) mod incidents;
mod on_lease;
mod resigns;
mod watched;
pub(crate) mod wakeup;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mysql_async::Pool;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::config::ElectorConfig;
use crate::elector::task::{Backend, Campaigned, Database};
use crate::elector::{Elector, ElectorBuilder, Event, Stopper};
use crate::error::{Error, Result};
use crate::procedures::{Campaign, CurrentLeader, Resign};
use crate::elector::wakeup::Role;
use wakeup::Hub;

/// The most services one `renew_seats` call carries; a larger batch is sent as several calls
/// (each stays within a few tens of milliseconds on the server: 1,000 seats took 23 ms at the
/// median and 55 ms at p99 with 10,000 services on the benchmark machine; 500 keep the p99
/// well under 50 ms).
pub const BATCH_LIMIT: usize = 500;

/// The most services one `renew_lease` call carries (a session with node leases): it writes one
/// row whatever their number and reads each listed seat once by its key, so a node of 10,000
/// services renews them all in one call (and one row written) per renew interval.
pub const LEASE_BATCH_LIMIT: usize = 10_000;

/// How long a session renews seat by seat after the node lease procedures failed for a reason
/// retrying cannot fix, before it tries them again.
const LEASE_RETRY: Duration = Duration::from_secs(60);
/// What a shutdown allows per elector for its resign, beyond the request timeout: a seat's
/// resign inside `resign_seats` took 0.3 to 0.7 ms on the 2-core test machine (4,016 seats in
/// 2.5 s, MariaDB; 3,362 in 2.8 s, MySQL: docs/benchmarks.md), so 1 ms leaves room for load.
pub const RESIGN_ALLOWANCE: Duration = Duration::from_millis(1);

/// The longest a batch stays open for more calls.
const MAX_BATCH_WINDOW: Duration = Duration::from_millis(500);

/// Builds a [`Session`]: the same settings as an [`ElectorBuilder`], for every elector of the
/// session (one node id, one lease configuration).
#[must_use]
#[derive(Clone)]
pub struct SessionBuilder {
    electors: ElectorBuilder,
    /// A C client's shared session of plain electors ([`SessionBuilder::plain_electors`]).
    plain: bool,
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
    /// Whether the session holds one wake-up lock for all its seats, and waits on the lock of
    /// the node leading most of the seats it follows (on by default; off, followers poll).
    pub fn wakeup_lock(mut self, yes: bool) -> Self { self.electors = self.electors.wakeup_lock(yes); self }
    /// More servers of one cluster (Galera, Group Replication), tried in turn: after a transient
    /// failure (a lost connection, a timeout) every later call of the session goes to the next
    /// server, as a plain elector's do ([`ElectorBuilder::fallback_servers`]). The wake-up lock
    /// stays on the first server (on a cluster it is off: named locks are local to one node).
    pub fn fallback_servers(mut self, pools: impl IntoIterator<Item = Pool>) -> Self {
        self.electors = self.electors.fallback_servers(pools);
        self
    }

    /// A session with the settings of `electors` (its service id aside): the C ABI reads its
    /// configuration into an elector builder.
    pub(crate) fn from_electors(electors: ElectorBuilder) -> Self {
        SessionBuilder { electors, plain: false }
    }

    /// A session for electors that were made as plain ones (a C client's, src/ffi/shared.rs),
    /// which keep what a plain elector has apart from its connections:
    /// * each seat keeps a lease of its own: the session renews with `renew_seats` and takes with
    ///   `campaign_seats`, never with the node lease procedures, so the seat rows and the
    ///   history read as if every elector ran alone;
    /// * each elector logs its own lines (started, stopped, a failing call once per change of
    ///   condition, with its service and term), rather than the session's one line per incident.
    pub(crate) fn plain_electors(mut self) -> Self {
        self.plain = true;
        self
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
        let pools = self.electors.pools();
        let pool = pools.first().cloned().ok_or_else(|| Error::invalid("servers", "a session needs a server"))?;
        let window = (template.renew_interval / 4).min(MAX_BATCH_WINDOW);
        let (hub, pokes) = Hub::new(&template.node_id);
        let (alive, alive_rx) = watch::channel(());
        let (wakeup_on, retry_interval) = (template.wakeup_lock, template.retry_interval);
        let template_node = template.node_id.clone();
        let core = Arc::new(Core {
            db: Database::sticky(pools),
            server: AtomicUsize::new(0),
            template: Arc::new(template),
            window,
            electors: Mutex::new(HashMap::new()),
            said_renew_fallback: AtomicBool::new(false),
            takes_one_by_one: AtomicBool::new(false),
            renews_late: AtomicBool::new(false),
            stats: Mutex::default(),
            renew_durations: crate::metrics::Histogram::default(),
            renew_server_durations: crate::metrics::Histogram::default(),
            lease: Mutex::new(None),
            on_lease: Mutex::default(),
            watched: Mutex::default(),
            watch_unavailable: Mutex::new(None),
            said_watch_unavailable: AtomicBool::new(false),
            leases_unavailable: Mutex::new(None),
            plain: self.plain,
            said_leases_unavailable: AtomicBool::new(false),
            releases: Mutex::new(Vec::new()),
            closing: AtomicBool::new(false),
            stopping: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            hub: wakeup_on.then(|| hub.clone()),
            incidents: incidents::Incidents::start(&template_node),
            _alive: alive,
            epoch: Instant::now(),
        });
        let (queue, requests) = mpsc::unbounded_channel();
        handle.spawn(batcher::batcher(core.clone(), requests));
        let (resigns, resign_requests) = mpsc::unbounded_channel();
        handle.spawn(resigns::resigner(core.clone(), resign_requests));
        if wakeup_on {
            handle.spawn(wakeup::run(pool, hub, wakeup::Signals { pokes, alive: alive_rx }, retry_interval));
        }
        Ok(Session { core, queue, resigns, runtime: handle })
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
    resigns: mpsc::UnboundedSender<resigns::ResignRequest>,
    runtime: tokio::runtime::Handle,
}

impl Session {
    /// Starts building a session whose electors talk to the database of `pool`. The session
    /// uses one connection of `pool` at a time.
    pub fn builder(pool: Pool) -> SessionBuilder {
        // The service id is each elector's; the builder's own is never used.
        SessionBuilder { electors: Elector::builder(pool, "session"), plain: false }
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
        self.start_elector(&service_id)?.ok_or_else(|| Error::invalid("service_id", format!(
            "mysqlleader: this session has a running elector for service_id {service_id} already")))
    }

    /// [`Session::elector_subscribed`], with `None` (no error) when this session has a running
    /// elector for `service_id` already: checked and started under one lock of the session's
    /// electors, so that no other thread can start one between the two.
    pub(crate) fn start_elector(&self, service_id: &str) -> Result<Option<(Elector, broadcast::Receiver<Event>)>> {
        crate::config::check_id("service_id", service_id)?;
        let service_id = service_id.to_owned();
        let config = ElectorConfig { service_id: service_id.clone(), ..(*self.core.template).clone() };
        let mut electors = self.core.electors.lock().unwrap_or_else(|e| e.into_inner());
        if electors.get(&service_id).is_some_and(Stopper::running) {
            return Ok(None);
        }
        let backend = SessionBackend::new(self.core.clone(), self.queue.clone(), self.resigns.clone(), service_id.clone());
        let _guard = self.runtime.enter();
        let (elector, events) = Elector::start_on(backend, config);
        electors.insert(service_id, elector.stopper());
        Ok(Some((elector, events)))
    }

    /// Shuts down every running elector of the session (each steps down at once and resigns
    /// when `resign_on_drop`, as [`Elector::shutdown`]), and waits for their resigns: at most the
    /// request timeout plus [`RESIGN_ALLOWANCE`] per elector, and never beyond one lease
    /// (by then the seats have lapsed anyway) unless the request timeout is longer, whatever the
    /// server does. With a node lease, once every elector has asked to resign, one
    /// `release_lease` gives up every seat on it; the other resigns go in one `resign_seats` per
    /// 500 seats (src/session/resigns.rs), and every one is sent, even after its elector stopped waiting
    /// (each elector stepped down before it resigned): a seat not resigned by the deadline is
    /// resigned as soon as its batch's turn comes, for as long as the runtime runs, and lapses
    /// with its lease only if the process ends first. (Before, the wait was the request timeout
    /// alone and a late resign was dropped: a close of 7,000 seats on a loaded machine left
    /// most of them to lapse, 18.7 s with a 20 s lease.)
    /// The handles of the electors stay usable and report that they stopped. Returns the first
    /// error.
    pub async fn shutdown(self) -> Result<()> {
        if let Some(hub) = &self.core.hub {
            hub.closing();
        }
        self.core.closing.store(true, Ordering::SeqCst);
        let stoppers: Vec<Stopper> = {
            let mut electors = self.core.electors.lock().unwrap_or_else(|e| e.into_inner());
            electors.drain().map(|(_, s)| s).collect()
        };
        self.core.stopping.store(stoppers.iter().filter(|s| s.running()).count(), Ordering::SeqCst);
        let template = &self.core.template;
        let bound = (template.request_timeout + RESIGN_ALLOWANCE * stoppers.len() as u32).min(template.lease.max(template.request_timeout));
        let deadline = Instant::now() + bound;
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
        // The terms the shutdown ended, said now rather than within the next second.
        self.core.incidents.write();
        first_error.map_or(Ok(()), Err)
    }

    /// What the session's calls have cost so far: for a benchmark, or a health page.
    pub fn stats(&self) -> SessionStats {
        self.core.stats.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The session's metrics as one Prometheus text exposition (version 0.0.4), compact: the
    /// session-level series (labelled `node="<node id>"`: the seats it leads, follows and
    /// neither now, its `renew_seats`, `campaign_seats` and `resign_seats` calls, the seats they
    /// carried, and a histogram of each `renew_seats` round trip), then per running elector, by
    /// service id, only `leader_election_master_status{name}` (exact at this moment) and
    /// `mysqlleader_term{name}`: each metric's `HELP` and `TYPE` once. About 2×(the service
    /// id's length) + 75 bytes a service (10,000 services of 10-byte ids: under 1 MB) and
    /// about 3.5 KB for the session's series. See [`crate::metrics`] for the series, and
    /// [`Session::metrics_text_detailed`] for every elector's full series.
    pub fn metrics_text(&self) -> String {
        self.render_metrics(false)
    }

    /// [`Session::metrics_text`] with every running elector's full series, as a plain elector's
    /// [`Elector::metrics_text`] has them (transitions, campaign errors and the campaign
    /// duration histogram too: about 1.5 KB a service). In a session, an elector's campaign
    /// duration includes the wait for its batch (up to a batch window): the session's
    /// `mysqlleader_session_renew_batch_duration_seconds` is the round trip of the renews.
    pub fn metrics_text_detailed(&self) -> String {
        self.render_metrics(true)
    }

    fn render_metrics(&self, detailed: bool) -> String {
        let electors = self.core.electors.lock().unwrap_or_else(|e| e.into_inner());
        let mut running: Vec<(&String, &Stopper)> = electors.iter().filter(|(_, s)| s.running()).collect();
        running.sort_by(|a, b| a.0.cmp(b.0));
        let items: Vec<(&str, &crate::metrics::Metrics, bool)> =
            running.iter().map(|(service, s)| (service.as_str(), s.metrics(), s.is_leader())).collect();
        // The seats gauge, from each elector's published state: leading, following (another
        // node's lease seen by a call that succeeded), or neither.
        let mut seats = [0u64; 3];
        for ((_, stopper), (_, _, leading)) in running.iter().zip(&items) {
            seats[if *leading { 0 } else if stopper.follows() { 1 } else { 2 }] += 1;
        }
        let mut out = String::with_capacity(4096 + items.len() * if detailed { 1600 } else { 100 });
        {
            // Under the stats' lock, which the batcher takes to count a renew and observe its
            // duration: the histogram's count is renew_batches_total.
            let stats = self.core.stats.lock().unwrap_or_else(|e| e.into_inner());
            crate::metrics::render_session(&mut out, &crate::metrics::SessionSeries {
                node: &self.core.template.node_id,
                seats,
                stats: &stats,
                renew_durations: &self.core.renew_durations,
                renew_server_durations: &self.core.renew_server_durations,
            });
        }
        crate::metrics::render_electors(&mut out, &items, detailed);
        out
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
    /// Of those seats, the ones the renews listed for the server to read: a `renew_lease` leaves
    /// out the seats seen on the session's node lease while no takeover touched it
    /// (src/session/on_lease.rs), and a seat listed again after one counts twice.
    pub listed_seats: u64,
    /// `watch_leases` calls sent, and the followed seats they answered from their leaders'
    /// node leases without listing them (src/session/watched.rs).
    pub watch_calls: u64,
    pub watched_seats: u64,
    /// `renew_seats` calls that failed.
    pub batch_failures: u64,
    /// `campaign_seats` calls sent (step 3), the seats they took in all, and those that failed.
    pub take_calls: u64,
    pub taken_seats: u64,
    pub take_failures: u64,
    /// `campaign` calls sent one by one (step 3).
    pub single_campaigns: u64,
    /// `resign_seats` calls sent (a shutdown's resigns, batched: src/session/resigns.rs).
    pub resign_batches: u64,
    /// How long each of the last (at most [`RECENT_BATCHES`]) `renew_seats` calls took, answered
    /// or not, oldest first.
    pub recent_batch_durations: Vec<Duration>,
}

/// How many `renew_seats` durations [`SessionStats`] keeps.
pub const RECENT_BATCHES: usize = 4_096;

/// What the session's electors share.
struct Core {
    /// The servers (the first, then the fallbacks), one call at a time.
    db: Database,
    /// The server every call of the session goes to now: see [`Core::call`].
    server: AtomicUsize,
    /// Every elector's configuration but its service id.
    template: Arc<ElectorConfig>,
    /// How long a batch stays open for more calls (step 1).
    window: Duration,
    /// The electors started by the session, by service.
    electors: Mutex<HashMap<String, Stopper>>,
    /// Whether step 5's fallback for renews was reported.
    said_renew_fallback: AtomicBool,
    /// Whether `campaign_seats` failed for good (step 5): takeovers go one by one.
    takes_one_by_one: AtomicBool,
    /// Whether the last renew that succeeded took longer than the renew interval (said once
    /// when it begins, once when it ends: src/session/batcher.rs, `note_renew_pace`).
    renews_late: AtomicBool,
    stats: Mutex<SessionStats>,
    /// The round trip of every renew call (`renew_lease` or `renew_seats`), observed under
    /// `stats`' lock.
    renew_durations: crate::metrics::Histogram,
    /// The time each `renew_lease` took on the server, by its clock (as its answer tells),
    /// observed under `stats`' lock.
    renew_server_durations: crate::metrics::Histogram,
    /// The node lease the session's seats hang on (sql/V15__node_leases.sql), once granted:
    /// `grant_lease` before the first renew or takeover, and again after one that found it
    /// ended. None: none yet, or it ended.
    lease: Mutex<Option<u64>>,
    /// The seats seen on that lease, which a renew may leave out (src/session/on_lease.rs).
    on_lease: Mutex<on_lease::OnLease>,
    /// The followed seats seen on their leaders' node leases, answered from those leases'
    /// rows rather than listed (src/session/watched.rs).
    watched: Mutex<watched::Watched>,
    /// When `watch_leases` last failed for a reason retrying cannot fix (a schema or grant
    /// before it): for [`LEASE_RETRY`] from then followed seats are listed, as before.
    watch_unavailable: Mutex<Option<Instant>>,
    /// Whether that was said (once per session, at WARN).
    said_watch_unavailable: AtomicBool,
    /// When the node lease procedures last failed for a reason retrying cannot fix (a schema
    /// before V15, an account granted before them): for [`LEASE_RETRY`] from then the session
    /// renews with `renew_seats` and takes with `campaign_seats`, each seat on its own lease, as
    /// before; then it tries the lease procedures again (a re-run `grant` takes effect).
    leases_unavailable: Mutex<Option<Instant>>,
    /// Whether that was said (once per session, at WARN).
    said_leases_unavailable: AtomicBool,
    /// A session of plain electors ([`SessionBuilder::plain_electors`]): it never asks for a
    /// node lease, its resigns go without waiting for more, and its electors log on their own.
    pub(super) plain: bool,
    /// Set by [`Session::shutdown`]: every resign asked for from then on is sent, also one whose
    /// elector stopped waiting for it (src/session/resigns.rs).
    closing: AtomicBool,
    /// How many running electors [`Session::shutdown`] stopped: the resigns a release of the
    /// node lease waits for (src/session/resigns.rs, step 0).
    stopping: AtomicUsize,
    /// Services whose elector has ended: the next `renew_lease` lists them without a held term,
    /// so that a seat of theirs still on the lease is let go of (it ends with its own lease
    /// rather than live on with the session's).
    releases: Mutex<Vec<String>>,
    /// The number of [`SessionBackend`]s alive: of electors whose task runs.
    running: AtomicUsize,
    /// The wake-up lock's side, when it is on.
    hub: Option<Arc<Hub>>,
    /// The session's log: its electors report to it, it writes one line per incident.
    incidents: Arc<incidents::Incidents>,
    /// Dropped with the core: ends the wake-up lock's task.
    _alive: watch::Sender<()>,
    /// When the session started: its leaders renew on ticks one renew interval apart from
    /// here ([`SessionBackend::renew_at`]).
    epoch: Instant,
}

impl Core {
    /// How many electors of the session still run (an upper bound on a batch's size): their
    /// backends, each owned by its elector's task until the task ends. O(1): the batcher asks
    /// once per queued call.
    fn running(&self) -> usize {
        self.running.load(Ordering::Relaxed)
    }

    /// One call of the session, on the server its calls go to now. A transient failure (a lost
    /// or refused connection, a timeout) there moves every later call to the next server (the
    /// first after the last), as a plain elector with fallbacks does: on a cluster (Galera,
    /// Group Replication) any node settles the election; a server that is not the one to use
    /// refuses calls at once, and the session moves on. Said at INFO once per move.
    async fn call<'a, T, F>(&'a self, call: impl FnOnce(&'a Database, usize) -> F) -> Result<T>
    where
        F: std::future::Future<Output = Result<T>> + 'a,
    {
        let server = self.server.load(Ordering::Relaxed);
        let result = call(&self.db, server).await;
        if let Err(e) = &result {
            let servers = self.db.servers();
            if e.is_transient() && servers > 1 {
                let next = (server + 1) % servers;
                if self.server.compare_exchange(server, next, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
                    tracing::info!(node = %self.template.node_id, server = next, error = %e,
                                   "a session's call failed: its calls go to the next server");
                }
            }
        }
        result
    }

    /// Whether the session renews and takes on a node lease now (see `leases_unavailable`).
    fn leases_usable(&self) -> bool {
        !self.plain && self.leases_unavailable.lock().unwrap_or_else(|e| e.into_inner()).is_none_or(|at| at.elapsed() >= LEASE_RETRY)
    }

    /// Whether a renew may answer followed seats from their leaders' leases now (see
    /// `watch_unavailable`).
    fn watch_usable(&self) -> bool {
        self.watch_unavailable.lock().unwrap_or_else(|e| e.into_inner()).is_none_or(|at| at.elapsed() >= LEASE_RETRY)
    }

    fn count(&self, update: impl FnOnce(&mut SessionStats)) {
        update(&mut self.stats.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

/// One elector's `campaign`, queued for a batch.
struct Request {
    config: Arc<ElectorConfig>,
    /// Whether the elector led when it asked (a renew): the batch sends these first.
    leading: bool,
    /// The term the elector holds (0: none): `renew_lease` keeps on the session's lease only
    /// the seats held at the term their elector holds, and `renew_seats` renews a lease of this
    /// node id at any term, so an answer counts as this elector's only at this term (issue 39);
    /// any other goes on to a campaign of its own, which carries it.
    held: u64,
    /// Whether a takeover left this seat out once already (batcher, step 3): the next time it
    /// goes to a campaign of its own.
    left_out: bool,
    reply: oneshot::Sender<Result<Campaigned>>,
}

/// The session's side of one elector: `campaign` goes to the batcher; resign, handover and
/// current_leader go to the session's connection one by one; the wake-up lock is the session's.
struct SessionBackend {
    core: Arc<Core>,
    queue: mpsc::UnboundedSender<Request>,
    /// The session's resigns, batched (src/session/resigns.rs).
    resigns: mpsc::UnboundedSender<resigns::ResignRequest>,
    service_id: String,
    /// Whether this elector leads, as the loop last told (`set_role`).
    leading: AtomicBool,
    /// The wakes of the session's wake-up lock, for this elector's followed node.
    wakes: Option<tokio::sync::Mutex<broadcast::Receiver<Option<Arc<str>>>>>,
}

impl SessionBackend {
    fn new(core: Arc<Core>, queue: mpsc::UnboundedSender<Request>, resigns: mpsc::UnboundedSender<resigns::ResignRequest>,
           service_id: String) -> Self {
        core.running.fetch_add(1, Ordering::Relaxed);
        let wakes = core.hub.as_ref().map(|hub| tokio::sync::Mutex::new(hub.subscribe()));
        SessionBackend { core, queue, resigns, service_id, leading: AtomicBool::new(false), wakes }
    }

    /// A resign through the session's resigner (src/session/resigns.rs); `may_hold`: whether the
    /// node may hold the seat (its step 4).
    async fn batched_resign(&self, config: &Arc<ElectorConfig>, may_hold: bool) -> Result<Resign> {
        let (reply, answer) = oneshot::channel();
        let by_shutdown = self.core.closing.load(Ordering::SeqCst);
        if self.resigns.send(resigns::ResignRequest { config: config.clone(), may_hold, by_shutdown, reply }).is_err() {
            return self.core.call(|db, server| db.resign(server, config)).await;
        }
        answer.await.unwrap_or_else(|_| Err(Error::stopped("the session's resigner has ended")))
    }

    /// Notes who leads the seat after an answer, for the wake-up lock (the hub learns which node
    /// this seat follows). Wakes received meanwhile stay: one may be newer than the answer (a
    /// stale one costs one more look at the seat, in a batch).
    ///
    /// A seat this node could not take although nobody leads it is barred by a handover (reserved
    /// for a node, until the node that led it has acknowledged): it still follows the node it
    /// followed, whose release of the lock after its acknowledgement is the moment to look again.
    /// (Forgetting it, the elector polled: an operator's handover to this node, looked at before
    /// the acknowledgement, waited the retry interval.)
    fn note_answer(&self, answer: &Campaign) {
        let Some(hub) = &self.core.hub else { return };
        let leader = match (answer.is_leader, answer.leader_id.as_deref()) {
            (true, _) => None,
            (false, Some(leader)) => Some(leader),
            (false, None) => return,
        };
        hub.set_followed(&self.service_id, leader);
    }
}

impl Drop for SessionBackend {
    fn drop(&mut self) {
        self.core.running.fetch_sub(1, Ordering::Relaxed);
        // The elector's task has ended: a seat of it that still hangs on the session's lease
        // must not live on with the lease (its resign may have failed, or not been sent).
        if self.core.leases_usable() {
            self.core.releases.lock().unwrap_or_else(|e| e.into_inner()).push(self.service_id.clone());
        }
        self.core.watched.lock().unwrap_or_else(|e| e.into_inner()).forget(&self.service_id);
        if let Some(hub) = &self.core.hub {
            hub.set_followed(&self.service_id, None);
            hub.set_leading(&self.service_id, false);
        }
    }
}

impl Backend for SessionBackend {
    /// One, as the elector's loop sees it: the session moves all its calls to a fallback server
    /// at once ([`Core::call`]), not each elector on its own.
    fn servers(&self) -> usize {
        1
    }

    fn incidents(&self) -> Option<&incidents::Incidents> {
        (!self.core.plain).then_some(&*self.core.incidents)
    }

    async fn campaign(&self, _server: usize, config: &Arc<ElectorConfig>, held: u64) -> Result<Campaigned> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .send(Request { config: config.clone(), leading: self.leading.load(Ordering::SeqCst), held, left_out: false, reply })
            .map_err(|_| Error::stopped("the session's batcher has ended"))?;
        let answer = answer.await.unwrap_or_else(|_| Err(Error::stopped("the session's batcher has ended")));
        if let Ok(c) = &answer {
            self.note_answer(&c.answer);
        }
        answer
    }

    async fn current_leader(&self, _server: usize, config: &Arc<ElectorConfig>) -> Result<CurrentLeader> {
        self.core.call(|db, server| db.current_leader(server, config)).await
    }

    /// Goes to the session's resigner, which batches the resigns that come together (a
    /// shutdown's) into one `resign_seats` (src/session/resigns.rs).
    async fn resign(&self, _server: usize, config: &Arc<ElectorConfig>) -> Result<Resign> {
        self.batched_resign(config, self.leading.load(Ordering::SeqCst)).await
    }

    /// Batched as any resign: a session of thousands of new electors sends one `resign_seats`
    /// per batch before its first campaigns. The node may hold any of these seats (a previous
    /// process's terms), so a seat the batch cannot settle gets its own `resign`.
    async fn end_predecessor(&self, _server: usize, config: &Arc<ElectorConfig>) -> Result<Resign> {
        self.batched_resign(config, true).await
    }

    /// A handover this node made: from now on the seat follows the named node, whose lock the
    /// wake-up task learns while that node leads the seat. (It learnt it only at the seat's next
    /// look, a second later: an operator's handover back to this node in that second left the
    /// name unknown, the seat led by nobody, and this node waited its retry interval.)
    async fn resign_to(&self, _server: usize, config: &Arc<ElectorConfig>, to: &str) -> Result<Resign> {
        let answer = self.core.call(|db, server| db.resign_to(server, config, to)).await;
        if let (Ok(Resign { resigned: true, .. }), Some(hub)) = (&answer, &self.core.hub) {
            hub.set_followed(&self.service_id, Some(to));
        }
        answer
    }

    fn set_role(&self, role: Role) {
        let Some(hub) = &self.core.hub else { return };
        let leading = role == Role::Leading;
        if self.leading.swap(leading, Ordering::SeqCst) != leading {
            // Called after a resign or handover has committed: the hub may let go of (or blink)
            // the session's lock now.
            hub.set_leading(&self.service_id, leading);
        }
    }

    /// Resolves when the session's wake-up lock wakes the followers of this seat's leader (or
    /// every follower, when the lock's task re-plans).
    async fn woken(&self) {
        let (Some(wakes), Some(hub)) = (&self.wakes, &self.core.hub) else { return std::future::pending().await };
        let mut wakes = wakes.lock().await;
        loop {
            match wakes.recv().await {
                Ok(None) | Err(broadcast::error::RecvError::Lagged(_)) => return,
                Ok(Some(node)) if hub.follows(&self.service_id, &node) => return,
                Ok(Some(_)) => {}
                Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
            }
        }
    }

    /// The batcher resigns a seat a campaign took for an elector that stopped waiting
    /// (steps 3 and 4): no resign of the elector's own.
    fn resigns_unanswered_campaigns(&self) -> bool {
        false
    }

    /// The session's last tick at or before `planned`, when it is still to come: every leader
    /// of the session renews on the same ticks (one renew interval apart from the session's
    /// start), so that one batch carries all their renews. Each leader's next renew is planned
    /// one renew interval after it sent the last one, and those times drift apart: the seats a
    /// takeover of thousands answered over seconds, and a renew that waited for its batch,
    /// renew as far apart ever after. At 10,000 seats a leader's renews went out in about 8
    /// calls per renew interval, each writing the lease's row (the benchmark's rows written per
    /// node and interval: 2.96, against 1.0). A renew at a tick is at most one interval early,
    /// which only makes it more frequent; its deadline still counts from its own send.
    fn renew_at(&self, planned: Instant) -> Instant {
        let interval = self.core.template.renew_interval.as_nanos().max(1);
        let since = planned.saturating_duration_since(self.core.epoch).as_nanos();
        let tick = self.core.epoch + Duration::from_nanos((since / interval * interval) as u64);
        // The last tick at or before `planned` (so never later than it); a tick already past
        // would renew at once, so the planned time stands then.
        if tick > Instant::now() { tick } else { planned }
    }

    /// Up to a lease (at least the request timeout): a follower's call waits its turn behind
    /// the session's renews and its takeovers of other seats, and after a crash of a node
    /// that led thousands of them that queue takes seconds. With the request timeout alone,
    /// most of those followers gave up before their seat's turn came, asked again, and were
    /// queued again at the back; a seat taken just after its follower gave up had to be
    /// resigned. Every call of the queue is bounded on its own ([`Core::call`]), so a
    /// follower still hears of a failure; and it leads nothing while it waits.
    fn follower_wait(&self, config: &ElectorConfig) -> Duration {
        config.request_timeout.max(config.lease)
    }

    fn watching(&self) -> bool {
        self.core.hub.as_ref().is_some_and(|hub| hub.watching(&self.service_id))
    }
}

