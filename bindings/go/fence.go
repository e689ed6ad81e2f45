package mysqlleader

// #include "mysqlleader.h"
import "C"

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Fence is the fence on a transaction the application opened with its own database/sql
// driver: it runs CALL assert_leader(service, node, term) in tx, with the term this node leads
// at now. On success the term stays share-locked (its history row; never the seat, so the leader renews meanwhile) until tx ends, so no takeover can
// commit before tx's writes do:
//
//	tx, err := db.BeginTx(ctx, nil)
//	...
//	defer tx.Rollback()
//	if _, err := tx.ExecContext(ctx, "UPDATE invoices SET state = 'sent' WHERE id = ?", 42); err != nil { ... }
//	if err := elector.Fence(ctx, tx); err != nil {
//		return err // errors.Is(err, mysqlleader.ErrNotLeader): another node leads; IsLeader() is false now
//	}
//	return tx.Commit()
//
// Call it after the transaction's last ROLLBACK TO SAVEPOINT (one taken before the fence
// releases its lock), before Commit. The statement carries its values as literals (no
// placeholders, no prepared statement) and its results are read to the end, so tx goes on as
// usual. The package imports no driver; it is tested with github.com/go-sql-driver/mysql.
//
// Errors, each an *Error unless said otherwise:
//
//   - ErrNotLeader: this node does not lead now (no round trip then), or the database refused
//     the term (SQLSTATE 45001: the server has rolled tx back; Error.CurrentTerm is the term
//     that leads now). After a refusal the elector has stepped down before Fence returns:
//     IsLeader is false at once, and its next call, sent at once, learns who leads.
//   - ErrServer (Transient): no answer within the time this node still led (State().ValidFor
//     when Fence began), ctx's own deadline aside; roll tx back.
//   - ErrUsage: no transaction open on the connection (MariaDB: a fence there would fence
//     nothing; a *sql.Tx always has one), or inside XA.
//   - ErrAccessDenied: SQLSTATE 45002, the account may not act on this service.
//   - any other error of the driver, unchanged (a lost connection, ...).
//
// The *Error of a refusal wraps the driver's error: errors.As reaches it (e.g. *mysql.MySQLError).
// How a refusal is told without importing a driver: an error with a method SQLState() string
// gives the SQLSTATE; otherwise the error's text, which go-sql-driver writes as
// "Error 31001 (45001): mysqlleader: not the leader ..." ("Error 31001: ..." before v1.7): an
// error 31000 to 31004 (1644 from the routines of an earlier release) with a message that
// begins "mysqlleader: " is one of the procedures' refusals, its number the kind (Error.ServerCode
// keeps it). The library's core classifies it (mysqlleader_error_classify), by the rule it
// applies to its own calls.
//
// After every error, roll tx back.
func (e *Elector) Fence(ctx context.Context, tx *sql.Tx) error {
	const op = "elector_fence"
	if tx == nil {
		return &Error{Op: op, Code: CodeNullArgument, Param: "tx", Message: "tx is nil"}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// 1. This node's view, at one instant: no round trip when it does not lead.
	st, err := e.State()
	if err != nil {
		return err
	}
	if !st.IsLeader {
		return &Error{Op: op, Code: CodeNotLeader, Message: fmt.Sprintf(
			"mysqlleader: not the leader: node %s does not lead service %s now (term seen last: %d)", e.NodeID(), e.ServiceID(), st.Term)}
	}
	// 2. The guard, in the caller's transaction, bounded by the time this node still leads (past
	//    it the fence could only be refused): a hung server or a lock wait never holds the caller
	//    longer, whatever ctx allows.
	bounded, cancel := context.WithTimeout(ctx, st.ValidFor)
	defer cancel()
	if err := runFence(bounded, tx, fenceStatement(e.ServiceID(), e.NodeID(), st.Term)); err != nil {
		if ctx.Err() == nil && bounded.Err() != nil {
			return &Error{Op: op, Code: CodeServer, Transient: true, Message: fmt.Sprintf(
				"mysqlleader: the fence did not answer within the %v this node still led: roll the transaction back", st.ValidFor), cause: err}
		}
		mapped := fenceError(op, err)
		if mapped == nil {
			return err
		}
		if mapped.Code == CodeNotLeader {
			// Step down before the caller hears of it. Bounded by the elector's own timeout;
			// a failure (closed meanwhile) leaves the refusal standing.
			_ = e.noteRefusalCode(st.Term, mapped.ServerCode)
		}
		return mapped
	}
	return nil
}

// NoteRefusal tells the elector that the database refused this node's term (SQLSTATE 45001
// from an assert_leader the application ran itself): when it still leads at term it steps
// down at once, and its next call, sent at once, learns who leads; a refusal of any other term
// changes nothing. It returns once IsLeader no longer reports leading at term (waiting at most
// for a renew already in flight, bounded by the elector's request timeout). Fence does this
// itself.
func (e *Elector) NoteRefusal(term uint64) error {
	return e.noteRefusalCode(term, 0)
}

// noteRefusalCode is NoteRefusal with the refusal's error number: 31004, the refusal of a term
// an operator's handover ended, stops the elector with StopHandedOver; any other with
// StopLostSeat.
func (e *Elector) noteRefusalCode(term uint64, number uint32) error {
	const op = "elector_note_refusal"
	defer e.h.events.notify()
	return e.h.with(op, func(p *C.mysqlleader_elector) error {
		return ccall(op, func() C.mysqlleader_result {
			return C.mysqlleader_elector_note_refusal_code(p, C.uint64_t(term), C.uint32_t(number))
		})
	})
}

// fenceStatement is CALL assert_leader with its values written in: the ids as hex literals,
// which mean exactly these bytes under every sql_mode and connection character set (as the
// library writes them), the term as digits.
func fenceStatement(service, node string, term uint64) string {
	return fmt.Sprintf("CALL assert_leader(_utf8mb4 X'%X', _utf8mb4 X'%X', %d)", service, node, term)
}

// runFence runs the guard and reads every result: one row saying is_leader = 1, then the
// CALL's status result.
func runFence(ctx context.Context, tx *sql.Tx, statement string) (err error) {
	rows, err := tx.QueryContext(ctx, statement)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
	}()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	leading := false
	if rows.Next() && len(cols) > 0 {
		var isLeader sql.NullInt64
		dest := make([]any, len(cols))
		dest[0] = &isLeader
		for i := 1; i < len(dest); i++ {
			dest[i] = new(sql.RawBytes)
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		leading = isLeader.Valid && isLeader.Int64 == 1
	}
	for rows.Next() {
	}
	for rows.NextResultSet() {
		for rows.Next() {
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if !leading {
		return &Error{Op: "elector_fence", Code: CodeServer, Message: "mysqlleader: assert_leader returned no row saying is_leader = 1"}
	}
	return nil
}

// driverErrorText matches a driver's error text as go-sql-driver writes it:
// "Error 1644 (45001): mysqlleader: ..." or, before v1.7, "Error 1644: mysqlleader: ...".
var driverErrorText = regexp.MustCompile(`(?s)Error (\d+)(?: \(([0-9A-Z]{5})\))?: (mysqlleader: .*)$`)

// signalErrno is ER_SIGNAL_EXCEPTION, the number of a SIGNAL without one of its own (the
// refusals of the routines of an earlier release).
const signalErrno = 1644

// isRefusalErrno tells the error numbers of the procedures' refusals, one per kind: 31000 a
// rejected input, 31001 not the leader, 31002 access denied, 31003 a call the session's state
// does not allow, 31004 not the leader because an operator's handover ended the term.
func isRefusalErrno(number int) bool { return number >= 31000 && number <= 31004 }

// fenceError is the *Error for one of the procedures' refusals among a driver's errors (it wraps
// the driver's error), or nil: the driver's error then passes through unchanged.
func fenceError(op string, err error) *Error {
	var own *Error
	if errors.As(err, &own) {
		return own
	}
	sqlstate := ""
	var withState interface{ SQLState() string }
	if errors.As(err, &withState) {
		sqlstate = withState.SQLState()
	}
	text := err.Error()
	number := 0
	message := ""
	if m := driverErrorText.FindStringSubmatch(text); m != nil {
		number, _ = strconv.Atoi(m[1])
		if sqlstate == "" {
			sqlstate = m[2]
		}
		message = m[3]
	} else if i := strings.Index(text, "mysqlleader: "); i >= 0 && sqlstate != "" {
		message = text[i:]
	}
	if message == "" || (number != 0 && number != signalErrno && !isRefusalErrno(number)) {
		return nil
	}
	if sqlstate != "" && sqlstate != "45000" && sqlstate != "45001" && sqlstate != "45002" {
		return nil
	}
	// The core classifies it, by the rule it applies to its own calls.
	if number == 0 {
		number = signalErrno
	}
	e := classifyServerError(op, uint32(number), sqlstate, message) // ServerCode: the core keeps the number
	e.cause = err
	return e
}
