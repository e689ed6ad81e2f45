//! The SQL of installation, used by `crate::migrate` and the DBA script it writes: the
//! migration lock, the records of routines and migrations, and the checks that stop a script
//! on the other kind of server or over a newer schema.

use mysql_async::prelude::Query;

use crate::error::{Error, Result};

use super::wakeup::wakeup_lock_supported;

/// Takes the named lock that serializes concurrent migrations of one database (waits up to
/// 60 s). Returns false where the server offers no named locks (Galera rejects GET_LOCK).
pub(crate) async fn migration_lock(conn: &mut mysql_async::Conn, server: crate::Server) -> Result<bool> {
    let name = migration_lock_name(server);
    let got: std::result::Result<Option<Option<i64>>, _> = format!("SELECT GET_LOCK({name}, 60)").first(&mut *conn).await;
    match got {
        Ok(Some(Some(1))) => Ok(true),
        Ok(_) => Err(Error::Migration { message: "another migration held the lock for 60 s; try again".into() }),
        // A Galera node may refuse named locks: there the installer goes on without one (the
        // README says to run one installer at a time on a cluster). Anywhere else a lock that
        // cannot be taken stops the migration, loudly.
        Err(mysql_async::Error::Server(e)) if !wakeup_lock_supported(conn).await.unwrap_or(true) => {
            tracing::warn!(code = e.code, "migrate: no migration lock on this Galera node ({}); going on without it", e.message);
            Ok(false)
        }
        Err(e) => Err(Error::Migration { message: format!("could not take the migration lock: {}", crate::error::redact(&e.to_string())) }),
    }
}

pub(crate) async fn migration_unlock(conn: &mut mysql_async::Conn, server: crate::Server) -> Result<()> {
    format!("DO RELEASE_LOCK({})", migration_lock_name(server))
        .ignore(&mut *conn)
        .await
        .map_err(Error::from_mysql)
}

/// The migration lock of the connection's database, an SQL expression: `mysqlleader.migrate.` +
/// 40 hex digits of a hash of the database name, 60 characters whatever the name (named locks
/// are limited to 64). MariaDB: SHA1, the name every earlier release used there, so that an old
/// and a new installer started together still run one after the other. MySQL 9.7 has no SHA1()
/// (nor SHA() or MD5()): the first 40 digits of SHA2-256; no earlier release installed there.
pub fn migration_lock_name(server: crate::Server) -> &'static str {
    match server {
        crate::Server::MariaDb => "CONCAT('mysqlleader.migrate.', SHA1(COALESCE(DATABASE(), '')))",
        crate::Server::MySql => "CONCAT('mysqlleader.migrate.', LEFT(SHA2(COALESCE(DATABASE(), ''), 256), 40))",
    }
}

/// Records that routine `name` (a name of the project's own, a plain identifier) now has the
/// definition whose SHA-256 is `checksum`, applied now: `applied_on` is the time of the last
/// (re-)creation by this installer, which [`crate::migrate::plan`] compares with the live
/// object's own creation time. No final `;`.
pub(crate) fn record_routine_sql(name: &str, kind: &str, checksum: &str) -> String {
    format!(
        "INSERT INTO mysqlleader_routines (name, kind, checksum, applied_on)\n\
         VALUES ('{name}', '{kind}', '{checksum}', UTC_TIMESTAMP(6))\n\
         ON DUPLICATE KEY UPDATE applied_on = UTC_TIMESTAMP(6), checksum = '{checksum}'"
    )
}

/// Grants EXECUTE on procedure `name` again to every account `leader_election_grants` lists
/// for it (routine `leader_election_regrant`). No final `;`.
pub(crate) fn regrant_sql(name: &str) -> String {
    format!("CALL leader_election_regrant('{name}')")
}

/// Statements that stop a script for the other kind of server before it changes anything:
/// SQLSTATE 45000 with `hint` unless the server is MariaDB (`mariadb`) or is not (`!mariadb`).
pub(crate) fn server_check_sql(mariadb: bool, hint: &str) -> String {
    let (want, name) = if mariadb { ("", "MariaDB") } else { ("NOT ", "MySQL") };
    format!(
        "DROP PROCEDURE IF EXISTS mysqlleader_install_check;\n\
         CREATE PROCEDURE mysqlleader_install_check()\n\
         BEGIN\n\
         \x20   IF NOT (VERSION() {want}LIKE '%MariaDB%') THEN\n\
         \x20       SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'mysqlleader: this script is for {name}; for this server use: {hint}';\n\
         \x20   END IF;\n\
         END;\n\
         CALL mysqlleader_install_check();\n\
         DROP PROCEDURE IF EXISTS mysqlleader_install_check;\n"
    )
}

/// Statements that stop a script over a schema that a newer release installed (a migration
/// after `known` is recorded in `table`), before it changes anything: SQLSTATE 45000, in at
/// most 128 characters (MySQL's limit for a SIGNAL message). Without them an older script would
/// put its older routines over the newer ones (and on MySQL revoke every account's EXECUTE on
/// them): the downgrade of issue 39.
pub(crate) fn newer_schema_check_sql(table: &str, known: i64) -> String {
    format!(
        "DROP PROCEDURE IF EXISTS mysqlleader_install_newer_check;\n\
         CREATE PROCEDURE mysqlleader_install_newer_check()\n\
         BEGIN\n\
         \x20   DECLARE newest INT DEFAULT NULL;\n\
         \x20   IF EXISTS (SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{table}') THEN\n\
         \x20       SELECT MAX(version) INTO newest FROM {table};\n\
         \x20   END IF;\n\
         \x20   IF newest > {known} THEN\n\
         \x20       SET @mysqlleader_refusal = CONCAT('mysqlleader: the schema is newer than this script (V', newest, \n\
         \x20           ' applied; it knows up to V{known}): nothing was changed');\n\
         \x20       SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = @mysqlleader_refusal;\n\
         \x20   END IF;\n\
         END;\n\
         CALL mysqlleader_install_newer_check();\n\
         DROP PROCEDURE IF EXISTS mysqlleader_install_newer_check;\n"
    )
}

/// The table Refinery records migrations in, as Refinery itself creates it.
pub(crate) fn schema_history_ddl(table: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {table} (\n    version INT PRIMARY KEY,\n    name VARCHAR(255),\n    \
         applied_on VARCHAR(255),\n    checksum VARCHAR(255)\n);"
    )
}

/// Records one migration as applied, the way Refinery does (RFC 3339 time, checksum as text).
pub(crate) fn record_migration_sql(table: &str, version: i64, name: &str, checksum: u64) -> String {
    format!(
        "INSERT IGNORE INTO {table} (version, name, applied_on, checksum)\n\
         VALUES ({version}, '{name}', DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%dT%H:%i:%sZ'), '{checksum}');"
    )
}
