//! The session's batcher: steps 1–5 of the session's module documentation.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};

use super::{Core, Request, BATCH_LIMIT, RECENT_BATCHES};
use crate::elector::task::Backend;
use crate::procedures::{self, Campaign};

/// The session's batcher: steps 1–5 of the module documentation, until the session and every
/// elector of it are gone. The takeovers of step 3 (one `campaign_seats` per chunk of seats) and
/// the one-by-one campaigns of step 4 each run for at most a batch window at a time: calls
/// queued meanwhile (the leaders' renews) are batched and sent first, so that thousands of
/// takeovers never starve the renews of the seats the node holds.
pub(super) async fn batcher(core: Arc<Core>, mut requests: mpsc::UnboundedReceiver<Request>) {
    // Chunks of seats left for campaign_seats (step 3), and seats left for a campaign each
    // (step 4), from the rounds before.
    let mut takes: VecDeque<Vec<Request>> = VecDeque::new();
    let mut rest: VecDeque<Request> = VecDeque::new();
    loop {
        // 1. The first call: wait for one, unless takeovers or campaigns are left from the
        //    round before (then take only what is queued now, without waiting).
        let idle = takes.is_empty() && rest.is_empty();
        let first = if idle {
            match requests.recv().await {
                Some(r) => Some(r),
                None => return,
            }
        } else {
            requests.try_recv().ok()
        };
        if let Some(first) = first {
            let mut batch = collect(&core, &mut requests, first, idle).await;
            // 2. One renew_seats per BATCH_LIMIT services, the leaders' renews first (in the
            //    first call, answered as it returns), and every renew before any takeover: a
            //    leader never waits behind a thousand vacant seats' calls. (Before, with 1,000
            //    new electors queued beside 20 leaders, a leader's renew could wait for a renew
            //    and a takeover of 500 seats each; on a loaded machine that passed the request
            //    timeout, and a held seat stepped down.)
            batch.sort_by_key(|r| !r.leading);
            let mut unsettled = Vec::new();
            for chunk in chunked(batch, BATCH_LIMIT) {
                unsettled.extend(seats_or_answer(&core, chunk, Seats::Renew).await);
            }
            takes.extend(chunked(unsettled, BATCH_LIMIT));
        }
        // 3. One campaign_seats per chunk of BATCH_LIMIT seats that may be free, for at most a
        //    window (at least one chunk per round): the chunks left wait for the next round,
        //    after the renews queued meanwhile. (Two takeovers of 500 new seats back to back
        //    took longer than a 1 s lease on a loaded machine, and a held seat stepped down.)
        let until = Instant::now() + core.window;
        while let Some(mut chunk) = takes.pop_front() {
            chunk.retain(|r| !r.reply.is_closed());
            if chunk.len() >= 2 && !core.takes_one_by_one.load(Ordering::Relaxed) {
                chunk = seats_or_answer(&core, chunk, Seats::Take).await;
            }
            rest.extend(chunk);
            if Instant::now() >= until {
                break;
            }
        }
        // 4. The seats the batches did not settle, one by one, for at most a window.
        let until = Instant::now() + core.window;
        while let Some(request) = rest.pop_front() {
            if request.reply.is_closed() {
                continue;
            }
            core.count(|s| s.single_campaigns += 1);
            let answer = core.db.campaign(0, &request.config).await;
            let _ = request.reply.send(answer);
            if Instant::now() >= until {
                break;
            }
        }
    }
}

/// Step 1: `first` and the calls queued after it, until every running elector has a call in
/// the batch, or no call came for a fifth of the window, or the window has passed since the
/// first call; without `wait`, only the calls queued already. Calls whose elector stopped
/// waiting are dropped.
async fn collect(core: &Core, requests: &mut mpsc::UnboundedReceiver<Request>, first: Request, wait: bool) -> Vec<Request> {
    let closes = Instant::now() + core.window;
    let quiet = core.window / 5;
    let mut batch = vec![first];
    while batch.len() < core.running() {
        if !wait {
            match requests.try_recv() {
                Ok(r) => batch.push(r),
                Err(_) => break,
            }
            continue;
        }
        let until = closes.min(Instant::now() + quiet);
        tokio::select! {
            request = requests.recv() => match request {
                Some(r) => batch.push(r),
                None => break,
            },
            () = sleep_until(until) => break,
        }
    }
    batch.retain(|r| !r.reply.is_closed());
    batch
}

