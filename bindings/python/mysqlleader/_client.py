"""``Client`` (a connection pool and the one-shot procedure calls) and ``Transaction``."""

from __future__ import annotations

import datetime
import decimal
import threading
import weakref
from ctypes import addressof, byref, c_bool, c_char_p, c_size_t, c_uint32, c_uint64, c_void_p, create_string_buffer, string_at
from types import TracebackType
from collections.abc import Sequence
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Type, TypeVar

from . import _args
from ._args import Duration
from ._errors import InvalidStateError, check
from ._handle import Handle
from ._native import (
    DEFAULT_REQUEST_TIMEOUT_MS,
    CampaignResultStruct,
    CurrentLeaderResultStruct,
    ColumnKind,
    LeaderCheckStruct,
    ReelectResultStruct,
    ResignResultStruct,
    library,
)
from ._types import (
    CampaignResult,
    CurrentLeader,
    ExpiryEventResult,
    LeaderCheck,
    ReelectResult,
    ResignResult,
)


class Client:
    """A pool of connections to one database, for the procedure calls, migrations,
    transactions and electors.

    ``url`` is ``mysql://user:password@host:port/database``; connections open on first use,
    so a server that is down is reported by the first call (:class:`DatabaseConnectionError`),
    never by the constructor. Every call is bounded by ``request_timeout`` (default 5 s).

    A client may be used from any number of threads at once. Use it as a context manager, or
    call :meth:`close` (idempotent); a client collected without ``close()`` is closed by its
    finalizer. Electors and transactions made from it keep the pool open: the client may be
    closed before them.

    Raises:
        TypeError: ``url`` is not a ``str``.
        InvalidArgumentError: a malformed URL (``parameter == "url"``; the message never shows
            the password), or a ``request_timeout`` outside 1 ms to one day.
    """

    def __init__(self, url: str, *, request_timeout: Optional[Duration] = None) -> None:
        url_bytes = _args.text(url, "url")
        timeout_ms = None if request_timeout is None else _args.duration_ms(request_timeout, "request_timeout")
        lib = library()
        out = c_void_p()
        check(lib.mysqlleader_client_new(url_bytes, byref(out)))
        self._handle = Handle(out.value or 0, lib.mysqlleader_client_free, "Client")
        self._finalizer = weakref.finalize(self, self._handle.release)
        self._request_timeout_ms = DEFAULT_REQUEST_TIMEOUT_MS
        if timeout_ms is not None:
            try:
                self._set_request_timeout_ms(timeout_ms)
            except BaseException:
                self.close()
                raise

    # --- life cycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Releases the pool (idle connections close once no elector or transaction uses it).
        Calling it again does nothing."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._handle.closed

    def __enter__(self) -> "Client":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<mysqlleader.Client {'closed' if self.closed else 'open'}>"

    # --- settings ----------------------------------------------------------------------------

    @property
    def request_timeout(self) -> datetime.timedelta:
        """The longest one call may take before it fails with :class:`DatabaseConnectionError`
        (1 ms to one day). Applies to the calls, transactions begun afterwards, and closing.
        Electors have their own ``request_timeout``."""
        return datetime.timedelta(milliseconds=self._request_timeout_ms)

    @request_timeout.setter
    def request_timeout(self, value: Duration) -> None:
        self._set_request_timeout_ms(_args.duration_ms(value, "request_timeout"))

    def _set_request_timeout_ms(self, ms: int) -> None:
        with self._handle.use() as ptr:
            check(library().mysqlleader_client_set_request_timeout(ptr, ms))
        self._request_timeout_ms = ms

    # --- schema ------------------------------------------------------------------------------

    def migrate(self) -> int:
        """Installs or upgrades the election schema in the client's database; returns the number
        of migrations applied now (0 when it was current). Safe to run from many processes at
        once. Raises :class:`MigrationError`, :class:`DatabaseConnectionError`, :class:`ServerError`."""
        applied = c_size_t()
        with self._handle.use() as ptr:
            check(library().mysqlleader_migrate(ptr, byref(applied)))
        return int(applied.value)

    # --- the procedures ----------------------------------------------------------------------

    def campaign(self, service_id: str, node_id: str, lease: Duration) -> CampaignResult:
        """``CALL campaign(service_id, node_id, lease_ms)``: takes the seat when it is vacant or
        its lease has expired (a new term), renews it when ``node_id`` holds it (same term), and
        otherwise changes nothing. ``lease`` is a timedelta or seconds, whole milliseconds."""
        service = _args.text(service_id, "service_id")
        node = _args.text(node_id, "node_id")
        lease_ms = _args.duration_ms(lease, "lease")
        out = CampaignResultStruct()
        with self._handle.use() as ptr:
            check(library().mysqlleader_campaign(ptr, service, node, lease_ms, byref(out)))
        return CampaignResult._from_c(out)

    def am_i_leader(self, service_id: str, node_id: str) -> LeaderCheck:
        """``CALL am_i_leader(service_id, node_id)``: a read; whether ``node_id`` holds a valid lease."""
        service = _args.text(service_id, "service_id")
        node = _args.text(node_id, "node_id")
        out = LeaderCheckStruct()
        with self._handle.use() as ptr:
            check(library().mysqlleader_am_i_leader(ptr, service, node, byref(out)))
        return LeaderCheck._from_c(out)

    def current_leader(self, service_id: str) -> CurrentLeader:
        """``CALL current_leader(service_id)``: a read; who leads the service now."""
        service = _args.text(service_id, "service_id")
        out = CurrentLeaderResultStruct()
        with self._handle.use() as ptr:
            check(library().mysqlleader_current_leader(ptr, service, byref(out)))
        return CurrentLeader._from_c(out)

    def force_leader(self, service_id: str, node_id: str, lease: Duration) -> CampaignResult:
        """``CALL force_leader(service_id, node_id, lease_ms)``: installs ``node_id`` at once with
        a new term; the displaced leader's term ends ``forced_out``. An operator's tool."""
        service = _args.text(service_id, "service_id")
        node = _args.text(node_id, "node_id")
        lease_ms = _args.duration_ms(lease, "lease")
        out = CampaignResultStruct()
        with self._handle.use() as ptr:
            check(library().mysqlleader_force_leader(ptr, service, node, lease_ms, byref(out)))
        return CampaignResult._from_c(out)

    def reelect(self, service_id: str) -> ReelectResult:
        """``CALL reelect(service_id)``: ends the current lease now (``reelected``); the next
        campaign of any node wins."""
        service = _args.text(service_id, "service_id")
        out = ReelectResultStruct()
        with self._handle.use() as ptr:
            check(library().mysqlleader_reelect(ptr, service, byref(out)))
        return ReelectResult._from_c(out)

    def resign(self, service_id: str, node_id: str) -> ResignResult:
        """``CALL resign(service_id, node_id)``: ends ``node_id``'s lease now if and only if it
        is the current leader (``resigned`` tells whether it was)."""
        service = _args.text(service_id, "service_id")
        node = _args.text(node_id, "node_id")
        out = ResignResultStruct()
        with self._handle.use() as ptr:
            check(library().mysqlleader_resign(ptr, service, node, byref(out)))
        return ResignResult._from_c(out)

    def handover(self, service_id: str, to_node: str) -> CampaignResult:
        """``CALL handover(service_id, to_node)`` (operator role): ends the current term now (it
        ends ``handed_over``), vacates the seat and reserves it for ``to_node`` for one lease, so
        that only ``to_node`` may begin the next term, at its next campaign. Nothing changes
        when ``to_node`` leads already. Returns the seat after the call, seen from ``to_node``
        (``is_leader``: it leads). The leader learns at its next renew
        (``StopReason.HANDED_OVER``)."""
        service = _args.text(service_id, "service_id")
        to = _args.text(to_node, "to_node")
        out = CampaignResultStruct()
        with self._handle.use() as ptr:
            check(library().mysqlleader_handover(ptr, service, to, byref(out)))
        return CampaignResult._from_c(out)

    def assert_leader(self, service_id: str, node_id: str, term: int) -> LeaderCheck:
        """``CALL assert_leader(service_id, node_id, term)`` as a one-shot check: returns when
        ``node_id`` holds a valid lease at exactly ``term``, else raises :class:`NotLeaderError`.

        On its own this is only a check (its row lock ends with the call). To fence writes, use
        :meth:`fenced` (or :meth:`Elector.fenced`), which runs it inside the writes' transaction.
        """
        service = _args.text(service_id, "service_id")
        node = _args.text(node_id, "node_id")
        t = _args.term(term)
        out = LeaderCheckStruct()
        with self._handle.use() as ptr:
            check(library().mysqlleader_assert_leader(ptr, service, node, t, byref(out)))
        return LeaderCheck._from_c(out)

    def set_expiry_event(self, enabled: bool) -> ExpiryEventResult:
        """``CALL set_expiry_event(enabled)``: switches the optional event that ends expired
        terms in the table (needs ``event_scheduler=ON`` on the server to run)."""
        on = _args.flag(enabled, "enabled")
        out = c_bool()
        with self._handle.use() as ptr:
            check(library().mysqlleader_set_expiry_event(ptr, on, byref(out)))
        return ExpiryEventResult(bool(out.value))

    # --- transactions ------------------------------------------------------------------------

    def transaction(self) -> "Transaction":
        """Begins a transaction on one connection of the pool (``START TRANSACTION``).

        Use it as a context manager: it commits when the block ends normally and rolls back
        when it raises. For fenced writes call :meth:`Transaction.assert_leader` first, or use
        :meth:`fenced`.
        """
        return self._begin(Transaction)

    def _begin(self, cls: Type["_Txn"]) -> "_Txn":
        out = c_void_p()
        with self._handle.use() as ptr:
            check(library().mysqlleader_txn_begin(ptr, byref(out)))
        return cls._adopt(out.value or 0, None)

    def fenced(self, service_id: str, node_id: str, term: int) -> "FencedTransaction":
        """Begins a transaction in which ``assert_leader(service_id, node_id, term)`` has
        succeeded: the term stays share-locked (its history row; never the seat, so the leader renews meanwhile) until it ends, so no takeover can commit
        before its writes do::

            with client.fenced("billing", node, term) as tx:
                tx.execute("UPDATE invoices SET sent = 1 WHERE id = ?", [42])

        Raises :class:`NotLeaderError` (nothing is left open) when ``node_id`` does not hold a
        valid lease at exactly ``term``.
        """
        service = _args.text(service_id, "service_id")
        node = _args.text(node_id, "node_id")
        t = _args.term(term)
        tx = self._begin(FencedTransaction)
        try:
            tx._assert_leader_bytes(service, node, t)
        except BaseException:
            tx.close()
            raise
        tx._term = t
        return tx


