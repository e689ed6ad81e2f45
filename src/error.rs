//! One error contract from SQL to every binding: the kinds callers must tell apart, each with its
//! data as fields (the parameter's name, the server's errno and SQLSTATE, the current term), and
//! whether a retry can help, decided once, here. No caller ever parses a message.
//!
//! | kind | raised by | fields | transient |
//! | --- | --- | --- | --- |
//! | `InvalidArgument` | error 31000 (SQLSTATE 45000), or a configuration check | `parameter` | no |
//! | `NotLeader` | error 31001 or 31004 (SQLSTATE 45001, `assert_leader`) | `current_term` when known, `handed_over` | no |
//! | `AccessDenied` | error 31002 (SQLSTATE 45002, per-service access) | | no |
//! | `Authentication` | the server refused the login (1045; MySQL's 3159 for plaintext where TLS is required) | `code`, `state` | no |
//! | `Privilege` | the server denied the account a database or routine (1044, 1049, 1142, 1227, 1370) | `code`, `state` | no |
//! | `NotMigrated` | a missing election procedure or table | `code`, `state` | no |
//! | `Connection` | unreachable server, lost connection | | yes |
//! | `Timeout` | no answer within the request timeout | `after` | yes |
//! | `Server` | any other server error | `code`, `state` | for [`TRANSIENT_SERVER_CODES`] |
//! | `Usage` | a driver or usage error: wrong parameter count, TLS set-up, bad packet, a statement a fenced transaction refuses; error 31003 (SQLSTATE 45000): a call the session's state does not allow | `code`, `parameter` | no |
//! | `Stopped` | a call on an elector whose background task has ended | | no |
//! | `Migration` | a migration that could not be applied | | no |
//!
//! [`Error::is_permanent`] tells the errors that only a change of set-up can mend (a password,
//! a grant, the schema, the URL, TLS): an elector keeps trying, but reports them
//! ([`crate::WaitOutcome::Failed`], [`crate::Event::Failing`]).
//!
//! Messages are shown as they are: a message raised by the procedures keeps its
//! `mysqlleader: ` prefix, and `Display` never adds a second one.

use std::time::Duration;

/// SQLSTATE the procedures raise for rejected input; the message names the parameter.
pub const SQLSTATE_INVALID_ARGUMENT: &str = "45000";
/// SQLSTATE `assert_leader` raises when the caller does not lead at the given term.
pub const SQLSTATE_NOT_LEADER: &str = "45001";
/// SQLSTATE every procedure raises for a service outside the account's patterns.
pub const SQLSTATE_ACCESS_DENIED: &str = "45002";

/// The error numbers of the procedures' refusals (`SIGNAL ... SET MYSQL_ERRNO`): one per kind, so
/// that the kind is data on the wire, as the errno every driver reports (also those that keep no
/// SQLSTATE), and no caller reads a message. A block neither server uses, below 32768: some
/// drivers read the number as a signed 16-bit value (MariaDB Connector/J). Routines installed by a release before these
/// numbers raise 1644 ([`refusal::SIGNAL`]) for all of them; those are told apart by their
/// messages ([`Error::from_server`]), while an upgrade replaces them.
pub mod refusal {
    /// A rejected input (SQLSTATE 45000); the message's first word after `mysqlleader: ` is
    /// the parameter's name (`mysqlleader: lease_ms must be ...`).
    pub const INVALID_ARGUMENT: u16 = 31000;
    /// `assert_leader` refused the term (SQLSTATE 45001): another node leads, the lease ran out,
    /// or the term has ended.
    pub const NOT_LEADER: u16 = 31001;
    /// A service outside the account's patterns, or a call over all services by a limited
    /// account (SQLSTATE 45002).
    pub const ACCESS_DENIED: u16 = 31002;
    /// A call the session's state does not allow (SQLSTATE 45000): a fence outside a
    /// transaction, a read inside one, any call inside an XA transaction.
    pub const USAGE: u16 = 31003;
    /// `assert_leader` refused the term because an operator's handover ended it (SQLSTATE
    /// 45001): a `NotLeader` with `handed_over`.
    pub const HANDED_OVER: u16 = 31004;
    /// ER_SIGNAL_EXCEPTION: the number of a SIGNAL without a MYSQL_ERRNO of its own (the
    /// routines of earlier releases).
    pub const SIGNAL: u16 = 1644;

