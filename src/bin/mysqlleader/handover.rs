//! `mysqlleader handover SERVICE --to NODE [--wait] [--json]`: an operator's switchover.
//!
//! `CALL handover(service, node)` ends the current term now (the old leader's fence fails from
//! that commit on), vacates the seat and reserves it for NODE for one lease. The old leader
//! learns at its next renew that it does not lead, steps down and lets go of its wake-up lock;
//! NODE, woken, takes the seat with a new term.
//!
//! With `--wait` the tool then watches the seat (through `leader_election_status`, which the
//! operator role may call) until:
//! 1. NODE leads: exit 0;
//! 2. the reservation is gone and NODE does not lead (it lapsed because NODE did not campaign,
//!    or another operator's force, reelect or handover replaced it): exit [`LAPSED`].
//!
//! Many seats at once (issue 42, "Fleets"): `handover SVC1 SVC2 ... --to NODE`, or
//! `handover --from OLD --to NODE` (every service OLD leads now, from the status read), go in one
//! `CALL handover_seats(services, node)` per [`CHUNK`] seats ([`handover_many`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use mysqlleader::procedures::{self, Campaign, SeatHandover};
use serde_json::json;
use tokio::time::Instant;

use crate::commands::{changed_nothing, unknown_service, with_db, Ctx, Db, Status};
use crate::errors::CliError;
use crate::output::{flag, human, print_json};
use crate::say;

/// Exit status of `--wait` when the handover did not complete: NODE did not take the seat
/// while it was reserved for it.
pub const LAPSED: Status = 3;
/// How often `--wait` looks at the seat.
const WAIT_POLL: Duration = Duration::from_millis(20);
/// How often `--wait` looks at many seats: one status read of every service per poll.
const WAIT_POLL_MANY: Duration = Duration::from_millis(100);
/// The most seats in one `handover_seats` call: one round trip per 1,000 seats, each call well
/// within the routine's own 10 s budget when uncontended (docs/operations.md), and a list of
/// at most about 130 KB.
pub const CHUNK: usize = 1_000;

pub async fn handover(ctx: &Ctx, service: &str, to: &str, wait: bool, as_json: bool) -> Result<Status, CliError> {
    with_db(ctx, async |db| {
        let started = Instant::now();
        // A seat nobody ever campaigned for is a typing error far more often than a plan: refuse
        // it (exit 2, as `resign` does) rather than create a seat that `status` lists for ever.
        // (`CALL handover` itself does create the seat, so that SQL can reserve a new service.)
        if procedures::service_statuses(&db.pool, Some(service)).await.map_err(|e| db.explain(e))?.is_empty() {
            return Err(changed_nothing(unknown_service(db, service).await));
        }
        let c = procedures::retry_conflicts(|| procedures::handover(&db.pool, service, to)).await.map_err(|e| db.explain(e))?;
        if c.is_leader {
            report(&c, as_json, None);
            if !as_json {
                say!("{to} leads {service} already (term {}): nothing to hand over", c.term);
            }
            return Ok(0);
        }
        if !wait {
            report(&c, as_json, None);
            if !as_json {
                say!(
                    "term {} of {service} ended; the seat is reserved for {to}, which takes it at its next campaign \
                     (the old leader steps down at its next renew)",
                    c.term
                );
            }
            return Ok(0);
        }
        match wait_for(db, service, to).await? {
            Some(now) => {
                report(&now, as_json, Some(started.elapsed()));
                if !as_json {
                    say!("{to} leads {service} at term {} (handover took {})", now.term, human(started.elapsed()));
                }
                Ok(0)
            }
            None => {
                let seat = procedures::current_leader(&db.pool, service).await.map_err(|e| db.explain(e))?;
                let now = Campaign { is_leader: false, leader_id: seat.leader_id.clone(), term: seat.term, lease_remaining: seat.lease_remaining };
                report(&now, as_json, Some(started.elapsed()));
                eprintln!(
                    "mysqlleader: the handover of {service} to {to} lapsed after {}: {to} did not take the seat while it was \
                     reserved for it (is it running and campaigning?); {}",
                    human(started.elapsed()),
                    match &seat.leader_id {
                        Some(leader) => format!("{leader} leads at term {}", seat.term),
                        None => format!("the seat is vacant (term {}); the next campaign of any node wins", seat.term),
                    }
                );
                Ok(LAPSED)
            }
        }
    })
    .await
}

