//! Text protocol vs server-side prepared statements for the hot calls, side by side in one run
//! (issue "The trust boundary", 10: the library sends its calls as text, with the parameters
//! written in as literals, so that a full prepared-statement table cannot stop them).
//!
//! ```text
//! scripts/testdb.sh run cargo bench --bench protocol            # a throwaway mariadbd
//! cargo bench --bench protocol -- URL                             # or MYSQLLEADER_TEST_URL
//! ```
//!
//! On one connection it alternates rounds of 500 calls each way (prepared once and cached, as
//! mysql_async does; text through `mysqlleader::procedures`), for a leader's renew and a
//! follower's check, and prints the median time per call of each way and their ratio.

use std::time::{Duration, Instant};

use mysql_async::prelude::{Query, Queryable, WithParams};

const ROUNDS: usize = 7;
const CALLS: usize = 500;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let url = std::env::args().nth(1).filter(|a| a.starts_with("mysql://"))
        .or_else(|| std::env::var("MYSQLLEADER_TEST_URL").ok())
        .expect("pass a URL or set MYSQLLEADER_TEST_URL");
    let base = mysql_async::Opts::from_url(&url).expect("URL");
    let mut admin = mysql_async::Conn::new(base.clone()).await.expect("connect");
    admin.query_drop("CREATE DATABASE IF NOT EXISTS mysqlleader_bench_protocol").await.unwrap();
    let opts = mysql_async::OptsBuilder::from_opts(base).db_name(Some("mysqlleader_bench_protocol"));
    let pool = mysql_async::Pool::new(opts.clone());
    mysqlleader::migrate(&pool).await.expect("migrate");
    let mut conn = mysql_async::Conn::new(opts).await.unwrap();
    let lease = Duration::from_secs(60);
    mysqlleader::procedures::campaign(&mut conn, "bench", "leader", lease).await.unwrap();

    println!("| call | prepared µs | text µs | text / prepared |");
    println!("| --- | --- | --- | --- |");
    for (what, node) in [("leader's renew", "leader"), ("follower's check", "follower")] {
        let (mut prepared, mut text) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let t = Instant::now();
            for _ in 0..CALLS {
                let _: Option<mysql_async::Row> =
                    "CALL campaign(?, ?, ?)".with(("bench", node, 60_000)).first(&mut conn).await.unwrap();
            }
            prepared.push(t.elapsed().as_secs_f64() * 1e6 / CALLS as f64);
            let t = Instant::now();
            for _ in 0..CALLS {
                mysqlleader::procedures::campaign(&mut conn, "bench", node, lease).await.unwrap();
            }
            text.push(t.elapsed().as_secs_f64() * 1e6 / CALLS as f64);
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            v[v.len() / 2]
        };
        let (p, t) = (median(&mut prepared), median(&mut text));
        println!("| {what} | {p:.0} | {t:.0} | {:.2} |", t / p);
    }
    drop(conn);
    pool.disconnect().await.unwrap();
    admin.query_drop("DROP DATABASE mysqlleader_bench_protocol").await.unwrap();
}