    /// Whether `code` is one of the numbers above but [`SIGNAL`].
    pub fn is_refusal(code: u16) -> bool {
        (INVALID_ARGUMENT..=HANDED_OVER).contains(&code)
    }

    /// The SQLSTATE the procedures raise with `code` (one of the numbers above but [`SIGNAL`]).
    pub fn sqlstate_of(code: u16) -> Option<&'static str> {
        match code {
            INVALID_ARGUMENT | USAGE => Some(super::SQLSTATE_INVALID_ARGUMENT),
            NOT_LEADER | HANDED_OVER => Some(super::SQLSTATE_NOT_LEADER),
            ACCESS_DENIED => Some(super::SQLSTATE_ACCESS_DENIED),
            _ => None,
        }
    }
}

/// Server error codes that are worth retrying: the outcome is "not done", never "done".
/// 1213 deadlock (and Galera certification conflict), 1205 lock wait timeout, 1047 unknown
/// command (Galera node not in the primary component), 1180 commit failed (Galera),
/// 2006 server has gone away, 2013 lost connection during query, 4031 idle disconnect (MariaDB),
/// 1927 connection killed, 1053 server shutdown in progress, 1317 query interrupted,
/// 1969 statement time-out (MariaDB `max_statement_time`), 1040 too many connections;
/// MySQL Group Replication: 1290 a read-only server (a secondary, or a primary the group has
/// replaced: the elector moves on to its next server, and so finds the primary), 3100 a commit
/// hook failed (a member that lost its group), 3101 a transaction the group rolled back at
/// commit (a certification conflict with a write through another member).
pub const TRANSIENT_SERVER_CODES: &[u16] =
    &[1213, 1205, 1047, 1180, 2006, 2013, 4031, 1927, 1053, 1317, 1969, 1040, 1290, 3100, 3101];

/// What a caller must tell apart; see the table in the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    InvalidArgument,
    NotLeader,
    AccessDenied,
    /// The server refused the login (a wrong user name or password, TLS or a client
    /// certificate required).
    Authentication,
    /// The server denied the account something it needs: the database, a routine, a table.
    Privilege,
    NotMigrated,
    Connection,
    Timeout,
    Server,
    Usage,
    Stopped,
    Migration,
}

