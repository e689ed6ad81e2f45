package mysqlleader

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is an io.Writer safe for the library's threads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestLogsReachSlog: a failed login is logged through log/slog, once, not once per attempt.
func TestLogsReachSlog(t *testing.T) {
	var out lockedBuffer
	SetLogger(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer SetLogger(nil)
	scheme, rest, _ := strings.Cut(testURL, "://")
	creds, host, _ := strings.Cut(rest, "@")
	user, _, _ := strings.Cut(creds, ":")
	c, err := Open(scheme + "://" + user + ":wrong@" + host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	e, err := NewElector(c, ElectorConfig{ServiceID: service(t), NodeID: "a", Lease: time.Second, RetryInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // about 30 attempts
	e.Close()
	// A refused login is an error retrying cannot fix (issue 26): once, at ERROR, saying so.
	// (Each later attempt is a DEBUG record, "election call failed again": this handler is
	// enabled for DEBUG, so they come too, but never above DEBUG.)
	logged := out.String()
	n := strings.Count(logged, `msg="election call failed`) - strings.Count(logged, `level=DEBUG msg="election call failed`)
	if n != 1 {
		t.Fatalf("the failed login was logged %d times above DEBUG, want once:\n%s", n, logged)
	}
	if !strings.Contains(out.String(), `level=ERROR msg="election call failed, and retrying cannot fix it`) {
		t.Fatalf("the failed login was not logged at ERROR as an error retrying cannot fix:\n%s", out.String())
	}
	if strings.Contains(out.String(), ":wrong@") {
		t.Fatalf("a password in the log:\n%s", out.String())
	}
}
