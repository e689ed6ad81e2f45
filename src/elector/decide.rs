//! The elector's one decision, as a pure function: given what this node knows of the seat, one
//! input (the answer of a call, a deadline passing, a refusal, a stop) and the time, the new view
//! of the seat, the events in the order they happened, and when to call next. No I/O, no clock:
//! `now` and the random part of the jitter are arguments, so every transition is unit-tested.

use std::time::Duration;

use tokio::time::Instant;

use super::{Event, StopReason};
use crate::config::ElectorConfig;
use crate::error::Result;
use crate::procedures::{Campaign, CurrentLeader};

/// This node's view of the seat.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Seat {
    /// Whether this node counts itself leader (until `valid_until`).
    pub leading: bool,
    /// The leader seen last; `None` when the seat was vacant.
    pub leader_id: Option<String>,
    /// The term seen last.
    pub term: u64,
    /// While leading: the local monotonic deadline.
    pub valid_until: Option<Instant>,
    /// The term this elector won (or renewed) and has not seen end since, 0 when none: kept
    /// when it steps down by its deadline (its lease may still be valid in the database, and
    /// then is its to renew), cleared when an answer shows the seat elsewhere. Every campaign
    /// carries it (`leader_election_campaign`): the database renews a lease of this node id only
    /// at this term, so a process never takes over the term of another process with the same
    /// node id (issue 39: a paused predecessor that wakes after its successor took the seat).
    pub held: u64,
}

impl Seat {
    /// Leading, and the deadline has not passed at `now`.
    pub fn leads_at(&self, now: Instant) -> bool {
        self.leading && self.valid_until.is_some_and(|d| now < d)
    }

    /// Whether an `is_leader` answer at `term` of plain `campaign` (the fallback for an account
    /// that may not call `leader_election_campaign`) is this elector's: plain `campaign` also
    /// renews a lease that another process with this node id holds, at that process's term. So
    /// it is only when it is the term this elector holds, or, holding none, a term other than
    /// the one it saw that other process lead at (a new term: a take, as far as it can tell).
    fn owns_renewed(&self, me: &str, term: u64) -> bool {
        if self.held != 0 {
            term == self.held
        } else {
            !(self.leader_id.as_deref() == Some(me) && self.term == term)
        }
    }
}

/// What happened, as far as the decision is concerned.
#[derive(Debug)]
pub(crate) enum Input {
    /// The answer of `campaign`, sent at `sent_at` (taken before the send). `watched`: a
    /// wake-up wait is on the leader's lock, so a resign or crash of the leader wakes this node.
    /// `carried`: the call carried the held term (`leader_election_campaign`), so an `is_leader`
    /// answer is this elector's own term; false for plain `campaign` (an account granted before
    /// the routine existed), whose `is_leader` is believed only where [`Seat::owns_renewed`].
    Campaigned { sent_at: Instant, result: Result<Campaign>, watched: bool, carried: bool },
    /// The answer of `current_leader` (an elector that no longer campaigns only observes).
    Observed { result: Result<CurrentLeader> },
    /// The local deadline passed with no renew.
    DeadlineReached,
    /// The database refused this node's term `term` (its own fenced transaction got SQLSTATE
    /// 45001): another node has the seat, or the lease ended (`LostSeat`), or an operator's
    /// handover ended the term (`HandedOver`: the next call acknowledges it).
    Refused { term: u64, reason: StopReason },
    /// This node stops leading on purpose (resign, shutdown) or because its task failed.
    Stop(StopReason),
    /// `resign` answered that this node's lease ended at `term`: the seat is vacant.
    Resigned { term: u64 },
    /// `resign_to` answered that this node's term `term` ended by its handover: the seat is
    /// vacant, reserved for the named node; this node follows.
    HandedOver { term: u64 },
}

/// The outcome of [`decide`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Decision {
    pub seat: Seat,
    /// In the order they happened; published after the new seat.
    pub events: Vec<Event>,
    /// When to call next: `None` keeps the current schedule.
    pub next: Option<Instant>,
    /// An operator's handover took this node's seat (the answer of its own renew): it has
    /// stepped down (in this decision, if it still led), and now owes the acknowledgement, a
    /// `resign` before its next campaign, which lets the named node take the seat (until then,
    /// or until this node's lease runs out, the database keeps it vacant).
    pub acknowledge: bool,
}

