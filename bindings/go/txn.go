package mysqlleader

// #include <stdlib.h>
// #include "mysqlleader.h"
import "C"

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Txn is a transaction on one connection (mysqlleader_txn), for writes fenced with
// assert_leader. Begin it with Client.BeginTx (then call AssertLeader first) or, fenced
// already, with Elector.BeginFencedTx; or let Elector.RunFencedTx do all of it.
//
// The fencing recipe: begin, AssertLeader with the term this node leads at, the writes,
// Commit. AssertLeader share-locks the term (its history row, not the seat) until the transaction ends, so no takeover
// can commit in between; when the node no longer leads at that term it fails with
// ErrNotLeader, and the server has already rolled the whole transaction back.
//
// Safety rule: after any failed call (and after a call abandoned because its context ended)
// the transaction is spent: Exec, AssertLeader and Commit fail with ErrInvalidState; only
// Rollback and Close remain. Otherwise a program that ignored ErrNotLeader would go on writing
// outside any transaction, unfenced.
//
// A Txn may be shared between goroutines, but its calls run one at a time. Close it when done
// (`defer tx.Close()`): Close rolls back what was not committed. A finalizer closes a
// forgotten one.
type Txn struct {
	h    *txnHandle
	term uint64
}

type txnHandle struct {
	mu  sync.Mutex // held for the duration of each C call: the handle is used by one thread at a time
	ptr *C.mysqlleader_txn
	// abandoned is the name of a call whose context ended while it ran; it may have taken
	// effect, so the transaction is spent.
	abandoned atomic.Pointer[string]
}

func (h *txnHandle) close() {
	h.mu.Lock()
	p := h.ptr
	h.ptr = nil
	h.mu.Unlock()
	if p != nil {
		C.mysqlleader_txn_free(p) // rolls back an open transaction, within the request timeout
	}
}

// spent returns ErrInvalidState when an earlier call was abandoned.
func (h *txnHandle) spent(op string) error {
	if which := h.abandoned.Load(); which != nil {
		return &Error{Op: op, Code: CodeInvalidState, Message: fmt.Sprintf(
			"the transaction cannot be used any more: %s was abandoned when its context ended (its outcome is unknown); roll it back", *which)}
	}
	return nil
}

func newTxn(ptr *C.mysqlleader_txn, term uint64) *Txn {
	t := &Txn{h: &txnHandle{ptr: ptr}, term: term}
	runtime.SetFinalizer(t, func(t *Txn) { go t.h.close() })
	return t
}

// awaitValue is await for a call that makes something (a transaction) that must be released
// when the caller has gone away by the time it is made. `run` always runs, as in await.
func awaitValue[T any](ctx context.Context, run func() (T, error), discard func(T)) (T, error) {
	var zero T
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := run()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.err == nil {
				discard(r.v)
			}
		}()
		return zero, ctx.Err()
	}
}

// BeginTx begins a transaction on a connection of the client (START TRANSACTION), bounded by
// the request timeout. For fenced writes, call Txn.AssertLeader next.
func (c *Client) BeginTx(ctx context.Context) (*Txn, error) {
	const op = "txn_begin"
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ptr, err := c.h.acquire(op)
	if err != nil {
		return nil, err
	}
	p, err := awaitValue(ctx, func() (*C.mysqlleader_txn, error) {
		defer c.h.release()
		var out *C.mysqlleader_txn
		err := ccall(op, func() C.mysqlleader_result { return C.mysqlleader_txn_begin(ptr, &out) })
		return out, err
	}, func(p *C.mysqlleader_txn) { C.mysqlleader_txn_free(p) })
	if err != nil {
		return nil, err
	}
	return newTxn(p, 0), nil
}

// Term returns the term a transaction from Elector.BeginFencedTx was fenced at: the term
// this node led at when it began (0 for Client.BeginTx).
func (t *Txn) Term() uint64 { return t.term }

