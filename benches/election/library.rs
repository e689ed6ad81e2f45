//! Library overhead: the Rust library's follower check (`procedures::campaign` over the pool
//! that `pool_from_url` makes, as an application would call it) against the same `CALL` issued
//! by the server's own client tool (`mariadb-slap`, else `mysqlslap`), at the same concurrency,
//! in alternating rounds. And the C ABI: `mysqlleader_campaign()` from a C program against the
//! Rust call.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use mysql_async::{Opts, Pool};
use serde_json::{json, Value};

use crate::common::*;
use crate::report::{fmt_rate, Table};

const SERVICE: &str = "follow";
const NODE: &str = "follower-lib";
const LEASE: Duration = Duration::from_secs(10);
const CALL_SQL: &str = "CALL campaign('follow', 'follower-lib', 10000)";

/// `calls` follower checks by `conc` tasks through the library on `pool`; returns calls/s.
async fn library_calls(pool: &Pool, conc: usize, calls: usize) -> Res<Sample> {
    let per = calls.div_ceil(conc);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..conc {
        let pool = pool.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(per);
            for _ in 0..per {
                let t = Instant::now();
                mysqlleader::procedures::campaign(&pool, SERVICE, NODE, LEASE).await?;
                lat.push(elapsed_us(t));
            }
            Ok::<_, BoxError>(lat)
        }));
    }
    let mut s = Sample::default();
    for t in tasks {
        let lat = t.await??;
        s.calls += lat.len() as u64;
        s.lat_us.extend(lat);
    }
    s.secs = start.elapsed().as_secs_f64();
    Ok(s)
}

/// `calls` follower checks through the library on `conc` dedicated connections (no pool).
async fn library_conns(conns: &mut Vec<mysql_async::Conn>, calls: usize) -> Res<Sample> {
    let conc = conns.len();
    let per = calls.div_ceil(conc);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for mut conn in conns.drain(..) {
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(per);
            for _ in 0..per {
                let t = Instant::now();
                mysqlleader::procedures::campaign(&mut conn, SERVICE, NODE, LEASE).await?;
                lat.push(elapsed_us(t));
            }
            Ok::<_, BoxError>((conn, lat))
        }));
    }
    let mut s = Sample::default();
    for t in tasks {
        let (conn, lat) = t.await??;
        conns.push(conn);
        s.calls += lat.len() as u64;
        s.lat_us.extend(lat);
    }
    s.secs = start.elapsed().as_secs_f64();
    Ok(s)
}

/// The library for `dur` (closed loop, `conc` tasks).
async fn library_for(pool: &Pool, conc: usize, dur: Duration) -> Res<Sample> {
    let end = Instant::now() + dur;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..conc {
        let pool = pool.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(16384);
            while Instant::now() < end {
                let t = Instant::now();
                mysqlleader::procedures::campaign(&pool, SERVICE, NODE, LEASE).await?;
                lat.push(elapsed_us(t));
            }
            Ok::<_, BoxError>(lat)
        }));
    }
    let mut s = Sample::default();
    for t in tasks {
        let lat = t.await??;
        s.calls += lat.len() as u64;
        s.lat_us.extend(lat);
    }
    s.secs = start.elapsed().as_secs_f64();
    Ok(s)
}

fn find_prog(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in names {
        for dir in std::env::split_paths(&path).chain(["/usr/bin".into(), "/usr/local/bin".into()]) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

struct Slap {
    prog: PathBuf,
    args: Vec<String>,
}

impl Slap {
    fn new(url: &str) -> Res<Option<Slap>> {
        let Some(prog) = find_prog(&["mariadb-slap", "mysqlslap"]) else { return Ok(None) };
        let o = Opts::from_url(url)?;
        let args = vec![
            "--no-defaults".into(),
            format!("--host={}", o.ip_or_hostname()),
            format!("--port={}", o.tcp_port()),
            format!("--user={}", o.user().unwrap_or("root")),
            format!("--password={}", o.pass().unwrap_or("")),
            format!("--create-schema={}", o.db_name().unwrap_or(BENCH_DB)),
            "--no-drop".into(),
            "--iterations=1".into(),
            format!("--query={CALL_SQL}"),
        ];
        Ok(Some(Slap { prog, args }))
    }

    /// `calls` calls by `conc` clients; the tool's own timing.
    async fn run(&self, conc: usize, calls: usize) -> Res<Sample> {
        let out = tokio::process::Command::new(&self.prog)
            .args(&self.args)
            .arg(format!("--concurrency={conc}"))
            .arg(format!("--number-of-queries={calls}"))
            .stdin(Stdio::null())
            .output()
            .await?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(format!("{} failed: {}{}", self.prog.display(), text, String::from_utf8_lossy(&out.stderr)).into());
        }
        // "Average number of seconds to run all queries: 1.234 seconds"
        let secs: f64 = text
            .lines()
            .find(|l| l.contains("Average number of seconds to run all queries"))
            .and_then(|l| l.split(':').nth(1))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("unexpected output of {}: {text}", self.prog.display()))?;
        // Each client runs calls / conc of them.
        let done = (calls / conc) * conc;
        Ok(Sample { calls: done as u64, secs, lat_us: vec![], errors: 0 })
    }
}

