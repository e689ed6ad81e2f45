//! Installing the SQL, against the real server: `migrate()` twice, after an interrupted first
//! run, and from several processes at once; and the `install_sql()` script applied with the
//! `mariadb`/`mysql` command-line client, which installs the same objects and records them so that
//! a later `migrate()` applies nothing.

use crate::{common, sql_support};
use common::TestDb;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Pool};
use sql_support::*;

const V1: &str = include_str!("../sql/V1__election_tables.sql");
const V2: &str = include_str!("../sql/V2__procedures.sql");

/// Every versioned migration, in order: the versions of the files `sql/V<n>__*.sql`.
fn all() -> Vec<i32> {
    let mut versions: Vec<i32> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/sql"))
        .expect("sql/")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_prefix('V')?.split_once("__")?.0.parse().ok()
        })
        .collect();
    versions.sort_unstable();
    assert_eq!(versions, (1..=versions.len() as i32).collect::<Vec<_>>(), "versions without a gap");
    versions
}

const PROCEDURES: [&str; 8] =
    ["am_i_leader", "assert_leader", "campaign", "current_leader", "force_leader", "reelect", "resign", "set_expiry_event"];

/// The versions a migrate() call applied.
async fn migrate(pool: &Pool) -> Vec<i32> {
    mysqlleader::migrate(pool).await.expect("migrate").iter().map(|m| m.version).collect()
}

/// The versions recorded in mysqlleader_schema_history.
async fn recorded(c: &mut Conn) -> Vec<i32> {
    c.query("SELECT version FROM mysqlleader_schema_history ORDER BY version").await.unwrap()
}

/// Every object of the contract is there, the event switched off unless `event` says otherwise,
/// and the procedures work: a campaign on a fresh service leads at term 1.
async fn assert_installed(c: &mut Conn, what: &str) {
    let procedures: Vec<String> = c
        .query("SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE' ORDER BY 1")
        .await
        .unwrap();
    for p in PROCEDURES {
        assert!(procedures.iter().any(|q| q == p), "{what}: procedure {p} missing from {procedures:?}");
    }
    let tables: Vec<String> = c
        .query("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1")
        .await
        .unwrap();
    for t in ["leader_election", "leader_election_history", "leader_election_terms"] {
        assert!(tables.iter().any(|q| q == t), "{what}: {t} missing from {tables:?}");
    }
    let events: Vec<String> = c.query("SELECT EVENT_NAME FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE()").await.unwrap();
    assert_eq!(events, vec!["leader_election_expire"], "{what}");
    let triggers: Vec<String> =
        c.query("SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()").await.unwrap();
    assert_eq!(triggers, vec!["leader_election_record_term"], "{what}");
    let service = format!("check {what}");
    let r = campaign(c, &service, "é🚀", 60_000).await;
    assert_eq!((r.flag("is_leader"), r.text("leader_id").as_deref()), (1, Some("é🚀")), "{what}: {r:?}");
}

/// Everything a client can see of the installed objects, to compare two installations:
/// tables and their columns, procedures with their parameters and security, the event.
async fn schema_outline(c: &mut Conn) -> Vec<String> {
    let queries = [
        "SELECT CONCAT_WS(' ', TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COALESCE(COLUMN_DEFAULT, '-'), COLUMN_KEY) \
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME <> 'mysqlleader_schema_history' \
         ORDER BY TABLE_NAME, ORDINAL_POSITION",
        "SELECT CONCAT_WS(' ', ROUTINE_NAME, ROUTINE_TYPE, SECURITY_TYPE, SQL_DATA_ACCESS) \
         FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY ROUTINE_NAME",
        "SELECT CONCAT_WS(' ', SPECIFIC_NAME, ORDINAL_POSITION, COALESCE(PARAMETER_NAME, '-'), DTD_IDENTIFIER, \
         COALESCE(CHARACTER_SET_NAME, '-')) \
         FROM information_schema.PARAMETERS WHERE SPECIFIC_SCHEMA = DATABASE() ORDER BY SPECIFIC_NAME, ORDINAL_POSITION",
        "SELECT CONCAT_WS(' ', EVENT_NAME, EVENT_DEFINITION, INTERVAL_VALUE, INTERVAL_FIELD, STATUS, ON_COMPLETION) \
         FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE()",
        "SELECT CONCAT_WS(' ', TABLE_NAME, SECURITY_TYPE) FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE()",
        "SELECT CONCAT_WS(' ', TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION, EVENT_OBJECT_TABLE) \
         FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() ORDER BY TRIGGER_NAME",
    ];
    let mut outline = Vec::new();
    for q in queries {
        let rows: Vec<String> = c.query(q).await.unwrap();
        outline.extend(rows);
    }
    outline
}

