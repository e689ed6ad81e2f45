//! `mysqlleader_elector`: one node's part in the election of one service, run by the library's
//! runtime, with leadership changes delivered to a C callback on a thread of its own.
//!
//! Threads: the elector's renew loop runs on the runtime; the callback (when given) runs on a
//! delivery thread (`mysqlleader-cb`, src/ffi/events.rs): one of its own for a plain elector,
//! its session's one for all the electors of a session; one event at a time, each elector's in
//! the order the node observed them. Inside a callback a program may call any function of the library, on this
//! elector too: the queries (`_is_leader`, `_term`, ...) answer at once, `_resign` and
//! `_txn_begin` make a round trip, and `mysqlleader_elector_free` on the callback's own elector
//! is allowed — it shuts the elector down, delivers no further event of it, and the current
//! callback returns by itself (so is freeing another elector of the same session from a
//! callback: that elector's remaining events are not delivered). A callback should return
//! promptly: while it runs, later events wait (those of every elector of its session too; 256
//! per elector at most; beyond that a `MYSQLLEADER_EVENT_MISSED` event says how many were
//! dropped).

use std::ffi::{c_char, c_void};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use super::client::{mysqlleader_client, ClientInner};
use super::events::{Callback, Deliveries, Subscription};
use super::shared::SharedSession;
use super::result::{boundary, boundary_void, mysqlleader_result, FfiResult, Failure};
use super::runtime::{block_on, block_on_timeout, block_on_within, runtime};
use super::strings::{arg_id, arg_out, arg_ref, arg_str, copy_out, id_field, ms, write_out};
use super::txn::mysqlleader_txn;
use super::MYSQLLEADER_ID_BUFFER_SIZE;
use crate::config::ElectorConfig;
use crate::elector::{Elector, Event, State, StopReason, WaitOutcome};
use crate::error::Error;
use crate::metrics::Metrics;

/// Flag of `mysqlleader_elector_config.flags`: `mysqlleader_elector_free` does not resign; the
/// lease is left to lapse (the default is to resign, so another node takes over at once).
pub const MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE: u32 = 1;
/// Flag of `mysqlleader_elector_config.flags`: followers retry at exactly `retry_ms`, without
/// jitter (`retry_jitter` must then be 0).
pub const MYSQLLEADER_ELECTOR_NO_JITTER: u32 = 2;
/// `timeout_ms` of `mysqlleader_elector_wait_for_leadership` that waits without limit.
pub const MYSQLLEADER_WAIT_FOREVER: u64 = u64::MAX;

const KNOWN_FLAGS: u32 = MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE | MYSQLLEADER_ELECTOR_NO_JITTER;

/// How an elector takes part in the election. Zero means "the default" for every number, so
/// `mysqlleader_elector_config config = {0}; config.service_id = "billing";` is complete.
///
/// | field | default (0) | meaning |
/// | --- | --- | --- |
/// | `service_id` | (required) | the election group: 1 to 128 characters of UTF-8 |
/// | `node_id` | NULL: `hostname:pid` | this node's name as others see it: 1 to 128 characters |
/// | `lease_ms` | 10000 | how long a lease lasts after each acquisition or renew, 1 to 86400000 |
/// | `renew_ms` | lease / 5 | how often the leader renews; at most (lease - drift margin) / 3 |
/// | `retry_ms` | lease / 10 | the longest a follower waits between attempts; at most the lease |
/// | `retry_jitter` | 0.2 | a follower's wait is shortened by a random part of up to this fraction (0 to < 1); for none, set `MYSQLLEADER_ELECTOR_NO_JITTER` |
/// | `request_timeout_ms` | min(lease / 5, 2000) | the longest one call may take; below lease - drift margin |
/// | `drift_margin_ms` | lease / 100 | subtracted from every local deadline for clock-rate drift; below the lease |
/// | `flags` | 0 | `MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE`, `MYSQLLEADER_ELECTOR_NO_JITTER` |
/// | `fallback_clients` | NULL | more servers of one Galera cluster, tried in turn when a call fails with a connection or cluster error |
/// | `fallback_client_count` | 0 | the number of `fallback_clients` |
///
/// The strings are copied by `mysqlleader_elector_new`; the struct need not outlive the call.
#[repr(C)]
pub struct mysqlleader_elector_config {
    pub service_id: *const c_char,
    pub node_id: *const c_char,
    pub lease_ms: u64,
    pub renew_ms: u64,
    pub retry_ms: u64,
    pub retry_jitter: f64,
    pub request_timeout_ms: u64,
    pub drift_margin_ms: u64,
    pub flags: u32,
    pub fallback_clients: *const *const mysqlleader_client,
    pub fallback_client_count: usize,
}

