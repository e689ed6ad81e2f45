package mysqlleader

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The constants of this package, checked against include/mysqlleader.h (its text, and the
// values the C compiler sees), so that neither can drift.

const headerPath = "../../include/mysqlleader.h"

// headerConstants parses the integer #defines and the enum constants of the header.
func headerConstants(t *testing.T) (ints map[string]uint64, strs map[string]string) {
	t.Helper()
	text, err := os.ReadFile(headerPath)
	if err != nil {
		t.Fatal(err)
	}
	src := regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(string(text), "")
	src = regexp.MustCompile(`//[^\n]*`).ReplaceAllString(src, "")
	ints, strs = map[string]uint64{}, map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^#define[ \t]+(MYSQLLEADER_\w+)[ \t]+(.+?)[ \t]*$`).FindAllStringSubmatch(src, -1) {
		name, value := m[1], m[2]
		switch {
		case strings.HasPrefix(value, `"`):
			strs[name] = strings.Trim(value, `"`)
		case value == "UINT64_MAX":
			ints[name] = 1<<64 - 1
		default:
			n, err := strconv.ParseUint(value, 0, 64)
			if err != nil {
				t.Fatalf("#define %s %s: %v", name, value, err)
			}
			ints[name] = n
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^[ \t]*(MYSQLLEADER_\w+)[ \t]*=[ \t]*(\d+)[ \t]*,?[ \t]*$`).FindAllStringSubmatch(src, -1) {
		n, _ := strconv.ParseUint(m[2], 10, 64)
		ints[m[1]] = n
	}
	return ints, strs
}

func ms(d time.Duration) uint64 { return uint64(d / time.Millisecond) }

// goConstants is every header constant with its Go counterpart.
var goConstants = map[string]uint64{
	"MYSQLLEADER_VERSION_MAJOR":              HeaderVersionMajor,
	"MYSQLLEADER_VERSION_MINOR":              HeaderVersionMinor,
	"MYSQLLEADER_VERSION_PATCH":              HeaderVersionPatch,
	"MYSQLLEADER_ID_MAX_CHARS":               IDMaxChars,
	"MYSQLLEADER_ID_BUFFER_SIZE":             IDBufferSize,
	"MYSQLLEADER_LEASE_MS_MIN":               ms(LeaseMin),
	"MYSQLLEADER_LEASE_MS_MAX":               ms(LeaseMax),
	"MYSQLLEADER_DEFAULT_REQUEST_TIMEOUT_MS": ms(DefaultRequestTimeout),
	"MYSQLLEADER_MIGRATE_TIMEOUT_MS":         ms(MigrateTimeout),
	"MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE":  flagNoResignOnFree,
	"MYSQLLEADER_ELECTOR_NO_JITTER":          flagNoJitter,

	"MYSQLLEADER_OK":               uint64(CodeOK),
	"MYSQLLEADER_NULL_ARGUMENT":    uint64(CodeNullArgument),
	"MYSQLLEADER_INVALID_ARGUMENT": uint64(CodeInvalidArgument),
	"MYSQLLEADER_INVALID_UTF8":     uint64(CodeInvalidUTF8),
	"MYSQLLEADER_NOT_LEADER":       uint64(CodeNotLeader),
	"MYSQLLEADER_CONNECTION":       uint64(CodeConnection),
	"MYSQLLEADER_NOT_MIGRATED":     uint64(CodeNotMigrated),
	"MYSQLLEADER_SERVER":           uint64(CodeServer),
	"MYSQLLEADER_MIGRATION":        uint64(CodeMigration),
	"MYSQLLEADER_BUFFER_TOO_SMALL": uint64(CodeBufferTooSmall),
	"MYSQLLEADER_PANIC":            uint64(CodePanic),
	"MYSQLLEADER_INVALID_STATE":    uint64(CodeInvalidState),
	"MYSQLLEADER_USAGE":            uint64(CodeUsage),
	"MYSQLLEADER_ACCESS_DENIED":    uint64(CodeAccessDenied),
	"MYSQLLEADER_AUTHENTICATION":   uint64(CodeAuthentication),
	"MYSQLLEADER_PRIVILEGE":        uint64(CodePrivilege),

	"MYSQLLEADER_EVENT_STARTED_LEADING": uint64(StartedLeading),
	"MYSQLLEADER_EVENT_STOPPED_LEADING": uint64(StoppedLeading),
	"MYSQLLEADER_EVENT_LEADER_CHANGED":  uint64(LeaderChanged),
	"MYSQLLEADER_EVENT_MISSED":          uint64(EventsMissed),
	"MYSQLLEADER_EVENT_ELECTOR_STOPPED": uint64(ElectorStopped),
	"MYSQLLEADER_EVENT_FAILING":         uint64(Failing),

	"MYSQLLEADER_STOP_NONE":            uint64(StopNone),
	"MYSQLLEADER_STOP_LOST_SEAT":       uint64(StopLostSeat),
	"MYSQLLEADER_STOP_DEADLINE_PASSED": uint64(StopDeadlinePassed),
	"MYSQLLEADER_STOP_RESIGNED":        uint64(StopResigned),
	"MYSQLLEADER_STOP_SHUTDOWN":        uint64(StopShutdown),
	"MYSQLLEADER_STOP_FAILED":          uint64(StopFailed),
	"MYSQLLEADER_STOP_HANDED_OVER":     uint64(StopHandedOver),

	"MYSQLLEADER_COLUMN_TEXT":     uint64(ColumnText),
	"MYSQLLEADER_COLUMN_BINARY":   uint64(ColumnBinary),
	"MYSQLLEADER_COLUMN_INTEGER":  uint64(ColumnInteger),
	"MYSQLLEADER_COLUMN_DECIMAL":  uint64(ColumnDecimal),
	"MYSQLLEADER_COLUMN_FLOAT":    uint64(ColumnFloat),
	"MYSQLLEADER_COLUMN_DATETIME": uint64(ColumnDatetime),
	"MYSQLLEADER_COLUMN_DATE":     uint64(ColumnDate),
	"MYSQLLEADER_COLUMN_TIME":     uint64(ColumnTime),

	"MYSQLLEADER_WAIT_LEADING":         1,
	"MYSQLLEADER_WAIT_TIMED_OUT":       2,
	"MYSQLLEADER_WAIT_NOT_CAMPAIGNING": 3,
	"MYSQLLEADER_WAIT_FAILED":          4,
}

// notInGo are header constants the Go API does not expose, and why.
var notInGo = map[string]string{
	"MYSQLLEADER_WAIT_FOREVER": "WaitForLeadership takes a context instead of a timeout",
}

func TestConstantsMatchTheHeader(t *testing.T) {
	ints, strs := headerConstants(t)
	if len(ints) < len(goConstants) {
		t.Fatalf("parsed only %d constants from %s", len(ints), headerPath)
	}
	// 1. Every constant of the header has a Go counterpart with the same value.
	var names []string
	for name := range ints {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, skip := notInGo[name]; skip {
			continue
		}
		want, ok := goConstants[name]
		if !ok {
			t.Errorf("%s = %d is in the header but has no Go counterpart: add it (constants.go, errors.go, events.go) and to goConstants", name, ints[name])
			continue
		}
		if ints[name] != want {
			t.Errorf("%s: header %d, Go %d", name, ints[name], want)
		}
	}
	// 2. Every Go counterpart is still in the header.
	for name := range goConstants {
		if _, ok := ints[name]; !ok {
			t.Errorf("%s is no longer in the header", name)
		}
	}
	// 3. The compiler sees what the text says.
	for name, value := range cConstants() {
		if ints[name] != value {
			t.Errorf("%s: the C compiler sees %d, the header text says %d", name, value, ints[name])
		}
	}
	// 4. The library linked in is the header's version.
	headerVersion := fmt.Sprintf("%d.%d.%d", HeaderVersionMajor, HeaderVersionMinor, HeaderVersionPatch)
	if v, ok := strs["MYSQLLEADER_VERSION"]; ok && v != headerVersion {
		t.Errorf("MYSQLLEADER_VERSION %q, but the parts say %q", v, headerVersion)
	}
	if Version() != headerVersion {
		t.Errorf("the linked library is %q, the header %q: rebuild it (cargo build --release --lib)", Version(), headerVersion)
	}
}

func TestNamesComeFromTheLibrary(t *testing.T) {
	for code, name := range map[Code]string{
		CodeOK: "MYSQLLEADER_OK", CodeNotLeader: "MYSQLLEADER_NOT_LEADER",
		CodeInvalidState: "MYSQLLEADER_INVALID_STATE", Code(999): "MYSQLLEADER_UNKNOWN_RESULT",
	} {
		if code.String() != name {
			t.Errorf("Code(%d).String() = %q, want %q", uint32(code), code.String(), name)
		}
	}
	for reason, name := range map[StopReason]string{
		StopNone: "none", StopLostSeat: "lost_seat", StopDeadlinePassed: "deadline_passed",
		StopResigned: "resigned", StopShutdown: "shutdown", StopFailed: "failed",
		StopHandedOver: "handed_over", StopReason(99): "unknown",
	} {
		if reason.String() != name {
			t.Errorf("StopReason(%d).String() = %q, want %q", uint32(reason), reason.String(), name)
		}
	}
	for kind, name := range map[EventKind]string{
		StartedLeading: "started_leading", StoppedLeading: "stopped_leading",
		LeaderChanged: "leader_changed", EventsMissed: "events_missed", EventKind(9): "EventKind(9)",
	} {
		if kind.String() != name {
			t.Errorf("EventKind(%d).String() = %q, want %q", uint32(kind), kind.String(), name)
		}
	}
}

// notWrapped are the header's functions the Go package does not call, and why.
var notWrapped = map[string]string{
	"mysqlleader_last_error_copy":      "the message is read with mysqlleader_last_error on the same locked OS thread",
	"mysqlleader_last_error_code":      "the code is the failed call's own return value",
	"mysqlleader_elector_wait":         "the same: a blocked C call cannot be cancelled by a context; WaitForLeadership waits on the events",
	"mysqlleader_txn_execute":          "Exec and ExecResult run through mysqlleader_txn_query, which also carries binary arguments (their lengths) and the last insert id",
	"mysqlleader_txn_last_insert_id":   "the id comes with each statement's mysqlleader_rows (mysqlleader_rows_last_insert_id)",
	"mysqlleader_elector_note_refusal": "NoteRefusal calls mysqlleader_elector_note_refusal_code (with 0, any number but 31004: the same)",
}

// TestEveryFunctionIsWrapped: every function of the header is called by the package (or
// listed in notWrapped with the reason), so a capability added to the C ABI is not missed.
func TestEveryFunctionIsWrapped(t *testing.T) {
	header, err := os.ReadFile(headerPath)
	if err != nil {
		t.Fatal(err)
	}
	decls := regexp.MustCompile(`(?m)^[a-z_][\w ]*?\**\s*\b(mysqlleader_\w+)\(`).FindAllStringSubmatch(string(header), -1)
	if len(decls) < 30 {
		t.Fatalf("found only %d function declarations in the header", len(decls))
	}
	files, _ := filepath.Glob("*.go")
	hfiles, _ := filepath.Glob("*.h")
	var src strings.Builder
	for _, f := range append(files, hfiles...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	for _, d := range decls {
		name := d[1]
		if _, ok := notWrapped[name]; ok {
			continue
		}
		if !strings.Contains(src.String(), name+"(") && !strings.Contains(src.String(), `"`+name+`"`) {
			t.Errorf("%s is declared in the header but the Go package never calls it", name)
		}
	}
}
