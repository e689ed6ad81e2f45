package mysqlleader

// #include "mysqlleader.h"
import "C"

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Code is the result code of a call into the C library (mysqlleader_result). The numbers are
// the header's and never change; new codes are only appended.
type Code uint32

// The result codes (CodeOK, CodeNotLeader, ...) are in constants.go, generated from the header.

// String returns the name of the code as the header spells it, e.g. "MYSQLLEADER_NOT_LEADER"
// (from the library: mysqlleader_result_name).
func (c Code) String() string {
	return C.GoString(C.mysqlleader_result_name(C.uint32_t(c)))
}

// Sentinel errors, one per result code (plus ErrClosed and ErrNotCampaigning, which this
// package adds). Every error this package returns for a failed call is an *Error that matches
// exactly one code sentinel with errors.Is:
//
//	if errors.Is(err, mysqlleader.ErrNotLeader) { ... }
var (
	ErrNullArgument    = errors.New("mysqlleader: null argument")
	ErrInvalidArgument = errors.New("mysqlleader: invalid argument")
	ErrInvalidUTF8     = errors.New("mysqlleader: invalid UTF-8")
	ErrNotLeader       = errors.New("mysqlleader: not the leader")
	ErrConnection      = errors.New("mysqlleader: connection error")
	ErrNotMigrated     = errors.New("mysqlleader: schema not migrated")
	ErrServer          = errors.New("mysqlleader: server error")
	ErrMigration       = errors.New("mysqlleader: migration failed")
	ErrBufferTooSmall  = errors.New("mysqlleader: buffer too small")
	ErrPanic           = errors.New("mysqlleader: internal error in the library")
	ErrInvalidState    = errors.New("mysqlleader: invalid state")
	ErrUsage           = errors.New("mysqlleader: usage error")
	ErrAccessDenied    = errors.New("mysqlleader: access denied")
	// ErrAuthentication: the server refused the login (a wrong user name or password, TLS or a
	// client certificate required). Retrying cannot fix it.
	ErrAuthentication = errors.New("mysqlleader: login refused")
	// ErrPrivilege: the server denied the account the database, a routine or a table (a grant
	// is missing). Retrying cannot fix it.
	ErrPrivilege = errors.New("mysqlleader: privilege missing")
	// ErrUnknown matches an *Error whose code this version of the package does not know.
	ErrUnknown = errors.New("mysqlleader: unknown result code")

	// ErrClosed: the Client, Elector or Txn has been closed. It also matches ErrInvalidState.
	ErrClosed = errors.New("mysqlleader: closed")
	// ErrNotCampaigning: WaitForLeadership or RunWhileLeader on an elector that no longer
	// campaigns, because it resigned. It also matches ErrInvalidState.
	ErrNotCampaigning = errors.New("mysqlleader: the elector no longer campaigns (it resigned)")
	// ErrLeadershipLost: RunWhileLeader's function was cut short because this node stopped
	// leading; the error is a *LeadershipLostError that tells which term and why.
	ErrLeadershipLost = errors.New("mysqlleader: leadership lost")
)

var sentinels = map[Code]error{
	CodeNullArgument:    ErrNullArgument,
	CodeInvalidArgument: ErrInvalidArgument,
	CodeInvalidUTF8:     ErrInvalidUTF8,
	CodeNotLeader:       ErrNotLeader,
	CodeConnection:      ErrConnection,
	CodeNotMigrated:     ErrNotMigrated,
	CodeServer:          ErrServer,
	CodeMigration:       ErrMigration,
	CodeBufferTooSmall:  ErrBufferTooSmall,
	CodePanic:           ErrPanic,
	CodeInvalidState:    ErrInvalidState,
	CodeUsage:           ErrUsage,
	CodeAccessDenied:    ErrAccessDenied,
	CodeAuthentication:  ErrAuthentication,
	CodePrivilege:       ErrPrivilege,
}

// Error is a failed call: the result code, what the server said, and the library's message.
// Match it with errors.Is against the sentinels (ErrInvalidArgument, ErrNotLeader,
// ErrConnection, ErrNotMigrated, ErrServer, ...) and read it with errors.As.
type Error struct {
	// Op is the call that failed, e.g. "campaign", "elector_new", "txn_execute".
	Op string
	// Code is the result code.
	Code Code
	// ServerCode is the server's error number (e.g. 1213 for a deadlock, 1064 for a syntax
	// error, 1045 a refused login) when Code is CodeServer, CodeAuthentication, CodePrivilege
	// (or CodeUsage when the server reported it), or for a refusal of the procedures that Fence
	// read (31000 to 31004: the kind as a number), else 0.
	ServerCode uint32
	// Transient tells whether the same call may simply be tried again (a lost connection, a
	// timeout, a deadlock or lock wait, a Galera node outside the primary component). The failed
	// attempt's outcome is unknown or "not done": never assume it took effect.
	Transient bool
	// Param names the rejected parameter for CodeInvalidArgument, CodeInvalidUTF8,
	// CodeNullArgument (and a CodeUsage that names one, e.g. "query") as a Go user wrote it: an argument ("service_id", "node_id", "url") or an
	// ElectorConfig field ("Lease", "RenewInterval", ...); "" when the failure names none. It is
	// carried by the library (mysqlleader_last_error_parameter), never parsed from the message.
	Param string
	// SQLState is the server's SQLSTATE ("45001" not the leader, "45002" access denied, ...),
	// "" when the server reported none.
	SQLState string
	// CurrentTerm is, for CodeNotLeader, the service's current term when the refusal told it.
	CurrentTerm uint64
	// Message is the library's message (never containing a password), with the parameter named
	// as in Go, e.g. "invalid argument `lease`: lease must be between 1 and 86400000 ms, got 0".
	Message string

	extra error // ErrClosed or ErrNotCampaigning, for the errors this package makes itself
	cause error // the driver's error, for a refusal Elector.Fence read from it
}

