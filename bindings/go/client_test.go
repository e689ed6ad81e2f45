package mysqlleader

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestErrorValues(t *testing.T) {
	all := map[Code]error{
		CodeNullArgument: ErrNullArgument, CodeInvalidArgument: ErrInvalidArgument,
		CodeInvalidUTF8: ErrInvalidUTF8, CodeNotLeader: ErrNotLeader, CodeConnection: ErrConnection,
		CodeNotMigrated: ErrNotMigrated, CodeServer: ErrServer, CodeMigration: ErrMigration,
		CodeBufferTooSmall: ErrBufferTooSmall, CodePanic: ErrPanic, CodeInvalidState: ErrInvalidState,
	}
	for code, sentinel := range all {
		err := error(newError("op", code, 0, false, "message"))
		if !errors.Is(err, sentinel) {
			t.Errorf("%v does not match its sentinel", code)
		}
		for other, s := range all {
			if other != code && errors.Is(err, s) {
				t.Errorf("%v also matches the sentinel of %v", code, other)
			}
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != code {
			t.Errorf("errors.As failed for %v", code)
		}
	}
	if !errors.Is(newError("op", Code(77), 0, false, "x"), ErrUnknown) {
		t.Error("an unknown code does not match ErrUnknown")
	}
	closed := closedError("campaign", "client")
	if !errors.Is(closed, ErrClosed) || !errors.Is(closed, ErrInvalidState) {
		t.Errorf("closedError matches neither ErrClosed nor ErrInvalidState: %v", closed)
	}
	if got := closed.Error(); got != "mysqlleader: campaign: the client is closed" {
		t.Errorf("Error() = %q", got)
	}
	// The C ABI's parameter names (carried as a field, never parsed) become the Go names.
	for c, goName := range map[string]string{
		"lease_ms":                    "lease",
		"config->renew_ms":            "RenewInterval",
		"config->fallback_clients[2]": "Fallbacks[2]",
		"client_out":                  "client_out",
	} {
		if got := goParam(c); got != goName {
			t.Errorf("goParam(%q) = %q, want %q", c, got, goName)
		}
	}
	// A wrapped error still matches.
	wrapped := errors.Join(errors.New("context"), newError("resign", CodeConnection, 0, true, "refused"))
	if !errors.Is(wrapped, ErrConnection) {
		t.Error("a wrapped *Error does not match")
	}
}

func TestVersionAndStaticFunctions(t *testing.T) {
	if v := Version(); !strings.HasPrefix(v, strconv.Itoa(HeaderVersionMajor)+".") {
		t.Errorf("Version() = %q", v)
	}
	id, err := DefaultNodeID()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(id, ":"+strconv.Itoa(os.Getpid())) || len(id) > IDMaxChars {
		t.Errorf("DefaultNodeID() = %q, want hostname:%d", id, os.Getpid())
	}
	sql, err := InstallSQL()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DELIMITER", "PROCEDURE", "campaign", "assert_leader", "leader_election_history"} {
		if !strings.Contains(sql, want) {
			t.Errorf("InstallSQL() does not contain %q", want)
		}
	}
}

func TestOpenRejectsBadURLs(t *testing.T) {
	_, err := Open("this is not a url")
	wantParam(t, err, "url")
	_, err = Open("mysql://u:p@h/db\x00")
	wantParam(t, err, "url")
	_, err = Open("mysql://u:p@h/\xff")
	e := wantCode(t, err, CodeInvalidUTF8, ErrInvalidUTF8)
	if e.Param != "url" {
		t.Errorf("Param = %q", e.Param)
	}
	_, err = Open("mysql://user:s3cret@127.0.0.1:notaport/db")
	wantParam(t, err, "url")
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("the password shows in %v", err)
	}
}

func TestMigrate(t *testing.T) {
	url := newDatabase(t)
	c := openClient(t, url)
	ctx := ctxTimeout(t, time.Minute)
	_, err := c.Campaign(ctx, service(t), "a", time.Second)
	wantCode(t, err, CodeNotMigrated, ErrNotMigrated)
	applied, err := c.Migrate(ctx)
	if err != nil || applied < 1 {
		t.Fatalf("Migrate = %d, %v; want at least 1 migration", applied, err)
	}
	again, err := c.Migrate(ctx)
	if err != nil || again != 0 {
		t.Fatalf("Migrate again = %d, %v; want 0", again, err)
	}
	if _, err := c.Campaign(ctx, service(t), "a", time.Second); err != nil {
		t.Fatalf("Campaign after Migrate: %v", err)
	}
	// A recorded migration that no longer matches the library's is ErrMigration.
	if err := execSQL(url, "UPDATE mysqlleader_schema_history SET checksum = '1' WHERE version = 1"); err != nil {
		t.Fatal(err)
	}
	_, err = c.Migrate(ctx)
	wantCode(t, err, CodeMigration, ErrMigration)
}

