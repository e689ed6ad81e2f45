"""``Session``: one node's part in the elections of many services, over one server connection
and one renew for all its seats (``mysqlleader_session_*``), with fallback servers of a
cluster if given.

A session's electors are ordinary :class:`~mysqlleader.Elector` objects, made around the
elector handles ``mysqlleader_session_elector`` returns: the same class, the same API.
Closing the session shuts all of them down together (their resigns share the session's
connection), then closes each Python elector, whose methods then behave as a closed
elector's.
"""

from __future__ import annotations

import threading
import weakref
from ctypes import byref, c_size_t, c_void_p, create_string_buffer
from contextlib import ExitStack
from types import TracebackType
from typing import Any, Callable, List, Optional, Sequence, Type, Union

from . import _args
from ._args import Duration
from ._client import Client
from ._elector import _OPEN_SESSIONS, Elector, _check_on_event, _config_struct, _copy_string
from ._errors import check
from ._handle import Handle
from ._native import ID_BUFFER_SIZE, library
from ._types import Event


def _close_session(handle: Handle, electors: "List[weakref.finalize[Any, Any]]", lock: threading.Lock) -> None:
    """The finalizer of a Session (also what ``close()`` runs): frees the C session, which shuts
    down (resigns) every elector of it still running, then frees each elector's handle (its
    last events are delivered, its streams end)."""
    try:
        handle.release()  # waits for a session_elector call in progress, which registers its elector
    finally:
        with lock:
            finalizers, electors[:] = list(electors), []
        for finalize in finalizers:
            finalize()  # nothing when that elector was closed or collected already


def _default_node_id() -> str:
    lib = library()
    needed = c_size_t()
    buf = create_string_buffer(ID_BUFFER_SIZE)
    check(lib.mysqlleader_default_node_id(buf, ID_BUFFER_SIZE, byref(needed)))
    return buf.value.decode("utf-8", "replace")


