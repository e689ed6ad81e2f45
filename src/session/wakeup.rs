//! A session's wake-up lock: one named lock per node session, not one per service (issue
//! "Sessions": quiet followers at scale).
//!
//! While a session leads any seat it holds the lock of its node
//! (`leader_election_node_wakeup_name`: a name only accounts allowed on a service that node
//! leads can learn). A session that follows seats waits on the lock of the node that leads most
//! of them, on a connection of its own (the session's second and last one). The lease stays the
//! only source of truth: a wake-up only moves campaigns earlier.
//!
//! The task, one loop on that connection:
//!
//! 1. **Hold or let go.** It holds its own lock while the session leads a seat, and releases it
//!    once the session leads none (after the last resign committed: a session's shutdown), at
//!    once: a wait in progress is ended with `KILL QUERY` over a short-lived connection.
//! 2. **Blink.** After a seat of a session that still leads others stops being led (a resign, a
//!    handover, a lost seat), it releases its lock and takes it again, so that the followers
//!    waiting on it wake and look at their seats (one batched call each).
//! 3. **Follow.** It picks the node that leads most of the seats the session follows (the
//!    others are polled as without a lock), learns that node's lock name once, and, when the
//!    lock is held, waits on it (for at most [`FOLLOW_WAIT_S`], one statement) while the
//!    session's electors that follow that node count as watched (they look again only when the
//!    lease they saw can end). A change of steps 1–2 during the wait ends it on the server
//!    (`KILL QUERY` over a short-lived connection); for [`BUSY`] after that, waits last
//!    [`BUSY_WAIT_S`] and changes wait for their end instead of a `KILL` each.
//!    When the wait is granted the leader let go (resign, shutdown, crash: its connection
//!    closed), so it releases the lock at once and wakes those electors: they campaign, in one
//!    batched call. After a wait ended early or ran out they look as the next wait begins, and
//!    once more [`GAP_LOOK_AGAIN`] into it: the leader may have blinked in between, with nobody
//!    waiting; so they do after a lock found free (its node may take it back and blink again
//!    before the next wait is queued). A lock nobody holds is looked at
//!    again after 100 ms, doubling up to the retry interval.
//!    A wait the server refuses because it would close a cycle of waits (this node holds its
//!    lock, and the node it follows waits on it: each leads seats the other follows) is no
//!    error: the lock held stays held and the other node's wait goes on. Its followers are
//!    woken to look once and then poll as without the lock, and this node waits on that lock
//!    again only after a pause (100 ms, doubling up to the retry interval, back to 100 ms after
//!    a wait that was not refused). Before, such a refusal counted as a lost lock: the
//!    connection was closed, letting go of the node's own lock, for a pause of up to 60 s (seen
//!    in the fleet test: the node leading most seats had no wake-up connection at its crash).
//! 4. **Errors.** After an error (a lost connection) the electors poll as without the lock, and
//!    the task starts again after a pause (1 s, doubling up to 60 s). Where named locks cannot
//!    wake anyone (Galera: they are local to one node), or where the account may not learn
//!    names (granted before the routine existed: re-run `grant`), it switches itself off.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mysql_async::Pool;
use tokio::sync::{broadcast, mpsc, watch};
use tokio::time::Instant;

use crate::procedures;
use crate::wakeup::{LockConn, Restarts, Waited, RECHECK};

/// The longest single wait on another node's lock, in seconds, when nothing happened lately: a
/// change that needs the connection (this session's first seat, a blink, its last seat let go)
/// ends the wait on the server at once (`KILL QUERY`, over a short-lived connection).
pub(crate) const FOLLOW_WAIT_S: u32 = 30;
/// The wait after such a change, for [`BUSY`]: more changes are then handled when the wait ends
/// (within a second), without a `KILL` each (a node handing over many seats one by one).
pub(crate) const BUSY_WAIT_S: u32 = 1;
const BUSY: Duration = Duration::from_secs(5);
/// How long a blink waits to take its own lock back while followers pass it on (milliseconds,
/// usually).
const BLINK_WAIT_S: u32 = 1;
/// How long a poke waits for more before the task plans (see [`Signals::next`]).
const COALESCE: Duration = Duration::from_millis(20);
/// When the followers look a second time after a gap (step 3): by then the wait that follows the
/// gap is queued on the server, so a blink of the leader's in the gap, which the first look (sent
/// as the wait is) may have read before, is seen now.
const GAP_LOOK_AGAIN: Duration = Duration::from_millis(250);

