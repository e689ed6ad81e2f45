"""Every error: wrong Python types (caught before C), values C cannot carry, and every class of
the hierarchy raised by the real library and server, with its message, code and attributes."""

from __future__ import annotations

import ctypes
import datetime
import math
import socket
import threading
import time
import urllib.parse
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest

import mysqlleader
from mysqlleader import ResultCode, _errors, _native
from conftest import Database, query

# --- wrong Python types ------------------------------------------------------------------------

BAD = {
    "url": [b"mysql://u:p@h/db", None, 1, ["mysql://"]],
    "id": [b"svc", bytearray(b"svc"), None, 7, 1.5, ["svc"]],
    "lease": ["10", b"10", None, True, [10], object(), 10j],
    "term": ["1", b"1", 1.0, True, None, [1]],
    "bool": [1, 0, "true", None, 1.0],
    "client": [b"mysql://u@h/db", None, 1, object()],
}

Call = Tuple[Any, List[Any], List[str]]


def every_call(url: str, client: Any) -> Dict[str, Call]:
    """Every function and method that takes arguments: (callable, good arguments, their kinds)."""
    return {
        "migrate": (mysqlleader.migrate, [url], ["url"]),
        "campaign": (mysqlleader.campaign, [url, "s", "n", 5], ["url", "id", "id", "lease"]),
        "am_i_leader": (mysqlleader.am_i_leader, [url, "s", "n"], ["url", "id", "id"]),
        "current_leader": (mysqlleader.current_leader, [url, "s"], ["url", "id"]),
        "force_leader": (mysqlleader.force_leader, [url, "s", "n", 5], ["url", "id", "id", "lease"]),
        "reelect": (mysqlleader.reelect, [url, "s"], ["url", "id"]),
        "resign": (mysqlleader.resign, [url, "s", "n"], ["url", "id", "id"]),
        "assert_leader": (mysqlleader.assert_leader, [url, "s", "n", 1], ["url", "id", "id", "term"]),
        "set_expiry_event": (mysqlleader.set_expiry_event, [url, False], ["url", "bool"]),
        "Client": (mysqlleader.Client, [url], ["url"]),
        "Client.campaign": (getattr(client, "campaign", None), ["s", "n", 5], ["id", "id", "lease"]),
        "Client.am_i_leader": (getattr(client, "am_i_leader", None), ["s", "n"], ["id", "id"]),
        "Client.current_leader": (getattr(client, "current_leader", None), ["s"], ["id"]),
        "Client.force_leader": (getattr(client, "force_leader", None), ["s", "n", 5], ["id", "id", "lease"]),
        "Client.reelect": (getattr(client, "reelect", None), ["s"], ["id"]),
        "Client.resign": (getattr(client, "resign", None), ["s", "n"], ["id", "id"]),
        "Client.assert_leader": (getattr(client, "assert_leader", None), ["s", "n", 1], ["id", "id", "term"]),
        "Client.set_expiry_event": (getattr(client, "set_expiry_event", None), [False], ["bool"]),
        "Client.fenced": (getattr(client, "fenced", None), ["s", "n", 1], ["id", "id", "term"]),
        "Elector": (lambda c, s: mysqlleader.Elector(c, s), [client, "s"], ["client", "id"]),
    }


CALL_NAMES = list(every_call("mysql://u@h/db", object()))


@pytest.mark.parametrize("name", CALL_NAMES)
def test_wrong_python_types_raise_type_error(name: str, url: str, client: mysqlleader.Client) -> None:
    function, good, kinds = every_call(url, client)[name]
    tried = 0
    for i, kind in enumerate(kinds):
        for bad in BAD[kind]:
            args = list(good)
            args[i] = bad
            with pytest.raises(TypeError) as info:
                function(*args)
            assert not isinstance(info.value, mysqlleader.MysqlLeaderError)
            tried += 1
    assert tried >= len(kinds)


