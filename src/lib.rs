//! # mysqlleader
//!
//! Leader election for services that already run on MySQL or MariaDB: several copies of a
//! service run for high availability, exactly one is active, and the database they already
//! depend on settles which — no ZooKeeper or etcd needed.
//!
//! The decision lives in stored procedures (installed by [`migrate()`]); this crate calls them
//! ([`procedures`]) and keeps one node's leadership alive in the background ([`Elector`]).
//!
//! ```no_run
//! use std::time::Duration;
//!
//! # async fn demo() -> mysqlleader::Result<()> {
//! let pool = mysqlleader::pool_from_url("mysql://app:secret@127.0.0.1:3306/app")?;
//! mysqlleader::migrate(&pool).await?;                  // once per database; safe to repeat
//! let elector = mysqlleader::Elector::builder(pool, "billing")
//!     .lease(Duration::from_secs(10))                  // renews every 2 s by default
//!     .start()?;
//! let outcome = elector
//!     .run_while_leader(async {
//!         // the leader's work; dropped the moment leadership ends
//!     })
//!     .await;
//! elector.shutdown().await?;                           // resigns: a follower takes over at once
//! # let _ = outcome; Ok(()) }
//! ```
//!
//! ## Safety model
//!
//! **Guaranteed**, given that the clock rates of this host and the database server differ by
//! less than the configured `drift_margin` over one lease: no two nodes believe they lead at
//! the same instant. Why:
//! * a lease is measured on the database server's clock alone: the procedures compute its end
//!   with `UTC_TIMESTAMP(6)` after taking the service row's lock, and report the time left;
//! * a node counts itself leader only until a deadline on its own monotonic clock:
//!   the instant taken *before* it sent the renew, plus the time left that the database
//!   reported, minus `drift_margin`. Since the lease started no earlier than the send, the local
//!   deadline falls before the lease's end on the database's clock;
//! * a failed, slow or lost renew never extends the deadline; the node steps down by it.
//!   [`Elector::is_leader`] compares with the deadline each time it is called, so a process
//!   that was paused (GC pause, SIGSTOP, a starved VM) sees `false` on waking before it can act;
//! * another node can take the seat only after the lease has expired on the database's clock,
//!   under the row lock, with a new term.
//!
//! **Not guaranteed**: that a stale leader's *effects elsewhere* stop at the deadline. A
//! process paused *after* checking `is_leader()` and before writing can still write late. Fence
//! such writes: pass the term to [`procedures::assert_leader`] inside the same database
//! transaction (it rejects a stale term and holds the term's share lock (its history row) until commit,
//! so no takeover commits in between), or stamp the term on requests to other systems and let
//! them reject lower terms. Also not covered: a host clock that stops during system suspend
//! (`CLOCK_MONOTONIC` does not advance in suspend) and database servers whose clocks jump
//! (a step of the server's clock moves every lease with it; fencing still holds).
//!
//! ## Choosing lease and intervals
//! * `lease`: the longest failover after a crash (a crashed leader's lease must run out).
//!   10 s by default; 1–2 s works on a healthy LAN database.
//! * `renew_interval` (lease/5): a leader survives `lease / renew_interval - 1` failed renews in a
//!   row; it must be at most a third of the lease.
//! * `retry_interval` (lease/10): how often followers read while a lease is valid (they never
//!   wait past its end), and so the handover time after a resign.
//! * `request_timeout` (min(lease/5, 2 s)) and `drift_margin` (lease/100).
pub mod config;
pub mod elector;
pub mod error;
pub mod fenced;
// The C ABI: its `#[no_mangle] pub extern "C"` functions are exported from the cdylib and the
// staticlib whatever this module's visibility, and include/mysqlleader.h is generated from
// src/ffi/ itself. Hidden from the Rust API's documentation; still `pub` because the CLI
// (`run`'s log callback) and tests/ffi_header.rs (`mysqlleader_version`) call it as Rust.
#[doc(hidden)]
pub mod ffi;
pub mod metrics;
pub mod migrate;
pub mod procedures;
pub mod session;
pub mod statement;
pub mod url;
mod wakeup;

pub use config::ElectorConfig;
pub use elector::{Elector, ElectorBuilder, Event, State, StopReason, WaitOutcome};
pub use error::{Error, ErrorKind, Result};
pub use fenced::FencedTransaction;
pub use metrics::Metrics;
pub use session::{Session, SessionBuilder, SessionStats};
pub use migrate::{install, install_plan, install_sql, install_sql_for, install_within, migrate, Plan, AppliedMigration, Installed, OnLockWait, Server, DEFAULT_LOCK_BUDGET};

pub use url::{opts_from_url, pool_from_url, SslMode};
