"""``Elector``: one node's part in the election of one service, kept alive by the library in
the background, and ``EventStream``, an iterator over its leadership changes.

Threads: the library renews the lease on its own threads and delivers leadership changes on
a callback thread (a C thread, one event at a time, each elector's in order): one per
stand-alone elector, one per :class:`Session` for all its electors. This module's
trampoline turns each into an :class:`Event`, hands it to every open :class:`EventStream` and
then to the ``on_event`` callback. Nothing raised there ever reaches C: an exception of the
callback is logged (logger ``"mysqlleader"``) and the elector goes on.
"""

from __future__ import annotations

import collections
import datetime
import atexit
import logging
import math
import os
import signal
import threading
import time
import weakref
from contextlib import ExitStack
from ctypes import byref, c_bool, c_size_t, c_uint32, c_uint64, c_void_p, create_string_buffer
from collections.abc import Sequence
from types import TracebackType
from typing import Any, Callable, Deque, Iterator, List, Optional, Set, Type, TypeVar, Union

from . import _args, _fence
from ._args import Duration
from ._client import Client, FencedTransaction
from ._errors import (
    BufferTooSmallError,
    ElectorStoppedError,
    InvalidArgumentError,
    InvalidStateError,
    LeadershipLostError,
    MysqlLeaderError,
    NotLeaderError,
    check,
    last_error,
)
from ._handle import Handle
from ._native import (
    ELECTOR_NO_JITTER,
    ELECTOR_NO_RESIGN_ON_FREE,
    EVENT_CALLBACK,
    ID_BUFFER_SIZE,
    ElectorConfigStruct,
    ElectorStateStruct,
    EventKind,
    ResultCode,
    StopReason,
    WaitOutcome,
    library,
    stop_logs,
)
from ._types import ElectorState, Event

T = TypeVar("T")

_log = logging.getLogger("mysqlleader")

#: The electors that are open, for :func:`_before_exit`.
_OPEN: "weakref.WeakSet[Elector]" = weakref.WeakSet()
#: The sessions that are open (:class:`mysqlleader.Session`), closed first by :func:`_before_exit`.
_OPEN_SESSIONS: "weakref.WeakSet[Any]" = weakref.WeakSet()


def _before_exit() -> None:
    """Run by :mod:`atexit`, before the interpreter starts to finalize: closes every elector
    still open (a leader resigns, as ``close()`` does; bounded by its request timeout), then
    stops the library's log records. After this no library thread calls into Python again.

    Why: a call from a library thread into a *finalizing* interpreter ends that thread with
    ``pthread_exit`` (Python 3.9 to 3.13), a forced unwind through the library's frames, which
    aborts the process (``FATAL: exception not rethrown``). An elector left open, whose server
    hung and then came back while the interpreter exited, did exactly that (issue 26).

    Sessions go first: closing one resigns all its seats together, over its one connection."""
    for session in list(_OPEN_SESSIONS):
        try:
            session.close()
        except BaseException:
            pass
    for elector in list(_OPEN):
        try:
            elector.close()
        except BaseException:
            pass
    stop_logs()


atexit.register(_before_exit)

#: Callback trampolines of electors closed from their own callback: the C thread is still
#: inside the trampoline when ``close()`` returns, so its ctypes thunk must outlive it.
_KEEP_ALIVE: List[Any] = []

class _Hub:
    """Where the callback thread delivers events: the open streams, the user's callback, and
    whoever waits for the elector's state to change (:meth:`wait_changed`, asyncio listeners).

    Every change the core publishes (a new state, then its events) reaches the hub as an event,
    so a waiter asks the core again after each one instead of polling: ``generation`` counts the
    changes. :meth:`poke` counts one more for what comes without an event (a follower's resign).
    Holds no reference to the Elector, so the elector's finalizer can hold the hub.
    """

    def __init__(self, on_event: Optional[Callable[[Event], Any]]) -> None:
        self.on_event = on_event
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.generation = 0
        self.streams: Set["EventStream"] = set()
        #: Called (no arguments, on any thread) after every change; asyncio electors wake here.
        self.listeners: List[Callable[[], None]] = []
        self.ended = False
        #: Whether the background task failed (an ELECTOR_STOPPED event came).
        self.task_failed = False
        #: The callback thread's ident, once it has delivered an event.
        self.thread_ident: Optional[int] = None

    def dispatch(self, event: Event) -> None:
        with self.lock:
            streams = list(self.streams)
            if event.kind is EventKind.ELECTOR_STOPPED:
                self.task_failed = True
        for stream in streams:
            stream._push(event)
        self.poke()
        callback = self.on_event
        if callback is not None:
            try:
                callback(event)
            except BaseException:  # never into C: log it, and keep the elector running
                _log.exception("the on_event callback raised (event %s); the elector goes on", event)

    def poke(self) -> None:
        """Counts a change and wakes every waiter."""
        with self.lock:
            self.generation += 1
            self.changed.notify_all()
            listeners = list(self.listeners)
        for listener in listeners:
            listener()

    def wait_changed(self, seen: int, timeout: Optional[float]) -> None:
        """Blocks until ``generation`` differs from ``seen`` or ``timeout`` seconds pass."""
        with self.lock:
            if self.generation == seen:
                self.changed.wait(timeout)

    def subscribe(self, stream: "EventStream") -> bool:
        with self.lock:
            if self.ended:
                return False
            self.streams.add(stream)
            return True

    def unsubscribe(self, stream: "EventStream") -> None:
        with self.lock:
            self.streams.discard(stream)

    def end(self) -> None:
        with self.lock:
            self.ended = True
            self.on_event = None  # a closed elector keeps none of the caller's objects alive
            streams, self.streams = list(self.streams), set()
        for stream in streams:
            stream._end()
        self.poke()
        with self.lock:
            self.listeners = []