/// The first migrate() applies V1..V5 and records them; the second applies nothing.
#[tokio::test]
async fn migrating_twice_applies_nothing_the_second_time() {
    let db = TestDb::empty("migrations_twice").await;
    let mut c = connect(&db.url).await;
    assert_eq!(migrate(&db.pool).await, all());
    assert_eq!(recorded(&mut c).await, all());
    let status: String =
        c.query_first("SELECT STATUS FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE()").await.unwrap().unwrap();
    assert_eq!(status, "DISABLED", "the event is installed switched off");
    let outline = schema_outline(&mut c).await;
    assert_installed(&mut c, "first migrate").await;
    assert_eq!(migrate(&db.pool).await, Vec::<i32>::new(), "the second migrate applies nothing");
    assert_eq!(recorded(&mut c).await, all());
    assert_eq!(schema_outline(&mut c).await, outline);
    let third = mysqlleader::install(&db.pool).await.unwrap();
    assert!(third.migrations.is_empty() && third.routines.is_empty(), "nothing changed, nothing applied: {third:?}");
    // A trigger dropped by hand is applied again, whatever its record says; a seat written
    // meanwhile (its change_how left set, its history row missing) renews again afterwards.
    exec(&mut c, "DROP TRIGGER leader_election_record_term").await;
    let taken = campaign(&mut c, "dropped", "x", 60_000).await;
    let again = mysqlleader::install(&db.pool).await.unwrap();
    assert_eq!(again.routines, vec!["leader_election_record_term"], "{again:?}");
    assert_eq!(schema_outline(&mut c).await, outline);
    let pending: i64 = c.query_first("SELECT COUNT(*) FROM leader_election WHERE change_how IS NOT NULL").await.unwrap().unwrap();
    assert_eq!(pending, 0, "no seat keeps a pending change");
    let renewed = campaign(&mut c, "dropped", "x", 60_000).await;
    assert_eq!((renewed.flag("is_leader"), renewed.term()), (1, taken.term()), "{renewed:?}");
    db.drop_db().await;
}

/// A first run cut short after V1 and the first half of V2 (MySQL commits DDL at once, so what
/// ran stays, but nothing is recorded): migrate() finishes the job.
#[tokio::test]
async fn migrate_finishes_a_run_cut_short_in_the_middle_of_v2() {
    let db = TestDb::empty("migrations_cut_v2").await;
    let mut c = connect(&db.url).await;
    exec(&mut c, V1).await;
    let half = V2.find("DROP PROCEDURE IF EXISTS force_leader;").expect("V2 installs force_leader");
    exec(&mut c, &V2[..half]).await;
    let made: Vec<String> = c.query("SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()").await.unwrap();
    assert!(made.contains(&"campaign".to_string()) && !made.contains(&"force_leader".to_string()), "{made:?}");

    assert_eq!(migrate(&db.pool).await, all());
    assert_installed(&mut c, "after the cut-short run").await;
    assert_eq!(migrate(&db.pool).await, Vec::<i32>::new());
    db.drop_db().await;
}

