//! What the elector relies on when a call may have left a transaction open on the server (a
//! statement killed mid-procedure skips the procedure's handler): a connection marked with
//! `reset_connection(true)` comes back from a `pool_from_url` pool with that transaction rolled
//! back, while an unmarked one comes back with it still open (the pool's own clean-up rolls back
//! only transactions begun through mysql_async's API), so that the next call's opening COMMIT
//! would commit the half-done write. A guard against a driver upgrade that changes either.

use crate::{common, sql_support};
use common::TestDb;
use mysql_async::prelude::Queryable;

/// One connection's pool of the test database, as `pool_from_url` makes it.
fn one_connection_pool(db: &TestDb) -> mysql_async::Pool {
    let sep = if db.url.contains('?') { '&' } else { '?' };
    mysqlleader::pool_from_url(&format!("{}{sep}pool_min=1&pool_max=1", db.url)).expect("pool")
}

async fn left_open(pool: &mysql_async::Pool, reset: bool) -> (i64, i64) {
    let mut c = pool.get_conn().await.unwrap();
    // As a procedure would: its own transaction, a write, then nothing (its handler skipped).
    c.query_drop("START TRANSACTION").await.unwrap();
    c.query_drop("INSERT INTO half_done VALUES (1)").await.unwrap();
    if reset {
        c.reset_connection(true);
    }
    drop(c);
    let mut c = pool.get_conn().await.unwrap();
    let open = i64::from(sql_support::in_transaction(&mut c).await);
    c.query_drop("ROLLBACK").await.unwrap();
    let rows: i64 = c.query_first("SELECT COUNT(*) FROM half_done").await.unwrap().unwrap();
    (open, rows)
}

#[tokio::test]
async fn a_connection_marked_for_reset_comes_back_with_no_transaction_open() {
    let db = TestDb::migrated("pool_reset").await;
    let mut admin = db.conn().await;
    admin.query_drop("CREATE TABLE half_done (id INT PRIMARY KEY) ENGINE=InnoDB").await.unwrap();
    drop(admin);
    let pool = one_connection_pool(&db);
    // The control: unmarked, the transaction is still open on the connection handed out next.
    assert_eq!(left_open(&pool, false).await, (1, 0), "the hazard the reset guards against");
    // Marked: rolled back before the pool hands it out again; nothing of the write is left.
    assert_eq!(left_open(&pool, true).await, (0, 0));
    pool.disconnect().await.unwrap();
    db.drop_db().await;
}
