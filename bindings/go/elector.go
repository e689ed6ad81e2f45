package mysqlleader

// The C shim: the library calls mysqlleader_go_on_event with the userdata given to
// mysqlleader_elector_new (or mysqlleader_session_elector), here a cgo.Handle (an integer) carried in the void pointer, and it
// forwards to the Go trampoline in events.go.

/*
#include <stdlib.h>
#include "mysqlleader.h"

extern void mysqlleaderGoEvent(uintptr_t userdata, mysqlleader_event *event);

static void mysqlleader_go_on_event(void *userdata, const mysqlleader_event *event) {
	mysqlleaderGoEvent((uintptr_t)userdata, (mysqlleader_event *)event);
}

static mysqlleader_result mysqlleader_go_elector_new(const mysqlleader_client *client,
		const mysqlleader_elector_config *config, uintptr_t handle, mysqlleader_elector **out) {
	return mysqlleader_elector_new(client, config, mysqlleader_go_on_event, (void *)handle, out);
}

static mysqlleader_result mysqlleader_go_session_elector(const mysqlleader_session *session,
		const char *service_id, uintptr_t handle, mysqlleader_elector **out) {
	return mysqlleader_session_elector(session, service_id, mysqlleader_go_on_event, (void *)handle, out);
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// ElectorConfig says how an Elector takes part in the election. Zero means "the default"
// for every field but ServiceID. Every duration is whole milliseconds; the library checks
// the invariants (e.g. RenewInterval at most (Lease-DriftMargin)/3) and reports a violation as
// ErrInvalidArgument whose Param names the C field (config->renew_ms, ...).
type ElectorConfig struct {
	// ServiceID is the election group: 1 to 128 characters. Required.
	ServiceID string
	// NodeID is this node's name as others see it: 1 to 128 characters. Default
	// DefaultNodeID(), "hostname:pid".
	NodeID string
	// Lease is how long a lease lasts after each acquisition or renew, 100 ms to 24 h (an
	// elector refuses a shorter lease; the one-shot Client.Campaign takes one from 1 ms). It
	// bounds failover after a crash. Default 10 s.
	Lease time.Duration
	// RenewInterval is how often the leader renews. Default Lease/5; at most
	// (Lease-DriftMargin)/3.
	RenewInterval time.Duration
	// RetryInterval is the longest a follower waits between attempts. Default Lease/10; at
	// most Lease.
	RetryInterval time.Duration
	// RetryJitter shortens a follower's wait by a random part of up to this fraction (0 to
	// < 1). Default 0.2; set NoJitter for none.
	RetryJitter float64
	// NoJitter makes followers retry at exactly RetryInterval (RetryJitter must then be 0).
	NoJitter bool
	// RequestTimeout is the longest one call to the database may take. Default
	// min(Lease/5, 2 s); below Lease-DriftMargin.
	RequestTimeout time.Duration
	// DriftMargin is subtracted from every local deadline for clock-rate drift between this
	// host and the database server. Default Lease/100; below Lease.
	DriftMargin time.Duration
	// NoResignOnClose makes Close leave the lease to lapse instead of resigning (by default a
	// leader resigns on Close, so another node takes over at once).
	NoResignOnClose bool
	// Fallbacks are clients of more servers of one Galera cluster, tried in turn when a call
	// fails with a connection or cluster error.
	Fallbacks []*Client
}

// Elector is one node's part in the election of one service (mysqlleader_elector). It
// campaigns in the background from NewElector until Close: the leader renews its lease,
// followers retry. All methods are safe for concurrent use.
//
// IsLeader, Term, Leader, ValidFor and State answer from the elector's state without a round
// trip; IsLeader compares with the local deadline at the moment it is called. Changes delivers
// every leadership change in order.
type Elector struct {
	h *electorHandle
	// session is the Session that made this elector (nil for NewElector's): held so that the
	// session stays reachable, and its finalizer does not run, while one of its electors is.
	session *Session
}

type electorHandle struct {
	// mu: every call on ptr holds it for reading; Close holds it for writing, since
	// mysqlleader_elector_free must not race with other calls.
	mu        sync.RWMutex
	ptr       *C.mysqlleader_elector
	handle    cgo.Handle // of events, the callback's userdata
	events    *eventQueue
	nodeID    string
	serviceID string
	closeOnce sync.Once
	closed    chan struct{}
	// onClose, when set (an elector of a Session), runs once the elector is closed.
	onClose func()
}

// finalizedElectors counts electors closed by their finalizer (for the tests).
var finalizedElectors atomic.Int64

// NewElector makes an elector on client and starts it campaigning at once, in the background;
// it never blocks on the database. The elector keeps the connection pools of client and of the
// fallbacks open: they may be closed before it. Close the elector when done (a finalizer closes
// a forgotten one, resigning its lease).
func NewElector(client *Client, config ElectorConfig) (*Elector, error) {
	const op = "elector_new"
	if client == nil {
		return nil, &Error{Op: op, Code: CodeNullArgument, Param: "client", Message: "client must not be nil"}
	}
	// 1. What C cannot receive: NULs in strings, negative or fractional durations.
	if err := checkIDs(op, "ServiceID", config.ServiceID); err != nil {
		return nil, err
	}
	var cfg C.mysqlleader_elector_config
	if err := fillElectorConfig(op, config, &cfg); err != nil {
		return nil, err
	}

	// 2. The clients, held until the library has taken its own references to their pools.
	ptr, err := client.h.acquire(op)
	if err != nil {
		return nil, err
	}
	defer client.h.release()
	release, err := holdFallbacks(op, config.Fallbacks, &cfg)
	if err != nil {
		return nil, err
	}
	defer release()

	// 3. The elector.
	return startElector(op, config.ServiceID, func(userdata C.uintptr_t, out **C.mysqlleader_elector) C.mysqlleader_result {
		var cs cStrings
		defer cs.free()
		cfg.service_id = cs.add(config.ServiceID)
		if config.NodeID != "" {
			cfg.node_id = cs.add(config.NodeID)
		}
		return C.mysqlleader_go_elector_new(ptr, &cfg, userdata, out)
	})
}

// holdFallbacks sets cfg's fallback_clients to the pointers of fallbacks (in C memory), each
// client held (acquired) until release is called, which the caller does once the C call that
// takes them has returned (the library keeps its own references to their pools). A nil
// fallback is ErrInvalidArgument with Param "Fallbacks[i]"; a closed one ErrClosed. On error
// nothing is left held.
func holdFallbacks(op string, fallbacks []*Client, cfg *C.mysqlleader_elector_config) (release func(), err error) {
	n := len(fallbacks)
	if n == 0 {
		return func() {}, nil
	}
	mem := C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof((*C.mysqlleader_client)(nil))))
	slots := unsafe.Slice((**C.mysqlleader_client)(mem), n)
	held := make([]*Client, 0, n)
	release = func() {
		for _, f := range held {
			f.h.release()
		}
		C.free(mem)
	}
	for i, f := range fallbacks {
		if f == nil {
			release()
			return nil, invalidArg(op, fmt.Sprintf("Fallbacks[%d]", i), "fallback %d is a nil *Client", i)
		}
		fp, err := f.h.acquire(op)
		if err != nil {
			release()
			return nil, err
		}
		held = append(held, f)
		slots[i] = fp
	}
	cfg.fallback_clients = (**C.mysqlleader_client)(mem)
	cfg.fallback_client_count = C.size_t(n)
	return release, nil
}

// sessionElectorNew calls mysqlleader_session_elector with the trampoline (the C shims are
// static in this file's preamble, so Session.Elector calls them through here).
func sessionElectorNew(session *C.mysqlleader_session, serviceID *C.char, userdata C.uintptr_t, out **C.mysqlleader_elector) C.mysqlleader_result {
	return C.mysqlleader_go_session_elector(session, serviceID, userdata, out)
}

// fillElectorConfig checks what C cannot receive (a NUL in NodeID, negative or fractional
// durations) and sets the timing fields and flags of cfg from config. The strings (service_id,
// node_id) and the fallbacks are the caller's to set, within the call.
func fillElectorConfig(op string, config ElectorConfig, cfg *C.mysqlleader_elector_config) error {
	if err := checkIDs(op, "NodeID", config.NodeID); err != nil {
		return err
	}
	for _, d := range []struct {
		name  string
		value time.Duration
		out   *C.uint64_t
	}{
		{"Lease", config.Lease, &cfg.lease_ms},
		{"RenewInterval", config.RenewInterval, &cfg.renew_ms},
		{"RetryInterval", config.RetryInterval, &cfg.retry_ms},
		{"RequestTimeout", config.RequestTimeout, &cfg.request_timeout_ms},
		{"DriftMargin", config.DriftMargin, &cfg.drift_margin_ms},
	} {
		ms, err := millis(op, d.name, d.value)
		if err != nil {
			return err
		}
		*d.out = ms
	}
	cfg.retry_jitter = C.double(config.RetryJitter)
	if config.NoJitter {
		cfg.flags |= flagNoJitter
	}
	if config.NoResignOnClose {
		cfg.flags |= flagNoResignOnFree
	}
	return nil
}

// startElector turns a C constructor of an elector (mysqlleader_elector_new, or
// mysqlleader_session_elector) into an *Elector: start gets the userdata for the trampoline (a
// handle of the elector's event queue) and the out-pointer, and runs inside ccall. Both
// NewElector and Session.Elector end here, so the two kinds of elector are one type.
func startElector(op, serviceID string, start func(userdata C.uintptr_t, out **C.mysqlleader_elector) C.mysqlleader_result) (*Elector, error) {
	events := newEventQueue()
	handle := cgo.NewHandle(events)
	var elector *C.mysqlleader_elector
	err := ccall(op, func() C.mysqlleader_result { return start(C.uintptr_t(handle), &elector) })
	if err != nil {
		handle.Delete()
		events.close()
		return nil, err
	}
	h := &electorHandle{ptr: elector, handle: handle, events: events, serviceID: serviceID, closed: make(chan struct{})}
	h.nodeID, _ = h.copyString("elector_node_id", func(p *C.mysqlleader_elector, buf *C.char, n C.size_t, needed *C.size_t) C.mysqlleader_result {
		return C.mysqlleader_elector_node_id(p, buf, n, needed)
	})
	e := &Elector{h: h}
	runtime.SetFinalizer(e, func(e *Elector) {
		finalizedElectors.Add(1)
		go e.h.close()
	})
	return e, nil
}

// with runs f with the C pointer under the read lock; ErrClosed after Close.
func (h *electorHandle) with(op string, f func(p *C.mysqlleader_elector) error) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.ptr == nil {
		return closedError(op, "elector")
	}
	return f(h.ptr)
}

func (h *electorHandle) copyString(op string, call func(*C.mysqlleader_elector, *C.char, C.size_t, *C.size_t) C.mysqlleader_result) (string, error) {
	var s string
	err := h.with(op, func(p *C.mysqlleader_elector) error {
		return ccall(op, func() C.mysqlleader_result {
			var rc C.mysqlleader_result
			s, rc = copyOut(func(buf *C.char, n C.size_t, needed *C.size_t) C.mysqlleader_result {
				return call(p, buf, n, needed)
			})
			return rc
		})
	})
	return s, err
}

func (h *electorHandle) close() {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		p := h.ptr
		h.ptr = nil
		if p != nil {
			// Resigns (unless NoResignOnClose) and delivers the last events before it returns;
			// no callback runs after it.
			C.mysqlleader_elector_free(p)
		}
		h.mu.Unlock()
		h.handle.Delete()
		h.events.close()
		close(h.closed)
		if h.onClose != nil {
			h.onClose()
		}
	})
}

// Close stops the elector. Unless NoResignOnClose is set, a leader resigns first so another
// node takes over at once (waiting at most twice the request timeout). The last events (e.g.
// StoppedLeading with StopShutdown) are delivered to Changes before the channel is closed.
// Close waits for calls in flight (a Resign, a BeginFencedTx) to finish. Idempotent; always
// returns nil. Afterwards IsLeader is false, Term and ValidFor are 0, Leader is "", and the
// calls that can fail return ErrClosed.
func (e *Elector) Close() error {
	e.h.close()
	return nil
}

// ServiceID returns the service this elector campaigns for.
func (e *Elector) ServiceID() string { return e.h.serviceID }

// NodeID returns this elector's node id (ElectorConfig.NodeID, or the "hostname:pid" default).
func (e *Elector) NodeID() string { return e.h.nodeID }

// IsLeader reports whether this node leads now: true only while it holds the seat and its
// local deadline has not passed at this very moment (a process paused past its deadline sees
// false on waking). Act on it at once, and fence database writes (RunFencedTx): a process can
// be paused between the check and the act.
func (e *Elector) IsLeader() bool {
	var out C.bool
	err := e.h.with("elector_is_leader", func(p *C.mysqlleader_elector) error {
		return ccall("elector_is_leader", func() C.mysqlleader_result { return C.mysqlleader_elector_is_leader(p, &out) })
	})
	return err == nil && bool(out)
}

// Term returns the term seen last: while leading, the fencing token (for AssertLeader, or
// stamped on requests to other systems that reject lower terms).
func (e *Elector) Term() uint64 {
	var out C.uint64_t
	err := e.h.with("elector_term", func(p *C.mysqlleader_elector) error {
		return ccall("elector_term", func() C.mysqlleader_result { return C.mysqlleader_elector_term(p, &out) })
	})
	if err != nil {
		return 0
	}
	return uint64(out)
}

// ValidFor returns how long this node may still act as leader without another renew (whole
// milliseconds, rounded down); 0 when it does not lead.
func (e *Elector) ValidFor() time.Duration {
	var out C.uint64_t
	err := e.h.with("elector_valid_for_ms", func(p *C.mysqlleader_elector) error {
		return ccall("elector_valid_for_ms", func() C.mysqlleader_result { return C.mysqlleader_elector_valid_for_ms(p, &out) })
	})
	if err != nil {
		return 0
	}
	return duration(out)
}

// IsHealthy reports whether the elector's task runs and its last call succeeded within one
// lease: what a /healthz endpoint answers. False once closed.
func (e *Elector) IsHealthy() bool {
	var out C.bool
	err := e.h.with("elector_is_healthy", func(p *C.mysqlleader_elector) error {
		return ccall("elector_is_healthy", func() C.mysqlleader_result { return C.mysqlleader_elector_is_healthy(p, &out) })
	})
	return err == nil && bool(out)
}

// Leader returns the leader seen last (this node while it leads); "" when the seat was vacant.
func (e *Elector) Leader() string {
	s, _ := e.h.copyString("elector_leader_id", func(p *C.mysqlleader_elector, buf *C.char, n C.size_t, needed *C.size_t) C.mysqlleader_result {
		return C.mysqlleader_elector_leader_id(p, buf, n, needed)
	})
	return s
}

// MetricsText returns the elector's metrics in the Prometheus text format (version 0.0.4),
// labelled name="<service>": what the Rust library and the CLI's /metrics render. They are
// leader_election_master_status (1 while this node leads, exact at the moment of the call, as
// IsLeader; else 0), mysqlleader_term, mysqlleader_leadership_transitions_total,
// mysqlleader_campaign_errors_total and the histogram mysqlleader_campaign_duration_seconds.
// It never blocks: write it from an http.Handler for /metrics with the content type
// "text/plain; version=0.0.4". ErrClosed after Close.
func (e *Elector) MetricsText() (string, error) {
	return e.h.copyString("elector_metrics_text", func(p *C.mysqlleader_elector, buf *C.char, n C.size_t, needed *C.size_t) C.mysqlleader_result {
		return C.mysqlleader_elector_metrics_text(p, buf, n, needed)
	})
}

// State is a snapshot of an elector's state (mysqlleader_elector_state).
type State struct {
	IsLeader    bool          // as IsLeader, at the moment of the snapshot
	Term        uint64        // the term seen last
	ValidFor    time.Duration // as ValidFor; 0 when not leading
	Campaigning bool          // false after Resign
	LeaderID    string        // the leader seen last; "" when the seat was vacant
	// LastCallError is the error of the elector's last call to the database (an *Error: e.g.
	// ErrConnection while the server is unreachable), nil when it succeeded. It tells why a
	// node does not lead.
	LastCallError error
}

// State returns a consistent snapshot of the elector's state (LastCallError's message is
// read just after it); ErrClosed after Close.
func (e *Elector) State() (State, error) {
	const op = "elector_snapshot"
	var out C.mysqlleader_elector_state
	err := e.h.with(op, func(p *C.mysqlleader_elector) error {
		return ccall(op, func() C.mysqlleader_result { return C.mysqlleader_elector_snapshot(p, &out) })
	})
	if err != nil {
		return State{}, err
	}
	st := State{
		IsLeader:    bool(out.is_leader),
		Term:        uint64(out.term),
		ValidFor:    duration(out.valid_for_ms),
		Campaigning: bool(out.campaigning),
		LeaderID:    goString(&out.leader_id[0]),
	}
	if code := Code(out.last_call_result); code != CodeOK {
		msg, _ := e.h.copyString("elector_last_call_error", func(p *C.mysqlleader_elector, buf *C.char, n C.size_t, needed *C.size_t) C.mysqlleader_result {
			return C.mysqlleader_elector_last_call_error(p, buf, n, needed)
		})
		st.LastCallError = newError("elector", code, 0, code == CodeConnection, msg)
	}
	return st, nil
}

// Changes returns the channel of leadership changes, the same channel at every call. Events
// are queued from NewElector on, so none is missed by calling Changes late, and none is ever
// dropped: the queue between the library's callback thread and the channel has no limit, and
// the library's thread never waits for the reader. Read it steadily (an unread queue grows by
// one small Event per change). After Close the channel receives the last events and is then
// closed: read it to the end (a reader that stops early leaves the undelivered events and one
// goroutine behind). When Changes was never called before Close, the events are dropped.
func (e *Elector) Changes() <-chan Event {
	return e.h.events.channel()
}

// Resign steps down at once and ends this node's lease in the database, so another node takes
// over at once; afterwards the elector no longer campaigns (it keeps observing who leads, and
// WaitForLeadership returns ErrNotCampaigning). It returns whether this node held the seat.
// ErrConnection when the database could not be told: the node has stepped down all the same,
// and its lease lapses. It blocks for at most twice the request timeout; when ctx ends first
// it returns ctx.Err() and the resign completes in the background.
func (e *Elector) Resign(ctx context.Context) (bool, error) {
	const op = "elector_resign"
	if err := ctx.Err(); err != nil {
		return false, err
	}
	var out C.bool
	err := await(ctx, func() error {
		defer e.h.events.notify()
		return e.h.with(op, func(p *C.mysqlleader_elector) error {
			return ccall(op, func() C.mysqlleader_result { return C.mysqlleader_elector_resign(p, &out) })
		})
	})
	if err != nil {
		return false, err
	}
	return bool(out), nil
}

// Handover hands leadership over to the node toNode, with no overlap: this node steps down at
// once (a StoppedLeading event with StopHandedOver), ends its term in the database with the seat
// reserved for toNode for one lease (CALL resign_to), then lets go of its wake-up lock, so that
// toNode, when it campaigns, takes the seat within milliseconds. Unlike Resign, the elector goes
// on campaigning as a follower. It returns whether this node led (a follower's handover changes
// nothing). toNode must be another node's id: this node's own is ErrInvalidArgument naming
// "to_node". It blocks for at most twice the request timeout; when ctx ends first it returns
// ctx.Err() and the handover completes in the background.
func (e *Elector) Handover(ctx context.Context, toNode string) (bool, error) {
	const op = "elector_handover"
	if err := checkIDs(op, "to_node", toNode); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	var out C.bool
	err := await(ctx, func() error {
		defer e.h.events.notify()
		return e.h.with(op, func(p *C.mysqlleader_elector) error {
			return ccall(op, func() C.mysqlleader_result {
				var cs cStrings
				defer cs.free()
				return C.mysqlleader_elector_handover(p, cs.add(toNode), &out)
			})
		})
	})
	if err != nil {
		return false, err
	}
	return bool(out), nil
}

// backstopPoll bounds how long a waiter relies on events alone.
const backstopPoll = time.Second

// WaitForLeadership waits until this node leads (nil), ctx ends (ctx.Err()), the elector stops
// campaigning because it resigned (ErrNotCampaigning) or is closed (ErrClosed), or its calls
// fail with an error retrying cannot fix: then it returns that error at once (ErrAuthentication,
// ErrPrivilege, ErrNotMigrated, ErrAccessDenied, ...; the elector keeps trying, and a later wait
// succeeds once the set-up is mended). It wakes on the elector's own events, so it returns the
// moment leadership starts.
func (e *Elector) WaitForLeadership(ctx context.Context) error {
	const op = "elector_wait_for_leadership"
	for {
		changed := e.h.events.changedChan()
		// The core's answer, looking only (timeout 0): its error when the calls fail for good.
		var leading C.bool
		err := e.h.with(op, func(p *C.mysqlleader_elector) error {
			return ccall(op, func() C.mysqlleader_result { return C.mysqlleader_elector_wait_for_leadership(p, 0, &leading) })
		})
		if err != nil {
			return err
		}
		st, err := e.State()
		if err != nil {
			return err
		}
		if st.IsLeader {
			return nil
		}
		if !st.Campaigning {
			return &Error{Op: op, Code: CodeInvalidState, Message: "the elector no longer campaigns: it resigned", extra: ErrNotCampaigning}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		timer := time.NewTimer(backstopPoll)
		select {
		case <-changed:
		case <-timer.C:
		case <-ctx.Done():
		case <-e.h.closed:
		}
		timer.Stop()
	}
}

// LeadershipLostError is RunWhileLeader's error when the function was cut short because this
// node stopped leading. It matches ErrLeadershipLost with errors.Is.
type LeadershipLostError struct {
	Term   uint64     // the term that ended
	Reason StopReason // why, as the library tells it: lost_seat, deadline_passed, resigned, shutdown or failed
}

func (e *LeadershipLostError) Error() string {
	return fmt.Sprintf("mysqlleader: leadership of term %d ended (%s)", e.Term, e.Reason)
}

// Is makes errors.Is(err, ErrLeadershipLost) true.
func (e *LeadershipLostError) Is(target error) bool { return target == ErrLeadershipLost }

// RunWhileLeader runs fn only while this node leads: it waits for leadership (as
// WaitForLeadership), then calls fn in the calling goroutine with a context that is cancelled
// the moment the library says this term ended (mysqlleader_elector_wait_term_end): it asks
// again at every event of the elector and when the local deadline passes, which ends a term
// without an event. The context's cause (context.Cause) is then a *LeadershipLostError with
// the library's reason.
//
// It returns fn's error; but when leadership ended while fn ran and fn returned nil or a
// context.Canceled error, it returns the *LeadershipLostError (errors.Is(err,
// ErrLeadershipLost)). Cancellation is a request: fn must return promptly when its context is
// done, and fence its database writes (RunFencedTx), since a cancelled fn may still be running.
// A panic in fn propagates to the caller (leadership is not affected).
func (e *Elector) RunWhileLeader(ctx context.Context, fn func(ctx context.Context) error) error {
	for {
		if err := e.WaitForLeadership(ctx); err != nil {
			return err
		}
		done, err := e.runLeading(ctx, fn)
		if done {
			return err
		}
		// Leadership ended between the wait and the start: wait again.
	}
}

// runLeading runs fn for the term this node leads now; false when that term ended before fn
// could start.
func (e *Elector) runLeading(ctx context.Context, fn func(ctx context.Context) error) (bool, error) {
	term := e.Term()
	// 1. Wake-ups: every event of the elector, subscribed before the first look, so none falls
	//    between a look and the wait after it.
	wake := make(chan struct{}, 1)
	unsubscribe := e.h.events.subscribe(func(Event) {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	defer unsubscribe()
	if _, ended := e.termEnded(term); ended {
		return false, nil
	}

	// 2. The watcher: asks the library whether the term ended, after every event and when the
	//    local deadline passes (re-read after every renew), until fn returns.
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		for {
			timer := time.NewTimer(e.ValidFor() + time.Millisecond)
			select {
			case <-wake:
			case <-timer.C:
			case <-e.h.closed:
			case <-lctx.Done():
				timer.Stop()
				return
			}
			timer.Stop()
			if reason, ended := e.termEnded(term); ended {
				cancel(&LeadershipLostError{Term: term, Reason: reason})
				return
			}
		}
	}()

	// 3. The work.
	err := fn(lctx)
	var lostErr *LeadershipLostError
	if errors.As(context.Cause(lctx), &lostErr) && (err == nil || errors.Is(err, context.Canceled)) {
		return true, lostErr
	}
	return true, err
}

// termEnded asks the library, without waiting, whether this node's leadership at term ended
// and why. A C wait cannot be cancelled by a context and must not race with Close, so the
// package only ever looks (timeout 0) and waits on channels itself. After Close the library can
// no longer be asked: the elector was shut down (any other failure of the call: it failed).
func (e *Elector) termEnded(term uint64) (StopReason, bool) {
	const op = "elector_wait_term_end"
	var ended C.bool
	var reason C.mysqlleader_stop_reason
	err := e.h.with(op, func(p *C.mysqlleader_elector) error {
		return ccall(op, func() C.mysqlleader_result {
			return C.mysqlleader_elector_wait_term_end(p, C.uint64_t(term), 0, &ended, &reason)
		})
	})
	switch {
	case errors.Is(err, ErrClosed):
		return StopShutdown, true
	case err != nil:
		return StopFailed, true
	}
	return StopReason(reason), bool(ended)
}

// BeginFencedTx begins a fenced transaction: a transaction on the elector's (primary) client
// in which assert_leader(service, node, term) has already succeeded, with the term this node
// leads at now (Txn.Term). Add the writes with Txn.Exec, then Txn.Commit; no takeover can
// commit before them. ErrNotLeader when this node does not lead now (no round trip then) or
// the database says it no longer does.
func (e *Elector) BeginFencedTx(ctx context.Context) (*Txn, error) {
	const op = "elector_txn_begin"
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type begun struct {
		p    *C.mysqlleader_txn
		term uint64
	}
	r, err := awaitValue(ctx, func() (begun, error) {
		var b begun
		err := e.h.with(op, func(p *C.mysqlleader_elector) error {
			var term C.uint64_t
			return ccall(op, func() C.mysqlleader_result {
				rc := C.mysqlleader_elector_txn_begin(p, &b.p, &term)
				b.term = uint64(term)
				return rc
			})
		})
		return b, err
	}, func(b begun) { C.mysqlleader_txn_free(b.p) })
	if err != nil {
		return nil, err
	}
	return newTxn(r.p, r.term), nil
}

// RunFencedTx runs fn in a fenced transaction (BeginFencedTx) and commits it when fn returns
// nil; when fn returns an error (or panics) the transaction is rolled back and the error (or
// panic) passed on. ErrNotLeader when this node does not lead, before fn runs.
func (e *Elector) RunFencedTx(ctx context.Context, fn func(tx *Txn) error) error {
	tx, err := e.BeginFencedTx(ctx)
	if err != nil {
		return err
	}
	defer tx.Close() // rolls back unless committed
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