/// What happened, in `mysqlleader_event.kind`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum mysqlleader_event_kind {
    /// This node became leader at `term`; `valid_for_ms` is how long it may act as leader
    /// without another renew, as of the delivery.
    MYSQLLEADER_EVENT_STARTED_LEADING = 1,
    /// This node stopped leading `term`, for `reason`.
    MYSQLLEADER_EVENT_STOPPED_LEADING = 2,
    /// Another leader (`leader_id`; NULL for a vacant seat) or a new `term` was seen.
    MYSQLLEADER_EVENT_LEADER_CHANGED = 3,
    /// `missed` events were dropped because callbacks fell behind; ask the elector for its
    /// current state.
    MYSQLLEADER_EVENT_MISSED = 4,
    /// The elector's background task failed (`mysqlleader_elector_state` reports the error):
    /// it no longer campaigns. The last event. (A normal free delivers no such event.)
    MYSQLLEADER_EVENT_ELECTOR_STOPPED = 5,
    /// The elector's calls fail with an error retrying cannot fix (`result`: a refused login,
    /// a missing grant, the schema not installed, a service outside the account's patterns;
    /// `mysqlleader_elector_last_call_error` has the message). Sent once per change of
    /// condition; the elector keeps trying, and leads once the set-up is mended.
    MYSQLLEADER_EVENT_FAILING = 6,
}

/// Why a node stopped leading, in `mysqlleader_event.reason`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum mysqlleader_stop_reason {
    /// Not a `MYSQLLEADER_EVENT_STOPPED_LEADING` event.
    MYSQLLEADER_STOP_NONE = 0,
    /// Another node holds the seat (forced out, or the lease lapsed and was taken).
    MYSQLLEADER_STOP_LOST_SEAT = 1,
    /// No renew succeeded before the local deadline (failed, slow or lost calls).
    MYSQLLEADER_STOP_DEADLINE_PASSED = 2,
    /// This node resigned (`mysqlleader_elector_resign`).
    MYSQLLEADER_STOP_RESIGNED = 3,
    /// The elector was shut down (`mysqlleader_elector_free`).
    MYSQLLEADER_STOP_SHUTDOWN = 4,
    /// The elector's background task failed.
    MYSQLLEADER_STOP_FAILED = 5,
    /// The term ended by a handover (`mysqlleader_elector_handover`, or an operator's
    /// `handover` seen at the next renew); the elector goes on campaigning as a follower.
    MYSQLLEADER_STOP_HANDED_OVER = 6,
}

/// A leadership change, as the callback receives it. The struct and `leader_id` are valid
/// only during the callback; copy what you need.
#[repr(C)]
pub struct mysqlleader_event {
    /// What happened: a `MYSQLLEADER_EVENT_*` value.
    pub kind: mysqlleader_event_kind,
    /// The term the event is about.
    pub term: u64,
    /// For `MYSQLLEADER_EVENT_STOPPED_LEADING`; `MYSQLLEADER_STOP_NONE` otherwise.
    pub reason: mysqlleader_stop_reason,
    /// The leader: this node for `STARTED_LEADING`, the new leader or NULL (vacant seat) for
    /// `LEADER_CHANGED`, NULL otherwise.
    pub leader_id: *const c_char,
    /// For `STARTED_LEADING`: milliseconds this node may act as leader without a renew.
    pub valid_for_ms: u64,
    /// For `MYSQLLEADER_EVENT_MISSED`: how many events were dropped.
    pub missed: u64,
    /// For `MYSQLLEADER_EVENT_FAILING`: the error class of the failing calls
    /// (`MYSQLLEADER_AUTHENTICATION`, `MYSQLLEADER_PRIVILEGE`, ...); `MYSQLLEADER_OK` otherwise.
    pub result: mysqlleader_result,
}

/// A callback for leadership changes: `userdata` is the pointer given to
/// `mysqlleader_elector_new`, `event` is valid until the callback returns. It runs on the
/// elector's own callback thread (see docs/c-api.md, "Callbacks").
pub type mysqlleader_event_callback = Option<unsafe extern "C" fn(userdata: *mut c_void, event: *const mysqlleader_event)>;

/// A snapshot of an elector's state, from `mysqlleader_elector_snapshot`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mysqlleader_elector_state {
    /// Whether this node leads now (its local deadline included, as `_is_leader`).
    pub is_leader: bool,
    /// The term seen last: while leading, the fencing token.
    pub term: u64,
    /// Milliseconds this node may still act as leader without a renew; 0 when not leading.
    pub valid_for_ms: u64,
    /// Whether the elector still campaigns (false after `_resign`).
    pub campaigning: bool,
    /// `MYSQLLEADER_OK` when the elector's last call to the database succeeded, else its
    /// error class (`mysqlleader_elector_last_call_error` gives the message).
    pub last_call_result: mysqlleader_result,
    /// The leader seen last, NUL-terminated; "" when the seat was vacant.
    pub leader_id: [c_char; MYSQLLEADER_ID_BUFFER_SIZE],
}

/// An elector, made by `mysqlleader_elector_new` and released by `mysqlleader_elector_free`.
/// All functions taking a `const mysqlleader_elector *` may be called from any thread at once
/// (also from its callback); `_free` must not race with calls from other threads.
pub struct mysqlleader_elector {
    /// `None` once `_free` has begun.
    elector: RwLock<Option<Elector>>,
    state: watch::Receiver<State>,
    /// The elector's metrics (a handle sharing them): rendered from here, so they answer like
    /// the other queries also while `_free` runs.
    metrics: Metrics,
    config: ElectorConfig,
    /// The primary server's pool (fenced transactions use it); it and the fallbacks stay open
    /// while the elector lives.
    client: Arc<ClientInner>,
    _fallbacks: Vec<Arc<ClientInner>>,
    /// The client's shared session the elector runs on (a plain elector: src/ffi/shared.rs);
    /// `None` for one that runs alone or on a `mysqlleader_session`.
    shared: Option<Arc<SharedSession>>,
    /// Where its callback runs: a delivery thread of its own, or its session's.
    callback: Option<Subscription>,
}