// do runs one C call on the transaction under its lock, honouring ctx.
func (t *Txn) do(ctx context.Context, op string, call func(*C.mysqlleader_txn) C.mysqlleader_result) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := t.h.spent(op); err != nil { // at once, without waiting for the abandoned call
		return err
	}
	err := await(ctx, func() error {
		t.h.mu.Lock()
		defer t.h.mu.Unlock()
		if t.h.ptr == nil {
			return closedError(op, "transaction")
		}
		if err := t.h.spent(op); err != nil {
			return err
		}
		return ccall(op, func() C.mysqlleader_result { return call(t.h.ptr) })
	})
	if err != nil && err == ctx.Err() {
		t.h.abandoned.CompareAndSwap(nil, &op)
	}
	return err
}

// AssertLeader is CALL assert_leader(service_id, node_id, term) inside the transaction: the
// fencing guard. On success the term stays share-locked (its history row; never the seat, so the leader renews meanwhile) until the transaction ends, so
// no takeover can commit before the writes do. ErrNotLeader otherwise: the server has rolled the
// transaction back, and only Rollback and Close remain.
func (t *Txn) AssertLeader(ctx context.Context, service, node string, term uint64) (LeaderCheck, error) {
	const op = "txn_assert_leader"
	if err := checkIDs(op, "service_id", service, "node_id", node); err != nil {
		return LeaderCheck{}, err
	}
	var out C.mysqlleader_leader_check
	err := t.do(ctx, op, func(p *C.mysqlleader_txn) C.mysqlleader_result {
		var cs cStrings
		defer cs.free()
		return C.mysqlleader_txn_assert_leader(p, cs.add(service), cs.add(node), C.uint64_t(term), &out)
	})
	if err != nil {
		return LeaderCheck{}, err
	}
	return leaderCheck(&out), nil
}

// Exec runs one SQL statement in the transaction and returns the number of rows it changed;
// rows it returns are discarded (use it for INSERT, UPDATE, DELETE). ExecResult gives the
// id it generated too; Query gives the rows.
//
// With args the statement is prepared and args[i] binds to the i-th '?'. Always pass values
// as args, never by formatting them into query. Each value is sent as bytes with its length
// and the server converts it to the column's type: nil is NULL; string and []byte as they are
// (binary data, NUL bytes included); integers, floats and bool (1 or 0) in decimal; time.Time
// as "2006-01-02 15:04:05.999999" in its own location; a driver.Valuer (sql.NullString, ...)
// by its Value. Other types are ErrInvalidArgument with Param "args[i]".
func (t *Txn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	r, err := t.run(ctx, "txn_execute", query, args, false)
	if err != nil {
		return 0, err
	}
	return r.affected, nil
}

// ExecResult is Exec returning a sql.Result: RowsAffected, and LastInsertId, the
// AUTO_INCREMENT id the statement generated (the first, for several rows; 0 for none). Its
// methods never return an error.
func (t *Txn) ExecResult(ctx context.Context, query string, args ...any) (sql.Result, error) {
	r, err := t.run(ctx, "txn_execute", query, args, false)
	if err != nil {
		return nil, err
	}
	return execResult{affected: r.affected, lastInsertID: r.lastInsertID}, nil
}

// Query runs one SQL statement in the transaction (SELECT ... FOR UPDATE, say) and returns
// its rows, fetched whole (the first result set; none for a statement without one). Args as
// in Exec; the same rules: exactly one statement, none that ends the transaction, and any
// failure spends the transaction.
func (t *Txn) Query(ctx context.Context, query string, args ...any) (*Rows, error) {
	return t.run(ctx, "txn_query", query, args, true)
}

