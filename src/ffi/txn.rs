//! `mysqlleader_txn`: a transaction on one pooled connection of a client, for writes that must
//! be fenced with `assert_leader`: the C shell of [`crate::FencedTransaction`], which keeps the
//! recipe's rules (spent on any failure, one statement at a time, fenced again before COMMIT,
//! steps bounded by the lease, the elector told of a refusal; see [`crate::fenced`]).
//!
//! What this shell adds: C arguments (a bad one spends the transaction too), each call run to
//! completion on the calling thread, and `MYSQLLEADER_INVALID_STATE` for a spent or ended
//! transaction.

use std::ffi::{c_char, CStr};
use std::sync::Arc;

use mysql_async::{Params, Row, Value};

use super::calls::{leader_check, mysqlleader_leader_check};
use super::client::{mysqlleader_client, ClientInner};
use super::rows::mysqlleader_rows;
use super::result::{boundary, boundary_void, mysqlleader_result, FfiResult, Failure};
use super::runtime::block_on;
use super::strings::{arg_id, arg_out, arg_str, write_out};
use crate::fenced::{FencedTransaction, Outcome};

/// A transaction on one connection, begun by `mysqlleader_txn_begin` (or, fenced already,
/// by `mysqlleader_elector_txn_begin`) and released by `mysqlleader_txn_free`, which rolls back
/// what was not committed. Use it from one thread at a time.
pub struct mysqlleader_txn {
    /// Keeps the pool open while the transaction lives.
    _client: Arc<ClientInner>,
    core: FencedTransaction<'static>,
}

impl mysqlleader_txn {
    /// Begins a transaction on a connection of `client`.
    pub(crate) fn begin(client: &Arc<ClientInner>) -> FfiResult<Box<mysqlleader_txn>> {
        let core = block_on(FencedTransaction::begin(&client.pool, client.request_timeout()))?;
        Ok(Box::new(mysqlleader_txn { _client: client.clone(), core }))
    }

    /// Wraps an elector's fenced transaction ([`crate::Elector::fenced`]).
    pub(crate) fn adopt(client: &Arc<ClientInner>, core: FencedTransaction<'static>) -> Box<mysqlleader_txn> {
        Box::new(mysqlleader_txn { _client: client.clone(), core })
    }

    /// `MYSQLLEADER_INVALID_STATE` saying why, once the transaction is spent or has ended.
    fn usable(&self) -> FfiResult {
        match self.core.unusable() {
            Some(why) => Err(Failure::state(why)),
            None => Ok(()),
        }
    }

    /// Runs a whole exported call on this transaction; any failure (a bad argument included)
    /// spends it.
    /// Arguments are checked before the state, as before anything is sent.
    fn spend_on_failure<T>(&mut self, what: &str, call: impl FnOnce(&mut Self) -> FfiResult<T>) -> FfiResult<T> {
        let result = call(self);
        if let Err(failure) = &result {
            if failure.code != mysqlleader_result::MYSQLLEADER_INVALID_STATE {
                self.core.spend(what, &failure.message);
            }
        }
        result
    }

    /// Runs one statement of `mysqlleader_txn_execute` or `mysqlleader_txn_query`.
    unsafe fn statement(
        &mut self,
        sql: *const c_char,
        params: *const *const c_char,
        param_lengths: *const usize,
        param_count: usize,
        keep_rows: bool,
    ) -> FfiResult<Outcome> {
        let sql = unsafe { arg_str(sql, "sql") }?;
        // One statement, not one that ends the transaction: checked before the parameters are
        // read, as before anything is sent.
        crate::statement::check_transaction_statement("sql", sql, self.core.term().is_some())?;
        let values = unsafe { arg_params(params, param_lengths, param_count) }?;
        let params = if values.is_empty() { Params::Empty } else { Params::Positional(values) };
        self.usable()?;
        let core = &mut self.core;
        Ok(block_on(async move {
            if keep_rows { core.query(sql, params).await } else { core.exec(sql, params).await }
        })?)
    }
}