/// Everything that can go wrong in mysqlleader.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument was rejected, by this library or by the procedures (SQLSTATE 45000).
    /// `parameter` is its canonical name: as in the contract (`service_id`, `node_id`,
    /// `lease_ms`, `term`, `enabled`), or the configuration field (`renew_interval`, `url`, ...).
    #[error("{message}")]
    InvalidArgument { parameter: String, message: String },

    /// `assert_leader` refused: the node does not hold a valid lease at that term (SQLSTATE
    /// 45001). `current_term` is the service's term when the refusal told it; `handed_over`:
    /// an operator's handover ended that term (error [`refusal::HANDED_OVER`]), and the elector
    /// told of it stops leading for [`crate::StopReason::HandedOver`].
    #[error("{message}")]
    NotLeader { message: String, current_term: Option<u64>, handed_over: bool },

    /// The account may not act on this service (SQLSTATE 45002, per-service access).
    #[error("{message}")]
    AccessDenied { message: String },

    /// The server refused the login (1045): a wrong user name or password, or the server or
    /// the account requires TLS or a client certificate (the message says which to check).
    #[error("server error {code} ({state}): {message}")]
    Authentication { code: u16, state: String, message: String },

    /// The server denied the account the database (1044, or 1049: unknown to it) or a
    /// routine or table the call needs (1370, 1142, 1227): a grant is missing.
    #[error("server error {code} ({state}): {message}")]
    Privilege { code: u16, state: String, message: String },

    /// The server could not be reached or the connection broke. The outcome of a write that
    /// failed this way is unknown. The message starts with the server, `host:port` (never the
    /// user or the password), wherever the library connected for the caller: the elector's
    /// calls, [`crate::migrate()`], the procedures that take a pool by type (`server_info`,
    /// `check_leader_at`, ...) and every call of the C ABI, for pools made by
    /// [`crate::pool_from_url`]. (A procedure given a connection-like value of the caller's
    /// cannot know which server a failed connect was for.)
    #[error("connection: {message}")]
    Connection { message: String },

    /// No answer within the time the caller was prepared to wait. The outcome is unknown.
    #[error("no answer within {} ms", after.as_millis())]
    Timeout { after: Duration },

    /// The election procedures or tables are missing: run `mysqlleader migrate` (or
    /// [`crate::migrate()`]) against this database first. `code` and `state`: the server's
    /// error (1305 a missing procedure, 1146 a missing table, ...), when the server reported it.
    #[error("the mysqlleader schema is not installed in this database ({message}); run `mysqlleader migrate` first")]
    NotMigrated { message: String, code: Option<u16>, state: Option<String> },

    /// Any other error the server reported.
    #[error("server error {code} ({state}): {message}")]
    Server { code: u16, state: String, message: String },

    /// A mistake a retry cannot mend, found by the driver rather than the server: a wrong number
    /// of statement parameters, a TLS set-up that cannot work, an unexpected packet, a
    /// statement a fenced transaction refuses. `code` is the server's errno when the server
    /// was involved; `parameter` the argument at fault, when one is.
    #[error("{message}")]
    Usage { code: Option<u16>, parameter: Option<String>, message: String },

    /// The elector's background task has ended (shut down, or died: `message` says which).
    #[error("the elector has stopped: {message}")]
    Stopped { message: String },

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
        Error::Timeout { after }
    }

    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Error::Usage { code: None, parameter: None, message: message.into() }
    }

    /// A usage mistake in the argument `parameter`.
    pub(crate) fn usage_of(parameter: &str, message: impl Into<String>) -> Self {
        Error::Usage { code: None, parameter: Some(parameter.to_string()), message: message.into() }
    }

    /// The same error, its message followed by `context` (what the caller was doing and what
    /// is in effect now); kind, code and fields unchanged.
    pub(crate) fn with_context(self, context: &str) -> Self {
        let add = |message: String| format!("{message}; {context}");
        match self {
            Error::InvalidArgument { parameter, message } => Error::InvalidArgument { parameter, message: add(message) },
            Error::NotLeader { message, current_term, handed_over } => Error::NotLeader { message: add(message), current_term, handed_over },
            Error::AccessDenied { message } => Error::AccessDenied { message: add(message) },
            Error::Connection { message } => Error::Connection { message: add(message) },
            Error::NotMigrated { message, code, state } => Error::NotMigrated { message: add(message), code, state },
            Error::Server { code, state, message } => Error::Server { code, state, message: add(message) },
            Error::Usage { code, parameter, message } => Error::Usage { code, parameter, message: add(message) },
            Error::Authentication { code, state, message } => Error::Authentication { code, state, message: add(message) },
            Error::Privilege { code, state, message } => Error::Privilege { code, state, message: add(message) },
            Error::Stopped { message } => Error::Stopped { message: add(message) },
            Error::Migration { message } => Error::Migration { message: add(message) },
            other => other,
        }
    }

    /// The same error, a `Connection` one naming `server` (`host:port`) first, unless its
    /// message already does; every other kind unchanged.
    pub(crate) fn at_server(self, server: Option<&str>) -> Self {
        match (self, server) {
            (Error::Connection { message }, Some(server)) if !message.starts_with(&format!("{server}: ")) => {
                Error::Connection { message: format!("{server}: {message}") }
            }
            (other, _) => other,
        }
    }

    /// The same error, a `Connection` one naming the server of `pool` (known for pools made by
    /// [`crate::pool_from_url`]).
    pub(crate) fn on_pool(self, pool: &mysql_async::Pool) -> Self {
        match self {
            Error::Connection { .. } => self.at_server(crate::url::server_of_pool(pool).as_deref()),
            other => other,
        }
    }

    /// [`Error::from_mysql`] for an error of `pool`: a `Connection` error names its server.
    pub(crate) fn from_pool(pool: &mysql_async::Pool, err: mysql_async::Error) -> Self {
        Error::from_mysql(err).on_pool(pool)
    }

    /// [`Error::from_mysql`] for an error of a connection made with `opts`: a `Connection`
    /// error names its server.
    pub(crate) fn from_opts(opts: &mysql_async::Opts, err: mysql_async::Error) -> Self {
        let error = Error::from_mysql(err);
        match error {
            Error::Connection { .. } => error.at_server(Some(&crate::url::server_of(opts))),
            other => other,
        }
    }

    pub(crate) fn stopped(message: impl Into<String>) -> Self {
        Error::Stopped { message: message.into() }
    }

    /// The kind of failure: what a caller acts on.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::InvalidArgument { .. } => ErrorKind::InvalidArgument,
            Error::NotLeader { .. } => ErrorKind::NotLeader,
            Error::AccessDenied { .. } => ErrorKind::AccessDenied,
            Error::Authentication { .. } => ErrorKind::Authentication,
            Error::Privilege { .. } => ErrorKind::Privilege,
            Error::Connection { .. } => ErrorKind::Connection,
            Error::Timeout { .. } => ErrorKind::Timeout,
            Error::NotMigrated { .. } => ErrorKind::NotMigrated,
            Error::Server { .. } => ErrorKind::Server,
            Error::Usage { .. } => ErrorKind::Usage,
            Error::Stopped { .. } => ErrorKind::Stopped,
            Error::Migration { .. } => ErrorKind::Migration,
        }
    }

    /// True when the same call may simply be tried again: a lost connection, a timeout, a
    /// deadlock or lock wait, a Galera node out of the primary component. The outcome of the
    /// failed attempt is unknown or "not done", so a caller must not assume it took effect.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Connection { .. } | Error::Timeout { .. } => true,
            Error::Server { code, .. } => TRANSIENT_SERVER_CODES.contains(code),
            _ => false,
        }
    }

    /// True when retrying cannot help and someone must change the set-up: a refused login
    /// (`Authentication`), a missing grant (`Privilege`), a service outside the account's
    /// patterns (`AccessDenied`), a schema not installed (`NotMigrated`), a rejected argument or
    /// URL (`InvalidArgument`), a TLS set-up that cannot work (`Usage`). An elector keeps
    /// trying all the same (the set-up may be mended while it runs) but reports it:
    /// [`crate::WaitOutcome::Failed`] and [`crate::Event::Failing`].
    pub fn is_permanent(&self) -> bool {
        matches!(
            self.kind(),
            ErrorKind::Authentication
                | ErrorKind::Privilege
                | ErrorKind::AccessDenied
                | ErrorKind::NotMigrated
                | ErrorKind::InvalidArgument
                | ErrorKind::Usage
        )
    }

    /// The canonical name of the rejected parameter, for `InvalidArgument` (and a `Usage`
    /// error that names one).
    pub fn parameter(&self) -> Option<&str> {
        match self {
            Error::InvalidArgument { parameter, .. } => Some(parameter),
            Error::Usage { parameter, .. } => parameter.as_deref(),
            _ => None,
        }
    }

    /// The server error code (errno), when the server reported one; for `NotLeader` always its
    /// refusal's number ([`refusal::NOT_LEADER`], or [`refusal::HANDED_OVER`]).
    pub fn server_code(&self) -> Option<u16> {
        match self {
            Error::Server { code, .. } | Error::Authentication { code, .. } | Error::Privilege { code, .. } => Some(*code),
            Error::Usage { code, .. } | Error::NotMigrated { code, .. } => *code,
            // The kind as its number, also for a refusal made without a round trip.
            Error::NotLeader { handed_over, .. } => Some(if *handed_over { refusal::HANDED_OVER } else { refusal::NOT_LEADER }),
            _ => None,
        }
    }

    /// The SQLSTATE, when the server reported one (45000, 45001 and 45002 for the kinds the
    /// procedures raise).
    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            Error::Server { state, .. } | Error::Authentication { state, .. } | Error::Privilege { state, .. } => Some(state),
            Error::NotLeader { .. } => Some(SQLSTATE_NOT_LEADER),
            Error::AccessDenied { .. } => Some(SQLSTATE_ACCESS_DENIED),
            Error::NotMigrated { state, .. } => state.as_deref(),
            _ => None,
        }
    }

    /// For `NotLeader`: the service's current term, when the refusal told it.
    pub fn current_term(&self) -> Option<u64> {
        match self {
            Error::NotLeader { current_term, .. } => *current_term,
            _ => None,
        }
    }

    /// Maps a `mysql_async` error to the kinds above. Passwords never appear in the message.
    pub(crate) fn from_mysql(err: mysql_async::Error) -> Self {
        use mysql_async::{DriverError as D, Error as E};
        match err {
            E::Server(se) => Self::from_server(se.code, &se.state, &se.message),
            // A certificate that does not verify, a failed handshake: a retry cannot help.
            E::Io(mysql_async::IoError::Tls(e)) => Error::usage(format!("TLS: {}", redact(&e.to_string()))),
            // rustls reports a failed handshake (a certificate that does not verify, a wrong
            // host name) as an I/O error of kind InvalidData.
            E::Io(mysql_async::IoError::Io(e)) if e.kind() == std::io::ErrorKind::InvalidData => {
                Error::usage(format!("TLS: {}", redact(&e.to_string())))
            }
            E::Io(e) => Error::Connection { message: redact(&e.to_string()) },
            E::Driver(d @ (D::ConnectionClosed | D::PoolDisconnected | D::PacketOutOfOrder | D::BadCompressedPacketHeader)) => {
                Error::Connection { message: redact(&d.to_string()) }
            }
            E::Driver(D::NoClientSslFlagFromServer) => Error::usage(
                "TLS: the server does not offer TLS, and the URL's ssl-mode requires it"),
            // MySQL answers a login to an account that does not exist with a switch to an
            // authentication plugin this client does not speak (sha256_password), rather than
            // 1045: a refused login all the same (or an account whose plugin must change).
            E::Driver(D::UnknownAuthPlugin { name }) => Error::Authentication {
                code: LOGIN_REFUSED,
                state: "28000".into(),
                message: format!(
                    "the server asked for authentication plugin `{}`, which this client does not speak \
                     (MySQL asks this of an account that does not exist); {LOGIN_REFUSED_HINT}, or the \
                     account must use caching_sha2_password or mysql_native_password",
                    redact(&name)
                ),
            },
            E::Driver(d) => Error::usage(redact(&d.to_string())),
            E::Url(e) => Error::invalid("url", redact(&e.to_string())),
            E::Other(e) => Error::usage(redact(&e.to_string())),
        }
    }

    /// Maps a server error: the procedures' refusals to their kinds by their error numbers
    /// ([`refusal`]), missing objects to `NotMigrated`, everything else to `Server`.
    /// 1. An error number of [`refusal`] is the kind. An `InvalidArgument`'s parameter is the
    ///    message's first word (`mysqlleader: PARAMETER must ...`, the grammar of every
    ///    parameter check); a 45001's current term the number after `current term `.
    /// 2. A refusal of the routines of an earlier release (1644 with SQLSTATE 45000, 45001 or
    ///    45002, while an upgrade replaces them) is told apart by the grammar they keep: 45001
    ///    and 45002 by their SQLSTATE; a 45000 is `InvalidArgument` when it reads
    ///    `mysqlleader: PARAMETER must ...`, `Server` when `mysqlleader: internal: ...` (a
    ///    fault of the procedures themselves, the trigger's check), else `Usage`.
    pub(crate) fn from_server(code: u16, state: &str, message: &str) -> Self {
        // The first two words after `mysqlleader: ` (`lease_ms must`, `internal: a`, ...).
        let mut words = message.strip_prefix("mysqlleader: ").unwrap_or(message).split_whitespace();
        let (first, second) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        let is_name = !first.is_empty() && first.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        let not_leader = |handed_over| Error::NotLeader {
            message: message.to_string(),
            current_term: number_after(message, "current term "),
            handed_over,
        };
        let usage = || Error::Usage { code: Some(code), parameter: None, message: message.to_string() };
        if refusal::is_refusal(code) && message.starts_with("mysqlleader: ") {
            return match code {
                refusal::INVALID_ARGUMENT if is_name => Error::InvalidArgument { parameter: first.to_string(), message: message.to_string() },
                refusal::NOT_LEADER => not_leader(false),
                refusal::HANDED_OVER => not_leader(true),
                refusal::ACCESS_DENIED => Error::AccessDenied { message: message.to_string() },
                _ => usage(),
            };
        }
        match state {
            SQLSTATE_INVALID_ARGUMENT if is_name && second == "must" => {
                Error::InvalidArgument { parameter: first.to_string(), message: message.to_string() }
            }
            SQLSTATE_INVALID_ARGUMENT if first == "internal:" => {
                Error::Server { code, state: state.to_string(), message: message.to_string() }
            }
            // Not a bad argument: a fence called outside a transaction (it would fence nothing),
            // a read called inside one (it could answer from an old snapshot, V7), a call inside
            // an XA transaction. A mistake of the caller's that a retry cannot mend.
            SQLSTATE_INVALID_ARGUMENT => usage(),
            SQLSTATE_NOT_LEADER => not_leader(false),
            SQLSTATE_ACCESS_DENIED => Error::AccessDenied { message: message.to_string() },
            _ if is_missing_schema(code, message) => {
                Error::NotMigrated { message: message.to_string(), code: Some(code), state: Some(state.to_string()) }
            }
            // MariaDB refuses a plaintext login to a server with require_secure_transport=ON,
            // and any login to an account REQUIRE SSL/X509 without what it requires, with the
            // same 1045 as a wrong password: say the possible causes (MySQL 8 has 3159 for the first).
            _ if code == LOGIN_REFUSED => Error::Authentication { code, state: state.to_string(), message: format!("{}; {LOGIN_REFUSED_HINT}", redact(message)) },
            // MySQL refuses a plaintext login to a server with require_secure_transport=ON with
            // 3159 of its own: a refused login all the same, whose cause is certain.
            _ if code == TLS_REQUIRED => Error::Authentication { code, state: state.to_string(), message: format!("{}; {TLS_REQUIRED_HINT}", redact(message)) },
            _ if PRIVILEGE_CODES.contains(&code) => Error::Privilege { code, state: state.to_string(), message: redact(message) },
            // No database selected: the URL names none (refused when it is parsed; this is a
            // session that lost it).
            _ if code == NO_DATABASE => Error::Usage { code: Some(code), parameter: Some("url".into()), message: redact(message) },
            _ => Error::Server { code, state: state.to_string(), message: redact(message) },
        }
    }
}

