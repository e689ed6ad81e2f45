"""The exceptions of mysqlleader: one class per C result code, under :class:`MysqlLeaderError`.

Every field comes from the library's error (``mysqlleader_last_error_*``), never from parsing a
message; the README's "Errors" section has the table kind → C code → exception → transient.
Two classes stand for what the C codes do not tell apart: :class:`ElectorStoppedError` (an
``InvalidStateError`` from an elector whose background task has stopped) and
:class:`LeadershipLostError` (``run_while_leader``: leadership ended before the work did).
"""

from __future__ import annotations

from typing import Dict, Optional, Type

from ._native import ResultCode, StopReason, library


class MysqlLeaderError(Exception):
    """Base class of every error of this package.

    Attributes:
        message: what went wrong, as the library (or this package) says it.
        code: the C result code, or ``None`` for an error raised by the Python layer alone.
        transient: whether simply trying the same call again may succeed (a lost connection,
            a timeout, a deadlock, ...). The failed attempt's outcome is unknown: never assume
            it took effect.
        retryable: the same as ``transient``.
        server_code: the server's error number (e.g. 1064), for :class:`ServerError` (and a
            :class:`UsageError` the server reported); else ``None``.
        sqlstate: the SQLSTATE the server reported (``"45000"`` rejected input, ``"45001"`` not
            the leader, ``"45002"`` access denied, ``"40001"`` deadlock, ...); else ``None``.
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
        sqlstate: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code: Optional[ResultCode] = ResultCode(code) if code is not None else self.default_code
        self.transient = transient
        self.server_code = server_code
        self.sqlstate = sqlstate

    @property
    def retryable(self) -> bool:
        """Whether simply trying the same call again may succeed (``transient``)."""
        return self.transient

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
    this error has been rolled back by the server.

    Attributes:
        current_term: the service's term as the refusal told it (a newer term means another
            node took over); ``None`` when unknown.
    """

    default_code = ResultCode.NOT_LEADER

    def __init__(self, message: str, *, current_term: Optional[int] = None, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.current_term = current_term


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


class AuthenticationError(ServerError):
    """The server refused the login (error 1045): a wrong user name or password, or the server
    or the account requires TLS or a client certificate (the message says which to check).
    Never transient; an elector reports it (``wait_for_leadership`` raises it)."""

    default_code = ResultCode.AUTHENTICATION


class PrivilegeError(ServerError):
    """The server denied the account something it needs, a grant is missing: the database
    (1044; 1049, unknown to it), a routine (1370: EXECUTE), a table (1142). ``server_code``
    says which. Never transient; an elector reports it (``wait_for_leadership`` raises it)."""

    default_code = ResultCode.PRIVILEGE


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


class ElectorStoppedError(InvalidStateError):
    """The elector no longer campaigns and will not lead again: its background task failed
    (:attr:`Elector.last_call_error` says why), or, for ``run_while_leader``, it resigned.
    Make a new elector to take part again."""


class LeadershipLostError(MysqlLeaderError):
    """``run_while_leader``: leadership of ``term`` ended before the work finished.

    Attributes:
        term: the term that ended.
        reason: why, as the core tells it (:class:`StopReason`: ``LOST_SEAT``,
            ``DEADLINE_PASSED``, ``RESIGNED``, ``SHUTDOWN``, ``FAILED``, ``HANDED_OVER``).
    """

    def __init__(self, term: int, reason: StopReason) -> None:
        super().__init__(f"leadership of term {term} ended ({reason.name.lower()}) before the work finished")
        self.term = term
        self.reason = reason


class UsageError(MysqlLeaderError):
    """A mistake a retry cannot mend: a wrong number of statement parameters, a TLS set-up that
    cannot work, ``assert_leader`` called outside a transaction (it would fence nothing), a
    transaction statement with more than one statement in it or one that would end the
    transaction (``COMMIT``, DDL, ...).

    Attributes:
        parameter: the argument at fault (``"sql"``), or ``None``.
    """

    default_code = ResultCode.USAGE

    def __init__(self, message: str, *, parameter: Optional[str] = None, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.parameter = parameter


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
    ResultCode.AUTHENTICATION: AuthenticationError,
    ResultCode.PRIVILEGE: PrivilegeError,
}

# The C ABI names a rejected parameter as C spells it (mysqlleader_last_error_parameter);
# Python users wrote the keyword arguments below, so errors name those, in the field and in the
# message. One table.
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


def _in_python_words(message: str, c_name: Optional[str], name: Optional[str]) -> str:
    """``message`` with the C spelling of the parameter (``lease_ms``, ``timeout_ms``) replaced
    by the keyword the Python user wrote, so that an error has one name for it."""
    if not c_name or not name:
        return message
    bare = c_name.split("->")[-1]
    return message if bare == name else message.replace(bare, name)


def error_for(
    code: int,
    message: str,
    *,
    transient: bool = False,
    server_code: int = 0,
    parameter: Optional[str] = None,
    sqlstate: Optional[str] = None,
    current_term: int = 0,
) -> MysqlLeaderError:
    """The exception for a C result code, message and fields (an unknown code: the base class).
    ``parameter`` is the C name of a rejected parameter; the exception names its Python keyword."""
    rc = ResultCode(code)
    cls = _BY_CODE.get(rc, MysqlLeaderError)
    if not message:
        message = f"{rc.name} ({int(rc)})"
    state = sqlstate or None
    server: Optional[int] = None
    if rc in (ResultCode.SERVER, ResultCode.USAGE, ResultCode.AUTHENTICATION, ResultCode.PRIVILEGE):
        server = server_code or None  # the header sets it for these only
    if issubclass(cls, (InvalidArgumentError, UsageError)):
        name = python_name(parameter)
        return cls(
            _in_python_words(message, parameter, name),
            parameter=name,
            code=rc,
            transient=transient,
            sqlstate=state,
            server_code=server,
        )
    if issubclass(cls, NotLeaderError):
        return cls(message, current_term=current_term or None, code=rc, transient=transient, sqlstate=state, server_code=server)
    return cls(message, code=rc, transient=transient, sqlstate=state, server_code=server)


def last_error(code: int) -> MysqlLeaderError:
    """The exception for a failed C call, from this thread's last error. Must be called on the
    thread that made the call, before any other call of the library."""
    lib = library()
    message = (lib.mysqlleader_last_error() or b"").decode("utf-8", "replace")
    transient = bool(lib.mysqlleader_last_error_is_transient())
    server_code = int(lib.mysqlleader_last_error_server_code())
    raw = lib.mysqlleader_last_error_parameter()
    parameter = raw.decode("utf-8", "replace") if raw else None
    sqlstate = (lib.mysqlleader_last_error_sqlstate() or b"").decode("ascii", "replace")
    current_term = int(lib.mysqlleader_last_error_current_term())
    return error_for(
        code,
        message,
        transient=transient,
        server_code=server_code,
        parameter=parameter,
        sqlstate=sqlstate,
        current_term=current_term,
    )


def check(code: int) -> None:
    """Raises the matching exception unless ``code`` is ``MYSQLLEADER_OK``."""
    if code != ResultCode.OK:
        raise last_error(code)
