//! Errors as the user reads them: what went wrong and what to do about it. Passwords never
//! appear: the URL is only ever shown as `user@host:port/db`.

use std::fmt;

use mysqlleader::Error;

/// An error of the command-line tool: printed on standard error, exit status 2.
#[derive(Debug)]
pub struct CliError(pub String);

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl CliError {
    pub fn new(message: impl Into<String>) -> Self {
        CliError(message.into())
    }
}

/// Where the tool connects, without the password: for messages.
#[derive(Debug, Clone)]
pub struct Target {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub database: Option<String>,
}

impl Target {
    pub fn from_url(url: &str) -> Result<Target, CliError> {
        let opts = mysqlleader::opts_from_url(url).map_err(|e| {
            CliError::new(format!(
                "the database URL is not valid ({}); write it as mysql://user:password@host:port/database?ssl-mode=...",
                mysqlleader::error::redact(&e.to_string())
            ))
        })?;
        Ok(Target {
            host: opts.ip_or_hostname().to_string(),
            port: opts.tcp_port(),
            user: opts.user().unwrap_or("").to_string(),
            database: opts.db_name().map(str::to_string),
        })
    }

    /// `host:port` (`[v6]:port`), as the library's connection errors name the server.
    fn server(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    fn db(&self) -> String {
        self.database.clone().unwrap_or_else(|| "(none)".into())
    }

    /// Explains a library error in the words of this connection.
    pub fn explain(&self, err: Error) -> CliError {
        let message = match &err {
            // The library's message names the server too: once is enough.
            Error::Connection { message } => format!(
                "cannot reach the database server at {} ({}); is it running, and are --url / MYSQLLEADER_URL right?",
                self.server(),
                message.strip_prefix(&format!("{}: ", self.server())).unwrap_or(message)
            ),
            Error::NotMigrated { message, .. } => format!(
                "the mysqlleader schema is not installed in database '{}' on {} ({}): run `mysqlleader migrate` first",
                self.db(),
                self.server(),
                message
            ),
            // The library's message says the possible causes (error::LOGIN_REFUSED_HINT).
            Error::Authentication { message, .. } => {
                format!("the server at {} refused the login of user '{}': {}", self.server(), self.user, message)
            }
            Error::Usage { message, .. } if message.starts_with("TLS") => format!(
                "TLS with the server at {} failed: {} (check ssl-mode, ssl-ca, ssl-cert and ssl-key in the URL)",
                self.server(),
                message
            ),
            Error::Privilege { code: 1049, .. } => format!(
                "database '{}' does not exist on {}: create it (CREATE DATABASE `{}`), then run `mysqlleader migrate`",
                self.db(),
                self.server(),
                self.db()
            ),
            Error::Privilege { code: 1044, message, .. } => format!(
                "user '{}' may not use database '{}' on {} ({})",
                self.user,
                self.db(),
                self.server(),
                message
            ),
            Error::Usage { code: Some(1046), .. } => {
                "the URL names no database: write it as mysql://user:password@host:port/database".to_string()
            }
            Error::Privilege { message, .. } => format!(
                "user '{}' lacks a privilege for this ({}); each role may call only its procedures (`status`, \
                 `watch` and `event status` need the operator or observer role; `force`, `reelect`, `handover` \
                 and `event on|off` the operator's), `migrate` needs the right to create tables, routines and \
                 events (see `mysqlleader grant`)",
                self.user, message
            ),
            Error::InvalidArgument { parameter, message } => {
                let message = message.strip_prefix("mysqlleader: ").unwrap_or(message);
                format!("invalid {parameter}: {message}")
            }
            _ => err.to_string(),
        };
        CliError(mysqlleader::error::redact(&message))
    }
}

/// Explains an error that involves no connection (a rejected argument).
pub fn offline(err: Error) -> CliError {
    match err {
        Error::InvalidArgument { parameter, message } => {
            let message = message.strip_prefix("mysqlleader: ").unwrap_or(&message).to_string();
            CliError(format!("invalid {parameter}: {message}"))
        }
        other => CliError(mysqlleader::error::redact(&other.to_string())),
    }
}