impl mysqlleader_elector {
    /// The longest a resign or a shutdown may wait for the renew loop: a call in flight, then
    /// the resign call, each bounded by the request timeout, and a margin.
    fn command_limit(&self) -> Duration {
        self.config.request_timeout * 2 + Duration::from_secs(2)
    }

    /// The database refused this node's `term`: the elector steps down (when it still leads at
    /// `term`) before this returns, waiting at most [`Self::command_limit`]
    /// (`mysqlleader_elector_note_refusal`, and a refused `mysqlleader_elector_txn_begin`).
    fn refused(&self, term: u64, reason: StopReason) -> FfiResult {
        let guard = self.elector.read().unwrap_or_else(|p| p.into_inner());
        let elector = guard.as_ref().ok_or_else(|| Failure::state("the elector is being freed"))?;
        block_on_timeout(self.command_limit(), async { Ok(elector.refusal_link().refused(term, reason).await) })?;
        Ok(())
    }

    /// Stops the renew loop (resigning when configured), delivers the last events, and releases
    /// the pools, all within the request timeout whatever the server does:
    /// 1. the elector steps down at once and resigns with the time left (`shutdown_by`); a
    ///    server that does not answer in time leaves the lease to lapse;
    /// 2. the delivery thread delivers the events up to the end of the loop; when it has not
    ///    by the budget (the loop still ends a call in the background), it delivers nothing
    ///    more of this elector, and `close` waits only for a callback of it that is running now,
    ///    so no callback runs after `_free` returns. Called on that very thread (from a
    ///    callback), it delivers nothing more and lets the current callback finish by itself
    ///    (`events::Subscription::close`);
    /// 3. the pools close in the background when no other user holds them.
    fn close(mut self: Box<Self>) {
        let budget = self.config.request_timeout;
        let until = Instant::now() + budget;
        let margin = (budget / 10).min(Duration::from_millis(20));
        let elector = self.elector.write().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(elector) = elector {
            let by = until.checked_sub(margin * 2).unwrap_or(until);
            let _ = block_on(elector.shutdown_by(by));
        }
        if let Some(callback) = self.callback.take() {
            callback.close(until.checked_sub(margin).unwrap_or(until).saturating_duration_since(Instant::now()));
        }
        // The shared session's last elector: the session ends (in the background).
        drop(self.shared.take());
        let left = until.saturating_duration_since(Instant::now());
        let mysqlleader_elector { client, _fallbacks: fallbacks, .. } = *self;
        ClientInner::release_within(client, left);
        for fallback in fallbacks {
            ClientInner::release_within(fallback, Duration::ZERO);
        }
    }
}

/// Renames the Rust configuration's field names to the C struct's in a validation error.
pub(super) fn config_failure(error: Error) -> Failure {
    match error {
        Error::InvalidArgument { parameter, message } => {
            let field = match parameter.as_str() {
                "lease" => "lease_ms",
                "renew_interval" => "renew_ms",
                "retry_interval" => "retry_ms",
                "request_timeout" => "request_timeout_ms",
                "drift_margin" => "drift_margin_ms",
                other => other,
            };
            Failure::invalid(&format!("config->{field}"), message)
        }
        other => other.into(),
    }
}

/// Makes an elector and starts it campaigning at once, in the background; it never blocks on
/// the database. `config` is described at `mysqlleader_elector_config`. `callback` (may be NULL)
/// receives every leadership change on the elector's callback thread, with `userdata` (any
/// value, passed along untouched) as its first argument.
///
/// The elector keeps the client's pool (and the fallback clients' pools) alive: the clients may
/// be freed before it.
///
/// The electors of one client whose configurations differ only in `service_id` (and name the
/// same fallback clients) share the client's connections: their calls are batched into one
/// `renew_seats` / `campaign_seats` over one connection, with one wake-up lock, so any number
/// of them hold their seats with two of the server's connections (10,000 electors on one client
/// all lead: bindings/c/test_mysqlleader.c). Each seat keeps a lease of its own, each elector its
/// own callback thread, log lines and API; a call waits for its batch at most a quarter of the
/// renew interval (500 ms at most), and the elector's deadline counts from before that wait. A
/// second elector of one node id for one service on a client runs alone, on connections of its
/// own. For one renew of one row for all of a node's seats, and one callback thread, use a
/// `mysqlleader_session`.
///
/// Errors: `MYSQLLEADER_NULL_ARGUMENT` (`client`, `config`, `config->service_id`,
/// `config->fallback_clients`, `elector_out`), `MYSQLLEADER_INVALID_UTF8`,
/// `MYSQLLEADER_INVALID_ARGUMENT` (the message names the field, e.g. `config->renew_ms`).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_new(
    client: *const mysqlleader_client,
    config: *const mysqlleader_elector_config,
    callback: mysqlleader_event_callback,
    userdata: *mut c_void,
    elector_out: *mut *mut mysqlleader_elector,
) -> mysqlleader_result {
    boundary(|| {
        // SAFETY (every unsafe block of this function): pointers follow the conventions.
        let client = unsafe { arg_ref(client, "client") }?;
        let c = unsafe { arg_ref(config, "config") }?;
        let elector_out = arg_out(elector_out, "elector_out")?;
        let service_id = unsafe { arg_str(c.service_id, "config->service_id") }?;
        // 1. The configuration, validated once: every default derived from the lease.
        let (builder, fallbacks) = unsafe { elector_builder(client, c, service_id) }?;
        let config = builder.config().map_err(config_failure)?;

        // 2. The renew loop on the library's runtime, subscribed to its events from the start:
        //    on the client's shared session for these settings (src/ffi/shared.rs), or alone
        //    when that session runs an elector for the service already.
        let (elector, events, shared) = match client.inner.shared.elector(builder, &config, &fallbacks).map_err(config_failure)? {
            Some((elector, events, shared)) => (elector, events, Some(shared)),
            None => {
                let pools = std::iter::once(client.inner.pool.clone()).chain(fallbacks.iter().map(|f| f.pool.clone())).collect();
                let _guard = runtime().enter();
                let (elector, events) = Elector::start_subscribed(pools, config.clone()).map_err(config_failure)?;
                (elector, events, None)
            }
        };
        // 3. The callback thread and the handle.
        let handle = elector_handle(elector, events, config, client.inner.clone(), fallbacks, shared, callback, userdata, None)?;
        unsafe { write_out(elector_out, handle) };
        Ok(())
    })
}

