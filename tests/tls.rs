//! TLS against a real TLS-only MariaDB (`require_secure_transport=ON`, certificates made with
//! openssl by `scripts/testdb.sh start-tls`): every `ssl-mode`, a wrong CA, a wrong host name, a
//! `REQUIRE X509` account with a client certificate, plaintext refused, and an election over TLS.
//! Each refusal is a non-transient error that says what went wrong; nothing panics.
//!
//! Run by `make test-tls` (inside `make test`):
//! `scripts/testdb.sh run-tls cargo test --release --test tls -- --ignored`. The tests need
//! `MYSQLLEADER_TEST_TLS_DIR` (and, for "a server without TLS", `MYSQLLEADER_TEST_PLAIN_URL`):
//! without them they fail, they are never skipped.

mod cli_support;

use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysqlleader::{procedures, Elector, ErrorKind, WaitOutcome};

fn tls_dir() -> String {
    std::env::var("MYSQLLEADER_TEST_TLS_DIR").expect("MYSQLLEADER_TEST_TLS_DIR: run with `make test-tls`")
}

fn enc(path: &str) -> String {
    path.replace('%', "%25").replace('/', "%2F")
}

/// The TLS server's URL for `user`:`pass` at `host`, with `params`.
fn url(user: &str, host: &str, params: &str) -> String {
    let base = std::env::var("MYSQLLEADER_TEST_URL").expect("MYSQLLEADER_TEST_URL of the TLS server");
    let rest = base.split_once('@').expect("a URL with credentials").1;
    let (hostport, path) = rest.split_once('/').expect("a URL with a database");
    let port = hostport.rsplit_once(':').map_or("3306", |(_, p)| p);
    let db = path.split('?').next().unwrap();
    format!("mysql://{user}:{user}pw@{host}:{port}/{db}?{params}").replace(&format!("{user}:{user}pw"), &creds(user))
}

fn creds(user: &str) -> String {
    match user {
        "mysqlleader" => "mysqlleader:mysqlleader".into(),
        "mlx509" => "mlx509:mlx509".into(),
        other => format!("{other}:{other}"),
    }
}

fn ca() -> String {
    enc(&format!("{}/ca.pem", tls_dir()))
}

/// Connects, runs `SHOW STATUS LIKE 'Ssl_version'`, and returns the TLS version in use.
async fn tls_version(url: &str) -> mysqlleader::Result<String> {
    let pool = mysqlleader::pool_from_url(url)?;
    let result = async {
        let mut conn = pool.get_conn().await.map_err(mysqlleader_error)?;
        let row: Option<(String, String)> = conn.query_first("SHOW SESSION STATUS LIKE 'Ssl_version'").await.map_err(mysqlleader_error)?;
        Ok(row.map(|(_, v)| v).unwrap_or_default())
    }
    .await;
    let _ = pool.disconnect().await;
    result
}

/// The library's classification of a driver error, as every call reports it.
fn mysqlleader_error(e: mysql_async::Error) -> mysqlleader::Error {
    // One-shot calls classify errors themselves; for a raw connection, go through a call.
    mysqlleader::Error::Connection { message: e.to_string() }
}

/// A one-shot call over `url`: the error the library reports, classified.
async fn call(url: &str) -> mysqlleader::Result<()> {
    let pool = mysqlleader::pool_from_url(url)?;
    let r = procedures::current_leader(&pool, "tls-probe").await.map(|_| ());
    let _ = pool.disconnect().await;
    r
}

