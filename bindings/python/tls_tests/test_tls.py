"""TLS through the Python binding, against a TLS-only MariaDB (``require_secure_transport=ON``):
every ``ssl-mode``, a wrong CA, a wrong host name, plaintext refused, a server without TLS, a
``REQUIRE X509`` account with and without its client certificate, and bad TLS parameters. Each
refusal is an exception of the kind the library decides, not retryable, whose message says what
went wrong.

Run by ``scripts/test-tls.sh`` (``make test-tls``), which starts the TLS server and sets:

- ``MYSQLLEADER_TEST_URL``: the TLS server's URL without TLS parameters (refused as it is);
- ``MYSQLLEADER_TEST_TLS_DIR``: ``ca.pem``, ``other-ca.pem`` (signed nothing here),
  ``client-cert.pem``, ``client-key.pem``; the server's certificate is for 127.0.0.1 only;
- ``MYSQLLEADER_TEST_PLAIN_URL``: a server without TLS;
- ``MYSQLLEADER_TLS_X509_URL``: the ``REQUIRE X509`` account with its certificate.

Not in ``tests/`` (which ``make test-python`` runs against the plain server). Without these
variables every test fails: none is skipped.
"""

from __future__ import annotations

import os
import urllib.parse
from typing import Optional, Type

import pytest

import mysqlleader


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run scripts/test-tls.sh (make test-tls)")
    return value


def q(path: str) -> str:
    return urllib.parse.quote(path, safe="")


def tls_file(name: str) -> str:
    return q(os.path.join(env("MYSQLLEADER_TEST_TLS_DIR"), name))


def url(params: str, *, user: str = "mysqlleader", host: str = "127.0.0.1") -> str:
    """The TLS server's URL as ``user`` (password = user name) at ``host``, with ``params``."""
    parts = urllib.parse.urlsplit(env("MYSQLLEADER_TEST_URL"))
    netloc = f"{user}:{user}@{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, params, ""))


def probe(u: str) -> None:
    """Opens a client on ``u`` and makes one call (the connection is made on the first call)."""
    with mysqlleader.Client(u) as client:
        client.current_leader("tls-probe")


@pytest.fixture(scope="module", autouse=True)
def migrated() -> None:
    with mysqlleader.Client(url(f"ssl-mode=VERIFY_CA&ssl-ca={tls_file('ca.pem')}")) as client:
        client.migrate()


@pytest.mark.parametrize(
    "params",
    ["ssl-mode=REQUIRED", "ssl-mode=VERIFY_CA&ssl-ca={ca}", "ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}", "ssl-ca={ca}"],
)
def test_each_ssl_mode_connects(params: str) -> None:
    probe(url(params.format(ca=tls_file("ca.pem"))))


def assert_refused(
    u: str, kind: Type[mysqlleader.MysqlLeaderError], says: str, server_code: Optional[int] = None
) -> mysqlleader.MysqlLeaderError:
    with pytest.raises(mysqlleader.MysqlLeaderError) as caught:
        probe(u)
    e = caught.value
    assert isinstance(e, kind), f"{type(e).__name__}: {e}"
    assert not e.retryable, f"not retryable: {e}"
    assert says in str(e), f"{says!r} not in: {e}"
    assert e.server_code == server_code, f"server_code {e.server_code}: {e}"
    return e


def test_a_certificate_from_another_ca_is_refused() -> None:
    assert_refused(url(f"ssl-mode=VERIFY_CA&ssl-ca={tls_file('other-ca.pem')}"), mysqlleader.UsageError, "TLS")


def test_a_wrong_host_name_is_refused() -> None:
    # The certificate is for 127.0.0.1 alone.
    u = url(f"ssl-mode=VERIFY_IDENTITY&ssl-ca={tls_file('ca.pem')}", host="localhost")
    assert_refused(u, mysqlleader.UsageError, "not valid for name")


@pytest.mark.parametrize("params", ["ssl-mode=DISABLED", ""])
def test_plaintext_is_refused_by_the_server(params: str) -> None:
    # MariaDB answers 1045, as for a wrong password, MySQL 3159 ("insecure transport"); the
    # message says TLS is (or may be) what is missing.
    code = 3159 if os.environ.get("MYSQLLEADER_TEST_KIND") == "mysql" else 1045
    assert_refused(url(params), mysqlleader.AuthenticationError, "requires TLS", server_code=code)


def test_a_server_without_tls_is_refused_when_tls_is_required() -> None:
    plain = env("MYSQLLEADER_TEST_PLAIN_URL")
    u = plain + ("&" if "?" in plain else "?") + "ssl-mode=REQUIRED"
    assert_refused(u, mysqlleader.UsageError, "does not offer TLS")


def test_a_require_x509_account_needs_its_client_certificate() -> None:
    with mysqlleader.Client(env("MYSQLLEADER_TLS_X509_URL")) as client:
        won = client.campaign("tls-py-x509", "p1", 5.0)
        assert won.is_leader, won
        assert client.resign("tls-py-x509", "p1").resigned
    without = url(f"ssl-mode=VERIFY_IDENTITY&ssl-ca={tls_file('ca.pem')}", user="mlx509")
    assert_refused(without, mysqlleader.AuthenticationError, "client certificate (ssl-cert, ssl-key)", server_code=1045)


@pytest.mark.parametrize(
    "params, parameter",
    [
        ("ssl-mode=SOMETIMES", "ssl-mode"),
        ("ssl-mode=VERIFY_CA&ssl-ca={nowhere}", "ssl-ca"),
        ("ssl-mode=VERIFY_CA&ssl-ca={key}", "ssl-ca"),  # a key given as the CA
        ("ssl-cert={cert}", "ssl-key"),
        ("ssl-cert={cert}&ssl-key={cert}", "ssl-key"),  # a certificate given as the key
    ],
)
def test_bad_tls_parameters_name_themselves(params: str, parameter: str) -> None:
    u = url(params.format(nowhere=q("/nonexistent/ca.pem"), key=tls_file("client-key.pem"), cert=tls_file("client-cert.pem")))
    with pytest.raises(mysqlleader.InvalidArgumentError) as caught:
        probe(u)
    assert caught.value.parameter == parameter, caught.value
    assert "mysqlleader:mysqlleader" not in str(caught.value), "no password in the message"


def test_an_election_and_a_fenced_transaction_over_tls() -> None:
    # As the REQUIRE X509 account, with its client certificate.
    with mysqlleader.Elector(env("MYSQLLEADER_TLS_X509_URL"), "tls-py", node_id="p1", lease=5) as e:
        assert e.wait_for_leadership(10), "no leadership over TLS"
        with e.fenced() as tx:
            tx.execute("DO 1")
