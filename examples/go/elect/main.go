// Command elect is the shortest complete use of mysqlleader from Go: it becomes leader of the
// service "example-go", makes one fenced write (it commits only while this node still leads at
// its term), resigns and exits 0. After `cargo build --release --lib` in the repository root:
//
//	cd examples/go/elect && go build      # go.mod points at ../../../bindings/go
//	mysqlleader --url mysql://admin:secret@127.0.0.1:3306/app migrate    # once, as the operator
//	MYSQLLEADER_URL=mysql://app:secret@127.0.0.1:3306/app ./elect
//
// The election schema is installed once per database by an operator, before any copy of the
// program runs (`mysqlleader migrate`). The application's account (`mysqlleader grant ACCOUNT
// --role app`) may not install it, so the program does not migrate, except with -migrate, for a
// development database whose account may (scripts/test-go.sh uses that).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	mysqlleader "github.com/mysqlleader/mysqlleader/bindings/go"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "elect:", err)
		os.Exit(1)
	}
}

func run() error {
	migrate := flag.Bool("migrate", false, "install the election schema first (a development database; in production an operator runs `mysqlleader migrate` once)")
	flag.Parse()
	url := os.Getenv("MYSQLLEADER_URL") // mysql://user:pass@host:port/database
	if url == "" {
		url = os.Getenv("MYSQLLEADER_TEST_URL")
	}
	if url == "" {
		return errors.New("usage: MYSQLLEADER_URL=mysql://user:pass@host:port/db elect")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // bounds every call
	defer cancel()

	// 1. A client (a connection pool). The election schema: installed by the operator
	//    (`mysqlleader migrate`); here only with -migrate (cheap when already current).
	client, err := mysqlleader.Open(url)
	if err != nil {
		return err
	}
	defer client.Close()
	if *migrate {
		if _, err := client.Migrate(ctx); err != nil {
			return err
		}
	}
	// An application table for the example (DDL: in a plain transaction, never a fenced one).
	tx, err := client.BeginTx(ctx)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS example_go_log (term BIGINT UNSIGNED, node VARCHAR(128))")
	if err == nil {
		err = tx.Commit(ctx)
	}
	tx.Close()
	if err != nil {
		return err
	}

	// 2. Campaign in the background, with a short lease: a crashed leader is replaced within 2 s.
	elector, err := mysqlleader.NewElector(client, mysqlleader.ElectorConfig{ServiceID: "example-go", Lease: 2 * time.Second})
	if err != nil {
		return err
	}
	defer elector.Close() // also resigns, when still leading

	// 3. Wait until this node leads (or ctx ends).
	if err := elector.WaitForLeadership(ctx); err != nil {
		return err
	}

	// 4. One fenced write: assert_leader has succeeded for this node's term in the transaction,
	//    and no takeover can commit before it ends. ErrNotLeader if this node no longer leads.
	var term uint64
	if err := elector.RunFencedTx(ctx, func(tx *mysqlleader.Txn) error {
		term = tx.Term() // the fencing token
		_, err := tx.Exec(ctx, "INSERT INTO example_go_log (term, node) VALUES (?, ?)", term, elector.NodeID())
		return err
	}); err != nil {
		return err
	}
	fmt.Printf("elect: %s wrote as leader of example-go at term %d\n", elector.NodeID(), term)

	// 5. Resign: another node takes over at once.
	_, err = elector.Resign(ctx)
	return err
}
