//! Connection URLs: `mysql://user:password@host:port/database?param=value&...`, with TLS under
//! the MySQL client's names, and a connection that goes where the URL says.
//!
//! | parameter | meaning |
//! | --- | --- |
//! | `ssl-mode=DISABLED` | no TLS (the default when no `ssl-*` parameter is given; `PREFERRED` is refused: it falls back to plaintext silently) |
//! | `ssl-mode=REQUIRED` | TLS, the server's certificate not checked (encryption only) |
//! | `ssl-mode=VERIFY_CA` | TLS, the certificate chain checked against `ssl-ca` (or the built-in web roots), not the host name |
//! | `ssl-mode=VERIFY_IDENTITY` | TLS, the chain and the host name checked |
//! | `ssl-ca=PATH` | the CA certificate(s), PEM; given alone it means `VERIFY_CA` |
//! | `ssl-cert=PATH`, `ssl-key=PATH` | a client certificate and its key, PEM (for `REQUIRE X509` accounts); both or neither |
//! | `prefer_socket=true` or `socket=PATH` | allow a Unix socket; otherwise a TCP URL always connects over TCP |
//!
//! Paths are percent-encoded (`%2F` for `/`). Every other parameter is `mysql_async`'s.
//! Errors name the parameter, and never contain the password.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use mysql_async::{ClientIdentity, Metrics, Opts, OptsBuilder, Pool, SslOpts};

use crate::error::{redact, Error, Result};

/// What `ssl-mode` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disabled,
    Required,
    VerifyCa,
    VerifyIdentity,
}

impl SslMode {
    fn parse(text: &str) -> Result<SslMode> {
        match text.to_ascii_uppercase().as_str() {
            "DISABLED" => Ok(SslMode::Disabled),
            "REQUIRED" => Ok(SslMode::Required),
            "VERIFY_CA" => Ok(SslMode::VerifyCa),
            "VERIFY_IDENTITY" => Ok(SslMode::VerifyIdentity),
            // The MySQL client's default: TLS when the server offers it, else plaintext without a
            // word, which an attacker on the path can force. Not offered: say what to use.
            "PREFERRED" => Err(Error::invalid("ssl-mode", "ssl-mode=PREFERRED is not supported: it falls back to plaintext \
                silently; use REQUIRED (or VERIFY_IDENTITY with ssl-ca) for TLS, or DISABLED")),
            _ => Err(Error::invalid("ssl-mode", format!(
                "ssl-mode must be DISABLED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY (got {text:?})"))),
        }
    }
}

/// The TLS part of a URL, parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Tls {
    mode: Option<SslMode>,
    ca: Option<PathBuf>,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
}

/// Builds a connection pool from a URL (see the module documentation for the parameters). The
/// password never appears in an error.
///
/// Unless the URL sets `reset_connection` itself, pooled connections are *not* reset when they
/// return to the pool (`mysql_async` still rolls back an open transaction): a reset empties the
/// server's caches of prepared statements and procedures, and measured 4× slower per call
/// (docs/benchmarks.md). Add `?reset_connection=true` if your own use of the pool changes
/// session state that must not leak between uses.
pub fn pool_from_url(url: &str) -> Result<Pool> {
    let opts = opts_from_url(url)?;
    let pool = Pool::new(opts.clone());
    remember_server(&pool, server_of(&opts));
    Ok(pool)
}

/// The server of a connection's options as errors name it: `host:port` (`[v6]:port`), never
/// the user or the password.
pub(crate) fn server_of(opts: &Opts) -> String {
    let host = opts.ip_or_hostname();
    if host.contains(':') {
        format!("[{host}]:{}", opts.tcp_port())
    } else {
        format!("{host}:{}", opts.tcp_port())
    }
}

/// The servers of the pools [`pool_from_url`] made, so that a failure to connect names its
/// server (mysql_async's error does not, and a pool does not tell its options). A pool is known
/// by its metrics, which it keeps for its whole life; the weak reference keeps that allocation,
/// so its address is not reused while the entry is there. Entries of dropped pools are removed
/// when the next pool is made.
static SERVERS: Mutex<Vec<(Weak<Metrics>, String)>> = Mutex::new(Vec::new());