/// What the session's electors tell the task, and what it tells them.
pub(crate) struct Hub {
    node_id: String,
    seats: Mutex<Seats>,
    /// The node whose lock a wait is on now, with the lock held by it (step 3).
    watching: Mutex<Option<Arc<str>>>,
    /// Wakes the electors following a node (`Some`), or every follower (`None`: re-plan).
    wakes: broadcast::Sender<Option<Arc<str>>>,
    /// Pokes the task: a seat's leadership changed (capacity 1: pokes coalesce).
    poke: mpsc::Sender<()>,
    /// Set by the session's shutdown: no blinks.
    closing: AtomicBool,
}

#[derive(Default)]
struct Seats {
    /// The services this session leads now.
    leading: HashSet<String>,
    /// The services this session follows, with the node that leads each.
    followed: HashMap<String, Arc<str>>,
    /// A seat stopped being led while others are still led: blink (step 2).
    blink: bool,
}

impl Hub {
    /// The hub of a session of `node_id`, and the receiver of its pokes for [`run`].
    pub(crate) fn new(node_id: &str) -> (Arc<Hub>, mpsc::Receiver<()>) {
        let (poke, pokes) = mpsc::channel(1);
        let (wakes, _) = broadcast::channel(64);
        let hub = Hub {
            node_id: node_id.to_string(),
            seats: Mutex::default(),
            watching: Mutex::new(None),
            wakes,
            poke,
            closing: AtomicBool::new(false),
        };
        (Arc::new(hub), pokes)
    }

    fn seats(&self) -> std::sync::MutexGuard<'_, Seats> {
        self.seats.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn poke(&self) {
        let _ = self.poke.try_send(());
    }

    /// A receiver of wakes for one elector.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Option<Arc<str>>> {
        self.wakes.subscribe()
    }

    /// `service` is led by this session now (`true`) or no longer.
    pub(crate) fn set_leading(&self, service: &str, leading: bool) {
        let mut seats = self.seats();
        let changed = if leading {
            seats.followed.remove(service);
            seats.leading.insert(service.to_string())
        } else {
            let was = seats.leading.remove(service);
            if was && !seats.leading.is_empty() {
                seats.blink = true;
            }
            was
        };
        drop(seats);
        if changed {
            self.poke();
        }
    }

    /// `service` is followed, led by `leader` (`None`: no valid leader, or not followed). A
    /// change pokes the task: the node to follow may change.
    pub(crate) fn set_followed(&self, service: &str, leader: Option<&str>) {
        let mut seats = self.seats();
        let changed = match leader {
            Some(node) if node != self.node_id => {
                let new = seats.followed.get(service).is_none_or(|n| &**n != node);
                if new {
                    seats.followed.insert(service.to_string(), Arc::from(node));
                }
                new
            }
            _ => seats.followed.remove(service).is_some(),
        };
        drop(seats);
        if changed {
            self.poke();
        }
    }

    /// The session shuts down: no more blinks (each resign would wake the followers again); the
    /// lock is let go once, after the last resign.
    pub(crate) fn closing(&self) {
        self.closing.store(true, Ordering::SeqCst);
    }

    /// Whether `service` is followed, led by `node` (the last answer's leader).
    pub(crate) fn follows(&self, service: &str, node: &str) -> bool {
        self.seats().followed.get(service).is_some_and(|n| &**n == node)
    }

    /// Whether a wait is on the lock of the node that leads `service`, held by it now: that
    /// node's resign or crash wakes the followers of its seats.
    pub(crate) fn watching(&self, service: &str) -> bool {
        let Some(watched) = self.watching.lock().unwrap_or_else(|e| e.into_inner()).clone() else { return false };
        self.follows(service, &watched)
    }

    /// Whether a node's own lock is being watched by this task now (see [`Hub::watching`]).
    fn watching_node(&self, node: &str) -> bool {
        self.watching.lock().unwrap_or_else(|e| e.into_inner()).as_deref() == Some(node)
    }

    /// Whether a blink is due (step 2): a seat stopped being led while others still are, and
    /// the session is not shutting down.
    fn blink_due(&self, seats: &Seats) -> bool {
        seats.blink && !seats.leading.is_empty() && !self.closing.load(Ordering::SeqCst)
    }

    fn set_watching(&self, node: Option<Arc<str>>) {
        *self.watching.lock().unwrap_or_else(|e| e.into_inner()) = node;
    }

    /// Wakes the followers of `node` (every follower with `None`). The watch is cleared first,
    /// so an elector that decides after the wake does not count itself watched.
    fn wake(&self, node: Option<Arc<str>>) {
        self.set_watching(None);
        let _ = self.wakes.send(node);
    }

    /// Whether a change waits for the connection (step 1 or 2: this session's first seat, or a
    /// blink), and whether the session let go of its last seat while `holding` its lock.
    fn needs_connection(&self, holding: bool) -> (bool, bool) {
        let seats = self.seats();
        let leads = !seats.leading.is_empty();
        let blink = self.blink_due(&seats);
        (blink || (leads && !holding), holding && !leads)
    }

    /// What the task should do now: lead (with a seat to ask the name with), blink, and the node
    /// to follow (with a seat it leads).
    fn plan(&self) -> Plan {
        let mut seats = self.seats();
        let blink = self.blink_due(&seats);
        seats.blink = false;
        let led = seats.leading.iter().next().cloned();
        let mut counts: HashMap<&Arc<str>, (usize, &String)> = HashMap::new();
        for (service, node) in &seats.followed {
            counts.entry(node).or_insert((0, service)).0 += 1;
        }
        let follow = counts
            .into_iter()
            .max_by(|a, b| a.1 .0.cmp(&b.1 .0).then_with(|| b.0.cmp(a.0)))
            .map(|(node, (_, service))| (node.clone(), service.clone()));
        Plan { led, blink, follow }
    }
}

