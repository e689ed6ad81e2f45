// Command elect is one node of a service, elected through mysqlleader: it prints every
// leadership change, does "the leader's work" only while it leads, and on Ctrl-C (SIGINT) or
// SIGTERM it resigns, so another node takes over at once.
//
//	go build -o elect ./examples/elect        # from bindings/go, after `cargo build --release --lib`
//	MYSQLLEADER_URL=mysql://app:secret@127.0.0.1:3306/app ./elect billing [NODE [LEASE]]
//
// Run it in two terminals with different NODEs, then press Ctrl-C in the leader's (or kill -9
// it: the other takes over within one lease).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	mysqlleader "github.com/mysqlleader/mysqlleader/bindings/go"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "elect:", err)
		os.Exit(2)
	}
}

func run() error {
	url := os.Getenv("MYSQLLEADER_URL")
	if url == "" || len(os.Args) < 2 {
		return errors.New("usage: MYSQLLEADER_URL=mysql://user:pass@host:port/db elect SERVICE [NODE [LEASE]]")
	}
	config := mysqlleader.ElectorConfig{ServiceID: os.Args[1]}
	if len(os.Args) > 2 {
		config.NodeID = os.Args[2] // default: hostname:pid
	}
	if len(os.Args) > 3 {
		lease, err := time.ParseDuration(os.Args[3])
		if err != nil {
			return err
		}
		config.Lease = lease // default: 10s
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	client, err := mysqlleader.Open(url)
	if err != nil {
		return err
	}
	defer client.Close()
	if _, err := client.Migrate(ctx); err != nil { // installs the schema when missing; cheap otherwise
		return err
	}
	elector, err := mysqlleader.NewElector(client, config)
	if err != nil {
		return err
	}
	defer elector.Close() // resigns: another node takes over at once

	go func() {
		for ev := range elector.Changes() {
			fmt.Printf("node %s: %v\n", elector.NodeID(), ev)
		}
	}()
	fmt.Printf("node %s: campaigning for %s (Ctrl-C to resign and quit)\n", elector.NodeID(), config.ServiceID)

	// The leader's work, only while leading; its context ends the moment leadership does.
	for ctx.Err() == nil {
		err := elector.RunWhileLeader(ctx, func(ctx context.Context) error {
			fmt.Printf("node %s: working as leader of term %d\n", elector.NodeID(), elector.Term())
			<-ctx.Done() // real work: loop until ctx is done, fencing writes with RunFencedTx
			return ctx.Err()
		})
		if errors.Is(err, mysqlleader.ErrLeadershipLost) {
			fmt.Printf("node %s: %v\n", elector.NodeID(), err)
			continue // campaign on
		}
		if err != nil && ctx.Err() == nil {
			return err
		}
	}
	fmt.Printf("node %s: resigning\n", elector.NodeID())
	return nil
}
