//! `mysqlleader_txn`: a transaction on one pooled connection of a client, for writes that must
//! be fenced with `assert_leader`.
//!
//! The fencing recipe (docs/c-api.md, "Fencing"): begin, `assert_leader` with the term the
//! node leads at, the writes, commit. `assert_leader` share-locks the term (its history row, not the seat) until the
//! transaction ends, so no takeover can commit in between; when the node no longer leads at
//! that term, it fails with `MYSQLLEADER_NOT_LEADER` and the server has already rolled the
//! whole transaction back.
//!
//! Safety rule: after *any* failed `assert_leader` or `execute` — a bad argument included —
//! the transaction is spent: `execute` and `commit` return `MYSQLLEADER_INVALID_STATE` until it
//! is rolled back or freed. Without this rule a program that ignored a `NOT_LEADER` would go on
//! writing outside any transaction (autocommit), unfenced.

use std::ffi::{c_char, CStr};
use std::sync::Arc;
use std::time::Duration;

use mysql_async::prelude::{Protocol, Queryable};
use mysql_async::{Column, Params, QueryResult, Row, Transaction, TxOpts, Value};

use super::calls::{leader_check, mysqlleader_leader_check};
use super::client::{mysqlleader_client, ClientInner};
use super::rows::mysqlleader_rows;
use super::result::{boundary, boundary_void, mysqlleader_result, FfiResult, Failure};
use super::runtime::{block_on_timeout, drop_in_runtime};
use super::strings::{arg_id, arg_out, arg_str, write_out};
use crate::error::Error;
use crate::procedures;

/// A transaction on one connection, begun by `mysqlleader_txn_begin` (or, fenced already,
/// by `mysqlleader_elector_txn_begin`) and released by `mysqlleader_txn_free`, which rolls back
/// what was not committed. Use it from one thread at a time.
pub struct mysqlleader_txn {
    /// Keeps the pool open while the transaction lives.
    _client: Arc<ClientInner>,
    timeout: Duration,
    /// The open transaction; `None` once committed, rolled back, or lost with its connection.
    tx: Option<Transaction<'static>>,
    /// Why no more statements may run, once that is so.
    spent: Option<String>,
    /// Whether `assert_leader` succeeded in it: from then on, a statement that ends the
    /// transaction early fails it (see `still_open`).
    fenced: bool,
    /// For an elector's fenced transaction: the local deadline of the leadership it was begun
    /// under. Every step waits at most until then (and the request timeout).
    lease_deadline: Option<tokio::time::Instant>,
    /// The last fence that succeeded in it (service, node, term): asserted once more right
    /// before COMMIT, so that a share lock dropped meanwhile (a `ROLLBACK TO SAVEPOINT` sent as
    /// SQL releases the locks taken after the savepoint) cannot let stale writes commit.
    fence: Option<(String, String, u64)>,
    /// The `AUTO_INCREMENT` id of the last statement that succeeded (0: none).
    last_insert_id: u64,
}

impl mysqlleader_txn {
    /// Begins a transaction on a connection of `client`.
    pub(crate) fn begin(client: &Arc<ClientInner>) -> FfiResult<Box<mysqlleader_txn>> {
        let timeout = client.request_timeout();
        let pool = client.pool.clone();
        let tx = block_on_timeout(timeout, async move {
            pool.start_transaction(TxOpts::default()).await.map_err(|e| Error::from_pool(&pool, e))
        })?;
        Ok(Box::new(mysqlleader_txn {
            _client: client.clone(),
            timeout,
            tx: Some(tx),
            spent: None,
            fenced: false,
            lease_deadline: None,
            fence: None,
            last_insert_id: 0,
        }))
    }

    /// Begins a transaction whose every step is bounded by `deadline` (the lease this node
    /// leads by) as well as by the client's request timeout.
    pub(crate) fn begin_until(client: &Arc<ClientInner>, deadline: tokio::time::Instant) -> FfiResult<Box<mysqlleader_txn>> {
        let timeout = client.request_timeout().min(deadline.saturating_duration_since(tokio::time::Instant::now()));
        let pool = client.pool.clone();
        let tx = block_on_timeout(timeout, async move {
            pool.start_transaction(TxOpts::default()).await.map_err(|e| Error::from_pool(&pool, e))
        })?;
        Ok(Box::new(mysqlleader_txn {
            _client: client.clone(),
            timeout: client.request_timeout(),
            tx: Some(tx),
            spent: None,
            fenced: false,
            lease_deadline: Some(deadline),
            fence: None,
            last_insert_id: 0,
        }))
    }