struct Plan {
    /// A seat this session leads, if any.
    led: Option<String>,
    blink: bool,
    /// The node to follow, and a seat it leads.
    follow: Option<(Arc<str>, String)>,
}

/// What wakes the task: a poke, or the end of the session (`alive`'s sender is dropped with the
/// session's core, once the session and all its electors are gone).
pub(crate) struct Signals {
    pub(crate) pokes: mpsc::Receiver<()>,
    pub(crate) alive: watch::Receiver<()>,
}

impl Signals {
    /// The next poke (`true`), or `false` when the session is gone. Pokes that follow within
    /// [`COALESCE`] come with it: a plan looks at every seat of the session, so thousands of
    /// electors starting or changing at once are planned for a few times, not once each.
    async fn next(&mut self) -> bool {
        tokio::select! {
            poke = self.pokes.recv() => {
                if poke.is_none() {
                    return false;
                }
                tokio::time::sleep(COALESCE).await;
                while self.pokes.try_recv().is_ok() {}
                true
            }
            gone = self.alive.changed() => gone.is_ok(),
        }
    }

    /// Sleeps `pause` or until a poke; false when the session is gone.
    async fn sleep(&mut self, pause: Duration) -> bool {
        tokio::select! {
            more = self.next() => more,
            () = tokio::time::sleep(pause) => true,
        }
    }
}

/// The task: steps 1–4 of the module documentation, until the session and all its electors
/// are gone.
pub(crate) async fn run(pool: Pool, hub: Arc<Hub>, mut signals: Signals, retry_interval: Duration) {
    let mut restarts = Restarts::new();
    let mut names = Names::default();
    loop {
        let started = Instant::now();
        let outcome = serve(&pool, &hub, &mut signals, &mut names, retry_interval).await;
        // Followers that relied on the lock poll from now on.
        hub.wake(None);
        let Err(e) = outcome else {
            return;
        };
        let (pause, first) = restarts.after_failed_run(started);
        if first {
            tracing::info!(node = %hub.node_id, error = %e, pause_ms = pause.as_millis() as u64,
                           "session's wake-up lock lost; followers poll until it is back");
        } else {
            tracing::debug!(node = %hub.node_id, error = %e, "session's wake-up lock still unavailable; followers poll");
        }
        let until = Instant::now() + pause;
        while Instant::now() < until {
            if !signals.sleep(until - Instant::now()).await {
                return;
            }
        }
    }
}

/// The lock names learnt so far: this node's, and others' by node id.
#[derive(Default)]
struct Names {
    own: Option<String>,
    others: HashMap<Arc<str>, String>,
}

