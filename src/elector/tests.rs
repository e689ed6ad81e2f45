//! The elector loop on a scripted backend, under `tokio::time::pause()`: every transition of the
//! module documentation's steps, with the exact events and the deadline arithmetic. Time is
//! virtual, so these run in milliseconds and never depend on the machine's load.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::{broadcast, mpsc, watch, Notify};
use tokio::time::{sleep, Instant};

use super::task::{spawn_with, Backend, Campaigned};
use super::{Elector, Event, State, StopReason, WaitOutcome};
use crate::config::ElectorConfig;
use crate::error::{Error, ErrorKind, Result};
use crate::procedures::{Campaign, CurrentLeader, Resign};
use crate::elector::wakeup::Role;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// One scripted answer: after `delay`, this reply. An empty script answers never.
enum Reply {
    Won { term: u64, remaining_ms: u64 },
    Other { leader: &'static str, term: u64, remaining_ms: u64 },
    Fail(Error),
    Resigned { term: u64 },
}

/// A call the loop made: when (ms since the start), which, on which server, and whether the
/// node counted itself leader at that moment (by its deadline).
#[derive(Debug, Clone, PartialEq)]
struct Call {
    at_ms: u64,
    what: &'static str,
    server: usize,
    leading: bool,
}

struct Fake {
    start: Instant,
    servers: usize,
    script: Mutex<VecDeque<(Duration, Reply)>>,
    calls: Mutex<Vec<Call>>,
    roles: Mutex<Vec<Role>>,
    wake: Notify,
    watching: std::sync::atomic::AtomicBool,
    state: OnceLock<watch::Receiver<State>>,
    /// The answers to the elector's first resign (step 1b), each after its delay; once empty,
    /// that resign answers at once "nothing held", and is not recorded in `calls`.
    predecessor: Mutex<VecDeque<(Duration, Reply)>>,
}

#[derive(Clone)]
struct FakeBackend(Arc<Fake>);

impl Fake {
    fn new(servers: usize, script: Vec<(u64, Reply)>) -> Arc<Fake> {
        Arc::new(Fake {
            start: Instant::now(),
            servers,
            script: Mutex::new(script.into_iter().map(|(d, r)| (ms(d), r)).collect()),
            calls: Mutex::new(Vec::new()),
            roles: Mutex::new(Vec::new()),
            wake: Notify::new(),
            watching: std::sync::atomic::AtomicBool::new(false),
            state: OnceLock::new(),
            predecessor: Mutex::new(VecDeque::new()),
        })
    }

    /// `script`, with `predecessor` as the answers to the elector's first resign.
    fn with_predecessor(servers: usize, predecessor: Vec<(u64, Reply)>, script: Vec<(u64, Reply)>) -> Arc<Fake> {
        let fake = Fake::new(servers, script);
        *fake.predecessor.lock().unwrap() = predecessor.into_iter().map(|(d, r)| (ms(d), r)).collect();
        fake
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    fn times(&self) -> Vec<u64> {
        self.calls().iter().map(|c| c.at_ms).collect()
    }

    fn since_start(&self, t: Instant) -> u64 {
        (t - self.start).as_millis() as u64
    }

    async fn answer(&self, what: &'static str, server: usize) -> Reply {
        let now = Instant::now();
        let leading = self.state.get().is_some_and(|s| s.borrow().leads_at(now));
        self.calls.lock().unwrap().push(Call { at_ms: self.since_start(now), what, server, leading });
        let next = self.script.lock().unwrap().pop_front();
        match next {
            Some((delay, reply)) => {
                sleep(delay).await;
                reply
            }
            None => std::future::pending().await,
        }
    }
}

fn campaign_reply(reply: Reply) -> Result<Campaign> {
    match reply {
        Reply::Won { term, remaining_ms } => Ok(Campaign { is_leader: true, leader_id: Some("me".into()), term, lease_remaining: ms(remaining_ms) }),
        Reply::Other { leader, term, remaining_ms } => {
            Ok(Campaign { is_leader: false, leader_id: Some(leader.into()), term, lease_remaining: ms(remaining_ms) })
        }
        Reply::Fail(e) => Err(e),
        Reply::Resigned { .. } => panic!("the script answers a campaign with a resign"),
    }
}

impl Backend for FakeBackend {
    fn servers(&self) -> usize {
        self.0.servers
    }

