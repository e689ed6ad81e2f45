package sqldrivertest

import (
	"context"
	"database/sql"

	_ "github.com/go-sql-driver/mysql"
	mysqlleader "github.com/mysqlleader/mysqlleader/bindings/go"
)

// writeAsLeader is the README's example of Elector.Fence (bindings/go/README.md, "Fencing your
// own transaction"), compiled here with the driver it names.
func writeAsLeader(ctx context.Context, db *sql.DB, elector *mysqlleader.Elector) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // after Commit: a no-op
	if _, err := tx.ExecContext(ctx, "UPDATE invoices SET state = 'sent' WHERE id = ?", 42); err != nil {
		return err
	}
	if err := elector.Fence(ctx, tx); err != nil {
		return err // errors.Is(err, mysqlleader.ErrNotLeader): another node leads; IsLeader() is false already
	}
	return tx.Commit() // no takeover committed in between
}

// Example_fence: a transaction of go-sql-driver/mysql, fenced with this node's term.
func Example_fence() {
	db, _ := sql.Open("mysql", "app:secret@tcp(db:3306)/app")
	client, _ := mysqlleader.Open("mysql://app:secret@db:3306/app")
	elector, _ := mysqlleader.NewElector(client, mysqlleader.ElectorConfig{ServiceID: "billing"})
	defer elector.Close()
	ctx := context.Background()
	if elector.WaitForLeadership(ctx) == nil {
		_ = writeAsLeader(ctx, db, elector)
	}
}
