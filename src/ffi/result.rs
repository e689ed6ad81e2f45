//! The one result enum, the thread-local last error, and the panic boundary that every
//! exported body runs in.

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{redact, refusal, Error};

/// The result of every fallible call. The numbers are stable: a code is never renumbered or
/// reused, new codes are only appended. `MYSQLLEADER_OK` is 0, so `if (rc) { ... }` tests for
/// failure. After a failure, `mysqlleader_last_error()` tells what went wrong.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum mysqlleader_result {
    /// Success.
    MYSQLLEADER_OK = 0,
    /// A pointer argument that must not be NULL was NULL; the message names it.
    MYSQLLEADER_NULL_ARGUMENT = 1,
    /// A value was rejected, by this library or by the procedures (SQLSTATE 45000): an empty or
    /// over-long id (more than 128 characters), a lease outside 1 to 86,400,000 ms, an
    /// inconsistent elector configuration, a malformed URL. The message names the parameter.
    MYSQLLEADER_INVALID_ARGUMENT = 2,
    /// A string argument is not valid UTF-8; the message names it and the byte offset.
    MYSQLLEADER_INVALID_UTF8 = 3,
    /// The node does not lead at the given term (`assert_leader`, SQLSTATE 45001), or an
    /// elector asked to fence a transaction does not lead now.
    MYSQLLEADER_NOT_LEADER = 4,
    /// The server could not be reached, the connection broke, or the request timed out. The
    /// outcome of a write that failed this way is unknown; the call may be tried again.
    MYSQLLEADER_CONNECTION = 5,
    /// The election procedures or tables are missing from the database: call
    /// `mysqlleader_migrate` (or run `mysqlleader migrate`) first.
    MYSQLLEADER_NOT_MIGRATED = 6,
    /// Any other error the server reported; `mysqlleader_last_error_server_code()` gives its
    /// number and `mysqlleader_last_error_is_transient()` whether a retry may succeed.
    MYSQLLEADER_SERVER = 7,
    /// A migration could not be applied.
    MYSQLLEADER_MIGRATION = 8,
    /// The caller's buffer is too small; the needed size (NUL included) was written to the
    /// `needed_out` argument.
    MYSQLLEADER_BUFFER_TOO_SMALL = 9,
    /// A bug inside the library: a Rust panic was caught at the boundary. The handle involved
    /// may be in an inconsistent state; free it.
    MYSQLLEADER_PANIC = 10,
    /// The handle cannot do this now: the transaction has ended or failed earlier (roll it
    /// back), the elector is being freed, or its background task has stopped.
    MYSQLLEADER_INVALID_STATE = 11,
    /// A mistake a retry cannot mend, found by the driver rather than the server: a wrong
    /// number of statement parameters, a TLS set-up that cannot work, `assert_leader` called
    /// outside a transaction (it would fence nothing). Never transient.
    MYSQLLEADER_USAGE = 12,
    /// The account may not act on this service (SQLSTATE 45002, per-service access); the message
    /// names the account and the service. Nothing was changed.
    MYSQLLEADER_ACCESS_DENIED = 13,
    /// The server refused the login (error 1045): a wrong user name or password, or the server
    /// or the account requires TLS or a client certificate (the message says which to check).
    /// `mysqlleader_last_error_server_code()` gives the number. Never transient.
    MYSQLLEADER_AUTHENTICATION = 14,
    /// The server denied the account something it needs (a grant is missing): the database
    /// (1044; 1049, unknown to it), a routine (1370: EXECUTE), a table (1142).
    /// `mysqlleader_last_error_server_code()` gives the number. Never transient.
    MYSQLLEADER_PRIVILEGE = 15,
}

use mysqlleader_result::*;

