"""mysqlleader.aio against the real server: the async context manager, wait_for_leadership,
events(), resign(), run_while_leader cancelling the work when leadership ends, and an event loop
that never blocks (a heartbeat on the same loop keeps ticking while calls are in flight). Also
the sync Elector.run_while_leader."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Awaitable, List

import pytest

import mysqlleader
import mysqlleader.aio
from mysqlleader import EventKind


def test_async_election_events_and_resign(url: str, service: str) -> None:
    async def main() -> None:
        async with mysqlleader.aio.Elector(url, service, node_id="a", lease=4) as a:
            events = a.events()
            assert await a.wait_for_leadership(10)
            assert a.is_leader and a.term >= 1
            async with mysqlleader.aio.Elector(url, service, node_id="b", lease=4) as b:
                assert not await b.wait_for_leadership(0.3), "only one leader"
                assert await a.resign()
                assert await b.wait_for_leadership(10), "b takes over after a resigns"
                kinds = []

                async def collect() -> None:
                    async for event in events:
                        kinds.append(event.kind)
                        if event.kind is EventKind.STOPPED_LEADING:
                            return

                await asyncio.wait_for(collect(), 10)
                assert EventKind.STARTED_LEADING in kinds and kinds[-1] is EventKind.STOPPED_LEADING
                assert not await a.wait_for_leadership(1), "a resigned: no longer campaigning"

    asyncio.run(main())


def test_async_metrics_text(url: str, service: str) -> None:
    async def main() -> None:
        async with mysqlleader.aio.Elector(url, service, node_id="a", lease=4) as a:
            assert await a.wait_for_leadership(10)
            text = a.metrics_text()
            assert f'leader_election_master_status{{name="{service}"}} 1\n' in text
            assert f'mysqlleader_campaign_duration_seconds_count{{name="{service}"}} ' in text
            assert isinstance(text, str), "a plain method, not a coroutine"
            await a.resign()
            assert f'leader_election_master_status{{name="{service}"}} 0\n' in a.metrics_text()

    asyncio.run(main())


def test_run_while_leader_cancels_the_coroutine_when_leadership_ends(url: str, service: str, client: mysqlleader.Client) -> None:
    async def main() -> None:
        async with mysqlleader.aio.Elector(url, service, node_id="a", lease=3) as a:
            cancelled = asyncio.Event()

            async def work() -> None:
                try:
                    await asyncio.sleep(60)
                finally:
                    cancelled.set()

            async def force_later() -> None:
                await asyncio.sleep(0.5)
                await asyncio.to_thread(client.force_leader, service, "other", 10)

            forcer = asyncio.ensure_future(force_later())
            with pytest.raises(mysqlleader.aio.LeadershipLost) as lost:
                await asyncio.wait_for(a.run_while_leader(work), 20)
            await forcer
            assert cancelled.is_set(), "the work was cancelled"
            assert lost.value.term == 1

        async with mysqlleader.aio.Elector(url, service + "-done", node_id="a", lease=3) as d:
            async def quick() -> int:
                return 42

            assert await d.run_while_leader(quick) == 42

    asyncio.run(main())


def test_the_event_loop_never_blocks(url: str, service: str) -> None:
    """A heartbeat every 10 ms on the same loop while elector calls are in flight: its largest
    gap stays well below the duration of the longest call (a call that blocked the loop would
    leave a gap at least that long)."""

    async def main() -> None:
        gaps: List[float] = []
        calls: List[float] = []
        stop = asyncio.Event()

        async def heartbeat() -> None:
            last = time.monotonic()
            while not stop.is_set():
                await asyncio.sleep(0.01)
                now = time.monotonic()
                gaps.append(now - last)
                last = now

        async def timed(call: Awaitable[Any]) -> Any:
            started = time.monotonic()
            try:
                return await call
            finally:
                calls.append(time.monotonic() - started)

        beat = asyncio.ensure_future(heartbeat())
        for i in range(2):
            # lease 6 s: its request timeout (1.2 s) is not what this test is about (at lease
            # 2 s a resign under make test's load ran out of its 0.4 s).
            async with mysqlleader.aio.Elector(url, f"{service}-{i}", node_id="a", lease=6) as a:
                assert await timed(a.wait_for_leadership(10))
                b = mysqlleader.aio.Elector(url, f"{service}-{i}", node_id="b", lease=6)
                assert await timed(b.wait_for_leadership(1)) is mysqlleader.WaitOutcome.TIMED_OUT
                await timed(a.resign())
                assert await timed(b.wait_for_leadership(10))
                await timed(b.close())
        stop.set()
        await beat
        longest = max(calls)
        assert longest >= 0.9, "the follower's wait lasted its timeout"
        assert max(gaps) < longest / 2, f"the loop was blocked: largest gap {max(gaps):.3f} s, longest call {longest:.3f} s"

    asyncio.run(main())


def test_sync_run_while_leader_signals_the_end(url: str, service: str, client: mysqlleader.Client) -> None:
    with mysqlleader.Elector(url, service, node_id="a", lease=3) as e:
        assert e.run_while_leader(lambda stop: "done") == "done", "finished while leading: its result"

        def work(stop: threading.Event) -> str:
            threading.Timer(0.3, lambda: client.force_leader(service, "other", 10)).start()
            assert stop.wait(10), "stop was never set after the seat moved"
            return "stopped"

        with pytest.raises(mysqlleader.LeadershipLostError) as lost:
            e.run_while_leader(work)
        assert lost.value.term == 1 and lost.value.reason is mysqlleader.StopReason.LOST_SEAT
        assert isinstance(lost.value, mysqlleader.MysqlLeaderError)


def test_sync_run_while_leader_reasons_and_errors(url: str, service: str) -> None:
    with mysqlleader.Elector(url, service, node_id="a", lease=3) as e:
        def resigns(stop: threading.Event) -> None:
            e.resign()
            assert stop.wait(10)

        with pytest.raises(mysqlleader.LeadershipLostError) as lost:
            e.run_while_leader(resigns)
        assert lost.value.reason is mysqlleader.StopReason.RESIGNED, "the core's reason"
        with pytest.raises(mysqlleader.ElectorStoppedError):
            e.run_while_leader(lambda stop: None)  # resigned: it will never lead again

    with mysqlleader.Elector(url, service + "-x", node_id="a", lease=3) as e2:
        def fails(stop: threading.Event) -> None:
            raise KeyError("the work's own error")

        with pytest.raises(KeyError):
            e2.run_while_leader(fails)
        # closed from another thread while fn runs: the term ends with reason SHUTDOWN
        def closed(stop: threading.Event) -> None:
            threading.Thread(target=e2.close).start()
            assert stop.wait(10)

        with pytest.raises(mysqlleader.LeadershipLostError) as lost:
            e2.run_while_leader(closed)
        assert lost.value.reason is mysqlleader.StopReason.SHUTDOWN


def test_waits_ask_the_core_after_changes_only(client: mysqlleader.Client, service: str) -> None:
    """A follower's wait does not poll: it asks the core at the start, after each change the core
    publishes (each comes with an event) and once more when the timeout is up; not every few
    hundred milliseconds (0.25 s slices would make about 9 calls here)."""
    client.force_leader(service, "holder", 60)
    with mysqlleader.Elector(client, service, node_id="waiter", lease=2) as e:
        looks = []
        look = e._look_for_leadership

        def counting() -> object:
            looks.append(time.monotonic())
            return look()

        e._look_for_leadership = counting  # type: ignore[method-assign]
        stream = e.events()
        assert e.wait_for_leadership(2) is mysqlleader.WaitOutcome.TIMED_OUT
        changes = 0
        while stream.get(0) is not None:
            changes += 1
        assert len(looks) <= 2 + changes, f"{len(looks)} looks for {changes} changes in 2 s: polling"


def test_async_run_while_leader_reason_and_not_campaigning(url: str, service: str, client: mysqlleader.Client) -> None:
    async def main() -> None:
        async with mysqlleader.aio.Elector(url, service, node_id="a", lease=3) as a:
            async def work() -> None:
                await asyncio.to_thread(client.force_leader, service, "other", 10)
                await asyncio.sleep(60)

            with pytest.raises(mysqlleader.LeadershipLostError) as lost:
                await asyncio.wait_for(a.run_while_leader(work), 20)
            assert lost.value.reason is mysqlleader.StopReason.LOST_SEAT and lost.value.term == 1
            await a.resign()
            assert await a.wait_for_leadership(1) is mysqlleader.WaitOutcome.NOT_CAMPAIGNING
            with pytest.raises(mysqlleader.ElectorStoppedError):
                await a.run_while_leader(work)

    asyncio.run(main())


def test_run_while_leader_cancelled_from_outside_waits_for_the_work(url: str, service: str) -> None:
    """Issue 26, item 6: cancelled from outside (``task.cancel()``, ``asyncio.wait_for``,
    ``asyncio.timeout``), run_while_leader returns only once the cancelled work has finished:
    its ``finally`` (which itself awaits) ran before run_while_leader raised. Before, it raised
    at once and the work's clean-up ran later."""

    async def main() -> None:
        async with mysqlleader.aio.Elector(url, service, node_id="a", lease=3) as a:
            log: List[str] = []
            started = asyncio.Event()

            async def work() -> None:
                started.set()
                try:
                    await asyncio.sleep(60)
                finally:
                    await asyncio.sleep(0.2)  # a clean-up that awaits (closing a connection, ...)
                    log.append("work's finally")

            async def run() -> None:
                try:
                    await a.run_while_leader(work)
                finally:
                    log.append("run_while_leader ended")

            expected = ["work's finally", "run_while_leader ended"]

            # 1. task.cancel(), twice: the second cancel does not cut the work's clean-up short.
            runner = asyncio.ensure_future(run())
            await asyncio.wait_for(started.wait(), 20)
            runner.cancel()
            await asyncio.sleep(0.05)
            runner.cancel()
            done, _ = await asyncio.wait({runner}, timeout=10)
            assert done and runner.cancelled(), "the cancellation goes on once the work has finished"
            assert log == expected, log

            # 2. asyncio.wait_for: TimeoutError after the work's finally.
            log.clear()
            started.clear()
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(run(), 1.0)
            assert started.is_set() and log == expected, log

            # 3. asyncio.timeout (Python 3.11 and later).
            timeout = getattr(asyncio, "timeout", None)
            if timeout is not None:
                log.clear()
                started.clear()
                with pytest.raises(TimeoutError):
                    async with timeout(1.0):
                        await run()
                assert started.is_set() and log == expected, log

            # Still the leader of the same term: only the work was cancelled.
            assert a.is_leader and a.term == 1

    asyncio.run(main())


def test_run_while_leader_lost_waits_for_the_cancelled_work(url: str, service: str, client: mysqlleader.Client) -> None:
    """When leadership ends, the work is cancelled, and LeadershipLostError comes once its
    ``finally`` has run (also when that clean-up awaits)."""

    async def main() -> None:
        async with mysqlleader.aio.Elector(url, service, node_id="a", lease=3) as a:
            log: List[str] = []

            async def work() -> None:
                try:
                    await asyncio.to_thread(client.force_leader, service, "other", 10)
                    await asyncio.sleep(60)
                finally:
                    await asyncio.sleep(0.2)
                    log.append("work's finally")

            with pytest.raises(mysqlleader.LeadershipLostError) as lost:
                await asyncio.wait_for(a.run_while_leader(work), 20)
            log.append("raised")
            assert lost.value.reason is mysqlleader.StopReason.LOST_SEAT
            assert log == ["work's finally", "raised"], log

    asyncio.run(main())
