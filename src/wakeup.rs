//! The wake-up lock's connection, written once for its two users: a plain elector
//! ([`crate::elector`]'s `wakeup`: one lock per service) and a session ([`crate::session`]'s
//! `wakeup`: one lock per node). They differ in what they hold and wait for; everything about the
//! connection that carries the lock is here:
//!
//! * **Where it works** ([`LockConn::open`]): named locks are local to one Galera node or one
//!   Group Replication member, so there the lock is off and followers poll.
//! * **Staying open** ([`LockConn::idle`]): a connection that holds the lock sends nothing,
//!   possibly for hours; it sends `DO 0` at least every half `wait_timeout` of its session (at
//!   most every [`KEEPALIVE_MAX`]), so that a server closing idle sessions never takes it away.
//! * **Waits that end on time** ([`LockConn::wait_unless`]): a wait on another holder's lock is
//!   one `GET_LOCK` statement; a wait that must end early is ended on the server with
//!   `KILL QUERY` over a short-lived connection of its own (never by dropping the statement, which
//!   would leave it running there, nor through a pool, which would keep the extra connection).
//! * **Restarts** ([`Restarts`]): after an error (a lost connection, a server restart) the
//!   followers poll for a pause, 1 s doubling to 60 s, back to 1 s after a run of 60 s without
//!   error; the first pause of an incident is said at INFO, the later ones at DEBUG.
//!
//! The lease stays the only source of truth: a wake-up only moves a follower's next campaign
//! earlier; the procedures decide.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::procedures;

/// The first pause before looking again at a lock nobody holds (then doubling up to the retry
/// interval, at which the electors campaign anyway).
pub(crate) const RECHECK: Duration = Duration::from_millis(100);
/// Longest silence of a connection that holds the lock.
pub(crate) const KEEPALIVE_MAX: Duration = Duration::from_secs(60);
const RESTART_FIRST: Duration = Duration::from_secs(1);
const RESTART_LAST: Duration = Duration::from_secs(60);

/// The pauses between runs of a lock's task that ended in an error.
pub(crate) struct Restarts {
    pause: Duration,
}

impl Restarts {
    pub(crate) fn new() -> Restarts {
        Restarts { pause: RESTART_FIRST }
    }

    /// The pause after a run that began at `started` and failed, and whether it is the first of
    /// its incident (the run lasted at least the longest pause, or no run failed before): say
    /// that one at INFO, later ones at DEBUG.
    pub(crate) fn after_failed_run(&mut self, started: Instant) -> (Duration, bool) {
        if started.elapsed() >= RESTART_LAST {
            self.pause = RESTART_FIRST;
        }
        let pause = self.pause;
        self.pause = (pause * 2).min(RESTART_LAST);
        (pause, pause == RESTART_FIRST)
    }
}

/// Whether `e` is a wait the server refused because it would close a cycle of waits: this
/// connection holds a lock whose holder-to-be holds the awaited one (two node sessions that
/// each lead seats the other follows: each holds its own lock and waits on the other's).
/// MariaDB says 1213, MySQL 3058 (`ER_USER_LOCK_DEADLOCK`). The wait that closes the cycle is
/// refused at once; the locks this connection holds stay held and the other wait goes on
/// (checked on MariaDB 10.11 and MySQL 9.7), so the refusal is an answer, not a lost lock.
pub(crate) fn is_wait_cycle(e: &crate::Error) -> bool {
    matches!(e, crate::Error::Server { code: 1213 | 3058, .. })
}

/// One connection that holds or waits on named locks.
pub(crate) struct LockConn {
    conn: mysql_async::Conn,
    /// How often it must speak while it holds a lock (see [`LockConn::idle`]).
    keepalive: Duration,
}

/// How a wait ended.
pub(crate) struct Waited {
    /// The lock was granted: its holder let go (a resign, a shutdown, a crash).
    pub(crate) got: bool,
    /// The wait was ended early on the server (`end` resolved first).
    pub(crate) ended: bool,
}

impl LockConn {
    /// Takes `conn` for the lock: `None` (and the connection closed) where named locks cannot
    /// wake anyone (a Galera node, a Group Replication member).
    pub(crate) async fn open(mut conn: mysql_async::Conn) -> crate::Result<Option<LockConn>> {
        let (supported, wait_timeout_s) = procedures::wakeup_lock_setup(&mut conn).await?;
        if !supported {
            let _ = conn.disconnect().await;
            return Ok(None);
        }
        let keepalive = (Duration::from_secs(wait_timeout_s) / 2).clamp(Duration::from_secs(1), KEEPALIVE_MAX);
        Ok(Some(LockConn { conn, keepalive }))
    }

    /// The connection, for the calls that learn lock names.
    pub(crate) fn conn(&mut self) -> &mut mysql_async::Conn {
        &mut self.conn
    }

    /// How long it may stay silent while it holds a lock.
    pub(crate) fn keepalive(&self) -> Duration {
        self.keepalive
    }

    /// `GET_LOCK(name, wait_s)` that nothing ends early: true when granted.
    pub(crate) async fn get(&mut self, name: &str, wait_s: u32) -> crate::Result<bool> {
        procedures::wakeup_lock_get(&mut self.conn, name, wait_s).await
    }

    pub(crate) async fn release(&mut self, name: &str) -> crate::Result<()> {
        procedures::wakeup_lock_release(&mut self.conn, name).await
    }

    /// Whether any connection holds `name` now.
    pub(crate) async fn held(&mut self, name: &str) -> crate::Result<bool> {
        procedures::wakeup_lock_held(&mut self.conn, name).await
    }

    /// Waits for `wake` for at most `pause`; after a silent `pause` while `holding`, speaks once
    /// (`DO 0`), so that the server never closes the session as idle.
    pub(crate) async fn idle<T>(&mut self, pause: Duration, holding: bool, wake: impl Future<Output = T>) -> crate::Result<Option<T>> {
        tokio::select! {
            woken = wake => Ok(Some(woken)),
            () = tokio::time::sleep(pause) => {
                if holding {
                    procedures::keepalive(&mut self.conn).await?;
                }
                Ok(None)
            }
        }
    }

    /// One wait of up to `wait_s` seconds for `name`, ended on the server at once (`KILL QUERY`
    /// over a short-lived connection of its own) when `end` resolves first. A wait ended so
    /// answers `got: false` unless the grant came first.
    pub(crate) async fn wait_unless(&mut self, name: &str, wait_s: u32, end: impl Future<Output = ()>) -> crate::Result<Waited> {
        let (opts, connection_id) = (self.conn.opts().clone(), self.conn.id());
        let wait = procedures::wakeup_lock_get(&mut self.conn, name, wait_s);
        tokio::pin!(wait);
        tokio::pin!(end);
        tokio::select! {
            got = &mut wait => got.map(|got| Waited { got, ended: false }),
            () = &mut end => {
                if let Err(e) = procedures::kill_query(&opts, connection_id).await {
                    tracing::debug!(error = %e, "could not end the wake-up wait early");
                }
                (&mut wait).await.map(|got| Waited { got, ended: true })
            }
        }
    }

    /// Closes the connection, which releases anything it holds.
    pub(crate) async fn close(self) {
        let _ = self.conn.disconnect().await;
    }
}
