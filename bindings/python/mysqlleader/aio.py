"""asyncio for mysqlleader: the same elector, without blocking the event loop.

::

    import asyncio, mysqlleader.aio

    async def main() -> None:
        async with mysqlleader.aio.Elector("mysql://app:secret@db/app", "billing", lease=10) as e:
            await e.run_while_leader(send_invoices)   # cancelled the moment leadership ends

    asyncio.run(main())

:class:`Elector` takes the same arguments as :class:`mysqlleader.Elector` and wraps one. How the
loop stays free:

* reads (``is_leader``, ``term``, ...) and the core's answers to "do I lead?" and "has my term
  ended?" never wait on anything: they run on the loop;
* calls that talk to the database (``resign``, ``handover``, ``close``, ``fenced``) run in a
  worker thread (``asyncio.to_thread``);
* waiting is a future on the loop, resolved from the elector's callback thread with
  ``loop.call_soon_threadsafe`` at each change the core publishes (and at the local deadline),
  after which the core is asked again. A waiting coroutine can be cancelled at once.
"""

from __future__ import annotations

import asyncio
import datetime
import weakref
from collections.abc import Sequence
from typing import Any, Awaitable, Callable, List, Optional, TypeVar, Union

from . import _elector, _fence, _session
from ._args import Duration
from ._errors import ElectorStoppedError, InvalidStateError, LeadershipLostError
from ._client import Client, FencedTransaction
from ._native import StopReason, WaitOutcome
from ._types import Event

T = TypeVar("T")

#: The sync name and the name this module had first; the same class.
LeadershipLost = LeadershipLostError

__all__ = ["Elector", "Events", "LeadershipLost", "LeadershipLostError", "Session"]


async def _cancel_and_wait(*futures: "asyncio.Future[Any]") -> None:
    """Cancels ``futures`` (those not done) and waits until every one has finished: a cancelled
    task's ``finally`` blocks have run when this returns. A cancellation of the caller meanwhile
    does not cut their clean-up short (as ``asyncio.TaskGroup``, they are cancelled once): it is
    raised once they have finished. Their outcomes are read (no "exception was never retrieved"
    warning), not raised."""
    interrupted: Optional[BaseException] = None
    for future in futures:
        future.cancel()
    pending = {f for f in futures if not f.done()}
    while pending:
        try:
            _, pending = await asyncio.wait(pending)
        except asyncio.CancelledError as e:
            interrupted = e
    for future in futures:
        if not future.cancelled():
            future.exception()
    if interrupted is not None:
        raise interrupted