func TestEveryProcedure(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	s := service(t)
	lease := 10 * time.Second

	cur, err := c.CurrentLeader(ctx, s)
	if err != nil || cur != (CurrentLeaderResult{}) {
		t.Fatalf("CurrentLeader of a new service = %+v, %v", cur, err)
	}
	r, err := c.Campaign(ctx, s, "a", lease)
	if err != nil || !r.IsLeader || r.LeaderID != "a" || r.Term != 1 || r.LeaseRemaining <= 9*time.Second || r.LeaseRemaining > lease {
		t.Fatalf("Campaign(a) = %+v, %v", r, err)
	}
	r, err = c.Campaign(ctx, s, "b", lease)
	if err != nil || r.IsLeader || r.LeaderID != "a" || r.Term != 1 || r.LeaseRemaining <= 0 {
		t.Fatalf("Campaign(b) = %+v, %v", r, err)
	}
	r, err = c.Campaign(ctx, s, "a", lease) // a renew keeps the term
	if err != nil || !r.IsLeader || r.Term != 1 {
		t.Fatalf("renew = %+v, %v", r, err)
	}
	chk, err := c.AmILeader(ctx, s, "a")
	if err != nil || !chk.IsLeader || chk.Term != 1 || chk.LeaseRemaining <= 0 {
		t.Fatalf("AmILeader(a) = %+v, %v", chk, err)
	}
	chk, err = c.AmILeader(ctx, s, "b")
	if err != nil || chk.IsLeader || chk.Term != 1 {
		t.Fatalf("AmILeader(b) = %+v, %v", chk, err)
	}
	cur, err = c.CurrentLeader(ctx, s)
	if err != nil || cur.LeaderID != "a" || cur.Term != 1 || cur.LeaseRemaining <= 0 {
		t.Fatalf("CurrentLeader = %+v, %v", cur, err)
	}
	chk, err = c.AssertLeader(ctx, s, "a", 1)
	if err != nil || !chk.IsLeader || chk.Term != 1 || chk.LeaseRemaining <= 0 {
		t.Fatalf("AssertLeader(a, 1) = %+v, %v", chk, err)
	}
	_, err = c.AssertLeader(ctx, s, "a", 2)
	e := wantCode(t, err, CodeNotLeader, ErrNotLeader)
	if !strings.Contains(e.Message, "not the leader") {
		t.Errorf("message: %q", e.Message)
	}
	_, err = c.AssertLeader(ctx, s, "b", 1)
	wantCode(t, err, CodeNotLeader, ErrNotLeader)

	res, err := c.Resign(ctx, s, "b")
	if err != nil || res.Resigned || res.Term != 1 {
		t.Fatalf("Resign(b) = %+v, %v", res, err)
	}
	res, err = c.Resign(ctx, s, "a")
	if err != nil || !res.Resigned || res.Term != 1 {
		t.Fatalf("Resign(a) = %+v, %v", res, err)
	}
	cur, err = c.CurrentLeader(ctx, s)
	if err != nil || cur != (CurrentLeaderResult{Term: 1}) {
		t.Fatalf("CurrentLeader after resign = %+v, %v", cur, err)
	}
	r, err = c.ForceLeader(ctx, s, "b", lease)
	if err != nil || !r.IsLeader || r.LeaderID != "b" || r.Term != 2 || r.LeaseRemaining <= 9*time.Second {
		t.Fatalf("ForceLeader(b) = %+v, %v", r, err)
	}
	r, err = c.ForceLeader(ctx, s, "c", lease) // forces out a valid leader: a new term
	if err != nil || r.LeaderID != "c" || r.Term != 3 {
		t.Fatalf("ForceLeader(c) = %+v, %v", r, err)
	}
	re, err := c.Reelect(ctx, s)
	if err != nil || re.PreviousLeaderID != "c" || re.Term != 3 {
		t.Fatalf("Reelect = %+v, %v", re, err)
	}
	re, err = c.Reelect(ctx, s)
	if err != nil || re.PreviousLeaderID != "" || re.Term != 3 {
		t.Fatalf("Reelect of a vacant seat = %+v, %v", re, err)
	}
	r, err = c.Campaign(ctx, s, "a", lease)
	if err != nil || !r.IsLeader || r.Term != 4 {
		t.Fatalf("Campaign after reelect = %+v, %v", r, err)
	}
	// Ids are compared byte for byte, and 128 characters of any width are fine.
	wide := strings.Repeat("é", IDMaxChars)
	r, err = c.Campaign(ctx, s+"-wide", wide, lease)
	if err != nil || r.LeaderID != wide {
		t.Fatalf("Campaign(128 x é) = %+v, %v", r, err)
	}
	chk, err = c.AmILeader(ctx, s+"-wide", strings.Repeat("É", IDMaxChars))
	if err != nil || chk.IsLeader {
		t.Fatalf("AmILeader(another case) = %+v, %v", chk, err)
	}

	on, err := c.SetExpiryEvent(ctx, true)
	if err != nil || !on {
		t.Fatalf("SetExpiryEvent(true) = %v, %v", on, err)
	}
	on, err = c.SetExpiryEvent(ctx, false)
	if err != nil || on {
		t.Fatalf("SetExpiryEvent(false) = %v, %v", on, err)
	}
}

