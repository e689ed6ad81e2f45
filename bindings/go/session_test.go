package mysqlleader

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sessionConfig: a lease long enough that a takeover within a few seconds can only come from a
// resign, never from a lease that lapsed; followers look every 300 ms (a session's followers
// have no wake-up lock).
func sessionConfig(node string) SessionConfig {
	return SessionConfig{
		NodeID:         node,
		Lease:          10 * time.Second,
		RetryInterval:  300 * time.Millisecond,
		RequestTimeout: 2 * time.Second,
	}
}

func newSession(t *testing.T, c *Client, config SessionConfig) *Session {
	t.Helper()
	s, err := NewSession(c, config)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sessionElector(t *testing.T, s *Session, service string) *Elector {
	t.Helper()
	e, err := s.Elector(service)
	if err != nil {
		t.Fatalf("Session.Elector(%q): %v", service, err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// collect reads a Changes channel to its end in the background; wait returns the events.
func collect(ch <-chan Event) (wait func(limit time.Duration) ([]Event, bool)) {
	var mu sync.Mutex
	var events []Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range ch {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		}
	}()
	return func(limit time.Duration) ([]Event, bool) {
		select {
		case <-done:
		case <-time.After(limit):
		}
		mu.Lock()
		defer mu.Unlock()
		select {
		case <-done:
			return append([]Event(nil), events...), true
		default:
			return append([]Event(nil), events...), false
		}
	}
}

// TestSessionsTwoNodesTwentyServices: two sessions (nodes "a" and "b") campaign for the same
// 20 services. Every service has exactly one leader: a, which started first, leads all 20,
// and b sees a as their leader. Closing session a resigns every seat, so b leads all 20 within
// a few retry intervals (well before a's 10 s leases could lapse). A monitor checks all along
// that no service ever has two leaders.
func TestSessionsTwoNodesTwentyServices(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, 2*time.Minute)
	const n = 20
	prefix := service(t)
	if len(prefix) > IDMaxChars-3 {
		prefix = prefix[len(prefix)-(IDMaxChars-3):]
	}
	services := make([]string, n)
	for i := range services {
		services[i] = fmt.Sprintf("%s-%02d", prefix, i)
	}

	// 1. Session a leads all 20.
	sa := newSession(t, c, sessionConfig("a"))
	as := make([]*Elector, n)
	waitA := make([]func(time.Duration) ([]Event, bool), n)
	for i, svc := range services {
		as[i] = sessionElector(t, sa, svc)
		waitA[i] = collect(as[i].Changes())
		if as[i].ServiceID() != svc || as[i].NodeID() != "a" {
			t.Fatalf("elector %d: ServiceID %q NodeID %q", i, as[i].ServiceID(), as[i].NodeID())
		}
	}
	for i, e := range as {
		if err := e.WaitForLeadership(ctx); err != nil {
			t.Fatalf("a, service %d: %v", i, err)
		}
	}

	// 2. Session b, started second, leads none; it sees a as the leader of every service.
	sb := newSession(t, c, sessionConfig("b"))
	bs := make([]*Elector, n)
	waitB := make([]func(time.Duration) ([]Event, bool), n)
	for i, svc := range services {
		bs[i] = sessionElector(t, sb, svc)
		waitB[i] = collect(bs[i].Changes())
	}

	// The monitor: b first, then a, so that a report of two leaders is never a takeover that
	// happened between the two reads (a never takes a seat back here).
	var overlaps atomic.Int64
	var overlapMsg atomic.Value
	stop := make(chan struct{})
	monitorDone := make(chan struct{})
	go func() {
		defer close(monitorDone)
		for {
			for i := range services {
				if bs[i].IsLeader() && as[i].IsLeader() {
					if overlaps.Add(1) == 1 {
						overlapMsg.Store(fmt.Sprintf("service %s: a and b both lead", services[i]))
					}
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	stopMonitor := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-monitorDone
	}
	defer stopMonitor()

	eventually(t, slack, "b sees a as the leader of every service", func() bool {
		for _, e := range bs {
			if e.Leader() != "a" {
				return false
			}
		}
		return true
	})
	for i, svc := range services {
		if !as[i].IsLeader() || bs[i].IsLeader() {
			t.Fatalf("service %s: a leads %v, b leads %v", svc, as[i].IsLeader(), bs[i].IsLeader())
		}
		cur, err := c.CurrentLeader(ctx, svc)
		if err != nil || cur.LeaderID != "a" {
			t.Fatalf("service %s in the database: %+v, %v (want a)", svc, cur, err)
		}
		if st, err := bs[i].State(); err != nil || !st.Campaigning || st.IsLeader || st.LeaderID != "a" {
			t.Fatalf("service %s, b's state: %+v, %v", svc, st, err)
		}
	}
	termsA := make([]uint64, n)
	for i, e := range as {
		termsA[i] = e.Term()
	}

	// 3. Closing session a: every seat resigned, b leads all 20 quickly.
	closed := time.Now()
	if err := sa.Close(); err != nil {
		t.Fatal(err)
	}
	closeTook := time.Since(closed)
	for i, e := range as {
		if e.IsLeader() || e.Term() != 0 || e.Leader() != "" || e.ValidFor() != 0 || e.IsHealthy() {
			t.Errorf("a's elector %d after Session.Close: leader %v term %d leader %q", i, e.IsLeader(), e.Term(), e.Leader())
		}
		if _, err := e.State(); !errors.Is(err, ErrClosed) {
			t.Errorf("a's elector %d: State after Session.Close: %v, want ErrClosed", i, err)
		}
		if _, err := e.Resign(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("a's elector %d: Resign after Session.Close: %v, want ErrClosed", i, err)
		}
		if err := e.WaitForLeadership(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("a's elector %d: WaitForLeadership after Session.Close: %v, want ErrClosed", i, err)
		}
		if err := e.Close(); err != nil {
			t.Errorf("a's elector %d: Close after Session.Close: %v", i, err)
		}
	}
	eventually(t, 5*time.Second, "b leads all 20 services", func() bool {
		for _, e := range bs {
			if !e.IsLeader() {
				return false
			}
		}
		return true
	})
	took := time.Since(closed)
	t.Logf("Session.Close took %v; b led all %d services %v after it began", closeTook, n, took)
	for i, svc := range services {
		cur, err := c.CurrentLeader(ctx, svc)
		if err != nil || cur.LeaderID != "b" || cur.Term <= termsA[i] {
			t.Errorf("service %s in the database: %+v, %v (want b, after term %d)", svc, cur, err, termsA[i])
		}
	}
	stopMonitor()
	if k := overlaps.Load(); k > 0 {
		t.Errorf("%d samples with two leaders; first: %v", k, overlapMsg.Load())
	}

	// 4. The streams: a's ended with a shutdown and were closed by Session.Close; b's show one
	//    term each.
	for i := range services {
		events, done := waitA[i](slack)
		if !done {
			t.Errorf("a's elector %d: the Changes channel was not closed (seen %v)", i, events)
		}
		checkStream(t, "a", events, 10*time.Second)
		stoppedShutdown := false
		for _, ev := range events {
			if ev.Kind == StoppedLeading && ev.Reason == StopShutdown {
				stoppedShutdown = true
			}
		}
		if !stoppedShutdown {
			t.Errorf("a's elector %d: no StoppedLeading with StopShutdown in %v", i, events)
		}
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range services {
		events, done := waitB[i](slack)
		if !done {
			t.Errorf("b's elector %d: the Changes channel was not closed (seen %v)", i, events)
		}
		checkStream(t, "b", events, 10*time.Second)
		started := 0
		for _, ev := range events {
			if ev.Kind == StartedLeading {
				started++
			}
		}
		if started != 1 {
			t.Errorf("b's elector %d: started leading %d times: %v", i, started, events)
		}
	}
	// Closing b resigned its seats too.
	for _, svc := range services {
		cur, err := c.CurrentLeader(ctx, svc)
		if err != nil || cur.LeaderID != "" {
			t.Errorf("service %s after closing b: %+v, %v (want a vacant seat)", svc, cur, err)
		}
	}
}

// TestSessionElectorAPI: an elector of a session is an ordinary *Elector: its own Close
// resigns its seat alone (the session's other electors go on leading, and its service may be
// campaigned for again in the session); Resign, Handover and fenced transactions work.
func TestSessionElectorAPI(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	s1, s2, s3 := service(t, "1"), service(t, "2"), service(t, "3")
	sa := newSession(t, c, sessionConfig("a"))
	sb := newSession(t, c, sessionConfig("b"))
	a1, a2, a3 := sessionElector(t, sa, s1), sessionElector(t, sa, s2), sessionElector(t, sa, s3)
	for _, e := range []*Elector{a1, a2, a3} {
		if err := e.WaitForLeadership(ctx); err != nil {
			t.Fatal(err)
		}
	}
	b1, b2, b3 := sessionElector(t, sb, s1), sessionElector(t, sb, s2), sessionElector(t, sb, s3)

	// A fenced transaction of a session's leader.
	err := a1.RunFencedTx(ctx, func(tx *Txn) error {
		if tx.Term() != a1.Term() {
			return fmt.Errorf("txn term %d, elector term %d", tx.Term(), a1.Term())
		}
		_, err := tx.Exec(ctx, "DO ?", tx.Term())
		return err
	})
	if err != nil {
		t.Fatalf("RunFencedTx: %v", err)
	}

	// The elector's own Close: that seat alone is resigned, and b takes it.
	a1.Close()
	if err := b1.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	if !a2.IsLeader() || !a3.IsLeader() || b2.IsLeader() || b3.IsLeader() {
		t.Fatalf("after closing a's elector of %s alone: a2 %v a3 %v b2 %v b3 %v", s1, a2.IsLeader(), a3.IsLeader(), b2.IsLeader(), b3.IsLeader())
	}
	// Its service may be campaigned for again in the session once its elector is closed.
	again := sessionElector(t, sa, s1)
	eventually(t, slack, "the new elector sees b", func() bool { return again.Leader() == "b" })

	// Resign: the elector no longer campaigns, b takes the seat.
	if resigned, err := a2.Resign(ctx); err != nil || !resigned {
		t.Fatalf("Resign: %v, %v", resigned, err)
	}
	if err := a2.WaitForLeadership(ctx); !errors.Is(err, ErrNotCampaigning) {
		t.Fatalf("WaitForLeadership after Resign: %v", err)
	}
	if err := b2.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}

	// Handover to b.
	if led, err := a3.Handover(ctx, "b"); err != nil || !led {
		t.Fatalf("Handover: %v, %v", led, err)
	}
	if err := b3.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	if a3.IsLeader() {
		t.Fatal("a still leads after its handover")
	}
}

// TestSessionMetricsText: a session's metrics are one valid exposition (HELP and TYPE once),
// with one sample per running elector: compact (the session's series and two gauges per
// service) by default, every per-service series in the detailed form.
func TestSessionMetricsText(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	sa := newSession(t, c, sessionConfig("metrics"))
	s1, s2 := service(t, "1"), service(t, "2")
	e1, e2 := sessionElector(t, sa, s1), sessionElector(t, sa, s2)
	for _, e := range []*Elector{e1, e2} {
		if err := e.WaitForLeadership(ctx); err != nil {
			t.Fatal(err)
		}
	}
	comments := func(text string) map[string]bool {
		seen := map[string]bool{}
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "#") {
				if seen[line] {
					t.Fatalf("repeated %q in\n%s", line, text)
				}
				seen[line] = true
			}
		}
		return seen
	}
	detailed, err := sa.MetricsTextDetailed()
	if err != nil {
		t.Fatal(err)
	}
	text, err := sa.MetricsText()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{s1, s2} {
		for _, tx := range []string{text, detailed} {
			if !strings.Contains(tx, fmt.Sprintf("leader_election_master_status{name=%q} 1", s)) {
				t.Fatalf("no leading gauge for %s in\n%s", s, tx)
			}
			if !strings.Contains(tx, fmt.Sprintf("mysqlleader_term{name=%q} ", s)) {
				t.Fatalf("no term for %s in\n%s", s, tx)
			}
		}
		if !strings.Contains(detailed, fmt.Sprintf("mysqlleader_campaign_duration_seconds_count{name=%q} ", s)) {
			t.Fatalf("no duration histogram for %s in the detailed form\n%s", s, detailed)
		}
	}
	if n := len(comments(detailed)); n != 32 {
		t.Fatalf("%d comment lines, want 32 (HELP and TYPE of 16 metrics: the session's 11, each elector's 5):\n%s", n, detailed)
	}
	if n := len(comments(text)); n != 26 {
		t.Fatalf("%d comment lines, want 26 (HELP and TYPE of 13 metrics: the session's 11, each elector's 2):\n%s", n, text)
	}
	if strings.Contains(text, "mysqlleader_campaign_duration_seconds") {
		t.Fatalf("the compact form has a per-service histogram:\n%s", text)
	}
	for _, want := range []string{
		`mysqlleader_session_seats{node="metrics",state="leading"} 2` + "\n",
		"# TYPE mysqlleader_session_renew_batch_duration_seconds histogram\n",
		`mysqlleader_session_renew_batches_total{node="metrics"} `,
	} {
		if !strings.Contains(text, want) || !strings.Contains(detailed, want) {
			t.Fatalf("no %q in\n%s\nor\n%s", want, text, detailed)
		}
	}
	sa.Close()
	if _, err := sa.MetricsText(); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if _, err := sa.MetricsTextDetailed(); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close (detailed): %v", err)
	}
}

// TestSessionErrors: the errors of NewSession and Session.Elector name the parameter; a
// closed session says so.
func TestSessionErrors(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)

	// A bad SessionConfig value: ErrInvalidArgument naming the field.
	long := strings.Repeat("n", IDMaxChars+1)
	cases := []struct {
		param  string
		config SessionConfig
	}{
		{"NodeID", SessionConfig{NodeID: long}},
		{"NodeID", SessionConfig{NodeID: "a\x00b"}},
		{"Lease", SessionConfig{Lease: LeaseMax + time.Millisecond}},
		{"Lease", SessionConfig{Lease: -time.Second}},
		{"Lease", SessionConfig{Lease: 1500 * time.Microsecond}},
		{"Lease", SessionConfig{Lease: time.Millisecond}},
		{"RenewInterval", SessionConfig{Lease: time.Second, RenewInterval: time.Second}},
		{"RetryInterval", SessionConfig{Lease: time.Second, RetryInterval: 2 * time.Second}},
		{"RequestTimeout", SessionConfig{Lease: time.Second, RequestTimeout: time.Second}},
		{"DriftMargin", SessionConfig{Lease: time.Second, DriftMargin: time.Second}},
		{"RetryJitter", SessionConfig{RetryJitter: 1.5}},
		{"RetryJitter", SessionConfig{RetryJitter: 0.1, NoJitter: true}},
	}
	for _, tc := range cases {
		s, err := NewSession(c, tc.config)
		if err == nil {
			s.Close()
			t.Errorf("%+v: no error", tc.config)
			continue
		}
		t.Logf("%v", err)
		wantParam(t, err, tc.param)
	}
	_, err := NewSession(c, SessionConfig{NodeID: "\xff"})
	if e := wantCode(t, err, CodeInvalidUTF8, ErrInvalidUTF8); e.Param != "NodeID" {
		t.Errorf("Param = %q", e.Param)
	}
	_, err = NewSession(nil, sessionConfig("a"))
	if e := wantCode(t, err, CodeNullArgument, ErrNullArgument); e.Param != "client" {
		t.Errorf("Param = %q", e.Param)
	}

	// Bad service ids, and a second elector for one service in one session.
	s := newSession(t, c, sessionConfig("dup"))
	for _, bad := range []string{"", long, "x\x00y"} {
		_, err := s.Elector(bad)
		t.Logf("%v", err)
		wantParam(t, err, "service_id")
	}
	_, err = s.Elector("\xff")
	if e := wantCode(t, err, CodeInvalidUTF8, ErrInvalidUTF8); e.Param != "service_id" {
		t.Errorf("Param = %q", e.Param)
	}
	svc := service(t)
	first := sessionElector(t, s, svc)
	second, err := s.Elector(svc)
	if err == nil {
		second.Close()
		t.Fatal("a second elector for one service in one session: no error")
	}
	t.Logf("%v", err)
	wantParam(t, err, "service_id")
	if !strings.Contains(err.Error(), svc) {
		t.Errorf("the message does not name the service: %v", err)
	}
	if err := first.WaitForLeadership(ctx); err != nil {
		t.Fatalf("the first elector after the refused second one: %v", err)
	}

	// Elector after Close: ErrClosed (an ErrInvalidState) that says the session is closed.
	s.Close()
	s.Close() // idempotent
	if first.IsLeader() {
		t.Error("the session's elector leads after Session.Close")
	}
	_, err = s.Elector(service(t, "late"))
	e := wantCode(t, err, CodeInvalidState, ErrInvalidState)
	if !errors.Is(err, ErrClosed) || !strings.Contains(e.Error(), "session is closed") {
		t.Errorf("Elector after Close: %v", err)
	}
	t.Logf("%v", err)

	// The client may be closed before its session, which keeps the pool.
	c2 := openClient(t, testURL)
	s2 := newSession(t, c2, sessionConfig("orphan"))
	c2.Close()
	if err := sessionElector(t, s2, service(t, "orphan")).WaitForLeadership(ctx); err != nil {
		t.Fatalf("an elector of a session whose client was closed: %v", err)
	}
	// A closed client makes no session.
	_, err = NewSession(c2, sessionConfig("late"))
	if !errors.Is(err, ErrClosed) {
		t.Errorf("NewSession on a closed client: %v, want ErrClosed", err)
	}
}

// refusedURL is the URL of a loopback port with nothing listening (bound, then closed): a
// connection to it is refused at once.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "mysql://app:hunter2@" + addr + "/db"
}