/// The timing the decision needs, taken from the configuration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub renew_interval: Duration,
    pub retry_interval: Duration,
    pub retry_jitter: f64,
    pub drift_margin: Duration,
}

impl Timing {
    pub fn of(config: &ElectorConfig) -> Self {
        Timing {
            renew_interval: config.renew_interval,
            retry_interval: config.retry_interval,
            retry_jitter: config.retry_jitter(),
            drift_margin: config.drift_margin,
        }
    }

    /// The retry interval shortened by `random` (0 ≤ random < 1) times the jitter fraction.
    pub fn retry(&self, random: f64) -> Duration {
        self.retry_interval.mul_f64(1.0 - self.retry_jitter * random)
    }

    /// How soon a leader retries a failed renew: a quarter of the renew interval, at least 5 ms.
    pub fn renew_retry(&self) -> Duration {
        (self.renew_interval / 4).max(Duration::from_millis(5))
    }
}

/// The decision. `me` is this node's id; `random` is uniform in [0, 1), for the jitter.
pub(crate) fn decide(seat: &Seat, input: Input, now: Instant, me: &str, timing: &Timing, random: f64) -> Decision {
    let mut d = Decision { seat: seat.clone(), events: Vec::new(), next: None, acknowledge: false };
    match input {
        Input::Campaigned { sent_at, result: Ok(c), carried, .. } if c.is_leader && (carried || d.seat.owns_renewed(me, c.term)) => {
            // The lease runs from no earlier than `sent_at` on the database's clock, so the local
            // deadline `sent_at + remaining - drift_margin` falls before the lease's end.
            let valid_until = (sent_at + c.lease_remaining).checked_sub(timing.drift_margin).unwrap_or(sent_at);
            if valid_until <= now {
                // The answer came too late to act on: not leader; campaign again at once.
                d.step_down(StopReason::DeadlinePassed, now);
                d.next = Some(now);
            } else {
                d.lead(me, c.term, valid_until, now);
                d.next = Some((sent_at + timing.renew_interval).max(now));
            }
        }
        Input::Campaigned { result: Ok(c), watched, .. } => {
            // Another node holds a valid lease (or took ours): follow it. Look again when its
            // lease can end; without a wake-up wait on its lock, also after the retry interval.
            // A vacant seat this node could not take is reserved for another node by a handover
            // (campaign takes any other vacant seat): look again after the retry interval (the
            // named node takes it within milliseconds, or the reservation lapses). A leader that
            // finds its own term ended that way was handed over by an operator.
            // The seat led by this node id at a term this elector does not hold (the answer
            // `is_leader` 0 of `leader_election_campaign`, or an `is_leader` of plain `campaign`
            // that `owns_renewed` refuses) is another process's with the same node id: follow it,
            // and look again only when its lease can end (so that plain `campaign` never keeps
            // alive a lease this elector does not use).
            let handed_over = c.leader_id.is_none() && c.term == d.seat.term;
            let reason = if handed_over { StopReason::HandedOver } else { StopReason::LostSeat };
            // This node held that term (leading still, or stepped down by its deadline since):
            // acknowledge at once, now that it no longer acts as leader.
            d.acknowledge = handed_over && d.seat.leader_id.as_deref() == Some(me);
            let vacant = c.leader_id.is_none();
            let same_id = c.leader_id.as_deref() == Some(me);
            d.follow(reason, c.leader_id, c.term);
            let lease_end = c.lease_remaining + Duration::from_millis(1);
            let wait = if d.acknowledge {
                Duration::ZERO
            } else if vacant {
                timing.retry(random)
            } else if watched || same_id {
                lease_end
            } else {
                timing.retry(random).min(lease_end)
            };
            d.next = Some(now + wait);
        }
        Input::Campaigned { result: Err(_), .. } => {
            // Unknown outcome: the deadline stands (never extended). A leader retries soon, a
            // follower after the retry interval.
            if d.seat.leading && !d.seat.leads_at(now) {
                d.step_down(StopReason::DeadlinePassed, now);
            }
            let wait = if d.seat.leading { timing.renew_retry() } else { timing.retry(random) };
            d.next = Some(now + wait);
        }
        Input::Observed { result } => {
            if let Ok(c) = result {
                d.follow(StopReason::LostSeat, c.leader_id, c.term);
            }
            d.next = Some(now + timing.retry(random));
        }
        Input::DeadlineReached => {
            d.step_down(StopReason::DeadlinePassed, now);
            d.next = Some(now);
        }
        Input::Refused { term, reason } => {
            if d.seat.leading && d.seat.term == term {
                d.step_down(reason, now);
                // Learn who leads now.
                d.next = Some(now);
            }
        }
        Input::Stop(reason) => d.step_down(reason, now),
        Input::Resigned { term } => d.follow(StopReason::Resigned, None, term),
        Input::HandedOver { term } => {
            d.follow(StopReason::HandedOver, None, term);
            // The named node takes the seat within milliseconds of the wake-up; look after the
            // retry interval (the reservation keeps this node out meanwhile).
            d.next = Some(now + timing.retry(random));
        }
    }
    d
}

