package mysqlleader

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"
)

// rows counts the rows of table with id, by deleting them in a transaction that is rolled back
// (Exec discards result sets, but it reports the rows it changed).
func rows(t *testing.T, c *Client, table string, id any) int64 {
	t.Helper()
	ctx := ctxTimeout(t, time.Minute)
	tx, err := c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	n, err := tx.Exec(ctx, "DELETE FROM "+table+" WHERE id = ?", id)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	return n
}

func newTable(t *testing.T, c *Client) string {
	t.Helper()
	table := "t_" + randomHex(4)
	if err := execSQL(testURL, "CREATE TABLE "+table+" (id INT PRIMARY KEY, note VARCHAR(64) NULL, flag BOOL NULL, amount DOUBLE NULL, at DATETIME(6) NULL)"); err != nil {
		t.Fatal(err)
	}
	return table
}

func TestTxnExecCommitRollback(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	table := newTable(t, c)
	insert := "INSERT INTO " + table + " (id, note, flag, amount, at) VALUES (?, ?, ?, ?, ?)"

	tx, err := c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Term() != 0 {
		t.Errorf("Term() of an unfenced transaction = %d", tx.Term())
	}
	at := time.Date(2026, 11, 22, 6, 45, 33, 198580000, time.UTC)
	for i, args := range [][]any{
		{1, "one", true, 1.5, at},
		{int64(2), []byte("two"), false, float32(2.25), nil},
		{uint8(3), nil, nil, nil, nil},
		{4, sql.NullString{String: "four", Valid: true}, sql.NullBool{}, sql.NullFloat64{Float64: 4, Valid: true}, sql.NullTime{Time: at, Valid: true}},
	} {
		n, err := tx.Exec(ctx, insert, args...)
		if err != nil || n != 1 {
			t.Fatalf("insert %d: %d, %v", i, n, err)
		}
	}
	// Plain text without arguments.
	if n, err := tx.Exec(ctx, "UPDATE "+table+" SET note = 'x' WHERE id IN (1, 2)"); err != nil || n != 2 {
		t.Fatalf("update: %d, %v", n, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []any{1, "2", 3, 4} {
		if n := rows(t, c, table, id); n != 1 {
			t.Errorf("row %v: %d rows after commit", id, n)
		}
	}
	// The transaction has ended.
	_, err = tx.Exec(ctx, insert, 5, nil, nil, nil, nil)
	wantCode(t, err, CodeInvalidState, ErrInvalidState)
	wantCode(t, tx.Commit(ctx), CodeInvalidState, ErrInvalidState)
	if err := tx.Rollback(); err != nil {
		t.Errorf("Rollback after commit: %v", err)
	}
	tx.Close()
	tx.Close() // idempotent
	_, err = tx.Exec(ctx, "SELECT 1")
	wantCode(t, err, CodeInvalidState, ErrClosed)
	if err := tx.Rollback(); err != nil {
		t.Errorf("Rollback after Close: %v", err)
	}

	// Rollback and Close undo what was not committed.
	tx, err = c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, insert, 6, "six", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	tx.Close()
	tx, err = c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, insert, 7, "seven", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	tx.Close()
	if rows(t, c, table, 6)+rows(t, c, table, 7) != 0 {
		t.Error("a rolled back row is there")
	}
}

func TestTxnArguments(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	tx, err := c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	_, err = tx.Exec(ctx, "SELECT ?", struct{}{})
	wantParam(t, err, "args[0]")
	// A NUL byte inside an argument is data (arguments go with their length).
	r, err := tx.Query(ctx, "SELECT ?", "nul\x00inside")
	if err != nil || !r.Next() {
		t.Fatalf("a NUL inside an argument: %v", err)
	}
	var s string
	if err := r.Scan(&s); err != nil || s != "nul\x00inside" {
		t.Errorf("a NUL inside an argument came back as %q (%v)", s, err)
	}
	_, err = tx.Exec(ctx, "SELECT 1\x00")
	wantParam(t, err, "sql")
	// Rejected before any call: the transaction is still usable.
	if _, err := tx.Exec(ctx, "SELECT ?", "fine"); err != nil {
		t.Fatalf("after rejected arguments: %v", err)
	}
}

func TestTxnAssertLeader(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	s := service(t)
	table := newTable(t, c)
	r, err := c.Campaign(ctx, s, "a", 10*time.Second)
	if err != nil || !r.IsLeader {
		t.Fatalf("Campaign: %+v, %v", r, err)
	}

	// The recipe: begin, assert, write, commit.
	tx, err := c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	chk, err := tx.AssertLeader(ctx, s, "a", r.Term)
	if err != nil || !chk.IsLeader || chk.Term != r.Term || chk.LeaseRemaining <= 0 {
		t.Fatalf("AssertLeader = %+v, %v", chk, err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO "+table+" (id, note) VALUES (?, ?)", 1, "fenced"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tx.Close()

	// A stale term: ErrNotLeader, the transaction rolled back and spent.
	tx, err = c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if _, err := tx.Exec(ctx, "INSERT INTO "+table+" (id, note) VALUES (?, ?)", 2, "before the guard"); err != nil {
		t.Fatal(err)
	}
	_, err = tx.AssertLeader(ctx, s, "a", r.Term+1)
	wantCode(t, err, CodeNotLeader, ErrNotLeader)
	_, err = tx.Exec(ctx, "INSERT INTO "+table+" (id, note) VALUES (?, ?)", 3, "after")
	wantCode(t, err, CodeInvalidState, ErrInvalidState)
	wantCode(t, tx.Commit(ctx), CodeInvalidState, ErrInvalidState)
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	_, err = tx.AssertLeader(ctx, "", "a", 1)
	wantParam(t, err, "service_id")
	if rows(t, c, table, 1) != 1 || rows(t, c, table, 2) != 0 || rows(t, c, table, 3) != 0 {
		t.Error("the fenced rows are not as expected")
	}
}

// TestTxnAbandonedCall: a call whose context ends while it waits (here for a row lock) is
// abandoned; the transaction is then spent, and Rollback cleans up.
func TestTxnAbandonedCall(t *testing.T) {
	c := newClient(t)
	if err := c.SetRequestTimeout(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	ctx := ctxTimeout(t, time.Minute)
	table := newTable(t, c)
	if err := execSQL(testURL, "INSERT INTO "+table+" (id) VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	holder, err := c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.Exec(ctx, "UPDATE "+table+" SET note = 'holder' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	waiter, err := c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = waiter.Exec(short, "UPDATE "+table+" SET note = 'waiter' WHERE id = 1")
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("a blocked Exec with a 200 ms deadline: %v after %v", err, time.Since(start))
	}
	_, err = waiter.Exec(ctx, "SELECT 1")
	e := wantCode(t, err, CodeInvalidState, ErrInvalidState)
	if !strings.Contains(e.Message, "abandoned") {
		t.Errorf("message: %q", e.Message)
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := waiter.Rollback(); err != nil && !errors.Is(err, ErrConnection) {
		t.Fatalf("Rollback after an abandoned call: %v", err)
	}
}