// run runs one statement with mysqlleader_txn_query and copies what it gave into Go memory.
func (t *Txn) run(ctx context.Context, op, query string, args []any, keep bool) (*Rows, error) {
	if err := checkString(op, "sql", query); err != nil {
		return nil, err
	}
	params := make([]*string, len(args))
	for i, a := range args {
		s, err := argText(op, i, a)
		if err != nil {
			return nil, err
		}
		params[i] = s
	}
	var out *Rows
	err := t.do(ctx, op, func(p *C.mysqlleader_txn) C.mysqlleader_result {
		var cs cStrings
		defer cs.free()
		var array **C.char
		var lengths *C.size_t
		if n := len(params); n > 0 {
			mem := C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof((*C.char)(nil))))
			defer C.free(mem)
			lmem := C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.size_t(0))))
			defer C.free(lmem)
			array, lengths = (**C.char)(mem), (*C.size_t)(lmem)
			slots, lens := unsafe.Slice(array, n), unsafe.Slice(lengths, n)
			for i, s := range params {
				if s != nil {
					// C.CString: a copy in C memory (the pointer rule); the length says where it ends.
					slots[i] = cs.add(*s)
					lens[i] = C.size_t(len(*s))
				}
			}
		}
		var rows *C.mysqlleader_rows
		rc := C.mysqlleader_txn_query(p, cs.add(query), array, lengths, C.size_t(len(params)), &rows)
		if rc != C.MYSQLLEADER_OK {
			return rc
		}
		defer C.mysqlleader_rows_free(rows)
		out = copyRows(rows, keep)
		return rc
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// argText converts an Exec argument to the text the C ABI binds; nil means SQL NULL.
func argText(op string, i int, a any) (*string, error) {
	param := "args[" + strconv.Itoa(i) + "]"
	if v, ok := a.(driver.Valuer); ok {
		value, err := v.Value()
		if err != nil {
			return nil, invalidArg(op, param, "%s: its Value method failed: %v", param, err)
		}
		a = value
	}
	var s string
	switch v := a.(type) {
	case nil:
		return nil, nil
	case string:
		s = v
	case []byte:
		if v == nil {
			return nil, nil
		}
		s = string(v)
	case bool:
		s = "0"
		if v {
			s = "1"
		}
	case int:
		s = strconv.FormatInt(int64(v), 10)
	case int8:
		s = strconv.FormatInt(int64(v), 10)
	case int16:
		s = strconv.FormatInt(int64(v), 10)
	case int32:
		s = strconv.FormatInt(int64(v), 10)
	case int64:
		s = strconv.FormatInt(v, 10)
	case uint:
		s = strconv.FormatUint(uint64(v), 10)
	case uint8:
		s = strconv.FormatUint(uint64(v), 10)
	case uint16:
		s = strconv.FormatUint(uint64(v), 10)
	case uint32:
		s = strconv.FormatUint(uint64(v), 10)
	case uint64:
		s = strconv.FormatUint(v, 10)
	case float32:
		s = strconv.FormatFloat(float64(v), 'g', -1, 32)
	case float64:
		s = strconv.FormatFloat(v, 'g', -1, 64)
	case time.Time:
		s = v.Format("2006-01-02 15:04:05.999999")
	default:
		return nil, invalidArg(op, param, "%s has type %T; pass nil, a string, []byte, a number, a bool, a time.Time or a driver.Valuer", param, a)
	}
	return &s, nil
}

// Commit commits the transaction. On success every statement took effect; on any error none
// did (except ErrConnection, whose outcome is unknown, as always with a lost connection).
// Either way the transaction has ended. ErrInvalidState when an earlier call failed: roll back
// instead.
func (t *Txn) Commit(ctx context.Context) error {
	return t.do(ctx, "txn_commit", func(p *C.mysqlleader_txn) C.mysqlleader_result {
		return C.mysqlleader_txn_commit(p)
	})
}

// Rollback rolls the transaction back. Always allowed, also after a failure, after an
// abandoned call, or when the transaction has ended (then it does nothing); it waits for a call
// still running in the background. It does not take a context: it is bounded by the request
// timeout, and it is what cleans up after a context has ended.
func (t *Txn) Rollback() error {
	const op = "txn_rollback"
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	if t.h.ptr == nil {
		return nil
	}
	return ccall(op, func() C.mysqlleader_result { return C.mysqlleader_txn_rollback(t.h.ptr) })
}

// Close releases the transaction, rolling back what was not committed (within the request
// timeout). It waits for a call still running in the background. Idempotent; always nil.
func (t *Txn) Close() error {
	t.h.close()
	return nil
}
