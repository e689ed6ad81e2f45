//! A fenced transaction: writes that commit only while a node leads at its term.
//!
//! The fencing recipe: begin, `assert_leader(service, node, term)`, the writes, commit.
//! `assert_leader` share-locks the term (its history row, never the seat, so the leader renews
//! meanwhile) until the transaction ends, so no takeover can commit in between; when the node no
//! longer leads at that term it fails with [`Error::NotLeader`] and the server has already
//! rolled the whole transaction back. [`FencedTransaction`] keeps that recipe's rules for every
//! language (the C ABI's `mysqlleader_txn` is a thin shell over it):
//!
//! 1. **Spent on failure.** After *any* failed step (a refused fence, a bad statement, a
//!    timeout) no statement and no commit runs any more, only [`FencedTransaction::rollback`]:
//!    a program that ignored a `NotLeader` would otherwise go on writing outside any
//!    transaction (autocommit), unfenced.
//! 2. **One statement at a time, none that ends the transaction**
//!    ([`crate::statement::check_transaction_statement`], before anything is sent; stricter
//!    once fenced), and in a fenced transaction a check afterwards that the server has not
//!    ended it behind the library's back (an implicit commit: MariaDB's `@@in_transaction`).
//! 3. **Fenced again before COMMIT**, with the last fence's arguments: a `ROLLBACK TO
//!    SAVEPOINT` sent as SQL releases the locks taken after the savepoint, and must not let
//!    stale writes commit.
//! 4. **Bounded steps.** Every step waits at most the request timeout and, for an elector's
//!    transaction ([`Elector::fenced`](crate::Elector::fenced)), never past the lease it was begun under; a step that
//!    runs out of time drops its connection (never reused; the server rolls back).
//! 5. **The elector hears of a refusal.** When the database refuses an elector's term, at the
//!    first fence or at the one before COMMIT, the elector steps down before the error is
//!    returned ([`Elector::is_leader`](crate::Elector::is_leader) is false at once; its next call learns who leads).

use std::time::Duration;

use mysql_async::prelude::{Protocol, Queryable};
use mysql_async::{Column, Params, Pool, QueryResult, Row, Transaction, TxOpts};
use tokio::time::Instant;

use crate::elector::{RefusalLink, StopReason};
use crate::error::{Error, Result};
use crate::procedures::{self, LeaderCheck};

/// A transaction on one pooled connection whose writes commit only under a fence. Begun by
/// [`Elector::fenced`](crate::Elector::fenced) (fenced already, at the term this node leads at) or
/// [`FencedTransaction::begin`] (then [`FencedTransaction::assert_leader`] fences it). Dropping
/// it uncommitted rolls it back. On MariaDB the fence lowers the session's
/// `idle_transaction_timeout` to the lease left (an idle fenced transaction ends with its lease);
/// [`commit`](Self::commit) and [`rollback`](Self::rollback) restore it in the same round trip,
/// so the pooled connection goes back as it was; a transaction merely dropped leaves it lowered.
///
/// ```no_run
/// # async fn demo(pool: mysql_async::Pool, elector: mysqlleader::Elector) -> mysqlleader::Result<()> {
/// let mut tx = elector.fenced(&pool).await?;    // NotLeader: this node does not lead
/// tx.exec("UPDATE invoices SET state = 'sent', term = ? WHERE id = ?", (tx.term(), 42)).await?;
/// tx.commit().await?;                           // fenced once more, then committed
/// # Ok(()) }
/// ```
pub struct FencedTransaction<'a> {
    /// The open transaction; `None` once committed, rolled back, or lost with its connection.
    tx: Option<Transaction<'a>>,
    /// Why no more statements may run, once that is so (rule 1).
    spent: Option<String>,
    /// The last fence that succeeded in it (rule 3), as (service, node, term).
    fence: Option<(String, String, u64)>,
    /// The request timeout: the longest any one step waits.
    timeout: Duration,
    /// For an elector's transaction: the local deadline of the leadership it was begun under.
    lease_deadline: Option<Instant>,
    /// For an elector's transaction: the elector to tell of a refusal (rule 5).
    elector: Option<RefusalLink>,
    /// The `AUTO_INCREMENT` id of the last statement that succeeded (0: none).
    last_insert_id: u64,
    /// A fence succeeded in it: on MariaDB it lowered the session's `idle_transaction_timeout`
    /// (to the lease left), and the commit or rollback restores it ([`end_and_restore`]).
    lowered: bool,
}