/// Reads `c` (all but `service_id`, which is `service_id`) into a builder on `client`'s pool,
/// with the fallback clients it names.
///
/// # Safety
/// `c`'s pointers follow the conventions.
pub(super) unsafe fn elector_builder(
    client: &mysqlleader_client,
    c: &mysqlleader_elector_config,
    service_id: &str,
) -> Result<(crate::elector::ElectorBuilder, Vec<Arc<ClientInner>>), Failure> {
    // SAFETY (every unsafe block of this function): pointers follow the conventions.
    let node_id = if c.node_id.is_null() { None } else { Some(unsafe { arg_str(c.node_id, "config->node_id") }?) };
    if c.fallback_client_count > 0 && c.fallback_clients.is_null() {
        return Err(Failure::null("config->fallback_clients"));
    }
    let mut fallbacks = Vec::with_capacity(c.fallback_client_count);
    for i in 0..c.fallback_client_count {
        let fallback = unsafe { arg_ref(*c.fallback_clients.add(i), &format!("config->fallback_clients[{i}]")) }?;
        fallbacks.push(fallback.inner.clone());
    }
    if c.flags & !KNOWN_FLAGS != 0 {
        return Err(Failure::invalid("config->flags", format!("unknown flag bits 0x{:x}", c.flags & !KNOWN_FLAGS)));
    }
    let jitter = if c.flags & MYSQLLEADER_ELECTOR_NO_JITTER != 0 {
        if c.retry_jitter != 0.0 {
            return Err(Failure::invalid("config->retry_jitter", "retry_jitter must be 0 with MYSQLLEADER_ELECTOR_NO_JITTER"));
        }
        Some(0.0)
    } else if c.retry_jitter == 0.0 {
        None
    } else {
        Some(c.retry_jitter)
    };
    let mut builder = Elector::builder(client.inner.pool.clone(), service_id)
        .resign_on_drop(c.flags & MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE == 0);
    if let Some(node_id) = node_id {
        builder = builder.node_id(node_id);
    }
    if c.lease_ms != 0 {
        builder = builder.lease(Duration::from_millis(c.lease_ms));
    }
    if c.renew_ms != 0 {
        builder = builder.renew_interval(Duration::from_millis(c.renew_ms));
    }
    if c.retry_ms != 0 {
        builder = builder.retry_interval(Duration::from_millis(c.retry_ms));
    }
    if let Some(jitter) = jitter {
        builder = builder.retry_jitter(jitter);
    }
    if c.request_timeout_ms != 0 {
        builder = builder.request_timeout(Duration::from_millis(c.request_timeout_ms));
    }
    if c.drift_margin_ms != 0 {
        builder = builder.drift_margin(Duration::from_millis(c.drift_margin_ms));
    }
    Ok((builder, fallbacks))
}

/// The C handle of a started elector: its callback (when given) fed by `events`, which was
/// subscribed before the elector's task started, on `deliveries` (its session's delivery
/// thread) or on a delivery thread of its own. On failure the elector is shut down.
pub(super) fn elector_handle(
    elector: Elector,
    events: broadcast::Receiver<Event>,
    config: ElectorConfig,
    client: Arc<ClientInner>,
    fallbacks: Vec<Arc<ClientInner>>,
    shared: Option<Arc<SharedSession>>,
    callback: mysqlleader_event_callback,
    userdata: *mut c_void,
    deliveries: Option<&Arc<Deliveries>>,
) -> Result<*mut mysqlleader_elector, Failure> {
    let state = elector.watch();
    let metrics = elector.metrics().clone();
    let callback = match callback {
        None => {
            drop(events);
            None
        }
        Some(function) => {
            let started = match deliveries {
                Some(shared) => Ok(shared.clone()),
                None => Deliveries::start(),
            };
            match started {
                Ok(deliveries) => Some(deliveries.subscribe(events, Callback { function, userdata }, &config.node_id)),
                Err(e) => {
                    let _ = block_on_within(config.request_timeout * 2, elector.shutdown());
                    return Err(Error::Connection { message: format!("could not start the callback thread: {e}") }.into());
                }
            }
        }
    };
    let handle = Box::new(mysqlleader_elector {
        elector: RwLock::new(Some(elector)),
        state,
        metrics,
        config,
        client,
        _fallbacks: fallbacks,
        shared,
        callback,
    });
    Ok(Box::into_raw(handle))
}