/// Watches the seat until `to` leads (its state then) or the reservation is gone without it
/// (`None`).
async fn wait_for(db: &Db, service: &str, to: &str) -> Result<Option<Campaign>, CliError> {
    loop {
        let seat = procedures::service_statuses(&db.pool, Some(service)).await.map_err(|e| db.explain(e))?;
        let Some(seat) = seat.into_iter().next() else {
            return Ok(None);
        };
        if seat.leader_id.as_deref() == Some(to) {
            return Ok(Some(Campaign { is_leader: true, leader_id: seat.leader_id, term: seat.term, lease_remaining: seat.lease_remaining }));
        }
        if seat.handover.as_ref().is_none_or(|h| h.to_node != to) {
            return Ok(None);
        }
        tokio::time::sleep(WAIT_POLL).await;
    }
}

/// `--json`: one object with the columns of `handover`'s row (the seat, seen from `to`), and
/// with `--wait` how long it took.
fn report(c: &Campaign, as_json: bool, took: Option<Duration>) {
    if !as_json {
        return;
    }
    let mut value = json!({
        "is_leader": flag(c.is_leader),
        "leader_id": c.leader_id,
        "term": c.term,
        "lease_remaining_ms": c.lease_remaining.as_millis() as u64,
    });
    if let Some(took) = took {
        value["waited_ms"] = json!(took.as_millis() as u64);
    }
    print_json(&value);
}

