//! The installer's statements never queue the election's callers for long (issue "Upgrades ...
//! never stop an election").
//!
//! A statement that changes a table, a trigger or a routine (`ALTER TABLE`, `CREATE OR REPLACE
//! TRIGGER`, MySQL's `DROP PROCEDURE`) needs an exclusive metadata lock on it, and waits for every
//! transaction that has read or called it to end: an application's fenced transaction, a GUI
//! client with autocommit off, `mysqldump --single-transaction`. While it waits, every later call
//! that touches the same object (each renew writes the seat and, by its trigger, the history)
//! queues behind it. The server's default wait (`lock_wait_timeout`) is a year: one idle reader
//! stopped every election for as long as it stayed open.
//!
//! So the installer's session waits at most [`LOCK_WAIT_S`] for such a lock (callers queue that
//! long at most, per attempt), and then, rather than give up at once, lets the callers through
//! and tries again, within a budget, naming the transactions that may hold it:
//!
//! 1. Run the statement(s) with the bounded wait.
//! 2. Done unless the server answers 1205 (the lock was not granted in time: nothing of that
//!    statement took effect).
//! 3. Read the oldest open transactions of the server (one of them holds the lock) and log them.
//! 4. When the budget is spent, fail with that list; else pause (1 s, doubling up to 8 s), while
//!    the callers that queued behind the attempt run, and go back to 1.

use std::time::{Duration, Instant};

use mysql_async::prelude::Queryable;
use mysql_async::Conn;

use crate::error::{Error, Result};

/// The longest one installer statement waits for a metadata lock, in seconds
/// (`lock_wait_timeout`; 1 is MySQL's least): the longest an election call queues behind it,
/// per attempt.
pub(crate) const LOCK_WAIT_S: u32 = 1;

/// How long [`crate::install`] keeps trying to take a lock that open transactions hold, in all.
pub const DEFAULT_LOCK_BUDGET: Duration = Duration::from_secs(120);

/// The first pause between two attempts; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_secs(1);
const MAX_PAUSE: Duration = Duration::from_secs(8);

/// What a wait may cost and whom it is told: the budget of one statement's attempts, and a
/// function that hears each wait as a sentence (the CLI prints it; it is logged as a warning in
/// any case).
#[derive(Clone)]
pub(crate) struct LockWaits {
    pub budget: Duration,
    pub report: Option<std::sync::Arc<dyn Fn(&str) + Send + Sync>>,
}

/// Sets the installer session's bounded wait for metadata locks (and row locks, which the
/// installer's own writes to its record tables may meet).
pub(crate) async fn bound_waits(conn: &mut Conn) -> Result<()> {
    conn.query_drop(format!("SET SESSION lock_wait_timeout = {LOCK_WAIT_S}, SESSION innodb_lock_wait_timeout = {LOCK_WAIT_S}"))
        .await
        .map_err(Error::from_mysql)
}

/// Runs `sql` (one statement, or several in one round trip that can each run again) on `conn`,
/// whose waits [`bound_waits`] has bounded, as the module documentation's loop says. `what`
/// names it in logs and errors; `waits` bounds the attempts; `after_failure`, when given, runs after each failed attempt
/// (MySQL's `UNLOCK TABLES` after a trigger's `LOCK TABLES`). Errors other than 1205 are
/// returned at once, as the server gave them.
pub(crate) async fn run_bounded(conn: &mut Conn, sql: &str, what: &str, waits: &LockWaits,
                                after_failure: Option<&str>) -> std::result::Result<(), mysql_async::Error> {
    let started = Instant::now();
    let mut pause = FIRST_PAUSE;
    let mut attempts = 1;
    loop {
        // 1.
        let outcome = conn.query_drop(sql).await;
        if outcome.is_err() {
            if let Some(cleanup) = after_failure {
                let _ = conn.query_drop(cleanup).await;
            }
        }
        // 2.
        match outcome {
            Err(mysql_async::Error::Server(e)) if e.code == 1205 => {
                // 3.
                let holders = open_transactions(conn).await;
                // 4.
                if started.elapsed() + pause > waits.budget {
                    return Err(mysql_async::Error::Server(mysql_async::ServerError {
                        code: e.code,
                        state: e.state.clone(),
                        message: format!(
                            "{what}: a lock on the election's objects stayed held by other sessions for {:.0} s \
                             ({attempts} attempts, each waiting {LOCK_WAIT_S} s, so that the election's calls never queue \
                             longer); {holders}. End those transactions, or run the installer again when they have ended",
                            started.elapsed().as_secs_f64()),
                    }));
                }
                let sentence = format!("{what}: waiting for a lock that other sessions hold ({holders}); \
                                        trying again in {:.0} s", pause.as_secs_f64());
                tracing::warn!(attempts, "migrate: {sentence}");
                if let Some(report) = &waits.report {
                    report(&sentence);
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_PAUSE);
                attempts += 1;
            }
            other => return other,
        }
    }
}

/// The oldest transactions open on the server other than this session's, as a sentence: one of
/// them holds the lock the installer waits for. Reading them needs the PROCESS privilege; without
/// it the sentence says so.
async fn open_transactions(conn: &mut Conn) -> String {
    let rows: std::result::Result<Vec<(u64, Option<String>, Option<String>, String, Option<String>)>, _> = conn
        .query(
            "SELECT t.trx_mysql_thread_id, CONCAT(p.USER, '@', p.HOST), p.DB, \
                    CAST(TIMESTAMPDIFF(SECOND, t.trx_started, NOW()) AS CHAR), LEFT(p.INFO, 80) \
               FROM information_schema.INNODB_TRX t \
               LEFT JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id \
              WHERE t.trx_mysql_thread_id <> CONNECTION_ID() \
              ORDER BY t.trx_started LIMIT 5",
        )
        .await;
    match rows {
        Ok(rows) if !rows.is_empty() => {
            let listed: Vec<String> = rows
                .into_iter()
                .map(|(id, account, db, seconds, info)| {
                    format!("connection {id} ({}, database {}), open for {seconds} s, {}",
                            account.unwrap_or_else(|| "?".into()), db.unwrap_or_else(|| "none".into()),
                            info.map_or_else(|| "idle".to_string(), |q| format!("running `{q}`")))
                })
                .collect();
            format!("the oldest open transactions: {}", listed.join("; "))
        }
        Ok(_) => "no open transaction is visible to this account (seeing other sessions needs the PROCESS privilege)".into(),
        Err(e) => format!("the open transactions could not be read ({}; it needs the PROCESS privilege)",
                          crate::error::redact(&e.to_string())),
    }
}
