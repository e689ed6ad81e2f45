package mysqlleader

import (
	"context"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Issue 26, item 7: the prefix "mysqlleader: " comes once, also when the library's message
// (a procedure's refusal) begins with it.
func TestErrorPrefixOnce(t *testing.T) {
	e := newError("campaign", CodeAccessDenied, 0, false, "mysqlleader: access denied: 'app'@'%' may not act on service 'x'")
	if got, want := e.Error(), "mysqlleader: campaign: access denied: 'app'@'%' may not act on service 'x'"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	// A refusal from the server: its message begins with "mysqlleader: ".
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	_, err := c.AssertLeader(ctx, service(t), "a", 7)
	ne := wantCode(t, err, CodeNotLeader, ErrNotLeader)
	if !strings.HasPrefix(ne.Message, "mysqlleader: ") {
		t.Logf("the refusal's message no longer begins with the prefix: %q", ne.Message)
	}
	if n := strings.Count(err.Error(), "mysqlleader:"); n != 1 {
		t.Errorf("the prefix %d times in %q", n, err.Error())
	}
	if !strings.HasPrefix(err.Error(), "mysqlleader: assert_leader: ") {
		t.Errorf("Error() = %q", err.Error())
	}
}

// Issue 26, item 7: where Go takes the lease as a time.Duration, an error names it as Go does
// (lease, or ElectorConfig's Lease), never the C ABI's lease_ms.
func TestLeaseNamedAsInGo(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	s := service(t)
	for _, call := range []func() error{
		func() error { _, err := c.Campaign(ctx, s, "a", 0); return err },                         // the library's check
		func() error { _, err := c.Campaign(ctx, s, "a", LeaseMax+time.Millisecond); return err }, // the library's check
		func() error { _, err := c.ForceLeader(ctx, s, "a", 1500*time.Microsecond); return err },  // this package's
		func() error { _, err := c.Campaign(ctx, s, "a", -time.Second); return err },              // this package's
	} {
		err := call()
		wantParam(t, err, "lease")
		if strings.Contains(err.Error(), "lease_ms") {
			t.Errorf("the C name in %q", err.Error())
		}
	}
	_, err := NewElector(c, ElectorConfig{ServiceID: s, Lease: 50 * time.Millisecond})
	wantParam(t, err, "Lease")
	if strings.Contains(err.Error(), "lease_ms") {
		t.Errorf("the C name in %q", err.Error())
	}
	if got := inGoWords("mysqlleader: sql must be one statement", "sql", "query"); got != "mysqlleader: query must be one statement" {
		t.Errorf("inGoWords replaced more than the word: %q", got)
	}
}

// Issue 26, item 7: README.md is copied into the module directory of `make dist`
// (target/dist/go), where a link relative to the repository leads nowhere: every link is
// absolute or an anchor of the README itself. Its example does not migrate (the application's
// account may not: an operator runs `mysqlleader migrate` once), nor does examples/go/elect
// unless asked to (-migrate).
func TestReadmeLinksAndExamples(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\]\(([^)\s]*)\)`).FindAllStringSubmatch(string(readme), -1) {
		target := m[1]
		if !strings.HasPrefix(target, "https://") && !strings.HasPrefix(target, "http://") && !strings.HasPrefix(target, "#") {
			t.Errorf("README.md links to %q, which does not exist in target/dist/go", target)
		}
	}
	for _, block := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		if strings.Contains(block[1], ".Migrate(") {
			t.Errorf("a README example calls Migrate:\n%s", block[1])
		}
	}
	example, err := os.ReadFile("../../examples/go/elect/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`if \*migrate \{\s*if _, err := client\.Migrate\(ctx\)`).Match(example) {
		t.Error("examples/go/elect migrates other than behind -migrate")
	}
}

// captureHandler keeps the records of the library (those of one service).
type captureHandler struct {
	mu      sync.Mutex
	min     slog.Level
	service string
	records []slog.Record
}

func (h *captureHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }
func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *captureHandler) WithGroup(string) slog.Handler                { return h }

func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	if attrs(r)["service"].String() != h.service {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}

func (h *captureHandler) all() []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]slog.Record(nil), h.records...)
}

func attrs(r slog.Record) map[string]slog.Value {
	out := map[string]slog.Value{}
	r.Attrs(func(a slog.Attr) bool {
		out[a.Key] = a.Value
		return true
	})
	return out
}

// Issue 26, item 8: a record's fields are slog attributes (service, node, term a number), and
// its message is the text alone.
func TestLogRecordsCarryAttributes(t *testing.T) {
	s := service(t)
	h := &captureHandler{min: slog.LevelInfo, service: s}
	SetLogger(slog.New(h))
	defer SetLogger(nil)
	c := newClient(t)
	e, err := NewElector(c, ElectorConfig{ServiceID: s, NodeID: "node a", Lease: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.WaitForLeadership(ctxTimeout(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	term := e.Term()
	e.Close()
	var started *slog.Record
	for _, r := range h.all() {
		if r.Message == "started leading" {
			r := r
			started = &r
		}
		if strings.Contains(r.Message, "service=") || strings.Contains(r.Message, "node=") {
			t.Errorf("fields left in the message: %q", r.Message)
		}
	}
	if started == nil {
		t.Fatalf("no record \"started leading\" among %v", h.all())
	}
	a := attrs(*started)
	if a["service"].String() != s || a["node"].String() != "node a" {
		t.Errorf("service %v, node %v", a["service"], a["node"])
	}
	if a["term"].Kind() != slog.KindUint64 || a["term"].Uint64() != term {
		t.Errorf("term %v (%v), want the number %d", a["term"], a["term"].Kind(), term)
	}
	if !strings.HasPrefix(a["target"].String(), "mysqlleader") {
		t.Errorf("target %v", a["target"])
	}
	if started.Level != slog.LevelInfo {
		t.Errorf("level %v", started.Level)
	}
	msg, fields := logRecord("moving to the next server service=42 server=1 error=a b: c (os error 111)")
	if msg != "moving to the next server" || len(fields) != 3 || fields[0].Value.Kind() != slog.KindString ||
		fields[1].Value.Kind() != slog.KindUint64 || fields[2].Value.String() != "a b: c (os error 111)" {
		t.Errorf("logRecord: %q %v", msg, fields)
	}
}

// Issue 26, item 8: DEBUG records come when the handler is enabled for DEBUG (a failed call
// after the first is logged at DEBUG), and not when it is not.
func TestLogDebugForwarded(t *testing.T) {
	scheme, rest, _ := strings.Cut(testURL, "://")
	creds, host, _ := strings.Cut(rest, "@")
	user, _, _ := strings.Cut(creds, ":")
	c, err := Open(scheme + "://" + user + ":wrong@" + host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, min := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		s := service(t, min.String())
		h := &captureHandler{min: min, service: s}
		SetLogger(slog.New(h))
		e, err := NewElector(c, ElectorConfig{ServiceID: s, NodeID: "a", Lease: time.Second, RetryInterval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(700 * time.Millisecond)
		e.Close()
		SetLogger(nil)
		debug := 0
		for _, r := range h.all() {
			if r.Level == slog.LevelDebug && strings.HasPrefix(r.Message, "election call failed again") {
				debug++
				if attrs(r)["error"].String() == "" {
					t.Errorf("a DEBUG record without its error attribute: %v", r)
				}
			}
		}
		if min == slog.LevelDebug && debug == 0 {
			t.Errorf("no DEBUG record reached a handler enabled for DEBUG: %v", h.all())
		}
		if min == slog.LevelInfo && debug != 0 {
			t.Errorf("%d DEBUG records reached a handler enabled from INFO", debug)
		}
	}
}