/// Whether this node leads now: true only while it holds the seat *and* its local deadline
/// has not passed at this very moment (a process paused past it sees false on waking).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_is_leader(elector: *const mysqlleader_elector, is_leader_out: *mut bool) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        let out = arg_out(is_leader_out, "is_leader_out")?;
        let leading = e.state.borrow().leads_at(Instant::now());
        unsafe { write_out(out, leading) };
        Ok(())
    })
}

/// The term seen last: while leading, the fencing token to pass to `assert_leader`.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_term(elector: *const mysqlleader_elector, term_out: *mut u64) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        let out = arg_out(term_out, "term_out")?;
        let term = e.state.borrow().term;
        unsafe { write_out(out, term) };
        Ok(())
    })
}

/// Milliseconds this node may still act as leader without another renew; 0 when not leading.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_valid_for_ms(elector: *const mysqlleader_elector, valid_for_ms_out: *mut u64) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        let out = arg_out(valid_for_ms_out, "valid_for_ms_out")?;
        let valid = e.state.borrow().valid_for(Instant::now());
        unsafe { write_out(out, ms(valid)) };
        Ok(())
    })
}

/// Copies the leader seen last into `buf` ("" when the seat was vacant); `buf`, `buf_len` and
/// `needed_out` (may be NULL) as in `mysqlleader_last_error_copy`. `MYSQLLEADER_ID_BUFFER_SIZE`
/// bytes always suffice.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_leader_id(
    elector: *const mysqlleader_elector,
    buf: *mut c_char,
    buf_len: usize,
    needed_out: *mut usize,
) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        let leader = e.state.borrow().leader_id.clone().unwrap_or_default();
        unsafe { copy_out(leader.as_bytes(), buf, buf_len, needed_out) }
    })
}

/// Copies this elector's node id (the configured one, or the `hostname:pid` default) into
/// `buf`, as `mysqlleader_elector_leader_id`.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_node_id(
    elector: *const mysqlleader_elector,
    buf: *mut c_char,
    buf_len: usize,
    needed_out: *mut usize,
) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        unsafe { copy_out(e.config.node_id.as_bytes(), buf, buf_len, needed_out) }
    })
}

/// A consistent snapshot of the elector's state.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_snapshot(elector: *const mysqlleader_elector, state_out: *mut mysqlleader_elector_state) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        let out = arg_out(state_out, "state_out")?;
        let now = Instant::now();
        let state = e.state.borrow().clone();
        let status = mysqlleader_elector_state {
            is_leader: state.leads_at(now),
            term: state.term,
            valid_for_ms: ms(state.valid_for(now)),
            campaigning: state.campaigning,
            last_call_result: state.last_error.clone().map_or(mysqlleader_result::MYSQLLEADER_OK, |err| Failure::from(err).code),
            leader_id: id_field(state.leader_id.as_deref())?,
        };
        unsafe { write_out(out, status) };
        Ok(())
    })
}

/// Copies the message of the elector's last failed call to the database ("" when it
/// succeeded) into `buf`, as `mysqlleader_elector_leader_id`: why a node does not lead, e.g.
/// "connection: Connection refused".
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_last_call_error(
    elector: *const mysqlleader_elector,
    buf: *mut c_char,
    buf_len: usize,
    needed_out: *mut usize,
) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        let message = e.state.borrow().last_error.as_ref().map(|err| crate::error::redact(&err.to_string())).unwrap_or_default();
        unsafe { copy_out(message.as_bytes(), buf, buf_len, needed_out) }
    })
}

/// Copies the elector's metrics into `buf`, in the Prometheus text format (version 0.0.4):
/// what Rust `Elector::metrics_text` renders, labelled `name="<service>"`, with the
/// `leader_election_master_status` gauge exact at the moment of the call (by the local deadline,
/// as `mysqlleader_elector_is_leader`), then `mysqlleader_term`,
/// `mysqlleader_leadership_transitions_total`, `mysqlleader_campaign_errors_total` and the
/// histogram `mysqlleader_campaign_duration_seconds`. `buf`, `buf_len` and `needed_out` (may be
/// NULL) as in `mysqlleader_last_error_copy`: on `MYSQLLEADER_BUFFER_TOO_SMALL`, `*needed_out`
/// has the bytes needed, NUL included. The text is a few kilobytes and may grow between two
/// calls (the counters go on), so allocate `*needed_out` with some room and call again while
/// the answer is `MYSQLLEADER_BUFFER_TOO_SMALL`. Never blocks, and answers also while the elector
/// is being freed (its last values).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_metrics_text(
    elector: *const mysqlleader_elector,
    buf: *mut c_char,
    buf_len: usize,
    needed_out: *mut usize,
) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        let text = e.metrics.render(&e.config.service_id, e.state.borrow().leads_at(Instant::now()));
        unsafe { copy_out(text.as_bytes(), buf, buf_len, needed_out) }
    })
}

