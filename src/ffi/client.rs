//! `mysqlleader_client`: a connection pool for one database, made from a URL; migration and the
//! installation script.

use std::ffi::c_char;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mysql_async::Pool;

use super::result::{boundary, boundary_void, mysqlleader_result, FfiResult, Failure};
use super::runtime::{block_on_timeout, block_on_within, runtime};
use super::strings::{arg_out, arg_ref, arg_str, owned_string, write_out};

/// The request timeout of a new client: the longest one call may take before it fails with
/// `MYSQLLEADER_CONNECTION`.
pub const MYSQLLEADER_DEFAULT_REQUEST_TIMEOUT_MS: u64 = 5_000;
/// The longest `mysqlleader_migrate` may take once connected (it waits up to 60 s for another
/// process's migration to finish first).
pub const MYSQLLEADER_MIGRATE_TIMEOUT_MS: u64 = 120_000;

/// A pool of connections to one database, made by `mysqlleader_client_new` from a URL and
/// released by `mysqlleader_client_free`. Connections open on first use, not in `_new`.
///
/// A client may be used from any number of threads at once. Electors and transactions made
/// from it keep the pool alive: the client may be freed before them.
pub struct mysqlleader_client {
    pub(crate) inner: Arc<ClientInner>,
}

/// The pool, shared by the client handle and every elector and transaction made from it; the
/// last one to go closes the connections.
pub(crate) struct ClientInner {
    pub pool: Pool,
    request_timeout_ms: AtomicU64,
    /// Set once the pool was closed by [`ClientInner::release_within`].
    disconnected: AtomicBool,
    /// The sessions the client's plain electors share (src/ffi/shared.rs).
    pub(super) shared: super::shared::SharedSessions,
}

impl ClientInner {
    pub fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.request_timeout_ms.load(Ordering::Relaxed))
    }

    /// Runs `call` (on the pool) within the request timeout; a connection error names the
    /// server, `host:port` (the procedures, generic over connections, cannot).
    pub fn block_on<T>(&self, call: impl std::future::Future<Output = crate::Result<T>>) -> crate::Result<T> {
        block_on_timeout(self.request_timeout(), call).map_err(|e| e.on_pool(&self.pool))
    }

    /// Drops one user of the pool; when it was the last, closes the idle connections, waiting
    /// for that at most `limit` (the rest goes on in the background). An elector's close uses
    /// it to stay within its own request timeout.
    pub fn release_within(inner: Arc<ClientInner>, limit: Duration) {
        if let Some(inner) = Arc::into_inner(inner) {
            inner.disconnect_within(limit);
            inner.disconnected.store(true, Ordering::Relaxed); // no second wait in Drop
        }
    }

    /// Closes the pool's connections on the runtime, waiting at most `limit` for it. Runs on a C
    /// thread or an elector's callback thread, never on a runtime worker.
    fn disconnect_within(&self, limit: Duration) {
        let pool = self.pool.clone();
        // A destructor must not unwind (it may run during another unwind): contain any panic.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let closing = runtime().spawn(pool.disconnect());
            block_on_within(limit, closing)
        }));
    }
}

impl Drop for ClientInner {
    /// Closes the idle connections politely, waiting at most the request timeout (a server
    /// that hangs: the close goes on in the background).
    fn drop(&mut self) {
        if !self.disconnected.load(Ordering::Relaxed) {
            self.disconnect_within(self.request_timeout());
        }
    }
}

