//! The fault-injection harness of issue 8, shared by its three programs:
//!
//! * `examples/candidate.rs` — one candidate process: an [`Elector`](mysqlleader::Elector) per
//!   service, a log of everything it observes (JSON lines stamped with `CLOCK_MONOTONIC`), and
//!   fenced increments of a shared counter while it leads;
//! * `examples/faults.rs` — the harness: a throwaway server, N candidates behind proxies of its
//!   own, faults chosen with a printed, replayable seed, then the checker;
//! * `examples/faults_check.rs` — the checker alone, on the directory of a finished run.
//!
//! The modules here are included by those programs with `#[path]`; `tests/faults/checker_tests.rs`
//! (the `faults_checker` test target) checks the checker itself on hand-made logs.
//! See docs/faults.md for the commands and what each check means.
#![allow(dead_code)]

pub mod checker;
pub mod clock;
pub mod proxy;
pub mod rng;
pub mod servers;
pub mod svg;
