//! The checker of the fault harness, alone: judges the directory of a finished run again.
//!
//! ```text
//! target/release/faults_check target/faults/seed-42
//! ```
//!
//! Reads only the candidates' logs (`nodes/*.jsonl`), the database's record (`db/*.jsonl`:
//! the history of terms, the fencing rows, the counters), the run's parameters (`run.json`) and,
//! for marks and availability only, the harness's `faults.jsonl`. Rewrites `report.md` and
//! `timeline.svg` there; exits 0 when there is no violation, 1 when there is, 2 when the
//! directory cannot be read. See harness/src/checker.rs for the rules.
use std::path::PathBuf;

use mysqlleader_harness as faults;

fn main() {
    let Some(dir) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: faults_check RUN_DIR");
        std::process::exit(2);
    };
    let inputs = match faults::checker::load(&dir) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("faults_check: {e}");
            std::process::exit(2);
        }
    };
    let report = faults::checker::check(&inputs);
    std::fs::write(dir.join("report.md"), faults::checker::markdown(&inputs, &report, "timeline.svg")).expect("write report.md");
    std::fs::write(dir.join("timeline.svg"), faults::svg::timeline(&inputs, &report)).expect("write timeline.svg");
    println!("faults_check: {} — {} intervals, overlaps {}, stale-term commits {}, {} violations; report {}",
        if report.passed() { "PASS" } else { "FAIL" }, report.intervals.len(), report.real_overlaps(), report.stale_commits,
        report.violations.len(), dir.join("report.md").display());
    for v in report.violations.iter().take(20) {
        println!("  {v}");
    }
    std::process::exit(if report.passed() { 0 } else { 1 });
}