pub struct LibraryResult {
    pub ratios: Vec<(usize, f64)>,
}

pub async fn run_library(dbs: &Dbs, quick: bool) -> Res<(Vec<Table>, Value, LibraryResult)> {
    let (rounds, dur) = if quick { (2, Duration::from_millis(300)) } else { (5, Duration::from_secs(2)) };
    let levels: &[usize] = &[1, 8, 32];
    let mut setup = mysql_async::Conn::new(Opts::from_url(&dbs.url)?).await?;
    mysqlleader::procedures::force_leader(&mut setup, SERVICE, "leader", Duration::from_millis(86_400_000)).await?;
    setup.disconnect().await?;
    let Some(slap) = Slap::new(&dbs.url)? else {
        let mut t = Table::new("Library overhead", &["note"]);
        t.row(vec!["mariadb-slap / mysqlslap not found: not measured".into()]);
        return Ok((vec![t], json!({"skipped": "no mariadb-slap"}), LibraryResult { ratios: vec![] }));
    };
    let mut t = Table::new(
        "Library overhead: procedures::campaign over pool_from_url vs the same CALL by mariadb-slap (follower check)",
        &["conns", "library calls/s", "mariadb-slap calls/s", "ratio", "same pool, reset_connection=false", "ratio", "dedicated connections", "ratio"],
    );
    let mut j = Vec::new();
    let mut ratios = Vec::new();
    for &c in levels {
        let pool = mysqlleader::pool_from_url(&dbs.url)?;
        let pool_nr = mysqlleader::pool_from_url(&no_reset(&dbs.url))?;
        // Warm-up, and the number of calls that takes the fastest contender about `dur`.
        library_for(&pool, c, Duration::from_millis(300)).await?;
        let warm = library_for(&pool_nr, c, Duration::from_millis(400)).await?;
        let calls = ((warm.rate() * dur.as_secs_f64()) as usize).max(200 * c);
        let mut dedicated = conns(&dbs.url, c).await?;
        library_conns(&mut dedicated, 20 * c).await?;
        let (mut lib, mut lib_nr, mut lib_d, mut tool) = (vec![], vec![], vec![], vec![]);
        let (mut per, mut per_nr, mut per_d) = (vec![], vec![], vec![]);
        for r in 0..rounds {
            let mut got = [0.0f64; 4];
            for k in 0..4 {
                let which = (k + r) % 4;
                got[which] = match which {
                    0 => library_calls(&pool, c, calls / 4).await?.rate(),
                    1 => library_calls(&pool_nr, c, calls).await?.rate(),
                    2 => library_conns(&mut dedicated, calls).await?.rate(),
                    _ => slap.run(c, calls).await?.rate(),
                };
            }
            lib.push(got[0]);
            lib_nr.push(got[1]);
            lib_d.push(got[2]);
            tool.push(got[3]);
            per.push(got[0] / got[3]);
            per_nr.push(got[1] / got[3]);
            per_d.push(got[2] / got[3]);
        }
        pool.disconnect().await?;
        pool_nr.disconnect().await?;
        for conn in dedicated {
            let _ = conn.disconnect().await;
        }
        let (ratio, ratio_nr, ratio_d) = (median(&per), median(&per_nr), median(&per_d));
        t.row(vec![
            c.to_string(),
            fmt_rate(median(&lib)),
            fmt_rate(median(&tool)),
            format!("{ratio:.2}x"),
            fmt_rate(median(&lib_nr)),
            format!("{ratio_nr:.2}x"),
            fmt_rate(median(&lib_d)),
            format!("{ratio_d:.2}x"),
        ]);
        j.push(json!({"connections": c, "library_calls_per_s": median(&lib), "library_no_reset_calls_per_s": median(&lib_nr),
                      "library_dedicated_calls_per_s": median(&lib_d), "tool_calls_per_s": median(&tool),
                      "ratio": ratio, "ratio_no_reset": ratio_nr, "ratio_dedicated": ratio_d,
                      "rounds": {"library": lib, "library_no_reset": lib_nr, "library_dedicated": lib_d, "tool": tool}}));
        ratios.push((c, ratio));
    }
    t.note(format!(
        "{} ({}), {rounds} rounds of about {:.1} s per contender and level, order rotated; the library's calls are spread over \
         `conns` tokio tasks sharing one pool; the tool's time is its own report (text protocol, one connection per client). \
         `reset_connection=false`: the same pool with that URL parameter of mysql_async; by default the pool resets every \
         connection it takes back (COM_RESET_CONNECTION), which also empties the server's per-session caches of prepared \
         statements and stored procedures, so the next call prepares its statement and loads campaign and the procedures it \
         calls again. dedicated connections: procedures::campaign on one connection per task, no pool.",
        slap.prog.display(),
        CALL_SQL,
        dur.as_secs_f64()
    ));
    Ok((vec![t], json!({"rows": j}), LibraryResult { ratios }))
}

// ---- The C ABI ----

