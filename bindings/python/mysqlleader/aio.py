"""asyncio for mysqlleader: the same elector, without blocking the event loop.

::

    import asyncio, mysqlleader.aio

    async def main() -> None:
        async with mysqlleader.aio.Elector("mysql://app:secret@db/app", "billing", lease=10) as e:
            await e.wait_for_leadership()
            await e.run_while_leader(send_invoices)   # cancelled the moment leadership ends

    asyncio.run(main())

:class:`Elector` takes the same arguments as :class:`mysqlleader.Elector`. Reads (``is_leader``,
``term``, ...) never block and are plain properties. Calls that wait on the database run in a
worker thread (``asyncio.to_thread``); waiting for leadership and the event stream are fed by
the elector's own callback thread through ``loop.call_soon_threadsafe``, so the loop never
blocks and a waiting coroutine can be cancelled at once.
"""

from __future__ import annotations

import asyncio
import datetime
from typing import Any, Awaitable, Callable, List, Optional, TypeVar

from . import _elector
from ._native import EventKind, StopReason
from ._types import Event

T = TypeVar("T")

__all__ = ["Elector", "Events", "LeadershipLost"]


class LeadershipLost(Exception):
    """:meth:`Elector.run_while_leader`: leadership of ``term`` ended (``reason``) before the
    coroutine finished; the coroutine was cancelled."""

    def __init__(self, term: int, reason: StopReason) -> None:
        super().__init__(f"mysqlleader: leadership of term {term} ended ({reason.name.lower()}) before the work finished")
        self.term = term
        self.reason = reason


class Events:
    """An async iterator of events, subscribed when made; :meth:`close` to unsubscribe early."""

    def __init__(self, queues: List[asyncio.Queue]) -> None:
        self._queues = queues
        self._queue: asyncio.Queue = asyncio.Queue()
        queues.append(self._queue)

    def __aiter__(self) -> "Events":
        return self

    async def __anext__(self) -> Event:
        event = await self._queue.get()
        if event is None:
            self.close()
            raise StopAsyncIteration
        return event

    def close(self) -> None:
        if self._queue in self._queues:
            self._queues.remove(self._queue)


class Elector:
    """An asyncio face of :class:`mysqlleader.Elector` (same arguments). Use ``async with``, or
    ``await close()``."""

    def __init__(self, client: Any, service_id: str, **kwargs: Any) -> None:
        self._loop = asyncio.get_running_loop()
        self._queues: List[asyncio.Queue] = []
        self._changed = asyncio.Event()
        user_callback: Optional[Callable[[Event], Any]] = kwargs.pop("on_event", None)

        def on_event(event: Event) -> None:  # the elector's callback thread
            if user_callback is not None:
                user_callback(event)
            try:
                self._loop.call_soon_threadsafe(self._deliver, event)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                pass

        # mysqlleader_elector_new never blocks on the database: safe on the loop.
        self._sync = _elector.Elector(client, service_id, on_event=on_event, **kwargs)

    def _deliver(self, event: Event) -> None:
        for q in list(self._queues):
            q.put_nowait(event)
        self._changed.set()

    async def __aenter__(self) -> "Elector":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Resigns (unless ``resign_on_close=False``) and stops, in a worker thread. Idempotent."""
        await asyncio.to_thread(self._sync.close)
        for q in list(self._queues):
            q.put_nowait(None)
        self._changed.set()

    # ---- reads: never block ----
    @property
    def sync(self) -> _elector.Elector:
        """The underlying :class:`mysqlleader.Elector`."""
        return self._sync

    @property
    def is_leader(self) -> bool:
        return self._sync.is_leader

    @property
    def term(self) -> int:
        return self._sync.term

    @property
    def leader_id(self) -> Optional[str]:
        return self._sync.leader_id

    @property
    def valid_for(self) -> datetime.timedelta:
        return self._sync.valid_for

    # ---- waiting ----
    async def wait_for_leadership(self, timeout: Optional[float] = None) -> bool:
        """``True`` once this node leads; ``False`` when ``timeout`` (seconds) passes first or
        the elector no longer campaigns (resigned, closed, or failed). Cancellable."""

        async def wait() -> bool:
            while True:
                self._changed.clear()
                if self._sync.closed:
                    return False
                if self._sync.is_leader:
                    return True
                if not self._sync.campaigning:
                    return False
                await self._changed.wait()

        try:
            return await asyncio.wait_for(wait(), timeout)
        except asyncio.TimeoutError:
            return False

    async def resign(self) -> bool:
        """Steps down and ends this node's lease now (a worker thread): another node takes over
        at once. Returns whether this node held the seat."""
        return await asyncio.to_thread(self._sync.resign)

    def events(self) -> "Events":
        """The leadership changes from the moment of this call on, as an async iterator
        (``async for event in elector.events()``); ends when the elector is closed. Events are
        kept from the call on, even before the first ``async for`` step."""
        return Events(self._queues)

    async def run_while_leader(self, work: Callable[[], Awaitable[T]]) -> T:
        """Waits for leadership, then runs ``await work()``; the moment leadership of that term
        ends (a transition, or the local deadline passing without a renew) the work is
        cancelled and :class:`LeadershipLost` is raised. Returns the work's result when it
        finished while leading."""
        if not await self.wait_for_leadership():
            raise LeadershipLost(self.term, StopReason.SHUTDOWN if self._sync.closed else StopReason.RESIGNED)
        term = self._sync.term
        if not self._sync.is_leader:  # lost between the wait and here
            raise LeadershipLost(term, StopReason.DEADLINE_PASSED)
        task = asyncio.ensure_future(work())
        lost: "asyncio.Future[StopReason]" = self._loop.create_future()

        def ended(reason: StopReason) -> None:
            if not lost.done():
                lost.set_result(reason)
                task.cancel()

        events = self.events()

        async def watch() -> None:
            try:
                async for event in events:
                    if event.kind is EventKind.STOPPED_LEADING and event.term >= term:
                        return ended(event.reason)
                    if event.kind is EventKind.ELECTOR_STOPPED:
                        return ended(StopReason.FAILED)
                ended(StopReason.SHUTDOWN)
            finally:
                events.close()

        async def deadline() -> None:
            # The backstop: the local deadline, re-read after each renew.
            while self._sync.is_leader and self._sync.term == term:
                await asyncio.sleep(max(0.001, self._sync.valid_for.total_seconds()))
            ended(StopReason.DEADLINE_PASSED)

        watchers = [asyncio.ensure_future(watch()), asyncio.ensure_future(deadline())]
        try:
            return await task
        except asyncio.CancelledError:
            if lost.done():
                raise LeadershipLost(term, lost.result()) from None
            raise
        finally:
            for w in watchers:
                w.cancel()