/// ER_ACCESS_DENIED_ERROR: the server refused the login.
const LOGIN_REFUSED: u16 = 1045;
/// ER_SECURE_TRANSPORT_REQUIRED (MySQL): a plaintext login to a server that requires TLS.
const TLS_REQUIRED: u16 = 3159;
/// What to do about 3159, appended to the server's message.
const TLS_REQUIRED_HINT: &str = "the server requires TLS (add ssl-mode=REQUIRED, or ssl-mode=VERIFY_IDENTITY&ssl-ca=PATH, to the URL)";
/// ER_NO_DB_ERROR: no database selected.
const NO_DATABASE: u16 = 1046;
/// A grant is missing: 1044 database access denied, 1049 unknown database (what the server
/// answers for a database that does not exist, where the account could see one), 1142 table
/// command denied, 1143 column command denied, 1227 specific privilege needed, 1370 routine
/// access denied (EXECUTE).
pub const PRIVILEGE_CODES: &[u16] = &[1044, 1049, 1142, 1143, 1227, 1370];
/// What a refused login can mean, appended to the server's message for 1045.
const LOGIN_REFUSED_HINT: &str = "wrong user name or password, or the server requires TLS (add ssl-mode=REQUIRED, \
    or ssl-mode=VERIFY_IDENTITY&ssl-ca=PATH, to the URL), or the account requires a client certificate (ssl-cert, ssl-key)";

