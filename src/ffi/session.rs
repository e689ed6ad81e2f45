//! `mysqlleader_session`: one node's electors of many services over one kept connection and one
//! renew for all their seats ([`crate::session`]). Its electors are ordinary
//! `mysqlleader_elector` handles: every `mysqlleader_elector_` function works on them, and each
//! is freed with `mysqlleader_elector_free`.

use std::ffi::{c_char, c_void};
use std::sync::{Arc, RwLock};

use super::client::{mysqlleader_client, ClientInner};
use super::events::Deliveries;
use super::elector::{elector_builder, elector_handle, mysqlleader_elector, mysqlleader_elector_config, mysqlleader_event_callback};
use super::result::{boundary, boundary_void, mysqlleader_result, Failure};
use super::runtime::{block_on, runtime};
use super::strings::{arg_out, arg_ref, arg_str, copy_out, write_out};
use crate::config::ElectorConfig;
use crate::session::{Session, SessionBuilder};

/// A session: one node id and one lease configuration for many electors, made by
/// `mysqlleader_session_new` and released by `mysqlleader_session_free`. May be used from any
/// number of threads at once.
pub struct mysqlleader_session {
    /// `None` once `_free` has begun.
    session: RwLock<Option<Session>>,
    config: ElectorConfig,
    /// The session's server; it stays open while the session or an elector of it lives.
    client: Arc<ClientInner>,
    /// The fallback servers (`config->fallback_clients`), kept as `client` is.
    fallbacks: Vec<Arc<ClientInner>>,
    /// The one delivery thread of every callback of the session's electors, started with the
    /// first elector that has a callback.
    deliveries: std::sync::Mutex<Option<Arc<Deliveries>>>,
}

/// Makes a session on `client`'s database. `config` is what every elector of the session gets
/// (see `mysqlleader_elector_config`), except that `service_id` must be NULL (each elector
/// names its own). With fallback clients the session's calls move to the next server after a
/// transient failure (a lost connection, a timeout), as an elector's do. Connects to nothing yet.
///
/// Errors: `MYSQLLEADER_NULL_ARGUMENT` (`client`, `config`, `session_out`),
/// `MYSQLLEADER_INVALID_UTF8`, `MYSQLLEADER_INVALID_ARGUMENT` (the message names the field,
/// e.g. `config->service_id`, `config->renew_ms`).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_session_new(
    client: *const mysqlleader_client,
    config: *const mysqlleader_elector_config,
    session_out: *mut *mut mysqlleader_session,
) -> mysqlleader_result {
    boundary(|| {
        // SAFETY (every unsafe block of this function): pointers follow the conventions.
        let client = unsafe { arg_ref(client, "client") }?;
        let c = unsafe { arg_ref(config, "config") }?;
        let session_out = arg_out(session_out, "session_out")?;
        if !c.service_id.is_null() {
            return Err(Failure::invalid("config->service_id", "a session's config names no service: set service_id to NULL \
                                          and name each service in mysqlleader_session_elector"));
        }
        let (builder, fallbacks) = unsafe { elector_builder(client, c, "session") }?;
        let builder = SessionBuilder::from_electors(builder.fallback_servers(fallbacks.iter().map(|f| f.pool.clone())));
        let config = builder.config().map_err(super::elector::config_failure)?;
        let session = {
            let _guard = runtime().enter();
            builder.start().map_err(super::elector::config_failure)?
        };
        let handle = Box::new(mysqlleader_session { session: RwLock::new(Some(session)), config, client: client.inner.clone(), fallbacks,
                                                    deliveries: std::sync::Mutex::new(None) });
        unsafe { write_out(session_out, Box::into_raw(handle)) };
        Ok(())
    })
}

/// Starts an elector for `service_id` in `session`: it campaigns at once with the session's node
/// id and lease, its calls batched with the session's others. `callback` and `userdata` are as
/// for `mysqlleader_elector_new`. The handle is an ordinary `mysqlleader_elector`: free it with
/// `mysqlleader_elector_free` (which resigns that seat alone, unless
/// `MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE`).
///
/// Errors: `MYSQLLEADER_NULL_ARGUMENT` (`session`, `service_id`, `elector_out`),
/// `MYSQLLEADER_INVALID_UTF8`, `MYSQLLEADER_INVALID_ARGUMENT` (`service_id`: empty, too long,
/// or this session runs an elector for it already), `MYSQLLEADER_INVALID_STATE` (the session is being
/// freed).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_session_elector(
    session: *const mysqlleader_session,
    service_id: *const c_char,
    callback: mysqlleader_event_callback,
    userdata: *mut c_void,
    elector_out: *mut *mut mysqlleader_elector,
) -> mysqlleader_result {
    boundary(|| {
        // SAFETY (every unsafe block of this function): pointers follow the conventions.
        let handle = unsafe { arg_ref(session, "session") }?;
        let service_id = unsafe { arg_str(service_id, "service_id") }?;
        let elector_out = arg_out(elector_out, "elector_out")?;
        let started = {
            let session = handle.session.read().unwrap_or_else(|e| e.into_inner());
            let session = session.as_ref().ok_or_else(|| crate::Error::stopped("the session is being freed"))?;
            session.elector_subscribed(service_id)?
        };
        let (elector, events) = started;
        let config = elector.config().clone();
        let deliveries = match callback {
            None => None,
            Some(_) => {
                let mut shared = handle.deliveries.lock().unwrap_or_else(|e| e.into_inner());
                if shared.is_none() {
                    *shared = Some(Deliveries::start().map_err(|e| {
                        crate::Error::Connection { message: format!("could not start the session's callback thread: {e}") }
                    })?);
                }
                shared.clone()
            }
        };
        let out = elector_handle(elector, events, config, handle.client.clone(), handle.fallbacks.clone(), None, callback, userdata,
                                 deliveries.as_ref())?;
        unsafe { write_out(elector_out, out) };
        Ok(())
    })
}

