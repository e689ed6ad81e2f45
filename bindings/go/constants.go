// Code generated from include/mysqlleader.h by tests/ffi_header.rs. DO NOT EDIT.
// Regenerate: MYSQLLEADER_UPDATE_HEADER=1 cargo test --release --test command_line ffi_header
// The mapping rules are in tests/ffi_header/bindings.rs (section Go).

package mysqlleader

// #include "mysqlleader.h"
import "C"

import "time"

// The constants of include/mysqlleader.h, in Go's names and units.
const (
	// HeaderVersionMajor is MYSQLLEADER_VERSION_MAJOR.
	// The version of the library this header belongs to (Cargo.toml's); compare with mysqlleader_version().
	HeaderVersionMajor = 0

	// HeaderVersionMinor is MYSQLLEADER_VERSION_MINOR.
	HeaderVersionMinor = 1

	// HeaderVersionPatch is MYSQLLEADER_VERSION_PATCH.
	HeaderVersionPatch = 0

	// HeaderVersion is MYSQLLEADER_VERSION.
	HeaderVersion = "0.1.0"

	// IDMaxChars is MYSQLLEADER_ID_MAX_CHARS.
	// Longest service or node id the procedures accept, in characters.
	IDMaxChars = 128

	// IDBufferSize is MYSQLLEADER_ID_BUFFER_SIZE.
	// Bytes a caller's buffer needs to hold any id with its terminating NUL: 128 characters of
	// UTF-8 take at most 512 bytes.
	IDBufferSize = 513

	// LeaseMin is MYSQLLEADER_LEASE_MS_MIN.
	// Shortest lease, in milliseconds.
	LeaseMin = 1 * time.Millisecond

	// LeaseMax is MYSQLLEADER_LEASE_MS_MAX.
	// Longest lease, in milliseconds (one day).
	LeaseMax = 86400000 * time.Millisecond

	// DefaultRequestTimeout is MYSQLLEADER_DEFAULT_REQUEST_TIMEOUT_MS.
	// The request timeout of a new client: the longest one call may take before it fails with
	// `MYSQLLEADER_CONNECTION`.
	DefaultRequestTimeout = 5000 * time.Millisecond

	// MigrateTimeout is MYSQLLEADER_MIGRATE_TIMEOUT_MS.
	// The longest `mysqlleader_migrate` may take once connected (it waits up to 60 s for another
	// process's migration to finish first).
	MigrateTimeout = 120000 * time.Millisecond

	// flagNoResignOnFree is MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE.
	// Flag of `mysqlleader_elector_config.flags`: `mysqlleader_elector_free` does not resign; the
	// lease is left to lapse (the default is to resign, so another node takes over at once).
	flagNoResignOnFree = 1

	// flagNoJitter is MYSQLLEADER_ELECTOR_NO_JITTER.
	// Flag of `mysqlleader_elector_config.flags`: followers retry at exactly `retry_ms`, without
	// jitter (`retry_jitter` must then be 0).
	flagNoJitter = 2
)

