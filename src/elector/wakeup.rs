//! The wake-up accelerator: a graceful handover without polling.
//!
//! While a node leads, it holds a named lock (`GET_LOCK`) on a connection of its own. Followers
//! that know a leader wait on the same lock in a connection of their own. When the leader resigns
//! it releases the lock *after* its resign has committed; a waiting follower is granted the
//! lock, releases it at once and campaigns immediately — and takes the vacant seat. A crashed
//! leader's connection closes and wakes them too; they then find the lease still valid and wait
//! for it as usual.
//!
//! The lease stays the only source of truth: a wake-up only moves a follower's next campaign
//! earlier, the procedures decide. Where named locks cannot work (Galera: locks are local to one
//! node) it switches itself off and followers poll as always. After an error (a lost connection,
//! a server restart) followers poll for a pause (1 s, doubling up to 60 s), then the lock's task
//! starts again on a new connection.
//!
//! A leader's lock connection sends nothing while it holds the lock, possibly for hours; so that a
//! server closing idle sessions (`wait_timeout`) does not take the lock away, it sends `DO 0` at
//! least every half `wait_timeout` of its session (at most every 60 s).
//!
//! Quiet followers: while a follower's wait is on a lock that a leader holds ([`Wakeup::watching`]),
//! the elector needs no polling: it campaigns when woken, or when the lease it saw can end. One
//! wait lasts until that moment (whole seconds, at least 1). A follower that wins the seat keeps
//! its wait: it is a wait for the lock a leader holds. A wait that must end early (the node
//! resigns or closes) is ended on the server with `KILL QUERY` over a short-lived connection of
//! its own, so closing never waits out a wait, leaves no wait running on the server, and leaves
//! the pool no bigger than it was.
//!
//! Each lock connection is a connection of the elector's pool, kept for as long as the elector
//! runs. So that electors sharing one pool never take every connection from the calls that renew
//! their seats (150 electors on a pool of 100 lost every seat: no renew got a connection), at
//! most half of a pool's connections serve wake-up locks ([`PoolShare`]); an elector beyond that
//! runs without the accelerator, its followers polling, and one warning per pool says so.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mysql_async::Pool;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

use crate::procedures;
use crate::wakeup::{LockConn, Restarts, RECHECK};

/// What the elector is doing, as far as the lock is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Not campaigning (after resign or shutdown): hold nothing, wait for nothing.
    Idle,
    /// Leading: hold the lock.
    Leading,
    /// Following a leader: wait on the lock, until at most `until` (when the elector campaigns
    /// anyway).
    Following { until: Instant },
}

impl Role {
    fn following(self) -> bool {
        matches!(self, Role::Following { .. })
    }
}

/// The elector's side: set the role, be woken, ask whether a wait watches the leader.
pub(crate) struct Wakeup {
    role: watch::Sender<Role>,
    wake: Arc<Notify>,
    watching: Arc<AtomicBool>,
}

/// Longest wait of a leader for the lock, in seconds (followers pass it on within milliseconds).
const WAIT_S: u32 = 1;
/// Longest single wait of a follower, in seconds.
const MAX_FOLLOW_WAIT_S: u64 = 3600;
impl Wakeup {
    /// Starts the accelerator's task for `service_id`.
    pub(crate) fn start(pool: Pool, service_id: String, retry_interval: Duration) -> Wakeup {
        let (role, role_rx) = watch::channel(Role::Idle);
        let wake = Arc::new(Notify::new());
        let watching = Arc::new(AtomicBool::new(false));
        let shared = Shared { wake: wake.clone(), watching: watching.clone() };
        tokio::spawn(run(pool, service_id, retry_interval, role_rx, shared));
        Wakeup { role, wake, watching }
    }

    pub(crate) fn set_role(&self, role: Role) {
        self.role.send_if_modified(|r| std::mem::replace(r, role) != role);
    }

    /// True while a follower's wait is on a lock held by a leader: a resign or crash of that
    /// leader wakes this node at once, so it need not poll.
    pub(crate) fn watching(&self) -> bool {
        self.watching.load(Ordering::SeqCst)
    }

    /// Resolves when a follower should campaign now.
    pub(crate) async fn woken(&self) {
        self.wake.notified().await
    }
}

