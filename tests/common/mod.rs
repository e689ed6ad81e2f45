//! Shared test support: every test gets a database of its own on the real server named by
//! `MYSQLLEADER_TEST_URL` (set by `scripts/testdb.sh run`, which `make test` uses), with the
//! mysqlleader schema migrated into it.
#![allow(dead_code)]

pub mod overlap;
pub mod proxy;

use std::sync::atomic::{AtomicU32, Ordering};

use mysql_async::prelude::Queryable;
use mysql_async::{Opts, OptsBuilder, Pool};

/// The server URL for tests; fails the test with a clear message when it is not set.
pub fn server_url() -> String {
    std::env::var("MYSQLLEADER_TEST_URL").unwrap_or_else(|_| {
        panic!(
            "MYSQLLEADER_TEST_URL is not set. Run the tests with `make test` (it starts a throwaway \
             mariadbd), or `scripts/testdb.sh run cargo test`, or set it to mysql://user:pass@host:port/db \
             of an account that may create databases."
        )
    })
}

/// A database of the test's own, dropped again by [`TestDb::drop_db`] (left behind on failure,
/// for a look; the throwaway server goes away anyway).
pub struct TestDb {
    pub name: String,
    pub url: String,
    pub pool: Pool,
    admin: Pool,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// The URL of `base` with its database replaced by `db`.
pub fn url_with_db(base: &str, db: &str) -> String {
    let (head, _) = base.rsplit_once('/').expect("URL has a /database part");
    let (_, query) = base.split_once('?').map(|(a, q)| (a, format!("?{q}"))).unwrap_or((base, String::new()));
    format!("{head}/{db}{query}")
}

impl TestDb {
    /// A fresh, empty database (not migrated).
    pub async fn empty(tag: &str) -> TestDb {
        let base = server_url();
        let admin = Pool::new(Opts::from_url(&base).expect("valid MYSQLLEADER_TEST_URL"));
        let name = format!(
            "ml_{}_{}_{}",
            tag,
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        );
        let mut conn = admin.get_conn().await.expect("connect to the test server");
        conn.query_drop(format!("DROP DATABASE IF EXISTS `{name}`")).await.unwrap();
        conn.query_drop(format!("CREATE DATABASE `{name}`")).await.unwrap();
        drop(conn);
        let url = url_with_db(&base, &name);
        let pool = Pool::new(OptsBuilder::from_opts(Opts::from_url(&url).unwrap()));
        TestDb { name, url, pool, admin }
    }

    /// A fresh database with the mysqlleader schema installed.
    pub async fn migrated(tag: &str) -> TestDb {
        let db = TestDb::empty(tag).await;
        mysqlleader::migrate(&db.pool).await.expect("migrate");
        db
    }

    pub async fn conn(&self) -> mysql_async::Conn {
        self.pool.get_conn().await.expect("connection")
    }