/// What one statement of a [`FencedTransaction`] gave.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The first result set's columns ([`FencedTransaction::query`] only).
    pub columns: Vec<Column>,
    /// The first result set's rows ([`FencedTransaction::query`] only); a `CALL`'s further
    /// result sets are read and discarded.
    pub rows: Vec<Row>,
    /// Rows the statement changed.
    pub affected_rows: u64,
    /// The `AUTO_INCREMENT` id it generated (the first, for several rows); 0 when none.
    pub last_insert_id: u64,
}

impl FencedTransaction<'static> {
    /// Begins a transaction on a connection of `pool` (`START TRANSACTION`), each step bounded
    /// by `request_timeout`. Not fenced yet: call [`assert_leader`](Self::assert_leader) next.
    pub async fn begin(pool: &Pool, request_timeout: Duration) -> Result<Self> {
        Self::begin_with(pool, request_timeout, None, None).await
    }

    pub(crate) async fn begin_with(pool: &Pool, timeout: Duration, lease_deadline: Option<Instant>, elector: Option<RefusalLink>) -> Result<Self> {
        let limit = step_limit(timeout, lease_deadline);
        let tx = within(limit, async { pool.start_transaction(TxOpts::default()).await.map_err(|e| Error::from_pool(pool, e)) }).await?;
        Ok(FencedTransaction { tx: Some(tx), spent: None, fence: None, timeout, lease_deadline, elector, last_insert_id: 0, lowered: false })
    }
}

impl<'a> FencedTransaction<'a> {
    /// The term the last successful fence asserted; `None` before any.
    pub fn term(&self) -> Option<u64> {
        self.fence.as_ref().map(|f| f.2)
    }

    /// The `AUTO_INCREMENT` id generated by the last statement that succeeded (0: none),
    /// readable in any state.
    pub fn last_insert_id(&self) -> u64 {
        self.last_insert_id
    }

    /// Why no statement and no commit may run any more (rule 1), or `None` while it is usable.
    pub fn unusable(&self) -> Option<String> {
        match (&self.spent, &self.tx) {
            (Some(why), _) => Some(format!("the transaction cannot be used any more: {why}")),
            (None, None) => Some("the transaction has ended".into()),
            (None, Some(_)) => None,
        }
    }

    /// `CALL assert_leader(service_id, node_id, term)` inside this transaction: on success the
    /// term stays share-locked until the transaction ends, and COMMIT fences once more with
    /// these arguments. [`Error::NotLeader`] when `node_id` does not lead at `term` (the server
    /// has rolled the transaction back; an elector's transaction has told its elector).
    pub async fn assert_leader(&mut self, service_id: &str, node_id: &str, term: u64) -> Result<LeaderCheck> {
        let (tx, limit) = self.open()?;
        let result = within(limit, procedures::assert_leader(tx, service_id, node_id, term)).await;
        match self.after("assert_leader", result) {
            Ok(check) => {
                self.lowered = true;
                self.fence = Some((service_id.to_string(), node_id.to_string(), term));
                Ok(check)
            }
            Err(error) => {
                if let (Some(reason), Some(elector)) = (StopReason::of_refusal(&error), &self.elector) {
                    elector.refused(term, reason).await;
                }
                Err(error)
            }
        }
    }

    /// Runs one statement (rule 2) and discards the rows it returns: `INSERT`, `UPDATE`, ...
    /// With parameters (`(a, b)`, a `Vec<Value>`, ...) it is prepared and they bind to its `?`s;
    /// with [`Params::Empty`] (`()`) it runs as plain text. Any failure spends the transaction.
    pub async fn exec(&mut self, sql: &str, params: impl Into<Params>) -> Result<Outcome> {
        self.statement(sql, params.into(), false).await
    }

