package mysqlleader

// #include "mysqlleader.h"
import "C"

import (
	"context"
	"time"
)

// The one-shot calls of the election procedures. Each runs one CALL on a pooled connection
// (its own transaction), bounded by the client's request timeout; the result struct is the
// procedure's one row, with the contract's column names (lease_remaining_ms becomes
// LeaseRemaining, a time.Duration).
//
// Ids are 1 to 128 characters of UTF-8, compared byte for byte; a lease is 1 ms to 24 h in
// whole milliseconds (an Elector's, ElectorConfig.Lease, at least 100 ms). Rejected input is ErrInvalidArgument (Error.Param names it: service_id,
// node_id, lease), a missing schema ErrNotMigrated, an unreachable server or a timeout
// ErrConnection, any other server error ErrServer.

// CampaignResult is the row of campaign and force_leader.
type CampaignResult struct {
	IsLeader       bool          // whether the caller holds the seat after the call
	LeaderID       string        // the node holding a valid lease; "" when nobody does
	Term           uint64        // the fencing token of the service
	LeaseRemaining time.Duration // left on the current lease by the database's clock; 0 when nobody leads
}

// LeaderCheck is the row of am_i_leader and assert_leader.
type LeaderCheck struct {
	IsLeader       bool          // whether the node holds a valid lease (always true after AssertLeader)
	Term           uint64        // the current term, or the last there was when nobody leads
	LeaseRemaining time.Duration // left on the current leader's lease; 0 when nobody leads
}

// CurrentLeaderResult is the row of current_leader.
type CurrentLeaderResult struct {
	LeaderID       string        // the node holding a valid lease; "" when vacant or expired
	Term           uint64        // the current term, or the last there was
	LeaseRemaining time.Duration // left on the lease; 0 when nobody leads
}

// ReelectResult is the row of reelect.
type ReelectResult struct {
	PreviousLeaderID string // the node whose valid lease was ended; "" when nobody led
	Term             uint64 // the term of the service (unchanged by reelect)
}

// ResignResult is the row of resign.
type ResignResult struct {
	Resigned bool   // whether the node led and its lease has been ended
	Term     uint64 // the term of the service
}

func campaignResult(r *C.mysqlleader_campaign_result) CampaignResult {
	return CampaignResult{
		IsLeader:       bool(r.is_leader),
		LeaderID:       goString(&r.leader_id[0]),
		Term:           uint64(r.term),
		LeaseRemaining: duration(r.lease_remaining_ms),
	}
}

func leaderCheck(r *C.mysqlleader_leader_check) LeaderCheck {
	return LeaderCheck{IsLeader: bool(r.is_leader), Term: uint64(r.term), LeaseRemaining: duration(r.lease_remaining_ms)}
}

