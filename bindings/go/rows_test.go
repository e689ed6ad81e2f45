package mysqlleader

import (
	"bytes"
	"database/sql"
	"testing"
	"time"
)

// Issue 26: reads in the library's own fenced transaction. A fenced read-then-write job with
// its rows checked, LastInsertId, binary data with NUL bytes both ways, NULL vs empty, the
// refusal of a multi-statement text by Query too, and a stale leader's job refused with nothing
// committed.

func newJobs(t *testing.T) string {
	t.Helper()
	table := "jobs_" + randomHex(4)
	if err := execSQL(testURL,
		"CREATE TABLE "+table+" (id INT AUTO_INCREMENT PRIMARY KEY, state VARCHAR(16) NOT NULL, note VARCHAR(16) NULL, "+
			"payload VARBINARY(16) NULL, at DATETIME(6) NULL, amount DECIMAL(10,2) NULL)",
		"INSERT INTO "+table+" (state, note, at, amount) VALUES ('new', 'a', '2024-05-01 12:00:00.5', 12.5), ('new', 'b', NULL, NULL), ('done', 'c', NULL, NULL)",
	); err != nil {
		t.Fatal(err)
	}
	return table
}

// states reads the states of every job, by id, in a transaction of its own.
func states(t *testing.T, c *Client, table string) []string {
	t.Helper()
	ctx := ctxTimeout(t, time.Minute)
	tx, err := c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	r, err := tx.Query(ctx, "SELECT state FROM "+table+" ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r.Next() {
		var s string
		if err := r.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestTxnQueryReadThenWrite(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	table := newJobs(t)
	s := service(t)
	r, err := c.Campaign(ctx, s, "a", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if _, err := tx.AssertLeader(ctx, s, "a", r.Term); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(ctx, "SELECT id, state AS job_state, at, amount FROM "+table+" WHERE state = ? ORDER BY id FOR UPDATE", "new")
	if err != nil {
		t.Fatal(err)
	}
	if got := rows.Columns(); len(got) != 4 || got[1] != "job_state" {
		t.Errorf("Columns() = %q", got)
	}
	if k := rows.ColumnKinds(); k[0] != ColumnInteger || k[1] != ColumnText || k[2] != ColumnDatetime || k[3] != ColumnDecimal {
		t.Errorf("ColumnKinds() = %v", k)
	}
	if rows.Len() != 2 {
		t.Fatalf("Len() = %d, want 2", rows.Len())
	}
	var ids []int64
	for rows.Next() {
		var id int64
		var state string
		var at sql.NullTime
		var amount sql.NullString
		if err := rows.Scan(&id, &state, &at, &amount); err != nil {
			t.Fatal(err)
		}
		if state != "new" {
			t.Errorf("job %d: state %q", id, state)
		}
		if id == 1 && (!at.Valid || !at.Time.Equal(time.Date(2024, 5, 1, 12, 0, 0, 500000000, time.UTC)) || amount.String != "12.50") {
			t.Errorf("job 1: at %v, amount %v", at, amount)
		}
		if id == 2 && (at.Valid || amount.Valid) {
			t.Errorf("job 2: at %v, amount %v: want NULL", at, amount)
		}
		ids = append(ids, id)
	}
	if len(ids) != 2 || ids[0] != 1 || ids[1] != 2 {
		t.Fatalf("ids %v", ids)
	}
	for _, id := range ids {
		if n, err := tx.Exec(ctx, "UPDATE "+table+" SET state = 'done' WHERE id = ?", id); err != nil || n != 1 {
			t.Fatalf("update %d: %d, %v", id, n, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := states(t, c, table); len(got) != 3 || got[0] != "done" || got[1] != "done" || got[2] != "done" {
		t.Errorf("states after the job: %q", got)
	}
}

func TestTxnLastInsertIDBinaryAndNull(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	table := newJobs(t)
	tx, err := c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	payload := []byte{0, 'a', 'b', 0xff, 0}
	res, err := tx.ExecResult(ctx, "INSERT INTO "+table+" (state, note, payload) VALUES (?, ?, ?)", "x", "", payload)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := res.LastInsertId(); id != 4 {
		t.Errorf("LastInsertId() = %d, want 4", id)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Errorf("RowsAffected() = %d, want 1", n)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO "+table+" (state, note, payload) VALUES (?, ?, ?)", "y", nil, []byte{}); err != nil {
		t.Fatal(err)
	}
	// With an argument (the binary protocol) and without (the text protocol): the same values.
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"SELECT payload, note, LENGTH(payload) FROM " + table + " WHERE id >= ? ORDER BY id", []any{4}},
		{"SELECT payload, note, LENGTH(payload) FROM " + table + " WHERE id >= 4 ORDER BY id", nil},
	} {
		rows, err := tx.Query(ctx, q.sql, q.args...)
		if err != nil {
			t.Fatal(err)
		}
		if k := rows.ColumnKinds(); k[0] != ColumnBinary {
			t.Errorf("payload's kind: %v", k[0])
		}
		var got []byte
		var note sql.NullString
		var n int
		if !rows.Next() || rows.Scan(&got, &note, &n) != nil {
			t.Fatal("row 4")
		}
		if !bytes.Equal(got, payload) || n != 5 || !note.Valid || note.String != "" {
			t.Errorf("row 4: payload %q (%d), note %v: want the bytes with their NULs and the empty string", got, n, note)
		}
		var any0, any1 any
		if !rows.Next() || rows.Scan(&got, &any0, &any1) != nil {
			t.Fatal("row 5")
		}
		if got == nil || len(got) != 0 || any0 != nil || any1 != int64(0) {
			t.Errorf("row 5: payload %#v, note %#v, length %#v: want empty bytes, NULL, 0", got, any0, any1)
		}
		if rows.Next() {
			t.Error("a third row")
		}
	}
	// A SELECT generates no id.
	res, err = tx.ExecResult(ctx, "SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := res.LastInsertId(); id != 0 {
		t.Errorf("LastInsertId() of a SELECT = %d", id)
	}
}

func TestTxnQueryRefusals(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	table := newJobs(t)
	s := service(t)
	r, err := c.Campaign(ctx, s, "a", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// A multi-statement text: refused before anything is sent, and the transaction is spent.
	tx, err := c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.AssertLeader(ctx, s, "a", r.Term); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "UPDATE "+table+" SET state = 'again' WHERE id = 3"); err != nil {
		t.Fatal(err)
	}
	_, err = tx.Query(ctx, "SELECT id FROM "+table+"; UPDATE "+table+" SET state = 'evil'")
	if e := wantCode(t, err, CodeUsage, ErrUsage); e.Param != "query" {
		t.Errorf("Param = %q, want query", e.Param)
	}
	_, err = tx.Query(ctx, "SELECT 1")
	wantCode(t, err, CodeInvalidState, ErrInvalidState)
	err = tx.Commit(ctx)
	wantCode(t, err, CodeInvalidState, ErrInvalidState)
	tx.Close()

	// A stale leader: b is forced in; a's job is refused and nothing of it commits.
	if _, err := c.ForceLeader(ctx, s, "b", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	tx, err = c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if _, err := tx.Exec(ctx, "UPDATE "+table+" SET state = 'stale' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	_, err = tx.AssertLeader(ctx, s, "a", r.Term)
	wantCode(t, err, CodeNotLeader, ErrNotLeader)
	_, err = tx.Query(ctx, "SELECT id FROM "+table+" FOR UPDATE")
	wantCode(t, err, CodeInvalidState, ErrInvalidState)
	tx.Close()
	if got := states(t, c, table); len(got) != 3 || got[0] != "new" || got[1] != "new" || got[2] != "done" {
		t.Errorf("states after the refusals: %q (nothing may have committed)", got)
	}
}
