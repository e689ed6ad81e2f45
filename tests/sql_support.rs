//! Helpers shared by the SQL suites (`tests/sql_*.rs`), which include this file with
//! `#[path = "sql_support.rs"] mod sql_support;`. Cargo also builds it alone as a test crate,
//! which then holds no tests.
//!
//! They talk to the procedures with plain SQL, never through `mysqlleader::procedures`, so that
//! the suites prove what any SQL client sees: result columns, result sets, SQLSTATEs, rows.
#![allow(dead_code)]

use mysql_async::prelude::{FromValue, Protocol, Query, Queryable, WithParams};
use mysql_async::{Conn, Opts, Params, QueryResult, Row, Value};

/// The one row a procedure returned, with its column names, after checking the contract's
/// shape: exactly one result set, holding exactly one row.
#[derive(Debug, Clone)]
pub struct Reply {
    pub columns: Vec<String>,
    pub values: Vec<Value>,
    /// The warning count the server reported with the CALL.
    pub warnings: u16,
}

impl Reply {
    /// The value of column `name`, converted to `T`; panics (failing the test) when absent.
    pub fn get<T: FromValue>(&self, name: &str) -> T {
        let i = self
            .columns
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no column `{name}` in {:?}", self.columns));
        mysql_async::from_value_opt(self.values[i].clone())
            .unwrap_or_else(|e| panic!("column `{name}` = {:?}: {e}", self.values[i]))
    }
    pub fn flag(&self, name: &str) -> i64 {
        self.get(name)
    }
    pub fn term(&self) -> u64 {
        self.get("term")
    }
    pub fn remaining_ms(&self) -> i64 {
        self.get("lease_remaining_ms")
    }
    pub fn text(&self, name: &str) -> Option<String> {
        self.get(name)
    }
}

/// A server error as the client saw it (code 0 when the failure was not the server's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: u16,
    pub state: String,
    pub message: String,
}

impl Refusal {
    /// Checks the contract's rejected-input error: SQLSTATE 45000, and a message that begins
    /// `mysqlleader: <parameter> ` (the parameter is the first word, as the Rust layer reads it).
    pub fn assert_invalid(&self, parameter: &str, what: &str) {
        assert_eq!(self.state, "45000", "{what}: SQLSTATE of {self:?}");
        let prefix = format!("mysqlleader: {parameter} ");
        assert!(self.message.starts_with(&prefix), "{what}: message should begin {prefix:?}: {self:?}");
    }

    /// Checks the contract's fencing error: SQLSTATE 45001, 'mysqlleader: not the leader...'.
    pub fn assert_not_leader(&self, what: &str) {
        assert_eq!(self.state, "45001", "{what}: SQLSTATE of {self:?}");
        assert!(self.message.starts_with("mysqlleader: not the leader"), "{what}: message of {self:?}");
    }
}

pub fn refusal(err: mysql_async::Error) -> Refusal {
    match err {
        mysql_async::Error::Server(e) => Refusal { code: e.code, state: e.state, message: e.message },
        other => Refusal { code: 0, state: String::new(), message: other.to_string() },
    }
}

/// Reads every result set of a statement; the contract allows exactly one, of exactly one row.
async fn one_row<P: Protocol>(mut result: QueryResult<'_, '_, P>, sql: &str) -> Result<Reply, Refusal> {
    let mut sets: Vec<(Vec<String>, Vec<Row>)> = Vec::new();
    loop {
        let columns: Vec<String> = result
            .columns()
            .map(|cs| cs.iter().map(|c| c.name_str().into_owned()).collect())
            .unwrap_or_default();
        let rows: Vec<Row> = result.collect().await.map_err(refusal)?;
        // The OK packet that ends every CALL comes as a set without columns: not a result set.
        if !columns.is_empty() {
            sets.push((columns, rows));
        }
        if result.is_empty() {
            break;
        }
    }
    let warnings = result.warnings();
    drop(result);
    assert_eq!(sets.len(), 1, "`{sql}` must return exactly one result set, got {sets:?}");
    let (columns, mut rows) = sets.pop().unwrap();
    assert_eq!(rows.len(), 1, "`{sql}` must return exactly one row, got {rows:?}");
    let values = rows.pop().unwrap().unwrap();
    Ok(Reply { columns, values, warnings })
}

