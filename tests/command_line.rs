//! The command-line tool's suites and the C header's check (one test binary: tests/<name>.rs is
//! module <name>).

mod common;
mod cli_support;

mod cli;
mod cli_http;
mod cli_run;
mod ffi_header;
