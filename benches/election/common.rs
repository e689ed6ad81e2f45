//! What every measurement shares: the command line, the benchmark databases, the classic recipe,
//! connections, and percentiles.

use std::time::{Duration, Instant};

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder, Pool, PoolConstraints};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub type Res<T> = std::result::Result<T, BoxError>;

/// The command line: `[--url URL] [--quick] [--json FILE] [--only SECTION,...]`.
pub struct Args {
    pub url: String,
    pub quick: bool,
    pub json: Option<String>,
    pub only: Option<Vec<String>>,
}

pub const SECTIONS: &[&str] = &["follower", "renew", "fence", "writes", "system", "library", "cabi", "failover", "scale", "sessions"];

impl Args {
    pub fn parse() -> Res<Args> {
        let mut url = None;
        let mut quick = false;
        let mut json = None;
        let mut only = None;
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            match a.as_str() {
                "--url" => url = Some(it.next().ok_or("--url needs a value")?),
                "--quick" => quick = true,
                "--json" => json = Some(it.next().ok_or("--json needs a file name")?),
                "--only" => {
                    let list: Vec<String> = it.next().ok_or("--only needs a list")?.split(',').map(str::to_string).collect();
                    for s in &list {
                        if !SECTIONS.contains(&s.as_str()) {
                            return Err(format!("--only: unknown section `{s}` (known: {})", SECTIONS.join(",")).into());
                        }
                    }
                    only = Some(list);
                }
                // `cargo bench` passes --bench to every bench target; filters are not used here.
                "--bench" => {}
                "-h" | "--help" => {
                    println!(
                        "usage: cargo bench --bench election -- [--url URL] [--quick] [--json FILE] [--only {}]\n\
                         The server is --url, else MYSQLLEADER_TEST_URL; scripts/bench.sh starts a throwaway one.",
                        SECTIONS.join(",")
                    );
                    std::process::exit(0);
                }
                other if other.starts_with("--url=") => url = Some(other["--url=".len()..].to_string()),
                other if other.starts_with("--json=") => json = Some(other["--json=".len()..].to_string()),
                other => return Err(format!("unknown argument `{other}` (try --help)").into()),
            }
        }
        let url = match url.or_else(|| std::env::var("MYSQLLEADER_TEST_URL").ok()) {
            Some(u) => u,
            None => {
                return Err("no server: pass --url mysql://user:pass@host:port/db or set MYSQLLEADER_TEST_URL, \
                            or run scripts/bench.sh, which starts a throwaway mariadbd"
                    .into())
            }
        };
        Ok(Args { url, quick, json, only })
    }

    pub fn wants(&self, section: &str) -> bool {
        self.only.as_ref().is_none_or(|l| l.iter().any(|s| s == section))
    }
}

/// The URL of `base` with its database replaced by `db` (query parameters kept).
pub fn url_with_db(base: &str, db: &str) -> String {
    let (no_query, query) = match base.split_once('?') {
        Some((a, q)) => (a, format!("?{q}")),
        None => (base, String::new()),
    };
    let head = no_query.rsplit_once('/').map(|(h, _)| h).unwrap_or(no_query);
    let head = if head.ends_with('/') || head.ends_with(':') { no_query } else { head };
    format!("{head}/{db}{query}")
}

/// `url` with `reset_connection=false`: a pool that does not reset a connection (which also
/// drops the server's per-session caches of prepared statements and stored procedures) every
/// time it takes it back.
pub fn no_reset(url: &str) -> String {
    if url.contains("reset_connection=") {
        return url.to_string();
    }
    format!("{url}{}reset_connection=false", if url.contains('?') { '&' } else { '?' })
}

/// The benchmark's databases on the server: the schema as migrated from `sql/`, and one scratch
/// database per other `campaign` (the same schema with that procedure in place of the tree's).
pub struct Dbs {
    pub url: String,
    pub proposals: Vec<Proposal>,
}

pub struct Proposal {
    /// The suffix of its scratch database ([`ProposalSpec::db`]).
    pub db: &'static str,
    /// The contender's name in the tables, e.g. `campaign (V7)`.
    pub label: &'static str,
    pub url: String,
}

pub const BENCH_DB: &str = "mysqlleader_bench";

