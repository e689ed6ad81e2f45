//! Least privilege, against the real server: an application account that holds only EXECUTE on
//! the schema can make every call of the contract (the procedures are SQL SECURITY DEFINER),
//! and can read or change no table directly.

use crate::{common, sql_support};
use std::time::Duration;

use common::TestDb;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};
use sql_support::*;

const LONG: i64 = 60_000;

/// An account `name`@'%' with only EXECUTE on the test's database; dropped by [`drop_account`].
async fn execute_only_account(admin: &mut Conn, db: &TestDb) -> (String, Conn) {
    let name = format!("app_{}", db.name.trim_start_matches("ml_"));
    let name: String = name.chars().take(32).collect(); // MySQL's limit on user names
    exec(admin, &format!("DROP USER IF EXISTS '{name}'@'%'")).await;
    exec(admin, &format!("CREATE USER '{name}'@'%' IDENTIFIED BY 'app-secret'")).await;
    exec(admin, &format!("GRANT EXECUTE ON `{}`.* TO '{name}'@'%'", db.name)).await;
    let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(&name)).pass(Some("app-secret"));
    let conn = Conn::new(opts).await.expect("the application account connects");
    (name, conn)
}

async fn drop_account(admin: &mut Conn, name: &str) {
    exec(admin, &format!("DROP USER IF EXISTS '{name}'@'%'")).await;
}

/// The account's grants are exactly USAGE plus EXECUTE on the schema (so the test proves what it says).
async fn assert_only_execute(app: &mut Conn, db: &TestDb) {
    let grants: Vec<String> = app.query("SHOW GRANTS").await.unwrap();
    assert_eq!(grants.len(), 2, "{grants:?}");
    assert!(grants[0].starts_with("GRANT USAGE ON *.*"), "{grants:?}");
    assert!(grants[1].starts_with(&format!("GRANT EXECUTE ON `{}`.*", db.name)), "{grants:?}");
}

/// Every call of the contract works for an EXECUTE-only account, including assert_leader inside
/// its own transaction and set_expiry_event; rejected input still gets the contract's errors.
#[tokio::test]
async fn an_execute_only_account_can_make_every_call() {
    let db = TestDb::migrated("privileges_calls").await;
    let mut admin = connect(&db.url).await;
    let (name, mut app) = execute_only_account(&mut admin, &db).await;
    assert_only_execute(&mut app, &db).await;

    let r = campaign(&mut app, "svc", "a", LONG).await;
    assert_eq!((r.flag("is_leader"), r.term()), (1, 1), "{r:?}");
    assert_eq!(campaign(&mut app, "svc", "b", LONG).await.flag("is_leader"), 0);
    assert_eq!(am_i_leader(&mut app, "svc", "a").await.flag("is_leader"), 1);
    assert_eq!(current_leader(&mut app, "svc").await.text("leader_id").as_deref(), Some("a"));
    exec(&mut app, "START TRANSACTION").await;
    let r = assert_leader(&mut app, "svc", "a", 1).await.expect("assert_leader in the application's transaction");
    assert_eq!((r.flag("is_leader"), r.term()), (1, 1));
    exec(&mut app, "COMMIT").await;
    assert_eq!(force_leader(&mut app, "svc", "b", LONG).await.term(), 2);
    assert_eq!(resign(&mut app, "svc", "a").await.flag("resigned"), 0);
    assert_eq!(resign(&mut app, "svc", "b").await.flag("resigned"), 1);
    campaign(&mut app, "svc", "c", LONG).await;
    assert_eq!(reelect(&mut app, "svc").await.text("previous_leader_id").as_deref(), Some("c"));
    assert_eq!(set_expiry_event(&mut app, 1).await.flag("event_enabled"), 1);
    assert_eq!(set_expiry_event(&mut app, 0).await.flag("event_enabled"), 0);

    refused(&mut app, "CALL campaign(?, ?, ?)", ("", "a", LONG)).await.assert_invalid("service_id", "empty service_id");
    refused(&mut app, "CALL set_expiry_event(?)", (2,)).await.assert_invalid("enabled", "enabled 2");
    assert_leader(&mut app, "svc", "c", 3).await.unwrap_err().assert_not_leader("after reelect");

    drop_account(&mut admin, &name).await;
    db.drop_db().await;
}

