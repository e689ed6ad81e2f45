"""The fence on the application's own transaction (``Elector.fence``): the statement, what its
result must look like, and how a driver's exception becomes this package's.

Any PEP 249 driver, also under SQLAlchemy (:func:`dbapi_connection`): the statement carries no placeholders (the ids are hex literals, the term
digits, as the Rust core writes them), so it means the same under every paramstyle (format,
pyformat, qmark, numeric, named), every ``sql_mode`` and every connection character set, and
no driver interpolates anything into it.

A driver's exception is read by duck typing, without importing any driver:

* the SQLSTATE from ``.sqlstate`` (mysql-connector, MariaDB Connector/Python); PyMySQL and
  mysqlclient do not keep it;
* the error number from ``.errno``, else ``.args[0]`` (PyMySQL, mysqlclient: ``(1644, msg)``);
* the message from ``.msg`` / ``.errmsg``, else ``.args[1]``.

The procedures' own refusals are ``SIGNAL`` s whose message begins with ``mysqlleader:``,
SQLSTATE 45000, 45001 or 45002, each kind with an error number of its own (31000 a rejected
input, 31001 not the leader, 31002 access denied, 31003 a call the session's state does not
allow, 31004 not the leader because an operator's handover ended the term; 1644 for all of them
from the routines of an earlier release): the library's core classifies them, as it classifies
the errors of its own calls (``mysqlleader_error_classify``): 31001 and 31004 become
:class:`NotLeaderError`, 31002 :class:`AccessDeniedError`, 31000 :class:`InvalidArgumentError`,
31003 :class:`UsageError` (a fence outside a transaction, or inside XA). Every other exception of
the driver passes through unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional, Sequence, Tuple

from ._errors import MysqlLeaderError, NotLeaderError, ServerError, UsageError, last_error
from ._native import ResultCode, library

#: ER_SIGNAL_EXCEPTION: the number of every SIGNAL without a MYSQL_ERRNO of its own (the
#: refusals of the routines of an earlier release).
SIGNAL_ERRNO = 1644
#: The error numbers of the procedures' refusals, one per kind (``mysqlleader::error::refusal``).
REFUSAL_ERRNOS = range(31000, 31005)


def _literal(text: str) -> str:
    """``text`` as a literal that means exactly these characters whatever the session's
    character set and ``sql_mode`` (``NO_BACKSLASH_ESCAPES``, ``ANSI_QUOTES``)."""
    return "_utf8mb4 X'" + text.encode("utf-8").hex().upper() + "'"


def statement(service_id: str, node_id: str, term: int) -> str:
    """``CALL assert_leader(service, node, term)`` with its values written in."""
    return f"CALL assert_leader({_literal(service_id)}, {_literal(node_id)}, {int(term)})"


def not_leading(node_id: str, service_id: str, term: int) -> NotLeaderError:
    """The refusal made without a round trip: this node does not lead now."""
    return NotLeaderError(
        f"mysqlleader: not the leader: node {node_id} does not lead service {service_id} now (term seen last: {term})",
        code=ResultCode.NOT_LEADER,
    )


def check_rows(rows: Optional[Sequence[Any]]) -> None:
    """The guard's result: one row whose ``is_leader`` is 1 (a tuple, or a mapping from a
    dictionary cursor). Anything else is an error, never a silent pass."""
    row = rows[0] if rows else None
    if isinstance(row, Mapping):
        value = row.get("is_leader")
    elif row is not None and len(row) > 0:
        value = row[0]
    else:
        value = None
    try:
        leading = value is not None and int(value) == 1
    except (TypeError, ValueError):
        leading = False
    if not leading:
        raise ServerError(
            f"mysqlleader: assert_leader returned no row saying is_leader = 1 (got {rows!r})", code=ResultCode.SERVER
        )


def _fields(error: BaseException) -> Tuple[Optional[str], Optional[int], str]:
    """(SQLSTATE or None, error number or None, message) of a driver's exception."""
    sqlstate = getattr(error, "sqlstate", None)
    if not isinstance(sqlstate, str) or not sqlstate:
        sqlstate = None
    args: Tuple[Any, ...] = tuple(getattr(error, "args", ()) or ())
    errno = getattr(error, "errno", None)
    if not isinstance(errno, int) or isinstance(errno, bool):
        errno = args[0] if args and isinstance(args[0], int) and not isinstance(args[0], bool) else None
    message = None
    for name in ("msg", "errmsg"):
        value = getattr(error, name, None)
        if isinstance(value, str) and value:
            message = value
            break
    if message is None:
        message = args[1] if len(args) >= 2 and isinstance(args[1], str) else str(error)
    return sqlstate, errno, message


def mapped(error: BaseException) -> Optional[MysqlLeaderError]:
    """This package's exception for a driver's exception from the guard, or ``None`` when it is
    not one of the procedures' refusals (it then passes through unchanged). The library's core
    classifies it (``mysqlleader_error_classify``), by the rule it applies to its own calls."""
    sqlstate, errno, message = _fields(error)
    ours = message.startswith("mysqlleader:")
    if sqlstate is None and not ((errno == SIGNAL_ERRNO or errno in REFUSAL_ERRNOS) and ours):
        return None
    if sqlstate is not None and sqlstate not in ("45000", "45001", "45002"):
        return None
    lib = library()
    code = lib.mysqlleader_error_classify(
        errno if errno is not None else SIGNAL_ERRNO,
        sqlstate.encode("ascii") if sqlstate else None,
        message.encode("utf-8", "replace"),
    )
    exception = last_error(code)
    exception.server_code = errno
    return exception


