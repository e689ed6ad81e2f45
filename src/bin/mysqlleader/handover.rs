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

use std::time::Duration;

use mysqlleader::procedures::{self, Campaign};
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
