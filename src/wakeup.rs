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

use std::sync::Arc;
use std::time::Duration;

use mysql_async::Pool;
use tokio::sync::{watch, Notify};

use crate::procedures;

/// What the elector is doing, as far as the lock is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Not campaigning (after resign or shutdown): hold nothing, wait for nothing.
    Idle,
    /// Leading: hold the lock.
    Leading,
    /// Following a leader: wait on the lock.
    Following,
}

/// The elector's side: set the role, be woken.
pub(crate) struct Wakeup {
    role: watch::Sender<Role>,
    wake: Arc<Notify>,
}

/// Longest single wait on the lock, in seconds (the wait ends early when the lock comes free).
const WAIT_S: u32 = 1;
/// Longest pause before looking at the lock again when nobody holds it.
const RECHECK: Duration = Duration::from_millis(100);

impl Wakeup {
    /// Starts the accelerator's task for `service_id`.
    pub(crate) fn start(pool: Pool, service_id: String, retry_interval: Duration) -> Wakeup {
        let (role, role_rx) = watch::channel(Role::Idle);
        let wake = Arc::new(Notify::new());
        tokio::spawn(run(pool, service_id, retry_interval, role_rx, wake.clone()));
        Wakeup { role, wake }
    }

    pub(crate) fn set_role(&self, role: Role) {
        self.role.send_if_modified(|r| std::mem::replace(r, role) != role);
    }

    /// Resolves when a follower should campaign now.
    pub(crate) async fn woken(&self) {
        self.wake.notified().await
    }
}

async fn run(pool: Pool, service_id: String, retry_interval: Duration, mut role: watch::Receiver<Role>, wake: Arc<Notify>) {
    match serve(&pool, &service_id, retry_interval, &mut role, &wake).await {
        Ok(()) => {}
        Err(e) => tracing::info!(service = %service_id, error = %e, "wake-up lock off; followers poll"),
    }
}

/// The loop: hold while leading, wait while following. Ends when the elector is gone, or on the
/// first error (after which the elector simply polls).
async fn serve(
    pool: &Pool,
    service_id: &str,
    retry_interval: Duration,
    role: &mut watch::Receiver<Role>,
    wake: &Notify,
) -> crate::Result<()> {
    let mut conn = pool.get_conn().await.map_err(crate::Error::from_mysql)?;
    if !procedures::wakeup_lock_supported(&mut conn).await? {
        tracing::info!(service = %service_id, "named locks are local to one Galera node: wake-up lock off");
        let _ = conn.disconnect().await;
        return Ok(());
    }
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
                Role::Following | Role::Idle => {
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
                    // Never dropped mid-wait (that would leave the wait running on the server):
                    // a wait lasts at most WAIT_S seconds.
                    if procedures::wakeup_lock_get(&mut conn, service_id, WAIT_S).await? {
                        procedures::wakeup_lock_release(&mut conn, service_id).await?;
                        if *role.borrow() == Role::Following {
                            wake.notify_one();
                        }
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