/// Runs `sql` as a prepared statement (binary protocol) with `params`.
pub async fn call(conn: &mut Conn, sql: &str, params: impl Into<Params>) -> Result<Reply, Refusal> {
    let result = sql.with(params.into()).run(&mut *conn).await.map_err(refusal)?;
    one_row(result, sql).await
}

/// Runs `sql` as plain text (text protocol), the way a command-line client sends it.
pub async fn call_text(conn: &mut Conn, sql: &str) -> Result<Reply, Refusal> {
    let result = sql.run(&mut *conn).await.map_err(refusal)?;
    one_row(result, sql).await
}

/// Like [`call`], for calls that must succeed.
pub async fn ok(conn: &mut Conn, sql: &str, params: impl Into<Params>) -> Reply {
    call(conn, sql, params).await.unwrap_or_else(|e| panic!("`{sql}` failed: {e:?}"))
}

/// Like [`call`], for calls that must fail; returns the error.
pub async fn refused(conn: &mut Conn, sql: &str, params: impl Into<Params>) -> Refusal {
    match call(conn, sql, params).await {
        Ok(reply) => panic!("`{sql}` should have failed, returned {reply:?}"),
        Err(e) => e,
    }
}

/// Runs statements that return no rows of interest; panics on error.
pub async fn exec(conn: &mut Conn, sql: &str) {
    conn.query_drop(sql).await.unwrap_or_else(|e| panic!("`{sql}` failed: {e}"));
}

/// A new connection of its own (not from a pool), so that sessions never get mixed up.
pub async fn connect(url: &str) -> Conn {
    Conn::new(Opts::from_url(url).expect("valid URL")).await.expect("connect")
}

// ---- The calls of the contract, with plain SQL ----

pub async fn campaign(c: &mut Conn, service_id: &str, node_id: &str, lease_ms: i64) -> Reply {
    ok(c, "CALL campaign(?, ?, ?)", (service_id, node_id, lease_ms)).await
}
pub async fn force_leader(c: &mut Conn, service_id: &str, node_id: &str, lease_ms: i64) -> Reply {
    ok(c, "CALL force_leader(?, ?, ?)", (service_id, node_id, lease_ms)).await
}
pub async fn am_i_leader(c: &mut Conn, service_id: &str, node_id: &str) -> Reply {
    ok(c, "CALL am_i_leader(?, ?)", (service_id, node_id)).await
}
pub async fn current_leader(c: &mut Conn, service_id: &str) -> Reply {
    ok(c, "CALL current_leader(?)", (service_id,)).await
}
pub async fn reelect(c: &mut Conn, service_id: &str) -> Reply {
    ok(c, "CALL reelect(?)", (service_id,)).await
}
pub async fn resign(c: &mut Conn, service_id: &str, node_id: &str) -> Reply {
    ok(c, "CALL resign(?, ?)", (service_id, node_id)).await
}
/// `CALL assert_leader` where it is meant to run: in a transaction, which this opens when none is
/// open (left open on success; a refusal rolls it back). Outside one the call itself is an error
/// (see `assert_leader_outside_a_transaction_fences_nothing_and_says_so`).
pub async fn assert_leader(c: &mut Conn, service_id: &str, node_id: &str, term: u64) -> Result<Reply, Refusal> {
    if !in_transaction(c).await {
        c.query_drop("START TRANSACTION").await.expect("START TRANSACTION");
    }
    call(c, "CALL assert_leader(?, ?, ?)", (service_id, node_id, term)).await
}
pub async fn set_expiry_event(c: &mut Conn, enabled: i64) -> Reply {
    ok(c, "CALL set_expiry_event(?)", (enabled,)).await
}