/// The statement parameters: `param_count` pointers, each NULL (SQL NULL) or, with
/// `param_lengths` NULL, a NUL-terminated string, otherwise `param_lengths[i]` bytes.
unsafe fn arg_params(params: *const *const c_char, param_lengths: *const usize, param_count: usize) -> FfiResult<Vec<Value>> {
    if param_count == 0 {
        return Ok(Vec::new());
    }
    if params.is_null() {
        return Err(Failure::null("params"));
    }
    Ok((0..param_count)
        .map(|i| {
            // SAFETY: params holds param_count pointers, each NULL or to a C string or, with
            // param_lengths, to param_lengths[i] readable bytes (the conventions).
            let p = unsafe { *params.add(i) };
            if p.is_null() {
                Value::NULL
            } else if param_lengths.is_null() {
                Value::Bytes(unsafe { CStr::from_ptr(p) }.to_bytes().to_vec())
            } else {
                let len = unsafe { *param_lengths.add(i) };
                Value::Bytes(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }.to_vec())
            }
        })
        .collect())
}

impl Drop for mysqlleader_txn {
    fn drop(&mut self) {
        // Rolled back inside the runtime (bounded by the request timeout): the connection goes
        // back to the pool there. `_client` is dropped after this, so the pool outlives it.
        let _ = block_on(self.core.rollback());
    }
}

/// Begins a transaction on a connection of `client` (`START TRANSACTION`), bounded by the
/// client's request timeout. For fenced writes, call `mysqlleader_txn_assert_leader` next.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_txn_begin(client: *const mysqlleader_client, txn_out: *mut *mut mysqlleader_txn) -> mysqlleader_result {
    boundary(|| {
        // SAFETY (every unsafe block of this module): pointers follow the conventions.
        let client = unsafe { super::strings::arg_ref(client, "client") }?;
        let txn_out = arg_out(txn_out, "txn_out")?;
        let txn = mysqlleader_txn::begin(&client.inner)?;
        unsafe { write_out(txn_out, Box::into_raw(txn)) };
        Ok(())
    })
}

/// `CALL assert_leader(service_id, node_id, term)` inside the transaction: the fencing guard.
/// `MYSQLLEADER_OK` when `node_id` holds a valid lease at exactly `term`; the election row then
/// stays share-locked until the transaction ends, so no takeover can commit before your
/// writes do. `MYSQLLEADER_NOT_LEADER` otherwise: the server has rolled the transaction back.
/// After any failure (a bad argument included) the handle accepts only `_rollback` and `_free`,
/// so a program that misses an error cannot go on writing unfenced. `*check_out` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_txn_assert_leader(
    txn: *mut mysqlleader_txn,
    service_id: *const c_char,
    node_id: *const c_char,
    term: u64,
    check_out: *mut mysqlleader_leader_check,
) -> mysqlleader_result {
    boundary(|| {
        let txn = unsafe { txn.as_mut() }.ok_or_else(|| Failure::null("txn"))?;
        txn.spend_on_failure("assert_leader", |txn| {
            let service_id = unsafe { arg_id(service_id, "service_id") }?;
            let node_id = unsafe { arg_id(node_id, "node_id") }?;
            txn.usable()?;
            let core = &mut txn.core;
            let check = block_on(core.assert_leader(service_id, node_id, term))?;
            unsafe { write_out(check_out, leader_check(&check)) };
            Ok(())
        })
    })
}

