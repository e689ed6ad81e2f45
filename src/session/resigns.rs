//! The session's resigns, batched. Every elector of a session resigns when it stops (a
//! session's shutdown stops them all at once); one call per seat made a graceful shutdown of
//! thousands of seats slower than a crash (issue "Fleets"). The resigns go to one task instead,
//! which gives up the seats of all that arrive together in one `resign_seats` call. Each
//! elector has stepped down before it resigns (its task does that first), so the batch vacates
//! only seats nobody acts on.
//!
//! 1. **Collect.** Wait for a resign; take with it every one that comes within [`QUIET`] of the
//!    one before, for at most a batch window, and at most [`BATCH_LIMIT`]. (A session of a C
//!    client's plain electors takes only those queued already: they are freed one at a time.)
//! 2. **One.** A resign alone is sent as `resign`, as a plain elector sends it.
//! 3. **Many.** Several go in one `resign_seats`: a seat it resigned answers resigned, at the
//!    term that ended. A seat it skipped while the node still holds it (another transaction held
//!    the seat, an application's fence: `resign_seats` answers it `resigned` 0 rather than wait)
//!    gets a `resign` of its own, which waits for it as `resign` does; a seat it does not
//!    mention was not the node's, and answers not resigned, as `resign` would have.
//! 4. **Fallback.** When `resign_seats` fails (an account granted before it existed has no
//!    EXECUTE on it; a server still on an older schema lacks it), each seat the node may hold
//!    (its elector led, or it is an elector's first resign, which ends a predecessor's term)
//!    gets its own `resign`, as before it existed; the others answer not resigned.
//!
//! A shutdown of a session that holds a node lease goes first through one more step (issue
//! "Fleets": resign_seats writes a seat a statement, and a close of 10,000 seats handed over in
//! about 2.5 s on MariaDB and 4 s on MySQL; with the release, 1.5-2.4 s, docs/benchmarks.md):
//!
//! 0. **Release.** The first resign a shutdown asks for opens a collection that waits for the
//!    resign of every elector the shutdown stops (each has stepped down before it asks: none
//!    counts itself leader any more), for at most half the request timeout. When all came, one
//!    `release_lease` ends the lease, and with it every seat on it, vacant at once: each
//!    resign of a seat it released is answered from it (resigned, at the term that ended). The
//!    rest (followers, seats on no lease, a release that failed or found the lease ended) go
//!    through steps 2-4 in batches. When not all came in time, nothing is released (an elector
//!    that has not stepped down may still count on the lease) and every resign goes through
//!    steps 2-4.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::time::{sleep_until, Instant};

use super::{Core, BATCH_LIMIT};
use crate::config::ElectorConfig;
use crate::elector::task::Backend;
use crate::error::Result;
use crate::procedures::{self, Resign};

/// How long the collection waits for the next resign after one came (step 1): the electors of a
/// shutdown send theirs within microseconds of each other; a lone resign waits this much more.
pub(super) const QUIET: Duration = Duration::from_millis(5);

/// One elector's resign, queued for a batch.
pub(super) struct ResignRequest {
    pub(super) config: Arc<ElectorConfig>,
    /// Whether the node may hold the seat (step 4): its elector led when it stepped down to
    /// resign, or this is the elector's first resign, sent before its first campaign to end a
    /// term a previous process with the node's id may still hold.
    pub(super) may_hold: bool,
    /// Whether the session was closing when the elector asked (Session::shutdown): only such a
    /// resign is sent after its elector stopped waiting. A resign asked for before the shutdown
    /// whose elector gave up on it stays dropped even when the batch is sent during the shutdown:
    /// that elector may have campaigned and led again since, and still count itself leader.
    pub(super) by_shutdown: bool,
    pub(super) reply: oneshot::Sender<Result<Resign>>,
}

/// Steps 0–4, until the session and every elector of it are gone.
pub(super) async fn resigner(core: Arc<Core>, mut requests: mpsc::UnboundedReceiver<ResignRequest>) {
    let mut released_once = false;
    while let Some(first) = requests.recv().await {
        // 0. Release, once, for a shutdown of a session on a node lease.
        if first.by_shutdown && !released_once && core.lease.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
            released_once = true;
            let mut rest = release(&core, first, &mut requests).await;
            while !rest.is_empty() {
                let chunk: Vec<ResignRequest> = rest.drain(..rest.len().min(BATCH_LIMIT)).collect();
                send_batch(&core, chunk).await;
            }
            continue;
        }
        // 1. Collect. A client's plain electors (src/ffi/shared.rs) are freed one call at a
        //    time, each waiting for its resign: the quiet wait would add QUIET to every free.
        //    Theirs go with the ones queued meanwhile (frees from several threads), without
        //    waiting for more.
        let closes = Instant::now() + core.window;
        let mut batch = vec![first];
        while batch.len() < BATCH_LIMIT {
            let request = if core.plain {
                requests.try_recv().ok()
            } else {
                tokio::select! {
                    request = requests.recv() => request,
                    () = sleep_until(closes.min(Instant::now() + QUIET)) => None,
                }
            };
            match request {
                Some(r) => batch.push(r),
                None => break,
            }
        }
        // A resign whose elector stopped waiting is dropped (that elector may campaign again,
        // and a late resign would end its new term), except one asked for by a shutdown: no
        // elector of the session campaigns after it, and each stepped down before it resigned,
        // so the seat is vacated late rather than left to lapse (Session::shutdown).
        send_batch(&core, batch).await;
    }
}

