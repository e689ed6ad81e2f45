package mysqlleader

// #include <stdlib.h>
// #include "mysqlleader.h"
import "C"

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unsafe"
)

// ColumnKind is what a column of Rows holds, from the type the server declares for it
// (mysqlleader_column_kind).
type ColumnKind uint32

// The kinds (ColumnText, ColumnBinary, ...) are in constants.go, generated from the header.

// Rows are the rows a statement of Txn.Query returned, fetched whole: they stay readable after
// the transaction has ended and need no Close. Read them like database/sql's rows:
//
//	rows, err := tx.Query(ctx, "SELECT id, note FROM jobs WHERE state = ? FOR UPDATE", "new")
//	for rows.Next() {
//		var id int64
//		var note sql.NullString
//		if err := rows.Scan(&id, &note); err != nil { ... }
//	}
//
// Values are the text the server sends in its text protocol (numbers in decimal, DATETIME as
// "2006-01-02 15:04:05.000000", DATE as "2006-01-02"), binary data as it is; SQL NULL is kept
// apart from the empty string. Scan converts them. Use Rows from one goroutine at a time.
type Rows struct {
	columns      []string
	kinds        []ColumnKind
	values       [][][]byte // values[row][column]; nil is SQL NULL, an empty non-nil slice ''
	cur          int        // the current row: -1 before the first Next
	affected     int64
	lastInsertID int64
}

// copyRows copies a mysqlleader_rows into Go memory (the values only when keep).
func copyRows(rows *C.mysqlleader_rows, keep bool) *Rows {
	r := &Rows{cur: -1}
	var affected, lastID C.uint64_t
	C.mysqlleader_rows_affected_rows(rows, &affected)
	C.mysqlleader_rows_last_insert_id(rows, &lastID)
	r.affected, r.lastInsertID = int64(affected), int64(lastID)
	if !keep {
		return r
	}
	var nCols, nRows C.size_t
	C.mysqlleader_rows_column_count(rows, &nCols)
	C.mysqlleader_rows_row_count(rows, &nRows)
	for c := C.size_t(0); c < nCols; c++ {
		var name *C.char
		var kind C.mysqlleader_column_kind
		C.mysqlleader_rows_column_name(rows, c, &name)
		C.mysqlleader_rows_column_kind(rows, c, &kind)
		r.columns = append(r.columns, C.GoString(name))
		r.kinds = append(r.kinds, ColumnKind(kind))
	}
	r.values = make([][][]byte, int(nRows))
	for i := range r.values {
		row := make([][]byte, int(nCols))
		for c := range row {
			var data *C.char
			var n C.size_t
			var isNull C.bool
			C.mysqlleader_rows_value(rows, C.size_t(i), C.size_t(c), &data, &n, &isNull)
			if !bool(isNull) {
				row[c] = C.GoBytes(unsafe.Pointer(data), C.int(n))
			}
		}
		r.values[i] = row
	}
	return r
}

// Columns returns the names of the columns, as the statement labels them.
func (r *Rows) Columns() []string { return append([]string(nil), r.columns...) }

// ColumnKinds returns what each column holds.
func (r *Rows) ColumnKinds() []ColumnKind { return append([]ColumnKind(nil), r.kinds...) }

// Len returns the number of rows.
func (r *Rows) Len() int { return len(r.values) }

// RowsAffected returns the rows the statement changed.
func (r *Rows) RowsAffected() int64 { return r.affected }

// LastInsertID returns the AUTO_INCREMENT id the statement generated, or 0.
func (r *Rows) LastInsertID() int64 { return r.lastInsertID }

// Next moves to the next row; false when there is none.
func (r *Rows) Next() bool {
	if r.cur+1 >= len(r.values) {
		r.cur = len(r.values)
		return false
	}
	r.cur++
	return true
}

// Scan copies the current row's values into dest, one per column: *string, *[]byte (a copy;
// nil for NULL), *int, *int64, *int32, *uint64, *float64, *bool, *time.Time (DATETIME and DATE,
// in UTC), *any (int64 for integer columns, float64 for floats, []byte for binary columns,
// time.Time for DATETIME and DATE, string otherwise, nil for NULL), or a sql.Scanner (sql.NullString, sql.NullInt64, ...: it
// gets the *any value). NULL into anything else is an error.
func (r *Rows) Scan(dest ...any) error {
	if r.cur < 0 || r.cur >= len(r.values) {
		return errors.New("mysqlleader: Rows.Scan called without a successful Rows.Next")
	}
	if len(dest) != len(r.columns) {
		return fmt.Errorf("mysqlleader: Rows.Scan: %d destinations for %d columns", len(dest), len(r.columns))
	}
	for c, d := range dest {
		if err := scanValue(r.values[r.cur][c], r.kinds[c], d); err != nil {
			return fmt.Errorf("mysqlleader: Rows.Scan: column %d (%s): %w", c, r.columns[c], err)
		}
	}
	return nil
}

// natural is a value as *any receives it.
func natural(v []byte, kind ColumnKind) any {
	if v == nil {
		return nil
	}
	switch kind {
	case ColumnInteger:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return n
		}
		if n, err := strconv.ParseUint(string(v), 10, 64); err == nil {
			return n
		}
	case ColumnFloat:
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			return f
		}
	case ColumnBinary:
		return append([]byte{}, v...)
	case ColumnDatetime, ColumnDate:
		if t, err := parseTime(string(v), kind); err == nil {
			return t
		}
	}
	return string(v)
}

func scanValue(v []byte, kind ColumnKind, dest any) error {
	if s, ok := dest.(sql.Scanner); ok {
		return s.Scan(natural(v, kind))
	}
	switch d := dest.(type) {
	case *any:
		*d = natural(v, kind)
		return nil
	case *[]byte:
		if v == nil {
			*d = nil
		} else {
			*d = append([]byte{}, v...)
		}
		return nil
	}
	if v == nil {
		return fmt.Errorf("the value is NULL: scan into a sql.Null* type, *[]byte or *any")
	}
	s := string(v)
	var err error
	switch d := dest.(type) {
	case *string:
		*d = s
	case *int64:
		*d, err = strconv.ParseInt(s, 10, 64)
	case *int:
		var n int64
		n, err = strconv.ParseInt(s, 10, strconv.IntSize)
		*d = int(n)
	case *int32:
		var n int64
		n, err = strconv.ParseInt(s, 10, 32)
		*d = int32(n)
	case *uint64:
		*d, err = strconv.ParseUint(s, 10, 64)
	case *float64:
		*d, err = strconv.ParseFloat(s, 64)
	case *bool:
		var n int64
		n, err = strconv.ParseInt(s, 10, 64)
		*d = n != 0
	case *time.Time:
		*d, err = parseTime(s, kind)
	default:
		return fmt.Errorf("cannot scan into %T", dest)
	}
	return err
}

// parseTime reads a DATETIME's or a DATE's text, in UTC.
func parseTime(s string, kind ColumnKind) (time.Time, error) {
	if kind == ColumnDate {
		return time.Parse("2006-01-02", s)
	}
	return time.Parse("2006-01-02 15:04:05.999999", s)
}

// execResult is the sql.Result of Txn.ExecResult.
type execResult struct {
	affected     int64
	lastInsertID int64
}

func (r execResult) LastInsertId() (int64, error) { return r.lastInsertID, nil }
func (r execResult) RowsAffected() (int64, error) { return r.affected, nil }
