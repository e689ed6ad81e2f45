//! The election benchmark (issue 9): mysqlleader against the classic SQL recipe and the physical
//! floor, side by side in one run, on one server.
//!
//! ```text
//! scripts/bench.sh [--quick] [--json FILE]                 # starts a throwaway mariadbd
//! cargo bench --bench election -- [--url URL] [--quick] [--json FILE] [--only SECTION,...]
//! ```
//!
//! Without `--url`, the server is `MYSQLLEADER_TEST_URL`. The account must be able to create
//! databases: the run creates `mysqlleader_bench` (the schema from `sql/`, migrated as the
//! library does) and, for a side-by-side view of the follower check and the renew, one scratch
//! database per other `campaign` installed over the same schema: `mysqlleader_bench_V6` and
//! `mysqlleader_bench_V7` (V6's and V7's `campaign`, taken from their migration files; V7 reads
//! leader_election_access on every call, which V8 saves), `mysqlleader_bench_tree_no_access`
//! (the tree's `campaign` with its access check cut out by text substitution) and
//! `mysqlleader_bench_before40` (`campaign`, `assert_leader` and the helpers they call as they were
//! before issue 40, from benches/election/before_40/); and it drops them all at the end. Run it on an otherwise
//! idle server with the default durability (`innodb_flush_log_at_trx_commit=1`).
//!
//! Sections, in order: `follower` (follower check vs recipe vs floor, 1/8/32 connections),
//! `renew` (leader renew vs recipe), `fence` (the application's fenced write as the library sends
//! it vs the same with a locking read or no check, 1/8 connections), `writes` (server counters per renew interval with 3/10/50
//! candidates), `system` (N services x 3 Electors at the defaults vs the recipe at an equal
//! failover budget: server CPU, statements, writes, fsyncs, connections), `library` (Rust
//! library vs mariadb-slap), `cabi` (C vs Rust), `failover`
//! (SIGKILL and resign, defaults and a 1 s lease), `scale` (services sustained at p99 < 50 ms),
//! `sessions` (1,000 and 10,000 services x 3 nodes in Sessions: three nodes' start-up at once and
//! the process's threads, CPU against the recipe at the same N, rows written per renew,
//! connections, renew p99, failover of every service after a crash, a graceful shutdown).
//! It prints one Markdown table per section and a table of the targets, and writes everything as
//! JSON to `--json FILE`.

#[path = "election/candidate.rs"]
mod candidate;
#[path = "election/common.rs"]
mod common;
#[path = "election/failover.rs"]
mod failover;
#[path = "election/fence.rs"]
mod fence;
#[path = "election/library.rs"]
mod library;
#[path = "election/report.rs"]
mod report;
#[path = "election/scale.rs"]
mod scale;
#[path = "election/sessions.rs"]
mod sessions;
#[path = "election/system.rs"]
mod system;
#[path = "election/throughput.rs"]
mod throughput;
#[path = "election/writes.rs"]
mod writes;

use std::time::{Duration, Instant};

use mysql_async::prelude::Queryable;
use serde_json::{json, Value};

use common::*;
use report::{Table, Target};

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("--candidate") {
        std::process::exit(candidate::main(argv[2..].to_vec()));
    }
    // `cargo bench` passes --bench; `cargo test --benches` (or --all-targets) runs this target
    // without it, with libtest's arguments: then only check the pieces that need no server.
    if !argv.iter().any(|a| a == "--bench") {
        self_check();
        return;
    }
    let args = match Args::parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("election bench: {e}");
            std::process::exit(2);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    match rt.block_on(run(args)) {
        // Missed targets are reported in the table, not as a failure of the command.
        Ok(_all_met) => {}
        Err(e) => {
            eprintln!("election bench: {e}");
            std::process::exit(1);
        }
    }
}

fn machine() -> Value {
    let nproc = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let mem_kib: u64 = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("MemTotal:")).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok()))
        .unwrap_or(0);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|s| s.trim().to_string()))
        .unwrap_or_default();
    json!({"nproc": nproc, "memory_gib": (mem_kib as f64 / 1024.0 / 1024.0 * 10.0).round() / 10.0, "cpu": cpu})
}

