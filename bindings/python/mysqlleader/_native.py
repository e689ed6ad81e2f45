"""The C ABI of libmysqlleader, declared for ctypes, and the loader that finds the library.

Everything here mirrors ``include/mysqlleader.h`` one to one: the constants, the three enums,
the result structs and the prototypes of every function. ``tests/test_header.py`` parses the
header and fails when anything here drifts from it.

The library is loaded on first use (so ``import mysqlleader`` never fails), from, in order:

1. next to this package: ``mysqlleader/libmysqlleader.so`` (what the wheel carries);
2. the file named by the environment variable ``MYSQLLEADER_LIB`` (or that name inside it,
   when it names a directory);
3. the system's library path: ``ctypes.util.find_library("mysqlleader")``, then plain
   ``libmysqlleader.so``, then ``libmysqlleader.so.<abi>`` (the C SDK's SONAME, ``0.<minor>``
   before 1.0) (``LD_LIBRARY_PATH``, ``ld.so.cache``, ...).

A library whose major.minor version differs from the header this module mirrors is skipped
(the struct layouts could differ). When nothing loads, :class:`LibraryNotFoundError` lists every
place that was tried and why it failed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import enum
import os
import re
import sys
import threading
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_bool,
    c_char,
    c_char_p,
    c_double,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

# ---------------------------------------------------------------------------------------------
# Constants of the header (#define MYSQLLEADER_*).

#: Major version of the C ABI these declarations mirror.
VERSION_MAJOR = 0
#: Minor version of the C ABI these declarations mirror.
VERSION_MINOR = 1
#: Patch version of the header these declarations were written from.
VERSION_PATCH = 0
#: Longest service or node id the procedures accept, in characters.
ID_MAX_CHARS = 128
#: Bytes that hold any id with its terminating NUL (128 characters of UTF-8).
ID_BUFFER_SIZE = 513
#: Shortest lease, in milliseconds.
LEASE_MS_MIN = 1
#: Longest lease, in milliseconds (one day).
LEASE_MS_MAX = 86_400_000
#: The request timeout of a new client, in milliseconds.
DEFAULT_REQUEST_TIMEOUT_MS = 5_000
#: The longest a migration may take once connected, in milliseconds.
MIGRATE_TIMEOUT_MS = 120_000
#: Elector flag: closing the elector does not resign; the lease is left to lapse.
ELECTOR_NO_RESIGN_ON_FREE = 1
#: Elector flag: followers retry at exactly the retry interval, without jitter.
ELECTOR_NO_JITTER = 2
#: ``timeout_ms`` of ``mysqlleader_elector_wait_for_leadership`` that waits without limit.
WAIT_FOREVER = 2**64 - 1

U64_MAX = 2**64 - 1


# ---------------------------------------------------------------------------------------------
# Enums. Member names are the header's names without their prefix (``MYSQLLEADER_``,
# ``MYSQLLEADER_EVENT_``, ``MYSQLLEADER_STOP_``); the numbers are stable in the C ABI.


class _OpenIntEnum(enum.IntEnum):
    """An IntEnum that also represents numbers a newer library may add (``UNKNOWN_<n>``)."""

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        member = int.__new__(cls, value)
        member._name_ = f"UNKNOWN_{value}"
        member._value_ = value
        return member


class ResultCode(_OpenIntEnum):
    """``mysqlleader_result``: the outcome of every fallible C call (0 is success)."""

    OK = 0
    NULL_ARGUMENT = 1
    INVALID_ARGUMENT = 2
    INVALID_UTF8 = 3
    NOT_LEADER = 4
    CONNECTION = 5
    NOT_MIGRATED = 6
    SERVER = 7
    MIGRATION = 8
    BUFFER_TOO_SMALL = 9
    PANIC = 10
    INVALID_STATE = 11
    USAGE = 12
    ACCESS_DENIED = 13
    AUTHENTICATION = 14
    PRIVILEGE = 15


class WaitOutcome(_OpenIntEnum):
    """``mysqlleader_wait_outcome``: how a wait for leadership ended, as the core answers it.

    True in a boolean context only for ``LEADING``, so ``if elector.wait_for_leadership(30):``
    reads as before; compare with the members to tell the other two apart.
    """

    #: This node leads (by its local deadline, at the moment of answering).
    LEADING = 1
    #: The timeout passed first; the elector still campaigns.
    TIMED_OUT = 2
    #: The node no longer campaigns (it resigned, or its background task failed): it will not
    #: lead without a new elector.
    NOT_CAMPAIGNING = 3
    #: The elector's calls fail with an error retrying cannot fix (a refused login, a missing
    #: grant, the schema not installed, a service outside the account's patterns).
    #: ``Elector.wait_for_leadership`` raises that error instead of returning this.
    FAILED = 4

    def __bool__(self) -> bool:
        return int(self) == 1


class EventKind(_OpenIntEnum):
    """``mysqlleader_event_kind``: what a leadership :class:`~mysqlleader.Event` reports."""

    #: This node became leader at ``term``.
    STARTED_LEADING = 1
    #: This node stopped leading ``term``, for ``reason``.
    STOPPED_LEADING = 2
    #: Another leader (``leader_id``; ``None`` for a vacant seat) or a new term was seen.
    LEADER_CHANGED = 3
    #: ``missed`` events were dropped because the consumer fell behind.
    MISSED = 4
    #: The elector's background task ended (closed, or failed: see ``last_call_error``). Last.
    ELECTOR_STOPPED = 5
    #: The elector's calls fail with an error retrying cannot fix (``last_call_error`` says
    #: which); it keeps trying, and leads once the set-up is mended. Once per change of condition.
    FAILING = 6


class StopReason(_OpenIntEnum):
    """``mysqlleader_stop_reason``: why a node stopped leading."""

    #: Not a ``STOPPED_LEADING`` event.
    NONE = 0
    #: Another node holds the seat (forced out, or the lease lapsed and was taken).
    LOST_SEAT = 1
    #: No renew succeeded before the local deadline.
    DEADLINE_PASSED = 2
    #: This node resigned.
    RESIGNED = 3
    #: The elector was closed.
    SHUTDOWN = 4
    #: The elector's background task failed.
    FAILED = 5
    #: The term ended by a handover (this node's :meth:`~mysqlleader.Elector.handover`, or an
    #: operator's ``handover`` seen at the next renew); the elector goes on as a follower.
    HANDED_OVER = 6


class ColumnKind(_OpenIntEnum):
    """``mysqlleader_column_kind``: what a column of :meth:`~mysqlleader.Transaction.query`'s
    rows holds, from the type the server declares for it."""

    #: Character data (CHAR, VARCHAR, TEXT, ENUM, SET, JSON).
    TEXT = 0
    #: Bytes (BINARY, VARBINARY, BLOB, BIT, GEOMETRY).
    BINARY = 1
    #: TINYINT to BIGINT, YEAR.
    INTEGER = 2
    #: DECIMAL.
    DECIMAL = 3
    #: FLOAT, DOUBLE.
    FLOAT = 4
    #: DATETIME, TIMESTAMP.
    DATETIME = 5
    #: DATE.
    DATE = 6
    #: TIME.
    TIME = 7


# ---------------------------------------------------------------------------------------------
# Structs (field names and order exactly as in the header).

_Id = c_char * ID_BUFFER_SIZE


class CampaignResultStruct(Structure):
    """``mysqlleader_campaign_result``."""

    _fields_ = [
        ("is_leader", c_bool),
        ("leader_id", _Id),
        ("term", c_uint64),
        ("lease_remaining_ms", c_uint64),
    ]


class LeaderCheckStruct(Structure):
    """``mysqlleader_leader_check``."""

    _fields_ = [
        ("is_leader", c_bool),
        ("term", c_uint64),
        ("lease_remaining_ms", c_uint64),
    ]


class CurrentLeaderResultStruct(Structure):
    """``mysqlleader_current_leader_result``."""

    _fields_ = [
        ("leader_id", _Id),
        ("term", c_uint64),
        ("lease_remaining_ms", c_uint64),
    ]


class ReelectResultStruct(Structure):
    """``mysqlleader_reelect_result``."""

    _fields_ = [
        ("previous_leader_id", _Id),
        ("term", c_uint64),
    ]


class ResignResultStruct(Structure):
    """``mysqlleader_resign_result``."""

    _fields_ = [
        ("resigned", c_bool),
        ("term", c_uint64),
    ]


class ElectorConfigStruct(Structure):
    """``mysqlleader_elector_config``: zero means "the default" for every number."""

    _fields_ = [
        ("service_id", c_char_p),
        ("node_id", c_char_p),
        ("lease_ms", c_uint64),
        ("renew_ms", c_uint64),
        ("retry_ms", c_uint64),
        ("retry_jitter", c_double),
        ("request_timeout_ms", c_uint64),
        ("drift_margin_ms", c_uint64),
        ("flags", c_uint32),
        ("fallback_clients", POINTER(c_void_p)),
        ("fallback_client_count", c_size_t),
    ]


class EventStruct(Structure):
    """``mysqlleader_event``: valid only during the callback."""

    _fields_ = [
        ("kind", c_uint32),
        ("term", c_uint64),
        ("reason", c_uint32),
        ("leader_id", c_char_p),
        ("valid_for_ms", c_uint64),
        ("missed", c_uint64),
        ("result", c_uint32),
    ]


class ElectorStateStruct(Structure):
    """``mysqlleader_elector_state``."""

    _fields_ = [
        ("is_leader", c_bool),
        ("term", c_uint64),
        ("valid_for_ms", c_uint64),
        ("campaigning", c_bool),
        ("last_call_result", c_uint32),
        ("leader_id", _Id),
    ]


#: ``mysqlleader_event_callback``: ``void (*)(void *userdata, const mysqlleader_event *event)``.
EVENT_CALLBACK = CFUNCTYPE(None, c_void_p, POINTER(EventStruct))
#: ``mysqlleader_log_callback``: (userdata, level 1..5, target, message).
LOG_CALLBACK = CFUNCTYPE(None, c_void_p, c_uint32, c_char_p, c_char_p)

# ---------------------------------------------------------------------------------------------
# Prototypes: name -> (restype, argtypes). Handles are opaque pointers (c_void_p).

_RC = c_uint32  # mysqlleader_result
_P = c_void_p
_SIZE_P = POINTER(c_size_t)

PROTOTYPES: Dict[str, Tuple[Any, List[Any]]] = {
    "mysqlleader_version": (c_char_p, []),
    "mysqlleader_campaign": (_RC, [_P, c_char_p, c_char_p, c_uint64, POINTER(CampaignResultStruct)]),
    "mysqlleader_am_i_leader": (_RC, [_P, c_char_p, c_char_p, POINTER(LeaderCheckStruct)]),
    "mysqlleader_current_leader": (_RC, [_P, c_char_p, POINTER(CurrentLeaderResultStruct)]),
    "mysqlleader_force_leader": (_RC, [_P, c_char_p, c_char_p, c_uint64, POINTER(CampaignResultStruct)]),
    "mysqlleader_reelect": (_RC, [_P, c_char_p, POINTER(ReelectResultStruct)]),
    "mysqlleader_resign": (_RC, [_P, c_char_p, c_char_p, POINTER(ResignResultStruct)]),
    "mysqlleader_handover": (_RC, [_P, c_char_p, c_char_p, POINTER(CampaignResultStruct)]),
    "mysqlleader_assert_leader": (_RC, [_P, c_char_p, c_char_p, c_uint64, POINTER(LeaderCheckStruct)]),
    "mysqlleader_set_expiry_event": (_RC, [_P, c_bool, POINTER(c_bool)]),
    "mysqlleader_client_new": (_RC, [c_char_p, POINTER(c_void_p)]),
    "mysqlleader_client_set_request_timeout": (_RC, [_P, c_uint64]),
    "mysqlleader_client_free": (None, [_P]),
    "mysqlleader_migrate": (_RC, [_P, _SIZE_P]),
    "mysqlleader_install_sql": (_RC, [POINTER(c_void_p)]),
    "mysqlleader_elector_new": (_RC, [_P, POINTER(ElectorConfigStruct), EVENT_CALLBACK, c_void_p, POINTER(c_void_p)]),
    "mysqlleader_elector_is_leader": (_RC, [_P, POINTER(c_bool)]),
    "mysqlleader_elector_term": (_RC, [_P, POINTER(c_uint64)]),
    "mysqlleader_elector_valid_for_ms": (_RC, [_P, POINTER(c_uint64)]),
    "mysqlleader_elector_leader_id": (_RC, [_P, POINTER(c_char), c_size_t, _SIZE_P]),
    "mysqlleader_elector_node_id": (_RC, [_P, POINTER(c_char), c_size_t, _SIZE_P]),
    "mysqlleader_elector_snapshot": (_RC, [_P, POINTER(ElectorStateStruct)]),
    "mysqlleader_elector_last_call_error": (_RC, [_P, POINTER(c_char), c_size_t, _SIZE_P]),
    "mysqlleader_elector_metrics_text": (_RC, [_P, POINTER(c_char), c_size_t, _SIZE_P]),
    "mysqlleader_session_metrics_text": (_RC, [_P, POINTER(c_char), c_size_t, _SIZE_P]),
    "mysqlleader_elector_resign": (_RC, [_P, POINTER(c_bool)]),
    "mysqlleader_elector_handover": (_RC, [_P, c_char_p, POINTER(c_bool)]),
    "mysqlleader_elector_wait_for_leadership": (_RC, [_P, c_uint64, POINTER(c_bool)]),
    "mysqlleader_elector_wait": (_RC, [_P, c_uint64, POINTER(c_uint32)]),
    "mysqlleader_elector_wait_term_end": (_RC, [_P, c_uint64, c_uint64, POINTER(c_bool), POINTER(c_uint32)]),
    "mysqlleader_elector_is_healthy": (_RC, [_P, POINTER(c_bool)]),
    "mysqlleader_elector_note_refusal": (_RC, [_P, c_uint64]),
    "mysqlleader_elector_note_refusal_code": (_RC, [_P, c_uint64, c_uint32]),
    "mysqlleader_elector_txn_begin": (_RC, [_P, POINTER(c_void_p), POINTER(c_uint64)]),
    "mysqlleader_elector_free": (None, [_P]),
    "mysqlleader_session_new": (_RC, [_P, POINTER(ElectorConfigStruct), POINTER(c_void_p)]),
    "mysqlleader_session_elector": (_RC, [_P, c_char_p, EVENT_CALLBACK, c_void_p, POINTER(c_void_p)]),
    "mysqlleader_session_free": (None, [_P]),
    "mysqlleader_stop_reason_name": (c_char_p, [c_uint32]),
    "mysqlleader_last_error": (c_char_p, []),
    "mysqlleader_last_error_copy": (_RC, [POINTER(c_char), c_size_t, _SIZE_P]),
    "mysqlleader_last_error_code": (_RC, []),
    "mysqlleader_last_error_server_code": (c_uint32, []),
    "mysqlleader_last_error_is_transient": (c_bool, []),
    "mysqlleader_last_error_parameter": (c_char_p, []),
    "mysqlleader_set_log_callback": (_RC, [c_void_p, LOG_CALLBACK, c_uint32]),
    "mysqlleader_last_error_sqlstate": (c_char_p, []),
    "mysqlleader_last_error_current_term": (c_uint64, []),
    "mysqlleader_error_classify": (_RC, [c_uint32, c_char_p, c_char_p]),
    "mysqlleader_result_name": (c_char_p, [c_uint32]),
    "mysqlleader_string_free": (None, [c_void_p]),
    "mysqlleader_default_node_id": (_RC, [POINTER(c_char), c_size_t, _SIZE_P]),
    "mysqlleader_txn_begin": (_RC, [_P, POINTER(c_void_p)]),
    "mysqlleader_txn_assert_leader": (_RC, [_P, c_char_p, c_char_p, c_uint64, POINTER(LeaderCheckStruct)]),
    "mysqlleader_txn_execute": (_RC, [_P, c_char_p, POINTER(c_char_p), c_size_t, POINTER(c_uint64)]),
    "mysqlleader_txn_query": (_RC, [_P, c_char_p, POINTER(c_void_p), _SIZE_P, c_size_t, POINTER(c_void_p)]),
    "mysqlleader_txn_last_insert_id": (_RC, [_P, POINTER(c_uint64)]),
    "mysqlleader_rows_column_count": (_RC, [_P, _SIZE_P]),
    "mysqlleader_rows_row_count": (_RC, [_P, _SIZE_P]),
    "mysqlleader_rows_column_name": (_RC, [_P, c_size_t, POINTER(c_char_p)]),
    "mysqlleader_rows_column_kind": (_RC, [_P, c_size_t, POINTER(c_uint32)]),
    "mysqlleader_rows_value": (_RC, [_P, c_size_t, c_size_t, POINTER(c_void_p), _SIZE_P, POINTER(c_bool)]),
    "mysqlleader_rows_affected_rows": (_RC, [_P, POINTER(c_uint64)]),
    "mysqlleader_rows_last_insert_id": (_RC, [_P, POINTER(c_uint64)]),
    "mysqlleader_rows_free": (None, [_P]),
    "mysqlleader_txn_commit": (_RC, [_P]),
    "mysqlleader_txn_rollback": (_RC, [_P]),
    "mysqlleader_txn_free": (None, [_P]),
}

# ---------------------------------------------------------------------------------------------
# The loader.

if sys.platform == "darwin":
    LIBRARY_FILE = "libmysqlleader.dylib"
elif sys.platform == "win32":
    LIBRARY_FILE = "mysqlleader.dll"
else:
    LIBRARY_FILE = "libmysqlleader.so"

#: The environment variable that names the library (a file, or a directory holding it).
LIBRARY_ENV = "MYSQLLEADER_LIB"


_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_lib_path: Optional[str] = None


def _candidates() -> List[Tuple[str, Optional[str], Optional[str]]]:
    """Every place to try, in order: (where, what to dlopen or None, why it was not tried)."""
    out: List[Tuple[str, Optional[str], Optional[str]]] = []
    beside = Path(__file__).resolve().parent / LIBRARY_FILE
    out.append(("next to the package", str(beside), None))
    env = os.environ.get(LIBRARY_ENV)
    if env:
        path = Path(env)
        if path.is_dir():
            path = path / LIBRARY_FILE
        out.append((f"${LIBRARY_ENV}={env}", str(path), None))
    else:
        out.append((f"${LIBRARY_ENV}", None, "not set"))
    found = ctypes.util.find_library("mysqlleader")
    if found:
        out.append(("the system library path (ctypes.util.find_library)", found, None))
    else:
        out.append(("the system library path (ctypes.util.find_library)", None, "found nothing"))
    out.append(("the system library path (dlopen)", LIBRARY_FILE, None))
    if sys.platform.startswith("linux"):
        # The C SDK installed without its development link (libmysqlleader.so): the name the
        # library's SONAME gives, libmysqlleader.so.<abi> (0.<minor> before 1.0).
        abi = f"{VERSION_MAJOR}" if VERSION_MAJOR else f"0.{VERSION_MINOR}"
        runtime_name = f"{LIBRARY_FILE}.{abi}"
        out.append(("the system library path (dlopen)", runtime_name, None))
    return out


def _try_load(target: str) -> ctypes.CDLL:
    """Loads one candidate and declares every prototype; raises with the reason it is unusable."""
    lib = ctypes.CDLL(target)
    missing = [name for name in PROTOTYPES if not hasattr(lib, name)]
    if missing:
        raise OSError(f"lacks {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}: too old")
    for name, (restype, argtypes) in PROTOTYPES.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    version = (lib.mysqlleader_version() or b"").decode("utf-8", "replace")
    parts = version.split(".")
    try:
        major, minor = int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        raise OSError(f"reports an unreadable version {version!r}") from None
    if (major, minor) != (VERSION_MAJOR, VERSION_MINOR):
        raise OSError(
            f"is version {version}, but this package speaks the C ABI "
            f"{VERSION_MAJOR}.{VERSION_MINOR}.x"
        )
    return lib


def library() -> ctypes.CDLL:
    """The loaded libmysqlleader (loaded on the first call).

    Raises:
        mysqlleader.LibraryNotFoundError: nothing loaded; the message lists every attempt.
    """
    global _lib, _lib_path
    lib = _lib
    if lib is not None:
        return lib
    with _lock:
        if _lib is not None:
            return _lib
        attempts: List[str] = []
        for where, target, skipped in _candidates():
            if target is None:
                attempts.append(f"  - {where}: {skipped}")
                continue
            if os.sep in target and not os.path.exists(target):
                attempts.append(f"  - {where}: {target}: no such file")
                continue
            try:
                loaded = _try_load(target)
            except OSError as e:
                attempts.append(f"  - {where}: {target}: {e}")
                continue
            _lib, _lib_path = loaded, _resolved_path(target)
            _route_logs(loaded)
            return loaded
        from ._errors import LibraryNotFoundError  # here: _errors imports this module

        raise LibraryNotFoundError(
            "mysqlleader: could not load the native library "
            f"{LIBRARY_FILE}. Looked in, in this order:\n"
            + "\n".join(attempts)
            + "\nBuild it with `cargo build --release --lib` in the mysqlleader repository and "
            "reinstall the package (pip install ./bindings/python, which bundles it), or set "
            f"{LIBRARY_ENV} to the path of {LIBRARY_FILE}."
        )


# The library's log records go to the standard ``logging`` module, logger ``mysqlleader`` (a
# failed login, an unreachable server, a missing schema: once per change of condition;
# leadership started and stopped). Installed once per process, when the library is loaded; the
# ctypes callback is kept here for the life of the process. Records arrive on the library's
# threads; ``logging`` is thread-safe.
#
# The library gives each record as text, "MESSAGE key=value key=value ..." (src/ffi/log.rs). The
# record's message stays that text; its fields are also attributes of the LogRecord (``extra``):
# ``service``, ``node`` (str) and ``term`` (int), each ``None`` when the record has none, and
# ``mysqlleader_fields``, a dict of every field as text (``error``, ``reason``, ...). So a
# formatter can show ``%(service)s`` and a filter can pick one service's records.
_LEVELS = {1: 40, 2: 30, 3: 20, 4: 10, 5: 5}  # error, warning, info, debug, trace (below debug)
_log_callback: Any = None
_LOG_FIELD = re.compile(r" ([A-Za-z_][A-Za-z0-9_]*)=")


def log_fields(text: str) -> Dict[str, str]:
    """The ``key=value`` fields the library appends to a record's message; a value runs up to the
    next `` key=``."""
    found = list(_LOG_FIELD.finditer(text))
    fields: Dict[str, str] = {}
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        fields.setdefault(match.group(1), text[match.end():end])
    return fields


def log_extra(target: str, text: str) -> Dict[str, Any]:
    """The ``extra`` attributes of one of the library's records."""
    fields = log_fields(text)
    term: Optional[int] = None
    raw = fields.get("term")
    if raw is not None and raw.isdigit():
        term = int(raw)
    return {
        "mysqlleader_target": target,
        "mysqlleader_fields": fields,
        "service": fields.get("service"),
        "node": fields.get("node"),
        "term": term,
    }


