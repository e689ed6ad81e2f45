package mysqlleader

// The library's log records (a failed login, an unreachable server, a missing schema — once per
// change of condition — and leadership started and stopped) go to log/slog: to slog.Default()
// unless SetLogger names another logger. Installed when the package is first used.

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

// installLogs routes the library's records to Go, once per process.
func installLogs() {
	routeLogs.Do(func() { C.mysqlleader_go_route_logs(3) }) // info and more severe
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
	l.Log(context.Background(), lvl, C.GoString(message), slog.String("target", C.GoString(target)))
}