// The members of mysqlleader_result (the header's numbers).
const (
	// CodeOK is MYSQLLEADER_OK.
	// Success.
	CodeOK Code = 0

	// CodeNullArgument is MYSQLLEADER_NULL_ARGUMENT.
	// A pointer argument that must not be NULL was NULL; the message names it.
	CodeNullArgument Code = 1

	// CodeInvalidArgument is MYSQLLEADER_INVALID_ARGUMENT.
	// A value was rejected, by this library or by the procedures (SQLSTATE 45000): an empty or
	// over-long id (more than 128 characters), a lease outside 1 to 86,400,000 ms, an
	// inconsistent elector configuration, a malformed URL. The message names the parameter.
	CodeInvalidArgument Code = 2

	// CodeInvalidUTF8 is MYSQLLEADER_INVALID_UTF8.
	// A string argument is not valid UTF-8; the message names it and the byte offset.
	CodeInvalidUTF8 Code = 3

	// CodeNotLeader is MYSQLLEADER_NOT_LEADER.
	// The node does not lead at the given term (`assert_leader`, SQLSTATE 45001), or an
	// elector asked to fence a transaction does not lead now.
	CodeNotLeader Code = 4

	// CodeConnection is MYSQLLEADER_CONNECTION.
	// The server could not be reached, the connection broke, or the request timed out. The
	// outcome of a write that failed this way is unknown; the call may be tried again.
	CodeConnection Code = 5

	// CodeNotMigrated is MYSQLLEADER_NOT_MIGRATED.
	// The election procedures or tables are missing from the database: call
	// `mysqlleader_migrate` (or run `mysqlleader migrate`) first.
	CodeNotMigrated Code = 6

	// CodeServer is MYSQLLEADER_SERVER.
	// Any other error the server reported; `mysqlleader_last_error_server_code()` gives its
	// number and `mysqlleader_last_error_is_transient()` whether a retry may succeed.
	CodeServer Code = 7

	// CodeMigration is MYSQLLEADER_MIGRATION.
	// A migration could not be applied.
	CodeMigration Code = 8

	// CodeBufferTooSmall is MYSQLLEADER_BUFFER_TOO_SMALL.
	// The caller's buffer is too small; the needed size (NUL included) was written to the
	// `needed_out` argument.
	CodeBufferTooSmall Code = 9

	// CodePanic is MYSQLLEADER_PANIC.
	// A bug inside the library: a Rust panic was caught at the boundary. The handle involved
	// may be in an inconsistent state; free it.
	CodePanic Code = 10

	// CodeInvalidState is MYSQLLEADER_INVALID_STATE.
	// The handle cannot do this now: the transaction has ended or failed earlier (roll it
	// back), the elector is being freed, or its background task has stopped.
	CodeInvalidState Code = 11

	// CodeUsage is MYSQLLEADER_USAGE.
	// A mistake a retry cannot mend, found by the driver rather than the server: a wrong
	// number of statement parameters, a TLS set-up that cannot work, `assert_leader` called
	// outside a transaction (it would fence nothing). Never transient.
	CodeUsage Code = 12

	// CodeAccessDenied is MYSQLLEADER_ACCESS_DENIED.
	// The account may not act on this service (SQLSTATE 45002, per-service access); the message
	// names the account and the service. Nothing was changed.
	CodeAccessDenied Code = 13

	// CodeAuthentication is MYSQLLEADER_AUTHENTICATION.
	// The server refused the login (error 1045): a wrong user name or password, or the server
	// or the account requires TLS or a client certificate (the message says which to check).
	// `mysqlleader_last_error_server_code()` gives the number. Never transient.
	CodeAuthentication Code = 14

	// CodePrivilege is MYSQLLEADER_PRIVILEGE.
	// The server denied the account something it needs (a grant is missing): the database
	// (1044; 1049, unknown to it), a routine (1370: EXECUTE), a table (1142).
	// `mysqlleader_last_error_server_code()` gives the number. Never transient.
	CodePrivilege Code = 15
)