def _trampoline_for(hub: _Hub) -> Any:
    """The C callback of one elector. Runs on its callback thread; never raises."""

    def trampoline(_userdata: Optional[int], event_ptr: Any) -> None:
        try:
            hub.thread_ident = threading.get_ident()
            if not hub.ended:
                hub.dispatch(Event._from_c(event_ptr[0]))
        except BaseException:
            try:
                _log.exception("an event could not be delivered")
            except BaseException:
                pass

    return EVENT_CALLBACK(trampoline)


def _close_elector(handle: Handle, hub: _Hub, trampoline: Any) -> None:
    """The finalizer of an Elector (also what ``close()`` runs): frees the C elector, which
    resigns unless configured not to and delivers the last events, then ends the streams."""
    try:
        handle.release()
    finally:
        hub.end()
        if hub.thread_ident is not None and threading.get_ident() == hub.thread_ident:
            _KEEP_ALIVE.append(trampoline)


#: The first buffer for :meth:`Elector.metrics_text`: the text is about 2.5 kB (more with a
#: long service id); a larger one is taken when it does not fit.
_METRICS_BUFFER_SIZE = 4096


def _copy_string(function: Any, ptr: int, size: int = ID_BUFFER_SIZE) -> str:
    """Reads a string through one of the C ``(buf, buf_len, needed_out)`` functions, with a
    buffer of ``size`` bytes first (larger ones while the string does not fit)."""
    for _ in range(4):
        buf = create_string_buffer(size)
        needed = c_size_t()
        rc = function(ptr, buf, size, byref(needed))
        if rc == ResultCode.BUFFER_TOO_SMALL:
            size = max(int(needed.value), size * 2)
            continue
        check(rc)
        return buf.value.decode("utf-8", "replace")
    raise BufferTooSmallError("mysqlleader: a string kept growing while it was read", code=ResultCode.BUFFER_TOO_SMALL)


