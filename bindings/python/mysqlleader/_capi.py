"""The C ABI of libmysqlleader for ctypes: the constants, enums, structs, callback types and
prototypes of ``include/mysqlleader.h``. ``_native.py`` loads the library and declares the
prototypes on it; the package imports these names from there.
"""

# Generated from include/mysqlleader.h by tests/ffi_header.rs; do not edit.
# Regenerate: MYSQLLEADER_UPDATE_HEADER=1 cargo test --release --test command_line ffi_header
# The mapping rules are in tests/ffi_header/bindings.rs (section Python).

from __future__ import annotations

from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_bool,
    c_char,
    c_char_p,
    c_double,
    c_int32,
    c_int64,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import Any, Dict, List, Tuple

from ._enums import _OpenIntEnum, _TrueWhenLeading

# ---------------------------------------------------------------------------------------------
# Constants (#define MYSQLLEADER_*).

#: The version of the library this header belongs to (Cargo.toml's); compare with mysqlleader_version().
VERSION_MAJOR = 0
VERSION_MINOR = 1
VERSION_PATCH = 0
VERSION = "0.1.0"
#: Longest service or node id the procedures accept, in characters.
ID_MAX_CHARS = 128
#: Bytes a caller's buffer needs to hold any id with its terminating NUL: 128 characters of
#: UTF-8 take at most 512 bytes.
ID_BUFFER_SIZE = 513
#: Shortest lease, in milliseconds.
LEASE_MS_MIN = 1
#: Longest lease, in milliseconds (one day).
LEASE_MS_MAX = 86400000
#: The request timeout of a new client: the longest one call may take before it fails with
#: `MYSQLLEADER_CONNECTION`.
DEFAULT_REQUEST_TIMEOUT_MS = 5000
#: The longest `mysqlleader_migrate` may take once connected (it waits up to 60 s for another
#: process's migration to finish first).
MIGRATE_TIMEOUT_MS = 120000
#: Flag of `mysqlleader_elector_config.flags`: `mysqlleader_elector_free` does not resign; the
#: lease is left to lapse (the default is to resign, so another node takes over at once).
ELECTOR_NO_RESIGN_ON_FREE = 1
#: Flag of `mysqlleader_elector_config.flags`: followers retry at exactly `retry_ms`, without
#: jitter (`retry_jitter` must then be 0).
ELECTOR_NO_JITTER = 2
#: `timeout_ms` of `mysqlleader_elector_wait_for_leadership` that waits without limit.
WAIT_FOREVER = 2**64 - 1  # UINT64_MAX


# ---------------------------------------------------------------------------------------------
# Enums: the members are the header's names without the prefix they share.


