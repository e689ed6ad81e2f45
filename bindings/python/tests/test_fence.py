"""``Elector.fence(conn)``: the fence on a transaction the application opened with its own
driver (here PyMySQL, and aiomysql for ``mysqlleader.aio``), against the real server.

It passes while the node leads; after an operator moved the seat it raises NotLeaderError, the
elector no longer leads the moment it has raised (its next renew is 4 s away), and the insert the
transaction made before the fence never commits. A fence with no transaction open fails: it is
never a silent pass. The driver's other errors pass through unchanged, and the connection runs
its next statement as usual after every outcome.
"""

from __future__ import annotations

import asyncio
import urllib.parse
from typing import Any, Iterator

import pymysql
import pymysql.cursors
import pytest

import mysqlleader
import mysqlleader.aio
from conftest import Database, connect, query

#: The next renew is lease / 5 = 4 s away: only the fence can tell the elector in time.
LEASE = 20


@pytest.fixture
def table(url: str, service: str) -> Iterator[str]:
    name = "fence_" + str(abs(hash(service)))
    query(url, f"CREATE TABLE `{name}` (id INT PRIMARY KEY, term BIGINT UNSIGNED NOT NULL)")
    yield name
    query(url, f"DROP TABLE IF EXISTS `{name}`")


def ids(url: str, table: str) -> list:
    return [row[0] for row in query(url, f"SELECT id FROM `{table}` ORDER BY id")]


def still_usable(conn: Any) -> None:
    with conn.cursor() as cur:
        cur.execute("SELECT 1")
        assert list(cur.fetchall())[0] in ((1,), {"1": 1})


def test_fence_in_a_pymysql_transaction(client: mysqlleader.Client, url: str, service: str, table: str) -> None:
    conn = connect(url)  # autocommit on, as conftest makes it
    try:
        with mysqlleader.Elector(client, service, node_id="a", lease=LEASE, resign_on_close=False) as elector:
            assert elector.wait_for_leadership(10)
            term = elector.term

            # 1. Leading: the fence passes inside the caller's transaction (BEGIN), which commits.
            conn.begin()
            with conn.cursor() as cur:
                cur.execute(f"INSERT INTO `{table}` VALUES (%s, %s)", (1, term))
            assert elector.fence(conn) == term
            conn.commit()
            assert ids(url, table) == [1]
            # The same with autocommit off (the PEP 249 default): a transaction is always open.
            conn.autocommit(False)
            with conn.cursor() as cur:
                cur.execute(f"INSERT INTO `{table}` VALUES (%s, %s)", (2, term))
            assert elector.fence(conn) == term
            conn.commit()
            conn.autocommit(True)
            assert ids(url, table) == [1, 2]

            # 2. Autocommit on and no BEGIN: a fence would fence nothing. MariaDB refuses it; the
            # error surfaces, and it is no refusal of the term: the elector still leads.
            with pytest.raises(mysqlleader.UsageError) as refused_use:
                elector.fence(conn)
            assert refused_use.value.sqlstate == "45000"
            assert "needs an open transaction" in str(refused_use.value)
            assert isinstance(refused_use.value.__cause__, pymysql.MySQLError)
            assert elector.is_leader
            still_usable(conn)

            # 3. An operator moves the seat. The insert before the fence must not commit.
            client.force_leader(service, "b", LEASE)
            conn.begin()
            with conn.cursor() as cur:
                cur.execute(f"INSERT INTO `{table}` VALUES (%s, %s)", (3, term))
            with pytest.raises(mysqlleader.NotLeaderError) as refused:
                elector.fence(conn)
            # At once, not at the next renew.
            assert not elector.is_leader, "still leading right after the refused fence raised"
            assert refused.value.sqlstate == "45001"
            assert refused.value.current_term == term + 1
            assert isinstance(refused.value.__cause__, pymysql.MySQLError)
            conn.rollback()
            assert ids(url, table) == [1, 2], "the insert before the refused fence committed"
            still_usable(conn)
            # Not leading now: refused without a round trip.
            conn.begin()
            with pytest.raises(mysqlleader.NotLeaderError):
                elector.fence(conn)
            conn.rollback()
    finally:
        conn.close()


def test_fence_reads_a_dictionary_cursors_row(client: mysqlleader.Client, url: str, service: str) -> None:
    parts = urllib.parse.urlsplit(url)
    conn = pymysql.connect(
        host=parts.hostname,
        port=parts.port,
        user=urllib.parse.unquote(parts.username or ""),
        password=urllib.parse.unquote(parts.password or ""),
        database=parts.path.lstrip("/"),
        cursorclass=pymysql.cursors.DictCursor,
    )
    try:
        with mysqlleader.Elector(client, service, node_id="a", lease=LEASE) as elector:
            assert elector.wait_for_leadership(10)
            assert elector.fence(conn) == elector.term  # autocommit off: a transaction is open
            conn.rollback()
            still_usable(conn)
    finally:
        conn.close()


def test_other_driver_errors_pass_through_unchanged(client: mysqlleader.Client, url: str, fresh_db: Database, service: str) -> None:
    # The elector's schema is in `url`; the connection's database has none: 1305, not ours.
    conn = connect(fresh_db.url)
    try:
        with mysqlleader.Elector(client, service, node_id="a", lease=LEASE) as elector:
            assert elector.wait_for_leadership(10)
            conn.begin()
            with pytest.raises(pymysql.MySQLError) as failed:
                elector.fence(conn)
            assert not isinstance(failed.value, mysqlleader.MysqlLeaderError)
            assert failed.value.args[0] == 1305, failed.value
            conn.rollback()
            assert elector.is_leader, "an error that is no refusal must not step the elector down"
    finally:
        conn.close()


