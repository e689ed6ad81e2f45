package mysqlleader

// The plumbing between Go and the C ABI, written once: include path, the thread-pinned call
// that reads the thread-local last error, context handling for blocking calls, and argument
// conversion. The link flags are in link_static.go (default) and link_dynamic.go (build tag
// mysqlleader_dynamic).

// #cgo CFLAGS: -I${SRCDIR}/../../include
// #include <stdlib.h>
// #include "mysqlleader.h"
import "C"

import (
	"context"
	"runtime"
	"strings"
	"time"
	"unsafe"
)

// lastError reads the calling thread's last error of the library. It must run on the OS thread
// of the failed call (see ccall).
func lastError(op string, rc C.mysqlleader_result) *Error {
	msg := C.GoString(C.mysqlleader_last_error())
	serverCode := uint32(C.mysqlleader_last_error_server_code())
	transient := bool(C.mysqlleader_last_error_is_transient())
	e := newError(op, Code(rc), serverCode, transient, msg)
	if p := C.mysqlleader_last_error_parameter(); p != nil {
		c := C.GoString(p)
		e.Param = goParam(c)
		e.Message = inGoWords(e.Message, c, e.Param)
	}
	e.SQLState = C.GoString(C.mysqlleader_last_error_sqlstate())
	e.CurrentTerm = uint64(C.mysqlleader_last_error_current_term())
	return e
}

// classifyServerError is the *Error the library gives a server's error (number, SQLSTATE,
// message) that reached the application's own driver: the core's classifier
// (mysqlleader_error_classify), so that a refusal of the fence on a database/sql connection
// reads exactly as the same refusal of the library's own call.
func classifyServerError(op string, number uint32, sqlstate, message string) *Error {
	cState, cMessage := C.CString(sqlstate), C.CString(strings.ReplaceAll(message, "\x00", "\\0"))
	defer C.free(unsafe.Pointer(cState))
	defer C.free(unsafe.Pointer(cMessage))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rc := C.mysqlleader_error_classify(C.uint32_t(number), cState, cMessage)
	return lastError(op, rc)
}

// ccall runs one call into the library and, when it fails, reads the library's last error.
// The last error is thread-local, so the goroutine is locked to its OS thread for the call and
// the read: otherwise the Go scheduler could move it between the two, and the message would be
// another call's.
func ccall(op string, call func() C.mysqlleader_result) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rc := call()
	if rc == C.MYSQLLEADER_OK {
		return nil
	}
	return lastError(op, rc)
}

// await runs a blocking call so that the caller returns as soon as ctx ends.
//
// The C calls cannot be interrupted: each is bounded by its own timeout (the client's request
// timeout, the elector's). When ctx ends first, await returns ctx.Err() at once and the call
// finishes in the background; its outcome (for a write: done or not) is then unknown to the
// caller, exactly as with a lost connection. `run` must own everything the call uses (C
// strings, out-structs) and release it itself. `run` always runs, even when ctx has ended
// already: callers check ctx.Err() before they take references that `run` releases.
func await(ctx context.Context, run func() error) error {
	if ctx.Done() == nil { // context.Background() and the like: nothing to wait for
		return run()
	}
	done := make(chan error, 1)
	go func() { done <- run() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checkString rejects a string the C ABI cannot receive unchanged: C strings end at the first
// NUL, and nothing is ever silently truncated.
func checkString(op, param, s string) error {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return invalidArg(op, param, "%s must not contain a NUL character (found at byte %d)", param, i)
	}
	return nil
}

// millis converts a duration to whole milliseconds for the C ABI. Zero stays zero (the C
// ABI's "default" or its own range error); negative durations and fractions of a millisecond
// are rejected rather than rounded.
func millis(op, param string, d time.Duration) (C.uint64_t, error) {
	if d < 0 {
		return 0, invalidArg(op, param, "%s must not be negative, got %v", param, d)
	}
	if d%time.Millisecond != 0 {
		return 0, invalidArg(op, param, "%s must be a whole number of milliseconds, got %v", param, d)
	}
	return C.uint64_t(d / time.Millisecond), nil
}

// duration converts milliseconds from the C ABI to a time.Duration.
func duration(ms C.uint64_t) time.Duration {
	if uint64(ms) > uint64(1<<63-1)/uint64(time.Millisecond) {
		return time.Duration(1<<63 - 1)
	}
	return time.Duration(ms) * time.Millisecond
}

// goString reads a NUL-terminated id field of a result struct.
func goString(field *C.char) string {
	return C.GoString(field)
}

// cStrings is a set of C strings made for one call and freed together after it.
type cStrings []*C.char

func (cs *cStrings) add(s string) *C.char {
	p := C.CString(s)
	*cs = append(*cs, p)
	return p
}

func (cs cStrings) free() {
	for _, p := range cs {
		C.free(unsafe.Pointer(p))
	}
}

// copyOut calls a C function that copies a string into a caller buffer (`buf`, `buf_len`,
// `needed_out`), growing the buffer when it is too small. It must run inside ccall.
func copyOut(call func(buf *C.char, n C.size_t, needed *C.size_t) C.mysqlleader_result) (string, C.mysqlleader_result) {
	size := C.size_t(C.MYSQLLEADER_ID_BUFFER_SIZE)
	for {
		buf := (*C.char)(C.malloc(size))
		var needed C.size_t
		rc := call(buf, size, &needed)
		if rc == C.MYSQLLEADER_BUFFER_TOO_SMALL && needed > size {
			C.free(unsafe.Pointer(buf))
			size = needed
			continue
		}
		s := ""
		if rc == C.MYSQLLEADER_OK {
			s = C.GoString(buf)
		}
		C.free(unsafe.Pointer(buf))
		return s, rc
	}
}
