//! The shortest useful program: take part in the election of `billing`, and while leading, make
//! fenced writes — each in a transaction that `assert_leader` guards, so a write of a node that
//! lost the seat can never commit. Resigns on Ctrl-C or SIGTERM, so another node takes over at
//! once.
//!
//! The election schema is installed once per database by an operator, before any copy of the
//! program runs: `mysqlleader migrate` (the CLI). The application's account (`mysqlleader grant
//! ACCOUNT --role app`) may not install it, so the program does not migrate, except with
//! `--migrate`, for a development database whose account may.
//!
//! ```text
//! mysqlleader --url mysql://admin:secret@127.0.0.1:3306/app migrate     # once, as the operator
//! MYSQLLEADER_URL=mysql://app:secret@127.0.0.1:3306/app cargo run --release --example elect -- web-1
//! ```
use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysqlleader::Elector;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Arguments: [--migrate] [NODE]
    let (flags, args): (Vec<String>, Vec<String>) = std::env::args().skip(1).partition(|a| a.starts_with('-'));
    if let Some(unknown) = flags.iter().find(|f| *f != "--migrate") {
        return Err(format!("unknown option {unknown}; usage: elect [--migrate] [NODE]").into());
    }
    let migrate = !flags.is_empty();
    let url = std::env::var("MYSQLLEADER_URL")
        .or_else(|_| std::env::var("MYSQLLEADER_TEST_URL"))
        .map_err(|_| "usage: MYSQLLEADER_URL=mysql://user:pass@host:port/db elect [--migrate] [NODE]")?;
    let node = args.into_iter().next().unwrap_or_else(|| format!("node-{}", std::process::id()));
    let pool = mysqlleader::pool_from_url(&url)?;
    // The election schema: installed by the operator (`mysqlleader migrate`); here only with
    // --migrate (idempotent, cheap when current).
    if migrate {
        mysqlleader::migrate(&pool).await?;
    }
    pool.get_conn().await?.query_drop("CREATE TABLE IF NOT EXISTS ledger (at DATETIME(6), node VARCHAR(128), term BIGINT UNSIGNED)").await?;

    let elector = Elector::builder(pool.clone(), "billing").node_id(&node).lease(Duration::from_secs(10)).start()?;
    // Created once, so a signal that arrives while a write is in flight is not lost.
    use tokio::signal::unix::{signal, SignalKind};
    let (mut sigint, mut sigterm) = (signal(SignalKind::interrupt())?, signal(SignalKind::terminate())?);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = sigint.recv() => break,
            _ = sigterm.recv() => break,
            _ = tick.tick() => {
                if !elector.is_leader() {
                    // An error no retry can mend (the schema not installed, a missing grant): say
                    // it and stop, instead of waiting for ever.
                    if let Some(e) = elector.state().last_error.filter(|e| e.is_permanent()) {
                        elector.shutdown().await.ok();
                        eprintln!("{node}: {e}");
                        std::process::exit(1);
                    }
                    continue;
                }
                // One fenced write: rejected (and rolled back) unless this node still leads at
                // its term when the transaction commits.
                let mut conn = pool.get_conn().await?;
                let mut tx = conn.start_transaction(Default::default()).await?;
                match elector.assert_leader(&mut tx).await {
                    Ok(term) => {
                        tx.exec_drop("INSERT INTO ledger VALUES (UTC_TIMESTAMP(6), ?, ?)", (&node, term)).await?;
                        tx.commit().await?;
                        println!("{node}: wrote at term {term}");
                    }
                    Err(e) => println!("{node}: not written: {e}"),
                }
            }
        }
    }
    elector.shutdown().await?; // resigns: a follower takes over at once
    Ok(())
}
