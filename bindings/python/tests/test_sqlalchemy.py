"""``Elector.fence`` on SQLAlchemy's objects as users write them, against the real server: a Core
``Connection`` in ``with engine.begin() as conn:``, an ORM ``Session`` in
``with Session(engine) as s, s.begin():``, and their asyncio faces (``AsyncConnection``,
``AsyncSession``) with ``mysqlleader.aio``. The package never imports SQLAlchemy itself.

Each: a fenced write commits while the node leads; after an operator forces another node in
(``CALL force_leader`` on an admin connection of its own) the fence raises NotLeaderError, the
elector no longer leads the moment it has raised (its next renew is 4 s away), SQLAlchemy rolls
the transaction back and the write is absent; a fence with no transaction begun is a UsageError.
"""

from __future__ import annotations

import asyncio
from typing import Any, Iterator, List

import pytest

sqlalchemy = pytest.importorskip("sqlalchemy")

from sqlalchemy import Column, Integer, event, text  # noqa: E402
from sqlalchemy.orm import DeclarativeBase, Session  # noqa: E402

import mysqlleader  # noqa: E402
import mysqlleader.aio  # noqa: E402
from conftest import query  # noqa: E402

#: The next renew is lease / 5 = 4 s away: only the fence can tell the elector in time.
LEASE = 20


@pytest.fixture
def table(url: str, service: str) -> Iterator[str]:
    name = "sa_" + str(abs(hash(service)))
    query(url, f"CREATE TABLE `{name}` (id INT PRIMARY KEY, term BIGINT UNSIGNED NOT NULL)")
    yield name
    query(url, f"DROP TABLE IF EXISTS `{name}`")


def ids(url: str, table: str) -> List[int]:
    return [row[0] for row in query(url, f"SELECT id FROM `{table}` ORDER BY id")]


def force_in(url: str, service: str, node: str) -> None:
    """An operator installs ``node``, over an admin connection of its own (not the elector's)."""
    query(url, "CALL force_leader(%s, %s, %s)", (service, node, LEASE * 1000))


def sa_url(url: str, driver: str) -> str:
    assert url.startswith("mysql://"), url
    return f"mysql+{driver}://" + url[len("mysql://"):]


@pytest.fixture
def engine(url: str) -> Iterator[Any]:
    pytest.importorskip("pymysql")
    engine = sqlalchemy.create_engine(sa_url(url, "pymysql"))
    yield engine
    engine.dispose()


def rollbacks_of(engine: Any) -> List[int]:
    """A list that grows by one each time SQLAlchemy rolls a transaction back on ``engine``."""
    seen: List[int] = []

    @event.listens_for(engine, "rollback")
    def rolled_back(conn: Any) -> None:
        seen.append(1)

    return seen


def test_fence_on_a_core_connection(client: mysqlleader.Client, url: str, service: str, table: str, engine: Any) -> None:
    insert = text(f"INSERT INTO `{table}` VALUES (:id, :term)")
    with mysqlleader.Elector(client, service, node_id="a", lease=LEASE, resign_on_close=False) as elector:
        assert elector.wait_for_leadership(10)
        term = elector.term

        # 1. Leading: the fenced write commits with the block.
        with engine.begin() as conn:
            conn.execute(insert, {"id": 1, "term": term})
            assert elector.fence(conn) == term
        assert ids(url, table) == [1]

        # 2. Nothing begun yet (commit as you go, before the first statement): it would fence
        # nothing. Refused before any round trip; the elector still leads.
        with engine.connect() as conn:
            with pytest.raises(mysqlleader.UsageError):
                elector.fence(conn)
        assert elector.is_leader

        # 3. An operator forces b in: refused, not leading at once, rolled back, nothing written.
        force_in(url, service, "b")
        rollbacks = rollbacks_of(engine)
        leading_after: List[bool] = []
        with pytest.raises(mysqlleader.NotLeaderError) as refused:
            with engine.begin() as conn:
                conn.execute(insert, {"id": 2, "term": term})
                try:
                    elector.fence(conn)
                finally:
                    leading_after.append(elector.is_leader)
        assert leading_after == [False], "still leading right after the refused fence raised"
        assert refused.value.sqlstate == "45001"
        assert refused.value.current_term == term + 1
        assert rollbacks == [1], "SQLAlchemy did not roll the transaction back"
        assert ids(url, table) == [1], "the write before the refused fence committed"

        # The pool's connection runs the next transaction as usual; not leading: refused at once.
        with engine.begin() as conn:
            assert conn.execute(text("SELECT 1")).scalar() == 1
            with pytest.raises(mysqlleader.NotLeaderError):
                elector.fence(conn)