func TestInvalidArguments(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	s := service(t)
	long := strings.Repeat("x", IDMaxChars+1)
	checks := []struct {
		param string
		call  func() error
	}{
		{"service_id", func() error { _, err := c.Campaign(ctx, "", "a", time.Second); return err }},
		{"service_id", func() error { _, err := c.Campaign(ctx, long, "a", time.Second); return err }},
		{"service_id", func() error { _, err := c.Campaign(ctx, "a\x00b", "a", time.Second); return err }},
		{"node_id", func() error { _, err := c.Campaign(ctx, s, "", time.Second); return err }},
		{"node_id", func() error { _, err := c.Campaign(ctx, s, long, time.Second); return err }},
		{"lease", func() error { _, err := c.Campaign(ctx, s, "a", 0); return err }},
		{"lease", func() error { _, err := c.Campaign(ctx, s, "a", LeaseMax+time.Millisecond); return err }},
		{"lease", func() error { _, err := c.Campaign(ctx, s, "a", -time.Second); return err }},
		{"lease", func() error { _, err := c.Campaign(ctx, s, "a", 1500*time.Microsecond); return err }},
		{"node_id", func() error { _, err := c.AmILeader(ctx, s, ""); return err }},
		{"service_id", func() error { _, err := c.CurrentLeader(ctx, long); return err }},
		{"lease", func() error { _, err := c.ForceLeader(ctx, s, "a", 0); return err }},
		{"node_id", func() error { _, err := c.ForceLeader(ctx, s, long, time.Second); return err }},
		{"service_id", func() error { _, err := c.Reelect(ctx, ""); return err }},
		{"node_id", func() error { _, err := c.Resign(ctx, s, "n\x00"); return err }},
		{"service_id", func() error { _, err := c.AssertLeader(ctx, "", "a", 1); return err }},
		{"timeout_ms", func() error { return c.SetRequestTimeout(0) }},
		{"timeout_ms", func() error { return c.SetRequestTimeout(LeaseMax + time.Millisecond) }},
		{"timeout_ms", func() error { return c.SetRequestTimeout(-time.Second) }},
	}
	for i, check := range checks {
		err := check.call()
		t.Logf("%d: %v", i, err)
		wantParam(t, err, check.param)
	}
	_, err := c.Campaign(ctx, "\xff\xfe", "a", time.Second)
	if e := wantCode(t, err, CodeInvalidUTF8, ErrInvalidUTF8); e.Param != "service_id" {
		t.Errorf("Param = %q", e.Param)
	}
	_, err = c.AmILeader(ctx, s, "ok\xc3")
	if e := wantCode(t, err, CodeInvalidUTF8, ErrInvalidUTF8); e.Param != "node_id" {
		t.Errorf("Param = %q", e.Param)
	}
	// Nothing was written by the rejected calls.
	cur, err := c.CurrentLeader(ctx, s)
	if err != nil || cur.Term != 0 {
		t.Fatalf("CurrentLeader = %+v, %v", cur, err)
	}
}

