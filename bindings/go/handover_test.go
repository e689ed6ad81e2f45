package mysqlleader

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Handover (the contract's "Handover"): the leader's own Elector.Handover, and an operator's
// Client.Handover. Followers here poll only every 5 s, so a new leader within 3 s was woken
// (the leader's wake-up lock), not polled. Timings are logged, never asserted tightly.

const (
	slowPoll = 5 * time.Second
	woken    = 3 * time.Second // far below slowPoll
)

func slowPollConfig(service, node string, lease, renew time.Duration) ElectorConfig {
	return ElectorConfig{
		ServiceID:      service,
		NodeID:         node,
		Lease:          lease,
		RenewInterval:  renew,
		RetryInterval:  slowPoll,
		NoJitter:       true,
		RequestTimeout: time.Second,
	}
}

func TestElectorHandover(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	s := service(t)
	a := newElector(t, c, slowPollConfig(s, "a", 20*time.Second, 0))
	aChanges := a.Changes()
	if err := a.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	b := newElector(t, c, slowPollConfig(s, "b", 20*time.Second, 0))
	bChanges := b.Changes()
	waitEvent(t, bChanges, slack, "b sees a", func(ev Event) bool { return ev.Kind == LeaderChanged && ev.LeaderID == "a" })
	time.Sleep(500 * time.Millisecond) // b waits on a's wake-up lock

	term := a.Term()
	start := time.Now()
	led, err := a.Handover(ctx, "b")
	if err != nil || !led {
		t.Fatalf("a.Handover(b) = %v, %v; want true, nil", led, err)
	}
	if a.IsLeader() {
		t.Fatal("a still leads after Handover returned")
	}
	if err := b.WaitForLeadership(ctxTimeout(t, slack+slowPoll)); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("leader-initiated handover a -> b: b leads after %v (followers poll every %v)", took, slowPoll)
	if took > woken {
		t.Errorf("b led only after %v: it was not woken", took)
	}
	if b.Term() != term+1 || b.Leader() != "b" {
		t.Errorf("b: Term %d, Leader %q; want %d, b", b.Term(), b.Leader(), term+1)
	}
	ev, _ := waitEvent(t, aChanges, slack, "a stops leading", func(ev Event) bool { return ev.Kind == StoppedLeading })
	if ev.Reason != StopHandedOver || ev.Term != term || ev.Reason.String() != "handed_over" {
		t.Errorf("a stopped with %v; want reason handed_over at term %d", ev, term)
	}
	if st, err := a.State(); err != nil || !st.Campaigning {
		t.Errorf("a goes on as a follower: State = %+v, %v", st, err)
	}
	if n := historyCount(t, c, "WHERE service_id = ? AND term = ? AND leader_id = 'a' AND ended_how = 'handed_over'", s, term); n != 1 {
		t.Errorf("the history has %d rows of term %d ended handed_over by a", n, term)
	}
	// A follower's handover changes nothing. The node that handed over looks at the seat again
	// after its retry interval (the reservation keeps it out meanwhile), unless the wake-up lock
	// happens to be free when it looks (b passes it on as it wakes, then takes it again): by then
	// at the latest it sees b.
	eventually(t, slack+slowPoll, "a sees b", func() bool { return a.Leader() == "b" })
	if led, err := a.Handover(ctx, "b"); err != nil || led {
		t.Errorf("a follower's Handover = %v, %v; want false, nil", led, err)
	}
	// A handover to itself is refused, naming to_node; the leader stays.
	_, err = b.Handover(ctx, "b")
	var e *Error
	if !errors.Is(err, ErrInvalidArgument) || !errors.As(err, &e) || e.Param != "to_node" || !strings.Contains(err.Error(), "to_node") {
		t.Fatalf("b.Handover(b) = %v; want ErrInvalidArgument naming to_node", err)
	}
	if !b.IsLeader() || b.Term() != term+1 {
		t.Error("a refused handover changed the leader")
	}
	// A NUL in the name is refused before the call.
	if _, err := b.Handover(ctx, "x\x00y"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Handover with a NUL = %v", err)
	}
}

func TestClientHandover(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)

	// The bare calls: a leads; the seat is reserved for b; c cannot take it; b can.
	s := service(t, "calls")
	if r, err := c.Campaign(ctx, s, "a", 20*time.Second); err != nil || !r.IsLeader {
		t.Fatalf("Campaign(a) = %+v, %v", r, err)
	}
	seat, err := c.Handover(ctx, s, "b")
	if err != nil || seat.IsLeader || seat.LeaderID != "" {
		t.Fatalf("Handover(b) = %+v, %v; want a vacant seat", seat, err)
	}
	if r, err := c.AmILeader(ctx, s, "a"); err != nil || r.IsLeader {
		t.Fatalf("AmILeader(a) after the handover = %+v, %v", r, err)
	}
	// b may take the seat once the displaced leader has acknowledged the handover with a
	// resign, sent once it stopped acting as leader (or once its lease has run out): before, b
	// waits. a's campaign (its renew, whose answer could still be on its way) is no
	// acknowledgement.
	if r, err := c.Campaign(ctx, s, "b", 20*time.Second); err != nil || r.IsLeader {
		t.Fatalf("Campaign(b) before a's acknowledgement = %+v, %v; b waits for it", r, err)
	}
	if r, err := c.Campaign(ctx, s, "a", 20*time.Second); err != nil || r.IsLeader {
		t.Fatalf("Campaign(a) = %+v, %v; a's renew sees the handover", r, err)
	}
	if r, err := c.Campaign(ctx, s, "b", 20*time.Second); err != nil || r.IsLeader {
		t.Fatalf("Campaign(b) after a's renew = %+v, %v; a renew is no acknowledgement", r, err)
	}
	if r, err := c.Resign(ctx, s, "a"); err != nil || r.Resigned || r.Term != 1 {
		t.Fatalf("Resign(a) = %+v, %v; want the acknowledgement (no lease ended, term 1)", r, err)
	}
	if r, err := c.Campaign(ctx, s, "c", 20*time.Second); err != nil || r.IsLeader {
		t.Fatalf("Campaign(c) = %+v, %v; the seat is reserved for b", r, err)
	}
	if r, err := c.Campaign(ctx, s, "b", 20*time.Second); err != nil || !r.IsLeader || r.Term != 2 {
		t.Fatalf("Campaign(b) = %+v, %v; want b leading term 2", r, err)
	}
	if n := historyCount(t, c, "WHERE service_id = ? AND term = 1 AND ended_how = 'handed_over'", s); n != 1 {
		t.Errorf("term 1 did not end handed_over")
	}
	// Nothing changes when to_node leads already.
	if r, err := c.Handover(ctx, s, "b"); err != nil || !r.IsLeader || r.LeaderID != "b" || r.Term != 2 {
		t.Errorf("Handover to the leader = %+v, %v", r, err)
	}

	// With electors: the leader learns at its next renew, and b is woken.
	s = service(t, "electors")
	a := newElector(t, c, slowPollConfig(s, "a", 6*time.Second, 500*time.Millisecond))
	aChanges := a.Changes()
	if err := a.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	b := newElector(t, c, slowPollConfig(s, "b", 6*time.Second, 500*time.Millisecond))
	eventually(t, slack, "b sees a", func() bool { return b.Leader() == "a" })
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	if seat, err := c.Handover(ctx, s, "b"); err != nil || seat.IsLeader {
		t.Fatalf("Handover(b) = %+v, %v", seat, err)
	}
	if r, err := c.AmILeader(ctx, s, "a"); err != nil || r.IsLeader {
		t.Fatalf("AmILeader(a) after the handover = %+v, %v", r, err)
	}
	if err := b.WaitForLeadership(ctxTimeout(t, slack+slowPoll)); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("operator-initiated handover a -> b: b leads after %v (a renews every 500ms)", took)
	if took > woken {
		t.Errorf("b led only after %v: it was not woken", took)
	}
	ev, _ := waitEvent(t, aChanges, slack, "a stops leading", func(ev Event) bool { return ev.Kind == StoppedLeading })
	if ev.Reason != StopHandedOver {
		t.Errorf("a stopped with %v; want handed_over", ev)
	}
}