// checkIDs rejects ids that contain a NUL before any call (the library checks the rest).
func checkIDs(op string, namesAndValues ...string) error {
	for i := 0; i+1 < len(namesAndValues); i += 2 {
		if err := checkString(op, namesAndValues[i], namesAndValues[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// Campaign is CALL campaign(service_id, node_id, lease_ms): takes the seat when it is vacant
// or its lease has expired (a new term), renews the lease when node already holds it (same
// term), and otherwise changes nothing. The result tells who leads now.
//
// An Elector does this in a loop for you; Campaign is for tools and tests.
func (c *Client) Campaign(ctx context.Context, service, node string, lease time.Duration) (CampaignResult, error) {
	const op = "campaign"
	if err := checkIDs(op, "service_id", service, "node_id", node); err != nil {
		return CampaignResult{}, err
	}
	leaseMs, err := millis(op, "lease", lease)
	if err != nil {
		return CampaignResult{}, err
	}
	var out C.mysqlleader_campaign_result
	err = c.do(ctx, op, func(p *C.mysqlleader_client) C.mysqlleader_result {
		var cs cStrings
		defer cs.free()
		return C.mysqlleader_campaign(p, cs.add(service), cs.add(node), leaseMs, &out)
	})
	if err != nil {
		return CampaignResult{}, err
	}
	return campaignResult(&out), nil
}

// AmILeader is CALL am_i_leader(service_id, node_id): a read; whether node holds a valid lease.
func (c *Client) AmILeader(ctx context.Context, service, node string) (LeaderCheck, error) {
	const op = "am_i_leader"
	if err := checkIDs(op, "service_id", service, "node_id", node); err != nil {
		return LeaderCheck{}, err
	}
	var out C.mysqlleader_leader_check
	err := c.do(ctx, op, func(p *C.mysqlleader_client) C.mysqlleader_result {
		var cs cStrings
		defer cs.free()
		return C.mysqlleader_am_i_leader(p, cs.add(service), cs.add(node), &out)
	})
	if err != nil {
		return LeaderCheck{}, err
	}
	return leaderCheck(&out), nil
}

// CurrentLeader is CALL current_leader(service_id): a read; who leads the service now.
func (c *Client) CurrentLeader(ctx context.Context, service string) (CurrentLeaderResult, error) {
	const op = "current_leader"
	if err := checkIDs(op, "service_id", service); err != nil {
		return CurrentLeaderResult{}, err
	}
	var out C.mysqlleader_current_leader_result
	err := c.do(ctx, op, func(p *C.mysqlleader_client) C.mysqlleader_result {
		var cs cStrings
		defer cs.free()
		return C.mysqlleader_current_leader(p, cs.add(service), &out)
	})
	if err != nil {
		return CurrentLeaderResult{}, err
	}
	return CurrentLeaderResult{
		LeaderID:       goString(&out.leader_id[0]),
		Term:           uint64(out.term),
		LeaseRemaining: duration(out.lease_remaining_ms),
	}, nil
}

// ForceLeader is CALL force_leader(service_id, node_id, lease_ms): installs node at once with
// a new term; the displaced leader's term ends forced_out. An operator's tool.
func (c *Client) ForceLeader(ctx context.Context, service, node string, lease time.Duration) (CampaignResult, error) {
	const op = "force_leader"
	if err := checkIDs(op, "service_id", service, "node_id", node); err != nil {
		return CampaignResult{}, err
	}
	leaseMs, err := millis(op, "lease", lease)
	if err != nil {
		return CampaignResult{}, err
	}
	var out C.mysqlleader_campaign_result
	err = c.do(ctx, op, func(p *C.mysqlleader_client) C.mysqlleader_result {
		var cs cStrings
		defer cs.free()
		return C.mysqlleader_force_leader(p, cs.add(service), cs.add(node), leaseMs, &out)
	})
	if err != nil {
		return CampaignResult{}, err
	}
	return campaignResult(&out), nil
}

// Reelect is CALL reelect(service_id): ends the current lease now (the term ends reelected);
// the next campaign of any node wins.
func (c *Client) Reelect(ctx context.Context, service string) (ReelectResult, error) {
	const op = "reelect"
	if err := checkIDs(op, "service_id", service); err != nil {
		return ReelectResult{}, err
	}
	var out C.mysqlleader_reelect_result
	err := c.do(ctx, op, func(p *C.mysqlleader_client) C.mysqlleader_result {
		var cs cStrings
		defer cs.free()
		return C.mysqlleader_reelect(p, cs.add(service), &out)
	})
	if err != nil {
		return ReelectResult{}, err
	}
	return ReelectResult{PreviousLeaderID: goString(&out.previous_leader_id[0]), Term: uint64(out.term)}, nil
}

// Resign is CALL resign(service_id, node_id): ends node's lease now if and only if it is the
// current leader (Resigned tells whether it was). An Elector's own Resign also steps down
// locally first; use that one for a node run by an Elector.
func (c *Client) Resign(ctx context.Context, service, node string) (ResignResult, error) {
	const op = "resign"
	if err := checkIDs(op, "service_id", service, "node_id", node); err != nil {
		return ResignResult{}, err
	}
	var out C.mysqlleader_resign_result
	err := c.do(ctx, op, func(p *C.mysqlleader_client) C.mysqlleader_result {
		var cs cStrings
		defer cs.free()
		return C.mysqlleader_resign(p, cs.add(service), cs.add(node), &out)
	})
	if err != nil {
		return ResignResult{}, err
	}
	return ResignResult{Resigned: bool(out.resigned), Term: uint64(out.term)}, nil
}

// Handover is CALL handover(service_id, to_node) (operator role): ends the current term now (it
// ends handed_over), vacates the seat and reserves it for toNode for one lease, so that only
// toNode may begin the next term, at its next campaign. Nothing changes when toNode leads
// already. The result is the seat after the call, seen from toNode (IsLeader: it leads). The
// leader learns at its next renew (StopHandedOver); a node run by an Elector hands over with
// Elector.Handover instead.
func (c *Client) Handover(ctx context.Context, service, toNode string) (CampaignResult, error) {
	const op = "handover"
	if err := checkIDs(op, "service_id", service, "to_node", toNode); err != nil {
		return CampaignResult{}, err
	}
	var out C.mysqlleader_campaign_result
	err := c.do(ctx, op, func(p *C.mysqlleader_client) C.mysqlleader_result {
		var cs cStrings
		defer cs.free()
		return C.mysqlleader_handover(p, cs.add(service), cs.add(toNode), &out)
	})
	if err != nil {
		return CampaignResult{}, err
	}
	return campaignResult(&out), nil
}

// AssertLeader is CALL assert_leader(service_id, node_id, term) as a one-shot check: nil only
// when node holds a valid lease at exactly term, else ErrNotLeader.
//
// On its own this is only a check: the row lock it takes ends with the call. To fence writes,
// run it inside the transaction of those writes: Txn.AssertLeader, or Elector.BeginFencedTx /
// Elector.RunFencedTx.
func (c *Client) AssertLeader(ctx context.Context, service, node string, term uint64) (LeaderCheck, error) {
	const op = "assert_leader"
	if err := checkIDs(op, "service_id", service, "node_id", node); err != nil {
		return LeaderCheck{}, err
	}
	var out C.mysqlleader_leader_check
	err := c.do(ctx, op, func(p *C.mysqlleader_client) C.mysqlleader_result {
		var cs cStrings
		defer cs.free()
		return C.mysqlleader_assert_leader(p, cs.add(service), cs.add(node), C.uint64_t(term), &out)
	})
	if err != nil {
		return LeaderCheck{}, err
	}
	return leaderCheck(&out), nil
}

// SetExpiryEvent is CALL set_expiry_event(enabled): switches the optional event that ends
// expired terms in the table (it needs event_scheduler=ON on the server), and returns whether
// it is enabled now.
func (c *Client) SetExpiryEvent(ctx context.Context, enabled bool) (bool, error) {
	var out C.bool
	err := c.do(ctx, "set_expiry_event", func(p *C.mysqlleader_client) C.mysqlleader_result {
		return C.mysqlleader_set_expiry_event(p, C.bool(enabled), &out)
	})
	if err != nil {
		return false, err
	}
	return bool(out), nil
}
