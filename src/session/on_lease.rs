//! Which seats a session's renew may leave out of its `renew_lease` (issue "Fleets": a renew
//! that read every seat it listed cost the server as much per seat at 10,000 services as at
//! 1,000). A seat that hangs on the session's node lease is renewed by the lease's row alone;
//! the server need read it only when it may have left the lease.
//!
//! A seat leaves a node lease in four ways only: a takeover by another node or an operator
//! (`force_leader`, `reelect`, `handover`, the expiry sweep), which counts itself in the lease's
//! `lost` (sql/triggers/leader_election_record_term.sql); a resign by this node id; a let-go by
//! this session's own `renew_lease` (a seat it lists at another term); and the end of the lease
//! (a renew that does not renew it). So:
//!
//! 1. **Record.** Each `renew_lease` answers the lease's `lost` read in the same statement as its
//!    seats' rows (one snapshot). A listed seat answered on the lease, at the term its elector
//!    holds, is recorded with that term and that `lost`; any other listed seat is forgotten.
//! 2. **Leave out.** A renew leaves out a seat whose elector leads at exactly the recorded term:
//!    its resigns and its new terms change the term it holds, so a seat it resigned or lost and
//!    won again is listed again.
//! 3. **Answer.** When the lease was renewed and its `lost` is still the one recorded with a
//!    left-out seat, no takeover has touched the lease since the seat was seen on it: the seat
//!    is still on it, and valid for as long as the lease. Its elector is answered so, at its
//!    term, with the lease's time left.
//! 4. **List again.** A left-out seat recorded with an older `lost` may be the one taken: it is
//!    listed again, at once, in a renew of its own, and answered from that renew's rows; no
//!    deadline is extended for it from the count alone. A renew that did not renew the lease
//!    forgets every seat and answers none it left out: they go to their own campaigns, as the
//!    listed seats on the lease do.
//!
//! A node id is one process: a resign by another process with this node id (a copy started
//! twice) would take a seat off the lease without counting in `lost`; two such processes would
//! each lead the same seats anyway.

use std::collections::HashMap;

/// The seats seen on the session's node lease (step 1): by service id, the term each hung on the
/// lease at and the lease's `lost` when it was seen there.
#[derive(Debug, Default)]
pub(super) struct OnLease {
    /// The lease they hang on; another lease forgets them all.
    lease_id: u64,
    seats: HashMap<String, Seen>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    term: u64,
    lost: u64,
}

/// What a renew decided for the seats it left out (steps 3 and 4).
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct LeftOut {
    /// Still on the lease at their term: answered as held, valid as long as the lease.
    pub(super) held: Vec<String>,
    /// To be listed again, at once (step 4).
    pub(super) relist: Vec<String>,
}

impl OnLease {
    /// Step 2: whether a renew on lease `lease_id` may leave out `service_id`, whose elector
    /// holds it at `held` (0: leads nothing).
    pub(super) fn may_leave_out(&self, lease_id: u64, service_id: &str, held: u64) -> bool {
        held != 0 && self.lease_id == lease_id && self.seats.get(service_id).is_some_and(|s| s.term == held)
    }

    /// Step 1 for the listed seats of a renew on `lease_id` whose lease was renewed and answered
    /// `lost`: `on_lease` gives, for each listed seat, the term it is on the lease at (None: not
    /// on it, or not at the term its elector holds).
    pub(super) fn record<'a>(&mut self, lease_id: u64, lost: u64, listed: impl IntoIterator<Item = (&'a str, Option<u64>)>) {
        self.switch_to(lease_id);
        for (service_id, term) in listed {
            match term {
                Some(term) => {
                    self.seats.insert(service_id.to_owned(), Seen { term, lost });
                }
                None => {
                    self.seats.remove(service_id);
                }
            }
        }
    }

    /// Steps 3 and 4 for the seats a renew on `lease_id` left out: `renewed` and `lost` as the
    /// lease's row answered (`lost` None: a server whose `renew_lease` does not answer it).
    pub(super) fn settle(&mut self, lease_id: u64, renewed: bool, lost: Option<u64>, left_out: Vec<String>) -> LeftOut {
        let mut decided = LeftOut::default();
        let lost = match lost {
            Some(lost) if renewed && self.lease_id == lease_id => lost,
            _ => {
                // Step 4. Renewed, but without a count to compare (a server whose renew_lease
                // does not answer it): each is listed again. Not renewed: none is answered here.
                self.seats.clear();
                if renewed {
                    decided.relist = left_out;
                }
                return decided;
            }
        };
        for service_id in left_out {
            match self.seats.get(&service_id) {
                Some(seen) if seen.lost == lost => decided.held.push(service_id),
                _ => decided.relist.push(service_id),
            }
        }
        decided
    }

    /// How many seats are recorded.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.seats.len()
    }

    fn switch_to(&mut self, lease_id: u64) {
        if self.lease_id != lease_id {
            self.lease_id = lease_id;
            self.seats.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_seat_is_left_out_only_at_the_term_it_was_seen_on_the_lease() {
        let mut on = OnLease::default();
        assert!(!on.may_leave_out(7, "a", 3), "nothing seen yet");
        on.record(7, 0, [("a", Some(3)), ("b", None)]);
        assert!(on.may_leave_out(7, "a", 3));
        assert!(!on.may_leave_out(7, "a", 4), "a new term is listed");
        assert!(!on.may_leave_out(7, "a", 0), "a follower is listed");
        assert!(!on.may_leave_out(8, "a", 3), "another lease");
        assert!(!on.may_leave_out(7, "b", 1), "not on the lease");
        on.record(7, 0, [("a", None)]);
        assert!(!on.may_leave_out(7, "a", 3), "listed and not answered on the lease: forgotten");
    }

    #[test]
    fn only_an_unchanged_lost_answers_a_left_out_seat_as_held() {
        let mut on = OnLease::default();
        on.record(7, 2, [("a", Some(3)), ("b", Some(5))]);
        on.record(7, 4, [("c", Some(1))]);
        // lost 4: a and b were seen at 2, and one of the two takeovers since may be theirs.
        let decided = on.settle(7, true, Some(4), ids(&["a", "b", "c"]));
        assert_eq!(decided, LeftOut { held: ids(&["c"]), relist: ids(&["a", "b"]) });
        let decided = on.settle(7, true, Some(5), ids(&["c"]));
        assert_eq!(decided, LeftOut { held: vec![], relist: ids(&["c"]) });
    }

    #[test]
    fn a_lease_not_renewed_answers_nothing_left_out_and_forgets_every_seat() {
        let mut on = OnLease::default();
        on.record(7, 0, [("a", Some(3))]);
        assert_eq!(on.settle(7, false, Some(0), ids(&["a"])), LeftOut::default());
        assert_eq!(on.len(), 0);
        on.record(7, 0, [("a", Some(3))]);
        assert_eq!(on.settle(7, true, None, ids(&["a"])), LeftOut { held: vec![], relist: ids(&["a"]) });
        assert_eq!(on.len(), 0, "no count to compare: listed again and forgotten");
    }

    #[test]
    fn another_lease_forgets_every_seat() {
        let mut on = OnLease::default();
        on.record(7, 0, [("a", Some(3))]);
        on.record(8, 0, [("b", Some(1))]);
        assert!(!on.may_leave_out(8, "a", 3));
        assert_eq!(on.settle(7, true, Some(0), ids(&["a"])), LeftOut { held: vec![], relist: ids(&["a"]) });
    }
}