// ---- The state of the tables ----

/// Both tables, every column, in key order: compared before and after a call that must change nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub seats: Vec<Vec<Value>>,
    pub terms: Vec<Vec<Value>>,
}

pub async fn snapshot(conn: &mut Conn) -> Snapshot {
    let seats: Vec<Row> = conn.query("SELECT * FROM leader_election ORDER BY service_id").await.unwrap();
    let terms: Vec<Row> =
        conn.query("SELECT * FROM leader_election_history ORDER BY service_id, term").await.unwrap();
    Snapshot {
        seats: seats.into_iter().map(Row::unwrap).collect(),
        terms: terms.into_iter().map(Row::unwrap).collect(),
    }
}

/// Microseconds since 2000-01-01 of a DATETIME(6) column: exact arithmetic on the server's times.
pub fn us(column: &str) -> String {
    format!("TIMESTAMPDIFF(MICROSECOND, '2000-01-01', {column})")
}

/// The election row of a service ("the seat"), times in microseconds (see [`us`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seat {
    pub leader_id: Option<String>,
    pub term: u64,
    pub lease_ms: Option<u32>,
    pub term_started_us: Option<i64>,
    pub renewed_us: Option<i64>,
    pub expires_us: Option<i64>,
}

pub async fn seat(conn: &mut Conn, service_id: &str) -> Option<Seat> {
    let sql = format!(
        "SELECT CAST(leader_id AS CHAR CHARACTER SET utf8mb4), term, lease_ms, {}, {}, {} \
         FROM leader_election WHERE service_id = CAST(? AS BINARY)",
        us("term_started_at"),
        us("renewed_at"),
        us("lease_expires_at")
    );
    let row: Option<(Option<String>, u64, Option<u32>, Option<i64>, Option<i64>, Option<i64>)> =
        conn.exec_first(sql, (service_id,)).await.unwrap();
    row.map(|(leader_id, term, lease_ms, term_started_us, renewed_us, expires_us)| Seat {
        leader_id,
        term,
        lease_ms,
        term_started_us,
        renewed_us,
        expires_us,
    })
}

/// One row of `leader_election_history`, times in microseconds (see [`us`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub term: u64,
    pub leader_id: String,
    pub lease_ms: u32,
    pub began_us: i64,
    pub began_how: String,
    pub ended_us: Option<i64>,
    pub ended_how: Option<String>,
}

/// The history of a service, in term order.
pub async fn history(conn: &mut Conn, service_id: &str) -> Vec<Term> {
    let sql = format!(
        "SELECT term, CAST(leader_id AS CHAR CHARACTER SET utf8mb4), lease_ms, {}, began_how, {}, ended_how \
         FROM leader_election_history WHERE service_id = CAST(? AS BINARY) ORDER BY term",
        us("began_at"),
        us("ended_at")
    );
    let rows: Vec<(u64, String, u32, i64, String, Option<i64>, Option<String>)> =
        conn.exec(sql, (service_id,)).await.unwrap();
    rows.into_iter()
        .map(|(term, leader_id, lease_ms, began_us, began_how, ended_us, ended_how)| Term {
            term,
            leader_id,
            lease_ms,
            began_us,
            began_how,
            ended_us,
            ended_how,
        })
        .collect()
}

