"""Transactions and fencing: Client.transaction(), Client.fenced(), commit/rollback, the context
manager, parameters, the spent state, and the share lock that holds off a takeover."""

from __future__ import annotations

import decimal
import threading
import time
from typing import Iterator

import pytest

import mysqlleader
from conftest import query


@pytest.fixture
def table(url: str, request: pytest.FixtureRequest) -> Iterator[str]:
    name = "t_" + "".join(ch for ch in request.node.name if ch.isalnum())[:40]
    query(url, f"DROP TABLE IF EXISTS `{name}`")
    query(url, f"CREATE TABLE `{name}` (id INT PRIMARY KEY, s VARCHAR(64) NULL, b VARBINARY(16) NULL, "
               f"n BIGINT NULL, f DOUBLE NULL, d DECIMAL(10,3) NULL, flag TINYINT NULL)")
    yield name
    query(url, f"DROP TABLE IF EXISTS `{name}`")


def rows(url: str, table: str) -> list:
    return query(url, f"SELECT id, s, b, n, f, d, flag FROM `{table}` ORDER BY id")


def test_commit_and_parameters(client: mysqlleader.Client, url: str, table: str) -> None:
    with client.transaction() as tx:
        assert tx.term is None
        changed = tx.execute(
            f"INSERT INTO `{table}` VALUES (?, ?, ?, ?, ?, ?, ?)",
            [1, "grüße", b"\x01\xff", -(2**62), 1.25, decimal.Decimal("3.141"), True],
        )
        assert changed == 1
        assert tx.execute(f"INSERT INTO `{table}` (id, s) VALUES (?, ?)", (2, None)) == 1
        assert rows(url, table) == [], "not visible before the commit"
    assert rows(url, table) == [
        (1, "grüße", b"\x01\xff", -(2**62), 1.25, decimal.Decimal("3.141"), 1),
        (2, None, None, None, None, None, None),
    ]
    assert tx.closed
    with client.transaction() as tx:
        assert tx.execute(f"UPDATE `{table}` SET n = n + 1 WHERE id >= ?", [1]) == 1
        assert tx.execute(f"DELETE FROM `{table}` WHERE id = 2") == 1


def test_an_exception_rolls_back(client: mysqlleader.Client, url: str, table: str) -> None:
    with pytest.raises(RuntimeError):
        with client.transaction() as tx:
            tx.execute(f"INSERT INTO `{table}` (id) VALUES (1)")
            raise RuntimeError("boom")
    assert tx.closed
    assert rows(url, table) == []


def test_explicit_commit_rollback_and_close(client: mysqlleader.Client, url: str, table: str) -> None:
    tx = client.transaction()
    tx.execute(f"INSERT INTO `{table}` (id) VALUES (1)")
    tx.rollback()
    tx.rollback()  # always allowed
    with pytest.raises(mysqlleader.InvalidStateError):
        tx.execute(f"INSERT INTO `{table}` (id) VALUES (2)")
    tx.close()
    tx.close()  # idempotent
    with pytest.raises(mysqlleader.InvalidStateError, match="closed"):
        tx.commit()

    tx = client.transaction()
    tx.execute(f"INSERT INTO `{table}` (id) VALUES (3)")
    tx.commit()
    with pytest.raises(mysqlleader.InvalidStateError):
        tx.commit()
    with tx:  # leaving the block after an explicit commit only closes
        pass
    assert [r[0] for r in rows(url, table)] == [3]

    tx = client.transaction()
    tx.execute(f"INSERT INTO `{table}` (id) VALUES (4)")
    tx.close()  # rolls back what was not committed
    assert [r[0] for r in rows(url, table)] == [3]


def test_a_failed_statement_spends_the_transaction(client: mysqlleader.Client, url: str, table: str) -> None:
    with pytest.raises(mysqlleader.InvalidStateError):
        with client.transaction() as tx:
            tx.execute(f"INSERT INTO `{table}` (id) VALUES (1)")
            with pytest.raises(mysqlleader.ServerError):
                tx.execute(f"INSERT INTO `{table}` (id) VALUES (1)")  # duplicate key
            with pytest.raises(mysqlleader.InvalidStateError, match="roll it back"):
                tx.execute(f"INSERT INTO `{table}` (id) VALUES (2)")
            # leaving the block "normally" must not commit a spent transaction
    assert rows(url, table) == []


def test_fenced_write_commits_while_leading(client: mysqlleader.Client, url: str, service: str, table: str) -> None:
    term = client.campaign(service, "a", 10).term
    with client.fenced(service, "a", term) as tx:
        assert tx.term == term
        tx.execute(f"INSERT INTO `{table}` (id, n) VALUES (?, ?)", [1, term])
    assert rows(url, table)[0][3] == term