class ResultCode(_OpenIntEnum):
    """``mysqlleader_result``.

    The result of every fallible call. The numbers are stable: a code is never renumbered or
    reused, new codes are only appended. `MYSQLLEADER_OK` is 0, so `if (rc) { ... }` tests for
    failure. After a failure, `mysqlleader_last_error()` tells what went wrong.
    """

    #: Success.
    OK = 0

    #: A pointer argument that must not be NULL was NULL; the message names it.
    NULL_ARGUMENT = 1

    #: A value was rejected, by this library or by the procedures (SQLSTATE 45000): an empty or
    #: over-long id (more than 128 characters), a lease outside 1 to 86,400,000 ms, an
    #: inconsistent elector configuration, a malformed URL. The message names the parameter.
    INVALID_ARGUMENT = 2

    #: A string argument is not valid UTF-8; the message names it and the byte offset.
    INVALID_UTF8 = 3

    #: The node does not lead at the given term (`assert_leader`, SQLSTATE 45001), or an
    #: elector asked to fence a transaction does not lead now.
    NOT_LEADER = 4

    #: The server could not be reached, the connection broke, or the request timed out. The
    #: outcome of a write that failed this way is unknown; the call may be tried again.
    CONNECTION = 5

    #: The election procedures or tables are missing from the database: call
    #: `mysqlleader_migrate` (or run `mysqlleader migrate`) first.
    NOT_MIGRATED = 6

    #: Any other error the server reported; `mysqlleader_last_error_server_code()` gives its
    #: number and `mysqlleader_last_error_is_transient()` whether a retry may succeed.
    SERVER = 7

    #: A migration could not be applied.
    MIGRATION = 8

    #: The caller's buffer is too small; the needed size (NUL included) was written to the
    #: `needed_out` argument.
    BUFFER_TOO_SMALL = 9

    #: A bug inside the library: a Rust panic was caught at the boundary. The handle involved
    #: may be in an inconsistent state; free it.
    PANIC = 10

    #: The handle cannot do this now: the transaction has ended or failed earlier (roll it
    #: back), the elector is being freed, or its background task has stopped.
    INVALID_STATE = 11

    #: A mistake a retry cannot mend, found by the driver rather than the server: a wrong
    #: number of statement parameters, a TLS set-up that cannot work, `assert_leader` called
    #: outside a transaction (it would fence nothing). Never transient.
    USAGE = 12

    #: The account may not act on this service (SQLSTATE 45002, per-service access); the message
    #: names the account and the service. Nothing was changed.
    ACCESS_DENIED = 13

    #: The server refused the login (error 1045): a wrong user name or password, or the server
    #: or the account requires TLS or a client certificate (the message says which to check).
    #: `mysqlleader_last_error_server_code()` gives the number. Never transient.
    AUTHENTICATION = 14

    #: The server denied the account something it needs (a grant is missing): the database
    #: (1044; 1049, unknown to it), a routine (1370: EXECUTE), a table (1142).
    #: `mysqlleader_last_error_server_code()` gives the number. Never transient.
    PRIVILEGE = 15


class ColumnKind(_OpenIntEnum):
    """``mysqlleader_column_kind``.

    What a column holds, from the type the server declares for it: enough to turn a value's
    text into the caller's type without parsing the SQL. The numbers are stable.
    """

    #: Character data (`CHAR`, `VARCHAR`, `TEXT`, `ENUM`, `SET`, `JSON`), in the connection's
    #: character set (utf8mb4); also a column of NULL literals.
    TEXT = 0

    #: Bytes (`BINARY`, `VARBINARY`, `BLOB`, `BIT`, `GEOMETRY`, and text in the binary
    #: character set): any byte may occur, NUL included.
    BINARY = 1

    #: An integer (`TINYINT` to `BIGINT`, signed or unsigned, `YEAR`): decimal text.
    INTEGER = 2

    #: An exact decimal (`DECIMAL`): decimal text, e.g. `-12.500`.
    DECIMAL = 3

    #: A floating-point number (`FLOAT`, `DOUBLE`): decimal text.
    FLOAT = 4

    #: `DATETIME` or `TIMESTAMP`: `YYYY-MM-DD HH:MM:SS[.ffffff]`.
    DATETIME = 5

    #: `DATE`: `YYYY-MM-DD`.
    DATE = 6

    #: `TIME`: `[-]HH:MM:SS[.ffffff]` (the hours may exceed 24).
    TIME = 7


class EventKind(_OpenIntEnum):
    """``mysqlleader_event_kind``.

    What happened, in `mysqlleader_event.kind`.
    """

    #: This node became leader at `term`; `valid_for_ms` is how long it may act as leader
    #: without another renew, as of the delivery.
    STARTED_LEADING = 1

    #: This node stopped leading `term`, for `reason`.
    STOPPED_LEADING = 2

    #: Another leader (`leader_id`; NULL for a vacant seat) or a new `term` was seen.
    LEADER_CHANGED = 3

    #: `missed` events were dropped because callbacks fell behind; ask the elector for its
    #: current state.
    MISSED = 4

    #: The elector's background task failed (`mysqlleader_elector_state` reports the error):
    #: it no longer campaigns. The last event. (A normal free delivers no such event.)
    ELECTOR_STOPPED = 5

    #: The elector's calls fail with an error retrying cannot fix (`result`: a refused login,
    #: a missing grant, the schema not installed, a service outside the account's patterns;
    #: `mysqlleader_elector_last_call_error` has the message). Sent once per change of
    #: condition; the elector keeps trying, and leads once the set-up is mended.
    FAILING = 6


