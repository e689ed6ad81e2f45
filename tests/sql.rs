//! The SQL core's suites (one test binary: tests/<name>.rs is module <name>): every procedure
//! called as any SQL client calls it, on the throwaway server of MYSQLLEADER_TEST_URL.

mod common;
mod sql_support;
#[path = "common/access.rs"]
mod access;

mod sql_access;
mod sql_concurrency;
mod sql_contract;
mod sql_errors;
mod sql_handover;
mod sql_leases;
mod sql_lifecycle;
mod sql_migrations;
mod sql_mysql;
mod sql_privileges;
mod sql_sessions;
mod sql_terms;
mod sql_trust;
