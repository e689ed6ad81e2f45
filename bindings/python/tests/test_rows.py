"""Reads in the library's own fenced transaction (issue 26): Transaction.query with its rows,
lastrowid, executemany, binary data with NUL bytes, NULL vs empty, dates and numbers, the
refusal of multi-statement text, a stale leader's job refused with nothing committed; the
same through mysqlleader.aio."""

from __future__ import annotations

import asyncio
import datetime
import decimal
from typing import Iterator

import pytest

import mysqlleader
import mysqlleader.aio
from conftest import query


@pytest.fixture
def jobs(url: str, request: pytest.FixtureRequest) -> Iterator[str]:
    name = "j_" + "".join(ch for ch in request.node.name if ch.isalnum())[:40]
    query(url, f"DROP TABLE IF EXISTS `{name}`")
    query(url, f"CREATE TABLE `{name}` (id INT AUTO_INCREMENT PRIMARY KEY, state VARCHAR(16) NOT NULL, "
               f"note VARCHAR(16) NULL, payload VARBINARY(16) NULL, at DATETIME(6) NULL, day DATE NULL, "
               f"amount DECIMAL(10,2) NULL, ratio DOUBLE NULL)")
    query(url, f"INSERT INTO `{name}` (state, note) VALUES ('new', 'a'), ('new', 'b'), ('done', 'c')")
    yield name
    query(url, f"DROP TABLE IF EXISTS `{name}`")


def test_fenced_read_then_write(client: mysqlleader.Client, url: str, service: str, jobs: str) -> None:
    term = client.campaign(service, "a", 10).term
    with client.fenced(service, "a", term) as tx:
        rows = tx.query(f"SELECT id, state, note FROM `{jobs}` WHERE state = ? ORDER BY id FOR UPDATE", ["new"])
        assert rows == [(1, "new", "a"), (2, "new", "b")]
        for job_id, _, note in rows:
            assert tx.execute(f"UPDATE `{jobs}` SET state = 'done', note = ? WHERE id = ?", [note + "!", job_id]) == 1
        assert tx.query(f"SELECT COUNT(*) FROM `{jobs}` WHERE state = 'new'") == [(0,)]
    assert query(url, f"SELECT id, state, note FROM `{jobs}` ORDER BY id") == [
        (1, "done", "a!"), (2, "done", "b!"), (3, "done", "c")]


def test_lastrowid_and_executemany(client: mysqlleader.Client, url: str, jobs: str) -> None:
    with client.transaction() as tx:
        assert tx.lastrowid is None
        assert tx.execute(f"INSERT INTO `{jobs}` (state) VALUES (?)", ["x"]) == 1
        assert tx.lastrowid == 4
        assert tx.executemany(f"INSERT INTO `{jobs}` (state, note) VALUES (?, ?)", [("y", "1"), ("z", None)]) == 2
        assert tx.lastrowid == 6
        assert tx.query(f"SELECT state FROM `{jobs}` WHERE id = ?", [5]) == [("y",)]
        assert tx.lastrowid is None, "a SELECT generates no id"
        assert tx.query(f"INSERT INTO `{jobs}` (state) VALUES ('w')") == []
        assert tx.lastrowid == 7
    assert query(url, f"SELECT id, state, note FROM `{jobs}` WHERE id > 3 ORDER BY id") == [
        (4, "x", None), (5, "y", "1"), (6, "z", None), (7, "w", None)]


