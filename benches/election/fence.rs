//! The application's fenced write (issue 40): one transaction that fences with `assert_leader`
//! and updates one row of an application table, against the same transaction fenced by a plain
//! primary-key locking read of the election row (the floor of a fence) and with no check at all.
//! Same methodology as the follower and renew sections: dedicated connections, closed loop,
//! contenders alternating in rounds, medians, the ratio the median of per-round ratios.
//!
//! What the library sends for a fenced write ([`FenceKind::Library`]) is taken from
//! `src/fenced.rs` (`Elector::fenced` and `FencedTransaction`), statement for statement, on a
//! dedicated connection instead of a pooled one:
//!
//! 1. `START TRANSACTION` (`Pool::start_transaction` with the default `TxOpts`);
//! 2. `CALL assert_leader(service, node, term)` (`procedures::assert_leader`, text protocol);
//! 3. the statement, prepared with its parameters (`FencedTransaction::exec`);
//! 4. `SELECT @@in_transaction` (`still_open`, after every statement of a fenced transaction;
//!    MySQL answers 1193, which it ignores);
//! 5. `CALL assert_leader(...)` again with the same arguments (`commit`, rule 3);
//! 6. on MariaDB `COMMIT; SET SESSION idle_transaction_timeout = ...` in one round trip
//!    (`end_and_restore`), after which `mysql_async`, which did not see that `COMMIT`, sends a
//!    `ROLLBACK` before the connection's next transaction (in the library: when the connection
//!    goes back to its pool); on MySQL a plain `COMMIT`.

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, TxOpts};
use serde_json::{json, Value};
use std::time::Duration;

use crate::common::*;
use crate::report::Table;
use crate::throughput::{measure, pairs_table, report, Contender, Op};

pub const LEVELS: &[usize] = &[1, 8];

/// The application's table: one row per connection, so that the writes never wait for each other.
pub const APP_TABLE: &str = "CREATE TABLE IF NOT EXISTS bench_app (
    id    INT NOT NULL,
    n     BIGINT NOT NULL DEFAULT 0,
    term  BIGINT UNSIGNED NOT NULL DEFAULT 0,
    PRIMARY KEY (id)
) ENGINE=InnoDB";

/// The one-row write of the fenced transaction (prepared, as `FencedTransaction::exec` sends it).
pub const APP_UPDATE: &str = "UPDATE bench_app SET n = n + 1, term = ? WHERE id = ?";

/// The floor of a fence: a primary-key locking read of the election row (`LOCK IN SHARE MODE`,
/// which both servers know; MariaDB 10.11 has no `FOR SHARE`), held to the end of the transaction.
pub const FENCE_FLOOR_SQL: &str =
    "SELECT leader_id, term, lease_expires_at FROM leader_election WHERE service_id = ? LOCK IN SHARE MODE";

/// src/fenced.rs's RESTORE_IDLE_BOUND (private there; the self-check asserts it is the same text).
pub const RESTORE_IDLE_BOUND: &str = "SET SESSION idle_transaction_timeout = \
    CAST(COALESCE(@mysqlleader_idle_tx_was, @@session.idle_transaction_timeout) AS UNSIGNED), @mysqlleader_idle_tx_was = NULL";

/// src/fenced.rs, for the self-check: the benchmark must send what the library sends.
pub const FENCED_RS: &str = include_str!("../../src/fenced.rs");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FenceKind {
    /// What `Elector::fenced` + `exec` + `commit` send (see the module's comment).
    Library,
    /// `START TRANSACTION; CALL assert_leader; UPDATE; COMMIT`: one fence, as
    /// `procedures::assert_leader`'s own example writes it.
    OneCall,
    /// `START TRANSACTION; SELECT ... LOCK IN SHARE MODE; UPDATE; COMMIT`.
    Floor,
    /// `START TRANSACTION; UPDATE; COMMIT`.
    NoCheck,
}

#[derive(Clone, Debug)]
pub struct FenceOp {
    pub kind: FenceKind,
    pub service: String,
    pub node: String,
    pub term: u64,
    pub id: u32,
}