fn utc_now() -> String {
    // The database's clock would do too; this avoids a dependency for a date.
    let out = std::process::Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"]).output();
    out.ok().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default()
}

async fn run(args: Args) -> Res<bool> {
    let started = Instant::now();
    let redacted = {
        let o = mysql_async::Opts::from_url(&args.url)?;
        format!("mysql://{}@{}:{}/", o.user().unwrap_or(""), o.ip_or_hostname(), o.tcp_port())
    };
    let mut admin = mysql_async::Conn::new(mysql_async::Opts::from_url(&args.url)?).await?;
    let version: String = admin.query_first("SELECT VERSION()").await?.unwrap_or_default();
    let flush: Option<i64> = admin.query_first("SELECT @@innodb_flush_log_at_trx_commit").await?;
    let binlog: Option<i64> = admin.query_first("SELECT @@log_bin").await?;
    admin.disconnect().await?;
    let mut header = machine();
    header["server_version"] = json!(version);
    header["innodb_flush_log_at_trx_commit"] = json!(flush);
    header["log_bin"] = json!(binlog);
    let date = utc_now();
    println!(
        "# mysqlleader election benchmark{}\n\n{} · server {} at {} · innodb_flush_log_at_trx_commit={} · log_bin={} · \
         {} cores, {} GiB, {}\n",
        if args.quick { " (--quick)" } else { "" },
        date,
        version,
        redacted,
        flush.map_or("?".into(), |f| f.to_string()),
        binlog.map_or("?".into(), |f| f.to_string()),
        header["nproc"],
        header["memory_gib"],
        header["cpu"].as_str().unwrap_or("")
    );
    if flush != Some(1) {
        eprintln!("warning: innodb_flush_log_at_trx_commit is not 1: commits are not durable, the comparison is not the honest one");
    }

    eprintln!("setting up the benchmark databases ...");
    let dbs = setup_dbs(&args.url).await?;
    let mut tables: Vec<Table> = Vec::new();
    let mut sections = serde_json::Map::new();
    let mut targets: Vec<Target> = Vec::new();

    for section in ["follower", "renew"] {
        if !args.wants(section) {
            continue;
        }
        let t0 = Instant::now();
        eprintln!("{section} ...");
        let (t, v, ratios) = throughput::run(&dbs, args.quick, section).await?;
        print_tables(&t);
        tables.extend(t);
        sections.insert(section.into(), v);
        let (goal, min) = if section == "follower" { ("≥ 2.5x the recipe's calls/s", 2.5) } else { ("≥ 0.9x the recipe's calls/s", 0.9) };
        for (k, r) in ratios.iter().filter(|(k, _)| !k.contains('/')) {
            let level = k.split('@').nth(1).unwrap_or("");
            targets.push(Target {
                name: format!("{} at {level} conn(s)", if section == "follower" { "follower check" } else { "leader renew" }),
                goal: goal.into(),
                measured: format!("{r:.2}x"),
                met: Some(*r >= min),
            });
        }
        eprintln!("  ({:.0} s)", t0.elapsed().as_secs_f64());
    }

    if args.wants("fence") {
        let t0 = Instant::now();
        eprintln!("fence ...");
        let (t, v, ratios) = fence::run(&dbs, args.quick).await?;
        print_tables(&t);
        tables.extend(t);
        sections.insert("fence".into(), v);
        // The first contender's key has no name (throughput::report): the library's sequence.
        for (k, r) in &ratios {
            let (head, name) = k.split_once('/').unwrap_or((k.as_str(), fence::TREE_LIBRARY));
            if name != fence::TREE_LIBRARY && name != fence::TREE_ONE_CALL {
                continue;
            }
            let level = head.split('@').nth(1).unwrap_or("");
            targets.push(Target {
                name: format!("fenced write ({name}) at {level} conn(s)"),
                goal: "reported: calls/s against its floor (a locking read instead of the CALL)".into(),
                measured: format!("{r:.2}x"),
                met: None,
            });
        }
        eprintln!("  ({:.0} s)", t0.elapsed().as_secs_f64());
    }

    if args.wants("writes") {
        let t0 = Instant::now();
        eprintln!("writes ...");
        let (t, v, res) = writes::run(&dbs, args.quick).await?;
        print_tables(&t);
        tables.extend(t);
        let intervals = v["intervals"].as_f64().unwrap_or(5.0);
        sections.insert("writes".into(), v);
        let ours: Vec<String> = res.iter().map(|r| format!("{}: {:.2}", r.candidates, r.ours.row_writes)).collect();
        let theirs: Vec<String> = res.iter().map(|r| format!("{}: {:.2}", r.candidates, r.recipe.row_writes)).collect();
        let met = res.iter().all(|r| (r.ours.row_writes - 1.0).abs() <= 1.0 / intervals + 0.01);
        targets.push(Target {
            name: "row writes per service per renew interval (3/10/50 candidates)".into(),
            goal: "exactly 1, whatever the candidates (±1 renew at the window's edges)".into(),
            measured: format!("library {}; recipe {}", ours.join(", "), theirs.join(", ")),
            met: Some(met),
        });
        eprintln!("  ({:.0} s)", t0.elapsed().as_secs_f64());
    }

    if args.wants("system") {
        let t0 = Instant::now();
        eprintln!("system ...");
        let (t, v, res) = system::run(&dbs, args.quick).await?;
        print_tables(&t);
        tables.extend(t);
        sections.insert("system".into(), v);
        let ratio = res.library.cpu.zip(res.recipe.cpu).map(|(a, b)| a / b);
        targets.push(Target {
            name: format!("server CPU per service at the defaults, {} services x 3 candidates", res.services),
            goal: "≤ 0.25x the recipe's at an equal failover budget".into(),
            measured: ratio.map_or("n/a: the server is not on this host".into(), |r| format!("{r:.2}x")),
            met: ratio.map(|r| r <= 0.25),
        });
        let ratio = res.sessions.cpu.zip(res.recipe.cpu).map(|(a, b)| a / b);
        targets.push(Target {
            name: format!("sessions: server CPU per service-second at the defaults, {} services x 3 nodes", res.services),
            goal: "≤ 0.05x the recipe's".into(),
            measured: ratio.map_or("n/a: the server is not on this host".into(), |r| format!("{r:.3}x")),
            met: ratio.map(|r| r <= 0.05),
        });
        eprintln!("  ({:.0} s)", t0.elapsed().as_secs_f64());
    }

    if args.wants("library") {
        let t0 = Instant::now();
        eprintln!("library ...");
        let (t, v, res) = library::run_library(&dbs, args.quick).await?;
        print_tables(&t);
        tables.extend(t);
        sections.insert("library".into(), v);
        for (c, r) in &res.ratios {
            targets.push(Target {
                name: format!("library overhead at {c} conn(s)"),
                goal: "≥ 0.9x mariadb-slap's calls/s".into(),
                measured: format!("{r:.2}x"),
                met: Some(*r >= 0.9),
            });
        }
        eprintln!("  ({:.0} s)", t0.elapsed().as_secs_f64());
    }

    if args.wants("cabi") {
        let t0 = Instant::now();
        eprintln!("cabi ...");
        let (t, v, res) = library::run_cabi(&dbs, args.quick).await?;
        print_tables(&t);
        tables.extend(t);
        sections.insert("cabi".into(), v);
        if res.is_empty() {
            targets.push(Target { name: "C ABI overhead".into(), goal: "reported (no target)".into(), measured: "TODO: not measured".into(), met: None });
        }
        for (c, r) in &res {
            targets.push(Target {
                name: format!("C ABI vs Rust at {c} thread(s)"),
                goal: "reported (no target in the issue)".into(),
                measured: format!("{r:.2}x"),
                met: None,
            });
        }
        eprintln!("  ({:.0} s)", t0.elapsed().as_secs_f64());
    }

    if args.wants("failover") {
        let t0 = Instant::now();
        eprintln!("failover ...");
        let (t, v, res) = failover::run(&dbs, args.quick).await?;
        print_tables(&t);
        tables.extend(t);
        sections.insert("failover".into(), v);
        for r in &res {
            let with_target = r.kind != failover::Kind::Resign || r.config.lease_ms == 0;
            if !with_target {
                continue;
            }
            let what = match r.kind {
                failover::Kind::Crash => "failover after SIGKILL",
                failover::Kind::Resign => "failover after resign",
                failover::Kind::Force => "force_leader of a quiet follower noticed",
                failover::Kind::Handover => "leader-initiated handover to a named follower",
                failover::Kind::OpHandover => "operator-initiated handover to a named follower",
            };
            targets.push(Target {
                name: format!("{what}, {}", r.config.name),
                goal: format!("p99 < {}", report::fmt_ms(r.target_ms())),
                measured: format!("p99 {} over {} trials", report::fmt_ms(r.p99), r.trials),
                met: Some(r.failed == 0 && r.p99 < r.target_ms()),
            });
        }
        eprintln!("  ({:.0} s)", t0.elapsed().as_secs_f64());
    }

    if args.wants("sessions") {
        let t0 = Instant::now();
        eprintln!("sessions ...");
        let (t, v, res) = sessions::run(&dbs, args.quick).await?;
        print_tables(&t);
        tables.extend(t);
        sections.insert("sessions".into(), v);
        for r in &res {
            let n = r.services;
            if n >= 1_000 || args.quick {
                targets.push(Target {
                    name: format!("sessions: connections per node at {n} services"),
                    goal: "≤ 3".into(),
                    measured: format!("{:.1}", r.conns_per_node),
                    met: Some(r.conns_per_node <= 3.0),
                });
                // The issue's target is for a node leading 1,000 services; larger runs are reported.
                let with_target = n <= 1_000;
                targets.push(Target {
                    name: format!("sessions: every service led again after the leading node crashed, {n} services"),
                    goal: if with_target {
                        format!("≤ lease + retry + 1 s = {:.0} s", sessions::FAILOVER_TARGET.as_secs_f64())
                    } else {
                        "reported (the target is for 1,000 services)".into()
                    },
                    measured: r.failover.map_or("not within 120 s".into(), |d| format!("{:.2} s", d.as_secs_f64())),
                    met: with_target.then(|| r.failover.is_some_and(|d| d <= sessions::FAILOVER_TARGET)),
                });
                // Against the recipe at the same N (issue "Fleets": honest benchmarks), 1 s tick.
                let ratio = r.cpu_per_service_s.zip(r.recipe.cpu_per_service_s).map(|(a, b)| a / b);
                let goal = if n >= 10_000 { 0.01 } else { 0.05 };
                targets.push(Target {
                    name: format!("sessions: server CPU per service-second at {n} services vs the recipe's at {n} (1 s tick)"),
                    goal: format!("≤ {goal}x the recipe's"),
                    measured: ratio.map_or("n/a: needs the server on this host".into(), |x| {
                        format!("{x:.3}x (the recipe answered {:.0} of {:.0} ticks/s)", r.recipe.ticks_per_s, r.recipe.wanted_per_s)
                    }),
                    met: ratio.map(|x| x <= goal),
                });
                targets.push(Target {
                    name: format!("sessions: rows written per node per renew interval at {n} services"),
                    goal: "independent of N (node leases: 1 row per node)".into(),
                    measured: format!("{:.2}", r.rows_per_node_renew),
                    met: None,
                });
            }
            if n >= 10_000 || args.quick {
                targets.push(Target {
                    name: format!("sessions: three nodes start at once on {n} new services, every service led and known"),
                    goal: "≤ 30 s at 10,000 services".into(),
                    measured: format!("{}; threads {} before, at most {} with 3 x {n} electors",
                                      r.start3.map_or("not within 300 s".into(), |d| format!("{:.2} s", d.as_secs_f64())), r.threads.0, r.threads.1),
                    met: (n >= 10_000).then(|| r.start3.is_some_and(|d| d <= Duration::from_secs(30))),
                });
                targets.push(Target {
                    name: format!("sessions: one node takes {n} new seats at start-up"),
                    goal: "≤ 30 s at 10,000 services".into(),
                    measured: r.startup.map_or("not within 300 s".into(), |d| format!("{:.2} s", d.as_secs_f64())),
                    met: (n >= 10_000).then(|| r.startup.is_some_and(|d| d <= Duration::from_secs(30))),
                });
                targets.push(Target {
                    name: format!("sessions: graceful shutdown of a session, {n} services"),
                    goal: "every seat it led led by another within 2 s".into(),
                    measured: format!("{} seats: {}", r.graceful.0, r.graceful.1.map_or("not within 120 s".into(), |d| format!("{:.2} s", d.as_secs_f64()))),
                    met: Some(r.graceful.1.is_some_and(|d| d <= Duration::from_secs(2))),
                });
                let p99 = r.leader_p99_ms.max(r.follower_p99_ms);
                targets.push(Target {
                    name: format!("sessions: renew_seats p99 at {n} services x 3 nodes"),
                    goal: "< 50 ms at 10,000 services".into(),
                    measured: format!("{p99:.1} ms (leader {:.1}, followers {:.1})", r.leader_p99_ms, r.follower_p99_ms),
                    met: if n >= 10_000 { Some(p99 < 50.0) } else { None },
                });
            }
        }
        eprintln!("  ({:.0} s)", t0.elapsed().as_secs_f64());
    }

    if args.wants("scale") {
        let t0 = Instant::now();
        eprintln!("scale ...");
        let (t, v, res) = scale::run(&dbs, args.quick).await?;
        print_tables(&t);
        tables.extend(t);
        sections.insert("scale".into(), v);
        // The library as pool_from_url makes its pool (reset_connection=false) against the recipe.
        let ratio = match (&res.library_no_reset, &res.recipe) {
            (Some(l), Some(r)) if r.services > 0 => Some(l.services as f64 / r.services as f64),
            _ => None,
        };
        targets.push(Target {
            name: "scale: services with 3 candidates each at p99 < 50 ms".into(),
            goal: "≥ 4x the recipe's".into(),
            measured: format!(
                "library {} (pool as pool_from_url makes it: {}); recipe {}{}",
                res.library.as_ref().map_or("below the first step".into(), |s| s.services.to_string()),
                res.library_no_reset.as_ref().map_or("below the first step".into(), |s| s.services.to_string()),
                res.recipe.as_ref().map_or("below the first step".into(), |s| s.services.to_string()),
                ratio.map_or(String::new(), |r| format!("; {r:.2}x"))
            ),
            met: Some(ratio.is_some_and(|r| r >= 4.0)),
        });
        eprintln!("  ({:.0} s)", t0.elapsed().as_secs_f64());
    }

    let tt = report::targets_table(&targets);
    print_tables(std::slice::from_ref(&tt));
    let secs = started.elapsed().as_secs_f64();
    println!("Run time {:.0} s.", secs);
    let all_met = targets.iter().all(|t| t.met != Some(false));
    if let Some(path) = &args.json {
        let doc = json!({
            "command": format!(
                "cargo bench --bench election -- {}",
                std::env::args().skip(1).filter(|a| a != "--bench").map(|a| if a.starts_with("mysql://") { redacted.clone() } else { a }).collect::<Vec<_>>().join(" ")
            ),
            "date": date,
            "quick": args.quick,
            "machine": header,
            "run_seconds": secs,
            "sections": Value::Object(sections),
            "targets": report::targets_json(&targets),
            "tables": tables.iter().chain(std::iter::once(&tt)).map(report::table_json).collect::<Vec<_>>(),
        });
        if let Some(dir) = std::path::Path::new(path).parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, serde_json::to_string_pretty(&doc)? + "\n")?;
        eprintln!("wrote {path}");
    }
    drop_dbs(&args.url).await?;
    Ok(all_met)
}