/// Another `campaign`, measured side by side with the tree's (see docs/benchmarks.md): installed
/// over the fully migrated schema (so every helper procedure it calls is the tree's) in a
/// scratch database of its own, `mysqlleader_bench_{db}`.
pub struct ProposalSpec {
    /// The suffix of its scratch database.
    pub db: &'static str,
    /// Its name in the tables.
    pub label: &'static str,
    /// The statements that replace the tree's routines: pairs of a DROP and a CREATE, `campaign`'s
    /// among them (one pair for the migrations' campaigns; for [`BEFORE_40`], every routine listed).
    pub campaign: fn() -> Vec<String>,
}

/// The contenders taken from the migration files themselves (applied migrations never change),
/// so that the benchmark keeps no fork of a procedure:
/// * V6's and V7's `campaign`, which read leader_election_access on every call (V7 against the
///   tree shows what V8's copy of access on the seat saves);
/// * the tree's (V8's) `campaign` with its access check cut out ([`campaign_without_access`]):
///   what any access check costs at all.
pub const PROPOSALS: &[ProposalSpec] = &[
    ProposalSpec { db: "V6", label: "campaign (V6)", campaign: campaign_v6 },
    ProposalSpec { db: "V7", label: "campaign (V7)", campaign: campaign_v7 },
    ProposalSpec { db: "tree_no_access", label: "campaign (tree), no access check", campaign: campaign_without_access },
    ProposalSpec { db: BEFORE_40_DB, label: "campaign (before issue 40)", campaign: before_40 },
];

/// The scratch database suffix of the routines before issue 40 (`mysqlleader_bench_before40`).
pub const BEFORE_40_DB: &str = "before40";

/// The routines of the hot paths as they were before issue 40 touched them (at `5085e36^`, commit
/// 1c2869c), copied from git into benches/election/before_40/ (its README says what changed
/// since): `campaign` with its body (before it became a call of leader_election_campaign),
/// `assert_leader`, and the helpers they call that changed since. Installed over the migrated
/// schema, helpers first; everything else they call is the tree's, unchanged since then.
pub const BEFORE_40: &[(&str, &str)] = &[
    ("leader_election_check_id", include_str!("before_40/leader_election_check_id.sql")),
    ("leader_election_check_number", include_str!("before_40/leader_election_check_number.sql")),
    ("leader_election_deny", include_str!("before_40/leader_election_deny.sql")),
    ("leader_election_refuse_xa", include_str!("before_40/leader_election_refuse_xa.sql")),
    ("leader_election_bound_idle_tx", include_str!("before_40/leader_election_bound_idle_tx.sql")),
    ("assert_leader", include_str!("before_40/assert_leader.sql")),
    ("campaign", include_str!("before_40/campaign.sql")),
];

/// [`BEFORE_40`] as statements: for each routine its DROP and its CREATE (each file holds
/// exactly one CREATE PROCEDURE of that name; anything else panics).
pub fn before_40() -> Vec<String> {
    let mut out = Vec::new();
    for (name, file) in BEFORE_40 {
        let stmts = split_sql(file);
        assert!(
            stmts.len() == 1 && stmts[0].starts_with(&format!("CREATE PROCEDURE {name}(")),
            "benches/election/before_40/{name}.sql: expected exactly one CREATE PROCEDURE {name}, found {} statements",
            stmts.len()
        );
        out.push(format!("DROP PROCEDURE IF EXISTS {name}"));
        out.push(stmts[0].clone());
    }
    out
}

pub const V6_SQL: &str = include_str!("../../sql/V6__access_audit_bounded_waits.sql");
pub const V7_SQL: &str = include_str!("../../sql/V7__lean_hot_paths.sql");
pub const V8_SQL: &str = include_str!("../../sql/V8__access_copy_on_the_seat.sql");

fn campaign_v6() -> Vec<String> {
    campaign_of(V6_SQL)
}

fn campaign_v7() -> Vec<String> {
    campaign_of(V7_SQL)
}

/// Step 1 of V8's `campaign` (the renew of a leader): the guard of its UPDATE that checks the
/// account against the seat's copy of access. Cut out, the preceding condition ends the statement.
pub const V8_RENEW_ACCESS_GUARD: (&str, &str) = (
    concat!(
        "               AND lease_expires_at > v_now\n",
        "               AND LOCATE(v_needle, access_denied) = 0;\n",
    ),
    "               AND lease_expires_at > v_now;\n",
);

/// Step 2 of V8's `campaign` (the read): the access check after the read of the seat, from its
/// copy or else from leader_election_access. Cut out whole.
pub const V8_READ_ACCESS_CHECK: (&str, &str) = (
    concat!(
        "    IF v_denied IS NULL OR v_needle IS NULL THEN\n",
        "        SET @mysqlleader_seat_term = NULL;\n",
        "        CALL leader_election_check_access(p_service_id);\n",
        "    ELSEIF LOCATE(v_needle, v_denied) > 0 THEN\n",
        "        SET @mysqlleader_seat_term = NULL;\n",
        "        CALL leader_election_deny(p_service_id);\n",
        "    END IF;\n",
    ),
    "",
);