// Error returns "mysqlleader: OP: MESSAGE", and for a rejected parameter
// "mysqlleader: OP: invalid PARAM: MESSAGE" (PARAM as a Go user wrote it). The prefix comes
// once: a message that already begins with "mysqlleader: " (the procedures' refusals, e.g.
// "mysqlleader: access denied ...") does not repeat it.
func (e *Error) Error() string {
	msg := e.Message
	for strings.HasPrefix(msg, "mysqlleader: ") {
		msg = strings.TrimPrefix(msg, "mysqlleader: ")
	}
	if msg == "" {
		msg = e.Code.String()
	}
	if e.Param != "" && !strings.Contains(msg, e.Param) {
		msg = "invalid " + e.Param + ": " + msg
	}
	if e.Op == "" {
		return "mysqlleader: " + msg
	}
	return "mysqlleader: " + e.Op + ": " + msg
}

// Unwrap returns the sentinel of the code (and ErrClosed or ErrNotCampaigning when that is
// the reason; for an error of Elector.Fence, the driver's error it was read from), so that
// errors.Is and errors.As work.
func (e *Error) Unwrap() []error {
	s, ok := sentinels[e.Code]
	if !ok {
		s = ErrUnknown
	}
	out := []error{s}
	if e.extra != nil {
		out = append(out, e.extra)
	}
	if e.cause != nil {
		out = append(out, e.cause)
	}
	return out
}

// newError builds an *Error from a code and the library's message; param is the C ABI's name
// of a rejected parameter ("" for none), renamed to the Go name with goParamNames.
func newError(op string, code Code, serverCode uint32, transient bool, msg string) *Error {
	return &Error{Op: op, Code: code, ServerCode: serverCode, Transient: transient, Message: msg}
}

// goParamNames renames the C ABI's parameter names to what a Go user wrote: the ElectorConfig
// fields. One table; other names (service_id, node_id, url, ...) are the same in Go.
var goParamNames = map[string]string{
	"config->service_id":         "ServiceID",
	"config->node_id":            "NodeID",
	"config->lease_ms":           "Lease",
	"config->renew_ms":           "RenewInterval",
	"config->retry_ms":           "RetryInterval",
	"config->retry_jitter":       "RetryJitter",
	"config->request_timeout_ms": "RequestTimeout",
	"config->drift_margin_ms":    "DriftMargin",
	"config->flags":              "Flags",
	"config->fallback_clients":   "Fallbacks",
	"sql":                        "query",
	// Client.Campaign and Client.ForceLeader take the lease as a time.Duration named lease.
	"lease_ms": "lease",
}

// goParam is the Go name of the C ABI's parameter name.
func goParam(c string) string {
	base, index, indexed := strings.Cut(c, "[")
	if name, ok := goParamNames[base]; ok {
		if indexed {
			return name + "[" + index
		}
		return name
	}
	return c
}

// inGoWords is msg with the C ABI's name of a parameter (its last part: lease_ms, or
// renew_ms of config->renew_ms) replaced, as a whole word, by its Go name.
func inGoWords(msg, c, goName string) string {
	bare := c
	if i := strings.LastIndex(c, "->"); i >= 0 {
		bare = c[i+len("->"):]
	}
	if bare == "" || bare == goName {
		return msg
	}
	word := regexp.MustCompile(`\b` + regexp.QuoteMeta(bare) + `\b`)
	return word.ReplaceAllLiteralString(msg, goName)
}

// invalidArg is a rejection made by this package before calling the library, worded like the
// library's own.
func invalidArg(op, param, format string, args ...any) *Error {
	return &Error{
		Op:      op,
		Code:    CodeInvalidArgument,
		Param:   param,
		Message: fmt.Sprintf("invalid argument `%s`: %s", param, fmt.Sprintf(format, args...)),
	}
}

// closedError is the error of a call on a closed Client, Elector or Txn.
func closedError(op, what string) *Error {
	return &Error{Op: op, Code: CodeInvalidState, Message: "the " + what + " is closed", extra: ErrClosed}
}
