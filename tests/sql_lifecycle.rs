//! The SQL layer's lifecycle, against the real server: every install and upgrade path keeps
//! every account's grants (the DBA script for MariaDB, `install()` re-applying the routines,
//! and the MySQL script's DROP + CREATE + re-grant, which runs on MariaDB too), a live upgrade
//! never serves an older definition (a limited account never escapes its limit meanwhile), and
//! every refusal fits MySQL's 128 characters for a SIGNAL message.

use crate::{common, sql_support};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::TestDb;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};
use mysqlleader::procedures::{self, Account, Role};
use mysqlleader::Server;
use sql_support::*;

/// How many routines and views the installer applies: the files of sql/routines and sql/views.
fn repeatable_objects() -> usize {
    ["routines", "triggers", "views"]
        .iter()
        .map(|dir| std::fs::read_dir(format!("{}/sql/{dir}", env!("CARGO_MANIFEST_DIR"))).unwrap().count())
        .sum()
}

/// Creates `user`@'%' (dropped first), grants it `role` with `services` as `mysqlleader grant
/// --apply` does, and connects as it.
async fn account(admin: &mut Conn, db: &TestDb, user: &str, role: Role, services: &[&str]) -> Conn {
    exec(admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    exec(admin, &format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw-{user}'")).await;
    let services: Vec<String> = services.iter().map(|s| s.to_string()).collect();
    procedures::grant(&db.pool, &Account::parse(user).unwrap(), role, &services).await.expect("grant");
    let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(user)).pass(Some(format!("pw-{user}")));
    Conn::new(opts).await.expect("the account connects")
}

/// Each role's calls succeed, and what the role may not call is refused (1370): the grants are
/// exactly the role's.
async fn assert_roles_work(app: &mut Conn, operator: &mut Conn, observer: &mut Conn, what: &str) {
    let r = call_text(app, "CALL campaign('svc', 'a', 60000)").await.unwrap_or_else(|e| panic!("{what}: app campaign: {e:?}"));
    assert!(r.text("leader_id").is_some(), "{what}: {r:?}");
    call_text(app, "CALL am_i_leader('svc', 'a')").await.unwrap_or_else(|e| panic!("{what}: app am_i_leader: {e:?}"));
    call_text(operator, "CALL force_leader('svc', 'a', 60000)").await.unwrap_or_else(|e| panic!("{what}: operator force_leader: {e:?}"));
    call_text(operator, "CALL reelect('svc')").await.unwrap_or_else(|e| panic!("{what}: operator reelect: {e:?}"));
    call_text(observer, "CALL current_leader('svc')").await.unwrap_or_else(|e| panic!("{what}: observer current_leader: {e:?}"));
    let e = call_text(observer, "CALL campaign('svc', 'o', 60000)").await.expect_err("an observer may not campaign");
    assert_eq!(e.code, 1370, "{what}: {e:?}");
    let e = call_text(app, "CALL force_leader('svc', 'a', 60000)").await.expect_err("an app may not force");
    assert_eq!(e.code, 1370, "{what}: {e:?}");
    // An internal routine is granted to nobody: the public ones run it as their definer.
    let e = call_text(operator, "CALL leader_election_end_term('svc', 'reelected', NULL, NULL, NULL, @l, @t, @e, @n, @p)")
        .await
        .expect_err("an operator may not call an internal routine");
    assert_eq!(e.code, 1370, "{what}: {e:?}");
}

/// Install by script, grant the three roles, then every way of installing again: the script
/// again (on MySQL its form drops, creates and re-grants every procedure from
/// leader_election_grants: this suite runs on MySQL too), and `install()` re-applying every
/// routine. Every role's calls keep working after each.
#[tokio::test]
async fn grants_survive_every_install_and_upgrade_path() {
    let db = TestDb::empty("lifecycle_grants").await;
    let mut admin = connect(&db.url).await;
    let (ok, out, err) = run_client(&db.url, &db.name, &install_script(&db.url).await);
    assert!(ok, "the script failed:\n{err}\n{out}");
    let tag = std::process::id();
    let (a, o, w) = (format!("lc_app_{tag}"), format!("lc_op_{tag}"), format!("lc_obs_{tag}"));
    let mut app = account(&mut admin, &db, &a, Role::App, &[]).await;
    let mut operator = account(&mut admin, &db, &o, Role::Operator, &[]).await;
    let mut observer = account(&mut admin, &db, &w, Role::Observer, &[]).await;
    assert_roles_work(&mut app, &mut operator, &mut observer, "after the grants").await;
    let recorded: i64 = admin.query_first("SELECT COUNT(*) FROM leader_election_grants").await.unwrap().unwrap();
    let expected = [Role::App, Role::Operator, Role::Observer].iter().map(|r| r.procedures().len() as i64).sum::<i64>();
    assert_eq!(recorded, expected, "one row per account and procedure");

    let (ok, out, err) = run_client(&db.url, &db.name, &install_script(&db.url).await);
    assert!(ok, "the script failed the second time:\n{err}\n{out}");
    assert_roles_work(&mut app, &mut operator, &mut observer, "after the script again").await;

    exec(&mut admin, "DELETE FROM mysqlleader_routines").await;
    let installed = mysqlleader::install(&db.pool).await.expect("install");
    assert!(installed.migrations.is_empty(), "{installed:?}");
    assert_eq!(installed.routines.len(), repeatable_objects(), "every routine and the view again: {installed:?}");
    assert_roles_work(&mut app, &mut operator, &mut observer, "after install() re-applied every routine").await;

    // The MySQL form (DROP, CREATE, re-grant from leader_election_grants) is what the script
    // above is on MySQL: it dropped and re-created every procedure, and the grants held.
    if !is_mariadb(&mut admin).await {
        let script = install_script(&db.url).await;
        let dropped: Vec<&str> = script.lines().filter(|l| l.starts_with("DROP PROCEDURE IF EXISTS `")).collect();
        assert!(dropped.iter().any(|l| l.contains("`campaign`")), "the MySQL form drops campaign: {dropped:?}");
    }

    // The same DROP + CREATE without the re-grant loses the grants (the test can fail).
    let create: (String, String, String, String, String, String) =
        admin.query_first("SHOW CREATE PROCEDURE campaign").await.unwrap().unwrap();
    exec(&mut admin, "DROP PROCEDURE campaign").await;
    exec(&mut admin, &create.2).await;
    let e = call_text(&mut app, "CALL campaign('svc', 'a', 60000)").await.expect_err("re-created without the re-grant");
    assert_eq!(e.code, 1370, "{e:?}");
    exec(&mut admin, "CALL leader_election_regrant('campaign')").await;
    call_text(&mut app, "CALL campaign('svc', 'a', 60000)").await.expect("granted again from the record");

    // A script refuses to run on the other kind of server.
    let (other, says) = if is_mariadb(&mut admin).await { (Server::MySql, "this script is for MySQL") } else { (Server::MariaDb, "this script is for MariaDB") };
    let (ok, _, err) = run_client(&db.url, &db.name, &mysqlleader::install_sql_for(other));
    assert!(!ok && err.contains(says), "{err}");
    for user in [&a, &o, &w] {
        exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    }
    db.drop_db().await;
}

/// Five re-runs of the script and five forced re-applies of every routine while an account
/// limited to `billing%` calls in a loop inside and outside its pattern: no call inside fails,
/// none outside succeeds, and every term in the history has its `began_by`. On MySQL, which has
/// no CREATE OR REPLACE for routines, a call that lands between a routine's DROP and CREATE
/// fails with 1305, and one between the CREATE and its re-grant with 1370 (README): those, and
/// only those, are counted apart; an older definition never runs and no limit is ever lifted.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn live_reinstalls_never_fail_a_call_nor_lift_a_limit() {
    let db = TestDb::migrated("lifecycle_live").await;
    let mut admin = connect(&db.url).await;
    let mariadb = is_mariadb(&mut admin).await;
    let user = format!("lc_billing_{}", std::process::id());
    drop(account(&mut admin, &db, &user, Role::App, &["billing%"]).await);
    let stop = Arc::new(AtomicBool::new(false));
    let callers: Vec<_> = [("billing-1", true), ("orders-w", false)]
        .into_iter()
        .map(|(service, allowed)| {
            let (url, stop, user) = (db.url.clone(), stop.clone(), user.clone());
            tokio::spawn(async move {
                let opts = OptsBuilder::from_opts(Opts::from_url(&url).unwrap()).user(Some(user.clone())).pass(Some(format!("pw-{user}")));
                let mut conn = Conn::new(opts).await.unwrap();
                let sql = format!("CALL campaign('{service}', 'n1', 60000)");
                let (mut calls, mut wrong, mut recreating) = (0u64, Vec::new(), 0u64);
                while !stop.load(Ordering::SeqCst) {
                    calls += 1;
                    match (call_text(&mut conn, &sql).await, allowed) {
                        (Ok(_), true) => {}
                        (Err(e), false) if e.state == "45002" => {}
                        (Err(e), _) if !mariadb && (e.code == 1305 || e.code == 1370) => recreating += 1,
                        (outcome, _) => wrong.push(format!("{sql}: {outcome:?}")),
                    }
                }
                println!("{service}: {calls} calls, {recreating} landed while MySQL re-created the routine");
                (service, calls, wrong)
            })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    for round in 0..5 {
        let (ok, out, err) = run_client(&db.url, &db.name, &install_script(&db.url).await);
        assert!(ok, "round {round}: the script failed:\n{err}\n{out}");
        exec(&mut admin, "DELETE FROM mysqlleader_routines").await;
        let installed = mysqlleader::install(&db.pool).await.expect("install");
        assert_eq!(installed.routines.len(), repeatable_objects(), "round {round}: every routine re-applied");
    }
    stop.store(true, Ordering::SeqCst);
    for caller in callers {
        let (service, calls, wrong) = caller.await.unwrap();
        assert!(calls > 10, "{service}: only {calls} calls");
        assert!(wrong.is_empty(), "{service}: {} of {calls} calls went wrong, first: {}", wrong.len(), wrong[0]);
    }
    let no_author: i64 = admin
        .query_first("SELECT COUNT(*) FROM leader_election_history WHERE began_by IS NULL")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(no_author, 0, "every term records who began it");
    let outside: i64 = admin
        .query_first("SELECT COUNT(*) FROM leader_election WHERE service_id = 'orders-w'")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outside, 0, "no seat was ever created outside the limit");
    exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    db.drop_db().await;
}

/// Every refusal the procedures raise fits MySQL's 128 characters for MESSAGE_TEXT (MariaDB
/// allows more, so this server would not catch it), for the longest inputs: 128-character ids
/// of 4-byte characters, the longest account name the server takes, the largest numbers.
#[tokio::test]
async fn every_refusal_fits_128_characters_for_the_longest_inputs() {
    let db = TestDb::migrated("lifecycle_bounds").await;
    let mut admin = connect(&db.url).await;
    let long_id = "🚀".repeat(128);
    let over_id = "é".repeat(100_000);
    let huge = format!("{}.5", "9".repeat(34));
    let mut checks: Vec<(String, Refusal)> = Vec::new();
    for sql in [
        format!("CALL campaign('{over_id}', 'n', 1000)"),
        format!("CALL campaign('s', '{over_id}', 1000)"),
        format!("CALL campaign('s', 'n', {huge})"),
        format!("CALL campaign('s', 'n', -{huge})"),
        format!("CALL force_leader('{long_id}', 'n', 1{})", "0".repeat(34)),
        format!("CALL assert_leader('{long_id}', '{long_id}', {huge})"),
        "CALL set_expiry_event(99999999999999999999999999999999999.25)".to_string(),
    ] {
        let e = call_text(&mut admin, &sql).await.expect_err("refused");
        checks.push((sql.chars().take(60).collect(), e));
    }
    exec(&mut admin, "START TRANSACTION").await;
    let e = call_text(&mut admin, &format!("CALL assert_leader('{long_id}', '{long_id}', 18446744073709551615)")).await.unwrap_err();
    checks.push(("assert_leader at the largest term".into(), e));
    exec(&mut admin, "START TRANSACTION").await;
    for name in ["current_leader", "am_i_leader"] {
        let sql = if name == "current_leader" { format!("CALL current_leader('{long_id}')") } else { format!("CALL am_i_leader('{long_id}', '{long_id}')") };
        checks.push((format!("{name} inside a transaction"), call_text(&mut admin, &sql).await.unwrap_err()));
    }
    exec(&mut admin, "ROLLBACK").await;
    let e = call_text(&mut admin, "CALL assert_leader('s', 'n', 1)").await.unwrap_err();
    checks.push(("assert_leader outside a transaction".into(), e));

    // The longest account name this server takes that `grant` takes (80; MySQL: 32), limited.
    let mut user = String::new();
    for len in [80usize, 32] {
        let candidate: String = format!("lc{}", std::process::id()).chars().chain(std::iter::repeat('u')).take(len).collect();
        let _ = admin.query_drop(format!("DROP USER IF EXISTS '{candidate}'@'%'")).await;
        if admin.query_drop(format!("CREATE USER '{candidate}'@'%' IDENTIFIED BY 'pw-long'")).await.is_ok() {
            user = candidate;
            break;
        }
    }
    assert!(!user.is_empty(), "no long user name was accepted");
    procedures::grant(&db.pool, &Account::parse(&user).unwrap(), Role::Operator, &["x%".to_string()]).await.expect("grant");
    let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(user.clone())).pass(Some("pw-long"));
    let mut limited = Conn::new(opts).await.expect("the long account connects");
    for sql in [
        format!("CALL campaign('{long_id}', 'n', 1000)"),
        format!("CALL force_leader('{long_id}', 'n', 1000)"),
        format!("CALL current_leader('{long_id}')"),
        "CALL reelect('y')".to_string(),
        "CALL set_expiry_event(1)".to_string(),
        "CALL leader_election_prune_history(30)".to_string(),
    ] {
        let e = call_text(&mut limited, &sql).await.expect_err("outside the limit");
        assert_eq!(e.state, "45002", "{e:?}");
        assert!(e.message.starts_with(&format!("mysqlleader: access denied: account '{}", &user[..20])), "{e:?}");
        checks.push((format!("denied {}", sql.chars().take(20).collect::<String>()), e));
    }
    let e = call_text(&mut limited, "CALL reelect('y')").await.unwrap_err();
    assert!(e.message.ends_with("may not act on service 'y'"), "a short service is never cut: {e:?}");

    for (what, e) in &checks {
        assert!(e.message.starts_with("mysqlleader: "), "{what}: {e:?}");
        assert!(e.message.chars().count() <= 128, "{what}: {} characters: {:?}", e.message.chars().count(), e.message);
        assert!(e.state.starts_with("4500"), "{what}: {e:?}");
    }
    drop(limited);
    exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    db.drop_db().await;
}

