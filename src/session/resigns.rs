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
//!    term that ended. A seat it left out whose elector was leading (another transaction held
//!    the seat, an application's fence: `resign_seats` skips it rather than wait) gets a
//!    `resign` of its own, which waits for it as `resign` does; the other seats left out (their
//!    electors followed) answer not resigned, as `resign` would have.
//! 4. **Fallback.** When `resign_seats` fails (an account granted before it existed has no
//!    EXECUTE on it; a server still on an older schema lacks it), each leader's seat gets its own
//!    `resign`, as before it existed; followers answer not resigned.

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
    /// Whether the elector led when it stepped down to resign (step 3).
    pub(super) leading: bool,
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
        batch.retain(|r| !r.reply.is_closed());
        if batch.len() >= 2 {
            // 3. and 4. Many.
            resign_many(&core, batch).await;
        } else if let Some(r) = batch.pop() {
            // 2. One.
            let answer = core.db.resign(0, &r.config).await;
            let _ = r.reply.send(answer);
        }
    }
}

/// Steps 3 and 4 for `batch` (two or more resigns).
async fn resign_many(core: &Core, batch: Vec<ResignRequest>) {
    let node = core.template.node_id.clone();
    let ids: Vec<String> = batch.iter().map(|r| r.config.service_id.clone()).collect();
    let answer = core
        .db
        .call(0, &batch[0].config, move |conn, _| {
            Box::pin(async move {
                let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                procedures::resign_seats(conn, &node, &refs).await
            })
        })
        .await;
    core.count(|s| s.resign_batches += 1);
    let resigned: HashMap<String, u64> = match answer {
        Ok(seats) => seats.into_iter().map(|s| (s.service_id, s.term)).collect(),
        Err(e) => {
            tracing::debug!(node = %core.template.node_id, error = %e, "resign_seats failed: the leaders' seats resign one by one");
            HashMap::new()
        }
    };
    for r in batch {
        let answer = match resigned.get(&r.config.service_id) {
            Some(&term) => Ok(Resign { resigned: true, term }),
            None if r.leading => core.db.resign(0, &r.config).await,
            None => Ok(Resign { resigned: false, term: 0 }),
        };
        let _ = r.reply.send(answer);
    }
}