/// The two calls over many seats.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seats {
    /// `renew_seats` (step 2).
    Renew,
    /// `campaign_seats` (step 3).
    Take,
}

/// Sends one `renew_seats` or `campaign_seats` for `batch` and answers every request it
/// settles; returns the others, for a `campaign` each (steps 2, 3 and 5).
async fn seats_or_answer(core: &Core, batch: Vec<Request>, which: Seats) -> Vec<Request> {
    let ids: Vec<String> = batch.iter().map(|r| r.config.service_id.clone()).collect();
    let (node, lease) = (core.template.node_id.clone(), core.template.lease);
    let sent_at = Instant::now();
    let result = core
        .db
        .call(0, &core.template, move |conn, _| {
            Box::pin(async move {
                let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                match which {
                    Seats::Renew => procedures::renew_seats(conn, &node, lease, &refs).await,
                    Seats::Take => procedures::campaign_seats(conn, &node, lease, &refs).await,
                }
            })
        })
        .await;
    core.count(|s| match which {
        Seats::Renew => {
            s.batch_calls += 1;
            s.batched_seats += batch.len() as u64;
            s.batch_failures += u64::from(result.is_err());
            if s.recent_batch_durations.len() == RECENT_BATCHES {
                s.recent_batch_durations.remove(0);
            }
            s.recent_batch_durations.push(sent_at.elapsed());
        }
        Seats::Take => {
            s.take_calls += 1;
            s.taken_seats += result.as_ref().map_or(0, |a| a.iter().filter(|a| a.answer.is_leader).count() as u64);
            s.take_failures += u64::from(result.is_err());
        }
    });
    match result {
        Ok(answers) => {
            let mut answers: HashMap<String, Campaign> = answers.into_iter().map(|a| (a.service_id, a.answer)).collect();
            let mut rest = Vec::new();
            for request in batch {
                match answers.remove(&request.config.service_id) {
                    Some(answer) => {
                        let _ = request.reply.send(Ok(answer));
                    }
                    None => rest.push(request),
                }
            }
            rest
        }
        Err(e) if e.is_permanent() || which == Seats::Take => {
            // A takeover that failed, for whatever reason, is left to the campaigns one by one,
            // which decide (and fail) each seat alone; retrying cannot fix a permanent failure
            // (an account granted before the procedure existed).
            let flag = if which == Seats::Renew { &core.said_renew_fallback } else { &core.takes_one_by_one };
            if e.is_permanent() && !flag.swap(true, Ordering::Relaxed) {
                let procedure = if which == Seats::Renew { "renew_seats" } else { "campaign_seats" };
                tracing::warn!(node = %core.template.node_id, error = %e, procedure,
                    "a session's call over many seats failed, and retrying cannot fix it: this session sends one campaign \
                     per seat instead (re-run `mysqlleader grant` for the account, so that it may call the procedure)");
            } else if !e.is_permanent() {
                tracing::debug!(node = %core.template.node_id, error = %e, "campaign_seats failed: the seats campaign one by one");
            }
            batch
        }
        Err(e) => {
            for request in batch {
                let _ = request.reply.send(Err(e.clone()));
            }
            Vec::new()
        }
    }
}

/// `items` in chunks of at most `limit`, in order.
fn chunked<T>(items: Vec<T>, limit: usize) -> Vec<Vec<T>> {
    let mut chunks = Vec::new();
    let mut items = items.into_iter().peekable();
    while items.peek().is_some() {
        chunks.push(items.by_ref().take(limit).collect());
    }
    chunks
}