func TestConnectionErrors(t *testing.T) {
	ctx := ctxTimeout(t, time.Minute)
	// Nothing listens on port 1.
	c := openClient(t, "mysql://user:hunter2@127.0.0.1:1/db")
	_, err := c.Campaign(ctx, "s", "a", time.Second)
	e := wantCode(t, err, CodeConnection, ErrConnection)
	if !e.Transient {
		t.Error("a refused connection is not transient")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("the password shows in %v", err)
	}
	// Every connection error names the server as host:port (never user@).
	const server = "127.0.0.1:1"
	if !strings.Contains(err.Error(), server) || strings.Contains(err.Error(), "user@") {
		t.Errorf("Campaign: %q does not name %s (alone)", err, server)
	}
	_, err = c.Migrate(ctx)
	wantCode(t, err, CodeConnection, ErrConnection)
	if !strings.Contains(err.Error(), server) {
		t.Errorf("Migrate: %q does not name %s", err, server)
	}
	_, err = c.BeginTx(ctx)
	wantCode(t, err, CodeConnection, ErrConnection)
	if !strings.Contains(err.Error(), server) {
		t.Errorf("BeginTx: %q does not name %s", err, server)
	}

	// A server that never answers: the request timeout bounds every call.
	silent := openClient(t, blackhole(t))
	if err := silent.SetRequestTimeout(300 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = silent.CurrentLeader(ctx, "s")
	took := time.Since(start)
	e = wantCode(t, err, CodeConnection, ErrConnection)
	if took < 250*time.Millisecond || took > 5*time.Second {
		t.Errorf("the call took %v with a 300 ms request timeout", took)
	}
	if !strings.Contains(e.Message, "300 ms") {
		t.Errorf("message %q does not say the timeout", e.Message)
	}
}

func TestContextEndsBlockedCalls(t *testing.T) {
	c := openClient(t, blackhole(t)) // every call blocks for the request timeout (5 s)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if _, err := c.Campaign(cancelled, "s", "a", time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("Campaign with a cancelled context = %v", err)
	}
	if _, err := c.BeginTx(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("BeginTx with a cancelled context = %v", err)
	}
	if time.Since(start) > 100*time.Millisecond {
		t.Errorf("a cancelled context took %v", time.Since(start))
	}

	calls := map[string]func(ctx context.Context) error{
		"Campaign":       func(ctx context.Context) error { _, err := c.Campaign(ctx, "s", "a", time.Second); return err },
		"AmILeader":      func(ctx context.Context) error { _, err := c.AmILeader(ctx, "s", "a"); return err },
		"CurrentLeader":  func(ctx context.Context) error { _, err := c.CurrentLeader(ctx, "s"); return err },
		"ForceLeader":    func(ctx context.Context) error { _, err := c.ForceLeader(ctx, "s", "a", time.Second); return err },
		"Reelect":        func(ctx context.Context) error { _, err := c.Reelect(ctx, "s"); return err },
		"Resign":         func(ctx context.Context) error { _, err := c.Resign(ctx, "s", "a"); return err },
		"AssertLeader":   func(ctx context.Context) error { _, err := c.AssertLeader(ctx, "s", "a", 1); return err },
		"SetExpiryEvent": func(ctx context.Context) error { _, err := c.SetExpiryEvent(ctx, false); return err },
		"Migrate":        func(ctx context.Context) error { _, err := c.Migrate(ctx); return err },
		"BeginTx":        func(ctx context.Context) error { _, err := c.BeginTx(ctx); return err },
	}
	for name, call := range calls {
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		start := time.Now()
		err := call(ctx)
		took := time.Since(start)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: got %v, want context.DeadlineExceeded", name, err)
		}
		if took > 2*time.Second {
			t.Errorf("%s: returned after %v with a 150 ms deadline", name, took)
		}
	}
	// Closing the client while those calls still run in the background is safe: the last of
	// them frees it.
	c.Close()
	if _, err := c.CurrentLeader(context.Background(), "s"); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestClientClose(t *testing.T) {
	c, err := Open(testURL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxTimeout(t, time.Minute)
	if _, err := c.CurrentLeader(ctx, service(t)); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	checks := map[string]error{}
	_, checks["Campaign"] = c.Campaign(ctx, "s", "a", time.Second)
	_, checks["CurrentLeader"] = c.CurrentLeader(ctx, "s")
	_, checks["Migrate"] = c.Migrate(ctx)
	_, checks["BeginTx"] = c.BeginTx(ctx)
	checks["SetRequestTimeout"] = c.SetRequestTimeout(time.Second)
	_, checks["NewElector"] = NewElector(c, ElectorConfig{ServiceID: "s"})
	for name, err := range checks {
		if !errors.Is(err, ErrClosed) || !errors.Is(err, ErrInvalidState) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}

// TestServerErrors: a statement the server rejects is ErrServer with the server's code.
func TestServerErrors(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	tx, err := c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	_, err = tx.Exec(ctx, "SELEC 1")
	e := wantCode(t, err, CodeServer, ErrServer)
	if e.ServerCode != 1064 || e.Transient {
		t.Errorf("ServerCode = %d, Transient = %v; want 1064, false", e.ServerCode, e.Transient)
	}
	// The transaction is spent.
	_, err = tx.Exec(ctx, "SELECT 1")
	wantCode(t, err, CodeInvalidState, ErrInvalidState)
}