/// Runs one SQL statement in the transaction; rows it returns are discarded (use it for
/// `INSERT`, `UPDATE`, `DELETE`, ...). `*affected_rows_out` (may be NULL) receives the rows
/// the statement changed; `mysqlleader_txn_last_insert_id` gives the id it generated. To read
/// rows, or to pass binary parameters (NUL bytes included), use `mysqlleader_txn_query`.
///
/// `sql` must be exactly one statement (a trailing `;` is fine), and not one that ends the
/// transaction: text with several statements, `COMMIT`, `ROLLBACK`, `START TRANSACTION`,
/// `BEGIN`, `SET autocommit` and `XA` are refused with `MYSQLLEADER_USAGE` (parameter `sql`)
/// before anything is sent, in any transaction of the library; in a fenced one (once
/// `assert_leader` succeeded in it) also DDL and the other statements that commit implicitly
/// (`CREATE`/`DROP` other than `TEMPORARY`, `ALTER`, `TRUNCATE`, `LOCK TABLES`, ...): otherwise
/// what follows them would run outside the transaction and its fence.
///
/// A refused statement spends the transaction like any failure; nothing of it commits, the
/// writes before it included. What that check cannot see (a statement that ends the
/// transaction inside a procedure it calls, say) the library still notices afterwards in a
/// fenced transaction (MariaDB: `@@in_transaction`, one more round trip per statement) and
/// fails that statement with `MYSQLLEADER_USAGE`, spending the transaction: nothing after that
/// point commits. (The writes made before it were then committed by the server, under the
/// fence.)
///
/// With `param_count` > 0 the statement is prepared and `params[i]` binds to the i-th `?`: a
/// NUL-terminated string (the server converts it to the column's type), or NULL for SQL NULL.
/// Always pass values as parameters, never by formatting them into `sql`. `params` may be
/// NULL when `param_count` is 0; the statement then runs as plain text.
///
/// Any failure, a bad argument included, spends the transaction: only `_rollback` and `_free`
/// are accepted afterwards.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_txn_execute(
    txn: *mut mysqlleader_txn,
    sql: *const c_char,
    params: *const *const c_char,
    param_count: usize,
    affected_rows_out: *mut u64,
) -> mysqlleader_result {
    boundary(|| {
        let txn = unsafe { txn.as_mut() }.ok_or_else(|| Failure::null("txn"))?;
        txn.spend_on_failure("a statement", |txn| {
            let outcome = unsafe { txn.statement(sql, params, std::ptr::null(), param_count, false) }?;
            unsafe { write_out(affected_rows_out, outcome.affected_rows) };
            Ok(())
        })
    })
}

/// Runs one SQL statement in the transaction and returns what it gave: its rows (a `SELECT`,
/// `SELECT ... FOR UPDATE`, `SHOW`, ...), the rows it changed and the `AUTO_INCREMENT` id it
/// generated, in a `mysqlleader_rows` written to `*rows_out` (read it with the
/// `mysqlleader_rows_*` functions; release it with `mysqlleader_rows_free`, also after the
/// transaction has ended). Only the first result set is kept (a `CALL` may return more: the
/// rest are read and discarded).
///
/// Every rule of `mysqlleader_txn_execute` holds: exactly one statement, none that ends the
/// transaction (refused with `MYSQLLEADER_USAGE`, parameter `sql`, before anything is sent),
/// the same checks in a fenced transaction, and any failure, a bad argument included, spends the
/// transaction.
///
/// Parameters: with `param_count` > 0 the statement is prepared and `params[i]` binds to the
/// i-th `?`; NULL for SQL NULL. With `param_lengths` NULL every non-NULL `params[i]` is a
/// NUL-terminated string. With `param_lengths` given, `params[i]` points to
/// `param_lengths[i]` bytes, any bytes, NUL included (binary data for a `VARBINARY` or `BLOB`
/// column, say); a non-NULL pointer with length 0 is the empty string. The server converts the
/// bytes to the column's type (`'2024-05-01 12:00:00.5'` to a `DATETIME`, `'12.50'` to a
/// `DECIMAL`). `params` and `param_lengths` may be NULL when `param_count` is 0; the statement
/// then runs as plain text.
///
/// Values come back as the text protocol sends them, converted to bytes: numbers as their
/// decimal text, `DATETIME`/`TIMESTAMP` as `YYYY-MM-DD HH:MM:SS[.ffffff]` (as many fractional
/// digits as the column declares), `DATE` as `YYYY-MM-DD`, `TIME` as `[-]HH:MM:SS[.ffffff]`,
/// strings and binary data as they are; SQL NULL apart from the empty string
/// (`mysqlleader_rows_value`). `mysqlleader_rows_column_kind` tells what each column holds.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_txn_query(
    txn: *mut mysqlleader_txn,
    sql: *const c_char,
    params: *const *const c_char,
    param_lengths: *const usize,
    param_count: usize,
    rows_out: *mut *mut mysqlleader_rows,
) -> mysqlleader_result {
    boundary(|| {
        let txn = unsafe { txn.as_mut() }.ok_or_else(|| Failure::null("txn"))?;
        txn.spend_on_failure("a statement", |txn| {
            let rows_out = arg_out(rows_out, "rows_out")?;
            let outcome = unsafe { txn.statement(sql, params, param_lengths, param_count, true) }?;
            let values = outcome.rows.into_iter().map(Row::unwrap).collect();
            let rows = mysqlleader_rows::new(&outcome.columns, values, outcome.affected_rows, outcome.last_insert_id);
            unsafe { write_out(rows_out, Box::into_raw(Box::new(rows))) };
            Ok(())
        })
    })
}