/// Serves the lock until the session is gone (`Ok`), where it cannot work (`Ok`, said once),
/// or the first error.
async fn serve(
    pool: &Pool,
    hub: &Hub,
    signals: &mut Signals,
    names: &mut Names,
    retry_interval: Duration,
) -> crate::Result<()> {
    let conn = pool.get_conn().await.map_err(|e| crate::Error::from_pool(pool, e))?;
    let Some(mut lock) = LockConn::open(conn).await? else {
        tracing::info!(node = %hub.node_id, "named locks are local to one Galera node or Group Replication member: the session's wake-up lock is off");
        while signals.next().await {}
        return Ok(());
    };
    let recheck = retry_interval.min(RECHECK);
    let mut look_again = recheck;
    let mut holding = false;
    // The lock a wait ended on without it being granted or ended early: still held, no need to
    // look before the next wait.
    let mut still_held: Option<String> = None;
    // When a wait was last ended early or a blink done (the busy period starts).
    let mut busy_since: Option<Instant> = None;
    // A wait was ended early (this session's own change): the next wait's followers look once.
    let mut gap = false;
    // The pause before a wait on a lock after a wait refused for a cycle (step 3).
    let mut refused_for = recheck;
    let outcome: crate::Result<()> = async {
        loop {
            let plan = hub.plan();
            // 1. Hold or let go of this node's lock.
            match (&plan.led, holding) {
                (Some(service), false) => {
                    if let Some(name) = own_name(lock.conn(), names, service, &hub.node_id).await? {
                        // A former process of this node may hold it for a moment: try again
                        // at the next plan.
                        holding = lock.get(&name, 0).await?;
                    }
                }
                (None, true) => {
                    if let Some(name) = &names.own {
                        lock.release(name).await?;
                    }
                    holding = false;
                }
                _ => {}
            }
            // 2. Blink: followers wake and look at their seats.
            if plan.blink && holding {
                busy_since = Some(Instant::now());
                if let Some(name) = names.own.clone() {
                    lock.release(&name).await?;
                    holding = lock.get(&name, BLINK_WAIT_S).await?;
                }
            }
            // 3. Follow the node that leads most of the followed seats.
            let Some((node, service)) = plan.follow else {
                hub.set_watching(None);
                // Holding: speak before wait_timeout. Leading without the lock (another
                // connection of this node id held it): try again soon, then less often.
                let idle = if holding {
                    lock.keepalive()
                } else if plan.led.is_some() {
                    let pause = look_again;
                    look_again = (look_again * 2).min(retry_interval.max(recheck));
                    pause
                } else {
                    Duration::from_secs(3600)
                };
                if let Some(false) = lock.idle(idle, holding, signals.next()).await? {
                    return Ok(());
                }
                continue;
            };
            let Some(name) = other_name(lock.conn(), names, &node, &service).await? else {
                // The node no longer leads that seat: plan again shortly (the seat's elector
                // learns who leads at its next look, and tells the hub).
                if !signals.sleep(look_again).await { return Ok(()) }
                look_again = (look_again * 2).min(retry_interval.max(recheck));
                continue;
            };
            let held = still_held.take().as_deref() == Some(name.as_str()) || lock.held(&name).await?;
            if !held {
                // Nobody holds it: if it was held a moment ago, its node let go between two
                // waits (a resign, a shutdown, a crash): wake its followers, as a granted wait would.
                if hub.watching_node(&node) {
                    hub.wake(Some(node.clone()));
                }
                // The node may take its lock back and blink again (a resign, then a handover of
                // another seat) before the next wait is queued: that wait's followers look once.
                gap = true;
                if !signals.sleep(look_again).await { return Ok(()) }
                look_again = (look_again * 2).min(retry_interval.max(recheck));
                continue;
            }
            look_again = recheck;
            hub.set_watching(Some(node.clone()));
            // Between a wait ended early and the next one, the node may have blinked (released
            // and taken back its lock within a round trip) with nobody waiting to notice: its
            // followers look once, in one batch, which goes through the session's batcher and
            // its connection and so reads the seats after the new wait below is queued (a
            // round trip): a change of the leader's in the gap is seen by the look, a later
            // one by the wait.
            // Seen on MySQL: this session took a seat, its wait was ended to take its own lock,
            // and the leader's handover of another seat, in that gap, woke nobody.
            // Under load that round trip is not a bound: they look a second time
            // [`GAP_LOOK_AGAIN`] into the wait (seen under the whole suite's load on MariaDB: a
            // handover right after this session took a seat left the named node waiting for
            // its retry interval).
            let look_again_for = std::mem::take(&mut gap).then(|| {
                hub.wake(Some(node.clone()));
                node.clone()
            });
            let busy = busy_since.is_some_and(|t| t.elapsed() < BUSY);
            let wait_s = if busy { BUSY_WAIT_S } else { FOLLOW_WAIT_S };
            let Follow { got, gone, ended, cycle } =
                wait_unless_released(&mut lock, hub, signals, &name, wait_s, holding, !busy, look_again_for).await?;
            if cycle {
                if gone {
                    return Ok(());
                }
                // Refused at once: the followers that counted themselves watched look once and
                // poll from now on; the lock is waited on again after the pause.
                hub.wake(Some(node.clone()));
                tracing::debug!(node = %hub.node_id, leader = %node, pause_ms = refused_for.as_millis() as u64,
                                "the wait on the leader's wake-up lock would close a cycle of waits; its followers poll");
                if !signals.sleep(refused_for).await { return Ok(()) }
                refused_for = (refused_for * 2).min(retry_interval.max(recheck));
                continue;
            }
            refused_for = recheck;
            if ended {
                busy_since = Some(Instant::now());
                gap = true;
            } else if !got {
                // The wait ran out with the lock still held: a blink of the leader between this
                // wait and the next (a release and a take back within a round trip) would wake
                // nobody, so the next wait's followers look once too (one batched call per wait:
                // every second while busy, every FOLLOW_WAIT_S otherwise). Seen on MySQL under
                // load: a handover in that gap left the named node waiting for its retry interval.
                still_held = Some(name.clone());
                gap = true;
            }
            if got {
                lock.release(&name).await?;
                tracing::debug!(node = %hub.node_id, leader = %node, "woken by the wake-up lock of the leader's session");
                hub.wake(Some(node));
            }
            if gone {
                return Ok(());
            }
        }
    }
    .await;
    lock.close().await;
    match outcome {
        Err(e) if e.is_permanent() => {
            tracing::info!(node = %hub.node_id, error = %e,
                "the session's wake-up lock is off: its name is not available to this account (re-run `mysqlleader grant`); followers poll");
            hub.wake(None);
            while signals.next().await {}
            Ok(())
        }
        other => other,
    }
}

