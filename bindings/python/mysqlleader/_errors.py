"""The exceptions of mysqlleader: one class per C result code, under :class:`MysqlLeaderError`.

========================================  ==============================================
C result code                             exception
========================================  ==============================================
``MYSQLLEADER_NULL_ARGUMENT``             :class:`NullArgumentError` (an InvalidArgumentError)
``MYSQLLEADER_INVALID_ARGUMENT``          :class:`InvalidArgumentError` (also a ``ValueError``)
``MYSQLLEADER_INVALID_UTF8``              :class:`InvalidUtf8Error` (an InvalidArgumentError)
``MYSQLLEADER_NOT_LEADER``                :class:`NotLeaderError`
``MYSQLLEADER_CONNECTION``                :class:`DatabaseConnectionError`
``MYSQLLEADER_NOT_MIGRATED``              :class:`NotMigratedError`
``MYSQLLEADER_SERVER``                    :class:`ServerError` (``server_code``)
``MYSQLLEADER_MIGRATION``                 :class:`MigrationError`
``MYSQLLEADER_BUFFER_TOO_SMALL``          :class:`BufferTooSmallError` (handled inside the package)
``MYSQLLEADER_PANIC``                     :class:`InternalError`
``MYSQLLEADER_INVALID_STATE``             :class:`InvalidStateError` (also: a closed object)
========================================  ==============================================

Every exception carries the library's message (``str(e)``, ``e.message``: the server's own
text when the server reported the error, never a password), the result ``code``, whether a
retry may succeed (``transient``) and, for server errors, the server's error number.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

from ._native import ResultCode, library


class MysqlLeaderError(Exception):
    """Base class of every error of this package.

    Attributes:
        message: what went wrong, as the library (or this package) says it.
        code: the C result code, or ``None`` for an error raised by the Python layer alone.
        transient: whether simply trying the same call again may succeed (a lost connection,
            a timeout, a deadlock, ...). The failed attempt's outcome is unknown: never assume
            it took effect.
        server_code: the server's error number (e.g. 1064), for :class:`ServerError`; else ``None``.
    """

    #: The result code this class stands for (``None`` for the base class).
    default_code: Optional[ResultCode] = None

    def __init__(
        self,
        message: str,
        *,
        code: Optional[int] = None,
        transient: bool = False,
        server_code: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code: Optional[ResultCode] = ResultCode(code) if code is not None else self.default_code
        self.transient = transient
        self.server_code = server_code

    def __str__(self) -> str:
        return self.message


class InvalidArgumentError(MysqlLeaderError, ValueError):
    """A value was rejected, by this package, by the library or by the procedures (SQLSTATE
    45000): an empty or over-long id, a lease out of range, a malformed URL, an inconsistent
    elector configuration.

    Attributes:
        parameter: the name of the rejected parameter (``"service_id"``, ``"lease"``, ``"url"``,
            ``"renew_interval"``, ...), or ``None`` when the message names none.
    """

    default_code = ResultCode.INVALID_ARGUMENT

    def __init__(self, message: str, *, parameter: Optional[str] = None, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.parameter = parameter


class NullArgumentError(InvalidArgumentError):
    """The library received a NULL pointer where one is not allowed (a bug of this package)."""

    default_code = ResultCode.NULL_ARGUMENT


class InvalidUtf8Error(InvalidArgumentError):
    """The library received a string that is not UTF-8."""

    default_code = ResultCode.INVALID_UTF8


class NotLeaderError(MysqlLeaderError):
    """The node does not lead at the given term (``assert_leader``, SQLSTATE 45001), or an
    elector asked for a fenced transaction does not lead now. A fenced transaction that got
    this error has been rolled back by the server."""

    default_code = ResultCode.NOT_LEADER


class DatabaseConnectionError(MysqlLeaderError):
    """The server could not be reached, the connection broke, or the request timed out. The
    outcome of a write that failed this way is unknown; the call may be tried again."""

    default_code = ResultCode.CONNECTION


class NotMigratedError(MysqlLeaderError):
    """The election procedures or tables are missing from the database: call
    :func:`mysqlleader.migrate` (or run ``mysqlleader migrate``) first."""

    default_code = ResultCode.NOT_MIGRATED


class ServerError(MysqlLeaderError):
    """Any other error the server reported; ``server_code`` is its number (e.g. 1064)."""

    default_code = ResultCode.SERVER


class MigrationError(MysqlLeaderError):
    """A migration could not be applied."""

    default_code = ResultCode.MIGRATION


class BufferTooSmallError(MysqlLeaderError):
    """A result did not fit the buffer given to the library (the package retries with a
    larger one; seeing this means the value kept growing)."""

    default_code = ResultCode.BUFFER_TOO_SMALL


class InternalError(MysqlLeaderError):
    """A bug inside the library (a Rust panic caught at the C boundary). Close the object
    involved; please report it."""

    default_code = ResultCode.PANIC


class InvalidStateError(MysqlLeaderError):
    """The object cannot do this now: it is closed, the transaction has ended or failed
    earlier (roll it back), or the elector is being closed."""

    default_code = ResultCode.INVALID_STATE


class UsageError(MysqlLeaderError):
    """A mistake a retry cannot mend: a wrong number of statement parameters, a TLS set-up that
    cannot work, ``assert_leader`` called outside a transaction (it would fence nothing)."""

    default_code = ResultCode.USAGE


class AccessDeniedError(MysqlLeaderError):
    """The account may not act on this service (per-service access, SQLSTATE 45002); nothing
    was changed."""

    default_code = ResultCode.ACCESS_DENIED


class LibraryNotFoundError(MysqlLeaderError):
    """libmysqlleader could not be loaded; the message lists every place that was tried."""


_BY_CODE: Dict[ResultCode, Type[MysqlLeaderError]] = {
    ResultCode.NULL_ARGUMENT: NullArgumentError,
    ResultCode.INVALID_ARGUMENT: InvalidArgumentError,
    ResultCode.INVALID_UTF8: InvalidUtf8Error,
    ResultCode.NOT_LEADER: NotLeaderError,
    ResultCode.CONNECTION: DatabaseConnectionError,
    ResultCode.NOT_MIGRATED: NotMigratedError,
    ResultCode.SERVER: ServerError,
    ResultCode.MIGRATION: MigrationError,
    ResultCode.BUFFER_TOO_SMALL: BufferTooSmallError,
    ResultCode.PANIC: InternalError,
    ResultCode.INVALID_STATE: InvalidStateError,
    ResultCode.USAGE: UsageError,
    ResultCode.ACCESS_DENIED: AccessDeniedError,
}

# The C ABI names a rejected parameter as C spells it (mysqlleader_last_error_parameter);
# Python users wrote the keyword arguments below, so errors name those. One table.
_PYTHON_NAMES = {
    "config->service_id": "service_id",
    "config->node_id": "node_id",
    "config->lease_ms": "lease",
    "config->renew_ms": "renew_interval",
    "config->retry_ms": "retry_interval",
    "config->retry_jitter": "retry_jitter",
    "config->request_timeout_ms": "request_timeout",
    "config->drift_margin_ms": "drift_margin",
    "config->flags": "flags",
    "config->fallback_clients": "fallback_clients",
    "timeout_ms": "request_timeout",
    "lease_ms": "lease",
}


def python_name(c_name: Optional[str]) -> Optional[str]:
    """The Python keyword for a parameter the C ABI names ``c_name``."""
    if c_name is None:
        return None
    return _PYTHON_NAMES.get(c_name, c_name)


def error_for(
    code: int, message: str, *, transient: bool = False, server_code: int = 0, parameter: Optional[str] = None
) -> MysqlLeaderError:
    """The exception for a C result code, message and fields (an unknown code: the base class).
    ``parameter`` is the C name of a rejected parameter; the exception names its Python keyword."""
    rc = ResultCode(code)
    cls = _BY_CODE.get(rc, MysqlLeaderError)
    if not message:
        message = f"mysqlleader: {rc.name} ({int(rc)})"
    if issubclass(cls, InvalidArgumentError):
        return cls(message, parameter=python_name(parameter), code=rc, transient=transient)
    return cls(
        message,
        code=rc,
        transient=transient,
        server_code=server_code if rc == ResultCode.SERVER else None,
    )


def last_error(code: int) -> MysqlLeaderError:
    """The exception for a failed C call, from this thread's last error. Must be called on the
    thread that made the call, before any other call of the library."""
    lib = library()
    message = (lib.mysqlleader_last_error() or b"").decode("utf-8", "replace")
    transient = bool(lib.mysqlleader_last_error_is_transient())
    server_code = int(lib.mysqlleader_last_error_server_code())
    raw = lib.mysqlleader_last_error_parameter()
    parameter = raw.decode("utf-8", "replace") if raw else None
    return error_for(code, message, transient=transient, server_code=server_code, parameter=parameter)


def check(code: int) -> None:
    """Raises the matching exception unless ``code`` is ``MYSQLLEADER_OK``."""
    if code != ResultCode.OK:
        raise last_error(code)