/// Steps down at once and ends this node's lease in the database, so another node takes over
/// on its next attempt; afterwards the elector no longer campaigns (it keeps observing who
/// leads). `*resigned_out` (may be NULL) receives whether this node held the seat. Blocks for at
/// most twice the request timeout. `MYSQLLEADER_CONNECTION` when the database could not be told:
/// the node has stepped down all the same and its lease lapses.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_resign(elector: *const mysqlleader_elector, resigned_out: *mut bool) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        let guard = e.elector.read().unwrap_or_else(|p| p.into_inner());
        let elector = guard.as_ref().ok_or_else(|| Failure::state("the elector is being freed"))?;
        let resigned = block_on_timeout(e.command_limit(), elector.resign())?;
        unsafe { write_out(resigned_out, resigned) };
        Ok(())
    })
}

/// Hands leadership over to the node `to_node`, with no overlap: the elector steps down at once
/// (`MYSQLLEADER_STOP_HANDED_OVER`), ends its term in the database with the seat reserved for
/// `to_node` for one lease (`CALL resign_to`), then lets go of its wake-up lock so that
/// `to_node`, when it campaigns, wakes and takes the seat within milliseconds. The elector keeps
/// campaigning as a follower. `*handed_over_out` (may be NULL) tells whether this node led.
/// `to_node` must be another node's id (`MYSQLLEADER_INVALID_ARGUMENT`, parameter `to_node`).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_handover(
    elector: *const mysqlleader_elector,
    to_node: *const c_char,
    handed_over_out: *mut bool,
) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        let to_node = unsafe { arg_id(to_node, "to_node") }?;
        let guard = e.elector.read().unwrap_or_else(|p| p.into_inner());
        let elector = guard.as_ref().ok_or_else(|| Failure::state("the elector is being freed"))?;
        let handed_over = block_on_timeout(e.command_limit(), elector.handover(to_node))?;
        unsafe { write_out(handed_over_out, handed_over) };
        Ok(())
    })
}

/// Tells the elector that the database refused this node's `term`: SQLSTATE 45001 from an
/// `assert_leader` the application ran itself, on a connection of its own driver (the fence of
/// the Java and other bindings). When the elector still leads at `term` it steps down at once
/// (`MYSQLLEADER_STOP_LOST_SEAT`; `mysqlleader_elector_note_refusal_code` tells a handover's
/// refusal apart) and its next call, sent at once, learns who leads; a refusal of
/// any other term changes nothing. Returns once `mysqlleader_elector_is_leader` no longer reports
/// leading at `term` (waiting at most for a renew already in flight, bounded by twice the
/// request timeout; `MYSQLLEADER_CONNECTION` when even that passed).
///
/// **Fencing a transaction of the application's own client library** (libmariadb,
/// libmysqlclient): the library's own fenced transactions are `mysqlleader_elector_txn_begin`;
/// on a connection of your own, inside the transaction you opened on it, before `COMMIT` (and
/// after its last `ROLLBACK TO SAVEPOINT`):
///
/// 1. take the term this node leads at now, at one instant: `mysqlleader_elector_snapshot`;
///    when `is_leader` is false, do not write (roll back);
/// 2. run `CALL assert_leader('<service>', '<node>', <term>)` on your connection (escape the
///    ids, or bind them in a prepared statement) and read every result it returns
///    (`mysql_store_result`/`mysql_free_result` while `mysql_next_result` returns 0): a row
///    with `is_leader` = 1 means the term is share-locked (its history row, never the seat, so
///    the node's renews go on) until your transaction ends, so no takeover can commit before
///    your writes;
/// 3. on an error: SQLSTATE 45001 (`mysql_sqlstate`; error 31001, or 31004 when an operator's
///    handover ended the term: `mysql_errno`) is the refusal of the term: the server has rolled
///    your transaction back; call `mysqlleader_elector_note_refusal_code(elector, term,
///    mysql_errno(db))` (or `mysqlleader_elector_note_refusal(elector, term)`), after which
///    `mysqlleader_elector_is_leader` is false. 45000 (error 31003) `mysqlleader: assert_leader
///    needs an open transaction` means no transaction was open (MariaDB; it would have fenced nothing).
///    After any error, `ROLLBACK`. `mysqlleader_error_classify(mysql_errno(db),
///    mysql_sqlstate(db), mysql_error(db))` reads any of them as the library reads its own (the
///    result code, the parameter, the current term, in `mysqlleader_last_error*`).
///
/// In C, with the snapshot's `term` (the repository's README, "Fencing a transaction of your own
/// driver", has it with the snapshot):
///
/// ```c
/// mysql_query(db, "START TRANSACTION");
/// mysql_query(db, "INSERT INTO ledger VALUES (7, 'sent')");
/// snprintf(sql, sizeof sql, "CALL assert_leader('billing', 'web-3', %llu)", (unsigned long long)term);
/// if (mysql_query(db, sql) != 0) {
///     if (strcmp(mysql_sqlstate(db), "45001") == 0)
///         mysqlleader_elector_note_refusal_code(elector, term, mysql_errno(db)); // is_leader is false now
///     mysql_query(db, "ROLLBACK");
/// } else {
///     do { mysql_free_result(mysql_store_result(db)); } while (mysql_next_result(db) == 0);
///     mysql_query(db, "COMMIT");
/// }
/// ```
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_note_refusal(elector: *const mysqlleader_elector, term: u64) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        e.refused(term, StopReason::LostSeat)
    })
}

