"""Sessions (``mysqlleader.Session``): one node's electors of many services over one server
connection and one renew, against the real server.

Each session here logs in with an account of its own, made for the test, so that an admin
connection can count that session's server connections in information_schema.PROCESSLIST.
"""

from __future__ import annotations

import asyncio
import gc
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Callable, Dict, Iterator, List

import pytest

import mysqlleader
import mysqlleader.aio
from mysqlleader import EventKind, InvalidArgumentError, InvalidStateError, StopReason

from conftest import Database, history, query

SERVICES = 20
LEASE = 10  # s: long, so that a takeover within a few seconds can only be a resign's
RETRY = 0.5  # s: a session's followers look at their seats once per retry interval
SLACK = 30  # s: the longest any wait here may take
README = Path(__file__).resolve().parents[1] / "README.md"


def wait_until(condition: Callable[[], bool], timeout: float = SLACK, step: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


def account_url(url: str, user: str, password: str) -> str:
    parts = urllib.parse.urlsplit(url)
    netloc = f"{user}:{password}@{parts.hostname}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


@pytest.fixture
def make_account(server_url: str, migrated_db: Database) -> Iterator[Callable[[str], str]]:
    """Makes an account of the test's own, with every privilege on the shared migrated
    database (and nothing else); returns its URL. Dropped afterwards."""
    made: List[str] = []

    def make(tag: str) -> str:
        name = f"mls{tag}_{os.getpid()}"[:32]
        query(server_url, f"DROP USER IF EXISTS '{name}'@'%%'")
        query(server_url, f"CREATE USER '{name}'@'%%' IDENTIFIED BY 'pw-{name}'")
        query(server_url, f"GRANT ALL PRIVILEGES ON `{migrated_db.name}`.* TO '{name}'@'%%'")
        made.append(name)
        return account_url(migrated_db.url, name, f"pw-{name}")

    yield make
    for name in made:
        query(server_url, f"DROP USER IF EXISTS '{name}'@'%%'")


def connections_of(server_url: str, account_url_: str) -> int:
    """The server connections the account of ``account_url_`` holds now (an admin's view)."""
    user = urllib.parse.unquote(urllib.parse.urlsplit(account_url_).username or "")
    # By login account: while a connection runs an election procedure (SQL SECURITY DEFINER),
    # information_schema.PROCESSLIST names the procedure's definer as its USER, so a connection
    # in the middle of a call would go uncounted. performance_schema.threads keeps the login
    # user (MySQL has it on by default; scripts/testdb.sh turns it on for its MariaDB).
    if int(query(server_url, "SELECT @@performance_schema")[0][0]) == 1:
        rows = query(server_url, "SELECT COUNT(*) FROM performance_schema.threads "
                     "WHERE PROCESSLIST_USER = %s AND PROCESSLIST_ID IS NOT NULL", (user,))
    else:
        rows = query(server_url, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = %s", (user,))
    return int(rows[0][0])


class ConnectionWatch:
    """Counts the connections of some accounts every 50 ms, in a thread; keeps the largest."""

    def __init__(self, server_url: str, urls: Dict[str, str]) -> None:
        self.server_url = server_url
        self.urls = urls
        self.peak = {tag: 0 for tag in urls}
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for tag, u in self.urls.items():
                self.peak[tag] = max(self.peak[tag], connections_of(self.server_url, u))
            self.samples += 1
            self._stop.wait(0.05)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def leader_of(client: mysqlleader.Client, service: str) -> object:
    return client.current_leader(service).leader_id


def test_two_sessions_share_twenty_services(
    server_url: str, url: str, client: mysqlleader.Client, service: str, make_account: Callable[[str], str]
) -> None:
    services = [f"{service}-{i}" for i in range(SERVICES)]
    url_a, url_b = make_account("a"), make_account("b")
    assert connections_of(server_url, url_a) == connections_of(server_url, url_b) == 0
    watch = ConnectionWatch(server_url, {"a": url_a, "b": url_b})
    released = dict(mysqlleader._handle.released_count)
    try:
        session_a = mysqlleader.Session(url_a, node_id="a", lease=LEASE, retry_interval=RETRY)
        session_b = mysqlleader.Session(url_b, node_id="b", lease=LEASE, retry_interval=RETRY)
        assert session_a.node_id == "a" and not session_a.closed
        with session_b:
            # a first: it leads every service.
            electors_a = [session_a.elector(s) for s in services]
            for e in electors_a:
                assert isinstance(e, mysqlleader.Elector)
                assert e.wait_for_leadership(SLACK), e.last_call_error
                assert (e.node_id, e.leader_id) == ("a", "a")
            # then b: it follows everywhere, and learns that a leads.
            led_at: Dict[str, float] = {}  # when each of b's electors began to lead (its event)

            def note(service_id: str) -> Callable[[mysqlleader.Event], None]:
                def on_event(event: mysqlleader.Event) -> None:
                    if event.kind is EventKind.STARTED_LEADING:
                        led_at[service_id] = time.monotonic()

                return on_event

            electors_b = [session_b.elector(s, on_event=note(s)) for s in services]
            assert all(wait_until(lambda e=e: e.leader_id == "a") for e in electors_b)  # type: ignore[misc]
            time.sleep(3 * RETRY)  # several rounds of renews and looks
            for s, a, b in zip(services, electors_a, electors_b):
                assert a.is_leader and not b.is_leader, s
                assert b.campaigning and b.term == a.term
                assert leader_of(client, s) == "a", s  # the database agrees
            peak_before_fence = dict(watch.peak)
            # The elector API, on a session's elector: a fenced write at the term it leads at
            # (its transaction runs on a connection of the client's pool, not the session's).
            with electors_a[0].fenced() as tx:
                assert tx.term == electors_a[0].term
                tx.execute("DO 1")
            # Two connections per session (its calls, its one wake-up lock), whatever the number
            # of services; a's account also has the client pool's connection of the fenced write
            # (the contract allows a third, short-lived one).
            for tag, u in (("a", url_a), ("b", url_b)):
                now = connections_of(server_url, u)
                assert 1 <= now <= 3, f"session {tag} holds {now} connections for {SERVICES} services"

            # Closing session a resigns every seat: b leads all of them within a few of its
            # looks, long before a's 10 s leases could lapse.
            stream = electors_a[0].events()
            began = time.monotonic()
            session_a.close()
            closed_in = time.monotonic() - began
            assert session_a.closed
            for s in services:
                assert history(url, s)[0] == (1, "a", "elected", "resigned"), history(url, s)
            assert all(wait_until(lambda e=e: e.is_leader, timeout=LEASE / 2) for e in electors_b)  # type: ignore[misc]
            assert wait_until(lambda: len(led_at) == SERVICES)
            took = max(led_at.values()) - began
            print(f"session a closed in {closed_in * 1000:.0f} ms; b led all {SERVICES} after {took * 1000:.0f} ms")
            assert took < 6 * RETRY, "b's followers took the resigned seats at their next looks, not after the leases"
            for s, b in zip(services, electors_b):
                assert leader_of(client, s) == "b" and b.leader_id == "b"
                assert b.term == 2 and history(url, s)[-1][:3] == (2, "b", "elected")

            # a's Python electors are closed: their last event came, their stream ended, and
            # they behave as any closed elector.
            events = list(stream)
            assert [(ev.kind, ev.reason) for ev in events if ev.kind is not EventKind.LEADER_CHANGED] == [
                (EventKind.STOPPED_LEADING, StopReason.SHUTDOWN)
            ], events
            assert stream.ended
            for e in electors_a:
                assert e.closed
                with pytest.raises(InvalidStateError, match="the Elector is closed"):
                    e.is_leader
                e.close()  # idempotent, as any elector's
            session_a.close()  # idempotent
            assert connections_of(server_url, url_b) <= 3
        assert all(e.closed for e in electors_b), "leaving the with block closed b's electors"
        # Every handle was freed once: 2 sessions, 40 electors.
        assert mysqlleader._handle.released_count["Session"] == released["Session"] + 2
        assert mysqlleader._handle.released_count["Elector"] == released["Elector"] + 2 * SERVICES
        for s in services:
            assert history(url, s)[-1][1:] == ("b", "elected", "resigned")
    finally:
        watch.stop()
    print(f"peak connections: {watch.peak} over {watch.samples} samples ({peak_before_fence} before the fenced write)")
    assert watch.samples >= 10
    assert 1 <= watch.peak["a"] <= 3 and 1 <= watch.peak["b"] <= 3, watch.peak
    assert wait_until(lambda: connections_of(server_url, url_a) == connections_of(server_url, url_b) == 0, timeout=10), \
        "closed sessions leave no connection behind"


def test_a_second_elector_for_a_service_is_refused(client: mysqlleader.Client, service: str) -> None:
    with mysqlleader.Session(client, node_id="dup", lease=2) as session:
        first = session.elector(service)
        with pytest.raises(InvalidArgumentError) as info:
            session.elector(service)
        assert info.value.parameter == "service_id"
        assert "service_id" in str(info.value) and service in str(info.value), info.value
        assert info.value.code == mysqlleader.ResultCode.INVALID_ARGUMENT
        assert first.wait_for_leadership(SLACK) and not first.closed, "the first one is untouched"
        # Once the first is closed (it resigns its seat alone), the service is free again.
        first.close()
        second = session.elector(service)
        assert second.wait_for_leadership(SLACK) and second.term == 2
        # Other services are not affected; bad ids are refused naming service_id.
        for bad in ("", "x" * 129):
            with pytest.raises(InvalidArgumentError) as info:
                session.elector(bad)
            assert info.value.parameter == "service_id", info.value
        with pytest.raises(TypeError):
            session.elector(b"bytes")  # type: ignore[arg-type]
    assert second.closed


@pytest.mark.parametrize(
    "settings, parameter",
    [
        ({"lease": 1, "renew_interval": 0.9}, "renew_interval"),
        ({"lease": 0.05}, "lease"),
        ({"lease": 2, "retry_jitter": 1.5}, "retry_jitter"),
        ({"lease": 2, "request_timeout": 5}, "request_timeout"),
        ({"lease": 2, "drift_margin": 3}, "drift_margin"),
        ({"node_id": "n" * 129}, "node_id"),
        ({"node_id": ""}, "node_id"),
        ({"lease": -1}, "lease"),
        ({"lease": 0.0005}, "lease"),
    ],
)
def test_bad_settings_name_the_parameter(client: mysqlleader.Client, settings: Dict[str, object], parameter: str) -> None:
    released = dict(mysqlleader._handle.released_count)
    with pytest.raises(InvalidArgumentError) as info:
        mysqlleader.Session(client, **settings)  # type: ignore[arg-type]
    assert info.value.parameter == parameter, info.value
    assert parameter in str(info.value), info.value
    assert mysqlleader._handle.released_count == released, "nothing was made, nothing to free"


def test_wrong_types_are_type_errors(client: mysqlleader.Client) -> None:
    for kwargs in ({"lease": "2s"}, {"node_id": 7}, {"resign_on_close": 1}, {"retry_jitter": "0.1"}):
        with pytest.raises(TypeError):
            mysqlleader.Session(client, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        mysqlleader.Session(42)  # type: ignore[arg-type]
    with mysqlleader.Session(client, lease=2) as session:
        with pytest.raises(TypeError):
            session.elector("s", on_event="not callable")  # type: ignore[arg-type]


def free_port() -> int:
    """A loopback port with nothing listening (bound, then closed): a connection is refused."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_a_session_moves_to_its_fallback_when_its_server_refuses(client: mysqlleader.Client, url: str, service: str) -> None:
    # The first server refuses every connection at once (a transient failure): the session's
    # later calls go to its fallback, the live server, where its electors lead.
    with mysqlleader.Client(f"mysql://app:hunter2@127.0.0.1:{free_port()}/db") as dead:
        with mysqlleader.Session(dead, node_id="fb", lease=LEASE, fallback_clients=[client]) as session:
            one, two = session.elector(f"{service}-1"), session.elector(f"{service}-2")
            started = time.monotonic()
            assert one.wait_for_leadership(SLACK) and two.wait_for_leadership(SLACK)
            assert time.monotonic() - started < 5, "led within a few seconds"
            assert one.term == 1 and one.node_id == "fb"
        # The fallback's pool was the session's: its resigns went there too.
    assert history(url, f"{service}-1") == [(1, "fb", "elected", "resigned")]
    assert client.current_leader(f"{service}-2").leader_id is None
    assert not client.closed, "the session did not close its fallback client"


def test_an_asyncio_session_takes_fallback_clients(client: mysqlleader.Client, service: str) -> None:
    async def main() -> None:
        dead = f"mysql://app:x@127.0.0.1:{free_port()}/db"
        async with mysqlleader.aio.Session(dead, node_id="aiofb", lease=LEASE, fallback_clients=[client]) as session:
            assert await session.elector(service).wait_for_leadership(SLACK)

    asyncio.run(main())
    assert client.current_leader(service).term == 1


def test_fallback_clients_must_be_clients(client: mysqlleader.Client, url: str) -> None:
    released = dict(mysqlleader._handle.released_count)
    for bad, match in (
        (client, "fallback_clients must be a sequence"),
        (url, "fallback_clients must be a sequence"),
        ([url], r"fallback_clients\[0\] must be a mysqlleader.Client, not str"),
        ([client, None], r"fallback_clients\[1\] must be a mysqlleader.Client, not NoneType"),
    ):
        with pytest.raises(TypeError, match=match):
            mysqlleader.Session(client, fallback_clients=bad)  # type: ignore[arg-type]
    assert mysqlleader._handle.released_count == released, "nothing was made, nothing to free"
    # A closed fallback client is refused as for an Elector (its handle is in use during the call).
    closed = mysqlleader.Client(url)
    closed.close()
    with pytest.raises(InvalidStateError):
        mysqlleader.Session(client, fallback_clients=[closed])
    with pytest.raises(InvalidStateError):
        mysqlleader.Elector(client, "s", fallback_clients=[closed])


def os_threads() -> int:
    """The threads of this process as the kernel counts them (Python's and the library's)."""
    return len(os.listdir("/proc/self/task"))


def test_a_sessions_electors_share_one_callback_thread(client: mysqlleader.Client, url: str, service: str) -> None:
    """Events of a session's electors are delivered by one thread of the session, not one per
    service (issue 42): 200 more electors add no thread, and each still gets its own events (an
    operator forces 20 seats away: those 20 electors, and only they, say STOPPED_LEADING)."""
    with mysqlleader.Session(client, node_id="threads", lease=LEASE) as session:
        first = session.elector(f"{service}-0")
        assert first.wait_for_leadership(SLACK)
        before = os_threads()
        # Each elector's events from its start (a callback given with it), so that none is
        # missed and none counts twice: a stream opened once every elector led got, in CI67, a
        # STARTED_LEADING the loaded delivery thread brought after the stream opened.
        got: List[List[mysqlleader.Event]] = [[] for _ in range(200)]
        electors = [session.elector(f"{service}-{i + 1}", on_event=got[i].append) for i in range(200)]
        assert wait_until(lambda: all(e.is_leader for e in electors)), "every elector leads"

        def kinds(events: List[mysqlleader.Event], kind: EventKind) -> int:
            return sum(1 for ev in events if ev.kind == kind)

        # LEADER_CHANGED comes before STARTED_LEADING: once each elector said it started, it
        # has said everything about its start.
        assert wait_until(lambda: all(kinds(g, EventKind.STARTED_LEADING) == 1 for g in got)), \
            f"each elector said STARTED_LEADING once: {[g for g in got if kinds(g, EventKind.STARTED_LEADING) != 1][:3]}"
        added = os_threads() - before
        assert added <= 1, f"200 session electors added {added} threads (one delivery thread serves them all)"
        said = [list(g) for g in got]
        for i in range(20):
            query(url, "CALL force_leader(%s, %s, %s)", (f"{service}-{i + 1}", "elsewhere", LEASE * 1000))
        assert wait_until(lambda: all(kinds(g, EventKind.STOPPED_LEADING) == 1 for g in got[:20])), \
            f"each forced elector said STOPPED_LEADING once: {got[:3]}"
        others = [(i + 21, g) for i, g in enumerate(got[20:]) if g != said[i + 20]]
        assert not others, f"no event for the seats not forced: {others[:3]}"


def test_a_closed_session_says_so(client: mysqlleader.Client, service: str) -> None:
    session = mysqlleader.Session(client, node_id="closed", lease=2)
    assert "electors=0" in repr(session)
    session.close()
    assert session.closed and "closed" in repr(session)
    with pytest.raises(InvalidStateError, match="the Session is closed"):
        session.elector(service)
    session.close()
    with session:  # leaving closes again: still nothing
        pass
    assert client.current_leader(service).term == 0, "nothing campaigned"


def test_a_sessions_metrics_are_one_valid_exposition(client: mysqlleader.Client, service: str) -> None:
    with mysqlleader.Session(client, node_id="metrics", lease=2) as session:
        electors = [session.elector(f"{service}-{i}") for i in range(3)]
        for e in electors:
            assert e.wait_for_leadership(timeout=10)
        # Detailed: HELP and TYPE of 16 metrics (the session's 11, each elector's 5), once each.
        text = session.metrics_text(detailed=True)
        comments = [line for line in text.splitlines() if line.startswith("#")]
        assert len(comments) == len(set(comments)) == 32, text
        for i in range(3):
            assert f'leader_election_master_status{{name="{service}-{i}"}} 1' in text, text
            assert f'mysqlleader_campaign_duration_seconds_count{{name="{service}-{i}"}} ' in text, text
        assert 'mysqlleader_session_seats{node="metrics",state="leading"} 3\n' in text, text
        # Compact (the default): the session's 11 and the electors' two gauges.
        text = session.metrics_text()
        comments = [line for line in text.splitlines() if line.startswith("#")]
        assert len(comments) == len(set(comments)) == 26, text
        for i in range(3):
            assert f'leader_election_master_status{{name="{service}-{i}"}} 1' in text, text
            assert f'mysqlleader_term{{name="{service}-{i}"}} ' in text, text
        assert "mysqlleader_campaign_duration_seconds" not in text, text
        assert 'mysqlleader_session_seats{node="metrics",state="leading"} 3\n' in text, text
        assert "# TYPE mysqlleader_session_renew_batch_duration_seconds histogram\n" in text, text
        assert 'mysqlleader_session_renew_batches_total{node="metrics"} ' in text, text
        electors[1].close()
        text = session.metrics_text()
        assert f'name="{service}-1"' not in text, "a closed elector is left out"
        assert f'leader_election_master_status{{name="{service}-2"}} 1' in text
    with pytest.raises(InvalidStateError):
        session.metrics_text()
    with pytest.raises(InvalidStateError):
        session.metrics_text(detailed=True)


def test_closing_one_elector_resigns_its_seat_alone(client: mysqlleader.Client, url: str, service: str) -> None:
    with mysqlleader.Session(client, node_id="solo", lease=LEASE) as session:
        one, two = session.elector(f"{service}-1"), session.elector(f"{service}-2")
        assert one.wait_for_leadership(SLACK) and two.wait_for_leadership(SLACK)
        one.close()
        assert history(url, f"{service}-1") == [(1, "solo", "elected", "resigned")]
        assert two.is_leader and not session.closed
        # An elector's resign() stops that elector's campaign only.
        assert two.resign() and not two.campaigning
        three = session.elector(f"{service}-3")
        assert three.wait_for_leadership(SLACK)
    assert three.closed and two.closed


def test_resign_on_close_false_lets_the_leases_lapse(client: mysqlleader.Client, url: str, service: str) -> None:
    session = mysqlleader.Session(client, node_id="keep", lease=LEASE, resign_on_close=False)
    e = session.elector(service)
    assert e.wait_for_leadership(SLACK)
    session.close()
    assert e.closed
    assert history(url, service) == [(1, "keep", "elected", None)], "the seat is left to lapse"
    assert client.current_leader(service).leader_id == "keep"


def test_the_session_lives_as_long_as_its_electors(client: mysqlleader.Client, url: str, service: str) -> None:
    session = mysqlleader.Session(client, node_id="gc", lease=LEASE)
    elector = session.elector(service)
    session_finalizer, elector_finalizer = session._finalizer, elector._finalizer
    released = dict(mysqlleader._handle.released_count)
    del session
    gc.collect()
    assert session_finalizer.alive, "the elector keeps its session open"
    assert elector.wait_for_leadership(SLACK)
    del elector
    gc.collect()
    assert not elector_finalizer.alive and not session_finalizer.alive
    assert mysqlleader._handle.released_count["Elector"] == released["Elector"] + 1
    assert mysqlleader._handle.released_count["Session"] == released["Session"] + 1
    assert history(url, service) == [(1, "gc", "elected", "resigned")]


def test_an_asyncio_session(url: str, service: str) -> None:
    async def main() -> None:
        async with mysqlleader.aio.Session(url, node_id="aio", lease=LEASE) as session:
            electors = [session.elector(f"{service}-{i}") for i in range(3)]
            events = electors[0].events()
            for e in electors:
                assert await e.wait_for_leadership(SLACK)
                assert isinstance(e, mysqlleader.aio.Elector) and e.node_id == "aio"
            assert session.node_id == "aio" and not session.closed
        assert session.closed and all(e.closed for e in electors)
        got = [event async for event in events]  # it ends: the session closed its electors
        mine = [(e.kind, e.reason) for e in got if e.kind in (EventKind.STARTED_LEADING, EventKind.STOPPED_LEADING)]
        assert mine == [(EventKind.STARTED_LEADING, StopReason.NONE), (EventKind.STOPPED_LEADING, StopReason.SHUTDOWN)], got

    asyncio.run(main())
    for i in range(3):
        assert history(url, f"{service}-{i}") == [(1, "aio", "elected", "resigned")]


def test_the_readme_session_example_runs(fresh_db: Database, tmp_path: Path) -> None:
    """The README's Sessions example as written: n1 leads every shard and resigns them all when
    it leaves; n2, run next, leads them all at term 2."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    found = [b for b in blocks if "mysqlleader.Session(" in b]
    assert len(found) == 1, "the README has one example of a Session"
    mysqlleader.migrate(fresh_db.url)  # the operator, once
    script = tmp_path / "shards.py"
    script.write_text(found[0], encoding="utf-8")
    env = dict(os.environ, MYSQLLEADER_URL=fresh_db.url)
    for node in ("n1", "n2"):
        result = subprocess.run([sys.executable, str(script), node], env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        assert f"{node}: leads 20 of 20 shards" in result.stdout, result.stdout
    rows = query(fresh_db.url, "SELECT service_id, term, leader_id, ended_how FROM leader_election_history ORDER BY service_id, term")
    assert len(rows) == 40
    for i in range(20):
        mine = [(int(t), bytes(l).decode(), how) for s, t, l, how in rows if bytes(s).decode() == f"shard-{i}"]
        assert mine == [(1, "n1", "resigned"), (2, "n2", "resigned")], mine