/// `handover SVC1 SVC2 ... --to NODE` and `handover --from OLD --to NODE`: many seats, in one
/// `handover_seats` call per [`CHUNK`].
/// 1. The services: the named ones (each once), every one checked against one status read
///    first (an unknown one: exit 2 naming it, nothing changed, as for one service); or those
///    `from` leads now (a valid lease) in that read.
/// 2. Each chunk in one call; the seats missing from its answer (their lock was not obtained
///    within the routine's bound, or its 10 s budget ran out) are sent again while a call hands
///    over at least one seat. Those still missing: exit 2 naming them, after the rest.
/// 3. `--wait`: one status read per poll until NODE leads every handed-over seat, or its
///    reservation is gone without it (lapsed: exit [`LAPSED`] naming them).
/// Output: one line per seat in service order (`--json`: one JSON object per line, the keys of
/// the single handover's object plus `service_id`), then a count line (not with `--json`).
pub async fn handover_many(ctx: &Ctx, services: &[String], from: Option<&str>, to: &str, wait: bool, as_json: bool) -> Result<Status, CliError> {
    mysqlleader::config::check_id("to_node", to).map_err(crate::errors::offline)?;
    if let Some(from) = from {
        mysqlleader::config::check_id("--from", from).map_err(crate::errors::offline)?;
    }
    with_db(ctx, async |db| {
        let started = Instant::now();
        let known = procedures::service_statuses(&db.pool, None).await.map_err(|e| db.explain(e))?;
        let targets: Vec<String> = match from {
            Some(node) => known.iter().filter(|s| s.leader_id.as_deref() == Some(node)).map(|s| s.service_id.clone()).collect(),
            None => {
                let mut seen = HashSet::new();
                let list: Vec<String> = services.iter().filter(|s| seen.insert(s.as_str())).cloned().collect();
                let names: HashSet<&str> = known.iter().map(|s| s.service_id.as_str()).collect();
                let unknown: Vec<&str> = list.iter().map(String::as_str).filter(|s| !names.contains(s)).collect();
                if !unknown.is_empty() {
                    return Err(changed_nothing(unknown_services(db, &known, &unknown)));
                }
                list
            }
        };
        if targets.is_empty() {
            if !as_json {
                say!("{} leads no service now: nothing to hand over", from.unwrap_or_default());
            }
            return Ok(0);
        }

        // 2. One call per chunk; what a call left out goes again while calls make progress.
        let mut done: BTreeMap<String, SeatHandover> = BTreeMap::new();
        for chunk in targets.chunks(CHUNK) {
            let mut pending: Vec<&str> = chunk.iter().map(String::as_str).collect();
            while !pending.is_empty() {
                let answer = procedures::retry_conflicts(|| procedures::handover_seats(&db.pool, &pending, to)).await.map_err(|e| {
                    let e = db.explain(e);
                    if done.is_empty() {
                        e
                    } else {
                        CliError::new(format!(
                            "{e}; the {} services handed over before it stay handed over (run the command again for the rest)",
                            done.len()
                        ))
                    }
                })?;
                if answer.is_empty() {
                    break;
                }
                for seat in answer {
                    done.insert(seat.service_id.clone(), seat);
                }
                pending.retain(|s| !done.contains_key(*s));
            }
        }
        let missed: Vec<&str> = targets.iter().map(String::as_str).filter(|s| !done.contains_key(*s)).collect();

        // 3. --wait: the handed-over seats until NODE leads each, or its reservation is gone.
        let mut took: HashMap<String, Duration> = HashMap::new();
        let mut lapsed: Vec<String> = Vec::new();
        if wait {
            for (service, seat) in &done {
                if seat.is_leader {
                    took.insert(service.clone(), started.elapsed());
                }
            }
            let mut waiting: Vec<String> = done.iter().filter(|(_, s)| !s.is_leader).map(|(id, _)| id.clone()).collect();
            while !waiting.is_empty() {
                let now = procedures::service_statuses(&db.pool, None).await.map_err(|e| db.explain(e))?;
                let by_id: HashMap<&str, &procedures::ServiceStatus> = now.iter().map(|s| (s.service_id.as_str(), s)).collect();
                waiting.retain(|service| {
                    let seat = by_id.get(service.as_str());
                    let leads = seat.is_some_and(|s| s.leader_id.as_deref() == Some(to));
                    let reserved = seat.is_some_and(|s| s.handover.as_ref().is_some_and(|h| h.to_node == to));
                    if !leads && reserved {
                        return true;
                    }
                    // `waiting` holds only keys of `done`, which nothing removes.
                    if let Some(entry) = done.get_mut(service) {
                        match seat {
                            Some(s) => {
                                *entry = SeatHandover {
                                    service_id: service.clone(),
                                    is_leader: leads,
                                    leader_id: s.leader_id.clone(),
                                    term: s.term,
                                    lease_remaining: s.lease_remaining,
                                }
                            }
                            None => entry.is_leader = false,
                        }
                    }
                    if leads {
                        took.insert(service.clone(), started.elapsed());
                    } else {
                        lapsed.push(service.clone());
                    }
                    false
                });
                if !waiting.is_empty() {
                    tokio::time::sleep(WAIT_POLL_MANY).await;
                }
            }
        }

        // Output: one line (or object) per seat, in service order.
        let (mut already, mut reserved) = (0, 0);
        for (service, seat) in &done {
            if as_json {
                let mut value = json!({
                    "service_id": service,
                    "is_leader": flag(seat.is_leader),
                    "leader_id": seat.leader_id,
                    "term": seat.term,
                    "lease_remaining_ms": seat.lease_remaining.as_millis() as u64,
                });
                if wait {
                    value["waited_ms"] = json!(took.get(service).copied().unwrap_or_else(|| started.elapsed()).as_millis() as u64);
                }
                print_json(&value);
                continue;
            }
            match (seat.is_leader, took.get(service)) {
                (true, Some(after)) if wait => say!("{to} leads {service} at term {} (after {})", seat.term, human(*after)),
                (true, _) => {
                    already += 1;
                    say!("{to} leads {service} already (term {}): nothing to hand over", seat.term)
                }
                (false, _) if wait => {}
                (false, _) => {
                    reserved += 1;
                    say!("term {} of {service} ended; the seat is reserved for {to}", seat.term)
                }
            }
        }
        if !as_json {
            if wait {
                say!(
                    "{to} leads {} of {} services (took {})",
                    took.len(),
                    targets.len(),
                    human(started.elapsed())
                );
            } else {
                say!(
                    "{} of {} services handed over to {to} ({reserved} reserved for it, {already} led by it already); \
                     each old leader steps down at its next renew, and {to} takes the seat at its next campaign",
                    done.len(),
                    targets.len()
                );
            }
        }
        if !lapsed.is_empty() {
            eprintln!(
                "mysqlleader: the handover to {to} lapsed for {} of {} services: {} ({to} did not take them while they were \
                 reserved for it: is it running and campaigning?)",
                lapsed.len(),
                targets.len(),
                quoted(lapsed.iter().map(String::as_str))
            );
        }
        if !missed.is_empty() {
            return Err(CliError::new(format!(
                "{} of {} services could not be handed over (another transaction, such as an application's fenced one, held \
                 their seats past the wait's bound): {}; they are unchanged: run the command again for them",
                missed.len(),
                targets.len(),
                quoted(missed.iter().copied())
            )));
        }
        Ok(if lapsed.is_empty() { 0 } else { LAPSED })
    })
    .await
}

/// `'a', 'b', 'c'`.
fn quoted<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")
}

/// The refusal of a list that names services no node has ever led (as [`unknown_service`]
/// says it of one), with the known ones as a hint.
fn unknown_services(db: &Db, known: &[procedures::ServiceStatus], unknown: &[&str]) -> CliError {
    let database = db.target.database.as_deref().unwrap_or("");
    let mut names: Vec<String> = known.iter().take(10).map(|s| format!("'{}'", s.service_id)).collect();
    if known.len() > 10 {
        names.push("...".into());
    }
    let hint = if names.is_empty() {
        format!("no service has campaigned in database '{database}' yet")
    } else {
        format!("known services: {}", names.join(", "))
    };
    let (what, them) = if unknown.len() == 1 { ("unknown service", "it") } else { ("unknown services", "them") };
    CliError::new(format!(
        "{what} {}: no node has ever led {them} in database '{database}' ({hint}); check the names",
        quoted(unknown.iter().copied())
    ))
}