/// `text` with `from` replaced by `to`; panics unless `from` occurs exactly once, so that a
/// contender built by substitution never silently measures another procedure than it says.
pub fn replace_exactly_once(text: &str, from: &str, to: &str, what: &str) -> String {
    let n = text.matches(from).count();
    assert!(
        n == 1,
        "benchmark contender `campaign (tree), no access check`: expected {what} exactly once in the campaign of \
         sql/V8__access_copy_on_the_seat.sql, found it {n} times; the procedure changed, update the substitution in \
         benches/election/common.rs (text sought:\n{from})"
    );
    text.replacen(from, to, 1)
}

/// The tree's (V8's) `campaign`, as in sql/V8__access_copy_on_the_seat.sql, with the per-service
/// access check removed by text substitution and everything else identical: the guard of step 1's
/// renew ([`V8_RENEW_ACCESS_GUARD`]) and the check after step 2's read ([`V8_READ_ACCESS_CHECK`]).
/// The row read still fetches access_denied (one column of the row it reads anyway), unused.
pub fn campaign_without_access() -> Vec<String> {
    let mut stmts = campaign_of(V8_SQL);
    assert_eq!(stmts.len(), 2, "V8: expected the DROP and the CREATE of campaign");
    let create = &stmts[1];
    let create = replace_exactly_once(create, V8_RENEW_ACCESS_GUARD.0, V8_RENEW_ACCESS_GUARD.1, "step 1's access guard");
    let create = replace_exactly_once(&create, V8_READ_ACCESS_CHECK.0, V8_READ_ACCESS_CHECK.1, "step 2's access check");
    // Nothing of the check is left in the code (comments aside).
    let code: Vec<&str> = create.lines().filter(|l| !l.trim_start().starts_with("--")).collect();
    for left in ["leader_election_check_access", "leader_election_deny", "LOCATE(", "leader_election_access"] {
        assert!(
            !code.iter().any(|l| l.contains(left)),
            "campaign (tree), no access check: `{left}` is still in the procedure after the substitutions"
        );
    }
    stmts[1] = create;
    stmts
}

/// The statements of `migration` that (re)create `campaign`: its DROP and its CREATE.
pub fn campaign_of(migration: &str) -> Vec<String> {
    split_sql(migration)
        .into_iter()
        .filter(|s| s.starts_with("DROP PROCEDURE IF EXISTS campaign") || s.starts_with("CREATE PROCEDURE campaign("))
        .collect()
}

/// Fresh benchmark databases (dropped first if a previous run left them).
pub async fn setup_dbs(base: &str) -> Res<Dbs> {
    let admin = Pool::new(Opts::from_url(base)?);
    let mut conn = admin.get_conn().await?;
    let mut all = vec![BENCH_DB.to_string()];
    all.extend(PROPOSALS.iter().map(|p| format!("{BENCH_DB}_{}", p.db)));
    for db in &all {
        conn.query_drop(format!("DROP DATABASE IF EXISTS `{db}`")).await?;
        conn.query_drop(format!("CREATE DATABASE `{db}`")).await?;
        let pool = Pool::new(Opts::from_url(&url_with_db(base, db))?);
        mysqlleader::migrate(&pool).await.map_err(|e| format!("migrate {db}: {e}"))?;
        let mut c = pool.get_conn().await?;
        c.query_drop(RECIPE_TABLE).await?;
        drop(c);
        pool.disconnect().await?;
    }
    let mut proposals = Vec::new();
    for p in PROPOSALS {
        let url = url_with_db(base, &format!("{BENCH_DB}_{}", p.db));
        let mut c = Conn::new(Opts::from_url(&url)?).await?;
        let stmts = (p.campaign)();
        if stmts.len() < 2 || stmts.len() % 2 != 0 {
            return Err(format!("{}: expected pairs of a DROP and a CREATE, found {} statements", p.label, stmts.len()).into());
        }
        for stmt in stmts {
            c.query_drop(stmt).await.map_err(|e| format!("installing {}: {e}", p.label))?;
        }
        c.disconnect().await?;
        proposals.push(Proposal { db: p.db, label: p.label, url });
    }
    drop(conn);
    admin.disconnect().await?;
    Ok(Dbs { url: url_with_db(base, BENCH_DB), proposals })
}

