package mysqlleader

import (
	"context"
	"errors"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Short leases for the tests: renew every 400 ms, retry every 200 ms. Liveness is asserted
// with generous slack (a busy 2-core machine, the race detector); order and safety strictly.
const (
	testLease = 2 * time.Second
	slack     = 3 * time.Second
)

func testConfig(service, node string) ElectorConfig {
	return ElectorConfig{
		ServiceID:      service,
		NodeID:         node,
		Lease:          testLease,
		RequestTimeout: time.Second, // generous on a busy machine; still below the lease
	}
}

func newElector(t *testing.T, c *Client, config ElectorConfig) *Elector {
	t.Helper()
	e, err := NewElector(c, config)
	if err != nil {
		t.Fatalf("NewElector: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// checkStream checks one node's event stream: StartedLeading and StoppedLeading alternate,
// each StoppedLeading ends the term that started, terms never go down, and the node reports
// its own id when it starts leading.
func checkStream(t *testing.T, node string, events []Event, lease time.Duration) {
	t.Helper()
	leading := false
	var term, seen uint64
	for i, ev := range events {
		if ev.Term < seen && ev.Kind != EventsMissed {
			t.Errorf("%s: event %d (%v) goes back from term %d", node, i, ev, seen)
		}
		if ev.Term > seen {
			seen = ev.Term
		}
		switch ev.Kind {
		case StartedLeading:
			if leading {
				t.Errorf("%s: event %d: started leading term %d while leading term %d: %v", node, i, ev.Term, term, events)
			}
			if ev.Term < term || ev.LeaderID != node || ev.ValidFor <= 0 || ev.ValidFor > lease {
				t.Errorf("%s: event %d: bad %v after term %d", node, i, ev, term)
			}
			leading, term = true, ev.Term
		case StoppedLeading:
			if !leading || ev.Term != term || ev.Reason == StopNone {
				t.Errorf("%s: event %d: %v without leading that term (leading=%v term=%d): %v", node, i, ev, leading, term, events)
			}
			leading = false
		case LeaderChanged:
		case EventsMissed:
			t.Errorf("%s: events missed: %v", node, ev)
		default:
			t.Errorf("%s: unknown event %v", node, ev)
		}
	}
}

func TestElectorLifecycle(t *testing.T) {
	c := newClient(t)
	s := service(t)
	ctx := ctxTimeout(t, time.Minute)
	e := newElector(t, c, testConfig(s, "n1"))
	changes := e.Changes()
	if e.Changes() != changes {
		t.Error("Changes() returns a different channel each time")
	}
	if e.NodeID() != "n1" || e.ServiceID() != s {
		t.Errorf("NodeID %q, ServiceID %q", e.NodeID(), e.ServiceID())
	}
	if err := e.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	if !e.IsLeader() || e.Term() != 1 || e.Leader() != "n1" {
		t.Fatalf("IsLeader %v, Term %d, Leader %q", e.IsLeader(), e.Term(), e.Leader())
	}
	if v := e.ValidFor(); v <= 0 || v > testLease {
		t.Errorf("ValidFor = %v", v)
	}
	st, err := e.State()
	if err != nil || !st.IsLeader || st.Term != 1 || !st.Campaigning || st.LeaderID != "n1" || st.ValidFor <= 0 || st.LastCallError != nil {
		t.Fatalf("State = %+v, %v", st, err)
	}
	// The first events: the seat is seen taken by this node, then it leads.
	ev := nextEvent(t, changes, slack)
	if ev.Kind != LeaderChanged || ev.LeaderID != "n1" || ev.Term != 1 {
		t.Fatalf("first event %v", ev)
	}
	ev = nextEvent(t, changes, slack)
	if ev.Kind != StartedLeading || ev.LeaderID != "n1" || ev.Term != 1 || ev.ValidFor <= 0 || ev.At.IsZero() {
		t.Fatalf("second event %v", ev)
	}
	// The database agrees.
	cur, err := c.CurrentLeader(ctx, s)
	if err != nil || cur.LeaderID != "n1" || cur.Term != 1 {
		t.Fatalf("CurrentLeader = %+v, %v", cur, err)
	}
	// It stays leader across renews (several lease lengths).
	time.Sleep(testLease + testLease/2)
	if !e.IsLeader() || e.Term() != 1 {
		t.Fatalf("lost leadership while renewing: %+v", must(e.State()))
	}

	// Resign: steps down at once, the seat is vacant, the elector stops campaigning.
	resigned, err := e.Resign(ctx)
	if err != nil || !resigned {
		t.Fatalf("Resign = %v, %v", resigned, err)
	}
	if e.IsLeader() || e.ValidFor() != 0 {
		t.Error("still leader after Resign")
	}
	ev = nextEvent(t, changes, slack)
	if ev.Kind != StoppedLeading || ev.Term != 1 || ev.Reason != StopResigned {
		t.Fatalf("after Resign: %v", ev)
	}
	cur, err = c.CurrentLeader(ctx, s)
	if err != nil || cur.LeaderID != "" || cur.Term != 1 {
		t.Fatalf("CurrentLeader after Resign = %+v, %v", cur, err)
	}
	st, _ = e.State()
	if st.Campaigning || st.IsLeader {
		t.Errorf("State after Resign = %+v", st)
	}
	err = e.WaitForLeadership(ctx)
	if !errors.Is(err, ErrNotCampaigning) || !errors.Is(err, ErrInvalidState) {
		t.Fatalf("WaitForLeadership after Resign = %v", err)
	}
	if again, err := e.Resign(ctx); err != nil || again {
		t.Errorf("a second Resign = %v, %v", again, err)
	}

	// Close: the channel is closed after the last events; everything after is ErrClosed.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e.Close()
	var rest []Event
	for ev := range changes {
		rest = append(rest, ev)
	}
	for _, ev := range rest {
		if ev.Kind == StartedLeading || ev.Kind == StoppedLeading {
			t.Errorf("after Resign and Close: %v", ev)
		}
	}
	if e.IsLeader() || e.Term() != 0 || e.Leader() != "" || e.ValidFor() != 0 || e.NodeID() != "n1" {
		t.Error("the accessors after Close")
	}
	errs := map[string]error{}
	_, errs["State"] = e.State()
	_, errs["Resign"] = e.Resign(ctx)
	_, errs["BeginFencedTx"] = e.BeginFencedTx(ctx)
	errs["WaitForLeadership"] = e.WaitForLeadership(ctx)
	errs["RunWhileLeader"] = e.RunWhileLeader(ctx, func(context.Context) error { return nil })
	errs["RunFencedTx"] = e.RunFencedTx(ctx, func(*Txn) error { return nil })
	for name, err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}

func must[T any](v T, _ error) T { return v }

func TestElectorDefaultsAndClose(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)

	// NodeID defaults to hostname:pid; Close resigns, so the seat is vacant at once.
	s := service(t)
	e, err := NewElector(c, ElectorConfig{ServiceID: s, Lease: testLease})
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := DefaultNodeID(); e.NodeID() != id {
		t.Errorf("NodeID() = %q, want the default %q", e.NodeID(), id)
	}
	changes := e.Changes()
	if err := e.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	e.Close()
	var events []Event
	for ev := range changes {
		events = append(events, ev)
	}
	// The last events: stopped leading (shutdown), then the seat seen vacant.
	checkStream(t, e.NodeID(), events, testLease)
	if n := len(events); n < 2 || events[n-2].Kind != StoppedLeading || events[n-2].Reason != StopShutdown ||
		events[n-1].Kind != LeaderChanged || events[n-1].LeaderID != "" {
		t.Errorf("the last events before the channel closed: %v", events)
	}
	cur, err := c.CurrentLeader(ctx, s)
	if err != nil || cur.LeaderID != "" {
		t.Errorf("after Close: %+v, %v (want a vacant seat)", cur, err)
	}

	// NoResignOnClose leaves the lease to lapse.
	s2 := service(t, "keep")
	cfg := testConfig(s2, "keeper")
	cfg.NoResignOnClose = true
	e2 := newElector(t, c, cfg)
	if err := e2.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	e2.Close()
	cur, err = c.CurrentLeader(ctx, s2)
	if err != nil || cur.LeaderID != "keeper" {
		t.Errorf("after Close with NoResignOnClose: %+v, %v (want keeper's lease)", cur, err)
	}

	// The client may be closed before its electors: they keep the pool.
	c2 := openClient(t, testURL)
	s3 := service(t, "orphan")
	e3 := newElector(t, c2, testConfig(s3, "orphan"))
	c2.Close()
	if err := e3.WaitForLeadership(ctx); err != nil {
		t.Fatalf("an elector whose client was closed: %v", err)
	}
}

func TestElectorConfigErrors(t *testing.T) {
	c := newClient(t)
	s := service(t)
	long := strings.Repeat("n", IDMaxChars+1)
	cases := []struct {
		param  string
		config ElectorConfig
	}{
		{"ServiceID", ElectorConfig{}},
		{"ServiceID", ElectorConfig{ServiceID: long}},
		{"ServiceID", ElectorConfig{ServiceID: "a\x00"}},
		{"NodeID", ElectorConfig{ServiceID: s, NodeID: long}},
		{"Lease", ElectorConfig{ServiceID: s, Lease: LeaseMax + time.Millisecond}},
		{"Lease", ElectorConfig{ServiceID: s, Lease: -time.Second}},
		{"Lease", ElectorConfig{ServiceID: s, Lease: 1500 * time.Microsecond}},
		{"RenewInterval", ElectorConfig{ServiceID: s, Lease: time.Second, RenewInterval: time.Second}},
		{"RetryInterval", ElectorConfig{ServiceID: s, Lease: time.Second, RetryInterval: 2 * time.Second}},
		{"RequestTimeout", ElectorConfig{ServiceID: s, Lease: time.Second, RequestTimeout: time.Second}},
		{"DriftMargin", ElectorConfig{ServiceID: s, Lease: time.Second, DriftMargin: time.Second}},
		{"RetryJitter", ElectorConfig{ServiceID: s, RetryJitter: 1.5}},
		{"RetryJitter", ElectorConfig{ServiceID: s, RetryJitter: 0.1, NoJitter: true}},
		{"Fallbacks[0]", ElectorConfig{ServiceID: s, Fallbacks: []*Client{nil}}},
	}
	for _, tc := range cases {
		e, err := NewElector(c, tc.config)
		if err == nil {
			e.Close()
			t.Errorf("%+v: no error", tc.config)
			continue
		}
		t.Logf("%v", err)
		wantParam(t, err, tc.param)
	}
	_, err := NewElector(c, ElectorConfig{ServiceID: "\xff"})
	if e := wantCode(t, err, CodeInvalidUTF8, ErrInvalidUTF8); e.Param != "ServiceID" {
		t.Errorf("Param = %q", e.Param)
	}
	// Valid corner cases are accepted: no jitter, and fallbacks.
	cfg := testConfig(s, "fine")
	cfg.NoJitter = true
	cfg.Fallbacks = []*Client{openClient(t, testURL)}
	e := newElector(t, c, cfg)
	if err := e.WaitForLeadership(ctxTimeout(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
}

// TestHandoverInProcess: two electors of one service; the follower sees the leader, and takes
// over at once when it resigns; forcing the seat makes the leader step down.
func TestHandoverInProcess(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	s := service(t)
	a := newElector(t, c, testConfig(s, "a"))
	if err := a.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	b := newElector(t, c, testConfig(s, "b"))
	bChanges := b.Changes()
	waitEvent(t, bChanges, slack, "b sees a", func(ev Event) bool { return ev.Kind == LeaderChanged && ev.LeaderID == "a" })
	if b.IsLeader() || b.Leader() != "a" || b.Term() != a.Term() {
		t.Fatalf("b: IsLeader %v, Leader %q, Term %d", b.IsLeader(), b.Leader(), b.Term())
	}
	st, err := b.State()
	if err != nil || st.IsLeader || st.LeaderID != "a" || !st.Campaigning || st.ValidFor != 0 {
		t.Fatalf("b.State = %+v, %v", st, err)
	}

	term := a.Term()
	start := time.Now()
	if ok, err := a.Resign(ctx); err != nil || !ok {
		t.Fatalf("Resign = %v, %v", ok, err)
	}
	ev, _ := waitEvent(t, bChanges, 200*time.Millisecond+slack, "b takes over", func(ev Event) bool { return ev.Kind == StartedLeading })
	if ev.Term != term+1 {
		t.Errorf("b leads term %d after a's term %d", ev.Term, term)
	}
	t.Logf("handover after Resign: %v", time.Since(start))

	// An operator forces a back in: b stops leading (lost_seat) at its next renew.
	if _, err := c.ForceLeader(ctx, s, "a", testLease); err != nil {
		t.Fatal(err)
	}
	ev, _ = waitEvent(t, bChanges, testLease/5+slack, "b stops leading", func(ev Event) bool { return ev.Kind == StoppedLeading })
	if ev.Reason != StopLostSeat || ev.Term != term+1 {
		t.Errorf("b stopped with %v", ev)
	}
	ev, _ = waitEvent(t, bChanges, slack, "b sees a again", func(ev Event) bool { return ev.Kind == LeaderChanged })
	if ev.LeaderID != "a" || ev.Term != term+2 {
		t.Errorf("b then saw %v", ev)
	}
}

func TestRunWhileLeader(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, 2*time.Minute)
	s := service(t)
	e := newElector(t, c, testConfig(s, "runner"))

	// 1. fn's result comes back when it finishes while leading; it waits for leadership first.
	var ran bool
	if err := e.RunWhileLeader(ctx, func(ctx context.Context) error {
		ran = e.IsLeader()
		return nil
	}); err != nil || !ran {
		t.Fatalf("RunWhileLeader = %v, ran as leader: %v", err, ran)
	}
	mine := errors.New("mine")
	if err := e.RunWhileLeader(ctx, func(context.Context) error { return mine }); err != mine {
		t.Fatalf("RunWhileLeader returned %v, want fn's error", err)
	}

	// 2. Forced out: fn's context ends at the next renew, with the reason.
	var cancelledAfter time.Duration
	var forcedAt time.Time
	err := e.RunWhileLeader(ctx, func(lctx context.Context) error {
		go func() {
			forcedAt = time.Now()
			if _, err := c.ForceLeader(ctx, s, "intruder", testLease); err != nil {
				t.Error(err)
			}
		}()
		<-lctx.Done()
		cancelledAfter = time.Since(forcedAt)
		return lctx.Err()
	})
	var lost *LeadershipLostError
	if !errors.As(err, &lost) || !errors.Is(err, ErrLeadershipLost) || lost.Reason != StopLostSeat || lost.Term != 1 {
		t.Fatalf("forced out: %v", err)
	}
	if cancelledAfter > testLease/5+slack {
		t.Errorf("fn's context ended %v after the seat was forced", cancelledAfter)
	}
	t.Logf("forced out: cancelled after %v", cancelledAfter)

	// 3. Resigning from inside fn: reason resigned.
	e2 := newElector(t, c, testConfig(service(t, "2"), "runner2"))
	err = e2.RunWhileLeader(ctx, func(lctx context.Context) error {
		if _, err := e2.Resign(ctx); err != nil {
			return err
		}
		select {
		case <-lctx.Done():
			return context.Cause(lctx)
		case <-time.After(slack):
			return errors.New("not cancelled after Resign")
		}
	})
	if !errors.As(err, &lost) || lost.Reason != StopResigned {
		t.Fatalf("resigned inside fn: %v", err)
	}
	if err := e2.RunWhileLeader(ctx, func(context.Context) error { return nil }); !errors.Is(err, ErrNotCampaigning) {
		t.Fatalf("RunWhileLeader after Resign = %v", err)
	}

	// 4. The caller's context ends: its error, not a lost leadership.
	e3 := newElector(t, c, testConfig(service(t, "3"), "runner3"))
	parent, cancel := context.WithCancel(ctx)
	err = e3.RunWhileLeader(parent, func(lctx context.Context) error {
		cancel()
		<-lctx.Done()
		return lctx.Err()
	})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrLeadershipLost) {
		t.Fatalf("parent cancelled: %v", err)
	}
	short, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	blocker := newElector(t, c, testConfig(service(t, "4"), "blocker"))
	if err := blocker.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	follower := newElector(t, c, testConfig(blocker.ServiceID(), "follower"))
	if err := follower.RunWhileLeader(short, func(context.Context) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting for leadership past the deadline: %v", err)
	}

	// 5. A panic in fn reaches the caller; the elector carries on.
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want boom", r)
			}
		}()
		_ = e3.RunWhileLeader(ctx, func(context.Context) error { panic("boom") })
	}()
	if err := e3.WaitForLeadership(ctx); err != nil || !e3.IsLeader() {
		t.Fatalf("after a panic in fn: %v", err)
	}
}