// TestSessionFallbacks: a session whose server refuses every connection (a transient failure)
// moves to its fallback, the live server, where its electors lead within a few seconds. The
// fallback client may be closed once NewSession returns: the session keeps its pool.
func TestSessionFallbacks(t *testing.T) {
	dead := openClient(t, refusedURL(t))
	live := openClient(t, testURL)
	config := sessionConfig("fb")
	config.Fallbacks = []*Client{live}
	s := newSession(t, dead, config)
	live.Close()
	svc := service(t)
	started := time.Now()
	one, two := sessionElector(t, s, svc+"-1"), sessionElector(t, s, svc+"-2")
	ctx := ctxTimeout(t, time.Minute)
	for _, e := range []*Elector{one, two} {
		if err := e.WaitForLeadership(ctx); err != nil {
			t.Fatalf("%s: %v", e.ServiceID(), err)
		}
	}
	if took := time.Since(started); took > 5*time.Second {
		t.Errorf("led after %v, want within a few seconds", took)
	}
	t.Logf("both led %v after starting, through the fallback", time.Since(started))
	if one.Term() != 1 || one.NodeID() != "fb" {
		t.Errorf("term %d, node %q", one.Term(), one.NodeID())
	}
	c := newClient(t)
	got, err := c.CurrentLeader(ctx, svc+"-1")
	if err != nil || got.LeaderID != "fb" {
		t.Fatalf("CurrentLeader: %+v, %v", got, err)
	}
	// Closing the session resigns through the fallback too.
	s.Close()
	got, err = c.CurrentLeader(ctx, svc+"-2")
	if err != nil || got.LeaderID != "" {
		t.Fatalf("after Close: %+v, %v", got, err)
	}
}

