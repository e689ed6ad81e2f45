//! One login backoff per pool, and one log line per incident, for the plain electors that share
//! a pool (issue "Fleets", logs per incident). Electors on one pool whose URL had a wrong password
//! made 904 failed logins a second from one node and logged 1,000 errors: each retried its own
//! login on its own schedule and said its own error.
//!
//! The decision, step by step:
//! 1. **Per pool**: a pool logs in as one account to one database, so its logins succeed or
//!    fail together. Its state (a [`Gate`]) is found by the pool's metrics, as the wake-up lock's
//!    share of connections is (`wakeup::pool_share`), and forgotten once the pool is gone. Every
//!    connection a plain elector takes from its pools goes through it (its calls, its wake-up
//!    lock's).
//! 2. **Three states**: `Unknown` (no login tried yet), `Working` (the last one succeeded) and
//!    `Refused` (the last one failed with an error retrying cannot fix soon,
//!    [`Error::is_permanent`]: a refused login 1045, a database denied or unknown 1044/1049, TLS
//!    refused, ...). Any other failure (an unreachable server) changes nothing: it costs no login.
//! 3. **Working**: every call takes its connection from the pool at once, as without the gate.
//! 4. **Unknown**: one connection attempt at a time, the others wait for its outcome (a login
//!    takes milliseconds): electors that start together with a wrong password make one failed
//!    login, not one each.
//! 5. **Refused**: a call gets the refusal at once, without a login (the same error, so the
//!    elector's state, [`crate::WaitOutcome::Failed`] and [`crate::Event::Failing`] say what they
//!    always said), until the pool's backoff ends; then the first call tries one login (the
//!    probe) while the others still get the refusal. The backoff starts at the retry interval of
//!    the elector that met the refusal and doubles after each refused probe, up to
//!    [`BACKOFF_LAST`]; a probe that succeeds makes the pool Working again. So N electors with a
//!    wrong password make about one login per backoff step, whatever N.
//! 6. **A leader never waits**: a call of an elector that leads (a renew, its resign) takes its
//!    connection from the pool whatever the state, as before the gate, so the backoff never
//!    delays a renew and never touches a deadline: a leader that cannot connect steps down by its
//!    deadline as always. Its refused login counts as a refusal; its success ends nothing (it may
//!    have used a connection opened before the refusal, which proves nothing about logins).
//! 7. **One log line per incident**: the move to Refused logs one error (the error, how to mend
//!    it, the number of electors on the pool); a refusal for another reason while Refused is a
//!    new incident, one more error; the move back to Working one INFO line, with how long it
//!    lasted, how many logins were refused and how many calls were answered without one. The
//!    electors log a refusal the pool said already only at DEBUG.
//! 8. Sessions keep their own log and their own connection (`session::incidents`): their
//!    backend does not use the gate.
//! 9. **A pool too small for its electors** (issue "Fleets", no cliff): each plain elector
//!    renews with a call of its own, so enough electors on one pool queue for its connections,
//!    their renews come late, and leaders step down by their deadlines (10,000 plain electors on
//!    one pool of 100 led 4,889 seats at the peak and none after 32 s). Every connection an
//!    elector's call takes is timed (not its wake-up lock's, which waits by design): a wait of
//!    at least half the caller's request timeout, in a pool with all its connections open, is
//!    a starved wait, counted also when the call gave up waiting. The first starved wait logs
//!    one warning for the pool (the number of electors, the pool's size, the wait, what to do);
//!    the first wait that is not starved once [`STARVED_QUIET`] passed without a starved one
//!    logs one INFO line (how long it lasted, how many starved waits, the longest). Half a
//!    request timeout, not a fixed time: a loaded machine makes 100-200 ms waits in a healthy
//!    pool (CI69), while a wait of half the call's time leaves a renew too little time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Duration;

use mysql_async::{Conn, Pool};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::error::{Error, Result};