    /// Drops the database and closes the pools.
    pub async fn drop_db(self) {
        let mut conn = self.admin.get_conn().await.unwrap();
        conn.query_drop(format!("DROP DATABASE IF EXISTS `{}`", self.name)).await.unwrap();
        drop(conn);
        // A pool's disconnect waits for every connection it handed out to come back. Once (on
        // MySQL, beside the test that restarts the server) one never did, and the test binary
        // hung after its last assertion; the database is gone by now, so wait at most 10 s and
        // say so.
        for (what, pool) in [("test", self.pool), ("admin", self.admin)] {
            if tokio::time::timeout(std::time::Duration::from_secs(10), pool.disconnect()).await.is_err() {
                eprintln!("warning: {}: the {what} pool did not get all its connections back within 10 s", self.name);
            }
        }
    }
}

/// A server connection as an admin sees it: its id, its login account's user name, its current
/// database, and what it does ("COMMAND TIME STATE INFO", for a failure's message).
pub type Connection = (u64, String, Option<String>, String);

/// Every client connection of the server, by its **login** account: performance_schema.threads
/// where the server has it on, information_schema.PROCESSLIST otherwise.
///
/// Not the processlist's USER where it can be helped: while a connection runs a SQL SECURITY
/// DEFINER routine (every election procedure), the processlist names the routine's definer as
/// its USER, on MariaDB and MySQL alike, so a connection in the middle of a call went uncounted
/// (a fleet test's cut-off found none of a node's connections on MySQL, and the node renewed
/// on; a count of a follower blocked in `campaign` missed its call connection).
/// performance_schema.threads keeps the login user: MySQL has it on by default, and
/// scripts/testdb.sh turns it on for its MariaDB. A server of your own without it gets the
/// processlist, which misses connections inside a call.
pub async fn connections(admin: &mut mysql_async::Conn) -> Vec<Connection> {
    let by_login: bool = admin.query_first("SELECT @@performance_schema = 1").await.ok().flatten().unwrap_or(false);
    let sql = if by_login {
        "SELECT PROCESSLIST_ID, PROCESSLIST_USER, PROCESSLIST_DB, \
                CONCAT_WS(' ', PROCESSLIST_COMMAND, PROCESSLIST_TIME, PROCESSLIST_STATE, LEFT(PROCESSLIST_INFO, 300)) \
           FROM performance_schema.threads \
          WHERE PROCESSLIST_ID IS NOT NULL AND PROCESSLIST_USER IS NOT NULL AND PROCESSLIST_ID <> CONNECTION_ID()"
    } else {
        "SELECT ID, USER, DB, CONCAT_WS(' ', COMMAND, TIME, STATE, LEFT(INFO, 300)) \
           FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()"
    };
    admin.query(sql).await.expect("the server's connections")
}

/// A new account `{name}_{pid}` with `password` and the application's role on every service,
/// and a URL of `db` that logs in as it. Tests that must tell their own connections apart count
/// them by this login ([`connections_of`]).
pub async fn app_account(db: &TestDb, name: &str, password: &str) -> (String, String) {
    use mysqlleader::procedures::{self, Account, Role};
    let user = format!("{name}_{}", std::process::id());
    let mut admin = db.conn().await;
    admin.query_drop(format!("DROP USER IF EXISTS '{user}'@'%'")).await.unwrap();
    admin.query_drop(format!("CREATE USER '{user}'@'%' IDENTIFIED BY '{password}'")).await.unwrap();
    drop(admin);
    procedures::grant(&db.pool, &Account::parse(&format!("'{user}'@'%'")).unwrap(), Role::App, &["%".to_string()])
        .await
        .expect("grant the app role");
    let (scheme, rest) = db.url.split_once("://").unwrap();
    let url = format!("{scheme}://{user}:{password}@{}", rest.rsplit_once('@').map_or(rest, |(_, host)| host));
    (user, url)
}

/// The ids and doings of the connections logged in as `user` (see [`connections`]).
pub async fn connections_of(admin: &mut mysql_async::Conn, user: &str) -> Vec<(u64, String)> {
    connections(admin).await.into_iter().filter(|c| c.1 == user).map(|(id, _, _, what)| (id, what)).collect()
}

/// The lines [`captured_log`] keeps: (level, the `node` field, the message and its `error` field).
pub type CapturedLog = std::sync::Mutex<Vec<(tracing::Level, String, String)>>;

/// What this process's log said: (level, the `node` field, the message), from the first use of
/// [`captured_log`] on (a subscriber for the whole test binary: other tests' lines are told
/// apart by their node).
pub fn captured_log() -> &'static CapturedLog {
    struct Capture(&'static CapturedLog);
    #[derive(Default)]
    struct Fields { node: String, message: String, error: Option<String> }
    impl tracing::field::Visit for Fields {
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            match field.name() {
                "node" => self.node = format!("{value:?}"),
                "message" => self.message = format!("{value:?}"),
                "error" => self.error = Some(format!("{value:?}")),
                _ => {}
            }
        }
    }
    impl tracing::Subscriber for Capture {
        fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
            metadata.target().starts_with("mysqlleader") && *metadata.level() <= tracing::Level::INFO
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, event: &tracing::Event<'_>) {
            let mut fields = Fields::default();
            event.record(&mut fields);
            // A line's `error` field, if any, after its message (what a failure's message shows).
            let message = match fields.error {
                Some(error) => format!("{} [error: {error}]", fields.message),
                None => fields.message,
            };
            self.0.lock().unwrap().push((*event.metadata().level(), fields.node, message));
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }
    static LOG: std::sync::OnceLock<&'static CapturedLog> = std::sync::OnceLock::new();
    LOG.get_or_init(|| {
        let log: &'static CapturedLog = Box::leak(Box::default());
        tracing::subscriber::set_global_default(Capture(log)).expect("no other subscriber in this test binary");
        log
    })
}