/// One fenced write of `op.kind` on `conn`.
pub async fn fenced_write(conn: &mut Conn, op: &FenceOp) -> Res<()> {
    let mut tx = conn.start_transaction(TxOpts::default()).await?;
    match op.kind {
        FenceKind::Library => {
            mysqlleader::procedures::assert_leader(&mut tx, &op.service, &op.node, op.term).await?;
            tx.exec_drop(APP_UPDATE, (op.term, op.id)).await?;
            match tx.query_first::<i64, _>("SELECT @@in_transaction").await {
                Ok(Some(0)) => return Err("the server ended the fenced transaction early".into()),
                Ok(_) => {}
                Err(mysql_async::Error::Server(e)) if e.code == 1193 => {}
                Err(e) => return Err(e.into()),
            }
            mysqlleader::procedures::assert_leader(&mut tx, &op.service, &op.node, op.term).await?;
            if tx.server_version().0 >= 10 {
                let result = tx.query_iter(format!("COMMIT; {RESTORE_IDLE_BOUND}")).await?;
                result.drop_result().await?;
                // Dropped as the library drops it: the next START TRANSACTION sends a ROLLBACK first.
                drop(tx);
            } else {
                tx.commit().await?;
            }
        }
        FenceKind::OneCall => {
            mysqlleader::procedures::assert_leader(&mut tx, &op.service, &op.node, op.term).await?;
            tx.exec_drop(APP_UPDATE, (op.term, op.id)).await?;
            tx.commit().await?;
        }
        FenceKind::Floor => {
            let _: Option<mysql_async::Row> = tx.exec_first(FENCE_FLOOR_SQL, (op.service.as_str(),)).await?;
            tx.exec_drop(APP_UPDATE, (op.term, op.id)).await?;
            tx.commit().await?;
        }
        FenceKind::NoCheck => {
            tx.exec_drop(APP_UPDATE, (op.term, op.id)).await?;
            tx.commit().await?;
        }
    }
    Ok(())
}

pub const TREE_LIBRARY: &str = "assert_leader (tree), as FencedTransaction sends it";
pub const BEFORE_LIBRARY: &str = "assert_leader (before issue 40), the same statements";
pub const TREE_ONE_CALL: &str = "assert_leader (tree), one CALL";
pub const BEFORE_ONE_CALL: &str = "assert_leader (before issue 40), one CALL";
pub const FLOOR: &str = "floor (SELECT ... LOCK IN SHARE MODE of the election row)";
pub const NO_CHECK: &str = "no check (START TRANSACTION; UPDATE; COMMIT)";

/// Sets up `url`'s database for fenced writes: the application table with one row per
/// connection, and node `leader-i` leading service `fence-i` with a long lease; returns the terms.
async fn set_up(url: &str, n: usize) -> Res<Vec<u64>> {
    let mut c = Conn::new(mysql_async::Opts::from_url(url)?).await?;
    c.query_drop(APP_TABLE).await?;
    let mut terms = Vec::new();
    for i in 0..n {
        c.exec_drop("INSERT IGNORE INTO bench_app (id) VALUES (?)", (i as u32,)).await?;
        let won = mysqlleader::procedures::campaign(&mut c, &format!("fence-{i}"), &format!("leader-{i}"), Duration::from_secs(3600)).await?;
        if !won.is_leader {
            return Err(format!("fence set-up: leader-{i} did not win fence-{i}").into());
        }
        terms.push(won.term);
    }
    c.disconnect().await?;
    Ok(terms)
}

fn contender(name: &str, conns: Vec<Conn>, kind: FenceKind, terms: &[u64]) -> Contender {
    let terms = terms.to_vec();
    Contender {
        name: name.into(),
        conns,
        op: Box::new(move |i| {
            Op::Fence(FenceOp { kind, service: format!("fence-{i}"), node: format!("leader-{i}"), term: terms[i], id: i as u32 })
        }),
        before: None,
    }
}