#[tokio::test]
#[ignore = "needs the TLS server of `make test-tls`"]
async fn every_ssl_mode_connects_or_refuses_as_the_mysql_client_does() {
    mysqlleader::migrate(&mysqlleader::pool_from_url(&url("mysqlleader", "127.0.0.1", &format!("ssl-mode=VERIFY_CA&ssl-ca={}", ca()))).unwrap())
        .await
        .expect("migrate over TLS");
    for params in ["ssl-mode=REQUIRED".to_string(), format!("ssl-mode=VERIFY_CA&ssl-ca={}", ca()),
                   format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={}", ca()), format!("ssl-ca={}", ca())] {
        let v = tls_version(&url("mysqlleader", "127.0.0.1", &params)).await.unwrap_or_else(|e| panic!("{params}: {e}"));
        assert!(v.starts_with("TLSv1"), "{params}: Ssl_version {v:?}");
        call(&url("mysqlleader", "127.0.0.1", &params)).await.unwrap_or_else(|e| panic!("{params}: {e}"));
    }
    // A certificate that does not verify: another CA.
    let other = enc(&format!("{}/other-ca.pem", tls_dir()));
    let e = call(&url("mysqlleader", "127.0.0.1", &format!("ssl-mode=VERIFY_CA&ssl-ca={other}"))).await.unwrap_err();
    assert_eq!((e.kind(), e.is_transient()), (ErrorKind::Usage, false), "{e}");
    assert!(e.to_string().contains("TLS"), "{e}");
    // The certificate is for 127.0.0.1: VERIFY_IDENTITY refuses the name localhost; VERIFY_CA
    // checks the chain only, as the MySQL client does (the patched mysql_async in vendor/: a
    // server reached by an address its certificate does not name, or through a proxy), but
    // still refuses a chain of another CA (above).
    let e = call(&url("mysqlleader", "localhost", &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={}", ca()))).await.unwrap_err();
    assert_eq!((e.kind(), e.is_transient()), (ErrorKind::Usage, false), "VERIFY_IDENTITY: {e}");
    assert!(e.to_string().contains("not valid for name"), "VERIFY_IDENTITY: {e}");
    call(&url("mysqlleader", "localhost", &format!("ssl-mode=VERIFY_CA&ssl-ca={}", ca())))
        .await
        .unwrap_or_else(|e| panic!("VERIFY_CA accepts a valid chain for another name: {e}"));
    let e = call(&url("mysqlleader", "localhost", &format!("ssl-mode=VERIFY_CA&ssl-ca={other}"))).await.unwrap_err();
    assert!(e.to_string().contains("TLS"), "VERIFY_CA, another CA, another name: {e}");
    // Plaintext to a server that requires TLS: refused by the server, not transient.
    for params in ["ssl-mode=DISABLED", ""] {
        let e = call(&url("mysqlleader", "127.0.0.1", params)).await.unwrap_err();
        assert!(!e.is_transient(), "{params}: {e:?}");
        // MariaDB answers 1045, as for a wrong password (MySQL 8: 3159, "insecure transport");
        // the message says that TLS may be what is missing.
        assert!(e.to_string().contains("requires TLS") || e.server_code() == Some(3159), "{params}: {e}");
        println!("plaintext ({params:?}) refused: {e}");
    }
}

#[tokio::test]
#[ignore = "needs the TLS server of `make test-tls`"]
async fn a_server_without_tls_is_refused_when_tls_is_required() {
    let plain = std::env::var("MYSQLLEADER_TEST_PLAIN_URL").expect("MYSQLLEADER_TEST_PLAIN_URL: a server without TLS");
    let sep = if plain.contains('?') { '&' } else { '?' };
    let e = call(&format!("{plain}{sep}ssl-mode=REQUIRED")).await.unwrap_err();
    assert_eq!((e.kind(), e.is_transient()), (ErrorKind::Usage, false), "{e}");
    assert!(e.to_string().contains("does not offer TLS"), "{e}");
}

#[tokio::test]
#[ignore = "needs the TLS server of `make test-tls`"]
async fn a_require_x509_account_connects_with_its_client_certificate() {
    let dir = tls_dir();
    let with_cert = format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={}&ssl-cert={}&ssl-key={}", ca(),
                            enc(&format!("{dir}/client-cert.pem")), enc(&format!("{dir}/client-key.pem")));
    let v = tls_version(&url("mlx509", "127.0.0.1", &with_cert)).await.expect("X509 account with its certificate");
    assert!(v.starts_with("TLSv1"));
    let e = call(&url("mlx509", "127.0.0.1", &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={}", ca()))).await.unwrap_err();
    assert_eq!(e.server_code(), Some(1045), "without its certificate: access denied: {e}");
    assert!(e.to_string().contains("client certificate (ssl-cert, ssl-key)"), "{e}");
    assert!(!e.is_transient());
}

#[tokio::test]
#[ignore = "needs the TLS server of `make test-tls`"]
async fn an_election_and_a_fenced_write_over_tls() {
    let u = url("mysqlleader", "127.0.0.1", &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={}", ca()));
    let pool = mysqlleader::pool_from_url(&u).unwrap();
    mysqlleader::migrate(&pool).await.unwrap();
    let elector = Elector::builder(pool.clone(), "tls-election").node_id("t1").lease(Duration::from_secs(5)).start().unwrap();
    assert_eq!(elector.wait_for_leadership(Some(Duration::from_secs(10))).await, WaitOutcome::Leading);
    let mut conn = pool.get_conn().await.unwrap();
    let mut tx = conn.start_transaction(Default::default()).await.unwrap();
    assert_eq!(elector.assert_leader(&mut tx).await.unwrap(), elector.term());
    tx.commit().await.unwrap();
    drop(conn);
    elector.shutdown().await.unwrap();
    let _ = pool.disconnect().await;
}

#[tokio::test]
#[ignore = "needs the TLS server of `make test-tls`"]
async fn the_cli_over_tls_with_the_password_from_the_environment() {
    let with_pw = url("mysqlleader", "127.0.0.1", &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={}", ca()));
    mysqlleader::migrate(&mysqlleader::pool_from_url(&with_pw).unwrap()).await.unwrap();
    // The password from MYSQLLEADER_PASSWORD, not in the URL (nor in ps or the shell's history).
    let no_pw = with_pw.replacen("mysqlleader:mysqlleader@", "mysqlleader@", 1);
    let out = cli_support::command(Some(&no_pw), &["campaign", "tls-cli", "c1", "--json"])
        .env("MYSQLLEADER_PASSWORD", "mysqlleader")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = cli_support::command(Some(&no_pw), &["campaign", "tls-cli", "c1"]).env_remove("MYSQLLEADER_PASSWORD").output().unwrap();
    assert_eq!(out.status.code(), Some(2), "no password: refused");
    // A certificate that does not verify: exit 2, a message that says TLS, no password, no panic.
    let other = enc(&format!("{}/other-ca.pem", tls_dir()));
    let bad = url("mysqlleader", "127.0.0.1", &format!("ssl-mode=VERIFY_CA&ssl-ca={other}"));
    let out = cli_support::cli(Some(&bad), &["status"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("TLS") && !out.stderr.contains("mysqlleader:mysqlleader"), "{}", out.stderr);
    let out = cli_support::cli(Some(&url("mysqlleader", "127.0.0.1", "ssl-mode=SOMETIMES")), &["status"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("ssl-mode"), "{}", out.stderr);
}
