package mysqlleader

import (
	"errors"
	"testing"
)

// textError is a driver's error known only by its text, as go-sql-driver writes it.
type textError string

func (e textError) Error() string { return string(e) }

// stateError is a driver's error that tells its SQLSTATE through a method.
type stateError struct{ state, text string }

func (e stateError) Error() string    { return e.text }
func (e stateError) SQLState() string { return e.state }

// TestFenceReadsADriversErrorWithoutImportingIt: how Elector.Fence tells the procedures'
// refusals among a driver's errors (sqldrivertest runs it against go-sql-driver/mysql).
func TestFenceReadsADriversErrorWithoutImportingIt(t *testing.T) {
	refusal := "mysqlleader: not the leader at term 3 (current term 5)"
	for _, err := range []error{
		textError("Error 1644 (45001): " + refusal),
		textError("Error 1644: " + refusal), // go-sql-driver before v1.7: no SQLSTATE in the text
		stateError{"45001", "driver says: " + refusal},
	} {
		e := fenceError("elector_fence", err)
		if e == nil || !errors.Is(e, ErrNotLeader) || e.SQLState != "45001" || e.CurrentTerm != 5 || e.Message != refusal {
			t.Fatalf("%q: got %#v, want ErrNotLeader at current term 5", err, e)
		}
		if !errors.Is(e, err) {
			t.Fatalf("%q: the *Error does not wrap the driver's error", err)
		}
	}
	// The refusals of this release carry their kind as their number (README, "Refusals are
	// data"), with or without the SQLSTATE in the text; Error.ServerCode keeps it.
	for _, c := range []struct {
		err    error
		is     error
		number uint32
	}{
		{textError("Error 31001 (45001): " + refusal), ErrNotLeader, 31001},
		{textError("Error 31004: " + refusal + ": the term was handed over to another node"), ErrNotLeader, 31004},
		{textError("Error 31002: mysqlleader: access denied: account 'x' may not act on service 's'"), ErrAccessDenied, 31002},
		{textError("Error 31000: mysqlleader: term must not be NULL"), ErrInvalidArgument, 31000},
		{textError("Error 31003 (45000): mysqlleader: assert_leader needs an open transaction (START TRANSACTION first)"), ErrUsage, 31003},
	} {
		e := fenceError("elector_fence", c.err)
		if e == nil || !errors.Is(e, c.is) || e.ServerCode != c.number {
			t.Fatalf("%q: got %#v, want %v with ServerCode %d", c.err, e, c.is, c.number)
		}
	}
	denied := textError("Error 1644 (45002): mysqlleader: access denied: account 'x' may not act on service 's'")
	if e := fenceError("elector_fence", denied); e == nil || !errors.Is(e, ErrAccessDenied) {
		t.Fatalf("45002: got %#v", e)
	}
	outside := textError("Error 1644 (45000): mysqlleader: assert_leader needs an open transaction (START TRANSACTION first)")
	if e := fenceError("elector_fence", outside); e == nil || !errors.Is(e, ErrUsage) {
		t.Fatalf("45000 outside a transaction: got %#v", e)
	}
	// The core's classifier reads them (mysqlleader_error_classify): a 45000 names a parameter
	// only when it says what the parameter must be.
	xa := textError("Error 1644 (45000): mysqlleader: assert_leader cannot run inside an XA transaction (XA PREPARE would drop its locks)")
	if e := fenceError("elector_fence", xa); e == nil || !errors.Is(e, ErrUsage) || e.Param != "" {
		t.Fatalf("45000 inside XA: got %#v", e)
	}
	bad := textError("Error 1644 (45000): mysqlleader: term must not be NULL")
	if e := fenceError("elector_fence", bad); e == nil || !errors.Is(e, ErrInvalidArgument) || e.Param != "term" || e.SQLState != "45000" {
		t.Fatalf("45000 naming a parameter: got %#v", e)
	}
	// Not the procedures' refusals: nil, so that Fence returns the driver's error unchanged.
	for _, err := range []error{
		textError("Error 1213 (40001): Deadlock found when trying to get lock"),
		textError("Error 1644 (45001): an application's own SIGNAL"),
		textError("Error 31001 (45001): an application's own SIGNAL with one of these numbers"),
		textError("Error 1305 (42000): PROCEDURE app.assert_leader does not exist"),
		errors.New("driver: bad connection"),
	} {
		if e := fenceError("elector_fence", err); e != nil {
			t.Fatalf("%q: got %#v, want nil (passed through)", err, e)
		}
	}
	// The statement carries its values as literals: no placeholder, no quote to escape.
	if got, want := fenceStatement("it's %s ?", "n:1", 7), "CALL assert_leader(_utf8mb4 X'69742773202573203F', _utf8mb4 X'6E3A31', 7)"; got != want {
		t.Fatalf("fenceStatement = %q, want %q", got, want)
	}
}