/// A run that applied everything but lost its records of V2 to V5, with a procedure and the
/// event gone: migrate() applies V2 to V5 again, restores them, and keeps every election row
/// and every term of the history.
#[tokio::test]
async fn migrate_reapplies_unrecorded_migrations_and_keeps_the_data() {
    let db = TestDb::migrated("migrations_lost_records").await;
    let mut c = connect(&db.url).await;
    campaign(&mut c, "svc", "a", 60_000).await;
    force_leader(&mut c, "svc", "b", 60_000).await;
    let data = snapshot(&mut c).await;
    let outline = schema_outline(&mut c).await;
    exec(&mut c, "DELETE FROM mysqlleader_schema_history WHERE version >= 2").await;
    exec(&mut c, "DROP PROCEDURE resign").await;
    exec(&mut c, "DROP EVENT leader_election_expire").await;

    assert_eq!(migrate(&db.pool).await, all()[1..].to_vec());
    assert_eq!(snapshot(&mut c).await, data, "re-running migrations never loses data");
    assert_eq!(schema_outline(&mut c).await, outline, "the same objects again");
    let r = resign(&mut c, "svc", "b").await;
    assert_eq!((r.flag("resigned"), r.term()), (1, 2), "{r:?}");
    assert_installed(&mut c, "after re-applying V2 to V5").await;
    db.drop_db().await;
}

/// Several services starting at once on an empty database each call migrate(): all succeed,
/// and each migration is applied exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_migrations_of_one_empty_database_all_succeed() {
    let db = TestDb::empty("migrations_concurrent").await;
    let pools: Vec<Pool> = (0..4).map(|_| Pool::new(mysql_async::Opts::from_url(&db.url).unwrap())).collect();
    let runs: Vec<_> = pools.iter().map(|p| {
        let p = p.clone();
        tokio::spawn(async move { mysqlleader::migrate(&p).await })
    }).collect();
    let mut applied = Vec::new();
    for run in runs {
        let done = run.await.unwrap().expect("every concurrent migrate succeeds");
        applied.extend(done.iter().map(|m| m.version));
    }
    applied.sort();
    assert_eq!(applied, all(), "each migration applied exactly once");
    let mut c = connect(&db.url).await;
    assert_eq!(recorded(&mut c).await, all());
    assert_installed(&mut c, "after concurrent migrations").await;
    for p in pools {
        p.disconnect().await.unwrap();
    }
    db.drop_db().await;
}

/// install_sql() piped into the command-line client (connected with the URL's host, port, user
/// and password) installs the same objects as migrate(), works, can be applied again, and
/// records the migrations so that a later migrate() applies nothing.
#[tokio::test]
async fn the_install_script_works_with_the_command_line_client() {
    let script = install_script(&common::server_url()).await;
    let reference = TestDb::migrated("migrations_reference").await;
    let mut r = connect(&reference.url).await;
    let expected = schema_outline(&mut r).await;

    let db = TestDb::empty("migrations_client").await;
    let (ok, out, err) = run_client(&db.url, &db.name, &script);
    assert!(ok, "the client failed to apply the script:\n{err}\n{out}");
    // It says what it installed, read back from the database, as its last line.
    let said = format!("mysqlleader {}: installed; schema version ", env!("CARGO_PKG_VERSION"));
    assert!(out.contains(&said) && out.contains("the history trigger in place"), "the script's last words:\n{out}");
    let mut c = connect(&db.url).await;
    assert_eq!(schema_outline(&mut c).await, expected, "the script installs what migrate() installs");
    assert_installed(&mut c, "by the client").await;
    let data = snapshot(&mut c).await;

    let (ok, out, err) = run_client(&db.url, &db.name, &script);
    assert!(ok, "applying the script a second time failed:\n{err}\n{out}");
    assert_eq!(snapshot(&mut c).await, data, "applying it again keeps the data");
    assert_eq!(recorded(&mut c).await, all());
    assert_eq!(migrate(&db.pool).await, Vec::<i32>::new(), "migrate() sees the script's migrations as applied");
    assert_eq!(schema_outline(&mut c).await, expected);

    // Over a database that migrate() installed, the script changes nothing either.
    let (ok, out, err) = run_client(&reference.url, &reference.name, &script);
    assert!(ok, "applying the script over migrate()'s installation failed:\n{err}\n{out}");
    assert_eq!(recorded(&mut r).await, all());
    assert_eq!(migrate(&reference.pool).await, Vec::<i32>::new());
    db.drop_db().await;
    reference.drop_db().await;
}