/// `mysqlleader_elector_note_refusal` with the refusal's error number (`mysql_errno`, JDBC's
/// `getErrorCode()`, a driver's `errno`): 31004, the refusal of a term an operator's handover
/// ended, makes the elector stop leading with `MYSQLLEADER_STOP_HANDED_OVER` (its next call
/// acknowledges the handover); any other number, as `mysqlleader_elector_note_refusal`, with
/// `MYSQLLEADER_STOP_LOST_SEAT`.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_note_refusal_code(elector: *const mysqlleader_elector, term: u64, server_code: u32) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        let reason = if server_code == u32::from(crate::error::refusal::HANDED_OVER) { StopReason::HandedOver } else { StopReason::LostSeat };
        e.refused(term, reason)
    })
}

/// How `mysqlleader_elector_wait` ended.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum mysqlleader_wait_outcome {
    /// This node leads (by its local deadline, at the moment of answering).
    MYSQLLEADER_WAIT_LEADING = 1,
    /// `timeout_ms` passed first.
    MYSQLLEADER_WAIT_TIMED_OUT = 2,
    /// The node no longer campaigns (it resigned, is being freed, or its task failed): it will
    /// not lead without a new elector.
    MYSQLLEADER_WAIT_NOT_CAMPAIGNING = 3,
    /// The elector's last call failed with an error retrying cannot fix (a refused login, a
    /// missing grant, the schema not installed, a service outside the account's patterns):
    /// `mysqlleader_elector_wait_for_leadership` returns that error, with its fields.
    /// The elector keeps trying.
    MYSQLLEADER_WAIT_FAILED = 4,
}

fn millis_limit(timeout_ms: u64) -> Option<Duration> {
    (timeout_ms != MYSQLLEADER_WAIT_FOREVER).then(|| Duration::from_millis(timeout_ms))
}

/// Waits until this node leads, `timeout_ms` pass (`MYSQLLEADER_WAIT_FOREVER`: no limit; 0 only
/// looks) or the node no longer campaigns, and says which in `*outcome_out`: the core's own
/// wait (Rust `Elector::wait_for_leadership`), the same in every language.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_wait(
    elector: *const mysqlleader_elector,
    timeout_ms: u64,
    outcome_out: *mut mysqlleader_wait_outcome,
) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        let out = arg_out(outcome_out, "outcome_out")?;
        let outcome = block_on(crate::elector::wait_for_leadership(e.state.clone(), millis_limit(timeout_ms)));
        let outcome = match outcome {
            WaitOutcome::Leading => mysqlleader_wait_outcome::MYSQLLEADER_WAIT_LEADING,
            WaitOutcome::TimedOut => mysqlleader_wait_outcome::MYSQLLEADER_WAIT_TIMED_OUT,
            WaitOutcome::NotCampaigning => mysqlleader_wait_outcome::MYSQLLEADER_WAIT_NOT_CAMPAIGNING,
            WaitOutcome::Failed => mysqlleader_wait_outcome::MYSQLLEADER_WAIT_FAILED,
        };
        unsafe { write_out(out, outcome) };
        Ok(())
    })
}

/// Waits until this node leads (`*leading_out` = true), or until `timeout_ms` pass or the
/// elector stops campaigning (false). `timeout_ms` 0 only looks; `MYSQLLEADER_WAIT_FOREVER`
/// waits without limit. `mysqlleader_elector_wait` also tells the last two apart.
///
/// When the elector's last call failed with an error retrying cannot fix (a refused login,
/// a missing grant, the schema not installed, a service outside the account's patterns), it
/// returns at once with that error (`MYSQLLEADER_AUTHENTICATION`, `MYSQLLEADER_PRIVILEGE`,
/// `MYSQLLEADER_NOT_MIGRATED`, `MYSQLLEADER_ACCESS_DENIED`, ...; the last error's fields as for
/// any call) and writes nothing to `*leading_out`.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_wait_for_leadership(
    elector: *const mysqlleader_elector,
    timeout_ms: u64,
    leading_out: *mut bool,
) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        let out = arg_out(leading_out, "leading_out")?;
        let outcome = block_on(crate::elector::wait_for_leadership(e.state.clone(), millis_limit(timeout_ms)));
        if outcome == WaitOutcome::Failed {
            if let Some(error) = e.state.borrow().last_error.clone().filter(Error::is_permanent) {
                return Err(error.into());
            }
        }
        unsafe { write_out(out, outcome == WaitOutcome::Leading) };
        Ok(())
    })
}

/// Waits until this node no longer leads at `term` (at once when it does not lead at `term`
/// now), at most `timeout_ms` (`MYSQLLEADER_WAIT_FOREVER`: no limit): `*ended_out` says whether
/// it ended, and `*reason_out` why (`MYSQLLEADER_STOP_NONE` while it goes on). The core's own
/// answer (Rust `Elector::term_ended`): what a binding's "run while leader" needs, with no
/// watchdog of its own.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_wait_term_end(
    elector: *const mysqlleader_elector,
    term: u64,
    timeout_ms: u64,
    ended_out: *mut bool,
    reason_out: *mut mysqlleader_stop_reason,
) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        let ended = arg_out(ended_out, "ended_out")?;
        let reason_out = arg_out(reason_out, "reason_out")?;
        let wait = crate::elector::term_ended(e.state.clone(), term);
        let reason = match millis_limit(timeout_ms) {
            Some(limit) => block_on(async { tokio::time::timeout(limit, wait).await.ok() }),
            None => Some(block_on(wait)),
        };
        unsafe {
            write_out(ended, reason.is_some());
            write_out(reason_out, reason.map_or(mysqlleader_stop_reason::MYSQLLEADER_STOP_NONE, stop_reason));
        }
        Ok(())
    })
}