class Events:
    """The elector's events from the moment :meth:`Elector.events` was called, as an async
    iterator; it ends when the elector is closed. :meth:`close` unsubscribes early."""

    def __init__(self, queues: List["asyncio.Queue[Optional[Event]]"]) -> None:
        self._queues = queues
        self._queue: "asyncio.Queue[Optional[Event]]" = asyncio.Queue()
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
    """An asyncio face of :class:`mysqlleader.Elector`, with the same arguments (see there):
    ``on_event`` is called on the elector's callback thread, as there. Use ``async with``, or
    ``await close()``. Make it inside a running loop; use it from that loop only."""

    def __init__(
        self,
        client: Union[Client, str],
        service_id: str,
        *,
        node_id: Optional[str] = None,
        lease: Optional[Duration] = None,
        renew_interval: Optional[Duration] = None,
        retry_interval: Optional[Duration] = None,
        retry_jitter: Optional[float] = None,
        request_timeout: Optional[Duration] = None,
        drift_margin: Optional[Duration] = None,
        resign_on_close: bool = True,
        fallback_clients: Sequence[Client] = (),
        on_event: Optional[Callable[[Event], Any]] = None,
    ) -> None:
        # mysqlleader_elector_new never waits on the database: safe on the loop.
        self._start(
            on_event,
            lambda deliver: _elector.Elector(
                client,
                service_id,
                node_id=node_id,
                lease=lease,
                renew_interval=renew_interval,
                retry_interval=retry_interval,
                retry_jitter=retry_jitter,
                request_timeout=request_timeout,
                drift_margin=drift_margin,
                resign_on_close=resign_on_close,
                fallback_clients=fallback_clients,
                on_event=deliver,
            ),
        )

    @classmethod
    def _made_by(
        cls, on_event: Optional[Callable[[Event], Any]], make: Callable[[Callable[[Event], None]], _elector.Elector]
    ) -> "Elector":
        """An asyncio elector around the sync elector ``make(deliver)`` makes (a session's)."""
        self = cls.__new__(cls)
        self._start(on_event, make)
        return self

    def _start(
        self, on_event: Optional[Callable[[Event], Any]], make: Callable[[Callable[[Event], None]], _elector.Elector]
    ) -> None:
        """Makes the sync elector with ``make(deliver)``, ``deliver`` being its ``on_event``,
        and listens to its changes on this loop."""
        self._loop = asyncio.get_running_loop()
        self._queues: List["asyncio.Queue[Optional[Event]]"] = []
        self._next_change: "asyncio.Future[None]" = self._loop.create_future()
        _elector._check_on_event(on_event)
        user_callback = on_event
        me = weakref.ref(self)  # the callbacks must not keep this object alive

        def deliver(event: Event) -> None:  # the elector's callback thread
            this = me()
            if this is not None:
                this._soon(this._deliver, event)
            if user_callback is not None:
                user_callback(event)

        def on_change() -> None:  # any thread
            this = me()
            if this is not None:
                this._soon(this._changed)

        self._sync = make(deliver)
        self._sync._hub.listeners.append(on_change)

    def _soon(self, fn: Callable[..., None], *args: Any) -> None:
        """Runs ``fn`` on the loop, from any thread; nothing when the loop has closed."""
        try:
            self._loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:
            pass

    def _deliver(self, event: Event) -> None:
        for q in list(self._queues):
            q.put_nowait(event)

    def _changed(self) -> None:
        """On the loop: wakes every coroutine waiting for a change (they ask the core again)."""
        done, self._next_change = self._next_change, self._loop.create_future()
        if not done.done():
            done.set_result(None)

    async def _wait_until(
        self, look: Callable[[], Optional[T]], timeout: Optional[float], wake: Optional[Callable[[], float]] = None
    ) -> Optional[T]:
        """Like the sync elector's: asks ``look`` after every change, or ``wake()`` seconds
        apart; None once ``timeout`` seconds have passed."""
        deadline = None if timeout is None else self._loop.time() + timeout
        while True:
            change = self._next_change
            answer = look()
            if answer is not None:
                return answer
            limits = [] if wake is None else [wake()]
            if deadline is not None:
                left = deadline - self._loop.time()
                if left <= 0:
                    return None
                limits.append(left)
            await asyncio.wait({change}, timeout=min(limits) if limits else None)

    async def __aenter__(self) -> "Elector":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Resigns (unless ``resign_on_close=False``) and stops, in a worker thread; the event
        iterators end. Idempotent."""
        await asyncio.to_thread(self._sync.close)
        self._end_events()

    def _end_events(self) -> None:
        """Ends the event iterators (the sync elector is closed)."""
        for q in list(self._queues):
            q.put_nowait(None)

    # ---- reads: never block ----
    @property
    def sync(self) -> _elector.Elector:
        """The underlying :class:`mysqlleader.Elector`."""
        return self._sync

    @property
    def node_id(self) -> str:
        return self._sync.node_id

    @property
    def service_id(self) -> str:
        return self._sync.service_id

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

    @property
    def is_healthy(self) -> bool:
        return self._sync.is_healthy

    @property
    def closed(self) -> bool:
        return self._sync.closed

    def metrics_text(self) -> str:
        """:meth:`mysqlleader.Elector.metrics_text`: the metrics in the Prometheus text format
        (never blocks, so not a coroutine)."""
        return self._sync.metrics_text()

    # ---- calls that talk to the database: a worker thread ----
    async def resign(self) -> bool:
        """Steps down and ends this node's lease now: another node takes over at once.
        Returns whether this node held the seat."""
        return await asyncio.to_thread(self._sync.resign)

    async def handover(self, to_node: str) -> bool:
        """:meth:`mysqlleader.Elector.handover` in a worker thread: steps down at once with the
        seat reserved for ``to_node``, which takes it within milliseconds; this elector goes
        on as a follower. Returns whether this node led."""
        return await asyncio.to_thread(self._sync.handover, to_node)

    async def fenced(self) -> FencedTransaction:
        """:meth:`mysqlleader.Elector.fenced` in a worker thread. The transaction's own calls
        block: run them with ``asyncio.to_thread`` too."""
        return await asyncio.to_thread(self._sync.fenced)

    async def fence(self, conn: Any) -> int:
        """:meth:`mysqlleader.Elector.fence` on a connection of an asyncio driver (aiomysql,
        asyncmy: its cursor's calls are awaited), inside the transaction open on it
        (``await conn.begin()``), or on SQLAlchemy's ``AsyncConnection``
        (``async with engine.begin() as conn:``) or ``AsyncSession``
        (``async with AsyncSession(engine) as s, s.begin():``), on the driver's connection under
        it. The same errors; after a refusal :attr:`is_leader` is
        ``False`` at once. For a blocking PEP 249 connection use
        ``await asyncio.to_thread(elector.sync.fence, conn)`` (called here, it would block the
        loop for its round trip)."""
        conn = await _fence.driver_connection_async(conn)
        term = self._sync._fence_term()
        cursor = await _fence.maybe_await(conn.cursor())
        try:
            await _fence.maybe_await(cursor.execute(_fence.statement(self._sync.service_id, self._sync.node_id, term)))
            rows = await _fence.maybe_await(cursor.fetchall())
            await _fence.drain_async(cursor)
        except Exception as e:
            try:
                await _fence.maybe_await(cursor.close())
            except Exception:
                pass
            mapped = await asyncio.to_thread(self._sync._fence_failed, e, term)
            if mapped is None:
                raise
            raise mapped from e
        await _fence.maybe_await(cursor.close())
        _fence.check_rows(rows)
        return term

    async def note_refusal(self, term: int, server_code: Optional[int] = None) -> None:
        """:meth:`mysqlleader.Elector.note_refusal` in a worker thread."""
        await asyncio.to_thread(self._sync.note_refusal, term, server_code)

    # ---- waiting ----
    async def wait_for_leadership(self, timeout: Optional[Duration] = None) -> WaitOutcome:
        """The core's three outcomes, as :meth:`mysqlleader.Elector.wait_for_leadership`
        (``LEADING`` is the only true one). Cancellable; never blocks the loop."""
        seconds = _elector._timeout_seconds(timeout)
        outcome = await self._wait_until(self._sync._look_for_leadership, seconds)
        return WaitOutcome.TIMED_OUT if outcome is None else outcome

    def events(self) -> Events:
        """The leadership changes from the moment of this call on, as an async iterator
        (``async for event in elector.events()``); ends when the elector is closed. Events are
        kept from the call on, even before the first ``async for`` step."""
        return Events(self._queues)

    async def run_while_leader(self, work: Callable[[], Awaitable[T]]) -> T:
        """Waits for leadership, then runs ``await work()`` in a task of its own; the moment the
        core says leadership of that term ended (lost seat, deadline passed without a renew,
        resigned, handed over, shut down, failed) the work is cancelled and, once it has finished (its
        ``finally`` blocks have run), :class:`LeadershipLostError` (``.term``, ``.reason``) is
        raised. Returns the work's result when it finished while this node still led; an
        exception of the work passes through. :class:`ElectorStoppedError` when the node no
        longer campaigns (resigned, or its task failed).

        Cancelling this call (``task.cancel()``, ``asyncio.timeout``, ``asyncio.wait_for``)
        cancels the work and waits for it to finish before the cancellation goes on: when this
        call has returned or raised, the work is over."""
        if not await self.wait_for_leadership():
            raise ElectorStoppedError("the elector no longer campaigns (it resigned, or its task failed): this node will not lead")
        term = self._sync.term
        ended = asyncio.ensure_future(
            self._wait_until(lambda: self._sync._look_for_term_end(term), None, self._sync._wake_at_deadline)
        )
        task = asyncio.ensure_future(work())
        try:
            await asyncio.wait({task, ended}, return_when=asyncio.FIRST_COMPLETED)
            if ended.done():  # as the core does: an ended term wins a tie
                try:
                    reason = ended.result() or StopReason.SHUTDOWN
                except InvalidStateError:  # closed meanwhile
                    reason = StopReason.SHUTDOWN
                await _cancel_and_wait(task)
                raise LeadershipLostError(term, reason)
            return task.result()
        finally:
            # Cancelled from outside, or leaving: the work and the watcher are over before this
            # call is (a cancellation that comes meanwhile is raised once they are).
            await _cancel_and_wait(task, ended)


class Session:
    """An asyncio face of :class:`mysqlleader.Session`, with the same arguments (see there):
    :meth:`elector` gives :class:`Elector` objects of this module. Use ``async with``, or
    ``await close()`` (it resigns every seat of the session in a worker thread, then closes
    every elector it made). Make it inside a running loop; use it from that loop only."""

    def __init__(
        self,
        client: Union[Client, str],
        *,
        node_id: Optional[str] = None,
        lease: Optional[Duration] = None,
        renew_interval: Optional[Duration] = None,
        retry_interval: Optional[Duration] = None,
        retry_jitter: Optional[float] = None,
        request_timeout: Optional[Duration] = None,
        drift_margin: Optional[Duration] = None,
        resign_on_close: bool = True,
        fallback_clients: Sequence[Client] = (),
    ) -> None:
        asyncio.get_running_loop()  # the same rule as the electors'
        # mysqlleader_session_new connects to nothing: safe on the loop.
        self._sync = _session.Session(
            client,
            node_id=node_id,
            lease=lease,
            renew_interval=renew_interval,
            retry_interval=retry_interval,
            retry_jitter=retry_jitter,
            request_timeout=request_timeout,
            drift_margin=drift_margin,
            resign_on_close=resign_on_close,
            fallback_clients=fallback_clients,
        )
        self._electors: "weakref.WeakSet[Elector]" = weakref.WeakSet()

    def elector(self, service_id: str, *, on_event: Optional[Callable[[Event], Any]] = None) -> Elector:
        """The session's elector for ``service_id``, as :meth:`mysqlleader.Session.elector`
        (it never waits on the database: safe on the loop)."""
        elector = Elector._made_by(on_event, lambda deliver: self._sync.elector(service_id, on_event=deliver))
        self._electors.add(elector)
        return elector

    def metrics_text(self, *, detailed: bool = False) -> str:
        """:meth:`mysqlleader.Session.metrics_text`, compact unless ``detailed`` (it never waits
        on the database: safe on the loop)."""
        return self._sync.metrics_text(detailed=detailed)

    async def close(self) -> None:
        """:meth:`mysqlleader.Session.close` in a worker thread; the event iterators of its
        electors end. Idempotent."""
        await asyncio.to_thread(self._sync.close)
        for elector in list(self._electors):
            elector._end_events()

    async def __aenter__(self) -> "Session":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def sync(self) -> _session.Session:
        """The underlying :class:`mysqlleader.Session`."""
        return self._sync

    @property
    def node_id(self) -> str:
        return self._sync.node_id

    @property
    def closed(self) -> bool:
        return self._sync.closed
