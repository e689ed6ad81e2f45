//! A renew carries its term (issue 39, "an incarnation in the fence"): `CALL
//! leader_election_campaign(service, node, lease_ms, held_term)` renews a lease of `node` only at
//! `held_term`; a valid lease of `node` at another term (another process with the same node id)
//! is left alone and reported as that process's (`is_leader` 0, `leader_id` node, its term and
//! lease); a vacant or expired seat is taken as `campaign` takes it; `held_term` NULL is
//! `campaign` itself, which is now a call of it.

use crate::{common, sql_support};
use std::time::Duration;

use common::TestDb;
use mysql_async::{Opts, OptsBuilder};
use mysqlleader::procedures::{self, Account, Role};
use sql_support::*;

const HELD: &str = "CALL leader_election_campaign(?, ?, ?, ?)";

#[tokio::test]
async fn a_campaign_that_carries_its_term_renews_only_that_term() {
    let db = TestDb::migrated("terms_renew").await;
    let mut c = connect(&db.url).await;
    // A vacant seat is taken by a caller that holds nothing (0), as campaign takes it.
    let won = ok(&mut c, HELD, ("s", "n", 60_000, 0)).await;
    assert_eq!((won.flag("is_leader"), won.term()), (1, 1), "{won:?}");
    // Renewed at the held term: the term stays, the lease is extended, no history is written.
    let before = history(&mut c, "s").await.len();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let expires = seat(&mut c, "s").await.unwrap().expires_us.unwrap();
    let renewed = ok(&mut c, HELD, ("s", "n", 60_000, 1)).await;
    assert_eq!((renewed.flag("is_leader"), renewed.term(), renewed.text("leader_id").as_deref()), (1, 1, Some("n")));
    assert!(seat(&mut c, "s").await.unwrap().expires_us.unwrap() > expires, "the lease was extended");
    assert_eq!(history(&mut c, "s").await.len(), before);

    // Another process with this node id leads at term 1; a caller that holds term 7, or none,
    // renews nothing and is told that node id leads, at its term, with its lease.
    for held in [7u64, 0] {
        // From a new session too (no session memory of the seat), and from the one that won.
        for conn in [&mut connect(&db.url).await, &mut c] {
            let snap = seat(conn, "s").await.unwrap();
            let other = ok(conn, HELD, ("s", "n", 1_000, held)).await;
            assert_eq!((other.flag("is_leader"), other.term(), other.text("leader_id").as_deref()), (0, 1, Some("n")),
                       "held {held}: {other:?}");
            assert!(other.remaining_ms() > 50_000 && other.remaining_ms() <= 60_000, "held {held}: {other:?}");
            assert_eq!(seat(conn, "s").await.unwrap(), snap, "held {held}: nothing written");
        }
    }
    // Plain campaign (held_term NULL) keeps the contract: the node id's lease is renewed.
    let plain = campaign(&mut c, "s", "n", 60_000).await;
    assert_eq!((plain.flag("is_leader"), plain.term()), (1, 1));
    let null = ok(&mut c, HELD, ("s", "n", 60_000, None::<u64>)).await;
    assert_eq!((null.flag("is_leader"), null.term()), (1, 1));

    // An expired seat is taken at the next term, whatever the caller held; that term is then
    // renewed when it is the one held.
    let short = ok(&mut c, HELD, ("t", "n", 150, 0)).await;
    assert_eq!((short.flag("is_leader"), short.term()), (1, 1));
    tokio::time::sleep(Duration::from_millis(250)).await;
    let taken = ok(&mut connect(&db.url).await, HELD, ("t", "n", 60_000, 1)).await;
    assert_eq!((taken.flag("is_leader"), taken.term()), (1, 2), "{taken:?}");
    let terms: Vec<u64> = history(&mut c, "t").await.iter().map(|t| t.term).collect();
    assert_eq!(terms, [1, 2]);
    assert_eq!(ok(&mut c, HELD, ("t", "n", 60_000, 2)).await.flag("is_leader"), 1);
    // Another node's valid lease: only read, whatever is held.
    let b = ok(&mut c, HELD, ("t", "b", 60_000, 2)).await;
    assert_eq!((b.flag("is_leader"), b.text("leader_id").as_deref(), b.term()), (0, Some("n"), 2));
    // The fence knows only the term really held.
    let mut fenced = connect(&db.url).await;
    exec(&mut fenced, "START TRANSACTION").await;
    assert_leader(&mut fenced, "t", "n", 2).await.expect("the held term passes the fence");
    exec(&mut fenced, "ROLLBACK").await;
    db.drop_db().await;
}

