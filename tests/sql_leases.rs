//! Node leases (issue 42, sql/V15__node_leases.sql): a session's seats hang on one lease row
//! (`grant_lease`, `take_seats`), and one `renew_lease` renews them all by writing that row
//! alone. A seat's lease ends at the later of its own end and its lease's, so a lease that ends
//! frees its seats for the next campaign (a new term, the old one ended `expired` at the lease's
//! end), and a valid one keeps every node but its own off them. Only the account a lease was
//! granted to may use it. Seats the caller does not hold at their term are let go of, and seats
//! it holds on their own lease are hung on it.

use crate::{common, sql_support};
use std::time::Duration;

use common::TestDb;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};
use mysqlleader::procedures::{self, Account, LeaseAnswer, Role};
use sql_support::*;

fn mine(a: &LeaseAnswer) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = a.seats.iter().filter(|s| s.answer.is_leader).map(|s| (s.service_id.clone(), s.answer.term)).collect();
    v.sort();
    v
}

/// Rows written by this connection since the last call (its session's Handler_update and
/// Handler_write, which count row changes in every table the statements touched).
async fn rows_written(c: &mut Conn) -> i64 {
    let rows: Vec<(String, String)> = c.query("SHOW SESSION STATUS WHERE Variable_name IN ('Handler_update', 'Handler_delete')").await.unwrap();
    rows.iter().map(|(_, v)| v.parse::<i64>().unwrap()).sum()
}

async fn lease_row(c: &mut Conn, lease_id: u64) -> (i64, u64) {
    let sql = format!("SELECT {}, lost FROM leader_election_lease WHERE lease_id = ?", us("expires_at"));
    c.exec_first(sql, (lease_id,)).await.unwrap().expect("the lease's row")
}