fn remember_server(pool: &Pool, server: String) {
    let metrics = pool.metrics();
    let mut servers = SERVERS.lock().unwrap_or_else(PoisonError::into_inner);
    servers.retain(|(m, _)| m.strong_count() > 0);
    servers.push((Arc::downgrade(&metrics), server));
}

/// The server of a pool made by [`pool_from_url`]; `None` for a pool made otherwise.
pub(crate) fn server_of_pool(pool: &Pool) -> Option<String> {
    let metrics = pool.metrics();
    let servers = SERVERS.lock().unwrap_or_else(PoisonError::into_inner);
    servers.iter().find(|(m, _)| std::ptr::eq(m.as_ptr(), Arc::as_ptr(&metrics))).map(|(_, s)| s.clone())
}

/// The connection options of a URL: [`pool_from_url`] without the pool.
pub fn opts_from_url(url: &str) -> Result<Opts> {
    let (rest, tls) = split_tls(url)?;
    let mut opts = Opts::from_url(&rest).map_err(|e| Error::invalid("url", redact(&e.to_string())))?;
    // The election's objects live in the URL's database: without one every call would fail
    // with 1046 (no database selected), which no retry mends.
    if opts.db_name().map_or(true, str::is_empty) {
        return Err(Error::invalid(
            "url",
            format!("invalid url: {} names no database; write mysql://user:password@host:port/database", redact(&rest)),
        ));
    }
    let mut builder = OptsBuilder::from_opts(opts.clone());
    // The URL means what it says: no silent move from TCP to the server's Unix socket (which
    // would bypass a proxy, a sidecar or a TLS terminator listening on the URL's port).
    if !has_param(&rest, "prefer_socket") && !has_param(&rest, "socket") {
        builder = builder.prefer_socket(false);
    }
    if !has_param(&rest, "reset_connection") {
        let pool_opts = opts.pool_opts().clone().with_reset_connection(false);
        builder = builder.pool_opts(pool_opts);
    }
    // The library's sessions run with autocommit on, whatever the server's global default: each
    // procedure call is then a transaction of its own, and only a fenced transaction (which the
    // library opens and ends itself) spans statements. With a global `autocommit = 0` a pooled
    // connection would otherwise keep the snapshot (and the locks) of its last call open.
    // `setup` runs on every new connection and again after every reset.
    let mut setup = vec!["SET autocommit = 1".to_string()];
    setup.extend(opts.setup().iter().cloned());
    builder = builder.setup(setup);
    if let Some(ssl) = ssl_opts(&tls)? {
        builder = builder.ssl_opts(Some(ssl));
    } else if tls.mode == Some(SslMode::Disabled) {
        builder = builder.ssl_opts(None::<SslOpts>);
    }
    opts = builder.into();
    Ok(opts)
}

/// Takes the `ssl-*` parameters out of `url`; returns the rest of the URL and what they say.
fn split_tls(url: &str) -> Result<(String, Tls)> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), Tls::default()));
    };
    let mut tls = Tls::default();
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decoded = || percent_decode(value, name);
        match name {
            "ssl-mode" => tls.mode = Some(SslMode::parse(&decoded()?)?),
            "ssl-ca" => tls.ca = Some(readable(name, decoded()?)?),
            "ssl-cert" => tls.cert = Some(readable(name, decoded()?)?),
            "ssl-key" => tls.key = Some(readable(name, decoded()?)?),
            _ => kept.push(pair),
        }
    }
    let rest = if kept.is_empty() { base.to_string() } else { format!("{base}?{}", kept.join("&")) };
    Ok((rest, tls))
}