/// Steps 2–4 for a collected batch.
async fn send_batch(core: &Core, mut batch: Vec<ResignRequest>) {
    batch.retain(|r| r.by_shutdown || !r.reply.is_closed());
    if batch.len() >= 2 {
        // 3. and 4. Many.
        resign_many(core, batch).await;
    } else if let Some(r) = batch.pop() {
        // 2. One.
        let answer = core.call(|db, server| db.resign(server, &r.config)).await;
        let _ = r.reply.send(answer);
    }
}

/// Step 0: collects the shutdown's resigns, beginning with `first`, releases the lease when
/// every stopped elector's came, answers the resigns of the seats it released, and gives back
/// the others for steps 2-4.
async fn release(core: &Core, first: ResignRequest, requests: &mut mpsc::UnboundedReceiver<ResignRequest>) -> Vec<ResignRequest> {
    let expected = core.stopping.load(Ordering::SeqCst);
    let closes = Instant::now() + core.template.request_timeout / 2;
    // How many of the batch a shutdown asked for (counted as they come: a shutdown of 10,000).
    let mut came = usize::from(first.by_shutdown);
    let mut batch = vec![first];
    while came < expected {
        tokio::select! {
            request = requests.recv() => match request {
                Some(r) => {
                    came += usize::from(r.by_shutdown);
                    batch.push(r);
                }
                None => break,
            },
            () = sleep_until(closes) => break,
        }
    }
    let lease = *core.lease.lock().unwrap_or_else(|e| e.into_inner());
    let (Some(lease_id), true) = (lease, came >= expected) else {
        tracing::debug!(node = %core.template.node_id, came = batch.len(), expected,
                        "not every elector of the shutdown asked to resign in time: the seats resign in batches");
        return batch;
    };
    let node = core.template.node_id.clone();
    let answer = core
        .call(|db, server| db.call(server, &batch[0].config, move |conn, _| {
            Box::pin(async move { procedures::release_lease(conn, lease_id, &node).await })
        }))
        .await;
    core.count(|s| s.resign_batches += 1);
    let released: HashMap<String, u64> = match answer {
        Ok(r) if r.released => {
            *core.lease.lock().unwrap_or_else(|e| e.into_inner()) = None;
            r.seats.into_iter().collect()
        }
        Ok(_) => HashMap::new(),
        Err(e) => {
            tracing::debug!(node = %core.template.node_id, error = %e, "release_lease failed: the seats resign in batches");
            HashMap::new()
        }
    };
    batch
        .into_iter()
        .filter_map(|r| match released.get(&r.config.service_id) {
            Some(&term) => {
                let _ = r.reply.send(Ok(Resign { resigned: true, term }));
                None
            }
            None => Some(r),
        })
        .collect()
}

/// Steps 3 and 4 for `batch` (two or more resigns).
async fn resign_many(core: &Core, batch: Vec<ResignRequest>) {
    let node = core.template.node_id.clone();
    let ids: Vec<String> = batch.iter().map(|r| r.config.service_id.clone()).collect();
    let answer = core
        .call(|db, server| db.call(server, &batch[0].config, move |conn, _| {
            Box::pin(async move {
                let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                procedures::resign_seats(conn, &node, &refs).await
            })
        }))
        .await;
    core.count(|s| s.resign_batches += 1);
    let (answered, resigned): (bool, HashMap<String, (bool, u64)>) = match answer {
        Ok(seats) => (true, seats.into_iter().map(|s| (s.service_id, (s.resigned, s.term))).collect()),
        Err(e) => {
            tracing::debug!(node = %core.template.node_id, error = %e, "resign_seats failed: the seats the node may hold resign one by one");
            (false, HashMap::new())
        }
    };
    for r in batch {
        let answer = match resigned.get(&r.config.service_id) {
            Some(&(true, term)) => Ok(Resign { resigned: true, term }),
            // Still held: locked by another transaction (step 3), or the batch failed (step 4).
            Some(&(false, _)) => core.call(|db, server| db.resign(server, &r.config)).await,
            None if !answered && r.may_hold => core.call(|db, server| db.resign(server, &r.config)).await,
            None => Ok(Resign { resigned: false, term: 0 }),
        };
        let _ = r.reply.send(answer);
    }
}