/// The migration lock's name is 60 characters whatever the database's name (MySQL refuses
/// names over 64), and migrate() works in a database with the longest name there is.
#[tokio::test]
async fn the_migration_lock_fits_64_characters_for_the_longest_database_name() {
    let base = common::server_url();
    let name: String = format!("ml_lock_{}_", std::process::id()).chars().chain(std::iter::repeat('x')).take(64).collect();
    let mut admin = connect(&base).await;
    exec(&mut admin, &format!("DROP DATABASE IF EXISTS `{name}`")).await;
    exec(&mut admin, &format!("CREATE DATABASE `{name}`")).await;
    let url = common::url_with_db(&base, &name);
    let pool = mysql_async::Pool::new(Opts::from_url(&url).unwrap());
    let versions = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/sql")).unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with('V')).count();
    assert_eq!(mysqlleader::migrate(&pool).await.expect("migrate").len(), versions);
    let mut c = pool.get_conn().await.unwrap();
    let version: String = c.query_first("SELECT VERSION()").await.unwrap().unwrap();
    let server = mysqlleader::Server::from_version(&version);
    let len: i64 = c.query_first(format!("SELECT CHAR_LENGTH({})", procedures::migration_lock_name(server))).await.unwrap().unwrap();
    assert_eq!(len, 60);
    drop(c);
    pool.disconnect().await.unwrap();
    exec(&mut admin, &format!("DROP DATABASE `{name}`")).await;
}