def test_driver_errors_are_read_without_a_driver() -> None:
    """The duck typing of ``_fence.mapped``: mysql-connector's fields, PyMySQL's args."""
    from mysqlleader import _fence

    class ConnectorError(Exception):  # mysql-connector / MariaDB Connector/Python shape
        def __init__(self, errno: int, sqlstate: str, msg: str) -> None:
            super().__init__(msg)
            self.errno, self.sqlstate, self.msg = errno, sqlstate, msg

    refusal = "mysqlleader: not the leader at term 3 (current term 5)"
    for error in (ConnectorError(1644, "45001", refusal), pymysql.err.OperationalError(1644, refusal)):
        mapped = _fence.mapped(error)
        assert isinstance(mapped, mysqlleader.NotLeaderError)
        assert (mapped.current_term, mapped.sqlstate, mapped.server_code) == (5, "45001", 1644)
    denied = "mysqlleader: access denied: account 'x' may not act on service 's'"
    for error in (ConnectorError(1644, "45002", denied), pymysql.err.OperationalError(1644, denied)):
        assert isinstance(_fence.mapped(error), mysqlleader.AccessDeniedError)
    outside = "mysqlleader: assert_leader needs an open transaction (START TRANSACTION first)"
    assert isinstance(_fence.mapped(pymysql.err.OperationalError(1644, outside)), mysqlleader.UsageError)
    # The refusals of this release: the kind is the number, with or without a SQLSTATE
    # (README, "Refusals are data").
    handed = refusal + ": the term was handed over to another node"
    for error in (ConnectorError(31004, "45001", handed), pymysql.err.OperationalError(31004, handed)):
        mapped = _fence.mapped(error)
        assert isinstance(mapped, mysqlleader.NotLeaderError)
        assert (mapped.current_term, mapped.sqlstate, mapped.server_code) == (5, "45001", 31004)
    assert isinstance(_fence.mapped(pymysql.err.OperationalError(31001, refusal)), mysqlleader.NotLeaderError)
    assert isinstance(_fence.mapped(pymysql.err.OperationalError(31002, denied)), mysqlleader.AccessDeniedError)
    xa = "mysqlleader: campaign cannot run inside an XA transaction (XA PREPARE would drop its locks)"
    assert isinstance(_fence.mapped(pymysql.err.OperationalError(31003, xa)), mysqlleader.UsageError)
    bad = _fence.mapped(pymysql.err.OperationalError(31000, "mysqlleader: term must not be NULL"))
    assert isinstance(bad, mysqlleader.InvalidArgumentError) and bad.parameter == "term"
    # Not the procedures' refusals: passed through.
    assert _fence.mapped(pymysql.err.OperationalError(1644, "some other SIGNAL")) is None
    assert _fence.mapped(pymysql.err.OperationalError(31001, "an application's own SIGNAL")) is None
    assert _fence.mapped(ConnectorError(1213, "40001", "Deadlock found")) is None
    assert _fence.mapped(pymysql.err.OperationalError(2013, "Lost connection")) is None
    # Values go in as literals: no placeholder for any paramstyle, no quote to escape.
    sql = _fence.statement("it's %s ?", "n:1", 7)
    assert sql == "CALL assert_leader(_utf8mb4 X'69742773202573203F', _utf8mb4 X'6E3A31', 7)"


def test_async_fence_on_an_aiomysql_transaction(client: mysqlleader.Client, url: str, service: str, table: str) -> None:
    aiomysql = pytest.importorskip("aiomysql")
    parts = urllib.parse.urlsplit(url)

    async def main() -> None:
        conn = await aiomysql.connect(
            host=parts.hostname,
            port=parts.port,
            user=urllib.parse.unquote(parts.username or ""),
            password=urllib.parse.unquote(parts.password or ""),
            db=parts.path.lstrip("/"),
            autocommit=True,
        )
        try:
            async with mysqlleader.aio.Elector(client, service, node_id="a", lease=LEASE, resign_on_close=False) as elector:
                assert await elector.wait_for_leadership(10)
                term = elector.term
                await conn.begin()
                async with conn.cursor() as cur:
                    await cur.execute(f"INSERT INTO `{table}` VALUES (%s, %s)", (1, term))
                assert await elector.fence(conn) == term
                await conn.commit()
                # No transaction open: refused, and the elector still leads.
                with pytest.raises(mysqlleader.UsageError):
                    await elector.fence(conn)
                assert elector.is_leader
                # An operator moves the seat: refused, not leading at once, nothing committed.
                await asyncio.to_thread(client.force_leader, service, "b", LEASE)
                await conn.begin()
                async with conn.cursor() as cur:
                    await cur.execute(f"INSERT INTO `{table}` VALUES (%s, %s)", (2, term))
                with pytest.raises(mysqlleader.NotLeaderError) as refused:
                    await elector.fence(conn)
                assert not elector.is_leader, "still leading right after the refused fence raised"
                assert refused.value.current_term == term + 1
                await conn.rollback()
                async with conn.cursor() as cur:
                    await cur.execute("SELECT 1")
                    assert await cur.fetchall() == ((1,),)
        finally:
            conn.close()

    asyncio.run(main())
    assert ids(url, table) == [1]
