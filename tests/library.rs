//! The Rust library's suites (one test binary: tests/<name>.rs is module <name>): electors,
//! sessions and handovers against the throwaway server of MYSQLLEADER_TEST_URL.

mod common;
mod sql_support;

mod elector;
mod handover;
mod login_backoff;
mod pool_reset;
mod session;
mod smoke;