    async fn campaign(&self, server: usize, _: &Arc<ElectorConfig>, _held: u64) -> Result<Campaigned> {
        campaign_reply(self.0.answer("campaign", server).await).map(Campaigned::carried)
    }

    async fn current_leader(&self, server: usize, _: &Arc<ElectorConfig>) -> Result<CurrentLeader> {
        campaign_reply(self.0.answer("current_leader", server).await)
            .map(|c| CurrentLeader { leader_id: c.leader_id, term: c.term, lease_remaining: c.lease_remaining })
    }

    async fn resign(&self, server: usize, _: &Arc<ElectorConfig>) -> Result<Resign> {
        match self.0.answer("resign", server).await {
            Reply::Resigned { term } => Ok(Resign { resigned: true, term }),
            Reply::Fail(e) => Err(e),
            _ => panic!("the script answers a resign with a campaign"),
        }
    }

    async fn end_predecessor(&self, server: usize, _: &Arc<ElectorConfig>) -> Result<Resign> {
        let next = self.0.predecessor.lock().unwrap().pop_front();
        let Some((delay, reply)) = next else { return Ok(Resign { resigned: false, term: 0 }) };
        let now = Instant::now();
        self.0.calls.lock().unwrap().push(Call { at_ms: self.0.since_start(now), what: "end_predecessor", server, leading: false });
        sleep(delay).await;
        match reply {
            Reply::Resigned { term } => Ok(Resign { resigned: true, term }),
            Reply::Fail(e) => Err(e),
            _ => panic!("the script answers a resign with a campaign"),
        }
    }

    async fn resign_to(&self, server: usize, _: &Arc<ElectorConfig>, _to: &str) -> Result<Resign> {
        match self.0.answer("resign_to", server).await {
            Reply::Resigned { term } => Ok(Resign { resigned: true, term }),
            Reply::Fail(e) => Err(e),
            _ => panic!("the script answers a resign_to with a campaign"),
        }
    }

    fn set_role(&self, role: Role) {
        let mut roles = self.0.roles.lock().unwrap();
        if roles.last().map(std::mem::discriminant) != Some(std::mem::discriminant(&role)) {
            roles.push(role);
        }
    }

    async fn woken(&self) {
        self.0.wake.notified().await
    }