/// `*healthy_out`: the elector's task runs and its last call succeeded within one lease (what
/// a `/healthz` endpoint answers).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_is_healthy(elector: *const mysqlleader_elector, healthy_out: *mut bool) -> mysqlleader_result {
    boundary(|| {
        let e = unsafe { arg_ref(elector, "elector") }?;
        let out = arg_out(healthy_out, "healthy_out")?;
        let healthy = {
            let s = e.state.borrow();
            s.running && s.last_ok.is_some_and(|t| t.elapsed() <= e.config.lease)
        };
        unsafe { write_out(out, healthy) };
        Ok(())
    })
}

/// Begins a fenced transaction for this elector: a transaction on the elector's (primary)
/// client in which `assert_leader(service, node, term)` has already succeeded, with the term
/// this node leads at now (written to `*term_out`, which may be NULL). Add the writes with
/// `mysqlleader_txn_execute`, then `mysqlleader_txn_commit`; no takeover can commit before them.
/// Each of its calls waits at most the client's request timeout and never past the lease
/// this node led by when it began (`MYSQLLEADER_CONNECTION`, "no answer within ...", after).
///
/// `MYSQLLEADER_NOT_LEADER` when this node does not lead now (no round trip then) or the
/// database says it no longer does; nothing is written to `*txn_out` then. After the database's
/// refusal the elector has stepped down before this returns (`mysqlleader_elector_is_leader` is
/// false; its next call, sent at once, learns who leads), as after `mysqlleader_elector_note_refusal`.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_txn_begin(
    elector: *const mysqlleader_elector,
    txn_out: *mut *mut mysqlleader_txn,
    term_out: *mut u64,
) -> mysqlleader_result {
    boundary(|| -> FfiResult {
        let e = unsafe { arg_ref(elector, "elector") }?;
        let txn_out = arg_out(txn_out, "txn_out")?;
        // The core's fenced transaction: a refusal steps the elector down before it returns,
        // and every step waits at most for the lease this node leads by (and the request timeout).
        let core = {
            let guard = e.elector.read().unwrap_or_else(|p| p.into_inner());
            let elector = guard.as_ref().ok_or_else(|| Failure::state("the elector is being freed"))?;
            block_on(elector.fenced(&e.client.pool))?
        };
        let term = core.term().unwrap_or_default();
        let txn = mysqlleader_txn::adopt(&e.client, core);
        unsafe { write_out(txn_out, Box::into_raw(txn)) };
        unsafe { write_out(term_out, term) };
        Ok(())
    })
}

/// Stops the elector and releases it. When the configuration does not say
/// `MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE`, a leader resigns first so another node takes over
/// at once (waiting at most twice the request timeout). The last events (e.g. stopped leading,
/// reason `MYSQLLEADER_STOP_SHUTDOWN`) are delivered before it returns; no callback runs after it
/// returns.
///
/// May be called from the elector's own callback: then it shuts the elector down the same way,
/// the callback thread delivers nothing more and ends by itself after the callback returns.
/// `mysqlleader_elector_free(NULL)` does nothing.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_elector_free(elector: *mut mysqlleader_elector) {
    if elector.is_null() {
        return;
    }
    boundary_void(|| {
        // SAFETY: `elector` came from mysqlleader_elector_new and is freed once (the conventions).
        let handle = unsafe { Box::from_raw(elector) };
        handle.close();
    });
}

/// The C number of a stop reason.
pub(super) fn stop_reason(reason: StopReason) -> mysqlleader_stop_reason {
    match reason {
        StopReason::LostSeat => mysqlleader_stop_reason::MYSQLLEADER_STOP_LOST_SEAT,
        StopReason::DeadlinePassed => mysqlleader_stop_reason::MYSQLLEADER_STOP_DEADLINE_PASSED,
        StopReason::Resigned => mysqlleader_stop_reason::MYSQLLEADER_STOP_RESIGNED,
        StopReason::Shutdown => mysqlleader_stop_reason::MYSQLLEADER_STOP_SHUTDOWN,
        StopReason::Failed => mysqlleader_stop_reason::MYSQLLEADER_STOP_FAILED,
        StopReason::HandedOver => mysqlleader_stop_reason::MYSQLLEADER_STOP_HANDED_OVER,
    }
}

/// The name of a stop reason: `"lost_seat"`, `"deadline_passed"`, `"resigned"`, `"shutdown"`,
/// `"failed"`, `"handed_over"`, `"none"`, or `"unknown"` for a number this version does not
/// know. A static string.
#[no_mangle]
pub extern "C" fn mysqlleader_stop_reason_name(reason: u32) -> *const c_char {
    let name = match reason {
        0 => c"none",
        1 => c"lost_seat",
        2 => c"deadline_passed",
        3 => c"resigned",
        4 => c"shutdown",
        5 => c"failed",
        6 => c"handed_over",
        _ => c"unknown",
    };
    name.as_ptr()
}