    /// Runs one statement like [`exec`](Self::exec) and keeps its first result set's columns
    /// and rows: `SELECT`, `SELECT ... FOR UPDATE`, `SHOW`, ...
    pub async fn query(&mut self, sql: &str, params: impl Into<Params>) -> Result<Outcome> {
        self.statement(sql, params.into(), true).await
    }

    async fn statement(&mut self, sql: &str, params: Params, keep_rows: bool) -> Result<Outcome> {
        let fenced = self.fence.is_some();
        if let Err(refused) = crate::statement::check_transaction_statement("sql", sql, fenced) {
            self.spend("a statement", &refused.to_string());
            return Err(refused);
        }
        let (tx, limit) = self.open()?;
        let result = within(limit, async move {
            let mut outcome = Outcome::default();
            if matches!(params, Params::Empty) {
                let result = tx.query_iter(sql).await.map_err(Error::from_mysql)?;
                (outcome.columns, outcome.rows) = read_result(result, keep_rows).await?;
            } else {
                let result = tx.exec_iter(sql, params).await.map_err(Error::from_mysql)?;
                (outcome.columns, outcome.rows) = read_result(result, keep_rows).await?;
            }
            outcome.affected_rows = tx.affected_rows();
            outcome.last_insert_id = tx.last_insert_id().unwrap_or(0);
            if fenced {
                still_open(tx).await?;
            }
            Ok(outcome)
        })
        .await;
        let outcome = self.after("a statement", result)?;
        self.last_insert_id = outcome.last_insert_id;
        Ok(outcome)
    }

    /// Commits. In a fenced transaction `assert_leader` runs once more first with the last
    /// fence's arguments (rule 3): [`Error::NotLeader`] when the node no longer leads at that
    /// term, and nothing commits. On success every statement took effect; on any error none
    /// did (a lost connection at COMMIT leaves the outcome unknown, as always). Either way the
    /// transaction has ended.
    pub async fn commit(&mut self) -> Result<()> {
        if let Some(why) = self.unusable() {
            return Err(Error::usage(why));
        }
        if let Some((service_id, node_id, term)) = self.fence.clone() {
            self.assert_leader(&service_id, &node_id, term).await?;
        }
        let limit = self.step_limit();
        let tx = self.tx.take().ok_or_else(|| Error::usage("the transaction has ended"))?;
        self.spent = Some("it has been committed or rolled back".into());
        if self.restores(&tx) {
            within(limit, end_and_restore(tx, "COMMIT")).await
        } else {
            within(limit, async { tx.commit().await.map_err(Error::from_mysql) }).await
        }
    }

    /// Rolls back (bounded by the request timeout). Always allowed, also after a failure or
    /// when the transaction has ended (then it does nothing).
    pub async fn rollback(&mut self) -> Result<()> {
        self.spent = Some("it has been committed or rolled back".into());
        match self.tx.take() {
            None => Ok(()),
            Some(tx) if self.restores(&tx) => within(self.timeout, end_and_restore(tx, "ROLLBACK")).await,
            Some(tx) => within(self.timeout, async { tx.rollback().await.map_err(Error::from_mysql) }).await,
        }
    }

    /// Whether ending this transaction also restores the session's `idle_transaction_timeout`:
    /// on MariaDB (the only server with it), once a fence has run in it (and may have lowered it).
    fn restores(&self, tx: &Transaction<'_>) -> bool {
        self.lowered && tx.server_version().0 >= 10
    }

    /// The longest the next step may wait (rule 4).
    fn step_limit(&self) -> Duration {
        step_limit(self.timeout, self.lease_deadline)
    }

    /// Marks the transaction spent by `what`'s failure (rule 1); the C ABI also spends it on a
    /// bad argument, before anything is sent.
    pub(crate) fn spend(&mut self, what: &str, error: &str) {
        if self.spent.is_none() {
            self.spent = Some(format!("{what} failed ({error}); roll it back"));
        }
    }