// The members of mysqlleader_column_kind (the header's numbers).
const (
	// ColumnText is MYSQLLEADER_COLUMN_TEXT.
	// Character data (`CHAR`, `VARCHAR`, `TEXT`, `ENUM`, `SET`, `JSON`), in the connection's
	// character set (utf8mb4); also a column of NULL literals.
	ColumnText ColumnKind = 0

	// ColumnBinary is MYSQLLEADER_COLUMN_BINARY.
	// Bytes (`BINARY`, `VARBINARY`, `BLOB`, `BIT`, `GEOMETRY`, and text in the binary
	// character set): any byte may occur, NUL included.
	ColumnBinary ColumnKind = 1

	// ColumnInteger is MYSQLLEADER_COLUMN_INTEGER.
	// An integer (`TINYINT` to `BIGINT`, signed or unsigned, `YEAR`): decimal text.
	ColumnInteger ColumnKind = 2

	// ColumnDecimal is MYSQLLEADER_COLUMN_DECIMAL.
	// An exact decimal (`DECIMAL`): decimal text, e.g. `-12.500`.
	ColumnDecimal ColumnKind = 3

	// ColumnFloat is MYSQLLEADER_COLUMN_FLOAT.
	// A floating-point number (`FLOAT`, `DOUBLE`): decimal text.
	ColumnFloat ColumnKind = 4

	// ColumnDatetime is MYSQLLEADER_COLUMN_DATETIME.
	// `DATETIME` or `TIMESTAMP`: `YYYY-MM-DD HH:MM:SS[.ffffff]`.
	ColumnDatetime ColumnKind = 5

	// ColumnDate is MYSQLLEADER_COLUMN_DATE.
	// `DATE`: `YYYY-MM-DD`.
	ColumnDate ColumnKind = 6

	// ColumnTime is MYSQLLEADER_COLUMN_TIME.
	// `TIME`: `[-]HH:MM:SS[.ffffff]` (the hours may exceed 24).
	ColumnTime ColumnKind = 7
)

// The members of mysqlleader_event_kind (the header's numbers).
const (
	// StartedLeading is MYSQLLEADER_EVENT_STARTED_LEADING.
	// This node became leader at `term`; `valid_for_ms` is how long it may act as leader
	// without another renew, as of the delivery.
	StartedLeading EventKind = 1

	// StoppedLeading is MYSQLLEADER_EVENT_STOPPED_LEADING.
	// This node stopped leading `term`, for `reason`.
	StoppedLeading EventKind = 2

	// LeaderChanged is MYSQLLEADER_EVENT_LEADER_CHANGED.
	// Another leader (`leader_id`; NULL for a vacant seat) or a new `term` was seen.
	LeaderChanged EventKind = 3

	// EventsMissed is MYSQLLEADER_EVENT_MISSED.
	// `missed` events were dropped because callbacks fell behind; ask the elector for its
	// current state.
	EventsMissed EventKind = 4

	// ElectorStopped is MYSQLLEADER_EVENT_ELECTOR_STOPPED.
	// The elector's background task failed (`mysqlleader_elector_state` reports the error):
	// it no longer campaigns. The last event. (A normal free delivers no such event.)
	ElectorStopped EventKind = 5

	// Failing is MYSQLLEADER_EVENT_FAILING.
	// The elector's calls fail with an error retrying cannot fix (`result`: a refused login,
	// a missing grant, the schema not installed, a service outside the account's patterns;
	// `mysqlleader_elector_last_call_error` has the message). Sent once per change of
	// condition; the elector keeps trying, and leads once the set-up is mended.
	Failing EventKind = 6
)

// The members of mysqlleader_stop_reason (the header's numbers).
const (
	// StopNone is MYSQLLEADER_STOP_NONE.
	// Not a `MYSQLLEADER_EVENT_STOPPED_LEADING` event.
	StopNone StopReason = 0

	// StopLostSeat is MYSQLLEADER_STOP_LOST_SEAT.
	// Another node holds the seat (forced out, or the lease lapsed and was taken).
	StopLostSeat StopReason = 1

	// StopDeadlinePassed is MYSQLLEADER_STOP_DEADLINE_PASSED.
	// No renew succeeded before the local deadline (failed, slow or lost calls).
	StopDeadlinePassed StopReason = 2

	// StopResigned is MYSQLLEADER_STOP_RESIGNED.
	// This node resigned (`mysqlleader_elector_resign`).
	StopResigned StopReason = 3

	// StopShutdown is MYSQLLEADER_STOP_SHUTDOWN.
	// The elector was shut down (`mysqlleader_elector_free`).
	StopShutdown StopReason = 4

	// StopFailed is MYSQLLEADER_STOP_FAILED.
	// The elector's background task failed.
	StopFailed StopReason = 5

	// StopHandedOver is MYSQLLEADER_STOP_HANDED_OVER.
	// The term ended by a handover (`mysqlleader_elector_handover`, or an operator's
	// `handover` seen at the next renew); the elector goes on campaigning as a follower.
	StopHandedOver StopReason = 6
)