class StopReason(_OpenIntEnum):
    """``mysqlleader_stop_reason``.

    Why a node stopped leading, in `mysqlleader_event.reason`.
    """

    #: Not a `MYSQLLEADER_EVENT_STOPPED_LEADING` event.
    NONE = 0

    #: Another node holds the seat (forced out, or the lease lapsed and was taken).
    LOST_SEAT = 1

    #: No renew succeeded before the local deadline (failed, slow or lost calls).
    DEADLINE_PASSED = 2

    #: This node resigned (`mysqlleader_elector_resign`).
    RESIGNED = 3

    #: The elector was shut down (`mysqlleader_elector_free`).
    SHUTDOWN = 4

    #: The elector's background task failed.
    FAILED = 5

    #: The term ended by a handover (`mysqlleader_elector_handover`, or an operator's
    #: `handover` seen at the next renew); the elector goes on campaigning as a follower.
    HANDED_OVER = 6


class WaitOutcome(_TrueWhenLeading):
    """``mysqlleader_wait_outcome``.

    How `mysqlleader_elector_wait` ended.
    """

    #: This node leads (by its local deadline, at the moment of answering).
    LEADING = 1

    #: `timeout_ms` passed first.
    TIMED_OUT = 2

    #: The node no longer campaigns (it resigned, is being freed, or its task failed): it will
    #: not lead without a new elector.
    NOT_CAMPAIGNING = 3

    #: The elector's last call failed with an error retrying cannot fix (a refused login, a
    #: missing grant, the schema not installed, a service outside the account's patterns):
    #: `mysqlleader_elector_wait_for_leadership` returns that error, with its fields.
    #: The elector keeps trying.
    FAILED = 4


# ---------------------------------------------------------------------------------------------
# Structs (fields as in the header) and callback types, in the header's order.


class CampaignResultStruct(Structure):
    """``mysqlleader_campaign_result``.

    The row of `campaign` and `force_leader`.
    """

    _fields_ = [
        ("is_leader", c_bool),
        ("leader_id", c_char * ID_BUFFER_SIZE),
        ("term", c_uint64),
        ("lease_remaining_ms", c_uint64),
    ]


class LeaderCheckStruct(Structure):
    """``mysqlleader_leader_check``.

    The row of `am_i_leader` and `assert_leader`.
    """

    _fields_ = [
        ("is_leader", c_bool),
        ("term", c_uint64),
        ("lease_remaining_ms", c_uint64),
    ]


class CurrentLeaderResultStruct(Structure):
    """``mysqlleader_current_leader_result``.

    The row of `current_leader`.
    """

    _fields_ = [
        ("leader_id", c_char * ID_BUFFER_SIZE),
        ("term", c_uint64),
        ("lease_remaining_ms", c_uint64),
    ]


class ReelectResultStruct(Structure):
    """``mysqlleader_reelect_result``.

    The row of `reelect`.
    """

    _fields_ = [
        ("previous_leader_id", c_char * ID_BUFFER_SIZE),
        ("term", c_uint64),
    ]


class ResignResultStruct(Structure):
    """``mysqlleader_resign_result``.

    The row of `resign`.
    """

    _fields_ = [
        ("resigned", c_bool),
        ("term", c_uint64),
    ]


