//! Where the C callbacks run: a delivery thread (`mysqlleader-cb`) calls the callbacks of one
//! or more electors, one event at a time, each elector's events in the order its node observed
//! them. A plain elector has a delivery thread of its own; the electors of one session share
//! their session's (threads per session, not per service: 10,000 electors of a session use one
//! thread, not 10,000).
//!
//! How an event travels:
//! 1. The elector's loop publishes it (a broadcast channel of 256 per elector).
//! 2. A task of the library's runtime, one per subscribed elector, moves it to the delivery
//!    thread's queue, keeping at most [`QUEUED`] of that elector's events there: while a
//!    callback is slow the rest wait in the broadcast channel, and beyond its 256 the elector's
//!    next delivery is a `MYSQLLEADER_EVENT_MISSED` event with the number dropped.
//! 3. The thread converts it to a `mysqlleader_event` and calls the elector's callback, under
//!    the elector's gate and unless the elector was detached (freed).
//! 4. When the elector's loop has ended and its last event is delivered, the thread hangs up the
//!    elector's `ended` channel: `mysqlleader_elector_free` waits for that (within its budget).
//!
//! The thread ends by itself once no elector or session uses it and every queued event is
//! delivered.

use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, Notify};
use tokio::time::Instant;

use super::elector::{mysqlleader_event, mysqlleader_event_kind, mysqlleader_stop_reason, stop_reason};
use super::result::{mysqlleader_result, Failure};
use super::runtime::runtime;
use super::strings::ms;
use crate::elector::Event;

/// The most events of one elector in the delivery thread's queue at once (step 2).
const QUEUED: usize = 16;

/// A C callback and its userdata.
pub(super) struct Callback {
    pub(super) function: unsafe extern "C" fn(*mut c_void, *const mysqlleader_event),
    pub(super) userdata: *mut c_void,
}

// SAFETY: the conventions make the caller responsible for userdata being usable on the delivery
// thread; the library only passes the pointer along, and calls the function only there (other
// threads merely hold the `Arc` of the slot that carries it).
unsafe impl Send for Callback {}
unsafe impl Sync for Callback {}

/// One delivery thread.
pub(super) struct Deliveries {
    jobs: Sender<Job>,
    thread: ThreadId,
}

enum Job {
    Deliver(Arc<Slot>, Result<Event, RecvError>),
    /// The elector's loop has ended: its every event is delivered (step 4).
    End(Arc<Slot>),
}

/// One elector's place on a delivery thread.
struct Slot {
    callback: Callback,
    node_id: CString,
    /// Set when the elector was freed (from a callback on this thread, or after its budget ran
    /// out): deliver nothing more.
    detached: AtomicBool,
    /// Held by the thread while it checks `detached` and runs a callback.
    gate: Mutex<()>,
    /// This elector's events in the thread's queue (step 2), and the wake-up of its task when
    /// one has been delivered.
    queued: AtomicUsize,
    room: Notify,
    /// Hung up by the thread after the elector's last event (step 4).
    ended: Mutex<Option<Sender<()>>>,
}

/// An elector's subscription: what `mysqlleader_elector_free` needs to end it.
pub(super) struct Subscription {
    slot: Arc<Slot>,
    ended: Receiver<()>,
    deliveries: Arc<Deliveries>,
}

impl Deliveries {
    /// Starts a delivery thread.
    pub(super) fn start() -> std::io::Result<Arc<Deliveries>> {
        let (jobs, queue) = std::sync::mpsc::channel();
        let join = std::thread::Builder::new().name("mysqlleader-cb".into()).spawn(move || deliver(queue))?;
        let thread = join.thread().id();
        drop(join); // it ends by itself (see the module documentation)
        Ok(Arc::new(Deliveries { jobs, thread }))
    }

    /// Delivers the elector's `events` to `callback` on this thread, from now until its loop
    /// ends (steps 2–4).
    pub(super) fn subscribe(self: &Arc<Self>, events: broadcast::Receiver<Event>, callback: Callback, node_id: &str) -> Subscription {
        let (ended_tx, ended) = std::sync::mpsc::channel();
        let slot = Arc::new(Slot {
            callback,
            node_id: event_string(node_id),
            detached: AtomicBool::new(false),
            gate: Mutex::new(()),
            queued: AtomicUsize::new(0),
            room: Notify::new(),
            ended: Mutex::new(Some(ended_tx)),
        });
        runtime().spawn(forward(events, slot.clone(), self.jobs.clone()));
        Subscription { slot, ended, deliveries: self.clone() }
    }
}

/// Step 2 for one elector.
async fn forward(mut events: broadcast::Receiver<Event>, slot: Arc<Slot>, jobs: Sender<Job>) {
    loop {
        while slot.queued.load(Ordering::SeqCst) >= QUEUED {
            slot.room.notified().await;
        }
        let received = events.recv().await;
        if matches!(received, Err(RecvError::Closed)) {
            let _ = jobs.send(Job::End(slot));
            return;
        }
        slot.queued.fetch_add(1, Ordering::SeqCst);
        if jobs.send(Job::Deliver(slot.clone(), received)).is_err() {
            return;
        }
    }
}