// TestRunWhileLeaderDeadline: with the database cut off, a leader stops at its local
// deadline; RunWhileLeader's timer ends fn's context by then even when no event arrives.
func TestRunWhileLeaderDeadline(t *testing.T) {
	ctx := ctxTimeout(t, time.Minute)
	p, url := newProxy(t, testURL)
	cut := openClient(t, url)
	e := newElector(t, cut, testConfig(service(t), "cut-off"))
	changes := e.Changes()
	e.h.events.suppressSubscribers.Store(true) // only the timer can end the run
	var deadline time.Time
	var endedAt time.Time
	err := e.RunWhileLeader(ctx, func(lctx context.Context) error {
		time.Sleep(100 * time.Millisecond)
		deadline = time.Now().Add(e.ValidFor())
		p.cutAll()
		<-lctx.Done()
		endedAt = time.Now()
		return nil
	})
	var lost *LeadershipLostError
	if !errors.As(err, &lost) || lost.Reason != StopDeadlinePassed {
		t.Fatalf("cut off: %v", err)
	}
	if e.IsLeader() {
		t.Error("still leader after the deadline")
	}
	if late := endedAt.Sub(deadline); late > slack {
		t.Errorf("fn's context ended %v after the local deadline", late)
	}
	t.Logf("ended %v after the local deadline (renewal deadline %v ahead at the cut)", endedAt.Sub(deadline), testLease)
	// The elector reports why it does not lead.
	eventually(t, slack, "a connection error in State", func() bool {
		st, _ := e.State()
		return errors.Is(st.LastCallError, ErrConnection)
	})
	st, _ := e.State()
	t.Logf("LastCallError: %v", st.LastCallError)
	// The elector itself reported the end of its leadership on the channel.
	ev, _ := waitEvent(t, changes, slack, "stopped leading", func(ev Event) bool { return ev.Kind == StoppedLeading })
	if ev.Reason != StopDeadlinePassed || ev.At.Sub(deadline) > slack {
		t.Errorf("%v at %v, the deadline was %v", ev, ev.At, deadline)
	}
}