/// The decimal number that follows `marker` in `text`, if any.
fn number_after(text: &str, marker: &str) -> Option<u64> {
    let start = text.find(marker)? + marker.len();
    let digits: String = text[start..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
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
    fn the_refusals_of_this_release_are_told_by_their_numbers() {
        // The message's words no longer decide the kind: an XA refusal whose first word is a
        // procedure's name is Usage, never InvalidArgument naming "campaign".
        let xa = Error::from_server(31003, "45000", "mysqlleader: campaign cannot run inside an XA transaction (XA PREPARE would drop its locks)");
        assert_eq!((xa.kind(), xa.parameter(), xa.server_code()), (ErrorKind::Usage, None, Some(31003)));
        let bad = Error::from_server(31000, "45000", "mysqlleader: lease_ms must be between 1 and 86400000 (got 0)");
        assert_eq!((bad.kind(), bad.parameter()), (ErrorKind::InvalidArgument, Some("lease_ms")));
        let lost = Error::from_server(31001, "45001", "mysqlleader: not the leader at term 3 (current term 4)");
        assert!(matches!(lost, Error::NotLeader { current_term: Some(4), handed_over: false, .. }), "{lost:?}");
        assert_eq!((lost.server_code(), lost.sqlstate()), (Some(31001), Some("45001")));
        let handed = Error::from_server(31004, "45001", "mysqlleader: not the leader at term 3 (current term 3): the term was handed over to another node");
        assert!(matches!(handed, Error::NotLeader { current_term: Some(3), handed_over: true, .. }), "{handed:?}");
        assert_eq!(handed.server_code(), Some(31004));
        assert_eq!(Error::from_server(31002, "45002", "mysqlleader: access denied: account 'a' may not act on service 'b'").kind(), ErrorKind::AccessDenied);
        // Without a SQLSTATE (drivers that keep none), the number alone.
        assert_eq!(Error::from_server(31001, "", "mysqlleader: not the leader at term 1 (current term 2)").kind(), ErrorKind::NotLeader);
        // One of these numbers on a message that is not the procedures': not a refusal.
        assert_eq!(Error::from_server(31001, "", "an application's own SIGNAL").kind(), ErrorKind::Server);
        // A missing routine keeps the server's number and SQLSTATE.
        let missing = Error::from_server(1305, "42000", "PROCEDURE app.campaign does not exist");
        assert_eq!((missing.kind(), missing.server_code(), missing.sqlstate()), (ErrorKind::NotMigrated, Some(1305), Some("42000")));
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
        let refused = Error::from_server(1045, "28000", "Access denied for user 'app'@'10.0.0.1' (using password: YES)");
        assert_eq!((refused.kind(), refused.server_code(), refused.is_transient()), (ErrorKind::Authentication, Some(1045), false));
        let plaintext = Error::from_server(3159, "HY000", "Connections using insecure transport are prohibited while --require_secure_transport=ON.");
        assert_eq!((plaintext.kind(), plaintext.server_code(), plaintext.is_permanent()), (ErrorKind::Authentication, Some(3159), true));
        assert!(plaintext.to_string().contains("requires TLS"), "{plaintext}");
        assert!(refused.is_permanent());
        for code in [1044, 1049, 1370] {
            let denied = Error::from_server(code, "42000", "denied");
            assert_eq!((denied.kind(), denied.server_code(), denied.sqlstate(), denied.is_permanent()), (ErrorKind::Privilege, Some(code), Some("42000"), true));
        }
        assert!(Error::from_server(1305, "42000", "PROCEDURE db.campaign does not exist").is_permanent());
        assert!(Error::from_server(1644, "45002", "mysqlleader: access denied").is_permanent());
        assert!(!Error::from_server(1213, "40001", "Deadlock").is_permanent());
        assert!(!Error::Connection { message: "refused".into() }.is_permanent());
        assert!(!Error::from_server(1290, "HY000", "read only").is_permanent(), "a read-only server may be promoted");
        for code in [1290, 3100, 3101] {
            assert!(Error::from_server(code, "HY000", "Group Replication").is_transient(), "{code}: a Group Replication member's refusal moves to the next server");
        }
        assert!(refused.to_string().contains("ssl-mode") && refused.to_string().contains("Access denied"), "{refused}");
    }

    #[test]
    fn not_leader_carries_the_current_term_and_no_doubled_prefix() {
        let e = Error::from_server(1644, "45001", "mysqlleader: not the leader at term 1 (current term 2)");
        assert_eq!(e.kind(), ErrorKind::NotLeader);
        assert_eq!(e.current_term(), Some(2));
        assert_eq!(e.sqlstate(), Some("45001"));
        assert_eq!(e.to_string(), "mysqlleader: not the leader at term 1 (current term 2)");
        let e = Error::from_server(1644, "45000", "mysqlleader: node_id must not be empty");
        assert_eq!(e.to_string(), "mysqlleader: node_id must not be empty");
        assert_eq!(e.parameter(), Some("node_id"));
        assert_eq!(Error::from_server(1644, "45002", "mysqlleader: access denied").kind(), ErrorKind::AccessDenied);
        let outside = Error::from_server(1644, "45000", "mysqlleader: assert_leader needs an open transaction");
        assert_eq!((outside.kind(), outside.is_transient()), (ErrorKind::Usage, false));
        let inside = Error::from_server(1644, "45000", "mysqlleader: am_i_leader needs autocommit on and no open transaction: ...");
        assert_eq!((inside.kind(), inside.is_transient(), inside.parameter()), (ErrorKind::Usage, false, None));
    }

    /// A 45000 names a parameter only when it says what the parameter must be: a refusal of the
    /// session's state names none, whichever procedure refused, and the trigger's internal check
    /// is the server's fault, not the caller's argument. (Before, the first word was taken for a
    /// parameter unless it was one of three procedure names: `campaign` inside XA came out as an
    /// invalid argument `campaign`, the trigger's check as one named `internal:`.)
    #[test]
    fn a_refusal_names_a_parameter_only_when_it_says_what_it_must_be() {
        for (message, parameter) in [
            ("mysqlleader: lease_ms must be between 1 and 86400000 (got 0)", "lease_ms"),
            ("mysqlleader: service_ids must be a JSON array of service ids", "service_ids"),
            ("mysqlleader: to_node must name another node than node_id", "to_node"),
            ("mysqlleader: term must not be NULL", "term"),
        ] {
            let e = Error::from_server(1644, "45000", message);
            assert_eq!((e.kind(), e.parameter()), (ErrorKind::InvalidArgument, Some(parameter)), "{message}");
        }
        for procedure in ["campaign", "campaign_seats", "renew_seats", "status", "wakeup_name", "handover", "handover_seats", "resign_to"] {
            let message = format!("mysqlleader: {procedure} cannot run inside an XA transaction (XA PREPARE would drop its locks)");
            let e = Error::from_server(1644, "45000", &message);
            assert_eq!((e.kind(), e.parameter(), e.is_transient()), (ErrorKind::Usage, None, false), "{message}");
        }
        let snapshot = Error::from_server(1644, "45000", "mysqlleader: current_leader needs autocommit on and no open transaction (its answer could come from an old snapshot)");
        assert_eq!((snapshot.kind(), snapshot.parameter()), (ErrorKind::Usage, None));
        let internal = Error::from_server(1644, "45000", "mysqlleader: internal: a seat change the history cannot record (leader_election_record_term)");
        assert_eq!((internal.kind(), internal.parameter(), internal.server_code()), (ErrorKind::Server, None, Some(1644)));
    }

    #[test]
    fn driver_mistakes_are_not_transient_but_lost_connections_are() {
        let mismatch = Error::from_mysql(mysql_async::DriverError::StmtParamsMismatch { required: 2, supplied: 1 }.into());
        assert_eq!(mismatch.kind(), ErrorKind::Usage);
        assert!(!mismatch.is_transient());
        let unknown = Error::from_mysql(mysql_async::DriverError::UnknownAuthPlugin { name: "sha256_password".into() }.into());
        assert_eq!((unknown.kind(), unknown.is_permanent()), (ErrorKind::Authentication, true), "{unknown}");
        assert!(unknown.to_string().contains("sha256_password") && unknown.to_string().contains("does not exist"), "{unknown}");
        let closed = Error::from_mysql(mysql_async::DriverError::ConnectionClosed.into());
        assert_eq!(closed.kind(), ErrorKind::Connection);
        assert!(closed.is_transient());
        assert!(Error::timeout(Duration::from_millis(5)).is_transient());
        assert_eq!(Error::timeout(Duration::from_millis(5)).kind(), ErrorKind::Timeout);
        assert!(!Error::stopped("shut down").is_transient());
    }
}