// cConstants pairs each constant above with the value the C compiler sees (header_test.go
// compares them).
func cConstants() []struct {
	name            string
	goValue, cValue uint64
} {
	return []struct {
		name            string
		goValue, cValue uint64
	}{
		{"MYSQLLEADER_VERSION_MAJOR", uint64(HeaderVersionMajor), uint64(C.MYSQLLEADER_VERSION_MAJOR)},
		{"MYSQLLEADER_VERSION_MINOR", uint64(HeaderVersionMinor), uint64(C.MYSQLLEADER_VERSION_MINOR)},
		{"MYSQLLEADER_VERSION_PATCH", uint64(HeaderVersionPatch), uint64(C.MYSQLLEADER_VERSION_PATCH)},
		{"MYSQLLEADER_ID_MAX_CHARS", uint64(IDMaxChars), uint64(C.MYSQLLEADER_ID_MAX_CHARS)},
		{"MYSQLLEADER_ID_BUFFER_SIZE", uint64(IDBufferSize), uint64(C.MYSQLLEADER_ID_BUFFER_SIZE)},
		{"MYSQLLEADER_LEASE_MS_MIN", uint64(LeaseMin / time.Millisecond), uint64(C.MYSQLLEADER_LEASE_MS_MIN)},
		{"MYSQLLEADER_LEASE_MS_MAX", uint64(LeaseMax / time.Millisecond), uint64(C.MYSQLLEADER_LEASE_MS_MAX)},
		{"MYSQLLEADER_DEFAULT_REQUEST_TIMEOUT_MS", uint64(DefaultRequestTimeout / time.Millisecond), uint64(C.MYSQLLEADER_DEFAULT_REQUEST_TIMEOUT_MS)},
		{"MYSQLLEADER_MIGRATE_TIMEOUT_MS", uint64(MigrateTimeout / time.Millisecond), uint64(C.MYSQLLEADER_MIGRATE_TIMEOUT_MS)},
		{"MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE", uint64(flagNoResignOnFree), uint64(C.MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE)},
		{"MYSQLLEADER_ELECTOR_NO_JITTER", uint64(flagNoJitter), uint64(C.MYSQLLEADER_ELECTOR_NO_JITTER)},
		{"MYSQLLEADER_OK", uint64(CodeOK), uint64(C.MYSQLLEADER_OK)},
		{"MYSQLLEADER_NULL_ARGUMENT", uint64(CodeNullArgument), uint64(C.MYSQLLEADER_NULL_ARGUMENT)},
		{"MYSQLLEADER_INVALID_ARGUMENT", uint64(CodeInvalidArgument), uint64(C.MYSQLLEADER_INVALID_ARGUMENT)},
		{"MYSQLLEADER_INVALID_UTF8", uint64(CodeInvalidUTF8), uint64(C.MYSQLLEADER_INVALID_UTF8)},
		{"MYSQLLEADER_NOT_LEADER", uint64(CodeNotLeader), uint64(C.MYSQLLEADER_NOT_LEADER)},
		{"MYSQLLEADER_CONNECTION", uint64(CodeConnection), uint64(C.MYSQLLEADER_CONNECTION)},
		{"MYSQLLEADER_NOT_MIGRATED", uint64(CodeNotMigrated), uint64(C.MYSQLLEADER_NOT_MIGRATED)},
		{"MYSQLLEADER_SERVER", uint64(CodeServer), uint64(C.MYSQLLEADER_SERVER)},
		{"MYSQLLEADER_MIGRATION", uint64(CodeMigration), uint64(C.MYSQLLEADER_MIGRATION)},
		{"MYSQLLEADER_BUFFER_TOO_SMALL", uint64(CodeBufferTooSmall), uint64(C.MYSQLLEADER_BUFFER_TOO_SMALL)},
		{"MYSQLLEADER_PANIC", uint64(CodePanic), uint64(C.MYSQLLEADER_PANIC)},
		{"MYSQLLEADER_INVALID_STATE", uint64(CodeInvalidState), uint64(C.MYSQLLEADER_INVALID_STATE)},
		{"MYSQLLEADER_USAGE", uint64(CodeUsage), uint64(C.MYSQLLEADER_USAGE)},
		{"MYSQLLEADER_ACCESS_DENIED", uint64(CodeAccessDenied), uint64(C.MYSQLLEADER_ACCESS_DENIED)},
		{"MYSQLLEADER_AUTHENTICATION", uint64(CodeAuthentication), uint64(C.MYSQLLEADER_AUTHENTICATION)},
		{"MYSQLLEADER_PRIVILEGE", uint64(CodePrivilege), uint64(C.MYSQLLEADER_PRIVILEGE)},
		{"MYSQLLEADER_COLUMN_TEXT", uint64(ColumnText), uint64(C.MYSQLLEADER_COLUMN_TEXT)},
		{"MYSQLLEADER_COLUMN_BINARY", uint64(ColumnBinary), uint64(C.MYSQLLEADER_COLUMN_BINARY)},
		{"MYSQLLEADER_COLUMN_INTEGER", uint64(ColumnInteger), uint64(C.MYSQLLEADER_COLUMN_INTEGER)},
		{"MYSQLLEADER_COLUMN_DECIMAL", uint64(ColumnDecimal), uint64(C.MYSQLLEADER_COLUMN_DECIMAL)},
		{"MYSQLLEADER_COLUMN_FLOAT", uint64(ColumnFloat), uint64(C.MYSQLLEADER_COLUMN_FLOAT)},
		{"MYSQLLEADER_COLUMN_DATETIME", uint64(ColumnDatetime), uint64(C.MYSQLLEADER_COLUMN_DATETIME)},
		{"MYSQLLEADER_COLUMN_DATE", uint64(ColumnDate), uint64(C.MYSQLLEADER_COLUMN_DATE)},
		{"MYSQLLEADER_COLUMN_TIME", uint64(ColumnTime), uint64(C.MYSQLLEADER_COLUMN_TIME)},
		{"MYSQLLEADER_EVENT_STARTED_LEADING", uint64(StartedLeading), uint64(C.MYSQLLEADER_EVENT_STARTED_LEADING)},
		{"MYSQLLEADER_EVENT_STOPPED_LEADING", uint64(StoppedLeading), uint64(C.MYSQLLEADER_EVENT_STOPPED_LEADING)},
		{"MYSQLLEADER_EVENT_LEADER_CHANGED", uint64(LeaderChanged), uint64(C.MYSQLLEADER_EVENT_LEADER_CHANGED)},
		{"MYSQLLEADER_EVENT_MISSED", uint64(EventsMissed), uint64(C.MYSQLLEADER_EVENT_MISSED)},
		{"MYSQLLEADER_EVENT_ELECTOR_STOPPED", uint64(ElectorStopped), uint64(C.MYSQLLEADER_EVENT_ELECTOR_STOPPED)},
		{"MYSQLLEADER_EVENT_FAILING", uint64(Failing), uint64(C.MYSQLLEADER_EVENT_FAILING)},
		{"MYSQLLEADER_STOP_NONE", uint64(StopNone), uint64(C.MYSQLLEADER_STOP_NONE)},
		{"MYSQLLEADER_STOP_LOST_SEAT", uint64(StopLostSeat), uint64(C.MYSQLLEADER_STOP_LOST_SEAT)},
		{"MYSQLLEADER_STOP_DEADLINE_PASSED", uint64(StopDeadlinePassed), uint64(C.MYSQLLEADER_STOP_DEADLINE_PASSED)},
		{"MYSQLLEADER_STOP_RESIGNED", uint64(StopResigned), uint64(C.MYSQLLEADER_STOP_RESIGNED)},
		{"MYSQLLEADER_STOP_SHUTDOWN", uint64(StopShutdown), uint64(C.MYSQLLEADER_STOP_SHUTDOWN)},
		{"MYSQLLEADER_STOP_FAILED", uint64(StopFailed), uint64(C.MYSQLLEADER_STOP_FAILED)},
		{"MYSQLLEADER_STOP_HANDED_OVER", uint64(StopHandedOver), uint64(C.MYSQLLEADER_STOP_HANDED_OVER)},
	}
}

