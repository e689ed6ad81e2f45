//! A client's shared sessions: the plain electors of one `mysqlleader_client` (every binding's
//! `Elector` on a `Client`) ride one [`Session`] per configuration, as etcd's elections of one
//! client ride one session. Without it each plain elector renewed with a call of its own over a
//! connection of its own, so a client of 10,000 electors (a pool of 100 connections) lost every
//! seat; with it, any number of them hold their seats over two connections of the pool.
//!
//! What a plain elector keeps, so that nothing else about it changes:
//! * **its seat's own lease.** The shared session renews with `renew_seats` and takes with
//!   `campaign_seats` ([`SessionBuilder::plain_electors`]), never with a node lease: the seat
//!   rows, the history and what SQL clients read are those of electors that run alone;
//! * **its log lines**, each with its service and term (a failing call once per change of
//!   condition);
//! * **its callback thread** (src/ffi/events.rs): a slow callback holds up its own elector's
//!   events only, as before (a [`mysqlleader_session`](super::session)'s electors share one);
//! * **its API and its configuration.** Electors share a session only when every setting but
//!   the service id is the same (node id, lease, intervals, request timeout, drift margin, flags)
//!   and so are their fallback clients; others get a session of their own.
//!
//! What changes: the electors' calls are batched on one connection (a call waits for the batch
//! at most a quarter of the renew interval and 500 ms; its deadline counts from before the
//! wait), and there is one wake-up lock per session instead of one per service. A second
//! elector for a service the shared session runs already (one node id twice for a service on
//! one client) runs alone, as every plain elector did. The session ends with its last elector.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::broadcast;

use super::client::ClientInner;
use super::runtime::runtime;
use crate::config::ElectorConfig;
use crate::elector::{Elector, ElectorBuilder, Event};
use crate::session::{Session, SessionBuilder};

/// One shared session; the electors on it hold it, and it shuts down when the last one goes.
pub(super) struct SharedSession {
    session: Option<Session>,
}

impl Drop for SharedSession {
    /// Its electors are gone (each resigned as configured when it was freed): the session's
    /// tasks end and its two connections go back to the pool, in the background.
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            runtime().spawn(async move {
                let _ = session.shutdown().await;
            });
        }
    }
}

/// What decides which electors share a session: every setting but the service id, and the
/// fallback clients (by identity).
#[derive(PartialEq, Eq, Hash)]
struct Key {
    config: ElectorConfig,
    fallbacks: Vec<usize>,
}

/// A client's shared sessions, by [`Key`]; a session with no elector left is gone (the map
/// holds it weakly, and forgets it at the next new session).
#[derive(Default)]
pub(crate) struct SharedSessions {
    sessions: Mutex<HashMap<Key, Weak<SharedSession>>>,
}

impl SharedSessions {
    /// Starts an elector for `config.service_id` on the client's shared session for `config`'s
    /// settings (started first when there is none), with a receiver of its events subscribed
    /// before its task started. `None` when that session runs an elector for the service already:
    /// the caller starts this one alone. `builder` is `config`'s, on the client's pool, without
    /// the fallbacks; inside no runtime.
    pub(super) fn elector(
        &self,
        builder: ElectorBuilder,
        config: &ElectorConfig,
        fallbacks: &[Arc<ClientInner>],
    ) -> crate::Result<Option<(Elector, broadcast::Receiver<Event>, Arc<SharedSession>)>> {
        let key = Key {
            config: ElectorConfig { service_id: String::new(), ..config.clone() },
            fallbacks: fallbacks.iter().map(|f| Arc::as_ptr(f) as usize).collect(),
        };
        // Held while the elector starts, so that two threads starting electors of one service
        // cannot both find the session without it.
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        let shared = match sessions.get(&key).and_then(Weak::upgrade) {
            Some(shared) => shared,
            None => {
                let builder = SessionBuilder::from_electors(builder.fallback_servers(fallbacks.iter().map(|f| f.pool.clone())));
                let session = {
                    let _guard = runtime().enter();
                    builder.plain_electors().start()?
                };
                let shared = Arc::new(SharedSession { session: Some(session) });
                sessions.retain(|_, s| s.strong_count() > 0);
                sessions.insert(key, Arc::downgrade(&shared));
                shared
            }
        };
        // Taken only by its drop, which cannot run while `shared` is held here.
        let session = shared.session.as_ref().ok_or_else(|| crate::Error::stopped("the client's shared session has ended"))?;
        Ok(session.start_elector(&config.service_id)?.map(|(elector, events)| (elector, events, shared)))
    }
}
