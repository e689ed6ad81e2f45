"""mysqlleader: leader election for services that run on MySQL or MariaDB.

A thin, typed wrapper of the C library ``libmysqlleader`` (loaded with ctypes; the wheel
carries it next to this file). The election itself is decided by the stored procedures the
library installs in your database; this package calls them.

Quick tour::

    import mysqlleader

    url = "mysql://app:secret@127.0.0.1:3306/app"
    mysqlleader.migrate(url)                                 # install the schema (idempotent)

    with mysqlleader.Elector(url, "billing", lease=10) as elector:
        if elector.wait_for_leadership(timeout=30):
            with elector.fenced() as tx:                     # assert_leader(..., term) first
                tx.execute("UPDATE invoices SET sent = 1 WHERE id = ?", [42])

* :func:`migrate`, :func:`install_sql` and one function per procedure (:func:`campaign`,
  :func:`am_i_leader`, :func:`current_leader`, :func:`force_leader`, :func:`reelect`,
  :func:`resign`, :func:`handover`, :func:`assert_leader`, :func:`set_expiry_event`) for one-shot use; each
  opens a :class:`Client` for the call. A :class:`Client` (connection pool) has the same calls
  as methods, plus transactions (:meth:`Client.transaction`, :meth:`Client.fenced`).
* :class:`Elector` keeps one node's leadership alive in the background: :attr:`~Elector.is_leader`,
  :attr:`~Elector.term`, :attr:`~Elector.leader_id`, :meth:`~Elector.wait_for_leadership` (the
  core's :class:`WaitOutcome`), :meth:`~Elector.run_while_leader`, :meth:`~Elector.events` /
  ``on_event=`` for leadership changes, :meth:`~Elector.resign`, :meth:`~Elector.handover`, :meth:`~Elector.fenced`,
  :meth:`~Elector.resign_on_sigterm`. :mod:`mysqlleader.aio` offers the same for asyncio.
* :class:`Session` runs one node's electors of many services over one server connection and one
  renew for all their seats: ``session.elector(service_id)`` gives an ordinary :class:`Elector`;
  closing the session closes them all.
* The library's log records go to :mod:`logging`, logger ``"mysqlleader"``.
* Durations given to the package are ``datetime.timedelta`` or seconds (``int``/``float``,
  whole milliseconds for leases and intervals). Results keep the C API's integer
  milliseconds (``lease_remaining_ms``, ``valid_for_ms``) and offer them as timedeltas too
  (``lease_remaining``, ``valid_for``).
* Errors: :class:`MysqlLeaderError` and one subclass per C result code (see
  :mod:`mysqlleader._errors`), with the library's fields (``transient``, ``sqlstate``,
  ``server_code``, ``parameter``, ``current_term``); wrong Python types raise ``TypeError``
  before anything crosses into C.
* Every object that holds a native handle has an idempotent ``close()``, works as a context
  manager, and is released by a finalizer when collected without ``close()``.
"""

from __future__ import annotations

from ctypes import byref, c_size_t, c_void_p, create_string_buffer, string_at
from typing import Optional

from ._args import Duration
from ._client import Client, FencedTransaction, Transaction
from ._elector import Elector, EventStream
from ._session import Session
from ._errors import (
    BufferTooSmallError,
    DatabaseConnectionError,
    ElectorStoppedError,
    InternalError,
    InvalidArgumentError,
    InvalidStateError,
    UsageError,
    AccessDeniedError,
    AuthenticationError,
    PrivilegeError,
    InvalidUtf8Error,
    LeadershipLostError,
    LibraryNotFoundError,
    MigrationError,
    MysqlLeaderError,
    NotLeaderError,
    NotMigratedError,
    NullArgumentError,
    ServerError,
    check,
)
from ._native import (
    DEFAULT_REQUEST_TIMEOUT_MS,
    ELECTOR_NO_JITTER,
    ELECTOR_NO_RESIGN_ON_FREE,
    ID_BUFFER_SIZE,
    ID_MAX_CHARS,
    LEASE_MS_MAX,
    LEASE_MS_MIN,
    MIGRATE_TIMEOUT_MS,
    EventKind,
    ResultCode,
    StopReason,
    WaitOutcome,
    library,
)
from ._native import library_path as _library_path
from ._types import (
    CampaignResult,
    CurrentLeader,
    ElectorState,
    Event,
    ExpiryEventResult,
    LeaderCheck,
    ReelectResult,
    ResignResult,
)

__version__ = "0.1.0"


def library_path() -> str:
    """The path of the libmysqlleader in use (loading it when needed; raises
    :class:`LibraryNotFoundError` listing every place it looked)."""
    return _library_path()


def version() -> str:
    """The version of the loaded library, e.g. ``"0.1.0"``."""
    return (library().mysqlleader_version() or b"").decode("utf-8", "replace")


def default_node_id() -> str:
    """The node id an elector uses when given none: ``hostname:pid`` (at most 128 characters)."""
    lib = library()
    needed = c_size_t()
    buf = create_string_buffer(ID_BUFFER_SIZE)
    check(lib.mysqlleader_default_node_id(buf, ID_BUFFER_SIZE, byref(needed)))
    return buf.value.decode("utf-8", "replace")