#[tokio::test]
async fn one_renew_writes_one_row_and_keeps_every_seat_on_the_lease() {
    let db = TestDb::migrated("leases_renew").await;
    let mut c = connect(&db.url).await;
    let lease = Duration::from_millis(700);
    let grant = procedures::grant_lease(&mut c, "a", lease).await.expect("grant_lease");
    assert!(grant.lease_id > 0 && grant.lease_remaining == lease, "{grant:?}");
    let ids: Vec<String> = (0..30).map(|i| format!("s{i:02}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let took = procedures::take_seats(&mut c, grant.lease_id, "a", lease, &refs).await.expect("take_seats");
    assert!(took.renewed, "{took:?}");
    assert_eq!(mine(&took).len(), 30, "every new seat taken at term 1: {took:?}");
    assert!(mine(&took).iter().all(|(_, t)| *t == 1));
    let before: Vec<Option<Seat>> = {
        let mut v = Vec::new();
        for s in &refs {
            v.push(seat(&mut c, s).await);
        }
        v
    };
    let history_before: i64 = c.query_first("SELECT COUNT(*) FROM leader_election_history").await.unwrap().unwrap();

    // Renews past the first lease's end: each writes the lease's row alone, 3 seats or 30.
    let held: Vec<(&str, u64)> = refs.iter().map(|s| (*s, 1)).collect();
    let mut written = Vec::new();
    for round in 0..4 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let n = if round % 2 == 0 { 3 } else { 30 };
        rows_written(&mut c).await;
        let at = rows_written(&mut c).await;
        let renewed = procedures::renew_lease(&mut c, grant.lease_id, "a", lease, &held[..n]).await.expect("renew_lease");
        written.push(rows_written(&mut c).await - at);
        assert!(renewed.renewed && renewed.lease_remaining == lease, "{renewed:?}");
        assert_eq!(mine(&renewed).len(), n, "every listed seat is on the lease: {renewed:?}");
        assert!(renewed.seats.iter().all(|s| s.answer.lease_remaining > Duration::from_millis(600)), "{renewed:?}");
    }
    assert_eq!(written[0], written[1], "a renew writes as many rows for 30 seats as for 3: {written:?}");
    assert!(written[0] <= 1, "one row (the lease's): {written:?}");
    // The seats' own rows did not change; yet a leads every one of them (1 s after its take,
    // with a lease of 0.7 s), and its fence holds.
    for (s, b) in refs.iter().zip(&before) {
        assert_eq!(&seat(&mut c, s).await, b, "{s}: a renew of the lease leaves the seat's row alone");
        assert_eq!(am_i_leader(&mut c, s, "a").await.flag("is_leader"), 1, "{s}");
    }
    assert!(current_leader(&mut c, "s00").await.remaining_ms() > 400);
    exec(&mut c, "START TRANSACTION").await;
    assert_leader(&mut c, "s07", "a", 1).await.expect("the fence holds on a seat on the lease");
    exec(&mut c, "COMMIT").await;
    let history_after: i64 = c.query_first("SELECT COUNT(*) FROM leader_election_history").await.unwrap().unwrap();
    assert_eq!(history_after, history_before, "a renew writes no history");
    // Another node cannot take a seat on a valid lease, one by one or many at once: the lease
    // renewed once more first, so that its 0.7 s cover these three calls alone, not the 60 checks
    // above (a loaded machine once took longer than the lease over those: CI81, MySQL).
    let renewed = procedures::renew_lease(&mut c, grant.lease_id, "a", lease, &held).await.expect("renew_lease");
    assert!(renewed.renewed && mine(&renewed).len() == 30, "{renewed:?}");
    assert_eq!(campaign(&mut c, "s03", "b", 5_000).await.text("leader_id").as_deref(), Some("a"));
    let b = procedures::grant_lease(&mut c, "b", Duration::from_secs(5)).await.unwrap();
    let tried = procedures::take_seats(&mut c, b.lease_id, "b", Duration::from_secs(5), &refs).await.unwrap();
    assert!(mine(&tried).is_empty(), "{tried:?}");
    assert!(procedures::campaign_seats(&mut c, "b", Duration::from_secs(5), &refs).await.unwrap().iter().all(|s| !s.answer.is_leader));
    db.drop_db().await;
}

/// A lease that ends frees its seats: a takeover (one by one, many at once, or the expiry
/// event) ends each term `expired` at the lease's end, writes the lease's row (lost), and the
/// lease is renewed no more.
#[tokio::test]
async fn a_lease_that_ends_frees_its_seats_for_the_next_term() {
    let db = TestDb::migrated("leases_end").await;
    let mut c = connect(&db.url).await;
    let lease = Duration::from_millis(300);
    let a = procedures::grant_lease(&mut c, "a", lease).await.unwrap();
    let took = procedures::take_seats(&mut c, a.lease_id, "a", lease, &["x", "y", "z"]).await.unwrap();
    assert_eq!(mine(&took).len(), 3);
    let (lease_ends, lost) = lease_row(&mut c, a.lease_id).await;
    assert_eq!(lost, 0);
    // Each seat's term ends at the later of its own end and the lease's (its own was written a
    // moment after the lease's renew, in the same call).
    let ends = lease_ends.max(seat(&mut c, "x").await.unwrap().expires_us.unwrap());
    for s in ["y", "z"] {
        assert_eq!(lease_ends.max(seat(&mut c, s).await.unwrap().expires_us.unwrap()), ends, "{s}: taken at the same instant");
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    // One by one.
    let r = campaign(&mut c, "x", "b", 5_000).await;
    assert_eq!((r.flag("is_leader"), r.term()), (1, 2), "b takes x at the next term");
    let h = history(&mut c, "x").await;
    assert_eq!(h[0].ended_how.as_deref(), Some("expired"));
    assert_eq!(h[0].ended_us, Some(ends), "the term ended at the lease's end");
    // Many at once.
    let b = procedures::grant_lease(&mut c, "b", Duration::from_secs(5)).await.unwrap();
    let took = procedures::take_seats(&mut c, b.lease_id, "b", Duration::from_secs(5), &["y"]).await.unwrap();
    assert_eq!(mine(&took), [("y".to_string(), 2)], "{took:?}");
    assert_eq!(history(&mut c, "y").await[0].ended_us, Some(ends));
    // The expiry event's sweep.
    exec(&mut c, "CALL leader_election_expire_stale()").await;
    let z = history(&mut c, "z").await;
    assert_eq!((z[0].ended_how.as_deref(), z[0].ended_us), (Some("expired"), Some(ends)));
    assert_eq!(seat(&mut c, "z").await.unwrap().leader_id, None, "the sweep vacated z");
    assert!(lease_row(&mut c, a.lease_id).await.1 >= 2, "each takeover wrote the lease's row");
    // The ended lease is renewed no more, and a's renew claims none of its old seats.
    let late = procedures::renew_lease(&mut c, a.lease_id, "a", lease, &[("x", 1), ("y", 1), ("z", 1)]).await.unwrap();
    assert!(!late.renewed && late.lease_remaining.is_zero(), "{late:?}");
    assert!(mine(&late).is_empty(), "{late:?}");
    // Nor does a take onto it take anything.
    let none = procedures::take_seats(&mut c, a.lease_id, "a", lease, &["z", "fresh"]).await.unwrap();
    assert!(!none.renewed && mine(&none).is_empty(), "{none:?}");
    db.drop_db().await;
}

/// Seats listed without the term they hang on at are let go of, until the lease's end before
/// the renew (never sooner); seats held on their own lease are hung on it; an operator's force
/// takes a seat off the lease.
#[tokio::test]
async fn the_renew_lets_go_of_seats_not_held_and_hangs_on_those_held() {
    let db = TestDb::migrated("leases_hang").await;
    let mut c = connect(&db.url).await;
    let lease = Duration::from_millis(1000);
    let a = procedures::grant_lease(&mut c, "a", lease).await.unwrap();
    procedures::take_seats(&mut c, a.lease_id, "a", lease, &["p", "q"]).await.unwrap();
    assert_eq!(campaign(&mut c, "r", "a", 1000).await.term(), 1, "r: a's by a campaign of its own");
    let (lease_ends, _) = lease_row(&mut c, a.lease_id).await;
    let ends_before = lease_ends.max(seat(&mut c, "q").await.unwrap().expires_us.unwrap());
    let r = procedures::renew_lease(&mut c, a.lease_id, "a", lease, &[("p", 1), ("q", 0), ("r", 1)]).await.unwrap();
    assert_eq!(mine(&r), [("p".to_string(), 1), ("r".to_string(), 1)], "q let go of, r hung on: {r:?}");
    let q = seat(&mut c, "q").await.unwrap();
    assert_eq!(q.expires_us, Some(ends_before), "q keeps its end as it was before the renew (the later of its own and the lease's)");
    tokio::time::sleep(Duration::from_millis(750)).await;
    procedures::renew_lease(&mut c, a.lease_id, "a", lease, &[("p", 1), ("r", 1)]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(625)).await;
    // 1,375 ms after the first renew: p and r live on with the lease; q has ended.
    assert_eq!(am_i_leader(&mut c, "r", "a").await.flag("is_leader"), 1);
    assert_eq!(am_i_leader(&mut c, "p", "a").await.flag("is_leader"), 1);
    // From here on the lease runs 5 s: what follows is not about time (CI67: the calls below
    // outlasted what was left of a 400 ms lease on a loaded machine, and the last renew found
    // the lease ended).
    let kept = procedures::renew_lease(&mut c, a.lease_id, "a", Duration::from_secs(5), &[("p", 1), ("r", 1)]).await.unwrap();
    assert!(kept.renewed, "{kept:?}");
    assert_eq!(campaign(&mut c, "q", "b", 5_000).await.flag("is_leader"), 1, "q is free for b");
    // An operator's force takes p off the lease: a's renew no longer claims it.
    force_leader(&mut c, "p", "b", 5_000).await;
    let after = procedures::renew_lease(&mut c, a.lease_id, "a", Duration::from_secs(5), &[("p", 1), ("r", 1)]).await.unwrap();
    assert_eq!(mine(&after), [("r".to_string(), 1)], "{after:?}");
    assert!(after.seats.iter().any(|s| s.service_id == "p" && s.answer.leader_id.as_deref() == Some("b")));
    db.drop_db().await;
}

/// Only the account a lease was granted to may renew it or take seats onto it: another
/// account's calls with its id renew nothing, take nothing and keep nothing alive; bad input
/// names its parameter.
#[tokio::test]
async fn a_lease_is_its_accounts_alone() {
    let db = TestDb::migrated("leases_owner").await;
    let mut admin = connect(&db.url).await;
    let user = format!("lease_{}", std::process::id());
    exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    exec(&mut admin, &format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")).await;
    procedures::grant(&db.pool, &Account::parse(&format!("'{user}'@'%'")).unwrap(), Role::App, &[]).await.expect("grant");
    let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(user.as_str())).pass(Some("pw"));
    let mut other = Conn::new(opts).await.unwrap();

    let lease = Duration::from_millis(400);
    let a = procedures::grant_lease(&mut admin, "a", lease).await.unwrap();
    procedures::take_seats(&mut admin, a.lease_id, "a", lease, &["t"]).await.unwrap();
    let (ends, _) = lease_row(&mut admin, a.lease_id).await;
    // A follower's watch: a lease is answered to its own account, and to an account not
    // limited to some services (which may read every seat anyway), never to a limited one.
    assert_eq!(procedures::watch_leases(&mut admin, &[a.lease_id]).await.unwrap().len(), 1, "a's lease, to its own account");
    assert_eq!(procedures::watch_leases(&mut other, &[a.lease_id]).await.unwrap().len(), 1, "a's lease, to an unlimited account");
    // Limited accounts: "t%" twice, and "u%".
    let mut limited = Vec::new();
    for (suffix, pattern) in [("l1", "t%"), ("l2", "t%"), ("l3", "u%")] {
        let name = format!("{user}_{suffix}");
        exec(&mut admin, &format!("DROP USER IF EXISTS '{name}'@'%'")).await;
        exec(&mut admin, &format!("CREATE USER '{name}'@'%' IDENTIFIED BY 'pw'")).await;
        procedures::grant(&db.pool, &Account::parse(&format!("'{name}'@'%'")).unwrap(), Role::App, &[pattern.to_string()]).await.expect("grant");
        let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(name.as_str())).pass(Some("pw"));
        limited.push((name, Conn::new(opts).await.unwrap()));
    }
    let own = procedures::grant_lease(&mut limited[0].1, "c", lease).await.unwrap();
    for (i, (account, expected)) in [("t%", vec![own.lease_id]), ("the same patterns", vec![own.lease_id]), ("other patterns", vec![])].into_iter().enumerate() {
        let seen: Vec<u64> = procedures::watch_leases(&mut limited[i].1, &[a.lease_id, own.lease_id]).await.unwrap()
            .iter().map(|l| l.lease_id).collect();
        assert_eq!(seen, expected, "a's lease (an unlimited account's) and a \"t%\" account's, to an account limited to {account}");
    }
    assert_eq!(procedures::watch_leases(&mut admin, &[own.lease_id]).await.unwrap().len(), 1, "a limited account's lease, to an unlimited one");
    for (name, conn) in limited {
        conn.disconnect().await.unwrap();
        exec(&mut admin, &format!("DROP USER IF EXISTS '{name}'@'%'")).await;
    }
    let r = procedures::renew_lease(&mut other, a.lease_id, "a", Duration::from_secs(60), &[("t", 1)]).await.unwrap();
    assert!(!r.renewed && mine(&r).is_empty(), "{r:?}");
    let t = procedures::take_seats(&mut other, a.lease_id, "a", Duration::from_secs(60), &["u"]).await.unwrap();
    assert!(!t.renewed && mine(&t).is_empty(), "{t:?}");
    assert_eq!(lease_row(&mut admin, a.lease_id).await.0, ends, "the lease's end did not move");
    assert!(seat(&mut admin, "u").await.is_none_or(|s| s.leader_id.is_none()), "u was not taken onto it");
    // Its own lease works for it.
    let own = procedures::grant_lease(&mut other, "a", lease).await.unwrap();
    assert!(procedures::take_seats(&mut other, own.lease_id, "a", lease, &["u"]).await.unwrap().renewed);
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(campaign(&mut admin, "t", "b", 5_000).await.flag("is_leader"), 1, "t's lease ended on time");

    for (bad, parameter) in [("not json", "seats"), ("[[\"t\"]]", "seats"), ("[[\"t\", \"1\"]]", "seats"), ("[[\"t\", -1]]", "seats"),
                             ("[[1, 1]]", "seats"), ("[[\"t\", 1], [\"t\", 2]]", "seats")] {
        let e = call(&mut admin, "CALL renew_lease(?, 'a', 1000, ?)", (a.lease_id, bad)).await.expect_err(bad);
        e.assert_invalid(parameter, bad);
    }
    call(&mut admin, "CALL renew_lease(0, 'a', 1000, '[]')", ()).await.expect_err("lease 0").assert_invalid("lease_id", "lease_id 0");
    call(&mut admin, "CALL take_seats(NULL, 'a', 1000, '[]')", ()).await.expect_err("lease NULL").assert_invalid("lease_id", "lease_id NULL");
    call(&mut admin, "CALL grant_lease('', 1000)", ()).await.expect_err("node ''").assert_invalid("node_id", "empty node");
    call(&mut admin, "CALL grant_lease('a', 0)", ()).await.expect_err("lease 0").assert_invalid("lease_ms", "lease 0");
    // A follower's watch: bad lists name their parameter.
    for bad in ["not json", "{}", "[0]", "[-1]", "[\"1\"]", "[1.5]", "[null]"] {
        call(&mut admin, "CALL watch_leases(?)", (bad,)).await.expect_err(bad).assert_invalid("lease_ids", bad);
    }
    call(&mut admin, "CALL watch_leases(NULL)", ()).await.expect_err("NULL").assert_invalid("lease_ids", "NULL");
    assert!(!in_transaction(&mut admin).await);
    other.disconnect().await.unwrap();
    exec(&mut admin, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    db.drop_db().await;
}

/// `renew_lease` answers the lease's `lost` (src/session/on_lease.rs: a session leaves out of
/// its renews the seats it saw on the lease while `lost` stays as it was): every way another
/// node or an operator takes a seat off a valid lease counts in it, read by the same statement as
/// the seats' rows; the node's own resign and its own renew's let-go do not (it knows of them).
#[tokio::test]
async fn the_renew_answers_how_many_seats_others_took_from_the_lease() {
    let db = TestDb::migrated("leases_lost").await;
    let mut c = connect(&db.url).await;
    let lease = Duration::from_secs(30);
    let a = procedures::grant_lease(&mut c, "a", lease).await.unwrap();
    let ids = ["p", "q", "r", "s", "t"];
    assert_eq!(mine(&procedures::take_seats(&mut c, a.lease_id, "a", lease, &ids).await.unwrap()).len(), 5);
    let lease_id = a.lease_id;
    let renew = |seats: &'static [(&'static str, u64)]| {
        let url = db.url.clone();
        async move {
            let mut c = connect(&url).await;
            let r = procedures::renew_lease(&mut c, lease_id, "a", lease, seats).await.expect("renew_lease");
            assert!(r.renewed, "{r:?}");
            r
        }
    };
    let quiet = renew(&[]).await;
    assert_eq!((quiet.lost, quiet.seats.len()), (Some(0), 0), "a renew listing nothing renews the lease alone: {quiet:?}");
    // The node's own resign, and its own renew's let-go of a seat listed at another term: not counted.
    assert_eq!(resign(&mut c, "p", "a").await.flag("resigned"), 1);
    let let_go = renew(&[("q", 7)]).await;
    assert_eq!(let_go.lost, Some(0), "{let_go:?}");
    assert!(mine(&let_go).is_empty(), "q is let go of: {let_go:?}");
    // Back on the lease: listed at its term (it stands on its own lease, valid, until then).
    assert_eq!(mine(&renew(&[("q", 1)]).await), [("q".to_string(), 1)]);
    // Others: an operator's force_leader, reelect, and handover, one count each.
    force_leader(&mut c, "q", "b", 30_000).await;
    let forced = renew(&[("q", 1)]).await;
    assert_eq!(forced.lost, Some(1), "{forced:?}");
    let q = &forced.seats.iter().find(|s| s.service_id == "q").expect("q's row").answer;
    assert_eq!((q.is_leader, q.leader_id.as_deref(), q.term), (false, Some("b"), 2), "read with the count: {forced:?}");
    reelect(&mut c, "r").await;
    assert_eq!(renew(&[]).await.lost, Some(2));
    let handed: Vec<mysql_async::Row> = c.exec("CALL handover_seats(?, ?)", (r#"["s"]"#, "b")).await.unwrap();
    assert_eq!(handed.len(), 1, "s handed over to b");
    assert_eq!(renew(&[]).await.lost, Some(3));
    // t, never touched, is still on the lease and led by a.
    assert_eq!(mine(&renew(&[("t", 1)]).await), [("t".to_string(), 1)]);
    // take_seats answers no count (its seats are listed by the renews after it).
    assert_eq!(procedures::take_seats(&mut c, a.lease_id, "a", lease, &["u"]).await.unwrap().lost, None);
    db.drop_db().await;
}

/// `watch_leases` of `lease_id` and of an id no lease has.
async fn watch(c: &mut Conn, lease_id: u64) -> Vec<procedures::WatchedLease> {
    procedures::watch_leases(c, &[lease_id, lease_id + 1000]).await.expect("watch_leases")
}

/// `moved` (sql/V16__lease_moves.sql, src/session/watched.rs): a follower that saw a seat on
/// another node's lease reads the lease's row (`watch_leases`) instead of the seat's while the
/// lease is valid and its `moved` is unchanged; so every way a seat leaves a lease must move
/// it, in the same transaction: the node's own resigns (one, and many at once), its renew's
/// let-go, its move onto a newer lease of its own, an operator's force, reelect and handover.
/// A seat that stays is still on the lease, as the watch says, and a released lease is no
/// longer answered.
#[tokio::test]
async fn every_seat_that_leaves_a_lease_moves_it_for_the_followers_that_watch_it() {
    let db = TestDb::migrated("leases_moved").await;
    let mut c = connect(&db.url).await;
    let lease = Duration::from_secs(30);
    let a = procedures::grant_lease(&mut c, "a", lease).await.unwrap();
    let ids = ["p", "q", "r", "s", "t", "u", "v", "w", "x"];
    assert_eq!(mine(&procedures::take_seats(&mut c, a.lease_id, "a", lease, &ids).await.unwrap()).len(), ids.len());
    // The follower b's renew answers each of a's seats with a's lease and its moved.
    let b = procedures::grant_lease(&mut c, "b", lease).await.unwrap();
    let seen = procedures::renew_lease(&mut c, b.lease_id, "b", lease, &[("p", 0), ("x", 0)]).await.unwrap();
    let mut followed = seen.followed.clone();
    followed.sort_by(|l, r| l.service_id.cmp(&r.service_id));
    assert_eq!(followed, ["p", "x"].map(|id| procedures::FollowedSeat { service_id: id.into(), lease_id: a.lease_id, moved: 0 }),
               "{seen:?}");
    let first = watch(&mut c, a.lease_id).await;
    assert_eq!(first.len(), 1, "only the valid lease that exists: {first:?}");
    assert_eq!((first[0].lease_id, first[0].node_id.as_str(), first[0].moved), (a.lease_id, "a", 0));
    assert!(first[0].lease_remaining > Duration::from_secs(25) && first[0].lease_remaining <= lease, "{first:?}");

    let mut moved = 0;
    let mut left = |how: &str, now: u64| {
        assert!(now > moved, "{how}: moved stayed at {now}");
        moved = now;
    };
    assert_eq!(resign(&mut c, "p", "a").await.flag("resigned"), 1);
    left("resign", watch(&mut c, a.lease_id).await[0].moved);
    let resigned = procedures::resign_seats(&mut c, "a", &["q", "r"]).await.unwrap();
    assert!(resigned.iter().all(|s| s.resigned) && resigned.len() == 2, "{resigned:?}");
    left("resign_seats", watch(&mut c, a.lease_id).await[0].moved);
    let let_go = procedures::renew_lease(&mut c, a.lease_id, "a", lease, &[("s", 7)]).await.unwrap();
    assert!(mine(&let_go).is_empty(), "s is let go of: {let_go:?}");
    left("renew_lease's let-go", watch(&mut c, a.lease_id).await[0].moved);
    force_leader(&mut c, "t", "b", 30_000).await;
    left("force_leader", watch(&mut c, a.lease_id).await[0].moved);
    reelect(&mut c, "u").await;
    left("reelect", watch(&mut c, a.lease_id).await[0].moved);
    let handed: Vec<mysql_async::Row> = c.exec("CALL handover_seats(?, ?)", (r#"["v"]"#, "b")).await.unwrap();
    assert_eq!(handed.len(), 1, "v handed over to b");
    left("handover_seats", watch(&mut c, a.lease_id).await[0].moved);
    // w moves onto a newer lease of a's (a session that lost track of its lease).
    let a2 = procedures::grant_lease(&mut c, "a", lease).await.unwrap();
    assert_eq!(mine(&procedures::renew_lease(&mut c, a2.lease_id, "a", lease, &[("w", 1)]).await.unwrap()), [("w".to_string(), 1)]);
    left("a move onto a newer lease", watch(&mut c, a.lease_id).await[0].moved);
    // x never moved: still on the lease, led by a at its term, as the watch says.
    let x = procedures::renew_lease(&mut c, b.lease_id, "b", lease, &[("x", 0)]).await.unwrap();
    assert_eq!(x.followed, [procedures::FollowedSeat { service_id: "x".into(), lease_id: a.lease_id, moved }], "{x:?}");
    assert_eq!(procedures::release_lease(&mut c, a.lease_id, "a").await.unwrap().seats, [("x".to_string(), 1)]);
    assert!(watch(&mut c, a.lease_id).await.is_empty(), "a released lease is not answered");
    assert!(!in_transaction(&mut c).await);
    db.drop_db().await;
}

/// Every seat as it is: service, leader, term, lease id, its own lease's end.
async fn seats_now(c: &mut Conn) -> Vec<(String, Option<String>, u64, Option<u64>, Option<i64>)> {
    let sql = format!("SELECT CAST(service_id AS CHAR), CAST(leader_id AS CHAR), term, lease_id, {} FROM leader_election ORDER BY 1",
                      us("lease_expires_at"));
    c.query(sql).await.unwrap()
}

/// `release_lease` (a session's close, src/session/resigns.rs): one call ends the lease and
/// vacates every seat on it at once, also those whose own lease still ran, each term closed as
/// resigned at that instant by the releasing account, as resign closes it; a follower then takes
/// them at once (the lease's row then goes with the account's next grant). Only the lease's account and node may release
/// it, bad input names its parameter, and a refused call writes nothing.
#[tokio::test]
async fn a_released_lease_frees_every_seat_at_once_as_resigned() {
    let db = TestDb::migrated("leases_release").await;
    let mut c = connect(&db.url).await;
    let user = format!("release_{}", std::process::id());
    exec(&mut c, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    exec(&mut c, &format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")).await;
    procedures::grant(&db.pool, &Account::parse(&format!("'{user}'@'%'")).unwrap(), Role::App, &[]).await.expect("grant");
    let opts = OptsBuilder::from_opts(Opts::from_url(&db.url).unwrap()).user(Some(user.as_str())).pass(Some("pw"));
    let mut other = Conn::new(opts).await.unwrap();

    let lease = Duration::from_secs(60);
    let a = procedures::grant_lease(&mut c, "a", lease).await.unwrap();
    procedures::take_seats(&mut c, a.lease_id, "a", lease, &["x", "y", "z"]).await.unwrap();
    // w: won by a campaign of its own, then hung on the lease by a renew (its own lease runs 60 s).
    assert_eq!(campaign(&mut c, "w", "a", 60_000).await.term(), 1);
    let r = procedures::renew_lease(&mut c, a.lease_id, "a", lease, &[("w", 1), ("x", 1), ("y", 1), ("z", 1)]).await.unwrap();
    assert_eq!(mine(&r).len(), 4, "{r:?}");
    let seats = ["w", "x", "y", "z"];
    let before = seats_now(&mut c).await;
    let lease_before = lease_row(&mut c, a.lease_id).await;
    let open_terms = "SELECT COUNT(*) FROM leader_election_history WHERE ended_at IS NULL";
    let open_before: i64 = c.query_first(open_terms).await.unwrap().unwrap();

    // Refused, or not this account's or node's: nothing written, every seat still a's.
    let theirs = procedures::release_lease(&mut other, a.lease_id, "a").await.unwrap();
    assert!(!theirs.released && theirs.seats.is_empty(), "another account's release: {theirs:?}");
    let wrong_node = procedures::release_lease(&mut c, a.lease_id, "b").await.unwrap();
    assert!(!wrong_node.released && wrong_node.seats.is_empty(), "another node's release: {wrong_node:?}");
    call(&mut c, "CALL release_lease(0, 'a')", ()).await.expect_err("lease 0").assert_invalid("lease_id", "lease_id 0");
    call(&mut c, "CALL release_lease(NULL, 'a')", ()).await.expect_err("lease NULL").assert_invalid("lease_id", "lease_id NULL");
    call(&mut c, "CALL release_lease(?, '')", (a.lease_id,)).await.expect_err("node ''").assert_invalid("node_id", "empty node");
    assert!(!in_transaction(&mut c).await);
    assert_eq!(seats_now(&mut c).await, before, "no seat changed by a refused release");
    assert_eq!(lease_row(&mut c, a.lease_id).await, lease_before, "nor the lease");
    for s in seats {
        assert_eq!(am_i_leader(&mut c, s, "a").await.flag("is_leader"), 1, "{s}: still a's");
    }

    // The release: every seat on the lease vacant at once, with its term.
    let released = procedures::release_lease(&mut c, a.lease_id, "a").await.unwrap();
    let mut got = released.seats.clone();
    got.sort();
    assert!(released.released, "{released:?}");
    assert_eq!(got, seats.iter().map(|s| (s.to_string(), 1)).collect::<Vec<_>>(), "every seat on the lease, at its term");
    assert!(!in_transaction(&mut c).await);
    let (released_at, lost): (i64, u64) = lease_row(&mut c, a.lease_id).await;
    assert_eq!(lost, lease_before.1, "the release took no seat from the lease as lost");
    assert!(released_at < lease_before.0, "the lease ended at the release");
    let me: String = c.query_first("SELECT USER()").await.unwrap().unwrap();
    for s in seats {
        assert_eq!(am_i_leader(&mut c, s, "a").await.flag("is_leader"), 0, "{s}: a leads it no more");
    }
    let open_after: i64 = c.query_first(open_terms).await.unwrap().unwrap();
    assert_eq!(open_after, open_before - 4, "the release closed the four terms");
    let terms_one = format!("SELECT CAST(service_id AS CHAR), CAST(ended_how AS CHAR), ended_by, {} FROM leader_election_history \
                             WHERE term = 1 ORDER BY 1", us("ended_at"));
    let resigned: Vec<(String, Option<String>, Option<String>, Option<i64>)> =
        seats.iter().map(|s| (s.to_string(), Some("resigned".to_string()), Some(me.clone()), Some(released_at))).collect();
    let written: Vec<(String, Option<String>, Option<String>, Option<i64>)> = c.query(terms_one.as_str()).await.unwrap();
    assert_eq!(written, resigned, "each term closed as resigned at the release, by the releasing account");
    let vacant: Vec<(String, Option<String>, u64, Option<u64>, Option<i64>)> =
        seats.iter().map(|s| (s.to_string(), None, 1, None, None)).collect();
    assert_eq!(seats_now(&mut c).await, vacant, "every seat vacant, off the lease, at its term, as a resign leaves it");
    assert_history_whole(&mut c, &seats.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "right after the release").await;
    let shown: Vec<(String, Option<String>)> = c
        .query("SELECT service_id, CAST(ended_how AS CHAR) FROM leader_election_terms WHERE term = 1 ORDER BY 1").await.unwrap();
    assert!(shown.iter().all(|(_, how)| how.as_deref() == Some("resigned")), "{shown:?}");

    // Taken at once by b (one campaign, one take_seats); the terms stay as the release closed them.
    let b = campaign(&mut c, "x", "b", 5_000).await;
    assert_eq!((b.flag("is_leader"), b.term()), (1, 2), "b takes x at once, at the next term");
    let bl = procedures::grant_lease(&mut c, "b", Duration::from_secs(5)).await.unwrap();
    let took = procedures::take_seats(&mut c, bl.lease_id, "b", Duration::from_secs(5), &["y", "z"]).await.unwrap();
    assert_eq!(mine(&took), [("y".to_string(), 2), ("z".to_string(), 2)], "{took:?}");
    let written: Vec<(String, Option<String>, Option<String>, Option<i64>)> = c.query(terms_one.as_str()).await.unwrap();
    assert_eq!(written, resigned, "the takeovers left the release's record as it was");
    assert_history_whole(&mut c, &seats.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "after the takeovers").await;
    // Released once: again, nothing; a renew or a take on it, nothing.
    let again = procedures::release_lease(&mut c, a.lease_id, "a").await.unwrap();
    assert!(!again.released && again.seats.is_empty(), "{again:?}");
    let late = procedures::renew_lease(&mut c, a.lease_id, "a", lease, &[("x", 1)]).await.unwrap();
    assert!(!late.renewed && mine(&late).is_empty(), "{late:?}");
    other.disconnect().await.unwrap();
    exec(&mut c, &format!("DROP USER IF EXISTS '{user}'@'%'")).await;
    db.drop_db().await;
}