def _free_txn(ptr: int) -> None:
    library().mysqlleader_txn_free(ptr)


class Transaction:
    """A transaction on one connection: :meth:`execute` statements, then :meth:`commit`.

    Made by :meth:`Client.transaction`, :meth:`Client.fenced` or :meth:`Elector.fenced`. As a
    context manager it commits when the block ends normally and rolls back when it raises;
    :meth:`close` (idempotent; also run when the object is collected) rolls back whatever was
    not committed and releases the connection.

    After any failed call the transaction is spent: :meth:`execute` and :meth:`commit` raise
    :class:`InvalidStateError` until it is rolled back. Use it from one thread at a time (calls
    are serialized).
    """

    _handle: Handle
    _finalizer: Any  # weakref.finalize
    _lock: threading.Lock
    _term: Optional[int]
    _ended: bool
    _lastrowid: Optional[int]

    def __init__(self) -> None:  # pragma: no cover - not for direct use
        raise TypeError("Transaction objects are made by Client.transaction(), Client.fenced() or Elector.fenced()")

    @classmethod
    def _adopt(cls: Type["_Txn"], ptr: int, term: Optional[int]) -> "_Txn":
        self = object.__new__(cls)
        self._handle = Handle(ptr, _free_txn, "Transaction")
        self._finalizer = weakref.finalize(self, self._handle.release)
        self._lock = threading.Lock()
        self._term = term
        self._ended = False
        self._lastrowid = None
        return self

    @property
    def term(self) -> Optional[int]:
        """The term this transaction is fenced with (``None`` for an unfenced transaction)."""
        return self._term

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._handle.closed

    def _call(self, name: str, *args: Any) -> None:
        with self._lock, self._handle.use() as ptr:
            check(getattr(library(), name)(ptr, *args))

    def _assert_leader_bytes(self, service: bytes, node: bytes, term: int) -> LeaderCheck:
        out = LeaderCheckStruct()
        self._call("mysqlleader_txn_assert_leader", service, node, term, byref(out))
        return LeaderCheck._from_c(out)

    def assert_leader(self, service_id: str, node_id: str, term: int) -> LeaderCheck:
        """``CALL assert_leader(service_id, node_id, term)`` inside this transaction: the fencing
        guard. Returns when ``node_id`` holds a valid lease at exactly ``term``; the election row
        then stays share-locked until the transaction ends. Otherwise raises
        :class:`NotLeaderError`: the server has rolled the transaction back."""
        service = _args.text(service_id, "service_id")
        node = _args.text(node_id, "node_id")
        t = _args.term(term)
        check_ = self._assert_leader_bytes(service, node, t)
        self._term = t
        return check_

    @property
    def lastrowid(self) -> Optional[int]:
        """The ``AUTO_INCREMENT`` id generated by the last statement that succeeded
        (:meth:`execute`, :meth:`executemany`'s last, or :meth:`query`; the first id of an
        ``INSERT`` of several rows), or ``None`` when it generated none."""
        return self._lastrowid

    def _run(self, sql: str, params: Sequence[Any], keep: bool) -> Tuple[List[Tuple[Any, ...]], int]:
        """Runs one statement with ``mysqlleader_txn_query``: its rows (when ``keep``) and the
        rows it changed; records :attr:`lastrowid`."""
        statement = _args.text(sql, "sql")
        if isinstance(params, (str, bytes, bytearray)) or not isinstance(params, Sequence):
            raise TypeError(f"params must be a sequence (list or tuple), not {type(params).__name__}")
        values = [_args.sql_param(value, i) for i, value in enumerate(params)]
        n = len(values)
        # Every parameter goes with its length: bytes with NUL bytes in them pass unchanged.
        buffers = [None if v is None else create_string_buffer(v, len(v) or 1) for v in values]
        array = (c_void_p * n)(*[None if b is None else addressof(b) for b in buffers]) if n else None
        lengths = (c_size_t * n)(*[0 if v is None else len(v) for v in values]) if n else None
        lib = library()
        rows = c_void_p()
        with self._lock, self._handle.use() as ptr:
            check(lib.mysqlleader_txn_query(ptr, statement, array, lengths, n, byref(rows)))
        try:
            affected = c_uint64()
            last_id = c_uint64()
            check(lib.mysqlleader_rows_affected_rows(rows, byref(affected)))
            check(lib.mysqlleader_rows_last_insert_id(rows, byref(last_id)))
            self._lastrowid = int(last_id.value) or None
            return (_read_rows(rows) if keep else []), int(affected.value)
        finally:
            lib.mysqlleader_rows_free(rows)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Runs one statement (rows it returns are discarded) and returns the rows it changed;
        :attr:`lastrowid` then holds the id it generated.

        With ``params`` the statement is prepared and ``params[i]`` binds to the i-th ``?``:
        ``str``, ``bytes`` (binary data, NUL bytes included), ``int``, ``float``,
        ``decimal.Decimal``, ``bool``, ``datetime.datetime``/``date``/``time``/``timedelta``
        are passed as text (the server converts it to the column's type), ``None`` as SQL NULL.
        Always pass values as parameters, never by formatting them into ``sql``.
        """
        return self._run(sql, params, keep=False)[1]

    def executemany(self, sql: str, seq_of_params: Iterable[Sequence[Any]]) -> int:
        """Runs ``sql`` once per parameter sequence (each as :meth:`execute`) and returns the
        rows they changed in all. A failure spends the transaction, as in :meth:`execute`."""
        if isinstance(seq_of_params, (str, bytes, bytearray)):
            raise TypeError(f"seq_of_params must be an iterable of sequences, not {type(seq_of_params).__name__}")
        return sum(self._run(sql, params, keep=False)[1] for params in seq_of_params)

    def query(self, sql: str, params: Sequence[Any] = ()) -> List[Tuple[Any, ...]]:
        """Runs one statement (``SELECT ... FOR UPDATE``, say) and returns its rows, one tuple
        each (the first result set; ``[]`` for a statement without one). Parameters as in
        :meth:`execute`; the same rules: exactly one statement, none that ends the transaction,
        and any failure in the library spends the transaction.

        Values by the type the server declares for the column: integers as ``int``, ``DECIMAL``
        as ``decimal.Decimal``, ``FLOAT``/``DOUBLE`` as ``float``, binary columns (``BINARY``,
        ``VARBINARY``, ``BLOB``, ``BIT``) as ``bytes``, character columns as ``str`` (``bytes``
        when they are not valid UTF-8), ``DATETIME``/``TIMESTAMP``, ``DATE`` and ``TIME`` as
        ``str`` in the server's form (``'2024-05-01 12:00:00.500000'``, ``'2024-05-01'``,
        ``'-01:30:00'``: ``datetime.datetime.fromisoformat`` reads the first two), SQL NULL as
        ``None`` (apart from the empty string).
        """
        return self._run(sql, params, keep=True)[0]

    def commit(self) -> None:
        """Commits: on return every statement took effect; on an error none did (a
        :class:`DatabaseConnectionError` leaves the outcome unknown). Either way it has ended.
        :class:`InvalidStateError` when an earlier call failed: roll back instead."""
        try:
            self._call("mysqlleader_txn_commit")
        finally:
            if not self._handle.closed:
                self._ended = True

    def rollback(self) -> None:
        """Rolls back. Always allowed, also after a failure or when it has ended."""
        self._call("mysqlleader_txn_rollback")
        self._ended = True

    def close(self) -> None:
        """Rolls back what was not committed and releases the connection. Idempotent."""
        self._finalizer()

    def __enter__(self) -> "Transaction":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        try:
            if exc_type is None and not self._ended and not self.closed:
                self.commit()
        finally:
            self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else ("ended" if self._ended else "open")
        fenced = f" fenced at term {self._term}" if self._term is not None else ""
        return f"<mysqlleader.{type(self).__name__} {state}{fenced}>"


def _text_or_bytes(data: bytes) -> Any:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data


#: How a value of each column kind becomes a Python value (the rest: ``str``, or ``bytes`` when
#: not UTF-8).
_CONVERT: Dict[int, Callable[[bytes], Any]] = {
    ColumnKind.BINARY: bytes,
    ColumnKind.INTEGER: int,
    ColumnKind.DECIMAL: lambda data: decimal.Decimal(data.decode("ascii")),
    ColumnKind.FLOAT: float,
}


def _read_rows(rows: c_void_p) -> List[Tuple[Any, ...]]:
    """The rows of a ``mysqlleader_rows`` as tuples of Python values (see :meth:`Transaction.query`)."""
    lib = library()
    columns = c_size_t()
    count = c_size_t()
    check(lib.mysqlleader_rows_column_count(rows, byref(columns)))
    check(lib.mysqlleader_rows_row_count(rows, byref(count)))
    converters: List[Callable[[bytes], Any]] = []
    for c in range(columns.value):
        kind = c_uint32()
        check(lib.mysqlleader_rows_column_kind(rows, c, byref(kind)))
        converters.append(_CONVERT.get(kind.value, _text_or_bytes))
    data = c_void_p()
    length = c_size_t()
    is_null = c_bool()
    out: List[Tuple[Any, ...]] = []
    for r in range(count.value):
        row: List[Any] = []
        for c, convert in enumerate(converters):
            check(lib.mysqlleader_rows_value(rows, r, c, byref(data), byref(length), byref(is_null)))
            # A value that is not NULL always has a pointer (to its bytes and a NUL after them).
            row.append(None if is_null.value else convert(string_at(data.value or 0, length.value)))
        out.append(tuple(row))
    return out


_Txn = TypeVar("_Txn", bound=Transaction)


class FencedTransaction(Transaction):
    """A :class:`Transaction` begun fenced, by :meth:`Client.fenced` or :meth:`Elector.fenced`:
    ``assert_leader`` has succeeded in it, so its :attr:`term` is always an ``int`` (the
    fencing token), never ``None``."""

    @property
    def term(self) -> int:
        """The term this transaction is fenced with."""
        term = self._term
        if term is None:  # never: a FencedTransaction is handed out only once fenced
            raise InvalidStateError("the transaction is not fenced")
        return term


__all__ = ["Client", "FencedTransaction", "Transaction"]