/// Copies the session's metrics into `buf` as one Prometheus text exposition (version 0.0.4),
/// compact: what Rust `Session::metrics_text` renders. First the session's own series, labelled
/// `node="<node id>"`: `mysqlleader_session_seats{state="leading|following|vacant"}` (its running
/// electors now), the counters `mysqlleader_session_renew_batches_total`,
/// `_renew_batch_failures_total`, `_renewed_seats_total`, `_take_batches_total`,
/// `_take_batch_failures_total`, `_taken_seats_total`, `_resign_batches_total` and
/// `_single_campaigns_total`, and the histogram `mysqlleader_session_renew_batch_duration_seconds`
/// (each `renew_seats` round trip); then per running elector (`name="<service>"`, by service id)
/// only `leader_election_master_status`, exact at the moment of the call, and
/// `mysqlleader_term`. Each metric's `HELP` and `TYPE` once. Concatenating the electors' own
/// `mysqlleader_elector_metrics_text` is not a valid exposition (a scraper rejects the repeated
/// `HELP`/`TYPE` lines): serve this one for a session. `buf`, `buf_len` and `needed_out` (may be
/// NULL) as in `mysqlleader_last_error_copy`; the text grows with the services (about 75 bytes
/// plus twice the service id's length each, so 10,000 services of 10-byte ids stay under 1 MB;
/// the session's series add about 3.5 KB) and between two calls, so call again while the answer
/// is `MYSQLLEADER_BUFFER_TOO_SMALL`. Never blocks on the database. `MYSQLLEADER_INVALID_STATE`
/// once the session is being freed.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_session_metrics_text(
    session: *const mysqlleader_session,
    buf: *mut c_char,
    buf_len: usize,
    needed_out: *mut usize,
) -> mysqlleader_result {
    // SAFETY: the caller's pointers, passed on unchanged.
    unsafe { session_metrics(session, false, buf, buf_len, needed_out) }
}

/// `mysqlleader_session_metrics_text` with every running elector's full series, as
/// `mysqlleader_elector_metrics_text` renders them (also
/// `mysqlleader_leadership_transitions_total`, `mysqlleader_campaign_errors_total` and the
/// histogram `mysqlleader_campaign_duration_seconds`, whose durations in a session include the
/// wait for a batch): what Rust `Session::metrics_text_detailed` renders, about 1.5 KB a
/// service. Arguments and errors as for `mysqlleader_session_metrics_text`.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_session_metrics_text_detailed(
    session: *const mysqlleader_session,
    buf: *mut c_char,
    buf_len: usize,
    needed_out: *mut usize,
) -> mysqlleader_result {
    // SAFETY: the caller's pointers, passed on unchanged.
    unsafe { session_metrics(session, true, buf, buf_len, needed_out) }
}

/// Both `mysqlleader_session_metrics_text` functions.
unsafe fn session_metrics(
    session: *const mysqlleader_session,
    detailed: bool,
    buf: *mut c_char,
    buf_len: usize,
    needed_out: *mut usize,
) -> mysqlleader_result {
    boundary(|| {
        // SAFETY: pointers follow the conventions.
        let handle = unsafe { arg_ref(session, "session") }?;
        let text = {
            let session = handle.session.read().unwrap_or_else(|e| e.into_inner());
            let session = session.as_ref().ok_or_else(|| crate::Error::stopped("the session is being freed"))?;
            if detailed { session.metrics_text_detailed() } else { session.metrics_text() }
        };
        unsafe { copy_out(text.as_bytes(), buf, buf_len, needed_out) }
    })
}

/// Shuts down every elector of the session that still runs (each steps down at once and resigns
/// unless `MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE`; the resigns share the session's connection,
/// and the call waits for them at most the request timeout plus 1 ms per elector, never longer
/// than a lease unless the request timeout is; a resign not done by then still goes out while
/// the process runs, else its lease lapses), then frees the session. The elector handles stay valid, report that they no longer campaign, and must still
/// be freed with `mysqlleader_elector_free`. `mysqlleader_session_free(NULL)` does nothing.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_session_free(session: *mut mysqlleader_session) {
    if session.is_null() {
        return;
    }
    boundary_void(|| {
        // SAFETY: `session` came from mysqlleader_session_new and is freed once (the conventions).
        let handle = unsafe { Box::from_raw(session) };
        let session = handle.session.write().unwrap_or_else(|e| e.into_inner()).take();
        let started = tokio::time::Instant::now();
        if let Some(session) = session {
            let _ = block_on(session.shutdown());
        }
        let left = handle.config.request_timeout.saturating_sub(started.elapsed());
        let mysqlleader_session { client, fallbacks, .. } = *handle;
        ClientInner::release_within(client, left);
        for fallback in fallbacks {
            ClientInner::release_within(fallback, std::time::Duration::ZERO);
        }
    });
}