// TestRunWhileLeaderTermEnd: the library says when and why the term ended
// (mysqlleader_elector_wait_term_end). An operator's force_leader through another client ends
// fn's context within a renew, with the library's reason; the run's fenced writes are refused
// from then on; a Close during fn ends it with StopShutdown.
func TestRunWhileLeaderTermEnd(t *testing.T) {
	ctx := ctxTimeout(t, 2*time.Minute)
	s := service(t)
	e := newElector(t, newClient(t), testConfig(s, "runner"))
	operator := openClient(t, testURL) // another client, as an operator's tool would be
	table := newTable(t, operator)

	// 1. Forced out by another client: fn's context ends, its cause and the returned error are
	//    the documented *LeadershipLostError, and a fenced write inside fn is refused after it.
	var term uint64
	var forcedAt time.Time
	var cancelledAfter time.Duration
	var writeAfter error
	err := e.RunWhileLeader(ctx, func(lctx context.Context) error {
		term = e.Term()
		if err := e.RunFencedTx(lctx, func(tx *Txn) error {
			_, err := tx.Exec(lctx, "INSERT INTO "+table+" (id, note) VALUES (1, 'before')")
			return err
		}); err != nil {
			return err
		}
		forcedAt = time.Now()
		if _, err := operator.ForceLeader(ctx, s, "operator-choice", testLease); err != nil {
			return err
		}
		<-lctx.Done()
		cancelledAfter = time.Since(forcedAt)
		var cause *LeadershipLostError
		if !errors.As(context.Cause(lctx), &cause) || cause.Reason != StopLostSeat || cause.Term != term {
			t.Errorf("fn's context cause = %v", context.Cause(lctx))
		}
		writeAfter = e.RunFencedTx(ctx, func(tx *Txn) error {
			_, err := tx.Exec(ctx, "INSERT INTO "+table+" (id, note) VALUES (2, 'after')")
			return err
		})
		return lctx.Err()
	})
	var lost *LeadershipLostError
	if !errors.As(err, &lost) || !errors.Is(err, ErrLeadershipLost) || lost.Reason != StopLostSeat || lost.Term != term {
		t.Fatalf("forced out by another client: RunWhileLeader = %v (term %d)", err, term)
	}
	if cancelledAfter > testLease/5+slack {
		t.Errorf("fn's context ended %v after the seat was forced", cancelledAfter)
	}
	if !errors.Is(writeAfter, ErrNotLeader) {
		t.Errorf("a fenced write after the context ended = %v, want ErrNotLeader", writeAfter)
	}
	if e.IsLeader() || e.Leader() != "operator-choice" {
		t.Errorf("after the force: leader %v, seen %q", e.IsLeader(), e.Leader())
	}
	tx, err := operator.BeginTx(ctx) // what committed: the write before the force, not the one after
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	before, err1 := tx.Exec(ctx, "UPDATE "+table+" SET flag = TRUE WHERE id = 1")
	after, err2 := tx.Exec(ctx, "UPDATE "+table+" SET flag = TRUE WHERE id = 2")
	if before != 1 || after != 0 || err1 != nil || err2 != nil {
		t.Errorf("rows found: before the force %d (%v), after it %d (%v); want 1 and 0", before, err1, after, err2)
	}
	t.Logf("forced out through another client: cancelled after %v", cancelledAfter)

	// 2. Closed during fn: the run ends with the reason shutdown.
	e2 := newElector(t, newClient(t), testConfig(service(t, "2"), "closer"))
	err = e2.RunWhileLeader(ctx, func(lctx context.Context) error {
		go e2.Close()
		select {
		case <-lctx.Done():
			return nil
		case <-time.After(slack):
			return errors.New("not cancelled after Close")
		}
	})
	if !errors.As(err, &lost) || lost.Reason != StopShutdown {
		t.Fatalf("closed inside fn: %v", err)
	}
}