def test_type_errors_name_the_argument(client: mysqlleader.Client) -> None:
    with pytest.raises(TypeError, match=r"service_id must be str, not bytes"):
        client.campaign(b"s", "n", 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"node_id must be str, not None"):
        client.campaign("s", None, 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"lease must be a datetime.timedelta or a number of seconds, not str"):
        client.campaign("s", "n", "5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"term must be int, not bool"):
        client.assert_leader("s", "n", True)
    with pytest.raises(TypeError, match=r"enabled must be bool, not int"):
        client.set_expiry_event(1)  # type: ignore[arg-type]


def test_elector_and_transaction_argument_types(client: mysqlleader.Client, service: str) -> None:
    for kwargs in (
        {"node_id": b"n"},
        {"node_id": 3},
        {"lease": "10s"},
        {"lease": True},
        {"renew_interval": "1"},
        {"retry_interval": b"1"},
        {"retry_jitter": "0.1"},
        {"retry_jitter": True},
        {"request_timeout": [1]},
        {"drift_margin": object()},
        {"resign_on_close": 1},
        {"resign_on_close": None},
        {"fallback_clients": client},
        {"fallback_clients": ["mysql://u@h/db"]},
        {"fallback_clients": "mysql://u@h/db"},
        {"on_event": 42},
    ):
        with pytest.raises(TypeError):
            mysqlleader.Elector(client, service, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="client must be"):
        mysqlleader.Elector(b"mysql://u@h/db", service)  # type: ignore[arg-type]
    with mysqlleader.Elector(client, service, lease=5) as elector:
        for bad in ("1", b"1", True, [1]):
            with pytest.raises(TypeError):
                elector.wait_for_leadership(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            elector.events("10")  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            elector.events(0)
        with pytest.raises(ValueError):
            elector.wait_for_leadership(-1)
    with client.transaction() as tx:
        for sql in (b"SELECT 1", None, 1):
            with pytest.raises(TypeError):
                tx.execute(sql)  # type: ignore[arg-type]
        # (bytes, datetime, date, time, Decimal and bool are parameters too: tests/test_rows.py)
        for params in ("abc", b"abc", 1, None, {"a": 1}, [object()], [[1]], [{1, 2}]):
            with pytest.raises(TypeError):
                tx.execute("SELECT ?", params)  # type: ignore[arg-type]
        for bad in (b"s", None):
            with pytest.raises(TypeError):
                tx.assert_leader(bad, "n", 1)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            tx.assert_leader("s", "n", "1")  # type: ignore[arg-type]
        assert tx.execute("SELECT ?", [1]) == 0, "the transaction is still usable: nothing crossed into C"


# --- values C cannot carry: InvalidArgumentError (a ValueError) before C ------------------------


@pytest.mark.parametrize(
    "call, parameter",
    [
        (lambda c: c.campaign("a\0b", "n", 5), "service_id"),
        (lambda c: c.campaign("s", "n\0", 5), "node_id"),
        (lambda c: c.campaign("s", "\ud800", 5), "node_id"),
        (lambda c: c.campaign("s", "n", -1), "lease"),
        (lambda c: c.campaign("s", "n", math.nan), "lease"),
        (lambda c: c.campaign("s", "n", math.inf), "lease"),
        (lambda c: c.campaign("s", "n", 0.0015), "lease"),
        (lambda c: c.campaign("s", "n", datetime.timedelta(microseconds=1500)), "lease"),
        (lambda c: c.campaign("s", "n", datetime.timedelta(seconds=-1)), "lease"),
        (lambda c: c.campaign("s", "n", 2**70), "lease"),
        (lambda c: c.assert_leader("s", "n", -1), "term"),
        (lambda c: c.assert_leader("s", "n", 2**64), "term"),
        (lambda c: c.fenced("s", "n", -1), "term"),
        (lambda c: mysqlleader.Elector(c, "s", lease=0), "lease"),
        (lambda c: mysqlleader.Elector(c, "s", renew_interval=datetime.timedelta(0)), "renew_interval"),
        (lambda c: mysqlleader.Elector(c, "s", retry_jitter=math.nan), "retry_jitter"),
        (lambda c: c.transaction().execute("SELECT ?", [math.inf]), "params[0]"),
        (lambda c: mysqlleader.Client("mysql://u@h/\0"), "url"),
    ],
)
def test_values_c_cannot_carry(client: mysqlleader.Client, call: Callable[[mysqlleader.Client], Any], parameter: str) -> None:
    with pytest.raises(mysqlleader.InvalidArgumentError) as info:
        call(client)
    assert isinstance(info.value, ValueError)
    assert info.value.parameter == parameter
    assert info.value.code == ResultCode.INVALID_ARGUMENT
    assert parameter in str(info.value)


# --- errors from the library and the server -------------------------------------------------------


@pytest.mark.parametrize(
    "call, parameter",
    [
        (lambda c: c.campaign("", "n", 5), "service_id"),
        (lambda c: c.campaign("s", "", 5), "node_id"),
        (lambda c: c.campaign("s", "x" * 129, 5), "node_id"),
        (lambda c: c.am_i_leader("x" * 129, "n"), "service_id"),
        (lambda c: c.current_leader(""), "service_id"),
        (lambda c: c.reelect(""), "service_id"),
        (lambda c: c.resign("s", ""), "node_id"),
        (lambda c: c.assert_leader("s", "", 1), "node_id"),
        (lambda c: c.campaign("s", "n", 0), "lease"),
        (lambda c: c.force_leader("s", "n", mysqlleader.LEASE_MS_MAX / 1000 + 0.001), "lease"),
        (lambda c: mysqlleader.Elector(c, ""), "service_id"),
        (lambda c: mysqlleader.Elector(c, "s", node_id="x" * 129), "node_id"),
        (lambda c: mysqlleader.Elector(c, "s", lease=1, renew_interval=0.9), "renew_interval"),
        (lambda c: mysqlleader.Elector(c, "s", lease=1, retry_interval=2), "retry_interval"),
        (lambda c: mysqlleader.Elector(c, "s", retry_jitter=1.5), "retry_jitter"),
        (lambda c: mysqlleader.Elector(c, "s", lease=1, request_timeout=5), "request_timeout"),
        (lambda c: mysqlleader.Elector(c, "s", lease=1, drift_margin=1), "drift_margin"),
        (lambda c: mysqlleader.Client("not a url"), "url"),
        (lambda c: mysqlleader.Client("mysql://u@h/db", request_timeout=0), "request_timeout"),
        (lambda c: setattr(c, "request_timeout", 86_400.001), "request_timeout"),
    ],
)
def test_invalid_argument_from_the_library(
    client: mysqlleader.Client, call: Callable[[mysqlleader.Client], Any], parameter: str
) -> None:
    with pytest.raises(mysqlleader.InvalidArgumentError) as info:
        call(client)
    e = info.value
    assert e.code == ResultCode.INVALID_ARGUMENT
    assert e.parameter == parameter, str(e)
    assert not e.transient
    assert e.server_code is None
    assert e.message == str(e) and e.message


def test_the_failed_elector_is_not_left_behind(client: mysqlleader.Client, service: str) -> None:
    before = dict(mysqlleader._handle.released_count)
    with pytest.raises(mysqlleader.InvalidArgumentError):
        mysqlleader.Elector(client, service, lease=1, renew_interval=0.9)
    assert client.current_leader(service).term == 0, "a rejected configuration never campaigned"
    assert mysqlleader._handle.released_count == before


def test_not_leader(client: mysqlleader.Client, url: str, service: str) -> None:
    client.campaign(service, "a", 10)
    for call in (
        lambda: client.assert_leader(service, "a", 2),
        lambda: client.assert_leader(service, "b", 1),
        lambda: client.fenced(service, "b", 1),
        lambda: mysqlleader.assert_leader(url, service, "a", 0),
    ):
        with pytest.raises(mysqlleader.NotLeaderError) as info:
            call()
        assert info.value.code == ResultCode.NOT_LEADER
        assert "not the leader" in str(info.value)
        assert not info.value.transient and not info.value.retryable
        assert info.value.sqlstate == "45001", "the SQLSTATE is a field"
        assert not str(info.value).startswith("not the leader: mysqlleader:"), "no doubled prefix"


def test_not_leader_carries_the_current_term(client: mysqlleader.Client, service: str) -> None:
    client.campaign(service, "a", 10)
    client.force_leader(service, "b", 10)  # term 2
    with pytest.raises(mysqlleader.NotLeaderError) as info:
        client.fenced(service, "a", 1)
    assert info.value.current_term == 2, "the refusal's current term is a field"


def test_a_parameter_has_one_name_in_python(client: mysqlleader.Client, service: str) -> None:
    """The keyword the user wrote, in the field and in the message; never the C spelling."""
    cases = [
        (lambda: client.campaign(service, "a", 100_000_000), "lease", "lease_ms"),
        (lambda: mysqlleader.Client("mysql://u@127.0.0.1/db", request_timeout=100_000_000), "request_timeout", "timeout_ms"),
        (lambda: mysqlleader.Elector(client, service, lease=10, renew_interval=9), "renew_interval", "renew_ms"),
        (lambda: mysqlleader.Elector(client, service, lease=10, retry_interval=11), "retry_interval", "retry_ms"),
        (lambda: mysqlleader.Elector(client, service, lease=100_000_000), "lease", "lease_ms"),
    ]
    for call, name, c_name in cases:
        with pytest.raises(mysqlleader.InvalidArgumentError) as info:
            call()
        assert info.value.parameter == name
        assert name in str(info.value) and c_name not in str(info.value), str(info.value)
        assert "config->" not in str(info.value) and not str(info.value).startswith("invalid argument")


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_connection_refused() -> None:
    port = free_port()
    url = f"mysql://app:hunter2@127.0.0.1:{port}/app"
    server = f"127.0.0.1:{port}"  # named in every connection error, as host:port
    with mysqlleader.Client(url, request_timeout=3) as client:  # no connection yet: fine
        with pytest.raises(mysqlleader.DatabaseConnectionError) as info:
            client.campaign("s", "n", 5)
    e = info.value
    assert e.code == ResultCode.CONNECTION
    assert e.transient
    assert "hunter2" not in str(e)
    assert server in str(e) and "app@" not in str(e), str(e)
    with pytest.raises(mysqlleader.DatabaseConnectionError) as info:
        mysqlleader.migrate(url, request_timeout=3)
    assert server in str(info.value), str(info.value)
    with pytest.raises(mysqlleader.DatabaseConnectionError) as info:
        mysqlleader.current_leader(url, "s")
    assert server in str(info.value), str(info.value)


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP server on loopback that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: List[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                accepted.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(5)
    for conn in accepted:
        conn.close()
    server.close()


def test_a_silent_server_times_out(silent_server: int) -> None:
    url = f"mysql://app:hunter2@127.0.0.1:{silent_server}/app"
    with mysqlleader.Client(url, request_timeout=0.3) as client:
        started = time.monotonic()
        with pytest.raises(mysqlleader.DatabaseConnectionError) as info:
            client.am_i_leader("s", "n")
        assert time.monotonic() - started < 5
    assert info.value.transient
    assert "hunter2" not in str(info.value)


def test_not_migrated(fresh_db: Database) -> None:
    with mysqlleader.Client(fresh_db.url) as client:
        for call in (
            lambda: client.campaign("s", "n", 5),
            lambda: client.am_i_leader("s", "n"),
            lambda: client.current_leader("s"),
            lambda: client.force_leader("s", "n", 5),
            lambda: client.reelect("s"),
            lambda: client.resign("s", "n"),
            lambda: client.assert_leader("s", "n", 1),
            lambda: client.set_expiry_event(False),
        ):
            with pytest.raises(mysqlleader.NotMigratedError) as info:
                call()
            assert info.value.code == ResultCode.NOT_MIGRATED
            assert "migrate" in str(info.value)


def test_server_error(client: mysqlleader.Client) -> None:
    with client.transaction() as tx:
        with pytest.raises(mysqlleader.ServerError) as info:
            tx.execute("SELEKT 1")
        tx.rollback()
    e = info.value
    assert e.code == ResultCode.SERVER
    assert e.server_code == 1064
    assert not e.transient
    assert "syntax" in str(e).lower()


def test_server_error_duplicate_key(client: mysqlleader.Client, url: str) -> None:
    query(url, "CREATE TABLE IF NOT EXISTS dup_test (id INT PRIMARY KEY)")
    query(url, "INSERT IGNORE INTO dup_test VALUES (1)")
    tx = client.transaction()
    with pytest.raises(mysqlleader.ServerError) as info:
        tx.execute("INSERT INTO dup_test VALUES (?)", [1])
    assert info.value.server_code == 1062
    tx.close()


@pytest.mark.parametrize(
    "ddl",
    ["CREATE TABLE mysqlleader_schema_history (x INT)", "CREATE TABLE leader_election (x INT)"],
)
def test_migration_error(fresh_db: Database, ddl: str) -> None:
    query(fresh_db.url, ddl)
    with pytest.raises(mysqlleader.MigrationError) as info:
        mysqlleader.migrate(fresh_db.url)
    assert info.value.code == ResultCode.MIGRATION
    assert "migration" in str(info.value).lower()


def test_invalid_state(url: str, service: str) -> None:
    client = mysqlleader.Client(url)
    client.close()
    for call in (
        lambda: client.campaign(service, "n", 5),
        lambda: client.migrate(),
        lambda: client.transaction(),
        lambda: setattr(client, "request_timeout", 1),
        lambda: mysqlleader.Elector(client, service),
    ):
        with pytest.raises(mysqlleader.InvalidStateError) as info:
            call()
        assert info.value.code == ResultCode.INVALID_STATE
        assert "closed" in str(info.value)


def test_buffer_too_small_null_argument_and_invalid_utf8_through_the_c_api() -> None:
    """The codes the package's own checks prevent, produced by calling the C API directly."""
    lib = _native.library()
    needed = ctypes.c_size_t()
    rc = lib.mysqlleader_default_node_id(ctypes.create_string_buffer(1), 1, ctypes.byref(needed))
    assert rc == ResultCode.BUFFER_TOO_SMALL
    e = _errors.last_error(rc)
    assert isinstance(e, mysqlleader.BufferTooSmallError) and needed.value > 1

    out = _native.CurrentLeaderResultStruct()
    rc = lib.mysqlleader_current_leader(None, b"s", ctypes.byref(out))
    e = _errors.last_error(rc)
    assert isinstance(e, mysqlleader.NullArgumentError) and isinstance(e, mysqlleader.InvalidArgumentError)
    assert e.parameter == "client" and e.code == ResultCode.NULL_ARGUMENT

    with mysqlleader.Client("mysql://u@127.0.0.1:1/db") as client, client._handle.use() as ptr:
        rc = lib.mysqlleader_current_leader(ptr, b"ab\xffcd", ctypes.byref(out))
        e = _errors.last_error(rc)
    assert isinstance(e, mysqlleader.InvalidUtf8Error) and isinstance(e, ValueError)
    assert e.parameter == "service_id" and e.code == ResultCode.INVALID_UTF8


def test_every_result_code_has_its_class() -> None:
    expected = {
        ResultCode.NULL_ARGUMENT: mysqlleader.NullArgumentError,
        ResultCode.INVALID_ARGUMENT: mysqlleader.InvalidArgumentError,
        ResultCode.INVALID_UTF8: mysqlleader.InvalidUtf8Error,
        ResultCode.NOT_LEADER: mysqlleader.NotLeaderError,
        ResultCode.CONNECTION: mysqlleader.DatabaseConnectionError,
        ResultCode.NOT_MIGRATED: mysqlleader.NotMigratedError,
        ResultCode.SERVER: mysqlleader.ServerError,
        ResultCode.MIGRATION: mysqlleader.MigrationError,
        ResultCode.BUFFER_TOO_SMALL: mysqlleader.BufferTooSmallError,
        ResultCode.PANIC: mysqlleader.InternalError,
        ResultCode.INVALID_STATE: mysqlleader.InvalidStateError,
        ResultCode.USAGE: mysqlleader.UsageError,
        ResultCode.ACCESS_DENIED: mysqlleader.AccessDeniedError,
        ResultCode.AUTHENTICATION: mysqlleader.AuthenticationError,
        ResultCode.PRIVILEGE: mysqlleader.PrivilegeError,
    }
    assert set(expected) == set(ResultCode) - {ResultCode.OK}, "a new result code needs its exception"
    for code, cls in expected.items():
        e = _errors.error_for(int(code), "boom", transient=True, server_code=1213)
        assert type(e) is cls and e.code == code and e.message == "boom" and e.transient
        assert isinstance(e, mysqlleader.MysqlLeaderError)
        with_code = (ResultCode.SERVER, ResultCode.USAGE, ResultCode.AUTHENTICATION, ResultCode.PRIVILEGE)
        assert e.server_code == (1213 if code in with_code else None)
        assert cls.default_code == code
    unknown = _errors.error_for(77, "")
    assert type(unknown) is mysqlleader.MysqlLeaderError and unknown.code == 77 and "UNKNOWN_77" in str(unknown)


def test_library_not_found_is_part_of_the_hierarchy() -> None:
    assert issubclass(mysqlleader.LibraryNotFoundError, mysqlleader.MysqlLeaderError)


# Issue 26, item 4: what retrying cannot fix reaches the elector's user, as its own kind.


def _user_url(url: str, user: str, password: str) -> str:
    parts = urllib.parse.urlsplit(url)
    netloc = f"{user}:{password}@{parts.hostname}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def test_an_elector_reports_what_retrying_cannot_fix(url: str, fresh_db: Database, service: str) -> None:
    """Before: ``wait_for_leadership`` returned TIMED_OUT and the elector retried for ever."""
    parts = urllib.parse.urlsplit(url)
    account = f"ml26_{service[-20:]}".replace("-", "_")[:32]
    query(url, f"DROP USER IF EXISTS '{account}'@'%%'")
    query(url, f"CREATE USER '{account}'@'%%' IDENTIFIED BY 'right'")
    db = parts.path.lstrip("/")
    try:
        cases = [
            # a wrong password: the server refuses the login (1045)
            (_user_url(url, account, "wrong"), mysqlleader.AuthenticationError, 1045),
            # no grant on the database (1044)
            (_user_url(url, account, "right"), mysqlleader.PrivilegeError, 1044),
            # the schema is not installed (1305)
            (fresh_db.url, mysqlleader.NotMigratedError, None),
        ]
        query(url, f"GRANT SELECT ON `{fresh_db.name}`.* TO '{account}'@'%%'")
        events = []
        for target, cls, server_code in cases:
            began = time.monotonic()
            with mysqlleader.Elector(target, service, lease=2, on_event=events.append) as e:
                with pytest.raises(cls) as info:
                    e.wait_for_leadership(30)
                took = time.monotonic() - began
                print(f"{cls.__name__}: raised after {took * 1000:.0f} ms: {info.value}")
                assert info.value.server_code == server_code and not info.value.transient
                assert "password" not in str(info.value) or "wrong user name or password" in str(info.value)
                assert e.campaigning, "it keeps trying: the set-up may be mended"
            assert any(ev.kind is mysqlleader.EventKind.FAILING for ev in events), events
            events.clear()
        # The database grant exists, EXECUTE does not: the procedure is refused (1370).
        grant_url = _user_url(url, account, "right").replace(f"/{db}", f"/{fresh_db.name}")
        mysqlleader.migrate(fresh_db.url)
        with mysqlleader.Elector(grant_url, service, lease=2) as e:
            with pytest.raises(mysqlleader.PrivilegeError) as info:
                e.wait_for_leadership(30)
            assert info.value.server_code == 1370, info.value
    finally:
        query(url, f"DROP USER IF EXISTS '{account}'@'%%'")


def test_a_url_without_a_database_is_an_invalid_url(url: str) -> None:
    parts = urllib.parse.urlsplit(url)
    bare = urllib.parse.urlunsplit((parts.scheme, parts.netloc, "", parts.query, parts.fragment))
    with pytest.raises(mysqlleader.InvalidArgumentError) as info:
        mysqlleader.Client(bare)
    assert info.value.parameter == "url" and "names no database" in str(info.value)