impl mysqlleader_result {
    /// The constant's name as it is spelled in the header.
    pub fn name(self) -> &'static CStr {
        match self {
            MYSQLLEADER_OK => c"MYSQLLEADER_OK",
            MYSQLLEADER_NULL_ARGUMENT => c"MYSQLLEADER_NULL_ARGUMENT",
            MYSQLLEADER_INVALID_ARGUMENT => c"MYSQLLEADER_INVALID_ARGUMENT",
            MYSQLLEADER_INVALID_UTF8 => c"MYSQLLEADER_INVALID_UTF8",
            MYSQLLEADER_NOT_LEADER => c"MYSQLLEADER_NOT_LEADER",
            MYSQLLEADER_CONNECTION => c"MYSQLLEADER_CONNECTION",
            MYSQLLEADER_NOT_MIGRATED => c"MYSQLLEADER_NOT_MIGRATED",
            MYSQLLEADER_SERVER => c"MYSQLLEADER_SERVER",
            MYSQLLEADER_MIGRATION => c"MYSQLLEADER_MIGRATION",
            MYSQLLEADER_BUFFER_TOO_SMALL => c"MYSQLLEADER_BUFFER_TOO_SMALL",
            MYSQLLEADER_PANIC => c"MYSQLLEADER_PANIC",
            MYSQLLEADER_INVALID_STATE => c"MYSQLLEADER_INVALID_STATE",
            MYSQLLEADER_USAGE => c"MYSQLLEADER_USAGE",
            MYSQLLEADER_ACCESS_DENIED => c"MYSQLLEADER_ACCESS_DENIED",
            MYSQLLEADER_AUTHENTICATION => c"MYSQLLEADER_AUTHENTICATION",
            MYSQLLEADER_PRIVILEGE => c"MYSQLLEADER_PRIVILEGE",
        }
    }

    const ALL: [mysqlleader_result; 16] = [
        MYSQLLEADER_OK,
        MYSQLLEADER_NULL_ARGUMENT,
        MYSQLLEADER_INVALID_ARGUMENT,
        MYSQLLEADER_INVALID_UTF8,
        MYSQLLEADER_NOT_LEADER,
        MYSQLLEADER_CONNECTION,
        MYSQLLEADER_NOT_MIGRATED,
        MYSQLLEADER_SERVER,
        MYSQLLEADER_MIGRATION,
        MYSQLLEADER_BUFFER_TOO_SMALL,
        MYSQLLEADER_PANIC,
        MYSQLLEADER_INVALID_STATE,
        MYSQLLEADER_USAGE,
        MYSQLLEADER_ACCESS_DENIED,
        MYSQLLEADER_AUTHENTICATION,
        MYSQLLEADER_PRIVILEGE,
    ];
}

/// Why a call failed: the code to return and what the last error will say, as fields.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub code: mysqlleader_result,
    pub message: String,
    pub server_code: u16,
    pub transient: bool,
    /// The rejected parameter as C spells it (`service_id`, `lease_ms`, `config->renew_ms`,
    /// `url`), for invalid, NULL and non-UTF-8 arguments.
    pub parameter: Option<String>,
    /// The server's SQLSTATE, when the server reported the error.
    pub sqlstate: Option<String>,
    /// For `MYSQLLEADER_NOT_LEADER`: the service's current term, when known.
    pub current_term: Option<u64>,
}

impl Failure {
    pub fn new(code: mysqlleader_result, message: impl Into<String>) -> Self {
        Failure { code, message: message.into(), server_code: 0, transient: false, parameter: None, sqlstate: None, current_term: None }
    }

    pub fn null(name: &str) -> Self {
        Failure { parameter: Some(name.to_string()), ..Failure::new(MYSQLLEADER_NULL_ARGUMENT, format!("{name} must not be NULL")) }
    }

    /// An invalid argument `name`; `message` says why (and names it, as every message does).
    pub fn invalid(name: &str, message: impl std::fmt::Display) -> Self {
        Failure { parameter: Some(name.to_string()), ..Failure::new(MYSQLLEADER_INVALID_ARGUMENT, message.to_string()) }
    }

    /// A string argument `name` that is not UTF-8.
    pub fn utf8(name: &str, message: impl Into<String>) -> Self {
        Failure { parameter: Some(name.to_string()), ..Failure::new(MYSQLLEADER_INVALID_UTF8, message) }
    }