def _route_logs(lib: ctypes.CDLL) -> None:
    import logging

    global _log_callback
    log = logging.getLogger("mysqlleader")

    def forward(_userdata: Any, level: int, target: bytes, message: bytes) -> None:
        try:
            levelno = _LEVELS.get(level, 20)
            if not log.isEnabledFor(levelno):
                return
            text = message.decode("utf-8", "replace")
            log.log(levelno, "%s", text, extra=log_extra(target.decode("utf-8", "replace"), text))
        except Exception:  # nothing may raise into C
            pass

    _log_callback = LOG_CALLBACK(forward)
    # Debug and more severe; `logging` filters further by the logger's level.
    if lib.mysqlleader_set_log_callback(None, _log_callback, 4) != 0:
        # Another tracing subscriber owns the process (a Rust host): its records go there.
        log.warning("the library's log records go to the process's own tracing subscriber, not to logging")


def stop_logs() -> None:
    """Stops the library's log records for good (the process is exiting). When it returns, no
    record is being delivered and none will be: the library holds its callback's lock while it
    delivers one, and ctypes releases the GIL while this call waits for it."""
    global _log_callback
    lib = _lib
    if lib is not None and _log_callback is not None:
        lib.mysqlleader_set_log_callback(None, LOG_CALLBACK(), 0)  # LOG_CALLBACK(): NULL
        # The ctypes thunk stays referenced: a library thread may still be returning from it.


def _resolved_path(target: str) -> str:
    """The file a loaded candidate came from (a bare name is looked up in /proc/self/maps)."""
    if os.sep in target:
        return str(Path(target).resolve())
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").split(" ", 5)[-1].strip()
                if path.endswith("/" + target) or os.path.basename(path).startswith(target):
                    return path
    except OSError:
        pass
    return target


def library_path() -> str:
    """The path of the library in use (loading it first when needed)."""
    library()
    assert _lib_path is not None
    return _lib_path