class ElectorConfigStruct(Structure):
    """``mysqlleader_elector_config``.

    How an elector takes part in the election. Zero means "the default" for every number, so
    `mysqlleader_elector_config config = {0}; config.service_id = "billing";` is complete.

    | field | default (0) | meaning |
    | --- | --- | --- |
    | `service_id` | (required) | the election group: 1 to 128 characters of UTF-8 |
    | `node_id` | NULL: `hostname:pid` | this node's name as others see it: 1 to 128 characters |
    | `lease_ms` | 10000 | how long a lease lasts after each acquisition or renew, 1 to 86400000 |
    | `renew_ms` | lease / 5 | how often the leader renews; at most (lease - drift margin) / 3 |
    | `retry_ms` | lease / 10 | the longest a follower waits between attempts; at most the lease |
    | `retry_jitter` | 0.2 | a follower's wait is shortened by a random part of up to this fraction (0 to < 1); for none, set `MYSQLLEADER_ELECTOR_NO_JITTER` |
    | `request_timeout_ms` | min(lease / 5, 2000) | the longest one call may take; below lease - drift margin |
    | `drift_margin_ms` | lease / 100 | subtracted from every local deadline for clock-rate drift; below the lease |
    | `flags` | 0 | `MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE`, `MYSQLLEADER_ELECTOR_NO_JITTER` |
    | `fallback_clients` | NULL | more servers of one Galera cluster, tried in turn when a call fails with a connection or cluster error |
    | `fallback_client_count` | 0 | the number of `fallback_clients` |

    The strings are copied by `mysqlleader_elector_new`; the struct need not outlive the call.
    """

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
    """``mysqlleader_event``.

    A leadership change, as the callback receives it. The struct and `leader_id` are valid
    only during the callback; copy what you need.
    """

    _fields_ = [
        ("kind", c_uint32),
        ("term", c_uint64),
        ("reason", c_uint32),
        ("leader_id", c_char_p),
        ("valid_for_ms", c_uint64),
        ("missed", c_uint64),
        ("result", c_uint32),
    ]


#: ``mysqlleader_event_callback``: ``void (*)(void *userdata, const mysqlleader_event *event)``.
#: A callback for leadership changes: `userdata` is the pointer given to
#: `mysqlleader_elector_new`, `event` is valid until the callback returns. It runs on the
#: elector's own callback thread (see docs/c-api.md, "Callbacks").
EVENT_CALLBACK = CFUNCTYPE(None, c_void_p, POINTER(EventStruct))


class ElectorStateStruct(Structure):
    """``mysqlleader_elector_state``.

    A snapshot of an elector's state, from `mysqlleader_elector_snapshot`.
    """

    _fields_ = [
        ("is_leader", c_bool),
        ("term", c_uint64),
        ("valid_for_ms", c_uint64),
        ("campaigning", c_bool),
        ("last_call_result", c_uint32),
        ("leader_id", c_char * ID_BUFFER_SIZE),
    ]


#: ``mysqlleader_log_callback``: ``void (*)(void *userdata, uint32_t level, const char *target, const char *message)``.
#: Receives one log record: `level` 1 error, 2 warn, 3 info, 4 debug, 5 trace; `target` the
#: module (`mysqlleader::elector::task`); `message` the text with its fields (`key=value`).
#: Both strings are valid during the call only. Called on the library's threads, one record at
#: a time per thread; it must not call back into mysqlleader and should return promptly.
LOG_CALLBACK = CFUNCTYPE(None, c_void_p, c_uint32, c_char_p, c_char_p)


# ---------------------------------------------------------------------------------------------
# Prototypes: name -> (restype, argtypes), in the header's order.