    pub fn state(message: impl Into<String>) -> Self {
        Failure::new(MYSQLLEADER_INVALID_STATE, message)
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        use crate::error::ErrorKind as K;
        let code = match error.kind() {
            K::InvalidArgument => MYSQLLEADER_INVALID_ARGUMENT,
            K::NotLeader => MYSQLLEADER_NOT_LEADER,
            K::AccessDenied => MYSQLLEADER_ACCESS_DENIED,
            K::Authentication => MYSQLLEADER_AUTHENTICATION,
            K::Privilege => MYSQLLEADER_PRIVILEGE,
            // A stopped elector is a state of the handle, not an argument of the caller's.
            K::Stopped => MYSQLLEADER_INVALID_STATE,
            // A timeout is a connection-class failure in C: transient, outcome unknown.
            K::Connection | K::Timeout => MYSQLLEADER_CONNECTION,
            K::NotMigrated => MYSQLLEADER_NOT_MIGRATED,
            K::Server => MYSQLLEADER_SERVER,
            K::Usage => MYSQLLEADER_USAGE,
            K::Migration => MYSQLLEADER_MIGRATION,
            #[allow(unreachable_patterns)] // ErrorKind is non_exhaustive
            _ => MYSQLLEADER_SERVER,
        };
        let sqlstate = error.sqlstate().map(str::to_string);
        Failure {
            code,
            message: error.to_string(),
            server_code: error.server_code().unwrap_or(0),
            transient: error.is_transient(),
            parameter: error.parameter().map(str::to_string),
            sqlstate,
            current_term: error.current_term(),
        }
    }
}

pub(crate) type FfiResult<T = ()> = Result<T, Failure>;

/// The last failure of a call on this thread.
#[derive(Default)]
struct LastError {
    code: Option<mysqlleader_result>,
    /// Redacted; never holds a password.
    message: CString,
    server_code: u16,
    transient: bool,
    parameter: Option<CString>,
    sqlstate: CString,
    current_term: u64,
}

thread_local! {
    static LAST_ERROR: RefCell<LastError> = RefCell::new(LastError::default());
}

fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "\\0")).unwrap_or_default()
}

fn set_last_error(failure: Failure) {
    // Passwords never reach the caller, whatever produced the text; a NUL inside a server's
    // message would end the C string early, so it is replaced.
    let message = c_string(&redact(&failure.message));
    LAST_ERROR.with(|last| {
        *last.borrow_mut() = LastError {
            code: Some(failure.code),
            message,
            server_code: failure.server_code,
            transient: failure.transient,
            parameter: failure.parameter.as_deref().map(c_string),
            sqlstate: c_string(failure.sqlstate.as_deref().unwrap_or("")),
            current_term: failure.current_term.unwrap_or(0),
        }
    });
}

fn clear_last_error() {
    LAST_ERROR.with(|last| {
        let mut last = last.borrow_mut();
        if last.code.is_some() {
            *last = LastError::default();
        }
    });
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    format!("internal error (a bug in mysqlleader, please report it): {what}")
}

/// Runs the body of an exported function: catches panics, and records the outcome as this
/// thread's last error (cleared on success). Returns the code to hand to C.
pub(crate) fn boundary(body: impl FnOnce() -> FfiResult) -> mysqlleader_result {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => {
            clear_last_error();
            MYSQLLEADER_OK
        }
        Ok(Err(failure)) => {
            let code = failure.code;
            set_last_error(failure);
            code
        }
        Err(payload) => {
            set_last_error(Failure::new(MYSQLLEADER_PANIC, panic_message(payload.as_ref())));
            MYSQLLEADER_PANIC
        }
    }
}

/// The panic boundary of a function that cannot report anything (the `_free` functions): a
/// panic is caught and dropped, the last error is left as it was.
pub(crate) fn boundary_void(body: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(body));
}