/// An install never queues the election's calls behind a lock that an open transaction holds
/// (issue "Upgrades ... never stop an election", item 1). An application's fenced transaction
/// (it called `assert_leader`) and an idle reader of the history stay open while:
/// 1. `install` must re-apply the trigger and `assert_leader` (their records changed, as in an
///    upgrade): each attempt waits at most a second, so a renew of another seat waits no longer;
///    each wait is told as it happens, and with a budget of 4 s it gives up, naming the open
///    transactions;
/// 2. `install` again, with its default budget: it keeps trying, and finishes once the fence and
///    the reader have ended;
/// 3. the script is run again under the reader: it runs none of the versioned migrations' DDL a
///    second time (V11's `ALTER TABLE leader_election_history` waited for the reader with every
///    renew queued behind it, for as long as the reader stayed open). On MariaDB it finishes; on
///    MySQL the trigger's `LOCK TABLES ... WRITE` waits for the reader, for a second at most,
///    and stops the script there (it finishes once the reader has ended).
/// Meanwhile a node renews another seat every 50 ms: no renew fails (but, on MySQL, those that
/// land while the script re-creates `campaign`: README), none waits 3 s (before, every one
/// waited until the fence ended).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_install_under_an_open_fence_and_reader_never_queues_renews() {
    let db = TestDb::migrated("lifecycle_locks").await;
    let mut admin = connect(&db.url).await;
    let mariadb = is_mariadb(&mut admin).await;
    let term = campaign(&mut admin, "fenced", "f1", 60_000).await.term();
    campaign(&mut admin, "renewed", "r1", 60_000).await;
    let stop = Arc::new(AtomicBool::new(false));
    let renewer = {
        let (url, stop) = (db.url.clone(), stop.clone());
        tokio::spawn(async move {
            let mut conn = connect(&url).await;
            let (mut renews, mut longest, mut failures) = (0u64, std::time::Duration::ZERO, Vec::new());
            while !stop.load(Ordering::SeqCst) {
                let t0 = std::time::Instant::now();
                match call_text(&mut conn, "CALL campaign('renewed', 'r1', 60000)").await {
                    Ok(_) => {}
                    // MySQL's script re-creates `campaign` (DROP, CREATE, re-grant; README).
                    Err(e) if !mariadb && (e.code == 1305 || e.code == 1370) => {}
                    Err(e) => failures.push(format!("{e:?}")),
                }
                longest = longest.max(t0.elapsed());
                renews += 1;
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            (renews, longest, failures)
        })
    };
    let mut fence = connect(&db.url).await;
    let mut reader = connect(&db.url).await;
    let hold = async |fence: &mut Conn, reader: &mut Conn| {
        exec(fence, "START TRANSACTION").await;
        assert_leader(fence, "fenced", "f1", term).await.expect("the fence");
        exec(reader, "SET autocommit = 0").await;
        exec(reader, "SELECT COUNT(*) FROM leader_election_history").await;
    };
    let forget = "UPDATE mysqlleader_routines SET checksum = 'changed' WHERE name IN ('leader_election_record_term', 'assert_leader')";

    // 1.
    hold(&mut fence, &mut reader).await;
    exec(&mut admin, forget).await;
    let said = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let heard: mysqlleader::OnLockWait = {
        let said = said.clone();
        Arc::new(move |sentence: &str| said.lock().unwrap().push(sentence.to_string()))
    };
    let refused = mysqlleader::install_within(&db.pool, std::time::Duration::from_secs(4), Some(heard)).await.expect_err("the locks are held");
    let said = said.lock().unwrap().clone();
    assert!(!said.is_empty() && said.iter().all(|s| s.contains(&format!("connection {} ", fence.id()))), "each wait is told: {said:?}");
    let message = refused.to_string();
    assert!(message.contains("applying trigger leader_election_record_term") && message.contains("1205"), "{message}");
    for held in [fence.id(), reader.id()] {
        assert!(message.contains(&format!("connection {held} ")), "the error names the open transaction {held}: {message}");
    }

    // 2.
    let install = tokio::spawn({
        let pool = db.pool.clone();
        async move { mysqlleader::install(&pool).await }
    });
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert!(!install.is_finished(), "the install waits while the fence is open");
    exec(&mut fence, "COMMIT").await;
    exec(&mut reader, "COMMIT").await;
    let installed = install.await.unwrap().expect("the install finishes once the transactions have ended");
    assert_eq!(installed.routines, ["leader_election_record_term", "assert_leader"]);

    // 3.
    let script = install_script(&db.url).await;
    exec(&mut reader, "SELECT COUNT(*) FROM leader_election_history").await;
    let (url, name, text) = (db.url.clone(), db.name.clone(), script.clone());
    let (ok, out, err) = tokio::task::spawn_blocking(move || run_client(&url, &name, &text)).await.unwrap();
    if mariadb {
        assert!(ok, "the script, run again under an open reader of the history:\n{err}\n{out}");
    } else {
        assert!(!ok && err.contains("ERROR 1205"), "MySQL's trigger swap waits for the reader, a second at most:\n{err}\n{out}");
        let at: usize = err.split(" at line ").nth(1).and_then(|rest| rest.split(':').next()).and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no line in {err}"));
        let trigger = script.lines().position(|l| l.starts_with("-- ---- trigger leader_election_record_term")).unwrap();
        assert!(at > trigger, "the script stopped at line {at}, before the trigger (line {trigger}): a versioned statement waited");
    }
    exec(&mut reader, "COMMIT").await;
    let (url, name) = (db.url.clone(), db.name.clone());
    let (ok, out, err) = tokio::task::spawn_blocking(move || run_client(&url, &name, &script)).await.unwrap();
    assert!(ok, "the script once the reader has ended:\n{err}\n{out}");

    stop.store(true, Ordering::SeqCst);
    let (renews, longest, failures) = renewer.await.unwrap();
    println!("{renews} renews meanwhile, the longest {longest:?}");
    assert!(failures.is_empty(), "{} renews failed, first: {}", failures.len(), failures[0]);
    assert!(longest < std::time::Duration::from_secs(3), "a renew waited {longest:?} behind the installer");
    db.drop_db().await;
}

