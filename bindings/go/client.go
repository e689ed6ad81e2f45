package mysqlleader

// #include "mysqlleader.h"
import "C"

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// Client is a pool of connections to one database (mysqlleader_client). It is safe for use by
// any number of goroutines at once. Connections open on first use, not in Open.
//
// Electors and transactions made from a client keep its pool alive: the client may be closed
// before them.
type Client struct {
	h *clientHandle
}

// clientHandle owns the C pointer. Calls in flight hold a reference, so Close never frees the
// pointer under a call (a call abandoned by its context keeps running in the background): the
// last of Close and the calls in flight frees it.
type clientHandle struct {
	mu     sync.Mutex
	ptr    *C.mysqlleader_client
	active int
	closed bool
}

func (h *clientHandle) acquire(op string) (*C.mysqlleader_client, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, closedError(op, "client")
	}
	h.active++
	return h.ptr, nil
}

func (h *clientHandle) release() {
	h.mu.Lock()
	h.active--
	p := h.takeIfDone()
	h.mu.Unlock()
	if p != nil {
		C.mysqlleader_client_free(p)
	}
}

// takeIfDone returns the pointer to free once the handle is closed and idle. Called locked.
func (h *clientHandle) takeIfDone() *C.mysqlleader_client {
	if !h.closed || h.active > 0 || h.ptr == nil {
		return nil
	}
	p := h.ptr
	h.ptr = nil
	return p
}

func (h *clientHandle) close() {
	h.mu.Lock()
	h.closed = true
	p := h.takeIfDone()
	h.mu.Unlock()
	if p != nil {
		C.mysqlleader_client_free(p)
	}
}

// Open makes a client for the database of url (mysql://user:password@host:port/database)
// without connecting: a server that is down is reported by the first call that needs it.
// A malformed URL is ErrInvalidArgument (Param "url"); messages never show the password.
// Close the client when done (a finalizer closes a forgotten one).
func Open(url string) (*Client, error) {
	installLogs()
	if err := checkString("client_new", "url", url); err != nil {
		return nil, err
	}
	var ptr *C.mysqlleader_client
	err := ccall("client_new", func() C.mysqlleader_result {
		var cs cStrings
		defer cs.free()
		return C.mysqlleader_client_new(cs.add(url), &ptr)
	})
	if err != nil {
		return nil, err
	}
	c := &Client{h: &clientHandle{ptr: ptr}}
	runtime.SetFinalizer(c, func(c *Client) { go c.h.close() })
	return c, nil
}

// Close releases the client; idle connections are closed once no elector or transaction made
// from it uses the pool. Calls in flight finish first (each within the request timeout). Close
// is idempotent and always returns nil; calls after it fail with ErrClosed.
func (c *Client) Close() error {
	c.h.close()
	return nil
}

// SetRequestTimeout sets the longest time one call on this client may take (1 ms to 24 h,
// whole milliseconds; DefaultRequestTimeout at first) before it fails with ErrConnection.
// It applies to the one-shot calls, to transactions begun afterwards and to closing idle
// connections; electors have their own (ElectorConfig.RequestTimeout).
func (c *Client) SetRequestTimeout(d time.Duration) error {
	ms, err := millis("client_set_request_timeout", "timeout_ms", d)
	if err != nil {
		return err
	}
	ptr, err := c.h.acquire("client_set_request_timeout")
	if err != nil {
		return err
	}
	defer c.h.release()
	return ccall("client_set_request_timeout", func() C.mysqlleader_result {
		return C.mysqlleader_client_set_request_timeout(ptr, ms)
	})
}

// do runs one blocking call on the client's pointer, honouring ctx (see the package
// documentation, "Contexts"): the call holds a reference to the client until it returns.
func (c *Client) do(ctx context.Context, op string, call func(*C.mysqlleader_client) C.mysqlleader_result) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ptr, err := c.h.acquire(op)
	if err != nil {
		return err
	}
	return await(ctx, func() error {
		defer c.h.release()
		return ccall(op, func() C.mysqlleader_result { return call(ptr) })
	})
}

// Migrate installs or upgrades the election schema (tables, procedures, the expiry event) in
// the client's database and returns how many migrations it applied (0 when the schema was
// current). Safe to call from many processes at once. A dead server fails within the request
// timeout; the migration itself may take up to MigrateTimeout.
func (c *Client) Migrate(ctx context.Context) (int, error) {
	var applied C.size_t
	err := c.do(ctx, "migrate", func(p *C.mysqlleader_client) C.mysqlleader_result {
		return C.mysqlleader_migrate(p, &applied)
	})
	if err != nil {
		return 0, err
	}
	return int(applied), nil
}
