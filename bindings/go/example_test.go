package mysqlleader_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	mysqlleader "github.com/mysqlleader/mysqlleader/bindings/go"
)

// A node of the service "billing": it campaigns, does the leader's work only while it leads,
// and resigns when it is done so that another node takes over at once. (The example names its
// service uniquely, so that it starts at term 1 on every run.)
func Example() {
	ctx := context.Background()
	client, err := mysqlleader.Open(os.Getenv("MYSQLLEADER_URL")) // mysql://user:pass@host:port/db
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	if _, err := client.Migrate(ctx); err != nil { // installs the schema when missing
		log.Fatal(err)
	}

	service := fmt.Sprintf("billing-%d", time.Now().UnixNano())
	elector, err := mysqlleader.NewElector(client, mysqlleader.ElectorConfig{
		ServiceID: service,
		NodeID:    "web-3",
		Lease:     10 * time.Second, // failover after a crash takes at most one lease
	})
	if err != nil {
		log.Fatal(err)
	}
	defer elector.Close() // resigns

	if err := elector.WaitForLeadership(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("leading:", elector.IsLeader(), "term:", elector.Term(), "leader:", elector.Leader())

	// The leader's writes, fenced by its term: they commit only while it still leads.
	err = elector.RunFencedTx(ctx, func(tx *mysqlleader.Txn) error {
		_, err := tx.Exec(ctx, "DO ?", tx.Term()) // e.g. UPDATE invoices SET sent = 1 WHERE id = ?
		return err
	})
	fmt.Println("fenced write:", err)

	resigned, err := elector.Resign(ctx)
	fmt.Println("resigned:", resigned, err, "leading:", elector.IsLeader())
	// Output:
	// leading: true term: 1 leader: web-3
	// fenced write: <nil>
	// resigned: true <nil> leading: false
}

// RunWhileLeader runs work with a context that ends the moment leadership does.
func ExampleElector_RunWhileLeader() {
	ctx := context.Background()
	client, err := mysqlleader.Open(os.Getenv("MYSQLLEADER_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	elector, err := mysqlleader.NewElector(client, mysqlleader.ElectorConfig{
		ServiceID: fmt.Sprintf("reports-%d", time.Now().UnixNano()),
		Lease:     5 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer elector.Close()

	err = elector.RunWhileLeader(ctx, func(ctx context.Context) error {
		fmt.Println("working as leader")
		// Here, an operator runs `mysqlleader force reports-... other-node`:
		if _, err := client.ForceLeader(ctx, elector.ServiceID(), "other-node", 5*time.Second); err != nil {
			return err
		}
		<-ctx.Done() // the work stops at the elector's next renew
		return ctx.Err()
	})
	var lost *mysqlleader.LeadershipLostError
	if errors.As(err, &lost) {
		fmt.Println("stopped:", lost.Reason)
	}
	// Output:
	// working as leader
	// stopped: lost_seat
}

// Changes delivers every leadership change, in order.
func ExampleElector_Changes() {
	client, err := mysqlleader.Open(os.Getenv("MYSQLLEADER_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	elector, err := mysqlleader.NewElector(client, mysqlleader.ElectorConfig{
		ServiceID: fmt.Sprintf("cron-%d", time.Now().UnixNano()),
		NodeID:    "cron-1",
	})
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		_ = elector.WaitForLeadership(context.Background())
		elector.Close() // resigns; the channel is closed after the last event
	}()
	for ev := range elector.Changes() {
		switch ev.Kind {
		case mysqlleader.StartedLeading:
			fmt.Println("started leading term", ev.Term)
		case mysqlleader.StoppedLeading:
			fmt.Println("stopped leading term", ev.Term, "because", ev.Reason)
		case mysqlleader.LeaderChanged:
			fmt.Printf("leader of term %d: %q\n", ev.Term, ev.LeaderID)
		case mysqlleader.EventsMissed:
			fmt.Println(ev.Missed, "events missed")
		}
	}
	// Output:
	// leader of term 1: "cron-1"
	// started leading term 1
	// stopped leading term 1 because shutdown
	// leader of term 1: ""
}

// Errors match the package's sentinel values with errors.Is, and carry the details.
func ExampleError() {
	client, err := mysqlleader.Open(os.Getenv("MYSQLLEADER_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	_, err = client.Campaign(context.Background(), "billing", "web-3", 0)
	var e *mysqlleader.Error
	if errors.Is(err, mysqlleader.ErrInvalidArgument) && errors.As(err, &e) {
		fmt.Println(e.Code, e.Param)
	}
	// Output:
	// MYSQLLEADER_INVALID_ARGUMENT lease
}

// A Session campaigns for many services as one node, over one connection and one batched
// renew; each of its electors is an ordinary *Elector. Closing the session resigns them all.
func ExampleSession() {
	ctx := context.Background()
	client, err := mysqlleader.Open(os.Getenv("MYSQLLEADER_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	session, err := mysqlleader.NewSession(client, mysqlleader.SessionConfig{
		NodeID: "worker-1",
		Lease:  10 * time.Second, // for every elector of the session
	})
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close() // resigns every seat the session holds

	suffix := time.Now().UnixNano()
	var electors []*mysqlleader.Elector
	for _, name := range []string{"billing", "reports", "cron"} {
		elector, err := session.Elector(fmt.Sprintf("%s-%d", name, suffix))
		if err != nil {
			log.Fatal(err)
		}
		electors = append(electors, elector)
	}
	for _, elector := range electors {
		if err := elector.WaitForLeadership(ctx); err != nil {
			log.Fatal(err)
		}
		fmt.Println("leading:", elector.IsLeader(), "term:", elector.Term(), "leader:", elector.Leader())
	}

	// One service's elector alone: resigns that seat, the others keep theirs.
	electors[0].Close()
	fmt.Println("after closing one:", electors[0].IsLeader(), electors[1].IsLeader(), electors[2].IsLeader())

	// A second elector for a service the session already campaigns for is refused.
	_, err = session.Elector(electors[1].ServiceID())
	var e *mysqlleader.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code, e.Param)
	}

	session.Close()
	fmt.Println("after Session.Close:", electors[1].IsLeader(), electors[2].IsLeader())
	// Output:
	// leading: true term: 1 leader: worker-1
	// leading: true term: 1 leader: worker-1
	// leading: true term: 1 leader: worker-1
	// after closing one: false true true
	// MYSQLLEADER_INVALID_ARGUMENT service_id
	// after Session.Close: false false
}
