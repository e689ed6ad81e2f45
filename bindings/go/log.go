package mysqlleader

// The library's log records (a failed login, an unreachable server, a missing schema — once per
// change of condition — and leadership started and stopped) go to log/slog: to slog.Default()
// unless SetLogger names another logger. Installed when the package is first used.
//
// A record's fields are slog attributes: "service", "node", "term" (a uint64) and the others the
// library gives ("error", "reason", ...), plus "target" (the library's module); the message is
// the text alone. DEBUG records come when the logger's handler is enabled for DEBUG.

/*
#include <stdint.h>
#include "mysqlleader.h"

extern void mysqlleaderGoLog(uint32_t level, char *target, char *message);

static void mysqlleader_go_on_log(void *userdata, uint32_t level, const char *target, const char *message) {
	(void)userdata;
	mysqlleaderGoLog(level, (char *)target, (char *)message);
}

static mysqlleader_result mysqlleader_go_route_logs(uint32_t max_level) {
	return mysqlleader_set_log_callback(NULL, mysqlleader_go_on_log, max_level);
}
*/
import "C"

import (
	"context"
	"log/slog"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
)

var (
	logger     atomic.Pointer[slog.Logger]
	routeLogs  sync.Once
	levelsFrom = map[uint32]slog.Level{1: slog.LevelError, 2: slog.LevelWarn, 3: slog.LevelInfo, 4: slog.LevelDebug, 5: slog.LevelDebug - 4}
)

// SetLogger sends the library's log records to l (nil: back to slog.Default()).
func SetLogger(l *slog.Logger) {
	logger.Store(l)
	installLogs()
}

// installLogs routes the library's records to Go, once per process: debug and more severe
// (each is formatted only when a record of its level is enabled in the library; Go drops those
// the logger's handler is not enabled for before parsing them).
func installLogs() {
	routeLogs.Do(func() { C.mysqlleader_go_route_logs(4) })
}

// logField finds the start of each " key=value" field the library appends to a record's text.
var logField = regexp.MustCompile(` ([A-Za-z_][A-Za-z0-9_]*)=`)

// stringFields stay strings even when their value looks like a number (a service named "42").
var stringFields = map[string]bool{"service": true, "node": true, "error": true, "to": true}

// logRecord splits the library's text "MESSAGE key=value key=value ..." into the message and
// one attribute per field; a value runs up to the next " key=". "term" and the other numbers
// (a field whose value is all digits, but for service, node, error and to) are Uint64
// attributes.
func logRecord(text string) (string, []slog.Attr) {
	found := logField.FindAllStringSubmatchIndex(text, -1)
	if len(found) == 0 {
		return text, nil
	}
	msg := text[:found[0][0]]
	attrs := make([]slog.Attr, 0, len(found)+1)
	for i, m := range found {
		key := text[m[2]:m[3]]
		end := len(text)
		if i+1 < len(found) {
			end = found[i+1][0]
		}
		value := text[m[1]:end]
		if !stringFields[key] {
			if n, err := strconv.ParseUint(value, 10, 64); err == nil {
				attrs = append(attrs, slog.Uint64(key, n))
				continue
			}
		}
		attrs = append(attrs, slog.String(key, value))
	}
	return msg, attrs
}

//export mysqlleaderGoLog
func mysqlleaderGoLog(level C.uint32_t, target *C.char, message *C.char) {
	defer func() { _ = recover() }() // a panic cannot unwind through C
	l := logger.Load()
	if l == nil {
		l = slog.Default()
	}
	lvl, ok := levelsFrom[uint32(level)]
	if !ok {
		lvl = slog.LevelInfo
	}
	ctx := context.Background()
	if !l.Enabled(ctx, lvl) {
		return
	}
	msg, attrs := logRecord(C.GoString(message))
	attrs = append(attrs, slog.String("target", C.GoString(target)))
	l.LogAttrs(ctx, lvl, msg, attrs...)
}