/// Checks that the history of `services` is whole: every term of a seat, 1 to its current one,
/// has its history row with `began_by`; every earlier term is closed; the current term is open
/// while the seat has a leader and closed once it is vacant. The seats and their history are
/// read in one consistent snapshot: read one after the other, an expiry (the event, on any
/// node of a cluster) committed between the two reads shows a term closed that the seat, read
/// a moment earlier, still held.
pub async fn assert_history_whole(admin: &mut Conn, services: &[String], what: &str) {
    exec(admin, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").await;
    exec(admin, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY").await;
    for service in services {
        let Some(s) = seat(admin, service).await else { continue };
        let rows: Vec<(u64, Option<String>, Option<String>)> = admin
            .exec("SELECT term, began_by, ended_how FROM leader_election_history \
                   WHERE service_id = CAST(? AS BINARY) ORDER BY term", (service.as_str(),))
            .await
            .unwrap();
        let terms: std::collections::BTreeSet<u64> = rows.iter().map(|r| r.0).collect();
        let missing: Vec<u64> = (1..=s.term).filter(|t| !terms.contains(t)).collect();
        let extra: Vec<u64> = terms.iter().copied().filter(|t| *t > s.term).collect();
        assert!(missing.is_empty() && extra.is_empty(),
                "{what}: {service} at term {}: terms with no history row {missing:?}, history rows of terms never taken {extra:?}", s.term);
        for (term, began_by, ended_how) in &rows {
            assert!(began_by.is_some(), "{what}: {service} term {term} has no began_by");
            let open_now = *term == s.term && s.leader_id.is_some();
            assert_eq!(ended_how.is_none(), open_now, "{what}: {service} term {term} (seat {s:?}): ended_how {ended_how:?}");
        }
    }
    exec(admin, "COMMIT").await;
}

// ---- Transactions and locks ----

/// Whether the server is MariaDB (else MySQL).
pub async fn is_mariadb(conn: &mut Conn) -> bool {
    let version: String = conn.query_first("SELECT VERSION()").await.unwrap().unwrap();
    version.contains("MariaDB")
}

/// Runs `call` on `victim`, cut short after about `seconds`: MariaDB's own statement timeout
/// (`SET STATEMENT max_statement_time`, which stops the statement running when the time is
/// up); on MySQL, whose `max_execution_time` covers plain SELECTs only, a `KILL QUERY` that
/// `killer` sends at that time, after a busy wait (the timer's millisecond would not sweep
/// the call). Ok(true) when the call was cut short (1969 / 1317), Ok(false) when it ended
/// first; on MySQL also waits for the kill, so that it cannot land on the next statement.
pub async fn cut_call(mariadb: bool, victim: &mut Conn, killer: &mut Conn, call: &str, seconds: f64)
    -> Result<bool, mysql_async::Error> {
    if mariadb {
        return match victim.query_drop(format!("SET STATEMENT max_statement_time = {seconds:.5} FOR {call}")).await {
            Err(mysql_async::Error::Server(e)) if e.code == 1969 => Ok(true),
            Err(e) => Err(e),
            Ok(()) => Ok(false),
        };
    }
    let id = victim.id();
    let kill = async {
        let at = std::time::Instant::now() + std::time::Duration::from_secs_f64(seconds);
        while std::time::Instant::now() < at {
            tokio::task::yield_now().await;
        }
        killer.query_drop(format!("KILL QUERY {id}")).await
    };
    let (called, killed) = tokio::join!(victim.query_drop(call), kill);
    killed?;
    match called {
        Err(mysql_async::Error::Server(e)) if e.code == 1317 => Ok(true),
        // MySQL 9.7 reports a KILL QUERY that lands in a multi-table UPDATE (release_lease's)
        // as 1105 "An error occurred in multi-table update": the statement was cut all the same.
        Err(mysql_async::Error::Server(e)) if e.code == 1105 && e.message.contains("multi-table update") => Ok(true),
        Err(e) => Err(e),
        Ok(()) => Ok(false),
    }
}

/// Whether the session has a transaction open: MariaDB's @@in_transaction, else (MySQL) the
/// session's entry in information_schema.INNODB_TRX.
pub async fn in_transaction<Q: Queryable>(conn: &mut Q) -> bool {
    match conn.query_first::<i64, _>("SELECT @@in_transaction").await {
        Ok(v) => v == Some(1),
        // MySQL has no @@in_transaction; it refuses to change the next transaction's
        // characteristics while one is open (1568), and outside one this sets what is set.
        Err(_) => match conn.query_drop("SET @@transaction_isolation = @@SESSION.transaction_isolation").await {
            Ok(()) => false,
            Err(mysql_async::Error::Server(e)) if e.code == 1568 => true,
            Err(e) => panic!("cannot tell whether a transaction is open: {e}"),
        },
    }
}

/// Proves that nobody holds a lock on any row of either table: another session locks them all
/// with NOWAIT (which fails at once on a held lock), then lets go.
pub async fn assert_no_locks_held(other: &mut Conn, what: &str) {
    exec(other, "START TRANSACTION").await;
    for table in ["leader_election", "leader_election_history"] {
        let sql = format!("SELECT COUNT(*) FROM {table} FOR UPDATE NOWAIT");
        if let Err(e) = other.query_drop(&sql).await {
            panic!("{what}: a lock on {table} is still held: {e}");
        }
    }
    exec(other, "ROLLBACK").await;
}

// ---- The server as the command-line client sees it ----

/// The parts of a `mysql://user:pass@host:port/db` URL the `mariadb` client needs.
#[derive(Debug, Clone)]
pub struct ClientArgs {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
}

pub fn client_args(url: &str) -> ClientArgs {
    let opts = Opts::from_url(url).expect("valid URL");
    ClientArgs {
        host: opts.ip_or_hostname().to_string(),
        port: opts.tcp_port(),
        user: opts.user().unwrap_or("root").to_string(),
        password: opts.pass().unwrap_or("").to_string(),
    }
}

/// The command-line client: MYSQLLEADER_TEST_SQL_CLIENT when set (scripts/testdb.sh sets it to
/// MySQL's own `mysql` for a MySQL server), else `mariadb`, else `mysql`; panics with what to
/// install when none exists.
pub fn client_program() -> String {
    if let Ok(client) = std::env::var("MYSQLLEADER_TEST_SQL_CLIENT") {
        if !client.is_empty() {
            return client;
        }
    }
    for name in ["mariadb", "mysql"] {
        let found = std::process::Command::new(name)
            .arg("--version")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if found {
            return name.to_string();
        }
    }
    panic!("neither `mariadb` nor `mysql` client found: install mariadb-client (Debian: apt-get install mariadb-client)");
}

/// The installation script (`mysqlleader sql`) for the kind of server `url` names.
pub async fn install_script(url: &str) -> String {
    let mut c = connect(url).await;
    let server = if is_mariadb(&mut c).await { mysqlleader::Server::MariaDb } else { mysqlleader::Server::MySql };
    mysqlleader::install_sql_for(server)
}

/// Pipes `script` into the command-line client connected to `db` (over TCP, with the URL's
/// account) and returns (success, stdout, stderr).
pub fn run_client(url: &str, db: &str, script: &str) -> (bool, String, String) {
    use std::io::Write;
    let a = client_args(url);
    let mut child = std::process::Command::new(client_program())
        .args([
            "--no-defaults",
            "--protocol=TCP",
            &format!("--host={}", a.host),
            &format!("--port={}", a.port),
            &format!("--user={}", a.user),
            &format!("--password={}", a.password),
            "--default-character-set=utf8mb4",
            "--batch",
            db,
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the command-line client");
    // A client that stops at an error closes its input early: what it said is in its output.
    if let Err(e) = child.stdin.take().unwrap().write_all(script.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "writing the script to the client: {e}");
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Held for their whole run by the tests that read or change MySQL's global
/// `log_bin_trust_function_creators` (the tests of this binary run at once, and one turns the
/// setting on for a moment, as the README's DBA does: the others must not see it then).
pub static SERVER_SETTINGS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