def test_fence_on_an_orm_session(client: mysqlleader.Client, url: str, service: str, table: str, engine: Any) -> None:
    class Base(DeclarativeBase):
        pass

    class Row(Base):
        __tablename__ = table
        id = Column(Integer, primary_key=True, autoincrement=False)
        term = Column(Integer, nullable=False)

    with mysqlleader.Elector(client, service, node_id="a", lease=LEASE, resign_on_close=False) as elector:
        assert elector.wait_for_leadership(10)
        term = elector.term

        # 1. Leading: the fenced write commits with the block (flushed before the fence, or at
        # the commit: both in the fenced transaction).
        with Session(engine) as s, s.begin():
            s.add(Row(id=1, term=term))
            s.flush()
            assert elector.fence(s) == term
            s.add(Row(id=2, term=term))  # flushed at the commit, still fenced
        assert ids(url, table) == [1, 2]

        # 2. A session with no transaction begun.
        with Session(engine) as s:
            with pytest.raises(mysqlleader.UsageError):
                elector.fence(s)
        assert elector.is_leader

        # 3. An operator forces b in.
        force_in(url, service, "b")
        rollbacks = rollbacks_of(engine)
        leading_after: List[bool] = []
        with pytest.raises(mysqlleader.NotLeaderError) as refused:
            with Session(engine) as s, s.begin():
                s.add(Row(id=3, term=term))
                s.flush()
                try:
                    elector.fence(s)
                finally:
                    leading_after.append(elector.is_leader)
        assert leading_after == [False], "still leading right after the refused fence raised"
        assert refused.value.current_term == term + 1
        assert rollbacks == [1], "SQLAlchemy did not roll the transaction back"
        assert ids(url, table) == [1, 2], "the write before the refused fence committed"


def test_fence_rejects_what_it_cannot_fence(client: mysqlleader.Client, service: str) -> None:
    with mysqlleader.Elector(client, service, node_id="a", lease=LEASE) as elector:
        assert elector.wait_for_leadership(10)
        with pytest.raises(TypeError, match="PEP 249"):
            elector.fence(object())


def test_async_fence_on_sqlalchemy_asyncio(client: mysqlleader.Client, url: str, service: str, table: str) -> None:
    pytest.importorskip("aiomysql")
    pytest.importorskip("greenlet")
    from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

    insert = text(f"INSERT INTO `{table}` VALUES (:id, :term)")

    async def main() -> None:
        engine = create_async_engine(sa_url(url, "aiomysql"))
        rollbacks = rollbacks_of(engine.sync_engine)
        try:
            async with mysqlleader.aio.Elector(client, service, node_id="a", lease=LEASE, resign_on_close=False) as elector:
                assert await elector.wait_for_leadership(10)
                term = elector.term
                # An AsyncConnection, an AsyncSession, and a sync fence through run_sync.
                async with engine.begin() as conn:
                    await conn.execute(insert, {"id": 1, "term": term})
                    assert await elector.fence(conn) == term
                async with AsyncSession(engine) as s, s.begin():
                    await s.execute(insert, {"id": 2, "term": term})
                    assert await elector.fence(s) == term
                async with engine.begin() as conn:
                    await conn.execute(insert, {"id": 3, "term": term})
                    assert await conn.run_sync(elector.sync.fence) == term
                    assert (await conn.execute(text("SELECT 1"))).scalar() == 1
                assert await asyncio.to_thread(ids, url, table) == [1, 2, 3]
                # Nothing begun; the sync fence names the aio one.
                async with engine.connect() as conn:
                    with pytest.raises(mysqlleader.UsageError):
                        await elector.fence(conn)
                    with pytest.raises(TypeError, match="mysqlleader.aio"):
                        elector.sync.fence(conn)
                assert elector.is_leader

                await asyncio.to_thread(force_in, url, service, "b")
                leading_after: List[bool] = []
                with pytest.raises(mysqlleader.NotLeaderError) as refused:
                    async with AsyncSession(engine) as s, s.begin():
                        await s.execute(insert, {"id": 4, "term": term})
                        try:
                            await elector.fence(s)
                        finally:
                            leading_after.append(elector.is_leader)
                assert leading_after == [False], "still leading right after the refused fence raised"
                assert refused.value.current_term == term + 1
                assert rollbacks == [1], "SQLAlchemy did not roll the transaction back"
                assert await asyncio.to_thread(ids, url, table) == [1, 2, 3]
        finally:
            await engine.dispose()

    asyncio.run(main())


def test_the_readme_sqlalchemy_example_runs(fresh_db: Any, tmp_path: Any) -> None:
    import os
    import subprocess
    import sys

    from test_readme import example

    mysqlleader.migrate(fresh_db.url)  # the operator, once
    script = tmp_path / "ledger.py"
    script.write_text(example("elector.fence(session)"), encoding="utf-8")
    env = dict(os.environ, MYSQLLEADER_URL=fresh_db.url)
    result = subprocess.run([sys.executable, str(script), "w-1"], env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "w-1: wrote with SQLAlchemy at term 1" in result.stdout, result.stdout
    assert query(fresh_db.url, "SELECT id, term FROM ledger ORDER BY id") == [(1, 1), (2, 1)]
