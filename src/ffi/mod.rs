//! The C ABI of mysqlleader: every `extern "C"` item of the crate lives in this module tree,
//! and nothing outside it knows that C exists.
//!
//! `include/mysqlleader.h` is generated from these files by cbindgen (`cbindgen.toml` at the
//! repository root); `tests/ffi_header.rs` fails when the committed header drifts. The
//! conventions every function follows are written once in `docs/c-api.md`; in short:
//!
//! * symbols are `mysqlleader_*`, constants `MYSQLLEADER_*`;
//! * every fallible function returns a [`mysqlleader_result`] (stable numbers, `MYSQLLEADER_OK`
//!   is 0) and records a thread-local message readable with [`mysqlleader_last_error`];
//! * results go through out-pointers, written only on success;
//! * handles are opaque, made by `*_new`/`*_begin` and released by `*_free`; `*_free(NULL)` is a
//!   no-op;
//! * every exported body runs inside a panic boundary; a NULL pointer argument returns
//!   `MYSQLLEADER_NULL_ARGUMENT`, invalid UTF-8 `MYSQLLEADER_INVALID_UTF8`, anything out of range
//!   `MYSQLLEADER_INVALID_ARGUMENT`;
//! * the library runs its own small tokio runtime ([`runtime`]); C callers need no knowledge of
//!   Rust.
//!
//! Submodules, one concept each:
//! * [`result`]: the result enum, the thread-local last error and the panic boundary;
//! * [`strings`]: reading C arguments and writing strings back;
//! * [`runtime`]: the library's tokio runtime;
//! * [`client`]: the connection pool handle, migration and the installation script;
//! * [`calls`]: the one-shot procedure calls;
//! * [`txn`]: transactions on a client, fenced with `assert_leader`;
//! * [`rows`]: the rows a statement of a transaction returned;
//! * [`elector`]: the elector handle and its callback thread.
#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)] // the safety rules are the conventions in docs/c-api.md

// The order of these modules is the order of the header's sections.
pub mod result;

pub mod strings;

pub mod runtime;

pub mod client;

pub mod calls;

pub mod txn;

pub mod rows;

pub mod elector;

// The sessions a client's plain electors share.
mod shared;

// Where the C callbacks run: one delivery thread per plain elector, one per session.
mod events;

/// `mysqlleader_session`: many electors of one node over one connection and one renew.
pub mod session;

/// The log callback: the library's records in the host program's logging.
pub mod log;

use std::ffi::c_char;

pub use calls::*;
pub use client::*;
pub use elector::*;
pub use result::*;
pub use session::*;
pub use strings::*;
pub use rows::*;
pub use txn::*;

// The version macros of the header (MYSQLLEADER_VERSION_MAJOR/MINOR/PATCH, MYSQLLEADER_VERSION)
// are written from Cargo.toml's version by tests/ffi_header.rs when it generates the header.

/// Longest service or node id the procedures accept, in characters.
pub const MYSQLLEADER_ID_MAX_CHARS: usize = 128;
/// Bytes a caller's buffer needs to hold any id with its terminating NUL: 128 characters of
/// UTF-8 take at most 512 bytes.
pub const MYSQLLEADER_ID_BUFFER_SIZE: usize = 513;
/// Shortest lease, in milliseconds.
pub const MYSQLLEADER_LEASE_MS_MIN: u64 = 1;
/// Longest lease, in milliseconds (one day).
pub const MYSQLLEADER_LEASE_MS_MAX: u64 = 86_400_000;

/// The version of the library that is running, e.g. `"0.1.0"`: a static string, never NULL,
/// never to be freed. Compare with the header's `MYSQLLEADER_VERSION` to detect a mismatch
/// between the header a program was compiled with and the library it runs with.
#[no_mangle]
pub extern "C" fn mysqlleader_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_match_the_rust_library() {
        assert_eq!(MYSQLLEADER_ID_MAX_CHARS, crate::config::MAX_ID_CHARS);
        assert_eq!(MYSQLLEADER_ID_BUFFER_SIZE, crate::config::MAX_ID_CHARS * 4 + 1);
        assert_eq!(MYSQLLEADER_LEASE_MS_MIN as u128, crate::config::MIN_LEASE.as_millis());
        assert_eq!(MYSQLLEADER_LEASE_MS_MAX as u128, crate::config::MAX_LEASE.as_millis());
        let v = unsafe { std::ffi::CStr::from_ptr(mysqlleader_version()) };
        assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    }
}
