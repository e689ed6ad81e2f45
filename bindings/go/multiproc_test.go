package mysqlleader

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Three electors in three processes: the test binary re-executes itself as a helper (TestMain
// sees helperEnv) that runs one elector, prints each event as a JSON line, and obeys "resign"
// and "close" on its standard input.

const helperEnv = "MYSQLLEADER_GO_TEST_HELPER"

type helperLine struct {
	Kind     string `json:"kind"` // an EventKind's name, or ready / resigned / closed / error
	Term     uint64 `json:"term,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Leader   string `json:"leader,omitempty"`
	ValidFor int64  `json:"valid_for_ms,omitempty"`
	OK       bool   `json:"ok,omitempty"`
	Error    string `json:"error,omitempty"`
}

// helperMain is the helper process: one elector of MLGO_SERVICE as MLGO_NODE on MLGO_URL.
func helperMain() int {
	var mu sync.Mutex
	enc := json.NewEncoder(os.Stdout)
	emit := func(l helperLine) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(l)
	}
	fail := func(err error) int {
		emit(helperLine{Kind: "error", Error: err.Error()})
		return 1
	}
	leaseMs, _ := strconv.Atoi(os.Getenv("MLGO_LEASE_MS"))
	client, err := Open(os.Getenv("MLGO_URL"))
	if err != nil {
		return fail(err)
	}
	defer client.Close()
	config := testConfig(os.Getenv("MLGO_SERVICE"), os.Getenv("MLGO_NODE"))
	config.Lease = time.Duration(leaseMs) * time.Millisecond
	e, err := NewElector(client, config)
	if err != nil {
		return fail(err)
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for ev := range e.Changes() {
			emit(helperLine{Kind: ev.Kind.String(), Term: ev.Term, Reason: ev.Reason.String(), Leader: ev.LeaderID, ValidFor: ev.ValidFor.Milliseconds()})
		}
	}()
	emit(helperLine{Kind: "ready"})
	commands := bufio.NewScanner(os.Stdin)
	for commands.Scan() {
		switch commands.Text() {
		case "resign":
			ok, err := e.Resign(context.Background())
			l := helperLine{Kind: "resigned", OK: ok}
			if err != nil {
				l.Error = err.Error()
			}
			emit(l)
		case "close":
			e.Close()
			<-drained
			emit(helperLine{Kind: "closed"})
			return 0
		}
	}
	e.Close() // standard input closed: the parent is gone
	return 0
}

// helper is the parent's handle of one helper process: its lines, stamped when they arrived.
type helper struct {
	node  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	lines []stampedLine
}

type stampedLine struct {
	helperLine
	at time.Time
}

func startHelper(t *testing.T, url, service, node string, lease time.Duration) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1", "MLGO_URL="+url, "MLGO_SERVICE="+service,
		"MLGO_NODE="+node, "MLGO_LEASE_MS="+strconv.FormatInt(lease.Milliseconds(), 10))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{node: node, cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	go func() {
		for text := range linesOf(stdout) {
			var l helperLine
			if err := json.Unmarshal([]byte(text), &l); err != nil {
				l = helperLine{Kind: "error", Error: "unparsable line: " + text}
			}
			h.mu.Lock()
			h.lines = append(h.lines, stampedLine{l, time.Now()})
			h.mu.Unlock()
		}
	}()
	return h
}

func (h *helper) send(t *testing.T, command string) {
	t.Helper()
	if _, err := fmt.Fprintln(h.stdin, command); err != nil {
		t.Fatalf("%s: %v", h.node, err)
	}
}

// find returns the first line at index from or later that satisfies match.
func (h *helper) find(from int, match func(helperLine) bool) (stampedLine, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := from; i < len(h.lines); i++ {
		if match(h.lines[i].helperLine) {
			return h.lines[i], true
		}
	}
	return stampedLine{}, false
}

// has tells whether the helper has printed a line that satisfies match.
func (h *helper) has(match func(helperLine) bool) bool {
	_, ok := h.find(0, match)
	return ok
}

// count is the number of lines so far.
func (h *helper) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.lines)
}

// failed returns a helper's error line, if any.
func (h *helper) failed() string {
	l, ok := h.find(0, func(l helperLine) bool { return l.Kind == "error" })
	if ok {
		return l.Error
	}
	return ""
}

// events returns the helper's leadership events so far.
func (h *helper) events() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	kinds := map[string]EventKind{"started_leading": StartedLeading, "stopped_leading": StoppedLeading,
		"leader_changed": LeaderChanged, "events_missed": EventsMissed}
	reasons := map[string]StopReason{"none": StopNone, "lost_seat": StopLostSeat,
		"deadline_passed": StopDeadlinePassed, "resigned": StopResigned, "shutdown": StopShutdown}
	var out []Event
	for _, l := range h.lines {
		if k, ok := kinds[l.Kind]; ok {
			out = append(out, Event{Kind: k, Term: l.Term, Reason: reasons[l.Reason], LeaderID: l.Leader,
				ValidFor: time.Duration(l.ValidFor) * time.Millisecond, At: l.at})
		}
	}
	return out
}

// awaitHelpers polls the helpers until found returns a helper and its line, failing after
// limit or when a helper reports an error.
func awaitHelpers(t *testing.T, helpers []*helper, limit time.Duration, what string, found func() (*helper, stampedLine, bool)) (*helper, stampedLine) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		for _, h := range helpers {
			if msg := h.failed(); msg != "" {
				t.Fatalf("%s: helper %s: %s", what, h.node, msg)
			}
		}
		if h, l, ok := found(); ok {
			return h, l
		}
		if time.Now().After(deadline) {
			for _, h := range helpers {
				t.Logf("%s: %v", h.node, h.events())
			}
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startedSince finds a started_leading line of any helper but the excluded ones, after the
// line counts in from.
func startedSince(helpers []*helper, from map[*helper]int, exclude ...*helper) func() (*helper, stampedLine, bool) {
	return func() (*helper, stampedLine, bool) {
	next:
		for _, h := range helpers {
			for _, x := range exclude {
				if h == x {
					continue next
				}
			}
			if l, ok := h.find(from[h], func(l helperLine) bool { return l.Kind == "started_leading" }); ok {
				return h, l, true
			}
		}
		return nil, stampedLine{}, false
	}
}

// counts returns every helper's current line count.
func counts(helpers []*helper) map[*helper]int {
	m := map[*helper]int{}
	for _, h := range helpers {
		m[h] = h.count()
	}
	return m
}

// historyCount counts rows h of the history that a join and condition select (a DELETE
// rolled back: Exec reports the rows it changed).
func historyCount(t *testing.T, c *Client, cond string, args ...any) int64 {
	t.Helper()
	ctx := ctxTimeout(t, time.Minute)
	tx, err := c.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	n, err := tx.Exec(ctx, "DELETE h FROM leader_election_history h "+cond, args...)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestThreeProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three processes")
	}
	c := newClient(t)
	ctx := ctxTimeout(t, 2*time.Minute)
	s := service(t)
	lease := testLease
	retry := lease / 10 // the default retry interval
	var helpers []*helper
	for _, node := range []string{"p1", "p2", "p3"} {
		helpers = append(helpers, startHelper(t, testURL, s, node, lease))
	}
	awaitHelpers(t, helpers, 30*time.Second, "three helpers ready", func() (*helper, stampedLine, bool) {
		for _, h := range helpers {
			if !h.has(func(l helperLine) bool { return l.Kind == "ready" }) {
				return nil, stampedLine{}, false
			}
		}
		return nil, stampedLine{}, true
	})

	// 1. One leads; the others see it, and nobody else starts leading meanwhile.
	leader1, first := awaitHelpers(t, helpers, lease+slack, "a first leader", startedSince(helpers, nil))
	term1 := first.Term
	t.Logf("%s leads term %d", leader1.node, term1)
	awaitHelpers(t, helpers, retry+slack, "the followers see the leader", func() (*helper, stampedLine, bool) {
		for _, h := range helpers {
			if h != leader1 && !h.has(func(l helperLine) bool {
				return l.Kind == "leader_changed" && l.Leader == leader1.node && l.Term == term1
			}) {
				return nil, stampedLine{}, false
			}
		}
		return nil, stampedLine{}, true
	})
	time.Sleep(2 * lease / 5) // two renews
	if h, l, ok := startedSince(helpers, nil, leader1)(); ok {
		t.Fatalf("%s started leading term %d while %s leads term %d", h.node, l.Term, leader1.node, term1)
	}
	cur, err := c.CurrentLeader(ctx, s)
	if err != nil || cur.LeaderID != leader1.node || cur.Term != term1 {
		t.Fatalf("CurrentLeader = %+v, %v", cur, err)
	}

	// 2. SIGKILL the leader: another takes over within one lease plus one retry, at term + 1.
	before := counts(helpers)
	if err := leader1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	leader2, second := awaitHelpers(t, helpers, lease+retry+slack, "a leader after the kill", startedSince(helpers, before, leader1))
	term2 := second.Term
	failover := second.at.Sub(killedAt)
	t.Logf("%s leads term %d, %v after the kill (lease %v, retry %v)", leader2.node, term2, failover, lease, retry)
	if term2 != term1+1 {
		t.Errorf("term %d after term %d", term2, term1)
	}
	if failover > lease+retry+slack {
		t.Errorf("failover took %v", failover)
	}
	if _, ok := leader1.find(before[leader1], func(l helperLine) bool { return l.Kind == "started_leading" }); ok {
		t.Errorf("the killed process reported leadership")
	}

	// 3. Resign: the third takes over within one retry interval (followers are woken at once).
	var third *helper
	for _, h := range helpers {
		if h != leader1 && h != leader2 {
			third = h
		}
	}
	before = counts(helpers)
	leader2.send(t, "resign")
	resignedAt := time.Now()
	next, handover := awaitHelpers(t, helpers, retry+slack, "a leader after the resign", startedSince(helpers, before, leader1))
	took := handover.at.Sub(resignedAt)
	t.Logf("%s leads term %d, %v after %s resigned", next.node, handover.Term, took, leader2.node)
	if next != third {
		t.Fatalf("%s started leading after %s resigned; want %s", next.node, leader2.node, third.node)
	}
	if handover.Term != term2+1 {
		t.Errorf("term %d after term %d", handover.Term, term2)
	}
	if took > retry+slack {
		t.Errorf("the handover after Resign took %v", took)
	}
	awaitHelpers(t, helpers, slack, "the resign reply and the new leader seen", func() (*helper, stampedLine, bool) {
		l, ok := leader2.find(0, func(l helperLine) bool { return l.Kind == "resigned" })
		seen := leader2.has(func(l helperLine) bool {
			return l.Kind == "leader_changed" && l.Leader == third.node && l.Term == term2+1
		})
		return leader2, l, ok && seen
	})
	if !leader2.has(func(l helperLine) bool { return l.Kind == "resigned" && l.OK && l.Error == "" }) {
		t.Errorf("%s: Resign did not report that it held the seat", leader2.node)
	}

	// 4. Close the others and check every stream: each transition once, in order.
	for _, h := range []*helper{leader2, third} {
		h.send(t, "close")
	}
	awaitHelpers(t, helpers, slack+2*time.Second, "the helpers close", func() (*helper, stampedLine, bool) {
		closed := func(l helperLine) bool { return l.Kind == "closed" }
		return nil, stampedLine{}, leader2.has(closed) && third.has(closed)
	})
	for _, h := range []*helper{leader2, third} {
		if err := h.cmd.Wait(); err != nil {
			t.Errorf("%s: %v", h.node, err)
		}
	}
	count := func(h *helper, kind EventKind, term uint64, reason StopReason) int {
		n := 0
		for _, ev := range h.events() {
			if ev.Kind == kind && ev.Term == term && (kind != StoppedLeading || ev.Reason == reason) {
				n++
			}
		}
		return n
	}
	for _, h := range helpers {
		t.Logf("%s: %v", h.node, h.events())
		checkStream(t, h.node, h.events(), lease)
	}
	if count(leader1, StartedLeading, term1, 0) != 1 {
		t.Errorf("%s did not report starting term %d exactly once", leader1.node, term1)
	}
	if count(leader2, StartedLeading, term2, 0) != 1 || count(leader2, StoppedLeading, term2, StopResigned) != 1 {
		t.Errorf("%s: not exactly one start and one resign of term %d", leader2.node, term2)
	}
	if count(third, StartedLeading, term2+1, 0) != 1 || count(third, StoppedLeading, term2+1, StopShutdown) != 1 {
		t.Errorf("%s: not exactly one start and one shutdown of term %d", third.node, term2+1)
	}

	// 5. The database's history tells the same story, on its own clock: one leader per term,
	//    each term begun only after the previous one ended.
	for _, want := range []struct {
		term        uint64
		node, ended string
	}{{term1, leader1.node, "expired"}, {term2, leader2.node, "resigned"}, {term2 + 1, third.node, "resigned"}} {
		if n := historyCount(t, c, "WHERE service_id = ? AND term = ? AND leader_id = ? AND began_how = 'elected' AND ended_how = ?",
			s, want.term, want.node, want.ended); n != 1 {
			t.Errorf("history: term %d of %s ended %s: %d rows", want.term, want.node, want.ended, n)
		}
	}
	if n := historyCount(t, c, "JOIN leader_election_history p ON p.service_id = h.service_id AND p.term = h.term - 1 "+
		"WHERE h.service_id = ? AND (p.ended_at IS NULL OR p.ended_at > h.began_at)", s); n != 0 {
		t.Errorf("history: %d terms began before the previous one ended", n)
	}
}