/// The expiry event switched on by the EXECUTE-only account still runs as the installer (its
/// definer is not the application account) and vacates an expired seat.
#[tokio::test]
async fn the_expiry_event_switched_on_by_the_application_account_works() {
    let db = TestDb::migrated("privileges_event").await;
    let mut admin = connect(&db.url).await;
    let (name, mut app) = execute_only_account(&mut admin, &db).await;
    let definer_before: String = admin
        .query_first("SELECT DEFINER FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE()")
        .await
        .unwrap()
        .unwrap();

    assert_eq!(set_expiry_event(&mut app, 1).await.flag("event_enabled"), 1);
    let (definer, status): (String, String) = admin
        .query_first("SELECT DEFINER, STATUS FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE()")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((definer.as_str(), status.as_str()), (definer_before.as_str(), "ENABLED"));
    assert!(!definer.starts_with(&format!("{name}@")), "the event must not run as the application account");

    campaign(&mut app, "svc", "a", 200).await;
    let mut vacated = false;
    for _ in 0..150 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if seat(&mut admin, "svc").await.unwrap().leader_id.is_none() {
            vacated = true;
            break;
        }
    }
    assert!(vacated, "the event (switched on by the application account) did not vacate the expired seat in 15 s");
    assert_eq!(history(&mut admin, "svc").await[0].ended_how.as_deref(), Some("expired"));
    assert_eq!(set_expiry_event(&mut app, 0).await.flag("event_enabled"), 0);

    drop_account(&mut admin, &name).await;
    db.drop_db().await;
}

/// The EXECUTE-only account can neither read nor change the tables, the view, or the migration
/// record, nor switch the event or drop a procedure by itself: every attempt is access denied.
#[tokio::test]
async fn an_execute_only_account_cannot_touch_the_tables() {
    let db = TestDb::migrated("privileges_tables").await;
    let mut admin = connect(&db.url).await;
    campaign(&mut admin, "svc", "a", LONG).await;
    let before = snapshot(&mut admin).await;
    let (name, mut app) = execute_only_account(&mut admin, &db).await;

    let mut attempts = Vec::new();
    for table in ["leader_election", "leader_election_history", "leader_election_terms", "mysqlleader_schema_history"] {
        attempts.push(format!("SELECT * FROM {table}"));
        attempts.push(format!("DELETE FROM {table}"));
        attempts.push(format!("UPDATE {table} SET term = term + 1"));
        attempts.push(format!("INSERT INTO {table} (service_id) VALUES ('x')"));
    }
    attempts.push("TRUNCATE TABLE leader_election".into());
    attempts.push("ALTER EVENT leader_election_expire ENABLE".into());
    attempts.push("DROP PROCEDURE campaign".into());
    attempts.push("CREATE TABLE leader_election_copy AS SELECT * FROM leader_election".into());
    for sql in &attempts {
        let e = app.query_drop(sql).await.map_err(refusal).expect_err(sql);
        // 1142 table, 1143 column, 1044 database, 1370 routine, 1227 privilege: access denied.
        assert!(
            [1142, 1143, 1044, 1370, 1227].contains(&e.code) && e.message.to_lowercase().contains("denied"),
            "`{sql}` should be denied, got {e:?}"
        );
    }
    assert_eq!(snapshot(&mut admin).await, before, "nothing changed");
    let status: String = admin
        .query_first("SELECT STATUS FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE()")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status, "DISABLED");

    drop_account(&mut admin, &name).await;
    db.drop_db().await;
}

