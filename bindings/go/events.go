package mysqlleader

// This file holds the //export trampoline, so its C preamble may only declare (cgo copies it
// into two C files); the C shim that calls the trampoline is defined in elector.go.

// #include "mysqlleader.h"
import "C"

import (
	"fmt"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"time"
)

// EventKind tells what happened (mysqlleader_event_kind).
type EventKind uint32

// The kinds of leadership change (StartedLeading, StoppedLeading, LeaderChanged, EventsMissed,
// ElectorStopped, Failing) are in constants.go, generated from the header.

// String returns "started_leading", "stopped_leading", "leader_changed" or "events_missed".
func (k EventKind) String() string {
	switch k {
	case StartedLeading:
		return "started_leading"
	case StoppedLeading:
		return "stopped_leading"
	case LeaderChanged:
		return "leader_changed"
	case EventsMissed:
		return "events_missed"
	case ElectorStopped:
		return "elector_stopped"
	case Failing:
		return "failing"
	}
	return fmt.Sprintf("EventKind(%d)", uint32(k))
}

// StopReason tells why a node stopped leading (mysqlleader_stop_reason).
type StopReason uint32

// The reasons (StopNone, StopLostSeat, ...) are in constants.go, generated from the header.

// String returns the library's name of the reason: "none", "lost_seat", "deadline_passed",
// "resigned", "shutdown", "failed", "handed_over", or "unknown".
func (r StopReason) String() string {
	return C.GoString(C.mysqlleader_stop_reason_name(C.uint32_t(r)))
}

// Event is one leadership change as this node observed it. Events arrive in the order the
// node observed them.
type Event struct {
	Kind     EventKind
	Term     uint64        // the term the event is about
	Reason   StopReason    // for StoppedLeading; StopNone otherwise
	LeaderID string        // StartedLeading: this node; LeaderChanged: the new leader, "" for a vacant seat
	ValidFor time.Duration // for StartedLeading
	Missed   uint64        // for EventsMissed
	Code     Code          // for Failing: the error class of the failing calls (CodeAuthentication, ...)
	At       time.Time     // when the event reached this package (local clock)
}

// String describes the event in a line, e.g. "stopped_leading term=4 reason=resigned".
func (ev Event) String() string {
	switch ev.Kind {
	case StartedLeading:
		return fmt.Sprintf("%s term=%d leader=%q valid_for=%v", ev.Kind, ev.Term, ev.LeaderID, ev.ValidFor)
	case StoppedLeading:
		return fmt.Sprintf("%s term=%d reason=%s", ev.Kind, ev.Term, ev.Reason)
	case LeaderChanged:
		return fmt.Sprintf("%s term=%d leader=%q", ev.Kind, ev.Term, ev.LeaderID)
	case EventsMissed:
		return fmt.Sprintf("%s missed=%d", ev.Kind, ev.Missed)
	}
	return fmt.Sprintf("%s term=%d", ev.Kind, ev.Term)
}

// testHookEvent, when set by a test, runs in the trampoline before an event is queued.
var testHookEvent atomic.Pointer[func(Event)]

// mysqlleaderGoEvent is the trampoline the library calls on an elector's callback thread
// (through mysqlleader_go_on_event in elector.go). userdata is a cgo.Handle of the elector's
// eventQueue: an integer, never a Go pointer. It never blocks (the queue is unbounded) and no
// panic leaves it, since a panic cannot unwind through C.
//
//export mysqlleaderGoEvent
func mysqlleaderGoEvent(userdata C.uintptr_t, event *C.mysqlleader_event) {
	defer func() { _ = recover() }()
	ev := Event{
		Kind:     EventKind(event.kind),
		Term:     uint64(event.term),
		Reason:   StopReason(event.reason),
		ValidFor: duration(event.valid_for_ms),
		Missed:   uint64(event.missed),
		Code:     Code(event.result),
		At:       time.Now(),
	}
	if event.leader_id != nil {
		ev.LeaderID = C.GoString(event.leader_id)
	}
	q, ok := cgo.Handle(userdata).Value().(*eventQueue)
	if !ok {
		return
	}
	if hook := testHookEvent.Load(); hook != nil {
		(*hook)(ev) // a test's panic here is recovered above, and this event is lost
	}
	q.push(ev)
}

// eventQueue takes events off the library's callback thread and hands them to the Changes
// channel in order, without limit and without ever dropping one: push never blocks.
type eventQueue struct {
	mu      sync.Mutex
	pending []Event
	closed  bool
	// changed is closed and replaced at every event (and by notify): a broadcast to waiters.
	changed chan struct{}
	subs    map[uint64]func(Event)
	nextSub uint64

	wake    chan struct{} // capacity 1: wakes the pump
	out     chan Event    // Changes()
	watched atomic.Bool   // Changes() has been called
	abandon chan struct{} // closed at close when nobody ever called Changes(): drop the rest

	suppressSubscribers atomic.Bool // tests: deliver to the channel only
}

func newEventQueue() *eventQueue {
	q := &eventQueue{
		changed: make(chan struct{}),
		subs:    map[uint64]func(Event){},
		wake:    make(chan struct{}, 1),
		out:     make(chan Event),
		abandon: make(chan struct{}),
	}
	go q.pump()
	return q
}

// push queues an event; it runs on the library's callback thread and never blocks.
func (q *eventQueue) push(ev Event) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.pending = append(q.pending, ev)
	var subs []func(Event)
	if !q.suppressSubscribers.Load() {
		for _, f := range q.subs {
			subs = append(subs, f)
		}
	}
	close(q.changed)
	q.changed = make(chan struct{})
	q.mu.Unlock()
	for _, f := range subs {
		f(ev) // non-blocking by contract (they cancel contexts)
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// notify wakes the waiters without an event (e.g. after Resign, which may change the state
// without one).
func (q *eventQueue) notify() {
	q.mu.Lock()
	close(q.changed)
	q.changed = make(chan struct{})
	q.mu.Unlock()
}

// changedChan returns the channel that is closed at the next event or notify.
func (q *eventQueue) changedChan() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.changed
}

// subscribe registers f to be called with every event from now on, on the library's callback
// thread; f must not block. It returns the function that unsubscribes.
func (q *eventQueue) subscribe(f func(Event)) func() {
	q.mu.Lock()
	defer q.mu.Unlock()
	id := q.nextSub
	q.nextSub++
	q.subs[id] = f
	return func() {
		q.mu.Lock()
		delete(q.subs, id)
		q.mu.Unlock()
	}
}

// channel returns the Changes channel and remembers that somebody reads it.
func (q *eventQueue) channel() <-chan Event {
	q.watched.Store(true)
	return q.out
}

// close ends the queue after the last event: the pump delivers what is pending (or drops it
// when nobody ever called Changes) and then closes the channel.
func (q *eventQueue) close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	close(q.changed)
	q.changed = make(chan struct{})
	q.mu.Unlock()
	if !q.watched.Load() {
		close(q.abandon)
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// pump moves events from the queue to the channel, one at a time, in order.
func (q *eventQueue) pump() {
	defer close(q.out)
	for {
		q.mu.Lock()
		for len(q.pending) == 0 && !q.closed {
			q.mu.Unlock()
			<-q.wake
			q.mu.Lock()
		}
		if len(q.pending) == 0 {
			q.mu.Unlock()
			return
		}
		ev := q.pending[0]
		q.pending[0] = Event{}
		q.pending = q.pending[1:]
		if len(q.pending) == 0 {
			q.pending = nil // let the backing array go
		}
		q.mu.Unlock()
		select {
		case q.out <- ev:
		case <-q.abandon:
			return
		}
	}
}