    /// The open transaction and the limit of the next step on it; a usage error saying why
    /// when it cannot be used (rule 1).
    fn open(&mut self) -> Result<(&mut Transaction<'a>, Duration)> {
        if let Some(why) = self.unusable() {
            return Err(Error::usage(why));
        }
        let limit = self.step_limit();
        let tx = self.tx.as_mut().ok_or_else(|| Error::usage("the transaction has ended"))?;
        Ok((tx, limit))
    }

    /// A step's result: any failure spends the transaction, and after a timeout or a broken
    /// connection the connection is dropped (never reused; the server rolls back).
    fn after<T>(&mut self, what: &str, result: Result<T>) -> Result<T> {
        if let Err(error) = &result {
            self.spend(what, &error.to_string());
            if matches!(error, Error::Connection { .. } | Error::Timeout { .. }) {
                self.tx = None;
            }
        }
        result
    }
}

/// Restores the session's `idle_transaction_timeout` as the first fence found it
/// (`sql/routines/leader_election_bound_idle_tx.sql` keeps it in `@mysqlleader_idle_tx_was`).
const RESTORE_IDLE_BOUND: &str = "SET SESSION idle_transaction_timeout = \
    CAST(COALESCE(@mysqlleader_idle_tx_was, @@session.idle_transaction_timeout) AS UNSIGNED), @mysqlleader_idle_tx_was = NULL";

/// Ends `tx` with `end` (`COMMIT` or `ROLLBACK`) and restores the session's
/// `idle_transaction_timeout` in the same round trip, after it: the bound the fence set lasts
/// until the end, and the pooled connection goes back as the transaction found it. The end's
/// error is the result (the server runs nothing after a failed statement); a failed restore is
/// logged, never reported as a failed end. `mysql_async` rolls the connection back when it
/// returns to its pool (it did not see the `COMMIT`): nothing is open then, so that changes nothing.
async fn end_and_restore(mut tx: Transaction<'_>, end: &str) -> Result<()> {
    let result = tx.query_iter(format!("{end}; {RESTORE_IDLE_BOUND}")).await.map_err(Error::from_mysql)?;
    if let Err(e) = result.drop_result().await {
        tracing::warn!(error = %Error::from_mysql(e), "the session's idle_transaction_timeout could not be restored after {end}");
    }
    Ok(())
}

/// `future`, given at most `limit`.
async fn within<T>(limit: Duration, future: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    tokio::time::timeout(limit, future).await.unwrap_or_else(|_| Err(Error::timeout(limit)))
}

fn step_limit(timeout: Duration, lease_deadline: Option<Instant>) -> Duration {
    match lease_deadline {
        Some(deadline) => timeout.min(deadline.saturating_duration_since(Instant::now())),
        None => timeout,
    }
}

/// Reads a statement's whole result: the first result set's columns and rows when `keep_rows`
/// (none otherwise), and the rest (the further sets of a CALL) read and discarded.
async fn read_result<P: Protocol>(mut result: QueryResult<'_, '_, P>, keep_rows: bool) -> Result<(Vec<Column>, Vec<Row>)> {
    let mut kept = (Vec::new(), Vec::new());
    if keep_rows {
        kept.0 = result.columns().map(|c| c.to_vec()).unwrap_or_default();
        kept.1 = result.collect().await.map_err(Error::from_mysql)?;
    }
    result.drop_result().await.map_err(Error::from_mysql)?;
    Ok(kept)
}

/// Fails when the server has ended the transaction behind the library's back: an implicit
/// commit (DDL such as CREATE/ALTER/DROP, LOCK TABLES, ...), or a COMMIT/ROLLBACK sent as SQL.
/// After that, statements would run in autocommit, outside the fence; so the statement that
/// ended it fails, and with it the transaction. The server tells with `@@in_transaction`
/// (MariaDB); where it cannot (MySQL: an unknown variable), nothing is checked.
async fn still_open(tx: &mut Transaction<'_>) -> Result<()> {
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