/// What the lock's task shares with the elector.
struct Shared {
    wake: Arc<Notify>,
    watching: Arc<AtomicBool>,
}

/// The wake-up connections of the pools of this process: per pool (told apart by its metrics,
/// one allocation per pool for its lifetime), permits for half its connections at most.
struct PoolShare {
    pool: std::sync::Weak<mysql_async::Metrics>,
    permits: Arc<tokio::sync::Semaphore>,
    warned: AtomicBool,
}

static POOL_SHARES: std::sync::Mutex<Vec<Arc<PoolShare>>> = std::sync::Mutex::new(Vec::new());

/// The share of `pool`, whose connections number at most `max`: created at its first use, and
/// forgotten once the pool is gone.
fn pool_share(pool: &Pool, max: usize) -> Arc<PoolShare> {
    let metrics = pool.metrics();
    let mut shares = POOL_SHARES.lock().unwrap_or_else(|e| e.into_inner());
    shares.retain(|s| s.pool.strong_count() > 0);
    if let Some(share) = shares.iter().find(|s| s.pool.upgrade().is_some_and(|m| Arc::ptr_eq(&m, &metrics))) {
        return share.clone();
    }
    let share = Arc::new(PoolShare {
        pool: Arc::downgrade(&metrics),
        permits: Arc::new(tokio::sync::Semaphore::new((max / 2).max(1))),
        warned: AtomicBool::new(false),
    });
    shares.push(share.clone());
    share
}

/// The task: serve the lock; after an error, let the elector poll for a pause, then serve again.
/// Ends when the elector is gone, where named locks cannot wake anyone (Galera), or where the
/// pool's share of wake-up connections is taken by other electors.
async fn run(pool: Pool, service_id: String, retry_interval: Duration, mut role: watch::Receiver<Role>, shared: Shared) {
    let mut restarts = Restarts::new();
    loop {
        let started = Instant::now();
        let outcome = serve(&pool, &service_id, retry_interval, &mut role, &shared).await;
        // Followers that relied on the lock poll from now on: wake the elector to re-plan.
        shared.watching.store(false, Ordering::SeqCst);
        shared.wake.notify_one();
        let Err(e) = outcome else { return };
        let (pause, first) = restarts.after_failed_run(started);
        // Once at INFO (the lock worked before, or the first failure); each later step of the
        // backoff of a lock that keeps failing (a node that cannot connect) only at DEBUG, and
        // a refused login the pool's log said for all its electors only at DEBUG.
        if first && !super::logins::of(&pool).said(&e) {
            tracing::info!(service = %service_id, error = %e, pause_ms = pause.as_millis() as u64,
                           "wake-up lock lost; followers poll until it is back");
        } else {
            tracing::debug!(service = %service_id, error = %e, pause_ms = pause.as_millis() as u64,
                            "wake-up lock still unavailable; followers poll");
        }
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = elector_gone(&mut role) => return,
        }
    }
}