/// The script applied by a client left with its default character set (not utf8mb4) installs
/// procedures that still take and return non-ASCII ids exactly.
#[tokio::test]
async fn the_install_script_does_not_depend_on_the_clients_character_set() {
    let db = TestDb::empty("migrations_charset").await;
    let script = format!("SET NAMES latin1;\n{}", install_script(&db.url).await);
    let (ok, out, err) = run_client(&db.url, &db.name, &script);
    assert!(ok, "the client failed to apply the script:\n{err}\n{out}");
    let mut c = connect(&db.url).await;
    assert_installed(&mut c, "by a latin1 client").await;
    for (service, node) in [("sé", "nœud 🚀"), ("s'q\"", "ü ")] {
        assert_eq!(campaign(&mut c, service, node, 60_000).await.text("leader_id").as_deref(), Some(node));
        assert_eq!(current_leader(&mut c, service).await.text("leader_id").as_deref(), Some(node));
        assert_eq!(am_i_leader(&mut c, service, node).await.flag("is_leader"), 1);
        assert_leader(&mut c, service, node, 1).await.expect("assert_leader with a non-ASCII id");
        // The fence's share lock lasts until the transaction ends (on MySQL nothing ends an
        // idle one, and DROP DATABASE would wait for it).
        exec(&mut c, "COMMIT").await;
    }
    db.drop_db().await;
}

/// Upgrading a live system: callers keep calling `campaign`, `current_leader` and `am_i_leader`
/// while `install()` runs V6 to V9 again and re-applies every routine (their records deleted).
/// On MariaDB each routine is replaced in place (`CREATE OR REPLACE`), so no call fails; a
/// `DROP` then `CREATE` would fail calls landing in between with 1305 "PROCEDURE ... does not
/// exist". MySQL has no in-place replacement: the README ("Upgrading a live system") says what
/// a caller sees there.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn migrating_while_services_call_the_procedures_fails_no_call() {
    let db = TestDb::migrated("migrations_live").await;
    let mut c = connect(&db.url).await;
    let version: String = c.query_first("SELECT VERSION()").await.unwrap().unwrap();
    if !version.contains("MariaDB") {
        println!("{version}: no in-place replacement of procedures on this server (documented)");
        db.drop_db().await;
        return;
    }
    campaign(&mut c, "live", "n0", 60_000).await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let callers: Vec<_> = ["CALL campaign('live', 'n0', 60000)", "CALL current_leader('live')", "CALL am_i_leader('live', 'n1')"]
        .into_iter()
        .map(|sql| {
            let (url, stop) = (db.url.clone(), stop.clone());
            tokio::spawn(async move {
                let mut conn = connect(&url).await;
                let (mut calls, mut failures) = (0u64, Vec::new());
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    calls += 1;
                    if let Err(e) = call_text(&mut conn, sql).await {
                        failures.push(format!("{sql}: {e:?}"));
                    }
                }
                (calls, failures)
            })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    for _ in 0..5 {
        // Versions 6 on run again, and every routine is applied again (its record gone).
        exec(&mut c, "DELETE FROM mysqlleader_schema_history WHERE version >= 6").await;
        exec(&mut c, "DELETE FROM mysqlleader_routines").await;
        let installed = mysqlleader::install(&db.pool).await.expect("install");
        assert_eq!(installed.migrations.iter().map(|m| m.version).collect::<Vec<_>>(), all()[5..].to_vec());
        assert!(installed.routines.iter().any(|r| r == "campaign"), "{installed:?}");
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for caller in callers {
        let (calls, failures) = caller.await.unwrap();
        assert!(calls > 10, "the caller made only {calls} calls");
        assert!(failures.is_empty(), "{} of {calls} calls failed during the upgrade, first: {}", failures.len(), failures[0]);
    }
    assert_installed(&mut c, "after the live upgrade").await;
    db.drop_db().await;
}