#[tokio::test]
async fn a_campaign_that_carries_its_term_names_a_bad_parameter() {
    let db = TestDb::migrated("terms_input").await;
    let mut c = connect(&db.url).await;
    refused(&mut c, HELD, ("s", "n", 1_000, -1)).await.assert_invalid("held_term", "held_term -1");
    refused(&mut c, HELD, ("s", "n", 1_000, "1.5")).await.assert_invalid("held_term", "held_term 1.5");
    refused(&mut c, HELD, ("s", "n", 1_000, "18446744073709551616")).await.assert_invalid("held_term", "held_term 2^64");
    refused(&mut c, HELD, ("", "n", 1_000, 0)).await.assert_invalid("service_id", "empty service");
    refused(&mut c, HELD, ("s", None::<String>, 1_000, 0)).await.assert_invalid("node_id", "NULL node");
    refused(&mut c, HELD, ("s", "n", 0, 0)).await.assert_invalid("lease_ms", "lease 0");
    // The first bad parameter is named, in the order of the parameters.
    refused(&mut c, HELD, ("s", "n", 0, -1)).await.assert_invalid("lease_ms", "lease 0 and held_term -1");
    assert!(seat(&mut c, "s").await.is_none(), "a refused call creates no seat");
    db.drop_db().await;
}

/// The app role may call it (granted with campaign), within its services only; a role that may
/// not campaign may not call it either.
#[tokio::test]
async fn a_campaign_that_carries_its_term_keeps_to_the_accounts_access() {
    let db = TestDb::migrated("terms_access").await;
    let mut admin = connect(&db.url).await;
    let app = format!("terms_app_{}", std::process::id());
    let observer = format!("terms_obs_{}", std::process::id());
    for (user, role, patterns) in [(&app, Role::App, vec!["billing%".to_string()]), (&observer, Role::Observer, vec![])] {
        exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
        exec(&mut admin, &format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")).await;
        procedures::grant(&db.pool, &Account::parse(&format!("'{user}'@'%'")).unwrap(), role, &patterns).await.expect("grant");
    }
    let url_of = |user: &str| {
        let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(user)).pass(Some("pw"));
        mysql_async::Pool::new(opts)
    };
    let app_pool = url_of(&app);
    let won = procedures::campaign_holding(&app_pool, "billing_eu", "n", Duration::from_secs(30), 0).await.expect("app may");
    assert!(won.is_leader && won.term == 1, "{won:?}");
    let e = procedures::campaign_holding(&app_pool, "payroll", "n", Duration::from_secs(30), 0).await.expect_err("outside");
    assert_eq!(e.sqlstate(), Some("45002"), "{e:?}");
    assert!(seat(&mut admin, "payroll").await.is_none(), "a refused call creates no seat");
    let obs_pool = url_of(&observer);
    let e = procedures::campaign_holding(&obs_pool, "billing_eu", "n", Duration::from_secs(30), 1).await.expect_err("observer");
    assert_eq!(e.server_code(), Some(1370), "{e:?}");
    for pool in [app_pool, obs_pool] {
        pool.disconnect().await.unwrap();
    }
    for user in [&app, &observer] {
        exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    }
    db.drop_db().await;
}

/// A term an operator gives this node id (`force_leader`) was won by no process of it: the
/// first campaign that carries another term (or none) claims it and leads at it; any other
/// process with the node id, calling after that, finds it claimed and follows. A term a process
/// of this node id *won* (elected) is never claimed by another, renewed or not.
#[tokio::test]
async fn a_forced_term_is_claimed_by_one_process_of_its_node_id() {
    let db = TestDb::migrated("terms_forced").await;
    let mut c = connect(&db.url).await;
    let won = ok(&mut c, HELD, ("f", "n", 60_000, 0)).await;
    assert_eq!((won.flag("is_leader"), won.term()), (1, 1));
    let forced = force_leader(&mut c, "f", "n", 60_000).await;
    assert_eq!(forced.term(), 2);
    // The process that held term 1 claims term 2 (from a session of its own: no memory of it).
    let mut first = connect(&db.url).await;
    let claimed = ok(&mut first, HELD, ("f", "n", 60_000, 1)).await;
    assert_eq!((claimed.flag("is_leader"), claimed.term()), (1, 2), "the forced term is claimed: {claimed:?}");
    // Another process with the node id, holding nothing, finds it claimed: it follows.
    let mut second = connect(&db.url).await;
    let other = ok(&mut second, HELD, ("f", "n", 60_000, 0)).await;
    assert_eq!((other.flag("is_leader"), other.text("leader_id").as_deref(), other.term()), (0, Some("n"), 2), "{other:?}");
    // The claimant renews at its term.
    assert_eq!(ok(&mut first, HELD, ("f", "n", 60_000, 2)).await.flag("is_leader"), 1);
    // A term won by election is not claimable, even before its first renew.
    let won = ok(&mut c, HELD, ("g", "n", 60_000, 0)).await;
    assert_eq!(won.term(), 1);
    let other = ok(&mut second, HELD, ("g", "n", 60_000, 0)).await;
    assert_eq!((other.flag("is_leader"), other.term()), (0, 1), "an elected term is its winner's: {other:?}");
    db.drop_db().await;
}