/// The `AUTO_INCREMENT` id generated by the last statement that succeeded in the transaction
/// (`mysqlleader_txn_execute` or `mysqlleader_txn_query`; the first id, for an `INSERT` of
/// several rows), or 0 when it generated none or no statement has run. Readable in any state,
/// also after the transaction has failed or ended.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_txn_last_insert_id(txn: *const mysqlleader_txn, last_insert_id_out: *mut u64) -> mysqlleader_result {
    boundary(|| {
        let txn = unsafe { super::strings::arg_ref(txn, "txn") }?;
        let out = arg_out(last_insert_id_out, "last_insert_id_out")?;
        unsafe { write_out(out, txn.core.last_insert_id()) };
        Ok(())
    })
}

/// Commits the transaction. On `MYSQLLEADER_OK` every statement took effect; on any error
/// none did (a commit that fails with `MYSQLLEADER_CONNECTION` has an unknown outcome, as
/// always with a lost connection). Either way the transaction has ended; free the handle.
/// In a fenced transaction `assert_leader` runs once more first, with the last fence's
/// arguments (so a `ROLLBACK TO SAVEPOINT` sent as SQL cannot drop the fence unnoticed):
/// `MYSQLLEADER_NOT_LEADER` when the node no longer leads at that term, and nothing commits.
/// `MYSQLLEADER_INVALID_STATE` when an earlier call failed: roll back instead.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_txn_commit(txn: *mut mysqlleader_txn) -> mysqlleader_result {
    boundary(|| {
        let txn = unsafe { txn.as_mut() }.ok_or_else(|| Failure::null("txn"))?;
        txn.usable()?;
        // A fenced transaction is fenced again right before its COMMIT (one round trip): the
        // share lock then holds to the commit, whatever happened to it meanwhile. A refusal
        // rolls the transaction back (the procedure does) and is the commit's error.
        Ok(block_on(txn.core.commit())?)
    })
}

/// Rolls the transaction back. Always allowed, also after a failure or when it has ended
/// (then it does nothing).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_txn_rollback(txn: *mut mysqlleader_txn) -> mysqlleader_result {
    boundary(|| {
        let txn = unsafe { txn.as_mut() }.ok_or_else(|| Failure::null("txn"))?;
        Ok(block_on(txn.core.rollback())?)
    })
}

/// Releases the handle; a transaction still open is rolled back first (bounded by the
/// request timeout). `mysqlleader_txn_free(NULL)` does nothing.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_txn_free(txn: *mut mysqlleader_txn) {
    if txn.is_null() {
        return;
    }
    boundary_void(|| {
        // SAFETY: `txn` came from a _begin function and is freed once (the conventions).
        drop(unsafe { Box::from_raw(txn) });
    });
}