/// The fence section, with its tables and JSON.
pub async fn run(dbs: &Dbs, quick: bool) -> Res<(Vec<Table>, Value, Vec<(String, f64)>)> {
    let (rounds, dur) = if quick { (2, Duration::from_millis(300)) } else { (4, Duration::from_secs(2)) };
    let max = *LEVELS.iter().max().unwrap();
    let before = dbs.proposals.iter().find(|p| p.db == BEFORE_40_DB).ok_or("no scratch database of the routines before issue 40")?;
    let tree_terms = set_up(&dbs.url, max).await?;
    let before_terms = set_up(&before.url, max).await?;
    let mut contenders = vec![
        contender(TREE_LIBRARY, conns(&dbs.url, max).await?, FenceKind::Library, &tree_terms),
        contender(BEFORE_LIBRARY, conns(&before.url, max).await?, FenceKind::Library, &before_terms),
        contender(TREE_ONE_CALL, conns(&dbs.url, max).await?, FenceKind::OneCall, &tree_terms),
        contender(BEFORE_ONE_CALL, conns(&before.url, max).await?, FenceKind::OneCall, &before_terms),
        contender(FLOOR, conns(&dbs.url, max).await?, FenceKind::Floor, &tree_terms),
        contender(NO_CHECK, conns(&dbs.url, max).await?, FenceKind::NoCheck, &tree_terms),
    ];
    let results = measure(&mut contenders, LEVELS, rounds, dur).await?;
    let names: Vec<String> = contenders.iter().map(|c| c.name.clone()).collect();
    for c in contenders.drain(..) {
        for conn in c.conns {
            let _ = conn.disconnect().await;
        }
    }
    let floor = names.iter().position(|n| n == FLOOR).expect("the floor runs");
    let (mut t, j, ratios) = report(
        "fence",
        "Fenced write: START TRANSACTION, the fence, a one-row UPDATE, COMMIT, vs the same with a locking read or no check",
        LEVELS,
        &names,
        &results,
        floor,
        "floor",
    );
    t.note(format!(
        "{rounds} rounds of {:.1} s per contender and level, alternating; medians of rounds; ratio = median of per-round \
         ratios; per round: the lowest and highest of them.",
        dur.as_secs_f64()
    ));
    t.note(
        "Connection i is the leader of service fence-i (lease 1 h) and updates row i of an application table (UPDATE bench_app \
         SET n = n + 1, term = ? WHERE id = ?, prepared). as FencedTransaction sends it: START TRANSACTION; CALL assert_leader; \
         the UPDATE; SELECT @@in_transaction (the library's check that the server did not end the transaction; MySQL answers \
         1193); CALL assert_leader again (the fence before COMMIT); COMMIT, on MariaDB with the restore of \
         idle_transaction_timeout in the same round trip, after which mysql_async sends a ROLLBACK before the connection's \
         next transaction (src/fenced.rs; here on a dedicated connection, in the library a pooled one). one CALL: START \
         TRANSACTION; CALL assert_leader; the UPDATE; COMMIT. floor: the same with a primary-key SELECT ... LOCK IN SHARE MODE \
         of the election row instead of the CALL. no check: START TRANSACTION; the UPDATE; COMMIT. before issue 40: the \
         routines as they were at 5085e36^ (benches/election/before_40/), installed over the same schema in a scratch database.",
    );
    let (p, pj) = pairs_table(
        "Issue 40, fence: the tree against the routines before it (ratio of calls/s, same rounds)",
        LEVELS,
        &names,
        &results,
        &[(TREE_LIBRARY, BEFORE_LIBRARY), (TREE_ONE_CALL, BEFORE_ONE_CALL), (TREE_LIBRARY, TREE_ONE_CALL), (FLOOR, NO_CHECK)],
    );
    let value = json!({"rounds": rounds, "seconds_per_run": dur.as_secs_f64(), "rows": j, "issue_40": pj});
    Ok((vec![t, p], value, ratios))
}