def test_binary_null_empty_and_types(client: mysqlleader.Client, url: str, jobs: str) -> None:
    payload = b"\x00ab\xff\x00"
    at = datetime.datetime(2024, 5, 1, 12, 0, 0, 500000)
    with client.transaction() as tx:
        tx.execute(f"UPDATE `{jobs}` SET payload = ?, note = ?, at = ?, day = ?, amount = ?, ratio = ? WHERE id = 1",
                   [payload, "", at, datetime.date(2024, 5, 2), decimal.Decimal("12.5"), 0.25])
        tx.execute(f"UPDATE `{jobs}` SET note = ?, payload = ? WHERE id = 2", [None, b""])
        # With parameters (the binary protocol) and without (the text protocol): the same values.
        for sql, params in ((f"SELECT payload, LENGTH(payload), note, at, day, amount, ratio FROM `{jobs}` "
                             f"WHERE id IN (?, ?) ORDER BY id", [1, 2]),
                            (f"SELECT payload, LENGTH(payload), note, at, day, amount, ratio FROM `{jobs}` "
                             f"WHERE id IN (1, 2) ORDER BY id", [])):
            assert tx.query(sql, params) == [
                (payload, 5, "", "2024-05-01 12:00:00.500000", "2024-05-02", decimal.Decimal("12.50"), 0.25),
                (b"", 0, None, None, None, None, None),
            ]
        assert tx.query("SELECT ?, ?", ["grüße", b"\xff\xfe"]) == [("grüße", b"\xff\xfe")]
        assert tx.query("SELECT CAST(? AS TIME)", [datetime.timedelta(hours=-1, minutes=-30)]) == [("-01:30:00",)]
        assert tx.query("SELECT ?", [True]) == [("1",)]
    assert query(url, f"SELECT payload, note FROM `{jobs}` ORDER BY id") == [(payload, ""), (b"", None), (None, "c")]
    assert datetime.datetime.fromisoformat("2024-05-01 12:00:00.500000") == at


def test_query_keeps_the_rules(client: mysqlleader.Client, url: str, service: str, jobs: str) -> None:
    term = client.campaign(service, "a", 10).term
    with client.fenced(service, "a", term) as tx:
        tx.execute(f"UPDATE `{jobs}` SET state = 'again' WHERE id = 3")
        with pytest.raises(mysqlleader.UsageError) as info:
            tx.query(f"SELECT id FROM `{jobs}`; UPDATE `{jobs}` SET state = 'evil'")
        assert info.value.parameter == "sql"
        with pytest.raises(mysqlleader.InvalidStateError):
            tx.query("SELECT 1")
        tx.rollback()
    with client.transaction() as tx:
        with pytest.raises(mysqlleader.UsageError):
            tx.query("COMMIT")
        tx.rollback()
    with client.transaction() as tx:
        with pytest.raises(TypeError):
            tx.query("SELECT ?", [object()])
    assert query(url, f"SELECT state FROM `{jobs}` WHERE id = 3") == [("done",)]


def test_stale_leaders_query_is_refused(client: mysqlleader.Client, url: str, service: str, jobs: str) -> None:
    term = client.campaign(service, "a", 10).term
    client.force_leader(service, "b", 10)
    with client.transaction() as tx:
        tx.execute(f"UPDATE `{jobs}` SET state = 'stale' WHERE id = 1")
        with pytest.raises(mysqlleader.NotLeaderError):
            tx.assert_leader(service, "a", term)
        with pytest.raises(mysqlleader.InvalidStateError):
            tx.query(f"SELECT id FROM `{jobs}` FOR UPDATE")
        tx.rollback()
    with pytest.raises(mysqlleader.NotLeaderError):
        client.fenced(service, "a", term)
    assert query(url, f"SELECT state FROM `{jobs}` ORDER BY id") == [("new",), ("new",), ("done",)]


def test_aio_fenced_read_then_write(url: str, service: str, jobs: str) -> None:
    async def main() -> None:
        async with mysqlleader.aio.Elector(url, service, node_id="a", lease=10) as e:
            assert await e.wait_for_leadership(30)
            tx = await e.fenced()
            with tx:
                rows = await asyncio.to_thread(tx.query, f"SELECT id FROM `{jobs}` WHERE state = ? FOR UPDATE", ["new"])
                assert rows == [(1,), (2,)]
                changed = await asyncio.to_thread(
                    tx.executemany, f"UPDATE `{jobs}` SET state = 'done' WHERE id = ?", [[i] for (i,) in rows])
                assert changed == 2

    asyncio.run(main())
    assert query(url, f"SELECT state FROM `{jobs}`") == [("done",)] * 3
