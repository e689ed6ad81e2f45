//! mysqlleader's test tooling, in one home: the TCP proxy (the tests' and the fault harness's
//! one proxy), the server launchers (single server, Galera), the fault runner, the candidate and
//! checker programs, and the replication experiment. Not published; a workspace member.
//!
//! Programs (`cargo build --release -p mysqlleader-harness`, in `target/release/`):
//! * `candidate` — one candidate process: an [`Elector`](mysqlleader::Elector) per service, a
//!   log of everything it observes (JSON lines stamped with `CLOCK_MONOTONIC`), and fenced
//!   increments of a shared counter while it leads;
//! * `faults` — the fault runner: a throwaway server, N candidates behind proxies of its own,
//!   faults chosen with a printed, replayable seed, then the checker;
//! * `faults_check` — the checker alone, on the directory of a finished run;
//! * `replication` — the asynchronous-replication experiment of docs/replication.md, one
//!   scenario (or all) per run: a primary and its replica ([`replica_pair`]), the schema, the
//!   router and three candidates, the failover, the checks and the report
//!   (scripts/replication-experiment.sh installs MariaDB if needed, builds and runs it);
//! * `replication_probe` — what `replication` runs for each role of that experiment: a
//!   candidate, the router, a fence probe, and `analyze` (the report on the logs).
//!
//! `harness/tests/checker.rs` checks the checker itself on hand-made logs.
//! See docs/faults.md for the commands and what each check means.

pub mod checker;
pub mod clock;
pub mod proxy;
pub mod replica_pair;
pub mod rng;
pub mod servers;
pub mod svg;