/// This node's lock name, asked once with a seat it leads; `None` when the seat was lost
/// meanwhile (45001: asked again at the next plan).
async fn own_name(conn: &mut mysql_async::Conn, names: &mut Names, service: &str, node_id: &str) -> crate::Result<Option<String>> {
    if names.own.is_none() {
        match procedures::node_wakeup_lock_name(conn, service, node_id).await {
            Ok(name) => names.own = Some(name),
            Err(crate::Error::NotLeader { .. }) => return Ok(None),
            Err(e) => return Err(e),
        }
    }
    Ok(names.own.clone())
}

/// `node`'s lock name, asked once with a seat it leads; `None` when it no longer leads that seat.
async fn other_name(conn: &mut mysql_async::Conn, names: &mut Names, node: &Arc<str>, service: &str) -> crate::Result<Option<String>> {
    if let Some(name) = names.others.get(node) {
        return Ok(Some(name.clone()));
    }
    match procedures::node_wakeup_lock_name(conn, service, node).await {
        Ok(name) => {
            names.others.insert(node.clone(), name.clone());
            Ok(Some(name))
        }
        Err(crate::Error::NotLeader { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// How a wait ended: `got` the lock granted, `gone` the session ended meanwhile, `ended` the
/// wait ended early on the server, `cycle` the wait refused because it would close a cycle of
/// waits ([`crate::wakeup::is_wait_cycle`]).
struct Follow {
    got: bool,
    gone: bool,
    ended: bool,
    cycle: bool,
}

/// One wait of `wait_s` seconds on another node's lock. A change that needs the connection
/// (`hub.needs_connection`) ends it on the server at once when `may_end` (outside a busy period)
/// or when the session let go of its last seat (a shutdown must wake followers at once); so does
/// the end of the session. Other pokes wait for the wait's end.
#[allow(clippy::too_many_arguments)]
async fn wait_unless_released(
    lock: &mut LockConn,
    hub: &Hub,
    signals: &mut Signals,
    name: &str,
    wait_s: u32,
    holding: bool,
    may_end: bool,
    mut look_again_for: Option<Arc<str>>,
) -> crate::Result<Follow> {
    let mut gone = false;
    // Pokes not acted on are handled at the next plan: one is put back when the wait ends (not
    // at once, which would wake this loop again and spin).
    let mut poked = false;
    let end = async {
        let look_again = tokio::time::sleep(GAP_LOOK_AGAIN);
        tokio::pin!(look_again);
        loop {
            tokio::select! {
                () = &mut look_again, if look_again_for.is_some() => hub.wake(look_again_for.take()),
                more = signals.next() => {
                    gone = !more;
                    poked |= more;
                    let (needed, released) = hub.needs_connection(holding);
                    if gone || released || (needed && may_end) {
                        return;
                    }
                }
            }
        }
    };
    let waited = lock.wait_unless(name, wait_s, end).await;
    if poked {
        hub.poke();
    }
    match waited {
        Err(e) if crate::wakeup::is_wait_cycle(&e) => Ok(Follow { got: false, gone, ended: false, cycle: true }),
        waited => waited.map(|Waited { got, ended }| Follow { got, gone, ended, cycle: false }),
    }
}
