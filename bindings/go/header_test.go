package mysqlleader

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The constants of this package are generated from include/mysqlleader.h (constants.go, by
// tests/ffi_header.rs, which fails when they drift). Here: what the C compiler and the linked
// library say agrees with them.

func TestConstantsMatchTheHeader(t *testing.T) {
	// The compiler sees what the generated values say.
	for _, c := range cConstants() {
		if c.goValue != c.cValue {
			t.Errorf("%s: the C compiler sees %d, constants.go says %d", c.name, c.cValue, c.goValue)
		}
	}
	// The library linked in is the header's version.
	headerVersion := fmt.Sprintf("%d.%d.%d", HeaderVersionMajor, HeaderVersionMinor, HeaderVersionPatch)
	if HeaderVersion != headerVersion {
		t.Errorf("MYSQLLEADER_VERSION %q, but the parts say %q", HeaderVersion, headerVersion)
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

// TestEveryFunctionIsWrapped: every function of the header (cFunctions, generated from it) is
// called by the package (or listed in notWrapped with the reason), so a capability added to the
// C ABI is not missed.
func TestEveryFunctionIsWrapped(t *testing.T) {
	if len(cFunctions) < 40 {
		t.Fatalf("constants.go lists only %d functions", len(cFunctions))
	}
	files, _ := filepath.Glob("*.go")
	hfiles, _ := filepath.Glob("*.h")
	var src strings.Builder
	for _, f := range append(files, hfiles...) {
		if strings.HasSuffix(f, "_test.go") || f == "constants.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	for _, name := range cFunctions {
		if _, ok := notWrapped[name]; ok {
			continue
		}
		if !strings.Contains(src.String(), name+"(") && !strings.Contains(src.String(), `"`+name+`"`) {
			t.Errorf("%s is declared in the header but the Go package never calls it", name)
		}
	}
}
