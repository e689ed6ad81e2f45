//! mysqlleader's test tooling, in one home: the TCP proxy (the tests' and the fault harness's
//! one proxy), the server launchers (single server, Galera), the fault runner, the candidate and
//! checker programs, and the replication probe. Not published; a workspace member.
//!
//! Programs (`cargo build --release -p mysqlleader-harness`, in `target/release/`):
//! * `candidate` — one candidate process: an [`Elector`](mysqlleader::Elector) per service, a
//!   log of everything it observes (JSON lines stamped with `CLOCK_MONOTONIC`), and fenced
//!   increments of a shared counter while it leads;
//! * `faults` — the fault runner: a throwaway server, N candidates behind proxies of its own,
//!   faults chosen with a printed, replayable seed, then the checker;
//! * `faults_check` — the checker alone, on the directory of a finished run;
//! * `replication_probe` and `print_sql` — the asynchronous-replication experiment of
//!   docs/replication.md (driven by scripts/replication-experiment.sh).
//!
//! `harness/tests/checker.rs` checks the checker itself on hand-made logs.
//! See docs/faults.md for the commands and what each check means.

pub mod checker;
pub mod clock;
pub mod proxy;
pub mod rng;
pub mod servers;
pub mod svg;