/// Compiles the C driver when the header and the shared library are there.
fn build_c_driver() -> std::result::Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = root.join("include/mysqlleader.h");
    if !header.is_file() {
        return Err("include/mysqlleader.h is not in the tree".into());
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // target/<profile>/deps/election-... -> target/<profile>
    let libdir = exe.parent().and_then(Path::parent).ok_or("no target directory")?.to_path_buf();
    if !libdir.join("libmysqlleader.so").is_file() {
        return Err(format!("{}/libmysqlleader.so was not built", libdir.display()));
    }
    let cc = find_prog(&["cc", "gcc", "clang"]).ok_or("no C compiler (cc)")?;
    let out = std::env::temp_dir().join(format!("mysqlleader-bench-ffi-{}", std::process::id()));
    let status = std::process::Command::new(cc)
        .args(["-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-pthread", "-I"])
        .arg(root.join("include"))
        .arg(root.join("benches/election/ffi_campaign.c"))
        .arg("-o")
        .arg(&out)
        .arg(format!("-L{}", libdir.display()))
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .arg("-lmysqlleader")
        .output()
        .map_err(|e| e.to_string())?;
    if !status.status.success() {
        return Err(format!("compiling the C driver failed: {}", String::from_utf8_lossy(&status.stderr)));
    }
    Ok(out)
}

async fn c_run(driver: &Path, url: &str, threads: usize, dur: Duration) -> Res<Sample> {
    let out = tokio::process::Command::new(driver)
        .args([url, SERVICE, NODE, &threads.to_string(), &format!("{:.3}", dur.as_secs_f64())])
        .stdin(Stdio::null())
        .output()
        .await?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let f: Vec<&str> = text.split_whitespace().collect();
    if !out.status.success() || f.len() < 5 {
        return Err(format!("C driver failed: {text}{}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(Sample { calls: f[0].parse()?, secs: f[1].parse()?, lat_us: vec![f[2].parse()?, f[3].parse()?], errors: f[4].parse()? })
}

pub async fn run_cabi(dbs: &Dbs, quick: bool) -> Res<(Vec<Table>, Value, Vec<(usize, f64)>)> {
    let (rounds, dur) = if quick { (2, Duration::from_millis(300)) } else { (4, Duration::from_secs(2)) };
    let mut t = Table::new(
        "C ABI overhead: mysqlleader_campaign() from C vs procedures::campaign from Rust (follower check)",
        &["threads", "Rust calls/s", "C calls/s", "C p50 ms", "C p99 ms", "ratio C/Rust"],
    );
    let driver = match build_c_driver() {
        Ok(d) => d,
        Err(why) => {
            t.row(vec!["-".into(), "TODO".into(), "TODO".into(), "-".into(), "-".into(), format!("TODO: not measured ({why})")]);
            return Ok((vec![t], json!({"skipped": why}), vec![]));
        }
    };
    let mut setup = mysql_async::Conn::new(Opts::from_url(&dbs.url)?).await?;
    mysqlleader::procedures::force_leader(&mut setup, SERVICE, "leader", Duration::from_millis(86_400_000)).await?;
    setup.disconnect().await?;
    let mut j = Vec::new();
    let mut ratios = Vec::new();
    // Both sides on the same URL, with reset_connection=false so that the pool's reset (see the
    // library overhead table) does not drown what the ABI itself costs.
    let url = no_reset(&dbs.url);
    for c in [1usize, 8] {
        let pool = mysqlleader::pool_from_url(&url)?;
        library_for(&pool, c, Duration::from_millis(300)).await?;
        let (mut rust, mut cc, mut per, mut p50, mut p99) = (vec![], vec![], vec![], vec![], vec![]);
        for r in 0..rounds {
            let (a, b) = if r % 2 == 0 {
                let a = library_for(&pool, c, dur).await?;
                (a, c_run(&driver, &url, c, dur).await?)
            } else {
                let b = c_run(&driver, &url, c, dur).await?;
                (library_for(&pool, c, dur).await?, b)
            };
            rust.push(a.rate());
            cc.push(b.rate());
            per.push(b.rate() / a.rate());
            p50.push(f64::from(b.lat_us[0]) / 1000.0);
            p99.push(f64::from(b.lat_us[1]) / 1000.0);
        }
        pool.disconnect().await?;
        let ratio = median(&per);
        t.row(vec![
            c.to_string(),
            fmt_rate(median(&rust)),
            fmt_rate(median(&cc)),
            format!("{:.3}", median(&p50)),
            format!("{:.3}", median(&p99)),
            format!("{ratio:.2}x"),
        ]);
        j.push(json!({"threads": c, "rust_calls_per_s": median(&rust), "c_calls_per_s": median(&cc), "ratio": ratio,
                      "rounds": {"rust": rust, "c": cc}}));
        ratios.push((c, ratio));
    }
    let _ = std::fs::remove_file(&driver);
    t.note("The C driver (benches/election/ffi_campaign.c) is compiled against include/mysqlleader.h and linked to the crate's cdylib; its threads share one mysqlleader_client. Both sides use pool_from_url on the same URL with \
               reset_connection=false; rounds alternate.");
    Ok((vec![t], json!({"rows": j}), ratios))
}