/// Makes a client for the database of `url` (`mysql://user:password@host:port/database`),
/// without connecting yet: a server that is down is reported by the first call that needs it.
/// The request timeout starts at `MYSQLLEADER_DEFAULT_REQUEST_TIMEOUT_MS`.
///
/// Errors: `MYSQLLEADER_NULL_ARGUMENT`, `MYSQLLEADER_INVALID_UTF8`, `MYSQLLEADER_INVALID_ARGUMENT`
/// (a malformed URL; the message never shows the password).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_client_new(url: *const c_char, client_out: *mut *mut mysqlleader_client) -> mysqlleader_result {
    boundary(|| {
        let client_out = arg_out(client_out, "client_out")?;
        // SAFETY: the conventions.
        let url = unsafe { arg_str(url, "url") }?;
        let pool = crate::pool_from_url(url)?;
        let inner = Arc::new(ClientInner {
            pool,
            request_timeout_ms: AtomicU64::new(MYSQLLEADER_DEFAULT_REQUEST_TIMEOUT_MS),
            disconnected: AtomicBool::new(false),
            shared: Default::default(),
        });
        let client = Box::new(mysqlleader_client { inner });
        // SAFETY: checked non-NULL above.
        unsafe { write_out(client_out, Box::into_raw(client)) };
        Ok(())
    })
}

/// Sets the longest time a call on this client may take, 1 to 86,400,000 ms, before it fails
/// with `MYSQLLEADER_CONNECTION` ("no answer within ..."), so a caller never hangs on a dead
/// server. Applies to the one-shot calls, transactions begun afterwards, and closing idle
/// connections in `_free`. Electors have their own timeout in their configuration.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_client_set_request_timeout(client: *const mysqlleader_client, timeout_ms: u64) -> mysqlleader_result {
    boundary(|| {
        // SAFETY: the conventions.
        let client = unsafe { arg_ref(client, "client") }?;
        if timeout_ms == 0 || timeout_ms > super::MYSQLLEADER_LEASE_MS_MAX {
            return Err(Failure::invalid("timeout_ms", format!("timeout_ms must be between 1 and 86400000, got {timeout_ms}")));
        }
        client.inner.request_timeout_ms.store(timeout_ms, Ordering::Relaxed);
        Ok(())
    })
}

/// Releases the client. Idle connections are closed once no elector or transaction made from
/// it uses the pool any more (waiting at most the request timeout). `mysqlleader_client_free(NULL)`
/// does nothing.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_client_free(client: *mut mysqlleader_client) {
    if client.is_null() {
        return;
    }
    boundary_void(|| {
        // SAFETY: `client` came from mysqlleader_client_new and is freed once (the conventions).
        drop(unsafe { Box::from_raw(client) });
    });
}

/// Installs or upgrades the election schema (tables, procedures, the expiry event) in the
/// client's database. `*applied_out` (may be NULL) receives the number of migrations applied
/// now: 0 when the schema was already current. Safe to call from many processes at once.
///
/// A dead server fails within the request timeout; the migration itself may take up to
/// `MYSQLLEADER_MIGRATE_TIMEOUT_MS`. Errors: `MYSQLLEADER_CONNECTION`, `MYSQLLEADER_MIGRATION`,
/// `MYSQLLEADER_SERVER`.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_migrate(client: *const mysqlleader_client, applied_out: *mut usize) -> mysqlleader_result {
    boundary(|| {
        // SAFETY: the conventions.
        let client = unsafe { arg_ref(client, "client") }?;
        let pool = client.inner.pool.clone();
        // 1. Reach the server within the request timeout (the connection then stays pooled).
        block_on_timeout(client.inner.request_timeout(), async {
            pool.get_conn().await.map(drop).map_err(|e| crate::Error::from_pool(&pool, e))
        })?;
        // 2. Migrate.
        let applied = block_on_timeout(Duration::from_millis(MYSQLLEADER_MIGRATE_TIMEOUT_MS), crate::migrate(&pool))?;
        // SAFETY: applied_out is NULL or writable.
        unsafe { write_out(applied_out, applied.len()) };
        Ok(())
    })
}

/// The whole installation as one script for the `mysql`/`mariadb` command-line client (what
/// `mysqlleader sql` prints), for a DBA to review and apply. `*sql_out` receives a string the
/// library allocated: free it with `mysqlleader_string_free`.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_install_sql(sql_out: *mut *mut c_char) -> mysqlleader_result {
    boundary(|| -> FfiResult {
        let sql_out = arg_out(sql_out, "sql_out")?;
        let text = crate::install_sql();
        // SAFETY: checked non-NULL above.
        unsafe { write_out(sql_out, owned_string(text)) };
        Ok(())
    })
}