/// The `SslOpts` for the URL's TLS parameters; `None` for no TLS.
fn ssl_opts(tls: &Tls) -> Result<Option<SslOpts>> {
    let mode = match (tls.mode, &tls.ca, &tls.cert) {
        (Some(mode), _, _) => mode,
        // Given a CA or a client certificate alone, the MySQL client verifies the CA.
        (None, Some(_), _) | (None, _, Some(_)) => SslMode::VerifyCa,
        (None, None, None) => return Ok(None),
    };
    if mode == SslMode::Disabled {
        return Ok(None);
    }
    let mut ssl = SslOpts::default();
    if let Some(ca) = &tls.ca {
        ssl = ssl.with_root_certs(vec![ca.clone().into()]).with_disable_built_in_roots(true);
    }
    ssl = match mode {
        SslMode::Required => ssl.with_danger_accept_invalid_certs(true).with_danger_skip_domain_validation(true),
        SslMode::VerifyCa => ssl.with_danger_skip_domain_validation(true),
        SslMode::VerifyIdentity | SslMode::Disabled => ssl,
    };
    match (&tls.cert, &tls.key) {
        (Some(cert), Some(key)) => {
            ssl = ssl.with_client_identity(Some(ClientIdentity::new(cert.clone().into(), key.clone().into())));
        }
        (Some(_), None) => return Err(Error::invalid("ssl-key", "ssl-cert needs ssl-key (the client certificate's private key)")),
        (None, Some(_)) => return Err(Error::invalid("ssl-cert", "ssl-key needs ssl-cert (the client certificate)")),
        (None, None) => {}
    }
    Ok(Some(ssl))
}

/// A file the TLS set-up will read: it must be readable now and hold what the parameter needs,
/// so that a wrong path or a file mixed up with another is an error that names the parameter,
/// not a failed handshake later. A text file is PEM: `ssl-ca` and `ssl-cert` need a
/// `CERTIFICATE` block, `ssl-key` an unencrypted `PRIVATE KEY` block (PKCS#8, RSA or EC). A
/// binary file is DER, passed on as it is.
fn readable(name: &str, path: String) -> Result<PathBuf> {
    let bad = |what: String| Err(Error::invalid(name, format!("{name}: {path:?} {what}")));
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) => return Err(Error::invalid(name, format!("{name}: cannot read {path:?}: {e}"))),
    };
    if bytes.is_empty() {
        return bad("is empty".into());
    }
    let Ok(text) = std::str::from_utf8(&bytes) else { return Ok(PathBuf::from(path)) };
    match name {
        "ssl-key" if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") => {
            bad("holds an encrypted key, which the TLS library cannot use: decrypt it (openssl pkey -in KEY -out PLAIN)".into())
        }
        "ssl-key" if !text.contains("PRIVATE KEY-----") => bad("holds no private key (want PEM: -----BEGIN PRIVATE KEY-----)".into()),
        "ssl-ca" | "ssl-cert" if !text.contains("-----BEGIN CERTIFICATE-----") => {
            bad("holds no certificate (want PEM: -----BEGIN CERTIFICATE-----)".into())
        }
        _ => Ok(PathBuf::from(path)),
    }
}

fn has_param(url: &str, name: &str) -> bool {
    url.split_once('?').is_some_and(|(_, q)| q.split('&').any(|p| p.split('=').next() == Some(name)))
}