/// Drops the benchmark databases again.
pub async fn drop_dbs(base: &str) -> Res<()> {
    let mut conn = Conn::new(Opts::from_url(base)?).await?;
    conn.query_drop(format!("DROP DATABASE IF EXISTS `{BENCH_DB}`")).await?;
    conn.query_drop(format!("DROP USER IF EXISTS '{LIMITED_USER}'@'%'")).await?;
    for p in PROPOSALS {
        conn.query_drop(format!("DROP DATABASE IF EXISTS `{BENCH_DB}_{}`", p.db)).await?;
    }
    conn.disconnect().await?;
    Ok(())
}

/// Splits a file laid out like the migrations: a `CREATE PROCEDURE` ends with a line that is
/// exactly `END;`, any other statement with a line ending in `;`.
pub fn split_sql(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Vec<&str> = Vec::new();
    let mut compound = false;
    for line in sql.lines() {
        let t = line.trim();
        if cur.is_empty() && (t.is_empty() || t.starts_with("--")) {
            continue;
        }
        if cur.is_empty() && t.to_ascii_uppercase().starts_with("CREATE PROCEDURE") {
            compound = true;
        }
        cur.push(line);
        let done = if compound { line == "END;" } else { t.ends_with(';') };
        if done {
            let s = cur.join("\n");
            out.push(s.trim_end().trim_end_matches(';').to_string());
            cur.clear();
            compound = false;
        }
    }
    out
}

// ---- The classic recipe ----
//
// One row per service; every node runs one INSERT ... ON DUPLICATE KEY UPDATE every tick. It
// keeps or takes the seat when it is the leader or the leader's last_seen_active is older than
// the timeout (IF() in the UPDATE part, evaluated left to right, so the second IF sees the new
// leader_id). Written without VALUES(), as the contract asks of this project's own SQL.

pub const RECIPE_TABLE: &str = "CREATE TABLE IF NOT EXISTS recipe_election (
    service_id       VARCHAR(128) NOT NULL,
    leader_id        VARCHAR(128) NOT NULL,
    last_seen_active TIMESTAMP(6) NOT NULL,
    PRIMARY KEY (service_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4";

pub const RECIPE_SQL: &str = "INSERT INTO recipe_election (service_id, leader_id, last_seen_active)
VALUES (?, ?, NOW(6))
ON DUPLICATE KEY UPDATE
    leader_id = IF(last_seen_active < NOW(6) - INTERVAL ? MICROSECOND, ?, leader_id),
    last_seen_active = IF(leader_id = ?, NOW(6), last_seen_active)";

/// One tick of the recipe for `node` of `service`, with a timeout of `timeout`.
pub async fn recipe_tick(conn: &mut Conn, service: &str, node: &str, timeout: Duration) -> Res<()> {
    let us = timeout.as_micros() as u64;
    conn.exec_drop(RECIPE_SQL, (service, node, us, node, node)).await?;
    Ok(())
}

/// The physical floor of a follower's check: one primary-key read of the election row.
pub const FLOOR_SQL: &str =
    "SELECT leader_id, term, lease_expires_at, UTC_TIMESTAMP(6) FROM leader_election WHERE service_id = ?";

/// One recipe node: on its own connection, one tick every `period` from `offset` on, until
/// `stop` changes; the timeout is the recipe's failover budget.
pub fn spawn_recipe_node(
    mut conn: Conn,
    service: String,
    node: String,
    timeout: Duration,
    period: Duration,
    offset: Duration,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut next = tokio::time::Instant::now() + offset;
        loop {
            tokio::select! {
                _ = stop.changed() => break,
                _ = tokio::time::sleep_until(next) => {}
            }
            let _ = recipe_tick(&mut conn, &service, &node, timeout).await;
            next += period;
        }
        let _ = conn.disconnect().await;
    })
}

// ---- Connections ----

/// A pool of at most `max` connections for `url`, as the library would be used.
pub fn pool(url: &str, max: usize) -> Res<Pool> {
    let opts = Opts::from_url(url)?;
    let constraints = PoolConstraints::new(1.min(max), max).ok_or("pool constraints")?;
    let pool_opts = opts.pool_opts().clone().with_constraints(constraints);
    Ok(Pool::new(OptsBuilder::from_opts(opts).pool_opts(pool_opts)))
}

/// The account limited to the benchmark's services (per-service access, migration V6): the
/// follower and renew sections measure the tree's campaign through it too, to show what the
/// per-service check costs a limited account on the hot path.
pub const LIMITED_USER: &str = "mlbench_limited";

