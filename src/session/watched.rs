//! Which followed seats a session may answer from their leaders' node leases instead of listing
//! them in its renew (issue "Fleets": a follower node listed every seat it followed once per
//! retry interval or lease, and at 10,000 services those reads were most of the server's work).
//! A seat another node leads on a node lease is held for as long as that lease is valid and the
//! seat has not left it; every way a seat leaves a lease counts in the lease's `moved`, in the
//! same transaction (sql/V16__lease_moves.sql). So:
//!
//! 1. **Record.** Each `renew_lease` answers, with the row of a listed seat another node leads,
//!    the lease it hangs on and that lease's `moved`, read in the same statement as the seat.
//!    Such a seat is recorded with its leader, its term, the lease and `moved`; any other listed
//!    seat is forgotten.
//! 2. **Watch.** A follower's call (an elector that leads nothing) for a recorded seat is not
//!    listed: the batch asks `watch_leases` about the recorded leases, one row read per lease.
//! 3. **Answer.** When the lease is in that answer (valid, this account's), for the recorded
//!    node, with the recorded `moved`, no seat has left it since the seat was seen on it: the
//!    seat is still on it, led by that node at the recorded term, valid at least as long as the
//!    lease. Its follower is answered so, with the lease's time left (never more than the
//!    seat's: a seat's lease ends at the later of its own end and its node lease's).
//! 4. **List again.** Any other recorded seat (its lease ended, or is missing, or `moved` has
//!    changed: one of its seats left it, perhaps this one) is forgotten and listed in the same
//!    batch's `renew_lease`, which answers it as before (and records it again, step 1).
//!
//! A follower answered in step 3 may wait on its leader's lease without ever reading the seat;
//! what makes a seat vacant or someone else's always moves `moved`, so the first look after it
//! lists the seat. The answer is only ever a follower's: which node leads is decided on the
//! server by the campaign that takes a seat, never from this record.

use std::collections::HashMap;
use std::time::Duration;

use crate::procedures::{Campaign, FollowedSeat, SeatAnswer, WatchedLease};

/// The followed seats seen on their leaders' node leases (step 1), by service id.
#[derive(Debug, Default)]
pub(super) struct Watched {
    seats: HashMap<String, Seen>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    leader: String,
    term: u64,
    lease_id: u64,
    moved: u64,
}

/// What a look at the leases decided for the watched seats (steps 3 and 4).
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Settled {
    /// Still on their leaders' leases: answered as followers of that leader.
    pub(super) answered: Vec<SeatAnswer>,
    /// To be listed in the renew (step 4).
    pub(super) relist: Vec<String>,
}

impl Watched {
    /// Step 2: the lease to look at instead of listing `service_id`, for an elector that holds
    /// no term (`held` 0: a follower); None: list it.
    pub(super) fn lease_of(&self, service_id: &str, held: u64) -> Option<u64> {
        if held != 0 {
            return None;
        }
        self.seats.get(service_id).map(|s| s.lease_id)
    }

