"""Every procedure call, as module function and as Client method, against the real server;
migrate, install_sql and the small helpers."""

from __future__ import annotations

import datetime
import os
import threading
import time

import pytest

import mysqlleader
from conftest import Database, history, query


def test_version_and_default_node_id() -> None:
    assert mysqlleader.version().startswith(f"{mysqlleader._native.VERSION_MAJOR}.{mysqlleader._native.VERSION_MINOR}.")
    node = mysqlleader.default_node_id()
    assert node.endswith(f":{os.getpid()}")
    assert 1 <= len(node) <= mysqlleader.ID_MAX_CHARS


def test_install_sql_is_the_whole_script() -> None:
    sql = mysqlleader.install_sql()
    assert "DELIMITER" in sql
    for name in ("campaign", "am_i_leader", "current_leader", "force_leader", "reelect", "resign",
                 "assert_leader", "set_expiry_event"):
        assert f"PROCEDURE {name}" in sql or f"PROCEDURE `{name}`" in sql, name
    assert "leader_election_history" in sql


def test_migrate_installs_once(fresh_db: Database) -> None:
    applied = mysqlleader.migrate(fresh_db.url)
    assert applied >= 3
    assert mysqlleader.migrate(fresh_db.url) == 0
    with mysqlleader.Client(fresh_db.url) as client:
        assert client.migrate() == 0
    tables = {row[0] for row in query(fresh_db.url, "SHOW TABLES")}
    assert {"leader_election", "leader_election_history"} <= tables


def test_migrate_from_many_threads_at_once(fresh_db: Database) -> None:
    results: list = []

    def run() -> None:
        results.append(mysqlleader.migrate(fresh_db.url))

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(150)
    assert len(results) == 3
    assert sum(results) >= 3 and sorted(results)[:2] == [0, 0]


def test_the_module_functions(url: str, service: str) -> None:
    # Nobody has led: term 0, vacant.
    assert mysqlleader.current_leader(url, service) == mysqlleader.CurrentLeader(None, 0, 0)
    assert mysqlleader.am_i_leader(url, service, "a") == mysqlleader.LeaderCheck(False, 0, 0)

    won = mysqlleader.campaign(url, service, "a", 10)
    assert won.is_leader and won.leader_id == "a" and won.term == 1
    assert 9_000 < won.lease_remaining_ms <= 10_000
    assert won.lease_remaining == datetime.timedelta(milliseconds=won.lease_remaining_ms)

    lost = mysqlleader.campaign(url, service, "b", datetime.timedelta(seconds=10))
    assert not lost.is_leader and lost.leader_id == "a" and lost.term == 1

    check = mysqlleader.am_i_leader(url, service, "a")
    assert check.is_leader and check.term == 1 and check.lease_remaining_ms > 0
    assert mysqlleader.assert_leader(url, service, "a", 1).is_leader
    current = mysqlleader.current_leader(url, service)
    assert current.leader_id == "a" and current.term == 1

    forced = mysqlleader.force_leader(url, service, "b", 10.0)
    assert forced == mysqlleader.CampaignResult(True, "b", 2, forced.lease_remaining_ms)

    assert mysqlleader.resign(url, service, "a") == mysqlleader.ResignResult(False, 2)
    assert mysqlleader.reelect(url, service) == mysqlleader.ReelectResult("b", 2)
    assert mysqlleader.current_leader(url, service) == mysqlleader.CurrentLeader(None, 2, 0)
    assert mysqlleader.reelect(url, service) == mysqlleader.ReelectResult(None, 2)

    assert mysqlleader.campaign(url, service, "c", 10).term == 3
    assert mysqlleader.resign(url, service, "c") == mysqlleader.ResignResult(True, 3)

    assert history(url, service) == [
        (1, "a", "elected", "forced_out"),
        (2, "b", "forced", "reelected"),
        (3, "c", "elected", "resigned"),
    ]


def test_the_client_methods(client: mysqlleader.Client, url: str, service: str) -> None:
    first = client.campaign(service, "n1", 5)
    assert first.is_leader and first.term == 1
    renewed = client.campaign(service, "n1", 5)
    assert renewed.is_leader and renewed.term == 1, "a renew keeps the term"
    assert client.am_i_leader(service, "n1").is_leader
    assert not client.am_i_leader(service, "n2").is_leader
    assert client.current_leader(service).leader_id == "n1"
    asserted = client.assert_leader(service, "n1", 1)
    assert asserted.is_leader and asserted.term == 1 and 0 < asserted.lease_remaining_ms <= 5000
    assert client.force_leader(service, "n2", datetime.timedelta(milliseconds=5000)).term == 2
    assert client.reelect(service).previous_leader_id == "n2"
    assert client.campaign(service, "n1", 5).term == 3
    assert client.resign(service, "n1").resigned
    assert [row[3] for row in history(url, service)] == ["forced_out", "reelected", "resigned"]


def test_ids_are_compared_byte_for_byte(client: mysqlleader.Client, service: str) -> None:
    assert client.campaign(service, "Node ü", 5).is_leader
    assert not client.am_i_leader(service, "node ü").is_leader
    assert not client.am_i_leader(service, "Node ü ").is_leader
    assert client.current_leader(service).leader_id == "Node ü"
    long_id = "λ" * mysqlleader.ID_MAX_CHARS  # 256 bytes of UTF-8: the longest id there is
    assert client.force_leader(service, long_id, 5).leader_id == long_id