/// `%XX` decoded (and `+` kept as is, as in a path); the parameter is named on a bad escape.
fn percent_decode(value: &str, name: &str) -> Result<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = value.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            match hex {
                Some(b) => {
                    out.push(b);
                    i += 3;
                }
                None => return Err(Error::invalid(name, format!("{name}: a bad percent escape at byte {i}"))),
            }
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| Error::invalid(name, format!("{name}: not UTF-8 after percent-decoding")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_without_a_database_is_an_invalid_url() {
        for url in ["mysql://app:secret@db:3306", "mysql://app:secret@db:3306/", "mysql://app:secret@db/?ssl-mode=DISABLED"] {
            let e = opts_from_url(url).unwrap_err();
            assert_eq!(e.parameter(), Some("url"), "{url}: {e}");
            assert!(e.to_string().contains("names no database") && !e.to_string().contains("secret"), "{e}");
        }
        assert!(opts_from_url("mysql://app:secret@db:3306/app").is_ok());
    }

    #[test]
    fn tls_parameters_are_taken_out_and_the_rest_kept() {
        let (rest, tls) = split_tls("mysql://u:p@h:1/db?ssl-mode=required&pool_min=1").unwrap();
        assert_eq!(rest, "mysql://u:p@h:1/db?pool_min=1");
        assert_eq!(tls.mode, Some(SslMode::Required));
        let (rest, tls) = split_tls("mysql://u:p@h/db").unwrap();
        assert_eq!((rest.as_str(), tls), ("mysql://u:p@h/db", Tls::default()));
    }

    #[test]
    fn bad_tls_parameters_name_themselves() {
        let name = |url: &str| opts_from_url(url).unwrap_err().parameter().map(str::to_string);
        assert_eq!(name("mysql://u:p@h/db?ssl-mode=SOMETIMES").as_deref(), Some("ssl-mode"));
        let preferred = opts_from_url("mysql://u:p@h/db?ssl-mode=preferred").unwrap_err();
        assert_eq!(preferred.parameter(), Some("ssl-mode"));
        assert!(preferred.to_string().contains("use REQUIRED"), "{preferred}");
        assert_eq!(name("mysql://u:p@h/db?ssl-ca=%2Fno%2Fsuch%2Ffile").as_deref(), Some("ssl-ca"));
        assert_eq!(name("mysql://u:p@h/db?ssl-ca=%zz").as_deref(), Some("ssl-ca"));
        assert_eq!(name("mysql://u:secret@h/db?what=1").as_deref(), Some("url"));
        assert!(!opts_from_url("mysql://u:secret@h/db?what=1").unwrap_err().to_string().contains("secret"));
        let cert = std::env::current_exe().unwrap().display().to_string();
        assert_eq!(name(&format!("mysql://u:p@h/db?ssl-cert={cert}")).as_deref(), Some("ssl-key"));
    }

    #[test]
    fn tls_files_must_hold_what_their_parameter_needs() {
        let dir = std::env::temp_dir().join(format!("mysqlleader-url-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path.display().to_string().replace('/', "%2F")
        };
        let cert = file("cert.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
        let key = file("key.pem", "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n");
        let encrypted = file("enc.pem", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIE\n-----END ENCRYPTED PRIVATE KEY-----\n");
        let empty = file("empty.pem", "");
        let err = |url: String| opts_from_url(&url).unwrap_err();
        // A key given as the CA, a certificate given as the key, an encrypted key, an empty file.
        let e = err(format!("mysql://u:p@h/db?ssl-mode=VERIFY_CA&ssl-ca={key}"));
        assert_eq!((e.parameter(), e.to_string().contains("no certificate")), (Some("ssl-ca"), true), "{e}");
        let e = err(format!("mysql://u:p@h/db?ssl-cert={cert}&ssl-key={cert}"));
        assert_eq!((e.parameter(), e.to_string().contains("no private key")), (Some("ssl-key"), true), "{e}");
        let e = err(format!("mysql://u:p@h/db?ssl-cert={cert}&ssl-key={encrypted}"));
        assert_eq!((e.parameter(), e.to_string().contains("encrypted")), (Some("ssl-key"), true), "{e}");
        assert_eq!(err(format!("mysql://u:p@h/db?ssl-cert={empty}&ssl-key={key}")).parameter(), Some("ssl-cert"));
        // What each needs, in PEM, is accepted (the handshake checks the contents).
        opts_from_url(&format!("mysql://u:p@h/db?ssl-ca={cert}&ssl-cert={cert}&ssl-key={key}")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_tcp_url_stays_on_tcp_unless_it_asks_for_a_socket() {
        assert!(!opts_from_url("mysql://u:p@127.0.0.1:3306/db").unwrap().prefer_socket());
        assert!(opts_from_url("mysql://u:p@127.0.0.1:3306/db?prefer_socket=true").unwrap().prefer_socket());
        assert!(opts_from_url("mysql://u:p@h/db?ssl-mode=REQUIRED").unwrap().ssl_opts().is_some());
        assert!(opts_from_url("mysql://u:p@h/db?ssl-mode=DISABLED").unwrap().ssl_opts().is_none());
        // mysql_async's own switch is accepted too, and never panics.
        assert!(opts_from_url("mysql://u:p@h/db?require_ssl=true").unwrap().ssl_opts().is_some());
    }
}
