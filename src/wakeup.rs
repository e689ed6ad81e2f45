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
//! earlier, the procedures decide. Where named locks cannot work it switches itself off: on
//! Galera (locks are local to one node) and on any error; followers then poll as always.
//!
//! Quiet followers: while a follower's wait is on a lock that a leader holds ([`Wakeup::watching`]),
//! the elector needs no polling: it campaigns when woken, or when the lease it saw can end. One
//! wait lasts until that moment (whole seconds, at least 1). A wait that must end early (the
//! node leads, resigns or closes) is ended on the server with `KILL QUERY` on its own
//! connection, so closing never waits out a wait and leaves no wait running on the server.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mysql_async::Pool;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

use crate::procedures;

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
/// Longest pause before looking at the lock again when nobody holds it.
const RECHECK: Duration = Duration::from_millis(100);

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

async fn run(pool: Pool, service_id: String, retry_interval: Duration, mut role: watch::Receiver<Role>, shared: Shared) {
    match serve(&pool, &service_id, retry_interval, &mut role, &shared).await {
        Ok(()) => {}
        Err(e) => tracing::info!(service = %service_id, error = %e, "wake-up lock off; followers poll"),
    }
    // Followers that relied on the lock poll again from now on: wake the elector to re-plan.
    shared.watching.store(false, Ordering::SeqCst);
    shared.wake.notify_one();
}

/// The loop: hold while leading, wait while following. Ends when the elector is gone, or on the
/// first error (after which the elector simply polls).
async fn serve(
    pool: &Pool,
    service_id: &str,
    retry_interval: Duration,
    role: &mut watch::Receiver<Role>,
    shared: &Shared,
) -> crate::Result<()> {
    let mut conn = pool.get_conn().await.map_err(crate::Error::from_mysql)?;
    if !procedures::wakeup_lock_supported(&mut conn).await? {
        tracing::info!(service = %service_id, "named locks are local to one Galera node: wake-up lock off");
        let _ = conn.disconnect().await;
        return Ok(());
    }
    let connection_id = conn.id();
    let mut holding = false;
    // How soon to look again when the lock is not where it should be: a cheap read.
    let recheck = retry_interval.min(RECHECK);
    let outcome = async {
        loop {
            let current = *role.borrow_and_update();
            match current {
                Role::Leading => {
                    if !holding {
                        // Waits out followers that pass the lock on as they wake (milliseconds);
                        // a frozen former leader may hold it longer: then try again soon.
                        holding = procedures::wakeup_lock_get(&mut conn, service_id, WAIT_S).await?;
                    }
                    if holding {
                        if role.changed().await.is_err() { return Ok(()) }
                    } else {
                        tokio::select! {
                            r = role.changed() => if r.is_err() { return Ok(()) },
                            _ = tokio::time::sleep(recheck) => {}
                        }
                    }
                }
                Role::Following { .. } | Role::Idle => {
                    if holding {
                        procedures::wakeup_lock_release(&mut conn, service_id).await?;
                        holding = false;
                    }
                    if current == Role::Idle || !procedures::wakeup_lock_held(&mut conn, service_id).await? {
                        // Nobody to wait for yet (a new leader takes the lock within
                        // milliseconds of winning): look again shortly.
                        tokio::select! {
                            r = role.changed() => if r.is_err() { return Ok(()) },
                            _ = tokio::time::sleep(recheck) => {}
                        }
                        continue;
                    }
                    let until = match current { Role::Following { until } => until, _ => Instant::now() };
                    let wait_s = until.saturating_duration_since(Instant::now()).as_secs_f64().ceil().clamp(1.0, MAX_FOLLOW_WAIT_S as f64) as u32;
                    shared.watching.store(true, Ordering::SeqCst);
                    let got = wait_unless_unneeded(pool, &mut conn, connection_id, service_id, wait_s, role).await;
                    shared.watching.store(false, Ordering::SeqCst);
                    if got? {
                        procedures::wakeup_lock_release(&mut conn, service_id).await?;
                        if role.borrow().following() {
                            shared.wake.notify_one();
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
    // Closing the connection releases anything it holds.
    let _ = conn.disconnect().await;
    outcome
}

/// One follower's wait on the lock for up to `wait_s` seconds. When the node stops following
/// (it leads, resigns or closes) the wait is ended on the server at once with `KILL QUERY`
/// (never dropped mid-wait, which would leave it running there). A new `until` while following
/// changes nothing: the elector campaigns at its own time anyway.
async fn wait_unless_unneeded(
    pool: &Pool,
    conn: &mut mysql_async::Conn,
    connection_id: u32,
    service_id: &str,
    wait_s: u32,
    role: &mut watch::Receiver<Role>,
) -> crate::Result<bool> {
    let wait = procedures::wakeup_lock_get(conn, service_id, wait_s);
    tokio::pin!(wait);
    loop {
        tokio::select! {
            got = &mut wait => return got,
            changed = role.changed() => {
                if changed.is_err() || !role.borrow().following() {
                    if let Err(e) = procedures::kill_query(pool, connection_id).await {
                        tracing::debug!(service = %service_id, error = %e, "could not end the wake-up wait early");
                    }
                    return (&mut wait).await;
                }
            }
        }
    }
}