impl Decision {
    /// Leads at `term` until `valid_until`. A leadership whose deadline had passed, or of another
    /// term, ends first (`StoppedLeading`), so each term has exactly one start and one stop.
    fn lead(&mut self, me: &str, term: u64, valid_until: Instant, now: Instant) {
        let before = self.seat.clone();
        let continues = before.leads_at(now) && before.term == term;
        if before.leading && !continues {
            let reason = if before.leads_at(now) { StopReason::LostSeat } else { StopReason::DeadlinePassed };
            self.events.push(Event::StoppedLeading { term: before.term, reason });
        }
        if before.leader_id.as_deref() != Some(me) || before.term != term {
            self.events.push(Event::LeaderChanged { leader_id: Some(me.to_string()), term });
        }
        if !continues {
            self.events.push(Event::StartedLeading { term, valid_until });
        }
        self.seat = Seat { leading: true, leader_id: Some(me.to_string()), term, valid_until: Some(valid_until), held: term };
    }

    /// This node does not lead (if it did, it stops now for `reason`); `leader_id` leads at `term`.
    fn follow(&mut self, reason: StopReason, leader_id: Option<String>, term: u64) {
        if self.seat.leading {
            self.events.push(Event::StoppedLeading { term: self.seat.term, reason });
        }
        if self.seat.leader_id != leader_id || self.seat.term != term {
            self.events.push(Event::LeaderChanged { leader_id: leader_id.clone(), term });
        }
        self.seat = Seat { leading: false, leader_id, term, valid_until: None, held: 0 };
    }