// TestSessionFallbackErrors: a nil fallback is ErrInvalidArgument naming "Fallbacks[i]", as
// for NewElector; a closed one is ErrClosed; either way no client is left held.
func TestSessionFallbackErrors(t *testing.T) {
	c := newClient(t)
	other := openClient(t, testURL)
	for i, fallbacks := range [][]*Client{{nil}, {other, nil}} {
		config := sessionConfig("nil")
		config.Fallbacks = fallbacks
		s, err := NewSession(c, config)
		if err == nil {
			s.Close()
			t.Fatalf("%v: no error", fallbacks)
		}
		t.Logf("%v", err)
		wantParam(t, err, fmt.Sprintf("Fallbacks[%d]", i))
	}
	closed := openClient(t, testURL)
	closed.Close()
	config := sessionConfig("closed")
	config.Fallbacks = []*Client{other, closed}
	if _, err := NewSession(c, config); !errors.Is(err, ErrClosed) {
		t.Errorf("a closed fallback: %v, want ErrClosed", err)
	}
	for name, cl := range map[string]*Client{"client": c, "fallback": other} {
		cl.h.mu.Lock()
		active := cl.h.active
		cl.h.mu.Unlock()
		if active != 0 {
			t.Errorf("the %s is still held %d times", name, active)
		}
	}
}