PROTOTYPES: Dict[str, Tuple[Any, List[Any]]] = {
    "mysqlleader_version": (c_char_p, []),
    "mysqlleader_last_error": (c_char_p, []),
    "mysqlleader_last_error_copy": (c_uint32, [POINTER(c_char), c_size_t, POINTER(c_size_t)]),
    "mysqlleader_last_error_code": (c_uint32, []),
    "mysqlleader_last_error_parameter": (c_char_p, []),
    "mysqlleader_last_error_sqlstate": (c_char_p, []),
    "mysqlleader_last_error_current_term": (c_uint64, []),
    "mysqlleader_last_error_server_code": (c_uint32, []),
    "mysqlleader_last_error_is_transient": (c_bool, []),
    "mysqlleader_error_classify": (c_uint32, [c_uint32, c_char_p, c_char_p]),
    "mysqlleader_result_name": (c_char_p, [c_uint32]),
    "mysqlleader_string_free": (None, [c_void_p]),
    "mysqlleader_default_node_id": (c_uint32, [POINTER(c_char), c_size_t, POINTER(c_size_t)]),
    "mysqlleader_client_new": (c_uint32, [c_char_p, POINTER(c_void_p)]),
    "mysqlleader_client_set_request_timeout": (c_uint32, [c_void_p, c_uint64]),
    "mysqlleader_client_free": (None, [c_void_p]),
    "mysqlleader_migrate": (c_uint32, [c_void_p, POINTER(c_size_t)]),
    "mysqlleader_install_sql": (c_uint32, [POINTER(c_void_p)]),
    "mysqlleader_campaign": (c_uint32, [c_void_p, c_char_p, c_char_p, c_uint64, POINTER(CampaignResultStruct)]),
    "mysqlleader_am_i_leader": (c_uint32, [c_void_p, c_char_p, c_char_p, POINTER(LeaderCheckStruct)]),
    "mysqlleader_current_leader": (c_uint32, [c_void_p, c_char_p, POINTER(CurrentLeaderResultStruct)]),
    "mysqlleader_force_leader": (c_uint32, [c_void_p, c_char_p, c_char_p, c_uint64, POINTER(CampaignResultStruct)]),
    "mysqlleader_reelect": (c_uint32, [c_void_p, c_char_p, POINTER(ReelectResultStruct)]),
    "mysqlleader_resign": (c_uint32, [c_void_p, c_char_p, c_char_p, POINTER(ResignResultStruct)]),
    "mysqlleader_handover": (c_uint32, [c_void_p, c_char_p, c_char_p, POINTER(CampaignResultStruct)]),
    "mysqlleader_assert_leader": (c_uint32, [c_void_p, c_char_p, c_char_p, c_uint64, POINTER(LeaderCheckStruct)]),
    "mysqlleader_set_expiry_event": (c_uint32, [c_void_p, c_bool, POINTER(c_bool)]),
    "mysqlleader_txn_begin": (c_uint32, [c_void_p, POINTER(c_void_p)]),
    "mysqlleader_txn_assert_leader": (c_uint32, [c_void_p, c_char_p, c_char_p, c_uint64, POINTER(LeaderCheckStruct)]),
    "mysqlleader_txn_execute": (c_uint32, [c_void_p, c_char_p, POINTER(c_char_p), c_size_t, POINTER(c_uint64)]),
    "mysqlleader_txn_query": (c_uint32, [c_void_p, c_char_p, POINTER(c_void_p), POINTER(c_size_t), c_size_t, POINTER(c_void_p)]),
    "mysqlleader_txn_last_insert_id": (c_uint32, [c_void_p, POINTER(c_uint64)]),
    "mysqlleader_txn_commit": (c_uint32, [c_void_p]),
    "mysqlleader_txn_rollback": (c_uint32, [c_void_p]),
    "mysqlleader_txn_free": (None, [c_void_p]),
    "mysqlleader_rows_column_count": (c_uint32, [c_void_p, POINTER(c_size_t)]),
    "mysqlleader_rows_row_count": (c_uint32, [c_void_p, POINTER(c_size_t)]),
    "mysqlleader_rows_column_name": (c_uint32, [c_void_p, c_size_t, POINTER(c_char_p)]),
    "mysqlleader_rows_column_kind": (c_uint32, [c_void_p, c_size_t, POINTER(c_uint32)]),
    "mysqlleader_rows_value": (c_uint32, [c_void_p, c_size_t, c_size_t, POINTER(c_void_p), POINTER(c_size_t), POINTER(c_bool)]),
    "mysqlleader_rows_affected_rows": (c_uint32, [c_void_p, POINTER(c_uint64)]),
    "mysqlleader_rows_last_insert_id": (c_uint32, [c_void_p, POINTER(c_uint64)]),
    "mysqlleader_rows_free": (None, [c_void_p]),
    "mysqlleader_elector_new": (c_uint32, [c_void_p, POINTER(ElectorConfigStruct), EVENT_CALLBACK, c_void_p, POINTER(c_void_p)]),
    "mysqlleader_elector_is_leader": (c_uint32, [c_void_p, POINTER(c_bool)]),
    "mysqlleader_elector_term": (c_uint32, [c_void_p, POINTER(c_uint64)]),
    "mysqlleader_elector_valid_for_ms": (c_uint32, [c_void_p, POINTER(c_uint64)]),
    "mysqlleader_elector_leader_id": (c_uint32, [c_void_p, POINTER(c_char), c_size_t, POINTER(c_size_t)]),
    "mysqlleader_elector_node_id": (c_uint32, [c_void_p, POINTER(c_char), c_size_t, POINTER(c_size_t)]),
    "mysqlleader_elector_snapshot": (c_uint32, [c_void_p, POINTER(ElectorStateStruct)]),
    "mysqlleader_elector_last_call_error": (c_uint32, [c_void_p, POINTER(c_char), c_size_t, POINTER(c_size_t)]),
    "mysqlleader_elector_metrics_text": (c_uint32, [c_void_p, POINTER(c_char), c_size_t, POINTER(c_size_t)]),
    "mysqlleader_elector_resign": (c_uint32, [c_void_p, POINTER(c_bool)]),
    "mysqlleader_elector_handover": (c_uint32, [c_void_p, c_char_p, POINTER(c_bool)]),
    "mysqlleader_elector_note_refusal": (c_uint32, [c_void_p, c_uint64]),
    "mysqlleader_elector_note_refusal_code": (c_uint32, [c_void_p, c_uint64, c_uint32]),
    "mysqlleader_elector_wait": (c_uint32, [c_void_p, c_uint64, POINTER(c_uint32)]),
    "mysqlleader_elector_wait_for_leadership": (c_uint32, [c_void_p, c_uint64, POINTER(c_bool)]),
    "mysqlleader_elector_wait_term_end": (c_uint32, [c_void_p, c_uint64, c_uint64, POINTER(c_bool), POINTER(c_uint32)]),
    "mysqlleader_elector_is_healthy": (c_uint32, [c_void_p, POINTER(c_bool)]),
    "mysqlleader_elector_txn_begin": (c_uint32, [c_void_p, POINTER(c_void_p), POINTER(c_uint64)]),
    "mysqlleader_elector_free": (None, [c_void_p]),
    "mysqlleader_stop_reason_name": (c_char_p, [c_uint32]),
    "mysqlleader_session_new": (c_uint32, [c_void_p, POINTER(ElectorConfigStruct), POINTER(c_void_p)]),
    "mysqlleader_session_elector": (c_uint32, [c_void_p, c_char_p, EVENT_CALLBACK, c_void_p, POINTER(c_void_p)]),
    "mysqlleader_session_metrics_text": (c_uint32, [c_void_p, POINTER(c_char), c_size_t, POINTER(c_size_t)]),
    "mysqlleader_session_metrics_text_detailed": (c_uint32, [c_void_p, POINTER(c_char), c_size_t, POINTER(c_size_t)]),
    "mysqlleader_session_free": (None, [c_void_p]),
    "mysqlleader_set_log_callback": (c_uint32, [c_void_p, LOG_CALLBACK, c_uint32]),
}

__all__ = [
    "VERSION_MAJOR",
    "VERSION_MINOR",
    "VERSION_PATCH",
    "VERSION",
    "ID_MAX_CHARS",
    "ID_BUFFER_SIZE",
    "LEASE_MS_MIN",
    "LEASE_MS_MAX",
    "DEFAULT_REQUEST_TIMEOUT_MS",
    "MIGRATE_TIMEOUT_MS",
    "ELECTOR_NO_RESIGN_ON_FREE",
    "ELECTOR_NO_JITTER",
    "WAIT_FOREVER",
    "ResultCode",
    "ColumnKind",
    "EventKind",
    "StopReason",
    "WaitOutcome",
    "CampaignResultStruct",
    "LeaderCheckStruct",
    "CurrentLeaderResultStruct",
    "ReelectResultStruct",
    "ResignResultStruct",
    "ElectorConfigStruct",
    "EventStruct",
    "EVENT_CALLBACK",
    "ElectorStateStruct",
    "LOG_CALLBACK",
    "PROTOTYPES",
]