    fn watching(&self) -> bool {
        self.0.watching.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// lease 10 s, renew 2 s, retry 1 s without jitter, request timeout 2 s, drift margin 100 ms.
fn config() -> ElectorConfig {
    ElectorConfig { node_id: "me".into(), retry_jitter_permille: 0, ..ElectorConfig::with_lease("svc", ms(10_000)) }
}

fn start(fake: &Arc<Fake>, config: ElectorConfig) -> (Elector, broadcast::Receiver<Event>) {
    let config = Arc::new(config);
    let (state_tx, state_rx) = watch::channel(State::initial());
    let (events, first) = broadcast::channel(256);
    let (commands, command_rx) = mpsc::unbounded_channel();
    let _ = fake.state.set(state_rx.clone());
    let metrics = crate::metrics::Metrics::new();
    spawn_with(FakeBackend(fake.clone()), config.clone(), state_tx, events.clone(), command_rx, metrics.clone());
    (Elector { config, state: state_rx, events, commands, metrics }, first)
}

fn drain(rx: &mut broadcast::Receiver<Event>) -> Vec<Event> {
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        out.push(e);
    }
    out
}

fn won(term: u64) -> Reply {
    Reply::Won { term, remaining_ms: 10_000 }
}

fn conn_error() -> Reply {
    Reply::Fail(Error::Connection { message: "refused".into() })
}

#[tokio::test(start_paused = true)]
async fn renews_on_time_from_the_send_time() {
    let fake = Fake::new(1, vec![(10, won(1)), (10, won(1)), (10, won(1))]);
    let (elector, mut events) = start(&fake, config());
    sleep(ms(4_500)).await;
    // A renew every renew_interval after the previous *send*, not after its answer.
    assert_eq!(fake.times(), vec![0, 2_000, 4_000]);
    let t0 = fake.start;
    assert_eq!(drain(&mut events), vec![
        Event::LeaderChanged { leader_id: Some("me".into()), term: 1 },
        Event::StartedLeading { term: 1, valid_until: t0 + ms(10_000 - 100) },
    ]);
    // The deadline of the last renew: its send time + the lease left - the drift margin.
    assert_eq!(elector.state().valid_until, Some(t0 + ms(4_000 + 10_000 - 100)));
    assert!(elector.is_leader());
    assert!(elector.is_healthy());
    // Metrics: three campaigns, one transition (started leading), term 1.
    assert_eq!((elector.metrics().campaigns(), elector.metrics().transitions()), (3, 1));
    assert!(elector.metrics_text().contains("leader_election_master_status{name=\"svc\"} 1\n"));
}

/// Step 1b: the first campaign is preceded by a resign that ends a previous process's term; the
/// elector campaigns only once that resign succeeded (a failed one counts as a failed campaign,
/// retried after the retry interval), so it leads at a term of its own.
#[tokio::test(start_paused = true)]
async fn the_first_campaign_waits_until_a_predecessors_term_is_ended() {
    let fake = Fake::with_predecessor(1, vec![(10, conn_error()), (10, Reply::Resigned { term: 7 })], vec![(10, won(8)), (10, won(8))]);
    let (elector, mut events) = start(&fake, config());
    sleep(ms(3_500)).await;
    let calls: Vec<(u64, &str)> = fake.calls().iter().map(|c| (c.at_ms, c.what)).collect();
    // The failed resign at 0 ms (answered at 10 ms), again one retry interval after that answer,
    // then the campaign right after it, and the renew one renew interval later: no campaign
    // before the resign.
    assert_eq!(calls, vec![(0, "end_predecessor"), (1_010, "end_predecessor"), (1_020, "campaign"), (3_020, "campaign")]);
    assert_eq!(elector.metrics().campaigns(), 3, "the failed resign counts as a failed campaign");
    assert_eq!(drain(&mut events).iter().filter(|e| matches!(e, Event::StartedLeading { term: 8, .. })).count(), 1);
    assert!(elector.is_leader());
}

#[tokio::test(start_paused = true)]
async fn a_late_renew_still_counts_from_its_send_time() {
    // The second renew takes 1.5 s to answer: the deadline counts from when it was sent.
    let fake = Fake::new(1, vec![(10, won(1)), (1_500, won(1))]);
    let (elector, mut events) = start(&fake, config());
    sleep(ms(3_600)).await;
    assert_eq!(fake.times(), vec![0, 2_000]);
    assert_eq!(elector.state().valid_until, Some(fake.start + ms(2_000 + 9_900)));
    assert_eq!(drain(&mut events).len(), 2, "no stop, no second start");
}

#[tokio::test(start_paused = true)]
async fn failed_renews_step_down_by_the_deadline_never_later() {
    let mut script = vec![(10, won(1))];
    script.extend((0..40).map(|_| (0, conn_error())));
    let fake = Fake::new(1, script);
    let (elector, mut events) = start(&fake, config());
    let deadline = fake.start + ms(9_900);
    let mut rx = elector.watch();
    // Wait for the step-down and note when it happened.
    loop {
        rx.changed().await.unwrap();
        if !rx.borrow().leading && rx.borrow().term == 1 {
            break;
        }
    }
    let stepped_down = Instant::now();
    assert!(stepped_down <= deadline, "stepped down {:?} after the deadline", stepped_down - deadline);
    assert!(deadline - stepped_down <= ms(5), "at most 5 ms early");
    // A failed renew is retried every renew_interval / 4 = 500 ms, from the first renew on.
    let times = fake.times();
    assert_eq!(&times[..4], &[0, 2_000, 2_500, 3_000]);
    assert!(fake.calls().iter().all(|c| c.at_ms < 9_900 || !c.leading), "no call sent as leader after the deadline");
    let seen = drain(&mut events);
    assert_eq!(seen.last(), Some(&Event::StoppedLeading { term: 1, reason: StopReason::DeadlinePassed }));
    assert_eq!(elector.state().last_error.map(|e| e.kind()), Some(ErrorKind::Connection));
}

#[tokio::test(start_paused = true)]
async fn losing_the_seat_is_one_update_then_the_events_in_order() {
    let fake = Fake::new(1, vec![(10, won(1)), (10, Reply::Other { leader: "b", term: 2, remaining_ms: 500 })]);
    let (elector, mut events) = start(&fake, config());
    sleep(ms(2_100)).await;
    let state = elector.state();
    assert!(!state.leading);
    assert_eq!((state.leader_id.as_deref(), state.term), (Some("b"), 2));
    assert_eq!(state.last_stop, Some((1, StopReason::LostSeat)));
    assert_eq!(drain(&mut events)[2..], [
        Event::StoppedLeading { term: 1, reason: StopReason::LostSeat },
        Event::LeaderChanged { leader_id: Some("b".into()), term: 2 },
    ]);
    // The follower looks again when the lease it saw can end (500 ms + 1 ms), before the
    // retry interval (1 s).
    sleep(ms(600)).await;
    assert_eq!(fake.times(), vec![0, 2_000, 2_511]);
}

#[tokio::test(start_paused = true)]
async fn a_refused_fence_steps_down_at_once_and_learns_who_leads() {
    let fake = Fake::new(1, vec![(10, won(1)), (10, Reply::Other { leader: "b", term: 2, remaining_ms: 9_000 })]);
    let (elector, mut events) = start(&fake, config());
    sleep(ms(500)).await;
    assert!(elector.is_leader());
    elector.note_refusal(&Error::NotLeader { message: "mysqlleader: not the leader at term 1 (current term 2)".into(), current_term: Some(2), handed_over: false }, 1);
    sleep(ms(1)).await;
    assert!(!elector.is_leader());
    // The campaign that learns the new leader is sent at once, not at the next renew (2 s).
    assert_eq!(fake.times(), vec![0, 500]);
    sleep(ms(20)).await;
    assert_eq!(drain(&mut events)[2..], [
        Event::StoppedLeading { term: 1, reason: StopReason::LostSeat },
        Event::LeaderChanged { leader_id: Some("b".into()), term: 2 },
    ]);
    assert_eq!(elector.term_ended(1).await, StopReason::LostSeat);
}

#[tokio::test(start_paused = true)]
async fn resigning_steps_down_first_then_vacates_and_only_observes() {
    let fake = Fake::new(1, vec![
        (10, won(3)),
        (10, Reply::Resigned { term: 3 }),
        (10, Reply::Other { leader: "b", term: 4, remaining_ms: 9_000 }),
    ]);
    let (elector, mut events) = start(&fake, config());
    sleep(ms(100)).await;
    assert_eq!(elector.resign().await, Ok(true));
    assert_eq!(fake.calls()[1], Call { at_ms: 100, what: "resign", server: 0, leading: false },
               "the node stopped counting itself leader before the resign was sent");
    assert_eq!(elector.wait_for_leadership(Some(ms(10))).await, WaitOutcome::NotCampaigning);
    assert_eq!(elector.term_ended(3).await, StopReason::Resigned);
    sleep(ms(1_200)).await;
    assert_eq!(fake.calls()[2].what, "current_leader", "a resigned node only observes");
    assert_eq!(drain(&mut events)[2..], [
        Event::StoppedLeading { term: 3, reason: StopReason::Resigned },
        Event::LeaderChanged { leader_id: None, term: 3 },
        Event::LeaderChanged { leader_id: Some("b".into()), term: 4 },
    ]);
    assert_eq!(fake.roles.lock().unwrap().last(), Some(&Role::Idle));
}

#[tokio::test(start_paused = true)]
async fn shutdown_resigns_says_so_and_later_calls_fail_as_stopped() {
    let fake = Fake::new(1, vec![(10, won(1)), (10, Reply::Resigned { term: 1 })]);
    let (elector, mut events) = start(&fake, config());
    sleep(ms(100)).await;
    let watch = elector.watch();
    let handle = Elector {
        config: elector.config.clone(),
        state: watch.clone(),
        events: elector.events.clone(),
        commands: elector.commands.clone(),
        metrics: elector.metrics.clone(),
    };
    elector.shutdown().await.unwrap();
    assert_eq!(drain(&mut events)[2..], [
        Event::StoppedLeading { term: 1, reason: StopReason::Shutdown },
        Event::LeaderChanged { leader_id: None, term: 1 },
        Event::ElectorStopped { error: None },
    ]);
    assert!(!watch.borrow().running);
    assert!(!handle.is_healthy());
    let err = handle.resign().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Stopped);
    std::mem::forget(handle); // its Drop would only send to a closed channel
}

#[tokio::test(start_paused = true)]
async fn a_process_that_wakes_past_its_deadline_steps_down_before_it_sends() {
    let fake = Fake::new(1, vec![(10, won(1)), (10, won(2))]);
    let (elector, mut events) = start(&fake, config());
    sleep(ms(100)).await;
    // The whole process freezes for 12 s (the virtual clock jumps; no timer ran in between).
    tokio::time::advance(ms(12_000)).await;
    assert!(!elector.is_leader(), "exact at the deadline, whatever the task did");
    sleep(ms(50)).await;
    let calls = fake.calls();
    assert_eq!(calls[1].leading, false, "the renew after the freeze was not sent as leader");
    assert_eq!(drain(&mut events)[2..], [
        Event::StoppedLeading { term: 1, reason: StopReason::DeadlinePassed },
        Event::LeaderChanged { leader_id: Some("me".into()), term: 2 },
        Event::StartedLeading { term: 2, valid_until: fake.start + ms(12_100 + 9_900) },
    ]);
}

#[tokio::test(start_paused = true)]
async fn the_wakeup_lock_makes_a_follower_campaign_at_once() {
    let fake = Fake::new(1, vec![(5, Reply::Other { leader: "b", term: 1, remaining_ms: 9_000 }), (5, won(2))]);
    let (elector, _events) = start(&fake, config());
    sleep(ms(300)).await;
    assert!(matches!(fake.roles.lock().unwrap().last(), Some(Role::Following { .. })));
    fake.wake.notify_one();
    sleep(ms(20)).await;
    assert_eq!(fake.times(), vec![0, 300], "woken at 300 ms, not at the 1 s retry");
    assert!(elector.is_leader());
    assert_eq!(fake.roles.lock().unwrap().last(), Some(&Role::Leading));
}

#[tokio::test(start_paused = true)]
async fn a_transient_failure_moves_to_the_next_server_and_a_usage_error_does_not() {
    let fake = Fake::new(2, vec![
        (0, conn_error()),
        (0, Reply::Fail(Error::Usage { code: None, parameter: None, message: "bad".into() })),
        (0, won(1)),
    ]);
    let (elector, _events) = start(&fake, config());
    sleep(ms(2_500)).await;
    let servers: Vec<usize> = fake.calls().iter().map(|c| c.server).collect();
    assert_eq!(servers, vec![0, 1, 1]);
    assert!(elector.is_leader());
}

#[tokio::test(start_paused = true)]
async fn a_failed_login_is_in_the_state_and_health_says_so() {
    let fake = Fake::new(1, vec![(0, Reply::Fail(Error::Server { code: 1045, state: "28000".into(), message: "Access denied".into() }))]);
    let (elector, _events) = start(&fake, config());
    sleep(ms(10)).await;
    assert_eq!(elector.state().last_error.and_then(|e| e.server_code()), Some(1045));
    assert!(!elector.is_healthy());
    assert_eq!(elector.wait_for_leadership(Some(ms(100))).await, WaitOutcome::TimedOut);
}

#[tokio::test(start_paused = true)]
async fn a_task_that_panics_reports_itself_stopped() {
    // A campaign answered with a resign makes the fake backend panic inside the task.
    let fake = Fake::new(1, vec![(10, won(1)), (10, Reply::Resigned { term: 1 })]);
    let (elector, mut events) = start(&fake, config());
    sleep(ms(2_100)).await;
    let state = elector.state();
    assert!(!state.running && !state.campaigning && !state.leading);
    assert_eq!(state.last_error.as_ref().map(|e| e.kind()), Some(ErrorKind::Stopped));
    let seen = drain(&mut events);
    assert_eq!(seen[seen.len() - 2], Event::StoppedLeading { term: 1, reason: StopReason::Failed });
    assert!(matches!(seen.last(), Some(Event::ElectorStopped { error: Some(Error::Stopped { .. }) })));
    assert_eq!(elector.wait_for_leadership(None).await, WaitOutcome::NotCampaigning);
    assert_eq!(elector.resign().await.unwrap_err().kind(), ErrorKind::Stopped);
}

#[tokio::test(start_paused = true)]
async fn a_follower_watching_the_leaders_lock_stays_quiet_until_the_lease_can_end() {
    let other = || Reply::Other { leader: "b", term: 1, remaining_ms: 9_000 };
    let fake = Fake::new(1, vec![(5, other()), (5, other()), (5, other())]);
    fake.watching.store(true, std::sync::atomic::Ordering::SeqCst);
    let (_elector, _events) = start(&fake, config());
    sleep(ms(12_000)).await;
    // One campaign per lease seen (9 s left + 1 ms, from each answer), none in between.
    assert_eq!(fake.times(), vec![0, 9_006]);
    // Without the wait on the lock (it fell off), the retry interval again.
    fake.watching.store(false, std::sync::atomic::Ordering::SeqCst);
    fake.wake.notify_one();
    sleep(ms(1_100)).await;
    assert_eq!(fake.times()[2..], [12_000, 13_005]);
}
