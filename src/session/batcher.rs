//! The session's batcher: steps 1–5 of the session's module documentation.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};

use super::{Core, Request, BATCH_LIMIT, RECENT_BATCHES};
use crate::elector::task::{Backend, Campaigned};
use crate::procedures::{self, Campaign, SeatAnswer};

/// The session's batcher: steps 1–5 of the module documentation, until the session and every
/// elector of it are gone. The takeovers of step 3 (one `campaign_seats` per chunk of seats) and
/// the one-by-one campaigns of step 4 each run for at most a batch window at a time: calls
/// queued meanwhile (the leaders' renews) are batched and sent first, so that thousands of
/// takeovers never starve the renews of the seats the node holds.
pub(super) async fn batcher(core: Arc<Core>, mut requests: mpsc::UnboundedReceiver<Request>) {
    // Seats left for campaign_seats (step 3), and seats left for a campaign each (step 4), from
    // the rounds before; and how many seats the next campaign_seats takes (`next_take_size`).
    let mut takes: VecDeque<Request> = VecDeque::new();
    let mut rest: VecDeque<Request> = VecDeque::new();
    // Followers' seats a takeover left out once (another node's takeover may hold them
    // locked), for one more takeover in the next round before a campaign each.
    let mut retakes: Vec<Request> = Vec::new();
    let mut take_size = FIRST_TAKE_SIZE;
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
            // With a node lease, one renew_lease writes one row whatever its size: the batch
            // goes in as few calls as LEASE_BATCH_LIMIT allows.
            let limit = if core.leases_usable() { super::LEASE_BATCH_LIMIT } else { BATCH_LIMIT };
            for chunk in chunked(batch, limit) {
                unsettled.extend(seats_or_answer(&core, chunk, Seats::Renew).await.0);
            }
            // The leaders' seats first (as in the renews), then the others in this node's own
            // order (see `take_order`), so that nodes taking over the same seats at once mostly
            // take different ones.
            let node = core.template.node_id.as_str();
            unsettled.sort_by_cached_key(|r| (!r.leading, take_order(node, &r.config.service_id)));
            takes.extend(unsettled);
        }
        takes.extend(retakes.drain(..));
        // 3. One campaign_seats per chunk of seats that may be free, for at most a window (at
        //    least one chunk per round): the seats left wait for the next round, after the
        //    renews queued meanwhile. A chunk is as many seats as the last call took in a
        //    window's time (`next_take_size`), so that no one call keeps a renew waiting much
        //    longer than a window either. (Two takeovers of 500 new seats back to back took
        //    longer than a 1 s lease on a loaded machine, and a held seat stepped down; later,
        //    with one call per round, single calls of 500 seats took 0.7 s there, and one did.)
        let until = Instant::now() + core.window;
        while !takes.is_empty() {
            let mut chunk: Vec<Request> = takes.drain(..take_size.min(takes.len())).collect();
            chunk.retain(|r| !r.reply.is_closed());
            if chunk.len() >= 2 && !core.takes_one_by_one.load(Ordering::Relaxed) {
                let (started, sent) = (Instant::now(), chunk.len());
                let again;
                (chunk, again) = seats_or_answer(&core, chunk, Seats::Take).await;
                take_size = next_take_size(started.elapsed(), sent, core.window);
                retakes.extend(again);
            }
            rest.extend(chunk);
            if Instant::now() >= until {
                break;
            }
        }
        // 4. The seats the batches did not settle, one by one, for at most a window.
        //    A seat a campaign took for an elector that stopped waiting meanwhile is resigned
        //    at once, as step 3's are (`seats_or_answer`): else no elector of this node would
        //    lead it, and each would follow its own node id until the lease ran out.
        let until = Instant::now() + core.window;
        let mut orphans = Vec::new();
        while let Some(request) = rest.pop_front() {
            if request.reply.is_closed() {
                continue;
            }
            core.count(|s| s.single_campaigns += 1);
            let answer = core.call(|db, server| db.campaign(server, &request.config, request.held)).await;
            let took = matches!(&answer, Ok(c) if c.carried && c.answer.is_leader && c.answer.term != request.held);
            let service_id = request.config.service_id.clone();
            if request.reply.send(answer).is_err() && took {
                orphans.push(service_id);
            }
            if Instant::now() >= until {
                break;
            }
        }
        if !orphans.is_empty() {
            resign_orphans(&core, orphans).await;
        }
    }
}

