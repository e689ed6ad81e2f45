//! One-shot calls of the election procedures on a client: each runs one `CALL` on a pooled
//! connection (its own transaction), bounded by the client's request timeout, and writes the
//! procedure's one row to a struct out-parameter, only on success.
//!
//! Ids are checked before any round trip (UTF-8, 1 to 128 characters), and so is a lease
//! (1 to 86,400,000 ms); everything else is decided by the procedures.

use std::ffi::c_char;

use super::client::mysqlleader_client;
use super::result::{boundary, mysqlleader_result};
use super::strings::{arg_id, arg_lease_ms, arg_out, arg_ref, id_field, ms, write_out};
use super::MYSQLLEADER_ID_BUFFER_SIZE;
use crate::procedures;

/// The row of `campaign` and `force_leader`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mysqlleader_campaign_result {
    /// Whether the caller holds the seat after the call.
    pub is_leader: bool,
    /// The node holding a valid lease (the caller when `is_leader`), NUL-terminated; "" when
    /// nobody does.
    pub leader_id: [c_char; MYSQLLEADER_ID_BUFFER_SIZE],
    /// The fencing token of the service.
    pub term: u64,
    /// Milliseconds left on the current leader's lease, by the database's clock; 0 when nobody
    /// leads.
    pub lease_remaining_ms: u64,
}

/// The row of `am_i_leader` and `assert_leader`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mysqlleader_leader_check {
    /// Whether the node holds a valid lease (always true after a successful `assert_leader`).
    pub is_leader: bool,
    /// The current term, or the last term there was when nobody leads.
    pub term: u64,
    /// Milliseconds left on the current leader's lease; 0 when nobody leads.
    pub lease_remaining_ms: u64,
}

/// The row of `current_leader`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mysqlleader_current_leader_result {
    /// The node holding a valid lease, NUL-terminated; "" when the seat is vacant or the lease
    /// has expired.
    pub leader_id: [c_char; MYSQLLEADER_ID_BUFFER_SIZE],
    /// The current term, or the last term there was.
    pub term: u64,
    /// Milliseconds left on the lease; 0 when nobody leads.
    pub lease_remaining_ms: u64,
}

/// The row of `reelect`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mysqlleader_reelect_result {
    /// The node whose valid lease was ended, NUL-terminated; "" when nobody led.
    pub previous_leader_id: [c_char; MYSQLLEADER_ID_BUFFER_SIZE],
    /// The term of the service (unchanged by `reelect`).
    pub term: u64,
}

/// The row of `resign`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mysqlleader_resign_result {
    /// Whether the node led and its lease has been ended.
    pub resigned: bool,
    /// The term of the service.
    pub term: u64,
}

pub(crate) fn leader_check(c: &procedures::LeaderCheck) -> mysqlleader_leader_check {
    mysqlleader_leader_check { is_leader: c.is_leader, term: c.term, lease_remaining_ms: ms(c.lease_remaining) }
}

fn campaign_result(c: &procedures::Campaign) -> super::result::FfiResult<mysqlleader_campaign_result> {
    Ok(mysqlleader_campaign_result {
        is_leader: c.is_leader,
        leader_id: id_field(c.leader_id.as_deref())?,
        term: c.term,
        lease_remaining_ms: ms(c.lease_remaining),
    })
}

/// `CALL campaign(service_id, node_id, lease_ms)`: takes the seat when it is vacant or its
/// lease has expired (a new term), renews the lease when `node_id` already holds it (same
/// term), and otherwise changes nothing. `*result_out` tells who leads now.
///
/// Errors: `MYSQLLEADER_NULL_ARGUMENT`, `MYSQLLEADER_INVALID_UTF8`, `MYSQLLEADER_INVALID_ARGUMENT`
/// (ids, `lease_ms`), `MYSQLLEADER_CONNECTION`, `MYSQLLEADER_NOT_MIGRATED`, `MYSQLLEADER_SERVER`.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_campaign(
    client: *const mysqlleader_client,
    service_id: *const c_char,
    node_id: *const c_char,
    lease_ms: u64,
    result_out: *mut mysqlleader_campaign_result,
) -> mysqlleader_result {
    boundary(|| {
        // SAFETY (every unsafe block of this module): pointers follow the conventions.
        let client = unsafe { arg_ref(client, "client") }?;
        let result_out = arg_out(result_out, "result_out")?;
        let service_id = unsafe { arg_id(service_id, "service_id") }?;
        let node_id = unsafe { arg_id(node_id, "node_id") }?;
        let lease = arg_lease_ms(lease_ms, "lease_ms")?;
        let inner = &client.inner;
        let c = inner.block_on(procedures::retry_conflicts(|| procedures::campaign(&inner.pool, service_id, node_id, lease)))?;
        let result = campaign_result(&c)?;
        unsafe { write_out(result_out, result) };
        Ok(())
    })
}