def _timeout_seconds(value: object, name: str = "timeout") -> Optional[float]:
    """``None`` (no limit), or a non-negative timedelta or number of seconds, as seconds."""
    if value is None:
        return None
    if isinstance(value, datetime.timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise TypeError(f"{name} must be None, a datetime.timedelta or a number of seconds, not {type(value).__name__}")
    if math.isnan(seconds) or seconds < 0:
        raise InvalidArgumentError(f"invalid argument `{name}`: {name} must not be negative, got {value}", parameter=name)
    return seconds


def _check_on_event(on_event: object) -> None:
    if on_event is not None and not callable(on_event):
        raise TypeError(f"on_event must be callable or None, not {type(on_event).__name__}")


def _config_struct(
    *,
    node_id: Optional[str],
    lease: Optional[Duration],
    renew_interval: Optional[Duration],
    retry_interval: Optional[Duration],
    retry_jitter: Optional[float],
    request_timeout: Optional[Duration],
    drift_margin: Optional[Duration],
    resign_on_close: bool,
) -> ElectorConfigStruct:
    """The ``mysqlleader_elector_config`` of these settings, checked as the C API takes them
    (no service id, no fallback clients: the caller adds those). Shared by :class:`Elector`
    and :class:`~mysqlleader.Session`."""
    config = ElectorConfigStruct()
    config.node_id = _args.optional_text(node_id, "node_id")
    for field, value, name in (
        ("lease_ms", lease, "lease"),
        ("renew_ms", renew_interval, "renew_interval"),
        ("retry_ms", retry_interval, "retry_interval"),
        ("request_timeout_ms", request_timeout, "request_timeout"),
        ("drift_margin_ms", drift_margin, "drift_margin"),
    ):
        if value is not None:  # 0 in C means "the default": a given value must be >= 1 ms
            setattr(config, field, _args.positive_duration_ms(value, name))
    flags = 0
    if retry_jitter is not None:
        jitter = _args.fraction(retry_jitter, "retry_jitter")
        if jitter == 0.0:
            flags |= ELECTOR_NO_JITTER
        config.retry_jitter = jitter
    if not _args.flag(resign_on_close, "resign_on_close"):
        flags |= ELECTOR_NO_RESIGN_ON_FREE
    config.flags = flags
    return config


class EventStream:
    """The leadership changes of an :class:`Elector` from the moment the stream was opened,
    in order (:meth:`Elector.events`). Iterate over it, or poll with :meth:`get`::

        for event in elector.events():
            if event.kind is EventKind.STARTED_LEADING: ...

    Iteration ends when the elector or the stream is closed (after the elector's last event,
    e.g. ``STOPPED_LEADING`` with reason ``SHUTDOWN``). At most ``maxsize`` events wait in the
    stream; beyond that the oldest are dropped and an event of kind ``MISSED`` (with
    ``missed``, the count) comes first: ask the elector for its state then.
    """

    def __init__(self, hub: _Hub, maxsize: int) -> None:
        self._hub = hub
        self._cond = threading.Condition(threading.Lock())
        self._queue: Deque[Event] = collections.deque()
        self._maxsize = maxsize
        self._missed = 0
        self._ended = False
        if not hub.subscribe(self):
            self._ended = True

    def _push(self, event: Event) -> None:
        with self._cond:
            if self._ended:
                return
            if len(self._queue) >= self._maxsize:
                self._queue.popleft()
                self._missed += 1
            self._queue.append(event)
            self._cond.notify_all()

    def _end(self) -> None:
        with self._cond:
            self._ended = True
            self._cond.notify_all()

    @property
    def ended(self) -> bool:
        """Whether no more events will come (the elector or the stream was closed)."""
        return self._ended

    def get(self, timeout: Optional[Duration] = None) -> Optional[Event]:
        """The next event, waiting at most ``timeout`` (a timedelta or seconds; ``None``: no
        limit). ``None`` when the time ran out or the stream has ended and is empty."""
        seconds = _timeout_seconds(timeout)
        deadline = None if seconds is None else time.monotonic() + seconds
        with self._cond:
            while True:
                if self._missed:
                    missed, self._missed = self._missed, 0
                    return Event(EventKind.MISSED, 0, StopReason.NONE, None, 0, missed)
                if self._queue:
                    return self._queue.popleft()
                if self._ended:
                    return None
                if deadline is None:
                    self._cond.wait()
                else:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return None
                    self._cond.wait(left)

    def __iter__(self) -> Iterator[Event]:
        return self

    def __next__(self) -> Event:
        event = self.get()
        if event is None:
            raise StopIteration
        return event

    def close(self) -> None:
        """Stops receiving events (those already queued can still be read). Idempotent."""
        self._hub.unsubscribe(self)
        self._end()

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()


class Elector:
    """One node's part in the election of ``service_id``: it campaigns at once, in the
    background, renews its lease while it leads, and steps down by its local deadline when
    renews fail. It never blocks on the database.

    Args:
        client: a :class:`Client`, or a URL (a client is made for the elector alone).
        service_id: the election group, 1 to 128 characters.
        node_id: this node's name as others see it, 1 to 128 characters; default ``hostname:pid``.
        lease: how long a lease lasts after each acquisition or renew (timedelta or seconds,
            whole milliseconds, 100 ms to one day: an elector refuses a shorter lease, though
            the one-shot :meth:`Client.campaign` takes one from 1 ms); default 10 s. Failover
            after a crash takes at most one lease.
        renew_interval: how often the leader renews; default lease / 5, at most
            (lease - drift margin) / 3.
        retry_interval: the longest a follower waits between attempts; default lease / 10.
        retry_jitter: a follower's wait is shortened by a random part of up to this fraction
            (0 to < 1); default 0.2; 0 for none.
        request_timeout: the longest one call may take; default min(lease / 5, 2 s).
        drift_margin: subtracted from every local deadline for clock-rate drift; default lease / 100.
        resign_on_close: resign in :meth:`close` (and when collected), so another node takes
            over at once (default); ``False`` leaves the lease to lapse.
        fallback_clients: more servers of one Galera cluster, tried in turn when a call fails
            with a connection or cluster error.
        on_event: called with every :class:`Event` (leadership change), on the elector's
            callback thread, one at a time, in order. It should return promptly. Whatever it
            raises is logged (logger ``"mysqlleader"``) and the elector goes on. It may call
            any method of the elector, ``close()`` included, except a wait that would have to
            sleep (``wait_for_leadership``, ``run_while_leader``): that raises
            :class:`InvalidStateError`, since the events it waits for come on this thread.

    Every unset value's default is the library's; the invariants between them are checked
    here, and a violation raises :class:`InvalidArgumentError` naming the argument.

    A :class:`~mysqlleader.Session` makes electors of this class too (``session.elector(service_id)``),
    which share the session's connection and renew; closing the session closes them.

    Use it as a context manager (``with Elector(client, "billing") as e:``) or call
    :meth:`close` (idempotent). An elector collected without ``close()`` is closed by its
    finalizer — but an ``on_event`` callback that refers to its elector keeps it alive until
    ``close()``.

    Safety: :attr:`is_leader` is true only while the seat is held *and* the local deadline has
    not passed at the moment of the call. A process paused after checking it may still act
    late; fence database writes with :meth:`fenced`.
    """

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
        # 1. The arguments, checked before anything crosses into C.
        if not isinstance(client, (Client, str)):
            raise TypeError(f"client must be a mysqlleader.Client or a URL str, not {type(client).__name__}")
        service = _args.text(service_id, "service_id")
        config = _config_struct(
            node_id=node_id,
            lease=lease,
            renew_interval=renew_interval,
            retry_interval=retry_interval,
            retry_jitter=retry_jitter,
            request_timeout=request_timeout,
            drift_margin=drift_margin,
            resign_on_close=resign_on_close,
        )
        config.service_id = service
        if isinstance(fallback_clients, (str, bytes)) or not isinstance(fallback_clients, Sequence):
            raise TypeError(f"fallback_clients must be a sequence of mysqlleader.Client, not {type(fallback_clients).__name__}")
        for i, fallback in enumerate(fallback_clients):
            if not isinstance(fallback, Client):
                raise TypeError(f"fallback_clients[{i}] must be a mysqlleader.Client, not {type(fallback).__name__}")
        _check_on_event(on_event)

        # 2. The C elector, started at once; the clients are held open during the call.
        lib = library()
        hub = _Hub(on_event)
        trampoline = _trampoline_for(hub)
        out = c_void_p()
        with ExitStack() as stack:
            primary = stack.enter_context(Client(client)) if isinstance(client, str) else client
            pointers = [stack.enter_context(c._handle.use()) for c in fallback_clients]
            if pointers:
                array = (c_void_p * len(pointers))(*pointers)
                config.fallback_clients = array
                config.fallback_client_count = len(pointers)
            client_ptr = stack.enter_context(primary._handle.use())
            check(lib.mysqlleader_elector_new(client_ptr, byref(config), trampoline, None, byref(out)))
        # The temporary client is closed now: the elector keeps the pool it needs.

        # 3. The Python object: its finalizer frees the handle (resigning) if close() is never called.
        self._adopt(out.value or 0, hub, trampoline, service_id, None)

    @classmethod
    def _started(cls, start: Callable[[Any, Any], int], service_id: str, on_event: Optional[Callable[[Event], Any]], owner: Any) -> "Elector":
        """An Elector around a handle made elsewhere (a session's: ``mysqlleader_session_elector``
        makes an ordinary elector handle). ``start(trampoline, out_address)`` makes the C elector
        with this object's callback and returns the result code; ``owner`` is kept alive as long
        as the elector (its session)."""
        _check_on_event(on_event)
        hub = _Hub(on_event)
        trampoline = _trampoline_for(hub)
        out = c_void_p()
        check(start(trampoline, byref(out)))
        elector = cls.__new__(cls)
        elector._adopt(out.value or 0, hub, trampoline, service_id, owner)
        return elector

    def _adopt(self, ptr: int, hub: _Hub, trampoline: Any, service_id: str, owner: Any) -> None:
        """Takes ``ptr`` (a started C elector) into this object: the handle, the finalizer that
        frees it (resigning) if close() is never called, the ids."""
        lib = library()
        self._handle = Handle(ptr, lib.mysqlleader_elector_free, "Elector")
        self._hub = hub
        self._finalizer = weakref.finalize(self, _close_elector, self._handle, hub, trampoline)
        #: The session the elector belongs to (kept open while the elector lives), or None.
        self._owner = owner
        _OPEN.add(self)
        self._service_id = service_id
        with self._handle.use() as p:
            self._node_id = _copy_string(lib.mysqlleader_elector_node_id, p)

    # --- life cycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Stops the elector: a leader resigns first (unless ``resign_on_close=False``) so
        another node takes over at once; the last events (e.g. ``STOPPED_LEADING`` with reason
        ``SHUTDOWN``) are delivered before it returns, and no callback runs after. Idempotent;
        may be called from ``on_event``."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._handle.closed

    def __enter__(self) -> "Elector":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return f"<mysqlleader.Elector service={self._service_id!r} node={self._node_id!r} closed>"
        try:
            status = self.snapshot()
        except Exception:  # closed meanwhile
            return f"<mysqlleader.Elector service={self._service_id!r} node={self._node_id!r}>"
        role = "leading" if status.is_leader else "following"
        return f"<mysqlleader.Elector service={self._service_id!r} node={self._node_id!r} {role} term={status.term}>"

    # --- state -------------------------------------------------------------------------------

    @property
    def service_id(self) -> str:
        """The election group."""
        return self._service_id

    @property
    def node_id(self) -> str:
        """This node's id (the given one, or the ``hostname:pid`` default)."""
        return self._node_id

    @property
    def is_leader(self) -> bool:
        """Whether this node leads now: it holds the seat *and* its local deadline has not
        passed at this very moment."""
        out = c_bool()
        with self._handle.use() as ptr:
            self._check(library().mysqlleader_elector_is_leader(ptr, byref(out)))
        return bool(out.value)

    @property
    def term(self) -> int:
        """The term seen last: while leading, the fencing token."""
        out = c_uint64()
        with self._handle.use() as ptr:
            self._check(library().mysqlleader_elector_term(ptr, byref(out)))
        return int(out.value)

    @property
    def leader_id(self) -> Optional[str]:
        """The leader seen last (this node's id while it leads); ``None`` when the seat was vacant."""
        with self._handle.use() as ptr:
            return _copy_string(library().mysqlleader_elector_leader_id, ptr) or None

    @property
    def valid_for_ms(self) -> int:
        """Milliseconds this node may still act as leader without another renew; 0 when not leading."""
        out = c_uint64()
        with self._handle.use() as ptr:
            self._check(library().mysqlleader_elector_valid_for_ms(ptr, byref(out)))
        return int(out.value)

    @property
    def valid_for(self) -> datetime.timedelta:
        """:attr:`valid_for_ms` as a timedelta."""
        return datetime.timedelta(milliseconds=self.valid_for_ms)

    @property
    def campaigning(self) -> bool:
        """Whether the elector still campaigns (``False`` after :meth:`resign`)."""
        return self.snapshot().campaigning

    @property
    def last_call_error(self) -> Optional[str]:
        """The message of the elector's last failed call to the database (why a node does not
        lead, e.g. ``"connection: Connection refused"``); ``None`` when it succeeded."""
        with self._handle.use() as ptr:
            return _copy_string(library().mysqlleader_elector_last_call_error, ptr) or None

    def metrics_text(self) -> str:
        """The elector's metrics in the Prometheus text format (version 0.0.4), labelled
        ``name="<service>"``: ``leader_election_master_status`` (1 while this node leads, exact
        at the moment of the call, as :attr:`is_leader`), ``mysqlleader_term``,
        ``mysqlleader_leadership_transitions_total``, ``mysqlleader_campaign_errors_total`` and
        the histogram ``mysqlleader_campaign_duration_seconds`` — what the Rust library and the
        CLI's ``/metrics`` render. Never blocks: serve it from a ``/metrics`` endpoint."""
        with self._handle.use() as ptr:
            return _copy_string(library().mysqlleader_elector_metrics_text, ptr, _METRICS_BUFFER_SIZE)

    def snapshot(self) -> ElectorState:
        """A consistent snapshot of the state."""
        out = ElectorStateStruct()
        with self._handle.use() as ptr:
            self._check(library().mysqlleader_elector_snapshot(ptr, byref(out)))
        return ElectorState._from_c(out)

    # --- actions -----------------------------------------------------------------------------

    def resign(self) -> bool:
        """Steps down at once and ends this node's lease in the database, so another node takes
        over on its next attempt; afterwards the elector no longer campaigns (it keeps observing
        who leads). Returns whether this node held the seat. Blocks for at most twice the
        request timeout; :class:`DatabaseConnectionError` when the database could not be told
        (the node has stepped down all the same and its lease lapses)."""
        out = c_bool()
        try:
            with self._handle.use() as ptr:
                self._check(library().mysqlleader_elector_resign(ptr, byref(out)))
        finally:
            self._hub.poke()  # a follower's resign comes with no event: waiters look again
        return bool(out.value)

    def handover(self, to_node: str) -> bool:
        """Hands leadership over to the node ``to_node``, with no overlap: this node steps down
        at once (``STOPPED_LEADING``, ``StopReason.HANDED_OVER``), ends its term in the database
        with the seat reserved for ``to_node`` for one lease (``CALL resign_to``), then lets go
        of its wake-up lock, so that ``to_node``, when it campaigns, takes the seat within
        milliseconds. Unlike :meth:`resign`, the elector goes on campaigning as a follower.
        Returns whether this node led (a follower's handover changes nothing). ``to_node``
        must be another node's id: this node's own raises :class:`InvalidArgumentError`
        (``parameter == "to_node"``). Blocks for at most twice the request timeout."""
        to = _args.text(to_node, "to_node")
        out = c_bool()
        try:
            with self._handle.use() as ptr:
                self._check(library().mysqlleader_elector_handover(ptr, to, byref(out)))
        finally:
            self._hub.poke()  # waiters look again (a follower's call comes with no event)
        return bool(out.value)

    # --- waiting: the core answers, the hub says when to ask again -----------------------------
    #
    # A C wait cannot be interrupted, and ``close()`` must not free the elector while a call is
    # inside it; so the package never blocks in C. It asks the core with a zero timeout ("only
    # looks"), and sleeps on the hub until the next change the core publishes (every change
    # comes with an event), the caller's timeout, or a local deadline. Ctrl-C and close() from
    # another thread end the sleep at once.

    def _look_for_leadership(self) -> Optional[WaitOutcome]:
        """The core's answer now: LEADING, NOT_CAMPAIGNING, or None (still waiting)."""
        out = c_uint32()
        with self._handle.use() as ptr:
            self._check(library().mysqlleader_elector_wait(ptr, 0, byref(out)))
        outcome = WaitOutcome(out.value)
        if outcome is WaitOutcome.FAILED:
            # The core's error, with its fields: raised by the boolean wait.
            leading = c_bool()
            with self._handle.use() as ptr:
                self._check(library().mysqlleader_elector_wait_for_leadership(ptr, 0, byref(leading)))
            return WaitOutcome.LEADING if leading.value else None
        return None if outcome is WaitOutcome.TIMED_OUT else outcome

    def _look_for_term_end(self, term: int) -> Optional[StopReason]:
        """Why this node no longer leads at ``term`` (the core's answer), or None while it does."""
        ended = c_bool()
        reason = c_uint32()
        with self._handle.use() as ptr:
            self._check(library().mysqlleader_elector_wait_term_end(ptr, term, 0, byref(ended), byref(reason)))
        return StopReason(reason.value) if ended.value else None

    def _wake_at_deadline(self) -> float:
        """Seconds until just past the local deadline (a deadline passes without an event)."""
        return self.valid_for_ms / 1000.0 + 0.001

    def _wait_until(
        self, look: Callable[[], Optional[T]], timeout: Optional[float], wake: Optional[Callable[[], float]] = None
    ) -> Optional[T]:
        """Asks ``look`` until it answers (not None), after every change of the elector, or at
        most ``wake()`` seconds apart; None once ``timeout`` seconds have passed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            seen = self._hub.generation
            answer = look()
            if answer is not None:
                return answer
            limits = [] if wake is None else [wake()]
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                limits.append(left)
            if threading.get_ident() == self._hub.thread_ident:
                raise InvalidStateError("waiting inside on_event would hold back the very events it waits for: wait on another thread")
            self._hub.wait_changed(seen, min(limits) if limits else None)

    def wait_for_leadership(self, timeout: Optional[Duration] = None) -> WaitOutcome:
        """Blocks until this node leads, ``timeout`` passes (a timedelta or seconds; ``None``:
        no limit) or the node no longer campaigns, and returns which: the core's three outcomes
        (:class:`WaitOutcome`; true only for ``LEADING``, so ``if e.wait_for_leadership(30):``
        works). Nothing is polled: the package asks the core again after each change it
        publishes. :class:`InvalidStateError` once the elector is closed (also when
        ``close()`` is called from another thread during the wait).

        Raises the elector's error at once when its calls fail with one retrying cannot fix
        (:class:`AuthenticationError`, :class:`PrivilegeError`, :class:`NotMigratedError`,
        :class:`AccessDeniedError`, ...): the elector keeps trying, and a later wait succeeds
        once the set-up is mended."""
        seconds = _timeout_seconds(timeout)
        outcome = self._wait_until(self._look_for_leadership, seconds)
        return WaitOutcome.TIMED_OUT if outcome is None else outcome

    @property
    def is_healthy(self) -> bool:
        """The elector's task runs and its last call succeeded within one lease (what a
        ``/healthz`` endpoint answers)."""
        out = c_bool()
        with self._handle.use() as ptr:
            self._check(library().mysqlleader_elector_is_healthy(ptr, byref(out)))
        return bool(out.value)

    def run_while_leader(self, fn: Callable[[threading.Event], T]) -> T:
        """Runs ``fn`` while this node leads, and says so when leadership ended first.

        Waits for leadership, then calls ``fn(stop)`` in this thread. ``stop`` is a
        :class:`threading.Event`, set by a watcher thread the moment the core says leadership of
        that term ended (lost seat, deadline passed without a renew, resigned, handed over, shut down,
        failed). A thread cannot be stopped from outside, so ``fn`` must look at ``stop``
        between steps (``stop.is_set()``, or ``stop.wait(seconds)`` instead of ``sleep``) and
        return soon after it is set; fence its database writes (:meth:`fenced`) so that a write
        after the end is refused.

        Returns what ``fn`` returned when it finished while this node still led. Raises
        :class:`LeadershipLostError` (``.term``, ``.reason`` as the core tells it) when
        leadership ended before ``fn`` returned (its result is dropped); an exception of ``fn``
        passes through unchanged. :class:`ElectorStoppedError` when the node no longer campaigns
        (resigned, or its task failed) and so will never lead.
        """
        if not self.wait_for_leadership():  # no timeout: LEADING or NOT_CAMPAIGNING
            raise ElectorStoppedError("the elector no longer campaigns (it resigned, or its task failed): this node will not lead")
        term = self.term
        stop = threading.Event()
        finished = threading.Event()
        reasons: List[StopReason] = []

        def look() -> Optional[StopReason]:
            return StopReason.NONE if finished.is_set() else self._look_for_term_end(term)

        def watch() -> None:
            try:
                reason = self._wait_until(look, None, self._wake_at_deadline)
            except InvalidStateError:  # closed during fn
                reason = StopReason.SHUTDOWN
            if reason is not None and reason is not StopReason.NONE:
                reasons.append(reason)
                stop.set()

        watcher = threading.Thread(target=watch, name=f"mysqlleader-term-{term}", daemon=True)
        watcher.start()
        try:
            result = fn(stop)
            if stop.is_set():
                raise LeadershipLostError(term, reasons[0] if reasons else StopReason.SHUTDOWN)
            return result
        finally:
            finished.set()
            self._hub.poke()
            watcher.join()

    def resign_on_sigterm(self) -> None:
        """One line to hand over at once when the process gets SIGTERM (what systemd and
        Kubernetes send): without it the process dies holding the seat, and the others wait
        for the lease to run out.

        On SIGTERM the elector is closed (resigning, unless ``resign_on_close=False``) on a
        thread of its own, so that a call in progress on the main thread cannot block it; then
        the signal does what it did before: by default the process ends by SIGTERM once the
        resign is done; a Python handler set earlier is called at once (the interpreter waits
        for the resign before it exits). Call it from the main thread (a rule of
        :func:`signal.signal`)."""
        previous = signal.getsignal(signal.SIGTERM)

        def close_then(kill: bool) -> None:
            try:
                self.close()
            except BaseException:
                _log.exception("closing the elector on SIGTERM failed")
            if kill:
                os.kill(os.getpid(), signal.SIGTERM)

        def handler(signo: int, frame: Any) -> None:
            if previous in (signal.SIG_DFL, None):
                signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the kill after the resign ends us
                threading.Thread(target=close_then, args=(True,), name="mysqlleader-sigterm").start()
                return
            threading.Thread(target=close_then, args=(False,), name="mysqlleader-sigterm").start()
            if callable(previous):
                previous(signo, frame)

        signal.signal(signal.SIGTERM, handler)

    def _check(self, rc: int) -> None:
        """:func:`check`, naming a failed background task: a call refused because the task
        has stopped raises :class:`ElectorStoppedError`."""
        if rc == ResultCode.OK:
            return
        error = last_error(rc)
        if type(error) is InvalidStateError and self._hub.task_failed:
            raise ElectorStoppedError(error.message, code=rc)
        raise error

    def fenced(self) -> FencedTransaction:
        """Begins a fenced transaction: ``assert_leader(service, node, term)`` has succeeded in
        it with the term this node leads at now (:attr:`FencedTransaction.term`, an ``int``),
        so no takeover can commit before its writes::

            with elector.fenced() as tx:
                tx.execute("UPDATE jobs SET owner = ? WHERE id = ?", [elector.node_id, 7])

        Raises :class:`NotLeaderError` when this node does not lead now, or the database says
        it no longer does; nothing is left open then."""
        out = c_void_p()
        term = c_uint64()
        with self._handle.use() as ptr:
            self._check(library().mysqlleader_elector_txn_begin(ptr, byref(out), byref(term)))
        return FencedTransaction._adopt(out.value or 0, int(term.value))

    def fence(self, conn: Any) -> int:
        """The fence on a transaction the application opened with its own driver: runs
        ``CALL assert_leader(service, node, term)`` on ``conn`` (any PEP 249 connection:
        PyMySQL, mysqlclient, mysql-connector, ...) with the term this node leads at now, inside
        the transaction open on it. On success the term stays share-locked (its history row; never the seat, so the leader renews meanwhile) until that
        transaction ends, so no takeover can commit before its writes do. Returns the term
        fenced::

            conn.begin()                      # PyMySQL; or autocommit off
            with conn.cursor() as cur:
                cur.execute("INSERT INTO ledger (id, term) VALUES (%s, %s)", (7, elector.term))
            try:
                elector.fence(conn)           # before COMMIT, after the last ROLLBACK TO SAVEPOINT
            except mysqlleader.MysqlLeaderError:
                conn.rollback()
                raise
            conn.commit()

        SQLAlchemy: ``conn`` may also be a Core ``Connection`` in ``with engine.begin() as conn:``
        or an ORM ``Session`` in ``with Session(engine) as s, s.begin():`` (found by duck typing;
        the fence runs on the driver's connection under it, in that transaction). A refusal
        raises out of the block, which rolls back. Nothing begun on it: :class:`UsageError`.
        For ``AsyncConnection`` / ``AsyncSession`` use :meth:`mysqlleader.aio.Elector.fence`.

        Call it after the transaction's last ``ROLLBACK TO SAVEPOINT`` (one taken before the
        fence releases its lock). The statement carries its values as literals, so it works
        under every paramstyle; its results are read to the end, so ``conn`` runs the next
        statement as usual.

        Raises:
            NotLeaderError: this node does not lead now (no round trip then), or the database
                refused the term (SQLSTATE 45001: the server has rolled the transaction back).
                After a refusal :attr:`is_leader` is ``False`` at once: the elector has stepped
                down (:meth:`note_refusal`) before this raises. ``current_term`` tells the
                term that leads now.
            UsageError: no transaction is open on ``conn`` (autocommit on, no ``BEGIN``):
                MariaDB refuses a fence that would fence nothing (MySQL cannot tell, and lets
                it pass: there, open the transaction first).
            AccessDeniedError: SQLSTATE 45002, the account may not act on this service.
            Any other exception of the driver passes through unchanged (a lost connection,
            ...). After any error, roll the transaction back.
        """
        conn = _fence.dbapi_connection(conn)
        term = self._fence_term()
        cursor = conn.cursor()
        try:
            cursor.execute(_fence.statement(self._service_id, self._node_id, term))
            rows = cursor.fetchall()
            _fence.drain(cursor)
        except Exception as e:
            try:
                cursor.close()
            except Exception:
                pass
            mapped = self._fence_failed(e, term)
            if mapped is None:
                raise
            raise mapped from e
        cursor.close()
        _fence.check_rows(rows)
        return term

    def _fence_term(self) -> int:
        """The term this node leads at now (one snapshot); NotLeaderError when it does not."""
        state = self.snapshot()
        if not state.is_leader:
            raise _fence.not_leading(self._node_id, self._service_id, state.term)
        return state.term

    def _fence_failed(self, error: Exception, term: int) -> Optional[MysqlLeaderError]:
        """This package's exception for one of the procedures' refusals (after stepping down on
        45001), or None: the driver's exception passes through unchanged."""
        mapped = _fence.mapped(error)
        if isinstance(mapped, NotLeaderError):
            self._note_refusal_quietly(term, mapped.server_code)
        return mapped

    def _note_refusal_quietly(self, term: int, server_code: Optional[int] = None) -> None:
        try:
            self.note_refusal(term, server_code)
        except MysqlLeaderError:  # closed meanwhile, or a renew in flight outlasted the wait
            _log.debug("the elector could not be told of the refusal of term %d", term, exc_info=True)

    def note_refusal(self, term: int, server_code: Optional[int] = None) -> None:
        """Tells the elector that the database refused this node's ``term`` (SQLSTATE 45001
        from an ``assert_leader`` the application ran itself): when it still leads at that
        term it steps down at once, and its next call, sent at once, learns who leads; a
        refusal of any other term changes nothing. ``server_code``, the refusal's error number
        (the driver's ``errno``): 31004, the refusal of a term an operator's handover ended,
        stops it with :attr:`StopReason.HANDED_OVER`; any other (or None) with
        :attr:`StopReason.LOST_SEAT`. Returns once :attr:`is_leader` no longer
        reports leading at ``term`` (waiting at most for a renew already in flight, bounded by
        the request timeout). :meth:`fence` does this itself."""
        term = _args.term(term)
        code = server_code if isinstance(server_code, int) and 0 <= server_code <= 0xFFFFFFFF else 0
        try:
            with self._handle.use() as ptr:
                self._check(library().mysqlleader_elector_note_refusal_code(ptr, c_uint64(term), c_uint32(code)))
        finally:
            self._hub.poke()

    def events(self, maxsize: int = 1024) -> EventStream:
        """An :class:`EventStream` of the leadership changes from now on (earlier ones are not
        replayed: read :meth:`snapshot` for the state at this moment). Ends when the elector is
        closed."""
        if not isinstance(maxsize, int) or isinstance(maxsize, bool):
            raise TypeError(f"maxsize must be int, not {type(maxsize).__name__}")
        if maxsize < 1:
            raise InvalidArgumentError(f"invalid argument `maxsize`: maxsize must be at least 1, got {maxsize}", parameter="maxsize")
        return EventStream(self._hub, maxsize)


__all__ = ["Elector", "EventStream"]
