//! # mysqlleader
//!
//! Leader election for services that already run on MySQL or MariaDB.
pub mod config;
pub mod elector;
pub mod error;
pub mod migrate;
pub mod procedures;

pub use config::ElectorConfig;
pub use elector::{Elector, ElectorBuilder, Event, State, StopReason};
pub use error::{Error, Result};
pub use migrate::{install_sql, migrate, AppliedMigration};

/// Builds a connection pool from a `mysql://user:pass@host:port/db` URL. The password never
/// appears in an error.
pub fn pool_from_url(url: &str) -> Result<mysql_async::Pool> {
    let opts = mysql_async::Opts::from_url(url)
        .map_err(|e| Error::invalid("url", error::redact(&e.to_string())))?;
    Ok(mysql_async::Pool::new(opts))
}