def test_fenced_with_a_stale_term_writes_nothing(client: mysqlleader.Client, url: str, service: str, table: str) -> None:
    client.campaign(service, "a", 10)
    client.force_leader(service, "b", 10)
    with pytest.raises(mysqlleader.NotLeaderError):
        client.fenced(service, "a", 1)
    tx = client.transaction()
    tx.execute(f"INSERT INTO `{table}` (id) VALUES (1)")
    with pytest.raises(mysqlleader.NotLeaderError):
        tx.assert_leader(service, "a", 1)
    with pytest.raises(mysqlleader.InvalidStateError):
        tx.execute(f"INSERT INTO `{table}` (id) VALUES (2)")
    with pytest.raises(mysqlleader.InvalidStateError):
        tx.commit()
    tx.rollback()
    tx.close()
    assert rows(url, table) == [], "the write made before the failed assert_leader was rolled back too"


def test_assert_leader_holds_off_a_takeover_until_commit(client: mysqlleader.Client, url: str, service: str, table: str) -> None:
    # While the fenced transaction is open, a takeover cannot commit: force_leader waits at most
    # 1 s for the row lock (bounded server-side work) and fails with a transient lock-wait error,
    # changing nothing; after the commit it goes through.
    term = client.campaign(service, "a", 10).term
    other = mysqlleader.Client(url, request_timeout=20)
    with client.fenced(service, "a", term) as tx:
        check = tx.assert_leader(service, "a", term)
        assert check.is_leader and check.term == term
        with pytest.raises(mysqlleader.ServerError) as refused:
            other.force_leader(service, "b", 10)
        assert refused.value.server_code == 1205 and refused.value.transient
        assert other.current_leader(service).leader_id == "a", "no takeover committed while fenced"
        tx.execute(f"INSERT INTO `{table}` (id, n) VALUES (1, ?)", [term])
    forced = other.force_leader(service, "b", 10)
    other.close()
    assert forced.term == term + 1
    assert rows(url, table)[0][3] == term


def test_transaction_collected_without_close_rolls_back(client: mysqlleader.Client, url: str, table: str) -> None:
    import gc

    tx = client.transaction()
    tx.execute(f"INSERT INTO `{table}` (id) VALUES (1)")
    finalizer = tx._finalizer
    before = mysqlleader._handle.released_count["Transaction"]
    del tx
    gc.collect()
    assert not finalizer.alive
    assert mysqlleader._handle.released_count["Transaction"] == before + 1
    assert rows(url, table) == []
    # and the row lock went with it: the same key can be written now
    with client.transaction() as tx:
        tx.execute(f"INSERT INTO `{table}` (id) VALUES (1)")


def test_statement_timeout_is_the_request_timeout(url: str) -> None:
    with mysqlleader.Client(url, request_timeout=0.5) as client:
        tx = client.transaction()
        started = time.monotonic()
        with pytest.raises(mysqlleader.DatabaseConnectionError) as info:
            tx.execute("DO SLEEP(5)")
        assert time.monotonic() - started < 4
        assert info.value.transient
        tx.close()


# Issue 26, item 2: text that would end the transaction is refused before anything is sent.

ENDS_IT = [
    "INSERT INTO `{t}` (id) VALUES (100); COMMIT; DO SLEEP(0.2); INSERT INTO `{t}` (id) VALUES (101)",
    "INSERT INTO `{t}` (id) VALUES (100); INSERT INTO `{t}` (id) VALUES (101)",
    "COMMIT",
    "ROLLBACK",
    "START TRANSACTION",
    "BEGIN",
    "SET autocommit = 1",
    "CREATE TABLE `{t}_x` (a INT)",  # fenced only: a plain transaction may run DDL
]


@pytest.mark.parametrize("sql", ENDS_IT)
def test_a_statement_that_would_end_the_transaction_is_refused(
    client: mysqlleader.Client, url: str, service: str, table: str, sql: str
) -> None:
    """Before: the first form committed row 101 outside the fence (fenced), and a plain
    transaction's rollback() left both rows committed."""
    term = client.campaign(service, "a", 10).term
    begins = [client.transaction, lambda: client.fenced(service, "a", term)]
    for begin in begins[1:] if sql.startswith("CREATE") else begins:
        tx = begin()
        tx.execute(f"INSERT INTO `{table}` (id) VALUES (1)")
        with pytest.raises(mysqlleader.UsageError) as info:
            tx.execute(sql.format(t=table))
        assert info.value.parameter == "sql" and not info.value.transient, info.value
        assert "sql" in str(info.value)
        tx.rollback()
        assert rows(url, table) == [], f"{sql}: something committed"
    assert query(url, f"SHOW TABLES LIKE '{table}_x'") == []