    /// The longest the next step may wait: the request timeout, and for an elector's fenced
    /// transaction no later than the end of the leadership it was begun under.
    fn step_limit(&self) -> Duration {
        match self.lease_deadline {
            Some(deadline) => self.timeout.min(deadline.saturating_duration_since(tokio::time::Instant::now())),
            None => self.timeout,
        }
    }

    /// The open transaction, or `MYSQLLEADER_INVALID_STATE` saying why there is none.
    fn open(&mut self) -> FfiResult<&mut Transaction<'static>> {
        if let Some(why) = &self.spent {
            return Err(Failure::state(format!("the transaction cannot be used any more: {why}")));
        }
        self.tx.as_mut().ok_or_else(|| Failure::state("the transaction has ended"))
    }

    /// Runs one step; any failure spends the transaction. After a timeout or a broken
    /// connection the connection is dropped (never reused; the server rolls back).
    fn step<T>(&mut self, what: &str, run: impl FnOnce(&mut Transaction<'static>, Duration) -> crate::Result<T>) -> FfiResult<T> {
        let timeout = self.step_limit();
        let tx = self.open()?;
        match run(tx, timeout) {
            Ok(value) => Ok(value),
            Err(error) => {
                self.spent = Some(format!("{what} failed ({error}); roll it back"));
                if matches!(error, Error::Connection { .. } | Error::Timeout { .. }) {
                    drop_in_runtime(self.tx.take());
                }
                Err(error.into())
            }
        }
    }

    /// Runs a whole exported call on this transaction; any failure spends it.
    fn spend_on_failure<T>(&mut self, what: &str, call: impl FnOnce(&mut Self) -> FfiResult<T>) -> FfiResult<T> {
        let result = call(self);
        if let Err(failure) = &result {
            if self.spent.is_none() && failure.code != mysqlleader_result::MYSQLLEADER_INVALID_STATE {
                self.spent = Some(format!("{what} failed ({}); roll it back", failure.message));
            }
        }
        result
    }

    /// `CALL assert_leader` inside this transaction.
    pub(crate) fn assert_leader(&mut self, service_id: &str, node_id: &str, term: u64) -> FfiResult<procedures::LeaderCheck> {
        let check = self.step("assert_leader", |tx, timeout| {
            block_on_timeout(timeout, procedures::assert_leader(tx, service_id, node_id, term))
        })?;
        self.fenced = true;
        self.fence = Some((service_id.to_string(), node_id.to_string(), term));
        Ok(check)
    }

    /// Runs one statement of `mysqlleader_txn_execute` or `mysqlleader_txn_query`: reads the
    /// arguments, checks the statement before anything is sent (one statement, none that ends
    /// the transaction; stricter once fenced), runs it as one step and, in a fenced
    /// transaction, checks that the server has not ended the transaction. `keep_rows` keeps
    /// the first result set's columns and rows; otherwise they are read and discarded.
    unsafe fn statement(
        &mut self,
        sql: *const c_char,
        params: *const *const c_char,
        param_lengths: *const usize,
        param_count: usize,
        keep_rows: bool,
    ) -> FfiResult<Outcome> {
        let sql = unsafe { arg_str(sql, "sql") }?;
        // One statement, not one that ends the transaction: before anything is sent.
        crate::statement::check_transaction_statement("sql", sql, self.fenced)?;
        let values = unsafe { arg_params(params, param_lengths, param_count) }?;
        let fenced = self.fenced;
        let outcome = self.step("a statement", |tx, timeout| {
            block_on_timeout(timeout, async move {
                let mut outcome = Outcome::default();
                if values.is_empty() {
                    let result = tx.query_iter(sql).await.map_err(Error::from_mysql)?;
                    (outcome.columns, outcome.rows) = read_result(result, keep_rows).await?;
                } else {
                    let result = tx.exec_iter(sql, Params::Positional(values)).await.map_err(Error::from_mysql)?;
                    (outcome.columns, outcome.rows) = read_result(result, keep_rows).await?;
                }
                outcome.affected_rows = tx.affected_rows();
                outcome.last_insert_id = tx.last_insert_id().unwrap_or(0);
                if fenced {
                    still_open(tx).await?;
                }
                Ok(outcome)
            })
        })?;
        self.last_insert_id = outcome.last_insert_id;
        Ok(outcome)
    }

    /// Rolls back (bounded by the timeout); without an open transaction there is nothing to do.
    fn rollback(&mut self) -> FfiResult {
        self.spent = None;
        match self.tx.take() {
            None => Ok(()),
            Some(tx) => Ok(block_on_timeout(self.timeout, async move { tx.rollback().await.map_err(Error::from_mysql) })?),
        }
    }
}