/// Test mode: the SQL this benchmark installs splits into statements as the server needs them,
/// the access check cut out of the tree's campaign is found and cut exactly, the recipe is
/// written without VALUES(), and URLs get their database replaced.
fn self_check() {
    // Also runs the substitutions of `campaign (tree), no access check`, which panic unless each
    // finds its text exactly once.
    for p in PROPOSALS {
        let stmts = (p.campaign)();
        assert!(stmts.len() >= 2 && stmts.len() % 2 == 0, "{}: pairs of a DROP and a CREATE", p.label);
        for pair in stmts.chunks(2) {
            let name = pair[0].strip_prefix("DROP PROCEDURE IF EXISTS ").unwrap_or_else(|| panic!("{}: {}", p.label, pair[0]));
            assert!(pair[1].starts_with(&format!("CREATE PROCEDURE {name}(")) && pair[1].trim_end().ends_with("END"), "{}: {name}", p.label);
        }
        assert!(stmts.iter().any(|s| s.starts_with("CREATE PROCEDURE campaign(")), "{}: replaces campaign", p.label);
    }
    // The routines before issue 40: campaign with its own body (not yet a call of
    // leader_election_campaign), refusals without error numbers of their own, each file the
    // old one byte for byte after its header (the header names the commit).
    let before = before_40();
    assert_eq!(before.len(), 2 * BEFORE_40.len());
    let old_campaign = before.iter().find(|s| s.starts_with("CREATE PROCEDURE campaign(")).expect("campaign before 40");
    assert!(!old_campaign.contains("leader_election_campaign") && old_campaign.contains("UPDATE leader_election"));
    assert!(before.iter().all(|s| !s.contains("MYSQL_ERRNO")), "before issue 40 no refusal had a number of its own");
    for (name, file) in BEFORE_40 {
        assert!(file.starts_with(&format!("-- benches/election/before_40/{name}.sql: ")) && file.contains("5085e36^"), "{name}: header");
    }
    // The fence section sends what src/fenced.rs sends.
    for piece in [
        "SELECT @@in_transaction",
        "CAST(COALESCE(@mysqlleader_idle_tx_was, @@session.idle_transaction_timeout) AS UNSIGNED), @mysqlleader_idle_tx_was = NULL",
        "format!(\"{end}; {RESTORE_IDLE_BOUND}\")",
        "self.assert_leader(&service_id, &node_id, term).await?;",
        "tx.server_version().0 >= 10",
        "procedures::assert_leader(tx, service_id, node_id, term)",
        "pool.start_transaction(TxOpts::default())",
    ] {
        assert!(fence::FENCED_RS.contains(piece), "src/fenced.rs no longer has `{piece}`: update benches/election/fence.rs");
    }
    assert!(fence::RESTORE_IDLE_BOUND.starts_with("SET SESSION idle_transaction_timeout = CAST(COALESCE("));
    let tree = campaign_of(V8_SQL);
    let cut = campaign_without_access();
    assert_ne!(tree[1], cut[1], "the substitutions changed the procedure");
    assert_eq!(
        tree[1].len() - cut[1].len(),
        V8_RENEW_ACCESS_GUARD.0.len() - V8_RENEW_ACCESS_GUARD.1.len() + V8_READ_ACCESS_CHECK.0.len(),
        "only the access check was cut"
    );
    assert!(!RECIPE_SQL.to_ascii_uppercase().contains("VALUES("), "the recipe must not use VALUES()");
    assert_eq!(url_with_db("mysql://u:p@h:1/a?x=1", "b"), "mysql://u:p@h:1/b?x=1");
    assert_eq!(url_with_db("mysql://u:p@h:1", "b"), "mysql://u:p@h:1/b");
    assert_eq!(no_reset("mysql://h/a"), "mysql://h/a?reset_connection=false");
    println!("election bench: run without --bench (cargo test): 7 self-checks passed; measure with `cargo bench --bench election` or scripts/bench.sh");
}

fn print_tables(tables: &[Table]) {
    for t in tables {
        println!("{}", t.render());
    }
}
