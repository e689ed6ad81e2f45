package mysqlleader

// #include "mysqlleader.h"
import "C"

import (
	"runtime"
	"sync"
	"time"
)

// SessionConfig says how every elector of a Session takes part in its election: the fields
// of ElectorConfig but ServiceID (each elector names its own, Session.Elector). Zero means
// "the default" for every field, as in ElectorConfig; an invalid value is ErrInvalidArgument
// whose Param names the field ("Lease", "RenewInterval", "Fallbacks[0]", ...).
type SessionConfig struct {
	// NodeID is this node's name as others see it, for every elector of the session: 1 to 128
	// characters. Default DefaultNodeID(), "hostname:pid".
	NodeID string
	// Lease is how long a lease lasts after each acquisition or renew, 100 ms to 24 h.
	// Default 10 s.
	Lease time.Duration
	// RenewInterval is how often the leader renews (one batched call for all the session's
	// seats). Default Lease/5; at most (Lease-DriftMargin)/3.
	RenewInterval time.Duration
	// RetryInterval is the longest a follower waits between attempts. Default Lease/10; at
	// most Lease. Followers of the node whose session lock this session waits on are woken by
	// it instead (a leader session's Close wakes them at once); others look within one retry
	// interval.
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
	// NoResignOnClose makes closing an elector of the session (or the session) leave its
	// lease to lapse instead of resigning.
	NoResignOnClose bool
	// Fallbacks are clients of more servers of one cluster (Galera, Group Replication), as in
	// ElectorConfig: after a call fails with a transient error (a lost or refused connection, a
	// timeout, a cluster error), every later call of the session goes to the next server, in
	// turn. A nil one is ErrInvalidArgument with Param "Fallbacks[i]".
	Fallbacks []*Client
}

// Session is one node's part in the elections of many services (mysqlleader_session): one
// node id and one lease configuration, one kept connection and one batched renew for all its
// seats, however many services it campaigns for. Session.Elector starts an elector for one
// service; it is an ordinary *Elector (IsLeader, Term, Changes, WaitForLeadership,
// RunWhileLeader, Resign, Handover, Fence, Close, ...). All methods are safe for concurrent
// use.
//
// Close the session when done: it shuts down every elector it made (each resigns, unless
// NoResignOnClose). A session stays open while one of its electors is reachable; a finalizer
// closes a forgotten one.
type Session struct {
	h *sessionHandle
}

type sessionHandle struct {
	// mu: Elector holds it for reading around its C call; Close holds it for writing, since
	// mysqlleader_session_free must not race with other calls.
	mu  sync.RWMutex
	ptr *C.mysqlleader_session
	// electors are the session's electors not closed yet, guarded by emu (taken alone, never
	// while waiting for mu: an elector's Close removes itself under emu).
	emu      sync.Mutex
	electors map[*electorHandle]struct{}
}

// NewSession makes a session on client's database (and config.Fallbacks'); it connects to
// nothing until its first elector campaigns. The session keeps the connection pools of client
// and of the fallbacks open: they may be closed before it. A nil client is ErrNullArgument; an invalid config value ErrInvalidArgument whose
// Param names the SessionConfig field.
func NewSession(client *Client, config SessionConfig) (*Session, error) {
	const op = "session_new"
	if client == nil {
		return nil, &Error{Op: op, Code: CodeNullArgument, Param: "client", Message: "client must not be nil"}
	}
	var cfg C.mysqlleader_elector_config
	err := fillElectorConfig(op, ElectorConfig{
		NodeID:          config.NodeID,
		Lease:           config.Lease,
		RenewInterval:   config.RenewInterval,
		RetryInterval:   config.RetryInterval,
		RetryJitter:     config.RetryJitter,
		NoJitter:        config.NoJitter,
		RequestTimeout:  config.RequestTimeout,
		DriftMargin:     config.DriftMargin,
		NoResignOnClose: config.NoResignOnClose,
	}, &cfg)
	if err != nil {
		return nil, err
	}
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
	var session *C.mysqlleader_session
	err = ccall(op, func() C.mysqlleader_result {
		var cs cStrings
		defer cs.free()
		if config.NodeID != "" {
			cfg.node_id = cs.add(config.NodeID)
		}
		return C.mysqlleader_session_new(ptr, &cfg, &session)
	})
	if err != nil {
		return nil, err
	}
	s := &Session{h: &sessionHandle{ptr: session, electors: map[*electorHandle]struct{}{}}}
	runtime.SetFinalizer(s, func(s *Session) { go s.h.close() })
	return s, nil
}