def test_lease_expires_on_the_database_clock(client: mysqlleader.Client, service: str) -> None:
    assert client.campaign(service, "a", 0.3).is_leader
    assert not client.campaign(service, "b", 5).is_leader
    time.sleep(0.5)
    taken = client.campaign(service, "b", 5)
    assert taken.is_leader and taken.term == 2


def test_set_expiry_event(client: mysqlleader.Client, url: str) -> None:
    try:
        assert client.set_expiry_event(True) == mysqlleader.ExpiryEventResult(True)
        status = query(url, "SELECT STATUS FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE() "
                            "AND EVENT_NAME = 'leader_election_expire'")
        assert status and status[0][0] == "ENABLED"
        assert mysqlleader.set_expiry_event(url, False) == mysqlleader.ExpiryEventResult(False)
    finally:
        client.set_expiry_event(False)


def test_request_timeout(client: mysqlleader.Client, url: str) -> None:
    assert client.request_timeout == datetime.timedelta(milliseconds=mysqlleader.DEFAULT_REQUEST_TIMEOUT_MS)
    client.request_timeout = 2.5
    assert client.request_timeout == datetime.timedelta(seconds=2.5)
    client.request_timeout = datetime.timedelta(seconds=3)
    assert client.request_timeout == datetime.timedelta(seconds=3)
    with mysqlleader.Client(url, request_timeout=1) as c:
        assert c.request_timeout == datetime.timedelta(seconds=1)
        assert c.current_leader("nobody").term == 0


def test_client_is_shared_by_threads(client: mysqlleader.Client, service: str) -> None:
    winners: list = []
    errors: list = []

    def run(node: str) -> None:
        try:
            if client.campaign(service, node, 10).is_leader:
                winners.append(node)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(f"t{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert len(winners) == 1
    assert client.current_leader(service).leader_id == winners[0]


def test_library_path_is_the_loaded_file() -> None:
    path = mysqlleader.library_path()
    assert os.path.isfile(path)
    assert os.path.basename(path).startswith("libmysqlleader")


@pytest.mark.parametrize("lease", [0.001, datetime.timedelta(milliseconds=1), 86_400, datetime.timedelta(days=1)])
def test_lease_bounds_are_accepted(client: mysqlleader.Client, service: str, lease: object) -> None:
    assert client.force_leader(service, "x", lease).is_leader  # type: ignore[arg-type]


def test_reads_never_leave_a_lock_or_an_old_snapshot_behind(client: mysqlleader.Client, url: str, service: str) -> None:
    """The package's calls run on the library's own connections with autocommit on: a read
    leaves no transaction open (its share lock would block every campaign), and the next read
    sees what another client committed in between (issue 15 item 7)."""
    query(url, "CREATE TABLE IF NOT EXISTS autocommit_probe (v INT)")
    with client.transaction() as tx:  # a connection of the same pool, as the calls use
        tx.execute("DELETE FROM autocommit_probe")
        tx.execute("INSERT INTO autocommit_probe SELECT @@session.autocommit")
    assert query(url, "SELECT v FROM autocommit_probe") == [(1,)], "the library's session runs with autocommit on"
    client.campaign(service, "a", 10)
    assert client.am_i_leader(service, "a").is_leader
    with mysqlleader.Client(url, request_timeout=5) as other:
        assert other.force_leader(service, "b", 10).term == 2, "no share lock of the read was left behind"
    check = client.am_i_leader(service, "a")
    assert not check.is_leader and check.term == 2, "the read after the change sees it"


def test_a_pep249_client_with_default_settings_blocks_nothing(client: mysqlleader.Client, url: str, service: str) -> None:
    """PyMySQL with its defaults (autocommit off) calling the read procedures itself: the reads take
    no lock, and end the transaction they opened, so the driver's never-committed session holds
    off no takeover and its next read sees the change; where an answer could come from an open
    transaction's old snapshot, the read is refused, naming the procedure, instead of answering
    from it (migration V7; sql/routines)."""
    import urllib.parse

    import pymysql

    parts = urllib.parse.urlsplit(url)
    pep249 = pymysql.connect(host=parts.hostname, port=parts.port or 3306,
                             user=urllib.parse.unquote(parts.username or ""),
                             password=urllib.parse.unquote(parts.password or ""),
                             database=parts.path.lstrip("/"))  # driver defaults: autocommit off
    try:
        client.campaign(service, "a", 10)
        with pep249.cursor() as cur:
            cur.execute("CALL am_i_leader(%s, %s)", (service, "a"))
            assert cur.fetchone()[0] == 1
        # The driver's transaction is still open: a takeover goes through at once.
        started = time.monotonic()
        assert client.force_leader(service, "b", 10).term == 2
        assert time.monotonic() - started < 0.9, "force_leader did not wait for a lock of the reader's"
        with pep249.cursor() as cur:
            # The first read ended the transaction it opened: this one answers afresh.
            cur.execute("CALL am_i_leader(%s, %s)", (service, "a"))
            assert cur.fetchone()[:2] == (0, 2)
        pep249.begin()  # a transaction of the driver's own is open: its snapshot may be old
        with pep249.cursor() as cur:
            with pytest.raises(pymysql.err.MySQLError) as refused:
                cur.execute("CALL am_i_leader(%s, %s)", (service, "a"))
            assert "am_i_leader needs autocommit on" in str(refused.value)
        pep249.commit()
        with pep249.cursor() as cur:
            cur.execute("CALL current_leader(%s)", (service,))
            assert cur.fetchone()[:2] == ("b", 2)
    finally:
        pep249.close()