/// The privileges the README lists for installing are complete: an account holding exactly
/// those on the schema installs it (every migration), and then every call of the contract works,
/// including the first campaign of a service (an INSERT and an UPDATE of the definer's), resign,
/// reelect, force_leader, a fenced transaction and the expiry event switch.
#[tokio::test]
async fn the_readme_install_privileges_are_enough_to_install_and_run_every_call() {
    let _settings = SERVER_SETTINGS.lock().await;
    const README_PRIVILEGES: &str =
        "CREATE, ALTER, DROP, CREATE ROUTINE, ALTER ROUTINE, EVENT, CREATE VIEW, TRIGGER, SELECT, INSERT, UPDATE, DELETE";
    const README_MYSQL_PRIVILEGES: &str = "LOCK TABLES";
    let db = TestDb::empty("privileges_install").await;
    let mut admin = connect(&db.url).await;
    let name: String = format!("inst_{}", db.name.trim_start_matches("ml_")).chars().take(32).collect();
    exec(&mut admin, &format!("DROP USER IF EXISTS '{name}'@'%'")).await;
    exec(&mut admin, &format!("CREATE USER '{name}'@'%' IDENTIFIED BY 'inst-secret'")).await;
    // On MySQL the README adds LOCK TABLES (the trigger is replaced under a table lock).
    let privileges = if is_mariadb(&mut admin).await { README_PRIVILEGES.to_string() } else { format!("{README_PRIVILEGES}, {README_MYSQL_PRIVILEGES}") };
    exec(&mut admin, &format!("GRANT {privileges} ON `{}`.* TO '{name}'@'%'", db.name)).await;
    let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(&name)).pass(Some("inst-secret"));
    let pool = mysql_async::Pool::new(opts.clone());
    let mut trust_restore = None;
    if !is_mariadb(&mut admin).await {
        // MySQL's binary log is on by default: creating the trigger then needs SUPER or the
        // server's log_bin_trust_function_creators=ON, which the README documents (a DBA sets
        // it once). Without it the installer stops and says so.
        let trust: i64 = admin.query_first("SELECT @@GLOBAL.log_bin_trust_function_creators").await.unwrap().unwrap();
        if trust == 0 {
            let refused = mysqlleader::migrate(&pool).await.expect_err("no trigger without the setting");
            assert!(refused.to_string().contains("log_bin_trust_function_creators=ON"), "{refused}");
            exec(&mut admin, "SET GLOBAL log_bin_trust_function_creators = ON").await;
            trust_restore = Some("SET GLOBAL log_bin_trust_function_creators = OFF");
        }
    }
    mysqlleader::migrate(&pool).await.expect("installs with the README's privileges");
    if let Some(restore) = trust_restore {
        exec(&mut admin, restore).await;
    }
    let versions = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/sql")).unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with('V')).count();
    let recorded: i64 = admin.query_first(format!("SELECT COUNT(*) FROM `{}`.mysqlleader_schema_history", db.name))
        .await.unwrap().unwrap();
    assert_eq!(recorded as usize, versions, "every migration applied and recorded");
    let mut c = Conn::new(opts).await.unwrap();
    let r = campaign(&mut c, "svc", "a", LONG).await;
    assert_eq!((r.flag("is_leader"), r.term()), (1, 1), "{r:?}");
    assert_eq!(campaign(&mut c, "svc", "a", LONG).await.term(), 1, "renewed");
    assert_eq!(am_i_leader(&mut c, "svc", "a").await.flag("is_leader"), 1);
    assert_eq!(current_leader(&mut c, "svc").await.text("leader_id").as_deref(), Some("a"));
    assert_leader(&mut c, "svc", "a", 1).await.expect("assert_leader in a transaction");
    exec(&mut c, "COMMIT").await;
    assert_eq!(force_leader(&mut c, "svc", "b", LONG).await.term(), 2);
    assert_eq!(reelect(&mut c, "svc").await.term(), 2);
    assert_eq!(campaign(&mut c, "svc", "c", LONG).await.term(), 3);
    assert_eq!(resign(&mut c, "svc", "c").await.flag("resigned"), 1);
    assert_eq!(set_expiry_event(&mut c, 1).await.flag("event_enabled"), 1);
    assert_eq!(set_expiry_event(&mut c, 0).await.flag("event_enabled"), 0);
    drop(c);
    let _ = pool.disconnect().await;
    drop_account(&mut admin, &name).await;
    db.drop_db().await;
}