    /// Stops counting this node as leader, now; the rest of the view stays. Idempotent.
    fn step_down(&mut self, reason: StopReason, _now: Instant) {
        if self.seat.leading {
            self.events.push(Event::StoppedLeading { term: self.seat.term, reason });
            self.seat.leading = false;
            self.seat.valid_until = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: &str = "me";

    fn timing() -> Timing {
        Timing {
            renew_interval: Duration::from_millis(2000),
            retry_interval: Duration::from_millis(1000),
            retry_jitter: 0.2,
            drift_margin: Duration::from_millis(100),
        }
    }

    fn won(term: u64, remaining_ms: u64) -> Result<Campaign> {
        Ok(Campaign { is_leader: true, leader_id: Some(ME.into()), term, lease_remaining: Duration::from_millis(remaining_ms) })
    }

    fn other(term: u64, remaining_ms: u64) -> Result<Campaign> {
        Ok(Campaign { is_leader: false, leader_id: Some("other".into()), term, lease_remaining: Duration::from_millis(remaining_ms) })
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn winning_sets_the_deadline_from_the_send_time() {
        let t0 = Instant::now();
        let d = decide(&Seat::default(), Input::Campaigned { sent_at: t0, result: won(1, 10_000), watched: false, carried: true }, t0 + ms(30), ME, &timing(), 0.0);
        let until = t0 + ms(10_000) - ms(100);
        assert_eq!(d.seat, Seat { leading: true, leader_id: Some(ME.into()), term: 1, valid_until: Some(until), held: 1 });
        assert_eq!(d.events, vec![
            Event::LeaderChanged { leader_id: Some(ME.into()), term: 1 },
            Event::StartedLeading { term: 1, valid_until: until },
        ]);
        assert_eq!(d.next, Some(t0 + ms(2000)));
    }

    #[test]
    fn an_answer_past_its_own_deadline_is_not_leadership() {
        let t0 = Instant::now();
        let d = decide(&Seat::default(), Input::Campaigned { sent_at: t0, result: won(1, 500), watched: false, carried: true }, t0 + ms(450), ME, &timing(), 0.0);
        assert!(!d.seat.leading);
        assert!(d.events.is_empty());
        assert_eq!(d.next, Some(t0 + ms(450)));
    }

    #[test]
    fn a_follower_never_waits_past_the_lease_it_saw() {
        let t0 = Instant::now();
        let d = decide(&Seat::default(), Input::Campaigned { sent_at: t0, result: other(3, 200), watched: false, carried: true }, t0, ME, &timing(), 0.0);
        assert_eq!(d.next, Some(t0 + ms(201)));
        assert_eq!(d.events, vec![Event::LeaderChanged { leader_id: Some("other".into()), term: 3 }]);
        // With a long lease left: the retry interval, shortened by the jitter.
        let d = decide(&Seat::default(), Input::Campaigned { sent_at: t0, result: other(3, 9000), watched: false, carried: true }, t0, ME, &timing(), 0.5);
        assert_eq!(d.next, Some(t0 + ms(900)));
        // A quiet follower, whose wake-up wait watches the leader's lock, looks again only when
        // the lease it saw can end.
        let d = decide(&Seat::default(), Input::Campaigned { sent_at: t0, result: other(3, 9000), watched: true, carried: true }, t0, ME, &timing(), 0.5);
        assert_eq!(d.next, Some(t0 + ms(9001)));
    }

    #[test]
    fn a_failed_renew_keeps_the_deadline_and_retries_soon() {
        let t0 = Instant::now();
        let leading = Seat { leading: true, leader_id: Some(ME.into()), term: 1, valid_until: Some(t0 + ms(5000)), held: 1 };
        let d = decide(&leading, Input::Campaigned { sent_at: t0, result: Err(crate::Error::timeout(ms(2000))), watched: false, carried: true }, t0 + ms(2000), ME, &timing(), 0.0);
        assert_eq!(d.seat, leading);
        assert!(d.events.is_empty());
        assert_eq!(d.next, Some(t0 + ms(2500)));
        // Once the deadline has passed, a failure steps down.
        let d = decide(&leading, Input::Campaigned { sent_at: t0, result: Err(crate::Error::timeout(ms(2000))), watched: false, carried: true }, t0 + ms(5000), ME, &timing(), 0.0);
        assert!(!d.seat.leading);
        assert_eq!(d.events, vec![Event::StoppedLeading { term: 1, reason: StopReason::DeadlinePassed }]);
    }

    #[test]
    fn a_renew_after_the_deadline_ends_the_old_leadership_first() {
        let t0 = Instant::now();
        let lapsed = Seat { leading: true, leader_id: Some(ME.into()), term: 1, valid_until: Some(t0), held: 1 };
        let d = decide(&lapsed, Input::Campaigned { sent_at: t0 + ms(10), result: won(1, 10_000), watched: false, carried: true }, t0 + ms(20), ME, &timing(), 0.0);
        assert_eq!(d.events, vec![
            Event::StoppedLeading { term: 1, reason: StopReason::DeadlinePassed },
            Event::StartedLeading { term: 1, valid_until: t0 + ms(10) + ms(9900) },
        ]);
    }

    #[test]
    fn forced_out_then_forced_back_in_is_two_terms() {
        let t0 = Instant::now();
        let leading = Seat { leading: true, leader_id: Some(ME.into()), term: 1, valid_until: Some(t0 + ms(5000)), held: 1 };
        let d = decide(&leading, Input::Campaigned { sent_at: t0, result: won(2, 10_000), watched: false, carried: true }, t0, ME, &timing(), 0.0);
        assert_eq!(d.events, vec![
            Event::StoppedLeading { term: 1, reason: StopReason::LostSeat },
            Event::LeaderChanged { leader_id: Some(ME.into()), term: 2 },
            Event::StartedLeading { term: 2, valid_until: t0 + ms(9900) },
        ]);
        let d = decide(&leading, Input::Campaigned { sent_at: t0, result: other(2, 10_000), watched: false, carried: true }, t0, ME, &timing(), 0.0);
        assert_eq!(d.events, vec![
            Event::StoppedLeading { term: 1, reason: StopReason::LostSeat },
            Event::LeaderChanged { leader_id: Some("other".into()), term: 2 },
        ]);
    }

    #[test]
    fn a_refusal_of_the_current_term_steps_down_at_once() {
        let t0 = Instant::now();
        let leading = Seat { leading: true, leader_id: Some(ME.into()), term: 4, valid_until: Some(t0 + ms(5000)), held: 4 };
        let d = decide(&leading, Input::Refused { term: 4, reason: StopReason::LostSeat }, t0, ME, &timing(), 0.0);
        assert!(!d.seat.leading);
        assert_eq!(d.events, vec![Event::StoppedLeading { term: 4, reason: StopReason::LostSeat }]);
        assert_eq!(d.next, Some(t0));
        // A refusal of an older term changes nothing.
        let d = decide(&leading, Input::Refused { term: 3, reason: StopReason::LostSeat }, t0, ME, &timing(), 0.0);
        assert_eq!(d.seat, leading);
        assert!(d.events.is_empty());
        assert_eq!(d.next, None);
    }

    #[test]
    fn a_fence_refused_by_an_operators_handover_stops_for_it_and_the_next_call_acknowledges() {
        let t0 = Instant::now();
        let leading = Seat { leading: true, leader_id: Some(ME.into()), term: 4, valid_until: Some(t0 + ms(5000)), held: 4 };
        let d = decide(&leading, Input::Refused { term: 4, reason: StopReason::HandedOver }, t0, ME, &timing(), 0.0);
        assert_eq!(d.events, vec![Event::StoppedLeading { term: 4, reason: StopReason::HandedOver }]);
        assert_eq!(d.next, Some(t0));
        // The call sent at once finds the seat vacant at that term: no second stop, and this
        // node, which held the term, owes the acknowledgement.
        let d = decide(&d.seat, Input::Campaigned { sent_at: t0, result: vacant(4), watched: false, carried: true }, t0 + ms(3), ME, &timing(), 0.0);
        assert_eq!(d.events, vec![Event::LeaderChanged { leader_id: None, term: 4 }]);
        assert!(d.acknowledge);
        assert_eq!(d.next, Some(t0 + ms(3)));
    }

    fn vacant(term: u64) -> Result<Campaign> {
        Ok(Campaign { is_leader: false, leader_id: None, term, lease_remaining: Duration::ZERO })
    }

    #[test]
    fn an_operators_handover_is_seen_at_the_next_renew() {
        // The renew finds its own term ended and the seat vacant but not its to take: reserved
        // for another node by a handover.
        let t0 = Instant::now();
        let leading = Seat { leading: true, leader_id: Some(ME.into()), term: 4, valid_until: Some(t0 + ms(5000)), held: 4 };
        let d = decide(&leading, Input::Campaigned { sent_at: t0, result: vacant(4), watched: false, carried: true }, t0, ME, &timing(), 0.0);
        assert_eq!(d.events, vec![
            Event::StoppedLeading { term: 4, reason: StopReason::HandedOver },
            Event::LeaderChanged { leader_id: None, term: 4 },
        ]);
        assert!(!d.seat.leading);
        // Stepped down in this decision: it acknowledges at once (a resign, then a campaign).
        assert!(d.acknowledge);
        assert_eq!(d.next, Some(t0));
        // So does a node that had stepped down by its deadline before the answer came.
        let lapsed = Seat { leading: false, ..leading.clone() };
        let d = decide(&lapsed, Input::Campaigned { sent_at: t0, result: vacant(4), watched: false, carried: true }, t0, ME, &timing(), 0.0);
        assert!(d.acknowledge);
        // A node that did not hold the term owes nothing, nor does one answered with another term.
        let other = Seat { leader_id: Some("other".into()), ..lapsed.clone() };
        let d = decide(&other, Input::Campaigned { sent_at: t0, result: vacant(4), watched: false, carried: true }, t0, ME, &timing(), 0.0);
        assert!(!d.acknowledge);
        let d = decide(&leading, Input::Campaigned { sent_at: t0, result: vacant(5), watched: false, carried: true }, t0, ME, &timing(), 0.0);
        assert!(!d.acknowledge);
    }

    #[test]
    fn a_seat_reserved_for_another_node_is_looked_at_after_the_retry_interval() {
        // Not at once (the answer says 0 ms left): the named node takes it within milliseconds,
        // or the reservation lapses; hammering the row meanwhile helps nobody.
        let t0 = Instant::now();
        for watched in [false, true] {
            let d = decide(&Seat::default(), Input::Campaigned { sent_at: t0, result: vacant(4), watched, carried: true }, t0, ME, &timing(), 0.0);
            assert_eq!(d.next, Some(t0 + ms(1000)), "watched: {watched}");
        }
    }

    #[test]
    fn handing_over_steps_down_first_then_follows_the_vacant_seat() {
        let t0 = Instant::now();
        let leading = Seat { leading: true, leader_id: Some(ME.into()), term: 4, valid_until: Some(t0 + ms(5000)), held: 4 };
        let d = decide(&leading, Input::Stop(StopReason::HandedOver), t0, ME, &timing(), 0.0);
        assert_eq!(d.events, vec![Event::StoppedLeading { term: 4, reason: StopReason::HandedOver }]);
        let d = decide(&d.seat, Input::HandedOver { term: 4 }, t0, ME, &timing(), 0.0);
        assert_eq!(d.seat, Seat { leading: false, leader_id: None, term: 4, valid_until: None, held: 0 });
        assert_eq!(d.next, Some(t0 + ms(1000)));
    }

    #[test]
    fn resigning_steps_down_then_sees_the_seat_vacant() {
        let t0 = Instant::now();
        let leading = Seat { leading: true, leader_id: Some(ME.into()), term: 4, valid_until: Some(t0 + ms(5000)), held: 4 };
        let d = decide(&leading, Input::Stop(StopReason::Resigned), t0, ME, &timing(), 0.0);
        assert_eq!(d.events, vec![Event::StoppedLeading { term: 4, reason: StopReason::Resigned }]);
        let d = decide(&d.seat, Input::Resigned { term: 4 }, t0, ME, &timing(), 0.0);
        assert_eq!(d.seat, Seat { leading: false, leader_id: None, term: 4, valid_until: None, held: 0 });
        assert_eq!(d.events, vec![Event::LeaderChanged { leader_id: None, term: 4 }]);
    }

    fn same_id(term: u64, remaining_ms: u64) -> Result<Campaign> {
        Ok(Campaign { is_leader: false, leader_id: Some(ME.into()), term, lease_remaining: Duration::from_millis(remaining_ms) })
    }

    #[test]
    fn the_held_term_outlives_a_deadline_and_ends_with_the_seat() {
        let t0 = Instant::now();
        let d = decide(&Seat::default(), Input::Campaigned { sent_at: t0, result: won(4, 10_000), watched: false, carried: true }, t0, ME, &timing(), 0.0);
        assert_eq!(d.seat.held, 4);
        // Stepped down by its deadline: its lease may still be valid, and is its own to renew.
        let d = decide(&d.seat, Input::DeadlineReached, t0 + ms(9900), ME, &timing(), 0.0);
        assert_eq!((d.seat.leading, d.seat.held), (false, 4));
        // Another node's seat: nothing held any more.
        let d = decide(&d.seat, Input::Campaigned { sent_at: t0, result: other(5, 9000), watched: false, carried: true }, t0 + ms(9950), ME, &timing(), 0.0);
        assert_eq!(d.seat.held, 0);
    }

    #[test]
    fn a_woken_predecessor_follows_its_successor_with_the_same_node_id() {
        // Issue 39: this process led at term 4, was paused past its deadline, and a successor
        // with the same node id took term 5. The call carrying term 4 renews nothing and says
        // this node id leads at 5: this process follows it, never starts leading at 5, and looks
        // again when that lease can end (even without a wake-up wait on the lock).
        let t0 = Instant::now();
        let lapsed = Seat { leading: false, leader_id: Some(ME.into()), term: 4, valid_until: None, held: 4 };
        let d = decide(&lapsed, Input::Campaigned { sent_at: t0, result: same_id(5, 3000), watched: false, carried: true }, t0, ME, &timing(), 0.0);
        assert_eq!(d.seat, Seat { leading: false, leader_id: Some(ME.into()), term: 5, valid_until: None, held: 0 });
        assert_eq!(d.events, vec![Event::LeaderChanged { leader_id: Some(ME.into()), term: 5 }]);
        assert!(!d.acknowledge);
        assert_eq!(d.next, Some(t0 + ms(3001)));
        // One that still counted itself leader (its clock lagging) stops first.
        let leading = Seat { leading: true, valid_until: Some(t0 + ms(500)), ..lapsed.clone() };
        let d = decide(&leading, Input::Campaigned { sent_at: t0, result: same_id(5, 3000), watched: false, carried: true }, t0, ME, &timing(), 0.0);
        assert_eq!(d.events, vec![
            Event::StoppedLeading { term: 4, reason: StopReason::LostSeat },
            Event::LeaderChanged { leader_id: Some(ME.into()), term: 5 },
        ]);
        // The next look, holding nothing, still follows; once that lease has lapsed, the seat
        // taken at the next term is this process's own.
        let d = decide(&d.seat, Input::Campaigned { sent_at: t0, result: same_id(5, 2000), watched: false, carried: true }, t0, ME, &timing(), 0.0);
        assert!(!d.seat.leading && d.events.is_empty());
        let d = decide(&d.seat, Input::Campaigned { sent_at: t0, result: won(6, 10_000), watched: false, carried: true }, t0, ME, &timing(), 0.0);
        assert_eq!(d.events, vec![
            Event::LeaderChanged { leader_id: Some(ME.into()), term: 6 },
            Event::StartedLeading { term: 6, valid_until: t0 + ms(9900) },
        ]);
        assert_eq!(d.seat.held, 6);
    }

    #[test]
    fn the_fallback_campaign_never_adopts_another_processes_term() {
        // Plain campaign (no EXECUTE on leader_election_campaign) renews this node id's lease at
        // whatever term: an is_leader answer at a term this elector does not hold is refused.
        let t0 = Instant::now();
        let leading = Seat { leading: true, leader_id: Some(ME.into()), term: 4, valid_until: Some(t0 + ms(5000)), held: 4 };
        let renewed = decide(&leading, Input::Campaigned { sent_at: t0, result: won(4, 10_000), watched: false, carried: false }, t0, ME, &timing(), 0.0);
        assert!(renewed.seat.leading && renewed.events.is_empty());
        let d = decide(&leading, Input::Campaigned { sent_at: t0, result: won(5, 3000), watched: false, carried: false }, t0, ME, &timing(), 0.0);
        assert_eq!(d.events, vec![
            Event::StoppedLeading { term: 4, reason: StopReason::LostSeat },
            Event::LeaderChanged { leader_id: Some(ME.into()), term: 5 },
        ]);
        assert_eq!(d.seat, Seat { leading: false, leader_id: Some(ME.into()), term: 5, valid_until: None, held: 0 });
        // It looks again only when that lease can end: it never keeps it alive.
        assert_eq!(d.next, Some(t0 + ms(3001)));
        // Holding nothing, the term it saw that other process lead at is still not its own ...
        let again = decide(&d.seat, Input::Campaigned { sent_at: t0, result: won(5, 2000), watched: false, carried: false }, t0, ME, &timing(), 0.0);
        assert!(!again.seat.leading && again.events.is_empty());
        // ... a new term is (a take).
        let took = decide(&d.seat, Input::Campaigned { sent_at: t0, result: won(6, 10_000), watched: false, carried: false }, t0, ME, &timing(), 0.0);
        assert!(took.seat.leading);
        // Carried, the same answer is a take after the lease expired: adopted.
        let d = decide(&leading, Input::Campaigned { sent_at: t0, result: won(5, 10_000), watched: false, carried: true }, t0, ME, &timing(), 0.0);
        assert_eq!((d.seat.leading, d.seat.term), (true, 5));
    }
}
