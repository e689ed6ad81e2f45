//! The library's own tokio runtime, so that C programs need no knowledge of Rust.
//!
//! One multi-thread runtime with 2 worker threads (`mysqlleader-rt`), created on first use and
//! kept for the life of the process. The electors' background tasks and the connection pools
//! run on it; a C thread that calls a blocking function (`mysqlleader_campaign`, ...) waits in
//! `block_on` on its own thread. The workers never run C code: callbacks run on each elector's
//! own callback thread.
//!
//! Consequence for C programs: after `fork()`, the child must not call the library (the
//! runtime's threads do not exist there) — `exec` a new program instead.

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::runtime::Runtime;

use crate::error::{Error, Result};

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// Worker threads of the runtime: the work is network waits, two are plenty.
const WORKER_THREADS: usize = 2;

/// The runtime, created on first use. A failure to create it (no threads left) panics, and the
/// panic boundary turns that into `MYSQLLEADER_PANIC`; the next call tries again.
pub(crate) fn runtime() -> &'static Runtime {
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(WORKER_THREADS)
            .thread_name("mysqlleader-rt")
            .enable_all()
            .build()
            .expect("mysqlleader could not start its runtime threads")
    })
}

/// Runs `future` to completion on the calling (C) thread.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    runtime().block_on(future)
}

/// Runs `future` for at most `limit`: `None` when it did not finish in time (it is dropped
/// then). The timer is made inside the runtime, where it must live.
pub(crate) fn block_on_within<F: Future>(limit: Duration, future: F) -> Option<F::Output> {
    block_on(async move { tokio::time::timeout(limit, future).await.ok() })
}

/// Runs `future` for at most `limit`; past it the future is dropped (a connection busy with it
/// is discarded, never reused) and the result is a connection error "no answer within ...".
pub(crate) fn block_on_timeout<T>(limit: Duration, future: impl Future<Output = Result<T>>) -> Result<T> {
    block_on_within(limit, future).unwrap_or_else(|| Err(Error::timeout(limit)))
}