/// The longest pause between two logins of a pool whose logins are refused.
pub(crate) const BACKOFF_LAST: Duration = Duration::from_secs(60);
/// How long after a refusal ended an elector that takes in a call refused before the end still
/// leaves it to the pool's log ([`Gate::said`]).
const ENDED_LATELY: Duration = Duration::from_secs(1);
/// How long without a starved wait ends a starved pool's incident (step 9).
pub(crate) const STARVED_QUIET: Duration = Duration::from_secs(5);

/// The login state of one pool (step 2).
pub(crate) struct Gate {
    /// The pool's metrics: its identity, kept for as long as the pool lives.
    pool: Weak<mysql_async::Metrics>,
    state: Mutex<State>,
    /// Told when a login attempt of the Unknown state ends (step 4).
    tried: Notify,
    /// How many electors use the pool ([`Member`]s): the number the error line gives.
    electors: AtomicUsize,
    /// What the pool's first connection told: its account and server (`USER at HOST:PORT`) and
    /// its largest number of connections (step 9).
    shape: OnceLock<(String, usize)>,
    /// A starved pool's incident going on (step 9).
    starved: Mutex<Option<Starved>>,
}

/// A starved pool's incident (step 9): since when, its last starved wait, how many, the longest.
struct Starved {
    since: Instant,
    last: Instant,
    waits: u64,
    longest: Duration,
}

struct State {
    logins: Logins,
    /// Whether a login attempt of the Unknown state or a probe (step 5) is under way.
    trying: bool,
    /// The refusal that ended last, and when: a call refused just before the end, whose elector
    /// takes the refusal in just after it, is still one the pool's log said.
    ended: Option<(Error, Instant)>,
}

enum Logins {
    Unknown,
    Working,
    Refused(Refusal),
}

/// A refusal going on (step 5).
struct Refusal {
    error: Error,
    since: Instant,
    /// The backoff's current step, and when it ends.
    step: Duration,
    next_try: Instant,
    /// Logins refused since `since`, and calls answered with the refusal without a login.
    refused: u64,
    spared: u64,
}

/// One line to write, outside the lock.
enum Line {
    Error(String),
    Info(String),
}

static GATES: Mutex<Vec<Arc<Gate>>> = Mutex::new(Vec::new());

/// The gate of `pool`: created at its first use, forgotten once the pool is gone (step 1).
pub(crate) fn of(pool: &Pool) -> Arc<Gate> {
    let metrics = pool.metrics();
    let mut gates = GATES.lock().unwrap_or_else(|e| e.into_inner());
    gates.retain(|g| g.pool.strong_count() > 0);
    if let Some(gate) = gates.iter().find(|g| g.pool.upgrade().is_some_and(|m| Arc::ptr_eq(&m, &metrics))) {
        return gate.clone();
    }
    let gate = Arc::new(Gate {
        pool: Arc::downgrade(&metrics),
        state: Mutex::new(State { logins: Logins::Unknown, trying: false, ended: None }),
        tried: Notify::new(),
        electors: AtomicUsize::new(0),
        shape: OnceLock::new(),
        starved: Mutex::new(None),
    });
    gates.push(gate.clone());
    gate
}

/// An elector's use of a pool's gate: counted in [`Gate`]'s number of electors while it lives.
pub(crate) struct Member(Arc<Gate>);

impl Member {
    pub(crate) fn of(pool: &Pool) -> Member {
        let gate = of(pool);
        gate.electors.fetch_add(1, Ordering::Relaxed);
        Member(gate)
    }

    pub(crate) fn gate(&self) -> &Arc<Gate> {
        &self.0
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.0.electors.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A call's wait for a connection (step 9), taken in when it ends, also when the call gave up
/// waiting (the future dropped).
struct Waiting<'g> {
    gate: &'g Gate,
    pool: &'g Pool,
    asked: Instant,
    starved_after: Duration,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.gate.waited(self.pool, self.asked.elapsed(), self.starved_after);
    }
}

/// Ends an attempt of the Unknown state or a probe however it ends (even dropped): the next
/// caller may try, and the waiters look again.
struct Trying<'g>(&'g Gate);