/// Where a seat comes in this node's takeovers: a hash of the node id and the service id
/// (FNV-1a, 64 bits). Two nodes that take over the same seats at once (a crashed leader's
/// followers) go through them in two unrelated orders, so that each mostly reaches seats the
/// other has not locked (its takeover skips those) or has led already (answered at once).
fn take_order(node_id: &str, service_id: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in node_id.bytes().chain([0]).chain(service_id.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The seats of a session's first `campaign_seats`: few enough to take well within any batch
/// window on a loaded machine (at about 1.4 ms a seat, the slowest measured, 100 take 0.14 s).
const FIRST_TAKE_SIZE: usize = 100;
/// The fewest seats a `campaign_seats` takes while more wait (a call's own round trip would
/// otherwise outweigh its seats).
const MIN_TAKE_SIZE: usize = 20;

/// How many seats the next `campaign_seats` takes, after one that took `elapsed` for `sent`
/// seats: as many as fit in `window` at that pace, between [`MIN_TAKE_SIZE`] and [`BATCH_LIMIT`].
fn next_take_size(elapsed: std::time::Duration, sent: usize, window: std::time::Duration) -> usize {
    let per_seat = elapsed.as_secs_f64() / sent.max(1) as f64;
    let fits = if per_seat > 0.0 { window.as_secs_f64() / per_seat } else { f64::INFINITY };
    (fits.min(BATCH_LIMIT as f64) as usize).max(MIN_TAKE_SIZE)
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

/// What one call over many seats answered: the seats, and with a node lease, whether the lease
/// was renewed and the call's time on the server.
struct Answered {
    seats: Vec<SeatAnswer>,
    /// With a node lease: whether it was renewed, and the call's time on the server.
    lease: Option<(u64, bool, std::time::Duration)>,
}

/// Sends one call over the seats of `batch` and answers every request it settles; returns the
/// others, for a `campaign` each (steps 2, 3 and 5), and apart (second) the followers' seats a
/// takeover left out for the first time, for the next round's takeover: when two nodes take
/// over at once, most such seats are locked by the other's takeover, which has led them by
/// then (answered at once, rather than by a campaign that waits for the lock). A leader's seat,
/// a seat left out twice and the seats of a call that failed go to their campaigns at once.
/// With node leases (the usual case), a renew is `renew_lease` and a takeover `take_seats`, on
/// the session's lease (granted first when the session has none); without (step 5: a schema or
/// grant before them), `renew_seats` and `campaign_seats`.
async fn seats_or_answer(core: &Core, batch: Vec<Request>, which: Seats) -> (Vec<Request>, Vec<Request>) {
    let sent_at = Instant::now();
    let mut released = Vec::new();
    let result = match lease_call(core, &batch, which, &mut released).await {
        Some(result) => result,
        None => plain_call(core, &batch, which).await,
    };
    if result.is_err() && !released.is_empty() {
        // Listed again by the next renew.
        core.releases.lock().unwrap_or_else(|e| e.into_inner()).extend(released);
    }
    if let Ok(Answered { lease: Some((lease_id, false, _)), .. }) = &result {
        // The lease has ended: the next call asks for a new one.
        let mut lease = core.lease.lock().unwrap_or_else(|e| e.into_inner());
        if *lease == Some(*lease_id) {
            *lease = None;
            tracing::debug!(node = %core.template.node_id, lease_id, "the session's node lease had ended: a new one is asked for");
        }
    }
    let elapsed = sent_at.elapsed();
    if which == Seats::Renew && result.is_ok() {
        note_renew_pace(core, elapsed, batch.len());
    }
    core.count(|s| match which {
        Seats::Renew => {
            s.batch_calls += 1;
            s.batched_seats += batch.len() as u64;
            s.batch_failures += u64::from(result.is_err());
            if s.recent_batch_durations.len() == RECENT_BATCHES {
                s.recent_batch_durations.remove(0);
            }
            s.recent_batch_durations.push(elapsed);
            // Under the stats' lock: the session's metrics read both at once.
            core.renew_durations.observe(elapsed);
            if let Ok(Answered { lease: Some((_, _, on_server)), .. }) = &result {
                core.renew_server_durations.observe(*on_server);
            }
        }
        Seats::Take => {
            s.take_calls += 1;
            s.taken_seats += result.as_ref().map_or(0, |a| a.seats.iter().filter(|a| a.answer.is_leader).count() as u64);
            s.take_failures += u64::from(result.is_err());
        }
    });
    match result {
        Ok(answered) => {
            let mut answers: HashMap<String, Campaign> = answered.seats.into_iter().map(|a| (a.service_id, a.answer)).collect();
            let mut rest = Vec::new();
            // Seats this call took whose elector stopped waiting for the answer (its request
            // timeout passed): nobody acts on them, and no elector of the session may adopt their
            // terms (its deadline would count from a later call than the take). They are resigned
            // at once, so that the elector's next campaign takes them (a term more) rather than
            // wait a lease for them to end.
            let mut orphans = Vec::new();
            let mut retake = Vec::new();
            for request in batch {
                match answers.remove(&request.config.service_id) {
                    // A renew's answer counts only at the term this elector holds (issue 39):
                    // renew_seats renews this node id's lease at any term, and renew_lease keeps
                    // on the lease only seats listed at their held term. Any other goes to the
                    // elector's own campaign, which carries its term and decides.
                    Some(answer) if which == Seats::Renew && answer.is_leader && answer.term != request.held => rest.push(request),
                    Some(answer) => {
                        // A renew's answer was checked against the held term just above; a
                        // take's is a new term.
                        let (service_id, took) = (request.config.service_id.clone(), answer.is_leader);
                        if request.reply.send(Ok(Campaigned::carried(answer))).is_err() && which == Seats::Take && took {
                            orphans.push(service_id);
                        }
                    }
                    None if which == Seats::Take && !request.leading && !request.left_out => {
                        retake.push(Request { left_out: true, ..request });
                    }
                    None => rest.push(request),
                }
            }
            if !orphans.is_empty() {
                resign_orphans(core, orphans).await;
            }
            (rest, retake)
        }
        Err(e) if e.is_permanent() || which == Seats::Take => {
            // A takeover that failed, for whatever reason, is left to the campaigns one by one,
            // which decide (and fail) each seat alone; retrying cannot fix a permanent failure
            // (an account granted before the procedure existed).
            let flag = if which == Seats::Renew { &core.said_renew_fallback } else { &core.takes_one_by_one };
            if e.is_permanent() && !flag.swap(true, Ordering::Relaxed) {
                // The words say what happens next: renew_seats is still sent with every batch (a
                // re-run grant takes effect at the next one), campaign_seats no more.
                let (procedure, then) = if which == Seats::Renew {
                    ("renew_seats", "its seats are renewed one campaign each, and the call is tried again with every batch")
                } else {
                    ("campaign_seats", "this session takes seats one campaign each from now on")
                };
                tracing::warn!(node = %core.template.node_id, error = %e, procedure,
                    "a session's call over many seats failed, and retrying cannot fix it: {then} (re-run `mysqlleader grant` \
                     for the account, so that it may call the procedure)");
            } else if !e.is_permanent() {
                tracing::debug!(node = %core.template.node_id, error = %e, "campaign_seats failed: the seats campaign one by one");
            }
            (batch, Vec::new())
        }
        Err(e) => {
            for request in batch {
                let _ = request.reply.send(Err(e.clone()));
            }
            (Vec::new(), Vec::new())
        }
    }
}

/// Says, once when it begins and once when it ends, that the session's renews take longer than
/// its renew interval: a renew that succeeded after `elapsed` (from before it waited for a
/// connection) for `seats` seats. Its electors' deadlines count from before the send, so a late
/// renew is safe, but the next renew waits for it: leases run short, and seats lapse once a
/// renew takes longer than a lease less the drift margin (each elector's step-down says so,
/// per seat or per incident). Said here once for the session, so that an overloaded session
/// (too many seats for its lease on its server) is told before it loses seats.
fn note_renew_pace(core: &Core, elapsed: Duration, seats: usize) {
    let interval = core.template.renew_interval;
    let late = elapsed > interval;
    if late == core.renews_late.swap(late, Ordering::Relaxed) {
        return;
    }
    let (elapsed_ms, interval_ms) = (elapsed.as_millis() as u64, interval.as_millis() as u64);
    if late {
        tracing::warn!(node = %core.template.node_id, seats, elapsed_ms, renew_interval_ms = interval_ms,
            "a session's renew of {seats} seats took {elapsed_ms} ms, longer than its renew interval ({interval_ms} ms): \
             its leases run short, and seats step down once a renew takes longer than a lease; give it a longer lease, \
             fewer seats, or a server less loaded");
    } else {
        tracing::info!(node = %core.template.node_id, seats, elapsed_ms, renew_interval_ms = interval_ms,
            "a session's renews take less than its renew interval again ({elapsed_ms} ms for {seats} seats)");
    }
}

/// The call over `batch` on the session's node lease (`renew_lease` or `take_seats`), the lease
/// granted first when the session has none; None when the session has no node leases (step 5:
/// the procedures failed for a reason retrying cannot fix, said once at WARN): the caller then
/// sends `renew_seats` or `campaign_seats`. A renew also lists the services in
/// `core.releases` (electors that ended), taken into `released`.
async fn lease_call(core: &Core, batch: &[Request], which: Seats, released: &mut Vec<String>) -> Option<crate::Result<Answered>> {
    if !core.leases_usable() {
        return None;
    }
    let (node, lease) = (core.template.node_id.clone(), core.template.lease);
    let granted = *core.lease.lock().unwrap_or_else(|e| e.into_inner());
    let lease_id = match granted {
        Some(id) => id,
        None => {
            let node = node.clone();
            let grant = core
                .call(|db, server| db.call(server, &core.template, move |conn, _| {
                    Box::pin(async move { procedures::grant_lease(conn, &node, lease).await })
                }))
                .await;
            match grant {
                Ok(g) => {
                    *core.lease.lock().unwrap_or_else(|e| e.into_inner()) = Some(g.lease_id);
                    g.lease_id
                }
                Err(e) if e.is_permanent() => return unavailable(core, e),
                Err(e) => return Some(Err(e)),
            }
        }
    };
    let result = match which {
        Seats::Renew => renew_on_lease(core, lease_id, batch, released).await,
        Seats::Take => {
            let ids: Vec<String> = batch.iter().map(|r| r.config.service_id.clone()).collect();
            core.call(|db, server| db.call(server, &core.template, move |conn, _| {
                Box::pin(async move {
                    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                    procedures::take_seats(conn, lease_id, &node, lease, &refs).await
                })
            }))
            .await
        }
    };
    match result {
        Ok(a) => Some(Ok(Answered { seats: a.seats, lease: Some((lease_id, a.renewed, a.server_time)) })),
        Err(e) if e.is_permanent() && !matches!(e, crate::Error::InvalidArgument { .. }) => {
            core.releases.lock().unwrap_or_else(|e| e.into_inner()).clear();
            released.clear();
            unavailable(core, e)
        }
        Err(e) => Some(Err(e)),
    }
}

/// A renew of `batch` on the session's node lease `lease_id`, in the steps of
/// src/session/on_lease.rs: the seats seen on the lease at the term their electors hold are
/// left out (step 2); the others are listed, with the seats of electors that ended (taken from
/// `core.releases` into `released`); the answer's `lost` says whether the left-out seats are
/// still on the lease (step 3), and those that may not be are listed at once in a second
/// `renew_lease` (step 4). A left-out seat answered by neither (a lease not renewed) goes to its
/// own campaign, as a listed one does; when either call fails, the renew fails.
async fn renew_on_lease(core: &Core, lease_id: u64, batch: &[Request], released: &mut Vec<String>) -> crate::Result<procedures::LeaseAnswer> {
    let held: HashMap<&str, u64> = batch.iter().map(|r| (r.config.service_id.as_str(), r.held)).collect();
    let (left_out, mut listed): (Vec<String>, Vec<(String, u64)>) = {
        let on_lease = core.on_lease.lock().unwrap_or_else(|e| e.into_inner());
        let (out, listed): (Vec<&Request>, Vec<&Request>) =
            batch.iter().partition(|r| r.leading && on_lease.may_leave_out(lease_id, &r.config.service_id, r.held));
        (out.iter().map(|r| r.config.service_id.clone()).collect(),
         listed.iter().map(|r| (r.config.service_id.clone(), r.held)).collect())
    };
    // The followers of seats seen on other nodes' leases: answered from those leases' rows,
    // the others listed with the rest (src/session/watched.rs, steps 2-4).
    let followers = watch_followed(core, &mut listed).await;
    {
        let mut releases = core.releases.lock().unwrap_or_else(|e| e.into_inner());
        releases.retain(|id| !held.contains_key(id.as_str()));
        let room = super::LEASE_BATCH_LIMIT.saturating_sub(listed.len()).min(releases.len());
        released.extend(releases.drain(..room));
    }
    listed.extend(released.iter().map(|id| (id.clone(), 0)));
    let mut answer = renew_lease_listing(core, lease_id, &listed).await?;
    answer.seats.extend(followers);
    let decided = core.on_lease.lock().unwrap_or_else(|e| e.into_inner()).settle(lease_id, answer.renewed, answer.lost, left_out);
    // 3. Still on the lease at their term: held, for as long as the lease.
    for service_id in decided.held {
        let term = held[service_id.as_str()];
        answer.seats.push(SeatAnswer {
            service_id,
            answer: Campaign { is_leader: true, leader_id: Some(core.template.node_id.clone()), term, lease_remaining: answer.lease_remaining },
        });
    }
    // 4. Perhaps taken: listed, at once.
    if !decided.relist.is_empty() {
        let relist: Vec<(String, u64)> = decided.relist.into_iter().map(|id| { let term = held[id.as_str()]; (id, term) }).collect();
        // Failed: the whole renew answers its failure, so that every elector of the batch keeps
        // its deadline and retries soon, rather than thousands campaigning one by one.
        let again = renew_lease_listing(core, lease_id, &relist).await?;
        answer.seats.extend(again.seats);
    }
    Ok(answer)
}

/// One `renew_lease` on `lease_id` listing `seats` (service id, held term), its answer recorded
/// for the renews after it (step 1 of src/session/on_lease.rs).
async fn renew_lease_listing(core: &Core, lease_id: u64, seats: &[(String, u64)]) -> crate::Result<procedures::LeaseAnswer> {
    let (node, lease) = (core.template.node_id.clone(), core.template.lease);
    core.count(|s| s.listed_seats += seats.len() as u64);
    let sent = seats.to_vec();
    let answer = core
        .call(|db, server| db.call(server, &core.template, move |conn, _| {
            Box::pin(async move {
                let refs: Vec<(&str, u64)> = sent.iter().map(|(id, held)| (id.as_str(), *held)).collect();
                procedures::renew_lease(conn, lease_id, &node, lease, &refs).await
            })
        }))
        .await?;
    if let (true, Some(lost)) = (answer.renewed, answer.lost) {
        let on: HashMap<&str, u64> = answer.seats.iter()
            .filter(|s| s.answer.is_leader)
            .map(|s| (s.service_id.as_str(), s.answer.term))
            .collect();
        let listed = seats.iter().map(|(id, held)| (id.as_str(), on.get(id.as_str()).filter(|t| **t == *held && *held != 0).copied()));
        core.on_lease.lock().unwrap_or_else(|e| e.into_inner()).record(lease_id, lost, listed);
    }
    core.watched.lock().unwrap_or_else(|e| e.into_inner())
        .record(seats.iter().map(|(id, _)| id.as_str()), &answer.seats, &answer.followed);
    Ok(answer)
}

/// Steps 2-4 of src/session/watched.rs for the seats a renew is about to list (`listed`: service
/// id, held term): the followers of seats seen on other nodes' leases are taken out of it, and
/// one `watch_leases` asks about those leases; the seats still on them are returned, answered
/// as followed, and the others go back into `listed`. When the call fails, every one of them
/// goes back (a failure retrying cannot fix, an account or schema before the procedure, is
/// said once, and the session lists its followed seats for [`super::LEASE_RETRY`]).
async fn watch_followed(core: &Core, listed: &mut Vec<(String, u64)>) -> Vec<SeatAnswer> {
    if !core.watch_usable() {
        return Vec::new();
    }
    let (mut watched, mut lease_ids) = (Vec::new(), Vec::new());
    {
        let record = core.watched.lock().unwrap_or_else(|e| e.into_inner());
        listed.retain(|(id, held)| match record.lease_of(id, *held) {
            Some(lease_id) => {
                watched.push(id.clone());
                lease_ids.push(lease_id);
                false
            }
            None => true,
        });
    }
    if watched.is_empty() {
        return Vec::new();
    }
    lease_ids.sort_unstable();
    lease_ids.dedup();
    let answer = core
        .call(|db, server| db.call(server, &core.template, move |conn, _| {
            Box::pin(async move { procedures::watch_leases(conn, &lease_ids).await })
        }))
        .await;
    let leases = match answer {
        Ok(leases) => leases,
        Err(e) => {
            if e.is_permanent() {
                *core.watch_unavailable.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
                if !core.said_watch_unavailable.swap(true, Ordering::Relaxed) {
                    tracing::warn!(node = %core.template.node_id, error = %e,
                        "this session cannot call watch_leases (the schema or the account's grant is older than it): it lists                          every seat it follows in its renews, and tries again every minute (run `mysqlleader migrate`, then                          re-run `mysqlleader grant` for the account)");
                }
            }
            Vec::new()
        }
    };
    let settled = core.watched.lock().unwrap_or_else(|e| e.into_inner()).settle(&leases, watched);
    core.count(|s| {
        s.watch_calls += 1;
        s.watched_seats += settled.answered.len() as u64;
    });
    listed.extend(settled.relist.into_iter().map(|id| (id, 0)));
    settled.answered
}

/// Step 5 for node leases: said once; for [`super::LEASE_RETRY`] from now the session renews
/// with `renew_seats` and takes with `campaign_seats` (then it tries the lease procedures again).
/// The session's lease is forgotten: its seats go on, each on its own lease, through their own
/// campaigns. Returns None (the caller sends those calls instead).
fn unavailable(core: &Core, e: crate::Error) -> Option<crate::Result<Answered>> {
    *core.leases_unavailable.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    *core.lease.lock().unwrap_or_else(|e| e.into_inner()) = None;
    core.releases.lock().unwrap_or_else(|e| e.into_inner()).clear();
    if !core.said_leases_unavailable.swap(true, Ordering::Relaxed) {
        tracing::warn!(node = %core.template.node_id, error = %e,
            "this session cannot use node leases (the schema or the account's grant is older than them): it renews \
             every seat with renew_seats, one row written per seat, and tries them again every minute (run \
             `mysqlleader migrate`, then re-run `mysqlleader grant` for the account)");
    }
    None
}

/// Resigns seats a takeover took for electors that had stopped waiting (see
/// [`seats_or_answer`]), in one `resign_seats`; a failure is only logged (the seats then end
/// with their lease: the next renew lets go of them, as of any seat no elector holds).
async fn resign_orphans(core: &Core, orphans: Vec<String>) {
    let node = core.template.node_id.clone();
    let count = orphans.len();
    let resigned = core
        .call(|db, server| db.call(server, &core.template, move |conn, _| {
            Box::pin(async move {
                let refs: Vec<&str> = orphans.iter().map(String::as_str).collect();
                procedures::resign_seats(conn, &node, &refs).await
            })
        }))
        .await;
    tracing::debug!(node = %core.template.node_id, count, ok = resigned.is_ok(),
                    "resigned the seats a takeover took after their electors stopped waiting for it");
}

/// `renew_seats` or `campaign_seats` for `batch`: the seats on their own leases.
async fn plain_call(core: &Core, batch: &[Request], which: Seats) -> crate::Result<Answered> {
    let ids: Vec<String> = batch.iter().map(|r| r.config.service_id.clone()).collect();
    if which == Seats::Renew {
        core.count(|s| s.listed_seats += ids.len() as u64);
    }
    let (node, lease) = (core.template.node_id.clone(), core.template.lease);
    core.call(|db, server| db.call(server, &core.template, move |conn, _| {
        Box::pin(async move {
            let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
            match which {
                Seats::Renew => procedures::renew_seats(conn, &node, lease, &refs).await,
                Seats::Take => procedures::campaign_seats(conn, &node, lease, &refs).await,
            }
        })
    }))
    .await
    .map(|seats| Answered { seats, lease: None })
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_takeover_takes_as_many_seats_as_fit_in_a_window_at_the_last_calls_pace() {
        let window = Duration::from_millis(50);
        // 500 seats in 0.7 s (1.4 ms each, a loaded machine): 35 fit in 50 ms.
        assert_eq!(next_take_size(Duration::from_millis(700), 500, window), 35);
        // 100 seats in 20 ms (idle): 250 fit.
        assert_eq!(next_take_size(Duration::from_millis(20), 100, window), 250);
        // Never more than a batch, never fewer than the floor, and a call measured at 0 is fast.
        assert_eq!(next_take_size(Duration::from_millis(1), 500, Duration::from_millis(500)), BATCH_LIMIT);
        assert_eq!(next_take_size(Duration::from_secs(5), 20, window), MIN_TAKE_SIZE);
        assert_eq!(next_take_size(Duration::ZERO, 100, window), BATCH_LIMIT);
    }

    #[test]
    fn two_nodes_take_the_same_seats_in_unrelated_orders() {
        let seats: Vec<String> = (0..1000).map(|i| format!("svc-{i}")).collect();
        let order = |node: &str| {
            let mut s = seats.clone();
            s.sort_by_cached_key(|id| take_order(node, id));
            s
        };
        let (a, b) = (order("node-a"), order("node-b"));
        assert_eq!(a, order("node-a"), "a node's order is the same every time");
        // The first tenth of one node's order: about a tenth of it is in the other's first tenth.
        let first_b: std::collections::HashSet<&String> = b[..100].iter().collect();
        let shared = a[..100].iter().filter(|id| first_b.contains(id)).count();
        assert!(shared < 30, "{shared} of the first 100 seats are the same for both nodes");
        // The node id and the service id do not run together: "a" + "bc" is not "ab" + "c".
        assert_ne!(take_order("a", "bc"), take_order("ab", "c"));
    }
}