def install_sql() -> str:
    """The whole installation as one script for the ``mysql``/``mariadb`` command-line client
    (what ``mysqlleader sql`` prints), for a DBA to review and apply."""
    lib = library()
    out = c_void_p()
    check(lib.mysqlleader_install_sql(byref(out)))
    try:
        return string_at(out.value).decode("utf-8") if out.value else ""
    finally:
        lib.mysqlleader_string_free(out.value)


def migrate(url: str, *, request_timeout: Optional[Duration] = None) -> int:
    """Installs or upgrades the election schema in the database of ``url``; returns the number
    of migrations applied now (0 when current). Safe to run from many processes at once."""
    with Client(url, request_timeout=request_timeout) as client:
        return client.migrate()


def campaign(url: str, service_id: str, node_id: str, lease: Duration) -> CampaignResult:
    """``CALL campaign(service_id, node_id, lease_ms)`` on the database of ``url``
    (see :meth:`Client.campaign`)."""
    with Client(url) as client:
        return client.campaign(service_id, node_id, lease)


def am_i_leader(url: str, service_id: str, node_id: str) -> LeaderCheck:
    """``CALL am_i_leader(service_id, node_id)`` (see :meth:`Client.am_i_leader`)."""
    with Client(url) as client:
        return client.am_i_leader(service_id, node_id)


def current_leader(url: str, service_id: str) -> CurrentLeader:
    """``CALL current_leader(service_id)`` (see :meth:`Client.current_leader`)."""
    with Client(url) as client:
        return client.current_leader(service_id)


def force_leader(url: str, service_id: str, node_id: str, lease: Duration) -> CampaignResult:
    """``CALL force_leader(service_id, node_id, lease_ms)`` (see :meth:`Client.force_leader`)."""
    with Client(url) as client:
        return client.force_leader(service_id, node_id, lease)


def reelect(url: str, service_id: str) -> ReelectResult:
    """``CALL reelect(service_id)`` (see :meth:`Client.reelect`)."""
    with Client(url) as client:
        return client.reelect(service_id)


def resign(url: str, service_id: str, node_id: str) -> ResignResult:
    """``CALL resign(service_id, node_id)`` (see :meth:`Client.resign`)."""
    with Client(url) as client:
        return client.resign(service_id, node_id)


def handover(url: str, service_id: str, to_node: str) -> CampaignResult:
    """``CALL handover(service_id, to_node)`` (see :meth:`Client.handover`)."""
    with Client(url) as client:
        return client.handover(service_id, to_node)


def assert_leader(url: str, service_id: str, node_id: str, term: int) -> LeaderCheck:
    """``CALL assert_leader(service_id, node_id, term)`` as a one-shot check (see
    :meth:`Client.assert_leader`; to fence writes use :meth:`Client.fenced`)."""
    with Client(url) as client:
        return client.assert_leader(service_id, node_id, term)


def set_expiry_event(url: str, enabled: bool) -> ExpiryEventResult:
    """``CALL set_expiry_event(enabled)`` (see :meth:`Client.set_expiry_event`)."""
    with Client(url) as client:
        return client.set_expiry_event(enabled)


__all__ = [
    # functions
    "migrate",
    "install_sql",
    "campaign",
    "am_i_leader",
    "current_leader",
    "force_leader",
    "reelect",
    "resign",
    "handover",
    "assert_leader",
    "set_expiry_event",
    "version",
    "default_node_id",
    "library_path",
    # classes
    "Client",
    "FencedTransaction",
    "Transaction",
    "Elector",
    "EventStream",
    "Session",
    "LeadershipLostError",
    # results
    "CampaignResult",
    "LeaderCheck",
    "CurrentLeader",
    "ReelectResult",
    "ResignResult",
    "ExpiryEventResult",
    "Event",
    "ElectorState",
    "Duration",
    # enums and constants
    "ResultCode",
    "EventKind",
    "StopReason",
    "WaitOutcome",
    "ID_MAX_CHARS",
    "ID_BUFFER_SIZE",
    "LEASE_MS_MIN",
    "LEASE_MS_MAX",
    "DEFAULT_REQUEST_TIMEOUT_MS",
    "MIGRATE_TIMEOUT_MS",
    "ELECTOR_NO_RESIGN_ON_FREE",
    "ELECTOR_NO_JITTER",
    # errors
    "MysqlLeaderError",
    "InvalidArgumentError",
    "NullArgumentError",
    "InvalidUtf8Error",
    "NotLeaderError",
    "DatabaseConnectionError",
    "NotMigratedError",
    "ServerError",
    "MigrationError",
    "BufferTooSmallError",
    "InternalError",
    "InvalidStateError",
    "ElectorStoppedError",
    "UsageError",
    "AccessDeniedError",
    "AuthenticationError",
    "PrivilegeError",
    "LibraryNotFoundError",
    "__version__",
]
