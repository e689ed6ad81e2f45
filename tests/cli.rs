//! The `mysqlleader` command-line tool against the real server: every subcommand, its text and
//! `--json` output (parsed back), its exit status, and the messages for the mistakes people
//! make. Each test has a database of its own (tests/common).

use crate::{common, cli_support};
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use cli_support::{cli, keys};
use mysql_async::prelude::Queryable;

/// `url` with its user and password replaced.
fn with_credentials(url: &str, user: &str, password: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let host_and_path = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    format!("{scheme}://{user}:{password}@{host_and_path}")
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn migrate_then_sql_and_the_not_migrated_message() {
    let db = common::TestDb::empty("cli_migrate").await;
    let url = Some(db.url.as_str());

    // Before migrating: every command says what to run.
    let out = cli(url, &["campaign", "billing", "web-1"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("run `mysqlleader migrate`"), "{}", out.stderr);
    assert!(out.stderr.contains(&db.name), "names the database: {}", out.stderr);
    let out = cli(url, &["status"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("run `mysqlleader migrate`"), "{}", out.stderr);

    let out = cli(url, &["migrate"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("applied migration V1__"), "{}", out.stdout);
    assert!(out.stdout.contains(&db.name), "{}", out.stdout);
    let again = cli(url, &["migrate"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(again.stdout.contains("nothing to apply"), "{}", again.stdout);
    assert_eq!(cli(url, &["campaign", "billing", "web-1"]).code, 0);

    // `sql` needs no server at all.
    let script = cli(None, &["sql"]);
    assert_eq!(script.code, 0, "{script:?}");
    assert!(script.stdout.contains("DELIMITER $$"));
    assert!(script.stdout.contains("CREATE OR REPLACE PROCEDURE campaign("));
    assert_eq!(script.stdout, mysqlleader::install_sql());
    let mysql = cli(None, &["sql", "--server", "mysql"]);
    assert_eq!(mysql.code, 0, "{mysql:?}");
    assert!(mysql.stdout.contains("DROP PROCEDURE IF EXISTS `campaign`;\nDELIMITER $$\nCREATE PROCEDURE campaign("), "{}", mysql.stdout);
    assert_eq!(mysql.stdout, mysqlleader::install_sql_for(mysqlleader::Server::MySql));
    db.drop_db().await;
}

#[tokio::test]
async fn campaign_am_i_leader_force_reelect_resign_text_json_and_exit_codes() {
    let db = common::TestDb::migrated("cli_calls").await;
    let url = Some(db.url.as_str());

    // campaign: 0 when it leads, 1 when it does not; the JSON keys are the result columns.
    let out = cli(url, &["campaign", "billing", "web-1", "--lease", "10s", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let j = out.json();
    assert_eq!(keys(&j), strs(&["is_leader", "leader_id", "term", "lease_remaining_ms"]));
    assert_eq!((j["is_leader"].as_u64(), j["leader_id"].as_str(), j["term"].as_u64()), (Some(1), Some("web-1"), Some(1)));
    assert!((9_000..=10_000).contains(&j["lease_remaining_ms"].as_u64().unwrap()), "{j}");
    let out = cli(url, &["campaign", "billing", "web-2", "--json"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!((out.json()["is_leader"].as_u64(), out.json()["leader_id"].as_str()), (Some(0), Some("web-1")));
    let out = cli(url, &["campaign", "billing", "web-2"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("web-2 does not lead billing: web-1 leads at term 1"), "{}", out.stdout);
    let out = cli(url, &["campaign", "billing", "web-1"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("web-1 leads billing at term 1"), "{}", out.stdout);

    // am-i-leader.
    let out = cli(url, &["am-i-leader", "billing", "web-1", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(keys(&out.json()), strs(&["is_leader", "term", "lease_remaining_ms"]));
    assert_eq!(out.json()["term"].as_u64(), Some(1));
    let out = cli(url, &["am-i-leader", "billing", "web-2", "--json"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.json()["is_leader"].as_u64(), Some(0));
    let out = cli(url, &["am-i-leader", "billing", "web-2"]);
    assert!(out.stdout.starts_with("no: web-2 does not lead billing"), "{}", out.stdout);

    // force: a new term at once.
    let out = cli(url, &["force", "billing", "web-2", "--lease", "5s", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let j = out.json();
    assert_eq!(keys(&j), strs(&["is_leader", "leader_id", "term", "lease_remaining_ms"]));
    assert_eq!((j["is_leader"].as_u64(), j["leader_id"].as_str(), j["term"].as_u64()), (Some(1), Some("web-2"), Some(2)));
    assert_eq!(cli(url, &["am-i-leader", "billing", "web-1"]).code, 1);
    let out = cli(url, &["force", "billing", "web-3"]);
    assert!(out.stdout.contains("web-3 now leads billing at term 3"), "{}", out.stdout);

    // reelect: ends the lease; the term stays until the next acquisition.
    let out = cli(url, &["reelect", "billing", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(keys(&out.json()), strs(&["previous_leader_id", "term"]));
    assert_eq!((out.json()["previous_leader_id"].as_str(), out.json()["term"].as_u64()), (Some("web-3"), Some(3)));
    let out = cli(url, &["reelect", "billing"]);
    assert!(out.stdout.contains("nobody led billing"), "{}", out.stdout);

    // resign: only the leader's resign ends a lease; both exit 0.
    assert_eq!(cli(url, &["campaign", "billing", "web-1"]).code, 0);
    let out = cli(url, &["resign", "billing", "web-2", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(keys(&out.json()), strs(&["resigned", "term"]));
    assert_eq!((out.json()["resigned"].as_u64(), out.json()["term"].as_u64()), (Some(0), Some(4)));
    let out = cli(url, &["resign", "billing", "web-1"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("web-1 resigned from billing (term 4)"), "{}", out.stdout);
    assert_eq!(cli(url, &["am-i-leader", "billing", "web-1"]).code, 1);

    // Input the procedures reject: exit 2, and the message names the parameter.
    let out = cli(url, &["campaign", "billing", ""]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("node_id"), "{}", out.stderr);
    let out = cli(url, &["force", "billing", "web-1", "--lease", "25h"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("lease_ms"), "{}", out.stderr);
    db.drop_db().await;
}

/// `reelect` and `resign` of a service no node has ever led (a typo, most likely): exit 2 with
/// a message naming the service, nothing on standard output, and nothing written. A service
/// that has had a leader but has none now is no error; a row left at term 0 (never led) counts
/// as unknown.
#[tokio::test]
async fn reelect_and_resign_of_a_service_nobody_ever_led_are_errors() {
    let db = common::TestDb::migrated("cli_unknown").await;
    let url = Some(db.url.as_str());
    let mut admin = db.conn().await;
    assert_eq!(cli(url, &["campaign", "billing", "web-1"]).code, 0);

    for args in [
        vec!["reelect", "biling"],
        vec!["reelect", "biling", "--json"],
        vec!["resign", "biling", "web-1"],
        vec!["resign", "biling", "web-1", "--json"],
    ] {
        let out = cli(url, &args);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(out.stderr.contains("unknown service 'biling'"), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("'billing'"), "names the known services: {}", out.stderr);
        assert!(out.stderr.contains("nothing was changed"), "{args:?}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{args:?}: nothing on standard output");
    }
    let rows: Option<i64> = admin.query_first("SELECT COUNT(*) FROM leader_election WHERE service_id = 'biling'").await.unwrap();
    assert_eq!(rows, Some(0), "the calls wrote nothing");

    // A row that was never led (term 0) is unknown too.
    admin.query_drop("INSERT INTO leader_election (service_id) VALUES ('ghost')").await.unwrap();
    let out = cli(url, &["reelect", "ghost"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("unknown service 'ghost'"), "{}", out.stderr);
    assert_eq!(cli(url, &["resign", "ghost", "n1"]).code, 2);

    // Known services: leading, or vacant after a term, are no error.
    assert_eq!(cli(url, &["resign", "billing", "web-2"]).code, 0, "a node that does not lead");
    let out = cli(url, &["reelect", "billing"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("ended the lease of web-1"), "{}", out.stdout);
    let out = cli(url, &["reelect", "billing"]);
    assert_eq!(out.code, 0, "a vacant seat: {out:?}");
    assert!(out.stdout.contains("nobody led billing (term 1)"), "{}", out.stdout);
    let out = cli(url, &["resign", "billing", "web-1", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!((out.json()["resigned"].as_u64(), out.json()["term"].as_u64()), (Some(0), Some(1)));
    drop(admin);
    db.drop_db().await;
}

/// `grant` without `--apply` only prints: it needs no server, no URL when `--database` names the
/// schema's database, and never connects (an unreachable URL still works: its database is used).
#[test]
fn grant_without_apply_needs_no_connection() {
    let grant = "GRANT EXECUTE ON PROCEDURE `shop`.`campaign` TO 'app'@'%';";
    let out = cli(None, &["grant", "app", "--role", "app", "--database", "shop"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.lines().any(|l| l == grant), "{}", out.stdout);
    assert!(out.stdout.contains("`shop`.`leader_election_grants`"), "{}", out.stdout);

    // A URL nobody listens at: only its database is read from it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = cli(Some(&format!("mysql://root:pw@127.0.0.1:{port}/shop")), &["grant", "app", "--role", "app"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.lines().any(|l| l == grant), "{}", out.stdout);
    // --database wins over the URL's.
    let out = cli(Some(&format!("mysql://root:pw@127.0.0.1:{port}/other")), &["grant", "app", "--role", "app", "--database", "shop"]);
    assert!(out.stdout.lines().any(|l| l == grant), "{out:?}");

    // Nothing names the database: exit 2, and the message says what to pass.
    let out = cli(None, &["grant", "app", "--role", "app"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--database NAME"), "{}", out.stderr);
    let out = cli(Some(&format!("mysql://root:pw@127.0.0.1:{port}")), &["grant", "app", "--role", "app"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("names no database") && out.stderr.contains("--database"), "{}", out.stderr);
    assert_eq!(cli(None, &["grant", "app", "--role", "app", "--database", ""]).code, 2);
    // --apply acts on the URL's database: --database does not go with it.
    let out = cli(None, &["grant", "app", "--role", "app", "--database", "shop", "--apply"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--apply"), "{}", out.stderr);
}

#[tokio::test]
async fn status_of_every_service_and_of_one_with_its_terms() {
    let db = common::TestDb::migrated("cli_status").await;
    let url = Some(db.url.as_str());

    let out = cli(url, &["status"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("no services yet"), "{}", out.stdout);
    assert_eq!(cli(url, &["status", "--json"]).json(), serde_json::json!({ "services": [] }));

    assert_eq!(cli(url, &["campaign", "billing", "web-1", "--lease", "30s"]).code, 0);
    assert_eq!(cli(url, &["force", "billing", "web-2", "--lease", "30s"]).code, 0);
    assert_eq!(cli(url, &["campaign", "mailer", "m-1", "--lease", "30s"]).code, 0);
    assert_eq!(cli(url, &["resign", "mailer", "m-1"]).code, 0);

    // Every service: a table.
    let out = cli(url, &["status"]);
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines[0].starts_with("SERVICE") && lines[0].contains("LEADER") && lines[0].contains("TERM"), "{}", out.stdout);
    assert!(lines[1].starts_with("billing") && lines[1].contains("web-2") && lines[1].contains("forced"), "{}", out.stdout);
    assert!(lines[2].starts_with("mailer") && lines[2].contains("(vacant)") && lines[2].contains("m-1 resigned"), "{}", out.stdout);
    assert_eq!(lines.get(3).copied(), Some("2 services: 1 led by 1 node, 1 without a leader"), "{}", out.stdout);

    let j = cli(url, &["status", "--json"]).json();
    let services = j["services"].as_array().unwrap();
    assert_eq!(services.len(), 2);
    assert_eq!(services[0]["service_id"], "billing");
    assert_eq!(services[0]["leader_id"], "web-2");
    assert_eq!(services[0]["term"], 2);
    assert!(services[0]["lease_remaining_ms"].as_u64().unwrap() > 20_000);
    assert_eq!(services[0]["began_how"], "forced");
    assert_eq!(services[1]["leader_id"], serde_json::Value::Null);
    assert_eq!(services[1]["lease_remaining_ms"], 0);
    assert_eq!(services[1]["ended_how"], "resigned");
    assert_eq!(services[1]["last_leader_id"], "m-1");

    // One service: its seat and its recent terms, newest first.
    let out = cli(url, &["status", "billing"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.starts_with("service billing: web-2 leads at term 2 (forced)"), "{}", out.stdout);
    assert!(out.stdout.contains("recent terms"), "{}", out.stdout);
    assert!(out.stdout.contains("forced_out"), "{}", out.stdout);
    let j = cli(url, &["status", "billing", "--json"]).json();
    assert_eq!((j["leader_id"].as_str(), j["term"].as_u64()), (Some("web-2"), Some(2)));
    let terms = j["terms"].as_array().unwrap();
    assert_eq!(terms.len(), 2);
    assert_eq!((terms[0]["term"].as_u64(), terms[0]["leader_id"].as_str()), (Some(2), Some("web-2")));
    assert_eq!((terms[0]["began_how"].as_str(), terms[0]["ended_how"].as_str()), (Some("forced"), None));
    assert_eq!((terms[1]["term"].as_u64(), terms[1]["ended_how"].as_str()), (Some(1), Some("forced_out")));
    let out = cli(url, &["status", "mailer"]);
    assert!(out.stdout.starts_with("service mailer: no leader"), "{}", out.stdout);

    // A service nobody ever campaigned for: exit 2, and the names there are.
    let out = cli(url, &["status", "biling"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("unknown service 'biling'"), "{}", out.stderr);
    assert!(out.stderr.contains("'billing'"), "{}", out.stderr);
    db.drop_db().await;
}

#[tokio::test]
async fn event_on_off_and_status() {
    let db = common::TestDb::migrated("cli_event").await;
    let url = Some(db.url.as_str());

    let j = cli(url, &["event", "status", "--json"]).json();
    assert_eq!(j["event_enabled"], 0);
    assert!(j["event_scheduler"].is_string());
    assert_eq!(j["running"], 0);
    let out = cli(url, &["event", "status"]);
    assert!(out.stdout.contains("leader_election_expire: off"), "{}", out.stdout);

    let out = cli(url, &["event", "on", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json(), serde_json::json!({ "event_enabled": 1 }));
    let j = cli(url, &["event", "status", "--json"]).json();
    assert_eq!(j["event_enabled"], 1);
    assert_eq!(j["running"], u8::from(j["event_scheduler"] == "ON"));
    let out = cli(url, &["event", "off"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("the expiry event is off"), "{}", out.stdout);
    assert_eq!(cli(url, &["event", "status", "--json"]).json()["event_enabled"], 0);

    let out = cli(url, &["event", "sideways"]);
    assert_eq!(out.code, 2, "{out:?}");
    db.drop_db().await;
}

#[tokio::test]
async fn watch_prints_one_line_per_leadership_change() {
    let db = common::TestDb::migrated("cli_watch").await;
    let url = db.url.clone();

    // Started before anyone led the service: it waits, then prints every change ("start the
    // watcher, then deploy"). `status` of an unknown service stays an error.
    let out = cli(Some(&url), &["status", "billing"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("unknown service 'billing'"), "{}", out.stderr);
    let mut watch = cli_support::command(Some(&url), &["watch", "billing", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(watch.try_wait().unwrap(), None, "watch waits for the first leader");
    assert_eq!(cli(Some(&url), &["campaign", "billing", "web-1", "--lease", "30s"]).code, 0);
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = watch.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    let next = || -> serde_json::Value {
        let line = rx.recv_timeout(Duration::from_secs(10)).expect("a line from watch");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    };
    let first = next();
    assert_eq!(
        keys(&first),
        strs(&["service_id", "leader_id", "term", "lease_remaining_ms", "observed_at"])
    );
    assert_eq!((first["leader_id"].as_str(), first["term"].as_u64()), (Some("web-1"), Some(1)));
    assert_eq!(cli(Some(&url), &["force", "billing", "web-2", "--lease", "30s"]).code, 0);
    let second = next();
    assert_eq!((second["leader_id"].as_str(), second["term"].as_u64()), (Some("web-2"), Some(2)));
    assert_eq!(cli(Some(&url), &["reelect", "billing"]).code, 0);
    let third = next();
    assert_eq!((third["leader_id"].as_str(), third["term"].as_u64()), (None, Some(2)));
    // A renew is not a change.
    assert_eq!(cli(Some(&url), &["campaign", "billing", "web-3", "--lease", "30s"]).code, 0);
    assert_eq!(next()["leader_id"].as_str(), Some("web-3"));
    assert_eq!(cli(Some(&url), &["campaign", "billing", "web-3", "--lease", "30s"]).code, 0);
    assert!(rx.recv_timeout(Duration::from_millis(600)).is_err(), "a renew printed a line");

    // Interrupted: exit 0.
    cli_support::signal(watch.id(), libc::SIGINT);
    let status = watch.wait().unwrap();
    assert_eq!(status.code(), Some(0));

    // The text form.
    let mut watch = cli_support::command(Some(&url), &["watch", "billing"]).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(watch.stdout.take().unwrap()).lines();
    let line = lines.next().unwrap().unwrap();
    assert!(line.contains("billing: web-3 leads at term 3"), "{line}");
    let _ = watch.kill();
    let _ = watch.wait();
    db.drop_db().await;
}

/// The statements grant prints for a role: per procedure, never `EXECUTE ON db.*`.
#[tokio::test]
async fn grant_prints_per_procedure_grants_for_a_role() {
    let db = common::TestDb::migrated("cli_grant").await;
    let url = Some(db.url.as_str());
    let user = format!("ml_app_{}", std::process::id());

    // Printed: the statements for the URL's database; needs no connection.
    let out = cli(url, &["grant", &user, "--role", "app"]);
    assert_eq!(out.code, 0, "{out:?}");
    for p in ["campaign", "am_i_leader", "current_leader", "resign", "assert_leader"] {
        let grant = format!("GRANT EXECUTE ON PROCEDURE `{}`.`{p}` TO '{user}'@'%';", db.name);
        assert!(out.stdout.lines().any(|l| l == grant), "{grant}\n{}", out.stdout);
    }
    assert!(!out.stdout.contains("force_leader") || out.stdout.contains("-- "), "{}", out.stdout);
    assert!(!out.stdout.contains(".* TO"), "never EXECUTE on the whole schema: {}", out.stdout);
    let out = cli(url, &["grant", &format!("{user}@10.0.0.%"), "--role", "observer", "--service", "billing%"]);
    assert!(out.stdout.contains(&format!("TO '{user}'@'10.0.0.%';")), "{}", out.stdout);
    assert!(out.stdout.contains("INSERT INTO") && out.stdout.contains("X'62696C6C696E6725' /* billing% */"), "{}", out.stdout);
    // The limit comes before the role: no moment where the account holds the role unlimited.
    let (limit, role) = (out.stdout.find("leader_election_compile_access").unwrap(), out.stdout.find("GRANT EXECUTE").unwrap());
    assert!(limit < role, "{}", out.stdout);
    let out = cli(url, &["grant", &format!("'{user}'@'localhost'"), "--role", "operator"]);
    assert!(out.stdout.contains(&format!("`force_leader` TO '{user}'@'localhost';")), "{}", out.stdout);

    // Names and patterns that could end the quoted string are refused; a role is required.
    for bad in ["x'; DROP TABLE t; --", "a\\b", "a`b", "", "'a'@'h'x'"] {
        let out = cli(url, &["grant", bad, "--role", "app"]);
        assert_eq!(out.code, 2, "{bad}: {out:?}");
        assert!(out.stderr.contains("invalid account"), "{bad}: {}", out.stderr);
    }
    // Patterns go in as hexadecimal literals, so a quote is harmless; a backslash must escape
    // %, _ or itself, and control characters are refused.
    let out = cli(url, &["grant", &user, "--role", "app", "--service", "x'y*/ DROP"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("X'7827792A2F2044524F50' /* x'y* / DROP */"), "{}", out.stdout);
    for bad in ["a\\b", "tab\there"] {
        let out = cli(url, &["grant", &user, "--role", "app", "--service", bad]);
        assert_eq!(out.code, 2, "{bad}: {out:?}");
    }
    let out = cli(url, &["grant", &user, "--role", "app", "--service-exact", "billing_eu"]);
    assert!(out.stdout.contains("/* billing\\_eu */"), "{}", out.stdout);
    assert_eq!(cli(url, &["grant", &user]).code, 2, "--role is required");

    // Applied to an account that does not exist yet: says to create it.
    let out = cli(url, &["grant", &user, "--role", "app", "--apply"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("does not exist"), "{}", out.stderr);
    db.drop_db().await;
}

/// `grant --apply` says what is in effect after it, not only what it added: the user's
/// per-service limit (set now or earlier), and on standard error any grant beyond the role that
/// still reaches the schema (an `EXECUTE ON db.*` from before roles existed opens every routine),
/// with the REVOKE to run.
#[tokio::test]
async fn grant_apply_reports_the_limit_in_effect_and_grants_beyond_the_role() {
    let db = common::TestDb::migrated("cli_grant_effect").await;
    let url = Some(db.url.as_str());
    let mut admin = db.conn().await;
    let user = format!("ml_old_{}", std::process::id());
    admin.query_drop(format!("DROP USER IF EXISTS '{user}'@'%'")).await.unwrap();
    admin.query_drop(format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pass'")).await.unwrap();
    admin.query_drop(format!("GRANT EXECUTE ON `{}`.* TO '{user}'@'%'", db.name)).await.unwrap();

    let out = cli(url, &["grant", &user, "--role", "app", "--service", "billing%", "--apply"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("only on the services matching 'billing%'"), "{}", out.stdout);
    let revoke = format!("REVOKE EXECUTE ON `{}`.* FROM '{user}'@'%';", db.name);
    assert!(out.stderr.contains("beyond role app") && out.stderr.contains(&revoke), "{}", out.stderr);
    assert!(!out.stderr.contains("PASSWORD"), "no password hash: {}", out.stderr);

    // Without --service the earlier limit stays, and the message says so.
    let out = cli(url, &["grant", &user, "--role", "app"]);
    assert!(out.stdout.contains(&format!("one set earlier for user '{user}' stays")), "{}", out.stdout);
    admin.query_drop(revoke.trim_end_matches(';')).await.unwrap();
    let out = cli(url, &["grant", &user, "--role", "app", "--apply"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("only on the services matching 'billing%'"), "{}", out.stdout);
    assert!(!out.stderr.contains("beyond role"), "nothing beyond the role once revoked: {}", out.stderr);
    // --service '%' lifts it in effect.
    let out = cli(url, &["grant", &user, "--role", "app", "--service", "%", "--apply"]);
    assert!(out.stdout.contains("only on the services matching '%'"), "{}", out.stdout);
    let role_url = with_credentials(&db.url, &user, "pass");
    assert_eq!(cli(Some(&role_url), &["campaign", "payroll", "n1"]).code, 0, "'%' matches every service");
    admin.query_drop(format!("DROP USER '{user}'@'%'")).await.unwrap();
    drop(admin);
    db.drop_db().await;
}

/// A limit touches no seat (migration V14): with a seat's row locked by an administrator's open
/// transaction (which made every grant wait 30 s, then undo itself, until V14), `grant --apply`
/// of a new limit completes at once and the limit is in effect for the account's next call.
#[tokio::test]
async fn grant_apply_never_waits_for_a_seat() {
    let db = common::TestDb::migrated("cli_grant_seat").await;
    let url = Some(db.url.as_str());
    let mut admin = db.conn().await;
    let user = format!("ml_seat_{}", std::process::id());
    admin.query_drop(format!("DROP USER IF EXISTS '{user}'@'%'")).await.unwrap();
    admin.query_drop(format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pass'")).await.unwrap();
    let out = cli(url, &["grant", &user, "--role", "app", "--service", "a%", "--apply"]);
    assert_eq!(out.code, 0, "{out:?}");
    for seat in ["a1", "b1"] {
        admin.query_drop(format!("CALL campaign('{seat}', 'seed', 600000)")).await.unwrap();
    }
    let mut locker = db.conn().await;
    locker.query_drop("START TRANSACTION").await.unwrap();
    locker.query_drop("SELECT term FROM leader_election FOR UPDATE").await.unwrap();

    let started = std::time::Instant::now();
    let out = cli(url, &["grant", &user, "--role", "app", "--service", "b%", "--apply"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("only on the services matching 'b%'"), "{}", out.stdout);
    eprintln!("grant --apply beside every seat locked: {:?}", started.elapsed());
    locker.query_drop("COMMIT").await.unwrap();
    let limited = with_credentials(&db.url, &user, "pass");
    assert_eq!(cli(Some(&limited), &["campaign", "b1", "n1"]).code, 1, "b% allows b1 (seed leads it)");
    let out = cli(Some(&limited), &["campaign", "a1", "n1"]);
    assert!(out.code == 2 && out.stderr.contains("access denied"), "a1 is outside b%: {out:?}");
    admin.query_drop(format!("DROP USER '{user}'@'%'")).await.unwrap();
    drop((admin, locker));
    db.drop_db().await;
}

/// Each role's allowed and refused calls, as tested: the role's procedures work, every other
/// procedure is refused by the server itself (error 1370), an application routine of the same
/// schema stays closed, `status` and `watch` work for an observer and an operator; and with
/// `--service`, a call on another service is refused with 45002, changing nothing.
#[tokio::test]
async fn roles_allow_their_procedures_and_nothing_else() {
    use mysql_async::{Conn, Opts};
    let db = common::TestDb::migrated("cli_roles").await;
    let url = Some(db.url.as_str());
    let mut admin = db.conn().await;
    // An application routine that an election account must not be able to call.
    admin.query_drop("CREATE TABLE invoices (id INT PRIMARY KEY)").await.unwrap();
    admin.query_drop("INSERT INTO invoices VALUES (1), (2)").await.unwrap();
    admin.query_drop("CREATE PROCEDURE purge_invoices() SQL SECURITY DEFINER DELETE FROM invoices").await.unwrap();
    admin.query_drop("CALL campaign('billing', 'seed', 60000)").await.unwrap();

    let calls: [(&str, &str); 9] = [
        ("campaign", "CALL campaign('billing', 'n1', 60000)"),
        ("am_i_leader", "CALL am_i_leader('billing', 'n1')"),
        ("current_leader", "CALL current_leader('billing')"),
        ("resign", "CALL resign('billing', 'n1')"),
        ("assert_leader", "START TRANSACTION; CALL assert_leader('billing', 'seed', 1)"),
        ("force_leader", "CALL force_leader('billing', 'seed', 60000)"),
        ("reelect", "CALL reelect('billing')"),
        ("set_expiry_event", "CALL set_expiry_event(0)"),
        ("purge_invoices", "CALL purge_invoices()"),
    ];
    let mut matrix = String::from("role      | campaign am_i_leader current_leader resign assert_leader force_leader reelect set_expiry_event purge_invoices\n");
    for role in ["app", "operator", "observer"] {
        let user = format!("ml_{role}_{}", std::process::id());
        admin.query_drop(format!("DROP USER IF EXISTS '{user}'@'%'")).await.unwrap();
        admin.query_drop(format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pass'")).await.unwrap();
        let out = cli(url, &["grant", &user, "--role", role, "--apply"]);
        assert_eq!(out.code, 0, "{out:?}");
        assert!(out.stdout.contains(&format!("granted: role {role}")), "{}", out.stdout);
        let role_url = with_credentials(&db.url, &user, "pass");
        let mut conn = Conn::new(Opts::from_url(&role_url).unwrap()).await.unwrap();
        let allowed = mysqlleader::procedures::Role::parse(role).unwrap().procedures();
        matrix.push_str(&format!("{role:9} |"));
        for (name, sql) in calls {
            // Every statement of `sql` in order; the result of the last CALL decides.
            let result = async {
                for stmt in sql.split("; ") {
                    conn.query_drop(stmt).await?;
                }
                Ok::<_, mysql_async::Error>(())
            }
            .await;
            let _ = conn.query_drop("ROLLBACK").await;
            let ok = result.is_ok();
            matrix.push_str(if ok { " allowed" } else { " refused" });
            if allowed.contains(&name) {
                assert!(ok, "{role} may call {name}: {result:?}");
            } else {
                match result {
                    Err(mysql_async::Error::Server(e)) => assert_eq!(e.code, 1370, "{role} calling {name}: {e:?}"),
                    other => panic!("{role} must not call {name}: {other:?}"),
                }
            }
        }
        matrix.push('\n');
        // status (reads the tables) works for the roles that read them, and only those.
        let out = cli(Some(&role_url), &["status", "billing"]);
        assert_eq!(out.code == 0, role != "app", "status as {role}: {out:?}");
        // watch (calls current_leader) works for every role, the observer's included: its
        // first line gives the seat's term, and it keeps running until interrupted.
        let mut watch = cli_support::command(Some(&role_url), &["watch", "billing", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(watch.stdout.take().unwrap()).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        let still_running = watch.try_wait().unwrap().is_none();
        cli_support::signal(watch.id(), libc::SIGINT);
        let watch_status = watch.wait().unwrap();
        let first: serde_json::Value = serde_json::from_str(&first)
            .unwrap_or_else(|e| panic!("watch as {role}: not a JSON line ({e}): {first:?}, exit {watch_status:?}"));
        let term: Option<u64> = admin.query_first("SELECT term FROM leader_election WHERE service_id = 'billing'").await.unwrap();
        assert_eq!(first["term"].as_u64(), term, "watch as {role}: {first}");
        assert!(still_running, "watch as {role} ended after its first line");
        assert_eq!(watch_status.code(), Some(0), "watch as {role}, interrupted");
        drop(conn);
        admin.query_drop(format!("DROP USER '{user}'@'%'")).await.unwrap();
    }
    println!("{matrix}");
    let invoices: Option<i64> = admin.query_first("SELECT COUNT(*) FROM invoices").await.unwrap();
    assert_eq!(invoices, Some(2), "no election account could call the application's routine");

    // Per-service access: limited to billing%, refused (45002) elsewhere, nothing changed.
    let user = format!("ml_limited_{}", std::process::id());
    admin.query_drop(format!("DROP USER IF EXISTS '{user}'@'%'")).await.unwrap();
    admin.query_drop(format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pass'")).await.unwrap();
    let out = cli(url, &["grant", &user, "--role", "operator", "--service", "billing%", "--apply"]);
    assert_eq!(out.code, 0, "{out:?}");
    let limited = with_credentials(&db.url, &user, "pass");
    assert_eq!(cli(Some(&limited), &["campaign", "billing-eu", "n1"]).code, 0);
    let out = cli(Some(&limited), &["force", "payroll", "n1"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("access denied") && out.stderr.contains(&user) && out.stderr.contains("payroll"), "{}", out.stderr);
    let rows: Option<i64> = admin.query_first("SELECT COUNT(*) FROM leader_election WHERE service_id = 'payroll'").await.unwrap();
    assert_eq!(rows, Some(0), "a refused call changes nothing");
    admin.query_drop(format!("DROP USER '{user}'@'%'")).await.unwrap();
    drop(admin);
    db.drop_db().await;
}

/// The audit columns: who began and who ended each term, after elect, force, reelect, resign
/// and expiry, as `status --json` shows them.
#[tokio::test]
async fn status_shows_who_began_and_ended_each_term() {
    let db = common::TestDb::migrated("cli_audit").await;
    let url = Some(db.url.as_str());
    // USER() as the CLI's connections see it (over TCP, as the URL says).
    let me: String = {
        let pool = mysqlleader::pool_from_url(&db.url).unwrap();
        let mut c = pool.get_conn().await.unwrap();
        let me = c.query_first("SELECT USER()").await.unwrap().unwrap();
        drop(c);
        let _ = pool.disconnect().await;
        me
    };
    assert_eq!(cli(url, &["campaign", "svc", "a", "--lease", "500ms"]).code, 0); // term 1: elected
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(cli(url, &["campaign", "svc", "b"]).code, 0); // term 1 expired; term 2 elected
    assert_eq!(cli(url, &["force", "svc", "c"]).code, 0); // term 2 forced out; term 3 forced
    assert_eq!(cli(url, &["reelect", "svc"]).code, 0); // term 3 reelected
    assert_eq!(cli(url, &["campaign", "svc", "d"]).code, 0); // term 4
    assert_eq!(cli(url, &["resign", "svc", "d"]).code, 0); // term 4 resigned
    let out = cli(url, &["status", "svc", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let terms = v["terms"].as_array().unwrap_or_else(|| panic!("{v}"));
    let by = |term: u64| terms.iter().find(|t| t["term"] == term).unwrap_or_else(|| panic!("{v}"));
    assert_eq!((by(1)["began_by"].as_str(), by(1)["ended_how"].as_str(), by(1)["ended_by"].as_str()), (Some(me.as_str()), Some("expired"), None));
    assert_eq!((by(2)["ended_how"].as_str(), by(2)["ended_by"].as_str()), (Some("forced_out"), Some(me.as_str())));
    assert_eq!((by(3)["began_how"].as_str(), by(3)["began_by"].as_str()), (Some("forced"), Some(me.as_str())));
    assert_eq!((by(3)["ended_how"].as_str(), by(3)["ended_by"].as_str()), (Some("reelected"), Some(me.as_str())));
    assert_eq!((by(4)["ended_how"].as_str(), by(4)["ended_by"].as_str()), (Some("resigned"), Some(me.as_str())));
    db.drop_db().await;
}

#[tokio::test]
async fn the_mistakes_people_make_have_clear_messages() {
    let db = common::TestDb::migrated("cli_mistakes").await;

    // No URL at all.
    let out = cli(None, &["status"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("no database URL") && out.stderr.contains("MYSQLLEADER_URL"), "{}", out.stderr);

    // --url wins over MYSQLLEADER_URL.
    let out = cli_support::command(Some("mysql://nobody:x@127.0.0.1:1/none"), &["--url", &db.url, "status"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    // Unreachable server: a loopback port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = cli(Some(&format!("mysql://app:s3cret-pw@127.0.0.1:{port}/db")), &["status"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains(&format!("cannot reach the database server at 127.0.0.1:{port}")), "{}", out.stderr);
    // Named once: the library's connection errors name the server too.
    assert_eq!(out.stderr.matches(&format!("127.0.0.1:{port}")).count(), 1, "{}", out.stderr);
    assert!(!out.stderr.contains("s3cret-pw"), "the password was echoed: {}", out.stderr);

    // Wrong password: said so, and never echoed.
    let user = mysql_async::Opts::from_url(&db.url).unwrap().user().unwrap_or("root").to_string();
    let wrong = with_credentials(&db.url, &user, "Wr0ng-Secret-42");
    for args in [vec!["status"], vec!["campaign", "billing", "n1"], vec!["migrate"]] {
        let out = cli(Some(&wrong), &args);
        assert_eq!(out.code, 2, "{out:?}");
        assert!(out.stderr.contains("wrong user name or password"), "{}", out.stderr);
        assert!(!out.stderr.contains("Wr0ng-Secret-42") && !out.stdout.contains("Wr0ng-Secret-42"), "echoed: {out:?}");
    }

    // A database that does not exist.
    let missing = common::url_with_db(&db.url, "ml_no_such_db");
    let out = cli(Some(&missing), &["status"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("database 'ml_no_such_db' does not exist"), "{}", out.stderr);

    // A URL that is not one.
    let out = cli(Some("localhost:3306"), &["status"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("not valid"), "{}", out.stderr);

    // Bad durations.
    for (lease, says) in [("10", "unit is missing"), ("5x", "unknown unit"), ("ten", "bad duration"), ("0.5ms", "whole milliseconds")] {
        let out = cli(Some(&db.url), &["campaign", "billing", "n1", "--lease", lease]);
        assert_eq!(out.code, 2, "{lease}: {out:?}");
        assert!(out.stderr.contains(says), "{lease}: {}", out.stderr);
    }
    let out = cli(Some(&db.url), &["run", "--service", "s", "--lease", "2s", "--renew", "1", "--", "true"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("bad duration"), "{}", out.stderr);

    // Usage mistakes: exit 2 with clap's message.
    let out = cli(Some(&db.url), &["campaign", "billing"]);
    assert_eq!(out.code, 2, "{out:?}");
    let out = cli(Some(&db.url), &["frobnicate"]);
    assert_eq!(out.code, 2, "{out:?}");
    // Help is not an error.
    let out = cli(None, &["--help"]);
    assert_eq!(out.code, 0);
    for sub in ["migrate", "sql", "grant", "status", "campaign", "am-i-leader", "force", "reelect", "resign", "event", "watch", "run"] {
        assert!(out.stdout.contains(&format!("  {sub} ")), "{sub} missing from --help");
        assert_eq!(cli(None, &[sub, "--help"]).code, 0, "{sub} --help");
    }
    assert!(!out.stdout.contains("__guard"), "the internal subcommand is hidden");
    db.drop_db().await;
}

/// `handover SERVICE --to NODE`: the seat is reserved for NODE (status shows it), another node's
/// campaign cannot take it, NODE's can; `--wait` returns 0 once NODE leads and 3 when the
/// reservation lapsed without it; `--json` has the seat's columns.
#[tokio::test]
async fn handover_reserves_the_seat_and_wait_reports_how_it_ended() {
    let db = common::TestDb::migrated("cli_handover").await;
    let url = Some(db.url.as_str());
    assert_eq!(cli(url, &["campaign", "billing", "web-1", "--lease", "1s"]).code, 0);

    let out = cli(url, &["handover", "billing", "--to", "web-2", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(keys(&v), strs(&["is_leader", "leader_id", "term", "lease_remaining_ms"]));
    assert_eq!((v["is_leader"].as_u64(), v["leader_id"].is_null(), v["term"].as_u64()), (Some(0), true, Some(1)));
    let status = cli(url, &["status", "billing", "--json"]);
    let s: serde_json::Value = serde_json::from_str(status.stdout.trim()).unwrap();
    let seat = &s;
    assert_eq!(seat["handover_to"].as_str(), Some("web-2"), "{}", status.stdout);
    assert_eq!(seat["ended_how"].as_str(), Some("handed_over"), "{}", status.stdout);
    // The displaced leader's campaign sees the handover, and its resign acknowledges it (until
    // then, or until its lease runs out, not even web-2 may take the seat); a third node cannot.
    assert_eq!(cli(url, &["campaign", "billing", "web-1"]).code, 1);
    let third = cli(url, &["campaign", "billing", "web-3"]);
    assert_eq!(third.code, 1, "{third:?}");
    assert!(third.stdout.contains("reserved for another node"), "{}", third.stdout);
    assert_eq!(cli(url, &["campaign", "billing", "web-2"]).code, 1, "before web-1's acknowledgement");
    assert_eq!(cli(url, &["resign", "billing", "web-1"]).code, 0);
    assert_eq!(cli(url, &["campaign", "billing", "web-2"]).code, 0);
    // To the current leader: nothing changes.
    let same = cli(url, &["handover", "billing", "--to", "web-2"]);
    assert_eq!(same.code, 0, "{same:?}");
    assert!(same.stdout.contains("leads billing already"), "{}", same.stdout);

    // --wait until the named node leads: a campaign of web-4 in the background, after web-2's
    // renew has seen the handover and its resign acknowledged it.
    let url2 = db.url.clone();
    let taker = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(cli(Some(&url2), &["campaign", "billing", "web-2", "--lease", "1s"]).code, 1);
        assert_eq!(cli(Some(&url2), &["resign", "billing", "web-2"]).code, 0);
        assert_eq!(cli(Some(&url2), &["campaign", "billing", "web-4", "--lease", "1s"]).code, 0);
    });
    let waited = cli(url, &["handover", "billing", "--to", "web-4", "--wait", "--json"]);
    taker.join().unwrap();
    assert_eq!(waited.code, 0, "{waited:?}");
    let v: serde_json::Value = serde_json::from_str(waited.stdout.trim()).unwrap();
    assert_eq!((v["is_leader"].as_u64(), v["leader_id"].as_str()), (Some(1), Some("web-4")), "{v}");
    assert!(v["waited_ms"].as_u64().is_some());

    // --wait for a node that never comes: exit 3 once the reservation lapsed (one 1 s lease
    // after web-4's lease ran out: its renew sees the handover, and it never acknowledges).
    let url3 = db.url.clone();
    let renewer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        cli(Some(&url3), &["campaign", "billing", "web-4", "--lease", "1s"]);
    });
    let lapsed = cli(url, &["handover", "billing", "--to", "ghost", "--wait"]);
    renewer.join().unwrap();
    assert_eq!(lapsed.code, 3, "{lapsed:?}");
    assert!(lapsed.stderr.contains("lapsed") && lapsed.stderr.contains("ghost"), "{}", lapsed.stderr);
    let bad = cli(url, &["handover", "billing", "--to", ""]);
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(bad.stderr.contains("to_node"), "{}", bad.stderr);
    // A service nobody ever campaigned for: exit 2, and no seat is made for it.
    let unknown = cli(url, &["handover", "bilings", "--to", "web-2"]);
    assert_eq!(unknown.code, 2, "{unknown:?}");
    assert!(unknown.stderr.contains("unknown service 'bilings'") && unknown.stderr.contains("'billing'"), "{}", unknown.stderr);
    let listed = cli(url, &["status", "--json"]);
    assert!(listed.stdout.contains("billing") && !listed.stdout.contains("bilings"), "{}", listed.stdout);
    db.drop_db().await;
}

/// The limit of the account `someapp`: its patterns in leader_election_access, and its row of
/// leader_election_account ('-' for none).
async fn someapp_limit(admin: &mut mysql_async::Conn) -> String {
    let sql = "SELECT CONCAT(COALESCE((SELECT GROUP_CONCAT(service_pattern ORDER BY service_pattern) FROM leader_election_access \
               WHERE account = 'someapp'), '-'), ' / ', COALESCE((SELECT patterns FROM leader_election_account WHERE account = 'someapp'), '-'))";
    admin.query_first::<String, _>(sql).await.unwrap().unwrap()
}

/// `grant --apply` by an account that may not grant (all privileges on the schema, no GRANT
/// OPTION): exit 2, the message says what the account lacks, and a failed grant leaves nothing
/// behind: the limit it stored before its first GRANT was refused is put back as it was.
#[tokio::test]
async fn grant_apply_without_grant_option_says_what_is_missing() {
    let db = common::TestDb::migrated("cli_grant_option").await;
    let mut admin = db.conn().await;
    let installer = format!("inst_{}", std::process::id());
    admin.query_drop(format!("DROP USER IF EXISTS '{installer}'@'%'")).await.unwrap();
    admin.query_drop(format!("CREATE USER '{installer}'@'%' IDENTIFIED BY 'pw'")).await.unwrap();
    admin.query_drop(format!("GRANT ALL PRIVILEGES ON `{}`.* TO '{installer}'@'%'", db.name)).await.unwrap();
    admin.query_drop("CREATE USER IF NOT EXISTS 'someapp'@'%' IDENTIFIED BY 'pw'").await.unwrap();
    let url = with_credentials(&db.url, &installer, "pw");
    let out = cli(Some(&url), &["grant", "'someapp'@'%'", "--role", "app", "--apply"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("GRANT OPTION"), "{}", out.stderr);
    assert_eq!(someapp_limit(&mut admin).await, "- / -", "no limit stored");
    // With an earlier limit (set by the administrator), a refused grant of a new one puts it back.
    let out = cli(Some(&db.url), &["grant", "'someapp'@'%'", "--role", "app", "--service", "old%", "--apply"]);
    assert_eq!(out.code, 0, "{out:?}");
    let before = someapp_limit(&mut admin).await;
    let out = cli(Some(&url), &["grant", "'someapp'@'%'", "--role", "app", "--service", "new%", "--apply"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("nothing was changed (the limit it had stored was put back)"), "{}", out.stderr);
    assert_eq!(someapp_limit(&mut admin).await, before, "the earlier limit, as it was");
    admin.query_drop(format!("DROP USER IF EXISTS '{installer}'@'%'")).await.unwrap();
    admin.query_drop("DROP USER IF EXISTS 'someapp'@'%'").await.unwrap();
    // Back to the pool first: dropping the database waits for every pooled connection.
    drop(admin);
    db.drop_db().await;
}

/// An id cannot forge a line of `status`: a node id holding a newline (and a terminal escape)
/// is shown escaped, on its service's one line.
#[tokio::test]
async fn status_shows_each_service_on_one_line_whatever_its_ids_hold() {
    let db = common::TestDb::migrated("cli_status_lines").await;
    let url = Some(db.url.as_str());
    let mut admin = db.conn().await;
    admin
        .exec_drop("CALL campaign(?, ?, 60000)", ("billing", "web-1\nledger  web-9  7  9.9 s\x1b[2J"))
        .await
        .unwrap();
    let out = cli(url, &["status"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.lines().count(), 3, "the header, billing's line and the count: {}", out.stdout);
    assert_eq!(out.stdout.lines().last(), Some("1 service: 1 led by 1 node, 0 without a leader"), "{}", out.stdout);
    assert!(out.stdout.contains("web-1\\u{a}ledger") && out.stdout.contains("\\u{1b}[2J"), "{}", out.stdout);
    let out = cli(url, &["status", "billing"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!out.stdout.lines().any(|l| l.starts_with("ledger")), "no forged line: {}", out.stdout);
    drop(admin);
    db.drop_db().await;
}

/// `handover` of a service no node has ever led (a typo, most likely) is refused as `resign`'s
/// is: exit 2, a message naming the service (and the known ones), nothing on standard output,
/// and no seat written, so that `status` does not list it afterwards. With `--json` and
/// `--wait` too, and in a database with no service at all.
#[tokio::test]
async fn handover_of_an_unknown_service_exits_2_and_creates_no_seat() {
    let db = common::TestDb::migrated("cli_handover_unknown").await;
    let url = Some(db.url.as_str());
    let mut admin = db.conn().await;

    // No service at all yet.
    let out = cli(url, &["handover", "payroll", "--to", "web-2"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("unknown service 'payroll'"), "{}", out.stderr);
    assert!(out.stderr.contains("nothing was changed"), "{}", out.stderr);
    assert_eq!(out.stdout, "", "nothing on standard output");
    let listed = cli(url, &["status"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    assert!(listed.stdout.contains("no services yet"), "{}", listed.stdout);

    assert_eq!(cli(url, &["campaign", "billing", "web-1", "--lease", "30s"]).code, 0);
    for args in [
        vec!["handover", "biling", "--to", "web-2"],
        vec!["handover", "biling", "--to", "web-2", "--json"],
        vec!["handover", "biling", "--to", "web-2", "--wait"],
    ] {
        let out = cli(url, &args);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(out.stderr.contains("unknown service 'biling'"), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("'billing'"), "names the known services: {}", out.stderr);
        assert!(out.stderr.contains("nothing was changed"), "{args:?}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{args:?}: nothing on standard output");
    }
    let rows: Option<i64> =
        admin.query_first("SELECT COUNT(*) FROM leader_election WHERE service_id IN ('biling', 'payroll')").await.unwrap();
    assert_eq!(rows, Some(0), "the refused handovers wrote no seat");

    // `status` lists billing alone, in its table and its JSON.
    let out = cli(url, &["status"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!out.stdout.contains("biling") && !out.stdout.contains("payroll"), "{}", out.stdout);
    assert_eq!(out.stdout.lines().last(), Some("1 service: 1 led by 1 node, 0 without a leader"), "{}", out.stdout);
    let j = cli(url, &["status", "--json"]).json();
    let ids: Vec<&str> = j["services"].as_array().unwrap().iter().map(|s| s["service_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["billing"]);
    // The leader was not disturbed.
    assert_eq!(cli(url, &["am-i-leader", "billing", "web-1"]).code, 0);
    drop(admin);
    db.drop_db().await;
}

/// Six services for the `status` tests: alpha and beta led by web-1, gamma by web-2; delta
/// vacant (its leader resigned), epsilon expired (a 1 ms lease), zeta never led (a seat that
/// `CALL handover` made, reserved for web-3).
async fn a_fleet_of_six(db: &common::TestDb) {
    let url = Some(db.url.as_str());
    for (service, node, lease) in
        [("alpha", "web-1", "1m"), ("beta", "web-1", "1m"), ("gamma", "web-2", "1m"), ("delta", "web-2", "1m"), ("epsilon", "web-3", "1ms")]
    {
        let out = cli(url, &["campaign", service, node, "--lease", lease]);
        assert_eq!(out.code, 0, "{service}: {out:?}");
    }
    assert_eq!(cli(url, &["resign", "delta", "web-2"]).code, 0);
    let mut admin = db.conn().await;
    admin.query_drop("CALL handover('zeta', 'web-3')").await.unwrap();
    drop(admin);
    std::thread::sleep(Duration::from_millis(20));
}

/// The services of `status`'s table (the first cell of each line between the header and the
/// count line), and the count line.
fn status_table(out: &cli_support::Out) -> (Vec<String>, String) {
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines.len() >= 2 && lines[0].starts_with("SERVICE"), "{}", out.stdout);
    let services = lines[1..lines.len() - 1].iter().map(|l| l.split_whitespace().next().unwrap().to_string()).collect();
    (services, lines[lines.len() - 1].to_string())
}

/// The `service_id`s of `status --json`, checking that the object has no key but `services`.
fn status_json_ids(out: &cli_support::Out) -> Vec<String> {
    assert_eq!(out.code, 0, "{out:?}");
    let j = out.json();
    assert_eq!(keys(&j), strs(&["services"]), "{j}");
    j["services"].as_array().unwrap().iter().map(|s| s["service_id"].as_str().unwrap().to_string()).collect()
}

/// `status` of every service ends with a line that counts them: led (a valid lease), by how many
/// nodes, and without a leader (vacant, expired, never led alike).
#[tokio::test]
async fn status_counts_led_and_vacant_services() {
    let db = common::TestDb::migrated("cli_status_count").await;
    let url = Some(db.url.as_str());
    a_fleet_of_six(&db).await;

    let (services, count) = status_table(&cli(url, &["status"]));
    assert_eq!(services, strs(&["alpha", "beta", "delta", "epsilon", "gamma", "zeta"]));
    assert_eq!(count, "6 services: 3 led by 2 nodes, 3 without a leader");
    assert_eq!(status_json_ids(&cli(url, &["status", "--json"])).len(), 6, "--json: the same object, every service");
    db.drop_db().await;
}

/// `status --leader`, `--node NODE` and `--vacant` list only some services (with `--json` too,
/// in the same object), and the count line says how many of all it shows; a filter that keeps
/// nothing says so and counts all; filters go with every service only.
#[tokio::test]
async fn status_filters_leader_node_and_vacant() {
    let db = common::TestDb::migrated("cli_status_filter").await;
    let url = Some(db.url.as_str());
    a_fleet_of_six(&db).await;

    let (services, count) = status_table(&cli(url, &["status", "--leader"]));
    assert_eq!(services, strs(&["alpha", "beta", "gamma"]));
    assert_eq!(count, "3 of 6 services: 3 led by 2 nodes, 0 without a leader");
    assert_eq!(status_json_ids(&cli(url, &["status", "--leader", "--json"])), strs(&["alpha", "beta", "gamma"]));

    let (services, count) = status_table(&cli(url, &["status", "--node", "web-1"]));
    assert_eq!(services, strs(&["alpha", "beta"]));
    assert_eq!(count, "2 of 6 services: 2 led by 1 node, 0 without a leader");
    assert_eq!(status_json_ids(&cli(url, &["status", "--json", "--node", "web-2"])), strs(&["gamma"]));
    // web-3's lease on epsilon has run out: it leads nothing. --leader adds nothing to --node.
    assert_eq!(status_json_ids(&cli(url, &["status", "--node", "web-3", "--json"])), Vec::<String>::new());
    assert_eq!(status_json_ids(&cli(url, &["status", "--node", "web-1", "--leader", "--json"])), strs(&["alpha", "beta"]));

    let (services, count) = status_table(&cli(url, &["status", "--vacant"]));
    assert_eq!(services, strs(&["delta", "epsilon", "zeta"]));
    assert_eq!(count, "3 of 6 services: 0 led by 0 nodes, 3 without a leader");
    let j = cli(url, &["status", "--vacant", "--json"]).json();
    let vacant = j["services"].as_array().unwrap();
    assert_eq!(vacant.len(), 3, "{j}");
    assert!(vacant.iter().all(|s| s["leader_id"].is_null() && s["lease_remaining_ms"] == 0), "{j}");

    // Nothing kept: one sentence, with the count of all, and exit 0.
    let out = cli(url, &["status", "--node", "web-9"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.trim_end(), "no service is led by web-9 (6 services: 3 led by 2 nodes, 3 without a leader)");

    // Mistakes: a filter with one SERVICE, --vacant with --leader or --node, an empty node.
    for args in [
        vec!["status", "alpha", "--vacant"],
        vec!["status", "alpha", "--leader"],
        vec!["status", "alpha", "--node", "web-1"],
        vec!["status", "--leader", "--vacant"],
        vec!["status", "--node", "web-1", "--vacant"],
        vec!["status", "--node", ""],
    ] {
        let out = cli(url, &args);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert_eq!(out.stdout, "", "{args:?}");
    }
    assert!(cli(url, &["status", "--node", ""]).stderr.contains("--node"));
    db.drop_db().await;
}

/// `migrate --dry-run` and `migrate --verify` read what is live, not only the installer's
/// record: a routine dropped, or created again after its record (as an older release's script
/// run over this one would), is a difference, and `migrate` applies it again; a schema that a
/// newer release installed is refused, with nothing changed.
#[tokio::test]
async fn migrate_verify_and_dry_run_read_what_is_live_and_migrate_mends_it() {
    let db = common::TestDb::empty("cli_verify").await;
    let url = Some(db.url.as_str());
    let fresh = cli(url, &["migrate", "--dry-run"]);
    assert_eq!(fresh.code, 0, "{fresh:?}");
    assert!(fresh.stdout.contains("would apply migration V1__election_tables"), "{}", fresh.stdout);
    assert!(fresh.stdout.contains("would apply procedure campaign: new"), "{}", fresh.stdout);
    assert_eq!(cli(url, &["migrate", "--verify"]).code, 1, "an empty database differs");
    assert_eq!(cli(url, &["migrate"]).code, 0);
    let ok = cli(url, &["migrate", "--verify"]);
    assert_eq!(ok.code, 0, "{ok:?}");
    assert!(ok.stdout.contains("no difference"), "{}", ok.stdout);

    let mut admin = db.conn().await;
    admin.query_drop("DROP PROCEDURE am_i_leader").await.unwrap();
    // An older definition created after the record (the record set an hour back, so that the
    // new creation time is later whatever second this runs in).
    admin.query_drop("UPDATE mysqlleader_routines SET applied_on = applied_on - INTERVAL 1 HOUR WHERE name = 'current_leader'").await.unwrap();
    admin.query_drop("DROP PROCEDURE current_leader").await.unwrap();
    admin.query_drop("CREATE PROCEDURE current_leader(IN p_service_id VARCHAR(128)) SELECT 'an older release' AS leader_id").await.unwrap();
    let differs = cli(url, &["migrate", "--verify"]);
    assert_eq!(differs.code, 1, "{differs:?}");
    assert!(differs.stdout.contains("differs: procedure am_i_leader: missing"), "{}", differs.stdout);
    assert!(differs.stdout.contains("differs: procedure current_leader: created again at"), "{}", differs.stdout);
    assert_eq!(differs.stdout.lines().count(), 2, "nothing else differs: {}", differs.stdout);
    let dry = cli(url, &["migrate", "--dry-run"]);
    assert_eq!(dry.code, 0, "{dry:?}");
    assert!(dry.stdout.contains("would apply procedure am_i_leader"), "{}", dry.stdout);
    assert!(dry.stdout.contains("would apply procedure current_leader"), "{}", dry.stdout);
    assert_eq!(cli(url, &["migrate", "--verify"]).code, 1, "a dry run changes nothing");
    let mended = cli(url, &["migrate"]);
    assert_eq!(mended.code, 0, "{mended:?}");
    assert!(mended.stdout.contains("applied routines: am_i_leader, current_leader\n"), "{}", mended.stdout);
    assert_eq!(cli(url, &["migrate", "--verify"]).code, 0);
    let leader = mysqlleader::procedures::current_leader(&db.pool, "nobody").await.unwrap();
    assert_eq!(leader.leader_id, None, "this release's current_leader is live again");

    // A term change that wrote no history row (as while the trigger was missing): said by
    // --verify and by migrate, which cannot mend it.
    for node in ["a", "b", "c"] {
        mysqlleader::procedures::force_leader(&db.pool, "gappy", node, Duration::from_secs(30)).await.unwrap();
    }
    admin.query_drop("DELETE FROM leader_election_history WHERE service_id = 'gappy' AND term = 2").await.unwrap();
    let gap = cli(url, &["migrate", "--verify"]);
    assert_eq!(gap.code, 1, "{gap:?}");
    assert!(gap.stdout.contains("differs: the history misses term changes of 1 service(s) (gappy)"), "{}", gap.stdout);
    let warned = cli(url, &["migrate"]);
    assert_eq!(warned.code, 0, "{warned:?}");
    assert!(warned.stderr.contains("warning: the history misses term changes of 1 service(s) (gappy)"), "{}", warned.stderr);

    // A newer release's migration is recorded: migrate refuses and changes nothing.
    admin.query_drop("INSERT INTO mysqlleader_schema_history (version, name, applied_on, checksum) VALUES (99, 'from_a_newer_release', '', '0')").await.unwrap();
    admin.query_drop("UPDATE mysqlleader_routines SET checksum = 'older' WHERE name = 'resign'").await.unwrap();
    let refused = cli(url, &["migrate"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("the schema is newer than this release: migration V99 is applied"), "{}", refused.stderr);
    let still: Option<String> = admin.query_first("SELECT checksum FROM mysqlleader_routines WHERE name = 'resign'").await.unwrap();
    assert_eq!(still.as_deref(), Some("older"), "nothing was applied over the newer schema");
    let verify = cli(url, &["migrate", "--verify"]);
    assert_eq!(verify.code, 1, "{verify:?}");
    assert!(verify.stdout.contains("differs: the schema is newer than this release"), "{}", verify.stdout);
    drop(admin);
    db.drop_db().await;
}

/// `migrate --verify` compares the grants of every account the tool recorded with what its role
/// gets from this release (issue 39): a table grant an older release left (`SELECT` on the
/// history: an operator's or observer's `SELECT ... FOR UPDATE` on it stopped every renew) and a
/// missing or extra `EXECUTE` are each a difference, on a line naming the account and the
/// statement that mends it; `grant --apply` revokes a leftover table grant, also as an installer
/// that may not read the account's grants; once mended, --verify exits 0. An account that may
/// not read other accounts' grants is told so, and never gets "no difference" (exit 2).
#[tokio::test]
async fn migrate_verify_compares_the_grants_of_every_recorded_account() {
    let db = common::TestDb::migrated("cli_verify_grants").await;
    let url = Some(db.url.as_str());
    let mut admin = db.conn().await;
    let pid = std::process::id();
    let (obs, app, inst) = (format!("ml_vobs_{pid}"), format!("ml_vapp_{pid}"), format!("ml_vinst_{pid}"));
    for user in [&obs, &app, &inst] {
        admin.query_drop(format!("DROP USER IF EXISTS '{user}'@'%'")).await.unwrap();
        admin.query_drop(format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")).await.unwrap();
    }
    assert_eq!(cli(url, &["grant", &obs, "--role", "observer", "--apply"]).code, 0);
    assert_eq!(cli(url, &["grant", &app, "--role", "app", "--apply"]).code, 0);
    let ok = cli(url, &["migrate", "--verify"]);
    assert_eq!(ok.code, 0, "{ok:?}");
    assert!(ok.stdout.contains("no difference"), "{}", ok.stdout);

    // An older release's SELECT on the history, and one EXECUTE of the role revoked.
    let history = format!("`{}`.`leader_election_history`", db.name);
    admin.query_drop(format!("GRANT SELECT ON {history} TO '{obs}'@'%'")).await.unwrap();
    admin.query_drop(format!("REVOKE EXECUTE ON PROCEDURE `{}`.`renew_seats` FROM '{app}'@'%'", db.name)).await.unwrap();
    let differs = cli(url, &["migrate", "--verify"]);
    assert_eq!(differs.code, 1, "{differs:?}");
    let revoke = format!("REVOKE SELECT ON {history} FROM '{obs}'@'%';");
    assert!(differs.stdout.lines().any(|l| l.starts_with(&format!(
        "differs: account '{obs}'@'%' (role observer): holds SELECT on the election's table leader_election_history"))
        && l.ends_with(&format!("(mend: {revoke})"))), "{}", differs.stdout);
    assert!(differs.stdout.lines().any(|l| l.starts_with(&format!("differs: account '{app}'@'%' (role app): lacks EXECUTE on renew_seats "))
        && l.ends_with(&format!("(mend: mysqlleader grant '{app}'@'%' --role app --apply)"))), "{}", differs.stdout);
    assert_eq!(differs.stdout.lines().count(), 2, "nothing else differs: {}", differs.stdout);
    // Mended by the statements printed.
    admin.query_drop(revoke.trim_end_matches(';')).await.unwrap();
    assert_eq!(cli(url, &["grant", &app, "--role", "app", "--apply"]).code, 0);
    let mended = cli(url, &["migrate", "--verify"]);
    assert_eq!(mended.code, 0, "{mended:?}");

    // An EXECUTE beyond the role: the REVOKE; a table grant: grant --apply revokes it itself.
    admin.query_drop(format!("GRANT EXECUTE ON PROCEDURE `{}`.`force_leader` TO '{app}'@'%'", db.name)).await.unwrap();
    admin.query_drop(format!("GRANT SELECT ON `{}`.`leader_election` TO '{obs}'@'%'", db.name)).await.unwrap();
    let extra = cli(url, &["migrate", "--verify"]);
    assert_eq!(extra.code, 1, "{extra:?}");
    let revoke_execute = format!("REVOKE EXECUTE ON PROCEDURE `{}`.`force_leader` FROM '{app}'@'%';", db.name);
    assert!(extra.stdout.contains(&format!("differs: account '{app}'@'%' (role app): holds EXECUTE on force_leader, beyond role app \
                                            (mend: {revoke_execute})")), "{}", extra.stdout);
    admin.query_drop(revoke_execute.trim_end_matches(';')).await.unwrap();
    let regrant = cli(url, &["grant", &obs, "--role", "observer", "--apply"]);
    assert_eq!(regrant.code, 0, "{regrant:?}");
    assert!(regrant.stdout.contains(&format!("REVOKE SELECT ON `{}`.`leader_election` FROM '{obs}'@'%';", db.name)), "{}", regrant.stdout);
    assert_eq!(cli(url, &["migrate", "--verify"]).code, 0);

    // An installer with the privileges the README lists (here all on the schema, with GRANT
    // OPTION) may not read other accounts' grants: --verify says so and exits 2; its grant
    // --apply still revokes a leftover SELECT on the election's tables.
    admin.query_drop(format!("GRANT ALL PRIVILEGES ON `{}`.* TO '{inst}'@'%' WITH GRANT OPTION", db.name)).await.unwrap();
    let installer = with_credentials(&db.url, &inst, "pw");
    let unchecked = cli(Some(&installer), &["migrate", "--verify"]);
    assert_eq!(unchecked.code, 2, "{unchecked:?}");
    assert!(unchecked.stdout.contains("could not check grants: reading other accounts' grants needs SELECT on the mysql schema"),
            "{}", unchecked.stdout);
    assert!(!unchecked.stdout.contains("no difference"), "{}", unchecked.stdout);
    assert!(unchecked.stderr.contains("grants were not checked"), "{}", unchecked.stderr);
    admin.query_drop(format!("GRANT SELECT ON {history} TO '{obs}'@'%'")).await.unwrap();
    assert_eq!(cli(url, &["migrate", "--verify"]).code, 1);
    let by_installer = cli(Some(&installer), &["grant", &obs, "--role", "observer", "--apply"]);
    assert_eq!(by_installer.code, 0, "{by_installer:?}");
    assert!(by_installer.stdout.contains(&revoke), "{}", by_installer.stdout);
    let after = cli(url, &["migrate", "--verify"]);
    assert_eq!(after.code, 0, "{after:?}");

    for user in [&obs, &app, &inst] {
        admin.query_drop(format!("DROP USER IF EXISTS '{user}'@'%'")).await.unwrap();
    }
    drop(admin);
    db.drop_db().await;
}

/// Many seats at once (issue 42, "Fleets"): several services among which some are unknown are
/// refused whole (exit 2 naming them, nothing changed); `handover --from web-1 --to web-2 --wait
/// --json` hands over every seat web-1 leads, in one call, and waits until web-2 leads each (one
/// JSON object per line per seat); a handover of several to a node that never comes exits 3
/// naming the seats that lapsed.
#[tokio::test]
async fn handover_of_many_seats_from_a_node_waits_for_every_one() {
    let db = common::TestDb::migrated("cli_handover_many").await;
    let url = Some(db.url.as_str());
    for s in ["m1", "m2", "m3"] {
        assert_eq!(cli(url, &["campaign", s, "web-1", "--lease", "30s"]).code, 0, "{s}");
    }
    assert_eq!(cli(url, &["campaign", "other", "web-3", "--lease", "30s"]).code, 0);

    // Unknown services among several: exit 2 naming them, nothing changed.
    let out = cli(url, &["handover", "m1", "mx", "m2", "my", "--to", "web-2"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("unknown services 'mx', 'my'"), "{}", out.stderr);
    assert!(out.stderr.contains("nothing was changed"), "{}", out.stderr);
    assert_eq!(out.stdout, "", "nothing on standard output");
    for s in ["m1", "m2"] {
        assert_eq!(cli(url, &["am-i-leader", s, "web-1"]).code, 0, "{s} still web-1's");
        let seat = cli(url, &["status", s, "--json"]).json();
        assert!(seat["handover_to"].is_null(), "{s}: {seat}");
    }
    let rows: Option<i64> = db.conn().await.query_first("SELECT COUNT(*) FROM leader_election WHERE service_id IN ('mx', 'my')").await.unwrap();
    assert_eq!(rows, Some(0), "no seat made");
    // A node that leads nothing: nothing to do.
    let out = cli(url, &["handover", "--from", "web-9", "--to", "web-2"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("web-9 leads no service"), "{}", out.stdout);

    // --from web-1 --wait: web-1 sees the handovers at its renews and acknowledges them, web-2
    // campaigns, in the background.
    let url2 = db.url.clone();
    let nodes = std::thread::spawn(move || {
        let reserved = |s: &str| cli(Some(&url2), &["status", s, "--json"]).json()["handover_to"].as_str() == Some("web-2");
        assert!(cli_support::wait_until(Duration::from_secs(20), || ["m1", "m2", "m3"].iter().all(|s| reserved(s))), "the handovers");
        for s in ["m1", "m2", "m3"] {
            assert_eq!(cli(Some(&url2), &["campaign", s, "web-1", "--lease", "1s"]).code, 1, "{s}: web-1 sees the handover");
            assert_eq!(cli(Some(&url2), &["resign", s, "web-1"]).code, 0, "{s}");
            assert_eq!(cli(Some(&url2), &["campaign", s, "web-2", "--lease", "1s"]).code, 0, "{s}: web-2 takes it");
        }
    });
    let out = cli(url, &["handover", "--from", "web-1", "--to", "web-2", "--wait", "--json"]);
    nodes.join().unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<serde_json::Value> = out.stdout.lines().map(|l| serde_json::from_str(l).expect(l)).collect();
    assert_eq!(lines.len(), 3, "one object per seat: {}", out.stdout);
    for (v, s) in lines.iter().zip(["m1", "m2", "m3"]) {
        assert_eq!(keys(v), strs(&["service_id", "is_leader", "leader_id", "term", "lease_remaining_ms", "waited_ms"]), "{v}");
        assert_eq!((v["service_id"].as_str(), v["is_leader"].as_u64(), v["leader_id"].as_str(), v["term"].as_u64()),
                   (Some(s), Some(1), Some("web-2"), Some(2)), "{v}");
    }
    assert_eq!(cli(url, &["am-i-leader", "other", "web-3"]).code, 0, "web-3's seat untouched");

    // To a node that never comes: exit 3 once each reservation lapsed (web-2's 1 s lease runs
    // out unacknowledged, then one lease), naming the seats.
    let out = cli(url, &["handover", "m1", "m2", "--to", "ghost", "--wait"]);
    assert_eq!(out.code, 3, "{out:?}");
    assert!(out.stderr.contains("lapsed") && out.stderr.contains("'m1', 'm2'"), "{}", out.stderr);
    // Without --wait: a line per seat and a count.
    let out = cli(url, &["handover", "m3", "other", "--to", "web-4"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("2 of 2 services handed over to web-4"), "{}", out.stdout);
    assert_eq!(cli(url, &["status", "other", "--json"]).json()["handover_to"].as_str(), Some("web-4"));
    db.drop_db().await;
}