func TestFencedTx(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	s := service(t)
	table := newTable(t, c)
	e := newElector(t, c, testConfig(s, "fencer"))
	if err := e.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	insert := "INSERT INTO " + table + " (id, note) VALUES (?, ?)"

	// RunFencedTx commits on nil, rolls back on an error or a panic.
	if err := e.RunFencedTx(ctx, func(tx *Txn) error {
		if tx.Term() != e.Term() {
			t.Errorf("Txn.Term %d, elector term %d", tx.Term(), e.Term())
		}
		_, err := tx.Exec(ctx, insert, 1, "committed")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	mine := errors.New("mine")
	if err := e.RunFencedTx(ctx, func(tx *Txn) error {
		if _, err := tx.Exec(ctx, insert, 2, "rolled back"); err != nil {
			return err
		}
		return mine
	}); err != mine {
		t.Fatalf("RunFencedTx = %v, want fn's error", err)
	}
	func() {
		defer func() { _ = recover() }()
		_ = e.RunFencedTx(ctx, func(tx *Txn) error {
			_, _ = tx.Exec(ctx, insert, 3, "panicked")
			panic("boom")
		})
	}()
	if rows(t, c, table, 1) != 1 || rows(t, c, table, 2) != 0 || rows(t, c, table, 3) != 0 {
		t.Fatal("RunFencedTx: the rows are not as expected")
	}

	// The fence: while a fenced transaction is open, a takeover waits for it to end.
	tx, err := e.BeginFencedTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	term := tx.Term()
	forced := make(chan CampaignResult, 1)
	go func() {
		r, err := c.ForceLeader(ctx, s, "usurper", testLease)
		if err != nil {
			t.Error(err)
		}
		forced <- r
	}()
	time.Sleep(500 * time.Millisecond)
	select {
	case r := <-forced:
		t.Fatalf("force_leader committed while a fenced transaction was open: %+v", r)
	default:
	}
	if _, err := tx.Exec(ctx, insert, 4, "fenced"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tx.Close()
	r := <-forced
	if r.Term != term+1 || r.LeaderID != "usurper" {
		t.Fatalf("force_leader after the commit: %+v", r)
	}
	// The old leader is out: no fenced transaction, with or without a round trip.
	eventually(t, testLease/5+slack, "the old leader steps down", func() bool { return !e.IsLeader() })
	_, err = e.BeginFencedTx(ctx)
	wantCode(t, err, CodeNotLeader, ErrNotLeader)
	err = e.RunFencedTx(ctx, func(*Txn) error { t.Error("fn ran without leadership"); return nil })
	wantCode(t, err, CodeNotLeader, ErrNotLeader)
	if rows(t, c, table, 4) != 1 {
		t.Fatal("the fenced write is missing")
	}
}

// TestBeginFencedTxRefusedStepsDown: the database refuses the term (an operator moved the seat
// while this elector's next renew is seconds away): BeginFencedTx answers ErrNotLeader with the
// current term, and the elector has stepped down when it returns (the core's fenced
// transaction tells its elector).
func TestBeginFencedTxRefusedStepsDown(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	s := service(t)
	config := testConfig(s, "r1")
	config.Lease = 20 * time.Second
	config.RenewInterval = 4 * time.Second
	config.RetryInterval = time.Second
	e := newElector(t, c, config)
	eventually(t, 2*time.Second+slack, "r1 leads", e.IsLeader)
	term := e.Term()
	if _, err := c.ForceLeader(ctx, s, "r2", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if !e.IsLeader() {
		t.Fatal("r1 stepped down before its next renew: the test cannot see the refusal's step-down")
	}
	tx, err := e.BeginFencedTx(ctx)
	if tx != nil {
		t.Fatal("a refused BeginFencedTx returned a transaction")
	}
	refused := wantCode(t, err, CodeNotLeader, ErrNotLeader)
	if refused != nil && refused.CurrentTerm != term+1 {
		t.Fatalf("CurrentTerm = %d, want %d", refused.CurrentTerm, term+1)
	}
	if e.IsLeader() {
		t.Fatal("the elector still reports leading right after the database refused its term")
	}
}

// TestElectorFinalizer: an elector nobody closes is closed by its finalizer, which resigns.
func TestElectorFinalizer(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	s := service(t)
	before := finalizedElectors.Load()
	func() {
		e, err := NewElector(c, testConfig(s, "forgotten"))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.WaitForLeadership(ctx); err != nil {
			t.Fatal(err)
		}
	}()
	eventually(t, 30*time.Second, "the finalizer runs", func() bool {
		runtime.GC()
		return finalizedElectors.Load() > before
	})
	eventually(t, slack, "the forgotten leader resigns", func() bool {
		cur, err := c.CurrentLeader(ctx, s)
		return err == nil && cur.LeaderID == ""
	})
}

// TestTrampolinePanic: a panic on the library's callback thread never reaches C; later events
// still arrive.
func TestTrampolinePanic(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	var panics atomic.Int32
	hook := func(ev Event) {
		if ev.Kind == LeaderChanged && ev.LeaderID == "panicky" {
			panics.Add(1)
			panic("a bug in an event handler")
		}
	}
	testHookEvent.Store(&hook)
	defer testHookEvent.Store(nil)
	e := newElector(t, c, testConfig(service(t), "panicky"))
	ev, _ := waitEvent(t, e.Changes(), slack, "started leading", func(ev Event) bool { return ev.Kind == StartedLeading })
	if panics.Load() != 1 || ev.LeaderID != "panicky" {
		t.Fatalf("panics %d, event %v", panics.Load(), ev)
	}
	if err := e.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestChangesNeverDrop: a reader that falls far behind loses nothing: every transition of a
// leader that is forced out and comes back many times arrives, in order.
func TestChangesNeverDrop(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, 2*time.Minute)
	s := service(t)
	cfg := testConfig(s, "flapper")
	cfg.Lease = 10 * time.Second
	cfg.RequestTimeout = 2 * time.Second
	e := newElector(t, c, cfg)
	changes := e.Changes() // but read only after Close
	if err := e.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	const rounds = 5
	for i := 0; i < rounds; i++ {
		if _, err := c.ForceLeader(ctx, s, "other", cfg.Lease); err != nil {
			t.Fatal(err)
		}
		eventually(t, cfg.Lease/5+slack, "steps down", func() bool { return !e.IsLeader() })
		if _, err := c.ForceLeader(ctx, s, "flapper", cfg.Lease); err != nil {
			t.Fatal(err)
		}
		eventually(t, cfg.Lease/5+slack, "leads again", func() bool { return e.IsLeader() })
	}
	e.Close()
	var events []Event
	for ev := range changes {
		events = append(events, ev)
	}
	checkStream(t, "flapper", events, cfg.Lease)
	var started, stopped int
	for _, ev := range events {
		switch ev.Kind {
		case StartedLeading:
			started++
		case StoppedLeading:
			stopped++
		}
	}
	if started != rounds+1 || stopped != rounds+1 {
		t.Fatalf("started %d, stopped %d times; want %d each: %v", started, stopped, rounds+1, events)
	}
}

func TestNewElectorWithANilClientIsANullArgument(t *testing.T) {
	_, err := NewElector(nil, ElectorConfig{ServiceID: "s"})
	if e := wantCode(t, err, CodeNullArgument, ErrNullArgument); e.Param != "client" {
		t.Errorf("Param = %q, want client", e.Param)
	}
}

func TestIsHealthyFollowsTheElector(t *testing.T) {
	c := newClient(t)
	e := newElector(t, c, testConfig(service(t), "healthy"))
	eventually(t, 10*time.Second, "healthy", e.IsHealthy)
	e.Close()
	if e.IsHealthy() {
		t.Fatal("a closed elector reports itself healthy")
	}
}

// metricSamples parses a Prometheus text exposition into its samples (name with labels ->
// value); every line must be a # HELP / # TYPE comment or a sample.
func metricSamples(t *testing.T, text string) map[string]float64 {
	t.Helper()
	samples := map[string]float64{}
	sample := regexp.MustCompile(`^([a-z_]+\{[^}]*\}) (\S+)$`)
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.HasPrefix(line, "# HELP ") || strings.HasPrefix(line, "# TYPE ") {
			continue
		}
		m := sample.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("not a sample line: %q in\n%s", line, text)
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		samples[m[1]] = v
	}
	return samples
}

// MetricsText: the Prometheus text of the Rust library, through the C ABI, of a leader, a
// follower, a resigned node and the one that took over; ErrClosed after Close.
func TestMetricsText(t *testing.T) {
	c := newClient(t)
	s := service(t)
	ctx := ctxTimeout(t, time.Minute)
	name := `name="` + s + `"`
	metrics := func(e *Elector) (string, map[string]float64) {
		t.Helper()
		text, err := e.MetricsText()
		if err != nil {
			t.Fatalf("MetricsText: %v", err)
		}
		return text, metricSamples(t, text)
	}
	a := newElector(t, c, testConfig(s, "a"))
	if err := a.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	text, m := metrics(a)
	if !strings.HasPrefix(text, "# HELP leader_election_master_status ") || !strings.HasSuffix(text, "\n") ||
		!strings.Contains(text, "\nleader_election_master_status{"+name+"} 1\n") ||
		!strings.Contains(text, "\n# TYPE mysqlleader_campaign_duration_seconds histogram\n") {
		t.Fatalf("the leader's metrics:\n%s", text)
	}
	count := m["mysqlleader_campaign_duration_seconds_count{"+name+"}"]
	if m["mysqlleader_term{"+name+"}"] != 1 || m["mysqlleader_leadership_transitions_total{"+name+"}"] != 1 ||
		m["mysqlleader_campaign_errors_total{"+name+"}"] != 0 || count < 1 ||
		m[`mysqlleader_campaign_duration_seconds_bucket{`+name+`,le="+Inf"}`] != count ||
		m["mysqlleader_campaign_duration_seconds_sum{"+name+"}"] <= 0 {
		t.Fatalf("the leader's metrics:\n%s", text)
	}

	b := newElector(t, c, testConfig(s, "b"))
	eventually(t, slack, "b sees a lead", func() bool { return b.Leader() == "a" })
	if text, m := metrics(b); m["leader_election_master_status{"+name+"}"] != 0 || m["mysqlleader_term{"+name+"}"] != 1 ||
		m["mysqlleader_leadership_transitions_total{"+name+"}"] != 0 || m["mysqlleader_campaign_duration_seconds_count{"+name+"}"] < 1 {
		t.Fatalf("the follower's metrics:\n%s", text)
	}
	if resigned, err := a.Resign(ctx); err != nil || !resigned {
		t.Fatalf("Resign = %v, %v", resigned, err)
	}
	if text, m := metrics(a); m["leader_election_master_status{"+name+"}"] != 0 || m["mysqlleader_leadership_transitions_total{"+name+"}"] != 2 {
		t.Fatalf("the resigned node's metrics:\n%s", text)
	}
	if err := b.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	if text, m := metrics(b); m["leader_election_master_status{"+name+"}"] != 1 || m["mysqlleader_term{"+name+"}"] != 2 ||
		m["mysqlleader_leadership_transitions_total{"+name+"}"] != 1 {
		t.Fatalf("the new leader's metrics:\n%s", text)
	}
	a.Close()
	if text, err := a.MetricsText(); text != "" || !errors.Is(err, ErrClosed) {
		t.Fatalf("MetricsText after Close = %q, %v; want ErrClosed", text, err)
	}
}

// Failed campaign calls (an unreachable server) are counted.
func TestMetricsCountCampaignErrors(t *testing.T) {
	dead := openClient(t, "mysql://app:hunter2@127.0.0.1:1/db")
	s := service(t)
	cfg := testConfig(s, "lonely")
	cfg.Lease = time.Second
	cfg.RequestTimeout = 0
	e := newElector(t, dead, cfg)
	key := `mysqlleader_campaign_errors_total{name="` + s + `"}`
	eventually(t, 10*time.Second, "two failed campaign calls", func() bool {
		text, err := e.MetricsText()
		return err == nil && metricSamples(t, text)[key] >= 2
	})
	text, _ := e.MetricsText()
	m := metricSamples(t, text)
	if m[`leader_election_master_status{name="`+s+`"}`] != 0 || m[`mysqlleader_campaign_duration_seconds_count{name="`+s+`"}`] < m[key] {
		t.Fatalf("metrics of an elector whose server is unreachable:\n%s", text)
	}
}