/// The loop: hold while leading, wait while following. Returns `Ok` when the elector is gone or
/// the server offers no usable named locks, and the first error otherwise.
async fn serve(
    pool: &Pool,
    service_id: &str,
    retry_interval: Duration,
    role: &mut watch::Receiver<Role>,
    shared: &Shared,
) -> crate::Result<()> {
    // Through the pool's login gate as a follower's call: the lock only speeds a takeover up, a
    // refusal never touches a lease.
    let conn = super::logins::of(pool).connect(pool, retry_interval, false, None).await?;
    let pool_max = conn.opts().pool_opts().constraints().max();
    let share = pool_share(pool, pool_max);
    let Ok(_permit) = share.permits.clone().try_acquire_owned() else {
        drop(conn);
        if !share.warned.swap(true, Ordering::SeqCst) {
            tracing::warn!(service = %service_id, pool_max,
                           "half of this pool's connections already serve other electors' wake-up locks: this elector \
                            and any more on the pool run without one (their followers poll); to lead many services from \
                            one process, use a Session (2 connections for all of them)");
        } else {
            tracing::debug!(service = %service_id, "wake-up lock off: the pool's share of connections is taken");
        }
        return Ok(());
    };
    let Some(mut lock) = LockConn::open(conn).await? else {
        tracing::info!(service = %service_id, "named locks are local to one Galera node or Group Replication member: wake-up lock off");
        return Ok(());
    };
    // The lock's name carries the schema's secret (sql/V12__wakeup_secret.sql): asked once.
    let name = match procedures::wakeup_lock_name(lock.conn(), service_id).await {
        Ok(name) => name,
        Err(e) if e.is_permanent() => {
            // An account granted before V12 may not call the routine yet (run `mysqlleader grant`
            // again): the election works without the accelerator, followers poll.
            // A warning: unlike the Galera/Group Replication case above, an operator can mend it.
            tracing::warn!(service = %service_id, error = %e,
                           "wake-up lock off: its name is not available to this account (run `mysqlleader grant ACCOUNT --role ... --apply` again); followers poll");
            lock.close().await;
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let name = name.as_str();
    let mut holding = false;
    // How soon to look again when the lock is not where it should be: a cheap read.
    let recheck = retry_interval.min(RECHECK);
    // A follower that keeps finding nobody holding the lock (the leader's lock connection was
    // lost, and its task has not noticed yet) looks again less and less often: from `recheck`,
    // doubling up to the retry interval, at which the elector campaigns anyway meanwhile.
    let mut look_again = recheck;
    let outcome = async {
        loop {
            let current = *role.borrow_and_update();
            match current {
                Role::Leading => {
                    look_again = recheck;
                    if !holding {
                        // Waits out followers that pass the lock on as they wake (milliseconds);
                        // a frozen former leader may hold it longer: then try again soon.
                        holding = lock.get(name, WAIT_S).await?;
                    }
                    // Holding: not idle in the server's eyes, the lock lives as long as the
                    // session. Not holding: try again soon.
                    let pause = if holding { lock.keepalive() } else { recheck };
                    if let Some(Err(_)) = lock.idle(pause, holding, role.changed()).await? {
                        return Ok(());
                    }
                }
                Role::Following { .. } | Role::Idle => {
                    if holding {
                        lock.release(name).await?;
                        holding = false;
                    }
                    if current == Role::Idle {
                        look_again = recheck;
                        if role.changed().await.is_err() { return Ok(()) }
                        continue;
                    }
                    if !lock.held(name).await? {
                        // Nobody to wait for yet (a new leader takes the lock within
                        // milliseconds of winning): look again shortly, then less often.
                        if let Some(Err(_)) = lock.idle(look_again, false, role.changed()).await? {
                            return Ok(());
                        }
                        look_again = (look_again * 2).min(retry_interval.max(recheck));
                        continue;
                    }
                    look_again = recheck;
                    let until = match current { Role::Following { until } => until, _ => Instant::now() };
                    let wait_s = until.saturating_duration_since(Instant::now()).as_secs_f64().ceil().clamp(1.0, MAX_FOLLOW_WAIT_S as f64) as u32;
                    shared.watching.store(true, Ordering::SeqCst);
                    // A node promoted meanwhile keeps waiting: the lock it waits for is the one
                    // a leader holds, so the wait's end hands it that lock (or times out, and
                    // the leader's branch tries again). A node that stops campaigning (resign,
                    // close) or whose elector is gone ends the wait at once.
                    let waited = lock.wait_unless(name, wait_s, stopped_campaigning(role)).await;
                    shared.watching.store(false, Ordering::SeqCst);
                    if waited?.got {
                        if *role.borrow() == Role::Leading {
                            // Promoted during the wait: this is the lock a leader holds.
                            holding = true;
                        } else {
                            lock.release(name).await?;
                            if role.borrow().following() {
                                shared.wake.notify_one();
                            }
                        }
                    }
                    if role.has_changed().is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
    .await;
    lock.close().await;
    outcome
}

/// Resolves when the elector has dropped its side (role changes meanwhile are of no interest).
async fn elector_gone(role: &mut watch::Receiver<Role>) {
    while role.changed().await.is_ok() {}
}

/// Resolves when the elector stops campaigning (resign, close) or is gone.
async fn stopped_campaigning(role: &mut watch::Receiver<Role>) {
    while role.changed().await.is_ok() {
        if *role.borrow() == Role::Idle {
            return;
        }
    }
}
