"""The Elector in one process: state, waiting, resign, events (callback and stream), fencing,
configuration, callbacks that raise or close, close() twice, and release by the finalizer."""

from __future__ import annotations

import datetime
import gc
import re
import logging
import socket
import threading
import time
from typing import Any, Callable, Dict, List

import pytest

import mysqlleader
from mysqlleader import EventKind, StopReason
from conftest import Database, history, query

LEASE = 3.0  # seconds: short, yet long enough for a busy 2-core machine
SLACK = 15.0  # liveness waits (never safety checks) get this much


def wait_until(predicate: Callable[[], bool], timeout: float = SLACK, step: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


class Recorder:
    """An on_event callback that keeps every event, safely across threads."""

    def __init__(self) -> None:
        self.events: List[mysqlleader.Event] = []
        self.threads: set = set()
        self.lock = threading.Lock()

    def __call__(self, event: mysqlleader.Event) -> None:
        with self.lock:
            self.events.append(event)
            self.threads.add(threading.get_ident())

    def kinds(self) -> List[EventKind]:
        with self.lock:
            return [e.kind for e in self.events]

    def has(self, kind: EventKind, **fields: Any) -> bool:
        with self.lock:
            return any(e.kind == kind and all(getattr(e, k) == v for k, v in fields.items()) for e in self.events)


def test_an_elector_leads_and_reports_its_state(client: mysqlleader.Client, url: str, service: str) -> None:
    recorder = Recorder()
    elector = mysqlleader.Elector(client, service, node_id="a", lease=LEASE, on_event=recorder)
    try:
        assert elector.wait_for_leadership(SLACK)
        assert elector.is_leader
        assert elector.term == 1
        assert elector.leader_id == "a"
        assert elector.node_id == "a"
        assert elector.service_id == service
        assert 0 < elector.valid_for_ms <= LEASE * 1000
        assert datetime.timedelta(0) < elector.valid_for <= datetime.timedelta(seconds=LEASE)
        assert elector.campaigning
        assert elector.last_call_error is None
        status = elector.snapshot()
        assert status.is_leader and status.term == 1 and status.leader_id == "a" and status.campaigning
        assert status.last_call_result == mysqlleader.ResultCode.OK
        assert status.valid_for == datetime.timedelta(milliseconds=status.valid_for_ms)
        assert "leading term=1" in repr(elector)
        # the database agrees, through an independent client
        assert client.current_leader(service).leader_id == "a"
        assert wait_until(lambda: recorder.has(EventKind.STARTED_LEADING, term=1, leader_id="a"))
        started = next(e for e in recorder.events if e.kind == EventKind.STARTED_LEADING)
        assert 0 < started.valid_for_ms <= LEASE * 1000 and started.reason == StopReason.NONE
        assert threading.get_ident() not in recorder.threads, "callbacks run on the elector's own thread"
    finally:
        elector.close()
    # close() resigned and delivered the last events before it returned
    count = len(recorder.events)
    assert recorder.has(EventKind.STOPPED_LEADING, reason=StopReason.SHUTDOWN, term=1)
    time.sleep(0.3)
    assert len(recorder.events) == count, "no callback runs after close() returned"
    assert history(url, service) == [(1, "a", "elected", "resigned")]
    assert client.current_leader(service).leader_id is None


def test_a_follower_waits_and_takes_over_on_resign(client: mysqlleader.Client, service: str) -> None:
    a_events, b_events = Recorder(), Recorder()
    with mysqlleader.Elector(client, service, node_id="a", lease=LEASE, on_event=a_events) as a:
        assert a.wait_for_leadership(SLACK)
        with mysqlleader.Elector(client, service, node_id="b", lease=LEASE, on_event=b_events) as b:
            started = time.monotonic()
            assert b.wait_for_leadership(0.5) is mysqlleader.WaitOutcome.TIMED_OUT
            assert time.monotonic() - started < 0.5 + 2.0
            assert b.wait_for_leadership(0) is mysqlleader.WaitOutcome.TIMED_OUT
            assert not b.is_leader and b.valid_for_ms == 0
            assert wait_until(lambda: b.leader_id == "a")
            with pytest.raises(mysqlleader.NotLeaderError):
                b.fenced()
            assert a.resign() is True
            assert not a.is_leader and not a.campaigning
            started = time.monotonic()
            assert a.wait_for_leadership(10) is mysqlleader.WaitOutcome.NOT_CAMPAIGNING, "a resigned elector no longer campaigns"
            assert time.monotonic() - started < 2.0
            assert b.wait_for_leadership(SLACK)
            assert b.term == 2 and b.leader_id == "b"
            assert wait_until(lambda: a.leader_id == "b"), "a resigned elector keeps observing"
            assert a.resign() is False
        assert wait_until(lambda: a_events.has(EventKind.STOPPED_LEADING, reason=StopReason.RESIGNED, term=1))
        assert b_events.has(EventKind.STARTED_LEADING, term=2)
        assert b_events.has(EventKind.LEADER_CHANGED, leader_id="a", term=1)


def test_an_elector_from_a_url_uses_the_default_node_id(url: str, service: str) -> None:
    with mysqlleader.Elector(url, service, lease=LEASE) as elector:
        assert elector.node_id == mysqlleader.default_node_id()
        assert elector.wait_for_leadership(SLACK)
        assert elector.leader_id == elector.node_id


def test_every_configuration_value(client: mysqlleader.Client, service: str) -> None:
    with mysqlleader.Elector(
        client,
        service,
        node_id="cfg",
        lease=datetime.timedelta(seconds=4),
        renew_interval=0.8,
        retry_interval=datetime.timedelta(milliseconds=300),
        retry_jitter=0,
        request_timeout=0.7,
        drift_margin=datetime.timedelta(milliseconds=50),
        resign_on_close=True,
    ) as elector:
        assert elector.wait_for_leadership(SLACK)
    with mysqlleader.Elector(client, service + "-j", lease=LEASE, retry_jitter=0.5) as elector:
        assert elector.wait_for_leadership(SLACK)


def test_resign_on_close_false_leaves_the_lease_to_lapse(client: mysqlleader.Client, service: str) -> None:
    with mysqlleader.Elector(client, service, node_id="a", lease=10, resign_on_close=False) as elector:
        assert elector.wait_for_leadership(SLACK)
    current = client.current_leader(service)
    assert current.leader_id == "a" and current.lease_remaining_ms > 0


def test_fenced_writes(client: mysqlleader.Client, url: str, service: str) -> None:
    table = "fenced_" + str(abs(hash(service)))
    query(url, f"CREATE TABLE `{table}` (id INT PRIMARY KEY, term BIGINT UNSIGNED)")
    with mysqlleader.Elector(client, service, node_id="a", lease=LEASE) as elector:
        assert elector.wait_for_leadership(SLACK)
        with elector.fenced() as tx:
            assert tx.term == elector.term == 1
            tx.execute(f"INSERT INTO `{table}` VALUES (?, ?)", [1, tx.term])
        client.force_leader(service, "intruder", 30)
        assert wait_until(lambda: not elector.is_leader)
        with pytest.raises(mysqlleader.NotLeaderError):
            elector.fenced()
    assert query(url, f"SELECT id, term FROM `{table}`") == [(1, 1)]


def test_a_fence_the_database_refuses_steps_the_elector_down_at_once(client: mysqlleader.Client, service: str) -> None:
    # A long lease and renew interval: the elector would learn of the force_leader only at its
    # next renew, 9 s on. The database's refusal of fenced() tells it now.
    with mysqlleader.Elector(client, service, node_id="a", lease=30, renew_interval=9) as elector:
        assert elector.wait_for_leadership(SLACK)
        client.force_leader(service, "intruder", 30)
        assert elector.is_leader, "the elector has not renewed since: it believes it leads"
        with pytest.raises(mysqlleader.NotLeaderError):
            elector.fenced()
        assert not elector.is_leader, "refused by the database: stepped down before fenced() returned"
        assert wait_until(lambda: elector.leader_id == "intruder"), "its next call learns who leads"


def test_events_stream(client: mysqlleader.Client, service: str) -> None:
    follower = mysqlleader.Elector(client, service, node_id="f", lease=LEASE)
    stream = follower.events()
    assert follower.wait_for_leadership(SLACK)  # the only candidate: it leads at term 1
    while stream.get(timeout=0.2) is not None:  # drain whatever came so far
        pass
    client.force_leader(service, "other", 60)
    event = stream.get(timeout=SLACK)
    assert event is not None
    while event is not None and not (event.kind == EventKind.LEADER_CHANGED and event.leader_id == "other"):
        event = stream.get(timeout=SLACK)
    assert event is not None and event.kind == EventKind.LEADER_CHANGED and event.leader_id == "other"
    client.resign(service, "other")
    assert follower.wait_for_leadership(SLACK)
    seen = []
    with follower.events() as second:
        follower.close()
        for e in second:  # ends when the elector is closed
            seen.append(e)
        assert second.ended
    assert any(e.kind == EventKind.STOPPED_LEADING and e.reason == StopReason.SHUTDOWN for e in seen), seen
    rest = list(stream)
    assert any(e.kind == EventKind.STARTED_LEADING and e.term == 3 for e in rest)
    assert stream.ended
    assert list(follower.events()) == [], "a stream of a closed elector is empty and ended"


def test_a_slow_stream_gets_missed(client: mysqlleader.Client, service: str) -> None:
    with mysqlleader.Elector(client, service, node_id="slow", lease=LEASE, retry_interval=0.1) as elector:
        stream = elector.events(maxsize=1)
        for i in range(4):
            client.force_leader(service, f"other-{i}", 60)
            assert wait_until(lambda: elector.leader_id == f"other-{i}")
        first = stream.get(timeout=SLACK)
        assert first is not None and first.kind == EventKind.MISSED and first.missed >= 1
        # The newest change is kept, and nothing after it is lost: it is the last event the
        # stream gives. (The elector's state shows a change before the event reaches the
        # stream, on the callback thread: the stream may still give an older one first.)
        last = stream.get(timeout=SLACK)
        while last is not None and last.leader_id != "other-3":
            assert last.kind == EventKind.LEADER_CHANGED, last
            last = stream.get(timeout=SLACK)
        assert last is not None and last.leader_id == "other-3"
        stream.close()
        stream.close()
        assert stream.get(timeout=0) is None


def test_a_callback_that_raises_does_not_break_the_elector(
    client: mysqlleader.Client, service: str, caplog: pytest.LogCaptureFixture
) -> None:
    calls: List[mysqlleader.Event] = []

    def bad(event: mysqlleader.Event) -> None:
        calls.append(event)
        if len(calls) == 1:
            raise KeyboardInterrupt("even this")
        if len(calls) == 2:
            raise SystemExit(3)
        raise ValueError(f"bad callback {len(calls)}")

    caplog.set_level(logging.ERROR, logger="mysqlleader")
    with mysqlleader.Elector(client, service, node_id="a", lease=LEASE, on_event=bad) as elector:
        stream = elector.events()
        assert elector.wait_for_leadership(SLACK)
        client.force_leader(service, "b", 1)  # a loses the seat, then takes it back
        assert wait_until(lambda: elector.is_leader and elector.term == 3)
        assert wait_until(lambda: len(calls) >= 4)
        kinds = []
        while (e := stream.get(timeout=0.5)) is not None:
            kinds.append(e.kind)
        assert EventKind.STOPPED_LEADING in kinds and EventKind.STARTED_LEADING in kinds
        assert elector.snapshot().last_call_result == mysqlleader.ResultCode.OK
    messages = [r for r in caplog.records if r.name == "mysqlleader"]
    assert len(messages) >= 3
    assert all("on_event callback raised" in r.getMessage() for r in messages)
    assert any(r.exc_info and r.exc_info[0] is KeyboardInterrupt for r in messages)
    assert any(r.exc_info and r.exc_info[0] is ValueError for r in messages)


def test_a_callback_may_use_and_close_its_own_elector(client: mysqlleader.Client, url: str, service: str) -> None:
    holder: List[mysqlleader.Elector] = []
    seen: List[Any] = []
    closed = threading.Event()

    def on_event(event: mysqlleader.Event) -> None:
        if not holder:
            return
        elector = holder[0]
        if event.kind == EventKind.STARTED_LEADING and not closed.is_set():
            seen.append((elector.is_leader, elector.term, elector.leader_id, elector.snapshot().campaigning))
            elector.close()  # from the callback thread
            elector.close()
            closed.set()

    elector = mysqlleader.Elector(client, service, node_id="self-closing", lease=LEASE, on_event=on_event)
    holder.append(elector)
    assert closed.wait(SLACK) or elector.closed
    assert wait_until(lambda: elector.closed)
    assert seen and seen[0][1] >= 1
    with pytest.raises(mysqlleader.InvalidStateError):
        elector.is_leader
    elector.close()
    assert wait_until(lambda: history(url, service)[-1][3] == "resigned")
    holder.clear()


def test_close_twice_and_use_after_close(client: mysqlleader.Client, service: str) -> None:
    elector = mysqlleader.Elector(client, service, lease=LEASE)
    assert not elector.closed
    elector.close()
    elector.close()
    assert elector.closed
    assert "closed" in repr(elector)
    for attribute in ("is_leader", "term", "leader_id", "valid_for_ms", "valid_for", "campaigning", "last_call_error"):
        with pytest.raises(mysqlleader.InvalidStateError):
            getattr(elector, attribute)
    for call in (elector.snapshot, elector.resign, elector.fenced, elector.metrics_text, lambda: elector.wait_for_leadership(1)):
        with pytest.raises(mysqlleader.InvalidStateError):
            call()
    assert elector.node_id and elector.service_id == service  # plain attributes stay readable
    with elector:
        pass
    client2 = mysqlleader.Client("mysql://u@127.0.0.1:1/db")
    client2.close()
    client2.close()
    assert client2.closed
    with client2:
        pass


def test_close_from_another_thread_ends_a_wait(client: mysqlleader.Client, service: str) -> None:
    client.force_leader(service, "holder", 60)
    elector = mysqlleader.Elector(client, service, node_id="waiter", lease=LEASE)
    outcome: List[BaseException] = []

    def wait() -> None:
        try:
            elector.wait_for_leadership()
        except BaseException as e:
            outcome.append(e)

    thread = threading.Thread(target=wait)
    thread.start()
    time.sleep(0.5)
    started = time.monotonic()
    elector.close()
    thread.join(SLACK)
    assert not thread.is_alive()
    assert time.monotonic() - started < SLACK
    assert outcome and isinstance(outcome[0], mysqlleader.InvalidStateError)


def test_an_unreachable_server_is_reported_by_last_call_error(service: str) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with mysqlleader.Client(f"mysql://app:hunter2@127.0.0.1:{port}/db") as dead:
        with mysqlleader.Elector(dead, service, lease=1) as elector:
            assert not elector.wait_for_leadership(1.5)
            assert wait_until(lambda: elector.last_call_error is not None)
            message = elector.last_call_error or ""
            assert "connection" in message.lower() and "hunter2" not in message
            assert elector.snapshot().last_call_result == mysqlleader.ResultCode.CONNECTION


def test_fallback_clients_are_tried(client: mysqlleader.Client, service: str) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with mysqlleader.Client(f"mysql://app:x@127.0.0.1:{port}/db") as dead:
        with mysqlleader.Elector(dead, service, node_id="fb", lease=LEASE, fallback_clients=[client]) as elector:
            assert elector.wait_for_leadership(SLACK)
    assert client.current_leader(service).term == 1


def test_an_elector_collected_without_close_releases_its_handle(client: mysqlleader.Client, url: str, service: str) -> None:
    elector = mysqlleader.Elector(client, service, node_id="forgotten", lease=30)
    assert elector.wait_for_leadership(SLACK)
    finalizer = elector._finalizer
    gc.collect()  # other tests' forgotten electors first, so that only this one is counted below
    before = mysqlleader._handle.released_count["Elector"]
    del elector
    gc.collect()
    assert not finalizer.alive, "the finalizer ran"
    assert mysqlleader._handle.released_count["Elector"] == before + 1
    # mysqlleader_elector_free ran: it resigned at once, long before the 30 s lease would lapse
    assert history(url, service) == [(1, "forgotten", "elected", "resigned")]
    assert client.current_leader(service).leader_id is None


def processlist_count(server_url: str, database: str) -> int:
    return int(query(server_url, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = %s", (database,))[0][0])


def test_a_client_collected_without_close_releases_its_handle(server_url: str, fresh_db: Database) -> None:
    c = mysqlleader.Client(fresh_db.url)
    with c.transaction() as tx:
        tx.execute("DO 1")
    assert processlist_count(server_url, fresh_db.name) >= 1, "the pool keeps its idle connection"
    finalizer = c._finalizer
    before = mysqlleader._handle.released_count["Client"]
    del c, tx
    gc.collect()
    assert not finalizer.alive
    assert mysqlleader._handle.released_count["Client"] == before + 1
    # mysqlleader_client_free ran: the pool's connections are gone from the server
    assert wait_until(lambda: processlist_count(server_url, fresh_db.name) == 0)


def test_closing_a_follower_is_prompt(client: mysqlleader.Client, service: str) -> None:
    """close() of a follower that sits in its wait between attempts (the wake-up lock wait)
    returns at once: measured against that wait and against one database round trip."""
    client.force_leader(service, "holder", 60)
    retry = 2.0
    for attempt in range(3):
        elector = mysqlleader.Elector(client, service, node_id=f"follower-{attempt}", lease=20, retry_interval=retry, retry_jitter=0)
        assert wait_until(lambda: elector.leader_id == "holder")
        time.sleep(0.3)  # the follower now waits for the holder's lock, up to `retry`
        trips = []
        for _ in range(5):
            started = time.monotonic()
            client.current_leader(service)
            trips.append(time.monotonic() - started)
        round_trip = sorted(trips)[2]
        started = time.monotonic()
        elector.close()
        took = time.monotonic() - started
        print(f"close() of a follower: {took * 1000:.1f} ms; one round trip {round_trip * 1000:.2f} ms; "
              f"ratio {took / round_trip:.1f}; its wait {retry * 1000:.0f} ms")
        assert took < retry / 4, f"close() sat out the follower's wait: {took:.3f} s of {retry} s"


def test_a_wait_inside_on_event_is_refused_not_stuck(client: mysqlleader.Client, service: str) -> None:
    """The callback thread delivers the events a wait sleeps for: a wait there would only time
    out. A look that needs no sleep answers; a wait that would sleep raises."""
    client.force_leader(service, "holder", 60)
    seen: List[object] = []
    holder: List[mysqlleader.Elector] = []

    def on_event(event: mysqlleader.Event) -> None:
        if holder and not seen:
            try:
                seen.append(holder[0].wait_for_leadership(0))    # only looks
                seen.append(holder[0].wait_for_leadership(5))    # would sleep
            except mysqlleader.InvalidStateError as e:
                seen.append(e)

    with mysqlleader.Elector(client, service, node_id="follower", lease=LEASE, on_event=on_event) as e:
        holder.append(e)
        client.force_leader(service, "holder-2", 60)  # one more event, after `holder` is set
        assert wait_until(lambda: len(seen) == 2)
    assert seen[0] is mysqlleader.WaitOutcome.TIMED_OUT
    assert isinstance(seen[1], mysqlleader.InvalidStateError) and "on_event" in str(seen[1])


def metrics(text: str) -> Dict[str, float]:
    """The samples of a Prometheus text exposition, by name with labels; every line must be a
    comment or a sample."""
    samples: Dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            continue
        m = re.fullmatch(r'([a-z_]+\{[^}]*\}) (\S+)', line)
        assert m, f"not a sample line: {line!r}"
        samples[m.group(1)] = float(m.group(2))
    return samples


def test_metrics_text(client: mysqlleader.Client, service: str) -> None:
    """The Prometheus text of the Rust library, through the C ABI, of a leader and a follower."""
    name = f'name="{service}"'
    with mysqlleader.Elector(client, service, node_id="a", lease=LEASE) as a:
        assert a.wait_for_leadership(SLACK)
        text = a.metrics_text()
        assert text.startswith("# HELP leader_election_master_status ") and text.endswith("\n")
        assert f"leader_election_master_status{{{name}}} 1\n" in text
        assert "# TYPE mysqlleader_campaign_duration_seconds histogram\n" in text
        m = metrics(text)
        assert m[f"mysqlleader_term{{{name}}}"] == 1
        assert m[f"mysqlleader_leadership_transitions_total{{{name}}}"] == 1
        assert m[f"mysqlleader_campaign_errors_total{{{name}}}"] == 0
        count = m[f"mysqlleader_campaign_duration_seconds_count{{{name}}}"]
        assert count >= 1
        assert m[f'mysqlleader_campaign_duration_seconds_bucket{{{name},le="+Inf"}}'] == count
        assert m[f"mysqlleader_campaign_duration_seconds_sum{{{name}}}"] > 0
        with mysqlleader.Elector(client, service, node_id="b", lease=LEASE) as b:
            assert wait_until(lambda: b.leader_id == "a")
            m = metrics(b.metrics_text())
            assert m[f"leader_election_master_status{{{name}}}"] == 0
            assert m[f"mysqlleader_term{{{name}}}"] == 1
            assert m[f"mysqlleader_leadership_transitions_total{{{name}}}"] == 0
            assert m[f"mysqlleader_campaign_duration_seconds_count{{{name}}}"] >= 1
            assert a.resign()
            m = metrics(a.metrics_text())
            assert m[f"leader_election_master_status{{{name}}}"] == 0
            assert m[f"mysqlleader_leadership_transitions_total{{{name}}}"] == 2
            assert b.wait_for_leadership(SLACK)
            m = metrics(b.metrics_text())
            assert m[f"leader_election_master_status{{{name}}}"] == 1
            assert m[f"mysqlleader_term{{{name}}}"] == 2
            assert m[f"mysqlleader_leadership_transitions_total{{{name}}}"] == 1
    with pytest.raises(mysqlleader.InvalidStateError):
        a.metrics_text()


def test_metrics_count_campaign_errors(service: str) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with mysqlleader.Client(f"mysql://app:hunter2@127.0.0.1:{port}/db") as dead:
        with mysqlleader.Elector(dead, service, lease=1) as elector:
            key = f'mysqlleader_campaign_errors_total{{name="{service}"}}'
            assert wait_until(lambda: metrics(elector.metrics_text())[key] >= 2)
            m = metrics(elector.metrics_text())
            assert m[f'leader_election_master_status{{name="{service}"}}'] == 0
            assert m[f'mysqlleader_campaign_duration_seconds_count{{name="{service}"}}'] >= m[key]