class Session:
    """One node's part in the elections of many services: one node id and one lease
    configuration for all of them, one server connection (the session keeps one, taken from
    the client's pool) and one ``renew_seats`` call per batch for all their renews, instead of
    one connection and one call per elector.

    Args:
        client: a :class:`Client`, or a URL (a client is made for the session alone).
        node_id: this node's name as others see it, 1 to 128 characters; default ``hostname:pid``.
        lease, renew_interval, retry_interval, retry_jitter, request_timeout, drift_margin,
        resign_on_close: as for :class:`Elector` (the same types, units and defaults), for
            every elector of the session.
        fallback_clients: more servers of one cluster (Galera, Group Replication), as for
            :class:`Elector`: after a call fails with a transient error (a lost or refused
            connection, a timeout, a cluster error) every later call of the session goes to
            the next server, in turn.

    Inconsistent values raise :class:`InvalidArgumentError` naming the argument (``parameter``).

    :meth:`elector` starts the session's elector of one service: an ordinary :class:`Elector`
    (``is_leader``, ``term``, ``wait_for_leadership``, ``events()``, ``fenced()``, ``fence()``,
    ``resign()``, ``handover()``, ``close()``, ...). Closing one elector resigns its seat
    alone; closing the session (:meth:`close`, leaving ``with``, or when the session is
    collected) resigns every seat of it together and closes every elector it made. A session
    stays open at least as long as any elector it made.

    A session holds one wake-up lock for all its seats and waits on the lock of the node that
    leads most of the seats it follows: those followers stay quiet while the lock is held, and a
    leader session's close wakes them at once (they take its seats in one call). Seats led by a
    third node are looked at once per retry interval. A session uses two server connections, on
    its current server: the client's, or after a transient failure the next of
    ``fallback_clients``, in turn.
    """

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
        # 1. The arguments, checked before anything crosses into C.
        if not isinstance(client, (Client, str)):
            raise TypeError(f"client must be a mysqlleader.Client or a URL str, not {type(client).__name__}")
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
        # The node id is the same for every elector: the default one is fixed here, so that
        # :attr:`node_id` tells it before any elector exists.
        node = node_id if node_id is not None else _default_node_id()
        config.node_id = _args.text(node, "node_id")
        if isinstance(fallback_clients, (str, bytes)) or not isinstance(fallback_clients, Sequence):
            raise TypeError(f"fallback_clients must be a sequence of mysqlleader.Client, not {type(fallback_clients).__name__}")
        for i, fallback in enumerate(fallback_clients):
            if not isinstance(fallback, Client):
                raise TypeError(f"fallback_clients[{i}] must be a mysqlleader.Client, not {type(fallback).__name__}")

        # 2. The C session (it connects to nothing yet); the clients are held open during the
        #    call, and a temporary client is closed after it: the session keeps the pools it needs.
        lib = library()
        out = c_void_p()
        with ExitStack() as stack:
            primary = stack.enter_context(Client(client)) if isinstance(client, str) else client
            pointers = [stack.enter_context(c._handle.use()) for c in fallback_clients]
            if pointers:
                array = (c_void_p * len(pointers))(*pointers)
                config.fallback_clients = array
                config.fallback_client_count = len(pointers)
            client_ptr = stack.enter_context(primary._handle.use())
            check(lib.mysqlleader_session_new(client_ptr, byref(config), byref(out)))

        # 3. The Python object: its finalizer frees the session and closes its electors.
        self._handle = Handle(out.value or 0, lib.mysqlleader_session_free, "Session")
        self._node_id = node
        self._lock = threading.Lock()
        #: The finalizers of the electors made here (closing the session runs them).
        self._electors: "List[weakref.finalize[Any, Any]]" = []
        self._finalizer = weakref.finalize(self, _close_session, self._handle, self._electors, self._lock)
        _OPEN_SESSIONS.add(self)

    def elector(self, service_id: str, *, on_event: Optional[Callable[[Event], Any]] = None) -> Elector:
        """Starts this session's elector for ``service_id`` (1 to 128 characters): it campaigns
        at once, with the session's node id and lease, its calls batched with the session's
        others. Returns an ordinary :class:`Elector`; ``on_event`` is as there.

        Raises :class:`InvalidArgumentError` (``parameter == "service_id"``) when the id is
        empty or too long, or when this session runs an elector for that service already;
        :class:`InvalidStateError` once the session is closed."""
        service = _args.text(service_id, "service_id")
        _check_on_event(on_event)
        lib = library()
        # Registered while the session is in use: close() waits for this call, so an elector
        # made while it closes is closed with the others.
        with self._handle.use() as session_ptr:

            def start(trampoline: Any, out: Any) -> int:
                return int(lib.mysqlleader_session_elector(session_ptr, service, trampoline, None, out))

            elector = Elector._started(start, service_id, on_event, self)
            with self._lock:
                self._electors[:] = [f for f in self._electors if f.alive]
                self._electors.append(elector._finalizer)
        return elector

    def metrics_text(self, *, detailed: bool = False) -> str:
        """The session's metrics as one Prometheus text exposition (version 0.0.4), each
        metric's ``HELP`` and ``TYPE`` once. Compact by default: the session's own series,
        labelled ``node="<node id>"`` (``mysqlleader_session_seats{state="leading|following|vacant"}``,
        the counters of its batched calls ``mysqlleader_session_renew_batches_total``,
        ``..._renew_batch_failures_total``, ``..._renewed_seats_total``,
        ``..._take_batches_total``, ``..._take_batch_failures_total``, ``..._taken_seats_total``,
        ``..._resign_batches_total``, ``..._single_campaigns_total``, and the histogram
        ``mysqlleader_session_renew_batch_duration_seconds`` of each ``renew_seats`` round trip),
        then per service (``name="<service>"``) only ``leader_election_master_status``, exact at
        the moment of the call, and ``mysqlleader_term``: about 75 bytes plus twice the service
        id's length a service (10,000 services of 10-byte ids: under 1 MB). With
        ``detailed=True``, every elector's full series too (transitions, campaign errors and the
        campaign duration histogram, which in a session includes the wait for a batch: about
        1.5 KB a service). Serve this one for a session: the electors' own
        :meth:`Elector.metrics_text` joined together repeat the ``HELP``/``TYPE`` lines, which a
        scraper rejects. Never blocks on the database; raises :class:`InvalidStateError` once
        the session is closed."""
        lib = library()
        copy = lib.mysqlleader_session_metrics_text_detailed if detailed else lib.mysqlleader_session_metrics_text
        with self._handle.use() as ptr:
            return _copy_string(copy, ptr, 4096)

    # --- life cycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Shuts down every elector of the session (each leader steps down at once and resigns,
        unless ``resign_on_close=False``; the resigns share the session's connection, and the
        close waits for them at most the request timeout plus 1 ms per elector, never longer
        than a lease unless the request timeout is; a resign not done by then still goes out
        while the process runs, else its lease lapses), then closes every
        :class:`Elector` it made: their last events are delivered, their event streams end and
        their methods raise :class:`InvalidStateError` as a closed elector's do. Idempotent;
        a closed session's :meth:`elector` raises :class:`InvalidStateError`."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._handle.closed

    @property
    def node_id(self) -> str:
        """The node id of every elector of the session (the given one, or ``hostname:pid``)."""
        return self._node_id

    def __enter__(self) -> "Session":
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
            return f"<mysqlleader.Session node={self._node_id!r} closed>"
        with self._lock:
            count = sum(1 for f in self._electors if f.alive)
        return f"<mysqlleader.Session node={self._node_id!r} electors={count}>"


__all__ = ["Session"]