/// The message of the last failed call on this thread: a NUL-terminated string, never NULL,
/// empty when that call succeeded. It includes the server's own text when the server
/// reported the error, and never a password.
///
/// The pointer is borrowed: it stays valid until the next call of a mysqlleader function on
/// this thread other than the `mysqlleader_last_error*` and `mysqlleader_result_name`
/// functions. Copy it (or use `mysqlleader_last_error_copy`) to keep it longer.
#[no_mangle]
pub extern "C" fn mysqlleader_last_error() -> *const c_char {
    catch_unwind(|| LAST_ERROR.with(|last| last.borrow().message.as_ptr())).unwrap_or(c"".as_ptr())
}

/// Copies the message of the last failed call on this thread (see `mysqlleader_last_error`)
/// into `buf` of `buf_len` bytes, NUL-terminated. `*needed_out` (may be NULL) receives the bytes
/// needed, NUL included, on success and on `MYSQLLEADER_BUFFER_TOO_SMALL`. `buf` may be NULL when
/// `buf_len` is 0, to ask for the size. This function never changes the last error itself.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_last_error_copy(buf: *mut c_char, buf_len: usize, needed_out: *mut usize) -> mysqlleader_result {
    let copied = catch_unwind(AssertUnwindSafe(|| {
        LAST_ERROR.with(|last| {
            let last = last.borrow();
            // SAFETY: the caller's buffer and needed_out follow the conventions.
            unsafe { super::strings::copy_out(last.message.as_bytes(), buf, buf_len, needed_out) }
        })
    }));
    match copied {
        Ok(Ok(())) => MYSQLLEADER_OK,
        Ok(Err(failure)) => failure.code,
        Err(_) => MYSQLLEADER_PANIC,
    }
}

/// The result code of the last call on this thread: `MYSQLLEADER_OK` when it succeeded.
#[no_mangle]
pub extern "C" fn mysqlleader_last_error_code() -> mysqlleader_result {
    catch_unwind(|| LAST_ERROR.with(|last| last.borrow().code.unwrap_or(MYSQLLEADER_OK))).unwrap_or(MYSQLLEADER_PANIC)
}

/// The rejected parameter of the last failed call on this thread, as C spells it: an argument
/// (`service_id`, `node_id`, `lease_ms`, `url`, `elector_out`) or a field of the elector's
/// configuration (`config->renew_ms`); NULL when the failure names none. Set for
/// `MYSQLLEADER_INVALID_ARGUMENT`, `MYSQLLEADER_NULL_ARGUMENT` and `MYSQLLEADER_INVALID_UTF8`,
/// and for a `MYSQLLEADER_USAGE` that names the argument at fault (`sql`, `url`).
/// Borrowed like `mysqlleader_last_error`.
#[no_mangle]
pub extern "C" fn mysqlleader_last_error_parameter() -> *const c_char {
    catch_unwind(|| LAST_ERROR.with(|last| last.borrow().parameter.as_ref().map_or(std::ptr::null(), |p| p.as_ptr())))
        .unwrap_or(std::ptr::null())
}

/// The SQLSTATE the server reported for the last failed call on this thread (`"45000"` for
/// input the procedures rejected, `"45001"` not the leader, `"45002"` access denied, `"40001"`
/// a deadlock, ...); `""` when the server reported none. Borrowed like `mysqlleader_last_error`.
#[no_mangle]
pub extern "C" fn mysqlleader_last_error_sqlstate() -> *const c_char {
    catch_unwind(|| LAST_ERROR.with(|last| last.borrow().sqlstate.as_ptr())).unwrap_or(c"".as_ptr())
}

/// For `MYSQLLEADER_NOT_LEADER`: the service's current term, as the refusal told it; 0 when
/// unknown or for any other failure.
#[no_mangle]
pub extern "C" fn mysqlleader_last_error_current_term() -> u64 {
    catch_unwind(|| LAST_ERROR.with(|last| last.borrow().current_term)).unwrap_or(0)
}