// Elector starts an elector for serviceID in this session: it campaigns at once, in the
// background, with the session's node id and lease, its renews batched with the session's
// other electors'; it never blocks on the database. The elector has the API of any *Elector;
// its Close stops it alone (resigning its seat unless NoResignOnClose), and Session.Close
// closes it with the others.
//
// Errors: ErrInvalidArgument with Param "service_id" when serviceID is empty, longer than
// IDMaxChars, or when this session runs an elector for it already (a closed one's service may
// be taken again); ErrInvalidUTF8; ErrClosed after Close.
func (s *Session) Elector(serviceID string) (*Elector, error) {
	const op = "session_elector"
	if err := checkIDs(op, "service_id", serviceID); err != nil {
		return nil, err
	}
	s.h.mu.RLock()
	defer s.h.mu.RUnlock()
	if s.h.ptr == nil {
		return nil, closedError(op, "session")
	}
	ptr := s.h.ptr
	e, err := startElector(op, serviceID, func(userdata C.uintptr_t, out **C.mysqlleader_elector) C.mysqlleader_result {
		var cs cStrings
		defer cs.free()
		return sessionElectorNew(ptr, cs.add(serviceID), userdata, out)
	})
	if err != nil {
		return nil, err
	}
	e.session = s
	h := e.h
	h.onClose = func() {
		s.h.emu.Lock()
		delete(s.h.electors, h)
		s.h.emu.Unlock()
	}
	s.h.emu.Lock()
	s.h.electors[h] = struct{}{}
	s.h.emu.Unlock()
	return e, nil
}

// MetricsText returns the session's metrics as one Prometheus text exposition (version
// 0.0.4), each metric's HELP and TYPE once, compact: the session's own series, labelled
// node="<node id>" (mysqlleader_session_seats{state="leading|following|vacant"}, the counters
// of its batched calls mysqlleader_session_renew_batches_total, _renew_batch_failures_total,
// _renewed_seats_total, _take_batches_total, _take_batch_failures_total, _taken_seats_total,
// _resign_batches_total and _single_campaigns_total, and the histogram
// mysqlleader_session_renew_batch_duration_seconds of each renew_seats round trip), then per
// service (name="<service>") only leader_election_master_status, exact at the moment of the
// call, and mysqlleader_term: about 75 bytes plus twice the service id's length a service
// (10,000 services of 10-byte ids: under 1 MB). MetricsTextDetailed has every elector's full
// series too. Serve it, not the electors' own MetricsText joined together (a scraper rejects
// repeated HELP/TYPE lines). Never blocks on the database. ErrClosed after Close.
func (s *Session) MetricsText() (string, error) {
	return s.metricsText("session_metrics_text", false)
}

// MetricsTextDetailed is MetricsText with every running elector's full series, as the
// elector's own MetricsText has them (also mysqlleader_leadership_transitions_total,
// mysqlleader_campaign_errors_total and the histogram mysqlleader_campaign_duration_seconds,
// which in a session includes the wait for a batch): about 1.5 KB a service.
func (s *Session) MetricsTextDetailed() (string, error) {
	return s.metricsText("session_metrics_text_detailed", true)
}

func (s *Session) metricsText(op string, detailed bool) (string, error) {
	s.h.mu.RLock()
	defer s.h.mu.RUnlock()
	if s.h.ptr == nil {
		return "", closedError(op, "session")
	}
	ptr := s.h.ptr
	var text string
	err := ccall(op, func() C.mysqlleader_result {
		var rc C.mysqlleader_result
		text, rc = copyOut(func(buf *C.char, n C.size_t, needed *C.size_t) C.mysqlleader_result {
			if detailed {
				return C.mysqlleader_session_metrics_text_detailed(ptr, buf, n, needed)
			}
			return C.mysqlleader_session_metrics_text(ptr, buf, n, needed)
		})
		return rc
	})
	return text, err
}

// Close shuts down every elector the session made and still runs, then frees the session.
// Unless NoResignOnClose, each leader steps down at once and resigns (the resigns share the
// session's connection, and Close waits for them at most the request timeout plus 1 ms per
// elector, never longer than a lease unless the request timeout is; a resign not done by then
// still goes out while the process runs, else its lease lapses),
// so other nodes take over within one of their retry intervals. Each elector is then closed:
// its last events are delivered and its Changes channel closed, its Close is a no-op, and its
// methods behave as a closed elector's (IsLeader false, ErrClosed). Close waits for calls in
// flight on the session. Idempotent; always returns nil. Elector fails with ErrClosed
// afterwards.
func (s *Session) Close() error {
	s.h.close()
	return nil
}

func (h *sessionHandle) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.ptr
	if p == nil {
		return
	}
	h.ptr = nil
	// 1. Every elector steps down and resigns, all at once over the session's connection.
	C.mysqlleader_session_free(p)
	// 2. The handles, now stopped: each delivers its last events and is freed.
	h.emu.Lock()
	electors := make([]*electorHandle, 0, len(h.electors))
	for e := range h.electors {
		electors = append(electors, e)
	}
	h.emu.Unlock()
	for _, e := range electors {
		e.close()
	}
}