/// What one statement gave.
#[derive(Default)]
struct Outcome {
    columns: Vec<Column>,
    rows: Vec<Vec<Value>>,
    affected_rows: u64,
    last_insert_id: u64,
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

/// Reads a statement's whole result: the first result set's columns and rows when `keep_rows`
/// (none otherwise), and the rest (the further sets of a CALL) read and discarded.
async fn read_result<P: Protocol>(mut result: QueryResult<'_, '_, P>, keep_rows: bool) -> crate::Result<(Vec<Column>, Vec<Vec<Value>>)> {
    let mut kept = (Vec::new(), Vec::new());
    if keep_rows {
        kept.0 = result.columns().map(|c| c.to_vec()).unwrap_or_default();
        let rows: Vec<Row> = result.collect().await.map_err(Error::from_mysql)?;
        kept.1 = rows.into_iter().map(Row::unwrap).collect();
    }
    result.drop_result().await.map_err(Error::from_mysql)?;
    Ok(kept)
}

/// Fails when the server has ended the transaction behind the library's back: an implicit
/// commit (DDL such as CREATE/ALTER/DROP, LOCK TABLES, ...), or a COMMIT/ROLLBACK sent as SQL.
/// After that, statements would run in autocommit, outside the fence; so the statement that
/// ended it fails, and with it the transaction (every later statement and the commit are
/// refused). The server tells with `@@in_transaction` (MariaDB); where it cannot (MySQL: an
/// unknown variable), nothing is checked.
async fn still_open(tx: &mut Transaction<'static>) -> crate::Result<()> {
    match tx.query_first::<i64, _>("SELECT @@in_transaction").await {
        Ok(Some(0)) => Err(Error::usage(
            "the server ended this transaction early (an implicit commit: DDL, LOCK TABLES, or a COMMIT/ROLLBACK \
             sent as SQL): later statements would run outside the fence, so nothing more commits; roll back \
             and begin a new fenced transaction",
        )),
        Ok(_) => Ok(()),
        Err(mysql_async::Error::Server(e)) if e.code == 1193 => Ok(()),
        Err(e) => Err(Error::from_mysql(e)),
    }
}

impl Drop for mysqlleader_txn {
    fn drop(&mut self) {
        let _ = self.rollback();
        // The connection goes back to the pool in the runtime's context.
        drop_in_runtime(self.tx.take());
        // `_client` is dropped after this, so the pool outlives the connection.
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
            let check = txn.assert_leader(service_id, node_id, term)?;
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
            let rows = mysqlleader_rows::new(&outcome.columns, outcome.rows, outcome.affected_rows, outcome.last_insert_id);
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
        unsafe { write_out(out, txn.last_insert_id) };
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
        txn.open()?;
        // A fenced transaction is fenced again right before its COMMIT (one round trip): the
        // share lock then holds to the commit, whatever happened to it meanwhile. A refusal
        // rolls the transaction back (the procedure does) and is the commit's error.
        if let Some((service_id, node_id, term)) = txn.fence.clone() {
            txn.spend_on_failure("commit", |txn| txn.assert_leader(&service_id, &node_id, term).map(drop))?;
        }
        let tx = txn.tx.take().ok_or_else(|| Failure::state("the transaction has ended"))?;
        let limit = txn.step_limit();
        txn.spent = Some("it has been committed or rolled back".into());
        Ok(block_on_timeout(limit, async move { tx.commit().await.map_err(Error::from_mysql) })?)
    })
}

/// Rolls the transaction back. Always allowed, also after a failure or when it has ended
/// (then it does nothing).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_txn_rollback(txn: *mut mysqlleader_txn) -> mysqlleader_result {
    boundary(|| {
        let txn = unsafe { txn.as_mut() }.ok_or_else(|| Failure::null("txn"))?;
        let result = txn.rollback();
        txn.spent = Some("it has been committed or rolled back".into());
        result
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