/// The server's error number (e.g. 1213 for a deadlock) when the last failed call on this
/// thread failed with `MYSQLLEADER_SERVER`, `MYSQLLEADER_AUTHENTICATION` or
/// `MYSQLLEADER_PRIVILEGE` (or `MYSQLLEADER_USAGE` when the server reported it); 0 otherwise.
#[no_mangle]
pub extern "C" fn mysqlleader_last_error_server_code() -> u32 {
    catch_unwind(|| LAST_ERROR.with(|last| u32::from(last.borrow().server_code))).unwrap_or(0)
}

/// Whether the last failed call on this thread may simply be tried again: a lost connection,
/// a timeout, a deadlock or lock wait, a Galera node out of the primary component. The failed
/// attempt's outcome is unknown or "not done"; never assume it took effect.
#[no_mangle]
pub extern "C" fn mysqlleader_last_error_is_transient() -> bool {
    catch_unwind(|| LAST_ERROR.with(|last| last.borrow().transient)).unwrap_or(false)
}


/// Classifies an error the server sent on a connection of the application's own driver (the
/// fence of the bindings: `CALL assert_leader` run through JDBC, go-sql-driver or a DB-API
/// driver) exactly as the library classifies the errors of its own calls, and records it as
/// this thread's last error: read it with the `mysqlleader_last_error*` functions. So every
/// language reads the procedures' refusals by one rule (the core's), never by its own.
///
/// `server_code` is the server's error number (31000 to 31004 for the procedures' refusals,
/// one per kind: `mysqlleader::error::refusal`; 1644 from the routines of an earlier release),
/// `sqlstate` its SQLSTATE (NULL or `""` when the driver gave none: PyMySQL and mysqlclient
/// keep none; it is then the one the procedures raise with that number, and for a 1644 with a
/// message that begins `mysqlleader: ` read by the words those put first: `not the leader`
/// 45001, `access denied` 45002, else 45000), `message` its text (NUL-terminated; bytes that are not UTF-8 are replaced). Returns the code the library gives that error:
/// `MYSQLLEADER_NOT_LEADER` for 45001 (with its current term), `MYSQLLEADER_ACCESS_DENIED` for
/// 45002, `MYSQLLEADER_INVALID_ARGUMENT` for a rejected input (with the parameter's name),
/// `MYSQLLEADER_USAGE` for a call the session's state does not allow (a fence outside a
/// transaction, a call inside XA), `MYSQLLEADER_NOT_MIGRATED`, `MYSQLLEADER_PRIVILEGE`,
/// `MYSQLLEADER_SERVER` (transient or not: `mysqlleader_last_error_is_transient`); never
/// `MYSQLLEADER_OK`. `MYSQLLEADER_NULL_ARGUMENT` when `message` is NULL.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_error_classify(server_code: u32, sqlstate: *const c_char, message: *const c_char) -> mysqlleader_result {
    boundary(|| {
        if message.is_null() {
            return Err(Failure::null("message"));
        }
        // SAFETY: non-NULL string arguments are NUL-terminated (the conventions).
        let message = unsafe { CStr::from_ptr(message) }.to_string_lossy();
        let mut state = if sqlstate.is_null() { String::new() } else { unsafe { CStr::from_ptr(sqlstate) }.to_string_lossy().into_owned() };
        let code = u16::try_from(server_code).unwrap_or(u16::MAX);
        if state.is_empty() && refusal::is_refusal(code) && message.starts_with("mysqlleader: ") {
            state = refusal::sqlstate_of(code).unwrap_or_default().into();
        }
        if state.is_empty() && code == refusal::SIGNAL {
            if let Some(rest) = message.strip_prefix("mysqlleader: ") {
                state = if rest.starts_with("not the leader") { "45001" } else if rest.starts_with("access denied") { "45002" } else { "45000" }.into();
            }
        }
        let mut failure = Failure::from(Error::from_server(code, &state, &message));
        // What the server said stays with the error, whatever kind it is.
        if failure.sqlstate.is_none() && !state.is_empty() {
            failure.sqlstate = Some(state);
        }
        if failure.server_code == 0 {
            failure.server_code = code;
        }
        Err(failure)
    })
}