/// Creates [`LIMITED_USER`] with EXECUTE on `campaign` alone and access to `follow` and
/// `renew-%` only; returns a URL of `base_db_url` that logs in as it.
///
/// Since V14 each call reads the account's row of leader_election_account (its patterns), which
/// the flush writes from leader_election_access; this flushes, then checks that the row is there.
pub async fn limited_account(base_db_url: &str) -> Res<String> {
    let mut c = Conn::new(Opts::from_url(base_db_url)?).await?;
    c.query_drop(format!("DROP USER IF EXISTS '{LIMITED_USER}'@'%'")).await?;
    c.query_drop(format!("CREATE USER '{LIMITED_USER}'@'%' IDENTIFIED BY 'mlbench'")).await?;
    c.query_drop(format!("GRANT EXECUTE ON PROCEDURE `{BENCH_DB}`.campaign TO '{LIMITED_USER}'@'%'")).await?;
    c.query_drop(format!(
        "INSERT IGNORE INTO leader_election_access (account, service_pattern) VALUES ('{LIMITED_USER}', 'follow'), ('{LIMITED_USER}', 'renew-%')"
    ))
    .await?;
    c.query_drop("CALL leader_election_flush_access()").await?;
    let rows: i64 = c
        .query_first(format!("SELECT COUNT(*) FROM leader_election_account WHERE account = '{LIMITED_USER}'"))
        .await?
        .ok_or("no result counting the limited account's row")?;
    if rows != 1 {
        return Err(format!("limited account: no row in leader_election_account after leader_election_flush_access()").into());
    }
    c.disconnect().await?;
    let (scheme, rest) = base_db_url.split_once("://").ok_or("url without ://")?;
    let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    Ok(format!("{scheme}://{LIMITED_USER}:mlbench@{host}"))
}

/// `n` dedicated connections.
pub async fn conns(url: &str, n: usize) -> Res<Vec<Conn>> {
    let opts = Opts::from_url(url)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(Conn::new(opts.clone()).await?);
    }
    Ok(v)
}

// ---- Statistics ----

/// Latencies of one run, in microseconds, and its rate.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    pub calls: u64,
    pub secs: f64,
    pub lat_us: Vec<u32>,
    pub errors: u64,
}

impl Sample {
    pub fn rate(&self) -> f64 {
        if self.secs > 0.0 { self.calls as f64 / self.secs } else { 0.0 }
    }
    pub fn pct_ms(&mut self, p: f64) -> f64 {
        percentile_us(&mut self.lat_us, p) / 1000.0
    }
}

/// The p-th percentile (0..=100) by nearest rank; sorts in place.
pub fn percentile_us(v: &mut [u32], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_unstable();
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1] as f64
}

pub fn percentile_f(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let rank = ((p / 100.0) * s.len() as f64).ceil() as usize;
    s[rank.clamp(1, s.len()) - 1]
}

pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]) / 2.0 }
}

pub fn elapsed_us(t: Instant) -> u32 {
    u32::try_from(t.elapsed().as_micros()).unwrap_or(u32::MAX)
}

/// A small xorshift generator (no dependency needed for jitter and random delays).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    pub fn seeded() -> Rng {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(7);
        Rng::new(t ^ u64::from(std::process::id()) << 32)
    }
    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn duration(&mut self, max: Duration) -> Duration {
        max.mul_f64(self.next_f64())
    }
}

/// The server's pid, when it runs on this host: the process named `mariadbd` or `mysqld` whose pid
/// file (`@@pid_file`, read through the process's own root, so that a server in a chroot, as the
/// MySQL of scripts/testdb.sh, is found too) holds its own pid. None for a server elsewhere.
pub async fn server_pid(conn: &mut Conn) -> Res<Option<u32>> {
    let Some(file): Option<String> = conn.query_first("SELECT @@pid_file").await? else { return Ok(None) };
    let Ok(procs) = std::fs::read_dir("/proc") else { return Ok(None) };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if !matches!(comm.trim(), "mariadbd" | "mysqld") {
            continue;
        }
        let written = std::fs::read_to_string(format!("/proc/{pid}/root{file}")).ok();
        if written.and_then(|s| s.trim().parse::<u32>().ok()) == Some(pid) {
            return Ok(Some(pid));
        }
    }
    Ok(None)
}

/// CPU seconds (user + system) the process has used so far.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // After "(comm)": state is field 3 of stat(5), so utime (14) and stime (15) are at 11 and 12.
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some(ticks / hz)
}