// TestSessionCloseRaces: Session.Close while electors are being made, read and closed from
// other goroutines (the race detector watches); every elector ends closed.
func TestSessionCloseRaces(t *testing.T) {
	c := newClient(t)
	s := newSession(t, c, sessionConfig("racer"))
	prefix := service(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var made []*Elector
	some := make(chan struct{})
	var someOnce sync.Once
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				e, err := s.Elector(fmt.Sprintf("%s-%d-%d", prefix, g, i))
				if err != nil {
					if !errors.Is(err, ErrClosed) {
						t.Errorf("Elector: %v", err)
					}
					return
				}
				mu.Lock()
				made = append(made, e)
				if len(made) == 6 {
					someOnce.Do(func() { close(some) })
				}
				mu.Unlock()
				_ = e.IsLeader()
				if i%3 == 0 {
					e.Close()
				}
			}
		}(g)
	}
	select { // then Close, while the goroutines go on making electors
	case <-some:
	case <-time.After(slack):
	}
	s.Close()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, e := range made {
		if _, err := e.State(); !errors.Is(err, ErrClosed) {
			t.Errorf("elector of %s after Session.Close: %v, want ErrClosed", e.ServiceID(), err)
		}
	}
	s.h.emu.Lock()
	n := len(s.h.electors)
	s.h.emu.Unlock()
	if n != 0 {
		t.Errorf("the closed session still lists %d electors", n)
	}
	t.Logf("%d of 40 electors made before Close", len(made))
}
