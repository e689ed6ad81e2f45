//! The library's log records, handed to the host program: `mysqlleader_set_log_callback`.
//!
//! The Rust core logs with `tracing` (a failed login, an unreachable server, a missing schema:
//! once per change of condition; leadership started and stopped). A C, Python or Go program
//! gets those records through one callback, on whatever thread logged them: Python routes them
//! to `logging` (logger `mysqlleader`), Go to `log/slog`. A small `tracing` subscriber of our
//! own, installed as the process's global default the first time a callback is set.

use std::ffi::{c_char, c_void, CString};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

use super::result::{boundary, mysqlleader_result, FfiResult, Failure};

/// Receives one log record: `level` 1 error, 2 warn, 3 info, 4 debug, 5 trace; `target` the
/// module (`mysqlleader::elector::task`); `message` the text with its fields (`key=value`).
/// Both strings are valid during the call only. Called on the library's threads, one record at
/// a time per thread; it must not call back into mysqlleader and should return promptly.
pub type mysqlleader_log_callback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, level: u32, target: *const c_char, message: *const c_char)>;

struct Sink {
    function: unsafe extern "C" fn(*mut c_void, u32, *const c_char, *const c_char),
    userdata: usize,
}

static SINK: Mutex<Option<Sink>> = Mutex::new(None);
/// Records above this level (a larger number) are dropped before they are formatted; 0: none.
static MAX_LEVEL: AtomicU8 = AtomicU8::new(0);
static INSTALLED: OnceLock<bool> = OnceLock::new();
static NEXT_SPAN: AtomicUsize = AtomicUsize::new(1);

fn number(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

struct Forward;

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let text = format!("{value:?}");
            self.0.insert_str(0, &text);
        } else {
            let _ = write!(self.0, " {}={:?}", field.name(), value);
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.insert_str(0, value);
        } else {
            let _ = write!(self.0, " {}={}", field.name(), value);
        }
    }
}

impl Subscriber for Forward {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("mysqlleader") && number(metadata.level()) <= MAX_LEVEL.load(Ordering::Relaxed)
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(NEXT_SPAN.fetch_add(1, Ordering::Relaxed) as u64)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        let text = crate::error::redact(&fields.0);
        let (Ok(target), Ok(message)) = (CString::new(event.metadata().target()), CString::new(text.replace('\0', "\\0"))) else {
            return;
        };
        let sink = SINK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(s) = sink.as_ref() {
            let level = u32::from(number(event.metadata().level()));
            // A panic cannot unwind into C; the caller's function is called as documented.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
                (s.function)(s.userdata as *mut c_void, level, target.as_ptr(), message.as_ptr())
            }));
        }
    }
}

/// Routes the library's log records at `max_level` or more severe (1 error … 5 trace) to
/// `callback(userdata, level, target, message)`; `callback` NULL (or `max_level` 0) stops them.
/// A later call replaces the earlier callback. The first call installs the library's log
/// subscriber as the process's global `tracing` default: `MYSQLLEADER_INVALID_STATE` when a
/// Rust program in the same process installed one already (its records go there instead).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_set_log_callback(userdata: *mut c_void, callback: mysqlleader_log_callback, max_level: u32) -> mysqlleader_result {
    boundary(|| set(userdata, callback, max_level))
}

fn set(userdata: *mut c_void, callback: mysqlleader_log_callback, max_level: u32) -> FfiResult {
    if max_level > 5 {
        return Err(Failure::invalid("max_level", format!("max_level must be 0 to 5 (got {max_level})")));
    }
    let installed = *INSTALLED.get_or_init(|| tracing::subscriber::set_global_default(Forward).is_ok());
    if !installed {
        return Err(Failure::state("another tracing subscriber is the process's global default"));
    }
    let mut sink = SINK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    match callback {
        Some(function) if max_level > 0 => {
            *sink = Some(Sink { function, userdata: userdata as usize });
            MAX_LEVEL.store(max_level as u8, Ordering::Relaxed);
        }
        _ => {
            *sink = None;
            MAX_LEVEL.store(0, Ordering::Relaxed);
        }
    }
    tracing::callsite::rebuild_interest_cache();
    Ok(())
}
