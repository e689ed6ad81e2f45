//! Errors of every call, with the classes users act on: a bad argument (which one), not the
//! leader, connection or timeout trouble, the schema not migrated, and any other server error.

use std::time::Duration;

/// SQLSTATE the procedures raise for rejected input; the message names the parameter.
pub const SQLSTATE_INVALID_ARGUMENT: &str = "45000";
/// SQLSTATE `assert_leader` raises when the caller does not lead at the given term.
pub const SQLSTATE_NOT_LEADER: &str = "45001";

/// Server error codes that are worth retrying: the outcome is "not done", never "done".
/// 1213 deadlock (and Galera certification conflict), 1205 lock wait timeout, 1047 unknown
/// command (Galera node not in the primary component), 1180 commit failed (Galera),
/// 2006 server has gone away, 2013 lost connection during query, 4031 idle disconnect (MariaDB),
/// 1927 connection killed, 1053 server shutdown in progress.
pub const TRANSIENT_SERVER_CODES: &[u16] = &[1213, 1205, 1047, 1180, 2006, 2013, 4031, 1927, 1053];

/// Everything that can go wrong in mysqlleader.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument was rejected, by this library or by the procedures (SQLSTATE 45000).
    /// `parameter` is its name as in the contract (`service_id`, `node_id`, `lease_ms`, `term`,
    /// `enabled`) or the configuration field (`renew_interval`, ...).
    #[error("invalid argument `{parameter}`: {message}")]
    InvalidArgument { parameter: String, message: String },

    /// `assert_leader` refused: the node does not hold a valid lease at that term (SQLSTATE 45001).
    #[error("not the leader: {message}")]
    NotLeader { message: String },

    /// The server could not be reached, the connection broke, or a request timed out.
    /// The outcome of a write that failed this way is unknown.
    #[error("connection: {message}")]
    Connection { message: String },

    /// The election procedures or tables are missing: run `mysqlleader migrate` (or
    /// [`crate::migrate()`]) against this database first.
    #[error("the mysqlleader schema is not installed in this database ({message}); run `mysqlleader migrate` first")]
    NotMigrated { message: String },

    /// Any other error the server reported.
    #[error("server error {code} ({state}): {message}")]
    Server { code: u16, state: String, message: String },

    /// A migration could not be applied.
    #[error("migration failed: {message}")]
    Migration { message: String },
}

/// Shorthand used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn invalid(parameter: &str, message: impl Into<String>) -> Self {
        Error::InvalidArgument { parameter: parameter.to_string(), message: message.into() }
    }

    pub(crate) fn timeout(after: Duration) -> Self {
        Error::Connection { message: format!("no answer within {} ms", after.as_millis()) }
    }

    /// True when the same call may simply be tried again: a lost connection, a timeout, a
    /// deadlock or lock wait, a Galera node out of the primary component. The outcome of the
    /// failed attempt is unknown or "not done", so a caller must not assume it took effect.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Connection { .. } => true,
            Error::Server { code, .. } => TRANSIENT_SERVER_CODES.contains(code),
            _ => false,
        }
    }

    /// The server error code, when the server reported one.
    pub fn server_code(&self) -> Option<u16> {
        match self {
            Error::Server { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// Maps a `mysql_async` error to the classes above. Passwords never appear in the message.
    pub(crate) fn from_mysql(err: mysql_async::Error) -> Self {
        use mysql_async::Error as E;
        match err {
            E::Server(se) => Self::from_server(se.code, &se.state, &se.message),
            E::Io(e) => Error::Connection { message: redact(&e.to_string()) },
            E::Driver(e) => Error::Connection { message: redact(&e.to_string()) },
            E::Url(e) => Error::invalid("url", redact(&e.to_string())),
            other => Error::Connection { message: redact(&other.to_string()) },
        }
    }

    pub(crate) fn from_server(code: u16, state: &str, message: &str) -> Self {
        match state {
            SQLSTATE_INVALID_ARGUMENT => {
                // 'mysqlleader: <parameter> must ...': the first word names the parameter.
                let rest = message.strip_prefix("mysqlleader: ").unwrap_or(message);
                let parameter = rest.split_whitespace().next().unwrap_or("").to_string();
                Error::InvalidArgument { parameter, message: message.to_string() }
            }
            SQLSTATE_NOT_LEADER => Error::NotLeader { message: message.to_string() },
            _ if is_missing_schema(code, message) => Error::NotMigrated { message: message.to_string() },
            _ => Error::Server { code, state: state.to_string(), message: redact(message) },
        }
    }
}

/// 1305: PROCEDURE does not exist; 1146: table does not exist (only our own objects count).
fn is_missing_schema(code: u16, message: &str) -> bool {
    (code == 1305 || code == 1146 || code == 1539)
        && ["campaign", "am_i_leader", "current_leader", "force_leader", "reelect", "resign",
            "assert_leader", "set_expiry_event", "leader_election", "leader_election_expire"]
            .iter()
            .any(|name| message.contains(name))
}

/// Replaces the password of any `scheme://user:password@host` in `text` with `***`.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("://") {
        let (head, tail) = rest.split_at(pos + 3);
        out.push_str(head);
        // The authority ends at the first '/', whitespace or end; credentials end at its last '@'.
        let end = tail.find(|c: char| c == '/' || c.is_whitespace()).unwrap_or(tail.len());
        let authority = &tail[..end];
        match (authority.rfind('@'), authority.find(':')) {
            (Some(at), Some(colon)) if colon < at => {
                out.push_str(&authority[..colon]);
                out.push_str(":***");
                out.push_str(&authority[at..]);
            }
            _ => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_passwords_in_urls() {
        assert_eq!(redact("mysql://app:s3cr:et@db:3306/x failed"), "mysql://app:***@db:3306/x failed");
        assert_eq!(redact("mysql://app@db/x"), "mysql://app@db/x");
        assert_eq!(redact("a mysql://u:p@h/x and mysql://v:q@h2"), "a mysql://u:***@h/x and mysql://v:***@h2");
        assert_eq!(redact("no url"), "no url");
    }

    #[test]
    fn invalid_argument_names_the_parameter() {
        let e = Error::from_server(1644, "45000", "mysqlleader: lease_ms must be between 1 and 86400000 (got 0)");
        assert_eq!(e, Error::InvalidArgument {
            parameter: "lease_ms".into(),
            message: "mysqlleader: lease_ms must be between 1 and 86400000 (got 0)".into()
        });
        assert!(matches!(Error::from_server(1644, "45001", "mysqlleader: not the leader"), Error::NotLeader { .. }));
        assert!(matches!(Error::from_server(1305, "42000", "PROCEDURE db.campaign does not exist"), Error::NotMigrated { .. }));
        assert!(Error::from_server(1213, "40001", "Deadlock").is_transient());
        assert!(!Error::from_server(1064, "42000", "syntax").is_transient());
    }
}
