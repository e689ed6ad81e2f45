//! The library against a server whose global defaults differ from the usual ones. These change
//! GLOBAL variables for the time of the test, so they live in a test binary of their own with a
//! single test (cargo runs test binaries one after the other), and restore them even when the
//! test fails.

mod common;

use std::time::Duration;

use common::TestDb;
use mysql_async::prelude::Queryable;

/// Restores `SET GLOBAL autocommit = 1` when dropped (also while a failed assertion unwinds).
struct GlobalAutocommitOff {
    url: String,
}

impl GlobalAutocommitOff {
    async fn set(url: &str) -> Self {
        let mut c = mysql_async::Conn::from_url(url).await.unwrap();
        c.query_drop("SET GLOBAL autocommit = 0").await.unwrap();
        c.disconnect().await.unwrap();
        GlobalAutocommitOff { url: url.to_string() }
    }
}

impl Drop for GlobalAutocommitOff {
    fn drop(&mut self) {
        let url = self.url.clone();
        // A runtime of its own: Drop cannot await, and the test's runtime may be unwinding.
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                let mut c = mysql_async::Conn::from_url(url.as_str()).await.expect("restore autocommit");
                c.query_drop("SET GLOBAL autocommit = 1").await.expect("restore autocommit");
                let _ = c.disconnect().await;
            });
        })
        .join()
        .unwrap();
    }
}

/// A server with `autocommit = 0` by default (a DBA's choice some shops make): the library's own
/// sessions still run with autocommit on, so a call leaves no transaction open on a pooled
/// connection (no snapshot, no lock), a read answers the current state every time, and another
/// client's force_leader goes through at once.
#[tokio::test]
async fn a_server_with_autocommit_off_by_default() {
    let db = TestDb::migrated("defaults_autocommit").await;
    let guard = GlobalAutocommitOff::set(&db.url).await;
    let pool = mysqlleader::pool_from_url(&db.url).unwrap();

    let mut conn = pool.get_conn().await.unwrap();
    let on: i64 = conn.query_first("SELECT @@session.autocommit").await.unwrap().unwrap();
    assert_eq!(on, 1, "the library's session runs with autocommit on");
    drop(conn);

    let won = mysqlleader::procedures::campaign(&pool, "svc", "a", Duration::from_secs(60)).await.unwrap();
    assert!(won.is_leader);
    for round in 0..3 {
        let check = mysqlleader::procedures::am_i_leader(&pool, "svc", "a").await
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert!(check.is_leader, "round {round}");
    }
    // Another client (its own session, autocommit off as the server says): force_leader is not
    // held off by anything the library's sessions left behind.
    let mut other = mysql_async::Conn::from_url(db.url.as_str()).await.unwrap();
    let forced = tokio::time::timeout(
        Duration::from_millis(900),
        mysqlleader::procedures::force_leader(&mut other, "svc", "b", Duration::from_secs(60)),
    )
    .await
    .expect("force_leader is not blocked by the library's sessions")
    .unwrap();
    assert_eq!(forced.term, 2);
    // The library reads the current row, not a snapshot from before the force.
    let check = mysqlleader::procedures::am_i_leader(&pool, "svc", "a").await.unwrap();
    assert!(!check.is_leader, "a no longer leads");
    assert_eq!(check.term, 2);
    let _ = other.disconnect().await;
    pool.disconnect().await.unwrap();
    drop(guard);
    db.drop_db().await;
}