/// The script stops before it changes anything when its installer lacks a privilege it needs
/// (issue "Upgrades", item 2): an installer without TRIGGER (the README's list but that) ran the
/// whole script with `--force` and installed every routine without the trigger, and from then
/// on no term change was recorded in the history. Now its first refusal is the trial trigger's,
/// before any table or routine of the election exists; with TRIGGER granted the same script
/// installs, and leaves no trial object behind.
#[tokio::test]
async fn the_script_stops_before_any_change_when_its_installer_lacks_a_privilege() {
    let _settings = SERVER_SETTINGS.lock().await;
    let db = TestDb::empty("privileges_script").await;
    let mut admin = connect(&db.url).await;
    let mariadb = is_mariadb(&mut admin).await;
    let name: String = format!("scr_{}", db.name.trim_start_matches("ml_")).chars().take(32).collect();
    exec(&mut admin, &format!("DROP USER IF EXISTS '{name}'@'%'")).await;
    exec(&mut admin, &format!("CREATE USER '{name}'@'%' IDENTIFIED BY 'scr-secret'")).await;
    let lock_tables = if mariadb { "" } else { ", LOCK TABLES" };
    exec(&mut admin, &format!(
        "GRANT CREATE, ALTER, DROP, CREATE ROUTINE, ALTER ROUTINE, EVENT, CREATE VIEW, SELECT, INSERT, UPDATE, DELETE{lock_tables} \
         ON `{}`.* TO '{name}'@'%'", db.name)).await;
    let a = client_args(&db.url);
    let url = format!("mysql://{name}:scr-secret@{}:{}/{}", a.host, a.port, db.name);
    let script = install_script(&db.url).await;
    let objects = async |admin: &mut Conn| -> Vec<String> {
        admin.query(format!(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{0}' \
             UNION ALL SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = '{0}' \
             UNION ALL SELECT EVENT_NAME FROM information_schema.EVENTS WHERE EVENT_SCHEMA = '{0}'", db.name)).await.unwrap()
    };

    if !mariadb && admin.query_first::<i64, _>("SELECT @@GLOBAL.log_bin_trust_function_creators").await.unwrap() == Some(0) {
        // MySQL's binary log: a trigger also needs SUPER or the server's setting (README), and
        // MySQL checks that first: the trial trigger's refusal says so, before any change.
        let (ok, _, err) = run_client(&url, &db.name, &script);
        assert!(!ok && err.contains("ERROR 1419"), "{err}");
        assert_eq!(objects(&mut admin).await, ["mysqlleader_install_probe"]);
        // SUPER for this installer (the setting is global: tests beside this one rely on it).
        exec(&mut admin, &format!("GRANT SUPER ON *.* TO '{name}'@'%'")).await;
    }
    let (ok, out, err) = run_client(&url, &db.name, &script);
    assert!(!ok, "the script ran without TRIGGER:\n{out}");
    assert!(err.contains("TRIGGER command denied"), "the refusal names the privilege: {err}");
    assert_eq!(objects(&mut admin).await, ["mysqlleader_install_probe"], "nothing but the trial table exists");

    exec(&mut admin, &format!("GRANT TRIGGER ON `{}`.* TO '{name}'@'%'", db.name)).await;
    let (ok, out, err) = run_client(&url, &db.name, &script);
    assert!(ok, "the script with every privilege:\n{err}\n{out}");
    let left = objects(&mut admin).await;
    assert!(left.iter().any(|o| o == "campaign") && !left.iter().any(|o| o.starts_with("mysqlleader_install_probe")), "{left:?}");
    let triggers: i64 = admin.query_first(format!(
        "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = '{}' AND TRIGGER_NAME = 'leader_election_record_term'",
        db.name)).await.unwrap().unwrap();
    assert_eq!(triggers, 1);
    exec(&mut admin, &format!("DROP USER IF EXISTS '{name}'@'%'")).await;
    db.drop_db().await;
}