/// The name of a result code as spelled in the header (`"MYSQLLEADER_NOT_LEADER"`), or
/// `"MYSQLLEADER_UNKNOWN_RESULT"` for a number this version does not know. A static string,
/// never NULL, never to be freed.
#[no_mangle]
pub extern "C" fn mysqlleader_result_name(result: u32) -> *const c_char {
    mysqlleader_result::ALL
        .iter()
        .find(|r| **r as u32 == result)
        .map_or(c"MYSQLLEADER_UNKNOWN_RESULT", |r| r.name())
        .as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last() -> String {
        unsafe { CStr::from_ptr(mysqlleader_last_error()) }.to_str().unwrap().to_string()
    }

    #[test]
    fn a_drivers_error_is_classified_as_the_librarys_own() {
        let classify = |code: u32, state: &CStr, message: &CStr| unsafe { mysqlleader_error_classify(code, state.as_ptr(), message.as_ptr()) };
        assert_eq!(classify(1644, c"45001", c"mysqlleader: not the leader at term 3 (current term 4)"), MYSQLLEADER_NOT_LEADER);
        assert_eq!(mysqlleader_last_error_current_term(), 4);
        assert_eq!(unsafe { CStr::from_ptr(mysqlleader_last_error_sqlstate()) }, c"45001");
        assert_eq!(classify(1644, c"45000", c"mysqlleader: term must not be NULL"), MYSQLLEADER_INVALID_ARGUMENT);
        assert_eq!(unsafe { CStr::from_ptr(mysqlleader_last_error_parameter()) }, c"term");
        assert_eq!(unsafe { CStr::from_ptr(mysqlleader_last_error_sqlstate()) }, c"45000");
        assert_eq!(classify(1644, c"45000", c"mysqlleader: assert_leader cannot run inside an XA transaction (XA PREPARE would drop its locks)"), MYSQLLEADER_USAGE);
        assert!(mysqlleader_last_error_parameter().is_null());
        assert_eq!((mysqlleader_last_error_server_code(), unsafe { CStr::from_ptr(mysqlleader_last_error_sqlstate()) }), (1644, c"45000"));
        assert_eq!(classify(1644, c"45002", c"mysqlleader: access denied: account 'a' may not act on service 'b'"), MYSQLLEADER_ACCESS_DENIED);
        assert_eq!(classify(1213, c"40001", c"Deadlock found when trying to get lock"), MYSQLLEADER_SERVER);
        assert!(mysqlleader_last_error_is_transient());
        assert_eq!(classify(1305, c"42000", c"PROCEDURE db.assert_leader does not exist"), MYSQLLEADER_NOT_MIGRATED);
        assert_eq!(unsafe { mysqlleader_error_classify(1370, std::ptr::null(), c"execute command denied".as_ptr()) }, MYSQLLEADER_PRIVILEGE);
        // Without a SQLSTATE (PyMySQL, mysqlclient): the procedures' first words.
        let no_state = |message: &CStr| unsafe { mysqlleader_error_classify(1644, std::ptr::null(), message.as_ptr()) };
        assert_eq!(no_state(c"mysqlleader: not the leader at term 3 (current term 5)"), MYSQLLEADER_NOT_LEADER);
        assert_eq!((mysqlleader_last_error_current_term(), unsafe { CStr::from_ptr(mysqlleader_last_error_sqlstate()) }), (5, c"45001"));
        assert_eq!(no_state(c"mysqlleader: access denied: account 'x' may not act on service 's'"), MYSQLLEADER_ACCESS_DENIED);
        assert_eq!(no_state(c"mysqlleader: assert_leader needs an open transaction (START TRANSACTION first)"), MYSQLLEADER_USAGE);
        assert_eq!(no_state(c"mysqlleader: lease_ms must be between 1 and 86400000 (got 0)"), MYSQLLEADER_INVALID_ARGUMENT);
        assert_eq!(no_state(c"some other SIGNAL"), MYSQLLEADER_SERVER);
        assert_eq!(unsafe { mysqlleader_error_classify(1644, c"45001".as_ptr(), std::ptr::null()) }, MYSQLLEADER_NULL_ARGUMENT);
        assert_eq!(unsafe { CStr::from_ptr(mysqlleader_last_error_parameter()) }, c"message");
    }

    #[test]
    fn numbers_are_stable() {
        let numbers: Vec<u32> = mysqlleader_result::ALL.iter().map(|r| *r as u32).collect();
        assert_eq!(numbers, (0..16).collect::<Vec<u32>>());
        assert_eq!(MYSQLLEADER_NOT_LEADER as u32, 4);
        assert_eq!(MYSQLLEADER_PANIC as u32, 10);
    }

    #[test]
    fn boundary_records_and_clears_the_last_error() {
        let rc = boundary(|| Err(Failure::from(Error::Connection { message: "mysql://u:hunter2@h/db refused".into() })));
        assert_eq!(rc, MYSQLLEADER_CONNECTION);
        assert!(last().contains("mysql://u:***@h/db"), "{}", last());
        assert!(!last().contains("hunter2"));
        assert!(mysqlleader_last_error_is_transient());
        assert_eq!(mysqlleader_last_error_code(), MYSQLLEADER_CONNECTION);
        assert_eq!(boundary(|| Ok(())), MYSQLLEADER_OK);
        assert_eq!(last(), "");
        assert_eq!(mysqlleader_last_error_code(), MYSQLLEADER_OK);
    }

    #[test]
    fn the_last_error_carries_its_fields() {
        let param = || unsafe { CStr::from_ptr(mysqlleader_last_error_parameter()) }.to_str().unwrap().to_string();
        let state = || unsafe { CStr::from_ptr(mysqlleader_last_error_sqlstate()) }.to_str().unwrap().to_string();
        let rc = boundary(|| Err(Failure::from(Error::from_server(1644, "45000", "mysqlleader: lease_ms must be between 1 and 86400000 (got 0)"))));
        assert_eq!(rc, MYSQLLEADER_INVALID_ARGUMENT);
        assert_eq!(param(), "lease_ms");
        assert_eq!(last(), "mysqlleader: lease_ms must be between 1 and 86400000 (got 0)", "no doubled prefix");
        let rc = boundary(|| Err(Failure::from(Error::from_server(1644, "45001", "mysqlleader: not the leader at term 3 (current term 5)"))));
        assert_eq!(rc, MYSQLLEADER_NOT_LEADER);
        assert!(mysqlleader_last_error_parameter().is_null());
        assert_eq!((state(), mysqlleader_last_error_current_term()), ("45001".to_string(), 5));
        let rc = boundary(|| Err(Failure::from(Error::from_mysql(mysql_async::DriverError::StmtParamsMismatch { required: 2, supplied: 1 }.into()))));
        assert_eq!((rc, mysqlleader_last_error_is_transient()), (MYSQLLEADER_USAGE, false));
        assert_eq!(boundary(|| Err(Failure::null("elector_out"))), MYSQLLEADER_NULL_ARGUMENT);
        assert_eq!(param(), "elector_out");
        assert_eq!(boundary(|| Ok(())), MYSQLLEADER_OK);
        assert!(mysqlleader_last_error_parameter().is_null());
        assert_eq!(state(), "");
    }

    #[test]
    fn a_panic_becomes_a_code() {
        let rc = boundary(|| panic!("boom"));
        assert_eq!(rc, MYSQLLEADER_PANIC);
        assert!(last().contains("boom"));
    }

    #[test]
    fn names() {
        let name = |r: u32| unsafe { CStr::from_ptr(mysqlleader_result_name(r)) }.to_str().unwrap();
        assert_eq!(name(0), "MYSQLLEADER_OK");
        assert_eq!(name(9), "MYSQLLEADER_BUFFER_TOO_SMALL");
        assert_eq!(name(999), "MYSQLLEADER_UNKNOWN_RESULT");
    }
}