// cFunctions are the functions of the header (header_test.go checks that the package calls
// each, or says why not).
var cFunctions = []string{
	"mysqlleader_version",
	"mysqlleader_last_error",
	"mysqlleader_last_error_copy",
	"mysqlleader_last_error_code",
	"mysqlleader_last_error_parameter",
	"mysqlleader_last_error_sqlstate",
	"mysqlleader_last_error_current_term",
	"mysqlleader_last_error_server_code",
	"mysqlleader_last_error_is_transient",
	"mysqlleader_error_classify",
	"mysqlleader_result_name",
	"mysqlleader_string_free",
	"mysqlleader_default_node_id",
	"mysqlleader_client_new",
	"mysqlleader_client_set_request_timeout",
	"mysqlleader_client_free",
	"mysqlleader_migrate",
	"mysqlleader_install_sql",
	"mysqlleader_campaign",
	"mysqlleader_am_i_leader",
	"mysqlleader_current_leader",
	"mysqlleader_force_leader",
	"mysqlleader_reelect",
	"mysqlleader_resign",
	"mysqlleader_handover",
	"mysqlleader_assert_leader",
	"mysqlleader_set_expiry_event",
	"mysqlleader_txn_begin",
	"mysqlleader_txn_assert_leader",
	"mysqlleader_txn_execute",
	"mysqlleader_txn_query",
	"mysqlleader_txn_last_insert_id",
	"mysqlleader_txn_commit",
	"mysqlleader_txn_rollback",
	"mysqlleader_txn_free",
	"mysqlleader_rows_column_count",
	"mysqlleader_rows_row_count",
	"mysqlleader_rows_column_name",
	"mysqlleader_rows_column_kind",
	"mysqlleader_rows_value",
	"mysqlleader_rows_affected_rows",
	"mysqlleader_rows_last_insert_id",
	"mysqlleader_rows_free",
	"mysqlleader_elector_new",
	"mysqlleader_elector_is_leader",
	"mysqlleader_elector_term",
	"mysqlleader_elector_valid_for_ms",
	"mysqlleader_elector_leader_id",
	"mysqlleader_elector_node_id",
	"mysqlleader_elector_snapshot",
	"mysqlleader_elector_last_call_error",
	"mysqlleader_elector_metrics_text",
	"mysqlleader_elector_resign",
	"mysqlleader_elector_handover",
	"mysqlleader_elector_note_refusal",
	"mysqlleader_elector_note_refusal_code",
	"mysqlleader_elector_wait",
	"mysqlleader_elector_wait_for_leadership",
	"mysqlleader_elector_wait_term_end",
	"mysqlleader_elector_is_healthy",
	"mysqlleader_elector_txn_begin",
	"mysqlleader_elector_free",
	"mysqlleader_stop_reason_name",
	"mysqlleader_session_new",
	"mysqlleader_session_elector",
	"mysqlleader_session_metrics_text",
	"mysqlleader_session_metrics_text_detailed",
	"mysqlleader_session_free",
	"mysqlleader_set_log_callback",
}