    /// Step 1 for the seats a `renew_lease` listed: `answers` its seat rows, `followed` the
    /// leases it answered for the seats other nodes lead.
    pub(super) fn record<'a>(&mut self, listed: impl IntoIterator<Item = &'a str>, answers: &[SeatAnswer], followed: &[FollowedSeat]) {
        let answers: HashMap<&str, &Campaign> = answers.iter().map(|a| (a.service_id.as_str(), &a.answer)).collect();
        let followed: HashMap<&str, &FollowedSeat> = followed.iter().map(|f| (f.service_id.as_str(), f)).collect();
        for service_id in listed {
            let seen = match (answers.get(service_id), followed.get(service_id)) {
                (Some(Campaign { is_leader: false, leader_id: Some(leader), term, .. }), Some(f)) => {
                    Some(Seen { leader: leader.clone(), term: *term, lease_id: f.lease_id, moved: f.moved })
                }
                _ => None,
            };
            match seen {
                Some(seen) => {
                    self.seats.insert(service_id.to_owned(), seen);
                }
                None => {
                    self.seats.remove(service_id);
                }
            }
        }
    }

    /// Steps 3 and 4 for `watched` (service ids step 2 left out), by what `watch_leases`
    /// answered.
    pub(super) fn settle(&mut self, leases: &[WatchedLease], watched: Vec<String>) -> Settled {
        let leases: HashMap<u64, &WatchedLease> = leases.iter().map(|l| (l.lease_id, l)).collect();
        let mut settled = Settled::default();
        for service_id in watched {
            let still = self.seats.get(&service_id).and_then(|seen| {
                let lease = leases.get(&seen.lease_id)?;
                (lease.node_id == seen.leader && lease.moved == seen.moved && lease.lease_remaining > Duration::ZERO)
                    .then(|| Campaign { is_leader: false, leader_id: Some(seen.leader.clone()), term: seen.term, lease_remaining: lease.lease_remaining })
            });
            match still {
                Some(answer) => settled.answered.push(SeatAnswer { service_id, answer }),
                None => {
                    self.seats.remove(&service_id);
                    settled.relist.push(service_id);
                }
            }
        }
        settled
    }

    /// Forgets a seat whose elector has ended.
    pub(super) fn forget(&mut self, service_id: &str) {
        self.seats.remove(service_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seat(id: &str, leader: Option<&str>, is_leader: bool, term: u64) -> SeatAnswer {
        SeatAnswer {
            service_id: id.into(),
            answer: Campaign { is_leader, leader_id: leader.map(Into::into), term, lease_remaining: Duration::from_secs(3) },
        }
    }

    fn followed(id: &str, lease_id: u64, moved: u64) -> FollowedSeat {
        FollowedSeat { service_id: id.into(), lease_id, moved }
    }

    fn lease(lease_id: u64, node: &str, moved: u64, ms: u64) -> WatchedLease {
        WatchedLease { lease_id, node_id: node.into(), lease_remaining: Duration::from_millis(ms), moved }
    }

    #[test]
    fn only_a_follower_of_a_seat_seen_on_another_nodes_lease_is_watched() {
        let mut w = Watched::default();
        w.record(["a", "b", "c"], &[seat("a", Some("n2"), false, 4), seat("b", Some("n1"), true, 2), seat("c", Some("n3"), false, 1)],
                 &[followed("a", 7, 3)]);
        assert_eq!(w.lease_of("a", 0), Some(7));
        assert_eq!(w.lease_of("a", 4), None, "an elector that holds a term is listed");
        assert_eq!(w.lease_of("b", 0), None, "this node's own seat");
        assert_eq!(w.lease_of("c", 0), None, "a seat on no lease");
        w.record(["a"], &[], &[]);
        assert_eq!(w.lease_of("a", 0), None, "listed and vacant: forgotten");
    }

    #[test]
    fn a_watched_seat_is_answered_only_while_its_lease_is_valid_for_its_leader_and_nothing_left_it() {
        let mut w = Watched::default();
        let ids = ["a", "b", "c", "d", "e"];
        w.record(ids, &ids.map(|id| seat(id, Some("n2"), false, 5)),
                 &[followed("a", 7, 3), followed("b", 7, 2), followed("c", 8, 0), followed("d", 9, 0), followed("e", 10, 0)]);
        let leases = [lease(7, "n2", 3, 2500), lease(8, "n9", 0, 2500), lease(9, "n2", 0, 0)];
        let settled = w.settle(&leases, ids.map(String::from).to_vec());
        assert_eq!(settled.answered, vec![SeatAnswer {
            service_id: "a".into(),
            answer: Campaign { is_leader: false, leader_id: Some("n2".into()), term: 5, lease_remaining: Duration::from_millis(2500) },
        }]);
        // b: a seat left lease 7 since; c: another node's lease; d: no time left; e: not answered.
        assert_eq!(settled.relist, ["b", "c", "d", "e"].map(String::from).to_vec());
        for id in ["b", "c", "d", "e"] {
            assert_eq!(w.lease_of(id, 0), None, "{id} is listed until a renew records it again");
        }
        assert_eq!(w.lease_of("a", 0), Some(7));
    }
}