impl Drop for Trying<'_> {
    fn drop(&mut self) {
        self.0.state().trying = false;
        self.0.tried.notify_waiters();
    }
}

impl Gate {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A connection of `pool` (this gate's), as steps 3–6 allow: `first_step` is the backoff's
    /// first step should this login be refused (the caller's retry interval); `leading`, whether
    /// the caller leads (step 6); `starved_after`, the wait that counts as starved (step 9: half
    /// the caller's request timeout), or None for a wait that is not timed (a wake-up lock's).
    pub(crate) async fn connect(&self, pool: &Pool, first_step: Duration, leading: bool,
                                starved_after: Option<Duration>) -> Result<Conn> {
        if leading {
            let result = self.get(pool, starved_after).await;
            self.outcome(&result, first_step, false);
            return result;
        }
        let probe = loop {
            let tried = self.tried.notified();
            tokio::pin!(tried);
            tried.as_mut().enable();
            {
                let mut state = self.state();
                let trying = state.trying;
                match &mut state.logins {
                    Logins::Working => break false,
                    Logins::Refused(r) if trying || Instant::now() < r.next_try => {
                        r.spared += 1;
                        return Err(r.error.clone());
                    }
                    Logins::Unknown if trying => {}
                    Logins::Unknown | Logins::Refused(_) => {
                        state.trying = true;
                        break true;
                    }
                }
            }
            tried.await;
        };
        let _trying = probe.then(|| Trying(self));
        let result = self.get(pool, starved_after).await;
        self.outcome(&result, first_step, probe);
        result
    }

    /// A connection of `pool`, its wait timed when `starved_after` is given (step 9).
    async fn get(&self, pool: &Pool, starved_after: Option<Duration>) -> Result<Conn> {
        let Some(starved_after) = starved_after else { return get(pool).await };
        let waiting = Waiting { gate: self, pool, asked: Instant::now(), starved_after };
        let result = get(pool).await;
        if let Ok(conn) = &result {
            self.shape.get_or_init(|| {
                let whose = format!("{} at {}", conn.opts().user().unwrap_or(""), crate::url::server_of(conn.opts()));
                (whose, conn.opts().pool_opts().constraints().max())
            });
        }
        drop(waiting);
        result
    }

    /// Takes in a wait of `waited` for a connection of `pool` and writes the incident's line,
    /// if any (step 9). A wait of at least `starved_after` while every connection of the pool
    /// is open is starved; a pool whose first connection has not come yet counts nothing.
    fn waited(&self, pool: &Pool, waited: Duration, starved_after: Duration) {
        // On every call of a plain elector (its renews among them): no allocation, one
        // uncontended lock.
        let Some((whose, max)) = self.shape.get() else { return };
        let max = *max;
        let starved = waited >= starved_after && pool.metrics().connection_count.load(Ordering::Relaxed) >= max;
        let now = Instant::now();
        let mut incident = self.starved.lock().unwrap_or_else(|e| e.into_inner());
        match (incident.as_mut(), starved) {
            (Some(s), true) => {
                s.last = now;
                s.waits += 1;
                s.longest = s.longest.max(waited);
            }
            (None, true) => {
                *incident = Some(Starved { since: now, last: now, waits: 1, longest: waited });
                let electors = self.electors.load(Ordering::Relaxed).max(1);
                tracing::warn!(electors, pool_max = max, waited_ms = waited.as_millis() as u64,
                    "the {electors} elector{} on this pool ({whose}) wait for its connections (all {max} in use; a call \
                     waited {} ms, half its request timeout or more): their renews come late, and a leader steps down \
                     by its deadline. A Session leads any number of services over two connections (README, Sessions); \
                     or give the pool more connections",
                    if electors == 1 { "" } else { "s" }, waited.as_millis());
            }
            (Some(s), false) if now.saturating_duration_since(s.last) >= STARVED_QUIET => {
                tracing::info!(waits = s.waits,
                    "the electors on this pool ({whose}) get its connections in time again, after {:.1} s ({} waits of \
                     half a request timeout or more, the longest {} ms)",
                    now.saturating_duration_since(s.since).as_secs_f64(), s.waits, s.longest.as_millis());
                *incident = None;
            }
            _ => {}
        }
    }

    /// Whether `error` is the refusal the pool's log said (step 7): the elector then says it
    /// only at DEBUG.
    pub(crate) fn said(&self, error: &Error) -> bool {
        let state = self.state();
        match &state.logins {
            Logins::Refused(r) => same(&r.error, error),
            _ => state.ended.as_ref().is_some_and(|(e, at)| same(e, error) && at.elapsed() < ENDED_LATELY),
        }
    }

    /// Takes in a login attempt's outcome (`probe`: step 4's or 5's attempt) and writes its
    /// line, if any.
    fn outcome(&self, result: &Result<Conn>, first_step: Duration, probe: bool) {
        let now = Instant::now();
        let line = {
            let mut state = self.state();
            match (result, &mut state.logins) {
                (Ok(conn), Logins::Refused(r)) if probe => {
                    let line = Line::Info(format!(
                        "logins to {} as {} succeed again after {:.1} s ({} refused, {} calls answered without a login meanwhile): \
                         the electors on this pool campaign again",
                        crate::url::server_of(conn.opts()),
                        conn.opts().user().unwrap_or(""),
                        now.saturating_duration_since(r.since).as_secs_f64(),
                        r.refused,
                        r.spared));
                    state.ended = Some((r.error.clone(), now));
                    state.logins = Logins::Working;
                    Some(line)
                }
                (Ok(_), Logins::Unknown) => {
                    state.logins = Logins::Working;
                    None
                }
                (Ok(_), _) => None,
                (Err(e), Logins::Refused(r)) if e.is_permanent() => {
                    r.refused += 1;
                    if probe {
                        r.step = (r.step * 2).min(BACKOFF_LAST);
                        r.next_try = now + r.step;
                    }
                    if same(&r.error, e) {
                        tracing::debug!(error = %e, next_try_ms = r.next_try.saturating_duration_since(now).as_millis() as u64,
                                        "login refused again");
                        None
                    } else {
                        r.error = e.clone();
                        Some(self.refused_line(e, r.step))
                    }
                }
                (Err(e), _) if e.is_permanent() => {
                    let step = first_step.clamp(Duration::from_millis(1), BACKOFF_LAST);
                    state.logins = Logins::Refused(Refusal { error: e.clone(), since: now, step, next_try: now + step, refused: 1, spared: 0 });
                    Some(self.refused_line(e, step))
                }
                // An unreachable server or the like: no login was refused (step 2). A probe
                // that met it waits out another step all the same.
                (Err(_), Logins::Refused(r)) if probe => {
                    r.next_try = now + r.step;
                    None
                }
                (Err(_), _) => None,
            }
        };
        match line {
            Some(Line::Error(text)) => tracing::error!("{text}"),
            Some(Line::Info(text)) => tracing::info!("{text}"),
            None => {}
        }
    }

    fn refused_line(&self, error: &Error, step: Duration) -> Line {
        let electors = self.electors.load(Ordering::Relaxed).max(1);
        Line::Error(format!(
            "election call failed, and retrying cannot fix it: the server refuses this pool's logins: {error}. Mend the account \
             (its password, its grants) or the URL (its database, its TLS settings); the electors on this pool cannot lead \
             until then ({electors} so far), and try one login together, the next in {:.1} s (the pause doubles up to {} s)",
            step.as_secs_f64(),
            BACKOFF_LAST.as_secs()))
    }
}

/// Two failures of the same condition: one incident.
fn same(a: &Error, b: &Error) -> bool {
    (a.kind(), a.server_code()) == (b.kind(), b.server_code())
}

async fn get(pool: &Pool) -> Result<Conn> {
    pool.get_conn().await.map_err(|e| Error::from_pool(pool, e))
}
