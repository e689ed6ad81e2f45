//! The session's resigns, batched. Every elector of a session resigns when it stops (a
//! session's shutdown stops them all at once); one call per seat made a graceful shutdown of
//! thousands of seats slower than a crash (issue "Fleets"). The resigns go to one task instead,
//! which gives up the seats of all that arrive together in one `resign_seats` call. Each
//! elector has stepped down before it resigns (its task does that first), so the batch vacates
//! only seats nobody acts on.
//!
//! 1. **Collect.** Wait for a resign; take with it every one that comes within [`QUIET`] of the
//!    one before, for at most a batch window, and at most [`BATCH_LIMIT`].
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

use std::collections::HashMap;
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

/// Steps 1–4, until the session and every elector of it are gone.
pub(super) async fn resigner(core: Arc<Core>, mut requests: mpsc::UnboundedReceiver<ResignRequest>) {
    while let Some(first) = requests.recv().await {
        // 1. Collect.
        let closes = Instant::now() + core.window;
        let mut batch = vec![first];
        while batch.len() < BATCH_LIMIT {
            tokio::select! {
                request = requests.recv() => match request {
                    Some(r) => batch.push(r),
                    None => break,
                },
                () = sleep_until(closes.min(Instant::now() + QUIET)) => break,
            }
        }
        // A resign whose elector stopped waiting is dropped (that elector may campaign again,
        // and a late resign would end its new term), except one asked for by a shutdown: no
        // elector of the session campaigns after it, and each stepped down before it resigned,
        // so the seat is vacated late rather than left to lapse (Session::shutdown).
        batch.retain(|r| r.by_shutdown || !r.reply.is_closed());
        if batch.len() >= 2 {
            // 3. and 4. Many.
            resign_many(&core, batch).await;
        } else if let Some(r) = batch.pop() {
            // 2. One.
            let answer = core.call(|db, server| db.resign(server, &r.config)).await;
            let _ = r.reply.send(answer);
        }
    }
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