/// Going back (issue 39 item 4): over a schema that a newer release installed, this release's
/// script stops before it changes anything, saying the schema is newer (as `migrate` does:
/// tests/cli.rs), so no older routine replaces a newer one and, on MySQL, no grant is revoked:
/// an account granted by the newer release keeps calling, and its leader keeps its term.
#[tokio::test]
async fn the_script_refuses_a_schema_a_newer_release_installed() {
    let db = TestDb::migrated("script_newer").await;
    let mut admin = db.conn().await;
    let user = format!("ml_newer_{}", std::process::id());
    let mut app = account(&mut admin, &db, &user, Role::App, &[]).await;
    call_text(&mut app, "CALL campaign('svc', 'a', 600000)").await.expect("the app leads");
    exec(&mut admin, "INSERT INTO mysqlleader_schema_history (version, name, applied_on, checksum) VALUES (99, 'from_a_newer_release', '', '0')").await;
    exec(&mut admin, "UPDATE mysqlleader_routines SET checksum = 'newer' WHERE name = 'campaign'").await;
    let (ok, _, err) = run_client(&db.url, &db.name, &install_script(&db.url).await);
    assert!(!ok, "the script must stop: {err}");
    assert!(err.contains("the schema is newer than this script (V99 applied; it knows up to V"), "{err}");
    let kept: Option<String> = admin.query_first("SELECT checksum FROM mysqlleader_routines WHERE name = 'campaign'").await.unwrap();
    assert_eq!(kept.as_deref(), Some("newer"), "nothing was applied over the newer schema");
    call_text(&mut app, "CALL campaign('svc', 'a', 600000)").await.expect("the grant and the leadership are kept");
    drop(app);
    exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    drop(admin);
    db.drop_db().await;
}