/// `CALL am_i_leader(service_id, node_id)`: a read; whether `node_id` holds a valid lease.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_am_i_leader(
    client: *const mysqlleader_client,
    service_id: *const c_char,
    node_id: *const c_char,
    result_out: *mut mysqlleader_leader_check,
) -> mysqlleader_result {
    boundary(|| {
        let client = unsafe { arg_ref(client, "client") }?;
        let result_out = arg_out(result_out, "result_out")?;
        let service_id = unsafe { arg_id(service_id, "service_id") }?;
        let node_id = unsafe { arg_id(node_id, "node_id") }?;
        let inner = &client.inner;
        let c = inner.block_on(procedures::am_i_leader(&inner.pool, service_id, node_id))?;
        unsafe { write_out(result_out, leader_check(&c)) };
        Ok(())
    })
}

/// `CALL current_leader(service_id)`: a read; who leads the service now.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_current_leader(
    client: *const mysqlleader_client,
    service_id: *const c_char,
    result_out: *mut mysqlleader_current_leader_result,
) -> mysqlleader_result {
    boundary(|| {
        let client = unsafe { arg_ref(client, "client") }?;
        let result_out = arg_out(result_out, "result_out")?;
        let service_id = unsafe { arg_id(service_id, "service_id") }?;
        let inner = &client.inner;
        let c = inner.block_on(procedures::current_leader(&inner.pool, service_id))?;
        let result = mysqlleader_current_leader_result {
            leader_id: id_field(c.leader_id.as_deref())?,
            term: c.term,
            lease_remaining_ms: ms(c.lease_remaining),
        };
        unsafe { write_out(result_out, result) };
        Ok(())
    })
}

/// `CALL force_leader(service_id, node_id, lease_ms)`: installs `node_id` at once with a new
/// term; the displaced leader's term ends `forced_out`. An operator's tool.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_force_leader(
    client: *const mysqlleader_client,
    service_id: *const c_char,
    node_id: *const c_char,
    lease_ms: u64,
    result_out: *mut mysqlleader_campaign_result,
) -> mysqlleader_result {
    boundary(|| {
        let client = unsafe { arg_ref(client, "client") }?;
        let result_out = arg_out(result_out, "result_out")?;
        let service_id = unsafe { arg_id(service_id, "service_id") }?;
        let node_id = unsafe { arg_id(node_id, "node_id") }?;
        let lease = arg_lease_ms(lease_ms, "lease_ms")?;
        let inner = &client.inner;
        let c = inner.block_on(procedures::retry_conflicts(|| procedures::force_leader(&inner.pool, service_id, node_id, lease)))?;
        let result = campaign_result(&c)?;
        unsafe { write_out(result_out, result) };
        Ok(())
    })
}

/// `CALL reelect(service_id)`: ends the current lease now (the term ends `reelected`); the next
/// campaign of any node wins.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_reelect(
    client: *const mysqlleader_client,
    service_id: *const c_char,
    result_out: *mut mysqlleader_reelect_result,
) -> mysqlleader_result {
    boundary(|| {
        let client = unsafe { arg_ref(client, "client") }?;
        let result_out = arg_out(result_out, "result_out")?;
        let service_id = unsafe { arg_id(service_id, "service_id") }?;
        let inner = &client.inner;
        let r = inner.block_on(procedures::retry_conflicts(|| procedures::reelect(&inner.pool, service_id)))?;
        let result = mysqlleader_reelect_result { previous_leader_id: id_field(r.previous_leader_id.as_deref())?, term: r.term };
        unsafe { write_out(result_out, result) };
        Ok(())
    })
}

