"""Shared fixtures: every test talks to the real server named by MYSQLLEADER_TEST_URL.

A test run creates its own databases through that URL's account (which must be allowed to
create databases, like the one scripts/testdb.sh makes): one migrated database shared by the
run (each test uses service ids of its own), and fresh ones for the tests that need an empty or
private database. They are dropped at the end of the run.

PyMySQL serves as an independent client: it creates the databases and reads what the library
wrote, so a test does not check the library only with itself.
"""

from __future__ import annotations

import itertools
import os
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

import pymysql
import pytest

import mysqlleader

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
HEADER = Path(os.environ.get("MYSQLLEADER_HEADER", REPO / "include" / "mysqlleader.h"))


@dataclass(frozen=True)
class Database:
    """A database of this test run: its name and the URL that names it."""

    name: str
    url: str


def url_with_db(base: str, db: str) -> str:
    """``base`` with its /database part replaced by ``db`` (the query string is kept)."""
    parts = urllib.parse.urlsplit(base)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/" + db, parts.query, parts.fragment))


def connect(url: str, database: Optional[str] = None) -> "pymysql.connections.Connection[Any]":
    """A PyMySQL connection (autocommit) to the server of ``url``."""
    parts = urllib.parse.urlsplit(url)
    db = database if database is not None else (parts.path.lstrip("/") or None)
    return pymysql.connect(
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 3306,
        user=urllib.parse.unquote(parts.username or ""),
        password=urllib.parse.unquote(parts.password or ""),
        database=db,
        autocommit=True,
        connect_timeout=10,
    )


def query(url: str, sql: str, args: Sequence[Any] = ()) -> List[Tuple[Any, ...]]:
    """Runs one statement on a fresh PyMySQL connection to ``url``'s database; returns its rows."""
    conn = connect(url)
    try:
        with conn.cursor() as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())
    finally:
        conn.close()


_counter = itertools.count()
_created: List[str] = []


@pytest.fixture(scope="session")
def server_url() -> str:
    url = os.environ.get("MYSQLLEADER_TEST_URL")
    if not url:
        pytest.fail(
            "MYSQLLEADER_TEST_URL is not set: run scripts/test-python.sh (it starts a throwaway "
            "server when needed), or set it to mysql://user:pass@host:port/db of an account that "
            "may create databases",
            pytrace=False,
        )
    return url


@pytest.fixture(scope="session")
def make_database(server_url: str) -> Iterator[Callable[[str], Database]]:
    """Makes a fresh, empty database of this run; all are dropped at the end."""

    def make(tag: str) -> Database:
        name = f"mlpy_{re.sub(r'[^a-z0-9]', '', tag.lower())[:20]}_{os.getpid()}_{next(_counter)}"
        query(server_url, f"DROP DATABASE IF EXISTS `{name}`")
        query(server_url, f"CREATE DATABASE `{name}`")
        _created.append(name)
        return Database(name, url_with_db(server_url, name))

    yield make
    for name in _created:
        try:
            query(server_url, f"DROP DATABASE IF EXISTS `{name}`")
        except pymysql.MySQLError:
            pass


@pytest.fixture(scope="session")
def migrated_db(make_database: Callable[[str], Database]) -> Database:
    """One database with the schema migrated, shared by the run (tests use their own services)."""
    db = make_database("shared")
    assert mysqlleader.migrate(db.url) > 0
    return db


@pytest.fixture
def fresh_db(make_database: Callable[[str], Database], request: pytest.FixtureRequest) -> Database:
    """An empty database of the test's own."""
    return make_database(request.node.name)


@pytest.fixture
def url(migrated_db: Database) -> str:
    """The URL of the shared migrated database."""
    return migrated_db.url


@pytest.fixture
def client(url: str) -> Iterator[mysqlleader.Client]:
    with mysqlleader.Client(url) as c:
        yield c


_service_counter = itertools.count()


@pytest.fixture
def service(request: pytest.FixtureRequest) -> str:
    """A service id of the test's own (unique within the run and across runs' processes)."""
    base = re.sub(r"[^A-Za-z0-9_.-]", "-", request.node.name)[:80]
    return f"{base}-{os.getpid()}-{next(_service_counter)}"


def history(url: str, service_id: str) -> List[Tuple[Any, ...]]:
    """The terms of a service as the table holds them: (term, leader_id, began_how, ended_how)."""
    rows = query(
        url,
        "SELECT term, leader_id, began_how, ended_how FROM leader_election_history "
        "WHERE service_id = %s ORDER BY term",
        (service_id,),
    )
    return [(int(t), bytes(l).decode("utf-8"), began, ended) for t, l, began, ended in rows]


class StallingProxy:
    """A TCP proxy in front of the test server that can *stall*: keep every connection open but
    forward nothing (a server that hangs), until :meth:`resume`. Threads, in this process."""

    def __init__(self, upstream_url: str) -> None:
        import socket
        import threading

        parts = urllib.parse.urlsplit(upstream_url)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 3306)
        self.flowing = threading.Event()
        self.flowing.set()
        self.closed = False
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def url_for(self, url: str) -> str:
        parts = urllib.parse.urlsplit(url)
        netloc = parts.netloc.rsplit("@", 1)
        host = f"127.0.0.1:{self.port}"
        netloc = f"{netloc[0]}@{host}" if len(netloc) == 2 else host
        return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))

    def stall(self) -> None:
        self.flowing.clear()

    def resume(self) -> None:
        self.flowing.set()

    def close(self) -> None:
        self.closed = True
        self.flowing.set()
        self.listener.close()

    def _accept(self) -> None:
        import socket
        import threading

        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: Any, dst: Any) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                self.flowing.wait()  # stalled: hold the bytes
                if self.closed:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.close()
                except OSError:
                    pass


@pytest.fixture
def stalling_proxy(url: str) -> Iterator[StallingProxy]:
    proxy = StallingProxy(url)
    yield proxy
    proxy.close()