/// Steps 3 and 4: the body of a delivery thread, until no elector or session uses it.
fn deliver(queue: Receiver<Job>) {
    while let Ok(job) = queue.recv() {
        let (slot, received) = match job {
            Job::End(slot) => {
                slot.ended.lock().unwrap_or_else(|e| e.into_inner()).take();
                continue;
            }
            Job::Deliver(slot, received) => (slot, received),
        };
        slot.queued.fetch_sub(1, Ordering::SeqCst);
        slot.room.notify_one();
        let mut leader: Option<CString> = None;
        let Some(event) = c_event(received, &slot.node_id, &mut leader) else { continue };
        let delivering = slot.gate.lock().unwrap_or_else(|e| e.into_inner());
        if slot.detached.load(Ordering::SeqCst) {
            continue; // freed: drop its events quietly until its loop has ended
        }
        // SAFETY: the function and userdata are the caller's; `event` and the strings it
        // points to live until the call returns.
        unsafe { (slot.callback.function)(slot.callback.userdata, &event) };
        drop(delivering);
    }
}

impl Subscription {
    /// Ends the subscription of an elector whose loop has been told to stop: waits (at most
    /// `left`) until its last event is delivered; when that takes longer, or when called on the
    /// delivery thread itself (from a callback: waiting would wait for itself), delivers
    /// nothing more of it, after a callback of it running now (on another thread) has returned.
    /// So no callback of this elector runs after this returns, except the one this is called
    /// from.
    pub(super) fn close(self, left: Duration) {
        if std::thread::current().id() == self.deliveries.thread {
            self.slot.detached.store(true, Ordering::SeqCst);
            return;
        }
        match self.ended.recv_timeout(left) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => {}
            Err(RecvTimeoutError::Timeout) => {
                self.slot.detached.store(true, Ordering::SeqCst);
                // Waits for a callback running now (if any) to return; none starts after.
                drop(self.slot.gate.lock().unwrap_or_else(|e| e.into_inner()));
            }
        }
    }
}

/// An event as C sees it; `None` for one C is not told (a normal end of the loop). A leader id
/// is kept in `leader` for as long as the event is used.
fn c_event(received: Result<Event, RecvError>, node_id: &CString, leader: &mut Option<CString>) -> Option<mysqlleader_event> {
    let none = mysqlleader_event {
        kind: mysqlleader_event_kind::MYSQLLEADER_EVENT_MISSED,
        term: 0,
        reason: mysqlleader_stop_reason::MYSQLLEADER_STOP_NONE,
        leader_id: std::ptr::null(),
        valid_for_ms: 0,
        missed: 0,
        result: mysqlleader_result::MYSQLLEADER_OK,
    };
    Some(match received {
        Err(RecvError::Closed) => return None,
        Err(RecvError::Lagged(missed)) => mysqlleader_event { missed, ..none },
        Ok(Event::StartedLeading { term, valid_until }) => mysqlleader_event {
            kind: mysqlleader_event_kind::MYSQLLEADER_EVENT_STARTED_LEADING,
            term,
            leader_id: node_id.as_ptr(),
            valid_for_ms: ms(valid_until.saturating_duration_since(Instant::now())),
            ..none
        },
        Ok(Event::StoppedLeading { term, reason }) => {
            mysqlleader_event { kind: mysqlleader_event_kind::MYSQLLEADER_EVENT_STOPPED_LEADING, term, reason: stop_reason(reason), ..none }
        }
        // A normal close ends the stream as before (its StoppedLeading says `shutdown`); only a
        // failed task is news to C.
        Ok(Event::ElectorStopped { error: None }) => return None,
        Ok(Event::ElectorStopped { error: Some(_) }) => mysqlleader_event { kind: mysqlleader_event_kind::MYSQLLEADER_EVENT_ELECTOR_STOPPED, ..none },
        Ok(Event::Failing { error }) => {
            mysqlleader_event { kind: mysqlleader_event_kind::MYSQLLEADER_EVENT_FAILING, result: Failure::from(error).code, ..none }
        }
        Ok(Event::LeaderChanged { leader_id, term }) => {
            *leader = leader_id.as_deref().map(event_string);
            mysqlleader_event {
                kind: mysqlleader_event_kind::MYSQLLEADER_EVENT_LEADER_CHANGED,
                term,
                leader_id: leader.as_ref().map_or(std::ptr::null(), |l| l.as_ptr()),
                ..none
            }
        }
    })
}

/// A C string for an event; a NUL inside an id (never written by this library) is escaped.
fn event_string(text: &str) -> CString {
    CString::new(text.replace('\0', "\\0")).unwrap_or_default()
}