/// `CALL resign(service_id, node_id)`: ends `node_id`'s lease now if and only if it is the
/// current leader (`resigned` tells whether it was).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_resign(
    client: *const mysqlleader_client,
    service_id: *const c_char,
    node_id: *const c_char,
    result_out: *mut mysqlleader_resign_result,
) -> mysqlleader_result {
    boundary(|| {
        let client = unsafe { arg_ref(client, "client") }?;
        let result_out = arg_out(result_out, "result_out")?;
        let service_id = unsafe { arg_id(service_id, "service_id") }?;
        let node_id = unsafe { arg_id(node_id, "node_id") }?;
        let inner = &client.inner;
        let r = inner.block_on(procedures::retry_conflicts(|| procedures::resign(&inner.pool, service_id, node_id)))?;
        unsafe { write_out(result_out, mysqlleader_resign_result { resigned: r.resigned, term: r.term }) };
        Ok(())
    })
}

/// `CALL handover(service_id, to_node)` (operator role): ends the current term now (it ends
/// `handed_over`), vacates the seat and reserves it for `to_node` for one lease, so that only
/// `to_node` may begin the next term, at its next campaign. Nothing changes when `to_node` leads
/// already. `*result_out` is the seat after the call, seen from `to_node` (`is_leader`: it leads).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_handover(
    client: *const mysqlleader_client,
    service_id: *const c_char,
    to_node: *const c_char,
    result_out: *mut mysqlleader_campaign_result,
) -> mysqlleader_result {
    boundary(|| {
        let client = unsafe { arg_ref(client, "client") }?;
        let result_out = arg_out(result_out, "result_out")?;
        let service_id = unsafe { arg_id(service_id, "service_id") }?;
        let to_node = unsafe { arg_id(to_node, "to_node") }?;
        let inner = &client.inner;
        let c = inner.block_on(procedures::retry_conflicts(|| procedures::handover(&inner.pool, service_id, to_node)))?;
        let result = campaign_result(&c)?;
        unsafe { write_out(result_out, result) };
        Ok(())
    })
}

/// `CALL assert_leader(service_id, node_id, term)` as a one-shot check, in a transaction of its
/// own that ends at once: `MYSQLLEADER_OK` only when `node_id` holds a valid lease at exactly
/// `term`, else `MYSQLLEADER_NOT_LEADER`.
///
/// On its own this is only a check: the row lock it takes ends with the call. To fence writes,
/// run it inside the transaction of those writes — `mysqlleader_txn_assert_leader` or
/// `mysqlleader_elector_txn_begin` (see docs/c-api.md, "Fencing").
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_assert_leader(
    client: *const mysqlleader_client,
    service_id: *const c_char,
    node_id: *const c_char,
    term: u64,
    result_out: *mut mysqlleader_leader_check,
) -> mysqlleader_result {
    boundary(|| {
        let client = unsafe { arg_ref(client, "client") }?;
        let result_out = arg_out(result_out, "result_out")?;
        let service_id = unsafe { arg_id(service_id, "service_id") }?;
        let node_id = unsafe { arg_id(node_id, "node_id") }?;
        let inner = &client.inner;
        let c = inner.block_on(procedures::check_leader_at(&inner.pool, service_id, node_id, term))?;
        unsafe { write_out(result_out, leader_check(&c)) };
        Ok(())
    })
}

/// `CALL set_expiry_event(enabled)`: switches the optional event that ends expired terms in
/// the table; `*enabled_out` receives whether it is enabled now.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_set_expiry_event(
    client: *const mysqlleader_client,
    enabled: bool,
    enabled_out: *mut bool,
) -> mysqlleader_result {
    boundary(|| {
        let client = unsafe { arg_ref(client, "client") }?;
        let enabled_out = arg_out(enabled_out, "enabled_out")?;
        let inner = &client.inner;
        let now = inner.block_on(procedures::set_expiry_event(&inner.pool, enabled))?;
        unsafe { write_out(enabled_out, now) };
        Ok(())
    })
}