def _sqlalchemy_usage(kind: str) -> UsageError:
    return UsageError(
        f"mysqlleader: no transaction is open on this SQLAlchemy {kind}: the fence would fence nothing; "
        "call fence inside `with engine.begin() as conn:` or `with Session(engine) as s, s.begin():`",
        parameter="conn",
        code=ResultCode.USAGE,
    )


def _in_transaction(conn: Any) -> bool:
    """``conn.in_transaction()`` of a SQLAlchemy object (true when it has no such method)."""
    in_transaction = getattr(conn, "in_transaction", None)
    return not callable(in_transaction) or bool(in_transaction())


def _is_session(conn: Any) -> bool:
    """An ORM ``Session`` or ``AsyncSession``: ``get_bind()`` and a ``connection()`` method.
    (``get_bind`` first: an ``AsyncConnection``'s ``connection`` property raises.)"""
    return callable(getattr(conn, "get_bind", None)) and callable(getattr(conn, "connection", None))


def dbapi_connection(conn: Any) -> Any:
    """The PEP 249 connection to run the fence on: ``conn`` itself, or the one under a
    SQLAlchemy object in its open transaction, found by duck typing (SQLAlchemy is never
    imported):

    * an ORM ``Session`` (``connection()`` and ``get_bind()``): its ``Connection`` in the
      session's transaction (``Session.connection()``);
    * a Core ``Connection`` (``exec_driver_sql``): the driver's connection its pool lent it
      (``.connection.dbapi_connection``), in the transaction SQLAlchemy began on it, which
      commits or rolls back with the ``with`` block.

    A SQLAlchemy object with no transaction begun raises :class:`UsageError` (as MariaDB
    refuses a fence outside a transaction); an asyncio one (``AsyncConnection``,
    ``AsyncSession``) a :class:`TypeError` that names ``mysqlleader.aio``."""
    if callable(getattr(conn, "cursor", None)):
        return conn  # PEP 249
    if callable(getattr(conn, "run_sync", None)):
        raise TypeError(
            f"{type(conn).__name__} is SQLAlchemy's asyncio face: fence it with `await mysqlleader.aio.Elector.fence(conn)`, "
            "or with `await conn.run_sync(elector.fence)`"
        )
    if _is_session(conn):
        if not _in_transaction(conn):
            raise _sqlalchemy_usage("Session")
        conn = conn.connection()  # ORM Session: its Connection in the session's transaction
    if callable(getattr(conn, "exec_driver_sql", None)):
        if not _in_transaction(conn):
            raise _sqlalchemy_usage("Connection")
        proxied = conn.connection  # the pool's proxy of the driver's connection
        raw = getattr(proxied, "dbapi_connection", None)
        return raw if raw is not None else proxied
    raise TypeError(
        f"fence needs a PEP 249 connection (with .cursor()), a SQLAlchemy Connection or Session, not {type(conn).__name__}"
    )


async def driver_connection_async(conn: Any) -> Any:
    """:func:`dbapi_connection` for ``mysqlleader.aio``: ``conn`` itself (an asyncio driver's
    connection, aiomysql or asyncmy), or the driver's connection under a SQLAlchemy
    ``AsyncConnection`` (``await conn.get_raw_connection()``, then ``.driver_connection``) or
    ``AsyncSession`` (``await session.connection()`` first), in its open transaction."""
    if callable(getattr(conn, "cursor", None)):
        return conn
    if callable(getattr(conn, "run_sync", None)):
        if _is_session(conn):
            if not _in_transaction(conn):
                raise _sqlalchemy_usage("AsyncSession")
            conn = await conn.connection()  # AsyncSession: its AsyncConnection
        if callable(getattr(conn, "get_raw_connection", None)):
            if not _in_transaction(conn):
                raise _sqlalchemy_usage("AsyncConnection")
            proxied = await conn.get_raw_connection()
            driver = getattr(proxied, "driver_connection", None)
            return driver if driver is not None else proxied
    return dbapi_connection(conn)


def drain(cursor: Any) -> None:
    """Reads the statement's remaining results (a CALL answers with its row, then a status),
    so that the connection can run the next statement."""
    nextset = getattr(cursor, "nextset", None)
    if nextset is None:
        return
    while nextset():
        pass


async def drain_async(cursor: Any) -> None:
    """:func:`drain` for an asyncio driver (``await cursor.nextset()``), or a blocking one."""
    nextset = getattr(cursor, "nextset", None)
    if nextset is None:
        return
    while await maybe_await(nextset()):
        pass


async def maybe_await(value: Any) -> Any:
    """``await value`` when it is awaitable (an asyncio driver's call), else ``value``."""
    if hasattr(value, "__await__"):
        return await value
    return value
